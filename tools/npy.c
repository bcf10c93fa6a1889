/* tessera CLI — .npy reader and writer. */
#define _POSIX_C_SOURCE 200809L
#include "npy.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/** The element types a .npy file may hold, by their NumPy descr. */
static const struct {
  const char *descr;
  tessera_dtype_t dtype;
} npy_types[] = {
    {"<f4", TESSERA_F32},
    {"<f8", TESSERA_F64},
    {"<c8", TESSERA_C64},
    {"<c16", TESSERA_C128},
};
#define NPY_NTYPES (sizeof npy_types / sizeof npy_types[0])

/** The parsed header dictionary. */
typedef struct {
  tessera_dtype_t dtype;
  int fortran;
  int ndim;
  int64_t shape[2];
} npy_header_t;

static int fail(char *err, size_t errlen, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, errlen, fmt, ap);
  va_end(ap);
  return -1;
}

static int host_little_endian(void) {
  const uint16_t one = 1;
  unsigned char first;
  memcpy(&first, &one, 1);
  return first == 1;
}

static void skip_ws(const char **p) {
  while (isspace((unsigned char)**p)) (*p)++;
}

/** Consumes `c` (after blanks) and returns 1, or returns 0 and consumes nothing but blanks. */
static int accept(const char **p, char c) {
  skip_ws(p);
  if (**p != c) return 0;
  (*p)++;
  return 1;
}

/** Parses a quoted Python string into buf. Returns 0, or -1 if malformed or too long. */
static int parse_string(const char **p, char *buf, size_t n) {
  skip_ws(p);
  char quote = **p;
  if (quote != '\'' && quote != '"') return -1;
  const char *s = ++(*p);
  while (**p && **p != quote) (*p)++;
  if (!**p || (size_t)(*p - s) >= n) return -1;
  memcpy(buf, s, (size_t)(*p - s));
  buf[*p - s] = '\0';
  (*p)++;
  return 0;
}

static int parse_bool(const char **p, int *v) {
  skip_ws(p);
  if (strncmp(*p, "True", 4) == 0)
    *v = 1;
  else if (strncmp(*p, "False", 5) == 0)
    *v = 0;
  else
    return -1;
  *p += *v ? 4 : 5;
  return 0;
}

/** Parses a shape tuple "(a, b)"; ndim receives its length even beyond 2. */
static int parse_shape(const char **p, npy_header_t *h) {
  h->ndim = 0;
  if (!accept(p, '(')) return -1;
  while (!accept(p, ')')) {
    skip_ws(p);
    if (!isdigit((unsigned char)**p)) return -1;
    char *end;
    errno = 0;
    long long v = strtoll(*p, &end, 10);
    if (errno) return -1;
    *p = end;
    if (h->ndim < 2) h->shape[h->ndim] = v;
    h->ndim++;
    if (!accept(p, ',') && **p != ')') return -1;
  }
  return 0;
}

static int parse_descr(const char **p, npy_header_t *h, char *err, size_t errlen) {
  char descr[64];
  skip_ws(p);
  if (**p == '[') return fail(err, errlen, "structured dtypes are not supported");
  if (parse_string(p, descr, sizeof descr)) return fail(err, errlen, "malformed 'descr' in header");
  for (size_t i = 0; i < NPY_NTYPES; i++) {
    if (strcmp(descr, npy_types[i].descr) == 0) {
      h->dtype = npy_types[i].dtype;
      return 0;
    }
  }
  return fail(err, errlen, "unsupported dtype '%s'%s (supported: <f4, <f8, <c8, <c16)", descr,
              descr[0] == '>' ? " (big-endian)" : "");
}

/** Parses the header dictionary (a NUL-terminated string). */
static int parse_header(const char *text, npy_header_t *h, char *err, size_t errlen) {
  const char *p = text;
  unsigned seen = 0;
  if (!accept(&p, '{')) return fail(err, errlen, "malformed header: no '{'");
  while (!accept(&p, '}')) {
    char key[32];
    if (parse_string(&p, key, sizeof key) || !accept(&p, ':'))
      return fail(err, errlen, "malformed header near \"%.24s\"", p);
    int bad = 0;
    if (strcmp(key, "descr") == 0) {
      if (parse_descr(&p, h, err, errlen)) return -1;
      seen |= 1;
    } else if (strcmp(key, "fortran_order") == 0) {
      bad = parse_bool(&p, &h->fortran);
      seen |= 2;
    } else if (strcmp(key, "shape") == 0) {
      bad = parse_shape(&p, h);
      seen |= 4;
    } else {
      return fail(err, errlen, "unknown header key '%s'", key);
    }
    if (bad) return fail(err, errlen, "malformed '%s' in header", key);
    if (!accept(&p, ',') && *p != '}') return fail(err, errlen, "malformed header after '%s'", key);
  }
  if (seen != 7) return fail(err, errlen, "header lacks 'descr', 'fortran_order' or 'shape'");
  if (h->ndim < 1 || h->ndim > 2)
    return fail(err, errlen, "expected a 1-D or 2-D array, found %d dimensions", h->ndim);
  if (h->ndim == 1) h->shape[1] = 1;
  return 0;
}

/** Reads the magic string, version and header of an open file. */
static int read_header(FILE *f, npy_header_t *h, char *err, size_t errlen) {
  unsigned char pre[12];
  if (fread(pre, 1, 8, f) != 8 || memcmp(pre, "\x93NUMPY", 6) != 0)
    return fail(err, errlen, "not a .npy file (bad magic string)");
  int major = pre[6];
  size_t lenbytes = major == 1 ? 2 : 4;
  if (major != 1 && major != 2)
    return fail(err, errlen, "unsupported .npy format version %d.%d (supported: 1.0, 2.0)", major,
                pre[7]);
  if (fread(pre + 8, 1, lenbytes, f) != lenbytes) return fail(err, errlen, "truncated header");
  size_t len = 0;
  for (size_t i = lenbytes; i-- > 0;) len = len << 8 | pre[8 + i];
  char *text = malloc(len + 1);
  if (!text) return fail(err, errlen, "header too large (%zu bytes)", len);
  int rc = fread(text, 1, len, f) == len ? 0 : fail(err, errlen, "truncated header");
  if (rc == 0) {
    text[len] = '\0';
    rc = parse_header(text, h, err, errlen);
  }
  free(text);
  return rc;
}

/** Copies a row-major rows x cols array into column-major order. */
static void transpose(const char *src, char *dst, int64_t rows, int64_t cols, size_t es) {
  for (int64_t i = 0; i < rows; i++)
    for (int64_t j = 0; j < cols; j++)
      memcpy(dst + ((size_t)j * (size_t)rows + (size_t)i) * es,
             src + ((size_t)i * (size_t)cols + (size_t)j) * es, es);
}

static int read_data(FILE *f, const npy_header_t *h, npy_array_t *out, char *err, size_t errlen) {
  size_t es = tessera_dtype_size(h->dtype);
  size_t rows = (size_t)h->shape[0], cols = (size_t)h->shape[1];
  if (cols && rows > SIZE_MAX / es / cols)
    return fail(err, errlen, "array too large (%zu x %zu)", rows, cols);
  size_t bytes = rows * cols * es;
  int direct = h->fortran || h->ndim == 1 || rows <= 1 || cols <= 1;
  char *data = malloc(bytes ? bytes : 1);
  char *tmp = direct ? data : malloc(bytes);
  if (!data || !tmp) {
    if (!direct) free(tmp);
    free(data);
    return fail(err, errlen, "cannot allocate %zu bytes for the data", bytes);
  }
  size_t got = fread(tmp, 1, bytes, f);
  if (got != bytes) {
    if (!direct) free(tmp);
    free(data);
    return fail(err, errlen, "truncated data: expected %zu bytes, found %zu", bytes, got);
  }
  if (!direct) {
    transpose(tmp, data, h->shape[0], h->shape[1], es);
    free(tmp);
  }
  out->dtype = h->dtype;
  out->ndim = h->ndim;
  out->shape[0] = h->shape[0];
  out->shape[1] = h->shape[1];
  out->data = data;
  return 0;
}

/** Opens `path` and reads its header into `h`; returns the file, positioned at the data, or NULL
 *  with a message in `err`. */
static FILE *open_array(const char *path, npy_header_t *h, char *err, size_t errlen) {
  if (!host_little_endian()) {
    fail(err, errlen, "big-endian hosts are not supported");
    return NULL;
  }
  FILE *f = fopen(path, "rb");
  if (!f) {
    fail(err, errlen, "%s", strerror(errno));
    return NULL;
  }
  *h = (npy_header_t){TESSERA_F64, 0, 0, {0, 0}};
  if (read_header(f, h, err, errlen) == 0) return f;
  fclose(f);
  return NULL;
}

int npy_read(const char *path, npy_array_t *out, char *err, size_t errlen) {
  memset(out, 0, sizeof *out);
  npy_header_t h;
  FILE *f = open_array(path, &h, err, errlen);
  if (!f) return -1;
  int rc = read_data(f, &h, out, err, errlen);
  fclose(f);
  return rc;
}

int npy_read_shape(const char *path, npy_array_t *out, char *err, size_t errlen) {
  memset(out, 0, sizeof *out);
  npy_header_t h;
  FILE *f = open_array(path, &h, err, errlen);
  if (!f) return -1;
  fclose(f);
  out->dtype = h.dtype;
  out->ndim = h.ndim;
  out->shape[0] = h.shape[0];
  out->shape[1] = h.shape[1];
  return 0;
}

static const char *npy_descr(tessera_dtype_t dtype) {
  for (size_t i = 0; i < NPY_NTYPES; i++)
    if (npy_types[i].dtype == dtype) return npy_types[i].descr;
  return NULL;
}

/** Writes the rows x cols column-major array `a` (leading dimension lda) of elements of `es`
 *  bytes, NumPy type `descr`, in Fortran order; `ndim` 1 writes shape (rows,). */
static int write_array(const char *path, const char *descr, size_t es, int ndim, int64_t rows,
                       int64_t cols, const void *a, int64_t lda, char *err, size_t errlen) {
  if ((ndim != 1 && ndim != 2) || (ndim == 1 && cols != 1) || rows < 0 || cols < 0 || lda < rows)
    return fail(err, errlen, "invalid array shape for writing");
  if (!host_little_endian()) return fail(err, errlen, "big-endian hosts are not supported");
  char shape[64], dict[160], header[256];
  if (ndim == 1)
    snprintf(shape, sizeof shape, "(%lld,)", (long long)rows);
  else
    snprintf(shape, sizeof shape, "(%lld, %lld)", (long long)rows, (long long)cols);
  int len = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': True, 'shape': %s, }",
                     descr, shape);
  size_t hlen = (size_t)len + 1;
  hlen += (64 - (10 + hlen) % 64) % 64;
  memcpy(header, "\x93NUMPY\x01\x00", 8);
  header[8] = (char)(hlen & 0xff);
  header[9] = (char)(hlen >> 8);
  memset(header + 10, ' ', hlen);
  memcpy(header + 10, dict, (size_t)len);
  header[10 + hlen - 1] = '\n';
  FILE *f = fopen(path, "wb");
  if (!f) return fail(err, errlen, "%s", strerror(errno));
  int ok = fwrite(header, 1, 10 + hlen, f) == 10 + hlen;
  for (int64_t j = 0; ok && j < cols; j++)
    ok =
        fwrite((const char *)a + (size_t)j * (size_t)lda * es, es, (size_t)rows, f) == (size_t)rows;
  if (fclose(f) != 0) ok = 0;
  return ok ? 0 : fail(err, errlen, "write failed: %s", strerror(errno));
}

int npy_write(const char *path, tessera_dtype_t dtype, int ndim, int64_t rows, int64_t cols,
              const void *a, int64_t lda, char *err, size_t errlen) {
  const char *descr = npy_descr(dtype);
  if (!descr) return fail(err, errlen, "unknown dtype %d", (int)dtype);
  return write_array(path, descr, tessera_dtype_size(dtype), ndim, rows, cols, a, lda, err, errlen);
}

int npy_write_int32(const char *path, int64_t n, const int32_t *v, char *err, size_t errlen) {
  return write_array(path, "<i4", sizeof *v, 1, n, 1, v, n > 0 ? n : 1, err, errlen);
}
