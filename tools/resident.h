/* tessera CLI and benchmarks — a resident matrix's tiles brought onto the GPUs before a timed
 * call, so that its time does not include their copies from the host (an import writes them
 * there). */
#ifndef TESSERA_TOOLS_RESIDENT_H
#define TESSERA_TOOLS_RESIDENT_H

#include <tessera/tessera.h>

/** Y = A B on the GPUs of ctx (every tile of A read there), waited for; the scope restored after.
 *  A n x n, B and Y n x k of A's dtype and tiling. No-op on a context without GPUs. Returns 0
 *  or the call's status. */
int resident_on_gpus(tessera_context_t *ctx, tessera_matrix_t *A, tessera_matrix_t *B,
                     tessera_matrix_t *Y);

/** A (column panels, as LU takes it) onto the GPUs of ctx: the identity's row interchange on
 *  every panel there (each panel written there, its only copy then), waited for; the scope
 *  restored after. No-op on a context without GPUs. Returns 0 or the call's status. */
int resident_panels_on_gpus(tessera_context_t *ctx, tessera_matrix_t *A);

/** B = A on the GPUs of ctx (every tile of B written there, its only copy then), waited for; the
 *  scope restored after. A and B of one shape, dtype and tiling. No-op on a context without GPUs.
 *  Returns 0 or the call's status. */
int resident_copy_on_gpus(tessera_context_t *ctx, tessera_matrix_t *A, tessera_matrix_t *B);

#endif
