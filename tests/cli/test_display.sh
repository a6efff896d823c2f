#!/bin/bash
# `perftracker display DIR`: the PerfDisplay HTTP server (libmicrohttpd) and
# the folder's app.py.  Every server listens on 127.0.0.1 only (port 0 or a
# random high port) and is stopped by the test.  Checks: page (re)build and
# its errors, loopback-only default bind, content types, 404, traversal
# (plain, percent-encoded, through a link) refused with 403, other methods
# 405, a busy port gives a clear error, Ctrl-C and SIGTERM stop it cleanly.
. "$(dirname "$0")/lib.sh"

D=$TMP/out
P=$D/PerfDisplay
mkdir -p "$P"
"$PYTHON" "$PT_ROOT/bench/gen_report.py" --workers 8 --markup -o "$P/report.json"
ln -s /etc/passwd "$P/passwd-link"
echo secret >"$P/.hidden"
SPIDS=()
cleanup() { for p in "${SPIDS[@]}"; do kill "$p" 2>/dev/null; done; rm -rf "$TMP"; }
trap cleanup EXIT

# start_server OUTFILE ARGS...: runs the server in the background, waits for
# the URL line; sets SPID, URL, PORT (empty URL when it did not start).
start_server() {
	local out=$1; shift
	"$@" >"$out" 2>"$out.err" &
	SPID=$!
	SPIDS+=("$SPID")
	URL=
	for _ in $(seq 150); do
		URL=$(sed -n 's|.*open \(http://[^ ]*\) in a web browser.*|\1|p' "$out" | head -1)
		[ -n "$URL" ] && break
		kill -0 "$SPID" 2>/dev/null || break
		sleep 0.1
	done
	PORT=${URL##*:}
	PORT=${PORT%/}
}

# wait_exit PID SECONDS: exit status of PID, or 255 if it is still running
wait_exit() {
	local i
	for i in $(seq $(($2 * 10))); do
		kill -0 "$1" 2>/dev/null || { wait "$1"; return $?; }
		sleep 0.1
	done
	return 255
}

# status METHOD PATH: HTTP status, path sent exactly as written
status() {
	local m=(-X "$1")
	[ "$1" = HEAD ] && m=(-I)
	curl -s -o "$TMP/body" -D "$TMP/head" --path-as-is "${m[@]}" --max-time 10 -w '%{http_code}' "http://127.0.0.1:$PORT$2"
}
ctype() { tr -d '\r' <"$TMP/head" | sed -n 's/^[Cc]ontent-[Tt]ype: //p'; }

check "display --help" "$PT_BIN" display --help
check_fails "missing folder" "not a folder" "$PT_BIN" display "$TMP/nope" --no-serve
mkdir -p "$TMP/empty"
check_fails "folder without a report" "no PerfDisplay/index.html or report.json" "$PT_BIN" display "$TMP/empty"
check_fails "no folder given" "usage" "$PT_BIN" display
check_fails "two folders" "only one folder" "$PT_BIN" display "$D" "$D"
check_fails "bad --port" "not a non-negative integer" "$PT_BIN" display "$D" --port abc
check_fails "--port out of range" "out of range" "$PT_BIN" display "$D" --port 70000
check_fails "unknown option" "unknown option '--frobnicate'" "$PT_BIN" display "$D" --frobnicate

mkdir -p "$TMP/bad/PerfDisplay"
printf '{"workers": {"a": ' >"$TMP/bad/PerfDisplay/report.json"
check_fails "broken report.json names the file and offset" "report.json.*at byte 18" \
	"$PT_BIN" display "$TMP/bad" --rebuild --no-serve

check "rebuild writes the page" "$PT_BIN" display "$D" --rebuild --no-serve
if [ -s "$P/index.html" ] && [ -x "$P/app.py" ] && grep -q 'id="pt-report"' "$P/index.html"; then
	ok "index.html and app.py written"
else
	not_ok "index.html and app.py written"
fi
if grep -qE '<script[^>]+src=|<link[^>]+stylesheet' "$P/index.html"; then
	not_ok "page loads no script or stylesheet from elsewhere"
else
	ok "page loads no script or stylesheet from elsewhere"
fi
# the markup kernel name is embedded as \u escapes, never as a tag
if grep -q '<img src=x' "$P/index.html"; then not_ok "markup in names is escaped in the page"
else ok "markup in names is escaped in the page"; fi

# ---- the server ------------------------------------------------------------
start_server "$TMP/s1.out" "$PT_BIN" display "$D" --port 0
case $URL in
http://127.0.0.1:[0-9]*/) ok "says which URL to open ($URL)" ;;
*) not_ok "says which URL to open" "stdout: $(cat "$TMP/s1.out") stderr: $(cat "$TMP/s1.out.err")" ;;
esac
# loopback only: the listening socket is bound to 127.0.0.1, not 0.0.0.0
hexport=$(printf '%04X' "${PORT:-0}")
if grep -q "^ *[0-9]*: 0100007F:$hexport 00000000:0000 0A" /proc/net/tcp &&
	! grep -q "^ *[0-9]*: 00000000:$hexport 00000000:0000 0A" /proc/net/tcp; then
	ok "binds to loopback only by default"
else
	not_ok "binds to loopback only by default" "$(grep ":$hexport " /proc/net/tcp)"
fi

[ "$(status GET /)" = 200 ] && ctype | grep -qx 'text/html; charset=utf-8' && grep -q 'id="pt-report"' "$TMP/body" &&
	ok "GET / serves index.html as text/html" || not_ok "GET / serves index.html as text/html" "$(cat "$TMP/head")"
[ "$(status GET /report.json)" = 200 ] && ctype | grep -qx 'application/json' && cmp -s "$TMP/body" "$P/report.json" &&
	ok "GET /report.json as application/json" || not_ok "GET /report.json as application/json"
[ "$(status GET /app.py)" = 200 ] && ctype | grep -q '^text/plain' &&
	ok "GET /app.py as text/plain" || not_ok "GET /app.py as text/plain"
[ "$(status GET '/index.html?x=1#y')" = 200 ] && ok "query string ignored" || not_ok "query string ignored"
[ "$(status HEAD /report.json)" = 200 ] && tr -d '\r' <"$TMP/head" | grep -qx "Content-Length: $(stat -c %s "$P/report.json")" &&
	! grep -q '"workers"' "$TMP/body" && ok "HEAD: length, no body" || not_ok "HEAD: length, no body" "$(cat "$TMP/head")"
[ "$(status GET /missing.json)" = 404 ] && ok "missing file is 404" || not_ok "missing file is 404"
[ "$(status GET /nothere/)" = 404 ] && ok "missing folder is 404" || not_ok "missing folder is 404"
[ "$(status POST /index.html)" = 405 ] && ok "POST is 405" || not_ok "POST is 405"
[ "$(status PUT /x.html)" = 405 ] && [ ! -e "$P/x.html" ] && ok "PUT is 405, nothing written" || not_ok "PUT is 405"

for path in '/../../../../../../etc/passwd' '/%2e%2e/%2e%2e/%2e%2e/%2e%2e/etc/passwd' \
	'/..%2f..%2f..%2f..%2f..%2fetc%2fpasswd' '/%2E%2E%2F%2E%2E%2F%2E%2E%2Fetc%2Fpasswd' \
	'/PerfDisplay/../../out/PerfDisplay/report.json' '/./report.json' '/passwd-link' \
	'/%252e%252e/%252e%252e/etc/passwd' '/..\..\..\etc\passwd'; do
	code=$(status GET "$path")
	if [ "${code:0:1}" = 4 ] && ! grep -q 'root:' "$TMP/body"; then
		ok "traversal refused with $code: $path"
	else
		not_ok "traversal refused: $path" "status $code"
	fi
done
[ "$(status GET '/%2e%2e/%2e%2e/etc/passwd')" = 403 ] && ok "encoded traversal is 403" || not_ok "encoded traversal is 403"
[ "$(status GET /.hidden)" = 403 ] && ! grep -q secret "$TMP/body" && ok "dotfiles are 403" ||
	not_ok "dotfiles are 403"
[ "$(status GET '/index.html%00.txt')" = 400 ] && ! grep -q 'pt-report' "$TMP/body" &&
	ok "NUL in the URL is 400" || not_ok "NUL in the URL is 400" "$(head -1 "$TMP/head")"

# a second server on the same port: a clear one-line error
check_fails "port in use gives a clear error" "port $PORT on 127.0.0.1 is already in use" \
	"$PT_BIN" display "$D" --port "$PORT"

kill -INT "$SPID"
wait_exit "$SPID" 10
rc=$?
if [ $rc -eq 0 ] && grep -q 'stopping (interrupt)' "$TMP/s1.out"; then ok "Ctrl-C stops it cleanly (exit 0)"
else not_ok "Ctrl-C stops it cleanly" "rc $rc; $(cat "$TMP/s1.out.err" | head -5)"; fi
if grep -q 'Sanitizer\|runtime error' "$TMP/s1.out.err"; then not_ok "no sanitizer report" "$(head -20 "$TMP/s1.out.err")"
else ok "no sanitizer report"; fi
grep -q 'GET /report.json 200' "$TMP/s1.out.err" && grep -q 'GET /passwd-link 403' "$TMP/s1.out.err" &&
	ok "requests are logged" || not_ok "requests are logged"

# an explicit random high port, serving the PerfDisplay folder itself, SIGTERM
for _ in 1 2 3 4 5; do
	want=$((20000 + RANDOM % 30000))
	start_server "$TMP/s2.out" "$PT_BIN" display "$P" --port "$want" -q
	[ -n "$URL" ] && break
done
[ "$URL" = "http://127.0.0.1:$want/" ] && [ "$(status GET /)" = 200 ] &&
	ok "--port N, DIR = the PerfDisplay folder" || not_ok "--port N" "$URL"
kill -TERM "$SPID"
wait_exit "$SPID" 10 && ok "SIGTERM stops it cleanly" || not_ok "SIGTERM stops it cleanly"
[ -s "$TMP/s2.out.err" ] && not_ok "-q logs nothing" "$(head -3 "$TMP/s2.out.err")" || ok "-q logs nothing"

# a folder with report.json but no page: the page is built, then served
mkdir -p "$TMP/nopage/PerfDisplay"
cp "$P/report.json" "$TMP/nopage/PerfDisplay/"
start_server "$TMP/s3.out" "$PT_BIN" display "$TMP/nopage" --port 0 -q
[ -s "$TMP/nopage/PerfDisplay/index.html" ] && [ "$(status GET /)" = 200 ] &&
	ok "builds a missing page before serving" || not_ok "builds a missing page before serving"
kill -INT "$SPID"
wait_exit "$SPID" 10 >/dev/null

# ---- app.py (standard library), as the PAI guide runs it -------------------
for _ in 1 2 3 4 5; do
	PORT=$((20000 + RANDOM % 30000))
	# started with SIGINT ignored, as a script's background job inherits it:
	# Ctrl-C must stop it all the same
	(trap '' INT; cd "$P" && exec "$PYTHON" app.py --port "$PORT") >"$TMP/a.out" 2>"$TMP/a.err" &
	APID=$!
	SPIDS+=("$APID")
	for _ in $(seq 50); do grep -q 'open http' "$TMP/a.out" && break; kill -0 $APID 2>/dev/null || break; sleep 0.1; done
	grep -q 'open http' "$TMP/a.out" && break
done
grep -q "open http://127.0.0.1:$PORT/ in a web browser" "$TMP/a.out" && ok "app.py says which URL to open" ||
	not_ok "app.py says which URL to open" "$(cat "$TMP/a.out" "$TMP/a.err")"
[ "$(status GET /)" = 200 ] && ctype | grep -qx 'text/html; charset=utf-8' && ok "app.py serves index.html" ||
	not_ok "app.py serves index.html"
[ "$(status GET /report.json)" = 200 ] && ctype | grep -qx 'application/json' && ok "app.py serves report.json" ||
	not_ok "app.py serves report.json"
[ "$(status GET /passwd-link)" = 403 ] && ok "app.py refuses a link out of the folder" ||
	not_ok "app.py refuses a link out of the folder"
code=$(status GET '/%2e%2e/%2e%2e/%2e%2e/%2e%2e/etc/passwd')
! grep -q 'root:' "$TMP/body" && ok "app.py: no traversal ($code)" || not_ok "app.py: no traversal"
# one policy with the C server: dotfiles 403, NUL 400
[ "$(status GET /.hidden)" = 403 ] && ! grep -q secret "$TMP/body" && ok "app.py: dotfiles are 403" ||
	not_ok "app.py: dotfiles are 403" "$(head -1 "$TMP/head")"
[ "$(status GET '/%2ehidden')" = 403 ] && ok "app.py: encoded dotfiles are 403" ||
	not_ok "app.py: encoded dotfiles are 403"
[ "$(status GET '/index.html%00.txt')" = 400 ] && ! grep -q 'pt-report' "$TMP/body" &&
	ok "app.py: NUL in the URL is 400" || not_ok "app.py: NUL in the URL is 400" "$(head -1 "$TMP/head")"
hexport=$(printf '%04X' "$PORT")
grep -q "^ *[0-9]*: 0100007F:$hexport 00000000:0000 0A" /proc/net/tcp && ok "app.py binds to 127.0.0.1" ||
	not_ok "app.py binds to 127.0.0.1"
kill -INT "$APID"
wait_exit "$APID" 10 && grep -q 'stopped' "$TMP/a.out" && ok "app.py stops on Ctrl-C" || not_ok "app.py stops on Ctrl-C"
