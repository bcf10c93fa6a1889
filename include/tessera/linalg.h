/* tessera — dense linear algebra.
 *
 * Two levels:
 *  - LAPACK-style calls on a column-major array in host memory: tessera_potrf(ctx, uplo,
 *    dtype, n, a, lda) and friends. The array is tiled in place (tile size
 *    tessera_tile_for(ctx, n)) and holds the result on return.
 *  - Tile-level calls on matrix descriptors (tessera/matrix.h) that stay resident across calls:
 *    tessera_tile_potrf(uplo, A) and friends.
 *
 * All four dtypes go through one code path. Scalars (alpha, beta) point to one value of the
 * matrices' dtype (float, double, float complex, double complex), except herk's, which are
 * real and given as double. Every call waits for its tasks and returns 0, LAPACK's info (> 0),
 * or a negative status: -i for an invalid argument i (counting from 1, the context or first
 * descriptor included), <= TESSERA_ERR_BASE for a runtime failure; tessera_last_error() says why.
 * Calls on one context must not be made from several threads at once.
 */
#ifndef TESSERA_LINALG_H
#define TESSERA_LINALG_H

#include "tessera/matrix.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- tile sizes */

/** Tile size LAPACK-style calls use when no size is known: the configured one
 *  (tessera_config_t.tile_size, TESSERA_TILE), else a per-device default (2048 with GPUs, 320 on
 *  CPUs). Thread safe. */
TESSERA_API int tessera_default_tile(const tessera_context_t *ctx);

/** Tile size LAPACK-style calls use on a matrix of order `n`: the configured one, else chosen
 *  from n and the workers: about n / (4 ceil(sqrt(workers))) within [128, 1024] (enough tiles to
 *  keep every worker busy, as large as that allows); with GPUs and n >= 8192, n / (2 GPUs)
 *  within [512, 2048]. Thread safe. */
TESSERA_API int tessera_tile_for(const tessera_context_t *ctx, int64_t n);

/** Panel width LAPACK-style LU calls (getrf, getrs, gesv) use on an m x n matrix: the
 *  configured tile size, else with GPUs and min(m, n) >= 8192 tessera_tile_for's choice, else
 *  about min(m, n) / (8 workers) within [128, 512] (column panels: enough of them for every
 *  worker while one factors the next panel). Thread safe. */
TESSERA_API int tessera_tile_for_lu(const tessera_context_t *ctx, int64_t m, int64_t n);

/** Panel width of QR (geqrf, unmqr, ungqr, gels) on an m x n matrix: the configured tile size,
 *  else with GPUs tessera_tile_for_lu's width up to 1024 (n itself for a tall matrix, m >= 16 n
 *  and n <= 1024: one panel, which GPUs factor by CholeskyQR2 where accurate), else on CPUs
 * tessera_tile_for_lu's width up to n / 8 (at least 32: a panel is factored by one worker, so a
 * tall matrix needs several). The width of LAPACK-style QR calls' panels, and a good one for the
 * column panels of a descriptor given to tessera_tile_geqrf. Thread safe. */
TESSERA_API int tessera_tile_for_qr(const tessera_context_t *ctx, int64_t m, int64_t n);

/** Tile size of the Hermitian eigensolver (syevd, heevd) on a matrix of order n, which is also
 *  the bandwidth of its first stage: the configured tile size, else 128 (the band's bulge
 *  chasing costs grow with it, the products of the other stages shrink without it), or for
 *  values alone (`job` TESSERA_VALUES) of a `dtype` matrix that the GPUs solve 64 (96 from
 *  n = 24576); at most n.
 *  Thread safe. */
TESSERA_API int tessera_tile_for_eig(tessera_context_t *ctx, tessera_job_t job,
                                     tessera_dtype_t dtype, int64_t n);

/** Tile size of the polar decomposition (gepolar) of an m x n matrix: the configured tile size,
 *  else with accelerators n / (4 x their count) in multiples of 256 within [512, 2048] (its
 *  steps are all products of n-wide operands: worth the GPUs at every order), without them
 *  tessera_tile_for's. Thread safe. */
TESSERA_API int tessera_tile_for_polar(const tessera_context_t *ctx, int64_t m, int64_t n);

/** Tile size (LU: panel width when `lu` is nonzero) for a matrix of order n that already lives on
 *  `ndev` of the context's devices, dealt by rows or columns (resident descriptors, the JAX
 *  binding's shards): the configured tile size, else on a context without accelerators
 *  tessera_tile_for's choice; on GPUs the whole matrix as one tile on one device up to
 *  TESSERA_ONE_TILE_MAX (LU: TESSERA_ONE_PANEL_MAX), where the chain of a factorization's steps
 *  outweighs what tiles overlap, else one tile per device's share within [256, 2048] (a GPU's
 *  gemm runs near its peak from 2048 on). 1 for n < 1 or ndev < 1. Thread safe. */
TESSERA_API int tessera_tile_for_devices(const tessera_context_t *ctx, int64_t n, int ndev, int lu);
/** Largest order factored as one tile on one GPU (tessera_tile_for_devices). */
#define TESSERA_ONE_TILE_MAX 16384
/** Largest order LU factors as one panel on one GPU (tessera_tile_for_devices). */
#define TESSERA_ONE_PANEL_MAX 4096

/* ---------------------------------------------------------------- LAPACK-style calls */

/** Cholesky factorization A = L Lᴴ (uplo LOWER) or A = Uᴴ U (UPPER) of the Hermitian positive
 *  definite n x n matrix `a`; only the `uplo` triangle is read and overwritten.
 *  Returns 0, or i > 0 when the leading minor of order i is not positive definite (or holds NaN).
 */
TESSERA_API int tessera_potrf(tessera_context_t *ctx, tessera_uplo_t uplo, tessera_dtype_t dtype,
                              int64_t n, void *a, int64_t lda);

/** Solves A X = B with the factor from tessera_potrf; B (n x nrhs) is overwritten by X. */
TESSERA_API int tessera_potrs(tessera_context_t *ctx, tessera_uplo_t uplo, tessera_dtype_t dtype,
                              int64_t n, int64_t nrhs, const void *a, int64_t lda, void *b,
                              int64_t ldb);

/** Factors A (as tessera_potrf) and solves A X = B (as tessera_potrs). */
TESSERA_API int tessera_posv(tessera_context_t *ctx, tessera_uplo_t uplo, tessera_dtype_t dtype,
                             int64_t n, int64_t nrhs, void *a, int64_t lda, void *b, int64_t ldb);

/** The precision a mixed-precision solve factors A in. */
typedef enum {
  TESSERA_FACTOR_AUTO = 0,    /**< chosen by the call: on CPUs alone SINGLE for f64 and c128;
                                   with GPUs HALF for posv from order 16384 and SINGLE for gesv
                                   of f64 and c128 from 32768; else WORKING */
  TESSERA_FACTOR_WORKING = 1, /**< A's own dtype: the plain solve, no refinement */
  TESSERA_FACTOR_SINGLE = 2,  /**< f32 (c64 for c128), refined to A's precision; on GPUs an f32
                                   LU's products run on tensor cores as three TF32 products of
                                   split operands (hi + lo) */
  TESSERA_FACTOR_TF32 = 3,    /**< held in single precision, its products on GPU tensor cores on
                                   inputs rounded to TF32 (f32 accumulation); needs GPUs */
  TESSERA_FACTOR_BF16 = 4,    /**< the same on BF16 inputs */
  TESSERA_FACTOR_HALF = 5,    /**< the same on FP16 inputs, A scaled by a power of two into
                                   FP16's range first */
} tessera_factor_t;

/** Options of the mixed-precision solves (tessera_mixed_options_init sets the defaults). */
typedef struct {
  tessera_factor_t factor; /**< the factor's precision (default AUTO) */
  int max_iter;            /**< refinement steps before the working-precision fallback (30) */
  int gmres; /**< 0: classical refinement, GMRES-IR from where it stalls (default); 1: GMRES-IR
                  from the start; -1: classical refinement only */
  tessera_op_t trans; /**< gesv_mixed: op(A) X = B, as getrs's trans (default NOTRANS); the
                           Cholesky solves take NOTRANS only */
} tessera_mixed_options_t;

/** What a mixed-precision solve did. */
typedef struct {
  tessera_factor_t factor; /**< the precision A was factored in (WORKING after a fallback) */
  int iter;                /**< refinement steps run; negative where the working-precision solve ran
                                instead, as LAPACK's dsposv says: -2 A overflows the factor's precision,
                                -3 the factor's Cholesky broke down, -31 the refinement did not converge
                                within max_iter steps */
  int gmres_steps; /**< GMRES iterations within those steps (0: classical refinement only) */
} tessera_mixed_result_t;

/** Sets the defaults of `opts`. */
TESSERA_API void tessera_mixed_options_init(tessera_mixed_options_t *opts);

/** Solves A X = B (A Hermitian positive definite in its `uplo` triangle, n x n; B and X
 *  n x nrhs) as LAPACK's dsposv / zcposv: A factored in the lower precision of opts (NULL: the
 *  defaults), X refined in A's precision until every column's residual meets
 *  ‖b − A x‖∞ ≤ ‖x‖∞ ‖A‖∞ ε √n; classical refinement, and GMRES preconditioned by the low
 *  precision factors (GMRES-IR) where classical refinement stalls. Where the factor breaks down
 *  or the refinement does not converge, the working-precision posv runs instead, and `res` says
 *  so; so it does for a WORKING factor. A then holds its factor, as dsposv leaves it; else A is
 *  unchanged. B is never written. res (may be NULL) receives the precision used and the steps.
 *  On a context over processes a collective call, the arrays on process 0 (dealt over the grid,
 *  the tile-level solve run distributed). Returns 0, i > 0 when A is not positive definite in
 *  its own precision (its leading minor of order i), or a negative status. */
TESSERA_API int tessera_posv_mixed(tessera_context_t *ctx, tessera_uplo_t uplo,
                                   tessera_dtype_t dtype, int64_t n, int64_t nrhs, void *a,
                                   int64_t lda, const void *b, int64_t ldb, void *x, int64_t ldx,
                                   const tessera_mixed_options_t *opts,
                                   tessera_mixed_result_t *res);

/** Solves A X = B for the general n x n A as LAPACK's dsgesv / zcgesv, the way
 *  tessera_posv_mixed solves a Hermitian one: A factored by LU with partial pivoting in the lower
 *  precision of opts, X refined in A's precision (classical, then GMRES-IR), the
 *  working-precision gesv where the factor breaks down (a zero pivot) or the refinement does not
 *  converge, with dsgesv's codes in res. ipiv (n) receives the pivots of the factor used. A is
 *  unchanged unless the working-precision gesv ran (then it holds its factors); B is never
 *  written. Over processes as tessera_posv_mixed. Returns 0, i > 0 when U(i, i) of the
 *  working-precision factor is exactly zero, or a negative status. */
TESSERA_API int tessera_gesv_mixed(tessera_context_t *ctx, tessera_dtype_t dtype, int64_t n,
                                   int64_t nrhs, void *a, int64_t lda, int *ipiv, const void *b,
                                   int64_t ldb, void *x, int64_t ldx,
                                   const tessera_mixed_options_t *opts,
                                   tessera_mixed_result_t *res);

/** Inverse of A from its Cholesky factor (as left by tessera_potrf): the `uplo` triangle of
 *  `a` is overwritten by that triangle of A⁻¹. Returns 0, or i > 0 when the factor's diagonal
 *  entry i is zero. */
TESSERA_API int tessera_potri(tessera_context_t *ctx, tessera_uplo_t uplo, tessera_dtype_t dtype,
                              int64_t n, void *a, int64_t lda);

/** log det A = 2 Σ log |L_ii| from the Cholesky factor left by tessera_potrf. */
TESSERA_API int tessera_logdet(tessera_context_t *ctx, tessera_uplo_t uplo, tessera_dtype_t dtype,
                               int64_t n, const void *a, int64_t lda, double *logdet);

/** Triangular solve with many right-hand sides: op(A) X = alpha B (side LEFT, A is m x m) or
 *  X op(A) = alpha B (side RIGHT, A is n x n); B (m x n) is overwritten by X. */
TESSERA_API int tessera_trsm(tessera_context_t *ctx, tessera_side_t side, tessera_uplo_t uplo,
                             tessera_op_t transa, tessera_diag_t diag, tessera_dtype_t dtype,
                             int64_t m, int64_t n, const void *alpha, const void *a, int64_t lda,
                             void *b, int64_t ldb);

/** Symmetric rank-k update C = alpha op(A) op(A)ᵀ + beta C on the `uplo` triangle of the
 *  n x n matrix C; op(A) is n x k (trans NOTRANS) or A is k x n (TRANS). */
TESSERA_API int tessera_syrk(tessera_context_t *ctx, tessera_uplo_t uplo, tessera_op_t trans,
                             tessera_dtype_t dtype, int64_t n, int64_t k, const void *alpha,
                             const void *a, int64_t lda, const void *beta, void *c, int64_t ldc);

/** Hermitian rank-k update C = alpha op(A) op(A)ᴴ + beta C, alpha and beta real (CONJTRANS
 *  for the transposed form; for real dtypes this is syrk). */
TESSERA_API int tessera_herk(tessera_context_t *ctx, tessera_uplo_t uplo, tessera_op_t trans,
                             tessera_dtype_t dtype, int64_t n, int64_t k, double alpha,
                             const void *a, int64_t lda, double beta, void *c, int64_t ldc);

/** General product C = alpha op(A) op(B) + beta C, C m x n, op(A) m x k, op(B) k x n. */
TESSERA_API int tessera_gemm(tessera_context_t *ctx, tessera_op_t transa, tessera_op_t transb,
                             tessera_dtype_t dtype, int64_t m, int64_t n, int64_t k,
                             const void *alpha, const void *a, int64_t lda, const void *b,
                             int64_t ldb, const void *beta, void *c, int64_t ldc);

/** LU factorization with partial pivoting P A = L U of the m x n matrix `a` (LAPACK's getrf):
 *  L unit lower trapezoidal (its unit diagonal not stored) and U upper trapezoidal overwrite
 *  `a`; for i < min(m, n), row i + 1 was interchanged with row ipiv[i] (1-based, LAPACK's
 *  convention). Returns 0, or i > 0 when U(i, i) is exactly zero or column i is the first of
 *  the factored columns to hold a NaN: the factorization is completed either way, as LAPACK
 *  completes it, but a solve with it would divide by zero. */
TESSERA_API int tessera_getrf(tessera_context_t *ctx, tessera_dtype_t dtype, int64_t m, int64_t n,
                              void *a, int64_t lda, int *ipiv);

/** Solves op(A) X = B (trans NOTRANS, TRANS or CONJTRANS) with the n x n factors and pivots
 *  from tessera_getrf; B (n x nrhs) is overwritten by X. Every ipiv[i] must lie in [i + 1, n],
 *  as getrf leaves it. On a context over processes (as every LAPACK-style call) the arrays,
 *  ipiv included, are process 0's (NULL elsewhere); the factorization runs on column panels
 *  dealt over every process. */
TESSERA_API int tessera_getrs(tessera_context_t *ctx, tessera_op_t trans, tessera_dtype_t dtype,
                              int64_t n, int64_t nrhs, const void *a, int64_t lda, const int *ipiv,
                              void *b, int64_t ldb);

/** Factors the n x n A (as tessera_getrf) and solves A X = B (as tessera_getrs). When the
 *  factorization returns info > 0, B is left as it was (LAPACK's gesv). */
TESSERA_API int tessera_gesv(tessera_context_t *ctx, tessera_dtype_t dtype, int64_t n, int64_t nrhs,
                             void *a, int64_t lda, int *ipiv, void *b, int64_t ldb);

/** Householder QR factorization A = Q R of the m x n A (column-major, lda >= max(1, m)), as
 *  LAPACK's geqrf: R (min(m, n) x n, upper trapezoidal) on and above the diagonal, and below it
 *  the vectors of the reflectors Q = H_1 H_2 ... H_k, k = min(m, n), H_i = I - tau_i v_i v_iᴴ
 *  (v_i(i) = 1 not stored, v_i(1 .. i - 1) = 0), tau (k elements of the dtype). LAPACK's
 *  orgqr / ungqr and ormqr / unmqr take the result as it is. Runs on column panels of
 *  tessera_tile_for_lu's width: each panel's factorization (LAPACK's geqrt) on a CPU worker, the
 *  updates of the panels to its right (two products with its vectors) on every device. On a
 *  context over processes the arrays are process 0's (NULL elsewhere, tau too), dealt over the
 *  grid for the call. Returns 0 or a negative status: QR has no info. */
TESSERA_API int tessera_geqrf(tessera_context_t *ctx, tessera_dtype_t dtype, int64_t m, int64_t n,
                              void *a, int64_t lda, void *tau);

/** C = op(Q) C (side LEFT, C m x n, Q of order m) or C op(Q) (RIGHT, Q of order n), op NOTRANS
 *  or CONJTRANS (TRANS on real dtypes), where Q = H_1 ... H_k holds the k reflectors that
 *  tessera_geqrf (or LAPACK's geqrf) left in the columns of `a` (order x k, lda >= order) and
 *  tau: LAPACK's ormqr / unmqr. The block reflectors' T are formed from the vectors and tau
 *  (larft) for the updates, each a column-panel task; from the right, through Cᴴ. On a context
 *  over processes the arrays are process 0's (NULL elsewhere). Returns 0 or a negative status. */
TESSERA_API int tessera_unmqr(tessera_context_t *ctx, tessera_side_t side, tessera_op_t trans,
                              tessera_dtype_t dtype, int64_t m, int64_t n, int64_t k, const void *a,
                              int64_t lda, const void *tau, void *c, int64_t ldc);

/** The first n columns of Q = H_1 ... H_k (m >= n >= k) from the reflectors in the first k
 *  columns of `a` and tau (as geqrf leaves them), into `a`: LAPACK's orgqr / ungqr. On a context
 *  over processes the arrays are process 0's (NULL elsewhere). Returns 0 or a negative status. */
TESSERA_API int tessera_ungqr(tessera_context_t *ctx, tessera_dtype_t dtype, int64_t m, int64_t n,
                              int64_t k, void *a, int64_t lda, const void *tau);

/** Least squares with the m x n A of full rank and nrhs right-hand sides B (ldb >= max(1, m, n)),
 *  as LAPACK's gels with trans NOTRANS: for m >= n, x minimizes ‖A x - b‖ (A = Q R by geqrf, A
 *  overwritten by it; x = R⁻¹ (Qᴴ b) in B's first n rows); for m < n, x is the minimum norm
 *  solution of A x = b (Aᴴ = Q R on a copy, A untouched; x = Q [R⁻ᴴ b; 0], n rows of B).
 *  Returns 0, or i > 0 when R(i, i) is exactly zero (A is not of full rank; B's first min(m, n)
 *  rows untouched), or a negative status. On a context over processes, the arrays are process
 *  0's (NULL elsewhere), dealt over the grid for the call. */
TESSERA_API int tessera_gels(tessera_context_t *ctx, tessera_dtype_t dtype, int64_t m, int64_t n,
                             int64_t nrhs, void *a, int64_t lda, void *b, int64_t ldb);

/** Eigenvalues, and with job VECTORS eigenvectors, of the Hermitian (real symmetric) n x n matrix
 *  whose `uplo` triangle `a` (lda) holds, as LAPACK's heevd / syevd, by two stages: A reduced to
 *  a band of tessera_tile_for_eig(job, dtype, n) subdiagonals by tile tasks (Householder QR of
 *  each tile column below the diagonal, two-sided updates by gemms), the band to a real
 *  tridiagonal T by bulge chasing, T's eigenvalues (and vectors) by LAPACK's stedc (sterf for
 *  VALUES), the vectors carried back through both stages. `w` receives the n eigenvalues in
 * ascending order, in the dtype's real type (float for F32 and C64, double for F64 and C128). With
 * VECTORS, `a` receives the orthonormal eigenvectors (column i for w[i]); with VALUES its `uplo`
 * triangle is destroyed. A is scaled first where its largest entry would let the reduction under-
 * or overflow, as LAPACK does. Returns 0; i > 0 when A holds a NaN or an infinity, first in column
 *  i (w and `a` are then NaN), or when the tridiagonal eigensolver failed (LAPACK's info); or a
 *  negative status. On a context over processes (a collective call) a and lda are process 0's
 *  (the others may pass NULL), which runs the stages up to T's eigenvectors on its workers and
 *  devices while the others wait; with VECTORS the back-transformations are then dealt over
 *  the processes by blocks of columns. w receives the eigenvalues on every process that gives
 *  it (NULL allowed but on process 0), and every process returns the same status and message. */
TESSERA_API int tessera_syevd(tessera_context_t *ctx, tessera_job_t job, tessera_uplo_t uplo,
                              tessera_dtype_t dtype, int64_t n, void *a, int64_t lda, void *w);
/** The host memory, in bytes, that tessera_syevd / tessera_heevd on ctx (one process) holds at
 *  most besides a and w for (job, dtype, n): the band, T and stage 1's reflectors (host tiles on
 *  CPUs, or evicted there from a full device pool), a working copy of A (not in the GPU forms
 *  with VECTORS, which work in a itself; counted for VALUES, which the GPU forms make only from
 *  an upper triangle), the bulge chasing's reflectors where they are on the host, T's
 *  eigenvectors in f64 for other dtypes. The stages' forms are decided as the call decides them
 *  on ctx's devices. For planning: returns the bytes, or a negative status for a bad argument
 *  (with a message). */
TESSERA_API double tessera_syevd_host_bytes(tessera_context_t *ctx, tessera_job_t job,
                                            tessera_dtype_t dtype, int64_t n);
/** The same as tessera_syevd (its name for complex dtypes). */
TESSERA_API int tessera_heevd(tessera_context_t *ctx, tessera_job_t job, tessera_uplo_t uplo,
                              tessera_dtype_t dtype, int64_t n, void *a, int64_t lda, void *w);
/** The eigenvalues il .. iu of the n in ascending order (1-based, LAPACK's range 'I'), and with
 *  job VECTORS their eigenvectors, of the Hermitian A that tessera_syevd takes (the same uplo, a,
 *  lda, scaling, NaN rule and info, on one process or over processes). `w` receives the
 *  k = iu - il + 1 eigenvalues; with VECTORS the first k columns of `a` receive their orthonormal
 *  eigenvectors (column i for w[i]) and its other columns are left undefined. In two stages only
 *  the k columns are carried back through both (the back-transformations cost k / n of the whole
 *  solve's); in one stage LAPACK's ?syevr / ?heevr on the CPU cores, cuSOLVER's Xsyevdx on a
 *  GPU. The method by measured cost of ranges (the context's eig_method). Requires
 *  1 <= il <= iu <= n, or il = 1 and iu = 0 (no eigenvalue) for any n. Returns as
 *  tessera_syevd; -8 / -9 for il / iu out of range, with a message. */
TESSERA_API int tessera_syevdx(tessera_context_t *ctx, tessera_job_t job, tessera_uplo_t uplo,
                               tessera_dtype_t dtype, int64_t n, void *a, int64_t lda, int64_t il,
                               int64_t iu, void *w);
/** The same as tessera_syevdx (its name for complex dtypes). */
TESSERA_API int tessera_heevdx(tessera_context_t *ctx, tessera_job_t job, tessera_uplo_t uplo,
                               tessera_dtype_t dtype, int64_t n, void *a, int64_t lda, int64_t il,
                               int64_t iu, void *w);

/** The singular value decomposition A = U Σ Vᴴ of the m x n A (column-major, lda; destroyed):
 *  the min(m, n) singular values into s (descending, the dtype's real type: float for F32 and
 *  C64), with VECTORS U's first min(m, n) columns into u (m x min(m, n), ldu) and Vᴴ's first
 *  min(m, n) rows into vt (min(m, n) x n, ldvt) — LAPACK's jobu = jobvt = 'S'; with ALL_VECTORS
 *  all of U (m x m, ldu >= m) and Vᴴ (n x n, ldvt >= n), LAPACK's jobz = 'A': the economy
 *  vectors, then an orthonormal basis of their span's complement (from a QR of them; for
 *  min(m, n) = 0 the identity); with VALUES u and vt are not read. By the polar decomposition and
 * the eigensolver (QDWH-SVD): A = U_p H (tessera_gepolar), H = V Σ Vᴴ (tessera_syevd on -H, whose
 * ascending eigenvalues are Σ descending), U = U_p V; m < n through Aᴴ. U's columns for singular
 * values below ε ‖A‖ carry U_p's (see tessera_gepolar: not orthonormal there). Returns 0; j > 0
 * when A holds a NaN or an infinity, first in column j (of Aᴴ for m < n); the eigensolver's info;
 * or a negative status. On a context over processes (a collective call) a, u and vt are process
 * 0's, s receives the values on every process that gives it (NULL allowed but on process 0). */
TESSERA_API int tessera_gesvd(tessera_context_t *ctx, tessera_job_t job, tessera_dtype_t dtype,
                              int64_t m, int64_t n, void *a, int64_t lda, void *s, void *u,
                              int64_t ldu, void *vt, int64_t ldvt);

/** The polar decomposition A = U_p H of the m x n A (column-major, lda; m >= n): U_p (m x n,
 *  orthonormal columns where A has full rank) into `a`, the Hermitian positive semidefinite H
 *  (n x n, ldh) into `h` unless h is NULL. By QDWH (the QR-based dynamically weighted Halley
 *  iteration; Nakatsukasa, Bai and Gygi 2010): A scaled by sqrt(‖A‖_1 ‖A‖_inf), then steps on
 *  the whole matrix, by QR of [sqrt(c) X; I] while the iterate's smallest singular value may be
 *  tiny and by Cholesky of I + c XᴴX after, each step the library's own tile loops (geqrf,
 *  unmqr, herk, potrf, trsm, gemm) on every device of the context; in f64 at most 6 weighted
 *  steps and one or two of Halley's (10 in all at most), then a Newton-Schulz step and
 *  H = sym(U_pᴴ A). A (numerically) rank-deficient A: its singular values below ε ‖A‖ do not
 *  reach 1, so U_p's columns there are not orthonormal; A = U_p H and H's semidefiniteness
 *  still hold. On one process whose scope holds CPUs alone the decomposition may instead go
 *  through LAPACK's SVD (A = W Σ Vᴴ, U_p = W Vᴴ, H = V Σ Vᴴ; U_p orthonormal there too) where
 *  that has measured faster (the context's svd_method). *steps (unless NULL): QDWH's steps run
 *  (0 through the SVD). Returns 0; j > 0 when A holds a NaN or an
 *  infinity, first in column j (a and h untouched); n + 1 when the iteration met a non-finite
 *  value; or a negative status. On a context
 *  over processes (a collective call) a and h are process 0's, dealt over the grid for the call
 *  and gathered back; H is computed where process 0 passes h. */
TESSERA_API int tessera_gepolar(tessera_context_t *ctx, tessera_dtype_t dtype, int64_t m, int64_t n,
                                void *a, int64_t lda, void *h, int64_t ldh, int *steps);

/* ---------------------------------------------------------------- calls on a caller's queue */

/* Solves of one matrix on one device, in the order of a queue the caller owns, for the calls
 * too small to pay for tasks, workers and waits (the JAX binding's one-device calls, ordered on
 * XLA's stream): `node` is the memory node of the device (tessera_device_info) and `queue` one
 * of that device's native queues (a cudaStream_t on a CUDA GPU), or NULL on the host node, where
 * the call runs to completion. a, b, info and logdet lie in that node's memory. The call
 * returns once the work is enqueued, without waiting for it: *info (and *logdet) are written
 * in the queue's order, the matrices too, and must be read after it. The factors, info and
 * NaN handling are those of the LAPACK-style calls; no pivots are returned. One call runs at a
 * time on a node (the calls are thread safe); calls on different queues of one device are
 * ordered one after the other on the device. Each returns 0 once enqueued, or a negative status
 * with nothing enqueued for an invalid argument (-i, counting the context) and possibly some
 * work enqueued for a runtime failure. */

/** Cholesky factorization of the n x n A's `uplo` triangle in place (as tessera_potrf), then
 *  when nrhs > 0 the solve of A X = B (side LEFT, B n x nrhs) or X A = B (side RIGHT, B
 *  nrhs x n), B overwritten by X. *info: 0, or the order of the first leading minor that is not
 *  positive definite (or of the first NaN pivot); with `logdet` (NULL: none), log det A =
 *  2 Σ log Re l_jj. When *info > 0, B and *logdet are undefined. */
TESSERA_API int tessera_queue_posv(tessera_context_t *ctx, int node, void *queue,
                                   tessera_uplo_t uplo, tessera_side_t side, tessera_dtype_t dtype,
                                   int64_t n, int64_t nrhs, void *a, int64_t lda, void *b,
                                   int64_t ldb, int *info, double *logdet);

/** tessera_queue_posv on each of `batch` systems of the same order at once (jax.vmap's batch of
 *  small systems): system i's A `stride_a` elements after a (stride_a >= lda * n), its B
 *  `stride_b` after b (at least B's ldb times its columns; any when nrhs = 0), its info
 *  info[i] and log det logdet[i]. A member whose info is not 0 leaves the others alone. On a
 *  GPU the batch runs as one batched factorization and two batched solves. */
TESSERA_API int tessera_queue_posv_batch(tessera_context_t *ctx, int node, void *queue,
                                         tessera_uplo_t uplo, tessera_side_t side,
                                         tessera_dtype_t dtype, int64_t n, int64_t nrhs,
                                         int64_t batch, void *a, int64_t lda, int64_t stride_a,
                                         void *b, int64_t ldb, int64_t stride_b, int *info,
                                         double *logdet);

/** LU factorization with partial pivoting of the n x n A in place (as tessera_getrf), then when
 *  nrhs > 0 the solve of op(A) X = B (B n x nrhs, trans NOTRANS, TRANS or CONJTRANS), B
 *  overwritten by X. *info: 0, or the first column i (1-based) with U(i, i) exactly zero or a
 *  NaN; B is then undefined. */
TESSERA_API int tessera_queue_gesv(tessera_context_t *ctx, int node, void *queue,
                                   tessera_op_t trans, tessera_dtype_t dtype, int64_t n,
                                   int64_t nrhs, void *a, int64_t lda, void *b, int64_t ldb,
                                   int *info);

/** Bytes of device workspace tessera_queue_syevd takes at order n (0 for a bad dtype or n). */
TESSERA_API size_t tessera_queue_syevd_work_bytes(tessera_dtype_t dtype, int64_t n);

/** B (n x m, leading dimension ldb) = Aᴴ, the conjugate transpose (the transpose on real
 *  dtypes) of the m x n A (lda), on the device of `node` ordered on `queue` as
 *  tessera_queue_posv; a and b in that node's memory, not overlapping. */
TESSERA_API int tessera_queue_transpose(tessera_context_t *ctx, int node, void *queue,
                                        tessera_dtype_t dtype, int64_t m, int64_t n, const void *a,
                                        int64_t lda, void *b, int64_t ldb);

/** The eigenvalues of the n x n Hermitian A (its `uplo` triangle) into w (n of A's real type:
 *  float for F32 and C64, else double) in ascending order, and with job TESSERA_VECTORS its
 *  orthonormal eigenvectors as the columns of A (else A's `uplo` triangle is destroyed), in one
 *  stage on the device of `node` ordered on `queue` as tessera_queue_posv (LAPACK's ?syevd /
 *  ?heevd on the host, cuSOLVER's syevd on a GPU). a, w, work and info lie in that node's
 *  memory. work: tessera_queue_syevd_work_bytes bytes of it, or NULL (work_bytes 0): a GPU then
 *  takes its workspace from CUDA's stream-ordered allocator, outside tessera's pools. *info: 0,
 *  or > 0 where the tridiagonal eigensolver did not converge (LAPACK's info). A holding a NaN
 *  gives NaN results, not an info. */
TESSERA_API int tessera_queue_syevd(tessera_context_t *ctx, int node, void *queue,
                                    tessera_job_t job, tessera_uplo_t uplo, tessera_dtype_t dtype,
                                    int64_t n, void *a, int64_t lda, void *w, void *work,
                                    size_t work_bytes, int *info);

/* ---------------------------------------------------------------- tile-level calls */

/** Cholesky factorization of the square matrix A in place (see tessera_potrf). */
TESSERA_API int tessera_tile_potrf(tessera_uplo_t uplo, tessera_matrix_t *A);

/** Options of a Cholesky factorization (tessera_tile_potrf_opts). */
typedef struct {
  /** Panel tiles below the first: 1 multiplied by the inverted diagonal tile (trtri once per
   *  step, then trmm: the product runs near gemm speed on GPUs, a triangular solve does not),
   *  0 solved with the diagonal tile; -1 = auto: the context's tessera_config_t.trsm_inverse
   *  (TESSERA_TRSM_INVERSE) when set, else 1 when the context's scope holds GPUs. */
  int trsm_inverse;
} tessera_potrf_options_t;

/** Fills `opts` with "auto" values. Thread safe. */
TESSERA_API void tessera_potrf_options_init(tessera_potrf_options_t *opts);

/** tessera_tile_potrf with options (NULL: automatic, as tessera_tile_potrf and every other call
 *  that factors). Returns as tessera_tile_potrf. */
TESSERA_API int tessera_tile_potrf_opts(tessera_uplo_t uplo, tessera_matrix_t *A,
                                        const tessera_potrf_options_t *opts);

/** Solves A X = B with A's Cholesky factor; B is overwritten by X. A and B share the tiling
 *  of their common dimension. */
TESSERA_API int tessera_tile_potrs(tessera_uplo_t uplo, const tessera_matrix_t *A,
                                   tessera_matrix_t *B);

/** Factors A and solves A X = B. */
TESSERA_API int tessera_tile_posv(tessera_uplo_t uplo, tessera_matrix_t *A, tessera_matrix_t *B);

/** tessera_posv_mixed on descriptors: A X = B for A (f64 or c128, also f32 with a factor on
 *  tensor cores) Hermitian positive definite in its `uplo` triangle, square tiles, wherever its
 *  tiles are (on GPUs they stay there: the factor's copy, its products and the residuals'
 *  run where A is); B (n x nrhs, A's tiling of n) is overwritten by X. The factor's precision,
 *  the refinement, the fallback and `res` as tessera_posv_mixed's: after a fallback A holds its
 *  working-precision factor (as tessera_tile_posv leaves it), else A is unchanged. A distributed
 *  A (and B over its communicator): a collective call, the factor's copy dealt as A's tiles,
 *  the residuals' products run where A's tiles are, the refinement's vectors on every process
 *  (summed over the processes after each product and solve), the same result everywhere.
 *  Returns as tessera_tile_posv. */
TESSERA_API int tessera_tile_posv_mixed(tessera_uplo_t uplo, tessera_matrix_t *A,
                                        tessera_matrix_t *B, const tessera_mixed_options_t *opts,
                                        tessera_mixed_result_t *res);

/** tessera_gesv_mixed on descriptors: A X = B for the general n x n A (f64 or c128, also f32
 *  with a factor on tensor cores), any tiling, wherever its tiles are (on GPUs the factor's copy,
 *  its products and the residuals' run where A is; column panels, tiles spanning the rows, spare
 *  the factor's copy into panels); B (n x nrhs, any tiling) is overwritten by X; ipiv (n)
 *  receives the pivots of the factor used. The factor's precision, the refinement, the fallback
 *  and `res` as tessera_gesv_mixed's: after a fallback A holds its working-precision LU factors
 *  (as tessera_tile_gesv leaves them), else A is unchanged. Over processes as
 *  tessera_tile_posv_mixed. Returns as
 *  tessera_tile_gesv. */
TESSERA_API int tessera_tile_gesv_mixed(tessera_matrix_t *A, int *ipiv, tessera_matrix_t *B,
                                        const tessera_mixed_options_t *opts,
                                        tessera_mixed_result_t *res);

/** Inverse from the Cholesky factor in place (see tessera_potri). */
TESSERA_API int tessera_tile_potri(tessera_uplo_t uplo, tessera_matrix_t *A);

/** Log-determinant from the Cholesky factor (see tessera_logdet). */
TESSERA_API int tessera_tile_logdet(tessera_uplo_t uplo, const tessera_matrix_t *A, double *logdet);

/** Triangular solve (see tessera_trsm) on descriptors. */
TESSERA_API int tessera_tile_trsm(tessera_side_t side, tessera_uplo_t uplo, tessera_op_t transa,
                                  tessera_diag_t diag, const void *alpha, const tessera_matrix_t *A,
                                  tessera_matrix_t *B);

/** Symmetric rank-k update (see tessera_syrk) on descriptors. */
TESSERA_API int tessera_tile_syrk(tessera_uplo_t uplo, tessera_op_t trans, const void *alpha,
                                  const tessera_matrix_t *A, const void *beta, tessera_matrix_t *C);

/** Hermitian rank-k update (see tessera_herk) on descriptors. */
TESSERA_API int tessera_tile_herk(tessera_uplo_t uplo, tessera_op_t trans, double alpha,
                                  const tessera_matrix_t *A, double beta, tessera_matrix_t *C);

/** B = A on the tiles both matrices hold (a matrix of one triangle, or made by
 *  tessera_matrix_fit with a part, holds only that part's tiles; diagonal tiles are copied
 *  whole): the same m x n and tile width, tiles of the same height or column panels on either
 *  side. Any two matrices of one context: of this process or distributed (over one
 *  communicator), on any layouts; a distributed copy moves each tile from its owner in A to
 *  its owner in B. Waits for the copies (and the flow before them); nothing to do where B is
 *  A.
 *  @return 0; -1 / -2 for a NULL or mismatched A / B (sizes, dtype, context, tiling), with a
 *          message; the flow's failure. Distributed: the same status on every process. */
TESSERA_API int tessera_tile_lacpy(const tessera_matrix_t *A, tessera_matrix_t *B);

/** General product (see tessera_gemm) on descriptors. */
TESSERA_API int tessera_tile_gemm(tessera_op_t transa, tessera_op_t transb, const void *alpha,
                                  const tessera_matrix_t *A, const tessera_matrix_t *B,
                                  const void *beta, tessera_matrix_t *C);

/** LU factorization with partial pivoting of A in place (see tessera_getrf); ipiv receives
 *  min(m, n) pivots. LU runs on column panels: when A's tiles span its rows (tile rows mb >= m,
 *  for example tessera_matrix_create(ctx, dtype, m, n, m, nb, &A)), each tile is a panel of nb
 *  columns, factored in place. Other tiles (square ones, as for Cholesky) are copied into
 *  panels of their width for the call and back after it: the call then holds the matrix twice.
 *  A distributed A (tessera_matrix_create_distributed) has its panels dealt by the first row of
 *  its grid when its tiles span the rows, so a 1 x P grid spreads them over all P processes;
 *  its copy in panels, for other tiles, is dealt over all processes. Every process makes the
 *  call and receives the whole ipiv. Returns as tessera_getrf (the same on every process), or a
 *  negative status with a message. */
TESSERA_API int tessera_tile_getrf(tessera_matrix_t *A, int *ipiv);

/** Solves op(A) X = B with the factors and pivots from tessera_tile_getrf (see tessera_getrs).
 *  A and B are tiled as tessera_tile_getrf takes A (B with any tile width; each copied into
 *  panels for the call where its tiles do not span its rows); distributed, B is distributed
 *  over the same communicator and every process passes the same ipiv (compared across them). */
TESSERA_API int tessera_tile_getrs(tessera_op_t trans, const tessera_matrix_t *A, const int *ipiv,
                                   tessera_matrix_t *B);

/** Householder QR of the m x n A in place (see tessera_geqrf): R on and above the diagonal, the
 *  vectors below it, tau (min(m, n) elements of A's dtype, host memory) as LAPACK's. Any tiling
 *  (QR runs on column panels: A itself when its tiles span its rows, else a copy, distributed
 *  over a 1 x P grid when A is). Over processes (a collective call), each process runs the
 *  tasks writing its panels and every process gets the whole tau. */
TESSERA_API int tessera_tile_geqrf(tessera_matrix_t *A, void *tau);

/** Eigenvalues, and with job VECTORS eigenvectors, of the Hermitian n x n A whose `uplo`
 *  triangle the descriptor holds (any tiling), as tessera_syevd: w receives the eigenvalues in
 *  ascending order (the dtype's real type), A the eigenvectors with VECTORS (its triangle is
 *  left as it was with VALUES). Where the method is one stage on an accelerator (the context's
 *  eig_method, or by cost), A's tiles are copied by tasks into one array in its memory and back;
 *  in two stages A goes through a host copy. Returns 0, info > 0 as tessera_syevd (A then NaN), or
 * a negative status. A distributed A: a collective call over its processes, A collected on process
 * 0 and solved as tessera_syevd over processes does, the eigenvectors dealt back into its tiles; w
 * (on every process) receives the eigenvalues. */
TESSERA_API int tessera_tile_syevd(tessera_job_t job, tessera_uplo_t uplo, tessera_matrix_t *A,
                                   void *w);

/** The polar decomposition A = U_p H (see tessera_gepolar) of the m x n descriptor A (m >= n,
 *  square tiles): U_p into A, H into H (n x n, A's tiles and communicator) unless H is NULL.
 *  The iteration's matrices (two of A's size, one of H's, two column-panel matrices of
 *  (m + n) x n) follow A's distribution; over processes, a collective call. Returns as
 *  tessera_gepolar. */
TESSERA_API int tessera_tile_gepolar(tessera_matrix_t *A, tessera_matrix_t *H, int *steps);

/** The singular value decomposition (see tessera_gesvd) of the m x n descriptor A (square
 *  tiles; destroyed): s on every process, with VECTORS U (m x min(m, n)) and VT (min(m, n) x n)
 *  of A's tiles and communicator; for m >= n, U may be A itself (U then overwrites A). job is
 *  VALUES or VECTORS (every vector, ALL_VECTORS, is tessera_gesvd's). Over processes, a
 *  collective call. */
TESSERA_API int tessera_tile_gesvd(tessera_job_t job, tessera_matrix_t *A, void *s,
                                   tessera_matrix_t *U, tessera_matrix_t *VT);

/** C = op(Q) C (side LEFT, C with A's m rows) or C op(Q) (RIGHT, C with m columns); op NOTRANS,
 *  or CONJTRANS / TRANS on real dtypes; Q is the one whose min(m, n) reflectors
 *  tessera_tile_geqrf left in A (m x n) and `tau`. Any tilings (column panels, or copies in
 *  them; from the right through a copy of Cᴴ); over processes, a collective call. */
TESSERA_API int tessera_tile_unmqr(tessera_side_t side, tessera_op_t trans,
                                   const tessera_matrix_t *A, const void *tau, tessera_matrix_t *C);

/** Least squares (see tessera_gels) with B of max(m, n) rows and nrhs columns. m >= n: min
 *  ‖A X - B‖ for A of full rank, A overwritten by its QR, X in B's first n rows. m < n: the
 *  minimum norm solution of A X = B(1 .. m) through the QR of a copy of Aᴴ (A left as it was),
 *  X in B's n rows. Returns 0, i > 0 when R(i, i) is exactly zero (B untouched), or a negative
 *  status; over processes, a collective call. */
TESSERA_API int tessera_tile_gels(tessera_matrix_t *A, tessera_matrix_t *B);

/** The first n columns of Q (LAPACK's ungqr / orgqr) into A (m x n, n <= m), whose first k
 *  columns hold the reflectors tessera_tile_geqrf left, with their `tau` (k elements): Q
 *  applied to the identity's first n columns. Any tiling; over processes, a collective call.
 *  Returns 0 or a negative status. */
TESSERA_API int tessera_tile_ungqr(tessera_matrix_t *A, int64_t k, const void *tau);

/** Factors A and solves A X = B (see tessera_gesv). */
TESSERA_API int tessera_tile_gesv(tessera_matrix_t *A, int *ipiv, tessera_matrix_t *B);

/** Row interchanges as LAPACK's laswp on the matrix A (tiled as tessera_tile_getrf takes it): for i
 * = k1 .. k2 (1-based; incx 1) or k2 .. k1 (incx -1), row i is interchanged with row ipiv[i - 1]
 * (in [1, m]). */
TESSERA_API int tessera_tile_laswp(tessera_matrix_t *A, int64_t k1, int64_t k2, const int *ipiv,
                                   int incx);

#ifdef __cplusplus
}
#endif
#endif
