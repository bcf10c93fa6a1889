/* Tiled gemm and syrk / herk.
 *
 * gemm:  C_ij = alpha Σ_l op(A)_il op(B)_lj + beta C_ij, beta applied by the first product.
 * syrk:  the uplo triangle of C: diagonal tiles by syrk / herk, the others by gemm with
 *        op(A)_il op(A)_jlᵀ (ᴴ for herk). With k = 0 the products only scale C by beta. */
#include "linalg/loops/loops.h"
#include "linalg/loops/tasks.h"

/* Inner dimension of tile l of op(X). */
static int inner(const tessera_matrix_t *X, char op, int64_t l) {
  return op == 'N' ? tsr_tile_n(X, l) : tsr_tile_m(X, l);
}

int tsr_pxgemm(char transa, char transb, tsr_scalar_t alpha, const tessera_matrix_t *A,
               const tessera_matrix_t *B, tsr_scalar_t beta, tessera_matrix_t *C) {
  const tsr_scalar_t one = {1, 0};
  const int64_t kt = transa == 'N' ? A->nt : A->mt;
  const tessera_matrix_t Cf = tsr_matrix_in_flow(C, A, B);
  int rc = 0;
  for (int64_t j = 0; j < C->nt && !rc; j++)
    for (int64_t i = 0; i < C->mt && !rc; i++) {
      const tsr_operand_t c = tsr_tile_op(C, i, j);
      int tag[3] = {(int)i, (int)j, 0};
      if (kt == 0) /* C = beta C: a product with k = 0 */
        rc =
            tsr_task_gemm(&Cf, c, c, tsr_tile_m(C, i), tsr_tile_n(C, j), 0, alpha, beta, c, tag, 0);
      for (int64_t l = 0; l < kt && !rc; l++) {
        tag[2] = (int)l;
        rc = tsr_task_gemm(&Cf, tsr_op_tile(A, transa, i, l), tsr_op_tile(B, transb, l, j),
                           tsr_tile_m(C, i), tsr_tile_n(C, j), inner(A, transa, l), alpha,
                           l == 0 ? beta : one, c, tag, (int)(kt - l));
      }
    }
  return rc;
}

int tsr_pxsyrk(int herk, char uplo, char trans, tsr_scalar_t alpha, const tessera_matrix_t *A,
               tsr_scalar_t beta, tessera_matrix_t *C) {
  const tsr_scalar_t one = {1, 0};
  const char ta = trans == 'N' ? 'N' : (herk ? 'C' : 'T');
  const char tb = trans == 'N' ? (herk ? 'C' : 'T') : 'N';
  const int64_t kt = trans == 'N' ? A->nt : A->mt;
  int rc = 0;
  for (int64_t j = 0; j < C->nt && !rc; j++)
    for (int64_t i = uplo == 'L' ? j : 0; i < (uplo == 'L' ? C->mt : j + 1) && !rc; i++) {
      const tsr_operand_t c = tsr_tile_op(C, i, j);
      int tag[3] = {(int)i, (int)j, 0};
      for (int64_t l = 0; l < (kt ? kt : 1) && !rc; l++) {
        tag[2] = (int)l;
        const tsr_scalar_t b = l == 0 ? beta : one;
        const int k = kt ? inner(A, ta, l) : 0;
        if (i == j)
          rc = tsr_task_syrk(C, herk, uplo, ta, tsr_tile_m(C, i), k, alpha,
                             kt ? tsr_tile_op(A, ta == 'N' ? i : l, ta == 'N' ? l : i) : c, b, c,
                             tag, (int)(kt - l));
        else if (kt)
          rc =
              tsr_task_gemm(C, tsr_op_tile(A, ta, i, l), tsr_op_tile(A, tb, l, j), tsr_tile_m(C, i),
                            tsr_tile_n(C, j), k, alpha, b, c, tag, (int)(kt - l));
        else
          rc = tsr_task_gemm(C, c, c, tsr_tile_m(C, i), tsr_tile_n(C, j), 0, alpha, b, c, tag, 0);
      }
    }
  return rc;
}
