/* The host transport of a build without MPI: no communicator can be made, and the attempt says
 * why. */
#include <stdio.h>

#include "comm/comm.h"

static int absent(tessera_comm_t *c) {
  return tsr_comm_error(c, TESSERA_ERR_UNSUPPORTED,
                        "Communicators need MPI, which this build of tessera does not have "
                        "(install OpenMPI's development files and rebuild).");
}

bool tsr_mpi_built(void) {
  return false;
}

int tsr_mpi_open(tessera_comm_t *c, const void *mpi_comm) {
  (void)mpi_comm;
  return absent(c);
}

void tsr_mpi_close(tessera_comm_t *c) {
  (void)c;
}

bool tsr_mpi_multithreaded(const tessera_comm_t *c) {
  (void)c;
  return false;
}

int tsr_mpi_minmax(tessera_comm_t *c, long value, long *lo, long *hi) {
  *lo = *hi = value;
  return absent(c);
}

int tsr_mpi_share(tessera_comm_t *c, void *data, size_t bytes) {
  (void)data, (void)bytes;
  return absent(c);
}

int tsr_mpi_run(tessera_comm_t *c, tsr_mpi_chan_t *chan, const tsr_coll_t *op) {
  (void)chan, (void)op;
  return absent(c);
}

int tsr_mpi_chan_open(tessera_comm_t *c, tsr_mpi_chan_t **chan) {
  *chan = NULL;
  return absent(c);
}

void tsr_mpi_chan_close(tsr_mpi_chan_t *chan) {
  (void)chan;
}

void tsr_mpi_describe(char *buf, size_t len) {
  snprintf(buf, len, "no MPI (communicators are not available)");
}
