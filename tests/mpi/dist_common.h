/* Helpers of the MPI tests of distributed linear algebra (test_dist_getrf.c,
 * test_dist_mixed.c, test_dist_lapack.c, test_dist_syevd.c, test_dist_gepolar.c): a context over
 * the processes, a failed call's message, a distributed result put together on every process.
 * Include after linalg_common.h (or lu_common.h) and mpi_common.h. */
#ifndef TESSERA_DIST_COMMON_H
#define TESSERA_DIST_COMMON_H

/* A context over the processes (2 CPU workers each, no GPU) in tiles of `tile`, on a p x q grid
 * (p 0: the fitted one). */
static inline tessera_context_t *dist_context(int p, int q, int64_t tile) {
  tessera_config_t cfg;
  tessera_config_init(&cfg);
  cfg.cpu_workers = 2;
  cfg.gpus = 0;
  cfg.tile_size = (int)tile;
  cfg.distributed = 1;
  if (p > 0) cfg.grid_p = p, cfg.grid_q = q;
  tessera_context_t *ctx = NULL;
  const int rc = tessera_init(&ctx, &cfg);
  if (rc) fail_msg("tessera_init on a %dx%d grid: %d", p, q, rc);
  return ctx;
}

/* The call's status must be `want`. */
static inline void dist_expect(tessera_context_t *ctx, const char *call, int rc, int want) {
  if (rc != want)
    fail_msg("process %d: %s = %d, expected %d (%s)", g_rank, call, rc, want,
             tessera_last_error(ctx));
}

static inline void fail_rc(tessera_context_t *ctx, const char *what, int rc) {
  if (rc) fail_msg("process %d: %s = %d (%s)", g_rank, what, rc, tessera_last_error(ctx));
}

/* Every process's tiles of X (its rows x cols, put in an array of leading dimension ld) summed
 * over the processes: the whole X on every process. */
static inline void *assemble(tessera_context_t *ctx, tessera_dtype_t dt, tessera_matrix_t *X,
                             int64_t ld, int64_t cols) {
  const size_t count = (size_t)(ld * cols);
  void *a = lc_alloc(dt, count ? count : 1);
  memset(a, 0, count * lc_esize(dt));
  fail_rc(ctx, "export", tessera_matrix_export(X, a, ld));
  fail_rc(ctx, "allreduce",
          tessera_comm_allreduce(g_comm, a, a, count, (tessera_comm_type_t)dt, TESSERA_SUM, NULL));
  return a;
}

#endif
