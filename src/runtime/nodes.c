/* Backends and memory nodes: the backends of the registry opened, the host (node 0) and one
 * node per device of the other kinds, each device node with a memory pool made once, the
 * bandwidth between every pair, and host memory for tiles (pinned when a backend offers it). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime/base.h"
#include "runtime/context.h"
#include "runtime/pool.h"

/* Bytes of a device's pool: the limit asked for, else its free memory less a reserve for
 * library workspaces and the device runtime's own. */
static size_t pool_bytes(tessera_context_t *ctx, const tsr_backend_t *be, void *st, int dev) {
  size_t free_b = 0, total = 0;
  if (be->mem_info(st, dev, &free_b, &total)) return 0;
  size_t reserve = (size_t)2 << 30;
  if (reserve < total / 16) reserve = total / 16;
  size_t avail = free_b > reserve ? free_b - reserve : 0;
  if (ctx->gpu_mem_limit && ctx->gpu_mem_limit < avail) avail = ctx->gpu_mem_limit;
  return avail;
}

/* Opens the backend of registry entry `e` with at most `max` devices, each a memory node. */
static int open_devices(tessera_context_t *ctx, const tsr_backend_entry_t *e, int max) {
  const tsr_backend_t *be = e->backend();
  if (max == 0) return 0;
  tsr_backend_slot_t *slot = &ctx->backends[be->kind];
  if (slot->be) return tsr_error(ctx, -2, "two backends of one device kind (%s)", be->name);
  int n = 0;
  int rc = be->open(max, &n, &slot->state);
  if (rc) return tsr_error(ctx, rc, "cannot open the %s backend", be->name);
  slot->be = be;
  slot->entry = e;
  slot->ndevices = n;
  for (int d = 0; d < n && ctx->nnodes < TSR_MAX_NODES; d++) {
    tsr_node_t *nd = &ctx->nodes[ctx->nnodes];
    *nd = (tsr_node_t){.be = be, .be_state = slot->state, .device = d};
    pthread_mutex_init(&nd->lru_lock, NULL);
    pthread_mutex_init(&nd->inl.lock, NULL);
    size_t bytes = pool_bytes(ctx, be, slot->state, d);
    nd->slab = bytes ? be->alloc(slot->state, d, bytes) : NULL;
    if (!bytes)
      return tsr_error(ctx, TESSERA_ERR_NOMEM,
                       "%s %d: no free memory for a pool (another process holds the device?)",
                       be->name, d);
    if (!nd->slab || tsr_pool_init(&nd->pool, nd->slab, bytes))
      return tsr_error(ctx, TESSERA_ERR_NOMEM, "%s %d: cannot allocate a pool of %zu bytes",
                       be->name, d, bytes);
    ctx->nnodes++;
  }
  return 0;
}

/* Bandwidths between every pair of nodes, from the backends' measurements. */
static void fill_bandwidth(tessera_context_t *ctx) {
  ctx->bandwidth[0][0] = 10e9; /* host memcpy, nominal */
  for (int a = 0; a < ctx->nnodes; a++)
    for (int b = 0; b < ctx->nnodes; b++) {
      if (a == 0 && b == 0) continue;
      const tsr_node_t *dn = b ? &ctx->nodes[b] : &ctx->nodes[a]; /* device side measures */
      double bw = dn->be->bandwidth
                      ? dn->be->bandwidth(dn->be_state, ctx->nodes[b].device, ctx->nodes[a].device)
                      : 0;
      ctx->bandwidth[a][b] = bw > 0 ? bw : 10e9;
    }
}

int tsr_nodes_open(tessera_context_t *ctx) {
  int nentries = 0;
  const tsr_backend_entry_t *reg = tsr_backend_registry(&nentries);
  const tsr_backend_t *cpu = reg[0].backend(); /* the host's: the registry lists it first */
  tsr_backend_slot_t *host = &ctx->backends[cpu->kind];
  int n = 0;
  int rc = cpu->open(1, &n, &host->state);
  if (rc) return tsr_error(ctx, rc, "cannot open the %s backend", cpu->name);
  host->be = cpu;
  host->entry = &reg[0];
  host->ndevices = n;
  ctx->nodes[0] = (tsr_node_t){.be = cpu, .be_state = host->state, .device = -1};
  pthread_mutex_init(&ctx->nodes[0].lru_lock, NULL);
  pthread_mutex_init(&ctx->nodes[0].inl.lock, NULL);
  ctx->nnodes = 1;
  /* Every other kind brings device nodes, up to cfg.gpus of them in all (-1: every device);
   * a kind of simulated devices, as many as the configuration asks to stand in for GPUs. */
  for (int k = 1; k < nentries && !rc; k++) {
    int left = ctx->cfg.gpus < 0 ? -1 : ctx->cfg.gpus - (ctx->nnodes - 1);
    if (reg[k].backend()->simulated && (left < 0 || left > ctx->sim_devices))
      left = ctx->sim_devices;
    rc = open_devices(ctx, &reg[k], left);
  }
  fill_bandwidth(ctx);
  return rc;
}

/* The backend whose pinned host memory tiles use (the last device kind with devices that
 * offers it), or NULL for plain host memory. */
static const tsr_backend_slot_t *pinning_backend(const tessera_context_t *ctx) {
  for (int k = TESSERA_DEVICE_KINDS - 1; k >= 0; k--) {
    const tsr_backend_slot_t *b = &ctx->backends[k];
    if (b->be && b->ndevices > 0 && b->be->host_alloc) return b;
  }
  return NULL;
}

/* Share of the machine's memory the host cache keeps at most. */
enum { HOST_CACHE_SHARE = 4 };

/* A host block from the backend: pinned where one offers it, else the host's (alloc_lock
 * held). */
static void *host_alloc_new(tessera_context_t *ctx, size_t bytes) {
  const tsr_backend_slot_t *b = pinning_backend(ctx);
  const tsr_node_t *host = &ctx->nodes[TESSERA_HOST_NODE];
  return b ? b->be->host_alloc(b->state, bytes) : host->be->alloc(host->be_state, 0, bytes);
}

static void host_free_now(tessera_context_t *ctx, void *ptr) {
  const tsr_backend_slot_t *b = pinning_backend(ctx);
  const tsr_node_t *host = &ctx->nodes[TESSERA_HOST_NODE];
  if (b)
    b->be->host_free(b->state, ptr);
  else
    host->be->free(host->be_state, 0, ptr);
}

/* Gives every cached block back to its backend (alloc_lock held). */
static void host_cache_flush(tessera_context_t *ctx) {
  tsr_host_cache_t *c = &ctx->host_cache;
  for (int i = 0; i < c->count; i++) host_free_now(ctx, c->blocks[i].ptr);
  c->count = 0;
  c->bytes = 0;
}

void *tsr_host_alloc(tessera_context_t *ctx, size_t bytes) {
  tsr_host_cache_t *c = &ctx->host_cache;
  void *p = NULL;
  pthread_mutex_lock(&ctx->alloc_lock);
  for (int i = c->count - 1; i >= 0 && !p; i--) /* the latest freed first: warm in cache */
    if (c->blocks[i].bytes == bytes) {
      p = c->blocks[i].ptr;
      c->bytes -= bytes;
      c->blocks[i] = c->blocks[--c->count];
    }
  if (!p) p = host_alloc_new(ctx, bytes);
  if (!p && c->count > 0) { /* the cache's blocks back to the system, then once more */
    host_cache_flush(ctx);
    p = host_alloc_new(ctx, bytes);
  }
  pthread_mutex_unlock(&ctx->alloc_lock);
  return p;
}

void tsr_host_free(tessera_context_t *ctx, void *ptr, size_t bytes) {
  if (!ptr) return;
  tsr_host_cache_t *c = &ctx->host_cache;
  pthread_mutex_lock(&ctx->alloc_lock);
  if (!c->limit) {
    const long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
    c->limit = pages > 0 && size > 0 ? (size_t)pages / HOST_CACHE_SHARE * (size_t)size : 1;
  }
  bool kept = false;
  if (c->bytes + bytes <= c->limit) {
    if (c->count == c->cap) {
      const int cap = c->cap ? 2 * c->cap : 64;
      struct tsr_host_block *grown = realloc(c->blocks, (size_t)cap * sizeof *grown);
      if (grown) c->blocks = grown, c->cap = cap;
    }
    if (c->count < c->cap) {
      c->blocks[c->count++] = (struct tsr_host_block){ptr, bytes};
      c->bytes += bytes;
      kept = true;
    }
  }
  if (!kept) host_free_now(ctx, ptr);
  pthread_mutex_unlock(&ctx->alloc_lock);
}

void tsr_nodes_close(tessera_context_t *ctx) {
  for (int i = 0; i < ctx->nnodes; i++) {
    tsr_inline_close(ctx, &ctx->nodes[i]);
    pthread_mutex_destroy(&ctx->nodes[i].inl.lock);
  }
  for (int i = 1; i < ctx->nnodes; i++) {
    tsr_node_t *nd = &ctx->nodes[i];
    if (nd->slab) {
      tsr_pool_destroy(&nd->pool);
      nd->be->free(nd->be_state, nd->device, nd->slab);
    }
    pthread_mutex_destroy(&nd->lru_lock);
  }
  if (ctx->nnodes > 0) { /* the host's node was laid out */
    pthread_mutex_destroy(&ctx->nodes[0].lru_lock);
    host_cache_flush(ctx); /* before the pinning backend */
  }
  free(ctx->host_cache.blocks);
  ctx->host_cache = (tsr_host_cache_t){0};
  for (int k = TESSERA_DEVICE_KINDS - 1; k >= 0; k--)
    if (ctx->backends[k].be) ctx->backends[k].be->close(ctx->backends[k].state);
  memset(ctx->backends, 0, sizeof ctx->backends);
  ctx->nnodes = 0;
}

int tsr_host_pin(tessera_context_t *ctx, void *ptr, size_t bytes) {
  const tsr_backend_slot_t *b = pinning_backend(ctx);
  return b && b->be->host_register && b->be->host_register(b->state, ptr, bytes) == 0;
}

void tsr_host_unpin(tessera_context_t *ctx, void *ptr) {
  const tsr_backend_slot_t *b = pinning_backend(ctx);
  if (b && b->be->host_unregister) b->be->host_unregister(b->state, ptr);
}
