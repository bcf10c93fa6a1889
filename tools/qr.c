/* tessera CLI — `tessera geqrf`, `tessera gels` and `tessera bench geqrf|gels`: QR and least
 * squares on an m x n matrix (generated, or --input a.npy), timed, checked, and benched against
 * cuSOLVER on GPU 0 (bench_gpu.c) or, without GPUs, LAPACKE with the same thread count; bench
 * --resident times the tile-level call on descriptors made once too. The checks use tessera's own
 * unmqr, ungqr and gemm (each tested against LAPACK in tests/linalg). geqrf, gels: full metrics,
 * geqrf's residual ‖A - Q R‖_F / (‖A‖_F max(m, n) eps) and orthogonality ‖I - Qᴴ Q‖_F / (m eps)
 * with Q formed (O(m n²)); gels' LAPACK's least-squares test ratios, ‖(A x - b)ᴴ A‖_F /
 * (max(m, n, k) ‖A‖_F ‖b‖_F eps) for m >= n (the residual orthogonal to A's columns),
 * ‖A x - b‖_F / (max(m, n) ‖A‖_F ‖x‖_F eps) for m < n. bench geqrf checks by probe vectors
 * instead, as bench potrf and getrf do (O(m n) on the host and two applications of Q to two
 * vectors, Q never formed, for a size whose factorization takes the GPUs seconds): residual
 * ‖A v - Q [R v; 0]‖₁ / (‖A‖₁ ‖v‖₁ max(m, n) eps), orthogonality ‖w - Qᴴ (Q w)‖₁ / (‖w‖₁ m eps),
 * v and w generated; bench gels keeps gels' ratios, O(m n nrhs) already. */
#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_gpu.h"
#include "cli.h"
#include "gen.h"
#include "npy.h"
#include "residual.h"

/** The problem of one run: A (m x n, lda m), B (max(m, n) x nrhs) for gels, their pristine
 *  copies, tau. */
typedef struct {
  tessera_dtype_t dtype;
  int64_t m, n, nrhs, ldb;
  void *a0, *a, *b0, *b, *tau;
} qr_problem_t;

static void problem_free(qr_problem_t *p) {
  free(p->a0), free(p->a), free(p->b0), free(p->b), free(p->tau);
}

static size_t bytes_of(tessera_dtype_t dtype, int64_t rows, int64_t cols) {
  return (size_t)(rows > 0 ? rows : 1) * (size_t)(cols > 0 ? cols : 1) * tessera_dtype_size(dtype);
}

/* The problem: --input's matrix or a generated m x n one, and for gels nrhs generated columns;
 * the arrays on the process holding them only (--input read there, its shape told to the
 * others). */
static int problem(tessera_context_t *ctx, const cli_opts_t *o, int64_t m, int64_t n,
                   qr_problem_t *p) {
  *p = (qr_problem_t){.dtype = o->dtype, .m = m, .n = n};
  const int mine = cli_holds(ctx);
  int64_t shape[3] = {m, n, o->dtype};
  int rc = CLI_OK;
  if (o->input && mine) {
    npy_array_t in;
    char err[256];
    if (npy_read(o->input, &in, err, sizeof err)) {
      fprintf(stderr, "tessera: %s: %s\n", o->input, err);
      shape[0] = -1;
    } else {
      shape[0] = in.shape[0], shape[1] = in.shape[1], shape[2] = in.dtype;
      p->a0 = in.data;
    }
  }
  tessera_comm_t *c = tessera_context_comm(ctx);
  if (o->input && c && tessera_comm_broadcast(c, shape, 3, TESSERA_COMM_I64, 0, NULL))
    shape[0] = -1;
  if (shape[0] < 0) return CLI_FAILED;
  p->m = m = shape[0], p->n = n = shape[1], p->dtype = (tessera_dtype_t)shape[2];
  p->nrhs = o->routine == CMD_GELS ? (o->nrhs > 0 ? o->nrhs : 1) : 0;
  p->ldb = m > n ? m : n;
  if (!mine) return CLI_OK;
  if (!p->a0) p->a0 = malloc(bytes_of(p->dtype, m, n));
  p->a = malloc(bytes_of(p->dtype, m, n));
  p->tau = malloc(bytes_of(p->dtype, m < n ? m : n, 1));
  p->b0 = malloc(bytes_of(p->dtype, p->ldb, p->nrhs));
  p->b = malloc(bytes_of(p->dtype, p->ldb, p->nrhs));
  if (!p->a0 || !p->a || !p->tau || !p->b0 || !p->b) {
    fprintf(stderr, "tessera: out of memory for a %lld x %lld problem\n", (long long)m,
            (long long)n);
    rc = CLI_FAILED;
  }
  if (!rc && !o->input) gen_dense(p->dtype, m, n, p->a0, m > 0 ? m : 1, GEN_SEED_A);
  if (!rc && p->nrhs) gen_dense(p->dtype, p->ldb, p->nrhs, p->b0, p->ldb, GEN_SEED_B);
  return rc;
}

/* geqrf's residual and orthogonality from the factored p->a and tau (computed by every
 * process, the arrays process 0's under --grid; the numbers there). */
static int check_geqrf(tessera_context_t *ctx, const qr_problem_t *p, double *res, double *orth) {
  const int64_t m = p->m, n = p->n, k = m < n ? m : n;
  *res = *orth = 0;
  if (k == 0) return 0;
  const tessera_dtype_t dt = p->dtype;
  const int mine = cli_holds(ctx);
  void *q = NULL, *r = NULL, *d = NULL, *e = NULL;
  int rc = 0;
  const size_t es = tessera_dtype_size(dt);
  if (mine) {
    q = malloc(bytes_of(dt, m, k)), r = calloc(1, bytes_of(dt, k, n));
    d = malloc(bytes_of(dt, m, n)), e = calloc(1, bytes_of(dt, k, k));
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
    *res = an > 0 ? residual_fro(dt, m, n, d, m) / (an * (double)(m > n ? m : n) * eps) : 0;
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

/* bench geqrf's check by probe vectors, O(m n) on the host and two applications of Q to two
 * vectors (Q never formed): residual ‖A v − Q [R v; 0]‖₁ / (‖A‖₁ ‖v‖₁ max(m, n) eps),
 * orthogonality ‖w − Qᴴ (Q w)‖₁ / (‖w‖₁ m eps), v (n) and w (m) generated, R v from the upper
 * trapezoid of the factored p->a; Q from p->a and p->tau, or from the descriptor A (the tile
 * api's, p->a its export) and p->tau. As check_geqrf: every process, process 0's arrays. */
static int probe_geqrf(tessera_context_t *ctx, const qr_problem_t *p, tessera_matrix_t *A,
                       double *res, double *orth) {
  const int64_t m = p->m, n = p->n;
  *res = *orth = 0;
  if (m == 0 || n == 0) return 0;
  const tessera_dtype_t dt = p->dtype;
  const size_t col = (size_t)m * tessera_dtype_size(dt);
  const int mine = cli_holds(ctx);
  char *c = NULL; /* m x 2: [R v; 0] and w, then Q times them, then Qᴴ times those */
  void *v = NULL;
  tessera_matrix_t *C = NULL;
  int rc = 0;
  if (mine) {
    c = malloc(2 * col), v = malloc(bytes_of(dt, n, 1));
    rc = !c || !v ? TESSERA_ERR_NOMEM : 0;
  }
  if (mine && !rc) {
    gen_dense(dt, n, 1, v, n, GEN_SEED_V);
    residual_upper_mv(dt, m, n, p->a, m, v, c);
    gen_dense(dt, m, 1, c + col, m, GEN_SEED_V);
  }
  if (!rc && A) rc = tessera_matrix_create(ctx, dt, m, 2, m, 2, &C);
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
static int check_gels(tessera_context_t *ctx, const qr_problem_t *p, double *res) {
  const int64_t m = p->m, n = p->n, k = p->nrhs, ldb = p->ldb;
  const tessera_dtype_t dt = p->dtype;
  *res = 0;
  if (m == 0 || n == 0 || k == 0) return 0;
  const int mine = cli_holds(ctx);
  void *r = NULL, *g = NULL;
  int rc = 0;
  const size_t es = tessera_dtype_size(dt);
  if (mine) {
    r = malloc(bytes_of(dt, m, k)), g = calloc(1, bytes_of(dt, n, k));
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
    if (m >= n)
      *res = residual_fro(dt, n, k, g, n) /
             ((big > k ? big : (double)k) * an * residual_fro(dt, m, k, p->b0, ldb) * eps);
    else
      *res = residual_fro(dt, m, k, r, m) / (big * an * residual_fro(dt, n, k, p->b, ldb) * eps);
  }
  free(r), free(g);
  return rc;
}

/* One tessera run on fresh copies; its time in *t. */
static int run_tessera(tessera_context_t *ctx, qr_problem_t *p, cli_cmd_t routine, double *t) {
  const size_t es = tessera_dtype_size(p->dtype);
  if (p->a) memcpy(p->a, p->a0, (size_t)(p->m * p->n) * es);
  if (p->b) memcpy(p->b, p->b0, (size_t)(p->ldb * p->nrhs) * es);
  const double t0 = progress_now();
  const int rc = routine == CMD_GEQRF
                     ? tessera_geqrf(ctx, p->dtype, p->m, p->n, p->a, p->m > 0 ? p->m : 1, p->tau)
                     : tessera_gels(ctx, p->dtype, p->m, p->n, p->nrhs, p->a, p->m > 0 ? p->m : 1,
                                    p->b, p->ldb > 0 ? p->ldb : 1);
  *t = progress_now() - t0;
  return rc;
}

/* LAPACKE's geqrf or gels of the dtype on fresh copies, with `threads` BLAS threads; its time
 * in *t. */
static int run_lapacke(qr_problem_t *p, cli_cmd_t routine, int threads, double *t) {
  const size_t es = tessera_dtype_size(p->dtype);
  memcpy(p->a, p->a0, (size_t)(p->m * p->n) * es);
  memcpy(p->b, p->b0, (size_t)(p->ldb * p->nrhs) * es);
  const lapack_int m = (lapack_int)p->m, n = (lapack_int)p->n, k = (lapack_int)p->nrhs;
  const lapack_int lda = m > 0 ? m : 1, ldb = (lapack_int)(p->ldb > 0 ? p->ldb : 1);
  cli_blas_threads(threads);
  const double t0 = progress_now();
  int rc = -1;
  const int qr = routine == CMD_GEQRF;
  switch (p->dtype) {
  case TESSERA_F32:
    rc = qr ? LAPACKE_sgeqrf(LAPACK_COL_MAJOR, m, n, p->a, lda, p->tau)
            : LAPACKE_sgels(LAPACK_COL_MAJOR, 'N', m, n, k, p->a, lda, p->b, ldb);
    break;
  case TESSERA_F64:
    rc = qr ? LAPACKE_dgeqrf(LAPACK_COL_MAJOR, m, n, p->a, lda, p->tau)
            : LAPACKE_dgels(LAPACK_COL_MAJOR, 'N', m, n, k, p->a, lda, p->b, ldb);
    break;
  case TESSERA_C64:
    rc = qr ? LAPACKE_cgeqrf(LAPACK_COL_MAJOR, m, n, p->a, lda, p->tau)
            : LAPACKE_cgels(LAPACK_COL_MAJOR, 'N', m, n, k, p->a, lda, p->b, ldb);
    break;
  case TESSERA_C128:
    rc = qr ? LAPACKE_zgeqrf(LAPACK_COL_MAJOR, m, n, p->a, lda, p->tau)
            : LAPACKE_zgels(LAPACK_COL_MAJOR, 'N', m, n, k, p->a, lda, p->b, ldb);
    break;
  }
  *t = progress_now() - t0;
  cli_blas_threads(1);
  return rc;
}

/* Floating-point operations of geqrf (LAPACK Working Note 41's leading terms) and of gels
 * (geqrf, Qᴴ b, the triangular solve). */
static double qr_flops(cli_cmd_t routine, tessera_dtype_t dtype, int64_t m, int64_t n,
                       int64_t nrhs) {
  const double M = (double)(m > n ? m : n), k = (double)(m < n ? m : n);
  double f = 2 * k * k * (M - k / 3);
  if (routine == CMD_GELS) f += (double)nrhs * (4 * M * k - k * k);
  return tessera_dtype_is_complex(dtype) ? 4 * f : f;
}

/* Writes geqrf's factored matrix and tau (beside: FILE.tau.npy), or gels' solution. */
static int write_outputs(const cli_opts_t *o, const qr_problem_t *p) {
  char err[256], tau[4096];
  const int64_t k = p->m < p->n ? p->m : p->n;
  int rc = o->routine == CMD_GEQRF
               ? npy_write(o->output, p->dtype, 2, p->m, p->n, p->a, p->m > 0 ? p->m : 1, err,
                           sizeof err)
               : npy_write(o->output, p->dtype, 2, p->n, p->nrhs, p->b, p->ldb, err, sizeof err);
  if (!rc && o->routine == CMD_GEQRF)
    rc = npy_write(cli_beside_path(o->output, ".tau.npy", tau, sizeof tau), p->dtype, 1, k, 1,
                   p->tau, k > 0 ? k : 1, err, sizeof err);
  if (rc) fprintf(stderr, "tessera: --output: %s\n", err);
  return rc ? CLI_FAILED : CLI_OK;
}

/* One size's run: the problem, tessera's results (k 0: the LAPACK-style call on host arrays;
 * k 1, bench --resident: the tile-level call on descriptors made once), the CPU baseline's
 * thread count (0: no LAPACKE). */
typedef struct {
  tessera_context_t *ctx;
  const cli_opts_t *o;
  qr_problem_t *p;
  tessera_matrix_t *A, *B; /* A in column panels, gels' B; NULL without the tile call */
  void *tau;               /* the tile call's tau */
  int threads;
  cli_progress_t *prog;
  cli_result_t r[2];
} qr_run_t;

/* The first and one past the last api run: --resident-only leaves the LAPACK-style call out. */
static int api_first(const qr_run_t *q) {
  return q->o->resident == 2;
}
static int api_end(const qr_run_t *q) {
  return q->A ? 2 : 1;
}

/* One tessera run of api k (0: on fresh copies of the host arrays; 1: on the descriptors,
 * imported again, untimed); its time kept unless rep < 0 (warm-up). */
static int tessera_rep(qr_run_t *q, int k, int rep) {
  qr_problem_t *p = q->p;
  const int qr = q->o->routine == CMD_GEQRF;
  const char *name = k ? (qr ? "tile_geqrf" : "tile_gels") : cli_cmd_name(q->o->routine);
  char what[32] = "warm-up";
  if (rep >= 0) snprintf(what, sizeof what, "rep %d/%d", rep + 1, q->o->reps);
  progress_phase(q->prog, "tessera %s m=%lld n=%lld %s", name, (long long)p->m, (long long)p->n,
                 what);
  double t = 0;
  int s;
  if (k == 0) {
    s = run_tessera(q->ctx, p, q->o->routine, &t);
  } else {
    s = tessera_matrix_import(q->A, p->a0, p->m > 0 ? p->m : 1);
    if (!s && q->B) s = tessera_matrix_import(q->B, p->b0, p->ldb > 0 ? p->ldb : 1);
    if (s) return cli_report(q->ctx, q->prog, "matrix import", s);
    const double t0 = progress_now();
    s = qr ? tessera_tile_geqrf(q->A, q->tau) : tessera_tile_gels(q->A, q->B);
    t = progress_now() - t0;
  }
  if (s) return cli_report(q->ctx, q->prog, name, s);
  if (rep >= 0) q->r[k].seconds = fmin(q->r[k].seconds, t);
  return CLI_OK;
}

/* Runs every api o->reps times, and LAPACKE after them when threads > 0, interleaved on fresh
 * copies of the same problem; with GPUs a first untimed round warms tessera up, as the GPU
 * baseline is. */
static int qr_reps(qr_run_t *q, int warmup) {
  for (int rep = warmup ? -1 : 0; rep < q->o->reps; rep++) {
    for (int k = api_first(q); k < api_end(q); k++)
      if (tessera_rep(q, k, rep)) return CLI_FAILED;
    if (q->threads > 0 && rep >= 0) {
      double t;
      progress_phase(q->prog, "LAPACKE %s rep %d/%d", cli_cmd_name(q->o->routine), rep + 1,
                     q->o->reps);
      const int s = run_lapacke(q->p, q->o->routine, q->threads, &t);
      progress_phase(q->prog, NULL);
      if (s) {
        fprintf(stderr, "tessera: LAPACKE %s failed (info = %d)\n", cli_cmd_name(q->o->routine), s);
        return CLI_FAILED;
      }
      for (int k = 0; k < 2; k++) q->r[k].baseline_seconds = fmin(q->r[k].baseline_seconds, t);
    }
  }
  return CLI_OK;
}

/* Checks api k's result, brought into the problem's arrays: the LAPACK-style call's, run again
 * (untimed) where LAPACKE overwrote them; the descriptors', exported (geqrf's A for R, gels' B),
 * with the tile call's tau; bench geqrf's Q applied on the descriptor (probe_geqrf). */
static int check_api(qr_run_t *q, int k) {
  qr_problem_t c = *q->p;
  cli_result_t *r = &q->r[k];
  double t;
  int s = 0;
  progress_phase(q->prog, "checking");
  if (k == 0 && q->threads > 0 && (s = run_tessera(q->ctx, &c, q->o->routine, &t)))
    return cli_report(q->ctx, q->prog, cli_cmd_name(q->o->routine), s);
  const int qr = q->o->routine == CMD_GEQRF;
  if (k == 1) { /* geqrf's R from A; gels' check reads only B */
    c.tau = q->tau;
    s = qr ? tessera_matrix_export(q->A, c.a, c.m > 0 ? c.m : 1) : 0;
    if (!s && q->B) s = tessera_matrix_export(q->B, c.b, c.ldb > 0 ? c.ldb : 1);
    if (s) return cli_report(q->ctx, q->prog, "matrix export", s);
  }
  if (qr && q->o->cmd == CMD_BENCH)
    s = probe_geqrf(q->ctx, &c, k ? q->A : NULL, &r->residual, &r->orthogonality);
  else
    s = qr ? check_geqrf(q->ctx, &c, &r->residual, &r->orthogonality)
           : check_gels(q->ctx, &c, &r->residual);
  progress_phase(q->prog, NULL);
  return s ? cli_report(q->ctx, q->prog, "the check", s) : CLI_OK;
}

/* Rate in GFLOP/s of `flops` in `seconds`; NaN when the time is unknown. */
static double rate(double flops, double seconds) {
  return isfinite(seconds) && seconds > 0 ? flops * 1e-9 / seconds : flops > 0 ? NAN : 0;
}

/* Bench --resident: the descriptors of the tile call, A m x n in column panels of
 * tessera_tile_for_qr's width (tiles spanning all rows, which QR runs on directly) and gels' B
 * m x nrhs, and its tau; none where the tile call does not take the problem (gels, m < n). */
static int make_descriptors(qr_run_t *q, int *tile) {
  const qr_problem_t *p = q->p;
  const int64_t mb = p->m > 0 ? p->m : 1, k = p->m < p->n ? p->m : p->n;
  *tile = tessera_tile_for_qr(q->ctx, p->m, p->n);
  if (p->nrhs && p->m < p->n) {
    fprintf(stderr,
            "tessera: bench gels: tessera_tile_gels does not take m < n (m=%lld, "
            "n=%lld): no tile line for this size\n",
            (long long)p->m, (long long)p->n);
    return CLI_OK;
  }
  int s = tessera_matrix_create(q->ctx, p->dtype, p->m, p->n, mb, *tile, &q->A);
  if (!s && p->nrhs)
    s = tessera_matrix_create(q->ctx, p->dtype, p->m, p->nrhs, mb,
                              p->nrhs < *tile ? p->nrhs : *tile, &q->B);
  if (s) return cli_report(q->ctx, q->prog, "matrix create", s);
  if (!(q->tau = malloc(bytes_of(p->dtype, k, 1)))) {
    fprintf(stderr, "tessera: out of memory for tau\n");
    return CLI_FAILED;
  }
  return CLI_OK;
}

/* Bench with GPUs: times cuSOLVER's QR on the problem with tessera stopped (a context holds
 * nearly all GPU memory in its pools: it is finalized first and created anew afterwards). gels
 * with m < n has no baseline: *has is cleared. */
static int gpu_baseline(tessera_context_t **ctx, const cli_opts_t *o, const qr_problem_t *p,
                        cli_progress_t *prog, double *seconds, int *has) {
  *seconds = INFINITY;
  if (o->routine == CMD_GELS && p->m < p->n) {
    fprintf(stderr,
            "tessera: bench: the cuSOLVER baseline (%s) does not take m < n (m=%lld, "
            "n=%lld): no baseline for this size\n",
            bench_gpu_qr_name(o), (long long)p->m, (long long)p->n);
    *has = 0;
    return CLI_OK;
  }
  progress_phase(prog, "stopping tessera for the baseline");
  const int status = tessera_finalize(*ctx);
  *ctx = NULL;
  if (status < 0) return cli_report(NULL, prog, "finalize", status);
  *seconds = bench_gpu_qr(o, p->m, p->n, p->nrhs, p->a0, p->m > 0 ? p->m : 1, p->b0,
                          p->ldb > 0 ? p->ldb : 1, prog);
  progress_phase(prog, "restarting tessera");
  return cli_context_again(o, ctx);
}

/* One size: tessera's best times (the tile call's too with bench --resident), the baseline's
 * (LAPACKE with `threads` threads, or cuSOLVER on GPU 0 when `gpus`), the checks of each api,
 * the result lines; `warmup`: a first untimed round of tessera. */
static int run_size(tessera_context_t **ctx, const cli_opts_t *o, int64_t m, int64_t n, int threads,
                    int gpus, int warmup, cli_progress_t *prog) {
  qr_problem_t p;
  int rc = problem(*ctx, o, m, n, &p);
  const int mine = cli_holds(*ctx);
  double gpu_seconds = INFINITY;
  int has_baseline = threads > 0 || gpus > 0, tile = 0;
  if (rc == CLI_OK && gpus > 0) rc = gpu_baseline(ctx, o, &p, prog, &gpu_seconds, &has_baseline);
  qr_run_t q = {.ctx = *ctx, .o = o, .p = &p, .threads = threads, .prog = prog};
  if (rc == CLI_OK && o->resident) rc = make_descriptors(&q, &tile);
  for (int k = 0; rc == CLI_OK && k < 2; k++) {
    cli_result_t *r = &q.r[k];
    cli_result_init(r, o, q.ctx);
    r->m = p.m, r->n = p.n, r->nrhs = p.nrhs, r->seconds = INFINITY;
    r->baseline_seconds = gpu_seconds; /* INFINITY for LAPACKE's, which qr_reps lowers */
    if (o->cmd == CMD_BENCH) r->api = k ? "tile" : "lapack";
    if (k) r->tile = tile;
    r->has_baseline = has_baseline;
    r->baseline = gpus > 0 ? "cusolverDn" : "lapacke";
  }
  if (rc == CLI_OK) rc = qr_reps(&q, warmup);
  const double flops = qr_flops(o->routine, p.dtype, p.m, p.n, p.nrhs);
  for (int k = api_first(&q); rc == CLI_OK && k < api_end(&q); k++) {
    cli_result_t *r = &q.r[k];
    r->gflops = rate(flops, r->seconds);
    if (has_baseline) r->baseline_gflops = rate(flops, r->baseline_seconds);
    rc = check_api(&q, k); /* the tile api's last: --output writes the LAPACK-style result */
    if (rc == CLI_OK && mine) cli_print_result(o, r);
  }
  if (rc == CLI_OK && mine && o->output) rc = write_outputs(o, &p);
  progress_phase(prog, NULL);
  int s = q.B ? tessera_matrix_destroy(q.B) : 0;
  const int sa = q.A ? tessera_matrix_destroy(q.A) : 0;
  if (!s) s = sa;
  if (s && rc == CLI_OK) rc = cli_report(q.ctx, prog, "matrix destroy", s);
  free(q.tau);
  problem_free(&p);
  return rc;
}

int cli_qr(const cli_opts_t *o) {
  tessera_context_t *ctx;
  if (cli_context(o, &ctx)) return CLI_FAILED;
  const int64_t n = o->sizes[0], m = o->m >= 0 ? o->m : n;
  cli_progress_t quiet = {.running = 0}; /* no progress line */
  if (cli_holds(ctx)) cli_print_header(o, NULL, NULL);
  const int rc = run_size(&ctx, o, m, n, 0, 0, 0, &quiet);
  return cli_finish(ctx, rc);
}

int cli_bench_qr(const cli_opts_t *o) {
  tessera_context_t *ctx;
  if (cli_context(o, &ctx)) return CLI_FAILED;
  const char *name = cli_cmd_name(o->routine);
  const int has_gpus = tessera_device_count(ctx, TESSERA_DEVICE_CUDA) > 0;
  const int gpus = o->no_baseline ? 0 : has_gpus;
  const int threads = o->no_baseline || gpus ? 0 : cli_baseline_threads(o, ctx);
  if (!o->json) {
    printf("# %s %s: tessera (%d workers, %d GPUs)", name, tessera_dtype_name(o->dtype),
           tessera_worker_count(ctx), tessera_accelerator_count(ctx));
    if (gpus)
      printf(" against %s (GPU 0), matrix already on the GPU, after a warm-up",
             bench_gpu_qr_name(o));
    else if (threads > 0)
      printf(" against LAPACKE (threads: %d)", threads);
    printf(", best of %d\n", o->reps);
    if (o->resident)
      printf("# api lapack: tessera_%s on host arrays; api tile: tessera_tile_%s on descriptors "
             "made once (column panels), imported before each run (untimed)\n",
             name, name);
  }
  cli_print_header(o, gpus ? "cusolverDn" : threads > 0 ? "lapacke" : NULL, NULL);
  cli_progress_t prog;
  progress_init(&prog);
  int rc = CLI_OK;
  for (int i = 0; i < o->nsizes && rc == CLI_OK; i++)
    rc = run_size(&ctx, o, o->m >= 0 ? o->m : o->sizes[i], o->sizes[i], threads, gpus, has_gpus,
                  &prog);
  progress_end(&prog);
  return cli_finish(ctx, rc);
}
