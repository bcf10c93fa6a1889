/* LAPACK-style QR: geqrf, unmqr (ormqr), ungqr (orgqr) and gels on column-major host arrays,
 * viewed as column panels (tessera_tile_for_qr) for the tile-level routines (qr.c). On a
 * context over processes the arrays are process 0's (NULL elsewhere), dealt over the grid for
 * the call and gathered back as the LU calls do, tau broadcast from process 0 where the call
 * reads it and returned to it where it writes it. Q from the right, ungqr and the minimum norm
 * solution are the tile-level routines' (through copies of Cᴴ, the identity, Aᴴ in panels). */
#include <stdlib.h>
#include <string.h>

#include "linalg/front/front.h"
#include "linalg/loops/loops.h"
#include "tessera/linalg.h"

/* A buffer of `count` elements of dtype: the caller's `p` where this process holds the arrays,
 * else one of this call's (tau on the processes other than 0). NULL when out of memory. */
static void *holder(tessera_context_t *ctx, tessera_dtype_t dtype, int64_t count, void *p) {
  if (tsr_lapack_holds_arrays(ctx) && (p || count == 0)) return p;
  return calloc((size_t)(count > 0 ? count : 1), tessera_dtype_size(dtype));
}

int tessera_geqrf(tessera_context_t *ctx, tessera_dtype_t dtype, int64_t m, int64_t n, void *a,
                  int64_t lda, void *tau) {
  if (!ctx) return -1;
  const char *f = "geqrf";
  int rc = tsr_arg_dtype(ctx, f, 2, dtype);
  if (!rc) rc = tsr_arg_dim(ctx, f, 3, m);
  if (!rc) rc = tsr_arg_dim(ctx, f, 4, n);
  if (!rc) rc = tsr_arg_ptr(ctx, f, 5, a, m, n);
  if (!rc) rc = tsr_arg_ld(ctx, f, 6, lda, m);
  if (!rc) rc = tsr_arg_ptr(ctx, f, 7, tau, m, n);
  if (!rc && (m > INT32_MAX || n > INT32_MAX))
    rc = tsr_error(ctx, -3, "%s: A is %lld x %lld, beyond QR's 2^31 - 1", f, (long long)m,
                   (long long)n);
  tsr_views_t vs;
  rc = tsr_views_begin(&vs, ctx, f, rc, 3, (const int64_t[]){dtype, m, n}, (const int[]){2, 3, 4},
                       tessera_tile_for_qr(ctx, m, n));
  vs.panels = true;
  const int64_t k = m < n ? m : n;
  void *t = rc || k == 0 ? NULL : holder(ctx, dtype, k, tau);
  if (!rc && k > 0 && !t) rc = tsr_error(ctx, TESSERA_ERR_NOMEM, "%s: out of memory for tau", f);
  if (vs.dist) rc = tsr_lapack_agreed(ctx, rc);
  if (!rc && k > 0) rc = tsr_views_add(&vs, dtype, m, n, a, lda, 0, TSR_IN | TSR_OUT);
  if (!rc && k > 0) rc = tessera_tile_geqrf(vs.v[0], t);
  if (t != tau) free(t);
  return tsr_views_release(&vs, rc);
}

/* tau on every process: the caller's on process 0 (or alone), broadcast from it to the others'
 * copies; NULL with *rc set when out of memory. */
static void *shared_tau(tessera_context_t *ctx, const char *f, const tsr_views_t *vs,
                        tessera_dtype_t dtype, int64_t k, const void *tau, int *rc) {
  void *t = holder(ctx, dtype, k, (void *)(uintptr_t)tau);
  *rc = tsr_lapack_agreed(
      ctx, t ? 0 : tsr_error(ctx, TESSERA_ERR_NOMEM, "%s: out of memory for tau", f));
  if (!*rc && vs->dist) *rc = tsr_lapack_broadcast(ctx, t, (size_t)k * tessera_dtype_size(dtype));
  return t;
}

/* C (m x n, ldc) = op(Q) C (side LEFT) or C op(Q) (RIGHT), Q of order nq from the k reflectors in
 * a (nq x k, lda) and tau: the views of a and c (c written), tau shared, the tile-level call. */
static int apply_q(tessera_context_t *ctx, const char *f, tessera_side_t side, tessera_op_t op,
                   tessera_dtype_t dtype, int64_t m, int64_t n, int64_t k, const void *a,
                   int64_t lda, const void *tau, void *c, int64_t ldc, int rc) {
  const int64_t nq = side == TESSERA_RIGHT ? n : m;
  tsr_views_t vs;
  rc = tsr_views_begin(&vs, ctx, f, rc, 4, (const int64_t[]){dtype, m, n, k},
                       (const int[]){4, 5, 6, 7}, tessera_tile_for_qr(ctx, nq, k));
  vs.panels = true;
  if (rc || m == 0 || n == 0 || k == 0) return tsr_views_release(&vs, rc);
  void *t = shared_tau(ctx, f, &vs, dtype, k, tau, &rc);
  if (!rc) rc = tsr_views_add(&vs, dtype, nq, k, a, lda, 0, TSR_IN);
  if (!rc) rc = tsr_views_add(&vs, dtype, m, n, c, ldc, 0, TSR_IN | TSR_OUT);
  if (!rc) rc = tessera_tile_unmqr(side, op, vs.v[0], t, vs.v[1]);
  if (t != tau) free(t);
  return tsr_views_release(&vs, rc);
}

int tessera_unmqr(tessera_context_t *ctx, tessera_side_t side, tessera_op_t trans,
                  tessera_dtype_t dtype, int64_t m, int64_t n, int64_t k, const void *a,
                  int64_t lda, const void *tau, void *c, int64_t ldc) {
  if (!ctx) return -1;
  const char *f = "unmqr";
  const int64_t nq = side == TESSERA_RIGHT ? n : m; /* the order of Q */
  int rc = tsr_arg_flag(ctx, f, 2, side, "LR");
  if (!rc) rc = tsr_arg_flag(ctx, f, 3, trans, "NTC");
  if (!rc) rc = tsr_arg_dtype(ctx, f, 4, dtype);
  if (!rc && trans == TESSERA_TRANS && (dtype == TESSERA_C64 || dtype == TESSERA_C128))
    rc = tsr_error(ctx, -3, "%s: trans 'T' on a complex dtype: Q's conjugate transpose is 'C'", f);
  if (!rc) rc = tsr_arg_dim(ctx, f, 5, m);
  if (!rc) rc = tsr_arg_dim(ctx, f, 6, n);
  if (!rc) rc = tsr_arg_dim(ctx, f, 7, k);
  if (!rc && k > nq)
    rc = tsr_error(ctx, -7, "%s: k = %lld reflectors exceed Q's order %lld", f, (long long)k,
                   (long long)nq);
  if (!rc) rc = tsr_arg_ptr(ctx, f, 8, a, nq, k);
  if (!rc) rc = tsr_arg_ld(ctx, f, 9, lda, nq);
  if (!rc) rc = tsr_arg_ptr(ctx, f, 10, tau, k, 1);
  if (!rc) rc = tsr_arg_ptr(ctx, f, 11, c, m, n);
  if (!rc) rc = tsr_arg_ld(ctx, f, 12, ldc, m);
  const tessera_op_t op = trans == TESSERA_NOTRANS ? TESSERA_NOTRANS : TESSERA_CONJTRANS;
  return apply_q(ctx, f, side, op, dtype, m, n, k, a, lda, tau, c, ldc, rc);
}

int tessera_ungqr(tessera_context_t *ctx, tessera_dtype_t dtype, int64_t m, int64_t n, int64_t k,
                  void *a, int64_t lda, const void *tau) {
  if (!ctx) return -1;
  const char *f = "ungqr";
  int rc = tsr_arg_dtype(ctx, f, 2, dtype);
  if (!rc) rc = tsr_arg_dim(ctx, f, 3, m);
  if (!rc && (n < 0 || n > m))
    rc = tsr_error(ctx, -4, "%s: n = %lld is not in [0, m = %lld]", f, (long long)n, (long long)m);
  if (!rc && (k < 0 || k > n))
    rc = tsr_error(ctx, -5, "%s: k = %lld is not in [0, n = %lld]", f, (long long)k, (long long)n);
  if (!rc) rc = tsr_arg_ptr(ctx, f, 6, a, m, n);
  if (!rc) rc = tsr_arg_ld(ctx, f, 7, lda, m);
  if (!rc) rc = tsr_arg_ptr(ctx, f, 8, tau, k, 1);
  tsr_views_t vs;
  rc = tsr_views_begin(&vs, ctx, f, rc, 4, (const int64_t[]){dtype, m, n, k},
                       (const int[]){2, 3, 4, 5}, tessera_tile_for_qr(ctx, m, n));
  vs.panels = true;
  if (rc || n == 0) return tsr_views_release(&vs, rc);
  void *t = k > 0 ? shared_tau(ctx, f, &vs, dtype, k, tau, &rc) : NULL;
  if (!rc) rc = tsr_views_add(&vs, dtype, m, n, a, lda, 0, TSR_IN | TSR_OUT);
  if (!rc) rc = tessera_tile_ungqr(vs.v[0], k, t);
  if (t != tau) free(t);
  return tsr_views_release(&vs, rc);
}

int tessera_gels(tessera_context_t *ctx, tessera_dtype_t dtype, int64_t m, int64_t n, int64_t nrhs,
                 void *a, int64_t lda, void *b, int64_t ldb) {
  if (!ctx) return -1;
  const char *f = "gels";
  int rc = tsr_arg_dtype(ctx, f, 2, dtype);
  if (!rc) rc = tsr_arg_dim(ctx, f, 3, m);
  if (!rc) rc = tsr_arg_dim(ctx, f, 4, n);
  if (!rc) rc = tsr_arg_dim(ctx, f, 5, nrhs);
  if (!rc) rc = tsr_arg_ptr(ctx, f, 6, a, m, n);
  if (!rc) rc = tsr_arg_ld(ctx, f, 7, lda, m);
  if (!rc) rc = tsr_arg_ptr(ctx, f, 8, b, m > n ? m : n, nrhs);
  if (!rc) rc = tsr_arg_ld(ctx, f, 9, ldb, m > n ? m : n);
  const size_t es = tessera_dtype_size(dtype);
  const bool holds = tsr_lapack_holds_arrays(ctx);
  const int64_t k = m < n ? m : n;
  if (!rc && k == 0 && holds) /* no equation or no unknown: x = 0 */
    for (int64_t j = 0; j < nrhs; j++)
      memset((char *)b + (size_t)(j * ldb) * es, 0, (size_t)n * es);
  /* m < n: the minimum norm solution through the QR of a copy of Aᴴ (A not written) */
  const bool wide = m < n;
  tsr_views_t vs;
  rc = tsr_views_begin(&vs, ctx, f, rc, 4, (const int64_t[]){dtype, m, n, nrhs},
                       (const int[]){2, 3, 4, 5}, tessera_tile_for_qr(ctx, wide ? n : m, k));
  vs.panels = true;
  if (rc || k == 0 || nrhs == 0) return tsr_views_release(&vs, rc);
  rc = tsr_views_add(&vs, dtype, m, n, a, lda, 0, wide ? TSR_IN : TSR_IN | TSR_OUT);
  if (!rc) rc = tsr_views_add(&vs, dtype, wide ? n : m, nrhs, b, ldb, 0, TSR_IN | TSR_OUT);
  if (!rc) rc = tessera_tile_gels(vs.v[0], vs.v[1]);
  return tsr_views_release(&vs, rc);
}
