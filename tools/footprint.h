/* tessera CLI — the host memory a command holds at once, checked before anything is allocated.
 *
 * Each command adds up every array it holds at the same time (the pristine operands kept for
 * the residual, the copies the routine overwrites, the residual's own work arrays, descriptors
 * placed in host memory) and refuses, with a sentence giving that footprint and the memory there
 * is, when it exceeds the memory available: the kernel would otherwise kill the process once the
 * pages are touched, after minutes of work.
 */
#ifndef TESSERA_TOOLS_FOOTPRINT_H
#define TESSERA_TOOLS_FOOTPRINT_H

#include <stddef.h>
#include <stdint.h>

#include "cli.h"

/** Most distinct parts one footprint names. */
enum { FOOTPRINT_PARTS = 8 };

/** Bytes held at once, and the parts they are made of, each with its own words. */
typedef struct {
  double bytes;
  int nparts;
  struct {
    const char *what; /**< a static string; parts with the same words are summed */
    double bytes;
  } part[FOOTPRINT_PARTS];
} cli_footprint_t;

/** Adds `bytes` to the footprint under the words `what` (summed with a part of the same words;
 *  counted but not named once FOOTPRINT_PARTS parts exist). */
void cli_footprint_add(cli_footprint_t *f, const char *what, double bytes);

/** Bytes of a rows x cols array of `dtype`. */
double cli_array_bytes(tessera_dtype_t dtype, int64_t rows, int64_t cols);

/** The footprint of a command at matrix order n, `arg` being what else it depends on. */
typedef void (*cli_footprint_fn)(const void *arg, int64_t n, cli_footprint_t *f);

/** The memory a footprint is compared with: bytes available (0: unknown) and in all. */
typedef struct {
  double available, total;
} cli_memory_t;

/** This machine's memory: MemAvailable of /proc/meminfo, and its physical memory. */
cli_memory_t cli_memory_here(void);

/** Bytes free in the memory pools of the context's GPUs. */
double cli_device_available(const tessera_context_t *ctx);

/** Host bytes of a descriptor of `bytes` made by tessera_matrix_create on `ctx`: 0 when it fits
 *  in the 70 % of the GPUs' free pool memory where that places it, else all of them. */
double cli_descriptor_host_bytes(const tessera_context_t *ctx, double bytes);

/** Checks fn's footprint at order n against `mem`. When it does not fit, prints "tessera:
 *  <subject> needs X of memory at once<where> (the parts), but <holder> has Y available (Z in
 *  all); <advice>." and returns CLI_FAILED, where <advice> names the largest order that fits
 *  when `flag` (the option setting n, e.g. "--n") is given, and asks for a smaller matrix
 *  otherwise. `where` and `holder` name the memory (NULL: this machine). `quiet` skips the
 *  message (another process prints it). */
int cli_check_footprint(cli_footprint_fn fn, const void *arg, int64_t n, const char *flag,
                        const char *subject, const char *where, const char *holder,
                        cli_memory_t mem, int quiet);

/** The footprint of a command at matrix order n with k right-hand sides. */
typedef void (*cli_footprint_rhs_fn)(const void *arg, int64_t n, int64_t k, cli_footprint_t *f);

/** cli_check_footprint for a footprint of the order n and k right-hand sides. When it does not
 *  fit but would with one right-hand side, the advice names the right-hand sides and the most
 *  that fit ("choose <kflag> K or less"; kflag NULL, the right-hand sides of a file: "use K
 *  right-hand sides or fewer"); otherwise the order, as cli_check_footprint's. */
int cli_check_footprint_rhs(cli_footprint_rhs_fn fn, const void *arg, int64_t n, int64_t k,
                            const char *flag, const char *kflag, const char *subject,
                            const char *where, const char *holder, cli_memory_t mem, int quiet);

/** Arguments of the footprints of potrf, potrs, posv, getrf, gesv, syevd and demo on one
 *  process. */
typedef struct {
  cli_cmd_t routine;
  tessera_dtype_t dtype;
  tessera_job_t job;      /**< syevd: VALUES or VECTORS */
  tessera_context_t *ctx; /**< syevd: the context it runs on */
} cli_solve_footprint_t;

/** What syevd holds besides the two copies of A: tessera's working arrays on ctx
 *  (tessera_syevd_host_bytes) or, where larger, the check's (an n x n product, or for VALUES
 *  LAPACK's copy of A), which comes after them; and the eigenvalues. */
void cli_footprint_eig(tessera_context_t *ctx, tessera_dtype_t dtype, tessera_job_t job, int64_t n,
                       cli_footprint_t *f);

/** potrf .. gesv, syevd (and demo) on one process with k right-hand sides (0 for potrf, getrf
 *  and syevd): A twice, the pivots, B three times, the residual's vectors; syevd's
 *  cli_footprint_eig. `arg` is a cli_solve_footprint_t. */
void cli_footprint_solve(const void *arg, int64_t n, int64_t k, cli_footprint_t *f);

/** Checks fn's footprint at order n for `tessera bench` (every size of --n is checked before
 *  the first runs). Returns CLI_OK or CLI_FAILED (message printed). */
int cli_bench_check_footprint(const cli_opts_t *o, cli_footprint_fn fn, const void *arg, int64_t n);

#endif
