/* The host transport of a build without Gloo: there is no table (tsr_gloo_host() is NULL), so a
 * communicator over a key-value store fails, saying why (comm.c). */
#include <stddef.h>

#include "comm/transport.h"

const tsr_host_ops_t *tsr_gloo_host(void) {
  return NULL;
}
