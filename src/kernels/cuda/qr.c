/* CUDA tile kernels of QR on column panels: geqrt, larft and qr_step.
 *
 * geqrt factors a panel recursively (LAPACK's geqrt3 order): the left half, its reflectors
 * applied to the right half, the right half, then T's off-diagonal block T12 = -T1 (V1ᴴ V2) T2;
 * below BASE_COLUMNS columns, cuSOLVER's geqrf and T from tau. So a wide panel is mostly gemms.
 *
 * T from tau (larft, and geqrt's base) comes from the Gram matrix of the reflectors' vectors,
 * G = Vᴴ V = V1ᴴ V1 + V2ᴴ V2 (V1 the unit lower k x k top, made explicit in the workspace; V2 the
 * rows below it, read in place), two gemms; then the column recurrence on diagonal blocks of
 * LARFT_BLOCK columns (householder.cu) and the blocks joined pairwise by trmms.
 *
 * A tall matrix's only panel (rows >= TALL_RATIO columns, real dtypes) is factored by
 * CholeskyQR2 and Householder reconstruction (qr_tall.c) where that is accurate; its two host
 * synchronizations would stall the updates of a wider matrix's panels.
 *
 * qr_step applies a block reflector by five gemms on explicit copies of V1 (unit lower) and T
 * (upper): cuBLAS's trmm runs at a fraction of its gemm rate. When the copies do not fit in the
 * workspace it runs the device-independent qr_step.
 *
 * Workspace: the worker's scratch, used from its start by each step in turn (all is ordered on
 * the task's stream); a request beyond it fails with TESSERA_ERR_KERNEL before anything is
 * enqueued. */
#include "kernels/copy.h"
#include "kernels/cuda/cuda_common.h"
#include "kernels/cuda/cuda_kernels.h"
#include "kernels/cuda/qr_ops.h"
#include "kernels/qr.h"

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

/* Columns of T's diagonal blocks formed by the column recurrence; the blocks are then joined
 * by triangular products, level by level. Panels of at most BASE_COLUMNS columns are factored
 * by cuSOLVER's geqrf. */
enum { LARFT_BLOCK = 32, BASE_COLUMNS = 256 };

/* Rows per column from which a panel is factored by CholeskyQR2 (qr_tall.c). */
enum { TALL_RATIO = 16 };

/* Workspace bytes form_t takes for k reflectors: V1 and G (k x k each), and the staging of the
 * joins' triangular products (at most k/2 x k/2). */
static size_t form_t_bytes(tessera_dtype_t dt, int k) {
  const size_t es = tessera_dtype_size(dt), kk = (size_t)k * (size_t)k * es;
  return 2 * tsr_qr_aligned(kk) + tsr_qr_aligned(kk / 4 + es);
}

/* T (ldt) of the k reflectors whose vectors are the columns of v (rows x k, ldv) and whose
 * scalars are `tau` (device memory), through V1 and G at `work` (form_t_bytes): G = Vᴴ V by two
 * gemms; the diagonal blocks' T and G's upper blocks (tsr_cuda_larft_blocks); then each pair of
 * neighbouring blocks joined, T12 = -T1 G12 T2, by two trmms in place. */
static int form_t(const tessera_exec_t *ex, const tessera_cuda_scratch_t *s, tessera_dtype_t dt,
                  const void *v, int ldv, int rows, int k, const void *tau, void *t, size_t ldt,
                  char *work) {
  const size_t es = tessera_dtype_size(dt), kk = tsr_qr_aligned((size_t)k * (size_t)k * es);
  char *v1 = work, *g = work + kk;
  const char conj = tsr_dtype_complex(dt) ? 'C' : 'T';
  const tessera_cuda_scratch_t staging =
      tsr_qr_scratch_from(s, (size_t)(work + 2 * kk - (char *)s->workspace));
  int rc = tsr_cuda_triangle(dt, v, (size_t)ldv, k, 'L', v1, (size_t)k, ex->stream)
               ? TESSERA_ERR_KERNEL
               : tsr_qr_gemm(ex, dt, conj, 'N', k, k, k, 1, v1, (size_t)k, v1, (size_t)k, 0, g,
                             (size_t)k);
  if (!rc && rows > k) {
    const char *v2 = (const char *)v + (size_t)k * es;
    rc = tsr_qr_gemm(ex, dt, conj, 'N', k, k, rows - k, 1, v2, (size_t)ldv, v2, (size_t)ldv, 1, g,
                     (size_t)k);
  }
  if (!rc && tsr_cuda_larft_blocks(dt, g, (size_t)k, tau, k, LARFT_BLOCK, t, ldt, ex->stream))
    rc = TESSERA_ERR_KERNEL;
  for (int h = LARFT_BLOCK; !rc && h < k; h *= 2)
    for (int lo = 0; !rc && lo + h < k; lo += 2 * h) {
      const int mid = lo + h, hi = lo + 2 * h < k ? lo + 2 * h : k;
      char *t12 = (char *)t + ((size_t)mid * ldt + (size_t)lo) * es;
      rc = tsr_qr_trmm_upper(ex, &staging, dt, 'L', h, hi - mid, 1,
                             (char *)t + ((size_t)lo * ldt + (size_t)lo) * es, ldt, t12, ldt);
      if (!rc)
        rc = tsr_qr_trmm_upper(ex, &staging, dt, 'R', h, hi - mid, -1,
                               (char *)t + ((size_t)mid * ldt + (size_t)mid) * es, ldt, t12, ldt);
    }
  return rc;
}

/* Workspace bytes of apply_block for kb reflectors on n columns (W in the workspace or not). */
static size_t apply_bytes(tessera_dtype_t dt, int kb, int n, bool own_w) {
  const size_t es = tessera_dtype_size(dt), kk = tsr_qr_aligned((size_t)kb * (size_t)kb * es);
  return 2 * kk + (own_w ? 2 : 1) * tsr_qr_aligned((size_t)kb * (size_t)n * es);
}

/* C = op(Q) C with Q = I - V T Vᴴ, V the kb vectors (rows x kb, ldv, unit lower on top) and T
 * (ldt, its upper triangle read), C rows x n (ldc); op 'N' or the conjugate transpose. W (kb x
 * n, ldw) is given, or taken from the workspace when NULL (apply_bytes):
 *   W = V1ᴴ C1 + V2ᴴ C2;  W2 = op(T) W;  C2 -= V2 W2;  C1 -= V1 W2. */
static int apply_block(const tessera_exec_t *ex, const tessera_cuda_scratch_t *s,
                       tessera_dtype_t dt, char op, const char *v, int ldv, int rows, int kb,
                       const void *T, int ldt, char *c, int ldc, int n, char *w, int ldw) {
  const size_t es = tessera_dtype_size(dt), kk = tsr_qr_aligned((size_t)kb * (size_t)kb * es);
  char *v1 = s->workspace, *tx = v1 + kk, *w2 = tx + kk;
  if (!w) w = w2 + tsr_qr_aligned((size_t)kb * (size_t)n * es), ldw = kb;
  const char conj = tsr_dtype_complex(dt) ? 'C' : 'T';
  const int below = rows - kb;
  const size_t k = (size_t)kb;
  int rc =
      tsr_cuda_triangle(dt, v, (size_t)ldv, kb, 'L', v1, k, ex->stream) ||
              tsr_cuda_triangle(dt, T, (size_t)ldt, kb, 'U', tx, k, ex->stream)
          ? TESSERA_ERR_KERNEL
          : tsr_qr_gemm(ex, dt, conj, 'N', kb, n, kb, 1, v1, k, c, (size_t)ldc, 0, w, (size_t)ldw);
  if (!rc && below > 0)
    rc = tsr_qr_gemm(ex, dt, conj, 'N', kb, n, below, 1, v + k * es, (size_t)ldv, c + k * es,
                     (size_t)ldc, 1, w, (size_t)ldw);
  if (!rc) rc = tsr_qr_gemm(ex, dt, op, 'N', kb, n, kb, 1, tx, k, w, (size_t)ldw, 0, w2, k);
  if (!rc && below > 0)
    rc = tsr_qr_gemm(ex, dt, 'N', 'N', below, n, kb, -1, v + k * es, (size_t)ldv, w2, k, 1,
                     c + k * es, (size_t)ldc);
  if (!rc) rc = tsr_qr_gemm(ex, dt, 'N', 'N', kb, n, kb, -1, v1, k, w2, k, 1, c, (size_t)ldc);
  return rc;
}

/* Workspace bytes of join_t for n1 and n2 reflectors. */
static size_t join_bytes(tessera_dtype_t dt, int n1, int n2) {
  const size_t es = tessera_dtype_size(dt);
  return tsr_qr_aligned((size_t)n2 * (size_t)n2 * es) +
         tsr_qr_aligned((size_t)n1 * (size_t)n2 * es);
}

/* T (ldt) of the n1 + n2 reflectors of v (rows x (n1 + n2), ldv; rows >= n1 + n2) from its
 * diagonal blocks T1 and T2: T12 = -T1 G12 T2, G12 = V1ᴴ V2 over the rows from n1 (V2's unit
 * lower top made explicit in the workspace, then the rows below it). */
static int join_t(const tessera_exec_t *ex, const tessera_cuda_scratch_t *s, tessera_dtype_t dt,
                  const char *v, int ldv, int rows, int n1, int n2, char *t, int ldt) {
  const size_t es = tessera_dtype_size(dt), ld = (size_t)ldv, lt = (size_t)ldt;
  const int n = n1 + n2;
  const char *v2 = v + ((size_t)n1 * ld + (size_t)n1) * es;
  char *t12 = t + (size_t)n1 * lt * es, *t22 = t12 + (size_t)n1 * es, *v2x = s->workspace;
  const char conj = tsr_dtype_complex(dt) ? 'C' : 'T';
  int rc = tsr_cuda_triangle(dt, v2, ld, n2, 'L', v2x, (size_t)n2, ex->stream)
               ? TESSERA_ERR_KERNEL
               : tsr_qr_gemm(ex, dt, conj, 'N', n1, n2, n2, 1, v + (size_t)n1 * es, ld, v2x,
                             (size_t)n2, 0, t12, lt);
  if (!rc && rows > n)
    rc = tsr_qr_gemm(ex, dt, conj, 'N', n1, n2, rows - n, 1, v + (size_t)n * es, ld,
                     v2 + (size_t)n2 * es, ld, 1, t12, lt);
  const tessera_cuda_scratch_t staging =
      tsr_qr_scratch_from(s, tsr_qr_aligned((size_t)n2 * (size_t)n2 * es));
  if (!rc) rc = tsr_qr_trmm_upper(ex, &staging, dt, 'L', n1, n2, 1, t, lt, t12, lt);
  if (!rc) rc = tsr_qr_trmm_upper(ex, &staging, dt, 'R', n1, n2, -1, t22, lt, t12, lt);
  return rc;
}

/* cuSOLVER's geqrf of the rows x n block a (lda) and T (ldt) of its k = min(rows, n)
 * reflectors. */
static int geqrt_base(const tessera_exec_t *ex, const tessera_cuda_scratch_t *s,
                      cusolverDnHandle_t h, tessera_dtype_t dt, char *a, int lda, int rows, int n,
                      void *t, int ldt) {
  const int k = rows < n ? rows : n;
  const size_t es = tessera_dtype_size(dt);
  const size_t t_at = tsr_qr_aligned((size_t)k * es), lib_at = t_at + form_t_bytes(dt, k);
  int lwork = 0;
  if (geqrf_of[dt].size(h, rows, n, a, lda, &lwork) != CUSOLVER_STATUS_SUCCESS ||
      lib_at + (size_t)lwork * es > s->workspace_bytes)
    return TESSERA_ERR_KERNEL;
  char *w = s->workspace;
  if (geqrf_of[dt].run(h, rows, n, a, lda, w, w + lib_at, lwork, s->dev_info) !=
      CUSOLVER_STATUS_SUCCESS)
    return TESSERA_ERR_KERNEL;
  return form_t(ex, s, dt, a, lda, rows, k, w, t, (size_t)ldt, w + t_at);
}

/* Householder QR of the rows x n block a (lda) with T (ldt) of its reflectors, recursively:
 * the left n1 columns; their Qᴴ on the right n2; the right columns from row n1; then
 * T12 = -T1 G12 T2, G12 = V1ᴴ V2 over the rows from n1 (V2's unit lower top made explicit). */
static int geqrt_rec(const tessera_exec_t *ex, const tessera_cuda_scratch_t *s,
                     cusolverDnHandle_t h, tessera_dtype_t dt, char *a, int lda, int rows, int n,
                     char *t, int ldt) {
  if (n <= BASE_COLUMNS || rows <= n) return geqrt_base(ex, s, h, dt, a, lda, rows, n, t, ldt);
  const size_t es = tessera_dtype_size(dt), ld = (size_t)lda, lt = (size_t)ldt;
  const int n1 = n / 2, n2 = n - n1;
  char *a12 = a + (size_t)n1 * ld * es, *a22 = a12 + (size_t)n1 * es;
  char *t22 = t + ((size_t)n1 * lt + (size_t)n1) * es;
  if (apply_bytes(dt, n1, n2, true) > s->workspace_bytes ||
      join_bytes(dt, n1, n2) > s->workspace_bytes)
    return TESSERA_ERR_KERNEL;
  const char conj = tsr_dtype_complex(dt) ? 'C' : 'T';
  int rc = geqrt_rec(ex, s, h, dt, a, lda, rows, n1, t, ldt);
  if (!rc) rc = apply_block(ex, s, dt, conj, a, lda, rows, n1, t, ldt, a12, lda, n2, NULL, 0);
  if (!rc) rc = geqrt_rec(ex, s, h, dt, a22, lda, rows - n1, n2, t22, ldt);
  if (!rc) rc = join_t(ex, s, dt, a, lda, rows, n1, n2, t, ldt);
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
  char *p = (char *)ex->ptr[0] + (size_t)a->r0 * tessera_dtype_size(a->dtype);
  if (a->sole && rows >= TALL_RATIO * a->n) { /* a tall matrix: CholeskyQR2 where accurate */
    const int rc = tsr_cuda_geqrt_tall(ex, s, h, a->dtype, p, lda, rows, a->n, ex->ptr[1], ldt);
    if (rc <= 0) return rc;
  }
  return geqrt_rec(ex, s, h, a->dtype, p, lda, rows, a->n, ex->ptr[1], ldt);
}

/* T (ldt) of the k reflectors of v (rows x k, ldv) and tau (device memory): form_t where its
 * workspace fits, else the two halves' T joined. */
static int larft_rec(const tessera_exec_t *ex, const tessera_cuda_scratch_t *s, tessera_dtype_t dt,
                     const char *v, int ldv, int rows, int k, const char *tau, char *t, int ldt) {
  if (form_t_bytes(dt, k) <= s->workspace_bytes)
    return form_t(ex, s, dt, v, ldv, rows, k, tau, t, (size_t)ldt, s->workspace);
  const size_t es = tessera_dtype_size(dt);
  const int n1 = k / 2, n2 = k - n1;
  if (n1 == 0 || join_bytes(dt, n1, n2) > s->workspace_bytes) return TESSERA_ERR_KERNEL;
  int rc = larft_rec(ex, s, dt, v, ldv, rows, n1, tau, t, ldt);
  if (!rc)
    rc = larft_rec(ex, s, dt, v + ((size_t)n1 * (size_t)ldv + (size_t)n1) * es, ldv, rows - n1, n2,
                   tau + (size_t)n1 * es, t + ((size_t)n1 * (size_t)ldt + (size_t)n1) * es, ldt);
  return rc ? rc : join_t(ex, s, dt, v, ldv, rows, n1, n2, t, ldt);
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
  const char *v = (const char *)ex->ptr[0] + (size_t)a->r0 * tessera_dtype_size(a->dtype);
  return larft_rec(ex, s, a->dtype, v, ldv, rows, a->kb, ex->ptr[1], ex->ptr[2], ldt);
}

int tsr_cuda_qr_step(const tessera_exec_t *ex, void *args) {
  const tsr_qr_step_args_t *a = args;
  const tessera_cuda_scratch_t *s = tsr_cuda_scratch(ex);
  const int valid = tsr_qr_step_valid(ex, a);
  if (valid <= 0 || !s || !s->workspace ||
      apply_bytes(a->dtype, a->kb, a->n, false) > s->workspace_bytes)
    return tsr_qr_step(ex, a, tsr_cuda_lacpy, tsr_cuda_trmm, tsr_cuda_gemm, tsr_cuda_geadd);
  const size_t es = tessera_dtype_size(a->dtype), r0 = (size_t)a->r0 * es,
               c0 = (size_t)(a->c0 + a->r0) * es;
  const char op = a->trans == 'N' ? 'N' : tsr_dtype_complex(a->dtype) ? 'C' : 'T';
  return apply_block(ex, s, a->dtype, op, (const char *)ex->ptr[0] + r0, (int)ex->ld[0],
                     a->m - a->r0, a->kb, ex->ptr[2], (int)ex->ld[2], (char *)ex->ptr[1] + c0,
                     (int)ex->ld[1], a->n, ex->ptr[3], (int)ex->ld[3]);
}
