/* Where a task may run: the kernel has an implementation for the device's kind and the task's
 * scope admits the device. Used by the queues (stealing), by insertion (some worker must
 * qualify) and by the policies, below all of them. */
#ifndef TSR_RUNTIME_RUNS_ON_H
#define TSR_RUNTIME_RUNS_ON_H

#include <stdbool.h>

#include "runtime/task.h"

/** Whether scope `s` admits a worker of `kind` on accelerator `accel` (its index among the
 *  devices of its kind), or on the host when `accel` is -1 (the scope's accelerator mask does not
 *  restrict the host's workers). */
static inline bool tsr_scope_admits(tessera_scope_t s, tessera_device_kind_t kind, int accel) {
  if (s.kinds && !(s.kinds & (1u << kind))) return false;
  return accel < 0 || !s.gpu_mask || (s.gpu_mask >> accel & 1u);
}

/** Whether `t` may run on a worker of `kind` on accelerator `accel` (-1: on the host). */
static inline bool tsr_task_runs_on(const tsr_task_t *t, tessera_device_kind_t kind, int accel) {
  return t->kernel->impl[kind] && tsr_scope_admits(t->scope, kind, accel);
}

#endif
