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

int tsr_mpi_gather_all(tessera_comm_t *c, const void *mine, void *all, size_t bytes) {
  (void)mine, (void)all, (void)bytes;
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

int tsr_mpi_post(tessera_comm_t *c, tsr_mpi_chan_t *chan, bool receive, void *ptr, size_t rows,
                 size_t cols, size_t ld, size_t elsize, int peer, int tag, tsr_mpi_req_t **req) {
  (void)chan, (void)receive, (void)ptr, (void)rows, (void)cols, (void)ld, (void)elsize;
  (void)peer, (void)tag;
  *req = NULL;
  return absent(c);
}

int tsr_mpi_test(tessera_comm_t *c, tsr_mpi_req_t *req) {
  (void)req;
  return absent(c);
}

int tsr_mpi_cancel(tsr_mpi_req_t *req, double wait_s) {
  (void)req, (void)wait_s;
  return -1;
}

int tsr_mpi_tag_limit(const tessera_comm_t *c) {
  (void)c;
  return 0;
}
