/* Helpers shared by every tessera test: quick mode, a watchdog, timing, temporary files and a
 * small deterministic random number generator. Header only (each test_*.c is one executable).
 *
 * The including file defines _POSIX_C_SOURCE (200809L) before its first system include and
 * includes cmocka before this header.
 */
#ifndef TESSERA_TEST_COMMON_H
#define TESSERA_TEST_COMMON_H

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <tessera/tessera.h>

/* ---------------------------------------------------------------- sanitizers, quick mode */

#if defined(__SANITIZE_THREAD__)
#define TT_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TT_TSAN 1
#endif
#endif
#ifndef TT_TSAN
#define TT_TSAN 0
#endif

#if defined(__SANITIZE_ADDRESS__)
#define TT_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TT_ASAN 1
#endif
#endif
#ifndef TT_ASAN
#define TT_ASAN 0
#endif

/** The exit status of a test program that ran nothing wrong but skipped checks it could not make
 *  here: ctest reports the test skipped (SKIP_RETURN_CODE in CMakeLists.txt), not passed. */
#define TT_SKIPPED 77

/** 1 when the test should use small counts: TESSERA_TEST_QUICK set (and not "0"), or a
 *  sanitizer build. */
static inline int tt_quick(void) {
  const char *q = getenv("TESSERA_TEST_QUICK");
  if (q && *q && strcmp(q, "0") != 0) return 1;
  return TT_TSAN || TT_ASAN;
}

/* ---------------------------------------------------------------- watchdog */

static void tt_watchdog_fired(int sig) {
  static const char msg[] = "\n*** tessera test watchdog: timed out (hang?) ***\n";
  (void)sig;
  if (write(2, msg, sizeof msg - 1) < 0) _exit(98);
  _exit(99);
}

/** Kills the test with a message if it is still running after `seconds` (scaled up under
 *  TSan); 0 disarms it. */
static inline void tt_watchdog(unsigned seconds) {
  signal(SIGALRM, tt_watchdog_fired);
  alarm(seconds ? seconds * (TT_TSAN ? 6u : 1u) : 0u);
}

/* ---------------------------------------------------------------- time */

static inline double tt_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static inline void tt_sleep_us(long us) {
  struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
  while (nanosleep(&ts, &ts) != 0) {
  }
}

/* ---------------------------------------------------------------- files */

/** Creates an empty temporary file and returns its path (free() it). */
static inline char *tt_tmpfile(const char *tag) {
  const char *dir = getenv("TMPDIR");
  char buf[512];
  if (!dir || !*dir) dir = "/tmp";
  snprintf(buf, sizeof buf, "%s/tessera_%s_XXXXXX", dir, tag);
  int fd = mkstemp(buf);
  if (fd < 0) return NULL;
  close(fd);
  return strdup(buf);
}

/** Reads a whole file into a NUL-terminated buffer (free() it); NULL if it cannot be read. */
static inline char *tt_read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 4096, n = 0;
  char *buf = malloc(cap);
  for (;;) {
    if (n + 1 >= cap) buf = realloc(buf, cap *= 2);
    size_t got = fread(buf + n, 1, cap - n - 1, f);
    if (got == 0) break;
    n += got;
  }
  fclose(f);
  buf[n] = '\0';
  if (len) *len = n;
  return buf;
}

/** Writes `len` bytes to `path`; 0 on success. */
static inline int tt_write_file(const char *path, const void *data, size_t len) {
  FILE *f = fopen(path, "wb");
  if (!f) return -1;
  size_t put = fwrite(data, 1, len, f);
  return (fclose(f) == 0 && put == len) ? 0 : -1;
}

/* ---------------------------------------------------------------- random numbers */

static inline uint64_t tt_mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

typedef struct {
  uint64_t s;
} tt_rng_t;

static inline tt_rng_t tt_rng(uint64_t seed) {
  tt_rng_t r = {tt_mix(seed * 0x2545f4914f6cdd1dull + 1)};
  return r;
}
static inline uint64_t tt_next(tt_rng_t *r) {
  return tt_mix(r->s += 0x9e3779b97f4a7c15ull);
}
/** Uniform in [0, n). */
static inline uint64_t tt_below(tt_rng_t *r, uint64_t n) {
  return n ? tt_next(r) % n : 0;
}
/** Uniform in [-1, 1). */
static inline double tt_uniform(tt_rng_t *r) {
  return (double)(tt_next(r) >> 11) * (2.0 / 9007199254740992.0) - 1.0;
}

/* ---------------------------------------------------------------- contexts */

/** A context with `workers` CPU workers, no GPU and policy `sched` (fails the test otherwise). */
static inline tessera_context_t *tt_cpu_context(int workers, tessera_sched_policy_t sched) {
  tessera_config_t cfg;
  tessera_config_init(&cfg);
  cfg.cpu_workers = workers;
  cfg.gpus = 0;
  cfg.sched = sched;
  tessera_context_t *ctx = NULL;
  int rc = tessera_init(&ctx, &cfg);
  if (rc != 0 || !ctx)
    fail_msg("tessera_init(%d CPU workers, sched %d) = %d", workers, (int)sched, rc);
  if (tessera_worker_count(ctx) != workers)
    fail_msg("%d workers asked, tessera_worker_count = %d", workers, tessera_worker_count(ctx));
  return ctx;
}

/** tessera_init(ctx, cfg)'s status, with what it wrote on stderr meanwhile in said (at most len
 *  bytes, NUL-terminated). */
static inline int tt_init_saying(tessera_context_t **ctx, const tessera_config_t *cfg, char *said,
                                 size_t len) {
  fflush(stderr);
  FILE *tmp = tmpfile();
  const int saved = dup(2);
  if (!tmp || saved < 0 || dup2(fileno(tmp), 2) < 0) fail_msg("stderr cannot be captured");
  const int rc = tessera_init(ctx, cfg);
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  rewind(tmp);
  said[fread(said, 1, len - 1, tmp)] = '\0';
  fclose(tmp);
  return rc;
}

#endif
