/* The algorithms layer's choices that depend on the context: the tile size of LAPACK-style calls
 * (from the order, the workers and the GPUs), the Cholesky panel method (per call, else
 * TESSERA_TRSM_INVERSE, else from the scope's devices) and what LU does in the steps its panels'
 * chain bounds (TESSERA_LU_TAIL and TESSERA_LU_UPDATE_K, else the TSR_ defaults in
 * linalg.h). */
#include <stdlib.h>

#include "linalg/linalg.h"

/* Order from which LAPACK-style calls use GPU-sized tiles (see tessera_tile_for). */
enum { GPU_TILE_MIN_N = 8192 };

int tessera_default_tile(const tessera_context_t *ctx) {
  if (!ctx) return 0;
  const tessera_config_t *cfg = tessera_config(ctx);
  if (cfg->tile_size > 0) return cfg->tile_size;
  return tessera_accelerator_count(ctx) > 0 ? 2048 : 320;
}

int tessera_tile_for(const tessera_context_t *ctx, int64_t n) {
  if (!ctx) return 0;
  const tessera_config_t *cfg = tessera_config(ctx);
  if (cfg->tile_size > 0) return cfg->tile_size;
  const int gpus = tessera_accelerator_count(ctx);
  /* Below this order a call from the caller's (pageable) array costs more in copies to the GPUs
   * than it computes: tiles sized for the CPU workers let the cost model keep it there. */
  if (gpus > 0 && n >= GPU_TILE_MIN_N) {
    int64_t nb = n / (2 * gpus) / 256 * 256;
    return (int)(nb >= 2048 ? 2048 : nb >= 512 ? nb : 512);
  }
  const int workers = tessera_worker_count(ctx);
  int q = 1;
  while (q * q < workers) q++;
  int64_t nb = n / (4 * q) / 64 * 64;
  return (int)(nb < 128 ? 128 : nb > 1024 ? 1024 : nb);
}

int tessera_tile_for_lu(const tessera_context_t *ctx, int64_t m, int64_t n) {
  if (!ctx) return 0;
  const int64_t k = m < n ? m : n;
  if (tessera_config(ctx)->tile_size > 0 ||
      (tessera_accelerator_count(ctx) > 0 && k >= GPU_TILE_MIN_N))
    return tessera_tile_for(ctx, k);
  int64_t nb = k / (8 * (int64_t)(tessera_worker_count(ctx) > 0 ? tessera_worker_count(ctx) : 1));
  nb = nb / 64 * 64;
  return (int)(nb < 128 ? 128 : nb > 512 ? 512 : nb);
}

void tessera_potrf_options_init(tessera_potrf_options_t *opts) {
  if (opts) opts->trsm_inverse = -1;
}

int tsr_panel_inverse(tessera_context_t *ctx, const tessera_potrf_options_t *opts) {
  if (opts && opts->trsm_inverse >= 0) return opts->trsm_inverse > 0;
  const char *v = getenv("TESSERA_TRSM_INVERSE");
  if (v && *v) {
    if ((v[0] == '0' || v[0] == '1') && !v[1]) return v[0] == '1';
    return tsr_error(ctx, TESSERA_ERR_ENV, "TESSERA_TRSM_INVERSE=\"%s\" is not 0 or 1", v);
  }
  return tessera_scope_nodes(ctx, tessera_get_scope(ctx), NULL, 0) > 0;
}

/* The value of the environment variable `var`, a count from 0 to `hi`, in *value (left as it is
 * where the variable is unset or empty); TESSERA_ERR_ENV with a message for another value. */
static int env_count(tessera_context_t *ctx, const char *var, long hi, const char *what,
                     long *value) {
  const char *v = getenv(var);
  if (!v || !*v) return 0;
  char *end = NULL;
  const long x = strtol(v, &end, 10);
  if (*end || x < 0 || x > hi)
    return tsr_error(ctx, TESSERA_ERR_ENV, "%s=\"%s\" is not %s from 0 to %ld", var, v, what, hi);
  *value = x;
  return 0;
}

int tsr_lu_tail(const tessera_matrix_t *A, tsr_lu_tail_t *t) {
  tessera_context_t *ctx = A->ctx;
  long tail = TSR_LU_TAIL, k = TSR_LU_UPDATE_K;
  int rc = env_count(ctx, "TESSERA_LU_TAIL", 1 << 20, "a panel count", &tail);
  if (!rc) rc = env_count(ctx, "TESSERA_LU_UPDATE_K", 1 << 20, "a column count", &k);
  if (rc) return rc;
  const int nodes = tessera_scope_nodes(ctx, tessera_get_scope(ctx), NULL, 0);
  const int64_t devices = (int64_t)(nodes > 0 ? nodes : 1) * (A->comm ? A->grid.p * A->grid.q : 1);
  *t = (tsr_lu_tail_t){.tail = tail * devices, .kchunk = (int)k};
  return 0;
}
