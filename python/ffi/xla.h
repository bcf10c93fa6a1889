/* Reading an XLA FFI call frame in C: buffers, attributes by name, the execution's run id,
 * device ordinal and stream, and errors, against the C API header that jaxlib ships
 * (xla/ffi/api/c_api.h, found with jax.ffi.include_dir()). */
#ifndef TSR_JAX_XLA_H
#define TSR_JAX_XLA_H

#include <stdint.h>

#include "xla/ffi/api/c_api.h"

/** When XLA asks for the handler's metadata (the API version it was built against), answers
 *  and returns 1; else 0. */
int tsr_xla_metadata(XLA_FFI_CallFrame *cf);

/** An XLA error with a printf-style message (XLA copies the message). */
XLA_FFI_Error *tsr_xla_error(const XLA_FFI_CallFrame *cf, XLA_FFI_Error_Code code, const char *fmt,
                             ...) __attribute__((format(printf, 3, 4)));

/** Argument / result buffer i, or NULL when out of range or not a buffer. */
XLA_FFI_Buffer *tsr_xla_arg(const XLA_FFI_CallFrame *cf, int64_t i);
XLA_FFI_Buffer *tsr_xla_ret(const XLA_FFI_CallFrame *cf, int64_t i);

/** Integer scalar attribute `name` (any integer type): 0, or -1 when absent or not one. */
int tsr_xla_attr_int(const XLA_FFI_CallFrame *cf, const char *name, int64_t *out);

/** Integer array attribute `name` (32- or 64-bit elements) copied into `out` (at most `max`):
 *  its length, or -1 when absent, not an integer array, or longer than `max`. */
int tsr_xla_attr_ints(const XLA_FFI_CallFrame *cf, const char *name, int64_t *out, int max);

/** The execution's run id (shared by every device of one execution): 0 or -1. */
int tsr_xla_run_id(const XLA_FFI_CallFrame *cf, int64_t *run);

/** The ordinal of the device this call runs for: 0 or -1. */
int tsr_xla_device_ordinal(const XLA_FFI_CallFrame *cf, int *ordinal);

/** The platform stream of this call (cudaStream_t on CUDA): 0 or -1. */
int tsr_xla_stream(const XLA_FFI_CallFrame *cf, void **stream);

#endif
