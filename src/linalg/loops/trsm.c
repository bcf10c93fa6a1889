/* Tiled triangular solve with many right-hand sides, all side / uplo / trans variants.
 *
 * op(A) is lower triangular when (uplo L, no transpose) or (uplo U, transposed): then the
 * solve runs forward for side L and backward for side R; otherwise the other way. The tile of
 * op(A) at (i, k) is A(i, k) untransposed, or A(k, i) with the operation applied. The first
 * step scales by alpha; later steps see B already scaled (PLASMA's lalpha). A may be a
 * conjugate-transpose view (tsr_matrix_ct): its tiles carry the operation into the tasks. */
#include "linalg/loops/loops.h"
#include "linalg/loops/tasks.h"

int tsr_pxtrsm(char side, char uplo, char trans, char diag, tsr_scalar_t alpha,
               const tessera_matrix_t *A, tessera_matrix_t *B) {
  const tsr_scalar_t one = {1, 0}, mone = {-1, 0};
  const bool op_lower = (uplo == 'L') == (trans == 'N');
  const bool left = side == 'L';
  const int64_t nt = left ? B->mt : B->nt; /* steps along the solved dimension */
  const int64_t other = left ? B->nt : B->mt;
  const bool forward = left ? op_lower : !op_lower;
  int rc = 0;
  for (int64_t s = 0; s < nt && !rc; s++) {
    const int64_t k = forward ? s : nt - 1 - s;
    const tsr_scalar_t lalpha = s == 0 ? alpha : one;
    const int kb = left ? tsr_tile_m(B, k) : tsr_tile_n(B, k);
    for (int64_t r = 0; r < other && !rc; r++) {
      const tsr_operand_t bk = left ? tsr_tile_op(B, k, r) : tsr_tile_op(B, r, k);
      int tag[3] = {(int)(left ? k : r), (int)(left ? r : k), (int)k};
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
        if (left) /* B_ir = lalpha B_ir - op(A)_ik X_kr */
          rc = tsr_task_gemm(B, tsr_op_tile(A, trans, i, k), tsr_tile_op(B, k, r), tsr_tile_m(B, i),
                             tsr_tile_n(B, r), kb, mone, lalpha, tsr_tile_op(B, i, r), tag, prio);
        else /* B_ri = lalpha B_ri - X_rk op(A)_ki */
          rc = tsr_task_gemm(B, tsr_tile_op(B, r, k), tsr_op_tile(A, trans, k, i), tsr_tile_m(B, r),
                             tsr_tile_n(B, i), kb, mone, lalpha, tsr_tile_op(B, r, i), tag, prio);
      }
    }
  }
  return rc;
}
