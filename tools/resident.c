/* tessera CLI and benchmarks — see resident.h. */
#include "resident.h"

#include <tessera/linalg.h>

/* A's tiles onto the GPUs of ctx by a tile call there: Y = A B, or (B NULL) Y = A when Y is
 * given, else the identity's row interchange on A's panels; waited for, the scope restored
 * after. */
static int on_gpus(tessera_context_t *ctx, tessera_matrix_t *A, tessera_matrix_t *B,
                   tessera_matrix_t *Y) {
  if (tessera_accelerator_count(ctx) == 0) return 0;
  const tessera_scope_t outer = tessera_get_scope(ctx);
  const double one[2] = {1, 0}, zero[2] = {0, 0}; /* read as the dtype's scalar */
  const int first = 1;
  int rc = tessera_set_scope(ctx, tessera_scope_gpus());
  if (!rc)
    rc = B   ? tessera_tile_gemm(TESSERA_NOTRANS, TESSERA_NOTRANS, one, A, B, zero, Y)
         : Y ? tessera_tile_lacpy(A, Y)
             : tessera_tile_laswp(A, 1, 1, &first, 1);
  const int w = tessera_wait_all(ctx);
  (void)tessera_set_scope(ctx, outer);
  return rc ? rc : w;
}

int resident_panels_on_gpus(tessera_context_t *ctx, tessera_matrix_t *A) {
  return on_gpus(ctx, A, NULL, NULL);
}

int resident_on_gpus(tessera_context_t *ctx, tessera_matrix_t *A, tessera_matrix_t *B,
                     tessera_matrix_t *Y) {
  return on_gpus(ctx, A, B, Y);
}

int resident_copy_on_gpus(tessera_context_t *ctx, tessera_matrix_t *A, tessera_matrix_t *B) {
  return on_gpus(ctx, A, NULL, B);
}
