#!/bin/sh
# Install what the build and the tests need on a fresh Debian 12 machine.
# Only installs what is missing; needs root (or sudo) for apt-get.
set -e
need=""
for p in build-essential clang libclang-rt-14-dev zlib1g-dev libsqlite3-dev libcmocka-dev \
	 libmicrohttpd-dev pkg-config python3 python3-dev python3-torch python3-venv python3-pip \
	 python3-setuptools chromium prometheus; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need="$need $p"
done
# npm may come with a nodejs from elsewhere; only ask Debian for it when absent.
command -v npm >/dev/null 2>&1 || need="$need nodejs npm"
[ -z "$need" ] && exit 0
echo "deps: installing$need"
SUDO=""
[ "$(id -u)" = 0 ] || SUDO=sudo
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $need >/dev/null
