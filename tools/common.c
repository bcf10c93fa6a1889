/* tessera CLI — context set-up, error reports, output paths, flop counts and result printing. */
#define _GNU_SOURCE /* sched_getaffinity */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "gen.h"

/** Names of the subcommands, indexed by cli_cmd_t. */
static const char *const cmd_names[CMD_COUNT] = {"info",  "potrf", "potrs", "posv",  "getrf",
                                                 "gesv",  "geqrf", "gels",  "syevd", "gepolar",
                                                 "gesvd", "bench", "demo",  "gen",   "trace"};

/** Names of the device kinds, indexed by tessera_device_kind_t. */
static const char *const kind_names[TESSERA_DEVICE_KINDS] = {"cpu", "cuda", "sim"};

double cli_host_memory(void) {
  long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
  return pages > 0 && size > 0 ? (double)pages * (double)size : 0;
}

int cli_check_writable(const char *flag, const char *path) {
  /* a new file is created and removed again; an existing one is opened without truncating it */
  int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0666);
  if (fd >= 0) {
    close(fd);
    unlink(path);
    return CLI_OK;
  }
  if (errno == EEXIST && (fd = open(path, O_WRONLY)) >= 0) {
    close(fd);
    return CLI_OK;
  }
  fprintf(stderr, "tessera: %s %s cannot be written: %s; nothing was computed.\n", flag, path,
          strerror(errno));
  return CLI_FAILED;
}

const char *cli_beside_path(const char *output, const char *suffix, char *buf, size_t len) {
  size_t n = strlen(output);
  if (n >= 4 && strcmp(output + n - 4, ".npy") == 0) n -= 4;
  snprintf(buf, len, "%.*s%s", (int)n, output, suffix);
  return buf;
}

int cli_holds(const tessera_context_t *ctx) {
  tessera_comm_t *c = tessera_context_comm(ctx);
  return !c || tessera_comm_rank(c) == 0;
}

int cli_baseline_threads(const cli_opts_t *o, const tessera_context_t *ctx) {
  tessera_device_info_t cpu = {.workers = 0};
  int threads = o->workers;
  if (threads < 0 && tessera_device_count(ctx, TESSERA_DEVICE_CPU) > 0 &&
      tessera_device_info(ctx, TESSERA_DEVICE_CPU, 0, &cpu) == 0)
    threads = cpu.workers;
  return threads < 1 ? 1 : threads;
}

#ifdef TESSERA_HAVE_OPENBLAS_THREADS
void openblas_set_num_threads(int num_threads);
#endif

void cli_blas_threads(int threads) {
#ifdef TESSERA_HAVE_OPENBLAS_THREADS
  openblas_set_num_threads(threads);
#else
  (void)threads;
#endif
}

const char *cli_cmd_name(cli_cmd_t cmd) {
  return cmd_names[cmd];
}

const char *cli_mixed_name(int mixed) {
  static const char *const names[] = {"auto", "", "s", "tf32", "bf16", "h"};
  return mixed >= 0 && mixed < (int)(sizeof names / sizeof names[0]) ? names[mixed] : NULL;
}

const char *cli_factor_name(tessera_dtype_t dtype, tessera_factor_t f) {
  static const char *tensor[6] = {[TESSERA_FACTOR_TF32] = "tf32",
                                  [TESSERA_FACTOR_BF16] = "bf16",
                                  [TESSERA_FACTOR_HALF] = "f16"};
  if (f > TESSERA_FACTOR_SINGLE && f <= TESSERA_FACTOR_HALF) return tensor[f];
  if (f == TESSERA_FACTOR_SINGLE)
    return tessera_dtype_name(tessera_dtype_is_complex(dtype) ? TESSERA_C64 : TESSERA_F32);
  return tessera_dtype_name(dtype);
}

/** Compares the GPUs the context found with --gpus: fewer is a warning, or with --require-gpus
 *  a failure (the context is then finalized). Returns CLI_OK or CLI_FAILED. */
static int check_gpus(const cli_opts_t *o, tessera_context_t **ctx) {
  int found = tessera_accelerator_count(*ctx);
  if (o->gpus <= found) return CLI_OK;
  const char *on = found ? "the GPUs found and the CPU workers" : "the CPU workers only";
  if (!o->require_gpus) {
    fprintf(stderr,
            "tessera: warning: --gpus %d, but %d GPU%s usable here; running on %s "
            "(--require-gpus makes this an error)\n",
            o->gpus, found, found == 1 ? " is" : "s are", on);
    return CLI_OK;
  }
  fprintf(stderr, "tessera: --gpus %d with --require-gpus, but %d GPU%s usable here\n", o->gpus,
          found, found == 1 ? " is" : "s are");
  tessera_finalize(*ctx);
  *ctx = NULL;
  return CLI_FAILED;
}

/** Refuses --mixed tf32, bf16 or h on a context without GPUs (tensor cores compute those
 *  factors), saying what runs on CPUs; the context is then finalized. Returns CLI_OK or
 *  CLI_FAILED. */
static int check_tensor_cores(const cli_opts_t *o, tessera_context_t **ctx) {
  if (o->mixed <= TESSERA_FACTOR_SINGLE || tessera_accelerator_count(*ctx) > 0) return CLI_OK;
  fprintf(stderr,
          "tessera: --mixed %s factors A on GPU tensor cores, but this run has no GPU (%s); use "
          "--mixed s for a single-precision factor on the CPUs, or --mixed auto\n",
          cli_mixed_name(o->mixed), o->gpus == 0 ? "--gpus 0" : "none is usable here");
  tessera_finalize(*ctx);
  *ctx = NULL;
  return CLI_FAILED;
}

/** Warns where --workers asks for more CPU workers than the cores this process may run on, when
 *  that is fewer than the machine's: a launcher bound it (mpirun binds each of 2 processes to
 *  one core by default), and the workers would share those few cores. */
static void check_affinity(const cli_opts_t *o) {
  cpu_set_t set;
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  if (o->workers < 2 || sched_getaffinity(0, sizeof set, &set) != 0) return;
  const int mine = CPU_COUNT(&set);
  if (mine >= o->workers || mine >= online) return;
  fprintf(stderr,
          "tessera: warning: --workers %d, but this process may run on %d of the machine's %ld "
          "cores (its CPU affinity), which the workers share; mpirun binds each process to a "
          "core or socket by default: launch with --bind-to none, or give fewer workers\n",
          o->workers, mine, online);
}

/** cli_context and cli_context_again: `check` compares the GPUs found with --gpus and asks for
 *  them where --mixed needs tensor cores. */
static int open_context(const cli_opts_t *o, tessera_context_t **ctx, int check) {
  tessera_config_t cfg;
  tessera_config_init(&cfg);
  if (o->workers >= 0) cfg.cpu_workers = o->workers;
  if (o->gpus >= 0) cfg.gpus = o->gpus;
  if (o->tile > 0) cfg.tile_size = o->tile;
  if (o->trace) cfg.trace_file = o->trace;
  cfg.sched = o->sched;
  /* over the processes of mpirun with --grid (or TESSERA_GRID: grid_p -1), else this one alone */
  cfg.distributed = o->grid_p != 0;
  if (o->grid_p > 0) cfg.grid_p = o->grid_p, cfg.grid_q = o->grid_q;
  int status = tessera_init(ctx, &cfg);
  if (status == 0 && check) check_affinity(o);
  if (status == 0 && check && check_gpus(o, ctx)) return CLI_FAILED;
  if (status == 0) return check ? check_tensor_cores(o, ctx) : CLI_OK;
  *ctx = NULL;
  if (status > TESSERA_ERR_BASE) /* tessera_init printed which setting and why */
    fprintf(stderr,
            "tessera: cannot start the runtime: the options (--workers, --gpus, --sched, --tile, "
            "--grid or TESSERA_* variables) give an invalid configuration\n");
  else
    fprintf(stderr, "tessera: cannot start the runtime: %s\n", tessera_strerror(status));
  return CLI_FAILED;
}

int cli_context(const cli_opts_t *o, tessera_context_t **ctx) {
  return open_context(o, ctx, 1);
}

int cli_context_again(const cli_opts_t *o, tessera_context_t **ctx) {
  return open_context(o, ctx, 0);
}

int cli_finish(tessera_context_t *ctx, int rc) {
  int status = tessera_finalize(ctx);
  if (status >= 0) return rc;
  fprintf(stderr, "tessera: finalize failed: %s\n", tessera_strerror(status));
  return CLI_FAILED;
}

int cli_report(const tessera_context_t *ctx, cli_progress_t *prog, const char *what, int status) {
  progress_phase(prog, NULL);
  const char *detail = ctx ? tessera_last_error(ctx) : "";
  if (status > 0 && detail[0]) /* the message names the routine, the order and the pivot */
    fprintf(stderr, "tessera: %s (info = %d)\n", detail, status);
  else if (status > 0)
    fprintf(stderr,
            "tessera: %s: the matrix is not positive definite: the leading minor of order %d "
            "is not, or holds NaN (info = %d)\n",
            what, status, status);
  else
    fprintf(stderr, "tessera: %s failed: %s%s%s\n", what, tessera_strerror(status),
            detail[0] ? ": " : "", detail);
  return CLI_FAILED;
}

tessera_dtype_t cli_real_dtype(tessera_dtype_t dtype) {
  return dtype == TESSERA_F32 || dtype == TESSERA_C64 ? TESSERA_F32 : TESSERA_F64;
}

void *cli_alloc(tessera_dtype_t dtype, int64_t rows, int64_t cols) {
  int ok;
  size_t bytes = gen_bytes(dtype, rows, cols, &ok);
  /* more than the machine holds is refused before the kernel overcommits it */
  double need = (double)rows * (double)cols * (double)tessera_dtype_size(dtype);
  void *p = ok && !(need > cli_host_memory() && cli_host_memory() > 0)
                ? aligned_alloc(64, (bytes + 63) / 64 * 64 + 64)
                : NULL;
  if (!p) {
    fprintf(stderr,
            "tessera: cannot allocate %.1f GiB for a %lld x %lld %s array (this machine has "
            "%.1f GiB of memory); choose a smaller --n\n",
            need / 1073741824.0, (long long)rows, (long long)cols, tessera_dtype_name(dtype),
            cli_host_memory() / 1073741824.0);
  }
  return p;
}

double cli_flops(cli_cmd_t routine, tessera_dtype_t dtype, int64_t n, int64_t nrhs) {
  const double dn = (double)n, solve = 2.0 * dn * dn * (double)nrhs;
  const double factor = (cli_is_lu(routine) ? 2.0 : 1.0) * dn * dn * dn / 3.0;
  double flops = cli_is_factor(routine) ? factor : routine == CMD_POTRS ? solve : factor + solve;
  return tessera_dtype_is_complex(dtype) ? 4.0 * flops : flops;
}

void cli_result_init(cli_result_t *r, const cli_opts_t *o, const tessera_context_t *ctx) {
  *r = (cli_result_t){.routine = cli_cmd_name(o->routine), .dtype = o->dtype, .uplo = o->uplo};
  if (cli_is_lu(o->routine) || cli_is_qr(o->routine) || cli_is_svd(o->routine))
    r->uplo = (tessera_uplo_t)'-';
  if (o->routine == CMD_SYEVD) r->job = (char)cli_eig_job(o), r->il = o->il, r->iu = o->iu;
  r->orthogonality = NAN;
  r->tile = tessera_default_tile(ctx);
  r->workers = tessera_worker_count(ctx);
  for (int k = 0; k < TESSERA_DEVICE_KINDS; k++)
    r->devices += tessera_device_count(ctx, (tessera_device_kind_t)k);
  r->residual = NAN;
}

/** Width of the columns of a baseline named `name`: its seconds and its rate. */
static int col_seconds(const char *name) {
  int w = (int)strlen(name) + 2;
  return w < 11 ? 11 : w;
}
static int col_rate(const char *name) {
  int w = (int)strlen(name) + 5;
  return w < 12 ? 12 : w;
}

void cli_print_header(const cli_opts_t *o, const char *baseline, const char *baseline2) {
  if (o->json) return;
  printf("%-6s ", "op");
  if (o->cmd == CMD_BENCH) printf("%-6s ", "api");
  if (cli_is_qr(o->routine)) /* gels has no orthogonality to show */
    printf("%-5s %7s %7s %5s %5s %4s %4s %11s %10s %10s%s", "dtype", "m", "n", "nrhs", "tile",
           "dev", "wrk", "seconds", "GFLOP/s", "residual",
           o->routine == CMD_GEQRF ? "       orth" : "");
  else if (o->routine == CMD_SYEVD)
    printf("%-5s %-4s %-3s %7s %5s %4s %4s %11s %10s %10s %10s", "dtype", "uplo", "job", "n",
           "tile", "dev", "wrk", "seconds", "GFLOP/s", "residual", "orth");
  else if (cli_is_svd(o->routine))
    printf("%-5s %-3s %7s %7s %5s %4s %4s %11s %10s %10s %10s", "dtype", "job", "m", "n", "tile",
           "dev", "wrk", "seconds", "GFLOP/s", "residual", "orth");
  else
    printf("%-5s %-4s %7s %5s %5s %4s %4s %11s %10s %10s", "dtype", "uplo", "n", "nrhs", "tile",
           "dev", "wrk", "seconds", "GFLOP/s", "residual");
  if (o->mixed >= 0) printf(" %6s %5s", "factor", "iter");
  char s[64], rate[64];
  if (baseline) {
    snprintf(s, sizeof s, "%s s", baseline);
    snprintf(rate, sizeof rate, "%s GF/s", baseline);
    printf(" %*s %*s %7s", col_seconds(baseline), s, col_rate(baseline), rate, "ratio");
  }
  if (baseline2) {
    snprintf(rate, sizeof rate, "%s GF/s", baseline2);
    printf(" %*s %7s", col_rate(baseline2), rate, "ratio2");
  }
  printf("\n");
}

/** Prints `"key": value`, with null for a non-finite value. */
static void json_num(const char *key, double v) {
  if (isfinite(v))
    printf(", \"%s\": %.6g", key, v);
  else
    printf(", \"%s\": null", key);
}

/** gflops / baseline, NaN when the baseline has no rate. */
static double rate_ratio(double gflops, double baseline) {
  return baseline > 0 ? gflops / baseline : NAN;
}

void cli_print_result(const cli_opts_t *o, const cli_result_t *r) {
  double ratio = rate_ratio(r->gflops, r->baseline_gflops);
  double ratio2 = rate_ratio(r->gflops, r->baseline2_gflops);
  if (o->json) {
    printf(
        "{\"routine\": \"%s\", \"dtype\": \"%s\", \"uplo\": \"%c\", \"n\": %lld, \"nrhs\": %lld, "
        "\"tile\": %d, \"devices\": %d, \"workers\": %d",
        r->routine, tessera_dtype_name(r->dtype), (char)r->uplo, (long long)r->n,
        (long long)r->nrhs, r->tile, r->devices, r->workers);
    if (r->api) printf(", \"api\": \"%s\"", r->api);
    if (r->home) printf(", \"home\": \"%s\"", r->home);
    json_num("seconds", r->seconds);
    json_num("gflops", r->gflops);
    json_num("residual", r->residual);
    if (r->m > 0 || cli_is_qr(o->routine) || cli_is_svd(o->routine))
      printf(", \"m\": %lld", (long long)r->m);
    if (r->job) printf(", \"job\": \"%c\"", r->job);
    if (r->il > 0) printf(", \"il\": %lld, \"iu\": %lld", (long long)r->il, (long long)r->iu);
    if (isfinite(r->orthogonality)) json_num("orthogonality", r->orthogonality);
    if (r->factor)
      printf(", \"factor_precision\": \"%s\", \"iterations\": %d", r->factor, r->iterations);
    if (o->cond > 0) json_num("cond", o->cond); /* bench --mixed --cond: A's */
    if (r->has_baseline) {
      printf(", \"baseline\": \"%s\"", r->baseline);
      if (r->baseline_tile > 0) printf(", \"baseline_tile\": %d", r->baseline_tile);
      json_num("baseline_seconds", r->baseline_seconds);
      json_num("baseline_gflops", r->baseline_gflops);
      json_num("ratio", ratio);
    }
    if (r->has_baseline2) {
      printf(", \"baseline2\": \"%s\"", r->baseline2);
      json_num("baseline2_seconds", r->baseline2_seconds);
      json_num("baseline2_gflops", r->baseline2_gflops);
      json_num("ratio2", ratio2);
    }
    printf("}\n");
  } else {
    printf("%-6s ", r->routine);
    if (o->cmd == CMD_BENCH) printf("%-6s ", r->api ? r->api : "");
    if (cli_is_qr(o->routine)) {
      printf("%-5s %7lld %7lld %5lld %5d %4d %4d %11.6f %10.2f %10.3g",
             tessera_dtype_name(r->dtype), (long long)r->m, (long long)r->n, (long long)r->nrhs,
             r->tile, r->devices, r->workers, r->seconds, r->gflops, r->residual);
      if (o->routine == CMD_GEQRF) printf(" %10.3g", r->orthogonality);
    } else if (cli_is_svd(o->routine)) {
      printf("%-5s %-3c %7lld %7lld %5d %4d %4d %11.6f %10.2f %10.3g", tessera_dtype_name(r->dtype),
             r->job, (long long)r->m, (long long)r->n, r->tile, r->devices, r->workers, r->seconds,
             r->gflops, r->residual);
      if (isfinite(r->orthogonality))
        printf(" %10.3g", r->orthogonality);
      else
        printf(" %10s", "-");
    } else if (r->job) {
      printf("%-5s %-4c %-3c %7lld %5d %4d %4d %11.6f %10.2f %10.3g", tessera_dtype_name(r->dtype),
             (char)r->uplo, r->job, (long long)r->n, r->tile, r->devices, r->workers, r->seconds,
             r->gflops, r->residual);
      if (isfinite(r->orthogonality)) /* --values-only: none */
        printf(" %10.3g", r->orthogonality);
      else
        printf(" %10s", "-");
    } else
      printf("%-5s %-4c %7lld %5lld %5d %4d %4d %11.6f %10.2f %10.3g", tessera_dtype_name(r->dtype),
             (char)r->uplo, (long long)r->n, (long long)r->nrhs, r->tile, r->devices, r->workers,
             r->seconds, r->gflops, r->residual);
    if (r->factor) printf(" %6s %5d", r->factor, r->iterations);
    if (r->has_baseline)
      printf(" %*.6f %*.2f %7.2f", col_seconds(r->baseline), r->baseline_seconds,
             col_rate(r->baseline), r->baseline_gflops, ratio);
    if (r->has_baseline2)
      printf(" %*.2f %7.2f", col_rate(r->baseline2), r->baseline2_gflops, ratio2);
    printf("\n");
  }
  fflush(stdout);
}

void cli_print_devices(const tessera_context_t *ctx) {
  for (int k = 0; k < TESSERA_DEVICE_KINDS; k++) {
    int count = tessera_device_count(ctx, (tessera_device_kind_t)k);
    for (int i = 0; i < count; i++) {
      tessera_device_info_t d;
      int status = tessera_device_info(ctx, (tessera_device_kind_t)k, i, &d);
      if (status) {
        printf("  %s %d: (unavailable: %s)\n", kind_names[k], i, tessera_strerror(status));
        continue;
      }
      printf("  %s %d: %s, %d worker%s, %.1f GiB, nominal %.0f GFLOP/s (f64) per worker, memory "
             "node %d\n",
             kind_names[k], i, d.name, d.workers, d.workers == 1 ? "" : "s",
             (double)d.memory_bytes / 1073741824.0, d.gflops, d.memory_node);
    }
  }
}
