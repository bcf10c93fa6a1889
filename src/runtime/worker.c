/* Worker threads: one per CPU core given (and, with a GPU backend, one per GPU), each bound to
 * its device for its whole life, taking ready tasks from the scheduler and running them. */
#define _POSIX_C_SOURCE 200809L
#include <sched.h>
#include <stdlib.h>

#include "runtime/internal.h"

void tsr_worker_wake(tsr_worker_t *w) {
  pthread_mutex_lock(&w->queue.lock);
  if (w->queue.sleeping) pthread_cond_signal(&w->queue.cond);
  pthread_mutex_unlock(&w->queue.lock);
}

/* Runs one task on worker `w`: makes its data valid on the worker's node, runs the kernel
 * (unless the flow already failed), records time, then completes it. */
static void execute(tsr_worker_t *w, tsr_task_t *t) {
  tessera_context_t *ctx = w->ctx;
  double t0 = tsr_now();
  bool skipped = atomic_load_explicit(&ctx->flow_failed, memory_order_relaxed);
  int rc = 0;
  if (!skipped) {
    tessera_exec_t ex = {.ndata = t->ndata,
                         .kind = w->kind,
                         .device = w->device,
                         .worker = w->id,
                         .stream = NULL,
                         .scratch = w->scratch};
    for (int i = 0; i < t->ndata && !rc; i++) {
      bool had = tsr_data_valid_on(t->data[i], w->node);
      rc = tsr_data_acquire(t->data[i], w->node, (tessera_access_t)t->mode[i], &ex.ptr[i],
                            &ex.ld[i]);
      if (!had && (t->mode[i] & TESSERA_R)) w->stats.bytes_in += tsr_data_bytes(t->data[i]);
    }
    if (!rc) rc = t->kernel->impl[w->kind](&ex, t->args);
    if (rc) tsr_flow_fail(ctx, rc);
  }
  tsr_worker_finish(w, t, t0, tsr_now(), !skipped && !rc);
}

void tsr_worker_flush_samples(tsr_worker_t *w) {
  if (w->samples.n > 0 && w->ctx->perfmodel)
    tsr_perfmodel_record(w->ctx->perfmodel, w->samples.kernel, w->kind, w->samples.size_key,
                         w->samples.sum / (double)w->samples.n, w->samples.n);
  w->samples.n = 0;
  w->samples.sum = 0;
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
  tsr_queue_add_load(&w->queue, -t->predicted);
  tsr_task_complete(t, w);
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
  pthread_mutex_lock(&w->queue.lock);
  if (w->queue.n == 0 && !atomic_load(&ctx->stop)) {
    __atomic_store_n(&w->queue.sleeping, true, __ATOMIC_RELAXED);
    /* A bounded sleep: work pushed to a busy neighbour may be stolen on waking. */
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_nsec += 2000000;
    if (ts.tv_nsec >= 1000000000) ts.tv_sec++, ts.tv_nsec -= 1000000000;
    pthread_cond_timedwait(&w->queue.cond, &w->queue.lock, &ts);
    __atomic_store_n(&w->queue.sleeping, false, __ATOMIC_RELAXED);
  }
  pthread_mutex_unlock(&w->queue.lock);
  return NULL;
}

static void *worker_main(void *arg) {
  tsr_worker_t *w = arg;
  tessera_context_t *ctx = w->ctx;
  w->self = pthread_self();
  w->start_status = w->be->worker_start(w->be_state, w->device, w->core, &w->scratch);
  atomic_fetch_add(&ctx->started, 1);
  if (w->start_status) return NULL;
  if (w->be->event_create) {
    tsr_async_worker_loop(w);
    tsr_worker_flush_samples(w);
    w->be->worker_stop(w->be_state, w->device, w->scratch);
    return NULL;
  }
  double idle_from = tsr_now();
  while (!atomic_load(&ctx->stop)) {
    tsr_task_t *t = tsr_worker_next_task(w);
    if (!t) continue;
    w->stats.idle_s += tsr_now() - idle_from;
    execute(w, t);
    idle_from = tsr_now();
  }
  tsr_worker_flush_samples(w);
  w->be->worker_stop(w->be_state, w->device, w->scratch);
  return NULL;
}

int tsr_workers_start(tessera_context_t *ctx) {
  int launched = 0, rc = 0;
  for (int i = 0; i < ctx->nworkers && !rc; i++) {
    if (pthread_create(&ctx->workers[i].thread, NULL, worker_main, &ctx->workers[i]) != 0)
      rc = tsr_error(ctx, TESSERA_ERR_BACKEND, "cannot start worker thread %d", i);
    else
      launched++;
  }
  while (atomic_load(&ctx->started) < launched) sched_yield();
  for (int i = 0; i < launched && !rc; i++)
    if (ctx->workers[i].start_status)
      rc = tsr_error(ctx, ctx->workers[i].start_status, "worker %d (%s device %d) failed to start",
                     i, ctx->workers[i].be->name, ctx->workers[i].device);
  if (launched < ctx->nworkers) ctx->nworkers = launched;
  return rc;
}

void tsr_workers_stop(tessera_context_t *ctx) {
  atomic_store(&ctx->stop, true);
  for (int i = 0; i < ctx->nworkers; i++) tsr_worker_wake(&ctx->workers[i]);
  for (int i = 0; i < ctx->nworkers; i++) pthread_join(ctx->workers[i].thread, NULL);
}
