/* SPDX-License-Identifier: MIT */
/*
 * Tools: the schema list for the model, argument checks with locations, and
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
    /* Locations are JSON Pointers under "arguments" (they were "arguments.tags[0]" before the
     * JSON Schema validator), and every failure is listed, not only the first. */
    expect_content(&t, CALL("add", "{\\\"a\\\":2}"),
                   "error: bad arguments for 'add': arguments: missing required property 'b'");
    expect_content(&t, CALL("add", "{\\\"a\\\":2,\\\"b\\\":\\\"x\\\"}"),
                   "error: bad arguments for 'add': arguments/b: expected integer, got string");
    expect_content(&t, CALL("add", "{\\\"a\\\":2.5,\\\"b\\\":4.0}"),
                   "error: bad arguments for 'add': arguments/a: expected integer, got number");
    expect_content(&t, CALL("add", "[]"),
                   "error: bad arguments for 'add': arguments: expected object, got array");
    expect_content(&t, CALL("search", "{\\\"q\\\":\\\"x\\\",\\\"mode\\\":\\\"slow\\\"}"),
                   "error: bad arguments for 'search': arguments/mode: must be one of "
                   "[\"fast\",\"deep\"], got \"slow\"");
    expect_content(&t, CALL("search", "{\\\"q\\\":\\\"x\\\",\\\"tags\\\":[1]}"),
                   "error: bad arguments for 'search': arguments/tags/0: expected string, got "
                   "integer");
    expect_content(&t, CALL("search", "{\\\"mode\\\":1,\\\"tags\\\":[\\\"a\\\",2,3]}"),
                   "error: bad arguments for 'search': arguments: missing required property 'q'; "
                   "arguments/mode: must be one of [\"fast\",\"deep\"], got 1; arguments/tags/1: "
                   "expected string, got integer; arguments/tags/2: expected string, got integer");
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
    /* The schema is compiled when the tool is added: a bad one is refused then. */
    p = tu_json("{\"type\":\"object\",\"properties\":{\"n\":{\"type\":\"int\"}}}");
    assert_int_equal(sst__tools_add(&t, "x", "", p, add, NULL, &err), SST_EINVAL);
    assert_string_equal(err.msg, "tools: the parameters of 'x' are not a valid schema: schema at "
                                 "/properties/n: 'type' names an unknown type \"int\" (expected "
                                 "null, boolean, object, array, number, string or integer)");
    sst_value_unref(p);
    assert_int_equal(t.n, 2);
    for (size_t i = 0; i < t.n; i++) {
        assert_non_null(t.items[i].check);
        assert_ptr_equal(sst__json_schema_source(t.items[i].check), t.items[i].parameters);
    }
    /* extend copies the tools with schemas of their own. */
    sst__tools u;
    sst__tools_init(&u);
    assert_sst_ok(sst__tools_extend(&u, &t, &err), &err);
    assert_non_null(u.items[1].check);
    assert_true(u.items[1].check != t.items[1].check);
    sst__tools_free(&u);
    sst__tools_free(&t);
}

/* sst__schema_check compiles and validates in one call, naming locations from its path. */
static void test_schema_check(void **state) {
    (void)state;
    sst_error err = {0};
    sst_value *schema = tu_json("{\"type\":\"object\",\"properties\":{\"a\":{\"type\":"
                                "\"integer\"},\"b\":{\"items\":{\"enum\":[1,2]}}},\"required\":["
                                "\"a\"]}");
    sst_value *v = tu_json("{\"a\":1,\"b\":[1,2]}");
    assert_sst_ok(sst__schema_check(schema, v, "args", &err), &err);
    sst_value_unref(v);
    v = tu_json("{\"b\":[1,3]}");
    assert_int_equal(sst__schema_check(schema, v, "args", &err), SST_EINVAL);
    assert_string_equal(err.msg, "args: missing required property 'a'; args/b/1: must be one of "
                                 "[1,2], got 3");
    assert_int_equal(sst__schema_check(schema, v, "", &err), SST_EINVAL);
    assert_string_equal(err.msg,
                        "/: missing required property 'a'; /b/1: must be one of [1,2], got 3");
    assert_sst_ok(sst__schema_check(NULL, v, "args", &err), &err);
    sst_value_unref(schema);
    schema = tu_json("{\"required\":7}");
    assert_int_equal(sst__schema_check(schema, v, "args", &err), SST_EINVAL);
    assert_string_equal(err.msg, "schema at /: 'required' must be an array of strings");
    sst_value_unref(schema);
    schema = tu_json("false");
    assert_int_equal(sst__schema_check(schema, v, "args", &err), SST_EINVAL);
    assert_string_equal(err.msg, "args: no value is allowed here (the schema is false)");
    sst_value_unref(schema);
    sst_value_unref(v);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_calls),
        cmocka_unit_test(test_registry),
        cmocka_unit_test(test_schema_check),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
