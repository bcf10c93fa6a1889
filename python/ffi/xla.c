/* Reading an XLA FFI call frame in C. */
#include "xla.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* The head of XLA's extension records: XLA_FFI_Extension_Base up to API 0.3,
 * XLA_FFI_InternalExtension from 0.4, the same fields under two names. */
typedef struct {
  size_t struct_size;
  int type;
} ext_head_t;

int tsr_xla_metadata(XLA_FFI_CallFrame *cf) {
  const ext_head_t *e = (const void *)cf->extension_start;
  if (!e || e->type != XLA_FFI_Extension_Metadata) return 0;
  XLA_FFI_Metadata *m = ((XLA_FFI_Metadata_Extension *)(void *)cf->extension_start)->metadata;
  m->api_version.major_version = XLA_FFI_API_MAJOR;
  m->api_version.minor_version = XLA_FFI_API_MINOR;
  m->traits = 0;
  return 1;
}

XLA_FFI_Error *tsr_xla_error(const XLA_FFI_CallFrame *cf, XLA_FFI_Error_Code code, const char *fmt,
                             ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  XLA_FFI_Error_Create_Args a = {
      .struct_size = XLA_FFI_Error_Create_Args_STRUCT_SIZE, .message = msg, .errc = code};
  return cf->api->XLA_FFI_Error_Create(&a);
}

XLA_FFI_Buffer *tsr_xla_arg(const XLA_FFI_CallFrame *cf, int64_t i) {
  if (i < 0 || i >= cf->args.size || cf->args.types[i] != XLA_FFI_ArgType_BUFFER) return NULL;
  return cf->args.args[i];
}

XLA_FFI_Buffer *tsr_xla_ret(const XLA_FFI_CallFrame *cf, int64_t i) {
  if (i < 0 || i >= cf->rets.size || cf->rets.types[i] != XLA_FFI_RetType_BUFFER) return NULL;
  return cf->rets.rets[i];
}

/* Attribute `name` of `type`, or NULL. */
static void *attr(const XLA_FFI_CallFrame *cf, const char *name, XLA_FFI_AttrType type) {
  size_t len = strlen(name);
  for (int64_t i = 0; i < cf->attrs.size; i++) {
    const XLA_FFI_ByteSpan *s = cf->attrs.names[i];
    if (s->len == len && memcmp(s->ptr, name, len) == 0)
      return cf->attrs.types[i] == type ? cf->attrs.attrs[i] : NULL;
  }
  return NULL;
}

/* Element `i` of integer data of XLA type `dtype`; 0 when `dtype` is not an integer type. */
static int int_at(XLA_FFI_DataType dtype, const void *data, size_t i, int64_t *out) {
  switch (dtype) {
  case XLA_FFI_DataType_S8:
    *out = ((const int8_t *)data)[i];
    return 1;
  case XLA_FFI_DataType_S32:
    *out = ((const int32_t *)data)[i];
    return 1;
  case XLA_FFI_DataType_S64:
    *out = ((const int64_t *)data)[i];
    return 1;
  case XLA_FFI_DataType_U32:
    *out = ((const uint32_t *)data)[i];
    return 1;
  case XLA_FFI_DataType_U64:
    *out = (int64_t)((const uint64_t *)data)[i];
    return 1;
  case XLA_FFI_DataType_PRED:
    *out = ((const uint8_t *)data)[i] != 0;
    return 1;
  default:
    return 0;
  }
}

int tsr_xla_attr_int(const XLA_FFI_CallFrame *cf, const char *name, int64_t *out) {
  const XLA_FFI_Scalar *s = attr(cf, name, XLA_FFI_AttrType_SCALAR);
  return s && int_at(s->dtype, s->value, 0, out) ? 0 : -1;
}

int tsr_xla_attr_ints(const XLA_FFI_CallFrame *cf, const char *name, int64_t *out, int max) {
  const XLA_FFI_Array *a = attr(cf, name, XLA_FFI_AttrType_ARRAY);
  if (!a || a->size > (size_t)max) return -1;
  for (size_t i = 0; i < a->size; i++)
    if (!int_at(a->dtype, a->data, i, &out[i])) return -1;
  return (int)a->size;
}

/* Frees an error returned by an API call; 0 when there was none. */
static int check(const XLA_FFI_CallFrame *cf, XLA_FFI_Error *e) {
  if (!e) return 0;
  XLA_FFI_Error_Destroy_Args d = {.struct_size = XLA_FFI_Error_Destroy_Args_STRUCT_SIZE,
                                  .error = e};
  cf->api->XLA_FFI_Error_Destroy(&d);
  return -1;
}

int tsr_xla_run_id(const XLA_FFI_CallFrame *cf, int64_t *run) {
  XLA_FFI_RunId_Get_Args a = {.struct_size = XLA_FFI_RunId_Get_Args_STRUCT_SIZE, .ctx = cf->ctx};
  if (check(cf, cf->api->XLA_FFI_RunId_Get(&a))) return -1;
  *run = a.run_id;
  return 0;
}

int tsr_xla_device_ordinal(const XLA_FFI_CallFrame *cf, int *ordinal) {
  XLA_FFI_DeviceOrdinal_Get_Args a = {.struct_size = XLA_FFI_DeviceOrdinal_Get_Args_STRUCT_SIZE,
                                      .ctx = cf->ctx};
  if (check(cf, cf->api->XLA_FFI_DeviceOrdinal_Get(&a))) return -1;
  *ordinal = a.device_ordinal;
  return 0;
}

int tsr_xla_stream(const XLA_FFI_CallFrame *cf, void **stream) {
  XLA_FFI_Stream_Get_Args a = {.struct_size = XLA_FFI_Stream_Get_Args_STRUCT_SIZE, .ctx = cf->ctx};
  if (check(cf, cf->api->XLA_FFI_Stream_Get(&a))) return -1;
  *stream = a.stream;
  return 0;
}
