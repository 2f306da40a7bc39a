/* SPDX-License-Identifier: MIT */
/*
 * The state API as LangGraph gives it (issue 14), through the C API:
 * snapshots (config, parent_config, created_at, tasks with ids and results,
 * the input checkpoint's __start__ task), update_state's special nodes and
 * bulk updates, Command{update, goto} as input, replay forks, and the
 * runtime context nodes read.
 */
#include <stdio.h>
#include <string.h>

#include "superstep/superstep.h"
#include "test_util.h"

static sst_graph *G;
static sst_compiled_graph *CG;
static sst_checkpointer *CP;
static sst_graph_thread *TH;

/* A node appending its name (user data) to "log". */
static sst_code append_name(sst_node_ctx *ctx, void *ud) {
    sst_value *item = sst_array_push_take(sst_array_empty(), sst_string_new(ud, NULL), NULL);
    return sst_node_update(ctx, "log", item, NULL);
}

/* A node writing the context's "who" and the remaining steps. */
static sst_code read_context(sst_node_ctx *ctx, void *ud) {
    (void)ud;
    const sst_value *who = sst_object_get(sst_node_context(ctx), "who");
    sst_code rc = sst_node_update(ctx, "who", sst_value_ref(who != NULL ? who : sst_null()), NULL);
    if (rc == SST_OK) {
        rc = sst_node_update(ctx, "remaining",
                             sst_int_new((int64_t)sst_node_remaining_steps(ctx), NULL), NULL);
    }
    return rc;
}

/* START -> a -> b, log appended, a memory saver and thread "t". */
static int setup(void **state) {
    (void)state;
    sst_error err;
    G = sst_graph_new(&err);
    bool ok =
        G != NULL &&
        sst_graph_add_field(G, "log", sst_reducer_append(), sst_array_empty(), &err) == SST_OK &&
        sst_graph_add_node(G, "a", append_name, "a", NULL, &err) == SST_OK &&
        sst_graph_add_node(G, "b", append_name, "b", NULL, &err) == SST_OK &&
        sst_graph_add_node(G, "ctx", read_context, NULL, NULL, &err) == SST_OK &&
        sst_graph_add_edge(G, SST_START, "a", &err) == SST_OK &&
        sst_graph_add_edge(G, "a", "b", &err) == SST_OK;
    CG = ok ? sst_graph_compile(G, NULL, &err) : NULL;
    CP = CG != NULL ? sst_memory_saver_new(&err) : NULL;
    TH = CP != NULL ? sst_graph_thread_open(CG, CP, "t", &err) : NULL;
    if (TH == NULL) {
        fprintf(stderr, "setup: %s\n", err.msg);
    }
    return TH == NULL;
}

static int teardown(void **state) {
    (void)state;
    sst_graph_thread_free(TH);
    sst_checkpointer_free(CP);
    sst_compiled_graph_free(CG);
    sst_graph_free(G);
    return 0;
}

/* Invokes TH with @p input (JSON or NULL) and @p o; returns the result (caller frees). */
static sst_graph_result *run(const char *input, const sst_invoke_opts *o) {
    sst_error err;
    sst_value *in = input != NULL ? tu_json(input) : NULL;
    sst_graph_result *r = sst_graph_invoke(CG, TH, in, o, &err);
    sst_value_unref(in);
    if (r == NULL) {
        print_error("invoke: %s\n", err.msg);
        fail();
    }
    return r;
}

static sst_value *history(void) {
    sst_error err;
    sst_value *h = sst_graph_get_state_history(TH, NULL, 0, &err);
    assert_non_null(h);
    return h;
}

static const sst_value *path(const sst_value *v, const char *a, const char *b, const char *c) {
    v = sst_object_get(v, a);
    v = b != NULL ? sst_object_get(v, b) : v;
    return c != NULL ? sst_object_get(v, c) : v;
}

static void test_snapshot_shape(void **state) {
    (void)state;
    sst_graph_result_free(run("{\"log\":[\"in\"]}", NULL));
    sst_value *h = history();
    assert_int_equal(sst_array_len(h), 4); /* input, before a, before b, end */
    const sst_value *end = sst_array_get(h, 0), *before_b = sst_array_get(h, 1);
    const sst_value *input = sst_array_get(h, 3);
    assert_string_equal(sst_string_cstr(path(end, "config", "configurable", "thread_id")), "t");
    assert_string_equal(sst_string_cstr(path(end, "config", "configurable", "checkpoint_ns")), "");
    assert_true(sst_value_equal(path(end, "parent_config", "configurable", "checkpoint_id"),
                                path(before_b, "config", "configurable", "checkpoint_id")));
    assert_non_null(strstr(sst_string_cstr(sst_object_get(end, "created_at")), "+00:00"));
    assert_json_eq(sst_object_get(end, "metadata"),
                   "{\"source\":\"loop\",\"step\":2,\"parents\":{}}");
    assert_json_eq(sst_object_get(end, "next"), "[]");
    /* The task that ran from before_b: its id, name, path and result. */
    const sst_value *task = sst_array_get(sst_object_get(before_b, "tasks"), 0);
    assert_int_equal(sst_string_len(sst_object_get(task, "id")), 32);
    assert_json_eq(sst_object_get(task, "name"), "\"b\"");
    assert_json_eq(sst_object_get(task, "path"), "[\"__pregel_pull\",\"b\"]");
    assert_json_eq(sst_object_get(task, "result"), "{\"log\":[\"b\"]}");
    /* The input checkpoint: next __start__, a __start__ task whose result is the input. */
    assert_json_eq(sst_object_get(input, "next"), "[\"__start__\"]");
    const sst_value *start = sst_array_get(sst_object_get(input, "tasks"), 0);
    assert_json_eq(sst_object_get(start, "name"), "\"__start__\"");
    assert_json_eq(sst_object_get(start, "result"), "{\"log\":[\"in\"]}");
    assert_null(sst_object_get(input, "parent_config"));
    sst_value_unref(h);
}

static void test_update_state_special_nodes(void **state) {
    (void)state;
    sst_error err;
    sst_graph_result_free(run("{}", NULL));
    /* END: the values applied, no next tasks. */
    sst_value *v = tu_json("{\"log\":[\"x\"]}");
    assert_sst_ok(sst_graph_update_state(TH, NULL, v, SST_END, &err), &err);
    sst_value_unref(v);
    sst_value *st = sst_graph_get_state(TH, NULL, &err);
    assert_json_eq(sst_object_get(st, "values"), "{\"log\":[\"a\",\"b\",\"x\"]}");
    assert_json_eq(sst_object_get(st, "next"), "[]");
    assert_json_eq(path(st, "metadata", "source", NULL), "\"update\"");
    sst_value_unref(st);
    /* __copy__: beside the copied checkpoint (same parent), source fork, no values needed. */
    st = sst_graph_get_state(TH, NULL, &err);
    char id[64], parent[64];
    snprintf(id, sizeof id, "%s",
             sst_string_cstr(path(st, "config", "configurable", "checkpoint_id")));
    snprintf(parent, sizeof parent, "%s",
             sst_string_cstr(path(st, "parent_config", "configurable", "checkpoint_id")));
    sst_value_unref(st);
    assert_sst_ok(sst_graph_update_state(TH, id, NULL, "__copy__", &err), &err);
    st = sst_graph_get_state(TH, NULL, &err);
    assert_string_equal(sst_string_cstr(path(st, "parent_config", "configurable", "checkpoint_id")),
                        parent);
    assert_json_eq(path(st, "metadata", "source", NULL), "\"fork\"");
    assert_json_eq(sst_object_get(st, "values"), "{\"log\":[\"a\",\"b\",\"x\"]}");
    sst_value_unref(st);
    /* __input__: the next invoke runs the values as a new input from START. */
    v = tu_json("{\"log\":[\"new\"]}");
    assert_sst_ok(sst_graph_update_state(TH, NULL, v, "__input__", &err), &err);
    sst_value_unref(v);
    sst_graph_result *r = run(NULL, NULL);
    assert_json_eq(sst_graph_result_state(r), "{\"log\":[\"a\",\"b\",\"x\",\"new\",\"a\",\"b\"]}");
    sst_graph_result_free(r);
    /* __copy__ with a list of updates: a copy of the input checkpoint, then the
     * updates as one superstep on it (LangGraph's values=[StateUpdate], as_node=__copy__). */
    sst_value *h = history();
    const sst_value *first = sst_array_get(h, sst_array_len(h) - 1);
    snprintf(id, sizeof id, "%s",
             sst_string_cstr(path(first, "config", "configurable", "checkpoint_id")));
    sst_value_unref(h);
    v = tu_json("[{\"values\":{\"log\":[\"s*\"]},\"as_node\":\"__start__\"}]");
    assert_sst_ok(sst_graph_update_state(TH, id, v, "__copy__", &err), &err);
    sst_value_unref(v);
    st = sst_graph_get_state(TH, NULL, &err);
    assert_json_eq(sst_object_get(st, "values"), "{\"log\":[\"s*\"]}");
    assert_json_eq(sst_object_get(st, "next"), "[\"a\"]");
    sst_value_unref(st);
    /* An unknown node is named. */
    assert_int_equal(sst_graph_update_state(TH, NULL, NULL, "ghost", &err), SST_EINVAL);
    assert_non_null(strstr(err.msg, "unknown node 'ghost'"));
}

static void test_bulk_update_state(void **state) {
    (void)state;
    sst_error err;
    /* Two supersteps on a new thread: as START (routes to a), then as a (routes to b). */
    sst_value *steps = tu_json("[[{\"values\":{\"log\":[\"s\"]},\"as_node\":\"__start__\"}],"
                               "[{\"values\":{\"log\":[\"fake a\"]},\"as_node\":\"a\"}]]");
    assert_sst_ok(sst_graph_bulk_update_state(TH, NULL, steps, &err), &err);
    sst_value_unref(steps);
    sst_value *h = history();
    assert_int_equal(sst_array_len(h), 2);
    assert_json_eq(sst_object_get(sst_array_get(h, 0), "next"), "[\"b\"]");
    assert_json_eq(sst_object_get(sst_array_get(h, 1), "next"), "[\"a\"]");
    sst_value_unref(h);
    sst_graph_result *r = run(NULL, NULL);
    assert_json_eq(sst_graph_result_state(r), "{\"log\":[\"s\",\"fake a\",\"b\"]}");
    sst_graph_result_free(r);
    steps = tu_json("[[]]");
    assert_int_equal(sst_graph_bulk_update_state(TH, NULL, steps, &err), SST_EINVAL);
    sst_value_unref(steps);
}

static void test_command_input_and_context(void **state) {
    (void)state;
    sst_invoke_opts o;
    sst_invoke_opts_init(&o);
    /* A Command on a new thread runs its goto only, with the update applied. */
    sst_value *update = tu_json("{\"log\":[\"u\"]}");
    sst_value *go = tu_json("\"ctx\"");
    sst_value *context = tu_json("{\"who\":\"me\"}");
    o.update = update;
    o.goto_targets = go;
    o.context = context;
    o.recursion_limit = 5;
    sst_graph_result *r = run(NULL, &o);
    assert_json_eq(sst_graph_result_state(r), "{\"log\":[\"u\"],\"who\":\"me\",\"remaining\":5}");
    sst_graph_result_free(r);
    /* A goto to an unknown node is named. */
    sst_value_unref(go);
    go = tu_json("\"nowhere\"");
    o.goto_targets = go;
    r = run(NULL, &o);
    assert_int_equal(sst_graph_result_status(r), SST_RUN_FAILED);
    assert_non_null(strstr(sst_graph_result_error(r)->msg, "unknown node 'nowhere'"));
    sst_graph_result_free(r);
    sst_value_unref(go);
    sst_value_unref(update);
    sst_value_unref(context);
}

/* Command{goto} alone (no update) on a run stopped by interrupt_before: the target runs too. */
static void test_command_goto_on_resume(void **state) {
    (void)state;
    sst_error err;
    sst_compile_opts co;
    sst_compile_opts_init(&co);
    const char *before[] = {"a"};
    co.interrupt_before = before;
    co.n_before = 1;
    sst_compiled_graph *cg = sst_graph_compile(G, &co, &err);
    assert_non_null(cg);
    sst_graph_thread *th = sst_graph_thread_open(cg, CP, "goto", &err);
    assert_non_null(th);
    sst_value *in = tu_json("{\"log\":[\"in\"]}");
    sst_graph_result *r = sst_graph_invoke(cg, th, in, NULL, &err);
    sst_value_unref(in);
    assert_int_equal(sst_graph_result_status(r), SST_RUN_INTERRUPTED);
    sst_graph_result_free(r);
    sst_invoke_opts o;
    sst_invoke_opts_init(&o);
    sst_value *go = tu_json("[\"b\"]");
    o.goto_targets = go;
    r = sst_graph_invoke(cg, th, NULL, &o, &err);
    if (r == NULL) {
        print_error("invoke: %s\n", err.msg);
        fail();
    }
    /* a and b run beside each other, then a's edge runs b again. */
    assert_json_eq(sst_graph_result_state(r), "{\"log\":[\"in\",\"a\",\"b\",\"b\"]}");
    sst_graph_result_free(r);
    sst_value_unref(go);
    sst_graph_thread_free(th);
    sst_compiled_graph_free(cg);
}

/* Untracked fields live in the run, never in checkpoints. */
static void test_untracked_fields(void **state) {
    (void)state;
    sst_error err;
    const char *names[] = {"log"};
    assert_sst_ok(sst_graph_set_untracked_fields(G, names, 1, &err), &err);
    sst_compiled_graph *cg = sst_graph_compile(G, NULL, &err);
    assert_non_null(cg);
    sst_graph_thread *th = sst_graph_thread_open(cg, CP, "untracked", &err);
    sst_value *in = tu_json("{\"log\":[\"in\"]}");
    sst_graph_result *r = sst_graph_invoke(cg, th, in, NULL, &err);
    sst_value_unref(in);
    assert_json_eq(sst_graph_result_state(r), "{\"log\":[\"in\",\"a\",\"b\"]}");
    sst_graph_result_free(r);
    sst_value *st = sst_graph_get_state(th, NULL, &err);
    assert_json_eq(sst_object_get(st, "values"), "{}");
    sst_value_unref(st);
    const char *bad[] = {"__x"};
    assert_int_equal(sst_graph_set_untracked_fields(G, bad, 1, &err), SST_EINVAL);
    sst_graph_thread_free(th);
    sst_compiled_graph_free(cg);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_snapshot_shape, setup, teardown),
        cmocka_unit_test_setup_teardown(test_update_state_special_nodes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bulk_update_state, setup, teardown),
        cmocka_unit_test_setup_teardown(test_command_input_and_context, setup, teardown),
        cmocka_unit_test_setup_teardown(test_command_goto_on_resume, setup, teardown),
        cmocka_unit_test_setup_teardown(test_untracked_fields, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
