/* Tracing (per-worker event buffers written as a Chrome / Perfetto trace) and counters. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/context.h"
#include "runtime/worker.h"

void tsr_trace_event(tsr_worker_t *w, const char *name, const int *tag, int ntag, double start,
                     double end, int transfer) {
  if (w->nevents == w->capevents) {
    size_t cap = w->capevents ? w->capevents * 2 : 4096;
    tsr_event_t *e = realloc(w->events, sizeof *e * cap);
    if (!e) return; /* tracing is best effort under memory pressure */
    w->events = e;
    w->capevents = cap;
  }
  tsr_event_t *e = &w->events[w->nevents++];
  e->start = start;
  e->end = end;
  e->name = name ? name : "task";
  e->ntag = ntag;
  for (int i = 0; i < 3; i++) e->tag[i] = i < ntag ? tag[i] : 0;
  e->transfer = transfer;
  e->launched = 0;
  e->lane = 0;
}

static void worker_label(const tsr_worker_t *w, char *buf, size_t n) {
  snprintf(buf, n, "%s %d worker %d", w->be->name, w->device, w->id);
}

int tessera_trace_write(const tessera_context_t *ctx, const char *path) {
  if (!ctx) return -1;
  if (!path) return -2;
  if (!ctx->tracing) return TESSERA_ERR_STATE;
  FILE *f = fopen(path, "w");
  if (!f) return TESSERA_ERR_IO;
  fprintf(f, "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n");
  const char *sep = "";
  for (int i = 0; i < ctx->nworkers; i++) {
    const tsr_worker_t *w = &ctx->workers[i];
    char label[96];
    worker_label(w, label, sizeof label);
    fprintf(
        f,
        "%s{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":0,\"tid\":%d,\"args\":{\"name\":\"%s\"}}",
        sep, i, label);
    sep = ",\n";
    for (size_t k = 0; k < w->nevents; k++) {
      const tsr_event_t *e = &w->events[k];
      char tag[48] = "";
      if (e->ntag == 1) snprintf(tag, sizeof tag, "(%d)", e->tag[0]);
      if (e->ntag == 2) snprintf(tag, sizeof tag, "(%d,%d)", e->tag[0], e->tag[1]);
      if (e->ntag == 3) snprintf(tag, sizeof tag, "(%d,%d,%d)", e->tag[0], e->tag[1], e->tag[2]);
      static const char *const lanes[] = {"queue", "urgent"};
      char launch[80] = "";
      if (e->launched > 0)
        snprintf(launch, sizeof launch, ",\"launched\":%.3f,\"lane\":\"%s\"",
                 (e->launched - ctx->t0) * 1e6, lanes[e->lane]);
      fprintf(f,
              "%s{\"name\":\"%s%s\",\"cat\":\"%s\",\"ph\":\"X\",\"pid\":0,\"tid\":%d,"
              "\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"kernel\":\"%s\",\"worker\":%d%s}}",
              sep, e->name, tag, e->transfer ? "transfer" : "task", i, (e->start - ctx->t0) * 1e6,
              (e->end - e->start) * 1e6, e->name, i, launch);
    }
  }
  fprintf(f, "\n]}\n");
  return fclose(f) == 0 ? 0 : TESSERA_ERR_IO;
}

int tessera_stats(const tessera_context_t *ctx, tessera_worker_stats_t *out, int n) {
  if (!ctx) return -1;
  for (int i = 0; i < n && i < ctx->nworkers && out; i++) out[i] = ctx->workers[i].stats;
  return ctx->nworkers;
}

void tessera_stats_reset(tessera_context_t *ctx) {
  if (!ctx) return;
  for (int i = 0; i < ctx->nworkers; i++)
    memset(&ctx->workers[i].stats, 0, sizeof ctx->workers[i].stats);
}
