/* Kernel-time history: mean seconds per kernel x device kind x size key, kept in a text file
 * between runs ("kernel kind size_key mean_seconds count" per line).
 *
 * Lookups are lock-free (a fixed open-addressing table whose ready slots never move); a miss
 * that inserts takes the table's lock. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "runtime/perfmodel.h"

#define PM_SLOTS 4096
#define PM_NAME 48
#define PM_WINDOW 64 /* the mean follows the last ~PM_WINDOW runs */

typedef struct {
  atomic_int ready;
  uint64_t hash;
  int kind;
  uint64_t size_key;
  char name[PM_NAME];
  _Atomic double mean;
  atomic_long count;
} pm_entry_t;

struct tsr_perfmodel {
  pthread_mutex_t lock;
  pm_entry_t slots[PM_SLOTS];
};

static uint64_t pm_hash(const char *name, int kind, uint64_t size_key) {
  uint64_t h = 1469598103934665603ull;
  for (const char *p = name; *p; p++) h = (h ^ (unsigned char)*p) * 1099511628211ull;
  h ^= (uint64_t)kind * 0x9e3779b97f4a7c15ull;
  h ^= size_key + 0x632be59bd9b4e019ull + (h << 6) + (h >> 2);
  return h ? h : 1;
}

tsr_perfmodel_t *tsr_perfmodel_create(void) {
  tsr_perfmodel_t *pm = calloc(1, sizeof *pm);
  if (pm) pthread_mutex_init(&pm->lock, NULL);
  return pm;
}

void tsr_perfmodel_destroy(tsr_perfmodel_t *pm) {
  if (!pm) return;
  pthread_mutex_destroy(&pm->lock);
  free(pm);
}

static bool pm_match(const pm_entry_t *e, uint64_t h, const char *name, int kind, uint64_t key) {
  return e->hash == h && e->kind == kind && e->size_key == key && strcmp(e->name, name) == 0;
}

/* Finds the entry; with `create`, inserts it when missing (NULL when the table is full). */
static pm_entry_t *pm_find(tsr_perfmodel_t *pm, const char *name, int kind, uint64_t key,
                           bool create) {
  uint64_t h = pm_hash(name, kind, key);
  for (int pass = 0; pass < 2; pass++) {
    for (uint64_t i = 0; i < PM_SLOTS; i++) {
      pm_entry_t *e = &pm->slots[(h + i) % PM_SLOTS];
      if (!atomic_load_explicit(&e->ready, memory_order_acquire)) {
        if (!create) return NULL;
        break; /* an empty slot ends the probe chain */
      }
      if (pm_match(e, h, name, kind, key)) {
        if (pass) pthread_mutex_unlock(&pm->lock);
        return e;
      }
    }
    if (pass) break;
    if (!create) return NULL;
    pthread_mutex_lock(&pm->lock); /* second pass under the lock, then insert */
  }
  pm_entry_t *found = NULL;
  for (uint64_t i = 0; i < PM_SLOTS && !found; i++) {
    pm_entry_t *e = &pm->slots[(h + i) % PM_SLOTS];
    if (atomic_load_explicit(&e->ready, memory_order_relaxed)) continue;
    e->hash = h;
    e->kind = kind;
    e->size_key = key;
    snprintf(e->name, sizeof e->name, "%s", name);
    atomic_store(&e->mean, 0.0);
    atomic_store(&e->count, 0);
    atomic_store_explicit(&e->ready, 1, memory_order_release);
    found = e;
  }
  pthread_mutex_unlock(&pm->lock);
  return found;
}

double tsr_perfmodel_predict(const tsr_perfmodel_t *pm, tsr_pm_cache_t *cache, const char *kernel,
                             tessera_device_kind_t kind, uint64_t size_key) {
  pm_entry_t *e = NULL;
  bool hit = cache && cache->entry && cache->kernel == kernel && cache->kind == (int)kind &&
             cache->size_key == size_key;
  if (hit)
    e = cache->entry;
  else
    e = pm_find((tsr_perfmodel_t *)pm, kernel, (int)kind, size_key, false);
  if (!e) return -1;
  if (cache && !hit) /* entries never move: the pointer stays good for the context's life */
    *cache =
        (tsr_pm_cache_t){.kernel = kernel, .kind = (int)kind, .size_key = size_key, .entry = e};
  if (atomic_load_explicit(&e->count, memory_order_relaxed) == 0) return -1;
  return atomic_load_explicit(&e->mean, memory_order_relaxed);
}

void tsr_perfmodel_record(tsr_perfmodel_t *pm, const char *kernel, tessera_device_kind_t kind,
                          uint64_t size_key, double seconds, long count) {
  pm_entry_t *e = pm_find(pm, kernel, (int)kind, size_key, true);
  if (!e || count <= 0) return;
  long n = atomic_fetch_add(&e->count, count) + count;
  double w = (double)count / (double)(n < PM_WINDOW ? n : PM_WINDOW);
  if (w > 1) w = 1;
  double old = atomic_load(&e->mean);
  while (!atomic_compare_exchange_weak(&e->mean, &old, old + (seconds - old) * w)) {
  }
}

int tsr_perfmodel_load(tsr_perfmodel_t *pm, const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) return errno == ENOENT ? 0 : TESSERA_ERR_IO;
  char line[256], name[PM_NAME];
  while (fgets(line, sizeof line, f)) {
    int kind;
    uint64_t key;
    double mean;
    long count;
    if (line[0] == '#') continue;
    if (sscanf(line, "%47s %d %" SCNu64 " %lf %ld", name, &kind, &key, &mean, &count) != 5)
      continue;
    if (kind < 0 || kind >= TESSERA_DEVICE_KINDS || !(mean >= 0) || mean > 1e6 || count <= 0)
      continue;
    pm_entry_t *e = pm_find(pm, name, kind, key, true);
    if (!e) break;
    atomic_store(&e->mean, mean);
    atomic_store(&e->count, count < PM_WINDOW ? count : PM_WINDOW);
  }
  fclose(f);
  return 0;
}

/* mkdir -p of the folder holding `path`. */
static void make_parent(const char *path) {
  char dir[1024];
  snprintf(dir, sizeof dir, "%s", path);
  for (char *p = dir + 1; *p; p++) {
    if (*p != '/') continue;
    *p = 0;
    mkdir(dir, 0755);
    *p = '/';
  }
}

int tsr_perfmodel_save(const tsr_perfmodel_t *pm, const char *path) {
  make_parent(path);
  char tmp[1100];
  snprintf(tmp, sizeof tmp, "%s.tmp%ld", path, (long)getpid());
  FILE *f = fopen(tmp, "w");
  if (!f) return TESSERA_ERR_IO;
  fprintf(f, "# tessera kernel-time history: kernel kind size_key mean_seconds count\n");
  for (int i = 0; i < PM_SLOTS; i++) {
    const pm_entry_t *e = &pm->slots[i];
    if (!atomic_load(&e->ready) || atomic_load(&e->count) == 0) continue;
    fprintf(f, "%s %d %" PRIu64 " %.9g %ld\n", e->name, e->kind, e->size_key, atomic_load(&e->mean),
            atomic_load(&e->count));
  }
  if (fclose(f) != 0 || rename(tmp, path) != 0) {
    remove(tmp);
    return TESSERA_ERR_IO;
  }
  return 0;
}
