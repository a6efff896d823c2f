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

# scripts/venv.sh (make venv): nothing when .venv is complete; offline from
# the wheelhouse when it has every wheel; otherwise a download into it first.
# The venv's python is a stand-in that records its calls.
vr=$TMP/vroot
mkdir -p "$vr/scripts" "$vr/.venv/bin" "$vr/python"
cp scripts/venv.sh scripts/venv-requirements.txt "$vr/scripts/"
cat >"$vr/.venv/bin/python" <<'SH'
#!/bin/sh
echo "python $*" >>"$FAKE_LOG"
case "$*" in
*"--no-index"*) exit "${FAKE_OFFLINE_RC:-0}" ;;
*sysconfig*) echo "$FAKE_SITE" ;;
esac
exit 0
SH
chmod +x "$vr/.venv/bin/python"
mkdir -p "$TMP/site"
vlog=$TMP/venv.log
: >"$vlog"
cp "$vr/scripts/venv-requirements.txt" "$vr/.venv/.perftracker-requirements"
FAKE_LOG=$vlog sh "$vr/scripts/venv.sh" >"$TMP/vout" 2>&1
check "venv.sh runs nothing when .venv matches the requirements" test ! -s "$vlog"
check "venv.sh prints nothing when .venv matches the requirements" test ! -s "$TMP/vout"

rm "$vr/.venv/.perftracker-requirements"
: >"$vlog"
FAKE_LOG=$vlog FAKE_SITE=$TMP/site PERFTRACKER_WHEELS=$TMP/wh sh "$vr/scripts/venv.sh" >"$TMP/vout" 2>&1
check "venv.sh installs offline from the wheelhouse when it can" \
	grep -qx "python -m pip install -q --no-index --find-links $TMP/wh -r $vr/scripts/venv-requirements.txt" "$vlog"
check "venv.sh downloads nothing when the wheelhouse has every wheel" sh -c "! grep -q 'pip download' '$vlog'"
check "venv.sh puts the tree's python/ on the venv's path" grep -qx "$vr/python" "$TMP/site/perftracker-tree.pth"
check "venv.sh records what it installed" cmp -s "$vr/scripts/venv-requirements.txt" "$vr/.venv/.perftracker-requirements"

rm "$vr/.venv/.perftracker-requirements"
: >"$vlog"
FAKE_LOG=$vlog FAKE_SITE=$TMP/site FAKE_OFFLINE_RC=1 PERFTRACKER_WHEELS=$TMP/wh sh "$vr/scripts/venv.sh" >"$TMP/vout" 2>&1
check "venv.sh fetches the wheels into the wheelhouse when it lacks one" \
	grep -qx "python -m pip download -q -d $TMP/wh -r $vr/scripts/venv-requirements.txt" "$vlog"
