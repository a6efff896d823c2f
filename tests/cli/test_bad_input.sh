#!/bin/bash
# test_bad_input.sh - `perftracker summarize BAD -o out.json` on every kind
# of bad input the Kineto reader knows: non-zero exit, no crash (no signal,
# no sanitizer report), no output file, and exactly one error line that
# names the file (and the byte for parse errors).  Inputs whose damage
# leaves usable events (a cut-off file, one bad event) must instead succeed
# with a warning.
. "$(dirname "$0")/lib.sh"

B=$TMP/bad
mkdir -p "$B"

# bad NAME FILE PATTERN: fails cleanly with one line naming FILE and PATTERN
bad() {
	local name=$1 file=$2 pat=$3
	rm -f "$TMP/out.json"
	check_fails "$name" "$pat" "$PT_BIN" summarize "$file" -o "$TMP/out.json"
	if [ "$(wc -l < "$TMP/.err")" -ne 1 ]; then
		not_ok "$name: one line" "stderr has $(wc -l < "$TMP/.err") lines"
		sed 's/^/# /' "$TMP/.err" | head -5
	elif ! grep -qF -- "'$file'" "$TMP/.err" && ! grep -qF -- "$file:" "$TMP/.err"; then
		not_ok "$name: names the file" "$(cat "$TMP/.err")"
	else
		ok "$name: one line naming the file"
	fi
	[ -e "$TMP/out.json" ] && not_ok "$name: no output file" || ok "$name: no output file"
}

# gz FILE: gzip FILE in place (deterministic, no timestamp) to FILE.gz
gz() { "$PYTHON" -c 'import gzip,sys; d=open(sys.argv[1],"rb").read(); open(sys.argv[1]+".gz","wb").write(gzip.compress(d, mtime=0))' "$1"; }

: > "$B/empty.json"
printf ' \n\t \n' > "$B/space.json"
printf 'this is not json\n' > "$B/text.json"
printf '{"a": 1}\n' > "$B/obj.json"
printf '42\n' > "$B/number.json"
printf '[1, 2]\n' > "$B/numbers.json"
printf '[]\n' > "$B/empty_array.json"
printf '{"traceEvents": {"ph": "X"}}\n' > "$B/events_obj.json"
printf '{"traceEvents": [{"ph": "X", "name": "a\\q"}]}\n' > "$B/bad_escape.json"
head -c 4096 "${PT_REAL_BIN:-$PT_BIN}" > "$B/binary.json"
"$PYTHON" -c 'import sys; sys.stdout.write("{\"traceEvents\": [{\"args\": " + "[" * 400 + "]" * 400 + "}]}")' > "$B/deep.json"
"$PYTHON" -c 'import sys; sys.stdout.write("{\"schema\": \"1.0.1\", \"nodes\": [{\"id\": 1, \"name\": \"[pytorch|profiler|execution_trace|thread]\"}]}")' > "$B/et.json"
T0=$PT_DATA/dlrm/worker0_step_12.1694128201545.pt.trace.json
head -c 2000 "$T0" > "$B/cut_header.json"
cp "$B/text.json" "$B/text_gz.json" && gz "$B/text_gz.json"
cp "$T0" "$B/full.json" && gz "$B/full.json"
head -c 20 "$B/full.json.gz" > "$B/cut_early.json.gz"
"$PYTHON" -c 'import sys; d=bytearray(open(sys.argv[1],"rb").read()); d[60:200]=b"\xff"*140; open(sys.argv[2],"wb").write(d)' \
	"$B/full.json.gz" "$B/corrupt.json.gz"

# one bit flipped in the middle of the compressed data: garbage text comes
# out before the inflater finds the damage (its CRC); the message says gzip
"$PYTHON" -c 'import sys; d=bytearray(open(sys.argv[1],"rb").read()); d[len(d)//2]^=4; open(sys.argv[2],"wb").write(d)' \
	"$B/full.json.gz" "$B/bitflip.json.gz"

bad "empty file" "$B/empty.json" "empty file (at byte 0)"
bad "only whitespace" "$B/space.json" "no json value (only whitespace) (at byte 5)"
bad "text" "$B/text.json" "unexpected character 't'.*(at byte 0)"
bad "json object, not a trace" "$B/obj.json" "not a trace: no traceEvents array"
bad "a number" "$B/number.json" "not a trace: the json value is a number, not an object or array (at byte 0)"
bad "array of numbers" "$B/numbers.json" "'{' starting an event (at byte 1)"
bad "empty array" "$B/empty_array.json" "no complete events"
bad "traceEvents not an array" "$B/events_obj.json" "traceEvents is not an array (at byte 16)"
bad "invalid escape" "$B/bad_escape.json" "invalid escape in string (at byte 39)"
bad "binary garbage" "$B/binary.json" "unexpected byte 0x7f.*(at byte 0)"
bad "deep nesting" "$B/deep.json" "nesting deeper than 256 levels (at byte 282)"
bad "execution trace" "$B/et.json" "not a trace: no traceEvents array"
bad "cut in the header" "$B/cut_header.json" "unexpected end of file (cut off?) (at byte 2000)"
bad "gzip of text" "$B/text_gz.json.gz" "unexpected character 't'.*(at byte 0)"
bad "gzip cut in its header" "$B/cut_early.json.gz" "unexpected end of gzip stream"
bad "corrupt gzip" "$B/corrupt.json.gz" "corrupt gzip data.*(at byte"
bad "missing file" "$B/nope.json" "cannot open: No such file or directory"
bad "directory" "$B" "is a directory"

# Damage that leaves usable events: exit 0, one warning, a summary.
"$PT_BIN" summarize "$B/bitflip.json.gz" -o "$TMP/flip.out.json" 2>"$TMP/flip.err"
grep -q "warning: '$B/bitflip.json.gz': corrupt gzip data (incorrect data check), found at byte [0-9]* of the uncompressed stream; the JSON broke first at byte [0-9]*; kept the [0-9]* events before it" "$TMP/flip.err" &&
	ok "bit-flipped .json.gz is named a corrupt gzip, not a JSON error" ||
	{ not_ok "bit-flipped .json.gz is named a corrupt gzip" "$(cat "$TMP/flip.err")"; }
head -c 500000 "$T0" > "$B/cut.json"
check "cut-off trace is summarised" "$PT_BIN" summarize "$B/cut.json" -o "$TMP/cut.out.json"
"$PT_BIN" summarize "$B/cut.json" -o "$TMP/cut.out.json" 2>&1 | grep -q "warning: .*trace ends early at byte 500000" \
	&& ok "cut-off trace warns with the byte" || not_ok "cut-off trace warns with the byte"
head -c 600000 "$B/full.json.gz" > "$B/cut.json.gz"
check "cut-off gzip trace is summarised" "$PT_BIN" summarize "$B/cut.json.gz" -o "$TMP/cutgz.out.json"
printf '{"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "a", "ts": 1, "dur": 5},\n{"ph": "X", "cat": "cpu_op", "name": "nodur", "ts": 2}]}' > "$B/nodur.json"
"$PT_BIN" summarize "$B/nodur.json" -o "$TMP/nodur.out.json" 2>"$TMP/nodur.err"
rc=$?
[ $rc -eq 0 ] && grep -q "complete event 'nodur' at byte 79 has no dur; skipped" "$TMP/nodur.err" \
	&& ok "event without dur: skipped with a warning" || { not_ok "event without dur: skipped with a warning" "rc $rc"; sed 's/^/# /' "$TMP/nodur.err"; }
