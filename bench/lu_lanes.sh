#!/usr/bin/env bash
# LU's panel beside the updates on the GPUs this machine has (all of them, at most GPUS): one
# device call's worth.
#
#   bench/lu_lanes.sh [BUILD]      BUILD defaults to ./build (a CUDA build)
#
# 1. bench_lu_panel: the panel's getrf alone, beside gemm streams of the update's shape and of
#    inner dimensions 1024 and 512 (--k), each also beside one on a side queue with 32 SMs kept.
# 2. bench_getrf_env: resident getrf f64 at N (default 65536), tile TILE (default 2048), under
#    each setting of SETTINGS (";" between settings, each "VAR=VALUE ..."; default: none, the
#    updates of the chain-bound steps in gemms of 512 or 256, of 512 from 4 or 16 trailing
#    panels per device), one matrix, interleaved, best of 2.
# 3. The same getrf by `tessera bench`, traced, for each of KS (default "0 512":
#    TESSERA_LU_UPDATE_K), FLIGHTS (default "8": each GPU worker's tasks in flight,
#    TESSERA_GPU_FLIGHTS) and SMS (default "0": the SMs kept for the urgent lane,
#    TESSERA_URGENT_SMS); per run the rate, the lanes' counts and each lane's getrf and lu_step
#    spans from enqueue to completion, and the panels' chain: their spans and the waits between
#    them, summed (bench/trace_summary.py --chain getrf); the first run against cusolverMgGetrf
#    and cusolverDnXgetrf.
# Traces go to OUT (default ./lu-lanes-out).
set -euo pipefail
build=${1:-./build}
here=$(dirname "$0")
out=${OUT:-./lu-lanes-out}
n=${N:-65536}
tile=${TILE:-2048}
export TESSERA_PERFMODEL=${TESSERA_PERFMODEL:-none} NCCL_NVLS_ENABLE=0
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
if [ "${gpus:-0}" -lt 1 ]; then
  echo "bench/lu_lanes.sh: no GPU"
  exit 1
fi
gpus=$((gpus < ${GPUS:-2} ? gpus : ${GPUS:-2}))
mkdir -p "$out"
echo "# getrf lanes on $gpus GPUs, $(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo '?')"
"$build/bench/bench_lu_panel" --m 32768 --tile "$tile" --side 32 --k 1024,512 |
  grep -E "panel getrf|inner" || true
default_settings=";TESSERA_LU_UPDATE_K=512;TESSERA_LU_UPDATE_K=256"
default_settings+=";TESSERA_LU_UPDATE_K=512 TESSERA_LU_TAIL=4;TESSERA_LU_UPDATE_K=512 TESSERA_LU_TAIL=16"
IFS=';' read -ra settings <<<"${SETTINGS-$default_settings}"
env_args=()
for s in "${settings[@]}"; do env_args+=(--env "$s"); done
"$build/bench/bench_getrf_env" --n "$n" --tile "$tile" --gpus "$gpus" "${env_args[@]}"
baseline=""
for k in ${KS:-0 512}; do
  for f in ${FLIGHTS:-8}; do
    for s in ${SMS:-0}; do
      echo "== TESSERA_LU_UPDATE_K=$k TESSERA_GPU_FLIGHTS=$f TESSERA_URGENT_SMS=$s ($(date +%T))"
      trace="$out/getrf-k$k-flights$f-sms$s.json"
      TESSERA_LU_UPDATE_K=$k TESSERA_GPU_FLIGHTS=$f TESSERA_URGENT_SMS=$s "$build/tessera" bench \
        getrf --n "$n" --tile "$tile" --gpus "$gpus" --workers 0 --resident-only --reps 1 \
        $baseline --trace "$trace" | grep -E "^getrf|^# worker"
      python3 "$here/trace_summary.py" "$trace" --window 0 --chain getrf |
        sed -n '/enqueue to completion/,$p' | grep -E "^kernel|^getrf +|^lu_step +|tasks over"
      baseline=--no-baseline
    done
  done
done
