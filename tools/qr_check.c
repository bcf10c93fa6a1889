/* tessera CLI — the checks of geqrf and gels (tools/qr.h) and their operation counts: geqrf's
 * residual and orthogonality with Q formed or, for bench, by probe vectors; gels' LAPACK test
 * ratio; what a NaN, an exactly zero R(i, i) or a numerically singular R means, said in a sentence.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen.h"
#include "qr.h"
#include "residual.h"

size_t qr_bytes(tessera_dtype_t dtype, int64_t rows, int64_t cols) {
  return (size_t)(rows > 0 ? rows : 1) * (size_t)(cols > 0 ? cols : 1) * tessera_dtype_size(dtype);
}

/* geqrf's residual and orthogonality from the factored p->a and tau (computed by every
 * process, the arrays process 0's under --grid; the numbers there). */
int qr_check_geqrf(tessera_context_t *ctx, const qr_problem_t *p, double *res, double *orth) {
  const int64_t m = p->m, n = p->n, k = m < n ? m : n;
  *res = *orth = 0;
  if (k == 0) return 0;
  const tessera_dtype_t dt = p->dtype;
  const int mine = cli_holds(ctx);
  void *q = NULL, *r = NULL, *d = NULL, *e = NULL;
  int rc = 0;
  const size_t es = tessera_dtype_size(dt);
  if (mine) {
    q = malloc(qr_bytes(dt, m, k)), r = calloc(1, qr_bytes(dt, k, n));
    d = malloc(qr_bytes(dt, m, n)), e = calloc(1, qr_bytes(dt, k, k));
    rc = !q || !r || !d || !e ? TESSERA_ERR_NOMEM : 0;
  }
  if (mine && !rc) {
    memcpy(q, p->a, (size_t)(m * k) * es);
    for (int64_t j = 0; j < n; j++) /* R: the upper trapezoid */
      memcpy((char *)r + (size_t)(j * k) * es, (char *)p->a + (size_t)(j * m) * es,
             (size_t)((j < k ? j : k - 1) + 1) * es);
    memcpy(d, p->a0, (size_t)(m * n) * es);
    for (int64_t i = 0; i < k; i++) elem_set(dt, e, (size_t)(i + i * k), 1, 0);
  }
  if (!rc) rc = tessera_ungqr(ctx, dt, m, k, k, q, m, p->tau);
  double mone[2], one[2];
  residual_scalars(dt, mone, one);
  if (!rc) /* D = A - Q R */
    rc = tessera_gemm(ctx, TESSERA_NOTRANS, TESSERA_NOTRANS, dt, m, n, k, mone, q, m, r, k, one, d,
                      m);
  if (!rc) /* E = I - Qᴴ Q */
    rc = tessera_gemm(ctx, TESSERA_CONJTRANS, TESSERA_NOTRANS, dt, k, k, m, mone, q, m, q, m, one,
                      e, k);
  if (!rc && mine) {
    const double an = residual_fro(dt, m, n, p->a0, m), eps = residual_eps(dt);
    *res = residual_relative(residual_fro(dt, m, n, d, m), an * (double)(m > n ? m : n) * eps);
    *orth = residual_fro(dt, k, k, e, k) / ((double)m * eps);
  }
  free(q), free(r), free(d), free(e);
  return rc;
}

/* c = op(Q) c for the m x 2 c (process 0's; NULL elsewhere): Q the reflectors in the host p->a
 * and p->tau (tessera_unmqr), or, given the m x 2 descriptor C, those in the descriptor A and
 * p->tau (tessera_tile_unmqr on C, c imported into it and exported back). */
static int apply_q(tessera_context_t *ctx, const qr_problem_t *p, tessera_matrix_t *A,
                   tessera_matrix_t *C, tessera_op_t op, void *c) {
  const int64_t m = p->m, k = m < p->n ? m : p->n;
  if (!C) return tessera_unmqr(ctx, TESSERA_LEFT, op, p->dtype, m, 2, k, p->a, m, p->tau, c, m);
  int s = tessera_matrix_import(C, c, m);
  if (!s) s = tessera_tile_unmqr(TESSERA_LEFT, op, A, p->tau, C);
  return s ? s : tessera_matrix_export(C, c, m);
}

/* The m x 2 descriptor that Q from the descriptor A is applied to, one tile: of this process
 * alone, or where A is distributed (--grid's column panels, tools/dist.c) dealt over the
 * context's processes as a 1 x P grid, its one tile process 0's, where the probe vectors are. */
static int probe_matrix(tessera_context_t *ctx, const tessera_matrix_t *A, tessera_dtype_t dt,
                        int64_t m, tessera_matrix_t **C) {
  if (tessera_matrix_tile_owner(A, 0, 0) < 0) return tessera_matrix_create(ctx, dt, m, 2, m, 2, C);
  const tessera_grid_t g = tessera_context_grid(ctx);
  return tessera_matrix_create_distributed(ctx, tessera_context_comm(ctx),
                                           (tessera_grid_t){1, g.p * g.q}, dt, m, 2, m, 2, C);
}

/* bench geqrf's check by probe vectors, O(m n) on the host and two applications of Q to two
 * vectors (Q never formed): residual ‖A v − Q [R v; 0]‖₁ / (‖A‖₁ ‖v‖₁ max(m, n) eps),
 * orthogonality ‖w − Qᴴ (Q w)‖₁ / (‖w‖₁ m eps), v (n) and w (m) generated, R v from the upper
 * trapezoid of the factored p->a; Q from p->a and p->tau, or from the descriptor A (the tile
 * api's, p->a its export, or under --grid the distributed A, p->a its tiles put together) and
 * p->tau. As check_geqrf: every process, process 0's arrays (the descriptor's import and export
 * take an array on every process: c is allocated on each where A is given). */
int qr_probe_geqrf(tessera_context_t *ctx, const qr_problem_t *p, tessera_matrix_t *A, double *res,
                   double *orth) {
  const int64_t m = p->m, n = p->n;
  *res = *orth = 0;
  if (m == 0 || n == 0) return 0;
  const tessera_dtype_t dt = p->dtype;
  const size_t col = (size_t)m * tessera_dtype_size(dt);
  const int mine = cli_holds(ctx);
  char *c = NULL; /* m x 2: [R v; 0] and w, then Q times them, then Qᴴ times those */
  void *v = NULL;
  tessera_matrix_t *C = NULL;
  if (mine || A) c = malloc(2 * col);
  if (mine) v = malloc(qr_bytes(dt, n, 1));
  int rc = ((mine || A) && !c) || (mine && !v) ? TESSERA_ERR_NOMEM : 0;
  if (mine && !rc) {
    gen_dense(dt, n, 1, v, n, GEN_SEED_V);
    residual_upper_mv(dt, m, n, p->a, m, v, c);
    gen_dense(dt, m, 1, c + col, m, GEN_SEED_V);
  }
  if (!rc && A) rc = probe_matrix(ctx, A, dt, m, &C);
  if (!rc) rc = apply_q(ctx, p, A, C, TESSERA_NOTRANS, c);
  if (!rc && mine) *res = residual_mv(dt, m, n, p->a0, m, v, c, m > n ? m : n);
  if (!rc) rc = apply_q(ctx, p, A, C, TESSERA_CONJTRANS, c);
  if (!rc && mine) { /* w again into the first column, and how far Qᴴ Q w is from it */
    double one[2], mone[2];
    residual_scalars(dt, mone, one);
    gen_dense(dt, m, 1, c, m, GEN_SEED_V);
    *orth = residual_mv(dt, m, 1, c, m, one, c + col, m);
  }
  const int d = C ? tessera_matrix_destroy(C) : 0;
  free(c), free(v);
  return rc ? rc : d;
}

/* gels' test ratio from the solution in p->b (as check_geqrf: every process, process 0's
 * arrays). */
int qr_check_gels(tessera_context_t *ctx, const qr_problem_t *p, double *res) {
  const int64_t m = p->m, n = p->n, k = p->nrhs, ldb = p->ldb;
  const tessera_dtype_t dt = p->dtype;
  *res = 0;
  if (m == 0 || n == 0 || k == 0) return 0;
  const int mine = cli_holds(ctx);
  void *r = NULL, *g = NULL;
  int rc = 0;
  const size_t es = tessera_dtype_size(dt);
  if (mine) {
    r = malloc(qr_bytes(dt, m, k)), g = calloc(1, qr_bytes(dt, n, k));
    rc = !r || !g ? TESSERA_ERR_NOMEM : 0;
    for (int64_t j = 0; !rc && j < k; j++)
      memcpy((char *)r + (size_t)(j * m) * es, (char *)p->b0 + (size_t)(j * ldb) * es,
             (size_t)m * es);
  }
  double mone[2], one[2], zero[2] = {0, 0};
  residual_scalars(dt, mone, one);
  if (!rc) /* R = b - A x */
    rc = tessera_gemm(ctx, TESSERA_NOTRANS, TESSERA_NOTRANS, dt, m, k, n, mone, p->a0, m, p->b, ldb,
                      one, r, m);
  if (!rc && m >= n) /* G = Aᴴ R */
    rc = tessera_gemm(ctx, TESSERA_CONJTRANS, TESSERA_NOTRANS, dt, n, k, m, one, p->a0, m, r, m,
                      zero, g, n);
  if (!rc && mine) {
    const double an = residual_fro(dt, m, n, p->a0, m), eps = residual_eps(dt);
    const double big = (double)(m > n ? m : n);
    if (m >= n) /* b = 0 gives x = 0: a ratio of 0, not 0 / 0 */
      *res = residual_relative(residual_fro(dt, n, k, g, n),
                               (big > k ? big : (double)k) * an *
                                   residual_fro(dt, m, k, p->b0, ldb) * eps);
    else
      *res = residual_relative(residual_fro(dt, m, k, r, m),
                               big * an * residual_fro(dt, n, k, p->b, ldb) * eps);
  }
  free(r), free(g);
  return rc;
}

int qr_report(tessera_context_t *ctx, cli_progress_t *prog, cli_cmd_t routine,
              const qr_problem_t *p, const char *what, int status) {
  if (status <= 0 || routine != CMD_GELS) return cli_report(ctx, prog, what, status);
  progress_phase(prog, NULL);
  if (p->m >= p->n)
    fprintf(stderr,
            "tessera: gels: R(%d, %d) of A's QR is exactly zero: A does not have full rank, so "
            "its least squares solution is not unique and gels solves nothing (LAPACK's info = "
            "%d)\n",
            status, status, status);
  else
    fprintf(stderr,
            "tessera: gels: R(%d, %d) of the QR of A's conjugate transpose is exactly zero: A "
            "(m < n) does not have full row rank, so the minimum norm solution is not defined by "
            "it and gels solves nothing (LAPACK's info = %d)\n",
            status, status, status);
  return CLI_FAILED;
}

int qr_finite(cli_cmd_t routine, const qr_problem_t *p, double res, double orth) {
  if (isfinite(res) && isfinite(orth)) return CLI_OK;
  const char *name = cli_cmd_name(routine);
  const tessera_dtype_t dt = p->dtype;
  const int64_t ja = residual_nonfinite_column(dt, p->m, p->n, p->a0, p->m > 0 ? p->m : 1);
  const int64_t jb = ja ? 0 : residual_nonfinite_column(dt, p->m, p->nrhs, p->b0, p->ldb);
  const char *result = routine == CMD_GEQRF ? "its QR factors hold" : "the solution holds";
  if (ja || jb)
    fprintf(stderr,
            "tessera: %s: %s holds NaN (or Inf) in column %lld, so %s NaN and the check gives "
            "NaN\n",
            name, ja ? "A" : "b", (long long)(ja ? ja : jb), result);
  else
    fprintf(stderr,
            "tessera: %s: the check gives NaN (or Inf) though A%s is finite: %s NaN or Inf, the "
            "%s arithmetic overflowed\n",
            name, p->nrhs ? " and b are" : "", result, tessera_dtype_name(dt));
  return CLI_FAILED;
}

/* The conjugate transpose of the m x n `a` (lda m) into the n x m `t` (ldt n). */
static void conj_transpose(tessera_dtype_t dt, int64_t m, int64_t n, const void *a, void *t) {
  for (int64_t j = 0; j < n; j++)
    for (int64_t i = 0; i < m; i++) {
      double re, im;
      elem_get(dt, a, (size_t)(i + j * m), &re, &im);
      elem_set(dt, t, (size_t)(j + i * n), re, -im);
    }
}

int qr_rank_warning(tessera_context_t *ctx, const qr_problem_t *p) {
  const int64_t m = p->m, n = p->n, k = m < n ? m : n;
  if (k == 0) return 0;
  const tessera_dtype_t dt = p->dtype;
  const int mine = cli_holds(ctx);
  const void *r = p->a; /* m >= n: gels left A's QR in p->a */
  int64_t ldr = m;
  void *t = NULL, *tau = NULL;
  int s = 0;
  if (m < n) { /* gels factored a copy of Aᴴ (n x m): the same QR, of a copy here */
    ldr = n;
    if (mine) {
      t = malloc(qr_bytes(dt, n, m)), tau = malloc(qr_bytes(dt, k, 1));
      s = !t || !tau ? TESSERA_ERR_NOMEM : 0;
      if (!s) conj_transpose(dt, m, n, p->a0, t);
    }
    if (!s) s = tessera_geqrf(ctx, dt, n, m, t, n, tau);
    r = t;
  }
  double lo = INFINITY, hi = 0;
  int64_t at = 0;
  for (int64_t i = 0; !s && mine && i < k; i++) {
    double re, im;
    elem_get(dt, r, (size_t)(i + i * ldr), &re, &im);
    const double d = hypot(re, im);
    if (d < lo) lo = d, at = i + 1;
    if (!(d <= hi)) hi = d; /* NaN kept: a NaN is said by qr_finite, not here */
  }
  const double tol = (double)(m > n ? m : n) * residual_eps(dt);
  if (!s && mine && lo < tol * hi)
    fprintf(stderr,
            "tessera: warning: gels: A is numerically rank deficient: |R(%lld, %lld)| = %.3g is "
            "%.3g times the largest |R(i, i)|%s, below max(m, n) eps = %.3g, so the solution is "
            "mostly rounding error (a rank-revealing solver, as LAPACK's gelsy or gelsd, finds a "
            "minimum norm solution)\n",
            (long long)at, (long long)at, lo, lo / hi,
            m < n ? " (R of the QR of A's conjugate transpose)" : "", tol);
  free(t), free(tau);
  return s;
}

double qr_flops(cli_cmd_t routine, tessera_dtype_t dtype, int64_t m, int64_t n, int64_t nrhs) {
  const double M = (double)(m > n ? m : n), k = (double)(m < n ? m : n);
  double f = 2 * k * k * (M - k / 3);
  if (routine == CMD_GELS) f += (double)nrhs * (4 * M * k - k * k);
  return tessera_dtype_is_complex(dtype) ? 4 * f : f;
}
