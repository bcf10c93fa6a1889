/* Kernel-time history: mean seconds per kernel x device kind x size key, kept in a text file
 * between runs ("kernel kind size_key mean_seconds count" per line).
 *
 * Lookups are lock-free (a fixed open-addressing table whose ready slots never move); a miss
 * that inserts takes the table's lock.
 *
 * Several contexts (of one process or of several) may share a file. Each entry keeps, beside
 * the mean it predicts with, the mean and count of the measurements made by this context; a
 * save re-reads the file under an advisory lock on its folder, adds those measurements to what
 * is there now (what other contexts saved meanwhile included), and replaces the file through a
 * temporary file of a unique name.
 *
 * The table holds at most PM_ENTRIES entries (a quarter of its slots stays empty, so every probe
 * chain ends soon at an empty slot), of which a file fills at most PM_FILE_ENTRIES: a context
 * always has room for the kernels and sizes it meets, and a file grows no larger than the table
 * (entries past the file's share are dropped at the next save: the history is a cache). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "runtime/perfmodel.h"

#define PM_SLOTS 8192
#define PM_ENTRIES (PM_SLOTS / 4 * 3)
#define PM_FILE_ENTRIES (PM_ENTRIES / 2)
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
  _Atomic double own_mean; /* of the measurements made by this context only */
  atomic_long own_count;
} pm_entry_t;

struct tsr_perfmodel {
  pthread_mutex_t lock;
  int used; /* entries inserted (under the lock) */
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
  for (uint64_t i = 0; i < PM_SLOTS && !found && pm->used < PM_ENTRIES; i++) {
    pm_entry_t *e = &pm->slots[(h + i) % PM_SLOTS];
    if (atomic_load_explicit(&e->ready, memory_order_relaxed)) continue;
    e->hash = h;
    e->kind = kind;
    e->size_key = key;
    snprintf(e->name, sizeof e->name, "%s", name);
    atomic_store(&e->mean, 0.0);
    atomic_store(&e->count, 0);
    atomic_store(&e->own_mean, 0.0);
    atomic_store(&e->own_count, 0);
    atomic_store_explicit(&e->ready, 1, memory_order_release);
    pm->used++;
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

long tsr_perfmodel_count(const tsr_perfmodel_t *pm, const char *kernel, tessera_device_kind_t kind,
                         uint64_t size_key) {
  pm_entry_t *e = pm_find((tsr_perfmodel_t *)pm, kernel, (int)kind, size_key, false);
  return e ? atomic_load_explicit(&e->count, memory_order_relaxed) : 0;
}

/* Adds `count` measurements of mean `seconds` to the running mean `mean` of `*total` ones. */
static void pm_add(_Atomic double *mean, atomic_long *total, double seconds, long count) {
  long n = atomic_fetch_add(total, count) + count;
  double w = (double)count / (double)(n < PM_WINDOW ? n : PM_WINDOW);
  if (w > 1) w = 1;
  double old = atomic_load(mean);
  while (!atomic_compare_exchange_weak(mean, &old, old + (seconds - old) * w)) {
  }
}

void tsr_perfmodel_record(tsr_perfmodel_t *pm, const char *kernel, tessera_device_kind_t kind,
                          uint64_t size_key, double seconds, long count) {
  pm_entry_t *e = pm_find(pm, kernel, (int)kind, size_key, true);
  if (!e || count <= 0) return;
  pm_add(&e->mean, &e->count, seconds, count);
  pm_add(&e->own_mean, &e->own_count, seconds, count);
}

int tsr_perfmodel_load(tsr_perfmodel_t *pm, const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) return errno == ENOENT ? 0 : TESSERA_ERR_IO;
  char line[256], name[PM_NAME];
  int loaded = 0;
  while (loaded < PM_FILE_ENTRIES && fgets(line, sizeof line, f)) {
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
    loaded++;
    atomic_store(&e->mean, mean);
    atomic_store(&e->count, count < PM_WINDOW ? count : PM_WINDOW);
  }
  fclose(f);
  return 0;
}

void tsr_perfmodel_default_path(char *buf, size_t size) {
  const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
  if (xdg && *xdg)
    snprintf(buf, size, "%s/tessera/perfmodel.txt", xdg);
  else if (home && *home)
    snprintf(buf, size, "%s/.cache/tessera/perfmodel.txt", home);
  else if (size)
    buf[0] = 0;
}

/* Cuts `path` at its last '/' into `dir` ("." without one, "/" for a file at the root). */
static void folder_of(const char *path, char *dir, size_t size) {
  snprintf(dir, size, "%s", path);
  char *slash = strrchr(dir, '/');
  if (!slash)
    snprintf(dir, size, ".");
  else
    slash[slash == dir] = 0;
}

static bool is_folder(const char *dir) {
  struct stat st;
  return stat(dir, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The folder of `path` must exist, except tessera's own cache folder (the default path's), which
 * is made on demand with the cache folder holding it; no other folder is ever created. Returns 0
 * or TESSERA_ERR_IO with a message on stderr (finalize does not fail for the history). */
static int ensure_folder(const char *path, char *dir, size_t size) {
  folder_of(path, dir, size);
  if (is_folder(dir)) return 0;
  char file[1024], own[1024], cache[1024];
  tsr_perfmodel_default_path(file, sizeof file);
  folder_of(file, own, sizeof own);
  if (file[0] && strcmp(dir, own) == 0) {
    folder_of(own, cache, sizeof cache);
    (void)mkdir(cache, 0700); /* ~/.cache or $XDG_CACHE_HOME, private as XDG asks */
    if (mkdir(own, 0755) == 0 || is_folder(own)) return 0;
  }
  fprintf(stderr,
          "tessera: kernel-time history not saved: the folder %s of %s does not exist (tessera "
          "creates only its own cache folder); create it, or point TESSERA_PERFMODEL or "
          "perfmodel_file into an existing folder\n",
          dir, path);
  return TESSERA_ERR_IO;
}

/* Adds what `pm` holds to `into` (the file as it is now): an entry the file lacks is copied, one
 * it has gets this context's own measurements. */
static void pm_merge(tsr_perfmodel_t *into, const tsr_perfmodel_t *pm) {
  for (int i = 0; i < PM_SLOTS; i++) {
    const pm_entry_t *e = &pm->slots[i];
    if (!atomic_load(&e->ready) || atomic_load(&e->count) == 0) continue;
    pm_entry_t *m = pm_find(into, e->name, e->kind, e->size_key, true);
    if (!m) return; /* the table is full */
    long own = atomic_load(&e->own_count);
    if (atomic_load(&m->count) == 0) {
      atomic_store(&m->mean, atomic_load(&e->mean));
      atomic_store(&m->count, atomic_load(&e->count));
    } else if (own > 0) {
      pm_add(&m->mean, &m->count, atomic_load(&e->own_mean), own);
    }
  }
}

/* Writes `pm` to a temporary file of a unique name in the folder of `path`, then renames it. */
static int pm_write(const tsr_perfmodel_t *pm, const char *path) {
  char tmp[1100];
  snprintf(tmp, sizeof tmp, "%s.XXXXXX", path);
  int fd = mkstemp(tmp);
  if (fd < 0) return TESSERA_ERR_IO;
  (void)fchmod(fd, 0644);
  FILE *f = fdopen(fd, "w");
  if (!f) {
    close(fd);
    remove(tmp);
    return TESSERA_ERR_IO;
  }
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

int tsr_perfmodel_save(const tsr_perfmodel_t *pm, const char *path) {
  char dir[1024];
  int rc = ensure_folder(path, dir, sizeof dir);
  if (rc) return rc;
  /* flock, not fcntl: it excludes other contexts of this process too */
  int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) (void)flock(dfd, LOCK_EX);
  tsr_perfmodel_t *now = tsr_perfmodel_create();
  rc = now ? tsr_perfmodel_load(now, path) : TESSERA_ERR_NOMEM;
  if (!rc) {
    pm_merge(now, pm);
    rc = pm_write(now, path);
  }
  tsr_perfmodel_destroy(now);
  if (dfd >= 0) close(dfd); /* releases the lock */
  return rc;
}
