/* The configuration table and its parser. Each row names one TESSERA_* variable, what it takes,
 * its default, its meaning and the configuration field it fills; tessera_init resolves every
 * row once when it makes a context, the communicator and the JAX binding ask for theirs by name,
 * and `tessera info` prints them all. A value the row does not accept is an error that names the
 * variable and what it takes, never a silent fallback. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/base.h"
#include "runtime/settings.h"

typedef enum { T_INT, T_BOOL, T_SIZE, T_SECONDS, T_CHOICE, T_PATH, T_GRID } type_t;

/* Where a row's value goes: a field of tessera_config_t, of tsr_settings_extra_t, or nowhere
 * (a variable another reader asks for by name). */
typedef enum { TO_NONE, TO_CONFIG, TO_EXTRA } target_t;

typedef struct {
  tessera_setting_t pub;
  type_t type;
  double lo, hi;       /* T_INT: the range */
  const char *choices; /* T_CHOICE: the accepted words, '|' between them, in enum order */
  double fallback;     /* numeric rows read by name: the default, else NAN */
  target_t to;
  size_t offset;
  const char *field; /* TO_CONFIG: the field's name, for messages */
} row_t;

#define CFG(field) TO_CONFIG, offsetof(tessera_config_t, field), #field
#define XTR(field) TO_EXTRA, offsetof(tsr_settings_extra_t, field), NULL
#define STR_(x) #x
#define STR(x) STR_(x)

/* clang-format off */
static const row_t rows[] = {
  {{"TESSERA_CPU_WORKERS", "an integer from 0 to " STR(TSR_MAX_WORKERS),
    "every core, less one per GPU in use", "CPU worker threads", "tessera_init"},
   T_INT, 0, TSR_MAX_WORKERS, NULL, NAN, CFG(cpu_workers)},
  {{"TESSERA_GPUS", "an integer from 0 to 16", "every GPU found", "GPUs to use (0: none)",
    "tessera_init"},
   T_INT, 0, TSR_MAX_NODES - 1, NULL, NAN, CFG(gpus)},
  {{"TESSERA_SCHED", "cost or locality", "cost",
    "scheduling policy: earliest estimated finish (cost) or most data in place (locality)",
    "tessera_init"},
   T_CHOICE, 0, 0, "cost|locality", NAN, CFG(sched)},
  {{"TESSERA_TILE", "an integer from 1 to 1048576", "chosen per call from the order and devices",
    "tile size of LAPACK-style calls", "tessera_init"},
   T_INT, 1, 1 << 20, NULL, NAN, CFG(tile_size)},
  {{"TESSERA_BIND", "0 or 1", "0", "1 pins each worker to a core", "tessera_init"},
   T_BOOL, 0, 1, NULL, NAN, CFG(bind_workers)},
  {{"TESSERA_TRACE", "a file path", "no trace",
    "Chrome / Perfetto trace of every task, written at finalize", "tessera_init"},
   T_PATH, 0, 0, NULL, NAN, CFG(trace_file)},
  {{"TESSERA_PERFMODEL", "a file path in an existing folder, or none",
    "$XDG_CACHE_HOME/tessera/perfmodel.txt, else ~/.cache/tessera/perfmodel.txt",
    "measured kernel times kept between runs (none: not kept)", "tessera_init"},
   T_PATH, 0, 0, NULL, NAN, CFG(perfmodel_file)},
  {{"TESSERA_COPY_QUEUE", "0 or 1", "1",
    "1: GPU workers copy inputs on a queue of their own, ahead of the kernels; 0: on the "
    "kernel's queue", "tessera_init"},
   T_BOOL, 0, 1, NULL, NAN, CFG(copy_queue)},
  {{"TESSERA_GPU_QUEUES", "an integer from 1 to " STR(TESSERA_MAX_GPU_QUEUES),
    STR(TESSERA_MAX_GPU_QUEUES), "compute queues (streams) per GPU worker", "tessera_init"},
   T_INT, 1, TESSERA_MAX_GPU_QUEUES, NULL, NAN, CFG(gpu_queues)},
  {{"TESSERA_GPU_FLIGHTS", "an integer from 2 to " STR(TESSERA_MAX_GPU_FLIGHTS),
    STR(TESSERA_MAX_GPU_FLIGHTS),
    "tasks each GPU worker keeps in flight besides its urgent lane's", "tessera_init"},
   T_INT, 2, TESSERA_MAX_GPU_FLIGHTS, NULL, NAN, CFG(gpu_flights)},
  {{"TESSERA_GPU_MEM_LIMIT", "a size such as 8G or 512M", "the free memory less a reserve",
    "cap on each GPU's memory pool (larger matrices run out of core)", "tessera_init"},
   T_SIZE, 0, 0, NULL, NAN, CFG(gpu_mem_limit)},
  {{"TESSERA_MAX_SUBMITTED", "an integer from 1 to 1073741824",
    STR(TESSERA_DEFAULT_MAX_SUBMITTED),
    "most tasks inserted and not finished; an insertion beyond waits", "tessera_init"},
   T_INT, 1, 1 << 30, NULL, NAN, CFG(max_submitted)},
  {{"TESSERA_TRSM_INVERSE", "0 or 1", "1 when a call's scope holds GPUs, else 0",
    "1: Cholesky panels multiply by inverted diagonal tiles; 0: they solve with them",
    "tessera_init"},
   T_BOOL, 0, 1, NULL, NAN, CFG(trsm_inverse)},
  {{"TESSERA_GRID", "PxQ such as 2x2, or auto", "one process",
    "the context spans the processes of MPI_COMM_WORLD on this grid (auto: the squarest)",
    "tessera_init"},
   T_GRID, 0, 0, NULL, NAN, TO_NONE, 0, NULL},
  {{"TESSERA_COMM_TIMEOUT", "seconds, more than 0", "30",
    "how long a communicator's call waits for the other processes", "tessera_comm_create"},
   T_SECONDS, 0, 0, NULL, 30, CFG(comm_timeout_s)},
  {{"TESSERA_DIST_TRANSFERS", "best, device or host", "best",
    "how tiles travel between processes: GPU to GPU where every process can (best), only so "
    "(device), or through host memory (host)", "tessera_init"},
   T_CHOICE, 0, 0, "best|device|host", NAN, CFG(dist_transfers)},
  {{"TESSERA_LAYOUT", "cost, tessera or given", "cost",
    "the layout distributed routines run on where the caller lets tessera choose: its own where "
    "the cost model finds that moving there pays (cost), its own always (tessera), or the "
    "caller's (given)", "tessera_init"},
   T_CHOICE, 0, 0, "cost|tessera|given", NAN, CFG(dist_layout)},
  {{"TESSERA_EIG_METHOD", "cost, one or two", "cost",
    "the eigensolver's method on one process: the one measured faster (cost), one stage on one "
    "device (one: LAPACK's or cuSOLVER's syevd), or two stages over every device (two)",
    "tessera_init"},
   T_CHOICE, 0, 0, "cost|one|two", NAN, CFG(eig_method)},
  {{"TESSERA_SVD_METHOD", "cost, lapack or qdwh", "cost",
    "the SVD's and the polar decomposition's method on one process: on the CPU cores the one "
    "measured faster (cost), through LAPACK's gesdd (lapack), or QDWH over every device (qdwh, "
    "which cost takes with accelerators)",
    "tessera_init"},
   T_CHOICE, 0, 0, "cost|lapack|qdwh", NAN, CFG(svd_method)},
  {{"TESSERA_SIM_DEVICES", "an integer from 0 to 16", "2",
    "simulated devices standing in for GPUs (builds with -DTESSERA_SIM_DEVICES=ON only)",
    "tessera_init"},
   T_INT, 0, 16, NULL, 2, XTR(sim_devices)},
  {{"TESSERA_JAX_TIMEOUT", "seconds, more than 0", "60",
    "how long a device's call of tessera.jax waits for the other devices' calls", "tessera.jax"},
   T_SECONDS, 0, 0, NULL, 60, TO_NONE, 0, NULL},
  {{"TESSERA_JAX_LIBRARY", "a file path", "next to the package, else the build tree",
    "libtessera_jax for tessera.jax to load (read by Python before the library loads)",
    "tessera.jax"},
   T_PATH, 0, 0, NULL, NAN, TO_NONE, 0, NULL},
  {{"TESSERA_BUILD_DIR", "a folder path", "the repository's build/",
    "build tree in which tessera.jax looks for libtessera_jax (read by Python before the "
    "library loads)", "tessera.jax"},
   T_PATH, 0, 0, NULL, NAN, TO_NONE, 0, NULL},
};
/* clang-format on */
enum { NROWS = sizeof rows / sizeof rows[0] };

int tessera_setting_count(void) {
  return NROWS;
}

const tessera_setting_t *tessera_setting(int i) {
  return i >= 0 && i < NROWS ? &rows[i].pub : NULL;
}

static const row_t *find(const char *name) {
  for (int i = 0; name && i < NROWS; i++)
    if (strcmp(rows[i].pub.name, name) == 0) return &rows[i];
  return NULL;
}

/* A parsed value: a number (int, bool, size, seconds, choice index), a string, or a grid. */
typedef struct {
  double x;
  const char *s;
  int p, q; /* T_GRID: -1 for "auto" */
} value_t;

static int parse_number(const char *v, double *x) {
  char *end = NULL;
  errno = 0;
  *x = strtod(v, &end);
  return end != v && !errno && isfinite(*x) ? (int)(end - v) : -1;
}

/* A size with an optional K, M, G or T suffix (powers of 1024). */
static bool parse_size(const char *v, double *x) {
  const int used = parse_number(v, x);
  if (used < 0) return false;
  const char *end = v + used, *units = "KMGT";
  const char *u = *end ? strchr(units, *end & ~32) : NULL;
  if (u && *end) end++;
  for (const char *p = units; u && p <= u; p++) *x *= 1024;
  return !*end && *x >= 1 && *x <= 1e18;
}

static bool parse_grid(const char *v, value_t *out) {
  out->p = out->q = -1;
  if (strcmp(v, "auto") == 0) return true;
  char *end;
  errno = 0;
  long a = strtol(v, &end, 10), b = 0;
  if (end != v && (*end == 'x' || *end == 'X')) {
    const char *s = end + 1;
    b = strtol(s, &end, 10);
    if (end == s) b = 0;
  }
  if (errno || *end || a < 1 || b < 1 || a > 1 << 20 || b > 1 << 20) return false;
  out->p = (int)a, out->q = (int)b;
  return true;
}

/* Word k of the '|'-separated `choices` (its length in *n), or NULL past the last. */
static const char *choice_word(const char *choices, int k, size_t *n) {
  const char *w = choices;
  for (int i = 0; i < k && w; i++) w = strchr(w, '|') ? strchr(w, '|') + 1 : NULL;
  if (w) *n = strchr(w, '|') ? (size_t)(strchr(w, '|') - w) : strlen(w);
  return w;
}

/* The index of `v` among the words of `choices`, or -1. */
static int choice_index(const char *choices, const char *v) {
  size_t n = 0;
  const char *w;
  for (int k = 0; (w = choice_word(choices, k, &n)) != NULL; k++)
    if (n == strlen(v) && strncmp(w, v, n) == 0) return k;
  return -1;
}

/* The sentence refusing a value of row r: what was given (`name`, then the value between `open`
 * and `close`) and what the row takes. One sentence for a variable and a configuration field. */
static void refuse(const row_t *r, const char *name, const char *open, const char *v,
                   const char *close, char *msg, size_t len) {
  if (msg && len)
    snprintf(msg, len, "%s%s%s%s is not valid: it takes %s.", name, open, v, close, r->pub.accepts);
}

/* Parses the text `v` by row r's type. 0, or TESSERA_ERR_ENV with the sentence in msg. */
static int parse(const row_t *r, const char *v, value_t *out, char *msg, size_t len) {
  bool ok = false;
  out->s = v;
  switch (r->type) {
  case T_INT:
  case T_BOOL:
    ok = parse_number(v, &out->x) == (int)strlen(v) && out->x == floor(out->x) && out->x >= r->lo &&
         out->x <= r->hi && strspn(v, "0123456789-+") == strlen(v);
    break;
  case T_SIZE:
    ok = parse_size(v, &out->x);
    break;
  case T_SECONDS:
    ok = parse_number(v, &out->x) == (int)strlen(v) && out->x > 0 && out->x <= 1e9;
    break;
  case T_CHOICE:
    out->x = choice_index(r->choices, v);
    ok = out->x >= 0;
    break;
  case T_PATH:
    ok = *v != 0;
    break;
  case T_GRID:
    ok = parse_grid(v, out);
    break;
  }
  if (ok) return 0;
  refuse(r, r->pub.name, "=\"", v, "\"", msg, len);
  return TESSERA_ERR_ENV;
}

/* The environment's text for row r, or NULL when unset or empty. */
static const char *env_of(const row_t *r) {
  const char *v = getenv(r->pub.name);
  return v && *v ? v : NULL;
}

/* Stores value x into the field at `field` of row r's type, when that field is still "auto".
 */
static void store(const row_t *r, void *field, const value_t *x) {
  switch (r->type) {
  case T_SIZE:
    if (*(int64_t *)field < 0) *(int64_t *)field = (int64_t)x->x;
    break;
  case T_SECONDS:
    if (*(double *)field < 0) *(double *)field = x->x;
    break;
  case T_PATH:
    if (!*(const char **)field) *(const char **)field = x->s;
    break;
  default:
    if (*(int *)field < 0) *(int *)field = (int)x->x;
  }
}

int tsr_settings_resolve(const tessera_config_t *in, tessera_config_t *out,
                         tsr_settings_extra_t *extra, char *msg, size_t len) {
  tsr_settings_extra_t none;
  if (!extra) extra = &none;
  *extra = (tsr_settings_extra_t){.sim_devices = -1};
  if (in)
    *out = *in;
  else
    tessera_config_init(out);
  for (int i = 0; i < NROWS; i++) {
    const row_t *r = &rows[i];
    const char *v = env_of(r);
    if (!v) continue;
    value_t x; /* every row is checked, those read elsewhere too: a misspelt value fails early */
    const int rc = parse(r, v, &x, msg, len);
    if (rc) return rc;
    if (r->to == TO_NONE && r->type != T_GRID) continue;
    if (r->type == T_GRID) { /* the grid of a context that may span processes */
      if (out->distributed == 0 || out->grid_p >= 0) continue;
      out->distributed = 1;
      out->grid_p = x.p, out->grid_q = x.q;
      continue;
    }
    store(r, (char *)(r->to == TO_CONFIG ? (void *)out : (void *)extra) + r->offset, &x);
  }
  for (int i = 0; i < NROWS; i++) /* what the environment left unset: the row's default */
    if (rows[i].to == TO_EXTRA && *(int *)((char *)extra + rows[i].offset) < 0)
      *(int *)((char *)extra + rows[i].offset) = (int)rows[i].fallback;
  return 0;
}

int tsr_settings_check(const tessera_config_t *cfg, char *msg, size_t len) {
  for (int i = 0; i < NROWS; i++) {
    const row_t *r = &rows[i];
    if (r->to != TO_CONFIG || r->type != T_INT) continue;
    const int x = *(const int *)((const char *)cfg + r->offset);
    if (x < 0 || (x >= r->lo && x <= r->hi)) continue; /* "auto", or in the row's range */
    char v[16];
    snprintf(v, sizeof v, "%d", x);
    refuse(r, r->field, " = ", v, "", msg, len);
    return -2;
  }
  return 0;
}

int tessera_config_from_env(tessera_config_t *cfg, char *msg, size_t len) {
  if (!cfg) return -1;
  tessera_config_t out;
  const int rc = tsr_settings_resolve(cfg, &out, NULL, msg, len);
  if (!rc) *cfg = out;
  return rc;
}

int tessera_setting_number(const char *name, double *value, char *msg, size_t len) {
  const row_t *r = find(name);
  if (!r || !value || r->type == T_PATH || r->type == T_GRID || r->type == T_CHOICE) return -1;
  const char *v = env_of(r);
  value_t x = {.x = r->fallback};
  const int rc = v ? parse(r, v, &x, msg, len) : 0;
  if (!rc) *value = x.x;
  return rc;
}

/* The text of the value in force of row r in configuration c. */
static void show_field(const row_t *r, const tessera_config_t *c, char *buf, size_t len) {
  const void *field = (const char *)c + r->offset;
  switch (r->type) {
  case T_SIZE: {
    const int64_t b = *(const int64_t *)field;
    if (b < 0)
      snprintf(buf, len, "(%s)", r->pub.fallback);
    else
      snprintf(buf, len, "%.1f MiB", (double)b / (1 << 20));
    break;
  }
  case T_SECONDS:
    if (*(const double *)field < 0)
      snprintf(buf, len, "(%s)", r->pub.fallback);
    else
      snprintf(buf, len, "%g", *(const double *)field);
    break;
  case T_PATH: {
    const char *s = *(const char *const *)field;
    snprintf(buf, len, "%s", s ? s : "none");
    break;
  }
  case T_CHOICE: {
    size_t n = 0;
    const char *w = choice_word(r->choices, *(const int *)field, &n);
    snprintf(buf, len, "%.*s", (int)n, w ? w : "");
    break;
  }
  default: {
    const int x = *(const int *)field;
    if (x < 0)
      snprintf(buf, len, "(%s)", r->pub.fallback);
    else
      snprintf(buf, len, "%d", x);
  }
  }
}

int tessera_setting_show(const tessera_config_t *cfg, int i, char *buf, size_t len) {
  const row_t *r = i >= 0 && i < NROWS ? &rows[i] : NULL;
  if (!r || !buf || !len) return -1;
  if (cfg && r->to == TO_CONFIG) {
    show_field(r, cfg, buf, len);
  } else if (cfg && r->type == T_GRID) {
    if (cfg->distributed == 1 && cfg->grid_p > 0)
      snprintf(buf, len, "%dx%d", cfg->grid_p, cfg->grid_q);
    else
      snprintf(buf, len, "%s", cfg->distributed == 1 ? "auto" : "(one process)");
  } else {
    const char *v = env_of(r);
    if (v)
      snprintf(buf, len, "%s", v);
    else
      snprintf(buf, len, "(%s)", r->pub.fallback);
  }
  return 0;
}
