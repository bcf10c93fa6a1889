/* Simulated devices, for testing the runtime's device paths on machines without GPUs.
 *
 * Built only with -DTESSERA_SIM_DEVICES=ON (never together with CUDA). The devices are a kind of
 * their own (TESSERA_DEVICE_SIM), accelerators like GPUs as far as the runtime can tell: each a
 * memory node with its own pool, a worker bound to it,
 * queues, events, and copies to and from the host and between devices. Its memory is host
 * memory and its queues run their work at once (copies are memcpy, events are complete when
 * recorded), so the tile kernels of the CPU serve it. What this exercises is everything the
 * runtime does around devices: replicas on several nodes, transfers, pools, eviction and
 * write-back, tasks in flight, the asynchronous worker loop. The runtime opens as many as
 * TESSERA_SIM_DEVICES asks (default 2). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "device/backend.h"
#include "tessera/types.h"

#define SIM_MAX 16
#define SIM_MEMORY                                                                                 \
  ((size_t)4 << 30) /* what each device reports (pages are touched only when used) */

typedef struct {
  int ndevices;
} sim_state_t;

static int sim_open(int max_devices, int *ndevices, void **state) {
  sim_state_t *s = calloc(1, sizeof *s);
  if (!s) return TESSERA_ERR_NOMEM;
  /* the runtime asks for as many as stand in for GPUs (TESSERA_SIM_DEVICES) */
  int n = max_devices < 0 ? 2 : max_devices;
  if (n > SIM_MAX) n = SIM_MAX;
  s->ndevices = n;
  *ndevices = n;
  *state = s;
  return 0;
}

static void sim_close(void *state) {
  free(state);
}

static int sim_info(void *state, int dev, tessera_device_info_t *info) {
  (void)state;
  memset(info, 0, sizeof *info);
  info->kind = TESSERA_DEVICE_SIM;
  info->index = dev;
  info->workers = 1;
  info->memory_bytes = SIM_MEMORY;
  info->gflops = 40.0; /* it runs the CPU kernels */
  snprintf(info->name, sizeof info->name, "simulated device %d", dev);
  return 0;
}

static void *sim_alloc(void *state, int dev, size_t bytes) {
  (void)state, (void)dev;
  return aligned_alloc(256, (bytes + 255) / 256 * 256);
}

static void sim_free(void *state, int dev, void *ptr) {
  (void)state, (void)dev;
  free(ptr);
}

static void *sim_host_alloc(void *state, size_t bytes) {
  return sim_alloc(state, -1, bytes);
}
static void sim_host_free(void *state, void *ptr) {
  sim_free(state, -1, ptr);
}

/* Host memory is the devices' memory: pinning has nothing to do. */
static int sim_host_register(void *state, void *ptr, size_t bytes) {
  (void)state;
  return ptr && bytes ? 0 : -1;
}
static void sim_host_unregister(void *state, void *ptr) {
  (void)state, (void)ptr;
}

static int sim_copy2d(void *state, int dst_dev, void *dst, size_t ldd, int src_dev, const void *src,
                      size_t lds, size_t rows, size_t cols, size_t elsize, void *queue) {
  (void)state, (void)dst_dev, (void)src_dev, (void)queue;
  for (size_t j = 0; j < cols; j++)
    memcpy((char *)dst + j * ldd * elsize, (const char *)src + j * lds * elsize, rows * elsize);
  return 0;
}

/* Queues and events are plain tokens: work is done when enqueued. An event holds the time it
 * was recorded (the monotonic clock), so every event is also a timed one. */
static int sim_token(void *state, int dev, void **out) {
  (void)state, (void)dev;
  double *t = calloc(1, sizeof *t);
  *out = t;
  return *out ? 0 : TESSERA_ERR_NOMEM;
}

static void sim_untoken(void *state, int dev, void *token) {
  (void)state, (void)dev;
  free(token);
}

static int sim_record(void *state, void *event, void *queue) {
  (void)state, (void)queue;
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  *(double *)event = (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
  return 0;
}

static int sim_wait(void *state, void *queue, void *event) {
  (void)state, (void)queue, (void)event;
  return 0;
}

static int sim_elapsed(void *state, void *from, void *to, double *seconds) {
  (void)state;
  *seconds = *(const double *)to - *(const double *)from;
  return 0;
}

static int sim_query(void *state, void *event) {
  (void)state, (void)event;
  return 1;
}

static int sim_sync(void *state, void *event) {
  (void)state, (void)event;
  return 0;
}

static int sim_mem_info(void *state, int dev, size_t *free_bytes, size_t *total_bytes) {
  (void)state, (void)dev;
  *free_bytes = *total_bytes = SIM_MEMORY;
  return 0;
}

static double sim_bandwidth(void *state, int dst_dev, int src_dev) {
  (void)state;
  return dst_dev == src_dev ? 100e9 : dst_dev < 0 || src_dev < 0 ? 20e9 : 50e9;
}

static const tsr_backend_t sim_backend = {
    .name = "sim",
    .kind = TESSERA_DEVICE_SIM, /* a kind of its own; its kernels are the CPU's (kernels/table.h) */
    .async = true,
    .simulated = true,
    .open = sim_open,
    .close = sim_close,
    .info = sim_info,
    .alloc = sim_alloc,
    .free = sim_free,
    .host_alloc = sim_host_alloc,
    .host_register = sim_host_register,
    .host_unregister = sim_host_unregister,
    .host_free = sim_host_free,
    .copy2d = sim_copy2d,
    .queue_create = sim_token,
    .queue_create_urgent = sim_token,
    .queue_destroy = sim_untoken,
    .event_create = sim_token,
    .event_destroy = sim_untoken,
    .event_record = sim_record,
    .event_query = sim_query,
    .event_sync = sim_sync,
    .queue_wait_event = sim_wait,
    .event_create_timed = sim_token,
    .event_elapsed = sim_elapsed,
    .queue_sync = sim_sync,
    .mem_info = sim_mem_info,
    .bandwidth = sim_bandwidth,
};

const tsr_backend_t *tsr_backend_sim(void) {
  return &sim_backend;
}
