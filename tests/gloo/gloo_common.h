/* Helpers of the Gloo tests (tests/gloo/): the processes start here, with no MPI launcher.
 * gloo_main forks N processes (N from the command line); each runs the file's cmocka tests as
 * rank 0 .. N-1 and makes its communicators over a key-value store this header implements on
 * files of a fresh temporary folder (set: a file written aside, then renamed into place; get:
 * polled until the file is there or the timeout has passed). The parent waits for them all
 * (killing those still running after a deadline), removes the folder and fails when any did.
 * Header only.
 *
 * The including file defines _POSIX_C_SOURCE before its first system include and includes
 * cmocka first.
 */
#ifndef TESSERA_GLOO_COMMON_H
#define TESSERA_GLOO_COMMON_H

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../test_common.h"
#include <tessera/tessera.h>

static int g_rank, g_size; /* this process, and how many there are */
static char g_dir[256];    /* the store's folder */
static int g_made;         /* communicators this process made: the next one's key prefix */
static char g_prefix[32];  /* the prefix of the last store made */

/* The file of `key` in the store's folder: '/' becomes '%'. */
static inline void kv_path(const char *dir, const char *key, char *path, size_t len) {
  int n = snprintf(path, len, "%s/", dir);
  for (const char *k = key; *k && (size_t)n + 1 < len; k++) path[n++] = *k == '/' ? '%' : *k;
  path[n] = '\0';
}

static inline int kv_set(void *arg, const char *key, const void *value, size_t len) {
  char path[512], tmp[560];
  kv_path(arg, key, path, sizeof path);
  snprintf(tmp, sizeof tmp, "%s.%d.tmp", path, (int)getpid());
  FILE *f = fopen(tmp, "wb");
  if (!f) return -1;
  const int bad = len && fwrite(value, 1, len, f) != len;
  if (fclose(f) != 0 || bad) return -1;
  return rename(tmp, path) == 0 ? 0 : -1;
}

static inline int kv_get(void *arg, const char *key, void *value, size_t cap, size_t *len,
                         double timeout_s) {
  char path[512];
  kv_path(arg, key, path, sizeof path);
  const double until = tt_now() + timeout_s;
  FILE *f;
  while (!(f = fopen(path, "rb"))) {
    if (tt_now() > until) return -1;
    tt_sleep_us(1000);
  }
  struct stat st;
  fstat(fileno(f), &st);
  *len = (size_t)st.st_size;
  const size_t n = *len < cap ? *len : cap;
  const int bad = n && fread(value, 1, n, f) != n;
  fclose(f);
  return bad ? -1 : 0;
}

/* A store for this process's next communicator (the same prefix on every process: they make
 * their communicators in the same order). */
static inline tessera_comm_store_t gloo_store(void) {
  snprintf(g_prefix, sizeof g_prefix, "comm%d", g_made++);
  return (tessera_comm_store_t){.arg = g_dir,
                                .set = kv_set,
                                .get = kv_get,
                                .rank = g_rank,
                                .size = g_size,
                                .prefix = g_prefix};
}

/* A communicator over a fresh store with a timeout of timeout_s; fails the test when it can't
 * be made. */
static inline tessera_comm_t *gloo_comm(double timeout_s) {
  static tessera_comm_store_t kv; /* outlives the communicator: one at a time per process */
  kv = gloo_store();
  char why[256] = "";
  tessera_comm_config_t cfg = {
      .store = &kv, .timeout_s = timeout_s, .error = why, .error_len = sizeof why};
  tessera_comm_t *c = NULL;
  const int rc = tessera_comm_create(&cfg, &c);
  if (rc) fail_msg("process %d: tessera_comm_create = %d (%s)", g_rank, rc, why);
  return c;
}

/* Removes the store's folder and its files. */
static inline void gloo_clean(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return;
  struct dirent *e;
  char path[600];
  while ((e = readdir(d)))
    if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
      snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
      unlink(path);
    }
  closedir(d);
  rmdir(dir);
}

/* Forks argv[1] (default 2) processes, each running `run` (the cmocka group) as its rank;
 * returns 0 when all of them returned 0 within deadline_s. */
static inline int gloo_main(int argc, char **argv, int (*run)(void), double deadline_s) {
  g_size = argc > 1 ? atoi(argv[1]) : 2;
  if (g_size < 1 || g_size > 64) return 2;
  const char *tmp = getenv("TMPDIR");
  snprintf(g_dir, sizeof g_dir, "%s/tessera-gloo-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(g_dir)) return 2;
  fflush(NULL);
  pid_t pids[64];
  for (int r = 0; r < g_size; r++) {
    pids[r] = fork();
    if (pids[r] == 0) {
      g_rank = r;
      _exit(run() ? 1 : 0);
    }
  }
  int failed = 0;
  double until = tt_now() + deadline_s;
  for (int left = g_size; left > 0;) {
    int status = 0;
    const pid_t p = waitpid(-1, &status, WNOHANG);
    if (p > 0) {
      left--;
      if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) failed = 1;
      continue;
    }
    if (tt_now() > until) {
      fprintf(stderr, "gloo test: processes still running after %g s: killed\n", deadline_s);
      for (int r = 0; r < g_size; r++) kill(pids[r], SIGKILL);
      failed = 1;
      until = 1e300; /* killed once: now reaped */
    }
    tt_sleep_us(10000);
  }
  gloo_clean(g_dir);
  return failed;
}

#endif
