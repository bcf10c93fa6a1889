/* Runtime behaviour through the public API: context lifecycle and configuration, failing
 * kernels and flow status, invalid tasks and handles, tessera_data_sync, priorities, scopes,
 * status strings and dtype helpers (tracing and counters: test_trace.c).
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
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <tessera/tessera.h>

#include "../test_common.h"

/* ---------------------------------------------------------------- a configurable kernel */

typedef struct {
  int code;     /* returned status */
  int sleep_us; /* sleep before returning */
  int id;       /* >= 0: appended to the log */
  int barrier;  /* > 0: wait until that many barrier tasks arrived; < 0: wait for g_release */
  int incr;     /* add 1 to the int64 at data[0] */
} rt_args_t;

static atomic_int g_ran, g_arrived, g_release, g_timeout, g_blocker_done, g_started, g_logn;
static int g_log[64];

static void reset_globals(void) {
  atomic_store(&g_ran, 0);
  atomic_store(&g_arrived, 0);
  atomic_store(&g_release, 0);
  atomic_store(&g_timeout, 0);
  atomic_store(&g_blocker_done, 0);
  atomic_store(&g_started, 0);
  atomic_store(&g_logn, 0);
}

static int rt_kernel(const tessera_exec_t *ex, void *args) {
  const rt_args_t *a = args;
  double t0 = tt_now();
  if (a->barrier > 0) {
    atomic_fetch_add(&g_arrived, 1);
    while (atomic_load(&g_arrived) < a->barrier) {
      if (tt_now() - t0 > 10) {
        atomic_store(&g_timeout, 1);
        break;
      }
      tt_sleep_us(100);
    }
  } else if (a->barrier < 0) {
    atomic_store(&g_started, 1);
    while (!atomic_load(&g_release)) {
      if (tt_now() - t0 > 20) {
        atomic_store(&g_timeout, 1);
        break;
      }
      tt_sleep_us(100);
    }
  }
  if (a->sleep_us) tt_sleep_us(a->sleep_us);
  if (a->id >= 0) {
    int i = atomic_fetch_add(&g_logn, 1);
    if (i < 64) g_log[i] = a->id;
  }
  if (a->incr && ex->ndata > 0) ((int64_t *)ex->ptr[0])[0] += 1;
  atomic_fetch_add(&g_ran, 1);
  if (a->barrier < 0) atomic_store(&g_blocker_done, 1);
  return a->code;
}

static const tessera_kernel_t k_rt = {.name = "tessera_test_rt",
                                      .impl = {[TESSERA_DEVICE_CPU] = rt_kernel}};
static const tessera_kernel_t k_noimpl = {.name = "tessera_test_noimpl"};
static const tessera_kernel_t k_cudaonly = {.name = "tessera_test_cudaonly",
                                            .impl = {[TESSERA_DEVICE_CUDA] = rt_kernel}};

static rt_args_t args_of(int code, int sleep_us, int id, int barrier, int incr) {
  rt_args_t a = {code, sleep_us, id, barrier, incr};
  return a;
}

/* Inserts one task of `k` with `a` on handle h (RW, or no handle when h is NULL). */
static int insert(tessera_context_t *ctx, const tessera_kernel_t *k, rt_args_t a, tessera_data_t *h,
                  int priority) {
  tessera_task_t t;
  memset(&t, 0, sizeof t);
  t.kernel = k;
  t.args = &a;
  t.args_size = sizeof a;
  t.ndata = h ? 1 : 0;
  t.data[0] = h;
  t.mode[0] = TESSERA_RW;
  t.priority = priority;
  return tessera_task_insert(ctx, &t);
}

/* Waits until a blocker task (barrier < 0) has started. */
static void wait_blocker_started(void) {
  double t0 = tt_now();
  while (!atomic_load(&g_started)) {
    if (tt_now() - t0 > 20) fail_msg("a ready task did not start within 20 s");
    tt_sleep_us(200);
  }
}

static tessera_data_t *reg(tessera_context_t *ctx, int64_t *v) {
  tessera_data_t *h = NULL;
  assert_int_equal(tessera_data_register(ctx, TESSERA_HOST_NODE, v, 1, 1, 1, sizeof *v, &h), 0);
  assert_non_null(h);
  return h;
}

static void assert_has_error(const tessera_context_t *ctx) {
  const char *e = tessera_last_error(ctx);
  assert_non_null(e);
  assert_true(strlen(e) > 0);
}

/* ---------------------------------------------------------------- lifecycle */

static void test_init_defaults(void **state) {
  (void)state;
  tessera_context_t *ctx = NULL;
  assert_int_equal(tessera_init(&ctx, NULL), 0);
  assert_non_null(ctx);
  int w = tessera_worker_count(ctx);
  assert_true(w >= 1);
  const tessera_config_t *cfg = tessera_config(ctx);
  assert_non_null(cfg);
  assert_true(cfg->cpu_workers >= 0 && cfg->gpus >= 0);
  assert_true(cfg->sched == TESSERA_SCHED_COST || cfg->sched == TESSERA_SCHED_LOCALITY);
  assert_true(tessera_default_tile(ctx) > 0);
  assert_int_equal(tessera_device_count(ctx, TESSERA_DEVICE_CPU), cfg->cpu_workers > 0 ? 1 : 0);
  assert_true(tessera_memory_node_count(ctx) >= 1);
  assert_true(tessera_bandwidth(ctx, 0, 1000) == 0.0);
  assert_non_null(tessera_last_error(ctx));
  assert_int_equal(tessera_wait_all(ctx), 0); /* nothing inserted */
  assert_int_equal(tessera_finalize(ctx), 0);
  assert_int_equal(tessera_finalize(NULL), 0);
}

static void test_init_explicit(void **state) {
  (void)state;
  tessera_config_t cfg;
  tessera_config_init(&cfg);
  assert_int_equal(cfg.cpu_workers, -1);
  assert_int_equal(cfg.sched, TESSERA_SCHED_AUTO);
  assert_null(cfg.trace_file);
  cfg.cpu_workers = 3;
  cfg.gpus = 0;
  cfg.sched = TESSERA_SCHED_LOCALITY;
  cfg.tile_size = 17;
  cfg.bind_workers = 0;
  cfg.perfmodel_file = "none";
  tessera_context_t *ctx = NULL;
  assert_int_equal(tessera_init(&ctx, &cfg), 0);
  const tessera_config_t *c = tessera_config(ctx);
  assert_int_equal(c->cpu_workers, 3);
  assert_int_equal(c->gpus, 0);
  assert_int_equal(c->sched, TESSERA_SCHED_LOCALITY);
  assert_int_equal(c->tile_size, 17);
  assert_int_equal(tessera_worker_count(ctx), 3);
  assert_int_equal(tessera_default_tile(ctx), 17);
  assert_int_equal(tessera_device_count(ctx, TESSERA_DEVICE_CPU), 1);
  assert_int_equal(tessera_device_count(ctx, TESSERA_DEVICE_CUDA), 0);
  assert_int_equal(tessera_device_count(ctx, TESSERA_DEVICE_SIM), 0);
  assert_int_equal(tessera_accelerator_count(ctx), 0);
  assert_int_equal(tessera_memory_node_count(ctx), 1);
  tessera_device_info_t info;
  memset(&info, 0, sizeof info);
  assert_int_equal(tessera_device_info(ctx, TESSERA_DEVICE_CPU, 0, &info), 0);
  assert_int_equal(info.kind, TESSERA_DEVICE_CPU);
  assert_int_equal(info.memory_node, TESSERA_HOST_NODE);
  assert_int_equal(info.workers, 3);
  assert_true(strlen(info.name) > 0);
  assert_true(tessera_device_info(ctx, TESSERA_DEVICE_CPU, 1, &info) < 0);
  assert_true(tessera_device_info(ctx, TESSERA_DEVICE_CUDA, 0, &info) < 0);
  int64_t v = 0;
  tessera_data_t *h = reg(ctx, &v);
  for (int i = 0; i < 5; i++)
    assert_int_equal(insert(ctx, &k_rt, args_of(0, 0, -1, 0, 1), h, 0), 0);
  assert_int_equal(tessera_wait_all(ctx), 0);
  assert_int_equal(tessera_data_release(ctx, h), 0);
  assert_int_equal(v, 5);
  assert_int_equal(tessera_finalize(ctx), 0);
}

/* init with `cfg` under env NAME=VALUE; returns init's status (finalizing on success). */
static int init_with_env(const char *name, const char *value, const tessera_config_t *cfg,
                         int *workers, int *tile, tessera_sched_policy_t *sched) {
  setenv(name, value, 1);
  tessera_context_t *ctx = NULL;
  int rc = tessera_init(&ctx, cfg);
  unsetenv(name);
  if (rc == 0) {
    if (workers) *workers = tessera_worker_count(ctx);
    if (tile) *tile = tessera_default_tile(ctx);
    if (sched) *sched = tessera_config(ctx)->sched;
    assert_int_equal(tessera_finalize(ctx), 0);
  }
  return rc;
}

static void test_init_env(void **state) {
  (void)state;
  tessera_config_t cfg;
  tessera_config_init(&cfg);
  cfg.gpus = 0;
  int w = 0, tile = 0;
  tessera_sched_policy_t sched = TESSERA_SCHED_AUTO;
  assert_int_equal(init_with_env("TESSERA_CPU_WORKERS", "2", &cfg, &w, NULL, NULL), 0);
  assert_int_equal(w, 2);
  assert_int_equal(init_with_env("TESSERA_CPU_WORKERS", "3", &cfg, &w, NULL, NULL), 0);
  assert_int_equal(w, 3);
  cfg.cpu_workers = 1; /* explicit wins over the environment */
  assert_int_equal(init_with_env("TESSERA_CPU_WORKERS", "3", &cfg, &w, NULL, NULL), 0);
  assert_int_equal(w, 1);
  cfg.cpu_workers = -1;
  assert_int_equal(init_with_env("TESSERA_CPU_WORKERS", "abc", &cfg, NULL, NULL, NULL),
                   TESSERA_ERR_ENV);
  assert_int_equal(init_with_env("TESSERA_CPU_WORKERS", "3x", &cfg, NULL, NULL, NULL),
                   TESSERA_ERR_ENV);
  assert_int_equal(init_with_env("TESSERA_CPU_WORKERS", "abc", NULL, NULL, NULL, NULL),
                   TESSERA_ERR_ENV);
  assert_int_equal(init_with_env("TESSERA_SCHED", "locality", &cfg, NULL, NULL, &sched), 0);
  assert_int_equal(sched, TESSERA_SCHED_LOCALITY);
  assert_int_equal(init_with_env("TESSERA_SCHED", "bogus", &cfg, NULL, NULL, NULL),
                   TESSERA_ERR_ENV);
  assert_int_equal(init_with_env("TESSERA_TILE", "24", &cfg, NULL, &tile, NULL), 0);
  assert_int_equal(tile, 24);
  assert_int_equal(init_with_env("TESSERA_TILE", "big", &cfg, NULL, NULL, NULL), TESSERA_ERR_ENV);
  assert_int_equal(init_with_env("TESSERA_GPU_QUEUES", "2", &cfg, NULL, NULL, NULL), 0);
  assert_int_equal(init_with_env("TESSERA_GPU_QUEUES", "0", &cfg, NULL, NULL, NULL),
                   TESSERA_ERR_ENV);
  assert_int_equal(init_with_env("TESSERA_GPU_FLIGHTS", "3", &cfg, NULL, NULL, NULL), 0);
  assert_int_equal(init_with_env("TESSERA_GPU_FLIGHTS", "1", &cfg, NULL, NULL, NULL),
                   TESSERA_ERR_ENV);
  char over[16];
  snprintf(over, sizeof over, "%d", TESSERA_MAX_GPU_QUEUES + 1);
  assert_int_equal(init_with_env("TESSERA_GPU_QUEUES", over, &cfg, NULL, NULL, NULL),
                   TESSERA_ERR_ENV);
  cfg.gpu_queues = TESSERA_MAX_GPU_QUEUES + 1; /* explicit and out of range: invalid config */
  tessera_context_t *ctx = NULL;
  assert_int_equal(tessera_init(&ctx, &cfg), -2);
  assert_null(ctx);
  cfg.gpu_queues = 0;
  assert_int_equal(tessera_init(&ctx, &cfg), -2);
}

/* Contexts are independent: several threads each run their own context at once. */
static void *context_thread(void *arg) {
  int *status = arg;
  tessera_config_t cfg;
  tessera_config_init(&cfg);
  cfg.cpu_workers = 2;
  cfg.gpus = 0;
  cfg.sched = (*status % 2) ? TESSERA_SCHED_LOCALITY : TESSERA_SCHED_COST;
  tessera_context_t *ctx = NULL;
  int64_t v = 0;
  tessera_data_t *h = NULL;
  *status = 0;
  if (tessera_init(&ctx, &cfg) != 0) return (*status = 1, NULL);
  if (tessera_data_register(ctx, TESSERA_HOST_NODE, &v, 1, 1, 1, sizeof v, &h) != 0) *status = 2;
  for (int i = 0; i < 300 && !*status; i++)
    if (insert(ctx, &k_rt, args_of(0, 0, -1, 0, 1), h, 0) != 0) *status = 3;
  if (tessera_wait_all(ctx) != 0) *status = 4;
  if (h && tessera_data_release(ctx, h) != 0) *status = 5;
  if (!*status && v != 300) *status = 6;
  if (tessera_finalize(ctx) != 0) *status = 7;
  return NULL;
}

static void test_concurrent_contexts(void **state) {
  (void)state;
  enum { T = 3 };
  pthread_t th[T];
  int status[T];
  for (int i = 0; i < T; i++) {
    status[i] = i;
    assert_int_equal(pthread_create(&th[i], NULL, context_thread, &status[i]), 0);
  }
  for (int i = 0; i < T; i++) assert_int_equal(pthread_join(th[i], NULL), 0);
  for (int i = 0; i < T; i++)
    if (status[i]) fail_msg("context thread %d failed at step %d", i, status[i]);
}

/* ---------------------------------------------------------------- failures */

static void test_kernel_failure(void **state) {
  (void)state;
  tessera_context_t *ctx = tt_cpu_context(3, TESSERA_SCHED_COST);
  reset_globals();
  assert_int_equal(insert(ctx, &k_rt, args_of(7, 0, -1, 0, 0), NULL, 0), 0);
  assert_int_equal(tessera_wait_all(ctx), 7);
  assert_int_equal(tessera_wait_all(ctx), 0); /* status was reset */
  assert_int_equal(insert(ctx, &k_rt, args_of(TESSERA_ERR_KERNEL, 0, -1, 0, 0), NULL, 0), 0);
  assert_int_equal(tessera_wait_all(ctx), TESSERA_ERR_KERNEL);

  /* three concurrent failures: the smallest positive info wins, even when it comes last */
  reset_globals();
  assert_int_equal(insert(ctx, &k_rt, args_of(9, 0, -1, 3, 0), NULL, 0), 0);
  assert_int_equal(insert(ctx, &k_rt, args_of(5, 80000, -1, 3, 0), NULL, 0), 0);
  assert_int_equal(insert(ctx, &k_rt, args_of(12, 0, -1, 3, 0), NULL, 0), 0);
  assert_int_equal(tessera_wait_all(ctx), 5);
  assert_int_equal(atomic_load(&g_timeout), 0); /* three ready tasks ran on three workers */

  /* a negative status wins over a positive info */
  reset_globals();
  assert_int_equal(insert(ctx, &k_rt, args_of(2, 0, -1, 2, 0), NULL, 0), 0);
  assert_int_equal(insert(ctx, &k_rt, args_of(TESSERA_ERR_KERNEL, 80000, -1, 2, 0), NULL, 0), 0);
  assert_int_equal(tessera_wait_all(ctx), TESSERA_ERR_KERNEL);
  assert_int_equal(atomic_load(&g_timeout), 0);

  /* dependents of a failed task are skipped; the next flow runs normally */
  reset_globals();
  int64_t v = 0;
  tessera_data_t *h = reg(ctx, &v);
  assert_int_equal(insert(ctx, &k_rt, args_of(7, 20000, -1, 0, 0), h, 0), 0);
  for (int i = 0; i < 10; i++)
    assert_int_equal(insert(ctx, &k_rt, args_of(0, 0, -1, 0, 1), h, 0), 0);
  assert_int_equal(tessera_wait_all(ctx), 7);
  assert_int_equal(atomic_load(&g_ran), 1);
  assert_int_equal(tessera_data_sync(ctx, h), 0);
  assert_int_equal(v, 0);
  for (int i = 0; i < 3; i++)
    assert_int_equal(insert(ctx, &k_rt, args_of(0, 0, -1, 0, 1), h, 0), 0);
  assert_int_equal(tessera_wait_all(ctx), 0);
  assert_int_equal(atomic_load(&g_ran), 4);
  assert_int_equal(tessera_data_release(ctx, h), 0);
  assert_int_equal(v, 3);
  assert_int_equal(tessera_finalize(ctx), 0);

  /* finalize returns the status of an unwaited failing flow */
  ctx = tt_cpu_context(2, TESSERA_SCHED_LOCALITY);
  assert_int_equal(insert(ctx, &k_rt, args_of(11, 1000, -1, 0, 0), NULL, 0), 0);
  assert_int_equal(tessera_finalize(ctx), 11);
}

static uint8_t g_bigargs_ok;
static int bigargs_kernel(const tessera_exec_t *ex, void *args) {
  const uint8_t *b = args;
  int ok = 1;
  (void)ex;
  for (int i = 0; i < TESSERA_MAX_TASK_ARGS; i++) ok &= (b[i] == (uint8_t)(i * 7 + 1));
  g_bigargs_ok = (uint8_t)ok;
  return 0;
}
static const tessera_kernel_t k_bigargs = {.name = "tessera_test_bigargs",
                                           .impl = {[TESSERA_DEVICE_CPU] = bigargs_kernel}};

static void test_invalid_tasks(void **state) {
  (void)state;
  tessera_context_t *ctx = tt_cpu_context(2, TESSERA_SCHED_COST);
  int64_t v = 0;
  tessera_data_t *h = reg(ctx, &v);
  uint8_t big[TESSERA_MAX_TASK_ARGS + 8];
  rt_args_t a = args_of(0, 0, -1, 0, 1);
  tessera_task_t t, base;
  memset(&base, 0, sizeof base);
  base.kernel = &k_rt;
  base.args = &a;
  base.args_size = sizeof a;
  base.ndata = 1;
  base.data[0] = h;
  base.mode[0] = TESSERA_RW;

  t = base;
  t.kernel = NULL;
  assert_true(tessera_task_insert(ctx, &t) < 0);
  assert_has_error(ctx);
  t = base;
  t.ndata = TESSERA_MAX_TASK_DATA + 1;
  assert_true(tessera_task_insert(ctx, &t) < 0);
  assert_has_error(ctx);
  t = base;
  t.ndata = -1;
  assert_true(tessera_task_insert(ctx, &t) < 0);
  t = base;
  t.args = big;
  t.args_size = TESSERA_MAX_TASK_ARGS + 1;
  assert_true(tessera_task_insert(ctx, &t) < 0);
  assert_has_error(ctx);
  t = base;
  t.kernel = &k_noimpl;
  assert_int_equal(tessera_task_insert(ctx, &t), TESSERA_ERR_NODEVICE);
  assert_has_error(ctx);
  t = base;
  t.kernel = &k_cudaonly;
  assert_int_equal(tessera_task_insert(ctx, &t), TESSERA_ERR_NODEVICE);
  t = base;
  t.scope = tessera_scope_gpus();
  assert_int_equal(tessera_task_insert(ctx, &t), TESSERA_ERR_NODEVICE);
  t = base;
  t.data[0] = NULL;
  assert_true(tessera_task_insert(ctx, &t) < 0);
  assert_has_error(ctx);
  t = base;
  t.mode[0] = (tessera_access_t)0;
  assert_true(tessera_task_insert(ctx, &t) < 0);
  assert_true(tessera_task_insert(NULL, &base) < 0);
  assert_true(tessera_task_insert(ctx, NULL) < 0);
  /* none of these ran or poisoned the flow */
  assert_int_equal(tessera_wait_all(ctx), 0);
  assert_int_equal(v, 0);

  /* exactly TESSERA_MAX_TASK_ARGS bytes are accepted and copied at insertion */
  reset_globals();
  assert_int_equal(insert(ctx, &k_rt, args_of(0, 0, -1, -1, 0), h, 0), 0); /* blocker on h */
  for (int i = 0; i < TESSERA_MAX_TASK_ARGS; i++) big[i] = (uint8_t)(i * 7 + 1);
  t = base;
  t.kernel = &k_bigargs;
  t.args = big;
  t.args_size = TESSERA_MAX_TASK_ARGS;
  assert_int_equal(tessera_task_insert(ctx, &t), 0);
  memset(big, 0, sizeof big); /* the task must have its own copy */
  atomic_store(&g_release, 1);
  assert_int_equal(tessera_wait_all(ctx), 0);
  assert_int_equal(g_bigargs_ok, 1);
  assert_int_equal(atomic_load(&g_timeout), 0);
  assert_int_equal(tessera_data_release(ctx, h), 0);
  assert_int_equal(tessera_finalize(ctx), 0);
}

static void test_data_register_errors(void **state) {
  (void)state;
  tessera_context_t *ctx = tt_cpu_context(1, TESSERA_SCHED_COST);
  double buf[64];
  tessera_data_t *h = NULL;
  assert_true(tessera_data_register(ctx, 0, buf, 4, 4, 4, 0, &h) < 0);
  assert_has_error(ctx);
  assert_true(tessera_data_register(ctx, 0, buf, 8, 4, 7, sizeof(double), &h) < 0);
  assert_has_error(ctx);
  assert_true(tessera_data_register(ctx, 0, NULL, 4, 4, 4, sizeof(double), &h) < 0);
  assert_has_error(ctx);
  assert_true(tessera_data_register(ctx, 0, buf, 4, 4, 4, sizeof(double), NULL) < 0);
  assert_true(tessera_data_register(ctx, -1, buf, 4, 4, 4, sizeof(double), &h) < 0);
  assert_true(tessera_data_register(ctx, 1, buf, 4, 4, 4, sizeof(double), &h) < 0); /* no GPU */
  assert_has_error(ctx);
  assert_true(tessera_data_register(NULL, 0, buf, 4, 4, 4, sizeof(double), &h) < 0);
  assert_true(tessera_data_create(ctx, 4, 4, 0, &h) < 0);
  /* empty registrations and valid ones */
  h = NULL;
  assert_int_equal(tessera_data_register(ctx, 0, NULL, 0, 4, 1, sizeof(double), &h), 0);
  assert_int_equal(tessera_data_release(ctx, h), 0);
  h = NULL;
  assert_int_equal(tessera_data_register(ctx, 0, buf, 5, 6, 9, sizeof(double), &h), 0);
  assert_ptr_equal(tessera_data_ptr(h), buf);
  assert_int_equal(tessera_data_ld(h), 9);
  assert_int_equal(tessera_data_release(ctx, h), 0);
  h = NULL;
  assert_int_equal(tessera_data_create(ctx, 7, 3, sizeof(double), &h), 0);
  assert_non_null(tessera_data_ptr(h));
  assert_int_equal(tessera_data_ld(h), 7);
  assert_int_equal(tessera_data_release(ctx, h), 0);
  assert_int_equal(tessera_data_release(ctx, NULL), 0);
  assert_int_equal(tessera_finalize(ctx), 0);
}

/* tessera_data_sync waits for the handle's own tasks, not for a blocked unrelated one. */
static void test_data_sync(void **state) {
  (void)state;
  for (int p = 0; p < 2; p++) {
    tessera_context_t *ctx = tt_cpu_context(2, p ? TESSERA_SCHED_LOCALITY : TESSERA_SCHED_COST);
    reset_globals();
    int64_t va = 0, vb = 0;
    tessera_data_t *ha = reg(ctx, &va), *hb = reg(ctx, &vb);
    assert_int_equal(insert(ctx, &k_rt, args_of(0, 0, -1, -1, 1), hb, 0), 0);
    wait_blocker_started();
    assert_int_equal(insert(ctx, &k_rt, args_of(0, 100000, -1, 0, 1), ha, 0), 0);
    assert_int_equal(insert(ctx, &k_rt, args_of(0, 0, -1, 0, 1), ha, 0), 0);
    assert_int_equal(tessera_data_sync(ctx, ha), 0);
    assert_int_equal(va, 2);                           /* waited for ha's tasks */
    assert_int_equal(atomic_load(&g_blocker_done), 0); /* not for hb's */
    atomic_store(&g_release, 1);
    assert_int_equal(tessera_data_sync(ctx, hb), 0);
    assert_int_equal(vb, 1);
    assert_int_equal(atomic_load(&g_timeout), 0);
    assert_int_equal(tessera_wait_all(ctx), 0);
    assert_int_equal(tessera_data_release(ctx, ha), 0);
    assert_int_equal(tessera_data_release(ctx, hb), 0);
    assert_int_equal(tessera_finalize(ctx), 0);
  }
}

/* With one worker, ready tasks run in decreasing priority. */
static void test_priorities(void **state) {
  (void)state;
  enum { N = 16 };
  for (int p = 0; p < 2; p++) {
    tessera_context_t *ctx = tt_cpu_context(1, p ? TESSERA_SCHED_LOCALITY : TESSERA_SCHED_COST);
    reset_globals();
    int64_t vals[N + 1] = {0};
    tessera_data_t *hs[N + 1];
    for (int i = 0; i <= N; i++) hs[i] = reg(ctx, &vals[i]);
    assert_int_equal(insert(ctx, &k_rt, args_of(0, 0, -1, -1, 0), hs[N], 100), 0);
    wait_blocker_started(); /* the only worker is now busy until every task is inserted */
    int prio[N];
    for (int i = 0; i < N; i++) {
      prio[i] = (i * 7) % N - N / 2; /* a permutation of -8 .. 7 */
      assert_int_equal(insert(ctx, &k_rt, args_of(0, 0, i, 0, 1), hs[i], prio[i]), 0);
    }
    atomic_store(&g_release, 1);
    assert_int_equal(tessera_wait_all(ctx), 0);
    assert_int_equal(atomic_load(&g_timeout), 0);
    assert_int_equal(atomic_load(&g_logn), N);
    for (int i = 1; i < N; i++)
      if (prio[g_log[i - 1]] < prio[g_log[i]])
        fail_msg("policy %d: task %d (priority %d) ran before task %d (priority %d)", p,
                 g_log[i - 1], prio[g_log[i - 1]], g_log[i], prio[g_log[i]]);
    for (int i = 0; i <= N; i++) assert_int_equal(tessera_data_release(ctx, hs[i]), 0);
    assert_int_equal(tessera_finalize(ctx), 0);
  }
}

static void test_scopes(void **state) {
  (void)state;
  tessera_context_t *ctx = tt_cpu_context(2, TESSERA_SCHED_COST);
  tessera_scope_t before = tessera_get_scope(ctx), after;
  assert_int_equal(tessera_set_scope(ctx, tessera_scope_gpus()), TESSERA_ERR_NODEVICE);
  assert_has_error(ctx);
  after = tessera_get_scope(ctx); /* unchanged by the refused call */
  assert_int_equal(after.kinds, before.kinds);
  assert_int_equal(after.gpu_mask, before.gpu_mask);
  assert_int_equal(tessera_set_scope(ctx, tessera_scope_cpus()), 0);
  after = tessera_get_scope(ctx);
  assert_true((after.kinds & (1u << TESSERA_DEVICE_CPU)) != 0);
  assert_true((after.kinds & (1u << TESSERA_DEVICE_CUDA)) == 0);
  int64_t v = 0;
  tessera_data_t *h = reg(ctx, &v);
  assert_int_equal(insert(ctx, &k_rt, args_of(0, 0, -1, 0, 1), h, 0), 0);
  assert_int_equal(tessera_wait_all(ctx), 0);
  assert_int_equal(tessera_set_scope(ctx, tessera_scope_all()), 0);
  assert_int_equal(insert(ctx, &k_rt, args_of(0, 0, -1, 0, 1), h, 0), 0);
  assert_int_equal(tessera_data_release(ctx, h), 0);
  assert_int_equal(v, 2);
  assert_int_equal(tessera_finalize(ctx), 0);
}

/* ---------------------------------------------------------------- strings and dtypes */

static void test_strerror(void **state) {
  (void)state;
  static const int errs[] = {TESSERA_ERR_NOMEM,       TESSERA_ERR_BACKEND, TESSERA_ERR_ENV,
                             TESSERA_ERR_NODEVICE,    TESSERA_ERR_IO,      TESSERA_ERR_STATE,
                             TESSERA_ERR_UNSUPPORTED, TESSERA_ERR_KERNEL,  TESSERA_ERR_TIMEOUT};
  static const int others[] = {0, 1, 3, 1000, -1, -5, -63, -64, -99, -105, -110, -999, INT32_MIN};
  const int ne = (int)(sizeof errs / sizeof errs[0]);
  for (int i = 0; i < ne; i++) {
    const char *s = tessera_strerror(errs[i]);
    assert_non_null(s);
    assert_true(strlen(s) > 0);
    for (int j = 0; j < i; j++)
      if (strcmp(s, tessera_strerror(errs[j])) == 0)
        fail_msg("codes %d and %d share the description \"%s\"", errs[i], errs[j], s);
  }
  for (size_t i = 0; i < sizeof others / sizeof others[0]; i++) {
    const char *s = tessera_strerror(others[i]);
    assert_non_null(s);
    assert_true(strlen(s) > 0);
  }
  assert_true(strcmp(tessera_strerror(0), tessera_strerror(TESSERA_ERR_NOMEM)) != 0);
}

static void test_dtypes(void **state) {
  (void)state;
  static const char *names[4] = {"f32", "f64", "c64", "c128"};
  static const char *letters[4] = {"s", "d", "c", "z"};
  static const size_t sizes[4] = {4, 8, 8, 16};
  for (int d = 0; d < TESSERA_NUM_DTYPES; d++) {
    tessera_dtype_t dt = (tessera_dtype_t)d, got = (tessera_dtype_t)99;
    assert_int_equal(tessera_dtype_size(dt), sizes[d]);
    assert_int_equal(tessera_dtype_is_complex(dt) != 0, d >= 2);
    assert_string_equal(tessera_dtype_name(dt), names[d]);
    assert_int_equal(tessera_dtype_parse(names[d], &got), 0);
    assert_int_equal(got, dt);
    got = (tessera_dtype_t)99;
    assert_int_equal(tessera_dtype_parse(letters[d], &got), 0);
    assert_int_equal(got, dt);
  }
  tessera_dtype_t got;
  assert_int_equal(tessera_dtype_size((tessera_dtype_t)9), 0);
  assert_string_equal(tessera_dtype_name((tessera_dtype_t)9), "?");
  assert_int_equal(tessera_dtype_parse("x", &got), -1);
  assert_int_equal(tessera_dtype_parse("", &got), -1);
  assert_int_equal(tessera_dtype_parse("f16", &got), -1);
  assert_int_equal(tessera_dtype_parse("f644", &got), -1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_init_defaults),
      cmocka_unit_test(test_init_explicit),
      cmocka_unit_test(test_init_env),
      cmocka_unit_test(test_concurrent_contexts),
      cmocka_unit_test(test_kernel_failure),
      cmocka_unit_test(test_invalid_tasks),
      cmocka_unit_test(test_data_register_errors),
      cmocka_unit_test(test_data_sync),
      cmocka_unit_test(test_priorities),
      cmocka_unit_test(test_scopes),
      cmocka_unit_test(test_strerror),
      cmocka_unit_test(test_dtypes),
  };
  tt_watchdog(300);
  return cmocka_run_group_tests(tests, NULL, NULL);
}
