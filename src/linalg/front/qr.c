/* Tile-level QR: check the descriptor, run the factorization on its column panels (the matrix
 * itself when its tiles span its rows, else a copy), wait, and hand LAPACK's tau back. */
#include <stdint.h>

#include "dist/agree.h"
#include "linalg/front/front.h"
#include "linalg/loops/loops.h"
#include "tessera/linalg.h"

int tessera_tile_geqrf(tessera_matrix_t *A, void *tau) {
  if (!A) return tsr_error(NULL, -1, "tile_geqrf: argument 1 is NULL");
  const int64_t kmin = A->m < A->n ? A->m : A->n;
  int rc = 0;
  if (A->m > INT32_MAX || A->n > INT32_MAX)
    rc = tsr_error(A->ctx, -1, "tile_geqrf: A is %lld x %lld, beyond QR's 2^31 - 1",
                   (long long)A->m, (long long)A->n);
  else if (!tau && kmin > 0)
    rc = tsr_error(A->ctx, -2, "tile_geqrf: argument 2 (tau) is NULL");
  if (!rc) rc = tsr_check_stored(A, 0, 1, "tile_geqrf");
  if (A->comm) rc = tsr_dist_agree(A->comm, rc); /* the same status on every process */
  if (rc || kmin == 0) return rc;
  tessera_matrix_t *P = NULL;
  tsr_qr_t Q = {0};
  tsr_qr_work_t w = {0};
  rc = tsr_panels_of(A, &P);
  if (!rc) rc = tsr_qr_create(P, kmin, P->nb, &Q);
  if (!rc) rc = tsr_qr_work_create(P, P->nb, &w);
  if (!rc) rc = tsr_pxgeqrf(P, &Q, &w);
  rc = tsr_tile_finish(A, tsr_panels_back(A, P, rc));
  if (!rc) rc = tsr_qr_tau(&Q, A->dtype, tau);
  tsr_qr_work_destroy(&w);
  tsr_qr_destroy(&Q);
  return tsr_panels_free(A, P, rc);
}
