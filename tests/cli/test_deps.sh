#!/bin/bash
# test_deps.sh - scripts/deps.sh (run by `make test`, `make demo`, `make
# deps`) asks apt-get for nothing when every package is installed, and for
# exactly the missing ones otherwise.  dpkg-query, apt-get, sudo and npm are
# stand-ins on PATH that record their calls: nothing is installed.
. "$(dirname "$0")/lib.sh"
cd "$PT_ROOT" || exit 1
fake=$TMP/bin
mkdir -p "$fake"
cat >"$fake/dpkg-query" <<'SH'
#!/bin/sh
# the last argument is the package; FAKE_MISSING lists the absent ones
for p; do :; done
case " $FAKE_MISSING " in *" $p "*) exit 1;; esac
printf 'install ok installed'
SH
cat >"$fake/apt-get" <<'SH'
#!/bin/sh
echo "apt-get $*" >>"$FAKE_LOG"
SH
cat >"$fake/sudo" <<'SH'
#!/bin/sh
exec "$@"
SH
printf '#!/bin/sh\nexit 0\n' >"$fake/npm"
chmod +x "$fake"/*

log=$TMP/apt.log
: >"$log"
if PATH=$fake:$PATH FAKE_LOG=$log FAKE_MISSING= sh scripts/deps.sh >"$TMP/out" 2>&1; then
	ok "deps.sh exits 0 when everything is installed"
else
	not_ok "deps.sh exits 0 when everything is installed" "$(cat "$TMP/out")"
fi
check "deps.sh runs no apt-get when everything is installed" test ! -s "$log"
check "deps.sh prints nothing when everything is installed" test ! -s "$TMP/out"

: >"$log"
PATH=$fake:$PATH FAKE_LOG=$log FAKE_MISSING="libcmocka-dev chromium" sh scripts/deps.sh >"$TMP/out" 2>&1
check "deps.sh installs exactly what is missing" \
	grep -qx 'apt-get install -y -qq --no-install-recommends libcmocka-dev chromium' "$log"
