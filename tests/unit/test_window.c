/* The task window (tessera_config_t.max_submitted, TESSERA_MAX_SUBMITTED): insertion blocks
 * while that many tasks are inserted and not finished, so a long flow of slow tasks never holds
 * more than the bound; a worker that inserts tasks never blocks (it may be the one that must
 * run them); the bound is configured from the environment. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdatomic.h>
#include <stdlib.h>

#include <tessera/tessera.h>

#include "../test_common.h"
#include "runtime/context.h"

static atomic_long g_finished;

typedef struct {
  long sleep_us;
  tessera_context_t *ctx; /* non-NULL: insert `inserts` sleeping tasks on `h` from the kernel */
  tessera_data_t *h;
  int inserts;
} win_args_t;

static int slow_kernel(const tessera_exec_t *ex, void *args);

static const tessera_kernel_t slow = {.name = "window_slow",
                                      .impl = {[TESSERA_DEVICE_CPU] = slow_kernel}};

static int read_kernel(const tessera_exec_t *ex, void *args) {
  (void)ex;
  (void)args;
  return 0;
}

static const tessera_kernel_t reader = {.name = "window_read",
                                        .impl = {[TESSERA_DEVICE_CPU] = read_kernel}};

/* Inserts a window_slow task with arguments `a`, reading and writing `h`. */
static int insert_task(tessera_context_t *ctx, tessera_data_t *h, const win_args_t *a) {
  tessera_task_t t = {.kernel = &slow,
                      .args = a,
                      .args_size = sizeof *a,
                      .ndata = 1,
                      .data = {h},
                      .mode = {TESSERA_RW}};
  return tessera_task_insert(ctx, &t);
}

static int insert_slow(tessera_context_t *ctx, tessera_data_t *h, long sleep_us) {
  win_args_t a = {.sleep_us = sleep_us};
  return insert_task(ctx, h, &a);
}

static int slow_kernel(const tessera_exec_t *ex, void *args) {
  const win_args_t *a = args;
  int rc = 0;
  for (int i = 0; i < a->inserts && !rc; i++) rc = insert_slow(a->ctx, a->h, a->sleep_us);
  if (a->sleep_us) tt_sleep_us(a->sleep_us);
  (*(int64_t *)ex->ptr[0])++;
  atomic_fetch_add(&g_finished, 1);
  return rc;
}

static tessera_context_t *make_context(int max_submitted, int cpu_workers) {
  tessera_config_t cfg;
  tessera_config_init(&cfg);
  cfg.cpu_workers = cpu_workers;
  cfg.gpus = 0;
  cfg.max_submitted = max_submitted;
  tessera_context_t *ctx = NULL;
  assert_int_equal(tessera_init(&ctx, &cfg), 0);
  assert_int_equal(tessera_config(ctx)->max_submitted, max_submitted);
  return ctx;
}

/* A chain of slow tasks: each insertion returns with at most `bound` tasks unfinished (the
 * kernels' own count of finished tasks lags the runtime's, so it can only overstate). Without
 * the window every task would be inserted before the first few finish. */
static void test_window_bounds_inflight(void **state) {
  (void)state;
  tt_watchdog(120);
  const int bound = 16, n = tt_quick() ? 120 : 300;
  tessera_context_t *ctx = make_context(bound, 2);
  int64_t value = 0;
  tessera_data_t *h;
  assert_int_equal(tessera_data_register(ctx, TESSERA_HOST_NODE, &value, 1, 1, 1, 8, &h), 0);
  atomic_store(&g_finished, 0);
  long peak = 0;
  for (int i = 0; i < n; i++) {
    assert_int_equal(insert_slow(ctx, h, 1000), 0);
    long unfinished = (i + 1) - atomic_load(&g_finished);
    if (unfinished > peak) peak = unfinished;
  }
  assert_int_equal(tessera_data_sync(ctx, h), 0);
  assert_int_equal(value, n);
  assert_true(peak <= bound);
  assert_true(peak >= 2); /* the chain did run ahead of its kernels */
  assert_int_equal(tessera_data_release(ctx, h), 0);
  assert_int_equal(tessera_finalize(ctx), 0);
  tt_watchdog(0);
}

/* Handles read by many tasks and never touched again (a tile-1 factorization's panels) keep no
 * finished task: the task objects ever made stay within the window plus what the workers hold
 * for reuse, whatever the number of tasks. */
static void test_task_memory_bounded(void **state) {
  (void)state;
  tt_watchdog(120);
  const int bound = 64, workers = 2, nh = tt_quick() ? 500 : 2000, readers = 20;
  tessera_context_t *ctx = make_context(bound, workers);
  int64_t *values = calloc((size_t)nh, sizeof *values);
  tessera_data_t **h = calloc((size_t)nh, sizeof *h);
  assert_non_null(values);
  assert_non_null(h);
  for (int i = 0; i < nh; i++) {
    assert_int_equal(tessera_data_register(ctx, TESSERA_HOST_NODE, &values[i], 1, 1, 1, 8, &h[i]),
                     0);
    win_args_t w = {0};
    assert_int_equal(insert_task(ctx, h[i], &w), 0); /* a writer, then readers only */
    for (int r = 0; r < readers; r++) {
      tessera_task_t t = {.kernel = &reader, .ndata = 1, .data = {h[i]}, .mode = {TESSERA_R}};
      assert_int_equal(tessera_task_insert(ctx, &t), 0);
    }
  }
  assert_int_equal(tessera_wait_all(ctx), 0);
  long made = ctx->tasks_made;
  assert_true(made <= bound + 64L * (workers + 1));
  for (int i = 0; i < nh; i++) assert_int_equal(tessera_data_release(ctx, h[i]), 0);
  assert_int_equal(tessera_finalize(ctx), 0);
  free(values);
  free(h);
  tt_watchdog(0);
}

/* A task on the only CPU worker inserts many more tasks than the bound: were the worker to
 * block, nothing could run them and the test would hang (the watchdog fails it). */
static void test_worker_inserting_never_blocks(void **state) {
  (void)state;
  tt_watchdog(60);
  tessera_context_t *ctx = make_context(4, 1);
  int64_t a = 0, b = 0;
  tessera_data_t *ha, *hb;
  assert_int_equal(tessera_data_register(ctx, TESSERA_HOST_NODE, &a, 1, 1, 1, 8, &ha), 0);
  assert_int_equal(tessera_data_register(ctx, TESSERA_HOST_NODE, &b, 1, 1, 1, 8, &hb), 0);
  atomic_store(&g_finished, 0);
  win_args_t args = {.ctx = ctx, .h = hb, .inserts = 40, .sleep_us = 100};
  assert_int_equal(insert_task(ctx, ha, &args), 0);
  assert_int_equal(tessera_wait_all(ctx), 0);
  assert_int_equal(a, 1);
  assert_int_equal(b, 40);
  assert_int_equal(atomic_load(&g_finished), 41);
  assert_int_equal(tessera_data_release(ctx, ha), 0);
  assert_int_equal(tessera_data_release(ctx, hb), 0);
  assert_int_equal(tessera_finalize(ctx), 0);
  tt_watchdog(0);
}

/* The bound from TESSERA_MAX_SUBMITTED, the default without it, a malformed value refused. */
static void test_window_config(void **state) {
  (void)state;
  tessera_context_t *ctx = NULL;
  unsetenv("TESSERA_MAX_SUBMITTED");
  assert_int_equal(tessera_init(&ctx, NULL), 0);
  assert_int_equal(tessera_config(ctx)->max_submitted, TESSERA_DEFAULT_MAX_SUBMITTED);
  assert_int_equal(tessera_finalize(ctx), 0);
  setenv("TESSERA_MAX_SUBMITTED", "123", 1);
  assert_int_equal(tessera_init(&ctx, NULL), 0);
  assert_int_equal(tessera_config(ctx)->max_submitted, 123);
  assert_int_equal(tessera_finalize(ctx), 0);
  setenv("TESSERA_MAX_SUBMITTED", "0", 1);
  assert_int_equal(tessera_init(&ctx, NULL), TESSERA_ERR_ENV);
  unsetenv("TESSERA_MAX_SUBMITTED");
  tessera_config_t cfg;
  tessera_config_init(&cfg);
  cfg.max_submitted = 0;
  assert_int_not_equal(tessera_init(&ctx, &cfg), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_window_bounds_inflight),
      cmocka_unit_test(test_worker_inserting_never_blocks),
      cmocka_unit_test(test_task_memory_bounded),
      cmocka_unit_test(test_window_config),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
