/* The agreement of a call's processes on one status (call.h). */
#include <stdint.h>
#include <stdio.h>

#include "call.h"

/* The same status on every process of the call's communicator: the lowest negative any has,
 * else the lowest positive (LAPACK's info), else 0; TESSERA_ERR_TIMEOUT when they cannot be
 * reached. */
int tsr_jax_agree(const call_t *c, int rc) {
  if (!c->comm) return rc;
  int64_t v[2] = {rc < 0 ? rc : 0, rc > 0 ? rc : INT64_MAX};
  if (tessera_comm_allreduce(c->comm, v, v, 2, TESSERA_COMM_I64, TESSERA_MIN, NULL)) {
    fprintf(stderr, "tessera.jax: %s\n", tessera_comm_last_error(c->comm));
    return TESSERA_ERR_TIMEOUT;
  }
  return (int)(v[0] < 0 ? v[0] : v[1] != INT64_MAX ? v[1] : 0);
}
