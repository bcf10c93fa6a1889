#!/usr/bin/env bash
# Unpacks cmocka's Debian packages into .deps/ (ignored by git), for a machine that cannot reach
# a package mirror but receives this tree, such as a GPU test machine: CMake searches .deps/usr
# for cmocka, and scripts/setup.sh counts it as installed there.
#
#   scripts/fetch-deps.sh       run where apt-get works; then build anywhere with .deps/ beside
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(libcmocka0 libcmocka-dev)
mkdir -p .deps/debs
# As root, apt's download sandbox user could not write here.
sandbox=()
[ "$(id -u)" -eq 0 ] && sandbox=(-o APT::Sandbox::User=root)
(cd .deps/debs && apt-get download -q "${sandbox[@]}" "${packages[@]}" >/dev/null)
for deb in .deps/debs/*.deb; do dpkg -x "$deb" .deps; done
rm -rf .deps/debs
echo "fetch-deps: cmocka unpacked under .deps/usr"
