/* CUDA tile kernels of the copies and conversions (copy.h): transpose by cuBLAS's geam, lacpy
 * and diagonal as 2D copies, and identity, triangle, hefill (copy.cu), absum and convert
 * (convert.cu) as device kernels of their own. Each checks its arguments like its CPU twin
 * (cpu/copy.c) and returns TESSERA_ERR_KERNEL without enqueuing anything when they are invalid;
 * nothing synchronises or allocates.
 */
#include "kernels/copy.h"
#include "kernels/cuda/cuda_common.h"
#include "kernels/cuda/cuda_kernels.h"

/* B (ldb) = op(A), op(A) m x n: geam with beta 0 and B as its own second operand. */
typedef cublasStatus_t (*geam_t_fn)(cublasHandle_t, cublasOperation_t, int, int, const void *,
                                    const void *, int, const void *, void *, int);
#define GEAM_T(name, T)                                                                            \
  static cublasStatus_t name##_t(cublasHandle_t h, cublasOperation_t op, int m, int n,             \
                                 const void *al, const void *A, int lda, const void *be, void *B,  \
                                 int ldb) {                                                        \
    return cublas##name(h, op, CUBLAS_OP_N, m, n, (const T *)al, (const T *)A, lda, (const T *)be, \
                        (const T *)B, ldb, (T *)B, ldb);                                           \
  }
GEAM_T(Sgeam, float)
GEAM_T(Dgeam, double)
GEAM_T(Cgeam, cuComplex)
GEAM_T(Zgeam, cuDoubleComplex)
static const geam_t_fn geam_t_of[TESSERA_NUM_DTYPES] = {Sgeam_t, Dgeam_t, Cgeam_t, Zgeam_t};

/* The conjugate transpose by cuBLAS's geam (beta 0, B its own second operand). */
int tsr_cuda_transpose(const tessera_exec_t *ex, void *args) {
  const tsr_transpose_args_t *a = args;
  if (!tsr_dtype_valid(a->dtype) || a->src_row < 0 || a->src_col < 0 || a->dst_row < 0 ||
      a->dst_col < 0)
    return TESSERA_ERR_KERNEL;
  const int lda = tsr_operand_ld(ex, 0, a->src_row + a->m, a->src_col + a->n);
  const int ldb = tsr_operand_ld(ex, 1, a->dst_row + a->n, a->dst_col + a->m);
  cublasHandle_t h = tsr_cuda_blas(ex);
  if (lda < 0 || ldb < 0 || !h) return TESSERA_ERR_KERNEL;
  if (a->m == 0 || a->n == 0) return 0;
  const size_t es = tessera_dtype_size(a->dtype);
  const char *A =
      (const char *)ex->ptr[0] + ((size_t)a->src_col * (size_t)lda + (size_t)a->src_row) * es;
  char *B = (char *)ex->ptr[1] + ((size_t)a->dst_col * (size_t)ldb + (size_t)a->dst_row) * es;
  const tsr_cuda_scalar_t one = tsr_cuda_scalar(a->dtype, (tsr_scalar_t){1, 0});
  const tsr_cuda_scalar_t zero = tsr_cuda_scalar(a->dtype, (tsr_scalar_t){0, 0});
  const cublasOperation_t op = tsr_dtype_complex(a->dtype) ? CUBLAS_OP_C : CUBLAS_OP_T;
  return tsr_cuda_blas_status(geam_t_of[a->dtype](h, op, a->n, a->m, &one, A, lda, &zero, B, ldb));
}

int tsr_cuda_identity(const tessera_exec_t *ex, void *args) {
  const tsr_identity_args_t *a = args;
  const int lda = tsr_operand_ld(ex, 0, a->row + a->m, a->n);
  if (!tsr_dtype_valid(a->dtype) || a->row < 0 || lda < 0) return TESSERA_ERR_KERNEL;
  char *p = (char *)ex->ptr[0] + (size_t)a->row * tessera_dtype_size(a->dtype);
  return tsr_cuda_identity_block(a->dtype, p, (size_t)lda, a->m, a->n, a->d, ex->stream)
             ? TESSERA_ERR_KERNEL
             : 0;
}

int tsr_cuda_triangle_copy(const tessera_exec_t *ex, void *args) {
  const tsr_triangle_args_t *a = args;
  const int lds = tsr_operand_ld(ex, 0, a->src_row + a->k, a->k);
  const int ldd = tsr_operand_ld(ex, 1, a->k, a->k);
  if (!tsr_dtype_valid(a->dtype) || a->src_row < 0 || lds < 0 || ldd < 0 ||
      (a->uplo != 'L' && a->uplo != 'U'))
    return TESSERA_ERR_KERNEL;
  const char *src = (const char *)ex->ptr[0] + (size_t)a->src_row * tessera_dtype_size(a->dtype);
  return tsr_cuda_triangle(a->dtype, src, (size_t)lds, a->k, a->uplo, ex->ptr[1], (size_t)ldd,
                           ex->stream)
             ? TESSERA_ERR_KERNEL
             : 0;
}

int tsr_cuda_hefill(const tessera_exec_t *ex, void *args) {
  const tsr_hefill_args_t *a = args;
  const int lda = tsr_operand_ld(ex, 0, a->n, a->n);
  if (!tsr_dtype_valid(a->dtype) || lda < 0) return TESSERA_ERR_KERNEL;
  return tsr_cuda_hermitian_fill(a->dtype, ex->ptr[0], (size_t)lda, a->n, ex->stream)
             ? TESSERA_ERR_KERNEL
             : 0;
}

/* The diagonal as a 2D copy of n rows of one element, (ld + 1) elements apart. */
int tsr_cuda_diagonal(const tessera_exec_t *ex, void *args) {
  const tsr_diagonal_args_t *a = args;
  const int lda = tsr_operand_ld(ex, 0, a->row + a->n, a->n), ldd = tsr_operand_ld(ex, 1, a->n, 1);
  if (!tsr_dtype_valid(a->dtype) || a->row < 0 || lda < 0 || ldd < 0) return TESSERA_ERR_KERNEL;
  if (a->n == 0) return 0;
  const size_t es = tessera_dtype_size(a->dtype);
  const char *top = (const char *)ex->ptr[0] + (size_t)a->row * es;
  return tsr_cuda_enqueued(cudaMemcpy2DAsync(ex->ptr[1], es, top, ((size_t)lda + 1) * es, es,
                                             (size_t)a->n, cudaMemcpyDefault,
                                             (cudaStream_t)ex->stream));
}

int tsr_cuda_absum(const tessera_exec_t *ex, void *args) {
  const tsr_absum_args_t *a = args;
  const int lda = tsr_operand_ld(ex, 0, a->m, a->n), ldr = tsr_operand_ld(ex, 1, a->m, 1);
  const int ldc = a->part ? 0 : tsr_operand_ld(ex, 2, a->n, 1);
  if (!tsr_dtype_valid(a->dtype) || lda < 0 || ldr < 0 || ldc < 0 ||
      (a->part && a->part != 'G' && !tsr_absum_hermitian(a->part)) ||
      (tsr_absum_hermitian(a->part) && a->m != a->n))
    return TESSERA_ERR_KERNEL;
  return tsr_cuda_absum_block(tsr_dtype_single(a->dtype), tsr_dtype_complex(a->dtype), ex->ptr[0],
                              (size_t)lda, a->m, a->n, a->part, ex->ptr[1],
                              a->part ? NULL : ex->ptr[2], ex->stream)
             ? TESSERA_ERR_KERNEL
             : 0;
}

int tsr_cuda_convert(const tessera_exec_t *ex, void *args) {
  const tsr_convert_args_t *a = args;
  if (!tsr_convert_pair(a->from, a->to) || a->dst_row < 0 || a->dst_col < 0)
    return TESSERA_ERR_KERNEL;
  const int lds = tsr_operand_ld(ex, 0, a->m, a->n);
  const int ldd = tsr_operand_ld(ex, 1, a->dst_row + a->m, a->dst_col + a->n);
  if (lds < 0 || ldd < 0) return TESSERA_ERR_KERNEL;
  char *dst = (char *)ex->ptr[1] +
              ((size_t)a->dst_row + (size_t)a->dst_col * (size_t)ldd) * tessera_dtype_size(a->to);
  return tsr_cuda_convert_block(tsr_dtype_single(a->from), tsr_dtype_single(a->to),
                                tsr_dtype_complex(a->from) ? 2 : 1, ex->ptr[0], (size_t)lds, dst,
                                (size_t)ldd, a->m, a->n, a->scale, ex->stream)
             ? TESSERA_ERR_KERNEL
             : 0;
}

int tsr_cuda_lacpy(const tessera_exec_t *ex, void *args) {
  const tsr_lacpy_args_t *a = args;
  if (!tsr_dtype_valid(a->dtype) || a->src_row < 0 || a->dst_row < 0 || a->src_col < 0 ||
      a->dst_col < 0)
    return TESSERA_ERR_KERNEL;
  const int lds = tsr_operand_ld(ex, 0, a->src_row + a->m, a->src_col + a->n);
  const int ldd = tsr_operand_ld(ex, 1, a->dst_row + a->m, a->dst_col + a->n);
  if (lds < 0 || ldd < 0) return TESSERA_ERR_KERNEL;
  const size_t es = tessera_dtype_size(a->dtype);
  const char *src =
      (const char *)ex->ptr[0] + ((size_t)a->src_col * (size_t)lds + (size_t)a->src_row) * es;
  char *dst = (char *)ex->ptr[1] + ((size_t)a->dst_col * (size_t)ldd + (size_t)a->dst_row) * es;
  if (a->m == 0 || a->n == 0 || (src == dst && lds == ldd)) return 0;
  return tsr_cuda_copy_2d(ex, dst, ldd, src, lds, a->m, a->n, es);
}
