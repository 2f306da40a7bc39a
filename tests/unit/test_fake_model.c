/* SPDX-License-Identifier: MIT */
/* The scripted offline model: replies in order, tokens word by word, clear errors. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/fake_model.h"
#include "test_util.h"

/* Appends "token|" to the 256-byte buffer @p ud. */
static sst_code collect(const char *t, size_t n, void *ud) {
    char *buf = ud;
    size_t used = strlen(buf);
    snprintf(buf + used, 256 - used, "%.*s|", (int)n, t);
    return SST_OK;
}

static void test_replays_in_order(void **state) {
    (void)state;
    char path[64];
    tu_temp_file("{\"content\":\"Let me look  that "
                 "up\",\"tool_calls\":[{\"id\":\"c1\",\"type\":\"function\","
                 "\"function\":{\"name\":\"search\",\"arguments\":\"{\\\"q\\\":\\\"x\\\"}\"}}]}\n"
                 "\n"
                 "  {\"content\":\"Done.\"}\r\n",
                 path, sizeof path);
    sst__fake_model m;
    sst_error err = {0};
    assert_int_equal(sst__fake_model_load(&m, path, &err), SST_OK);
    remove(path);
    char tokens[256] = "";
    sst_value *r1 = sst__fake_model_chat(&m, collect, tokens, &err);
    assert_non_null(r1);
    assert_string_equal(tokens, "Let |me |look  |that |up|");
    assert_string_equal(sst_string_cstr(sst_object_get(r1, "role")), "assistant");
    assert_int_equal(sst_array_len(sst_object_get(r1, "tool_calls")), 1);
    sst_value *r2 = sst__fake_model_chat(&m, NULL, NULL, &err);
    assert_json_eq(r2, "{\"content\":\"Done.\",\"role\":\"assistant\"}");
    assert_null(sst__fake_model_chat(&m, NULL, NULL, &err));
    assert_int_equal(err.code, SST_ERANGE);
    assert_string_equal(err.msg, "fake model: the script has no reply 3 (it holds 2)");
    sst_value_unref(r1);
    sst_value_unref(r2);
    sst__fake_model_free(&m);
}

static void test_bad_scripts(void **state) {
    (void)state;
    sst__fake_model m;
    sst_error err = {0};
    assert_int_equal(sst__fake_model_load(&m, "/nonexistent/replies.jsonl", &err), SST_EIO);
    assert_string_equal(err.msg, "fake model: cannot open '/nonexistent/replies.jsonl'");
    sst__fake_model_free(&m);
    char path[64];
    tu_temp_file("{\"content\":\"ok\"}\n{\"content\": oops}\n", path, sizeof path);
    err = (sst_error){0};
    assert_int_equal(sst__fake_model_load(&m, path, &err), SST_EPARSE);
    assert_non_null(strstr(err.msg, "line 2"));
    sst__fake_model_free(&m);
    remove(path);
    tu_temp_file("[1,2]\n", path, sizeof path);
    err = (sst_error){0};
    assert_int_equal(sst__fake_model_load(&m, path, &err), SST_EPARSE);
    assert_non_null(strstr(err.msg, "line 1: a reply must be a JSON object"));
    sst__fake_model_free(&m);
    remove(path);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_replays_in_order),
        cmocka_unit_test(test_bad_scripts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
