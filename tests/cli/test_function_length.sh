#!/bin/bash
# No C function over 150 lines (docs/design.md "Conventions"): the checker
# tests/tools/long_functions.py counts each function in src/ and
# python/perftracker/*.c from its opening brace to its closing brace at
# column 0; this test runs it on the tree and on two files whose counts it
# fixes, so that a checker that finds nothing cannot pass.
. "$(dirname "$0")/lib.sh"
CHK="$PT_ROOT/tests/tools/long_functions.py"
PY3=/usr/bin/python3

# A function of exactly 150 lines passes, one of 151 does not.
{
	printf 'static int ok150(void)\n{\n'
	for i in $(seq 1 148); do printf '\tx();\n'; done
	printf '}\n\nint long151(int a,\n\t    int b)\n{\n'
	for i in $(seq 1 149); do printf '\tx();\n'; done
	printf '}\n'
} >"$TMP/f.c"
"$PY3" "$CHK" "$TMP/f.c" >"$TMP/out"
rc=$?
check "the checker fails a tree with a 151-line function" test $rc -eq 1
check "it names that function, its file, line and length" \
	grep -qx "151 .*f.c:155 long151" "$TMP/out"
check "it counts the 150-line one as within the rule" bash -c "! grep -q ok150 '$TMP/out'"

"$PY3" "$CHK" >"$TMP/tree" 2>&1
rc=$?
if [ $rc -eq 0 ]; then ok "no function in src/ or python/perftracker/*.c over 150 lines"
else not_ok "no function in src/ or python/perftracker/*.c over 150 lines"; sed 's/^/# /' "$TMP/tree"; fi
