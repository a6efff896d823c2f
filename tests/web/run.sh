#!/bin/bash
# Browser tests of the PerfDisplay page (tests/web/*.test.mjs): node's test
# runner with TAP output, Debian's chromium (headless) driven by
# playwright-core from node_modules (npm ci, run by make).  Invoked by
# tests/cli/test_page.sh so that tests/run counts the "ok"/"not ok" lines
# ("ok N - name # SKIP reason", from t.skip(), as a skip).
# Screenshots go to $PT_ARTIFACTS (default build-test/artifacts).
cd "$(dirname "$0")/../.." || exit 1
export PT_ROOT=${PT_ROOT:-$PWD}
export PT_BIN=${PT_BIN:-$PT_ROOT/build-test/perftracker}
export PT_DATA=${PT_DATA:-$PT_ROOT/tests/data}
export PT_ARTIFACTS=${PT_ARTIFACTS:-$PT_ROOT/build-test/artifacts}
export PT_CHROMIUM=${PT_CHROMIUM:-/usr/bin/chromium}
missing=""
command -v node >/dev/null || missing="$missing node"
[ -x "$PT_CHROMIUM" ] || missing="$missing $PT_CHROMIUM (apt-get install chromium)"
[ -f node_modules/playwright-core/package.json ] || missing="$missing node_modules/playwright-core (npm ci)"
[ -x "$PT_BIN" ] || missing="$missing $PT_BIN"
[ -f build/gen/page.html ] || missing="$missing build/gen/page.html (make)"
if [ -n "$missing" ]; then
	echo "not ok 1 - browser tests cannot run: missing$missing"
	exit 1
fi
# LeakSanitizer cannot follow chromium's sandboxed children; the page tests
# only run the (ASan) perftracker binary, whose leaks test_display.sh checks.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
exec node --test --test-reporter=tap --test-concurrency=1 tests/web/*.test.mjs
