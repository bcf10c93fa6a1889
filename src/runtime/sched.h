/* Scheduling policies and the cost model's estimates (sched.c). */
#ifndef TSR_RUNTIME_SCHED_H
#define TSR_RUNTIME_SCHED_H

#include "runtime/perfmodel.h"
#include "runtime/task.h"
#include "runtime/worker.h"

typedef struct tsr_sched_ops tsr_sched_ops_t;

struct tsr_sched_ops {
  const char *name;
  /** A ready task: place it on a worker's queue. `from` is the worker that made it ready, or
   *  NULL for another thread; `cache` the calling thread's kernel-time lookups (one per device
   *  kind: a worker's, the inserting thread's), or NULL for a thread that has none (a deferred
   *  task's resume). Returns 0, or TESSERA_ERR_NOMEM when no queue could take it: the task is
   *  then the caller's, still to be completed (tsr_task_complete). */
  int (*push)(tessera_context_t *ctx, tsr_task_t *t, tsr_worker_t *from, tsr_pm_cache_t *cache);
  /** Next task for `w` (its own queue, then what it may steal), or NULL. */
  tsr_task_t *(*pop)(tessera_context_t *ctx, tsr_worker_t *w);
};

const tsr_sched_ops_t *tsr_sched_cost(void);
const tsr_sched_ops_t *tsr_sched_locality(void);

/** Tasks pushed by the inserting thread wake a sleeping worker once this many wait for it. */
#define TSR_WAKE_BATCH 8

/** Nominal bytes/s of copies from pageable (user-registered) host memory to a device. */
#define TSR_PAGEABLE_BW 8e9

/** Expected seconds of `t` on `w`: history, else flops / nominal rate. */
double tsr_expected_time(tessera_context_t *ctx, const tsr_task_t *t, const tsr_worker_t *w,
                         tsr_pm_cache_t *cache);

/** Expected seconds of moving the data `t` lacks onto `w`'s memory node. */
double tsr_transfer_time(tessera_context_t *ctx, const tsr_task_t *t, const tsr_worker_t *w);

#endif
