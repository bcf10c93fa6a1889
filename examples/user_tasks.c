/* Builds a small task graph of user kernels on user data and lets tessera infer the order.
 *
 * Four vectors x0..x3. Each "axpy" task reads one vector and updates another; the runtime adds
 * the read-after-write and write-after-read edges, so the result equals running the tasks in
 * the order they were inserted, while independent tasks run in parallel. */
#include <stdio.h>

#include <tessera/tessera.h>

#define LEN 1000

typedef struct {
  double alpha;
} axpy_args_t;

/* y += alpha * x, with buffers {x (R), y (RW)}. */
static int axpy_cpu(const tessera_exec_t *ex, void *args) {
  const double *x = ex->ptr[0];
  double *y = ex->ptr[1];
  double alpha = ((const axpy_args_t *)args)->alpha;
  for (int i = 0; i < LEN; i++) y[i] += alpha * x[i];
  return 0;
}

static double axpy_flops(const void *args) {
  (void)args;
  return 2.0 * LEN;
}

static const tessera_kernel_t axpy = {
    .name = "axpy", .impl = {[TESSERA_DEVICE_CPU] = axpy_cpu}, .flops = axpy_flops};

int main(void) {
  static double x[4][LEN];
  for (int v = 0; v < 4; v++)
    for (int i = 0; i < LEN; i++) x[v][i] = v + 1;

  tessera_context_t *ctx;
  int rc = tessera_init(&ctx, NULL);
  if (rc) {
    fprintf(stderr, "tessera_init: %s\n", tessera_strerror(rc));
    return 1;
  }
  tessera_data_t *h[4];
  for (int v = 0; v < 4; v++)
    tessera_data_register(ctx, TESSERA_HOST_NODE, x[v], LEN, 1, LEN, sizeof(double), &h[v]);

  /* x1 += x0; x2 += x0 (independent of the first); x3 += 2 x1 (after the first);
   * x0 += x3 (after the third, and after the first two have read x0). */
  const int src[4] = {0, 0, 1, 3}, dst[4] = {1, 2, 3, 0};
  const double alpha[4] = {1, 1, 2, 1};
  for (int t = 0; t < 4; t++) {
    axpy_args_t a = {alpha[t]};
    tessera_task_t task = {.kernel = &axpy,
                           .args = &a,
                           .args_size = sizeof a,
                           .ndata = 2,
                           .data = {h[src[t]], h[dst[t]]},
                           .mode = {TESSERA_R, TESSERA_RW}};
    rc = tessera_task_insert(ctx, &task);
    if (rc) fprintf(stderr, "insert: %s\n", tessera_last_error(ctx));
  }
  rc = tessera_wait_all(ctx);
  for (int v = 0; v < 4; v++) tessera_data_release(ctx, h[v]);
  tessera_finalize(ctx);

  /* Sequentially: x1 = 3, x2 = 4, x3 = 4 + 2*3 = 10, x0 = 1 + 10 = 11. */
  printf("x = %g %g %g %g (expected 11 3 4 10)\n", x[0][0], x[1][0], x[2][0], x[3][0]);
  return rc || x[0][0] != 11 || x[1][0] != 3 || x[2][0] != 4 || x[3][0] != 10;
}
