/* The move onto tessera's layout alone (tessera_matrix_fit), measured apart from any routine:
 * P processes of mpirun, each holding one column block of an N x N f64 matrix on its GPU (as
 * tessera.jax hands the binding A's row blocks, the column blocks of Aᵀ), copied onto tessera's
 * layout — block-cyclic tiles of the upper triangle over the fitted grid (the Cholesky family's,
 * `tiles`) or cyclic column panels (LU's and QR's, `panels`) — and waited for. Process 0 prints
 * the best time, the bytes changing process (all, and the busiest process's sent plus received)
 * and that process's rate. With 2 processes the same bytes also go as one NCCL message each way
 * (tessera_comm_send / recv of a device buffer, one direction after the other), the rate the
 * link gives a single large transfer, and the ratio of the two.
 *
 *   mpirun -np 2 ./build/bench/bench_dist_fit [N] [TILE] [tiles|panels] [REPS]
 *                                             (default 32768, 2048, tiles, 3)
 *
 * Each process should see a GPU of its own (CUDA_VISIBLE_DEVICES); without one the blocks live
 * in host memory and move over the host transport. N must be a multiple of P * TILE. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <tessera/tessera.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The bytes each process sends and receives in the move: tile or panel (i, j) of nb columns goes
 * from the owner of its column block (w columns each) to its owner on tessera's layout. */
static void moved(int64_t n, int64_t nb, int64_t w, bool panels, int procs, double *sent,
                  double *received) {
  const tessera_grid_t g = panels ? (tessera_grid_t){1, procs} : tessera_grid_fitted(procs);
  const int64_t nt = n / nb, mt = panels ? 1 : nt;
  const double bytes = (double)(panels ? n : nb) * (double)nb * sizeof(double);
  for (int64_t j = 0; j < nt; j++)
    for (int64_t i = 0; i < mt && (panels || i <= j); i++) {
      const int from = (int)(j * nb / w), to = tessera_grid_owner(g, i, j);
      if (from != to) sent[from] += bytes, received[to] += bytes;
    }
}

/* The same bytes as one message each way between processes 0 and 1 (`each` bytes from a device
 * buffer of `node`): seconds of the exchange, or a negative status. */
static double one_message(tessera_context_t *ctx, tessera_comm_t *comm, int node, size_t each) {
  const int rank = tessera_comm_rank(comm);
  tessera_data_t *h = NULL;
  if (tessera_data_create_on(ctx, node, each, 1, 1, &h)) return TESSERA_ERR_NOMEM;
  void *buf = tessera_data_ptr(h);
  const size_t count = each / sizeof(double);
  double best = INFINITY;
  int rc = 0;
  for (int r = 0; r < 2 && !rc; r++) { /* the first connects the pair */
    rc = tessera_comm_barrier(comm, NULL);
    const double t0 = now();
    for (int k = 0; k < 2 && !rc; k++)
      rc = k == rank ? tessera_comm_send(comm, buf, count, TESSERA_COMM_F64, 1 - rank, NULL)
                     : tessera_comm_recv(comm, buf, count, TESSERA_COMM_F64, 1 - rank, NULL);
    if (!rc) rc = tessera_comm_barrier(comm, NULL);
    if (now() - t0 < best) best = now() - t0;
  }
  tessera_data_release(ctx, h);
  return rc ? rc : best;
}

int main(int argc, char **argv) {
  const int64_t n = argc > 1 ? atoll(argv[1]) : 32768, nb = argc > 2 ? atoll(argv[2]) : 2048;
  const bool panels = argc > 3 && !strcmp(argv[3], "panels");
  const int reps = argc > 4 ? atoi(argv[4]) : 3;
  tessera_config_t cfg;
  tessera_config_init(&cfg);
  cfg.distributed = 1;
  tessera_context_t *ctx = NULL;
  if (tessera_init(&ctx, &cfg) || !tessera_context_comm(ctx)) {
    fprintf(stderr, "bench_dist_fit: no context over the processes: %s\n",
            ctx ? tessera_last_error(ctx) : "tessera_init failed");
    return 1;
  }
  tessera_comm_t *comm = tessera_context_comm(ctx);
  const int procs = tessera_comm_size(comm), rank = tessera_comm_rank(comm);
  const int64_t w = n / procs;
  if (nb < 1 || n < 1 || reps < 1 || n % (procs * nb)) {
    if (!rank)
      fprintf(stderr, "bench_dist_fit: N (%lld) must be a multiple of %d processes x TILE (%lld)\n",
              (long long)n, procs, (long long)nb);
    tessera_finalize(ctx);
    return 1;
  }
  tessera_device_info_t gpu;
  const int node = tessera_device_count(ctx, TESSERA_DEVICE_CUDA) > 0 &&
                           !tessera_device_info(ctx, TESSERA_DEVICE_CUDA, 0, &gpu)
                       ? gpu.memory_node
                       : TESSERA_HOST_NODE;
  /* this process's column block, filled a panel at a time from the host */
  tessera_data_t *block = NULL;
  double *host = malloc((size_t)(n * nb) * sizeof *host);
  int rc = host ? tessera_data_create_on(ctx, node, (size_t)n, (size_t)w, sizeof(double), &block)
                : TESSERA_ERR_NOMEM;
  char *a = rc ? NULL : tessera_data_ptr(block);
  for (int64_t c = 0; c < w && !rc; c += nb) {
    for (int64_t k = 0; k < n * nb; k++) host[k] = (double)((rank * w + c) * n + k);
    rc = tessera_memory_copy(ctx, node, a + (size_t)(c * n) * sizeof *host, TESSERA_HOST_NODE, host,
                             (size_t)(n * nb) * sizeof *host);
  }
  free(host);
  void *blocks[256] = {0};
  int nodes[256], owners[256];
  for (int p = 0; p < procs && p < 256; p++) nodes[p] = node, owners[p] = p;
  blocks[rank] = a;
  tessera_matrix_t *V = NULL;
  if (!rc && procs <= 256)
    rc = tessera_matrix_view_blocks(ctx, comm, TESSERA_F64, n, n, panels ? n : nb, nb, n, w, blocks,
                                    nodes, owners, n, &V);
  double best = INFINITY;
  for (int r = 0; r < reps && !rc; r++) {
    tessera_matrix_t *F = NULL;
    rc = tessera_comm_barrier(comm, NULL);
    const double t0 = now();
    if (!rc)
      rc = tessera_matrix_fit(V, panels ? TESSERA_LAYOUT_PANELS : TESSERA_LAYOUT_TILES,
                              panels ? 0 : 'U', TESSERA_FIT_ALWAYS, &F);
    if (!rc) rc = tessera_wait_all(ctx);
    if (!rc) rc = tessera_comm_barrier(comm, NULL);
    const double t = now() - t0;
    if (t < best) best = t;
    if (F && F != V) tessera_matrix_destroy(F);
  }
  double *sent = calloc((size_t)procs, sizeof *sent), *received = calloc((size_t)procs, 8);
  double all = 0, busiest = 0;
  if (sent && received) moved(n, nb, w, panels, procs, sent, received);
  for (int p = 0; sent && received && p < procs; p++) {
    all += sent[p];
    if (sent[p] + received[p] > busiest) busiest = sent[p] + received[p];
  }
  double single = NAN;
  if (!rc && procs == 2 && node != TESSERA_HOST_NODE && sent && sent[0] > 0) {
    const double s = one_message(ctx, comm, node, (size_t)sent[0]);
    if (s < 0) rc = (int)s;
    single = s;
  }
  if (rc && !rank) fprintf(stderr, "bench_dist_fit: %s\n", tessera_last_error(ctx));
  if (!rc && !rank) {
    printf("%d processes, N = %lld, tile %lld, %s%s\n", procs, (long long)n, (long long)nb,
           panels ? "cyclic column panels" : "block-cyclic tiles of the upper triangle",
           node == TESSERA_HOST_NODE ? " (host memory)" : "");
    printf("%-44s %10s %10s %12s\n", "run", "seconds", "GiB", "GB/s");
    printf("%-44s %10.4f %10.3f %12.1f\n", "the copy onto tessera's layout (busiest)", best,
           busiest / 1073741824.0, busiest / best * 1e-9);
    printf("%-44s %10s %10.3f\n", "  bytes changing process, all", "", all / 1073741824.0);
    if (!isnan(single))
      printf("%-44s %10.4f %10.3f %12.1f   copy / one message: %.2f\n",
             "one message each way (tessera_comm_send)", single, (sent[0] + sent[1]) / 1073741824.0,
             (sent[0] + sent[1]) / single * 1e-9, best / single);
  }
  free(sent), free(received);
  if (V) tessera_matrix_destroy(V);
  if (block) tessera_data_release(ctx, block);
  tessera_finalize(ctx);
  return rc ? 1 : 0;
}
