/* tessera CLI — potrf, potrs, posv, getrf, gesv, demo and gen on a generated or .npy matrix. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "footprint.h"
#include "gen.h"
#include "npy.h"
#include "residual.h"

/** The operands of one run. */
typedef struct {
  tessera_dtype_t dtype;
  int64_t n, nrhs, ld; /**< ld = max(1, n) for every array */
  void *a0, *a;        /**< the full A (Hermitian but for LU), and the array overwritten */
  void *b0, *b;        /**< the right-hand sides, and the array that receives X */
  int *ipiv;           /**< LU: the pivots */
} problem_t;

static void problem_free(problem_t *p) {
  free(p->a0);
  free(p->a);
  free(p->b0);
  free(p->b);
  free(p->ipiv);
}

int cli_read_operand(const char *path, int64_t rows, tessera_dtype_t dtype, int any_dtype,
                     npy_array_t *arr) {
  char err[256];
  if (npy_read(path, arr, err, sizeof err)) {
    fprintf(stderr, "tessera: %s: %s\n", path, err);
    return CLI_FAILED;
  }
  char bad[96] = "";
  if (!any_dtype && arr->dtype != dtype)
    snprintf(bad, sizeof bad, "expected dtype %s", tessera_dtype_name(dtype));
  else if (rows == CLI_SQUARE && (arr->ndim != 2 || arr->shape[0] != arr->shape[1]))
    snprintf(bad, sizeof bad, "expected a square matrix");
  else if (rows >= 0 && arr->shape[0] != rows)
    snprintf(bad, sizeof bad, "expected %lld rows, as A has", (long long)rows);
  else if (arr->shape[0] > INT32_MAX || arr->shape[1] > INT32_MAX)
    snprintf(bad, sizeof bad, "too large");
  if (!bad[0]) return CLI_OK;
  fprintf(stderr, "tessera: %s: %s (holds %s, shape %lld x %lld)\n", path, bad,
          tessera_dtype_name(arr->dtype), (long long)arr->shape[0], (long long)arr->shape[1]);
  free(arr->data);
  arr->data = NULL;
  return CLI_FAILED;
}

/** Loads or generates A (and B unless the routine is potrf) and allocates the work arrays. */
static int prepare(const cli_opts_t *o, problem_t *p, cli_progress_t *prog) {
  npy_array_t arr;
  p->dtype = o->dtype;
  if (o->input) {
    if (cli_read_operand(o->input, CLI_SQUARE, o->dtype, !o->dtype_set, &arr)) return CLI_FAILED;
    p->dtype = arr.dtype;
    p->n = arr.shape[0];
    p->a0 = arr.data;
  } else {
    p->n = o->sizes[0];
  }
  p->ld = p->n > 0 ? p->n : 1;
  progress_phase(prog, "generating n=%lld", (long long)p->n);
  if (!p->a0 && !(p->a0 = cli_alloc(p->dtype, p->ld, p->n))) return CLI_FAILED;
  const int lu = cli_is_lu(o->routine);
  if (lu && !o->input)
    gen_dense(p->dtype, p->n, p->n, p->a0, p->ld, GEN_SEED_A);
  else if (o->input && !lu)
    gen_mirror(p->dtype, o->uplo, p->n, p->a0, p->ld);
  else if (!o->input)
    gen_spd(p->dtype, p->n, p->a0, p->ld, GEN_SEED_A);
  if (!(p->a = cli_alloc(p->dtype, p->ld, p->n))) return CLI_FAILED;
  if (lu && !(p->ipiv = calloc((size_t)p->ld, sizeof *p->ipiv))) {
    fprintf(stderr, "tessera: out of memory for the pivots\n");
    return CLI_FAILED;
  }
  if (cli_is_factor(o->routine)) return CLI_OK;
  p->nrhs = o->nrhs;
  if (o->rhs) {
    if (cli_read_operand(o->rhs, p->n, p->dtype, 0, &arr)) return CLI_FAILED;
    p->nrhs = arr.shape[1];
    p->b0 = arr.data;
  } else if ((p->b0 = cli_alloc(p->dtype, p->ld, p->nrhs))) {
    gen_dense(p->dtype, p->n, p->nrhs, p->b0, p->ld, GEN_SEED_B);
  }
  p->b = cli_alloc(p->dtype, p->ld, p->nrhs);
  return p->b0 && p->b ? CLI_OK : CLI_FAILED;
}

/** Copies the pristine operands into the arrays the routine overwrites. */
static void reset(const problem_t *p, cli_cmd_t routine) {
  size_t es = tessera_dtype_size(p->dtype);
  if (routine != CMD_POTRS) memcpy(p->a, p->a0, (size_t)(p->ld * p->n) * es);
  if (!cli_is_factor(routine)) memcpy(p->b, p->b0, (size_t)(p->ld * p->nrhs) * es);
}

/* posv / gesv --mixed: B the original right-hand sides (never written), X into p->b. */
static int run_mixed(tessera_context_t *ctx, const cli_opts_t *o, const problem_t *p,
                     cli_result_t *r) {
  tessera_mixed_options_t opts;
  tessera_mixed_options_init(&opts);
  opts.factor = (tessera_factor_t)o->mixed;
  tessera_mixed_result_t res;
  const int rc = o->routine == CMD_GESV
                     ? tessera_gesv_mixed(ctx, p->dtype, p->n, p->nrhs, p->a, p->ld, p->ipiv, p->b0,
                                          p->ld, p->b, p->ld, &opts, &res)
                     : tessera_posv_mixed(ctx, o->uplo, p->dtype, p->n, p->nrhs, p->a, p->ld, p->b0,
                                          p->ld, p->b, p->ld, &opts, &res);
  r->factor = cli_factor_name(p->dtype, res.factor);
  r->iterations = res.iter;
  return rc;
}

static int run_routine(tessera_context_t *ctx, cli_cmd_t routine, tessera_uplo_t uplo,
                       const problem_t *p) {
  switch (routine) {
  case CMD_POTRF:
    return tessera_potrf(ctx, uplo, p->dtype, p->n, p->a, p->ld);
  case CMD_POTRS:
    return tessera_potrs(ctx, uplo, p->dtype, p->n, p->nrhs, p->a, p->ld, p->b, p->ld);
  case CMD_GETRF:
    return tessera_getrf(ctx, p->dtype, p->n, p->n, p->a, p->ld, p->ipiv);
  case CMD_GESV:
    return tessera_gesv(ctx, p->dtype, p->n, p->nrhs, p->a, p->ld, p->ipiv, p->b, p->ld);
  default:
    return tessera_posv(ctx, uplo, p->dtype, p->n, p->nrhs, p->a, p->ld, p->b, p->ld);
  }
}

/** Runs the routine o->reps times (potrs after an untimed potrf) and fills `r`. */
static int solve(tessera_context_t *ctx, const cli_opts_t *o, const problem_t *p,
                 cli_progress_t *prog, cli_result_t *r) {
  const char *name = cli_cmd_name(o->routine);
  int status = 0;
  if (o->routine == CMD_POTRS) {
    progress_phase(prog, "factoring (potrf, untimed)");
    reset(p, CMD_POTRF);
    if ((status = tessera_potrf(ctx, o->uplo, p->dtype, p->n, p->a, p->ld)))
      return cli_report(ctx, prog, "potrf (before potrs)", status);
  }
  cli_result_init(r, o, ctx);
  r->dtype = p->dtype;
  r->n = p->n;
  r->tile =
      cli_is_lu(o->routine) ? tessera_tile_for_lu(ctx, p->n, p->n) : tessera_tile_for(ctx, p->n);
  r->nrhs = p->nrhs;
  r->seconds = INFINITY;
  for (int rep = 0; rep < o->reps; rep++) {
    progress_phase(prog, "%s n=%lld rep %d/%d", name, (long long)p->n, rep + 1, o->reps);
    reset(p, o->routine);
    double t0 = progress_now();
    if ((status =
             o->mixed >= 0 ? run_mixed(ctx, o, p, r) : run_routine(ctx, o->routine, o->uplo, p)))
      return cli_report(ctx, prog, name, status);
    r->seconds = fmin(r->seconds, progress_now() - t0);
  }
  double flops = cli_flops(o->routine, p->dtype, p->n, p->nrhs);
  r->gflops = r->seconds > 0 ? flops / r->seconds * 1e-9 : 0;
  progress_phase(prog, "residual");
  r->residual =
      o->routine == CMD_POTRF ? residual_potrf(p->dtype, o->uplo, p->n, p->a0, p->ld, p->a, p->ld)
      : o->routine == CMD_GETRF
          ? residual_getrf(p->dtype, p->n, p->a0, p->ld, p->a, p->ld, p->ipiv)
          : residual_solve(p->dtype, p->n, p->nrhs, p->a0, p->ld, p->b, p->ld, p->b0, p->ld);
  progress_phase(prog, NULL);
  if (r->residual < 0) fprintf(stderr, "tessera: out of memory computing the residual\n");
  return r->residual < 0 ? CLI_FAILED : CLI_OK;
}

/** Writes `a` (rows x cols) to `path`, reporting failures. */
static int write_npy(const char *path, tessera_dtype_t dtype, int64_t rows, int64_t cols,
                     const void *a, int64_t ld) {
  char err[256];
  if (npy_write(path, dtype, 2, rows, cols, a, ld, err, sizeof err) == 0) return CLI_OK;
  fprintf(stderr, "tessera: %s: %s\n", path, err);
  return CLI_FAILED;
}

/** Writes getrf's pivots next to its factors, 0-based (row i was interchanged with row piv[i],
 *  as scipy.linalg.lu_factor gives them), so that the two files solve A X = B. */
static int write_pivots(const char *output, const problem_t *p) {
  char path[4096], err[256];
  cli_beside_path(output, ".piv.npy", path, sizeof path);
  int32_t *piv = malloc((size_t)(p->n > 0 ? p->n : 1) * sizeof *piv);
  if (!piv) {
    fprintf(stderr, "tessera: out of memory writing the pivots to %s\n", path);
    return CLI_FAILED;
  }
  for (int64_t i = 0; i < p->n; i++) piv[i] = p->ipiv[i] - 1;
  int rc = npy_write_int32(path, p->n, piv, err, sizeof err);
  free(piv);
  if (rc == 0) return CLI_OK;
  fprintf(stderr, "tessera: %s: %s\n", path, err);
  return CLI_FAILED;
}

/** Writes the factor (its other triangle zeroed; LU: L and U in one matrix, and the pivots
 *  beside it) or the solution to --output. */
static int write_result(const cli_opts_t *o, const problem_t *p) {
  if (!o->output) return CLI_OK;
  if (o->routine == CMD_GETRF) {
    int rc = write_npy(o->output, p->dtype, p->n, p->n, p->a, p->ld);
    return rc == CLI_OK ? write_pivots(o->output, p) : rc;
  }
  if (o->routine != CMD_POTRF) return write_npy(o->output, p->dtype, p->n, p->nrhs, p->b, p->ld);
  for (int64_t j = 0; j < p->n; j++)
    for (int64_t i = 0; i < p->n; i++)
      if (o->uplo == TESSERA_LOWER ? i < j : i > j)
        elem_set(p->dtype, p->a, (size_t)(i + j * p->ld), 0.0, 0.0);
  return write_npy(o->output, p->dtype, p->n, p->n, p->a, p->ld);
}

int cli_check_memory(const cli_opts_t *o, tessera_context_t *ctx) {
  cli_solve_footprint_t s = {o->routine, o->dtype, cli_eig_job(o), ctx};
  int64_t n = o->sizes[0], k = cli_is_factor(o->routine) ? 0 : o->nrhs;
  npy_array_t h;
  char err[256], subject[200], rhs[64] = "";
  if (o->input && npy_read_shape(o->input, &h, err, sizeof err)) return CLI_OK;
  if (o->input) {
    n = h.shape[0];
    if (!o->dtype_set) s.dtype = h.dtype;
  }
  if (o->rhs && k > 0 && npy_read_shape(o->rhs, &h, err, sizeof err) == 0) k = h.shape[1];
  if (k > 1) snprintf(rhs, sizeof rhs, "%lld right-hand sides, ", (long long)k);
  if (o->input)
    snprintf(subject, sizeof subject, "%s of %s (n = %lld, %s%s)", cli_cmd_name(o->cmd), o->input,
             (long long)n, rhs, tessera_dtype_name(s.dtype));
  else
    snprintf(subject, sizeof subject, "%s with n = %lld (%s%s)", cli_cmd_name(o->cmd), (long long)n,
             rhs, tessera_dtype_name(s.dtype));
  return cli_check_footprint_rhs(cli_footprint_solve, &s, n, k, o->input ? NULL : "--n",
                                 o->rhs ? NULL : "--nrhs", subject, NULL, NULL, cli_memory_here(),
                                 0);
}

/** potrf / potrs / posv, and with `demo` the device listing and the residual check. */
static int run_command(const cli_opts_t *o, int demo) {
  problem_t p = {0};
  cli_progress_t prog;
  progress_init(&prog);
  tessera_context_t *ctx = NULL;
  int rc = cli_check_memory(o, NULL);
  if (rc == CLI_OK) rc = prepare(o, &p, &prog);
  progress_phase(&prog, NULL);
  if (rc == CLI_OK) rc = cli_context(o, &ctx);
  if (rc == CLI_OK) {
    cli_result_t r;
    if (demo && !o->json) {
      printf("tessera demo: %s posv, n = %lld, on:\n", tessera_dtype_name(p.dtype), (long long)p.n);
      cli_print_devices(ctx);
    }
    rc = solve(ctx, o, &p, &prog, &r);
    if (rc == CLI_OK) {
      cli_print_header(o, NULL, NULL);
      cli_print_result(o, &r);
      rc = write_result(o, &p);
    }
    if (rc == CLI_OK && demo && !(r.residual <= 10.0)) {
      fprintf(stderr, "tessera: demo: residual %.3g exceeds 10\n", r.residual);
      rc = CLI_FAILED;
    } else if (rc == CLI_OK && demo && !o->json) {
      printf("demo passed (residual %.3g <= 10)\n", r.residual);
    }
    rc = cli_finish(ctx, rc);
  }
  progress_end(&prog);
  problem_free(&p);
  return rc;
}

/* cli_solve's run on this process alone. */
static int solve_local(const cli_opts_t *o) {
  return run_command(o, 0);
}

int cli_solve(const cli_opts_t *o) {
  return cli_local_or_grid(o, solve_local);
}

int cli_demo(const cli_opts_t *o) {
  return run_command(o, 1);
}

/** gen's footprint: the one array it writes (`arg`: the options). */
static void gen_footprint(const void *arg, int64_t n, cli_footprint_t *f) {
  const cli_opts_t *o = arg;
  cli_footprint_add(f, o->nrhs > 0 ? "the right-hand sides:" : "the matrix:",
                    cli_array_bytes(o->dtype, n, o->nrhs > 0 ? o->nrhs : n));
}

int cli_gen(const cli_opts_t *o) {
  int64_t n = o->sizes[0], ld = n > 0 ? n : 1, cols = o->nrhs > 0 ? o->nrhs : n;
  char subject[96];
  snprintf(subject, sizeof subject, "gen with n = %lld (%s)", (long long)n,
           tessera_dtype_name(o->dtype));
  if (cli_check_footprint(gen_footprint, o, n, "--n", subject, NULL, NULL, cli_memory_here(), 0))
    return CLI_FAILED;
  void *a = cli_alloc(o->dtype, ld, cols);
  if (!a) return CLI_FAILED;
  if (o->nrhs > 0)
    gen_dense(o->dtype, n, cols, a, ld, GEN_SEED_B);
  else
    gen_spd(o->dtype, n, a, ld, GEN_SEED_A);
  int rc = write_npy(o->output, o->dtype, n, cols, a, ld);
  free(a);
  return rc;
}
