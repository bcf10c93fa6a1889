/* Tile kernels: one tile operation, all four dtypes, one implementation per device kind.
 *
 * Each kernel below is a tessera_kernel_t whose implementations receive the task's buffers in
 * the order documented next to its argument struct, and the struct itself as `args`. Tiles are
 * column-major with the leading dimension given in tessera_exec_t.ld[]. Scalars are carried
 * as tsr_scalar_t and converted to the dtype inside the kernel.
 */
#ifndef TSR_KERNELS_H
#define TSR_KERNELS_H

#include "kernels/cpu/laed.h"
#include "kernels/dtype.h"
#include "tessera/task.h"

/** Right-hand sides up to which a triangular solve is memory bound: trsm kernels take it whole
 *  (no recursive halving onto gemm), the CUDA one as one trsv call per right-hand side. */
#define TSR_TRSM_NARROW 4

/** The arithmetic of a single-precision product on a GPU: the dtype's own, or tensor cores on
 *  inputs rounded to TF32, BF16 or FP16, accumulated in f32 (cuBLAS's fast compute types), or
 *  TF32X3: on TF32 tensor cores in three products of split operands, x = hi + lo each rounded to
 *  TF32, hi·hi + lo·hi + hi·lo (the operands' f32 bits kept; the sums those of the tensor cores'
 *  f32 accumulation). CPUs and simulated devices compute in the dtype's own. */
typedef enum {
  TSR_MATH_OWN = 0,
  TSR_MATH_TF32,
  TSR_MATH_BF16,
  TSR_MATH_F16,
  TSR_MATH_TF32X3
} tsr_math_t;

/** potrf: buffers {A (RW), n x n}. Factors the `uplo` triangle. Returns 0, or
 *  `offset` + j (1-based j within the tile) for the first non-positive or NaN pivot. */
typedef struct {
  tessera_dtype_t dtype;
  char uplo; /* 'L' or 'U' */
  int n;
  int64_t offset; /* global index of the tile's first row, for the returned info */
  int math;       /* tsr_math_t of the products within the tile (GPUs: recursive halving) */
} tsr_potrf_args_t;

/** trsm: buffers {A (R), B (RW)}. B = alpha op(A)^-1 B (side 'L', A m x m) or
 *  B = alpha B op(A)^-1 (side 'R', A n x n); B is m x n. */
typedef struct {
  tessera_dtype_t dtype;
  char side, uplo, trans, diag;
  int m, n;
  tsr_scalar_t alpha;
  int math; /* tsr_math_t of the products of a solve by recursive halving */
} tsr_trsm_args_t;

/** syrk / herk: buffers {A (R), C (RW)}. C = alpha op(A) op(A)^T (or ^H when herk) + beta C on
 *  the `uplo` triangle of the n x n C; op(A) is n x k ('N') or A is k x n ('T' / 'C').
 *  herk: alpha and beta real (imaginary parts ignored). */
typedef struct {
  tessera_dtype_t dtype;
  char uplo, trans;
  int herk; /* 1: Hermitian (conjugate) update; 0: symmetric */
  int n, k;
  tsr_scalar_t alpha, beta;
  int math; /* tsr_math_t; with tensor cores the whole n x n tile is written */
} tsr_syrk_args_t;

/** gemm: buffers {A (R), B (R), C (RW)}. C = alpha op(A) op(B) + beta C; C m x n, op(A) m x k,
 *  op(B) k x n; trans in 'N', 'T', 'C'. */
typedef struct {
  tessera_dtype_t dtype;
  char transa, transb;
  int m, n, k;
  tsr_scalar_t alpha, beta;
  int math; /* tsr_math_t */
} tsr_gemm_args_t;

/** hemm: buffers {A (R) m x m, B (R) m x n, C (RW) m x n}. C = alpha A B + beta C for A
 *  Hermitian (symmetric for real dtypes) stored in its `uplo` triangle ('L' or 'U'): a diagonal
 *  tile's product, read from the stored triangle. */
typedef struct {
  tessera_dtype_t dtype;
  char uplo;
  int m, n;
  tsr_scalar_t alpha, beta;
} tsr_hemm_args_t;

/** hemm_pair: buffers {S (R) r x c, Xc (R) c x k, Xr (R) r x k, Yr (RW) r x k, Yc (RW) c x k}.
 *  Yr += alpha S Xc and Yc += alpha Sᴴ Xr: the two products of an off-diagonal tile of a
 *  Hermitian matrix stored in one triangle, from one pass over S. */
typedef struct {
  tessera_dtype_t dtype;
  int r, c, k;
  tsr_scalar_t alpha;
} tsr_hemm_pair_args_t;

/** geadd: buffers {A (R), C (RW)}. C = alpha A + beta C, both m x n. */
typedef struct {
  tessera_dtype_t dtype;
  int m, n;
  tsr_scalar_t alpha, beta;
} tsr_geadd_args_t;

/** lacpy: buffers {src (R), dst (W, or RW when the copy fills part of it)}. Copies the m x n
 *  block of src starting at (src_row, src_col) into dst at row dst_row. */
typedef struct {
  tessera_dtype_t dtype;
  int m, n;
  int src_row, dst_row;
  int src_col;
} tsr_lacpy_args_t;

/** convert: buffers {src (R) of dtype `from`, m x n; dst (W, or RW when the block is part of
 *  it) of dtype `to`}. dst's m x n block at (dst_row, dst_col) = scale src in `to`'s precision
 *  (rounded to nearest, or exact when widening); the pair is of one kind (real or complex,
 *  tsr_convert_pair). */
typedef struct {
  tessera_dtype_t from, to;
  int m, n;
  double scale; /* dst = scale src (a power of two keeps the rounding that of src alone) */
  int dst_row, dst_col;
} tsr_convert_args_t;

/** absum: buffers {A (R) m x n, rows (RW) m doubles, cols (RW) n doubles, absent with `part`}.
 *  rows[i] += Σ_j |a_ij| and cols[j] += Σ_i |a_ij| (part 0); rows alone (part 'G'); or for a
 *  Hermitian diagonal tile (m = n) stored in its `part` triangle ('L' or 'U'), rows[i] += the
 *  sum of row i of the whole Hermitian tile. |z| is the modulus for complex dtypes. */
typedef struct {
  tessera_dtype_t dtype;
  int m, n;
  char part;
} tsr_absum_args_t;

/** Whether an absum part names a Hermitian tile's stored triangle. */
static inline bool tsr_absum_hermitian(char part) {
  return part == 'L' || part == 'U';
}

/** Whether convert takes the pair (from, to): both valid and of one kind. */
static inline bool tsr_convert_pair(tessera_dtype_t from, tessera_dtype_t to) {
  return tsr_dtype_valid(from) && tsr_dtype_valid(to) &&
         tsr_dtype_complex(from) == tsr_dtype_complex(to);
}

/** transpose: buffers {A (R), B (W, or RW when the copy fills part of it)}. The conjugate
 *  transpose (the transpose on real dtypes) of A's m x n block at (src_row, src_col) into B's
 *  n x m block at (dst_row, dst_col). */
typedef struct {
  tessera_dtype_t dtype;
  int m, n;
  int src_row, src_col, dst_row, dst_col;
} tsr_transpose_args_t;

/** identity: buffers {A (W, or RW when the block is part of it)}. A's m x n block from row `row`
 *  becomes a block of an identity: ones where column - row (within the block) == d, else
 *  zeros (d beyond the block: all zeros). */
typedef struct {
  tessera_dtype_t dtype;
  int m, n;
  int row, d;
} tsr_identity_args_t;

/** triangle: buffers {src (R), dst (W)}. dst's k x k block becomes a triangle of src's k x k
 *  block from row `src_row`, zeros in the other: uplo 'L' the unit lower triangle (ones on the
 *  diagonal: a block of Householder vectors), 'U' the upper triangle with the diagonal (an R). */
typedef struct {
  tessera_dtype_t dtype;
  char uplo;
  int k, src_row;
} tsr_triangle_args_t;

/** hefill: buffers {A (RW), n x n}. Writes the strictly upper triangle from the lower, conjugated:
 *  the whole Hermitian (symmetric) matrix whose lower triangle A stores. */
typedef struct {
  tessera_dtype_t dtype;
  int n;
} tsr_hefill_args_t;

/** hb2st: buffers {ab (R) (kd + 1) x n, d (W) n doubles, e (W) n - 1 doubles, v (W),
 *  tau (W)}. The Hermitian band ab (LAPACK's lower band storage, kd
 * subdiagonals) reduced to the real tridiagonal T (d, e) by bulge chasing, the reflectors of Q2 (ab
 * = Q2 T Q2ᴴ) into v and tau in cpu/hb2st.h's layout. */
typedef struct {
  tessera_dtype_t dtype;
  int n, kd;
} tsr_hb2st_args_t;

/** hb2st_steps (host only): buffers {the working band's blocks of columns (RW), `width` columns
 *  each (the last of a band may be narrower), consecutive: buffer i holds columns
 *  col0 + i width ..}, each ldw x its columns, leading dimension ldw, one allocation (their
 *  replicas in host memory, where they were registered). Steps first .. first + count - 1 of
 *  sweep `sweep` of a reduction of order n and bandwidth kd (cpu/hb2st.h) on that working band,
 *  their columns within the buffers'; they write reflector slots (sweep, first ..) of v and tau
 *  and read (sweep, first - 1): host arrays of hb2st's layout, passed as pointers (each slot is
 *  written by one task only and read, during the flow, only by the next step of its sweep, which
 *  the band's columns they share order after it). */
typedef struct {
  tessera_dtype_t dtype;
  int n, kd, ldw;
  int sweep, first, count;
  int col0, width;
  void *v, *tau;
} tsr_hb2st_steps_args_t;

/** hb2st_apply: buffers {v (R), tau (R), E (RW) n x m}. E = Q2 E with hb2st's reflectors of a
 *  band of order n and kd subdiagonals (v and tau as one-column handles of the layout's nv and
 *  ntau elements). CPUs and GPUs group the reflectors alike, in blocks of their own widths. */
typedef struct {
  tessera_dtype_t dtype;
  int n, kd, m;
} tsr_hb2st_apply_args_t;

/** stedc (host only): buffers {d (RW) n doubles, e (RW) n - 1 doubles[, z (W) n x n doubles]}.
 *  The eigenvalues of the real symmetric tridiagonal T (d, e) into d in ascending order, with
 *  `vectors` its eigenvectors into z (LAPACK's dstedc; dsterf without). Returns 0 or LAPACK's
 *  info > 0. */
typedef struct {
  int n, vectors;
  int threads;  /* BLAS threads for the call (run while the context's workers are idle) */
  int64_t rows; /* with vectors, z is n columns of `rows` rows (0: n): T's block of them at */
  int64_t row;  /* row `row`, the others zeroed (a leaf of the divide and conquer) */
} tsr_stedc_args_t;

/** eig_prepare (host only, no buffers): columns j0 .. j1 - 1 of the n x n Hermitian A's `uplo`
 *  triangle (host array a, lda) into the lower triangle of h (ldh), conjugated from the upper,
 *  the diagonal's imaginary parts dropped; the largest modulus of those entries into *amax and
 *  the first of those columns (1-based) holding a NaN or an infinity into *bad (0: none). Tasks
 *  on disjoint column ranges write disjoint parts of h and their own *amax and *bad. */
typedef struct {
  tessera_dtype_t dtype;
  char uplo;
  int64_t n, lda, ldh, j0, j1;
  const void *a;
  void *h;
  double *amax;
  int64_t *bad;
} tsr_eig_prepare_args_t;

/** laed_rows: buffers {Q (R) n x n doubles, z (W) n doubles}. z[a .. a + m) = the sum of Q's
 *  rows a + n1 - 1 and a + n1 over columns a .. a + m - 1: the coupling vector of the merge of
 *  the diagonal block at a of order m, halves n1 and m - n1 (cpu/laed.h). */
typedef struct {
  int64_t a, m, n1;
} tsr_laed_rows_args_t;

/** laed_roots (host only, no buffers): the secular equation's roots j0 .. j1 - 1 of the plan,
 *  a host pointer (tsr_laed_roots; each range written by one task, read after a wait). */
typedef struct {
  tsr_laed_plan_t *plan;
  int64_t j0, j1;
} tsr_laed_roots_args_t;

/** laed_update (host only, no buffers): the values-only divide and conquer's merge on the
 *  block's two kept eigenvector rows, over indices i0 .. i1 - 1 of the plan (host pointers;
 *  each range written by one task, read after a wait): phase 0 Löwner's weights into wt
 *  (tsr_laed_weights), phase 1 those columns of u = q2 S (tsr_laed_row_product). */
typedef struct {
  tsr_laed_plan_t *plan;
  int phase;
  int64_t i0, i1;
  const double *q2;
  double *wt, *u;
} tsr_laed_update_args_t;

/** laed_merge: buffers {Q (RW) n x n doubles, the plan (R) its bytes, work (RW) tsr_laed_work(m)
 * doubles (cpu/laed.h)}. The merge's plan carried out on Q's diagonal block at a, of the plan's
 * order m; `plan` repeats the plan's header. */
typedef struct {
  tsr_laed_plan_t plan;
  int64_t a;
} tsr_laed_merge_args_t;

/** diagonal: buffers {A (R), d (W) n x 1}. Copies the diagonal of A's n x n block from row `row`
 *  into d (a QR step's tau from its T; R's diagonal from a panel). */
typedef struct {
  tessera_dtype_t dtype;
  int n, row;
} tsr_diagonal_args_t;

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

/** trmm: buffers {A (R), B (RW)}. B = alpha op(A) B (side 'L', A m x m) or
 *  B = alpha B op(A) (side 'R', A n x n); B is m x n. */
typedef tsr_trsm_args_t tsr_trmm_args_t;

/** The pivots of one LU step of k pivots, as ints: piv[0] the info, piv[1 .. k] the pivots
 *  (1-based, relative to the step's first row), then the same interchanges as one permutation
 *  of the rows they touch: piv[1 + k] = count c (<= 2k; -1 when not computed), dst =
 *  piv + 2 + k and src = dst + 2k, row dst[t] receiving row src[t] (0-based, relative to the
 *  first row). Ints a step of k pivots holds: */
#define TSR_PIV_INTS(k) (2 + 5 * (int64_t)(k))

/** Computes the permutation part of `piv` (TSR_PIV_INTS(k) ints) from its k pivots, rows
 *  counting the rows the pivots may name. Returns 0, or -1 when memory runs out (the count is
 *  then -1: a device kernel given such a handle may not use the permutation). */
int tsr_lu_swaps(int *piv, int k, int rows);

/** getrf: buffers {A (RW), piv (W)[, inv (W)]}. LU factorization with partial pivoting of the
 *  block of A starting at row `r0` (rows r0 .. m - 1, columns 0 .. n - 1; m counts from row 0 of
 *  the buffer), as LAPACK's getrf: P A' = L U in place, its k = min(m - r0, n) pivots and their
 *  permutation in piv (TSR_PIV_INTS(k) ints, see above). piv[0] receives the info: 0, or the
 *  first column j (1-based) where U(j, j) is exactly zero or a NaN appears in the factored
 *  block; the factorization completes either way (the kernel itself returns 0), as LAPACK's
 *  does. With `inv` (k x k), it receives L11⁻¹, the inverse of the unit lower k x k block of L,
 *  whole (zeros above its unit diagonal): lu_step's products with it replace triangular
 *  solves. */
typedef struct {
  tessera_dtype_t dtype;
  int m, n;
  int r0;
} tsr_getrf_args_t;

/** laswp: buffers {A (RW), piv (R)}. Applies the row interchanges piv[1 .. k] (a step's pivots,
 *  see TSR_PIV_INTS) to the n columns of A: for i = 0 .. k - 1 (incx 1), or k - 1 .. 0 (incx
 *  -1), rows r0 + i and r0 + piv[1 + i] - 1 are swapped. A has m rows counted from row 0 of the
 *  buffer. Devices may apply the permutation part instead, all rows at once. */
typedef struct {
  tessera_dtype_t dtype;
  int m, n;
  int r0, k;
  int incx;
} tsr_laswp_args_t;

/** lu_step: buffers {A (R), B (RW)[, piv (R)[, inv (R)]]}. One block step of an LU solve or of
 *  the update of a column panel by an LU panel, on column panels of m rows: A holds the panel
 *  (its kb x kb diagonal block at row r0, column 0), B is m x n.
 *   - uplo 'L', trans 'N': [rows r0.. of B swapped by piv (laswp, incx 1) when given,] then
 *     B1 = L11⁻¹ B1 (unit lower, B1 = rows r0 .. r0 + kb: a product with getrf's inv when
 *     given, else a triangular solve), then B2 -= L21 B1 (rows below).
 *   - uplo 'U', trans 'N': B1 = U11⁻¹ B1, then B0 -= U01 B1 (rows 0 .. r0).
 *   - uplo 'U', trans 'T' / 'C': B1 -= op(U01) B0, then B1 = op(U11)⁻¹ B1.
 *   - uplo 'L', trans 'T' / 'C': B1 -= op(L21) B2, then B1 = op(L11)⁻¹ B1 (unit).
 *  Device-independent (lu_step.c): runs the device kind's laswp, trsm, trmm and gemm on
 *  sub-blocks. */
typedef struct {
  tessera_dtype_t dtype;
  char uplo, trans;
  int m, n;
  int r0, kb;
  int math; /* tsr_math_t of the product with the panel's off-diagonal part (the solve with its
               diagonal block stays in the dtype's own arithmetic) */
} tsr_lu_step_args_t;

/** geqrt: buffers {A (RW), T (W)}. Householder QR of the block of the column panel A (m rows
 *  counted from row 0 of the buffer, n columns) from row r0, as LAPACK's geqrt: the block
 *  becomes R on and above its diagonal and the vectors V below it (their unit diagonal not
 *  stored), with Q = H_1 ... H_k = I - V T Vᴴ, k = min(m - r0, n), T upper triangular k x k
 *  (its diagonal: LAPACK's tau). */
typedef struct {
  tessera_dtype_t dtype;
  int m, n;
  int r0;
  int sole; /* the matrix's only column panel (no update waits on it): GPUs may factor a tall
               one by CholeskyQR2 */
} tsr_geqrt_args_t;

/** larft: buffers {V (R), tau (R), T (W)}. The T of the block reflector Q = I - V T Vᴴ =
 *  H_1 ... H_kb whose vectors are the kb columns of the column panel V (m rows counted from row
 *  0 of the buffer) below row r0 (unit diagonal implied), and tau their kb scalars: LAPACK's
 *  larft (forward, columnwise), the T a geqrt of the panel would have made. */
typedef struct {
  tessera_dtype_t dtype;
  int m, r0, kb;
} tsr_larft_args_t;

/** qr_step: buffers {V (R), C (RW), T (R), W (RW)}. Applies the block reflector of a geqrt (the
 *  column panel V, kb vectors from row r0, and its T) to the n columns of the column panel C
 *  (m rows): C = Qᴴ C (trans 'C'; 'T' on real dtypes) or C = Q C ('N'), Q = I - V T Vᴴ on rows
 *  r0 .. m - 1. W is a kb x n workspace. Device-independent (qr_step.c): the kind's lacpy,
 *  trmm, gemm and geadd on sub-blocks. */
typedef struct {
  tessera_dtype_t dtype;
  char trans;
  int m, n;
  int r0, kb;
} tsr_qr_step_args_t;

/** posv: buffers {A (RW), B (RW), info (W)[, logdet (W)]}. A whole solve on one device, never
 *  run as a task: tessera_queue_posv's, ordered on ex->stream with nothing read back to the
 *  host. The Cholesky factorization of A's `uplo` triangle (n x n) in place, its info in the int
 *  `info` (potrf's: the order of the first minor not positive definite, or of the first NaN
 *  pivot before it), with `logdet` 2 Σ log Re a_jj over the factor's diagonal; then the two
 *  triangular solves of A X = B (side 'L', B n x nrhs) or X A = B (side 'R', B nrhs x n) onto B.
 *  When info > 0, B and the log det are undefined. */
typedef struct {
  tessera_dtype_t dtype;
  char uplo, side;
  int n, nrhs;
} tsr_posv_args_t;

/** gesv: buffers {A (RW), B (RW), info (W)}. As posv: LU with partial pivoting of the n x n A
 *  in place and its info in the int `info` (getrf's: the first column with a zero pivot or a
 *  NaN), then op(A) X = B onto the n x nrhs B (getrs with `trans`). The pivots live in the
 *  kind's own memory for the call (host memory on CPUs, the end of the scratch's workspace on
 *  GPUs). When info > 0, B is undefined. */
typedef struct {
  tessera_dtype_t dtype;
  char trans;
  int n, nrhs;
} tsr_gesv_args_t;

/** The kernels. */
extern const tessera_kernel_t tsr_kernel_potrf;
extern const tessera_kernel_t tsr_kernel_trsm;
extern const tessera_kernel_t tsr_kernel_syrk;
extern const tessera_kernel_t tsr_kernel_gemm;
extern const tessera_kernel_t tsr_kernel_hemm_pair;
extern const tessera_kernel_t tsr_kernel_hemm;
extern const tessera_kernel_t tsr_kernel_lacpy;
extern const tessera_kernel_t tsr_kernel_convert;
extern const tessera_kernel_t tsr_kernel_absum;
extern const tessera_kernel_t tsr_kernel_diagonal;
extern const tessera_kernel_t tsr_kernel_transpose;
extern const tessera_kernel_t tsr_kernel_identity;
extern const tessera_kernel_t tsr_kernel_triangle;
extern const tessera_kernel_t tsr_kernel_hefill;
extern const tessera_kernel_t tsr_kernel_hb2st;
extern const tessera_kernel_t tsr_kernel_hb2st_steps;
extern const tessera_kernel_t tsr_kernel_hb2st_apply;
extern const tessera_kernel_t tsr_kernel_stedc;
extern const tessera_kernel_t tsr_kernel_eig_prepare;
extern const tessera_kernel_t tsr_kernel_laed_rows;
extern const tessera_kernel_t tsr_kernel_laed_roots;
extern const tessera_kernel_t tsr_kernel_laed_update;
extern const tessera_kernel_t tsr_kernel_laed_merge;
extern const tessera_kernel_t tsr_kernel_geadd;
extern const tessera_kernel_t tsr_kernel_trtri;
extern const tessera_kernel_t tsr_kernel_lauum;
extern const tessera_kernel_t tsr_kernel_trmm;
extern const tessera_kernel_t tsr_kernel_logdiag;
extern const tessera_kernel_t tsr_kernel_getrf;
extern const tessera_kernel_t tsr_kernel_laswp;
extern const tessera_kernel_t tsr_kernel_lu_step;
extern const tessera_kernel_t tsr_kernel_geqrt;
extern const tessera_kernel_t tsr_kernel_qr_step;
extern const tessera_kernel_t tsr_kernel_larft;
extern const tessera_kernel_t tsr_kernel_posv;
extern const tessera_kernel_t tsr_kernel_gesv;

/* CPU implementations (src/kernels/cpu/), used by the kernel tables above. */
int tsr_cpu_potrf(const tessera_exec_t *ex, void *args);
int tsr_cpu_trsm(const tessera_exec_t *ex, void *args);
int tsr_cpu_syrk(const tessera_exec_t *ex, void *args);
int tsr_cpu_gemm(const tessera_exec_t *ex, void *args);
int tsr_cpu_hemm_pair(const tessera_exec_t *ex, void *args);
int tsr_cpu_hemm(const tessera_exec_t *ex, void *args);
int tsr_cpu_lacpy(const tessera_exec_t *ex, void *args);
int tsr_cpu_convert(const tessera_exec_t *ex, void *args);
int tsr_cpu_absum(const tessera_exec_t *ex, void *args);
int tsr_cpu_diagonal(const tessera_exec_t *ex, void *args);
int tsr_cpu_transpose(const tessera_exec_t *ex, void *args);
int tsr_cpu_identity(const tessera_exec_t *ex, void *args);
int tsr_cpu_triangle_copy(const tessera_exec_t *ex, void *args);
int tsr_cpu_hefill(const tessera_exec_t *ex, void *args);
int tsr_cpu_hb2st(const tessera_exec_t *ex, void *args);
int tsr_cpu_hb2st_steps(const tessera_exec_t *ex, void *args);
int tsr_cpu_hb2st_apply(const tessera_exec_t *ex, void *args);
int tsr_cpu_stedc(const tessera_exec_t *ex, void *args);
int tsr_cpu_eig_prepare(const tessera_exec_t *ex, void *args);
int tsr_cpu_laed_rows(const tessera_exec_t *ex, void *args);
int tsr_cpu_laed_roots(const tessera_exec_t *ex, void *args);
int tsr_cpu_laed_update(const tessera_exec_t *ex, void *args);
int tsr_cpu_laed_merge(const tessera_exec_t *ex, void *args);
int tsr_cpu_geadd(const tessera_exec_t *ex, void *args);
int tsr_cpu_trtri(const tessera_exec_t *ex, void *args);
int tsr_cpu_lauum(const tessera_exec_t *ex, void *args);
int tsr_cpu_trmm(const tessera_exec_t *ex, void *args);
int tsr_cpu_logdiag(const tessera_exec_t *ex, void *args);
int tsr_cpu_trsm_blocked(const tessera_exec_t *ex, void *args);
int tsr_cpu_getrf(const tessera_exec_t *ex, void *args);
int tsr_cpu_laswp(const tessera_exec_t *ex, void *args);
int tsr_cpu_lu_step(const tessera_exec_t *ex, void *args);
int tsr_cpu_geqrt(const tessera_exec_t *ex, void *args);
int tsr_cpu_qr_step(const tessera_exec_t *ex, void *args);
int tsr_cpu_larft(const tessera_exec_t *ex, void *args);
int tsr_cpu_posv(const tessera_exec_t *ex, void *args);
int tsr_cpu_gesv(const tessera_exec_t *ex, void *args);

/* Recursive halving (potrf_blocked.c, trsm_blocked.c, trtri_blocked.c, lauum_blocked.c): one code
 * for every device kind, calling the device kind's own kernels, given as function pointers, on
 * sub-blocks through copies of the task's tessera_exec_t. */

/** Order of the first half when the recursive kernels halve a triangle of order n: about n / 2,
 *  rounded up to a multiple of 16 (n / 2 below order 32). */
static inline int tsr_half_order(int n) {
  return n < 32 ? n / 2 : (n / 2 + 15) / 16 * 16;
}
/** trsm by recursive halving onto `trsm` (orders <= leaf, and solves of at most
 *  TSR_TRSM_NARROW right-hand sides) and `gemm`. */
int tsr_trsm_blocked(const tessera_exec_t *ex, void *args, tessera_kernel_fn trsm,
                     tessera_kernel_fn gemm, int leaf);
/** hemm_pair (tsr_hemm_pair_args_t) onto a device kind's `gemm`: the two products on blocks of
 *  `chunk` columns of S at a time (each block read by both while it is in cache). */
int tsr_hemm_pair(const tessera_exec_t *ex, const tsr_hemm_pair_args_t *a, tessera_kernel_fn gemm,
                  int chunk);
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
/** Whether qr_step's arguments and operands are valid: -1 when not, 0 when there is nothing to
 *  do (no vectors or no columns), 1 otherwise. */
int tsr_qr_step_valid(const tessera_exec_t *ex, const tsr_qr_step_args_t *a);
/** qr_step (tsr_qr_step_args_t) onto a device kind's `lacpy`, `trmm`, `gemm` and `geadd`. */
int tsr_qr_step(const tessera_exec_t *ex, const tsr_qr_step_args_t *a, tessera_kernel_fn lacpy,
                tessera_kernel_fn trmm, tessera_kernel_fn gemm, tessera_kernel_fn geadd);
/** The solves of posv (tsr_posv_args_t) once A holds its Cholesky factor: two calls of the
 *  device kind's `trsm` on buffers 0 and 1 of ex. */
int tsr_potrs_whole(const tessera_exec_t *ex, const tsr_posv_args_t *a, tessera_kernel_fn trsm);
/** The solve of gesv (tsr_gesv_args_t) once A holds its LU factors and buffer 3 of ex their
 *  pivots (TSR_PIV_INTS(n) ints, with their permutation): the device kind's `laswp` and two calls
 * of its `trsm`. */
int tsr_getrs_whole(const tessera_exec_t *ex, const tsr_gesv_args_t *a, tessera_kernel_fn laswp,
                    tessera_kernel_fn trsm);
/** lu_step (tsr_lu_step_args_t) onto a device kind's `laswp`, `trsm`, `trmm` (tsr_trsm_args_t)
 *  and `gemm` kernels. */
int tsr_lu_step(const tessera_exec_t *ex, const tsr_lu_step_args_t *a, tessera_kernel_fn laswp,
                tessera_kernel_fn trsm, tessera_kernel_fn trmm, tessera_kernel_fn gemm);

#ifdef TESSERA_HAVE_CUDA
/* CUDA implementations (src/kernels/cuda/): enqueue on ex->stream with the handles in
 * ex->scratch (tessera_cuda_scratch_t); library info goes to ex->async. */
int tsr_cuda_potrf(const tessera_exec_t *ex, void *args);
int tsr_cuda_trsm(const tessera_exec_t *ex, void *args);
int tsr_cuda_syrk(const tessera_exec_t *ex, void *args);
int tsr_cuda_gemm(const tessera_exec_t *ex, void *args);
int tsr_cuda_hemm_pair(const tessera_exec_t *ex, void *args);
int tsr_cuda_hemm(const tessera_exec_t *ex, void *args);
int tsr_cuda_lacpy(const tessera_exec_t *ex, void *args);
int tsr_cuda_convert(const tessera_exec_t *ex, void *args);
int tsr_cuda_absum(const tessera_exec_t *ex, void *args);
int tsr_cuda_diagonal(const tessera_exec_t *ex, void *args);
int tsr_cuda_transpose(const tessera_exec_t *ex, void *args);
int tsr_cuda_identity(const tessera_exec_t *ex, void *args);
int tsr_cuda_triangle_copy(const tessera_exec_t *ex, void *args);
int tsr_cuda_hefill(const tessera_exec_t *ex, void *args);
int tsr_cuda_hb2st(const tessera_exec_t *ex, void *args);
int tsr_cuda_hb2st_apply(const tessera_exec_t *ex, void *args);
int tsr_cuda_laed_rows(const tessera_exec_t *ex, void *args);
int tsr_cuda_laed_merge(const tessera_exec_t *ex, void *args);
int tsr_cuda_geadd(const tessera_exec_t *ex, void *args);
int tsr_cuda_trtri(const tessera_exec_t *ex, void *args);
int tsr_cuda_lauum(const tessera_exec_t *ex, void *args);
int tsr_cuda_trmm(const tessera_exec_t *ex, void *args);
/** trmm (side 'L') reading A whole, as a dense matrix: its zeros and diagonal must be written
 *  out (getrf's inv is so). */
int tsr_cuda_trmm_dense(const tessera_exec_t *ex, void *args);
int tsr_cuda_logdiag(const tessera_exec_t *ex, void *args);
int tsr_cuda_trsm_blocked(const tessera_exec_t *ex, void *args);
int tsr_cuda_getrf(const tessera_exec_t *ex, void *args);
int tsr_cuda_laswp(const tessera_exec_t *ex, void *args);
int tsr_cuda_lu_step(const tessera_exec_t *ex, void *args);
int tsr_cuda_qr_step(const tessera_exec_t *ex, void *args);
int tsr_cuda_geqrt(const tessera_exec_t *ex, void *args);
int tsr_cuda_larft(const tessera_exec_t *ex, void *args);
int tsr_cuda_posv(const tessera_exec_t *ex, void *args);
int tsr_cuda_gesv(const tessera_exec_t *ex, void *args);
/* The per-worker hooks of the CUDA kernels (cuda/handles.c), listed in the backend registry:
 * make and free a tessera_cuda_scratch_t on a thread bound to device `dev`. */
int tsr_cuda_scratch_create(int dev, void **scratch);
void tsr_cuda_scratch_destroy(int dev, void *scratch);
#endif

#endif
