/* SPDX-License-Identifier: MIT */
/*
 * Chat-completion responses: a streamed reply (content tokens, two tool
 * calls whose ids, names and arguments arrive in fragments) assembles into
 * the same message whether its server-sent events arrive whole or one byte
 * at a time; truncated and malformed streams are errors; whole bodies parse.
 * Token usage (the last chunk's, asked for with stream_options.include_usage,
 * or a body's) becomes usage_metadata, and the model and finish reason
 * response_metadata, in LangChain's names.
 */
#include <stdio.h>
#include <string.h>

#include "agent/completion.h"
#include "agent/sse.h"
#include "test_util.h"

static const char k_stream[] =
    "data: {\"id\":\"r1\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\","
    "\"content\":\"Hel\"}}]}\n\n"
    "data: {\"id\":\"r1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"lo\"}}]}\n\n"
    ": keep-alive\n\n"
    "data: {\"id\":\"r1\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,"
    "\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"name\":\"search\","
    "\"arguments\":\"\"}}]}}]}\n\n"
    "data: {\"id\":\"r1\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":1,"
    "\"id\":\"call_2\",\"function\":{\"name\":\"clock\",\"arguments\":\"{}\"}}]}}]}\n\n"
    "data: {\"id\":\"r1\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,"
    "\"function\":{\"arguments\":\"{\\\"q\\\":\"}}]}}]}\n\n"
    "data: {\"id\":\"r1\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,"
    "\"function\":{\"arguments\":\"\\\"caf\\u00e9\\\"}\"}}]}}]}\n\n"
    "data: {\"id\":\"r1\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":"
    "\"tool_calls\"}]}\n\n"
    "data: [DONE]\n\n";

static const char k_message[] =
    "{\"role\":\"assistant\",\"content\":\"Hello\",\"tool_calls\":["
    "{\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"name\":\"search\","
    "\"arguments\":\"{\\\"q\\\":\\\"caf\\u00e9\\\"}\"}},"
    "{\"id\":\"call_2\",\"type\":\"function\",\"function\":{\"name\":\"clock\","
    "\"arguments\":\"{}\"}}],"
    "\"response_metadata\":{\"finish_reason\":\"tool_calls\",\"model_provider\":\"openai\"}}";

typedef struct run {
    sst__completion c;
    sst_error err;
    sst__buf tokens; /* "tok|tok|" */
} run;

static sst_code on_token(const char *text, size_t len, void *ud) {
    run *r = ud;
    sst__buf_append(&r->tokens, text, len);
    sst__buf_putc(&r->tokens, '|');
    return SST_OK;
}

static sst_code on_event(const char *event, const char *data, size_t len, void *ud) {
    (void)event;
    run *r = ud;
    return sst__completion_chunk(&r->c, data, len, &r->err);
}

/* Streams @p text through the SSE parser in chunks of @p chunk bytes; returns the message. */
static sst_value *stream(const char *text, size_t n, size_t chunk, char **tokens, sst_error *out) {
    run r;
    memset(&r, 0, sizeof r);
    sst__buf_init(&r.tokens);
    sst__completion_init(&r.c, on_token, &r);
    sst__sse p;
    sst__sse_init(&p, 1 << 20, on_event, &r);
    sst_code rc = SST_OK;
    for (size_t i = 0; i < n && rc == SST_OK; i += chunk) {
        rc = sst__sse_feed(&p, text + i, chunk < n - i ? chunk : n - i, &r.err);
    }
    if (rc == SST_OK) {
        rc = sst__sse_finish(&p, &r.err);
    }
    sst_value *m = rc == SST_OK ? sst__completion_message(&r.c, &r.err) : NULL;
    *out = r.err;
    sst__buf_putc(&r.tokens, '\0');
    *tokens = r.tokens.data;
    sst__sse_free(&p);
    sst__completion_free(&r.c);
    return m;
}

static void test_stream_assembles(void **state) {
    (void)state;
    size_t chunks[] = {sizeof k_stream - 1, 1, 2, 7, 64};
    for (size_t i = 0; i < SST_ARRAY_LEN(chunks); i++) {
        char *tokens;
        sst_error err;
        sst_value *m = stream(k_stream, sizeof k_stream - 1, chunks[i], &tokens, &err);
        if (m == NULL) {
            print_error("chunk %zu: %s\n", chunks[i], err.msg);
            fail();
        }
        assert_json_eq(m, k_message);
        assert_string_equal(tokens, "Hel|lo|");
        sst_value_unref(m);
        sst__free(tokens);
    }
}

static void expect_stream_error(const char *text, const char *needle) {
    char *tokens;
    sst_error err;
    sst_value *m = stream(text, strlen(text), 3, &tokens, &err);
    sst__free(tokens);
    if (m != NULL || strstr(err.msg, needle) == NULL) {
        print_error("expected an error with '%s', got '%s'\n", needle,
                    m != NULL ? "a message" : err.msg);
        sst_value_unref(m);
        fail();
    }
    assert_int_equal(err.code, SST_EPARSE);
}

static void test_stream_errors(void **state) {
    (void)state;
    /* Cut off: no finish_reason and no [DONE]. */
    expect_stream_error("data: {\"choices\":[{\"delta\":{\"content\":\"Hi\"}}]}\n\n", "truncated");
    /* Cut off inside an event. */
    expect_stream_error("data: {\"choices\":[{\"delta\":{\"content\":\"Hi\"}}]}\n\ndata: {\"cho",
                        "ended inside an event");
    /* Malformed JSON in a chunk names the position. */
    expect_stream_error("data: {\"choices\":[{\"delta\":{\"content\":\"Hi\"}}]\n\n",
                        "chat completion chunk");
    expect_stream_error("data: {\"choices\":[{\"delta\":{\"content\":\"Hi\"}}]\n\n", "column");
    expect_stream_error("data: [1,2]\n\n", "not {\"choices\"");
    expect_stream_error("data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"id\":\"x\"}]}}]}\n\n",
                        "without a valid index");
}

static void test_whole_body(void **state) {
    (void)state;
    const char body[] =
        "{\"id\":\"r2\",\"object\":\"chat.completion\",\"choices\":[{\"index\":0,\"message\":{"
        "\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":\"c\",\"type\":"
        "\"function\",\"function\":{\"name\":\"f\",\"arguments\":\"{}\"}}]},"
        "\"finish_reason\":\"tool_calls\"}],\"usage\":{\"total_tokens\":9}}";
    sst_error err = {0};
    sst_value *m = sst__completion_parse_body(body, sizeof body - 1, &err);
    assert_non_null(m);
    assert_json_eq(m,
                   "{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":\"c\","
                   "\"type\":\"function\",\"function\":{\"name\":\"f\",\"arguments\":\"{}\"}}],"
                   "\"usage_metadata\":{\"input_tokens\":0,\"output_tokens\":0,\"total_tokens\":9},"
                   "\"response_metadata\":{\"finish_reason\":\"tool_calls\",\"model_provider\":"
                   "\"openai\"}}");
    sst_value_unref(m);
    assert_null(sst__completion_parse_body("{\"error\":{\"message\":\"bad key\"}}", 31, &err));
    assert_int_equal(err.code, SST_EPARSE);
    assert_non_null(strstr(err.msg, "without choices[0].message"));
    err = (sst_error){0};
    assert_null(sst__completion_parse_body("<html>", 6, &err));
    assert_non_null(strstr(err.msg, "chat completion"));
}

/* The final usage chunk (no choices) of a stream that asked for it, fed in pieces of any size. */
static void test_stream_usage(void **state) {
    (void)state;
    static const char text[] =
        "data: {\"id\":\"c1\",\"model\":\"gpt-4o-2024-08-06\",\"choices\":[{\"index\":0,"
        "\"delta\":{\"role\":\"assistant\",\"content\":\"Hi\"},\"finish_reason\":null}],"
        "\"usage\":null}\n\n"
        "data: {\"id\":\"c1\",\"model\":\"gpt-4o-2024-08-06\",\"choices\":[{\"index\":0,"
        "\"delta\":{},\"finish_reason\":\"stop\"}],\"usage\":null}\n\n"
        "data: {\"id\":\"c1\",\"model\":\"gpt-4o-2024-08-06\",\"choices\":[],\"usage\":{"
        "\"prompt_tokens\":1200,\"completion_tokens\":340,\"total_tokens\":1540,"
        "\"prompt_tokens_details\":{\"cached_tokens\":1024,\"audio_tokens\":0},"
        "\"completion_tokens_details\":{\"reasoning_tokens\":256}}}\n\n"
        "data: [DONE]\n\n";
    static const char expected[] =
        "{\"role\":\"assistant\",\"content\":\"Hi\",\"usage_metadata\":{\"input_tokens\":1200,"
        "\"output_tokens\":340,\"total_tokens\":1540,\"input_token_details\":{\"audio\":0,"
        "\"cache_read\":1024},\"output_token_details\":{\"reasoning\":256}},"
        "\"response_metadata\":{\"model_name\":\"gpt-4o-2024-08-06\",\"finish_reason\":"
        "\"stop\",\"model_provider\":\"openai\"}}";
    size_t chunks[] = {sizeof text - 1, 1, 3, 64};
    for (size_t i = 0; i < SST_ARRAY_LEN(chunks); i++) {
        char *tokens;
        sst_error err;
        sst_value *m = stream(text, sizeof text - 1, chunks[i], &tokens, &err);
        if (m == NULL) {
            print_error("chunk %zu: %s\n", chunks[i], err.msg);
            fail();
        }
        assert_json_eq(m, expected);
        assert_string_equal(tokens, "Hi|");
        sst_value_unref(m);
        sst__free(tokens);
    }
    /* A server that sends no usage: no usage_metadata, and none made up. */
    char *tokens;
    sst_error err;
    size_t cut =
        (size_t)(strstr(text,
                        "data: {\"id\":\"c1\",\"model\":\"gpt-4o-2024-08-06\",\"choices\":[]") -
                 text);
    sst_value *m = stream(text, cut, 5, &tokens, &err);
    assert_non_null(m);
    assert_null(sst_object_get(m, "usage_metadata"));
    assert_string_equal(
        sst_string_cstr(sst_object_get(sst_object_get(m, "response_metadata"), "finish_reason")),
        "stop");
    sst_value_unref(m);
    sst__free(tokens);
}

static void test_body_usage(void **state) {
    (void)state;
    const char body[] =
        "{\"id\":\"b\",\"object\":\"chat.completion\",\"model\":\"o3-mini-2025-01-31\","
        "\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"42\"},"
        "\"finish_reason\":\"length\"}],\"usage\":{\"prompt_tokens\":19,\"completion_tokens\":"
        "210,\"total_tokens\":229,\"completion_tokens_details\":{\"reasoning_tokens\":192,"
        "\"audio_tokens\":null}}}";
    sst_error err = {0};
    sst_value *m = sst__completion_parse_body(body, sizeof body - 1, &err);
    assert_non_null(m);
    assert_json_eq(m, "{\"role\":\"assistant\",\"content\":\"42\",\"usage_metadata\":{"
                      "\"input_tokens\":19,\"output_tokens\":210,\"total_tokens\":229,"
                      "\"output_token_details\":{\"reasoning\":192}},\"response_metadata\":{"
                      "\"model_name\":\"o3-mini-2025-01-31\",\"finish_reason\":\"length\","
                      "\"model_provider\":\"openai\"}}");
    sst_value_unref(m);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stream_assembles), cmocka_unit_test(test_stream_errors),
        cmocka_unit_test(test_whole_body),       cmocka_unit_test(test_stream_usage),
        cmocka_unit_test(test_body_usage),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
