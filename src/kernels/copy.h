/* The copies and conversions of tiles: lacpy, convert (precision), transpose, diagonal,
 * triangle, identity and hefill, and absum (sums of moduli, for norms). Their tables, operation
 * counts and size keys: copy.c; their implementations: cpu/copy.c, cuda/copy.c with the device
 * kernels of cuda/copy.cu and cuda/convert.cu. Buffers and arguments as blas3.h describes.
 */
#ifndef TSR_KERNELS_COPY_H
#define TSR_KERNELS_COPY_H

#include <stdbool.h>

#include "kernels/dtype.h"
#include "tessera/task.h"

/** lacpy: buffers {src (R), dst (W, or RW when the copy fills part of it)}. Copies the m x n
 *  block of src starting at (src_row, src_col) into dst at (dst_row, dst_col). */
typedef struct {
  tessera_dtype_t dtype;
  int m, n;
  int src_row, dst_row;
  int src_col, dst_col;
} tsr_lacpy_args_t;

/** convert: buffers {src (R) of dtype `from`, m x n; dst (W, or RW when the block is part of
 *  it) of dtype `to`}. dst's m x n block at (dst_row, dst_col) = scale src in `to`'s precision
 *  (rounded to nearest, or exact when widening); the pair is of one kind (real or complex,
 *  tsr_convert_pair). */
typedef struct {
  tessera_dtype_t from, to;
  int m, n;
  double scale; /* dst = scale src (a power of two keeps the rounding that of src alone) */
  int dst_row, dst_col;
} tsr_convert_args_t;

/** Whether convert takes the pair (from, to): both valid and of one kind. */
static inline bool tsr_convert_pair(tessera_dtype_t from, tessera_dtype_t to) {
  return tsr_dtype_valid(from) && tsr_dtype_valid(to) &&
         tsr_dtype_complex(from) == tsr_dtype_complex(to);
}

/** absum: buffers {A (R) m x n, rows (RW) m doubles, cols (RW) n doubles, absent with `part`}.
 *  rows[i] += Σ_j |a_ij| and cols[j] += Σ_i |a_ij| (part 0); rows alone (part 'G'); or for a
 *  Hermitian diagonal tile (m = n) stored in its `part` triangle ('L' or 'U'), rows[i] += the
 *  sum of row i of the whole Hermitian tile. |z| is the modulus for complex dtypes. */
typedef struct {
  tessera_dtype_t dtype;
  int m, n;
  char part;
} tsr_absum_args_t;

/** Whether an absum part names a Hermitian tile's stored triangle. */
static inline bool tsr_absum_hermitian(char part) {
  return part == 'L' || part == 'U';
}

/** transpose: buffers {A (R), B (W, or RW when the copy fills part of it)}. The conjugate
 *  transpose (the transpose on real dtypes) of A's m x n block at (src_row, src_col) into B's
 *  n x m block at (dst_row, dst_col). */
typedef struct {
  tessera_dtype_t dtype;
  int m, n;
  int src_row, src_col, dst_row, dst_col;
} tsr_transpose_args_t;

/** diagonal: buffers {A (R), d (W) n x 1}. Copies the diagonal of A's n x n block from row `row`
 *  into d (a QR step's tau from its T; R's diagonal from a panel). */
typedef struct {
  tessera_dtype_t dtype;
  int n, row;
} tsr_diagonal_args_t;

/** triangle: buffers {src (R), dst (W)}. dst's k x k block becomes a triangle of src's k x k
 *  block from row `src_row`, zeros in the other: uplo 'L' the unit lower triangle (ones on the
 *  diagonal: a block of Householder vectors), 'U' the upper triangle with the diagonal (an R). */
typedef struct {
  tessera_dtype_t dtype;
  char uplo;
  int k, src_row;
} tsr_triangle_args_t;

/** identity: buffers {A (W, or RW when the block is part of it)}. A's m x n block from row `row`
 *  becomes a block of an identity: ones where column - row (within the block) == d, else
 *  zeros (d beyond the block: all zeros). */
typedef struct {
  tessera_dtype_t dtype;
  int m, n;
  int row, d;
} tsr_identity_args_t;

/** hefill: buffers {A (RW), n x n}. Writes the strictly upper triangle from the lower, conjugated:
 *  the whole Hermitian (symmetric) matrix whose lower triangle A stores. */
typedef struct {
  tessera_dtype_t dtype;
  int n;
} tsr_hefill_args_t;

/** The kernels (copy.c). */
extern const tessera_kernel_t tsr_kernel_lacpy;
extern const tessera_kernel_t tsr_kernel_convert;
extern const tessera_kernel_t tsr_kernel_absum;
extern const tessera_kernel_t tsr_kernel_transpose;
extern const tessera_kernel_t tsr_kernel_diagonal;
extern const tessera_kernel_t tsr_kernel_triangle;
extern const tessera_kernel_t tsr_kernel_identity;
extern const tessera_kernel_t tsr_kernel_hefill;

/* CPU implementations (cpu/copy.c). */
int tsr_cpu_lacpy(const tessera_exec_t *ex, void *args);
int tsr_cpu_convert(const tessera_exec_t *ex, void *args);
int tsr_cpu_absum(const tessera_exec_t *ex, void *args);
int tsr_cpu_transpose(const tessera_exec_t *ex, void *args);
int tsr_cpu_diagonal(const tessera_exec_t *ex, void *args);
int tsr_cpu_triangle_copy(const tessera_exec_t *ex, void *args);
int tsr_cpu_identity(const tessera_exec_t *ex, void *args);
int tsr_cpu_hefill(const tessera_exec_t *ex, void *args);

#ifdef TESSERA_HAVE_CUDA
/* CUDA implementations (cuda/copy.c): enqueue on ex->stream. */
int tsr_cuda_lacpy(const tessera_exec_t *ex, void *args);
int tsr_cuda_convert(const tessera_exec_t *ex, void *args);
int tsr_cuda_absum(const tessera_exec_t *ex, void *args);
int tsr_cuda_transpose(const tessera_exec_t *ex, void *args);
int tsr_cuda_diagonal(const tessera_exec_t *ex, void *args);
int tsr_cuda_triangle_copy(const tessera_exec_t *ex, void *args);
int tsr_cuda_identity(const tessera_exec_t *ex, void *args);
int tsr_cuda_hefill(const tessera_exec_t *ex, void *args);
#endif

#endif
