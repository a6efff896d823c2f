#!/bin/bash
# keep_reports.sh - the perftracker the test suites run under tests/run
# (PT_BIN): it runs the real binary (PT_REAL_BIN) and keeps a copy of
# every report.json that run wrote in PT_REPORTS_DIR, for tests/run to scan
# with tests/tools/check_report.py once the suite is done (docs/testing.md
# "Reports the suite writes").  Only the commands that write a report and
# end by themselves (analyze, diagnose, compare, hang-check, a trigger with
# --auto-analyze) are followed, the signals a test sends passed on to the
# binary; any other command is exec'd, so a daemon or a trigger a test
# kills keeps its process id.  The binary itself knows nothing of this.
REAL=${PT_REAL_BIN:?PT_REAL_BIN is not set}
follow=0
case ${1:-} in
analyze | diagnose | compare | hang-check) follow=1 ;;
esac
for a in "$@"; do
	[ "$a" = --auto-analyze ] && follow=1
done
[ $follow = 1 ] || exec "$REAL" "$@"
[ -n "${PT_REPORTS_DIR:-}" ] && mkdir -p "$PT_REPORTS_DIR" 2>/dev/null ||
	exec "$REAL" "$@"
mark=$(mktemp "$PT_REPORTS_DIR/.mark.XXXXXX") || exec "$REAL" "$@"
# in the background (stdin kept) so that a signal to this process reaches it
"$REAL" "$@" <&0 &
child=$!
trap 'kill -TERM $child 2>/dev/null' TERM
trap 'kill -INT $child 2>/dev/null' INT
trap 'kill -HUP $child 2>/dev/null' HUP
while :; do
	wait $child
	rc=$?
	kill -0 $child 2>/dev/null || break
done
# the folders the run may have written into: -o/--output DIR and every
# argument that names a folder (hang-check's run folder, a control dir)
dirs=() prev=
for a in "$@"; do
	case $prev in -o | --output) dirs+=("$a") ;; esac
	case $a in --output=*) dirs+=("${a#--output=}") ;; -o?*) dirs+=("${a#-o}") ;; esac
	[ -d "$a" ] && [ "$a" != / ] && dirs+=("$a")
	prev=$a
done
for d in "${dirs[@]}"; do
	[ -d "$d" ] || continue
	find "$d" -maxdepth 4 -name report.json -newer "$mark" -type f 2>/dev/null
done | sort -u | while read -r f; do
	c=$(mktemp "$PT_REPORTS_DIR/XXXXXXXX.report.json") && cp "$f" "$c" &&
		# where it came from, for a failure's message
		printf '%s\t%s (perftracker %s)\n' "${c##*/}" "$f" "$*" >>"$PT_REPORTS_DIR/sources"
done
rm -f "$mark"
# killed by a signal: so is this process, as the binary alone would be
if [ $rc -gt 128 ] && [ $rc -lt 160 ]; then
	trap - TERM INT HUP
	kill -$((rc - 128)) $$
fi
exit $rc
