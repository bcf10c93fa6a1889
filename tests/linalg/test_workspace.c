/* Workspace handles (tessera_data_create_workspace): no home memory until one is needed, the
 * replica made where the first writer runs, contents kept through evictions from full device
 * pools (the simulated devices' 1 MiB pools), synced on request, released without a copy back.
 * The tasks are lacpy tile kernels, which run on every device kind. */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include "linalg_common.h"

#include "linalg/loops/tasks.h"

enum { N = 128, COUNT = 16 }; /* 16 handles of 128 KiB: more than the simulated pools hold */

static tessera_data_t *host_block(tessera_context_t *ctx, double *a) {
  tessera_data_t *h = NULL;
  assert_int_equal(tessera_data_register(ctx, TESSERA_HOST_NODE, a, N, N, N, sizeof *a, &h), 0);
  return h;
}

static void copy(tessera_context_t *ctx, tessera_data_t *src, tessera_data_t *dst) {
  int tag[3] = {0, 0, 0};
  assert_int_equal(tsr_task_lacpy(TESSERA_F64, tsr_context_local_flow(ctx), src, dst, N, N, tag, 0),
                   0);
}

static void round_trip(void **state) {
  (void)state;
  tessera_context_t *ctx = lc_context(8);
  const int gpus = tessera_accelerator_count(ctx) > 0;
  if (gpus) assert_int_equal(tessera_set_scope(ctx, tessera_scope_gpus()), 0);
  double *in = malloc(sizeof(double) * N * N * COUNT), *out = calloc(N * N * COUNT, sizeof *out);
  for (size_t i = 0; i < (size_t)N * N * COUNT; i++) in[i] = (double)i * 0.5 + 1;
  tessera_data_t *src[COUNT], *dst[COUNT], *w[COUNT];
  for (int i = 0; i < COUNT; i++) {
    src[i] = host_block(ctx, in + (size_t)i * N * N);
    dst[i] = host_block(ctx, out + (size_t)i * N * N);
    assert_int_equal(tessera_data_create_workspace(ctx, N, N, sizeof(double), &w[i]), 0);
    assert_null(tessera_data_ptr(w[i])); /* no memory before the first writer */
  }
  for (int i = 0; i < COUNT; i++) copy(ctx, src[i], w[i]);
  for (int i = 0; i < COUNT; i++) copy(ctx, w[i], dst[i]);
  assert_int_equal(tessera_wait_all(ctx), 0);
  for (int i = 0; i < COUNT; i++) assert_int_equal(tessera_data_sync(ctx, dst[i]), 0);
  assert_memory_equal(in, out, sizeof(double) * N * N * COUNT);
  /* synced on request: the host then holds the contents */
  assert_int_equal(tessera_data_sync(ctx, w[0]), 0);
  assert_non_null(tessera_data_ptr(w[0]));
  assert_memory_equal(tessera_data_ptr(w[0]), in, sizeof(double) * N * N);
  for (int i = 0; i < COUNT; i++) {
    assert_int_equal(tessera_data_release(ctx, w[i]), 0);
    assert_int_equal(tessera_data_release(ctx, src[i]), 0);
    assert_int_equal(tessera_data_release(ctx, dst[i]), 0);
  }
  free(in);
  free(out);
  lc_finalize(ctx);
}

static void bad_arguments(void **state) {
  (void)state;
  tessera_context_t *ctx = lc_context(8);
  tessera_data_t *w = NULL;
  assert_int_equal(tessera_data_create_workspace(NULL, 1, 1, 8, &w), -1);
  assert_int_equal(tessera_data_create_workspace(ctx, 1, 1, 0, &w), -4);
  lc_assert_error(ctx);
  assert_int_equal(tessera_data_create_workspace(ctx, 1, 1, 8, NULL), -5);
  /* released before any task: nothing to copy, nothing allocated */
  assert_int_equal(tessera_data_create_workspace(ctx, 4, 4, 8, &w), 0);
  assert_int_equal(tessera_data_release(ctx, w), 0);
  lc_finalize(ctx);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(round_trip),
      cmocka_unit_test(bad_arguments),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
