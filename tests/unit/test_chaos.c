/* SPDX-License-Identifier: MIT */
/*
 * Allocation-failure tests (STYLE rule 40): for each operation, fail the
 * n-th allocation for n = 1, 2, ... until the operation succeeds. Every
 * failing run must report SST_ENOMEM, leak nothing, and leave the inputs the
 * caller still references unchanged.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

typedef sst_value *(*op_fn)(const sst_value *input, sst_error *err);

static const char *k_doc =
    "{\"messages\":[{\"id\":\"a\",\"role\":\"user\",\"content\":\"h\\u00e9llo \\\"q\\\"\"},"
    "{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":\"c1\"}]}],"
    "\"k0\":0,\"k1\":1,\"k2\":2,\"k3\":3,\"k4\":4,\"k5\":5,\"k6\":6,\"k7\":7,\"k8\":8,\"k9\":9,"
    "\"k0\":10,\"nums\":[1,2.5,-3e10,9223372036854775807,1e-300,0.1,"
    "1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,32,33,"
    "34,35],\"s\":\"\\ud83d\\ude00 and a long enough string to need its own block\"}";

static sst_value *op_parse(const sst_value *input, sst_error *err) {
    (void)input;
    return sst_json_read(k_doc, strlen(k_doc), NULL, err);
}

/* Over 64 KiB: the reader carves values from arena chunks (arena.c). */
static char *g_big_doc;
static size_t g_big_len;

static sst_value *op_parse_big(const sst_value *input, sst_error *err) {
    (void)input;
    return sst_json_read(g_big_doc, g_big_len, NULL, err);
}

static sst_value *op_write(const sst_value *input, sst_error *err) {
    static const unsigned styles[] = {SST_JSON_COMPACT, SST_JSON_PRETTY, SST_JSON_CANONICAL};
    for (size_t i = 0; i < 3; i++) {
        char *text = sst_json_write(input, styles[i], NULL, err);
        if (text == NULL) {
            return NULL;
        }
        sst_free(text);
    }
    return sst_null();
}

static sst_value *op_array_updates(const sst_value *input, sst_error *err) {
    sst_value *a = sst_value_ref(sst_object_get(input, "nums")); /* shared */
    for (int i = 0; i < 40 && a != NULL; i++) {
        sst_value *n = sst_int_new(100000 + i, err); /* not an immortal small int */
        if (n == NULL) {
            sst_value_unref(a);
            return NULL;
        }
        a = sst_array_push_take(a, n, err);
    }
    if (a != NULL) {
        a = sst_array_set_take(a, 3, sst_null(), err);
    }
    if (a != NULL) {
        a = sst_array_concat_take(a, sst_object_get(input, "nums"), err);
    }
    return a;
}

static sst_value *op_object_updates(const sst_value *input, sst_error *err) {
    sst_value *o = sst_value_ref(input); /* shared: copy on write */
    o = sst_object_set_take(o, "new", sst_bool(true), err);
    if (o != NULL) {
        o = sst_object_set_take(o, "k3", sst_null(), err);
    }
    if (o != NULL) {
        o = sst_object_remove_take(o, "k5", err);
    }
    return o;
}

static sst_value *op_strings(const sst_value *input, sst_error *err) {
    (void)input;
    sst_value *s = sst_string_new("a UTF-8 string: \xC3\xA9\xE2\x82\xAC", err);
    if (s == NULL) {
        return NULL;
    }
    sst_value *d = sst_double_new(1.5, err);
    if (d == NULL) {
        sst_value_unref(s);
        return NULL;
    }
    sst_value *a = sst_array_push_take(sst_array_empty(), s, err);
    return a != NULL ? sst_array_push_take(a, d, err) : (sst_value_unref(d), NULL);
}

static sst_value *op_schema(const sst_value *input, sst_error *err) {
    sst_schema *s = sst_schema_new(err);
    if (s == NULL) {
        return NULL;
    }
    sst_value *out = NULL;
    if (sst_schema_add_field(s, "messages", sst_reducer_add_messages(), NULL, err) != SST_OK ||
        sst_schema_add_field(s, "nums", sst_reducer_append(), NULL, err) != SST_OK ||
        sst_schema_add_field(s, "k1", sst_reducer_sum(), NULL, err) != SST_OK ||
        sst_schema_add_field(s, "ctx", sst_reducer_deep_merge(), NULL, err) != SST_OK) {
        goto done;
    }
    const char *d1 = "{\"messages\":[\"hi\",[\"ai\",\"yo\"],{\"id\":\"a\",\"role\":\"user\","
                     "\"content\":\"edit\"},{\"type\":\"remove\",\"id\":\"a\"}],\"k1\":5,"
                     "\"ctx\":{\"a\":{\"b\":1}}}";
    const char *d2 = "{\"nums\":[7,8],\"k1\":0.5,\"ctx\":{\"a\":{\"c\":2}},\"other\":[1]}";
    sst_value *delta1 = sst_json_parse(d1, err);
    if (delta1 == NULL) {
        goto done;
    }
    delta1 = sst_schema_prepare_delta(s, delta1, err);
    if (delta1 == NULL) {
        goto done;
    }
    sst_value *delta2 = sst_json_parse(d2, err);
    if (delta2 == NULL) {
        sst_value_unref(delta1);
        goto done;
    }
    const sst_value *deltas[] = {delta1, delta2};
    out = sst_schema_apply(s, sst_value_ref(input), deltas, 2, err);
    sst_value_unref(delta1);
    sst_value_unref(delta2);
done:
    sst_schema_free(s);
    return out;
}

/* ---- a whole Pregel run: split -> 3 Sends -> work -> join ---- */

static sst_code chaos_split(sst_task *t, void *ud) {
    (void)ud;
    sst_task_vote_halt(t);
    for (int i = 0; i < 3; i++) {
        sst_error err;
        sst_value *x = sst_int_new(5000 + i, &err);
        if (x == NULL) {
            return err.code;
        }
        sst_code rc = sst_task_send(t, "work", x, &err);
        if (rc != SST_OK) {
            return rc;
        }
    }
    return SST_OK;
}

static sst_code chaos_work(sst_task *t, void *ud) {
    (void)ud;
    sst_task_vote_halt(t);
    sst_error err;
    sst_value *x = sst_int_new(2 * sst_int_value(sst_task_input(t)), &err);
    sst_value *list = x != NULL ? sst_array_push_take(sst_array_empty(), x, &err) : NULL;
    if (list == NULL) {
        return err.code;
    }
    sst_code rc = sst_task_write(t, "items", list, &err);
    if (rc == SST_OK) {
        rc = sst_task_message(t, "join", sst_int_new(1, NULL), &err);
    }
    return rc;
}

static sst_code chaos_join(sst_task *t, void *ud) {
    (void)ud;
    sst_task_vote_halt(t);
    sst_error err;
    sst_value *n = sst_int_new((int64_t)sst_array_len(sst_task_inbox(t)) + 100000, &err);
    return n != NULL ? sst_task_write(t, "joined", n, &err) : err.code;
}

static sst_value *op_pregel(const sst_value *input, sst_error *err) {
    (void)input;
    sst_value *out = NULL;
    sst_schema *s = sst_schema_new(err);
    sst_pregel_builder *b = NULL;
    sst_pregel *p = NULL;
    sst_engine *e = NULL;
    sst_run_result *r = NULL;
    if (s == NULL || sst_schema_add_field(s, "items", sst_reducer_append(), NULL, err) != SST_OK) {
        goto done;
    }
    b = sst_pregel_builder_new(s, err);
    if (b == NULL ||
        sst_pregel_builder_add_vertex(b, "split", chaos_split, NULL, NULL, err) != SST_OK ||
        sst_pregel_builder_add_vertex(b, "work", chaos_work, NULL, NULL, err) != SST_OK ||
        sst_pregel_builder_add_vertex(b, "join", chaos_join, NULL, NULL, err) != SST_OK) {
        goto done;
    }
    p = sst_pregel_builder_build(b, err);
    sst_engine_opts eo;
    sst_engine_opts_init(&eo);
    eo.workers = 2;
    e = p != NULL ? sst_engine_new(&eo, err) : NULL;
    if (e == NULL) {
        goto done;
    }
    sst_run_opts ro;
    sst_run_opts_init(&ro);
    const char *start[] = {"split"};
    ro.start = start;
    ro.n_start = 1;
    r = sst_engine_run(e, p, &ro, err);
    if (r == NULL) {
        goto done;
    }
    if (sst_run_result_status(r) != SST_RUN_COMPLETED) {
        *err = *sst_run_result_error(r);
        goto done;
    }
    out = sst_value_ref(sst_run_result_state(r));
done:
    sst_run_result_free(r);
    sst_engine_free(e);
    sst_pregel_free(p);
    sst_pregel_builder_free(b);
    sst_schema_free(s);
    return out;
}

/* ---- a whole graph: START -> split -Send x3-> work -> (join work, side) -> end ---- */

static sst_code g_split(sst_node_ctx *ctx, void *ud) {
    (void)ud;
    sst_error err;
    sst_value *x = sst_int_new(100000, &err);
    return x != NULL ? sst_node_update(ctx, "base", x, &err) : err.code;
}

static sst_value *g_fan(const sst_value *state, void *ud, sst_error *err) {
    (void)ud;
    sst_value *list = sst_array_empty();
    for (int i = 0; i < 3 && list != NULL; i++) {
        sst_value *x = sst_int_new(sst_int_value(sst_object_get(state, "base")) + i, err);
        sst_value *send = x != NULL ? sst_send_new("work", x, err) : NULL;
        list = send != NULL ? sst_array_push_take(list, send, err) : (sst_value_unref(list), NULL);
    }
    return list;
}

static sst_code g_work(sst_node_ctx *ctx, void *ud) {
    (void)ud;
    sst_error err;
    sst_value *x = sst_int_new(sst_int_value(sst_node_input(ctx)) * 2, &err);
    sst_value *l = x != NULL ? sst_array_push_take(sst_array_empty(), x, &err) : NULL;
    return l != NULL ? sst_node_update(ctx, "items", l, &err) : err.code;
}

static sst_code g_side(sst_node_ctx *ctx, void *ud) {
    (void)ud;
    sst_error err;
    sst_value *m = sst_string_new("a side message with some length", &err);
    return m != NULL ? sst_node_update(ctx, "messages", m, &err) : err.code;
}

static sst_code g_end(sst_node_ctx *ctx, void *ud) {
    (void)ud;
    sst_error err;
    sst_value *x = sst_int_new(
        (int64_t)sst_array_len(sst_object_get(sst_node_state(ctx), "items")) + 5000, &err);
    return x != NULL ? sst_node_update(ctx, "count", x, &err) : err.code;
}

static sst_value *op_graph(const sst_value *input, sst_error *err) {
    (void)input;
    sst_value *out = NULL;
    sst_compiled_graph *cg = NULL;
    sst_graph_result *r = NULL;
    sst_graph *g = sst_graph_new(err);
    const char *join_from[] = {"work", "side"};
    if (g == NULL || sst_graph_add_field(g, "items", sst_reducer_append(), NULL, err) != SST_OK ||
        sst_graph_add_field(g, "messages", sst_reducer_add_messages(), NULL, err) != SST_OK ||
        sst_graph_add_node(g, "split", g_split, NULL, NULL, err) != SST_OK ||
        sst_graph_add_node(g, "work", g_work, NULL, NULL, err) != SST_OK ||
        sst_graph_add_node(g, "side", g_side, NULL, NULL, err) != SST_OK ||
        sst_graph_add_node(g, "end", g_end, NULL, NULL, err) != SST_OK ||
        sst_graph_add_edge(g, SST_START, "split", err) != SST_OK ||
        sst_graph_add_edge(g, SST_START, "side", err) != SST_OK ||
        sst_graph_add_conditional_edges(g, "split", g_fan, NULL, NULL, err) != SST_OK ||
        sst_graph_add_join(g, join_from, 2, "end", err) != SST_OK ||
        sst_graph_add_edge(g, "end", SST_END, err) != SST_OK) {
        goto done;
    }
    cg = sst_graph_compile(g, NULL, err);
    if (cg == NULL) {
        goto done;
    }
    r = sst_graph_invoke(cg, NULL, NULL, NULL, err);
    if (r == NULL) {
        goto done;
    }
    if (sst_graph_result_status(r) != SST_RUN_COMPLETED) {
        *err = *sst_graph_result_error(r);
        goto done;
    }
    out = sst_value_ref(sst_graph_result_state(r));
done:
    sst_graph_result_free(r);
    sst_compiled_graph_free(cg);
    sst_graph_free(g);
    return out;
}

static void run_chaos(const char *name, op_fn op, const sst_value *input) {
    char *before = sst_json_write(input, SST_JSON_COMPACT, NULL, NULL);
    long baseline = tu_chaos_live();
    for (long n = 1;; n++) {
        sst_error err;
        sst_error_clear(&err);
        tu_chaos_fail_at(n);
        sst_value *out = op(input, &err);
        int fired = tu_chaos_fired();
        tu_chaos_off();
        if (!fired) {
            if (out == NULL) {
                print_error("%s: failed without an allocation failure: %s\n", name, err.msg);
                fail();
            }
            sst_value_unref(out);
            print_message("%s: %ld allocation points, all clean\n", name, n - 1);
            break;
        }
        if (out != NULL || err.code != SST_ENOMEM) {
            print_error("%s: allocation %ld failed but the result was %s (%s: %s)\n", name, n,
                        out != NULL ? "a value" : "an error", sst_code_name(err.code), err.msg);
            fail();
        }
        if (tu_chaos_live() != baseline) {
            print_error("%s: allocation %ld failed and %ld blocks leaked\n", name, n,
                        tu_chaos_live() - baseline);
            fail();
        }
        char *after = sst_json_write(input, SST_JSON_COMPACT, NULL, NULL);
        assert_string_equal(before, after);
        sst_free(after);
    }
    assert_int_equal(tu_chaos_live(), baseline + 0);
    sst_free(before);
}

static sst_value *g_input;

static int setup(void **state) {
    (void)state;
    g_input = sst_json_parse(k_doc, NULL);
    /* 600 messages with long contents and big numbers: about 100 KiB. */
    size_t cap = 200000, k = 0;
    g_big_doc = malloc(cap);
    k += (size_t)snprintf(g_big_doc + k, cap - k, "{\"messages\":[");
    for (int i = 0; i < 600; i++) {
        k += (size_t)snprintf(g_big_doc + k, cap - k,
                              "%s{\"id\":\"m%d\",\"role\":\"%s\",\"n\":%d,\"x\":%d.5,"
                              "\"content\":\"message %d with \\\"escapes\\\" and words "
                              "enough to be long: \\u00e9\\n the end\"}",
                              i ? "," : "", i, i % 2 ? "assistant" : "user", i * 1001, i, i);
    }
    k += (size_t)snprintf(g_big_doc + k, cap - k, "]}");
    g_big_len = k;
    return g_input == NULL || g_big_len < 70000;
}

static int teardown(void **state) {
    (void)state;
    sst_value_unref(g_input);
    free(g_big_doc);
    return 0;
}

static void test_parse(void **state) {
    (void)state;
    run_chaos("parse", op_parse, g_input);
}
static void test_parse_big(void **state) {
    (void)state;
    run_chaos("parse (arena)", op_parse_big, g_input);
}

static void test_arena_partial_retention(void **state) {
    (void)state;
    long before = tu_chaos_live();
    sst_value *doc = sst_json_read(g_big_doc, g_big_len, NULL, NULL);
    assert_non_null(doc);
    /* Keep one message alive past the document: its chunk must stay valid. */
    const sst_value *msgs = sst_object_get(doc, "messages");
    sst_value *one = sst_value_ref(sst_array_get(msgs, 123));
    sst_value_unref(doc);
    assert_string_equal(sst_string_cstr(sst_object_get(one, "role")), "assistant");
    assert_int_equal(sst_int_value(sst_object_get(one, "n")), 123123);
    assert_true(tu_chaos_live() > before);
    sst_value_unref(one);
    assert_int_equal(tu_chaos_live(), before); /* the last value freed its chunk */
}

static void test_write(void **state) {
    (void)state;
    run_chaos("write", op_write, g_input);
}
static void test_arrays(void **state) {
    (void)state;
    run_chaos("arrays", op_array_updates, g_input);
}
static void test_objects(void **state) {
    (void)state;
    run_chaos("objects", op_object_updates, g_input);
}
static void test_strings(void **state) {
    (void)state;
    run_chaos("strings", op_strings, g_input);
}
static void test_schema(void **state) {
    (void)state;
    run_chaos("schema", op_schema, g_input);
}

static void test_pregel_run(void **state) {
    (void)state;
    run_chaos("pregel run", op_pregel, g_input);
}

static void test_graph_run(void **state) {
    (void)state;
    sst_error err;
    sst_value *once = op_graph(NULL, &err);
    assert_non_null(once);
    assert_int_equal(sst_int_value(sst_object_get(once, "count")), 5003);
    sst_value_unref(once);
    run_chaos("graph run", op_graph, g_input);
}

static void test_no_leaks_overall(void **state) {
    (void)state;
    long before = tu_chaos_live();
    sst_value *v = sst_json_parse(k_doc, NULL);
    assert_true(tu_chaos_live() > before);
    sst_value_unref(v);
    assert_int_equal(tu_chaos_live(), before);
}

int main(void) {
    tu_chaos_install();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_parse_big),
        cmocka_unit_test(test_arena_partial_retention),
        cmocka_unit_test(test_write),
        cmocka_unit_test(test_arrays),
        cmocka_unit_test(test_objects),
        cmocka_unit_test(test_strings),
        cmocka_unit_test(test_schema),
        cmocka_unit_test(test_pregel_run),
        cmocka_unit_test(test_graph_run),
        cmocka_unit_test(test_no_leaks_overall),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
