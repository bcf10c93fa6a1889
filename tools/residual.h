/* tessera CLI — relative residuals of Cholesky, LU and QR factorizations and of solves (CBLAS),
 * by probe vectors. */
#ifndef TESSERA_TOOLS_RESIDUAL_H
#define TESSERA_TOOLS_RESIDUAL_H

#include <stdint.h>

#include <tessera/tessera.h>

/** Machine epsilon of `dtype`'s real type. */
double residual_eps(tessera_dtype_t dtype);

/** Frobenius norm of the m x n `a` (LAPACK's lange; 0 when empty, NaN propagates). */
double residual_fro(tessera_dtype_t dtype, int64_t m, int64_t n, const void *a, int64_t lda);

/** num / den: 0 for an exact zero, infinite for a zero denominator; NaN propagates. */
double residual_relative(double num, double den);

/** The first column (1-based) of the m x n `a` that holds a NaN or an infinity; 0 when every
 *  element is finite. */
int64_t residual_nonfinite_column(tessera_dtype_t dtype, int64_t m, int64_t n, const void *a,
                                  int64_t lda);

/** alpha = −1 and beta = 1 in the dtype's scalar form (each at most two doubles), for gemms
 *  that subtract a product. */
void residual_scalars(tessera_dtype_t dtype, double mone[2], double one[2]);

/** ‖A v − w‖₁ / (‖A‖₁ ‖v‖₁ scale ε) for the m x n `a`, the n-vector v and the m-vector w, which
 *  it overwrites with A v − w (0 where m or n is 0, w untouched). Costs O(m n). With n = 1, a
 *  the m-vector u and v the scalar 1: ‖u − w‖₁ / (‖u‖₁ scale ε), how far w is from u. */
double residual_mv(tessera_dtype_t dtype, int64_t m, int64_t n, const void *a, int64_t lda,
                   const void *v, void *w, int64_t scale);

/** y (m elements) = [R v; 0]: R v for the n-vector v, R the upper trapezoid (min(m, n) x n) of
 *  the m x n `f` (as geqrf leaves it, the reflectors below R not read), then zeros.
 *  Costs O(min(m, n) n). */
void residual_upper_mv(tessera_dtype_t dtype, int64_t m, int64_t n, const void *f, int64_t ldf,
                       const void *v, void *y);

/** ‖(A − F) v‖₁ / (‖A‖₁ ‖v‖₁ n ε) for a generated vector v, where F = L Lᴴ (uplo LOWER) or
 *  Uᴴ U (UPPER) from the `uplo` triangle of `f`, and `a` holds the full Hermitian A.
 *  Costs O(n²) (two triangular products and one matrix-vector product).
 *  Returns a negative value when memory runs out. */
double residual_potrf(tessera_dtype_t dtype, tessera_uplo_t uplo, int64_t n, const void *a,
                      int64_t lda, const void *f, int64_t ldf);

/** ‖(A − Pᵀ L U) v‖₁ / (‖A‖₁ ‖v‖₁ n ε) for a generated vector v, where L (unit lower) and U
 *  are the LU factors in `f` and ipiv getrf's 1-based pivots of the n x n `a`. Costs O(n²).
 *  Returns a negative value when memory runs out. */
double residual_getrf(tessera_dtype_t dtype, int64_t n, const void *a, int64_t lda, const void *f,
                      int64_t ldf, const int *ipiv);

/** max over columns j of ‖A x_j − b_j‖₁ / (‖A‖₁ ‖x_j‖₁ n ε), `a` the full Hermitian n x n A,
 *  x and b n x nrhs. Returns a negative value when memory runs out. */
double residual_solve(tessera_dtype_t dtype, int64_t n, int64_t nrhs, const void *a, int64_t lda,
                      const void *x, int64_t ldx, const void *b, int64_t ldb);

#endif
