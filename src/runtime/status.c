/* Status strings and dtype helpers. */
#include <stdbool.h>
#include <string.h>

#include "tessera/types.h"

size_t tessera_dtype_size(tessera_dtype_t dtype) {
  static const size_t size[TESSERA_NUM_DTYPES] = {4, 8, 8, 16};
  return (int)dtype >= 0 && dtype < TESSERA_NUM_DTYPES ? size[dtype] : 0;
}

int tessera_dtype_is_complex(tessera_dtype_t dtype) {
  return dtype == TESSERA_C64 || dtype == TESSERA_C128;
}

static const char *const dtype_names[TESSERA_NUM_DTYPES] = {"f32", "f64", "c64", "c128"};
static const char dtype_letters[TESSERA_NUM_DTYPES] = {'s', 'd', 'c', 'z'};

const char *tessera_dtype_name(tessera_dtype_t dtype) {
  return (int)dtype >= 0 && dtype < TESSERA_NUM_DTYPES ? dtype_names[dtype] : "?";
}

int tessera_dtype_parse(const char *text, tessera_dtype_t *dtype) {
  if (!text || !dtype) return -1;
  for (int i = 0; i < TESSERA_NUM_DTYPES; i++) {
    bool letter =
        text[0] && !text[1] && (text[0] == dtype_letters[i] || text[0] == dtype_letters[i] - 32);
    if (letter || strcmp(text, dtype_names[i]) == 0) {
      *dtype = (tessera_dtype_t)i;
      return 0;
    }
  }
  return -1;
}

const char *tessera_strerror(int status) {
  if (status == 0) return "success";
  if (status > 0)
    return "the matrix is not positive definite: the leading minor whose order is the returned "
           "status is not positive or holds NaN; tessera_last_error() says which";
  if (status > TESSERA_ERR_BASE)
    return "an argument is invalid: the status is minus its position in the call, the context "
           "being argument 1 (tessera_last_error() names it and says why)";
  switch (status) {
  case TESSERA_ERR_NOMEM:
    return "out of memory";
  case TESSERA_ERR_BACKEND:
    return "a device backend call failed";
  case TESSERA_ERR_ENV:
    return "a TESSERA_* environment variable is malformed";
  case TESSERA_ERR_NODEVICE:
    return "no worker may run the task: its scope is empty or no device in it has the kernel";
  case TESSERA_ERR_IO:
    return "file input/output failed";
  case TESSERA_ERR_STATE:
    return "the call is not allowed in the current state";
  case TESSERA_ERR_UNSUPPORTED:
    return "not supported by this build or on this system";
  case TESSERA_ERR_KERNEL:
    return "a kernel reported a failure";
  case TESSERA_ERR_TIMEOUT:
    return "a participant of a collective call did not arrive in time";
  default:
    return "unknown status (not a tessera status code)";
  }
}
