/* Device collectives (NCCL) through tessera's communicator: every collective on GPU buffers,
 * with and without queues. One process drives every GPU it sees (the group forms); several
 * processes drive one GPU each (the plain forms and send / recv); with more processes than
 * GPUs, the refusal of a GPU driven by two of them.
 * Values are small integers, exact in every type. */
/* ctest-label: mpi */
/* ctest-label: gpu */
/* ctest-mpi-procs: 1 2 */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <cuda_runtime.h>

#include "mpi_common.h"

enum { N = 1003, MAXDEV = 16 };

/* g_comm, g_rank, g_size (mpi_common.h): here the communicator drives GPUs */
static int g_ndev, g_dev[MAXDEV], g_endpoints;
static cudaStream_t g_stream[MAXDEV];
static tessera_comm_queue_t *g_queues[MAXDEV];

static const tessera_comm_type_t types[] = {TESSERA_COMM_F32,  TESSERA_COMM_F64, TESSERA_COMM_C64,
                                            TESSERA_COMM_C128, TESSERA_COMM_I32, TESSERA_COMM_I64};
enum { NTYPES = sizeof types / sizeof types[0] };

static int reals(tessera_comm_type_t t) {
  return is_complex(t) ? 2 : 1;
}

/* What endpoint e holds in real slot k: small integers. */
static double slot_value(int e, size_t k) {
  return (double)(e + 1) + (double)(k % 5);
}

/* A device buffer of `n` elements of t on local GPU i, slot k holding slot_value(e, k) (or zero).
 */
static void *dev_buf(int i, tessera_comm_type_t t, size_t n, int e, int zero) {
  const size_t slots = n * (size_t)reals(t), bytes = n * esize(t);
  void *h = calloc(1, bytes ? bytes : 1), *d = NULL;
  for (size_t k = 0; !zero && k < slots; k++) put_scalar(t, h, k, slot_value(e, k));
  assert_int_equal(cudaSetDevice(g_dev[i]), cudaSuccess);
  assert_int_equal(cudaMalloc(&d, bytes ? bytes : 1), cudaSuccess);
  assert_int_equal(cudaMemcpy(d, h, bytes, cudaMemcpyHostToDevice), cudaSuccess);
  free(h);
  return d;
}

/* Checks slot k of device buffer d (n elements of t) against want(k). */
static void check_dev(const void *d, tessera_comm_type_t t, size_t n, double (*want)(size_t, int),
                      int arg, const char *what) {
  const size_t slots = n * (size_t)reals(t), bytes = n * esize(t);
  void *h = malloc(bytes ? bytes : 1);
  assert_int_equal(cudaMemcpy(h, d, bytes, cudaMemcpyDeviceToHost), cudaSuccess);
  for (size_t k = 0; k < slots; k++)
    if (get_scalar(t, h, k) != want(k, arg))
      fail_msg("%s, type %d, slot %zu: %g, expected %g", what, (int)t, k, get_scalar(t, h, k),
               want(k, arg));
  free(h);
}

static double sum_of(size_t k, int unused) {
  (void)unused;
  double s = 0;
  for (int e = 0; e < g_endpoints; e++) s += slot_value(e, k);
  return s;
}
static double from(size_t k, int e) {
  return slot_value(e, k);
}

/* The endpoint of local GPU i. */
static int endpoint(int i) {
  return g_rank * g_ndev + i;
}

/* Waits for what `queued` put on the queues (or nothing when it ran without). */
static void settle(int queued) {
  for (int i = 0; queued && i < g_ndev; i++)
    assert_int_equal(tessera_comm_queue_sync(g_queues[i]), 0);
}

/* All-reduce (sum), broadcast, all-gather, reduce-scatter and reduce over every endpoint, every
 * type, without and with queues: the group forms when this process drives several GPUs. */
static void test_collectives(void **state) {
  (void)state;
  for (int queued = 0; queued < 2; queued++)
    for (int k = 0; k < NTYPES; k++) {
      const tessera_comm_type_t t = types[k];
      void *send[MAXDEV], *recv[MAXDEV], *all[MAXDEV];
      for (int i = 0; i < g_ndev; i++) {
        send[i] = dev_buf(i, t, N, endpoint(i), 0);
        recv[i] = dev_buf(i, t, N, 0, 1);
        all[i] = dev_buf(i, t, N * (size_t)g_endpoints, 0, 1);
      }
      tessera_comm_queue_t *const *qs = queued ? g_queues : NULL;
      const int group = g_ndev > 1;
      int rc = group ? tessera_comm_allreduce_group(g_comm, (const void *const *)send, recv, N, t,
                                                    TESSERA_SUM, qs)
                     : tessera_comm_allreduce(g_comm, send[0], recv[0], N, t, TESSERA_SUM,
                                              queued ? g_queues[0] : NULL);
      if (rc) fail_msg("allreduce: %d (%s)", rc, tessera_comm_last_error(g_comm));
      settle(queued);
      for (int i = 0; i < g_ndev; i++) check_dev(recv[i], t, N, sum_of, 0, "allreduce");

      rc = group ? tessera_comm_allgather_group(g_comm, (const void *const *)send, all, N, t, qs)
                 : tessera_comm_allgather(g_comm, send[0], all[0], N, t, qs ? qs[0] : NULL);
      if (rc) fail_msg("allgather: %d (%s)", rc, tessera_comm_last_error(g_comm));
      settle(queued);
      for (int i = 0; i < g_ndev; i++)
        for (int e = 0; e < g_endpoints; e++)
          check_dev((char *)all[i] + (size_t)e * N * esize(t), t, N, from, e, "allgather");

      /* reduce-scatter of the gathered blocks: endpoint e gets endpoints x block e */
      rc = group ? tessera_comm_reduce_scatter_group(g_comm, (const void *const *)all, recv, N, t,
                                                     TESSERA_SUM, qs)
                 : tessera_comm_reduce_scatter(g_comm, all[0], recv[0], N, t, TESSERA_SUM,
                                               qs ? qs[0] : NULL);
      if (rc) fail_msg("reduce_scatter: %d (%s)", rc, tessera_comm_last_error(g_comm));
      settle(queued);
      for (int i = 0; i < g_ndev; i++) {
        void *h = malloc(N * esize(t));
        cudaMemcpy(h, recv[i], N * esize(t), cudaMemcpyDeviceToHost);
        for (size_t s = 0; s < N * (size_t)reals(t); s++)
          if (get_scalar(t, h, s) != g_endpoints * slot_value(endpoint(i), s))
            fail_msg("reduce_scatter type %d slot %zu: %g", (int)t, s, get_scalar(t, h, s));
        free(h);
      }

      const int root = g_endpoints - 1;
      rc = group ? tessera_comm_broadcast_group(g_comm, send, N, t, root, qs)
                 : tessera_comm_broadcast(g_comm, send[0], N, t, root, qs ? qs[0] : NULL);
      if (rc) fail_msg("broadcast: %d (%s)", rc, tessera_comm_last_error(g_comm));
      settle(queued);
      for (int i = 0; i < g_ndev; i++) check_dev(send[i], t, N, from, root, "broadcast");
      for (int i = 0; i < g_ndev; i++) cudaFree(send[i]), cudaFree(recv[i]), cudaFree(all[i]);
    }
}

/* Sends around the ring of endpoints, one GPU per process, on the queues (NCCL connects a pair
 * of endpoints on their first exchange: one thread cannot drive both ends, see comm.h). */
static void test_send_recv(void **state) {
  (void)state;
  if (g_endpoints < 2 || g_ndev > 1) skip();
  const tessera_comm_type_t t = TESSERA_COMM_F64;
  void *send[MAXDEV], *recv[MAXDEV];
  for (int i = 0; i < g_ndev; i++) {
    send[i] = dev_buf(i, t, N, endpoint(i), 0);
    recv[i] = dev_buf(i, t, N, 0, 1);
  }
  for (int i = 0; i < g_ndev; i++) {
    const int next = (endpoint(i) + 1) % g_endpoints;
    const int prev = (endpoint(i) + g_endpoints - 1) % g_endpoints;
    /* a send waits for its receive, on the stream too: odd endpoints send first, even ones
     * receive first, so no ring of streams waits on each other's sends */
    for (int turn = 0; turn < 2; turn++)
      assert_int_equal((turn == endpoint(i) % 2)
                           ? tessera_comm_recv(g_comm, recv[i], N, t, prev, g_queues[i])
                           : tessera_comm_send(g_comm, send[i], N, t, next, g_queues[i]),
                       0);
  }
  settle(1);
  for (int i = 0; i < g_ndev; i++)
    check_dev(recv[i], t, N, from, (endpoint(i) + g_endpoints - 1) % g_endpoints, "recv");
  for (int i = 0; i < g_ndev; i++) cudaFree(send[i]), cudaFree(recv[i]);
}

/* What NCCL cannot do is refused with a sentence, and the communicator goes on working. */
static void test_refusals(void **state) {
  (void)state;
  void *bufs[MAXDEV];
  for (int i = 0; i < g_ndev; i++) bufs[i] = dev_buf(i, TESSERA_COMM_C64, N, endpoint(i), 0);
  int rc = g_ndev > 1 ? tessera_comm_allreduce_group(g_comm, (const void *const *)bufs, bufs, N,
                                                     TESSERA_COMM_C64, TESSERA_PROD, NULL)
                      : tessera_comm_allreduce(g_comm, bufs[0], bufs[0], N, TESSERA_COMM_C64,
                                               TESSERA_PROD, NULL);
  assert_int_equal(rc, TESSERA_ERR_UNSUPPORTED);
  assert_true(strlen(tessera_comm_last_error(g_comm)) > 0);
  if (g_ndev > 1) /* a plain collective on a communicator driving several GPUs */
    assert_int_equal(
        tessera_comm_allreduce(g_comm, bufs[0], bufs[0], N, TESSERA_COMM_C64, TESSERA_SUM, NULL),
        TESSERA_ERR_STATE);
  for (int i = 0; i < g_ndev; i++) cudaFree(bufs[i]);
  assert_int_equal(tessera_comm_barrier(g_comm, NULL), 0);
}

/* More processes than GPUs: two of them on one GPU, which NCCL cannot serve; the communicator
 * is refused on every process alike, with a message saying what to change. */
static void test_shared_gpu(void **state) {
  (void)state;
  int count = 0;
  assert_int_equal(cudaGetDeviceCount(&count), cudaSuccess);
  int dev = g_rank % count;
  char why[256] = "";
  tessera_comm_config_t cfg = {
      .ndevices = 1, .devices = &dev, .timeout_s = 60, .error = why, .error_len = sizeof why};
  tessera_comm_t *c = NULL;
  assert_int_equal(tessera_comm_create(&cfg, &c), -1);
  assert_null(c);
  if (!strstr(why, "drive the same GPU") || !strstr(why, "CUDA_VISIBLE_DEVICES"))
    fail_msg("process %d: message \"%s\"", g_rank, why);
}

static int setup(void **state) {
  (void)state;
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) return -1;
  g_ndev = g_size == 1 ? (count < MAXDEV ? count : MAXDEV) : 1;
  for (int i = 0; i < g_ndev; i++) g_dev[i] = g_size == 1 ? i : g_rank % count;
  char why[256] = "";
  tessera_comm_config_t cfg = {
      .ndevices = g_ndev, .devices = g_dev, .timeout_s = 60, .error = why, .error_len = sizeof why};
  int rc = tessera_comm_create(&cfg, &g_comm);
  if (rc) {
    fprintf(stderr, "tessera_comm_create: %d (%s)\n", rc, why);
    return -1;
  }
  g_endpoints = g_size * g_ndev;
  for (int i = 0; i < g_ndev; i++) {
    cudaSetDevice(g_dev[i]);
    if (cudaStreamCreate(&g_stream[i]) != cudaSuccess ||
        tessera_comm_queue_create(g_comm, i, g_stream[i], &g_queues[i]))
      return -1;
  }
  return 0;
}

static int teardown(void **state) {
  (void)state;
  for (int i = 0; i < g_ndev; i++) {
    tessera_comm_queue_destroy(g_queues[i]);
    cudaStreamDestroy(g_stream[i]);
  }
  return tessera_comm_destroy(g_comm);
}

int main(int argc, char **argv) {
  int provided = 0, count = 0;
  if (MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS) return 2;
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    if (g_rank == 0) printf("no GPU: the device collectives are not tested here\n");
    MPI_Finalize();
    return 0;
  }
  tt_watchdog(280);
  if (g_size > count) { /* two processes on one GPU: only the refusal is tested here */
    if (g_rank == 0)
      printf("%d processes and %d GPU%s: the collectives over processes need a GPU each\n", g_size,
             count, count > 1 ? "s" : "");
    const struct CMUnitTest shared[] = {cmocka_unit_test(test_shared_gpu)};
    int failed = cmocka_run_group_tests(shared, NULL, NULL);
    MPI_Finalize();
    return failed != 0;
  }
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_collectives),
                                     cmocka_unit_test(test_send_recv),
                                     cmocka_unit_test(test_refusals)};
  int failed = cmocka_run_group_tests(tests, setup, teardown);
  MPI_Finalize();
  return failed != 0;
}
