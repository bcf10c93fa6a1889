/* Replicas of data handles on memory nodes: allocation from the node's pool with eviction of
 * least-recently-used replicas (dirty ones written back first), and the copies that make a
 * replica valid, synchronous for CPU workers and on a queue for asynchronous workers. */
#include "runtime/base.h"
#include "runtime/coherence.h"
#include "runtime/context.h"
#include "runtime/pool.h"
#include "runtime/replica.h"

bool tsr_data_valid_on(tessera_data_t *h, int node) {
  uint8_t s = __atomic_load_n(&h->rep[node].state, __ATOMIC_RELAXED);
  return s == TSR_SHARED || s == TSR_OWNED;
}

/* ---------------------------------------------------------------- LRU lists (node lru_lock) */

static void lru_unlink(tsr_node_t *nd, tessera_data_t *h, int node) {
  tsr_replica_t *r = &h->rep[node];
  if (!r->in_lru) return;
  if (r->lru_prev)
    r->lru_prev->rep[node].lru_next = r->lru_next;
  else
    nd->lru_head = r->lru_next;
  if (r->lru_next)
    r->lru_next->rep[node].lru_prev = r->lru_prev;
  else
    nd->lru_tail = r->lru_prev;
  r->lru_prev = r->lru_next = NULL;
  r->in_lru = false;
}

/* Moves the replica to the most-recently-used end. */
static void lru_touch(tessera_context_t *ctx, tessera_data_t *h, int node) {
  tsr_node_t *nd = &ctx->nodes[node];
  pthread_mutex_lock(&nd->lru_lock);
  lru_unlink(nd, h, node);
  tsr_replica_t *r = &h->rep[node];
  r->lru_prev = nd->lru_tail;
  if (nd->lru_tail)
    nd->lru_tail->rep[node].lru_next = h;
  else
    nd->lru_head = h;
  nd->lru_tail = h;
  r->in_lru = true;
  pthread_mutex_unlock(&nd->lru_lock);
}

/* ---------------------------------------------------------------- allocation */

static bool is_device(const tessera_context_t *ctx, int node) {
  return ctx->nodes[node].slab;
}

void tsr_replica_free(tessera_context_t *ctx, tessera_data_t *h, int node) {
  tsr_replica_t *r = &h->rep[node];
  if (r->allocated && r->ptr) {
    if (node == TESSERA_HOST_NODE) {
      tsr_host_free(ctx, r->ptr, tsr_data_bytes(h));
    } else {
      tsr_node_t *nd = &ctx->nodes[node];
      pthread_mutex_lock(&nd->lru_lock);
      lru_unlink(nd, h, node);
      pthread_mutex_unlock(&nd->lru_lock);
      tsr_pool_free(&nd->pool, r->ptr, tsr_data_bytes(h));
    }
    r->ptr = NULL;
    __atomic_store_n(&r->allocated, 0, __ATOMIC_RELAXED); /* the cost model reads it unlocked */
  }
  __atomic_store_n(&r->state, TSR_INVALID, __ATOMIC_RELAXED);
}

/* Copies replica `src` of `h` into replica `dst` (both allocated), on `queue` or, when NULL,
 * completely before returning. The backend of the device side does the copy. */
static int replica_copy(tessera_context_t *ctx, tessera_data_t *h, int dst, int src, void *queue) {
  const tsr_node_t *cn = dst != TESSERA_HOST_NODE ? &ctx->nodes[dst] : &ctx->nodes[src];
  if (!queue && h->rep[src].fill_event) {
    int rc = cn->be->event_sync(cn->be_state, h->rep[src].fill_event);
    if (rc < 0) return rc;
  }
  return cn->be->copy2d(cn->be_state, ctx->nodes[dst].device, h->rep[dst].ptr, h->rep[dst].ld,
                        ctx->nodes[src].device, h->rep[src].ptr, h->rep[src].ld, h->rows, h->cols,
                        h->elsize, queue);
}

/* Evicts the replica of `v` on `node` (caller holds v->lock): writes it back to its home node
 * when it is the last valid copy (allocating the home replica of a workspace handle then), then
 * returns its memory to the pool. */
static int evict(tessera_context_t *ctx, tessera_data_t *v, int node) {
  int home = v->home;
  /* Shared is not enough to drop it: the other copies may have been evicted meanwhile. */
  bool last = tsr_data_valid_on(v, node);
  for (int n = 0; n < ctx->nnodes && last; n++)
    if (n != node && tsr_data_valid_on(v, n)) last = false;
  if (last && home != node) {
    int rc = tsr_replica_alloc(ctx, v, home);
    if (!rc) rc = replica_copy(ctx, v, home, node, NULL);
    if (rc) return rc;
    __atomic_store_n(&v->rep[home].state, TSR_OWNED, __ATOMIC_RELAXED);
  }
  tsr_replica_free(ctx, v, node);
  return 0;
}

/* Memory on a device node for `self`, evicting unpinned replicas of other handles. */
static void *node_alloc(tessera_context_t *ctx, int node, size_t bytes, tessera_data_t *self) {
  tsr_node_t *nd = &ctx->nodes[node];
  for (;;) {
    void *p = tsr_pool_alloc(&nd->pool, bytes);
    if (p) return p;
    tessera_data_t *victim = NULL;
    pthread_mutex_lock(&nd->lru_lock);
    for (tessera_data_t *v = nd->lru_head; v && !victim; v = v->rep[node].lru_next) {
      if (v == self || atomic_load(&v->rep[node].pins) > 0) continue;
      if (pthread_mutex_trylock(&v->lock) == 0) victim = v;
    }
    pthread_mutex_unlock(&nd->lru_lock);
    if (!victim) return NULL;
    int rc = atomic_load(&victim->rep[node].pins) == 0 ? evict(ctx, victim, node) : 0;
    pthread_mutex_unlock(&victim->lock);
    if (rc) return NULL;
  }
}

/* Allocates the replica on `node` if absent; caller holds h->lock (or owns h alone). */
int tsr_replica_alloc(tessera_context_t *ctx, tessera_data_t *h, int node) {
  tsr_replica_t *r = &h->rep[node];
  if (r->ptr || tsr_data_bytes(h) == 0) return 0;
  void *p = is_device(ctx, node) ? node_alloc(ctx, node, tsr_data_bytes(h), h)
                                 : tsr_host_alloc(ctx, tsr_data_bytes(h));
  if (!p) return TESSERA_ERR_NOMEM;
  r->ptr = p;
  r->ld = h->rows;
  __atomic_store_n(&r->allocated, 1, __ATOMIC_RELAXED); /* the cost model reads it unlocked */
  return 0;
}

/* ---------------------------------------------------------------- acquiring */

/* Plans the access and allocates the replica; caller holds h->lock. */
static int prepare(tessera_data_t *h, int node, tessera_access_t mode, int *src, uint8_t *after) {
  tessera_context_t *ctx = h->ctx;
  uint8_t state[TSR_MAX_NODES];
  for (int i = 0; i < ctx->nnodes; i++) state[i] = h->rep[i].state;
  if (tsr_coherence_plan(state, ctx->nnodes, node, mode, src, after) != 0) {
    /* No valid replica anywhere: contents are undefined, any replica will do. */
    *src = -1;
    for (int i = 0; i < ctx->nnodes; i++) after[i] = TSR_INVALID;
    after[node] = (mode & TESSERA_W) ? TSR_OWNED : TSR_SHARED;
  }
  if (tsr_data_bytes(h) == 0) *src = -1;
  return tsr_replica_alloc(ctx, h, node);
}

static void commit(tessera_data_t *h, const uint8_t *after) {
  for (int i = 0; i < h->ctx->nnodes; i++)
    __atomic_store_n(&h->rep[i].state, after[i], __ATOMIC_RELAXED);
}

int tsr_data_acquire(tessera_data_t *h, int node, tessera_access_t mode, void **ptr, size_t *ld) {
  tessera_context_t *ctx = h->ctx;
  uint8_t after[TSR_MAX_NODES];
  int src;
  pthread_mutex_lock(&h->lock);
  int rc = prepare(h, node, mode, &src, after);
  if (!rc && src >= 0) rc = replica_copy(ctx, h, node, src, NULL);
  if (!rc) commit(h, after);
  *ptr = h->rep[node].ptr;
  *ld = h->rep[node].ld;
  pthread_mutex_unlock(&h->lock);
  return rc;
}

int tsr_data_acquire_async(tessera_data_t *h, int node, tessera_access_t mode, void *queue,
                           void *copy_queue, void *event, void *start, void **ptr, size_t *ld,
                           int *pinned_src) {
  tessera_context_t *ctx = h->ctx;
  const tsr_node_t *nd = &ctx->nodes[node];
  uint8_t after[TSR_MAX_NODES];
  int src;
  *pinned_src = -1;
  pthread_mutex_lock(&h->lock);
  int rc = prepare(h, node, mode, &src, after);
  tsr_replica_t *r = &h->rep[node];
  if (!rc && src >= 0) *pinned_src = src;
  if (!rc && src >= 0) {
    /* The source may itself still be filling (a copy on another queue). */
    if (h->rep[src].fill_event)
      rc = nd->be->queue_wait_event(nd->be_state, copy_queue, h->rep[src].fill_event);
    if (!rc && start) rc = nd->be->event_record(nd->be_state, start, copy_queue);
    if (!rc) rc = replica_copy(ctx, h, node, src, copy_queue);
    if (!rc) rc = nd->be->event_record(nd->be_state, event, copy_queue);
    if (!rc && copy_queue != queue) rc = nd->be->queue_wait_event(nd->be_state, queue, event);
    if (!rc) r->fill_event = event;
    if (!rc)
      atomic_fetch_add(&h->rep[src].pins, 1); /* read by the copy until it completes */
    else
      *pinned_src = -1;
  } else if (!rc && r->fill_event) {
    rc = nd->be->queue_wait_event(nd->be_state, queue, r->fill_event);
  }
  if (!rc) {
    commit(h, after);
    atomic_fetch_add(&r->pins, 1);
    /* A handle's home replica is its storage, never an eviction victim: it stays off the LRU. */
    if (r->allocated && node != h->home) lru_touch(ctx, h, node);
  }
  *ptr = r->ptr;
  *ld = r->ld;
  pthread_mutex_unlock(&h->lock);
  return rc;
}

void tsr_data_unpin(tessera_data_t *h, int node, void *event) {
  pthread_mutex_lock(&h->lock);
  tsr_replica_t *r = &h->rep[node];
  if (event && r->fill_event == event) r->fill_event = NULL;
  atomic_fetch_sub(&r->pins, 1);
  pthread_mutex_unlock(&h->lock);
}

int tsr_data_evict(tessera_data_t *h, int node) {
  pthread_mutex_lock(&h->lock);
  const tsr_replica_t *r = &h->rep[node];
  const int rc = node != h->home && r->allocated && r->ptr && atomic_load(&r->pins) == 0
                     ? evict(h->ctx, h, node)
                     : 0;
  pthread_mutex_unlock(&h->lock);
  return rc;
}

void tsr_data_discard_now(tessera_data_t *h) {
  pthread_mutex_lock(&h->lock);
  for (int n = 0; n < TSR_MAX_NODES; n++) tsr_replica_free(h->ctx, h, n);
  pthread_mutex_unlock(&h->lock);
}
