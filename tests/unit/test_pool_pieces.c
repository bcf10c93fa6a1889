/* A task on a simulated device whose pool holds enough free memory for the task's handles, but
 * in pieces around a replica the task itself needs: the task gives its replicas back and
 * acquires them afresh rather than waiting for memory nothing else will free, and its result is
 * right. The pool (1 MiB) first holds X at its start and A after it; X is released, leaving
 * 320 KiB before A and 384 KiB after it; the task then reads A and writes B (448 KiB). Skips in a
 * build without simulated devices. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdlib.h>
#include <tessera/tessera.h>
#include "../test_common.h"

enum { SMALL = 40960, LARGE = 57344 }; /* doubles: 320 KiB and 448 KiB */

/* Reads its handles: buffers {x (R), y (R)}. */
static int touch(const tessera_exec_t *ex, void *args) {
  (void)ex, (void)args;
  return 0;
}

/* b[i] = a[i mod SMALL] + 1: buffers {a (R) SMALL, b (W) LARGE}. */
static int add_one(const tessera_exec_t *ex, void *args) {
  (void)args;
  const double *a = ex->ptr[0];
  double *b = ex->ptr[1];
  for (int i = 0; i < LARGE; i++) b[i] = a[i % SMALL] + 1;
  return 0;
}

static const tessera_kernel_t touching = {
    .name = "test_touch", .impl = {[TESSERA_DEVICE_CPU] = touch, [TESSERA_DEVICE_SIM] = touch}};
static const tessera_kernel_t adding = {
    .name = "test_add_one",
    .impl = {[TESSERA_DEVICE_CPU] = add_one, [TESSERA_DEVICE_SIM] = add_one}};

static void test_pool_in_pieces(void **state) {
  (void)state;
  tessera_config_t cfg;
  tessera_config_init(&cfg);
  cfg.cpu_workers = 1;
  cfg.gpu_mem_limit = 1 << 20;
  cfg.perfmodel_file = "none";
  tessera_context_t *ctx = NULL;
  assert_int_equal(tessera_init(&ctx, &cfg), 0);
  if (tessera_device_count(ctx, TESSERA_DEVICE_SIM) == 0) {
    tessera_finalize(ctx);
    skip(); /* a build without simulated devices */
  }
  const tessera_scope_t dev0 = {1u << TESSERA_DEVICE_SIM, 1};
  double *x = malloc(SMALL * sizeof *x), *a = malloc(SMALL * sizeof *a);
  double *b = malloc(LARGE * sizeof *b);
  assert_non_null(x), assert_non_null(a), assert_non_null(b);
  for (int i = 0; i < SMALL; i++) x[i] = -1, a[i] = i;
  for (int i = 0; i < LARGE; i++) b[i] = 0;
  tessera_data_t *hx = NULL, *ha = NULL, *hb = NULL;
  assert_int_equal(tessera_data_register(ctx, 0, x, SMALL, 1, SMALL, sizeof *x, &hx), 0);
  assert_int_equal(tessera_data_register(ctx, 0, a, SMALL, 1, SMALL, sizeof *a, &ha), 0);
  assert_int_equal(tessera_data_register(ctx, 0, b, LARGE, 1, LARGE, sizeof *b, &hb), 0);
  /* X, then A, on the device; X released: A alone there, between two pieces too small for B */
  const tessera_task_t first = {.kernel = &touching,
                                .ndata = 2,
                                .data = {hx, ha},
                                .mode = {TESSERA_R, TESSERA_R},
                                .scope = dev0};
  assert_int_equal(tessera_task_insert(ctx, &first), 0);
  assert_int_equal(tessera_wait_all(ctx), 0);
  assert_int_equal(tessera_data_release(ctx, hx), 0);
  const tessera_task_t second = {.kernel = &adding,
                                 .ndata = 2,
                                 .data = {ha, hb},
                                 .mode = {TESSERA_R, TESSERA_W},
                                 .scope = dev0};
  assert_int_equal(tessera_task_insert(ctx, &second), 0);
  assert_int_equal(tessera_wait_all(ctx), 0);
  assert_int_equal(tessera_data_release(ctx, ha), 0);
  assert_int_equal(tessera_data_release(ctx, hb), 0);
  for (int i = 0; i < LARGE; i++)
    if (b[i] != (double)(i % SMALL) + 1) fail_msg("b[%d] = %g", i, b[i]);
  assert_int_equal(tessera_finalize(ctx), 0);
  free(x), free(a), free(b);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_pool_in_pieces)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
