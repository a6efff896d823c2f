# bench/lib.sh - helpers shared by the benchmark scripts (sourced, bash).
#
# measure: run a command under /usr/bin/time (peak RSS, user/sys CPU) and a
# nanosecond wall clock, bounded by `timeout`, best of N runs.  row/note:
# print a result both as a fixed-width line on stdout and as a Markdown table
# row appended to $RES (bench/out/results.md).  MB = 10^6 bytes, MiB = 2^20.

: "${RES:=bench/out/results.md}"
: "${LOGS:=bench/out/logs}"
mkdir -p "$LOGS"

# measure N TIMEOUT LABEL CMD... : run CMD N times (stdout to /dev/null,
# stderr to $LOGS/LABEL.err); keep the fastest run's wall, user and sys
# seconds and the largest peak RSS.  Sets M_RC (0, or the first failing
# run's status; 124 = timed out), M_WALL, M_USER, M_SYS, M_RSS_KB.
measure() {
	local n=$1 to=$2 label=$3 i tf t0 t1 rc wall user sys rss
	shift 3
	tf=$(mktemp)
	M_RC=0 M_WALL= M_USER= M_SYS= M_RSS_KB=0
	for ((i = 0; i < n; i++)); do
		t0=$(date +%s%N)
		/usr/bin/time -o "$tf" -f '%U %S %M' timeout "$to" "$@" >/dev/null 2>"$LOGS/$label.err"
		rc=$?
		t1=$(date +%s%N)
		if [ $rc -ne 0 ]; then
			M_RC=$rc
			break
		fi
		# the last line: time prints "Command exited ..." lines before it on failure
		read -r user sys rss < <(tail -1 "$tf")
		wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) / 1e9 }')
		if [ -z "$M_WALL" ] || awk -v a="$wall" -v b="$M_WALL" 'BEGIN { exit !(a < b) }'; then
			M_WALL=$wall M_USER=$user M_SYS=$sys
		fi
		[ "$rss" -gt "$M_RSS_KB" ] && M_RSS_KB=$rss
	done
	rm -f "$tf"
	return $M_RC
}

# calc EXPR : print an awk expression's value (formatting included), e.g.
# calc 'printf "%.1f", 3/2'
calc() { awk "BEGIN { $1 }"; }

mb() { calc "printf \"%.1f\", $1 / 1e6"; }          # bytes -> MB
mib() { calc "printf \"%.0f\", $1 / 1024"; }        # KiB -> MiB
mbps() { calc "printf \"%.0f\", $1 / 1e6 / $2"; }   # bytes, seconds -> MB/s

# mem_avail_kb / disk_avail_kb DIR
mem_avail_kb() { awk '/^MemAvailable:/ { print $2 }' /proc/meminfo; }
disk_avail_kb() { df -Pk "$1" | awk 'NR == 2 { print $4 }'; }

# md LINE... : append Markdown lines to $RES (and nothing on stdout).
md() { printf '%s\n' "$@" >>"$RES"; }

# say LINE : print on stdout and append to $RES as a paragraph (a blank line
# first, so that it also ends a table before it).
say() { printf '%s\n' "$*"; printf '\n%s\n' "$*" >>"$RES"; }

# table COL... / row COL... : a table on stdout (first column 30 wide, the
# others 11) and the same table in $RES as Markdown.
table() {
	local c
	printf '%-30s' "$1"; printf ' %11s' "${@:2}"; printf '\n'
	{
		printf '\n|'
		for c in "$@"; do printf ' %s |' "$c"; done
		printf '\n|'
		for c in "$@"; do printf -- '---|'; done
		printf '\n'
	} >>"$RES"
}
row() {
	local c
	printf '%-30s' "$1"; printf ' %11s' "${@:2}"; printf '\n'
	{
		printf '|'
		for c in "$@"; do printf ' %s |' "$c"; done
		printf '\n'
	} >>"$RES"
}
