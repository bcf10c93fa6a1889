/* Public queries on devices, memory nodes, bandwidths and scopes. */
#include <string.h>

#include "runtime/internal.h"

int tessera_device_count(const tessera_context_t *ctx, tessera_device_kind_t kind) {
  if (!ctx || (int)kind < 0 || kind >= TESSERA_DEVICE_KINDS) return 0;
  if (kind == TESSERA_DEVICE_CPU) {
    for (int i = 0; i < ctx->nworkers; i++)
      if (ctx->workers[i].kind == TESSERA_DEVICE_CPU) return 1;
    return 0;
  }
  return ctx->backends[kind].be ? ctx->backends[kind].ndevices : 0;
}

int tessera_device_info(const tessera_context_t *ctx, tessera_device_kind_t kind, int index,
                        tessera_device_info_t *info) {
  if (!ctx) return -1;
  if ((int)kind < 0 || kind >= TESSERA_DEVICE_KINDS || !ctx->backends[kind].be) return -2;
  if (index < 0 || index >= tessera_device_count(ctx, kind)) return -3;
  if (!info) return -4;
  const tsr_backend_slot_t *b = &ctx->backends[kind];
  int rc = b->be->info(b->state, index, info);
  if (rc) return rc;
  info->workers = 0;
  for (int i = 0; i < ctx->nworkers; i++)
    if (ctx->workers[i].kind == kind && ctx->workers[i].device == index) {
      info->workers++;
      info->memory_node = ctx->workers[i].node;
    }
  return 0;
}

int tessera_memory_node_count(const tessera_context_t *ctx) {
  return ctx ? ctx->nnodes : 0;
}

double tessera_bandwidth(const tessera_context_t *ctx, int src, int dst) {
  if (!ctx || src < 0 || dst < 0 || src >= ctx->nnodes || dst >= ctx->nnodes) return 0;
  return ctx->bandwidth[src][dst];
}

int tessera_set_scope(tessera_context_t *ctx, tessera_scope_t scope) {
  if (!ctx) return -1;
  for (int i = 0; i < ctx->nworkers; i++) {
    const tsr_worker_t *w = &ctx->workers[i];
    bool kind_ok = !scope.kinds || (scope.kinds & (1u << w->kind));
    bool gpu_ok =
        w->kind == TESSERA_DEVICE_CPU || !scope.gpu_mask || (scope.gpu_mask >> w->device & 1u);
    if (kind_ok && gpu_ok) {
      ctx->scope = scope;
      return 0;
    }
  }
  return tsr_error(ctx, TESSERA_ERR_NODEVICE,
                   "set_scope: no worker of the context is in the scope");
}

tessera_scope_t tessera_get_scope(const tessera_context_t *ctx) {
  return ctx ? ctx->scope : tessera_scope_all();
}
