/* SPDX-License-Identifier: MIT */
/*
 * The Pregel engine: snapshot reads and deterministic merges (the seeds'
 * lost update), deferred commit with retries and their computed delays,
 * interrupts, inboxes and combiners, vote to halt, Sends, the recursion
 * limit, and errors that name the vertex.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

/* ---- fixtures ---- */

typedef struct fixture {
    sst_schema *schema;
    sst_pregel_builder *b;
    sst_pregel *p;
    sst_engine *e;
    sst_run_result *r;
    uint64_t sleeps[16]; /* delays the engine asked for */
    size_t nsleeps;
    char retries[512];      /* "vertex:attempt:delay;" from on_retry */
    char events[512];       /* "vertex:events;" collected by collect_events */
    sst_value *configs[16]; /* vertex configs, released at teardown */
    size_t nconfigs;
} fixture;

static fixture *g; /* the current test's fixture */

static void fake_sleep(uint64_t ms, void *ud) {
    fixture *f = ud;
    if (f->nsleeps < 16) {
        f->sleeps[f->nsleeps++] = ms;
    }
}

static void on_retry(const char *vertex, unsigned attempt, const sst_error *error,
                     uint64_t delay_ms, void *ud) {
    fixture *f = ud;
    (void)error;
    size_t n = strlen(f->retries);
    snprintf(f->retries + n, sizeof f->retries - n, "%s:%u:%llu;", vertex, attempt,
             (unsigned long long)delay_ms);
}

static int setup(void **state) {
    (void)state;
    g = calloc(1, sizeof *g);
    g->schema = sst_schema_new(NULL);
    return 0;
}

static int teardown(void **state) {
    (void)state;
    sst_run_result_free(g->r);
    sst_engine_free(g->e);
    sst_pregel_free(g->p);
    sst_pregel_builder_free(g->b);
    sst_schema_free(g->schema);
    for (size_t i = 0; i < g->nconfigs; i++) {
        sst_value_unref(g->configs[i]);
    }
    free(g);
    return 0;
}

static void field(const char *name, const sst_reducer *r, const char *def) {
    sst_error err;
    assert_sst_ok(sst_schema_add_field(g->schema, name, r, def ? tu_json(def) : NULL, &err), &err);
}

static void vertex(const char *name, sst_compute_fn fn, void *ud, const sst_vertex_opts *o) {
    sst_error err;
    if (g->b == NULL) {
        g->b = sst_pregel_builder_new(g->schema, &err);
    }
    assert_sst_ok(sst_pregel_builder_add_vertex(g->b, name, fn, ud, o, &err), &err);
}

/* Builds, runs from @p start (comma-separated vertices) with @p workers. */
static const sst_run_result *run_with(const char *start, unsigned workers, sst_run_opts *opts) {
    sst_error err;
    if (g->p == NULL) {
        g->p = sst_pregel_builder_build(g->b, &err);
        assert_non_null(g->p);
    }
    sst_engine_free(g->e);
    sst_engine_opts eo;
    sst_engine_opts_init(&eo);
    eo.workers = workers;
    g->e = sst_engine_new(&eo, &err);
    assert_non_null(g->e);
    static char names[256];
    static const char *list[16];
    snprintf(names, sizeof names, "%s", start);
    size_t n = 0;
    for (char *p = names; p != NULL && *p != '\0' && n < 16;) {
        list[n++] = p;
        p = strchr(p, ',');
        if (p != NULL) {
            *p++ = '\0';
        }
    }
    sst_run_opts defaults;
    if (opts == NULL) {
        sst_run_opts_init(&defaults);
        opts = &defaults;
    }
    opts->start = list;
    opts->n_start = n;
    opts->sleep = fake_sleep;
    opts->on_retry = on_retry;
    opts->user_data = g;
    sst_run_result_free(g->r);
    g->r = sst_engine_run(g->e, g->p, opts, &err);
    assert_non_null(g->r);
    return g->r;
}

static const sst_run_result *run(const char *start) {
    return run_with(start, 4, NULL);
}

/* ---- compute functions ---- */

/* Writes config["field"] = config["value"] and halts. */
static sst_code write_config(sst_task *t, void *ud) {
    (void)ud;
    const sst_value *c = sst_task_config(t);
    const sst_value *f = sst_object_get(c, "field");
    sst_task_vote_halt(t);
    return sst_task_write(t, sst_string_cstr(f), sst_value_ref(sst_object_get(c, "value")), NULL);
}

static sst_vertex_opts with_config(const char *json) {
    sst_vertex_opts o;
    sst_vertex_opts_init(&o);
    sst_value *c = tu_json(json);
    o.config = c;
    g->configs[g->nconfigs++] = c; /* the builder takes its own reference */
    return o;
}

static void test_lost_update_sum(void **state) {
    (void)state;
    /* Three parallel tasks add 1 to a counter from 0: 3, never 1. */
    field("counter", sst_reducer_sum(), "0");
    for (int i = 0; i < 3; i++) {
        char name[8];
        snprintf(name, sizeof name, "t%d", i);
        sst_vertex_opts o = with_config("{\"field\":\"counter\",\"value\":1}");
        vertex(name, write_config, NULL, &o);
    }
    for (int rep = 0; rep < 20; rep++) {
        const sst_run_result *r = run("t0,t1,t2");
        assert_int_equal(sst_run_result_status(r), SST_RUN_COMPLETED);
        assert_json_eq(sst_run_result_state(r), "{\"counter\":3}");
        assert_int_equal(sst_run_result_supersteps(r), 1);
    }
}

static void test_lost_update_replace_order(void **state) {
    (void)state;
    /* With replace the last task in merge order wins: vertex tasks sort by name. */
    field("x", sst_reducer_replace(), "0");
    const char *names[] = {"zeta", "alpha", "mid"};
    for (int i = 0; i < 3; i++) {
        char cfg[64];
        snprintf(cfg, sizeof cfg, "{\"field\":\"x\",\"value\":\"%s\"}", names[i]);
        sst_vertex_opts o = with_config(cfg);
        vertex(names[i], write_config, NULL, &o);
    }
    for (int rep = 0; rep < 20; rep++) {
        const sst_run_result *r = run_with("mid,zeta,alpha", 1 + rep % 4, NULL);
        assert_json_eq(sst_run_result_state(r), "{\"x\":\"zeta\"}");
    }
}

/* ---- deferred commit and retries ---- */

typedef struct counter {
    int calls;
    int fail_until; /* fail attempts below this */
    sst_code code;
    char saw[256]; /* what the last call saw in the state */
} counter;

static sst_code logger(sst_task *t, void *ud) {
    counter *c = ud;
    c->calls++;
    char *s = sst_json_write(sst_task_state(t), SST_JSON_COMPACT, NULL, NULL);
    snprintf(c->saw, sizeof c->saw, "%s", s);
    sst_free(s);
    sst_task_vote_halt(t);
    if ((int)sst_task_attempt(t) < c->fail_until) {
        return sst_task_fail(t, c->code, "boom on attempt %u", sst_task_attempt(t));
    }
    sst_value *item = sst_string_new(sst_task_vertex(t), NULL);
    return sst_task_write(t, "log", sst_array_push_take(sst_array_empty(), item, NULL), NULL);
}

static sst_vertex_opts no_jitter(unsigned attempts) {
    sst_vertex_opts o;
    sst_vertex_opts_init(&o);
    o.retry.jitter = false;
    o.retry.max_attempts = attempts;
    return o;
}

static void test_deferred_commit_retry_succeeds(void **state) {
    (void)state;
    field("log", sst_reducer_append(), "[]");
    counter good = {0, 0, SST_ETASK, ""}, flaky = {0, 2, SST_ETASK, ""};
    sst_vertex_opts o = no_jitter(3);
    vertex("good", logger, &good, &o);
    vertex("flaky", logger, &flaky, &o);
    const sst_run_result *r = run("good,flaky");
    assert_int_equal(sst_run_result_status(r), SST_RUN_COMPLETED);
    /* Both deltas are in, in task order (flaky < good by name). */
    assert_json_eq(sst_run_result_state(r), "{\"log\":[\"flaky\",\"good\"]}");
    /* The retry still saw the old snapshot: good's write was held back. */
    assert_string_equal(flaky.saw, "{\"log\":[]}");
    assert_int_equal(good.calls, 1);
    assert_int_equal(flaky.calls, 2);
    assert_int_equal(g->nsleeps, 1);
    assert_int_equal(g->sleeps[0], 500);
    assert_string_equal(g->retries, "flaky:1:500;");
    assert_int_equal(sst_run_result_retries(r), 1);
    assert_int_equal(sst_run_result_tasks(r), 3);
}

static void test_retries_exhausted(void **state) {
    (void)state;
    field("log", sst_reducer_append(), "[]");
    counter good = {0, 0, SST_ETASK, ""}, bad = {0, 100, SST_ETASK, ""};
    sst_vertex_opts o = no_jitter(3);
    vertex("good", logger, &good, &o);
    vertex("bad", logger, &bad, &o);
    const sst_run_result *r = run("good,bad");
    assert_int_equal(sst_run_result_status(r), SST_RUN_FAILED);
    assert_int_equal(bad.calls, 3); /* exactly max_attempts */
    assert_int_equal(good.calls, 1);
    assert_int_equal(sst_run_result_error(r)->code, SST_ETASK);
    assert_string_equal(sst_run_result_error(r)->msg,
                        "vertex 'bad' failed after 3 attempts: boom on attempt 3");
    assert_string_equal(sst_run_result_error_vertex(r), "bad");
    /* Committed state untouched; good's write reported as pending. */
    assert_json_eq(sst_run_result_state(r), "{\"log\":[]}");
    const sst_value *pending = sst_run_result_pending(r);
    assert_int_equal(sst_array_len(pending), 1);
    const sst_value *p0 = sst_array_get(pending, 0);
    assert_string_equal(sst_string_cstr(sst_object_get(p0, "vertex")), "good");
    assert_json_eq(sst_object_get(p0, "delta"), "{\"log\":[\"good\"]}");
    assert_int_equal(sst_string_len(sst_object_get(p0, "task")), 32);
    /* Backoff: 0.5 s then 1 s (factor 2), no jitter. */
    assert_int_equal(g->nsleeps, 2);
    assert_int_equal(g->sleeps[0], 500);
    assert_int_equal(g->sleeps[1], 1000);
    assert_int_equal(sst_run_result_supersteps(r), 0);
}

static void test_permanent_error_not_retried(void **state) {
    (void)state;
    field("log", sst_reducer_append(), "[]");
    counter bad = {0, 100, SST_EINVAL, ""};
    vertex("bad", logger, &bad, NULL);
    const sst_run_result *r = run("bad");
    assert_int_equal(sst_run_result_status(r), SST_RUN_FAILED);
    assert_int_equal(bad.calls, 1);
    assert_int_equal(g->nsleeps, 0);
    assert_string_equal(sst_run_result_error(r)->msg,
                        "vertex 'bad' failed after 1 attempt: boom on attempt 1");
}

static bool only_etask(sst_code code, void *ud) {
    (void)ud;
    return code == SST_EIO;
}

static void test_retry_on_predicate_and_jitter(void **state) {
    (void)state;
    field("log", sst_reducer_append(), "[]");
    counter io = {0, 3, SST_EIO, ""};
    sst_vertex_opts o;
    sst_vertex_opts_init(&o); /* jitter on */
    o.retry.max_attempts = 5;
    o.retry.retry_on = only_etask;
    vertex("io", logger, &io, &o);
    sst_run_opts ro;
    sst_run_opts_init(&ro);
    ro.jitter_seed = 42;
    const sst_run_result *r = run_with("io", 2, &ro);
    assert_int_equal(sst_run_result_status(r), SST_RUN_COMPLETED);
    assert_int_equal(io.calls, 3);
    assert_int_equal(g->nsleeps, 2);
    assert_true(g->sleeps[0] >= 500 && g->sleeps[0] < 1500);
    assert_true(g->sleeps[1] >= 1000 && g->sleeps[1] < 2000);
    uint64_t first[2] = {g->sleeps[0], g->sleeps[1]};
    /* The same seed gives the same jitter. */
    g->nsleeps = 0;
    io.calls = 0;
    r = run_with("io", 2, &ro);
    assert_int_equal(g->sleeps[0], first[0]);
    assert_int_equal(g->sleeps[1], first[1]);
}

static void test_retry_delay_formula(void **state) {
    (void)state;
    sst_retry_policy p;
    sst_retry_policy_init(&p);
    assert_int_equal(p.max_attempts, 3);
    p.jitter = false;
    assert_int_equal(sst_retry_policy_delay_ms(&p, 1, 0.9), 500);
    assert_int_equal(sst_retry_policy_delay_ms(&p, 2, 0.9), 1000);
    assert_int_equal(sst_retry_policy_delay_ms(&p, 5, 0.9), 8000);
    assert_int_equal(sst_retry_policy_delay_ms(&p, 20, 0.9), 128000); /* capped */
    assert_int_equal(sst_retry_policy_delay_ms(&p, 5000, 0.9), 128000);
    p.jitter = true;
    assert_int_equal(sst_retry_policy_delay_ms(&p, 1, 0.25), 750);
}

/* ---- interrupts ---- */

static sst_code asker(sst_task *t, void *ud) {
    (void)ud;
    sst_task_vote_halt(t);
    return sst_task_interrupt(t, tu_json("{\"question\":\"proceed?\"}"));
}

static void test_interrupt_keeps_siblings_pending(void **state) {
    (void)state;
    field("log", sst_reducer_append(), "[]");
    counter a = {0, 0, SST_ETASK, ""};
    vertex("a", logger, &a, NULL);
    vertex("b", asker, NULL, NULL);
    const sst_run_result *r = run("a,b");
    assert_int_equal(sst_run_result_status(r), SST_RUN_INTERRUPTED);
    assert_string_equal(sst_run_status_name(sst_run_result_status(r)), "interrupted");
    assert_json_eq(sst_run_result_state(r), "{\"log\":[]}");
    const sst_value *ints = sst_run_result_interrupts(r);
    assert_int_equal(sst_array_len(ints), 1);
    assert_string_equal(sst_string_cstr(sst_object_get(sst_array_get(ints, 0), "vertex")), "b");
    assert_json_eq(sst_object_get(sst_array_get(ints, 0), "value"), "{\"question\":\"proceed?\"}");
    const sst_value *pending = sst_run_result_pending(r);
    assert_int_equal(sst_array_len(pending), 1);
    assert_json_eq(sst_object_get(sst_array_get(pending, 0), "delta"), "{\"log\":[\"a\"]}");
    assert_int_equal(a.calls, 1);
}

/* ---- inboxes, combiners, halting, Sends ---- */

/* Sends messages listed in config["to"] = [[vertex, value], ...]. */
static sst_code messenger(sst_task *t, void *ud) {
    (void)ud;
    const sst_value *to = sst_object_get(sst_task_config(t), "to");
    for (size_t i = 0; i < sst_array_len(to); i++) {
        const sst_value *m = sst_array_get(to, i);
        sst_code rc = sst_task_message(t, sst_string_cstr(sst_array_get(m, 0)),
                                       sst_value_ref(sst_array_get(m, 1)), NULL);
        if (rc != SST_OK) {
            return rc;
        }
    }
    sst_task_vote_halt(t);
    return SST_OK;
}

/* Writes its inbox to "got". */
static sst_code receiver(sst_task *t, void *ud) {
    (void)ud;
    sst_task_vote_halt(t);
    return sst_task_write(t, "got", sst_value_ref(sst_task_inbox(t)), NULL);
}

static sst_value *sum_combiner(void *ud, sst_value *acc, const sst_value *msg, sst_error *err) {
    (void)ud;
    sst_value *out = sst_int_new(sst_int_value(acc) + sst_int_value(msg), err);
    sst_value_unref(acc);
    return out;
}

static void test_inbox_in_send_order(void **state) {
    (void)state;
    sst_vertex_opts a = with_config("{\"to\":[[\"c\",1],[\"c\",2]]}");
    sst_vertex_opts b = with_config("{\"to\":[[\"c\",3]]}");
    vertex("a", messenger, NULL, &a);
    vertex("b", messenger, NULL, &b);
    vertex("c", receiver, NULL, NULL);
    const sst_run_result *r = run("b,a");
    assert_int_equal(sst_run_result_status(r), SST_RUN_COMPLETED);
    assert_json_eq(sst_run_result_state(r), "{\"got\":[1,2,3]}");
    assert_int_equal(sst_run_result_supersteps(r), 2);
}

static void test_combiner(void **state) {
    (void)state;
    sst_vertex_opts a = with_config("{\"to\":[[\"c\",1],[\"c\",2]]}");
    sst_vertex_opts b = with_config("{\"to\":[[\"c\",30]]}");
    sst_vertex_opts c;
    sst_vertex_opts_init(&c);
    c.combiner = sum_combiner;
    vertex("a", messenger, NULL, &a);
    vertex("b", messenger, NULL, &b);
    vertex("c", receiver, NULL, &c);
    const sst_run_result *r = run("a,b");
    assert_json_eq(sst_run_result_state(r), "{\"got\":[33]}");
}

/* A combiner that fails without saying why. */
static sst_value *silent_combiner(void *ud, sst_value *acc, const sst_value *msg, sst_error *err) {
    (void)ud;
    (void)msg;
    (void)err;
    sst_value_unref(acc);
    return NULL;
}

static void test_combiner_fails_without_a_message(void **state) {
    (void)state;
    sst_vertex_opts a = with_config("{\"to\":[[\"c\",1],[\"c\",2]]}");
    sst_vertex_opts c;
    sst_vertex_opts_init(&c);
    c.combiner = silent_combiner;
    vertex("a", messenger, NULL, &a);
    vertex("c", receiver, NULL, &c);
    const sst_run_result *r = run("a");
    assert_int_equal(sst_run_result_status(r), SST_RUN_FAILED);
    assert_int_equal(sst_run_result_error(r)->code, SST_ETASK);
    assert_string_equal(sst_run_result_error(r)->msg,
                        "combiner of vertex 'c' failed: it returned no message");
}

/* Writes a field whose name is not UTF-8, with no err: the task fails with the write's code. */
static sst_code bad_writer(sst_task *t, void *ud) {
    (void)ud;
    return sst_task_write(t, "bad\xff", sst_int_new(1, NULL), NULL);
}

static void test_write_code_without_err(void **state) {
    (void)state;
    vertex("w", bad_writer, NULL, NULL);
    const sst_run_result *r = run("w");
    assert_int_equal(sst_run_result_status(r), SST_RUN_FAILED);
    assert_int_equal(sst_run_result_error(r)->code, SST_EUTF8); /* not a guessed SST_ENOMEM */
}

/* Adds 1 to "n"; votes to halt once n reaches config["until"] - 1. */
static sst_code stepper(sst_task *t, void *ud) {
    (void)ud;
    int64_t n = sst_int_value(sst_object_get(sst_task_state(t), "n"));
    if (n + 1 >= sst_int_value(sst_object_get(sst_task_config(t), "until"))) {
        sst_task_vote_halt(t);
    }
    return sst_task_write(t, "n", sst_int_new(1, NULL), NULL);
}

static void test_vote_to_halt(void **state) {
    (void)state;
    field("n", sst_reducer_sum(), "0");
    sst_vertex_opts o = with_config("{\"until\":5}");
    vertex("s", stepper, NULL, &o);
    const sst_run_result *r = run("s");
    assert_int_equal(sst_run_result_status(r), SST_RUN_COMPLETED);
    assert_json_eq(sst_run_result_state(r), "{\"n\":5}");
    assert_int_equal(sst_run_result_supersteps(r), 5);
}

static void test_recursion_limit(void **state) {
    (void)state;
    field("n", sst_reducer_sum(), "0");
    sst_vertex_opts o = with_config("{\"until\":1000000}");
    vertex("s", stepper, NULL, &o);
    sst_run_opts ro;
    sst_run_opts_init(&ro);
    ro.max_supersteps = 10;
    const sst_run_result *r = run_with("s", 1, &ro);
    assert_int_equal(sst_run_result_status(r), SST_RUN_FAILED);
    assert_int_equal(sst_run_result_error(r)->code, SST_ELIMIT);
    assert_string_equal(sst_run_result_error(r)->msg,
                        "recursion limit of 10 supersteps reached with 1 task still to run (raise "
                        "max_supersteps / recursion_limit if the run is meant to be longer)");
    /* Committed supersteps are kept. */
    assert_json_eq(sst_run_result_state(r), "{\"n\":10}");
    /* The default limit is LangGraph's 25. */
    sst_run_opts_init(&ro);
    assert_int_equal(ro.max_supersteps, 25);
}

/* Sends config["n"] tasks to "work" with payloads 1..n. */
static sst_code splitter(sst_task *t, void *ud) {
    (void)ud;
    int64_t n = sst_int_value(sst_object_get(sst_task_config(t), "n"));
    for (int64_t i = 1; i <= n; i++) {
        sst_code rc = sst_task_send(t, "work", sst_int_new(i * 1000, NULL), NULL);
        if (rc != SST_OK) {
            return rc;
        }
    }
    sst_task_vote_halt(t);
    return SST_OK;
}

/* Appends 2 * input to "results". */
static sst_code doubler(sst_task *t, void *ud) {
    (void)ud;
    sst_task_vote_halt(t);
    sst_value *x = sst_int_new(2 * sst_int_value(sst_task_input(t)), NULL);
    return sst_task_write(t, "results", sst_array_push_take(sst_array_empty(), x, NULL), NULL);
}

static void test_sends_in_send_order(void **state) {
    (void)state;
    field("results", sst_reducer_append(), "[]");
    sst_vertex_opts o = with_config("{\"n\":40}");
    vertex("split", splitter, NULL, &o);
    vertex("work", doubler, NULL, NULL);
    const sst_run_result *r = run_with("split", 3, NULL);
    assert_int_equal(sst_run_result_status(r), SST_RUN_COMPLETED);
    const sst_value *res = sst_object_get(sst_run_result_state(r), "results");
    assert_int_equal(sst_array_len(res), 40);
    for (size_t i = 0; i < 40; i++) {
        assert_int_equal(sst_int_value(sst_array_get(res, i)), (int64_t)(i + 1) * 2000);
    }
    assert_int_equal(sst_run_result_tasks(r), 41);
}

/* ---- bad input and errors ---- */

static sst_code goes_nowhere(sst_task *t, void *ud) {
    (void)ud;
    sst_task_vote_halt(t);
    sst_code ignored = sst_task_activate(t, "nowhere", NULL); /* ignored on purpose */
    (void)ignored;
    return SST_OK;
}

static void test_unknown_target_fails_the_run(void **state) {
    (void)state;
    vertex("a", goes_nowhere, NULL, NULL);
    const sst_run_result *r = run("a");
    assert_int_equal(sst_run_result_status(r), SST_RUN_FAILED);
    assert_string_equal(sst_run_result_error(r)->msg,
                        "vertex 'a' failed after 1 attempt: vertex 'a' activates unknown vertex "
                        "'nowhere'");
    assert_string_equal(sst_run_result_error_vertex(r), "a");
}

static void test_reducer_conflict_at_commit(void **state) {
    (void)state;
    field("plan", sst_reducer_unique(), NULL);
    sst_vertex_opts a = with_config("{\"field\":\"plan\",\"value\":\"A\"}");
    sst_vertex_opts b = with_config("{\"field\":\"plan\",\"value\":\"B\"}");
    vertex("a", write_config, NULL, &a);
    vertex("b", write_config, NULL, &b);
    const sst_run_result *r = run("a,b");
    assert_int_equal(sst_run_result_status(r), SST_RUN_FAILED);
    assert_int_equal(sst_run_result_error(r)->code, SST_ECONFLICT);
    assert_string_equal(sst_run_result_error(r)->msg,
                        "superstep 0: reducer 'unique' on field 'plan': 2 writes in one superstep "
                        "(\"A\" and \"B\"); declare a reducer such as 'append' or 'sum' to "
                        "combine them");
    assert_int_equal(sst_array_len(sst_run_result_pending(r)), 2);
    assert_json_eq(sst_run_result_state(r), "{}");
}

static void test_input_is_step_minus_one(void **state) {
    (void)state;
    field("counter", sst_reducer_sum(), "10");
    sst_vertex_opts o = with_config("{\"field\":\"counter\",\"value\":3}");
    vertex("a", write_config, NULL, &o);
    sst_run_opts ro;
    sst_run_opts_init(&ro);
    sst_value *input = tu_json("{\"counter\":5}");
    ro.input = input;
    const sst_run_result *r = run_with("a", 1, &ro);
    assert_json_eq(sst_run_result_state(r), "{\"counter\":18}");
    assert_int_equal(sst_run_result_supersteps(r), 1);
    sst_value_unref(input);
    /* A bad input is refused before anything runs. */
    sst_error err;
    sst_run_opts_init(&ro);
    input = tu_json("{\"counter\":\"x\"}");
    ro.input = input;
    assert_null(sst_engine_run(g->e, g->p, &ro, &err));
    assert_string_equal(err.msg,
                        "input: reducer 'sum' on field 'counter': expected number, got string");
    sst_value_unref(input);
}

static void test_builder_and_start_errors(void **state) {
    (void)state;
    sst_error err;
    g->b = sst_pregel_builder_new(g->schema, &err);
    assert_null(sst_pregel_builder_build(g->b, &err));
    assert_string_equal(err.msg, "pregel: no vertices");
    assert_sst_ok(sst_pregel_builder_add_vertex(g->b, "a", receiver, NULL, NULL, &err), &err);
    assert_int_equal(sst_pregel_builder_add_vertex(g->b, "a", receiver, NULL, NULL, &err),
                     SST_EINVAL);
    assert_string_equal(err.msg, "pregel: duplicate vertex 'a'");
    assert_int_equal(sst_pregel_builder_add_vertex(g->b, "", receiver, NULL, NULL, &err),
                     SST_EINVAL);
    assert_int_equal(sst_pregel_builder_add_vertex(g->b, "x", NULL, NULL, NULL, &err), SST_EINVAL);
    g->p = sst_pregel_builder_build(g->b, &err);
    assert_int_equal(sst_pregel_vertex_count(g->p), 1);
    assert_string_equal(sst_pregel_vertex_name(g->p, 0), "a");
    g->e = sst_engine_new(NULL, &err);
    sst_run_opts ro;
    sst_run_opts_init(&ro);
    const char *start[] = {"ghost"};
    ro.start = start;
    ro.n_start = 1;
    assert_null(sst_engine_run(g->e, g->p, &ro, &err));
    assert_string_equal(err.msg, "engine run: unknown start vertex 'ghost'");
    sst_engine_opts eo;
    sst_engine_opts_init(&eo);
    eo.workers = 0;
    assert_null(sst_engine_new(&eo, &err));
    assert_string_equal(err.msg, "engine: workers must be 1..4096, got 0");
}

/* ---- task ids and hooks ---- */

static sst_code record_id(sst_task *t, void *ud) {
    char *out = ud;
    snprintf(out, 33, "%s", sst_task_id(t));
    sst_task_vote_halt(t);
    return SST_OK;
}

static void test_task_ids_deterministic(void **state) {
    (void)state;
    char id1[33], id2[33], id3[33];
    vertex("a", record_id, id1, NULL);
    sst_run_opts ro;
    sst_run_opts_init(&ro);
    ro.run_key = "thread-1/checkpoint-7";
    run_with("a", 1, &ro);
    memcpy(id2, id1, 33);
    sst_run_opts_init(&ro);
    ro.run_key = "thread-1/checkpoint-7";
    run_with("a", 2, &ro);
    assert_string_equal(id1, id2);
    memcpy(id3, id1, 33);
    sst_run_opts_init(&ro);
    ro.run_key = "thread-2/checkpoint-7";
    run_with("a", 1, &ro);
    assert_string_not_equal(id1, id3);
    assert_int_equal(strlen(id1), 32);
}

static sst_code stop_after_two(const sst_superstep_stats *st, void *ud) {
    fixture *f = ud;
    (void)f;
    assert_int_equal(st->tasks, 1);
    assert_int_equal(st->delta_fields, 1);
    assert_string_equal(st->task[0].vertex, "s");
    assert_json_eq(st->task[0].delta, "{\"n\":1}");
    assert_int_equal(sst_int_value(sst_object_get(st->state, "n")), (int64_t)st->superstep + 1);
    return st->superstep < 1 ? SST_OK : SST_ETASK;
}

static void test_on_superstep_hook(void **state) {
    (void)state;
    field("n", sst_reducer_sum(), "0");
    sst_vertex_opts o = with_config("{\"until\":100}");
    vertex("s", stepper, NULL, &o);
    sst_run_opts ro;
    sst_run_opts_init(&ro);
    ro.on_superstep = stop_after_two;
    const sst_run_result *r = run_with("s", 1, &ro);
    assert_int_equal(sst_run_result_status(r), SST_RUN_FAILED);
    assert_string_equal(sst_run_result_error(r)->msg,
                        "stopped by the on_superstep hook after superstep 1");
    assert_json_eq(sst_run_result_state(r), "{\"n\":2}");
}

/* ---- resume points ---- */

/* Interrupts until it has a resume value, then writes it to "answer". */
static sst_code ask_once(sst_task *t, void *ud) {
    int *calls = ud;
    (*calls)++;
    sst_task_vote_halt(t);
    const sst_value *answer = sst_task_resume_value(t, 0);
    if (answer == NULL) {
        return sst_task_interrupt(t, tu_json("\"name?\""));
    }
    return sst_task_write(t, "answer", sst_value_ref(answer), NULL);
}

/* Resumes @p prev's run with resume values {task id of interrupt i: [value]}. */
static const sst_run_result *resume_with(const char *value) {
    const sst_run_result *prev = g->r;
    sst_value *rp = sst_value_ref(sst_run_result_resume_point(prev));
    if (value != NULL) {
        const sst_value *ints = sst_run_result_interrupts(prev);
        sst_value *map = sst_value_ref(sst_object_get(rp, "resume"));
        for (size_t i = 0; i < sst_array_len(ints); i++) {
            const char *task = sst_string_cstr(sst_object_get(sst_array_get(ints, i), "task"));
            map = sst_object_set_take(
                map, task, sst_array_push_take(sst_array_empty(), tu_json(value), NULL), NULL);
        }
        rp = sst_object_set_take(rp, "resume", map, NULL);
    }
    sst_value *state = sst_value_ref(sst_run_result_state(prev));
    sst_run_opts ro;
    sst_run_opts_init(&ro);
    ro.resume = rp;
    ro.state = state;
    ro.sleep = fake_sleep;
    ro.user_data = g;
    sst_error err;
    sst_run_result *r = sst_engine_run(g->e, g->p, &ro, &err);
    if (r == NULL) {
        print_error("resume failed: %s\n", err.msg);
        fail();
    }
    sst_run_result_free(g->r);
    g->r = r;
    sst_value_unref(rp);
    sst_value_unref(state);
    return r;
}

static void test_resume_after_interrupt(void **state) {
    (void)state;
    field("log", sst_reducer_append(), "[]");
    counter a = {0, 0, SST_ETASK, ""};
    int asks = 0;
    vertex("a", logger, &a, NULL);
    vertex("q", ask_once, &asks, NULL);
    const sst_run_result *r = run("a,q");
    assert_int_equal(sst_run_result_status(r), SST_RUN_INTERRUPTED);
    const sst_value *rp = sst_run_result_resume_point(r);
    assert_int_equal(sst_int_value(sst_object_get(rp, "superstep")), 0);
    assert_int_equal(sst_array_len(sst_object_get(rp, "tasks")), 2);
    assert_int_equal(sst_array_len(sst_object_get(rp, "pending")), 1);
    r = resume_with("\"bob\"");
    assert_int_equal(sst_run_result_status(r), SST_RUN_COMPLETED);
    assert_json_eq(sst_run_result_state(r), "{\"log\":[\"a\"],\"answer\":\"bob\"}");
    assert_int_equal(a.calls, 1); /* its write came from the pending writes */
    assert_int_equal(asks, 2);
    assert_true(sst_is_null(sst_run_result_resume_point(r)));
}

static void test_resume_after_failure_reruns_only_the_failed(void **state) {
    (void)state;
    field("log", sst_reducer_append(), "[]");
    counter good = {0, 0, SST_ETASK, ""}, bad = {0, 100, SST_ETASK, ""};
    sst_vertex_opts o = no_jitter(2);
    vertex("good", logger, &good, &o);
    vertex("bad", logger, &bad, &o);
    const sst_run_result *r = run("good,bad");
    assert_int_equal(sst_run_result_status(r), SST_RUN_FAILED);
    assert_int_equal(bad.calls, 2);
    bad.fail_until = 0; /* "fix" the node, then resume */
    r = resume_with(NULL);
    assert_int_equal(sst_run_result_status(r), SST_RUN_COMPLETED);
    assert_json_eq(sst_run_result_state(r), "{\"log\":[\"bad\",\"good\"]}");
    assert_int_equal(good.calls, 1);
    assert_int_equal(bad.calls, 3);
}

static sst_code interrupt_before_q(uint64_t step, const char *const *v, size_t n, void *ud) {
    (void)step, (void)ud;
    for (size_t i = 0; i < n; i++) {
        if (strcmp(v[i], "q") == 0) {
            return SST_EINTERRUPT;
        }
    }
    return SST_OK;
}

/* Writes 1 to "n" and activates config["next"] when given. */
static sst_code chain(sst_task *t, void *ud) {
    (void)ud;
    sst_task_vote_halt(t);
    const sst_value *next = sst_object_get(sst_task_config(t), "next");
    if (next != NULL) {
        sst_code rc = sst_task_activate(t, sst_string_cstr(next), NULL);
        if (rc != SST_OK) {
            return rc;
        }
    }
    return sst_task_write(t, "n", sst_int_new(1, NULL), NULL);
}

static void test_before_hook_interrupt_and_resume(void **state) {
    (void)state;
    field("n", sst_reducer_sum(), "0");
    sst_vertex_opts a = with_config("{\"next\":\"q\"}");
    vertex("a", chain, NULL, &a);
    vertex("q", chain, NULL, NULL);
    sst_run_opts ro;
    sst_run_opts_init(&ro);
    ro.before_superstep = interrupt_before_q;
    const sst_run_result *r = run_with("a", 1, &ro);
    assert_int_equal(sst_run_result_status(r), SST_RUN_INTERRUPTED);
    assert_json_eq(sst_run_result_state(r), "{\"n\":1}");
    const sst_value *rp = sst_run_result_resume_point(r);
    assert_int_equal(sst_int_value(sst_object_get(rp, "superstep")), 1);
    assert_string_equal(
        sst_string_cstr(sst_object_get(sst_array_get(sst_object_get(rp, "tasks"), 0), "vertex")),
        "q");
    r = resume_with(NULL); /* no before hook this time */
    assert_int_equal(sst_run_result_status(r), SST_RUN_COMPLETED);
    assert_json_eq(sst_run_result_state(r), "{\"n\":2}");
    assert_int_equal(sst_run_result_supersteps(r), 2);
}

static sst_code interrupt_after_first(const sst_superstep_stats *st, void *ud) {
    (void)ud;
    return st->superstep == 0 ? SST_EINTERRUPT : SST_OK;
}

static void test_after_hook_interrupt_and_resume(void **state) {
    (void)state;
    field("n", sst_reducer_sum(), "0");
    sst_vertex_opts a = with_config("{\"next\":\"b\"}");
    vertex("a", chain, NULL, &a);
    vertex("b", chain, NULL, NULL);
    sst_run_opts ro;
    sst_run_opts_init(&ro);
    ro.on_superstep = interrupt_after_first;
    const sst_run_result *r = run_with("a", 1, &ro);
    assert_int_equal(sst_run_result_status(r), SST_RUN_INTERRUPTED);
    assert_json_eq(sst_run_result_state(r), "{\"n\":1}");
    r = resume_with(NULL);
    assert_json_eq(sst_run_result_state(r), "{\"n\":2}");
}

/* Activates "j" once, when the state has two arrivals. */
static sst_code join_when_two(sst_commit *c, void *ud) {
    int *fired = ud;
    if (!*fired && sst_int_value(sst_object_get(sst_commit_state(c), "n")) == 2) {
        *fired = 1;
        return sst_commit_activate(c, "j", NULL);
    }
    return SST_OK;
}

static sst_code emitter(sst_task *t, void *ud) {
    (void)ud;
    sst_task_vote_halt(t);
    sst_code rc = sst_task_emit(t, tu_json("{\"progress\":1}"), NULL);
    if (rc == SST_OK) {
        rc = sst_task_emit(t, tu_json("{\"progress\":2}"), NULL);
    }
    return rc;
}

static sst_code collect_events(const sst_superstep_stats *st, void *ud) {
    fixture *f = ud;
    for (size_t i = 0; i < st->tasks; i++) {
        char *e = sst_json_write(st->task[i].events, SST_JSON_COMPACT, NULL, NULL);
        size_t n = strlen(f->events);
        snprintf(f->events + n, sizeof f->events - n, "%s:%s;", st->task[i].vertex, e);
        sst_free(e);
    }
    return SST_OK;
}

static void test_commit_hook_sends_and_events(void **state) {
    (void)state;
    field("n", sst_reducer_sum(), "0");
    sst_vertex_opts o1 = with_config("{\"field\":\"n\",\"value\":1}");
    sst_vertex_opts o2 = with_config("{\"field\":\"n\",\"value\":1}");
    vertex("x", write_config, NULL, &o1);
    vertex("y", write_config, NULL, &o2);
    vertex("j", emitter, NULL, NULL);
    static int fired;
    fired = 0;
    sst_pregel_builder_set_commit_fn(g->b, join_when_two, &fired);
    sst_run_opts ro;
    sst_run_opts_init(&ro);
    /* y starts through an initial Send (its payload is unused). */
    sst_value *sends = tu_json("[{\"to\":\"y\",\"input\":7}]");
    ro.sends = sends;
    ro.on_superstep = collect_events;
    const sst_run_result *r = run_with("x", 2, &ro);
    if (sst_run_result_status(r) != SST_RUN_COMPLETED) {
        print_error("%s\n", sst_run_result_error(r)->msg);
    }
    assert_int_equal(sst_run_result_status(r), SST_RUN_COMPLETED);
    assert_json_eq(sst_run_result_state(r), "{\"n\":2}");
    assert_int_equal(sst_run_result_supersteps(r), 2);
    assert_string_equal(g->events, "x:[];y:[];j:[{\"progress\":1},{\"progress\":2}];");
    sst_value_unref(sends);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_lost_update_sum, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lost_update_replace_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_deferred_commit_retry_succeeds, setup, teardown),
        cmocka_unit_test_setup_teardown(test_retries_exhausted, setup, teardown),
        cmocka_unit_test_setup_teardown(test_permanent_error_not_retried, setup, teardown),
        cmocka_unit_test_setup_teardown(test_retry_on_predicate_and_jitter, setup, teardown),
        cmocka_unit_test_setup_teardown(test_retry_delay_formula, setup, teardown),
        cmocka_unit_test_setup_teardown(test_interrupt_keeps_siblings_pending, setup, teardown),
        cmocka_unit_test_setup_teardown(test_inbox_in_send_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_combiner, setup, teardown),
        cmocka_unit_test_setup_teardown(test_combiner_fails_without_a_message, setup, teardown),
        cmocka_unit_test_setup_teardown(test_write_code_without_err, setup, teardown),
        cmocka_unit_test_setup_teardown(test_vote_to_halt, setup, teardown),
        cmocka_unit_test_setup_teardown(test_recursion_limit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sends_in_send_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unknown_target_fails_the_run, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reducer_conflict_at_commit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_input_is_step_minus_one, setup, teardown),
        cmocka_unit_test_setup_teardown(test_builder_and_start_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_task_ids_deterministic, setup, teardown),
        cmocka_unit_test_setup_teardown(test_on_superstep_hook, setup, teardown),
        cmocka_unit_test_setup_teardown(test_resume_after_interrupt, setup, teardown),
        cmocka_unit_test_setup_teardown(test_resume_after_failure_reruns_only_the_failed, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_before_hook_interrupt_and_resume, setup, teardown),
        cmocka_unit_test_setup_teardown(test_after_hook_interrupt_and_resume, setup, teardown),
        cmocka_unit_test_setup_teardown(test_commit_hook_sends_and_events, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
