/* SPDX-License-Identifier: MIT */
/*
 * Tools: the schema list for the model, argument checks with paths, and
 * every failure (unknown tool, arguments that are not JSON or do not match,
 * a failing tool) as a tool message rather than a failed run.
 */
#include <stdio.h>
#include <string.h>

#include "agent/tools.h"
#include "test_util.h"

static sst_value *add(const sst_value *args, void *ud, sst_error *err) {
    (void)ud;
    return sst_int_new(
        sst_int_value(sst_object_get(args, "a")) + sst_int_value(sst_object_get(args, "b")), err);
}

static sst_value *lookup(const sst_value *args, void *ud, sst_error *err) {
    (void)ud;
    const char *q = sst_string_cstr(sst_object_get(args, "q"));
    if (strcmp(q, "nothing") == 0) {
        err->code = SST_ENOTFOUND;
        snprintf(err->msg, sizeof err->msg, "no document matches '%s'", q);
        return NULL;
    }
    return sst_json_parse("{\"hits\":[\"doc1\",\"doc2\"]}", err);
}

static void setup(sst__tools *t) {
    sst_error err = {0};
    sst__tools_init(t);
    sst_value *p = tu_json("{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"integer\"},"
                           "\"b\":{\"type\":\"integer\"}},\"required\":[\"a\",\"b\"]}");
    assert_sst_ok(sst__tools_add(t, "add", "Adds two integers.", p, add, NULL, &err), &err);
    sst_value_unref(p);
    p = tu_json("{\"type\":\"object\",\"properties\":{\"q\":{\"type\":\"string\"},\"mode\":{"
                "\"enum\":[\"fast\",\"deep\"]},\"tags\":{\"type\":\"array\",\"items\":{\"type\":"
                "\"string\"}}},\"required\":[\"q\"]}");
    assert_sst_ok(sst__tools_add(t, "search", "Searches.", p, lookup, NULL, &err), &err);
    sst_value_unref(p);
}

static void expect_content(const sst__tools *t, const char *call_json, const char *want) {
    sst_value *call = tu_json(call_json);
    sst_error err = {0};
    sst_value *m = sst__tools_call(t, call, &err);
    assert_non_null(m);
    const char *got = sst_string_cstr(sst_object_get(m, "content"));
    if (strcmp(got, want) != 0) {
        print_error("want %s\ngot  %s\n", want, got);
        fail();
    }
    assert_string_equal(sst_string_cstr(sst_object_get(m, "role")), "tool");
    assert_true(sst_value_equal(sst_object_get(m, "tool_call_id"), sst_object_get(call, "id")));
    sst_value_unref(m);
    sst_value_unref(call);
}

#define CALL(name, args)                                                                           \
    "{\"id\":\"c1\",\"type\":\"function\",\"function\":{\"name\":\"" name                          \
    "\",\"arguments\":\"" args "\"}}"

static void test_calls(void **state) {
    (void)state;
    sst__tools t;
    setup(&t);
    expect_content(&t, CALL("add", "{\\\"a\\\":2,\\\"b\\\":40}"), "42");
    expect_content(&t, CALL("search", "{\\\"q\\\":\\\"x\\\",\\\"tags\\\":[\\\"t\\\"]}"),
                   "{\"hits\":[\"doc1\",\"doc2\"]}");
    expect_content(&t, CALL("nope", "{}"), "error: unknown tool 'nope'");
    expect_content(&t, CALL("add", "{\\\"a\\\":2"),
                   "error: the arguments of 'add' are not JSON: "
                   "expected ',' or '}' after an object member, found end of input at line 1, "
                   "column 7");
    expect_content(&t, CALL("add", "{\\\"a\\\":2}"),
                   "error: bad arguments for 'add': arguments: missing required 'b'");
    expect_content(&t, CALL("add", "{\\\"a\\\":2,\\\"b\\\":\\\"x\\\"}"),
                   "error: bad arguments for 'add': arguments.b: expected integer, got string");
    expect_content(&t, CALL("search", "{\\\"q\\\":\\\"x\\\",\\\"mode\\\":\\\"slow\\\"}"),
                   "error: bad arguments for 'search': arguments.mode: must be one of "
                   "[\"fast\",\"deep\"]");
    expect_content(&t, CALL("search", "{\\\"q\\\":\\\"x\\\",\\\"tags\\\":[1]}"),
                   "error: bad arguments for 'search': arguments.tags[0]: expected string, got "
                   "integer");
    expect_content(&t, CALL("search", "{\\\"q\\\":\\\"nothing\\\"}"),
                   "error: tool 'search' failed: no document matches 'nothing'");
    sst__tools_free(&t);
}

static void test_registry(void **state) {
    (void)state;
    sst__tools t;
    setup(&t);
    sst_error err = {0};
    sst_value *schema = sst__tools_schema(&t, &err);
    assert_int_equal(sst_array_len(schema), 2);
    assert_string_equal(sst_string_cstr(sst_object_get(
                            sst_object_get(sst_array_get(schema, 1), "function"), "name")),
                        "search");
    sst_value_unref(schema);
    sst_value *p = tu_json("{\"type\":\"object\"}");
    assert_int_equal(sst__tools_add(&t, "add", "", p, add, NULL, &err), SST_EINVAL);
    assert_string_equal(err.msg, "tools: duplicate tool 'add'");
    sst_value_unref(p);
    p = tu_json("{\"type\":\"string\"}");
    assert_int_equal(sst__tools_add(&t, "x", "", p, add, NULL, &err), SST_EINVAL);
    assert_non_null(strstr(err.msg, "must be an object schema"));
    sst_value_unref(p);
    sst__tools_free(&t);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_calls),
        cmocka_unit_test(test_registry),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
