/* Stage 2 of the eigensolver (kernels/cpu/hb2st.h): random Hermitian bands of every dtype, order
 * and bandwidth reduced to a tridiagonal T by bulge chasing, checked against LAPACK in double
 * precision: T's eigenvalues against the dense band's (zheev), Q2 = Q2 I orthogonal and
 * A Q2 = Q2 T, Q2 applied to two column slices within n ε of Q2 applied to the whole (kd 40:
 * block reflectors of fewer sweeps than kd, several steps a sweep), the steps run
 * in a pipelined order (step (s, j) as soon as (s, j - 1) and (s - 1, j + 1) are done, before
 * (s - 1, j + 2)) equal to the sequential driver bit for bit, and so the pipeline of tasks
 * (loops/hb2st.c) on a context of 3 CPU workers; and the edges: bad arguments, the task kernel's
 * buffers, n = 0, NaN. Residuals are 1-norms scaled by n ε (and ‖A‖₁), ε of the dtype's precision,
 * below 10. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <complex.h>
#include <float.h>
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>

#include "../test_common.h"
#include "kernels/cpu/cpu_blas.h"
#include "kernels/cpu/hb2st.h"
#include "kernels/kernels.h"
#include "linalg/loops/loops.h"
#include "linalg/loops/policy.h"

static const tessera_dtype_t dtypes[] = {TESSERA_F32, TESSERA_F64, TESSERA_C64, TESSERA_C128};

static double eps_of(tessera_dtype_t dt) {
  return tsr_dtype_single(dt) ? FLT_EPSILON : DBL_EPSILON;
}

/* Element i of an array of dtype dt, as a double complex. */
static double complex get(tessera_dtype_t dt, const void *p, size_t i) {
  tsr_scalar_t s = tsr_scalar_load(dt, (const char *)p + i * tessera_dtype_size(dt), 0);
  return s.re + I * s.im;
}

static void put(tessera_dtype_t dt, void *p, size_t i, double complex x) {
  tsr_scalar_store(dt, (char *)p + i * tessera_dtype_size(dt), (tsr_scalar_t){creal(x), cimag(x)});
}

/* A random Hermitian band in lower band storage (ldab = kd + 1 + pad, NaN where nothing may be
 * read, a garbage imaginary part on the diagonal), and its dense double complex copy. */
typedef struct {
  tessera_dtype_t dt;
  int n, kd, ldab;
  void *ab;
  double complex *a; /* n x n, whole */
  double norm;       /* ‖A‖₁ */
} band_t;

static band_t make_band(tessera_dtype_t dt, int n, int kd, int pad, uint64_t seed) {
  band_t b = {dt, n, kd, kd + 1 + pad, NULL, NULL, 0};
  const bool cplx = tsr_dtype_complex(dt);
  tt_rng_t r = tt_rng(seed);
  b.ab = malloc((size_t)b.ldab * (size_t)(n > 0 ? n : 1) * tessera_dtype_size(dt));
  b.a = calloc((size_t)n * (size_t)n + 1, sizeof *b.a);
  for (size_t i = 0; i < (size_t)b.ldab * (size_t)n; i++) put(dt, b.ab, i, NAN);
  for (int j = 0; j < n; j++)
    for (int i = j; i <= j + kd && i < n; i++) {
      double complex x = tt_uniform(&r) + (cplx ? I * tt_uniform(&r) : 0);
      put(dt, b.ab, (size_t)(i - j) + (size_t)j * (size_t)b.ldab, x);
      x = get(dt, b.ab, (size_t)(i - j) + (size_t)j * (size_t)b.ldab); /* rounded */
      if (i == j) x = creal(x);
      b.a[i + (size_t)j * n] = x;
      b.a[j + (size_t)i * n] = conj(x);
    }
  for (int j = 0; j < n; j++) {
    double s = 0;
    for (int i = 0; i < n; i++) s += cabs(b.a[i + (size_t)j * n]);
    b.norm = s > b.norm ? s : b.norm;
  }
  return b;
}

static void free_band(band_t *b) {
  free(b->ab);
  free(b->a);
}

/* ‖X‖₁ of the n x n double complex X. */
static double norm1(const double complex *x, int n) {
  double m = 0;
  for (int j = 0; j < n; j++) {
    double s = 0;
    for (int i = 0; i < n; i++) s += cabs(x[i + (size_t)j * n]);
    m = s > m ? s : m;
  }
  return m;
}

/* The outputs of one reduction. */
typedef struct {
  tsr_hb2st_layout_t lay;
  double *d, *e;
  void *v, *tau;
} result_t;

/* Zeroed outputs for a reduction of b. */
static result_t new_result(const band_t *b) {
  result_t o;
  const size_t es = tessera_dtype_size(b->dt);
  assert_int_equal(tsr_hb2st_layout(b->n, b->kd, &o.lay), 0);
  o.d = calloc((size_t)b->n + 1, sizeof *o.d);
  o.e = calloc((size_t)b->n + 1, sizeof *o.e);
  o.v = calloc((size_t)o.lay.nv + 1, es);
  o.tau = calloc((size_t)o.lay.ntau + 1, es);
  return o;
}

static result_t reduce(const band_t *b) {
  result_t o = new_result(b);
  assert_int_equal(tsr_hb2st(b->dt, b->n, b->kd, b->ab, b->ldab, o.d, o.e, o.v, o.tau, NULL), 0);
  return o;
}

static void free_result(result_t *o) {
  free(o->d);
  free(o->e);
  free(o->v);
  free(o->tau);
}

/* r equal to the driver's outputs o bit for bit: T and every reflector slot in use. */
static void assert_same(const band_t *b, const result_t *r, const result_t *o) {
  const tsr_hb2st_layout_t *L = &o->lay;
  const size_t es = tessera_dtype_size(b->dt);
  if (b->n > 0) assert_memory_equal(r->d, o->d, sizeof *o->d * (size_t)b->n);
  if (b->n > 1) assert_memory_equal(r->e, o->e, sizeof *o->e * (size_t)(b->n - 1));
  for (int s = 0; s < L->sweeps; s++)
    for (int j = 0; j < tsr_hb2st_steps(L, s); j++) {
      const int64_t k = tsr_hb2st_slot(L, s, j);
      const char *rt = (char *)r->tau + k * es, *ot = (char *)o->tau + k * es;
      const char *rv = (char *)r->v + k * L->kd * es, *ov = (char *)o->v + k * L->kd * es;
      if (memcmp(rt, ot, es) || memcmp(rv, ov, L->kd * es))
        for (int i = -1; i < L->kd; i++) { /* the first element that differs, named */
          const char *x = i < 0 ? rt : rv + i * es, *y = i < 0 ? ot : ov + i * es;
          if (memcmp(x, y, es))
            fail_msg("dtype %d n %d kd %d sweep %d step %d: %s %d differs: %.17g against %.17g",
                     b->dt, b->n, b->kd, s, j, i < 0 ? "tau" : "v element", i,
                     creal(get(b->dt, x, 0)), creal(get(b->dt, y, 0)));
        }
    }
}

/* T's eigenvalues against the dense band's. */
static void check_eigenvalues(const band_t *b, const result_t *o) {
  const int n = b->n;
  double *d = malloc(sizeof *d * (size_t)n), *e = malloc(sizeof *e * (size_t)n);
  double *w = malloc(sizeof *w * (size_t)n);
  double complex *a = malloc(sizeof *a * (size_t)n * (size_t)n);
  memcpy(d, o->d, sizeof *d * (size_t)n);
  memcpy(e, o->e, sizeof *e * (size_t)(n - 1));
  memcpy(a, b->a, sizeof *a * (size_t)n * (size_t)n);
  assert_int_equal(LAPACKE_dsterf(n, d, e), 0);
  assert_int_equal(LAPACKE_zheev(LAPACK_COL_MAJOR, 'N', 'L', n, a, n, w), 0);
  double worst = 0;
  for (int i = 0; i < n; i++) worst = fmax(worst, fabs(d[i] - w[i]));
  const double ratio = worst / (fmax(b->norm, DBL_MIN) * n * eps_of(b->dt));
  if (!(ratio < 10))
    fail_msg("%s n %d kd %d: eigenvalues off by %g (ratio %g)", tessera_dtype_name(b->dt), n, b->kd,
             worst, ratio);
  free(d);
  free(e);
  free(w);
  free(a);
}

/* Q2 from the identity; its orthogonality, A Q2 = Q2 T, and two column slices against it. */
static void check_vectors(const band_t *b, const result_t *o) {
  const int n = b->n, m1 = n / 3;
  const size_t es = tessera_dtype_size(b->dt), nn = (size_t)n * (size_t)n;
  void *q = calloc(nn, es), *q2 = calloc(nn, es);
  for (int i = 0; i < n; i++)
    put(b->dt, q, (size_t)i * (n + 1), 1), put(b->dt, q2, (size_t)i * (n + 1), 1);
  assert_int_equal(tsr_hb2st_apply(b->dt, n, b->kd, o->v, o->tau, n, q, n), 0);
  assert_int_equal(tsr_hb2st_apply(b->dt, n, b->kd, o->v, o->tau, m1, q2, n), 0);
  assert_int_equal(
      tsr_hb2st_apply(b->dt, n, b->kd, o->v, o->tau, n - m1, (char *)q2 + (size_t)m1 * n * es, n),
      0);
  double complex *Q = malloc(sizeof *Q * nn), *R = malloc(sizeof *R * nn);
  double slices = 0;
  for (size_t i = 0; i < nn; i++) {
    Q[i] = get(b->dt, q, i);
    slices = fmax(slices, cabs(Q[i] - get(b->dt, q2, i)));
  }
  const double complex one = 1, zero = 0, minus = -1;
  for (size_t i = 0; i < nn; i++) R[i] = i % (n + 1) == 0 ? 1 : 0;
  cblas_zgemm(CblasColMajor, CblasConjTrans, CblasNoTrans, n, n, n, &one, Q, n, Q, n, &minus, R, n);
  const double orth = norm1(R, n) / (n * eps_of(b->dt));
  cblas_zgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, n, n, &one, b->a, n, Q, n, &zero, R, n);
  for (int j = 0; j < n; j++) /* R -= Q T */
    for (int i = 0; i < n; i++) {
      double complex qt = Q[i + (size_t)j * n] * o->d[j];
      if (j > 0) qt += Q[i + (size_t)(j - 1) * n] * o->e[j - 1];
      if (j + 1 < n) qt += Q[i + (size_t)(j + 1) * n] * o->e[j];
      R[i + (size_t)j * n] -= qt;
    }
  const double res = norm1(R, n) / (fmax(b->norm, DBL_MIN) * n * eps_of(b->dt));
  if (!(orth < 10 && res < 10 && slices <= n * eps_of(b->dt)))
    fail_msg("%s n %d kd %d: |Q'Q - I| %g, |AQ - QT| %g, slices differ by %g",
             tessera_dtype_name(b->dt), n, b->kd, orth, res, slices);
  free(q);
  free(q2);
  free(Q);
  free(R);
}

/* The steps in a pipelined order against the driver, bit for bit: wavefront t = 2 s + j, the
 * later sweeps first within one t. */
static void check_pipelined(const band_t *b, const result_t *o) {
  const tsr_hb2st_layout_t *L = &o->lay;
  const size_t es = tessera_dtype_size(b->dt);
  result_t r = new_result(b);
  void *w = calloc((size_t)L->nwork + 1, es), *work = (char *)w + (size_t)L->ldw * b->n * es;
  assert_int_equal(tsr_hb2st_load(b->dt, b->n, b->kd, b->ab, b->ldab, w, L->ldw), 0);
  for (int t = 0; t <= 2 * L->sweeps + L->steps; t++)
    for (int s = t / 2 < L->sweeps - 1 ? t / 2 : L->sweeps - 1; s >= 0 && t - 2 * s <= L->steps;
         s--)
      if (t - 2 * s < tsr_hb2st_steps(L, s))
        assert_int_equal(
            tsr_hb2st_step(b->dt, b->n, b->kd, w, L->ldw, s, t - 2 * s, r.v, r.tau, work), 0);
  assert_int_equal(tsr_hb2st_extract(b->dt, b->n, b->kd, w, L->ldw, r.d, r.e), 0);
  assert_same(b, &r, o);
  free(w);
  free_result(&r);
}

/* The bulge chasing as tasks (loops/hb2st.c) on `ctx`, `group` steps a task, against the
 * driver's outputs `o`, bit for bit. */
static void check_tasks(tessera_context_t *ctx, const band_t *b, const result_t *o, int group) {
  const tsr_hb2st_layout_t *L = &o->lay;
  result_t r = new_result(b);
  void *w = calloc((size_t)L->ldw * (size_t)b->n + 1, tessera_dtype_size(b->dt));
  assert_int_equal(tsr_hb2st_load(b->dt, b->n, b->kd, b->ab, b->ldab, w, L->ldw), 0);
  tsr_hb2st_band_t B;
  assert_int_equal(tsr_hb2st_band_create(ctx, b->dt, b->n, b->kd, w, L->ldw, group, &B), 0);
  assert_true(B.count * B.width >= (L->sweeps ? b->n : 0));
  assert_int_equal(tsr_pxhb2st(&B, r.v, r.tau), 0);
  assert_int_equal(tessera_wait_all(ctx), 0);
  assert_int_equal(tsr_hb2st_band_destroy(&B), 0);
  assert_int_equal(tsr_hb2st_extract(b->dt, b->n, b->kd, w, L->ldw, r.d, r.e), 0);
  assert_same(b, &r, o);
  free(w);
  free_result(&r);
}

/* Calls check(b, o, arg) on a random band b of every dtype, each order of ns[0 .. count - 1] and
 * bandwidths 0 to wider than the matrix (one band wider: the last), o the driver's outputs. */
typedef void check_fn(const band_t *b, const result_t *o, void *arg);
static void each_band(const int *ns, size_t count, uint64_t seed, check_fn *check, void *arg) {
  for (size_t di = 0; di < sizeof dtypes / sizeof *dtypes; di++)
    for (size_t ni = 0; ni < count; ni++) {
      const int n = ns[ni], kds[] = {0, 1, 2, 3, 8, 16, 40, n - 1, n + 2};
      for (size_t ki = 0; ki < sizeof kds / sizeof *kds; ki++) {
        const int kd = kds[ki];
        bool seen = kd < 0 || (kd > n - 1 && ki + 1 < sizeof kds / sizeof *kds);
        for (size_t k = 0; k < ki; k++) seen |= kds[k] == kd;
        if (seen) continue;
        band_t b = make_band(dtypes[di], n, kd, (int)(seed % 3), seed);
        seed++;
        result_t o = reduce(&b);
        check(&b, &o, arg);
        free_result(&o);
        free_band(&b);
      }
    }
}

/* The pipeline of tasks on the context `arg` with tasks of 1, 2, 3 steps and the default. */
static void check_all_groups(const band_t *b, const result_t *o, void *arg) {
  const int groups[] = {1, 2, 3, tsr_hb2st_group(b->n, b->kd, 3)};
  for (size_t g = 0; g < sizeof groups / sizeof *groups; g++) check_tasks(arg, b, o, groups[g]);
}

/* The pipeline of tasks on 3 CPU workers equal to the driver bit for bit: every dtype, orders
 * 0, 1, 2 and up, bandwidths 0 to wider than the matrix, tasks of 1, 2, 3 steps and the default
 * (a task's columns on up to 7 handles, from order 131 on). Order 300, whose long pipelines
 * take most of the time under the sanitizers, is left out in quick mode. */
static void pipelined_tasks(void **state) {
  (void)state;
  tt_watchdog(120);
  tessera_context_t *ctx = tt_cpu_context(3, TESSERA_SCHED_AUTO);
  static const int ns[] = {0, 1, 2, 3, 5, 37, 131, 300};
  each_band(ns, sizeof ns / sizeof *ns - (tt_quick() ? 1 : 0), 500, check_all_groups, ctx);
  assert_int_equal(tessera_finalize(ctx), 0);
}

/* The task kernel refuses buffers that are not the working band's consecutive column blocks
 * covering its steps' columns. */
static void steps_kernel_buffers(void **state) {
  (void)state;
  band_t b = make_band(TESSERA_F64, 20, 3, 0, 7);
  result_t o = reduce(&b);
  const int ldw = o.lay.ldw, width = 4;
  double *w = calloc((size_t)ldw * 20, sizeof *w);
  assert_int_equal(tsr_hb2st_load(TESSERA_F64, 20, 3, b.ab, b.ldab, w, ldw), 0);
  /* steps 0 .. 1 of sweep 0: columns 0 .. 6, blocks 0 and 1 */
  tsr_hb2st_steps_args_t a = {.dtype = TESSERA_F64,
                              .n = 20,
                              .kd = 3,
                              .ldw = ldw,
                              .sweep = 0,
                              .first = 0,
                              .count = 2,
                              .col0 = 0,
                              .width = width,
                              .v = o.v,
                              .tau = o.tau};
  tessera_exec_t ex = {.ndata = 2, .ptr = {w, w + (size_t)width * ldw}, .ld = {ldw, ldw}};
  const int bad = TESSERA_ERR_KERNEL;
  ex.ptr[1] = w + (size_t)width * ldw + 1; /* not the next block */
  assert_int_equal(tsr_cpu_hb2st_steps(&ex, &a), bad);
  ex.ptr[1] = w + (size_t)width * ldw;
  ex.ld[1] = (size_t)ldw + 1;
  assert_int_equal(tsr_cpu_hb2st_steps(&ex, &a), bad);
  ex.ld[1] = (size_t)ldw;
  ex.ndata = 1; /* column 6 not covered */
  assert_int_equal(tsr_cpu_hb2st_steps(&ex, &a), bad);
  ex.ndata = 2;
  a.count = 6; /* sweep 0 has 19 / 3 rounded up = 7 steps; 0 .. 5 reach column 18 */
  assert_int_equal(tsr_cpu_hb2st_steps(&ex, &a), bad);
  a.count = 8; /* past the sweep's steps */
  assert_int_equal(tsr_cpu_hb2st_steps(&ex, &a), bad);
  a.count = 2;
  assert_int_equal(tsr_cpu_hb2st_steps(&ex, &a), 0);
  free(w);
  free_result(&o);
  free_band(&b);
}

/* T's eigenvalues, Q2 and the steps in a pipelined order. */
static void check_driver(const band_t *b, const result_t *o, void *arg) {
  (void)arg;
  if (b->n == 0) return;
  check_eigenvalues(b, o);
  check_vectors(b, o);
  check_pipelined(b, o);
}

static void random_bands(void **state) {
  (void)state;
  tt_watchdog(120);
  static const int ns[] = {0, 1, 2, 3, 5, 37, 100, 131};
  each_band(ns, sizeof ns / sizeof *ns, 1, check_driver, NULL);
}

/* kd = 0 and kd = 1: T's diagonal is the band's, its sub-diagonal the band's (kd = 1; real
 * dtypes) or its moduli (complex: phases), and Q2 = I (a diagonal of phases for complex kd = 1). */
static void trivial_bands(void **state) {
  (void)state;
  for (size_t di = 0; di < sizeof dtypes / sizeof *dtypes; di++)
    for (int kd = 0; kd <= 1; kd++) {
      const int n = 9;
      band_t b = make_band(dtypes[di], n, kd, 0, 99);
      result_t o = reduce(&b);
      const bool cplx = tsr_dtype_complex(b.dt);
      void *q = calloc(n * n, tessera_dtype_size(b.dt));
      for (int i = 0; i < n; i++) put(b.dt, q, (size_t)i * (n + 1), 1);
      assert_int_equal(tsr_hb2st_apply(b.dt, n, kd, o.v, o.tau, n, q, n), 0);
      for (int i = 0; i < n; i++) {
        assert_true(o.d[i] == creal(b.a[i * (n + 1)]));
        const double complex sub = kd ? b.a[i * (n + 1) + 1] : 0;
        if (i + 1 < n && !cplx) assert_true(o.e[i] == creal(sub));
        if (i + 1 < n && cplx) assert_true(fabs(fabs(o.e[i]) - cabs(sub)) <= 4 * eps_of(b.dt));
        for (int j = 0; j < n; j++) {
          const double complex x = get(b.dt, q, (size_t)i + (size_t)j * n);
          if (i != j) assert_true(x == 0);
          if (i == j && !(kd && cplx)) assert_true(x == 1);
          if (i == j && kd && cplx) assert_true(fabs(cabs(x) - 1) <= 4 * eps_of(b.dt));
        }
      }
      free(q);
      free_result(&o);
      free_band(&b);
    }
}

static void bad_arguments(void **state) {
  (void)state;
  band_t b = make_band(TESSERA_F64, 6, 2, 0, 5);
  result_t o = reduce(&b);
  double d[6], e[6], w[64], scratch[4], E[36] = {0};
  const int bad = TESSERA_ERR_KERNEL;
  assert_int_equal(tsr_hb2st((tessera_dtype_t)7, 6, 2, b.ab, 3, d, e, o.v, o.tau, NULL), bad);
  assert_int_equal(tsr_hb2st(TESSERA_F64, -1, 2, b.ab, 3, d, e, o.v, o.tau, NULL), bad);
  assert_int_equal(tsr_hb2st(TESSERA_F64, 6, -1, b.ab, 3, d, e, o.v, o.tau, NULL), bad);
  assert_int_equal(tsr_hb2st(TESSERA_F64, 6, 2, b.ab, 2, d, e, o.v, o.tau, NULL), bad);
  assert_int_equal(tsr_hb2st(TESSERA_F64, 6, 2, NULL, 3, d, e, o.v, o.tau, NULL), bad);
  assert_int_equal(tsr_hb2st(TESSERA_F64, 6, 2, b.ab, 3, NULL, e, o.v, o.tau, NULL), bad);
  assert_int_equal(tsr_hb2st(TESSERA_F64, 6, 2, b.ab, 3, d, NULL, o.v, o.tau, NULL), bad);
  assert_int_equal(tsr_hb2st(TESSERA_F64, 6, 2, b.ab, 3, d, e, NULL, o.tau, NULL), bad);
  assert_int_equal(tsr_hb2st(TESSERA_F64, 6, 2, b.ab, 3, d, e, o.v, NULL, NULL), bad);
  assert_int_equal(tsr_hb2st_load(TESSERA_F64, 6, 2, b.ab, 3, w, 3), bad); /* ldw < 2 kd */
  assert_int_equal(tsr_hb2st_load(TESSERA_F64, 6, 2, b.ab, 3, w, 4), 0);
  assert_int_equal(tsr_hb2st_step(TESSERA_F64, 6, 2, w, 4, 5, 0, o.v, o.tau, scratch), bad);
  assert_int_equal(tsr_hb2st_step(TESSERA_F64, 6, 2, w, 4, -1, 0, o.v, o.tau, scratch), bad);
  assert_int_equal(tsr_hb2st_step(TESSERA_F64, 6, 2, w, 4, 0, 3, o.v, o.tau, scratch), bad);
  assert_int_equal(tsr_hb2st_step(TESSERA_F64, 6, 2, w, 4, 0, 0, o.v, o.tau, NULL), bad);
  assert_int_equal(tsr_hb2st_step(TESSERA_F64, 6, 2, w, 3, 0, 0, o.v, o.tau, scratch), bad);
  assert_int_equal(tsr_hb2st_extract(TESSERA_F64, 6, 2, w, 4, d, NULL), bad);
  assert_int_equal(tsr_hb2st_apply(TESSERA_F64, 6, 2, o.v, o.tau, 6, E, 5), bad);
  assert_int_equal(tsr_hb2st_apply(TESSERA_F64, 6, 2, o.v, o.tau, -1, E, 6), bad);
  assert_int_equal(tsr_hb2st_apply(TESSERA_F64, 6, 2, NULL, o.tau, 6, E, 6), bad);
  assert_int_equal(tsr_hb2st_apply(TESSERA_F64, 6, 2, o.v, o.tau, 6, NULL, 6), bad);
  assert_int_equal(tsr_hb2st_apply((tessera_dtype_t)-1, 6, 2, o.v, o.tau, 6, E, 6), bad);
  for (int i = 0; i < 36; i++) assert_true(E[i] == 0); /* untouched */
  assert_true(tsr_hb2st_reflectors(-1, 2, NULL) < 0 && tsr_hb2st_work_size(TESSERA_F64, 3, -2) < 0);
  /* n = 0 and the empty calls */
  assert_int_equal(tsr_hb2st(TESSERA_C128, 0, 4, NULL, 5, NULL, NULL, NULL, NULL, NULL), 0);
  assert_int_equal(tsr_hb2st_apply(TESSERA_C64, 0, 4, NULL, NULL, 3, NULL, 1), 0);
  assert_int_equal(tsr_hb2st_apply(TESSERA_F64, 6, 2, o.v, o.tau, 0, NULL, 6), 0);
  assert_int_equal(tsr_hb2st_reflectors(0, 4, NULL), 0);
  int64_t nv = -1;
  assert_int_equal(tsr_hb2st_reflectors(1, 4, &nv), 0);
  assert_int_equal(nv, 0);
  free_result(&o);
  free_band(&b);
}

/* NaN in the band: no failure, no hang, NaN in d or e. */
static void nan_input(void **state) {
  (void)state;
  tt_watchdog(30);
  for (size_t di = 0; di < sizeof dtypes / sizeof *dtypes; di++) {
    band_t b = make_band(dtypes[di], 40, 5, 0, 17);
    put(b.dt, b.ab, 3 + 10 * (size_t)b.ldab, NAN);
    result_t o = reduce(&b);
    bool seen = false;
    for (int i = 0; i < 40; i++) seen |= isnan(o.d[i]) || (i < 39 && isnan(o.e[i]));
    assert_true(seen);
    void *q = calloc(40 * 40, tessera_dtype_size(b.dt));
    assert_int_equal(tsr_hb2st_apply(b.dt, 40, 5, o.v, o.tau, 40, q, 40), 0);
    free(q);
    free_result(&o);
    free_band(&b);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(random_bands),    cmocka_unit_test(trivial_bands),
      cmocka_unit_test(bad_arguments),   cmocka_unit_test(nan_input),
      cmocka_unit_test(pipelined_tasks), cmocka_unit_test(steps_kernel_buffers),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
