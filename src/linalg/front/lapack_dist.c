/* LAPACK-style calls on a context over processes (tessera_config_t.distributed): the arrays live
 * on process 0 (the root). A call compares its arguments across the processes, deals the part of
 * each array the routine reads (a triangle, or all of it) over the grid as a distributed matrix,
 * runs the tile-level routine distributed, and brings back the part it writes.
 *
 * The moves are tasks of the flow, so the runtime carries them: the root's array is a matrix
 * owned by the root (its tiles the array's blocks in place there), and the call copies its
 * tiles into the distributed matrix's (tile copies inserted before the routine's tasks: each
 * tile travels from the root to its owner over the flow's transfers, GPU to GPU over NCCL where
 * the context's devices allow, and the routine starts on the tiles as they arrive), then the
 * written tiles back. The distributed matrix's tiles have no home memory: they live where their
 * copy is made (a GPU of their owner, typically) and go when the call ends. */
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>

#include "distributed/dist.h"
#include "linalg/front/front.h"
#include "linalg/loops/loops.h"

enum { ROOT = 0 };

int tsr_lapack_agree(tessera_context_t *ctx, const char *f, int k, const int64_t *values,
                     const int *argno, int rc, int64_t *tile) {
  tessera_comm_t *c = tessera_context_comm(ctx);
  if (!c) return rc;
  enum { MAXK = 8 };
  char names[MAXK][16];
  const char *np[MAXK];
  if (k > MAXK) return tsr_error(ctx, TESSERA_ERR_STATE, "%s: too many arguments to compare", f);
  for (int i = 0; i < k; i++) {
    snprintf(names[i], sizeof names[i], "argument %d", argno[i]);
    np[i] = names[i];
  }
  const int s = tsr_dist_same_on(ctx, c, f, k, values, argno, np, rc);
  /* one tile size on every process: the smallest any would choose */
  return s ? s : tsr_dist_min(ctx, c, f, tile);
}

int tsr_root_broadcast(tessera_context_t *ctx, tessera_comm_t *c, void *buf, size_t bytes) {
  if (!c || !bytes) return 0;
  const int rc = tsr_dist_broadcast(c, buf, bytes, ROOT);
  return rc ? tsr_error(ctx, rc, "%s", tessera_comm_last_error(c)) : 0;
}

/* A process's work on a thread of its own, `done` set when it has returned. */
typedef struct {
  int (*run)(void *);
  void *arg;
  int rc;
  atomic_int done;
} work_t;

static void *work_thread(void *p) {
  work_t *w = p;
  w->rc = w->run(w->arg);
  atomic_store(&w->done, 1);
  return NULL;
}

/* How long a working process sleeps between two of the processes' exchanges. */
static const struct timespec BEAT = {.tv_nsec = 5000000};

/* run(arg) on this process where `mine` (on a thread of its own), every process of c joining a
 * one-element all-reduce every few milliseconds until every such run has returned (its status
 * in *own). 0, or the exchange's failure with its message on ctx. */
static int beat_while(tessera_context_t *ctx, tessera_comm_t *c, const char *f, bool mine,
                      int (*run)(void *), void *arg, int *own) {
  work_t w = {.run = run, .arg = arg};
  atomic_init(&w.done, mine ? 0 : 1);
  pthread_t thread;
  const bool threaded = mine && pthread_create(&thread, NULL, work_thread, &w) == 0;
  if (mine && !threaded) work_thread(&w); /* the others wait as long as the timeout lets */
  int rc = 0;
  for (int64_t all = 0; !all && !rc;) {
    const int64_t done = atomic_load(&w.done);
    rc = tessera_comm_allreduce(c, &done, &all, 1, TESSERA_COMM_I64, TESSERA_MIN, NULL);
    if (!rc && !all && !done) nanosleep(&BEAT, NULL);
  }
  if (threaded) pthread_join(thread, NULL); /* the message after it: the work writes one */
  *own = w.rc;
  return rc ? tsr_error(ctx, rc, "%s: %s", f, tessera_comm_last_error(c)) : 0;
}

int tsr_root_run(tessera_context_t *ctx, tessera_comm_t *c, const char *f, int (*run)(void *),
                 void *arg) {
  if (!c) return run(arg);
  const bool root = tessera_comm_rank(c) == ROOT;
  int own = 0, rc = beat_while(ctx, c, f, root, run, arg, &own);
  if (rc) return rc;
  int32_t s = root ? own : 0;
  rc = tessera_comm_broadcast(c, &s, 1, TESSERA_COMM_I32, ROOT, NULL);
  if (rc) return tsr_error(ctx, rc, "%s: %s", f, tessera_comm_last_error(c));
  if (s == 0) return 0;
  /* the root's message on every process */
  char msg[256] = {0};
  if (root) snprintf(msg, sizeof msg, "%s", tessera_last_error(ctx));
  rc = tsr_root_broadcast(ctx, c, msg, sizeof msg);
  msg[sizeof msg - 1] = 0;
  return rc ? rc : root ? s : tsr_error(ctx, s, "%s", msg);
}

int tsr_all_run(tessera_context_t *ctx, tessera_comm_t *c, const char *f, int (*run)(void *),
                void *arg) {
  if (!c) return run(arg);
  int own = 0;
  const int rc = beat_while(ctx, c, f, true, run, arg, &own);
  if (rc) return rc;
  char why[160];
  snprintf(why, sizeof why, "%s: another process failed", f);
  return tsr_dist_agree_on(ctx, c, own, why);
}

int tsr_lapack_scatter(tessera_context_t *ctx, tessera_dtype_t dtype, int64_t m, int64_t n,
                       int64_t nb, bool panels, const void *a, int64_t lda, char part, bool in,
                       tessera_matrix_t **out, tessera_matrix_t **root) {
  tessera_comm_t *c = tessera_context_comm(ctx);
  /* panels span the rows: a grid of one row deals them over every process */
  const tessera_grid_t g =
      panels ? (tessera_grid_t){1, tessera_comm_size(c)} : tessera_context_grid(ctx);
  const int64_t mb = panels ? (m > 1 ? m : 1) : nb;
  void *mine = tessera_comm_rank(c) == ROOT ? (void *)(uintptr_t)a : NULL;
  *out = *root = NULL;
  const tsr_dist_place_t home = {.part = part, .on = ROOT, .mine = mine, .ld = lda};
  int rc = tsr_matrix_create_distributed(ctx, c, g, dtype, m, n, mb, nb, &home, root);
  if (!rc) rc = tsr_matrix_dealt(*root, g, mb, part, -1, in, out);
  if (rc) {
    tessera_matrix_destroy(*root);
    *root = NULL;
  }
  return rc;
}

int tsr_lapack_gather(tessera_matrix_t *A, tessera_matrix_t *root) {
  int rc = tsr_matrix_flush_copies(A, tsr_pxlacpy(A, root));
  const int w = tessera_wait_all(A->ctx);
  if (!rc) rc = w;
  if (!rc && tessera_comm_rank(A->comm) == ROOT) rc = tsr_matrix_flush(root); /* into the array */
  return tsr_dist_agree(A->comm, rc);
}

int tsr_root_array(tessera_context_t *ctx, tessera_comm_t *comm, tessera_dtype_t dt, int64_t m,
                   int64_t n, int64_t mb, int64_t nb, void *at, int64_t ld, int node,
                   tessera_matrix_t **out) {
  const int root = ROOT;
  void *const ptr[1] = {tessera_comm_rank(comm) == ROOT ? at : NULL};
  tsr_blocks_t blk = {.brows = m, .bcols = n, .ld = ld, .ptr = ptr, .node = &node, .owner = &root};
  tsr_blocks_grid(&blk, m, n);
  const tsr_dist_place_t place = {.on = -1, .blocks = &blk};
  return tsr_matrix_create_distributed(ctx, comm, (tessera_grid_t){0, 0}, dt, m, n, mb, nb, &place,
                                       out);
}

int tsr_root_matrix(const tessera_matrix_t *A, int64_t m, int64_t n, int64_t mb, int64_t nb,
                    void *at, int64_t ld, int node, tessera_matrix_t **out) {
  return tsr_root_array(A->ctx, A->comm, A->dtype, m, n, mb, nb, at, ld, node, out);
}

/* A distributed matrix of A's tiling whose tiles are all the root's, in place in its array h
 * (leading dimension A's rows) in the memory of its node `node`. */
static int root_matrix(tessera_matrix_t *A, void *h, int node, tessera_matrix_t **home) {
  return tsr_root_matrix(A, A->m, A->n, A->mb, A->nb, h, A->m > 1 ? A->m : 1, node, home);
}

int tsr_lapack_collect_on(tessera_matrix_t *A, void *h, int node) {
  tessera_context_t *ctx = A->ctx;
  const bool root = tessera_comm_rank(A->comm) == ROOT;
  int rc = tsr_dist_agree_on(ctx, A->comm, root && !h ? TESSERA_ERR_NOMEM : 0,
                             "process 0 is out of memory for a copy of A");
  if (rc) return root ? tsr_error(ctx, rc, "out of memory for a copy of A on process 0") : rc;
  tessera_matrix_t *home = NULL;
  rc = root_matrix(A, h, node, &home);
  if (!rc) rc = tsr_lapack_gather(A, home);
  /* gone before the caller writes h: its tiles' copies elsewhere would outlive the change */
  const int d = home ? tessera_matrix_destroy(home) : 0;
  return rc ? rc : tsr_dist_agree(A->comm, d);
}

int tsr_lapack_deal_on(const void *h, int node, tessera_matrix_t *A) {
  tessera_matrix_t *home = NULL;
  int rc = root_matrix(A, (void *)(uintptr_t)h, node, &home);
  if (!rc) rc = tsr_matrix_flush_copies(home, tsr_pxlacpy(home, A));
  const int w = tessera_wait_all(A->ctx);
  const int d = home ? tessera_matrix_destroy(home) : 0;
  return tsr_dist_agree(A->comm, rc ? rc : w ? w : d);
}

int tsr_lapack_collect(tessera_matrix_t *A, void *h) {
  return tsr_lapack_collect_on(A, h, TESSERA_HOST_NODE);
}

int tsr_lapack_deal(const void *h, tessera_matrix_t *A) {
  return tsr_lapack_deal_on(h, TESSERA_HOST_NODE, A);
}
