/* The rendezvous of the JAX binding's handlers (python/ffi/rendezvous.c): one leader per call
 * that sees every participant's slot and hands its status and result to all; calls with the same
 * key one after another; calls with other keys at the same time; a participant that never
 * arrives fails the others with TESSERA_ERR_TIMEOUT within the bound; participants that disagree
 * (count, slot size, a rank twice) fail together; a leader that leaves without finishing fails
 * its followers.
 */
/* ctest-label: unit */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "../test_common.h"
#include "rendezvous.h"

enum { MAXT = 8 };

typedef struct {
  tsr_rdv_table_t *t;
  int64_t run, site;
  int rank, n, rounds;
  int finish;          /* the leader finishes (else it leaves without) */
  int led, status[16]; /* out: rounds led, status seen per round */
  double result[16];
} part_t;

/* Joins `rounds` rendezvous in a row under one key; a leader sums the slots (the ranks). */
static void *participant(void *arg) {
  part_t *p = arg;
  for (int k = 0; k < p->rounds; k++) {
    tsr_rdv_t *r = NULL;
    int rc = tsr_rdv_join(p->t, p->run, p->site, p->rank, p->n, &p->rank, sizeof p->rank, &r);
    if (rc == 1) {
      p->led++;
      double sum = 0;
      for (int i = 0; i < p->n; i++) sum += *(const int *)tsr_rdv_slot(r, i);
      if (p->finish) tsr_rdv_finish(p->t, r, 1000 + k, &sum, sizeof sum);
      p->status[k] = p->finish ? 1000 + k : 0;
      p->result[k] = sum;
    } else if (rc == 0) {
      p->status[k] = tsr_rdv_status(r);
      memcpy(&p->result[k], tsr_rdv_result(r), sizeof p->result[k]);
    } else {
      p->status[k] = rc;
    }
    tsr_rdv_leave(p->t, r);
  }
  return NULL;
}

/* Runs n participants (n_arrive of them actually) of key (run, site). */
static void run_parts(tsr_rdv_table_t *t, part_t *ps, int n, int n_arrive, int64_t run, int rounds,
                      int finish) {
  pthread_t th[MAXT];
  for (int i = 0; i < n_arrive; i++) {
    ps[i] = (part_t){
        .t = t, .run = run, .site = 7, .rank = i, .n = n, .rounds = rounds, .finish = finish};
    assert_int_equal(pthread_create(&th[i], NULL, participant, &ps[i]), 0);
  }
  for (int i = 0; i < n_arrive; i++) pthread_join(th[i], NULL);
}

static void test_leader_and_rounds(void **state) {
  (void)state;
  tsr_rdv_table_t t;
  assert_int_equal(tsr_rdv_table_init(&t, 30.0), 0);
  part_t ps[MAXT];
  int rounds = 12, n = 4;
  run_parts(&t, ps, n, n, 1, rounds, 1);
  int led = 0;
  for (int i = 0; i < n; i++) {
    led += ps[i].led;
    for (int k = 0; k < rounds; k++) {
      assert_int_equal(ps[i].status[k], 1000 + k);
      assert_true(ps[i].result[k] == 0 + 1 + 2 + 3);
    }
  }
  assert_int_equal(led, rounds); /* one leader per round */
  assert_null(t.open);
  tsr_rdv_table_destroy(&t);
}

/* Two calls with different keys at once do not mix their participants. */
static void test_keys_apart(void **state) {
  (void)state;
  tsr_rdv_table_t t;
  assert_int_equal(tsr_rdv_table_init(&t, 30.0), 0);
  part_t ps[MAXT];
  pthread_t th[MAXT];
  for (int i = 0; i < 6; i++) {
    ps[i] = (part_t){
        .t = &t, .run = 10 + i % 2, .site = 3, .rank = i / 2, .n = 3, .rounds = 5, .finish = 1};
    assert_int_equal(pthread_create(&th[i], NULL, participant, &ps[i]), 0);
  }
  for (int i = 0; i < 6; i++) pthread_join(th[i], NULL);
  for (int i = 0; i < 6; i++)
    for (int k = 0; k < 5; k++) {
      assert_int_equal(ps[i].status[k], 1000 + k);
      assert_true(ps[i].result[k] == 0 + 1 + 2);
    }
  tsr_rdv_table_destroy(&t);
}

/* 2 of 3 participants arrive: both fail with TESSERA_ERR_TIMEOUT after about the bound. */
static void test_timeout(void **state) {
  (void)state;
  tsr_rdv_table_t t;
  assert_int_equal(tsr_rdv_table_init(&t, 0.3), 0);
  part_t ps[MAXT];
  double t0 = tt_now();
  run_parts(&t, ps, 3, 2, 5, 1, 1);
  double dt = tt_now() - t0;
  for (int i = 0; i < 2; i++) assert_int_equal(ps[i].status[0], TESSERA_ERR_TIMEOUT);
  assert_true(dt >= 0.29);
  assert_true(dt < 10.0); /* bounded: no hang (the bound is 0.3 s) */
  assert_null(t.open);
  /* The key is free again: a full set of participants now succeeds. */
  run_parts(&t, ps, 3, 3, 5, 1, 1);
  for (int i = 0; i < 3; i++) assert_int_equal(ps[i].status[0], 1000);
  tsr_rdv_table_destroy(&t);
}

/* A participant that names another count, or a rank taken twice, fails the rendezvous. */
static void test_mismatch(void **state) {
  (void)state;
  tsr_rdv_table_t t;
  assert_int_equal(tsr_rdv_table_init(&t, 5.0), 0);
  tsr_rdv_t *r1 = NULL, *r2 = NULL;
  int v = 0;
  pthread_t th;
  part_t waiter = {.t = &t, .run = 9, .site = 1, .rank = 0, .n = 3, .rounds = 1, .finish = 1};
  assert_int_equal(pthread_create(&th, NULL, participant, &waiter), 0);
  tt_sleep_us(50000);
  /* rank 0 again: taken */
  assert_int_equal(tsr_rdv_join(&t, 9, 1, 0, 3, &v, sizeof v, &r1), TESSERA_ERR_STATE);
  pthread_join(th, NULL);
  assert_int_equal(waiter.status[0], TESSERA_ERR_STATE);
  tsr_rdv_leave(&t, r1);
  /* another count than the first participant's */
  assert_int_equal(pthread_create(&th, NULL, participant, &waiter), 0);
  tt_sleep_us(50000);
  assert_int_equal(tsr_rdv_join(&t, 9, 1, 1, 4, &v, sizeof v, &r2), TESSERA_ERR_STATE);
  pthread_join(th, NULL);
  assert_int_equal(waiter.status[0], TESSERA_ERR_STATE);
  tsr_rdv_leave(&t, r2);
  /* a rank out of range, alone */
  assert_int_equal(tsr_rdv_join(&t, 9, 2, 5, 2, &v, sizeof v, &r1), TESSERA_ERR_STATE);
  tsr_rdv_leave(&t, r1);
  assert_null(t.open);
  tsr_rdv_table_destroy(&t);
}

/* A leader that leaves without finishing fails its followers. */
static void test_leader_gone(void **state) {
  (void)state;
  tsr_rdv_table_t t;
  assert_int_equal(tsr_rdv_table_init(&t, 30.0), 0);
  part_t ps[MAXT];
  run_parts(&t, ps, 3, 3, 4, 1, 0);
  int led = 0;
  for (int i = 0; i < 3; i++) {
    if (ps[i].led) {
      led++;
      continue;
    }
    assert_int_equal(ps[i].status[0], TESSERA_ERR_STATE);
  }
  assert_int_equal(led, 1);
  tsr_rdv_table_destroy(&t);
}

static void test_alone(void **state) {
  (void)state;
  tsr_rdv_table_t t;
  assert_int_equal(tsr_rdv_table_init(&t, 0.0), -1);
  assert_int_equal(tsr_rdv_table_init(&t, 1.0), 0);
  part_t ps[1];
  run_parts(&t, ps, 1, 1, 3, 3, 1);
  assert_int_equal(ps[0].led, 3);
  tsr_rdv_table_destroy(&t);
}

int main(void) {
  tt_watchdog(120);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_leader_and_rounds), cmocka_unit_test(test_keys_apart),
      cmocka_unit_test(test_timeout),           cmocka_unit_test(test_mismatch),
      cmocka_unit_test(test_leader_gone),       cmocka_unit_test(test_alone),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
