/* Tiled triangular solve with many right-hand sides, all side / uplo / trans variants.
 *
 * op(A) is lower triangular when (uplo L, no transpose) or (uplo U, transposed): then the
 * solve runs forward for side L and backward for side R; otherwise the other way. The tile of
 * op(A) at (i, k) is A(i, k) untransposed, or A(k, i) with the operation applied. The first
 * step scales by alpha; later steps see B already scaled (PLASMA's lalpha). A may be a
 * conjugate-transpose view (tsr_matrix_ct): its tiles carry the operation into the tasks. */
#include <stdlib.h>

#include "linalg/loops/loops.h"
#include "linalg/loops/tasks.h"

/* The process where an update c -= x op(a) of B runs best, when not c's own: a's, when c
 * (rows x cols) is far smaller than a's tile (kb on the solved side), so that moving the product
 * x op(a) costs far less than moving a. -1: c's owner runs it as any task (always, on one
 * process). */
static int remote_owner(const tessera_matrix_t *B, tsr_operand_t a, tsr_operand_t x,
                        tsr_operand_t c, int rows, int cols, int kb) {
  if (c.op != 'N' || x.op != 'N') return -1;
  const int oa = tsr_flow_owner(B->flow, a.h), oc = tsr_flow_owner(B->flow, c.h);
  if (oa < 0 || oc < 0 || oa == oc) return -1;
  const double small = (double)rows * cols, big = (double)kb * (rows < cols ? cols : rows);
  return 4 * small <= big ? oa : -1;
}

/* The workspaces of a solve's updates run where A's tiles live, freed once the flow is
 * inserted. With alpha one no step scales B, and a tile's updates are subtractions in any order:
 * the products one process makes for a tile then gather in one workspace (acc: its index in w
 * per tile of B and process, -1 for none), subtracted from the tile once, before the step that
 * solves it (flush) — a transfer per process and tile rather than one per update. */
typedef struct {
  tsr_work_t *w;
  size_t count, cap;
  int *acc; /* NULL: every product subtracted at once (alpha not one) */
  int procs;
} spent_t;

/* The index in ws->w of the workspace gathering process p's products for tile (i, j) of B (-1:
 * none yet), or NULL when the products are not gathered. */
static int *gathered(const spent_t *ws, const tessera_matrix_t *B, int64_t i, int64_t j, int p) {
  return ws->acc ? &ws->acc[(i + j * B->mt) * ws->procs + p] : NULL;
}

/* c = lalpha c - x op(a), c tile (i, j) of B, with the product made on `owner` (a's process) into
 * a workspace, then subtracted on c's at once, or gathered with the others for c there. left:
 * the product is op(a) x, else x op(a). */
static int update_remote(const tessera_matrix_t *B, spent_t *ws, int owner, bool left,
                         tsr_operand_t a, tsr_operand_t x, tsr_operand_t c, int64_t i, int64_t j,
                         int m, int n, int kb, tsr_scalar_t lalpha, const int tag[3], int prio) {
  const tsr_scalar_t one = {1, 0}, mone = {-1, 0};
  int *acc = gathered(ws, B, i, j, owner);
  if (acc && *acc >= 0) {
    const tsr_operand_t w = {ws->w[*acc].h, 'N'};
    return left ? tsr_task_gemm(B, a, x, m, n, kb, one, one, w, tag, prio)
                : tsr_task_gemm(B, x, a, m, n, kb, one, one, w, tag, prio);
  }
  if (ws->count == ws->cap) {
    size_t cap = ws->cap ? 2 * ws->cap : 16;
    tsr_work_t *w = realloc(ws->w, cap * sizeof *w);
    if (!w) return tsr_error(B->ctx, TESSERA_ERR_NOMEM, "trsm: out of memory for workspaces");
    ws->w = w, ws->cap = cap;
  }
  tsr_work_t *work = &ws->w[ws->count];
  int rc = tsr_matrix_workspace(B, owner, (size_t)m, (size_t)n, work);
  if (rc) return rc;
  tessera_data_t *w = work->h;
  rc = left ? tsr_task_gemm_new(B, a, x, m, n, kb, one, w, tag, prio)
            : tsr_task_gemm_new(B, x, a, m, n, kb, one, w, tag, prio);
  if (acc && !rc) *acc = (int)ws->count;
  ws->count++;
  return rc || acc ? rc : tsr_task_geadd(B, w, mone, lalpha, c.h, m, n, tag, prio);
}

/* The products gathered for tile (i, j) of B (m x n), subtracted from it. */
static int flush(const tessera_matrix_t *B, spent_t *ws, int64_t i, int64_t j, const int tag[3],
                 int prio) {
  const tsr_scalar_t one = {1, 0}, mone = {-1, 0};
  int rc = 0;
  for (int p = 0; ws->acc && p < ws->procs && !rc; p++) {
    int *acc = gathered(ws, B, i, j, p);
    if (*acc < 0) continue;
    rc = tsr_task_geadd(B, ws->w[*acc].h, mone, one, tsr_tile(B, i, j), tsr_tile_m(B, i),
                        tsr_tile_n(B, j), tag, prio);
    *acc = -1;
  }
  return rc;
}

int tsr_pxtrsm(char side, char uplo, char trans, char diag, tsr_scalar_t alpha,
               const tessera_matrix_t *A, tessera_matrix_t *B) {
  const tsr_scalar_t one = {1, 0}, mone = {-1, 0};
  const bool op_lower = (uplo == 'L') == (trans == 'N');
  const bool left = side == 'L';
  const int64_t nt = left ? B->mt : B->nt; /* steps along the solved dimension */
  const int64_t other = left ? B->nt : B->mt;
  const bool forward = left ? op_lower : !op_lower;
  spent_t ws = {.procs = B->flow->size};
  int rc = 0;
  if (ws.procs > 1 && alpha.re == 1 && alpha.im == 0) {
    const size_t count = (size_t)(B->mt * B->nt) * (size_t)ws.procs;
    ws.acc = malloc(count * sizeof *ws.acc);
    if (!ws.acc) return tsr_error(B->ctx, TESSERA_ERR_NOMEM, "trsm: out of memory for workspaces");
    for (size_t i = 0; i < count; i++) ws.acc[i] = -1;
  }
  for (int64_t s = 0; s < nt && !rc; s++) {
    const int64_t k = forward ? s : nt - 1 - s;
    const tsr_scalar_t lalpha = s == 0 ? alpha : one;
    const int kb = left ? tsr_tile_m(B, k) : tsr_tile_n(B, k);
    for (int64_t r = 0; r < other && !rc; r++) {
      const tsr_operand_t bk = left ? tsr_tile_op(B, k, r) : tsr_tile_op(B, r, k);
      int tag[3] = {(int)(left ? k : r), (int)(left ? r : k), (int)k};
      rc = flush(B, &ws, left ? k : r, left ? r : k, tag, (int)(2 * nt - s));
      if (!rc)
        rc = tsr_task_trsm(B, side, uplo, trans, diag, lalpha, tsr_tile_op(A, k, k), bk,
                           left ? kb : tsr_tile_m(B, r), left ? tsr_tile_n(B, r) : kb, tag,
                           (int)(2 * nt - s));
    }
    /* Update the blocks not yet solved: i after k in the direction of the solve. */
    for (int64_t t = s + 1; t < nt && !rc; t++) {
      const int64_t i = forward ? t : nt - 1 - t;
      for (int64_t r = 0; r < other && !rc; r++) {
        int tag[3] = {(int)(left ? i : r), (int)(left ? r : i), (int)k};
        int prio = (int)(2 * nt - s - (t - s));
        /* left: B_ir = lalpha B_ir - op(A)_ik X_kr; right: B_ri = lalpha B_ri - X_rk op(A)_ki */
        const tsr_operand_t a = left ? tsr_op_tile(A, trans, i, k) : tsr_op_tile(A, trans, k, i);
        const tsr_operand_t x = left ? tsr_tile_op(B, k, r) : tsr_tile_op(B, r, k);
        const tsr_operand_t c = left ? tsr_tile_op(B, i, r) : tsr_tile_op(B, r, i);
        const int m = left ? tsr_tile_m(B, i) : tsr_tile_m(B, r);
        const int n = left ? tsr_tile_n(B, r) : tsr_tile_n(B, i);
        const int owner = remote_owner(B, a, x, c, m, n, kb);
        if (owner >= 0)
          rc = update_remote(B, &ws, owner, left, a, x, c, left ? i : r, left ? r : i, m, n, kb,
                             lalpha, tag, prio);
        else if (left)
          rc = tsr_task_gemm(B, a, x, m, n, kb, mone, lalpha, c, tag, prio);
        else
          rc = tsr_task_gemm(B, x, a, m, n, kb, mone, lalpha, c, tag, prio);
      }
    }
  }
  for (size_t w = 0; w < ws.count; w++) rc = tsr_matrix_workspace_free(B, &ws.w[w], rc);
  free(ws.w), free(ws.acc);
  return rc;
}
