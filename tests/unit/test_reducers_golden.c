/* SPDX-License-Identifier: MIT */
/*
 * The data-driven reducer suite: every directory of tests/data/reducers is
 * one case (see the README there). Each case runs twice: through
 * sst_reducer_apply directly and through a schema, which must agree.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "test_util.h"

/* sst_value_equal where the expected string "<uuid>" matches any UUIDv4. */
static bool matches(const sst_value *actual, const sst_value *expected) {
    if (sst_is_string(expected) && strcmp(sst_string_cstr(expected), "<uuid>") == 0) {
        return tu_is_uuid4(actual);
    }
    if (sst_is_array(expected)) {
        if (!sst_is_array(actual) || sst_array_len(actual) != sst_array_len(expected)) {
            return false;
        }
        for (size_t i = 0; i < sst_array_len(expected); i++) {
            if (!matches(sst_array_get(actual, i), sst_array_get(expected, i))) {
                return false;
            }
        }
        return true;
    }
    if (sst_is_object(expected)) {
        if (!sst_is_object(actual) || sst_object_len(actual) != sst_object_len(expected)) {
            return false;
        }
        for (size_t i = 0; i < sst_object_len(expected); i++) {
            const sst_value *k = sst_object_key_at(expected, i);
            const sst_value *a = sst_object_getn(actual, sst_string_cstr(k), sst_string_len(k));
            if (a == NULL || !matches(a, sst_object_value_at(expected, i))) {
                return false;
            }
        }
        return true;
    }
    return sst_value_equal(actual, expected);
}

/* The text of @p dir/@p file (malloc'd), or NULL when the file is absent. */
static char *read_case_file(const char *dir, const char *file) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    return tu_read_file(path, NULL);
}

static sst_value *read_case_json(const char *dir, const char *file) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    struct stat st;
    if (stat(path, &st) != 0) {
        return NULL;
    }
    sst_error err;
    sst_value *v = sst_json_read_file(path, NULL, &err);
    if (v == NULL) {
        print_error("%s\n", err.msg);
        fail();
    }
    return v;
}

static void chomp(char *s) {
    s[strcspn(s, "\n")] = '\0';
}

/* Runs one case; returns false (after printing why) on mismatch. */
static bool run_case(const char *dir, const char *name, bool via_schema) {
    char *rname = read_case_file(dir, "reducer.txt");
    assert_non_null(rname);
    chomp(rname);
    const sst_reducer *r = sst_reducer_builtin(rname);
    if (r == NULL) {
        print_error("%s: unknown reducer '%s'\n", name, rname);
        fail();
    }
    char *field = read_case_file(dir, "field.txt");
    if (field != NULL) {
        chomp(field);
    }
    const char *fname = field != NULL                        ? field
                        : strcmp(rname, "add_messages") == 0 ? "messages"
                                                             : "value";
    sst_value *current = read_case_json(dir, "current.json");
    sst_value *updates = read_case_json(dir, "updates.json");
    if (updates == NULL) {
        sst_value *one = read_case_json(dir, "update.json");
        assert_non_null(one);
        updates = sst_array_push_take(sst_array_empty(), one, NULL);
    }
    sst_value *expected = read_case_json(dir, "expected.json");
    char *error = read_case_file(dir, "error.txt");
    assert_true((expected != NULL) != (error != NULL));

    size_t n = sst_array_len(updates);
    const sst_value **ups = calloc(n + 1, sizeof *ups);
    for (size_t i = 0; i < n; i++) {
        ups[i] = sst_array_get(updates, i);
    }
    sst_error err;
    sst_error_clear(&err);
    sst_value *out;
    if (!via_schema) {
        out = sst_reducer_apply(r, fname, sst_value_ref(current), ups, n, &err);
    } else {
        /* The same writes as deltas {field: update}, one per task. */
        sst_schema *s = sst_schema_new(NULL);
        assert_sst_ok(sst_schema_add_field(s, fname, r, NULL, &err), &err);
        sst_value *st = sst_object_empty();
        if (current != NULL) {
            st = sst_object_set_take(st, fname, sst_value_ref(current), NULL);
        }
        sst_value **deltas = calloc(n + 1, sizeof *deltas);
        for (size_t i = 0; i < n; i++) {
            deltas[i] = sst_object_set_take(sst_object_empty(), fname, sst_value_ref(ups[i]), NULL);
        }
        sst_value *next = sst_schema_apply(s, st, (const sst_value *const *)deltas, n, &err);
        out = next != NULL ? sst_value_ref(sst_object_get(next, fname)) : NULL;
        if (next != NULL && out == NULL) {
            out = sst_null(); /* field never written */
        }
        sst_value_unref(next);
        for (size_t i = 0; i < n; i++) {
            sst_value_unref(deltas[i]);
        }
        free(deltas);
        sst_schema_free(s);
    }
    bool ok;
    if (error != NULL) {
        char *msg = strchr(error, '\n');
        assert_non_null(msg);
        *msg++ = '\0';
        chomp(msg);
        ok =
            out == NULL && strcmp(sst_code_name(err.code), error) == 0 && strcmp(err.msg, msg) == 0;
        if (!ok) {
            print_error("%s (%s): expected %s: %s\n  actual %s: %s\n", name,
                        via_schema ? "schema" : "reducer", error, msg, sst_code_name(err.code),
                        out != NULL ? "(success)" : err.msg);
        }
    } else {
        ok = out != NULL && matches(out, expected);
        if (!ok) {
            char *got = out != NULL ? sst_json_write(out, 0, NULL, NULL) : NULL;
            print_error("%s (%s): got %s\n", name, via_schema ? "schema" : "reducer",
                        got != NULL ? got : err.msg);
            sst_free(got);
        }
    }
    sst_value_unref(out);
    sst_value_unref(current);
    sst_value_unref(updates);
    sst_value_unref(expected);
    free(ups);
    free(rname);
    free(field);
    free(error);
    return ok;
}

static void test_golden_cases(void **state) {
    (void)state;
    char root[512];
    tu_data_path("reducers", root, sizeof root);
    DIR *d = opendir(root);
    assert_non_null(d);
    int cases = 0, failed = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.' || strchr(e->d_name, '.') != NULL) {
            continue;
        }
        char dir[1024];
        snprintf(dir, sizeof dir, "%s/%s", root, e->d_name);
        cases++;
        failed += !run_case(dir, e->d_name, false);
        failed += !run_case(dir, e->d_name, true);
    }
    closedir(d);
    print_message("%d golden reducer cases\n", cases);
    assert_true(cases >= 25);
    assert_int_equal(failed, 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_golden_cases),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
