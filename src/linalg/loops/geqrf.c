/* Householder QR on column panels (right-looking, LAPACK's geqrf order), and the applications
 * of its Q:
 *
 *   step k:  A_k = Q_k R_k  (geqrt of panel k's rows r0 .. m, r0 = k nb: one task, its block
 *            reflector Q_k = I - V_k T_k V_kᴴ with T_k in a handle of its own);
 *            for every column panel j > k: A_j = Q_kᴴ A_j  (one qr_step task each, through the
 *            panel's own workspace).
 *
 * As LU (getrf.c), the panel's factorization runs down its whole column inside one task, with
 * the library's recursive geqrt, and the next panel waits only on the update of its own column
 * (the same priorities: panel, next update, then the others step by step), so the trailing
 * updates of step k run on every other device while panel k + 1 is factored. The updates are
 * gemm-rich: two products with the panel's vectors per step and column panel.
 *
 * Q C and Qᴴ C (unmqr) are the same qr_step tasks on another matrix's panels, the steps in
 * reverse for Q; reflectors given as LAPACK leaves them (vectors and tau) get their T from a
 * larft task per step first. */
#include <stdlib.h>
#include <string.h>

#include "linalg/loops/loops.h"
#include "linalg/loops/tasks.h"

/* Columns of step k: min(nb, kmin - k nb). */
static int64_t step_width(const tsr_qr_t *Q, int64_t k) {
  const int64_t left = Q->kmin - k * Q->nb;
  return left < Q->nb ? left : Q->nb;
}

/* Releases handles[0 .. n) (NULL ones skipped) and the array. */
static void release_all(tessera_context_t *ctx, tessera_data_t **h, int64_t n) {
  for (int64_t i = 0; h && i < n; i++)
    if (h[i]) (void)tessera_data_release(ctx, h[i]);
  free(h);
}

/* Makes handles h[0 .. count) tiles of V's flow, handle k owned by the process of V's column
 * panel holding column k nb: a collective call on a distributed V, made even where the handles
 * could not be. Returns `rc`, else the flow's status. */
static int adopt(const tessera_matrix_t *V, int64_t nb, size_t count, tessera_data_t **h,
                 void **set, int rc) {
  int *owner = calloc(count ? count : 1, sizeof *owner);
  for (size_t k = 0; k < count && owner; k++)
    owner[k] = tessera_matrix_tile_owner(V, 0, (int64_t)k * nb / V->nb);
  const int a = owner ? V->flow->ops->adopt(V->flow, count, h, owner, set)
                      : tsr_error(V->ctx, TESSERA_ERR_NOMEM, "QR: out of memory");
  free(owner);
  return rc ? rc : a;
}

int tsr_qr_create(const tessera_matrix_t *V, int64_t kmin, int64_t nb, tsr_qr_t *Q) {
  tessera_context_t *ctx = V->ctx;
  *Q = (tsr_qr_t){.ctx = ctx, .flow = V->flow, .kmin = kmin, .nb = nb};
  Q->steps = kmin > 0 ? (kmin + nb - 1) / nb : 0;
  if (Q->steps == 0) return 0;
  Q->T = calloc((size_t)Q->steps, sizeof *Q->T);
  if (!Q->T) return tsr_error(ctx, TESSERA_ERR_NOMEM, "QR: out of memory for the reflectors");
  const size_t es = tessera_dtype_size(V->dtype);
  int rc = 0;
  for (int64_t k = 0; k < Q->steps && !rc; k++) {
    const size_t kb = (size_t)step_width(Q, k);
    rc = tessera_data_create_workspace(ctx, kb, kb, es, &Q->T[k]);
  }
  rc = adopt(V, nb, (size_t)Q->steps, Q->T, &Q->set, rc);
  if (rc) tsr_qr_destroy(Q);
  return rc;
}

void tsr_qr_destroy(tsr_qr_t *Q) {
  release_all(Q->ctx, Q->T, Q->steps);
  if (Q->flow) Q->flow->ops->forget(Q->flow, Q->set);
  Q->T = NULL;
  Q->set = NULL;
  Q->steps = 0;
}

int tsr_qr_work_create(const tessera_matrix_t *C, int64_t nb, tsr_qr_work_t *w) {
  *w = (tsr_qr_work_t){.ctx = C->ctx, .flow = C->flow, .count = C->nt};
  w->W = calloc((size_t)C->nt, sizeof *w->W);
  if (!w->W) return tsr_error(C->ctx, TESSERA_ERR_NOMEM, "QR: out of memory for the workspaces");
  const size_t es = tessera_dtype_size(C->dtype);
  int rc = 0;
  for (int64_t j = 0; j < C->nt && !rc; j++)
    rc = tessera_data_create_workspace(C->ctx, (size_t)nb, (size_t)tsr_tile_n(C, j), es, &w->W[j]);
  rc = adopt(C, C->nb, (size_t)C->nt, w->W, &w->set, rc); /* W[j] on C's panel j's process */
  if (rc) tsr_qr_work_destroy(w);
  return rc;
}

void tsr_qr_work_destroy(tsr_qr_work_t *w) {
  release_all(w->ctx, w->W, w->count);
  if (w->flow) w->flow->ops->forget(w->flow, w->set);
  w->W = NULL;
  w->set = NULL;
  w->count = 0;
}

/* Distributed: the copies other processes received of step k's panel and T go once the step's
 * tasks are inserted. */
static int flush_step(const tessera_matrix_t *A, const tsr_qr_t *Q, int64_t k) {
  const int rc = tsr_flow_flush(A->flow, tsr_tile(A, 0, k));
  return rc ? rc : tsr_flow_flush(Q->flow, Q->T[k]);
}

/* The rows of A that step k's reflectors span: all, or those above Q->band's zeros. */
static int64_t step_rows(const tessera_matrix_t *A, const tsr_qr_t *Q, int64_t k) {
  const int64_t end = Q->band + (k + 1) * Q->nb;
  return Q->band > 0 && end < A->m ? end : A->m;
}

/* The update of C's column panel j by step k's reflector (the vectors in A's panel k). */
static int update(char trans, const tessera_matrix_t *A, const tsr_qr_t *Q, int64_t k,
                  tessera_matrix_t *C, int64_t j, tsr_qr_work_t *w, int prio) {
  int tag[3] = {0, (int)j, (int)k};
  return tsr_task_qr_step(C, trans, tsr_tile(A, 0, k), tsr_tile(C, 0, j), Q->T[k], w->W[j],
                          (int)step_rows(A, Q, k), tsr_tile_n(C, j), (int)(k * Q->nb),
                          (int)step_width(Q, k), (int)w->row, tag, prio);
}

int tsr_pxgeqrf(tessera_matrix_t *A, tsr_qr_t *Q, tsr_qr_work_t *w) {
  const int64_t nt = A->nt;
  int rc = 0;
  for (int64_t k = 0; k < Q->steps && !rc; k++) {
    rc = tsr_task_geqrt(A, k, step_rows(A, Q, k), Q->T[k], tsr_panel_prio(nt, k, k));
    for (int64_t j = k + 1; j < nt && !rc; j++)
      rc = update('C', A, Q, k, A, j, w, tsr_panel_prio(nt, j, k));
    if (!rc) rc = flush_step(A, Q, k);
  }
  return rc;
}

int tsr_pxlarft(const tessera_matrix_t *A, const void *tau, tsr_qr_t *Q) {
  const size_t es = tessera_dtype_size(A->dtype);
  tessera_data_t **t = calloc((size_t)Q->steps + 1, sizeof *t);
  if (!t) return tsr_error(A->ctx, TESSERA_ERR_NOMEM, "QR: out of memory for tau's handles");
  int rc = 0;
  for (int64_t k = 0; k < Q->steps && !rc; k++) {
    const int64_t kb = step_width(Q, k);
    rc = tessera_data_register(A->ctx, TESSERA_HOST_NODE,
                               (char *)(uintptr_t)tau + (size_t)(k * Q->nb) * es, (size_t)kb, 1,
                               (size_t)kb, es, &t[k]);
    if (!rc) rc = tsr_task_larft(A, k, t[k], Q->T[k], (int)kb, tsr_panel_prio(A->nt, k, k));
  }
  release_all(A->ctx, t, Q->steps); /* each release waits for its own task only */
  return rc;
}

int tsr_pxunmqr(char trans, const tessera_matrix_t *A, const tsr_qr_t *Q, tessera_matrix_t *C,
                tsr_qr_work_t *w) {
  int rc = 0;
  for (int64_t s = 0; s < Q->steps && !rc; s++) {
    const int64_t k = trans == 'N' ? Q->steps - 1 - s : s; /* Q = H_1 ... H_k: Q C from H_k */
    for (int64_t j = 0; j < C->nt && !rc; j++)
      if (!(w->identity && trans == 'N' && (j + 1) * C->nb <= k * Q->nb))
        rc = update(trans, A, Q, k, C, j, w, 0);
    if (!rc) rc = flush_step(A, Q, k);
  }
  return rc;
}

/* The block reflector of steps k and k + 1 (Q_k Q_{k+1} = I - V T Vᴴ, 2 nb vectors from row
 * k nb) made into pair buffer b of P: its two panels side by side in P->v[b] (step k + 1's from
 * its own first row: the rows above lie above the unit diagonal of the pair's vectors, which
 * larft and qr_step never read, as they never read R above a geqrt's), their tau from the two
 * T's diagonals, T by larft. */
static int make_pair(const tessera_matrix_t *A, const tsr_qr_t *Q, int64_t k, tsr_qr_pairs_t *P,
                     int b) {
  const int nb = (int)Q->nb, r0 = (int)(k * Q->nb), m = (int)A->m;
  const int kb1 = (int)step_width(Q, k + 1), tag[3] = {b, (int)k, 0};
  tsr_flow_t *f = A->flow;
  int rc = tsr_task_lacpy_at(A->dtype, f, tsr_tile(A, 0, k), r0, 0, P->v[b], r0, 0, TESSERA_RW,
                             m - r0, nb, tag, 0);
  if (!rc)
    rc = tsr_task_lacpy_at(A->dtype, f, tsr_tile(A, 0, k + 1), r0 + nb, 0, P->v[b], r0 + nb, nb,
                           TESSERA_RW, m - r0 - nb, kb1, tag, 0);
  if (!rc) rc = tsr_task_diagonal(A->dtype, f, Q->T[k], 0, P->tau[b][0], nb, tag, 0);
  if (!rc) rc = tsr_task_diagonal(A->dtype, f, Q->T[k + 1], 0, P->tau[b][1], kb1, tag, 0);
  if (!rc)
    rc = tsr_task_lacpy_block(A->dtype, f, P->tau[b][0], 0, 0, P->tau[b][2], 0, TESSERA_W, nb, 1,
                              tag, 0);
  if (!rc)
    rc = tsr_task_lacpy_block(A->dtype, f, P->tau[b][1], 0, 0, P->tau[b][2], nb, TESSERA_RW, kb1, 1,
                              tag, 0);
  if (!rc)
    rc = tsr_task_larft_on(A->dtype, f, P->v[b], m, r0, P->tau[b][2], P->t[b], nb + kb1, tag, 0);
  return rc;
}

int tsr_qr_pairs_create(const tessera_matrix_t *A, const tsr_qr_t *Q, tsr_qr_pairs_t *P) {
  *P = (tsr_qr_pairs_t){.ctx = A->ctx};
  const size_t es = tessera_dtype_size(A->dtype), nb = (size_t)Q->nb, m = (size_t)A->m;
  int rc = 0;
  for (int b = 0; b < 2 && !rc; b++) {
    const int tag[3] = {b, 0, 0};
    rc = tessera_data_create_workspace(A->ctx, m, 2 * nb, es, &P->v[b]);
    if (!rc)
      rc = tsr_task_identity(A->dtype, A->flow, P->v[b], 0, TESSERA_W, (int)m, (int)(2 * nb),
                             (int)(2 * nb), tag, 0);
    if (!rc) rc = tessera_data_create_workspace(A->ctx, 2 * nb, 2 * nb, es, &P->t[b]);
    const size_t len[3] = {nb, nb, 2 * nb};
    for (int i = 0; i < 3 && !rc; i++)
      rc = tessera_data_create_workspace(A->ctx, len[i], 1, es, &P->tau[b][i]);
  }
  if (rc) tsr_qr_pairs_destroy(P);
  return rc;
}

void tsr_qr_pairs_destroy(tsr_qr_pairs_t *P) {
  for (int b = 0; b < 2; b++) {
    tessera_data_t *h[5] = {P->v[b], P->t[b], P->tau[b][0], P->tau[b][1], P->tau[b][2]};
    for (int i = 0; i < 5; i++)
      if (h[i]) (void)tessera_data_release(P->ctx, h[i]);
  }
  *P = (tsr_qr_pairs_t){0};
}

int tsr_pxunmqr_pairs(char trans, const tessera_matrix_t *A, const tsr_qr_t *Q, tessera_matrix_t *C,
                      tsr_qr_work_t *w, tsr_qr_pairs_t *P) {
  const int64_t pairs = (Q->steps + 1) / 2;
  int rc = 0;
  for (int64_t s = 0; s < pairs && !rc; s++) {
    const int64_t p = trans == 'N' ? pairs - 1 - s : s, k = 2 * p; /* Q C from the last pair */
    if (k + 1 == Q->steps) { /* an odd step count's last step alone */
      for (int64_t j = 0; j < C->nt && !rc; j++)
        if (!(w->identity && trans == 'N' && (j + 1) * C->nb <= k * Q->nb))
          rc = update(trans, A, Q, k, C, j, w, 0);
      continue;
    }
    const int b = (int)(p % 2), kb = (int)(Q->nb + step_width(Q, k + 1));
    rc = make_pair(A, Q, k, P, b);
    for (int64_t j = 0; j < C->nt && !rc; j++) {
      if (w->identity && trans == 'N' && (j + 1) * C->nb <= k * Q->nb) continue;
      const int tag[3] = {0, (int)j, (int)k};
      rc = tsr_task_qr_step(C, trans, P->v[b], tsr_tile(C, 0, j), P->t[b], w->W[j],
                            (int)step_rows(A, Q, k + 1), tsr_tile_n(C, j), (int)(k * Q->nb), kb,
                            (int)w->row, tag, 0);
    }
  }
  return rc;
}

int tsr_pxqr_solve(const tessera_matrix_t *A, int64_t n, char trans, tessera_matrix_t *B) {
  const int64_t steps = (n + A->nb - 1) / A->nb;
  int rc = 0;
  for (int64_t s = 0; s < steps && !rc; s++) {
    const int64_t k = trans == 'N' ? steps - 1 - s : s, r0 = k * A->nb;
    const int64_t kb = n - r0 < A->nb ? n - r0 : A->nb;
    for (int64_t c = 0; c < B->nt && !rc; c++) {
      int tag[3] = {0, (int)c, (int)k};
      rc = tsr_task_lu_step(B, 'U', trans, tsr_tile(A, 0, k), tsr_tile(B, 0, c), NULL, NULL,
                            tsr_tile_n(B, c), (int)r0, (int)kb, tag, 0);
    }
    if (!rc) rc = tsr_flow_flush(A->flow, tsr_tile(A, 0, k));
  }
  return rc;
}

/* Diagonal elements of R among the first n in column panel j. */
static int64_t diagonal_width(const tessera_matrix_t *A, int64_t n, int64_t j) {
  const int64_t left = n - j * A->nb;
  return left < tsr_tile_n(A, j) ? left : tsr_tile_n(A, j);
}

int tsr_qr_zero_diagonal(const tessera_matrix_t *A, int64_t n) {
  /* each panel's share of R's diagonal is copied into a host handle by a task (the panel may live
   * on a device), then read */
  const size_t es = tessera_dtype_size(A->dtype);
  const int64_t count = n > 0 ? (n + A->nb - 1) / A->nb : 0;
  tessera_data_t **d = calloc((size_t)(count > 0 ? count : 1), sizeof *d);
  int info = 0, rc = d ? 0 : tsr_error(A->ctx, TESSERA_ERR_NOMEM, "QR: out of memory");
  for (int64_t j = 0; j < count && !rc; j++) {
    if (!tsr_tile_mine(A, 0, j)) continue;
    const int64_t kb = diagonal_width(A, n, j);
    const int tag[3] = {0, (int)j, (int)j};
    rc = tessera_data_create(A->ctx, (size_t)kb, 1, es, &d[j]);
    if (!rc)
      rc = tsr_task_diagonal(A->dtype, A->flow, tsr_tile(A, 0, j), (int)(j * A->nb), d[j], (int)kb,
                             tag, 0);
  }
  for (int64_t j = 0; j < count && !rc && !info; j++) {
    if (!d[j]) continue;
    rc = tessera_data_sync(A->ctx, d[j]);
    if (rc < 0) break;
    rc = 0;
    const char *p = tessera_data_ptr(d[j]);
    for (int64_t c = 0; c < diagonal_width(A, n, j) && !info; c++) {
      const tsr_scalar_t v = tsr_scalar_load(A->dtype, p + (size_t)c * es, 0);
      if (v.re == 0 && v.im == 0) info = (int)(j * A->nb + c + 1);
    }
  }
  release_all(A->ctx, d, count);
  const int status = rc < 0 ? rc : info;
  return tsr_matrix_agree(A, status);
}

int tsr_qr_tau(const tsr_qr_t *Q, tessera_dtype_t dtype, void *tau) {
  /* T stays where it was formed: a task copies each owned step's diagonal into its slice of tau */
  const size_t es = tessera_dtype_size(dtype);
  memset(tau, 0, (size_t)Q->kmin * es); /* over processes each entry comes from its owner */
  tessera_data_t **d = calloc((size_t)Q->steps + 1, sizeof *d);
  int rc = d ? 0 : tsr_error(Q->ctx, TESSERA_ERR_NOMEM, "QR: out of memory for tau's handles");
  for (int64_t k = 0; k < Q->steps && !rc; k++) {
    if (!tsr_flow_mine(Q->flow, Q->T[k])) continue;
    const int64_t kb = step_width(Q, k);
    const int tag[3] = {0, (int)k, (int)k};
    rc = tessera_data_register(Q->ctx, TESSERA_HOST_NODE, (char *)tau + (size_t)(k * Q->nb) * es,
                               (size_t)kb, 1, (size_t)kb, es, &d[k]);
    if (!rc) rc = tsr_task_diagonal(dtype, Q->flow, Q->T[k], 0, d[k], (int)kb, tag, 0);
  }
  release_all(Q->ctx, d, Q->steps); /* each release waits for its own task and copies it home */
  if (!rc) rc = tessera_wait_all(Q->ctx);
  rc = tsr_flow_agree(Q->flow, rc); /* every process takes part in the sum, or none */
  if (rc || Q->kmin == 0) return rc;
  /* summed in the real type: a complex entry is two */
  const bool single = dtype == TESSERA_F32 || dtype == TESSERA_C64;
  const size_t count = (size_t)Q->kmin * (es / (single ? sizeof(float) : sizeof(double)));
  return Q->flow->ops->allreduce(Q->flow, tau, count, single ? TESSERA_COMM_F32 : TESSERA_COMM_F64,
                                 TESSERA_SUM);
}

int tsr_pxidentity_rows(tessera_matrix_t *C, int64_t from, bool ones) {
  for (int64_t j = 0; j < C->nt && from < C->m; j++) {
    const int tag[3] = {0, (int)j, 0}, cols = tsr_tile_n(C, j);
    /* the diagonal where global row == global column; for zeros d = cols, on no element */
    const int d = ones ? (int)(from - j * C->nb) : cols;
    const int rc =
        tsr_task_identity(C->dtype, C->flow, tsr_tile(C, 0, j), (int)from,
                          from ? TESSERA_RW : TESSERA_W, (int)(C->m - from), cols, d, tag, 0);
    if (rc) return rc;
  }
  return 0;
}
