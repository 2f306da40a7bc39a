/* SPDX-License-Identifier: MIT */
/*
 * Model usage summed per run (sst_node_report_usage): parallel tasks and
 * several supersteps add up, each checkpoint carries the total so far as
 * metadata "usage", the next invoke counts afresh, a subgraph's usage joins
 * its parent's, and a run that reports nothing has none.
 */
#include <stdio.h>
#include <string.h>

#include "superstep/superstep.h"
#include "test_util.h"

static const char *const k_call = "{\"input_tokens\": 10, \"output_tokens\": 2, \"total_tokens\": "
                                  "12, \"input_token_details\": {\"cache_read\": 4}}";

/* Reports one call's usage (a Send's task, or the node itself). */
static sst_code call(sst_node_ctx *ctx, void *ud) {
    (void)ud;
    sst_error err;
    sst_value *u = tu_json(k_call);
    sst_code rc = sst_node_report_usage(ctx, u, &err);
    sst_value_unref(u);
    return rc == SST_OK ? sst_node_update(ctx, "n", sst_int_new(1, NULL), NULL) : rc;
}

/* Reports a smaller usage, with a member that is not a count (left out). */
static sst_code final(sst_node_ctx *ctx, void *ud) {
    (void)ud;
    sst_error err;
    sst_value *u = tu_json("{\"input_tokens\": 1, \"output_tokens\": 1, \"model\": \"m\"}");
    sst_code rc = sst_node_report_usage(ctx, u, &err);
    sst_value_unref(u);
    return rc;
}

/* A usage that is not an object is refused, naming it. */
static sst_code bad(sst_node_ctx *ctx, void *ud) {
    (void)ud;
    sst_error err;
    sst_value *u = sst_int_new(3, NULL);
    sst_code rc = sst_node_report_usage(ctx, u, &err);
    sst_value_unref(u);
    assert_int_equal(rc, SST_EINVAL);
    assert_non_null(strstr(err.msg, "expected an object"));
    return SST_OK;
}

static sst_value *fan_out(const sst_value *state, void *ud, sst_error *err) {
    (void)state;
    (void)ud;
    sst_value *sends = sst_array_empty();
    for (int i = 0; i < 2; i++) {
        sends = sst_array_push_take(sends, sst_send_new("call", sst_object_empty(), err), err);
    }
    return sends;
}

/* START -(two Sends)-> call -> final -> END, "n" summed. */
static sst_compiled_graph *fan_graph(sst_graph **g) {
    sst_error err;
    *g = sst_graph_new(&err);
    bool ok =
        *g != NULL &&
        sst_graph_add_field(*g, "n", sst_reducer_sum(), sst_int_new(0, NULL), &err) == SST_OK &&
        sst_graph_add_node(*g, "call", call, NULL, NULL, &err) == SST_OK &&
        sst_graph_add_node(*g, "final", final, NULL, NULL, &err) == SST_OK &&
        sst_graph_add_node(*g, "bad", bad, NULL, NULL, &err) == SST_OK &&
        sst_graph_add_conditional_edges(*g, SST_START, fan_out, NULL, NULL, &err) == SST_OK &&
        sst_graph_add_edge(*g, "call", "final", &err) == SST_OK &&
        sst_graph_add_edge(*g, "final", "bad", &err) == SST_OK;
    sst_compiled_graph *cg = ok ? sst_graph_compile(*g, NULL, &err) : NULL;
    if (cg == NULL) {
        print_error("graph: %s\n", err.msg);
    }
    return cg;
}

static sst_engine *engine(void) {
    sst_engine_opts eo;
    sst_engine_opts_init(&eo);
    eo.workers = 2;
    sst_error err;
    return sst_engine_new(&eo, &err);
}

static void test_usage_summed_per_run(void **state) {
    (void)state;
    sst_error err;
    sst_graph *g = NULL;
    sst_compiled_graph *cg = fan_graph(&g);
    assert_non_null(cg);
    sst_checkpointer *cp = sst_memory_saver_new(&err);
    sst_graph_thread *th = sst_graph_thread_open(cg, cp, "u", &err);
    sst_engine *e = engine();
    assert_non_null(e);
    sst_invoke_opts o;
    sst_invoke_opts_init(&o);
    o.engine = e; /* the two Sends report from two workers */
    for (int run = 0; run < 2; run++) {
        sst_value *in = tu_json("{}");
        sst_graph_result *r = sst_graph_invoke(cg, th, in, &o, &err);
        sst_value_unref(in);
        assert_non_null(r);
        assert_int_equal(sst_graph_result_status(r), SST_RUN_COMPLETED);
        /* The second run counts afresh: the same figures, not twice them. */
        assert_json_eq(sst_graph_result_usage(r),
                       "{\"input_tokens\": 21, \"output_tokens\": 5, \"total_tokens\": 24, "
                       "\"input_token_details\": {\"cache_read\": 8}}");
        sst_graph_result_free(r);
    }
    /* Newest first: the last checkpoint has the run's total, the one after the Sends
     * their part, the input checkpoint none. */
    sst_value *h = sst_graph_get_state_history(th, NULL, 0, &err);
    assert_non_null(h);
    assert_true(sst_array_len(h) >= 4);
    const sst_value *m0 = sst_object_get(sst_array_get(h, 0), "metadata");
    assert_json_eq(sst_object_get(m0, "usage"),
                   "{\"input_tokens\": 21, \"output_tokens\": 5, \"total_tokens\": 24, "
                   "\"input_token_details\": {\"cache_read\": 8}}");
    const sst_value *m2 = sst_object_get(sst_array_get(h, 2), "metadata");
    assert_json_eq(sst_object_get(m2, "usage"),
                   "{\"input_tokens\": 20, \"output_tokens\": 4, \"total_tokens\": 24, "
                   "\"input_token_details\": {\"cache_read\": 8}}");
    const sst_value *m3 = sst_object_get(sst_array_get(h, 3), "metadata");
    assert_null(sst_object_get(m3, "usage"));
    sst_value_unref(h);
    sst_engine_free(e);
    sst_graph_thread_free(th);
    sst_checkpointer_free(cp);
    sst_compiled_graph_free(cg);
    sst_graph_free(g);
}

static sst_code noop(sst_node_ctx *ctx, void *ud) {
    (void)ud;
    return sst_node_update(ctx, "n", sst_int_new(1, NULL), NULL);
}

/* A subgraph's usage joins its parent's; a graph that reports nothing has none. */
static void test_usage_of_subgraph_and_none(void **state) {
    (void)state;
    sst_error err;
    sst_graph *child_g = NULL;
    sst_compiled_graph *child = fan_graph(&child_g);
    assert_non_null(child);
    sst_graph *g = sst_graph_new(&err);
    assert_int_equal(sst_graph_add_field(g, "n", sst_reducer_sum(), sst_int_new(0, NULL), &err),
                     SST_OK);
    assert_int_equal(sst_graph_add_subgraph(g, "sub", child, NULL, &err), SST_OK);
    assert_int_equal(sst_graph_add_node(g, "after", noop, NULL, NULL, &err), SST_OK);
    assert_int_equal(sst_graph_add_edge(g, SST_START, "sub", &err), SST_OK);
    assert_int_equal(sst_graph_add_edge(g, "sub", "after", &err), SST_OK);
    sst_compiled_graph *cg = sst_graph_compile(g, NULL, &err);
    assert_non_null(cg);
    sst_checkpointer *cp = sst_memory_saver_new(&err);
    sst_graph_thread *th = sst_graph_thread_open(cg, cp, "s", &err);
    sst_value *in = tu_json("{}");
    sst_graph_result *r = sst_graph_invoke(cg, th, in, NULL, &err);
    assert_non_null(r);
    assert_int_equal(sst_graph_result_status(r), SST_RUN_COMPLETED);
    assert_json_eq(sst_graph_result_usage(r),
                   "{\"input_tokens\": 21, \"output_tokens\": 5, \"total_tokens\": 24, "
                   "\"input_token_details\": {\"cache_read\": 8}}");
    sst_graph_result_free(r);
    sst_value *st = sst_graph_get_state(th, NULL, &err);
    assert_non_null(sst_object_get(sst_object_get(st, "metadata"), "usage"));
    sst_value_unref(st);
    sst_graph_thread_free(th);

    /* No reports: no usage anywhere. */
    sst_graph *plain_g = sst_graph_new(&err);
    assert_int_equal(
        sst_graph_add_field(plain_g, "n", sst_reducer_sum(), sst_int_new(0, NULL), &err), SST_OK);
    assert_int_equal(sst_graph_add_node(plain_g, "a", noop, NULL, NULL, &err), SST_OK);
    assert_int_equal(sst_graph_add_edge(plain_g, SST_START, "a", &err), SST_OK);
    sst_compiled_graph *plain = sst_graph_compile(plain_g, NULL, &err);
    th = sst_graph_thread_open(plain, cp, "p", &err);
    r = sst_graph_invoke(plain, th, in, NULL, &err);
    assert_non_null(r);
    assert_null(sst_graph_result_usage(r));
    sst_graph_result_free(r);
    st = sst_graph_get_state(th, NULL, &err);
    assert_null(sst_object_get(sst_object_get(st, "metadata"), "usage"));
    sst_value_unref(st);
    sst_value_unref(in);
    sst_graph_thread_free(th);
    sst_compiled_graph_free(plain);
    sst_graph_free(plain_g);
    sst_checkpointer_free(cp);
    sst_compiled_graph_free(cg);
    sst_graph_free(g);
    sst_compiled_graph_free(child);
    sst_graph_free(child_g);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_usage_summed_per_run),
        cmocka_unit_test(test_usage_of_subgraph_and_none),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
