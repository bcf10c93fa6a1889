/* tessera CLI — generated matrices and element access for every dtype.
 *
 * Values are deterministic: each element is a hash of its position and a seed, mapped to
 * [-0.5, 0.5] (real and imaginary parts separately), so every run and every dtype sees the
 * same matrix up to rounding.
 */
#ifndef TESSERA_TOOLS_GEN_H
#define TESSERA_TOOLS_GEN_H

#include <stddef.h>
#include <stdint.h>

#include <tessera/tessera.h>

/** Seeds of the generated operands. */
enum { GEN_SEED_A = 1, GEN_SEED_B = 2, GEN_SEED_V = 3 };

/** Reads element `idx` of the array `a` of `dtype` (imaginary part 0 for real dtypes). */
void elem_get(tessera_dtype_t dtype, const void *a, size_t idx, double *re, double *im);

/** Writes element `idx` of the array `a` of `dtype` (imaginary part dropped for real dtypes). */
void elem_set(tessera_dtype_t dtype, void *a, size_t idx, double re, double im);

/** Fills the full n x n column-major `a` with a Hermitian (symmetric when real) positive
 *  definite matrix: hashed values in [-0.5, 0.5], n added on the (real) diagonal. Large
 *  matrices are made in column slices on every core. */
void gen_spd(tessera_dtype_t dtype, int64_t n, void *a, int64_t lda, uint64_t seed);

/** Writes the rows x cols block of gen_spd's n x n matrix whose first element is (i0, j0) into
 *  the column-major `a` (leading dimension lda): the values gen_spd gives those positions, so
 *  a matrix can be made one block at a time (and from several threads). */
void gen_spd_block(tessera_dtype_t dtype, int64_t n, int64_t i0, int64_t j0, int64_t rows,
                   int64_t cols, void *a, int64_t lda, uint64_t seed);

/** Fills the rows x cols column-major `a` with hashed values in [-0.5, 0.5]; large matrices in
 *  column slices on every core. */
void gen_dense(tessera_dtype_t dtype, int64_t rows, int64_t cols, void *a, int64_t lda,
               uint64_t seed);
/** The rows x cols block of gen_dense's matrix whose first element is (i0, j0), into `a`. */
void gen_dense_block(tessera_dtype_t dtype, int64_t i0, int64_t j0, int64_t rows, int64_t cols,
                     void *a, int64_t lda, uint64_t seed);

/** Makes the n x n `a` Hermitian by copying the `uplo` triangle, conjugated, onto the other
 *  and dropping the imaginary part of the diagonal. */
void gen_mirror(tessera_dtype_t dtype, tessera_uplo_t uplo, int64_t n, void *a, int64_t lda);

/** Fills the n x n column-major `a` with A = Q₁ D Q₂ᴴ of condition number exactly `cond` (≥ 1):
 *  D's diagonal geometric from 1 down to 1 / cond, Q₁ and Q₂ the unitary factors of the QR of two
 *  gen_dense matrices (seeds `seed` and `seed` + 1), applied by the context's geqrf and unmqr
 *  (their cost: about that of four n x n QR factorizations). `hermitian`: Q₂ = Q₁, a Hermitian
 *  positive definite A (its upper triangle mirrored from the lower). `work` holds n x n
 *  elements. Returns 0 or the failing call's status. */
int gen_cond(tessera_context_t *ctx, tessera_dtype_t dtype, int64_t n, double cond, int hermitian,
             void *a, int64_t lda, void *work, uint64_t seed);

/** Bytes of a rows x cols array of `dtype`, or 0 with *ok = 0 when that overflows. */
size_t gen_bytes(tessera_dtype_t dtype, int64_t rows, int64_t cols, int *ok);

#endif
