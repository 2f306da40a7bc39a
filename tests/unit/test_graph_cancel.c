/* SPDX-License-Identifier: MIT */
/*
 * What `superstep serve` needs from the graph layer (issue 17): a run's
 * cancel hook (sst_invoke_opts.cancelled: the run stops before its next
 * superstep with SST_ECANCELLED, the thread stays idle, and the next invoke
 * goes on from the last checkpoint; nodes see it through sst_node_cancelled),
 * the graph as LangGraph's drawable JSON (sst_compiled_graph_json) and the
 * state's field names (sst_compiled_graph_state_fields).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "superstep/superstep.h"
#include "test_util.h"

static atomic_int STEPS;       /* nodes run */
static atomic_int CANCEL_AT;   /* cancel once this many nodes ran (0: never) */
static atomic_bool SAW_CANCEL; /* a node saw sst_node_cancelled */

static bool cancel_hook(void *ud, bool in_node) {
    (void)ud;
    (void)in_node;
    int at = atomic_load(&CANCEL_AT);
    return at > 0 && atomic_load(&STEPS) >= at;
}

static sst_code step(sst_node_ctx *ctx, void *ud) {
    (void)ud;
    atomic_fetch_add(&STEPS, 1);
    if (sst_node_cancelled(ctx)) {
        atomic_store(&SAW_CANCEL, true);
    }
    return sst_node_update(ctx, "log", sst_string_new(sst_node_name(ctx), NULL), NULL);
}

static const char *route(const sst_value *state) {
    return sst_array_len(sst_object_get(state, "log")) >= 5 ? SST_END : "e";
}

static sst_value *router(const sst_value *state, void *ud, sst_error *err) {
    (void)ud;
    return sst_string_new(route(state), err);
}

/* a -> b -> c -> d, then d routes to e or END (conditional). */
static sst_compiled_graph *chain(void) {
    sst_error err;
    sst_graph *g = sst_graph_new(&err);
    assert_sst_ok(sst_graph_add_field(g, "log", sst_reducer_append(), sst_array_empty(), &err),
                  &err);
    assert_sst_ok(sst_graph_add_field(g, "n", sst_reducer_replace(), sst_null(), &err), &err);
    const char *names[] = {"a", "b", "c", "d", "e"};
    for (size_t i = 0; i < 5; i++) {
        assert_sst_ok(sst_graph_add_node(g, names[i], step, NULL, NULL, &err), &err);
    }
    assert_sst_ok(sst_graph_add_edge(g, SST_START, "a", &err), &err);
    assert_sst_ok(sst_graph_add_edge(g, "a", "b", &err), &err);
    assert_sst_ok(sst_graph_add_edge(g, "b", "c", &err), &err);
    assert_sst_ok(sst_graph_add_edge(g, "c", "d", &err), &err);
    sst_value *targets = sst_array_push_take(sst_array_empty(), sst_string_new("e", NULL), NULL);
    targets = sst_array_push_take(targets, sst_string_new(SST_END, NULL), NULL);
    assert_sst_ok(sst_graph_add_conditional_edges(g, "d", router, NULL, targets, &err), &err);
    sst_value_unref(targets);
    assert_sst_ok(sst_graph_add_edge(g, "e", SST_END, &err), &err);
    sst_compiled_graph *cg = sst_graph_compile(g, NULL, &err);
    assert_non_null(cg);
    sst_graph_free(g);
    return cg;
}

/* Cancelled after two nodes: SST_ECANCELLED, two committed steps, the thread idle; the next
 * invoke with no input runs c, d and e once each. */
static void test_cancel_stops_at_a_superstep(void **state) {
    (void)state;
    sst_error err = {0};
    sst_compiled_graph *cg = chain();
    sst_checkpointer *cp = sst_memory_saver_new(&err);
    sst_graph_thread *th = sst_graph_thread_open(cg, cp, "t1", &err);
    assert_non_null(th);
    atomic_store(&STEPS, 0);
    atomic_store(&CANCEL_AT, 2);
    atomic_store(&SAW_CANCEL, false);
    sst_invoke_opts o;
    sst_invoke_opts_init(&o);
    o.cancelled = cancel_hook;
    sst_value *in = sst_object_set_take(sst_object_empty(), "n", sst_int_new(1, NULL), NULL);
    sst_graph_result *r = sst_graph_invoke(cg, th, in, &o, &err);
    assert_non_null(r);
    assert_int_equal(sst_graph_result_status(r), SST_RUN_FAILED);
    assert_int_equal(sst_graph_result_error(r)->code, SST_ECANCELLED);
    assert_non_null(strstr(sst_graph_result_error(r)->msg, "cancelled before superstep"));
    assert_int_equal(atomic_load(&STEPS), 2);
    assert_true(atomic_load(&SAW_CANCEL)); /* b ran when the hook already said yes */
    sst_graph_result_free(r);

    sst_value *t = sst_checkpointer_search_threads(cp, NULL, &err);
    assert_non_null(t);
    assert_string_equal(sst_string_cstr(sst_object_get(sst_array_get(t, 0), "status")), "idle");
    sst_value_unref(t);

    atomic_store(&CANCEL_AT, 0);
    r = sst_graph_invoke(cg, th, NULL, &o, &err);
    assert_non_null(r);
    assert_int_equal(sst_graph_result_status(r), SST_RUN_COMPLETED);
    assert_int_equal(atomic_load(&STEPS), 5);
    char *log = sst_json_write(sst_object_get(sst_graph_result_state(r), "log"), 0, NULL, NULL);
    assert_string_equal(log, "[\"a\",\"b\",\"c\",\"d\",\"e\"]");
    sst_free(log);
    sst_graph_result_free(r);
    sst_value_unref(in);
    sst_graph_thread_free(th);
    sst_checkpointer_free(cp);
    sst_compiled_graph_free(cg);
}

/* A hook that says yes at once: nothing runs, and no hook: everything does. */
static void test_cancel_before_the_first_superstep(void **state) {
    (void)state;
    sst_error err = {0};
    sst_compiled_graph *cg = chain();
    atomic_store(&STEPS, 0);
    sst_invoke_opts o;
    sst_invoke_opts_init(&o);
    o.cancelled = cancel_hook;
    atomic_store(&CANCEL_AT, 0);
    sst_graph_result *r = sst_graph_invoke(cg, NULL, NULL, &o, &err);
    assert_int_equal(sst_graph_result_status(r), SST_RUN_COMPLETED);
    assert_int_equal(atomic_load(&STEPS), 5);
    sst_graph_result_free(r);
    atomic_store(&CANCEL_AT, 1);
    atomic_store(&STEPS, 1); /* as if one ran already: the hook says yes before superstep 0 */
    r = sst_graph_invoke(cg, NULL, NULL, &o, &err);
    assert_int_equal(sst_graph_result_error(r)->code, SST_ECANCELLED);
    assert_int_equal(atomic_load(&STEPS), 1);
    sst_graph_result_free(r);
    sst_compiled_graph_free(cg);
}

static const sst_value *find_edge(const sst_value *edges, const char *from, const char *to) {
    for (size_t i = 0; i < sst_array_len(edges); i++) {
        const sst_value *e = sst_array_get(edges, i);
        if (strcmp(sst_string_cstr(sst_object_get(e, "source")), from) == 0 &&
            strcmp(sst_string_cstr(sst_object_get(e, "target")), to) == 0) {
            return e;
        }
    }
    return NULL;
}

static void test_graph_json_and_fields(void **state) {
    (void)state;
    sst_error err = {0};
    sst_compiled_graph *cg = chain();
    sst_value *g = sst_compiled_graph_json(cg, 0, &err);
    assert_non_null(g);
    const sst_value *nodes = sst_object_get(g, "nodes");
    assert_int_equal(sst_array_len(nodes), 7); /* __start__, a..e, __end__ */
    assert_string_equal(sst_string_cstr(sst_object_get(sst_array_get(nodes, 0), "id")),
                        "__start__");
    assert_string_equal(sst_string_cstr(sst_object_get(sst_array_get(nodes, 0), "type")),
                        "runnable");
    assert_string_equal(sst_string_cstr(sst_object_get(sst_array_get(nodes, 1), "id")), "a");
    assert_string_equal(sst_string_cstr(sst_object_get(sst_array_get(nodes, 1), "type")),
                        "runnable");
    assert_string_equal(sst_string_cstr(sst_object_get(sst_array_get(nodes, 6), "id")), "__end__");
    assert_null(sst_object_get(sst_array_get(nodes, 6), "type")); /* END: its id only */
    const sst_value *edges = sst_object_get(g, "edges");
    const sst_value *e = find_edge(edges, "a", "b");
    assert_non_null(e);
    assert_null(sst_object_get(e, "conditional")); /* LangGraph's to_json: only when true */
    e = find_edge(edges, "d", "e");
    assert_non_null(e);
    assert_true(sst_bool_value(sst_object_get(e, "conditional")));
    assert_non_null(find_edge(edges, "d", "__end__"));
    assert_non_null(find_edge(edges, "__start__", "a"));
    assert_null(find_edge(edges, "a", "c"));
    sst_value_unref(g);
    assert_null(sst_compiled_graph_json(NULL, 0, &err));
    assert_int_equal(err.code, SST_EINVAL);

    sst_value *f = sst_compiled_graph_state_fields(cg, &err);
    char *text = sst_json_write(f, 0, NULL, NULL);
    assert_string_equal(text, "[\"log\",\"n\"]"); /* the hidden barrier field left out */
    sst_free(text);
    sst_value_unref(f);
    sst_compiled_graph_free(cg);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cancel_stops_at_a_superstep),
        cmocka_unit_test(test_cancel_before_the_first_superstep),
        cmocka_unit_test(test_graph_json_and_fields),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
