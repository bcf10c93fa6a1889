/* A program that leaves MPI to tessera (run as `mpirun -np N`, N = 1 .. 4, or alone): describe
 * names MPI without starting it; tessera_comm_create(NULL) initialises MPI, spans
 * MPI_COMM_WORLD (same rank and size), reduces 64-bit integers, makes a host queue when MPI
 * runs with MPI_THREAD_MULTIPLE and refuses an invalid configuration; tessera_comm_destroy then
 * finalises MPI.
 */
/* ctest-label: mpi */
/* ctest-mpi-procs: 1 2 4 */
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

/* The message of the last failing call on `comm`. */
static const char *comm_error(const tessera_comm_t *comm) {
  const char *e = tessera_comm_last_error(comm);
  return e ? e : "(NULL)";
}

/* describe says which transports exist, without starting MPI (else tessera could not tell that
 * it has to initialise and finalise MPI itself), and cuts its line to the buffer. */
static void test_describe(void **state) {
  (void)state;
  char line[512];
  memset(line, 'x', sizeof line);
  assert_int_equal(tessera_comm_describe(line, sizeof line), 1);
  assert_non_null(memchr(line, '\0', sizeof line));
  assert_true(strlen(line) > 0);
  assert_non_null(strstr(line, "MPI"));
  char small[4] = {'x', 'x', 'x', 'x'};
  assert_int_equal(tessera_comm_describe(small, sizeof small), 1);
  assert_non_null(memchr(small, '\0', sizeof small));
  assert_memory_equal(small, line, strlen(small)); /* the beginning of the same line */
  int init = 1;
  MPI_Initialized(&init);
  assert_false(init);
}

/* Create initialises MPI (thread multiple) and spans MPI_COMM_WORLD; destroy finalises it. */
static void test_lifecycle(void **state) {
  (void)state;
  int init = 1, fin = 1;
  MPI_Initialized(&init);
  assert_false(init); /* the program has not, and describe did not */

  tessera_comm_t *comm = NULL;
  int rc = tessera_comm_create(NULL, &comm);
  if (rc != 0 || !comm) fail_msg("tessera_comm_create(NULL) = %d (%s)", rc, comm_error(comm));
  MPI_Initialized(&init);
  assert_true(init);
  MPI_Finalized(&fin);
  assert_false(fin);

  int rank = -1, size = -1, provided = MPI_THREAD_SINGLE;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Query_thread(&provided);
  assert_int_equal(tessera_comm_rank(comm), rank);
  assert_int_equal(tessera_comm_size(comm), size);
  assert_int_equal(tessera_comm_devices(comm), 0);

  /* an int64 sum with values past 32 bits: element i of rank r = 2^40 + (r + 1) * (i + 1) */
  enum { N = 5 };
  int64_t send[N], recv[N];
  for (int i = 0; i < N; i++) {
    send[i] = (INT64_C(1) << 40) + (int64_t)(rank + 1) * (i + 1);
    recv[i] = -1;
  }
  rc = tessera_comm_allreduce(comm, send, recv, N, TESSERA_COMM_I64, TESSERA_SUM, NULL);
  if (rc != 0) fail_msg("allreduce = %d (%s)", rc, comm_error(comm));
  for (int i = 0; i < N; i++)
    assert_int_equal(recv[i],
                     (int64_t)size * (INT64_C(1) << 40) + (int64_t)size * (size + 1) / 2 * (i + 1));

  /* host queues need MPI_THREAD_MULTIPLE, which tessera asks for */
  tessera_comm_queue_t *q = NULL;
  rc = tessera_comm_queue_create(comm, 0, NULL, &q);
  if (provided >= MPI_THREAD_MULTIPLE) {
    if (rc != 0) fail_msg("tessera_comm_queue_create = %d (%s)", rc, comm_error(comm));
    assert_int_equal(tessera_comm_barrier(comm, q), 0);
    assert_int_equal(tessera_comm_queue_destroy(q), 0);
  } else {
    assert_int_equal(rc, TESSERA_ERR_UNSUPPORTED);
  }

  /* an invalid configuration is refused, with a message, and changes nothing */
  tessera_comm_t *bad = NULL;
  char why[256] = "";
  tessera_comm_config_t cfg = {.ndevices = -1, .error = why, .error_len = sizeof why};
  assert_int_equal(tessera_comm_create(&cfg, &bad), -1);
  assert_true(strlen(why) > 0);
  assert_int_equal(tessera_comm_barrier(comm, NULL), 0);

  assert_int_equal(tessera_comm_destroy(comm), 0);
  MPI_Finalized(&fin);
  assert_true(fin);
}

int main(void) {
  tt_watchdog(120);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_describe),
      cmocka_unit_test(test_lifecycle),
  };
  return cmocka_run_group_tests(tests, NULL, NULL) != 0;
}
