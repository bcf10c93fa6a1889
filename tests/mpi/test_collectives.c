/* tessera_comm on host buffers, run as `mpirun -np N` (N = 1 .. 4, every process running the
 * whole suite): broadcast from every root, allreduce (out of place and in place), reduce to every
 * root, allgather, reduce_scatter, a send / recv ring and barriers, for every element type and
 * reduction, with no queue and on a host queue; counts 0 (NULL buffers, or buffers left
 * untouched), 1, 7, 1003 and 2^18 (f64 allreduce, beyond MPI's eager limits); operations chained
 * on one queue; the argument errors (status and tessera_comm_last_error), after which the
 * communicator still works. The values are small integers, exact in every type, so results are
 * compared exactly. main initialises MPI itself (MPI_THREAD_MULTIPLE) and makes one
 * communicator for the whole suite.
 */
/* ctest-label: mpi */
/* ctest-mpi-procs: 1 2 3 4 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <mpi.h>

#include "../test_common.h"
#include <tessera/comm.h>

static tessera_comm_t *g_comm; /* the suite's communicator (MPI_COMM_WORLD, host only) */
static int g_rank, g_size;     /* this process in it */
static int g_thread_multiple;  /* MPI runs with MPI_THREAD_MULTIPLE: host queues can be made */
static char g_what[200];       /* the call being checked, for failure messages */
/* What a test has open: closed by the test, or by drop_open() when the test fails half way */
static tessera_comm_queue_t *g_queue, *g_other_queue;
static tessera_comm_t *g_other;

static const tessera_comm_type_t types[] = {TESSERA_COMM_F32,  TESSERA_COMM_F64, TESSERA_COMM_C64,
                                            TESSERA_COMM_C128, TESSERA_COMM_I32, TESSERA_COMM_I64};
static const char *const type_names[] = {"f32", "f64", "c64", "c128", "i32", "i64"};
static const tessera_reduce_t ops[] = {TESSERA_SUM, TESSERA_PROD, TESSERA_MIN, TESSERA_MAX};
static const char *const op_names[] = {"sum", "prod", "min", "max"};
/* Element counts; the first 0 passes NULL buffers, the second real ones that must stay as they
 * are. 1003 is a multiple of nothing the transport might split by. */
static const size_t counts[] = {0, 0, 1, 7, 1003};
enum { NTYPES = 6, NOPS = 4, NCOUNTS = 5, GUARD = 3 };

/* ---------------------------------------------------------------- elements */

/* One element as two doubles (im is 0 for real and integer types). */
typedef struct {
  double re, im;
} val_t;

static const val_t SENTINEL = {-99.0, -99.0}; /* what unwritten elements hold */

static int is_complex(tessera_comm_type_t t) {
  return t == TESSERA_COMM_C64 || t == TESSERA_COMM_C128;
}

/* Bytes of one element, by type (the enum's values are 0 .. 5). */
static size_t esize(tessera_comm_type_t t) {
  static const size_t sizes[] = {sizeof(float),      sizeof(double),  2 * sizeof(float),
                                 2 * sizeof(double), sizeof(int32_t), sizeof(int64_t)};
  return sizes[t];
}

/* Scalar k of buf; a complex element i is scalars 2i (real part) and 2i + 1 (imaginary). */
static void put_scalar(tessera_comm_type_t t, void *buf, size_t k, double x) {
  switch (t) {
  case TESSERA_COMM_F32:
  case TESSERA_COMM_C64:
    ((float *)buf)[k] = (float)x;
    break;
  case TESSERA_COMM_F64:
  case TESSERA_COMM_C128:
    ((double *)buf)[k] = x;
    break;
  case TESSERA_COMM_I32:
    ((int32_t *)buf)[k] = (int32_t)x;
    break;
  case TESSERA_COMM_I64:
    ((int64_t *)buf)[k] = (int64_t)x;
    break;
  }
}

static double get_scalar(tessera_comm_type_t t, const void *buf, size_t k) {
  switch (t) {
  case TESSERA_COMM_F32:
  case TESSERA_COMM_C64:
    return ((const float *)buf)[k];
  case TESSERA_COMM_F64:
  case TESSERA_COMM_C128:
    return ((const double *)buf)[k];
  case TESSERA_COMM_I32:
    return ((const int32_t *)buf)[k];
  case TESSERA_COMM_I64:
    return (double)((const int64_t *)buf)[k];
  }
  return 0.0;
}

/* Writes element i of buf (complex types as two floats or two doubles). */
static void put(tessera_comm_type_t t, void *buf, size_t i, val_t v) {
  if (!is_complex(t)) {
    put_scalar(t, buf, i, v.re);
    return;
  }
  put_scalar(t, buf, 2 * i, v.re);
  put_scalar(t, buf, 2 * i + 1, v.im);
}

/* Reads element i of buf. */
static val_t get(tessera_comm_type_t t, const void *buf, size_t i) {
  if (!is_complex(t)) return (val_t){get_scalar(t, buf, i), 0.0};
  return (val_t){get_scalar(t, buf, 2 * i), get_scalar(t, buf, 2 * i + 1)};
}

/* Element i of process r for SUM, MIN, MAX and the moving operations: integers in -5 .. 5 that
 * differ from process to process (so MIN and MAX pick different processes along the buffer),
 * with an imaginary part depending on both for complex types. Sums over 4 processes are exact. */
static val_t gen(tessera_comm_type_t t, int r, size_t i) {
  val_t v = {(double)((r * 5 + (int)(i % 11) * 3) % 11) - 5.0, 0.0};
  if (is_complex(t)) v.im = (double)(i % 5) - 2.0 - r;
  return v;
}

/* Element i of process r for PROD: 2, -1 or 1 (real), 1 - i, 1 or 1 + i (complex); products over
 * 4 processes stay small integers, exact even in f32. */
static val_t gen_prod(tessera_comm_type_t t, int r, size_t i) {
  int k = (int)((i + (size_t)r) % 3);
  val_t v = {k == 0 ? 2.0 : k == 1 ? -1.0 : 1.0, 0.0};
  if (is_complex(t)) v = (val_t){1.0, (double)k - 1.0};
  return v;
}

static val_t value(tessera_comm_type_t t, tessera_reduce_t op, int r, size_t i) {
  return op == TESSERA_PROD ? gen_prod(t, r, i) : gen(t, r, i);
}

static val_t combine(tessera_reduce_t op, val_t a, val_t b) {
  switch (op) {
  case TESSERA_SUM:
    return (val_t){a.re + b.re, a.im + b.im};
  case TESSERA_PROD:
    return (val_t){a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
  case TESSERA_MIN:
    return b.re < a.re ? b : a;
  case TESSERA_MAX:
    return b.re > a.re ? b : a;
  }
  return a;
}

/* op over every process of element i. */
static val_t reduced(tessera_comm_type_t t, tessera_reduce_t op, size_t i) {
  val_t v = value(t, op, 0, i);
  for (int r = 1; r < g_size; r++) v = combine(op, v, value(t, op, r, i));
  return v;
}

/* ---------------------------------------------------------------- buffers and checks */

/* Names the call being checked (in failure messages). */
static void what(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void what(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(g_what, sizeof g_what, fmt, ap);
  va_end(ap);
}

/* The detailed message of the last failing call on the suite's communicator. */
static const char *comm_error(void) {
  const char *e = tessera_comm_last_error(g_comm);
  return e ? e : "(NULL)";
}

/* n elements of type t holding SENTINEL, followed by GUARD more that must stay SENTINEL; NULL
 * when `null` (a count-0 call with NULL buffers). */
static void *new_buf(tessera_comm_type_t t, size_t n, int null) {
  if (null) return NULL;
  void *b = malloc((n + GUARD) * esize(t));
  assert_non_null(b);
  for (size_t i = 0; i < n + GUARD; i++) put(t, b, i, SENTINEL);
  return b;
}

/* Element j of buf = value(t, op, r, j), for j < n. */
static void fill(tessera_comm_type_t t, void *buf, size_t n, tessera_reduce_t op, int r) {
  for (size_t j = 0; j < n; j++) put(t, buf, j, value(t, op, r, j));
}

static void check_elem(tessera_comm_type_t t, const void *buf, size_t i, val_t want) {
  val_t got = get(t, buf, i);
  if (got.re != want.re || (is_complex(t) && got.im != want.im))
    fail_msg("%s: rank %d, element %zu = (%g, %g), expected (%g, %g)", g_what, g_rank, i, got.re,
             got.im, want.re, want.im);
}

/* The GUARD elements after the first n are still SENTINEL (nothing written past the end). */
static void check_guard(tessera_comm_type_t t, const void *buf, size_t n) {
  if (!buf) return;
  for (size_t g = 0; g < GUARD; g++) check_elem(t, buf, n + g, SENTINEL);
}

/* buf holds value(t, op, r, j) for j < n and is intact after (a send buffer left alone). */
static void check_filled(tessera_comm_type_t t, const void *buf, size_t n, tessera_reduce_t op,
                         int r) {
  for (size_t j = 0; j < n; j++) check_elem(t, buf, j, value(t, op, r, j));
  check_guard(t, buf, n);
}

/* ---------------------------------------------------------------- queues */

/* Mode 0: no queue (complete on return); mode 1: a host queue, synced before the checks. */
static int nmodes(void) {
  return g_thread_multiple ? 2 : 1;
}
static const char *mode_name(int mode) {
  return mode ? "on a queue" : "without queue";
}

static tessera_comm_queue_t *open_queue(int mode) {
  tessera_comm_queue_t *q = NULL;
  if (!mode) return NULL;
  int rc = tessera_comm_queue_create(g_comm, 0, NULL, &q);
  if (rc != 0 || !q) fail_msg("tessera_comm_queue_create = %d (%s)", rc, comm_error());
  return g_queue = q;
}

static void close_queue(tessera_comm_queue_t *q) {
  g_queue = NULL;
  if (q) assert_int_equal(tessera_comm_queue_destroy(q), 0);
}

/* The call (already made) returned rc; with a queue, waits for it. */
static void done(int rc, tessera_comm_queue_t *q) {
  if (rc != 0) fail_msg("%s: status %d (%s)", g_what, rc, comm_error());
  if (q && (rc = tessera_comm_queue_sync(q)) != 0)
    fail_msg("%s: tessera_comm_queue_sync = %d (%s)", g_what, rc, comm_error());
}

/* ---------------------------------------------------------------- setup */

static int group_setup(void **state) {
  (void)state;
  tessera_comm_config_t cfg = {.timeout_s = 20};
  int rc = tessera_comm_create(&cfg, &g_comm);
  if (rc != 0 || !g_comm) {
    fprintf(stderr, "tessera_comm_create = %d (%s)\n", rc, comm_error());
    return -1;
  }
  g_rank = tessera_comm_rank(g_comm);
  g_size = tessera_comm_size(g_comm);
  return 0;
}

/* After each test: what a failed test left open, so that the next tests and the teardown still
 * run. */
static int drop_open(void **state) {
  (void)state;
  tessera_comm_queue_destroy(g_queue);
  tessera_comm_queue_destroy(g_other_queue);
  tessera_comm_destroy(g_other);
  g_queue = g_other_queue = NULL;
  g_other = NULL;
  return 0;
}

static int group_teardown(void **state) {
  (void)state;
  return tessera_comm_destroy(g_comm) == 0 ? 0 : -1;
}

/* ---------------------------------------------------------------- tests */

/* Rank, size and devices are those of MPI_COMM_WORLD (host only); describe names MPI. */
static void test_rank_size(void **state) {
  (void)state;
  int rank = -1, size = -1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  assert_int_equal(tessera_comm_rank(g_comm), rank);
  assert_int_equal(tessera_comm_size(g_comm), size);
  assert_int_equal(tessera_comm_devices(g_comm), 0);
  char line[512];
  assert_int_equal(tessera_comm_describe(line, sizeof line), 1);
  assert_non_null(strstr(line, "MPI"));
  if (!g_thread_multiple) { /* below MPI_THREAD_MULTIPLE there are no host queues */
    tessera_comm_queue_t *q = NULL;
    assert_int_equal(tessera_comm_queue_create(g_comm, 0, NULL, &q), TESSERA_ERR_UNSUPPORTED);
  }
}

/* Every root's buffer reaches every process; nothing past count is written. */
static void test_broadcast(void **state) {
  (void)state;
  for (int mode = 0; mode < nmodes(); mode++) {
    tessera_comm_queue_t *q = open_queue(mode);
    for (int k = 0; k < NTYPES; k++)
      for (int c = 0; c < NCOUNTS; c++)
        for (int root = 0; root < g_size; root++) {
          tessera_comm_type_t t = types[k];
          size_t n = counts[c];
          void *buf = new_buf(t, n, c == 0);
          if (g_rank == root && buf) fill(t, buf, n, TESSERA_SUM, root);
          what("broadcast %s x %zu from %d %s", type_names[k], n, root, mode_name(mode));
          done(tessera_comm_broadcast(g_comm, buf, n, t, root, q), q);
          if (buf) check_filled(t, buf, n, TESSERA_SUM, root);
          free(buf);
        }
    close_queue(q);
  }
}

/* Every process gets op over the processes, out of place (send left alone) and in place. */
static void test_allreduce(void **state) {
  (void)state;
  for (int mode = 0; mode < nmodes(); mode++) {
    tessera_comm_queue_t *q = open_queue(mode);
    for (int k = 0; k < NTYPES; k++)
      for (int o = 0; o < NOPS; o++)
        for (int c = 0; c < NCOUNTS; c++)
          for (int in_place = 0; in_place < 2; in_place++) {
            tessera_comm_type_t t = types[k];
            tessera_reduce_t op = ops[o];
            size_t n = counts[c];
            if (is_complex(t) && (op == TESSERA_MIN || op == TESSERA_MAX)) continue;
            void *send = new_buf(t, n, c == 0);
            void *recv = in_place ? send : new_buf(t, n, c == 0);
            if (send) fill(t, send, n, op, g_rank);
            what("allreduce %s %s x %zu%s %s", op_names[o], type_names[k], n,
                 in_place ? " in place" : "", mode_name(mode));
            done(tessera_comm_allreduce(g_comm, send, recv, n, t, op, q), q);
            for (size_t i = 0; i < n; i++) check_elem(t, recv, i, reduced(t, op, i));
            check_guard(t, recv, n);
            if (!in_place) {
              check_filled(t, send, n, op, g_rank);
              free(recv);
            }
            free(send);
          }
    close_queue(q);
  }
}

/* 2^18 doubles (2 MiB): past the eager limits, MPI's rendezvous and pipelined paths. */
static void test_allreduce_large(void **state) {
  (void)state;
  const tessera_comm_type_t t = TESSERA_COMM_F64;
  const size_t n = (size_t)1 << 18;
  for (int mode = 0; mode < nmodes(); mode++)
    for (int in_place = 0; in_place < 2; in_place++) {
      tessera_comm_queue_t *q = open_queue(mode);
      void *send = new_buf(t, n, 0);
      void *recv = in_place ? send : new_buf(t, n, 0);
      fill(t, send, n, TESSERA_SUM, g_rank);
      what("allreduce sum f64 x %zu%s %s", n, in_place ? " in place" : "", mode_name(mode));
      done(tessera_comm_allreduce(g_comm, send, recv, n, t, TESSERA_SUM, q), q);
      for (size_t i = 0; i < n; i++) check_elem(t, recv, i, reduced(t, TESSERA_SUM, i));
      check_guard(t, recv, n);
      if (!in_place) free(recv);
      free(send);
      close_queue(q);
    }
}

/* The root gets op over the processes. Elsewhere recv is not used: NULL for odd roots, else a
 * buffer that must stay as it was. */
static void test_reduce(void **state) {
  (void)state;
  for (int mode = 0; mode < nmodes(); mode++) {
    tessera_comm_queue_t *q = open_queue(mode);
    for (int k = 0; k < NTYPES; k++)
      for (int o = 0; o < NOPS; o++)
        for (int c = 0; c < NCOUNTS; c++)
          for (int root = 0; root < g_size; root++) {
            tessera_comm_type_t t = types[k];
            tessera_reduce_t op = ops[o];
            size_t n = counts[c];
            if (is_complex(t) && (op == TESSERA_MIN || op == TESSERA_MAX)) continue;
            void *send = new_buf(t, n, c == 0);
            void *recv = new_buf(t, n, c == 0 || (g_rank != root && root % 2 == 1));
            if (send) fill(t, send, n, op, g_rank);
            what("reduce %s %s x %zu to %d %s", op_names[o], type_names[k], n, root,
                 mode_name(mode));
            done(tessera_comm_reduce(g_comm, send, recv, n, t, op, root, q), q);
            if (g_rank == root)
              for (size_t i = 0; i < n; i++) check_elem(t, recv, i, reduced(t, op, i));
            else if (recv)
              for (size_t i = 0; i < n; i++) check_elem(t, recv, i, SENTINEL);
            check_guard(t, recv, n);
            if (send) check_filled(t, send, n, op, g_rank);
            free(send);
            free(recv);
          }
    close_queue(q);
  }
}

/* recv of every process holds the send blocks of processes 0, 1, ... in order. */
static void test_allgather(void **state) {
  (void)state;
  for (int mode = 0; mode < nmodes(); mode++) {
    tessera_comm_queue_t *q = open_queue(mode);
    for (int k = 0; k < NTYPES; k++)
      for (int c = 0; c < NCOUNTS; c++) {
        tessera_comm_type_t t = types[k];
        size_t n = counts[c], all = n * (size_t)g_size;
        void *send = new_buf(t, n, c == 0), *recv = new_buf(t, all, c == 0);
        if (send) fill(t, send, n, TESSERA_SUM, g_rank);
        what("allgather %s x %zu %s", type_names[k], n, mode_name(mode));
        done(tessera_comm_allgather(g_comm, send, recv, n, t, q), q);
        for (int p = 0; p < g_size; p++)
          for (size_t i = 0; i < n; i++) check_elem(t, recv, (size_t)p * n + i, gen(t, p, i));
        check_guard(t, recv, all);
        if (send) check_filled(t, send, n, TESSERA_SUM, g_rank);
        free(send);
        free(recv);
      }
    close_queue(q);
  }
}

/* recv of process p = block p of op over the processes' send (size * count elements). */
static void test_reduce_scatter(void **state) {
  (void)state;
  for (int mode = 0; mode < nmodes(); mode++) {
    tessera_comm_queue_t *q = open_queue(mode);
    for (int k = 0; k < NTYPES; k++)
      for (int o = 0; o < NOPS; o++)
        for (int c = 0; c < NCOUNTS; c++) {
          tessera_comm_type_t t = types[k];
          tessera_reduce_t op = ops[o];
          size_t n = counts[c], all = n * (size_t)g_size;
          if (is_complex(t) && (op == TESSERA_MIN || op == TESSERA_MAX)) continue;
          void *send = new_buf(t, all, c == 0), *recv = new_buf(t, n, c == 0);
          if (send) fill(t, send, all, op, g_rank);
          what("reduce_scatter %s %s x %zu %s", op_names[o], type_names[k], n, mode_name(mode));
          done(tessera_comm_reduce_scatter(g_comm, send, recv, n, t, op, q), q);
          for (size_t i = 0; i < n; i++)
            check_elem(t, recv, i, reduced(t, op, (size_t)g_rank * n + i));
          check_guard(t, recv, n);
          if (send) check_filled(t, send, all, op, g_rank);
          free(send);
          free(recv);
        }
    close_queue(q);
  }
}

/* A ring: rank r sends to r + 1 and receives from r - 1 (modulo size). A blocking send may wait
 * for its receive, so even ranks send first and odd ranks receive first (no cycle of waiting
 * sends, odd sizes included). On a queue both go on the same queue (a queue's operations match
 * those of the same queue on the peer, which run in the same order). One process sends to
 * itself: that relies on MPI buffering the message, so it uses only small counts (<= 112 bytes,
 * eager in every MPI). */
static void test_send_recv_ring(void **state) {
  (void)state;
  int next = (g_rank + 1) % g_size, prev = (g_rank - 1 + g_size) % g_size;
  for (int mode = 0; mode < nmodes(); mode++) {
    tessera_comm_queue_t *q = open_queue(mode);
    for (int k = 0; k < NTYPES; k++)
      for (int c = 0; c < NCOUNTS; c++) {
        tessera_comm_type_t t = types[k];
        size_t n = counts[c];
        if (g_size == 1 && n > 7) continue;
        void *send = new_buf(t, n, c == 0), *recv = new_buf(t, n, c == 0);
        if (send) fill(t, send, n, TESSERA_SUM, g_rank);
        what("send / recv %s x %zu to %d from %d %s", type_names[k], n, next, prev,
             mode_name(mode));
        int rc_send = 0, rc_recv = 0;
        if (g_rank % 2 == 0) {
          rc_send = tessera_comm_send(g_comm, send, n, t, next, q);
          rc_recv = rc_send ? rc_send : tessera_comm_recv(g_comm, recv, n, t, prev, q);
        } else {
          rc_recv = tessera_comm_recv(g_comm, recv, n, t, prev, q);
          rc_send = rc_recv ? rc_recv : tessera_comm_send(g_comm, send, n, t, next, q);
        }
        done(rc_send ? rc_send : rc_recv, q);
        if (recv) check_filled(t, recv, n, TESSERA_SUM, prev);
        if (send) check_filled(t, send, n, TESSERA_SUM, g_rank);
        free(send);
        free(recv);
      }
    close_queue(q);
  }
}

/* Nobody leaves a barrier before the last process arrives: rank 0 arrives 0.5 s late, so the
 * others wait that long; on a queue the call itself returns at once and the sync waits. */
static void test_barrier(void **state) {
  (void)state;
  for (int mode = 0; mode < nmodes(); mode++) {
    tessera_comm_queue_t *q = open_queue(mode);
    what("barrier %s", mode_name(mode));
    done(tessera_comm_barrier(g_comm, q), q); /* everyone starts together */
    double t0 = tt_now();
    if (g_rank == 0) tt_sleep_us(500000);
    int rc = tessera_comm_barrier(g_comm, q);
    double t_call = tt_now() - t0;
    done(rc, q);
    double t_all = tt_now() - t0;
    if (g_rank != 0 && t_all < 0.25)
      fail_msg("%s: rank %d left after %.3f s, rank 0 came after 0.5 s", g_what, g_rank, t_all);
    if (g_rank != 0 && q && t_call > 0.25)
      fail_msg("%s: the call took %.3f s (it should only enqueue)", g_what, t_call);
    close_queue(q);
  }
}

/* Operations put on one queue run in order: a broadcast, an in-place allreduce of its result and
 * an allgather of that, enqueued back to back, synced once. */
static void test_queue_order(void **state) {
  (void)state;
  if (!g_thread_multiple) skip();
  tessera_comm_queue_t *q = open_queue(1);
  const size_t n = 7;
  const int root = g_size - 1;
  for (int k = 0; k < NTYPES; k++) {
    tessera_comm_type_t t = types[k];
    void *buf = new_buf(t, n, 0), *all = new_buf(t, n * (size_t)g_size, 0);
    if (g_rank == root) fill(t, buf, n, TESSERA_SUM, root);
    what("broadcast, allreduce, allgather %s on one queue", type_names[k]);
    assert_int_equal(tessera_comm_broadcast(g_comm, buf, n, t, root, q), 0);
    assert_int_equal(tessera_comm_allreduce(g_comm, buf, buf, n, t, TESSERA_SUM, q), 0);
    assert_int_equal(tessera_comm_allgather(g_comm, buf, all, n, t, q), 0);
    done(0, q);
    for (size_t i = 0; i < n; i++) {
      val_t v = gen(t, root, i);
      v.re *= g_size;
      v.im *= g_size;
      check_elem(t, buf, i, v);
      for (int p = 0; p < g_size; p++) check_elem(t, all, (size_t)p * n + i, v);
    }
    check_guard(t, all, n * (size_t)g_size);
    free(buf);
    free(all);
  }
  close_queue(q);
}

/* The call on `comm` returned `rc`, expected `want` (nonzero), and left a message there. */
static void expect_error(const tessera_comm_t *comm, const char *call, int rc, int want) {
  const char *e = tessera_comm_last_error(comm);
  if (rc != want) fail_msg("%s = %d, expected %d (%s)", call, rc, want, e);
  if (!e || !*e) fail_msg("%s = %d: tessera_comm_last_error says nothing", call, rc);
}
#define EXPECT(call, want) expect_error(g_comm, #call, (call), (want))
#define EXPECT_NO_COMM(call, want) expect_error(NULL, #call, (call), (want))

/* An allreduce (i64 sum of 7) and a broadcast still give the right results. */
static void check_still_works(tessera_comm_queue_t *q) {
  const tessera_comm_type_t t = TESSERA_COMM_I64;
  void *send = new_buf(t, 7, 0), *recv = new_buf(t, 7, 0);
  fill(t, send, 7, TESSERA_SUM, g_rank);
  what("allreduce after the errors %s", q ? "on a queue" : "without queue");
  done(tessera_comm_allreduce(g_comm, send, recv, 7, t, TESSERA_SUM, q), q);
  for (size_t i = 0; i < 7; i++) check_elem(t, recv, i, reduced(t, TESSERA_SUM, i));
  what("broadcast after the errors %s", q ? "on a queue" : "without queue");
  done(tessera_comm_broadcast(g_comm, send, 7, t, 0, q), q);
  check_filled(t, send, 7, TESSERA_SUM, 0);
  free(send);
  free(recv);
}

/* Invalid arguments: the status names the argument (-k), the message is set, nothing is sent
 * (every process makes the same bad call, none waits), and the communicator keeps working.
 * A NULL recv at the root of reduce is left out: only the root could see it. */
static void test_errors(void **state) {
  (void)state;
  tessera_comm_t *const C = g_comm;
  tessera_comm_t *const NO = NULL;
  const tessera_comm_type_t D = TESSERA_COMM_F64;
  const tessera_reduce_t S = TESSERA_SUM;
  double a[64] = {0}, b[64] = {0}; /* large enough for any count-1 call */
  const int size = g_size;

  /* NULL communicator */
  EXPECT_NO_COMM(tessera_comm_broadcast(NO, a, 1, D, 0, NULL), -1);
  EXPECT_NO_COMM(tessera_comm_allreduce(NO, a, b, 1, D, S, NULL), -1);
  EXPECT_NO_COMM(tessera_comm_reduce(NO, a, b, 1, D, S, 0, NULL), -1);
  EXPECT_NO_COMM(tessera_comm_allgather(NO, a, b, 1, D, NULL), -1);
  EXPECT_NO_COMM(tessera_comm_reduce_scatter(NO, a, b, 1, D, S, NULL), -1);
  EXPECT_NO_COMM(tessera_comm_send(NO, a, 1, D, 0, NULL), -1);
  EXPECT_NO_COMM(tessera_comm_recv(NO, a, 1, D, 0, NULL), -1);
  EXPECT_NO_COMM(tessera_comm_barrier(NO, NULL), -1);
  tessera_comm_queue_t *q = NULL;
  EXPECT_NO_COMM(tessera_comm_queue_create(NO, 0, NULL, &q), -1);
  assert_int_equal(tessera_comm_rank(NO), -1);
  assert_int_equal(tessera_comm_size(NO), -1);
  assert_int_equal(tessera_comm_devices(NO), -1);
  assert_int_equal(tessera_comm_destroy(NO), 0);
  assert_int_equal(tessera_comm_queue_destroy(NULL), 0);

  /* NULL buffers with count > 0 */
  EXPECT(tessera_comm_broadcast(C, NULL, 1, D, 0, NULL), -2);
  EXPECT(tessera_comm_allreduce(C, NULL, b, 1, D, S, NULL), -2);
  EXPECT(tessera_comm_allreduce(C, a, NULL, 1, D, S, NULL), -3);
  EXPECT(tessera_comm_reduce(C, NULL, b, 1, D, S, 0, NULL), -2);
  EXPECT(tessera_comm_allgather(C, NULL, b, 1, D, NULL), -2);
  EXPECT(tessera_comm_allgather(C, a, NULL, 1, D, NULL), -3);
  EXPECT(tessera_comm_reduce_scatter(C, NULL, b, 1, D, S, NULL), -2);
  EXPECT(tessera_comm_reduce_scatter(C, a, NULL, 1, D, S, NULL), -3);
  EXPECT(tessera_comm_send(C, NULL, 1, D, 0, NULL), -2);
  EXPECT(tessera_comm_recv(C, NULL, 1, D, 0, NULL), -2);

  /* types out of range */
  const tessera_comm_type_t bad_types[] = {(tessera_comm_type_t)9, (tessera_comm_type_t)-1,
                                           (tessera_comm_type_t)6};
  for (size_t k = 0; k < sizeof bad_types / sizeof bad_types[0]; k++) {
    tessera_comm_type_t T = bad_types[k];
    EXPECT(tessera_comm_broadcast(C, a, 1, T, 0, NULL), -4);
    EXPECT(tessera_comm_allreduce(C, a, b, 1, T, S, NULL), -5);
    EXPECT(tessera_comm_reduce(C, a, b, 1, T, S, 0, NULL), -5);
    EXPECT(tessera_comm_allgather(C, a, b, 1, T, NULL), -5);
    EXPECT(tessera_comm_reduce_scatter(C, a, b, 1, T, S, NULL), -5);
    EXPECT(tessera_comm_send(C, a, 1, T, 0, NULL), -4);
    EXPECT(tessera_comm_recv(C, a, 1, T, 0, NULL), -4);
  }

  /* reductions out of range, and MIN / MAX of complex types */
  const tessera_reduce_t bad_ops[] = {(tessera_reduce_t)4, (tessera_reduce_t)-1};
  for (size_t k = 0; k < 2; k++) {
    tessera_reduce_t O = bad_ops[k];
    EXPECT(tessera_comm_allreduce(C, a, b, 1, D, O, NULL), -6);
    EXPECT(tessera_comm_reduce(C, a, b, 1, D, O, 0, NULL), -6);
    EXPECT(tessera_comm_reduce_scatter(C, a, b, 1, D, O, NULL), -6);
  }
  const tessera_comm_type_t cplx[] = {TESSERA_COMM_C64, TESSERA_COMM_C128};
  for (size_t k = 0; k < 2; k++)
    for (int o = TESSERA_MIN; o <= TESSERA_MAX; o++) {
      tessera_comm_type_t T = cplx[k];
      tessera_reduce_t O = (tessera_reduce_t)o;
      EXPECT(tessera_comm_allreduce(C, a, b, 1, T, O, NULL), -6);
      EXPECT(tessera_comm_reduce(C, a, b, 1, T, O, 0, NULL), -6);
      EXPECT(tessera_comm_reduce_scatter(C, a, b, 1, T, O, NULL), -6);
    }

  /* roots and peers out of range */
  const int bad_ranks[] = {-1, size};
  for (size_t k = 0; k < 2; k++) {
    int R = bad_ranks[k];
    EXPECT(tessera_comm_broadcast(C, a, 1, D, R, NULL), -5);
    EXPECT(tessera_comm_reduce(C, a, b, 1, D, S, R, NULL), -7);
    EXPECT(tessera_comm_send(C, a, 1, D, R, NULL), -5);
    EXPECT(tessera_comm_recv(C, a, 1, D, R, NULL), -5);
  }

  /* invalid configurations (a collective call: every process passes the same one) */
  tessera_comm_t *other = NULL; /* never made */
  char why[256] = "";
  tessera_comm_config_t cfg = {.timeout_s = -1.0, .error = why, .error_len = sizeof why};
  EXPECT(tessera_comm_create(&cfg, &other), -1);
  assert_true(strlen(why) > 0);
  why[0] = '\0';
  cfg = (tessera_comm_config_t){.ndevices = -1, .error = why, .error_len = sizeof why};
  EXPECT(tessera_comm_create(&cfg, &other), -1);
  assert_true(strlen(why) > 0);
  check_still_works(NULL);
  if (!g_thread_multiple) return;

  /* on a queue: an argument error is returned by the call and leaves the queue usable */
  q = open_queue(1);
  EXPECT(tessera_comm_allreduce(C, a, b, 1, (tessera_comm_type_t)9, S, q), -5);
  EXPECT(tessera_comm_broadcast(C, a, 1, D, size, q), -5);
  assert_int_equal(tessera_comm_queue_sync(q), 0);
  check_still_works(q);

  /* a queue of another communicator (over MPI_COMM_WORLD as well); that communicator refuses
   * to be destroyed while its queue is open */
  MPI_Comm world = MPI_COMM_WORLD;
  cfg = (tessera_comm_config_t){.mpi_comm = &world, .timeout_s = 20};
  assert_int_equal(tessera_comm_create(&cfg, &g_other), 0);
  assert_int_equal(tessera_comm_queue_create(g_other, 0, NULL, &g_other_queue), 0);
  tessera_comm_queue_t *q2 = g_other_queue;
  EXPECT(tessera_comm_allreduce(C, a, b, 1, D, S, q2), -7);
  EXPECT(tessera_comm_broadcast(C, a, 1, D, 0, q2), -6);
  EXPECT(tessera_comm_barrier(C, q2), -2);
  EXPECT(tessera_comm_destroy(g_other), TESSERA_ERR_STATE);
  g_other_queue = NULL;
  assert_int_equal(tessera_comm_queue_destroy(q2), 0);
  other = g_other;
  g_other = NULL;
  assert_int_equal(tessera_comm_destroy(other), 0);
  check_still_works(q);
  close_queue(q);
  check_still_works(NULL);
}

int main(int argc, char **argv) {
  int provided = MPI_THREAD_SINGLE;
  if (MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS) return 2;
  g_thread_multiple = provided >= MPI_THREAD_MULTIPLE;
  tt_watchdog(280); /* under ctest's 300 s: a hang ends with a message rather than a kill */
#define T(f) cmocka_unit_test_teardown(f, drop_open)
  const struct CMUnitTest tests[] = {
      T(test_rank_size), T(test_broadcast),   T(test_allreduce),      T(test_allreduce_large),
      T(test_reduce),    T(test_allgather),   T(test_reduce_scatter), T(test_send_recv_ring),
      T(test_barrier),   T(test_queue_order), T(test_errors),
  };
  int failed = cmocka_run_group_tests(tests, group_setup, group_teardown);
  MPI_Finalize();
  return failed != 0;
}
