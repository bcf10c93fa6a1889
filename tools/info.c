/* tessera CLI — `tessera info`: workers, devices, memory nodes, bandwidths, configuration. */
#include <stdio.h>

#include "cli.h"

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

/** Prints an integer setting, "auto" for a negative value. */
static void print_setting(const char *name, int v) {
  if (v < 0)
    printf("  %-15s auto\n", name);
  else
    printf("  %-15s %d\n", name, v);
}

static void print_config(const tessera_context_t *ctx) {
  const tessera_config_t *c = tessera_config(ctx);
  printf("configuration in force:\n");
  print_setting("cpu_workers", c->cpu_workers);
  print_setting("gpus", c->gpus);
  printf("  %-15s %s\n", "sched",
         c->sched == TESSERA_SCHED_LOCALITY ? "locality"
         : c->sched == TESSERA_SCHED_COST   ? "cost"
                                            : "auto");
  print_setting("tile_size", c->tile_size);
  printf("  %-15s %d\n", "default tile", tessera_default_tile(ctx));
  print_setting("bind_workers", c->bind_workers);
  printf("  %-15s %s\n", "trace_file", c->trace_file ? c->trace_file : "(none)");
  printf("  %-15s %s\n", "perfmodel_file", c->perfmodel_file ? c->perfmodel_file : "(none)");
}

int cli_info(const cli_opts_t *o) {
  tessera_context_t *ctx;
  if (cli_context(o, &ctx)) return CLI_FAILED;
  int nodes = tessera_memory_node_count(ctx);
  printf("tessera %d.%d.%d\n", TESSERA_VERSION_MAJOR, TESSERA_VERSION_MINOR, TESSERA_VERSION_PATCH);
  printf("workers: %d\n", tessera_worker_count(ctx));
  printf("devices:\n");
  cli_print_devices(ctx);
  printf("memory nodes: %d (node 0 = host, node 1 + g = GPU g)\n", nodes);
  print_bandwidths(ctx, nodes);
  print_config(ctx);
  return cli_finish(ctx, CLI_OK);
}
