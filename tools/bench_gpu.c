/* tessera CLI — the GPU baselines of `tessera bench potrf|getrf|syevd`, cuSolverMg and
 * cusolverDnX, and of `tessera bench geqrf|gels`, cusolverDnXgeqrf and cusolverDn<t><t>gels on
 * GPU 0.
 *
 * Timed as docs/benchmarks.md's "resident" runs are: the matrix is already on the GPUs
 * (copied before each run, untimed), every GPU used is synchronized before and after the call,
 * one warm-up run precedes the timed ones and the best time is kept.
 */
#include "bench_gpu.h"

#include <math.h>
#include <stdio.h>

/** cuSolverMg tile sizes tried for potrf, getrf (its largest is 512) and syevd, each routine's
 *  row of mg_op(routine); the best is kept. */
static const int mg_tiles[3][2] = {{1024, 2048}, {256, 512}, {256, 1024}};

static int mg_op(cli_cmd_t routine) {
  return routine == CMD_GETRF ? 1 : routine == CMD_SYEVD ? 2 : 0;
}

const char *bench_gpu_mg_tiles(const cli_opts_t *o) {
  static char words[32];
  const int *t = mg_tiles[mg_op(o->routine)];
  snprintf(words, sizeof words, "%d or %d", t[0], t[1]);
  return words;
}

const char *bench_gpu_qr_name(const cli_opts_t *o) {
  static const char *const gels[TESSERA_NUM_DTYPES] = {[TESSERA_F32] = "cusolverDnSSgels",
                                                       [TESSERA_F64] = "cusolverDnDDgels",
                                                       [TESSERA_C64] = "cusolverDnCCgels",
                                                       [TESSERA_C128] = "cusolverDnZZgels"};
  return o->routine == CMD_GELS ? gels[o->dtype] : "cusolverDnXgeqrf";
}

#ifdef TESSERA_HAVE_CUDA

/* cuSolverMg is marked deprecated in CUDA 13; it is still NVIDIA's multi-GPU baseline. */
#define DISABLE_CUSOLVERMG_DEPRECATED
#include <cuda_runtime.h>
#include <cusolverDn.h>
#include <cusolverMg.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_libs.h"

/* One library for good, by its soname (a copy already loaded, else the loader's search), else
 * from where the build found it. */
static int load(const char *path, const char *soname) {
  const int flags = RTLD_NOW | RTLD_GLOBAL | RTLD_NODELETE;
  void *h = dlopen(soname, flags);
  if (!h) h = dlopen(path, flags);
  if (!h) {
    const char *why = dlerror();
    fprintf(stderr, "tessera: bench: the GPU baselines need %s, which did not load: %s\n", soname,
            why ? why : "not found");
    return -1;
  }
  dlclose(h); /* RTLD_NODELETE: it stays */
  return 0;
}

int bench_gpu_libraries(void) {
  return load(TSR_CUSOLVER_PATH, TSR_CUSOLVER_SONAME) ||
                 load(TSR_CUSOLVERMG_PATH, TSR_CUSOLVERMG_SONAME)
             ? -1
             : 0;
}

enum { MAX_GPUS = 64 };

/** One baseline solver: cuSolverMg when `is_mg` is set, else cusolverDn on GPU 0. */
typedef struct {
  const cli_opts_t *o;
  int is_mg;
  cli_cmd_t op;         /**< CMD_POTRF, CMD_GETRF or CMD_SYEVD (QR: see qr) */
  int64_t n, lda, tile; /**< tile: columns per block (cusolverDn: n, one block) */
  const void *a;        /**< the pristine host matrix */
  size_t es;            /**< bytes per element */
  cudaDataType dt;
  cublasFillMode_t uplo;
  int gpus, devs[MAX_GPUS];
  void *A[MAX_GPUS], *work[MAX_GPUS];
  int64_t lwork; /**< cuSolverMg: elements of work[g]; cusolverDn: bytes of work[0] */
  cusolverMgHandle_t mg;
  cudaLibMgGrid_t grid;
  cudaLibMgMatrixDesc_t desc, pdesc; /**< pdesc: getrf's pivots */
  int *ipiv[MAX_GPUS];               /**< getrf's pivots (cusolverDn: 64-bit, on GPU 0) */
  cusolverDnHandle_t dn;
  cusolverDnParams_t params;
  void *host_work;
  size_t host_bytes;
  int *dev_info;
  cusolverEigMode_t jobz; /**< syevd: eigenvectors or not */
  cudaDataType wdt;       /**< syevd: the eigenvalues' (real) type */
  void *w_host, *w_dev; /**< syevd's eigenvalues: cuSolverMg's on the host, cusolverDn's on GPU 0 */
  void *w_out;          /**< where cusolverDn's eigenvalues go after a run (NULL: nowhere) */
  int *w_written;       /**< set once they went there */
  cli_cmd_t qr;         /**< CMD_GEQRF or CMD_GELS: cuSOLVER's QR on GPU 0 (0: potrf, getrf) */
  int64_t m, nrhs, ldb; /**< QR: A m x n (host lda), gels' B m x nrhs (host ldb) */
  const void *b;        /**< gels: the pristine host right-hand sides */
  void *tau, *B, *X;    /**< QR on GPU 0: geqrf's tau; gels' B and X (lda m, ldb m, ldx n) */
  int niter;            /**< gels: the last run's iterations (< 0: it fell back) */
  char err[160];        /**< the first failure */
} solver_t;

/** Records the first failure of a call (a CUDA or cuSOLVER status, 0 = success). */
static int check(solver_t *s, int status, const char *call) {
  int cuda = !strncmp(call, "cuda", 4) && strncmp(call, "cudaLib", 7);
  if (status && !s->err[0])
    snprintf(s->err, sizeof s->err, "%.*s failed: %s %d", (int)strcspn(call, "("), call,
             cuda ? cudaGetErrorName((cudaError_t)status) : "cusolverStatus_t", status);
  return status;
}
#define CK(s, call) check(s, (int)(call), #call)

/** Synchronizes every GPU of the solver. */
static int sync_all(solver_t *s) {
  for (int g = 0; g < s->gpus; g++)
    if (CK(s, cudaSetDevice(s->devs[g])) || CK(s, cudaDeviceSynchronize())) return -1;
  return 0;
}

/** Copies the host matrix onto the GPUs: column block jb goes to GPU jb % gpus, as its local
 *  block jb / gpus, each column n elements apart. */
static int upload(solver_t *s) {
  int64_t nb = (s->n + s->tile - 1) / s->tile;
  for (int64_t jb = 0; jb < nb; jb++) {
    int64_t cols = s->n - jb * s->tile < s->tile ? s->n - jb * s->tile : s->tile;
    char *dst = (char *)s->A[jb % s->gpus] + (size_t)(jb / s->gpus * s->tile * s->n) * s->es;
    const char *src = (const char *)s->a + (size_t)(jb * s->tile * s->lda) * s->es;
    if (CK(s, cudaMemcpy2D(dst, (size_t)s->n * s->es, src, (size_t)s->lda * s->es,
                           (size_t)s->n * s->es, (size_t)cols, cudaMemcpyHostToDevice)))
      return -1;
  }
  return 0;
}

/** Allocates `bytes` on GPU `g` into *p. */
static int dev_alloc(solver_t *s, int g, void **p, size_t bytes) {
  return CK(s, cudaSetDevice(s->devs[g])) || CK(s, cudaMalloc(p, bytes + 64)) ? -1 : 0;
}

/** cuSolverMg's workspace size (elements per GPU) for s->op into s->lwork (getrf: the pivots'
 *  descriptor made first; syevd: the lower triangle, the only one cusolverMgSyevd takes). */
static int mg_buffer(solver_t *s) {
  if (s->op == CMD_GETRF)
    return CK(s, cusolverMgCreateMatrixDesc(&s->pdesc, 1, s->n, 1, s->tile, CUDA_R_32I, s->grid)) ||
                   CK(s, cusolverMgGetrf_bufferSize(s->mg, (int)s->n, (int)s->n, s->A, 1, 1,
                                                    s->desc, s->ipiv, s->dt, &s->lwork))
               ? -1
               : 0;
  if (s->op == CMD_SYEVD)
    return CK(s, cusolverMgSyevd_bufferSize(s->mg, s->jobz, CUBLAS_FILL_MODE_LOWER, (int)s->n, s->A,
                                            1, 1, s->desc, s->w_host, s->wdt, s->dt, &s->lwork))
               ? -1
               : 0;
  return CK(s, cusolverMgPotrf_bufferSize(s->mg, s->uplo, (int)s->n, s->A, 1, 1, s->desc, s->dt,
                                          &s->lwork))
             ? -1
             : 0;
}

/** Creates the cuSolverMg handle, grid, descriptor and the per-GPU arrays. */
static int mg_setup(solver_t *s) {
  int64_t nb = (s->n + s->tile - 1) / s->tile, per_gpu = (nb + s->gpus - 1) / s->gpus;
  if (CK(s, cusolverMgCreate(&s->mg)) || CK(s, cusolverMgDeviceSelect(s->mg, s->gpus, s->devs)) ||
      CK(s, cusolverMgCreateDeviceGrid(&s->grid, 1, s->gpus, s->devs,
                                       CUDALIBMG_GRID_MAPPING_COL_MAJOR)) ||
      CK(s, cusolverMgCreateMatrixDesc(&s->desc, s->n, s->n, s->n, s->tile, s->dt, s->grid)))
    return -1;
  for (int g = 0; g < s->gpus; g++)
    if (dev_alloc(s, g, &s->A[g], (size_t)(s->n * s->tile * per_gpu) * s->es) ||
        (s->op == CMD_GETRF &&
         dev_alloc(s, g, (void **)&s->ipiv[g], (size_t)(s->tile * per_gpu) * sizeof(int))))
      return -1;
  if (mg_buffer(s)) return -1;
  for (int g = 0; g < s->gpus; g++)
    if (dev_alloc(s, g, &s->work[g], (size_t)s->lwork * s->es)) return -1;
  return 0;
}

/** cusolverDnX's workspace sizes for s->op on GPU 0 (device bytes into *dev_bytes, host bytes
 *  into s->host_bytes), after its pivots (getrf) or eigenvalues (syevd) are allocated there. */
static int dn_buffer(solver_t *s, size_t *dev_bytes) {
  if (s->op == CMD_GETRF)
    return dev_alloc(s, 0, (void **)&s->ipiv[0], (size_t)s->n * sizeof(int64_t)) ||
                   CK(s, cusolverDnXgetrf_bufferSize(s->dn, s->params, s->n, s->n, s->dt, s->A[0],
                                                     s->n, s->dt, dev_bytes, &s->host_bytes))
               ? -1
               : 0;
  if (s->op == CMD_SYEVD)
    return dev_alloc(s, 0, &s->w_dev, (size_t)s->n * sizeof(double)) ||
                   CK(s, cusolverDnXsyevd_bufferSize(s->dn, s->params, s->jobz, s->uplo, s->n,
                                                     s->dt, s->A[0], s->n, s->wdt, s->w_dev, s->dt,
                                                     dev_bytes, &s->host_bytes))
               ? -1
               : 0;
  return CK(s, cusolverDnXpotrf_bufferSize(s->dn, s->params, s->uplo, s->n, s->dt, s->A[0], s->n,
                                           s->dt, dev_bytes, &s->host_bytes))
             ? -1
             : 0;
}

/** Creates the cusolverDn handle and the arrays on GPU 0. */
static int dn_setup(solver_t *s) {
  size_t dev_bytes = 0;
  if (dev_alloc(s, 0, &s->A[0], (size_t)(s->n * s->n) * s->es) ||
      dev_alloc(s, 0, (void **)&s->dev_info, sizeof(int)) || CK(s, cusolverDnCreate(&s->dn)) ||
      CK(s, cusolverDnCreateParams(&s->params)) || dn_buffer(s, &dev_bytes) ||
      dev_alloc(s, 0, &s->work[0], dev_bytes))
    return -1;
  s->lwork = (int64_t)dev_bytes;
  if (!(s->host_work = malloc(s->host_bytes + 64))) return check(s, -1, "malloc(host workspace)");
  return 0;
}

/** cusolverDn<t><t>gels of the dtype on GPU 0's arrays (lda m, ldb m, ldx n): its workspace's
 *  size into *bytes when `bytes` is given, else the solve, its iterations into s->niter. */
static cusolverStatus_t gels(solver_t *s, size_t *bytes) {
  const int m = (int)s->m, n = (int)s->n, k = (int)s->nrhs;
  void *A = s->A[0], *B = s->B, *X = s->X, *w = s->work[0];
  const size_t lw = (size_t)s->lwork;
  switch (s->o->dtype) {
  case TESSERA_F32:
    return bytes
               ? cusolverDnSSgels_bufferSize(s->dn, m, n, k, A, m, B, m, X, n, NULL, bytes)
               : cusolverDnSSgels(s->dn, m, n, k, A, m, B, m, X, n, w, lw, &s->niter, s->dev_info);
  case TESSERA_F64:
    return bytes
               ? cusolverDnDDgels_bufferSize(s->dn, m, n, k, A, m, B, m, X, n, NULL, bytes)
               : cusolverDnDDgels(s->dn, m, n, k, A, m, B, m, X, n, w, lw, &s->niter, s->dev_info);
  case TESSERA_C64:
    return bytes
               ? cusolverDnCCgels_bufferSize(s->dn, m, n, k, A, m, B, m, X, n, NULL, bytes)
               : cusolverDnCCgels(s->dn, m, n, k, A, m, B, m, X, n, w, lw, &s->niter, s->dev_info);
  case TESSERA_C128:
    return bytes
               ? cusolverDnZZgels_bufferSize(s->dn, m, n, k, A, m, B, m, X, n, NULL, bytes)
               : cusolverDnZZgels(s->dn, m, n, k, A, m, B, m, X, n, w, lw, &s->niter, s->dev_info);
  }
  return CUSOLVER_STATUS_INVALID_VALUE;
}

/** Creates the cusolverDn handle and the QR's arrays on GPU 0: A (m x n, lda m), and geqrf's
 *  tau (min(m, n)) or gels' B (m x nrhs, ldb m) and X (n x nrhs, ldx n); the workspaces. */
static int qr_setup(solver_t *s) {
  const int64_t m = s->m, n = s->n, k = m < n ? m : n;
  const char *name = bench_gpu_qr_name(s->o);
  char call[48];
  size_t dev_bytes = 0;
  if (dev_alloc(s, 0, &s->A[0], (size_t)(m * n) * s->es) ||
      dev_alloc(s, 0, (void **)&s->dev_info, sizeof(int)) || CK(s, cusolverDnCreate(&s->dn)))
    return -1;
  if (s->qr == CMD_GEQRF) {
    if (dev_alloc(s, 0, &s->tau, (size_t)k * s->es) || CK(s, cusolverDnCreateParams(&s->params)) ||
        CK(s, cusolverDnXgeqrf_bufferSize(s->dn, s->params, m, n, s->dt, s->A[0], m, s->dt, s->tau,
                                          s->dt, &dev_bytes, &s->host_bytes)))
      return -1;
  } else {
    snprintf(call, sizeof call, "%s_bufferSize", name);
    if (dev_alloc(s, 0, &s->B, (size_t)(m * s->nrhs) * s->es) ||
        dev_alloc(s, 0, &s->X, (size_t)(n * s->nrhs) * s->es) ||
        check(s, (int)gels(s, &dev_bytes), call))
      return -1;
  }
  if (dev_alloc(s, 0, &s->work[0], dev_bytes)) return -1;
  s->lwork = (int64_t)dev_bytes;
  if (!(s->host_work = malloc(s->host_bytes + 64))) return check(s, -1, "malloc(host workspace)");
  return 0;
}

/** One QR on GPU 0, its A (and gels' B) copied there first, untimed; *info receives its info. */
static int qr_run_once(solver_t *s, double *seconds, int *info) {
  const size_t es = s->es, rows = (size_t)s->m * es;
  if (CK(s, cudaSetDevice(0)) ||
      CK(s, cudaMemcpy2D(s->A[0], rows, s->a, (size_t)s->lda * es, rows, (size_t)s->n,
                         cudaMemcpyHostToDevice)) ||
      (s->qr == CMD_GELS && CK(s, cudaMemcpy2D(s->B, rows, s->b, (size_t)s->ldb * es, rows,
                                               (size_t)s->nrhs, cudaMemcpyHostToDevice))) ||
      sync_all(s))
    return -1;
  double t0 = progress_now();
  if (s->qr == CMD_GEQRF
          ? CK(s, cusolverDnXgeqrf(s->dn, s->params, s->m, s->n, s->dt, s->A[0], s->m, s->dt,
                                   s->tau, s->dt, s->work[0], (size_t)s->lwork, s->host_work,
                                   s->host_bytes, s->dev_info))
          : check(s, (int)gels(s, NULL), bench_gpu_qr_name(s->o)))
    return -1;
  if (sync_all(s)) return -1;
  *seconds = progress_now() - t0; /* gels' niter < 0 (it fell back) is timed all the same */
  if (CK(s, cudaMemcpy(info, s->dev_info, sizeof(int), cudaMemcpyDeviceToHost))) return -1;
  if (*info) snprintf(s->err, sizeof s->err, "info = %d", *info);
  return *info ? -1 : 0;
}

/** Frees whatever the set-up created. */
static void solver_free(solver_t *s) {
  for (int g = 0; g < s->gpus; g++) {
    cudaSetDevice(s->devs[g]);
    if (s->A[g]) cudaFree(s->A[g]);
    if (s->work[g]) cudaFree(s->work[g]);
    if (s->ipiv[g]) cudaFree(s->ipiv[g]);
  }
  if (s->pdesc) cusolverMgDestroyMatrixDesc(s->pdesc);
  cudaSetDevice(0);
  if (s->tau) cudaFree(s->tau);
  if (s->B) cudaFree(s->B);
  if (s->X) cudaFree(s->X);
  if (s->dev_info) cudaFree(s->dev_info);
  if (s->w_dev) cudaFree(s->w_dev);
  if (s->desc) cusolverMgDestroyMatrixDesc(s->desc);
  if (s->grid) cusolverMgDestroyGrid(s->grid);
  if (s->mg) cusolverMgDestroy(s->mg);
  if (s->params) cusolverDnDestroyParams(s->params);
  if (s->dn) cusolverDnDestroy(s->dn);
  free(s->host_work);
  cudaSetDevice(0);
  cudaGetLastError(); /* clear a sticky error of a failed call */
}

/** cuSolverMg's call for s->op on the GPUs; *info receives its info. */
static int mg_call(solver_t *s, int *info) {
  if (s->op == CMD_GETRF)
    return CK(s, cusolverMgGetrf(s->mg, (int)s->n, (int)s->n, s->A, 1, 1, s->desc, s->ipiv, s->dt,
                                 s->work, s->lwork, info));
  if (s->op == CMD_SYEVD)
    return CK(s, cusolverMgSyevd(s->mg, s->jobz, CUBLAS_FILL_MODE_LOWER, (int)s->n, s->A, 1, 1,
                                 s->desc, s->w_host, s->wdt, s->dt, s->work, s->lwork, info));
  return CK(s, cusolverMgPotrf(s->mg, s->uplo, (int)s->n, s->A, 1, 1, s->desc, s->dt, s->work,
                               s->lwork, info));
}

/** cusolverDnX's call for s->op on GPU 0, its info left in s->dev_info. */
static int dn_call(solver_t *s) {
  if (s->op == CMD_GETRF)
    return CK(s, cusolverDnXgetrf(s->dn, s->params, s->n, s->n, s->dt, s->A[0], s->n,
                                  (int64_t *)(void *)s->ipiv[0], s->dt, s->work[0],
                                  (size_t)s->lwork, s->host_work, s->host_bytes, s->dev_info));
  if (s->op == CMD_SYEVD)
    return CK(s, cusolverDnXsyevd(s->dn, s->params, s->jobz, s->uplo, s->n, s->dt, s->A[0], s->n,
                                  s->wdt, s->w_dev, s->dt, s->work[0], (size_t)s->lwork,
                                  s->host_work, s->host_bytes, s->dev_info));
  return CK(s, cusolverDnXpotrf(s->dn, s->params, s->uplo, s->n, s->dt, s->A[0], s->n, s->dt,
                                s->work[0], (size_t)s->lwork, s->host_work, s->host_bytes,
                                s->dev_info));
}

/** One factorization (or eigensolve); *info receives its LAPACK info once the GPUs are
 *  synchronized. */
static int run_once(solver_t *s, double *seconds, int *info) {
  static const char *const failure[3] = {"not positive definite?", "singular", "no convergence"};
  if (upload(s) || sync_all(s)) return -1;
  double t0 = progress_now();
  if (s->is_mg ? mg_call(s, info) : CK(s, cudaSetDevice(0)) || dn_call(s)) return -1;
  if (sync_all(s)) return -1;
  *seconds = progress_now() - t0;
  if (!s->is_mg && CK(s, cudaMemcpy(info, s->dev_info, sizeof(int), cudaMemcpyDeviceToHost)))
    return -1;
  if (*info) snprintf(s->err, sizeof s->err, "info = %d (%s)", *info, failure[mg_op(s->op)]);
  if (!*info && !s->is_mg && s->op == CMD_SYEVD && s->w_out) {
    if (CK(s, cudaMemcpy(s->w_out, s->w_dev,
                         (size_t)s->n * tessera_dtype_size(cli_real_dtype(s->o->dtype)),
                         cudaMemcpyDeviceToHost)))
      return -1;
    *s->w_written = 1;
  }
  return *info ? -1 : 0;
}

/** Sets up `s`, runs the warm-up and the timed runs; returns the best time, or INFINITY after
 *  printing why it could not run. */
static double time_solver(solver_t *s, const char *name, cli_progress_t *prog) {
  double best = INFINITY;
  char where[96]; /* the problem and the GPUs */
  if (s->qr)
    snprintf(where, sizeof where, "m=%lld, n=%lld, GPU 0", (long long)s->m, (long long)s->n);
  else
    snprintf(where, sizeof where, "n=%lld, %d GPUs, tile %lld", (long long)s->n, s->gpus,
             (long long)s->tile);
  if ((s->qr ? qr_setup(s) : s->is_mg ? mg_setup(s) : dn_setup(s)) == 0) {
    for (int rep = 0; rep <= s->o->reps; rep++) {
      double t;
      int info = 0;
      progress_phase(prog, "%s %s %s", name, where, rep ? "timed run" : "warm-up");
      if (s->qr ? qr_run_once(s, &t, &info) : run_once(s, &t, &info)) break;
      if (rep > 0) best = fmin(best, t);
    }
  }
  progress_phase(prog, NULL);
  if (s->err[0]) {
    fprintf(stderr, "tessera: bench: %s baseline (%s) unavailable: %s\n", name, where, s->err);
    best = INFINITY;
  }
  solver_free(s);
  return best;
}

/** Enables peer access between every pair of the GPUs (already enabled is fine). */
static void enable_peers(int gpus) {
  for (int g = 0; g < gpus; g++) {
    if (cudaSetDevice(g) != cudaSuccess) continue;
    for (int k = 0; k < gpus; k++) {
      int can = 0;
      if (k != g && cudaDeviceCanAccessPeer(&can, g, k) == cudaSuccess && can)
        cudaDeviceEnablePeerAccess(k, 0);
    }
  }
  cudaGetLastError();
}

void bench_gpu_factor(const cli_opts_t *o, int gpus, int64_t n, const void *a, int64_t lda,
                      cli_progress_t *prog, gpu_baseline_t *out) {
  static const cudaDataType types[TESSERA_NUM_DTYPES] = {[TESSERA_F32] = CUDA_R_32F,
                                                         [TESSERA_F64] = CUDA_R_64F,
                                                         [TESSERA_C64] = CUDA_C_32F,
                                                         [TESSERA_C128] = CUDA_C_64F};
  void *w = out->w;
  *out = (gpu_baseline_t){INFINITY, 0, INFINITY, w, 0};
  if (n < 1 || gpus < 1 || bench_gpu_libraries()) return;
  if (gpus > MAX_GPUS) gpus = MAX_GPUS;
  solver_t base = {.o = o,
                   .n = n,
                   .lda = lda,
                   .a = a,
                   .op = o->routine,
                   .es = tessera_dtype_size(o->dtype),
                   .dt = types[o->dtype],
                   .jobz = o->values_only ? CUSOLVER_EIG_MODE_NOVECTOR : CUSOLVER_EIG_MODE_VECTOR,
                   .wdt = types[cli_real_dtype(o->dtype)]};
  base.uplo = o->uplo == TESSERA_LOWER ? CUBLAS_FILL_MODE_LOWER : CUBLAS_FILL_MODE_UPPER;
  /* cusolverMgSyevd's eigenvalues land on the host (the others' baselines keep none) */
  if (o->routine == CMD_SYEVD && !(base.w_host = malloc((size_t)n * sizeof(double)))) return;
  for (int g = 0; g < MAX_GPUS; g++) base.devs[g] = g;
  /* Pinned host memory makes the untimed uploads fast; pageable memory works too. */
  size_t bytes = (size_t)(lda * n) * base.es;
  int pinned = cudaHostRegister((void *)a, bytes, cudaHostRegisterDefault) == cudaSuccess;
  cudaGetLastError();
  enable_peers(gpus);
  const int *tiles = mg_tiles[mg_op(base.op)];
  for (size_t i = 0; i < 2 && !o->no_mg; i++) {
    if (i > 0 && n <= tiles[i - 1]) break; /* one block either way */
    solver_t s = base;
    s.is_mg = 1;
    s.gpus = gpus;
    s.tile = tiles[i];
    double t = time_solver(&s, "cusolverMg", prog);
    if (t < out->mg_seconds) out->mg_seconds = t, out->mg_tile = tiles[i];
  }
  solver_t s = base;
  s.gpus = 1;
  s.tile = n;
  s.w_out = o->routine == CMD_SYEVD ? w : NULL;
  s.w_written = &out->has_w;
  out->dn_seconds = time_solver(&s, "cusolverDn", prog);
  if (!isfinite(out->dn_seconds)) out->has_w = 0;
  free(base.w_host);
  if (pinned) cudaHostUnregister((void *)a);
  cudaGetLastError();
}

double bench_gpu_qr(const cli_opts_t *o, int64_t m, int64_t n, int64_t nrhs, const void *a,
                    int64_t lda, const void *b, int64_t ldb, cli_progress_t *prog) {
  static const cudaDataType types[TESSERA_NUM_DTYPES] = {[TESSERA_F32] = CUDA_R_32F,
                                                         [TESSERA_F64] = CUDA_R_64F,
                                                         [TESSERA_C64] = CUDA_C_32F,
                                                         [TESSERA_C128] = CUDA_C_64F};
  const char *name = bench_gpu_qr_name(o);
  const int gels = o->routine == CMD_GELS;
  if (m < 1 || n < 1 || (gels && nrhs < 1) || bench_gpu_libraries()) return INFINITY;
  if (gels && m < n) {
    fprintf(stderr,
            "tessera: bench: %s baseline (m=%lld, n=%lld, GPU 0) unavailable: it does not "
            "take m < n\n",
            name, (long long)m, (long long)n);
    return INFINITY;
  }
  solver_t s = {.o = o,
                .qr = o->routine,
                .m = m,
                .n = n,
                .nrhs = gels ? nrhs : 0,
                .lda = lda,
                .ldb = ldb,
                .a = a,
                .b = gels ? b : NULL,
                .tile = n,
                .gpus = 1,
                .es = tessera_dtype_size(o->dtype),
                .dt = types[o->dtype]};
  /* Pinned host memory makes the untimed uploads fast; pageable memory works too. */
  const size_t abytes = (size_t)(lda * n) * s.es, bbytes = (size_t)(ldb * nrhs) * s.es;
  const int pin_a = cudaHostRegister((void *)a, abytes, cudaHostRegisterDefault) == cudaSuccess;
  const int pin_b =
      gels && cudaHostRegister((void *)b, bbytes, cudaHostRegisterDefault) == cudaSuccess;
  cudaGetLastError();
  const double best = time_solver(&s, name, prog);
  if (pin_a) cudaHostUnregister((void *)a);
  if (pin_b) cudaHostUnregister((void *)b);
  cudaGetLastError();
  return best;
}

#else /* no CUDA backend: no GPU baselines */

void bench_gpu_factor(const cli_opts_t *o, int gpus, int64_t n, const void *a, int64_t lda,
                      cli_progress_t *prog, gpu_baseline_t *out) {
  (void)o, (void)gpus, (void)n, (void)a, (void)lda, (void)prog;
  *out = (gpu_baseline_t){INFINITY, 0, INFINITY, out->w, 0};
}

double bench_gpu_qr(const cli_opts_t *o, int64_t m, int64_t n, int64_t nrhs, const void *a,
                    int64_t lda, const void *b, int64_t ldb, cli_progress_t *prog) {
  (void)o, (void)m, (void)n, (void)nrhs, (void)a, (void)lda, (void)b, (void)ldb, (void)prog;
  return INFINITY;
}

#endif
