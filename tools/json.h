/* tessera CLI — a small streaming JSON scanner (no tree is built), and a string writer.
 *
 * The caller walks the input: json_object() calls a function for each key, which reads the value
 * (json_text, json_number, a nested json_object / json_array) or skips it (json_skip). Numbers
 * are read with strtod, so the input must end with a NUL byte after `end`. Every function
 * returns 0, or -1 with the first error recorded in `err` and `p` left where it was found.
 */
#ifndef TESSERA_TOOLS_JSON_H
#define TESSERA_TOOLS_JSON_H

#include <stddef.h>
#include <stdio.h>

/** Scanner state over the bytes [begin, end); `end` must point to a NUL byte. */
typedef struct {
  const char *p, *begin, *end;
  char err[64];
} json_t;

/** Reads the value of `key` in an object (depth: pass it on to nested calls). */
typedef int (*json_field_fn)(json_t *s, const char *key, void *ctx, int depth);
/** Reads one element of an array. */
typedef int (*json_elem_fn)(json_t *s, void *ctx, int depth);

/** Records `what` as the error (unless one is recorded) and returns -1. */
int json_fail(json_t *s, const char *what);

/** Skips white space; returns the next character, or -1 at the end. */
int json_peek(json_t *s);

/** Reads a string into `buf` (truncated to n - 1 bytes; NULL skips it). \u escapes beyond
 *  ASCII become '?'. */
int json_string(json_t *s, char *buf, size_t n);

/** Reads an object, calling `field` (NULL: skip) for each key (keys are cut to 31 bytes). */
int json_object(json_t *s, json_field_fn field, void *ctx, int depth);

/** Reads an array, calling `elem` (NULL: skip) for each element; with `open_end` the end of the
 *  input may stand for the closing ']' (Chrome's trace array format allows that). */
int json_array(json_t *s, json_elem_fn elem, void *ctx, int depth, int open_end);

/** Skips any value. */
int json_skip(json_t *s, int depth);

/** Reads a string value into `buf`; any other value is skipped and leaves `buf` empty. */
int json_text(json_t *s, char *buf, size_t n, int depth);

/** Reads a number value; any other value is skipped and gives NaN. */
int json_number(json_t *s, double *v, int depth);

/** 1-based line and column of the scanner's position. */
void json_where(const json_t *s, int *line, int *column);

/** Writes `text` to `f` as a JSON string: quoted, with '"', '\\' and control characters
 *  escaped. */
void json_put_string(FILE *f, const char *text);

#endif
