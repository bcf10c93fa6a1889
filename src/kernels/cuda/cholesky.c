/* CUDA tile kernels of the Cholesky family (cholesky.h) through cuSOLVER: potrf, trtri and
 * lauum, logdiag (cholesky.cu), and posv, the whole solve.
 *
 * Each kernel checks its arguments like its CPU twin (cpu/cholesky.c), binds the worker's
 * cuSOLVER handle to ex->stream and enqueues the routine with the worker's workspaces
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
#include "kernels/cholesky.h"
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
  const tessera_cuda_scratch_t *s = tsr_cuda_solver_scratch(ex, &h);
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
  const tessera_cuda_scratch_t *s = tsr_cuda_solver_scratch(ex, &h);
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
  const tessera_cuda_scratch_t *s = tsr_cuda_solver_scratch(ex, &h);
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
  const tessera_cuda_scratch_t *s = tsr_cuda_solver_scratch(ex, &h);
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
  const tessera_cuda_scratch_t *s = tsr_cuda_solver_scratch(ex, &h);
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
  const tessera_cuda_scratch_t *s = tsr_cuda_solver_scratch(ex, &h);
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

/* ---------------------------------------------------------------- posv */

/* The batched routines (cusolverDn?potrfBatched, cublas?trsmBatched) through one signature for
 * every dtype, on device arrays of the members' matrices. */
typedef struct {
  cusolverStatus_t (*potrf)(cusolverDnHandle_t, cublasFillMode_t, int, void **, int, int *, int);
  cublasStatus_t (*trsm)(cublasHandle_t, cublasSideMode_t, cublasFillMode_t, cublasOperation_t,
                         cublasDiagType_t, int, int, const void *, void *const *, int,
                         void *const *, int, int);
} batched_t;
#define BATCHED(t, T)                                                                              \
  static cusolverStatus_t t##potrf_batched(cusolverDnHandle_t h, cublasFillMode_t uplo, int n,     \
                                           void **A, int lda, int *info, int count) {              \
    return cusolverDn##t##potrfBatched(h, uplo, n, (T **)A, lda, info, count);                     \
  }                                                                                                \
  static cublasStatus_t t##trsm_batched(                                                           \
      cublasHandle_t h, cublasSideMode_t side, cublasFillMode_t uplo, cublasOperation_t op,        \
      cublasDiagType_t diag, int m, int n, const void *alpha, void *const *A, int lda,             \
      void *const *B, int ldb, int count) {                                                        \
    return cublas##t##trsmBatched(h, side, uplo, op, diag, m, n, (const T *)alpha,                 \
                                  (const T *const *)A, lda, (T *const *)B, ldb, count);            \
  }
BATCHED(S, float)
BATCHED(D, double)
BATCHED(C, cuComplex)
BATCHED(Z, cuDoubleComplex)
static const batched_t batched_of[TESSERA_NUM_DTYPES] = {{Spotrf_batched, Strsm_batched},
                                                         {Dpotrf_batched, Dtrsm_batched},
                                                         {Cpotrf_batched, Ctrsm_batched},
                                                         {Zpotrf_batched, Ztrsm_batched}};

/* posv on a batch (a->batch > 1): in chunks whose arrays of A's and B's fit the workspace, one
 * batched potrf with the members' infos straight into the caller's, the batched NaN scan and log
 * det, and the two solves as batched trsms. */
static int posv_batch(const tessera_exec_t *ex, const tsr_posv_args_t *a,
                      const tessera_cuda_scratch_t *s, cusolverDnHandle_t h, int lda, int ldb) {
  cublasHandle_t blas = tsr_cuda_blas(ex);
  const batched_t *f = &batched_of[a->dtype];
  const size_t es = tessera_dtype_size(a->dtype), room = s->workspace_bytes / (2 * sizeof(void *));
  const int chunk = room > (size_t)a->batch ? a->batch : (int)room;
  const long long step_a = a->stride_a * (long long)es, step_b = a->stride_b * (long long)es;
  void **pa = s->workspace, **pb = pa + chunk;
  const tsr_trsm_args_t t[2] = {tsr_potrs_whole_step(a, 0), tsr_potrs_whole_step(a, 1)};
  const tsr_cuda_scalar_t one = tsr_cuda_scalar(a->dtype, (tsr_scalar_t){1, 0});
  double *logdet = ex->ndata > 3 ? ex->ptr[3] : NULL;
  if (!blas || chunk < 1) return TESSERA_ERR_KERNEL;
  for (int i0 = 0; i0 < a->batch; i0 += chunk) {
    const int k = a->batch - i0 < chunk ? a->batch - i0 : chunk;
    char *A = (char *)ex->ptr[0] + i0 * step_a, *B = (char *)ex->ptr[1] + i0 * step_b;
    int *info = (int *)ex->ptr[2] + i0;
    if (tsr_cuda_pointers(pa, A, step_a, k, ex->stream) ||
        f->potrf(h, tsr_cuda_fill(tsr_letter(a->uplo, "UL")), a->n, pa, lda, info, k) !=
            CUSOLVER_STATUS_SUCCESS ||
        tsr_cuda_diag_nan_check_batch(a->dtype, A, (size_t)lda, a->stride_a, a->n, k, info,
                                      ex->stream) ||
        (logdet && tsr_cuda_diag_logsum_batch(a->dtype, A, (size_t)lda, a->stride_a, a->n, k, 2.0,
                                              logdet + i0, ex->stream)))
      return TESSERA_ERR_KERNEL;
    if (a->nrhs == 0) continue;
    if (tsr_cuda_pointers(pb, B, step_b, k, ex->stream)) return TESSERA_ERR_KERNEL;
    for (int j = 0; j < 2; j++)
      if (f->trsm(blas, tsr_cuda_side(tsr_letter(t[j].side, "LR")),
                  tsr_cuda_fill(tsr_letter(t[j].uplo, "UL")),
                  tsr_cuda_op(tsr_letter(t[j].trans, "NTC")), CUBLAS_DIAG_NON_UNIT, t[j].m, t[j].n,
                  &one, pa, lda, pb, ldb, k) != CUBLAS_STATUS_SUCCESS)
        return TESSERA_ERR_KERNEL;
  }
  return 0;
}

/* Orders up to which a batch runs as one batched call (posv_batch); larger systems one after
 * the other, each with the whole device. */
enum { POSV_BATCH_MAX_N = 2048 };

static int posv_one(const tessera_exec_t *ex, const tsr_posv_args_t *a);

/* A batch's systems as one batched call, or one after the other. */
int tsr_cuda_posv(const tessera_exec_t *ex, void *args) {
  const tsr_posv_args_t *a = args;
  if (a->batch <= 1 || a->n <= POSV_BATCH_MAX_N || !tsr_dtype_valid(a->dtype) || ex->ndata < 3)
    return posv_one(ex, a);
  int rc = 0;
  for (int i = 0; i < a->batch && !rc; i++) {
    const tessera_exec_t e = tsr_posv_member(ex, a, i);
    tsr_posv_args_t one = *a;
    one.batch = 1;
    rc = posv_one(&e, &one);
  }
  return rc;
}

/* potrf's info goes straight into the caller's int (a copy of the scratch naming it as the
 * info slot), then the scans and the log det; the solves run whatever the info, B then being
 * undefined when it is not 0. A batch (of small systems) runs as posv_batch. */
static int posv_one(const tessera_exec_t *ex, const tsr_posv_args_t *a) {
  const int u = tsr_letter(a->uplo, "UL"), right = tsr_letter(a->side, "LR");
  const int lda = tsr_operand_ld(ex, 0, a->n, a->n);
  cusolverDnHandle_t h = NULL;
  const tessera_cuda_scratch_t *s = tsr_cuda_solver_scratch(ex, &h);
  if (!tsr_dtype_valid(a->dtype) || u < 0 || right < 0 || lda < 0 || !s || ex->ndata < 3 ||
      !ex->ptr[2] || tsr_operand_ld(ex, 1, right ? a->nrhs : a->n, right ? a->n : a->nrhs) < 0)
    return TESSERA_ERR_KERNEL;
  int *info = ex->ptr[2];
  double *logdet = ex->ndata > 3 ? ex->ptr[3] : NULL;
  cudaStream_t stream = ex->stream;
  const size_t members = a->batch > 1 ? (size_t)a->batch : 1;
  if (a->n == 0)
    return tsr_cuda_enqueued(cudaMemsetAsync(info, 0, members * sizeof *info, stream)) ||
                   (logdet &&
                    tsr_cuda_enqueued(cudaMemsetAsync(logdet, 0, members * sizeof *logdet, stream)))
               ? TESSERA_ERR_KERNEL
               : 0;
  if (members > 1)
    return posv_batch(ex, a, s, h, lda,
                      tsr_operand_ld(ex, 1, right ? a->nrhs : a->n, right ? a->n : a->nrhs));
  tessera_cuda_scratch_t mine = *s;
  mine.dev_info = info;
  if (run_uplo(potrf_of, ex, &mine, h, a->dtype, tsr_cuda_fill(u), a->n, lda) ||
      tsr_cuda_diag_nan_check(a->dtype, ex->ptr[0], (size_t)lda, a->n, info, stream) ||
      (logdet &&
       tsr_cuda_diag_logsum(a->dtype, ex->ptr[0], (size_t)lda, a->n, 2.0, logdet, stream)))
    return TESSERA_ERR_KERNEL;
  return tsr_potrs_whole(ex, a, tsr_cuda_trsm_blocked);
}
