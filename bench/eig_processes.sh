#!/usr/bin/env bash
# The eigensolver over processes, one GPU each (CUDA_VISIBLE_DEVICES from the local rank), f64
# with vectors: the CLI's syevd on a matrix dealt over a G x 1 grid, each build given in turn,
# alternating, --reps times; prints each run's seconds, residual and orthogonality. For A/B runs
# of two trees (built as ./build-gpu and, say, a branch's /tmp/b/build-gpu) on the same machine.
#
#   bench/eig_processes.sh [N] [BUILD ...]     defaults: 32768, ./build-gpu
#   METHOD=two|one|cost                         TESSERA_EIG_METHOD (default two: the dealt stages)
#   GPUS=G                                      processes, one GPU each (default 2)
#   REPS=R                                      rounds over the builds (default 2)
#   WORKERS=W                                   CPU workers per process (default 14)
#   TRACE=DIR                                   a Chrome trace per process and run into DIR
. "$(dirname "$0")/eig_common.sh" "$@"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export EIG_N=$n EIG_WORKERS=${WORKERS:-14}
for r in $(seq 1 "${REPS:-2}"); do
  for b in "${builds[@]}"; do
    export EIG_BIN=$b/tessera EIG_TRACE=${TRACE:+$TRACE/$(run_name "$b" "$r")}
    line=$(mpirun -np "${GPUS:-2}" --bind-to none -x TESSERA_PERFMODEL -x NCCL_NVLS_ENABLE \
      -x TESSERA_EIG_METHOD -x EIG_BIN -x EIG_N -x EIG_WORKERS -x EIG_TRACE bash -c \
      'r=$OMPI_COMM_WORLD_RANK; CUDA_VISIBLE_DEVICES=$OMPI_COMM_WORLD_LOCAL_RANK \
       exec env ${EIG_TRACE:+TESSERA_TRACE=$EIG_TRACE-$r.json} "$EIG_BIN" syevd --n "$EIG_N" \
       --grid "$OMPI_COMM_WORLD_SIZE"x1 --gpus 1 --workers "$EIG_WORKERS" --json' 2>&1 |
      grep '"routine"' | head -1)
    echo "$b round $r: $(echo "$line" | grep -oE '"(seconds|residual|orthogonality)": [0-9.e+-]+' | tr '\n' ' ')"
  done
done
