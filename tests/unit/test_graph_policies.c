/* SPDX-License-Identifier: MIT */
/*
 * Node policies through the C API (issue 16): error handlers (per node and
 * the graph's default; what failed reaches the handler; its update and goto
 * replace the node's writes; a handler that fails fails the run and a
 * resume on a real SQLite file runs the handler again, not the node),
 * timeouts (a spinning C node that asks sst_node_cancelled, an idle timeout
 * kept alive by heartbeats, a Send's own timeout, the graph's default, the
 * error's details, retried under a policy), step_timeout, and caching
 * (memory and SQLite caches, replayed updates and goto, key functions, ttl,
 * clear_cache).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "superstep/superstep.h"
#include "test_util.h"

static atomic_int CALLS, HANDLED;
static atomic_bool HANDLER_FAILS;

static void sleep_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static sst_code fails(sst_node_ctx *ctx, void *ud) {
    (void)ud;
    atomic_fetch_add(&CALLS, 1);
    (void)!sst_node_update(ctx, "log", sst_string_new("partial", NULL), NULL); /* dropped */
    return sst_node_fail(ctx, SST_ETASK, "boom %d", 7);
}

static sst_code ok_node(sst_node_ctx *ctx, void *ud) {
    return sst_node_update(ctx, "log", sst_string_new(ud, NULL), NULL);
}

/* An error handler: records what failed in "log" and routes to "after". */
static sst_code handler(sst_node_ctx *ctx, void *ud) {
    (void)ud;
    atomic_fetch_add(&HANDLED, 1);
    const sst_value *e = sst_node_error(ctx);
    if (e == NULL) {
        return sst_node_fail(ctx, SST_EINVAL, "no error for the handler");
    }
    if (atomic_load(&HANDLER_FAILS)) {
        return sst_node_fail(ctx, SST_ETASK, "handler crash");
    }
    char buf[200];
    snprintf(buf, sizeof buf, "%s:%s:%s", sst_string_cstr(sst_object_get(e, "node")),
             sst_string_cstr(sst_object_get(sst_object_get(e, "error"), "code")),
             sst_string_cstr(sst_object_get(sst_object_get(e, "error"), "message")));
    sst_code rc = sst_node_update(ctx, "log", sst_string_new(buf, NULL), NULL);
    return rc == SST_OK ? sst_node_goto(ctx, "after", NULL) : rc;
}

/* log (replace) <- START -> bad, with bad's handler; "after" reached only by goto. */
static sst_compiled_graph *handled_graph(bool node_handler, bool default_handler) {
    sst_error err;
    sst_graph *g = sst_graph_new(&err);
    assert_sst_ok(sst_graph_add_field(g, "log", sst_reducer_replace(), sst_null(), &err), &err);
    sst_node_opts o;
    sst_node_opts_init(&o);
    o.error_handler = node_handler ? handler : NULL;
    assert_sst_ok(sst_graph_add_node(g, "bad", fails, NULL, &o, &err), &err);
    assert_sst_ok(sst_graph_add_node(g, "after", ok_node, "after", NULL, &err), &err);
    assert_sst_ok(sst_graph_add_edge(g, SST_START, "bad", &err), &err);
    if (default_handler) {
        assert_sst_ok(sst_graph_set_default_error_handler(g, handler, NULL, &err), &err);
    }
    sst_compiled_graph *cg = sst_graph_compile(g, NULL, &err);
    assert_non_null(cg);
    sst_graph_free(g);
    return cg;
}

static void test_error_handler_routes(void **state) {
    (void)state;
    for (int variant = 0; variant < 2; variant++) {
        atomic_store(&CALLS, 0);
        atomic_store(&HANDLED, 0);
        atomic_store(&HANDLER_FAILS, false);
        sst_compiled_graph *cg = handled_graph(variant == 0, variant == 1);
        sst_error err;
        sst_value *in = tu_json("{}");
        sst_graph_result *r = sst_graph_invoke(cg, NULL, in, NULL, &err);
        assert_non_null(r);
        assert_int_equal(sst_graph_result_status(r), SST_RUN_COMPLETED);
        /* The handler ran after the node failed and routed to "after". */
        assert_string_equal(sst_string_cstr(sst_object_get(sst_graph_result_state(r), "log")),
                            "after");
        assert_int_equal(atomic_load(&CALLS), 1);
        assert_int_equal(atomic_load(&HANDLED), 1);
        sst_graph_result_free(r);
        sst_value_unref(in);
        sst_compiled_graph_free(cg);
    }
}

/* The handler's own update reaches the state when it does not route. */
static sst_code handler_no_goto(sst_node_ctx *ctx, void *ud) {
    (void)ud;
    const sst_value *e = sst_node_error(ctx);
    char buf[200];
    snprintf(buf, sizeof buf, "%s|%s", sst_string_cstr(sst_object_get(e, "node")),
             sst_string_cstr(sst_object_get(sst_object_get(e, "error"), "message")));
    return sst_node_update(ctx, "log", sst_string_new(buf, NULL), NULL);
}

static void test_error_handler_sees_failure(void **state) {
    (void)state;
    sst_error err;
    sst_graph *g = sst_graph_new(&err);
    assert_sst_ok(sst_graph_add_field(g, "log", sst_reducer_replace(), sst_null(), &err), &err);
    sst_node_opts o;
    sst_node_opts_init(&o);
    o.error_handler = handler_no_goto;
    o.retry.max_attempts = 3;
    o.retry.initial_interval_s = 0.001;
    o.retry.jitter = false;
    assert_sst_ok(sst_graph_add_node(g, "bad", fails, NULL, &o, &err), &err);
    assert_sst_ok(sst_graph_add_edge(g, SST_START, "bad", &err), &err);
    sst_compiled_graph *cg = sst_graph_compile(g, NULL, &err);
    assert_non_null(cg);
    atomic_store(&CALLS, 0);
    sst_value *in = tu_json("{}");
    sst_graph_result *r = sst_graph_invoke(cg, NULL, in, NULL, &err);
    assert_int_equal(sst_graph_result_status(r), SST_RUN_COMPLETED);
    assert_int_equal(atomic_load(&CALLS), 3); /* the handler runs once the retries are spent */
    assert_string_equal(sst_string_cstr(sst_object_get(sst_graph_result_state(r), "log")),
                        "bad|boom 7");
    sst_graph_result_free(r);
    sst_value_unref(in);
    sst_compiled_graph_free(cg);
    sst_graph_free(g);
}

/* A subgraph node's handler sees the node's name and the error as raised inside the
 * subgraph (LangGraph's NodeError(node="sub", error=<the inner exception>)); without a
 * handler the run's error reads the same. */
static void test_error_handler_subgraph_failure(void **state) {
    (void)state;
    sst_error err;
    sst_graph *cgb = sst_graph_new(&err);
    assert_sst_ok(sst_graph_add_field(cgb, "log", sst_reducer_replace(), sst_null(), &err), &err);
    assert_sst_ok(sst_graph_add_node(cgb, "inner", fails, NULL, NULL, &err), &err);
    assert_sst_ok(sst_graph_add_edge(cgb, SST_START, "inner", &err), &err);
    sst_compiled_graph *child = sst_graph_compile(cgb, NULL, &err);
    assert_non_null(child);
    for (int handled = 0; handled < 2; handled++) {
        sst_graph *g = sst_graph_new(&err);
        assert_sst_ok(sst_graph_add_field(g, "log", sst_reducer_replace(), sst_null(), &err), &err);
        sst_node_opts o;
        sst_node_opts_init(&o);
        o.error_handler = handled ? handler_no_goto : NULL;
        assert_sst_ok(sst_graph_add_subgraph(g, "sub", child, &o, &err), &err);
        assert_sst_ok(sst_graph_add_edge(g, SST_START, "sub", &err), &err);
        sst_compiled_graph *cg = sst_graph_compile(g, NULL, &err);
        assert_non_null(cg);
        sst_value *in = tu_json("{}");
        sst_graph_result *r = sst_graph_invoke(cg, NULL, in, NULL, &err);
        if (handled) {
            assert_int_equal(sst_graph_result_status(r), SST_RUN_COMPLETED);
            assert_string_equal(sst_string_cstr(sst_object_get(sst_graph_result_state(r), "log")),
                                "sub|boom 7");
        } else {
            assert_int_equal(sst_graph_result_status(r), SST_RUN_FAILED);
            assert_string_equal(sst_graph_result_error_node(r), "sub");
            assert_string_equal(sst_graph_result_error(r)->msg,
                                "vertex 'sub' failed after 1 attempt: boom 7");
        }
        sst_graph_result_free(r);
        sst_value_unref(in);
        sst_compiled_graph_free(cg);
        sst_graph_free(g);
    }
    sst_compiled_graph_free(child);
    sst_graph_free(cgb);
}

/* A handler that fails fails the run; the resume (another process's view of the same SQLite
 * file) runs the handler again and never the node that failed. */
static void test_error_handler_resumes(void **state) {
    (void)state;
    char dir[256], path[300];
    assert_int_equal(tu_temp_dir("sst-policies", dir, sizeof dir), 0);
    snprintf(path, sizeof path, "%s/cp.db", dir);
    sst_error err;
    atomic_store(&CALLS, 0);
    atomic_store(&HANDLED, 0);
    atomic_store(&HANDLER_FAILS, true);
    sst_compiled_graph *cg = handled_graph(true, false);
    sst_value *in = tu_json("{}");
    for (int round = 0; round < 2; round++) {
        sst_checkpointer *cp = sst_sqlite_saver_open(path, NULL, &err);
        assert_non_null(cp);
        sst_graph_thread *th = sst_graph_thread_open(cg, cp, "t1", &err);
        assert_non_null(th);
        sst_graph_result *r = sst_graph_invoke(cg, th, round == 0 ? in : NULL, NULL, &err);
        assert_non_null(r);
        if (round == 0) {
            assert_int_equal(sst_graph_result_status(r), SST_RUN_FAILED);
            assert_non_null(strstr(sst_graph_result_error(r)->msg, "handler crash"));
            assert_string_equal(sst_graph_result_error_node(r), "__error_handler__bad");
            /* The state shows the node's own error on its task; the pending writes hold
             * it and the handler's, each under its task's id (LangGraph's). */
            sst_value *st = sst_graph_get_state(th, NULL, &err);
            assert_non_null(st);
            const sst_value *task = sst_array_get(sst_object_get(st, "tasks"), 0);
            assert_string_equal(sst_string_cstr(sst_object_get(task, "error")), "boom 7");
            const sst_value *pw = sst_object_get(st, "pending_writes");
            assert_int_equal(sst_array_len(pw), 2);
            assert_true(sst_value_equal(sst_array_get(sst_array_get(pw, 0), 0),
                                        sst_object_get(task, "id")));
            assert_json_eq(sst_array_get(sst_array_get(pw, 0), 2), "\"boom 7\"");
            assert_false(sst_value_equal(sst_array_get(sst_array_get(pw, 1), 0),
                                         sst_object_get(task, "id")));
            assert_string_equal(sst_string_cstr(sst_array_get(sst_array_get(pw, 1), 1)),
                                "__error__");
            assert_non_null(
                strstr(sst_string_cstr(sst_array_get(sst_array_get(pw, 1), 2)), "handler crash"));
            sst_value_unref(st);
            atomic_store(&HANDLER_FAILS, false);
        } else {
            assert_int_equal(sst_graph_result_status(r), SST_RUN_COMPLETED);
            assert_string_equal(sst_string_cstr(sst_object_get(sst_graph_result_state(r), "log")),
                                "after");
        }
        sst_graph_result_free(r);
        sst_graph_thread_free(th);
        sst_checkpointer_free(cp);
    }
    assert_int_equal(atomic_load(&CALLS), 1);   /* the node ran once */
    assert_int_equal(atomic_load(&HANDLED), 2); /* its handler twice */
    sst_value_unref(in);
    sst_compiled_graph_free(cg);
    tu_rm_rf(dir);
}

/* Spins until cancelled (counting rounds), as long-running C code should. */
static sst_code spin(sst_node_ctx *ctx, void *ud) {
    (void)ud;
    atomic_fetch_add(&CALLS, 1);
    while (!sst_node_cancelled(ctx)) {
        sleep_ms(1);
    }
    return sst_node_update(ctx, "log", sst_string_new("late", NULL), NULL); /* dropped */
}

/* Works 400 ms in 40 ms steps, with a heartbeat each step. */
static sst_code beating(sst_node_ctx *ctx, void *ud) {
    (void)ud;
    for (int i = 0; i < 20; i++) {
        sleep_ms(50);
        sst_node_heartbeat(ctx);
    }
    return sst_node_update(ctx, "log", sst_string_new("done", NULL), NULL);
}

static sst_graph_result *run_one(sst_node_fn fn, const sst_node_opts *o,
                                 const sst_timeout_policy *dflt) {
    sst_error err;
    sst_graph *g = sst_graph_new(&err);
    assert_sst_ok(sst_graph_add_field(g, "log", sst_reducer_replace(), sst_null(), &err), &err);
    assert_sst_ok(sst_graph_add_node(g, "n", fn, NULL, o, &err), &err);
    assert_sst_ok(sst_graph_add_edge(g, SST_START, "n", &err), &err);
    if (dflt != NULL) {
        assert_sst_ok(sst_graph_set_default_timeout(g, dflt, &err), &err);
    }
    sst_compiled_graph *cg = sst_graph_compile(g, NULL, &err);
    assert_non_null(cg);
    sst_value *in = tu_json("{}");
    sst_graph_result *r = sst_graph_invoke(cg, NULL, in, NULL, &err);
    assert_non_null(r);
    sst_value_unref(in);
    sst_compiled_graph_free(cg);
    sst_graph_free(g);
    return r;
}

static void test_timeouts(void **state) {
    (void)state;
    /* A run timeout stops a spinning node; the error says which limit and when. */
    sst_node_opts o;
    sst_node_opts_init(&o);
    o.timeout.run_timeout_s = 0.05;
    atomic_store(&CALLS, 0);
    sst_graph_result *r = run_one(spin, &o, NULL);
    assert_int_equal(sst_graph_result_status(r), SST_RUN_FAILED);
    assert_int_equal(sst_graph_result_error(r)->code, SST_ETIMEOUT);
    assert_non_null(strstr(sst_graph_result_error(r)->msg, "run timeout of 0.050s"));
    const sst_value *d = sst_graph_result_error_detail(r);
    assert_string_equal(sst_string_cstr(sst_object_get(d, "kind")), "run");
    assert_true(sst_number_value(sst_object_get(d, "elapsed")) >= 0.05);
    assert_true(sst_is_null(sst_object_get(d, "idle_timeout")));
    sst_graph_result_free(r);
    /* Retried like any error under a policy. */
    o.retry.max_attempts = 2;
    o.retry.initial_interval_s = 0.001;
    o.retry.jitter = false;
    atomic_store(&CALLS, 0);
    r = run_one(spin, &o, NULL);
    assert_int_equal(sst_graph_result_error(r)->code, SST_ETIMEOUT);
    assert_int_equal(atomic_load(&CALLS), 2);
    sst_graph_result_free(r);
    /* Heartbeats keep an idle timeout from firing; without them it fires. */
    sst_node_opts_init(&o);
    o.timeout.idle_timeout_s = 0.5; /* half the whole run, ten steps */
    r = run_one(beating, &o, NULL);
    assert_int_equal(sst_graph_result_status(r), SST_RUN_COMPLETED);
    sst_graph_result_free(r);
    /* The graph's default applies to a node without its own. */
    sst_timeout_policy idle = {0, 0.03, false};
    atomic_store(&CALLS, 0);
    r = run_one(spin, NULL, &idle);
    assert_int_equal(sst_graph_result_error(r)->code, SST_ETIMEOUT);
    assert_string_equal(sst_string_cstr(sst_object_get(sst_graph_result_error_detail(r), "kind")),
                        "idle");
    sst_graph_result_free(r);
}

/* As spin, but gives up after 5 s (a hundred times the limit below): returns "late". */
static sst_code spin_bounded(sst_node_ctx *ctx, void *ud) {
    (void)ud;
    for (int i = 0; i < 5000 && !sst_node_cancelled(ctx); i++) {
        sleep_ms(1);
    }
    return sst_node_update(ctx, "log", sst_string_new("late", NULL), NULL);
}

/* A node of the first superstep that is not the graph's first node has its own timeout
 * (the first superstep's tasks are made from a resume point: src/pregel/resume.c). */
static void test_timeout_of_a_later_node(void **state) {
    (void)state;
    sst_error err;
    sst_graph *g = sst_graph_new(&err);
    assert_sst_ok(sst_graph_add_field(g, "log", sst_reducer_replace(), sst_null(), &err), &err);
    assert_sst_ok(sst_graph_add_node(g, "first", ok_node, "first", NULL, &err), &err);
    sst_node_opts o;
    sst_node_opts_init(&o);
    o.timeout.run_timeout_s = 0.05;
    assert_sst_ok(sst_graph_add_node(g, "n", spin_bounded, NULL, &o, &err), &err);
    assert_sst_ok(sst_graph_add_edge(g, SST_START, "n", &err), &err);
    sst_compiled_graph *cg = sst_graph_compile(g, NULL, &err);
    assert_non_null(cg);
    sst_value *in = tu_json("{}");
    sst_graph_result *r = sst_graph_invoke(cg, NULL, in, NULL, &err);
    assert_non_null(r);
    assert_int_equal(sst_graph_result_status(r), SST_RUN_FAILED);
    assert_int_equal(sst_graph_result_error(r)->code, SST_ETIMEOUT);
    sst_graph_result_free(r);
    sst_value_unref(in);
    sst_compiled_graph_free(cg);
    sst_graph_free(g);
}

/* START sends to "n" with a short timeout; n's own timeout is long. */
static sst_value *send_short(const sst_value *st, void *ud, sst_error *err) {
    (void)st;
    (void)ud;
    sst_timeout_policy t = {0.03, 0, false};
    sst_value *s = sst_send_new_timeout("n", sst_int_new(1, err), &t, err);
    return s != NULL ? sst_array_push_take(sst_array_empty(), s, err) : NULL;
}

static void test_send_timeout(void **state) {
    (void)state;
    sst_error err;
    sst_graph *g = sst_graph_new(&err);
    assert_sst_ok(sst_graph_add_field(g, "log", sst_reducer_replace(), sst_null(), &err), &err);
    sst_node_opts o;
    sst_node_opts_init(&o);
    o.timeout.run_timeout_s = 30;
    assert_sst_ok(sst_graph_add_node(g, "n", spin, NULL, &o, &err), &err);
    assert_sst_ok(sst_graph_add_conditional_edges(g, SST_START, send_short, NULL, NULL, &err),
                  &err);
    sst_compiled_graph *cg = sst_graph_compile(g, NULL, &err);
    assert_non_null(cg);
    sst_value *in = tu_json("{}");
    sst_graph_result *r = sst_graph_invoke(cg, NULL, in, NULL, &err);
    assert_int_equal(sst_graph_result_error(r)->code, SST_ETIMEOUT);
    assert_true(sst_number_value(sst_object_get(sst_graph_result_error_detail(r), "timeout")) ==
                0.03);
    sst_graph_result_free(r);
    /* The policy's value form round-trips; a value of another shape reads as none. */
    sst_timeout_policy p = {1.5, 0.25, true}, back;
    sst_value *pv = sst_timeout_policy_value(&p, &err);
    assert_true(sst_timeout_policy_from_value(pv, &back));
    assert_true(back.run_timeout_s == 1.5 && back.idle_timeout_s == 0.25 && back.heartbeat_only);
    sst_value_unref(pv);
    pv = tu_json("{\"run\": \"soon\", \"idle\": 1}");
    assert_false(sst_timeout_policy_from_value(pv, &back));
    assert_true(back.run_timeout_s == 0 && back.idle_timeout_s == 0);
    sst_value_unref(pv);
    assert_false(sst_timeout_policy_from_value(NULL, &back));
    sst_timeout_policy huge = {2e9, 0, false};
    assert_false(sst_timeout_policy_valid(&huge));
    /* A negative timeout is refused, naming the node. */
    sst_timeout_policy bad = {-1, 0, false};
    assert_null(sst_send_new_timeout("n", NULL, &bad, &err));
    assert_int_equal(err.code, SST_EINVAL);
    o.timeout.run_timeout_s = -2;
    assert_int_equal(sst_graph_add_node(g, "m", spin, NULL, &o, &err), SST_EINVAL);
    assert_non_null(strstr(err.msg, "'m'"));
    sst_value_unref(in);
    sst_compiled_graph_free(cg);
    sst_graph_free(g);
}

static void test_step_timeout(void **state) {
    (void)state;
    sst_error err;
    sst_graph *g = sst_graph_new(&err);
    assert_sst_ok(sst_graph_add_field(g, "log", sst_reducer_replace(), sst_null(), &err), &err);
    sst_node_opts o;
    sst_node_opts_init(&o);
    o.error_handler = handler_no_goto; /* a step timeout is not handled */
    assert_sst_ok(sst_graph_add_node(g, "n", spin, NULL, &o, &err), &err);
    assert_sst_ok(sst_graph_add_edge(g, SST_START, "n", &err), &err);
    sst_compile_opts co;
    sst_compile_opts_init(&co);
    co.step_timeout_s = 0.05;
    sst_compiled_graph *cg = sst_graph_compile(g, &co, &err);
    assert_non_null(cg);
    sst_value *in = tu_json("{}");
    sst_graph_result *r = sst_graph_invoke(cg, NULL, in, NULL, &err);
    assert_int_equal(sst_graph_result_status(r), SST_RUN_FAILED);
    assert_int_equal(sst_graph_result_error(r)->code, SST_ETIMEOUT);
    assert_non_null(strstr(sst_graph_result_error(r)->msg, "superstep 0 timed out"));
    sst_graph_result_free(r);
    sst_value_unref(in);
    sst_compiled_graph_free(cg);
    co.step_timeout_s = -1;
    assert_null(sst_graph_compile(g, &co, &err));
    assert_int_equal(err.code, SST_EINVAL);
    sst_graph_free(g);
}

/* Counts its runs; writes "log" = "ran:<x>" and routes to "next" by goto. */
static sst_code counted(sst_node_ctx *ctx, void *ud) {
    (void)ud;
    atomic_fetch_add(&CALLS, 1);
    const sst_value *x = sst_object_get(sst_node_state(ctx), "x");
    char buf[64];
    snprintf(buf, sizeof buf, "ran:%lld", (long long)sst_int_value(x));
    sst_code rc = sst_node_update(ctx, "log", sst_string_new(buf, NULL), NULL);
    return rc == SST_OK ? sst_node_goto(ctx, "next", NULL) : rc;
}

static sst_code next_node(sst_node_ctx *ctx, void *ud) {
    (void)ud;
    atomic_fetch_add(&HANDLED, 1);
    return sst_node_update(ctx, "done", sst_bool(true), NULL);
}

/* A key that ignores the input: every task of the node shares one entry. */
static sst_value *same_key(const sst_value *input, void *ud, sst_error *err) {
    (void)input;
    (void)ud;
    return sst_string_new("k", err);
}

static sst_compiled_graph *cached_graph(sst_cache *cache, sst_node_cache_key_fn key, double ttl) {
    sst_error err;
    sst_graph *g = sst_graph_new(&err);
    assert_sst_ok(sst_graph_add_field(g, "x", sst_reducer_replace(), sst_int_new(0, NULL), &err),
                  &err);
    assert_sst_ok(sst_graph_add_field(g, "log", sst_reducer_replace(), sst_null(), &err), &err);
    assert_sst_ok(sst_graph_add_field(g, "done", sst_reducer_replace(), sst_bool(false), &err),
                  &err);
    sst_node_opts o;
    sst_node_opts_init(&o);
    o.cache_policy.enabled = true;
    o.cache_policy.key = key;
    o.cache_policy.ttl_s = ttl;
    const char *ends[] = {"next"};
    o.ends = ends;
    o.n_ends = 1;
    assert_sst_ok(sst_graph_add_node(g, "work", counted, NULL, &o, &err), &err);
    assert_sst_ok(sst_graph_add_node(g, "next", next_node, NULL, NULL, &err), &err);
    assert_sst_ok(sst_graph_add_edge(g, SST_START, "work", &err), &err);
    sst_compile_opts co;
    sst_compile_opts_init(&co);
    co.cache = cache;
    sst_compiled_graph *cg = sst_graph_compile(g, &co, &err);
    assert_non_null(cg);
    sst_graph_free(g);
    return cg;
}

/* Invokes @p cg with x = @p x; returns "log" (in @p buf). */
static const char *invoke_x(const sst_compiled_graph *cg, int x, char *buf, size_t n) {
    sst_error err;
    sst_value *in = sst_object_set_take(sst_object_empty(), "x", sst_int_new(x, NULL), NULL);
    sst_graph_result *r = sst_graph_invoke(cg, NULL, in, NULL, &err);
    assert_non_null(r);
    assert_int_equal(sst_graph_result_status(r), SST_RUN_COMPLETED);
    assert_true(sst_bool_value(sst_object_get(sst_graph_result_state(r), "done")));
    snprintf(buf, n, "%s", sst_string_cstr(sst_object_get(sst_graph_result_state(r), "log")));
    sst_graph_result_free(r);
    sst_value_unref(in);
    return buf;
}

static void test_cache(void **state) {
    (void)state;
    char dir[256], path[300], buf[64];
    assert_int_equal(tu_temp_dir("sst-cache", dir, sizeof dir), 0);
    snprintf(path, sizeof path, "%s/cache.db", dir);
    sst_error err;
    for (int backend = 0; backend < 2; backend++) {
        sst_cache *cache =
            backend == 0 ? sst_memory_cache_new(&err) : sst_sqlite_cache_open(path, &err);
        assert_non_null(cache);
        sst_compiled_graph *cg = cached_graph(cache, NULL, 0);
        sst_cache_free(cache); /* the compiled graph holds its own reference */
        atomic_store(&CALLS, 0);
        atomic_store(&HANDLED, 0);
        /* A miss runs and stores; the same input hits: the node does not run, but its
         * update and its goto are replayed. Another input misses. */
        assert_string_equal(invoke_x(cg, 1, buf, sizeof buf), "ran:1");
        assert_string_equal(invoke_x(cg, 1, buf, sizeof buf), "ran:1");
        assert_int_equal(atomic_load(&CALLS), 1);
        assert_int_equal(atomic_load(&HANDLED), 2); /* "next" ran both times */
        assert_string_equal(invoke_x(cg, 2, buf, sizeof buf), "ran:2");
        assert_int_equal(atomic_load(&CALLS), 2);
        /* clear_cache: the node runs again; an unknown node is refused. */
        const char *nodes[] = {"work"};
        assert_sst_ok(sst_compiled_graph_clear_cache(cg, nodes, 1, &err), &err);
        assert_string_equal(invoke_x(cg, 1, buf, sizeof buf), "ran:1");
        assert_int_equal(atomic_load(&CALLS), 3);
        const char *bad[] = {"nope"};
        assert_int_equal(sst_compiled_graph_clear_cache(cg, bad, 1, &err), SST_EINVAL);
        assert_non_null(strstr(err.msg, "nope"));
        sst_compiled_graph_free(cg);
    }
    /* The SQLite cache outlives its graph: a new graph on the same file hits at once. */
    sst_cache *cache = sst_sqlite_cache_open(path, &err);
    sst_compiled_graph *cg = cached_graph(cache, NULL, 0);
    atomic_store(&CALLS, 0);
    assert_string_equal(invoke_x(cg, 1, buf, sizeof buf), "ran:1"); /* stored after the clear */
    assert_int_equal(atomic_load(&CALLS), 0);
    sst_compiled_graph_free(cg);
    sst_cache_free(cache);
    /* A key function decides what counts as the same input; a ttl expires entries. */
    cache = sst_memory_cache_new(&err);
    cg = cached_graph(cache, same_key, 0.05);
    atomic_store(&CALLS, 0);
    assert_string_equal(invoke_x(cg, 1, buf, sizeof buf), "ran:1");
    assert_string_equal(invoke_x(cg, 7, buf, sizeof buf), "ran:1"); /* same key: replayed */
    assert_int_equal(atomic_load(&CALLS), 1);
    sleep_ms(80);
    assert_string_equal(invoke_x(cg, 7, buf, sizeof buf), "ran:7"); /* expired */
    assert_int_equal(atomic_load(&CALLS), 2);
    sst_compiled_graph_free(cg);
    sst_cache_free(cache);
    tu_rm_rf(dir);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_error_handler_routes),
        cmocka_unit_test(test_error_handler_sees_failure),
        cmocka_unit_test(test_error_handler_resumes),
        cmocka_unit_test(test_error_handler_subgraph_failure),
        cmocka_unit_test(test_timeouts),
        cmocka_unit_test(test_timeout_of_a_later_node),
        cmocka_unit_test(test_send_timeout),
        cmocka_unit_test(test_step_timeout),
        cmocka_unit_test(test_cache),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
