/* Tiled Cholesky factorization (right-looking) and the solve that uses its factor.
 *
 * Lower, step k:  A_kk = L_kk L_kkᴴ;  L_ik = A_ik L_kk⁻ᴴ;  A_ij -= L_ik L_jkᴴ (i >= j > k).
 * Upper, step k:  A_kk = U_kkᴴ U_kk;  U_ki = U_kk⁻ᴴ A_ki;  A_ji -= U_kjᴴ U_ki (i >= j > k).
 * Priorities follow the critical path: the next panel first, far trailing updates last.
 *
 * Panel tiles: the first below the diagonal (on the critical path) is solved with L_kk; with
 * the inverse option the others are multiplied by W_k = L_kk⁻¹, inverted once per step into a
 * ring of workspace tiles held by the descriptor. On GPUs a triangular solve of a tile runs at
 * a fraction of the triangular product's speed, and W_k is off the critical path. */
#include "linalg/linalg.h"

static int prio(int64_t nt, int64_t i, int64_t j, int64_t k) {
  return (int)(2 * nt - i - j + k);
}

/* Whether panels go through inverted diagonal tiles: the configured choice, else when the
 * scope holds device nodes; then makes the workspace ring (homed on those nodes in turn).
 * Returns the ring size, 0 for triangular solves. */
static int inverse_ring(tessera_matrix_t *A) {
  int nodes[16];
  int ndev = tessera_scope_nodes(A->ctx, tessera_get_scope(A->ctx), nodes, 16);
  int choice = tessera_config(A->ctx)->trsm_inverse;
  if (choice == 0 || (choice < 0 && ndev <= 0) || A->nt < 3) return 0;
  const size_t es = tessera_dtype_size(A->dtype), nb = (size_t)A->nb;
  while (A->nwork < TSR_MATRIX_WORK) {
    tessera_data_t **w = &A->work[A->nwork];
    int rc = ndev > 0 ? tessera_data_create_on(A->ctx, nodes[A->nwork % (ndev > 16 ? 16 : ndev)],
                                               nb, nb, es, w)
                      : tessera_data_create(A->ctx, nb, nb, es, w);
    if (rc) break;
    A->nwork++;
  }
  return A->nwork;
}

/* The panel tile (i, k) of step k, solved with A_kk or multiplied by the ring's W_k. */
static int panel(tessera_matrix_t *A, bool lower, int64_t i, int64_t k, tessera_data_t *w) {
  const tsr_scalar_t one = {1, 0};
  const int64_t nt = A->nt;
  int tag[3] = {(int)i, (int)k, (int)k};
  tessera_data_t *tri = w ? w : tsr_tile(A, k, k);
  int (*op)(const tessera_matrix_t *, char, char, char, char, tsr_scalar_t, tessera_data_t *,
            tessera_data_t *, int, int, const int[3], int) = w ? tsr_task_trmm : tsr_task_trsm;
  return lower ? op(A, 'R', 'L', 'C', 'N', one, tri, tsr_tile(A, i, k), tsr_tile_m(A, i),
                    tsr_tile_n(A, k), tag, prio(nt, i, k, k))
               : op(A, 'L', 'U', 'C', 'N', one, tri, tsr_tile(A, k, i), tsr_tile_m(A, k),
                    tsr_tile_n(A, i), tag, prio(nt, i, k, k));
}

/* W = A_kk⁻¹ (the factored triangle), at the priority of the diagonal step. */
static int invert_diagonal(tessera_matrix_t *A, char uplo, int64_t k, tessera_data_t *w) {
  const int kb = tsr_tile_n(A, k), p = prio(A->nt, k, k, k) + 1;
  int tag[3] = {(int)k, (int)k, (int)k};
  int rc = tsr_task_lacpy(A->dtype, A->ctx, tsr_tile(A, k, k), w, kb, kb, tag, p);
  return rc ? rc : tsr_task_trtri_on(A, w, uplo, 'N', kb, k * A->mb, tag, p);
}

int tsr_pxpotrf(char uplo, tessera_matrix_t *A) {
  const tsr_scalar_t one = {1, 0}, mone = {-1, 0};
  const int64_t nt = A->nt;
  const bool lower = uplo == 'L';
  int rc = 0;
  const int ring = inverse_ring(A);
  for (int64_t k = 0; k < nt && !rc; k++) {
    rc = tsr_task_potrf(A, uplo, k, prio(nt, k, k, k) + 1);
    tessera_data_t *w = ring && nt - k > 2 ? A->work[k % ring] : NULL;
    if (!rc && w) rc = invert_diagonal(A, uplo, k, w);
    for (int64_t i = k + 1; i < nt && !rc; i++) rc = panel(A, lower, i, k, i > k + 1 ? w : NULL);
    const int kb = tsr_tile_n(A, k);
    for (int64_t i = k + 1; i < nt && !rc; i++) {
      const int ib = tsr_tile_m(A, i);
      tessera_data_t *pi = lower ? tsr_tile(A, i, k) : tsr_tile(A, k, i);
      int tag[3] = {(int)i, (int)i, (int)k};
      rc = tsr_task_syrk(A, 1, uplo, lower ? 'N' : 'C', ib, kb, mone, pi, one, tsr_tile(A, i, i),
                         tag, prio(nt, i, i, k));
      for (int64_t j = k + 1; j < i && !rc; j++) {
        const int jb = tsr_tile_m(A, j);
        int gtag[3] = {(int)i, (int)j, (int)k};
        if (lower)
          rc = tsr_task_gemm(A, (tsr_operand_t){pi, 'N'}, (tsr_operand_t){tsr_tile(A, j, k), 'C'},
                             ib, jb, kb, mone, one, tsr_tile(A, i, j), gtag, prio(nt, i, j, k));
        else
          rc = tsr_task_gemm(A, (tsr_operand_t){tsr_tile(A, k, j), 'C'}, (tsr_operand_t){pi, 'N'},
                             jb, ib, kb, mone, one, tsr_tile(A, j, i), gtag, prio(nt, i, j, k));
      }
    }
  }
  return rc;
}

int tsr_pxpotrs(char uplo, const tessera_matrix_t *A, tessera_matrix_t *B) {
  const tsr_scalar_t one = {1, 0};
  /* A = L Lᴴ: L Y = B, then Lᴴ X = Y.  A = Uᴴ U: Uᴴ Y = B, then U X = Y. */
  int rc = tsr_pxtrsm('L', uplo, uplo == 'L' ? 'N' : 'C', 'N', one, A, B);
  if (!rc) rc = tsr_pxtrsm('L', uplo, uplo == 'L' ? 'C' : 'N', 'N', one, A, B);
  return rc;
}
