/* What every worker shares, whatever its kind: waiting for the next task, and accounting a
 * finished one (counters, kernel-time history, trace, load) before completing it. */
#define _POSIX_C_SOURCE 200809L
#include <sched.h>
#include <stdlib.h>

#include "runtime/base.h"
#include "runtime/context.h"
#include "runtime/perfmodel.h"
#include "runtime/sched.h"
#include "runtime/task.h"
#include "runtime/worker.h"

int tsr_worker_scratch_create(tsr_worker_t *w, void **scratch) {
  *scratch = NULL;
  return w->entry->scratch_create ? w->entry->scratch_create(w->device, scratch) : 0;
}

void tsr_worker_scratch_destroy(tsr_worker_t *w, void *scratch) {
  if (w->entry->scratch_destroy) w->entry->scratch_destroy(w->device, scratch);
}

void tsr_worker_flush_samples(tsr_worker_t *w) {
  if (w->samples.n > 0 && w->ctx->perfmodel)
    tsr_perfmodel_record(w->ctx->perfmodel, w->samples.kernel, w->kind, w->samples.size_key,
                         w->samples.sum / (double)w->samples.n, w->samples.n);
  w->samples.n = 0;
  w->samples.sum = 0;
}

bool tsr_workers_running(const tessera_context_t *ctx) {
  for (int i = 0; i < ctx->nworkers; i++)
    if (atomic_load_explicit(&ctx->workers[i].running, memory_order_relaxed) > 0) return true;
  return false;
}

void tsr_worker_finish(tsr_worker_t *w, tsr_task_t *t, double t0, double t1, bool measured) {
  tessera_context_t *ctx = w->ctx;
  w->stats.tasks++;
  w->stats.busy_s += t1 - t0;
  w->stats.flops += t->flops;
  if (measured && ctx->perfmodel && t->kernel->name) {
    if (w->samples.n &&
        (w->samples.kernel != t->kernel->name || w->samples.size_key != t->size_key))
      tsr_worker_flush_samples(w);
    w->samples.kernel = t->kernel->name;
    w->samples.size_key = t->size_key;
    w->samples.sum += t1 - t0;
    /* Batches keep the shared history's cache line quiet under many short tasks. */
    if (++w->samples.n >= 16 || w->samples.sum >= 1e-3) tsr_worker_flush_samples(w);
  }
  if (ctx->tracing) tsr_trace_event(w, t->kernel->name, t->tag, t->ntag, t0, t1, 0);
  tsr_ready_add_load(&w->ready, -t->predicted);
  tsr_task_complete(t, w);
}

void tsr_worker_deferred(tsr_worker_t *w, const char *name, const int *tag, int ntag, double t0,
                         double t1) {
  w->stats.tasks++;
  w->stats.busy_s += t1 - t0;
  if (w->ctx->tracing) tsr_trace_event(w, name, tag, ntag, t0, t1, 0);
}

tessera_deferred_t *tessera_task_defer(const tessera_exec_t *ex) {
  if (!ex || !ex->task) return NULL;
  tsr_run_t *run = ex->task;
  run->deferred = true;
  run->task->deferred_by = run->worker;
  return (tessera_deferred_t *)run->task;
}

void tessera_task_resume(tessera_deferred_t *deferred, int status) {
  if (!deferred) return;
  tsr_task_t *t = (tsr_task_t *)deferred;
  tessera_context_t *ctx = t->ctx;
  /* counted before the task completes (a finalize that saw the flow end waits for this) */
  atomic_fetch_add(&ctx->resuming, 1);
  tsr_worker_t *w = t->deferred_by;
  if (w->be->async) { /* its flight holds the data: the worker completes it (t is gone after) */
    t->resume_status = status;
    atomic_store_explicit(&t->resumed, true, memory_order_release);
  } else {
    if (status) tsr_flow_fail(ctx, status);
    tsr_ready_add_load(&w->ready, -t->predicted);
    tsr_task_complete(t, NULL);
  }
  atomic_fetch_sub(&ctx->resuming, 1); /* the last touch of the context */
}

/* Polls this long before sleeping: tasks often arrive within microseconds, and a sleeping
 * worker costs its waker a system call. */
#define TSR_SPIN 4

/* Waits for work: a spin (tasks often arrive within microseconds), then sleep. */
tsr_task_t *tsr_worker_next_task(tsr_worker_t *w) {
  tessera_context_t *ctx = w->ctx;
  for (int spin = 0; spin < TSR_SPIN; spin++) {
    tsr_task_t *t = ctx->sched->pop(ctx, w);
    if (t || atomic_load(&ctx->stop)) return t;
    if (spin & 7)
      for (int k = 0; k < 64; k++) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
      }
    else
      sched_yield();
  }
  pthread_mutex_lock(&w->ready.lock);
  if (w->ready.n == 0 && !atomic_load(&ctx->stop)) {
    __atomic_store_n(&w->ready.sleeping, true, __ATOMIC_RELAXED);
    /* A bounded sleep: work pushed to a busy neighbour may be stolen on waking. */
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_nsec += 2000000;
    if (ts.tv_nsec >= 1000000000) ts.tv_sec++, ts.tv_nsec -= 1000000000;
    pthread_cond_timedwait(&w->ready.cond, &w->ready.lock, &ts);
    __atomic_store_n(&w->ready.sleeping, false, __ATOMIC_RELAXED);
  }
  pthread_mutex_unlock(&w->ready.lock);
  return NULL;
}
