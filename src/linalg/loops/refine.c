/* The refinement of a mixed-precision solve (refine.h): classical iterative refinement, and
 * GMRES preconditioned by the low-precision factors (GMRES-IR, Carson and Higham) from where a
 * classical step no longer halves the residual, whose operator M⁻¹ op(A) is applied in A's
 * precision but for the factor's solves. The vectors (n x nrhs) live on the host; the residuals'
 * products (Hermitian from A's stored triangle, or general with op) and the factor's solves are
 * tile tasks. */
#include <complex.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "linalg/loops/loops.h"
#include "linalg/loops/refine.h"

typedef double complex cplx;
typedef tsr_mixed_t mixed_t;

/* GMRES's largest basis per step, the relative decrease of the preconditioned residual a GMRES
 * step aims at, and the decrease below which GMRES-IR has stalled. */
enum { BASIS = 50 };
static const double GMRES_TOL = 1e-8, STALL = 0.9;
enum { OVERFLOW = TSR_MIXED_OVERFLOW, NO_CONVERGENCE = TSR_MIXED_NO_CONVERGENCE };

static size_t at(int64_t i, int64_t j, int64_t ld) {
  return (size_t)i + (size_t)j * (size_t)ld;
}

void tsr_mixed_copy_columns(size_t es, int64_t n, int64_t cols, const void *src, int64_t lds,
                            void *dst, int64_t ldd) {
  for (int64_t j = 0; j < cols; j++)
    memcpy((char *)dst + at(0, j, ldd) * es, (const char *)src + at(0, j, lds) * es,
           (size_t)n * es);
}

static cplx load(tessera_dtype_t dt, const void *p, size_t k) {
  const tsr_scalar_t s = tsr_scalar_load(dt, (const char *)p + k * tessera_dtype_size(dt), 0);
  return s.re + I * s.im;
}

static void store(tessera_dtype_t dt, void *p, size_t k, cplx v) {
  tsr_scalar_store(dt, (char *)p + k * tessera_dtype_size(dt), (tsr_scalar_t){creal(v), cimag(v)});
}

int tsr_mixed_sum(const tsr_mixed_t *m, void *v, size_t count, tessera_dtype_t dt) {
  return m->flow->ops->allreduce(m->flow, v, count, (tessera_comm_type_t)dt, TESSERA_SUM);
}

/* y (n x c, ldy) = alpha op(A) x (ldx) + beta y, by the tile product (Hermitian, or general
 * with op m->trans), x tiled as op(A)'s columns and y as its rows; x and y host arrays. Over
 * processes each one's tasks (those of the tiles of A it owns) add its part of op(A) x into a
 * zeroed array of its own, summed over the processes after. */
static int product(mixed_t *m, cplx alpha, const void *x, int64_t ldx, cplx beta, void *y,
                   int64_t ldy, int64_t c) {
  tessera_matrix_t *X = NULL, *Y = NULL;
  void *q = m->flow->distributed ? calloc((size_t)(m->n * c), m->es) : y;
  const int64_t ldq = m->flow->distributed ? m->n : ldy;
  if (!q) return tsr_error(m->ctx, TESSERA_ERR_NOMEM, "mixed-precision solve: out of memory");
  const cplx a = m->flow->distributed ? 1 : alpha, b = m->flow->distributed ? 0 : beta;
  const tsr_scalar_t al = {creal(a), cimag(a)}, be = {creal(b), cimag(b)};
  const bool t = m->trans != 'N';
  const int64_t xb = t ? m->A->mb : m->A->nb, yb = t ? m->A->nb : m->A->mb;
  int rc = tessera_matrix_view(m->ctx, m->dt, m->n, c, xb, m->nb, (void *)x, ldx, &X);
  if (!rc) rc = tessera_matrix_view(m->ctx, m->dt, m->n, c, yb, m->nb, q, ldq, &Y);
  if (!rc)
    rc = m->ipiv ? tsr_pxgemm(m->trans, 'N', al, m->A, X, be, Y)
                 : tsr_pxhemm(m->uplo, m->A, al, X, be, Y);
  const int waited = tessera_wait_all(m->ctx);
  if (!rc) rc = waited;
  const int d = (X ? tessera_matrix_destroy(X) : 0) | (Y ? tessera_matrix_destroy(Y) : 0);
  if (!rc) rc = d;
  if (!rc && m->flow->distributed) rc = tsr_mixed_sum(m, q, (size_t)(m->n * c), m->dt);
  for (int64_t j = 0; j < c && !rc && m->flow->distributed; j++)
    for (int64_t i = 0; i < m->n; i++) {
      const size_t k = at(i, j, ldy);
      store(m->dt, y, k, alpha * load(m->dt, q, at(i, j, ldq)) + beta * load(m->dt, y, k));
    }
  if (m->flow->distributed) free(q);
  return rc;
}

/* The factor's solves on W (n x c of the factor's dtype at m->low): a view of it, or over
 * processes its blocks of rows dealt as L's diagonal tiles are (one block, L's first panel's
 * process, for LU's panels), each process's array zeroed but for its own blocks after the solve
 * and summed over the processes. */
static int solve_factor(mixed_t *m, int64_t c) {
  tessera_matrix_t *W = NULL;
  /* tiled as the factor's solves take it: square tiles of L's for potrs, any width for getrs */
  const int64_t mb = m->L->mb, nb = m->ipiv ? m->nb : mb, bm = (m->n + mb - 1) / mb;
  int rc = 0, me = m->flow->rank;
  int *owners = NULL, *nodes = NULL;
  void **blocks = NULL;
  if (!m->flow->distributed) {
    rc = tessera_matrix_view(m->ctx, m->lo, m->n, c, mb, nb, m->low, m->n, &W);
  } else {
    owners = malloc((size_t)bm * sizeof *owners), nodes = calloc((size_t)bm, sizeof *nodes);
    blocks = malloc((size_t)bm * sizeof *blocks);
    if (!owners || !nodes || !blocks) rc = TESSERA_ERR_NOMEM;
    for (int64_t i = 0; i < bm && !rc; i++) {
      owners[i] = tessera_matrix_tile_owner(m->L, i, i);
      blocks[i] = (char *)m->low + (size_t)(i * mb) * m->les;
    }
    if (!rc)
      rc = tessera_matrix_view_blocks(m->ctx, m->comm, m->lo, m->n, c, mb, nb, mb, c, blocks, nodes,
                                      owners, m->n, &W);
  }
  if (!rc)
    rc = m->ipiv ? tessera_tile_getrs((tessera_op_t)m->trans, m->L, m->ipiv, W)
                 : tessera_tile_potrs((tessera_uplo_t)m->uplo, m->L, W);
  const int d = W ? tessera_matrix_destroy(W) : 0;
  if (!rc) rc = d;
  for (int64_t i = 0; i < bm && !rc && m->flow->distributed; i++) {
    const int64_t rows = i + 1 < bm ? mb : m->n - i * mb;
    for (int64_t j = 0; j < c && owners[i] != me; j++)
      memset((char *)m->low + at(i * mb, j, m->n) * m->les, 0, (size_t)rows * m->les);
  }
  if (!rc && m->flow->distributed) rc = tsr_mixed_sum(m, m->low, (size_t)(m->n * c), m->lo);
  free(owners), free(nodes), free(blocks);
  return rc == TESSERA_ERR_NOMEM ? tsr_error(m->ctx, rc, "mixed-precision solve: out of memory")
                                 : rc;
}

/* y (n x c, ldy, A's dtype) = M⁻¹ y with M = the low-precision factor's product: y rounded to
 * the factor's dtype (OVERFLOW where it does not fit), solved there, widened back. */
static int solve_low(mixed_t *m, void *y, int64_t ldy, int64_t c) {
  const double most = FLT_MAX;
  for (int64_t j = 0; j < c; j++)
    for (int64_t i = 0; i < m->n; i++) {
      const cplx v = load(m->dt, y, at(i, j, ldy));
      if (fabs(creal(v)) > most || fabs(cimag(v)) > most) return OVERFLOW;
      store(m->lo, m->low, at(i, j, m->n), v);
    }
  const int rc = solve_factor(m, c);
  if (rc) return rc;
  for (int64_t j = 0; j < c; j++)
    for (int64_t i = 0; i < m->n; i++)
      store(m->dt, y, at(i, j, ldy), m->mu * load(m->lo, m->low, at(i, j, m->n)));
  return 0;
}

/* The largest modulus of column j of y (NaN kept). */
static double col_max(tessera_dtype_t dt, const void *y, int64_t ld, int64_t n, int64_t j) {
  double most = 0;
  for (int64_t i = 0; i < n; i++) {
    const double v = cabs(load(dt, y, at(i, j, ld)));
    if (!(v <= most)) most = v;
  }
  return most;
}

/* w = M⁻¹ A v for the GMRES basis (n complex doubles each); y: n of A's dtype, scratch. */
static int apply(mixed_t *m, const cplx *v, cplx *w, void *y, void *q) {
  for (int64_t i = 0; i < m->n; i++) store(m->dt, y, (size_t)i, v[i]);
  int rc = product(m, 1, y, m->n, 0, q, m->n, 1);
  if (!rc) rc = solve_low(m, q, m->n, 1);
  for (int64_t i = 0; i < m->n && !rc; i++) w[i] = load(m->dt, q, (size_t)i);
  return rc;
}

static cplx dot(int64_t n, const cplx *u, const cplx *v) {
  cplx s = 0;
  for (int64_t i = 0; i < n; i++) s += conj(u[i]) * v[i];
  return s;
}

/* One GMRES-IR step on column r (A's dtype, n): d (n complex) approximately solves A d = r by
 * GMRES on M⁻¹ A d = M⁻¹ r from d = 0, until the preconditioned residual falls by GMRES_TOL or
 * the basis holds BASIS vectors. *steps += the iterations. */
static int gmres(mixed_t *m, const void *r, cplx *d, int *steps) {
  const int64_t n = m->n, k1 = BASIS + 1;
  cplx *V = malloc(sizeof *V * (size_t)(n * k1)), *Hm = calloc((size_t)(k1 * BASIS), sizeof *Hm);
  cplx *g = calloc((size_t)k1, sizeof *g), *s = calloc((size_t)BASIS, sizeof *s);
  double *c = calloc((size_t)BASIS, sizeof *c);
  void *y = malloc((size_t)n * m->es), *q = malloc((size_t)n * m->es);
  int rc = V && Hm && g && s && c && y && q ? 0 : TESSERA_ERR_NOMEM;
  if (!rc) { /* V_0 = M⁻¹ r / β */
    memcpy(q, r, (size_t)n * m->es);
    rc = solve_low(m, q, n, 1);
    for (int64_t i = 0; i < n && !rc; i++) V[i] = load(m->dt, q, (size_t)i);
  }
  const double beta = rc ? 0 : sqrt(creal(dot(n, V, V)));
  int k = 0;
  memset(d, 0, sizeof *d * (size_t)n);
  if (!rc && beta > 0) {
    for (int64_t i = 0; i < n; i++) V[i] /= beta;
    g[0] = beta;
    while (k < BASIS && !rc) {
      cplx *w = V + (k + 1) * n, *h = Hm + k * k1;
      if ((rc = apply(m, V + k * n, w, y, q))) break;
      for (int i = 0; i <= k; i++) { /* modified Gram-Schmidt */
        h[i] = dot(n, V + i * n, w);
        for (int64_t l = 0; l < n; l++) w[l] -= h[i] * V[i * n + l];
      }
      h[k + 1] = sqrt(creal(dot(n, w, w)));
      for (int i = 0; i < k; i++) { /* the earlier rotations on the new column */
        const cplx t = c[i] * h[i] + s[i] * h[i + 1];
        h[i + 1] = -conj(s[i]) * h[i] + c[i] * h[i + 1];
        h[i] = t;
      }
      const double a = cabs(h[k]), t = hypot(a, cabs(h[k + 1]));
      c[k] = t > 0 ? a / t : 1;
      s[k] = t == 0 ? 0 : a == 0 ? 1 : (h[k] / a) * conj(h[k + 1]) / t;
      const cplx hk = c[k] * h[k] + s[k] * h[k + 1];
      if (creal(h[k + 1]) > 0)
        for (int64_t l = 0; l < n; l++) w[l] /= creal(h[k + 1]);
      h[k] = hk, h[k + 1] = 0;
      g[k + 1] = -conj(s[k]) * g[k];
      g[k] = c[k] * g[k];
      k++;
      if (!(cabs(g[k]) > GMRES_TOL * beta) || hk == 0) break;
    }
    for (int i = k - 1; i >= 0 && !rc; i--) { /* H y = g, y into g */
      for (int j = i + 1; j < k; j++) g[i] -= Hm[j * k1 + i] * g[j];
      g[i] = Hm[i * k1 + i] != 0 ? g[i] / Hm[i * k1 + i] : 0;
    }
    for (int i = 0; i < k && !rc; i++)
      for (int64_t l = 0; l < n; l++) d[l] += g[i] * V[i * n + l];
  }
  *steps += k;
  free(V), free(Hm), free(g), free(s), free(c), free(y), free(q);
  return rc;
}

int tsr_mixed_refine(mixed_t *m, const tessera_mixed_options_t *o, double cte, const void *b,
                     int64_t ldb, void *x, int64_t ldx, int64_t nrhs, tessera_mixed_result_t *res) {
  const int64_t n = m->n;
  void *r = malloc((size_t)(n * nrhs) * m->es);
  cplx *d = malloc(sizeof *d * (size_t)n);
  int rc = r && d ? 0 : TESSERA_ERR_NOMEM;
  if (!rc) tsr_mixed_copy_columns(m->es, n, nrhs, b, ldb, x, ldx);
  if (!rc) rc = solve_low(m, x, ldx, nrhs);
  bool gm = o->gmres == 1;
  double last = INFINITY;
  for (int it = 0; !rc; it++) {
    tsr_mixed_copy_columns(m->es, n, nrhs, b, ldb, r, n);
    if ((rc = product(m, -1, x, ldx, 1, r, n, nrhs))) break;
    double worst = 0; /* the largest ‖r‖ / (‖x‖ cte) over the columns: converged at <= 1 */
    for (int64_t j = 0; j < nrhs; j++) {
      const double q = col_max(m->dt, r, n, n, j) / (col_max(m->dt, x, ldx, n, j) * cte);
      if (!(q <= worst)) worst = q;
    }
    res->iter = it;
    if (worst <= 1) break;
    /* no convergence: the steps spent, a NaN, or GMRES-IR itself no longer reducing the
     * residual (it stays at the level of its own rounding) */
    if (it == o->max_iter || isnan(worst) || (gm && it > 0 && worst > STALL * last)) {
      rc = NO_CONVERGENCE;
      break;
    }
    if (!gm && o->gmres == 0 && it > 0 && worst > 0.5 * last) gm = true; /* classical stalls */
    last = worst;
    if (!gm) {
      if ((rc = solve_low(m, r, n, nrhs))) break;
      for (int64_t j = 0; j < nrhs; j++)
        for (int64_t i = 0; i < n; i++)
          store(m->dt, x, at(i, j, ldx),
                load(m->dt, x, at(i, j, ldx)) + load(m->dt, r, at(i, j, n)));
      continue;
    }
    for (int64_t j = 0; j < nrhs && !rc; j++) {
      rc = gmres(m, (char *)r + at(0, j, n) * m->es, d, &res->gmres_steps);
      for (int64_t i = 0; i < n && !rc; i++)
        store(m->dt, x, at(i, j, ldx), load(m->dt, x, at(i, j, ldx)) + d[i]);
    }
  }
  free(r), free(d);
  return rc;
}

/* The solve's state for an n x n A of `dtype`, tiles nb wide: a Cholesky solve (uplo), or with
 * ipiv an LU one of op(A) (trans). */
tsr_mixed_t tsr_mixed_state(tessera_context_t *ctx, tessera_dtype_t dtype, tessera_uplo_t uplo,
                            int *ipiv, tessera_op_t trans, int64_t n, int64_t nb) {
  const tessera_dtype_t lo = tsr_dtype_complex(dtype) ? TESSERA_C64 : TESSERA_F32;
  return (tsr_mixed_t){.ctx = ctx,
                       .dt = dtype,
                       .lo = lo,
                       .uplo = ipiv ? 0 : (char)uplo,
                       .trans = ipiv ? (char)trans : 'N',
                       .n = n,
                       .nb = nb,
                       .es = tessera_dtype_size(dtype),
                       .les = tessera_dtype_size(lo),
                       .ipiv = ipiv,
                       .mu = 1,
                       .flow = tsr_context_local_flow(ctx)};
}

/* Handles tsr_mixed_norm_begin takes: A's row tiles, and its column tiles for a transposed op(A).
 */
int64_t tsr_mixed_norm_handles(const mixed_t *m) {
  return m->A->mt + m->A->nt;
}

/* ‖op(A)‖∞ of m->A (Hermitian in its uplo triangle, or general: uplo 0, with op m->trans):
 * absum tasks where A's tiles are, the row sums of op(A) into handles over sums[0, n) (zeroed;
 * for a transposed op(A) A's column sums, A's row sums going to sums[n, 2n));
 * tsr_mixed_norm_end waits for them. R: tsr_mixed_norm_handles(m) entries, NULL. */
int tsr_mixed_norm_begin(mixed_t *m, double *sums, tessera_data_t **R) {
  const tessera_matrix_t *A = m->A;
  const bool t = m->ipiv && m->trans != 'N';
  tessera_data_t **rows = t ? R + A->nt : R, **cols = t ? R : NULL;
  int rc = 0;
  for (int64_t i = 0; i < A->mt && !rc; i++)
    rc = tessera_data_register(m->ctx, TESSERA_HOST_NODE, sums + (t ? m->n : 0) + i * A->mb,
                               (size_t)tsr_tile_m(A, i), 1, (size_t)tsr_tile_m(A, i), sizeof *sums,
                               &rows[i]);
  for (int64_t j = 0; t && j < A->nt && !rc; j++)
    rc =
        tessera_data_register(m->ctx, TESSERA_HOST_NODE, sums + j * A->nb, (size_t)tsr_tile_n(A, j),
                              1, (size_t)tsr_tile_n(A, j), sizeof *sums, &cols[j]);
  return rc ? rc : tsr_pxabsum(m->uplo, A, rows, cols);
}

/* The largest row sum of op(A) (NaN kept) once the handles are released (their sums home; over
 * processes, summed). */
int tsr_mixed_norm_end(mixed_t *m, double *sums, tessera_data_t **R, int rc, double *anrm) {
  for (int64_t i = 0; i < tsr_mixed_norm_handles(m); i++)
    if (R[i]) {
      const int r = tessera_data_release(m->ctx, R[i]);
      if (!rc) rc = r;
      R[i] = NULL;
    }
  /* over processes each one's sums are of the tiles it owns */
  if (!rc) rc = tsr_mixed_sum(m, sums, 2 * (size_t)m->n, TESSERA_F64);
  double most = 0;
  for (int64_t i = 0; i < m->n; i++)
    if (!(sums[i] <= most)) most = sums[i];
  *anrm = most;
  return rc;
}

/* ‖op(A)‖∞ now: tsr_mixed_norm_begin's tasks waited for, then tsr_mixed_norm_end. */
int tsr_mixed_norm_now(mixed_t *m, double *sums, tessera_data_t **R, double *anrm) {
  const int rc = tsr_mixed_norm_begin(m, sums, R), w = tessera_wait_all(m->ctx);
  return tsr_mixed_norm_end(m, sums, R, rc ? rc : w, anrm);
}
