/* SPDX-License-Identifier: MIT */
/*
 * LangGraph-parity features of the graph layer (issue 14), through the C API:
 * conditional entry points, joins into END, sequences, goto-only nodes (a
 * warning), no retry by default, retry_on_error, interrupt lists with "*",
 * deferred nodes and vertices, input / output field declarations, root
 * states, node input fields, the default retry policy and lists of policies.
 */
#include <stdio.h>
#include <string.h>

#include "superstep/superstep.h"
#include "test_util.h"

/* ---- fixture ---- */

static sst_graph *G;
static sst_compiled_graph *CG;
static sst_graph_result *R;

static int setup(void **state) {
    (void)state;
    G = sst_graph_new(NULL);
    sst_error err;
    return G == NULL ||
           sst_graph_add_field(G, "log", sst_reducer_append(), sst_array_empty(), &err) != SST_OK;
}

static int teardown(void **state) {
    (void)state;
    sst_graph_result_free(R);
    sst_compiled_graph_free(CG);
    sst_graph_free(G);
    R = NULL;
    CG = NULL;
    G = NULL;
    return 0;
}

/* Appends its name to "log"; counts calls in an int (user data may be NULL). */
static sst_code logger(sst_node_ctx *ctx, void *ud) {
    if (ud != NULL) {
        (*(int *)ud)++;
    }
    sst_value *name = sst_string_new(sst_node_name(ctx), NULL);
    return sst_node_update(ctx, "log", sst_array_push_take(sst_array_empty(), name, NULL), NULL);
}

/* Fails with SST_ETASK on the first *ud attempts (counted down), then logs. */
static sst_code flaky(sst_node_ctx *ctx, void *ud) {
    int *left = ud;
    if ((*left)-- > 0) {
        return sst_node_fail(ctx, SST_ETASK, "flaky on attempt %u", sst_node_attempt(ctx));
    }
    return logger(ctx, NULL);
}

static void node_opts(const char *name, sst_node_fn fn, void *ud, const sst_node_opts *o) {
    sst_error err;
    assert_sst_ok(sst_graph_add_node(G, name, fn, ud, o, &err), &err);
}

static void node(const char *name) {
    node_opts(name, logger, NULL, NULL);
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

static void no_sleep(uint64_t ms, void *ud) {
    (void)ms;
    (void)ud;
}

/* Invokes CG on @p th (NULL: none) with {} as input, no real retry sleeps. */
static sst_graph_result *invoke_on(sst_graph_thread *th, const char *input) {
    sst_error err;
    sst_invoke_opts o;
    sst_invoke_opts_init(&o);
    o.sleep = no_sleep;
    sst_value *in = input != NULL ? tu_json(input) : NULL;
    sst_graph_result_free(R);
    R = sst_graph_invoke(CG, th, in, &o, &err);
    sst_value_unref(in);
    if (R == NULL) {
        print_error("invoke failed: %s\n", err.msg);
        fail();
    }
    return R;
}

static void expect_log(const char *log_json) {
    if (sst_graph_result_status(R) != SST_RUN_COMPLETED) {
        print_error("status %s: %s\n", sst_run_status_name(sst_graph_result_status(R)),
                    sst_graph_result_error(R)->msg);
        fail();
    }
    assert_json_eq(sst_object_get(sst_graph_result_state(R), "log"), log_json);
}

/* ---- entry points, joins into END, sequences ---- */

static sst_value *to_b(const sst_value *state, void *ud, sst_error *err) {
    (void)state;
    (void)ud;
    return sst_string_new("go_b", err);
}

/* LangGraph's set_conditional_entry_point is conditional edges from START. */
static void test_conditional_entry_point(void **state) {
    (void)state;
    node("a");
    node("b");
    sst_error err;
    sst_value *map = tu_json("{\"go_a\":\"a\",\"go_b\":\"b\"}");
    assert_sst_ok(sst_graph_add_conditional_edges(G, SST_START, to_b, NULL, map, &err), &err);
    sst_value_unref(map);
    compile_with(NULL);
    invoke_on(NULL, "{}");
    expect_log("[\"b\"]");
}

static void test_join_into_end(void **state) {
    (void)state;
    node("a");
    node("b");
    edge(SST_START, "a");
    edge(SST_START, "b");
    const char *from[] = {"a", "b"};
    sst_error err;
    assert_sst_ok(sst_graph_add_join(G, from, 2, SST_END, &err), &err);
    compile_with(NULL);
    assert_int_equal(sst_compiled_graph_warning_count(CG), 0); /* END is reached */
    invoke_on(NULL, "{}");
    expect_log("[\"a\",\"b\"]");
    char *m = sst_compiled_graph_mermaid(CG, &err);
    assert_non_null(m);
    assert_non_null(strstr(m, "a --> __end__\n"));
    assert_non_null(strstr(m, "b --> __end__\n"));
    sst_free(m);
}

static void test_add_sequence(void **state) {
    (void)state;
    int calls = 0;
    const sst_sequence_node seq[] = {{"one", logger, &calls, NULL},
                                     {"two", logger, &calls, NULL},
                                     {"three", logger, NULL, NULL}};
    sst_error err;
    assert_sst_ok(sst_graph_add_sequence(G, seq, 3, &err), &err);
    edge(SST_START, "one");
    edge("three", SST_END);
    compile_with(NULL);
    invoke_on(NULL, "{}");
    expect_log("[\"one\",\"two\",\"three\"]");
    assert_int_equal(calls, 2);
    /* Errors leave the graph unchanged: "four" is not added when "one" is a duplicate. */
    const sst_sequence_node bad[] = {{"four", logger, NULL, NULL}, {"one", logger, NULL, NULL}};
    assert_int_equal(sst_graph_add_sequence(G, bad, 2, &err), SST_EINVAL);
    assert_non_null(strstr(err.msg, "add sequence: node 2"));
    assert_non_null(strstr(err.msg, "duplicate node 'one'"));
    assert_sst_ok(sst_graph_add_node(G, "four", logger, NULL, NULL, &err), &err);
    assert_int_equal(sst_graph_add_sequence(G, seq, 0, &err), SST_EINVAL);
    assert_string_equal(err.msg, "graph: add sequence: a sequence needs at least one node");
}

/* ---- goto-only nodes ---- */

static sst_code goto_hidden(sst_node_ctx *ctx, void *ud) {
    (void)ud;
    sst_code rc = logger(ctx, NULL);
    return rc != SST_OK ? rc : sst_node_goto(ctx, "hidden", NULL);
}

/* A node reached only by goto compiles without ends, with a warning naming it. */
static void test_goto_only_node_is_a_warning(void **state) {
    (void)state;
    node_opts("a", goto_hidden, NULL, NULL);
    node("hidden");
    node("other");
    edge(SST_START, "a");
    edge("hidden", SST_END);
    edge("other", SST_END);
    compile_with(NULL);
    assert_int_equal(sst_compiled_graph_warning_count(CG), 1); /* END is reached from them */
    assert_string_equal(sst_compiled_graph_warning(CG, 0),
                        "nodes 'hidden', 'other' are unreachable from START by edges (only a "
                        "Command goto can run them; list goto targets in the source node's ends "
                        "to declare it)");
    invoke_on(NULL, "{}");
    expect_log("[\"a\",\"hidden\"]");
    /* With ends, "hidden" is reachable and drawn; "other" still warns. */
    sst_compiled_graph_free(CG);
    CG = NULL;
    sst_graph_free(G);
    G = sst_graph_new(NULL);
    sst_error err;
    assert_sst_ok(sst_graph_add_field(G, "log", sst_reducer_append(), sst_array_empty(), &err),
                  &err);
    const char *ends[] = {"hidden"};
    sst_node_opts o;
    sst_node_opts_init(&o);
    o.ends = ends;
    o.n_ends = 1;
    node_opts("a", goto_hidden, NULL, &o);
    node("hidden");
    edge(SST_START, "a");
    compile_with(NULL);
    assert_int_equal(sst_compiled_graph_warning_count(CG), 1);
    assert_non_null(strstr(sst_compiled_graph_warning(CG, 0), "no path from START reaches END"));
    char *m = sst_compiled_graph_mermaid(CG, &err);
    assert_non_null(strstr(m, "a -. \"goto\" .-> hidden"));
    sst_free(m);
}

/* ---- retries ---- */

static void test_no_retry_by_default(void **state) {
    (void)state;
    sst_node_opts o;
    sst_node_opts_init(&o);
    assert_int_equal(o.retry.max_attempts, 1);
    sst_vertex_opts vo;
    sst_vertex_opts_init(&vo);
    assert_int_equal(vo.retry.max_attempts, 1);
    sst_retry_policy def = SST_RETRY_POLICY_DEFAULT, init;
    sst_retry_policy_init(&init);
    assert_int_equal(def.max_attempts, 3);
    assert_true(def.initial_interval_s == init.initial_interval_s &&
                def.backoff_factor == init.backoff_factor &&
                def.max_interval_s == init.max_interval_s && def.jitter && init.jitter &&
                def.retry_on == NULL && def.retry_on_error == NULL && init.retry_on_error == NULL);
    int left = 5;
    node_opts("n", flaky, &left, NULL);
    edge(SST_START, "n");
    compile_with(NULL);
    invoke_on(NULL, "{}");
    assert_int_equal(sst_graph_result_status(R), SST_RUN_FAILED);
    assert_string_equal(sst_graph_result_error(R)->msg,
                        "vertex 'n' failed after 1 attempt: flaky on attempt 1");
    assert_int_equal(left, 4);
}

static void test_default_policy_retries(void **state) {
    (void)state;
    int left = 2;
    sst_node_opts o;
    sst_node_opts_init(&o);
    sst_retry_policy_init(&o.retry);
    node_opts("n", flaky, &left, &o);
    edge(SST_START, "n");
    compile_with(NULL);
    invoke_on(NULL, "{}");
    expect_log("[\"n\"]");
    assert_int_equal(left, -1); /* three attempts */
}

typedef struct seen {
    int calls;
    sst_code code;
    char msg[SST_ERROR_MSG_MAX];
    char vertex[SST_ERROR_MSG_MAX];
} seen;

static bool retry_on_flaky_1(const sst_error *e, const char *vertex, void *ud) {
    seen *s = ud;
    s->calls++;
    s->code = e->code;
    snprintf(s->msg, sizeof s->msg, "%s", e->msg);
    snprintf(s->vertex, sizeof s->vertex, "%s", vertex);
    return strstr(e->msg, "attempt 1") != NULL; /* retries the first failure only */
}

static void test_retry_on_error(void **state) {
    (void)state;
    int left = 5;
    seen s = {0};
    sst_node_opts o;
    sst_node_opts_init(&o);
    o.retry.max_attempts = 5;
    o.retry.retry_on_error = retry_on_flaky_1;
    o.retry.retry_on_user_data = &s;
    node_opts("n", flaky, &left, &o);
    edge(SST_START, "n");
    compile_with(NULL);
    invoke_on(NULL, "{}");
    assert_int_equal(sst_graph_result_status(R), SST_RUN_FAILED);
    assert_int_equal(left, 3); /* two attempts */
    assert_int_equal(s.calls, 2);
    assert_int_equal(s.code, SST_ETASK);
    assert_string_equal(s.msg, "flaky on attempt 2");
    assert_string_equal(s.vertex, "n");
}

/* ---- interrupts with "*" ---- */

static void test_interrupt_all_nodes(void **state) {
    (void)state;
    node("a");
    node("b");
    edge(SST_START, "a");
    edge("a", "b");
    const char *all[] = {SST_ALL_NODES};
    sst_compile_opts co;
    sst_compile_opts_init(&co);
    co.interrupt_before = all;
    co.n_before = 1;
    compile_with(&co);
    sst_error err;
    sst_graph_thread *th = sst_graph_thread_new(CG, &err);
    assert_non_null(th);
    invoke_on(th, "{}");
    assert_int_equal(sst_graph_result_status(R), SST_RUN_INTERRUPTED);
    assert_json_eq(sst_graph_thread_state(th), "{\"log\":[]}");
    invoke_on(th, NULL);
    assert_int_equal(sst_graph_result_status(R), SST_RUN_INTERRUPTED);
    assert_json_eq(sst_graph_thread_state(th), "{\"log\":[\"a\"]}");
    invoke_on(th, NULL);
    expect_log("[\"a\",\"b\"]");
    sst_graph_thread_free(th);
}

/* ---- defer ---- */

/* LangGraph's test_in_one_fan_out_state_graph_defer_node, both edge kinds. */
static void build_fan_out(bool waiting) {
    node("rewrite");
    node("r1");
    node("r2");
    node("analyze");
    sst_node_opts o;
    sst_node_opts_init(&o);
    o.defer = true;
    node_opts("qa", logger, NULL, &o);
    edge(SST_START, "rewrite");
    edge("rewrite", "r1");
    edge("rewrite", "r2");
    edge("r1", "analyze");
    if (waiting) {
        const char *from[] = {"r1", "r2"};
        sst_error err;
        assert_sst_ok(sst_graph_add_join(G, from, 2, "qa", &err), &err);
    } else {
        edge("r1", "qa");
        edge("r2", "qa");
    }
    edge("qa", SST_END);
}

static void test_defer_waits_for_other_branches(void **state) {
    (void)state;
    for (int waiting = 0; waiting < 2; waiting++) {
        if (waiting) {
            teardown(NULL);
            setup(NULL);
        }
        build_fan_out(waiting);
        compile_with(NULL);
        invoke_on(NULL, "{}");
        expect_log("[\"rewrite\",\"r1\",\"r2\",\"analyze\",\"qa\"]");
        assert_int_equal(sst_graph_result_steps(R), 4);
    }
}

/* A deferred node still waiting when the run stops keeps waiting across the resume. */
static void test_defer_survives_an_interrupt(void **state) {
    (void)state;
    build_fan_out(false);
    const char *after[] = {"r1"};
    sst_compile_opts co;
    sst_compile_opts_init(&co);
    co.interrupt_after = after;
    co.n_after = 1;
    compile_with(&co);
    sst_error err;
    sst_checkpointer *cp = sst_memory_saver_new(&err);
    assert_non_null(cp);
    sst_graph_thread *th = sst_graph_thread_open(CG, cp, "t", &err);
    assert_non_null(th);
    invoke_on(th, "{}");
    assert_int_equal(sst_graph_result_status(R), SST_RUN_INTERRUPTED);
    sst_value *st = sst_graph_get_state(th, NULL, &err);
    assert_non_null(st);
    assert_json_eq(sst_object_get(st, "next"), "[\"analyze\"]");
    sst_value_unref(st);
    sst_graph_thread_free(th);
    /* A fresh handle reads the waiting node back from the checkpoint. */
    th = sst_graph_thread_open(CG, cp, "t", &err);
    invoke_on(th, NULL);
    expect_log("[\"rewrite\",\"r1\",\"r2\",\"analyze\",\"qa\"]");
    sst_graph_thread_free(th);
    sst_checkpointer_free(cp);
}

/* The engine alone: a deferred vertex activated in superstep 0 runs after the others. */
static sst_code step_logger(sst_task *t, void *ud) {
    (void)ud;
    sst_task_vote_halt(t);
    sst_value *name = sst_string_new(sst_task_vertex(t), NULL);
    if (strcmp(sst_task_vertex(t), "a") == 0) {
        sst_code rc = sst_task_activate(t, "b", NULL);
        if (rc != SST_OK) {
            return rc;
        }
    }
    return sst_task_write(t, "log", sst_array_push_take(sst_array_empty(), name, NULL), NULL);
}

static void test_deferred_vertex(void **state) {
    (void)state;
    sst_error err;
    sst_schema *s = sst_schema_new(&err);
    assert_sst_ok(sst_schema_add_field(s, "log", sst_reducer_append(), sst_array_empty(), &err),
                  &err);
    sst_pregel_builder *b = sst_pregel_builder_new(s, &err);
    sst_vertex_opts o;
    sst_vertex_opts_init(&o);
    o.defer = true;
    assert_sst_ok(sst_pregel_builder_add_vertex(b, "a", step_logger, NULL, NULL, &err), &err);
    assert_sst_ok(sst_pregel_builder_add_vertex(b, "b", step_logger, NULL, NULL, &err), &err);
    assert_sst_ok(sst_pregel_builder_add_vertex(b, "0late", step_logger, NULL, &o, &err), &err);
    sst_pregel *p = sst_pregel_builder_build(b, &err);
    sst_pregel_builder_free(b);
    sst_engine *e = sst_engine_new(NULL, &err);
    sst_run_opts ro;
    sst_run_opts_init(&ro);
    const char *start[] = {"0late", "a"};
    ro.start = start;
    ro.n_start = 2;
    sst_run_result *r = sst_engine_run(e, p, &ro, &err);
    assert_non_null(r);
    assert_json_eq(sst_run_result_state(r), "{\"log\":[\"a\",\"b\",\"0late\"]}");
    assert_int_equal(sst_run_result_supersteps(r), 3);
    sst_run_result_free(r);
    sst_engine_free(e);
    sst_pregel_free(p);
    sst_schema_free(s);
}

/* ---- input / output fields ---- */

static void test_input_output_fields(void **state) {
    (void)state;
    node("a");
    edge(SST_START, "a");
    const char *in[] = {"question", "log"}, *out[] = {"answer"}, *bad[] = {"__x"};
    sst_error err;
    assert_sst_ok(sst_graph_set_input_fields(G, in, 2, &err), &err);
    assert_sst_ok(sst_graph_set_output_fields(G, out, 1, &err), &err);
    assert_int_equal(sst_graph_set_output_fields(G, bad, 1, &err), SST_EINVAL);
    assert_string_equal(err.msg,
                        "graph: output field '__x': names starting with \"__\" are reserved");
    compile_with(NULL);
    assert_json_eq(sst_compiled_graph_input_fields(CG), "[\"question\",\"log\"]");
    assert_json_eq(sst_compiled_graph_output_fields(CG), "[\"answer\"]");
    sst_compiled_graph_free(CG);
    assert_sst_ok(sst_graph_set_input_fields(G, NULL, 0, &err), &err);
    compile_with(NULL);
    assert_null(sst_compiled_graph_input_fields(CG));
}

/* ---- root state, node input fields, default retry, lists of policies ---- */

/* Appends its name to the root list; checks that it sees the root as a list. */
static sst_code root_logger(sst_node_ctx *ctx, void *ud) {
    (void)ud;
    if (!sst_is_array(sst_object_get(sst_node_state(ctx), SST_ROOT))) {
        return sst_node_fail(ctx, SST_ETYPE, "the root is not a list");
    }
    sst_value *name = sst_string_new(sst_node_name(ctx), NULL);
    return sst_node_update(ctx, SST_ROOT, sst_array_push_take(sst_array_empty(), name, NULL), NULL);
}

static sst_value *send_b_twice(const sst_value *state, void *ud, sst_error *err) {
    (void)ud;
    sst_value *list = sst_array_empty();
    for (int i = 0; i < 2 && list != NULL; i++) {
        sst_value *s = sst_send_new("b", sst_value_ref(state), err);
        list = s != NULL ? sst_array_push_take(list, s, err) : (sst_value_unref(list), NULL);
    }
    return list;
}

/* LangGraph's StateGraph(Annotated[list, operator.add]): the state is one list. */
static void test_root_state(void **state) {
    (void)state;
    sst_error err;
    assert_int_equal(sst_graph_set_root(G, sst_reducer_append(), NULL, &err), SST_EINVAL);
    assert_string_equal(err.msg, "graph: set root: the graph has declared fields (a root state "
                                 "is the whole state)");
    sst_graph_free(G);
    G = sst_graph_new(NULL);
    assert_sst_ok(sst_graph_set_root(G, sst_reducer_append(), sst_array_empty(), &err), &err);
    assert_int_equal(sst_graph_add_field(G, "x", NULL, NULL, &err), SST_EINVAL);
    assert_string_equal(err.msg,
                        "graph: field 'x': the graph has a root state (sst_graph_set_root)");
    node_opts("a", root_logger, NULL, NULL);
    node_opts("b", root_logger, NULL, NULL);
    edge(SST_START, "a");
    assert_sst_ok(sst_graph_add_conditional_edges(G, "a", send_b_twice, NULL, NULL, &err), &err);
    compile_with(NULL);
    assert_true(sst_compiled_graph_has_root(CG));
    invoke_on(NULL, "{\"__root__\":[\"0\"]}");
    assert_int_equal(sst_graph_result_status(R), SST_RUN_COMPLETED);
    assert_json_eq(sst_graph_result_state(R), "{\"__root__\":[\"0\",\"a\",\"b\",\"b\"]}");
}

/* Records the state it sees in *ud (a value slot). */
static sst_code peek(sst_node_ctx *ctx, void *ud) {
    sst_value **seen_state = ud;
    sst_value_unref(*seen_state);
    *seen_state = sst_value_ref(sst_node_state(ctx));
    return logger(ctx, NULL);
}

/* LangGraph's add_node(input_schema=...): the node sees only those fields. */
static void test_node_input_fields(void **state) {
    (void)state;
    sst_value *seen_a = NULL, *seen_b = NULL;
    const char *fields[] = {"x", "missing"};
    sst_node_opts o;
    sst_node_opts_init(&o);
    o.input_fields = fields;
    o.n_input_fields = 2;
    node_opts("a", peek, &seen_a, &o);
    node_opts("b", peek, &seen_b, NULL);
    edge(SST_START, "a");
    edge("a", "b");
    compile_with(NULL);
    invoke_on(NULL, "{\"x\":1,\"y\":2}");
    expect_log("[\"a\",\"b\"]");
    assert_json_eq(seen_a, "{\"x\":1}");
    assert_json_eq(seen_b, "{\"log\":[\"a\"],\"x\":1,\"y\":2}");
    sst_value_unref(seen_a);
    sst_value_unref(seen_b);
    sst_error err;
    o.input_fields = NULL;
    assert_int_equal(sst_graph_add_node(G, "c", logger, NULL, &o, &err), SST_EINVAL);
    assert_string_equal(err.msg, "node 'c': input fields: NULL list");
}

/* LangGraph's set_node_defaults(retry_policy=...): nodes without their own policy. */
static void test_default_retry(void **state) {
    (void)state;
    int before = 2, after = 2, own = 5;
    node_opts("before", flaky, &before, NULL);
    sst_retry_policy p;
    sst_retry_policy_init(&p);
    p.jitter = false;
    sst_error err;
    assert_sst_ok(sst_graph_set_default_retry(G, &p, 1, &err), &err);
    node_opts("after", flaky, &after, NULL);
    sst_node_opts o;
    sst_node_opts_init(&o);
    o.retry.max_attempts = 2;
    o.retry.jitter = false;
    node_opts("own", flaky, &own, &o);
    edge(SST_START, "before");
    edge(SST_START, "after");
    edge(SST_START, "own");
    compile_with(NULL);
    invoke_on(NULL, "{}");
    assert_int_equal(sst_graph_result_status(R), SST_RUN_FAILED);
    assert_int_equal(before, -1); /* three attempts each */
    assert_int_equal(after, -1);
    assert_int_equal(own, 3); /* its own two */
    p.max_attempts = 0;
    assert_int_equal(sst_graph_set_default_retry(G, &p, 1, &err), SST_EINVAL);
    assert_string_equal(err.msg,
                        "graph: set default retry: retry policy 1: max_attempts must be >= 1");
}

/* Fails with the codes of the list *ud (SST_OK ends it), one per attempt, then logs. */
static sst_code fail_codes(sst_node_ctx *ctx, void *ud) {
    const sst_code **next = ud;
    if (**next != SST_OK) {
        sst_code c = *(*next)++;
        return sst_node_fail(ctx, c, "failed with %s", sst_code_name(c));
    }
    return logger(ctx, NULL);
}

static bool on_code(const sst_error *e, const char *vertex, void *ud) {
    (void)vertex;
    return e->code == *(const sst_code *)ud;
}

/* LangGraph's retry_policy=(p1, p2): the first policy whose retry_on matches applies. */
static void test_retry_policy_list(void **state) {
    (void)state;
    static const sst_code einval = SST_EINVAL, enotfound = SST_ENOTFOUND;
    sst_retry_policy list[2];
    for (int i = 0; i < 2; i++) {
        sst_retry_policy_init(&list[i]);
        list[i].jitter = false;
        list[i].max_attempts = (unsigned)(2 + i);
        list[i].retry_on_error = on_code;
        list[i].retry_on_user_data = (void *)(i == 0 ? &einval : &enotfound);
    }
    const sst_code run1[] = {SST_ENOTFOUND, SST_ENOTFOUND, SST_OK};
    const sst_code run2[] = {SST_ETASK, SST_OK};
    const sst_code *next1 = run1, *next2 = run2;
    sst_node_opts o;
    sst_node_opts_init(&o);
    o.retry_policies = list;
    o.n_retry_policies = 2;
    node_opts("a", fail_codes, &next1, &o);
    node_opts("b", fail_codes, &next2, &o);
    edge(SST_START, "a");
    edge("a", "b");
    compile_with(NULL);
    invoke_on(NULL, "{}");
    assert_ptr_equal(next1, run1 + 2); /* retried under the second policy */
    assert_int_equal(sst_graph_result_status(R), SST_RUN_FAILED);
    assert_ptr_equal(next2, run2 + 1); /* no policy matches SST_ETASK */
    assert_string_equal(sst_graph_result_error_node(R), "b");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_conditional_entry_point, setup, teardown),
        cmocka_unit_test_setup_teardown(test_join_into_end, setup, teardown),
        cmocka_unit_test_setup_teardown(test_add_sequence, setup, teardown),
        cmocka_unit_test_setup_teardown(test_goto_only_node_is_a_warning, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_retry_by_default, setup, teardown),
        cmocka_unit_test_setup_teardown(test_default_policy_retries, setup, teardown),
        cmocka_unit_test_setup_teardown(test_retry_on_error, setup, teardown),
        cmocka_unit_test_setup_teardown(test_interrupt_all_nodes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_defer_waits_for_other_branches, setup, teardown),
        cmocka_unit_test_setup_teardown(test_defer_survives_an_interrupt, setup, teardown),
        cmocka_unit_test(test_deferred_vertex),
        cmocka_unit_test_setup_teardown(test_input_output_fields, setup, teardown),
        cmocka_unit_test_setup_teardown(test_root_state, setup, teardown),
        cmocka_unit_test_setup_teardown(test_node_input_fields, setup, teardown),
        cmocka_unit_test_setup_teardown(test_default_retry, setup, teardown),
        cmocka_unit_test_setup_teardown(test_retry_policy_list, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
