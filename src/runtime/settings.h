/* The configuration table: every TESSERA_* variable with its type, range, default and meaning,
 * one strict parser, and the resolution of a configuration's "auto" fields against the
 * environment (settings.c; the public calls are in tessera/context.h). Nothing else in the
 * library reads TESSERA_* variables. */
#ifndef TSR_RUNTIME_SETTINGS_H
#define TSR_RUNTIME_SETTINGS_H

#include <stddef.h>

#include "tessera/context.h"

/** What tessera_init resolves beyond the public configuration. */
typedef struct {
  int sim_devices; /**< simulated devices that stand in for GPUs (builds with them only) */
} tsr_settings_extra_t;

/** Copies `in` (NULL: the defaults of tessera_config_init) into *out and fills every field left
 *  at its "auto" value from the environment, through the table's parser; *extra (may be NULL)
 *  receives what has no public field. Fields the environment does not set stay "auto". Returns 0,
 *  or TESSERA_ERR_ENV with a sentence in msg naming the variable and what it accepts. */
int tsr_settings_resolve(const tessera_config_t *in, tessera_config_t *out,
                         tsr_settings_extra_t *extra, char *msg, size_t len);

/** Checks the numeric fields of a configuration against their rows' ranges (a field at its
 *  "auto" value, negative, passes): the bounds of a field and of its variable are one. Returns 0,
 *  or -2 with a sentence in msg naming the field and what it takes. */
int tsr_settings_check(const tessera_config_t *cfg, char *msg, size_t len);

#endif
