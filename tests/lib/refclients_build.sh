#!/bin/sh
# Builds the TUIO protocol author's reference clients (../shared/clients,
# TuioDump and Tuio2Dump) with AddressSanitizer into BUILD/refclients-asan,
# with a stamp of their sources and compiler, unless that stamp is already
# there: e2e_clients.sh runs them, and tests/run.sh starts this beside the
# unit tests so that a clean clone's ~40 s build is not waited for.
#     sh tests/lib/refclients_build.sh [BUILD]
# Exit 0 built or up to date, 77 nothing to build with (no ../shared or no
# g++), 1 the build failed (its log printed).
B=${1:-${BUILD:-build}}
SRC=$(dirname "$0")/../../../shared/clients
[ -f "$SRC/build.sh" ] || { echo "../shared/clients missing"; exit 77; }
command -v g++ >/dev/null 2>&1 || { echo "g++ missing"; exit 77; }
CL=$B/refclients-asan
cxx="g++ -fsanitize=address"
stamp=$( (echo "$cxx"; g++ --version; cd "$SRC" && find . -name '*.cpp' -o -name '*.h' -o -name build.sh | sort | xargs cksum) | cksum)
[ "$(cat "$CL/stamp" 2>/dev/null)" = "$stamp" ] && exit 0
echo "building the reference clients with AddressSanitizer"
T=$(mktemp -d) || exit 1
trap 'rm -rf "$T"' EXIT
CXX="$cxx" sh "$SRC/build.sh" "$T/clients" >"$T/build.log" 2>&1 ||
	{ cat "$T/build.log"; echo "FAIL: the reference clients do not build"; exit 1; }
rm -rf "$CL" && mkdir -p "$CL" && cp "$T/clients/TuioDump" "$T/clients/Tuio2Dump" "$CL/" && echo "$stamp" >"$CL/stamp"
