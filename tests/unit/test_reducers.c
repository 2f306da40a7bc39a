/* SPDX-License-Identifier: MIT */
/*
 * Reducers and schemas through the C API: the seed example (10 + 5 + 3 = 18),
 * unique conflicts, type errors that name reducer, field and types, custom
 * and whole-state reducers, deterministic field order, and add_messages id
 * assignment (which the golden suite cannot pin because ids are random).
 */
#include <stdio.h>
#include <string.h>

#include "test_util.h"

static sst_value *apply1(const sst_reducer *r, const char *field, const char *cur, const char *upd,
                         sst_error *err) {
    sst_value *c = cur != NULL ? tu_json(cur) : NULL;
    sst_value *u = tu_json(upd);
    const sst_value *ups[] = {u};
    sst_value *out = sst_reducer_apply(r, field, c, ups, 1, err);
    sst_value_unref(u);
    return out;
}

static void test_seed_example_sum(void **state) {
    (void)state;
    /* counter = 10; A adds 5 and B adds 3 in one superstep -> 18, never 13 or 15. */
    sst_error err;
    sst_schema *s = sst_schema_new(&err);
    assert_sst_ok(
        sst_schema_add_field(s, "counter", sst_reducer_sum(), sst_int_new(10, NULL), &err), &err);
    sst_value *st = sst_schema_initial_state(s, &err);
    assert_json_eq(st, "{\"counter\":10}");
    sst_value *a = tu_json("{\"counter\":5}");
    sst_value *b = tu_json("{\"counter\":3}");
    const sst_value *deltas[] = {a, b};
    sst_value *next = sst_schema_apply(s, sst_value_ref(st), deltas, 2, &err);
    assert_non_null(next);
    assert_json_eq(next, "{\"counter\":18}");
    assert_true(sst_is_int(sst_object_get(next, "counter")));
    assert_json_eq(st, "{\"counter\":10}"); /* the old state is untouched */
    sst_value_unref(next);
    sst_value_unref(st);
    sst_value_unref(a);
    sst_value_unref(b);
    sst_schema_free(s);
}

static void test_replace_last_in_order_wins(void **state) {
    (void)state;
    sst_schema *s = sst_schema_new(NULL);
    sst_value *a = tu_json("{\"x\":\"from a\",\"y\":1}");
    sst_value *b = tu_json("{\"z\":true,\"x\":\"from b\"}");
    const sst_value *deltas[] = {a, b};
    sst_value *st = sst_schema_apply(s, tu_json("{\"w\":0}"), deltas, 2, NULL);
    /* Undeclared fields use replace; new fields in order of first write. */
    assert_json_text(st, SST_JSON_COMPACT, "{\"w\":0,\"x\":\"from b\",\"y\":1,\"z\":true}");
    sst_value_unref(st);
    sst_value_unref(a);
    sst_value_unref(b);
    sst_schema_free(s);
}

static void test_unique_conflict(void **state) {
    (void)state;
    sst_error err;
    sst_schema *s = sst_schema_new(&err);
    assert_sst_ok(sst_schema_add_field(s, "plan", sst_reducer_unique(), NULL, &err), &err);
    sst_value *a = tu_json("{\"plan\":\"draft\"}");
    sst_value *b = tu_json("{\"plan\":{\"steps\":[1,2]}}");
    const sst_value *deltas[] = {a, b};
    sst_value *st = tu_json("{\"plan\":null}");
    assert_null(sst_schema_apply(s, sst_value_ref(st), deltas, 2, &err));
    assert_int_equal(err.code, SST_ECONFLICT);
    assert_string_equal(err.msg,
                        "reducer 'unique' on field 'plan': 2 writes in one superstep (\"draft\" "
                        "and {\"steps\":[1,2]}); declare a reducer such as 'append' or 'sum' to "
                        "combine them");
    assert_json_eq(st, "{\"plan\":null}");
    /* One write per superstep is fine. */
    sst_value *next = sst_schema_apply(s, sst_value_ref(st), deltas, 1, &err);
    assert_json_eq(next, "{\"plan\":\"draft\"}");
    sst_value_unref(next);
    sst_value_unref(st);
    sst_value_unref(a);
    sst_value_unref(b);
    sst_schema_free(s);
}

static void test_type_errors_name_everything(void **state) {
    (void)state;
    sst_error err;
    struct {
        const sst_reducer *r;
        const char *field, *cur, *upd, *code, *msg;
    } cases[] = {
        {sst_reducer_sum(), "counter", "1", "\"x\"", "SST_ETYPE",
         "reducer 'sum' on field 'counter': expected number, got string"},
        {sst_reducer_sum(), "counter", "[1]", "2", "SST_ETYPE",
         "reducer 'sum' on field 'counter': current value: expected number, got array"},
        {sst_reducer_sum(), "n", "9223372036854775807", "1", "SST_ERANGE",
         "reducer 'sum' on field 'n': integer overflow adding 1 to 9223372036854775807"},
        {sst_reducer_merge(), "ctx", "{}", "[1]", "SST_ETYPE",
         "reducer 'merge' on field 'ctx': expected object, got array"},
        {sst_reducer_merge(), "ctx", "3", "{}", "SST_ETYPE",
         "reducer 'merge' on field 'ctx': current value: expected object, got number"},
        {sst_reducer_deep_merge(), "cfg", "{}", "true", "SST_ETYPE",
         "reducer 'deep_merge' on field 'cfg': expected object, got boolean"},
        {sst_reducer_add_messages(), "messages", "{}", "[]", "SST_ETYPE",
         "reducer 'add_messages' on field 'messages': current value: expected array, got object"},
        {sst_reducer_add_messages(), "messages", "[]", "42", "SST_ETYPE",
         "reducer 'add_messages' on field 'messages': expected a message or a list of messages, "
         "got number"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        sst_value *out = apply1(cases[i].r, cases[i].field, cases[i].cur, cases[i].upd, &err);
        if (out != NULL || strcmp(sst_code_name(err.code), cases[i].code) != 0 ||
            strcmp(err.msg, cases[i].msg) != 0) {
            print_error("case %zu:\n  expected %s %s\n  actual   %s %s\n", i, cases[i].code,
                        cases[i].msg, sst_code_name(err.code), out ? "(success)" : err.msg);
            fail();
        }
    }
}

static void test_sum_types(void **state) {
    (void)state;
    sst_value *v = apply1(sst_reducer_sum(), "n", "1", "2", NULL);
    assert_true(sst_is_int(v) && sst_int_value(v) == 3);
    sst_value_unref(v);
    v = apply1(sst_reducer_sum(), "n", "1", "0.5", NULL);
    assert_true(sst_is_double(v) && sst_double_value(v) == 1.5);
    sst_value_unref(v);
    v = apply1(sst_reducer_sum(), "n", NULL, "7", NULL); /* absent counts as 0 */
    assert_int_equal(sst_int_value(v), 7);
    sst_value_unref(v);
}

/* A custom reducer: keeps the maximum. */
static sst_value *max_fn(void *ud, const char *field, sst_value *cur, const sst_value *upd,
                         sst_error *err) {
    int *calls = ud;
    (*calls)++;
    if (!sst_is_number(upd)) {
        sst_value_unref(cur);
        sst_error_clear(err);
        if (err != NULL) {
            snprintf(err->msg, sizeof err->msg, "max on '%s': not a number", field);
            err->code = SST_ETYPE;
        }
        return NULL;
    }
    if (cur != NULL && sst_number_value(cur) >= sst_number_value(upd)) {
        return cur;
    }
    sst_value_unref(cur);
    return sst_value_ref(upd);
}

static sst_value *silent_fail_fn(void *ud, const char *field, sst_value *cur, const sst_value *upd,
                                 sst_error *err) {
    (void)ud, (void)field, (void)upd, (void)err;
    sst_value_unref(cur);
    return NULL;
}

static void test_custom_reducer(void **state) {
    (void)state;
    int calls = 0;
    sst_error err;
    sst_reducer *r = sst_reducer_new("max", max_fn, &calls, &err);
    assert_non_null(r);
    assert_string_equal(sst_reducer_name(r), "max");
    sst_schema *s = sst_schema_new(&err);
    assert_sst_ok(sst_schema_add_field(s, "best", r, sst_int_new(0, NULL), &err), &err);
    sst_reducer_free(r); /* the schema keeps its own copy */
    sst_value *a = tu_json("{\"best\":4}");
    sst_value *b = tu_json("{\"best\":9}");
    sst_value *c = tu_json("{\"best\":2}");
    const sst_value *deltas[] = {a, b, c};
    sst_value *st = sst_schema_apply(s, sst_schema_initial_state(s, NULL), deltas, 3, &err);
    assert_json_eq(st, "{\"best\":9}");
    assert_int_equal(calls, 3);
    assert_string_equal(sst_reducer_name(sst_schema_field_reducer(s, "best")), "max");
    sst_value_unref(st);
    /* A failing custom reducer that fills no error still gets a clear one. */
    sst_reducer *bad = sst_reducer_new("broken", silent_fail_fn, NULL, &err);
    sst_value *out = apply1(bad, "f", "1", "2", &err);
    assert_null(out);
    assert_int_equal(err.code, SST_EREDUCER);
    assert_string_equal(err.msg, "reducer 'broken' on field 'f' failed");
    sst_reducer_free(bad);
    assert_null(sst_reducer_new(NULL, max_fn, NULL, &err));
    assert_int_equal(err.code, SST_EINVAL);
    sst_value_unref(a);
    sst_value_unref(b);
    sst_value_unref(c);
    sst_schema_free(s);
}

/* A whole-state reducer: counts deltas into "n" and ignores field reducers. */
static sst_value *count_deltas(void *ud, sst_value *state, const sst_value *const *deltas, size_t n,
                               sst_error *err) {
    (void)ud, (void)deltas;
    int64_t prev = sst_int_value(sst_object_get(state, "n"));
    return sst_object_set_take(state, "n", sst_int_new(prev + (int64_t)n, NULL), err);
}

static void test_state_reducer_replaces_field_reducers(void **state) {
    (void)state;
    sst_error err;
    sst_schema *s = sst_schema_new(&err);
    assert_sst_ok(sst_schema_add_field(s, "n", sst_reducer_sum(), NULL, &err), &err);
    assert_sst_ok(sst_schema_set_state_reducer(s, count_deltas, NULL, &err), &err);
    sst_value *a = tu_json("{\"n\":100}");
    const sst_value *deltas[] = {a, a, a};
    sst_value *st = sst_schema_apply(s, NULL, deltas, 3, &err);
    assert_json_eq(st, "{\"n\":3}");
    sst_value_unref(st);
    sst_value_unref(a);
    sst_schema_free(s);
}

static void test_schema_errors(void **state) {
    (void)state;
    sst_error err;
    sst_schema *s = sst_schema_new(&err);
    assert_sst_ok(sst_schema_add_field(s, "x", sst_reducer_sum(), NULL, &err), &err);
    assert_int_equal(sst_schema_add_field(s, "x", sst_reducer_append(), sst_null(), &err),
                     SST_EINVAL);
    assert_string_equal(err.msg, "schema: field 'x' is declared twice");
    assert_int_equal(sst_schema_add_field(s, "y", NULL, NULL, &err), SST_EINVAL);
    assert_int_equal(sst_schema_field_count(s), 1);
    assert_string_equal(sst_schema_field_name(s, 0), "x");
    sst_value *bad = tu_json("[1]");
    const sst_value *deltas[] = {bad};
    assert_null(sst_schema_apply(s, NULL, deltas, 1, &err));
    assert_int_equal(err.code, SST_ETYPE);
    assert_string_equal(err.msg, "state update 0 must be an object, got array");
    assert_null(sst_schema_prepare_delta(s, bad, &err)); /* takes bad */
    assert_string_equal(err.msg, "state update must be an object, got array");
    /* A bad default for add_messages is reported when declared. */
    assert_int_equal(
        sst_schema_add_field(s, "messages", sst_reducer_add_messages(), tu_json("[7]"), &err),
        SST_ETYPE);
    assert_string_equal(err.msg,
                        "reducer 'add_messages' on field 'messages': message 0: expected "
                        "a message object, a string or a [role, content] pair, got number");
    sst_schema_free(s);
    assert_ptr_equal(sst_reducer_builtin("deep_merge"), sst_reducer_deep_merge());
    assert_null(sst_reducer_builtin("nope"));
}

static void test_prepare_assigns_ids_once(void **state) {
    (void)state;
    sst_error err;
    sst_schema *s = sst_schema_new(&err);
    assert_sst_ok(
        sst_schema_add_field(s, "messages", sst_reducer_add_messages(), sst_array_empty(), &err),
        &err);
    sst_value *delta = sst_schema_prepare_delta(
        s,
        tu_json("{\"messages\":[\"hi\",[\"ai\",\"hello\"],{\"role\":\"human\",\"content\":\"x\"}],"
                "\"other\":1}"),
        &err);
    assert_non_null(delta);
    const sst_value *msgs = sst_object_get(delta, "messages");
    assert_int_equal(sst_array_len(msgs), 3);
    for (size_t i = 0; i < 3; i++) {
        assert_true(tu_is_uuid4(sst_object_get(sst_array_get(msgs, i), "id")));
        /* The id comes first in each normalised message. */
        assert_string_equal(sst_string_cstr(sst_object_key_at(sst_array_get(msgs, i), 0)), "id");
    }
    assert_string_equal(sst_string_cstr(sst_object_get(sst_array_get(msgs, 1), "role")),
                        "assistant");
    assert_string_equal(sst_string_cstr(sst_object_get(sst_array_get(msgs, 2), "role")), "user");
    /* Replaying the prepared delta is deterministic: same ids, nothing new. */
    const sst_value *deltas[] = {delta};
    sst_value *st1 = sst_schema_apply(s, sst_schema_initial_state(s, NULL), deltas, 1, &err);
    sst_value *st2 = sst_schema_apply(s, sst_schema_initial_state(s, NULL), deltas, 1, &err);
    assert_true(sst_value_equal(st1, st2));
    assert_true(sst_value_equal(sst_object_get(st1, "messages"), msgs));
    /* Preparing twice changes nothing (already normal values are shared). */
    sst_value *again = sst_schema_prepare_delta(s, sst_value_ref(delta), &err);
    assert_ptr_equal(sst_object_get(again, "messages"), msgs);
    sst_value_unref(again);
    sst_value_unref(st1);
    sst_value_unref(st2);
    sst_value_unref(delta);
    sst_schema_free(s);
}

static void test_add_messages_assigns_in_reducer_too(void **state) {
    (void)state;
    sst_value *v = apply1(sst_reducer_add_messages(), "messages", "[]", "\"hello\"", NULL);
    assert_int_equal(sst_array_len(v), 1);
    assert_true(tu_is_uuid4(sst_object_get(sst_array_get(v, 0), "id")));
    sst_value_unref(v);
}

static void test_append_in_place_when_unique(void **state) {
    (void)state;
    /* A state held only by the caller is updated without copying the list. */
    sst_schema *s = sst_schema_new(NULL);
    assert_sst_ok(sst_schema_add_field(s, "log", sst_reducer_append(), sst_array_empty(), NULL),
                  NULL);
    sst_value *st = sst_schema_initial_state(s, NULL);
    sst_value *d = tu_json("{\"log\":[1]}");
    const sst_value *deltas[] = {d};
    const sst_value *list = NULL;
    for (int i = 0; i < 100; i++) {
        st = sst_schema_apply(s, st, deltas, 1, NULL);
        if (i == 50) {
            list = sst_object_get(st, "log");
        }
    }
    assert_ptr_equal(sst_object_get(st, "log"), list);
    assert_int_equal(sst_array_len(sst_object_get(st, "log")), 100);
    sst_value_unref(st);
    sst_value_unref(d);
    sst_schema_free(s);
}

static sst_value *am(sst_value *cur, const char *update) {
    sst_value *u = tu_json(update);
    const sst_value *ups[] = {u};
    sst_error err;
    sst_value *out = sst_reducer_apply(sst_reducer_add_messages(), "messages", cur, ups, 1, &err);
    if (out == NULL) {
        print_error("%s\n", err.msg);
        fail();
    }
    sst_value_unref(u);
    return out;
}

static void test_add_messages_index_across_branches(void **state) {
    (void)state;
    /* A history long enough to carry an index, then two branches from it. */
    sst_value *x = sst_array_empty();
    for (int i = 0; i < 100; i++) {
        char m[80];
        snprintf(m, sizeof m, "[{\"id\":\"h%d\",\"role\":\"user\",\"content\":\"%d\"}]", i, i);
        x = am(x, m);
    }
    sst_value *y = am(sst_value_ref(x), "[{\"id\":\"a\",\"role\":\"user\",\"content\":\"a\"},"
                                        "{\"id\":\"q\",\"role\":\"user\",\"content\":\"y\"}]");
    sst_value *z = am(sst_value_ref(x), "[{\"id\":\"q\",\"role\":\"user\",\"content\":\"z\"}]");
    assert_int_equal(sst_array_len(y), 102);
    assert_int_equal(sst_array_len(z), 101);
    /* q sits at different positions in the two branches: replacing it works in both. */
    y = am(y, "[{\"id\":\"q\",\"role\":\"user\",\"content\":\"y2\"}]");
    z = am(z, "[{\"id\":\"q\",\"role\":\"user\",\"content\":\"z2\"}]");
    assert_int_equal(sst_array_len(y), 102);
    assert_int_equal(sst_array_len(z), 101);
    assert_string_equal(sst_string_cstr(sst_object_get(sst_array_get(y, 101), "content")), "y2");
    assert_string_equal(sst_string_cstr(sst_object_get(sst_array_get(z, 100), "content")), "z2");
    /* The original is untouched; an id only a branch has is new to it. */
    assert_int_equal(sst_array_len(x), 100);
    x = am(x, "[{\"id\":\"a\",\"role\":\"user\",\"content\":\"x\"}]");
    assert_int_equal(sst_array_len(x), 101);
    /* Replacing an old message by id, and removing one, still index-driven. */
    x = am(x, "[{\"id\":\"h5\",\"role\":\"user\",\"content\":\"five\"},"
              "{\"type\":\"remove\",\"id\":\"h6\"}]");
    assert_int_equal(sst_array_len(x), 100);
    assert_string_equal(sst_string_cstr(sst_object_get(sst_array_get(x, 5), "content")), "five");
    assert_string_equal(sst_string_cstr(sst_object_get(sst_array_get(x, 6), "id")), "h7");
    x = am(x, "[{\"id\":\"h7\",\"role\":\"user\",\"content\":\"seven\"}]");
    assert_string_equal(sst_string_cstr(sst_object_get(sst_array_get(x, 6), "content")), "seven");
    sst_value_unref(x);
    sst_value_unref(y);
    sst_value_unref(z);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seed_example_sum),
        cmocka_unit_test(test_replace_last_in_order_wins),
        cmocka_unit_test(test_unique_conflict),
        cmocka_unit_test(test_type_errors_name_everything),
        cmocka_unit_test(test_sum_types),
        cmocka_unit_test(test_custom_reducer),
        cmocka_unit_test(test_state_reducer_replaces_field_reducers),
        cmocka_unit_test(test_schema_errors),
        cmocka_unit_test(test_prepare_assigns_ids_once),
        cmocka_unit_test(test_add_messages_assigns_in_reducer_too),
        cmocka_unit_test(test_append_in_place_when_unique),
        cmocka_unit_test(test_add_messages_index_across_branches),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
