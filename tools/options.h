/* tessera CLI — the options' table and usage lines (tools/options.c), and the subcommands' bits
 * that say which of them take each option. */
#ifndef TESSERA_TOOLS_OPTIONS_H
#define TESSERA_TOOLS_OPTIONS_H

#include <stddef.h>
#include <stdio.h>

#include "cli.h"

#define BIT(c) (1u << (c))
#define RUNS (BIT(CMD_POTRF) | BIT(CMD_POTRS) | BIT(CMD_POSV) | BIT(CMD_GETRF) | BIT(CMD_GESV))
#define QR (BIT(CMD_GEQRF) | BIT(CMD_GELS))
#define EIG BIT(CMD_SYEVD)
#define SVD (BIT(CMD_GEPOLAR) | BIT(CMD_GESVD))
#define CTX (RUNS | QR | EIG | SVD | BIT(CMD_INFO) | BIT(CMD_BENCH) | BIT(CMD_DEMO))
#define CHOL (BIT(CMD_POTRF) | BIT(CMD_POTRS) | BIT(CMD_POSV))
#define LU (BIT(CMD_GETRF) | BIT(CMD_GESV))
#define SOLVES (BIT(CMD_POTRS) | BIT(CMD_POSV) | BIT(CMD_GESV))

typedef enum {
  F_N,
  F_M,
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
  F_NO_MG,
  F_OUT_OF_CORE,
  F_VALUES_ONLY,
  F_RANGE,
  F_FULL,
  F_MIXED,
  F_COND,
  F_REQUIRE_GPUS,
  F_GRID,
  F_VERSION,
  F_HELP,
  F_COUNT,
} flag_id_t;

/** An option: its name, what it sets, whether it takes a value (1: always, 2: optionally), the
 *  subcommands that take it and the least value of an integer option. An option of several
 *  names has a row per name; its help is under its first. */
typedef struct {
  const char *name;
  flag_id_t id;
  int has_value;
  unsigned cmds;
  int min;
} cli_flag_t;

extern const cli_flag_t cli_flags[];
extern const size_t cli_nflags;

/** Prints the options taken by the commands of mask `cmds` (a command's bit, or ~0u for all),
 *  each once, in the words for those commands. */
void cli_print_options(FILE *f, unsigned cmds);

#endif
