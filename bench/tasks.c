/* bench_tasks — runtime overhead: inserts and runs M empty tasks in three shapes and reports
 * tasks per second (insertion + completion, timed up to tessera_wait_all).
 *
 *   independent   tasks touching no handle
 *   chains        K chains; each task is RW on its chain's handle (task i on chain i mod K)
 *   random-dag    each task touches 2 or 3 distinct handles out of H, each R or RW at random
 *
 * usage: bench_tasks [--tasks M] [--workers W] [--chains K] [--handles H] [--json]
 * Defaults: M = 1000000, W = 2 (or TESSERA_CPU_WORKERS when set), K = 16, H = 1024.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <tessera/tessera.h>

/** Command-line settings. */
typedef struct {
  long long tasks, workers, chains, handles;
  int json;
} bench_opts_t;

typedef enum { SHAPE_INDEPENDENT, SHAPE_CHAINS, SHAPE_DAG, NSHAPES } shape_t;

static const char *const shape_names[NSHAPES] = {"independent", "chains", "random-dag"};

/** Registered handles, each over one double. */
typedef struct {
  tessera_data_t **h;
  double *mem;
  long long count;
} handles_t;

/** Timings of one shape. */
typedef struct {
  double insert_s, total_s;
  long long handles;
} shape_result_t;

static int empty_task(const tessera_exec_t *ex, void *args) {
  (void)ex;
  (void)args;
  return 0;
}

static const tessera_kernel_t empty_kernel = {
    .name = "bench_empty",
    .impl = {[TESSERA_DEVICE_CPU] = empty_task},
};

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static uint64_t next_random(uint64_t *state) {
  *state ^= *state << 13;
  *state ^= *state >> 7;
  *state ^= *state << 17;
  return *state;
}

/** Fills the handles and modes of task number i of `shape`. */
static void describe(shape_t shape, long long i, const bench_opts_t *o, const handles_t *hs,
                     uint64_t *rng, tessera_task_t *t) {
  t->ndata = 0;
  if (shape == SHAPE_CHAINS) {
    t->ndata = 1;
    t->data[0] = hs->h[i % o->chains];
    t->mode[0] = TESSERA_RW;
  } else if (shape == SHAPE_DAG) {
    int k = 2 + (int)(next_random(rng) % 2);
    while (t->ndata < k) {
      tessera_data_t *h = hs->h[next_random(rng) % (uint64_t)o->handles];
      int dup = 0;
      for (int d = 0; d < t->ndata; d++) dup |= t->data[d] == h;
      if (dup) continue;
      t->data[t->ndata] = h;
      t->mode[t->ndata++] = next_random(rng) & 1 ? TESSERA_RW : TESSERA_R;
    }
  }
}

static int run_shape(tessera_context_t *ctx, shape_t shape, const bench_opts_t *o,
                     const handles_t *hs, shape_result_t *res) {
  tessera_task_t t;
  memset(&t, 0, sizeof t);
  t.kernel = &empty_kernel;
  uint64_t rng = 0x9e3779b97f4a7c15ULL;
  double t0 = now();
  for (long long i = 0; i < o->tasks; i++) {
    describe(shape, i, o, hs, &rng, &t);
    int status = tessera_task_insert(ctx, &t);
    if (status) {
      fprintf(stderr, "bench_tasks: %s: task %lld: insert failed: %s: %s\n", shape_names[shape], i,
              tessera_strerror(status), tessera_last_error(ctx));
      tessera_wait_all(ctx);
      return 1;
    }
  }
  double t1 = now();
  int status = tessera_wait_all(ctx);
  double t2 = now();
  if (status) {
    fprintf(stderr, "bench_tasks: %s: wait failed: %s: %s\n", shape_names[shape],
            tessera_strerror(status), tessera_last_error(ctx));
    return 1;
  }
  res->insert_s = t1 - t0;
  res->total_s = t2 - t0;
  res->handles = shape == SHAPE_CHAINS ? o->chains : shape == SHAPE_DAG ? o->handles : 0;
  return 0;
}

static void print_result(const bench_opts_t *o, shape_t shape, const shape_result_t *r) {
  double rate = r->total_s > 0 ? (double)o->tasks / r->total_s : 0;
  double insert_rate = r->insert_s > 0 ? (double)o->tasks / r->insert_s : 0;
  if (o->json)
    printf("{\"bench\": \"tasks\", \"shape\": \"%s\", \"tasks\": %lld, \"workers\": %lld, "
           "\"handles\": %lld, \"insert_seconds\": %.6g, \"seconds\": %.6g, "
           "\"tasks_per_second\": %.6g, \"insert_tasks_per_second\": %.6g}\n",
           shape_names[shape], o->tasks, o->workers, r->handles, r->insert_s, r->total_s, rate,
           insert_rate);
  else
    printf("%-12s %9lld %8lld %10.3f %10.3f %12.4g %14.4g\n", shape_names[shape], o->tasks,
           r->handles, r->insert_s, r->total_s, rate, insert_rate);
  fflush(stdout);
}

static int register_handles(tessera_context_t *ctx, handles_t *hs, long long count) {
  hs->h = calloc((size_t)count, sizeof *hs->h);
  hs->mem = calloc((size_t)count, sizeof *hs->mem);
  hs->count = 0;
  if (!hs->h || !hs->mem) {
    fprintf(stderr, "bench_tasks: out of memory for %lld handles\n", count);
    return 1;
  }
  for (; hs->count < count; hs->count++) {
    int status = tessera_data_register(ctx, TESSERA_HOST_NODE, &hs->mem[hs->count], 1, 1, 1,
                                       sizeof(double), &hs->h[hs->count]);
    if (status) {
      fprintf(stderr, "bench_tasks: registering handle %lld failed: %s: %s\n", hs->count,
              tessera_strerror(status), tessera_last_error(ctx));
      return 1;
    }
  }
  return 0;
}

static void release_handles(tessera_context_t *ctx, handles_t *hs) {
  for (long long i = 0; i < hs->count; i++) tessera_data_release(ctx, hs->h[i]);
  free(hs->h);
  free(hs->mem);
}

static int usage(FILE *f, int rc) {
  fputs("usage: bench_tasks [--tasks M] [--workers W] [--chains K] [--handles H] [--json]\n"
        "  --tasks M    empty tasks per shape (default 1000000)\n"
        "  --workers W  CPU workers (default 2, or TESSERA_CPU_WORKERS when set)\n"
        "  --chains K   chains of the 'chains' shape (default 16)\n"
        "  --handles H  handles of the 'random-dag' shape (default 1024, at least 3)\n"
        "  --json       one JSON object per shape\n",
        f);
  return rc;
}

/** Parses argv into `o`. Returns -1 to go on, else the exit code. */
static int parse_args(int argc, char **argv, bench_opts_t *o) {
  const struct {
    const char *name;
    long long *dst, min;
  } nums[] = {{"--tasks", &o->tasks, 0},
              {"--workers", &o->workers, 1},
              {"--chains", &o->chains, 1},
              {"--handles", &o->handles, 3}};
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--json") == 0) {
      o->json = 1;
      continue;
    }
    if (strcmp(argv[i], "--help") == 0) return usage(stdout, 0);
    size_t k = 0;
    while (k < sizeof nums / sizeof nums[0] && strcmp(argv[i], nums[k].name)) k++;
    if (k == sizeof nums / sizeof nums[0]) {
      fprintf(stderr, "bench_tasks: unknown option '%s'\n", argv[i]);
      return usage(stderr, 2);
    }
    char *end = NULL;
    errno = 0;
    long long v = i + 1 < argc ? strtoll(argv[i + 1], &end, 10) : 0;
    if (!end || end == argv[i + 1] || *end || errno || v < nums[k].min || v > INT_MAX) {
      fprintf(stderr, "bench_tasks: %s needs an integer >= %lld\n", nums[k].name, nums[k].min);
      return 2;
    }
    *nums[k].dst = v;
    i++;
  }
  return -1;
}

int main(int argc, char **argv) {
  bench_opts_t o = {1000000, -1, 16, 1024, 0};
  int rc = parse_args(argc, argv, &o);
  if (rc >= 0) return rc;
  tessera_config_t cfg;
  tessera_config_init(&cfg);
  char why[256] = "";
  if (tessera_config_from_env(&cfg, why, sizeof why)) {
    fprintf(stderr, "bench_tasks: %s\n", why);
    return 1;
  }
  /* --workers, else TESSERA_CPU_WORKERS, else 2 */
  if (o.workers > 0) cfg.cpu_workers = (int)o.workers;
  if (cfg.cpu_workers < 0) cfg.cpu_workers = 2;
  cfg.gpus = 0;
  cfg.perfmodel_file = "none";
  tessera_context_t *ctx;
  int status = tessera_init(&ctx, &cfg);
  if (status) {
    fprintf(stderr, "bench_tasks: tessera_init failed: %s\n", tessera_strerror(status));
    return 1;
  }
  o.workers = tessera_worker_count(ctx);
  if (!o.json) {
    printf("# bench_tasks: %lld empty tasks per shape, %lld CPU workers\n", o.tasks, o.workers);
    printf("%-12s %9s %8s %10s %10s %12s %14s\n", "shape", "tasks", "handles", "insert s",
           "total s", "tasks/s", "insert tasks/s");
  }
  handles_t hs;
  rc = register_handles(ctx, &hs, o.chains > o.handles ? o.chains : o.handles);
  for (int s = 0; s < NSHAPES && rc == 0; s++) {
    shape_result_t r;
    rc = run_shape(ctx, (shape_t)s, &o, &hs, &r);
    if (rc == 0) print_result(&o, (shape_t)s, &r);
  }
  release_handles(ctx, &hs);
  status = tessera_finalize(ctx);
  if (status < 0) fprintf(stderr, "bench_tasks: finalize failed: %s\n", tessera_strerror(status));
  return rc || status < 0 ? 1 : 0;
}
