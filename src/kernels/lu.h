/* The LU family of tile kernels: getrf (partial pivoting), laswp and lu_step on column panels,
 * and gesv, a whole solve on one device; lu_step (lu_step.c, with the permutation of a step's
 * interchanges, tsr_lu_swaps) and gesv's solve (solve_whole.c), device-independent. Their
 * tables, operation counts and size keys: lu.c; their implementations: cpu/lu.c (LAPACKE),
 * cuda/lu.c (cuSOLVER) and cuda/lu.cu (the NaN column scans, the interchanges' permutation and
 * the row gather). Buffers and arguments as blas3.h describes.
 */
#ifndef TSR_KERNELS_LU_H
#define TSR_KERNELS_LU_H

#include "kernels/blas3.h"

/** The pivots of one LU step of k pivots, as ints: piv[0] the info, piv[1 .. k] the pivots
 *  (1-based, relative to the step's first row), then the same interchanges as one permutation
 *  of the rows they touch: piv[1 + k] = count c (<= 2k; -1 when not computed), dst =
 *  piv + 2 + k and src = dst + 2k, row dst[t] receiving row src[t] (0-based, relative to the
 *  first row). Ints a step of k pivots holds: */
#define TSR_PIV_INTS(k) (2 + 5 * (int64_t)(k))

/** Computes the permutation part of `piv` (TSR_PIV_INTS(k) ints) from its k pivots, rows
 *  counting the rows the pivots may name. Returns 0, or -1 when memory runs out (the count is
 *  then -1: a device kernel given such a handle may not use the permutation). */
int tsr_lu_swaps(int *piv, int k, int rows);

/** getrf: buffers {A (RW), piv (W)[, inv (W)]}. LU factorization with partial pivoting of the
 *  block of A starting at row `r0` (rows r0 .. m - 1, columns 0 .. n - 1; m counts from row 0 of
 *  the buffer), as LAPACK's getrf: P A' = L U in place, its k = min(m - r0, n) pivots and their
 *  permutation in piv (TSR_PIV_INTS(k) ints, see above). piv[0] receives the info: 0, or the
 *  first column j (1-based) where U(j, j) is exactly zero or a NaN appears in the factored
 *  block; the factorization completes either way (the kernel itself returns 0), as LAPACK's
 *  does. With `inv` (k x k), it receives L11⁻¹, the inverse of the unit lower k x k block of L,
 *  whole (zeros above its unit diagonal): lu_step's products with it replace triangular
 *  solves. */
typedef struct {
  tessera_dtype_t dtype;
  int m, n;
  int r0;
} tsr_getrf_args_t;

/** laswp: buffers {A (RW), piv (R)}. Applies the row interchanges piv[1 .. k] (a step's pivots,
 *  see TSR_PIV_INTS) to the n columns of A: for i = 0 .. k - 1 (incx 1), or k - 1 .. 0 (incx
 *  -1), rows r0 + i and r0 + piv[1 + i] - 1 are swapped. A has m rows counted from row 0 of the
 *  buffer. Devices may apply the permutation part instead, all rows at once. */
typedef struct {
  tessera_dtype_t dtype;
  int m, n;
  int r0, k;
  int incx;
} tsr_laswp_args_t;

/** lu_step: buffers {A (R), B (RW)[, piv (R)[, inv (R)]]}. One block step of an LU solve or of
 *  the update of a column panel by an LU panel, on column panels of m rows: A holds the panel
 *  (its kb x kb diagonal block at row r0, column 0), B is m x n.
 *   - uplo 'L', trans 'N': [rows r0.. of B swapped by piv (laswp, incx 1) when given,] then
 *     B1 = L11⁻¹ B1 (unit lower, B1 = rows r0 .. r0 + kb: a product with getrf's inv when
 *     given, else a triangular solve), then B2 -= L21 B1 (rows below).
 *   - uplo 'U', trans 'N': B1 = U11⁻¹ B1, then B0 -= U01 B1 (rows 0 .. r0).
 *   - uplo 'U', trans 'T' / 'C': B1 -= op(U01) B0, then B1 = op(U11)⁻¹ B1.
 *   - uplo 'L', trans 'T' / 'C': B1 -= op(L21) B2, then B1 = op(L11)⁻¹ B1 (unit).
 *  Device-independent (lu_step.c): runs the device kind's laswp, trsm, trmm and gemm on
 *  sub-blocks. */
typedef struct {
  tessera_dtype_t dtype;
  char uplo, trans;
  int m, n;
  int r0, kb;
  int math; /* tsr_math_t of the product with the panel's off-diagonal part (the solve with its
               diagonal block stays in the dtype's own arithmetic) */
} tsr_lu_step_args_t;

/** gesv: buffers {A (RW), B (RW), info (W)}. As posv (cholesky.h): LU with partial pivoting of
 *  the n x n A in place and its info in the int `info` (getrf's: the first column with a zero
 *  pivot or a NaN), then op(A) X = B onto the n x nrhs B (getrs with `trans`). The pivots live
 *  in the kind's own memory for the call (host memory on CPUs, the end of the scratch's
 *  workspace on GPUs). When info > 0, B is undefined. */
typedef struct {
  tessera_dtype_t dtype;
  char trans;
  int n, nrhs;
} tsr_gesv_args_t;

/** The kernels (lu.c). */
extern const tessera_kernel_t tsr_kernel_getrf;
extern const tessera_kernel_t tsr_kernel_laswp;
extern const tessera_kernel_t tsr_kernel_lu_step;
extern const tessera_kernel_t tsr_kernel_gesv;

/** lu_step (tsr_lu_step_args_t) onto a device kind's `laswp`, `trsm`, `trmm` (tsr_trsm_args_t)
 *  and `gemm` kernels. */
int tsr_lu_step(const tessera_exec_t *ex, const tsr_lu_step_args_t *a, tessera_kernel_fn laswp,
                tessera_kernel_fn trsm, tessera_kernel_fn trmm, tessera_kernel_fn gemm);
/** The solve of gesv (tsr_gesv_args_t) once A holds its LU factors and buffer 3 of ex their
 *  pivots (TSR_PIV_INTS(n) ints, with their permutation): the device kind's `laswp` and two calls
 *  of its `trsm` (solve_whole.c). */
int tsr_getrs_whole(const tessera_exec_t *ex, const tsr_gesv_args_t *a, tessera_kernel_fn laswp,
                    tessera_kernel_fn trsm);

/* CPU implementations (cpu/lu.c). */
int tsr_cpu_getrf(const tessera_exec_t *ex, void *args);
int tsr_cpu_laswp(const tessera_exec_t *ex, void *args);
int tsr_cpu_lu_step(const tessera_exec_t *ex, void *args);
int tsr_cpu_gesv(const tessera_exec_t *ex, void *args);

#ifdef TESSERA_HAVE_CUDA
/* CUDA implementations (cuda/lu.c): enqueue on ex->stream with the handles in ex->scratch
 * (tessera_cuda_scratch_t). */
int tsr_cuda_getrf(const tessera_exec_t *ex, void *args);
int tsr_cuda_laswp(const tessera_exec_t *ex, void *args);
int tsr_cuda_lu_step(const tessera_exec_t *ex, void *args);
int tsr_cuda_gesv(const tessera_exec_t *ex, void *args);
#endif

#endif
