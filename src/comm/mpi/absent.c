/* The host transport of a build without MPI: there is no table (tsr_mpi_host() is NULL), so a
 * communicator can only be made over a store (Gloo), and an attempt without one says why. */
#include <stddef.h>

#include "comm/transport.h"

const tsr_host_ops_t *tsr_mpi_host(void) {
  return NULL;
}
