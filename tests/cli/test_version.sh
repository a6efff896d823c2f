#!/bin/bash
# One version everywhere: `perftracker --version` / `-V`, the library header
# (PT_VERSION in src/perftracker.h), the Python package's __version__,
# perftracker.pc and the PerfDisplay page's generator tag all agree.
. "$(dirname "$0")/lib.sh"
V=$(sed -n 's/^#define PT_VERSION "\(.*\)"/\1/p' "$PT_ROOT/src/perftracker.h")
check "PT_VERSION in perftracker.h" test -n "$V"
check "--version" bash -c "[ \"\$('$PT_BIN' --version)\" = 'perftracker $V' ]"
check "-V" bash -c "[ \"\$('$PT_BIN' -V)\" = 'perftracker $V' ]"
check "Python package __version__" bash -c "[ \"\$(PYTHONPATH='$PT_ROOT/python' '$PYTHON' -c 'import perftracker; print(perftracker.__version__)' 2>/dev/null)\" = '$V' ]"
check "pkg-config file" grep -qx "Version: $V" "$PT_ROOT/build/perftracker.pc"
"$PT_BIN" analyze "$PT_DATA/dlrm" -o "$TMP/out" -q
check "the page says it" grep -q "<meta name=\"generator\" content=\"perftracker $V\">" "$TMP/out/PerfDisplay/index.html"
check "--help names --version" bash -c "'$PT_BIN' --help | grep -q -- '--version'"
