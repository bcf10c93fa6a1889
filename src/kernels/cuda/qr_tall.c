/* QR of a tall panel on a GPU (real dtypes, rows >= TALL_RATIO columns): CholeskyQR2 and
 * Householder reconstruction, with the output of LAPACK's Householder QR (R, the vectors below
 * it, T), in four passes over the panel instead of a chain of one-column steps:
 *
 *   G1 = Aᵀ A, R1 = chol(G1), Q1 = A R1⁻¹          (syrk, potrf, trsm)
 *   G2 = Q1ᵀ Q1, R2 = chol(G2)                      (syrk, potrf)
 *   Q's top block Q1t R2⁻¹ less signs S, factored without pivoting: L U (Ballard et al.)
 *   the vectors below: Q1b (U R2)⁻¹                 (trsm: Q2 U⁻¹ without forming Q2)
 *   R = S R2 R1, T = -U S L1⁻ᵀ
 *
 * CholeskyQR2 reaches Householder's orthogonality while A's condition number is well below
 * ε^(-1/2). The panel falls back to Householder (the caller's) when a Cholesky factorization
 * breaks down, or when R2's diagonal shows Q1 far from orthonormal; both are read on the host
 * (two synchronizations of the task's stream), and A is then as it was (A = Q1 R1 restored). */
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

/* G (n x n, upper) = Aᵀ A for A rows x n (lda). */
static int gram(const tessera_exec_t *ex, tessera_dtype_t dt, const void *a, int lda, int rows,
                int n, void *g) {
  tessera_exec_t e = *ex;
  e.ndata = 2;
  e.ptr[0] = (void *)a, e.ld[0] = (size_t)lda;
  e.ptr[1] = g, e.ld[1] = (size_t)n;
  tsr_syrk_args_t s = {
      .dtype = dt, .uplo = 'U', .trans = 'T', .n = n, .k = rows, .alpha = {1, 0}, .beta = {0, 0}};
  return tsr_cuda_syrk(&e, &s);
}

/* G's Cholesky factor in place (upper), then waits for the stream: *info is potrf's, and with
 * `diag` set, diag[0 .. n) receive the factor's diagonal (as doubles). */
static int cholesky(const tessera_exec_t *ex, const tessera_cuda_scratch_t *s, cusolverDnHandle_t h,
                    tessera_dtype_t dt, void *g, int n, char *work, int *info, double *diag) {
  const size_t es = tessera_dtype_size(dt);
  const size_t room = (s->workspace_bytes - (size_t)(work - (char *)s->workspace)) / es;
  char *host = s->host_workspace;
  int lwork = 0;
  if (potrf_size(h, dt, n, g, n, &lwork) != CUSOLVER_STATUS_SUCCESS || (size_t)lwork > room ||
      (size_t)n * es + sizeof(int) > s->host_workspace_bytes ||
      potrf(h, dt, n, g, n, work, lwork, s->dev_info) != CUSOLVER_STATUS_SUCCESS)
    return TESSERA_ERR_KERNEL;
  cudaStream_t st = ex->stream;
  if (cudaMemcpyAsync(host, s->dev_info, sizeof(int), cudaMemcpyDeviceToHost, st) != cudaSuccess ||
      (diag && cudaMemcpy2DAsync(host + sizeof(int), es, g, ((size_t)n + 1) * es, es, (size_t)n,
                                 cudaMemcpyDeviceToHost, st) != cudaSuccess) ||
      cudaStreamSynchronize(st) != cudaSuccess)
    return TESSERA_ERR_KERNEL;
  *info = *(const int *)(const void *)host;
  for (int i = 0; diag && i < n; i++)
    diag[i] = dt == TESSERA_F32 ? (double)((const float *)(const void *)(host + sizeof(int)))[i]
                                : ((const double *)(const void *)(host + sizeof(int)))[i];
  return 0;
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
  return 4 * tsr_qr_aligned((size_t)n * (size_t)n * es) + tsr_qr_aligned((size_t)n * es);
}

int tsr_cuda_geqrt_tall(const tessera_exec_t *ex, const tessera_cuda_scratch_t *s,
                        cusolverDnHandle_t h, tessera_dtype_t dt, char *a, int lda, int rows, int n,
                        char *t, int ldt) {
  const size_t es = tessera_dtype_size(dt), nn = tsr_qr_aligned((size_t)n * (size_t)n * es);
  if ((dt != TESSERA_F32 && dt != TESSERA_F64) || rows < n ||
      tsr_cuda_geqrt_tall_bytes(dt, n) > s->workspace_bytes || n > (int)s->host_workspace_bytes)
    return 1;
  char *g1 = s->workspace, *g2 = g1 + nn, *w = g2 + nn, *x = w + nn, *sgn = x + nn;
  char *rest = sgn + tsr_qr_aligned((size_t)n * es);
  const tessera_cuda_scratch_t staging =
      tsr_qr_scratch_from(s, (size_t)(rest - (char *)s->workspace));
  const size_t ln = (size_t)n, la = (size_t)lda;
  double *diag = malloc((size_t)n * sizeof *diag);
  if (!diag) return TESSERA_ERR_NOMEM;
  int info = 0;
  /* pass 1: A = Q1 R1 */
  int rc = gram(ex, dt, a, lda, rows, n, g1);
  if (!rc) rc = cholesky(ex, s, h, dt, g1, n, rest, &info, NULL);
  if (!rc && info) rc = 1;
  if (!rc) rc = tsr_qr_trsm(ex, dt, 'R', 'U', 'N', 'N', rows, n, 1, g1, ln, a, la);
  /* pass 2: Q1 = Q R2, kept only where Q1 was close to orthonormal */
  if (!rc) rc = gram(ex, dt, a, lda, rows, n, g2);
  if (!rc) rc = cholesky(ex, s, h, dt, g2, n, rest, &info, diag);
  if (!rc && (info || !near_orthonormal(diag, n))) {
    rc = tsr_qr_trmm_upper(ex, &staging, dt, 'R', rows, n, 1, g1, ln, a, la); /* A again */
    if (!rc) rc = 1;
  }
  free(diag);
  if (rc) return rc;
  /* Q's top block, less the signs, as L U */
  if (cudaMemcpy2DAsync(w, ln * es, a, la * es, ln * es, ln, cudaMemcpyDeviceToDevice,
                        ex->stream) != cudaSuccess)
    return TESSERA_ERR_KERNEL;
  rc = tsr_qr_trsm(ex, dt, 'R', 'U', 'N', 'N', n, n, 1, g2, ln, w, ln);
  if (!rc && tsr_cuda_lu_signs(dt, w, ln, n, sgn, ex->stream)) rc = TESSERA_ERR_KERNEL;
  /* the vectors below the top block: Q1b (U R2)⁻¹ */
  if (!rc && tsr_cuda_triangle(dt, w, ln, n, 'U', x, ln, ex->stream)) rc = TESSERA_ERR_KERNEL;
  if (!rc) rc = tsr_qr_trmm_upper(ex, &staging, dt, 'R', n, n, 1, g2, ln, x, ln);
  if (!rc && rows > n)
    rc = tsr_qr_trsm(ex, dt, 'R', 'U', 'N', 'N', rows - n, n, 1, x, ln, a + ln * es, la);
  /* R = S R2 R1 and the vectors of the top block into A; T = -U S L1⁻ᵀ */
  if (!rc && tsr_cuda_triangle(dt, g2, ln, n, 'U', x, ln, ex->stream)) rc = TESSERA_ERR_KERNEL;
  if (!rc) rc = tsr_qr_trmm_upper(ex, &staging, dt, 'R', n, n, 1, g1, ln, x, ln);
  if (!rc && tsr_cuda_tall_finish(dt, x, ln, w, ln, sgn, n, a, la, t, (size_t)ldt, ex->stream))
    rc = TESSERA_ERR_KERNEL;
  if (!rc) rc = tsr_qr_trsm(ex, dt, 'R', 'L', 'T', 'U', n, n, 1, w, ln, t, (size_t)ldt);
  return rc;
}
