/* The mixed-precision Cholesky solve over the processes of mpirun on a resident distributed
 * matrix, against tessera's f64 tile_posv on the same one in the same run. A (f64, order n,
 * diagonally dominant SPD) is dealt over the context's grid (TESSERA_GRID's, else the
 * squarest) in tiles of tessera_tile_for; every process imports its own tiles from the whole
 * matrix it generates. Each repetition: A and B imported, an untimed tile_posv_mixed (which
 * leaves A as it was) brings A's tiles onto the devices, then tile_posv_mixed timed, then the f64
 * tile_posv timed on the same resident A (which it overwrites). Process 0 prints each solve's
 * best time, the ratio, the steps and max |x - 1| for b = A * ones.
 *
 *   mpirun -np 2 ./build/bench/bench_dist_posv_mixed [N] [FACTOR] [REPS]
 *       FACTOR: s, tf32, bf16 or h (default bf16); N default 16384, REPS 2
 *
 * Each process should see a GPU of its own (CUDA_VISIBLE_DEVICES by its local rank). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <tessera/distribution.h>
#include <tessera/linalg.h>
#include <tessera/tessera.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* A(i, j) of a diagonally dominant SPD matrix. */
static double entry(int64_t i, int64_t j, int64_t n) {
  return i == j ? (double)n : 1.0 / (double)(1 + i + j);
}

static tessera_factor_t factor_of(const char *s) {
  static const char *names[] = {"s", "tf32", "bf16", "h"};
  for (int k = 0; k < 4; k++)
    if (!strcmp(s, names[k])) return (tessera_factor_t)(TESSERA_FACTOR_SINGLE + k);
  return TESSERA_FACTOR_AUTO;
}

int main(int argc, char **argv) {
  const int64_t n = argc > 1 ? atoll(argv[1]) : 16384;
  const tessera_factor_t f = factor_of(argc > 2 ? argv[2] : "bf16");
  const int reps = argc > 3 ? atoi(argv[3]) : 2;
  tessera_config_t cfg;
  tessera_config_init(&cfg);
  cfg.distributed = 1;
  tessera_context_t *ctx = NULL;
  if (n < 1 || reps < 1 || f == TESSERA_FACTOR_AUTO || tessera_init(&ctx, &cfg)) {
    fprintf(stderr, "bench_dist_posv_mixed: N >= 1, FACTOR s|tf32|bf16|h, REPS >= 1, and a "
                    "context over the processes\n");
    return 1;
  }
  tessera_comm_t *comm = tessera_context_comm(ctx);
  const int rank = comm ? tessera_comm_rank(comm) : 0;
  const tessera_grid_t g = tessera_context_grid(ctx);
  const int64_t nb = tessera_tile_for(ctx, n);
  double *a = malloc((size_t)(n * n) * sizeof *a), *b = malloc((size_t)n * sizeof *b);
  double *x = malloc((size_t)n * sizeof *x);
  tessera_matrix_t *A = NULL, *B = NULL;
  int rc = a && b && x ? 0 : TESSERA_ERR_NOMEM;
  if (!rc) rc = tessera_matrix_create_distributed(ctx, comm, g, TESSERA_F64, n, n, nb, nb, &A);
  if (!rc) rc = tessera_matrix_create_distributed(ctx, comm, g, TESSERA_F64, n, 1, nb, nb, &B);
  for (int64_t j = 0; j < n && !rc; j++) {
    b[j] = 0;
    for (int64_t i = 0; i < n; i++) a[i + j * n] = entry(i, j, n);
  }
  for (int64_t j = 0; j < n && !rc; j++)
    for (int64_t i = 0; i < n; i++) b[i] += a[i + j * n];
  tessera_mixed_options_t o;
  tessera_mixed_options_init(&o);
  o.factor = f;
  tessera_mixed_result_t res = {0};
  double best[2] = {INFINITY, INFINITY}, err[2] = {0, 0};
  for (int r = 0; r < reps && !rc; r++) {
    rc = tessera_matrix_import(A, a, n);
    if (!rc) rc = tessera_matrix_import(B, b, n);
    if (!rc) rc = tessera_tile_posv_mixed(TESSERA_LOWER, A, B, &o, &res); /* A onto the devices */
    for (int k = 0; k < 2 && !rc; k++) { /* 0: mixed, 1: f64 (overwrites A) */
      rc = tessera_matrix_import(B, b, n);
      if (!rc && comm) rc = tessera_comm_barrier(comm, NULL);
      const double t0 = now();
      if (!rc)
        rc = k ? tessera_tile_posv(TESSERA_LOWER, A, B)
               : tessera_tile_posv_mixed(TESSERA_LOWER, A, B, &o, &res);
      if (!rc && comm) rc = tessera_comm_barrier(comm, NULL);
      const double t = now() - t0;
      if (!rc) best[k] = t < best[k] ? t : best[k];
      memset(x, 0, (size_t)n * sizeof *x); /* each process's tiles, summed */
      if (!rc) rc = tessera_matrix_export(B, x, n);
      if (!rc && comm)
        rc = tessera_comm_allreduce(comm, x, x, (size_t)n, TESSERA_COMM_F64, TESSERA_SUM, NULL);
      for (int64_t i = 0; i < n && !rc; i++) err[k] = fmax(err[k], fabs(x[i] - 1));
    }
  }
  if (rc)
    fprintf(stderr, "process %d: %d (%s)\n", rank, rc, tessera_last_error(ctx));
  else if (rank == 0)
    printf("dist_posv_mixed n=%lld grid=%dx%d gpus/process=%d tile=%lld factor=%s: %.4f s "
           "(%d steps, max|x-1| %.1e) against f64 tile_posv %.4f s (max|x-1| %.1e): %.2f x\n",
           (long long)n, g.p, g.q, tessera_accelerator_count(ctx), (long long)nb,
           argc > 2 ? argv[2] : "bf16", best[0], res.iter, err[0], best[1], err[1],
           best[1] / best[0]);
  if (A) tessera_matrix_destroy(A);
  if (B) tessera_matrix_destroy(B);
  free(a), free(b), free(x);
  tessera_finalize(ctx);
  return rc != 0;
}
