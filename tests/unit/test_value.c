/* SPDX-License-Identifier: MIT */
/* Scalars, strings, objects, reference counting, equality and hashing. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "test_util.h"

static void test_immortals(void **state) {
    (void)state;
    assert_true(sst_is_null(sst_null()));
    assert_true(sst_bool_value(sst_bool(true)));
    assert_false(sst_bool_value(sst_bool(false)));
    assert_ptr_equal(sst_bool(true), sst_bool(true));
    assert_int_equal(sst_string_len(sst_string_empty()), 0);
    assert_string_equal(sst_string_cstr(sst_string_empty()), "");
    assert_int_equal(sst_array_len(sst_array_empty()), 0);
    assert_int_equal(sst_object_len(sst_object_empty()), 0);
    /* ref/unref are no-ops on immortals, even many times over. */
    for (int i = 0; i < 1000; i++) {
        sst_value_unref(sst_null());
        sst_value_unref(sst_array_empty());
    }
    assert_ptr_equal(sst_value_ref(sst_null()), sst_null());
    assert_false(sst_value_is_unique(sst_null()));
    sst_value_unref(NULL);
    assert_null(sst_value_ref(NULL));
}

static void test_numbers(void **state) {
    (void)state;
    sst_error err;
    sst_value *i = sst_int_new(INT64_MIN, &err);
    assert_true(sst_is_int(i) && sst_is_number(i) && !sst_is_double(i));
    assert_true(sst_int_value(i) == INT64_MIN);
    assert_true(sst_value_is_unique(i));
    sst_value *d = sst_double_new(0.5, &err);
    assert_true(sst_is_double(d));
    assert_true(sst_double_value(d) == 0.5);
    assert_true(sst_int_value(d) == 0); /* no silent conversion */
    assert_true(sst_number_value(i) == (double)INT64_MIN);
    assert_null(sst_double_new(NAN, &err));
    assert_int_equal(err.code, SST_ERANGE);
    assert_string_equal(err.msg, "NaN is not a JSON number");
    assert_null(sst_double_new(-INFINITY, &err));
    assert_string_equal(err.msg, "infinity is not a JSON number");
    assert_string_equal(sst_type_name(sst_value_type(i)), "integer");
    assert_string_equal(sst_type_name(sst_value_type(d)), "double");
    sst_value_unref(i);
    sst_value_unref(d);
}

static void test_strings(void **state) {
    (void)state;
    sst_error err;
    sst_value *s = sst_string_new("h\xC3\xA9llo \xF0\x9F\x98\x80", &err);
    assert_non_null(s);
    assert_int_equal(sst_string_len(s), 11);
    sst_value_unref(s);
    /* NUL inside is fine with an explicit length. */
    s = sst_string_newn("a\0b", 3, &err);
    assert_int_equal(sst_string_len(s), 3);
    assert_memory_equal(sst_string_cstr(s), "a\0b", 4);
    sst_value_unref(s);
    struct {
        const char *text;
        size_t bad;
    } invalid[] = {
        {"ab\xC3", 2},           /* truncated */
        {"\xC0\xAF", 0},         /* overlong '/' */
        {"x\xED\xA0\x80", 1},    /* UTF-16 surrogate */
        {"\xF4\x90\x80\x80", 0}, /* above U+10FFFF */
        {"ok\x80", 2},           /* stray continuation */
        {"\xE0\x80\xAF", 0},     /* overlong 3-byte */
        {"abcdefgh\xFF", 8},     /* after the 8-byte fast path */
    };
    for (size_t k = 0; k < sizeof invalid / sizeof invalid[0]; k++) {
        assert_null(sst_string_new(invalid[k].text, &err));
        assert_int_equal(err.code, SST_EUTF8);
        char want[80];
        snprintf(want, sizeof want, "string: invalid UTF-8 byte 0x%02X at offset %zu",
                 (unsigned)(unsigned char)invalid[k].text[invalid[k].bad], invalid[k].bad);
        assert_string_equal(err.msg, want);
    }
    assert_null(sst_string_new(NULL, &err));
    assert_int_equal(err.code, SST_EINVAL);
    assert_ptr_equal(sst_string_new("", &err), sst_string_empty());
}

static void test_object_basics(void **state) {
    (void)state;
    sst_error err;
    sst_value *o = sst_object_empty();
    o = sst_object_set_take(o, "b", sst_int_new(1, NULL), &err);
    o = sst_object_set_take(o, "a", sst_int_new(2, NULL), &err);
    o = sst_object_set_take(o, "b", sst_int_new(3, NULL), &err); /* keeps position */
    assert_non_null(o);
    assert_int_equal(sst_object_len(o), 2);
    assert_string_equal(sst_string_cstr(sst_object_key_at(o, 0)), "b");
    assert_int_equal(sst_int_value(sst_object_get(o, "b")), 3);
    assert_int_equal(sst_int_value(sst_object_value_at(o, 1)), 2);
    assert_null(sst_object_get(o, "zz"));
    assert_null(sst_object_key_at(o, 2));
    assert_json_text(o, SST_JSON_COMPACT, "{\"b\":3,\"a\":2}");
    o = sst_object_remove_take(o, "b", &err);
    o = sst_object_remove_take(o, "absent", &err);
    assert_json_text(o, SST_JSON_COMPACT, "{\"a\":2}");
    /* Errors consume their arguments and name the problem. */
    assert_null(sst_object_set_take(sst_array_empty(), "k", sst_null(), &err));
    assert_int_equal(err.code, SST_ETYPE);
    assert_string_equal(err.msg, "object set: expected object, got array");
    assert_null(sst_object_set_take(o, "bad\xFF", sst_null(), &err));
    assert_int_equal(err.code, SST_EUTF8);
}

static void test_object_copy_on_write(void **state) {
    (void)state;
    sst_value *a = tu_json("{\"x\":1,\"y\":[1,2]}");
    sst_value *b = sst_object_set_take(sst_value_ref(a), "x", sst_int_new(9, NULL), NULL);
    assert_ptr_not_equal(a, b); /* a was shared: b is a new version */
    assert_json_eq(a, "{\"x\":1,\"y\":[1,2]}");
    assert_json_eq(b, "{\"x\":9,\"y\":[1,2]}");
    assert_ptr_equal(sst_object_get(a, "y"), sst_object_get(b, "y")); /* structure shared */
    sst_value_unref(a);
    /* b is now unique: updates happen in place. */
    assert_true(sst_value_is_unique(b));
    sst_value *c = sst_object_set_take(b, "z", sst_null(), NULL);
    assert_ptr_equal(b, c);
    sst_value_unref(c);
}

static void test_object_large_index(void **state) {
    (void)state;
    sst_value *o = sst_object_empty();
    char key[32];
    for (int i = 0; i < 5000; i++) {
        snprintf(key, sizeof key, "key%d", i);
        o = sst_object_set_take(o, key, sst_int_new(i, NULL), NULL);
        assert_non_null(o);
    }
    sst_value *snapshot = sst_value_ref(o);
    for (int i = 0; i < 5000; i += 2) {
        snprintf(key, sizeof key, "key%d", i);
        o = sst_object_remove_take(o, key, NULL);
    }
    assert_int_equal(sst_object_len(o), 2500);
    assert_int_equal(sst_object_len(snapshot), 5000);
    for (int i = 0; i < 5000; i++) {
        snprintf(key, sizeof key, "key%d", i);
        const sst_value *v = sst_object_get(o, key);
        if (i % 2) {
            assert_int_equal(sst_int_value(v), i);
        } else {
            assert_null(v);
        }
        assert_int_equal(sst_int_value(sst_object_get(snapshot, key)), i);
    }
    assert_string_equal(sst_string_cstr(sst_object_key_at(o, 0)), "key1");
    sst_value_unref(o);
    sst_value_unref(snapshot);
}

static void test_equality_and_hash(void **state) {
    (void)state;
    struct {
        const char *a, *b;
        bool equal;
    } cases[] = {
        {"1", "1.0", true},
        {"-0.0", "0", true},
        {"9007199254740993", "9007199254740992.0", false},
        {"{\"a\":1,\"b\":[true,null]}", "{\"b\":[true,null],\"a\":1}", true},
        {"{\"a\":1}", "{\"a\":1,\"b\":2}", false},
        {"[1,2]", "[2,1]", false},
        {"\"x\"", "\"x\"", true},
        {"\"x\"", "\"y\"", false},
        {"null", "false", false},
        {"[]", "{}", false},
        {"0.5", "0.5", true},
        {"1e300", "1e300", true},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        sst_value *a = tu_json(cases[i].a);
        sst_value *b = tu_json(cases[i].b);
        if (sst_value_equal(a, b) != cases[i].equal) {
            print_error("case %zu: %s vs %s\n", i, cases[i].a, cases[i].b);
            fail();
        }
        if (cases[i].equal) {
            assert_true(sst_value_hash(a) == sst_value_hash(b));
        }
        sst_value_unref(a);
        sst_value_unref(b);
    }
    /* Stable across processes and platforms: pinned values. */
    sst_value *v = tu_json("{\"role\":\"user\",\"n\":[1,2.5,null]}");
    assert_true(sst_value_hash(v) == sst_value_hash(v));
    uint64_t h1 = sst_value_hash(v);
    sst_value *w = tu_json("{\"n\":[1,2.5,null],\"role\":\"user\"}");
    assert_true(h1 == sst_value_hash(w));
    sst_value_unref(v);
    sst_value_unref(w);
    v = tu_json("\"hello\"");
    assert_true(sst_value_hash(v) == 0x0b6436f721376764ull);
    sst_value_unref(v);
}

static void test_getters_on_wrong_types(void **state) {
    (void)state;
    sst_value *s = tu_json("\"x\"");
    assert_int_equal(sst_array_len(s), 0);
    assert_null(sst_array_get(s, 0));
    assert_null(sst_object_get(s, "x"));
    assert_false(sst_bool_value(s));
    assert_string_equal(sst_string_cstr(sst_null()), "");
    assert_int_equal(sst_value_type(NULL), SST_TYPE_NULL);
    sst_value_unref(s);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_immortals),
        cmocka_unit_test(test_numbers),
        cmocka_unit_test(test_strings),
        cmocka_unit_test(test_object_basics),
        cmocka_unit_test(test_object_copy_on_write),
        cmocka_unit_test(test_object_large_index),
        cmocka_unit_test(test_equality_and_hash),
        cmocka_unit_test(test_getters_on_wrong_types),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
