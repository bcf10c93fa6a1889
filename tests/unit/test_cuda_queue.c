/* tessera_queue_posv and tessera_queue_gesv on each GPU, ordered on a stream of the test's own
 * (the cases of tests/linalg/queue_cases.h, the matrices in device memory), then two streams
 * taking turns on one GPU, and a host queue refused for a device's node. Skipped without a GPU.
 */
/* ctest-label: gpu */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <cuda_runtime.h>

#include "../linalg/lu_common.h"
#include "../linalg/queue_cases.h"

static void *dev_put(const void *host, size_t bytes) {
  void *p = NULL;
  if (!bytes) return NULL;
  assert_int_equal(cudaMalloc(&p, bytes), cudaSuccess);
  assert_int_equal(cudaMemcpy(p, host, bytes, cudaMemcpyHostToDevice), cudaSuccess);
  return p;
}
static void dev_get(void *host, const void *mem, size_t bytes) {
  if (bytes) assert_int_equal(cudaMemcpy(host, mem, bytes, cudaMemcpyDeviceToHost), cudaSuccess);
}
static void dev_drop(void *mem) {
  if (mem) (void)cudaFree(mem);
}
static void dev_sync(void *queue) {
  assert_int_equal(cudaStreamSynchronize((cudaStream_t)queue), cudaSuccess);
}

/* A context over the GPUs, or a skip. */
static tessera_context_t *gpu_context(void) {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n < 1) {
    (void)cudaGetLastError();
    skip();
  }
  tessera_config_t cfg;
  tessera_config_init(&cfg);
  cfg.cpu_workers = 1;
  cfg.gpu_mem_limit = (int64_t)256 << 20;
  tessera_context_t *ctx = NULL;
  assert_int_equal(tessera_init(&ctx, &cfg), 0);
  return ctx;
}

/* The cases on every GPU, each on a stream of its own. */
static void test_cases(void **state) {
  (void)state;
  tessera_context_t *ctx = gpu_context();
  tessera_device_info_t info;
  for (int d = 0; tessera_device_info(ctx, TESSERA_DEVICE_CUDA, d, &info) == 0; d++) {
    assert_int_equal(cudaSetDevice(d), cudaSuccess);
    cudaStream_t s;
    assert_int_equal(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
    const qc_node_t nd = {info.memory_node, s, dev_put, dev_get, dev_drop, dev_sync};
    qc_posv_cases(ctx, &nd);
    qc_posv_batch_cases(ctx, &nd);
    qc_gesv_cases(ctx, &nd);
    qc_syevd_cases(ctx, &nd);
    qc_transpose_cases(ctx, &nd);
    /* a device's node needs a queue */
    int *di = dev_put(&(int){0}, sizeof(int));
    assert_int_equal(tessera_queue_gesv(ctx, info.memory_node, NULL, TESSERA_NOTRANS, TESSERA_F64,
                                        0, 0, NULL, 1, NULL, 1, di),
                     -3);
    dev_drop(di);
    (void)cudaStreamDestroy(s);
  }
  lc_finalize(ctx);
}

/* Two streams take turns on GPU 0 without waiting on the host in between: each call's scratch
 * is free again by the time the other stream's call uses it, so every solution holds. */
static void test_two_streams(void **state) {
  (void)state;
  tessera_context_t *ctx = gpu_context();
  tessera_device_info_t info;
  assert_int_equal(tessera_device_info(ctx, TESSERA_DEVICE_CUDA, 0, &info), 0);
  assert_int_equal(cudaSetDevice(0), cudaSuccess);
  enum { CALLS = 8 };
  const int64_t n = 700;
  cudaStream_t s[2];
  for (int i = 0; i < 2; i++)
    assert_int_equal(cudaStreamCreateWithFlags(&s[i], cudaStreamNonBlocking), cudaSuccess);
  mat_t m[CALLS];
  void *da[CALLS], *dx[CALLS];
  int *di[CALLS];
  double b[700];
  zc_t bz[700];
  for (int i = 0; i < n; i++) b[i] = bz[i] = 1.0 + i % 3;
  for (int c = 0; c < CALLS; c++) {
    m[c] = lu_gen(TESSERA_F64, n, n, 0, (uint64_t)(500 + c));
    da[c] = dev_put(m[c].a, (size_t)(m[c].lda * n) * sizeof(double));
    dx[c] = dev_put(b, sizeof b);
    di[c] = dev_put(&(int){-1}, sizeof(int));
  }
  for (int c = 0; c < CALLS; c++)
    assert_int_equal(tessera_queue_gesv(ctx, info.memory_node, s[c % 2], TESSERA_NOTRANS,
                                        TESSERA_F64, n, 1, da[c], m[c].lda, dx[c], n, di[c]),
                     0);
  for (int c = 0; c < CALLS; c++) {
    dev_sync(s[c % 2]);
    double x[700];
    int inf = -1;
    dev_get(x, dx[c], sizeof x);
    dev_get(&inf, di[c], sizeof inf);
    assert_int_equal(inf, 0);
    const double res = op_resid(TESSERA_F64, TESSERA_NOTRANS, n, 1, m[c].full, x, n, bz);
    if (!(res < 10)) fail_msg("call %d on stream %d: backward error %g", c, c % 2, res);
    dev_drop(da[c]), dev_drop(dx[c]), dev_drop(di[c]);
    lu_mat_free(&m[c]);
  }
  for (int i = 0; i < 2; i++) (void)cudaStreamDestroy(s[i]);
  lc_finalize(ctx);
}

int main(void) {
  tt_watchdog(600);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_cases),
      cmocka_unit_test(test_two_streams),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
