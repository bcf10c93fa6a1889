/* The processes a context spans (span.c): its communicator and process grid, kept in the
 * runtime's slot of the context (runtime/attach.h). tessera_init sets them; every layer above
 * the distributed flows reads them through tessera_context_comm and tessera_context_grid
 * (tessera/distribution.h). */
#ifndef TSR_DISTRIBUTED_SPAN_H
#define TSR_DISTRIBUTED_SPAN_H

#include "comm/transport.h"
#include "tessera/distribution.h"

/** Records that ctx spans the processes of `comm` on `grid`: 0, or TESSERA_ERR_NOMEM. */
int tsr_context_span(tessera_context_t *ctx, tessera_comm_t *comm, tessera_grid_t grid);

/** Forgets what ctx spans; returns its communicator (NULL for a context of one process), for the
 *  caller to destroy. */
tessera_comm_t *tsr_context_unspan(tessera_context_t *ctx);

#endif
