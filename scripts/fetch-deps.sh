#!/usr/bin/env bash
# Unpacks Debian packages into .deps/ (ignored by git), for a machine that cannot reach a package
# mirror but receives this tree, such as a GPU test machine: CMake searches .deps/usr for them,
# and scripts/setup.sh counts cmocka as installed there. By default cmocka; with --all also
# OpenBLAS, LAPACKE, OpenMPI and Gloo with the libraries they load, their .deb files kept in
# .deps/debs (about 24 MB) for a machine that unpacks them itself (scripts/device-env.sh).
#
#   scripts/fetch-deps.sh [--all]   run where apt-get works; then build anywhere with .deps/ beside
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(libcmocka0 libcmocka-dev)
if [ "${1:-}" = --all ]; then
  packages+=(libopenblas0 libopenblas0-pthread libopenblas-dev libopenblas-pthread-dev libblas3
    liblapack3 liblapacke liblapacke-dev libtmglib3 libgfortran5 libquadmath0
    openmpi-bin openmpi-common libopenmpi3 libopenmpi-dev libpmix2 libhwloc15 libevent-2.1-7
    libevent-core-2.1-7 libevent-pthreads-2.1-7 libfabric1 libucx0 libibverbs1 libibverbs-dev
    librdmacm1 libnl-3-200 libnl-route-3-200 libpsm2-2 libpsm-infinipath1 libmunge2 libnuma1
    libltdl7 libpciaccess0 libbsd0 libmd0 libxnvctrl0 libgloo0 libgloo-dev libhiredis0.14
    libhiredis-dev)
fi
mkdir -p .deps/debs
# As root, apt's download sandbox user could not write here.
sandbox=()
[ "$(id -u)" -eq 0 ] && sandbox=(-o APT::Sandbox::User=root)
(cd .deps/debs && apt-get download -q "${sandbox[@]}" "${packages[@]}" >/dev/null)
for deb in .deps/debs/*.deb; do dpkg -x "$deb" .deps; done
[ "${1:-}" = --all ] || rm -rf .deps/debs
echo "fetch-deps: ${#packages[@]} packages unpacked under .deps/usr"
