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
#include "qr.h"
#include "residual.h"

static void problem_free(qr_problem_t *p) {
  free(p->a0), free(p->a), free(p->b0), free(p->b), free(p->tau);
}

/* Reads --input (A, any m x n of --dtype where given) and gels' --rhs (b: A's m rows) into p on
 * the process holding the arrays; their shapes and dtype into shape[] (shape[0] -1 when one
 * cannot be read or does not fit: the reason printed). */
static void read_operands(const cli_opts_t *o, qr_problem_t *p, int64_t shape[4]) {
  npy_array_t in;
  if (o->input && cli_read_operand(o->input, CLI_ANY_SHAPE, o->dtype, !o->dtype_set, &in)) {
    shape[0] = -1;
    return;
  }
  if (o->input) {
    shape[0] = in.shape[0], shape[1] = in.shape[1], shape[2] = in.dtype;
    p->a0 = in.data;
  }
  if (!o->rhs) return;
  if (cli_read_operand(o->rhs, shape[0], (tessera_dtype_t)shape[2], 0, &in)) {
    shape[0] = -1;
    return;
  }
  shape[3] = in.shape[1];
  p->b0 = in.data; /* m x nrhs: moved into B's max(m, n) rows once B is made */
}

/* The problem: --input's matrix or a generated m x n one, and for gels nrhs columns, --rhs's or
 * generated; the arrays on the process holding them only (the files read there, their shapes
 * told to the others). */
static int problem(tessera_context_t *ctx, const cli_opts_t *o, int64_t m, int64_t n,
                   qr_problem_t *p) {
  *p = (qr_problem_t){.dtype = o->dtype, .m = m, .n = n};
  const int mine = cli_holds(ctx), gels = o->routine == CMD_GELS;
  int64_t shape[4] = {m, n, o->dtype, gels ? (o->nrhs > 0 ? o->nrhs : 1) : 0};
  if (mine) read_operands(o, p, shape);
  tessera_comm_t *c = tessera_context_comm(ctx);
  if ((o->input || o->rhs) && c && tessera_comm_broadcast(c, shape, 4, TESSERA_COMM_I64, 0, NULL))
    shape[0] = -1;
  if (shape[0] < 0) return CLI_FAILED;
  p->m = m = shape[0], p->n = n = shape[1], p->dtype = (tessera_dtype_t)shape[2];
  p->nrhs = shape[3];
  p->ldb = m > n ? m : n;
  if (!mine) return CLI_OK;
  void *rhs = p->b0;
  if (!p->a0) p->a0 = malloc(qr_bytes(p->dtype, m, n));
  p->a = malloc(qr_bytes(p->dtype, m, n));
  p->tau = malloc(qr_bytes(p->dtype, m < n ? m : n, 1));
  p->b0 = calloc(1, qr_bytes(p->dtype, p->ldb, p->nrhs));
  p->b = malloc(qr_bytes(p->dtype, p->ldb, p->nrhs));
  int rc = CLI_OK;
  if (!p->a0 || !p->a || !p->tau || !p->b0 || !p->b) {
    fprintf(stderr, "tessera: out of memory for a %lld x %lld problem\n", (long long)m,
            (long long)n);
    rc = CLI_FAILED;
  }
  const size_t es = tessera_dtype_size(p->dtype);
  if (!rc && !o->input) gen_dense(p->dtype, m, n, p->a0, m > 0 ? m : 1, GEN_SEED_A);
  if (!rc && rhs) /* --rhs's m rows; rows m .. n - 1 of a wide A's B are zero */
    for (int64_t j = 0; j < p->nrhs; j++)
      memcpy((char *)p->b0 + (size_t)(j * p->ldb) * es, (char *)rhs + (size_t)(j * m) * es,
             (size_t)m * es);
  else if (!rc && p->nrhs)
    gen_dense(p->dtype, p->ldb, p->nrhs, p->b0, p->ldb, GEN_SEED_B);
  free(rhs);
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
  if (s) return qr_report(q->ctx, q->prog, q->o->routine, p, name, s);
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
 * with the tile call's tau; bench geqrf's Q applied on the descriptor (qr_probe_geqrf). */
static int check_api(qr_run_t *q, int k) {
  qr_problem_t c = *q->p;
  cli_result_t *r = &q->r[k];
  double t;
  int s = 0;
  progress_phase(q->prog, "checking");
  if (k == 0 && q->threads > 0 && (s = run_tessera(q->ctx, &c, q->o->routine, &t)))
    return qr_report(q->ctx, q->prog, q->o->routine, &c, cli_cmd_name(q->o->routine), s);
  const int qr = q->o->routine == CMD_GEQRF;
  if (k == 1) { /* geqrf's R from A; gels' check reads only B */
    c.tau = q->tau;
    s = qr ? tessera_matrix_export(q->A, c.a, c.m > 0 ? c.m : 1) : 0;
    if (!s && q->B) s = tessera_matrix_export(q->B, c.b, c.ldb > 0 ? c.ldb : 1);
    if (s) return cli_report(q->ctx, q->prog, "matrix export", s);
  }
  if (qr && q->o->cmd == CMD_BENCH)
    s = qr_probe_geqrf(q->ctx, &c, k ? q->A : NULL, &r->residual, &r->orthogonality);
  else
    s = qr ? qr_check_geqrf(q->ctx, &c, &r->residual, &r->orthogonality)
           : qr_check_gels(q->ctx, &c, &r->residual);
  /* the command's gels (its result in c, LAPACKE not run): is R numerically singular? */
  if (!s && !qr && k == 0 && q->o->cmd != CMD_BENCH) s = qr_rank_warning(q->ctx, &c);
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
  if (!(q->tau = malloc(qr_bytes(p->dtype, k, 1)))) {
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

/* How the sizes of one command run: the baseline (LAPACKE with `threads` threads, or cuSOLVER
 * on GPU 0 when `gpus`; neither for `tessera geqrf|gels`), a first untimed round of tessera
 * (`warmup`), and whether the table's header is out (printed before the first result line). */
typedef struct {
  int threads, gpus, warmup, headed;
} qr_plan_t;

/* The result lines of the apis run, once every check is finite (the table's header before the
 * first); CLI_FAILED with the reason said when a check is not. Process 0's. */
static int print_results(qr_run_t *q, qr_plan_t *plan) {
  const cli_opts_t *o = q->o;
  for (int k = api_first(q); k < api_end(q); k++)
    if (qr_finite(o->routine, q->p, q->r[k].residual,
                  o->routine == CMD_GEQRF ? q->r[k].orthogonality : 0))
      return CLI_FAILED;
  if (!plan->headed)
    cli_print_header(o, plan->gpus ? "cusolverDn" : plan->threads > 0 ? "lapacke" : NULL, NULL);
  plan->headed = 1;
  for (int k = api_first(q); k < api_end(q); k++) cli_print_result(o, &q->r[k]);
  return CLI_OK;
}

/* One size: tessera's best times (the tile call's too with bench --resident), the baseline's,
 * the checks of each api, the result lines. */
static int run_size(tessera_context_t **ctx, const cli_opts_t *o, int64_t m, int64_t n,
                    qr_plan_t *plan, cli_progress_t *prog) {
  const int threads = plan->threads, gpus = plan->gpus;
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
  if (rc == CLI_OK) rc = qr_reps(&q, plan->warmup);
  const double flops = qr_flops(o->routine, p.dtype, p.m, p.n, p.nrhs);
  for (int k = api_first(&q); rc == CLI_OK && k < api_end(&q); k++) {
    cli_result_t *r = &q.r[k];
    r->gflops = rate(flops, r->seconds);
    if (has_baseline) r->baseline_gflops = rate(flops, r->baseline_seconds);
    rc = check_api(&q, k); /* the tile api's last: --output writes the LAPACK-style result */
  }
  if (rc == CLI_OK && mine) rc = print_results(&q, plan);
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

/* geqrf and gels on this process alone. */
static int qr_local(const cli_opts_t *o) {
  tessera_context_t *ctx;
  if (cli_context(o, &ctx)) return CLI_FAILED;
  const int64_t n = o->sizes[0], m = o->m >= 0 ? o->m : n;
  cli_progress_t quiet = {.running = 0}; /* no progress line */
  qr_plan_t plan = {0};
  const int rc = run_size(&ctx, o, m, n, &plan, &quiet);
  return cli_finish(ctx, rc);
}

int cli_qr(const cli_opts_t *o) {
  return cli_local_or_grid(o, qr_local);
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
  cli_progress_t prog;
  progress_init(&prog);
  qr_plan_t plan = {.threads = threads, .gpus = gpus, .warmup = has_gpus};
  int rc = CLI_OK;
  for (int i = 0; i < o->nsizes && rc == CLI_OK; i++)
    rc = run_size(&ctx, o, o->m >= 0 ? o->m : o->sizes[i], o->sizes[i], &plan, &prog);
  progress_end(&prog);
  return cli_finish(ctx, rc);
}
