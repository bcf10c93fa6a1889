/* The Cholesky family on the shards of a call (cholesky.c), for the handlers (handlers.c).
 * Internal to libtessera_jax. */
#ifndef TSR_JAX_CHOLESKY_H
#define TSR_JAX_CHOLESKY_H

#include "call.h"

/** potrs, potri, cholesky, cho_solve, cho_inverse, cho_first or cho_second on the participants'
 *  shards (leader, scope set): potrf (not for the factored ones), then potrs' log det into
 *  *logdet (with p->logdet) and the solve, or the inverse; potrs with p->mixed >= 0 in mixed
 *  precision. Returns 0, potrf's info > 0, or a negative status. */
int tsr_jax_cholesky(tessera_context_t *ctx, const call_t *c, const part_t *p, int count,
                     double *logdet);

#endif
