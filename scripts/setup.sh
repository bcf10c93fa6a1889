#!/usr/bin/env bash
# Installs what tessera builds and tests with, on Debian or Ubuntu: only the packages that are
# missing, so it takes well under a second when everything is there. Installing needs root.
#
#   scripts/setup.sh [build|test]   what the build needs (make build, make demo), or that and
#                                   what the tests need (cmocka, OpenMPI, pytest, pytest-xdist,
#                                   jax, scikit-build-core; the default); installs what is missing as root, or
#                                   names it and fails
#   TESSERA_SKIP_SETUP=1            do nothing (a machine set up by other means)
#   TESSERA_APT_WAIT=SECONDS        how long to wait for another apt or dpkg holding its lock
#                                   (default 300)
#
# A build tool already on PATH (cmake from pip, say) counts as present. cmocka unpacked into
# .deps/ by scripts/fetch-deps.sh also counts, for machines that cannot reach a package mirror.
# When tests/python holds tests and python3 lacks pytest, pytest is installed with pip, and
# pytest-xdist (make test runs the Python tests in parallel with it); jax (CPU) likewise when the
# JAX binding's tests are there (the binding is built against its FFI header), and
# scikit-build-core for the wheel test (which then builds without pip's isolated environment).
set -euo pipefail
cd "$(dirname "$0")/.."

[ "${TESSERA_SKIP_SETUP:-0}" = 1 ] && exit 0

target=${1:-test}
case "$target" in
build | test) ;;
*)
  echo "setup: unknown target '$target' (build or test)" >&2
  exit 2
  ;;
esac

tools=(cmake gcc make pkg-config)
libs=(libc6-dev libopenblas-dev liblapacke-dev)
[ "$target" = test ] && libs+=(libcmocka-dev libopenmpi-dev openmpi-bin libgloo-dev g++)

installed() {
  [ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null)" = "install ok installed" ]
}

missing=()
if command -v dpkg-query >/dev/null; then
  for p in "${tools[@]}"; do
    command -v "$p" >/dev/null || installed "$p" || missing+=("$p")
  done
  for p in "${libs[@]}"; do
    installed "$p" && continue
    [ "$p" = libcmocka-dev ] && [ -f .deps/usr/include/cmocka.h ] && continue
    missing+=("$p")
  done
else
  for p in "${tools[@]}"; do command -v "$p" >/dev/null || missing+=("$p"); done
  if [ ${#missing[@]} -gt 0 ]; then
    echo "setup: not a Debian system; install by hand: ${missing[*]} and OpenBLAS, LAPACKE," \
      "cmocka development files" >&2
    exit 1
  fi
fi

if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "setup: missing packages: ${missing[*]}" >&2
    echo "setup: install them with: sudo apt-get install ${missing[*]}" >&2
    exit 1
  fi
  echo "setup: installing ${missing[*]}"
  log=$(mktemp)
  export DEBIAN_FRONTEND=noninteractive
  # Another apt or dpkg (unattended upgrades, say) may hold the lock: wait for it, a bounded time.
  wait_s=${TESSERA_APT_WAIT:-300}
  deadline=$((SECONDS + wait_s))
  apt=(apt-get -q -o "DPkg::Lock::Timeout=$wait_s")
  while ! { "${apt[@]}" update && "${apt[@]}" install -y --no-install-recommends "${missing[@]}"; } \
    >"$log" 2>&1; do
    if grep -qiE 'could not get lock|unable to acquire|lock-frontend|is another process using it' \
      "$log" && [ "$SECONDS" -lt "$deadline" ]; then
      [ -n "${waited:-}" ] ||
        echo "setup: another apt or dpkg holds the package lock; waiting (up to ${wait_s} s)"
      waited=1
      sleep 5
      continue
    fi
    tail -n 30 "$log" >&2
    rm -f "$log"
    echo "setup: apt-get failed; set TESSERA_SKIP_SETUP=1 to build with what is there" >&2
    exit 1
  done
  rm -f "$log"
fi
[ "$target" = build ] && exit 0

if compgen -G "tests/python/test_*.py" >/dev/null && command -v python3 >/dev/null &&
  ! python3 -c "import pytest" 2>/dev/null; then
  echo "setup: installing pytest"
  python3 -m pip install -q --disable-pip-version-check pytest >/dev/null 2>&1 ||
    echo "setup: could not install pytest; the Python tests will be skipped" >&2
fi
if compgen -G "tests/python/test_*.py" >/dev/null && command -v python3 >/dev/null &&
  ! python3 -c "import xdist" 2>/dev/null; then
  echo "setup: installing pytest-xdist"
  python3 -m pip install -q --disable-pip-version-check pytest-xdist >/dev/null 2>&1 ||
    echo "setup: could not install pytest-xdist; the Python tests will run in one process" >&2
fi
if [ -f tests/python/test_package.py ] && command -v python3 >/dev/null &&
  ! python3 -c "import scikit_build_core" 2>/dev/null; then
  echo "setup: installing scikit-build-core (the wheel test builds with it)"
  python3 -m pip install -q --disable-pip-version-check scikit-build-core >/dev/null 2>&1 ||
    echo "setup: could not install scikit-build-core; the wheel test lets pip fetch it" >&2
fi
if compgen -G "tests/python/test_jax*.py" >/dev/null && command -v python3 >/dev/null &&
  ! python3 -c "import jax" 2>/dev/null; then
  echo "setup: installing jax (CPU) for the JAX binding"
  python3 -m pip install -q --disable-pip-version-check jax >/dev/null 2>&1 ||
    echo "setup: could not install jax; the JAX binding and its tests will be skipped" >&2
fi
exit 0
