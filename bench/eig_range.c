/* Eigenvalues il .. iu and their vectors of a random real symmetric matrix of order --n (f64,
 * lower triangle) on the CPU cores: tessera_syevdx against LAPACKE_dsyevr (range 'I') with the
 * same BLAS threads, and tessera_syevd (all of them) beside, in turns, best of --reps each, on
 * fresh copies. The method is the context's (TESSERA_EIG_METHOD: cost, one or two). Prints the
 * times, syevdx's speed over dsyevr's, and the largest difference of their eigenvalues over
 * ‖A‖_F n ε.
 *
 *   ./build/bench/bench_eig_range [--n 3000] [--range 1:300] [--reps 3] [--workers 2]
 */
#define _POSIX_C_SOURCE 200809L
#include <float.h>
#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <tessera/tessera.h>

#ifdef TESSERA_HAVE_OPENBLAS_THREADS
#include <cblas.h>
#endif

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char **argv) {
  int n = 3000, il = 1, iu = 300, reps = 3, workers = 2;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--n"))
      n = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--range") && sscanf(argv[i + 1], "%d:%d", &il, &iu) == 2)
      continue;
    else if (!strcmp(argv[i], "--reps"))
      reps = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--workers"))
      workers = atoi(argv[i + 1]);
    else
      return fprintf(stderr, "bench_eig_range: unknown option %s\n", argv[i]), 2;
  }
  if (n < 1 || il < 1 || iu < il || iu > n || reps < 1 || workers < 1)
    return fprintf(stderr,
                   "bench_eig_range: needs n >= 1, 1 <= il <= iu <= n, reps, workers >= 1\n"),
           2;
  const size_t nn = (size_t)n * (size_t)n;
  const int k = iu - il + 1;
  double *a0 = malloc(nn * sizeof *a0), *a = malloc(nn * sizeof *a), *z = malloc(nn * sizeof *z);
  double *w = malloc((size_t)n * sizeof *w), *wr = malloc((size_t)n * sizeof *wr);
  lapack_int *isuppz = malloc(2 * (size_t)n * sizeof *isuppz);
  if (!a0 || !a || !z || !w || !wr || !isuppz) return fprintf(stderr, "out of memory\n"), 1;
  unsigned long long s = 88172645463325252ull;
  double fro = 0;
  for (int j = 0; j < n; j++)
    for (int i = j; i < n; i++) {
      s ^= s << 13, s ^= s >> 7, s ^= s << 17;
      const double v = (double)(s >> 11) / 9007199254740992.0 - 0.5;
      a0[i + (size_t)j * n] = a0[j + (size_t)i * n] = v;
      fro += (i == j ? 1 : 2) * v * v;
    }
  tessera_config_t cfg;
  tessera_config_init(&cfg);
  cfg.cpu_workers = workers;
  cfg.gpus = 0;
  tessera_context_t *ctx = NULL;
  if (tessera_init(&ctx, &cfg)) return fprintf(stderr, "tessera_init failed\n"), 1;
  double tx = INFINITY, tall = INFINITY, tr = INFINITY;
  for (int r = 0; r < reps; r++) {
    memcpy(a, a0, nn * sizeof *a);
    double t0 = now();
    int rc = tessera_syevdx(ctx, TESSERA_VECTORS, TESSERA_LOWER, TESSERA_F64, n, a, n, il, iu, w);
    tx = fmin(tx, now() - t0);
    memcpy(a, a0, nn * sizeof *a);
    t0 = now();
    rc = rc ? rc : tessera_syevd(ctx, TESSERA_VECTORS, TESSERA_LOWER, TESSERA_F64, n, a, n, wr);
    tall = fmin(tall, now() - t0);
    if (rc) return fprintf(stderr, "tessera: %s\n", tessera_last_error(ctx)), 1;
    memcpy(a, a0, nn * sizeof *a);
    lapack_int m = 0;
#ifdef TESSERA_HAVE_OPENBLAS_THREADS
    openblas_set_num_threads(workers); /* LAPACK's BLAS on as many cores as tessera's workers */
#endif
    t0 = now();
    const lapack_int info = LAPACKE_dsyevr(LAPACK_COL_MAJOR, 'V', 'I', 'L', n, a, n, 0, 0, il, iu,
                                           0, &m, wr, z, n, isuppz);
    tr = fmin(tr, now() - t0);
    if (info || m != k) return fprintf(stderr, "LAPACKE_dsyevr: info %d, %d values\n", info, m), 1;
  }
  /* the last dsyevr's values are in wr, the last syevdx's in w */
  double d = 0;
  for (int i = 0; i < k; i++) d = fmax(d, fabs(w[i] - wr[i]));
  printf("n %d, eigenvalues %d .. %d (%d), %d workers / BLAS threads, best of %d\n", n, il, iu, k,
         workers, reps);
  printf("%-28s %10s\n", "call", "seconds");
  printf("%-28s %10.4f\n", "tessera_syevdx", tx);
  printf("%-28s %10.4f\n", "LAPACKE_dsyevr (range I)", tr);
  printf("%-28s %10.4f\n", "tessera_syevd (all)", tall);
  printf("ratio dsyevr / syevdx %.2f; eigenvalues' difference %.3g (over ||A||_F n eps)\n", tr / tx,
         d / (sqrt(fro) * n * DBL_EPSILON));
  tessera_finalize(ctx);
  free(a0), free(a), free(z), free(w), free(wr), free(isuppz);
  return 0;
}
