/* Inverse from the Cholesky factor (potri = trtri, then lauum) and log-determinant.
 *
 * trtri (lower), step k:  A_mk = -A_mk A_kk⁻¹ (m > k);  A_mn += A_mk A_kn (m > k > n);
 *                         A_kn = A_kk⁻¹ A_kn (n < k);  A_kk = A_kk⁻¹.
 * lauum (lower, Lᴴ L), step k:  A_nn += A_knᴴ A_kn;  A_mn += A_kmᴴ A_kn (k > m > n);
 *                         A_kn = A_kkᴴ A_kn (n < k);  A_kk = A_kkᴴ A_kk.
 * Upper runs the transposed loops (PLASMA's pztrtri / pzlauum order). */
#include "linalg/linalg.h"

/* Tile (i, j) of the `uplo` triangle, addressed as if lower: (i, j) for L, (j, i) for U. */
static tessera_data_t *lt(const tessera_matrix_t *A, bool lower, int64_t i, int64_t j) {
  return lower ? tsr_tile(A, i, j) : tsr_tile(A, j, i);
}

int tsr_pxtrtri(char uplo, char diag, tessera_matrix_t *A) {
  const tsr_scalar_t one = {1, 0}, mone = {-1, 0};
  const bool lower = uplo == 'L';
  const int64_t nt = A->nt;
  int rc = 0;
  for (int64_t k = 0; k < nt && !rc; k++) {
    tessera_data_t *akk = tsr_tile(A, k, k);
    const int kb = tsr_tile_m(A, k);
    for (int64_t m = k + 1; m < nt && !rc; m++) {
      int tag[3] = {(int)m, (int)k, (int)k};
      rc = lower ? tsr_task_trsm(A, 'R', 'L', 'N', diag, mone, akk, lt(A, 1, m, k),
                                 tsr_tile_m(A, m), kb, tag, (int)(nt - k))
                 : tsr_task_trsm(A, 'L', 'U', 'N', diag, mone, akk, lt(A, 0, m, k), kb,
                                 tsr_tile_m(A, m), tag, (int)(nt - k));
    }
    for (int64_t m = k + 1; m < nt && !rc; m++)
      for (int64_t n = 0; n < k && !rc; n++) {
        int tag[3] = {(int)m, (int)n, (int)k};
        int mb = tsr_tile_m(A, m), nb = tsr_tile_m(A, n);
        rc = lower ? tsr_task_gemm(A, (tsr_operand_t){lt(A, 1, m, k), 'N'},
                                   (tsr_operand_t){lt(A, 1, k, n), 'N'}, mb, nb, kb, one, one,
                                   lt(A, 1, m, n), tag, 0)
                   : tsr_task_gemm(A, (tsr_operand_t){lt(A, 0, k, n), 'N'},
                                   (tsr_operand_t){lt(A, 0, m, k), 'N'}, nb, mb, kb, one, one,
                                   lt(A, 0, m, n), tag, 0);
      }
    for (int64_t n = 0; n < k && !rc; n++) {
      int tag[3] = {(int)k, (int)n, (int)k};
      rc = lower ? tsr_task_trsm(A, 'L', 'L', 'N', diag, one, akk, lt(A, 1, k, n), kb,
                                 tsr_tile_m(A, n), tag, 0)
                 : tsr_task_trsm(A, 'R', 'U', 'N', diag, one, akk, lt(A, 0, k, n), tsr_tile_m(A, n),
                                 kb, tag, 0);
    }
    if (!rc) rc = tsr_task_trtri(A, uplo, diag, k, (int)(nt - k) + 1);
  }
  return rc;
}

int tsr_pxlauum(char uplo, tessera_matrix_t *A) {
  const tsr_scalar_t one = {1, 0};
  const bool lower = uplo == 'L';
  const int64_t nt = A->nt;
  int rc = 0;
  for (int64_t k = 0; k < nt && !rc; k++) {
    const int kb = tsr_tile_m(A, k);
    for (int64_t n = 0; n < k && !rc; n++) {
      const int nb = tsr_tile_m(A, n);
      int tag[3] = {(int)n, (int)n, (int)k};
      rc = tsr_task_syrk(A, 1, uplo, lower ? 'C' : 'N', nb, kb, one, lt(A, lower, k, n), one,
                         tsr_tile(A, n, n), tag, 0);
      for (int64_t m = n + 1; m < k && !rc; m++) {
        int gtag[3] = {(int)m, (int)n, (int)k};
        const int mb = tsr_tile_m(A, m);
        rc = lower ? tsr_task_gemm(A, (tsr_operand_t){lt(A, 1, k, m), 'C'},
                                   (tsr_operand_t){lt(A, 1, k, n), 'N'}, mb, nb, kb, one, one,
                                   lt(A, 1, m, n), gtag, 0)
                   : tsr_task_gemm(A, (tsr_operand_t){lt(A, 0, k, n), 'N'},
                                   (tsr_operand_t){lt(A, 0, k, m), 'C'}, nb, mb, kb, one, one,
                                   lt(A, 0, m, n), gtag, 0);
      }
    }
    for (int64_t n = 0; n < k && !rc; n++) {
      int tag[3] = {(int)k, (int)n, (int)k};
      rc = lower ? tsr_task_trmm(A, 'L', 'L', 'C', 'N', one, tsr_tile(A, k, k), lt(A, 1, k, n), kb,
                                 tsr_tile_m(A, n), tag, 0)
                 : tsr_task_trmm(A, 'R', 'U', 'C', 'N', one, tsr_tile(A, k, k), lt(A, 0, k, n),
                                 tsr_tile_m(A, n), kb, tag, 0);
    }
    if (!rc) rc = tsr_task_lauum(A, uplo, k, 1);
  }
  return rc;
}

int tsr_pxlogdiag(const tessera_matrix_t *A, double *logs) {
  int rc = 0;
  for (int64_t k = 0; k < A->nt && !rc; k++) {
    tsr_logdiag_args_t a = {.dtype = A->dtype, .n = tsr_tile_m(A, k), .out = &logs[k]};
    tessera_task_t t = {.kernel = &tsr_kernel_logdiag,
                        .args = &a,
                        .args_size = sizeof a,
                        .ndata = 1,
                        .data = {tsr_tile(A, k, k)},
                        .mode = {TESSERA_R},
                        .tag = {(int)k, (int)k, 0},
                        .ntag = 2};
    rc = tessera_task_insert(A->ctx, &t);
  }
  return rc;
}
