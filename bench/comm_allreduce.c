/* Device all-reduce (sum, f32) through tessera's communicator against NCCL called directly, in
 * the same run, on the same GPUs and buffers: the bus bandwidth of each (nccl-tests' busbw:
 * bytes / time x 2 (n - 1) / n over n endpoints).
 *
 *   mpirun -np 2 ./build/bench/bench_comm_allreduce [--mib 256] [--iters 20] [--rounds 5]
 *   ./build/bench/bench_comm_allreduce              (one process driving every GPU it sees)
 *
 * With one process the collectives are the group forms over all its GPUs; with several, each
 * process drives GPU (rank modulo the GPU count). Each round times `iters` all-reduces enqueued
 * back to back and waited for once, NCCL and tessera (on queues, and with no queue: complete on
 * return) taking turns; the best round of each is printed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(TESSERA_HAVE_NCCL)
#include <cuda_runtime.h>
#include <mpi.h>
#include <nccl.h>

#include "tessera/comm.h"

enum { MAXDEV = 16 };

typedef struct {
  int rank, size, ndev, dev[MAXDEV], endpoints;
  size_t count;
  float *send[MAXDEV], *recv[MAXDEV];
  cudaStream_t stream[MAXDEV];
  ncclComm_t nccl[MAXDEV];
  tessera_comm_t *comm;
  tessera_comm_queue_t *queue[MAXDEV];
} bench_t;

static int die(const char *what, const char *why) {
  fprintf(stderr, "bench_comm_allreduce: %s: %s\n", what, why);
  MPI_Abort(MPI_COMM_WORLD, 1);
  return 1;
}

static void sync_all(bench_t *b) {
  for (int i = 0; i < b->ndev; i++) cudaStreamSynchronize(b->stream[i]);
}

/* One round of `iters` all-reduces; method 0: NCCL, 1: tessera on queues, 2: tessera with no
 * queue. Returns seconds per all-reduce. */
static double round_of(bench_t *b, int method, int iters) {
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  for (int it = 0; it < iters; it++) {
    int rc = 0;
    if (method == 0) {
      ncclGroupStart();
      for (int i = 0; i < b->ndev; i++)
        ncclAllReduce(b->send[i], b->recv[i], b->count, ncclFloat32, ncclSum, b->nccl[i],
                      b->stream[i]);
      rc = ncclGroupEnd() == ncclSuccess ? 0 : -1;
    } else {
      tessera_comm_queue_t *const *qs = method == 1 ? b->queue : NULL;
      rc = b->ndev > 1 ? tessera_comm_allreduce_group(b->comm, (const void *const *)b->send,
                                                      (void *const *)b->recv, b->count,
                                                      TESSERA_COMM_F32, TESSERA_SUM, qs)
                       : tessera_comm_allreduce(b->comm, b->send[0], b->recv[0], b->count,
                                                TESSERA_COMM_F32, TESSERA_SUM, qs ? qs[0] : NULL);
    }
    if (rc) die("all-reduce", method ? tessera_comm_last_error(b->comm) : "NCCL failed");
  }
  sync_all(b);
  MPI_Barrier(MPI_COMM_WORLD);
  return (MPI_Wtime() - t0) / iters;
}

int main(int argc, char **argv) {
  int mib = 256, iters = 20, rounds = 5, provided = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--mib") && i + 1 < argc)
      mib = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--iters") && i + 1 < argc)
      iters = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
      rounds = atoi(argv[++i]);
    else {
      fprintf(stderr, "usage: %s [--mib M] [--iters I] [--rounds R]\n", argv[0]);
      return 2;
    }
  }
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  bench_t b = {.count = (size_t)mib * 1024 * 1024 / sizeof(float)};
  MPI_Comm_rank(MPI_COMM_WORLD, &b.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &b.size);
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    if (b.rank == 0) printf("bench_comm_allreduce: no GPU\n");
    MPI_Finalize();
    return 0;
  }
  b.ndev = b.size == 1 ? (count < MAXDEV ? count : MAXDEV) : 1;
  b.endpoints = b.size * b.ndev;
  for (int i = 0; i < b.ndev; i++) {
    b.dev[i] = b.size == 1 ? i : b.rank % count;
    cudaSetDevice(b.dev[i]);
    if (cudaMalloc((void **)&b.send[i], b.count * sizeof(float)) != cudaSuccess ||
        cudaMalloc((void **)&b.recv[i], b.count * sizeof(float)) != cudaSuccess ||
        cudaStreamCreateWithFlags(&b.stream[i], cudaStreamNonBlocking) != cudaSuccess)
      return die("buffers", "cudaMalloc failed");
    cudaMemset(b.send[i], 0, b.count * sizeof(float));
  }
  /* NCCL directly: its own communicator over the same endpoints */
  ncclUniqueId id;
  if (b.rank == 0) ncclGetUniqueId(&id);
  MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
  ncclGroupStart();
  for (int i = 0; i < b.ndev; i++) {
    cudaSetDevice(b.dev[i]);
    ncclCommInitRank(&b.nccl[i], b.endpoints, id, b.rank * b.ndev + i);
  }
  if (ncclGroupEnd() != ncclSuccess) return die("NCCL", "ncclCommInitRank failed");
  char why[256] = "";
  tessera_comm_config_t cfg = {
      .ndevices = b.ndev, .devices = b.dev, .error = why, .error_len = sizeof why};
  if (tessera_comm_create(&cfg, &b.comm)) return die("tessera_comm_create", why);
  for (int i = 0; i < b.ndev; i++)
    if (tessera_comm_queue_create(b.comm, i, b.stream[i], &b.queue[i]))
      return die("tessera_comm_queue_create", tessera_comm_last_error(b.comm));

  double best[3] = {1e30, 1e30, 1e30};
  for (int m = 0; m < 3; m++) round_of(&b, m, 2); /* warm-up: connections, first launches */
  for (int r = 0; r < rounds; r++)
    for (int m = 0; m < 3; m++) {
      double t = round_of(&b, m, iters);
      if (t < best[m]) best[m] = t;
    }
  const double bytes = (double)b.count * sizeof(float);
  const double factor = 2.0 * (b.endpoints - 1) / b.endpoints;
  if (b.rank == 0) {
    char line[256];
    tessera_comm_describe(line, sizeof line);
    printf("all-reduce sum f32, %d MiB, %d endpoint(s) (%d process(es) x %d GPU(s)); %s\n", mib,
           b.endpoints, b.size, b.ndev, line);
    printf("%-28s %10s %12s %8s\n", "method", "ms", "busbw GB/s", "vs NCCL");
    const char *names[3] = {"NCCL directly", "tessera, on queues", "tessera, no queue"};
    for (int m = 0; m < 3; m++)
      printf("%-28s %10.3f %12.1f %8.3f\n", names[m], best[m] * 1e3,
             bytes / best[m] * factor * 1e-9, best[0] / best[m]);
  }
  for (int i = 0; i < b.ndev; i++) {
    tessera_comm_queue_destroy(b.queue[i]);
    ncclCommDestroy(b.nccl[i]);
    cudaFree(b.send[i]);
    cudaFree(b.recv[i]);
    cudaStreamDestroy(b.stream[i]);
  }
  tessera_comm_destroy(b.comm);
  MPI_Finalize();
  return 0;
}
#else
int main(void) {
  printf("bench_comm_allreduce: built without MPI and NCCL\n");
  return 0;
}
#endif
