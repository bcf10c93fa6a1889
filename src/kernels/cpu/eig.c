/* CPU kernels of the eigensolver: the working copy of A's triangle with its scan (eig_prepare),
 * bulge chasing, whole or a few steps of one sweep as a task on the working band's column blocks,
 * and its back-transformation (hb2st.c, hb2st_apply.c), LAPACK's divide and conquer (dstedc) or
 * root-free QR (dsterf) on the real tridiagonal, and the merges of tessera's divide and conquer
 * (laed.c). */
#include <complex.h>
#include <float.h>
#include <math.h>
#include <lapacke.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "device/cpu/cpu.h"
#include "kernels/cpu/cpu_blas.h"
#include "kernels/cpu/hb2st.h"
#include "kernels/eig.h"

int tsr_cpu_hb2st(const tessera_exec_t *ex, void *args) {
  const tsr_hb2st_args_t *a = args;
  if (!tsr_dtype_valid(a->dtype) || ex->ndata < 5 || a->n < 0 || a->kd < 0 || ex->ld[0] > INT32_MAX)
    return TESSERA_ERR_KERNEL;
  return tsr_hb2st(a->dtype, a->n, a->kd, ex->ptr[0], (int)ex->ld[0], ex->ptr[1], ex->ptr[2],
                   ex->ptr[3], ex->ptr[4], NULL);
}

/* Whether the task's buffers are the working band's consecutive blocks of columns, from col0 in
 * blocks of `width`, in one allocation of leading dimension ldw, covering the columns of the
 * task's steps. */
static bool steps_buffers_valid(const tessera_exec_t *ex, const tsr_hb2st_steps_args_t *a,
                                const tsr_hb2st_layout_t *L, const char *band, size_t es) {
  const int64_t cols = (int64_t)ex->ndata * a->width;
  for (int i = 0; i < ex->ndata; i++)
    if (ex->ld[i] != (size_t)a->ldw ||
        ex->ptr[i] != band + ((size_t)a->col0 + (size_t)i * (size_t)a->width) * (size_t)a->ldw * es)
      return false;
  int first, last, c0, c1;
  tsr_hb2st_columns(L, a->sweep, a->first, &first, &c1);
  tsr_hb2st_columns(L, a->sweep, a->first + a->count - 1, &c0, &last);
  return first >= a->col0 && last < a->col0 + cols;
}

int tsr_cpu_hb2st_steps(const tessera_exec_t *ex, void *args) {
  const tsr_hb2st_steps_args_t *a = args;
  tsr_hb2st_layout_t L;
  if (!tsr_dtype_valid(a->dtype) || tsr_hb2st_layout(a->n, a->kd, &L) || ex->ndata < 1 ||
      a->width < 1 || a->col0 < 0 || a->ldw < L.ldw || a->first < 0 || a->count < 1 ||
      a->first + a->count > tsr_hb2st_steps(&L, a->sweep) || !a->v || !a->tau)
    return TESSERA_ERR_KERNEL;
  const size_t es = tessera_dtype_size(a->dtype);
  /* the band's first column, from buffer 0: the blocks are views of one allocation */
  char *band = (char *)ex->ptr[0] - (size_t)a->col0 * (size_t)a->ldw * es;
  if (!steps_buffers_valid(ex, a, &L, band, es)) return TESSERA_ERR_KERNEL;
  double complex stack[256], *work = L.kd <= 256 ? stack : malloc((size_t)L.kd * es);
  if (!work) return TESSERA_ERR_NOMEM;
  int rc = 0;
  for (int j = a->first; j < a->first + a->count && !rc; j++)
    rc = tsr_hb2st_step(a->dtype, a->n, a->kd, band, a->ldw, a->sweep, j, a->v, a->tau, work);
  if (work != stack) free(work);
  return rc;
}

int tsr_cpu_hb2st_apply(const tessera_exec_t *ex, void *args) {
  const tsr_hb2st_apply_args_t *a = args;
  if (!tsr_dtype_valid(a->dtype) || ex->ndata < 3 || ex->ld[2] > INT32_MAX)
    return TESSERA_ERR_KERNEL;
  return tsr_hb2st_apply(a->dtype, a->n, a->kd, ex->ptr[0], ex->ptr[1], a->m, ex->ptr[2],
                         (int)ex->ld[2]);
}

int tsr_cpu_stedc(const tessera_exec_t *ex, void *args) {
  const tsr_stedc_args_t *a = args;
  const int64_t rows = a->rows > 0 ? a->rows : a->n;
  if (a->n < 0 || ex->ndata < (a->vectors ? 3 : 2) || a->row < 0 || a->row + a->n > rows ||
      (a->vectors && ex->ld[2] < (size_t)rows))
    return TESSERA_ERR_KERNEL;
  if (a->n == 0) return 0;
  const lapack_int n = a->n;
  double *z = ex->ptr[2];
  for (int64_t j = 0; j < n && a->vectors && rows > n; j++) { /* the rows outside T's block */
    memset(z + (size_t)j * ex->ld[2], 0, (size_t)a->row * sizeof *z);
    memset(z + (size_t)j * ex->ld[2] + a->row + n, 0, (size_t)(rows - a->row - n) * sizeof *z);
  }
  const int prev = a->threads > 1 ? tsr_cpu_blas_threads(a->threads) : 0;
  const lapack_int info = a->vectors ? LAPACKE_dstedc(LAPACK_COL_MAJOR, 'I', n, ex->ptr[0],
                                                      ex->ptr[1], z + a->row, (lapack_int)ex->ld[2])
                                     : LAPACKE_dsterf(n, ex->ptr[0], ex->ptr[1]);
  if (prev > 0) tsr_cpu_blas_threads(prev);
  return info < 0 ? TESSERA_ERR_KERNEL : (int)info;
}

int tsr_cpu_laed_rows(const tessera_exec_t *ex, void *args) {
  const tsr_laed_rows_args_t *a = args;
  if (ex->ndata < 2 || a->c0 < 0 || a->count < 1 || a->r < 0) return TESSERA_ERR_KERNEL;
  const double *q = ex->ptr[0];
  double *z = ex->ptr[1];
  const size_t ld = ex->ld[0], r = (size_t)a->r;
  for (int64_t c = a->c0; c < a->c0 + a->count; c++)
    z[c] = q[(size_t)c * ld + r] + (a->two ? q[(size_t)c * ld + r + 1] : 0);
  return 0;
}

int tsr_cpu_laed_update(const tessera_exec_t *ex, void *args) {
  (void)ex;
  const tsr_laed_update_args_t *a = args;
  if (a->phase == 0) {
    tsr_laed_weights(a->plan, a->i0, a->i1, a->wt);
    return 0;
  }
  double *c = malloc((size_t)(a->plan->k > 0 ? a->plan->k : 1) * sizeof *c);
  if (!c) return TESSERA_ERR_NOMEM;
  tsr_laed_row_product(a->plan, a->q2, a->wt, a->i0, a->i1, a->u, c);
  free(c);
  return 0;
}

int tsr_cpu_laed_values(const tessera_exec_t *ex, void *args) {
  const tsr_laed_values_args_t *a = args;
  const int64_t m = a->plan.m, k = a->plan.k;
  if (ex->ndata < 2 || k <= 2) return TESSERA_ERR_KERNEL;
  const tsr_laed_plan_t *p = ex->ptr[0]; /* the plan's copy in this memory: its header first */
  double *q2 = ex->ptr[1], *wt = q2 + 2 * m, *c = malloc((size_t)k * sizeof *c);
  if (!c) return TESSERA_ERR_NOMEM;
  tsr_laed_weights(p, 0, k, wt);
  tsr_laed_row_product(p, q2, wt, 0, k, wt + k, c);
  free(c);
  return 0;
}

int tsr_cpu_laed_roots(const tessera_exec_t *ex, void *args) {
  (void)ex;
  const tsr_laed_roots_args_t *a = args;
  return tsr_laed_roots(a->plan, a->j0, a->j1) < 0 ? TESSERA_ERR_NOMEM : 0;
}

int tsr_cpu_laed_secular(const tessera_exec_t *ex, void *args) {
  const tsr_laed_secular_args_t *a = args;
  if (ex->ndata < 1 || a->plan.k <= 2) return TESSERA_ERR_KERNEL;
  tsr_laed_plan_t *p = ex->ptr[0]; /* the plan's copy in this memory: its header first */
  (void)tsr_laed_secular(p, a->wsq, 0, a->plan.k);
  return 0;
}

int tsr_cpu_laed_merge(const tessera_exec_t *ex, void *args) {
  const tsr_laed_merge_args_t *a = args;
  if (ex->ndata < 3 || a->a < 0 || a->row < 0 || a->r0 < 0 || a->r1 <= a->r0 || a->r1 > a->plan.m)
    return TESSERA_ERR_KERNEL;
  const size_t ld = ex->ld[0];
  double *qb = (double *)ex->ptr[0] + (size_t)a->a * ld + (size_t)a->row;
  tsr_laed_merge_host(ex->ptr[1], a->r0, a->r1, qb, (int64_t)ld, ex->ptr[2]);
  return 0;
}

/* The column segments of A's lower triangle from the diagonal (len entries), by dtype: the
 * largest modulus into *m, and whether a NaN or an infinity is among them. Each loop keeps
 * its maximum and flags apart, which lets the compiler vectorize it. */
static bool column_d(const double *c, int64_t len, double *m) {
  double big = 0;
  int nf = 0;
  for (int64_t i = 0; i < len; i++) {
    const double x = fabs(c[i]);
    big = x > big ? x : big;
    nf |= !(x <= DBL_MAX);
  }
  *m = big;
  return nf;
}

static bool column_s(const float *c, int64_t len, double *m) {
  float big = 0;
  int nf = 0;
  for (int64_t i = 0; i < len; i++) {
    const float x = fabsf(c[i]);
    big = x > big ? x : big;
    nf |= !(x <= FLT_MAX);
  }
  *m = big;
  return nf;
}

/* Complex: the squared moduli's largest, in double (from f32 parts neither overflows nor
 * underflows); from f64 parts the exact moduli where the parts are too large or small for
 * squares. */
static bool column_c(const float *c, int64_t len, double *m) {
  double big = 0;
  int nf = 0;
  for (int64_t i = 0; i < len; i++) {
    const double re = c[2 * i], im = c[2 * i + 1], s = re * re + im * im;
    big = s > big ? s : big;
    nf |= !(fabs(re) <= FLT_MAX) | !(fabs(im) <= FLT_MAX);
  }
  *m = sqrt(big);
  return nf;
}

static bool column_z(const double *c, int64_t len, double *m) {
  double big = 0, top = 0;
  int nf = 0;
  for (int64_t i = 0; i < len; i++) {
    const double re = c[2 * i], im = c[2 * i + 1], s = re * re + im * im;
    const double ar = fabs(re), ai = fabs(im), part = ar > ai ? ar : ai;
    big = s > big ? s : big;
    top = part > top ? part : top;
    nf |= !(ar <= DBL_MAX) | !(ai <= DBL_MAX);
  }
  *m = sqrt(big);
  if (!nf && top > 0 && (top > 0x1p500 || top < 0x1p-500)) {
    double e = 0;
    for (int64_t i = 0; i < len; i++) {
      const double h = hypot(c[2 * i], c[2 * i + 1]);
      e = h > e ? h : e;
    }
    *m = e;
  }
  return nf;
}

static bool lower_column(tessera_dtype_t dt, const void *c, int64_t len, double *m) {
  switch (dt) {
  case TESSERA_F64:
    return column_d(c, len, m);
  case TESSERA_F32:
    return column_s(c, len, m);
  case TESSERA_C128:
    return column_z(c, len, m);
  default:
    return column_c(c, len, m);
  }
}

int tsr_cpu_eig_prepare(const tessera_exec_t *ex, void *args) {
  (void)ex;
  const tsr_eig_prepare_args_t *a = args;
  if (!tsr_dtype_valid(a->dtype) || (a->uplo != 'L' && a->uplo != 'U') || a->j0 < 0 || a->j1 > a->n)
    return TESSERA_ERR_KERNEL;
  const size_t es = tessera_dtype_size(a->dtype), lda = (size_t)a->lda, ldh = (size_t)a->ldh;
  const bool in_place = a->h == a->a && ldh == lda, cplx = tsr_dtype_complex(a->dtype);
  double amax = 0;
  int64_t bad = 0;
  if (a->uplo == 'L') { /* column by column: scanned, copied whole, the diagonal made real */
    for (int64_t j = a->j0; j < a->j1; j++) {
      const char *c = (const char *)a->a + ((size_t)j + (size_t)j * lda) * es;
      double m;
      if (lower_column(a->dtype, c, a->n - j, &m) && !bad) bad = j + 1;
      if (m > amax) amax = m;
      if (!a->h) continue;
      char *to = (char *)a->h + ((size_t)j + (size_t)j * ldh) * es;
      if (!in_place) memcpy(to, c, (size_t)(a->n - j) * es);
      if (!cplx) continue;
      const tsr_scalar_t d = tsr_scalar_load(a->dtype, c, 0);
      if (d.im != 0) tsr_scalar_store(a->dtype, to, (tsr_scalar_t){d.re, 0});
    }
    *a->amax = amax, *a->bad = bad;
    return 0;
  }
  for (int64_t j = a->j0; j < a->j1; j++) /* conj(A(j, i)) of the upper triangle, by rows */
    for (int64_t i = j; i < a->n; i++) {
      tsr_scalar_t v =
          tsr_scalar_load(a->dtype, (const char *)a->a + ((size_t)j + (size_t)i * lda) * es, 0);
      const double m = v.im == 0 ? fabs(v.re) : hypot(v.re, v.im);
      if (!isfinite(m) && (!bad || i + 1 < bad)) bad = i + 1;
      if (m > amax) amax = m;
      if (!a->h) continue;
      v.im = i == j ? 0 : -v.im;
      tsr_scalar_store(a->dtype, (char *)a->h + ((size_t)i + (size_t)j * ldh) * es, v);
    }
  *a->amax = amax, *a->bad = bad;
  return 0;
}
