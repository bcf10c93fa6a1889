/* The processes a context spans (see span.h). */
#include <stdlib.h>

#include "distributed/dist.h"
#include "distributed/span.h"
#include "runtime/attach.h"

typedef struct {
  tessera_comm_t *comm;
  tessera_grid_t grid;
  tsr_flow_t *flow; /* the context's flow over comm's processes */
} span_t;

int tsr_context_span(tessera_context_t *ctx, tessera_comm_t *comm, tessera_grid_t grid) {
  span_t *s = malloc(sizeof *s);
  tsr_flow_t *flow = s ? tsr_dist_flow_create(ctx, comm) : NULL;
  if (!flow) {
    free(s);
    return TESSERA_ERR_NOMEM;
  }
  *s = (span_t){comm, grid, flow};
  *tsr_context_slot(ctx) = s;
  tsr_context_set_flow(ctx, flow);
  return 0;
}

tessera_comm_t *tsr_context_unspan(tessera_context_t *ctx) {
  span_t *s = *tsr_context_slot(ctx);
  tessera_comm_t *comm = s ? s->comm : NULL;
  tsr_context_set_flow(ctx, NULL);
  if (s) s->flow->ops->destroy(s->flow);
  free(s);
  *tsr_context_slot(ctx) = NULL;
  return comm;
}

tessera_comm_t *tessera_context_comm(const tessera_context_t *ctx) {
  const span_t *s = ctx ? *tsr_context_slot((tessera_context_t *)ctx) : NULL;
  return s ? s->comm : NULL;
}

tessera_grid_t tessera_context_grid(const tessera_context_t *ctx) {
  const span_t *s = ctx ? *tsr_context_slot((tessera_context_t *)ctx) : NULL;
  return s ? s->grid : (tessera_grid_t){0, 0};
}
