/* Task insertion in program order, dependency inference (RAW, WAR, WAW), completion, waits. */
#include <stdlib.h>
#include <string.h>

#include "runtime/base.h"
#include "runtime/context.h"
#include "runtime/ready.h"
#include "runtime/replica.h"
#include "runtime/runs_on.h"
#include "runtime/sched.h"
#include "runtime/task.h"
#include "runtime/worker.h"

/* Finished tasks are kept for reuse: each worker gathers them in a local chain and hands
 * whole chains to the context's pool; the inserting thread takes the whole pool at once. Task
 * objects are freed only with the context (handles link to them, tsr_task_link_t): how many
 * exist is the most ever unfinished at once, bounded by the task window. */
#define CHAIN 64

static void cache_push(tsr_task_cache_t *c, tsr_task_t *t) {
  t->next_free = c->head;
  if (!c->head) c->tail = t;
  c->head = t;
  c->n++;
}

/* Moves the chain of `c` into the context's pool. */
static void cache_flush(tessera_context_t *ctx, tsr_task_cache_t *c) {
  if (!c->head) return;
  tsr_spin_lock(&ctx->pool_lock);
  c->tail->next_free = ctx->pool;
  ctx->pool = c->head;
  ctx->pool_n += c->n;
  tsr_spin_unlock(&ctx->pool_lock);
  *c = (tsr_task_cache_t){0};
}

void tsr_task_recycle(tsr_task_t *t, tsr_task_cache_t *cache) {
  if (t->succ != t->succ_inline) free(t->succ);
  tessera_context_t *ctx = t->ctx;
  tsr_task_cache_t one = {0};
  tsr_task_cache_t *c = cache ? cache : &one;
  cache_push(c, t);
  if (c->n >= CHAIN && c != &ctx->insert_cache) cache_flush(ctx, c);
  if (c == &one) cache_flush(ctx, c);
}

static tsr_task_t *task_alloc(tessera_context_t *ctx) {
  tsr_task_cache_t *c = &ctx->insert_cache;
  if (!c->head) {
    tsr_spin_lock(&ctx->pool_lock);
    c->head = ctx->pool;
    c->n = ctx->pool_n;
    ctx->pool = NULL;
    ctx->pool_n = 0;
    tsr_spin_unlock(&ctx->pool_lock);
  }
  tsr_task_t *t = c->head;
  if (!t) {
    t = malloc(sizeof *t);
    ctx->tasks_made += t != NULL;
    return t;
  }
  c->head = t->next_free;
  c->n--;
  return t;
}

static void free_chain(tsr_task_t *t) {
  for (tsr_task_t *next; t; t = next) {
    next = t->next_free;
    free(t);
  }
}

void tsr_task_pool_free(tessera_context_t *ctx) {
  for (int i = 0; i < ctx->nworkers; i++) {
    free_chain(ctx->workers[i].task_cache.head);
    ctx->workers[i].task_cache = (tsr_task_cache_t){0};
  }
  free_chain(ctx->insert_cache.head);
  free_chain(ctx->pool);
  ctx->insert_cache = (tsr_task_cache_t){0};
  ctx->pool = NULL;
  ctx->pool_n = 0;
}

/* Adds the edge pred -> succ unless pred has already finished (or is gone: NULL). */
static int add_edge(tsr_task_t *pred, tsr_task_t *succ) {
  if (!pred || pred == succ) return 0;
  int rc = 0;
  tsr_spin_lock(&pred->lock);
  if (!pred->done) {
    if (pred->nsucc == pred->capsucc) {
      int cap = pred->capsucc * 2;
      tsr_task_t **s = malloc(sizeof *s * (size_t)cap);
      if (s) {
        memcpy(s, pred->succ, sizeof *s * (size_t)pred->nsucc);
        if (pred->succ != pred->succ_inline) free(pred->succ);
        pred->succ = s;
        pred->capsucc = cap;
      } else {
        rc = TESSERA_ERR_NOMEM;
      }
    }
    if (!rc) {
      pred->succ[pred->nsucc++] = succ;
      atomic_fetch_add_explicit(&succ->npred, 1, memory_order_relaxed);
    }
  }
  tsr_spin_unlock(&pred->lock);
  return rc;
}

static bool task_done(tsr_task_t *t) {
  if (!t) return true;
  tsr_spin_lock(&t->lock);
  bool done = t->done;
  tsr_spin_unlock(&t->lock);
  return done;
}

/* Appends a reader, first dropping readers that have finished when the list is full or its
 * oldest reader has finished (readers mostly finish in order): a finished task needs no edge. */
static int add_reader(tessera_data_t *h, tsr_task_t *t) {
  bool full = h->nreaders == h->capreaders;
  if (full || (h->nreaders >= 4 && task_done(tsr_task_link_get(h->readers[0])))) {
    int k = 0;
    for (int i = 0; i < h->nreaders; i++)
      if (!task_done(tsr_task_link_get(h->readers[i]))) h->readers[k++] = h->readers[i];
    h->nreaders = k;
    if (full && (k * 2 > h->capreaders || h->capreaders == 0)) {
      int cap = h->capreaders ? h->capreaders * 2 : 8;
      tsr_task_link_t *rs = realloc(h->readers, sizeof *rs * (size_t)cap);
      if (!rs) return TESSERA_ERR_NOMEM;
      h->readers = rs;
      h->capreaders = cap;
    }
  }
  h->readers[h->nreaders++] = (tsr_task_link_t){t, t->seq};
  return 0;
}

/* Records the access of `t` to `h` and adds the edges that keep program order. */
static int track_access(tessera_data_t *h, tsr_task_t *t, tessera_access_t mode) {
  int rc = 0;
  rc = add_edge(tsr_task_link_get(h->last_writer), t); /* RAW, WAW */
  if (rc) return rc;
  if (!(mode & TESSERA_W)) return add_reader(h, t);
  for (int i = 0; i < h->nreaders && !rc; i++)
    rc = add_edge(tsr_task_link_get(h->readers[i]), t); /* WAR */
  if (rc) return rc;
  h->nreaders = 0;
  h->last_writer = (tsr_task_link_t){t, t->seq};
  return 0;
}

/* Whether some worker may run `t`; a discard task runs nowhere, and needs none. */
static bool scope_has_worker(tessera_context_t *ctx, const tsr_task_t *t) {
  if (t->kernel->flags & TSR_KERNEL_DISCARD) return true;
  for (int i = 0; i < ctx->nworkers; i++)
    if (tsr_worker_can_run(&ctx->workers[i], t)) return true;
  return false;
}

/* Whether the calling thread is one of the context's workers. */
static bool on_worker_thread(const tessera_context_t *ctx) {
  pthread_t self = pthread_self();
  for (int i = 0; i < ctx->nworkers; i++)
    if (pthread_equal(ctx->workers[i].self, self)) return true;
  return false;
}

/* Wakes every sleeping worker (before a thread blocks in a wait call). */
static void wake_idle(tessera_context_t *ctx) {
  for (int i = 0; i < ctx->nworkers; i++) {
    tsr_worker_t *w = &ctx->workers[i];
    if (__atomic_load_n(&w->ready.sleeping, __ATOMIC_RELAXED)) tsr_ready_wake(&w->ready);
  }
}

/* Blocks until `*count` is at most `limit` (completions notify when it reaches 0 or the
 * context's window_low). */
static void wait_at_most(tessera_context_t *ctx, atomic_long *count, long limit) {
  if (atomic_load(count) <= limit) return;
  wake_idle(ctx);
  atomic_fetch_add(&ctx->waiters, 1);
  pthread_mutex_lock(&ctx->wait_lock);
  while (atomic_load(count) > limit) pthread_cond_wait(&ctx->wait_cond, &ctx->wait_lock);
  pthread_mutex_unlock(&ctx->wait_lock);
  atomic_fetch_sub(&ctx->waiters, 1);
}

void tsr_wait_zero(tessera_context_t *ctx, atomic_long *count) {
  wait_at_most(ctx, count, 0);
}

/* The task window: an insertion at cfg.max_submitted tasks not finished waits until they fall
 * to window_low. A worker inserting never waits: the tasks it waits for might need it. */
static void throttle(tessera_context_t *ctx) {
  if (atomic_load_explicit(&ctx->inflight, memory_order_relaxed) < ctx->cfg.max_submitted) return;
  if (!on_worker_thread(ctx)) wait_at_most(ctx, &ctx->inflight, ctx->window_low);
}

/* Hands a task whose predecessors have all finished to the scheduler. When no queue can take
 * it (out of memory), the flow fails and the task completes without its kernel. */
static void make_ready(tsr_task_t *t, tsr_worker_t *from, tsr_pm_cache_t *cache) {
  tessera_context_t *ctx = t->ctx;
  if (t->kernel->flags & TSR_KERNEL_DISCARD) { /* no kernel: the replicas go, here and now */
    for (int i = 0; i < t->ndata; i++) tsr_data_discard_now(t->data[i]);
    tsr_task_complete(t, from);
    return;
  }
  if (ctx->sched->push(ctx, t, from, cache) == 0) return;
  tsr_flow_fail(ctx, TESSERA_ERR_NOMEM);
  tsr_task_complete(t, NULL);
}

static int validate(tessera_context_t *ctx, const tessera_task_t *d) {
  if (!d) return tsr_error(ctx, -2, "task_insert: NULL task");
  if (!d->kernel) return tsr_error(ctx, -2, "task_insert: task without a kernel");
  const char *name = d->kernel->name ? d->kernel->name : "(unnamed)";
  if (d->ndata < 0 || d->ndata > TESSERA_MAX_TASK_DATA)
    return tsr_error(ctx, -2, "task_insert(%s): %d handles, at most %d", name, d->ndata,
                     TESSERA_MAX_TASK_DATA);
  if (d->args_size > TESSERA_MAX_TASK_ARGS)
    return tsr_error(ctx, -2, "task_insert(%s): %zu bytes of arguments, at most %d", name,
                     d->args_size, TESSERA_MAX_TASK_ARGS);
  if (d->args_size && !d->args)
    return tsr_error(ctx, -2, "task_insert(%s): NULL args with args_size %zu", name, d->args_size);
  if (d->ntag < 0 || d->ntag > 3)
    return tsr_error(ctx, -2, "task_insert(%s): ntag %d", name, d->ntag);
  for (int i = 0; i < d->ndata; i++) {
    if (!d->data[i]) return tsr_error(ctx, -2, "task_insert(%s): handle %d is NULL", name, i);
    if (d->data[i]->ctx != ctx)
      return tsr_error(ctx, -2, "task_insert(%s): handle %d belongs to another context", name, i);
    if (d->mode[i] != TESSERA_R && d->mode[i] != TESSERA_W && d->mode[i] != TESSERA_RW)
      return tsr_error(ctx, -2, "task_insert(%s): handle %d has access mode %d", name, i,
                       (int)d->mode[i]);
  }
  return 0;
}

static int insert(tessera_context_t *ctx, const tessera_task_t *d, tsr_task_link_t *chain) {
  if (!ctx) return -1;
  int rc = validate(ctx, d);
  if (rc) return rc;
  throttle(ctx);
  tsr_task_t *t = task_alloc(ctx);
  if (!t) return tsr_error(ctx, TESSERA_ERR_NOMEM, "task_insert: out of memory");
  t->kernel = d->kernel;
  t->ctx = ctx;
  t->ndata = d->ndata;
  t->priority = d->priority;
  t->scope = (d->scope.kinds || d->scope.gpu_mask) ? d->scope : ctx->scope;
  t->ntag = d->ntag;
  memcpy(t->tag, d->tag, sizeof t->tag);
  t->seq = ctx->seq++;
  atomic_init(&t->npred, 1); /* released at the end of insertion */
  atomic_init(&t->resumed, false);
  atomic_flag_clear(&t->lock.f);
  t->done = false;
  t->nsucc = 0;
  t->capsucc = 4;
  t->succ = t->succ_inline;
  t->predicted = 0;
  if (d->args_size) memcpy(t->args, d->args, d->args_size);
  t->flops = d->kernel->flops ? d->kernel->flops(t->args) : 0.0;
  uint64_t key = 0;
  for (int i = 0; i < d->ndata; i++) {
    t->data[i] = d->data[i];
    t->mode[i] = (uint8_t)d->mode[i];
    key += tsr_data_bytes(d->data[i]);
  }
  t->size_key = d->kernel->size_key ? d->kernel->size_key(t->args) : key;
  bool known = ctx->checked_kernel == t->kernel && ctx->checked_scope.kinds == t->scope.kinds &&
               ctx->checked_scope.gpu_mask == t->scope.gpu_mask;
  if (known || scope_has_worker(ctx, t)) {
    ctx->checked_kernel = t->kernel;
    ctx->checked_scope = t->scope;
  } else {
    cache_push(&ctx->insert_cache, t); /* handles may link to the object: never freed */
    return tsr_error(ctx, TESSERA_ERR_NODEVICE,
                     "task_insert(%s): no worker in the task's scope has an implementation",
                     d->kernel->name ? d->kernel->name : "(unnamed)");
  }
  atomic_fetch_add(&ctx->inflight, 1);
  for (int i = 0; i < t->ndata; i++) {
    atomic_fetch_add(&t->data[i]->pending, 1);
    int e = track_access(t->data[i], t, d->mode[i]);
    if (e && !rc) rc = tsr_error(ctx, e, "task_insert: out of memory for dependencies");
  }
  if (chain) {
    int e = add_edge(tsr_task_link_get(*chain), t);
    if (e && !rc) rc = tsr_error(ctx, e, "task_insert: out of memory for dependencies");
    *chain = (tsr_task_link_t){t, t->seq};
  }
  if (atomic_fetch_sub_explicit(&t->npred, 1, memory_order_acq_rel) == 1)
    make_ready(t, NULL, ctx->pm_cache);
  return rc;
}

int tessera_task_insert(tessera_context_t *ctx, const tessera_task_t *d) {
  return insert(ctx, d, NULL);
}

int tsr_task_insert_chained(tessera_context_t *ctx, const tessera_task_t *d,
                            tsr_task_link_t *chain) {
  return insert(ctx, d, chain);
}

void tsr_notify_waiters(tessera_context_t *ctx) {
  if (atomic_load(&ctx->waiters) == 0) return;
  pthread_mutex_lock(&ctx->wait_lock);
  pthread_cond_broadcast(&ctx->wait_cond);
  pthread_mutex_unlock(&ctx->wait_lock);
}

void tsr_task_complete(tsr_task_t *t, tsr_worker_t *w) {
  tessera_context_t *ctx = t->ctx;
  bool wake = false;
  for (int i = 0; i < t->ndata; i++)
    if (atomic_fetch_sub(&t->data[i]->pending, 1) == 1) wake = true;
  tsr_spin_lock(&t->lock);
  t->done = true;
  int n = t->nsucc;
  tsr_spin_unlock(&t->lock);
  /* No edge is added once done is set, so succ is stable from here. */
  for (int i = 0; i < n; i++) {
    tsr_task_t *s = t->succ[i];
    if (atomic_fetch_sub_explicit(&s->npred, 1, memory_order_acq_rel) == 1)
      make_ready(s, w, w ? w->pm_cache : NULL);
  }
  long left = atomic_fetch_sub(&ctx->inflight, 1) - 1;
  if (left == 0 || left == ctx->window_low) wake = true;
  if (wake) tsr_notify_waiters(ctx);
  tsr_task_recycle(t, w ? &w->task_cache : NULL);
}

void tsr_flow_fail(tessera_context_t *ctx, int status) {
  int cur = atomic_load(&ctx->flow_status);
  for (;;) {
    bool better = cur == 0 || (status < 0 && cur > 0) || (status > 0 && cur > 0 && status < cur);
    if (!better) break;
    if (atomic_compare_exchange_weak(&ctx->flow_status, &cur, status)) break;
  }
  atomic_store(&ctx->flow_failed, true);
}

int tessera_wait_all(tessera_context_t *ctx) {
  if (!ctx) return -1;
  tsr_wait_zero(ctx, &ctx->inflight);
  int status = atomic_exchange(&ctx->flow_status, 0);
  atomic_store(&ctx->flow_failed, false);
  if (status < 0) tsr_error(ctx, status, "a task failed: %s", tessera_strerror(status));
  return status;
}
