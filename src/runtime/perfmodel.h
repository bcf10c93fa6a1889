/* The history of measured kernel times (perfmodel.c), the cost model's memory. */
#ifndef TSR_RUNTIME_PERFMODEL_H
#define TSR_RUNTIME_PERFMODEL_H

#include <stdint.h>

#include "tessera/device.h"

typedef struct tsr_perfmodel tsr_perfmodel_t;

/** The last history entry one thread looked up (saves the lookup for runs of equal tasks). */
typedef struct {
  const char *kernel;
  int kind;
  uint64_t size_key;
  void *entry;
} tsr_pm_cache_t;

tsr_perfmodel_t *tsr_perfmodel_create(void);
void tsr_perfmodel_destroy(tsr_perfmodel_t *pm);
/** Loads a history file; a missing file is not an error, malformed lines are skipped. */
int tsr_perfmodel_load(tsr_perfmodel_t *pm, const char *path);
/** Saves the history: merged, under a lock, with what the file holds now (other contexts'
 *  saves), through a uniquely named temporary file. The file's folder must exist unless it is
 *  tessera's own cache folder, which is created. */
int tsr_perfmodel_save(const tsr_perfmodel_t *pm, const char *path);
/** The default history file ($XDG_CACHE_HOME/tessera/perfmodel.txt, else
 *  ~/.cache/tessera/perfmodel.txt), or "" when neither variable is set. */
void tsr_perfmodel_default_path(char *buf, size_t size);
/** Mean measured seconds, or a negative value when unknown. Thread safe; `cache` (or NULL)
 *  belongs to the calling thread. */
double tsr_perfmodel_predict(const tsr_perfmodel_t *pm, tsr_pm_cache_t *cache, const char *kernel,
                             tessera_device_kind_t kind, uint64_t size_key);
/** How many measurements the entry holds (0 when unknown). Thread safe. */
long tsr_perfmodel_count(const tsr_perfmodel_t *pm, const char *kernel, tessera_device_kind_t kind,
                         uint64_t size_key);
/** Adds `count` measurements whose mean is `seconds`. Thread safe. */
void tsr_perfmodel_record(tsr_perfmodel_t *pm, const char *kernel, tessera_device_kind_t kind,
                          uint64_t size_key, double seconds, long count);

#endif
