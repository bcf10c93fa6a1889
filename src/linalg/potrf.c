/* Tiled Cholesky factorization (right-looking) and the solve that uses its factor.
 *
 * Lower, step k:  A_kk = L_kk L_kkᴴ;  L_ik = A_ik L_kk⁻ᴴ;  A_ij -= L_ik L_jkᴴ (i >= j > k).
 * Upper, step k:  A_kk = U_kkᴴ U_kk;  U_ki = U_kk⁻ᴴ A_ki;  A_ji -= U_kjᴴ U_ki (i >= j > k).
 * Priorities follow the critical path: the next panel first, far trailing updates last. */
#include "linalg/linalg.h"

static int prio(int64_t nt, int64_t i, int64_t j, int64_t k) {
  return (int)(2 * nt - i - j + k);
}

int tsr_pxpotrf(char uplo, tessera_matrix_t *A) {
  const tsr_scalar_t one = {1, 0}, mone = {-1, 0};
  const int64_t nt = A->nt;
  const bool lower = uplo == 'L';
  int rc = 0;
  for (int64_t k = 0; k < nt && !rc; k++) {
    rc = tsr_task_potrf(A, uplo, k, prio(nt, k, k, k) + 1);
    tessera_data_t *akk = tsr_tile(A, k, k);
    for (int64_t i = k + 1; i < nt && !rc; i++) {
      int tag[3] = {(int)i, (int)k, (int)k};
      rc = lower ? tsr_task_trsm(A, 'R', 'L', 'C', 'N', one, akk, tsr_tile(A, i, k),
                                 tsr_tile_m(A, i), tsr_tile_n(A, k), tag, prio(nt, i, k, k))
                 : tsr_task_trsm(A, 'L', 'U', 'C', 'N', one, akk, tsr_tile(A, k, i),
                                 tsr_tile_m(A, k), tsr_tile_n(A, i), tag, prio(nt, i, k, k));
    }
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
