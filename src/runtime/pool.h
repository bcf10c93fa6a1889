/* Memory pools over one slab of device memory (see pool.c). */
#ifndef TSR_POOL_H
#define TSR_POOL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct {
  size_t off, len;
} tsr_extent_t;

typedef struct {
  pthread_mutex_t lock;
  void *base;
  size_t size, used;
  tsr_extent_t *free; /* sorted by offset, never adjacent */
  int n, cap;
} tsr_pool_t;

/** Pool over [base, base + size). Returns 0, or -1 when out of host memory. */
int tsr_pool_init(tsr_pool_t *p, void *base, size_t size);
void tsr_pool_destroy(tsr_pool_t *p);
/** A block of at least `bytes` (256-byte aligned), or NULL when no free extent fits. */
void *tsr_pool_alloc(tsr_pool_t *p, size_t bytes);
/** Returns a block (with the size it was asked with). Returns 0, or -1 when out of host memory
 *  for bookkeeping (the block is then lost to the pool, never corrupted). */
int tsr_pool_free(tsr_pool_t *p, void *ptr, size_t bytes);
/** Size of the largest free extent. */
size_t tsr_pool_largest(tsr_pool_t *p);

#endif
