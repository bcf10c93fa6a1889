/* Worker threads: one per CPU core given and one per device of an asynchronous kind, each bound
 * to its device for its whole life, running the loop of its kind until the context stops. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>

#include "runtime/base.h"
#include "runtime/context.h"
#include "runtime/worker.h"

/* Pins the calling thread to `core`: a hint, a restricted affinity mask is not an error. */
static void pin_to_core(int core) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(core % CPU_SETSIZE, &set);
  (void)pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

static void *worker_main(void *arg) {
  tsr_worker_t *w = arg;
  tessera_context_t *ctx = w->ctx;
  w->self = pthread_self();
  if (w->core >= 0) pin_to_core(w->core);
  int rc = w->be->worker_start ? w->be->worker_start(w->be_state, w->device) : 0;
  if (!rc) rc = tsr_worker_scratch_create(w, &w->scratch);
  w->start_status = rc;
  atomic_fetch_add(&ctx->started, 1);
  if (rc) return NULL;
  if (w->be->async)
    tsr_async_worker_loop(w);
  else
    tsr_cpu_worker_loop(w);
  tsr_worker_flush_samples(w);
  tsr_worker_scratch_destroy(w, w->scratch);
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
  for (int i = 0; i < ctx->nworkers; i++) tsr_ready_wake(&ctx->workers[i].ready);
  for (int i = 0; i < ctx->nworkers; i++) pthread_join(ctx->workers[i].thread, NULL);
}
