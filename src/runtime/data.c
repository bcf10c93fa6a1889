/* Data handles: registration, replicas on memory nodes, synchronisation with the caller. */
#include <stdlib.h>
#include <string.h>

#include "runtime/base.h"
#include "runtime/context.h"
#include "runtime/replica.h"
#include "runtime/task.h"

static int data_new(tessera_context_t *ctx, int node, size_t rows, size_t cols, size_t elsize,
                    tessera_data_t **out) {
  tessera_data_t *h = calloc(1, sizeof *h);
  if (!h) return tsr_error(ctx, TESSERA_ERR_NOMEM, "out of memory for a data handle");
  h->ctx = ctx;
  h->rows = rows;
  h->cols = cols;
  h->elsize = elsize;
  h->home = node;
  pthread_mutex_init(&h->lock, NULL);
  atomic_init(&h->pending, 0);
  *out = h;
  return 0;
}

int tessera_data_register(tessera_context_t *ctx, int node, void *ptr, size_t rows, size_t cols,
                          size_t ld, size_t elsize, tessera_data_t **out) {
  if (!ctx) return -1;
  if (node < 0 || node >= ctx->nnodes)
    return tsr_error(ctx, -2, "data_register: memory node %d does not exist (%d nodes)", node,
                     ctx->nnodes);
  if (!ptr && rows > 0 && cols > 0)
    return tsr_error(ctx, -3, "data_register: NULL pointer for a %zu x %zu block", rows, cols);
  if (cols > 1 && ld < rows)
    return tsr_error(ctx, -6, "data_register: ld %zu < rows %zu", ld, rows);
  if (elsize == 0) return tsr_error(ctx, -7, "data_register: element size 0");
  if (!out) return tsr_error(ctx, -8, "data_register: NULL output");
  tessera_data_t *h = NULL;
  int rc = data_new(ctx, node, rows, cols, elsize, &h);
  if (rc) return rc;
  h->rep[node].ptr = ptr;
  h->rep[node].ld = ld < rows ? rows : ld;
  h->rep[node].state = TSR_OWNED;
  *out = h;
  return 0;
}

/* A handle homed on `node` with its home replica allocated there (arguments checked). */
static int create_home(tessera_context_t *ctx, int node, size_t rows, size_t cols, size_t elsize,
                       tessera_data_t **out) {
  tessera_data_t *h = NULL;
  int rc = data_new(ctx, node, rows, cols, elsize, &h);
  if (!rc) rc = tsr_replica_alloc(ctx, h, node);
  if (rc) {
    if (h) {
      pthread_mutex_destroy(&h->lock);
      free(h);
    }
    return tsr_error(ctx, rc, "cannot allocate %zu bytes on memory node %d", rows * cols * elsize,
                     node);
  }
  h->rep[node].state = TSR_OWNED;
  *out = h;
  return 0;
}

int tessera_data_create_on(tessera_context_t *ctx, int node, size_t rows, size_t cols,
                           size_t elsize, tessera_data_t **out) {
  if (!ctx) return -1;
  if (node < 0 || node >= ctx->nnodes)
    return tsr_error(ctx, -2, "data_create_on: memory node %d does not exist", node);
  if (elsize == 0) return tsr_error(ctx, -5, "data_create_on: element size 0");
  if (!out) return tsr_error(ctx, -6, "data_create_on: NULL output");
  return create_home(ctx, node, rows, cols, elsize, out);
}

int tessera_data_create(tessera_context_t *ctx, size_t rows, size_t cols, size_t elsize,
                        tessera_data_t **out) {
  if (!ctx) return -1;
  if (elsize == 0) return tsr_error(ctx, -4, "data_create: element size 0");
  if (!out) return tsr_error(ctx, -5, "data_create: NULL output");
  return create_home(ctx, TESSERA_HOST_NODE, rows, cols, elsize, out);
}

/* A workspace is a handle homed on the host whose home replica is not allocated until an
 * eviction or a sync needs it: its first writer's acquire allocates the replica where it runs
 * (no valid replica anywhere, replica.c's prepare). */
int tessera_data_create_workspace(tessera_context_t *ctx, size_t rows, size_t cols, size_t elsize,
                                  tessera_data_t **out) {
  if (!ctx) return -1;
  if (elsize == 0) return tsr_error(ctx, -4, "data_create_workspace: element size 0");
  if (!out) return tsr_error(ctx, -5, "data_create_workspace: NULL output");
  int rc = data_new(ctx, TESSERA_HOST_NODE, rows, cols, elsize, out);
  if (!rc) (*out)->workspace = true;
  return rc;
}

/* What a discard task names: it runs nowhere (TSR_KERNEL_DISCARD), so it has no implementation
 * on any kind, and insertion asks for none. */
static const tessera_kernel_t discard_kernel = {.name = "discard", .flags = TSR_KERNEL_DISCARD};

int tessera_data_discard(tessera_context_t *ctx, tessera_data_t *h) {
  if (!ctx) return -1;
  if (!h || h->ctx != ctx || !h->workspace)
    return tsr_error(ctx, -2, "data_discard: %s",
                     !h              ? "NULL handle"
                     : h->ctx != ctx ? "handle of another context"
                                     : "not a workspace handle (its home holds the "
                                       "caller's data)");
  tessera_task_t t = {.kernel = &discard_kernel,
                      .ndata = 1,
                      .data = {h},
                      .mode = {TESSERA_W},
                      .scope = tessera_scope_all()};
  return tessera_task_insert(ctx, &t);
}

/* Whether `h` is a workspace whose home replica was never needed. */
static bool home_unallocated(const tessera_data_t *h) {
  return !h->rep[h->home].ptr && tsr_data_bytes(h) > 0;
}

static void drop_task_refs(tessera_data_t *h);

int tessera_data_sync(tessera_context_t *ctx, tessera_data_t *h) {
  if (!ctx) return -1;
  if (!h) return tsr_error(ctx, -2, "data_sync: NULL handle");
  tsr_wait_zero(ctx, &h->pending);
  void *p;
  size_t ld;
  int rc = tsr_data_acquire(h, h->home, TESSERA_R, &p, &ld);
  if (rc) return rc;
  return atomic_load(&ctx->flow_status);
}

/* Frees h once its tasks have finished, its latest contents first brought home where `home`. */
static int release(tessera_context_t *ctx, tessera_data_t *h, bool home, const char *f) {
  if (!h) return 0;
  if (!ctx) return -1;
  if (h->ctx != ctx) return tsr_error(ctx, -2, "%s: handle of another context", f);
  tsr_wait_zero(ctx, &h->pending);
  void *p;
  size_t ld;
  int rc = !home || home_unallocated(h) ? 0 : tsr_data_acquire(h, h->home, TESSERA_R, &p, &ld);
  drop_task_refs(h);
  for (int n = 0; n < TSR_MAX_NODES; n++) tsr_replica_free(ctx, h, n);
  pthread_mutex_destroy(&h->lock);
  free(h->readers);
  free(h);
  return rc;
}

int tessera_data_release(tessera_context_t *ctx, tessera_data_t *h) {
  return release(ctx, h, true, "data_release");
}

int tsr_data_drop(tessera_context_t *ctx, tessera_data_t *h) {
  return release(ctx, h, false, "data_drop");
}

void *tessera_data_ptr(const tessera_data_t *h) {
  return h ? h->rep[h->home].ptr : NULL;
}
size_t tessera_data_ld(const tessera_data_t *h) {
  return h ? h->rep[h->home].ld : 0;
}

/* Forgets the tasks the handle's dependency tracking links to. */
static void drop_task_refs(tessera_data_t *h) {
  h->last_writer = (tsr_task_link_t){0};
  h->nreaders = 0;
}
