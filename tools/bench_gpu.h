/* tessera CLI — the GPU baselines of `tessera bench potrf|getrf|syevd` (cuSolverMg and
 * cusolverDnX), of `tessera bench geqrf|gels` (cusolverDnXgeqrf and cusolverDn<t><t>gels) and of
 * `tessera bench gesv --mixed` (cusolverDn<t><l>gesv). */
#ifndef TESSERA_TOOLS_BENCH_GPU_H
#define TESSERA_TOOLS_BENCH_GPU_H

#include "cli.h"

/** Best times of the baselines; INFINITY where one could not run (the reason is printed). */
typedef struct {
  double mg_seconds; /**< cusolverMgPotrf / Getrf / Syevd on the GPUs 0..gpus-1 */
  int mg_tile;       /**< the tile size of that time */
  double dn_seconds; /**< cusolverDnXpotrf / Xgetrf / Xsyevd on GPU 0 */
  void *w;           /**< syevd: n eigenvalues (the dtype's real type) for cusolverDn's, or NULL */
  int has_w;         /**< set when cusolverDnXsyevd's eigenvalues were written into w */
} gpu_baseline_t;

/** Times NVIDIA's factorization or eigensolver o->routine (potrf with o->uplo, getrf, or syevd
 *  with o->uplo, eigenvectors unless o->values_only) of the n x n column-major host matrix `a`
 *  (o->dtype): cusolverMgPotrf / cusolverMgGetrf / cusolverMgSyevd on `gpus` GPUs (1-D
 *  block-cyclic columns; the tiles bench_gpu_mg_tiles names, the best kept; cusolverMgSyevd
 *  reads the lower triangle only, whatever o->uplo: `a` must be Hermitian as a whole) and
 *  cusolverDnXpotrf / cusolverDnXgetrf / cusolverDnXsyevd on GPU 0. Before each run the matrix
 *  is copied onto the GPUs (untimed); each run is timed between synchronizations of every GPU
 *  used; one warm-up run, then o->reps timed runs, the best kept. Without the CUDA backend both
 *  are INFINITY. */
void bench_gpu_factor(const cli_opts_t *o, int gpus, int64_t n, const void *a, int64_t lda,
                      cli_progress_t *prog, gpu_baseline_t *out);

/** The cuSolverMg tile sizes bench_gpu_factor tries for o->routine, in words: "1024 or 2048"
 *  (potrf), "256 or 512" (getrf, whose largest accepted tile is 512), "256 or 1024" (syevd). */
const char *bench_gpu_mg_tiles(const cli_opts_t *o);

/** Loads cuSOLVER and cuSolverMg for the baselines (for good; the CLI links neither): 0, or -1
 *  with the reason printed. Every baseline calls it first. */
int bench_gpu_libraries(void);

/** The cuSOLVER routine bench_gpu_qr times for o->routine and o->dtype: "cusolverDnXgeqrf" for
 *  geqrf; for gels the iterative-refinement solver in the working precision, "cusolverDnSSgels",
 *  "cusolverDnDDgels", "cusolverDnCCgels" or "cusolverDnZZgels". */
const char *bench_gpu_qr_name(const cli_opts_t *o);

/** Times cuSOLVER's QR (o->routine, o->dtype) on GPU 0, the routine bench_gpu_qr_name names:
 *  geqrf of the m x n column-major host matrix `a` (lda) by cusolverDnXgeqrf (the 64-bit API,
 *  its device and host workspaces), or gels of `a` and the m x nrhs right-hand sides `b` (ldb)
 *  by cusolverDn<t><t>gels (X apart from B; m >= n only: m < n is reported as unavailable). A
 *  (and B) are copied onto GPU 0 before each run (untimed); each run is timed between
 *  synchronizations of the GPU, gels' fall-backs (its niter < 0) included; one warm-up run,
 *  then o->reps timed runs. Returns the best time, or INFINITY after printing why the baseline
 *  could not run (INFINITY silently for an empty problem and without the CUDA backend). The
 *  tessera context must be finalized first: it holds nearly all GPU memory in its pools. */
double bench_gpu_qr(const cli_opts_t *o, int64_t m, int64_t n, int64_t nrhs, const void *a,
                    int64_t lda, const void *b, int64_t ldb, cli_progress_t *prog);

/** Times cuSOLVER's mixed-precision LU solve (cusolverDn<t><l>gesv) of the n x n column-major
 *  host matrix `a` and the n x nrhs right-hand sides `b` (o->dtype) on GPU 0, in each of its
 *  lower precisions for the dtype (bench_irs.c), printing each mode's time and iterations as a
 *  comment line (not with --json). Returns the best time of the fastest mode that converged, its
 *  routine's name in *name; where none converged, the fastest (which fell back); INFINITY and
 *  *name NULL where it could not run (the reason printed) or without the CUDA backend. The
 *  tessera context must be finalized first. */
/** bench gepolar|gesvd's GPU baseline (bench_svd.c): cusolverDnXgesvdp (economy vectors, none
 *  with --values-only) on GPU 0 on the m x n a (lda; a wide one as its transpose), copied there
 *  before each run, best of o->reps after a warm-up; INFINITY where it cannot run (the reason
 *  printed) or without CUDA. */
double bench_gpu_gesvdp(const cli_opts_t *o, int64_t m, int64_t n, const void *a, int64_t lda,
                        cli_progress_t *prog);

double bench_irs_gesv(const cli_opts_t *o, int64_t n, int64_t nrhs, const void *a, int64_t lda,
                      const void *b, int64_t ldb, cli_progress_t *prog, const char **name);

#endif
