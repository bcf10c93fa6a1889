#!/usr/bin/env bash
# Builds tessera with the CUDA backend and runs the GPU tests, the JAX binding's tests on the
# GPUs (where python3 imports jax) and a few CLI runs on a machine with GPUs, writing logs to
# $OUT (or ./gpu-check-out). Needs cmocka: run scripts/fetch-deps.sh where a package mirror is
# reachable and bring .deps/ along (with --all, OpenBLAS, LAPACKE, Open MPI and Gloo too, for a
# machine that has none: `. scripts/device-env.sh` there first).
#
#   scripts/gpu-check.sh [extra CLI commands to run after the tests, as one string]
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-gpu-check-out}
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0 TESSERA_PERFMODEL=${TESSERA_PERFMODEL:-none}
nvidia-smi -L | tee "$out/gpus.txt"
jax_inc=$(python3 -c "import jax.ffi; print(jax.ffi.include_dir())" 2>/dev/null || true)
{
  cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DTESSERA_CUDA=ON -DTESSERA_WERROR=ON \
    ${jax_inc:+-DTESSERA_JAX_INCLUDE_DIR="$jax_inc"} &&
    cmake --build build-gpu -j"$(nproc)"
} >"$out/build.log" 2>&1 || { tail -40 "$out/build.log"; exit 1; }
echo "== build ok"
ctest --test-dir build-gpu --output-on-failure --timeout 600 ${CTEST_ARGS:-} >"$out/ctest.log" 2>&1
grep -E "tests passed|Failed|Passed|\*\*\*" "$out/ctest.log" | tail -30
./build-gpu/tessera info 2>&1 | tee "$out/info.txt" | head -40
if [ -n "$jax_inc" ] && [ -f build-gpu/python/libtessera_jax.so ]; then
  echo "== pytest tests/python/test_jax*.py on the GPUs"
  TESSERA_BUILD_DIR="$PWD/build-gpu" PYTHONPATH="$PWD/python" TESSERA_JAX_LEAK_CALLS=${TESSERA_JAX_LEAK_CALLS:-2000} \
    python3 -m pytest -q -x tests/python/test_jax.py tests/python/test_jax_api.py tests/python/test_jax_lu.py >"$out/pytest-jax.log" 2>&1
  tail -15 "$out/pytest-jax.log"
fi
if [ $# -gt 0 ]; then
  echo "== $1"
  bash -c "$1" 2>&1 | tee "$out/extra.log" | tail -60
fi
