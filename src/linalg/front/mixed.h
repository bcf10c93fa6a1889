/* What the mixed-precision solves' front doors (mixed.c) take from their distributed copy
 * (mixed_dist.c). */
#ifndef TSR_LINALG_FRONT_MIXED_H
#define TSR_LINALG_FRONT_MIXED_H

#include <stdint.h>

#include "linalg/loops/refine.h"

/** m->L, A's low-precision copy over A's processes in tiles of mb x nb (A's, or one tile): a
 *  distributed matrix whose tiles are owned as A's: of A's grid, its tiles workspaces (no home in
 *  host memory), where a grid deals A, else blocks of this process's tiles in *store (its own,
 *  freed by the caller). Returns 0 or a negative status. */
int tsr_mixed_low_copy(tsr_mixed_t *m, int64_t mb, int64_t nb, void **store);

#endif
