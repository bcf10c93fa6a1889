/* The polar decomposition's front doors: tile level (checks, then the iteration of
 * loops/polar.c on the descriptors) and LAPACK-style (the arrays viewed in square tiles; on a
 * context over processes process 0's, dealt over the grid for the call and gathered back). On
 * one process whose scope holds CPUs alone, through LAPACK's SVD where the policy has measured
 * that faster (policy.c: tsr_svd_lapack): A = W Σ Vᴴ, U_p = W Vᴴ, H = V Σ Vᴴ, on the caller's
 * arrays or a host copy of the tiles; no QDWH step then (steps 0). */
#include <stdint.h>
#include <stdlib.h>

#include "kernels/eig.h"
#include "linalg/front/front.h"
#include "linalg/loops/loops.h"
#include "linalg/loops/policy.h"
#include "runtime/context.h"
#include "tessera/linalg.h"

/* Through LAPACK's SVD on host arrays (a m x n, h n x n or NULL): info as QDWH's. */
static int lapack_arrays(tessera_context_t *ctx, const char *f, tessera_dtype_t dt, int64_t m,
                         int64_t n, void *a, int64_t lda, void *h, int64_t ldh) {
  const tsr_polar_gesdd_args_t args = {.dtype = dt,
                                       .m = (int)m,
                                       .n = (int)n,
                                       .want_h = h != NULL,
                                       .threads = tsr_eig_cpu_workers(ctx)};
  int info[2] = {0, 0};
  void *ptr[3] = {a, h, info};
  const size_t ld[3] = {(size_t)lda, h ? (size_t)ldh : 1, 2};
  const int rc = tsr_run_inline(ctx, TESSERA_HOST_NODE, NULL, &tsr_kernel_polar_gesdd,
                                (void *)&args, 3, ptr, ld);
  return tsr_gesdd_status(ctx, f, rc, info);
}

/* The tile-level call through LAPACK's SVD: A's tiles (and H's) through host copies. */
static int lapack_tiles(tessera_matrix_t *A, tessera_matrix_t *H) {
  const int64_t m = A->m, n = A->n;
  const size_t es = tessera_dtype_size(A->dtype);
  char *a = malloc((size_t)(m * n) * es), *h = H ? malloc((size_t)(n * n) * es) : NULL;
  int rc = !a || (H && !h)
               ? tsr_error(A->ctx, TESSERA_ERR_NOMEM, "tile_gepolar: out of memory for a copy of A")
               : tessera_matrix_export(A, a, m);
  if (!rc) rc = lapack_arrays(A->ctx, "tile_gepolar", A->dtype, m, n, a, m, h, n);
  if (!rc) rc = tessera_matrix_import(A, a, m);
  if (!rc && H) rc = tessera_matrix_import(H, h, n);
  free(a), free(h);
  return rc;
}

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
  tessera_context_t *ctx = A->ctx;
  const tessera_job_t job = H ? TESSERA_VECTORS : TESSERA_VALUES; /* H wanted, in the history */
  const bool one = !A->flow->distributed;
  const double t0 = tsr_now();
  if (one && tsr_svd_lapack(ctx, true, job, A->dtype, A->m, A->n)) {
    rc = lapack_tiles(A, H);
    if (!rc) tsr_svd_measured(ctx, true, true, job, A->dtype, A->m, A->n, tsr_now() - t0);
    return rc;
  }
  /* within the accelerators where they hold the iteration: a CPU worker taking one of its
   * copies or products would move whole panels to the host and back */
  const tessera_scope_t outer = tessera_get_scope(ctx);
  tessera_scope_t where;
  if (tsr_polar_gpu(ctx, A->dtype, A->m, A->n, &where)) rc = tessera_set_scope(ctx, where);
  if (!rc) rc = tsr_pxgepolar(A, H, steps);
  const int back = tessera_set_scope(ctx, outer);
  if (!rc && !back && one)
    tsr_svd_measured(ctx, true, false, job, A->dtype, A->m, A->n, tsr_now() - t0);
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
  /* through LAPACK's SVD on the caller's arrays themselves (one process, CPUs) */
  const tessera_job_t job = h ? TESSERA_VECTORS : TESSERA_VALUES;
  if (!rc && n > 0 && !tsr_context_flow(ctx)->distributed &&
      tsr_svd_lapack(ctx, true, job, dtype, m, n)) {
    const double t0 = tsr_now();
    rc = lapack_arrays(ctx, f, dtype, m, n, a, lda, h, ldh);
    if (!rc) tsr_svd_measured(ctx, true, true, job, dtype, m, n, tsr_now() - t0);
    return rc;
  }
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
