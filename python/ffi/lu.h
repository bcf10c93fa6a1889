/* LU on the shards of a call (lu.c), for the handlers (handlers.c). Internal to libtessera_jax. */
#ifndef TSR_JAX_LU_H
#define TSR_JAX_LU_H

#include "call.h"

/** lu_solve (OP_LU_SOLVE), lu_factor (OP_LU_FACTOR) or lu_factored (OP_LU_FACTORED) on the
 *  participants' shards (leader, scope set; lu.c). Returns 0, getrf's info > 0 (B untouched,
 *  as LAPACK's gesv; lu_factor's factors and pivots then not written), or a negative status,
 *  the same on every process. */
int tsr_jax_lu(tessera_context_t *ctx, const call_t *c, const part_t *p, int count);

#endif
