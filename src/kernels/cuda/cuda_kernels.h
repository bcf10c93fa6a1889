/* The device kernels of the CUDA tile kernels, callable from C, by the .cu file that defines
 * them (the family's name where it has one: cholesky.cu, lu.cu, copy.cu, qr.cu). Each launcher
 * enqueues on the given stream and never synchronises.
 */
#ifndef TSR_KERNELS_CUDA_KERNELS_H
#define TSR_KERNELS_CUDA_KERNELS_H

#include <stddef.h>

#include "tessera/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* cholesky.cu: the Cholesky family's scans of a factor's diagonal and its log-sum. */

/** Enqueues on `stream` (a cudaStream_t) a scan of the diagonal of the n x n Cholesky factor `a`
 *  (device memory, `dtype`, leading dimension `ld` elements) against the device int
 *  `*dev_info` that potrf left: when it is 0, or k > 0, and the real part of a(j, j) is NaN for
 *  some j < n, or j < k - 1, writes the smallest such j + 1 into `*dev_info`; a negative info is
 *  left alone. Returns 0, or -1 for an invalid dtype or a failed launch. */
int tsr_cuda_diag_nan_check(tessera_dtype_t dtype, const void *a, size_t ld, int n, int *dev_info,
                            void *stream);

/** tsr_cuda_diag_nan_check on each of `batch` factors, factor b `stride` elements after `a`,
 *  against dev_info[b]. */
int tsr_cuda_diag_nan_check_batch(tessera_dtype_t dtype, const void *a, size_t ld, long long stride,
                                  int n, int batch, int *dev_info, void *stream);

/** Enqueues on `stream` out[i] = (char *)base + i * step for i < count: the device array of
 *  matrices a batched cuBLAS or cuSOLVER call takes. Returns 0, or -1 for a failed launch. */
int tsr_cuda_pointers(void **out, void *base, long long step, int count, void *stream);

/** Enqueues on `stream`: when the device int `*dev_info` holds k > 0 (a pivot potrf found not
 *  positive), the real part of a(k - 1, k - 1) becomes NaN, so that tsr_cuda_diag_nan_check
 *  over a larger factor containing `a` finds it after later calls reused the info. Returns 0,
 *  or -1 for an invalid dtype or a failed launch. */
int tsr_cuda_diag_poison(tessera_dtype_t dtype, void *a, size_t ld, const int *dev_info,
                         void *stream);

/** As tsr_cuda_diag_nan_check, looking for an exactly zero a(j, j) (both parts, for complex
 *  dtypes): LAPACK trtri's info for a singular triangle. */
int tsr_cuda_diag_zero_check(tessera_dtype_t dtype, const void *a, size_t ld, int n, int *dev_info,
                             void *stream);

/** Enqueues on `stream` `scale` times the sum of log |Re a(j, j)| over the diagonal of the
 *  n x n `a` (device memory, `dtype`, leading dimension `ld` elements) into the device double
 *  `*dev_sum`. Returns 0, or -1 for an invalid dtype or a failed launch. */
int tsr_cuda_diag_logsum(tessera_dtype_t dtype, const void *a, size_t ld, int n, double scale,
                         double *dev_sum, void *stream);

/** tsr_cuda_diag_logsum on each of `batch` matrices, matrix b `stride` elements after `a`, into
 *  dev_sum[b]. */
int tsr_cuda_diag_logsum_batch(tessera_dtype_t dtype, const void *a, size_t ld, long long stride,
                               int n, int batch, double scale, double *dev_sum, void *stream);
/* lu.cu: the LU family's NaN column scans, the interchanges' permutation and the row gather. */

/** Enqueues on `stream` a scan of the m x n block `a` (device memory, `dtype`, leading
 *  dimension `ld`) for NaN: when column j (0-based) holds one and j + 1 is below the device int
 *  `*dev_info` (or that is 0), writes the smallest such j + 1 into it (getrf's info lowered to
 *  the first column holding a NaN). `scratch` is one device int of workspace. Returns 0, or -1
 *  for an invalid dtype or a failed launch. */
int tsr_cuda_nan_columns(tessera_dtype_t dtype, const void *a, size_t ld, int m, int n,
                         int *dev_info, void *scratch, void *stream);

/** Fills column info - 1 of the m x n block `a` (device memory) with NaN when the device int
 *  *info is in [1, n], on the stream. Returns 0 or -1. */
int tsr_cuda_nan_column(tessera_dtype_t dtype, void *a, size_t ld, int m, int n, const int *info,
                        void *stream);

/** *into = the lower of *from and *into where both are nonzero, else the nonzero one (two
 *  infos, each 0 or a 1-based column), on the stream. Returns 0 or -1. */
int tsr_cuda_merge_info(const int *from, int *into, void *stream);

/** Pivots whose permutation tsr_cuda_lu_swaps computes (larger steps keep count -1). */
#define TSR_CUDA_SWAPS_MAX 2048

/** Enqueues the permutation part of the step pivots `piv` (device memory, TSR_PIV_INTS(k) ints,
 *  the k pivots filled) as tsr_lu_swaps computes it; for k > TSR_CUDA_SWAPS_MAX the count is
 *  set to -1. Returns 0, or -1 for a failed launch. */
int tsr_cuda_lu_swaps(int *piv, int k, void *stream);

/** Enqueues the rows interchanges of the step pivots `piv` (device memory, permutation part
 *  computed: count >= 0) on the n columns of the block `a` (`dtype`, leading dimension ld):
 *  row dst[t] receives row src[t] (incx 1), or row src[t] receives row dst[t] (incx -1, the
 *  inverse). Returns 0, or -1 for an invalid dtype or a failed launch. */
int tsr_cuda_row_gather(tessera_dtype_t dtype, void *a, size_t ld, int n, const int *piv, int k,
                        int incx, void *stream);

/* copy.cu: blocks of an identity, Hermitian fills and triangles. */

/** Enqueues the m x n block `a` (ld) of an identity: ones where column - row == d, zeros
 *  elsewhere. Returns 0, or -1 for an invalid dtype or a failed launch. */
int tsr_cuda_identity_block(tessera_dtype_t dtype, void *a, size_t ld, int m, int n, int d,
                            void *stream);

/** Enqueues a k x k triangle of `src` (leading dimension lds) into `dst` (ldd), zeros in the
 *  other: uplo 'L' the unit lower triangle (the strictly lower part, ones on the diagonal: a
 *  block of Householder vectors), 'U' the upper triangle with the diagonal (a T). Returns 0, or
 *  -1 for an invalid dtype or uplo or a failed launch. */
int tsr_cuda_triangle(tessera_dtype_t dtype, const void *src, size_t lds, int k, char uplo,
                      void *dst, size_t ldd, void *stream);

/** Enqueues the strictly upper triangle of the n x n block a (ld) from its lower, conjugated.
 *  Returns 0, or -1 for an invalid dtype or a failed launch. */
int tsr_cuda_hermitian_fill(tessera_dtype_t dtype, void *a, size_t ld, int n, void *stream);

/* convert.cu: conversions of precision and sums of moduli. */

/** Enqueues kernels.h's absum on a (m x n, leading dimension ld in elements): single or double
 *  precision, real or complex. Returns 0, or -1 for a failed launch. */
int tsr_cuda_absum_block(int single, int complex_, const void *a, size_t ld, int m, int n,
                         char part, double *rows, double *cols, void *stream);

/** Enqueues dst (m x n, leading dimension ldd) = scale src (lds) in dst's precision: elements of
 *  `reals` reals (2 for complex), single or double precision as from_single and to_single say.
 *  Returns 0, or -1 for a failed launch. */
int tsr_cuda_convert_block(int from_single, int to_single, int reals, const void *src, size_t lds,
                           void *dst, size_t ldd, int m, int n, double scale, void *stream);

/** Enqueues dst (rows x cols, leading dimension ldd, 16-bit floats: FP16 when to_f16, else
 *  BF16) = src (lds, f32) rounded to nearest. Returns 0, or -1 for a failed
 *  launch. */
int tsr_cuda_round_block(int to_f16, const float *src, size_t lds, void *dst, size_t ldd,
                         long long rows, int cols, void *stream);

/** Enqueues the split of src (rows x cols, lds, f32) into hi + lo, each rounded to nearest into
 *  TF32 (held in f32): hi and hi2 (the same values) receive hi, lo the rounding of src - hi, all
 *  three with leading dimension ldd. Returns 0, or -1 for a failed launch. */
int tsr_cuda_split_block(const float *src, size_t lds, float *hi, float *lo, float *hi2, size_t ldd,
                         long long rows, int cols, void *stream);

/* hemv_pair.cu: hemm_pair for one right-hand side. */

/** Enqueues yr += alpha S xc and yc += alpha Sᴴ xr (one column each; S r x c, leading dimension
 *  lds; dtype's elements, alpha's imaginary part ignored for real dtypes) from one read of S,
 *  adding into yr and yc atomically (hemv_pair.cu). Returns 0, or -1 for an invalid dtype or a
 *  failed launch. */
int tsr_cuda_hemv_pair(tessera_dtype_t dtype, const void *S, size_t lds, int r, int c,
                       const void *xc, const void *xr, void *yr, void *yc, double alpha_re,
                       double alpha_im, void *stream);

/* householder.cu: block reflectors (larft, and the staging of the bulge chasing's). */

/** Enqueues the start of LAPACK's larft (forward, columnwise) from G = Vᴴ V (k x k, leading
 *  dimension ldg, its upper triangle read) and the k scalars tau, into T (ldt): the diagonal
 *  blocks of nb columns get their own T, the blocks above them G's entries, and T's strictly
 *  lower part zeros. The caller joins the blocks, T12 = -T1 G12 T2, level by level. Returns 0,
 *  or -1 for an invalid dtype or nb, or a failed launch. */
int tsr_cuda_larft_blocks(tessera_dtype_t dtype, const void *g, size_t ldg, const void *tau, int k,
                          int nb, void *t, size_t ldt, void *stream);

/** tsr_cuda_larft_blocks on `count` problems at once: problem b's G, tau and T start b times
 *  stride_g, stride_tau and stride_t elements after the first's. Returns 0, or -1 for an
 *  invalid dtype, nb or count, or a failed launch. */
int tsr_cuda_larft_batched(tessera_dtype_t dtype, const void *g, size_t ldg, long long stride_g,
                           const void *tau, long long stride_tau, int k, int nb, void *t,
                           size_t ldt, long long stride_t, int count, void *stream);

/** A batch of block reflectors of the bulge chasing's Q2 (cpu/hb2st.h's layout: order n,
 *  bandwidth kd, `steps` reflector slots per sweep): member b (0 <= b < count) joins the
 *  reflectors of sweeps s_b .. s_b + k - 1 at step j_b, s_b = s0 + b sweeps_apart, j_b = j0 + b,
 *  on rows s_b + 1 + j_b kd onwards, `rows` of them counting `pad` rows of zeros above them. */
typedef struct {
  int n, kd, steps;
  int s0, j0, sweeps_apart, count;
  int k, rows, pad;
  long long ldv, stride_v; /* V_b: rows x k, leading dimension ldv, stride_v elements apart */
  long long stride_tau;    /* taub_b: k scalars, stride_tau elements apart */
} tsr_cuda_hb2st_batch_t;

/** Enqueues the staging of a batch's block reflectors from the device copies of v and tau: V_b's
 *  column c gets reflector (s_b + c, j_b)'s vector from row pad + c (the staircase; zeros
 *  elsewhere in its `rows`), taub_b[c] its tau. Returns 0, or -1 for an invalid argument or a
 *  failed launch. */
int tsr_cuda_hb2st_stage(tessera_dtype_t dtype, const tsr_cuda_hb2st_batch_t *batch, const void *v,
                         const void *tau, void *V, void *taub, void *stream);

/* qr.cu: the QR of a tall panel (qr_tall.c). */

/** Enqueues the panel of columns k0 .. k0 + b - 1 (rows k0 .. n - 1) of the LU factorization
 *  without pivoting of the n x n block w (ldw) less a diagonal of signs chosen as it goes (each
 *  the opposite of its pivot's), in place, the signs to sgn[k0 .. k0 + b): Householder
 *  reconstruction from an orthonormal Q; the columns right of the panel are the caller's to
 *  update. Real dtypes. Returns 0, or -1 for another dtype or a failed launch. */
int tsr_cuda_lu_signs(tessera_dtype_t dtype, void *w, size_t ldw, int n, int k0, int b, void *sgn,
                      void *stream);

/** Enqueues the tall QR's last step on n x n blocks: a (lda) = S R on and above the diagonal
 *  (R upper in y), L's vectors below it (from w, which holds L \ U); t (ldt) = -U S, zero
 *  below the diagonal. Real dtypes. Returns 0, or -1 for another dtype or a failed launch. */
int tsr_cuda_tall_finish(tessera_dtype_t dtype, const void *y, size_t ldy, const void *w,
                         size_t ldw, const void *sgn, int n, void *a, size_t lda, void *t,
                         size_t ldt, void *stream);

/** Enqueues the spread of the Gram matrix g (n x n, leading dimension ldg, symmetric, real
 *  dtypes) scaled to a unit diagonal: the largest sum of the moduli off the diagonal in a row,
 *  into the device double *out (infinity where a diagonal entry is not positive or an entry is
 *  NaN). Below 1, it bounds the scaled matrix's eigenvalues within [1 - spread, 1 + spread].
 *  Returns 0, or -1 for another dtype or a failed launch. */
int tsr_cuda_gram_spread(tessera_dtype_t dtype, const void *g, size_t ldg, int n, double *out,
                         void *stream);

/* laed.cu: the merges of the tridiagonal divide and conquer. */

/** Enqueues z[c] = q(r, c), plus q(r + 1, c) with `two`, for c in [c0, c0 + count) (f64, q's
 *  leading dimension ld): a merge's coupling vector in the tridiagonal divide and conquer
 *  (cpu/laed.h, kernels/eig.h's laed_rows). Returns 0, or -1 for a failed launch. */
int tsr_cuda_laed_rows_enqueue(const double *q, size_t ld, long long c0, long long count,
                               long long r, int two, double *z, void *stream);

/** Enqueues the secular equation's roots of a merge's plan (k > 2 poles dlamda, weights w, rho,
 *  wsq = Σ w², all in device memory: secular.h's iteration, a warp per root): root, origin and
 *  delta as cpu/laed.h's plan holds them; a root that did not converge sets *info (device memory,
 *  0 before) to its index + 1. Returns 0, or -1 for a failed launch. */
int tsr_cuda_laed_secular_enqueue(long long k, const double *dlamda, const double *w, double rho,
                                  double wsq, double *root, int *origin, double *delta, int *info,
                                  void *stream);

/** Enqueues the values-only merge of a plan (k > 2; its arrays dlamda, w, origin, delta and
 *  perm in device memory): Löwner's weights into wt (k doubles) and u = q2[:, 0:k] S (2 x k,
 *  leading dimension 2; q2 the regrouped kept rows, 2 x m, leading dimension 2). Returns 0, or
 *  -1 for a failed launch. */
int tsr_cuda_laed_values_enqueue(long long k, const double *dlamda, const double *w,
                                 const int *origin, const double *delta, const int *perm,
                                 const double *q2, double *wt, double *u, void *stream);

/** A merge of the tridiagonal divide and conquer on a device (cpu/laed.h's plan) on `rows` of
 *  its block's rows: q those rows of the block's m columns (leading dimension ld), the plan's
 *  arrays in device memory, and the workspace: q2 (rows x m, leading dimension rows), wt (k
 *  doubles) and s (a chunk of S's columns, leading dimension k). */
typedef struct {
  double *q;
  size_t ld;
  long long rows, m, k, nrot;
  const double *rot, *dlamda, *w, *delta, *vec2;
  const int *src, *perm, *origin, *out;
  double *q2, *wt, *s;
} tsr_cuda_laed_t;

/** Enqueues a merge's first part: the rotations on q's columns, q2 = q's columns regrouped (src)
 *  and Löwner's weights into wt (k > 2). Returns 0, or -1 for a failed launch. */
int tsr_cuda_laed_prepare(const tsr_cuda_laed_t *p, void *stream);

/** Enqueues the secular problem's normalized eigenvectors j0 .. j1 - 1 into s's first j1 - j0
 *  columns. Returns 0, or -1 for a failed launch. */
int tsr_cuda_laed_vectors(const tsr_cuda_laed_t *p, long long j0, long long j1, void *stream);

/** Enqueues a merge's last part, after u = q2[:, 0:k] S into q's first k columns: u copied over
 *  q2's first k columns, then q's column c = column out[c] of q2. Returns 0, or -1 for a failed
 *  launch. */
int tsr_cuda_laed_place(const tsr_cuda_laed_t *p, void *stream);

/* hb2st.cu: the bulge chasing. */

/** The bulge chasing on a GPU (cpu/hb2st.h's reduction, every dtype): the band ab (LAPACK's
 *  lower band storage, ldab) loaded into the working band w (ldw >= 2 kd x n, device scratch),
 *  reduced by one cooperative launch of `blocks` thread blocks (tsr_cuda_hb2st_blocks), the
 *  reflectors into v and tau (the layout's), T into d and e (doubles). kd: the effective
 *  bandwidth. scratch: blocks x 5 kd elements; progress: n ints. */
typedef struct {
  int n, kd, blocks;
  const void *ab;
  size_t ldab;
  void *w;
  size_t ldw;
  void *v, *tau, *scratch;
  int *progress;
  double *d, *e;
} tsr_cuda_hb2st_t;

/** Thread blocks of the bulge chasing's cooperative launch for `sweeps` sweeps of a band of kd
 *  subdiagonals on the current device: at most those resident at once. -1 when the device
 *  cannot say or the dtype is not f32 or f64. */
int tsr_cuda_hb2st_blocks(tessera_dtype_t dtype, int kd, int sweeps);

/** Enqueues the bulge chasing of `p`. Returns 0, or -1 for an unknown dtype or a
 *  failed launch. */
int tsr_cuda_hb2st_run(tessera_dtype_t dtype, const tsr_cuda_hb2st_t *p, void *stream);

#ifdef __cplusplus
}
#endif
#endif
