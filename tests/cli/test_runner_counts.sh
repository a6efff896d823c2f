#!/bin/bash
# test_runner_counts.sh - tests/run's counting, on a tree of small suites of
# every kind it runs, made here: a cmocka binary (2 pass, 1 skip() and 1
# failure), CLI scripts on tests/cli/lib.sh (ok, skip, not_ok; a crash with
# no "not ok"; TAP's "# SKIP" in any case), Python unittest files (ok, a
# skipped test, a class skipped in setUpClass, a failure, an error; a
# module that raises SkipTest on import).  A skip counts as a skip, never
# as a pass; each suite's line and the last line say so; a run with no skip
# ends with the plain "N passed, N failed"; PATTERN arguments pick suites.
. "$(dirname "$0")/lib.sh"
cd "$PT_ROOT" || exit 1
F=$TMP/tree
mkdir -p "$F/tests/cli" "$F/tests/py" "$F/build-test/tests"
cp tests/run "$F/tests/run"
cp tests/cli/lib.sh "$F/tests/cli/lib.sh"

# ---- the suites --------------------------------------------------------------
cat >"$TMP/cm.c" <<'EOF'
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
static void passes(void **s) { (void)s; }
static void passes_too(void **s) { (void)s; assert_int_equal(2, 2); }
static void skips(void **s) { (void)s; skip(); }
static void fails(void **s) { (void)s; assert_int_equal(1, 2); }
int main(void)
{
	const struct CMUnitTest t[] = { cmocka_unit_test(passes), cmocka_unit_test(skips),
					cmocka_unit_test(fails), cmocka_unit_test(passes_too) };
	return cmocka_run_group_tests(t, NULL, NULL);
}
EOF
have_cm=1
${CC:-cc} -o "$F/build-test/tests/test_cm" "$TMP/cm.c" -lcmocka >"$TMP/cc.out" 2>&1 || have_cm=0

cat >"$F/tests/cli/test_tap.sh" <<'EOF'
. "$(dirname "$0")/lib.sh"
ok "checked"
skip "not checked here" "needs something this machine lacks"
not_ok "broken" "why"
echo "ok 4 - a skip as node's TAP reporter may write it # skip no chromium"
ok "checked too"
EOF
cat >"$F/tests/cli/test_crash.sh" <<'EOF'
. "$(dirname "$0")/lib.sh"
ok "one check"
exit 3
EOF
cat >"$F/tests/cli/test_plain.sh" <<'EOF'
. "$(dirname "$0")/lib.sh"
ok "one"
ok "two"
EOF
cat >"$F/tests/py/test_ut.py" <<'EOF'
import unittest

class A(unittest.TestCase):
    def test_ok(self):
        pass

    def test_skip(self):
        self.skipTest("not here")

    def test_fail(self):
        self.assertEqual(1, 2)

    def test_error(self):
        raise RuntimeError("boom")

class B(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        raise unittest.SkipTest("no torch")

    def test_x(self):
        pass
EOF
cat >"$F/tests/py/test_utskip.py" <<'EOF'
import unittest
raise unittest.SkipTest("binary not built")
EOF

# run ARGS...: the tree's runner, its output in $TMP/out, its status in $rc
run() {
	env -u PT_BIN -u PT_DATA -u PT_ROOT PYTHON="$PYTHON" bash "$F/tests/run" "$@" >"$TMP/out" 2>&1
	rc=$?
}
# line NAME WANT: the runner's line for suite NAME reads WANT after the name
line() {
	local got
	got=$(grep "^$1 " "$TMP/out" | sed 's/^[^ ]* *//')
	if [ "$got" = "$2" ]; then ok "$1: $2"; else not_ok "$1: $2" "got '$got'"; sed 's/^/# /' "$TMP/out" | head -40; fi
}

# ---- every suite -------------------------------------------------------------
run
if [ $have_cm = 1 ]; then
	line test_cm "2 passed, 1 failed, 1 skipped"
else
	skip "cmocka: 2 passed, 1 failed, 1 skipped" "cannot build a cmocka test here (${CC:-cc} -lcmocka: $(head -1 "$TMP/cc.out"))"
fi
line test_tap "2 passed, 1 failed, 2 skipped"
line test_crash "1 passed, 1 failed"
line test_plain "2 passed, 0 failed"
line test_ut "1 passed, 2 failed, 2 skipped"
line test_utskip "0 passed, 0 failed, 1 skipped"
if [ $have_cm = 1 ]; then want="8 passed, 5 failed, 6 skipped"; else want="6 passed, 4 failed, 5 skipped"; fi
check "last line: $want" test "$(tail -1 "$TMP/out")" = "$want"
check "failures: exit status 1" test "$rc" -eq 1
if [ $have_cm = 1 ]; then want="failed: test_cm test_crash test_tap test_ut"; else want="failed: test_crash test_tap test_ut"; fi
check "the failed suites named" grep -qx "$want" "$TMP/out"

# ---- suites picked by pattern; no skip, no ", 0 skipped" -----------------------
run plain
check "tests/run plain: one suite" test "$(grep -c ' passed, ' "$TMP/out")" -eq 2
check "tests/run plain: ends with the plain '2 passed, 0 failed'" test "$(tail -1 "$TMP/out")" = "2 passed, 0 failed"
check "tests/run plain: exit status 0" test "$rc" -eq 0
run 'utskip' 'tap'
check "tests/run utskip tap: two suites, 2 passed, 1 failed, 3 skipped" \
	test "$(grep -c '^test_' "$TMP/out"):$(tail -1 "$TMP/out")" = "2:2 passed, 1 failed, 3 skipped"
