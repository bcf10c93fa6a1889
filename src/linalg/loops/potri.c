/* Inverse from the Cholesky factor (potri = trtri, then lauum) and log-determinant.
 *
 * trtri (lower), step k:  A_mk = -A_mk A_kk⁻¹ (m > k);  A_mn += A_mk A_kn (m > k > n);
 *                         A_kn = A_kk⁻¹ A_kn (n < k);  A_kk = A_kk⁻¹.
 * lauum (lower, Lᴴ L), step k:  A_nn += A_knᴴ A_kn;  A_mn += A_kmᴴ A_kn (k > m > n);
 *                         A_kn = A_kkᴴ A_kn (n < k);  A_kk = A_kkᴴ A_kk.
 * Upper runs the same loops on the conjugate-transpose view (the factor U is Uᴴ's lower
 * triangle; PLASMA's pztrtri / pzlauum order). */
#include "linalg/loops/loops.h"
#include "linalg/loops/tasks.h"

int tsr_pxtrtri(char uplo, char diag, tessera_matrix_t *A) {
  const tsr_scalar_t one = {1, 0}, mone = {-1, 0};
  const tessera_matrix_t L = uplo == 'L' ? *A : tsr_matrix_ct(A);
  const int64_t nt = L.nt;
  int rc = 0;
  for (int64_t k = 0; k < nt && !rc; k++) {
    const tsr_operand_t akk = tsr_tile_op(&L, k, k);
    const int kb = tsr_tile_m(&L, k);
    for (int64_t m = k + 1; m < nt && !rc; m++) {
      int tag[3] = {(int)m, (int)k, (int)k};
      rc = tsr_task_trsm(&L, 'R', 'L', 'N', diag, mone, akk, tsr_tile_op(&L, m, k),
                         tsr_tile_m(&L, m), kb, tag, (int)(nt - k));
    }
    for (int64_t m = k + 1; m < nt && !rc; m++)
      for (int64_t n = 0; n < k && !rc; n++) {
        int tag[3] = {(int)m, (int)n, (int)k};
        rc = tsr_task_gemm(&L, tsr_tile_op(&L, m, k), tsr_tile_op(&L, k, n), tsr_tile_m(&L, m),
                           tsr_tile_m(&L, n), kb, one, one, tsr_tile_op(&L, m, n), tag, 0);
      }
    for (int64_t n = 0; n < k && !rc; n++) {
      int tag[3] = {(int)k, (int)n, (int)k};
      rc = tsr_task_trsm(&L, 'L', 'L', 'N', diag, one, akk, tsr_tile_op(&L, k, n), kb,
                         tsr_tile_m(&L, n), tag, 0);
    }
    if (!rc) rc = tsr_task_trtri(&L, 'L', diag, k, (int)(nt - k) + 1);
  }
  return rc;
}

int tsr_pxlauum(char uplo, tessera_matrix_t *A) {
  const tsr_scalar_t one = {1, 0};
  const tessera_matrix_t L = uplo == 'L' ? *A : tsr_matrix_ct(A);
  const int64_t nt = L.nt;
  int rc = 0;
  for (int64_t k = 0; k < nt && !rc; k++) {
    const int kb = tsr_tile_m(&L, k);
    for (int64_t n = 0; n < k && !rc; n++) {
      const int nb = tsr_tile_m(&L, n);
      int tag[3] = {(int)n, (int)n, (int)k};
      rc = tsr_task_syrk(&L, 1, 'L', 'C', nb, kb, one, tsr_tile_op(&L, k, n), one,
                         tsr_tile_op(&L, n, n), tag, 0);
      for (int64_t m = n + 1; m < k && !rc; m++) {
        int gtag[3] = {(int)m, (int)n, (int)k};
        rc = tsr_task_gemm(&L, tsr_op_tile(&L, 'C', m, k), tsr_tile_op(&L, k, n), tsr_tile_m(&L, m),
                           nb, kb, one, one, tsr_tile_op(&L, m, n), gtag, 0);
      }
    }
    for (int64_t n = 0; n < k && !rc; n++) {
      int tag[3] = {(int)k, (int)n, (int)k};
      rc = tsr_task_trmm(&L, 'L', 'L', 'C', 'N', one, tsr_tile_op(&L, k, k), tsr_tile_op(&L, k, n),
                         kb, tsr_tile_m(&L, n), tag, 0);
    }
    if (!rc) rc = tsr_task_lauum(&L, 'L', k, 1);
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
    rc = tsr_flow_insert(A->flow, &t); /* on the diagonal tile's owner */
  }
  return rc;
}
