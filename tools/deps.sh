#!/bin/sh
# Installs the Debian packages tabletrack needs to build and test, only those
# that are missing. Uses sudo when not root. Safe to run again.
set -e
PKGS="pkg-config g++ python3 liblo-dev liblo-tools libpng-dev zlib1g-dev libinih-dev
libsystemd-dev libcmocka-dev libsdl2-dev libv4l-dev libturbojpeg0-dev liboscpack-dev
systemd xvfb xdotool x11-apps imagemagick poppler-utils clang libclang-rt-14-dev"
missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "tabletrack: installing missing packages:$missing"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends $missing
