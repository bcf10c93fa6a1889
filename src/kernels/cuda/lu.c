/* CUDA tile kernels of the LU family (lu.h) through cuSOLVER: getrf and laswp, with the NaN
 * column scans, the interchanges' permutation and the row gather of lu.cu; lu_step (lu_step.c)
 * onto laswp, trsm, trmm and gemm; and gesv, the whole solve.
 *
 * Each kernel checks its arguments like its CPU twin (cpu/lu.c), binds the worker's cuSOLVER
 * handle to ex->stream and enqueues the routine with the worker's workspaces
 * (tessera_cuda_scratch_t): a routine asking for more workspace than the scratch holds fails
 * with TESSERA_ERR_KERNEL before anything is enqueued. Nothing synchronises or allocates.
 */
#include "kernels/cuda/cuda_common.h"
#include "kernels/cuda/cuda_kernels.h"
#include "kernels/lu.h"

/* ---------------------------------------------------------------- getrf, laswp */

/* The typed getrf and laswp of one dtype, through one signature (32-bit pivots, as the pivot
 * handles hold them). */
typedef struct {
  cusolverStatus_t (*size)(cusolverDnHandle_t, int, int, void *, int, int *);
  cusolverStatus_t (*run)(cusolverDnHandle_t, int, int, void *, int, void *, int *, int *);
  cusolverStatus_t (*swap)(cusolverDnHandle_t, int, void *, int, int, int, const int *, int);
} lu_routine_t;
#define LU_ROUTINE(t, T)                                                                           \
  static cusolverStatus_t t##getrf_size(cusolverDnHandle_t h, int m, int n, void *A, int lda,      \
                                        int *lwork) {                                              \
    return cusolverDn##t##getrf_bufferSize(h, m, n, A, lda, lwork);                                \
  }                                                                                                \
  static cusolverStatus_t t##getrf(cusolverDnHandle_t h, int m, int n, void *A, int lda,           \
                                   void *work, int *ipiv, int *info) {                             \
    return cusolverDn##t##getrf(h, m, n, A, lda, work, ipiv, info);                                \
  }                                                                                                \
  static cusolverStatus_t t##laswp(cusolverDnHandle_t h, int n, void *A, int lda, int k1, int k2,  \
                                   const int *ipiv, int incx) {                                    \
    return cusolverDn##t##laswp(h, n, A, lda, k1, k2, ipiv, incx);                                 \
  }
LU_ROUTINE(S, float)
LU_ROUTINE(D, double)
LU_ROUTINE(C, cuComplex)
LU_ROUTINE(Z, cuDoubleComplex)
static const lu_routine_t lu_of[TESSERA_NUM_DTYPES] = {{Sgetrf_size, Sgetrf, Slaswp},
                                                       {Dgetrf_size, Dgetrf, Dlaswp},
                                                       {Cgetrf_size, Cgetrf, Claswp},
                                                       {Zgetrf_size, Zgetrf, Zlaswp}};

/* L11⁻¹ into buffer 2 of ex (getrf's inv, whole: zeros above its unit diagonal): the identity,
 * solved with L11, the unit lower k x k block of the factors at p (a trsm at a fraction of
 * cuBLAS's gemm rate, once per panel, where every later panel's update then runs a gemm). */
static int lower_inverse(const tessera_exec_t *ex, tessera_dtype_t dt, void *p, int lda, int k) {
  const int ldi = tsr_operand_ld(ex, 2, k, k);
  if (ldi < 0 || tsr_cuda_identity_block(dt, ex->ptr[2], (size_t)ldi, k, k, 0, ex->stream))
    return TESSERA_ERR_KERNEL;
  tessera_exec_t e = *ex;
  e.ndata = 2;
  e.ptr[0] = p, e.ld[0] = (size_t)lda;
  e.ptr[1] = ex->ptr[2], e.ld[1] = ex->ld[2];
  tsr_trsm_args_t t = {.dtype = dt,
                       .side = 'L',
                       .uplo = 'L',
                       .trans = 'N',
                       .diag = 'U',
                       .m = k,
                       .n = k,
                       .alpha = {1, 0}};
  return tsr_cuda_trsm(&e, &t);
}

/* cuSOLVER's info and pivots go straight into the pivot handle (piv[0], piv[1 ..]); scans of
 * the block lower the info to the first column holding a NaN, and the pivots' permutation is
 * computed for the swaps (lu.cu). The block is scanned before the factorization too:
 * cuSOLVER's pivot search passes over NaN, and its factors may then hold none (the NaN row
 * interchanged away), while a NaN in column c of the block is one in column c of LAPACK's
 * factors, whose columns each depend on the columns before them only; that column is then
 * made NaN, as LAPACK's factors would hold it and the later updates carry it on. */
int tsr_cuda_getrf(const tessera_exec_t *ex, void *args) {
  const tsr_getrf_args_t *a = args;
  const int lda = tsr_operand_ld(ex, 0, a->m, a->n);
  cusolverDnHandle_t h = NULL;
  const tessera_cuda_scratch_t *s = tsr_cuda_solver_scratch(ex, &h);
  if (!tsr_dtype_valid(a->dtype) || a->r0 < 0 || a->r0 > a->m || lda < 0 || !s || ex->ndata < 2 ||
      !ex->ptr[1])
    return TESSERA_ERR_KERNEL;
  int *piv = ex->ptr[1];
  const int rows = a->m - a->r0;
  cudaStream_t stream = ex->stream;
  if (rows == 0 || a->n == 0)
    return tsr_cuda_enqueued(cudaMemsetAsync(piv, 0, sizeof *piv, stream));
  char *p = (char *)ex->ptr[0] + (size_t)a->r0 * tessera_dtype_size(a->dtype);
  const lu_routine_t *r = &lu_of[a->dtype];
  const size_t cap = s->workspace_bytes / tessera_dtype_size(a->dtype);
  int lwork = 0;
  if (r->size(h, rows, a->n, p, lda, &lwork) != CUSOLVER_STATUS_SUCCESS || (size_t)lwork > cap ||
      cudaMemsetAsync(s->dev_info, 0, sizeof *s->dev_info, stream) != cudaSuccess ||
      tsr_cuda_nan_columns(a->dtype, p, (size_t)lda, rows, a->n, s->dev_info, s->workspace,
                           stream) ||
      r->run(h, rows, a->n, p, lda, s->workspace, piv + 1, piv) != CUSOLVER_STATUS_SUCCESS)
    return TESSERA_ERR_KERNEL;
  const int k = rows < a->n ? rows : a->n;
  if (tsr_cuda_nan_columns(a->dtype, p, (size_t)lda, rows, a->n, piv, s->workspace, stream) ||
      tsr_cuda_nan_column(a->dtype, p, (size_t)lda, rows, a->n, s->dev_info, stream) ||
      tsr_cuda_merge_info(s->dev_info, piv, stream) || tsr_cuda_lu_swaps(piv, k, stream))
    return TESSERA_ERR_KERNEL;
  return ex->ndata > 2 ? lower_inverse(ex, a->dtype, p, lda, k) : 0;
}

int tsr_cuda_laswp(const tessera_exec_t *ex, void *args) {
  const tsr_laswp_args_t *a = args;
  const int lda = tsr_operand_ld(ex, 0, a->m, a->n);
  cusolverDnHandle_t h = NULL;
  const tessera_cuda_scratch_t *s = tsr_cuda_solver_scratch(ex, &h);
  if (!tsr_dtype_valid(a->dtype) || a->r0 < 0 || a->k < 0 || (int64_t)a->r0 + a->k > a->m ||
      (a->incx != 1 && a->incx != -1) || lda < 0 || !s || ex->ndata < 2 ||
      (!ex->ptr[1] && a->k > 0))
    return TESSERA_ERR_KERNEL;
  if (a->k == 0 || a->n == 0) return 0;
  char *p = (char *)ex->ptr[0] + (size_t)a->r0 * tessera_dtype_size(a->dtype);
  const int *piv = ex->ptr[1];
  /* Up to TSR_CUDA_SWAPS_MAX pivots, the handle holds their permutation (computed by the panel,
   * on any device, or by the host): all rows of a column move at once. Beyond, cuSOLVER's
   * laswp, one interchange after the other. */
  if (a->k <= TSR_CUDA_SWAPS_MAX)
    return tsr_cuda_row_gather(a->dtype, p, (size_t)lda, a->n, piv, a->k, a->incx, ex->stream)
               ? TESSERA_ERR_KERNEL
               : 0;
  return lu_of[a->dtype].swap(h, a->n, p, lda, 1, a->k, piv + 1, a->incx) == CUSOLVER_STATUS_SUCCESS
             ? 0
             : TESSERA_ERR_KERNEL;
}

int tsr_cuda_lu_step(const tessera_exec_t *ex, void *args) {
  return tsr_lu_step(ex, args, tsr_cuda_laswp, tsr_cuda_trsm_blocked, tsr_cuda_trmm_dense,
                     tsr_cuda_gemm);
}

/* ---------------------------------------------------------------- gesv */

/* The pivots live at the end of the scratch's workspace, out of reach of getrf's own use of
 * it (a copy of the scratch with a shorter workspace); getrf leaves its info in piv[0], copied
 * into the caller's int. */
int tsr_cuda_gesv(const tessera_exec_t *ex, void *args) {
  const tsr_gesv_args_t *a = args;
  cusolverDnHandle_t h = NULL;
  const tessera_cuda_scratch_t *s = tsr_cuda_solver_scratch(ex, &h);
  const size_t piv_bytes = (size_t)TSR_PIV_INTS(a->n) * sizeof(int);
  if (!tsr_dtype_valid(a->dtype) || tsr_letter(a->trans, "NTC") < 0 || !s || ex->ndata < 3 ||
      !ex->ptr[2] || tsr_operand_ld(ex, 0, a->n, a->n) < 0 ||
      tsr_operand_ld(ex, 1, a->n, a->nrhs) < 0 || s->workspace_bytes < piv_bytes + 256)
    return TESSERA_ERR_KERNEL;
  tessera_cuda_scratch_t mine = *s;
  mine.workspace_bytes = (s->workspace_bytes - piv_bytes) / 256 * 256;
  int *piv = (int *)((char *)s->workspace + mine.workspace_bytes);
  tessera_exec_t e = *ex;
  e.scratch = &mine;
  e.ptr[1] = piv; /* getrf's buffers: {A, piv} */
  e.ld[1] = (size_t)TSR_PIV_INTS(a->n);
  e.ndata = 2;
  const tsr_getrf_args_t f = {.dtype = a->dtype, .m = a->n, .n = a->n};
  int rc = tsr_cuda_getrf(&e, (void *)&f);
  if (!rc)
    rc = tsr_cuda_enqueued(
        cudaMemcpyAsync(ex->ptr[2], piv, sizeof(int), cudaMemcpyDefault, (cudaStream_t)ex->stream));
  e = *ex;
  e.scratch = &mine;
  e.ptr[3] = piv;
  e.ld[3] = (size_t)TSR_PIV_INTS(a->n);
  e.ndata = 4;
  return rc ? rc : tsr_getrs_whole(&e, a, tsr_cuda_laswp, tsr_cuda_trsm_blocked);
}
