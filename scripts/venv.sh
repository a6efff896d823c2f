#!/bin/sh
# Make .venv/ at the repository root: Debian's python3 with a current torch 2
# from PyPI (scripts/venv-requirements.txt) and the collector package in
# place (a .pth file naming <repo>/python, so the tree's own perftracker and
# c4d_perftracker_collector are what the venv imports).  Run by `make venv`,
# which `make demo` and `make test` depend on; does nothing when the venv is
# complete.  The wheels are kept in a wheelhouse outside the repository
# (PERFTRACKER_WHEELS, default ~/.cache/perftracker/wheels: pip's own HTTP
# cache does not keep them here), so a second clone installs offline.
set -eu
cd "$(dirname "$0")/.."
ROOT=$(pwd)
VENV=$ROOT/.venv
REQ=$ROOT/scripts/venv-requirements.txt
WHEELS=${PERFTRACKER_WHEELS:-${XDG_CACHE_HOME:-$HOME/.cache}/perftracker/wheels}
BASE=${VENV_BASE_PYTHON:-/usr/bin/python3}
STAMP=$VENV/.perftracker-requirements

if [ -x "$VENV/bin/python" ] && [ -f "$STAMP" ] && cmp -s "$REQ" "$STAMP"; then
	exit 0
fi
t0=$(date +%s)
echo "venv: making $VENV (torch from PyPI, wheels kept in $WHEELS)"
[ -x "$VENV/bin/python" ] || "$BASE" -m venv "$VENV"
mkdir -p "$WHEELS"
# Offline first (every wheel already in the wheelhouse), else fetch into it.
if ! "$VENV/bin/python" -m pip install -q --no-index --find-links "$WHEELS" -r "$REQ" 2>/dev/null; then
	"$VENV/bin/python" -m pip download -q -d "$WHEELS" -r "$REQ"
	"$VENV/bin/python" -m pip install -q --no-index --find-links "$WHEELS" -r "$REQ"
fi
site=$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
echo "$ROOT/python" > "$site/perftracker-tree.pth"
"$VENV/bin/python" -c 'import torch, sys; print("venv: torch %s, kineto %s" % (torch.__version__, torch.autograd.kineto_available()))'
cp "$REQ" "$STAMP"
echo "venv: ready in $(( $(date +%s) - t0 )) s, $(du -sh "$VENV" | cut -f1) ($(du -sh "$WHEELS" | cut -f1) of wheels kept)"
