/* Tile loops of the mixed-precision solves: a matrix converted tile by tile into another dtype,
 * the row sums of moduli of a Hermitian matrix stored in one triangle or of a general one (for
 * ‖A‖∞), and the product with the Hermitian one.
 *
 * hemm: C = alpha A B + beta C, A Hermitian in its `uplo` triangle: each diagonal tile's product
 * by a hemm task reading its stored triangle (beta applied there, inserted first), and for each
 * stored off-diagonal tile both C_i += A_ij B_j and C_j += A_ijᴴ B_i in one hemm_pair task, one
 * pass over it. */
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
      rc = tsr_task_convert(A->flow, A->dtype, tsr_tile(A, i, j), L->dtype,
                            tsr_tile(L, whole ? 0 : i, whole ? 0 : j), whole ? (int)(i * A->mb) : 0,
                            whole ? (int)(j * A->nb) : 0, whole ? TESSERA_RW : TESSERA_W,
                            tsr_tile_m(A, i), tsr_tile_n(A, j), scale, tag, 0);
    }
  return rc;
}

int tsr_pxabsum(char uplo, const tessera_matrix_t *A, tessera_data_t **R, tessera_data_t **C) {
  int rc = 0;
  for (int64_t j = 0; j < A->nt && !rc; j++)
    for (int64_t i = uplo == 'U' ? 0
                     : uplo      ? j
                                 : 0;
         i < (uplo == 'U' ? j + 1 : A->mt) && !rc; i++) {
      const int tag[3] = {(int)i, (int)j, 0};
      const char part = !uplo ? (C ? 0 : 'G') : i == j ? uplo : 0;
      rc = tsr_task_absum(A->flow, A->dtype, tsr_tile(A, i, j), tsr_tile_m(A, i), tsr_tile_n(A, j),
                          part, R[i],
                          part ? NULL
                          : C  ? C[j]
                               : R[j],
                          tag);
    }
  return rc;
}

int tsr_pxhemm(char uplo, const tessera_matrix_t *A, tsr_scalar_t alpha, const tessera_matrix_t *B,
               tsr_scalar_t beta, tessera_matrix_t *C) {
  if (A->op == 'C' || B->op == 'C' || C->op == 'C')
    return tsr_error(A->ctx, TESSERA_ERR_STATE,
                     "hemm: its operands must be matrices of their own tiles, not views of a "
                     "conjugate transpose");
  const bool lower = uplo == 'L';
  tsr_flow_t *flow = tsr_operands_flow(C, A, B);
  int rc = 0;
  /* each diagonal tile's product from its stored triangle, with beta: first on each C tile */
  for (int64_t k = 0; k < C->nt && !rc; k++)
    for (int64_t i = 0; i < C->mt && !rc; i++) {
      const int tag[3] = {(int)i, (int)k, (int)i}, m = tsr_tile_m(C, i);
      rc = tsr_task_hemm(flow, C->dtype, uplo, tsr_tile(A, i, i), tsr_tile(B, i, k),
                         tsr_tile(C, i, k), m, tsr_tile_n(C, k), alpha, beta, tag, 1);
    }
  /* each stored off-diagonal tile S in one task, both of its products from one pass (lower:
   * S = A(i, j), upper: S = A(j, i); Yr the block row S sits in) */
  for (int64_t k = 0; k < C->nt && !rc; k++)
    for (int64_t j = 0; j < A->nt && !rc; j++)
      for (int64_t i = j + 1; i < A->mt && !rc; i++) {
        const int tag[3] = {(int)i, (int)k, (int)j}, mi = tsr_tile_m(C, i), mj = tsr_tile_m(C, j);
        const int64_t r = lower ? i : j, c = lower ? j : i;
        rc = tsr_task_hemm_pair(flow, C->dtype, tsr_tile(A, r, c), tsr_tile(B, c, k),
                                tsr_tile(B, r, k), tsr_tile(C, r, k), tsr_tile(C, c, k),
                                lower ? mi : mj, lower ? mj : mi, tsr_tile_n(C, k), alpha, tag);
      }
  return rc;
}
