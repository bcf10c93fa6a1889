/* tessera CLI — `tessera info`: workers, devices, memory nodes, bandwidths, configuration, the
 * tile chosen per matrix order, the BLAS and its kernels, and a measured f64 gemm rate beside
 * the nominal ones. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "footprint.h"

#ifdef TESSERA_HAVE_OPENBLAS_THREADS
char *openblas_get_config(void);
char *openblas_get_corename(void);

/** OpenBLAS's build and the kernels it chose for this CPU; a hint when it fell back to its
 *  generic ones (Prescott) on a CPU with AVX2 or AVX-512, as it does where a virtual machine
 *  hides the CPU's model, which makes every kernel several times slower (docs/benchmarks.md). */
static void print_blas(void) {
  const char *core = openblas_get_corename();
  printf("blas: %s, kernels for %s\n", openblas_get_config(), core);
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  const char *better = __builtin_cpu_supports("avx512f") ? "SkylakeX"
                       : __builtin_cpu_supports("avx2")  ? "Haswell"
                                                         : NULL;
  if (better && core && !strcmp(core, "Prescott"))
    printf("  OpenBLAS did not recognise this CPU and runs its generic kernels; the CPU has %s:\n"
           "  OPENBLAS_CORETYPE=%s in the environment of the program selects faster ones\n",
           strcmp(better, "SkylakeX") ? "AVX2" : "AVX-512", better);
#endif
}
#else
static void print_blas(void) {
  printf("blas: not OpenBLAS\n");
}
#endif

/** Label of memory node `node`: "host" or "gpuG". */
static const char *node_label(int node, char buf[16]) {
  if (node == TESSERA_HOST_NODE) return "host";
  snprintf(buf, 16, "gpu%d", node - 1);
  return buf;
}

/** Prints the bandwidth matrix between memory nodes, in GB/s. */
static void print_bandwidths(const tessera_context_t *ctx, int nodes) {
  char buf[16];
  printf("bandwidth (GB/s, row = from, column = to):\n%6s", "");
  for (int d = 0; d < nodes; d++) printf(" %9s", node_label(d, buf));
  printf("\n");
  for (int s = 0; s < nodes; s++) {
    printf("%6s", node_label(s, buf));
    for (int d = 0; d < nodes; d++) printf(" %9.1f", tessera_bandwidth(ctx, s, d) * 1e-9);
    printf("\n");
  }
}

/** Prints every row of the configuration table with its value in force: the context's for the
 *  variables tessera_init reads, the environment's (else the default, in parentheses) for the
 *  others. */
static void print_config(const tessera_context_t *ctx) {
  printf("configuration in force (TESSERA_* variables; see the README's Environment table):\n");
  for (int i = 0; i < tessera_setting_count(); i++) {
    const tessera_setting_t *s = tessera_setting(i);
    char value[256];
    tessera_setting_show(tessera_config(ctx), i, value, sizeof value);
    printf("  %-22s %s\n", s->name, value);
  }
}

/** The tile LAPACK-style calls pick (tessera_tile_for) for a few orders, and the one used when
 *  no order is known (tessera_default_tile). */
static void print_tiles(const tessera_context_t *ctx) {
  static const int64_t orders[] = {500, 1000, 2000, 4096, 8192, 16384, 32768, 65536};
  printf("tile of LAPACK-style calls by matrix order (tessera_tile_for):\n ");
  for (size_t i = 0; i < sizeof orders / sizeof orders[0]; i++)
    printf(" %lld: %d%s", (long long)orders[i], tessera_tile_for(ctx, orders[i]),
           i + 1 < sizeof orders / sizeof orders[0] ? "," : "\n");
  printf("  (tile-level calls and an unknown order: %d)\n", tessera_default_tile(ctx));
}

/** Measures f64 gemm (C = A B + C) of order n on descriptors made once, where tessera places
 *  them (the GPUs when they fit): the second of two runs, so the kernel history and the tiles
 *  are warm. Returns GFLOP/s, or a negative status (message printed). */
static double measure_gemm(tessera_context_t *ctx, int64_t n) {
  int64_t nb = tessera_tile_for(ctx, n);
  tessera_matrix_t *m[3] = {NULL, NULL, NULL};
  double *zero = calloc((size_t)n * (size_t)n, sizeof *zero), one = 1.0, best = INFINITY;
  int rc = zero ? 0 : TESSERA_ERR_NOMEM;
  for (int k = 0; k < 3 && !rc; k++) {
    rc = tessera_matrix_create(ctx, TESSERA_F64, n, n, nb, nb, &m[k]);
    if (!rc) rc = tessera_matrix_import(m[k], zero, n);
  }
  for (int rep = 0; rep < 2 && !rc; rep++) {
    double t0 = progress_now();
    rc = tessera_tile_gemm(TESSERA_NOTRANS, TESSERA_NOTRANS, &one, m[0], m[1], &one, m[2]);
    best = fmin(best, progress_now() - t0);
  }
  for (int k = 0; k < 3; k++) tessera_matrix_destroy(m[k]);
  free(zero);
  if (rc) {
    fprintf(stderr, "tessera: info: gemm of order %lld failed: %s%s%s\n", (long long)n,
            tessera_strerror(rc), tessera_last_error(ctx)[0] ? ": " : "", tessera_last_error(ctx));
    return rc;
  }
  return 2.0 * (double)n * (double)n * (double)n / best * 1e-9;
}

/** What measure_gemm holds at once: the zeros imported, and the three descriptors where they are
 *  placed in host memory (`arg`: the context). */
static void gemm_footprint(const void *arg, int64_t n, cli_footprint_t *f) {
  const tessera_context_t *ctx = arg;
  const double a = cli_array_bytes(TESSERA_F64, n, n);
  cli_footprint_add(f, "the array of zeros imported:", a);
  cli_footprint_add(f, "A, B and C:", cli_descriptor_host_bytes(ctx, 3 * a));
}

int cli_info(const cli_opts_t *o) {
  tessera_context_t *ctx;
  if (cli_context(o, &ctx)) return CLI_FAILED;
  const int64_t n = o->sizes[0] >= 0 ? o->sizes[0] : tessera_accelerator_count(ctx) ? 16384 : 2048;
  char subject[96];
  snprintf(subject, sizeof subject, "info's gemm with n = %lld (f64)", (long long)n);
  if (cli_check_footprint(gemm_footprint, ctx, n, "--n", subject, NULL, NULL, cli_memory_here(), 0))
    return cli_finish(ctx, CLI_FAILED);
  int nodes = tessera_memory_node_count(ctx);
  printf("tessera %d.%d.%d\n", TESSERA_VERSION_MAJOR, TESSERA_VERSION_MINOR, TESSERA_VERSION_PATCH);
  printf("workers: %d\n", tessera_worker_count(ctx));
  printf("devices:\n");
  cli_print_devices(ctx);
  printf("memory nodes: %d (node 0 = host, node 1 + g = GPU g)\n", nodes);
  print_bandwidths(ctx, nodes);
  print_config(ctx);
  print_tiles(ctx);
  char comm[256];
  const int distributed = tessera_comm_describe(comm, sizeof comm);
  printf("communication: %s%s\n", comm, distributed ? "" : " (this build runs in one process)");
  print_blas();
  printf("rates (f64 GFLOP/s): the per-worker figures above are nominal (CPU: 40 per core, AVX2\n"
         "  FMA at ~3 GHz; GPU: its f64 units x clock, 60000 for Hopper), used by the cost model\n"
         "  until measured kernel times replace them\n");
  if (n <= 0) return cli_finish(ctx, CLI_OK);
  double gflops = measure_gemm(ctx, n);
  if (gflops < 0) return cli_finish(ctx, CLI_FAILED);
  printf("  measured: gemm of order %lld (tile %d) on all %d workers: %.1f GFLOP/s\n", (long long)n,
         tessera_tile_for(ctx, n), tessera_worker_count(ctx), gflops);
  return cli_finish(ctx, CLI_OK);
}
