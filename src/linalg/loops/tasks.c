/* One inserter per tile kernel: fills the kernel's arguments and access modes (the eigensolver's
 * stages' in tasks_eig.c). */
#include "linalg/loops/tasks.h"

int tsr_insert_in(tsr_flow_t *f, const tessera_kernel_t *k, const void *args, size_t size,
                  int ndata, tessera_data_t *const *data, const tessera_access_t *mode,
                  tessera_scope_t scope, const int tag[3], int prio) {
  tessera_task_t t = {.kernel = k,
                      .args = args,
                      .args_size = size,
                      .ndata = ndata,
                      .priority = prio,
                      .scope = scope,
                      .ntag = 3};
  for (int i = 0; i < ndata; i++) {
    t.data[i] = data[i];
    t.mode[i] = mode[i];
  }
  for (int i = 0; i < 3; i++) t.tag[i] = tag[i];
  return tsr_flow_insert(f, &t);
}

static int insert(tsr_flow_t *f, const tessera_kernel_t *k, const void *args, size_t size,
                  int ndata, tessera_data_t *const *data, const tessera_access_t *mode,
                  const int tag[3], int prio) {
  return tsr_insert_in(f, k, args, size, ndata, data, mode, tessera_scope_all(), tag, prio);
}

int tsr_insert_host(tsr_flow_t *f, const tessera_kernel_t *k, const void *args, size_t size,
                    int ndata, tessera_data_t *const *data, const tessera_access_t *mode,
                    const int tag[3], int prio) {
  return tsr_insert_in(f, k, args, size, ndata, data, mode, tessera_scope_cpus(), tag, prio);
}

static char flip_uplo(char uplo) {
  return uplo == 'L' ? 'U' : 'L';
}

static tsr_scalar_t conj_scalar(tsr_scalar_t v) {
  return (tsr_scalar_t){v.re, -v.im};
}

/* An operation on a triangle that operand `op` may present as its conjugate transpose (a tile
 * of a view): the triangle the tile itself stores. */
static char stored_uplo(char uplo, char op) {
  return op == 'N' ? uplo : flip_uplo(uplo);
}

/* A combination of operations with no single BLAS flag (a conjugation alone). */
static int no_flag(const tessera_matrix_t *A, const char *name) {
  return tsr_error(A->ctx, TESSERA_ERR_STATE, "%s: conjugate operand without transposition", name);
}

/* potrf, trtri and lauum of diagonal tile k: on a view, of the tile's other triangle. */
static char diagonal_uplo(const tessera_matrix_t *A, char uplo) {
  return A->op == 'C' ? flip_uplo(uplo) : uplo;
}

int tsr_task_potrf(const tessera_matrix_t *A, char uplo, int64_t k, int prio) {
  tsr_potrf_args_t a = {.dtype = A->dtype,
                        .uplo = diagonal_uplo(A, uplo),
                        .n = tsr_tile_m(A, k),
                        .offset = k * A->mb,
                        .math = A->math};
  tessera_data_t *d[1] = {tsr_tile(A, k, k)};
  tessera_access_t m[1] = {TESSERA_RW};
  int tag[3] = {(int)k, (int)k, (int)k};
  return insert(A->flow, &tsr_kernel_potrf, &a, sizeof a, 1, d, m, tag, prio);
}

/* trsm and trmm: the same arguments, buffers {A (R), B (RW)}. With B presented as op(Bs) (Bsᴴ
 * on a view), the equation B = alpha op(T)⁻¹ B (or B op(T)⁻¹, or the products) is transformed
 * by that op: side flipped, Bs m x n becomes n x m, op(T) composed with it, alpha conjugated
 * for Bsᴴ. */
static int triangular(const tessera_kernel_t *kernel, const tessera_matrix_t *A, char side,
                      char uplo, char trans, char diag, tsr_scalar_t alpha, tsr_operand_t a,
                      tsr_operand_t b, int m, int n, const int tag[3], int prio) {
  char op = tsr_op_compose(A->dtype, trans, a.op);
  if (op && b.op != 'N') {
    side = side == 'L' ? 'R' : 'L';
    if (b.op == 'C') alpha = conj_scalar(alpha);
    op = tsr_op_compose(A->dtype, b.op, op);
    int t = m;
    m = n, n = t;
  }
  if (!op) return no_flag(A, kernel->name);
  tsr_trsm_args_t args = {.dtype = A->dtype,
                          .side = side,
                          .uplo = stored_uplo(uplo, a.op),
                          .trans = op,
                          .diag = diag,
                          .m = m,
                          .n = n,
                          .alpha = alpha,
                          .math = A->math};
  tessera_data_t *d[2] = {a.h, b.h};
  tessera_access_t md[2] = {TESSERA_R, TESSERA_RW};
  return insert(A->flow, kernel, &args, sizeof args, 2, d, md, tag, prio);
}

int tsr_task_trsm(const tessera_matrix_t *A, char side, char uplo, char trans, char diag,
                  tsr_scalar_t alpha, tsr_operand_t a, tsr_operand_t b, int m, int n,
                  const int tag[3], int prio) {
  return triangular(&tsr_kernel_trsm, A, side, uplo, trans, diag, alpha, a, b, m, n, tag, prio);
}

/* With C presented as Csᴴ (Csᵀ), C = alpha op(a) op(a)ᴴ + beta C (ᵀ) is the same update of Cs's
 * other triangle (Hermitian updates take real scalars). */
int tsr_task_syrk(const tessera_matrix_t *C, int herk, char uplo, char trans, int n, int k,
                  tsr_scalar_t alpha, tsr_operand_t a, tsr_scalar_t beta, tsr_operand_t c,
                  const int tag[3], int prio) {
  const char op = tsr_op_compose(C->dtype, trans, a.op);
  bool ok = op != 0;
  if (tsr_dtype_complex(C->dtype))
    ok = ok && (herk ? op != 'T' && c.op != 'T' : op != 'C' && a.op != 'C' && c.op != 'C');
  if (!ok) return no_flag(C, "syrk");
  tsr_syrk_args_t args = {.dtype = C->dtype,
                          .uplo = stored_uplo(uplo, c.op),
                          .trans = op,
                          .herk = herk,
                          .n = n,
                          .k = k,
                          .alpha = alpha,
                          .beta = beta,
                          .math = C->math};
  tessera_data_t *d[2] = {a.h, c.h};
  tessera_access_t md[2] = {TESSERA_R, TESSERA_RW};
  return insert(C->flow, &tsr_kernel_syrk, &args, sizeof args, 2, d, md, tag, prio);
}

/* With C presented as op(Cs) (Csᴴ on a view): Cs = alpha' op(op(b)) op(op(a)) + beta' Cs, the
 * scalars conjugated for Csᴴ. */
/* gemm on c, read and written (RW), or only written (W: beta 0 over the whole tile c). */
static int gemm_as(const tessera_matrix_t *C, tsr_operand_t a, tsr_operand_t b, int m, int n, int k,
                   tsr_scalar_t alpha, tsr_scalar_t beta, tsr_operand_t c, tessera_access_t cmode,
                   const int tag[3], int prio);

int tsr_task_gemm(const tessera_matrix_t *C, tsr_operand_t a, tsr_operand_t b, int m, int n, int k,
                  tsr_scalar_t alpha, tsr_scalar_t beta, tsr_operand_t c, const int tag[3],
                  int prio) {
  return gemm_as(C, a, b, m, n, k, alpha, beta, c, TESSERA_RW, tag, prio);
}

int tsr_task_gemm_new(const tessera_matrix_t *C, tsr_operand_t a, tsr_operand_t b, int m, int n,
                      int k, tsr_scalar_t alpha, tessera_data_t *w, const int tag[3], int prio) {
  const tsr_scalar_t zero = {0, 0};
  return gemm_as(C, a, b, m, n, k, alpha, zero, (tsr_operand_t){w, 'N'}, TESSERA_W, tag, prio);
}

int tsr_task_geadd(const tessera_matrix_t *C, tessera_data_t *a, tsr_scalar_t alpha,
                   tsr_scalar_t beta, tessera_data_t *c, int m, int n, const int tag[3], int prio) {
  const tsr_geadd_args_t args = {.dtype = C->dtype, .m = m, .n = n, .alpha = alpha, .beta = beta};
  tessera_data_t *d[2] = {a, c};
  const tessera_access_t md[2] = {TESSERA_R, TESSERA_RW};
  return insert(C->flow, &tsr_kernel_geadd, &args, sizeof args, 2, d, md, tag, prio);
}

static int gemm_as(const tessera_matrix_t *C, tsr_operand_t a, tsr_operand_t b, int m, int n, int k,
                   tsr_scalar_t alpha, tsr_scalar_t beta, tsr_operand_t c, tessera_access_t cmode,
                   const int tag[3], int prio) {
  if (c.op != 'N' && a.op && b.op) {
    tsr_operand_t t = a;
    a = (tsr_operand_t){b.h, tsr_op_compose(C->dtype, c.op, b.op)};
    b = (tsr_operand_t){t.h, tsr_op_compose(C->dtype, c.op, t.op)};
    if (c.op == 'C') alpha = conj_scalar(alpha), beta = conj_scalar(beta);
    int mm = m;
    m = n, n = mm;
  }
  if (!a.op || !b.op) return no_flag(C, "gemm");
  tsr_gemm_args_t args = {.dtype = C->dtype,
                          .transa = a.op,
                          .transb = b.op,
                          .m = m,
                          .n = n,
                          .k = k,
                          .alpha = alpha,
                          .beta = beta,
                          .math = C->math};
  tessera_data_t *d[3] = {a.h, b.h, c.h};
  tessera_access_t md[3] = {TESSERA_R, TESSERA_R, cmode};
  return insert(C->flow, &tsr_kernel_gemm, &args, sizeof args, 3, d, md, tag, prio);
}

int tsr_task_lacpy_rows(tessera_dtype_t dtype, tsr_flow_t *f, tessera_data_t *src, int src_row,
                        tessera_data_t *dst, int dst_row, tessera_access_t dst_mode, int m, int n,
                        const int tag[3], int prio) {
  return tsr_task_lacpy_block(dtype, f, src, src_row, 0, dst, dst_row, dst_mode, m, n, tag, prio);
}

int tsr_task_hemm(tsr_flow_t *f, tessera_dtype_t dtype, char uplo, tessera_data_t *A,
                  tessera_data_t *B, tessera_data_t *C, int m, int n, tsr_scalar_t alpha,
                  tsr_scalar_t beta, const int tag[3], int prio) {
  const tsr_hemm_args_t args = {
      .dtype = dtype, .uplo = uplo, .m = m, .n = n, .alpha = alpha, .beta = beta};
  tessera_data_t *d[3] = {A, B, C};
  const tessera_access_t md[3] = {TESSERA_R, TESSERA_R, TESSERA_RW};
  return insert(f, &tsr_kernel_hemm, &args, sizeof args, 3, d, md, tag, prio);
}

int tsr_task_hemm_pair(tsr_flow_t *f, tessera_dtype_t dtype, tessera_data_t *S, tessera_data_t *Xc,
                       tessera_data_t *Xr, tessera_data_t *Yr, tessera_data_t *Yc, int r, int c,
                       int k, tsr_scalar_t alpha, const int tag[3]) {
  const tsr_hemm_pair_args_t args = {.dtype = dtype, .r = r, .c = c, .k = k, .alpha = alpha};
  tessera_data_t *d[5] = {S, Xc, Xr, Yr, Yc};
  const tessera_access_t md[5] = {TESSERA_R, TESSERA_R, TESSERA_R, TESSERA_RW, TESSERA_RW};
  return insert(f, &tsr_kernel_hemm_pair, &args, sizeof args, 5, d, md, tag, 0);
}

int tsr_task_absum(tsr_flow_t *f, tessera_dtype_t dtype, tessera_data_t *a, int m, int n, char part,
                   tessera_data_t *rows, tessera_data_t *cols, const int tag[3]) {
  const tsr_absum_args_t args = {.dtype = dtype, .m = m, .n = n, .part = part};
  tessera_data_t *d[3] = {a, rows, cols};
  const tessera_access_t md[3] = {TESSERA_R, TESSERA_RW, TESSERA_RW};
  return insert(f, &tsr_kernel_absum, &args, sizeof args, part ? 2 : 3, d, md, tag, 0);
}

int tsr_task_convert(tsr_flow_t *f, tessera_dtype_t from, tessera_data_t *src, tessera_dtype_t to,
                     tessera_data_t *dst, int row, int col, tessera_access_t dst_mode, int m, int n,
                     double scale, const int tag[3], int prio) {
  tsr_convert_args_t args = {
      .from = from, .to = to, .m = m, .n = n, .scale = scale, .dst_row = row, .dst_col = col};
  tessera_data_t *d[2] = {src, dst};
  tessera_access_t md[2] = {TESSERA_R, dst_mode};
  return insert(f, &tsr_kernel_convert, &args, sizeof args, 2, d, md, tag, prio);
}

int tsr_task_lacpy_at(tessera_dtype_t dtype, tsr_flow_t *f, tessera_data_t *src, int src_row,
                      int src_col, tessera_data_t *dst, int dst_row, int dst_col,
                      tessera_access_t dst_mode, int m, int n, const int tag[3], int prio) {
  tsr_lacpy_args_t args = {.dtype = dtype, .m = m, .n = n};
  args.src_row = src_row, args.src_col = src_col, args.dst_row = dst_row, args.dst_col = dst_col;
  tessera_data_t *d[2] = {src, dst};
  tessera_access_t md[2] = {TESSERA_R, dst_mode};
  return insert(f, &tsr_kernel_lacpy, &args, sizeof args, 2, d, md, tag, prio);
}

int tsr_task_lacpy_block(tessera_dtype_t dtype, tsr_flow_t *f, tessera_data_t *src, int src_row,
                         int src_col, tessera_data_t *dst, int dst_row, tessera_access_t dst_mode,
                         int m, int n, const int tag[3], int prio) {
  return tsr_task_lacpy_at(dtype, f, src, src_row, src_col, dst, dst_row, 0, dst_mode, m, n, tag,
                           prio);
}

int tsr_task_transpose(tessera_dtype_t dtype, tsr_flow_t *f, tessera_data_t *src, int src_row,
                       int src_col, tessera_data_t *dst, int dst_row, int dst_col,
                       tessera_access_t dst_mode, int m, int n, const int tag[3], int prio) {
  tsr_transpose_args_t args = {.dtype = dtype,
                               .m = m,
                               .n = n,
                               .src_row = src_row,
                               .src_col = src_col,
                               .dst_row = dst_row,
                               .dst_col = dst_col};
  tessera_data_t *h[2] = {src, dst};
  tessera_access_t md[2] = {TESSERA_R, dst_mode};
  return insert(f, &tsr_kernel_transpose, &args, sizeof args, 2, h, md, tag, prio);
}

int tsr_task_triangle(tessera_dtype_t dtype, tsr_flow_t *f, tessera_data_t *src, int src_row,
                      char uplo, tessera_data_t *dst, int k, const int tag[3], int prio) {
  tsr_triangle_args_t args = {.dtype = dtype, .uplo = uplo, .k = k, .src_row = src_row};
  tessera_data_t *h[2] = {src, dst};
  tessera_access_t md[2] = {TESSERA_R, TESSERA_W};
  return insert(f, &tsr_kernel_triangle, &args, sizeof args, 2, h, md, tag, prio);
}

int tsr_task_hefill(tessera_dtype_t dtype, tsr_flow_t *f, tessera_data_t *a, int n,
                    const int tag[3], int prio) {
  tsr_hefill_args_t args = {.dtype = dtype, .n = n};
  tessera_data_t *h[1] = {a};
  tessera_access_t md[1] = {TESSERA_RW};
  return insert(f, &tsr_kernel_hefill, &args, sizeof args, 1, h, md, tag, prio);
}

int tsr_task_identity(tessera_dtype_t dtype, tsr_flow_t *f, tessera_data_t *dst, int row,
                      tessera_access_t dst_mode, int m, int n, int d, const int tag[3], int prio) {
  tsr_identity_args_t args = {.dtype = dtype, .m = m, .n = n, .row = row, .d = d};
  tessera_data_t *h[1] = {dst};
  tessera_access_t md[1] = {dst_mode};
  return insert(f, &tsr_kernel_identity, &args, sizeof args, 1, h, md, tag, prio);
}

int tsr_task_diagonal(tessera_dtype_t dtype, tsr_flow_t *f, tessera_data_t *A, int row,
                      tessera_data_t *d, int n, const int tag[3], int prio) {
  tsr_diagonal_args_t args = {.dtype = dtype, .n = n, .row = row};
  tessera_data_t *h[2] = {A, d};
  tessera_access_t md[2] = {TESSERA_R, TESSERA_W};
  return insert(f, &tsr_kernel_diagonal, &args, sizeof args, 2, h, md, tag, prio);
}

int tsr_task_lacpy(tessera_dtype_t dtype, tsr_flow_t *f, tessera_data_t *src, tessera_data_t *dst,
                   int m, int n, const int tag[3], int prio) {
  return tsr_task_lacpy_rows(dtype, f, src, 0, dst, 0, TESSERA_W, m, n, tag, prio);
}

/* The inverse of Tsᴴ is (Ts⁻¹)ᴴ: trtri of the other triangle. */
int tsr_task_trtri_on(const tessera_matrix_t *A, tsr_operand_t a, char uplo, char diag, int n,
                      int64_t offset, const int tag[3], int prio) {
  tsr_trtri_args_t args = {
      .dtype = A->dtype, .uplo = stored_uplo(uplo, a.op), .diag = diag, .n = n, .offset = offset};
  tessera_data_t *d[1] = {a.h};
  tessera_access_t m[1] = {TESSERA_RW};
  return insert(A->flow, &tsr_kernel_trtri, &args, sizeof args, 1, d, m, tag, prio);
}

int tsr_task_trtri(const tessera_matrix_t *A, char uplo, char diag, int64_t k, int prio) {
  int tag[3] = {(int)k, (int)k, (int)k};
  return tsr_task_trtri_on(A, tsr_tile_op(A, k, k), uplo, diag, tsr_tile_m(A, k), k * A->mb, tag,
                           prio);
}

/* lauum of Tsᴴ (lower: (Tsᴴ)ᴴ Tsᴴ = Ts Tsᴴ) is lauum of Ts's other triangle. */
int tsr_task_lauum(const tessera_matrix_t *A, char uplo, int64_t k, int prio) {
  tsr_lauum_args_t a = {.dtype = A->dtype, .uplo = diagonal_uplo(A, uplo), .n = tsr_tile_m(A, k)};
  tessera_data_t *d[1] = {tsr_tile(A, k, k)};
  tessera_access_t m[1] = {TESSERA_RW};
  int tag[3] = {(int)k, (int)k, (int)k};
  return insert(A->flow, &tsr_kernel_lauum, &a, sizeof a, 1, d, m, tag, prio);
}

int tsr_task_trmm(const tessera_matrix_t *A, char side, char uplo, char trans, char diag,
                  tsr_scalar_t alpha, tsr_operand_t a, tsr_operand_t b, int m, int n,
                  const int tag[3], int prio) {
  return triangular(&tsr_kernel_trmm, A, side, uplo, trans, diag, alpha, a, b, m, n, tag, prio);
}

int tsr_task_getrf(const tessera_matrix_t *A, int64_t k, tessera_data_t *piv, tessera_data_t *inv,
                   int prio) {
  tsr_getrf_args_t a = {
      .dtype = A->dtype, .m = (int)A->m, .n = tsr_tile_n(A, k), .r0 = (int)(k * A->nb)};
  tessera_data_t *d[3] = {tsr_tile(A, 0, k), piv, inv};
  tessera_access_t m[3] = {TESSERA_RW, TESSERA_W, TESSERA_W};
  int tag[3] = {0, (int)k, (int)k};
  return insert(A->flow, &tsr_kernel_getrf, &a, sizeof a, inv ? 3 : 2, d, m, tag, prio);
}

int tsr_task_laswp(const tessera_matrix_t *A, tessera_data_t *tile, tessera_data_t *piv, int n,
                   int r0, int k, int incx, const int tag[3], int prio) {
  tsr_laswp_args_t a = {.dtype = A->dtype, .m = (int)A->m, .n = n, .r0 = r0, .k = k, .incx = incx};
  tessera_data_t *d[2] = {tile, piv};
  tessera_access_t m[2] = {TESSERA_RW, TESSERA_R};
  return insert(A->flow, &tsr_kernel_laswp, &a, sizeof a, 2, d, m, tag, prio);
}

int tsr_task_lu_step(const tessera_matrix_t *B, char uplo, char trans, tessera_data_t *panel,
                     tessera_data_t *b, tessera_data_t *piv, tessera_data_t *inv, int n, int r0,
                     int kb, const int tag[3], int prio) {
  tsr_lu_step_args_t a = {.dtype = B->dtype,
                          .uplo = uplo,
                          .trans = trans,
                          .m = (int)B->m,
                          .n = n,
                          .r0 = r0,
                          .kb = kb,
                          .math = B->math};
  tessera_data_t *d[4] = {panel, b, piv, inv};
  tessera_access_t m[4] = {TESSERA_R, TESSERA_RW, TESSERA_R, TESSERA_R};
  const int nd = piv ? (inv ? 4 : 3) : 2;
  return insert(B->flow, &tsr_kernel_lu_step, &a, sizeof a, nd, d, m, tag, prio);
}

int tsr_task_geqrt(const tessera_matrix_t *A, int64_t k, int64_t rows, tessera_data_t *t,
                   int prio) {
  tsr_geqrt_args_t a = {.dtype = A->dtype,
                        .m = (int)rows,
                        .n = tsr_tile_n(A, k),
                        .r0 = (int)(k * A->nb),
                        .sole = A->nt == 1};
  tessera_data_t *d[2] = {tsr_tile(A, 0, k), t};
  tessera_access_t m[2] = {TESSERA_RW, TESSERA_W};
  int tag[3] = {0, (int)k, (int)k};
  return insert(A->flow, &tsr_kernel_geqrt, &a, sizeof a, 2, d, m, tag, prio);
}

int tsr_task_qr_step(const tessera_matrix_t *B, char trans, tessera_data_t *panel,
                     tessera_data_t *c, tessera_data_t *t, tessera_data_t *w, int rows, int n,
                     int r0, int kb, int c0, const int tag[3], int prio) {
  tsr_qr_step_args_t a = {
      .dtype = B->dtype, .trans = trans, .m = rows, .n = n, .r0 = r0, .kb = kb, .c0 = c0};
  tessera_data_t *d[4] = {panel, c, t, w};
  tessera_access_t m[4] = {TESSERA_R, TESSERA_RW, TESSERA_R, TESSERA_RW};
  return insert(B->flow, &tsr_kernel_qr_step, &a, sizeof a, 4, d, m, tag, prio);
}

int tsr_task_larft_on(tessera_dtype_t dtype, tsr_flow_t *f, tessera_data_t *v, int m, int r0,
                      tessera_data_t *tau, tessera_data_t *t, int kb, const int tag[3], int prio) {
  tsr_larft_args_t a = {.dtype = dtype, .m = m, .r0 = r0, .kb = kb};
  tessera_data_t *d[3] = {v, tau, t};
  tessera_access_t md[3] = {TESSERA_R, TESSERA_R, TESSERA_W};
  return insert(f, &tsr_kernel_larft, &a, sizeof a, 3, d, md, tag, prio);
}

int tsr_task_larft(const tessera_matrix_t *A, int64_t k, tessera_data_t *tau, tessera_data_t *t,
                   int kb, int prio) {
  const int tag[3] = {0, (int)k, (int)k};
  return tsr_task_larft_on(A->dtype, A->flow, tsr_tile(A, 0, k), (int)A->m, (int)(k * A->nb), tau,
                           t, kb, tag, prio);
}
