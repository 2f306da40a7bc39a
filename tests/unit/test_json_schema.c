/* SPDX-License-Identifier: MIT */
/*
 * The JSON Schema validator (src/agent/json_schema.h): the cases of the
 * official JSON-Schema-Test-Suite restated under tests/data/json-schema/
 * (see its README.md), the exact text of failures and schema errors, the
 * limits (deep schemas and values, "$ref" cycles, costly schemas and
 * patterns), big inputs, the pattern engine, threads and out-of-memory.
 */
#include <dirent.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/json_schema.h"
#include "test_util.h"

/* ---- helpers ---- */

static sst__json_schema *compile_ok(const char *schema_json) {
    sst_value *schema = tu_json(schema_json);
    sst_error err = {0};
    sst__json_schema *s = sst__json_schema_compile(schema, &err);
    sst_value_unref(schema);
    if (s == NULL) {
        fail_msg("schema %s did not compile: %s", schema_json, err.msg);
    }
    return s;
}

/* Fails unless validating @p instance_json gives @p code with exactly @p msg. */
static void expect(const char *schema_json, const char *instance_json, sst_code code,
                   const char *msg) {
    sst__json_schema *s = compile_ok(schema_json);
    sst_value *v = tu_json(instance_json);
    sst_error err = {0};
    sst_code rc = sst__json_schema_validate(s, v, &err);
    if (rc != code || strcmp(err.msg, code == SST_OK ? "" : msg) != 0) {
        fail_msg("schema %s, value %s:\nwant %s \"%s\"\ngot  %s \"%s\"", schema_json, instance_json,
                 sst_code_name(code), msg, sst_code_name(rc), err.msg);
    }
    sst_value_unref(v);
    sst__json_schema_free(s);
}

#define expect_ok(schema, instance)       expect((schema), (instance), SST_OK, "")
#define expect_bad(schema, instance, msg) expect((schema), (instance), SST_EINVAL, (msg))

/* Fails unless compiling @p schema_json fails with @p code and exactly @p msg. */
static void expect_schema_error(const char *schema_json, sst_code code, const char *msg) {
    sst_value *schema = tu_json(schema_json);
    sst_error err = {0};
    sst__json_schema *s = sst__json_schema_compile(schema, &err);
    if (s != NULL || err.code != code || strcmp(err.msg, msg) != 0) {
        fail_msg("schema %s:\nwant %s \"%s\"\ngot  %s \"%s\"", schema_json, sst_code_name(code),
                 msg, s != NULL ? "a compiled schema" : sst_code_name(err.code), err.msg);
    }
    sst_value_unref(schema);
}

/* A growing text buffer for generated JSON. */
typedef struct text {
    char *data;
    size_t len, cap;
} text;

static void put(text *t, const char *s) {
    size_t n = strlen(s);
    if (t->len + n + 1 > t->cap) {
        t->cap = (t->len + n + 1) * 2;
        t->data = realloc(t->data, t->cap);
        assert_non_null(t->data);
    }
    memcpy(t->data + t->len, s, n + 1);
    t->len += n;
}

static void putf(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void putf(text *t, const char *fmt, ...) {
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    put(t, buf);
}

/* ---- the official test suite ---- */

static int cmp_names(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The *.json files of tests/data/json-schema, sorted (malloc'd; free each and the array). */
static char **suite_files(size_t *n) {
    char dir[1024];
    tu_data_path("json-schema", dir, sizeof dir);
    DIR *d = opendir(dir);
    if (d == NULL) {
        fail_msg("cannot open the suite folder %s", dir);
    }
    char **names = NULL;
    size_t count = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len > 5 && strcmp(e->d_name + len - 5, ".json") == 0) {
            names = realloc(names, (count + 1) * sizeof *names);
            assert_non_null(names);
            names[count] = malloc(strlen(dir) + len + 2);
            assert_non_null(names[count]);
            snprintf(names[count], strlen(dir) + len + 2, "%s/%s", dir, e->d_name);
            count++;
        }
    }
    closedir(d);
    qsort(names, count, sizeof *names, cmp_names);
    *n = count;
    return names;
}

/*
 * Every group of every file compiles, and every case validates as the suite
 * says; an invalid case also gets a message that names a location.
 */
static void test_suite(void **state) {
    (void)state;
    size_t n_files = 0, groups = 0, cases = 0, passed = 0;
    char **files = suite_files(&n_files);
    for (size_t f = 0; f < n_files; f++) {
        sst_error err = {0};
        sst_value *doc = sst_json_read_file(files[f], NULL, &err);
        if (doc == NULL) {
            fail_msg("%s: %s", files[f], err.msg);
        }
        for (size_t g = 0; g < sst_array_len(doc); g++) {
            const sst_value *group = sst_array_get(doc, g);
            const char *gdesc = sst_string_cstr(sst_object_get(group, "description"));
            const sst_value *tests = sst_object_get(group, "tests");
            groups++;
            sst_error cerr = {0};
            sst__json_schema *s = sst__json_schema_compile(sst_object_get(group, "schema"), &cerr);
            if (s == NULL) {
                print_error("%s: \"%s\": the schema did not compile: %s\n", files[f], gdesc,
                            cerr.msg);
                cases += sst_array_len(tests);
                continue;
            }
            for (size_t t = 0; t < sst_array_len(tests); t++) {
                const sst_value *tc = sst_array_get(tests, t);
                bool valid = sst_bool_value(sst_object_get(tc, "valid"));
                sst_error verr = {0};
                sst_code rc = sst__json_schema_validate(s, sst_object_get(tc, "data"), &verr);
                cases++;
                bool ok = valid ? rc == SST_OK : rc == SST_EINVAL && verr.msg[0] == '/';
                if (ok) {
                    passed++;
                } else {
                    print_error("%s: \"%s\" / \"%s\": want %s, got %s %s\n", files[f], gdesc,
                                sst_string_cstr(sst_object_get(tc, "description")),
                                valid ? "valid" : "invalid", sst_code_name(rc), verr.msg);
                }
            }
            sst__json_schema_free(s);
        }
        sst_value_unref(doc);
        free(files[f]);
    }
    free(files);
    print_message("json-schema suite: %zu files, %zu groups, %zu/%zu cases passed\n", n_files,
                  groups, passed, cases);
    assert_int_equal(passed, cases);
    /* The data is there (tests/data/json-schema/EXCLUDED.md counts 310 groups, 1152 cases). */
    assert_true(n_files >= 40);
    assert_true(groups >= 300);
    assert_true(cases >= 1100);
}

/* ---- failures, word for word ---- */

static void test_messages(void **state) {
    (void)state;
    expect_bad("{\"type\":\"object\",\"properties\":{\"items\":{\"type\":\"array\",\"items\":{"
               "\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\"}}}}}}",
               "{\"items\":[{\"name\":\"a\"},{\"name\":\"b\"},{\"name\":3}]}",
               "/items/2/name: expected string, got integer");
    expect_bad("{\"required\":[\"name\",\"age\"]}", "{\"name\":\"x\"}",
               "/: missing required property 'age'");
    expect_bad("{\"properties\":{\"tags\":{\"maxItems\":3}}}", "{\"tags\":[1,2,3,4,5]}",
               "/tags: expected at most 3 items, got 5");
    expect_bad("{\"minItems\":2}", "[1]", "/: expected at least 2 items, got 1");
    expect_bad("{\"type\":[\"string\",\"null\"]}", "1.5", "/: expected string or null, got number");
    expect_bad("{\"type\":[\"string\",\"integer\",\"null\"]}", "true",
               "/: expected string, integer or null, got boolean");
    expect_bad("{\"type\":\"integer\"}", "1.5", "/: expected integer, got number");
    expect_ok("{\"type\":\"integer\"}", "1.0");
    expect_bad("{\"enum\":[\"fast\",\"deep\"]}", "\"slow\"",
               "/: must be one of [\"fast\",\"deep\"], got \"slow\"");
    expect_bad("{\"enum\":[\"only\"]}", "{\"a\":1}", "/: must be \"only\"");
    expect_bad("{\"const\":{\"kind\":\"circle\"}}", "{\"kind\":\"square\"}",
               "/: must be {\"kind\":\"circle\"}");
    expect_bad("{\"properties\":{\"n\":{\"const\":1}}}", "{\"n\":2}", "/n: must be 1, got 2");
    expect_ok("{\"const\":1}", "1.0");
    expect_bad("{\"additionalProperties\":false,\"properties\":{\"a\":{}}}",
               "{\"a\":1,\"b\":2,\"c\":3}",
               "/: property 'b' is not allowed; /: property 'c' is not allowed");
    expect_bad("{\"pattern\":\"^[a-z]+$\"}", "\"abc1\"",
               "/: does not match the pattern '^[a-z]+$'");
    expect_bad("{\"minLength\":3}", "\"\\u00e9\\u00e9\"",
               "/: expected at least 3 characters, got 2");
    expect_ok("{\"maxLength\":2}", "\"\\u00e9\\ud83d\\ude00\"");
    expect_bad("{\"maxLength\":1}", "\"ab\"", "/: expected at most 1 characters, got 2");
    expect_bad("{\"minimum\":0}", "-1", "/: must be >= 0, got -1");
    expect_bad("{\"exclusiveMinimum\":0.5}", "0.5", "/: must be > 0.5, got 0.5");
    expect_bad("{\"maximum\":10}", "10.25", "/: must be <= 10, got 10.25");
    expect_bad("{\"exclusiveMaximum\":10}", "10", "/: must be < 10, got 10");
    expect_bad("{\"multipleOf\":5}", "7", "/: must be a multiple of 5, got 7");
    expect_ok("{\"multipleOf\":0.01}", "19.99");
    expect_bad("{\"minProperties\":2}", "{\"a\":1}", "/: expected at least 2 properties, got 1");
    expect_bad("{\"maxProperties\":0}", "{\"a\":1}", "/: expected at most 0 properties, got 1");
    expect_bad("{\"uniqueItems\":true}", "[1,2,1.0,2]",
               "/: expected unique items, but items 0 and 2 are equal");
    expect_bad("{\"contains\":{\"type\":\"string\"}}", "[1,2]",
               "/: no item matches the 'contains' schema");
    expect_bad("{\"contains\":{\"type\":\"string\"},\"minContains\":2}", "[\"a\",1]",
               "/: expected at least 2 items matching 'contains', got 1");
    expect_bad("{\"contains\":{\"type\":\"string\"},\"maxContains\":1}", "[\"a\",\"b\"]",
               "/: expected at most 1 items matching 'contains', got 2");
    expect_bad("{\"dependentRequired\":{\"card\":[\"billing\"]}}", "{\"card\":1}",
               "/: property 'billing' is required when 'card' is present");
    expect_bad("{\"propertyNames\":{\"pattern\":\"^[a-z]+$\"}}", "{\"ok\":1,\"Bad\":2}",
               "/: invalid property name 'Bad': does not match the pattern '^[a-z]+$'");
    expect_bad("{\"properties\":{\"a\":false}}", "{\"a\":1}",
               "/a: no value is allowed here (the schema is false)");
    expect_bad("{\"not\":{\"type\":\"string\"}}", "\"x\"", "/: must not match the schema in 'not'");
    expect_bad("{\"if\":{\"properties\":{\"kind\":{\"const\":\"a\"}}},\"then\":{\"required\":["
               "\"x\"]},\"else\":{\"required\":[\"y\"]}}",
               "{\"kind\":\"b\"}", "/: missing required property 'y'");
    /* Keys with '/' and '~' are escaped in locations, as JSON Pointer says. */
    expect_bad("{\"properties\":{\"a/b\":{\"properties\":{\"c~d\":{\"type\":\"string\"}}}}}",
               "{\"a/b\":{\"c~d\":1}}", "/a~1b/c~0d: expected string, got integer");
    /* The type comes first: no enum or minLength failure after it. */
    expect_bad("{\"type\":\"string\",\"enum\":[\"a\"],\"minLength\":3}", "7",
               "/: expected string, got integer");
}

static void test_messages_anyof(void **state) {
    (void)state;
    /* Every branch only wanted another type: one merged type failure. */
    expect_bad("{\"properties\":{\"x\":{\"anyOf\":[{\"type\":\"string\"},{\"type\":\"null\"}]}}}",
               "{\"x\":1}", "/x: expected string or null, got integer");
    /* Otherwise the closest branch (fewest failures) and its first failure. */
    const char *shapes =
        "{\"oneOf\":[{\"type\":\"object\",\"properties\":{\"kind\":{\"const\":\"circle\"},"
        "\"r\":{\"type\":\"number\"}},\"required\":[\"kind\",\"r\"]},{\"type\":\"object\","
        "\"properties\":{\"kind\":{\"const\":\"rect\"},\"w\":{\"type\":\"number\"},\"h\":{"
        "\"type\":\"number\"}},\"required\":[\"kind\",\"w\",\"h\"]}]}";
    expect_bad(shapes, "{\"kind\":\"rect\",\"w\":1}",
               "/: does not match any schema in oneOf; the closest, oneOf/1, fails: /: missing "
               "required property 'h'");
    expect_bad(shapes, "{\"kind\":\"circle\",\"r\":\"big\",\"w\":1}",
               "/: does not match any schema in oneOf; the closest, oneOf/0, fails: /r: expected "
               "number, got string");
    expect_bad("{\"anyOf\":[{\"required\":[\"a\",\"b\"]},{\"required\":[\"c\",\"d\"]}]}", "{}",
               "/: does not match any schema in anyOf; the closest, anyOf/0, fails: /: missing "
               "required property 'a' (and 1 more there)");
    expect_bad("{\"oneOf\":[{\"type\":\"integer\"},{\"minimum\":0}]}", "3",
               "/: matches more than one schema in oneOf (oneOf/0 and oneOf/1), but must match "
               "exactly one");
    /* A nested anyOf inside a branch is not explained again (bounded cost). */
    expect_bad("{\"anyOf\":[{\"properties\":{\"a\":{\"anyOf\":[{\"type\":\"string\"},{"
               "\"minimum\":5}]}}},{\"required\":[\"zz\"]}]}",
               "{\"a\":1}",
               "/: does not match any schema in anyOf; the closest, anyOf/0, fails: /a: does not "
               "match any schema in anyOf");
}

/* Many failures: all in the report, as many as fit in err->msg, then "and N more". */
static void test_report(void **state) {
    (void)state;
    text schema = {0}, value = {0};
    put(&schema, "{\"type\":\"object\",\"properties\":{");
    put(&value, "{");
    for (int i = 0; i < 12; i++) {
        putf(&schema, "%s\"field_number_%02d\":{\"type\":\"integer\"}", i ? "," : "", i);
        putf(&value, "%s\"field_number_%02d\":\"not a number\"", i ? "," : "", i);
    }
    put(&schema, "}}");
    put(&value, "}");
    sst__json_schema *s = compile_ok(schema.data);
    sst_value *v = tu_json(value.data);
    sst_error err = {0};
    assert_int_equal(sst__json_schema_validate(s, v, &err), SST_EINVAL);
    assert_true(strlen(err.msg) < SST_ERROR_MSG_MAX);
    const char *first = "/field_number_00: expected integer, got string; "
                        "/field_number_01: expected integer, got string; ";
    assert_memory_equal(err.msg, first, strlen(first));
    const char *tail = strrchr(err.msg, ';');
    assert_non_null(tail);
    int shown = 0, more = 0;
    for (const char *p = err.msg; (p = strstr(p, "expected integer")) != NULL; p++) {
        shown++;
    }
    assert_int_equal(sscanf(tail, "; and %d more", &more), 1);
    assert_int_equal(shown + more, 12);

    char *report = NULL;
    assert_int_equal(sst__json_schema_validate_report(s, v, "arguments", 0, &report, &err),
                     SST_EINVAL);
    assert_non_null(report);
    assert_non_null(strstr(report, "arguments/field_number_07: expected integer, got string; "
                                   "and 4 more"));
    assert_null(strstr(report, "field_number_08"));
    sst__free(report);
    assert_int_equal(sst__json_schema_validate_report(s, v, NULL, 20, &report, &err), SST_EINVAL);
    assert_non_null(strstr(report, "/field_number_11: expected integer, got string"));
    assert_null(strstr(report, "more"));
    sst__free(report);
    /* A valid value: SST_OK, no report. */
    sst_value *good = tu_json("{\"field_number_00\":1}");
    report = (char *)"unchanged";
    assert_int_equal(sst__json_schema_validate_report(s, good, "x", 0, &report, &err), SST_OK);
    assert_null(report);
    /* With `where`, the value itself is named by the prefix alone. */
    sst__json_schema *obj = compile_ok("{\"required\":[\"q\"]}");
    assert_int_equal(sst__json_schema_validate_report(obj, good, "arguments", 0, NULL, &err),
                     SST_EINVAL);
    assert_string_equal(err.msg, "arguments: missing required property 'q'");
    /* err may be NULL. */
    assert_int_equal(sst__json_schema_validate(obj, good, NULL), SST_EINVAL);
    assert_int_equal(sst__json_schema_validate(NULL, good, &err), SST_EINVAL);
    assert_string_equal(err.msg, "json schema: no schema to validate");
    sst__json_schema_free(obj);
    sst_value_unref(good);
    sst_value_unref(v);
    sst__json_schema_free(s);
    free(schema.data);
    free(value.data);
}

/* ---- schema errors ---- */

static void test_schema_errors(void **state) {
    (void)state;
    expect_schema_error("{\"type\":5}", SST_EINVAL,
                        "schema at /: 'type' must be a string or an array of strings");
    expect_schema_error("{\"properties\":{\"a\":{\"type\":\"text\"}}}", SST_EINVAL,
                        "schema at /properties/a: 'type' names an unknown type \"text\" (expected "
                        "null, boolean, object, array, number, string or integer)");
    expect_schema_error("{\"type\":[\"string\",\"string\"]}", SST_EINVAL,
                        "schema at /: 'type' lists \"string\" twice");
    expect_schema_error("{\"required\":\"x\"}", SST_EINVAL,
                        "schema at /: 'required' must be an array of strings");
    expect_schema_error("{\"properties\":{\"age\":{\"minimum\":\"3\"}}}", SST_EINVAL,
                        "schema at /properties/age: 'minimum' must be a number");
    expect_schema_error("{\"items\":{\"minLength\":-1}}", SST_EINVAL,
                        "schema at /items: 'minLength' must be a non-negative integer");
    expect_schema_error("{\"maxItems\":1.5}", SST_EINVAL,
                        "schema at /: 'maxItems' must be a non-negative integer");
    expect_ok("{\"maxItems\":2.0}", "[1,2]");
    expect_schema_error("{\"multipleOf\":0}", SST_EINVAL,
                        "schema at /: 'multipleOf' must be greater than 0");
    expect_schema_error("{\"uniqueItems\":1}", SST_EINVAL,
                        "schema at /: 'uniqueItems' must be a boolean");
    expect_schema_error("{\"enum\":{}}", SST_EINVAL, "schema at /: 'enum' must be an array");
    expect_schema_error("{\"allOf\":[]}", SST_EINVAL,
                        "schema at /: 'allOf' must be a non-empty array of schemas");
    expect_schema_error("{\"anyOf\":[{},3]}", SST_EINVAL,
                        "schema at /anyOf/1: expected a schema (an object or a boolean), got "
                        "integer");
    expect_schema_error("{\"prefixItems\":[{}],\"items\":[{},{}]}", SST_EINVAL,
                        "schema at /: 'items' must be a schema when 'prefixItems' is present (an "
                        "array 'items' is draft 7's form of 'prefixItems')");
    expect_schema_error("{\"items\":[]}", SST_EINVAL,
                        "schema at /: 'items' must be a non-empty array of schemas");
    expect_schema_error("{\"properties\":[]}", SST_EINVAL,
                        "schema at /: 'properties' must be an object of schemas");
    expect_schema_error("{\"dependentRequired\":{\"a\":[1]}}", SST_EINVAL,
                        "schema at /dependentRequired/a: 'dependentRequired' must map names to "
                        "arrays of property names");
    expect_schema_error("{\"$defs\":{\"a\":{\"not\":7}}}", SST_EINVAL,
                        "schema at /$defs/a/not: expected a schema (an object or a boolean), got "
                        "integer");
    expect_schema_error("\"string\"", SST_EINVAL,
                        "schema at /: expected a schema (an object or a boolean), got string");
    expect_schema_error("{\"properties\":{\"a\":{\"$ref\":\"#/$defs/nope\"}}}", SST_EINVAL,
                        "schema at /properties/a: cannot resolve '$ref' \"#/$defs/nope\": nothing "
                        "is at that location");
    expect_schema_error("{\"$ref\":\"https://example.com/other.json\"}", SST_EINVAL,
                        "schema at /: cannot resolve '$ref' \"https://example.com/other.json\": "
                        "only references within this document are supported (no remote schemas)");
    expect_schema_error("{\"$ref\":\"#missing\"}", SST_EINVAL,
                        "schema at /: cannot resolve '$ref' \"#missing\": no '$anchor' "
                        "\"missing\"");
    expect_schema_error("{\"$ref\":5}", SST_EINVAL, "schema at /: '$ref' must be a string");
    expect_schema_error("{\"$anchor\":\"1x\"}", SST_EINVAL,
                        "schema at /: '$anchor' must be a name of letters, digits, '-', '.' and "
                        "'_'");
    expect_schema_error("{\"unevaluatedProperties\":false}", SST_EINVAL,
                        "schema at /: 'unevaluatedProperties' is not supported");
    expect_schema_error("{\"$defs\":{\"x\":{\"$dynamicRef\":\"#a\"}}}", SST_EINVAL,
                        "schema at /$defs/x: '$dynamicRef' is not supported");
    expect_schema_error("{\"pattern\":\"(ab\"}", SST_EINVAL,
                        "schema at /: 'pattern' \"(ab\" is not a supported regular expression: "
                        "unterminated group starting at offset 0");
    expect_schema_error("{\"properties\":{\"p\":{\"pattern\":\"a(?=b)\"}}}", SST_EINVAL,
                        "schema at /properties/p: 'pattern' \"a(?=b)\" is not a supported regular "
                        "expression: lookaround assertions ('(?=', '(?!', '(?<=', '(?<!') are not "
                        "supported");
    expect_schema_error("{\"pattern\":\"(a)\\\\1\"}", SST_EINVAL,
                        "schema at /: 'pattern' \"(a)\\\\1\" is not a supported regular "
                        "expression: backreferences ('\\1') are not supported");
    expect_schema_error("{\"patternProperties\":{\"[z-a]\":{}}}", SST_EINVAL,
                        "schema at /patternProperties/[z-a]: 'patternProperties' \"[z-a]\" is not "
                        "a supported regular expression: range out of order in the character "
                        "class at offset 0");
    expect_schema_error("{\"pattern\":\"a**\"}", SST_EINVAL,
                        "schema at /: 'pattern' \"a**\" is not a supported regular expression: "
                        "nothing to repeat at offset 2");
    expect_schema_error("{\"pattern\":\"\\\\p{L}\"}", SST_EINVAL,
                        "schema at /: 'pattern' \"\\\\p{L}\" is not a supported regular "
                        "expression: Unicode property escapes ('\\p{...}') are not supported");
    expect_schema_error("{\"pattern\":\"x{3,2}\"}", SST_EINVAL,
                        "schema at /: 'pattern' \"x{3,2}\" is not a supported regular "
                        "expression: numbers out of order in the quantifier at offset 1");
    expect_schema_error("{\"pattern\":\"[a-z]{20000}\"}", SST_EINVAL,
                        "schema at /: 'pattern' \"[a-z]{20000}\" is not a supported regular "
                        "expression: the pattern is too large: more than 10000 steps once its "
                        "counted repetitions ({n,m}) are expanded");
    expect_schema_error("{\"pattern\":\"((){1000}){1000}\"}", SST_EINVAL,
                        "schema at /: 'pattern' \"((){1000}){1000}\" is not a supported regular "
                        "expression: the pattern is too large: more than 10000 steps once its "
                        "counted repetitions ({n,m}) are expanded");
    expect_schema_error("{\"pattern\":\"a+{2}\"}", SST_EINVAL,
                        "schema at /: 'pattern' \"a+{2}\" is not a supported regular expression: "
                        "nothing to repeat at offset 2");
    expect_schema_error("{\"pattern\":\"(\"}", SST_EINVAL,
                        "schema at /: 'pattern' \"(\" is not a supported regular expression: "
                        "unterminated group starting at offset 0");
    expect_schema_error("{\"pattern\":\"[a\"}", SST_EINVAL,
                        "schema at /: 'pattern' \"[a\" is not a supported regular expression: "
                        "unterminated character class starting at offset 0");
    expect_schema_error("{\"pattern\":\"((((((((((((((((((((((((((((((((((a))))))))))))))))))))))))"
                        "))))))))))\"}",
                        SST_EINVAL,
                        "schema at /: 'pattern' \"((((((((((((((((((((((((((((((((((a)))))))))))))"
                        ")))))))))))))))))))))\" is not a supported regular expression: groups "
                        "nested deeper than 32");
    expect_schema_error("{\"pattern\":\"a)\"}", SST_EINVAL,
                        "schema at /: 'pattern' \"a)\" is not a supported regular expression: "
                        "unmatched ')' at offset 1");
    expect_schema_error("{\"pattern\":\"\\\\q\"}", SST_EINVAL,
                        "schema at /: 'pattern' \"\\\\q\" is not a supported regular expression: "
                        "unknown escape '\\q' at offset 0");
    sst_error err = {0};
    assert_null(sst__json_schema_compile(NULL, &err));
    assert_int_equal(err.code, SST_EINVAL);
    /* A NULL err is fine. */
    sst_value *bad = tu_json("{\"type\":5}");
    assert_null(sst__json_schema_compile(bad, NULL));
    sst_value_unref(bad);
    sst__json_schema_free(NULL);
}

/* Annotations are accepted, "format" is not asserted, unknown keywords are ignored. */
static void test_annotations(void **state) {
    (void)state;
    expect_ok(
        "{\"$schema\":\"https://json-schema.org/draft/2020-12/schema\",\"$id\":\"https://"
        "example.com/s\",\"$comment\":\"c\",\"title\":\"t\",\"description\":\"d\",\"default\":"
        "1,\"examples\":[1],\"format\":\"email\",\"readOnly\":true,\"writeOnly\":false,"
        "\"deprecated\":true,\"x-whatever\":{\"type\":5},\"contentMediaType\":\"text/x\"}",
        "\"not an email\"");
    /* Draft 7's tuple form of "items", with "additionalItems". */
    expect_bad("{\"items\":[{\"type\":\"string\"},{\"type\":\"integer\"}],\"additionalItems\":"
               "false}",
               "[\"a\",\"b\",3]",
               "/1: expected integer, got string; /2: no value is allowed here (the schema is "
               "false)");
    expect_ok("{\"items\":[{\"type\":\"string\"}]}", "[\"a\",1,{}]");
    /* draft-07 "definitions" and "dependencies" still work. */
    expect_bad("{\"definitions\":{\"n\":{\"type\":\"integer\"}},\"properties\":{\"a\":{\"$ref\":"
               "\"#/definitions/n\"}},\"dependencies\":{\"a\":[\"b\"]}}",
               "{\"a\":\"x\"}",
               "/: property 'b' is required when 'a' is present; /a: expected integer, got "
               "string");
    /* A pointer into an unknown keyword is compiled when a $ref names it. */
    expect_bad("{\"components\":{\"id\":{\"type\":\"string\"}},\"$ref\":\"#/components/id\"}", "5",
               "/: expected string, got integer");
    /* Anchors, %-escapes and $id-relative references. */
    expect_bad("{\"$id\":\"https://example.com/root.json\",\"$defs\":{\"a b\":{\"$anchor\":"
               "\"ab\",\"type\":\"integer\"},\"c\":{\"$id\":\"sub/c.json\",\"type\":\"string\"}},"
               "\"properties\":{\"x\":{\"$ref\":\"#/$defs/a%20b\"},\"y\":{\"$ref\":\"#ab\"},\"z\":{"
               "\"$ref\":\"sub/c.json\"},\"w\":{\"$ref\":\"https://example.com/root.json#/$defs/"
               "c\"}}}",
               "{\"x\":1,\"y\":\"s\",\"z\":2,\"w\":\"t\"}",
               "/y: expected integer, got string; /z: expected string, got integer");
}

/* ---- limits ---- */

/* A schema nested deeper than SST__JSON_SCHEMA_MAX_NESTING fails with SST_ELIMIT. */
static void test_deep_schema(void **state) {
    (void)state;
    text t = {0};
    for (int i = 0; i < 300; i++) {
        put(&t, "{\"items\":");
    }
    put(&t, "true");
    for (int i = 0; i < 300; i++) {
        put(&t, "}");
    }
    sst_value *schema = tu_json(t.data);
    sst_error err = {0};
    assert_null(sst__json_schema_compile(schema, &err));
    assert_int_equal(err.code, SST_ELIMIT);
    assert_non_null(strstr(err.msg, "subschemas nested deeper than 128"));
    assert_true(strncmp(err.msg, "schema at /items/items/", 23) == 0);
    assert_non_null(strstr(err.msg, "..."));
    sst_value_unref(schema);
    free(t.data);

    /* Built with the value API, far deeper than the JSON reader allows. */
    sst_value *deep = sst_bool(true);
    for (int i = 0; i < 100000; i++) {
        deep = sst_object_set_take(sst_object_empty(), "not", deep, &err);
        assert_non_null(deep);
    }
    assert_null(sst__json_schema_compile(deep, &err));
    assert_int_equal(err.code, SST_ELIMIT);
    sst_value_unref(deep);
}

/* A value nested deeper than SST__JSON_SCHEMA_MAX_DEPTH stops validation with SST_ELIMIT. */
static void test_deep_value(void **state) {
    (void)state;
    sst__json_schema *s =
        compile_ok("{\"$defs\":{\"n\":{\"type\":\"array\",\"items\":{\"$ref\":\"#/$defs/n\"}}},"
                   "\"$ref\":\"#/$defs/n\"}");
    for (int depth = 60; depth <= 200; depth += 70) {
        text t = {0};
        for (int i = 0; i < depth; i++) {
            put(&t, "[");
        }
        for (int i = 0; i < depth; i++) {
            put(&t, "]");
        }
        sst_value *v = tu_json(t.data);
        sst_error err = {0};
        sst_code rc = sst__json_schema_validate(s, v, &err);
        if (depth <= SST__JSON_SCHEMA_MAX_DEPTH) {
            assert_sst_ok(rc, &err);
        } else {
            assert_int_equal(rc, SST_ELIMIT);
            assert_non_null(strstr(err.msg, ": the value is nested deeper than 64 levels"));
            assert_true(strncmp(err.msg, "/0/0/0/0", 8) == 0);
            assert_true(strlen(err.msg) < 200);
        }
        sst_value_unref(v);
        free(t.data);
    }
    sst__json_schema_free(s);
}

/* Many schemas applied at each of many levels: the bound on nested evaluations stops it. */
static void test_deep_evaluation(void **state) {
    (void)state;
    text t = {0};
    put(&t, "{\"$defs\":{\"n\":");
    for (int i = 0; i < 12; i++) {
        put(&t, "{\"allOf\":[");
    }
    put(&t, "{\"items\":{\"$ref\":\"#/$defs/n\"}}");
    for (int i = 0; i < 12; i++) {
        put(&t, "]}");
    }
    put(&t, "},\"$ref\":\"#/$defs/n\"}");
    sst__json_schema *s = compile_ok(t.data);
    free(t.data);
    memset(&t, 0, sizeof t);
    for (int i = 0; i < 60; i++) {
        put(&t, "[");
    }
    for (int i = 0; i < 60; i++) {
        put(&t, "]");
    }
    sst_value *v = tu_json(t.data);
    sst_error err = {0};
    assert_int_equal(sst__json_schema_validate(s, v, &err), SST_ELIMIT);
    assert_non_null(strstr(err.msg, ": validation nested deeper than 512 schemas"));
    sst_value_unref(v);
    free(t.data);
    /* Shallower, the same schema is fine. */
    v = tu_json("[[[[[]]]]]");
    assert_sst_ok(sst__json_schema_validate(s, v, &err), &err);
    sst_value_unref(v);
    sst__json_schema_free(s);
}

/* "$ref" cycles that never descend into the value are refused when compiling. */
static void test_ref_cycles(void **state) {
    (void)state;
    expect_schema_error("{\"$ref\":\"#\"}", SST_EINVAL,
                        "schema at /: '$ref' cycle: applying this schema leads back to it without "
                        "descending into the instance (it would never end)");
    expect_schema_error("{\"$defs\":{\"a\":{\"$ref\":\"#/$defs/b\"},\"b\":{\"allOf\":[{\"not\":{"
                        "\"$ref\":\"#/$defs/a\"}}]}},\"properties\":{\"x\":{\"$ref\":\"#/$defs/"
                        "a\"}}}",
                        SST_EINVAL,
                        "schema at /$defs/a: '$ref' cycle: applying this schema leads back to it "
                        "without descending into the instance (it would never end)");
    /* Recursion through a property is fine: each step goes one level into the value. */
    expect_bad("{\"properties\":{\"next\":{\"$ref\":\"#\"},\"v\":{\"type\":\"integer\"}}}",
               "{\"next\":{\"next\":{\"v\":\"x\"}}}", "/next/next/v: expected integer, got string");
    /* A long acyclic chain of references is refused too. */
    text t = {0};
    put(&t, "{\"$defs\":{");
    for (int i = 0; i < 100; i++) {
        putf(&t, "%s\"d%d\":{\"$ref\":\"#/$defs/d%d\"}", i ? "," : "", i, i + 1);
    }
    put(&t, ",\"d100\":{\"type\":\"string\"}},\"$ref\":\"#/$defs/d0\"}");
    sst_value *schema = tu_json(t.data);
    sst_error err = {0};
    assert_null(sst__json_schema_compile(schema, &err));
    assert_int_equal(err.code, SST_ELIMIT);
    assert_non_null(strstr(err.msg, "more than 64 schemas ('$ref', 'allOf', 'not', ...) apply in "
                                    "a row to one value"));
    sst_value_unref(schema);
    free(t.data);
}

/*
 * A schema whose work doubles at each level of the value (two anyOf branches
 * that both fail only at the bottom) stops at the step budget, which bounds
 * the work whatever the schema (bench_schema times it).
 */
static void test_costly_schema(void **state) {
    (void)state;
    sst__json_schema *s = compile_ok(
        "{\"$defs\":{\"n\":{\"anyOf\":[{\"properties\":{\"x\":{\"$ref\":\"#/$defs/n\"}}},{"
        "\"properties\":{\"x\":{\"$ref\":\"#/$defs/n\"}}}],\"type\":\"object\"}},\"$ref\":\"#/"
        "$defs/n\"}");
    text t = {0};
    for (int i = 0; i < 40; i++) {
        put(&t, "{\"x\":");
    }
    put(&t, "1");
    for (int i = 0; i < 40; i++) {
        put(&t, "}");
    }
    sst_value *v = tu_json(t.data);
    sst_error err = {0};
    assert_int_equal(sst__json_schema_validate(s, v, &err), SST_ELIMIT);
    assert_true(strncmp(err.msg, "/x/x/", 5) == 0);
    /* The budget, grown once by 64 steps for each of the value's 41 values. */
    char want[96];
    snprintf(want, sizeof want, ": validation stopped after %d steps",
             SST__JSON_SCHEMA_MAX_STEPS + 64 * 41);
    assert_non_null(strstr(err.msg, want));
    assert_non_null(strstr(err.msg, " steps: the schema is too costly for this value"));
    sst_value_unref(v);
    sst__json_schema_free(s);
    free(t.data);
}

/* ---- patterns ---- */

typedef struct rx_case {
    const char *pattern; /* as JSON string content */
    const char *text;    /* as JSON string content */
    bool match;
} rx_case;

static void test_patterns(void **state) {
    (void)state;
    static const rx_case cases[] = {
        {"abc", "xxabcxx", true},
        {"^abc$", "abc", true},
        {"^abc$", "abcd", false},
        {"^a.c$", "a\\u00e9c", true}, /* '.' is one code point */
        {"^a.c$", "a\\nc", false},    /* not a line terminator */
        {"^a.c$", "a\\u2028c", false},
        {"^\\\\d{3}-\\\\d{4}$", "555-1234", true},
        {"^\\\\d+$", "12a", false},
        {"^\\\\d+$", "\\u0661", false}, /* \d is ASCII only */
        {"^\\\\w+$", "snake_case9", true},
        {"^\\\\w+$", "caf\\u00e9", false},
        {"^\\\\s+$", " \\t\\u00a0\\u3000\\ufeff", true},
        {"^\\\\S+$", "a b", false},
        {"^\\\\D\\\\W$", "a!", true},
        {"^[^\\\\d\\\\s]+$", "abc", true},
        {"^[^\\\\d\\\\s]+$", "ab c", false},
        {"^[\\\\D]$", "5", false},
        {"^[a\\\\D]$", "x", true},
        {"^[\\\\w-]+$", "a-b_c", true},
        {"^[\\\\w.-]+@[\\\\w-]+\\\\.[a-z]{2,}$", "me.x@ex-1.com", true},
        {"^[\\u4e00-\\u9fa5]+$", "\\u4e2d\\u6587", true},
        {"^[\\u4e00-\\u9fa5]+$", "\\u4e2dx", false},
        {"^[\\u00e0-\\u00fc]$", "\\u00e9", true},
        {"^[\\\\u0041-\\\\u005A]+$", "ABC", true},
        {"^\\\\u{1F600}$", "\\ud83d\\ude00", true},
        {"^\\\\ud83d\\\\ude00$", "\\ud83d\\ude00", true},
        {"^\\ud83d\\ude00+$", "\\ud83d\\ude00\\ud83d\\ude00", true},
        {"^\\\\x41\\\\t$", "A\\t", true},
        {"^\\\\cJ$", "\\n", true},
        {"^a\\\\0b$", "a\\u0000b", true},
        {"\\\\bcat\\\\b", "a cat here", true},
        {"\\\\bcat\\\\b", "concatenate", false},
        {"\\\\Bcat\\\\B", "concatenate", true},
        {"^(?:ab)+$", "ababab", true},
        {"^(?<year>\\\\d{4})-(?<m>\\\\d{2})$", "2024-05", true},
        {"^(cat|dog)s?$", "dogs", true},
        {"^(cat|dog)s?$", "cow", false},
        {"^a{2,3}$", "aaaa", false},
        {"^a{2,}$", "aaaaaa", true},
        {"^a{2}$", "aa", true},
        {"^a+?b*?c??$", "aab", true},
        {"a{", "xa{y", true},   /* a '{' that starts no quantifier is itself */
        {"^[]$", "", false},    /* matches nothing */
        {"^[^]$", "\\n", true}, /* matches anything */
        {"^[-a]+$", "-a-", true},
        {"^[a-]+$", "-a-", true},
        {"^[\\\\]\\\\[]+$", "][", true},
        {"^[\\\\^]$", "^", true},
        {"^\\\\.\\\\*\\\\+\\\\?\\\\(\\\\)\\\\{\\\\}\\\\|\\\\/$", ".*+?(){}|/", true},
        {"^(a|aa)*b$", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", false},
        {"^(a*)*$", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab", false},
        {"", "anything", true},
        {"^$", "", true},
        {"x|", "y", true}, /* an empty alternative matches */
        {"^(){3}x{2}?$", "xx", true},
        {"^(?:a|b|){2,3}$", "ab", true},
        {"^[a-c]{2}$|^z$", "z", true},
        {"^[a-c]{2}$|^z$", "zz", false},
    };
    for (size_t i = 0; i < SST_ARRAY_LEN(cases); i++) {
        char schema[256], value[256];
        snprintf(schema, sizeof schema, "{\"pattern\":\"%s\"}", cases[i].pattern);
        snprintf(value, sizeof value, "\"%s\"", cases[i].text);
        sst__json_schema *s = compile_ok(schema);
        sst_value *v = tu_json(value);
        sst_error err = {0};
        sst_code rc = sst__json_schema_validate(s, v, &err);
        if ((rc == SST_OK) != cases[i].match) {
            fail_msg("pattern %s against %s: want %s, got %s %s", schema, value,
                     cases[i].match ? "a match" : "no match", sst_code_name(rc), err.msg);
        }
        sst_value_unref(v);
        sst__json_schema_free(s);
    }
}

/*
 * Patterns that make backtracking (or glibc's regexec) slow run in time
 * linear in the text: counted repetition against long non-ASCII text. Each
 * search ends with its answer (no match) within the step budget, that is at
 * most 1 000 steps per character; a backtracking matcher would pass the
 * budget (SST_ELIMIT). bench_schema times them.
 */
static void test_hard_patterns(void **state) {
    (void)state;
    text t = {0};
    put(&t, "\"");
    for (int i = 0; i < 20000; i++) {
        put(&t, "\\u4e00");
    }
    put(&t, "\"");
    sst_value *v = tu_json(t.data);
    static const char *const patterns[] = {".{1,100}y", "^(.{1,200})+$y", "(a|aa)*b",
                                           "^[^x]{1,500}$"};
    for (size_t i = 0; i < SST_ARRAY_LEN(patterns); i++) {
        char schema[128], want[128];
        snprintf(schema, sizeof schema, "{\"pattern\":\"%s\"}", patterns[i]);
        snprintf(want, sizeof want, "/: does not match the pattern '%s'", patterns[i]);
        sst__json_schema *s = compile_ok(schema);
        sst_error err = {0};
        sst_code rc = sst__json_schema_validate(s, v, &err);
        if (rc != SST_EINVAL || strcmp(err.msg, want) != 0) {
            fail_msg("pattern %s: want SST_EINVAL \"%s\", got %s \"%s\"", patterns[i], want,
                     sst_code_name(rc), err.msg);
        }
        sst__json_schema_free(s);
    }
    sst_value_unref(v);
    free(t.data);
}

/* ---- big inputs ---- */

static void test_big_inputs(void **state) {
    (void)state;
    sst__json_schema *s = compile_ok(
        "{\"type\":\"array\",\"items\":{\"type\":\"object\",\"properties\":{\"id\":{\"type\":"
        "\"integer\",\"minimum\":0},\"name\":{\"type\":\"string\",\"pattern\":\"^[a-z]+[0-9]*$\"}},"
        "\"required\":[\"id\",\"name\"],\"additionalProperties\":false}}");
    text t = {0};
    put(&t, "[");
    for (int i = 0; i < 100000; i++) {
        putf(&t, "%s{\"id\":%d,\"name\":\"item%d\"}", i ? "," : "", i, i);
    }
    put(&t, "]");
    sst_value *v = tu_json(t.data);
    sst_error err = {0};
    assert_sst_ok(sst__json_schema_validate(s, v, &err), &err);
    sst_value_unref(v);
    /* The same with the last one bad. */
    memcpy(t.data + t.len - 3, "!\"}]", 4);
    v = tu_json(t.data);
    assert_int_equal(sst__json_schema_validate(s, v, &err), SST_EINVAL);
    assert_string_equal(err.msg, "/99999/name: does not match the pattern '^[a-z]+[0-9]*$'");
    sst_value_unref(v);
    sst__json_schema_free(s);
    free(t.data);

    /* uniqueItems over 200000 numbers with one repeat near the end: hashed, not n^2. */
    s = compile_ok("{\"uniqueItems\":true}");
    memset(&t, 0, sizeof t);
    put(&t, "[");
    for (int i = 0; i < 200000; i++) {
        putf(&t, "%s%d", i ? "," : "", i);
    }
    put(&t, ",17.0]");
    v = tu_json(t.data);
    assert_int_equal(sst__json_schema_validate(s, v, &err), SST_EINVAL);
    assert_string_equal(err.msg, "/: expected unique items, but items 17 and 200000 are equal");
    sst_value_unref(v);
    sst__json_schema_free(s);
    free(t.data);

    /* A 1 MB string against a pattern and maxLength. */
    s = compile_ok("{\"maxLength\":1000000,\"pattern\":\"^[a-z]*$\"}");
    char *big = malloc(1000004);
    assert_non_null(big);
    big[0] = '"';
    for (int i = 1; i <= 1000000; i++) {
        big[i] = (char)('a' + i % 26);
    }
    memcpy(big + 1000001, "\"", 2);
    v = tu_json(big);
    assert_int_equal(sst_string_len(v), 1000000);
    assert_sst_ok(sst__json_schema_validate(s, v, &err), &err);
    sst_value_unref(v);
    big[1000000] = 'A';
    v = tu_json(big);
    assert_int_equal(sst__json_schema_validate(s, v, &err), SST_EINVAL);
    assert_string_equal(err.msg, "/: does not match the pattern '^[a-z]*$'");
    sst_value_unref(v);
    memcpy(big + 1000000, "xy\"", 4);
    v = tu_json(big);
    assert_int_equal(sst__json_schema_validate(s, v, &err), SST_EINVAL);
    assert_string_equal(err.msg, "/: expected at most 1000000 characters, got 1000001");
    sst_value_unref(v);
    sst__json_schema_free(s);
    free(big);

    /*
     * 3 000 000 items, 8 evaluations each: more than SST__JSON_SCHEMA_MAX_STEPS, but the
     * budget grows with the value, so it is checked in full.
     */
    s = compile_ok("{\"items\":{\"anyOf\":[{\"type\":\"string\"},{\"allOf\":[{\"type\":"
                   "\"integer\"},{\"minimum\":0},{\"maximum\":9},{\"not\":{\"const\":-1}}]}]}}");
    big = malloc(6000002);
    assert_non_null(big);
    big[0] = '[';
    for (int i = 0; i < 3000000; i++) {
        big[1 + 2 * i] = (char)('0' + i % 10);
        big[2 + 2 * i] = ',';
    }
    memcpy(big + 6000000, "]", 2);
    v = tu_json(big);
    free(big);
    assert_sst_ok(sst__json_schema_validate(s, v, &err), &err);
    sst_value_unref(v);
    sst__json_schema_free(s);

    /* An enum of 10000 values and an object of 10000 properties. */
    memset(&t, 0, sizeof t);
    put(&t, "{\"properties\":{\"e\":{\"enum\":[");
    for (int i = 0; i < 10000; i++) {
        putf(&t, "%s\"value-%d\"", i ? "," : "", i);
    }
    put(&t, "]}},\"additionalProperties\":{\"type\":\"integer\"}}");
    s = compile_ok(t.data);
    free(t.data);
    memset(&t, 0, sizeof t);
    put(&t, "{\"e\":\"value-9999\"");
    for (int i = 0; i < 10000; i++) {
        putf(&t, ",\"k%d\":%d", i, i);
    }
    put(&t, "}");
    v = tu_json(t.data);
    assert_sst_ok(sst__json_schema_validate(s, v, &err), &err);
    sst_value_unref(v);
    v = tu_json("{\"e\":\"value-10000\"}");
    assert_int_equal(sst__json_schema_validate(s, v, &err), SST_EINVAL);
    assert_true(strncmp(err.msg, "/e: must be one of [\"value-0\",\"value-1\",", 39) == 0);
    assert_non_null(strstr(err.msg, "..., got \"value-10000\""));
    sst_value_unref(v);
    sst__json_schema_free(s);
    free(t.data);
}

/* ---- threads ---- */

typedef struct thread_arg {
    const sst__json_schema *s;
    sst_value *good, *bad;
    int failures;
} thread_arg;

static void *validate_many(void *p) {
    thread_arg *a = p;
    for (int i = 0; i < 2000; i++) {
        sst_error err = {0};
        if (sst__json_schema_validate(a->s, a->good, &err) != SST_OK) {
            a->failures++;
        }
        if (sst__json_schema_validate(a->s, a->bad, &err) != SST_EINVAL ||
            strcmp(err.msg, "/name: does not match the pattern '^[A-Z][a-z]+$'; /tags/1: "
                            "expected string or null, got integer") != 0) {
            a->failures++;
        }
    }
    return NULL;
}

/* One compiled schema, validated from 8 threads at once. */
static void test_threads(void **state) {
    (void)state;
    sst__json_schema *s = compile_ok(
        "{\"properties\":{\"name\":{\"pattern\":\"^[A-Z][a-z]+$\"},\"tags\":{\"items\":{\"anyOf\":"
        "[{\"type\":\"string\"},{\"type\":\"null\"}]}}}}");
    thread_arg args[8];
    pthread_t th[8];
    for (int i = 0; i < 8; i++) {
        args[i] = (thread_arg){s, tu_json("{\"name\":\"Ada\",\"tags\":[\"x\",null]}"),
                               tu_json("{\"name\":\"ada\",\"tags\":[\"x\",3]}"), 0};
        assert_int_equal(pthread_create(&th[i], NULL, validate_many, &args[i]), 0);
    }
    for (int i = 0; i < 8; i++) {
        assert_int_equal(pthread_join(th[i], NULL), 0);
        assert_int_equal(args[i].failures, 0);
        sst_value_unref(args[i].good);
        sst_value_unref(args[i].bad);
    }
    sst__json_schema_free(s);
}

/* ---- out of memory ---- */

/* Every allocation of compile and of a failing validation fails in turn: ENOMEM, no leak. */
static void test_oom(void **state) {
    (void)state;
    sst_value *schema = tu_json(
        "{\"$id\":\"https://x.example/"
        "s\",\"$defs\":{\"n\":{\"$anchor\":\"n\",\"type\":\"integer\"}},"
        "\"properties\":{\"a\":{\"$ref\":\"#n\"},\"b\":{\"pattern\":\"^[a-z]{2,4}\\\\d$\"},\"c\":{"
        "\"anyOf\":[{\"type\":\"string\"},{\"required\":[\"z\"]}]},\"d\":{\"uniqueItems\":true}},"
        "\"patternProperties\":{\"^x\":{\"enum\":[1,2]}},\"propertyNames\":{\"maxLength\":5},"
        "\"required\":[\"q\"],\"$ref\":\"#/"
        "$defs/x\"}");
    sst_value *v = tu_json(
        "{\"a\":\"s\",\"b\":\"abc\",\"c\":{},\"toolong\":1,\"d\":[1,2,3,4,5,6,7,8,9,10,11,12,"
        "13,14,15,16,17,18,1],\"x1\":3}");
    long baseline = tu_chaos_live();
    /* An unresolvable $ref at the end: compile fails after allocating everything else. */
    for (long n = 1;; n++) {
        tu_chaos_fail_at(n);
        sst_error err = {0};
        sst__json_schema *s = sst__json_schema_compile(schema, &err);
        int fired = tu_chaos_fired();
        tu_chaos_off();
        assert_null(s);
        if (!fired) {
            assert_int_equal(err.code, SST_EINVAL);
            break;
        }
        if (err.code != SST_ENOMEM) {
            fail_msg("allocation %ld failed: want SST_ENOMEM, got %s %s", n,
                     sst_code_name(err.code), err.msg);
        }
        assert_int_equal(tu_chaos_live(), baseline);
    }
    sst_value *fixed = sst_object_remove_take(sst_value_ref(schema), "$ref", NULL);
    assert_non_null(fixed);
    baseline = tu_chaos_live();
    sst__json_schema *kept = NULL;
    for (long n = 1;; n++) {
        tu_chaos_fail_at(n);
        sst_error err = {0};
        sst__json_schema *s = sst__json_schema_compile(fixed, &err);
        int fired = tu_chaos_fired();
        tu_chaos_off();
        if (!fired) {
            assert_non_null(s);
            kept = s;
            break;
        }
        if (s != NULL) {
            sst__json_schema_free(s);
            continue; /* a failed allocation the compiler could do without */
        }
        assert_int_equal(err.code, SST_ENOMEM);
        assert_int_equal(tu_chaos_live(), baseline);
    }
    char *full = NULL;
    sst_error want = {0};
    assert_int_equal(sst__json_schema_validate_report(kept, v, NULL, 0, &full, &want), SST_EINVAL);
    baseline = tu_chaos_live();
    for (long n = 1;; n++) {
        tu_chaos_fail_at(n);
        sst_error err = {0};
        char *report = NULL;
        sst_code rc = sst__json_schema_validate_report(kept, v, NULL, 0, &report, &err);
        int fired = tu_chaos_fired();
        tu_chaos_off();
        if (!fired) {
            assert_int_equal(rc, SST_EINVAL);
            assert_string_equal(report, full);
            assert_string_equal(err.msg, want.msg);
            sst__free(report);
            break;
        }
        if (rc != SST_ENOMEM) {
            fail_msg("allocation %ld failed: want SST_ENOMEM, got %s %s", n, sst_code_name(rc),
                     err.msg);
        }
        assert_null(report);
        assert_int_equal(tu_chaos_live(), baseline);
    }
    print_message("oom: %s\n", want.msg);
    sst__free(full);
    sst__json_schema_free(kept);
    sst_value_unref(fixed);
    sst_value_unref(schema);
    sst_value_unref(v);
}

int main(void) {
    tu_chaos_install();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_suite),           cmocka_unit_test(test_messages),
        cmocka_unit_test(test_messages_anyof),  cmocka_unit_test(test_report),
        cmocka_unit_test(test_schema_errors),   cmocka_unit_test(test_annotations),
        cmocka_unit_test(test_deep_schema),     cmocka_unit_test(test_deep_value),
        cmocka_unit_test(test_deep_evaluation), cmocka_unit_test(test_ref_cycles),
        cmocka_unit_test(test_costly_schema),   cmocka_unit_test(test_patterns),
        cmocka_unit_test(test_hard_patterns),   cmocka_unit_test(test_big_inputs),
        cmocka_unit_test(test_threads),         cmocka_unit_test(test_oom),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
