/* What a call's routines share (call.h): the blocks of a matrix over the mesh, the copy on
 * tessera's own layout over processes, and the agreement of the call's processes on one
 * status. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "call.h"

void tsr_jax_blocks(const call_t *c, const part_t *p, int count, int64_t rows, int64_t cols,
                    int64_t brows, int64_t bcols, int use_b, int transposed, int one_column,
                    blocks_t *out) {
  const int64_t bm = rows > 0 ? (rows + brows - 1) / brows : 1;
  const int64_t bn = cols > 0 ? (cols + bcols - 1) / bcols : 1;
  for (int r = 0; r < c->ndev; r++) {
    const int64_t row = r / c->gcols, col = one_column ? 0 : r % c->gcols;
    const int64_t I = transposed ? col : row, J = transposed ? row : col;
    if ((one_column && r % c->gcols) || I >= bm || J >= bn) continue;
    const int64_t k = I + J * bm;
    out->owners[k] = c->comm ? c->rank_of[c->owners[r]] : 0;
    out->a[k] = NULL;
    out->nodes[k] = TESSERA_HOST_NODE;
    for (int i = 0; i < count; i++)
      if (p[i].rank == r) {
        out->a[k] = use_b ? p[i].b : p[i].a;
        out->nodes[k] = p[i].node;
      }
  }
}

/* The same status on every process of the call's communicator: the lowest negative any has,
 * else the lowest positive (LAPACK's info), else 0; TESSERA_ERR_TIMEOUT when they cannot be
 * reached. */
int tsr_jax_agree(const call_t *c, int rc) {
  if (!c->comm) return rc;
  if (tessera_agree(c->comm, &rc)) {
    fprintf(stderr, "tessera.jax: %s\n", tessera_comm_last_error(c->comm));
    return TESSERA_ERR_TIMEOUT;
  }
  return rc;
}

int tsr_jax_fit(const call_t *c, tessera_matrix_t *V, tessera_layout_t layout, char part, bool back,
                tessera_matrix_t **A) {
  *A = V;
  const tessera_fit_t when = back ? TESSERA_FIT_AUTO_BACK : TESSERA_FIT_AUTO;
  return c->comm ? tessera_matrix_fit(V, layout, part, when, A) : 0;
}

int tsr_jax_unfit(tessera_matrix_t *V, tessera_matrix_t *A, bool back, int rc) {
  if (A == V) return rc;
  if (!rc && back) rc = tessera_tile_lacpy(A, V);
  const int d = tessera_matrix_destroy(A);
  return rc ? rc : d;
}

int tsr_jax_tile_of(tsr_jax_state_t *s, int platform, int64_t m, int64_t n,
                    int (*rule)(const tessera_context_t *, int64_t, int64_t)) {
  if (!s) return -1;
  tessera_context_t *ctx;
  const int rc = tsr_jax_context(s, platform, &ctx);
  return rc ? rc : rule(ctx, m, n);
}

bool tsr_jax_queue_solves(const call_t *c, const part_t *p) {
  return p->mixed < 0 && (c->op == OP_POTRS || c->op == OP_CHOLESKY || c->op == OP_LU_SOLVE);
}

int tsr_jax_queue_solve(tessera_context_t *ctx, const call_t *c, const part_t *p, void *a, void *b,
                        int *info, double *logdet) {
  const tessera_dtype_t dt = (tessera_dtype_t)p->dtype;
  const size_t es = tessera_dtype_size(dt);
  int rc = 0;
  if (c->op == OP_LU_SOLVE) { /* a batch's members one after the other */
    for (int64_t i = 0; i < p->batch && !rc; i++)
      rc = tessera_queue_gesv(ctx, p->node, p->queue, TESSERA_TRANS, dt, p->n, p->nrhs,
                              (char *)a + (size_t)i * p->a_step, p->cols,
                              (char *)b + (size_t)i * p->b_step, p->cols, info + i);
    return rc;
  }
  const tessera_uplo_t uplo = p->lower ? TESSERA_UPPER : TESSERA_LOWER;
  const int64_t nrhs = c->op == OP_POTRS ? p->nrhs : 0;
  return tessera_queue_posv_batch(ctx, p->node, p->queue, uplo, TESSERA_RIGHT, dt, p->n, nrhs,
                                  p->batch, a, p->cols, (int64_t)(p->a_step / es), b,
                                  nrhs > 1 ? nrhs : 1, (int64_t)(p->b_step / es), info,
                                  p->logdet ? logdet : NULL);
}

part_t tsr_jax_member(const part_t *p, int64_t i) {
  part_t m = *p;
  m.batch = 1;
  m.a = (char *)p->a + (size_t)i * p->a_step;
  if (p->b) m.b = (char *)p->b + (size_t)i * p->b_step;
  if (p->w) m.w = (char *)p->w + (size_t)i * p->w_step;
  if (p->piv) m.piv = p->piv + i * p->n;
  m.st = p->st + i;
  if (p->ld) m.ld = p->ld + i;
  return m;
}

int tsr_jax_write_members(tessera_context_t *ctx, const part_t *p, int64_t first, int64_t count,
                          const int32_t *status, const double *logdet) {
  int rc = tessera_memory_copy(ctx, p->node, p->st + first, TESSERA_HOST_NODE, status,
                               (size_t)count * sizeof *status);
  if (!rc && p->ld && p->logdet && logdet)
    rc = tessera_memory_copy(ctx, p->node, p->ld + first, TESSERA_HOST_NODE, logdet,
                             (size_t)count * sizeof *logdet);
  return rc;
}
