#!/bin/bash
# Report keys declared once (src/report/keys.def): every K.<ID> the page
# (web/js/*.js) uses is a line of the table, every key the page reads by a
# literal (x['impact (ms)']) is in it, build/gen/keys.js is the table, and
# the C sources spell "step_ms" and the section names only in keys.def.
. "$(dirname "$0")/lib.sh"
DEF=$PT_ROOT/src/report/keys.def
JS=$PT_ROOT/build/gen/keys.js
ids() { sed -n 's/^PT_KEY(\([A-Z0-9_]*\), .*/\1/p' "$DEF" | sort -u; }
spellings() { sed -n 's/^PT_KEY([A-Z0-9_]*, "\([^"]*\)", .*/\1/p' "$DEF" | sort -u; }

ids > "$TMP/ids"
spellings > "$TMP/keys"
check "keys.def has keys" test "$(wc -l < "$TMP/ids")" -gt 100
check "keys.def: one line per ID" test "$(grep -c '^PT_KEY(' "$DEF")" -eq "$(wc -l < "$TMP/ids")"
check "keys.def: one line per spelling" test "$(grep -c '^PT_KEY(' "$DEF")" -eq "$(wc -l < "$TMP/keys")"

cat "$PT_ROOT"/web/js/*.js | grep -oE '\bK\.[A-Za-z0-9_]+' | sed 's/^K\.//' | sort -u > "$TMP/used"
missing=$(comm -23 "$TMP/used" "$TMP/ids" | tr '\n' ' ')
if [ -z "$missing" ]; then ok "every K.<ID> in web/ is in keys.def ($(wc -l < "$TMP/used") used)"
else not_ok "every K.<ID> in web/ is in keys.def" "missing: $missing"; fi

# Literal property reads: x['key'], x["key"], f(...)['key'].
cat "$PT_ROOT"/web/js/*.js | grep -oE "[A-Za-z0-9_\$)]\]?\[ *('[^']+'|\"[^\"]+\") *\]" |
	sed -E "s/^.*\[ *['\"]//; s/['\"] *\]$//" | sort -u > "$TMP/lit"
missing=$(comm -23 "$TMP/lit" "$TMP/keys" | tr '\n' '|')
if [ -z "$missing" ]; then ok "every literal key the page reads is in keys.def ($(wc -l < "$TMP/lit") keys)"
else not_ok "every literal key the page reads is in keys.def" "missing: $missing"; fi

if [ -f "$JS" ]; then
	check "keys.js: K.STEP_MS is step_ms" grep -qx '  STEP_MS: "step_ms",' "$JS"
	check "keys.js: KEY_UNIT of impact (ms) is ms" grep -qx '  "impact (ms)": "ms",' "$JS"
	check "keys.js: one K entry per line of keys.def" \
		test "$(sed -n '/^var K = {/,/^};/p' "$JS" | grep -c '^  [A-Z0-9_]*: ')" -eq "$(wc -l < "$TMP/ids")"
	check "the page inlines keys.js before the app" \
		bash -c "grep -n -m1 '^var K = {' '$PT_ROOT/build/gen/page.html' >/dev/null"
else
	echo "ok - keys.js checks # SKIP build/gen/keys.js not built (make)"
fi

# Code only: comment lines and trailing comments do not count.
for k in '"step_ms"' '"Critical path"' '"Lockstep"' '"Time breakdown"' '"impact (ms)"'; do
	files=$(cd "$PT_ROOT" && grep -rnF -- "$k" src | awk -F: -v k="$k" '{
		t = substr($0, length($1) + length($2) + 3)
		sub(/\/\*.*/, "", t); sub(/\/\/.*/, "", t)
		if (t !~ /^[ \t]*\*/ && index(t, k)) print $1 }' | sort -u | tr '\n' ' ')
	check "$k spelled only in keys.def (found in: $files)" test "$files" = "src/report/keys.def "
done
