/* The QR family of tile kernels on column panels: geqrt, larft and qr_step (the application of
 * a block reflector, device-independent: qr_step.c). Their tables, operation counts and size
 * keys: qr.c; their implementations: cpu/qr.c (LAPACKE), cuda/qr.c (recursive geqrt, larft and
 * qr_step on cuBLAS), cuda/qr_tall.c (CholeskyQR2 of a tall panel) and cuda/qr.cu with
 * cuda/householder.cu (their device kernels). Buffers and arguments as blas3.h describes.
 */
#ifndef TSR_KERNELS_QR_H
#define TSR_KERNELS_QR_H

#include "kernels/dtype.h"
#include "tessera/task.h"

/** geqrt: buffers {A (RW), T (W)}. Householder QR of the block of the column panel A (m rows
 *  counted from row 0 of the buffer, n columns) from row r0, as LAPACK's geqrt: the block
 *  becomes R on and above its diagonal and the vectors V below it (their unit diagonal not
 *  stored), with Q = H_1 ... H_k = I - V T Vᴴ, k = min(m - r0, n), T upper triangular k x k
 *  (its diagonal: LAPACK's tau). */
typedef struct {
  tessera_dtype_t dtype;
  int m, n;
  int r0;
  int sole; /* the matrix's only column panel (no update waits on it): GPUs may factor a tall
               one by CholeskyQR2 */
} tsr_geqrt_args_t;

/** larft: buffers {V (R), tau (R), T (W)}. The T of the block reflector Q = I - V T Vᴴ =
 *  H_1 ... H_kb whose vectors are the kb columns of the column panel V (m rows counted from row
 *  0 of the buffer) below row r0 (unit diagonal implied), and tau their kb scalars: LAPACK's
 *  larft (forward, columnwise), the T a geqrt of the panel would have made. */
typedef struct {
  tessera_dtype_t dtype;
  int m, r0, kb;
} tsr_larft_args_t;

/** qr_step: buffers {V (R), C (RW), T (R), W (RW)}. Applies the block reflector of a geqrt (the
 *  column panel V, m rows, kb vectors from row r0, and its T) to the n columns of the column
 *  panel C (c0 + m rows, V's row i meeting C's row c0 + i): C = Qᴴ C (trans 'C'; 'T' on real
 *  dtypes) or C = Q C ('N'), Q = I - V T Vᴴ on V's rows r0 .. m - 1. W is a kb x n workspace.
 * Device-independent (qr_step.c): the kind's lacpy, trmm, gemm and geadd on sub-blocks. */
typedef struct {
  tessera_dtype_t dtype;
  char trans;
  int m, n;
  int r0, kb;
  int c0;
} tsr_qr_step_args_t;

/** The kernels (qr.c). */
extern const tessera_kernel_t tsr_kernel_geqrt;
extern const tessera_kernel_t tsr_kernel_larft;
extern const tessera_kernel_t tsr_kernel_qr_step;

/** Whether qr_step's arguments and operands are valid: -1 when not, 0 when there is nothing to
 *  do (no vectors or no columns), 1 otherwise. */
int tsr_qr_step_valid(const tessera_exec_t *ex, const tsr_qr_step_args_t *a);
/** qr_step (tsr_qr_step_args_t) onto a device kind's `lacpy`, `trmm`, `gemm` and `geadd`. */
int tsr_qr_step(const tessera_exec_t *ex, const tsr_qr_step_args_t *a, tessera_kernel_fn lacpy,
                tessera_kernel_fn trmm, tessera_kernel_fn gemm, tessera_kernel_fn geadd);

/* CPU implementations (cpu/qr.c). */
int tsr_cpu_geqrt(const tessera_exec_t *ex, void *args);
int tsr_cpu_larft(const tessera_exec_t *ex, void *args);
int tsr_cpu_qr_step(const tessera_exec_t *ex, void *args);

#ifdef TESSERA_HAVE_CUDA
/* CUDA implementations (cuda/qr.c): enqueue on ex->stream with the handles in ex->scratch
 * (tessera_cuda_scratch_t). */
int tsr_cuda_geqrt(const tessera_exec_t *ex, void *args);
int tsr_cuda_larft(const tessera_exec_t *ex, void *args);
int tsr_cuda_qr_step(const tessera_exec_t *ex, void *args);
#endif

#endif
