/* tessera — tracing and counters.
 *
 * With TESSERA_TRACE=file.json (or tessera_config_t.trace_file) every task and transfer is
 * recorded per worker and written at tessera_finalize as a Chrome / Perfetto trace
 * ("traceEvents", one track per worker, times in microseconds). Counters are always kept.
 */
#ifndef TESSERA_TRACE_H
#define TESSERA_TRACE_H

#include "tessera/context.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Counters of one worker since the context started (or since tessera_stats_reset). */
typedef struct {
  uint64_t tasks;    /**< tasks run */
  double busy_s;     /**< seconds spent in kernels and transfers */
  double idle_s;     /**< seconds spent waiting for work */
  double flops;      /**< floating-point operations of the tasks run */
  uint64_t bytes_in; /**< bytes copied to this worker's memory node for its tasks */
  uint64_t urgent;   /**< tasks run on the worker's urgent lane (GPU workers) */
} tessera_worker_stats_t;

/** Fills `out[0 .. min(n, workers) - 1]` with per-worker counters; returns the number of
 *  workers. Call between flows (after tessera_wait_all) for consistent numbers. */
TESSERA_API int tessera_stats(const tessera_context_t *ctx, tessera_worker_stats_t *out, int n);

/** Resets the counters of every worker. Call between flows. */
TESSERA_API void tessera_stats_reset(tessera_context_t *ctx);

/** Writes the trace recorded so far to `path` (Chrome JSON). Returns 0, TESSERA_ERR_IO, or
 *  TESSERA_ERR_STATE when tracing is off. Call between flows. */
TESSERA_API int tessera_trace_write(const tessera_context_t *ctx, const char *path);

#ifdef __cplusplus
}
#endif
#endif
