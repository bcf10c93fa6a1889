/* tessera CLI — reading and writing NumPy .npy files (format versions 1 and 2).
 *
 * Supported element types: <f4, <f8, <c8, <c16 (little-endian float, double, complex float,
 * complex double); both C (row-major) and Fortran (column-major) order; 1-D and 2-D arrays.
 * Arrays are returned and written in column-major order.
 */
#ifndef TESSERA_TOOLS_NPY_H
#define TESSERA_TOOLS_NPY_H

#include <stddef.h>
#include <stdint.h>

#include <tessera/tessera.h>

/** An array read from a .npy file. */
typedef struct {
  tessera_dtype_t dtype;
  int ndim;         /**< 1 or 2 */
  int64_t shape[2]; /**< rows and columns (a 1-D array of length n is n x 1) */
  void *data;       /**< column-major, leading dimension shape[0]; free() it */
} npy_array_t;

/** Reads `path` into `out`. Returns 0, or -1 with a message (without the path) in `err`. */
int npy_read(const char *path, npy_array_t *out, char *err, size_t errlen);

/** Reads only the header of `path`: `out` gets its dtype, ndim and shape, and no data (NULL).
 *  Returns 0, or -1 with a message (without the path) in `err`. */
int npy_read_shape(const char *path, npy_array_t *out, char *err, size_t errlen);

/** Writes the rows x cols column-major array `a` (leading dimension `lda`) of `dtype` to
 *  `path` in Fortran order; `ndim` 1 writes shape (rows,) and requires cols == 1.
 *  Returns 0, or -1 with a message (without the path) in `err`. */
int npy_write(const char *path, tessera_dtype_t dtype, int ndim, int64_t rows, int64_t cols,
              const void *a, int64_t lda, char *err, size_t errlen);

/** Writes the n integers `v` to `path` as a 1-D .npy array of '<i4' (int32).
 *  Returns 0, or -1 with a message (without the path) in `err`. */
int npy_write_int32(const char *path, int64_t n, const int32_t *v, char *err, size_t errlen);

#endif
