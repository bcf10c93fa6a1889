/* tessera CLI — generated matrices and element access for every dtype. */
#define _POSIX_C_SOURCE 200809L
#include "gen.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/** The hashed value in [-0.5, 0.5] of position (r, c), part 0 (real) or 1 (imaginary), from its
 *  row's mix mix(mix(seed * 4 + part) ^ r), made once per row, and the column c:
 *  mix(rowmix ^ c · 0x9e3779b97f4a7c15) scaled. */
static double hval_row(uint64_t rowmix, uint64_t c) {
  uint64_t h = mix(rowmix ^ (c * 0x9e3779b97f4a7c15ULL));
  return (double)(h >> 11) * 0x1.0p-53 - 0.5;
}

/** Rows handled together by the block generators: their mixes and values are kept on the stack. */
#define GEN_ROWS 128

/** Stores re[0..n) (and im[0..n) for complex dtypes) as consecutive elements of `a`, rounded to
 *  `dtype` as elem_set rounds them. */
static void store_column(tessera_dtype_t dtype, void *a, int64_t n, const double *re,
                         const double *im) {
  switch (dtype) {
  case TESSERA_F32:
    for (int64_t i = 0; i < n; i++) ((float *)a)[i] = (float)re[i];
    break;
  case TESSERA_F64:
    for (int64_t i = 0; i < n; i++) ((double *)a)[i] = re[i];
    break;
  case TESSERA_C64:
    for (int64_t i = 0; i < n; i++) {
      ((float *)a)[2 * i] = (float)re[i];
      ((float *)a)[2 * i + 1] = (float)im[i];
    }
    break;
  case TESSERA_C128:
    for (int64_t i = 0; i < n; i++) {
      ((double *)a)[2 * i] = re[i];
      ((double *)a)[2 * i + 1] = im[i];
    }
    break;
  }
}

/* The rows x cols block from (i0, j0) of gen_spd's n x n matrix (spd) or of gen_dense's, into
 * `a`: row chunks of GEN_ROWS, each row's mix made once per chunk, a column at a time. Inlined
 * into each generator with a constant `spd`, so that each gets its own inner loop without a
 * branch on `spd` inside it. */
static inline __attribute__((always_inline)) void gen_block(tessera_dtype_t dtype, int spd,
                                                            int64_t n, int64_t i0, int64_t j0,
                                                            int64_t rows, int64_t cols, void *a,
                                                            int64_t lda, uint64_t seed) {
  const int cplx = tessera_dtype_is_complex(dtype);
  const size_t es = tessera_dtype_size(dtype);
  const uint64_t key[2] = {mix(seed * 4), mix(seed * 4 + 1)};
  uint64_t rowmix[2][GEN_ROWS];
  double re[GEN_ROWS], im[GEN_ROWS];
  for (int64_t r0 = 0; r0 < rows; r0 += GEN_ROWS) {
    const int64_t rn = rows - r0 < GEN_ROWS ? rows - r0 : GEN_ROWS, first = i0 + r0;
    for (int part = 0; part < 1 + cplx; part++)
      for (int64_t ii = 0; ii < rn; ii++)
        rowmix[part][ii] = mix(key[part] ^ (uint64_t)(first + ii));
    for (int64_t jj = 0; jj < cols; jj++) {
      const int64_t j = j0 + jj, diag = j - first; /* row of the diagonal in this chunk */
      /* gen_spd: element (i, j) hashes position (max(i, j), min(i, j)) of the lower triangle;
       * above the diagonal the imaginary part is negated (Hermitian); n is added on the
       * diagonal. gen_dense: element (i, j) hashes (i, j). */
      for (int part = 0; part < 1 + cplx; part++) {
        const uint64_t colmix = spd ? mix(key[part] ^ (uint64_t)j) : 0;
        double *v = part ? im : re;
        for (int64_t ii = 0; ii < rn; ii++) {
          const int below = !spd || first + ii > j;
          const double h =
              hval_row(below ? rowmix[part][ii] : colmix, (uint64_t)(below ? j : first + ii));
          v[ii] = part && !below ? -h : h;
        }
      }
      if (spd && diag >= 0 && diag < rn) {
        re[diag] += (double)n;
        im[diag] = -0.0; /* gen_spd's diagonal: imaginary part 0, negated */
      }
      store_column(dtype, (char *)a + (size_t)(r0 + jj * lda) * es, rn, re, im);
    }
  }
}

void gen_spd_block(tessera_dtype_t dtype, int64_t n, int64_t i0, int64_t j0, int64_t rows,
                   int64_t cols, void *a, int64_t lda, uint64_t seed) {
  gen_block(dtype, 1, n, i0, j0, rows, cols, a, lda, seed);
}

void gen_dense_block(tessera_dtype_t dtype, int64_t i0, int64_t j0, int64_t rows, int64_t cols,
                     void *a, int64_t lda, uint64_t seed) {
  gen_block(dtype, 0, 0, i0, j0, rows, cols, a, lda, seed);
}

/** A slice of columns of gen_spd's or gen_dense's matrix, made by one thread. */
typedef struct {
  tessera_dtype_t dtype;
  int spd;
  int64_t rows, j0, cols, lda;
  void *a;
  uint64_t seed;
} gen_slice_t;

static void *gen_slice(void *arg) {
  const gen_slice_t *s = arg;
  void *a = (char *)s->a + (size_t)(s->j0 * s->lda) * tessera_dtype_size(s->dtype);
  if (s->spd)
    gen_spd_block(s->dtype, s->rows, 0, s->j0, s->rows, s->cols, a, s->lda, s->seed);
  else
    gen_dense_block(s->dtype, 0, s->j0, s->rows, s->cols, a, s->lda, s->seed);
  return NULL;
}

/** Threads the generators use at most; below GEN_THREAD_MIN elements the caller's alone. */
#define GEN_THREADS 64
#define GEN_THREAD_MIN ((int64_t)2048 * 2048)

/** The rows x cols matrix of gen_spd (spd, rows = cols = n) or gen_dense, in column slices over
 *  the cores. */
static void gen_columns(tessera_dtype_t dtype, int spd, int64_t rows, int64_t cols, void *a,
                        int64_t lda, uint64_t seed) {
  long cores = rows * cols >= GEN_THREAD_MIN ? sysconf(_SC_NPROCESSORS_ONLN) : 1;
  int nt = cores < 1 ? 1 : cores > GEN_THREADS ? GEN_THREADS : (int)cores;
  if (nt > cols) nt = cols > 0 ? (int)cols : 1;
  gen_slice_t slice[GEN_THREADS];
  pthread_t tid[GEN_THREADS];
  int started[GEN_THREADS] = {0};
  for (int t = 0; t < nt; t++) {
    int64_t j0 = cols * t / nt, j1 = cols * (t + 1) / nt;
    slice[t] = (gen_slice_t){dtype, spd, rows, j0, j1 - j0, lda, a, seed};
    /* A thread that cannot start leaves its slice to the caller. */
    started[t] = t > 0 && pthread_create(&tid[t], NULL, gen_slice, &slice[t]) == 0;
  }
  for (int t = 0; t < nt; t++)
    if (!started[t]) gen_slice(&slice[t]);
  for (int t = 1; t < nt; t++)
    if (started[t]) pthread_join(tid[t], NULL);
}

void gen_spd(tessera_dtype_t dtype, int64_t n, void *a, int64_t lda, uint64_t seed) {
  gen_columns(dtype, 1, n, n, a, lda, seed);
}

void gen_dense(tessera_dtype_t dtype, int64_t rows, int64_t cols, void *a, int64_t lda,
               uint64_t seed) {
  gen_columns(dtype, 0, rows, cols, a, lda, seed);
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

int gen_cond(tessera_context_t *ctx, tessera_dtype_t dtype, int64_t n, double cond, int hermitian,
             void *a, int64_t lda, void *work, uint64_t seed) {
  if (n <= 0) return 0;
  const size_t es = tessera_dtype_size(dtype);
  void *tau = malloc((size_t)n * es);
  if (!tau) return TESSERA_ERR_NOMEM;
  for (int64_t j = 0; j < n; j++) {
    memset((char *)a + (size_t)(j * lda) * es, 0, (size_t)n * es);
    elem_set(dtype, a, (size_t)(j + j * lda), pow(cond, n > 1 ? -(double)j / (double)(n - 1) : 0),
             0);
  }
  /* A = Q₁ D from the left, then A Q₂ᴴ from the right: each Q the reflectors and tau geqrf
   * leaves of gen_dense's matrix of its seed, in `work`; a Hermitian A keeps Q₁ for Q₂ */
  int rc = 0;
  for (int s = 0; s < 2 && !rc; s++) {
    if (s == 0 || !hermitian) {
      gen_dense(dtype, n, n, work, n, seed + (uint64_t)s);
      rc = tessera_geqrf(ctx, dtype, n, n, work, n, tau);
    }
    if (!rc)
      rc = tessera_unmqr(ctx, s ? TESSERA_RIGHT : TESSERA_LEFT,
                         s ? TESSERA_CONJTRANS : TESSERA_NOTRANS, dtype, n, n, n, work, n, tau, a,
                         lda);
  }
  if (!rc && hermitian) gen_mirror(dtype, TESSERA_LOWER, n, a, lda);
  free(tau);
  return rc;
}

size_t gen_bytes(tessera_dtype_t dtype, int64_t rows, int64_t cols, int *ok) {
  size_t es = tessera_dtype_size(dtype), r = (size_t)rows, c = (size_t)cols;
  *ok = rows >= 0 && cols >= 0 && es > 0 && (c == 0 || r <= SIZE_MAX / es / c);
  return *ok ? r * c * es : 0;
}
