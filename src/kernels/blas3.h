/* The BLAS-3 family of tile kernels: gemm, syrk / herk, trsm, trmm, hemm, hemm_pair and geadd,
 * with trsm by recursive halving (trsm_blocked.c) and hemm_pair by blocks of columns
 * (hemm_pair.c), device-independent. Their tables, operation counts and size keys: blas3.c;
 * their implementations: cpu/blas3.c, cuda/blas3.c (cuBLAS) and cuda/hemv_pair.cu.
 *
 * Each kernel is a tessera_kernel_t whose implementations receive the task's buffers in the
 * order documented next to its argument struct, and the struct itself as `args`. Tiles are
 * column-major with the leading dimension given in tessera_exec_t.ld[]. Scalars are carried
 * as tsr_scalar_t and converted to the dtype inside the kernel.
 */
#ifndef TSR_KERNELS_BLAS3_H
#define TSR_KERNELS_BLAS3_H

#include "kernels/dtype.h"
#include "tessera/task.h"

/** Right-hand sides up to which a triangular solve is memory bound: trsm kernels take it whole
 *  (no recursive halving onto gemm), the CUDA one as one trsv call per right-hand side. */
#define TSR_TRSM_NARROW 4

/** The arithmetic of a single-precision product on a GPU: the dtype's own, or tensor cores on
 *  inputs rounded to TF32, BF16 or FP16, accumulated in f32 (cuBLAS's fast compute types), or
 *  TF32X3: on TF32 tensor cores in three products of split operands, x = hi + lo each rounded to
 *  TF32, hi·hi + lo·hi + hi·lo (the operands' f32 bits kept; the sums those of the tensor cores'
 *  f32 accumulation). CPUs and simulated devices compute in the dtype's own. */
typedef enum {
  TSR_MATH_OWN = 0,
  TSR_MATH_TF32,
  TSR_MATH_BF16,
  TSR_MATH_F16,
  TSR_MATH_TF32X3
} tsr_math_t;

/** trsm: buffers {A (R), B (RW)}. B = alpha op(A)^-1 B (side 'L', A m x m) or
 *  B = alpha B op(A)^-1 (side 'R', A n x n); B is m x n. */
typedef struct {
  tessera_dtype_t dtype;
  char side, uplo, trans, diag;
  int m, n;
  tsr_scalar_t alpha;
  int math; /* tsr_math_t of the products of a solve by recursive halving */
} tsr_trsm_args_t;

/** trmm: buffers {A (R), B (RW)}. B = alpha op(A) B (side 'L', A m x m) or
 *  B = alpha B op(A) (side 'R', A n x n); B is m x n. */
typedef tsr_trsm_args_t tsr_trmm_args_t;

/** syrk / herk: buffers {A (R), C (RW)}. C = alpha op(A) op(A)^T (or ^H when herk) + beta C on
 *  the `uplo` triangle of the n x n C; op(A) is n x k ('N') or A is k x n ('T' / 'C').
 *  herk: alpha and beta real (imaginary parts ignored). */
typedef struct {
  tessera_dtype_t dtype;
  char uplo, trans;
  int herk; /* 1: Hermitian (conjugate) update; 0: symmetric */
  int n, k;
  tsr_scalar_t alpha, beta;
  int math; /* tsr_math_t; with tensor cores the whole n x n tile is written */
} tsr_syrk_args_t;

/** gemm: buffers {A (R), B (R), C (RW)}. C = alpha op(A) op(B) + beta C; C m x n, op(A) m x k,
 *  op(B) k x n; trans in 'N', 'T', 'C'. */
typedef struct {
  tessera_dtype_t dtype;
  char transa, transb;
  int m, n, k;
  tsr_scalar_t alpha, beta;
  int math; /* tsr_math_t */
} tsr_gemm_args_t;

/** hemm: buffers {A (R) m x m, B (R) m x n, C (RW) m x n}. C = alpha A B + beta C for A
 *  Hermitian (symmetric for real dtypes) stored in its `uplo` triangle ('L' or 'U'): a diagonal
 *  tile's product, read from the stored triangle. */
typedef struct {
  tessera_dtype_t dtype;
  char uplo;
  int m, n;
  tsr_scalar_t alpha, beta;
} tsr_hemm_args_t;

/** hemm_pair: buffers {S (R) r x c, Xc (R) c x k, Xr (R) r x k, Yr (RW) r x k, Yc (RW) c x k}.
 *  Yr += alpha S Xc and Yc += alpha Sᴴ Xr: the two products of an off-diagonal tile of a
 *  Hermitian matrix stored in one triangle, from one pass over S. */
typedef struct {
  tessera_dtype_t dtype;
  int r, c, k;
  tsr_scalar_t alpha;
} tsr_hemm_pair_args_t;

/** geadd: buffers {A (R), C (RW)}. C = alpha A + beta C, both m x n. */
typedef struct {
  tessera_dtype_t dtype;
  int m, n;
  tsr_scalar_t alpha, beta;
} tsr_geadd_args_t;

/** The kernels (blas3.c). */
extern const tessera_kernel_t tsr_kernel_gemm;
extern const tessera_kernel_t tsr_kernel_syrk;
extern const tessera_kernel_t tsr_kernel_trsm;
extern const tessera_kernel_t tsr_kernel_trmm;
extern const tessera_kernel_t tsr_kernel_hemm;
extern const tessera_kernel_t tsr_kernel_hemm_pair;
extern const tessera_kernel_t tsr_kernel_geadd;

/* Recursive halving and blocking: one code for every device kind, calling the device kind's own
 * kernels, given as function pointers, on sub-blocks through copies of the task's
 * tessera_exec_t (the Cholesky family's recursive kernels halve the same way). */

/** Order of the first half when the recursive kernels halve a triangle of order n: about n / 2,
 *  rounded up to a multiple of 16 (n / 2 below order 32). */
static inline int tsr_half_order(int n) {
  return n < 32 ? n / 2 : (n / 2 + 15) / 16 * 16;
}
/** trsm by recursive halving onto `trsm` (orders <= leaf, and solves of at most
 *  TSR_TRSM_NARROW right-hand sides) and `gemm` (trsm_blocked.c). */
int tsr_trsm_blocked(const tessera_exec_t *ex, void *args, tessera_kernel_fn trsm,
                     tessera_kernel_fn gemm, int leaf);
/** hemm_pair (tsr_hemm_pair_args_t) onto a device kind's `gemm`: the two products on blocks of
 *  `chunk` columns of S at a time (each block read by both while it is in cache; hemm_pair.c). */
int tsr_hemm_pair(const tessera_exec_t *ex, const tsr_hemm_pair_args_t *a, tessera_kernel_fn gemm,
                  int chunk);

/* CPU implementations (cpu/blas3.c). tsr_cpu_trsm_blocked: the table's trsm, by recursive
 * halving onto tsr_cpu_trsm (OpenBLAS's, whole) and tsr_cpu_gemm. */
int tsr_cpu_gemm(const tessera_exec_t *ex, void *args);
int tsr_cpu_syrk(const tessera_exec_t *ex, void *args);
int tsr_cpu_trsm(const tessera_exec_t *ex, void *args);
int tsr_cpu_trsm_blocked(const tessera_exec_t *ex, void *args);
int tsr_cpu_trmm(const tessera_exec_t *ex, void *args);
int tsr_cpu_hemm(const tessera_exec_t *ex, void *args);
int tsr_cpu_hemm_pair(const tessera_exec_t *ex, void *args);
int tsr_cpu_geadd(const tessera_exec_t *ex, void *args);

#ifdef TESSERA_HAVE_CUDA
/* CUDA implementations (cuda/blas3.c): enqueue on ex->stream with the handles in ex->scratch
 * (tessera_cuda_scratch_t). */
int tsr_cuda_gemm(const tessera_exec_t *ex, void *args);
int tsr_cuda_syrk(const tessera_exec_t *ex, void *args);
int tsr_cuda_trsm(const tessera_exec_t *ex, void *args);
int tsr_cuda_trsm_blocked(const tessera_exec_t *ex, void *args);
int tsr_cuda_trmm(const tessera_exec_t *ex, void *args);
/** trmm (side 'L') reading A whole, as a dense matrix: its zeros and diagonal must be written
 *  out (getrf's inv is so). */
int tsr_cuda_trmm_dense(const tessera_exec_t *ex, void *args);
int tsr_cuda_hemm(const tessera_exec_t *ex, void *args);
int tsr_cuda_hemm_pair(const tessera_exec_t *ex, void *args);
int tsr_cuda_geadd(const tessera_exec_t *ex, void *args);
#endif

#endif
