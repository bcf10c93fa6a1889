/* The pieces of a mixed-precision Cholesky solve on resident descriptors: tessera's f64 tile
 * potrf, then the single-precision factor of the same matrix (converted tile by tile) in each
 * product arithmetic (f32's own, TF32, BF16, FP16 inputs on tensor cores) on A's tiling by the
 * tile loop and as one tile (one task: on a GPU, recursive halving), and the refinement's
 * one-column pieces: the Hermitian product with A and the single-precision solves. A: random
 * symmetric entries in (-0.5, 0.5) plus n/4 on the diagonal. Best of --reps, each after the
 * previous has finished.
 *
 *   ./build/bench/bench_mixed_factor [--n 32768] [--reps 2]
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "linalg/desc/desc.h"
#include "linalg/front/front.h"
#include "linalg/loops/loops.h"
#include "tessera/linalg.h"
#include "tessera/tessera.h"

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static const char *const math_name[4] = {"f32", "tf32", "bf16", "f16"};

/* Converts A into L (arithmetic `math`) and factors it, reps times; the best seconds of each. */
static int factor(tessera_matrix_t *A, tessera_matrix_t *L, int math, int reps, double *conv,
                  double *fact) {
  L->math = math;
  *conv = *fact = 1e30;
  for (int r = 0; r < reps; r++) {
    const double t0 = now();
    int rc = tsr_pxconvert('L', A, math == TSR_MATH_F16 ? 1.0 / 8192 : 1.0, L);
    if (!rc) rc = tessera_wait_all(A->ctx);
    const double t1 = now();
    if (!rc) rc = tsr_tile_finish(L, tsr_pxpotrf('L', L, NULL));
    const double t2 = now();
    if (rc) return rc;
    if (t1 - t0 < *conv) *conv = t1 - t0;
    if (t2 - t1 < *fact) *fact = t2 - t1;
  }
  return 0;
}

/* One-column potrs with L, reps times: the best seconds. */
static int solve(tessera_matrix_t *L, float *w, int reps, double *best) {
  *best = 1e30;
  for (int r = 0; r < reps; r++) {
    tessera_matrix_t *W = NULL;
    const double t0 = now();
    int rc = tessera_matrix_view(L->ctx, TESSERA_F32, L->m, 1, L->mb, L->mb, w, L->m, &W);
    if (!rc) rc = tessera_tile_potrs(TESSERA_LOWER, L, W);
    if (W) rc |= tessera_matrix_destroy(W);
    if (rc) return rc;
    if (now() - t0 < *best) *best = now() - t0;
  }
  return 0;
}

int main(int argc, char **argv) {
  int64_t n = 32768;
  int reps = 2;
  for (int i = 1; i + 1 < argc; i += 2)
    if (!strcmp(argv[i], "--n"))
      n = atoll(argv[i + 1]);
    else if (!strcmp(argv[i], "--reps"))
      reps = atoi(argv[i + 1]);
  if (n < 1 || reps < 1) return fprintf(stderr, "usage: %s [--n N] [--reps R]\n", argv[0]), 2;
  tessera_context_t *ctx = NULL;
  if (tessera_init(&ctx, NULL)) return fprintf(stderr, "tessera_init failed\n"), 1;
  const int nb = tessera_tile_for(ctx, n);
  const size_t nn = (size_t)n * (size_t)n;
  double *a = malloc(nn * sizeof *a), *x = malloc((size_t)n * sizeof *x);
  double *y = calloc((size_t)n, sizeof *y);
  float *w = malloc((size_t)n * sizeof *w);
  if (!a || !x || !y || !w) return fprintf(stderr, "out of memory\n"), 1;
  uint64_t s = 12345;
  for (int64_t j = 0; j < n; j++)
    for (int64_t i = j; i < n; i++) {
      s = s * 6364136223846793005ULL + 1442695040888963407ULL;
      a[i + j * n] = a[j + i * n] = (double)(s >> 11) / 9007199254740992.0 - 0.5;
    }
  for (int64_t i = 0; i < n; i++) a[i + i * n] += (double)n / 4, x[i] = 1, w[i] = 1;
  tessera_matrix_t *A = NULL, *L = NULL, *L1 = NULL;
  int rc = tessera_matrix_create(ctx, TESSERA_F64, n, n, nb, nb, &A);
  if (!rc) rc = tsr_matrix_create_workspace(ctx, TESSERA_F32, n, n, nb, nb, &L);
  if (!rc) rc = tsr_matrix_create_workspace(ctx, TESSERA_F32, n, n, n, n, &L1);
  const double flops = (double)n * (double)n * (double)n / 3;
  double best = 1e30;
  for (int r = 0; r < reps && !rc; r++) {
    rc = tessera_matrix_import(A, a, n);
    const double t0 = now();
    if (!rc) rc = tessera_tile_potrf(TESSERA_LOWER, A);
    if (now() - t0 < best) best = now() - t0;
  }
  if (!rc) rc = tessera_matrix_import(A, a, n);
  printf("# n %lld, tile %d, %d workers, %d accelerators, best of %d\n", (long long)n, nb,
         tessera_worker_count(ctx), tessera_accelerator_count(ctx), reps);
  printf("%-28s %10s %10s %9s\n", "factor", "convert s", "potrf s", "TFLOP/s");
  if (!rc) printf("%-28s %10s %10.4f %9.1f\n", "f64 tile potrf", "-", best, flops / best * 1e-12);
  for (int one = 0; one < 2 && !rc; one++)
    for (int m = TSR_MATH_OWN; m <= TSR_MATH_F16 && !rc; m++) {
      double c, f;
      rc = factor(A, one ? L1 : L, m, reps, &c, &f);
      char what[40];
      snprintf(what, sizeof what, "%s, %s", math_name[m], one ? "one tile" : "tile loop");
      if (!rc) printf("%-28s %10.4f %10.4f %9.1f\n", what, c, f, flops / f * 1e-12);
    }
  /* L1 holds the FP16 factor, L the FP16 factor on tiles: the solves' times only */
  double t_loop = 0, t_one = 0, t_hemm = 1e30;
  if (!rc) rc = solve(L, w, reps, &t_loop);
  if (!rc) rc = solve(L1, w, reps, &t_one);
  for (int r = 0; r < reps && !rc; r++) {
    tessera_matrix_t *X = NULL, *Y = NULL;
    const double t0 = now();
    rc = tessera_matrix_view(ctx, TESSERA_F64, n, 1, nb, nb, x, n, &X);
    if (!rc) rc = tessera_matrix_view(ctx, TESSERA_F64, n, 1, nb, nb, y, n, &Y);
    if (!rc) rc = tsr_pxhemm('L', A, (tsr_scalar_t){1, 0}, X, (tsr_scalar_t){0, 0}, Y);
    if (!rc) rc = tessera_wait_all(ctx);
    if (X) rc |= tessera_matrix_destroy(X);
    if (Y) rc |= tessera_matrix_destroy(Y);
    if (now() - t0 < t_hemm) t_hemm = now() - t0;
  }
  if (!rc)
    printf("one column: hemm (f64) %.4f s, potrs (f32) on tiles %.4f s, as one tile %.4f s\n",
           t_hemm, t_loop, t_one);
  if (rc) fprintf(stderr, "failed: %d (%s)\n", rc, tessera_last_error(ctx));
  if (L1) (void)tessera_matrix_destroy(L1);
  if (L) (void)tessera_matrix_destroy(L);
  if (A) (void)tessera_matrix_destroy(A);
  (void)tessera_finalize(ctx);
  free(a), free(x), free(y), free(w);
  return rc ? 1 : 0;
}
