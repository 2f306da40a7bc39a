/* SPDX-License-Identifier: MIT */
/*
 * LangGraph-parity features of the graph layer (issue 14), through the C API:
 * several updates from one node (sst_node_add_update / sst_node_add_write),
 * Overwrite (sst_overwrite_new) in graphs and across checkpoints, closed
 * schemas (sst_schema_set_closed) and the add_messages remove error.
 */
#include <stdio.h>
#include <string.h>

#include "superstep/superstep.h"
#include "test_util.h"

/* ---- fixture ---- */

static sst_graph *G;
static sst_compiled_graph *CG;
static sst_graph_result *R;
static sst_checkpointer *CP;
static sst_graph_thread *TH;

static int setup(void **state) {
    (void)state;
    G = sst_graph_new(NULL);
    return G == NULL;
}

static int teardown(void **state) {
    (void)state;
    sst_graph_result_free(R);
    sst_graph_thread_free(TH);
    sst_checkpointer_free(CP);
    sst_compiled_graph_free(CG);
    sst_graph_free(G);
    R = NULL;
    TH = NULL;
    CP = NULL;
    CG = NULL;
    G = NULL;
    return 0;
}

static void field(const char *name, const sst_reducer *r, const char *def) {
    sst_error err;
    assert_sst_ok(sst_graph_add_field(G, name, r, def != NULL ? tu_json(def) : NULL, &err), &err);
}

static void node(const char *name, sst_node_fn fn, const char *ud) {
    sst_error err;
    assert_sst_ok(sst_graph_add_node(G, name, fn, (void *)ud, NULL, &err), &err);
}

static void edge(const char *from, const char *to) {
    sst_error err;
    assert_sst_ok(sst_graph_add_edge(G, from, to, &err), &err);
}

static void compile(void) {
    sst_error err;
    CG = sst_graph_compile(G, NULL, &err);
    if (CG == NULL) {
        print_error("compile failed: %s\n", err.msg);
        fail();
    }
}

/* Invokes with @p input (JSON) on TH (NULL: one run); keeps the result in R. */
static sst_graph_result *invoke_json(const char *input, const sst_invoke_opts *o) {
    sst_error err;
    sst_value *in = input != NULL ? tu_json(input) : NULL;
    sst_graph_result_free(R);
    R = sst_graph_invoke(CG, TH, in, o, &err);
    sst_value_unref(in);
    if (R == NULL) {
        print_error("invoke failed: %s\n", err.msg);
        fail();
    }
    return R;
}

/* Each node's user data is JSON: a list of updates it adds in order. */
static sst_code add_updates(sst_node_ctx *ctx, void *ud) {
    sst_value *list = tu_json(ud);
    sst_error err;
    sst_code rc = SST_OK;
    for (size_t i = 0; rc == SST_OK && i < sst_array_len(list); i++) {
        rc = sst_node_add_update(ctx, sst_value_ref(sst_array_get(list, i)), &err);
    }
    sst_value_unref(list);
    return rc == SST_OK ? SST_OK : sst_node_fail(ctx, rc, "%s", err.msg);
}

/* ---- several updates from one node ---- */

static sst_value *concat(void *ud, const char *f, sst_value *cur, const sst_value *upd,
                         sst_error *err) {
    (void)ud;
    (void)f;
    char buf[256];
    snprintf(buf, sizeof buf, "%s%s", cur != NULL ? sst_string_cstr(cur) : "",
             sst_string_cstr(upd));
    sst_value_unref(cur);
    return sst_string_new(buf, err);
}

typedef struct streamed {
    sst_value *updates; /* [{node: update}] */
} streamed;

static sst_code collect(sst_stream_mode mode, const char *node, const sst_value *ev, void *ud) {
    (void)mode;
    (void)node;
    streamed *s = ud;
    s->updates = sst_array_push_take(s->updates, sst_value_ref(ev), NULL);
    return SST_OK;
}

/* foo (concat) and n (sum); a adds three updates, b one; streams updates into @p s. */
static void two_node_graph(streamed *s) {
    sst_error err;
    sst_reducer *cat = sst_reducer_new("concat", concat, NULL, &err);
    field("foo", cat, "\"\"");
    sst_reducer_free(cat);
    field("n", sst_reducer_sum(), "0");
    node("a", add_updates, "[{\"foo\": \"a1\", \"n\": 1}, {\"foo\": \"a2\"}, {\"n\": 2}]");
    node("b", add_updates, "[{\"foo\": \"b\"}, {\"n\": 10}]");
    edge(SST_START, "a");
    edge("a", "b");
    compile();
    sst_invoke_opts o;
    sst_invoke_opts_init(&o);
    o.stream_modes = SST_STREAM_UPDATES;
    o.stream = collect;
    o.stream_user_data = s;
    invoke_json("{\"foo\": \"\"}", &o);
}

/* LangGraph's list return: each update is a write; a field written twice goes through the
 * reducer twice. */
static void test_add_update_applies_each_write(void **state) {
    (void)state;
    streamed s = {sst_array_empty()};
    two_node_graph(&s);
    assert_int_equal(sst_graph_result_status(R), SST_RUN_COMPLETED);
    assert_json_eq(sst_graph_result_state(R), "{\"foo\": \"a1a2b\", \"n\": 13}");
    sst_value_unref(s.updates);
}

/* The updates stream shows one {field: value} per write when a field was written twice
 * (LangGraph's [{"foo": "a1"}, {"foo": "a2"}]), grouped by field here. */
static void test_updates_stream_lists_repeated_writes(void **state) {
    (void)state;
    streamed s = {sst_array_empty()};
    two_node_graph(&s);
    assert_json_eq(s.updates, "[{\"a\": [{\"foo\": \"a1\"}, {\"foo\": \"a2\"}, {\"n\": 1}, "
                              "{\"n\": 2}]}, {\"b\": {\"foo\": \"b\", \"n\": 10}}]");
    sst_value_unref(s.updates);
}

static sst_code write_twice(sst_node_ctx *ctx, void *ud) {
    (void)ud;
    sst_error err;
    if (sst_node_add_write(ctx, "log", tu_json("[\"x\"]"), &err) != SST_OK ||
        sst_node_add_write(ctx, "log", tu_json("[\"y\"]"), &err) != SST_OK ||
        sst_node_add_write(ctx, "log", tu_json("[\"z\"]"), &err) != SST_OK) {
        return sst_node_fail(ctx, err.code, "%s", err.msg);
    }
    /* sst_node_update still replaces the node's own write. */
    if (sst_node_update(ctx, "last", sst_int_new(1, NULL), &err) != SST_OK ||
        sst_node_update(ctx, "last", sst_int_new(2, NULL), &err) != SST_OK) {
        return sst_node_fail(ctx, err.code, "%s", err.msg);
    }
    return SST_OK;
}

static void test_add_write_same_field(void **state) {
    (void)state;
    field("log", sst_reducer_append(), "[]");
    field("last", sst_reducer_unique(), NULL);
    node("w", write_twice, NULL);
    edge(SST_START, "w");
    compile();
    invoke_json("{}", NULL);
    assert_json_eq(sst_graph_result_state(R), "{\"log\": [\"x\", \"y\", \"z\"], \"last\": 2}");
}

static sst_code bad_writes(sst_node_ctx *ctx, void *ud) {
    (void)ud;
    sst_error err;
    assert_int_equal(sst_node_add_write(ctx, "__x", sst_null(), &err), SST_EINVAL);
    assert_non_null(strstr(err.msg, "'__x' is reserved"));
    assert_int_equal(sst_node_add_write(ctx, NULL, sst_null(), &err), SST_EINVAL);
    assert_int_equal(sst_node_add_update(ctx, tu_json("[1]"), &err), SST_ETYPE);
    assert_non_null(strstr(err.msg, "node 'bad'"));
    return SST_OK;
}

static void test_add_write_errors(void **state) {
    (void)state;
    node("bad", bad_writes, NULL);
    edge(SST_START, "bad");
    compile();
    invoke_json("{}", NULL);
    assert_int_equal(sst_graph_result_status(R), SST_RUN_COMPLETED);
}

/* ---- Overwrite ---- */

static sst_code overwrite_node(sst_node_ctx *ctx, void *ud) {
    sst_error err;
    sst_value *ow = sst_overwrite_new(tu_json(ud), &err);
    if (ow == NULL || sst_node_update(ctx, "msgs", ow, &err) != SST_OK) {
        return sst_node_fail(ctx, err.code, "%s", err.msg);
    }
    return SST_OK;
}

/* a, then b (Overwrite) and c in parallel, then d: b wins its superstep. */
static void overwrite_graph(const char *c_update) {
    field("msgs", sst_reducer_append(), "[]");
    node("a", add_updates, "[{\"msgs\": [\"a\"]}]");
    node("b", overwrite_node, "[\"b\"]");
    node("c", c_update != NULL ? overwrite_node : add_updates,
         c_update != NULL ? c_update : "[{\"msgs\": [\"c\"]}]");
    node("d", add_updates, "[{\"msgs\": [\"d\"]}]");
    edge(SST_START, "a");
    edge("a", "b");
    edge("a", "c");
    edge("b", "d");
    edge("c", "d");
    compile();
}

static void test_overwrite_parallel_and_replay(void **state) {
    (void)state;
    sst_error err;
    overwrite_graph(NULL);
    CP = sst_memory_saver_new(&err);
    assert_non_null(CP);
    TH = sst_graph_thread_open(CG, CP, "ow", &err);
    assert_non_null(TH);
    invoke_json("{\"msgs\": [\"START\"]}", NULL);
    assert_json_eq(sst_graph_result_state(R), "{\"msgs\": [\"b\", \"d\"]}");
    /* The stored deltas replay to the same states (a fresh thread reads them back). */
    sst_graph_thread *t2 = sst_graph_thread_open(CG, CP, "ow", &err);
    assert_non_null(t2);
    sst_value *h = sst_graph_get_state_history(t2, NULL, 0, &err);
    assert_non_null(h);
    assert_json_eq(sst_object_get(sst_array_get(h, 0), "values"), "{\"msgs\": [\"b\", \"d\"]}");
    assert_json_eq(sst_object_get(sst_array_get(h, 1), "values"), "{\"msgs\": [\"b\"]}");
    assert_json_eq(sst_object_get(sst_array_get(h, 2), "values"), "{\"msgs\": [\"START\", \"a\"]}");
    sst_value_unref(h);
    sst_graph_thread_free(t2);
}

static void test_overwrite_twice_is_conflict(void **state) {
    (void)state;
    overwrite_graph("[\"c\"]");
    invoke_json("{\"msgs\": [\"START\"]}", NULL);
    assert_int_equal(sst_graph_result_status(R), SST_RUN_FAILED);
    const sst_error *e = sst_graph_result_error(R);
    assert_int_equal(e->code, SST_ECONFLICT);
    assert_non_null(strstr(e->msg, "Can receive only one Overwrite value per super-step."));
    assert_non_null(strstr(e->msg, "'msgs'"));
}

static void test_overwrite_marker_values(void **state) {
    (void)state;
    sst_error err;
    sst_value *ow = sst_overwrite_new(tu_json("[1]"), &err);
    assert_json_eq(ow, "{\"__overwrite__\": [1]}");
    assert_json_eq(sst_overwrite_value(ow), "[1]");
    sst_value *plain = tu_json("{\"__overwrite__\": 1, \"x\": 2}");
    assert_null(sst_overwrite_value(plain));
    assert_null(sst_overwrite_new(NULL, &err));
    assert_int_equal(err.code, SST_EINVAL);
    /* In the input, too: the default [] is replaced, not appended to. */
    const sst_value *ups[] = {ow};
    sst_value *v = sst_reducer_apply(sst_reducer_append(), "f", tu_json("[0]"), ups, 1, &err);
    assert_json_eq(v, "[1]");
    sst_value_unref(v);
    sst_value *d = sst_delta_add_write(sst_object_empty(), "f", tu_json("1"), &err);
    d = sst_delta_add_write(d, "f", tu_json("2"), &err);
    d = sst_delta_add_write(d, "f", sst_value_ref(ow), &err);
    d = sst_delta_add_write(d, "g", tu_json("3"), &err);
    assert_json_eq(d, "{\"f\": {\"$writes\": [1, 2, {\"__overwrite__\": [1]}]}, \"g\": 3}");
    assert_null(sst_delta_add_write(tu_json("[]"), "f", tu_json("1"), &err));
    assert_int_equal(err.code, SST_ETYPE);
    sst_value_unref(d);
    sst_value_unref(plain);
    sst_value_unref(ow);
}

/* ---- closed schemas ---- */

static void test_closed_schema_drops_undeclared(void **state) {
    (void)state;
    sst_error err;
    field("a", sst_reducer_sum(), "0");
    assert_false(sst_schema_closed(sst_graph_schema(G)));
    assert_sst_ok(sst_schema_set_closed(sst_graph_schema(G), true, &err), &err);
    assert_true(sst_schema_closed(sst_graph_schema(G)));
    assert_int_equal(sst_schema_set_closed(NULL, true, &err), SST_EINVAL);
    node("n", add_updates, "[{\"a\": 1, \"extra\": 2}]");
    edge(SST_START, "n");
    compile();
    streamed s = {sst_array_empty()};
    sst_invoke_opts o;
    sst_invoke_opts_init(&o);
    o.stream_modes = SST_STREAM_UPDATES;
    o.stream = collect;
    o.stream_user_data = &s;
    invoke_json("{\"a\": 1, \"market\": \"x\"}", &o);
    assert_json_eq(sst_graph_result_state(R), "{\"a\": 2}");
    /* The updates stream shows the node's writes as it returned them (LangGraph's
     * test_state_graph_packets): the undeclared key too, though the state drops it. */
    assert_json_eq(s.updates, "[{\"n\": {\"a\": 1, \"extra\": 2}}]");
    sst_value_unref(s.updates);
}

static void test_open_schema_keeps_undeclared(void **state) {
    (void)state;
    field("a", sst_reducer_sum(), "0");
    node("n", add_updates, "[{\"a\": 1, \"extra\": 2}]");
    edge(SST_START, "n");
    compile();
    invoke_json("{\"a\": 1, \"market\": \"x\"}", NULL);
    assert_json_eq(sst_graph_result_state(R), "{\"a\": 2, \"market\": \"x\", \"extra\": 2}");
}

/* ---- add_messages ---- */

static void test_remove_missing_message_is_einval(void **state) {
    (void)state;
    field("messages", sst_reducer_add_messages(), "[]");
    node("n", add_updates, "[{\"messages\": [{\"type\": \"remove\", \"id\": \"2\"}]}]");
    edge(SST_START, "n");
    compile();
    invoke_json("{\"messages\": [{\"role\": \"user\", \"content\": \"hi\", \"id\": \"1\"}]}", NULL);
    assert_int_equal(sst_graph_result_status(R), SST_RUN_FAILED);
    const sst_error *e = sst_graph_result_error(R);
    assert_int_equal(e->code, SST_EINVAL);
    assert_non_null(
        strstr(e->msg, "Attempting to delete a message with an ID that doesn't exist (\"2\")"));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_add_update_applies_each_write, setup, teardown),
        cmocka_unit_test_setup_teardown(test_updates_stream_lists_repeated_writes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_add_write_same_field, setup, teardown),
        cmocka_unit_test_setup_teardown(test_add_write_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_overwrite_parallel_and_replay, setup, teardown),
        cmocka_unit_test_setup_teardown(test_overwrite_twice_is_conflict, setup, teardown),
        cmocka_unit_test_setup_teardown(test_overwrite_marker_values, setup, teardown),
        cmocka_unit_test_setup_teardown(test_closed_schema_drops_undeclared, setup, teardown),
        cmocka_unit_test_setup_teardown(test_open_schema_keeps_undeclared, setup, teardown),
        cmocka_unit_test_setup_teardown(test_remove_missing_message_is_einval, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
