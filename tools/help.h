/* tessera CLI — what the residual column of each command is and what value passes, in the words
 * of its --help (tools/main.c); the checks themselves are tools/residual.c, tools/qr_check.c,
 * tools/eig.c and tools/bench_ooc.c. */
#ifndef TESSERA_TOOLS_HELP_H
#define TESSERA_TOOLS_HELP_H

#define RESIDUAL_EPS                                                                               \
  "  n the order and eps the machine epsilon of the dtype's real type (f32, c64:\n"                \
  "  2^-23 = 1.19e-7; f64, c128: 2^-52 = 2.22e-16). A correct result gives about 1 or less;\n"     \
  "  below 10 passes (the threshold of demo and of the tests); far above it, the result is\n"      \
  "  wrong."
#define RESIDUAL_V                                                                                 \
  "  v a fixed generated vector (values in [-0.5, 0.5]), ||v||_1 the sum of its moduli,\n"
#define RESIDUAL_POTRF                                                                             \
  "residual = ||A v - L (L^H v)||_1 / (||A||_1 ||v||_1 n eps) (--uplo U: U^H (U v)), with\n"       \
  "  L or U the computed factor of A,\n" RESIDUAL_V                                                \
  "  ||A||_1 the largest column sum of moduli of A,\n" RESIDUAL_EPS
#define RESIDUAL_GETRF                                                                             \
  "residual = ||A v - P^T (L (U v))||_1 / (||A||_1 ||v||_1 n eps), with P L U the computed\n"      \
  "  factors of A (P the row interchanges of the pivots),\n" RESIDUAL_V                            \
  "  ||A||_1 the largest column sum of moduli of A,\n" RESIDUAL_EPS
#define RESIDUAL_SOLVE                                                                             \
  "residual = the largest over the columns j of ||A x_j - b_j||_1 / (||A||_1 ||x_j||_1 n eps),\n"  \
  "  with x_j the computed solution of the right-hand side b_j, ||x_j||_1 the sum of its\n"        \
  "  moduli, ||A||_1 the largest column sum of moduli of A,\n" RESIDUAL_EPS
#define RESIDUAL_GEQRF                                                                             \
  "residual = ||A - Q R||_F / (||A||_F max(m, n) eps) and orthogonality =\n"                       \
  "  ||I - Q^H Q||_F / (m eps), with Q (m x min(m, n)) formed from the computed reflectors\n"      \
  "  (tessera_ungqr) and R the computed upper trapezoid,\n" RESIDUAL_EPS
#define RESIDUAL_GELS                                                                              \
  "residual = LAPACK's least-squares test ratio: for m >= n, ||(b - A x)^H A||_F /\n"              \
  "  (max(m, n, nrhs) ||A||_F ||b||_F eps), the residual orthogonal to A's columns; for m < n,\n"  \
  "  ||b - A x||_F / (max(m, n) ||A||_F ||x||_F eps),\n" RESIDUAL_EPS                              \
  "\n  An exactly zero R(i, i) (A not of full rank; for m < n, R of A^H's QR) fails with\n"        \
  "  LAPACK's info = i; a warning says when the smallest |R(i, i)| is below max(m, n) eps\n"       \
  "  times the largest (A numerically rank deficient: the solution is mostly rounding error)."
#define RESIDUAL_SYEVD                                                                             \
  "residual = ||A V - V diag(w)||_F / (||A||_F n eps) and orthogonality = ||I - V^H V||_F /\n"     \
  "  (n eps), with V the computed eigenvectors and w the computed eigenvalues (two gemms);\n"      \
  "  with --values-only, residual = max_i |w_i - w_i(LAPACK)| / (||A||_F n eps), w(LAPACK)\n"      \
  "  the eigenvalues LAPACKE's ?syevd / ?heevd (job N) computes of a copy of A in the same\n"      \
  "  dtype, ||.||_F the Frobenius norm,\n" RESIDUAL_EPS                                            \
  "\n  GFLOP/s counts LAPACK's usual estimate: 4/3 n^3 without eigenvectors, 9 n^3 with them\n"    \
  "  (four times that for c64 and c128)."
#define RESIDUAL_GEPOLAR                                                                           \
  "residual = ||A - U_p H||_F / (||A||_F max(m, n) eps) and orthogonality =\n"                     \
  "  ||I - U_p^H U_p||_F / (n eps) (two gemms), ||.||_F the Frobenius norm,\n" RESIDUAL_EPS        \
  "\n  GFLOP/s counts QDWH's dense operations for the steps it took: a QR step\n"                  \
  "  4 (m + n) n^2 - 4/3 n^3 + 2 m n^2, a Cholesky step 10/3 m n^2, then 6 m n^2 (four\n"          \
  "  times that for c64 and c128)."
#define RESIDUAL_GESVD                                                                             \
  "residual = ||A - U diag(s) V^H||_F / (||A||_F max(m, n) eps) and orthogonality =\n"             \
  "  ||I - U^H U||_F / (min(m, n) eps); with --values-only, residual =\n"                          \
  "  max_i |s_i - s_i(LAPACK)| / (s_1 max(m, n) eps), s(LAPACK) the singular values\n"             \
  "  LAPACKE's ?gesvd (job N) computes of a copy of A,\n" RESIDUAL_EPS                             \
  "\n  GFLOP/s counts gepolar's operations for 6 steps and the eigensolver's 9 n^3 (4/3 n^3\n"     \
  "  with --values-only) on H, and 2 m n^2 for U = U_p V."
#define RESIDUAL_BENCH                                                                             \
  "residual of potrf = ||A v - L (L^H v)||_1 / (||A||_1 ||v||_1 n eps) (--uplo U: U^H (U v)),\n"   \
  "  of getrf = ||A v - P^T (L (U v))||_1 / (||A||_1 ||v||_1 n eps),\n"                            \
  "  of geqrf = ||A v - Q [R v; 0]||_1 / (||A||_1 ||v||_1 max(m, n) eps), with its\n"              \
  "  orthogonality = ||w - Q^H (Q w)||_1 / (||w||_1 m eps),\n"                                     \
  "  of gels = ||(b - A x)^H A||_F / (max(m, n, nrhs) ||A||_F ||b||_F eps) for m >= n,\n"          \
  "  ||b - A x||_F / (max(m, n) ||A||_F ||x||_F eps) for m < n (LAPACK's least-squares\n"          \
  "  test ratios),\n"                                                                              \
  "  of syevd = ||A V - V diag(w)||_F / (||A||_F n eps), with its orthogonality =\n"               \
  "  ||I - V^H V||_F / (n eps) (V and w the computed eigenvectors and eigenvalues; two gemms,\n"   \
  "  O(n^3)); with --values-only max_i |w_i - w_i(LAPACK)| / (||A||_F n eps), w(LAPACK)\n"         \
  "  LAPACKE's eigenvalues (job N) of the same matrix; syevd's GFLOP/s count 4/3 n^3 without\n"    \
  "  eigenvectors, 9 n^3 with them (LAPACK's usual estimate; four times that for complex),\n"      \
  "  of --out-of-core = ||b - A x||_inf / ((||A||_inf ||x||_inf + ||b||_inf) n eps),\n"            \
  "  with L, U and P the computed factors of A, Q and R (min(m, n) x n) those of the m x n\n"      \
  "  A's QR (Q applied to vectors by unmqr, tile unmqr for api tile, never formed),\n"             \
  "  v (n elements) and w (m) fixed generated vectors (values in [-0.5, 0.5]), ||v||_1 the\n"      \
  "  sum of its moduli, x gels' computed solution for the generated b (--out-of-core: what\n"      \
  "  tile potrs computes for b = A x0, x0 generated), ||x||_inf its largest modulus,\n"            \
  "  ||.||_F the Frobenius norm (each check but syevd's O(m n) a vector: no product of two\n"      \
  "  matrices),\n"                                                                                 \
  "  ||A||_1 (||A||_inf) the largest column (row) sum of moduli of A,\n" RESIDUAL_EPS
#define RESIDUAL_GRID                                                                              \
  "\n  With --grid, a factorization's residual above n = 16384 is not computed (nan)."
#define RESIDUAL_GEQRF_GRID                                                                        \
  "\n  With --grid, Q is never formed: residual = ||A v - Q [R v; 0]||_1 / (||A||_1 ||v||_1\n"     \
  "  max(m, n) eps) and orthogonality = ||w - Q^H (Q w)||_1 / (||w||_1 m eps), v (n elements)\n"   \
  "  and w (m) fixed generated vectors; above m n = 16384^2 neither is computed (nan)."

#endif
