/* tessera CLI — `tessera syevd`: eigenvalues, and eigenvectors unless --values-only, of a
 * generated or .npy Hermitian (real symmetric) matrix by tessera_syevd / tessera_heevd, timed and
 * checked; and the pieces `tessera bench syevd` (bench.c) shares. The generated matrix is
 * gen_dense's lower triangle made Hermitian (eigenvalues spread over [-sqrt(n/3), sqrt(n/3)],
 * never a diagonal matrix); --input's is its --uplo triangle, made Hermitian. Checks: with
 * eigenvectors, residual ‖A V − V diag(w)‖_F / (‖A‖_F n eps) and orthogonality
 * ‖I − Vᴴ V‖_F / (n eps) by two gemms (tessera_gemm, as qr.c's checks); eigenvalues only,
 * max_i |w_i − w_i(LAPACK)| / (‖A‖_F n eps) against LAPACKE's ?syevd / ?heevd (job N) on a
 * copy of A in the same dtype. GFLOP/s counts LAPACK's usual estimates, 4/3 n³ without
 * eigenvectors and 9 n³ with (four times that for complex dtypes). */
#include <cblas.h>
#include <lapacke.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "footprint.h"
#include "gen.h"
#include "npy.h"
#include "residual.h"

double cli_eig_flops(tessera_dtype_t dtype, int64_t n, tessera_job_t job) {
  const double dn = (double)n, f = (job == TESSERA_VECTORS ? 9.0 : 4.0 / 3.0) * dn * dn * dn;
  return tessera_dtype_is_complex(dtype) ? 4 * f : f;
}

void cli_eig_generate(tessera_dtype_t dtype, int64_t n, void *a, int64_t lda) {
  gen_dense(dtype, n, n, a, lda, GEN_SEED_A);
  gen_mirror(dtype, TESSERA_LOWER, n, a, lda);
}

int cli_eig_tessera(tessera_context_t *ctx, tessera_job_t job, tessera_uplo_t uplo,
                    tessera_dtype_t dtype, int64_t n, void *a, int64_t lda, int64_t il, int64_t iu,
                    void *w) {
  const bool cplx = tessera_dtype_is_complex(dtype);
  if (il > 0)
    return cplx ? tessera_heevdx(ctx, job, uplo, dtype, n, a, lda, il, iu, w)
                : tessera_syevdx(ctx, job, uplo, dtype, n, a, lda, il, iu, w);
  return cplx ? tessera_heevd(ctx, job, uplo, dtype, n, a, lda, w)
              : tessera_syevd(ctx, job, uplo, dtype, n, a, lda, w);
}

int cli_eig_lapacke(tessera_job_t job, tessera_uplo_t uplo, tessera_dtype_t dtype, int64_t n,
                    void *a, int64_t lda, void *w) {
  if (n == 0) return 0;
  const char j = (char)job, u = (char)uplo;
  const lapack_int nn = (lapack_int)n, ld = (lapack_int)lda;
  switch (dtype) {
  case TESSERA_F32:
    return LAPACKE_ssyevd(LAPACK_COL_MAJOR, j, u, nn, a, ld, w);
  case TESSERA_F64:
    return LAPACKE_dsyevd(LAPACK_COL_MAJOR, j, u, nn, a, ld, w);
  case TESSERA_C64:
    return LAPACKE_cheevd(LAPACK_COL_MAJOR, j, u, nn, a, ld, w);
  case TESSERA_C128:
    return LAPACKE_zheevd(LAPACK_COL_MAJOR, j, u, nn, a, ld, w);
  }
  return -1;
}

/* x (n elements, unit stride) *= s, a real scalar whatever the dtype. */
static void scale(tessera_dtype_t dtype, int64_t n, void *x, double s) {
  switch (dtype) {
  case TESSERA_F32:
    cblas_sscal((int)n, (float)s, x, 1);
    break;
  case TESSERA_F64:
    cblas_dscal((int)n, s, x, 1);
    break;
  case TESSERA_C64:
    cblas_csscal((int)n, (float)s, x, 1);
    break;
  case TESSERA_C128:
    cblas_zdscal((int)n, s, x, 1);
    break;
  }
}

/* Element i of the eigenvalues w (the dtype's real type). */
static double eigenvalue(tessera_dtype_t dtype, const void *w, int64_t i) {
  double re, im;
  elem_get(cli_real_dtype(dtype), w, (size_t)i, &re, &im);
  return re;
}

/* The check of k eigenvectors: R = A V − V diag(w) (n x k), then R = I − Vᴴ V (k x k) in the
 * same array. */
static int check_vectors(tessera_context_t *ctx, tessera_dtype_t dt, int64_t n, int64_t k,
                         const void *a0, int64_t lda, const void *v, const void *w,
                         cli_progress_t *prog, double an, double *res, double *orth) {
  const size_t es = tessera_dtype_size(dt);
  char *r = cli_alloc(dt, n, k);
  if (!r) return CLI_FAILED;
  for (int64_t j = 0; j < k; j++) {
    memcpy(r + (size_t)(j * n) * es, (const char *)v + (size_t)(j * lda) * es, (size_t)n * es);
    scale(dt, n, r + (size_t)(j * n) * es, eigenvalue(dt, w, j));
  }
  double mone[2], one[2];
  residual_scalars(dt, mone, one);
  const double scale_n = (double)n * residual_eps(dt);
  int s = tessera_gemm(ctx, TESSERA_NOTRANS, TESSERA_NOTRANS, dt, n, k, n, one, a0, lda, v, lda,
                       mone, r, n);
  if (!s) {
    *res = residual_relative(residual_fro(dt, n, k, r, n), an * scale_n);
    memset(r, 0, (size_t)(k * k) * es);
    for (int64_t i = 0; i < k; i++) elem_set(dt, r, (size_t)(i + i * k), 1, 0);
    s = tessera_gemm(ctx, TESSERA_CONJTRANS, TESSERA_NOTRANS, dt, k, k, n, mone, v, lda, v, lda,
                     one, r, k);
  }
  if (!s) *orth = residual_fro(dt, k, k, r, k) / scale_n;
  free(r);
  return s ? cli_report(ctx, prog, "the check (gemm)", s) : CLI_OK;
}

int cli_eig_check(tessera_context_t *ctx, tessera_job_t job, tessera_dtype_t dtype, int64_t n,
                  int64_t lo, int64_t k, const void *a0, int64_t lda, const void *v, const void *w,
                  const void *wref, int threads, cli_progress_t *prog, double *res, double *orth) {
  *res = 0;
  *orth = job == TESSERA_VECTORS ? 0 : NAN;
  if (n == 0 || k == 0) return CLI_OK;
  const double an = residual_fro(dtype, n, n, a0, lda);
  if (job == TESSERA_VECTORS)
    return check_vectors(ctx, dtype, n, k, a0, lda, v, w, prog, an, res, orth);
  void *copy = NULL, *own = NULL;
  if (!wref) { /* LAPACK's eigenvalues of a copy of A */
    const size_t es = tessera_dtype_size(dtype);
    if (!(copy = cli_alloc(dtype, n, n)) || !(own = cli_alloc(cli_real_dtype(dtype), n, 1))) {
      free(copy);
      return CLI_FAILED;
    }
    for (int64_t j = 0; j < n; j++)
      memcpy((char *)copy + (size_t)(j * n) * es, (const char *)a0 + (size_t)(j * lda) * es,
             (size_t)n * es);
    progress_phase(prog, "checking: LAPACKE's eigenvalues");
    cli_blas_threads(threads);
    const int info = cli_eig_lapacke(TESSERA_VALUES, TESSERA_LOWER, dtype, n, copy, n, own);
    cli_blas_threads(1);
    progress_phase(prog, NULL);
    free(copy);
    if (info) {
      fprintf(stderr, "tessera: the check's reference, LAPACKE %s (job N), failed (info = %d)\n",
              tessera_dtype_is_complex(dtype) ? "heevd" : "syevd", info);
      free(own);
      return CLI_FAILED;
    }
    wref = own;
  }
  double d = 0;
  for (int64_t i = 0; i < k; i++) {
    const double e = fabs(eigenvalue(dtype, w, i) - eigenvalue(dtype, wref, lo + i));
    if (!(e <= d)) d = e; /* NaN kept */
  }
  *res = residual_relative(d, an * (double)n * residual_eps(dtype));
  free(own);
  return CLI_OK;
}

/* The problem: the full Hermitian A (kept for the check), the copy tessera overwrites, the
 * eigenvalues. */
typedef struct {
  tessera_dtype_t dtype;
  int64_t n, ld;
  void *a0, *a, *w;
} eig_problem_t;

/* --input's matrix (its --uplo triangle made Hermitian) or the generated one, and the arrays. */
static int prepare(const cli_opts_t *o, eig_problem_t *p, cli_progress_t *prog) {
  p->dtype = o->dtype;
  p->n = o->sizes[0];
  if (o->input) {
    npy_array_t arr;
    if (cli_read_operand(o->input, CLI_SQUARE, o->dtype, !o->dtype_set, &arr)) return CLI_FAILED;
    p->dtype = arr.dtype, p->n = arr.shape[0], p->a0 = arr.data;
  }
  p->ld = p->n > 0 ? p->n : 1;
  progress_phase(prog, "generating n=%lld", (long long)p->n);
  if (!p->a0 && !(p->a0 = cli_alloc(p->dtype, p->ld, p->n))) return CLI_FAILED;
  if (o->input)
    gen_mirror(p->dtype, o->uplo, p->n, p->a0, p->ld);
  else
    cli_eig_generate(p->dtype, p->n, p->a0, p->ld);
  progress_phase(prog, NULL);
  p->a = cli_alloc(p->dtype, p->ld, p->n);
  p->w = cli_alloc(cli_real_dtype(p->dtype), p->ld, 1);
  return p->a && p->w ? CLI_OK : CLI_FAILED;
}

/* The eigenpairs a call computes: --range's count, else all n. */
static int64_t pairs(const cli_opts_t *o, int64_t n) {
  return o->il > 0 ? o->iu - o->il + 1 : n;
}

/* Runs syevd o->reps times on fresh copies and checks the last result into `r`. A failure is
 * printed by process 0 alone under --grid (every process gets the same status). */
static int run(tessera_context_t *ctx, const cli_opts_t *o, const eig_problem_t *p,
               cli_progress_t *prog, cli_result_t *r) {
  const tessera_job_t job = cli_eig_job(o);
  const char *name = cli_cmd_name(o->routine);
  cli_result_init(r, o, ctx);
  r->dtype = p->dtype;
  r->n = p->n;
  r->tile = tessera_tile_for_eig(ctx, job, p->dtype, p->n);
  r->seconds = INFINITY;
  for (int rep = 0; rep < o->reps; rep++) {
    progress_phase(prog, "%s n=%lld rep %d/%d", name, (long long)p->n, rep + 1, o->reps);
    memcpy(p->a, p->a0, (size_t)(p->ld * p->n) * tessera_dtype_size(p->dtype));
    const double t0 = progress_now();
    const int s =
        cli_eig_tessera(ctx, job, o->uplo, p->dtype, p->n, p->a, p->ld, o->il, o->iu, p->w);
    if (s) return cli_holds(ctx) ? cli_report(ctx, prog, name, s) : CLI_FAILED;
    r->seconds = fmin(r->seconds, progress_now() - t0);
  }
  const double flops = cli_eig_flops(p->dtype, p->n, job);
  r->gflops = r->seconds > 0 ? flops / r->seconds * 1e-9 : 0;
  progress_phase(prog, "checking");
  const int64_t lo = o->il > 0 ? o->il - 1 : 0, k = pairs(o, p->n);
  const int rc = cli_eig_check(ctx, job, p->dtype, p->n, lo, k, p->a0, p->ld, p->a, p->w, NULL,
                               cli_baseline_threads(o, ctx), prog, &r->residual, &r->orthogonality);
  progress_phase(prog, NULL);
  return rc;
}

/* Writes the eigenvalues to --output and, with eigenvectors, those beside it. */
static int write_outputs(const cli_opts_t *o, const eig_problem_t *p) {
  char err[256], beside[4096];
  const char *path = o->output;
  const int64_t k = pairs(o, p->n);
  int rc = npy_write(path, cli_real_dtype(p->dtype), 1, k, 1, p->w, p->ld, err, sizeof err);
  if (!rc && !o->values_only)
    rc = npy_write(path = cli_beside_path(o->output, ".vectors.npy", beside, sizeof beside),
                   p->dtype, 2, p->n, k, p->a, p->ld, err, sizeof err);
  if (rc) fprintf(stderr, "tessera: %s: %s\n", path, err);
  return rc ? CLI_FAILED : CLI_OK;
}

int cli_eig(const cli_opts_t *o) {
  eig_problem_t p = {.dtype = o->dtype};
  cli_progress_t prog;
  progress_init(&prog);
  tessera_context_t *ctx = NULL;
  int rc = cli_context(o, &ctx); /* its devices decide what the solve holds on the host */
  if (rc == CLI_OK) {
    rc = cli_check_memory(o, ctx);
    if (rc == CLI_OK) rc = prepare(o, &p, &prog);
    cli_result_t r;
    if (rc == CLI_OK) rc = run(ctx, o, &p, &prog, &r);
    if (rc == CLI_OK && cli_holds(ctx)) {
      cli_print_header(o, NULL, NULL);
      cli_print_result(o, &r);
      if (o->output) rc = write_outputs(o, &p);
    }
    rc = cli_finish(ctx, rc);
  }
  progress_end(&prog);
  free(p.a0), free(p.a), free(p.w);
  return rc;
}
