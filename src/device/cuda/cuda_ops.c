/* The CUDA backend's operations: device and pinned host memory, 2D copies (host, device, peer),
 * worker threads bound to a GPU, streams and events. */
#include <stdlib.h>
#include <string.h>

#include "device/cuda/cuda_internal.h"
#include "tessera/types.h"

/* ------------------------------------------------------------------ status and current device */

int tsr_cuda_status(cudaError_t e) {
  if (e == cudaSuccess) return 0;
  (void)cudaGetLastError();
  return TESSERA_ERR_BACKEND;
}

int tsr_cuda_enter(const tsr_cuda_state_t *s, int dev, int *prev) {
  *prev = -1;
  if (!s || dev < 0 || dev >= s->ndev) return TESSERA_ERR_BACKEND;
  if (cudaGetDevice(prev) != cudaSuccess) {
    (void)cudaGetLastError();
    *prev = -1;
  }
  if (*prev == dev) return 0;
  return tsr_cuda_status(cudaSetDevice(dev));
}

void tsr_cuda_leave(int dev, int prev) {
  if (prev >= 0 && prev != dev) (void)tsr_cuda_status(cudaSetDevice(prev));
}

/* ------------------------------------------------------------------ memory */

void *tsr_cuda_alloc(void *state, int dev, size_t bytes) {
  int prev;
  if (tsr_cuda_enter(state, dev, &prev)) return NULL;
  void *p = NULL;
  if (tsr_cuda_status(cudaMalloc(&p, bytes ? bytes : 1))) p = NULL;
  tsr_cuda_leave(dev, prev);
  return p;
}

void tsr_cuda_free(void *state, int dev, void *ptr) {
  int prev;
  if (!ptr || tsr_cuda_enter(state, dev, &prev)) return;
  (void)tsr_cuda_status(cudaFree(ptr));
  tsr_cuda_leave(dev, prev);
}

void *tsr_cuda_host_alloc(void *state, size_t bytes) {
  (void)state;
  void *p = NULL;
  if (tsr_cuda_status(cudaHostAlloc(&p, bytes ? bytes : 1, cudaHostAllocPortable))) p = NULL;
  return p;
}

void tsr_cuda_host_free(void *state, void *ptr) {
  (void)state;
  if (ptr) (void)tsr_cuda_status(cudaFreeHost(ptr));
}

int tsr_cuda_host_register(void *state, void *ptr, size_t bytes) {
  (void)state;
  return ptr && bytes && !tsr_cuda_status(cudaHostRegister(ptr, bytes, cudaHostRegisterPortable))
             ? 0
             : -1;
}

void tsr_cuda_host_unregister(void *state, void *ptr) {
  (void)state;
  if (ptr) (void)tsr_cuda_status(cudaHostUnregister(ptr));
}

int tsr_cuda_mem_info(void *state, int dev, size_t *free_bytes, size_t *total_bytes) {
  int prev;
  size_t f = 0, t = 0;
  int rc = tsr_cuda_enter(state, dev, &prev);
  if (rc) return rc;
  rc = tsr_cuda_status(cudaMemGetInfo(&f, &t));
  tsr_cuda_leave(dev, prev);
  if (free_bytes) *free_bytes = f;
  if (total_bytes) *total_bytes = t;
  return rc;
}

/* ------------------------------------------------------------------ copies */

/* Enqueues the copy on `st`; pointers are told apart by unified addressing, peer copies name
 * their devices (a 2D copy between two GPUs goes through cudaMemcpy3DPeerAsync). */
static cudaError_t enqueue_copy(int dst_dev, void *dst, size_t dpitch, int src_dev, const void *src,
                                size_t spitch, size_t width, size_t height, cudaStream_t st) {
  int peer = dst_dev >= 0 && src_dev >= 0 && dst_dev != src_dev;
  int contiguous = height == 1 || (dpitch == width && spitch == width);
  if (contiguous && peer)
    return cudaMemcpyPeerAsync(dst, dst_dev, src, src_dev, width * height, st);
  if (contiguous) return cudaMemcpyAsync(dst, src, width * height, cudaMemcpyDefault, st);
  if (!peer)
    return cudaMemcpy2DAsync(dst, dpitch, src, spitch, width, height, cudaMemcpyDefault, st);
  struct cudaMemcpy3DPeerParms p;
  memset(&p, 0, sizeof p);
  p.srcPtr.ptr = (void *)src;
  p.srcPtr.pitch = spitch;
  p.srcPtr.xsize = width;
  p.srcPtr.ysize = height;
  p.srcDevice = src_dev;
  p.dstPtr.ptr = dst;
  p.dstPtr.pitch = dpitch;
  p.dstPtr.xsize = width;
  p.dstPtr.ysize = height;
  p.dstDevice = dst_dev;
  p.extent.width = width;
  p.extent.height = height;
  p.extent.depth = 1;
  return cudaMemcpy3DPeerAsync(&p, st);
}

int tsr_cuda_copy2d(void *state, int dst_dev, void *dst, size_t ldd, int src_dev, const void *src,
                    size_t lds, size_t rows, size_t cols, size_t elsize, void *queue) {
  const tsr_cuda_state_t *s = state;
  if (rows == 0 || cols == 0 || elsize == 0) return 0;
  if (!s || !dst || !src || ldd < rows || lds < rows || dst_dev < -1 || src_dev < -1 ||
      dst_dev >= s->ndev || src_dev >= s->ndev)
    return TESSERA_ERR_BACKEND;
  size_t width = rows * elsize;
  if (queue) { /* enqueued with the queue's device current (the caller's may be another) */
    int dev = -1, prev = -1;
    if (cudaStreamGetDevice((cudaStream_t)queue, &dev) != cudaSuccess ||
        tsr_cuda_enter(s, dev, &prev))
      return TESSERA_ERR_BACKEND;
    const cudaError_t e = enqueue_copy(dst_dev, dst, ldd * elsize, src_dev, src, lds * elsize,
                                       width, cols, (cudaStream_t)queue);
    tsr_cuda_leave(dev, prev);
    return tsr_cuda_status(e);
  }
  /* Synchronous: the calling thread's own stream of the device involved (it orders after
   * nothing else on the device and nothing waits on it), then wait for that stream. */
  int dev = dst_dev >= 0 ? dst_dev : src_dev, prev = -1;
  if (dev >= 0 && tsr_cuda_enter(s, dev, &prev)) return TESSERA_ERR_BACKEND;
  cudaError_t e = enqueue_copy(dst_dev, dst, ldd * elsize, src_dev, src, lds * elsize, width, cols,
                               cudaStreamPerThread);
  if (e == cudaSuccess) e = cudaStreamSynchronize(cudaStreamPerThread);
  if (dev >= 0) tsr_cuda_leave(dev, prev);
  return tsr_cuda_status(e);
}

/* ------------------------------------------------------------------ workers */

int tsr_cuda_worker_start(void *state, int dev) {
  const tsr_cuda_state_t *s = state;
  if (!s || dev < 0 || dev >= s->ndev) return TESSERA_ERR_BACKEND;
  /* The thread serves this device for its whole life: no restore. */
  return tsr_cuda_status(cudaSetDevice(dev));
}

/* ------------------------------------------------------------------ queues and events */

/* A non-blocking stream of the default priority, or of the device's highest (`urgent`). */
static int queue_create(void *state, int dev, bool urgent, void **queue) {
  int prev;
  *queue = NULL;
  int rc = tsr_cuda_enter(state, dev, &prev);
  if (rc) return rc;
  cudaStream_t st = NULL;
  int least = 0, greatest = 0;
  if (urgent) rc = tsr_cuda_status(cudaDeviceGetStreamPriorityRange(&least, &greatest));
  if (!rc)
    rc = tsr_cuda_status(
        cudaStreamCreateWithPriority(&st, cudaStreamNonBlocking, urgent ? greatest : 0));
  tsr_cuda_leave(dev, prev);
  if (!rc) *queue = st;
  return rc;
}

int tsr_cuda_queue_create(void *state, int dev, void **queue) {
  return queue_create(state, dev, false, queue);
}

int tsr_cuda_queue_create_urgent(void *state, int dev, void **queue) {
  return queue_create(state, dev, true, queue);
}

void tsr_cuda_queue_destroy(void *state, int dev, void *queue) {
  int prev;
  if (!queue || tsr_cuda_enter(state, dev, &prev)) return;
  (void)tsr_cuda_status(cudaStreamDestroy((cudaStream_t)queue));
  tsr_cuda_leave(dev, prev);
}

static int event_create(void *state, int dev, void **event, unsigned flags) {
  int prev;
  *event = NULL;
  int rc = tsr_cuda_enter(state, dev, &prev);
  if (rc) return rc;
  cudaEvent_t ev = NULL;
  rc = tsr_cuda_status(cudaEventCreateWithFlags(&ev, flags));
  tsr_cuda_leave(dev, prev);
  if (!rc) *event = ev;
  return rc;
}

int tsr_cuda_event_create(void *state, int dev, void **event) {
  return event_create(state, dev, event, cudaEventDisableTiming);
}

int tsr_cuda_event_create_timed(void *state, int dev, void **event) {
  return event_create(state, dev, event, cudaEventDefault);
}

int tsr_cuda_event_elapsed(void *state, void *from, void *to, double *seconds) {
  (void)state;
  float ms = 0;
  int rc = tsr_cuda_status(cudaEventElapsedTime(&ms, (cudaEvent_t)from, (cudaEvent_t)to));
  *seconds = rc ? 0 : ms * 1e-3;
  return rc;
}

void tsr_cuda_event_destroy(void *state, int dev, void *event) {
  int prev;
  if (!event || tsr_cuda_enter(state, dev, &prev)) return;
  (void)tsr_cuda_status(cudaEventDestroy((cudaEvent_t)event));
  tsr_cuda_leave(dev, prev);
}

int tsr_cuda_event_record(void *state, void *event, void *queue) {
  (void)state;
  if (!event) return TESSERA_ERR_BACKEND;
  return tsr_cuda_status(cudaEventRecord((cudaEvent_t)event, (cudaStream_t)queue));
}

int tsr_cuda_event_query(void *state, void *event) {
  (void)state;
  if (!event) return TESSERA_ERR_BACKEND;
  cudaError_t e = cudaEventQuery((cudaEvent_t)event);
  if (e == cudaSuccess) return 1;
  if (e == cudaErrorNotReady) {
    (void)cudaGetLastError(); /* not an error: leave nothing behind for later checks */
    return 0;
  }
  return tsr_cuda_status(e);
}

int tsr_cuda_event_sync(void *state, void *event) {
  (void)state;
  if (!event) return TESSERA_ERR_BACKEND;
  return tsr_cuda_status(cudaEventSynchronize((cudaEvent_t)event));
}

int tsr_cuda_queue_wait_event(void *state, void *queue, void *event) {
  (void)state;
  if (!event) return TESSERA_ERR_BACKEND;
  return tsr_cuda_status(cudaStreamWaitEvent((cudaStream_t)queue, (cudaEvent_t)event, 0));
}

int tsr_cuda_queue_sync(void *state, void *queue) {
  (void)state;
  return tsr_cuda_status(cudaStreamSynchronize((cudaStream_t)queue));
}
