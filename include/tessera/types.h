/* tessera — basic types: status codes, element types, BLAS-style flags.
 *
 * Every tessera call returns an int status:
 *   0                    success
 *   > 0                  numerical result in LAPACK's sense (`info`): for a Cholesky
 *                        factorization, the order of the first leading minor that is not
 *                        positive definite (1-based)
 *   -1 .. -63            argument number i (1-based, counting the context) is invalid,
 *                        as in LAPACK; tessera_last_error() says which and why
 *   <= TESSERA_ERR_BASE  a runtime failure (memory, backend, environment), see below
 */
#ifndef TESSERA_TYPES_H
#define TESSERA_TYPES_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Marks a function of the public API. The library is built with hidden visibility: these are
 *  the only names it exports (internal `tsr_*` names stay inside it). */
#if defined(__GNUC__) || defined(__clang__)
#define TESSERA_API __attribute__((visibility("default")))
#else
#define TESSERA_API
#endif

/** Status codes below the argument range. */
enum {
  TESSERA_SUCCESS = 0,
  TESSERA_ERR_BASE = -100,
  TESSERA_ERR_NOMEM = -100,   /**< an allocation failed */
  TESSERA_ERR_BACKEND = -101, /**< a device backend call failed */
  TESSERA_ERR_ENV = -102,     /**< a TESSERA_* environment variable is malformed */
  TESSERA_ERR_NODEVICE =
      -103,              /**< no worker may run the task (empty scope, missing implementation) */
  TESSERA_ERR_IO = -104, /**< a file could not be read or written */
  /* -105 is not used: NaN in a matrix to factor is reported as LAPACK's info (> 0). */
  TESSERA_ERR_STATE = -106,       /**< call not allowed in the current state (e.g. handle in use) */
  TESSERA_ERR_UNSUPPORTED = -107, /**< feature not compiled in or not available on this system */
  TESSERA_ERR_KERNEL = -108,      /**< a tile kernel failed: a device library (cuBLAS, cuSOLVER)
                                       returned an error or refused its arguments */
  TESSERA_ERR_TIMEOUT = -110,     /**< a participant of a collective call did not arrive in time */
};

/** Element type of a matrix. The dtype is a value carried by matrices and tasks. */
typedef enum {
  TESSERA_F32 = 0,  /**< float */
  TESSERA_F64 = 1,  /**< double */
  TESSERA_C64 = 2,  /**< float complex (two floats) */
  TESSERA_C128 = 3, /**< double complex (two doubles) */
} tessera_dtype_t;

#define TESSERA_NUM_DTYPES 4

/** Which triangle of a symmetric / Hermitian matrix is referenced. */
typedef enum { TESSERA_LOWER = 'L', TESSERA_UPPER = 'U' } tessera_uplo_t;

/** Operation applied to a matrix operand: A, Aᵀ or Aᴴ. */
typedef enum {
  TESSERA_NOTRANS = 'N',
  TESSERA_TRANS = 'T',
  TESSERA_CONJTRANS = 'C',
} tessera_op_t;

/** Side of a triangular operand in trsm. */
typedef enum { TESSERA_LEFT = 'L', TESSERA_RIGHT = 'R' } tessera_side_t;

/** What an eigensolver or an SVD computes: values alone, or vectors too (the SVD's economy
 *  vectors: U's first min(m, n) columns, Vᴴ's first min(m, n) rows), or every vector (the SVD
 *  alone: all m columns of U and n rows of Vᴴ, LAPACK's jobz 'A'). */
typedef enum {
  TESSERA_VALUES = 'N',
  TESSERA_VECTORS = 'V',
  TESSERA_ALL_VECTORS = 'A'
} tessera_job_t;

/** Whether a triangular matrix has an implicit unit diagonal. */
typedef enum { TESSERA_NONUNIT = 'N', TESSERA_UNIT = 'U' } tessera_diag_t;

/** Size in bytes of one element of `dtype`; 0 for an unknown dtype. Thread safe. */
TESSERA_API size_t tessera_dtype_size(tessera_dtype_t dtype);

/** Whether `dtype` is complex. Thread safe. */
TESSERA_API int tessera_dtype_is_complex(tessera_dtype_t dtype);

/** Short name of `dtype` ("f32", "f64", "c64", "c128"), or "?" . Thread safe. */
TESSERA_API const char *tessera_dtype_name(tessera_dtype_t dtype);

/** Parses a LAPACK letter (s, d, c, z) or a name (f32, f64, c64, c128) into `*dtype`.
 *  Returns 0, or -1 when `text` names no dtype. Thread safe. */
TESSERA_API int tessera_dtype_parse(const char *text, tessera_dtype_t *dtype);

/** A static English description of a status code (never NULL). Thread safe. */
TESSERA_API const char *tessera_strerror(int status);

#ifdef __cplusplus
}
#endif
#endif
