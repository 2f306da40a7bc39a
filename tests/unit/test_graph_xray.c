/* SPDX-License-Identifier: MIT */
/*
 * Drawing subgraphs expanded (LangGraph's get_graph(xray=...)):
 * sst_compiled_graph_mermaid_xray / sst_compiled_graph_dot_xray. xray 0 and
 * graphs without subgraphs draw as the plain functions; xray N expands N
 * levels, each subgraph's nodes named "node:child" in a block of their own,
 * with the parent's edges wired to the child's entry and exit nodes.
 */
#include <stdio.h>
#include <string.h>

#include "superstep/superstep.h"
#include "test_util.h"

/* ---- fixture: graphs freed parents first ---- */

#define MAX_LEVELS 4

static sst_graph *GS[MAX_LEVELS];
static sst_compiled_graph *CGS[MAX_LEVELS];
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

static sst_value *pick(const sst_value *state, void *ud, sst_error *err) {
    (void)state;
    return sst_string_new(ud, err);
}

static sst_graph *new_graph(void) {
    assert_true(N < MAX_LEVELS);
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

static void link(sst_graph *g, const char *from, const char *to) {
    sst_error err;
    assert_sst_ok(sst_graph_add_edge(g, from, to, &err), &err);
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

/* Draws @p cg (Mermaid, or DOT with @p dot) @p xray levels deep. */
static char *draw(const sst_compiled_graph *cg, bool dot, unsigned xray) {
    sst_error err;
    char *text = dot ? sst_compiled_graph_dot_xray(cg, xray, &err)
                     : sst_compiled_graph_mermaid_xray(cg, xray, &err);
    if (text == NULL) {
        print_error("draw failed: %s\n", err.msg);
        fail();
    }
    return text;
}

static void assert_has(const char *text, const char *needle) {
    if (strstr(text, needle) == NULL) {
        print_error("'%s' not in:\n%s\n", needle, text);
        fail();
    }
}

static void assert_lacks(const char *text, const char *needle) {
    if (strstr(text, needle) != NULL) {
        print_error("'%s' in:\n%s\n", needle, text);
        fail();
    }
}

static void assert_text(char *text, const char *want) {
    if (strcmp(text, want) != 0) {
        print_error("got:\n%s\nwanted:\n%s\n", text, want);
        sst_free(text);
        fail();
    }
    sst_free(text);
}

/*
 * kid: START -> a, START -> b (two entries); a -> END; b -> END or a (a router
 * with a path map). parent: START -> before -> kid -> after -> END.
 */
static const sst_compiled_graph *two_levels(void) {
    sst_graph *k = new_graph();
    add(k, "a");
    add(k, "b");
    link(k, SST_START, "a");
    link(k, SST_START, "b");
    link(k, "a", SST_END);
    sst_value *map = tu_json("{\"done\":\"__end__\",\"again\":\"a\"}");
    sst_error err;
    assert_sst_ok(sst_graph_add_conditional_edges(k, "b", pick, "done", map, &err), &err);
    sst_value_unref(map);
    const sst_compiled_graph *kid = done();
    sst_graph *p = new_graph();
    add(p, "before");
    add_sub(p, "kid", kid);
    add(p, "after");
    link(p, SST_START, "before");
    link(p, "before", "kid");
    link(p, "kid", "after");
    link(p, "after", SST_END);
    return done();
}

/* grand: START -> g1 -> g2 -> END; child: START -> c1 -> inner (grand) -> END;
 * parent: START -> sub (child) -> END. */
static const sst_compiled_graph *three_levels(void) {
    sst_graph *g = new_graph();
    add(g, "g1");
    add(g, "g2");
    link(g, SST_START, "g1");
    link(g, "g1", "g2");
    link(g, "g2", SST_END);
    const sst_compiled_graph *grand = done();
    sst_graph *c = new_graph();
    add(c, "c1");
    add_sub(c, "inner", grand);
    link(c, SST_START, "c1");
    link(c, "c1", "inner");
    link(c, "inner", SST_END);
    const sst_compiled_graph *child = done();
    sst_graph *p = new_graph();
    add_sub(p, "sub", child);
    link(p, SST_START, "sub");
    link(p, "sub", SST_END);
    return done();
}

/* ---- tests ---- */

/* xray 0 is the plain drawing, where a subgraph node is one node. */
static void test_xray_zero_is_plain(void **state) {
    (void)state;
    const sst_compiled_graph *cg = two_levels();
    sst_error err;
    for (int dot = 0; dot < 2; dot++) {
        char *plain = dot ? sst_compiled_graph_dot(cg, &err) : sst_compiled_graph_mermaid(cg, &err);
        assert_non_null(plain);
        char *x0 = draw(cg, dot, 0);
        assert_string_equal(x0, plain);
        assert_has(plain, dot ? "  \"kid\" [shape=box];\n" : "    kid(\"kid\")\n");
        assert_has(plain, dot ? "  \"before\" -> \"kid\";\n" : "    before --> kid\n");
        assert_lacks(plain, "kid:a");
        sst_free(x0);
        sst_free(plain);
    }
}

static void test_two_levels_mermaid(void **state) {
    (void)state;
    assert_text(draw(two_levels(), false, 1), "%%{init: {'flowchart': {'curve': 'linear'}}}%%\n"
                                              "graph TD;\n"
                                              "    __start__([\"__start__\"])\n"
                                              "    before(\"before\")\n"
                                              "    subgraph kid[\"kid\"]\n"
                                              "        kid_3aa(\"a\")\n"
                                              "        kid_3ab(\"b\")\n"
                                              "    end\n"
                                              "    after(\"after\")\n"
                                              "    __end__([\"__end__\"])\n"
                                              "    __start__ --> before\n"
                                              "    before --> kid_3aa\n"
                                              "    before --> kid_3ab\n"
                                              "    kid_3aa --> after\n"
                                              "    kid_3ab --> after\n"
                                              "    after --> __end__\n"
                                              "    kid_3ab -. \"again\" .-> kid_3aa\n");
}

static void test_two_levels_dot(void **state) {
    (void)state;
    assert_text(draw(two_levels(), true, SST_XRAY_ALL),
                "digraph G {\n"
                "  rankdir=TB;\n"
                "  \"__start__\" [shape=oval];\n"
                "  \"before\" [shape=box];\n"
                "  subgraph \"cluster_kid\" {\n"
                "    label=\"kid\";\n"
                "    \"kid:a\" [shape=box, label=\"a\"];\n"
                "    \"kid:b\" [shape=box, label=\"b\"];\n"
                "  }\n"
                "  \"after\" [shape=box];\n"
                "  \"__end__\" [shape=oval];\n"
                "  \"__start__\" -> \"before\";\n"
                "  \"before\" -> \"kid:a\";\n"
                "  \"before\" -> \"kid:b\";\n"
                "  \"kid:a\" -> \"after\";\n"
                "  \"kid:b\" -> \"after\";\n"
                "  \"after\" -> \"__end__\";\n"
                "  \"kid:b\" -> \"kid:a\" [style=dashed, label=\"again\"];\n"
                "}\n");
}

/* xray 1 expands the child and leaves the grandchild one node; SST_XRAY_ALL expands both. */
static void test_three_levels(void **state) {
    (void)state;
    const sst_compiled_graph *cg = three_levels();
    char *m1 = draw(cg, false, 1);
    assert_has(m1, "    subgraph sub[\"sub\"]\n"
                   "        sub_3ac1(\"c1\")\n"
                   "        sub_3ainner(\"inner\")\n"
                   "    end\n");
    assert_has(m1, "    __start__ --> sub_3ac1\n");
    assert_has(m1, "    sub_3ainner --> __end__\n");
    assert_has(m1, "    sub_3ac1 --> sub_3ainner\n");
    assert_lacks(m1, "g1");
    assert_lacks(m1, "subgraph sub_3ainner");
    sst_free(m1);
    assert_text(draw(cg, false, SST_XRAY_ALL), "%%{init: {'flowchart': {'curve': 'linear'}}}%%\n"
                                               "graph TD;\n"
                                               "    __start__([\"__start__\"])\n"
                                               "    subgraph sub[\"sub\"]\n"
                                               "        sub_3ac1(\"c1\")\n"
                                               "        subgraph sub_3ainner[\"inner\"]\n"
                                               "            sub_3ainner_3ag1(\"g1\")\n"
                                               "            sub_3ainner_3ag2(\"g2\")\n"
                                               "        end\n"
                                               "    end\n"
                                               "    __end__([\"__end__\"])\n"
                                               "    __start__ --> sub_3ac1\n"
                                               "    sub_3ainner_3ag2 --> __end__\n"
                                               "    sub_3ac1 --> sub_3ainner_3ag1\n"
                                               "    sub_3ainner_3ag1 --> sub_3ainner_3ag2\n");
    char *d2 = draw(cg, true, 2); /* two levels: every level of this graph */
    assert_has(d2, "  subgraph \"cluster_sub\" {\n"
                   "    label=\"sub\";\n"
                   "    \"sub:c1\" [shape=box, label=\"c1\"];\n"
                   "    subgraph \"cluster_sub:inner\" {\n"
                   "      label=\"inner\";\n"
                   "      \"sub:inner:g1\" [shape=box, label=\"g1\"];\n"
                   "      \"sub:inner:g2\" [shape=box, label=\"g2\"];\n"
                   "    }\n"
                   "  }\n");
    assert_has(d2, "  \"sub:c1\" -> \"sub:inner:g1\";\n");
    assert_has(d2, "  \"sub:inner:g2\" -> \"__end__\";\n");
    char *d_all = draw(cg, true, SST_XRAY_ALL);
    assert_string_equal(d2, d_all);
    sst_free(d_all);
    sst_free(d2);
    char *d1 = draw(cg, true, 1);
    assert_has(d1, "    \"sub:inner\" [shape=box, label=\"inner\"];\n");
    assert_lacks(d1, "cluster_sub:inner");
    sst_free(d1);
}

/* Joins, gotos and conditional edges around a subgraph node are rewired too. */
static void test_joins_and_gotos(void **state) {
    (void)state;
    sst_graph *k = new_graph();
    add(k, "a");
    add(k, "b");
    link(k, SST_START, "a");
    link(k, "a", "b");
    link(k, "b", SST_END);
    const sst_compiled_graph *kid = done();
    sst_graph *p = new_graph();
    sst_error err;
    const char *ends[] = {"kid"};
    sst_node_opts o;
    sst_node_opts_init(&o);
    o.ends = ends;
    o.n_ends = 1;
    assert_sst_ok(sst_graph_add_node(p, "x", noop, NULL, &o, &err), &err);
    add(p, "y");
    add_sub(p, "kid", kid);
    link(p, SST_START, "x");
    link(p, SST_START, "y");
    const char *from[] = {"x", "y"};
    assert_sst_ok(sst_graph_add_join(p, from, 2, "kid", &err), &err);
    assert_sst_ok(sst_graph_add_conditional_edges(p, "kid", pick, "__end__", NULL, &err), &err);
    const sst_compiled_graph *cg = done();
    char *m = draw(cg, false, 1);
    assert_has(m, "    x & y --> kid_3aa\n");
    assert_has(m, "    x -. \"goto\" .-> kid_3aa\n");
    assert_has(m, "    kid_3ab -.-> x\n");
    assert_has(m, "    kid_3ab -.-> kid_3aa\n"); /* a router without a path map: every node */
    assert_has(m, "    kid_3ab -.-> __end__\n");
    assert_has(m, "    kid_3aa --> kid_3ab\n");
    sst_free(m);
    char *d = draw(cg, true, 1);
    assert_has(d, "  \"join:0\" -> \"kid:a\";\n");
    assert_has(d, "  \"y\" -> \"join:0\" [arrowhead=none];\n");
    sst_free(d);
}

/* A graph without subgraphs draws the same at every xray level. */
static void test_no_subgraphs_unchanged(void **state) {
    (void)state;
    sst_graph *g = new_graph();
    add(g, "a");
    add(g, "b");
    link(g, SST_START, "a");
    link(g, "a", "b");
    sst_error err;
    assert_sst_ok(sst_graph_add_conditional_edges(g, "b", pick, "a", NULL, &err), &err);
    const sst_compiled_graph *cg = done();
    for (int dot = 0; dot < 2; dot++) {
        char *plain = dot ? sst_compiled_graph_dot(cg, &err) : sst_compiled_graph_mermaid(cg, &err);
        assert_non_null(plain);
        const unsigned levels[] = {0, 1, 5, SST_XRAY_ALL};
        for (size_t i = 0; i < sizeof levels / sizeof levels[0]; i++) {
            char *x = draw(cg, dot, levels[i]);
            assert_string_equal(x, plain);
            sst_free(x);
        }
        sst_free(plain);
    }
    assert_null(sst_compiled_graph_mermaid_xray(NULL, 1, &err));
    assert_int_equal(err.code, SST_EINVAL);
}

/* Each allocation failure gives NULL with SST_ENOMEM and leaks nothing. */
static void test_out_of_memory(void **state) {
    (void)state;
    const sst_compiled_graph *cg = three_levels();
    for (int dot = 0; dot < 2; dot++) {
        char *want = draw(cg, dot, SST_XRAY_ALL);
        long baseline = tu_chaos_live();
        for (long n = 1;; n++) {
            sst_error err;
            sst_error_clear(&err);
            tu_chaos_fail_at(n);
            char *got = dot ? sst_compiled_graph_dot_xray(cg, SST_XRAY_ALL, &err)
                            : sst_compiled_graph_mermaid_xray(cg, SST_XRAY_ALL, &err);
            int fired = tu_chaos_fired();
            tu_chaos_off();
            if (!fired) {
                assert_non_null(got);
                assert_string_equal(got, want);
                sst_free(got);
                assert_true(n > 3); /* the names and prefixes allocate */
                break;
            }
            if (got != NULL || err.code != SST_ENOMEM) {
                print_error("allocation %ld failed but the result was %s (%s)\n", n,
                            got != NULL ? "a text" : "an error", sst_code_name(err.code));
                fail();
            }
            assert_int_equal(tu_chaos_live(), baseline);
        }
        sst_free(want);
    }
}

int main(void) {
    tu_chaos_install();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_xray_zero_is_plain, teardown),
        cmocka_unit_test_teardown(test_two_levels_mermaid, teardown),
        cmocka_unit_test_teardown(test_two_levels_dot, teardown),
        cmocka_unit_test_teardown(test_three_levels, teardown),
        cmocka_unit_test_teardown(test_joins_and_gotos, teardown),
        cmocka_unit_test_teardown(test_no_subgraphs_unchanged, teardown),
        cmocka_unit_test_teardown(test_out_of_memory, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
