/* The tridiagonal divide and conquer as tasks (loops/stedc.c, kernels/cpu/laed.c): eigenvalues
 * against LAPACK's dsterf, the residual ‖T Q − Q Λ‖_F / (‖T‖_F n ε) and the orthogonality
 * ‖I − QᵀQ‖_F / (n ε) below 10, the values-only form's eigenvalues likewise, on random tridiagonals
 * and on ones that deflate (repeated and clustered eigenvalues, zero and tiny couplings,
 * Wilkinson's), tiny and huge scales, leaves of 1 to n rows, and a context of CPU workers (with
 * simulated devices in that build, or GPUs: the merges of both forms then run there, their roots
 * by tessera's own iteration, the values-only form's rows by laed_values tasks); and that
 * iteration (kernels/secular.h) against LAPACK's dlaed4 on the merges'
 * secular equations: its roots where they should be, their residuals within rounding; a merge's
 * product by halves of rows against the whole product. */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <cblas.h>

#include "kernels/cpu/laed.h"
#include "linalg_common.h"
#include "linalg/loops/loops.h"

typedef enum { RANDOM, REPEATED, ZERO_COUPLING, TINY_COUPLING, WILKINSON, CLUSTER } kind_t;

static void make(kind_t kind, int64_t n, double scale, tt_rng_t *r, double *d, double *e) {
  for (int64_t i = 0; i < n; i++) {
    switch (kind) {
    case RANDOM:
      d[i] = tt_uniform(r), e[i] = tt_uniform(r);
      break;
    case REPEATED:
      d[i] = 1, e[i] = i % 5 == 4 ? 0 : 0.5;
      break; /* equal blocks */
    case ZERO_COUPLING:
      d[i] = tt_uniform(r), e[i] = 0;
      break;
    case TINY_COUPLING:
      d[i] = tt_uniform(r), e[i] = i % 3 ? 1e-18 : tt_uniform(r);
      break;
    case WILKINSON:
      d[i] = fabs((double)i - (double)(n - 1) / 2), e[i] = 1;
      break;
    case CLUSTER:
      d[i] = 1 + 1e-13 * tt_uniform(r), e[i] = 1e-12 * tt_uniform(r);
      break;
    }
    d[i] *= scale, e[i] *= scale;
  }
  if (n > 0) e[n - 1] = 0;
}

static void one_case(tessera_context_t *ctx, kind_t kind, int64_t n, int64_t leaf, double scale,
                     uint64_t seed) {
  tt_rng_t r = tt_rng(seed);
  const size_t nn = (size_t)(n * n) + 1;
  double *d = calloc((size_t)n + 1, 8), *e = calloc((size_t)n + 1, 8), *q = calloc(nn, 8);
  double *d0 = calloc((size_t)n + 1, 8), *e0 = calloc((size_t)n + 1, 8), *ref = calloc(n + 1, 8);
  double *g = calloc(nn, 8);
  make(kind, n, scale, &r, d, e);
  memcpy(d0, d, (size_t)n * 8), memcpy(e0, e, (size_t)n * 8), memcpy(ref, d, (size_t)n * 8);
  double *eref = calloc((size_t)n + 1, 8), *dv = calloc((size_t)n + 1, 8);
  double *ev = calloc((size_t)n + 1, 8);
  memcpy(eref, e, (size_t)n * 8), memcpy(dv, d, (size_t)n * 8), memcpy(ev, e, (size_t)n * 8);
  if (n > 0) assert_int_equal(LAPACKE_dsterf((lapack_int)n, ref, eref), 0);
  const int rc = tsr_stedc_dc(ctx, n, d, e, q, n, leaf, NULL);
  if (rc != 0)
    fail_msg("stedc kind %d n %lld leaf %lld: returned %d %s", kind, (long long)n, (long long)leaf,
             rc, tessera_last_error(ctx));
  const int rcv = tsr_stedc_values(ctx, n, dv, ev, leaf);
  if (rcv != 0)
    fail_msg("stedc values kind %d n %lld leaf %lld: returned %d", kind, (long long)n,
             (long long)leaf, rcv);
  double tn = 0, worst = 0, worst_v = 0, res = 0, orth = 0;
  for (int64_t i = 0; i < n; i++) { /* in units of `scale`: no overflow or underflow */
    d0[i] /= scale, e0[i] /= scale;
    tn += d0[i] * d0[i] + (i + 1 < n ? 2 * e0[i] * e0[i] : 0);
  }
  tn = sqrt(tn);
  for (int64_t i = 0; i < n; i++) {
    worst = fmax(worst, fabs(d[i] - ref[i]) / scale);
    worst_v = fmax(worst_v, fabs(dv[i] - ref[i]) / scale);
    if (i > 0 && d[i] < d[i - 1]) fail_msg("stedc n %lld: eigenvalues not ascending", (long long)n);
  }
  for (int64_t j = 0; j < n; j++) /* (T Q - Q Λ)(:, j) */
    for (int64_t i = 0; i < n; i++) {
      double t = d0[i] * q[i + j * n] - d[j] / scale * q[i + j * n];
      if (i > 0) t += e0[i - 1] * q[i - 1 + j * n];
      if (i + 1 < n) t += e0[i] * q[i + 1 + j * n];
      res += t * t;
    }
  if (n > 0) {
    for (int64_t i = 0; i < n; i++) g[i + i * n] = 1;
    cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, (int)n, (int)n, (int)n, -1, q, (int)n, q,
                (int)n, 1, g, (int)n);
    for (size_t i = 0; i < (size_t)(n * n); i++) orth += g[i] * g[i];
  }
  const double eps = 2.220446049250313e-16, scale_n = (double)(n > 0 ? n : 1) * eps;
  const double rv = tn > 0 ? worst / (tn * scale_n) : 0;
  const double rr = tn > 0 ? sqrt(res) / (tn * scale_n) : 0, ro = sqrt(orth) / scale_n;
  const double rvv = tn > 0 ? worst_v / (tn * scale_n) : 0;
  if (!(rv < 10 && rr < 10 && ro < 10 && rvv < 10))
    fail_msg("stedc kind %d n %lld leaf %lld scale %g: values %g residual %g orthogonality %g, "
             "values alone %g",
             kind, (long long)n, (long long)leaf, scale, rv, rr, ro, rvv);
  free(d), free(e), free(q), free(d0), free(e0), free(ref), free(eref), free(g), free(dv);
  free(ev);
}

static void test_stedc_random(void **state) {
  (void)state;
  tessera_context_t *ctx = lc_context(8);
  const int64_t sizes[] = {1, 2, 3, 5, 17, 64, 101, 257};
  const int64_t leaves[] = {1, 4, 25, 1000};
  for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
    for (size_t l = 0; l < sizeof leaves / sizeof *leaves; l++)
      one_case(ctx, RANDOM, sizes[s], leaves[l], 1, 10 * s + l);
  lc_finalize(ctx);
}

static void test_stedc_deflation(void **state) {
  (void)state;
  tessera_context_t *ctx = lc_context(8);
  const kind_t kinds[] = {REPEATED, ZERO_COUPLING, TINY_COUPLING, WILKINSON, CLUSTER};
  const double scales[] = {1, 1e-200, 1e200};
  for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++)
    for (size_t s = 0; s < 3; s++) {
      one_case(ctx, kinds[k], 97, 8, scales[s], 100 + 10 * k + s);
      one_case(ctx, kinds[k], 200, 30, scales[s], 200 + 10 * k + s);
    }
  lc_finalize(ctx);
}

/* A merge's secular equation (after deflation) of order m: two sorted halves of poles of one
 * kind, a coupling vector joining two unit rows. */
static tsr_laed_plan_t *secular_plan(int kind, int64_t m, double rho, tt_rng_t *r) {
  const int64_t n1 = m / 2;
  double *d = malloc((size_t)m * 8), *z = malloc((size_t)m * 8), nz = 0;
  for (int64_t i = 0; i < m; i++) {
    const double u = tt_uniform(r), v = tt_uniform(r) - 0.5;
    d[i] = kind == 1   ? pow(10, -12 * u)                                 /* graded */
           : kind == 2 ? 1 + 1e-10 * u                                    /* clustered */
           : kind == 4 ? (double)(i % n1) / (double)n1 + (i >= n1) * 1e-9 /* near pairs */
           : kind == 5 ? (double)(i % n1) / (double)n1 /* pairs, one in each half */
                       : u;
    z[i] = kind == 3 ? v * pow(10, -15 * tt_uniform(r)) : v; /* tiny weights */
    nz += z[i] * z[i];
  }
  for (int64_t h = 0; h < 2; h++) /* each half ascending */
    for (int64_t i = h * n1 + 1; i < (h ? m : n1); i++)
      for (int64_t j = i; j > h * n1 && d[j - 1] > d[j]; j--) {
        const double t = d[j];
        d[j] = d[j - 1], d[j - 1] = t;
      }
  for (int64_t i = 0; i < m; i++) z[i] /= sqrt(nz / 2);
  tsr_laed_plan_t *p = tsr_laed_deflate(m, n1, d, z, rho);
  free(d), free(z);
  return p;
}

static void test_secular_roots(void **state) {
  (void)state;
  tt_rng_t r = tt_rng(77);
  const double eps = 2.220446049250313e-16;
  for (int kind = 0; kind < 5; kind++)
    for (int t = 0; t < 2; t++) {
      const double rho = t ? 5 : 0.3;
      tsr_laed_plan_t *a = secular_plan(kind, 600, rho, &r);
      tsr_laed_plan_t *b = malloc((size_t)a->bytes);
      assert_non_null(b);
      memcpy(b, a, (size_t)a->bytes);
      const int64_t k = a->k;
      assert_true(k > 2);
      assert_int_equal(tsr_laed_roots(a, 0, k), 0);
      assert_int_equal(tsr_laed_secular(b, tsr_laed_wsq(b), 0, k), 0);
      const double *dl = tsr_laed_d(b, b->dlamda), *w = tsr_laed_d(b, b->w);
      const double *ra = tsr_laed_d(a, a->root), *rb = tsr_laed_d(b, b->root);
      const double *db = tsr_laed_d(b, b->delta);
      const int *ob = tsr_laed_i(b, b->origin);
      for (int64_t j = 0; j < k; j++) {
        /* root j in (d_j, d_{j+1}): from d_j above it, or from d_{j+1} below it */
        if (!((ob[j] == j && db[j] < 0) || (ob[j] == j + 1 && j + 1 < k && db[j] > 0)))
          fail_msg("kind %d rho %g root %lld: origin %d, delta %g", kind, rho, (long long)j, ob[j],
                   db[j]);
        long double g = 1.0L / b->rho, sum = g;
        for (int64_t i = 0; i < k; i++) {
          const long double term =
              (long double)w[i] * w[i] / (((long double)dl[i] - dl[ob[j]]) + db[j]);
          g += term, sum += fabsl(term);
        }
        if (!((double)(fabsl(g) / sum) < 16 * eps &&
              fabs(ra[j] - rb[j]) < 8 * eps * fmax(1, fabs(ra[j]))))
          fail_msg("kind %d rho %g root %lld: residual %g, against dlaed4 %g", kind, rho,
                   (long long)j, (double)(fabsl(g) / sum), fabs(ra[j] - rb[j]));
      }
      free(a), free(b);
    }
}

/* A merge's product by halves of rows (laed.h's groups): Q2's columns of one half's rows are
 * zero in the other's, equal poles across the halves give columns of both, and the merged block
 * equals the one from the same plan with every column counted as both (the whole product), and
 * the one merged by ranges of its rows, each apart. */
static void test_merge_halves(void **state) {
  (void)state;
  tt_rng_t r = tt_rng(91);
  const int64_t m = 300, n1 = m / 2;
  for (int kind = 0; kind < 6; kind++) {
    tsr_laed_plan_t *p = secular_plan(kind, m, 0.7, &r);
    assert_int_equal(tsr_laed_roots(p, 0, p->k), 0);
    tsr_laed_finish(p);
    const int64_t k = p->k, k1 = p->k1, k2 = p->k2;
    assert_true(k1 >= 0 && k2 >= 0 && k1 + k2 <= k);
    if (kind == 0) assert_true(k1 > 0 && k - k1 - k2 > 0);
    if (kind == 5) assert_true(k2 > 0); /* rotations join the halves' columns */
    double *qb = calloc((size_t)(m * m), 8), *q2 = malloc((size_t)(m * m) * 8);
    double *work = malloc((size_t)tsr_laed_work(m) * 8), *a = malloc((size_t)(m * m) * 8);
    for (int64_t j = 0; j < m; j++) /* diag(Q1, Q2): each half's columns in its rows */
      for (int64_t i = j < n1 ? 0 : n1; i < (j < n1 ? n1 : m); i++)
        qb[i + j * m] = tt_uniform(&r) - 0.5;
    memcpy(a, qb, (size_t)(m * m) * 8);
    tsr_laed_regroup(p, a, m, m, q2);
    for (int64_t c = 0; c < k; c++)
      for (int64_t i = 0; i < m; i++)
        if ((c < k1 && i >= n1) || (c >= k1 + k2 && i < n1)) assert_true(q2[i + c * m] == 0);
    tsr_laed_plan_t *whole = malloc((size_t)p->bytes);
    memcpy(whole, p, (size_t)p->bytes);
    whole->k1 = 0, whole->k2 = k;
    memcpy(a, qb, (size_t)(m * m) * 8);
    memcpy(q2, qb, (size_t)(m * m) * 8);
    tsr_laed_merge_host(p, 0, m, qb, m, work);
    tsr_laed_merge_host(whole, 0, m, a, m, work);
    double err = 0, rows_err = 0;
    for (int64_t i = 0; i < m * m; i++) err = fmax(err, fabs(qb[i] - a[i]));
    if (!(err < 1e-12)) fail_msg("kind %d: halves and whole differ by %g", kind, err);
    const int64_t cut[4] = {0, 100, n1, m}; /* the same merge by ranges of rows, apart */
    for (int r = 0; r < 3; r++) tsr_laed_merge_host(p, cut[r], cut[r + 1], q2 + cut[r], m, work);
    for (int64_t i = 0; i < m * m; i++) rows_err = fmax(rows_err, fabs(qb[i] - q2[i]));
    if (!(rows_err < 1e-12)) fail_msg("kind %d: by rows and whole differ by %g", kind, rows_err);
    free(p), free(whole), free(qb), free(q2), free(work), free(a);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_stedc_random), cmocka_unit_test(test_stedc_deflation),
      cmocka_unit_test(test_secular_roots), cmocka_unit_test(test_merge_halves)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
