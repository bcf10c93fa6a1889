/* The host transport: MPI. Every operation is posted as a nonblocking MPI call and polled to
 * completion against the communicator's deadline, so a process that never arrives makes the
 * others fail with TESSERA_ERR_TIMEOUT instead of waiting forever. The communicator works on a
 * duplicate of the user's MPI communicator with MPI_ERRORS_RETURN, and each host queue on a
 * duplicate of its own, so operations of different queues never match each other. */
#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "comm/transport.h"

struct tsr_host_chan {
  MPI_Comm comm;
};

typedef struct {
  tsr_host_chan_t own;
  bool initialised_here; /* tsr_mpi_open started MPI: tsr_mpi_close finalises it */
  int thread_level;
} tsr_mpi_t;

/* The MPI datatype of a valid type. */
static MPI_Datatype mpi_type(tessera_comm_type_t t) {
  switch (t) {
  case TESSERA_COMM_F32:
    return MPI_FLOAT;
  case TESSERA_COMM_F64:
    return MPI_DOUBLE;
  case TESSERA_COMM_C64:
    return MPI_C_FLOAT_COMPLEX;
  case TESSERA_COMM_C128:
    return MPI_C_DOUBLE_COMPLEX;
  case TESSERA_COMM_I32:
    return MPI_INT32_T;
  case TESSERA_COMM_I64:
    return MPI_INT64_T;
  }
  return MPI_DATATYPE_NULL;
}

static MPI_Op mpi_op(tessera_reduce_t op) {
  static const MPI_Op ops[] = {[TESSERA_SUM] = MPI_SUM,
                               [TESSERA_PROD] = MPI_PROD,
                               [TESSERA_MIN] = MPI_MIN,
                               [TESSERA_MAX] = MPI_MAX};
  return ops[op];
}

/* The communicator's own MPI communicator. */
static MPI_Comm own(const tessera_comm_t *c) {
  return ((const tsr_mpi_t *)c->host_state)->own.comm;
}

/* A failed MPI call, with MPI's own words. */
static int mpi_failed(tessera_comm_t *c, int err, const char *what) {
  char text[MPI_MAX_ERROR_STRING] = "";
  int len = 0;
  MPI_Error_string(err, text, &len);
  return tsr_comm_error(c, TESSERA_ERR_BACKEND, "%s failed: %s.", what, text);
}

static int wait_for(tessera_comm_t *c, MPI_Request *req, const char *what);

/* A duplicate of `base` made within the communicator's deadline (MPI_Comm_idup, polled): a
 * process that never takes part makes the others fail with TESSERA_ERR_TIMEOUT. */
static int dup_within(tessera_comm_t *c, MPI_Comm base, MPI_Comm *out, const char *what) {
  MPI_Request req;
  int err = MPI_Comm_idup(base, out, &req);
  if (err != MPI_SUCCESS) return mpi_failed(c, err, what);
  int rc = wait_for(c, &req, what);
  if (rc) return rc;
  err = MPI_Comm_set_errhandler(*out, MPI_ERRORS_RETURN);
  return err == MPI_SUCCESS ? 0 : mpi_failed(c, err, what);
}

static int mpi_open(tessera_comm_t *c, const tessera_comm_config_t *cfg) {
  const void *mpi_comm = cfg->mpi_comm;
  tsr_mpi_t *m = calloc(1, sizeof *m);
  if (!m) return tsr_comm_error(c, TESSERA_ERR_NOMEM, "Out of memory for the communicator.");
  int inited = 0, finalized = 0;
  MPI_Initialized(&inited);
  MPI_Finalized(&finalized);
  if (finalized) {
    free(m);
    return tsr_comm_error(c, TESSERA_ERR_STATE,
                          "MPI has been finalised in this process and cannot be started again.");
  }
  if (!inited) {
    int err = MPI_Init_thread(NULL, NULL, MPI_THREAD_MULTIPLE, &m->thread_level);
    if (err != MPI_SUCCESS) {
      free(m);
      return mpi_failed(c, err, "MPI_Init_thread");
    }
    m->initialised_here = true;
  } else {
    MPI_Query_thread(&m->thread_level);
  }
  MPI_Comm base = mpi_comm ? *(const MPI_Comm *)mpi_comm : MPI_COMM_WORLD;
  int rc = dup_within(c, base, &m->own.comm, "Duplicating the MPI communicator");
  if (!rc && (MPI_Comm_rank(m->own.comm, &c->rank) != MPI_SUCCESS ||
              MPI_Comm_size(m->own.comm, &c->size) != MPI_SUCCESS))
    rc = tsr_comm_error(c, TESSERA_ERR_BACKEND, "MPI gave no rank or size.");
  if (rc) {
    /* after a timeout a peer may still join the duplicate: finalising could wait for it */
    if (m->initialised_here && rc != TESSERA_ERR_TIMEOUT) MPI_Finalize();
    free(m);
    return rc;
  }
  c->host_state = m;
  return 0;
}

static void mpi_close(tessera_comm_t *c) {
  tsr_mpi_t *m = c->host_state;
  if (!m) return;
  const bool broken = atomic_load(&c->broken);
  /* A broken communicator may have operations that never completed: freeing it (or finalising
   * MPI) could wait for a process that is gone. */
  if (!broken) {
    MPI_Comm_free(&m->own.comm);
    if (m->initialised_here) MPI_Finalize();
  }
  free(m);
  c->host_state = NULL;
}

static bool mpi_multithreaded(const tessera_comm_t *c) {
  const tsr_mpi_t *m = c->host_state;
  return m && m->thread_level >= MPI_THREAD_MULTIPLE;
}

/* One MPI request and its communicator, polled by tsr_comm_wait. */
typedef struct {
  tessera_comm_t *c;
  MPI_Request *req;
  const char *what;
} pending_t;

static int test_request(void *arg) {
  pending_t *p = arg;
  int done = 0;
  int err = MPI_Test(p->req, &done, MPI_STATUS_IGNORE);
  return err != MPI_SUCCESS ? mpi_failed(p->c, err, p->what) : done;
}

static int wait_for(tessera_comm_t *c, MPI_Request *req, const char *what) {
  pending_t p = {c, req, what};
  return tsr_comm_wait(c, test_request, &p, what);
}

static int mpi_minmax(tessera_comm_t *c, long value, long *lo, long *hi) {
  long v[2] = {value, -value}, r[2];
  MPI_Request req;
  int err = MPI_Iallreduce(v, r, 2, MPI_LONG, MPI_MIN, own(c), &req);
  if (err != MPI_SUCCESS) return mpi_failed(c, err, "Comparing arguments across processes");
  err = wait_for(c, &req, "Comparing arguments across processes");
  *lo = r[0], *hi = -r[1];
  return err;
}

static int mpi_share(tessera_comm_t *c, void *data, size_t bytes) {
  MPI_Request req;
  int err = MPI_Ibcast(data, (int)bytes, MPI_BYTE, 0, own(c), &req);
  if (err != MPI_SUCCESS) return mpi_failed(c, err, "Broadcasting from process 0");
  return wait_for(c, &req, "Broadcasting from process 0");
}

static int mpi_gather_all(tessera_comm_t *c, const void *mine, void *all, size_t bytes) {
  MPI_Request req;
  int err = MPI_Iallgather(mine, (int)bytes, MPI_BYTE, all, (int)bytes, MPI_BYTE, own(c), &req);
  if (err != MPI_SUCCESS) return mpi_failed(c, err, "Gathering from every process");
  return wait_for(c, &req, "Gathering from every process");
}

static int mpi_run(tessera_comm_t *c, tsr_host_chan_t *chan, const tsr_coll_t *op) {
  MPI_Comm comm = chan ? chan->comm : own(c);
  const MPI_Datatype t = mpi_type(op->type);
  const int n = (int)op->count;
  const void *in = op->send == op->buf ? MPI_IN_PLACE : op->send;
  MPI_Request req = MPI_REQUEST_NULL;
  int err = MPI_SUCCESS;
  switch (op->kind) {
  case TSR_COLL_BROADCAST:
    err = MPI_Ibcast(op->buf, n, t, op->rank, comm, &req);
    break;
  case TSR_COLL_ALLREDUCE:
    err = MPI_Iallreduce(in, op->buf, n, t, mpi_op(op->op), comm, &req);
    break;
  case TSR_COLL_REDUCE:
    /* MPI_IN_PLACE is the root's alone */
    err = MPI_Ireduce(c->rank == op->rank ? in : op->send, op->buf, n, t, mpi_op(op->op), op->rank,
                      comm, &req);
    break;
  case TSR_COLL_ALLGATHER:
    err = MPI_Iallgather(op->send, n, t, op->buf, n, t, comm, &req);
    break;
  case TSR_COLL_REDUCE_SCATTER:
    err = MPI_Ireduce_scatter_block(op->send, op->buf, n, t, mpi_op(op->op), comm, &req);
    break;
  case TSR_COLL_SEND:
    err = MPI_Isend(op->send, n, t, op->rank, 0, comm, &req);
    break;
  case TSR_COLL_RECV:
    err = MPI_Irecv(op->buf, n, t, op->rank, 0, comm, &req);
    break;
  case TSR_COLL_BARRIER:
    err = MPI_Ibarrier(comm, &req);
    break;
  }
  if (err != MPI_SUCCESS) return tsr_comm_break(c, mpi_failed(c, err, tsr_coll_name(op->kind)));
  return wait_for(c, &req, tsr_coll_name(op->kind));
}

static int mpi_chan_open(tessera_comm_t *c, tsr_host_chan_t **chan) {
  tsr_host_chan_t *ch = calloc(1, sizeof *ch);
  if (!ch) return tsr_comm_error(c, TESSERA_ERR_NOMEM, "Out of memory for a queue.");
  int rc = dup_within(c, own(c), &ch->comm, "Duplicating the MPI communicator for a queue");
  if (rc) {
    free(ch);
    return rc;
  }
  *chan = ch;
  return 0;
}

static void mpi_chan_close(tessera_comm_t *c, tsr_host_chan_t *chan) {
  (void)c;
  MPI_Comm_free(&chan->comm);
  free(chan);
}

static void mpi_describe(char *buf, size_t len) {
  char version[MPI_MAX_LIBRARY_VERSION_STRING] = "";
  int n = 0, major = 0, minor = 0;
  MPI_Get_library_version(version, &n);
  MPI_Get_version(&major, &minor);
  /* the library's line up to its first comma or newline */
  for (int i = 0; version[i]; i++)
    if (version[i] == ',' || version[i] == '\n') {
      version[i] = '\0';
      break;
    }
  snprintf(buf, len, "MPI %d.%d (%s)", major, minor, version);
}

struct tsr_host_req {
  MPI_Request req;
  MPI_Datatype type; /* a strided block's type, or MPI_DATATYPE_NULL */
};

static int mpi_post(tessera_comm_t *c, tsr_host_chan_t *chan, bool receive, void *ptr, size_t rows,
                    size_t cols, size_t ld, size_t elsize, int peer, int tag,
                    tsr_host_req_t **out) {
  tsr_host_req_t *r = malloc(sizeof *r);
  if (!r) return tsr_comm_error(c, TESSERA_ERR_NOMEM, "Out of memory for a transfer.");
  r->type = MPI_DATATYPE_NULL;
  const size_t bytes = rows * cols * elsize;
  int err = MPI_SUCCESS, count = (int)bytes;
  MPI_Datatype t = MPI_BYTE;
  if (ld != rows && cols > 1) { /* a strided block: one vector type for it */
    err = MPI_Type_vector((int)cols, (int)(rows * elsize), (int)(ld * elsize), MPI_BYTE, &r->type);
    if (err == MPI_SUCCESS) err = MPI_Type_commit(&r->type);
    t = r->type, count = 1;
  } else if (bytes > INT_MAX) { /* beyond an int's count of bytes: a count of columns */
    err = MPI_Type_contiguous((int)(rows * elsize), MPI_BYTE, &r->type);
    if (err == MPI_SUCCESS) err = MPI_Type_commit(&r->type);
    t = r->type, count = (int)cols;
  }
  if (err == MPI_SUCCESS)
    err = receive ? MPI_Irecv(ptr, count, t, peer, tag, chan->comm, &r->req)
                  : MPI_Isend(ptr, count, t, peer, tag, chan->comm, &r->req);
  if (err != MPI_SUCCESS) {
    if (r->type != MPI_DATATYPE_NULL) MPI_Type_free(&r->type);
    free(r);
    return tsr_comm_break(
        c, mpi_failed(c, err, receive ? "Posting a tile's receive" : "Posting a tile's send"));
  }
  *out = r;
  return 0;
}

static int mpi_test(tessera_comm_t *c, tsr_host_req_t *r) {
  int done = 0;
  int err = MPI_Test(&r->req, &done, MPI_STATUS_IGNORE);
  if (err == MPI_SUCCESS && !done) return 0;
  if (r->type != MPI_DATATYPE_NULL) MPI_Type_free(&r->type);
  free(r);
  return err == MPI_SUCCESS ? 1 : tsr_comm_break(c, mpi_failed(c, err, "A tile's transfer"));
}

static int mpi_cancel(tessera_comm_t *c, tsr_host_req_t *r, double wait_s) {
  (void)c;
  if (MPI_Cancel(&r->req) != MPI_SUCCESS) return -1;
  const double until = MPI_Wtime() + wait_s; /* an error path: polled without sleeping */
  int done = 0;
  while (MPI_Test(&r->req, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS && !done &&
         MPI_Wtime() < until) {
  }
  if (!done) return -1;
  if (r->type != MPI_DATATYPE_NULL) MPI_Type_free(&r->type);
  free(r);
  return 0;
}

static int mpi_tag_limit(const tessera_comm_t *c) {
  int *ub = NULL, flag = 0;
  MPI_Comm_get_attr(own(c), MPI_TAG_UB, &ub, &flag);
  return flag && ub ? *ub : 32767;
}

const tsr_host_ops_t *tsr_mpi_host(void) {
  static const tsr_host_ops_t ops = {
      .name = "MPI",
      .open = mpi_open,
      .close = mpi_close,
      .multithreaded = mpi_multithreaded,
      .minmax = mpi_minmax,
      .share = mpi_share,
      .gather_all = mpi_gather_all,
      .run = mpi_run,
      .chan_open = mpi_chan_open,
      .chan_close = mpi_chan_close,
      .post = mpi_post,
      .test = mpi_test,
      .cancel = mpi_cancel,
      .tag_limit = mpi_tag_limit,
      .describe = mpi_describe,
  };
  return &ops;
}
