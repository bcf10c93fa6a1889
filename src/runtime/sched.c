/* Scheduling policies behind one interface.
 *
 * cost:     each ready task goes to the worker with the earliest estimated finish: its queued
 *           load + the transfers of data not yet on its node + the kernel's expected time
 *           (measured history per kernel x device kind x size, else flops / nominal rate).
 * locality: each ready task goes to the worker whose node already holds most of its bytes,
 *           preferring the worker that released it, else the least loaded.
 * Both let an idle worker take work from another worker of the same memory node. */
#include <float.h>

#include "runtime/context.h"
#include "runtime/perfmodel.h"
#include "runtime/replica.h"
#include "runtime/sched.h"
#include "runtime/task.h"
#include "runtime/worker.h"

/* Pushes `t` on `w`'s queue with predicted cost `predicted` and wakes the worker, or another
 * idle worker of the same memory node that may steal it. Returns 0, or TESSERA_ERR_NOMEM when
 * the queue cannot grow (the task is then the caller's). */
static int enqueue(tessera_context_t *ctx, tsr_worker_t *w, tsr_task_t *t, double predicted,
                   tsr_worker_t *from) {
  /* Once pushed, the task may run and be freed at any moment: pick the idle worker to wake
   * (one of the same node that may steal it) before pushing. */
  tsr_worker_t *thief = NULL;
  for (int i = 0; i < ctx->nworkers && !thief; i++) {
    tsr_worker_t *o = &ctx->workers[i];
    if (o != w && o->node == w->node && __atomic_load_n(&o->ready.sleeping, __ATOMIC_RELAXED) &&
        tsr_worker_can_run(o, t))
      thief = o;
  }
  t->predicted = predicted;
  tsr_ready_add_load(&w->ready, predicted);
  pthread_mutex_lock(&w->ready.lock);
  if (tsr_ready_push_locked(&w->ready, t) != 0) {
    pthread_mutex_unlock(&w->ready.lock);
    tsr_ready_add_load(&w->ready, -predicted);
    return TESSERA_ERR_NOMEM;
  }
  bool asleep = w->ready.sleeping;
  /* The inserting thread wakes a sleeping CPU worker only once a few tasks wait for it: a
   * wake-up costs it a system call per task otherwise. Sleeps are short, and every wait call
   * wakes workers. GPU workers are woken at once: their queues feed long kernels. */
  bool defer = !from && !w->be->async && w->ready.n < TSR_WAKE_BATCH;
  if (asleep && !defer) pthread_cond_signal(&w->ready.cond);
  pthread_mutex_unlock(&w->ready.lock);
  if (!asleep && thief && !defer) tsr_ready_wake(&thief->ready);
  return 0;
}

/* Own queue first, then steal from workers of the same memory node. */
static tsr_task_t *pop_steal(tessera_context_t *ctx, tsr_worker_t *w) {
  pthread_mutex_lock(&w->ready.lock);
  tsr_task_t *t = tsr_ready_pop_locked(&w->ready);
  pthread_mutex_unlock(&w->ready.lock);
  if (t) return t;
  for (int k = 1; k < ctx->nworkers; k++) {
    tsr_worker_t *o = &ctx->workers[(w->id + k) % ctx->nworkers];
    if (o->node != w->node || __atomic_load_n(&o->ready.n, __ATOMIC_RELAXED) == 0) continue;
    pthread_mutex_lock(&o->ready.lock);
    t = tsr_ready_steal_locked(&o->ready, w->kind, tsr_worker_accel(w));
    pthread_mutex_unlock(&o->ready.lock);
    if (t) {
      tsr_ready_add_load(&o->ready, -t->predicted);
      tsr_ready_add_load(&w->ready, t->predicted);
      return t;
    }
  }
  return NULL;
}

double tsr_transfer_time(tessera_context_t *ctx, const tsr_task_t *t, const tsr_worker_t *w) {
  double s = 0;
  for (int i = 0; i < t->ndata; i++) {
    tessera_data_t *h = t->data[i];
    /* Written-only data counts too: writing where the valid replica lives keeps it home. */
    if (tsr_data_valid_on(h, w->node)) continue;
    int src = h->home;
    for (int n = 0; n < ctx->nnodes; n++)
      if (tsr_data_valid_on(h, n)) src = n;
    double bw = ctx->bandwidth[src][w->node];
    /* The caller's own host memory is pageable: copies from it run far below the pinned rate. */
    if (src == TESSERA_HOST_NODE && !__atomic_load_n(&h->rep[src].allocated, __ATOMIC_RELAXED) &&
        bw > TSR_PAGEABLE_BW)
      bw = TSR_PAGEABLE_BW;
    if (bw > 0) s += (double)tsr_data_bytes(h) / bw;
  }
  return s;
}

double tsr_expected_time(tessera_context_t *ctx, const tsr_task_t *t, const tsr_worker_t *w,
                         tsr_pm_cache_t *cache) {
  double s = -1;
  if (ctx->perfmodel && t->kernel->name)
    s = tsr_perfmodel_predict(ctx->perfmodel, cache, t->kernel->name, w->kind, t->size_key);
  if (s >= 0) return s;
  /* No history yet: a launch cost (larger on asynchronous devices) plus flops at the nominal
   * rate. */
  return (w->be->async ? 2e-5 : 2e-6) + t->flops / (w->gflops * 1e9);
}

/* Bytes of t's buffers in a device pool at once, as they must be while t runs there (its
 * replicas pinned); a buffer named twice takes its room once. */
static size_t task_bytes(const tsr_task_t *t) {
  size_t bytes = 0;
  for (int i = 0; i < t->ndata; i++) {
    bool again = false;
    for (int j = 0; j < i && !again; j++) again = t->data[j] == t->data[i];
    if (!again) bytes += (tsr_data_bytes(t->data[i]) + 255) / 256 * 256;
  }
  return bytes;
}

/* Whether w's memory node holds `bytes` of buffers: a device node's pool, the host always. */
static bool node_holds(const tessera_context_t *ctx, const tsr_worker_t *w, size_t bytes) {
  return w->node == TESSERA_HOST_NODE || bytes <= ctx->nodes[w->node].pool.size;
}

/* Whether some worker that runs t holds its `bytes`: then only such workers may take it; else
 * any that runs it (the task then fails for memory with a message). */
static bool some_node_holds(const tessera_context_t *ctx, const tsr_task_t *t, size_t bytes) {
  for (int i = 0; i < ctx->nworkers; i++)
    if (tsr_worker_can_run(&ctx->workers[i], t) && node_holds(ctx, &ctx->workers[i], bytes))
      return true;
  return false;
}

static bool candidate(const tessera_context_t *ctx, const tsr_worker_t *w, const tsr_task_t *t,
                      size_t bytes, bool any_holds) {
  return tsr_worker_can_run(w, t) && (!any_holds || node_holds(ctx, w, bytes));
}

static double queue_load(tsr_worker_t *w) {
  return atomic_load_explicit(&w->ready.load, memory_order_relaxed);
}

static int cost_push(tessera_context_t *ctx, tsr_task_t *t, tsr_worker_t *from,
                     tsr_pm_cache_t *cache) {
  tsr_worker_t *best = NULL;
  double best_finish = DBL_MAX, best_cost = 0;
  double expected[TESSERA_DEVICE_KINDS]; /* equal for workers of one kind */
  for (int k = 0; k < TESSERA_DEVICE_KINDS; k++) expected[k] = -1;
  const size_t need = task_bytes(t);
  const bool holds = some_node_holds(ctx, t, need);
  for (int i = 0; i < ctx->nworkers; i++) {
    tsr_worker_t *w = &ctx->workers[i];
    if (!candidate(ctx, w, t, need, holds)) continue;
    if (expected[w->kind] < 0)
      expected[w->kind] = tsr_expected_time(ctx, t, w, cache ? &cache[w->kind] : NULL);
    double cost = tsr_transfer_time(ctx, t, w) + expected[w->kind];
    double finish = queue_load(w) + cost;
    /* Ties (within 1 %) go to the releasing worker, whose caches hold the inputs. */
    if (!best || finish < best_finish * 0.99 || (finish <= best_finish * 1.01 && w == from)) {
      best = w;
      best_finish = finish;
      best_cost = cost;
    }
  }
  return enqueue(ctx, best, t, best_cost, from);
}

static int locality_push(tessera_context_t *ctx, tsr_task_t *t, tsr_worker_t *from,
                         tsr_pm_cache_t *cache) {
  (void)cache;
  tsr_worker_t *best = NULL;
  size_t best_bytes = 0;
  int best_len = 0;
  const size_t need = task_bytes(t);
  const bool holds = some_node_holds(ctx, t, need);
  for (int i = 0; i < ctx->nworkers; i++) {
    tsr_worker_t *w = &ctx->workers[i];
    if (!candidate(ctx, w, t, need, holds)) continue;
    size_t bytes = 0;
    for (int d = 0; d < t->ndata; d++)
      if (tsr_data_valid_on(t->data[d], w->node)) bytes += tsr_data_bytes(t->data[d]);
    int len = __atomic_load_n(&w->ready.n, __ATOMIC_RELAXED);
    bool better = !best || bytes > best_bytes ||
                  (bytes == best_bytes && (w == from || (best != from && len < best_len)));
    if (better) {
      best = w;
      best_bytes = bytes;
      best_len = len;
    }
  }
  return enqueue(ctx, best, t, 0, from);
}

static const tsr_sched_ops_t cost_ops = {"cost", cost_push, pop_steal};
static const tsr_sched_ops_t locality_ops = {"locality", locality_push, pop_steal};

const tsr_sched_ops_t *tsr_sched_cost(void) {
  return &cost_ops;
}
const tsr_sched_ops_t *tsr_sched_locality(void) {
  return &locality_ops;
}
