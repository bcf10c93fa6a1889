/* LU with partial pivoting on column panels (right-looking, LAPACK's getrf order), and the
 * solves with its factors:
 *
 *   step k:  P_k A_k = L_k U_k  (getrf of the panel's rows r0 .. m, r0 = k nb: one task);
 *            for every column panel j > k: rows r0.. swapped by P_k, then
 *            U_kj = L_kk⁻¹ A_kj and A_(below)j -= L_(below)k U_kj  (one lu_step task each,
 *            with the L_kk⁻¹ the panel's task made: a product, where a solve runs far below
 *            gemm's rate on GPUs);
 *            for every j < k: rows r0.. swapped by P_k (laswp, off the critical path, after
 *            the step's updates).
 *
 * A matrix factors in place when its tiles span its rows (one tile row: each tile a column panel
 * of nb columns). The panel's pivot search runs down its whole column inside one task, on the
 * device holding the panel, with the library's own blocked or recursive getrf; the panels of
 * the next steps wait only on the update of their own column (priorities follow the critical
 * path, then the steps in order: see prio), so the trailing updates of step k run on every
 * other device while panel k + 1 is factored (look-ahead).
 *
 * The pivots of step k live in a handle of their own (int: the info, then the kb pivots relative
 * to row r0), written by the panel's task and read by that step's swaps wherever they run.
 *
 * Distributed over processes, the panels belong to the processes owning their tiles (a grid of
 * one row deals them over every process; a view of blocks gives them its blocks' owners) and
 * each process runs the tasks writing its
 * panels; panel k and its pivots travel to the processes updating later panels (a whole panel:
 * its rows above r0 are not read, but a tile moves whole) and their copies there go once step
 * k's tasks are inserted. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "linalg/loops/loops.h"
#include "linalg/loops/pivots.h"
#include "linalg/loops/tasks.h"

/* The priority of step k's task on panel j (j = k: the getrf; j < k: the interchanges on an
 * earlier panel). The critical path first: panel k's getrf, then the update of panel k + 1 the
 * next getrf waits for. The other updates then go step by step: an earlier step's first, and
 * in a step the nearer panel first, so no panel's updates lag behind the steps before it:
 * ranked by panel first, the far panels fall steps behind, and their turn then begins with a
 * chain of catch-up updates on the critical path. A step's interchanges on earlier panels come
 * after its updates but in its step, not at the end, where each panel's chain of them would run
 * one after the other (docs/decisions.md). */
int tsr_panel_prio(int64_t nt, int64_t j, int64_t k) {
  const int64_t top = (nt + 1) * (nt + 2), step = (nt - k) * (nt + 2);
  const int64_t p = j == k ? top + 2 : j == k + 1 ? top + 1 : j > k ? step - j : step - nt - 1;
  return p < INT_MAX ? (int)p : INT_MAX;
}

/* The process owning step k's pivots: that of the panel holding column k nb. */
static int step_owner(const tessera_matrix_t *A, const tsr_pivots_t *P, int64_t k) {
  return tessera_matrix_tile_owner(A, 0, k * P->nb / A->nb);
}

static bool owns(const tsr_pivots_t *P, int64_t k) {
  return tsr_flow_mine(P->flow, P->h[k]);
}

int tsr_pivots_create(const tessera_matrix_t *A, int64_t kmin, int64_t nb, bool factor,
                      tsr_pivots_t *P) {
  tessera_context_t *ctx = A->ctx;
  *P = (tsr_pivots_t){.ctx = ctx, .flow = A->flow, .m = A->m, .kmin = kmin, .nb = nb};
  P->steps = nb > 0 ? (kmin + nb - 1) / nb : 0;
  if (P->steps == 0) return 0;
  const size_t steps = (size_t)P->steps, handles = factor ? 2 * steps : steps;
  P->h = calloc(handles, sizeof *P->h); /* the pivots, then the inverses */
  int *owner = calloc(handles, sizeof *owner);
  int rc =
      P->h && owner ? 0 : tsr_error(ctx, TESSERA_ERR_NOMEM, "getrf: out of memory for the pivots");
  if (factor && P->h) P->inv = P->h + steps;
  const size_t es = tessera_dtype_size(A->dtype);
  for (size_t i = 0; i < handles && !rc; i++) {
    const int64_t k = (int64_t)(i % steps), kb = tsr_pivots_count(P, k);
    owner[i] = step_owner(A, P, k);
    if (i >= steps) /* L_kk⁻¹: written by the step's getrf, dropped after the step */
      rc = tessera_data_create_workspace(ctx, (size_t)kb, (size_t)kb, es, &P->h[i]);
    else if (tsr_flow_is_mine(P->flow, owner[i]))
      rc = tessera_data_create(ctx, (size_t)TSR_PIV_INTS(kb), 1, sizeof(int), &P->h[i]);
    else
      rc = tessera_data_create_workspace(ctx, (size_t)TSR_PIV_INTS(kb), 1, sizeof(int), &P->h[i]);
  }
  /* a collective call on a distributed A: made even where the handles could not be */
  const int adopted =
      P->h && owner ? P->flow->ops->adopt(P->flow, handles, P->h, owner, &P->set) : 0;
  free(owner);
  if (!rc) rc = adopted;
  if (rc) tsr_pivots_destroy(P);
  return rc;
}

void tsr_pivots_destroy(tsr_pivots_t *P) {
  const int64_t handles = P->inv ? 2 * P->steps : P->steps;
  for (int64_t i = 0; P->h && i < handles; i++)
    if (P->h[i]) (void)tessera_data_release(P->ctx, P->h[i]);
  free(P->h);
  if (P->flow) P->flow->ops->forget(P->flow, P->set);
  P->h = P->inv = NULL;
  P->set = NULL;
  P->steps = 0;
}

int tsr_pivots_check(tessera_context_t *ctx, const char *f, int argno, const int *ipiv,
                     int64_t kmin, int64_t m) {
  for (int64_t i = 0; i < kmin; i++)
    if (ipiv[i] < i + 1 || ipiv[i] > m)
      return tsr_error(ctx, -argno,
                       "%s: ipiv[%lld] = %d is outside [%lld, %lld]: pivots are those of getrf, "
                       "each row interchanged with itself or a row below it",
                       f, (long long)i, ipiv[i], (long long)(i + 1), (long long)m);
  return 0;
}

int tsr_pivots_import(tsr_pivots_t *P, const int *ipiv) {
  for (int64_t k = 0; k < P->steps; k++) {
    if (!owns(P, k)) continue;
    int *p = tessera_data_ptr(P->h[k]);
    const int64_t r0 = k * P->nb, kb = tsr_pivots_count(P, k);
    p[0] = 0;
    for (int64_t i = 0; i < kb; i++) p[1 + i] = (int)(ipiv[r0 + i] - r0);
    if (tsr_lu_swaps(p, (int)kb, (int)(P->m - r0)))
      return tsr_error(P->ctx, TESSERA_ERR_NOMEM, "out of memory for the row interchanges");
  }
  return 0;
}

int tsr_pivots_export(tsr_pivots_t *P, int *ipiv) {
  int info = 0, rc = 0;
  for (int64_t k = 0; k < P->steps && !rc; k++) {
    const int64_t r0 = k * P->nb, kb = tsr_pivots_count(P, k);
    if (!owns(P, k)) { /* another process's: its owner brings them */
      memset(ipiv + r0, 0, (size_t)kb * sizeof *ipiv);
      continue;
    }
    rc = tessera_data_sync(P->ctx, P->h[k]);
    if (rc < 0) break;
    rc = 0;
    const int *p = tessera_data_ptr(P->h[k]);
    for (int64_t i = 0; i < kb; i++) ipiv[r0 + i] = (int)(p[1 + i] + r0);
    if (p[0] > 0 && !info) info = (int)(p[0] + r0);
  }
  /* every pivot comes from its one owner, the others hold 0 there (one process: all its own) */
  enum { CHUNK = 1 << 24 };
  for (int64_t i = 0; i < P->kmin; i += CHUNK) {
    const size_t count = (size_t)(P->kmin - i < CHUNK ? P->kmin - i : CHUNK);
    const int a = P->flow->ops->allreduce(P->flow, ipiv + i, count, TESSERA_COMM_I32, TESSERA_MAX);
    if (a && !rc) rc = a;
  }
  return tsr_flow_agree(P->flow, rc ? rc : info);
}

int tsr_pxgetrf(tessera_matrix_t *A, tsr_pivots_t *P) {
  const int64_t nt = A->nt;
  int rc = 0;
  for (int64_t k = 0; k < P->steps && !rc; k++) {
    const int r0 = (int)(k * A->nb), kb = (int)tsr_pivots_count(P, k);
    /* L_kk⁻¹ serves the later panels' updates only: the last panel's step makes none */
    tessera_data_t *inv = P->inv && k + 1 < nt ? P->inv[k] : NULL;
    rc = tsr_task_getrf(A, k, P->h[k], inv, tsr_panel_prio(nt, k, k));
    for (int64_t j = k + 1; j < nt && !rc; j++) {
      int tag[3] = {0, (int)j, (int)k};
      rc = tsr_task_lu_step(A, 'L', 'N', tsr_tile(A, 0, k), tsr_tile(A, 0, j), P->h[k], inv,
                            tsr_tile_n(A, j), r0, kb, tag, tsr_panel_prio(nt, j, k));
    }
    for (int64_t j = 0; j < k && !rc; j++) {
      int tag[3] = {0, (int)j, (int)k};
      rc = tsr_task_laswp(A, tsr_tile(A, 0, j), P->h[k], tsr_tile_n(A, j), r0, kb, 1, tag,
                          tsr_panel_prio(nt, j, k));
    }
    /* distributed: the copies of panel k and its pivots other processes received go */
    if (!rc) rc = tsr_flow_flush(A->flow, tsr_tile(A, 0, k));
    if (!rc) rc = tsr_flow_flush(P->flow, P->h[k]);
    /* L_kk⁻¹ goes once the step's updates have read it */
    if (!rc && inv) rc = tsr_flow_flush(P->flow, inv);
    if (!rc && inv && owns(P, k)) rc = tessera_data_discard(A->ctx, inv);
  }
  return rc;
}

int tsr_pxlaswp(tessera_matrix_t *B, const tsr_pivots_t *P, int incx) {
  int rc = 0;
  for (int64_t s = 0; s < P->steps && !rc; s++) {
    const int64_t k = incx > 0 ? s : P->steps - 1 - s;
    for (int64_t c = 0; c < B->nt && !rc; c++) {
      int tag[3] = {0, (int)c, (int)k};
      rc = tsr_task_laswp(B, tsr_tile(B, 0, c), P->h[k], tsr_tile_n(B, c), (int)(k * P->nb),
                          (int)tsr_pivots_count(P, k), incx, tag, 0);
    }
    if (!rc) rc = tsr_flow_flush(P->flow, P->h[k]);
  }
  return rc;
}

/* One substitution (uplo, trans) with A's panels over every column panel of B, in the order the
 * triangle of op(A) needs: forward for a lower op(A), backward for an upper one. */
static int substitute(const tessera_matrix_t *A, const tsr_pivots_t *P, char uplo, char trans,
                      tessera_matrix_t *B) {
  const bool forward = (uplo == 'L') == (trans == 'N');
  int rc = 0;
  for (int64_t s = 0; s < P->steps && !rc; s++) {
    const int64_t k = forward ? s : P->steps - 1 - s;
    for (int64_t c = 0; c < B->nt && !rc; c++) {
      int tag[3] = {0, (int)c, (int)k};
      rc =
          tsr_task_lu_step(B, uplo, trans, tsr_tile(A, 0, k), tsr_tile(B, 0, c), NULL, NULL,
                           tsr_tile_n(B, c), (int)(k * A->nb), (int)tsr_pivots_count(P, k), tag, 0);
    }
    if (!rc) rc = tsr_flow_flush(A->flow, tsr_tile(A, 0, k)); /* received copies go */
  }
  return rc;
}

/* A = P⁻¹ L U: A X = B is X = U⁻¹ L⁻¹ P B; Aᵀ X = B (or Aᴴ) is X = P⁻¹ L⁻ᵀ U⁻ᵀ B. */
int tsr_pxgetrs(char trans, const tessera_matrix_t *A, const tsr_pivots_t *P, tessera_matrix_t *B) {
  int rc = 0;
  if (trans == 'N') {
    rc = tsr_pxlaswp(B, P, 1);
    if (!rc) rc = substitute(A, P, 'L', 'N', B);
    if (!rc) rc = substitute(A, P, 'U', 'N', B);
  } else {
    rc = substitute(A, P, 'U', trans, B);
    if (!rc) rc = substitute(A, P, 'L', trans, B);
    if (!rc) rc = tsr_pxlaswp(B, P, -1);
  }
  return rc;
}
