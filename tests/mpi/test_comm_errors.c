/* tessera_comm's argument errors on host buffers, run as `mpirun -np N` (N = 1 .. 3, every
 * process making the same calls): a NULL communicator, NULL buffers, element types, reductions
 * (MIN / MAX of complex types included), roots and peers out of range, invalid configurations,
 * and a queue of another communicator. Each call returns the status that names the argument and
 * leaves a message (tessera_comm_last_error); afterwards the communicator still works, with no
 * queue and on a host queue. main initialises MPI itself (MPI_THREAD_MULTIPLE) and makes one
 * communicator for the whole suite; the helpers are in mpi_common.h. Where MPI provides less than
 * MPI_THREAD_MULTIPLE there are no host queues: their checks are skipped and the program exits
 * with TT_SKIPPED, which ctest reports as skipped.
 */
/* ctest-label: mpi */
/* ctest-mpi-procs: 1 2 3 */
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

/* What test_errors has open besides g_queue: closed by the test, or by drop_all() when the test
 * fails half way */
static tessera_comm_queue_t *g_other_queue;
static tessera_comm_t *g_other;

/* After each test: what a failed test left open, so that the next tests and the teardown still
 * run. */
static int drop_all(void **state) {
  drop_open(state);
  tessera_comm_queue_destroy(g_other_queue);
  tessera_comm_destroy(g_other);
  g_other_queue = NULL;
  g_other = NULL;
  return 0;
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
}

/* On a host queue (MPI_THREAD_MULTIPLE; skipped below it): an argument error is returned by the
 * call and leaves the queue usable; a queue of another communicator is refused, and that
 * communicator refuses to be destroyed while its queue is open. */
static void test_errors_on_queues(void **state) {
  (void)state;
  tessera_comm_t *const C = g_comm;
  const tessera_comm_type_t D = TESSERA_COMM_F64;
  const tessera_reduce_t S = TESSERA_SUM;
  double a[64] = {0}, b[64] = {0};
  skip_without_queues();

  tessera_comm_queue_t *q = open_queue(1);
  EXPECT(tessera_comm_allreduce(C, a, b, 1, (tessera_comm_type_t)9, S, q), -5);
  EXPECT(tessera_comm_broadcast(C, a, 1, D, g_size, q), -5);
  assert_int_equal(tessera_comm_queue_sync(q), 0);
  check_still_works(q);

  /* a queue of another communicator (over MPI_COMM_WORLD as well) */
  MPI_Comm world = MPI_COMM_WORLD;
  tessera_comm_config_t cfg = (tessera_comm_config_t){.mpi_comm = &world, .timeout_s = 20};
  assert_int_equal(tessera_comm_create(&cfg, &g_other), 0);
  assert_int_equal(tessera_comm_queue_create(g_other, 0, NULL, &g_other_queue), 0);
  tessera_comm_queue_t *q2 = g_other_queue;
  EXPECT(tessera_comm_allreduce(C, a, b, 1, D, S, q2), -7);
  EXPECT(tessera_comm_broadcast(C, a, 1, D, 0, q2), -6);
  EXPECT(tessera_comm_barrier(C, q2), -2);
  EXPECT(tessera_comm_destroy(g_other), TESSERA_ERR_STATE);
  g_other_queue = NULL;
  assert_int_equal(tessera_comm_queue_destroy(q2), 0);
  tessera_comm_t *other = g_other;
  g_other = NULL;
  assert_int_equal(tessera_comm_destroy(other), 0);
  check_still_works(q);
  close_queue(q);
  check_still_works(NULL);
}

int main(int argc, char **argv) {
  if (mpi_start(&argc, &argv) != 0) return 2;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_teardown(test_errors, drop_all),
      cmocka_unit_test_teardown(test_errors_on_queues, drop_all),
  };
  return mpi_finish(cmocka_run_group_tests(tests, group_setup, group_teardown));
}
