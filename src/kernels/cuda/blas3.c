/* CUDA tile kernels of the BLAS-3 family (blas3.h) through cuBLAS: gemm, hemm, syrk / herk,
 * trsm, trmm, hemm_pair (hemm_pair.c onto gemm, or hemv_pair.cu for one column) and geadd.
 *
 * Each kernel checks its arguments like its CPU twin (cpu/blas3.c) and returns
 * TESSERA_ERR_KERNEL without enqueuing anything when they are invalid; then it binds the
 * worker's cuBLAS handle to ex->stream and enqueues. Nothing synchronises or allocates. gemm is
 * one type-generic cublasGemmEx call in the dtype's own precision, or for single-precision dtypes
 * in the task's arithmetic (tsr_math_t: TF32, BF16, FP16 inputs on tensor cores); the others call
 * the routine of the dtype from the operation's table (one entry per dtype, indexed by it, all of
 * one signature: scalars and operands as untyped pointers). Products of f32 in BF16 / FP16 or
 * split arithmetic (gemm, and syrk as a gemm) round their operands into the worker's workspace
 * first (low_product).
 */
#include <stdbool.h>

#include "kernels/blas3.h"
#include "kernels/cuda/cuda_common.h"
#include "kernels/cuda/cuda_kernels.h"

/* cuBLAS's compute type of a product of a single-precision dtype in arithmetic `math`
 * (kernels.h's tsr_math_t); double-precision dtypes compute in their own. */
static cublasComputeType_t compute_type(tessera_dtype_t dt, int math) {
  static const cublasComputeType_t fast[4] = {CUBLAS_COMPUTE_32F, CUBLAS_COMPUTE_32F_FAST_TF32,
                                              CUBLAS_COMPUTE_32F_FAST_16BF,
                                              CUBLAS_COMPUTE_32F_FAST_16F};
  if (!tsr_dtype_single(dt)) return CUBLAS_COMPUTE_64F;
  return math > 0 && math < 4 ? fast[math] : CUBLAS_COMPUTE_32F;
}

/* Whether a product of `dtype` in arithmetic `math` rounds its operands itself: f32 with BF16 or
 * FP16 inputs, or split TF32 ones (complex products keep cuBLAS's fast compute types, and TF32X3
 * f32's own where the operands are not split). */
static bool rounds_operands(tessera_dtype_t dtype, int math) {
  return dtype == TESSERA_F32 && math >= TSR_MATH_BF16 && math <= TSR_MATH_TF32X3;
}

/* Whether [p, p + bytes) and the worker's workspace overlap. */
static bool in_workspace(const tessera_cuda_scratch_t *x, const void *p, size_t bytes) {
  const char *w = x->workspace, *c = p;
  return c < w + x->workspace_bytes && w < c + bytes;
}

/* An operand of a product: op(X) is rows x k, X stored at p (ld) as rows x k (t == 0) or
 * k x rows; `second`: the product's right operand. */
typedef struct {
  const float *p;
  int ld, t, rows, second;
} operand_t;

/* Rounds columns k0 .. k0 + kc - 1 of op(X) into dst, stored as X is (its leading dimension
 * rows, or the chunk's k): to 16 bits, or (`split`) into three TF32 blocks along k, hi lo hi for
 * a left operand and hi hi lo for a right one, so that one product over 3 kc is
 * hi·hi + lo·hi + hi·lo. The leading dimension returned, or -1 for a failed launch. */
static int round_chunk(const tessera_exec_t *ex, int f16, bool split, operand_t x, int k0, int kc,
                       void *dst) {
  const bool cols = x.t == 0;
  const float *src = x.p + (cols ? (size_t)k0 * (size_t)x.ld : (size_t)k0);
  const int rows = cols ? x.rows : kc, n = cols ? kc : x.rows;
  if (!split)
    return tsr_cuda_round_block(f16, src, (size_t)x.ld, dst, (size_t)rows, rows, n, ex->stream)
               ? -1
               : rows;
  const size_t ld = cols ? (size_t)rows : 3 * (size_t)kc;
  const size_t step = cols ? (size_t)rows * (size_t)kc : (size_t)kc; /* block to block */
  float *b0 = dst, *b1 = b0 + step, *b2 = b1 + step;
  return tsr_cuda_split_block(src, (size_t)x.ld, b0, x.second ? b2 : b1, x.second ? b1 : b2, ld,
                              rows, n, ex->stream)
             ? -1
             : (int)ld;
}

/* C (m x n, ldc, f32) = alpha op(A) op(B) + beta C with A and B rounded to BF16 or FP16 (math)
 * and the products accumulated in f32: tensor cores at the rate of 16-bit operands, which
 * cuBLAS's fast compute types on f32 operands do not reach; or with A and B split (TF32X3),
 * each chunk's three products one cuBLAS call over thrice its k. The operands go to the
 * worker's workspace in chunks of k that fit there (B the same as A: rounded once, for 16-bit
 * inputs). Returns 1 when the workspace cannot take a chunk of 256 or overlaps an operand, else
 * 0 or TESSERA_ERR_KERNEL. */
static int low_product(const tessera_exec_t *ex, cublasHandle_t h, int math, operand_t a,
                       operand_t b, bool same, int k, float alpha, float beta, float *C, int ldc) {
  const tessera_cuda_scratch_t *x = tsr_cuda_scratch(ex);
  const bool split = math == TSR_MATH_TF32X3;
  if (split) same = false; /* a left and a right operand stack their blocks differently */
  const size_t es = split ? 4 : 2, copies = split ? 3 : 1;
  const size_t per = (size_t)(a.rows + (same ? 0 : b.rows)) * es * copies; /* bytes of one k */
  const int kmin = k < 256 ? k : 256;
  if (!x || !x->workspace || per * (size_t)kmin > x->workspace_bytes) return 1;
  const size_t cspan = (size_t)ldc * (size_t)(b.rows - 1) + (size_t)a.rows;
  if (in_workspace(x, C, cspan * sizeof(float))) return 1;
  const int f16 = math == TSR_MATH_F16;
  const cudaDataType low = split ? CUDA_R_32F : f16 ? CUDA_R_16F : CUDA_R_16BF;
  const cublasComputeType_t ct = split ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  size_t fit = x->workspace_bytes / per;
  if (fit >= 256) fit = fit / 256 * 256;
  const int kc = fit < (size_t)k ? (int)fit : k;
  a.second = 0, b.second = 1;
  char *wa = x->workspace, *wb = wa + (size_t)a.rows * (size_t)kc * es * copies;
  for (int k0 = 0; k0 < k; k0 += kc) {
    const int kn = k - k0 < kc ? k - k0 : kc;
    const int la = round_chunk(ex, f16, split, a, k0, kn, wa);
    const int lb = same ? la : round_chunk(ex, f16, split, b, k0, kn, wb);
    if (la < 0 || lb < 0) return TESSERA_ERR_KERNEL;
    const float be = k0 == 0 ? beta : 1.0f;
    const cublasStatus_t st = cublasGemmEx(
        h, tsr_cuda_op(a.t), tsr_cuda_op(b.t ? 0 : 1), a.rows, b.rows, kn * (int)copies, &alpha, wa,
        low, la, same ? wa : wb, low, lb, &be, C, CUDA_R_32F, ldc, ct, CUBLAS_GEMM_DEFAULT);
    if (st != CUBLAS_STATUS_SUCCESS) return TESSERA_ERR_KERNEL;
  }
  return 0;
}

int tsr_cuda_gemm(const tessera_exec_t *ex, void *args) {
  const tsr_gemm_args_t *a = args;
  const int ta = tsr_op_index(a->transa, a->dtype), tb = tsr_op_index(a->transb, a->dtype);
  if (!tsr_dtype_valid(a->dtype) || ta < 0 || tb < 0) return TESSERA_ERR_KERNEL;
  const int lda = tsr_operand_ld(ex, 0, ta ? a->k : a->m, ta ? a->m : a->k);
  const int ldb = tsr_operand_ld(ex, 1, tb ? a->n : a->k, tb ? a->k : a->n);
  const int ldc = tsr_operand_ld(ex, 2, a->m, a->n);
  cublasHandle_t h = tsr_cuda_blas(ex);
  if (lda < 0 || ldb < 0 || ldc < 0 || !h) return TESSERA_ERR_KERNEL;
  if (a->m == 0 || a->n == 0) return 0;
  if (rounds_operands(a->dtype, a->math) && a->k > 0) {
    const operand_t A = {ex->ptr[0], lda, ta != 0, a->m, 0},
                    B = {ex->ptr[1], ldb, tb == 0, a->n, 1};
    const int rc = low_product(ex, h, a->math, A, B, false, a->k, (float)a->alpha.re,
                               (float)a->beta.re, ex->ptr[2], ldc);
    if (rc <= 0) return rc;
  }
  const cudaDataType type = tsr_cuda_type(a->dtype);
  const tsr_cuda_scalar_t al = tsr_cuda_scalar(a->dtype, a->alpha);
  const tsr_cuda_scalar_t be = tsr_cuda_scalar(a->dtype, a->beta);
  return tsr_cuda_blas_status(cublasGemmEx(
      h, tsr_cuda_op(ta), tsr_cuda_op(tb), a->m, a->n, a->k, &al, ex->ptr[0], type, lda, ex->ptr[1],
      type, ldb, &be, ex->ptr[2], type, ldc, compute_type(a->dtype, a->math), CUBLAS_GEMM_DEFAULT));
}

typedef cublasStatus_t (*rank_k_fn)(cublasHandle_t, cublasFillMode_t, cublasOperation_t, int, int,
                                    const void *, const void *, int, const void *, void *, int);
#define RANK_K(name)                                                                               \
  static cublasStatus_t name(cublasHandle_t h, cublasFillMode_t uplo, cublasOperation_t op, int n, \
                             int k, const void *al, const void *A, int lda, const void *be,        \
                             void *C, int ldc) {                                                   \
    return cublas##name(h, uplo, op, n, k, al, A, lda, be, C, ldc);                                \
  }
RANK_K(Ssyrk)
RANK_K(Dsyrk)
RANK_K(Csyrk)
RANK_K(Zsyrk)
RANK_K(Cherk)
RANK_K(Zherk)
/* Indexed by the dtype; a Hermitian update of a real dtype is its symmetric one. */
static const rank_k_fn syrk_of[TESSERA_NUM_DTYPES] = {Ssyrk, Dsyrk, Csyrk, Zsyrk};
static const rank_k_fn herk_of[TESSERA_NUM_DTYPES] = {Ssyrk, Dsyrk, Cherk, Zherk};

int tsr_cuda_syrk(const tessera_exec_t *ex, void *args) {
  const tsr_syrk_args_t *a = args;
  const int u = tsr_letter(a->uplo, "UL"), t = tsr_letter(a->trans, "NTC");
  /* The trans letter gives the shape of A; the conjugation comes from `herk`. */
  const int herk = a->herk && tsr_dtype_complex(a->dtype);
  if (!tsr_dtype_valid(a->dtype) || u < 0 || t < 0) return TESSERA_ERR_KERNEL;
  const int lda = tsr_operand_ld(ex, 0, t ? a->k : a->n, t ? a->n : a->k);
  const int ldc = tsr_operand_ld(ex, 1, a->n, a->n);
  cublasHandle_t h = tsr_cuda_blas(ex);
  if (lda < 0 || ldc < 0 || !h) return TESSERA_ERR_KERNEL;
  if (a->n == 0) return 0;
  const cublasOperation_t op = t == 0 ? CUBLAS_OP_N : herk ? CUBLAS_OP_C : CUBLAS_OP_T;
  const tsr_cuda_scalar_t al = tsr_cuda_scalar(a->dtype, a->alpha);
  const tsr_cuda_scalar_t be = tsr_cuda_scalar(a->dtype, a->beta);
  if (rounds_operands(a->dtype, a->math) && a->k > 0) { /* op(A) and op(A)ᴴ: one rounding */
    const operand_t A = {ex->ptr[0], lda, t != 0, a->n, 0};
    const int rc = low_product(ex, h, a->math, A, A, true, a->k, (float)a->alpha.re,
                               (float)a->beta.re, ex->ptr[1], ldc);
    if (rc <= 0) return rc;
  }
  if (a->math && tsr_dtype_single(a->dtype)) { /* tensor cores: a gemm over the whole tile */
    const cublasOperation_t other = t == 0 ? (herk ? CUBLAS_OP_C : CUBLAS_OP_T) : CUBLAS_OP_N;
    const tsr_scalar_t ar = {a->alpha.re, herk ? 0 : a->alpha.im};
    const tsr_scalar_t br = {a->beta.re, herk ? 0 : a->beta.im};
    const tsr_cuda_scalar_t ga = tsr_cuda_scalar(a->dtype, ar), gb = tsr_cuda_scalar(a->dtype, br);
    const cudaDataType type = tsr_cuda_type(a->dtype);
    return tsr_cuda_blas_status(cublasGemmEx(h, op, other, a->n, a->n, a->k, &ga, ex->ptr[0], type,
                                             lda, ex->ptr[0], type, lda, &gb, ex->ptr[1], type, ldc,
                                             compute_type(a->dtype, a->math), CUBLAS_GEMM_DEFAULT));
  }
  return tsr_cuda_blas_status((a->herk ? herk_of : syrk_of)[a->dtype](
      h, tsr_cuda_fill(u), op, a->n, a->k, &al, ex->ptr[0], lda, &be, ex->ptr[1], ldc));
}

typedef cublasStatus_t (*trsv_fn)(cublasHandle_t, cublasFillMode_t, cublasOperation_t,
                                  cublasDiagType_t, int, const void *, int, void *, int);
#define TRSV(name)                                                                                 \
  static cublasStatus_t name(cublasHandle_t h, cublasFillMode_t uplo, cublasOperation_t op,        \
                             cublasDiagType_t diag, int n, const void *A, int lda, void *x,        \
                             int inc) {                                                            \
    return cublas##name(h, uplo, op, diag, n, A, lda, x, inc);                                     \
  }
TRSV(Strsv)
TRSV(Dtrsv)
TRSV(Ctrsv)
TRSV(Ztrsv)
static const trsv_fn trsv_of[TESSERA_NUM_DTYPES] = {Strsv, Dtrsv, Ctrsv, Ztrsv};

/* A solve with at most TSR_TRSM_NARROW right-hand sides (columns of B on the left, rows on the
 * right) and alpha = 1, as trsv calls: cuBLAS's trsm enqueues a blocked sequence whose host time
 * grows with the tile whatever the width of B, trsv is one call per right-hand side. X op(A) = B is
 * op(A)ᵀ Xᵀ = Bᵀ, the transposed operation on the rows of B. Returns 1 when it does not apply
 * (conj(A), a complex Aᴴ on the right, has no trsv; other alphas), else 0 or TESSERA_ERR_KERNEL. */
static int narrow_solve(cublasHandle_t h, const tsr_trsm_args_t *a, int s, int u, int t, int d,
                        const void *A, int lda, void *B, int ldb) {
  const int na = s ? a->n : a->m, rhs = s ? a->m : a->n;
  if (rhs > TSR_TRSM_NARROW || a->alpha.re != 1 || a->alpha.im != 0 || (s && t == 2)) return 1;
  const cublasOperation_t op = tsr_cuda_op(s ? (t == 0 ? 1 : 0) : t);
  const cublasFillMode_t uplo = tsr_cuda_fill(u);
  const cublasDiagType_t diag = tsr_cuda_diag(d);
  const size_t es = tessera_dtype_size(a->dtype);
  const int inc = s ? ldb : 1;
  cublasStatus_t st = CUBLAS_STATUS_SUCCESS;
  for (int k = 0; k < rhs && st == CUBLAS_STATUS_SUCCESS; k++) {
    void *x = (char *)B + (size_t)k * (s ? 1 : (size_t)ldb) * es;
    st = trsv_of[a->dtype](h, uplo, op, diag, na, A, lda, x, inc);
  }
  return tsr_cuda_blas_status(st);
}

typedef cublasStatus_t (*trsm_fn)(cublasHandle_t, cublasSideMode_t, cublasFillMode_t,
                                  cublasOperation_t, cublasDiagType_t, int, int, const void *,
                                  const void *, int, void *, int);
#define TRSM(name)                                                                                 \
  static cublasStatus_t name(cublasHandle_t h, cublasSideMode_t side, cublasFillMode_t uplo,       \
                             cublasOperation_t op, cublasDiagType_t diag, int m, int n,            \
                             const void *al, const void *A, int lda, void *B, int ldb) {           \
    return cublas##name(h, side, uplo, op, diag, m, n, al, A, lda, B, ldb);                        \
  }
TRSM(Strsm)
TRSM(Dtrsm)
TRSM(Ctrsm)
TRSM(Ztrsm)
static const trsm_fn trsm_of[TESSERA_NUM_DTYPES] = {Strsm, Dtrsm, Ctrsm, Ztrsm};

/* cuBLAS's trmm is out of place: C = alpha op(A) B, or B op(A). */
typedef cublasStatus_t (*trmm_fn)(cublasHandle_t, cublasSideMode_t, cublasFillMode_t,
                                  cublasOperation_t, cublasDiagType_t, int, int, const void *,
                                  const void *, int, const void *, int, void *, int);
#define TRMM(name)                                                                                 \
  static cublasStatus_t name(cublasHandle_t h, cublasSideMode_t side, cublasFillMode_t uplo,       \
                             cublasOperation_t op, cublasDiagType_t diag, int m, int n,            \
                             const void *al, const void *A, int lda, const void *B, int ldb,       \
                             void *C, int ldc) {                                                   \
    return cublas##name(h, side, uplo, op, diag, m, n, al, A, lda, B, ldb, C, ldc);                \
  }
TRMM(Strmm)
TRMM(Dtrmm)
TRMM(Ctrmm)
TRMM(Ztrmm)
static const trmm_fn trmm_of[TESSERA_NUM_DTYPES] = {Strmm, Dtrmm, Ctrmm, Ztrmm};

/* trsm (solve != 0) and trmm (solve == 0): the same arguments and operands. cuBLAS's trmm is
 * out of place: the product goes to the worker's workspace when B fits there, then back into B
 * with a device copy (the in-place form, B as the output too, runs at a fraction of the speed),
 * else in place. */
static int triangular(const tessera_exec_t *ex, const tsr_trsm_args_t *a, int solve) {
  const int s = tsr_letter(a->side, "LR"), u = tsr_letter(a->uplo, "UL");
  const int d = tsr_letter(a->diag, "NU"), t = tsr_op_index(a->trans, a->dtype);
  if (!tsr_dtype_valid(a->dtype) || s < 0 || u < 0 || t < 0 || d < 0) return TESSERA_ERR_KERNEL;
  const int na = s == 1 ? a->n : a->m;
  const int lda = tsr_operand_ld(ex, 0, na, na), ldb = tsr_operand_ld(ex, 1, a->m, a->n);
  cublasHandle_t h = tsr_cuda_blas(ex);
  if (lda < 0 || ldb < 0 || !h) return TESSERA_ERR_KERNEL;
  if (a->m == 0 || a->n == 0) return 0;
  const cublasSideMode_t side = tsr_cuda_side(s);
  const cublasFillMode_t uplo = tsr_cuda_fill(u);
  const cublasOperation_t op = tsr_cuda_op(t);
  const cublasDiagType_t diag = tsr_cuda_diag(d);
  const int m = a->m, n = a->n;
  if (solve) {
    int narrow = narrow_solve(h, a, s, u, t, d, ex->ptr[0], lda, ex->ptr[1], ldb);
    if (narrow <= 0) return narrow;
  }
  const tsr_cuda_scalar_t al = tsr_cuda_scalar(a->dtype, a->alpha);
  const void *alpha = &al, *A = ex->ptr[0];
  void *B = ex->ptr[1];
  const size_t es = tessera_dtype_size(a->dtype), bytes = (size_t)m * (size_t)n * es;
  const tessera_cuda_scratch_t *x = tsr_cuda_scratch(ex);
  const bool staged = !solve && x && x->workspace && bytes <= x->workspace_bytes;
  void *C = staged ? x->workspace : B;
  const int ldc = staged ? m : ldb;
  const cublasStatus_t st =
      solve ? trsm_of[a->dtype](h, side, uplo, op, diag, m, n, alpha, A, lda, B, ldb)
            : trmm_of[a->dtype](h, side, uplo, op, diag, m, n, alpha, A, lda, B, ldb, C, ldc);
  if (st != CUBLAS_STATUS_SUCCESS || !staged) return tsr_cuda_blas_status(st);
  return tsr_cuda_copy_2d(ex, B, ldb, C, ldc, m, n, es);
}

int tsr_cuda_trsm(const tessera_exec_t *ex, void *args) {
  return triangular(ex, args, 1);
}

int tsr_cuda_trmm(const tessera_exec_t *ex, void *args) {
  const tsr_trmm_args_t *m = args;
  const tsr_trsm_args_t a = *m;
  return triangular(ex, &a, 0);
}

/* trmm (side 'L') reading A whole, as a dense matrix whose zeros and diagonal are written out
 * (getrf's L11⁻¹): gemms into the worker's workspace over blocks of B's columns that fit there,
 * each copied back into B: cuBLAS's trmm runs at a small fraction of its gemm rate. */
int tsr_cuda_trmm_dense(const tessera_exec_t *ex, void *args) {
  const tsr_trsm_args_t *a = args;
  const int t = tsr_op_index(a->trans, a->dtype);
  const int lda = tsr_operand_ld(ex, 0, a->m, a->m), ldb = tsr_operand_ld(ex, 1, a->m, a->n);
  const tessera_cuda_scratch_t *x = tsr_cuda_scratch(ex);
  if (!tsr_dtype_valid(a->dtype) || tsr_letter(a->side, "L") < 0 || t < 0 || lda < 0 || ldb < 0)
    return TESSERA_ERR_KERNEL;
  if (a->m == 0 || a->n == 0) return 0;
  const size_t es = tessera_dtype_size(a->dtype), col = (size_t)a->m * es;
  const size_t fit = x && x->workspace ? x->workspace_bytes / col : 0;
  if (fit == 0) return TESSERA_ERR_KERNEL;
  const int cols = fit < (size_t)a->n ? (int)fit : a->n;
  tsr_gemm_args_t g = {.dtype = a->dtype,
                       .transa = "NTC"[t],
                       .transb = 'N',
                       .m = a->m,
                       .k = a->m,
                       .alpha = a->alpha,
                       .beta = {0, 0}};
  tessera_exec_t e = *ex;
  e.ndata = 3;
  e.ptr[2] = x->workspace, e.ld[2] = (size_t)a->m;
  int rc = 0;
  for (int j = 0; j < a->n && !rc; j += cols) {
    g.n = a->n - j < cols ? a->n - j : cols;
    char *bj = (char *)ex->ptr[1] + (size_t)j * (size_t)ldb * es;
    e.ptr[1] = bj;
    rc = tsr_cuda_gemm(&e, &g);
    if (!rc) rc = tsr_cuda_copy_2d(ex, bj, ldb, x->workspace, a->m, a->m, g.n, es);
  }
  return rc;
}

typedef cublasStatus_t (*hemm_fn)(cublasHandle_t, cublasSideMode_t, cublasFillMode_t, int, int,
                                  const void *, const void *, int, const void *, int, const void *,
                                  void *, int);
#define HEMM(name)                                                                                 \
  static cublasStatus_t name(cublasHandle_t h, cublasSideMode_t side, cublasFillMode_t uplo,       \
                             int m, int n, const void *al, const void *A, int lda, const void *B,  \
                             int ldb, const void *be, void *C, int ldc) {                          \
    return cublas##name(h, side, uplo, m, n, al, A, lda, B, ldb, be, C, ldc);                      \
  }
HEMM(Ssymm)
HEMM(Dsymm)
HEMM(Chemm)
HEMM(Zhemm)
/* Indexed by the dtype: a Hermitian product of a real dtype is its symmetric one. */
static const hemm_fn hemm_of[TESSERA_NUM_DTYPES] = {Ssymm, Dsymm, Chemm, Zhemm};

typedef cublasStatus_t (*hemv_fn)(cublasHandle_t, cublasFillMode_t, int, const void *, const void *,
                                  int, const void *, int, const void *, void *, int);
#define HEMV(name)                                                                                 \
  static cublasStatus_t name(cublasHandle_t h, cublasFillMode_t uplo, int n, const void *al,       \
                             const void *A, int lda, const void *x, int incx, const void *be,      \
                             void *y, int incy) {                                                  \
    return cublas##name(h, uplo, n, al, A, lda, x, incx, be, y, incy);                             \
  }
HEMV(Ssymv)
HEMV(Dsymv)
HEMV(Chemv)
HEMV(Zhemv)
static const hemv_fn hemv_of[TESSERA_NUM_DTYPES] = {Ssymv, Dsymv, Chemv, Zhemv};

/* One column by cuBLAS's symv / hemv, more by its symm / hemm. */
int tsr_cuda_hemm(const tessera_exec_t *ex, void *args) {
  const tsr_hemm_args_t *a = args;
  const int u = tsr_letter(a->uplo, "UL");
  if (!tsr_dtype_valid(a->dtype) || u < 0) return TESSERA_ERR_KERNEL;
  const int lda = tsr_operand_ld(ex, 0, a->m, a->m), ldb = tsr_operand_ld(ex, 1, a->m, a->n);
  const int ldc = tsr_operand_ld(ex, 2, a->m, a->n);
  cublasHandle_t h = tsr_cuda_blas(ex);
  if (lda < 0 || ldb < 0 || ldc < 0 || !h) return TESSERA_ERR_KERNEL;
  if (a->m == 0 || a->n == 0) return 0;
  const tsr_cuda_scalar_t al = tsr_cuda_scalar(a->dtype, a->alpha);
  const tsr_cuda_scalar_t be = tsr_cuda_scalar(a->dtype, a->beta);
  if (a->n == 1)
    return tsr_cuda_blas_status(hemv_of[a->dtype](h, tsr_cuda_fill(u), a->m, &al, ex->ptr[0], lda,
                                                  ex->ptr[1], 1, &be, ex->ptr[2], 1));
  return tsr_cuda_blas_status(hemm_of[a->dtype](h, CUBLAS_SIDE_LEFT, tsr_cuda_fill(u), a->m, a->n,
                                                &al, ex->ptr[0], lda, ex->ptr[1], ldb, &be,
                                                ex->ptr[2], ldc));
}

/* One right-hand side: one kernel reading S once (hemv_pair.cu); more: the two products of the
 * whole tile by cuBLAS. */
int tsr_cuda_hemm_pair(const tessera_exec_t *ex, void *args) {
  const tsr_hemm_pair_args_t *a = args;
  if (a->k != 1 || !tsr_dtype_valid(a->dtype) || ex->ndata < 5)
    return tsr_hemm_pair(ex, a, tsr_cuda_gemm, a->c > 0 ? a->c : 1);
  const int ls = tsr_operand_ld(ex, 0, a->r, a->c);
  if (ls < 0 || tsr_operand_ld(ex, 1, a->c, 1) < 0 || tsr_operand_ld(ex, 2, a->r, 1) < 0 ||
      tsr_operand_ld(ex, 3, a->r, 1) < 0 || tsr_operand_ld(ex, 4, a->c, 1) < 0)
    return TESSERA_ERR_KERNEL;
  return tsr_cuda_hemv_pair(a->dtype, ex->ptr[0], (size_t)ls, a->r, a->c, ex->ptr[1], ex->ptr[2],
                            ex->ptr[3], ex->ptr[4], a->alpha.re, a->alpha.im, ex->stream)
             ? TESSERA_ERR_KERNEL
             : 0;
}

/* Solves up to order 512 in cuBLAS's trsm (256 where the products take tensor cores, whose gemms
 * of short k still outrun the leaves), larger ones by recursive halving onto gemm. */
int tsr_cuda_trsm_blocked(const tessera_exec_t *ex, void *args) {
  const tsr_trsm_args_t *a = args;
  const int leaf = a->math && tsr_dtype_single(a->dtype) ? 256 : 512;
  return tsr_trsm_blocked(ex, args, tsr_cuda_trsm, tsr_cuda_gemm, leaf);
}

typedef cublasStatus_t (*geam_fn)(cublasHandle_t, int, int, const void *, const void *, int,
                                  const void *, void *, int);
#define GEAM(name, T)                                                                              \
  static cublasStatus_t name(cublasHandle_t h, int m, int n, const void *al, const void *A,        \
                             int lda, const void *be, void *C, int ldc) {                          \
    return cublas##name(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, (const T *)al, (const T *)A, lda,       \
                        (const T *)be, (const T *)C, ldc, (T *)C, ldc);                            \
  }
GEAM(Sgeam, float)
GEAM(Dgeam, double)
GEAM(Cgeam, cuComplex)
GEAM(Zgeam, cuDoubleComplex)
static const geam_fn geam_of[TESSERA_NUM_DTYPES] = {Sgeam, Dgeam, Cgeam, Zgeam};

/* C = alpha A + beta C in place (cuBLAS's geam allows C to be its second operand). */
int tsr_cuda_geadd(const tessera_exec_t *ex, void *args) {
  const tsr_geadd_args_t *a = args;
  if (!tsr_dtype_valid(a->dtype)) return TESSERA_ERR_KERNEL;
  const int lda = tsr_operand_ld(ex, 0, a->m, a->n), ldc = tsr_operand_ld(ex, 1, a->m, a->n);
  cublasHandle_t h = tsr_cuda_blas(ex);
  if (lda < 0 || ldc < 0 || !h) return TESSERA_ERR_KERNEL;
  if (a->m == 0 || a->n == 0) return 0;
  const tsr_cuda_scalar_t al = tsr_cuda_scalar(a->dtype, a->alpha);
  const tsr_cuda_scalar_t be = tsr_cuda_scalar(a->dtype, a->beta);
  return tsr_cuda_blas_status(
      geam_of[a->dtype](h, a->m, a->n, &al, ex->ptr[0], lda, &be, ex->ptr[1], ldc));
}
