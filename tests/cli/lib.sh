# Shared helpers for CLI tests: TAP-like "ok N - name" / "not ok N - name"
# lines that tests/run counts, and "ok N - name # SKIP reason" for a check
# that could not run here, which it counts as skipped, never as passed.
# Source it; PT_BIN, PT_DATA, PYTHON are set by tests/run.
: "${PT_ROOT:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
: "${PT_BIN:=$PT_ROOT/build-test/perftracker}"
: "${PT_DATA:=$PT_ROOT/tests/data}"
: "${PYTHON:=/usr/bin/python3}"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
_n=0

ok() { _n=$((_n + 1)); echo "ok $_n - $1"; }
not_ok() { _n=$((_n + 1)); echo "not ok $_n - $1"; shift; [ $# -gt 0 ] && echo "# $*"; }
# skip NAME REASON: NAME was not checked here, for REASON (TAP's SKIP directive)
skip() { _n=$((_n + 1)); echo "ok $_n - $1 # SKIP $2"; }

# check NAME CMD...: passes when CMD exits 0
check() {
	local name=$1; shift
	if "$@" >"$TMP/.out" 2>&1; then ok "$name"; else not_ok "$name"; sed 's/^/# /' "$TMP/.out" | head -30; fi
}

# check_fails NAME PATTERN CMD...: passes when CMD exits non-zero without a
# crash (no sanitizer report, no signal) and its stderr matches PATTERN
check_fails() {
	local name=$1 pat=$2; shift 2
	"$@" >"$TMP/.out" 2>"$TMP/.err"
	local rc=$?
	if [ $rc -eq 0 ]; then not_ok "$name" "exit 0"; return; fi
	if [ $rc -ge 128 ] || grep -q 'Sanitizer\|runtime error' "$TMP/.err"; then
		not_ok "$name" "crashed (rc $rc)"; sed 's/^/# /' "$TMP/.err" | head -30; return
	fi
	if ! grep -q -- "$pat" "$TMP/.err"; then
		not_ok "$name" "stderr does not match '$pat'"; sed 's/^/# /' "$TMP/.err" | head -10; return
	fi
	ok "$name"
}
