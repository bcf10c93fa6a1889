/* The configuration table through the public API: every row complete and named once, the strict
 * parser (malformed and out-of-range values refused with a sentence naming the variable, for
 * every row), explicit configuration winning over the environment, the values in force as
 * `tessera info` prints them, and the variables read by name (the JAX binding's timeout).
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tessera/tessera.h>

#include "../test_common.h"

static void test_rows_complete(void **state) {
  (void)state;
  const int n = tessera_setting_count();
  assert_true(n >= 15);
  assert_null(tessera_setting(-1));
  assert_null(tessera_setting(n));
  for (int i = 0; i < n; i++) {
    const tessera_setting_t *s = tessera_setting(i);
    assert_non_null(s);
    assert_int_equal(strncmp(s->name, "TESSERA_", 8), 0);
    assert_true(*s->accepts && *s->fallback && *s->doc && *s->reader);
    for (int j = 0; j < i; j++) assert_string_not_equal(tessera_setting(j)->name, s->name);
  }
}

/* Resolves the environment with `name` set to `value`; the status, and the message in msg. */
static int resolve_with(const char *name, const char *value, tessera_config_t *cfg, char *msg,
                        size_t len) {
  tessera_config_init(cfg);
  assert_int_equal(setenv(name, value, 1), 0);
  msg[0] = 0;
  const int rc = tessera_config_from_env(cfg, msg, len);
  assert_int_equal(unsetenv(name), 0);
  return rc;
}

/* Every row refuses garbage, and says which variable and what it takes. */
static void test_every_row_is_strict(void **state) {
  (void)state;
  for (int i = 0; i < tessera_setting_count(); i++) {
    const tessera_setting_t *s = tessera_setting(i);
    if (strstr(s->accepts, "path")) continue; /* any non-empty text is a path */
    tessera_config_t cfg;
    char msg[256];
    if (resolve_with(s->name, "12abc", &cfg, msg, sizeof msg) != TESSERA_ERR_ENV)
      fail_msg("%s=12abc was accepted", s->name);
    assert_non_null(strstr(msg, s->name));
    assert_non_null(strstr(msg, s->accepts));
    assert_int_equal(msg[strlen(msg) - 1], '.');
  }
}

static void test_ranges_and_words(void **state) {
  (void)state;
  tessera_config_t cfg;
  char msg[256];
  static const char *const bad[][2] = {
      {"TESSERA_GPU_QUEUES", "0"},      {"TESSERA_GPU_QUEUES", "5"},
      {"TESSERA_GPU_FLIGHTS", "1"},     {"TESSERA_CPU_WORKERS", "-1"},
      {"TESSERA_SIM_DEVICES", "seven"}, {"TESSERA_SIM_DEVICES", "17"},
      {"TESSERA_SCHED", "eager"},       {"TESSERA_DIST_TRANSFERS", "hots"},
      {"TESSERA_GPU_MEM_LIMIT", "8Q"},  {"TESSERA_GPU_MEM_LIMIT", "0"},
      {"TESSERA_COMM_TIMEOUT", "-3"},   {"TESSERA_COMM_TIMEOUT", "inf"},
      {"TESSERA_TRSM_INVERSE", "yes"},  {"TESSERA_BIND", "2"},
      {"TESSERA_GRID", "2y2"},          {"TESSERA_GRID", "0x4"},
      {"TESSERA_MAX_SUBMITTED", "1.5"}, {"TESSERA_TILE", "0x10"},
      {"TESSERA_JAX_TIMEOUT", "soon"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    if (resolve_with(bad[i][0], bad[i][1], &cfg, msg, sizeof msg) != TESSERA_ERR_ENV)
      fail_msg("%s=%s was accepted", bad[i][0], bad[i][1]);
  assert_int_equal(resolve_with("TESSERA_GPU_QUEUES", "2", &cfg, msg, sizeof msg), 0);
  assert_int_equal(cfg.gpu_queues, 2);
  assert_int_equal(resolve_with("TESSERA_SCHED", "locality", &cfg, msg, sizeof msg), 0);
  assert_int_equal(cfg.sched, TESSERA_SCHED_LOCALITY);
  assert_int_equal(resolve_with("TESSERA_DIST_TRANSFERS", "host", &cfg, msg, sizeof msg), 0);
  assert_int_equal(cfg.dist_transfers, TESSERA_TRANSFERS_HOST);
  assert_int_equal(resolve_with("TESSERA_GPU_MEM_LIMIT", "512M", &cfg, msg, sizeof msg), 0);
  assert_int_equal(cfg.gpu_mem_limit, (int64_t)512 << 20);
  assert_int_equal(resolve_with("TESSERA_COMM_TIMEOUT", "2.5", &cfg, msg, sizeof msg), 0);
  assert_true(cfg.comm_timeout_s == 2.5);
  assert_int_equal(resolve_with("TESSERA_TRSM_INVERSE", "0", &cfg, msg, sizeof msg), 0);
  assert_int_equal(cfg.trsm_inverse, 0);
  assert_int_equal(resolve_with("TESSERA_GRID", "2x3", &cfg, msg, sizeof msg), 0);
  assert_int_equal(cfg.distributed, 1);
  assert_int_equal(cfg.grid_p, 2);
  assert_int_equal(cfg.grid_q, 3);
  assert_int_equal(resolve_with("TESSERA_GRID", "auto", &cfg, msg, sizeof msg), 0);
  assert_int_equal(cfg.distributed, 1);
  assert_int_equal(cfg.grid_p, -1);
  /* unset and empty leave the field "auto" */
  assert_int_equal(resolve_with("TESSERA_GPUS", "", &cfg, msg, sizeof msg), 0);
  assert_int_equal(cfg.gpus, -1);
  assert_int_equal(tessera_config_from_env(NULL, msg, sizeof msg), -1);
}

/* A field given in the configuration is not overwritten by the environment. */
static void test_explicit_wins(void **state) {
  (void)state;
  tessera_config_t cfg;
  tessera_config_init(&cfg);
  cfg.gpu_queues = 3;
  cfg.sched = TESSERA_SCHED_COST;
  assert_int_equal(setenv("TESSERA_GPU_QUEUES", "1", 1), 0);
  assert_int_equal(setenv("TESSERA_SCHED", "locality", 1), 0);
  assert_int_equal(tessera_config_from_env(&cfg, NULL, 0), 0);
  assert_int_equal(cfg.gpu_queues, 3);
  assert_int_equal(cfg.sched, TESSERA_SCHED_COST);
  unsetenv("TESSERA_GPU_QUEUES");
  unsetenv("TESSERA_SCHED");
}

/* A context's values in force, as `tessera info` shows them. */
static void test_show(void **state) {
  (void)state;
  tessera_config_t cfg;
  tessera_config_init(&cfg);
  cfg.cpu_workers = 2;
  cfg.gpus = 0;
  cfg.perfmodel_file = "none";
  assert_int_equal(setenv("TESSERA_GPU_QUEUES", "3", 1), 0);
  tessera_context_t *ctx = NULL;
  assert_int_equal(tessera_init(&ctx, &cfg), 0);
  unsetenv("TESSERA_GPU_QUEUES");
  char buf[160];
  int seen = 0;
  for (int i = 0; i < tessera_setting_count(); i++) {
    assert_int_equal(tessera_setting_show(tessera_config(ctx), i, buf, sizeof buf), 0);
    const char *name = tessera_setting(i)->name;
    if (!strcmp(name, "TESSERA_GPU_QUEUES")) seen += !strcmp(buf, "3");
    if (!strcmp(name, "TESSERA_CPU_WORKERS")) seen += !strcmp(buf, "2");
    if (!strcmp(name, "TESSERA_SCHED")) seen += !strcmp(buf, "cost");
    if (!strcmp(name, "TESSERA_PERFMODEL")) seen += !strcmp(buf, "none");
  }
  assert_int_equal(seen, 4);
  assert_int_equal(tessera_setting_show(NULL, -1, buf, sizeof buf), -1);
  assert_int_equal(tessera_setting_show(NULL, 0, buf, 0), -1);
  tessera_finalize(ctx);
}

/* A malformed variable fails tessera_init, whatever reads it. */
static void test_init_refuses(void **state) {
  (void)state;
  tessera_context_t *ctx = NULL;
  assert_int_equal(setenv("TESSERA_DIST_TRANSFERS", "devcie", 1), 0);
  assert_int_equal(tessera_init(&ctx, NULL), TESSERA_ERR_ENV);
  assert_null(ctx);
  unsetenv("TESSERA_DIST_TRANSFERS");
}

/* The CPU worker count has one bound whether the variable or the configuration gives it, and one
 * sentence refusing a count past it, saying what the row takes. */
static void test_worker_count_has_one_bound(void **state) {
  (void)state;
  const tessera_setting_t *row = NULL;
  for (int i = 0; i < tessera_setting_count(); i++)
    if (!strcmp(tessera_setting(i)->name, "TESSERA_CPU_WORKERS")) row = tessera_setting(i);
  assert_non_null(row);
  int most = 0;
  assert_int_equal(sscanf(row->accepts, "an integer from 0 to %d", &most), 1);
  char over[16], said[512];
  snprintf(over, sizeof over, "%d", most + 1);
  tessera_config_t cfg;
  assert_int_equal(resolve_with("TESSERA_CPU_WORKERS", over, &cfg, said, sizeof said),
                   TESSERA_ERR_ENV);
  snprintf(over, sizeof over, "%d", most);
  assert_int_equal(resolve_with("TESSERA_CPU_WORKERS", over, &cfg, said, sizeof said), 0);
  assert_int_equal(cfg.cpu_workers, most);

  tessera_config_init(&cfg);
  cfg.gpus = 0;
  cfg.cpu_workers = 5000;
  tessera_context_t *ctx = NULL;
  assert_int_equal(tt_init_saying(&ctx, &cfg, said, sizeof said), -2);
  assert_null(ctx);
  assert_non_null(strstr(said, "cpu_workers = 5000 is not valid"));
  assert_non_null(strstr(said, row->accepts));
  tessera_config_init(&cfg);
  cfg.gpus = 0;
  assert_int_equal(setenv("TESSERA_CPU_WORKERS", "5000", 1), 0);
  assert_int_equal(tt_init_saying(&ctx, &cfg, said, sizeof said), TESSERA_ERR_ENV);
  assert_null(ctx);
  unsetenv("TESSERA_CPU_WORKERS");
  assert_non_null(strstr(said, "TESSERA_CPU_WORKERS=\"5000\" is not valid"));
  assert_non_null(strstr(said, row->accepts));
}

static void test_by_name(void **state) {
  (void)state;
  double t = 0;
  char msg[200];
  unsetenv("TESSERA_JAX_TIMEOUT");
  assert_int_equal(tessera_setting_number("TESSERA_JAX_TIMEOUT", &t, msg, sizeof msg), 0);
  assert_true(t == 60);
  assert_int_equal(setenv("TESSERA_JAX_TIMEOUT", "0.5", 1), 0);
  assert_int_equal(tessera_setting_number("TESSERA_JAX_TIMEOUT", &t, msg, sizeof msg), 0);
  assert_true(t == 0.5);
  assert_int_equal(setenv("TESSERA_JAX_TIMEOUT", "0", 1), 0);
  assert_int_equal(tessera_setting_number("TESSERA_JAX_TIMEOUT", &t, msg, sizeof msg),
                   TESSERA_ERR_ENV);
  assert_non_null(strstr(msg, "TESSERA_JAX_TIMEOUT"));
  unsetenv("TESSERA_JAX_TIMEOUT");
  assert_int_equal(tessera_setting_number("TESSERA_GPUS", &t, msg, sizeof msg), 0);
  assert_true(isnan(t)); /* its default depends on the machine */
  assert_int_equal(tessera_setting_number("TESSERA_NOPE", &t, msg, sizeof msg), -1);
  assert_int_equal(tessera_setting_number("TESSERA_TRACE", &t, msg, sizeof msg), -1);
  assert_int_equal(tessera_setting_number("TESSERA_GPUS", NULL, msg, sizeof msg), -1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_rows_complete),
      cmocka_unit_test(test_every_row_is_strict),
      cmocka_unit_test(test_ranges_and_words),
      cmocka_unit_test(test_explicit_wins),
      cmocka_unit_test(test_show),
      cmocka_unit_test(test_init_refuses),
      cmocka_unit_test(test_worker_count_has_one_bound),
      cmocka_unit_test(test_by_name),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
