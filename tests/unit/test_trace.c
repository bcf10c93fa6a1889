/* Tracing and counters: the Chrome trace written at finalize and by tessera_trace_write, the
 * per-worker counters of tessera_stats, and device copies shown as transfers and counted.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <tessera/tessera.h>

#include "../test_common.h"

/* Sleeps the number of microseconds in its arguments. */
static int nap_kernel(const tessera_exec_t *ex, void *args) {
  (void)ex;
  int us = *(const int *)args;
  if (us) tt_sleep_us(us);
  return 0;
}
static double nap_flops(const void *args) {
  (void)args;
  return 1000.0;
}
static const tessera_kernel_t k_traced = {.name = "tessera_test_traced_kernel",
                                          .impl = {[TESSERA_DEVICE_CPU] = nap_kernel},
                                          .flops = nap_flops};

/* Inserts one task without handles sleeping `us`. */
static int insert(tessera_context_t *ctx, int us) {
  tessera_task_t t;
  memset(&t, 0, sizeof t);
  t.kernel = &k_traced;
  t.args = &us;
  t.args_size = sizeof us;
  t.tag[0] = us;
  t.ntag = 1;
  return tessera_task_insert(ctx, &t);
}

/* 1 when the text's braces and brackets (outside strings) balance and it is one object. */
static int json_balanced(const char *s) {
  int depth = 0, in_str = 0, seen = 0;
  for (; *s; s++) {
    if (in_str) {
      if (*s == '\\' && s[1])
        s++;
      else if (*s == '"')
        in_str = 0;
      continue;
    }
    if (*s == '"')
      in_str = 1;
    else if (*s == '{' || *s == '[')
      depth++, seen = 1;
    else if (*s == '}' || *s == ']') {
      if (--depth < 0) return 0;
    } else if (seen && depth == 0 && *s != ' ' && *s != '\n' && *s != '\r' && *s != '\t')
      return 0;
  }
  return seen && depth == 0 && !in_str;
}

/* The trace names the kernel once per task run (at least `tasks` times) and is well formed. */
static void assert_trace_file(const char *path, int tasks) {
  char *text = tt_read_file(path, NULL);
  if (!text) fail_msg("trace file %s was not written", path);
  assert_non_null(strstr(text, "traceEvents"));
  int count = 0;
  for (const char *p = text; (p = strstr(p, "tessera_test_traced_kernel")); p++) count++;
  if (count < tasks)
    fail_msg("trace %s names the kernel %d times for %d tasks", path, count, tasks);
  if (!json_balanced(text)) fail_msg("trace %s is not a well-formed JSON object", path);
  free(text);
}

static void test_trace(void **state) {
  (void)state;
  unsetenv("TESSERA_TRACE");
  char *path = tt_tmpfile("trace"), *path2 = tt_tmpfile("trace2");
  assert_non_null(path);
  assert_non_null(path2);
  unlink(path);
  unlink(path2);
  tessera_config_t cfg;
  tessera_config_init(&cfg);
  cfg.cpu_workers = 2;
  cfg.gpus = 0;
  cfg.trace_file = path;
  tessera_context_t *ctx = NULL;
  assert_int_equal(tessera_init(&ctx, &cfg), 0);
  for (int i = 0; i < 20; i++) assert_int_equal(insert(ctx, 100), 0);
  assert_int_equal(tessera_wait_all(ctx), 0);
  assert_int_equal(tessera_trace_write(ctx, path2), 0);
  assert_trace_file(path2, 20);
  assert_int_equal(tessera_trace_write(ctx, "/nonexistent_dir_tessera/x/t.json"), TESSERA_ERR_IO);
  assert_int_equal(tessera_finalize(ctx), 0);
  assert_trace_file(path, 20);
  unlink(path);
  unlink(path2);
  free(path);
  free(path2);

  /* tracing off: trace_write is refused */
  ctx = tt_cpu_context(1, TESSERA_SCHED_AUTO);
  assert_int_equal(tessera_trace_write(ctx, "/tmp/tessera_never_written.json"), TESSERA_ERR_STATE);
  assert_int_equal(tessera_finalize(ctx), 0);
}

static void test_stats(void **state) {
  (void)state;
  enum { N = 100 };
  tessera_context_t *ctx = tt_cpu_context(2, TESSERA_SCHED_AUTO);
  assert_int_equal(insert(ctx, 0), 0);
  assert_int_equal(tessera_wait_all(ctx), 0);
  tessera_stats_reset(ctx);
  for (int i = 0; i < N; i++) assert_int_equal(insert(ctx, 200), 0);
  assert_int_equal(tessera_wait_all(ctx), 0);
  tessera_worker_stats_t st[8];
  memset(st, 0, sizeof st);
  assert_int_equal(tessera_stats(ctx, st, 8), 2);
  uint64_t tasks = 0;
  double flops = 0, busy = 0;
  for (int i = 0; i < 2; i++) {
    tasks += st[i].tasks;
    flops += st[i].flops;
    busy += st[i].busy_s;
    assert_true(st[i].busy_s >= 0 && st[i].idle_s >= 0);
  }
  assert_int_equal(tasks, N);
  assert_true(fabs(flops - 1000.0 * N) < 1e-6 * N);
  assert_true(busy > 0);
  /* n smaller than the worker count: only out[0] is filled */
  tessera_worker_stats_t one[2];
  memset(one, 0xab, sizeof one);
  uint8_t pattern[sizeof one[1]];
  memset(pattern, 0xab, sizeof pattern);
  assert_int_equal(tessera_stats(ctx, one, 1), 2);
  assert_memory_equal(&one[1], pattern, sizeof pattern);
  assert_int_equal(one[0].tasks, st[0].tasks);
  tessera_stats_reset(ctx);
  assert_int_equal(tessera_stats(ctx, st, 8), 2);
  assert_int_equal(st[0].tasks + st[1].tasks, 0);
  assert_int_equal(tessera_finalize(ctx), 0);
}

/* With tracing on, the copies device workers make appear as transfers ("copy in" from the
 * host), timed on the device and placed on the host's timeline, and in the device workers'
 * bytes_in counters. Skips without devices. */
enum { TT_MAX_STATS = 32 };

/* A context of one CPU worker and the devices, its tasks on the devices, traced into `path`;
 * NULL (the context finalized) where it has no accelerator. */
static tessera_context_t *traced_on_devices(const char *path) {
  tessera_config_t cfg;
  tessera_config_init(&cfg);
  cfg.cpu_workers = 1;
  cfg.perfmodel_file = "none";
  cfg.trace_file = path;
  cfg.tile_size = 64;
  tessera_context_t *ctx = NULL;
  assert_int_equal(tessera_init(&ctx, &cfg), 0);
  if (tessera_accelerator_count(ctx) == 0) {
    tessera_finalize(ctx);
    return NULL;
  }
  assert_int_equal(tessera_set_scope(ctx, tessera_scope_gpus()), 0);
  return ctx;
}

static void test_trace_copies(void **state) {
  (void)state;
  char *path = tt_tmpfile("copy_trace");
  assert_non_null(path);
  tessera_context_t *ctx = traced_on_devices(path);
  if (!ctx) {
    remove(path);
    free(path);
    skip();
  }
  enum { N = 256 };
  double *a = calloc((size_t)N * N, sizeof *a);
  assert_non_null(a);
  for (int i = 0; i < N; i++) a[(size_t)i * N + i] = 1.0 + i;
  assert_int_equal(tessera_potrf(ctx, TESSERA_LOWER, TESSERA_F64, N, a, N), 0);
  /* The device workers (after the one CPU worker) count the bytes they copied in. */
  tessera_worker_stats_t st[TT_MAX_STATS];
  int nw = tessera_stats(ctx, st, TT_MAX_STATS);
  assert_true(nw >= 2 && nw <= TT_MAX_STATS);
  uint64_t device_bytes = 0;
  for (int i = 1; i < nw; i++) device_bytes += st[i].bytes_in;
  assert_true(device_bytes >= (uint64_t)N * N * sizeof(double) / 2); /* the lower triangle */
  assert_int_equal(tessera_finalize(ctx), 0);
  for (int i = 0; i < N; i++) assert_true(fabs(a[(size_t)i * N + i] - sqrt(1.0 + i)) < 1e-12);
  free(a);
  FILE *f = fopen(path, "r");
  assert_non_null(f);
  char line[512];
  int copies = 0;
  while (fgets(line, sizeof line, f))
    if (strstr(line, "\"cat\":\"transfer\"") && strstr(line, "copy in")) copies++;
  fclose(f);
  remove(path);
  free(path);
  assert_true(copies > 0);
}

/* A device kernel whose call takes `us` on the host, as one does that enqueues more launches
 * than the device's queue holds. */
static const tessera_kernel_t k_device_nap = {
    .name = "tessera_test_device_nap",
    .impl = {[TESSERA_DEVICE_CUDA] = nap_kernel, [TESSERA_DEVICE_SIM] = nap_kernel},
    .flops = nap_flops};

/* A device task's traced span starts when its kernel's call begins: a call that blocks (Q2's
 * thousands of launches) is inside it, not hidden before it. Skips without accelerators. */
static void test_device_span(void **state) {
  (void)state;
  char *path = tt_tmpfile("span");
  assert_non_null(path);
  unlink(path);
  tessera_context_t *ctx = traced_on_devices(path);
  if (!ctx) {
    unlink(path);
    free(path);
    skip();
  }
  enum { NAP_US = 40000 };
  int us = NAP_US;
  tessera_task_t t;
  memset(&t, 0, sizeof t);
  t.kernel = &k_device_nap;
  t.args = &us;
  t.args_size = sizeof us;
  assert_int_equal(tessera_task_insert(ctx, &t), 0);
  assert_int_equal(tessera_finalize(ctx), 0);
  char *text = tt_read_file(path, NULL);
  if (!text) fail_msg("trace file %s was not written", path);
  const char *e = strstr(text, "\"name\":\"tessera_test_device_nap");
  assert_non_null(e);
  const char *d = strstr(e, "\"dur\":");
  assert_non_null(d);
  const double dur = atof(d + 6);
  if (!(dur >= 0.9 * NAP_US))
    fail_msg("the device task's span is %.0f us for a kernel call of %d us", dur, NAP_US);
  free(text);
  unlink(path);
  free(path);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_trace),
      cmocka_unit_test(test_stats),
      cmocka_unit_test(test_trace_copies),
      cmocka_unit_test(test_device_span),
  };
  unsetenv("TESSERA_TRACE");
  tt_watchdog(120);
  return cmocka_run_group_tests(tests, NULL, NULL);
}
