/* tessera CLI — the GPU baselines of `tessera bench potrf|getrf`: cuSolverMg and cusolverDnX. */
#ifndef TESSERA_TOOLS_BENCH_GPU_H
#define TESSERA_TOOLS_BENCH_GPU_H

#include "cli.h"

/** Best times of the baselines; INFINITY where one could not run (the reason is printed). */
typedef struct {
  double mg_seconds; /**< cusolverMgPotrf on the GPUs 0..gpus-1 */
  int mg_tile;       /**< the tile size of that time */
  double dn_seconds; /**< cusolverDnXpotrf / cusolverDnXgetrf on GPU 0 */
} gpu_baseline_t;

/** Times NVIDIA's factorization o->routine (potrf with o->uplo, or getrf) of the n x n
 *  column-major host matrix `a` (o->dtype): cusolverMgPotrf / cusolverMgGetrf on `gpus` GPUs
 *  (1-D block-cyclic columns; tiles 1024 and 2048 for potrf, 256 and 512 for getrf, whose
 *  largest accepted tile is 512; the best kept) and cusolverDnXpotrf / cusolverDnXgetrf on
 *  GPU 0. Before each run the matrix is copied onto the GPUs (untimed); each run is timed
 *  between synchronizations of every GPU used; one warm-up run, then o->reps timed runs, the
 *  best kept. Without the CUDA backend both are INFINITY. */
void bench_gpu_factor(const cli_opts_t *o, int gpus, int64_t n, const void *a, int64_t lda,
                      cli_progress_t *prog, gpu_baseline_t *out);

#endif
