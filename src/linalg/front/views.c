/* The views of a LAPACK-style call's arrays (front.h: tsr_views_t): the column-major arrays
 * viewed in place as tiled matrices, or on a context over processes the root's arrays dealt
 * over the grid (lapack_dist.c), whose written parts go back to the root at the end. */
#include <stdint.h>

#include "linalg/front/front.h"
#include "runtime/context.h"

int tsr_views_begin(tsr_views_t *vs, tessera_context_t *ctx, const char *f, int rc, int k,
                    const int64_t *values, const int *argno, int64_t tile) {
  *vs = (tsr_views_t){.ctx = ctx, .dist = tsr_context_flow(ctx)->distributed, .tile = tile};
  return vs->dist ? tsr_lapack_agree(ctx, f, k, values, argno, rc, &vs->tile) : rc;
}

int tsr_views_add(tsr_views_t *vs, tessera_dtype_t dtype, int64_t m, int64_t n, const void *a,
                  int64_t lda, char part, int io) {
  int64_t nb = vs->tile;
  tessera_matrix_t **out = &vs->v[vs->n];
  int rc = vs->dist ? tsr_lapack_scatter(vs->ctx, dtype, m, n, nb, vs->panels, a, lda, part,
                                         io & TSR_IN, out, &vs->r[vs->n])
                    : tessera_matrix_view(vs->ctx, dtype, m, n, vs->panels ? (m > 1 ? m : 1) : nb,
                                          nb, (void *)(uintptr_t)a, lda, out);
  if (rc)
    return vs->dist ? rc
                    : tsr_error(vs->ctx, rc, "cannot view a %lld x %lld array", (long long)m,
                                (long long)n);
  vs->io[vs->n] = io;
  /* copies between the array and the accelerators run at the link's speed only from pinned
   * memory; pageable memory goes through the driver's staging buffers */
  const size_t bytes =
      m > 0 && n > 0 ? ((size_t)(lda * (n - 1) + m)) * tessera_dtype_size(dtype) : 0;
  if (!vs->dist && bytes && tsr_host_pin(vs->ctx, (void *)(uintptr_t)a, bytes))
    vs->pinned[vs->n] = (void *)(uintptr_t)a;
  vs->n++;
  return 0;
}

int tsr_views_release(tsr_views_t *vs, int rc) {
  for (int i = vs->n - 1; i >= 0; i--) {
    if (vs->dist && rc >= 0 && (vs->io[i] & TSR_OUT)) {
      const int g = tsr_lapack_gather(vs->v[i], vs->r[i]);
      if (g) rc = g;
    }
    int d = tessera_matrix_destroy(vs->v[i]), e = tessera_matrix_destroy(vs->r[i]);
    if (d && !rc) rc = d;
    if (e && !rc) rc = e;
    if (vs->pinned[i]) tsr_host_unpin(vs->ctx, vs->pinned[i]);
  }
  return rc;
}
