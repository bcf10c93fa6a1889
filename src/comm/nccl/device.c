/* The device transport: NCCL. One NCCL communicator spans every endpoint (one per GPU each
 * process drives: endpoint p * ndevices + i), made from a unique id that rank 0 broadcasts over
 * MPI. Operations of several local GPUs are one NCCL group. Calls without a queue run on a
 * stream of the communicator per GPU and are polled to completion against the deadline; a
 * timeout aborts the NCCL communicators (so no kernel waits forever) and breaks the
 * communicator. The scratch a barrier reduces is allocated once, when the communicator is made,
 * never next to a running collective.
 *
 * Distributed flows move tiles on a channel of their own (tsr_nccl_p2p_*): per local GPU a
 * communicator split from the first, so that its sends and receives never interleave with the
 * collectives the program calls, and a stream, so that a transfer waiting for its peer blocks
 * no compute queue. Its pairs of endpoints are connected when it opens.
 *
 * libtessera does not link NCCL: its functions are declared weak below and NCCL is loaded when
 * a communicator over GPUs first opens (device/library.h), so that a process that never makes
 * one starts without it. */
#include <cuda_runtime.h>
#include <nccl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm/transport.h"
#include "device/library.h"

/* The NCCL functions this file calls (a function missing here is a strong reference, which the
 * programs linking libtessera then fail to link against). */
// clang-format off
#define TSR_NCCL_FUNCTIONS(X) \
  X(ncclAllGather) X(ncclAllReduce) X(ncclBroadcast) X(ncclCommAbort) X(ncclCommDestroy) \
  X(ncclCommGetAsyncError) X(ncclCommInitRank) X(ncclCommSplit) X(ncclGetErrorString) \
  X(ncclGetUniqueId) X(ncclGetVersion) X(ncclGroupEnd) X(ncclGroupStart) X(ncclRecv) \
  X(ncclReduce) X(ncclReduceScatter) X(ncclSend)
// clang-format on
TSR_NCCL_FUNCTIONS(TSR_WEAK)

/* NCCL loaded for good; 0, or TESSERA_ERR_BACKEND with the loader's reason in why. */
static int load(char *why, size_t len) {
  return tsr_library_load(TSR_NCCL_PATH, TSR_NCCL_SONAME, why, len);
}

struct tsr_nccl {
  ncclComm_t comm[TSR_COMM_MAX_DEVICES];
  cudaStream_t stream[TSR_COMM_MAX_DEVICES]; /* for calls without a queue */
  int *scratch[TSR_COMM_MAX_DEVICES];        /* one int: what a barrier reduces */
  /* the tile channel (tsr_nccl_p2p_open) */
  bool p2p;
  ncclComm_t pcomm[TSR_COMM_MAX_DEVICES];
  cudaStream_t pstream[TSR_COMM_MAX_DEVICES];
};

struct tsr_nccl_req {
  cudaEvent_t done;
  int device;
};

bool tsr_nccl_built(void) {
  return true;
}

void tsr_nccl_describe(char *buf, size_t len) {
  char why[160];
  int v = 0;
  if (load(why, sizeof why)) {
    snprintf(buf, len, "NCCL not loadable (%s)", why);
    return;
  }
  ncclGetVersion(&v);
  snprintf(buf, len, "NCCL %d.%d.%d", v / 10000, v / 100 % 100, v % 100);
}

static int nccl_failed(tessera_comm_t *c, ncclResult_t r, const char *what) {
  return tsr_comm_error(c, TESSERA_ERR_BACKEND, "%s failed: %s.", what, ncclGetErrorString(r));
}

static int cuda_failed(tessera_comm_t *c, cudaError_t e, const char *what) {
  (void)cudaGetLastError();
  return tsr_comm_error(c, TESSERA_ERR_BACKEND, "%s failed: %s.", what, cudaGetErrorString(e));
}

int tsr_nccl_device_of(const void *ptr) {
  struct cudaPointerAttributes a;
  if (cudaPointerGetAttributes(&a, ptr) != cudaSuccess) {
    (void)cudaGetLastError();
    return -1;
  }
  return a.type == cudaMemoryTypeDevice || a.type == cudaMemoryTypeManaged ? a.device : -1;
}

void tsr_nccl_close(tessera_comm_t *c) {
  tsr_nccl_t *n = c->nccl;
  if (!n) return;
  const bool broken = atomic_load(&c->broken);
  for (int i = 0; i < c->ndevices; i++) {
    if (n->comm[i]) broken ? ncclCommAbort(n->comm[i]) : ncclCommDestroy(n->comm[i]);
    if (n->pcomm[i]) broken ? ncclCommAbort(n->pcomm[i]) : ncclCommDestroy(n->pcomm[i]);
    cudaSetDevice(c->devices[i]);
    if (n->pstream[i]) cudaStreamDestroy(n->pstream[i]);
    if (n->stream[i]) cudaStreamDestroy(n->stream[i]);
    if (n->scratch[i]) cudaFree(n->scratch[i]);
  }
  free(n);
  c->nccl = NULL;
}

/* Every endpoint's GPU differs from every other's (NCCL runs one rank per GPU): the UUIDs of all
 * of them gathered on every process, so that every process finds the same clash. */
static int distinct_gpus(tessera_comm_t *c) {
  enum { U = sizeof(cudaUUID_t) };
  const int n = c->ndevices, total = c->size * n;
  unsigned char *all = calloc((size_t)total + (size_t)n, U), *mine = all + (size_t)total * U;
  if (!all) return tsr_comm_error(c, TESSERA_ERR_NOMEM, "Out of memory for the GPUs' identities.");
  for (int i = 0; i < n; i++) {
    struct cudaDeviceProp p;
    if (cudaGetDeviceProperties(&p, c->devices[i]) == cudaSuccess) memcpy(mine + i * U, &p.uuid, U);
  }
  int rc = tsr_host_gather_all(c, mine, all, (size_t)n * U);
  for (int a = 0; a < total && !rc; a++)
    for (int b = a + 1; b < total && !rc; b++)
      if (memcmp(all + (size_t)a * U, all + (size_t)b * U, U) == 0)
        rc = tsr_comm_error(c, -1,
                            "Process %d (its GPU %d) and process %d (its GPU %d) drive the same "
                            "GPU: NCCL needs one endpoint per GPU, so give each process GPUs of "
                            "its own (CUDA_VISIBLE_DEVICES per process, or fewer GPUs each).",
                            a / n, c->devices[a % n], b / n, c->devices[b % n]);
  free(all);
  return rc;
}

int tsr_nccl_open(tessera_comm_t *c) {
  char why[256];
  if (load(why, sizeof why))
    return tsr_comm_error(c, TESSERA_ERR_BACKEND, "NCCL, which GPU buffers need, did not load: %s.",
                          why);
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();
    count = 0;
  }
  for (int i = 0; i < c->ndevices; i++)
    if (c->devices[i] < 0 || c->devices[i] >= count)
      return tsr_comm_error(c, -1, "CUDA device %d does not exist (this process sees %d).",
                            c->devices[i], count);
  int rc = distinct_gpus(c);
  if (rc) return rc;
  tsr_nccl_t *n = calloc(1, sizeof *n);
  if (!n) return tsr_comm_error(c, TESSERA_ERR_NOMEM, "Out of memory for the communicator.");
  c->nccl = n;
  ncclUniqueId id;
  ncclResult_t r = c->rank == 0 ? ncclGetUniqueId(&id) : ncclSuccess;
  if (r != ncclSuccess) {
    tsr_nccl_close(c);
    return nccl_failed(c, r, "ncclGetUniqueId");
  }
  rc = tsr_host_share(c, &id, sizeof id);
  for (int i = 0; rc == 0 && i < c->ndevices; i++) {
    cudaError_t e = cudaSetDevice(c->devices[i]);
    if (e == cudaSuccess) e = cudaStreamCreateWithFlags(&n->stream[i], cudaStreamNonBlocking);
    if (e == cudaSuccess) e = cudaMalloc((void **)&n->scratch[i], sizeof(int));
    if (e != cudaSuccess) rc = cuda_failed(c, e, "Preparing a GPU for NCCL");
  }
  if (rc == 0) {
    ncclGroupStart();
    for (int i = 0; i < c->ndevices; i++) {
      cudaSetDevice(c->devices[i]);
      r = ncclCommInitRank(&n->comm[i], c->size * c->ndevices, id, c->rank * c->ndevices + i);
      if (r != ncclSuccess) break;
    }
    ncclResult_t g = ncclGroupEnd();
    if (r == ncclSuccess) r = g;
    if (r != ncclSuccess) rc = nccl_failed(c, r, "Making the NCCL communicator");
  }
  if (rc) tsr_nccl_close(c);
  return rc;
}

/* The NCCL type and element count of `count` elements of `t`: complex types are pairs of reals. */
static ncclDataType_t nccl_type(tessera_comm_type_t t, size_t count, size_t *n) {
  static const ncclDataType_t type[] = {ncclFloat32, ncclFloat64, ncclFloat32,
                                        ncclFloat64, ncclInt32,   ncclInt64};
  *n = t == TESSERA_COMM_C64 || t == TESSERA_COMM_C128 ? 2 * count : count;
  return type[t];
}

static ncclRedOp_t nccl_op(tessera_reduce_t op) {
  static const ncclRedOp_t ops[] = {[TESSERA_SUM] = ncclSum,
                                    [TESSERA_PROD] = ncclProd,
                                    [TESSERA_MIN] = ncclMin,
                                    [TESSERA_MAX] = ncclMax};
  return ops[op];
}

/* Enqueues one operation of local GPU i on `s`. */
static ncclResult_t enqueue(tsr_nccl_t *n, int i, const tsr_coll_t *op, cudaStream_t s) {
  size_t cnt = 0;
  const ncclDataType_t t = nccl_type(op->type, op->count, &cnt);
  ncclComm_t comm = n->comm[i];
  switch (op->kind) {
  case TSR_COLL_BROADCAST:
    return ncclBroadcast(op->buf, op->buf, cnt, t, op->rank, comm, s);
  case TSR_COLL_ALLREDUCE:
    return ncclAllReduce(op->send, op->buf, cnt, t, nccl_op(op->op), comm, s);
  case TSR_COLL_REDUCE:
    return ncclReduce(op->send, op->buf, cnt, t, nccl_op(op->op), op->rank, comm, s);
  case TSR_COLL_ALLGATHER:
    return ncclAllGather(op->send, op->buf, cnt, t, comm, s);
  case TSR_COLL_REDUCE_SCATTER:
    return ncclReduceScatter(op->send, op->buf, cnt, t, nccl_op(op->op), comm, s);
  case TSR_COLL_SEND:
    return ncclSend(op->send, cnt, t, op->rank, comm, s);
  case TSR_COLL_RECV:
    return ncclRecv(op->buf, cnt, t, op->rank, comm, s);
  case TSR_COLL_BARRIER:
    return ncclAllReduce(n->scratch[i], n->scratch[i], 1, ncclInt32, ncclSum, comm, s);
  }
  return ncclInvalidArgument;
}

/* The streams of the GPUs in `which` (a mask), polled by tsr_comm_wait. */
typedef struct {
  tessera_comm_t *c;
  cudaStream_t *streams;
  unsigned which;
} pending_t;

/* 1 when every stream has passed its work, 0 while one has not (watching NCCL's asynchronous
 * errors meanwhile), or a failure. */
static int query_streams(void *arg) {
  pending_t *p = arg;
  tessera_comm_t *c = p->c;
  int done = 1;
  for (int i = 0; i < c->ndevices; i++) {
    if (!(p->which >> i & 1)) continue;
    cudaError_t e = cudaStreamQuery(p->streams[i]);
    if (e == cudaErrorNotReady) {
      done = 0;
      ncclResult_t async = ncclSuccess;
      ncclCommGetAsyncError(c->nccl->comm[i], &async);
      if (async != ncclSuccess && async != ncclInProgress)
        return nccl_failed(c, async, "A device operation");
    } else if (e != cudaSuccess) {
      return cuda_failed(c, e, "A device operation");
    }
  }
  return done;
}

/* Waits for the streams within the deadline; a timeout aborts the NCCL communicators, so no
 * kernel of theirs waits forever for an endpoint that is gone. */
static int wait_streams(tessera_comm_t *c, cudaStream_t *streams, unsigned which) {
  pending_t p = {c, streams, which};
  int rc = tsr_comm_wait(c, query_streams, &p, "A device operation");
  if (rc == TESSERA_ERR_TIMEOUT)
    for (int i = 0; i < c->ndevices; i++) ncclCommAbort(c->nccl->comm[i]), c->nccl->comm[i] = NULL;
  return rc;
}

/* Runs ops[i] on the GPUs in `which`, on streams[i] or the communicator's streams. */
static int run_on(tessera_comm_t *c, const tsr_coll_t *ops, void *const *given, unsigned which) {
  tsr_nccl_t *n = c->nccl;
  if (atomic_load(&c->broken))
    return tsr_comm_error(c, TESSERA_ERR_STATE,
                          "The communicator is broken by an earlier "
                          "failure or timeout.");
  for (int i = 0; i < c->ndevices; i++)
    if (which >> i & 1 && ops[i].op == TESSERA_PROD &&
        (ops[i].kind == TSR_COLL_ALLREDUCE || ops[i].kind == TSR_COLL_REDUCE ||
         ops[i].kind == TSR_COLL_REDUCE_SCATTER) &&
        (ops[i].type == TESSERA_COMM_C64 || ops[i].type == TESSERA_COMM_C128))
      return tsr_comm_error(c, TESSERA_ERR_UNSUPPORTED,
                            "NCCL has no complex types: PROD of complex device buffers is not "
                            "offered.");
  cudaStream_t streams[TSR_COMM_MAX_DEVICES];
  ncclResult_t r = ncclGroupStart();
  for (int i = 0; r == ncclSuccess && i < c->ndevices; i++) {
    if (!(which >> i & 1)) continue;
    streams[i] = given ? (cudaStream_t)given[i] : n->stream[i];
    if (ops[i].count > 0 || ops[i].kind == TSR_COLL_BARRIER) r = enqueue(n, i, &ops[i], streams[i]);
  }
  ncclResult_t g = ncclGroupEnd();
  if (r == ncclSuccess) r = g;
  if (r != ncclSuccess) return tsr_comm_break(c, nccl_failed(c, r, "Enqueuing a device operation"));
  return given ? 0 : wait_streams(c, streams, which);
}

int tsr_nccl_run(tessera_comm_t *c, const tsr_coll_t *ops, void *const *streams) {
  return run_on(c, ops, streams, (1u << c->ndevices) - 1);
}

int tsr_nccl_run_one(tessera_comm_t *c, int device, const tsr_coll_t *op, void *stream) {
  if (!op) { /* a device queue's sync: its stream within the deadline */
    cudaStream_t streams[TSR_COMM_MAX_DEVICES] = {0};
    streams[device] = stream;
    return wait_streams(c, streams, 1u << device);
  }
  tsr_coll_t ops[TSR_COMM_MAX_DEVICES];
  void *given[TSR_COMM_MAX_DEVICES] = {0};
  ops[device] = *op;
  given[device] = stream;
  return run_on(c, ops, stream ? given : NULL, 1u << device);
}

/* ---------------------------------------------------------------------------- tile channel */

int tsr_nccl_p2p_open(tessera_comm_t *c) {
  tsr_nccl_t *n = c->nccl;
  if (!n) return tsr_comm_error(c, TESSERA_ERR_UNSUPPORTED, "The communicator has no GPUs.");
  if (n->p2p) return 0;
  const int nd = c->ndevices, total = c->size * nd;
  int rc = 0;
  for (int i = 0; i < nd && !rc; i++) {
    cudaError_t e = cudaSetDevice(c->devices[i]);
    if (e == cudaSuccess) e = cudaStreamCreateWithFlags(&n->pstream[i], cudaStreamNonBlocking);
    if (e != cudaSuccess) rc = cuda_failed(c, e, "Preparing a GPU's tile channel");
  }
  ncclResult_t r = ncclSuccess;
  if (!rc) { /* one collective split over every endpoint, each keeping its rank */
    ncclGroupStart();
    for (int i = 0; i < nd && r == ncclSuccess; i++)
      r = ncclCommSplit(n->comm[i], 0, c->rank * nd + i, &n->pcomm[i], NULL);
    ncclResult_t g = ncclGroupEnd();
    if (r == ncclSuccess) r = g;
    if (r != ncclSuccess) rc = tsr_comm_break(c, nccl_failed(c, r, "Making the tile channel"));
  }
  if (!rc) { /* a byte both ways between every pair of endpoints: the connections are made
              * (in the scratch made with the communicator: nothing is allocated next to NCCL's
              * kernels; what the received bytes hold does not matter) */
    ncclGroupStart();
    for (int i = 0; i < nd && r == ncclSuccess; i++)
      for (int e = 0; e < total && r == ncclSuccess; e++) {
        if (e == c->rank * nd + i) continue;
        char *byte = (char *)n->scratch[i];
        r = ncclSend(byte, 1, ncclUint8, e, n->pcomm[i], n->pstream[i]);
        if (r == ncclSuccess) r = ncclRecv(byte + 1, 1, ncclUint8, e, n->pcomm[i], n->pstream[i]);
      }
    ncclResult_t g = ncclGroupEnd();
    if (r == ncclSuccess) r = g;
    if (r != ncclSuccess) rc = tsr_comm_break(c, nccl_failed(c, r, "Connecting the tile channel"));
  }
  if (!rc) rc = wait_streams(c, n->pstream, (1u << nd) - 1);
  n->p2p = rc == 0;
  return rc;
}

/* Frees a tile transfer's request and returns `status`. */
static int req_free(tsr_nccl_req_t *q, int status) {
  if (q->done) cudaEventDestroy(q->done);
  free(q);
  return status;
}

int tsr_nccl_p2p_post(tessera_comm_t *c, int device, bool receive, void *ptr, size_t rows,
                      size_t cols, size_t ld, size_t elsize, int peer, void *after,
                      tsr_nccl_req_t **req) {
  tsr_nccl_t *n = c->nccl;
  if (atomic_load(&c->broken))
    return tsr_comm_error(c, TESSERA_ERR_STATE,
                          "The communicator is broken by an earlier failure or timeout.");
  tsr_nccl_req_t *q = calloc(1, sizeof *q);
  if (!q) return tsr_comm_error(c, TESSERA_ERR_NOMEM, "Out of memory for a tile transfer.");
  q->device = device;
  cudaEvent_t ready = NULL;
  cudaError_t e = cudaEventCreateWithFlags(&ready, cudaEventDisableTiming);
  if (e == cudaSuccess) e = cudaEventCreateWithFlags(&q->done, cudaEventDisableTiming);
  if (e == cudaSuccess) e = cudaEventRecord(ready, (cudaStream_t)after);
  if (e == cudaSuccess) e = cudaStreamWaitEvent(n->pstream[device], ready, 0);
  if (ready) cudaEventDestroy(ready); /* released once the wait has passed it */
  if (e != cudaSuccess) return req_free(q, cuda_failed(c, e, "Ordering a tile transfer"));
  /* NCCL moves contiguous bytes: a strided block (a tile of an array registered in place)
   * travels through a packed copy from the stream-ordered pool, made, read and freed in order
   * on the channel's stream */
  cudaStream_t st = n->pstream[device];
  const size_t bytes = rows * cols * elsize, pitch = ld * elsize, width = rows * elsize;
  void *buf = ptr;
  if (cols > 1 && ld != rows) {
    e = cudaMallocAsync(&buf, bytes, st);
    if (e == cudaSuccess && !receive)
      e = cudaMemcpy2DAsync(buf, width, ptr, pitch, width, cols, cudaMemcpyDeviceToDevice, st);
    if (e != cudaSuccess)
      return req_free(q, tsr_comm_break(c, cuda_failed(c, e, "Packing a tile for a transfer")));
  }
  ncclResult_t r = receive ? ncclRecv(buf, bytes, ncclUint8, peer, n->pcomm[device], st)
                           : ncclSend(buf, bytes, ncclUint8, peer, n->pcomm[device], st);
  if (r != ncclSuccess)
    return req_free(
        q, tsr_comm_break(
               c, nccl_failed(c, r, receive ? "ncclRecv of a tile" : "ncclSend of a tile")));
  if (buf != ptr) {
    e = receive
            ? cudaMemcpy2DAsync(ptr, pitch, buf, width, width, cols, cudaMemcpyDeviceToDevice, st)
            : cudaSuccess;
    const cudaError_t f = cudaFreeAsync(buf, st);
    if (e == cudaSuccess) e = f;
    if (e != cudaSuccess)
      return req_free(q, tsr_comm_break(c, cuda_failed(c, e, "Unpacking a transferred tile")));
  }
  e = cudaEventRecord(q->done, st);
  if (e != cudaSuccess)
    return req_free(q, tsr_comm_break(c, cuda_failed(c, e, "Marking a tile transfer")));
  *req = q;
  return 0;
}

int tsr_nccl_p2p_test(tessera_comm_t *c, tsr_nccl_req_t *req) {
  cudaError_t e = cudaEventQuery(req->done);
  if (e == cudaSuccess) return req_free(req, 1);
  if (e != cudaErrorNotReady)
    return req_free(req, tsr_comm_break(c, cuda_failed(c, e, "A tile transfer")));
  ncclResult_t async = ncclSuccess;
  ncclCommGetAsyncError(c->nccl->pcomm[req->device], &async);
  if (async == ncclSuccess || async == ncclInProgress) return 0;
  return req_free(req, tsr_comm_break(c, nccl_failed(c, async, "A tile transfer")));
}
