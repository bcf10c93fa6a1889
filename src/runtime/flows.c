/* The runtime's side of the distributed flows (see flows.h). */
#include "runtime/flows.h"

#include "runtime/context.h"
#include "runtime/replica.h"
#include "runtime/worker.h"

void tsr_data_set_record(tessera_data_t *h, void *record) {
  h->dist = record;
}

void *tsr_data_record(const tessera_data_t *h) {
  return h ? h->dist : NULL;
}

void tsr_data_shape(const tessera_data_t *h, size_t *rows, size_t *cols, size_t *elsize) {
  *rows = h->rows, *cols = h->cols, *elsize = h->elsize;
}

long tsr_context_progress(const tessera_context_t *ctx, bool *running) {
  *running = tsr_workers_running(ctx);
  return atomic_load_explicit(&ctx->inflight, memory_order_relaxed);
}
