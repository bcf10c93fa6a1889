/* tessera CLI — the baseline of `tessera bench gesv --mixed` on a GPU: cuSOLVER's mixed-precision
 * LU solve (iterative refinement, cusolverDn<t><l>gesv) on GPU 0, in each of its lower
 * precisions for the dtype (f64: f32, TF32, BF16, FP16; c128: c64 and the same three; f32 and
 * c64: TF32, BF16, FP16), the fastest that converged kept (else the fastest, which fell back to
 * the working precision). Timed as the other GPU baselines: A and B copied onto the GPU before
 * each run (untimed), the GPU synchronized around the call, one warm-up run, the best of
 * o->reps. */
#include "bench_gpu.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#ifdef TESSERA_HAVE_CUDA

#include <cuComplex.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>

#include "cuda_libs.h"

typedef cusolverStatus_t (*irs_size_fn)(cusolverDnHandle_t, int, int, void *, int, int *, void *,
                                        int, void *, int, size_t *);
typedef cusolverStatus_t (*irs_run_fn)(cusolverDnHandle_t, int, int, void *, int, int *, void *,
                                       int, void *, int, void *, size_t, int *, int *);

/* One untyped pair per cuSOLVER routine (T its element type). */
#define IRS(p, T)                                                                                  \
  static cusolverStatus_t p##_size(cusolverDnHandle_t h, int n, int r, void *A, int la, int *piv,  \
                                   void *B, int lb, void *X, int lx, size_t *bytes) {              \
    return cusolverDn##p##gesv_bufferSize(h, n, r, (T *)A, la, piv, (T *)B, lb, (T *)X, lx, NULL,  \
                                          bytes);                                                  \
  }                                                                                                \
  static cusolverStatus_t p##_run(cusolverDnHandle_t h, int n, int r, void *A, int la, int *piv,   \
                                  void *B, int lb, void *X, int lx, void *w, size_t bytes,         \
                                  int *iter, int *info) {                                          \
    return cusolverDn##p##gesv(h, n, r, (T *)A, la, piv, (T *)B, lb, (T *)X, lx, w, bytes, iter,   \
                               info);                                                              \
  }
IRS(DS, double)
IRS(DX, double)
IRS(DB, double)
IRS(DH, double)
IRS(ZC, cuDoubleComplex)
IRS(ZK, cuDoubleComplex)
IRS(ZY, cuDoubleComplex)
IRS(ZE, cuDoubleComplex)
IRS(SX, float)
IRS(SB, float)
IRS(SH, float)
IRS(CK, cuComplex)
IRS(CY, cuComplex)
IRS(CE, cuComplex)

typedef struct {
  const char *name;
  irs_size_fn size;
  irs_run_fn run;
} irs_mode_t;
#define MODE(p)                                                                                    \
  { "cusolverDn" #p "gesv", p##_size, p##_run }

/* The modes of each dtype, indexed by it; a NULL name ends a row. */
static const irs_mode_t modes[TESSERA_NUM_DTYPES][5] = {
    [TESSERA_F32] = {MODE(SX), MODE(SB), MODE(SH)},
    [TESSERA_F64] = {MODE(DS), MODE(DX), MODE(DB), MODE(DH)},
    [TESSERA_C64] = {MODE(CK), MODE(CY), MODE(CE)},
    [TESSERA_C128] = {MODE(ZC), MODE(ZK), MODE(ZY), MODE(ZE)},
};

/* The GPU buffers of one baseline. */
typedef struct {
  void *A, *B, *X, *work;
  int *piv, *info;
  size_t work_bytes;
} irs_buffers_t;

/* The first failed call's message; 0 when every call succeeded. */
static int failed(int status, const char *call, char *err, size_t len) {
  if (status && !err[0]) snprintf(err, len, "%s failed with status %d", call, status);
  return status;
}

/* One mode, warm-up then reps runs; the best seconds and the last run's iterations. */
static double time_mode(const irs_mode_t *m, cusolverDnHandle_t h, irs_buffers_t *g, int64_t n,
                        int64_t nrhs, const void *a, int64_t lda, const void *b, int64_t ldb,
                        size_t es, int reps, int *iter, char *err, size_t len) {
  size_t bytes = 0;
  const int in = (int)n, r = (int)nrhs;
  if (failed(m->size(h, in, r, g->A, in, g->piv, g->B, in, g->X, in, &bytes), "bufferSize", err,
             len))
    return INFINITY;
  if (bytes > g->work_bytes) {
    cudaFree(g->work);
    g->work = NULL, g->work_bytes = 0;
    if (failed(cudaMalloc(&g->work, bytes), "cudaMalloc", err, len)) return INFINITY;
    g->work_bytes = bytes;
  }
  double best = INFINITY;
  for (int rep = -1; rep < reps; rep++) {
    if (failed(cudaMemcpy2D(g->A, (size_t)n * es, a, (size_t)lda * es, (size_t)n * es, (size_t)n,
                            cudaMemcpyHostToDevice),
               "cudaMemcpy2D", err, len) ||
        failed(cudaMemcpy2D(g->B, (size_t)n * es, b, (size_t)ldb * es, (size_t)n * es, (size_t)nrhs,
                            cudaMemcpyHostToDevice),
               "cudaMemcpy2D", err, len) ||
        failed(cudaDeviceSynchronize(), "cudaDeviceSynchronize", err, len))
      return INFINITY;
    const double t0 = progress_now();
    if (failed(m->run(h, in, r, g->A, in, g->piv, g->B, in, g->X, in, g->work, g->work_bytes, iter,
                      g->info),
               m->name, err, len) ||
        failed(cudaDeviceSynchronize(), "cudaDeviceSynchronize", err, len))
      return INFINITY;
    const double t = progress_now() - t0;
    if (rep >= 0 && t < best) best = t;
  }
  return best;
}

double bench_irs_gesv(const cli_opts_t *o, int64_t n, int64_t nrhs, const void *a, int64_t lda,
                      const void *b, int64_t ldb, cli_progress_t *prog, const char **name) {
  *name = NULL;
  if (n < 1 || nrhs < 1 || n > 2147483647 / (nrhs > n ? nrhs : n) || bench_gpu_libraries())
    return INFINITY;
  const size_t es = tessera_dtype_size(o->dtype), nn = (size_t)n * (size_t)n;
  char err[160] = "";
  irs_buffers_t g = {0};
  cusolverDnHandle_t h = NULL;
  double best = INFINITY, fell = INFINITY;
  const char *best_name = NULL, *fell_name = NULL;
  if (!failed(cudaSetDevice(0), "cudaSetDevice", err, sizeof err) &&
      !failed(cusolverDnCreate(&h), "cusolverDnCreate", err, sizeof err) &&
      !failed(cudaMalloc(&g.A, nn * es), "cudaMalloc", err, sizeof err) &&
      !failed(cudaMalloc(&g.B, (size_t)n * (size_t)nrhs * es), "cudaMalloc", err, sizeof err) &&
      !failed(cudaMalloc(&g.X, (size_t)n * (size_t)nrhs * es), "cudaMalloc", err, sizeof err) &&
      !failed(cudaMalloc((void **)&g.piv, (size_t)n * sizeof(int)), "cudaMalloc", err,
              sizeof err) &&
      !failed(cudaMalloc((void **)&g.info, sizeof(int)), "cudaMalloc", err, sizeof err))
    for (const irs_mode_t *m = modes[o->dtype]; m->name && !err[0]; m++) {
      progress_phase(prog, "%s n=%lld", m->name, (long long)n);
      int iter = 0;
      const double t =
          time_mode(m, h, &g, n, nrhs, a, lda, b, ldb, es, o->reps, &iter, err, sizeof err);
      if (!o->json && isfinite(t))
        printf("# %s: %.6f s, %d iterations%s\n", m->name, t, iter,
               iter < 0 ? " (fell back to the working precision)" : "");
      if (iter >= 0 && t < best) best = t, best_name = m->name;
      if (iter < 0 && t < fell) fell = t, fell_name = m->name;
    }
  progress_phase(prog, NULL);
  if (err[0]) fprintf(stderr, "tessera: cuSOLVER's IRS baseline did not run: %s\n", err);
  cudaFree(g.A), cudaFree(g.B), cudaFree(g.X), cudaFree(g.piv), cudaFree(g.info), cudaFree(g.work);
  if (h) cusolverDnDestroy(h);
  (void)cudaGetLastError();
  *name = best_name ? best_name : fell_name;
  return best_name ? best : fell;
}

#else /* no CUDA backend: no GPU baseline */

double bench_irs_gesv(const cli_opts_t *o, int64_t n, int64_t nrhs, const void *a, int64_t lda,
                      const void *b, int64_t ldb, cli_progress_t *prog, const char **name) {
  (void)o, (void)n, (void)nrhs, (void)a, (void)lda, (void)b, (void)ldb, (void)prog;
  *name = NULL;
  return INFINITY;
}

#endif
