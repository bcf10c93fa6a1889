/* The precision conversion of a tile (convert), scaled: f64 <-> f32, c128 <-> c64, or within one
 * dtype. A complex element is two reals, so every pair is a real loop over twice the rows: the
 * table is indexed by the source's and the destination's real width. */
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
