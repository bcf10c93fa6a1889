/* tessera CLI — `tessera trace FILE.json -o gantt.svg`: a Gantt chart (SVG) of a Chrome trace.
 *
 * Reads the trace tessera writes (tessera_trace_write: "M" thread_name events naming the workers,
 * "X" events with ts and dur in microseconds, cat "task" or "transfer", args.kernel) with the
 * scanner of json.h, skipping whatever else a Chrome trace holds. One row per worker, one rectangle
 * per task coloured by kernel, transfers as thin dark bars at the bottom of their row. Neighbours
 * of one kernel less than a pixel apart on a row are merged, so 100k-event traces stay small.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "json.h"

enum { MAX_KERNELS = 48, TITLE_EVENTS = 20000 };
enum { LEFT = 200, TOP = 60, ROW_H = 18, GAP = 4, LEG_W = 300 }; /* layout, in pixels */
#define MERGE_PX 0.75 /* rectangles of one kernel closer than this on a row become one */

typedef struct {
  double ts, dur;  /* µs */
  int row, kernel; /* kernel -1: a transfer */
  size_t name;     /* offset of the event's name in trace_t.names */
} event_t;

typedef struct {
  long long tid;
  char label[96];
  double busy; /* µs covered by at least one task */
  int index;   /* order of appearance (rows are sorted by tid before drawing) */
} row_t;

typedef struct {
  char name[32];
  double total; /* µs summed over its events */
  long count;
  int index; /* its colour class */
} kernel_t;

typedef struct {
  event_t *ev;
  size_t nev, capev;
  row_t *rows;
  size_t caprows;
  int nrows, last_row;
  kernel_t kern[MAX_KERNELS + 1]; /* the last slot: transfers */
  int nkern;
  char *names;
  size_t nnames, capnames;
  int found; /* a traceEvents array was seen */
} trace_t;

typedef struct { /* the fields of one event object that matter here */
  char name[64], cat[16], ph[4], arg_name[96], kernel[32];
  double tid, ts, dur;
} raw_t;

static int args_field(json_t *s, const char *key, void *ctx, int depth) {
  raw_t *r = ctx;
  if (!strcmp(key, "name")) return json_text(s, r->arg_name, sizeof r->arg_name, depth);
  if (!strcmp(key, "kernel")) return json_text(s, r->kernel, sizeof r->kernel, depth);
  return json_skip(s, depth);
}

static int event_field(json_t *s, const char *key, void *ctx, int depth) {
  raw_t *r = ctx;
  if (!strcmp(key, "name")) return json_text(s, r->name, sizeof r->name, depth);
  if (!strcmp(key, "cat")) return json_text(s, r->cat, sizeof r->cat, depth);
  if (!strcmp(key, "ph")) return json_text(s, r->ph, sizeof r->ph, depth);
  if (!strcmp(key, "tid")) return json_number(s, &r->tid, depth);
  if (!strcmp(key, "ts")) return json_number(s, &r->ts, depth);
  if (!strcmp(key, "dur")) return json_number(s, &r->dur, depth);
  if (!strcmp(key, "args") && json_peek(s) == '{') return json_object(s, args_field, r, depth);
  return json_skip(s, depth);
}

/* ---------------------------------------------------------------- the trace */

/** `p` with room for `need` elements of `size` bytes (`*cap` held), or NULL (p intact). */
static void *grow(void *p, size_t *cap, size_t need, size_t size) {
  if (need <= *cap) return p;
  size_t cap2 = *cap ? *cap : 64;
  while (cap2 < need) cap2 *= 2;
  void *q = realloc(p, cap2 * size);
  if (q) *cap = cap2;
  return q;
}

static int row_of(trace_t *t, long long tid) {
  if (t->last_row < t->nrows && t->rows[t->last_row].tid == tid) return t->last_row;
  for (int i = 0; i < t->nrows; i++)
    if (t->rows[i].tid == tid) return t->last_row = i;
  row_t *rows = grow(t->rows, &t->caprows, (size_t)t->nrows + 1, sizeof *rows);
  if (!rows) return -1;
  t->rows = rows;
  row_t *r = &rows[t->nrows];
  *r = (row_t){.tid = tid, .index = t->nrows};
  snprintf(r->label, sizeof r->label, "tid %lld", tid);
  return t->last_row = t->nrows++;
}

static int kernel_of(trace_t *t, const char *name) {
  for (int k = 0; k < t->nkern; k++)
    if (!strcmp(t->kern[k].name, name)) return k;
  if (t->nkern >= MAX_KERNELS - 1 && strcmp(name, "other")) return kernel_of(t, "other");
  snprintf(t->kern[t->nkern].name, sizeof t->kern[0].name, "%s", name);
  t->kern[t->nkern].index = t->nkern;
  return t->nkern++;
}

/** Records a thread_name or complete event; ignores the others. Returns -1 without memory. */
static int commit(trace_t *t, const raw_t *r) {
  int meta = !strcmp(r->ph, "M") && !strcmp(r->name, "thread_name"), x = !strcmp(r->ph, "X");
  if (!(meta || x) || !(fabs(r->tid) < 1e15) || (x && !isfinite(r->ts))) return 0;
  int row = row_of(t, (long long)r->tid);
  if (row < 0) return -1;
  if (meta) {
    if (r->arg_name[0]) snprintf(t->rows[row].label, sizeof t->rows[row].label, "%s", r->arg_name);
    return 0;
  }
  size_t len = strlen(r->name) + 1;
  event_t *ev = grow(t->ev, &t->capev, t->nev + 1, sizeof *ev);
  if (ev) t->ev = ev;
  char *names = grow(t->names, &t->capnames, t->nnames + len, 1);
  if (names) t->names = names;
  if (!ev || !names) return -1;
  char kname[32];
  snprintf(kname, sizeof kname, "%.*s", (int)strcspn(r->name, "("), r->name);
  if (r->kernel[0]) snprintf(kname, sizeof kname, "%s", r->kernel);
  event_t *e = &t->ev[t->nev++];
  *e = (event_t){.ts = r->ts, .dur = r->dur > 0 ? r->dur : 0, .row = row, .name = t->nnames};
  e->kernel = !strcmp(r->cat, "transfer") ? -1 : kernel_of(t, kname[0] ? kname : "?");
  memcpy(t->names + t->nnames, r->name, len);
  t->nnames += len;
  kernel_t *k = &t->kern[e->kernel < 0 ? MAX_KERNELS : e->kernel];
  k->total += e->dur;
  k->count++;
  return 0;
}

static int event_elem(json_t *s, void *ctx, int depth) {
  if (json_peek(s) != '{') return json_skip(s, depth);
  raw_t r = {.tid = 0, .ts = NAN, .dur = 0};
  if (json_object(s, event_field, &r, depth)) return -1;
  return commit(ctx, &r) ? json_fail(s, "out of memory") : 0;
}

static int top_field(json_t *s, const char *key, void *ctx, int depth) {
  if (strcmp(key, "traceEvents") || json_peek(s) != '[') return json_skip(s, depth);
  ((trace_t *)ctx)->found = 1;
  return json_array(s, event_elem, ctx, depth, 0);
}

/** The contents of `path` followed by a NUL byte, or NULL with errno set. */
static char *slurp(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  char *buf = NULL, *more;
  size_t cap = 0, n = 0, got = 1;
  while (f && got && (more = grow(buf, &cap, n + (1 << 20), 1))) {
    buf = more;
    n += got = fread(buf + n, 1, cap - n - 1, f);
  }
  int bad = !f || ferror(f) || got, err = got && f ? ENOMEM : errno;
  if (f) fclose(f);
  if (!bad) {
    buf[n] = 0;
    *size = n;
    return buf;
  }
  free(buf);
  errno = err;
  return NULL;
}

/** Reads and parses `path`; prints the reason and returns CLI_FAILED on failure. */
static int load(const char *path, trace_t *t) {
  size_t size;
  errno = 0;
  char *buf = slurp(path, &size);
  if (!buf) {
    fprintf(stderr, "tessera: trace: cannot read %s: %s\n", path, strerror(errno));
    return CLI_FAILED;
  }
  json_t s = {buf, buf, buf + size, ""};
  int c = json_peek(&s), rc = 0;
  if (c == '[')
    t->found = 1, rc = json_array(&s, event_elem, t, 0, 1);
  else if (c == '{')
    rc = json_object(&s, top_field, t, 0);
  else
    rc = json_fail(&s, c < 0 ? "the file is empty" : "expected a JSON object or array");
  if (rc == 0 && json_peek(&s) >= 0) rc = json_fail(&s, "unexpected text after the JSON value");
  if (rc) {
    int line, column;
    json_where(&s, &line, &column);
    fprintf(stderr, "tessera: %s:%d:%d: malformed trace: %s\n", path, line, column, s.err);
  } else if (!t->found || t->nev == 0) {
    fprintf(stderr, "tessera: %s: %s\n", path,
            t->found ? "no complete (\"X\") events to draw" : "no \"traceEvents\" array");
  }
  free(buf);
  return rc || !t->found || t->nev == 0 ? CLI_FAILED : CLI_OK;
}

/* ---------------------------------------------------------------- the chart */

/** Fill colour of a kernel: a fixed one for the Cholesky family, else hashed from the name. */
static const char *colour(const char *name) {
  static const char *const fixed[][2] = {
      {"potrf", "#d62728"}, {"trsm", "#1f77b4"},  {"syrk", "#2ca02c"},  {"gemm", "#ff7f0e"},
      {"lacpy", "#8c564b"}, {"trtri", "#9467bd"}, {"lauum", "#e377c2"}, {"trmm", "#17becf"}};
  static const char *const hashed[] = {"#bcbd22", "#aec7e8", "#98df8a", "#ff9896",
                                       "#c5b0d5", "#c49c94", "#f7b6d2", "#dbdb8d",
                                       "#9edae5", "#393b79", "#637939", "#8c6d31"};
  for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
    if (!strcmp(name, fixed[i][0])) return fixed[i][1];
  unsigned h = 2166136261u;
  for (const char *c = name; *c; c++) h = (h ^ (unsigned char)*c) * 16777619u;
  return hashed[h % (sizeof hashed / sizeof hashed[0])];
}

/** Writes `s` with the XML special characters escaped. */
static void xml(FILE *f, const char *s) {
  static const char special[] = "<>&\"", *const entity[] = {"&lt;", "&gt;", "&amp;", "&quot;"};
  for (const char *e; *s; s++)
    (void)((e = strchr(special, *s)) ? fputs(entity[e - special], f) : fputc(*s, f));
}

static int cmp_event(const void *a, const void *b) {
  const event_t *x = a, *y = b;
  if (x->row != y->row) return x->row < y->row ? -1 : 1;
  return (x->ts > y->ts) - (x->ts < y->ts);
}

static int cmp_tid(const void *a, const void *b) {
  const row_t *x = a, *y = b;
  return (x->tid > y->tid) - (x->tid < y->tid);
}

static int cmp_total(const void *a, const void *b) {
  const kernel_t *x = a, *y = b;
  return (x->total < y->total) - (x->total > y->total);
}

/** A rectangle being widened by the events that follow it on its row. */
typedef struct {
  double x0, x1;
  const event_t *first; /* NULL when nothing is pending */
  int merged;
} pending_t;

typedef struct {
  FILE *f;
  const trace_t *t;
  double t0, scale, y; /* scale: pixels per µs; y: top of the current row */
  int titles;
} canvas_t;

static void flush(canvas_t *c, pending_t *p) {
  if (!p->first) return;
  int xfer = p->first->kernel < 0;
  fprintf(c->f, "<rect x=\"%.1f\" y=\"%.0f\" width=\"%.2f\" height=\"%d\" class=\"%c%d\">", p->x0,
          c->y + (xfer ? ROW_H - 5 : 1), fmax(p->x1 - p->x0, 0.3), xfer ? 4 : ROW_H - 2,
          xfer ? 'x' : 'k', xfer ? 0 : p->first->kernel);
  if (c->titles && !p->merged) {
    fputs("<title>", c->f);
    xml(c->f, c->t->names + p->first->name);
    fprintf(c->f, ": %.3f ms at %.3f ms</title>", p->first->dur * 1e-3,
            (p->first->ts - c->t0) * 1e-3);
  }
  fputs("</rect>\n", c->f);
  p->first = NULL;
}

/** Draws the events [e, end) of one row: the tasks, then the transfers above them. */
static void draw_row(canvas_t *c, const event_t *e, const event_t *end) {
  pending_t pend[MAX_KERNELS + 1] = {{0}};
  for (int pass = 0; pass < 2; pass++) {
    for (const event_t *v = e; v < end; v++) {
      if ((v->kernel < 0) != pass) continue;
      pending_t *p = &pend[v->kernel < 0 ? MAX_KERNELS : v->kernel];
      double x0 = LEFT + (v->ts - c->t0) * c->scale, x1 = x0 + v->dur * c->scale;
      /* with tooltips (small traces) only sub-pixel neighbours merge */
      if (p->first && x0 <= p->x1 + MERGE_PX &&
          (!c->titles || (x1 - x0 < 1 && p->x1 - p->x0 < 1))) {
        p->x1 = fmax(p->x1, x1);
        p->merged = 1;
        continue;
      }
      flush(c, p);
      *p = (pending_t){x0, x1, v, 0};
    }
    for (int k = 0; k <= MAX_KERNELS; k++) flush(c, &pend[k]);
  }
}

/** Sorts the rows by thread id and the events by row and time; sums each row's busy time. */
static int arrange(trace_t *t) {
  int *pos = malloc(sizeof *pos * (size_t)t->nrows);
  if (!pos) return -1;
  qsort(t->rows, (size_t)t->nrows, sizeof *t->rows, cmp_tid);
  for (int i = 0; i < t->nrows; i++) pos[t->rows[i].index] = i;
  for (size_t i = 0; i < t->nev; i++) t->ev[i].row = pos[t->ev[i].row];
  free(pos);
  qsort(t->ev, t->nev, sizeof *t->ev, cmp_event);
  double covered = -INFINITY; /* union of the task intervals, row by row */
  for (size_t i = 0; i < t->nev; i++) {
    const event_t *e = &t->ev[i];
    if (i == 0 || e->row != t->ev[i - 1].row) covered = -INFINITY;
    if (e->kernel < 0) continue;
    double from = fmax(e->ts, covered), to = e->ts + e->dur;
    if (to > from) t->rows[e->row].busy += to - from, covered = to;
  }
  return 0;
}

/** Header, styles, title and the rows' backgrounds; returns the time-axis line's y. */
static int draw_frame(FILE *f, const trace_t *t, const char *path, int width, double span) {
  int nleg = t->nkern + (t->kern[MAX_KERNELS].count > 0), per_line = (width - 20) / LEG_W;
  int axis = TOP + t->nrows * (ROW_H + GAP) + 4;
  int height = axis + 40 + (nleg + per_line - 1) / per_line * 18;
  double busy = 0;
  fprintf(f,
          "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d "
          "%d\" font-family=\"sans-serif\" font-size=\"11\">\n<style>",
          width, height, width, height);
  for (int k = 0; k < t->nkern; k++) fprintf(f, ".k%d{fill:%s}", k, colour(t->kern[k].name));
  fputs(".x0{fill:#333;fill-opacity:.8}.g{stroke:#ccc;stroke-width:.5}</style>\n"
        "<rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>\n<text x=\"10\" y=\"20\" "
        "font-size=\"14\" font-weight=\"bold\">",
        f);
  xml(f, path);
  for (int r = 0; r < t->nrows; r++) busy += t->rows[r].busy;
  fprintf(f,
          "</text>\n<text x=\"10\" y=\"40\">span %.3f ms, %ld tasks and %ld transfers on %d "
          "workers; utilisation %.1f%% on average, each worker's beside its name</text>\n",
          span * 1e-3, (long)t->nev - t->kern[MAX_KERNELS].count, t->kern[MAX_KERNELS].count,
          t->nrows, 100 * busy / (span * t->nrows));
  for (int r = 1; r < t->nrows; r += 2)
    fprintf(f, "<rect y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#f4f4f4\"/>\n",
            TOP + r * (ROW_H + GAP) - GAP / 2, width, ROW_H + GAP);
  return axis;
}

/** Grid lines and tick labels every 1, 2 or 5 x 10^k ms, at least 100 pixels apart. */
static void draw_axis(FILE *f, int axis, double span, double plot) {
  double ms = span * 1e-3, raw = ms * 100 / plot, mag = pow(10, floor(log10(raw)));
  double step = mag * (raw / mag <= 1 ? 1 : raw / mag <= 2 ? 2 : raw / mag <= 5 ? 5 : 10);
  int dec = step >= 1 ? 0 : (int)ceil(-log10(step) - 1e-9);
  for (int i = 0; i * step <= ms * (1 + 1e-9); i++) {
    double x = LEFT + i * step / ms * plot;
    fprintf(f,
            "<line class=\"g\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\"/><text x=\"%.1f\" "
            "y=\"%d\" text-anchor=\"middle\">%.*f</text>\n",
            x, x, TOP - 4, axis, x, axis + 14, dec, i * step);
  }
  fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">time (ms)</text>\n", LEFT - 8, axis + 14);
}

/** One entry per kernel, the busiest first, then the transfers. */
static void draw_legend(FILE *f, const trace_t *t, int axis, int width) {
  kernel_t leg[MAX_KERNELS + 1];
  double total = 0;
  int per_line = (width - 20) / LEG_W, n = t->nkern + (t->kern[MAX_KERNELS].count > 0);
  memcpy(leg, t->kern, sizeof leg);
  for (int k = 0; k < t->nkern; k++) total += leg[k].total;
  qsort(leg, (size_t)t->nkern, sizeof *leg, cmp_total);
  leg[t->nkern] = t->kern[MAX_KERNELS];
  for (int i = 0; i < n; i++) {
    int x = 10 + i % per_line * LEG_W, y = axis + 30 + i / per_line * 18, xfer = i == t->nkern;
    fprintf(f,
            "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"12\" class=\"%c%d\"/><text x=\"%d\" "
            "y=\"%d\">",
            x, y - 10, xfer ? 'x' : 'k', xfer ? 0 : leg[i].index, x + 16, y);
    xml(f, xfer ? "transfers" : leg[i].name);
    fprintf(f, ": %ld, %.2f ms", leg[i].count, leg[i].total * 1e-3);
    if (!xfer) fprintf(f, " (%.1f%%)", total > 0 ? 100 * leg[i].total / total : 0.0);
    fputs("</text>\n", f);
  }
}

/** Writes the chart; returns 0 or -1 on an output error. */
static int render(FILE *f, const trace_t *t, const char *path, int width) {
  double t0 = INFINITY, t1 = -INFINITY;
  for (size_t i = 0; i < t->nev; i++)
    t0 = fmin(t0, t->ev[i].ts), t1 = fmax(t1, t->ev[i].ts + t->ev[i].dur);
  double span = t1 > t0 ? t1 - t0 : 1, plot = width - LEFT - 20;
  int axis = draw_frame(f, t, path, width, span);
  draw_axis(f, axis, span, plot);
  canvas_t c = {f, t, t0, plot / span, 0, t->nev <= TITLE_EVENTS};
  for (size_t first = 0, last; first < t->nev; first = last) {
    int r = t->ev[first].row;
    for (last = first; last < t->nev && t->ev[last].row == r;) last++;
    c.y = TOP + r * (ROW_H + GAP);
    draw_row(&c, t->ev + first, t->ev + last);
  }
  for (int r = 0; r < t->nrows; r++) {
    fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">", LEFT - 8,
            TOP + r * (ROW_H + GAP) + ROW_H - 5);
    xml(f, t->rows[r].label);
    fprintf(f, " (%.0f%%)</text>\n", 100 * t->rows[r].busy / span);
  }
  draw_legend(f, t, axis, width);
  fputs("</svg>\n", f);
  return ferror(f) ? -1 : 0;
}

int cli_trace_svg(const cli_opts_t *o) {
  trace_t t = {0};
  int rc = load(o->input, &t);
  if (rc == CLI_OK && arrange(&t)) {
    fprintf(stderr, "tessera: trace: out of memory\n");
    rc = CLI_FAILED;
  } else if (rc == CLI_OK) {
    errno = 0;
    FILE *f = fopen(o->output, "w");
    int bad = !f || render(f, &t, o->input, o->width);
    if ((f && fclose(f)) || bad) {
      fprintf(stderr, "tessera: trace: cannot write %s: %s\n", o->output,
              errno ? strerror(errno) : "write error");
      rc = CLI_FAILED;
    }
  }
  free(t.ev);
  free(t.rows);
  free(t.names);
  return rc;
}
