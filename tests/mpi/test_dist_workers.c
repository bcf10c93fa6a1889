/* A context over processes given no worker count shares the cores its processes run on: under
 * `mpirun --bind-to none` every process may run on every core of the machine, and the CPU
 * workers of all of them together are as many as the cores (one each where the processes
 * outnumber them), not as many cores on every process. A count given stays as given.
 */
/* ctest-label: mpi */
/* ctest-mpi-procs: 1 3 */
/* ctest-mpi-flags: --bind-to none */
#define _GNU_SOURCE
#include <sched.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <mpi.h>

#include "mpi_common.h"

/* The CPU workers of a distributed context of `cfg` on this process and on all of them. */
static void workers_of(const tessera_config_t *cfg, int *mine, int *all) {
  tessera_context_t *ctx = NULL;
  const int rc = tessera_init(&ctx, cfg);
  if (rc) fail_msg("process %d: tessera_init = %d", g_rank, rc);
  *mine = tessera_worker_count(ctx); /* no GPU: every worker is a CPU worker */
  MPI_Allreduce(mine, all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  assert_int_equal(tessera_finalize(ctx), 0);
}

static void test_processes_share_the_cores(void **state) {
  (void)state;
  unsetenv("TESSERA_CPU_WORKERS");
  cpu_set_t set;
  assert_int_equal(sched_getaffinity(0, sizeof set, &set), 0);
  const int cores = CPU_COUNT(&set);
  tessera_config_t cfg;
  tessera_config_init(&cfg);
  cfg.gpus = 0, cfg.distributed = 1;
  int mine = 0, all = 0;
  workers_of(&cfg, &mine, &all);
  const int want = cores > g_size ? cores : g_size;
  if (all != want)
    fail_msg("%d processes on %d cores have %d CPU workers in all, expected %d", g_size, cores, all,
             want);
  const int least = cores / g_size > 1 ? cores / g_size : 1;
  if (mine < least || mine > least + 1)
    fail_msg("process %d has %d CPU workers of %d cores shared by %d processes", g_rank, mine,
             cores, g_size);
  cfg.cpu_workers = 2;
  workers_of(&cfg, &mine, &all);
  assert_int_equal(mine, 2);
}

int main(int argc, char **argv) {
  if (mpi_start(&argc, &argv)) return 2;
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_processes_share_the_cores)};
  return mpi_finish(cmocka_run_group_tests(tests, NULL, NULL));
}
