/* The runtime on GPUs: tessera_run_on_device runs on the worker thread bound to the GPU it
 * names; tasks scoped to one GPU run there; a flow across every GPU and the CPUs gives the
 * sequential result. Skips without a GPU. */
/* ctest-label: gpu */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <cuda_runtime.h>

#include "../test_common.h"

static tessera_context_t *gpu_context(void) {
  tessera_config_t cfg;
  tessera_config_init(&cfg);
  cfg.cpu_workers = 2;
  cfg.perfmodel_file = "none";
  tessera_context_t *ctx = NULL;
  assert_int_equal(tessera_init(&ctx, &cfg), 0);
  return ctx;
}

#define NEED_GPU(ctx)                                                                              \
  do {                                                                                             \
    if (tessera_device_count(ctx, TESSERA_DEVICE_CUDA) == 0) {                                     \
      tessera_finalize(ctx);                                                                       \
      skip();                                                                                      \
    }                                                                                              \
  } while (0)

static int current_device(void *arg) {
  int dev = -1;
  if (cudaGetDevice(&dev) != cudaSuccess) return -1000;
  *(int *)arg = dev;
  return 40 + dev;
}

static void run_on_device_uses_that_gpu(void **state) {
  (void)state;
  tessera_context_t *ctx = gpu_context();
  NEED_GPU(ctx);
  int n = tessera_device_count(ctx, TESSERA_DEVICE_CUDA);
  for (int g = 0; g < n; g++) {
    int seen = -1;
    assert_int_equal(tessera_run_on_device(ctx, g, current_device, &seen), 40 + g);
    assert_int_equal(seen, g);
  }
  assert_true(tessera_run_on_device(ctx, n, current_device, NULL) < 0);
  assert_true(tessera_run_on_device(ctx, 0, NULL, NULL) < 0);
  assert_int_equal(tessera_finalize(ctx), 0);
}

/* A kernel that records the device it ran on: buffers {x (RW), one int64 on the host side}. */
static int where_cpu(const tessera_exec_t *ex, void *args) {
  (void)args;
  *(int64_t *)ex->ptr[0] = -1;
  return 0;
}
static int where_gpu(const tessera_exec_t *ex, void *args) {
  int64_t v = ex->device;
  (void)args;
  return cudaMemcpyAsync(ex->ptr[0], &v, sizeof v, cudaMemcpyHostToDevice,
                         (cudaStream_t)ex->stream) == cudaSuccess &&
                 cudaStreamSynchronize((cudaStream_t)ex->stream) == cudaSuccess
             ? 0
             : TESSERA_ERR_KERNEL;
}
static const tessera_kernel_t where = {
    .name = "where", .impl = {[TESSERA_DEVICE_CPU] = where_cpu, [TESSERA_DEVICE_CUDA] = where_gpu}};

static void scoped_tasks_run_on_that_gpu(void **state) {
  (void)state;
  tessera_context_t *ctx = gpu_context();
  NEED_GPU(ctx);
  int last = tessera_device_count(ctx, TESSERA_DEVICE_CUDA) - 1;
  int64_t x[16];
  tessera_data_t *h[16];
  for (int i = 0; i < 16; i++) {
    x[i] = -2;
    assert_int_equal(tessera_data_register(ctx, TESSERA_HOST_NODE, &x[i], 1, 1, 1, 8, &h[i]), 0);
    tessera_task_t t = {.kernel = &where,
                        .ndata = 1,
                        .data = {h[i]},
                        .mode = {TESSERA_W},
                        .scope = {1u << TESSERA_DEVICE_CUDA, 1ull << last}};
    assert_int_equal(tessera_task_insert(ctx, &t), 0);
  }
  assert_int_equal(tessera_wait_all(ctx), 0);
  for (int i = 0; i < 16; i++) {
    assert_int_equal(tessera_data_release(ctx, h[i]), 0);
    assert_int_equal(x[i], last);
  }
  /* A CPU-only scope runs on the CPUs. */
  assert_int_equal(tessera_set_scope(ctx, tessera_scope_cpus()), 0);
  assert_int_equal(tessera_data_register(ctx, TESSERA_HOST_NODE, &x[0], 1, 1, 1, 8, &h[0]), 0);
  tessera_task_t t = {.kernel = &where, .ndata = 1, .data = {h[0]}, .mode = {TESSERA_W}};
  assert_int_equal(tessera_task_insert(ctx, &t), 0);
  assert_int_equal(tessera_data_release(ctx, h[0]), 0);
  assert_int_equal(x[0], -1);
  assert_int_equal(tessera_finalize(ctx), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(run_on_device_uses_that_gpu),
      cmocka_unit_test(scoped_tasks_run_on_that_gpu),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
