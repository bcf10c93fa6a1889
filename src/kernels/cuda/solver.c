/* CUDA tile kernels through cuSOLVER: potrf, trtri, lauum, getrf and laswp; lu_step (lu_step.c)
 * onto laswp, trsm, trmm and gemm; and logdiag (kernels.cu).
 *
 * Each kernel checks its arguments like its CPU twin (cpu/blas.c), binds the worker's cuSOLVER
 * handle to ex->stream and enqueues the routine with the worker's workspaces
 * (tessera_cuda_scratch_t): a routine asking for more workspace than the scratch holds fails
 * with TESSERA_ERR_KERNEL before anything is enqueued. Nothing synchronises or allocates.
 *
 * The library's info lands in scratch->dev_info; the kernel then enqueues its copy into
 * ex->async->info and sets ex->async->offset, and the runtime reads it once the stream has
 * passed (tessera/task.h). potrf and lauum take the typed routines (cusolverDn?potrf, ?lauum)
 * from per-dtype tables, which need no per-call parameter object; trtri takes the type-generic
 * cusolverDnXtrtri. trtri and lauum of large tiles run by recursive halving (trtri_blocked.c,
 * lauum_blocked.c) onto those routines and cuBLAS's trmm and herk.
 */
#include "kernels/cuda/cuda_common.h"
#include "kernels/cuda/cuda_kernels.h"

/* A typed cuSOLVER routine of the form run(h, uplo, n, A, lda, work, lwork, info) with its
 * size(h, uplo, n, A, lda, &lwork), through one signature for every dtype. */
typedef struct {
  cusolverStatus_t (*size)(cusolverDnHandle_t, cublasFillMode_t, int, void *, int, int *);
  cusolverStatus_t (*run)(cusolverDnHandle_t, cublasFillMode_t, int, void *, int, void *, int,
                          int *);
} uplo_routine_t;
#define UPLO_ROUTINE(name)                                                                         \
  static cusolverStatus_t name##_size(cusolverDnHandle_t h, cublasFillMode_t uplo, int n, void *A, \
                                      int lda, int *lwork) {                                       \
    return cusolverDn##name##_bufferSize(h, uplo, n, A, lda, lwork);                               \
  }                                                                                                \
  static cusolverStatus_t name(cusolverDnHandle_t h, cublasFillMode_t uplo, int n, void *A,        \
                               int lda, void *work, int lwork, int *info) {                        \
    return cusolverDn##name(h, uplo, n, A, lda, work, lwork, info);                                \
  }
UPLO_ROUTINE(Spotrf)
UPLO_ROUTINE(Dpotrf)
UPLO_ROUTINE(Cpotrf)
UPLO_ROUTINE(Zpotrf)
UPLO_ROUTINE(Slauum)
UPLO_ROUTINE(Dlauum)
UPLO_ROUTINE(Clauum)
UPLO_ROUTINE(Zlauum)
static const uplo_routine_t potrf_of[TESSERA_NUM_DTYPES] = {
    {Spotrf_size, Spotrf}, {Dpotrf_size, Dpotrf}, {Cpotrf_size, Cpotrf}, {Zpotrf_size, Zpotrf}};
static const uplo_routine_t lauum_of[TESSERA_NUM_DTYPES] = {
    {Slauum_size, Slauum}, {Dlauum_size, Dlauum}, {Clauum_size, Clauum}, {Zlauum_size, Zlauum}};

/* The scratch of `ex` with its cuSOLVER handle bound to ex->stream in *h, or NULL when the
 * worker's scratch lacks what the solver kernels use. */
static const tessera_cuda_scratch_t *solver_scratch(const tessera_exec_t *ex,
                                                    cusolverDnHandle_t *h) {
  const tessera_cuda_scratch_t *s = tsr_cuda_scratch(ex);
  if (!s || !s->dev_info || (!s->workspace && s->workspace_bytes > 0)) return NULL;
  *h = tsr_cuda_solver(ex);
  return *h ? s : NULL;
}

/* Runs the routine of `table` for `dt` (valid) on the n x n tile ex->ptr[0], info to
 * s->dev_info. A workspace request beyond the scratch's fails before anything is enqueued. */
static int run_uplo(const uplo_routine_t *table, const tessera_exec_t *ex,
                    const tessera_cuda_scratch_t *s, cusolverDnHandle_t h, tessera_dtype_t dt,
                    cublasFillMode_t uplo, int n, int lda) {
  const uplo_routine_t *r = &table[dt];
  size_t cap = s->workspace_bytes / tessera_dtype_size(dt);
  const int room = cap > INT_MAX ? INT_MAX : (int)cap;
  int lwork = 0;
  if (r->size(h, uplo, n, ex->ptr[0], lda, &lwork) != CUSOLVER_STATUS_SUCCESS || lwork > room ||
      r->run(h, uplo, n, ex->ptr[0], lda, s->workspace, lwork, s->dev_info) !=
          CUSOLVER_STATUS_SUCCESS)
    return TESSERA_ERR_KERNEL;
  return 0;
}

/* Enqueues the copy of s->dev_info into ex->async (which must be set) and records `offset`. */
static int report_info(const tessera_exec_t *ex, const tessera_cuda_scratch_t *s, int64_t offset) {
  ex->async->offset = offset;
  return tsr_cuda_enqueued(cudaMemcpyAsync(&ex->async->info, s->dev_info, sizeof(int),
                                           cudaMemcpyDeviceToHost, (cudaStream_t)ex->stream));
}

/* Order from which a potrf whose products take tensor cores (tsr_potrf_args_t.math) runs by
 * recursive halving (potrf_blocked.c) onto cuSOLVER's potrf of blocks up to this order. */
enum { POTRF_LEAF = 4096 };

/* A leaf of the recursive potrf: cuSOLVER's potrf of the block, then its failed pivot (if any)
 * made NaN for the scan after the last leaf, which reuses the info slot. */
static int potrf_leaf(const tessera_exec_t *ex, void *args) {
  const tsr_potrf_args_t *a = args;
  cusolverDnHandle_t h = NULL;
  const tessera_cuda_scratch_t *s = solver_scratch(ex, &h);
  const int lda = tsr_operand_ld(ex, 0, a->n, a->n);
  if (lda < 0 || !s ||
      run_uplo(potrf_of, ex, s, h, a->dtype, tsr_cuda_fill(tsr_letter(a->uplo, "UL")), a->n, lda))
    return TESSERA_ERR_KERNEL;
  return tsr_cuda_diag_poison(a->dtype, ex->ptr[0], (size_t)lda, s->dev_info, ex->stream)
             ? TESSERA_ERR_KERNEL
             : 0;
}

int tsr_cuda_potrf(const tessera_exec_t *ex, void *args) {
  const tsr_potrf_args_t *a = args;
  const int u = tsr_letter(a->uplo, "UL");
  if (!tsr_dtype_valid(a->dtype) || u < 0 || !ex->async) return TESSERA_ERR_KERNEL;
  const int lda = tsr_operand_ld(ex, 0, a->n, a->n);
  cusolverDnHandle_t h = NULL;
  const tessera_cuda_scratch_t *s = solver_scratch(ex, &h);
  if (lda < 0 || !s) return TESSERA_ERR_KERNEL;
  if (a->n == 0) return 0;
  int status = 0;
  if (a->math && tsr_dtype_single(a->dtype) && a->n > POTRF_LEAF) {
    /* the leaves' infos became NaN pivots: the scan below finds the first */
    status = tsr_potrf_blocked(ex, a, potrf_leaf, tsr_cuda_trsm_blocked, tsr_cuda_syrk,
                               tsr_cuda_gemm, POTRF_LEAF);
    if (!status)
      status = tsr_cuda_enqueued(cudaMemsetAsync(s->dev_info, 0, sizeof(int), ex->stream));
  } else {
    status = run_uplo(potrf_of, ex, s, h, a->dtype, tsr_cuda_fill(u), a->n, lda);
  }
  if (status) return status;
  /* cuSOLVER's pivot test may let a NaN through: the scan reports the first NaN pivot before
   * any failure cuSOLVER found, as the CPU kernel does, before the info is copied out. */
  if (tsr_cuda_diag_nan_check(a->dtype, ex->ptr[0], (size_t)lda, a->n, s->dev_info, ex->stream))
    return TESSERA_ERR_KERNEL;
  return report_info(ex, s, a->offset);
}

/* Enqueues cuSOLVER's trtri on the tile of `ex` (arguments checked), info to s->dev_info. */
static int trtri_enqueue(const tessera_exec_t *ex, void *args) {
  const tsr_trtri_args_t *a = args;
  cusolverDnHandle_t h = NULL;
  const tessera_cuda_scratch_t *s = solver_scratch(ex, &h);
  const int lda = tsr_operand_ld(ex, 0, a->n, a->n);
  if (lda < 0 || !s) return TESSERA_ERR_KERNEL;
  const cublasFillMode_t uplo = tsr_cuda_fill(tsr_letter(a->uplo, "UL"));
  const cublasDiagType_t diag = tsr_cuda_diag(tsr_letter(a->diag, "NU"));
  const cudaDataType type = tsr_cuda_type(a->dtype);
  size_t dev_bytes = 0, host_bytes = 0;
  if (cusolverDnXtrtri_bufferSize(h, uplo, diag, a->n, type, ex->ptr[0], lda, &dev_bytes,
                                  &host_bytes) != CUSOLVER_STATUS_SUCCESS ||
      dev_bytes > s->workspace_bytes || host_bytes > s->host_workspace_bytes ||
      (host_bytes > 0 && !s->host_workspace))
    return TESSERA_ERR_KERNEL;
  if (cusolverDnXtrtri(h, uplo, diag, a->n, type, ex->ptr[0], lda, s->workspace, dev_bytes,
                       s->host_workspace, host_bytes, s->dev_info) != CUSOLVER_STATUS_SUCCESS)
    return TESSERA_ERR_KERNEL;
  return 0;
}

/* Order up to which cuSOLVER's trtri runs whole; above it, recursive halving onto trmm. */
enum { TRTRI_LEAF = 256 };

int tsr_cuda_trtri(const tessera_exec_t *ex, void *args) {
  const tsr_trtri_args_t *a = args;
  const int u = tsr_letter(a->uplo, "UL"), d = tsr_letter(a->diag, "NU");
  if (!tsr_dtype_valid(a->dtype) || u < 0 || d < 0 || !ex->async) return TESSERA_ERR_KERNEL;
  const int lda = tsr_operand_ld(ex, 0, a->n, a->n);
  cusolverDnHandle_t h = NULL;
  const tessera_cuda_scratch_t *s = solver_scratch(ex, &h);
  if (lda < 0 || !s) return TESSERA_ERR_KERNEL;
  if (a->n == 0) return 0;
  if (a->n <= TRTRI_LEAF) {
    int rc = trtri_enqueue(ex, args);
    return rc ? rc : report_info(ex, s, a->offset);
  }
  /* LAPACK's info first, from a scan of the diagonal for an exact zero (cuSOLVER's leaves do not
   * leave a singular block as it was, and each reports its own info): copied out before the
   * leaves reuse the info slot. On a singular triangle the tile's contents are then undefined. */
  int rc = tsr_cuda_enqueued(
      cudaMemsetAsync(s->dev_info, 0, sizeof *s->dev_info, (cudaStream_t)ex->stream));
  if (rc) return rc;
  if (d == 0 &&
      tsr_cuda_diag_zero_check(a->dtype, ex->ptr[0], (size_t)lda, a->n, s->dev_info, ex->stream))
    return TESSERA_ERR_KERNEL;
  rc = report_info(ex, s, a->offset);
  return rc ? rc : tsr_trtri_blocked(ex, a, trtri_enqueue, tsr_cuda_trmm, TRTRI_LEAF);
}

/* Order up to which cuSOLVER's lauum runs whole; above it, recursive halving onto herk and trmm. */
enum { LAUUM_LEAF = 256 };

/* Enqueues cuSOLVER's lauum on the tile of `ex` (arguments checked), info to s->dev_info. */
static int lauum_enqueue(const tessera_exec_t *ex, void *args) {
  const tsr_lauum_args_t *a = args;
  cusolverDnHandle_t h = NULL;
  const tessera_cuda_scratch_t *s = solver_scratch(ex, &h);
  const int lda = tsr_operand_ld(ex, 0, a->n, a->n);
  if (lda < 0 || !s) return TESSERA_ERR_KERNEL;
  return run_uplo(lauum_of, ex, s, h, a->dtype, tsr_cuda_fill(tsr_letter(a->uplo, "UL")), a->n,
                  lda);
}

int tsr_cuda_lauum(const tessera_exec_t *ex, void *args) {
  const tsr_lauum_args_t *a = args;
  const int u = tsr_letter(a->uplo, "UL");
  if (!tsr_dtype_valid(a->dtype) || u < 0) return TESSERA_ERR_KERNEL;
  const int lda = tsr_operand_ld(ex, 0, a->n, a->n);
  cusolverDnHandle_t h = NULL;
  const tessera_cuda_scratch_t *s = solver_scratch(ex, &h);
  if (lda < 0 || !s) return TESSERA_ERR_KERNEL;
  if (a->n == 0) return 0;
  int rc = tsr_lauum_blocked(ex, a, lauum_enqueue, tsr_cuda_syrk, tsr_cuda_trmm, LAUUM_LEAF);
  /* lauum's info is only ever negative (an invalid argument); the last leaf's is passed on when
   * a slot exists so such a failure is not lost. */
  return rc || !ex->async ? rc : report_info(ex, s, 0);
}

/* The sum lands in the worker's device workspace, then in the host double *out: the copy from
 * device memory into pageable host memory returns once it is done, so *out holds the sum when
 * the task completes. */
int tsr_cuda_logdiag(const tessera_exec_t *ex, void *args) {
  const tsr_logdiag_args_t *a = args;
  const tessera_cuda_scratch_t *s = tsr_cuda_scratch(ex);
  const int lda = tsr_operand_ld(ex, 0, a->n, a->n);
  if (!tsr_dtype_valid(a->dtype) || !a->out || lda < 0 || !s || !s->workspace ||
      s->workspace_bytes < sizeof(double))
    return TESSERA_ERR_KERNEL;
  if (tsr_cuda_diag_logsum(a->dtype, ex->ptr[0], (size_t)lda, a->n, 1.0, s->workspace, ex->stream))
    return TESSERA_ERR_KERNEL;
  return tsr_cuda_enqueued(cudaMemcpyAsync(a->out, s->workspace, sizeof(double),
                                           cudaMemcpyDeviceToHost, (cudaStream_t)ex->stream));
}

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
 * computed for the swaps (kernels.cu). The block is scanned before the factorization too:
 * cuSOLVER's pivot search passes over NaN, and its factors may then hold none (the NaN row
 * interchanged away), while a NaN in column c of the block is one in column c of LAPACK's
 * factors, whose columns each depend on the columns before them only; that column is then
 * made NaN, as LAPACK's factors would hold it and the later updates carry it on. */
int tsr_cuda_getrf(const tessera_exec_t *ex, void *args) {
  const tsr_getrf_args_t *a = args;
  const int lda = tsr_operand_ld(ex, 0, a->m, a->n);
  cusolverDnHandle_t h = NULL;
  const tessera_cuda_scratch_t *s = solver_scratch(ex, &h);
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
  const tessera_cuda_scratch_t *s = solver_scratch(ex, &h);
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

/* ---------------------------------------------------------------- posv, gesv */

/* potrf's info goes straight into the caller's int (a copy of the scratch naming it as the
 * info slot), then the scans and the log det; the solves run whatever the info, B then being
 * undefined when it is not 0. */
int tsr_cuda_posv(const tessera_exec_t *ex, void *args) {
  const tsr_posv_args_t *a = args;
  const int u = tsr_letter(a->uplo, "UL"), right = tsr_letter(a->side, "LR");
  const int lda = tsr_operand_ld(ex, 0, a->n, a->n);
  cusolverDnHandle_t h = NULL;
  const tessera_cuda_scratch_t *s = solver_scratch(ex, &h);
  if (!tsr_dtype_valid(a->dtype) || u < 0 || right < 0 || lda < 0 || !s || ex->ndata < 3 ||
      !ex->ptr[2] || tsr_operand_ld(ex, 1, right ? a->nrhs : a->n, right ? a->n : a->nrhs) < 0)
    return TESSERA_ERR_KERNEL;
  int *info = ex->ptr[2];
  double *logdet = ex->ndata > 3 ? ex->ptr[3] : NULL;
  cudaStream_t stream = ex->stream;
  if (a->n == 0)
    return tsr_cuda_enqueued(cudaMemsetAsync(info, 0, sizeof *info, stream)) ||
                   (logdet && tsr_cuda_enqueued(cudaMemsetAsync(logdet, 0, sizeof *logdet, stream)))
               ? TESSERA_ERR_KERNEL
               : 0;
  tessera_cuda_scratch_t mine = *s;
  mine.dev_info = info;
  if (run_uplo(potrf_of, ex, &mine, h, a->dtype, tsr_cuda_fill(u), a->n, lda) ||
      tsr_cuda_diag_nan_check(a->dtype, ex->ptr[0], (size_t)lda, a->n, info, stream) ||
      (logdet &&
       tsr_cuda_diag_logsum(a->dtype, ex->ptr[0], (size_t)lda, a->n, 2.0, logdet, stream)))
    return TESSERA_ERR_KERNEL;
  return tsr_potrs_whole(ex, a, tsr_cuda_trsm_blocked);
}

/* The pivots live at the end of the scratch's workspace, out of reach of getrf's own use of
 * it (a copy of the scratch with a shorter workspace); getrf leaves its info in piv[0], copied
 * into the caller's int. */
int tsr_cuda_gesv(const tessera_exec_t *ex, void *args) {
  const tsr_gesv_args_t *a = args;
  cusolverDnHandle_t h = NULL;
  const tessera_cuda_scratch_t *s = solver_scratch(ex, &h);
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
