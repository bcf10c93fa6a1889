/* tessera CLI — command-line parsing and dispatch to the subcommands. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define BIT(c) (1u << (c))
#define RUNS (BIT(CMD_POTRF) | BIT(CMD_POTRS) | BIT(CMD_POSV))
#define CTX (RUNS | BIT(CMD_INFO) | BIT(CMD_BENCH) | BIT(CMD_DEMO))

/** The subcommands. */
static const struct {
  const char *name;
  cli_cmd_t cmd;
  int (*run)(const cli_opts_t *);
} commands[] = {
    {"info", CMD_INFO, cli_info},    {"potrf", CMD_POTRF, cli_solve},
    {"potrs", CMD_POTRS, cli_solve}, {"posv", CMD_POSV, cli_solve},
    {"bench", CMD_BENCH, cli_bench}, {"demo", CMD_DEMO, cli_demo},
    {"gen", CMD_GEN, cli_gen},       {"trace", CMD_TRACE, cli_trace_svg},
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

typedef enum {
  F_N,
  F_NRHS,
  F_DTYPE,
  F_TILE,
  F_UPLO,
  F_INPUT,
  F_RHS,
  F_OUTPUT,
  F_REPS,
  F_WORKERS,
  F_GPUS,
  F_SCHED,
  F_TRACE,
  F_JSON,
  F_WIDTH,
  F_RESIDENT,
  F_RESIDENT_ONLY,
  F_NO_BASELINE,
  F_OUT_OF_CORE,
  F_HELP,
  F_COUNT,
} flag_id_t;

/** The options, the subcommands that take them, and the least value of integer options. */
static const struct {
  const char *name;
  flag_id_t id;
  int has_value;
  unsigned cmds;
  int min;
} flags[] = {
    {"--n", F_N, 1, RUNS | BIT(CMD_BENCH) | BIT(CMD_DEMO) | BIT(CMD_GEN), 0},
    {"--nrhs", F_NRHS, 1, BIT(CMD_POTRS) | BIT(CMD_POSV) | BIT(CMD_DEMO) | BIT(CMD_GEN), 0},
    {"--dtype", F_DTYPE, 1, RUNS | BIT(CMD_BENCH) | BIT(CMD_DEMO) | BIT(CMD_GEN), 0},
    {"--tile", F_TILE, 1, CTX, 1},
    {"--uplo", F_UPLO, 1, RUNS | BIT(CMD_BENCH) | BIT(CMD_DEMO), 0},
    {"--input", F_INPUT, 1, RUNS, 0},
    {"--rhs", F_RHS, 1, BIT(CMD_POTRS) | BIT(CMD_POSV), 0},
    {"--output", F_OUTPUT, 1, RUNS | BIT(CMD_GEN) | BIT(CMD_TRACE), 0},
    {"-o", F_OUTPUT, 1, RUNS | BIT(CMD_GEN) | BIT(CMD_TRACE), 0},
    {"--reps", F_REPS, 1, RUNS | BIT(CMD_BENCH), 1},
    {"--workers", F_WORKERS, 1, CTX, 0},
    {"--gpus", F_GPUS, 1, CTX, 0},
    {"--sched", F_SCHED, 1, CTX, 0},
    {"--trace", F_TRACE, 1, CTX, 0},
    {"--json", F_JSON, 0, RUNS | BIT(CMD_BENCH) | BIT(CMD_DEMO), 0},
    {"--width", F_WIDTH, 1, BIT(CMD_TRACE), 400},
    {"--resident", F_RESIDENT, 0, BIT(CMD_BENCH), 0},
    {"--resident-only", F_RESIDENT_ONLY, 0, BIT(CMD_BENCH), 0},
    {"--no-baseline", F_NO_BASELINE, 0, BIT(CMD_BENCH), 0},
    {"--out-of-core", F_OUT_OF_CORE, 0, BIT(CMD_BENCH), 0},
    {"--help", F_HELP, 0, ~0u, 0},
};
#define NFLAGS (sizeof flags / sizeof flags[0])

static void usage(FILE *f) {
  fputs("usage: tessera <command> [options]\n"
        "\n"
        "commands:\n"
        "  info                      workers, devices, memory nodes, bandwidths, configuration\n"
        "  potrf | potrs | posv      Cholesky factor / solve / both on a generated or .npy matrix\n"
        "  bench potrf               tessera against cuSolverMg (same GPUs) and cusolverDnXpotrf\n"
        "                            (GPU 0), their matrix already on the GPUs; without GPUs,\n"
        "                            against LAPACKE with the same thread count\n"
        "  demo                      f64 posv on every device, checks the residual\n"
        "  gen                       writes the generated SPD matrix (or, with --nrhs, the\n"
        "                            right-hand sides) to --output\n"
        "  trace FILE.json -o g.svg  draws a trace written by --trace as a Gantt chart (SVG)\n"
        "\n"
        "options:\n"
        "  --n N            matrix order (bench: N1,N2,...; default 1000, bench and demo 4096)\n"
        "  --nrhs K         right-hand sides (default 1)\n"
        "  --dtype s|d|c|z  element type f32, f64, c64, c128 (default d)\n"
        "  --tile T         tile size (default: the library's choice)\n"
        "  --uplo L|U       triangle factored (default L)\n"
        "  --input a.npy    square matrix to use instead of a generated one\n"
        "  --rhs b.npy      right-hand sides (n or n x K) instead of generated ones\n"
        "  --output x.npy   writes the factor (potrf), the solution (potrs, posv) or the matrix\n"
        "  -o FILE          the same as --output (trace: the SVG)\n"
        "  --reps R         repetitions, best time reported (default 1, bench 3)\n"
        "  --workers W      CPU worker threads (bench: also the LAPACKE thread count)\n"
        "  --gpus G         GPUs to use (0 disables them)\n"
        "  --sched cost|locality  scheduling policy\n"
        "  --trace f.json   writes a Chrome trace of every task at the end\n"
        "  --json           one JSON object per result line\n"
        "  --resident       bench: also times tessera_tile_potrf on a descriptor made once\n"
        "  --resident-only  bench: times only that (no LAPACK-style call on a host array)\n"
        "  --no-baseline    bench: tessera only\n"
        "  --out-of-core    bench: the matrix held once, as the tiles of one triangle (--uplo),\n"
        "                   generated by tasks; times tessera_tile_potrf, checks with potrs\n"
        "                   (backward error); no baseline (for matrices larger than the GPUs)\n"
        "  --width W        trace: width of the chart in pixels (default 1600)\n"
        "  --help           this text\n"
        "\n"
        "exit status: 0 success, 1 failure, 2 usage error\n",
        f);
}

static int usage_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("tessera: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputs("\nRun 'tessera --help' for usage.\n", stderr);
  va_end(ap);
  return CLI_USAGE;
}

/** Parses an integer in [min, max] from `text` up to the end, or up to a ',' when `rest` is
 *  given (it then receives the text after the number). Returns 0 or CLI_USAGE. */
static int parse_number(const char *flag, const char *text, const char **rest, long long min,
                        long long max, long long *v) {
  char *end;
  errno = 0;
  *v = strtoll(text, &end, 10);
  if (end == text || errno == ERANGE || (*end && !(rest && *end == ',')))
    return usage_error("%s: '%s' is not a valid number", flag, text);
  if (*v < min) return usage_error("%s must be >= %lld (got %lld)", flag, min, *v);
  if (*v > max) return usage_error("%s must be <= %lld (got %lld)", flag, max, *v);
  if (rest) *rest = *end ? end + 1 : end;
  return 0;
}

static int parse_sizes(const char *text, cli_opts_t *o) {
  const char *p = text;
  o->nsizes = 0;
  do {
    long long v;
    if (o->nsizes == CLI_MAX_SIZES) return usage_error("--n: more than %d sizes", CLI_MAX_SIZES);
    if (parse_number("--n", p, &p, 0, INT_MAX, &v)) return CLI_USAGE;
    o->sizes[o->nsizes++] = v;
  } while (*p);
  if (p[-1] == ',') return usage_error("--n: '%s' ends with a comma", text);
  return 0;
}

static int parse_int(const char *flag, const char *text, long long min, int *out) {
  long long v;
  if (parse_number(flag, text, NULL, min, INT_MAX, &v)) return CLI_USAGE;
  *out = (int)v;
  return 0;
}

/** Stores the value of option flags[f]. Returns 0 or CLI_USAGE. */
static int apply(size_t f, const char *val, cli_opts_t *o) {
  const char **strings[F_COUNT] = {
      [F_INPUT] = &o->input, [F_RHS] = &o->rhs, [F_OUTPUT] = &o->output, [F_TRACE] = &o->trace};
  int *ints[F_COUNT] = {[F_NRHS] = &o->nrhs,       [F_TILE] = &o->tile, [F_REPS] = &o->reps,
                        [F_WORKERS] = &o->workers, [F_GPUS] = &o->gpus, [F_WIDTH] = &o->width};
  flag_id_t id = flags[f].id;
  if (strings[id])
    *strings[id] = val;
  else if (ints[id])
    return parse_int(flags[f].name, val, flags[f].min, ints[id]);
  else if (id == F_N)
    return parse_sizes(val, o);
  else if (id == F_JSON)
    o->json = 1;
  else if (id == F_RESIDENT || id == F_RESIDENT_ONLY)
    o->resident = id == F_RESIDENT ? 1 : 2;
  else if (id == F_NO_BASELINE)
    o->no_baseline = 1;
  else if (id == F_OUT_OF_CORE)
    o->out_of_core = 1;
  else if (id == F_DTYPE) {
    o->dtype_set = 1;
    if (tessera_dtype_parse(val, &o->dtype) != 0)
      return usage_error("unknown dtype '%s' (use s, d, c or z)", val);
  } else if (id == F_UPLO) {
    if (strcmp(val, "L") && strcmp(val, "l") && strcmp(val, "U") && strcmp(val, "u"))
      return usage_error("--uplo: '%s' is not L or U", val);
    o->uplo = (val[0] == 'L' || val[0] == 'l') ? TESSERA_LOWER : TESSERA_UPPER;
  } else if (id == F_SCHED) {
    if (strcmp(val, "cost") && strcmp(val, "locality"))
      return usage_error("--sched: '%s' is not cost or locality", val);
    o->sched = strcmp(val, "cost") == 0 ? TESSERA_SCHED_COST : TESSERA_SCHED_LOCALITY;
  }
  return 0;
}

/** Parses the options from argv[i]. Returns 0, CLI_USAGE, or -1 for --help. */
static int parse_options(int argc, char **argv, int i, cli_opts_t *o) {
  for (; i < argc; i++) {
    const char *arg = argv[i], *eq = strchr(arg, '=');
    if (o->cmd == CMD_TRACE && arg[0] != '-' && !o->input) {
      o->input = arg; /* the trace file */
      continue;
    }
    size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
    size_t f = 0;
    while (f < NFLAGS && (strlen(flags[f].name) != len || strncmp(flags[f].name, arg, len))) f++;
    if (f == NFLAGS) return usage_error("%s: unknown option '%s'", cli_cmd_name(o->cmd), arg);
    if (flags[f].id == F_HELP) return -1;
    if (!(flags[f].cmds & BIT(o->cmd)))
      return usage_error("%s does not apply to '%s'", flags[f].name, cli_cmd_name(o->cmd));
    if (!flags[f].has_value && eq) return usage_error("%s takes no value", flags[f].name);
    const char *val = eq ? eq + 1 : NULL;
    if (flags[f].has_value && !val) {
      if (i + 1 >= argc) return usage_error("%s needs a value", flags[f].name);
      val = argv[++i];
    }
    if (apply(f, val, o)) return CLI_USAGE;
  }
  return 0;
}

/** Fills in the defaults that depend on the subcommand and checks combinations. */
static int finish_options(cli_opts_t *o) {
  static const int64_t default_n[CMD_COUNT] = {0, 1000, 1000, 1000, 4096, 4096, 1000, 0};
  if (o->input && o->nsizes) return usage_error("--n and --input exclude each other");
  if (o->rhs && o->nrhs >= 0) return usage_error("--nrhs and --rhs exclude each other");
  if (o->nsizes == 0) o->sizes[o->nsizes++] = default_n[o->cmd];
  if (o->nsizes > 1 && o->cmd != CMD_BENCH)
    return usage_error("--n takes one size for '%s'", cli_cmd_name(o->cmd));
  if (o->reps == 0) o->reps = o->cmd == CMD_BENCH ? 3 : 1;
  if (o->out_of_core && o->resident)
    return usage_error("--out-of-core excludes --resident and --resident-only");
  if (o->cmd == CMD_GEN && !o->output) return usage_error("gen needs --output FILE");
  if (o->cmd == CMD_TRACE && !o->input) return usage_error("trace needs a trace file: FILE.json");
  if (o->cmd == CMD_TRACE && !o->output) return usage_error("trace needs -o FILE.svg");
  if (o->cmd == CMD_POTRF || o->cmd == CMD_POTRS || o->cmd == CMD_POSV) o->routine = o->cmd;
  if (o->cmd == CMD_DEMO) o->routine = CMD_POSV;
  if (o->nrhs < 0) o->nrhs = o->routine == CMD_POTRF ? 0 : 1;
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return CLI_USAGE;
  }
  if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
      strcmp(argv[1], "help") == 0) {
    usage(stdout);
    return CLI_OK;
  }
  size_t c = 0;
  while (c < NCOMMANDS && strcmp(commands[c].name, argv[1])) c++;
  if (c == NCOMMANDS) return usage_error("unknown command '%s'", argv[1]);
  cli_opts_t o = {.cmd = commands[c].cmd,
                  .routine = CMD_POTRF,
                  .nrhs = -1,
                  .dtype = TESSERA_F64,
                  .tile = -1,
                  .uplo = TESSERA_LOWER,
                  .workers = -1,
                  .gpus = -1,
                  .sched = TESSERA_SCHED_AUTO,
                  .width = 1600};
  int i = 2;
  if (o.cmd == CMD_BENCH && i < argc && argv[i][0] != '-') {
    if (strcmp(argv[i], "potrf") != 0)
      return usage_error("bench: unsupported routine '%s' (supported: potrf)", argv[i]);
    i++;
  }
  int rc = parse_options(argc, argv, i, &o);
  if (rc < 0) {
    usage(stdout);
    return CLI_OK;
  }
  if (rc || (rc = finish_options(&o))) return rc;
  return commands[c].run(&o);
}
