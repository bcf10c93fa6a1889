/* The device transport of a build without NCCL: there are no device endpoints, every buffer is
 * host memory, and asking for device collectives says why they are missing. */
#include <stdio.h>

#include "comm/transport.h"

bool tsr_nccl_built(void) {
  return false;
}

void tsr_nccl_describe(char *buf, size_t len) {
  snprintf(buf, len, "no NCCL");
}

static int absent(tessera_comm_t *c) {
  return tsr_comm_error(c, TESSERA_ERR_UNSUPPORTED,
                        "Device collectives need NCCL, which this build of tessera does not have.");
}

int tsr_nccl_open(tessera_comm_t *c) {
  return absent(c);
}

void tsr_nccl_close(tessera_comm_t *c) {
  (void)c;
}

int tsr_nccl_device_of(const void *ptr) {
  (void)ptr;
  return -1;
}

int tsr_nccl_run(tessera_comm_t *c, const tsr_coll_t *ops, void *const *streams) {
  (void)ops, (void)streams;
  return absent(c);
}

int tsr_nccl_run_one(tessera_comm_t *c, int device, const tsr_coll_t *op, void *stream) {
  (void)device, (void)op, (void)stream;
  return absent(c);
}

int tsr_nccl_p2p_open(tessera_comm_t *c) {
  return absent(c);
}

int tsr_nccl_p2p_post(tessera_comm_t *c, int device, bool receive, void *ptr, size_t rows,
                      size_t cols, size_t ld, size_t elsize, int peer, void *after,
                      tsr_nccl_req_t **req) {
  (void)device, (void)receive, (void)ptr, (void)rows, (void)cols, (void)ld, (void)elsize;
  (void)peer, (void)after, (void)req;
  return absent(c);
}

int tsr_nccl_p2p_test(tessera_comm_t *c, tsr_nccl_req_t *req) {
  (void)req;
  return absent(c);
}
