/* tessera CLI — `tessera gepolar` and `tessera gesvd`: the polar decomposition A = U_p H and the
 * singular value decomposition A = U Σ Vᴴ (--values-only: Σ; --full: all of U and Vᴴ) of a
 * generated m x n matrix (gen_dense, seed GEN_SEED_A) or --input's, by tessera_gepolar /
 * tessera_gesvd, timed (best of
 * --reps, each on a fresh copy of A) and checked. Checks by tessera_gemm: gepolar's residual
 * ‖A − U_p H‖_F / (‖A‖_F max(m, n) eps) and orthogonality ‖I − U_pᴴ U_p‖_F / (n eps); gesvd's
 * ‖A − U Σ Vᴴ‖_F / (‖A‖_F max(m, n) eps) and ‖I − Uᴴ U‖_F / (c eps) over U's c columns
 * (min(m, n), or m with --full), values only
 * max_i |s_i − s_i(LAPACK)| / (s_1 max(m, n) eps) against LAPACKE's ?gesvd (job N). Under
 * --grid the LAPACK-style call runs over the processes from process 0's arrays. */
#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_gpu.h"
#include "cli.h"
#include "footprint.h"
#include "gen.h"
#include "npy.h"
#include "residual.h"

/* The problem: A (kept for the checks), the copy each run overwrites, and the outputs (U's
 * columns and Vᴴ's rows: k, or with --full m and n). */
typedef struct {
  tessera_dtype_t dtype;
  int64_t m, n, k, ucols, vrows;
  void *a0, *a, *h, *s, *u, *vt;
  int steps;
} svd_problem_t;

static void problem_free(svd_problem_t *p) {
  free(p->a0), free(p->a), free(p->h), free(p->s), free(p->u), free(p->vt);
}

/* QDWH's dense operation count (bench/polar.c's) for `steps` steps, and gesvd's beside it; a
 * gepolar of no step went through LAPACK's SVD: gesdd's count with vectors and the products
 * U_p = W Vᴴ and H = V Σ Vᴴ. */
static double flops(const cli_opts_t *o, const svd_problem_t *p) {
  const double m = (double)(p->m > p->n ? p->m : p->n), n = (double)p->k;
  if (o->routine == CMD_GEPOLAR && p->steps == 0) {
    const double f = 2 * (4 * m * n * n - 4.0 / 3 * n * n * n) + 2 * m * n * n + 2 * n * n * n;
    return tessera_dtype_is_complex(p->dtype) ? 4 * f : f;
  }
  const int steps = o->routine == CMD_GESVD ? 6 : p->steps, q = steps < 2 ? steps : 2;
  double f = q * (4 * (m + n) * n * n - 4.0 / 3 * n * n * n + 2 * m * n * n) +
             (steps - q) * (10.0 / 3 * m * n * n) + 6 * m * n * n;
  if (o->routine == CMD_GESVD) f += (o->values_only ? 4.0 / 3 : 9.0) * n * n * n + 2 * m * n * n;
  return tessera_dtype_is_complex(p->dtype) ? 4 * f : f;
}

/* Reads --input (any m x n) or generates A, on the process holding the arrays; the shape and
 * dtype shared with the others under --grid. */
static int prepare(tessera_context_t *ctx, const cli_opts_t *o, svd_problem_t *p) {
  const int mine = cli_holds(ctx);
  int64_t shape[3] = {o->m >= 0 ? o->m : o->sizes[0], o->sizes[0], o->dtype};
  if (mine && o->input) {
    npy_array_t in;
    if (cli_read_operand(o->input, CLI_ANY_SHAPE, o->dtype, !o->dtype_set, &in))
      shape[0] = -1;
    else
      shape[0] = in.shape[0], shape[1] = in.shape[1], shape[2] = in.dtype, p->a0 = in.data;
  }
  tessera_comm_t *c = tessera_context_comm(ctx);
  if (o->input && c && tessera_comm_broadcast(c, shape, 3, TESSERA_COMM_I64, 0, NULL))
    shape[0] = -1;
  if (shape[0] < 0) return CLI_FAILED;
  p->m = shape[0], p->n = shape[1], p->dtype = (tessera_dtype_t)shape[2];
  p->k = p->m < p->n ? p->m : p->n;
  p->ucols = o->full ? p->m : p->k, p->vrows = o->full ? p->n : p->k;
  if (o->routine == CMD_GEPOLAR && p->m < p->n) {
    if (mine)
      fprintf(stderr,
              "tessera: gepolar takes m >= n; A is %lld x %lld (decompose its conjugate "
              "transpose)\n",
              (long long)p->m, (long long)p->n);
    return CLI_FAILED;
  }
  if (!mine) return CLI_OK;
  const int64_t m = p->m > 0 ? p->m : 1, n = p->n > 0 ? p->n : 1, k = p->k > 0 ? p->k : 1;
  if (!p->a0 && (p->a0 = cli_alloc(p->dtype, m, n)))
    gen_dense(p->dtype, p->m, p->n, p->a0, m, GEN_SEED_A);
  p->a = cli_alloc(p->dtype, m, n);
  p->h = cli_alloc(p->dtype, n, n);
  p->s = cli_alloc(cli_real_dtype(p->dtype), k, 1);
  p->u = cli_alloc(p->dtype, m, p->ucols > 0 ? p->ucols : 1);
  p->vt = cli_alloc(p->dtype, p->vrows > 0 ? p->vrows : 1, n);
  return p->a0 && p->a && p->h && p->s && p->u && p->vt ? CLI_OK : CLI_FAILED;
}

/* What a gepolar / gesvd run holds on the host at once at n columns (m rows: --m, else n): A
 * and its pristine copy, H, s, U and Vᴴ, the check's two arrays of A's size (or LAPACK's copy
 * of A for values only), and without GPUs tessera's working matrices, host tiles then (two of
 * A's size, one of H's, two (m + n) x n panels). */
typedef struct {
  const cli_opts_t *o;
  tessera_dtype_t dtype;
  int gpus;
} svd_footprint_t;

static void svd_footprint(const void *arg, int64_t n, cli_footprint_t *f) {
  const svd_footprint_t *s = arg;
  const tessera_dtype_t dt = s->dtype;
  const int64_t m = s->o->m >= 0 ? s->o->m : n, k = m < n ? m : n;
  const int64_t ucols = s->o->full ? m : k, vrows = s->o->full ? n : k;
  cli_footprint_add(f, "A twice", 2 * cli_array_bytes(dt, m, n));
  cli_footprint_add(f, "H, U and Vᴴ",
                    cli_array_bytes(dt, n, n) + cli_array_bytes(dt, m, ucols) +
                        cli_array_bytes(dt, vrows, n));
  cli_footprint_add(f, "the check's arrays", 2 * cli_array_bytes(dt, m, n));
  if (s->gpus == 0)
    cli_footprint_add(f, "tessera's working matrices",
                      2 * cli_array_bytes(dt, m, n) + cli_array_bytes(dt, n, n) +
                          2 * cli_array_bytes(dt, m + n, k));
}

/* One call on a fresh copy of A (process 0's arrays under --grid, NULL on the others). */
static int call(tessera_context_t *ctx, const cli_opts_t *o, svd_problem_t *p) {
  const int mine = cli_holds(ctx);
  const int64_t lm = p->m > 0 ? p->m : 1, lv = p->vrows > 0 ? p->vrows : 1;
  if (mine) memcpy(p->a, p->a0, (size_t)(p->m * p->n) * tessera_dtype_size(p->dtype));
  void *a = mine ? p->a : NULL;
  if (o->routine == CMD_GEPOLAR)
    return tessera_gepolar(ctx, p->dtype, p->m, p->n, a, lm, mine ? p->h : NULL,
                           p->n > 0 ? p->n : 1, &p->steps);
  return tessera_gesvd(ctx, cli_eig_job(o), p->dtype, p->m, p->n, a, lm, mine ? p->s : NULL,
                       mine ? p->u : NULL, lm, mine ? p->vt : NULL, lv);
}

/* ‖I − Xᴴ X‖_F / (cols eps) of the rows x cols X. */
static double orthogonality(tessera_context_t *ctx, tessera_dtype_t dt, int64_t rows, int64_t cols,
                            const void *x) {
  char *r = cli_alloc(dt, cols, cols);
  if (!r) return NAN;
  double one[2], mone[2];
  residual_scalars(dt, mone, one);
  memset(r, 0, (size_t)(cols * cols) * tessera_dtype_size(dt));
  for (int64_t i = 0; i < cols; i++) elem_set(dt, r, (size_t)(i + i * cols), 1, 0);
  const int s = tessera_gemm(ctx, TESSERA_CONJTRANS, TESSERA_NOTRANS, dt, cols, cols, rows, mone, x,
                             rows, x, rows, one, r, cols);
  const double o =
      s ? NAN : residual_fro(dt, cols, cols, r, cols) / ((double)cols * residual_eps(dt));
  free(r);
  return o;
}

/* The checks on process 0 (tessera_gemm on ctx: under --grid, a collective call); LAPACK's
 * values with the threads the baseline would have (tessera waits meanwhile). */
static void check(tessera_context_t *ctx, const cli_opts_t *o, const svd_problem_t *p,
                  cli_result_t *r) {
  const int threads = cli_baseline_threads(o, ctx);
  const int mine = cli_holds(ctx);
  const tessera_dtype_t dt = p->dtype;
  const size_t es = tessera_dtype_size(dt);
  const int64_t m = p->m, n = p->n, k = p->k, lm = m > 0 ? m : 1;
  const double big = (double)(m > n ? m : n), eps = residual_eps(dt);
  r->residual = 0, r->orthogonality = NAN;
  if (k == 0) return;
  const double an = mine ? residual_fro(dt, m, n, p->a0, lm) : 1;
  double one[2], mone[2];
  residual_scalars(dt, mone, one);
  if (o->routine == CMD_GESVD && o->values_only) { /* against LAPACKE's values */
    if (!mine) return;
    /* a column of slack after the copy: OpenBLAS 0.3.21's zgemv kernel for Cooper Lake reads
     * past a matrix's end (a segmentation fault where the copy ends at its mapping's end) */
    void *c = cli_alloc(dt, m, n + 1), *ref = cli_alloc(cli_real_dtype(dt), k, 1);
    void *sup = cli_alloc(cli_real_dtype(dt), k, 1);
    int info = -1;
    const int mm = (int)m, nn = (int)n;
    if (c && ref && sup) {
      memcpy(c, p->a0, (size_t)(m * n) * es);
      cli_blas_threads(threads);
      if (dt == TESSERA_F32)
        info =
            LAPACKE_sgesvd(LAPACK_COL_MAJOR, 'N', 'N', mm, nn, c, mm, ref, NULL, 1, NULL, 1, sup);
      if (dt == TESSERA_F64)
        info =
            LAPACKE_dgesvd(LAPACK_COL_MAJOR, 'N', 'N', mm, nn, c, mm, ref, NULL, 1, NULL, 1, sup);
      if (dt == TESSERA_C64)
        info =
            LAPACKE_cgesvd(LAPACK_COL_MAJOR, 'N', 'N', mm, nn, c, mm, ref, NULL, 1, NULL, 1, sup);
      if (dt == TESSERA_C128)
        info =
            LAPACKE_zgesvd(LAPACK_COL_MAJOR, 'N', 'N', mm, nn, c, mm, ref, NULL, 1, NULL, 1, sup);
      cli_blas_threads(1);
    }
    double d = info ? NAN : 0, s1 = 0, re, im;
    if (!info) elem_get(cli_real_dtype(dt), ref, 0, &s1, &im);
    for (int64_t i = 0; i < k && !info; i++) {
      double got, want;
      elem_get(cli_real_dtype(dt), p->s, (size_t)i, &got, &im);
      elem_get(cli_real_dtype(dt), ref, (size_t)i, &want, &re);
      if (!(fabs(got - want) <= d)) d = fabs(got - want);
    }
    r->residual = d / ((s1 > 0 ? s1 : 1) * big * eps);
    free(c), free(ref), free(sup);
    return;
  }
  /* R = A − U_p H (gepolar) or A − (U diag(s)) Vᴴ (gesvd, on a scaled copy of U) */
  const int svd = o->routine == CMD_GESVD;
  char *res = mine ? cli_alloc(dt, m, n) : NULL, *us = mine && svd ? cli_alloc(dt, m, k) : NULL;
  if (mine && (!res || (svd && !us))) {
    free(res), free(us);
    return;
  }
  if (mine) memcpy(res, p->a0, (size_t)(m * n) * es);
  const int64_t inner = svd ? k : n, ldr = svd ? (p->vrows > 0 ? p->vrows : 1) : inner;
  const void *left = svd ? us : p->a, *right = svd ? p->vt : p->h;
  /* U's orthogonality: all of its columns (with --full, the completion's too) */
  r->orthogonality =
      orthogonality(ctx, dt, m, svd ? p->ucols : n, mine ? (svd ? p->u : p->a) : NULL);
  for (int64_t j = 0; mine && svd && j < k; j++) {
    double sv, im;
    elem_get(cli_real_dtype(dt), p->s, (size_t)j, &sv, &im);
    for (int64_t i = 0; i < m; i++) {
      double re, ie;
      elem_get(dt, p->u, (size_t)(i + j * m), &re, &ie);
      elem_set(dt, us, (size_t)(i + j * m), re * sv, ie * sv);
    }
  }
  const int s = tessera_gemm(ctx, TESSERA_NOTRANS, TESSERA_NOTRANS, dt, m, n, inner, mone,
                             mine ? left : NULL, lm, mine ? right : NULL, ldr, one, res, lm);
  r->residual = s      ? NAN
                : mine ? residual_fro(dt, m, n, res, lm) / ((an > 0 ? an : 1) * big * eps)
                       : 0;
  free(res), free(us);
}

/* --output: gepolar's U_p and H beside; gesvd's s, and U and Vᴴ beside. */
static int write_outputs(const cli_opts_t *o, const svd_problem_t *p) {
  char err[256], beside[4096];
  const char *path = o->output;
  const int64_t lm = p->m > 0 ? p->m : 1, lk = p->k > 0 ? p->k : 1,
                lv = p->vrows > 0 ? p->vrows : 1;
  int rc;
  if (o->routine == CMD_GEPOLAR) {
    rc = npy_write(path, p->dtype, 2, p->m, p->n, p->a, lm, err, sizeof err);
    if (!rc)
      rc = npy_write(path = cli_beside_path(o->output, ".h.npy", beside, sizeof beside), p->dtype,
                     2, p->n, p->n, p->h, p->n > 0 ? p->n : 1, err, sizeof err);
  } else {
    rc = npy_write(path, cli_real_dtype(p->dtype), 1, p->k, 1, p->s, lk, err, sizeof err);
    if (!rc && !o->values_only)
      rc = npy_write(path = cli_beside_path(o->output, ".u.npy", beside, sizeof beside), p->dtype,
                     2, p->m, p->ucols, p->u, lm, err, sizeof err);
    if (!rc && !o->values_only)
      rc = npy_write(path = cli_beside_path(o->output, ".vt.npy", beside, sizeof beside), p->dtype,
                     2, p->vrows, p->n, p->vt, lv, err, sizeof err);
  }
  if (rc) fprintf(stderr, "tessera: %s: %s\n", path, err);
  return rc ? CLI_FAILED : CLI_OK;
}

/* The generated problem's footprint against this machine's memory, on one process (under --grid
 * process 0 holds the arrays and the others tiles; a file's arrays are its own size). */
static int check_memory(tessera_context_t *ctx, const cli_opts_t *o) {
  if (o->input || tessera_context_comm(ctx)) return CLI_OK;
  const svd_footprint_t fp = {o, o->dtype, tessera_accelerator_count(ctx)};
  char subject[160];
  char rows[48] = "";
  if (o->m >= 0) snprintf(rows, sizeof rows, "m = %lld, ", (long long)o->m);
  snprintf(subject, sizeof subject, "%s with %sn = %lld (%s)", cli_cmd_name(o->routine), rows,
           (long long)o->sizes[0], tessera_dtype_name(o->dtype));
  return cli_check_footprint(svd_footprint, &fp, o->sizes[0], "--n", subject, NULL, NULL,
                             cli_memory_here(), 0);
}

int cli_svd(const cli_opts_t *o) {
  svd_problem_t p = {0};
  cli_progress_t prog;
  progress_init(&prog);
  tessera_context_t *ctx = NULL;
  int rc = cli_context(o, &ctx);
  if (rc == CLI_OK && check_memory(ctx, o) != CLI_OK) {
    rc = cli_finish(ctx, CLI_FAILED);
  } else if (rc == CLI_OK) {
    const char *name = cli_cmd_name(o->routine);
    rc = prepare(ctx, o, &p);
    cli_result_t r;
    cli_result_init(&r, o, ctx);
    r.dtype = p.dtype, r.m = p.m, r.n = p.n, r.seconds = INFINITY;
    r.tile = tessera_tile_for_polar(ctx, p.m > p.n ? p.m : p.n, p.k);
    r.job = o->routine != CMD_GESVD ? 'V' : o->values_only ? 'N' : o->full ? 'A' : 'V';
    for (int rep = 0; rep < o->reps && rc == CLI_OK; rep++) {
      progress_phase(&prog, "%s %lld x %lld rep %d/%d", name, (long long)p.m, (long long)p.n,
                     rep + 1, o->reps);
      const double t0 = progress_now();
      const int s = call(ctx, o, &p);
      if (s) rc = cli_holds(ctx) ? cli_report(ctx, &prog, name, s) : CLI_FAILED;
      r.seconds = fmin(r.seconds, progress_now() - t0);
    }
    if (rc == CLI_OK) {
      r.gflops = r.seconds > 0 ? flops(o, &p) / r.seconds * 1e-9 : 0;
      progress_phase(&prog, "checking");
      check(ctx, o, &p, &r);
      progress_phase(&prog, NULL);
    }
    if (rc == CLI_OK && cli_holds(ctx)) {
      cli_print_header(o, NULL, NULL);
      cli_print_result(o, &r);
      if (o->output) rc = write_outputs(o, &p);
    }
    rc = cli_finish(ctx, rc);
  }
  progress_end(&prog);
  problem_free(&p);
  return rc;
}

/* LAPACKE's ?gesdd (economy vectors, none with --values-only) on copies of p's A with `threads`
 * BLAS threads: the best seconds of o->reps after a warm-up, INFINITY where it fails. */
static double lapacke_gesdd(const cli_opts_t *o, const svd_problem_t *p, int threads) {
  const tessera_dtype_t dt = p->dtype;
  const int64_t m = p->m, n = p->n, k = p->k;
  const int mm = (int)m, nn = (int)n, kk = (int)k;
  const char job = o->values_only ? 'N' : 'S';
  /* a column of slack after each array gesdd reads, as check()'s (OpenBLAS's zgemv reads past
   * the end: U's and VT's too, which its ungbr reads while forming them) */
  void *c = cli_alloc(dt, m, n + 1), *s = cli_alloc(cli_real_dtype(dt), k, 1);
  void *u = cli_alloc(dt, m, k + 1), *vt = cli_alloc(dt, k, n + 1);
  double best = INFINITY;
  cli_blas_threads(threads);
  for (int rep = -1; rep < o->reps && c && s && u && vt; rep++) {
    memcpy(c, p->a0, (size_t)(m * n) * tessera_dtype_size(dt));
    const double t0 = progress_now();
    int info = -1;
    if (dt == TESSERA_F32)
      info = LAPACKE_sgesdd(LAPACK_COL_MAJOR, job, mm, nn, c, mm, s, u, mm, vt, kk);
    if (dt == TESSERA_F64)
      info = LAPACKE_dgesdd(LAPACK_COL_MAJOR, job, mm, nn, c, mm, s, u, mm, vt, kk);
    if (dt == TESSERA_C64)
      info = LAPACKE_cgesdd(LAPACK_COL_MAJOR, job, mm, nn, c, mm, s, u, mm, vt, kk);
    if (dt == TESSERA_C128)
      info = LAPACKE_zgesdd(LAPACK_COL_MAJOR, job, mm, nn, c, mm, s, u, mm, vt, kk);
    const double t = progress_now() - t0;
    if (info) {
      fprintf(stderr, "tessera: the LAPACKE ?gesdd baseline failed (info = %d)\n", info);
      best = INFINITY;
      break;
    }
    if (rep >= 0 && t < best) best = t;
  }
  cli_blas_threads(1);
  free(c), free(s), free(u), free(vt);
  return best;
}

/* One order of bench gepolar|gesvd: the baseline with tessera stopped (*ctx finalized and made
 * again), then tessera's best of o->reps after a warm-up, checked. */
static int bench_one(tessera_context_t **ctx, const cli_opts_t *o, int64_t n, int gpus, int threads,
                     cli_progress_t *prog) {
  cli_opts_t one = *o;
  one.sizes[0] = n;
  svd_problem_t p = {0};
  int rc = prepare(*ctx, &one, &p);
  cli_result_t r;
  cli_result_init(&r, o, *ctx);
  r.dtype = p.dtype, r.m = p.m, r.n = p.n, r.seconds = INFINITY, r.api = "lapack";
  r.tile = tessera_tile_for_polar(*ctx, p.m > p.n ? p.m : p.n, p.k);
  r.job = o->routine == CMD_GESVD && o->values_only ? 'N' : 'V';
  if (rc == CLI_OK && (gpus > 0 || threads > 0)) {
    rc = cli_finish(*ctx, CLI_OK);
    *ctx = NULL;
    const double b = gpus > 0 ? bench_gpu_gesvdp(o, p.m, p.n, p.a0, p.m > 0 ? p.m : 1, prog)
                              : lapacke_gesdd(o, &p, threads);
    r.has_baseline = isfinite(b);
    r.baseline = gpus > 0 ? "cusolverDnXgesvdp" : "lapacke_gesdd";
    r.baseline_seconds = b;
    if (rc == CLI_OK) rc = cli_context_again(o, ctx);
  }
  for (int rep = -1; rep < o->reps && rc == CLI_OK; rep++) {
    progress_phase(prog, "%s %lld x %lld rep %d/%d", cli_cmd_name(o->routine), (long long)p.m,
                   (long long)p.n, rep + 1, o->reps);
    const double t0 = progress_now();
    const int s = call(*ctx, o, &p);
    if (s) rc = cli_report(*ctx, prog, cli_cmd_name(o->routine), s);
    if (rep >= 0) r.seconds = fmin(r.seconds, progress_now() - t0);
  }
  if (rc == CLI_OK) {
    const double f = flops(o, &p);
    r.gflops = r.seconds > 0 ? f / r.seconds * 1e-9 : 0;
    r.baseline_gflops =
        r.has_baseline && r.baseline_seconds > 0 ? f / r.baseline_seconds * 1e-9 : 0;
    progress_phase(prog, "checking");
    check(*ctx, o, &p, &r);
    progress_phase(prog, NULL);
    cli_print_result(o, &r);
  }
  problem_free(&p);
  return rc;
}

int cli_bench_svd(const cli_opts_t *o) {
  tessera_context_t *ctx = NULL;
  if (cli_context(o, &ctx)) return CLI_FAILED;
  const int gpus = o->no_baseline ? 0 : tessera_device_count(ctx, TESSERA_DEVICE_CUDA);
  const int threads = o->no_baseline || gpus > 0 ? 0 : cli_baseline_threads(o, ctx);
  if (!o->json) {
    printf("# %s %s%s: tessera (%d workers, %d GPUs)", cli_cmd_name(o->routine),
           tessera_dtype_name(o->dtype),
           o->routine == CMD_GESVD ? (o->values_only ? ", values only" : ", economy vectors") : "",
           tessera_worker_count(ctx), tessera_accelerator_count(ctx));
    if (gpus > 0)
      printf(" against cusolverDnXgesvdp (the SVD by cuSOLVER's polar decomposition, GPU 0, A "
             "already there)");
    else if (threads > 0)
      printf(" against LAPACKE ?gesdd (threads: %d)", threads);
    printf(", best of %d after a warm-up; the ratio is the baseline's seconds over tessera's\n",
           o->reps);
  }
  cli_print_header(o, gpus > 0 ? "gesvdp" : threads > 0 ? "gesdd" : NULL, NULL);
  cli_progress_t prog;
  progress_init(&prog);
  int rc = CLI_OK;
  const svd_footprint_t fp = {o, o->dtype, tessera_accelerator_count(ctx)};
  for (int i = 0; i < o->nsizes && rc == CLI_OK; i++)
    if (cli_bench_check_footprint(o, svd_footprint, &fp, o->sizes[i])) rc = CLI_FAILED;
  for (int i = 0; i < o->nsizes && rc == CLI_OK; i++)
    rc = bench_one(&ctx, o, o->sizes[i], gpus, threads, &prog);
  progress_end(&prog);
  return ctx ? cli_finish(ctx, rc) : rc;
}
