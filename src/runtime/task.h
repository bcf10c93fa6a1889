/* Tasks: insertion in program order, dependency inference, completion, reuse, waits (task.c). */
#ifndef TSR_RUNTIME_TASK_H
#define TSR_RUNTIME_TASK_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "runtime/base.h"

typedef struct tsr_task tsr_task_t;
typedef struct tsr_worker tsr_worker_t;

struct tsr_task {
  const tessera_kernel_t *kernel;
  tessera_context_t *ctx;
  int ndata;
  tessera_data_t *data[TESSERA_MAX_TASK_DATA];
  uint8_t mode[TESSERA_MAX_TASK_DATA];
  int priority;
  tessera_scope_t scope;
  int tag[3];
  int ntag;
  uint64_t seq;
  atomic_int npred;
  tsr_spin_t lock; /* done, succ */
  bool done;
  int nsucc, capsucc;
  tsr_task_t **succ;
  tsr_task_t *succ_inline[4];
  double flops;
  uint64_t size_key;
  double predicted;          /* seconds the scheduler expects, counted in the worker's load */
  tsr_worker_t *deferred_by; /* set by tessera_task_defer: the worker whose load counts it */
  /* a task deferred on an asynchronous worker: tessera_task_resume sets its status, then
   * `resumed`; the worker, which still holds the task's data, completes it */
  atomic_bool resumed;
  int resume_status;
  tsr_task_t *next_free; /* in the context's pool of finished tasks */
  _Alignas(16) unsigned char args[TESSERA_MAX_TASK_ARGS];
};

/** A kernel flag of the runtime's own (beside the public TESSERA_KERNEL_*): the task runs no
 *  kernel; when it becomes ready the runtime frees its handles' replicas and completes it on
 *  the spot (tessera_data_discard). */
#define TSR_KERNEL_DISCARD (1u << 31)

/** One run of a kernel, on a CPU worker's stack or in an asynchronous worker's flight
 * (tessera_exec_t.task points at it): tessera_task_defer marks it, so the worker learns of the
 * deferral without touching the task again (which its resume may have completed and recycled by
 * then). */
typedef struct {
  tsr_task_t *task;
  tsr_worker_t *worker;
  bool deferred;
} tsr_run_t;

/** How a data handle refers to a task of its dependency tracking, without holding it: the link
 *  is live while the task object still carries `seq`. Task objects are reused, never freed,
 *  while their context lives, and a reused object gets a later seq, so a link whose seq differs
 *  refers to a task that has finished. Handles therefore keep no finished task's memory: what
 *  the runtime holds is bounded by the task window, whatever the number of handles. */
typedef struct {
  tsr_task_t *task;
  uint64_t seq;
} tsr_task_link_t;

/** The task `l` refers to, or NULL when its object has been reused (the task has finished).
 *  Inserting thread only. */
static inline tsr_task_t *tsr_task_link_get(tsr_task_link_t l) {
  return l.task && l.task->seq == l.seq ? l.task : NULL;
}

/** A chain of finished tasks kept by one thread for reuse. */
typedef struct {
  tsr_task_t *head, *tail;
  int n;
} tsr_task_cache_t;

/** Keeps finished task `t` for reuse in `cache` (the calling thread's own: a worker's, or the
 *  context's insert_cache on the inserting thread), or in the context's pool when `cache` is
 *  NULL. */
void tsr_task_recycle(tsr_task_t *t, tsr_task_cache_t *cache);
/** tessera_task_insert, and the task also runs after the live task `*chain` refers to (if
 *  any), which then refers to the new task: the tasks inserted through one chain run one at a
 *  time, in insertion order, whatever data they touch. Inserting thread only. */
int tsr_task_insert_chained(tessera_context_t *ctx, const tessera_task_t *task,
                            tsr_task_link_t *chain);

/** Frees the pool of finished tasks (at finalize). */
void tsr_task_pool_free(tessera_context_t *ctx);

/** Called when `t` has finished, by worker `w` on its own thread (or with w NULL from any
 *  thread): releases successors, counters, waiters. */
void tsr_task_complete(tsr_task_t *t, tsr_worker_t *w);

/** Records a kernel's failure status in the current flow. */
void tsr_flow_fail(tessera_context_t *ctx, int status);

/** Blocks until `*count` (a counter that completions decrement and then notify) is zero. */
void tsr_wait_zero(tessera_context_t *ctx, atomic_long *count);

/** Wakes threads blocked in a wait call. */
void tsr_notify_waiters(tessera_context_t *ctx);

#endif
