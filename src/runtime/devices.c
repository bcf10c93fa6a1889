/* Public queries on devices, memory nodes, bandwidths and scopes. */
#include <string.h>

#include "runtime/base.h"
#include "runtime/context.h"
#include "runtime/runs_on.h"
#include "runtime/worker.h"

int tessera_device_count(const tessera_context_t *ctx, tessera_device_kind_t kind) {
  if (!ctx || (int)kind < 0 || kind >= TESSERA_DEVICE_KINDS) return 0;
  if (kind == ctx->nodes[TESSERA_HOST_NODE].be->kind) { /* the host's: one if a worker runs on it */
    for (int i = 0; i < ctx->nworkers; i++)
      if (ctx->workers[i].node == TESSERA_HOST_NODE) return 1;
    return 0;
  }
  return ctx->backends[kind].be ? ctx->backends[kind].ndevices : 0;
}

int tessera_accelerator_count(const tessera_context_t *ctx) {
  return ctx ? ctx->nnodes - 1 : 0;
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

int tessera_scope_nodes(const tessera_context_t *ctx, tessera_scope_t scope, int *nodes, int max) {
  if (!ctx) return 0;
  int n = 0;
  for (int i = 1; i < ctx->nnodes; i++) {
    const tsr_node_t *nd = &ctx->nodes[i];
    if (!tsr_scope_admits(scope, nd->be->kind, nd->device)) continue;
    if (n < max && nodes) nodes[n] = i;
    n++;
  }
  return n;
}

size_t tessera_memory_node_capacity(const tessera_context_t *ctx, int node) {
  if (!ctx || node < 0 || node >= ctx->nnodes) return 0;
  if (node == TESSERA_HOST_NODE) {
    const tsr_node_t *host = &ctx->nodes[TESSERA_HOST_NODE];
    tessera_device_info_t info;
    host->be->info(host->be_state, 0, &info);
    return info.memory_bytes;
  }
  return ctx->nodes[node].pool.size;
}

int tessera_current_device(const tessera_context_t *ctx, tessera_device_kind_t *kind) {
  if (!ctx) return -1;
  const tsr_worker_t *w = tsr_worker_of_thread(ctx->workers, ctx->nworkers);
  if (!w) return -1;
  if (kind) *kind = w->kind;
  return w->device;
}

size_t tessera_memory_node_available(const tessera_context_t *ctx, int node) {
  if (!ctx || node < 0 || node >= ctx->nnodes) return 0;
  if (node == TESSERA_HOST_NODE) return tessera_memory_node_capacity(ctx, node);
  tsr_pool_t *p = (tsr_pool_t *)&ctx->nodes[node].pool;
  pthread_mutex_lock(&p->lock);
  size_t used = p->used;
  pthread_mutex_unlock(&p->lock);
  return p->size > used ? p->size - used : 0;
}

/* tessera_run_on_device: a task whose kernel calls the user's function, on one accelerator
 * only (its scope). */
typedef struct {
  int (*fn)(void *);
  void *arg;
  int *result;
} run_args_t;

static int run_on_device(const tessera_exec_t *ex, void *args) {
  (void)ex;
  run_args_t *a = args;
  *a->result = a->fn(a->arg);
  return 0;
}

void tsr_run_kernel_init(tessera_kernel_t *k) {
  *k = (tessera_kernel_t){.name = "run_on_device"};
  for (int kind = 0; kind < TESSERA_DEVICE_KINDS; kind++) k->impl[kind] = run_on_device;
}

int tessera_run_on_device(tessera_context_t *ctx, int dev, int (*fn)(void *arg), void *arg) {
  if (!ctx) return -1;
  if (dev < 0 || dev >= tessera_accelerator_count(ctx))
    return tsr_error(ctx, -2, "run_on_device: there is no accelerator %d (the context has %d)", dev,
                     tessera_accelerator_count(ctx));
  if (!fn) return tsr_error(ctx, -3, "run_on_device: NULL function");
  int result = 0;
  char token;
  tessera_data_t *h;
  int rc = tessera_data_register(ctx, TESSERA_HOST_NODE, &token, 1, 1, 1, 1, &h);
  if (rc) return rc;
  run_args_t a = {fn, arg, &result};
  tessera_task_t t = {
      .kernel = &ctx->run_kernel,
      .args = &a,
      .args_size = sizeof a,
      .ndata = 1,
      .data = {h},
      .mode = {TESSERA_R},
      .scope = {1u << ctx->nodes[1 + dev].be->kind, 1ull << ctx->nodes[1 + dev].device}};
  rc = tessera_task_insert(ctx, &t);
  int s = tessera_data_release(ctx, h);
  return rc ? rc : s ? s : result;
}

int tessera_queue_sync(tessera_context_t *ctx, int node, void *queue) {
  if (!ctx) return -1;
  if (node < 0 || node >= ctx->nnodes)
    return tsr_error(ctx, -2, "queue_sync: memory node %d does not exist", node);
  if (node == TESSERA_HOST_NODE) return 0;
  if (!queue) return tsr_error(ctx, -3, "queue_sync: NULL queue for memory node %d", node);
  const tsr_node_t *nd = &ctx->nodes[node];
  int rc = nd->be->queue_sync(nd->be_state, queue);
  return rc ? tsr_error(ctx, rc, "queue_sync: the wait on a queue of memory node %d failed", node)
            : 0;
}

/* tessera_memory_copy's and tessera_queue_copy's copies (count blocks of `bytes`, ldd and lds
 * apart), `f` naming the call in messages, the arguments numbered as tessera_queue_copy's. */
static int copy(tessera_context_t *ctx, const char *f, int dst_node, void *dst, size_t ldd,
                int src_node, const void *src, size_t lds, size_t bytes, size_t count,
                void *queue) {
  if (!ctx) return -1;
  if (dst_node < 0 || dst_node >= ctx->nnodes)
    return tsr_error(ctx, -2, "%s: memory node %d does not exist", f, dst_node);
  if (!dst && bytes) return tsr_error(ctx, -3, "%s: NULL destination", f);
  if (count > 1 && ldd < bytes)
    return tsr_error(ctx, -4, "%s: the destination's stride %zu is below %zu bytes", f, ldd, bytes);
  if (src_node < 0 || src_node >= ctx->nnodes)
    return tsr_error(ctx, -5, "%s: memory node %d does not exist", f, src_node);
  if (!src && bytes) return tsr_error(ctx, -6, "%s: NULL source", f);
  if (count > 1 && lds < bytes)
    return tsr_error(ctx, -7, "%s: the source's stride %zu is below %zu bytes", f, lds, bytes);
  if (!bytes || !count) return 0;
  if (count == 1) ldd = lds = bytes;
  /* The backend of the device involved copies (the host's when both are host memory). */
  const tsr_node_t *nd = &ctx->nodes[dst_node != TESSERA_HOST_NODE ? dst_node : src_node];
  int rc = nd->be->copy2d(nd->be_state, ctx->nodes[dst_node].device, dst, ldd,
                          ctx->nodes[src_node].device, src, lds, bytes, count, 1, queue);
  return rc ? tsr_error(ctx, rc, "%s: %zu x %zu bytes from node %d to node %d failed", f, count,
                        bytes, src_node, dst_node)
            : 0;
}

int tessera_memory_copy(tessera_context_t *ctx, int dst_node, void *dst, int src_node,
                        const void *src, size_t bytes) {
  const int rc = copy(ctx, "memory_copy", dst_node, dst, 0, src_node, src, 0, bytes, 1, NULL);
  return rc == -5 || rc == -6 ? rc + 1 : rc; /* its arguments 4 and 5 */
}

int tessera_queue_copy(tessera_context_t *ctx, int dst_node, void *dst, size_t ldd, int src_node,
                       const void *src, size_t lds, size_t bytes, size_t count, void *queue) {
  static const char f[] = "queue_copy";
  if (!ctx) return -1;
  const bool dst_dev = dst_node > TESSERA_HOST_NODE && dst_node < ctx->nnodes &&
                       ctx->nodes[dst_node].be->async,
             src_dev = src_node > TESSERA_HOST_NODE && src_node < ctx->nnodes &&
                       ctx->nodes[src_node].be->async;
  if ((dst_dev || src_dev) != (queue != NULL))
    return tsr_error(ctx, -10,
                     queue ? "%s: nodes %d and %d are host memory, which takes no queue: pass NULL"
                           : "%s: nodes %d and %d include a device's, whose copy needs one of "
                             "its queues, not NULL",
                     f, src_node, dst_node);
  return copy(ctx, f, dst_node, dst, ldd, src_node, src, lds, bytes, count, queue);
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
    if (tsr_scope_admits(scope, w->kind, tsr_worker_accel(w))) {
      ctx->scope = scope;
      return 0;
    }
  }
  return tsr_error(ctx, TESSERA_ERR_NODEVICE,
                   "set_scope: no worker of the context is in the scope");
}

double tsr_scope_rate(const tessera_context_t *ctx, int *workers, int *host_workers) {
  double rate = 0;
  int all = 0, host = 0;
  for (int i = 0; i < ctx->nworkers; i++) {
    const tsr_worker_t *w = &ctx->workers[i];
    if (!tsr_scope_admits(ctx->scope, w->kind, tsr_worker_accel(w))) continue;
    rate += w->gflops * 1e9;
    all++;
    host += w->node == TESSERA_HOST_NODE;
  }
  *workers = all, *host_workers = host;
  return rate;
}

tessera_scope_t tessera_get_scope(const tessera_context_t *ctx) {
  return ctx ? ctx->scope : tessera_scope_all();
}
