/* The polar decomposition's front doors: tile level (checks, then the iteration of
 * loops/polar.c on the descriptors) and LAPACK-style (the arrays viewed in square tiles; on a
 * context over processes process 0's, dealt over the grid for the call and gathered back). */
#include <stdint.h>

#include "linalg/front/front.h"
#include "linalg/loops/loops.h"
#include "linalg/loops/policy.h"
#include "tessera/linalg.h"

int tessera_tile_gepolar(tessera_matrix_t *A, tessera_matrix_t *H, int *steps) {
  const char *f = "tile_gepolar";
  if (steps) *steps = 0;
  if (!A) return tsr_error(NULL, -1, "%s: argument 1 (A) is NULL", f);
  const tessera_matrix_t *m[2] = {A, H};
  int rc = tsr_check_tiling(m, (const int[]){1, 2}, H ? 2 : 1, f);
  if (!rc && A->m < A->n)
    rc = tsr_error(A->ctx, -1,
                   "%s: A is %lld x %lld; the polar decomposition here takes m >= n (of a wider "
                   "A, decompose its conjugate transpose)",
                   f, (long long)A->m, (long long)A->n);
  if (!rc && A->m + A->n > INT32_MAX)
    rc = tsr_error(A->ctx, -1, "%s: m + n = %lld is beyond the QR steps' 2^31 - 1", f,
                   (long long)(A->m + A->n));
  if (!rc && H && (H->m != A->n || H->n != A->n))
    rc = tsr_error(A->ctx, -2, "%s: H is %lld x %lld, A has %lld columns: H must be %lld x %lld", f,
                   (long long)H->m, (long long)H->n, (long long)A->n, (long long)A->n,
                   (long long)A->n);
  if (!rc && H && H->comm != A->comm)
    rc = tsr_error(A->ctx, -2, "%s: H and A are not of one communicator", f);
  if (!rc) rc = tsr_check_stored(A, 0, 1, f);
  if (!rc && H) rc = tsr_check_stored(H, 0, 2, f);
  rc = tsr_matrix_agree(A, rc);
  if (rc || A->n == 0) return rc;
  /* within the accelerators where they hold the iteration: a CPU worker taking one of its
   * copies or products would move whole panels to the host and back */
  tessera_context_t *ctx = A->ctx;
  const tessera_scope_t outer = tessera_get_scope(ctx);
  tessera_scope_t where;
  if (tsr_polar_gpu(ctx, A->dtype, A->m, A->n, &where)) rc = tessera_set_scope(ctx, where);
  if (!rc) rc = tsr_pxgepolar(A, H, steps);
  const int back = tessera_set_scope(ctx, outer);
  return tsr_matrix_agree(A, rc ? rc : back);
}

int tessera_gepolar(tessera_context_t *ctx, tessera_dtype_t dtype, int64_t m, int64_t n, void *a,
                    int64_t lda, void *h, int64_t ldh, int *steps) {
  if (!ctx) return -1;
  const char *f = "gepolar";
  if (steps) *steps = 0;
  int rc = tsr_arg_dtype(ctx, f, 2, dtype);
  if (!rc) rc = tsr_arg_dim(ctx, f, 3, m);
  if (!rc) rc = tsr_arg_dim(ctx, f, 4, n);
  if (!rc && m < n)
    rc = tsr_error(ctx, -4,
                   "%s: A is %lld x %lld; the polar decomposition here takes m >= n (of a wider "
                   "A, decompose its conjugate transpose)",
                   f, (long long)m, (long long)n);
  if (!rc) rc = tsr_arg_ptr(ctx, f, 5, a, m, n);
  if (!rc) rc = tsr_arg_ld(ctx, f, 6, lda, m);
  if (!rc && h) rc = tsr_arg_ld(ctx, f, 8, ldh, n);
  tsr_views_t vs;
  rc = tsr_views_begin(&vs, ctx, f, rc, 3, (const int64_t[]){dtype, m, n}, (const int[]){2, 3, 4},
                       tessera_tile_for_polar(ctx, m, n));
  /* whether H is wanted: process 0's choice on a context over processes */
  int64_t want = h != NULL;
  if (!rc && vs.dist) rc = tsr_lapack_broadcast(ctx, &want, sizeof want);
  if (!rc && n > 0) rc = tsr_views_add(&vs, dtype, m, n, a, lda, 0, TSR_IN | TSR_OUT);
  if (!rc && n > 0 && want) rc = tsr_views_add(&vs, dtype, n, n, h, ldh, 0, TSR_OUT);
  if (!rc && n > 0) rc = tessera_tile_gepolar(vs.v[0], want ? vs.v[1] : NULL, steps);
  return tsr_views_release(&vs, rc);
}
