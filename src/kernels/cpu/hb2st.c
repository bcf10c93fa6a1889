/* Stage 2 of the two-stage Hermitian eigensolver on CPUs: a lower band reduced to a real
 * tridiagonal by bulge chasing, one (sweep, step) at a time (hb2st.h says what each step reads
 * and writes; the back-transformation is hb2st_apply.c).
 *
 * The working band of leading dimension ldw, seen with leading dimension ld = ldw - 1, is a dense
 * column-major matrix (A(i, j) = w[i + j * ld] for 0 <= i - j < ldw), so a step's blocks go to
 * BLAS as they are: the reflector from LAPACK's larfg, the bulge's right and left updates as
 * gemv + ger(c), the diagonal block's two-sided update Hᴴ C H as hemv + her2 (LAPACK's larfy).
 * The code is written once on a type T, instantiated for the four dtypes, and called through
 * tables indexed by the dtype.
 */
#include <complex.h>
#include <lapacke.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cpu/cpu_blas.h"
#include "kernels/cpu/hb2st.h"

/* ---------------------------------------------------------------- layout */

int tsr_hb2st_layout(int n, int kd, tsr_hb2st_layout_t *lay) {
  memset(lay, 0, sizeof *lay);
  if (n < 0 || kd < 0) return TESSERA_ERR_KERNEL;
  const int k = n <= 1 ? 0 : (kd < n - 1 ? kd : n - 1);
  if (k > INT_MAX / 2) return TESSERA_ERR_KERNEL; /* ldw = 2 kd' would overflow */
  lay->n = n;
  lay->kd = k;
  lay->ldw = k > 0 ? 2 * k : 1;
  lay->sweeps = k > 0 ? n - 1 : 0;
  lay->steps = tsr_hb2st_steps(lay, 0);
  lay->ntau = (int64_t)lay->sweeps * lay->steps;
  lay->nv = lay->ntau * k;
  lay->nwork = (int64_t)lay->ldw * n + k;
  return 0;
}

int64_t tsr_hb2st_reflectors(int n, int kd, int64_t *nv) {
  tsr_hb2st_layout_t lay;
  if (tsr_hb2st_layout(n, kd, &lay)) return -1;
  if (nv) *nv = lay.nv;
  return lay.ntau;
}

int64_t tsr_hb2st_work_size(tessera_dtype_t dtype, int n, int kd) {
  tsr_hb2st_layout_t lay;
  if (!tsr_dtype_valid(dtype) || tsr_hb2st_layout(n, kd, &lay)) return -1;
  return lay.nwork;
}

/* ---------------------------------------------------------------- per-type routines */

/* Conjugate and real part of each type. */
#define CONJ_s(x) (x)
#define CONJ_d(x) (x)
#define CONJ_c(x) conjf(x)
#define CONJ_z(x) conj(x)
#define REAL_s(x) (x)
#define REAL_d(x) (x)
#define REAL_c(x) crealf(x)
#define REAL_z(x) creal(x)

/* The BLAS of a step, on the dense view (leading dimension ld), unit strides, lower triangles:
 *   hemv: y = al C x (C n x n Hermitian);  her2: C -= x yᴴ + y xᴴ;
 *   gemv: y = op(B) x (B m x n; op NoTrans or ConjTrans);  gerc: B += al x yᴴ;
 *   larfg: LAPACK's, on alpha and the n - 1 entries x, returning tau.
 * Real types take the symmetric routines and scalars by value, complex ones by pointer; their
 * hemv is a loop of this file's: OpenBLAS's generic (Prescott) ssymv brings NaN into y from its
 * scratch buffer's earlier contents on small orders. */
#define BLAS_REAL(p, T)                                                                            \
  static void p##_hemv(int n, T al, const T *C, int ld, const T *x, T *y) {                        \
    for (int i = 0; i < n; i++) y[i] = 0;                                                          \
    for (int j = 0; j < n; j++) {                                                                  \
      const T *c = C + (size_t)j * (size_t)ld;                                                     \
      T t = c[j] * x[j];                                                                           \
      for (int i = j + 1; i < n; i++) t += c[i] * x[i], y[i] += c[i] * x[j];                       \
      y[j] += t;                                                                                   \
    }                                                                                              \
    for (int i = 0; i < n; i++) y[i] *= al;                                                        \
  }                                                                                                \
  static void p##_her2(int n, const T *x, const T *y, T *C, int ld) {                              \
    cblas_##p##syr2(CblasColMajor, CblasLower, n, -1, x, 1, y, 1, C, ld);                          \
  }                                                                                                \
  static void p##_gemv(enum CBLAS_TRANSPOSE op, int m, int n, const T *B, int ld, const T *x,      \
                       T *y) {                                                                     \
    op = op == CblasNoTrans ? op : CblasTrans;                                                     \
    cblas_##p##gemv(CblasColMajor, op, m, n, 1, B, ld, x, 1, 0, y, 1);                             \
  }                                                                                                \
  static void p##_gerc(int m, int n, T al, const T *x, const T *y, T *B, int ld) {                 \
    cblas_##p##ger(CblasColMajor, m, n, al, x, 1, y, 1, B, ld);                                    \
  }
#define BLAS_COMPLEX(p, T)                                                                         \
  static void p##_hemv(int n, T al, const T *C, int ld, const T *x, T *y) {                        \
    const T zero = 0;                                                                              \
    cblas_##p##hemv(CblasColMajor, CblasLower, n, &al, C, ld, x, 1, &zero, y, 1);                  \
  }                                                                                                \
  static void p##_her2(int n, const T *x, const T *y, T *C, int ld) {                              \
    const T minus = -1;                                                                            \
    cblas_##p##her2(CblasColMajor, CblasLower, n, &minus, x, 1, y, 1, C, ld);                      \
  }                                                                                                \
  static void p##_gemv(enum CBLAS_TRANSPOSE op, int m, int n, const T *B, int ld, const T *x,      \
                       T *y) {                                                                     \
    const T one = 1, zero = 0;                                                                     \
    cblas_##p##gemv(CblasColMajor, op, m, n, &one, B, ld, x, 1, &zero, y, 1);                      \
  }                                                                                                \
  static void p##_gerc(int m, int n, T al, const T *x, const T *y, T *B, int ld) {                 \
    cblas_##p##gerc(CblasColMajor, m, n, &al, x, 1, y, 1, B, ld);                                  \
  }

/* The algorithm on type T (prefix p): load, step, extract. */
#define HB2ST(p, T)                                                                                  \
  static T p##_larfg(int n, T *alpha, T *x) {                                                        \
    T tau = 0;                                                                                       \
    LAPACKE_##p##larfg_work(n, alpha, x, 1, &tau);                                                   \
    return tau;                                                                                      \
  }                                                                                                  \
                                                                                                     \
  /* C = Hᴴ C H on the len x len lower triangle C, H = I - tau v vᴴ; work: len entries. */       \
  static void p##_two_sided(int len, T tau, const T *v, T *C, int ld, T *work) {                     \
    p##_hemv(len, tau, C, ld, v, work); /* work = tau C v */                                         \
    T dot = 0;                                                                                       \
    for (int i = 0; i < len; i++) dot += CONJ_##p(v[i]) * work[i];                                   \
    const T alpha = (T)-0.5 * CONJ_##p(tau) * dot;                                                   \
    for (int i = 0; i < len; i++) work[i] += alpha * v[i];                                           \
    p##_her2(len, v, work, C, ld); /* C -= v workᴴ + work vᴴ */                                  \
  }                                                                                                  \
                                                                                                     \
  static void p##_step(const tsr_hb2st_layout_t *L, void *band, int ldw, int s, int j, void *vp,     \
                       void *taup, void *workp) {                                                    \
    const int kd = L->kd, n = L->n, ld = ldw - 1;                                                    \
    const int lo = s + 1 + j * kd, hi = lo + kd - 1 < n - 1 ? lo + kd - 1 : n - 1;                   \
    const int len = hi - lo + 1;                                                                     \
    T *w = band, *work = workp, *v = (T *)vp + tsr_hb2st_slot(L, s, j) * kd;                         \
    T *tau = (T *)taup + tsr_hb2st_slot(L, s, j);                                                    \
    /* col: the column (from row lo) whose entries below row lo the reflector annihilates */         \
    T *col = w + (size_t)lo + (size_t)(j == 0 ? s : lo - kd) * (size_t)ld;                           \
    if (j > 0) {                                                                                     \
      const T *u = (const T *)vp + tsr_hb2st_slot(L, s, j - 1) * kd;                                 \
      const T tu = ((const T *)taup)[tsr_hb2st_slot(L, s, j - 1)];                                   \
      if (tu != 0) { /* the bulge times H(s, j - 1): B = B - tu (B u) uᴴ */                        \
        p##_gemv(CblasNoTrans, len, kd, col, ld, u, work);                                           \
        p##_gerc(len, kd, -tu, work, u, col, ld);                                                    \
      }                                                                                              \
    }                                                                                                \
    memset(v, 0, (size_t)kd * sizeof *v);                                                            \
    v[0] = 1;                                                                                        \
    *tau = 0;                                                                                        \
    if (j > 0 && len == 1) return; /* made real by a later sweep's step 0 */                         \
    T beta = col[0];                                                                                 \
    *tau = p##_larfg(len, &beta, col + 1);                                                           \
    col[0] = beta;                                                                                   \
    for (int i = 1; i < len; i++) v[i] = col[i], col[i] = 0;                                         \
    if (*tau == 0) return;                                                                           \
    if (j > 0 && kd > 1) { /* the rest of the bulge: B2 = Hᴴ B2 = B2 - conj(tau) v (B2ᴴ v)ᴴ */ \
      T *b2 = col + ld;                                                                              \
      p##_gemv(CblasConjTrans, len, kd - 1, b2, ld, v, work);                                        \
      p##_gerc(len, kd - 1, -CONJ_##p(*tau), v, work, b2, ld);                                       \
    }                                                                                                \
    if (len > 1) p##_two_sided(len, *tau, v, w + (size_t)lo * (size_t)(ld + 1), ld, work);           \
  }                                                                                                  \
                                                                                                     \
  static void p##_load(int n, int kd, const void *abp, int ldab, void *band, int ldw) {              \
    const T *ab = abp;                                                                               \
    T *w = band;                                                                                     \
    for (int j = 0; j < n; j++) {                                                                    \
      const T *a = ab + (size_t)j * (size_t)ldab;                                                    \
      T *c = w + (size_t)j * (size_t)ldw;                                                            \
      const int rows = kd < n - 1 - j ? kd : n - 1 - j;                                              \
      memset(c, 0, (size_t)ldw * sizeof *c);                                                         \
      c[0] = REAL_##p(a[0]);                                                                         \
      for (int r = 1; r <= rows; r++) c[r] = a[r];                                                   \
    }                                                                                                \
  }                                                                                                  \
                                                                                                     \
  static void p##_extract(int n, int kd, const void *band, int ldw, double *d, double *e) {          \
    const T *w = band;                                                                               \
    for (int i = 0; i < n; i++) {                                                                    \
      d[i] = (double)REAL_##p(w[(size_t)i * (size_t)ldw]);                                           \
      if (i + 1 < n) e[i] = kd > 0 ? (double)REAL_##p(w[1 + (size_t)i * (size_t)ldw]) : 0.0;         \
    }                                                                                                \
  }

BLAS_REAL(s, float)
BLAS_REAL(d, double)
BLAS_COMPLEX(c, float complex)
BLAS_COMPLEX(z, double complex)
HB2ST(s, float)
HB2ST(d, double)
HB2ST(c, float complex)
HB2ST(z, double complex)

typedef struct {
  void (*load)(int n, int kd, const void *ab, int ldab, void *w, int ldw);
  void (*step)(const tsr_hb2st_layout_t *L, void *w, int ldw, int s, int j, void *v, void *tau,
               void *work);
  void (*extract)(int n, int kd, const void *w, int ldw, double *d, double *e);
} hb2st_ops_t;

static const hb2st_ops_t ops_of[TESSERA_NUM_DTYPES] = {
    {s_load, s_step, s_extract},
    {d_load, d_step, d_extract},
    {c_load, c_step, c_extract},
    {z_load, z_step, z_extract},
};

/* ---------------------------------------------------------------- entry points */

/* The layout of a call's arguments, when they are valid: dtype known, n and kd >= 0. */
static int checked_layout(tessera_dtype_t dtype, int n, int kd, tsr_hb2st_layout_t *L) {
  return !tsr_dtype_valid(dtype) || tsr_hb2st_layout(n, kd, L) ? TESSERA_ERR_KERNEL : 0;
}

int tsr_hb2st_load(tessera_dtype_t dtype, int n, int kd, const void *ab, int ldab, void *w,
                   int ldw) {
  tsr_hb2st_layout_t L;
  if (checked_layout(dtype, n, kd, &L) || ldw < L.ldw || ldab <= kd || (n > 0 && (!ab || !w)))
    return TESSERA_ERR_KERNEL;
  ops_of[dtype].load(n, L.kd, ab, ldab, w, ldw);
  return 0;
}

int tsr_hb2st_step(tessera_dtype_t dtype, int n, int kd, void *w, int ldw, int sweep, int step,
                   void *v, void *tau, void *work) {
  tsr_hb2st_layout_t L;
  if (checked_layout(dtype, n, kd, &L) || ldw < L.ldw || step < 0 ||
      step >= tsr_hb2st_steps(&L, sweep) || !w || !v || !tau || !work)
    return TESSERA_ERR_KERNEL;
  ops_of[dtype].step(&L, w, ldw, sweep, step, v, tau, work);
  return 0;
}

int tsr_hb2st_extract(tessera_dtype_t dtype, int n, int kd, const void *w, int ldw, double *d,
                      double *e) {
  tsr_hb2st_layout_t L;
  if (checked_layout(dtype, n, kd, &L) || ldw < L.ldw || (n > 0 && (!w || !d)) || (n > 1 && !e))
    return TESSERA_ERR_KERNEL;
  ops_of[dtype].extract(n, L.kd, w, ldw, d, e);
  return 0;
}

int tsr_hb2st(tessera_dtype_t dtype, int n, int kd, const void *ab, int ldab, double *d, double *e,
              void *v, void *tau, void *work) {
  tsr_hb2st_layout_t L;
  if (checked_layout(dtype, n, kd, &L) || ldab <= kd || (n > 0 && (!ab || !d)) || (n > 1 && !e) ||
      (L.ntau > 0 && (!v || !tau)))
    return TESSERA_ERR_KERNEL;
  if (n == 0) return 0;
  const size_t es = tessera_dtype_size(dtype);
  void *own = NULL;
  if (!work) {
    own = work = malloc((size_t)L.nwork * es);
    if (!own) return TESSERA_ERR_NOMEM;
  }
  const hb2st_ops_t *ops = &ops_of[dtype];
  void *scratch = (char *)work + (size_t)L.ldw * (size_t)n * es;
  ops->load(n, L.kd, ab, ldab, work, L.ldw);
  for (int s = 0; s < L.sweeps; s++)
    for (int j = 0, steps = tsr_hb2st_steps(&L, s); j < steps; j++)
      ops->step(&L, work, L.ldw, s, j, v, tau, scratch);
  ops->extract(n, L.kd, work, L.ldw, d, e);
  free(own);
  return 0;
}
