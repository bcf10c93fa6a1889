/* Solves a generated SPD system on a context spanning the processes of an mpirun (the README's
 * example): the arrays on process 0, the solve dealt over a grid of the processes. */
#include <stdio.h>
#include <stdlib.h>
#include <tessera/tessera.h>

int main(void) {
  enum { N = 2000 };
  tessera_config_t cfg;
  tessera_config_init(&cfg);
  cfg.distributed = 1; /* the processes of MPI_COMM_WORLD, grid TESSERA_GRID or the squarest */
  tessera_context_t *ctx;
  if (tessera_init(&ctx, &cfg)) return 1; /* collective: starts MPI if the program has not */
  int root = tessera_comm_rank(tessera_context_comm(ctx)) == 0;
  double *a = NULL, *b = NULL; /* the arrays live on process 0 only */
  if (root) {
    a = malloc(sizeof(double) * N * N), b = malloc(sizeof(double) * N);
    for (int j = 0; j < N; j++) {
      b[j] = 1;
      for (int i = 0; i < N; i++) a[i + j * N] = (i == j) ? N : 1.0 / (1 + i + j);
    }
  }
  int info = tessera_posv(ctx, TESSERA_LOWER, TESSERA_F64, N, 1, a, N, b, N); /* same everywhere */
  if (root) printf("posv: %d, x[0] = %g\n", info, b[0]);
  free(a), free(b);
  tessera_finalize(ctx);
  return info != 0;
}
