/* Algorithms layer internals: matrix descriptors and the tile-task inserters the tile loops use. */
#ifndef TSR_LINALG_H
#define TSR_LINALG_H

#include <stdbool.h>

#include "kernels/kernels.h"
#include "runtime/error.h"
#include "tessera/tessera.h"

/** Workspace tiles a descriptor may hold (see struct tessera_matrix). */
#define TSR_MATRIX_WORK 4

struct tessera_matrix {
  tessera_context_t *ctx;
  tessera_dtype_t dtype;
  int64_t m, n, mb, nb, mt, nt;
  tessera_data_t **tiles; /* tile (i, j) at i + j * mt; NULL where absent (see stored) */
  int is_view;
  /* 0: every tile exists; 'L' / 'U': only those of that triangle (i >= j / i <= j), the others
   * are NULL (tessera_matrix_create_triangle). */
  char stored;
  /* Workspace tiles of the factorizations (potrf.c), made on first use, freed with the
   * descriptor: a ring of inverted diagonal tiles. */
  tessera_data_t *work[TSR_MATRIX_WORK];
  int nwork;
};

/** Handle of tile (i, j) (in range). */
static inline tessera_data_t *tsr_tile(const tessera_matrix_t *A, int64_t i, int64_t j) {
  return A->tiles[i + j * A->mt];
}
/** Rows of tile row i, columns of tile column j. */
static inline int tsr_tile_m(const tessera_matrix_t *A, int64_t i) {
  return (int)(i == A->mt - 1 ? A->m - i * A->mb : A->mb);
}
static inline int tsr_tile_n(const tessera_matrix_t *A, int64_t j) {
  return (int)(j == A->nt - 1 ? A->n - j * A->nb : A->nb);
}

/** A tile operand: a handle and the operation applied to it ('N', 'T', 'C'). */
typedef struct {
  tessera_data_t *h;
  char op;
} tsr_operand_t;

/* Inserters: one task each, tagged (i, j, k) for traces. Return 0 or a negative status. */
int tsr_task_potrf(const tessera_matrix_t *A, char uplo, int64_t k, int prio);
int tsr_task_trsm(const tessera_matrix_t *A, char side, char uplo, char trans, char diag,
                  tsr_scalar_t alpha, tessera_data_t *a, tessera_data_t *b, int m, int n,
                  const int tag[3], int prio);
int tsr_task_syrk(const tessera_matrix_t *C, int herk, char uplo, char trans, int n, int k,
                  tsr_scalar_t alpha, tessera_data_t *a, tsr_scalar_t beta, tessera_data_t *c,
                  const int tag[3], int prio);
int tsr_task_gemm(const tessera_matrix_t *C, tsr_operand_t a, tsr_operand_t b, int m, int n, int k,
                  tsr_scalar_t alpha, tsr_scalar_t beta, tessera_data_t *c, const int tag[3],
                  int prio);
int tsr_task_trtri(const tessera_matrix_t *A, char uplo, char diag, int64_t k, int prio);
/** trtri on handle `h` holding an n x n triangle whose first row is global row `offset`. */
int tsr_task_trtri_on(const tessera_matrix_t *A, tessera_data_t *h, char uplo, char diag, int n,
                      int64_t offset, const int tag[3], int prio);
int tsr_task_lauum(const tessera_matrix_t *A, char uplo, int64_t k, int prio);
int tsr_task_trmm(const tessera_matrix_t *A, char side, char uplo, char trans, char diag,
                  tsr_scalar_t alpha, tessera_data_t *a, tessera_data_t *b, int m, int n,
                  const int tag[3], int prio);
int tsr_task_lacpy(tessera_dtype_t dtype, tessera_context_t *ctx, tessera_data_t *src,
                   tessera_data_t *dst, int m, int n, const int tag[3], int prio);

/* Tile loops: insert the tasks of a whole operation without waiting. */
int tsr_pxpotrf(char uplo, tessera_matrix_t *A);
int tsr_pxtrsm(char side, char uplo, char trans, char diag, tsr_scalar_t alpha,
               const tessera_matrix_t *A, tessera_matrix_t *B);
int tsr_pxsyrk(int herk, char uplo, char trans, tsr_scalar_t alpha, const tessera_matrix_t *A,
               tsr_scalar_t beta, tessera_matrix_t *C);
int tsr_pxgemm(char transa, char transb, tsr_scalar_t alpha, const tessera_matrix_t *A,
               const tessera_matrix_t *B, tsr_scalar_t beta, tessera_matrix_t *C);
int tsr_pxpotrs(char uplo, const tessera_matrix_t *A, tessera_matrix_t *B);
int tsr_pxtrtri(char uplo, char diag, tessera_matrix_t *A);
int tsr_pxlauum(char uplo, tessera_matrix_t *A);
/** Inserts one task per diagonal tile adding log|A_kk(i,i)| into logs[k] (nt doubles, zeroed). */
int tsr_pxlogdiag(const tessera_matrix_t *A, double *logs);
int tsr_pxlacpy(const tessera_matrix_t *A, tessera_matrix_t *B);

/** Makes the home memory of every tile current (a view's array then holds the result). */
int tsr_matrix_flush(tessera_matrix_t *A);

/** Checks that descriptors can be combined: same context and dtype, square tiles of one size.
 *  `argno[i]` is the argument number of mats[i] for the error status. */
int tsr_check_tiling(const tessera_matrix_t *const *mats, const int *argno, int count,
                     const char *routine);

#endif
