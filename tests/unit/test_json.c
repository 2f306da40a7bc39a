/* SPDX-License-Identifier: MIT */
/*
 * The JSON reader and writer: the valid/invalid corpus in tests/data/json
 * (each invalid case pins the code and the exact message with its position),
 * exact number round trips, the three output styles and the limits.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

typedef void (*file_fn)(const char *dir, const char *name);

static int for_each_file(const char *sub, const char *suffix, file_fn fn) {
    char dir[512];
    tu_data_path(sub, dir, sizeof dir);
    DIR *d = opendir(dir);
    assert_non_null(d);
    int count = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t n = strlen(e->d_name), s = strlen(suffix);
        if (n > s && strcmp(e->d_name + n - s, suffix) == 0) {
            fn(dir, e->d_name);
            count++;
        }
    }
    closedir(d);
    return count;
}

static void check_valid(const char *dir, const char *name) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    sst_error err;
    sst_value *v = sst_json_read_file(path, NULL, &err);
    if (v == NULL) {
        print_error("%s: %s\n", name, err.msg);
        fail();
    }
    static const unsigned styles[] = {SST_JSON_COMPACT, SST_JSON_PRETTY, SST_JSON_CANONICAL,
                                      SST_JSON_CANONICAL | SST_JSON_PRETTY};
    for (size_t s = 0; s < 4; s++) {
        size_t len;
        char *text = sst_json_write(v, styles[s], &len, &err);
        assert_non_null(text);
        assert_int_equal(strlen(text) <= len, 1);
        sst_value *back = sst_json_read(text, len, NULL, &err);
        if (back == NULL || !sst_value_equal(v, back)) {
            print_error("%s: style %u does not round-trip: %s\n", name, styles[s],
                        back == NULL ? err.msg : text);
            fail();
        }
        /* Writing the re-read value gives the same text. */
        char *again = sst_json_write(back, styles[s], NULL, &err);
        assert_string_equal(text, again);
        sst_free(again);
        sst_free(text);
        sst_value_unref(back);
    }
    sst_value_unref(v);
}

static void test_valid_corpus(void **state) {
    (void)state;
    assert_true(for_each_file("json/valid", ".json", check_valid) >= 15);
}

static void check_invalid(const char *dir, const char *name) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    size_t len;
    char *text = tu_read_file(path, &len);
    assert_non_null(text);
    snprintf(path + strlen(path) - 5, 8, ".err");
    char *expect = tu_read_file(path, NULL);
    assert_non_null(expect);
    char *nl = strchr(expect, '\n');
    assert_non_null(nl);
    *nl = '\0';
    char *msg = nl + 1;
    msg[strcspn(msg, "\n")] = '\0';
    sst_error err;
    sst_value *v = sst_json_read(text, len, NULL, &err);
    if (v != NULL || strcmp(sst_code_name(err.code), expect) != 0 || strcmp(err.msg, msg) != 0) {
        print_error("%s:\n  expected %s: %s\n  actual   %s: %s\n", name, expect, msg,
                    sst_code_name(err.code), v != NULL ? "(parsed!)" : err.msg);
        fail();
    }
    /* The numeric position agrees with the text. */
    char where[64];
    snprintf(where, sizeof where, "at line %zu, column %zu", err.line, err.column);
    assert_non_null(strstr(err.msg, where));
    assert_true(err.offset <= len);
    free(text);
    free(expect);
}

static void test_invalid_corpus(void **state) {
    (void)state;
    assert_true(for_each_file("json/invalid", ".json", check_invalid) >= 30);
}

static void test_int64_exact(void **state) {
    (void)state;
    sst_value *v = tu_json("[9223372036854775807,-9223372036854775808,9007199254740993,-0]");
    assert_true(sst_int_value(sst_array_get(v, 0)) == INT64_MAX);
    assert_true(sst_int_value(sst_array_get(v, 1)) == INT64_MIN);
    assert_true(sst_int_value(sst_array_get(v, 2)) == 9007199254740993LL);
    assert_json_text(v, SST_JSON_COMPACT,
                     "[9223372036854775807,-9223372036854775808,9007199254740993,0]");
    sst_value_unref(v);
    /* Beyond int64: a double, not an error. */
    v = tu_json("18446744073709551615");
    assert_true(sst_is_double(v));
    assert_true(sst_double_value(v) == 18446744073709551615.0);
    sst_value_unref(v);
}

static tu_rng g_rng = {88172645463325252ull};

static void test_double_round_trip_bits(void **state) {
    (void)state;
    /* Random bit patterns cover subnormals, huge and tiny exponents. */
    int checked = 0;
    for (int i = 0; i < 200000; i++) {
        uint64_t bits = tu_rand(&g_rng);
        double d;
        memcpy(&d, &bits, sizeof d);
        sst_value *v = sst_double_new(d, NULL);
        if (v == NULL) {
            continue; /* NaN or infinity */
        }
        char *text = sst_json_write(v, SST_JSON_COMPACT, NULL, NULL);
        sst_value *back = sst_json_parse(text, NULL);
        assert_non_null(back);
        assert_true(sst_is_double(back));
        double e = sst_double_value(back);
        if (memcmp(&d, &e, sizeof d) != 0) {
            print_error("double %a written as %s reads back as %a\n", d, text, e);
            fail();
        }
        sst_free(text);
        sst_value_unref(v);
        sst_value_unref(back);
        checked++;
    }
    assert_true(checked > 190000);
}

static void test_double_text(void **state) {
    (void)state;
    struct {
        double d;
        const char *text;
    } cases[] = {{1.0, "1.0"},
                 {0.1, "0.1"},
                 {-2.5, "-2.5"},
                 {1e20, "1e+20"},
                 {1e-7, "1e-07"},
                 {123456789.0, "123456789.0"},
                 {0.30000000000000004, "0.30000000000000004"},
                 {-0.0, "-0.0"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        sst_value *v = sst_double_new(cases[i].d, NULL);
        assert_json_text(v, SST_JSON_COMPACT, cases[i].text);
        sst_value_unref(v);
    }
}

/* Decimal-looking doubles take a fast path without printf; it must stay exact and short. */
static void test_decimal_doubles(void **state) {
    (void)state;
    static const double scale[] = {1, 10, 100, 1000, 1e4, 1e5, 1e6, 1e7, 1e9, 1e12};
    for (size_t k = 0; k < sizeof scale / sizeof scale[0]; k++) {
        for (int i = 0; i < 20000; i++) {
            double d =
                (double)((int64_t)(tu_rand(&g_rng) % 100000000000ull) - 50000000000LL) / scale[k];
            sst_value *v = sst_double_new(d, NULL);
            char *text = sst_json_write(v, SST_JSON_COMPACT, NULL, NULL);
            sst_value *back = sst_json_parse(text, NULL);
            double e = sst_double_value(back);
            if (!sst_is_double(back) || memcmp(&d, &e, sizeof d) != 0) {
                print_error("%.17g written as %s reads back as %.17g\n", d, text, e);
                fail();
            }
            /* Never longer than printf's round-trip form (plus ".0"). */
            char ref[64];
            snprintf(ref, sizeof ref, "%.17g", d);
            assert_true(strlen(text) <= strlen(ref) + 2);
            sst_free(text);
            sst_value_unref(v);
            sst_value_unref(back);
        }
    }
    struct {
        double d;
        const char *text;
    } cases[] = {{1700000000.123, "1700000000.123"},
                 {0.0001, "0.0001"},
                 {-12.5, "-12.5"},
                 {99999999999999.9, "99999999999999.9"},
                 {0.00009, "9e-05"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        sst_value *v = sst_double_new(cases[i].d, NULL);
        assert_json_text(v, SST_JSON_COMPACT, cases[i].text);
        sst_value_unref(v);
    }
}

static void test_writer_styles(void **state) {
    (void)state;
    sst_value *v = tu_json("{\"b\":[1,{\"y\":null,\"x\":true}],\"a\":\"\\u0001\\n\\\"\",\"c\":{}}");
    assert_json_text(v, SST_JSON_COMPACT,
                     "{\"b\":[1,{\"y\":null,\"x\":true}],\"a\":\"\\u0001\\n\\\"\",\"c\":{}}");
    assert_json_text(v, SST_JSON_CANONICAL,
                     "{\"a\":\"\\u0001\\n\\\"\",\"b\":[1,{\"x\":true,\"y\":null}],\"c\":{}}");
    assert_json_text(v, SST_JSON_PRETTY,
                     "{\n  \"b\": [\n    1,\n    {\n      \"y\": null,\n      \"x\": true\n    }\n"
                     "  ],\n  \"a\": \"\\u0001\\n\\\"\",\n  \"c\": {}\n}");
    sst_value_unref(v);
    /* Non-ASCII and U+2028 stay literal; '/' is not escaped. */
    v = tu_json("\"\\u00e9/\\u2028\"");
    assert_json_text(v, SST_JSON_COMPACT, "\"\xC3\xA9/\xE2\x80\xA8\"");
    sst_value_unref(v);
    /* Canonical sorts by UTF-8 bytes: "Z" < "a" < "é". */
    v = tu_json("{\"\\u00e9\":1,\"a\":2,\"Z\":3}");
    assert_json_text(v, SST_JSON_CANONICAL, "{\"Z\":3,\"a\":2,\"\xC3\xA9\":1}");
    sst_value_unref(v);
}

static void test_duplicate_keys_last_wins(void **state) {
    (void)state;
    sst_value *v = tu_json("{\"a\":1,\"b\":2,\"a\":3}");
    assert_json_text(v, SST_JSON_COMPACT, "{\"a\":3,\"b\":2}");
    sst_value_unref(v);
}

static void test_limits(void **state) {
    (void)state;
    sst_json_read_opts opts;
    sst_json_read_opts_init(&opts);
    assert_int_equal(opts.max_depth, 512);
    opts.max_bytes = 4;
    sst_error err;
    assert_null(sst_json_read("[1,2]", 5, &opts, &err));
    assert_int_equal(err.code, SST_ELIMIT);
    assert_string_equal(err.msg, "JSON text of 5 bytes exceeds the limit of 4 bytes");
    sst_json_read_opts_init(&opts);
    opts.max_depth = 2;
    sst_value *v = sst_json_read("[[1]]", 5, &opts, &err);
    assert_non_null(v);
    sst_value_unref(v);
    assert_null(sst_json_read("[[[1]]]", 7, &opts, &err));
    assert_string_equal(err.msg, "nesting deeper than 2 levels at line 1, column 3");
    /* The reader needs no NUL terminator: only len bytes are read. */
    v = sst_json_read("[1]garbage", 3, NULL, &err);
    assert_json_eq(v, "[1]");
    sst_value_unref(v);
    /* A byte order mark is skipped. */
    v = sst_json_parse("\xEF\xBB\xBF{\"a\":1}", &err);
    assert_json_eq(v, "{\"a\":1}");
    sst_value_unref(v);
    assert_null(sst_json_read(NULL, 0, NULL, &err));
    assert_int_equal(err.code, SST_EINVAL);
}

static void test_read_file_errors(void **state) {
    (void)state;
    sst_error err;
    assert_null(sst_json_read_file("/nonexistent/x.json", NULL, &err));
    assert_int_equal(err.code, SST_EIO);
    assert_string_equal(err.msg, "cannot open '/nonexistent/x.json'");
    char path[512];
    tu_data_path("json/invalid/missing_colon.json", path, sizeof path);
    assert_null(sst_json_read_file(path, NULL, &err));
    assert_int_equal(err.code, SST_EPARSE);
    char want[700];
    snprintf(want, sizeof want,
             "%s: expected ':' after an object key, found '1' at line 1, column 6", path);
    assert_string_equal(err.msg, want);
    assert_int_equal(err.line, 1);
    assert_int_equal(err.column, 6);
}

static void test_nul_in_strings(void **state) {
    (void)state;
    sst_value *v = tu_json("{\"a\\u0000b\":\"x\\u0000y\"}");
    const sst_value *val = sst_object_getn(v, "a\0b", 3);
    assert_non_null(val);
    assert_int_equal(sst_string_len(val), 3);
    assert_json_text(v, SST_JSON_COMPACT, "{\"a\\u0000b\":\"x\\u0000y\"}");
    sst_value_unref(v);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_valid_corpus),   cmocka_unit_test(test_invalid_corpus),
        cmocka_unit_test(test_int64_exact),    cmocka_unit_test(test_double_round_trip_bits),
        cmocka_unit_test(test_double_text),    cmocka_unit_test(test_decimal_doubles),
        cmocka_unit_test(test_writer_styles),  cmocka_unit_test(test_duplicate_keys_last_wins),
        cmocka_unit_test(test_limits),         cmocka_unit_test(test_read_file_errors),
        cmocka_unit_test(test_nul_in_strings),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
