/* The argument checks of the LAPACK-style front doors (lapack.c, lapack_qr.c), numbered as
 * LAPACK numbers them. On a context over processes only the process holding the arrays checks
 * them (tsr_lapack_holds_arrays); the others agree on its status. */
#include <stdint.h>

#include "linalg/front/front.h"

/* Argument checks shared by every routine. Each returns -argno with a message, or 0. */
int tsr_arg_ld(tessera_context_t *ctx, const char *name, int argno, int64_t ld, int64_t rows) {
  if (tsr_lapack_holds_arrays(ctx) && ld < (rows > 1 ? rows : 1))
    return tsr_error(ctx, -argno, "%s: argument %d (leading dimension) = %lld < max(1, %lld)", name,
                     argno, (long long)ld, (long long)rows);
  return 0;
}
int tsr_arg_ptr(tessera_context_t *ctx, const char *name, int argno, const void *p, int64_t m,
                int64_t n) {
  if (!p && m > 0 && n > 0 && tsr_lapack_holds_arrays(ctx))
    return tsr_error(ctx, -argno, "%s: argument %d is NULL", name, argno);
  return 0;
}
int tsr_arg_dim(tessera_context_t *ctx, const char *name, int argno, int64_t v) {
  if (v < 0 || v > INT32_MAX * (int64_t)1024)
    return tsr_error(ctx, -argno, "%s: argument %d = %lld is out of range", name, argno,
                     (long long)v);
  return 0;
}
int tsr_arg_flag(tessera_context_t *ctx, const char *name, int argno, int v, const char *allowed) {
  for (const char *p = allowed; *p; p++)
    if (v == *p) return 0;
  return tsr_error(ctx, -argno, "%s: argument %d = '%c' is not one of \"%s\"", name, argno,
                   v > 32 && v < 127 ? (char)v : '?', allowed);
}
int tsr_arg_dtype(tessera_context_t *ctx, const char *name, int argno, tessera_dtype_t d) {
  if (!tessera_dtype_size(d))
    return tsr_error(ctx, -argno, "%s: argument %d = %d is not a dtype", name, argno, (int)d);
  return 0;
}
