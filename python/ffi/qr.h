/* QR and least squares on the shards of a call (qr.c), for the handlers (handlers.c). Internal to
 * libtessera_jax. */
#ifndef TSR_JAX_QR_H
#define TSR_JAX_QR_H

#include "call.h"

/** QR (OP_QR) or least squares (OP_LEAST_SQUARES) on the participants' shards (leader, scope
 *  set; qr.c). Returns 0, LAPACK's info > 0 (least squares: R(i, i) exactly zero), or a
 *  negative status, the same on every process. */
int tsr_jax_qr(tessera_context_t *ctx, const call_t *c, const part_t *p, int count);

/** Checks that the shards of a QR call (TRANSPOSED) hold its m x n matrix: 0, or
 *  TESSERA_ERR_STATE with a message on stderr. */
int tsr_jax_qr_shape(const call_t *c, const part_t *p);

#endif
