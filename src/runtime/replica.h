/* Data handles and their replicas on memory nodes (replica.c; the public calls in data.c). */
#ifndef TSR_RUNTIME_REPLICA_H
#define TSR_RUNTIME_REPLICA_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "runtime/base.h"
#include "runtime/coherence.h"
#include "runtime/task.h"

typedef struct {
  void *ptr;
  size_t ld;
  uint8_t state;
  uint8_t allocated; /* memory belongs to tessera (host allocator or a node's pool) */
  void *fill_event;  /* set while an asynchronous copy into this replica may be in flight */
  atomic_int pins;   /* tasks in flight using this replica (never evicted while > 0) */
  tessera_data_t *lru_prev, *lru_next; /* the node's least-recently-used list */
  bool in_lru;
} tsr_replica_t;

struct tessera_data {
  tessera_context_t *ctx;
  size_t rows, cols, elsize;
  int home;
  pthread_mutex_t lock; /* replica states */
  tsr_replica_t rep[TSR_MAX_NODES];
  /* Dependency tracking, touched by the inserting thread only. */
  tsr_task_link_t last_writer;
  tsr_task_link_t *readers;
  int nreaders, capreaders;
  atomic_long pending; /* inserted tasks using this handle that have not finished */
  bool workspace;      /* tessera_data_create_workspace: no home memory of the caller's */
  /* The distribution layer's record of the handle (src/distributed/flow.c: its owner process, what
   * was sent and received), NULL for a handle of this process alone. The runtime never reads it. */
  void *dist;
};

/** Bytes of the handle's contents. */
static inline size_t tsr_data_bytes(const tessera_data_t *h) {
  return h->rows * h->cols * h->elsize;
}

/** Makes the handle valid on `node` for `mode` (copying if needed, allocating the replica).
 *  Returns the replica's pointer and leading dimension, or a status. */
int tsr_data_acquire(tessera_data_t *h, int node, tessera_access_t mode, void **ptr, size_t *ld);

/** Asynchronous variant for a worker of device node `node`, through that node's backend: a
 *  copy is enqueued on `copy_queue` and `event` recorded after it (the replica's fill marker),
 *  and `queue` (where the task's kernel goes; it may be `copy_queue`) waits for it; later work
 *  on `queue` is ordered after copies still in flight into the replicas used. The replica is
 *  pinned (never evicted) until tsr_data_unpin, and so is the copy's source replica, whose node
 *  goes to `*pinned_src` (-1 when nothing was copied). `start`, when not NULL, is recorded on
 *  `copy_queue` right before a copy (traces time copies between it and `event`). Returns 0,
 *  TESSERA_ERR_NOMEM when the node's pool is full of pinned replicas (retry after in-flight
 *  tasks finish), or a status. */
int tsr_data_acquire_async(tessera_data_t *h, int node, tessera_access_t mode, void *queue,
                           void *copy_queue, void *event, void *start, void **ptr, size_t *ld,
                           int *pinned_src);
/** Ends a task's use of the replica on `node`; clears `event` as the fill marker. */
void tsr_data_unpin(tessera_data_t *h, int node, void *event);

/** Evicts the replica of h on device node `node` where tessera allocated it and nothing pins it
 *  (written home first when it is the last valid copy), returning its memory to the pool. */
int tsr_data_evict(tessera_data_t *h, int node);

/** Allocates the replica on `node` if absent (device nodes: from the pool, evicting). */
int tsr_replica_alloc(tessera_context_t *ctx, tessera_data_t *h, int node);

/** Frees the replica on `node` (returning tessera's memory) and marks it Invalid. */
void tsr_replica_free(tessera_context_t *ctx, tessera_data_t *h, int node);

/** Frees every replica of workspace h, whose tasks have all finished (a discard task's turn). */
void tsr_data_discard_now(tessera_data_t *h);

/** Whether `node` holds a valid replica. */
bool tsr_data_valid_on(tessera_data_t *h, int node);

#endif
