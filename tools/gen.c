/* tessera CLI — generated matrices and element access for every dtype. */
#include "gen.h"

#include <string.h>

/** One element of each dtype, as its parts. */
typedef struct {
  float s[2];
  double d[2];
} parts_t;

void elem_get(tessera_dtype_t dtype, const void *a, size_t idx, double *re, double *im) {
  size_t parts = tessera_dtype_is_complex(dtype) ? 2 : 1;
  const char *p = (const char *)a + idx * tessera_dtype_size(dtype);
  parts_t v = {{0, 0}, {0, 0}};
  if (dtype == TESSERA_F32 || dtype == TESSERA_C64) {
    memcpy(v.s, p, parts * sizeof(float));
    v.d[0] = v.s[0];
    v.d[1] = v.s[1];
  } else {
    memcpy(v.d, p, parts * sizeof(double));
  }
  *re = v.d[0];
  *im = v.d[1];
}

void elem_set(tessera_dtype_t dtype, void *a, size_t idx, double re, double im) {
  size_t parts = tessera_dtype_is_complex(dtype) ? 2 : 1;
  char *p = (char *)a + idx * tessera_dtype_size(dtype);
  parts_t v = {{(float)re, (float)im}, {re, im}};
  if (dtype == TESSERA_F32 || dtype == TESSERA_C64)
    memcpy(p, v.s, parts * sizeof(float));
  else
    memcpy(p, v.d, parts * sizeof(double));
}

/** splitmix64 finaliser. */
static uint64_t mix(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

/** Hashed value in [-0.5, 0.5] for position (i, j), part 0 (real) or 1 (imaginary). */
static double hval(uint64_t seed, uint64_t i, uint64_t j, uint64_t part) {
  uint64_t h = mix(mix(mix(seed * 4 + part) ^ i) ^ (j * 0x9e3779b97f4a7c15ULL));
  return (double)(h >> 11) * 0x1.0p-53 - 0.5;
}

void gen_spd(tessera_dtype_t dtype, int64_t n, void *a, int64_t lda, uint64_t seed) {
  int cplx = tessera_dtype_is_complex(dtype);
  for (int64_t j = 0; j < n; j++) {
    for (int64_t i = 0; i < n; i++) {
      uint64_t r = (uint64_t)(i > j ? i : j), c = (uint64_t)(i > j ? j : i);
      double re = hval(seed, r, c, 0) + (i == j ? (double)n : 0.0);
      double im = cplx && i != j ? hval(seed, r, c, 1) : 0.0;
      elem_set(dtype, a, (size_t)(i + j * lda), re, i > j ? im : -im);
    }
  }
}

void gen_dense(tessera_dtype_t dtype, int64_t rows, int64_t cols, void *a, int64_t lda,
               uint64_t seed) {
  for (int64_t j = 0; j < cols; j++)
    for (int64_t i = 0; i < rows; i++)
      elem_set(dtype, a, (size_t)(i + j * lda), hval(seed, (uint64_t)i, (uint64_t)j, 0),
               hval(seed, (uint64_t)i, (uint64_t)j, 1));
}

void gen_mirror(tessera_dtype_t dtype, tessera_uplo_t uplo, int64_t n, void *a, int64_t lda) {
  for (int64_t j = 0; j < n; j++) {
    double re, im;
    elem_get(dtype, a, (size_t)(j + j * lda), &re, &im);
    elem_set(dtype, a, (size_t)(j + j * lda), re, 0.0);
    for (int64_t i = j + 1; i < n; i++) {
      size_t lo = (size_t)(i + j * lda), up = (size_t)(j + i * lda);
      size_t src = uplo == TESSERA_LOWER ? lo : up, dst = uplo == TESSERA_LOWER ? up : lo;
      elem_get(dtype, a, src, &re, &im);
      elem_set(dtype, a, dst, re, -im);
    }
  }
}

size_t gen_bytes(tessera_dtype_t dtype, int64_t rows, int64_t cols, int *ok) {
  size_t es = tessera_dtype_size(dtype), r = (size_t)rows, c = (size_t)cols;
  *ok = rows >= 0 && cols >= 0 && es > 0 && (c == 0 || r <= SIZE_MAX / es / c);
  return *ok ? r * c * es : 0;
}
