/* The polar decomposition and the SVD on the shards of a call (svd.c), for the handlers
 * (handlers.c). Internal to libtessera_jax. */
#ifndef TSR_JAX_SVD_H
#define TSR_JAX_SVD_H

#include "call.h"

/** gepolar (OP_POLAR) or gesvd (OP_GESVD) on the participants' shards (leader, scope set;
 *  svd.c). Returns 0, LAPACK's info > 0 (a NaN or an infinity in A's column info), or a
 *  negative status, the same on every process. */
int tsr_jax_svd(tessera_context_t *ctx, const call_t *c, const part_t *p, int count);

/** Checks that the shards of a polar or gesvd call hold its m x n A (m >= n) and its n x n
 *  second matrix: 0, or TESSERA_ERR_STATE with a message on stderr. */
int tsr_jax_svd_shape(const call_t *c, const part_t *p);

#endif
