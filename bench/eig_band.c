/* The Hermitian eigensolver's band width (the first stage's bandwidth, which is also its tile):
 * tessera_syevd / tessera_heevd in two stages on one matrix for each band of --bands, each in a
 * fresh context (eig_method two, no kernel-time history), best of --reps calls; the largest
 * eigenvalue difference against the first band's, relative to ‖A‖_F. The matrix is
 * `tessera bench syevd`'s (tools/gen.c: gen_dense made Hermitian). The policy's own band
 * (tessera_tile_for_eig) is printed first; the comparison with cuSOLVER is `tessera bench syevd`.
 *
 *   ./build/bench/bench_eig_band [--n 16384] [--bands 128,96,64] [--values-only] [--reps 2]
 *                                [--dtype s|d|c|z]
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gen.h"
#include "residual.h"
#include "tessera/linalg.h"
#include "tessera/tessera.h"

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static tessera_context_t *context_of(int band) {
  tessera_config_t cfg;
  tessera_config_init(&cfg);
  cfg.tile_size = band;
  cfg.eig_method = TESSERA_EIG_TWO;
  cfg.perfmodel_file = "none";
  tessera_context_t *ctx = NULL;
  return tessera_init(&ctx, &cfg) ? NULL : ctx;
}

/* w[i] in double whatever the dtype's real type. */
static double value(tessera_dtype_t dt, const void *w, int64_t i) {
  return dt == TESSERA_F32 || dt == TESSERA_C64 ? ((const float *)w)[i] : ((const double *)w)[i];
}

int main(int argc, char **argv) {
  int64_t n = 16384;
  const char *bands = "128,96,64";
  int reps = 2;
  tessera_job_t job = TESSERA_VECTORS;
  tessera_dtype_t dt = TESSERA_F64;
  for (int i = 1; i < argc; i++) {
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(argv[i], "--values-only")) {
      job = TESSERA_VALUES;
      continue;
    }
    if (v && !strcmp(argv[i], "--n"))
      n = atoll(v);
    else if (v && !strcmp(argv[i], "--bands"))
      bands = v;
    else if (v && !strcmp(argv[i], "--reps"))
      reps = atoi(v);
    else if (v && !strcmp(argv[i], "--dtype") && v[0] && strchr("sdcz", v[0]))
      dt = (tessera_dtype_t)(strchr("sdcz", v[0]) - "sdcz");
    else {
      fprintf(stderr,
              "usage: %s [--n 16384] [--bands 128,96,64] [--values-only] [--reps 2] "
              "[--dtype s|d|c|z]\n",
              argv[0]);
      return 2;
    }
    i++;
  }
  if (n < 1 || reps < 1) {
    fprintf(stderr, "%s: the order and the repetitions must be positive\n", argv[0]);
    return 2;
  }
  const size_t es = tessera_dtype_size(dt), rs = dt == TESSERA_F32 || dt == TESSERA_C64 ? 4 : 8;
  void *a0 = malloc((size_t)(n * n) * es), *a = malloc((size_t)(n * n) * es);
  void *w = malloc((size_t)n * rs), *w0 = malloc((size_t)n * rs);
  if (!a0 || !a || !w || !w0) {
    fprintf(stderr, "%s: out of memory for n = %lld\n", argv[0], (long long)n);
    return 1;
  }
  gen_dense(dt, n, n, a0, n, GEN_SEED_A);
  gen_mirror(dt, TESSERA_LOWER, n, a0, n);
  const double an = residual_fro(dt, n, n, a0, n);
  tessera_context_t *probe = context_of(-1);
  if (!probe) return 1;
  printf("n %lld, %s, %s: the policy's band %d\n", (long long)n,
         job == TESSERA_VALUES ? "values alone" : "with vectors",
         tessera_dtype_is_complex(dt) ? "heevd" : "syevd", tessera_tile_for_eig(probe, job, dt, n));
  tessera_finalize(probe);
  printf("%6s %10s %14s\n", "band", "seconds", "max|dw|/|A|");
  int first = 1, status = 0;
  for (const char *p = bands; *p && !status;) {
    const int band = atoi(p);
    tessera_context_t *ctx = context_of(band);
    if (!ctx) return 1;
    double best = INFINITY;
    for (int r = 0; r < reps && !status; r++) {
      memcpy(a, a0, (size_t)(n * n) * es);
      const double t0 = now();
      status = tessera_dtype_is_complex(dt)
                   ? tessera_heevd(ctx, job, TESSERA_LOWER, dt, n, a, n, w)
                   : tessera_syevd(ctx, job, TESSERA_LOWER, dt, n, a, n, w);
      best = fmin(best, now() - t0);
    }
    if (status) {
      fprintf(stderr, "band %d: %s\n", band, tessera_last_error(ctx));
    } else {
      if (first) memcpy(w0, w, (size_t)n * rs), first = 0;
      double d = 0;
      for (int64_t i = 0; i < n; i++) d = fmax(d, fabs(value(dt, w, i) - value(dt, w0, i)));
      printf("%6d %10.3f %14.2e\n", band, best, d / (an > 0 ? an : 1));
    }
    tessera_finalize(ctx);
    p = strchr(p, ',') ? strchr(p, ',') + 1 : p + strlen(p);
  }
  free(a0), free(a), free(w), free(w0);
  return status ? 1 : 0;
}
