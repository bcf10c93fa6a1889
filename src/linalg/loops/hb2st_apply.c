/* The bulge chasing's back-transformation E = Q2 E (loops.h: tsr_pxhb2st_apply): E's column
 * panels are independent, so one task per panel, each reading the whole of the reflectors; over
 * processes each panel's task runs on its process, with that process's copy of them. */
#include "linalg/loops/loops.h"
#include "linalg/loops/tasks.h"

int tsr_pxhb2st_apply(tessera_matrix_t *E, int kd, tessera_data_t *v, tessera_data_t *tau,
                      tessera_scope_t scope) {
  int rc = 0;
  for (int64_t j = 0; j < E->nt && !rc; j++) {
    const int tag[3] = {0, (int)j, 0};
    rc = tsr_task_hb2st_apply(E->dtype, E->flow, v, tau, tsr_tile(E, 0, j), (int)E->m, kd,
                              tsr_tile_n(E, j), scope, tag);
  }
  return rc;
}
