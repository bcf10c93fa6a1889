/* tessera CLI — `tessera bench potrf|getrf|syevd`: tessera against cuSolverMg and cusolverDnX on
 * the same GPUs (bench_gpu.c) or, without GPUs, against LAPACKE with the same thread count. syevd
 * is checked as `tessera syevd` checks it (eig.c). */
#include <lapacke.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_gpu.h"
#include "cli.h"
#include "footprint.h"
#include "gen.h"
#include "resident.h"
#include "residual.h"

/** LAPACKE's LU factorization of `dtype`; returns its info. */
static int lapacke_getrf(tessera_dtype_t dtype, int n, void *a, int lda, int *ipiv) {
  switch (dtype) {
  case TESSERA_F32:
    return LAPACKE_sgetrf_work(LAPACK_COL_MAJOR, n, n, a, lda, ipiv);
  case TESSERA_F64:
    return LAPACKE_dgetrf_work(LAPACK_COL_MAJOR, n, n, a, lda, ipiv);
  case TESSERA_C64:
    return LAPACKE_cgetrf_work(LAPACK_COL_MAJOR, n, n, a, lda, ipiv);
  case TESSERA_C128:
    return LAPACKE_zgetrf_work(LAPACK_COL_MAJOR, n, n, a, lda, ipiv);
  }
  return -1;
}

/** LAPACKE's Cholesky factorization of `dtype`; returns its info. */
static int lapacke_potrf(tessera_dtype_t dtype, char uplo, int n, void *a, int lda) {
  switch (dtype) {
  case TESSERA_F32:
    return LAPACKE_spotrf_work(LAPACK_COL_MAJOR, uplo, n, a, lda);
  case TESSERA_F64:
    return LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, uplo, n, a, lda);
  case TESSERA_C64:
    return LAPACKE_cpotrf_work(LAPACK_COL_MAJOR, uplo, n, a, lda);
  case TESSERA_C128:
    return LAPACKE_zpotrf_work(LAPACK_COL_MAJOR, uplo, n, a, lda);
  }
  return -1;
}

/** The arrays of one size: the pristine A and the copies each side factors (ab: LAPACKE), for
 *  LU the pivots of each side, for syevd the eigenvalues of each side. */
typedef struct {
  int64_t n, ld;
  void *a0, *at, *ab;
  int *pt, *pb;
  void *wt, *wb;
} bench_arrays_t;

/** Whether bench syevd --resident keeps A's pristine tiles on the GPUs of ctx (bench_t.S). */
static bool syevd_tiles_on_gpus(const cli_opts_t *o, const tessera_context_t *ctx) {
  return o->resident && o->routine == CMD_SYEVD && tessera_accelerator_count(ctx) > 0;
}

/** What one size runs: the tessera results (LAPACK-style, then tile level), the resident
 *  descriptor, and the CPU baseline's thread count (0: no LAPACKE). */
typedef struct {
  tessera_context_t *ctx;
  const cli_opts_t *o;
  const bench_arrays_t *m;
  tessera_matrix_t *A; /**< NULL without --resident */
  tessera_matrix_t *S; /**< syevd --resident with GPUs: A's tiles, imported once, copied into A's
                          on the GPUs before each tile call (cuSOLVER's A is on its GPU too) */
  int threads;
  int dn_values; /**< syevd: m->wb holds cusolverDnXsyevd's eigenvalues (no LAPACKE run) */
  cli_progress_t *prog;
  cli_result_t r[2];
} bench_t;

/** One LAPACKE run on a fresh copy; returns CLI_OK or CLI_FAILED. */
static int lapacke_rep(bench_t *b, size_t bytes) {
  const bench_arrays_t *m = b->m;
  const cli_opts_t *o = b->o;
  memcpy(m->ab, m->a0, bytes);
  cli_blas_threads(b->threads);
  double t0 = progress_now();
  int status = o->routine == CMD_GETRF
                   ? lapacke_getrf(o->dtype, (int)m->n, m->ab, (int)m->ld, m->pb)
               : o->routine == CMD_SYEVD
                   ? cli_eig_lapacke(cli_eig_job(o), o->uplo, o->dtype, m->n, m->ab, m->ld, m->wb)
                   : lapacke_potrf(o->dtype, (char)o->uplo, (int)m->n, m->ab, (int)m->ld);
  b->r[0].baseline_seconds = fmin(b->r[0].baseline_seconds, progress_now() - t0);
  cli_blas_threads(1);
  if (status == 0) return CLI_OK;
  progress_phase(b->prog, NULL);
  fprintf(stderr, "tessera: LAPACKE %s failed (info = %d)\n", cli_cmd_name(b->o->routine), status);
  return CLI_FAILED;
}

/** One factorization by tessera: LAPACK-style on m->at (k 0) or tile level on b->A (k 1). */
static int tessera_factor(bench_t *b, int k) {
  const cli_opts_t *o = b->o;
  const bench_arrays_t *m = b->m;
  if (o->routine == CMD_SYEVD && k) return tessera_tile_syevd(cli_eig_job(o), o->uplo, b->A, m->wt);
  if (o->routine == CMD_SYEVD)
    return cli_eig_tessera(b->ctx, cli_eig_job(o), o->uplo, o->dtype, m->n, m->at, m->ld, 0, 0,
                           m->wt);
  if (o->routine == CMD_GETRF)
    return k ? tessera_tile_getrf(b->A, m->pt)
             : tessera_getrf(b->ctx, o->dtype, m->n, m->n, m->at, m->ld, m->pt);
  return k ? tessera_tile_potrf(o->uplo, b->A)
           : tessera_potrf(b->ctx, o->uplo, o->dtype, m->n, m->at, m->ld);
}

/** One tessera run of side k (0: LAPACK-style on a fresh copy; 1: tile level on the
 *  descriptor, imported again, untimed); the time is kept unless `rep` < 0 (warm-up). */
static int tessera_rep(bench_t *b, int k, int rep, size_t bytes) {
  const cli_opts_t *o = b->o;
  const bench_arrays_t *m = b->m;
  const char *name = cli_cmd_name(o->routine);
  char what[32] = "warm-up";
  if (rep >= 0) snprintf(what, sizeof what, "rep %d/%d", rep + 1, o->reps);
  progress_phase(b->prog, "tessera %s%s n=%lld %s", k ? "tile " : "", name, (long long)m->n, what);
  int status = 0;
  if (k == 0) memcpy(m->at, m->a0, bytes);
  if (k == 1 && (status = b->S ? resident_copy_on_gpus(b->ctx, b->S, b->A)
                               : tessera_matrix_import(b->A, m->a0, m->ld)))
    return cli_report(b->ctx, b->prog, b->S ? "copy on the GPUs" : "matrix import", status);
  double t0 = progress_now();
  status = tessera_factor(b, k);
  double t = progress_now() - t0;
  if (status) return cli_report(b->ctx, b->prog, name, status);
  if (rep >= 0) b->r[k].seconds = fmin(b->r[k].seconds, t);
  return CLI_OK;
}

/** Runs every side o->reps times, interleaved, on fresh copies of the same matrix; with GPUs a
 *  first untimed round warms tessera up, as the GPU baselines are. */
static int bench_reps(bench_t *b, int warmup) {
  const bench_arrays_t *m = b->m;
  size_t bytes = (size_t)(m->ld * m->n) * tessera_dtype_size(b->o->dtype);
  for (int rep = warmup ? -1 : 0; rep < b->o->reps; rep++) {
    for (int k = b->o->resident == 2; k < (b->A ? 2 : 1); k++)
      if (tessera_rep(b, k, rep, bytes)) return CLI_FAILED;
    if (b->threads > 0 && rep >= 0) {
      progress_phase(b->prog, "LAPACKE %s n=%lld rep %d/%d", cli_cmd_name(b->o->routine),
                     (long long)m->n, rep + 1, b->o->reps);
      if (lapacke_rep(b, bytes)) return CLI_FAILED;
    }
  }
  return CLI_OK;
}

/** Rate in GFLOP/s of `flops` in `seconds`; NaN when the time is unknown. */
static double rate(double flops, double seconds) {
  return isfinite(seconds) && seconds > 0 ? flops * 1e-9 / seconds : flops > 0 ? NAN : 0;
}

/** Sets the baselines of both results from the CPU or GPU baseline times. */
static void set_baselines(bench_t *b, int gpus, const gpu_baseline_t *g) {
  for (int k = 0; k < 2; k++) {
    cli_result_t *r = &b->r[k];
    r->has_baseline = b->threads > 0 || gpus > 0;
    r->baseline = gpus > 0 ? "cusolverMg" : "lapacke";
    if (k > 0) r->baseline_seconds = b->r[0].baseline_seconds;
    if (gpus > 0 && b->o->no_mg) {
      r->baseline = "cusolverDn";
      r->baseline_seconds = g->dn_seconds;
    } else if (gpus > 0) {
      r->baseline_seconds = g->mg_seconds;
      r->baseline_tile = g->mg_tile;
      r->has_baseline2 = 1;
      r->baseline2 = "cusolverDn";
      r->baseline2_seconds = g->dn_seconds;
    }
  }
}

/** syevd's check (eig.c) of tessera's result into `r`; the values are compared with LAPACKE's
 *  eigenvalues where it ran, else with cusolverDnXsyevd's where it ran (LAPACK's on the host
 *  would take minutes at the orders GPUs take), else with LAPACK's computed for the check. */
static int check_eig(bench_t *b, cli_result_t *r) {
  const cli_opts_t *o = b->o;
  const bench_arrays_t *m = b->m;
  return cli_eig_check(b->ctx, cli_eig_job(o), o->dtype, m->n, 0, m->n, m->a0, m->ld, m->at, m->wt,
                       b->threads > 0 || b->dn_values ? m->wb : NULL,
                       cli_baseline_threads(o, b->ctx), b->prog, &r->residual, &r->orthogonality);
}

/** Computes the rates and residuals and prints the result lines. */
static int report(bench_t *b) {
  const cli_opts_t *o = b->o;
  const bench_arrays_t *m = b->m;
  const int eig = o->routine == CMD_SYEVD;
  double flops = eig ? cli_eig_flops(o->dtype, m->n, cli_eig_job(o))
                     : cli_flops(o->routine, o->dtype, m->n, 0);
  for (int k = o->resident == 2; k < (b->A ? 2 : 1); k++) {
    cli_result_t *r = &b->r[k];
    r->gflops = rate(flops, r->seconds);
    r->baseline_gflops = rate(flops, r->baseline_seconds);
    r->baseline2_gflops = rate(flops, r->baseline2_seconds);
    progress_phase(b->prog, "residual");
    int status = k ? tessera_matrix_export(b->A, m->at, m->ld) : 0;
    if (status) return cli_report(b->ctx, b->prog, "matrix export", status);
    if (eig) {
      if (check_eig(b, r)) return CLI_FAILED;
    } else {
      r->residual = o->routine == CMD_GETRF
                        ? residual_getrf(o->dtype, m->n, m->a0, m->ld, m->at, m->ld, m->pt)
                        : residual_potrf(o->dtype, o->uplo, m->n, m->a0, m->ld, m->at, m->ld);
    }
    progress_phase(b->prog, NULL);
    cli_print_result(o, r);
  }
  return CLI_OK;
}

/** Runs the GPU baselines on the generated matrix with tessera stopped: a context holds nearly
 *  all GPU memory in its pools, so it is finalized first and created anew afterwards (with
 *  --trace, the file therefore shows the last size only). */
static int gpu_baselines(tessera_context_t **ctx, const cli_opts_t *o, int gpus,
                         const bench_arrays_t *m, cli_progress_t *prog, gpu_baseline_t *g) {
  progress_phase(prog, "stopping tessera for the baselines");
  int status = tessera_finalize(*ctx);
  *ctx = NULL;
  if (status < 0) return cli_report(NULL, prog, "finalize", status);
  bench_gpu_factor(o, gpus, m->n, m->a0, m->ld, prog, g);
  progress_phase(prog, "restarting tessera");
  return cli_context_again(o, ctx);
}

/** Benchmarks one size and prints its result lines: tessera against LAPACKE with `threads`
 *  threads (0: none) or the GPU baselines on `gpus` GPUs (0: none). */
static int bench_size(tessera_context_t **ctx, const cli_opts_t *o, int64_t n, int threads,
                      int gpus, int warmup, cli_progress_t *prog) {
  bench_arrays_t m = {n, n > 0 ? n : 1, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
  const int lu = o->routine == CMD_GETRF, eig = o->routine == CMD_SYEVD;
  bench_t b = {NULL, o, &m, NULL, NULL, gpus > 0 ? 0 : threads, 0, prog, {{0}}};
  gpu_baseline_t g = {INFINITY, 0, INFINITY, NULL, 0};
  int rc = CLI_OK, status;
  if (!(m.a0 = cli_alloc(o->dtype, m.ld, n)) || !(m.at = cli_alloc(o->dtype, m.ld, n)) ||
      (b.threads > 0 && !(m.ab = cli_alloc(o->dtype, m.ld, n))))
    rc = CLI_FAILED;
  if (rc == CLI_OK && lu &&
      (!(m.pt = calloc((size_t)m.ld, sizeof(int))) ||
       !(m.pb = calloc((size_t)m.ld, sizeof(int))))) {
    fprintf(stderr, "tessera: out of memory for the pivots\n");
    rc = CLI_FAILED;
  }
  if (rc == CLI_OK && eig &&
      (!(m.wt = cli_alloc(cli_real_dtype(o->dtype), m.ld, 1)) ||
       ((b.threads > 0 || gpus > 0) && !(m.wb = cli_alloc(cli_real_dtype(o->dtype), m.ld, 1)))))
    rc = CLI_FAILED;
  if (rc == CLI_OK) {
    progress_phase(prog, "generating n=%lld", (long long)n);
    if (lu)
      gen_dense(o->dtype, n, n, m.a0, m.ld, GEN_SEED_A);
    else if (eig)
      cli_eig_generate(o->dtype, n, m.a0, m.ld);
    else
      gen_spd(o->dtype, n, m.a0, m.ld, GEN_SEED_A);
    g.w = m.wb;
    if (gpus > 0) rc = gpu_baselines(ctx, o, gpus, &m, prog, &g);
    b.dn_values = eig && g.has_w;
  }
  int tile = rc != CLI_OK ? 0
             : lu         ? tessera_tile_for_lu(*ctx, n, n)
             : eig        ? tessera_tile_for_eig(*ctx, cli_eig_job(o), o->dtype, n)
                          : tessera_tile_for(*ctx, n);
  if (rc == CLI_OK && o->resident &&
      (status =
           tessera_matrix_create(*ctx, o->dtype, n, n, lu ? (n > 1 ? n : 1) : tile, tile, &b.A)))
    rc = cli_report(*ctx, prog, "matrix create", status);
  if (rc == CLI_OK && syevd_tiles_on_gpus(o, *ctx) &&
      ((status = tessera_matrix_create(*ctx, o->dtype, n, n, tile, tile, &b.S)) ||
       (status = tessera_matrix_import(b.S, m.a0, m.ld))))
    rc = cli_report(*ctx, prog, "matrix create", status);
  if (rc == CLI_OK) {
    b.ctx = *ctx;
    for (int k = 0; k < 2; k++) {
      cli_result_init(&b.r[k], o, b.ctx);
      b.r[k].n = n;
      b.r[k].tile = tile;
      b.r[k].api = k ? "tile" : "lapack";
      b.r[k].seconds = b.r[k].baseline_seconds = b.r[k].baseline2_seconds = INFINITY;
    }
    rc = bench_reps(&b, warmup);
    set_baselines(&b, gpus, &g);
    if (rc == CLI_OK) rc = report(&b);
  }
  progress_phase(prog, NULL);
  if (b.A && (status = tessera_matrix_destroy(b.A)) && rc == CLI_OK)
    rc = cli_report(*ctx, prog, "matrix destroy", status);
  if (b.S && (status = tessera_matrix_destroy(b.S)) && rc == CLI_OK)
    rc = cli_report(*ctx, prog, "matrix destroy", status);
  free(m.a0);
  free(m.at);
  free(m.ab);
  free(m.pt);
  free(m.pb);
  free(m.wt);
  free(m.wb);
  return rc;
}

/** What bench_size holds at once (`arg`: the bench_footprint_t). */
typedef struct {
  const cli_opts_t *o;
  tessera_context_t *ctx;
  int lapacke; /**< the LAPACKE baseline runs: a third copy of A */
} bench_footprint_t;

static void bench_footprint(const void *arg, int64_t n, cli_footprint_t *f) {
  const bench_footprint_t *b = arg;
  const double a = cli_array_bytes(b->o->dtype, n, n);
  cli_footprint_add(f, "A twice, the original kept for the residual and tessera's copy:", 2 * a);
  if (b->lapacke) cli_footprint_add(f, "LAPACKE's copy of A:", a);
  if (b->o->resident)
    cli_footprint_add(f, "the resident descriptor:", cli_descriptor_host_bytes(b->ctx, a));
  if (syevd_tiles_on_gpus(b->o, b->ctx))
    cli_footprint_add(f,
                      "syevd's pristine tiles for the GPUs:", cli_descriptor_host_bytes(b->ctx, a));
  if (b->o->routine == CMD_GETRF)
    cli_footprint_add(f, "the pivots:", 2.0 * (double)n * sizeof(int));
  if (b->o->routine == CMD_SYEVD) cli_footprint_eig(b->ctx, b->o->dtype, cli_eig_job(b->o), n, f);
  cli_footprint_add(f, "the residual's vectors:", 2 * cli_array_bytes(b->o->dtype, n, 1));
}

/** Prints, for each worker that used an urgent lane, how many tasks ran there over the whole
 *  run (warm-ups included). */
static void print_lanes(const tessera_context_t *ctx) {
  const int n = ctx ? tessera_worker_count(ctx) : 0;
  tessera_worker_stats_t *st = n > 0 ? calloc((size_t)n, sizeof *st) : NULL;
  const int got = st ? tessera_stats(ctx, st, n) : 0;
  for (int i = 0; i < got && i < n; i++)
    if (st[i].urgent)
      printf("# worker %d: %llu tasks on the urgent lane\n", i, (unsigned long long)st[i].urgent);
  free(st);
}

int cli_bench(const cli_opts_t *o) {
  if (o->out_of_core) return cli_bench_ooc(o);
  if (cli_is_qr(o->routine)) return cli_bench_qr(o);
  if (cli_is_svd(o->routine)) return cli_bench_svd(o);
  if (o->mixed >= 0) return cli_bench_mixed(o);
  tessera_context_t *ctx;
  if (cli_context(o, &ctx)) return CLI_FAILED;
  int threads = cli_baseline_threads(o, ctx), gpus = tessera_device_count(ctx, TESSERA_DEVICE_CUDA);
  int has_gpus = gpus > 0;
  if (o->no_baseline) threads = gpus = 0;
  const bench_footprint_t fp = {o, ctx, threads > 0 && gpus == 0};
  for (int i = 0; i < o->nsizes; i++)
    if (cli_bench_check_footprint(o, bench_footprint, &fp, o->sizes[i]))
      return cli_finish(ctx, CLI_FAILED);
  cli_blas_threads(1);
  if (!o->json) {
    const int lu = o->routine == CMD_GETRF, eig = o->routine == CMD_SYEVD;
    printf("# %s %s", cli_cmd_name(o->routine), tessera_dtype_name(o->dtype));
    if (!lu) printf(", uplo %c", (char)o->uplo);
    if (eig) printf(", %s", o->values_only ? "eigenvalues only" : "eigenvalues and eigenvectors");
    printf(": tessera (%d workers, %d GPUs)", tessera_worker_count(ctx),
           tessera_accelerator_count(ctx));
    if (gpus > 0)
      printf(" against cusolverMg (cusolverMg%s, %d GPUs, tile %s, the better) and cusolverDn "
             "(cusolverDnX%s, GPU 0), matrix already on the GPUs, after a warm-up",
             lu    ? "Getrf"
             : eig ? "Syevd"
                   : "Potrf",
             gpus, bench_gpu_mg_tiles(o), cli_cmd_name(o->routine));
    else if (threads > 0)
      printf(" against LAPACKE (threads: %d)", threads);
    printf(", best of %d\n", o->reps);
    if (o->resident)
      printf("# api lapack: tessera_%s on a host array; api tile: tessera_tile_%s on a "
             "descriptor made once, %s before each run (untimed)\n",
             cli_cmd_name(o->routine), cli_cmd_name(o->routine),
             syevd_tiles_on_gpus(o, ctx) ? "its tiles copied on the GPUs" : "imported");
  }
  cli_print_header(o,
                   gpus > 0      ? "cusolverMg"
                   : threads > 0 ? "lapacke"
                                 : NULL,
                   gpus > 0 ? "cusolverDn" : NULL);
  cli_progress_t prog;
  progress_init(&prog);
  int rc = CLI_OK;
  for (int i = 0; i < o->nsizes && rc == CLI_OK; i++)
    rc = bench_size(&ctx, o, o->sizes[i], threads, gpus, has_gpus, &prog);
  progress_end(&prog);
  if (!o->json && rc == CLI_OK) print_lanes(ctx);
  return cli_finish(ctx, rc);
}
