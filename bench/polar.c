/* The polar decomposition A = U_p H (tessera_gepolar, QDWH) on the context's devices: the
 * LAPACK-style call on host arrays and tessera_tile_gepolar on a square descriptor whose tiles
 * are on the GPUs before each timed run (brought there by an untimed product after the import),
 * best of --reps after an untimed first run each; with its steps, the rate of QDWH's usual
 * count and the checks ‖A − U_p H‖_F / (‖A‖_F n ε) and ‖U_pᴴU_p − I‖_F / (n ε) (tessera_gemm).
 * A: tools/gen.c's gen_dense (m x n, f64 unless --dtype). jax's own QDWH polar runs in
 * bench/jax_polar.py on the same orders (the baseline of docs/benchmarks.md's rows).
 *
 * The SVD against its baselines (cusolverDnXgesvdp, LAPACKE ?gesdd): `tessera bench gesvd`.
 *
 *   ./build/bench/bench_polar [--n 8192,16384] [--m-extra 0] [--reps 2] [--dtype s|d|c|z]
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gen.h"
#include "resident.h"
#include "residual.h"
#include "tessera/linalg.h"
#include "tessera/tessera.h"

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* QDWH's operations: a QR step (geqrf of (m + n) x n and Q's n columns, 4 (m + n) n² − 4/3 n³,
 * then the product 2 m n²), a Cholesky step (herk n² m, potrf n³ / 3, two trsm 2 m n², the
 * product) by the steps taken, two QR steps counted as such; then Newton-Schulz and H (6 m n²).
 * Complex: four times. */
static double flops(tessera_dtype_t dt, double m, double n, int steps) {
  const double qr = 4 * (m + n) * n * n - 4.0 / 3 * n * n * n + 2 * m * n * n;
  const double ch = m * n * n + n * n * n / 3 + 2 * m * n * n;
  const int q = steps < 2 ? steps : 2;
  const double f = q * qr + (steps - q) * ch + 6 * m * n * n;
  return tessera_dtype_is_complex(dt) ? 4 * f : f;
}

/* The checks of U (m x n, ld m) and H (n x n) against A0. */
static void check(tessera_context_t *ctx, tessera_dtype_t dt, int64_t m, int64_t n, const void *a0,
                  const void *u, const void *h, double *res, double *orth) {
  const size_t es = tessera_dtype_size(dt);
  char *r = malloc((size_t)(m * n) * es);
  double one[2], mone[2];
  residual_scalars(dt, mone, one);
  memcpy(r, a0, (size_t)(m * n) * es);
  int s =
      tessera_gemm(ctx, TESSERA_NOTRANS, TESSERA_NOTRANS, dt, m, n, n, mone, u, m, h, n, one, r, m);
  *res = s ? NAN
           : residual_fro(dt, m, n, r, m) /
                 (residual_fro(dt, m, n, a0, m) * (double)m * residual_eps(dt));
  memset(r, 0, (size_t)(n * n) * es);
  for (int64_t i = 0; i < n; i++) elem_set(dt, r, (size_t)(i + i * n), 1, 0);
  s = tessera_gemm(ctx, TESSERA_CONJTRANS, TESSERA_NOTRANS, dt, n, n, m, mone, u, m, u, m, one, r,
                   n);
  *orth = s ? NAN : residual_fro(dt, n, n, r, n) / ((double)n * residual_eps(dt));
  free(r);
}

int main(int argc, char **argv) {
  const char *sizes = "8192,16384";
  int reps = 2;
  int64_t extra = 0;
  tessera_dtype_t dt = TESSERA_F64;
  for (int i = 1; i < argc; i++) {
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (v && !strcmp(argv[i], "--n"))
      sizes = v;
    else if (v && !strcmp(argv[i], "--reps"))
      reps = atoi(v);
    else if (v && !strcmp(argv[i], "--m-extra"))
      extra = atoll(v);
    else if (v && !strcmp(argv[i], "--dtype"))
      dt = strchr("sdcz", v[0]) ? (tessera_dtype_t)(strchr("sdcz", v[0]) - "sdcz") : TESSERA_F64;
    else {
      fprintf(stderr, "usage: %s [--n 8192,16384] [--m-extra 0] [--reps 2] [--dtype s|d|c|z]\n",
              argv[0]);
      return 2;
    }
    i++;
  }
  tessera_context_t *ctx = NULL;
  if (tessera_init(&ctx, NULL)) return 1;
  printf("%8s %8s %10s %10s %6s %9s %9s %9s\n", "m", "n", "lapack_s", "tile_s", "steps", "TFLOP/s",
         "residual", "orth");
  for (const char *p = sizes; *p;) {
    const int64_t n = atoll(p), m = n + extra;
    const size_t es = tessera_dtype_size(dt);
    void *a0 = malloc((size_t)(m * n) * es), *a = malloc((size_t)(m * n) * es),
         *h = malloc((size_t)(n * n) * es);
    gen_dense(dt, m, n, a0, m, GEN_SEED_A);
    double best = INFINITY, tile = NAN;
    int steps = 0, rc = 0;
    for (int r = 0; r <= reps && !rc; r++) { /* run 0 untimed */
      memcpy(a, a0, (size_t)(m * n) * es);
      const double t0 = now();
      rc = tessera_gepolar(ctx, dt, m, n, a, m, h, n, &steps);
      if (r > 0) best = fmin(best, now() - t0);
    }
    if (!rc && m == n) {
      const int t = tessera_tile_for_polar(ctx, n, n);
      tessera_matrix_t *A = NULL, *H = NULL, *B = NULL, *Y = NULL;
      rc = tessera_matrix_create(ctx, dt, n, n, t, t, &A);
      if (!rc) rc = tessera_matrix_create(ctx, dt, n, n, t, t, &H);
      if (!rc) rc = tessera_matrix_create(ctx, dt, n, t, t, t, &B);
      if (!rc) rc = tessera_matrix_create(ctx, dt, n, t, t, t, &Y);
      for (int r = 0; r <= reps && !rc; r++) {
        rc = tessera_matrix_import(A, a0, n);
        if (!rc) rc = resident_on_gpus(ctx, A, B, Y);
        const double t0 = now();
        if (!rc) rc = tessera_tile_gepolar(A, H, &steps);
        if (!rc && r > 0) tile = fmin(r > 1 ? tile : INFINITY, now() - t0);
      }
      tessera_matrix_t *made[4] = {A, H, B, Y};
      for (int k = 0; k < 4; k++)
        if (made[k]) (void)tessera_matrix_destroy(made[k]);
    }
    double res = NAN, orth = NAN;
    if (!rc)
      check(ctx, dt, m, n, a0, a, h, &res, &orth);
    else
      fprintf(stderr, "n = %lld: status %d (%s)\n", (long long)n, rc, tessera_last_error(ctx));
    const double t = isnan(tile) ? best : fmin(best, tile);
    printf("%8lld %8lld %10.4f %10.4f %6d %9.2f %9.3g %9.3g\n", (long long)m, (long long)n, best,
           tile, steps, flops(dt, (double)m, (double)n, steps) / t * 1e-12, res, orth);
    fflush(stdout);
    free(a0), free(a), free(h);
    p = strchr(p, ',');
    p = p ? p + 1 : "";
  }
  return tessera_finalize(ctx) ? 1 : 0;
}
