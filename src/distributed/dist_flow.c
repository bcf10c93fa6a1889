/* The distributed flow (tsr_flow_ops_t of runtime/flow.h over a communicator): the table the
 * tile loops insert and flush through when their matrix is distributed. Insertion is
 * owner-computes with the transfers the reads need (flow.c), statuses and reductions are
 * agreed over the communicator (agree.c). */
#include <stdlib.h>

#include "distributed/dist.h"
#include "runtime/error.h"

typedef struct {
  tsr_flow_t base;
  tessera_comm_t *comm;
} dist_flow_t;

static tessera_comm_t *comm_of(const tsr_flow_t *f) {
  return ((const dist_flow_t *)f)->comm;
}

/* A failure of the communicator as a status with its message on the flow's context. */
static int failed(tsr_flow_t *f, int rc) {
  return rc ? tsr_error(f->ctx, rc, "%s", tessera_comm_last_error(comm_of(f))) : 0;
}

static int dist_insert(tsr_flow_t *f, const tessera_task_t *t) {
  return tsr_dist_insert(f->ctx, t);
}
static int dist_flush(tsr_flow_t *f, tessera_data_t *h) {
  return tsr_dist_flush(f->ctx, h);
}
static int dist_agree(tsr_flow_t *f, int status) {
  return tsr_dist_agree(comm_of(f), status);
}

static int dist_same(tsr_flow_t *f, const char *call, int k, const int64_t *values, const int *pos,
                     const char *const *names, int rc) {
  return tsr_dist_same_on(f->ctx, comm_of(f), call, k, values, pos, names, rc);
}

static int dist_adopt(tsr_flow_t *f, size_t count, tessera_data_t *const *h, const int *owner,
                      void **set) {
  *set = NULL;
  tsr_dist_tile_t *rec = NULL;
  const int rc = tsr_dist_tiles(comm_of(f), f->ctx, count, &rec);
  if (rc) return failed(f, rc);
  for (size_t i = 0; i < count; i++) {
    rec[i].owner = owner[i];
    if (h[i]) tsr_dist_attach(h[i], &rec[i]);
  }
  *set = rec;
  return 0;
}
static void dist_forget(tsr_flow_t *f, void *set) {
  (void)f;
  tsr_dist_tiles_free(set);
}

static int dist_owner(const tsr_flow_t *f, const tessera_data_t *h) {
  (void)f;
  const tsr_dist_tile_t *r = h ? tsr_dist_of(h) : NULL;
  return r ? r->owner : -1;
}

static int dist_allreduce(tsr_flow_t *f, void *buf, size_t count, tessera_comm_type_t type,
                          tessera_reduce_t op) {
  if (count == 0) return 0;
  return failed(f, tsr_dist_allreduce(comm_of(f), buf, count, type, op));
}

static int dist_broadcast(tsr_flow_t *f, void *buf, size_t bytes, int root) {
  return failed(f, tsr_dist_broadcast(comm_of(f), buf, bytes, root));
}

static double dist_link(const tsr_flow_t *f) {
  return tsr_dist_link(comm_of((tsr_flow_t *)f));
}

static void dist_destroy(tsr_flow_t *f) {
  free(f);
}

static const tsr_flow_ops_t dist_ops = {
    .insert = dist_insert,
    .flush = dist_flush,
    .agree = dist_agree,
    .same = dist_same,
    .adopt = dist_adopt,
    .forget = dist_forget,
    .owner = dist_owner,
    .allreduce = dist_allreduce,
    .broadcast = dist_broadcast,
    .link = dist_link,
    .destroy = dist_destroy,
};

tsr_flow_t *tsr_dist_flow_create(tessera_context_t *ctx, tessera_comm_t *comm) {
  dist_flow_t *f = malloc(sizeof *f);
  if (!f) return NULL;
  f->base = (tsr_flow_t){.ops = &dist_ops,
                         .ctx = ctx,
                         .rank = tessera_comm_rank(comm),
                         .size = tessera_comm_size(comm),
                         .distributed = true};
  f->comm = comm;
  return &f->base;
}
