#!/bin/bash
# test_usage.sh - every subcommand's command line (src/cli/usage.c and the
# option tables, src/util/opts.h): `--help` prints the usage line and
# exactly the options the command has had (nothing dropped in the move to
# tables) and exits 0; every option in it is accepted, in the --opt=VALUE
# form; an unknown option, a missing value, a bad number, a bad choice, a
# value given to a flag are each one line naming the option, exit 1;
# "--opt VALUE", "--opt=VALUE" and "-oVALUE" mean the same; "--" ends the
# options; the reference guide's trigger command lines parse.
. "$(dirname "$0")/lib.sh"

LEGACY=$PT_DATA/legacy/legacy_gloo.json

THR="--z=1 --rel=0.1 --min-impact=0.01 --mad-floor=0.02 --memop-threshold=0.1
	--runtime-threshold=0.1 --python-threshold=0.1 --python-min-impact=0.1
	--top-kernels=3 --loo-below=4 --fixed-only --p2p-slow=3 --comm-bound=0.6 --jobs=2 --quiet --time"
DIAG="$THR --max-findings=3 --format=json --json --width=80"

# The options of each command, one valid use each (the names are what
# --help must list, no more, no fewer).
declare -A OPTS=(
	[analyze]="--output=d --keep-summaries=k --hw-dir=h --no-hw --no-timeline --max-raw-mb=10 --timeline-raw $DIAG"
	[diagnose]="--output=d --no-timeline --digests=never $DIAG"
	[digest]="--jobs=2"
	[trigger]="--trigger-on --auto-analyze --wait=1 --steps=2 --output-dir=o
		--save-raw-trace=master --control-dir=c --timeout=5 --stale=3 --no-progress
		--hang-timeout=9 --stack-wait=1 --reason=r --nsys-gpu-metrics=100 --job=j
		--start-wait=3 --no-timeline --max-raw-mb=10 --digests=auto $DIAG"
	[compare]="--output=d --jobs=2 --min-share=0.1 --noise-k=2 --min-rel=0.1 --unrelated=0.5
		--max-findings=4 --quiet --time"
	[summarize]="--output=o --min-python-ratio=0.1 --max-python=5 --hw=f --hw-dir=h
		--no-hw --pid=3 --time"
	[timeline]="--output=d --no-raw --max-raw-events=100 --max-raw-mb=10 $THR"
	[display]="--host=h --port=0 --rebuild --no-serve --quiet"
	[agent]="--control-dir=c --spool-dir=s --host=h --detach --exit-when-idle=1 --once
		--jobs=2 --poll=0.5 --hw-interval-ms=2 --hw-slow-interval-ms=50 --no-hw
		--hw-cpu-budget=0.1 --nsys-gpu-metrics=100 --auto-profile --auto-window=10
		--auto-slowdown=0.2 --auto-cooldown=60 --auto-watch-defer=5 --auto-output-dir=o
		--hw-check=1 --print-spool-dir --metrics-port=0 --metrics-addr=127.0.0.1"
	[status]="--control-dir=c --job=j --json --stale=3 --prune --silent=5 --lag=2"
	[hang-check]="--control-dir=c --job=j --hang-timeout=9 --stale=3 --stack-wait=1 --output=d --json"
)

# Long option names listed by a --help text (stdin), sorted.
help_names() {
	grep -oE '^  (-[a-zA-Z], )?--[a-z][a-z0-9-]*' | sed 's/.*--/--/' | sort -u
}

for cmd in analyze diagnose digest trigger compare summarize timeline display agent status hang-check; do
	"$PT_BIN" "$cmd" --help >"$TMP/help" 2>"$TMP/help.err"
	rc=$?
	if [ $rc -eq 0 ] && [ ! -s "$TMP/help.err" ] && head -1 "$TMP/help" | grep -q '^usage: '; then
		ok "$cmd --help: usage on stdout, exit 0"
	else
		not_ok "$cmd --help: usage on stdout, exit 0" "rc $rc: $(head -3 "$TMP/help.err")"
	fi
	want=$( (for o in ${OPTS[$cmd]}; do echo "${o%%=*}"; done; echo --help) | sort -u)
	got=$(help_names <"$TMP/help")
	if [ "$want" = "$got" ]; then
		ok "$cmd --help lists its $(echo "$want" | wc -l) options"
	else
		not_ok "$cmd --help lists its options" "$(diff <(echo "$want") <(echo "$got") | tr '\n' ' ')"
	fi
	# Every option parses (then --help stops before anything runs); --hw
	# reads its file at once, so it is tested below.
	bad=""
	for o in ${OPTS[$cmd]}; do
		[ "$o" = "--hw=f" ] && continue
		"$PT_BIN" "$cmd" "$o" --help >/dev/null 2>"$TMP/o.err" || bad="$bad $o($(head -1 "$TMP/o.err"))"
	done
	[ -z "$bad" ] && ok "$cmd: every option is accepted" || not_ok "$cmd: every option is accepted" "$bad"
	"$PT_BIN" "$cmd" -h | cmp -s - "$TMP/help" && ok "$cmd -h is --help" || not_ok "$cmd -h is --help"
	check_fails "$cmd: unknown option" \
		"^perftracker: $cmd: unknown option '--frobnicate' (see 'perftracker $cmd --help')\$" \
		"$PT_BIN" "$cmd" --frobnicate=2
	[ "$(wc -l <"$TMP/.err")" -eq 1 ] && ok "$cmd: unknown option is one line" ||
		not_ok "$cmd: unknown option is one line" "$(cat "$TMP/.err")"
done

# exit status and lines of an error; check_fails has checked the pattern
one_line() { # NAME PATTERN CMD...
	local name=$1
	check_fails "$@"
	[ "$(wc -l <"$TMP/.err")" -eq 1 ] || not_ok "$name: one line" "$(cat "$TMP/.err")"
}

one_line "missing value" "^perftracker: option '--width' needs a value\$" "$PT_BIN" analyze x --width
one_line "missing value (short)" "^perftracker: option '-o' needs a value\$" "$PT_BIN" summarize "$LEGACY" -o
one_line "missing value (agent)" "^perftracker: option '--poll' needs a value\$" "$PT_BIN" agent --poll
one_line "bad number" "^perftracker: option '--z': 'abc' is not a non-negative number\$" \
	"$PT_BIN" diagnose x --z abc
one_line "negative number" "^perftracker: option '--lag': '-1' is not a non-negative number\$" \
	"$PT_BIN" status --lag -1
one_line "bad integer" "^perftracker: option '--max-python': '1.5' is not a non-negative integer\$" \
	"$PT_BIN" summarize "$LEGACY" --max-python 1.5
one_line "bad integer (attached short)" "^perftracker: option '-j': 'x' is not a non-negative integer\$" \
	"$PT_BIN" compare a b -jx
one_line "bad integer (int64)" "^perftracker: option '--auto-window': '10k' is not a non-negative integer\$" \
	"$PT_BIN" agent --auto-window=10k
one_line "port out of range" "^perftracker: option '--port': '70000' is out of range (0-65535)\$" \
	"$PT_BIN" display x --port 70000
one_line "width below 40" "^perftracker: option '--width': '39' is below 40\$" \
	"$PT_BIN" diagnose x --width=39
one_line "--steps 0" "^perftracker: option '--steps': '0' is below 1\$" "$PT_BIN" --trigger-on --steps 0
one_line "bad choice" "^perftracker: option '--save-raw-trace': 'some' is not 'none', 'master' or 'all'\$" \
	"$PT_BIN" --trigger-on --save-raw-trace some
one_line "value to a flag" "^perftracker: option '--json' takes no value\$" "$PT_BIN" diagnose x --json=1
one_line "no abbreviations" "unknown option '--out'" "$PT_BIN" diagnose x --out d
one_line "no bundled flags" "unknown option '-qj2'" "$PT_BIN" diagnose x -qj2
one_line "callback error names the file" "^perftracker: $TMP/nohw.json: .*No such file" \
	"$PT_BIN" summarize "$LEGACY" --hw "$TMP/nohw.json"
one_line "bad optional argument" \
	"^perftracker: option '--hw-check' needs a number of seconds above 0, not '0'\$" \
	"$PT_BIN" agent --hw-check 0
one_line "trigger: no positionals" "^perftracker: trigger: unexpected argument 'x' (see 'perftracker trigger --help')\$" \
	"$PT_BIN" --trigger-on x
check_fails "missing positional: the usage line" "^usage: perftracker summarize TRACE" "$PT_BIN" summarize

# The same option in each form, the same summary.
check "-o F --max-python 3" "$PT_BIN" summarize "$LEGACY" -o "$TMP/a.json" --max-python 3
check "--output=F --max-python=3" "$PT_BIN" summarize "$LEGACY" --output="$TMP/b.json" --max-python=3
check "-oF, options before the trace" "$PT_BIN" summarize --max-python=3 -o"$TMP/c.json" "$LEGACY"
cmp -s "$TMP/a.json" "$TMP/b.json" && cmp -s "$TMP/a.json" "$TMP/c.json" &&
	ok "the three forms write the same summary" || not_ok "the three forms write the same summary"
check "a later value wins" "$PT_BIN" summarize "$LEGACY" --max-python 0 --max-python 3 -o "$TMP/d.json"
cmp -s "$TMP/a.json" "$TMP/d.json" && ok "  same summary" || not_ok "  same summary"
check_fails "-- ends the options" "^perftracker: --frobnicate: cannot open" "$PT_BIN" summarize -- --frobnicate
grep -q "unknown option" "$TMP/.err" && not_ok "  not an unknown option" || ok "  not an unknown option"

# The reference guide's command lines (pai-perftracker-guide.txt) parse:
# with no live worker they stop there, not at an option.
mkdir -p "$TMP/ctl"
for args in "--trigger-on --auto-analyze" "--trigger-on --auto-analyze --wait 10" \
	"--trigger-on --auto-analyze --steps 3" "--trigger-on --auto-analyze --save-raw-trace all" \
	"--trigger-on --auto-analyze --save-raw-trace master --output-dir $TMP/out" \
	"--trigger-on --auto-analyze --wait 5 --steps 10 --output-dir $TMP/out --save-raw-trace all"; do
	# shellcheck disable=SC2086
	check_fails "guide: $args" "no live worker in '$TMP/ctl'" "$PT_BIN" $args --control-dir "$TMP/ctl"
done
