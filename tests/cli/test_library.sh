#!/bin/bash
# test_library.sh - libperftracker as a program that links it meets it: the
# shared object exports only the public API (pt_ names, the declarations
# between PT_API_BEGIN and PT_API_END), needs no HTTP server (libmicrohttpd
# and gnutls are the CLI's), `make install` puts only the public headers in
# place, and a program built with pkg-config against the installed .so
# summarizes a real trace exactly as the CLI does and writes the report and
# its page.
. "$(dirname "$0")/lib.sh"
cd "$PT_ROOT" || exit 1
so=$PT_ROOT/build/libperftracker.so
if [ ! -f "$so" ]; then
	not_ok "build/libperftracker.so exists" "run make first"
	exit 1
fi

# ---- what the shared object exports and needs -------------------------------
nm -D --defined-only "$so" | awk '{print $3}' >"$TMP/syms"
n=$(grep -c . "$TMP/syms")
other=$(grep -v '^pt_' "$TMP/syms")
if [ "$n" -gt 0 ] && [ -z "$other" ]; then
	ok "nm -D: the $n exported symbols are all pt_"
else
	not_ok "nm -D: only pt_ symbols exported" "$(echo "$other" | head -20 | tr '\n' ' ')"
fi
check "the public API is exported (pt_summary_from_trace, pt_diagnose, pt_report_write_dir)" \
	bash -c "grep -qx pt_summary_from_trace '$TMP/syms' && grep -qx pt_diagnose '$TMP/syms' && \
		grep -qx pt_report_write_dir '$TMP/syms'"
# functions shared between library files through internal headers stay
# inside: the archive (same objects) defines more global functions
nglobal=$(nm -g --defined-only "$PT_ROOT/build/libperftracker.a" 2>/dev/null | grep -c ' T ')
if [ "$nglobal" -gt "$n" ]; then
	ok "internal functions are hidden ($n of the archive's $nglobal global functions exported)"
else
	not_ok "internal functions are hidden" "$n exported, $nglobal global in libperftracker.a"
fi
ldd "$so" >"$TMP/ldd" 2>&1
if grep -qi 'microhttpd\|gnutls' "$TMP/ldd"; then
	not_ok "ldd: no libmicrohttpd or gnutls" "$(grep -i 'microhttpd\|gnutls' "$TMP/ldd" | tr '\n' ' ')"
else
	ok "ldd: no libmicrohttpd or gnutls"
fi
check "the CLI still serves pages (links libmicrohttpd)" bash -c "ldd '$PT_ROOT/build/perftracker' | grep -q microhttpd"

# ---- make install: public headers only ---------------------------------------
stage=$TMP/stage
prefix=/opt/ptlib
if make -s install DESTDIR="$stage" PREFIX=$prefix >"$TMP/install.log" 2>&1; then
	ok "make install DESTDIR=... PREFIX=$prefix"
else
	not_ok "make install" "$(tail -5 "$TMP/install.log")"
fi
root=$stage$prefix
inc=$root/include/perftracker
(cd "$inc" && find . -name '*.h' | sed 's|^\./||' | sort) >"$TMP/headers"
check "headers installed (perftracker.h, util/api.h, analysis/summary.h)" \
	bash -c "grep -qx perftracker.h '$TMP/headers' && grep -qx util/api.h '$TMP/headers' && \
		grep -qx analysis/summary.h '$TMP/headers'"
unmarked=$(while read -r h; do
	case $h in perftracker.h|util/api.h) continue;; esac
	grep -q '^PT_API_BEGIN' "$inc/$h" || echo "$h"
done <"$TMP/headers")
if [ -z "$unmarked" ]; then ok "every installed header is public (PT_API_BEGIN)"
else not_ok "only public headers installed" "unmarked: $(echo $unmarked)"; fi
check "internal headers not installed (diagnose/internal.h, util/xalloc.h, control/, display/)" \
	bash -c "[ ! -e '$inc/diagnose/internal.h' ] && [ ! -e '$inc/util/xalloc.h' ] && \
		[ ! -e '$inc/control' ] && [ ! -e '$inc/display' ]"
alone=$(while read -r h; do
	printf '#include <%s>\n' "$h" | cc -std=c99 -Wall -Werror -fsyntax-only -I"$inc" -x c - \
		>/dev/null 2>&1 || echo "$h"
done <"$TMP/headers")
if [ -z "$alone" ]; then ok "each installed header compiles on its own (C99, installed tree only)"
else not_ok "installed headers compile alone" "$(echo $alone)"; fi
pc=$root/lib/pkgconfig/perftracker.pc
sed -i "s|^prefix=.*|prefix=$root|" "$pc"
check "pkg-config --static asks for no libmicrohttpd" \
	bash -c "! PKG_CONFIG_PATH='$root/lib/pkgconfig' pkg-config --static --libs perftracker | grep -q microhttpd"

# ---- a program against the installed .so ------------------------------------
cat >"$TMP/user.c" <<'C'
#include <perftracker.h>
#include <stdio.h>

/* usage: user TRACE SUMMARY_OUT REPORT_DIR */
int main(int argc, char **argv)
{
	pt_error err;
	char m[1024];
	pt_summary *s = NULL;
	pt_report *r = NULL;
	int rc = 1;

	if (argc != 4)
		return 2;
	s = pt_summary_from_trace(argv[1], NULL, &err);
	if (!s || pt_summary_write_file(s, argv[2], &err))
		goto fail;
	r = pt_diagnose(&s, 1, NULL, &err);
	if (!r || pt_report_write_dir(r, argv[3], &err))
		goto fail;
	printf("%s: %zu patterns, %llu events\n", s->worker, s->npatterns,
	       (unsigned long long)s->nevents);
	rc = 0;
	goto out;
fail:
	fprintf(stderr, "%s\n", pt_error_format(&err, m, sizeof m));
out:
	pt_report_free(r);
	pt_summary_free(s);
	return rc;
}
C
flags=$(PKG_CONFIG_PATH=$root/lib/pkgconfig pkg-config --cflags --libs perftracker)
if cc -std=c99 -Wall -Wextra -Werror -o "$TMP/user" "$TMP/user.c" $flags 2>"$TMP/cc.log"; then
	ok "a C99 program builds with 'pkg-config --cflags --libs perftracker'"
else
	not_ok "build against the installed library" "$(head -5 "$TMP/cc.log")"
fi
check "the program links the installed libperftracker.so" \
	bash -c "LD_LIBRARY_PATH='$root/lib' ldd '$TMP/user' | grep -q '$root/lib/libperftracker.so'"

trace=$PT_DATA/HolisticTraceAnalysis/tests/data/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz
out=$(LD_LIBRARY_PATH=$root/lib "$TMP/user" "$trace" "$TMP/lib.summary.json" "$TMP/rep" 2>"$TMP/user.err")
case "$out" in
"mi250_minitoy_train_ROCm6_2_kineto.json.gz: "*" patterns, "*" events")
	ok "the program summarizes a real trace through the .so ($out)";;
*) not_ok "the program summarizes a real trace" "got '$out' $(head -3 "$TMP/user.err")";;
esac
"${PT_BIN_OPT:-$PT_ROOT/build/perftracker}" summarize "$trace" -o "$TMP/cli.summary.json" >/dev/null 2>&1
check "its summary is byte for byte the CLI's" cmp "$TMP/lib.summary.json" "$TMP/cli.summary.json"
check "it wrote report.json and the page (the page builder is in the library)" \
	bash -c "grep -q mi250_minitoy_train '$TMP/rep/PerfDisplay/report.json' && \
		grep -q mi250_minitoy_train '$TMP/rep/PerfDisplay/index.html' && [ -s '$TMP/rep/PerfDisplay/app.py' ]"
