/* Copies between a tiled matrix and a column-major array (tessera_matrix_import / export): the
 * copy loop between the matrix and a view of the array, waited for. */
#include <stdint.h>

#include "linalg/desc/desc.h"
#include "linalg/loops/loops.h"

/* Copies between the descriptor and a LAPACK array through a temporary view. */
static int copy_lapack(tessera_matrix_t *A, void *a, int64_t lda, int to_array) {
  if (!A) return -1;
  int rc =
      tsr_check_array(A->ctx, to_array ? "matrix_export" : "matrix_import", 2, a, A->m, A->n, lda);
  if (rc) return rc;
  tessera_matrix_t *V;
  rc = tessera_matrix_view(A->ctx, A->dtype, A->m, A->n, A->mb, A->nb, a, lda, &V);
  if (rc) return rc;
  rc = to_array ? tsr_pxlacpy(A, V) : tsr_pxlacpy(V, A);
  int w = tessera_wait_all(A->ctx);
  int d = tessera_matrix_destroy(V);
  return rc ? rc : w ? w : d;
}

int tessera_matrix_import(tessera_matrix_t *A, const void *a, int64_t lda) {
  return copy_lapack(A, (void *)(uintptr_t)a, lda, 0);
}

int tessera_matrix_export(tessera_matrix_t *A, void *a, int64_t lda) {
  return copy_lapack(A, a, lda, 1);
}
