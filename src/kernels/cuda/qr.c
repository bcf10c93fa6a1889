/* CUDA tile kernels of QR on column panels: geqrt (cuSOLVER's geqrf on the panel's rows, then
 * its T) and larft (T from the vectors and a tau already in device memory).
 *
 * T comes from the Gram matrix of the reflectors' vectors, G = Vᴴ V = V1ᴴ V1 + V2ᴴ V2 (V1 the unit
 * lower k x k top, made explicit in the workspace; V2 the rows below it, read in place), two
 * gemms; then the column recurrence on diagonal blocks of LARFT_BLOCK columns (kernels.cu) and
 * the blocks joined pairwise by trmms, so that nearly all of the work is BLAS-3. Workspace (the
 * worker's scratch): tau, V1, G, the trmms' staging, then cuSOLVER's own; a request beyond it
 * fails with TESSERA_ERR_KERNEL before anything is enqueued. */
#include "kernels/cuda/cuda_common.h"
#include "kernels/cuda/cuda_kernels.h"

typedef struct {
  cusolverStatus_t (*size)(cusolverDnHandle_t, int, int, void *, int, int *);
  cusolverStatus_t (*run)(cusolverDnHandle_t, int, int, void *, int, void *, void *, int, int *);
} geqrf_routine_t;
#define GEQRF(t, T)                                                                                \
  static cusolverStatus_t t##geqrf_size(cusolverDnHandle_t h, int m, int n, void *A, int lda,      \
                                        int *lwork) {                                              \
    return cusolverDn##t##geqrf_bufferSize(h, m, n, A, lda, lwork);                                \
  }                                                                                                \
  static cusolverStatus_t t##geqrf(cusolverDnHandle_t h, int m, int n, void *A, int lda,           \
                                   void *tau, void *work, int lwork, int *info) {                  \
    return cusolverDn##t##geqrf(h, m, n, A, lda, tau, work, lwork, info);                          \
  }
GEQRF(S, float)
GEQRF(D, double)
GEQRF(C, cuComplex)
GEQRF(Z, cuDoubleComplex)
static const geqrf_routine_t geqrf_of[TESSERA_NUM_DTYPES] = {
    {Sgeqrf_size, Sgeqrf}, {Dgeqrf_size, Dgeqrf}, {Cgeqrf_size, Cgeqrf}, {Zgeqrf_size, Zgeqrf}};

/* Bytes rounded up to the workspace's alignment. */
static size_t aligned(size_t bytes) {
  return (bytes + 255) / 256 * 256;
}

/* Columns of T's diagonal blocks formed by the column recurrence; the blocks are then joined
 * by triangular products, level by level. */
enum { LARFT_BLOCK = 32 };

/* Workspace bytes form_t takes for k reflectors: V1 and G (k x k each), and the staging of the
 * joins' triangular products (at most k/2 x k/2). */
static size_t form_t_bytes(tessera_dtype_t dt, int k) {
  const size_t es = tessera_dtype_size(dt), kk = (size_t)k * (size_t)k * es;
  return 2 * aligned(kk) + aligned(kk / 4 + es);
}

/* T (ldt) of the k reflectors whose vectors are the columns of v (rows x k, ldv, from the
 * panel's row r0) and whose scalars are `tau` (device memory), through V1 and G at `work`:
 * G = Vᴴ V by two gemms; the diagonal blocks' T and G's upper blocks (tsr_cuda_larft_blocks);
 * then each pair of neighbouring blocks joined, T12 = -T1 G12 T2, by two trmms in place. */
static int form_t(const tessera_exec_t *ex, const tessera_cuda_scratch_t *s, tessera_dtype_t dt,
                  const void *v, int ldv, int rows, int k, const void *tau, void *t, size_t ldt,
                  char *work) {
  const size_t es = tessera_dtype_size(dt), kk = aligned((size_t)k * (size_t)k * es);
  void *v1 = work, *g = work + kk;
  if (tsr_cuda_unit_lower(dt, v, (size_t)ldv, k, v1, (size_t)k, ex->stream))
    return TESSERA_ERR_KERNEL;
  /* the trmms stage their products after G */
  tessera_cuda_scratch_t staging = *s;
  staging.workspace = work + 2 * kk;
  staging.workspace_bytes = s->workspace_bytes - (size_t)(work + 2 * kk - (char *)s->workspace);
  tessera_exec_t e = *ex;
  e.scratch = &staging;
  e.ndata = 3;
  const char conj = tsr_dtype_complex(dt) ? 'C' : 'T';
  tsr_gemm_args_t m = {.dtype = dt,
                       .transa = conj,
                       .transb = 'N',
                       .m = k,
                       .n = k,
                       .k = k,
                       .alpha = {1, 0},
                       .beta = {0, 0}};
  e.ptr[0] = v1, e.ld[0] = (size_t)k; /* G = V1ᴴ V1 */
  e.ptr[1] = v1, e.ld[1] = (size_t)k;
  e.ptr[2] = g, e.ld[2] = (size_t)k;
  int rc = tsr_cuda_gemm(&e, &m);
  if (!rc && rows > k) { /* G += V2ᴴ V2 */
    const char *v2 = (const char *)v + (size_t)k * es;
    e.ptr[0] = (void *)v2, e.ld[0] = (size_t)ldv;
    e.ptr[1] = (void *)v2, e.ld[1] = (size_t)ldv;
    m.k = rows - k, m.beta = (tsr_scalar_t){1, 0};
    rc = tsr_cuda_gemm(&e, &m);
  }
  if (!rc && tsr_cuda_larft_blocks(dt, g, (size_t)k, tau, k, LARFT_BLOCK, t, ldt, ex->stream))
    rc = TESSERA_ERR_KERNEL;
  tsr_trmm_args_t tm = {.dtype = dt, .uplo = 'U', .trans = 'N', .diag = 'N'};
  e.ndata = 2;
  e.ld[0] = e.ld[1] = ldt;
  for (int h = LARFT_BLOCK; !rc && h < k; h *= 2)
    for (int lo = 0; !rc && lo + h < k; lo += 2 * h) {
      const int mid = lo + h, hi = lo + 2 * h < k ? lo + 2 * h : k;
      tm.m = h, tm.n = hi - mid;
      void *t12 = (char *)t + ((size_t)mid * ldt + (size_t)lo) * es;
      e.ptr[0] = (char *)t + ((size_t)lo * ldt + (size_t)lo) * es; /* T12 = T1 G12 */
      e.ptr[1] = t12;
      tm.side = 'L', tm.alpha = (tsr_scalar_t){1, 0};
      rc = tsr_cuda_trmm(&e, &tm);
      e.ptr[0] = (char *)t + ((size_t)mid * ldt + (size_t)mid) * es; /* T12 = -T12 T2 */
      tm.side = 'R', tm.alpha = (tsr_scalar_t){-1, 0};
      if (!rc) rc = tsr_cuda_trmm(&e, &tm);
    }
  return rc;
}

int tsr_cuda_geqrt(const tessera_exec_t *ex, void *args) {
  const tsr_geqrt_args_t *a = args;
  const int rows = a->m - a->r0, k = rows < a->n ? rows : a->n;
  const int lda = tsr_operand_ld(ex, 0, a->m, a->n), ldt = tsr_operand_ld(ex, 1, k, k);
  const tessera_cuda_scratch_t *s = tsr_cuda_scratch(ex);
  cusolverDnHandle_t h = tsr_cuda_solver(ex);
  if (!tsr_dtype_valid(a->dtype) || a->r0 < 0 || rows < 0 || ex->ndata < 2 || lda < 0 || ldt < 0 ||
      !s || !h || !s->workspace || !s->dev_info)
    return TESSERA_ERR_KERNEL;
  if (k == 0) return 0;
  const size_t es = tessera_dtype_size(a->dtype);
  char *p = (char *)ex->ptr[0] + (size_t)a->r0 * es;
  const size_t tau_at = 0, t_at = aligned((size_t)k * es),
               lib_at = t_at + form_t_bytes(a->dtype, k);
  int lwork = 0;
  if (geqrf_of[a->dtype].size(h, rows, a->n, p, lda, &lwork) != CUSOLVER_STATUS_SUCCESS ||
      lib_at + (size_t)lwork * es > s->workspace_bytes)
    return TESSERA_ERR_KERNEL;
  char *w = s->workspace;
  if (geqrf_of[a->dtype].run(h, rows, a->n, p, lda, w + tau_at, w + lib_at, lwork, s->dev_info) !=
      CUSOLVER_STATUS_SUCCESS)
    return TESSERA_ERR_KERNEL;
  return form_t(ex, s, a->dtype, p, lda, rows, k, w + tau_at, ex->ptr[1], (size_t)ldt, w + t_at);
}

int tsr_cuda_larft(const tessera_exec_t *ex, void *args) {
  const tsr_larft_args_t *a = args;
  const int rows = a->m - a->r0;
  const int ldv = tsr_operand_ld(ex, 0, a->m, a->kb), ldt = tsr_operand_ld(ex, 2, a->kb, a->kb);
  const tessera_cuda_scratch_t *s = tsr_cuda_scratch(ex);
  if (!tsr_dtype_valid(a->dtype) || a->r0 < 0 || a->kb < 0 || rows < a->kb || ex->ndata < 3 ||
      ldv < 0 || ldt < 0 || tsr_operand_ld(ex, 1, a->kb, 1) < 0 || !s || !s->workspace)
    return TESSERA_ERR_KERNEL;
  if (a->kb == 0) return 0;
  const size_t es = tessera_dtype_size(a->dtype);
  if (form_t_bytes(a->dtype, a->kb) > s->workspace_bytes) return TESSERA_ERR_KERNEL;
  const char *v = (const char *)ex->ptr[0] + (size_t)a->r0 * es;
  return form_t(ex, s, a->dtype, v, ldv, rows, a->kb, ex->ptr[1], ex->ptr[2], (size_t)ldt,
                s->workspace);
}
