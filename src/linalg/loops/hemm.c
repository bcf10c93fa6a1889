/* Tile loops of the mixed-precision solves: a matrix converted tile by tile into another dtype,
 * the row sums of moduli of a Hermitian matrix stored in one triangle or of a general one (for
 * ‖A‖∞), and the product with the Hermitian one.
 *
 * hemm: C = alpha A B + beta C, A Hermitian in its `uplo` triangle, written once on the lower
 * triangle (an upper A through its conjugate-transpose view): C_i += A_ij B_j for the tiles
 * below the diagonal and C_j += A_ijᴴ B_i for their mirror images, both in one hemm_pair task
 * per stored tile (one pass over it; two gemm tasks where B or C is a view of a conjugate
 * transpose); each diagonal tile made
 * whole once (a copy, conjugate-transposed for an upper A, then hefill) into a workspace the
 * descriptor keeps for later products. beta is applied by each C tile's diagonal product,
 * inserted first. */
#include <stdlib.h>

#include "linalg/loops/loops.h"
#include "linalg/loops/tasks.h"

int tsr_pxconvert(char part, const tessera_matrix_t *A, double scale, tessera_matrix_t *L) {
  /* L one tile: each of A's tiles into its block of it (read-write: the others' blocks stay) */
  const bool whole = L->mt == 1 && L->nt == 1;
  int rc = 0;
  for (int64_t j = 0; j < A->nt && !rc; j++)
    for (int64_t i = part == 'L' ? j : 0; i < (part == 'U' ? j + 1 : A->mt) && !rc; i++) {
      const int tag[3] = {(int)i, (int)j, 0};
      rc = tsr_task_convert(A->ctx, A->dtype, tsr_tile(A, i, j), L->dtype,
                            tsr_tile(L, whole ? 0 : i, whole ? 0 : j), whole ? (int)(i * A->mb) : 0,
                            whole ? (int)(j * A->nb) : 0, whole ? TESSERA_RW : TESSERA_W,
                            tsr_tile_m(A, i), tsr_tile_n(A, j), scale, tag, 0);
    }
  return rc;
}

int tsr_pxabsum(char uplo, const tessera_matrix_t *A, tessera_data_t **R) {
  int rc = 0;
  for (int64_t j = 0; j < A->nt && !rc; j++)
    for (int64_t i = uplo == 'U' ? 0
                     : uplo      ? j
                                 : 0;
         i < (uplo == 'U' ? j + 1 : A->mt) && !rc; i++) {
      const int tag[3] = {(int)i, (int)j, 0};
      const char part = !uplo ? 'G' : i == j ? uplo : 0;
      rc = tsr_task_absum(A->ctx, A->dtype, tsr_tile(A, i, j), tsr_tile_m(A, i), tsr_tile_n(A, j),
                          part, R[i], part ? NULL : R[j], tag);
    }
  return rc;
}

int tsr_hemm_create(char uplo, const tessera_matrix_t *A, tsr_hemm_t *H) {
  tessera_context_t *ctx = A->ctx;
  const size_t es = tessera_dtype_size(A->dtype);
  *H = (tsr_hemm_t){.uplo = uplo, .A = A, .nt = A->nt};
  H->diag = calloc((size_t)A->nt + 1, sizeof *H->diag);
  int rc = H->diag ? 0 : tsr_error(ctx, TESSERA_ERR_NOMEM, "hemm: out of memory");
  for (int64_t i = 0; i < A->nt && !rc; i++) {
    const int m = tsr_tile_m(A, i), tag[3] = {(int)i, (int)i, 0};
    rc = tessera_data_create_workspace(ctx, (size_t)m, (size_t)m, es, &H->diag[i]);
    if (!rc && uplo == 'L')
      rc = tsr_task_lacpy_block(A->dtype, ctx, tsr_tile(A, i, i), 0, 0, H->diag[i], 0, TESSERA_W, m,
                                m, tag, 0);
    else if (!rc)
      rc = tsr_task_transpose(A->dtype, ctx, tsr_tile(A, i, i), 0, 0, H->diag[i], 0, 0, TESSERA_W,
                              m, m, tag, 0);
    if (!rc) rc = tsr_task_hefill(A->dtype, ctx, H->diag[i], m, tag, 0);
  }
  if (rc) tsr_hemm_destroy(H);
  return rc;
}

void tsr_hemm_destroy(tsr_hemm_t *H) {
  for (int64_t i = 0; H->diag && i < H->nt; i++)
    if (H->diag[i]) (void)tessera_data_release(H->A->ctx, H->diag[i]);
  free(H->diag);
  H->diag = NULL;
}

int tsr_pxhemm(const tsr_hemm_t *H, tsr_scalar_t alpha, const tessera_matrix_t *B,
               tsr_scalar_t beta, tessera_matrix_t *C) {
  const tsr_scalar_t one = {1, 0};
  const tessera_matrix_t L = H->uplo == 'L' ? *H->A : tsr_matrix_ct(H->A);
  int rc = 0;
  for (int64_t k = 0; k < C->nt && !rc; k++)
    for (int64_t i = 0; i < C->mt && !rc; i++) {
      const int tag[3] = {(int)i, (int)k, (int)i}, m = tsr_tile_m(C, i);
      rc = tsr_task_gemm(C, (tsr_operand_t){H->diag[i], 'N'}, tsr_tile_op(B, i, k), m,
                         tsr_tile_n(C, k), m, alpha, beta, tsr_tile_op(C, i, k), tag, 1);
    }
  /* B and C of their own tiles (not views of a conjugate transpose): each stored off-diagonal
   * tile S in one task, both of its products from one pass (Yr the block row S sits in) */
  const bool pair = H->A->op != 'C' && B->op != 'C' && C->op != 'C';
  for (int64_t k = 0; k < C->nt && !rc; k++)
    for (int64_t j = 0; j < L.nt && !rc; j++)
      for (int64_t i = j + 1; i < L.mt && !rc; i++) {
        const int tag[3] = {(int)i, (int)k, (int)j}, mi = tsr_tile_m(C, i), mj = tsr_tile_m(C, j);
        const int nk = tsr_tile_n(C, k);
        const bool lower = H->uplo == 'L';
        if (pair) { /* lower: S = A(i, j); upper: S = A(j, i) */
          const int64_t r = lower ? i : j, c = lower ? j : i;
          rc = tsr_task_hemm_pair(C->ctx, C->dtype, tsr_tile(H->A, r, c), tsr_tile(B, c, k),
                                  tsr_tile(B, r, k), tsr_tile(C, r, k), tsr_tile(C, c, k),
                                  lower ? mi : mj, lower ? mj : mi, nk, alpha, tag);
          continue;
        }
        rc = tsr_task_gemm(C, tsr_op_tile(&L, 'N', i, j), tsr_tile_op(B, j, k), mi, nk, mj, alpha,
                           one, tsr_tile_op(C, i, k), tag, 0);
        if (!rc)
          rc = tsr_task_gemm(C, tsr_op_tile(&L, 'C', j, i), tsr_tile_op(B, i, k), mj, nk, mi, alpha,
                             one, tsr_tile_op(C, j, k), tag, 0);
      }
  return rc;
}
