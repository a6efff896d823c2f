#!/bin/bash
# test_page_scripts.sh - the PerfDisplay page's scripts stay small (issue 30):
# every module of web/js is under 1,200 lines, none of its functions (the
# house style's two-space-indented "function NAME" up to its "  }") runs
# over 150 lines, mk/display.mk concatenates exactly the modules that
# exist, so that none is left out of the page or missing from the tree (the
# keys table: test_keys.sh).
. "$(dirname "$0")/lib.sh"
cd "$PT_ROOT" || exit 1
shopt -s nullglob
js=(web/js/*.js)
if [ ${#js[@]} -eq 0 ]; then not_ok "web/js has the page's modules"; exit 1; fi
over=$(wc -l "${js[@]}" | awk '$2 != "total" && $1 > 1200 { print $2 ": " $1 " lines" }')
if [ -z "$over" ]; then ok "every page script is under 1,200 lines"; else not_ok "every page script is under 1,200 lines" "$over"; fi
long=$(awk '
	FNR == 1 { name = "" }
	/^  function [A-Za-z0-9_$]+/ && name == "" {
		if ($0 ~ /[}];?[ \t]*(\/\/.*)?$/ && $0 !~ /\{[ \t]*(\/\/.*)?$/) next   # one line
		name = $2; sub(/\(.*/, "", name); start = FNR; next
	}
	/^  }/ && name != "" {
		if (FNR - start + 1 > 150) print FILENAME ": " name " " (FNR - start + 1) " lines"
		name = ""
	}' "${js[@]}")
if [ -z "$long" ]; then ok "no page function over 150 lines"; else not_ok "no page function over 150 lines" "$long"; fi
# WEB_JS := $(addprefix web/js/,a.js b.js \ ...): the names, with the prefix
listed=$(sed -n '/^WEB_JS :=/,/)$/p' mk/display.mk | tr -d '\\\n' | sed 's/.*addprefix web\/js\/,//; s/)$//' | tr -s ' \t' '\n' | sed '/^$/d; s|^|web/js/|' | tr '\n' ' ')
missing="" unlisted=""
for f in $listed; do [ -f "$f" ] || missing="$missing $f"; done
for f in "${js[@]}"; do case " $listed " in *" $f "*) ;; *) unlisted="$unlisted $f" ;; esac; done
if [ -z "$missing$unlisted" ] && [ -n "$listed" ]; then ok "mk/display.mk lists every module of web/js"
else not_ok "mk/display.mk lists every module of web/js" "missing:$missing; not listed:$unlisted"; fi
