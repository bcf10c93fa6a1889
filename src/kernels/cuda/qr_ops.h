/* Helpers of the CUDA QR kernels (qr.c, qr_tall.c): BLAS calls on blocks of device memory,
 * through the tile kernels of blas3.c on copies of the task's tessera_exec_t, on its stream. */
#ifndef TESSERA_KERNELS_CUDA_QR_OPS_H
#define TESSERA_KERNELS_CUDA_QR_OPS_H

#include "kernels/cuda/cuda_common.h"
#include "kernels/blas3.h"

/* Bytes rounded up to the workspace's alignment. */
static inline size_t tsr_qr_aligned(size_t bytes) {
  return (bytes + 255) / 256 * 256;
}

/* C (ldc) = alpha op(A) op(B) + beta C, C m x n, on the task's stream. */
static inline int tsr_qr_gemm(const tessera_exec_t *ex, tessera_dtype_t dt, char ta, char tb, int m,
                              int n, int k, double alpha, const void *A, size_t lda, const void *B,
                              size_t ldb, double beta, void *C, size_t ldc) {
  tessera_exec_t e = *ex;
  e.ndata = 3;
  e.ptr[0] = (void *)A, e.ld[0] = lda;
  e.ptr[1] = (void *)B, e.ld[1] = ldb;
  e.ptr[2] = C, e.ld[2] = ldc;
  tsr_gemm_args_t g = {.dtype = dt,
                       .transa = ta,
                       .transb = tb,
                       .m = m,
                       .n = n,
                       .k = k,
                       .alpha = {alpha, 0},
                       .beta = {beta, 0}};
  return tsr_cuda_gemm(&e, &g);
}

/* B (ldb, m x n) = alpha T B (side 'L') or alpha B T ('R') with the upper triangular T (ldt),
 * staged in `s`'s workspace. */
static inline int tsr_qr_trmm_upper(const tessera_exec_t *ex, const tessera_cuda_scratch_t *s,
                                    tessera_dtype_t dt, char side, int m, int n, double alpha,
                                    const void *T, size_t ldt, void *B, size_t ldb) {
  tessera_exec_t e = *ex;
  e.scratch = (void *)s;
  e.ndata = 2;
  e.ptr[0] = (void *)T, e.ld[0] = ldt;
  e.ptr[1] = B, e.ld[1] = ldb;
  tsr_trmm_args_t tm = {.dtype = dt,
                        .side = side,
                        .uplo = 'U',
                        .trans = 'N',
                        .diag = 'N',
                        .m = m,
                        .n = n,
                        .alpha = {alpha, 0}};
  return tsr_cuda_trmm(&e, &tm);
}

/* The scratch `s` with its workspace from byte `at` on. */
static inline tessera_cuda_scratch_t tsr_qr_scratch_from(const tessera_cuda_scratch_t *s,
                                                         size_t at) {
  tessera_cuda_scratch_t r = *s;
  r.workspace = (char *)s->workspace + at;
  r.workspace_bytes = s->workspace_bytes - at;
  return r;
}

/* B (ldb, m x n) = alpha op(R)⁻¹ B (side 'L') or alpha B op(R)⁻¹ ('R') with the triangular R
 * (ldr; uplo, trans and diag as BLAS's). */
static inline int tsr_qr_trsm(const tessera_exec_t *ex, tessera_dtype_t dt, char side, char uplo,
                              char trans, char diag, int m, int n, double alpha, const void *R,
                              size_t ldr, void *B, size_t ldb) {
  tessera_exec_t e = *ex;
  e.ndata = 2;
  e.ptr[0] = (void *)R, e.ld[0] = ldr;
  e.ptr[1] = B, e.ld[1] = ldb;
  tsr_trsm_args_t a = {.dtype = dt,
                       .side = side,
                       .uplo = uplo,
                       .trans = trans,
                       .diag = diag,
                       .m = m,
                       .n = n,
                       .alpha = {alpha, 0}};
  return tsr_cuda_trsm(&e, &a);
}

/* Workspace bytes of tsr_cuda_geqrt_tall for n columns, beyond cuSOLVER's potrf's. */
size_t tsr_cuda_geqrt_tall_bytes(tessera_dtype_t dt, int n);

/* Householder QR of the tall rows x n panel a (lda) of a real dtype, T (ldt) of its reflectors,
 * by CholeskyQR2 and Householder reconstruction (qr_tall.c). Returns 0, 1 where it does not
 * take the panel (another dtype, too little workspace, or A too ill-conditioned: A is then as
 * it was), or a negative status. */
int tsr_cuda_geqrt_tall(const tessera_exec_t *ex, const tessera_cuda_scratch_t *s,
                        cusolverDnHandle_t h, tessera_dtype_t dt, char *a, int lda, int rows, int n,
                        char *t, int ldt);

#endif
