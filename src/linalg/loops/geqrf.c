/* Householder QR on column panels (right-looking, LAPACK's geqrf order):
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
 * gemm-rich: two products with the panel's vectors per step and column panel. */
#include <stdlib.h>
#include <string.h>

#include "linalg/loops/loops.h"
#include "linalg/loops/tasks.h"

/* Columns of step k: min(nb, kmin - k nb). */
static int64_t step_width(const tsr_qr_t *Q, int64_t k) {
  const int64_t left = Q->kmin - k * Q->nb;
  return left < Q->nb ? left : Q->nb;
}

int tsr_qr_create(const tessera_matrix_t *A, tsr_qr_t *Q) {
  tessera_context_t *ctx = A->ctx;
  const int64_t kmin = A->m < A->n ? A->m : A->n;
  *Q = (tsr_qr_t){.ctx = ctx, .kmin = kmin, .nb = A->nb, .panels = A->nt};
  Q->steps = kmin > 0 ? (kmin + A->nb - 1) / A->nb : 0;
  if (Q->steps == 0) return 0;
  Q->T = calloc((size_t)(Q->steps + Q->panels), sizeof *Q->T);
  if (!Q->T) return tsr_error(ctx, TESSERA_ERR_NOMEM, "geqrf: out of memory for the reflectors");
  Q->W = Q->T + Q->steps;
  const size_t es = tessera_dtype_size(A->dtype);
  int rc = 0;
  for (int64_t k = 0; k < Q->steps && !rc; k++) {
    const size_t kb = (size_t)step_width(Q, k);
    rc = tessera_data_create(ctx, kb, kb, es, &Q->T[k]);
  }
  /* panel j's workspace serves the updates of every step before it */
  for (int64_t j = 1; j < Q->panels && !rc; j++)
    rc = tessera_data_create_workspace(ctx, (size_t)A->nb, (size_t)tsr_tile_n(A, j), es,
                                       &Q->W[j]);
  if (rc) tsr_qr_destroy(Q);
  return rc;
}

void tsr_qr_destroy(tsr_qr_t *Q) {
  for (int64_t i = 0; Q->T && i < Q->steps + Q->panels; i++)
    if (Q->T[i]) (void)tessera_data_release(Q->ctx, Q->T[i]);
  free(Q->T);
  Q->T = Q->W = NULL;
  Q->steps = Q->panels = 0;
}

int tsr_pxgeqrf(tessera_matrix_t *A, tsr_qr_t *Q) {
  const int64_t nt = A->nt;
  int rc = 0;
  for (int64_t k = 0; k < Q->steps && !rc; k++) {
    const int r0 = (int)(k * A->nb), kb = (int)step_width(Q, k);
    rc = tsr_task_geqrt(A, k, Q->T[k], tsr_panel_prio(nt, k, k));
    for (int64_t j = k + 1; j < nt && !rc; j++) {
      int tag[3] = {0, (int)j, (int)k};
      rc = tsr_task_qr_step(A, 'C', tsr_tile(A, 0, k), tsr_tile(A, 0, j), Q->T[k], Q->W[j],
                            tsr_tile_n(A, j), r0, kb, tag, tsr_panel_prio(nt, j, k));
    }
  }
  return rc;
}

int tsr_qr_tau(const tsr_qr_t *Q, tessera_dtype_t dtype, void *tau) {
  const size_t es = tessera_dtype_size(dtype);
  for (int64_t k = 0; k < Q->steps; k++) {
    int rc = tessera_data_sync(Q->ctx, Q->T[k]);
    if (rc < 0) return rc;
    const char *t = tessera_data_ptr(Q->T[k]);
    const size_t ld = tessera_data_ld(Q->T[k]);
    const int64_t kb = step_width(Q, k);
    for (int64_t i = 0; i < kb; i++)
      memcpy((char *)tau + (size_t)(k * Q->nb + i) * es, t + ((size_t)i * ld + (size_t)i) * es, es);
  }
  return 0;
}
