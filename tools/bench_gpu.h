/* tessera CLI — the GPU baselines of `tessera bench potrf`: cuSolverMg and cusolverDnXpotrf. */
#ifndef TESSERA_TOOLS_BENCH_GPU_H
#define TESSERA_TOOLS_BENCH_GPU_H

#include "cli.h"

/** Best times of the baselines; INFINITY where one could not run (the reason is printed). */
typedef struct {
  double mg_seconds; /**< cusolverMgPotrf on the GPUs 0..gpus-1 */
  int mg_tile;       /**< the tile size (1024 or 2048) of that time */
  double dn_seconds; /**< cusolverDnXpotrf on GPU 0 */
} gpu_baseline_t;

/** Times NVIDIA's Cholesky on the n x n column-major host matrix `a` (o->dtype, o->uplo):
 *  cusolverMgPotrf on `gpus` GPUs (1-D block-cyclic columns, tiles 1024 and 2048, the best
 *  kept) and cusolverDnXpotrf on GPU 0. Before each run the matrix is copied onto the GPUs
 *  (untimed); each run is timed between synchronizations of every GPU used; one warm-up run,
 *  then o->reps timed runs, the best kept. Without the CUDA backend both are INFINITY. */
void bench_gpu_potrf(const cli_opts_t *o, int gpus, int64_t n, const void *a, int64_t lda,
                     cli_progress_t *prog, gpu_baseline_t *out);

#endif
