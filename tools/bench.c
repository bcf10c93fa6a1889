/* tessera CLI — `tessera bench potrf`: tessera against LAPACKE with the same thread count. */
#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "gen.h"
#include "residual.h"

#ifdef TESSERA_HAVE_OPENBLAS_THREADS
void openblas_set_num_threads(int num_threads);
#endif

/** Sets the thread count of the BLAS library where it can be set. */
static void blas_threads(int threads) {
#ifdef TESSERA_HAVE_OPENBLAS_THREADS
  openblas_set_num_threads(threads);
#else
  (void)threads;
#endif
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

/** The arrays of one size: the pristine A and the copies each side factors. */
typedef struct {
  int64_t n, ld;
  void *a0, *at, *ab;
} bench_arrays_t;

/** Runs both sides o->reps times, interleaved, on fresh copies of the same matrix. */
static int bench_reps(tessera_context_t *ctx, const cli_opts_t *o, const bench_arrays_t *m,
                      int threads, cli_progress_t *prog, cli_result_t *r) {
  size_t bytes = (size_t)(m->ld * m->n) * tessera_dtype_size(o->dtype);
  for (int rep = 0; rep < o->reps; rep++) {
    progress_phase(prog, "tessera potrf n=%lld rep %d/%d", (long long)m->n, rep + 1, o->reps);
    memcpy(m->at, m->a0, bytes);
    double t0 = progress_now();
    int status = tessera_potrf(ctx, o->uplo, o->dtype, m->n, m->at, m->ld);
    r->seconds = fmin(r->seconds, progress_now() - t0);
    if (status) return cli_report(ctx, prog, "potrf", status);
    progress_phase(prog, "LAPACKE potrf n=%lld rep %d/%d", (long long)m->n, rep + 1, o->reps);
    memcpy(m->ab, m->a0, bytes);
    blas_threads(threads);
    t0 = progress_now();
    status = lapacke_potrf(o->dtype, (char)o->uplo, (int)m->n, m->ab, (int)m->ld);
    r->baseline_seconds = fmin(r->baseline_seconds, progress_now() - t0);
    blas_threads(1);
    if (status) {
      progress_phase(prog, NULL);
      fprintf(stderr, "tessera: LAPACKE potrf failed (info = %d)\n", status);
      return CLI_FAILED;
    }
  }
  return CLI_OK;
}

/** Benchmarks one size and prints its result line. */
static int bench_size(tessera_context_t *ctx, const cli_opts_t *o, int64_t n, int threads,
                      cli_progress_t *prog) {
  bench_arrays_t m = {n, n > 0 ? n : 1, NULL, NULL, NULL};
  int rc = CLI_FAILED;
  if ((m.a0 = cli_alloc(o->dtype, m.ld, n)) && (m.at = cli_alloc(o->dtype, m.ld, n)) &&
      (m.ab = cli_alloc(o->dtype, m.ld, n))) {
    progress_phase(prog, "generating n=%lld", (long long)n);
    gen_spd(o->dtype, n, m.a0, m.ld, GEN_SEED_A);
    cli_result_t r;
    cli_result_init(&r, o, ctx);
    r.n = n;
    r.has_baseline = 1;
    r.baseline = "lapacke";
    r.seconds = r.baseline_seconds = INFINITY;
    rc = bench_reps(ctx, o, &m, threads, prog, &r);
    if (rc == CLI_OK) {
      double flops = cli_flops(CMD_POTRF, o->dtype, n, 0) * 1e-9;
      r.gflops = r.seconds > 0 ? flops / r.seconds : 0;
      r.baseline_gflops = r.baseline_seconds > 0 ? flops / r.baseline_seconds : 0;
      progress_phase(prog, "residual");
      r.residual = residual_potrf(o->dtype, o->uplo, n, m.a0, m.ld, m.at, m.ld);
      progress_phase(prog, NULL);
      cli_print_result(o, &r);
    }
  }
  progress_phase(prog, NULL);
  free(m.a0);
  free(m.at);
  free(m.ab);
  return rc;
}

int cli_bench(const cli_opts_t *o) {
  tessera_context_t *ctx;
  if (cli_context(o, &ctx)) return CLI_FAILED;
  tessera_device_info_t cpu = {.workers = 0};
  int threads = o->workers;
  if (threads < 0 && tessera_device_count(ctx, TESSERA_DEVICE_CPU) > 0 &&
      tessera_device_info(ctx, TESSERA_DEVICE_CPU, 0, &cpu) == 0)
    threads = cpu.workers;
  if (threads < 1) threads = 1;
  blas_threads(1);
  if (!o->json)
    printf("# potrf %s, uplo %c: tessera (workers: %d) against LAPACKE (threads: %d), best of %d\n",
           tessera_dtype_name(o->dtype), (char)o->uplo, tessera_worker_count(ctx), threads,
           o->reps);
  cli_print_header(o, 1);
  cli_progress_t prog;
  progress_init(&prog);
  int rc = CLI_OK;
  for (int i = 0; i < o->nsizes && rc == CLI_OK; i++)
    rc = bench_size(ctx, o, o->sizes[i], threads, &prog);
  progress_end(&prog);
  return cli_finish(ctx, rc);
}
