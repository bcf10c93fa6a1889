/* tessera CLI — the options: which subcommands take each, and the words of its usage line. */
#include "options.h"

/* A row per name of each option (options.h), in the order of the usage's options. */
const cli_flag_t cli_flags[] = {
    {"--n", F_N, 1,
     RUNS | QR | EIG | SVD | BIT(CMD_BENCH) | BIT(CMD_DEMO) | BIT(CMD_GEN) | BIT(CMD_INFO), 0},
    {"--m", F_M, 1, QR | SVD | BIT(CMD_BENCH), 0},
    {"--nrhs", F_NRHS, 1, SOLVES | BIT(CMD_GELS) | BIT(CMD_BENCH) | BIT(CMD_DEMO) | BIT(CMD_GEN),
     0},
    {"--dtype", F_DTYPE, 1, RUNS | QR | EIG | SVD | BIT(CMD_BENCH) | BIT(CMD_DEMO) | BIT(CMD_GEN),
     0},
    {"--tile", F_TILE, 1, CTX, 1},
    {"--uplo", F_UPLO, 1, CHOL | EIG | BIT(CMD_BENCH) | BIT(CMD_DEMO), 0},
    {"--input", F_INPUT, 1, RUNS | QR | EIG | SVD, 0},
    {"--rhs", F_RHS, 1, SOLVES | BIT(CMD_GELS), 0},
    {"--output", F_OUTPUT, 1, RUNS | QR | EIG | SVD | BIT(CMD_GEN) | BIT(CMD_TRACE), 0},
    {"-o", F_OUTPUT, 1, RUNS | QR | EIG | SVD | BIT(CMD_GEN) | BIT(CMD_TRACE), 0},
    {"--reps", F_REPS, 1, RUNS | QR | EIG | SVD | BIT(CMD_BENCH), 1},
    {"--workers", F_WORKERS, 1, CTX, 0},
    {"--gpus", F_GPUS, 1, CTX, 0},
    {"--require-gpus", F_REQUIRE_GPUS, 0, CTX, 0},
    {"--sched", F_SCHED, 1, CTX, 0},
    {"--grid", F_GRID, 1, RUNS | QR | EIG | SVD, 0},
    {"--trace", F_TRACE, 1, CTX, 0},
    {"--json", F_JSON, 0, RUNS | QR | EIG | SVD | BIT(CMD_BENCH) | BIT(CMD_DEMO), 0},
    {"--width", F_WIDTH, 1, BIT(CMD_TRACE), 400},
    {"--resident", F_RESIDENT, 0, BIT(CMD_BENCH), 0},
    {"--resident-only", F_RESIDENT_ONLY, 0, BIT(CMD_BENCH), 0},
    {"--no-baseline", F_NO_BASELINE, 0, BIT(CMD_BENCH), 0},
    {"--no-mg", F_NO_MG, 0, BIT(CMD_BENCH), 0},
    {"--out-of-core", F_OUT_OF_CORE, 0, BIT(CMD_BENCH), 0},
    {"--values-only", F_VALUES_ONLY, 0, EIG | BIT(CMD_GESVD) | BIT(CMD_BENCH), 0},
    {"--range", F_RANGE, 1, EIG, 0},
    {"--full", F_FULL, 0, BIT(CMD_GESVD), 0},
    {"--mixed", F_MIXED, 2, BIT(CMD_POSV) | BIT(CMD_GESV) | BIT(CMD_BENCH), 0},
    {"--cond", F_COND, 1, BIT(CMD_BENCH), 0},
    {"--version", F_VERSION, 0, ~0u, 0},
    {"--help", F_HELP, 0, ~0u, 0},
    {"-h", F_HELP, 0, ~0u, 0},
};
const size_t cli_nflags = sizeof cli_flags / sizeof cli_flags[0];

/** The usage line of each option: for an option, the first row whose commands include the one
 *  asked about; the row of all commands (~0u, last) is what `tessera --help` shows. */
static const struct {
  flag_id_t id;
  unsigned cmds;
  const char *text;
} helps[] = {
    {F_N, RUNS | EIG | BIT(CMD_GEN), "--n N            matrix order (default 1000)"},
    {F_N, BIT(CMD_DEMO), "--n N            matrix order (default 4096)"},
    {F_N, BIT(CMD_BENCH), "--n N1,N2,...    matrix orders, one result line each (default 4096)"},
    {F_N, BIT(CMD_INFO),
     "--n N            order of the f64 gemm measured, 0 skips it (default 2048, 16384 with\n"
     "                   GPUs)"},
    {F_N, ~0u,
     "--n N            matrix order (bench: N1,N2,...; info: order of the gemm measured)"},
    {F_M, ~0u,
     "--m M            rows of A (geqrf, gels, gepolar, gesvd, bench geqrf|gels; default:\n"
     "                   --n's)"},
    {F_NRHS, BIT(CMD_GEN),
     "--nrhs K         writes K generated right-hand sides (n x K) instead of the matrix"},
    {F_NRHS, ~0u, "--nrhs K         right-hand sides (default 1)"},
    {F_DTYPE, ~0u, "--dtype s|d|c|z  element type f32, f64, c64, c128 (default d)"},
    {F_TILE, ~0u, "--tile T         tile size (default: the library's choice for the order)"},
    {F_UPLO, BIT(CMD_POTRF), "--uplo L|U       triangle factored and written (default L)"},
    {F_UPLO, EIG, "--uplo L|U       triangle of A read, the other not referenced (default L)"},
    {F_UPLO, BIT(CMD_BENCH),
     "--uplo L|U       triangle factored by bench potrf, read by bench syevd (default L)"},
    {F_UPLO, ~0u, "--uplo L|U       triangle of A read and factored (default L)"},
    {F_INPUT, CHOL | EIG,
     "--input a.npy    square matrix used instead of a generated one: its --uplo triangle,\n"
     "                   made Hermitian"},
    {F_INPUT, LU, "--input a.npy    square matrix used as it is instead of a generated one"},
    {F_INPUT, QR | SVD, "--input a.npy    m x n matrix used as it is instead of a generated one"},
    {F_INPUT, ~0u,
     "--input a.npy    square matrix instead of a generated one (potrf, potrs, posv, syevd:\n"
     "                   its --uplo triangle, made Hermitian; getrf, gesv: as it is)"},
    {F_RHS, BIT(CMD_GELS),
     "--rhs b.npy      right-hand sides (m or m x K) instead of generated ones"},
    {F_RHS, ~0u,
     "--rhs b.npy      right-hand sides (n or n x K; gels: m or m x K) instead of generated ones"},
    {F_OUTPUT, BIT(CMD_POTRF),
     "--output l.npy, -o l.npy\n"
     "                   writes the factor (its other triangle zeroed)"},
    {F_OUTPUT, BIT(CMD_GETRF),
     "--output lu.npy, -o lu.npy\n"
     "                   writes L and U in one matrix (L's unit diagonal not stored), and\n"
     "                   the pivots to lu.piv.npy: int32, 0-based, row i was interchanged\n"
     "                   with row piv[i] (scipy.linalg.lu_solve((lu, piv), b) solves)"},
    {F_OUTPUT, SOLVES | BIT(CMD_GELS),
     "--output x.npy, -o x.npy\n                   writes the solution X"},
    {F_OUTPUT, BIT(CMD_GEQRF),
     "--output qr.npy, -o qr.npy\n"
     "                   writes R and the reflectors' vectors in one matrix, as LAPACK's geqrf\n"
     "                   leaves them, and tau to qr.tau.npy"},
    {F_OUTPUT, EIG,
     "--output w.npy, -o w.npy\n"
     "                   writes the eigenvalues (n, ascending, in the dtype's real type: f32\n"
     "                   for s and c, f64 for d and z) and, unless --values-only, the\n"
     "                   eigenvectors to w.vectors.npy (n x n, column i for w[i])"},
    {F_OUTPUT, BIT(CMD_GEPOLAR),
     "--output u.npy, -o u.npy\n"
     "                   writes U_p (m x n) and H to u.h.npy (n x n)"},
    {F_OUTPUT, BIT(CMD_GESVD),
     "--output s.npy, -o s.npy\n"
     "                   writes the singular values (min(m, n), descending, in the dtype's\n"
     "                   real type) and, unless --values-only, U to s.u.npy (m x min(m, n);\n"
     "                   m x m with --full) and Vᴴ to s.vt.npy (min(m, n) x n; n x n)"},
    {F_OUTPUT, BIT(CMD_GEN), "--output a.npy, -o a.npy\n                   the file written"},
    {F_OUTPUT, BIT(CMD_TRACE), "--output g.svg, -o g.svg\n                   the chart written"},
    {F_OUTPUT, ~0u,
     "--output FILE, -o FILE\n"
     "                   writes the factor (potrf; getrf: L and U, and the pivots beside), the\n"
     "                   solution (potrs, posv, gesv), the eigenvalues (syevd; the eigenvectors\n"
     "                   beside), the matrix (gen) or the chart (trace)"},
    {F_REPS, BIT(CMD_BENCH), "--reps R         repetitions, best time reported (default 3)"},
    {F_REPS, RUNS | QR | EIG | SVD, "--reps R         repetitions, best time reported (default 1)"},
    {F_REPS, ~0u, "--reps R         repetitions, best time reported (default 1, bench 3)"},
    {F_WORKERS, BIT(CMD_BENCH),
     "--workers W      CPU worker threads, and the thread count of the LAPACKE baseline"},
    {F_WORKERS, ~0u, "--workers W      CPU worker threads"},
    {F_GPUS, ~0u,
     "--gpus G         GPUs to use (0 disables them); fewer found: a warning, and the run\n"
     "                   goes on with what exists"},
    {F_REQUIRE_GPUS, ~0u, "--require-gpus   fail (exit 1) when fewer GPUs than --gpus are found"},
    {F_SCHED, ~0u, "--sched cost|locality  scheduling policy"},
    {F_GRID, SVD,
     "--grid PxQ       over the P x Q processes of an mpirun (process 0 prints): A dealt\n"
     "                   from process 0 over the grid, every step on the processes' tiles"},
    {F_GRID, EIG,
     "--grid PxQ       over the P x Q processes of an mpirun (process 0 prints): process 0\n"
     "                   runs the stages up to T's eigenvectors, the back-transformations\n"
     "                   are dealt over the processes by columns"},
    {F_GRID, ~0u,
     "--grid PxQ       distributed over the P x Q processes of an mpirun (process 0 prints);\n"
     "                   every process makes the same matrix (TESSERA_GRID=PxQ|auto does\n"
     "                   the same without the option)"},
    {F_TRACE, BIT(CMD_BENCH),
     "--trace f.json   writes a Chrome trace of every task at the end (with GPU baselines,\n"
     "                   of the last size only)"},
    {F_TRACE, ~0u, "--trace f.json   writes a Chrome trace of every task at the end"},
    {F_JSON, ~0u,
     "--json           one JSON object per result line; on failure one with the exit status\n"
     "                   and the message"},
    {F_WIDTH, ~0u, "--width W        width of the chart in pixels (default 1600)"},
    {F_RESIDENT, ~0u,
     "--resident       also times the tile-level call (tessera_tile_potrf, getrf, geqrf, gels,\n"
     "                   syevd) on a descriptor made once (syevd with GPUs: its tiles copied\n"
     "                   onto the GPUs before each call, untimed, as cuSOLVER's A is)"},
    {F_RESIDENT_ONLY, ~0u,
     "--resident-only  times only that (no LAPACK-style call on a host array)"},
    {F_NO_BASELINE, ~0u, "--no-baseline    tessera only"},
    {F_NO_MG, ~0u, "--no-mg          GPUs: cusolverDn alone, without cuSolverMg"},
    {F_VALUES_ONLY, EIG, "--values-only    eigenvalues only (LAPACK's job N), no eigenvectors"},
    {F_VALUES_ONLY, BIT(CMD_GESVD),
     "--values-only    singular values only (LAPACK's job N), no singular vectors"},
    {F_VALUES_ONLY, ~0u,
     "--values-only    syevd, bench syevd: eigenvalues only (LAPACK's job N), no eigenvectors"},
    {F_RANGE, EIG,
     "--range IL:IU    eigenvalues il .. iu alone (1-based, ascending) and their vectors, by\n"
     "                   tessera_syevdx / heevdx; GFLOP/s still count a whole solve's operations"},
    {F_RANGE, ~0u,
     "--range IL:IU    syevd: eigenvalues il .. iu alone (1-based) and their vectors"},
    {F_FULL, ~0u,
     "--full           gesvd: every singular vector, U m x m and Vᴴ n x n (LAPACK's job A;\n"
     "                   the economy ones first, then an orthonormal completion)"},
    {F_MIXED, ~0u,
     "--mixed [P]      posv, gesv, bench posv|gesv: A factored in a lower precision P and the\n"
     "                   solution refined to A's (auto, also --mixed alone: single for d and\n"
     "                   z without GPUs; with GPUs h for posv from n 16384, s for gesv from\n"
     "                   32768; s: single, f32 or c64; tf32, bf16, h: held in single, its\n"
     "                   products on GPU tensor cores, which they need);\n"
     "                   prints the factor's precision and the refinement's steps\n"
     "                   (negative: the working-precision solve ran, with dsposv's code)"},
    {F_COND, ~0u,
     "--cond C         bench posv|gesv --mixed: A = Q1 D Q2ᴴ of condition number C (D geometric\n"
     "                   from 1 to 1/C, Q1 and Q2 from the QR of random matrices, Q2 = Q1\n"
     "                   for posv) instead of the plain solves' generated matrix"},
    {F_OUT_OF_CORE, ~0u,
     "--out-of-core    potrf only: the matrix held once, as the tiles of one triangle (--uplo),\n"
     "                   generated by tasks; times tessera_tile_potrf, checks with potrs\n"
     "                   (backward error); no baseline (for matrices larger than the GPUs)"},
    {F_VERSION, ~0u, "--version        prints the version of tessera"},
    {F_HELP, ~0u, "--help, -h       this text"},
};
#define NHELPS (sizeof helps / sizeof helps[0])

/** Prints the options taken by the commands of mask `cmds` (a command's bit, or ~0u for all),
 *  each once, in the words for those commands. */
void cli_print_options(FILE *f, unsigned cmds) {
  fputs("options:\n", f);
  for (size_t i = 0; i < cli_nflags; i++) {
    if (!(cli_flags[i].cmds & cmds) || (i > 0 && cli_flags[i - 1].id == cli_flags[i].id)) continue;
    size_t h = 0;
    while (h < NHELPS && !(helps[h].id == cli_flags[i].id && (helps[h].cmds & cmds) == cmds)) h++;
    if (h < NHELPS) fprintf(f, "  %s\n", helps[h].text);
  }
}
