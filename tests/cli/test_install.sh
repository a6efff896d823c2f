#!/bin/bash
# test_install.sh - `make install` into a staging root gives a working CLI
# (also as c4d_perftracker), a library with its header tree and a pkg-config
# file that a program outside the tree can build against, and the Python
# packages for the interpreter that has torch.
. "$(dirname "$0")/lib.sh"
cd "$PT_ROOT" || exit 1
stage=$TMP/stage
prefix=/opt/pt
if make -s install DESTDIR="$stage" PREFIX=$prefix >"$TMP/install.log" 2>&1; then
	ok "make install DESTDIR=... PREFIX=$prefix"
else
	not_ok "make install" "$(tail -5 "$TMP/install.log")"
fi
root=$stage$prefix
check "nothing written outside PREFIX" bash -c "[ -z \"\$(find '$stage' -type f -o -type l | grep -v '^$stage$prefix/')\" ]"
check "install says where the Python packages went" grep -q "^perftracker: Python packages installed in $stage$prefix/lib/python3\.[0-9]*/site-packages\$" "$TMP/install.log"
check "installed CLI runs" "$root/bin/perftracker" --help
check "c4d_perftracker name installed" test -e "$root/bin/c4d_perftracker"
check "header tree installed" test -f "$root/include/perftracker/perftracker.h" -a \
	-f "$root/include/perftracker/analysis/summary.h"
check "pkg-config file installed" test -f "$root/lib/pkgconfig/perftracker.pc"

# A program outside the tree, built only with what pkg-config says.
cat >"$TMP/user.c" <<'C'
#include <perftracker.h>
#include <stdio.h>
int main(int argc, char **argv)
{
	pt_error err;
	pt_summary *s = pt_summary_from_trace(argv[1], NULL, &err);
	char m[1024];
	if (!s) { fprintf(stderr, "%s\n", pt_error_format(&err, m, sizeof m)); return 1; }
	printf("%s %lld %.6f\n", s->worker, (long long)s->rank, s->gpu_util);
	pt_summary_free(s);
	return 0;
}
C
sed -i "s|^prefix=.*|prefix=$root|" "$root/lib/pkgconfig/perftracker.pc"
flags=$(PKG_CONFIG_PATH=$root/lib/pkgconfig pkg-config --cflags --libs --static perftracker)
if cc -o "$TMP/user" "$TMP/user.c" $flags 2>"$TMP/cc.log"; then
	ok "a program builds against the installed library with pkg-config"
else
	not_ok "build against installed library" "$(head -5 "$TMP/cc.log")"
fi
out=$(LD_LIBRARY_PATH=$root/lib "$TMP/user" "$PT_DATA/dlrm/worker3_step_12.1694128201557.pt.trace.json")
case "$out" in
"worker3_step_12.1694128201557.pt.trace.json 3 "*) ok "installed library summarizes a real trace ($out)";;
*) not_ok "installed library summarizes a real trace" "got '$out'";;
esac

site=$(find "$root/lib" -type d -name c4d_perftracker_collector | head -1)
if [ -n "$site" ] && PYTHONPATH=$(dirname "$site") "$PYTHON" -c \
	'from c4d_perftracker_collector.PerfTracker import PerfTracker; import perftracker' 2>"$TMP/py.log"; then
	ok "python packages installed for $PYTHON"
else
	not_ok "python packages installed" "$(tail -3 "$TMP/py.log")"
fi
