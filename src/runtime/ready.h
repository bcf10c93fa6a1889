/* Ready queues of tasks, one per worker (ready.c). */
#ifndef TSR_RUNTIME_READY_H
#define TSR_RUNTIME_READY_H

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
} tsr_ready_t;

int tsr_ready_init(tsr_ready_t *q);
/** Adds `x` seconds to the queue's predicted load (any thread, no lock). */
void tsr_ready_add_load(tsr_ready_t *q, double x);
void tsr_ready_destroy(tsr_ready_t *q);
/** Pushes under the queue's lock (caller holds it). Returns 0 or TESSERA_ERR_NOMEM. */
int tsr_ready_push_locked(tsr_ready_t *q, tsr_task_t *t);
/** Pops the best task under the lock (caller holds it), NULL if empty. */
tsr_task_t *tsr_ready_pop_locked(tsr_ready_t *q);
/** Pops the best task that may run on a worker of `kind` on accelerator `accel` (-1: on the
 *  host; tsr_task_runs_on), for stealing, under the lock; NULL if none. */
tsr_task_t *tsr_ready_steal_locked(tsr_ready_t *q, tessera_device_kind_t kind, int accel);
/** Wakes the queue's worker if it sleeps. */
void tsr_ready_wake(tsr_ready_t *q);

#endif
