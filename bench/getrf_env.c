/* tessera's getrf under several settings of the environment variables it reads at each call
 * (TESSERA_LU_TAIL, TESSERA_LU_UPDATE_K; not those tessera_init reads once, such as
 * TESSERA_GPU_FLIGHTS): `tessera bench getrf`'s generated matrix on one resident descriptor,
 * imported before each run (untimed), the settings taken in turn, --reps rounds after an
 * untimed warm-up, so that every setting sees the same machine state; the best time of each,
 * its rate, its ratio to the first setting, and the backward error of a solve with its factors
 * (the CLI's residual_solve: ‖A x − b‖₁ / (‖A‖₁ ‖x‖₁ n ε)). Each --env is one setting:
 * assignments VAR=VALUE separated by spaces ("" for none); a variable one setting assigns is
 * unset for the others.
 *
 *   ./build/bench/bench_getrf_env [--n 65536] [--tile 2048] [--gpus G] [--workers W]
 *                                 [--reps 2] [--dtype d|s] --env "" --env "TESSERA_LU_UPDATE_K=512"
 *
 * Without --gpus the context's defaults hold (every GPU), without --workers none beside GPUs
 * (the CPU workers' default without any).
 */
#define _POSIX_C_SOURCE 200809L
#include <cblas.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gen.h" /* the CLI's matrices, residuals: those of `tessera bench getrf` */
#include "residual.h"
#include "tessera/tessera.h"

enum { MAX_SETTINGS = 8 };

static double seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

typedef struct {
  tessera_context_t *ctx;
  tessera_dtype_t dt;
  int64_t n;
  int tile, reps, nsettings;
  char *settings[MAX_SETTINGS]; /* --env's, as given */
  void *a, *v, *b;              /* the matrix, a vector, and b = A v */
  int *ipiv;
  tessera_matrix_t *A, *B;
  double best[MAX_SETTINGS];
} bench_t;

static int fail(const bench_t *p, const char *what, int status) {
  fprintf(stderr, "bench_getrf_env: %s failed (%d): %s\n", what, status,
          p->ctx ? tessera_last_error(p->ctx) : "no context");
  return 1;
}

/* Applies setting k: unsets every variable any setting assigns, then sets k's. 0, or -1 for a
 * malformed assignment. */
static int apply(const bench_t *p, int k) {
  for (int pass = 0; pass < 2; pass++)
    for (int i = pass ? k : 0; i < (pass ? k + 1 : p->nsettings); i++) {
      char copy[512];
      snprintf(copy, sizeof copy, "%s", p->settings[i]);
      char *save = NULL;
      for (char *w = strtok_r(copy, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
        char *eq = strchr(w, '=');
        if (!eq || eq == w) return -1;
        *eq = 0;
        if (pass ? setenv(w, eq + 1, 1) : unsetenv(w)) return -1;
      }
    }
  return 0;
}

/* Factors the imported matrix with the k-th setting; its time in *t. */
static int factor(bench_t *p, int k, double *t) {
  *t = INFINITY;
  if (apply(p, k)) {
    fprintf(stderr, "bench_getrf_env: \"%s\" is not a list of VAR=VALUE\n", p->settings[k]);
    return 1;
  }
  int rc = tessera_matrix_import(p->A, p->a, p->n);
  if (rc) return fail(p, "import", rc);
  const double t0 = seconds();
  rc = tessera_tile_getrf(p->A, p->ipiv);
  *t = seconds() - t0;
  return rc ? fail(p, "getrf", rc) : 0;
}

/* A solve of A x = b with the factors of the setting factored last: its backward error. */
static int check(bench_t *p, double *err) {
  char *x = malloc((size_t)p->n * tessera_dtype_size(p->dt));
  if (!x) return fail(p, "allocation of the solution", TESSERA_ERR_NOMEM);
  int rc = tessera_matrix_import(p->B, p->b, p->n);
  if (!rc) rc = tessera_tile_getrs(TESSERA_NOTRANS, p->A, p->ipiv, p->B);
  if (!rc) rc = tessera_matrix_export(p->B, x, p->n);
  if (!rc) *err = residual_solve(p->dt, p->n, 1, p->a, p->n, x, p->n, p->b, p->n);
  free(x);
  if (!rc && *err < 0) rc = TESSERA_ERR_NOMEM;
  return rc ? fail(p, "solve", rc) : 0;
}

static int run(bench_t *p) {
  const double flops = 2.0 / 3.0 * (double)p->n * (double)p->n * (double)p->n;
  printf("# getrf %s n=%lld tile %d, %d GPUs, %d workers: best of %d after a warm-up\n",
         p->dt == TESSERA_F64 ? "f64" : "f32", (long long)p->n, p->tile,
         tessera_accelerator_count(p->ctx), tessera_worker_count(p->ctx), p->reps);
  printf("%10s %12s %8s %12s  %s\n", "seconds", "GFLOP/s", "ratio", "backward", "setting");
  double t;
  for (int rep = -1; rep < p->reps; rep++)
    for (int k = 0; k < p->nsettings; k++) {
      if (factor(p, k, &t)) return 1;
      if (rep >= 0 && t < p->best[k]) p->best[k] = t;
      double err = NAN;
      if (rep == p->reps - 1) {
        if (check(p, &err)) return 1;
        printf("%10.4f %12.1f %8.3f %12.2e  %s\n", p->best[k], flops * 1e-9 / p->best[k],
               p->best[0] / p->best[k], err, *p->settings[k] ? p->settings[k] : "(none)");
        fflush(stdout);
      }
    }
  return 0;
}

int main(int argc, char **argv) {
  bench_t p = {.dt = TESSERA_F64, .n = 65536, .tile = 2048, .reps = 2};
  int gpus = -1, workers = -1, settings_ok = 1;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--n") && i + 1 < argc)
      p.n = atoll(argv[++i]);
    else if (!strcmp(argv[i], "--tile") && i + 1 < argc)
      p.tile = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--gpus") && i + 1 < argc)
      gpus = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--workers") && i + 1 < argc)
      workers = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
      p.reps = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--dtype") && i + 1 < argc)
      p.dt = argv[++i][0] == 's' ? TESSERA_F32 : TESSERA_F64;
    else if (!strcmp(argv[i], "--env") && i + 1 < argc) {
      settings_ok = settings_ok && p.nsettings < MAX_SETTINGS && strlen(argv[i + 1]) < 512;
      if (settings_ok) p.settings[p.nsettings++] = argv[i + 1];
      i++;
    } else {
      fprintf(stderr,
              "usage: %s [--n N] [--tile T] [--gpus G] [--workers W] [--reps R] [--dtype d|s] "
              "--env \"VAR=VALUE ...\" ...\n",
              argv[0]);
      return 2;
    }
  }
  static char none[] = "";
  if (!p.nsettings) p.settings[p.nsettings++] = none;
  if (p.n < 1 || p.n > INT32_MAX || p.tile < 1 || p.reps < 1 || !settings_ok) {
    fprintf(stderr, "bench_getrf_env: n must be in 1 .. 2^31 - 1, the tile and reps at least 1, "
                    "and at most 8 settings (--env) of under 512 characters each\n");
    return 2;
  }
  for (int k = 0; k < p.nsettings; k++) p.best[k] = INFINITY;
  tessera_config_t cfg;
  tessera_config_init(&cfg);
  cfg.gpus = gpus;
  cfg.cpu_workers = workers;
  cfg.tile_size = p.tile;
  int rc = tessera_init(&p.ctx, &cfg);
  if (rc) return fail(&p, "tessera_init", rc);
  if (workers < 0 && tessera_accelerator_count(p.ctx) > 0) { /* GPUs alone */
    tessera_finalize(p.ctx);
    cfg.cpu_workers = 0;
    if ((rc = tessera_init(&p.ctx, &cfg))) return fail(&p, "tessera_init", rc);
  }
  const size_t es = tessera_dtype_size(p.dt), cells = (size_t)p.n * (size_t)p.n;
  p.a = malloc(cells * es);
  p.v = malloc((size_t)p.n * es);
  p.b = malloc((size_t)p.n * es);
  p.ipiv = malloc((size_t)p.n * sizeof *p.ipiv);
  rc = !p.a || !p.v || !p.b || !p.ipiv;
  if (rc) fprintf(stderr, "bench_getrf_env: out of memory for n = %lld\n", (long long)p.n);
  if (!rc && (rc = tessera_matrix_create(p.ctx, p.dt, p.n, p.n, p.n, p.tile, &p.A)))
    rc = fail(&p, "matrix create", rc);
  if (!rc && (rc = tessera_matrix_create(p.ctx, p.dt, p.n, 1, p.n, 1, &p.B)))
    rc = fail(&p, "matrix create", rc);
  if (!rc) {
    gen_dense(p.dt, p.n, p.n, p.a, p.n, GEN_SEED_A);
    gen_dense(p.dt, p.n, 1, p.v, p.n, GEN_SEED_V);
    if (p.dt == TESSERA_F64)
      cblas_dgemv(CblasColMajor, CblasNoTrans, (int)p.n, (int)p.n, 1.0, p.a, (int)p.n, p.v, 1, 0.0,
                  p.b, 1);
    else
      cblas_sgemv(CblasColMajor, CblasNoTrans, (int)p.n, (int)p.n, 1.0f, p.a, (int)p.n, p.v, 1,
                  0.0f, p.b, 1);
    rc = run(&p);
  }
  if (p.B) tessera_matrix_destroy(p.B);
  if (p.A) tessera_matrix_destroy(p.A);
  tessera_finalize(p.ctx);
  free(p.a);
  free(p.v);
  free(p.b);
  free(p.ipiv);
  return rc;
}
