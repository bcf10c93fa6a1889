/* Deferred completion (tessera_task_defer / tessera_task_resume): a kernel (on a CPU worker, or
 * on a simulated device's asynchronous worker) hands its task to another thread and returns; the
 * task completes when that thread resumes it, its successors wait until then, the workers run other
 * tasks meanwhile (more deferred tasks than workers are in flight at once), and a failing resume
 * fails the flow. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include <tessera/tessera.h>

#include "../test_common.h"

enum { MAXPEND = 64 };

/* What the resuming thread finishes: each pending task's buffer gets `value`, then its resume
 * with `status`, in the reverse order of arrival. */
typedef struct {
  pthread_mutex_t lock;
  pthread_cond_t cond;
  tessera_deferred_t *token[MAXPEND];
  double *buf[MAXPEND];
  int n, expect, status;
  double value;
} pending_t;

/* Blocks until `n` tasks have deferred. */
static void wait_pending(pending_t *p, int n) {
  pthread_mutex_lock(&p->lock);
  while (p->n < n) pthread_cond_wait(&p->cond, &p->lock);
  pthread_mutex_unlock(&p->lock);
}

static void *resumer(void *arg) {
  pending_t *p = arg;
  wait_pending(p, p->expect);
  tt_sleep_us(20000); /* the successors must still be waiting */
  for (int i = p->n - 1; i >= 0; i--) {
    *p->buf[i] = p->value;
    tessera_task_resume(p->token[i], p->status);
  }
  return NULL;
}

/* Defers: the buffer and the token go to the resumer. */
static int defer_kernel(const tessera_exec_t *ex, void *args) {
  pending_t *p = *(pending_t **)args;
  tessera_deferred_t *d = tessera_task_defer(ex);
  if (!d) return TESSERA_ERR_KERNEL;
  pthread_mutex_lock(&p->lock);
  p->buf[p->n] = ex->ptr[0];
  p->token[p->n++] = d;
  pthread_cond_broadcast(&p->cond);
  pthread_mutex_unlock(&p->lock);
  return 0;
}

static int add_one(const tessera_exec_t *ex, void *args) {
  (void)args;
  *(double *)ex->ptr[0] += 1;
  return 0;
}

static const tessera_kernel_t deferring = {
    .name = "test_defer",
    .impl = {[TESSERA_DEVICE_CPU] = defer_kernel, [TESSERA_DEVICE_SIM] = defer_kernel}};
static const tessera_kernel_t adding = {.name = "test_add_one",
                                        .impl = {[TESSERA_DEVICE_CPU] = add_one}};

/* Inserts a deferred writer of `h` (its token to *pp's resumer) on `scope`. */
static void insert_deferring(tessera_context_t *ctx, pending_t **pp, tessera_data_t *h,
                             int priority, tessera_scope_t scope) {
  tessera_task_t w = {.kernel = &deferring,
                      .args = pp,
                      .args_size = sizeof *pp,
                      .ndata = 1,
                      .data = {h},
                      .mode = {TESSERA_W},
                      .priority = priority,
                      .scope = scope};
  assert_int_equal(tessera_task_insert(ctx, &w), 0);
}

/* `count` deferred writers on handles of their own (more than the workers), each followed by
 * an increment; resumed together, in reverse order, `status` for each. The writers run on the
 * CPU workers of `ctx`, or on its simulated devices (`scope`); the increments on the CPUs.
 * Returns wait_all's status; the handles' values into out[]. Finalizes ctx. */
static int run_in(tessera_context_t *ctx, tessera_scope_t scope, int count, int status,
                  double *out) {
  pending_t p = {.expect = count, .status = status, .value = 41};
  pthread_mutex_init(&p.lock, NULL);
  pthread_cond_init(&p.cond, NULL);
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, resumer, &p), 0);
  tessera_data_t *h[MAXPEND];
  pending_t *pp = &p;
  for (int i = 0; i < count; i++) {
    assert_int_equal(tessera_data_create(ctx, 1, 1, sizeof(double), &h[i]), 0);
    tessera_task_t a = {.kernel = &adding, .ndata = 1, .data = {h[i]}, .mode = {TESSERA_RW}};
    insert_deferring(ctx, &pp, h[i], 0, scope);
    assert_int_equal(tessera_task_insert(ctx, &a), 0);
  }
  int rc = tessera_wait_all(ctx);
  pthread_join(th, NULL);
  for (int i = 0; i < count; i++) {
    tessera_data_sync(ctx, h[i]);
    out[i] = *(double *)tessera_data_ptr(h[i]);
    tessera_data_release(ctx, h[i]);
  }
  tessera_finalize(ctx);
  pthread_cond_destroy(&p.cond);
  pthread_mutex_destroy(&p.lock);
  return rc;
}

static int run(int count, int status, double *out) {
  return run_in(tt_cpu_context(2, TESSERA_SCHED_COST), tessera_scope_cpus(), count, status, out);
}

/* Every increment ran after its deferred writer's resume (41 + 1), with 16 deferred tasks in
 * flight on 2 workers. */
static void test_resume_orders_successors(void **state) {
  (void)state;
  double out[16];
  assert_int_equal(run(16, 0, out), 0);
  for (int i = 0; i < 16; i++) assert_true(out[i] == 42);
}

/* A resume with a failure fails the flow: wait_all returns it. */
static void test_failed_resume(void **state) {
  (void)state;
  double out[3];
  assert_int_equal(run(3, TESSERA_ERR_KERNEL, out), TESSERA_ERR_KERNEL);
}

/* On the asynchronous workers of simulated devices: each deferred task keeps its flight until
 * resumed (6 at once, fewer than the flights of one worker), its successor then reads what
 * the resumer wrote into the device's replica; a failed resume fails the flow. */
static void test_resume_on_devices(void **state) {
  (void)state;
  tessera_config_t cfg;
  tessera_config_init(&cfg);
  cfg.cpu_workers = 2;
  cfg.gpu_mem_limit = 64 << 20;
  tessera_context_t *ctx = NULL;
  assert_int_equal(tessera_init(&ctx, &cfg), 0);
  if (tessera_device_count(ctx, TESSERA_DEVICE_SIM) == 0) {
    tessera_finalize(ctx);
    skip(); /* a build without simulated devices */
  }
  const tessera_scope_t sim = {1u << TESSERA_DEVICE_SIM, 0};
  double out[6];
  assert_int_equal(run_in(ctx, sim, 6, 0, out), 0);
  for (int i = 0; i < 6; i++) assert_true(out[i] == 42);
  assert_int_equal(tessera_init(&ctx, &cfg), 0);
  assert_int_equal(run_in(ctx, sim, 3, TESSERA_ERR_KERNEL, out), TESSERA_ERR_KERNEL);
}

/* The urgent lane of one simulated device: deferred tasks keep their flights, so a task of
 * priority 10 inserted while one of 0 is in flight takes the urgent lane, and one of 0 inserted
 * while that is in flight goes on the compute queues. Returns the workers' counters, summed. */
static tessera_worker_stats_t lanes(void) {
  tessera_config_t cfg;
  tessera_config_init(&cfg);
  cfg.cpu_workers = 1;
  cfg.gpu_mem_limit = 64 << 20;
  tessera_context_t *ctx = NULL;
  assert_int_equal(tessera_init(&ctx, &cfg), 0);
  tessera_worker_stats_t none = {0};
  if (tessera_device_count(ctx, TESSERA_DEVICE_SIM) == 0) {
    tessera_finalize(ctx);
    return none;
  }
  pending_t p = {.expect = 3, .value = 41};
  pthread_mutex_init(&p.lock, NULL);
  pthread_cond_init(&p.cond, NULL);
  pending_t *pp = &p;
  const int prio[3] = {0, 10, 0};
  tessera_data_t *h[3];
  for (int i = 0; i < 3; i++) {
    assert_int_equal(tessera_data_create(ctx, 1, 1, sizeof(double), &h[i]), 0);
    insert_deferring(ctx, &pp, h[i], prio[i], (tessera_scope_t){1u << TESSERA_DEVICE_SIM, 1});
    wait_pending(&p, i + 1); /* in flight before the next comes */
  }
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, resumer, &p), 0);
  assert_int_equal(tessera_wait_all(ctx), 0);
  pthread_join(th, NULL);
  const int nw = tessera_worker_count(ctx);
  tessera_worker_stats_t st[8];
  assert_true(nw <= 8);
  assert_int_equal(tessera_stats(ctx, st, nw), nw);
  tessera_worker_stats_t dev = none; /* the sums: every task ran on the device */
  for (int i = 0; i < nw; i++) {
    dev.tasks += st[i].tasks;
    dev.urgent += st[i].urgent;
  }
  for (int i = 0; i < 3; i++) {
    tessera_data_sync(ctx, h[i]);
    assert_true(*(double *)tessera_data_ptr(h[i]) == 41);
    tessera_data_release(ctx, h[i]);
  }
  tessera_finalize(ctx);
  pthread_cond_destroy(&p.cond);
  pthread_mutex_destroy(&p.lock);
  return dev;
}

/* Only the task that outranks those in flight takes the urgent lane. */
static void test_urgent_lane(void **state) {
  (void)state;
  tessera_worker_stats_t dev = lanes();
  if (!dev.tasks) skip(); /* a build without simulated devices */
  assert_int_equal(dev.tasks, 3);
  assert_int_equal(dev.urgent, 1);
}

/* Where deferring is not offered the call says so. */
static void test_defer_without_task(void **state) {
  (void)state;
  tessera_exec_t ex = {0};
  assert_null(tessera_task_defer(&ex));
  assert_null(tessera_task_defer(NULL));
  tessera_task_resume(NULL, 0); /* a no-op */
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_resume_orders_successors), cmocka_unit_test(test_failed_resume),
      cmocka_unit_test(test_resume_on_devices), cmocka_unit_test(test_urgent_lane),
      cmocka_unit_test(test_defer_without_task)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
