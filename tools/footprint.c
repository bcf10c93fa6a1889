/* tessera CLI — footprints of the commands and the check of them against the memory there is. */
#include "footprint.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "gen.h"

void cli_footprint_add(cli_footprint_t *f, const char *what, double bytes) {
  f->bytes += bytes;
  int i = 0;
  while (i < f->nparts && strcmp(f->part[i].what, what)) i++;
  if (i == FOOTPRINT_PARTS) return;
  if (i == f->nparts) f->part[f->nparts++].what = what;
  f->part[i].bytes += bytes;
}

double cli_array_bytes(tessera_dtype_t dtype, int64_t rows, int64_t cols) {
  return (double)rows * (double)cols * (double)tessera_dtype_size(dtype);
}

cli_memory_t cli_memory_here(void) {
  cli_memory_t m = {0, cli_host_memory()};
  FILE *f = fopen("/proc/meminfo", "r");
  if (!f) return m;
  char line[160];
  double kib = 0;
  while (fgets(line, sizeof line, f))
    if (sscanf(line, "MemAvailable: %lf kB", &kib) == 1) break;
  fclose(f);
  m.available = kib * 1024.0;
  return m;
}

double cli_device_available(const tessera_context_t *ctx) {
  int nodes[16];
  int n = tessera_scope_nodes(ctx, tessera_scope_all(), nodes, 16);
  double sum = 0;
  for (int i = 0; i < n && i < 16; i++) sum += (double)tessera_memory_node_available(ctx, nodes[i]);
  return sum;
}

double cli_descriptor_host_bytes(const tessera_context_t *ctx, double bytes) {
  return tessera_accelerator_count(ctx) > 0 && bytes <= 0.7 * cli_device_available(ctx) ? 0 : bytes;
}

/** `bytes` in words: MiB below a tenth of a GiB, TiB from 1024 GiB, else GiB. */
static const char *format_bytes(char *buf, size_t len, double bytes) {
  const double gib = bytes / 1073741824.0;
  if (gib < 0.1)
    snprintf(buf, len, "%.0f MiB", gib * 1024.0);
  else if (gib >= 1024.0)
    snprintf(buf, len, "%.1f TiB", gib / 1024.0);
  else
    snprintf(buf, len, "%.1f GiB", gib);
  return buf;
}

/** The parts of `f` that weigh at least a hundredth of it, as "what X; what Y". */
static void describe(const cli_footprint_t *f, char *buf, size_t len) {
  size_t used = 0;
  buf[0] = '\0';
  for (int i = 0; i < f->nparts && used < len; i++) {
    if (f->part[i].bytes < 0.01 * f->bytes) continue;
    char size[32];
    int w = snprintf(buf + used, len - used, "%s%s %s", used ? "; " : "", f->part[i].what,
                     format_bytes(size, sizeof size, f->part[i].bytes));
    used += w > 0 ? (size_t)w : 0;
  }
}

/** Bytes of fn's footprint at order n. */
static double bytes_at(cli_footprint_fn fn, const void *arg, int64_t n) {
  cli_footprint_t f = {0};
  fn(arg, n, &f);
  return f.bytes;
}

/** The bytes a footprint is held to: those available, else the memory in all (0: unknown). */
static double limit_of(cli_memory_t mem) {
  return mem.available > 0 ? mem.available : mem.total;
}

/** cli_check_footprint along one size n of fn's: the advice names `flag` and the largest n that
 *  fits, or, when flag is NULL, says `otherwise` (a format of that n). */
static int check_size(cli_footprint_fn fn, const void *arg, int64_t n, const char *flag,
                      const char *otherwise, const char *subject, const char *where,
                      const char *holder, cli_memory_t mem, int quiet) {
  const double limit = limit_of(mem);
  cli_footprint_t f = {0};
  fn(arg, n, &f);
  if (limit <= 0 || f.bytes <= limit) return CLI_OK;
  if (quiet) return CLI_FAILED;
  /* the footprint grows with n: the largest order that fits lies in [lo, hi) */
  int64_t lo = 0, hi = n;
  while (hi - lo > 1) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (bytes_at(fn, arg, mid) <= limit)
      lo = mid;
    else
      hi = mid;
  }
  char parts[512], need[32], avail[32], total[32], advice[96];
  describe(&f, parts, sizeof parts);
  if (flag)
    snprintf(advice, sizeof advice, "choose %s %lld or less", flag, (long long)lo);
  else
    snprintf(advice, sizeof advice, otherwise, (long long)lo);
  fprintf(stderr, "tessera: %s needs %s of memory at once%s (%s), but %s has %s available", subject,
          format_bytes(need, sizeof need, f.bytes), where ? where : "", parts,
          holder ? holder : "this machine", format_bytes(avail, sizeof avail, limit));
  if (mem.total > 0) fprintf(stderr, " (%s in all)", format_bytes(total, sizeof total, mem.total));
  fprintf(stderr, "; %s.\n", advice);
  return CLI_FAILED;
}

int cli_check_footprint(cli_footprint_fn fn, const void *arg, int64_t n, const char *flag,
                        const char *subject, const char *where, const char *holder,
                        cli_memory_t mem, int quiet) {
  return check_size(fn, arg, n, flag, "use a smaller matrix (order %lld or less)", subject, where,
                    holder, mem, quiet);
}

/** A footprint of the order and the right-hand sides seen along one of them, the other fixed. */
typedef struct {
  cli_footprint_rhs_fn fn;
  const void *arg;
  int64_t n, k;
  int along_k; /**< the size varied is k (else n) */
} along_t;

static void along(const void *arg, int64_t size, cli_footprint_t *f) {
  const along_t *a = arg;
  a->fn(a->arg, a->along_k ? a->n : size, a->along_k ? size : a->k, f);
}

int cli_check_footprint_rhs(cli_footprint_rhs_fn fn, const void *arg, int64_t n, int64_t k,
                            const char *flag, const char *kflag, const char *subject,
                            const char *where, const char *holder, cli_memory_t mem, int quiet) {
  cli_footprint_t one = {0}; /* with one right-hand side */
  fn(arg, n, k < 1 ? k : 1, &one);
  const double limit = limit_of(mem);
  along_t a = {fn, arg, n, k, k > 1 && (limit <= 0 || one.bytes <= limit)};
  if (a.along_k)
    return check_size(along, &a, k, kflag, "use %lld right-hand sides or fewer", subject, where,
                      holder, mem, quiet);
  return check_size(along, &a, n, flag, "use a smaller matrix (order %lld or less)", subject, where,
                    holder, mem, quiet);
}

void cli_footprint_eig(tessera_context_t *ctx, tessera_dtype_t dtype, tessera_job_t job, int64_t n,
                       cli_footprint_t *f) {
  const double a = cli_array_bytes(dtype, n, n);
  const double work = tessera_syevd_host_bytes(ctx, job, dtype, n);
  /* the check's array comes once tessera's working arrays are freed: the larger one counts */
  const double check = a;
  if (work >= check)
    cli_footprint_add(f, "tessera's working arrays (the check's after them):", work);
  else
    cli_footprint_add(f,
                      job == TESSERA_VECTORS ? "the check's product (after tessera's arrays):"
                                             : "LAPACK's copy of A for the check (after tessera's "
                                               "arrays):",
                      check);
  cli_footprint_add(f, "the eigenvalues:", 2 * cli_array_bytes(cli_real_dtype(dtype), n, 1));
}

void cli_footprint_solve(const void *arg, int64_t n, int64_t k, cli_footprint_t *f) {
  const cli_solve_footprint_t *s = arg;
  const cli_cmd_t r = s->routine;
  const double a = cli_array_bytes(s->dtype, n, n), b = cli_array_bytes(s->dtype, n, k);
  cli_footprint_add(f,
                    "A twice, the original kept for the residual and the copy overwritten:", 2 * a);
  if (cli_is_lu(r)) cli_footprint_add(f, "the pivots:", (double)n * sizeof(int));
  if (r == CMD_SYEVD)
    cli_footprint_eig(s->ctx, s->dtype, s->job, n, f);
  else if (!cli_is_factor(r))
    cli_footprint_add(f,
                      "B three times, the right-hand sides, the solution and the residual:", 3 * b);
  else /* the residual's two vectors */
    cli_footprint_add(f, "the residual's vectors:", 2 * cli_array_bytes(s->dtype, n, 1));
}

int cli_bench_check_footprint(const cli_opts_t *o, cli_footprint_fn fn, const void *arg,
                              int64_t n) {
  char subject[128];
  snprintf(subject, sizeof subject, "bench %s%s with n = %lld (%s)", cli_cmd_name(o->routine),
           o->out_of_core ? " --out-of-core" : "", (long long)n, tessera_dtype_name(o->dtype));
  return cli_check_footprint(fn, arg, n, "--n", subject, NULL, NULL, cli_memory_here(), 0);
}
