/* The algorithms layer's choices that depend on the context: the tile size of LAPACK-style calls
 * (from the order, the workers and the GPUs) and the Cholesky panel method (per call, else the
 * context's configuration, else from the scope's devices). */
#include <stdlib.h>

#include "linalg/desc/desc.h"
#include "linalg/loops/policy.h"

/* Order from which LAPACK-style calls use GPU-sized tiles (see tessera_tile_for). */
enum { GPU_TILE_MIN_N = 8192 };

/* Widest QR panel on GPUs: a panel's factorization is a chain of columns, so narrower panels
 * let the next one start while more of the trailing update is still running. */
enum { QR_GPU_PANEL_MAX = 1024 };

/* Rows per column from which a matrix is QR's tall case: on GPUs one panel, which the GPU's
 * geqrt factors by CholeskyQR2 where that is accurate. */
enum { QR_TALL_RATIO = 16 };

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

int tessera_tile_for_devices(const tessera_context_t *ctx, int64_t n, int ndev, int lu) {
  if (!ctx) return 0;
  if (n < 1 || ndev < 1) return 1;
  const tessera_config_t *cfg = tessera_config(ctx);
  if (cfg->tile_size > 0) return cfg->tile_size;
  if (tessera_accelerator_count(ctx) == 0) return tessera_tile_for(ctx, n);
  if (ndev == 1 && n <= (lu ? TESSERA_ONE_PANEL_MAX : TESSERA_ONE_TILE_MAX)) return (int)n;
  int64_t nb = n / (int64_t)ndev / 256 * 256;
  return (int)(nb < 256 ? 256 : nb > 2048 ? 2048 : nb);
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

int tessera_tile_for_qr(const tessera_context_t *ctx, int64_t m, int64_t n) {
  if (!ctx) return 0;
  const int lu = tessera_tile_for_lu(ctx, m, n);
  if (tessera_config(ctx)->tile_size > 0) return lu;
  if (tessera_accelerator_count(ctx) > 0) {
    if (m >= QR_TALL_RATIO * n && n <= QR_GPU_PANEL_MAX) return n > 0 ? (int)n : 1;
    return lu < QR_GPU_PANEL_MAX ? lu : QR_GPU_PANEL_MAX;
  }
  /* a panel's geqrt runs on one worker: a tall matrix needs several panels for the others */
  const int64_t narrow = n / 8 > 32 ? n / 8 : 32;
  return (int)(narrow < lu ? narrow : lu);
}

/* The eigensolver's tile and band width: larger makes the band reduction's and the
 * back-transformations' products larger and the bulge chasing longer (it grows with the band). */
enum { EIG_TILE = 128 };

int tessera_tile_for_eig(const tessera_context_t *ctx, int64_t n) {
  if (!ctx) return 0;
  const int given = tessera_config(ctx)->tile_size;
  const int64_t t = given > 0 ? given : EIG_TILE;
  return (int)(n < 1 ? 1 : t < n ? t : n);
}

void tessera_potrf_options_init(tessera_potrf_options_t *opts) {
  if (opts) opts->trsm_inverse = -1;
}

int tsr_panel_inverse(tessera_context_t *ctx, const tessera_potrf_options_t *opts) {
  if (opts && opts->trsm_inverse >= 0) return opts->trsm_inverse > 0;
  const int given = tessera_config(ctx)->trsm_inverse;
  if (given >= 0) return given > 0;
  return tessera_scope_nodes(ctx, tessera_get_scope(ctx), NULL, 0) > 0;
}
