/* A process that does not arrive: the others' call fails with TESSERA_ERR_TIMEOUT after the
 * communicator's bound instead of waiting, the communicator is then broken (every later call
 * fails at once with TESSERA_ERR_STATE), and it can still be destroyed. The last process arrives
 * only once the others have given up and said so over MPI (its own call then completes against
 * the operations they posted), so no clock decides which comes first however loaded the machine;
 * the others' call must fail after one bound and before LIMIT of them. */
/* ctest-label: mpi */
/* ctest-mpi-procs: 2 3 */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "mpi_common.h"

enum { BOUND_S = 1, LIMIT = 20, GAVE_UP = 77 };

static void test_late_process(void **state) {
  (void)state;
  tessera_comm_t *c = NULL;
  tessera_comm_config_t cfg = {.timeout_s = BOUND_S};
  assert_int_equal(tessera_comm_create(&cfg, &c), 0);
  const int rank = tessera_comm_rank(c), last = tessera_comm_size(c) - 1;
  int64_t v = rank + 1, sum = 0;
  /* from one start: each of the others' clocks runs from when every communicator is made */
  MPI_Barrier(MPI_COMM_WORLD);
  for (int from = 0; rank == last && from < last; from++) /* the others gave up */
    MPI_Recv(NULL, 0, MPI_BYTE, from, GAVE_UP, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  const double t0 = tt_now();
  const int rc = tessera_comm_allreduce(c, &v, &sum, 1, TESSERA_COMM_I64, TESSERA_SUM, NULL);
  const double waited = tt_now() - t0;
  /* what went wrong, reported once every process has met again (a failed check must not leave
   * the late process waiting for the others) */
  char why[160] = "";
  if (rank != last) {
    MPI_Send(NULL, 0, MPI_BYTE, last, GAVE_UP, MPI_COMM_WORLD);
    const double t1 = tt_now();
    const int next = rc == TESSERA_ERR_TIMEOUT ? tessera_comm_barrier(c, NULL) : 0;
    if (rc != TESSERA_ERR_TIMEOUT || !strlen(tessera_comm_last_error(c)))
      snprintf(why, sizeof why, "the call returned %d, not a timeout with a message", rc);
    else if (waited < BOUND_S || waited > LIMIT * BOUND_S)
      snprintf(why, sizeof why, "the call failed after %.2f s, the bound is %d s", waited, BOUND_S);
    else if (next != TESSERA_ERR_STATE || tt_now() - t1 >= 0.5) /* broken: fails at once */
      snprintf(why, sizeof why, "the call after the timeout returned %d after %.2f s", next,
               tt_now() - t1);
  }
  assert_int_equal(tessera_comm_destroy(c), 0);
  /* the processes meet again on MPI itself, which also completes the late process's call */
  MPI_Barrier(MPI_COMM_WORLD);
  if (why[0]) fail_msg("process %d: %s", rank, why);
}

int main(int argc, char **argv) {
  if (mpi_start(&argc, &argv)) return 2;
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_late_process)};
  return mpi_finish(cmocka_run_group_tests(tests, NULL, NULL));
}
