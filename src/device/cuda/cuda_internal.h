/* The CUDA backend's state and the helpers its files share (cuda.c: open, close, device
 * descriptions, measured bandwidths and the table; cuda_ops.c, below it: status and current
 * device helpers, memory, copies, workers, queues and events).
 * Everything mutable lives in the state a context owns: no globals. */
#ifndef TSR_CUDA_INTERNAL_H
#define TSR_CUDA_INTERNAL_H

#include <stddef.h>

#include <cuda_runtime.h>

#include "device/backend.h"

/** What open() learned about one device. */
typedef struct {
  char name[96];
  size_t memory_bytes;
  int sms;
  int clock_khz;
  int major, minor; /* compute capability */
  double gflops;    /* nominal f64 peak */
} tsr_cuda_device_t;

/** State of the backend for one context. */
typedef struct {
  int ndev;
  tsr_cuda_device_t *dev; /* ndev entries */
  double *bw;             /* (ndev+1)^2 bytes/s, see tsr_cuda_bw_slot(); 0 = unknown */
} tsr_cuda_state_t;

/** Index in `bw` of a copy from `src` to `dst` (-1: host). */
static inline size_t tsr_cuda_bw_slot(const tsr_cuda_state_t *s, int dst, int src) {
  return (size_t)(dst + 1) * (size_t)(s->ndev + 1) + (size_t)(src + 1);
}

/** 0 for cudaSuccess; otherwise clears the thread's last CUDA error and returns
 *  TESSERA_ERR_BACKEND. */
int tsr_cuda_status(cudaError_t e);

/** Makes `dev` the calling thread's current device, remembering the previous one in `*prev`
 *  for tsr_cuda_leave(). Returns 0, or TESSERA_ERR_BACKEND for an invalid device. */
int tsr_cuda_enter(const tsr_cuda_state_t *s, int dev, int *prev);
/** Restores the device that was current before tsr_cuda_enter(). */
void tsr_cuda_leave(int dev, int prev);

/* Entries of the table implemented in cuda_ops.c (see backend.h for their contracts). */
void *tsr_cuda_alloc(void *state, int dev, size_t bytes);
void tsr_cuda_free(void *state, int dev, void *ptr);
void *tsr_cuda_host_alloc(void *state, size_t bytes);
int tsr_cuda_host_register(void *state, void *ptr, size_t bytes);
void tsr_cuda_host_unregister(void *state, void *ptr);
void tsr_cuda_host_free(void *state, void *ptr);
int tsr_cuda_copy2d(void *state, int dst_dev, void *dst, size_t ldd, int src_dev, const void *src,
                    size_t lds, size_t rows, size_t cols, size_t elsize, void *queue);
int tsr_cuda_worker_start(void *state, int dev);
int tsr_cuda_queue_create(void *state, int dev, void **queue);
int tsr_cuda_queue_create_urgent(void *state, int dev, void **queue);
void tsr_cuda_queue_destroy(void *state, int dev, void *queue);
int tsr_cuda_event_create(void *state, int dev, void **event);
void tsr_cuda_event_destroy(void *state, int dev, void *event);
int tsr_cuda_event_record(void *state, void *event, void *queue);
int tsr_cuda_event_query(void *state, void *event);
int tsr_cuda_event_sync(void *state, void *event);
int tsr_cuda_queue_wait_event(void *state, void *queue, void *event);
int tsr_cuda_event_create_timed(void *state, int dev, void **event);
int tsr_cuda_event_elapsed(void *state, void *from, void *to, double *seconds);
int tsr_cuda_queue_sync(void *state, void *queue);
int tsr_cuda_mem_info(void *state, int dev, size_t *free_bytes, size_t *total_bytes);

#endif
