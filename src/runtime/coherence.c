/* Replica coherence: Invalid / Shared / Owned per memory node, as a pure function of states.
 *
 * A read on a node without a valid replica copies from a valid one (the owner if any, else a
 * device node, else the host) and leaves both Shared. A write leaves the writing node Owned
 * and every other replica Invalid; a read-write first copies like a read. */
#include <stdbool.h>

#include "runtime/coherence.h"

static bool valid(uint8_t s) {
  return s == TSR_SHARED || s == TSR_OWNED;
}

int tsr_coherence_plan(const uint8_t *state, int nnodes, int node, tessera_access_t mode, int *src,
                       uint8_t *after) {
  *src = -1;
  for (int i = 0; i < nnodes; i++) after[i] = state[i];
  bool need_contents = (mode & TESSERA_R) != 0;
  if (need_contents && !valid(state[node])) {
    int pick = -1;
    for (int i = 0; i < nnodes && pick < 0; i++)
      if (state[i] == TSR_OWNED) pick = i;
    for (int i = nnodes - 1; i >= 0 && pick < 0; i--)
      if (valid(state[i])) pick = i;
    if (pick < 0) return -1;
    *src = pick;
  }
  if (mode & TESSERA_W) {
    for (int i = 0; i < nnodes; i++) after[i] = TSR_INVALID;
    after[node] = TSR_OWNED;
  } else if (*src >= 0) {
    after[*src] = TSR_SHARED;
    after[node] = TSR_SHARED;
  }
  return 0;
}
