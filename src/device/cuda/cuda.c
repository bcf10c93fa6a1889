/* The CUDA backend: opening the GPUs of a context (peer access, device descriptions, bandwidth
 * measured once between every pair of memory nodes) and the table of functions. Memory, copies,
 * workers, queues and events are in cuda_ops.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device/cuda/cuda_internal.h"
#include "tessera/types.h"

/* Bandwidth measurement: one untimed copy, then BW_REPS timed copies of BW_BYTES. */
enum { BW_BYTES = 32 << 20, BW_REPS = 2 };

/* Nominal f64 peak in GFLOP/s, until measured kernel times replace it. Hopper's f64 tensor cores
 * give ~60 TF/s; other data-centre parts (x.0 of Pascal, Volta, Ampere, Blackwell) have 64 f64
 * units per SM, consumer parts 2. */
static double nominal_gflops(const tsr_cuda_device_t *d) {
  if (d->major == 9) return 60000.0;
  int units =
      d->minor == 0 && (d->major == 6 || d->major == 7 || d->major == 8 || d->major == 10) ? 64 : 2;
  return (double)d->sms * (double)d->clock_khz * units * 2.0 / 1e6;
}

static int describe(tsr_cuda_device_t *d, int dev) {
  struct cudaDeviceProp prop;
  memset(&prop, 0, sizeof prop);
  if (tsr_cuda_status(cudaGetDeviceProperties(&prop, dev))) return TESSERA_ERR_BACKEND;
  prop.name[sizeof prop.name - 1] = 0;
  size_t n = strlen(prop.name);
  if (n >= sizeof d->name) n = sizeof d->name - 1;
  memcpy(d->name, prop.name, n);
  d->name[n] = 0;
  d->memory_bytes = prop.totalGlobalMem;
  d->sms = prop.multiProcessorCount;
  d->major = prop.major;
  d->minor = prop.minor;
  if (cudaDeviceGetAttribute(&d->clock_khz, cudaDevAttrClockRate, dev) != cudaSuccess) {
    (void)cudaGetLastError();
    d->clock_khz = 1000000; /* 1 GHz: only feeds the nominal rate */
  }
  d->gflops = nominal_gflops(d);
  return 0;
}

/* Lets every device read and write every other one where the hardware allows. A pair that
 * cannot be enabled still copies (staged by the driver); that is not an error. */
static int enable_peers(int n) {
  for (int i = 0; i < n; i++) {
    if (tsr_cuda_status(cudaSetDevice(i))) return TESSERA_ERR_BACKEND;
    for (int j = 0; j < n; j++) {
      int can = 0;
      if (i == j || cudaDeviceCanAccessPeer(&can, i, j) != cudaSuccess || !can) {
        (void)cudaGetLastError();
        continue;
      }
      cudaError_t e = cudaDeviceEnablePeerAccess(j, 0);
      if (e != cudaSuccess) (void)cudaGetLastError(); /* already enabled, too many peers */
    }
  }
  return 0;
}

/* Resources of one device for the measurement. */
typedef struct {
  void *buf;
  cudaStream_t stream;
  cudaEvent_t t0, t1;
} bw_dev_t;

/* Bytes/s of a copy of `bytes` from `src` (device `sdev`, -1 host) to `dst` (`ddev`), run on
 * the stream of device `on`; a negative value on failure. */
static double time_copy(bw_dev_t *b, int on, void *dst, int ddev, const void *src, int sdev,
                        size_t bytes) {
  bw_dev_t *d = &b[on];
  cudaError_t e = cudaSetDevice(on);
  for (int r = -1; r < BW_REPS && e == cudaSuccess; r++) {
    if (r == 0) e = cudaEventRecord(d->t0, d->stream);
    if (e != cudaSuccess) break;
    if (ddev >= 0 && sdev >= 0 && ddev != sdev)
      e = cudaMemcpyPeerAsync(dst, ddev, src, sdev, bytes, d->stream);
    else
      e = cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, d->stream);
  }
  if (e == cudaSuccess) e = cudaEventRecord(d->t1, d->stream);
  if (e == cudaSuccess) e = cudaEventSynchronize(d->t1);
  float ms = 0;
  if (e == cudaSuccess) e = cudaEventElapsedTime(&ms, d->t0, d->t1);
  if (tsr_cuda_status(e)) return -1.0;
  return ms > 0 ? (double)BW_REPS * (double)bytes / (1e-3 * (double)ms) : 0.0;
}

static int measure_all(tsr_cuda_state_t *s, bw_dev_t *b, void *host) {
  int n = s->ndev;
  double v;
  for (int d = 0; d < n; d++) {
    char *buf = b[d].buf;
    if ((v = time_copy(b, d, buf, d, host, -1, BW_BYTES)) < 0) return -1;
    s->bw[tsr_cuda_bw_slot(s, d, -1)] = v;
    if ((v = time_copy(b, d, host, -1, buf, d, BW_BYTES)) < 0) return -1;
    s->bw[tsr_cuda_bw_slot(s, -1, d)] = v;
    if ((v = time_copy(b, d, buf + BW_BYTES / 2, d, buf, d, BW_BYTES / 2)) < 0) return -1;
    s->bw[tsr_cuda_bw_slot(s, d, d)] = v;
  }
  /* Peer copies run on the destination's stream, as a worker prefetching its inputs does. */
  for (int dst = 0; dst < n; dst++)
    for (int src = 0; src < n; src++) {
      if (src == dst) continue;
      if ((v = time_copy(b, dst, b[dst].buf, dst, b[src].buf, src, BW_BYTES)) < 0) return -1;
      s->bw[tsr_cuda_bw_slot(s, dst, src)] = v;
    }
  return 0;
}

/* Fills s->bw; on failure leaves zeros (unknown) and says so. */
static void measure_bandwidth(tsr_cuda_state_t *s) {
  int n = s->ndev, rc = -1;
  void *host = NULL;
  bw_dev_t *b = calloc((size_t)n, sizeof *b);
  if (!b) return;
  int ready = tsr_cuda_status(cudaHostAlloc(&host, BW_BYTES, cudaHostAllocPortable)) == 0;
  for (int d = 0; d < n && ready; d++) {
    ready = cudaSetDevice(d) == cudaSuccess && cudaMalloc(&b[d].buf, BW_BYTES) == cudaSuccess &&
            cudaStreamCreateWithFlags(&b[d].stream, cudaStreamNonBlocking) == cudaSuccess &&
            cudaEventCreate(&b[d].t0) == cudaSuccess && cudaEventCreate(&b[d].t1) == cudaSuccess;
    if (!ready) (void)cudaGetLastError();
  }
  if (ready) rc = measure_all(s, b, host);
  for (int d = 0; d < n; d++) {
    if (cudaSetDevice(d) != cudaSuccess) continue;
    if (b[d].t1) (void)cudaEventDestroy(b[d].t1);
    if (b[d].t0) (void)cudaEventDestroy(b[d].t0);
    if (b[d].stream) (void)cudaStreamDestroy(b[d].stream);
    if (b[d].buf) (void)cudaFree(b[d].buf);
  }
  if (host) (void)cudaFreeHost(host);
  (void)cudaGetLastError();
  free(b);
  if (rc) {
    memset(s->bw, 0, (size_t)(n + 1) * (size_t)(n + 1) * sizeof *s->bw);
    fprintf(stderr, "tessera: CUDA bandwidth measurement failed; bandwidths unknown\n");
  }
}

static void cuda_close(void *state) {
  tsr_cuda_state_t *s = state;
  if (!s) return;
  /* Peer access stays enabled: it is per process, and another context may rely on it. */
  free(s->bw);
  free(s->dev);
  free(s);
}

static int cuda_open(int max_devices, int *ndevices, void **state) {
  *ndevices = 0;
  *state = NULL;
  tsr_cuda_state_t *s = calloc(1, sizeof *s);
  if (!s) return TESSERA_ERR_NOMEM;
  *state = s;
  int count = 0;
  /* No driver, no device, or a driver too old: a machine without GPU, quietly. */
  if (cudaGetDeviceCount(&count) != cudaSuccess || count <= 0) {
    (void)cudaGetLastError();
    return 0;
  }
  if (max_devices >= 0 && count > max_devices) count = max_devices;
  if (count == 0) return 0;

  int prev = -1;
  if (cudaGetDevice(&prev) != cudaSuccess) {
    (void)cudaGetLastError();
    prev = -1;
  }
  s->dev = calloc((size_t)count, sizeof *s->dev);
  s->bw = calloc((size_t)(count + 1) * (size_t)(count + 1), sizeof *s->bw);
  if (!s->dev || !s->bw) {
    cuda_close(s);
    *state = NULL;
    return TESSERA_ERR_NOMEM;
  }
  int rc = 0;
  for (int d = 0; d < count && !rc; d++) {
    rc = describe(&s->dev[d], d);
    if (rc) fprintf(stderr, "tessera: cannot query CUDA device %d\n", d);
  }
  if (!rc) {
    rc = enable_peers(count);
    if (rc) fprintf(stderr, "tessera: cannot make the CUDA devices current\n");
  }
  if (!rc) {
    s->ndev = count;
    measure_bandwidth(s);
  }
  if (prev >= 0) (void)tsr_cuda_status(cudaSetDevice(prev));
  if (rc) {
    cuda_close(s);
    *state = NULL;
    return rc;
  }
  *ndevices = count;
  return 0;
}

static int cuda_info(void *state, int dev, tessera_device_info_t *info) {
  const tsr_cuda_state_t *s = state;
  if (!s || !info || dev < 0 || dev >= s->ndev) return TESSERA_ERR_BACKEND;
  const tsr_cuda_device_t *d = &s->dev[dev];
  memset(info, 0, sizeof *info);
  info->kind = TESSERA_DEVICE_CUDA;
  info->index = dev;
  info->workers = 1;
  info->memory_bytes = d->memory_bytes;
  info->gflops = d->gflops;
  memcpy(info->name, d->name,
         sizeof info->name < sizeof d->name ? sizeof info->name : sizeof d->name);
  info->name[sizeof info->name - 1] = 0;
  return 0;
}

static double cuda_bandwidth(void *state, int dst_dev, int src_dev) {
  const tsr_cuda_state_t *s = state;
  if (!s || !s->bw || dst_dev < -1 || src_dev < -1 || dst_dev >= s->ndev || src_dev >= s->ndev)
    return 0.0;
  return s->bw[tsr_cuda_bw_slot(s, dst_dev, src_dev)];
}

static int cuda_enter(void *state, int dev, int *prev) {
  return tsr_cuda_enter(state, dev, prev);
}

static void cuda_leave(void *state, int dev, int prev) {
  (void)state;
  tsr_cuda_leave(dev, prev);
}

static const tsr_backend_t cuda_backend = {
    .name = "cuda",
    .kind = TESSERA_DEVICE_CUDA,
    .async = true,
    .open = cuda_open,
    .close = cuda_close,
    .info = cuda_info,
    .alloc = tsr_cuda_alloc,
    .free = tsr_cuda_free,
    .host_alloc = tsr_cuda_host_alloc,
    .host_free = tsr_cuda_host_free,
    .host_register = tsr_cuda_host_register,
    .host_unregister = tsr_cuda_host_unregister,
    .copy2d = tsr_cuda_copy2d,
    .worker_start = tsr_cuda_worker_start,
    .enter = cuda_enter,
    .leave = cuda_leave,
    .queue_create = tsr_cuda_queue_create,
    .queue_create_urgent = tsr_cuda_queue_create_urgent,
    .queue_destroy = tsr_cuda_queue_destroy,
    .event_create = tsr_cuda_event_create,
    .event_destroy = tsr_cuda_event_destroy,
    .event_record = tsr_cuda_event_record,
    .event_query = tsr_cuda_event_query,
    .event_sync = tsr_cuda_event_sync,
    .queue_wait_event = tsr_cuda_queue_wait_event,
    .event_create_timed = tsr_cuda_event_create_timed,
    .event_elapsed = tsr_cuda_event_elapsed,
    .queue_sync = tsr_cuda_queue_sync,
    .mem_info = tsr_cuda_mem_info,
    .bandwidth = cuda_bandwidth,
};

const tsr_backend_t *tsr_backend_cuda(void) {
  return &cuda_backend;
}
