/* Kernel-time history: written at finalize to cfg.perfmodel_file, loaded again by the next
 * context, and never a crash when the file holds garbage; a file larger than a context's table
 * leaves it room for its own kernels and is not saved larger; no folder created but tessera's own
 * cache folder; contexts sharing the file and finalizing at once lose no entry and add their
 * counts.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <tessera/tessera.h>

#include "../test_common.h"

#define KNAME "tessera_test_pm_kernel"

typedef struct {
  int size;
} pm_args_t;

static int pm_kernel(const tessera_exec_t *ex, void *args) {
  const pm_args_t *a = args;
  double *x = ex->ptr[0];
  volatile double s = 0;
  for (int i = 0; i < a->size * 200; i++) s += 1e-9 * i;
  x[0] += 1.0 + 0.0 * s;
  return 0;
}
static double pm_flops(const void *args) {
  return 200.0 * ((const pm_args_t *)args)->size;
}
static uint64_t pm_key(const void *args) {
  return (uint64_t)((const pm_args_t *)args)->size;
}

static const tessera_kernel_t k_pm = {.name = KNAME,
                                      .impl = {[TESSERA_DEVICE_CPU] = pm_kernel},
                                      .flops = pm_flops,
                                      .size_key = pm_key};

/* tessera_init with `workers` CPU workers, no GPU and the history in `file`. */
static int open_with(const char *file, int workers, tessera_context_t **ctx) {
  tessera_config_t cfg;
  tessera_config_init(&cfg);
  cfg.cpu_workers = workers;
  cfg.gpus = 0;
  cfg.perfmodel_file = file;
  *ctx = NULL;
  return tessera_init(ctx, &cfg);
}

/* Inserts a task of kernel `k` reading and writing `h`. */
static void insert_rw(tessera_context_t *ctx, const tessera_kernel_t *k, pm_args_t *a,
                      tessera_data_t *h) {
  tessera_task_t t;
  memset(&t, 0, sizeof t);
  t.kernel = k;
  t.args = a;
  t.args_size = sizeof *a;
  t.ndata = 1;
  t.data[0] = h;
  t.mode[0] = TESSERA_RW;
  assert_int_equal(tessera_task_insert(ctx, &t), 0);
}

/* Runs `n` tasks of two size classes in a context using `file`; returns tessera_init's
 * status (everything else is asserted). */
static int run_with(const char *file, int n) {
  tessera_context_t *ctx = NULL;
  int rc = open_with(file, 2, &ctx);
  if (rc != 0) return rc;
  assert_non_null(ctx);
  double x[2] = {0, 0};
  tessera_data_t *h[2];
  for (int j = 0; j < 2; j++)
    assert_int_equal(
        tessera_data_register(ctx, TESSERA_HOST_NODE, &x[j], 1, 1, 1, sizeof(double), &h[j]), 0);
  for (int i = 0; i < n; i++) {
    pm_args_t a = {(i % 2) ? 64 : 8};
    insert_rw(ctx, &k_pm, &a, h[i % 2]);
  }
  assert_int_equal(tessera_wait_all(ctx), 0);
  for (int j = 0; j < 2; j++) assert_int_equal(tessera_data_release(ctx, h[j]), 0);
  assert_true(x[0] + x[1] == (double)n);
  assert_int_equal(tessera_finalize(ctx), 0);
  return 0;
}

static void assert_names_kernel(const char *path) {
  size_t len = 0;
  char *text = tt_read_file(path, &len);
  if (!text) fail_msg("perfmodel file %s was not written", path);
  if (!strstr(text, KNAME))
    fail_msg("perfmodel file %s (%zu bytes) does not name %s", path, len, KNAME);
  free(text);
}

static void test_history_roundtrip(void **state) {
  (void)state;
  int n = tt_quick() ? 100 : 400;
  char *path = tt_tmpfile("perfmodel");
  assert_non_null(path);
  unlink(path); /* the library must create it */
  assert_int_equal(run_with(path, n), 0);
  assert_names_kernel(path);
  /* a second context loads it, runs and saves it again */
  assert_int_equal(run_with(path, n), 0);
  assert_names_kernel(path);
  assert_int_equal(run_with(path, 10), 0);
  assert_names_kernel(path);
  /* an empty file is a valid (empty) history */
  assert_int_equal(tt_write_file(path, "", 0), 0);
  assert_int_equal(run_with(path, 10), 0);
  assert_names_kernel(path);
  unlink(path);
  free(path);
}

/* A history file of more entries than a context's table holds: the context still records its
 * own kernels (they are in the file it saves), and the file it saves is bounded. */
static void test_full_history_keeps_room(void **state) {
  (void)state;
  char *path = tt_tmpfile("perfmodel");
  assert_non_null(path);
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  const int old = 20000;
  for (int i = 0; i < old; i++) fprintf(f, "old_kernel_%d 0 %d 1e-05 3\n", i % 97, i);
  assert_int_equal(fclose(f), 0);
  assert_int_equal(run_with(path, 10), 0);
  assert_names_kernel(path);
  size_t len = 0;
  char *text = tt_read_file(path, &len);
  assert_non_null(text);
  int lines = 0;
  for (size_t i = 0; i < len; i++) lines += text[i] == '\n';
  free(text);
  if (lines >= old / 2) fail_msg("the saved history kept %d lines of %d", lines, old);
  unlink(path);
  free(path);
}

static void test_disabled(void **state) {
  (void)state;
  /* "none" disables the history: nothing may be created under that name */
  char cwd_none[] = "none";
  int existed = access(cwd_none, F_OK) == 0;
  assert_int_equal(run_with("none", 20), 0);
  if (!existed) assert_int_not_equal(access(cwd_none, F_OK), 0);
}

/* A garbage history must either be ignored (the context works) or refused with a negative
 * status; it must never crash. */
static void try_garbage(const char *path, const void *data, size_t len) {
  assert_int_equal(tt_write_file(path, data, len), 0);
  int rc = run_with(path, 20);
  if (rc != 0) {
    assert_true(rc < 0);
    return;
  }
  /* after a successful run the file must be loadable again */
  assert_int_equal(run_with(path, 20), 0);
}

static void test_garbage(void **state) {
  (void)state;
  char *path = tt_tmpfile("perfmodel_bad");
  assert_non_null(path);
  tt_rng_t r = tt_rng(42);
  size_t big = 200000;
  unsigned char *buf = malloc(big + 1);
  assert_non_null(buf);
  for (size_t i = 0; i < big; i++) buf[i] = (unsigned char)tt_below(&r, 256);
  try_garbage(path, buf, 4096); /* random bytes, NULs included */
  try_garbage(path, buf, big);  /* a lot of them */
  memset(buf, 'x', big);        /* one huge line without a newline */
  try_garbage(path, buf, big);
  static const char *texts[] = {
      KNAME "\n",
      KNAME " cpu 0 8 nan inf -1 garbage\n" KNAME " cpu 99999999999999999999 -5 1e400\n",
      KNAME " cpu 0 64 -1e300 -1e300 0\n" KNAME " cuda 7 64 1 1 1\n",
      "# tessera perfmodel\n\n\n  \t \n" KNAME,
      "\"" KNAME "\": {\"cpu\": [1, 2, 3\n",
      KNAME " 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30\n",
      "tessera_perfmodel 1\n" KNAME " " KNAME " " KNAME "\n-1 -1 -1 -1\n",
      /* the "name kind size_key mean count" shape with hostile values */
      KNAME " 0 8 nan 5\n" KNAME " 0 64 -1 -5\n" KNAME " 0 8 inf 9223372036854775807\n",
      KNAME " 99 8 1e-3 10\n" KNAME " -1 8 1e-3 10\n" KNAME " 2147483647 64 1e-3 10\n",
      KNAME " 1 64 1e-3 10\n" KNAME " 0 18446744073709551615 1e308 1\n" KNAME " 0 8 -0 0\n",
      KNAME " 0 8 1e-6 3\n" KNAME " 0 8 2e-6 4\n" KNAME " 0 8 1e-300 1\n" KNAME " 0 8 1e-6\n",
  };
  for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++)
    try_garbage(path, texts[i], strlen(texts[i]));
  /* a truncated copy of a real history */
  unlink(path);
  assert_int_equal(run_with(path, 50), 0);
  size_t len = 0;
  char *good = tt_read_file(path, &len);
  assert_non_null(good);
  for (size_t cut = 1; cut < len; cut += (len / 7) + 1) try_garbage(path, good, cut);
  free(good);
  unlink(path);
  free(buf);
  free(path);
}

/* ---------------------------------------------------------------- folders */

static int is_dir(const char *p) {
  struct stat st;
  return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* A history path in a folder that does not exist: the folder is not created (no mkdir -p of
 * user input), nothing is written, and the context still finalizes with 0. */
static void test_missing_folder_not_created(void **state) {
  (void)state;
  char *base = tt_tmpfile("pm_missing");
  assert_non_null(base);
  unlink(base); /* base is now a name nothing holds */
  char path[600];
  snprintf(path, sizeof path, "%s/a/b/perfmodel.txt", base);
  assert_int_equal(run_with(path, 10), 0);
  assert_false(is_dir(base));
  assert_int_not_equal(access(path, F_OK), 0);
  free(base);
}

/* The default path: tessera's own cache folder (and the cache folder above it) are made. */
static void test_own_cache_folder_created(void **state) {
  (void)state;
  char *base = tt_tmpfile("pm_cache");
  assert_non_null(base);
  unlink(base);
  assert_int_equal(mkdir(base, 0700), 0);
  char cache[600], file[700];
  snprintf(cache, sizeof cache, "%s/cache", base);
  snprintf(file, sizeof file, "%s/tessera/perfmodel.txt", cache);
  /* the default path: no TESSERA_PERFMODEL (ctest sets it to none), XDG_CACHE_HOME in base */
  const char *names[2] = {"XDG_CACHE_HOME", "TESSERA_PERFMODEL"};
  char *saved[2];
  for (int k = 0; k < 2; k++) saved[k] = getenv(names[k]) ? strdup(getenv(names[k])) : NULL;
  setenv("XDG_CACHE_HOME", cache, 1);
  unsetenv("TESSERA_PERFMODEL");
  assert_int_equal(run_with(NULL, 10), 0);
  for (int k = 0; k < 2; k++) {
    if (saved[k])
      setenv(names[k], saved[k], 1);
    else
      unsetenv(names[k]);
    free(saved[k]);
  }
  assert_names_kernel(file);
  unlink(file);
  snprintf(file, sizeof file, "%s/tessera", cache);
  assert_int_equal(rmdir(file), 0);
  assert_int_equal(rmdir(cache), 0);
  assert_int_equal(rmdir(base), 0);
  free(base);
}

/* ---------------------------------------------------------------- contexts finalizing at once */

#define KSHARED "tessera_test_pm_shared"
static const tessera_kernel_t k_shared = {
    .name = KSHARED, .impl = {[TESSERA_DEVICE_CPU] = pm_kernel}, .size_key = pm_key};
static const tessera_kernel_t k_own[2] = {
    {.name = "tessera_test_pm_first",
     .impl = {[TESSERA_DEVICE_CPU] = pm_kernel},
     .size_key = pm_key},
    {.name = "tessera_test_pm_second",
     .impl = {[TESSERA_DEVICE_CPU] = pm_kernel},
     .size_key = pm_key},
};

enum { SHARED_TASKS = 10 };

typedef struct {
  tessera_context_t *ctx;
  pthread_barrier_t *go;
  int status;
} finisher_t;

static void *finish_body(void *arg) {
  finisher_t *f = arg;
  pthread_barrier_wait(f->go);
  f->status = tessera_finalize(f->ctx);
  return NULL;
}

/* A context on `path` that ran SHARED_TASKS tasks of the shared kernel and one of its own. */
static tessera_context_t *context_with_tasks(const char *path, int which) {
  tessera_context_t *ctx = NULL;
  assert_int_equal(open_with(path, 1, &ctx), 0);
  double x = 0;
  tessera_data_t *h;
  assert_int_equal(tessera_data_register(ctx, TESSERA_HOST_NODE, &x, 1, 1, 1, sizeof x, &h), 0);
  pm_args_t a = {8};
  for (int i = 0; i <= SHARED_TASKS; i++)
    insert_rw(ctx, i < SHARED_TASKS ? &k_shared : &k_own[which], &a, h);
  assert_int_equal(tessera_wait_all(ctx), 0);
  assert_int_equal(tessera_data_release(ctx, h), 0);
  return ctx;
}

/* The count the file at `path` gives kernel `name` (size key 8), 0 when absent. */
static long count_in(const char *path, const char *name) {
  FILE *f = fopen(path, "r");
  if (!f) return 0;
  char line[256], n[64];
  int kind;
  unsigned long long key;
  double mean;
  long count, found = 0;
  while (fgets(line, sizeof line, f))
    if (sscanf(line, "%63s %d %llu %lf %ld", n, &kind, &key, &mean, &count) == 5 &&
        strcmp(n, name) == 0 && key == 8)
      found = count;
  fclose(f);
  return found;
}

static void test_concurrent_finalize_loses_nothing(void **state) {
  (void)state;
  char *path = tt_tmpfile("pm_shared");
  assert_non_null(path);
  int rounds = tt_quick() ? 3 : 8;
  for (int r = 0; r < rounds; r++) {
    unlink(path);
    pthread_barrier_t go;
    pthread_barrier_init(&go, NULL, 2);
    finisher_t f[2];
    pthread_t th[2];
    for (int c = 0; c < 2; c++) f[c] = (finisher_t){context_with_tasks(path, c), &go, -1};
    for (int c = 0; c < 2; c++)
      assert_int_equal(pthread_create(&th[c], NULL, finish_body, &f[c]), 0);
    for (int c = 0; c < 2; c++) {
      pthread_join(th[c], NULL);
      assert_int_equal(f[c].status, 0);
    }
    pthread_barrier_destroy(&go);
    /* both contexts' own kernels are there, and the shared one counts both contexts' runs */
    assert_int_equal(count_in(path, k_own[0].name), 1);
    assert_int_equal(count_in(path, k_own[1].name), 1);
    assert_int_equal(count_in(path, KSHARED), 2 * SHARED_TASKS);
  }
  /* no temporary file is left beside the history */
  char cmd[700];
  snprintf(cmd, sizeof cmd, "ls %s.* >/dev/null 2>&1", path);
  assert_int_not_equal(system(cmd), 0);
  unlink(path);
  free(path);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_history_roundtrip),
      cmocka_unit_test(test_full_history_keeps_room),
      cmocka_unit_test(test_disabled),
      cmocka_unit_test(test_garbage),
      cmocka_unit_test(test_missing_folder_not_created),
      cmocka_unit_test(test_own_cache_folder_created),
      cmocka_unit_test(test_concurrent_finalize_loses_nothing),
  };
  tt_watchdog(300);
  return cmocka_run_group_tests(tests, NULL, NULL);
}
