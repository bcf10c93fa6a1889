/* LU's GPU kernels on one GPU, as a step of tessera's getrf runs them on an M x T column panel:
 * the panel's getrf (tessera's CUDA kernel: cuSOLVER's getrf, the NaN scans, the permutation and
 * L_kk⁻¹), alone and on a stream of the highest priority while dgemms of an update's shape run
 * back to back on 1 or 3 streams of the lowest (as the urgent lane runs it beside a GPU worker's
 * other streams); and one update of a later panel (tessera's lu_step: the interchanges, the top
 * block's product with L_kk⁻¹ or its blocked triangular solve, the gemm below), with the top
 * block's step alone in each form and cuBLAS's trmm for comparison. The background gemms are
 * the update's (M x T += M x T times T x T). CUDA events, best of --reps, host enqueue time
 * beside each.
 *
 *   ./build/bench/bench_lu_panel [--m 32768] [--tile 2048] [--dtype d|s] [--reps 3]
 */
#define _POSIX_C_SOURCE 200809L
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef TESSERA_HAVE_CUDA
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>

#include "kernels/kernels.h"
#include "tessera/device.h"

enum { BACKGROUND = 3 };

typedef struct {
  int m, t, reps;
  tessera_dtype_t dt;
  size_t es;
  cudaStream_t urgent, bg[BACKGROUND];
  cublasHandle_t blas, bg_blas[BACKGROUND];
  cusolverDnHandle_t solver;
  cudaEvent_t e0, e1;
  void *panel, *panel0, *b, *b0, *inv, *work, *hwork, *bg_a[BACKGROUND], *bg_c[BACKGROUND];
  int *piv, *info;
  tessera_cuda_scratch_t scratch;
  tessera_async_status_t *status;
} probe_t;

static int fail(const char *what) {
  fprintf(stderr, "bench_lu_panel: %s failed\n", what);
  return 1;
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* Hashed values in [-0.5, 0.5] into an m x n device block. */
static int fill(const probe_t *p, void *dev, size_t m, size_t n, unsigned seed) {
  void *h = malloc(m * n * p->es);
  if (!h) return -1;
  for (size_t i = 0; i < m * n; i++) {
    unsigned x = (unsigned)(i * 2654435761u) ^ seed;
    x ^= x >> 13, x *= 0x5bd1e995u, x ^= x >> 15;
    tsr_scalar_store(p->dt, (char *)h + i * p->es,
                     (tsr_scalar_t){(double)(x & 0xffffff) / 16777216.0 - 0.5, 0});
  }
  int rc = cudaMemcpy(dev, h, m * n * p->es, cudaMemcpyHostToDevice) == cudaSuccess ? 0 : -1;
  free(h);
  return rc;
}

static tessera_exec_t exec_on(probe_t *p, int ndata) {
  tessera_exec_t ex = {.ndata = ndata,
                       .kind = TESSERA_DEVICE_CUDA,
                       .stream = p->urgent,
                       .scratch = &p->scratch,
                       .async = p->status};
  return ex;
}

enum { GETRF, LU_STEP_INV, LU_STEP_TRSM, TOP_INV, TOP_TRSM, TOP_CUBLAS_TRMM, NOPS };
static const char *op_names[NOPS] = {"panel getrf",     "lu_step (L_kk⁻¹)",
                                     "lu_step (trsm)",  "top block: gemm by L_kk⁻¹",
                                     "top block: trsm", "top block: cuBLAS trmm"};

/* Enqueues op once on the urgent stream; 0 or -1. */
static int enqueue(probe_t *p, int op) {
  const size_t m = (size_t)p->m;
  tessera_exec_t ex = exec_on(p, 3);
  if (op == GETRF) {
    tsr_getrf_args_t a = {p->dt, p->m, p->t, 0};
    ex.ptr[0] = p->panel, ex.ld[0] = m;
    ex.ptr[1] = p->piv, ex.ld[1] = (size_t)TSR_PIV_INTS(p->t);
    ex.ptr[2] = p->inv, ex.ld[2] = (size_t)p->t;
    return tsr_cuda_getrf(&ex, &a) ? -1 : 0;
  }
  if (op == LU_STEP_INV || op == LU_STEP_TRSM) {
    tsr_lu_step_args_t a = {p->dt, 'L', 'N', p->m, p->t, 0, p->t, TSR_MATH_OWN};
    ex.ndata = op == LU_STEP_INV ? 4 : 3;
    ex.ptr[0] = p->panel, ex.ld[0] = m;
    ex.ptr[1] = p->b, ex.ld[1] = m;
    ex.ptr[2] = p->piv, ex.ld[2] = (size_t)TSR_PIV_INTS(p->t);
    ex.ptr[3] = p->inv, ex.ld[3] = (size_t)p->t;
    return tsr_cuda_lu_step(&ex, &a) ? -1 : 0;
  }
  tsr_trsm_args_t a = {p->dt, 'L', 'L', 'N', 'U', p->t, p->t, {1, 0}, 0};
  ex.ndata = 2;
  ex.ptr[0] = op == TOP_TRSM ? p->panel : p->inv, ex.ld[0] = op == TOP_TRSM ? m : (size_t)p->t;
  ex.ptr[1] = p->b, ex.ld[1] = m;
  if (op == TOP_INV) return tsr_cuda_trmm_dense(&ex, &a) ? -1 : 0;
  if (op == TOP_TRSM) return tsr_cuda_trsm_blocked(&ex, &a) ? -1 : 0;
  return tsr_cuda_trmm(&ex, &a) ? -1 : 0;
}

/* Best time of op in ms with `busy` background streams running update gemms meanwhile; the
 * inputs restored before each run. *host: the best host enqueue time; *rate: the background's
 * TFLOP/s over the last run. */
static double time_op(probe_t *p, int op, int busy, double *host, double *rate) {
  const size_t m = (size_t)p->m, t = (size_t)p->t;
  const double d1 = 1, dm1 = -1;
  const float s1 = 1, sm1 = -1;
  const bool single = p->dt == TESSERA_F32;
  const void *one = single ? (const void *)&s1 : (const void *)&d1;
  const void *m1 = single ? (const void *)&sm1 : (const void *)&dm1;
  const cudaDataType type = single ? CUDA_R_32F : CUDA_R_64F;
  double best = 1e30;
  *host = 1e30, *rate = 0;
  cudaStream_t bg0 = p->bg[0];
  for (int rep = -1; rep < p->reps; rep++) {
    /* the panel is factored for every op but the getrf itself (restored from the first run) */
    if (op == GETRF)
      cudaMemcpyAsync(p->panel, p->panel0, m * t * p->es, cudaMemcpyDeviceToDevice, p->urgent);
    cudaMemcpyAsync(p->b, p->b0, m * t * p->es, cudaMemcpyDeviceToDevice, p->urgent);
    cudaStreamSynchronize(p->urgent);
    /* enough background gemms to outlast the op: 40 of them per stream */
    cudaEvent_t g0, g1;
    cudaEventCreate(&g0);
    cudaEventCreate(&g1);
    const int k = p->t, reps = 40;
    for (int s = 0; s < busy; s++) {
      if (s == 0) cudaEventRecord(g0, bg0);
      for (int r = 0; r < reps; r++)
        cublasGemmEx(p->bg_blas[s], CUBLAS_OP_N, CUBLAS_OP_N, (int)m, (int)t, k, m1, p->bg_a[s],
                     type, (int)m, p->bg_a[s], type, (int)m, one, p->bg_c[s], type, (int)m,
                     single ? CUBLAS_COMPUTE_32F : CUBLAS_COMPUTE_64F, CUBLAS_GEMM_DEFAULT);
      if (s == 0) cudaEventRecord(g1, bg0);
    }
    cudaEventRecord(p->e0, p->urgent);
    double h0 = now_ms();
    if (enqueue(p, op)) return -1;
    double h1 = now_ms() - h0;
    cudaEventRecord(p->e1, p->urgent);
    cudaDeviceSynchronize();
    float ms = 0, gms = 0;
    cudaEventElapsedTime(&ms, p->e0, p->e1);
    if (busy) cudaEventElapsedTime(&gms, g0, g1);
    if (busy) *rate = busy * 2.0 * (double)m * (double)t * k * reps / (gms * 1e-3) * 1e-12;
    cudaEventDestroy(g0);
    cudaEventDestroy(g1);
    if (rep >= 0 && ms < best) best = ms;
    if (rep >= 0 && h1 < *host) *host = h1;
  }
  return best;
}

/* Times op beside `busy` gemm streams and prints its line; 0, or 1 (message printed). */
static int report(probe_t *p, int op, int busy) {
  const double m = p->m, t = p->t;
  const double f = op == GETRF                               ? m * t * t - t * t * t / 3
                   : op == LU_STEP_INV || op == LU_STEP_TRSM ? 2.0 * (m - t) * t * t + t * t * t
                                                             : t * t * t;
  const int n = busy;
  double host = 0, rate = 0, ms = time_op(p, op, n, &host, &rate);
  if (ms < 0) return fail(op_names[op]);
  printf("%s %6d x %-5d %-26s %9.3f ms %6.1f TFLOP/s  host %7.3f ms",
         p->dt == TESSERA_F32 ? "f32" : "f64", p->m, p->t, op_names[op], ms,
         f / (ms * 1e-3) * 1e-12, host);
  if (n) printf("  beside %d gemm stream%s", n, n > 1 ? "s" : "");
  if (n) printf(" (%.1f TFLOP/s)", rate);
  printf("\n");
  return 0;
}

static int run(probe_t *p) {
  const size_t m = (size_t)p->m, t = (size_t)p->t, panel = m * t * p->es;
  int lo = 0, hi = 0;
  cudaDeviceGetStreamPriorityRange(&lo, &hi);
  if (cudaStreamCreateWithPriority(&p->urgent, cudaStreamNonBlocking, hi) != cudaSuccess)
    return fail("stream");
  if (cublasCreate(&p->blas) || cusolverDnCreate(&p->solver)) return fail("library handles");
  cublasSetStream(p->blas, p->urgent);
  cusolverDnSetStream(p->solver, p->urgent);
  for (int s = 0; s < BACKGROUND; s++) {
    if (cudaStreamCreateWithPriority(&p->bg[s], cudaStreamNonBlocking, lo) != cudaSuccess ||
        cublasCreate(&p->bg_blas[s]) || cudaMalloc(&p->bg_a[s], panel) != cudaSuccess ||
        cudaMalloc(&p->bg_c[s], panel) != cudaSuccess || fill(p, p->bg_a[s], m, t, 10u + s) ||
        fill(p, p->bg_c[s], m, t, 20u + s))
      return fail("background streams");
    cublasSetStream(p->bg_blas[s], p->bg[s]);
  }
  const size_t work = (size_t)256 << 20;
  if (cudaMalloc(&p->panel, panel) || cudaMalloc(&p->panel0, panel) || cudaMalloc(&p->b, panel) ||
      cudaMalloc(&p->b0, panel) || cudaMalloc(&p->inv, t * t * p->es) ||
      cudaMalloc(&p->work, work) ||
      cudaMalloc((void **)&p->piv, (size_t)TSR_PIV_INTS(p->t) * sizeof(int)) ||
      cudaMalloc((void **)&p->info, sizeof(int)) ||
      cudaMallocHost((void **)&p->status, sizeof *p->status))
    return fail("cudaMalloc");
  p->hwork = malloc(1 << 20);
  p->scratch = (tessera_cuda_scratch_t){.cublas = p->blas,
                                        .cusolver = p->solver,
                                        .workspace = p->work,
                                        .workspace_bytes = work,
                                        .host_workspace = p->hwork,
                                        .host_workspace_bytes = 1 << 20,
                                        .dev_info = p->info};
  cudaEventCreate(&p->e0);
  cudaEventCreate(&p->e1);
  if (fill(p, p->panel0, m, t, 1) || fill(p, p->b0, m, t, 2)) return fail("fill");
  /* every op alone; the panel's getrf also beside 1 and 3 streams of update gemms */
  for (int op = 0; op < NOPS; op++)
    for (int busy = 0; busy <= (op == GETRF ? BACKGROUND : 0); busy += busy < 1 ? 1 : 2)
      if (report(p, op, busy)) return 1;
  return 0;
}

int main(int argc, char **argv) {
  probe_t p = {.m = 32768, .t = 2048, .reps = 3, .dt = TESSERA_F64};
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--m") && i + 1 < argc)
      p.m = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--tile") && i + 1 < argc)
      p.t = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--dtype") && i + 1 < argc)
      p.dt = argv[++i][0] == 's' ? TESSERA_F32 : TESSERA_F64;
    else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
      p.reps = atoi(argv[++i]);
    else {
      fprintf(stderr, "usage: %s [--m M] [--tile T] [--dtype d|s] [--reps R]\n", argv[0]);
      return 2;
    }
  }
  if (p.t < 1 || p.m < p.t || p.reps < 1) {
    fprintf(stderr, "bench_lu_panel: the tile must be in 1 .. m and reps at least 1.\n");
    return 2;
  }
  p.es = tessera_dtype_size(p.dt);
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    printf("bench_lu_panel: no GPU\n");
    return 0;
  }
  return run(&p);
}
#else
int main(void) {
  printf("bench_lu_panel: built without CUDA\n");
  return 0;
}
#endif
