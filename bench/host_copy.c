/* Host <-> GPU copy rates of one tile, as tessera's LAPACK-style calls move them: a T x T tile
 * inside a column-major host array of leading dimension L (the caller's matrix), against the
 * same tile contiguous, pinned, packed into pinned memory first, or in a registered array.
 *
 *   ./build/bench/bench_host_copy [--ld 32768] [--tile 2048] [--dtype d|s] [--reps 5]
 *
 * The host array is a panel of L x T elements (the tile's column block); each rep copies the
 * tiles of the panel one after another. Rows:
 *   pageable 2D       cudaMemcpy2DAsync from / to the caller's array (what a host view does now)
 *   pageable 1D       the tile contiguous in pageable memory
 *   pinned 1D         the tile contiguous in cudaHostAlloc memory
 *   pack + pinned     columns packed by one host thread into pinned memory, then one 1D copy
 *   registered 2D     the panel made pinned in place by cudaHostRegister (its cost shown apart)
 * Rates in GB/s of tile bytes, best of --reps. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef TESSERA_HAVE_CUDA
#include <cuda_runtime.h>

typedef struct {
  size_t ld, t, es, tiles;
  char *panel;  /* ld x t, pageable */
  char *flat;   /* t x t, pageable */
  char *pinned; /* t x t, pinned */
  void *dev;    /* t x t */
  cudaStream_t s;
  int reps;
} copy_t;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

enum { PAGE_2D, PAGE_1D, PINNED_1D, PACK_PINNED, REGISTERED_2D, NWAYS };
static const char *way_names[NWAYS] = {"pageable 2D", "pageable 1D", "pinned 1D", "pack + pinned",
                                       "registered 2D"};

/* One tile each way, to (h2d = 1) or from the GPU; 0 or -1. */
static int copy_tile(copy_t *c, int way, size_t tile, int h2d) {
  const size_t col = c->t * c->es, bytes = col * c->t;
  char *at = c->panel + tile * col; /* rows tile*t .. of the panel */
  cudaError_t e = cudaSuccess;
  switch (way) {
  case PAGE_2D:
  case REGISTERED_2D:
    e = h2d ? cudaMemcpy2DAsync(c->dev, col, at, c->ld * c->es, col, c->t, cudaMemcpyHostToDevice,
                                c->s)
            : cudaMemcpy2DAsync(at, c->ld * c->es, c->dev, col, col, c->t, cudaMemcpyDeviceToHost,
                                c->s);
    break;
  case PAGE_1D:
  case PINNED_1D: {
    char *h = way == PAGE_1D ? c->flat : c->pinned;
    e = cudaMemcpyAsync(h2d ? c->dev : (void *)h, h2d ? (void *)h : c->dev, bytes,
                        h2d ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost, c->s);
    break;
  }
  case PACK_PINNED:
    if (h2d) {
      for (size_t j = 0; j < c->t; j++) memcpy(c->pinned + j * col, at + j * c->ld * c->es, col);
      e = cudaMemcpyAsync(c->dev, c->pinned, bytes, cudaMemcpyHostToDevice, c->s);
    } else {
      e = cudaMemcpyAsync(c->pinned, c->dev, bytes, cudaMemcpyDeviceToHost, c->s);
      if (e == cudaSuccess) e = cudaStreamSynchronize(c->s);
      for (size_t j = 0; j < c->t; j++) memcpy(at + j * c->ld * c->es, c->pinned + j * col, col);
    }
    break;
  }
  if (e == cudaSuccess) e = cudaStreamSynchronize(c->s);
  return e == cudaSuccess ? 0 : -1;
}

/* Best GB/s of copying every tile of the panel `way`, in the direction h2d. */
static double rate(copy_t *c, int way, int h2d) {
  double best = 0;
  const double bytes = (double)(c->t * c->t * c->es * c->tiles);
  for (int rep = -1; rep < c->reps; rep++) {
    double t0 = now_s();
    for (size_t i = 0; i < c->tiles; i++)
      if (copy_tile(c, way, i, h2d)) return -1;
    double gbs = bytes / (now_s() - t0) * 1e-9;
    if (rep >= 0 && gbs > best) best = gbs;
  }
  return best;
}

int main(int argc, char **argv) {
  size_t ld = 32768, t = 2048, es = 8;
  int reps = 5;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--ld") && i + 1 < argc)
      ld = (size_t)atol(argv[++i]);
    else if (!strcmp(argv[i], "--tile") && i + 1 < argc)
      t = (size_t)atol(argv[++i]);
    else if (!strcmp(argv[i], "--dtype") && i + 1 < argc)
      es = argv[++i][0] == 's' ? 4 : 8;
    else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
      reps = atoi(argv[++i]);
    else {
      fprintf(stderr, "usage: %s [--ld L] [--tile T] [--dtype d|s] [--reps R]\n", argv[0]);
      return 2;
    }
  }
  if (t == 0 || ld < t || reps < 1) {
    fprintf(stderr, "bench_host_copy: need 0 < tile <= ld and reps >= 1\n");
    return 2;
  }
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    printf("bench_host_copy: no GPU\n");
    return 0;
  }
  copy_t c = {.ld = ld, .t = t, .es = es, .tiles = ld / t, .reps = reps};
  const size_t panel_bytes = ld * t * es, tile_bytes = t * t * es;
  c.panel = malloc(panel_bytes);
  c.flat = malloc(tile_bytes);
  if (!c.panel || !c.flat || cudaHostAlloc((void **)&c.pinned, tile_bytes, 0) != cudaSuccess ||
      cudaMalloc(&c.dev, tile_bytes) != cudaSuccess || cudaStreamCreate(&c.s) != cudaSuccess) {
    fprintf(stderr, "bench_host_copy: allocation failed\n");
    return 1;
  }
  memset(c.panel, 1, panel_bytes); /* touch every page */
  memset(c.flat, 1, tile_bytes);
  printf("# %zu x %zu tiles of %zu-byte elements in a host panel of leading dimension %zu, "
         "best of %d\n",
         t, t, es, ld, reps);
  printf("%-16s %10s %10s\n", "way", "to GPU", "from GPU");
  double reg_s = 0;
  for (int way = 0; way < NWAYS; way++) {
    if (way == REGISTERED_2D) {
      double t0 = now_s();
      if (cudaHostRegister(c.panel, panel_bytes, cudaHostRegisterDefault) != cudaSuccess) {
        printf("%-16s cudaHostRegister failed\n", way_names[way]);
        continue;
      }
      reg_s = now_s() - t0;
    }
    printf("%-16s %10.1f %10.1f\n", way_names[way], rate(&c, way, 1), rate(&c, way, 0));
  }
  if (reg_s > 0) {
    double t0 = now_s();
    cudaHostUnregister(c.panel);
    printf("# cudaHostRegister of %.0f MiB: %.1f ms (%.1f GB/s); unregister %.1f ms\n",
           (double)panel_bytes / (1 << 20), reg_s * 1e3, (double)panel_bytes / reg_s * 1e-9,
           (now_s() - t0) * 1e3);
  }
  cudaFree(c.dev);
  cudaFreeHost(c.pinned);
  cudaStreamDestroy(c.s);
  free(c.panel);
  free(c.flat);
  return 0;
}
#else
int main(void) {
  printf("bench_host_copy: built without CUDA\n");
  return 0;
}
#endif
