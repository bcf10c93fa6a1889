/* The Hermitian eigensolver on the shards of a call (eig.c), for the handlers (handlers.c).
 * Internal to libtessera_jax. */
#ifndef TSR_JAX_EIG_H
#define TSR_JAX_EIG_H

#include "call.h"

/** Eigenvalues, and with p->vectors eigenvectors, of the Hermitian A whose lower triangle the
 *  participants' shards hold (OP_SYEVD; leader, scope set; eig.c): the eigenvalues into every
 *  device's W, the eigenvectors into A's shards in place. Returns 0, the library's info > 0
 *  (a NaN or an infinity first in column info of A's lower triangle, or the tridiagonal
 *  eigensolver's failure), or a negative status, the same on every process. */
int tsr_jax_eig(tessera_context_t *ctx, const call_t *c, const part_t *p, int count);

#endif
