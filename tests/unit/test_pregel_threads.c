/* SPDX-License-Identifier: MIT */
/*
 * Determinism under concurrency (DESIGN.md semantic 3), also run under
 * ThreadSanitizer: 1 000 Send tasks that finish in scrambled order (sleeps of
 * varying length), some failing once and retried, must give byte-identical
 * final states and identical per-superstep delta sequences with 1, 2 and 16
 * workers. Also checks the concurrency cap.
 */
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "test_util.h"

enum { SENDS = 1000 };

static atomic_int g_running, g_peak;

static sst_code split(sst_task *t, void *ud) {
    (void)ud;
    sst_task_vote_halt(t);
    for (int i = 0; i < SENDS; i++) {
        sst_code rc = sst_task_send(t, "work", sst_int_new(i * 7919 % 100003, NULL), NULL);
        if (rc != SST_OK) {
            return rc;
        }
    }
    return SST_OK;
}

static sst_code work(sst_task *t, void *ud) {
    (void)ud;
    int now = atomic_fetch_add(&g_running, 1) + 1;
    int peak = atomic_load(&g_peak);
    while (now > peak && !atomic_compare_exchange_weak(&g_peak, &peak, now)) {
    }
    int64_t x = sst_int_value(sst_task_input(t));
    /* Scramble finishing order: 0..150 µs depending on the payload. */
    struct timespec ts = {0, (long)((x * 2654435761u) % 150) * 1000L};
    nanosleep(&ts, NULL);
    atomic_fetch_sub(&g_running, 1);
    sst_task_vote_halt(t);
    if (x % 13 == 0 && sst_task_attempt(t) == 1) {
        return sst_task_fail(t, SST_ETASK, "transient failure for %lld", (long long)x);
    }
    sst_code rc = sst_task_write(t, "sum", sst_int_new(x, NULL), NULL);
    if (rc == SST_OK) {
        rc = sst_task_write(
            t, "items", sst_array_push_take(sst_array_empty(), sst_int_new(x, NULL), NULL), NULL);
    }
    if (rc == SST_OK) {
        rc = sst_task_write(t, "last", sst_int_new(x, NULL), NULL);
    }
    if (rc == SST_OK) {
        rc = sst_task_activate(t, "join", NULL);
    }
    return rc;
}

/* Runs once after all work tasks: it must see every item in its snapshot. */
static sst_code join(sst_task *t, void *ud) {
    (void)ud;
    sst_task_vote_halt(t);
    size_t n = sst_array_len(sst_object_get(sst_task_state(t), "items"));
    return sst_task_write(t, "joined", sst_int_new((int64_t)n, NULL), NULL);
}

typedef struct trace {
    char *text; /* JSON of every superstep's deltas in merge order */
    size_t len, cap;
} trace;

static sst_code record(const sst_superstep_stats *st, void *ud) {
    trace *tr = ud;
    for (size_t i = 0; i < st->tasks; i++) {
        size_t n;
        char *d = sst_json_write(st->task[i].delta, SST_JSON_CANONICAL, &n, NULL);
        while (tr->len + n + 64 > tr->cap) {
            tr->cap = tr->cap ? tr->cap * 2 : 65536;
            tr->text = realloc(tr->text, tr->cap);
        }
        tr->len += (size_t)snprintf(tr->text + tr->len, tr->cap - tr->len, "%llu:%s:%s\n",
                                    (unsigned long long)st->superstep, st->task[i].vertex, d);
        sst_free(d);
    }
    return SST_OK;
}

static void no_sleep(uint64_t ms, void *ud) {
    (void)ms, (void)ud;
}

static sst_pregel *build(sst_schema **schema_out) {
    sst_error err;
    sst_schema *s = sst_schema_new(&err);
    assert_sst_ok(sst_schema_add_field(s, "sum", sst_reducer_sum(), sst_int_new(0, NULL), &err),
                  &err);
    assert_sst_ok(sst_schema_add_field(s, "items", sst_reducer_append(), sst_array_empty(), &err),
                  &err);
    sst_pregel_builder *b = sst_pregel_builder_new(s, &err);
    assert_sst_ok(sst_pregel_builder_add_vertex(b, "split", split, NULL, NULL, &err), &err);
    sst_vertex_opts o;
    sst_vertex_opts_init(&o);
    o.retry.max_attempts = 3; /* vertices have no retry by default */
    o.retry.jitter = false;
    assert_sst_ok(sst_pregel_builder_add_vertex(b, "work", work, NULL, &o, &err), &err);
    assert_sst_ok(sst_pregel_builder_add_vertex(b, "join", join, NULL, NULL, &err), &err);
    sst_pregel *p = sst_pregel_builder_build(b, &err);
    sst_pregel_builder_free(b);
    *schema_out = s;
    return p;
}

static char *run_once(const sst_pregel *p, unsigned workers, unsigned max_conc, trace *tr) {
    sst_error err;
    sst_engine_opts eo;
    sst_engine_opts_init(&eo);
    eo.workers = workers;
    eo.max_concurrency = max_conc;
    sst_engine *e = sst_engine_new(&eo, &err);
    assert_non_null(e);
    sst_run_opts ro;
    sst_run_opts_init(&ro);
    const char *start[] = {"split"};
    ro.start = start;
    ro.n_start = 1;
    ro.on_superstep = record;
    ro.sleep = no_sleep;
    ro.user_data = tr;
    ro.run_key = "determinism";
    sst_run_result *r = sst_engine_run(e, p, &ro, &err);
    assert_non_null(r);
    assert_int_equal(sst_run_result_status(r), SST_RUN_COMPLETED);
    assert_int_equal(sst_run_result_supersteps(r), 3);
    uint64_t failing = 0;
    for (int i = 0; i < SENDS; i++) {
        failing += (i * 7919 % 100003) % 13 == 0;
    }
    assert_int_equal(sst_run_result_retries(r), failing);
    char *text = sst_json_write(sst_run_result_state(r), SST_JSON_CANONICAL, NULL, NULL);
    sst_run_result_free(r);
    sst_engine_free(e);
    return text;
}

static void test_same_result_with_1_2_16_workers(void **state) {
    (void)state;
    sst_schema *s;
    sst_pregel *p = build(&s);
    trace t1 = {0}, t2 = {0}, t16 = {0};
    char *s1 = run_once(p, 1, 0, &t1);
    char *s2 = run_once(p, 2, 0, &t2);
    char *s16 = run_once(p, 16, 0, &t16);
    assert_string_equal(s1, s2);
    assert_string_equal(s1, s16);
    assert_true(t1.len > 0);
    assert_int_equal(t1.len, t2.len);
    assert_int_equal(t1.len, t16.len);
    assert_memory_equal(t1.text, t2.text, t1.len);
    assert_memory_equal(t1.text, t16.text, t1.len);
    /* The join saw all 1 000 items; "last" is the last Send in send order. */
    sst_value *st = tu_json(s1);
    assert_int_equal(sst_int_value(sst_object_get(st, "joined")), SENDS);
    assert_int_equal(sst_int_value(sst_object_get(st, "last")), (SENDS - 1) * 7919 % 100003);
    sst_value_unref(st);
    free(s1);
    free(s2);
    free(s16);
    free(t1.text);
    free(t2.text);
    free(t16.text);
    sst_pregel_free(p);
    sst_schema_free(s);
}

static void test_concurrency_cap(void **state) {
    (void)state;
    sst_schema *s;
    sst_pregel *p = build(&s);
    trace tr = {0};
    atomic_store(&g_peak, 0);
    char *text = run_once(p, 16, 3, &tr);
    assert_true(atomic_load(&g_peak) <= 3);
    assert_true(atomic_load(&g_peak) >= 1);
    free(text);
    free(tr.text);
    sst_pregel_free(p);
    sst_schema_free(s);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_result_with_1_2_16_workers),
        cmocka_unit_test(test_concurrency_cap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
