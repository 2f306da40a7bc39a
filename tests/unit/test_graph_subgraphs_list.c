/* SPDX-License-Identifier: MIT */
/*
 * Listing a compiled graph's subgraph nodes (sst_compiled_graph_subgraph_at,
 * one level of LangGraph's get_subgraphs()): the nodes given to
 * sst_graph_add_subgraph, in the order they were added, each with its name;
 * NULL past the last one; nested levels listed by asking each subgraph in
 * turn; a graph a node's function runs is not listed.
 */
#include <string.h>

#include "superstep/superstep.h"
#include "test_util.h"

/* ---- fixture: graphs freed parents first ---- */

#define MAX_GRAPHS 4

static sst_graph *GS[MAX_GRAPHS];
static sst_compiled_graph *CGS[MAX_GRAPHS];
static size_t N;

static int teardown(void **state) {
    (void)state;
    while (N > 0) {
        N--;
        sst_compiled_graph_free(CGS[N]);
        sst_graph_free(GS[N]);
    }
    return 0;
}

static sst_code noop(sst_node_ctx *ctx, void *ud) {
    (void)ctx;
    (void)ud;
    return SST_OK;
}

static sst_graph *new_graph(void) {
    assert_true(N < MAX_GRAPHS);
    sst_error err;
    sst_graph *g = sst_graph_new(NULL);
    assert_non_null(g);
    assert_sst_ok(sst_graph_add_field(g, "log", sst_reducer_append(), sst_array_empty(), &err),
                  &err);
    GS[N] = g;
    CGS[N] = NULL;
    N++;
    return g;
}

static void add(sst_graph *g, const char *name) {
    sst_error err;
    assert_sst_ok(sst_graph_add_node(g, name, noop, NULL, NULL, &err), &err);
}

static void add_sub(sst_graph *g, const char *name, const sst_compiled_graph *child) {
    sst_error err;
    assert_sst_ok(sst_graph_add_subgraph(g, name, child, NULL, &err), &err);
}

/* START -> names[0] -> ... -> names[n-1] -> END. */
static void chain(sst_graph *g, const char *const *names, size_t n) {
    sst_error err;
    for (size_t i = 0; i <= n; i++) {
        const char *from = i == 0 ? SST_START : names[i - 1];
        const char *to = i == n ? SST_END : names[i];
        assert_sst_ok(sst_graph_add_edge(g, from, to, &err), &err);
    }
}

/* Compiles the graph made last. */
static sst_compiled_graph *done(void) {
    sst_error err;
    sst_compiled_graph *cg = sst_graph_compile(GS[N - 1], NULL, &err);
    if (cg == NULL) {
        print_error("compile failed: %s\n", err.msg);
        fail();
    }
    CGS[N - 1] = cg;
    return cg;
}

/* A graph of one plain node "leaf". */
static const sst_compiled_graph *leaf_graph(void) {
    sst_graph *g = new_graph();
    add(g, "leaf");
    static const char *const order[] = {"leaf"};
    chain(g, order, 1);
    return done();
}

/* Asserts that @p cg lists exactly the @p n subgraph nodes @p names running @p subs. */
static void assert_lists(const sst_compiled_graph *cg, const char *const *names,
                         const sst_compiled_graph *const *subs, size_t n) {
    for (size_t i = 0; i < n; i++) {
        const char *name = NULL;
        const sst_compiled_graph *sub = sst_compiled_graph_subgraph_at(cg, i, &name);
        if (sub == NULL || name == NULL || strcmp(name, names[i]) != 0 || sub != subs[i]) {
            print_error("subgraph node %zu: got '%s' (%p), wanted '%s' (%p)\n", i,
                        name != NULL ? name : "(none)", (const void *)sub, names[i],
                        (const void *)subs[i]);
            fail();
        }
        /* The same subgraph sst_compiled_graph_subgraph gives for the name. */
        assert_ptr_equal(sst_compiled_graph_subgraph(cg, name), sub);
        /* The name is optional. */
        assert_ptr_equal(sst_compiled_graph_subgraph_at(cg, i, NULL), sub);
    }
    /* "NULL when @p cg has @p i or fewer subgraph nodes", the name left unchanged. */
    const char *untouched = "untouched";
    assert_null(sst_compiled_graph_subgraph_at(cg, n, &untouched));
    assert_string_equal(untouched, "untouched");
    assert_null(sst_compiled_graph_subgraph_at(cg, n + 1, &untouched));
    assert_null(sst_compiled_graph_subgraph_at(cg, SIZE_MAX, &untouched));
    assert_string_equal(untouched, "untouched");
}

static void test_no_subgraphs(void **state) {
    (void)state;
    const sst_compiled_graph *cg = leaf_graph();
    assert_lists(cg, NULL, NULL, 0);
    /* "@p cg NULL: it has none". */
    const char *untouched = "untouched";
    assert_null(sst_compiled_graph_subgraph_at(NULL, 0, &untouched));
    assert_string_equal(untouched, "untouched");
}

/* The subgraph nodes among plain ones, in the order they were added (not the edges' order);
 * one compiled graph may be the subgraph of two nodes. */
static void test_one_level_in_order(void **state) {
    (void)state;
    const sst_compiled_graph *a = leaf_graph();
    const sst_compiled_graph *b = leaf_graph();
    sst_graph *p = new_graph();
    add(p, "pre");
    add_sub(p, "zeta", a);
    add(p, "mid");
    add_sub(p, "alpha", b);
    add_sub(p, "again", a);
    add(p, "post");
    static const char *const order[] = {"pre", "again", "mid", "alpha", "zeta", "post"};
    chain(p, order, 6);
    const sst_compiled_graph *cg = done();
    static const char *const names[] = {"zeta", "alpha", "again"};
    const sst_compiled_graph *const subs[] = {a, b, a};
    assert_lists(cg, names, subs, 3);
    /* One level only: the subgraphs' own (plain) nodes are not the parent's. */
    assert_lists(a, NULL, NULL, 0);
}

/* outer: mid -> plain -> mid2, mid and mid2 running `mid` whose nodes inner and other run
 * `leaf`: each level answers for itself. */
static void test_nested_levels(void **state) {
    (void)state;
    const sst_compiled_graph *leaf = leaf_graph();
    sst_graph *m = new_graph();
    add_sub(m, "inner", leaf);
    add_sub(m, "other", leaf);
    static const char *const morder[] = {"inner", "other"};
    chain(m, morder, 2);
    const sst_compiled_graph *mid = done();
    sst_graph *o = new_graph();
    add_sub(o, "mid", mid);
    add(o, "plain");
    add_sub(o, "mid2", mid);
    static const char *const oorder[] = {"mid", "plain", "mid2"};
    chain(o, oorder, 3);
    const sst_compiled_graph *outer = done();

    static const char *const onames[] = {"mid", "mid2"};
    const sst_compiled_graph *const osubs[] = {mid, mid};
    assert_lists(outer, onames, osubs, 2);
    const sst_compiled_graph *sub = sst_compiled_graph_subgraph_at(outer, 0, NULL);
    static const char *const mnames[] = {"inner", "other"};
    const sst_compiled_graph *const msubs[] = {leaf, leaf};
    assert_lists(sub, mnames, msubs, 2);
    assert_lists(sst_compiled_graph_subgraph_at(sub, 1, NULL), NULL, NULL, 0);
}

/* A node running a graph from its function (sst_node_run_subgraph). */
static sst_code runs_child(sst_node_ctx *ctx, void *ud) {
    const sst_compiled_graph *child = ud;
    sst_value *out = NULL;
    sst_error err = {0};
    sst_code rc = sst_node_run_subgraph(ctx, child, NULL, &out, &err);
    sst_value_unref(out);
    return rc;
}

/* "A graph that a node's function runs (sst_node_run_subgraph) is not listed", also after
 * the node ran it. */
static void test_run_from_a_function_not_listed(void **state) {
    (void)state;
    const sst_compiled_graph *leaf = leaf_graph();
    sst_graph *p = new_graph();
    sst_error err;
    assert_sst_ok(sst_graph_add_node(p, "calls", runs_child, (void *)leaf, NULL, &err), &err);
    add_sub(p, "declared", leaf);
    static const char *const order[] = {"calls", "declared"};
    chain(p, order, 2);
    const sst_compiled_graph *cg = done();
    static const char *const names[] = {"declared"};
    const sst_compiled_graph *const subs[] = {leaf};
    assert_lists(cg, names, subs, 1);
    sst_graph_result *r = sst_graph_invoke(cg, NULL, NULL, NULL, &err);
    if (r == NULL) {
        print_error("invoke failed: %s\n", err.msg);
        fail();
    }
    assert_int_equal(sst_graph_result_status(r), SST_RUN_COMPLETED);
    sst_graph_result_free(r);
    assert_lists(cg, names, subs, 1);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_no_subgraphs, teardown),
        cmocka_unit_test_teardown(test_one_level_in_order, teardown),
        cmocka_unit_test_teardown(test_nested_levels, teardown),
        cmocka_unit_test_teardown(test_run_from_a_function_not_listed, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
