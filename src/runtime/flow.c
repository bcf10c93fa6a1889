/* The local flow of a context, and what every flow shares (see flow.h). */
#include <math.h>

#include "runtime/flow.h"
#include "runtime/context.h"

static int local_insert(tsr_flow_t *f, const tessera_task_t *t) {
  return tessera_task_insert(f->ctx, t);
}
static int local_flush(tsr_flow_t *f, tessera_data_t *h) {
  (void)f, (void)h;
  return 0;
}
static int local_agree(tsr_flow_t *f, int status) {
  (void)f;
  return status;
}
static int local_same(tsr_flow_t *f, const char *call, int k, const int64_t *values, const int *pos,
                      const char *const *names, int rc) {
  (void)f, (void)call, (void)k, (void)values, (void)pos, (void)names;
  return rc;
}
static int local_adopt(tsr_flow_t *f, size_t count, tessera_data_t *const *h, const int *owner,
                       void **set) {
  (void)f, (void)count, (void)h, (void)owner;
  *set = NULL;
  return 0;
}
static void local_forget(tsr_flow_t *f, void *set) {
  (void)f, (void)set;
}
static int local_owner(const tsr_flow_t *f, const tessera_data_t *h) {
  (void)f, (void)h;
  return -1;
}
/* One process: every reduction and broadcast is its own values. */
static int local_allreduce(tsr_flow_t *f, void *buf, size_t count, tessera_comm_type_t type,
                           tessera_reduce_t op) {
  (void)f, (void)buf, (void)count, (void)type, (void)op;
  return 0;
}
static int local_broadcast(tsr_flow_t *f, void *buf, size_t bytes, int root) {
  (void)f, (void)buf, (void)bytes, (void)root;
  return 0;
}
static double local_link(const tsr_flow_t *f) {
  (void)f;
  return INFINITY;
}
static void local_destroy(tsr_flow_t *f) {
  (void)f;
}

static const tsr_flow_ops_t local_ops = {
    .insert = local_insert,
    .flush = local_flush,
    .agree = local_agree,
    .same = local_same,
    .adopt = local_adopt,
    .forget = local_forget,
    .owner = local_owner,
    .allreduce = local_allreduce,
    .broadcast = local_broadcast,
    .link = local_link,
    .destroy = local_destroy,
};

void tsr_flow_local_init(tessera_context_t *ctx, tsr_flow_t *f) {
  *f = (tsr_flow_t){.ops = &local_ops, .ctx = ctx, .rank = 0, .size = 1, .distributed = false};
}

tsr_flow_t *tsr_context_local_flow(tessera_context_t *ctx) {
  return &ctx->local_flow;
}

tsr_flow_t *tsr_context_flow(const tessera_context_t *ctx) {
  return ctx->flow;
}

void tsr_context_set_flow(tessera_context_t *ctx, tsr_flow_t *f) {
  ctx->flow = f ? f : &ctx->local_flow;
}

int tsr_flow_workspace(tsr_flow_t *f, int owner, size_t rows, size_t cols, size_t es,
                       tessera_data_t **w, void **set) {
  *w = NULL;
  *set = NULL;
  /* adopted even when this process could not make it: every process takes part */
  const int made = tessera_data_create_workspace(f->ctx, rows, cols, es, w);
  const int adopted = f->ops->adopt(f, 1, w, &owner, set);
  const int rc = made ? made : adopted;
  if (rc) {
    if (*w) (void)tessera_data_release(f->ctx, *w);
    f->ops->forget(f, *set);
    *w = NULL, *set = NULL;
  }
  return rc;
}

int tsr_flow_workspace_free(tsr_flow_t *f, tessera_data_t *w, void *set, int rc) {
  if (!w) return rc;
  const int fl = f->ops->flush(f, w);
  const int r = tessera_data_release(f->ctx, w);
  f->ops->forget(f, set);
  return rc ? rc : fl ? fl : r;
}
