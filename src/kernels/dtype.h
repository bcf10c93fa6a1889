/* The dtype helpers of the kernels and algorithms layers: which dtypes exist, which are complex
 * or single precision, and scalars carried as (re, im) pairs. Header only, the ground of
 * src/kernels/ (it calls nothing defined in another file of the layer).
 *
 * Kernels never switch on the dtype: each operation holds a table of its routines indexed by
 * the dtype (tessera_dtype_t is 0 .. TESSERA_NUM_DTYPES - 1), checked with tsr_dtype_valid.
 */
#ifndef TSR_KERNELS_DTYPE_H
#define TSR_KERNELS_DTYPE_H

#include <stdbool.h>
#include <stddef.h>

#include "tessera/types.h"

/** Whether `dt` names one of the four dtypes (an index into a routine table). */
static inline bool tsr_dtype_valid(tessera_dtype_t dt) {
  return (int)dt >= 0 && (int)dt < TESSERA_NUM_DTYPES;
}

/** Whether `dt` is complex (c64, c128): the public tessera_dtype_is_complex, named here so the
 *  layer's dtype questions sit in one place. */
static inline bool tsr_dtype_complex(tessera_dtype_t dt) {
  return tessera_dtype_is_complex(dt) != 0;
}

/** Whether the parts of `dt` are floats (f32, c64) rather than doubles. */
static inline bool tsr_dtype_single(tessera_dtype_t dt) {
  return dt == TESSERA_F32 || dt == TESSERA_C64;
}

/** Bytes of `dt`'s real type (float for f32 and c64, double for f64 and c128): an eigenvalue's or
 *  a singular value's. */
static inline size_t tsr_dtype_real_size(tessera_dtype_t dt) {
  return tsr_dtype_single(dt) ? sizeof(float) : sizeof(double);
}

/** A scalar of any dtype (imaginary part ignored for real dtypes). */
typedef struct {
  double re, im;
} tsr_scalar_t;

/** Reads one value of a valid `dtype` at `p` (NULL gives `dflt`). */
static inline tsr_scalar_t tsr_scalar_load(tessera_dtype_t dtype, const void *p, double dflt) {
  tsr_scalar_t s = {dflt, 0.0};
  if (!p || !tsr_dtype_valid(dtype)) return s;
  const bool cplx = tsr_dtype_complex(dtype);
  if (tsr_dtype_single(dtype)) {
    const float *f = p;
    s.re = f[0], s.im = cplx ? f[1] : 0.0;
  } else {
    const double *d = p;
    s.re = d[0], s.im = cplx ? d[1] : 0.0;
  }
  return s;
}

/** Stores `v` at `p` as one value of a valid `dtype` (the imaginary part dropped for real
 *  dtypes). */
static inline void tsr_scalar_store(tessera_dtype_t dtype, void *p, tsr_scalar_t v) {
  const bool cplx = tsr_dtype_complex(dtype);
  if (tsr_dtype_single(dtype)) {
    float *f = p;
    f[0] = (float)v.re;
    if (cplx) f[1] = (float)v.im;
  } else {
    double *d = p;
    d[0] = v.re;
    if (cplx) d[1] = v.im;
  }
}

#endif
