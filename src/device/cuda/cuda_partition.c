/* SM partitions of the CUDA backend: the side queues of a GPU worker, streams of a green context
 * that holds the device's SMs less those kept free for the urgent lane. While an urgent task (a
 * factorization's next panel) runs, the worker launches its other tasks there, so that the
 * panel's many short kernels find SMs at once instead of waiting behind the long blocks of the
 * trailing updates' gemms; the rest of the time the full-device queues serve. Every queue of the
 * backend is destroyed here, with the green context it may belong to.
 *
 * Green contexts are driver API (CUDA 12.4 and later). Their functions are looked up in the
 * driver at the call, at the version of the headers built against, so that an older driver
 * only means no partition (TESSERA_ERR_UNSUPPORTED) and the library needs no link to libcuda. */
#include <stdbool.h>
#include <string.h>

#include <cuda.h>
#include <cuda_runtime.h>

#include "device/cuda/cuda_internal.h"
#include "tessera/types.h"

typedef CUresult (*device_get_fn)(CUdevice *, int);
typedef CUresult (*get_resource_fn)(CUdevice, CUdevResource *, CUdevResourceType);
typedef CUresult (*split_fn)(CUdevResource *, unsigned *, const CUdevResource *, CUdevResource *,
                             unsigned, unsigned);
typedef CUresult (*generate_fn)(CUdevResourceDesc *, CUdevResource *, unsigned);
typedef CUresult (*green_create_fn)(CUgreenCtx *, CUdevResourceDesc, CUdevice, unsigned);
typedef CUresult (*green_stream_fn)(CUstream *, CUgreenCtx, unsigned, int);
typedef CUresult (*green_destroy_fn)(CUgreenCtx);
typedef CUresult (*stream_green_fn)(CUstream, CUgreenCtx *);

/* Loads the driver's function `name` into the function pointer at `fn` (NULL where the driver
 * lacks it; copied as bytes, since C converts no object pointer to a function pointer). Returns
 * whether it was found. */
static bool driver_fn(const char *name, void *fn) {
  void *p = NULL;
  enum cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  if (cudaGetDriverEntryPointByVersion(name, &p, CUDA_VERSION, cudaEnableDefault, &found) !=
          cudaSuccess ||
      found != cudaDriverEntryPointSuccess)
    p = NULL;
  (void)cudaGetLastError();
  memcpy(fn, &p, sizeof p);
  return p != NULL;
}

/* The green context on device `dev` (the calling thread's) over its SMs less `reserved`. */
static int rest_context(int dev, int reserved, CUgreenCtx *green) {
  device_get_fn device_get;
  get_resource_fn get_resource;
  split_fn split;
  generate_fn generate;
  green_create_fn create;
  if (!driver_fn("cuDeviceGet", &device_get) ||
      !driver_fn("cuDeviceGetDevResource", &get_resource) ||
      !driver_fn("cuDevSmResourceSplitByCount", &split) ||
      !driver_fn("cuDevResourceGenerateDesc", &generate) || !driver_fn("cuGreenCtxCreate", &create))
    return TESSERA_ERR_UNSUPPORTED;
  CUdevice d;
  CUdevResource all, kept, rest;
  CUdevResourceDesc desc;
  unsigned groups = 1;
  if (device_get(&d, dev) != CUDA_SUCCESS ||
      get_resource(d, &all, CU_DEV_RESOURCE_TYPE_SM) != CUDA_SUCCESS)
    return TESSERA_ERR_BACKEND;
  /* The split rounds `reserved` up to the device's granularity; nothing may be left over. */
  if (reserved <= 0 || (unsigned)reserved >= all.sm.smCount ||
      split(&kept, &groups, &all, &rest, 0, (unsigned)reserved) != CUDA_SUCCESS || groups != 1 ||
      rest.sm.smCount == 0)
    return TESSERA_ERR_UNSUPPORTED;
  if (generate(&desc, &rest, 1) != CUDA_SUCCESS ||
      create(green, desc, d, CU_GREEN_CTX_DEFAULT_STREAM) != CUDA_SUCCESS)
    return TESSERA_ERR_UNSUPPORTED;
  return 0;
}

int tsr_cuda_queue_create_side(void *state, int dev, int reserved, void **queue) {
  int prev;
  *queue = NULL;
  int rc = tsr_cuda_enter(state, dev, &prev);
  if (rc) return rc;
  green_stream_fn stream_create = NULL;
  green_destroy_fn destroy = NULL;
  CUgreenCtx green = NULL;
  rc = driver_fn("cuGreenCtxStreamCreate", &stream_create) &&
               driver_fn("cuGreenCtxDestroy", &destroy)
           ? rest_context(dev, reserved, &green)
           : TESSERA_ERR_UNSUPPORTED;
  CUstream st = NULL;
  /* One green context per queue: destroying the queue destroys its context too. */
  if (!rc && stream_create(&st, green, CU_STREAM_NON_BLOCKING, 0) != CUDA_SUCCESS) {
    (void)destroy(green);
    rc = TESSERA_ERR_BACKEND;
  }
  tsr_cuda_leave(dev, prev);
  if (!rc) *queue = st;
  return rc;
}

/* Destroys any stream of the backend with the green context it may belong to. */
void tsr_cuda_queue_destroy(void *state, int dev, void *queue) {
  int prev;
  if (!queue || tsr_cuda_enter(state, dev, &prev)) return;
  stream_green_fn of_stream = NULL;
  green_destroy_fn destroy = NULL;
  CUgreenCtx green = NULL;
  if (!driver_fn("cuStreamGetGreenCtx", &of_stream) || !driver_fn("cuGreenCtxDestroy", &destroy) ||
      of_stream((CUstream)queue, &green) != CUDA_SUCCESS)
    green = NULL;
  (void)tsr_cuda_status(cudaStreamDestroy((cudaStream_t)queue));
  if (green) (void)destroy(green);
  tsr_cuda_leave(dev, prev);
}
