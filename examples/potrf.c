/* Factors a generated SPD matrix with the LAPACK-style call (the README's example). */
#include <stdio.h>
#include <tessera/tessera.h>

int main(void) {
  enum { N = 2000 };
  static double a[N * N]; /* column-major, lda = N */
  for (int j = 0; j < N; j++)
    for (int i = 0; i < N; i++) a[i + j * N] = (i == j) ? N : 1.0 / (1 + i + j);
  tessera_context_t *ctx;
  if (tessera_init(&ctx, NULL)) return 1; /* NULL: defaults + TESSERA_* variables */
  int info = tessera_potrf(ctx, TESSERA_LOWER, TESSERA_F64, N, a, N);
  if (info) fprintf(stderr, "potrf: %d (%s)\n", info, tessera_last_error(ctx));
  tessera_finalize(ctx);
  return info != 0;
}
