/* One merge of the tridiagonal divide and conquer (laed.h): the plan on the host (deflation as
 * LAPACK's dlaed2, the roots by its dlaed4) and its execution on host memory. */
#include <float.h>
#include <stdbool.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cpu/cpu_blas.h"
#include "kernels/cpu/laed.h"
#include "kernels/secular.h"

/* LAPACK's root of the secular equation (no LAPACKE interface). */
void dlaed4_(const int *n, const int *i, const double *d, const double *z, double *delta,
             const double *rho, double *dlam, int *info);

static int64_t up8(int64_t b) {
  return (b + 7) / 8 * 8;
}

/* The plan's allocation for order m: every array sized for k = m. */
static tsr_laed_plan_t *plan_alloc(int64_t m, int64_t n1) {
  int64_t at = up8((int64_t)sizeof(tsr_laed_plan_t)), off[12];
  const int64_t bytes[12] = {32 * m, 4 * m, 4 * m, 8 * m, 8 * m, 8 * m,
                             4 * m,  8 * m, 32,    8 * m, 4 * m, 8 * m};
  for (int i = 0; i < 12; i++) off[i] = at, at += up8(bytes[i]);
  tsr_laed_plan_t *p = calloc(1, (size_t)at);
  if (!p) return NULL;
  *p = (tsr_laed_plan_t){.m = m,
                         .n1 = n1,
                         .bytes = at,
                         .rot = off[0],
                         .src = off[1],
                         .perm = off[2],
                         .dlamda = off[3],
                         .w = off[4],
                         .root = off[5],
                         .origin = off[6],
                         .delta = off[7],
                         .vec2 = off[8],
                         .dval = off[9],
                         .out = off[10],
                         .lambda = off[11]};
  return p;
}

/* Sorting indices by a key array. */
typedef struct {
  double key;
  int64_t at;
} keyed_t;

static int by_key(const void *x, const void *y) {
  const keyed_t *a = x, *b = y;
  return a->key < b->key ? -1 : a->key > b->key ? 1 : (a->at > b->at) - (a->at < b->at);
}

/* The plan's k columns grouped by the rows where they can be nonzero (laed.h: src, perm, k1,
 * k2): a block column has its own half's rows, and a rotation gives both of its columns the
 * rows of either. `kind` and `col`: scratch of m bytes and k ints. */
static void group(tsr_laed_plan_t *p, unsigned char *kind, int *col) {
  const int64_t m = p->m, k = p->k;
  int *src = tsr_laed_i(p, p->src), *perm = tsr_laed_i(p, p->perm);
  const double *rot = tsr_laed_d(p, p->rot);
  for (int64_t c = 0; c < m; c++) kind[c] = c < p->n1 ? 1 : 2;
  for (int64_t r = 0; r < p->nrot; r++) {
    const int64_t x = (int64_t)rot[4 * r], y = (int64_t)rot[4 * r + 1];
    kind[x] = kind[y] = kind[x] | kind[y];
  }
  memcpy(col, src, (size_t)k * sizeof *col);
  /* the first half's rows, both, the second's; with k <= 2 (S given whole in vec2, its rows in
   * the secular order) every column as both, in that order */
  const unsigned char order[3] = {1, 3, 2};
  int64_t g = 0, count[3] = {0, 0, 0};
  for (int t = 0; t < 3; t++)
    for (int64_t i = 0; i < k; i++) {
      const bool in_group = k <= 2 ? order[t] == 3 : kind[col[i]] == order[t];
      if (in_group) perm[g] = (int)i, src[g++] = col[i], count[t]++;
    }
  p->k1 = count[0], p->k2 = count[1];
}

tsr_laed_plan_t *tsr_laed_deflate(int64_t m, int64_t n1, const double *D, const double *z,
                                  double rho) {
  tsr_laed_plan_t *p = plan_alloc(m, n1);
  keyed_t *o = malloc((size_t)m * sizeof *o), *dl = malloc((size_t)m * sizeof *dl);
  double *ds = malloc((size_t)m * sizeof *ds), *zs = malloc((size_t)m * sizeof *zs);
  if (!p || !o || !dl || !ds || !zs) {
    free(p), free(o), free(dl), free(ds), free(zs);
    return NULL;
  }
  /* z of norm 1 (it joins two unit rows), rho > 0: a negative rho is z's second half negated */
  const double h = 1 / sqrt(2.0);
  for (int64_t i = 0; i < m; i++) o[i] = (keyed_t){D[i], i};
  qsort(o, (size_t)m, sizeof *o, by_key);
  double dmax = 0, zmax = 0;
  for (int64_t i = 0; i < m; i++) {
    const int64_t c = o[i].at;
    ds[i] = D[c];
    zs[i] = (rho < 0 && c >= n1 ? -z[c] : z[c]) * h;
    dmax = fmax(dmax, fabs(ds[i])), zmax = fmax(zmax, fabs(zs[i]));
  }
  p->rho = fabs(2 * rho);
  const double tol = 8 * DBL_EPSILON * fmax(dmax, zmax);
  double *rot = tsr_laed_d(p, p->rot), *dlamda = tsr_laed_d(p, p->dlamda), *w = tsr_laed_d(p, p->w);
  int *src = tsr_laed_i(p, p->src);
  int64_t k = 0, nd = 0, pj = -1;
  for (int64_t j = 0; j < m; j++) {
    if (p->rho * fabs(zs[j]) <= tol) { /* a negligible weight: deflated as it is */
      dl[nd++] = (keyed_t){ds[j], o[j].at};
      continue;
    }
    if (pj < 0) {
      pj = j;
      continue;
    }
    /* close to the previous pole: a rotation zeroes pj's weight */
    double s = zs[pj], c = zs[j];
    const double tau = hypot(c, s), t = ds[j] - ds[pj];
    c /= tau, s = -s / tau;
    if (fabs(t * c * s) <= tol) {
      zs[j] = tau, zs[pj] = 0;
      double *r = rot + 4 * p->nrot++;
      r[0] = (double)o[pj].at, r[1] = (double)o[j].at, r[2] = c, r[3] = s;
      const double t2 = ds[pj] * c * c + ds[j] * s * s;
      ds[j] = ds[pj] * s * s + ds[j] * c * c;
      dl[nd++] = (keyed_t){t2, o[pj].at};
    } else {
      dlamda[k] = ds[pj], w[k] = zs[pj], src[k++] = (int)o[pj].at;
    }
    pj = j;
  }
  if (pj >= 0) dlamda[k] = ds[pj], w[k] = zs[pj], src[k++] = (int)o[pj].at;
  p->k = k;
  qsort(dl, (size_t)nd, sizeof *dl, by_key);
  double *dval = tsr_laed_d(p, p->dval);
  for (int64_t i = 0; i < nd; i++) src[k + i] = (int)dl[i].at, dval[k + i] = dl[i].key;
  /* o's and dl's memory as group's scratch (m bytes, k ints) */
  group(p, (unsigned char *)o, (int *)dl);
  free(o), free(dl), free(ds), free(zs);
  return p;
}

int tsr_laed_roots(tsr_laed_plan_t *p, int64_t j0, int64_t j1) {
  const int k = (int)p->k;
  if (j1 <= j0 || k == 0) return 0;
  double *delta = malloc((size_t)k * sizeof *delta);
  if (!delta) return p->info = -1;
  const double *dlamda = tsr_laed_d(p, p->dlamda), *w = tsr_laed_d(p, p->w);
  double *root = tsr_laed_d(p, p->root), *dj = tsr_laed_d(p, p->delta);
  double *vec2 = tsr_laed_d(p, p->vec2);
  int *origin = tsr_laed_i(p, p->origin), info = 0;
  for (int64_t j = j0; j < j1 && !info; j++) {
    const int i = (int)j + 1;
    dlaed4_(&k, &i, dlamda, w, delta, &p->rho, &root[j], &info);
    if (k <= 2) { /* dlaed4 gives the secular problem's eigenvector itself */
      for (int r = 0; r < k; r++) vec2[r + j * k] = delta[r];
      continue;
    }
    /* the nearer pole of the root's interval as its origin */
    const int64_t o = j + 1 < k && fabs(delta[j + 1]) < fabs(delta[j]) ? j + 1 : j;
    origin[j] = (int)o, dj[j] = delta[o];
  }
  free(delta);
  if (info) p->info = info;
  return info;
}

double tsr_laed_wsq(const tsr_laed_plan_t *p) {
  const double *w = tsr_laed_d(p, p->w);
  double s = 0;
  for (int64_t j = 0; j < p->k; j++) s += w[j] * w[j];
  return s;
}

int tsr_laed_secular(tsr_laed_plan_t *p, double wsq, int64_t j0, int64_t j1) {
  const int64_t k = p->k;
  const double *dlamda = tsr_laed_d(p, p->dlamda), *w = tsr_laed_d(p, p->w);
  double *root = tsr_laed_d(p, p->root), *dj = tsr_laed_d(p, p->delta);
  int *origin = tsr_laed_i(p, p->origin);
  for (int64_t j = j0; j < j1 && k > 2; j++) {
    tsr_secular_t s;
    tsr_secular_start(&s, k, j, dlamda, p->rho, wsq);
    int done = 0;
    while (!done) {
      tsr_secular_sums_t sum = {0, 0, 0, 0};
      tsr_secular_add(&s, dlamda, w, 0, k, 1, &sum);
      done = tsr_secular_step(&s, dlamda, &sum);
    }
    if (done < 0) return p->info = (int)j + 1;
    origin[j] = (int)s.o, dj[j] = -s.tau, root[j] = dlamda[s.o] + s.tau;
  }
  return 0;
}

void tsr_laed_finish(tsr_laed_plan_t *p) {
  const int64_t m = p->m, k = p->k;
  const double *root = tsr_laed_d(p, p->root), *dval = tsr_laed_d(p, p->dval);
  double *lambda = tsr_laed_d(p, p->lambda);
  int *out = tsr_laed_i(p, p->out);
  for (int64_t i = 0, j = k, q = 0; q < m; q++) { /* two ascending lists merged */
    const bool take_root = i < k && (j >= m || root[i] <= dval[j]);
    out[q] = (int)(take_root ? i : j);
    lambda[q] = take_root ? root[i++] : dval[j++];
  }
}

void tsr_laed_weights(const tsr_laed_plan_t *p, int64_t i0, int64_t i1, double *wt) {
  const int64_t k = p->k;
  const double *dl = tsr_laed_d(p, p->dlamda), *w = tsr_laed_d(p, p->w);
  const double *dj = tsr_laed_d(p, p->delta);
  const int *origin = tsr_laed_i(p, p->origin);
  for (int64_t i = i0; i < i1; i++) {
    double x = (dl[i] - dl[origin[i]]) + dj[i];
    for (int64_t j = 0; j < k; j++)
      if (j != i) x *= ((dl[i] - dl[origin[j]]) + dj[j]) / (dl[i] - dl[j]);
    wt[i] = copysign(sqrt(-x), w[i]);
  }
}

/* Column j of S (k > 2): wt_i / (dlamda_i - root j) for i = perm[r] at row r, normalized, into
 * c. */
static void secular_column(const tsr_laed_plan_t *p, const double *wt, int64_t j, double *c) {
  const int64_t k = p->k;
  const double *dl = tsr_laed_d(p, p->dlamda), *dj = tsr_laed_d(p, p->delta);
  const double pole = dl[tsr_laed_i(p, p->origin)[j]];
  const int *perm = tsr_laed_i(p, p->perm);
  double nrm = 0;
  for (int64_t r = 0; r < k; r++) {
    const int64_t i = perm[r];
    c[r] = wt[i] / ((dl[i] - pole) + dj[j]);
    nrm += c[r] * c[r];
  }
  nrm = sqrt(nrm);
  for (int64_t i = 0; i < k; i++) c[i] /= nrm;
}

/* Columns j0 .. j1 - 1 of S (k x k) of the plan, the secular problem's normalized
 * eigenvectors, into C (k x (j1 - j0)); wt: Löwner's weights (k > 2). */
static void secular_vectors(const tsr_laed_plan_t *p, const double *wt, int64_t j0, int64_t j1,
                            double *C) {
  const int64_t k = p->k;
  for (int64_t j = j0; j < j1; j++)
    if (k <= 2)
      memcpy(C + (j - j0) * k, tsr_laed_d(p, p->vec2) + j * k, (size_t)k * sizeof *C);
    else
      secular_column(p, wt, j, C + (j - j0) * k);
}

void tsr_laed_row_product(const tsr_laed_plan_t *p, const double *q2, const double *wt, int64_t j0,
                          int64_t j1, double *u, double *c) {
  const int64_t k = p->k;
  for (int64_t j = j0; j < j1; j++) {
    if (k <= 2)
      memcpy(c, tsr_laed_d(p, p->vec2) + j * k, (size_t)k * sizeof *c);
    else
      secular_column(p, wt, j, c);
    double u0 = 0, u1 = 0;
    for (int64_t i = 0; i < k; i++) u0 += q2[2 * i] * c[i], u1 += q2[2 * i + 1] * c[i];
    u[2 * j] = u0, u[2 * j + 1] = u1;
  }
}

void tsr_laed_regroup(const tsr_laed_plan_t *p, double *Qb, int64_t ldq, int64_t rows, double *Q2) {
  const int64_t m = p->m;
  const double *rot = tsr_laed_d(p, p->rot);
  const int *src = tsr_laed_i(p, p->src);
  for (int64_t r = 0; r < p->nrot; r++) {
    double *x = Qb + (int64_t)rot[4 * r] * ldq, *y = Qb + (int64_t)rot[4 * r + 1] * ldq;
    const double c = rot[4 * r + 2], s = rot[4 * r + 3];
    for (int64_t i = 0; i < rows; i++) {
      const double a = x[i], b = y[i];
      x[i] = c * a + s * b, y[i] = c * b - s * a;
    }
  }
  for (int64_t c = 0; c < m; c++)
    memcpy(Q2 + c * rows, Qb + src[c] * ldq, (size_t)rows * sizeof *Q2);
}

void tsr_laed_place(const tsr_laed_plan_t *p, const double *U, const double *Q2, int64_t rows,
                    double *Qb, int64_t ldq) {
  const int64_t k = p->k;
  const int *out = tsr_laed_i(p, p->out);
  for (int64_t q = 0; q < p->m; q++)
    memcpy(Qb + q * ldq, out[q] < k ? U + out[q] * rows : Q2 + out[q] * rows,
           (size_t)rows * sizeof *Qb);
}

void tsr_laed_merge_host(const tsr_laed_plan_t *p, int64_t r0, int64_t r1, double *Qb, int64_t ldq,
                         double *work) {
  const int64_t m = p->m, k = p->k, rows = r1 - r0;
  double *Q2 = work, *wt = Q2 + rows * m, *C = wt + m;
  tsr_laed_regroup(p, Qb, ldq, rows, Q2);
  /* Qb is free once regrouped: U = Q2[:, 0:k] S into its first k columns by halves of rows
   * (tsr_laed_halves), S formed a chunk of columns at a time, then U copied over Q2's first k
   * columns (which the product no longer needs) so that every output column is a column of Q2 */
  if (k > 2) tsr_laed_weights(p, 0, k, wt);
  tsr_laed_half_t h[2];
  tsr_laed_halves(p, r0, r1, h);
  for (int64_t j0 = 0; j0 < k; j0 += TSR_LAED_COLUMNS) {
    const int64_t j1 = j0 + TSR_LAED_COLUMNS < k ? j0 + TSR_LAED_COLUMNS : k;
    secular_vectors(p, wt, j0, j1, C);
    for (int b = 0; b < 2; b++) /* each half's rows times the columns that reach them */
      if (h[b].rows > 0 && h[b].inner > 0)
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, (int)h[b].rows, (int)(j1 - j0),
                    (int)h[b].inner, 1, Q2 + h[b].col * rows + h[b].row, (int)rows, C + h[b].col,
                    (int)k, 0, Qb + j0 * ldq + h[b].row, (int)ldq);
      else
        for (int64_t j = j0; j < j1 && h[b].rows > 0; j++)
          memset(Qb + j * ldq + h[b].row, 0, (size_t)h[b].rows * sizeof *Qb);
  }
  for (int64_t j = 0; j < k; j++) memcpy(Q2 + j * rows, Qb + j * ldq, (size_t)rows * sizeof *Q2);
  tsr_laed_place(p, Q2, Q2, rows, Qb, ldq);
}
