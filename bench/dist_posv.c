/* The LAPACK-style tessera_posv on a context over the processes of mpirun, arrays on process 0:
 * the whole call timed (the lower triangle dealt over the grid tile by tile, the distributed
 * factorization and solve, the factor and solution brought back). Run with -np 1 for one process
 * driving every GPU it sees on a 1 x 1 grid, and with BENCH_LOCAL=1 for the plain call on a
 * context of that one process (the array viewed in place), to compare.
 *
 *   mpirun -np 2 ./build/bench/bench_dist_posv [N] [REPS]     (default 16384, 2)
 *   BENCH_LOCAL=1 ./build/bench/bench_dist_posv [N] [REPS]
 *
 * The grid is TESSERA_GRID's, else the squarest; each process should see GPUs of its own
 * (CUDA_VISIBLE_DEVICES). Process 0 prints the best time, its rate (potrf + potrs flops) and
 * max |x - 1| for b = A * ones. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

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

int main(int argc, char **argv) {
  const int64_t n = argc > 1 ? atoll(argv[1]) : 16384;
  const int reps = argc > 2 ? atoi(argv[2]) : 2;
  tessera_config_t cfg;
  tessera_config_init(&cfg);
  cfg.distributed = getenv("BENCH_LOCAL") ? 0 : 1;
  tessera_context_t *ctx = NULL;
  if (n < 1 || reps < 1 || tessera_init(&ctx, &cfg)) {
    fprintf(stderr, "bench_dist_posv: N >= 1, REPS >= 1, and a context over the processes\n");
    return 1;
  }
  tessera_comm_t *comm = tessera_context_comm(ctx);
  const int rank = comm ? tessera_comm_rank(comm) : 0;
  const tessera_grid_t g = tessera_context_grid(ctx);
  double *a = NULL, *b = NULL, best = INFINITY, err = 0;
  if (rank == 0 && (!(a = malloc((size_t)(n * n) * sizeof *a)) || !(b = malloc((size_t)n * 8)))) {
    fprintf(stderr, "bench_dist_posv: out of memory for N = %lld\n", (long long)n);
    return 1;
  }
  int rc = 0;
  for (int r = 0; r < reps && !rc; r++) {
    if (rank == 0)
      for (int64_t j = 0; j < n; j++) {
        b[j] = 0;
        for (int64_t i = 0; i < n; i++) a[i + j * n] = entry(i, j, n);
      }
    if (rank == 0)
      for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < n; i++) b[i] += a[i + j * n];
    if (comm) tessera_comm_barrier(comm, NULL);
    const double t0 = now();
    rc = tessera_posv(ctx, TESSERA_LOWER, TESSERA_F64, n, 1, a, n, b, n);
    const double t = now() - t0;
    best = t < best ? t : best;
  }
  if (rank == 0 && !rc)
    for (int64_t i = 0; i < n; i++) err = fmax(err, fabs(b[i] - 1));
  if (rc)
    fprintf(stderr, "process %d: posv: %d (%s)\n", rank, rc, tessera_last_error(ctx));
  else if (rank == 0)
    printf("%s n=%lld grid=%dx%d gpus/process=%d tile=%d: %.3f s, %.1f GFLOP/s (potrf + "
           "potrs, whole call), max|x-1| = %.2e\n",
           comm ? "dist_posv" : "posv (one process)", (long long)n, g.p, g.q,
           tessera_accelerator_count(ctx), tessera_tile_for(ctx, n), best,
           ((double)n * n * n / 3 + 2.0 * n * n) / best * 1e-9, err);
  free(a);
  free(b);
  tessera_finalize(ctx);
  return rc != 0;
}
