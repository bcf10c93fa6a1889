/* Tile kernel rates on one GPU: the cuBLAS / cuSOLVER calls tessera's Cholesky tasks make, on
 * square tiles of side T, timed with CUDA events (warm, best of --reps), so a trace's task times
 * can be read against what the library gives a lone kernel.
 *
 *   ./build/bench/bench_gpu_kernels [--tiles 1024,2048,4096] [--dtype d|s] [--reps R]
 *
 * Rows: gemm (N, C), syrk (lower, N), trsm (right, lower, C: a Cholesky panel tile), trmm in
 * place and out of place (the same product with an inverted diagonal tile), trtri (cuSOLVER, and
 * tessera's GPU kernel: recursive halving onto trmm) and potrf. Each
 * run starts from the same inputs (restored by a device copy outside the timed window). Beside
 * each GPU time: the host time the call takes to enqueue (a GPU worker's thread is busy that
 * long before it can launch another task). */
#define _POSIX_C_SOURCE 200809L
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

typedef struct {
  int t, single, reps;
  size_t es, bytes;
  cublasHandle_t blas;
  cusolverDnHandle_t solver;
  cudaStream_t s;
  cudaEvent_t e0, e1;
  void *a, *b, *c, *tri, *spd, *b0, *work, *hwork;
  size_t work_bytes, hwork_bytes;
  int *info;
  tessera_cuda_scratch_t scratch; /* tessera's own kernels run on these */
  tessera_async_status_t *status;
} probe_t;

enum { GEMM, SYRK, TRSM, TRMM_IN, TRMM_OUT, TRTRI, TRTRI_TSR, POTRF, NOPS };
static const char *op_names[NOPS] = {
    "gemm", "syrk", "trsm", "trmm (in place)", "trmm (out)", "trtri", "trtri (tessera)", "potrf"};

static int fail(const char *what) {
  fprintf(stderr, "bench_gpu_kernels: %s failed\n", what);
  return 1;
}

/* Host fill: hashed values in [-0.5, 0.5], `diag` added on the diagonal; converted to the
 * dtype. */
static void fill(const probe_t *p, void *dev, double diag, unsigned seed) {
  size_t n = (size_t)p->t * (size_t)p->t;
  void *h = malloc(n * p->es);
  for (size_t i = 0; i < n; i++) {
    unsigned x = (unsigned)(i * 2654435761u) ^ seed;
    x ^= x >> 13, x *= 0x5bd1e995u, x ^= x >> 15;
    double v = (double)(x & 0xffffff) / 16777216.0 - 0.5;
    if (i % ((size_t)p->t + 1) == 0) v += diag;
    if (p->single)
      ((float *)h)[i] = (float)v;
    else
      ((double *)h)[i] = v;
  }
  cudaMemcpy(dev, h, n * p->es, cudaMemcpyHostToDevice);
  free(h);
}

/* Enqueues op once; 0 or -1. */
static int enqueue(probe_t *p, int op) {
  const int t = p->t;
  const double dm1 = -1, d1 = 1;
  const float sm1 = -1, s1 = 1;
  const void *m1 = p->single ? (const void *)&sm1 : (const void *)&dm1;
  const void *one = p->single ? (const void *)&s1 : (const void *)&d1;
  const cudaDataType type = p->single ? CUDA_R_32F : CUDA_R_64F;
  const cublasFillMode_t lo = CUBLAS_FILL_MODE_LOWER;
  const cublasSideMode_t r = CUBLAS_SIDE_RIGHT;
  const cublasOperation_t tr = CUBLAS_OP_T;
  const cublasDiagType_t nu = CUBLAS_DIAG_NON_UNIT;
  cublasStatus_t st = CUBLAS_STATUS_SUCCESS;
  cusolverStatus_t ss = CUSOLVER_STATUS_SUCCESS;
  void *out = op == TRMM_OUT ? p->c : p->b;
  switch (op) {
  case GEMM:
    st = cublasGemmEx(p->blas, CUBLAS_OP_N, tr, t, t, t, m1, p->a, type, t, p->b, type, t, one,
                      p->c, type, t, p->single ? CUBLAS_COMPUTE_32F : CUBLAS_COMPUTE_64F,
                      CUBLAS_GEMM_DEFAULT);
    break;
  case SYRK:
    st = p->single ? cublasSsyrk(p->blas, lo, CUBLAS_OP_N, t, t, m1, p->a, t, one, p->c, t)
                   : cublasDsyrk(p->blas, lo, CUBLAS_OP_N, t, t, m1, p->a, t, one, p->c, t);
    break;
  case TRSM:
    st = p->single ? cublasStrsm(p->blas, r, lo, tr, nu, t, t, one, p->tri, t, p->b, t)
                   : cublasDtrsm(p->blas, r, lo, tr, nu, t, t, one, p->tri, t, p->b, t);
    break;
  case TRMM_IN:
  case TRMM_OUT:
    st = p->single ? cublasStrmm(p->blas, r, lo, tr, nu, t, t, one, p->tri, t, p->b, t, out, t)
                   : cublasDtrmm(p->blas, r, lo, tr, nu, t, t, one, p->tri, t, p->b, t, out, t);
    break;
  case TRTRI:
    ss = cusolverDnXtrtri(p->solver, lo, nu, t, type, p->a, t, p->work, p->work_bytes, p->hwork,
                          p->hwork_bytes, p->info);
    break;
  case TRTRI_TSR: {
    tessera_exec_t ex = {.ndata = 1,
                         .kind = TESSERA_DEVICE_CUDA,
                         .stream = p->s,
                         .scratch = &p->scratch,
                         .async = p->status};
    ex.ptr[0] = p->a, ex.ld[0] = (size_t)t;
    tsr_trtri_args_t ta = {p->single ? TESSERA_F32 : TESSERA_F64, 'L', 'N', t, 0};
    return tsr_cuda_trtri(&ex, &ta) ? -1 : 0;
  }
  case POTRF:
    ss = cusolverDnXpotrf(p->solver, NULL, lo, t, type, p->a, t, type, p->work, p->work_bytes,
                          p->hwork, p->hwork_bytes, p->info);
    break;
  }
  return st == CUBLAS_STATUS_SUCCESS && ss == CUSOLVER_STATUS_SUCCESS ? 0 : -1;
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* Best time of op in ms, inputs restored before each run; *host: the best host time spent
 * enqueueing it (what a worker thread is busy for before it can launch its next task). */
static double time_op(probe_t *p, int op, double *host) {
  double best = 1e30;
  *host = 1e30;
  for (int rep = -1; rep < p->reps; rep++) {
    /* potrf and trtri work in place on a: an SPD tile (its factor is a fine triangle too) */
    cudaMemcpyAsync(p->a,
                    op == POTRF   ? p->spd
                    : op == TRTRI ? p->tri
                                  : p->b0,
                    p->bytes, cudaMemcpyDeviceToDevice, p->s);
    cudaMemcpyAsync(p->b, p->b0, p->bytes, cudaMemcpyDeviceToDevice, p->s);
    cudaEventRecord(p->e0, p->s);
    double h0 = now_ms();
    if (enqueue(p, op)) return -1;
    double h1 = now_ms() - h0;
    cudaEventRecord(p->e1, p->s);
    cudaEventSynchronize(p->e1);
    float ms = 0;
    cudaEventElapsedTime(&ms, p->e0, p->e1);
    if (rep >= 0 && ms < best) best = ms;
    if (rep >= 0 && h1 < *host) *host = h1;
  }
  return best;
}

static double flops(int op, double t) {
  switch (op) {
  case GEMM:
    return 2 * t * t * t;
  case SYRK:
    return t * t * (t + 1);
  case TRSM:
  case TRMM_IN:
  case TRMM_OUT:
    return t * t * t;
  default:
    return t * t * t / 3; /* trtri, potrf */
  }
}

static int run_tile(int t, int single, int reps) {
  probe_t p = {.t = t, .single = single, .reps = reps, .es = single ? 4 : 8};
  p.bytes = (size_t)t * (size_t)t * p.es;
  void **bufs[] = {&p.a, &p.b, &p.c, &p.tri, &p.spd, &p.b0};
  for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++)
    if (cudaMalloc(bufs[i], p.bytes) != cudaSuccess) return fail("cudaMalloc");
  if (cudaMalloc((void **)&p.info, sizeof(int)) != cudaSuccess) return fail("cudaMalloc");
  cudaStreamCreate(&p.s);
  cudaEventCreate(&p.e0);
  cudaEventCreate(&p.e1);
  if (cublasCreate(&p.blas) || cusolverDnCreate(&p.solver)) return fail("library handles");
  cublasSetStream(p.blas, p.s);
  cusolverDnSetStream(p.solver, p.s);
  const cudaDataType type = single ? CUDA_R_32F : CUDA_R_64F;
  size_t w1 = 0, h1 = 0, w2 = 0, h2 = 0;
  cusolverDnXpotrf_bufferSize(p.solver, NULL, CUBLAS_FILL_MODE_LOWER, t, type, p.a, t, type, &w1,
                              &h1);
  cusolverDnXtrtri_bufferSize(p.solver, CUBLAS_FILL_MODE_LOWER, CUBLAS_DIAG_NON_UNIT, t, type, p.a,
                              t, &w2, &h2);
  p.work_bytes = (w1 > w2 ? w1 : w2) + p.bytes; /* room for an out-of-place trmm */
  p.hwork_bytes = (h1 > h2 ? h1 : h2) + 256;
  if (cudaMalloc(&p.work, p.work_bytes) != cudaSuccess) return fail("cudaMalloc");
  p.hwork = malloc(p.hwork_bytes);
  p.scratch = (tessera_cuda_scratch_t){.cublas = p.blas,
                                       .cusolver = p.solver,
                                       .workspace = p.work,
                                       .workspace_bytes = p.work_bytes,
                                       .host_workspace = p.hwork,
                                       .host_workspace_bytes = p.hwork_bytes,
                                       .dev_info = p.info};
  if (cudaMallocHost((void **)&p.status, sizeof *p.status) != cudaSuccess)
    return fail("cudaMallocHost");
  fill(&p, p.b0, 0, 1);
  fill(&p, p.c, 0, 2);
  fill(&p, p.tri, t, 3); /* diagonally dominant: a well-conditioned triangle */
  fill(&p, p.spd, 2.0 * t, 4);
  /* spd: symmetrise on the host side is unneeded, potrf reads the lower triangle only */
  printf("%-6s %5d  cuSOLVER host workspace: potrf %zu B, trtri %zu B\n", single ? "f32" : "f64", t,
         h1, h2);
  for (int op = 0; op < NOPS; op++) {
    double host = 0, ms = time_op(&p, op, &host);
    if (ms < 0) return fail(op_names[op]);
    printf("%-6s %5d  %-16s %8.3f ms  %6.1f TFLOP/s  host enqueue %7.3f ms\n",
           single ? "f32" : "f64", t, op_names[op], ms, flops(op, t) / (ms * 1e-3) * 1e-12, host);
  }
  for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++) cudaFree(*bufs[i]);
  cudaFree(p.work);
  cudaFree(p.info);
  free(p.hwork);
  cudaFreeHost(p.status);
  cublasDestroy(p.blas);
  cusolverDnDestroy(p.solver);
  cudaEventDestroy(p.e0);
  cudaEventDestroy(p.e1);
  cudaStreamDestroy(p.s);
  return 0;
}

int main(int argc, char **argv) {
  const char *tiles = "1024,2048,4096";
  int single = 0, reps = 5;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--tiles") && i + 1 < argc)
      tiles = argv[++i];
    else if (!strcmp(argv[i], "--dtype") && i + 1 < argc)
      single = argv[++i][0] == 's';
    else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
      reps = atoi(argv[++i]);
    else {
      fprintf(stderr, "usage: %s [--tiles T,T,...] [--dtype d|s] [--reps R]\n", argv[0]);
      return 2;
    }
  }
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    printf("bench_gpu_kernels: no GPU\n");
    return 0;
  }
  for (const char *s = tiles; s && *s;) {
    int t = atoi(s);
    if (t > 0 && run_tile(t, single, reps)) return 1;
    s = strchr(s, ',');
    if (s) s++;
  }
  return 0;
}
#else
int main(void) {
  printf("bench_gpu_kernels: built without CUDA\n");
  return 0;
}
#endif
