/* The runtime's context as the layers above build on it: the public tessera_init and
 * tessera_finalize (src/init/init.c) make and free the runtime's part through these, and keep
 * what they add to a context (its communicator) in one slot the runtime never reads. */
#ifndef TSR_ATTACH_H
#define TSR_ATTACH_H

#include "runtime/settings.h"
#include "tessera/context.h"

/** Makes the runtime's context from a configuration resolved against the environment
 *  (tsr_settings_resolve): checks it, fills its remaining "auto" fields with the defaults, opens
 *  the devices. Its workers start with tsr_context_start. Statuses of tessera_init. */
int tsr_context_create(tessera_context_t **ctx, const tessera_config_t *cfg,
                       const tsr_settings_extra_t *extra);

/** Makes and starts the workers of a context tsr_context_create made: one per GPU in use, and
 *  cpu_workers CPU workers, or where that is "auto" one per core this process runs on less one
 *  per GPU, where `sharers` processes (this one among them, as the `index`-th) run on the same
 *  cores: this process's part of them (1, 0 for a process alone). Statuses of tessera_init; on
 *  failure the context is left for tsr_context_destroy to free. */
int tsr_context_start(tessera_context_t *ctx, int sharers, int index);

/** Waits for every task, stops the workers, writes the trace and the kernel-time history, frees
 *  the context (one never started: frees it). Statuses of tessera_finalize. */
int tsr_context_destroy(tessera_context_t *ctx);

/** The slot of the layers above (NULL until they set it); the runtime never reads it. */
void **tsr_context_slot(tessera_context_t *ctx);

/** The configuration in force, for the layers above to record what they resolve. */
tessera_config_t *tsr_context_cfg(tessera_context_t *ctx);

#endif
