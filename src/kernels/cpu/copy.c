/* CPU tile kernels of the copies and conversions (copy.h) on host memory: the precision
 * conversion of a tile (convert), scaled: f64 <-> f32, c128 <-> c64, or within one dtype; the
 * sums of moduli of a tile's rows and columns (absum), for ‖A‖∞; and the copies (transpose,
 * identity, triangle, hefill, diagonal, lacpy). A complex element is two reals, so every
 * conversion pair is a real loop over twice the rows: the table is indexed by the source's and
 * the destination's real width. */
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "kernels/copy.h"
#include "kernels/cpu/cpu_blas.h"

typedef void (*convert_fn)(const void *src, size_t lds, void *dst, size_t ldd, size_t rows,
                           size_t cols, double scale);

/* One loop per pair of real types: dst = scale src. */
#define CONVERT(name, S, D)                                                                        \
  static void name(const void *src, size_t lds, void *dst, size_t ldd, size_t rows, size_t cols,   \
                   double scale) {                                                                 \
    for (size_t j = 0; j < cols; j++) {                                                            \
      const S *s = (const S *)src + j * lds;                                                       \
      D *d = (D *)dst + j * ldd;                                                                   \
      for (size_t i = 0; i < rows; i++) d[i] = (D)(scale * (double)s[i]);                          \
    }                                                                                              \
  }
CONVERT(d_to_d, double, double)
CONVERT(d_to_s, double, float)
CONVERT(s_to_d, float, double)
CONVERT(s_to_s, float, float)

int tsr_cpu_convert(const tessera_exec_t *ex, void *args) {
  const tsr_convert_args_t *a = args;
  tsr_cpu_operand_t S, D;
  if (!tsr_convert_pair(a->from, a->to) || a->dst_row < 0 || a->dst_col < 0 ||
      tsr_cpu_operand(ex, 0, a->m, a->n, &S) ||
      tsr_cpu_operand(ex, 1, a->dst_row + a->m, a->dst_col + a->n, &D))
    return TESSERA_ERR_KERNEL;
  if (a->m == 0 || a->n == 0) return 0;
  /* reals per element, and the real loop of the pair: [source single][destination single] */
  const size_t r = tsr_dtype_complex(a->from) ? 2 : 1;
  D.p = (char *)D.p + ((size_t)a->dst_row + (size_t)a->dst_col * D.ld) * tessera_dtype_size(a->to);
  static const convert_fn by_width[2][2] = {{d_to_d, d_to_s}, {s_to_d, s_to_s}};
  by_width[tsr_dtype_single(a->from)][tsr_dtype_single(a->to)](
      S.p, (size_t)S.ld * r, D.p, (size_t)D.ld * r, (size_t)a->m * r, (size_t)a->n, a->scale);
  return 0;
}

/* Sums of moduli of a tile (absum): one loop per real type and kind (K reals an element). A
 * column's sum goes to cols[j] (part 0), or without its diagonal element to rows[j] (a Hermitian
 * tile's stored triangle: the unstored one's rows), kept in four partial sums so that the
 * additions do not wait on one another. */
#define ABSUM(name, T, K, ABS)                                                                     \
  static void name(const void *restrict a, size_t ld, int m, int n, char part,                     \
                   double *restrict rows, double *restrict cols) {                                 \
    const bool herm = part && part != 'G';                                                         \
    for (int j = 0; j < n; j++) {                                                                  \
      const T *restrict c = (const T *)a + (size_t)j * ld * K;                                     \
      const int i0 = part == 'L' ? j : 0, i1 = part == 'U' ? (j + 1 < m ? j + 1 : m) : m;          \
      double s[4] = {0, 0, 0, 0};                                                                  \
      for (int i = i0; i < i1; i++) {                                                              \
        const double v = ABS;                                                                      \
        rows[i] += v;                                                                              \
        s[i & 3] += herm && i == j ? 0 : v;                                                        \
      }                                                                                            \
      const double sum = (s[0] + s[1]) + (s[2] + s[3]);                                            \
      if (part == 0)                                                                               \
        cols[j] += sum;                                                                            \
      else if (herm)                                                                               \
        rows[j] += sum;                                                                            \
    }                                                                                              \
  }
ABSUM(absum_d, double, 1, fabs(c[i]))
ABSUM(absum_s, float, 1, fabs((double)c[i]))
ABSUM(absum_z, double, 2, hypot(c[2 * i], c[2 * i + 1]))
ABSUM(absum_c, float, 2, hypot((double)c[2 * i], (double)c[2 * i + 1]))
typedef void (*absum_fn)(const void *, size_t, int, int, char, double *, double *);

int tsr_cpu_absum(const tessera_exec_t *ex, void *args) {
  const tsr_absum_args_t *a = args;
  tsr_cpu_operand_t A, R, C = {0};
  if (!tsr_dtype_valid(a->dtype) || (a->part && a->part != 'G' && !tsr_absum_hermitian(a->part)) ||
      (tsr_absum_hermitian(a->part) && a->m != a->n) || tsr_cpu_operand(ex, 0, a->m, a->n, &A) ||
      tsr_cpu_operand(ex, 1, a->m, 1, &R) || (!a->part && tsr_cpu_operand(ex, 2, a->n, 1, &C)))
    return TESSERA_ERR_KERNEL;
  static const absum_fn of[2][2] = {{absum_d, absum_z}, {absum_s, absum_c}};
  of[tsr_dtype_single(a->dtype)][tsr_dtype_complex(a->dtype)](A.p, (size_t)A.ld, a->m, a->n,
                                                              a->part, R.p, C.p);
  return 0;
}

/* ---------------------------------------------------------------- copies */

int tsr_cpu_transpose(const tessera_exec_t *ex, void *args) {
  const tsr_transpose_args_t *a = args;
  tsr_cpu_operand_t A, B;
  if (!tsr_dtype_valid(a->dtype) || a->src_row < 0 || a->src_col < 0 || a->dst_row < 0 ||
      a->dst_col < 0 || tsr_cpu_operand(ex, 0, a->src_row + a->m, a->src_col + a->n, &A) ||
      tsr_cpu_operand(ex, 1, a->dst_row + a->n, a->dst_col + a->m, &B))
    return TESSERA_ERR_KERNEL;
  const size_t es = tessera_dtype_size(a->dtype);
  for (int c = 0; c < a->n; c++)
    for (int r = 0; r < a->m; r++) {
      const size_t from = (size_t)(a->src_col + c) * (size_t)A.ld + (size_t)(a->src_row + r);
      const size_t to = (size_t)(a->dst_col + r) * (size_t)B.ld + (size_t)(a->dst_row + c);
      tsr_scalar_t v = tsr_scalar_load(a->dtype, (const char *)A.p + from * es, 0);
      v.im = -v.im;
      tsr_scalar_store(a->dtype, (char *)B.p + to * es, v);
    }
  return 0;
}

int tsr_cpu_identity(const tessera_exec_t *ex, void *args) {
  const tsr_identity_args_t *a = args;
  tsr_cpu_operand_t A;
  if (!tsr_dtype_valid(a->dtype) || a->row < 0 || tsr_cpu_operand(ex, 0, a->row + a->m, a->n, &A))
    return TESSERA_ERR_KERNEL;
  const size_t es = tessera_dtype_size(a->dtype);
  for (int c = 0; c < a->n; c++) {
    char *col = (char *)A.p + ((size_t)c * (size_t)A.ld + (size_t)a->row) * es;
    memset(col, 0, (size_t)a->m * es);
    if (c - a->d >= 0 && c - a->d < a->m)
      tsr_scalar_store(a->dtype, col + (size_t)(c - a->d) * es, (tsr_scalar_t){1, 0});
  }
  return 0;
}

int tsr_cpu_triangle_copy(const tessera_exec_t *ex, void *args) {
  const tsr_triangle_args_t *a = args;
  const int u = tsr_letter(a->uplo, "LU");
  tsr_cpu_operand_t S, D;
  if (!tsr_dtype_valid(a->dtype) || u < 0 || a->src_row < 0 ||
      tsr_cpu_operand(ex, 0, a->src_row + a->k, a->k, &S) || tsr_cpu_operand(ex, 1, a->k, a->k, &D))
    return TESSERA_ERR_KERNEL;
  const size_t es = tessera_dtype_size(a->dtype);
  for (int c = 0; c < a->k; c++)
    for (int r = 0; r < a->k; r++) {
      char *to = (char *)D.p + ((size_t)c * (size_t)D.ld + (size_t)r) * es;
      const bool kept = u ? r <= c : r > c;
      if (kept)
        memcpy(to, (const char *)S.p + ((size_t)c * (size_t)S.ld + (size_t)(a->src_row + r)) * es,
               es);
      else
        tsr_scalar_store(a->dtype, to, (tsr_scalar_t){!u && r == c ? 1 : 0, 0});
    }
  return 0;
}

int tsr_cpu_hefill(const tessera_exec_t *ex, void *args) {
  const tsr_hefill_args_t *a = args;
  tsr_cpu_operand_t A;
  if (!tsr_dtype_valid(a->dtype) || tsr_cpu_operand(ex, 0, a->n, a->n, &A))
    return TESSERA_ERR_KERNEL;
  const size_t es = tessera_dtype_size(a->dtype), ld = (size_t)A.ld;
  for (int c = 1; c < a->n; c++)
    for (int r = 0; r < c; r++) {
      tsr_scalar_t v =
          tsr_scalar_load(a->dtype, (const char *)A.p + ((size_t)r * ld + (size_t)c) * es, 0);
      v.im = -v.im;
      tsr_scalar_store(a->dtype, (char *)A.p + ((size_t)c * ld + (size_t)r) * es, v);
    }
  return 0;
}

int tsr_cpu_diagonal(const tessera_exec_t *ex, void *args) {
  const tsr_diagonal_args_t *a = args;
  tsr_cpu_operand_t A, D;
  if (!tsr_dtype_valid(a->dtype) || a->row < 0 || tsr_cpu_operand(ex, 0, a->row + a->n, a->n, &A) ||
      tsr_cpu_operand(ex, 1, a->n, 1, &D))
    return TESSERA_ERR_KERNEL;
  const size_t es = tessera_dtype_size(a->dtype), step = ((size_t)A.ld + 1) * es;
  const char *top = (const char *)A.p + (size_t)a->row * es;
  for (int i = 0; i < a->n; i++) memcpy((char *)D.p + (size_t)i * es, top + (size_t)i * step, es);
  return 0;
}

int tsr_cpu_lacpy(const tessera_exec_t *ex, void *args) {
  const tsr_lacpy_args_t *a = args;
  tsr_cpu_operand_t S, D;
  if (!tsr_dtype_valid(a->dtype) || a->src_row < 0 || a->dst_row < 0 || a->src_col < 0 ||
      a->dst_col < 0 || tsr_cpu_operand(ex, 0, a->src_row + a->m, a->src_col + a->n, &S) ||
      tsr_cpu_operand(ex, 1, a->dst_row + a->m, a->dst_col + a->n, &D))
    return TESSERA_ERR_KERNEL;
  size_t elsize = tessera_dtype_size(a->dtype);
  S.p = (char *)S.p + ((size_t)a->src_col * (size_t)S.ld + (size_t)a->src_row) * elsize;
  D.p = (char *)D.p + ((size_t)a->dst_col * (size_t)D.ld + (size_t)a->dst_row) * elsize;
  if (a->m == 0 || a->n == 0 || (S.p == D.p && S.ld == D.ld)) return 0;
  size_t col = (size_t)a->m * elsize;
  size_t lds = (size_t)S.ld * elsize, ldd = (size_t)D.ld * elsize;
  if (lds == col && ldd == col) {
    memcpy(D.p, S.p, col * (size_t)a->n);
    return 0;
  }
  for (int j = 0; j < a->n; j++)
    memcpy((char *)D.p + (size_t)j * ldd, (const char *)S.p + (size_t)j * lds, col);
  return 0;
}
