/* The algorithms layer's choices that depend on the context (policy.c); the public tile sizes
 * are in tessera/linalg.h. */
#ifndef TSR_LINALG_POLICY_H
#define TSR_LINALG_POLICY_H

#include "tessera/tessera.h"

/** The Cholesky panel method of a call (policy.c): 1 for products with inverted diagonal tiles,
 *  0 for triangular solves. `opts` may be NULL (automatic). */
int tsr_panel_inverse(tessera_context_t *ctx, const tessera_potrf_options_t *opts);

#endif
