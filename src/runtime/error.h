/* Error messages recorded on a context, for every layer above the runtime. */
#ifndef TSR_ERROR_H
#define TSR_ERROR_H

#include "tessera/context.h"

/** Records a message for tessera_last_error and returns `status`. */
int tsr_error(tessera_context_t *ctx, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
