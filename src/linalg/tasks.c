/* One inserter per tile kernel: fills the kernel's arguments and access modes. */
#include "linalg/linalg.h"

static int insert(tessera_context_t *ctx, const tessera_kernel_t *k, const void *args, size_t size,
                  int ndata, tessera_data_t *const *data, const tessera_access_t *mode,
                  const int tag[3], int prio) {
  tessera_task_t t = {
      .kernel = k, .args = args, .args_size = size, .ndata = ndata, .priority = prio, .ntag = 3};
  for (int i = 0; i < ndata; i++) {
    t.data[i] = data[i];
    t.mode[i] = mode[i];
  }
  for (int i = 0; i < 3; i++) t.tag[i] = tag[i];
  return tessera_task_insert(ctx, &t);
}

int tsr_task_potrf(const tessera_matrix_t *A, char uplo, int64_t k, int prio) {
  tsr_potrf_args_t a = {
      .dtype = A->dtype, .uplo = uplo, .n = tsr_tile_m(A, k), .offset = k * A->mb};
  tessera_data_t *d[1] = {tsr_tile(A, k, k)};
  tessera_access_t m[1] = {TESSERA_RW};
  int tag[3] = {(int)k, (int)k, (int)k};
  return insert(A->ctx, &tsr_kernel_potrf, &a, sizeof a, 1, d, m, tag, prio);
}

/* trsm and trmm: the same arguments, buffers {A (R), B (RW)}. */
static int triangular(const tessera_kernel_t *kernel, const tessera_matrix_t *A, char side,
                      char uplo, char trans, char diag, tsr_scalar_t alpha, tessera_data_t *a,
                      tessera_data_t *b, int m, int n, const int tag[3], int prio) {
  tsr_trsm_args_t args = {.dtype = A->dtype,
                          .side = side,
                          .uplo = uplo,
                          .trans = trans,
                          .diag = diag,
                          .m = m,
                          .n = n,
                          .alpha = alpha};
  tessera_data_t *d[2] = {a, b};
  tessera_access_t md[2] = {TESSERA_R, TESSERA_RW};
  return insert(A->ctx, kernel, &args, sizeof args, 2, d, md, tag, prio);
}

int tsr_task_trsm(const tessera_matrix_t *A, char side, char uplo, char trans, char diag,
                  tsr_scalar_t alpha, tessera_data_t *a, tessera_data_t *b, int m, int n,
                  const int tag[3], int prio) {
  return triangular(&tsr_kernel_trsm, A, side, uplo, trans, diag, alpha, a, b, m, n, tag, prio);
}

int tsr_task_syrk(const tessera_matrix_t *C, int herk, char uplo, char trans, int n, int k,
                  tsr_scalar_t alpha, tessera_data_t *a, tsr_scalar_t beta, tessera_data_t *c,
                  const int tag[3], int prio) {
  tsr_syrk_args_t args = {.dtype = C->dtype,
                          .uplo = uplo,
                          .trans = trans,
                          .herk = herk,
                          .n = n,
                          .k = k,
                          .alpha = alpha,
                          .beta = beta};
  tessera_data_t *d[2] = {a, c};
  tessera_access_t md[2] = {TESSERA_R, TESSERA_RW};
  return insert(C->ctx, &tsr_kernel_syrk, &args, sizeof args, 2, d, md, tag, prio);
}

int tsr_task_gemm(const tessera_matrix_t *C, tsr_operand_t a, tsr_operand_t b, int m, int n, int k,
                  tsr_scalar_t alpha, tsr_scalar_t beta, tessera_data_t *c, const int tag[3],
                  int prio) {
  tsr_gemm_args_t args = {.dtype = C->dtype,
                          .transa = a.op,
                          .transb = b.op,
                          .m = m,
                          .n = n,
                          .k = k,
                          .alpha = alpha,
                          .beta = beta};
  tessera_data_t *d[3] = {a.h, b.h, c};
  tessera_access_t md[3] = {TESSERA_R, TESSERA_R, TESSERA_RW};
  return insert(C->ctx, &tsr_kernel_gemm, &args, sizeof args, 3, d, md, tag, prio);
}

int tsr_task_lacpy(tessera_dtype_t dtype, tessera_context_t *ctx, tessera_data_t *src,
                   tessera_data_t *dst, int m, int n, const int tag[3], int prio) {
  tsr_lacpy_args_t args = {.dtype = dtype, .m = m, .n = n};
  tessera_data_t *d[2] = {src, dst};
  tessera_access_t md[2] = {TESSERA_R, TESSERA_W};
  return insert(ctx, &tsr_kernel_lacpy, &args, sizeof args, 2, d, md, tag, prio);
}

int tsr_task_trtri_on(const tessera_matrix_t *A, tessera_data_t *h, char uplo, char diag, int n,
                      int64_t offset, const int tag[3], int prio) {
  tsr_trtri_args_t a = {.dtype = A->dtype, .uplo = uplo, .diag = diag, .n = n, .offset = offset};
  tessera_data_t *d[1] = {h};
  tessera_access_t m[1] = {TESSERA_RW};
  return insert(A->ctx, &tsr_kernel_trtri, &a, sizeof a, 1, d, m, tag, prio);
}

int tsr_task_trtri(const tessera_matrix_t *A, char uplo, char diag, int64_t k, int prio) {
  int tag[3] = {(int)k, (int)k, (int)k};
  return tsr_task_trtri_on(A, tsr_tile(A, k, k), uplo, diag, tsr_tile_m(A, k), k * A->mb, tag,
                           prio);
}

int tsr_task_lauum(const tessera_matrix_t *A, char uplo, int64_t k, int prio) {
  tsr_lauum_args_t a = {.dtype = A->dtype, .uplo = uplo, .n = tsr_tile_m(A, k)};
  tessera_data_t *d[1] = {tsr_tile(A, k, k)};
  tessera_access_t m[1] = {TESSERA_RW};
  int tag[3] = {(int)k, (int)k, (int)k};
  return insert(A->ctx, &tsr_kernel_lauum, &a, sizeof a, 1, d, m, tag, prio);
}

int tsr_task_trmm(const tessera_matrix_t *A, char side, char uplo, char trans, char diag,
                  tsr_scalar_t alpha, tessera_data_t *a, tessera_data_t *b, int m, int n,
                  const int tag[3], int prio) {
  return triangular(&tsr_kernel_trmm, A, side, uplo, trans, diag, alpha, a, b, m, n, tag, prio);
}
