/* The CPU backend: host memory, copies with memcpy, and the math library kept single-threaded
 * inside each worker while a context is open. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "device/backend.h"
#include "tessera/types.h"

#ifdef TESSERA_HAVE_OPENBLAS_THREADS
void openblas_set_num_threads(int num_threads);
int openblas_get_num_threads(void);

/* OpenBLAS's thread count belongs to the process, not to a context: the first context to open
 * saves it and sets one thread, the last to close restores it, so contexts alive at once do
 * not undo each other. The count of open contexts is the one piece of process-wide state of
 * tessera, as process-wide as what it guards. */
static pthread_mutex_t blas_lock = PTHREAD_MUTEX_INITIALIZER;
static int blas_users, blas_saved_threads;

static void blas_single_threaded_acquire(void) {
  pthread_mutex_lock(&blas_lock);
  if (blas_users++ == 0) {
    blas_saved_threads = openblas_get_num_threads();
    openblas_set_num_threads(1);
  }
  pthread_mutex_unlock(&blas_lock);
}

static void blas_single_threaded_release(void) {
  pthread_mutex_lock(&blas_lock);
  if (--blas_users == 0 && blas_saved_threads > 0) openblas_set_num_threads(blas_saved_threads);
  pthread_mutex_unlock(&blas_lock);
}

int tsr_cpu_blas_threads(int threads) {
  pthread_mutex_lock(&blas_lock);
  const int prev = openblas_get_num_threads();
  if (threads > 0) openblas_set_num_threads(threads);
  pthread_mutex_unlock(&blas_lock);
  return prev;
}
#else
int tsr_cpu_blas_threads(int threads) {
  (void)threads;
  return 1;
}

static void blas_single_threaded_acquire(void) {}
static void blas_single_threaded_release(void) {}
#endif

typedef struct {
  int open; /* the context holds a count in the BLAS thread setting */
} cpu_state_t;

static int cpu_cores(void) {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) return CPU_COUNT(&set);
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? (int)n : 1;
}

static int cpu_open(int max_devices, int *ndevices, void **state) {
  cpu_state_t *s = calloc(1, sizeof *s);
  if (!s) return TESSERA_ERR_NOMEM;
  blas_single_threaded_acquire();
  s->open = 1;
  *ndevices = max_devices > 0 ? 1 : 0;
  *state = s;
  return 0;
}

static void cpu_close(void *state) {
  cpu_state_t *s = state;
  if (!s) return;
  if (s->open) blas_single_threaded_release();
  free(s);
}

static int cpu_info(void *state, int dev, tessera_device_info_t *info) {
  (void)state;
  memset(info, 0, sizeof *info);
  info->kind = TESSERA_DEVICE_CPU;
  info->index = dev;
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  info->memory_bytes = pages > 0 && page > 0 ? (size_t)pages * (size_t)page : 0;
  info->workers = cpu_cores();
  /* Nominal per-core f64 rate (AVX2 FMA at ~3 GHz); measured kernel times replace it. */
  info->gflops = 40.0;
  snprintf(info->name, sizeof info->name, "host CPU (%d cores)", info->workers);
  return 0;
}

static void *cpu_alloc(void *state, int dev, size_t bytes) {
  (void)state, (void)dev;
  size_t rounded = (bytes + 63) / 64 * 64;
  return aligned_alloc(64, rounded ? rounded : 64);
}

static void cpu_free(void *state, int dev, void *ptr) {
  (void)state, (void)dev;
  free(ptr);
}

static int cpu_copy2d(void *state, int dst_dev, void *dst, size_t ldd, int src_dev, const void *src,
                      size_t lds, size_t rows, size_t cols, size_t elsize, void *queue) {
  (void)state, (void)dst_dev, (void)src_dev, (void)queue;
  if (rows == ldd && rows == lds) {
    memcpy(dst, src, rows * cols * elsize);
    return 0;
  }
  for (size_t j = 0; j < cols; j++)
    memcpy((char *)dst + j * ldd * elsize, (const char *)src + j * lds * elsize, rows * elsize);
  return 0;
}

static const tsr_backend_t cpu_backend = {
    .name = "cpu",
    .kind = TESSERA_DEVICE_CPU,
    .async = false,
    .open = cpu_open,
    .close = cpu_close,
    .info = cpu_info,
    .alloc = cpu_alloc,
    .free = cpu_free,
    .host_alloc = NULL,
    .host_free = NULL,
    .copy2d = cpu_copy2d,
};

const tsr_backend_t *tsr_backend_cpu(void) {
  return &cpu_backend;
}
