/* tessera CLI — command-line parsing and dispatch to the subcommands. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "failure.h"
#include "help.h"
#include "options.h"

/** The subcommands: name, what follows it on the usage line, what it does, and what its
 *  residual column is (NULL: none). */
static const struct {
  const char *name;
  cli_cmd_t cmd;
  int (*run)(const cli_opts_t *);
  const char *args, *about, *residual;
} commands[] = {
    {"info", CMD_INFO, cli_info, "[options]",
     "workers, devices, memory nodes, bandwidths, configuration, the tile chosen for each\n"
     "matrix order, and the f64 gemm rate measured on this machine beside the nominal rates",
     NULL},
    {"potrf", CMD_POTRF, cli_solve, "[options]",
     "Cholesky factor of a generated or .npy matrix: time, GFLOP/s, residual",
     RESIDUAL_POTRF RESIDUAL_GRID},
    {"potrs", CMD_POTRS, cli_solve, "[options]",
     "solves A X = B with the Cholesky factor of A (factored first, not timed)", RESIDUAL_SOLVE},
    {"posv", CMD_POSV, cli_solve, "[options]", "factors A and solves A X = B in one call",
     RESIDUAL_SOLVE},
    {"getrf", CMD_GETRF, cli_solve, "[options]",
     "LU factorization with partial pivoting of a generated or .npy general matrix",
     RESIDUAL_GETRF RESIDUAL_GRID},
    {"gesv", CMD_GESV, cli_solve, "[options]", "LU-factors a general A and solves A X = B",
     RESIDUAL_SOLVE},
    {"geqrf", CMD_GEQRF, cli_qr, "[options]",
     "Householder QR of a generated or .npy m x n matrix: time, GFLOP/s, residual and\n"
     "orthogonality",
     RESIDUAL_GEQRF RESIDUAL_GEQRF_GRID},
    {"gels", CMD_GELS, cli_qr, "[options]",
     "least squares (m >= n) or minimum norm (m < n) solution of A X = B by QR", RESIDUAL_GELS},
    {"syevd", CMD_SYEVD, cli_eig, "[options]",
     "eigenvalues and eigenvectors (--values-only: eigenvalues) of a generated or .npy\n"
     "Hermitian (real symmetric) matrix: time, GFLOP/s, residual and orthogonality",
     RESIDUAL_SYEVD},
    {"gepolar", CMD_GEPOLAR, cli_svd, "[options]",
     "polar decomposition A = U_p H (m >= n) of a generated or .npy m x n matrix by QDWH:\n"
     "time, GFLOP/s, residual and orthogonality",
     RESIDUAL_GEPOLAR},
    {"gesvd", CMD_GESVD, cli_svd, "[options]",
     "singular values and vectors (--values-only: values) of a generated or .npy m x n\n"
     "matrix by the polar decomposition and the eigensolver: time, GFLOP/s, residual and\n"
     "orthogonality",
     RESIDUAL_GESVD},
    {"bench", CMD_BENCH, cli_bench,
     "potrf|getrf|geqrf|gels|syevd|gepolar|gesvd [options] | posv|gesv --mixed P [options]",
     "tessera against cuSolverMg (same GPUs) and cusolverDnX (GPU 0), their matrix\n"
     "already on the GPUs (geqrf, gels: cusolverDnXgeqrf, cusolverDn<t><t>gels on GPU 0;\n"
     "syevd: cusolverMgSyevd and cusolverDnXsyevd; gepolar, gesvd: cusolverDnXgesvdp);\n"
     "without GPUs, against LAPACKE with the same thread count (gepolar, gesvd: ?gesdd). posv|gesv "
     "--mixed P: the mixed-precision solve against tessera's\n"
     "working-precision solve (gesv on GPUs: and cuSOLVER's IRS gesv on GPU 0)",
     RESIDUAL_BENCH},
    {"demo", CMD_DEMO, cli_demo, "[options]", "f64 posv on every device, checks the residual",
     RESIDUAL_SOLVE},
    {"gen", CMD_GEN, cli_gen, "--output FILE [options]",
     "writes the generated SPD matrix (or, with --nrhs, the right-hand sides) to --output", NULL},
    {"trace", CMD_TRACE, cli_trace_svg, "FILE.json -o g.svg [options]",
     "draws a trace written by --trace as a Gantt chart (SVG)", NULL},
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

/** Prints `text` with its continuation lines indented by `indent` spaces. */
static void print_indented(FILE *f, const char *text, int indent) {
  for (const char *p = text; *p; p++) {
    fputc(*p, f);
    if (*p == '\n') fprintf(f, "%*s", indent, "");
  }
}

/** The global usage: every command and every option. */
static void usage(FILE *f) {
  fputs("usage: tessera <command> [options]\n"
        "       tessera <command> --help   (that command's options)\n\ncommands:\n",
        f);
  for (size_t c = 0; c < NCOMMANDS; c++) {
    fprintf(f, "  %-6s ", commands[c].name);
    print_indented(f, commands[c].about, 9);
    fputc('\n', f);
  }
  fputc('\n', f);
  cli_print_options(f, ~0u);
  fputs("\nexit status: 0 success, 1 failure, 2 usage error\n", f);
}

/** The usage of command c: what it does, the options it takes and what its residual is. */
static void command_usage(FILE *f, size_t c) {
  fprintf(f, "usage: tessera %s %s\n\n%s\n\n", commands[c].name, commands[c].args,
          commands[c].about);
  cli_print_options(f, BIT(commands[c].cmd));
  if (commands[c].residual) fprintf(f, "\n%s\n", commands[c].residual);
  fputs("\nexit status: 0 success, 1 failure, 2 usage error\n", f);
}

static void version(void) {
  printf("tessera %d.%d.%d\n", TESSERA_VERSION_MAJOR, TESSERA_VERSION_MINOR, TESSERA_VERSION_PATCH);
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

/* --range IL:IU, 1 <= IL <= IU (the library checks IU against the order). */
static int parse_range(const char *text, cli_opts_t *o) {
  const char *colon = strchr(text, ':');
  char first[32];
  long long il, iu;
  if (!colon || colon == text || (size_t)(colon - text) >= sizeof first)
    return usage_error("--range: '%s' is not IL:IU (for example 1:10)", text);
  memcpy(first, text, (size_t)(colon - text));
  first[colon - text] = '\0';
  if (parse_number("--range's IL", first, NULL, 1, INT_MAX, &il) ||
      parse_number("--range's IU", colon + 1, NULL, il, INT_MAX, &iu))
    return CLI_USAGE;
  o->il = il, o->iu = iu;
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

/** Stores the value of option cli_flags[f]. Returns 0 or CLI_USAGE. */
static int apply(size_t f, const char *val, cli_opts_t *o) {
  const char **strings[F_COUNT] = {
      [F_INPUT] = &o->input, [F_RHS] = &o->rhs, [F_OUTPUT] = &o->output, [F_TRACE] = &o->trace};
  int *ints[F_COUNT] = {[F_NRHS] = &o->nrhs,       [F_TILE] = &o->tile, [F_REPS] = &o->reps,
                        [F_WORKERS] = &o->workers, [F_GPUS] = &o->gpus, [F_WIDTH] = &o->width};
  flag_id_t id = cli_flags[f].id;
  if (strings[id])
    *strings[id] = val;
  else if (ints[id])
    return parse_int(cli_flags[f].name, val, cli_flags[f].min, ints[id]);
  else if (id == F_N)
    return parse_sizes(val, o);
  else if (id == F_M) {
    long long v;
    if (parse_number("--m", val, NULL, 0, INT_MAX, &v)) return CLI_USAGE;
    o->m = v;
  } else if (id == F_JSON)
    o->json = 1;
  else if (id == F_RESIDENT || id == F_RESIDENT_ONLY)
    o->resident = id == F_RESIDENT ? 1 : 2;
  else if (id == F_NO_BASELINE)
    o->no_baseline = 1;
  else if (id == F_NO_MG)
    o->no_mg = 1;
  else if (id == F_OUT_OF_CORE)
    o->out_of_core = 1;
  else if (id == F_VALUES_ONLY)
    o->values_only = 1;
  else if (id == F_RANGE)
    return parse_range(val, o);
  else if (id == F_FULL)
    o->full = 1;
  else if (id == F_MIXED) {
    o->mixed = -1;
    for (int k = 0; cli_mixed_name(k) && o->mixed < 0; k++) /* no value: auto */
      if (cli_mixed_name(k)[0] && !strcmp(val ? val : "auto", cli_mixed_name(k))) o->mixed = k;
    if (o->mixed < 0)
      return usage_error("--mixed: '%s' is not a factor precision (auto, s, tf32, bf16, h)", val);
  } else if (id == F_COND) {
    char *end = NULL;
    o->cond = strtod(val, &end);
    if (end == val || *end || !(o->cond >= 1) || !isfinite(o->cond))
      return usage_error("--cond: '%s' is not a condition number (a number >= 1)", val);
  } else if (id == F_REQUIRE_GPUS)
    o->require_gpus = 1;
  else if (id == F_GRID) {
    char x = 0, extra = 0;
    if (sscanf(val, "%d%c%d%c", &o->grid_p, &x, &o->grid_q, &extra) != 3 ||
        (x != 'x' && x != 'X') || o->grid_p < 1 || o->grid_q < 1)
      return usage_error("--grid: '%s' is not PxQ with P, Q >= 1", val);
  } else if (id == F_DTYPE) {
    o->dtype_set = 1;
    if (tessera_dtype_parse(val, &o->dtype) != 0)
      return usage_error("unknown dtype '%s' (use s, d, c or z)", val);
  } else if (id == F_UPLO) {
    if (strcmp(val, "L") && strcmp(val, "l") && strcmp(val, "U") && strcmp(val, "u"))
      return usage_error("--uplo: '%s' is not L or U", val);
    o->uplo = (val[0] == 'L' || val[0] == 'l') ? TESSERA_LOWER : TESSERA_UPPER;
    o->uplo_set = 1;
  } else if (id == F_SCHED) {
    if (strcmp(val, "cost") && strcmp(val, "locality"))
      return usage_error("--sched: '%s' is not cost or locality", val);
    o->sched = strcmp(val, "cost") == 0 ? TESSERA_SCHED_COST : TESSERA_SCHED_LOCALITY;
  }
  return 0;
}

/** The flag argv's `arg` names (its part before any '='), or cli_nflags for none. */
static size_t flag_of(const char *arg) {
  const char *eq = strchr(arg, '=');
  const size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
  size_t f = 0;
  while (f < cli_nflags &&
         (strlen(cli_flags[f].name) != len || strncmp(cli_flags[f].name, arg, len)))
    f++;
  return f;
}

/** Every option from argv[i] that the command does not take, named in one usage error, so that
 *  one run lists them all. Returns 0 or CLI_USAGE. */
static int check_applicable(int argc, char **argv, int i, const cli_opts_t *o) {
  char names[1024] = "";
  int count = 0;
  for (; i < argc; i++) {
    const size_t f = flag_of(argv[i]);
    if (f == cli_nflags || (cli_flags[f].cmds & BIT(o->cmd))) continue;
    const size_t at = strlen(names);
    snprintf(names + at, sizeof names - at, "%s%s", count ? ", " : "", cli_flags[f].name);
    count++;
  }
  if (count == 0) return 0;
  return usage_error("%s %s not apply to '%s'", names, count > 1 ? "do" : "does",
                     cli_cmd_name(o->cmd));
}

/** Parses the options from argv[i] (main answered --help and --version). Returns 0 or
 *  CLI_USAGE. */
static int parse_options(int argc, char **argv, int i, cli_opts_t *o) {
  if (check_applicable(argc, argv, i, o)) return CLI_USAGE;
  for (; i < argc; i++) {
    const char *arg = argv[i], *eq = strchr(arg, '=');
    if (o->cmd == CMD_TRACE && arg[0] != '-' && !o->input) {
      o->input = arg; /* the trace file */
      continue;
    }
    const size_t f = flag_of(arg);
    if (f == cli_nflags) return usage_error("%s: unknown option '%s'", cli_cmd_name(o->cmd), arg);
    if (!cli_flags[f].has_value && eq) return usage_error("%s takes no value", cli_flags[f].name);
    const char *val = eq ? eq + 1 : NULL;
    /* has_value 2: the value may be left out, when no argument or an option follows */
    if (cli_flags[f].has_value && !val && i + 1 < argc &&
        (cli_flags[f].has_value == 1 || argv[i + 1][0] != '-'))
      val = argv[++i];
    else if (cli_flags[f].has_value == 1 && !val)
      return usage_error("%s needs a value", cli_flags[f].name);
    if (apply(f, val, o)) return CLI_USAGE;
  }
  return 0;
}

/** Fills in the defaults that depend on the subcommand and checks combinations. */
static int finish_options(cli_opts_t *o) {
  static const int64_t default_n[CMD_COUNT] = {-1,   1000, 1000, 1000, 1000, 1000, 1000, 1000,
                                               1000, 1000, 1000, 4096, 4096, 1000, 0};
  if (o->input && o->nsizes) return usage_error("--n and --input exclude each other");
  if (o->rhs && o->nrhs >= 0) return usage_error("--nrhs and --rhs exclude each other");
  if (o->nsizes == 0) o->sizes[o->nsizes++] = default_n[o->cmd];
  if (o->require_gpus && o->gpus < 0) return usage_error("--require-gpus needs --gpus G");
  if (o->nsizes > 1 && o->cmd != CMD_BENCH)
    return usage_error("--n takes one size for '%s'", cli_cmd_name(o->cmd));
  if (o->reps == 0) o->reps = o->cmd == CMD_BENCH ? 3 : 1;
  if (o->out_of_core && o->resident)
    return usage_error("--out-of-core excludes --resident and --resident-only");
  if (o->cmd == CMD_GEN && !o->output) return usage_error("gen needs --output FILE");
  if (o->cmd == CMD_TRACE && !o->input) return usage_error("trace needs a trace file: FILE.json");
  if (o->cmd == CMD_TRACE && !o->output) return usage_error("trace needs -o FILE.svg");
  if (((RUNS | QR | EIG | SVD) & BIT(o->cmd)) != 0) o->routine = o->cmd;
  if (o->values_only && o->routine != CMD_SYEVD && o->routine != CMD_GESVD)
    return usage_error("--values-only is syevd's and gesvd's (bench syevd)");
  if (o->full && o->values_only)
    return usage_error("--full asks for vectors; --values-only for none");
  if (o->mixed == TESSERA_FACTOR_SINGLE && (o->dtype == TESSERA_F32 || o->dtype == TESSERA_C64))
    return usage_error("--mixed s: %s is single precision already", tessera_dtype_name(o->dtype));
  if (o->m >= 0 && !cli_is_qr(o->routine) && !cli_is_svd(o->routine))
    return usage_error("--m is for geqrf, gels, gepolar and gesvd (an m x n matrix)");
  if (o->input && o->m >= 0) return usage_error("--m and --input exclude each other");
  const int solves = o->routine == CMD_POSV || o->routine == CMD_GESV;
  if (o->cmd == CMD_BENCH && o->nrhs >= 0 && o->routine != CMD_GELS && !solves)
    return usage_error("--nrhs does not apply to 'bench %s'", cli_cmd_name(o->routine));
  if (o->cmd == CMD_BENCH && solves != (o->mixed >= 0))
    return usage_error(solves ? "bench %s needs --mixed P (the precision to compare)"
                              : "--mixed applies to 'bench posv' and 'bench gesv', not 'bench %s'",
                       cli_cmd_name(o->routine));
  if (o->cond > 0 && o->mixed < 0)
    return usage_error("--cond is for 'bench posv' and 'bench gesv' with --mixed P");
  if (o->cmd == CMD_DEMO) o->routine = CMD_POSV;
  if (o->nrhs < 0)
    o->nrhs =
        cli_is_factor(o->routine) || o->routine == CMD_SYEVD || cli_is_svd(o->routine) ? 0 : 1;
  if (o->out_of_core && o->routine != CMD_POTRF) return usage_error("--out-of-core is potrf's");
  if (o->uplo_set && cli_is_lu(o->routine))
    return usage_error("--uplo does not apply to 'bench getrf' (LU factors the whole matrix)");
  return 0;
}

/** Checks that the files the command will write can be written, before it computes anything:
 *  --output and the second array written beside it (getrf's pivots, geqrf's tau, syevd's
 *  eigenvectors) and the trace (--trace, else TESSERA_TRACE, which the library writes at the
 *  end; asked of the library's configuration table). Returns CLI_OK or CLI_FAILED (message
 *  printed). */
static int check_outputs(const cli_opts_t *o) {
  static const struct {
    cli_cmd_t cmd;
    const char *suffix, *what;
  } beside[] = {{CMD_GETRF, ".piv.npy", "--output's pivots"},
                {CMD_GEQRF, ".tau.npy", "--output's tau"},
                {CMD_SYEVD, ".vectors.npy", "--output's eigenvectors"},
                {CMD_GEPOLAR, ".h.npy", "--output's H"},
                {CMD_GESVD, ".u.npy", "--output's U"},
                {CMD_GESVD, ".vt.npy", "--output's Vᴴ"}};
  char path[4096];
  tessera_config_t cfg;
  tessera_config_init(&cfg);
  const char *env = NULL;
  if ((CTX & BIT(o->cmd)) && tessera_config_from_env(&cfg, NULL, 0) == 0) env = cfg.trace_file;
  if (o->output && cli_check_writable("--output", o->output)) return CLI_FAILED;
  for (size_t i = 0; o->output && i < sizeof beside / sizeof beside[0]; i++)
    if (beside[i].cmd == o->cmd && !o->values_only &&
        cli_check_writable(beside[i].what,
                           cli_beside_path(o->output, beside[i].suffix, path, sizeof path)))
      return CLI_FAILED;
  if (o->trace) return cli_check_writable("--trace", o->trace);
  return env && *env ? cli_check_writable("TESSERA_TRACE", env) : CLI_OK;
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
  if (strcmp(argv[1], "--version") == 0) {
    version();
    return CLI_OK;
  }
  size_t c = 0;
  while (c < NCOMMANDS && strcmp(commands[c].name, argv[1])) c++;
  if (c == NCOMMANDS) return usage_error("unknown command '%s'", argv[1]);
  cli_opts_t o = {.cmd = commands[c].cmd,
                  .routine = CMD_POTRF,
                  .m = -1,
                  .nrhs = -1,
                  .dtype = TESSERA_F64,
                  .tile = -1,
                  .uplo = TESSERA_LOWER,
                  .workers = -1,
                  .gpus = -1,
                  .sched = TESSERA_SCHED_AUTO,
                  .mixed = -1,
                  .width = 1600};
  int i = 2;
  for (int k = 2; k < argc; k++) /* help or version anywhere after the command wins */
    if (!strcmp(argv[k], "--help") || !strcmp(argv[k], "-h") || !strcmp(argv[k], "--version")) {
      if (argv[k][2] == 'v')
        version();
      else
        command_usage(stdout, c);
      return CLI_OK;
    }
  if (o.cmd == CMD_BENCH && i < argc && argv[i][0] != '-') {
    static const cli_cmd_t benched[] = {CMD_POTRF, CMD_GETRF, CMD_GEQRF,   CMD_GELS, CMD_SYEVD,
                                        CMD_POSV,  CMD_GESV,  CMD_GEPOLAR, CMD_GESVD};
    size_t r = 0;
    while (r < sizeof benched / sizeof benched[0] && strcmp(argv[i], cli_cmd_name(benched[r]))) r++;
    if (r == sizeof benched / sizeof benched[0])
      return usage_error(
          "bench: unsupported routine '%s' (supported: potrf, getrf, geqrf, gels, syevd, posv, "
          "gesv, gepolar, gesvd)",
          argv[i]);
    o.routine = benched[r];
    i++;
  }
  int json = 0; /* --json: a failure, a usage error among them, said in one JSON object too */
  for (int k = i; k < argc; k++) json |= !strcmp(argv[k], "--json");
  cli_failure_t failure;
  if (json) cli_failure_watch(&failure);
  int rc = parse_options(argc, argv, i, &o);
  if (!rc && !(rc = finish_options(&o)) && !(rc = check_outputs(&o))) rc = commands[c].run(&o);
  const cli_cmd_t routine = o.cmd == CMD_BENCH ? o.routine : o.cmd == CMD_DEMO ? CMD_POSV : o.cmd;
  if (json) cli_failure_end(&failure, commands[c].name, cli_cmd_name(routine), rc);
  return rc;
}
