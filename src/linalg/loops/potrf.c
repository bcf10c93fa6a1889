/* Tiled Cholesky factorization (right-looking) and the solve that uses its factor, written once
 * for the lower triangle:
 *
 *   step k:  A_kk = L_kk L_kkᴴ;  L_ik = A_ik L_kk⁻ᴴ;  A_ij -= L_ik L_jkᴴ (i >= j > k).
 *
 * An upper triangle runs the same loop on the conjugate-transpose view (A = Uᴴ U, Uᴴ is lower):
 * the inserters turn each task on the view into the task on the stored tiles.
 * Priorities follow the critical path: the next panel first, far trailing updates last.
 *
 * Panel tiles: the first below the diagonal (on the critical path) is solved with L_kk; with
 * the inverse option (tessera_potrf_options_t.trsm_inverse) the others are multiplied by W_k =
 * L_kk⁻¹, inverted once per step into a ring of workspace tiles held by the descriptor (over
 * processes, a workspace of the flow on the diagonal tile's process, which its panel tiles there
 * read in place and the others receive as they would have L_kk). On GPUs a triangular solve of a
 * tile runs at a fraction of the triangular product's speed, and W_k is off the critical path. */
#include "linalg/loops/loops.h"
#include "linalg/loops/policy.h"
#include "linalg/loops/tasks.h"

static int prio(int64_t nt, int64_t i, int64_t j, int64_t k) {
  return (int)(2 * nt - i - j + k);
}

/* Whether panels go through inverted diagonal tiles (tsr_panel_inverse, over processes the same
 * answer on every one); then on one process makes the ring of workspace tiles (the runtime
 * places each where the task writing it runs), over processes none: each step's W_k is a
 * workspace of the flow (step_inverse). Returns the ring size (over processes
 * TSR_MATRIX_WORK), 0 for triangular solves, or a negative status. */
static int inverse_ring(tessera_matrix_t *A, const tessera_potrf_options_t *opts) {
  int choice = tsr_panel_inverse(A->ctx, opts);
  if (A->flow->distributed) {
    int rc = A->flow->ops->allreduce(A->flow, &choice, 1, TESSERA_COMM_I32, TESSERA_MIN);
    return rc ? rc : choice > 0 && A->nt >= 3 ? TSR_MATRIX_WORK : 0;
  }
  if (choice <= 0 || A->nt < 3) return choice;
  const size_t es = tessera_dtype_size(A->dtype), nb = (size_t)A->nb;
  while (A->nwork < TSR_MATRIX_WORK &&
         !tessera_data_create_workspace(A->ctx, nb, nb, es, &A->work[A->nwork]))
    A->nwork++;
  return A->nwork;
}

/* Over processes, W_k of step k: a workspace owned by the process of the diagonal tile, in the
 * slot of `held` a ring's length of steps after the one it replaces, which goes first (its
 * readers, that step's panel tiles, were inserted then; freeing waits for them). */
static int step_inverse(const tessera_matrix_t *L, int64_t k, tsr_work_t *held, int ring,
                        tessera_data_t **w) {
  tsr_work_t *slot = &held[k % ring];
  int rc = slot->h ? tsr_matrix_workspace_free(L, slot, 0) : 0;
  const int owner = tsr_flow_owner(L->flow, tsr_tile(L, k, k));
  const size_t kb = (size_t)tsr_tile_n(L, k);
  if (!rc) rc = tsr_matrix_workspace(L, owner, kb, kb, slot);
  *w = rc ? NULL : slot->h;
  return rc;
}

/* The panel tile (i, k) of step k of the lower factor L, solved with L_kk or multiplied by the
 * ring's W_k (`w`, presented as L's tiles are). */
static int panel(const tessera_matrix_t *L, int64_t i, int64_t k, const tsr_operand_t *w) {
  const tsr_scalar_t one = {1, 0};
  int tag[3] = {(int)i, (int)k, (int)k};
  int (*op)(const tessera_matrix_t *, char, char, char, char, tsr_scalar_t, tsr_operand_t,
            tsr_operand_t, int, int, const int[3], int) = w ? tsr_task_trmm : tsr_task_trsm;
  return op(L, 'R', 'L', 'C', 'N', one, w ? *w : tsr_tile_op(L, k, k), tsr_tile_op(L, i, k),
            tsr_tile_m(L, i), tsr_tile_n(L, k), tag, prio(L->nt, i, k, k));
}

/* W = L_kk⁻¹ (the factored triangle), at the priority of the diagonal step. */
static int invert_diagonal(const tessera_matrix_t *L, int64_t k, tsr_operand_t w) {
  const int kb = tsr_tile_n(L, k), p = prio(L->nt, k, k, k) + 1;
  int tag[3] = {(int)k, (int)k, (int)k};
  int rc = tsr_task_lacpy(L->dtype, L->flow, tsr_tile(L, k, k), w.h, kb, kb, tag, p);
  return rc ? rc : tsr_task_trtri_on(L, w, 'L', 'N', kb, k * L->mb, tag, p);
}

int tsr_pxpotrf(char uplo, tessera_matrix_t *A, const tessera_potrf_options_t *opts) {
  const tsr_scalar_t one = {1, 0}, mone = {-1, 0};
  const int ring = inverse_ring(A, opts);
  if (ring < 0) return ring;
  const tessera_matrix_t L = uplo == 'L' ? *A : tsr_matrix_ct(A);
  const int64_t nt = L.nt;
  const char own = L.op == 'C' ? 'C' : 'N'; /* how L presents a tile of A */
  tsr_work_t held[TSR_MATRIX_WORK] = {{0}}; /* over processes, the last steps' W_k */
  int rc = 0;
  for (int64_t k = 0; k < nt && !rc; k++) {
    rc = tsr_task_potrf(&L, 'L', k, prio(nt, k, k, k) + 1);
    tsr_operand_t w = {NULL, own};
    if (!rc && ring && nt - k > 2) {
      if (A->flow->distributed)
        rc = step_inverse(&L, k, held, ring, &w.h);
      else
        w.h = A->work[k % ring];
    }
    if (!rc && w.h) rc = invert_diagonal(&L, k, w);
    for (int64_t i = k + 1; i < nt && !rc; i++) rc = panel(&L, i, k, i > k + 1 && w.h ? &w : NULL);
    const int kb = tsr_tile_n(&L, k);
    for (int64_t i = k + 1; i < nt && !rc; i++) {
      const int ib = tsr_tile_m(&L, i);
      int tag[3] = {(int)i, (int)i, (int)k};
      rc = tsr_task_syrk(&L, 1, 'L', 'N', ib, kb, mone, tsr_tile_op(&L, i, k), one,
                         tsr_tile_op(&L, i, i), tag, prio(nt, i, i, k));
      for (int64_t j = k + 1; j < i && !rc; j++) {
        int gtag[3] = {(int)i, (int)j, (int)k};
        rc = tsr_task_gemm(&L, tsr_tile_op(&L, i, k), tsr_op_tile(&L, 'C', k, j), ib,
                           tsr_tile_m(&L, j), kb, mone, one, tsr_tile_op(&L, i, j), gtag,
                           prio(nt, i, j, k));
      }
    }
    /* column k is read no more: copies other processes received of it go */
    for (int64_t i = k; i < nt && !rc; i++) rc = tsr_flow_flush(A->flow, tsr_tile(&L, i, k));
  }
  for (int i = 0; i < TSR_MATRIX_WORK; i++)
    if (held[i].h) rc = tsr_matrix_workspace_free(A, &held[i], rc);
  return rc;
}

int tsr_pxpotrs(char uplo, const tessera_matrix_t *A, tessera_matrix_t *B) {
  const tsr_scalar_t one = {1, 0};
  /* A = L Lᴴ (L = Uᴴ for an upper factor): L Y = B, then Lᴴ X = Y. */
  const tessera_matrix_t L = uplo == 'L' ? *A : tsr_matrix_ct(A);
  int rc = tsr_pxtrsm('L', 'L', 'N', 'N', one, &L, B);
  if (!rc) rc = tsr_pxtrsm('L', 'L', 'C', 'N', one, &L, B);
  return rc;
}
