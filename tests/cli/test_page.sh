#!/bin/bash
# test_page.sh - the PerfDisplay page in a real browser (headless chromium
# through playwright-core): runs tests/web/run.sh, whose TAP lines
# ("ok N - ...", "not ok N - ...") tests/run counts.
. "$(dirname "$0")/lib.sh"
bash "$PT_ROOT/tests/web/run.sh"
