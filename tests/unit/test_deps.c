/* Dependency inference: task flows on small int64 handles must give exactly the result of
 * running the same tasks one after another in plain C (RAW, WAR and WAW edges, duplicated
 * handles in one task), for both scheduler policies and 1, 2 and 4 CPU workers.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <tessera/tessera.h>

#include "../test_common.h"

#define HL 4 /* int64 elements per handle */
#define MAXS TESSERA_MAX_TASK_DATA
#define MASK61 ((UINT64_C(1) << 61) - 1)
#define SENTINEL INT64_MIN

/* One task's arguments (copied into the task). Slot s touches handle data[s] with mode[s]:
 *   R  : results[tid * MAXS + s] = digest(h); the digest also feeds `acc`
 *   W  : h[e] = mix(seed, tid, s, e) + acc           (does not read h)
 *   RW : h[e] = h[e] * 31 + tid + e + acc  (mod 2^61)
 * where acc accumulates the digests read by earlier R slots of the same task, so values flow
 * along the graph. Slots are applied in order, on the same memory when a handle repeats. */
typedef struct {
  int64_t *results;
  uint64_t seed;
  int32_t tid;
  int32_t nd;
  int8_t mode[MAXS];
  uint32_t spin;     /* busy iterations before running */
  uint32_t sleep_us; /* sleep before running */
} op_args_t;

static atomic_int g_bad_exec; /* kernels that saw an inconsistent tessera_exec_t */
static atomic_int g_nworkers;

static uint64_t digest(const int64_t *h) {
  uint64_t d = 0;
  for (int e = 0; e < HL; e++) d = d * 1000003u + (uint64_t)h[e];
  return d & MASK61;
}

static void apply(const op_args_t *a, int64_t *const *p) {
  uint64_t acc = 0;
  if (a->spin) {
    volatile uint32_t x = 0;
    for (uint32_t i = 0; i < a->spin; i++) x += i;
  }
  if (a->sleep_us) tt_sleep_us((long)a->sleep_us);
  for (int s = 0; s < a->nd; s++) {
    int64_t *h = p[s];
    switch (a->mode[s]) {
    case TESSERA_R: {
      uint64_t d = digest(h);
      a->results[(size_t)a->tid * MAXS + (size_t)s] = (int64_t)d;
      acc = (acc * 7 + d) & MASK61;
      break;
    }
    case TESSERA_W:
      for (int e = 0; e < HL; e++)
        h[e] =
            (int64_t)((tt_mix(a->seed ^ ((uint64_t)a->tid * 131 + (uint64_t)(s * HL + e))) + acc) &
                      MASK61);
      break;
    default:
      for (int e = 0; e < HL; e++)
        h[e] = (int64_t)(((uint64_t)h[e] * 31 + (uint64_t)a->tid + (uint64_t)e + acc) & MASK61);
      break;
    }
  }
}

static int op_kernel(const tessera_exec_t *ex, void *args) {
  const op_args_t *a = args;
  if (ex->ndata != a->nd || ex->kind != TESSERA_DEVICE_CPU || ex->worker < 0 ||
      ex->worker >= atomic_load(&g_nworkers))
    atomic_fetch_add(&g_bad_exec, 1);
  for (int s = 0; s < a->nd; s++)
    if (!ex->ptr[s]) {
      atomic_fetch_add(&g_bad_exec, 1);
      return 0;
    }
  apply(a, (int64_t *const *)ex->ptr);
  return 0;
}

static const tessera_kernel_t k_op = {.name = "test_deps_op",
                                      .impl = {[TESSERA_DEVICE_CPU] = op_kernel}};

/* A flow to check: tasks on handles 0..H-1. Handles below `ncreated` are made with
 * tessera_data_create (their first task must write them); the others register user memory. */
typedef struct {
  op_args_t a;
  int h[MAXS];
  int prio;
} spec_t;

typedef struct {
  spec_t *t;
  int n, cap, H, ncreated;
  uint64_t seed;
  int sync_at; /* > 0: tessera_data_sync one handle after inserting that many tasks */
} flow_t;

static flow_t flow_new(int H, int ncreated, uint64_t seed) {
  flow_t f = {NULL, 0, 0, H, ncreated, seed, 0};
  return f;
}

/* Appends a task touching `nd` handles (hs[]) with modes (ms[]). */
static void flow_add(flow_t *f, int nd, const int *hs, const int *ms, uint32_t spin, uint32_t us) {
  if (f->n == f->cap) {
    f->cap = f->cap ? 2 * f->cap : 1024;
    f->t = realloc(f->t, (size_t)f->cap * sizeof *f->t);
    assert_non_null(f->t);
  }
  spec_t *t = &f->t[f->n];
  memset(t, 0, sizeof *t);
  t->a.seed = f->seed;
  t->a.tid = f->n;
  t->a.nd = nd;
  t->a.spin = spin;
  t->a.sleep_us = us;
  for (int s = 0; s < nd && s < MAXS; s++) {
    t->h[s] = hs[s];
    t->a.mode[s] = (int8_t)ms[s];
  }
  t->prio = (int)(tt_mix(f->seed + (uint64_t)f->n) % 5) - 2;
  f->n++;
}

static void flow_add1(flow_t *f, int h, int mode, uint32_t us) {
  flow_add(f, 1, &h, &mode, 0, us);
}

static int64_t init_value(uint64_t seed, int h, int e) {
  return (int64_t)(tt_mix(seed * 977 + (uint64_t)(h * HL + e)) & MASK61);
}

/* Runs the flow on `ctx` and sequentially, and compares every handle and every read. */
static void flow_check(tessera_context_t *ctx, flow_t *f) {
  int H = f->H, n = f->n;
  int64_t *ref = malloc((size_t)H * HL * sizeof *ref);
  int64_t *mem = malloc((size_t)H * HL * sizeof *mem);
  size_t nres = (size_t)(n ? n : 1) * MAXS;
  int64_t *res = malloc(nres * sizeof *res), *rres = malloc(nres * sizeof *rres);
  tessera_data_t **hd = calloc((size_t)H, sizeof *hd);
  assert_true(ref && mem && res && rres && hd);
  for (size_t i = 0; i < nres; i++) res[i] = rres[i] = SENTINEL;
  for (int h = 0; h < H; h++)
    for (int e = 0; e < HL; e++) ref[h * HL + e] = mem[h * HL + e] = init_value(f->seed, h, e);

  /* sequential reference, with a snapshot of handle `hs` after sync_at tasks */
  int hs = (int)(f->seed % (uint64_t)H);
  int64_t snap[HL];
  memcpy(snap, &ref[hs * HL], sizeof snap);
  for (int i = 0; i < n; i++) {
    if (i == f->sync_at) memcpy(snap, &ref[hs * HL], sizeof snap);
    op_args_t a = f->t[i].a;
    int64_t *p[MAXS];
    a.results = rres;
    a.spin = a.sleep_us = 0;
    for (int s = 0; s < a.nd; s++) p[s] = &ref[f->t[i].h[s] * HL];
    apply(&a, p);
  }

  /* tessera */
  atomic_store(&g_bad_exec, 0);
  atomic_store(&g_nworkers, tessera_worker_count(ctx));
  for (int h = 0; h < H; h++) {
    int rc = h < f->ncreated ? tessera_data_create(ctx, HL, 1, sizeof(int64_t), &hd[h])
                             : tessera_data_register(ctx, TESSERA_HOST_NODE, &mem[h * HL], HL, 1,
                                                     HL, sizeof(int64_t), &hd[h]);
    assert_int_equal(rc, 0);
    assert_non_null(hd[h]);
  }
  for (int i = 0; i < n; i++) {
    if (i == f->sync_at && i > 0) { /* the handle's tasks so far are done, others may run */
      assert_int_equal(tessera_data_sync(ctx, hd[hs]), 0);
      const int64_t *p = tessera_data_ptr(hd[hs]);
      assert_non_null(p);
      if (memcmp(p, snap, sizeof snap) != 0)
        fail_msg("seed %llu: handle %d after tessera_data_sync at task %d = %lld, sequential %lld",
                 (unsigned long long)f->seed, hs, i, (long long)p[0], (long long)snap[0]);
    }
    tessera_task_t t;
    memset(&t, 0, sizeof t);
    f->t[i].a.results = res;
    t.kernel = &k_op;
    t.args = &f->t[i].a;
    t.args_size = sizeof(op_args_t);
    t.ndata = f->t[i].a.nd;
    for (int s = 0; s < t.ndata; s++) {
      t.data[s] = hd[f->t[i].h[s]];
      t.mode[s] = (tessera_access_t)f->t[i].a.mode[s];
    }
    t.priority = f->t[i].prio;
    t.tag[0] = i;
    t.ntag = 1;
    int rc = tessera_task_insert(ctx, &t);
    if (rc != 0) fail_msg("task %d insert: %d (%s)", i, rc, tessera_last_error(ctx));
  }
  assert_int_equal(tessera_wait_all(ctx), 0);
  for (int h = 0; h < H; h++) {
    if (h < f->ncreated) {
      assert_int_equal(tessera_data_sync(ctx, hd[h]), 0);
      const int64_t *p = tessera_data_ptr(hd[h]);
      assert_non_null(p);
      memcpy(&mem[h * HL], p, HL * sizeof *p);
    }
    assert_int_equal(tessera_data_release(ctx, hd[h]), 0);
  }
  assert_int_equal(atomic_load(&g_bad_exec), 0);
  for (int h = 0; h < H; h++)
    for (int e = 0; e < HL; e++)
      if (mem[h * HL + e] != ref[h * HL + e])
        fail_msg("seed %llu: handle %d[%d] = %lld, sequential gives %lld",
                 (unsigned long long)f->seed, h, e, (long long)mem[h * HL + e],
                 (long long)ref[h * HL + e]);
  for (size_t i = 0; i < (size_t)n * MAXS; i++)
    if (res[i] != rres[i])
      fail_msg("seed %llu: task %d slot %d read %lld, sequential reads %lld",
               (unsigned long long)f->seed, (int)(i / MAXS), (int)(i % MAXS), (long long)res[i],
               (long long)rres[i]);
  free(ref);
  free(mem);
  free(res);
  free(rres);
  free(hd);
  free(f->t);
  f->t = NULL;
  f->n = f->cap = 0;
}

/* ---------------------------------------------------------------- contexts */

static const tessera_sched_policy_t policies[2] = {TESSERA_SCHED_COST, TESSERA_SCHED_LOCALITY};
static const int worker_counts[3] = {1, 2, 4};

/* ---------------------------------------------------------------- random graphs */

static void random_flow(flow_t *f, int ntasks) {
  tt_rng_t r = tt_rng(f->seed);
  static const int modes[5] = {TESSERA_R, TESSERA_R, TESSERA_W, TESSERA_RW, TESSERA_RW};
  for (int h = 0; h < f->ncreated; h++) flow_add1(f, h, TESSERA_W, 0);
  for (int i = 0; i < ntasks; i++) {
    int nd = 1 + (int)tt_below(&r, 4), hs[MAXS], ms[MAXS];
    for (int s = 0; s < nd; s++) {
      hs[s] = (s > 0 && tt_below(&r, 8) == 0) ? hs[tt_below(&r, (uint64_t)s)]
                                              : (int)tt_below(&r, (uint64_t)f->H);
      ms[s] = modes[tt_below(&r, 5)];
    }
    uint32_t spin = tt_below(&r, 4) == 0 ? (uint32_t)tt_below(&r, 20000) : 0;
    flow_add(f, nd, hs, ms, spin, 0);
  }
}

static void test_random_graphs(void **state) {
  (void)state;
  int quick = tt_quick();
  int nseeds = quick ? 16 : 50, ntasks = quick ? 1000 : 2000;
  for (int p = 0; p < 2; p++)
    for (int w = 0; w < 3; w++) {
      tessera_context_t *ctx = tt_cpu_context(worker_counts[w], policies[p]);
      for (int seed = 1; seed <= nseeds; seed++) {
        uint64_t sd = (uint64_t)seed * 1000 + (uint64_t)(p * 10 + w);
        int H = 2 + seed % 23;
        flow_t f = flow_new(H, (seed % 3 == 0) ? H / 2 : 0, sd);
        random_flow(&f, ntasks);
        f.sync_at = (seed % 2) ? f.n / 2 + seed : 0;
        flow_check(ctx, &f);
      }
      assert_int_equal(tessera_finalize(ctx), 0);
    }
}

/* ---------------------------------------------------------------- explicit hazards */

/* Runs `build` once per policy with 4 workers (and 1 worker) and checks the result. */
static void for_each_ctx(void (*build)(flow_t *), int H) {
  for (int p = 0; p < 2; p++)
    for (int w = 0; w < 3; w += 2) {
      tessera_context_t *ctx = tt_cpu_context(worker_counts[w], policies[p]);
      flow_t f = flow_new(H, 0, 77 + (uint64_t)p);
      build(&f);
      flow_check(ctx, &f);
      assert_int_equal(tessera_finalize(ctx), 0);
    }
}

/* WAR: slow readers must see the old value although a writer follows at once. */
static void build_war(flow_t *f) {
  for (int i = 0; i < 6; i++) flow_add1(f, 0, TESSERA_R, 20000);
  flow_add1(f, 0, TESSERA_W, 0);
  flow_add1(f, 0, TESSERA_R, 0);
  /* reader of h0 also writes h1 slowly; a later writer of h0 must not overtake it */
  int hs[2] = {0, 1}, ms[2] = {TESSERA_R, TESSERA_RW};
  flow_add(f, 2, hs, ms, 0, 30000);
  flow_add1(f, 0, TESSERA_RW, 0);
  flow_add1(f, 0, TESSERA_W, 0);
  flow_add1(f, 1, TESSERA_R, 0);
}

/* WAW: a slow writer followed by a fast one; the last write must win. */
static void build_waw(flow_t *f) {
  flow_add1(f, 0, TESSERA_W, 30000);
  flow_add1(f, 0, TESSERA_W, 0);
  flow_add1(f, 1, TESSERA_W, 30000);
  flow_add1(f, 1, TESSERA_RW, 0);
  flow_add1(f, 1, TESSERA_W, 0);
  flow_add1(f, 2, TESSERA_RW, 20000);
  flow_add1(f, 2, TESSERA_W, 0);
  flow_add1(f, 2, TESSERA_R, 0);
  /* RAW: a slow writer, then readers */
  flow_add1(f, 3, TESSERA_W, 30000);
  flow_add1(f, 3, TESSERA_R, 0);
  flow_add1(f, 3, TESSERA_R, 0);
}

/* The same handle twice (or more) in one task. */
static void build_dup(flow_t *f) {
  static const int pairs[][2] = {{TESSERA_R, TESSERA_RW}, {TESSERA_RW, TESSERA_R},
                                 {TESSERA_W, TESSERA_R},  {TESSERA_R, TESSERA_R},
                                 {TESSERA_R, TESSERA_W},  {TESSERA_RW, TESSERA_RW}};
  for (int i = 0; i < 6; i++) {
    int hs[3] = {i % 2, i % 2, 2}, ms[3] = {pairs[i][0], pairs[i][1], TESSERA_R};
    flow_add(f, 3, hs, ms, 0, i == 0 ? 20000 : 0);
    flow_add1(f, 2, TESSERA_RW, 0);
    flow_add1(f, i % 2, TESSERA_R, 0);
  }
  int hs[MAXS], ms[MAXS];
  for (int s = 0; s < MAXS; s++) {
    hs[s] = 3;
    ms[s] = (s % 3 == 0) ? TESSERA_R : (s % 3 == 1 ? TESSERA_RW : TESSERA_W);
  }
  flow_add(f, MAXS, hs, ms, 0, 10000);
  flow_add1(f, 3, TESSERA_R, 0);
}

static void test_war(void **state) {
  (void)state;
  for_each_ctx(build_war, 2);
}
static void test_waw_raw(void **state) {
  (void)state;
  for_each_ctx(build_waw, 4);
}
static void test_duplicate_handles(void **state) {
  (void)state;
  for_each_ctx(build_dup, 4);
}

/* ---------------------------------------------------------------- shapes */

static int g_chain_len = 10000, g_readers = 20000, g_leaves = 1024;

static void build_chain(flow_t *f) {
  for (int i = 0; i < g_chain_len; i++) flow_add1(f, 0, (i % 97 == 50) ? TESSERA_W : TESSERA_RW, 0);
  flow_add1(f, 0, TESSERA_R, 0);
}

/* 20000 independent readers of one handle, then one writer that must wait for all of them. */
static void build_independent(flow_t *f) {
  flow_add1(f, 0, TESSERA_W, 0);
  for (int i = 0; i < g_readers; i++) flow_add1(f, 0, TESSERA_R, (i % 4999 == 0) ? 20000 : 0);
  flow_add1(f, 0, TESSERA_RW, 0);
  flow_add1(f, 0, TESSERA_R, 0);
}

/* Fan-out from handle 0 to `leaves` handles, then a fan-in tree (8 inputs per task), then a
 * writer of the root after all its readers. */
static void build_fan(flow_t *f) {
  int leaves = f->H - 1;
  flow_add1(f, 0, TESSERA_W, 0);
  for (int i = 0; i < leaves; i++) {
    int hs[2] = {0, 1 + i}, ms[2] = {TESSERA_R, TESSERA_W};
    flow_add(f, 2, hs, ms, (i % 64 == 0) ? 50000 : 0, 0);
  }
  for (int width = 1; width < leaves; width *= MAXS)
    for (int g = 0; g + width < leaves; g += width * MAXS) {
      int hs[MAXS], ms[MAXS], nd = 0;
      for (int c = 1; c < MAXS && g + c * width < leaves; c++) {
        hs[nd] = 1 + g + c * width;
        ms[nd++] = TESSERA_R;
      }
      hs[nd] = 1 + g;
      ms[nd++] = TESSERA_RW;
      flow_add(f, nd, hs, ms, 0, 0);
    }
  flow_add1(f, 0, TESSERA_RW, 0);
  flow_add1(f, 1, TESSERA_R, 0);
}

static void test_long_chain(void **state) {
  (void)state;
  g_chain_len = tt_quick() ? 2000 : 10000;
  for_each_ctx(build_chain, 1);
}
static void test_many_independent(void **state) {
  (void)state;
  g_readers = tt_quick() ? 4000 : 20000;
  for_each_ctx(build_independent, 1);
}
static void test_fan_out_in(void **state) {
  (void)state;
  g_leaves = tt_quick() ? 256 : 1024;
  for_each_ctx(build_fan, 1 + g_leaves);
}

/* Many flows in one context, each checked after wait_all, with handles released mid-way by
 * tessera_data_release alone (it waits for the handle's tasks). */
static void test_release_waits(void **state) {
  (void)state;
  tessera_context_t *ctx = tt_cpu_context(4, TESSERA_SCHED_COST);
  int64_t v[HL] = {1, 2, 3, 4};
  tessera_data_t *h = NULL;
  assert_int_equal(tessera_data_register(ctx, TESSERA_HOST_NODE, v, HL, 1, HL, sizeof(int64_t), &h),
                   0);
  op_args_t a;
  memset(&a, 0, sizeof a);
  a.nd = 1;
  a.mode[0] = TESSERA_RW;
  a.sleep_us = 2000;
  int64_t ref[HL] = {1, 2, 3, 4};
  int64_t *rp[1] = {ref};
  for (int i = 0; i < 20; i++) {
    a.tid = i;
    tessera_task_t t;
    memset(&t, 0, sizeof t);
    t.kernel = &k_op;
    t.args = &a;
    t.args_size = sizeof a;
    t.ndata = 1;
    t.data[0] = h;
    t.mode[0] = TESSERA_RW;
    assert_int_equal(tessera_task_insert(ctx, &t), 0);
    op_args_t b = a;
    b.sleep_us = 0;
    apply(&b, rp);
  }
  assert_int_equal(tessera_data_release(ctx, h), 0);
  assert_memory_equal(v, ref, sizeof v);
  assert_int_equal(tessera_wait_all(ctx), 0);
  assert_int_equal(tessera_finalize(ctx), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_war),
      cmocka_unit_test(test_waw_raw),
      cmocka_unit_test(test_duplicate_handles),
      cmocka_unit_test(test_release_waits),
      cmocka_unit_test(test_long_chain),
      cmocka_unit_test(test_many_independent),
      cmocka_unit_test(test_fan_out_in),
      cmocka_unit_test(test_random_graphs),
  };
  tt_watchdog(600);
  return cmocka_run_group_tests(tests, NULL, NULL);
}
