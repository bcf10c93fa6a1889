/* A program that initialised MPI with plain MPI_Init (no MPI_THREAD_MULTIPLE) is refused a
 * distributed context at tessera_init, with a sentence saying what it needs, on every process
 * alike; MPI stays usable, and a communicator alone (no threads of tessera's) still works.
 */
/* ctest-label: mpi */
/* ctest-mpi-procs: 2 */
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

static void test_refused_at_init(void **state) {
  (void)state;
  int provided = MPI_THREAD_SINGLE;
  MPI_Query_thread(&provided);
  if (provided >= MPI_THREAD_MULTIPLE) skip(); /* this MPI grants it to MPI_Init */
  tessera_config_t cfg;
  tessera_config_init(&cfg);
  cfg.cpu_workers = 1, cfg.gpus = 0, cfg.distributed = 1;
  tessera_context_t *ctx = NULL;
  char said[1024];
  const int rc = tt_init_saying(&ctx, &cfg, said, sizeof said);
  if (rc != TESSERA_ERR_UNSUPPORTED)
    fail_msg("process %d: tessera_init after MPI_Init = %d, expected %d", g_rank, rc,
             TESSERA_ERR_UNSUPPORTED);
  assert_null(ctx);
  if (g_rank == 0 && !strstr(said, "needs MPI_THREAD_MULTIPLE"))
    fail_msg("tessera_init said \"%s\"", said);
  tessera_comm_t *comm = NULL;
  assert_int_equal(tessera_comm_create(NULL, &comm), 0);
  int64_t x = 1;
  assert_int_equal(tessera_comm_allreduce(comm, &x, &x, 1, TESSERA_COMM_I64, TESSERA_SUM, NULL), 0);
  assert_int_equal(x, g_size);
  assert_int_equal(tessera_comm_destroy(comm), 0);
}

int main(int argc, char **argv) {
  if (MPI_Init(&argc, &argv) != MPI_SUCCESS) return 2;
  tt_watchdog(280);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_refused_at_init)};
  return mpi_finish(cmocka_run_group_tests(tests, NULL, NULL));
}
