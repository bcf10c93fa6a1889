/* tessera CLI — `tessera bench posv|gesv --mixed P`: the mixed-precision solve against tessera's
 * own working-precision solve on the same matrix and right-hand sides in the same run,
 * interleaved, best of --reps each: LAPACK-style on host arrays, and with --resident the
 * tile level on a descriptor made once, A brought onto the GPUs before each timed call by an
 * untimed product. gesv on a GPU also runs cuSOLVER's mixed-precision LU solve
 * (cusolverDn<t><l>gesv, bench_irs.c) in each of its lower precisions, the fastest kept. The
 * result lines carry the factor's precision, the refinement's steps (negative: the fallback's
 * code) and the scaled backward error of the answer; the ratios are to the working-precision
 * solve and to cuSOLVER's. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_gpu.h"
#include "cli.h"
#include "footprint.h"
#include "gen.h"
#include "resident.h"
#include "residual.h"

/** The arrays of one size: A and B as generated, the copies a solve takes, X. */
typedef struct {
  int64_t n, nrhs;
  void *a0, *b0, *a, *x;
  int *ipiv;
  tessera_matrix_t *A, *B, *Y; /**< --resident: A, B (X after the solve), a product's target */
} mixed_arrays_t;

/** One timed solve: api k (0 host arrays, 1 descriptors), mixed or in the working precision;
 *  X into m->x. Returns the seconds (negative: the call's status, printed). */
static double solve_once(tessera_context_t *ctx, const cli_opts_t *o, mixed_arrays_t *m, int k,
                         int mixed, tessera_mixed_result_t *res, cli_progress_t *prog) {
  const size_t es = tessera_dtype_size(o->dtype);
  const int64_t n = m->n, ld = n > 0 ? n : 1;
  const int lu = o->routine == CMD_GESV;
  tessera_mixed_options_t opts;
  tessera_mixed_options_init(&opts);
  opts.factor = (tessera_factor_t)o->mixed;
  *res = (tessera_mixed_result_t){.factor = TESSERA_FACTOR_WORKING};
  int status = 0;
  if (k == 0) {
    memcpy(m->a, m->a0, (size_t)(ld * n) * es);
    if (!mixed) memcpy(m->x, m->b0, (size_t)(ld * m->nrhs) * es);
  } else {
    status = tessera_matrix_import(m->A, m->a0, ld);
    if (!status) status = tessera_matrix_import(m->B, m->b0, ld);
    if (!status)
      status = lu ? resident_panels_on_gpus(ctx, m->A) : resident_on_gpus(ctx, m->A, m->B, m->Y);
  }
  const double t0 = progress_now();
  if (status) {
  } else if (k == 1) {
    if (lu)
      status = mixed ? tessera_tile_gesv_mixed(m->A, m->ipiv, m->B, &opts, res)
                     : tessera_tile_gesv(m->A, m->ipiv, m->B);
    else
      status = mixed ? tessera_tile_posv_mixed(o->uplo, m->A, m->B, &opts, res)
                     : tessera_tile_posv(o->uplo, m->A, m->B);
  } else if (mixed) {
    status = lu ? tessera_gesv_mixed(ctx, o->dtype, n, m->nrhs, m->a, ld, m->ipiv, m->b0, ld, m->x,
                                     ld, &opts, res)
                : tessera_posv_mixed(ctx, o->uplo, o->dtype, n, m->nrhs, m->a, ld, m->b0, ld, m->x,
                                     ld, &opts, res);
  } else {
    status = lu ? tessera_gesv(ctx, o->dtype, n, m->nrhs, m->a, ld, m->ipiv, m->x, ld)
                : tessera_posv(ctx, o->uplo, o->dtype, n, m->nrhs, m->a, ld, m->x, ld);
  }
  const double t = progress_now() - t0;
  if (!status && k == 1) status = tessera_matrix_export(m->B, m->x, ld);
  if (status) return cli_report(ctx, prog, mixed ? "mixed solve" : "solve", status), -1;
  return t;
}

/** Allocates the host arrays of size n; CLI_OK or CLI_FAILED (message printed). */
static int arrays_new(const cli_opts_t *o, int64_t n, mixed_arrays_t *m) {
  const int64_t ld = n > 0 ? n : 1;
  *m = (mixed_arrays_t){.n = n, .nrhs = o->nrhs};
  m->a0 = cli_alloc(o->dtype, ld, n);
  m->a = cli_alloc(o->dtype, ld, n);
  m->b0 = cli_alloc(o->dtype, ld, m->nrhs);
  m->x = cli_alloc(o->dtype, ld, m->nrhs);
  m->ipiv = calloc((size_t)ld, sizeof *m->ipiv);
  return m->a0 && m->a && m->b0 && m->x && m->ipiv ? CLI_OK : CLI_FAILED;
}

/** The descriptors of --resident on ctx (gesv's A in column panels, as LU takes it; posv's Y the
 *  target of the product bringing A onto the GPUs); CLI_OK or CLI_FAILED (message printed). */
static int descriptors_new(tessera_context_t *ctx, const cli_opts_t *o, mixed_arrays_t *m) {
  const int lu = o->routine == CMD_GESV;
  const int64_t tile = lu ? tessera_tile_for_lu(ctx, m->n, m->n) : tessera_tile_for(ctx, m->n);
  int status =
      tessera_matrix_create(ctx, o->dtype, m->n, m->n, lu && m->n > 0 ? m->n : tile, tile, &m->A);
  if (!status) status = tessera_matrix_create(ctx, o->dtype, m->n, m->nrhs, tile, tile, &m->B);
  if (!status && !lu)
    status = tessera_matrix_create(ctx, o->dtype, m->n, m->nrhs, tile, tile, &m->Y);
  return status ? cli_report(ctx, NULL, "matrix create", status) : CLI_OK;
}

static void arrays_free(mixed_arrays_t *m) {
  tessera_matrix_t *d[3] = {m->A, m->B, m->Y};
  for (int i = 0; i < 3; i++)
    if (d[i]) (void)tessera_matrix_destroy(d[i]);
  free(m->a0), free(m->a), free(m->b0), free(m->x), free(m->ipiv);
}

/** Times api k (0 host arrays, 1 descriptors) of both solves, interleaved, and prints the mixed
 *  solve's line (its ratio to the working-precision solve, and to cuSOLVER's `irs` seconds
 *  where finite). */
static int bench_api(tessera_context_t *ctx, const cli_opts_t *o, mixed_arrays_t *m, int k,
                     double irs, const char *irs_name, cli_progress_t *prog) {
  double best[2] = {INFINITY, INFINITY};
  tessera_mixed_result_t res = {0};
  double residual = NAN;
  for (int rep = -1; rep < o->reps; rep++) /* rep -1: warm-up, untimed */
    for (int mixed = 0; mixed < 2; mixed++) {
      progress_phase(prog, "%s%s n=%lld %s rep %d/%d", k ? "tile " : "", mixed ? "mixed" : "plain",
                     (long long)m->n, cli_cmd_name(o->routine), rep + 1, o->reps);
      tessera_mixed_result_t r;
      const double t = solve_once(ctx, o, m, k, mixed, &r, prog);
      if (t < 0) return CLI_FAILED;
      if (rep >= 0 && t < best[mixed]) best[mixed] = t;
      if (mixed) res = r;
    }
  progress_phase(prog, "residual");
  residual = residual_solve(o->dtype, m->n, m->nrhs, m->a0, m->n > 0 ? m->n : 1, m->x,
                            m->n > 0 ? m->n : 1, m->b0, m->n > 0 ? m->n : 1);
  progress_phase(prog, NULL);
  cli_result_t r;
  cli_result_init(&r, o, ctx);
  const double flops = cli_flops(o->routine, o->dtype, m->n, m->nrhs);
  r.n = m->n, r.nrhs = m->nrhs, r.api = k ? "tile" : "lapack";
  r.tile =
      o->routine == CMD_GESV ? tessera_tile_for_lu(ctx, m->n, m->n) : tessera_tile_for(ctx, m->n);
  r.seconds = best[1];
  r.gflops = flops / best[1] * 1e-9;
  r.residual = residual;
  r.factor = cli_factor_name(o->dtype, res.factor);
  r.iterations = res.iter;
  r.has_baseline = 1;
  r.baseline = "working";
  r.baseline_seconds = best[0];
  r.baseline_gflops = flops / best[0] * 1e-9;
  if (irs_name) {
    r.has_baseline2 = 1;
    r.baseline2 = irs_name;
    r.baseline2_seconds = irs;
    r.baseline2_gflops = isfinite(irs) ? flops / irs * 1e-9 : NAN;
  }
  cli_print_result(o, &r);
  return CLI_OK;
}

/** One size: generates A (Hermitian positive definite for posv, general for gesv) and B, runs
 *  cuSOLVER's IRS for gesv on GPUs (`irs_gpu`; tessera stopped meanwhile: its pools hold nearly
 *  all GPU memory), then each api. */
static int bench_size(tessera_context_t **ctx, const cli_opts_t *o, int64_t n, int irs_gpu,
                      cli_progress_t *prog) {
  mixed_arrays_t m;
  int rc = arrays_new(o, n, &m);
  const int64_t ld = n > 0 ? n : 1;
  double irs = INFINITY;
  const char *irs_name = NULL;
  if (rc == CLI_OK) {
    progress_phase(prog, "generating n=%lld", (long long)n);
    if (o->cond > 0) { /* the copy `a` is the QR's work array until the solves take it */
      const int status =
          gen_cond(*ctx, o->dtype, n, o->cond, o->routine == CMD_POSV, m.a0, ld, m.a, GEN_SEED_A);
      if (status) rc = cli_report(*ctx, prog, "generating A of condition --cond", status);
    } else if (o->routine == CMD_GESV) {
      gen_dense(o->dtype, n, n, m.a0, ld, GEN_SEED_A);
    } else {
      gen_spd(o->dtype, n, m.a0, ld, GEN_SEED_A);
    }
    gen_dense(o->dtype, n, m.nrhs, m.b0, ld, GEN_SEED_B);
  }
  if (rc == CLI_OK && irs_gpu) {
    progress_phase(prog, "stopping tessera for cuSOLVER's IRS");
    const int status = tessera_finalize(*ctx);
    *ctx = NULL;
    if (status < 0) rc = cli_report(NULL, prog, "finalize", status);
    if (rc == CLI_OK) irs = bench_irs_gesv(o, n, m.nrhs, m.a0, ld, m.b0, ld, prog, &irs_name);
    progress_phase(prog, "restarting tessera");
    if (rc == CLI_OK && cli_context_again(o, ctx)) rc = CLI_FAILED;
  }
  if (rc == CLI_OK && o->resident) rc = descriptors_new(*ctx, o, &m);
  for (int k = o->resident == 2; k < (o->resident ? 2 : 1) && rc == CLI_OK; k++)
    rc = bench_api(*ctx, o, &m, k, irs, irs_name, prog);
  arrays_free(&m);
  return rc;
}

/** What bench_size holds at once (`arg`: the options). */
static void mixed_footprint(const void *arg, int64_t n, cli_footprint_t *f) {
  const cli_opts_t *o = arg;
  const double a = cli_array_bytes(o->dtype, n, n), b = cli_array_bytes(o->dtype, n, o->nrhs);
  cli_footprint_add(f, "A twice, the original kept for the residual and the solves' copy:", 2 * a);
  cli_footprint_add(f, "B and X:", 2 * b);
  cli_footprint_add(f, "the mixed solve's single-precision copy of A at most:", a);
}

int cli_bench_mixed(const cli_opts_t *o) {
  tessera_context_t *ctx;
  if (cli_context(o, &ctx)) return CLI_FAILED;
  const int irs_gpu = o->routine == CMD_GESV && !o->no_baseline &&
                      tessera_device_count(ctx, TESSERA_DEVICE_CUDA) > 0;
  for (int i = 0; i < o->nsizes; i++)
    if (cli_bench_check_footprint(o, mixed_footprint, o, o->sizes[i]))
      return cli_finish(ctx, CLI_FAILED);
  cli_blas_threads(1);
  if (!o->json) {
    printf("# %s %s --mixed: tessera's mixed-precision solve (%d workers, %d GPUs) against its "
           "working-precision %s",
           cli_cmd_name(o->routine), tessera_dtype_name(o->dtype), tessera_worker_count(ctx),
           tessera_accelerator_count(ctx), cli_cmd_name(o->routine));
    if (irs_gpu) printf(" and cuSOLVER's IRS gesv on GPU 0 (the fastest of its precisions)");
    printf(", %lld right-hand side%s, best of %d after a warm-up\n", (long long)o->nrhs,
           o->nrhs == 1 ? "" : "s", o->reps);
    if (o->cond > 0)
      printf("# A = Q1 D Q2^H of condition number %g (D geometric from 1 to 1/%g, Q1 and Q2 "
             "from the QR of random matrices%s)\n",
             o->cond, o->cond, o->routine == CMD_POSV ? ", Q2 = Q1" : "");
    if (o->resident)
      printf("# api tile: tessera_tile_%s_mixed and tessera_tile_%s on descriptors made once, A "
             "imported and brought onto the GPUs before each run (untimed)\n",
             cli_cmd_name(o->routine), cli_cmd_name(o->routine));
  }
  cli_print_header(o, "working", irs_gpu ? "cusolverIRS" : NULL);
  cli_progress_t prog;
  progress_init(&prog);
  int rc = CLI_OK;
  for (int i = 0; i < o->nsizes && rc == CLI_OK; i++)
    rc = bench_size(&ctx, o, o->sizes[i], irs_gpu, &prog);
  progress_end(&prog);
  return cli_finish(ctx, rc);
}
