/* SPDX-License-Identifier: MIT */
/*
 * The writer threads of durability "async" (src/graph/writer.c): they belong to
 * the compiled graph, not to an invoke. No assertion on time: what is counted is
 * threads and jobs (the pool's statistics, the process's thread count).
 *
 *   - one thread serves every invoke made one after another: 40 async runs on
 *     new threads start it once, and every job went through it; freeing the
 *     compiled graph joins it (the process's thread count comes back);
 *   - writes made in the engine's thread start no thread at all;
 *   - a fresh graph hands its first writes over (the measurements its choice
 *     needs), and measures every write;
 *   - four threads invoking one graph at once, the pool choosing where each
 *     write goes: every run completes and stores its whole state, the pool has
 *     at most one thread per invoke in flight. Run under ThreadSanitizer;
 *   - a job handed over while the caller writes one in place (claim ... release)
 *     is run once the caller releases the queue: a wait for its ticket returns
 *     (it used to sleep forever, the queue idle with the job on it), whether the
 *     wait starts after the release or before it. The wait runs on a thread the
 *     test gives a bound to, so a lost job fails the test instead of hanging it.
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "graph/graph_int.h"
#include "superstep/superstep.h"
#include "test_util.h"

static sst_code step(sst_node_ctx *ctx, void *ud) {
    (void)ud;
    return sst_node_update(ctx, "log", sst_string_new(sst_node_name(ctx), NULL), NULL);
}

/* START -> a -> b -> c -> END, each appending its name to "log": 5 checkpoints a run. */
static sst_compiled_graph *chain(sst__write_policy policy) {
    sst_error err;
    sst_graph *g = sst_graph_new(&err);
    assert_sst_ok(sst_graph_add_field(g, "log", sst_reducer_append(), sst_array_empty(), &err),
                  &err);
    const char *names[] = {"a", "b", "c"};
    for (size_t i = 0; i < 3; i++) {
        assert_sst_ok(sst_graph_add_node(g, names[i], step, NULL, NULL, &err), &err);
    }
    assert_sst_ok(sst_graph_add_edge(g, SST_START, "a", &err), &err);
    assert_sst_ok(sst_graph_add_edge(g, "a", "b", &err), &err);
    assert_sst_ok(sst_graph_add_edge(g, "b", "c", &err), &err);
    assert_sst_ok(sst_graph_add_edge(g, "c", SST_END, &err), &err);
    sst_compiled_graph *cg = sst_graph_compile(g, NULL, &err);
    assert_non_null(cg);
    sst_graph_free(g);
    sst__write_pool_set_policy(cg->writers, policy);
    return cg;
}

/* One async run of the chain on thread @p id; its result and what was stored checked. */
static void run_chain(const sst_compiled_graph *cg, sst_checkpointer *cp, const char *id) {
    sst_error err;
    sst_graph_thread *th = sst_graph_thread_open(cg, cp, id, &err);
    assert_non_null(th);
    sst_invoke_opts o;
    sst_invoke_opts_init(&o);
    o.durability = SST_DURABILITY_ASYNC;
    sst_value *in = sst_object_empty();
    sst_graph_result *r = sst_graph_invoke(cg, th, in, &o, &err);
    sst_value_unref(in);
    assert_non_null(r);
    assert_int_equal(sst_graph_result_status(r), SST_RUN_COMPLETED);
    sst_graph_result_free(r);
    sst_graph_thread_free(th);
    /* Stored: a new thread object reads the latest checkpoint back. */
    th = sst_graph_thread_open(cg, cp, id, &err);
    assert_non_null(th);
    sst_value *st = sst_graph_get_state(th, NULL, &err);
    assert_non_null(st);
    tu_assert_json_eq(sst_object_get(sst_object_get(st, "values"), "log"), "[\"a\",\"b\",\"c\"]",
                      __FILE__, __LINE__);
    assert_null(sst_array_get(sst_object_get(st, "next"), 0));
    sst_value_unref(st);
    sst_graph_thread_free(th);
}

static sst__write_stats stats_of(const sst_compiled_graph *cg) {
    sst__write_stats s;
    sst__write_pool_stats(cg->writers, &s);
    return s;
}

/* The "Threads:" line of /proc/self/status. */
static int threads_now(void) {
    FILE *f = fopen("/proc/self/status", "r");
    assert_non_null(f);
    char line[256];
    int n = -1;
    while (fgets(line, sizeof line, f) != NULL) {
        if (strncmp(line, "Threads:", 8) == 0) {
            n = (int)strtol(line + 8, NULL, 10);
        }
    }
    fclose(f);
    assert_true(n > 0);
    return n;
}

/* Waits (bounded) until the process has @p want threads: a joined thread leaves the
 * count a moment after pthread_join returned. */
static void await_threads(int want) {
    double until = tu_now_s() + 10 * tu_time_scale();
    int n = threads_now();
    while (n != want && tu_now_s() < until) {
        struct timespec pause = {0, 1000000};
        nanosleep(&pause, NULL);
        n = threads_now();
    }
    if (n != want) {
        fail_msg("the process has %d threads, %d expected: a writer thread was not joined", n,
                 want);
    }
}

static void test_one_thread_for_many_invokes(void **state) {
    (void)state;
    sst_error err;
    sst_checkpointer *cp = sst_memory_saver_new(&err);
    assert_non_null(cp);
    sst_compiled_graph *cg = chain(SST__WRITE_HANDOFF);
    for (int i = 0; i < 40; i++) {
        char id[32];
        snprintf(id, sizeof id, "t%d", i);
        run_chain(cg, cp, id);
    }
    sst__write_stats s = stats_of(cg);
    assert_int_equal(s.threads_started, 1);
    assert_int_equal(s.threads, 1);
    assert_int_equal(s.handed_jobs, 40 * 5);
    assert_int_equal(s.inline_jobs, 0);
    /* (Counted while it runs: a sanitizer's runtime may start a thread of its own.) */
    int with_pool = threads_now();
    sst_compiled_graph_free(cg); /* joins it */
    await_threads(with_pool - 1);
    sst_checkpointer_free(cp);
}

static void test_inline_writes_start_no_thread(void **state) {
    (void)state;
    sst_error err;
    sst_checkpointer *cp = sst_memory_saver_new(&err);
    assert_non_null(cp);
    sst_compiled_graph *cg = chain(SST__WRITE_INLINE);
    for (int i = 0; i < 10; i++) {
        char id[32];
        snprintf(id, sizeof id, "t%d", i);
        run_chain(cg, cp, id);
    }
    sst__write_stats s = stats_of(cg);
    assert_int_equal(s.threads_started, 0);
    assert_int_equal(s.inline_jobs, 10 * 5);
    assert_int_equal(s.handed_jobs, 0);
    sst_compiled_graph_free(cg);
    sst_checkpointer_free(cp);
}

static void test_fresh_graph_measures_first(void **state) {
    (void)state;
    sst_error err;
    sst_checkpointer *cp = sst_memory_saver_new(&err);
    assert_non_null(cp);
    sst_compiled_graph *cg = chain(SST__WRITE_AUTO);
    run_chain(cg, cp, "first");
    sst__write_stats s = stats_of(cg);
    /* Fewer writes than the handoffs it measures before choosing: all handed over. */
    assert_int_equal(s.handed_jobs, 5);
    assert_int_equal(s.inline_jobs, 0);
    for (int i = 0; i < 30; i++) {
        char id[32];
        snprintf(id, sizeof id, "t%d", i);
        run_chain(cg, cp, id);
    }
    s = stats_of(cg);
    assert_int_equal(s.handed_jobs + s.inline_jobs, 31 * 5);
    assert_int_equal(s.write_samples, 31 * 5);
    assert_true(s.handoff_samples >= 8);
    /* Three per run: the checkpoints after supersteps 0, 1 and 2 (the input and the
     * first loop checkpoint go together, with nothing computed between them). */
    assert_int_equal(s.compute_samples, 31 * 3);
    sst_compiled_graph_free(cg);
    sst_checkpointer_free(cp);
}

typedef struct crowd {
    const sst_compiled_graph *cg;
    sst_checkpointer *cp;
    int who;
} crowd;

static void *crowd_main(void *arg) {
    crowd *c = arg;
    for (int i = 0; i < 25; i++) {
        char id[32];
        snprintf(id, sizeof id, "w%d-%d", c->who, i);
        run_chain(c->cg, c->cp, id);
    }
    return NULL;
}

static void test_concurrent_invokes(void **state) {
    (void)state;
    sst_error err;
    sst_checkpointer *cp = sst_memory_saver_new(&err);
    assert_non_null(cp);
    sst_compiled_graph *cg = chain(SST__WRITE_AUTO);
    pthread_t t[4];
    crowd c[4];
    for (int i = 0; i < 4; i++) {
        c[i] = (crowd){cg, cp, i};
        assert_int_equal(pthread_create(&t[i], NULL, crowd_main, &c[i]), 0);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
    }
    sst__write_stats s = stats_of(cg);
    assert_int_equal(s.handed_jobs + s.inline_jobs, 4 * 25 * 5);
    assert_true(s.threads_started <= 4); /* a thread only when every one is busy */
    sst_compiled_graph_free(cg);
    sst_checkpointer_free(cp);
}

/* A job that counts its runs. */
static sst_code count_run(void *data, sst_error *err) {
    (void)err;
    (*(int *)data)++;
    return SST_OK;
}

typedef struct waiter {
    sst__writer *w;
    uint64_t ticket;
    sst_code rc;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool done;
} waiter;

static void *waiter_main(void *arg) {
    waiter *wt = arg;
    sst_error err;
    sst_code rc = sst__writer_wait(wt->w, wt->ticket, &err);
    pthread_mutex_lock(&wt->mu);
    wt->rc = rc;
    wt->done = true;
    pthread_cond_signal(&wt->cv);
    pthread_mutex_unlock(&wt->mu);
    return NULL;
}

/* Whether @p wt's wait returned within a generous bound (10 s times tu_time_scale). */
static bool waiter_returned(waiter *wt) {
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    double bound = 10 * tu_time_scale();
    until.tv_sec += (time_t)bound;
    pthread_mutex_lock(&wt->mu);
    while (!wt->done) {
        if (pthread_cond_timedwait(&wt->cv, &wt->mu, &until) != 0) {
            break;
        }
    }
    bool done = wt->done;
    pthread_mutex_unlock(&wt->mu);
    return done;
}

/*
 * The caller claims the queue and writes a job in place; meanwhile a second job is
 * handed over (the queue is held: it is only queued); then the caller releases. The
 * second job must still run: a wait for its ticket returns, the job ran once.
 * @p wait_first: the waiting thread starts before the release, else after it.
 */
static void job_queued_during_claim(sst__write_policy policy, bool wait_first) {
    sst_error err;
    sst__write_pool *pool = sst__write_pool_new();
    assert_non_null(pool);
    sst__write_pool_set_policy(pool, SST__WRITE_INLINE);
    sst__writer *w = sst__writer_new(pool, &err);
    assert_non_null(w);
    uint64_t first = 0, second = 0;
    assert_true(sst__writer_claim(w, false, &first));
    /* What the pool does once the claim is released (in place or handed over). */
    sst__write_pool_set_policy(pool, policy);
    int runs = 0;
    assert_sst_ok(sst__writer_submit(w, count_run, NULL, &runs, &second, &err), &err);
    assert_true(second > first);
    waiter wt = {.w = w, .ticket = second, .rc = SST_OK, .done = false};
    pthread_mutex_init(&wt.mu, NULL);
    pthread_cond_init(&wt.cv, NULL);
    pthread_t t;
    if (wait_first) {
        assert_int_equal(pthread_create(&t, NULL, waiter_main, &wt), 0);
    }
    sst__writer_release(w, SST_OK, NULL);
    if (!wait_first) {
        assert_int_equal(pthread_create(&t, NULL, waiter_main, &wt), 0);
    }
    if (!waiter_returned(&wt)) {
        fail_msg("the wait for ticket %llu (handed over while ticket %llu was written in "
                 "place) never returned: the job was left on an idle queue",
                 (unsigned long long)second, (unsigned long long)first);
    }
    pthread_join(t, NULL);
    assert_int_equal(wt.rc, SST_OK);
    assert_int_equal(runs, 1);
    assert_sst_ok(sst__writer_drain(w, &err), &err);
    sst__writer_free(w);
    sst__write_pool_free(pool);
    pthread_cond_destroy(&wt.cv);
    pthread_mutex_destroy(&wt.mu);
}

static void test_job_queued_during_claim_runs(void **state) {
    (void)state;
    job_queued_during_claim(SST__WRITE_INLINE, false);
    job_queued_during_claim(SST__WRITE_INLINE, true);
    job_queued_during_claim(SST__WRITE_HANDOFF, false);
    job_queued_during_claim(SST__WRITE_HANDOFF, true);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_thread_for_many_invokes),
        cmocka_unit_test(test_inline_writes_start_no_thread),
        cmocka_unit_test(test_fresh_graph_measures_first),
        cmocka_unit_test(test_concurrent_invokes),
        cmocka_unit_test(test_job_queued_during_claim_runs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
