/* SPDX-License-Identifier: MIT */
/*
 * Arrays as persistent vectors, checked against a plain C model: push, set,
 * get and iteration over sizes that cross every trie level boundary, old
 * versions staying intact, and in-place updates when unique.
 */
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

static tu_rng g_rng = {0x2545F4914F6CDD1Dull};

static void check_equals_model(const sst_value *a, const int64_t *model, size_t n) {
    assert_int_equal(sst_array_len(a), n);
    for (size_t i = 0; i < n; i++) {
        const sst_value *e = sst_array_get(a, i);
        if (e == NULL || sst_int_value(e) != model[i]) {
            print_error("element %zu: expected %lld\n", i, (long long)model[i]);
            fail();
        }
    }
    sst_array_iter it;
    sst_array_iter_init(&it, a);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(sst_int_value(sst_array_iter_next(&it)), model[i]);
    }
    assert_null(sst_array_iter_next(&it));
    assert_null(sst_array_get(a, n));
}

static void test_push_get_sizes(void **state) {
    (void)state;
    /* Boundaries of the tail (32), first level (32 + 1024) and second (32 + 32768). */
    static const size_t sizes[] = {0,    1,    31,   32,   33,    64,    65,
                                   1056, 1057, 1088, 1089, 33824, 33825, 40000};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        size_t n = sizes[s];
        int64_t *model = malloc((n + 1) * sizeof *model);
        sst_value *a = sst_array_empty();
        for (size_t i = 0; i < n; i++) {
            model[i] = (int64_t)(i * 7 + 1);
            a = sst_array_push_take(a, sst_int_new(model[i], NULL), NULL);
            assert_non_null(a);
        }
        check_equals_model(a, model, n);
        sst_value_unref(a);
        free(model);
    }
}

static void test_unique_push_is_in_place(void **state) {
    (void)state;
    sst_value *a = sst_array_push_take(sst_array_empty(), sst_null(), NULL);
    for (int i = 0; i < 5000; i++) {
        sst_value *b = sst_array_push_take(a, sst_int_new(i, NULL), NULL);
        assert_ptr_equal(a, b);
        a = b;
    }
    sst_value_unref(a);
}

static void test_versions_are_persistent(void **state) {
    (void)state;
    enum { N = 3000 };
    sst_value *versions[N + 1];
    versions[0] = sst_array_empty();
    for (int i = 0; i < N; i++) {
        versions[i + 1] =
            sst_array_push_take(sst_value_ref(versions[i]), sst_int_new(i, NULL), NULL);
        assert_ptr_not_equal(versions[i + 1], versions[i]);
    }
    for (int v = 0; v <= N; v += 97) {
        assert_int_equal(sst_array_len(versions[v]), v);
        for (int i = 0; i < v; i++) {
            assert_int_equal(sst_int_value(sst_array_get(versions[v], (size_t)i)), i);
        }
    }
    /* Branching: two different pushes onto the same old version. */
    sst_value *x = sst_array_push_take(sst_value_ref(versions[100]), sst_int_new(-1, NULL), NULL);
    sst_value *y = sst_array_push_take(sst_value_ref(versions[100]), sst_int_new(-2, NULL), NULL);
    assert_int_equal(sst_int_value(sst_array_get(x, 100)), -1);
    assert_int_equal(sst_int_value(sst_array_get(y, 100)), -2);
    assert_int_equal(sst_int_value(sst_array_get(versions[101], 100)), 100);
    sst_value_unref(x);
    sst_value_unref(y);
    for (int i = 0; i <= N; i++) {
        sst_value_unref(versions[i]);
    }
}

static void test_random_set_against_model(void **state) {
    (void)state;
    enum { N = 20000, OPS = 20000 };
    int64_t *model = malloc(N * sizeof *model);
    int64_t *old_model = malloc(N * sizeof *old_model);
    sst_value *a = sst_array_empty();
    for (int i = 0; i < N; i++) {
        model[i] = i;
        a = sst_array_push_take(a, sst_int_new(i, NULL), NULL);
    }
    sst_value *old = sst_value_ref(a);
    memcpy(old_model, model, N * sizeof *model);
    for (int k = 0; k < OPS; k++) {
        size_t i = (size_t)(tu_rand(&g_rng) % N);
        int64_t v = (int64_t)(tu_rand(&g_rng) % 1000000);
        model[i] = v;
        a = sst_array_set_take(a, i, sst_int_new(v, NULL), NULL);
        assert_non_null(a);
        if (k == OPS / 2) {
            /* Take a second snapshot midway; later sets must not touch it. */
            sst_value_unref(old);
            old = sst_value_ref(a);
            memcpy(old_model, model, N * sizeof *model);
        }
    }
    check_equals_model(a, model, N);
    check_equals_model(old, old_model, N);
    sst_error err;
    assert_null(sst_array_set_take(a, N, sst_null(), &err));
    assert_int_equal(err.code, SST_ERANGE);
    assert_string_equal(err.msg, "array set: index 20000 out of range (length 20000)");
    sst_value_unref(old);
    free(model);
    free(old_model);
}

static void test_concat(void **state) {
    (void)state;
    sst_value *a = tu_json("[1,2,3]");
    sst_value *b = tu_json("[4,5]");
    sst_value *c = sst_array_concat_take(sst_value_ref(a), b, NULL);
    assert_json_eq(c, "[1,2,3,4,5]");
    assert_json_eq(a, "[1,2,3]");
    /* Concatenating an array with itself reads the old version. */
    c = sst_array_concat_take(c, c, NULL);
    assert_json_eq(c, "[1,2,3,4,5,1,2,3,4,5]");
    sst_error err;
    assert_null(sst_array_concat_take(sst_value_ref(a), sst_null(), &err));
    assert_int_equal(err.code, SST_ETYPE);
    assert_string_equal(err.msg, "array concat: expected two arrays, got array and null");
    assert_null(sst_array_push_take(sst_object_empty(), sst_null(), &err));
    assert_string_equal(err.msg, "array push: expected array, got object");
    sst_value_unref(a);
    sst_value_unref(b);
    sst_value_unref(c);
}

static void test_deep_nesting_frees_without_recursion(void **state) {
    (void)state;
    /* One million levels: freeing must not recurse (it would overflow the stack). */
    sst_value *v = sst_null();
    for (int i = 0; i < 1000000; i++) {
        v = sst_array_push_take(sst_array_empty(), v, NULL);
        assert_non_null(v);
    }
    sst_error err;
    assert_null(sst_json_write(v, SST_JSON_COMPACT, NULL, &err));
    assert_int_equal(err.code, SST_ELIMIT);
    sst_value_unref(v);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_push_get_sizes),
        cmocka_unit_test(test_unique_push_is_in_place),
        cmocka_unit_test(test_versions_are_persistent),
        cmocka_unit_test(test_random_set_against_model),
        cmocka_unit_test(test_concat),
        cmocka_unit_test(test_deep_nesting_frees_without_recursion),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
