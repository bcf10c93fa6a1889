/* tessera_comm on host buffers, run as `mpirun -np N` (N = 1 .. 4, every process running the
 * whole suite): broadcast from every root, allreduce (out of place and in place), reduce to every
 * root, allgather, reduce_scatter, a send / recv ring and barriers, for every element type and
 * reduction, with no queue and on a host queue; counts 0 (NULL buffers, or buffers left
 * untouched), 1, 7, 1003 and 2^18 (f64 allreduce, beyond MPI's eager limits); operations chained
 * on one queue. The values are small integers, exact in every type, so results are compared
 * exactly. main initialises MPI itself (MPI_THREAD_MULTIPLE) and makes one communicator for the
 * whole suite. The argument errors are in test_comm_errors.c; the helpers in mpi_common.h.
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

#include "mpi_common.h"

static const tessera_comm_type_t types[] = {TESSERA_COMM_F32,  TESSERA_COMM_F64, TESSERA_COMM_C64,
                                            TESSERA_COMM_C128, TESSERA_COMM_I32, TESSERA_COMM_I64};
static const char *const type_names[] = {"f32", "f64", "c64", "c128", "i32", "i64"};
static const tessera_reduce_t ops[] = {TESSERA_SUM, TESSERA_PROD, TESSERA_MIN, TESSERA_MAX};
static const char *const op_names[] = {"sum", "prod", "min", "max"};
/* Element counts; the first 0 passes NULL buffers, the second real ones that must stay as they
 * are. 1003 is a multiple of nothing the transport might split by. */
static const size_t counts[] = {0, 0, 1, 7, 1003};
enum { NTYPES = 6, NOPS = 4, NCOUNTS = 5 };

/* ---------------------------------------------------------------- queues */

/* Mode 0: no queue (complete on return); mode 1: a host queue, synced before the checks. */
static int nmodes(void) {
  return g_thread_multiple ? 2 : 1;
}
static const char *mode_name(int mode) {
  return mode ? "on a queue" : "without queue";
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
  skip_without_queues();
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

int main(int argc, char **argv) {
  if (mpi_start(&argc, &argv) != 0) return 2;
#define T(f) cmocka_unit_test_teardown(f, drop_open)
  const struct CMUnitTest tests[] = {
      T(test_rank_size), T(test_broadcast),   T(test_allreduce),      T(test_allreduce_large),
      T(test_reduce),    T(test_allgather),   T(test_reduce_scatter), T(test_send_recv_ring),
      T(test_barrier),   T(test_queue_order),
  };
  return mpi_finish(cmocka_run_group_tests(tests, group_setup, group_teardown));
}
