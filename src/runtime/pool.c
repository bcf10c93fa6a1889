/* Memory pools: one slab per device memory node, allocated once, carved into blocks (first fit
 * from the bottom, large blocks from the top); freed blocks coalesce with their neighbours.
 * Nothing reaches the device allocator afterwards. */
#include <stdlib.h>
#include <string.h>

#include "runtime/pool.h"

#define ALIGN 256

int tsr_pool_init(tsr_pool_t *p, void *base, size_t size) {
  memset(p, 0, sizeof *p);
  p->base = base;
  p->size = size / ALIGN * ALIGN;
  p->cap = 64;
  p->free = malloc(sizeof *p->free * (size_t)p->cap);
  if (!p->free) return -1;
  if (p->size) p->free[p->n++] = (tsr_extent_t){0, p->size};
  pthread_mutex_init(&p->lock, NULL);
  return 0;
}

void tsr_pool_destroy(tsr_pool_t *p) {
  if (!p->free) return;
  free(p->free);
  p->free = NULL;
  pthread_mutex_destroy(&p->lock);
}

static size_t round_up(size_t bytes) {
  return (bytes + ALIGN - 1) / ALIGN * ALIGN;
}

/* Blocks of at least a sixteenth of the pool are carved from the top of the highest free extent
 * that holds them, the others first-fit from the bottom: the few large arrays a call keeps for
 * long (a whole matrix as one tile, a merge's workspace) stack from the top, away from the tiles
 * that come and go, whose holes would otherwise split the room a large block needs. */
void *tsr_pool_alloc(tsr_pool_t *p, size_t bytes) {
  size_t len = round_up(bytes ? bytes : 1);
  const bool large = len >= p->size / 16;
  void *out = NULL;
  pthread_mutex_lock(&p->lock);
  int i = -1;
  for (int k = 0; k < p->n; k++)
    if (p->free[k].len >= len) {
      i = k;
      if (!large) break;
    }
  if (i >= 0) {
    tsr_extent_t *e = &p->free[i];
    out = (char *)p->base + (large ? e->off + e->len - len : e->off);
    if (!large) e->off += len;
    e->len -= len;
    if (e->len == 0) {
      memmove(e, e + 1, sizeof *e * (size_t)(p->n - i - 1));
      p->n--;
    }
    p->used += len;
  }
  pthread_mutex_unlock(&p->lock);
  return out;
}

int tsr_pool_free(tsr_pool_t *p, void *ptr, size_t bytes) {
  size_t off = (size_t)((char *)ptr - (char *)p->base), len = round_up(bytes ? bytes : 1);
  int rc = 0;
  pthread_mutex_lock(&p->lock);
  int i = 0;
  while (i < p->n && p->free[i].off < off) i++;
  bool merge_prev = i > 0 && p->free[i - 1].off + p->free[i - 1].len == off;
  bool merge_next = i < p->n && off + len == p->free[i].off;
  if (merge_prev && merge_next) {
    p->free[i - 1].len += len + p->free[i].len;
    memmove(&p->free[i], &p->free[i + 1], sizeof *p->free * (size_t)(p->n - i - 1));
    p->n--;
  } else if (merge_prev) {
    p->free[i - 1].len += len;
  } else if (merge_next) {
    p->free[i].off = off;
    p->free[i].len += len;
  } else {
    if (p->n == p->cap) {
      tsr_extent_t *f = realloc(p->free, sizeof *f * (size_t)p->cap * 2);
      if (!f)
        rc = -1;
      else {
        p->free = f;
        p->cap *= 2;
      }
    }
    if (!rc) {
      memmove(&p->free[i + 1], &p->free[i], sizeof *p->free * (size_t)(p->n - i));
      p->free[i] = (tsr_extent_t){off, len};
      p->n++;
    }
  }
  if (!rc) p->used -= len;
  pthread_mutex_unlock(&p->lock);
  return rc;
}

size_t tsr_pool_largest(tsr_pool_t *p) {
  size_t best = 0;
  pthread_mutex_lock(&p->lock);
  for (int i = 0; i < p->n; i++)
    if (p->free[i].len > best) best = p->free[i].len;
  pthread_mutex_unlock(&p->lock);
  return best;
}
