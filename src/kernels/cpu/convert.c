/* The precision conversion of a tile (convert): f64 <-> f32, c128 <-> c64, a copy where the two
 * dtypes are one. A complex element is two reals, so every pair is one of two real loops over
 * twice the rows: the table is indexed by the source's and the destination's real width. */
#include <string.h>

#include "kernels/cpu/cpu_blas.h"

typedef void (*convert_fn)(const void *src, size_t lds, void *dst, size_t ldd, size_t rows,
                           size_t cols);

static void narrow(const void *src, size_t lds, void *dst, size_t ldd, size_t rows, size_t cols) {
  for (size_t j = 0; j < cols; j++) {
    const double *s = (const double *)src + j * lds;
    float *d = (float *)dst + j * ldd;
    for (size_t i = 0; i < rows; i++) d[i] = (float)s[i];
  }
}

static void widen(const void *src, size_t lds, void *dst, size_t ldd, size_t rows, size_t cols) {
  for (size_t j = 0; j < cols; j++) {
    const float *s = (const float *)src + j * lds;
    double *d = (double *)dst + j * ldd;
    for (size_t i = 0; i < rows; i++) d[i] = s[i];
  }
}

static void same(size_t es, const void *src, size_t lds, void *dst, size_t ldd, size_t rows,
                 size_t cols) {
  for (size_t j = 0; j < cols; j++)
    memmove((char *)dst + j * ldd * es, (const char *)src + j * lds * es, rows * es);
}

int tsr_cpu_convert(const tessera_exec_t *ex, void *args) {
  const tsr_convert_args_t *a = args;
  tsr_cpu_operand_t S, D;
  if (!tsr_convert_pair(a->from, a->to) || tsr_cpu_operand(ex, 0, a->m, a->n, &S) ||
      tsr_cpu_operand(ex, 1, a->m, a->n, &D))
    return TESSERA_ERR_KERNEL;
  if (a->m == 0 || a->n == 0) return 0;
  /* reals per element, and the real loop of the pair: [source single][destination single] */
  const size_t r = tsr_dtype_complex(a->from) ? 2 : 1;
  static const convert_fn by_width[2][2] = {{NULL, narrow}, {widen, NULL}};
  const convert_fn f = by_width[tsr_dtype_single(a->from)][tsr_dtype_single(a->to)];
  if (f)
    f(S.p, (size_t)S.ld * r, D.p, (size_t)D.ld * r, (size_t)a->m * r, (size_t)a->n);
  else
    same(tessera_dtype_size(a->from), S.p, (size_t)S.ld, D.p, (size_t)D.ld, (size_t)a->m,
         (size_t)a->n);
  return 0;
}
