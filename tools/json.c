/* tessera CLI — a small streaming JSON scanner and a string writer (see json.h). */
#include "json.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_DEPTH = 64 };

int json_fail(json_t *s, const char *what) {
  if (!s->err[0]) snprintf(s->err, sizeof s->err, "%s", what);
  return -1;
}

int json_peek(json_t *s) {
  while (s->p < s->end && isspace((unsigned char)*s->p)) s->p++;
  return s->p < s->end ? (unsigned char)*s->p : -1;
}

static int eat(json_t *s, char c, const char *what) {
  if (json_peek(s) != c) return json_fail(s, what);
  s->p++;
  return 0;
}

int json_string(json_t *s, char *buf, size_t n) {
  static const char esc_in[] = "\"\\/bfnrt", esc_out[] = "\"\\/\b\f\n\r\t";
  size_t len = 0;
  if (eat(s, '"', "expected a string")) return -1;
  while (s->p < s->end && *s->p != '"') {
    char c = *s->p++;
    if ((unsigned char)c < 0x20) return json_fail(s, "control character in a string");
    if (c == '\\') {
      const char *e = *s->p ? strchr(esc_in, *s->p) : NULL;
      unsigned u = 0;
      if (*s->p == 'u') {
        for (int i = 1; i <= 4; i++) {
          if (!isxdigit((unsigned char)s->p[i])) return json_fail(s, "bad \\u escape");
          u = u * 16 + (unsigned)(isdigit((unsigned char)s->p[i]) ? s->p[i] - '0'
                                                                  : tolower(s->p[i]) - 'a' + 10);
        }
        c = u > 0 && u < 0x80 ? (char)u : '?';
        s->p += 5;
      } else if (e) {
        c = esc_out[e - esc_in];
        s->p++;
      } else {
        return json_fail(s, "bad escape in a string");
      }
    }
    if (buf && len + 1 < n) buf[len++] = c;
  }
  if (s->p >= s->end) return json_fail(s, "unterminated string");
  s->p++;
  if (buf) buf[len] = 0;
  return 0;
}

int json_object(json_t *s, json_field_fn field, void *ctx, int depth) {
  if (depth > MAX_DEPTH) return json_fail(s, "nested too deeply");
  if (eat(s, '{', "expected '{'")) return -1;
  if (json_peek(s) == '}') return s->p++, 0;
  for (;;) {
    char key[32];
    if (json_string(s, key, sizeof key) || eat(s, ':', "expected ':'")) return -1;
    if (field ? field(s, key, ctx, depth + 1) : json_skip(s, depth + 1)) return -1;
    if (json_peek(s) == '}') return s->p++, 0;
    if (eat(s, ',', "expected ',' or '}'")) return -1;
  }
}

int json_array(json_t *s, json_elem_fn elem, void *ctx, int depth, int open_end) {
  if (depth > MAX_DEPTH) return json_fail(s, "nested too deeply");
  if (eat(s, '[', "expected '['")) return -1;
  if (json_peek(s) == ']') return s->p++, 0;
  for (;;) {
    if (elem ? elem(s, ctx, depth + 1) : json_skip(s, depth + 1)) return -1;
    int c = json_peek(s);
    if (c == ']' || (c < 0 && open_end)) return s->p += c == ']', 0;
    if (eat(s, ',', "expected ',' or ']'")) return -1;
    if (json_peek(s) < 0 && open_end) return 0; /* "[{...},{...}," */
  }
}

int json_skip(json_t *s, int depth) {
  static const char *const words[] = {"true", "false", "null"};
  int c = json_peek(s);
  if (c == '{') return json_object(s, NULL, NULL, depth);
  if (c == '[') return json_array(s, NULL, NULL, depth, 0);
  if (c == '"') return json_string(s, NULL, 0);
  for (int i = 0; i < 3; i++) {
    size_t len = strlen(words[i]);
    if ((size_t)(s->end - s->p) >= len && !strncmp(s->p, words[i], len)) return s->p += len, 0;
  }
  char *end;
  double v = strtod(s->p, &end); /* stops at the NUL after `end` at the latest */
  if ((c != '-' && !isdigit(c)) || end == s->p || !isfinite(v))
    return json_fail(s, "expected a value");
  s->p = end;
  return 0;
}

int json_text(json_t *s, char *buf, size_t n, int depth) {
  buf[0] = 0;
  return json_peek(s) == '"' ? json_string(s, buf, n) : json_skip(s, depth);
}

int json_number(json_t *s, double *v, int depth) {
  int c = json_peek(s);
  *v = c == '-' || isdigit(c) ? strtod(s->p, NULL) : NAN;
  return json_skip(s, depth);
}

void json_where(const json_t *s, int *line, int *column) {
  const char *bol = s->begin;
  *line = 1;
  for (const char *q = s->begin; q < s->p; q++)
    if (*q == '\n') ++*line, bol = q + 1;
  *column = (int)(s->p - bol) + 1;
}

void json_put_string(FILE *f, const char *text) {
  fputc('"', f);
  for (const unsigned char *c = (const unsigned char *)text; *c; c++) {
    if (*c == '"' || *c == '\\')
      fprintf(f, "\\%c", *c);
    else if (*c == '\n')
      fputs("\\n", f);
    else if (*c < 0x20)
      fprintf(f, "\\u%04x", *c);
    else
      fputc(*c, f);
  }
  fputc('"', f);
}
