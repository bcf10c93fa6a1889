/* The runtime's ground: the clock, aligned allocation, error messages. Calls nothing else of
 * tessera. */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runtime/base.h"
#include "runtime/context.h"

double tsr_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void *tsr_zalloc_aligned(size_t bytes) {
  size_t rounded = (bytes + TSR_CACHE_LINE - 1) / TSR_CACHE_LINE * TSR_CACHE_LINE;
  void *p = aligned_alloc(TSR_CACHE_LINE, rounded);
  if (p) memset(p, 0, rounded);
  return p;
}

int tsr_error(tessera_context_t *ctx, int status, const char *fmt, ...) {
  if (!ctx) return status;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(ctx->errmsg, sizeof ctx->errmsg, fmt, ap);
  va_end(ap);
  return status;
}

const char *tessera_last_error(const tessera_context_t *ctx) {
  return ctx ? ctx->errmsg : "";
}
