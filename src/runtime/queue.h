/* Ready queues of tasks, one per worker (queue.c). */
#ifndef TSR_RUNTIME_QUEUE_H
#define TSR_RUNTIME_QUEUE_H

#include <pthread.h>
#include <stdbool.h>

#include "runtime/task.h"

/** A priority queue of ready tasks (larger priority first, then insertion order). */
typedef struct {
  pthread_mutex_t lock;
  pthread_cond_t cond; /* the owning worker sleeps here */
  tsr_task_t **heap;
  int n, cap;
  bool sleeping;
  _Atomic double load; /* predicted seconds of queued and running tasks */
} tsr_queue_t;

int tsr_queue_init(tsr_queue_t *q);
/** Adds `x` seconds to the queue's predicted load (any thread, no lock). */
void tsr_queue_add_load(tsr_queue_t *q, double x);
void tsr_queue_destroy(tsr_queue_t *q);
/** Pushes under the queue's lock (caller holds it). Returns 0 or TESSERA_ERR_NOMEM. */
int tsr_queue_push_locked(tsr_queue_t *q, tsr_task_t *t);
/** Pops the best task under the lock (caller holds it), NULL if empty. */
tsr_task_t *tsr_queue_pop_locked(tsr_queue_t *q);
/** Pops the best task that may run on device `device` of `kind` (for stealing), under the lock;
 *  NULL if none. */
tsr_task_t *tsr_queue_steal_locked(tsr_queue_t *q, tessera_device_kind_t kind, int device);
/** Wakes the queue's worker if it sleeps. */
void tsr_queue_wake(tsr_queue_t *q);

#endif
