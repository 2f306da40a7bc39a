/* SPDX-License-Identifier: MIT */
/*
 * The graph layer through the C API: routing (edges, conditional edges,
 * Command goto, Send, joins), reducers in graphs, the recursion limit,
 * interrupts and resume, streaming, drawing and every compile error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

/* ---- fixture ---- */

static sst_graph *G;
static sst_compiled_graph *CG;
static sst_graph_thread *TH;
static sst_graph_result *R;

static int setup(void **state) {
    (void)state;
    G = sst_graph_new(NULL);
    return G == NULL;
}

static int teardown(void **state) {
    (void)state;
    sst_graph_result_free(R);
    sst_graph_thread_free(TH);
    sst_compiled_graph_free(CG);
    sst_graph_free(G);
    R = NULL;
    TH = NULL;
    CG = NULL;
    G = NULL;
    return 0;
}

static void field(const char *name, const sst_reducer *r, const char *def) {
    sst_error err;
    assert_sst_ok(sst_graph_add_field(G, name, r, def != NULL ? tu_json(def) : NULL, &err), &err);
}

static void node(const char *name, sst_node_fn fn, void *ud) {
    sst_error err;
    assert_sst_ok(sst_graph_add_node(G, name, fn, ud, NULL, &err), &err);
}

static void node_ends(const char *name, sst_node_fn fn, void *ud, const char *const *ends,
                      size_t n) {
    sst_error err;
    sst_node_opts o;
    sst_node_opts_init(&o);
    o.ends = ends;
    o.n_ends = n;
    assert_sst_ok(sst_graph_add_node(G, name, fn, ud, &o, &err), &err);
}

static void edge(const char *from, const char *to) {
    sst_error err;
    assert_sst_ok(sst_graph_add_edge(G, from, to, &err), &err);
}

static void compile_with(const sst_compile_opts *o) {
    sst_error err;
    CG = sst_graph_compile(G, o, &err);
    if (CG == NULL) {
        print_error("compile failed: %s\n", err.msg);
        fail();
    }
}

static void compile(void) {
    compile_with(NULL);
}

/* Invokes with @p input (JSON or NULL) on TH (when set); keeps the result in R. */
static sst_graph_result *invoke_opts(const char *input, const sst_invoke_opts *o) {
    sst_error err;
    sst_value *in = input != NULL ? tu_json(input) : NULL;
    sst_graph_result_free(R);
    R = sst_graph_invoke(CG, TH, in, o, &err);
    sst_value_unref(in);
    if (R == NULL) {
        print_error("invoke failed: %s: %s\n", sst_code_name(err.code), err.msg);
        fail();
    }
    return R;
}

static sst_graph_result *invoke(const char *input) {
    return invoke_opts(input, NULL);
}

static void expect_completed(const char *state_json) {
    if (sst_graph_result_status(R) != SST_RUN_COMPLETED) {
        print_error("status %s: %s\n", sst_run_status_name(sst_graph_result_status(R)),
                    sst_graph_result_error(R)->msg);
        fail();
    }
    assert_json_eq(sst_graph_result_state(R), state_json);
}

/* ---- node functions ---- */

/* Appends its name to "log"; counts calls in an int (user data may be NULL). */
static sst_code logger(sst_node_ctx *ctx, void *ud) {
    if (ud != NULL) {
        (*(int *)ud)++;
    }
    sst_value *name = sst_string_new(sst_node_name(ctx), NULL);
    return sst_node_update(ctx, "log", sst_array_push_take(sst_array_empty(), name, NULL), NULL);
}

/* Returns nothing at all. */
static sst_code silent(sst_node_ctx *ctx, void *ud) {
    (void)ctx;
    if (ud != NULL) {
        (*(int *)ud)++;
    }
    return SST_OK;
}

/* Adds 1 to "n". */
static sst_code inc(sst_node_ctx *ctx, void *ud) {
    (void)ud;
    return sst_node_update(ctx, "n", sst_int_new(1, NULL), NULL);
}

/* Writes the JSON object in ud as its update. */
static sst_code writer(sst_node_ctx *ctx, void *ud) {
    return sst_node_update_all(ctx, tu_json(ud), NULL);
}

/* ---- routers ---- */

/* "big" when n >= 3, else "small". */
static sst_value *size_router(const sst_value *state, void *ud, sst_error *err) {
    (void)ud;
    return sst_string_new(sst_int_value(sst_object_get(state, "n")) >= 3 ? "big" : "small", err);
}

/* "again" until n reaches 5, then END. */
static sst_value *loop_router(const sst_value *state, void *ud, sst_error *err) {
    (void)ud;
    return sst_string_new(sst_int_value(sst_object_get(state, "n")) < 5 ? "inc" : SST_END, err);
}

/* Returns the JSON in ud. */
static sst_value *fixed_router(const sst_value *state, void *ud, sst_error *err) {
    (void)state;
    return sst_json_parse(ud, err);
}

/* ---- tests: routing ---- */

static void test_single_node(void **state) {
    (void)state;
    field("log", sst_reducer_append(), "[]");
    node("a", logger, NULL);
    edge(SST_START, "a");
    edge("a", SST_END);
    compile();
    invoke(NULL);
    expect_completed("{\"log\":[\"a\"]}");
    assert_int_equal(sst_graph_result_steps(R), 1);
    assert_int_equal(sst_compiled_graph_warning_count(CG), 0);
}

static void test_chain(void **state) {
    (void)state;
    field("log", sst_reducer_append(), "[]");
    node("a", logger, NULL);
    node("b", logger, NULL);
    node("c", logger, NULL);
    edge(SST_START, "a");
    edge("a", "b");
    edge("b", "c");
    edge("c", SST_END);
    compile();
    invoke("{\"log\":[\"input\"]}");
    expect_completed("{\"log\":[\"input\",\"a\",\"b\",\"c\"]}");
    assert_int_equal(sst_graph_result_steps(R), 3);
}

static void test_conditional_with_and_without_path_map(void **state) {
    (void)state;
    field("log", sst_reducer_append(), "[]");
    field("n", sst_reducer_replace(), "0");
    node("start", silent, NULL);
    node("big", logger, NULL);
    node("small", logger, NULL);
    edge(SST_START, "start");
    sst_error err;
    assert_sst_ok(sst_graph_add_conditional_edges(G, "start", size_router, NULL, NULL, &err), &err);
    edge("big", SST_END);
    edge("small", SST_END);
    compile();
    invoke("{\"n\":5}");
    expect_completed("{\"log\":[\"big\"],\"n\":5}");
    invoke("{\"n\":1}");
    expect_completed("{\"log\":[\"small\"],\"n\":1}");

    /* With a path map the router's results are keys. */
    sst_compiled_graph_free(CG);
    sst_graph_free(G);
    G = sst_graph_new(NULL);
    field("log", sst_reducer_append(), "[]");
    field("n", sst_reducer_replace(), "0");
    node("start", silent, NULL);
    node("x", logger, NULL);
    node("y", logger, NULL);
    edge(SST_START, "start");
    sst_value *map = tu_json("{\"big\":\"x\",\"small\":\"y\"}");
    assert_sst_ok(sst_graph_add_conditional_edges(G, "start", size_router, NULL, map, &err), &err);
    sst_value_unref(map);
    edge("x", SST_END);
    edge("y", SST_END);
    compile();
    invoke("{\"n\":9}");
    expect_completed("{\"log\":[\"x\"],\"n\":9}");
}

static void test_loop_until_condition(void **state) {
    (void)state;
    field("n", sst_reducer_sum(), "0");
    node("inc", inc, NULL);
    edge(SST_START, "inc");
    sst_error err;
    assert_sst_ok(sst_graph_add_conditional_edges(G, "inc", loop_router, NULL, NULL, &err), &err);
    compile();
    invoke(NULL);
    expect_completed("{\"n\":5}");
    assert_int_equal(sst_graph_result_steps(R), 5);
}

static void test_recursion_limit(void **state) {
    (void)state;
    field("n", sst_reducer_sum(), "0");
    node("a", inc, NULL);
    node("b", inc, NULL);
    edge(SST_START, "a");
    edge("a", "b");
    edge("b", "a");
    compile();
    sst_invoke_opts o;
    sst_invoke_opts_init(&o);
    assert_int_equal(o.recursion_limit, 25);
    o.recursion_limit = 4;
    invoke_opts(NULL, &o);
    assert_int_equal(sst_graph_result_status(R), SST_RUN_FAILED);
    assert_int_equal(sst_graph_result_error(R)->code, SST_ELIMIT);
    assert_non_null(strstr(sst_graph_result_error(R)->msg, "recursion limit of 4 supersteps"));
    /* Four supersteps ran and were committed. */
    assert_json_eq(sst_graph_result_state(R), "{\"n\":4}");
}

static void test_fan_out_sum_vs_replace(void **state) {
    (void)state;
    field("total", sst_reducer_sum(), "0");
    node("a", writer, "{\"total\":1,\"last\":\"a\"}");
    node("b", writer, "{\"total\":1,\"last\":\"b\"}");
    node("c", writer, "{\"total\":1,\"last\":\"c\"}");
    edge(SST_START, "a");
    edge(SST_START, "b");
    edge(SST_START, "c");
    compile();
    invoke(NULL);
    /* sum: 3 (no lost update); replace ("last"): the last task in merge order. */
    expect_completed("{\"total\":3,\"last\":\"c\"}");
    assert_int_equal(sst_graph_result_steps(R), 1);
}

static void test_append_fan_in_runs_target_once(void **state) {
    (void)state;
    field("log", sst_reducer_append(), "[]");
    int d_calls = 0;
    node("a", logger, NULL);
    node("b", logger, NULL);
    node("c", logger, NULL);
    node("d", logger, &d_calls);
    edge(SST_START, "a");
    edge(SST_START, "b");
    edge(SST_START, "c");
    edge("a", "d");
    edge("b", "d");
    edge("c", "d");
    compile();
    invoke(NULL);
    expect_completed("{\"log\":[\"a\",\"b\",\"c\",\"d\"]}");
    assert_int_equal(d_calls, 1);
}

static void test_merge_reducer(void **state) {
    (void)state;
    field("ctx", sst_reducer_merge(), "{\"keep\":true}");
    node("a", writer, "{\"ctx\":{\"x\":1}}");
    node("b", writer, "{\"ctx\":{\"y\":2,\"keep\":false}}");
    edge(SST_START, "a");
    edge(SST_START, "b");
    compile();
    invoke(NULL);
    expect_completed("{\"ctx\":{\"keep\":false,\"x\":1,\"y\":2}}");
}

/* ---- Command ---- */

/* Logs, then goes to every name in ud (comma separated). */
static sst_code goer(sst_node_ctx *ctx, void *ud) {
    sst_code rc = logger(ctx, NULL);
    const char *p = ud;
    while (rc == SST_OK && *p != '\0') {
        size_t n = strcspn(p, ",");
        char name[64];
        snprintf(name, sizeof name, "%.*s", (int)n, p);
        rc = sst_node_goto(ctx, name, NULL);
        p += n + (p[n] == ',');
    }
    return rc;
}

static void test_goto_overrides_static_edge(void **state) {
    (void)state;
    field("log", sst_reducer_append(), "[]");
    const char *ends[] = {"c"};
    node_ends("a", goer, "c", ends, 1);
    node("b", logger, NULL);
    node("c", logger, NULL);
    edge(SST_START, "a");
    edge("a", "b"); /* replaced by the goto */
    edge("c", SST_END);
    edge("b", SST_END);
    compile();
    invoke(NULL);
    expect_completed("{\"log\":[\"a\",\"c\"]}");
}

/* Increments n and goes back to itself until n == 3, then to END. */
static sst_code command_loop(sst_node_ctx *ctx, void *ud) {
    (void)ud;
    int64_t n = sst_int_value(sst_object_get(sst_node_state(ctx), "n")) + 1;
    sst_code rc = sst_node_update(ctx, "n", sst_int_new(1, NULL), NULL);
    if (rc == SST_OK) {
        rc = sst_node_goto(ctx, n < 3 ? "loop" : SST_END, NULL);
    }
    return rc;
}

static void test_command_loop_and_goto_end(void **state) {
    (void)state;
    field("n", sst_reducer_sum(), "0");
    field("log", sst_reducer_append(), "[]");
    const char *ends[] = {"loop", SST_END};
    node_ends("loop", command_loop, NULL, ends, 2);
    node("never", logger, NULL);
    edge(SST_START, "loop");
    edge("loop", "never"); /* goto END ends early: "never" does not run */
    compile();
    invoke(NULL);
    expect_completed("{\"n\":3,\"log\":[]}");
    assert_int_equal(sst_graph_result_steps(R), 3);
}

/* Writes n = 7 (no goto); the conditional edge then sees the updated state. */
static sst_code set_seven(sst_node_ctx *ctx, void *ud) {
    (void)ud;
    return sst_node_update(ctx, "n", sst_int_new(7, NULL), NULL);
}

static void test_command_without_goto_uses_updated_state(void **state) {
    (void)state;
    field("log", sst_reducer_append(), "[]");
    field("n", sst_reducer_replace(), "0");
    node("set", set_seven, NULL);
    node("big", logger, NULL);
    node("small", logger, NULL);
    edge(SST_START, "set");
    sst_error err;
    assert_sst_ok(sst_graph_add_conditional_edges(G, "set", size_router, NULL, NULL, &err), &err);
    compile();
    invoke(NULL);
    expect_completed("{\"log\":[\"big\"],\"n\":7}");
}

static void test_goto_list_runs_in_parallel(void **state) {
    (void)state;
    field("log", sst_reducer_append(), "[]");
    const char *ends[] = {"x", "y"};
    node_ends("a", goer, "y,x", ends, 2);
    node("x", logger, NULL);
    node("y", logger, NULL);
    edge(SST_START, "a");
    compile();
    invoke(NULL);
    /* Both in one superstep, merged in name order. */
    expect_completed("{\"log\":[\"a\",\"x\",\"y\"]}");
    assert_int_equal(sst_graph_result_steps(R), 2);
}

/* ---- Send ---- */

static sst_value *fan_out_1000(const sst_value *state, void *ud, sst_error *err) {
    (void)state, (void)ud;
    sst_value *list = sst_array_empty();
    for (int i = 0; i < 1000 && list != NULL; i++) {
        list = sst_array_push_take(list, sst_send_new("work", sst_int_new(i, NULL), err), err);
    }
    return list;
}

static sst_code square(sst_node_ctx *ctx, void *ud) {
    (void)ud;
    int64_t x = sst_int_value(sst_node_input(ctx));
    return sst_node_update(
        ctx, "out", sst_array_push_take(sst_array_empty(), sst_int_new(x * x, NULL), NULL), NULL);
}

static sst_code total(sst_node_ctx *ctx, void *ud) {
    (void)ud;
    const sst_value *out = sst_object_get(sst_node_state(ctx), "out");
    int64_t sum = 0;
    for (size_t i = 0; i < sst_array_len(out); i++) {
        sum += sst_int_value(sst_array_get(out, i));
    }
    return sst_node_update(ctx, "sum", sst_int_new(sum, NULL), NULL);
}

static void test_send_map_reduce_1000(void **state) {
    (void)state;
    field("out", sst_reducer_append(), "[]");
    node("split", silent, NULL);
    node("work", square, NULL);
    node("reduce", total, NULL);
    edge(SST_START, "split");
    sst_error err;
    assert_sst_ok(sst_graph_add_conditional_edges(G, "split", fan_out_1000, NULL, NULL, &err),
                  &err);
    edge("work", "reduce");
    edge("reduce", SST_END);
    compile();
    sst_engine_opts eo;
    sst_engine_opts_init(&eo);
    eo.workers = 4;
    sst_engine *e = sst_engine_new(&eo, &err);
    sst_invoke_opts o;
    sst_invoke_opts_init(&o);
    o.engine = e;
    invoke_opts(NULL, &o);
    sst_engine_free(e);
    assert_int_equal(sst_graph_result_status(R), SST_RUN_COMPLETED);
    const sst_value *out = sst_object_get(sst_graph_result_state(R), "out");
    assert_int_equal(sst_array_len(out), 1000);
    for (int64_t i = 0; i < 1000; i++) {
        assert_int_equal(sst_int_value(sst_array_get(out, (size_t)i)), i * i); /* Send order */
    }
    assert_int_equal(sst_int_value(sst_object_get(sst_graph_result_state(R), "sum")), 332833500);
    assert_int_equal(sst_graph_result_steps(R), 3); /* split, 1000 x work, reduce (once) */
}

/* ---- joins and triggers ---- */

static void build_uneven(bool join, int *c_calls) {
    field("log", sst_reducer_append(), "[]");
    node("a", logger, NULL);
    node("a2", logger, NULL);
    node("b", logger, NULL);
    node("c", logger, c_calls);
    edge(SST_START, "a");
    edge(SST_START, "b");
    edge("a", "a2"); /* the a-branch is one step longer */
    if (join) {
        const char *from[] = {"a2", "b"};
        sst_error err;
        assert_sst_ok(sst_graph_add_join(G, from, 2, "c", &err), &err);
    } else {
        edge("a2", "c");
        edge("b", "c");
    }
    edge("c", SST_END);
    compile();
}

static void test_join_uneven_runs_once(void **state) {
    (void)state;
    int calls = 0;
    build_uneven(true, &calls);
    invoke(NULL);
    expect_completed("{\"log\":[\"a\",\"b\",\"a2\",\"c\"]}");
    assert_int_equal(calls, 1);
    /* The barrier is consumed: a second run on a thread fires it once again. */
    TH = sst_graph_thread_new(CG, NULL);
    invoke(NULL);
    invoke(NULL);
    assert_int_equal(calls, 3);
    assert_json_eq(sst_graph_thread_state(TH),
                   "{\"log\":[\"a\",\"b\",\"a2\",\"c\",\"a\",\"b\",\"a2\",\"c\"]}");
}

static void test_separate_edges_uneven_run_twice(void **state) {
    (void)state;
    int calls = 0;
    build_uneven(false, &calls);
    invoke(NULL);
    expect_completed("{\"log\":[\"a\",\"b\",\"a2\",\"c\",\"c\"]}");
    assert_int_equal(calls, 2);
}

static void test_triggers_collapse_and_silent_node_fires_edges(void **state) {
    (void)state;
    field("log", sst_reducer_append(), "[]");
    int quiet_calls = 0, z_calls = 0;
    node("quiet", silent, &quiet_calls);
    node("x", logger, NULL);
    node("z", logger, &z_calls);
    edge(SST_START, "quiet");
    edge(SST_START, "x");
    edge("quiet", "z"); /* a node returning nothing still fires its edges */
    edge("x", "z");     /* two triggers in one superstep: z runs once */
    edge("z", SST_END);
    compile();
    invoke(NULL);
    expect_completed("{\"log\":[\"x\",\"z\"]}");
    assert_int_equal(quiet_calls, 1);
    assert_int_equal(z_calls, 1);
}

/* ---- interrupts ---- */

static void test_interrupt_before_then_resume(void **state) {
    (void)state;
    field("log", sst_reducer_append(), "[]");
    int b_calls = 0;
    node("a", logger, NULL);
    node("b", logger, &b_calls);
    edge(SST_START, "a");
    edge("a", "b");
    edge("b", SST_END);
    sst_compile_opts co;
    sst_compile_opts_init(&co);
    const char *before[] = {"b"};
    co.interrupt_before = before;
    co.n_before = 1;
    compile_with(&co);
    TH = sst_graph_thread_new(CG, NULL);
    invoke(NULL);
    assert_int_equal(sst_graph_result_status(R), SST_RUN_INTERRUPTED);
    assert_json_eq(sst_graph_result_state(R), "{\"log\":[\"a\"]}");
    const sst_value *i0 = sst_array_get(sst_graph_result_interrupts(R), 0);
    assert_string_equal(sst_string_cstr(sst_object_get(i0, "node")), "b");
    assert_string_equal(sst_string_cstr(sst_object_get(i0, "when")), "before");
    assert_int_equal(b_calls, 0);
    invoke(NULL); /* resume: no input, no value needed */
    expect_completed("{\"log\":[\"a\",\"b\"]}");
    assert_int_equal(b_calls, 1);
}

static void test_interrupt_after_then_resume(void **state) {
    (void)state;
    field("log", sst_reducer_append(), "[]");
    node("a", logger, NULL);
    node("b", logger, NULL);
    edge(SST_START, "a");
    edge("a", "b");
    sst_compile_opts co;
    sst_compile_opts_init(&co);
    const char *after[] = {"a"};
    co.interrupt_after = after;
    co.n_after = 1;
    compile_with(&co);
    TH = sst_graph_thread_new(CG, NULL);
    invoke(NULL);
    assert_int_equal(sst_graph_result_status(R), SST_RUN_INTERRUPTED);
    assert_json_eq(sst_graph_result_state(R), "{\"log\":[\"a\"]}");
    invoke(NULL);
    expect_completed("{\"log\":[\"a\",\"b\"]}");
}

/* Asks two questions; each execution is counted. */
static sst_code two_questions(sst_node_ctx *ctx, void *ud) {
    (*(int *)ud)++;
    return tu_ask_two_questions(ctx);
}

static void test_dynamic_interrupt_twice(void **state) {
    (void)state;
    int runs = 0;
    node("ask", two_questions, &runs);
    edge(SST_START, "ask");
    compile();
    TH = sst_graph_thread_new(CG, NULL);
    invoke(NULL);
    assert_int_equal(sst_graph_result_status(R), SST_RUN_INTERRUPTED);
    assert_json_eq(sst_object_get(sst_array_get(sst_graph_result_interrupts(R), 0), "value"),
                   "\"age?\"");
    sst_invoke_opts o;
    sst_invoke_opts_init(&o);
    sst_value *v42 = tu_json("42");
    o.resume = v42;
    invoke_opts(NULL, &o);
    assert_int_equal(sst_graph_result_status(R), SST_RUN_INTERRUPTED);
    assert_json_eq(sst_object_get(sst_array_get(sst_graph_result_interrupts(R), 0), "value"),
                   "\"name?\"");
    sst_value *bob = tu_json("\"bob\"");
    o.resume = bob;
    invoke_opts(NULL, &o);
    expect_completed("{\"answer\":\"42/bob\"}");
    assert_int_equal(runs, 3);
    sst_value_unref(v42);
    sst_value_unref(bob);
    /* Resuming when nothing is pending is an error. */
    sst_error err;
    o.resume = sst_null();
    assert_null(sst_graph_invoke(CG, TH, NULL, &o, &err));
    assert_string_equal(err.msg, "resume: there is no interrupted run to resume");
}

/* Asks the question in ud. */
static sst_code asker(sst_node_ctx *ctx, void *ud) {
    const sst_value *v = sst_node_interrupt(ctx, sst_string_new(ud, NULL));
    if (v == NULL) {
        return SST_EINTERRUPT;
    }
    sst_value *entry = sst_array_push_take(sst_array_empty(), sst_value_ref(v), NULL);
    return sst_node_update(ctx, "answers", entry, NULL);
}

static void test_parallel_interrupts_resumed_by_id(void **state) {
    (void)state;
    field("answers", sst_reducer_append(), "[]");
    node("p", asker, "p?");
    node("q", asker, "q?");
    edge(SST_START, "p");
    edge(SST_START, "q");
    compile();
    TH = sst_graph_thread_new(CG, NULL);
    invoke(NULL);
    const sst_value *ints = sst_graph_result_interrupts(R);
    assert_int_equal(sst_array_len(ints), 2);
    const char *id_p = sst_string_cstr(sst_object_get(sst_array_get(ints, 0), "id"));
    const char *id_q = sst_string_cstr(sst_object_get(sst_array_get(ints, 1), "id"));
    assert_string_equal(sst_string_cstr(sst_object_get(sst_array_get(ints, 0), "node")), "p");
    assert_string_not_equal(id_p, id_q);
    /* One value for two pending interrupts is ambiguous. */
    sst_invoke_opts o;
    sst_invoke_opts_init(&o);
    o.resume = sst_bool(true);
    sst_error err;
    assert_null(sst_graph_invoke(CG, TH, NULL, &o, &err));
    assert_int_equal(err.code, SST_EINVAL);
    assert_non_null(strstr(err.msg, "2 interrupts are pending. When there are multiple pending "
                                    "interrupts, you must specify the interrupt id"));
    /* Resume q only: p asks again. Then p. */
    char map_json[200];
    snprintf(map_json, sizeof map_json, "{\"%s\":\"for q\"}", id_q);
    sst_value *map = tu_json(map_json);
    sst_invoke_opts_init(&o);
    o.resume_by_id = map;
    invoke_opts(NULL, &o);
    sst_value_unref(map);
    assert_int_equal(sst_graph_result_status(R), SST_RUN_INTERRUPTED);
    ints = sst_graph_result_interrupts(R);
    assert_int_equal(sst_array_len(ints), 1);
    char id_p2[40];
    snprintf(id_p2, sizeof id_p2, "%s",
             sst_string_cstr(sst_object_get(sst_array_get(ints, 0), "id")));
    snprintf(map_json, sizeof map_json, "{\"%s\":\"for p\"}", id_p2);
    map = tu_json(map_json);
    o.resume_by_id = map;
    invoke_opts(NULL, &o);
    sst_value_unref(map);
    expect_completed("{\"answers\":[\"for p\",\"for q\"]}");
    /* An unknown id is refused. */
    assert_null(sst_graph_invoke(CG, NULL, NULL, &o, &err));
}

/* ---- run-time errors ---- */

static void test_unknown_route_is_an_error(void **state) {
    (void)state;
    field("log", sst_reducer_append(), "[]");
    node("a", logger, NULL);
    node("b", logger, NULL);
    edge(SST_START, "a");
    sst_error err;
    assert_sst_ok(sst_graph_add_conditional_edges(G, "a", fixed_router, "\"nowhere\"", NULL, &err),
                  &err);
    edge("b", SST_END);
    compile();
    invoke(NULL);
    assert_int_equal(sst_graph_result_status(R), SST_RUN_FAILED);
    assert_string_equal(sst_graph_result_error_node(R), "a");
    assert_string_equal(sst_graph_result_error(R)->msg,
                        "vertex 'a' failed after 1 attempt: router of node 'a' returned unknown "
                        "node 'nowhere'");
    assert_json_eq(sst_graph_result_state(R), "{\"log\":[]}");
}

static void test_wrong_route_type_is_an_error(void **state) {
    (void)state;
    node("a", silent, NULL);
    node("b", silent, NULL);
    edge(SST_START, "a");
    sst_error err;
    assert_sst_ok(sst_graph_add_conditional_edges(G, "a", fixed_router, "42", NULL, &err), &err);
    edge("b", SST_END);
    compile();
    invoke(NULL);
    assert_int_equal(sst_graph_result_status(R), SST_RUN_FAILED);
    assert_string_equal(sst_graph_result_error(R)->msg,
                        "vertex 'a' failed after 1 attempt: router of node 'a' returned 42 "
                        "(expected a node name, a list of names, END or Send)");
}

static sst_code bad_goto(sst_node_ctx *ctx, void *ud) {
    (void)ud;
    return sst_node_goto(ctx, "ghost", NULL);
}

static void test_unknown_goto_is_an_error(void **state) {
    (void)state;
    node("a", bad_goto, NULL);
    edge(SST_START, "a");
    compile();
    invoke(NULL);
    assert_int_equal(sst_graph_result_status(R), SST_RUN_FAILED);
    assert_string_equal(sst_graph_result_error(R)->msg,
                        "vertex 'a' failed after 1 attempt: goto of node 'a' returned unknown "
                        "node 'ghost'");
}

/* Records what sst_node_goto says about a target name that is not UTF-8, given no err. */
static sst_code goto_bad_name(sst_node_ctx *ctx, void *ud) {
    *(sst_code *)ud = sst_node_goto(ctx, "bad\xff", NULL);
    return SST_OK;
}

static void test_goto_code_without_err(void **state) {
    (void)state;
    sst_code rc = SST_OK;
    node("a", goto_bad_name, &rc);
    edge(SST_START, "a");
    edge("a", SST_END);
    compile();
    invoke(NULL);
    assert_int_equal(rc, SST_EUTF8); /* the real code, not a guessed SST_ENOMEM */
}

static void test_start_router_error(void **state) {
    (void)state;
    node("a", silent, NULL);
    sst_error err;
    assert_sst_ok(sst_graph_add_conditional_edges(G, SST_START, fixed_router, "\"zz\"", NULL, &err),
                  &err);
    compile();
    invoke(NULL);
    assert_int_equal(sst_graph_result_status(R), SST_RUN_FAILED);
    assert_string_equal(sst_graph_result_error_node(R), SST_START);
    assert_string_equal(sst_graph_result_error(R)->msg,
                        "router of node '__start__' returned unknown node 'zz'");
}

static void test_input_errors(void **state) {
    (void)state;
    field("n", sst_reducer_sum(), "0");
    node("a", inc, NULL);
    edge(SST_START, "a");
    compile();
    sst_error err;
    sst_value *bad = tu_json("{\"n\":\"x\"}");
    assert_null(sst_graph_invoke(CG, NULL, bad, NULL, &err));
    assert_string_equal(err.msg, "input: reducer 'sum' on field 'n': expected number, got string");
    sst_value_unref(bad);
    bad = tu_json("[1]");
    assert_null(sst_graph_invoke(CG, NULL, bad, NULL, &err));
    assert_string_equal(err.msg, "invoke: the input must be an object, got array");
    sst_value_unref(bad);
}

/* A node that invokes its own graph on the same thread: the thread is busy. */
static sst_code reentrant(sst_node_ctx *ctx, void *ud) {
    (void)ctx, (void)ud;
    sst_error err;
    sst_graph_result *r = sst_graph_invoke(CG, TH, NULL, NULL, &err);
    if (r != NULL) {
        sst_graph_result_free(r);
        return sst_node_fail(ctx, SST_EINVAL, "nested invoke was allowed");
    }
    return err.code == SST_EBUSY ? SST_OK : sst_node_fail(ctx, SST_EINVAL, "%s", err.msg);
}

static void test_thread_busy(void **state) {
    (void)state;
    node("a", reentrant, NULL);
    edge(SST_START, "a");
    compile();
    TH = sst_graph_thread_new(CG, NULL);
    invoke(NULL);
    expect_completed("{}");
}

/* ---- streaming ---- */

typedef struct recorder {
    char text[4096];
} recorder;

static sst_code record(sst_stream_mode mode, const char *node, const sst_value *ev, void *ud) {
    recorder *r = ud;
    char *j = sst_json_write(ev, SST_JSON_CANONICAL, NULL, NULL);
    const char *m = mode == SST_STREAM_VALUES    ? "values"
                    : mode == SST_STREAM_UPDATES ? "updates"
                    : mode == SST_STREAM_CUSTOM  ? "custom"
                                                 : "debug";
    size_t n = strlen(r->text);
    snprintf(r->text + n, sizeof r->text - n, "%s %s %s\n", m, node != NULL ? node : "-", j);
    sst_free(j);
    return SST_OK;
}

static sst_code chatty(sst_node_ctx *ctx, void *ud) {
    sst_code rc = sst_node_emit(ctx, tu_json("{\"step\":1}"), NULL);
    if (rc == SST_OK) {
        rc = sst_node_update_all(ctx, tu_json(ud), NULL);
    }
    return rc;
}

static void test_stream_modes_in_order(void **state) {
    (void)state;
    field("n", sst_reducer_sum(), "0");
    node("a", chatty, "{\"n\":1}");
    node("b", silent, NULL);
    edge(SST_START, "a");
    edge(SST_START, "b");
    compile();
    recorder rec = {""};
    sst_invoke_opts o;
    sst_invoke_opts_init(&o);
    o.stream = record;
    o.stream_user_data = &rec;
    o.stream_modes = SST_STREAM_VALUES | SST_STREAM_UPDATES | SST_STREAM_CUSTOM;
    invoke_opts(NULL, &o);
    /* No input: no values chunk before the first superstep (LangGraph's). */
    assert_string_equal(rec.text, "custom a {\"step\":1}\n"
                                  "updates a {\"a\":{\"n\":1}}\n"
                                  "updates b {\"b\":null}\n"
                                  "values - {\"n\":1}\n");
    /* Debug events: LangGraph's {type, timestamp, step, payload}, task then task_result. */
    recorder dbg = {""};
    o.stream_user_data = &dbg;
    o.stream_modes = SST_STREAM_DEBUG;
    invoke_opts(NULL, &o);
    assert_non_null(strstr(dbg.text, "debug a {\"payload\":{\"id\":"));
    assert_non_null(strstr(dbg.text, "\"name\":\"a\",\"triggers\":[\"branch:to:a\"]},\"step\":1,"));
    assert_non_null(strstr(dbg.text, "\"result\":{\"n\":1}},\"step\":1,"));
    assert_non_null(strstr(dbg.text, "\"type\":\"task_result\"}"));
}

static sst_code stop_stream(sst_stream_mode mode, const char *node, const sst_value *ev, void *ud) {
    (void)mode, (void)node, (void)ev, (void)ud;
    return SST_ETASK;
}

static void test_stream_callback_stops_the_run(void **state) {
    (void)state;
    field("n", sst_reducer_sum(), "0");
    node("a", inc, NULL);
    node("b", inc, NULL);
    edge(SST_START, "a");
    edge("a", "b");
    compile();
    sst_invoke_opts o;
    sst_invoke_opts_init(&o);
    o.stream = stop_stream;
    o.stream_modes = SST_STREAM_UPDATES;
    invoke_opts(NULL, &o);
    assert_int_equal(sst_graph_result_status(R), SST_RUN_FAILED);
    assert_string_equal(sst_graph_result_error(R)->msg,
                        "the stream callback stopped the run (SST_ETASK)");
}

/* ---- drawing ---- */

static void test_mermaid_and_dot(void **state) {
    (void)state;
    node("a", silent, NULL);
    node("b", silent, NULL);
    node("c", silent, NULL);
    edge(SST_START, "a");
    edge(SST_START, "b");
    sst_error err;
    sst_value *map = tu_json("{\"yes\":\"c\",\"no\":\"__end__\"}");
    assert_sst_ok(sst_graph_add_conditional_edges(G, "a", size_router, NULL, map, &err), &err);
    sst_value_unref(map);
    const char *from[] = {"a", "b"};
    assert_sst_ok(sst_graph_add_join(G, from, 2, "c", &err), &err);
    edge("c", SST_END);
    compile();
    char *m = sst_compiled_graph_mermaid(CG, &err);
    assert_non_null(m);
    assert_non_null(strstr(m, "graph TD;"));
    assert_non_null(strstr(m, "__start__ --> a\n"));
    assert_non_null(strstr(m, "a -. \"yes\" .-> c\n"));
    assert_non_null(strstr(m, "a -. \"no\" .-> __end__\n"));
    assert_non_null(strstr(m, "a & b --> c\n"));
    sst_free(m);
    char *d = sst_compiled_graph_dot(CG, &err);
    assert_non_null(d);
    assert_non_null(strstr(d, "digraph G {"));
    assert_non_null(strstr(d, "\"a\" -> \"c\" [style=dashed, label=\"yes\"];"));
    assert_non_null(strstr(d, "\"a\" -> \"join:0\" [arrowhead=none];"));
    assert_non_null(strstr(d, "\"join:0\" -> \"c\";"));
    sst_free(d);
}

/* ---- compile errors ---- */

static void expect_compile_error(const char *msg) {
    sst_error err;
    sst_compiled_graph *cg = sst_graph_compile(G, NULL, &err);
    if (cg != NULL || strcmp(err.msg, msg) != 0) {
        print_error("expected: %s\nactual:   %s\n", msg, cg != NULL ? "(compiled)" : err.msg);
        sst_compiled_graph_free(cg);
        fail();
    }
    assert_int_equal(err.code == SST_EINVAL || err.code == SST_ETYPE, 1);
}

/* Replaces G with a new graph holding one node, 'a'. */
static void restart_with_a(void) {
    sst_graph_free(G);
    G = sst_graph_new(NULL);
    node("a", silent, NULL);
}

static void test_compile_errors(void **state) {
    (void)state;
    sst_error err;
    expect_compile_error("compile: the graph has no nodes");
    node("a", silent, NULL);
    /* add_node errors */
    assert_int_equal(sst_graph_add_node(G, "a", silent, NULL, NULL, &err), SST_EINVAL);
    assert_string_equal(err.msg, "graph: duplicate node 'a'");
    assert_int_equal(sst_graph_add_node(G, SST_START, silent, NULL, NULL, &err), SST_EINVAL);
    assert_string_equal(err.msg, "graph: node name '__start__' is reserved");
    assert_int_equal(sst_graph_add_node(G, SST_END, silent, NULL, NULL, &err), SST_EINVAL);
    assert_string_equal(err.msg, "graph: node name '__end__' is reserved");
    assert_int_equal(sst_graph_add_field(G, "__x", sst_reducer_sum(), NULL, &err), SST_EINVAL);
    expect_compile_error("compile: the graph has no entry point (add an edge or conditional "
                         "edges from START)");
    edge(SST_START, "a");
    edge("a", "zzz");
    expect_compile_error("edge 'a' -> 'zzz': unknown node 'zzz'");
    restart_with_a();
    edge("ghost", "a");
    expect_compile_error("edge 'ghost' -> 'a': unknown node 'ghost'");
    restart_with_a();
    edge(SST_START, "a");
    edge("a", SST_START);
    expect_compile_error("edge 'a' -> '__start__': START cannot be the target of an edge");
    restart_with_a();
    edge(SST_START, "a");
    sst_value *map = tu_json("{\"x\":\"nope\"}");
    assert_sst_ok(sst_graph_add_conditional_edges(G, "a", size_router, NULL, map, &err), &err);
    sst_value_unref(map);
    expect_compile_error("conditional edges from 'a': path map: unknown node 'nope'");
    restart_with_a();
    node("island", silent, NULL);
    node("island2", silent, NULL);
    edge(SST_START, "a");
    edge("island", "island2");
    /* Unreachable nodes compile with a warning (test_graph_build.c checks it). */
    sst_compiled_graph *island = sst_graph_compile(G, NULL, &err);
    assert_non_null(island);
    sst_compiled_graph_free(island);
    restart_with_a();
    edge(SST_START, "a");
    const char *from[] = {"a", "ghost"};
    assert_sst_ok(sst_graph_add_join(G, from, 2, "a", &err), &err);
    expect_compile_error("join into 'a': unknown node 'ghost'");
    restart_with_a();
    edge(SST_START, "a");
    sst_compile_opts co;
    sst_compile_opts_init(&co);
    const char *before[] = {"nobody"};
    co.interrupt_before = before;
    co.n_before = 1;
    assert_null(sst_graph_compile(G, &co, &err));
    assert_string_equal(err.msg, "compile: interrupt_before names unknown node 'nobody'");
    /* No path to END: compiles, with a warning. */
    restart_with_a();
    node("b", silent, NULL);
    edge(SST_START, "a");
    edge("a", "b");
    edge("b", "a");
    compile();
    assert_int_equal(sst_compiled_graph_warning_count(CG), 1);
    assert_string_equal(sst_compiled_graph_warning(CG, 0),
                        "no path from START reaches END: runs stop only when no node is active");
}

int main(void) {
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_single_node),
        T(test_chain),
        T(test_conditional_with_and_without_path_map),
        T(test_loop_until_condition),
        T(test_recursion_limit),
        T(test_fan_out_sum_vs_replace),
        T(test_append_fan_in_runs_target_once),
        T(test_merge_reducer),
        T(test_goto_overrides_static_edge),
        T(test_command_loop_and_goto_end),
        T(test_command_without_goto_uses_updated_state),
        T(test_goto_list_runs_in_parallel),
        T(test_send_map_reduce_1000),
        T(test_join_uneven_runs_once),
        T(test_separate_edges_uneven_run_twice),
        T(test_triggers_collapse_and_silent_node_fires_edges),
        T(test_interrupt_before_then_resume),
        T(test_interrupt_after_then_resume),
        T(test_dynamic_interrupt_twice),
        T(test_parallel_interrupts_resumed_by_id),
        T(test_unknown_route_is_an_error),
        T(test_wrong_route_type_is_an_error),
        T(test_unknown_goto_is_an_error),
        T(test_goto_code_without_err),
        T(test_start_router_error),
        T(test_input_errors),
        T(test_thread_busy),
        T(test_stream_modes_in_order),
        T(test_stream_callback_stops_the_run),
        T(test_mermaid_and_dot),
        T(test_compile_errors),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
