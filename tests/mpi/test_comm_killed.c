/* A process killed in the middle of a distributed potrf that starts while its matrix moves onto
 * tessera's layout (tessera_matrix_fit from a 1 x P grid: the tile copies and the factorization
 * one flow; SIGKILL: no handler, no message): the others' call returns an error within a bounded
 * time (the transfers and the processes' agreement on the status wait at most the
 * communicator's bound each), never hangs, and their communicator is then broken. Run under `mpirun
 * --enable-recovery` (Open MPI then lets the others go on rather than kill them); each survivor
 * prints one line and leaves with its verdict, without MPI_Finalize (which would wait for the dead
 * process). mpirun then exits 0 whatever the survivors' statuses, so ctest judges the lines: every
 * survivor's must say "failed within the bound" and none "WRONG" (CMakeLists.txt). A survivor
 * leaving ends the job for mpirun, the others with it, so each first waits until every survivor
 * has printed: each marks a file of the job's once printed (the communicator is broken). */
/* ctest-label: mpi */
/* ctest-mpi-procs: 2 3 */
/* ctest-mpi-flags: --enable-recovery */
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <setjmp.h>
#include <cmocka.h>

#include "mpi_common.h"
#include <tessera/distribution.h>

/* the bound, and the slack on top of three of them that a loaded machine's scheduling may add */
enum { BOUND_S = 2, SLACK_S = 15 };

/* Kills this process 0.1 s into the flow, which takes seconds: under way on every process. */
static void *die_soon(void *arg) {
  (void)arg;
  tt_sleep_us(100000);
  raise(SIGKILL);
  return NULL;
}

/* Marks this survivor's line printed in the job's file (named by PMIx's namespace, else the
 * launcher's process), then waits until `survivors` have, or until `deadline` (tt_now's). */
static void wait_for_survivors(int survivors, double deadline) {
  char path[192];
  const char *job = getenv("PMIX_NAMESPACE");
  if (job && strlen(job) < 100 && !strchr(job, '/'))
    snprintf(path, sizeof path, "/tmp/tessera-comm-killed-%s", job);
  else
    snprintf(path, sizeof path, "/tmp/tessera-comm-killed-%d", (int)getppid());
  const int fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0600);
  if (fd >= 0) {
    if (write(fd, "x", 1) != 1) deadline = 0;
    close(fd);
  }
  struct stat st;
  while (tt_now() < deadline && stat(path, &st) == 0 && st.st_size < survivors) tt_sleep_us(20000);
  if (stat(path, &st) == 0 && st.st_size >= survivors) unlink(path);
}

int main(int argc, char **argv) {
  if (mpi_start(&argc, &argv)) return 2;
  tessera_comm_t *c = NULL;
  tessera_comm_config_t cc = {.timeout_s = BOUND_S};
  if (tessera_comm_create(&cc, &c)) return 2;
  const int rank = tessera_comm_rank(c), size = tessera_comm_size(c);
  tessera_config_t cfg;
  tessera_config_init(&cfg);
  cfg.cpu_workers = 1;
  cfg.gpus = 0;
  tessera_context_t *ctx = NULL;
  tessera_matrix_t *A = NULL, *F = NULL;
  const int64_t n = 4096, nb = 64; /* seconds of work on one worker per process */
  if (tessera_init(&ctx, &cfg) ||
      tessera_matrix_create_distributed(ctx, c, (tessera_grid_t){1, size}, TESSERA_F64, n, n, nb,
                                        nb, &A))
    return 2;
  double *a = calloc((size_t)(n * n), sizeof *a);
  for (int64_t i = 0; i < n; i++) a[i + i * n] = (double)n; /* positive definite */
  tessera_matrix_import(A, a, n);
  pthread_t killer;
  if (tessera_comm_barrier(c, NULL)) return 2; /* the kill counts from a common start */
  if (rank == size - 1) pthread_create(&killer, NULL, die_soon, NULL);
  const double t0 = tt_now();
  int rc = tessera_matrix_fit(A, TESSERA_LAYOUT_TILES, 'L', TESSERA_FIT_ALWAYS, &F);
  if (!rc) rc = tessera_tile_potrf(TESSERA_LOWER, F);
  const double waited = tt_now() - t0;
  if (rank == size - 1) pause(); /* killed meanwhile, whatever potrf did */
  const int broken = tessera_comm_barrier(c, NULL);
  const bool ok = rc != 0 && waited < 3 * BOUND_S + SLACK_S && broken == TESSERA_ERR_STATE;
  printf("process %d: %s: fit and potrf returned %d (%s) after %.2f s, then %d\n", rank,
         ok ? "failed within the bound" : "WRONG", rc, tessera_strerror(rc), waited, broken);
  fflush(stdout);
  /* a late survivor within the bound prints by 3 bounds and the slack; the wait ends sooner once
   * all have printed */
  wait_for_survivors(size - 1, t0 + 4 * BOUND_S + SLACK_S + 5);
  _exit(ok ? 0 : 1); /* no MPI_Finalize: it would wait for the dead process */
}
