#!/bin/sh
# Installs the Debian packages tabletrack needs to build and test, only those
# that are missing. Uses sudo when not root. Safe to run again. Waits for
# another apt/dpkg run to finish (APT_LOCK_TIMEOUT seconds, default 600).
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
# Another apt or dpkg (unattended-upgrades on a fresh system) may hold the
# lock: wait up to 10 minutes for it instead of failing at once.
LOCK_WAIT="-o DPkg::Lock::Timeout=${APT_LOCK_TIMEOUT:-600}"
# Older apt versions ignore the timeout for the package lists' lock: retry.
t=0
until out=$($SUDO apt-get $LOCK_WAIT update -qq 2>&1); do
	case $out in
	*lock*) ;;
	*) echo "$out"; exit 1 ;;
	esac
	[ "$t" -ge "${APT_LOCK_TIMEOUT:-600}" ] && { echo "$out"; exit 1; }
	[ "$t" -eq 0 ] && echo "tabletrack: waiting for another apt to release its lock"
	sleep 5
	t=$((t + 5))
done
$SUDO apt-get $LOCK_WAIT install -y -qq --no-install-recommends $missing
