/* The runtime's context as the layers above build on it: the public tessera_init and
 * tessera_finalize (src/init/init.c) make and free the runtime's part through these, and keep
 * what they add to a context (its communicator) in one slot the runtime never reads. */
#ifndef TSR_ATTACH_H
#define TSR_ATTACH_H

#include "runtime/settings.h"
#include "tessera/context.h"

/** Makes the runtime's context from a configuration resolved against the environment
 *  (tsr_settings_resolve): checks it, fills its remaining "auto" fields with the defaults, opens
 *  the devices, starts the workers. Statuses of tessera_init. */
int tsr_context_create(tessera_context_t **ctx, const tessera_config_t *cfg,
                       const tsr_settings_extra_t *extra);

/** Waits for every task, stops the workers, writes the trace and the kernel-time history, frees
 *  the context. Statuses of tessera_finalize. */
int tsr_context_destroy(tessera_context_t *ctx);

/** The slot of the layers above (NULL until they set it); the runtime never reads it. */
void **tsr_context_slot(tessera_context_t *ctx);

/** The configuration in force, for the layers above to record what they resolve. */
tessera_config_t *tsr_context_cfg(tessera_context_t *ctx);

#endif
