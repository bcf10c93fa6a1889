/* The runtime's ground: limits, small locks, the clock, aligned allocation and error messages.
 * Every file of src/runtime/ may include this; it includes nothing of the runtime but
 * runtime/error.h. */
#ifndef TSR_RUNTIME_BASE_H
#define TSR_RUNTIME_BASE_H

#include <stdatomic.h>
#include <stddef.h>

#include "runtime/error.h"
/* the runtime's part of the public API (not the umbrella: communication and linear algebra are
 * layers above) */
#include "tessera/context.h"
#include "tessera/data.h"
#include "tessera/device.h"
#include "tessera/task.h"
#include "tessera/trace.h"
#include "tessera/types.h"

#define TSR_MAX_NODES 17 /* host + 16 GPUs */
#define TSR_MAX_WORKERS 512
#define TSR_ERRMSG 256
#define TSR_CACHE_LINE 64

/** A spin lock for critical sections of a few instructions. */
typedef struct {
  atomic_flag f;
} tsr_spin_t;

#define TSR_SPIN_INIT                                                                              \
  { ATOMIC_FLAG_INIT }

static inline void tsr_spin_lock(tsr_spin_t *s) {
  while (atomic_flag_test_and_set_explicit(&s->f, memory_order_acquire)) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  }
}
static inline void tsr_spin_unlock(tsr_spin_t *s) {
  atomic_flag_clear_explicit(&s->f, memory_order_release);
}

/** Monotonic seconds. */
double tsr_now(void);

/** Zeroed memory aligned to a cache line (free with free()). */
void *tsr_zalloc_aligned(size_t bytes);

#endif
