/* Transfer timeouts count from the peer's last sign of progress. A sender busy in a task that
 * runs past the communicator's bound keeps its receiver waiting: the flow completes. A sender
 * that shows no progress (its process sleeps outside tessera before inserting its flow) lets
 * the receive time out: process 0's flow fails with TESSERA_ERR_TIMEOUT within about the bound,
 * with a message naming TESSERA_COMM_TIMEOUT, and its posted receive is cancelled before the
 * buffer goes with the failed flow (the late message then finds no receive: it once landed in
 * freed memory). The silent sender inserts its flow only once process 0's has failed and said
 * so over MPI, so no clock decides which comes first however loaded the machine. Nothing hangs;
 * the processes meet again on MPI after the late one's send. */
/* ctest-label: mpi */
/* ctest-mpi-procs: 2 */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <setjmp.h>
#include <cmocka.h>

#include "distributed/dist.h"
#include "mpi_common.h"
#include <tessera/distribution.h>

enum { BOUND_S = 1, LATE_S = 4, LIMIT_S = 20, GAVE_UP = 78 };

static int late_write(const tessera_exec_t *ex, void *args) {
  (void)ex, (void)args;
  tt_sleep_us(LATE_S * 1000000L);
  return 0;
}

static int read_write(const tessera_exec_t *ex, void *args) {
  (void)ex, (void)args;
  return 0;
}

static const tessera_kernel_t k_late = {.name = "test_late_write",
                                        .impl = {[TESSERA_DEVICE_CPU] = late_write}};
static const tessera_kernel_t k_read = {.name = "test_read_write",
                                        .impl = {[TESSERA_DEVICE_CPU] = read_write}};

static int insert(tessera_context_t *ctx, const tessera_kernel_t *k, int ndata,
                  tessera_data_t *const *d, const tessera_access_t *m) {
  tessera_task_t t = {.kernel = k, .ndata = ndata};
  for (int i = 0; i < ndata; i++) t.data[i] = d[i], t.mode[i] = m[i];
  return tsr_dist_insert(ctx, &t);
}

/* Process 1 writes its panel in a task (`busy`: one that runs LATE_S seconds; else once process
 * 0's flow has ended, silent until then), process 0 then reads it. Returns the flow's status
 * and its duration. */
static int late_flow(bool busy, tessera_comm_t **cp, double *waited) {
  tessera_comm_t *c = NULL;
  tessera_comm_config_t cc = {.timeout_s = BOUND_S};
  assert_int_equal(tessera_comm_create(&cc, &c), 0);
  const int rank = tessera_comm_rank(c);
  tessera_context_t *ctx = tt_cpu_context(1, TESSERA_SCHED_AUTO);
  /* two 8 x 8 panels, one per process: a message sent at once (eagerly) when its turn comes */
  tessera_matrix_t *A = NULL;
  assert_int_equal(tessera_matrix_create_distributed(ctx, c, (tessera_grid_t){1, 2}, TESSERA_F64, 8,
                                                     16, 8, 8, &A),
                   0);
  tessera_data_t *mine = tessera_matrix_tile(A, 0, 0), *late = tessera_matrix_tile(A, 0, 1);
  const tessera_access_t w[1] = {TESSERA_W}, rw[2] = {TESSERA_R, TESSERA_W};
  /* both processes start the flow together: a process slow to make its context under load
   * would otherwise look silent to the other for longer than the bound */
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = tt_now();
  if (rank == 1 && !busy)
    MPI_Recv(NULL, 0, MPI_BYTE, 0, GAVE_UP, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  assert_int_equal(insert(ctx, busy ? &k_late : &k_read, 1, &late, w), 0);
  assert_int_equal(insert(ctx, &k_read, 2, (tessera_data_t *const[]){late, mine}, rw), 0);
  const int rc = tessera_wait_all(ctx);
  *waited = tt_now() - t0;
  /* process 0 frees the tile's receive buffer now, before a late message comes: it must find
   * no receive posted into it (process 1 sends it before its wait returns) */
  assert_int_equal(tessera_matrix_destroy(A), 0);
  if (rank == 0 && !busy) MPI_Send(NULL, 0, MPI_BYTE, 1, GAVE_UP, MPI_COMM_WORLD);
  tessera_finalize(ctx);
  MPI_Barrier(MPI_COMM_WORLD);
  *cp = c;
  return rc;
}

static void test_busy_sender(void **state) {
  (void)state;
  tessera_comm_t *c = NULL;
  double waited = 0;
  assert_int_equal(late_flow(true, &c, &waited), 0);
  /* the late task may start on process 1 a moment before process 0 starts its clock: the flow
   * waited for it past the bound, not necessarily its full LATE_S on process 0's clock */
  if (waited < LATE_S - BOUND_S)
    fail_msg("the flow took %.2f s, the late task %d s, the bound %d s", waited, LATE_S, BOUND_S);
  assert_int_equal(tessera_comm_destroy(c), 0);
}

static void test_silent_sender(void **state) {
  (void)state;
  tessera_comm_t *c = NULL;
  double waited = 0;
  const int rc = late_flow(false, &c, &waited);
  if (tessera_comm_rank(c) == 0) {
    assert_int_equal(rc, TESSERA_ERR_TIMEOUT);
    if (!strstr(tessera_comm_last_error(c), "TESSERA_COMM_TIMEOUT"))
      fail_msg("the timeout's message does not name TESSERA_COMM_TIMEOUT: %s",
               tessera_comm_last_error(c));
    if (waited < BOUND_S || waited > LIMIT_S)
      fail_msg("the flow failed after %.2f s, the bound is %d s", waited, BOUND_S);
  } else {
    assert_int_equal(rc, 0);
  }
  assert_int_equal(tessera_comm_destroy(c), 0);
}

int main(int argc, char **argv) {
  if (mpi_start(&argc, &argv)) return 2;
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_busy_sender),
                                     cmocka_unit_test(test_silent_sender)};
  return mpi_finish(cmocka_run_group_tests(tests, NULL, NULL));
}
