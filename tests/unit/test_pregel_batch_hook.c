/* SPDX-License-Identifier: MIT */
/*
 * The engine's batch hook (sst_engine_set_batch_hook): a thread takes the
 * hook's resource once before the first task it runs of a batch and drops it
 * after its last, instead of each task taking it. The resource here is a
 * model of an interpreter lock ("gil"): one owner at a time, re-entrant for
 * its owner, and released in full by a task that waits (as Python releases
 * its GIL in every blocking call). Compute functions take it themselves, as
 * the Python binding's nodes do; under the hook that take is a nested one.
 * Checked: tasks run under the hook, once per thread and batch; results are
 * those of a run without the hook; errors, interrupts and retries keep their
 * meaning; tasks that wait for each other still run at once; a task's calls
 * that need the lock are joined with it dropped. Also run under ThreadSanitizer.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

/* ---- the lock model ---- */

typedef struct gil {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t owner; /* valid while depth > 0 */
    int depth;
} gil;

static gil G = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0};

static void gil_take(void) {
    pthread_mutex_lock(&G.mu);
    if (G.depth > 0 && pthread_equal(G.owner, pthread_self())) {
        G.depth++;
    } else {
        while (G.depth > 0) {
            pthread_cond_wait(&G.cv, &G.mu);
        }
        G.owner = pthread_self();
        G.depth = 1;
    }
    pthread_mutex_unlock(&G.mu);
}

static void gil_drop(void) {
    pthread_mutex_lock(&G.mu);
    assert_true(G.depth > 0 && pthread_equal(G.owner, pthread_self()));
    if (--G.depth == 0) {
        pthread_cond_broadcast(&G.cv);
    }
    pthread_mutex_unlock(&G.mu);
}

/* How deep this thread holds it (0: not). */
static int gil_depth(void) {
    pthread_mutex_lock(&G.mu);
    int d = G.depth > 0 && pthread_equal(G.owner, pthread_self()) ? G.depth : 0;
    pthread_mutex_unlock(&G.mu);
    return d;
}

/* Drops every level this thread holds (a blocking call's release); returns them. */
static int gil_release_all(void) {
    pthread_mutex_lock(&G.mu);
    assert_true(G.depth > 0 && pthread_equal(G.owner, pthread_self()));
    int d = G.depth;
    G.depth = 0;
    pthread_cond_broadcast(&G.cv);
    pthread_mutex_unlock(&G.mu);
    return d;
}

static void gil_restore(int d) {
    pthread_mutex_lock(&G.mu);
    while (G.depth > 0) {
        pthread_cond_wait(&G.cv, &G.mu);
    }
    G.owner = pthread_self();
    G.depth = d;
    pthread_mutex_unlock(&G.mu);
}

/* ---- the hook ---- */

static atomic_int g_enters, g_leaves, g_nested, g_plain;

static void *enter(void *ud) {
    assert_ptr_equal(ud, &G);
    gil_take();
    atomic_fetch_add(&g_enters, 1);
    return (void *)&g_enters;
}

static void leave(void *token, void *ud) {
    assert_ptr_equal(ud, &G);
    assert_ptr_equal(token, &g_enters);
    atomic_fetch_add(&g_leaves, 1);
    gil_drop();
}

static const sst_batch_hook hook = {enter, leave, &G};

static void reset_counts(void) {
    atomic_store(&g_enters, 0);
    atomic_store(&g_leaves, 0);
    atomic_store(&g_nested, 0);
    atomic_store(&g_plain, 0);
}

/* What every compute function does first: take the lock (nested under the hook). */
static void task_take(void) {
    gil_take();
    atomic_fetch_add(gil_depth() >= 2 ? &g_nested : &g_plain, 1);
}

/* ---- vertices ---- */

static int g_sends = 40;

/* "split": g_sends Sends to "work" */
static sst_code split(sst_task *t, void *ud) {
    (void)ud;
    task_take();
    sst_task_vote_halt(t);
    sst_code rc = SST_OK;
    for (int i = 0; i < g_sends && rc == SST_OK; i++) {
        rc = sst_task_send(t, "work", sst_int_new(i, NULL), NULL);
    }
    gil_drop();
    return rc;
}

/* "work": adds its input to "sum" and its item; fails its first attempt when ud says so. */
static sst_code work(sst_task *t, void *ud) {
    task_take();
    int64_t x = sst_int_value(sst_task_input(t));
    sst_task_vote_halt(t);
    sst_code rc;
    if (ud != NULL && x % 7 == 0 && sst_task_attempt(t) == 1) {
        rc = sst_task_fail(t, SST_ETASK, "transient failure of %lld", (long long)x);
    } else {
        rc = sst_task_write(t, "sum", sst_int_new(x, NULL), NULL);
        rc = rc == SST_OK
                 ? sst_task_write(
                       t, "items",
                       sst_array_push_take(sst_array_empty(), sst_int_new(x, NULL), NULL), NULL)
                 : rc;
        rc = rc == SST_OK ? sst_task_activate(t, "join", NULL) : rc;
    }
    gil_drop();
    return rc;
}

static sst_code join(sst_task *t, void *ud) {
    (void)ud;
    task_take();
    sst_task_vote_halt(t);
    size_t n = sst_array_len(sst_object_get(sst_task_state(t), "items"));
    sst_code rc = sst_task_write(t, "joined", sst_int_new((int64_t)n, NULL), NULL);
    gil_drop();
    return rc;
}

static sst_code fails(sst_task *t, void *ud) {
    (void)ud;
    task_take();
    sst_code rc = sst_task_fail(t, SST_ETASK, "no luck");
    gil_drop();
    return rc;
}

static sst_code interrupts(sst_task *t, void *ud) {
    (void)ud;
    task_take();
    sst_code rc = sst_task_interrupt(t, sst_string_new("asks", NULL));
    gil_drop();
    return rc;
}

static void no_sleep(uint64_t ms, void *ud) {
    (void)ms;
    (void)ud;
}

typedef struct built {
    sst_schema *s;
    sst_pregel *p;
} built;

/* split -> work x g_sends -> join; @p retry: work fails its first attempt on x % 7 == 0. */
static built build(bool retry, sst_compute_fn extra, const char *extra_name) {
    sst_error err;
    built b;
    b.s = sst_schema_new(&err);
    assert_sst_ok(sst_schema_add_field(b.s, "sum", sst_reducer_sum(), sst_int_new(0, NULL), &err),
                  &err);
    assert_sst_ok(sst_schema_add_field(b.s, "items", sst_reducer_append(), sst_array_empty(), &err),
                  &err);
    sst_pregel_builder *pb = sst_pregel_builder_new(b.s, &err);
    assert_sst_ok(sst_pregel_builder_add_vertex(pb, "split", split, NULL, NULL, &err), &err);
    sst_vertex_opts o;
    sst_vertex_opts_init(&o);
    o.retry.max_attempts = retry ? 2 : 1;
    o.retry.jitter = false;
    assert_sst_ok(
        sst_pregel_builder_add_vertex(pb, "work", work, retry ? (void *)&G : NULL, &o, &err), &err);
    assert_sst_ok(sst_pregel_builder_add_vertex(pb, "join", join, NULL, NULL, &err), &err);
    if (extra != NULL) {
        assert_sst_ok(sst_pregel_builder_add_vertex(pb, extra_name, extra, NULL, NULL, &err), &err);
    }
    b.p = sst_pregel_builder_build(pb, &err);
    assert_non_null(b.p);
    sst_pregel_builder_free(pb);
    return b;
}

static void built_free(built *b) {
    sst_pregel_free(b->p);
    sst_schema_free(b->s);
}

/* Runs @p p from @p start on an engine of @p workers with the hook or not. */
static sst_run_result *run(const sst_pregel *p, unsigned workers, bool with_hook,
                           const char **start, size_t n_start) {
    sst_error err;
    sst_engine_opts eo;
    sst_engine_opts_init(&eo);
    eo.workers = workers;
    sst_engine *e = sst_engine_new(&eo, &err);
    assert_non_null(e);
    sst_engine_set_batch_hook(e, with_hook ? &hook : NULL);
    sst_run_opts ro;
    sst_run_opts_init(&ro);
    ro.start = start;
    ro.n_start = n_start;
    ro.sleep = no_sleep;
    ro.run_key = "batch-hook";
    sst_run_result *r = sst_engine_run(e, p, &ro, &err);
    assert_non_null(r);
    sst_engine_free(e);
    assert_int_equal(gil_depth(), 0);
    assert_int_equal(atomic_load(&g_enters), atomic_load(&g_leaves));
    return r;
}

static char *state_text(const sst_run_result *r) {
    return sst_json_write(sst_run_result_state(r), SST_JSON_CANONICAL, NULL, NULL);
}

/* One worker: one take per superstep (3 batches), every task under it. */
static void test_one_take_per_batch(void **state) {
    (void)state;
    built b = build(false, NULL, NULL);
    const char *start[] = {"split"};
    reset_counts();
    sst_run_result *r = run(b.p, 1, true, start, 1);
    assert_int_equal(sst_run_result_status(r), SST_RUN_COMPLETED);
    assert_int_equal(sst_run_result_supersteps(r), 3);
    assert_int_equal(atomic_load(&g_enters), 3);
    assert_int_equal(atomic_load(&g_nested), g_sends + 2);
    assert_int_equal(atomic_load(&g_plain), 0);
    char *with = state_text(r);
    sst_run_result_free(r);

    reset_counts();
    r = run(b.p, 1, false, start, 1);
    assert_int_equal(atomic_load(&g_enters), 0);
    assert_int_equal(atomic_load(&g_plain), g_sends + 2);
    char *without = state_text(r);
    assert_string_equal(with, without);
    sst_run_result_free(r);
    free(with);
    free(without);
    built_free(&b);
}

/* Several workers: at most one take per participating thread and batch; same state. */
static void test_workers_same_state(void **state) {
    (void)state;
    int saved = g_sends;
    g_sends = 400;
    built b = build(false, NULL, NULL);
    const char *start[] = {"split"};
    reset_counts();
    sst_run_result *r = run(b.p, 1, false, start, 1);
    char *expect = state_text(r);
    sst_run_result_free(r);
    for (int round = 0; round < 3; round++) {
        reset_counts();
        r = run(b.p, 4, true, start, 1);
        assert_int_equal(sst_run_result_status(r), SST_RUN_COMPLETED);
        assert_true(atomic_load(&g_enters) >= 3);
        assert_true(atomic_load(&g_enters) <= 1 + 4 + 1);
        assert_int_equal(atomic_load(&g_nested), g_sends + 2);
        char *got = state_text(r);
        assert_string_equal(got, expect);
        free(got);
        sst_run_result_free(r);
    }
    free(expect);
    built_free(&b);
    g_sends = saved;
}

/* A failing task fails the run as without the hook; the lock is dropped. */
static void test_error_propagates(void **state) {
    (void)state;
    built b = build(false, fails, "bad");
    const char *start[] = {"bad", "split"};
    for (unsigned workers = 1; workers <= 2; workers++) {
        reset_counts();
        sst_run_result *r = run(b.p, workers, true, start, 2);
        assert_int_equal(sst_run_result_status(r), SST_RUN_FAILED);
        assert_string_equal(sst_run_result_error_vertex(r), "bad");
        assert_non_null(strstr(sst_run_result_error(r)->msg, "no luck"));
        assert_int_equal(sst_run_result_supersteps(r), 0);
        sst_run_result_free(r);
    }
    built_free(&b);
}

/* An interrupting task stops the run with its interrupt; the other task's writes pend. */
static void test_interrupt(void **state) {
    (void)state;
    built b = build(false, interrupts, "ask");
    const char *start[] = {"ask", "split"};
    reset_counts();
    sst_run_result *r = run(b.p, 2, true, start, 2);
    assert_int_equal(sst_run_result_status(r), SST_RUN_INTERRUPTED);
    const sst_value *ints = sst_run_result_interrupts(r);
    assert_int_equal(sst_array_len(ints), 1);
    assert_string_equal(sst_string_cstr(sst_object_get(sst_array_get(ints, 0), "value")), "asks");
    assert_int_equal(sst_array_len(sst_run_result_pending(r)), 1); /* split's writes */
    assert_int_equal(atomic_load(&g_nested), 2);
    sst_run_result_free(r);
    built_free(&b);
}

/* A retry round is a batch of its own: taken again, its tasks under it, same state. */
static void test_retries(void **state) {
    (void)state;
    built b = build(true, NULL, NULL);
    const char *start[] = {"split"};
    reset_counts();
    sst_run_result *r = run(b.p, 1, true, start, 1);
    assert_int_equal(sst_run_result_status(r), SST_RUN_COMPLETED);
    int failing = (g_sends + 6) / 7;
    assert_int_equal(sst_run_result_retries(r), failing);
    assert_int_equal(atomic_load(&g_enters), 4); /* split, work, work's retries, join */
    assert_int_equal(atomic_load(&g_nested), g_sends + failing + 2);
    assert_int_equal(atomic_load(&g_plain), 0);
    sst_value *sum = sst_value_ref(sst_object_get(sst_run_result_state(r), "sum"));
    assert_int_equal(sst_int_value(sum), (int64_t)g_sends * (g_sends - 1) / 2);
    sst_value_unref(sum);
    sst_run_result_free(r);
    built_free(&b);
}

/* ---- tasks that wait for each other, and calls that need the lock ---- */

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cv = PTHREAD_COND_INITIALIZER;
static int g_arrived, g_generation, g_call_started, g_task_done;

/* A barrier of two, waited on with the lock released (a blocking call's manner). */
static void meet(void) {
    int d = gil_release_all();
    pthread_mutex_lock(&g_mu);
    int gen = g_generation;
    if (++g_arrived == 2) {
        g_arrived = 0;
        g_generation++;
        pthread_cond_broadcast(&g_cv);
    } else {
        while (gen == g_generation) {
            pthread_cond_wait(&g_cv, &g_mu);
        }
    }
    pthread_mutex_unlock(&g_mu);
    gil_restore(d);
}

static sst_code pair(sst_task *t, void *ud) {
    (void)ud;
    task_take();
    meet();
    sst_task_vote_halt(t);
    sst_code rc = sst_task_write(t, "sum", sst_int_new(1, NULL), NULL);
    gil_drop();
    return rc;
}

/* Two vertices whose tasks wait for each other: they must run at once on two threads. */
static void test_waiting_tasks_run_at_once(void **state) {
    (void)state;
    sst_error err;
    sst_schema *s = sst_schema_new(&err);
    assert_sst_ok(sst_schema_add_field(s, "sum", sst_reducer_sum(), sst_int_new(0, NULL), &err),
                  &err);
    sst_pregel_builder *pb = sst_pregel_builder_new(s, &err);
    assert_sst_ok(sst_pregel_builder_add_vertex(pb, "p1", pair, NULL, NULL, &err), &err);
    assert_sst_ok(sst_pregel_builder_add_vertex(pb, "p2", pair, NULL, NULL, &err), &err);
    sst_pregel *p = sst_pregel_builder_build(pb, &err);
    sst_pregel_builder_free(pb);
    const char *start[] = {"p1", "p2"};
    for (int round = 0; round < 20; round++) {
        reset_counts();
        sst_run_result *r = run(p, 2, true, start, 2);
        assert_int_equal(sst_run_result_status(r), SST_RUN_COMPLETED);
        assert_int_equal(sst_int_value(sst_object_get(sst_run_result_state(r), "sum")), 2);
        assert_int_equal(atomic_load(&g_enters), 2); /* both threads ran one */
        sst_run_result_free(r);
    }
    sst_pregel_free(p);
    sst_schema_free(s);
}

/* The call: starts on a worker, waits until its task has returned, then takes the lock. */
static sst_code call_fn(sst_task *t, void *ud) {
    (void)ud;
    pthread_mutex_lock(&g_mu);
    g_call_started = 1;
    pthread_cond_broadcast(&g_cv);
    while (!g_task_done) {
        pthread_cond_wait(&g_cv, &g_mu);
    }
    pthread_mutex_unlock(&g_mu);
    gil_take(); /* the engine joins this call with the lock dropped, or never returns */
    sst_code rc = sst_task_return(t, sst_int_new(42, NULL), NULL);
    gil_drop();
    return rc;
}

static sst_code caller(sst_task *t, void *ud) {
    (void)ud;
    task_take();
    sst_error err;
    sst_call *c = sst_task_call(t, "helper", call_fn, NULL, NULL, NULL, &err);
    assert_non_null(c);
    int d = gil_release_all(); /* wait for the call to start on the other thread */
    pthread_mutex_lock(&g_mu);
    while (!g_call_started) {
        pthread_cond_wait(&g_cv, &g_mu);
    }
    pthread_mutex_unlock(&g_mu);
    gil_restore(d);
    sst_task_vote_halt(t);
    sst_code rc = sst_task_write(t, "sum", sst_int_new(1, NULL), NULL);
    pthread_mutex_lock(&g_mu);
    g_task_done = 1; /* returns without joining: the engine joins */
    pthread_cond_broadcast(&g_cv);
    pthread_mutex_unlock(&g_mu);
    gil_drop();
    return rc;
}

static void test_calls_joined_with_the_lock_dropped(void **state) {
    (void)state;
    sst_error err;
    sst_schema *s = sst_schema_new(&err);
    assert_sst_ok(sst_schema_add_field(s, "sum", sst_reducer_sum(), sst_int_new(0, NULL), &err),
                  &err);
    sst_pregel_builder *pb = sst_pregel_builder_new(s, &err);
    assert_sst_ok(sst_pregel_builder_add_vertex(pb, "caller", caller, NULL, NULL, &err), &err);
    sst_pregel *p = sst_pregel_builder_build(pb, &err);
    sst_pregel_builder_free(pb);
    const char *start[] = {"caller"};
    for (int round = 0; round < 5; round++) {
        g_call_started = g_task_done = 0;
        reset_counts();
        sst_run_result *r = run(p, 2, true, start, 1);
        assert_int_equal(sst_run_result_status(r), SST_RUN_COMPLETED);
        assert_int_equal(sst_int_value(sst_object_get(sst_run_result_state(r), "sum")), 1);
        assert_int_equal(atomic_load(&g_nested), 1);
        sst_run_result_free(r);
    }
    sst_pregel_free(p);
    sst_schema_free(s);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_take_per_batch),
        cmocka_unit_test(test_workers_same_state),
        cmocka_unit_test(test_error_propagates),
        cmocka_unit_test(test_interrupt),
        cmocka_unit_test(test_retries),
        cmocka_unit_test(test_waiting_tasks_run_at_once),
        cmocka_unit_test(test_calls_joined_with_the_lock_dropped),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
