/* The copy loops between two matrices of the same size (tsr_pxlacpy) and into the transpose of
 * one (tsr_pxtranspose), on any tilings: a task per block where their tiles meet. */
#include "linalg/loops/loops.h"
#include "linalg/loops/tasks.h"

/* The copy of tile (i, j) of T (into or out of B's panel where one of them is in panels). */
static int copy_tile(const tessera_matrix_t *A, tessera_matrix_t *B, const tessera_matrix_t *T,
                     bool into, bool out, int64_t i, int64_t j) {
  tessera_data_t *src = tsr_tile(A, out ? 0 : i, j), *dst = tsr_tile(B, into ? 0 : i, j);
  if (!src || !dst) return 0; /* absent from a triangle */
  const int row = (int)(i * T->mb), tag[3] = {(int)i, (int)j, 0};
  return tsr_task_lacpy_rows(A->dtype, A->flow, src, out ? row : 0, dst, into ? row : 0,
                             into ? TESSERA_RW : TESSERA_W, tsr_tile_m(T, i), tsr_tile_n(T, j), tag,
                             0);
}

int tsr_pxlacpy(const tessera_matrix_t *A, tessera_matrix_t *B) {
  /* one of the two in column panels, the other not: a copy per tile of the other, into or out
   * of its rows of the panel */
  const bool into = B->mt == 1 && A->mt > 1, out = A->mt == 1 && B->mt > 1;
  const tessera_matrix_t *T = into ? A : B; /* whose tiles the copies follow */
  /* In the order a factorization's steps first read the tiles, step s reading tile row s and
   * tile column s from the diagonal on (a column panel: step s its own): over processes the
   * tiles travel in the order their copies are inserted, and a routine started on the copy
   * finds its first steps' tiles first, whichever triangle it holds. */
  int rc = 0;
  for (int64_t s = 0; s < (T->mt > T->nt ? T->mt : T->nt) && !rc; s++) {
    for (int64_t j = s; j < T->nt && s < T->mt && !rc; j++)
      rc = copy_tile(A, B, T, into, out, s, j);
    for (int64_t i = s + 1; i < T->mt && s < T->nt && !rc; i++)
      rc = copy_tile(A, B, T, into, out, i, s);
  }
  return rc;
}

/* [lo, hi) ∩ [lo2, hi2) into [*a, *b); whether it is empty. */
static bool overlap(int64_t lo, int64_t hi, int64_t lo2, int64_t hi2, int64_t *a, int64_t *b) {
  *a = lo > lo2 ? lo : lo2;
  *b = hi < hi2 ? hi : hi2;
  return *a >= *b;
}

int tsr_pxtranspose(const tessera_matrix_t *A, tessera_matrix_t *B) {
  /* each block where a tile of A meets the transpose of a tile of B: B(p, q) covers A's
   * columns of B's tile row p and A's rows of B's tile column q */
  for (int64_t j = 0; j < A->nt; j++)
    for (int64_t i = 0; i < A->mt; i++) {
      tessera_data_t *src = tsr_tile(A, i, j);
      const int64_t r0 = i * A->mb, r1 = r0 + tsr_tile_m(A, i);
      const int64_t c0 = j * A->nb, c1 = c0 + tsr_tile_n(A, j);
      for (int64_t p = c0 / B->mb; src && p < B->mt && p * B->mb < c1; p++)
        for (int64_t q = r0 / B->nb; q < B->nt && q * B->nb < r1; q++) {
          tessera_data_t *dst = tsr_tile(B, p, q);
          int64_t ra, rb, ca, cb;
          if (!dst || overlap(r0, r1, q * B->nb, q * B->nb + tsr_tile_n(B, q), &ra, &rb) ||
              overlap(c0, c1, p * B->mb, p * B->mb + tsr_tile_m(B, p), &ca, &cb))
            continue;
          const bool whole = rb - ra == tsr_tile_n(B, q) && cb - ca == tsr_tile_m(B, p);
          const int tag[3] = {(int)i, (int)j, (int)(p * B->nt + q)};
          const int rc = tsr_task_transpose(A->dtype, A->flow, src, (int)(ra - r0), (int)(ca - c0),
                                            dst, (int)(ca - p * B->mb), (int)(ra - q * B->nb),
                                            whole ? TESSERA_W : TESSERA_RW, (int)(rb - ra),
                                            (int)(cb - ca), tag, 0);
          if (rc) return rc;
        }
    }
  return 0;
}
