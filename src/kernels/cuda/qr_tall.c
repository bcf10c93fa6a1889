/* QR of a tall panel on a GPU (real dtypes, rows >= TALL_RATIO columns): CholeskyQR (one pass
 * or two) and Householder reconstruction, with the output of LAPACK's Householder QR (R, the
 * vectors below it, T), in two or three passes over the panel instead of a chain of one-column
 * steps:
 *
 *   G1 = Aᵀ A, R1 = chol(G1)                        (gemm, potrf)
 *   two passes only: G2 = Q1ᵀ Q1, R2 = chol(G2), Q1 = A R1⁻¹ (Q1 by blocks of rows in the
 *   workspace); one pass: Q = A R1⁻¹, R = R1
 *   Q's top block less signs S, factored without pivoting: L U (Ballard et al.)
 *   the vectors below: Q's rows U⁻¹                 (Q formed again by blocks, then into A)
 *   R = S R2 R1 (S R1), T = -U S L1⁻ᵀ
 *
 * One pass is taken where G1 scaled to a unit diagonal has a Gershgorin spread of at most 1/3:
 * A's columns scaled to unit norms then have a condition number of at most √2, and CholeskyQR's
 * loss of orthogonality (the Gram matrix's rounding times the scaled condition number squared)
 * is within twice the second pass's. Otherwise CholeskyQR2, which reaches Householder's
 * orthogonality while A's condition number is well below ε^(-1/2). A is written only in the
 * last pass, so the panel falls back to Householder (the caller's) on A as it was when the first
 * Cholesky factorization breaks down or R1's condition number is too large, or when the second
 * breaks down or R2's diagonal shows Q1 far from orthonormal. These are read on the host: the
 * task's stream is waited for once (one pass) or three times. */
#include <math.h>
#include <stdlib.h>

#include "kernels/cuda/cuda_kernels.h"
#include "kernels/cuda/qr_ops.h"

/* The real potrf of cuSOLVER: workspace size and run. */
static cusolverStatus_t potrf_size(cusolverDnHandle_t h, tessera_dtype_t dt, int n, void *a,
                                   int lda, int *lwork) {
  return dt == TESSERA_F32
             ? cusolverDnSpotrf_bufferSize(h, CUBLAS_FILL_MODE_UPPER, n, a, lda, lwork)
             : cusolverDnDpotrf_bufferSize(h, CUBLAS_FILL_MODE_UPPER, n, a, lda, lwork);
}

static cusolverStatus_t potrf(cusolverDnHandle_t h, tessera_dtype_t dt, int n, void *a, int lda,
                              void *work, int lwork, int *info) {
  return dt == TESSERA_F32
             ? cusolverDnSpotrf(h, CUBLAS_FILL_MODE_UPPER, n, a, lda, work, lwork, info)
             : cusolverDnDpotrf(h, CUBLAS_FILL_MODE_UPPER, n, a, lda, work, lwork, info);
}

/* G (n x n) = Aᵀ A for A rows x n (lda): a gemm, which cuBLAS splits along the long
 * dimension (its syrk leaves most of the GPU idle on so small an output). */
static int gram(const tessera_exec_t *ex, tessera_dtype_t dt, const void *a, int lda, int rows,
                int n, void *g) {
  return tsr_qr_gemm(ex, dt, 'T', 'N', n, n, rows, 1, a, (size_t)lda, a, (size_t)lda, 0, g,
                     (size_t)n);
}

/* inv (n x n) = R⁻¹ for the upper triangular R (ldr): a trsm on the identity. */
static int inverse(const tessera_exec_t *ex, tessera_dtype_t dt, const void *r, size_t ldr, int n,
                   void *inv) {
  if (tsr_cuda_identity_block(dt, inv, (size_t)n, n, n, 0, ex->stream)) return TESSERA_ERR_KERNEL;
  return tsr_qr_trsm(ex, dt, 'L', 'U', 'N', 'N', n, n, 1, r, ldr, inv, (size_t)n);
}

/* Rows of A a block of the streamed passes takes: as many as the workspace from `work` holds. */
static int block_rows(const tessera_cuda_scratch_t *s, const char *work, int rows, int n,
                      size_t es) {
  const size_t room = s->workspace_bytes - (size_t)(work - (char *)s->workspace);
  const size_t fit = room / ((size_t)n * es);
  return fit < 1 ? 0 : fit < (size_t)rows ? (int)fit : rows;
}

/* G2 = Q1ᵀ Q1 with Q1 = A R1⁻¹ (inv1 = R1⁻¹), A rows x n (lda) left as it is: each block of
 * rows' Q1 formed in the workspace (`work` on), its Gram matrix summed into g2. */
static int second_gram(const tessera_exec_t *ex, const tessera_cuda_scratch_t *s,
                       tessera_dtype_t dt, const char *a, int lda, int rows, int n,
                       const void *inv1, void *g2, char *work) {
  const size_t es = tessera_dtype_size(dt), ln = (size_t)n;
  const int block = block_rows(s, work, rows, n, es);
  int rc = block > 0 ? 0 : TESSERA_ERR_KERNEL;
  for (int i = 0; !rc && i < rows; i += block) {
    const int b = rows - i < block ? rows - i : block;
    rc = tsr_qr_gemm(ex, dt, 'N', 'N', b, n, n, 1, a + (size_t)i * es, (size_t)lda, inv1, ln, 0,
                     work, (size_t)b);
    if (!rc)
      rc = tsr_qr_gemm(ex, dt, 'T', 'N', n, n, b, 1, work, (size_t)b, work, (size_t)b, i ? 1 : 0,
                       g2, ln);
  }
  return rc;
}

/* A (rows x n, lda) = (A R1⁻¹) M⁻¹ (inv1 = R1⁻¹, inv2 = M⁻¹), or A inv2 where inv1 is NULL:
 * each block of rows' A R1⁻¹ formed in the workspace (`work` on) as second_gram formed it, then
 * times inv2 into A's rows; without inv1, A inv2 in the workspace copied back into A's rows. */
static int vectors(const tessera_exec_t *ex, const tessera_cuda_scratch_t *s, tessera_dtype_t dt,
                   char *a, int lda, int rows, int n, const void *inv1, const void *inv2,
                   char *work) {
  const size_t es = tessera_dtype_size(dt), ln = (size_t)n;
  const int block = block_rows(s, work, rows, n, es);
  int rc = block > 0 ? 0 : TESSERA_ERR_KERNEL;
  for (int i = 0; !rc && i < rows; i += block) {
    const int b = rows - i < block ? rows - i : block;
    char *ai = a + (size_t)i * es;
    rc = tsr_qr_gemm(ex, dt, 'N', 'N', b, n, n, 1, ai, (size_t)lda, inv1 ? inv1 : inv2, ln, 0, work,
                     (size_t)b);
    if (!rc && inv1)
      rc = tsr_qr_gemm(ex, dt, 'N', 'N', b, n, n, 1, work, (size_t)b, inv2, ln, 0, ai, (size_t)lda);
    else if (!rc && cudaMemcpy2DAsync(ai, (size_t)lda * es, work, (size_t)b * es, (size_t)b * es,
                                      ln, cudaMemcpyDeviceToDevice, ex->stream) != cudaSuccess)
      rc = TESSERA_ERR_KERNEL;
  }
  return rc;
}

/* The Frobenius norm of the n x n block x (contiguous), read on the host (cuBLAS waits). */
static int frobenius(const tessera_exec_t *ex, tessera_dtype_t dt, const void *x, int n,
                     double *out) {
  cublasHandle_t h = tsr_cuda_blas(ex);
  float f = 0;
  cublasStatus_t st = !h                  ? CUBLAS_STATUS_NOT_INITIALIZED
                      : dt == TESSERA_F32 ? cublasSnrm2(h, n * n, x, 1, &f)
                                          : cublasDnrm2(h, n * n, x, 1, out);
  if (dt == TESSERA_F32) *out = f;
  return st == CUBLAS_STATUS_SUCCESS ? 0 : TESSERA_ERR_KERNEL;
}

/* Whether A's condition number, estimated from R1 as ‖R1‖_F ‖R1⁻¹‖_F (at most n times the
 * 2-norm's), lets CholeskyQR2 reach Householder's orthogonality: below n / (10 √ε). */
static int well_conditioned(const tessera_exec_t *ex, tessera_dtype_t dt, const void *r1, int n,
                            const void *inv, void *copy, bool *ok) {
  double nr = 0, ni = 0;
  const double eps = dt == TESSERA_F32 ? 0x1p-24 : 0x1p-53;
  int rc = tsr_cuda_triangle(dt, r1, (size_t)n, n, 'U', copy, (size_t)n, ex->stream)
               ? TESSERA_ERR_KERNEL
               : frobenius(ex, dt, copy, n, &nr);
  if (!rc) rc = frobenius(ex, dt, inv, n, &ni);
  *ok = !rc && nr * ni <= n / (10 * sqrt(eps));
  return rc;
}

/* What a Cholesky factorization's wait reads back: potrf's info, and where asked the spread of
 * G before it was factored and the factor's diagonal. */
typedef struct {
  const double *spread_at; /* the device double tsr_cuda_gram_spread wrote, or NULL */
  double *diag;            /* n doubles for the factor's diagonal, or NULL */
  int info;
  double spread;
} chol_reads_t;

/* Where the host workspace holds what cholesky reads: info, the spread, then the diagonal. */
enum { HOST_SPREAD = 8, HOST_DIAG = 16 };

/* G's Cholesky factor in place (upper), then waits for the stream for what `r` asks (the
 * caller checked the host workspace holds it). */
static int cholesky(const tessera_exec_t *ex, const tessera_cuda_scratch_t *s, cusolverDnHandle_t h,
                    tessera_dtype_t dt, void *g, int n, char *work, chol_reads_t *r) {
  const size_t es = tessera_dtype_size(dt);
  const size_t room = (s->workspace_bytes - (size_t)(work - (char *)s->workspace)) / es;
  char *host = s->host_workspace;
  int lwork = 0;
  if (potrf_size(h, dt, n, g, n, &lwork) != CUSOLVER_STATUS_SUCCESS || (size_t)lwork > room ||
      potrf(h, dt, n, g, n, work, lwork, s->dev_info) != CUSOLVER_STATUS_SUCCESS)
    return TESSERA_ERR_KERNEL;
  cudaStream_t st = ex->stream;
  if (cudaMemcpyAsync(host, s->dev_info, sizeof(int), cudaMemcpyDeviceToHost, st) != cudaSuccess ||
      (r->spread_at && cudaMemcpyAsync(host + HOST_SPREAD, r->spread_at, sizeof(double),
                                       cudaMemcpyDeviceToHost, st) != cudaSuccess) ||
      (r->diag && cudaMemcpy2DAsync(host + HOST_DIAG, es, g, ((size_t)n + 1) * es, es, (size_t)n,
                                    cudaMemcpyDeviceToHost, st) != cudaSuccess) ||
      cudaStreamSynchronize(st) != cudaSuccess)
    return TESSERA_ERR_KERNEL;
  r->info = *(const int *)(const void *)host;
  if (r->spread_at) r->spread = *(const double *)(const void *)(host + HOST_SPREAD);
  for (int i = 0; r->diag && i < n; i++)
    r->diag[i] = dt == TESSERA_F32 ? (double)((const float *)(const void *)(host + HOST_DIAG))[i]
                                   : ((const double *)(const void *)(host + HOST_DIAG))[i];
  return 0;
}

/* Columns of a panel of the LU with signs (lu_signs): the rest of each step is a trsm and a gemm.
 */
enum { LU_PANEL = 32 };

/* w (n x n) = L U of w less the signs S (to sgn), by panels of LU_PANEL columns: the panel in
 * one thread block, then U12 = L11⁻¹ A12 and A22 -= L21 U12. */
static int lu_with_signs(const tessera_exec_t *ex, tessera_dtype_t dt, char *w, int n, char *sgn) {
  const size_t es = tessera_dtype_size(dt), ld = (size_t)n;
  int rc = 0;
  for (int k = 0; !rc && k < n; k += LU_PANEL) {
    const int b = n - k < LU_PANEL ? n - k : LU_PANEL, rest = n - k - b;
    char *wkk = w + ((size_t)k * ld + (size_t)k) * es;
    if (tsr_cuda_lu_signs(dt, w, ld, n, k, b, sgn, ex->stream)) rc = TESSERA_ERR_KERNEL;
    if (!rc && rest > 0)
      rc = tsr_qr_trsm(ex, dt, 'L', 'L', 'N', 'U', b, rest, 1, wkk, ld, wkk + (size_t)b * ld * es,
                       ld);
    if (!rc && rest > 0)
      rc = tsr_qr_gemm(ex, dt, 'N', 'N', rest, rest, b, -1, wkk + (size_t)b * es, ld,
                       wkk + (size_t)b * ld * es, ld, 1, wkk + ((size_t)b * ld + (size_t)b) * es,
                       ld);
  }
  return rc;
}

/* Whether R2's diagonal shows Q1 close enough to orthonormal for the second pass to reach
 * Householder's orthogonality. */
static bool near_orthonormal(const double *d, int n) {
  for (int i = 0; i < n; i++)
    if (!(fabs(d[i] - 1) <= 0.1)) return false;
  return true;
}

size_t tsr_cuda_geqrt_tall_bytes(tessera_dtype_t dt, int n) {
  const size_t es = tessera_dtype_size(dt);
  return 6 * tsr_qr_aligned((size_t)n * (size_t)n * es) + tsr_qr_aligned((size_t)n * es) +
         tsr_qr_aligned(sizeof(double));
}

/* CholeskyQR2's second pass: R1 (upper in g1) and R1⁻¹ (inv1) taken where A is well enough
 * conditioned, G2 = Q1ᵀ Q1 factored in g2 as R2, taken where Q1 is close to orthonormal.
 * Returns 1 where Householder should factor A (untouched), or an error. */
static int second_pass(const tessera_exec_t *ex, const tessera_cuda_scratch_t *s,
                       cusolverDnHandle_t h, tessera_dtype_t dt, const char *a, int lda, int rows,
                       int n, const char *g1, const char *inv1, char *g2, char *x, char *rest) {
  bool ok = false;
  int rc = well_conditioned(ex, dt, g1, n, inv1, x, &ok);
  if (!rc && !ok) return 1;
  double *diag = rc ? NULL : malloc((size_t)n * sizeof *diag);
  if (!rc && !diag) return TESSERA_ERR_NOMEM;
  chol_reads_t c2 = {.diag = diag};
  if (!rc) rc = second_gram(ex, s, dt, a, lda, rows, n, inv1, g2, rest);
  if (!rc) rc = cholesky(ex, s, h, dt, g2, n, rest, &c2);
  if (!rc && (c2.info || !near_orthonormal(diag, n))) rc = 1;
  free(diag);
  return rc;
}

int tsr_cuda_geqrt_tall(const tessera_exec_t *ex, const tessera_cuda_scratch_t *s,
                        cusolverDnHandle_t h, tessera_dtype_t dt, char *a, int lda, int rows, int n,
                        char *t, int ldt) {
  const size_t es = tessera_dtype_size(dt), nn = tsr_qr_aligned((size_t)n * (size_t)n * es);
  if ((dt != TESSERA_F32 && dt != TESSERA_F64) || rows < n ||
      tsr_cuda_geqrt_tall_bytes(dt, n) > s->workspace_bytes ||
      HOST_DIAG + (size_t)n * es > s->host_workspace_bytes) /* cholesky's reads */
    return 1;
  char *g1 = s->workspace, *g2 = g1 + nn, *w = g2 + nn, *x = w + nn, *inv1 = x + nn;
  char *inv2 = inv1 + nn, *sgn = inv2 + nn, *spread = sgn + tsr_qr_aligned((size_t)n * es);
  char *rest = spread + tsr_qr_aligned(sizeof(double));
  const tessera_cuda_scratch_t staging =
      tsr_qr_scratch_from(s, (size_t)(rest - (char *)s->workspace));
  const size_t ln = (size_t)n, la = (size_t)lda;
  /* A = Q1 R1, A R1⁻¹ not stored; G1's spread decides between one pass and two */
  chol_reads_t c1 = {.spread_at = (const double *)(const void *)spread};
  int rc = gram(ex, dt, a, lda, rows, n, g1);
  if (!rc && tsr_cuda_gram_spread(dt, g1, ln, n, (double *)(void *)spread, ex->stream))
    rc = TESSERA_ERR_KERNEL;
  if (!rc) rc = cholesky(ex, s, h, dt, g1, n, rest, &c1);
  if (!rc && c1.info) rc = 1;
  const bool one = !rc && c1.spread <= 1.0 / 3;
  if (!rc) rc = inverse(ex, dt, g1, ln, n, inv1);
  if (!rc && !one) rc = second_pass(ex, s, h, dt, a, lda, rows, n, g1, inv1, g2, x, rest);
  if (rc) return rc;                /* A untouched */
  const char *last = one ? g1 : g2; /* Q = A R1⁻¹ (R2⁻¹): the last factor's triangle */
  /* Q's top block less the signs, as L U */
  rc = tsr_qr_gemm(ex, dt, 'N', 'N', n, n, n, 1, a, la, inv1, ln, 0, w, ln);
  if (!rc && !one) rc = tsr_qr_trsm(ex, dt, 'R', 'U', 'N', 'N', n, n, 1, g2, ln, w, ln);
  if (!rc) rc = lu_with_signs(ex, dt, w, n, sgn);
  /* the vectors below the top block: Q's rows U⁻¹, (A R1⁻¹) (U R2)⁻¹ or A (U R1)⁻¹ */
  if (!rc && tsr_cuda_triangle(dt, w, ln, n, 'U', x, ln, ex->stream)) rc = TESSERA_ERR_KERNEL;
  if (!rc) rc = tsr_qr_trmm_upper(ex, &staging, dt, 'R', n, n, 1, last, ln, x, ln);
  if (!rc) rc = inverse(ex, dt, x, ln, n, inv2);
  if (!rc && rows > n)
    rc = vectors(ex, s, dt, a + ln * es, lda, rows - n, n, one ? NULL : inv1, inv2, rest);
  /* R = S R2 R1 (S R1) and the vectors of the top block into A; T = -U S L1⁻ᵀ */
  if (!rc && tsr_cuda_triangle(dt, last, ln, n, 'U', x, ln, ex->stream)) rc = TESSERA_ERR_KERNEL;
  if (!rc && !one) rc = tsr_qr_trmm_upper(ex, &staging, dt, 'R', n, n, 1, g1, ln, x, ln);
  if (!rc && tsr_cuda_tall_finish(dt, x, ln, w, ln, sgn, n, a, la, t, (size_t)ldt, ex->stream))
    rc = TESSERA_ERR_KERNEL;
  if (!rc) rc = tsr_qr_trsm(ex, dt, 'R', 'L', 'T', 'U', n, n, 1, w, ln, t, (size_t)ldt);
  return rc;
}
