/* Mixed-precision Cholesky solves on a resident matrix against tessera's working-precision
 * solve, in the same run: tessera_tile_posv (f64: potrf and potrs) and tessera_tile_posv_mixed
 * with each factor precision asked, on A made once on the context's devices (the tiles stay
 * there: each timed solve starts from A's tiles on the GPUs, brought there by an untimed product
 * after the import). A = Q D Qᵀ (f64, order n, tools/gen.c's gen_cond): D's eigenvalues from
 * 1 down to 1 / cond, geometrically; Q from the QR of a random matrix, so that the condition
 * number is exactly cond. One right-hand side of random entries in (-0.5, 0.5). Each solve's
 * best time of --reps (A and B imported again before each, untimed), the ratio to the f64
 * solve's, the steps and GMRES iterations, and dsposv's criterion ‖b − A x‖∞ / (‖A‖∞ ‖x‖∞ ε √n)
 * (at most 1 when met), computed on the host against A.
 *
 *   ./build/bench/bench_posv_mixed [--n 32768] [--cond 10,1e3,1e6] [--factors s,tf32,bf16,h]
 *                                  [--reps 2]
 */
#define _POSIX_C_SOURCE 200809L
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gen.h"
#include "resident.h"
#include "tessera/linalg.h"
#include "tessera/tessera.h"

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static uint64_t lcg(uint64_t *s) {
  *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
  return *s >> 11;
}

/* Uniform in (-0.5, 0.5). */
static double uniform(uint64_t *s) {
  return (double)lcg(s) / 9007199254740992.0 - 0.5;
}

/* y = A v for the symmetric n x n a (both triangles stored). */
static void symv(int64_t n, const double *a, const double *v, double *y) {
  memset(y, 0, (size_t)n * sizeof *y);
  for (int64_t j = 0; j < n; j++) {
    const double *c = a + (size_t)j * (size_t)n;
    double s = 0;
    for (int64_t i = 0; i < n; i++) s += c[i] * v[i];
    y[j] = s;
  }
}

/* ‖a‖∞ of the n x n a. */
static double norm_inf(int64_t n, const double *a) {
  double *w = calloc((size_t)n, sizeof *w), most = 0;
  for (int64_t j = 0; j < n; j++)
    for (int64_t i = 0; i < n; i++) w[i] += fabs(a[i + j * n]);
  for (int64_t i = 0; i < n; i++) most = w[i] > most ? w[i] : most;
  free(w);
  return most;
}

/* dsposv's criterion for x: ‖b − A x‖∞ / (‖A‖∞ ‖x‖∞ ε √n). */
static double criterion(int64_t n, const double *a, double anorm, const double *b,
                        const double *x) {
  double *y = malloc((size_t)n * sizeof *y), r = 0, xm = 0;
  symv(n, a, x, y);
  for (int64_t i = 0; i < n; i++) {
    r = fmax(r, fabs(b[i] - y[i]));
    xm = fmax(xm, fabs(x[i]));
  }
  free(y);
  return r / (anorm * xm * (DBL_EPSILON / 2) * sqrt((double)n));
}

static const char *const factor_name[6] = {"auto", "f64", "s", "tf32", "bf16", "h"};

/* One solve (factor 1: tessera_tile_posv; else tile_posv_mixed with it), best of reps. */
static int run(tessera_context_t *ctx, tessera_matrix_t *A, tessera_matrix_t *B,
               tessera_matrix_t *Y, const double *a, const double *b, int64_t n, int factor,
               int reps, double *best, double *x, tessera_mixed_result_t *res) {
  tessera_mixed_options_t o;
  tessera_mixed_options_init(&o);
  o.factor = (tessera_factor_t)factor;
  *best = 1e30;
  for (int r = 0; r < reps; r++) {
    int rc = tessera_matrix_import(A, a, n);
    if (!rc) rc = tessera_matrix_import(B, b, n);
    if (!rc) rc = resident_on_gpus(ctx, A, B, Y);
    const double t0 = now();
    if (!rc)
      rc = factor == TESSERA_FACTOR_WORKING ? tessera_tile_posv(TESSERA_LOWER, A, B)
                                            : tessera_tile_posv_mixed(TESSERA_LOWER, A, B, &o, res);
    const double t = now() - t0;
    if (rc) return rc;
    if (t < *best) *best = t;
  }
  if (factor == TESSERA_FACTOR_WORKING) *res = (tessera_mixed_result_t){.factor = factor};
  return tessera_matrix_export(B, x, n);
}

int main(int argc, char **argv) {
  int64_t n = 32768;
  int reps = 2;
  const char *conds = "10,1e3,1e6", *factors = "s,tf32,bf16,h";
  for (int i = 1; i + 1 < argc; i += 2)
    if (!strcmp(argv[i], "--n"))
      n = atoll(argv[i + 1]);
    else if (!strcmp(argv[i], "--reps"))
      reps = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--cond"))
      conds = argv[i + 1];
    else if (!strcmp(argv[i], "--factors"))
      factors = argv[i + 1];
  if (n < 2 || reps < 1)
    return fprintf(stderr, "usage: %s [--n N] [--cond C,...] [--factors F,...] [--reps R]\n",
                   argv[0]),
           2;
  int fs[8], nf = 0;
  char list[64];
  snprintf(list, sizeof list, "%s", factors);
  for (char *t = strtok(list, ","); t && nf < 8; t = strtok(NULL, ",")) {
    int k = 2;
    while (k < 6 && strcmp(t, factor_name[k])) k++;
    if (k == 6) return fprintf(stderr, "--factors: '%s' is not s, tf32, bf16 or h\n", t), 2;
    fs[nf++] = k;
  }
  tessera_context_t *ctx = NULL;
  if (tessera_init(&ctx, NULL)) return fprintf(stderr, "tessera_init failed\n"), 1;
  const int nb = tessera_tile_for(ctx, n);
  double *a = malloc((size_t)n * (size_t)n * sizeof *a), *b = malloc((size_t)n * sizeof *b);
  double *x = malloc((size_t)n * sizeof *x), *w = malloc((size_t)n * (size_t)n * sizeof *w);
  tessera_matrix_t *A = NULL, *B = NULL, *Y = NULL;
  if (!a || !b || !x || !w) return fprintf(stderr, "out of memory\n"), 1;
  int rc = tessera_matrix_create(ctx, TESSERA_F64, n, n, nb, nb, &A);
  if (!rc) rc = tessera_matrix_create(ctx, TESSERA_F64, n, 1, nb, nb, &B);
  if (!rc) rc = tessera_matrix_create(ctx, TESSERA_F64, n, 1, nb, nb, &Y);
  uint64_t seed = 4242;
  for (int64_t i = 0; i < n; i++) b[i] = uniform(&seed);
  printf("# n %lld, tile %d, %d workers, %d accelerators, best of %d, one right-hand side\n",
         (long long)n, nb, tessera_worker_count(ctx), tessera_accelerator_count(ctx), reps);
  printf("%8s %-6s %9s %8s %6s %6s %10s\n", "cond", "factor", "seconds", "vs f64", "steps", "gmres",
         "criterion");
  char clist[64];
  snprintf(clist, sizeof clist, "%s", conds);
  char *save = NULL;
  for (char *t = strtok_r(clist, ",", &save); t && !rc; t = strtok_r(NULL, ",", &save)) {
    const double cond = atof(t);
    rc = gen_cond(ctx, TESSERA_F64, n, cond, 1, a, n, w, 99);
    if (rc) break;
    const double anorm = norm_inf(n, a);
    double base = 0, s = 0;
    tessera_mixed_result_t res;
    rc = run(ctx, A, B, Y, a, b, n, TESSERA_FACTOR_WORKING, reps, &base, x, &res);
    if (!rc)
      printf("%8.0e %-6s %9.4f %8s %6s %6s %10.3f\n", cond, "f64", base, "1.00", "-", "-",
             criterion(n, a, anorm, b, x));
    for (int k = 0; k < nf && !rc; k++) {
      rc = run(ctx, A, B, Y, a, b, n, fs[k], reps, &s, x, &res);
      if (!rc)
        printf("%8.0e %-6s %9.4f %8.2f %6d %6d %10.3f%s\n", cond, factor_name[fs[k]], s, base / s,
               res.iter, res.gmres_steps, criterion(n, a, anorm, b, x),
               res.factor == TESSERA_FACTOR_WORKING ? "  (fell back to f64)" : "");
    }
    fflush(stdout);
  }
  if (rc) fprintf(stderr, "failed: %d (%s)\n", rc, tessera_last_error(ctx));
  if (Y) (void)tessera_matrix_destroy(Y);
  if (B) (void)tessera_matrix_destroy(B);
  if (A) (void)tessera_matrix_destroy(A);
  (void)tessera_finalize(ctx);
  free(a), free(b), free(x), free(w);
  return rc ? 1 : 0;
}
