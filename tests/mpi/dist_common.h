/* Helpers of the MPI tests of distributed linear algebra (test_dist_getrf.c,
 * test_dist_mixed.c): a failed call's message, a distributed result put together on every
 * process. Include after linalg_common.h (or lu_common.h) and mpi_common.h. */
#ifndef TESSERA_DIST_COMMON_H
#define TESSERA_DIST_COMMON_H

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
