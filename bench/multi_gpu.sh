#!/usr/bin/env bash
# The runs on more GPUs than two (4 or 8 of one machine), each a part of its own so that one
# part fits a device call:
#
#   bench/multi_gpu.sh PART [BUILD]      BUILD defaults to ./build; every GPU it sees is used
#     potrf    resident potrf, f64 and f32, N = 65536 and 131072 (N131=0 skips it), against
#              cuSolverMg on the same GPUs in the same run; then f64 N = 65536 on 1 GPU (the
#              1 -> G efficiency)
#     getrf    resident getrf f64 N = 65536, tile 2048, against cusolverMgGetrf and
#              cusolverDnXgetrf in the same run
#     jax      tessera.jax.potrs on every GPU against tessera's own calls and jax's one-GPU
#              cho_factor + cho_solve (bench/jax_potrs.py), with its per-call time at N = 4096
#     dist     potrf f64 N = 65536: G processes x 1 GPU (G x 1 grid, then the squarest grid)
#              against 1 process x G GPUs (bench/dist_factor.sh), and the device all-reduce of
#              256 MiB against NCCL called directly (bench_comm_allreduce, G processes)
#
# N=... overrides the order of every part (a quick check of the script on a smaller matrix).
set -euo pipefail
part=${1:?usage: bench/multi_gpu.sh potrf|getrf|jax|dist [BUILD]}
build=${2:-./build}
here=$(dirname "$0")
export TESSERA_PERFMODEL=${TESSERA_PERFMODEL:-none} NCCL_NVLS_ENABLE=0
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
if [ "${gpus:-0}" -lt 1 ]; then
  echo "bench/multi_gpu.sh: no GPU"
  exit 1
fi
n=${N:-65536}
run() { echo "== $*"; "$@" 2>&1 | grep -vE '^\s*$' | tail -3; }
bench() { run "$build/tessera" bench "$@" --workers 0 --resident-only --reps 2; }
echo "# $part on $gpus GPUs, $(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo '?')"
case "$part" in
potrf)
  for dt in d s; do bench potrf --n "$n" --dtype "$dt" --gpus "$gpus"; done
  if [ "${N131:-1}" != 0 ]; then
    for dt in d s; do bench potrf --n $((2 * n)) --dtype "$dt" --gpus "$gpus"; done
  fi
  bench potrf --n "$n" --dtype d --gpus 1 --no-baseline
  ;;
getrf)
  bench getrf --n "$n" --tile 2048 --gpus "$gpus"
  ;;
jax)
  run env TESSERA_BUILD_DIR="$build" PYTHONPATH="$here/../python" \
    python3 "$here/jax_potrs.py" --n "$n" --jax-n $((n / 2)) --small 4096
  ;;
dist)
  p=1
  for ((q = 1; q * q <= gpus; q++)); do ((gpus % q == 0)) && p=$q; done
  GPUS=$gpus TRANSFERS=device "$here/dist_factor.sh" "$n" 2048 "$build"
  if [ "$p" -gt 1 ]; then
    GPUS=$gpus GRID="${p}x$((gpus / p))" TRANSFERS=device ONE=0 BASELINE=0 \
      "$here/dist_factor.sh" "$n" 2048 "$build"
  fi
  run mpirun -np "$gpus" --oversubscribe -x NCCL_NVLS_ENABLE "$build/bench/bench_comm_allreduce" \
    --mib 256
  ;;
*)
  echo "bench/multi_gpu.sh: unknown part $part (potrf, getrf, jax or dist)"
  exit 2
  ;;
esac
