/* The Cholesky family of tile kernels: potrf, trtri, lauum and logdiag on a tile, and posv, a
 * whole solve on one device; potrf, trtri and lauum by recursive halving (potrf_blocked.c,
 * trtri_blocked.c, lauum_blocked.c) and posv's solves (solve_whole.c), device-independent.
 * Their tables, operation counts and size keys: cholesky.c; their implementations:
 * cpu/cholesky.c (LAPACKE), cuda/cholesky.c (cuSOLVER) and cuda/cholesky.cu (the diagonal
 * scans and log-sum). Buffers and arguments as blas3.h describes.
 */
#ifndef TSR_KERNELS_CHOLESKY_H
#define TSR_KERNELS_CHOLESKY_H

#include "kernels/blas3.h"

/** potrf: buffers {A (RW), n x n}. Factors the `uplo` triangle. Returns 0, or
 *  `offset` + j (1-based j within the tile) for the first non-positive or NaN pivot. */
typedef struct {
  tessera_dtype_t dtype;
  char uplo; /* 'L' or 'U' */
  int n;
  int64_t offset; /* global index of the tile's first row, for the returned info */
  int math;       /* tsr_math_t of the products within the tile (GPUs: recursive halving) */
} tsr_potrf_args_t;

/** trtri: buffers {A (RW), n x n}. Inverts the `uplo` triangle in place (with diag 'U' the
 *  diagonal is not referenced; the CUDA implementation may overwrite it). Returns 0, or
 *  `offset` + j for the first exactly-zero diagonal entry (LAPACK's info; the CUDA implementation
 *  leaves the tile undefined then, where LAPACK leaves it as it was). */
typedef struct {
  tessera_dtype_t dtype;
  char uplo, diag;
  int n;
  int64_t offset;
} tsr_trtri_args_t;

/** lauum: buffers {A (RW), n x n}. Computes L^H L (uplo 'L') or U U^H (uplo 'U') in place on
 *  the `uplo` triangle. */
typedef struct {
  tessera_dtype_t dtype;
  char uplo;
  int n;
} tsr_lauum_args_t;

/** logdiag: buffers {A (R), n x n}. Writes Σ log |Re a_ii| over the tile's diagonal into the
 *  host double `*out` (the log-determinant's share of a Cholesky factor's diagonal tile). */
typedef struct {
  tessera_dtype_t dtype;
  int n;
  double *out;
} tsr_logdiag_args_t;

/** posv: buffers {A (RW), B (RW), info (W)[, logdet (W)]}. A whole solve on one device, never
 *  run as a task: tessera_queue_posv's, ordered on ex->stream with nothing read back to the
 *  host. The Cholesky factorization of A's `uplo` triangle (n x n) in place, its info in the int
 *  `info` (potrf's: the order of the first minor not positive definite, or of the first NaN
 *  pivot before it), with `logdet` 2 Σ log Re a_jj over the factor's diagonal; then the two
 *  triangular solves of A X = B (side 'L', B n x nrhs) or X A = B (side 'R', B nrhs x n) onto B.
 *  When info > 0, B and the log det are undefined. With batch > 1, the same on `batch` systems:
 *  system i's A and B stride_a and stride_b elements after the buffers', its info and log det
 *  the i-th of theirs. */
typedef struct {
  tessera_dtype_t dtype;
  char uplo, side;
  int n, nrhs;
  int batch;
  int64_t stride_a, stride_b;
} tsr_posv_args_t;

/** The kernels (cholesky.c). */
extern const tessera_kernel_t tsr_kernel_potrf;
extern const tessera_kernel_t tsr_kernel_trtri;
extern const tessera_kernel_t tsr_kernel_lauum;
extern const tessera_kernel_t tsr_kernel_logdiag;
extern const tessera_kernel_t tsr_kernel_posv;

/** potrf (tsr_potrf_args_t) by recursive halving onto `leaf_fn` (a potrf of order <= leaf on a
 *  diagonal block, its args' offset that of the block: it returns the info, or leaves a failed
 *  pivot NaN for the caller's scan), `trsm` and `herk` (a tsr_syrk_args_t kernel) and `gemm`,
 *  the products in the args' math. Stops at the first leaf returning non-zero. */
int tsr_potrf_blocked(const tessera_exec_t *ex, const tsr_potrf_args_t *a,
                      tessera_kernel_fn leaf_fn, tessera_kernel_fn trsm, tessera_kernel_fn herk,
                      tessera_kernel_fn gemm, int leaf);
/** trtri by recursive halving onto `leaf_fn` (a trtri of order <= leaf, its info ignored) and
 *  `trmm`; the caller reports the info. */
int tsr_trtri_blocked(const tessera_exec_t *ex, const tsr_trtri_args_t *a,
                      tessera_kernel_fn leaf_fn, tessera_kernel_fn trmm, int leaf);
/** lauum by recursive halving onto `leaf_fn` (a lauum of order <= leaf), `herk` (a
 *  tsr_syrk_args_t kernel) and `trmm`. */
int tsr_lauum_blocked(const tessera_exec_t *ex, const tsr_lauum_args_t *a,
                      tessera_kernel_fn leaf_fn, tessera_kernel_fn herk, tessera_kernel_fn trmm,
                      int leaf);
/** The solves of posv (tsr_posv_args_t) once A holds its Cholesky factor: two calls of the
 *  device kind's `trsm` on buffers 0 and 1 of ex (solve_whole.c). */
int tsr_potrs_whole(const tessera_exec_t *ex, const tsr_posv_args_t *a, tessera_kernel_fn trsm);
/** The trsm arguments of those two solves (`second`: the second's), for one system. */
tsr_trsm_args_t tsr_potrs_whole_step(const tsr_posv_args_t *a, int second);
/** ex's buffers moved to system i of a's batch (solve_whole.c). */
tessera_exec_t tsr_posv_member(const tessera_exec_t *ex, const tsr_posv_args_t *a, int i);

/* CPU implementations (cpu/cholesky.c). */
int tsr_cpu_potrf(const tessera_exec_t *ex, void *args);
int tsr_cpu_trtri(const tessera_exec_t *ex, void *args);
int tsr_cpu_lauum(const tessera_exec_t *ex, void *args);
int tsr_cpu_logdiag(const tessera_exec_t *ex, void *args);
int tsr_cpu_posv(const tessera_exec_t *ex, void *args);

#ifdef TESSERA_HAVE_CUDA
/* CUDA implementations (cuda/cholesky.c): enqueue on ex->stream with the handles in
 * ex->scratch (tessera_cuda_scratch_t); library info goes to ex->async. */
int tsr_cuda_potrf(const tessera_exec_t *ex, void *args);
int tsr_cuda_trtri(const tessera_exec_t *ex, void *args);
int tsr_cuda_lauum(const tessera_exec_t *ex, void *args);
int tsr_cuda_logdiag(const tessera_exec_t *ex, void *args);
int tsr_cuda_posv(const tessera_exec_t *ex, void *args);
#endif

#endif
