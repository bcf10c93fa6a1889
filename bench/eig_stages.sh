#!/usr/bin/env bash
# The eigensolver in one process, f64 with vectors: the CLI's syevd with a Chrome trace, each
# build given in turn (alternating, REPS rounds), then the call's seconds and its stages' windows
# from the trace (bench/trace_summary.py --groups; seconds from a stage's first task to its
# last): the band reduction, the bulge chasing, the divide and conquer's leaves and merges, Q2
# and Q1. For A/B runs of trees on one machine (./build-gpu and a branch's build, say).
#
#   bench/eig_stages.sh [N] [BUILD ...]     defaults: 32768, ./build-gpu
#   GPUS=G                                   --gpus G (default 1; CUDA_VISIBLE_DEVICES as set)
#   METHOD=two|one|cost                      TESSERA_EIG_METHOD (default two)
#   REPS=R                                   rounds over the builds (default 1)
#   KEEP=DIR                                 keep the traces there (default: removed)
here=$(cd "$(dirname "$0")" && pwd)
. "$here/eig_common.sh" "$@"
dir=${KEEP:-$(mktemp -d)}
mkdir -p "$dir"
[ -n "${KEEP:-}" ] || trap 'rm -rf "$dir"' EXIT
groups="band=geqrt,triangle,trmm;chase=hb2st,hb2st_steps;dc=stedc,laed_rows,laed_roots"
groups+=",laed_secular,laed_update,laed_values,laed_merge;q2=hb2st_apply;q1=qr_step"
for r in $(seq 1 "${REPS:-1}"); do
  for b in "${builds[@]}"; do
    t=$dir/$(run_name "$b" "$r").json
    line=$(TESSERA_TRACE=$t "$b/tessera" syevd --n "$n" --gpus "${GPUS:-1}" --json 2>&1 |
      grep '"routine"' | head -1 || true)
    stages=$([ -s "$t" ] && python3 "$here/trace_summary.py" "$t" --groups "$groups" || echo "no trace")
    echo "$b round $r: $(echo "$line" | grep -oE '"(seconds|residual)": [0-9.e+-]+' | tr '\n' ' ')| $stages"
  done
done
