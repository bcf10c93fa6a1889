/* Replica coherence as a pure function of replica states (coherence.c). */
#ifndef TSR_RUNTIME_COHERENCE_H
#define TSR_RUNTIME_COHERENCE_H

#include <stdint.h>

#include "tessera/task.h"

typedef enum { TSR_INVALID = 0, TSR_SHARED = 1, TSR_OWNED = 2 } tsr_state_t;

/** The replica transitions one access needs, computed from the states alone.
 *  `src` is the node to copy from before the access (-1: no copy). `state` gets the states
 *  after the access. Returns 0, or -1 when no node holds a valid replica for a read. */
int tsr_coherence_plan(const uint8_t *state, int nnodes, int node, tessera_access_t mode, int *src,
                       uint8_t *after);

#endif
