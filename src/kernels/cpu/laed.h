/* One merge of Cuppen's divide and conquer for the symmetric tridiagonal eigenproblem (the
 * method of LAPACK's dlaed1, with its deflation and secular equation), split so that the work on
 * the eigenvectors runs on any device: the host plans the merge from the two halves' eigenvalues
 * and the coupling vector z (deflation, then the secular equation's roots by LAPACK's dlaed4),
 * and a device kernel carries the plan out on the block of eigenvectors.
 *
 * The merge of a block of order m, its halves of n1 and m - n1: Q = diag(Q1, Q2) holds the
 * halves' eigenvectors (columns in ascending order of their eigenvalues D), z = [last row of Q1,
 * first row of Q2], rho the coupling (T's subdiagonal entry between the halves, whose modulus
 * was taken off the two diagonal entries it joins). diag(D) + rho z zᵀ has the eigenvalues of
 * the merged block, and its eigenvectors times Q are the block's.
 *
 * The plan (one allocation: the header tsr_laed_plan_t, then its arrays at byte offsets):
 *  - rotations (x, y, c, s), 4 doubles each, applied in order to the block's columns x and y:
 *    x' = c x + s y, y' = c y - s x (the deflation of close eigenvalues);
 *  - src (m ints): column c of Q2 (the rotated block's columns regrouped) is block column
 *    src[c]: the k not deflated first, then the deflated. The k are grouped by the rows where
 *    they can be nonzero — the first half's n1 only (k1 columns), both halves (k2: joined by a
 *    rotation), the second half's only (the rest) — each group in the secular equation's order,
 *    so that U's first n1 rows take Q2's first k1 + k2 columns and its other rows the last
 *    k - k1 (LAPACK's dlaed3: about half the product's flops). k <= 2: one group of both;
 *  - perm (k ints): the secular equation's index of Q2's column c < k (S's rows in that order);
 *  - dlamda, w (k doubles): the secular equation's poles (ascending) and weights;
 *  - root (k doubles): the secular equation's roots (ascending);
 *  - origin (k ints), delta (k doubles): root j is dlamda[origin[j]] - delta[j], and
 *    dlamda[i] - root j = (dlamda[i] - dlamda[origin[j]]) + delta[j] to high relative accuracy
 *    (k > 2); with k <= 2, vec2 (k x k) holds the eigenvectors of the secular problem;
 *  - dval (m doubles): the eigenvalue of each deflated column c >= k of Q2;
 *  - out (m ints): output column p, in ascending order of the merged eigenvalues lambda
 *    (m doubles), is column out[p] of U = Q2[:, 0:k] S (out[p] < k; S the secular problem's
 *    normalized eigenvectors, S(c, j) = wt_i / (dlamda[i] - root j) for i = perm[c], wt from
 *    Löwner's formula) or deflated column out[p] of Q2 (out[p] >= k).
 *
 * Every function works on its arguments alone. */
#ifndef TSR_KERNELS_CPU_LAED_H
#define TSR_KERNELS_CPU_LAED_H

#include <stdint.h>

/** Columns of the secular problem's eigenvectors S formed at a time by a merge (and multiplied
 *  by the regrouped block), and the workspace in doubles of a merge of order m on `rows` of its
 *  rows (tsr_laed_work: all of them): those rows regrouped, Löwner's weights and one chunk of
 *  S. */
enum { TSR_LAED_COLUMNS = 4096 };
static inline int64_t tsr_laed_work_rows(int64_t rows, int64_t m) {
  return rows * m + m * (1 + (m < TSR_LAED_COLUMNS ? m : TSR_LAED_COLUMNS));
}
static inline int64_t tsr_laed_work(int64_t m) {
  return tsr_laed_work_rows(m, m);
}

/** A merge's plan: its sizes and the byte offsets of its arrays from the header's start. */
typedef struct {
  int64_t m, n1, k, nrot;
  int64_t k1, k2; /**< Q2's first k columns: k1 of the first half's rows, k2 of both (src) */
  int info;       /**< nonzero: dlaed4 failed on a root (LAPACK's info) */
  double rho;     /**< the secular equation's rho (after deflation's normalization) */
  int64_t bytes;  /**< the whole allocation */
  int64_t rot, src, perm, dlamda, w, root, origin, delta, vec2, dval, out, lambda;
} tsr_laed_plan_t;

/** The plan of the merge of a block of order m (halves n1 and m - n1): D its halves'
 *  eigenvalues (each half ascending), z the coupling vector, rho the coupling (any sign).
 *  Deflation as dlaed2's (tolerance 8 eps max(|D|, |z|) after z's normalization); the roots are
 *  not yet computed (tsr_laed_roots). Returns a malloc'd plan (free()), or NULL when out of
 *  memory. */
tsr_laed_plan_t *tsr_laed_deflate(int64_t m, int64_t n1, const double *D, const double *z,
                                  double rho);

/** The secular equation's roots j0 .. j1 - 1 of plan p (dlaed4): root, origin and delta, or
 *  vec2's columns when k <= 2. Roots of one plan may be computed by several threads at once on
 *  disjoint ranges. Returns 0 or dlaed4's info (also into p->info). */
int tsr_laed_roots(tsr_laed_plan_t *p, int64_t j0, int64_t j1);

/** Σ w_j² over the plan's k weights. */
double tsr_laed_wsq(const tsr_laed_plan_t *p);

/** The secular equation's roots j0 .. j1 - 1 of plan p (k > 2) by tessera's own iteration
 *  (kernels/secular.h, the arithmetic of the device kernels; wsq = tsr_laed_wsq(p)): root,
 *  origin and delta as tsr_laed_roots gives them. Returns 0, or 1 + the first root that did not
 *  converge (also into p->info). */
int tsr_laed_secular(tsr_laed_plan_t *p, double wsq, int64_t j0, int64_t j1);

/** After every root: out and lambda, the roots and the deflated eigenvalues merged in
 *  ascending order. */
void tsr_laed_finish(tsr_laed_plan_t *p);

/** The plan's rotations on the first `rows` rows of the block Qb's m columns (leading dimension
 *  ldq), then those columns regrouped into Q2 (rows x m, leading dimension rows): Q2's column c
 *  is Qb's column src[c]. */
void tsr_laed_regroup(const tsr_laed_plan_t *p, double *Qb, int64_t ldq, int64_t rows, double *Q2);

/** The merged block's columns into Qb (rows x m, leading dimension ldq), ascending: column q is
 *  U's column out[q] (U = Q2[:, 0:k] S, rows x k) or Q2's deflated column out[q]. */
void tsr_laed_place(const tsr_laed_plan_t *p, const double *U, const double *Q2, int64_t rows,
                    double *Qb, int64_t ldq);

/** The plan carried out on the host on rows r0 .. r1 - 1 of the block (0 .. m: all of them):
 *  Qb (those rows of the block's m columns, leading dimension ldq) becomes those rows of the
 *  merged block's eigenvectors (ascending). A merge's rows are independent (its rotations,
 *  regrouping, product and placement act on each row alone): ranges of one plan may run apart.
 *  work: tsr_laed_work_rows(r1 - r0, m) doubles (those rows of Q2, the weights and a chunk of
 *  S's columns; U is formed in Qb and copied over Q2's first k columns). */
void tsr_laed_merge_host(const tsr_laed_plan_t *p, int64_t r0, int64_t r1, double *Qb, int64_t ldq,
                         double *work);

/** After every root (k > 2): Löwner's weights i0 .. i1 - 1 into wt (k doubles), from which the
 *  secular problem's eigenvectors are S(i, j) = wt_i / (dlamda_i - root j), normalized. Ranges
 *  of one plan may be computed by several threads at once. */
void tsr_laed_weights(const tsr_laed_plan_t *p, int64_t i0, int64_t i1, double *wt);

/** The values-only merge's product: columns j0 .. j1 - 1 of u = q2 S (2 x k, leading dimension
 *  2), q2 the first k columns of the regrouped block's two kept rows (2 x k, leading dimension
 *  2), S formed column by column from wt (every weight computed; unused for k <= 2) into c (k
 *  doubles of scratch). Ranges may run on several threads at once, each with its own c. */
void tsr_laed_row_product(const tsr_laed_plan_t *p, const double *q2, const double *wt, int64_t j0,
                          int64_t j1, double *u, double *c);

/** One half of the product U = Q2[:, 0:k] S (src's groups) on rows r0 .. r1 - 1 of the block:
 *  U's rows r0 + row .. r0 + row + rows - 1 are Q2's rows there, its columns col .. col + inner
 *  - 1, times S's rows col .. col + inner - 1 (zero where inner is 0; none where rows is 0). */
typedef struct {
  int64_t row, rows, col, inner;
} tsr_laed_half_t;

/** The product's halves of plan p within rows r0 .. r1 - 1: the first n1 rows', then the
 *  others'. */
static inline void tsr_laed_halves(const tsr_laed_plan_t *p, int64_t r0, int64_t r1,
                                   tsr_laed_half_t h[2]) {
  const int64_t from[2] = {0, p->n1}, to[2] = {p->n1, p->m};
  const int64_t col[2] = {0, p->k1}, inner[2] = {p->k1 + p->k2, p->k - p->k1};
  for (int b = 0; b < 2; b++) {
    const int64_t lo = from[b] > r0 ? from[b] : r0, hi = to[b] < r1 ? to[b] : r1;
    h[b] = (tsr_laed_half_t){lo - r0, hi > lo ? hi - lo : 0, col[b], inner[b]};
  }
}

/** The real flops of the product on rows r0 .. r1 - 1 of plan p's block. */
static inline double tsr_laed_product_flops(const tsr_laed_plan_t *p, int64_t r0, int64_t r1) {
  tsr_laed_half_t h[2];
  tsr_laed_halves(p, r0, r1, h);
  return 2.0 * (double)p->k *
         ((double)h[0].rows * (double)h[0].inner + (double)h[1].rows * (double)h[1].inner);
}

/** Typed views of a plan's arrays. */
static inline double *tsr_laed_d(const tsr_laed_plan_t *p, int64_t off) {
  return (double *)((char *)p + off);
}
static inline int *tsr_laed_i(const tsr_laed_plan_t *p, int64_t off) {
  return (int *)((char *)p + off);
}

#endif
