/* Where a task may run: the kernel has an implementation for the device's kind and the task's
 * scope admits the device. Used by the queues (stealing), by insertion (some worker must
 * qualify) and by the policies, below all of them. */
#ifndef TSR_RUNTIME_RUNS_ON_H
#define TSR_RUNTIME_RUNS_ON_H

#include <stdbool.h>

#include "runtime/task.h"

/** Whether `t` may run on device `device` of `kind` (the device index is ignored for the CPU). */
static inline bool tsr_task_runs_on(const tsr_task_t *t, tessera_device_kind_t kind, int device) {
  if (!t->kernel->impl[kind]) return false;
  tessera_scope_t s = t->scope;
  if (s.kinds && !(s.kinds & (1u << kind))) return false;
  if (kind != TESSERA_DEVICE_CPU && s.gpu_mask && !(s.gpu_mask >> device & 1u)) return false;
  return true;
}

#endif
