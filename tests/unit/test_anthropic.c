/* SPDX-License-Identifier: MIT */
/*
 * Anthropic's Messages API as a provider (src/agent/anthropic*.c) and usage
 * accounting (src/agent/usage.c). Without a server: the request built from a
 * conversation (system blocks, tool_use from tool calls, tool results grouped
 * into one user turn, thinking blocks restored, prompt caching, params), the
 * replies recorded in tests/data/llm assembled from their events fed in
 * pieces of every size, error events, whole bodies, usage sums, and every
 * allocation failing in turn. Against tests/agent/replay_server.py on
 * 127.0.0.1, which replays those recordings: the headers and bodies the
 * client sends, retries (an overloaded stream, 429 with retry-after, 529, a
 * stream cut off), permanent errors quoted, and the key kept out of errors.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent/anthropic.h"
#include "agent/http.h"
#include "agent/sse.h"
#include "agent/usage.h"
#include "replay_client.h"
#include "test_util.h"

#define KEY_ENV "SST_TEST_ANTHROPIC_KEY"
#define SECRET  "SECRETKEY123"
#define KEY     "sk-ant-api03-" SECRET "-abcdefAA"

/* ---- the replay server -------------------------------------------------- */

static pid_t g_server;
static char g_base[64]; /* "http://127.0.0.1:PORT" */

static int start_server(void **state) {
    (void)state;
    char buf[512];
    const char *script = getenv("SST_REPLAY_SERVER");
    if (script == NULL) {
        script = tu_data_path("../agent/replay_server.py", buf, sizeof buf);
    }
    int port;
    g_server = tu_python_server_start(script, &port);
    if (g_server < 0) {
        return -1;
    }
    snprintf(g_base, sizeof g_base, "http://127.0.0.1:%d", port);
    return 0;
}

static int stop_server(void **state) {
    (void)state;
    tu_server_stop(g_server);
    g_server = 0;
    return 0;
}

/* What the server got in the last request for @p model: {count, path, headers, body}. */
static sst_value *last_request(const char *model) {
    return replay_last_request(g_base, model);
}

static int64_t request_count(const char *model) {
    sst_value *r = last_request(model);
    int64_t n = sst_int_value(sst_object_get(r, "count"));
    sst_value_unref(r);
    return n;
}

/* ---- helpers ------------------------------------------------------------ */

typedef struct tokens {
    sst__buf text; /* "tok|tok|" */
} tokens;

static sst_code on_token(const char *text, size_t len, void *ud) {
    tokens *k = ud;
    sst__buf_append(&k->text, text, len);
    sst__buf_putc(&k->text, '|');
    return SST_OK;
}

static const char *tokens_text(tokens *k) {
    sst__buf_putc(&k->text, '\0');
    k->text.len--;
    return k->text.data;
}

static void config(sst__llm_config *c, const char *model, bool stream, unsigned attempts) {
    sst__llm_config_init(c);
    c->provider = SST__LLM_ANTHROPIC;
    c->base_url = g_base;
    c->model = model;
    c->stream = stream;
    c->max_attempts = attempts;
    c->retry_base_ms = 20;
    c->timeout_ms = 120000; /* only the server's replies matter, never the machine's speed */
    c->api_key_env = KEY_ENV;
}

static const char k_hello[] = "[{\"role\":\"user\",\"content\":\"hi\"}]";

/* One call of @p model with the conversation @p msgs_json (and tokens into @p k, if not NULL). */
static sst_value *chat(const sst__llm_config *c, const char *msgs_json, const sst_value *tools,
                       tokens *k, sst_error *err) {
    sst_value *msgs = tu_json(msgs_json);
    *err = (sst_error){0};
    sst_value *m = sst__model_chat(c, msgs, tools, k != NULL ? on_token : NULL, k, err);
    sst_value_unref(msgs);
    return m;
}

/* The body of the recording tests/data/llm/@p name (malloc'd), after its headers. */
static char *recording_body(const char *name, size_t *len) {
    char rel[128], path[512];
    snprintf(rel, sizeof rel, "llm/%s", name);
    size_t n = 0;
    char *text = tu_read_file(tu_data_path(rel, path, sizeof path), &n);
    if (text == NULL) {
        fail_msg("cannot read %s", path);
    }
    char *body = strstr(text, "\n\n");
    assert_non_null(body);
    body += 2;
    *len = n - (size_t)(body - text);
    memmove(text, body, *len + 1);
    return text;
}

/* Fails unless @p msg holds @p needle, printing both. */
static void assert_has(const char *msg, const char *needle) {
    if (strstr(msg, needle) == NULL) {
        fail_msg("expected '%s' in: %s", needle, msg);
    }
}

static void assert_no_secret(const char *msg) {
    if (strstr(msg, SECRET) != NULL) {
        fail_msg("the key leaked into: %s", msg);
    }
}

/* ---- usage -------------------------------------------------------------- */

static void test_usage_conversions(void **state) {
    (void)state;
    sst_error err = {0};
    sst_value *u =
        tu_json("{\"prompt_tokens\":1200,\"completion_tokens\":340,\"total_tokens\":1540,"
                "\"prompt_tokens_details\":{\"cached_tokens\":1024,\"audio_tokens\":0},"
                "\"completion_tokens_details\":{\"reasoning_tokens\":256}}");
    sst_value *m = sst__usage_from_openai(u, &err);
    assert_json_eq(m, "{\"input_tokens\":1200,\"output_tokens\":340,\"total_tokens\":1540,"
                      "\"input_token_details\":{\"audio\":0,\"cache_read\":1024},"
                      "\"output_token_details\":{\"reasoning\":256}}");
    sst_value_unref(m);
    sst_value_unref(u);
    /* No details reported: none made up; no total: the sum. */
    u = tu_json("{\"prompt_tokens\":3,\"completion_tokens\":4,\"prompt_tokens_details\":null}");
    m = sst__usage_from_openai(u, &err);
    assert_json_eq(m, "{\"input_tokens\":3,\"output_tokens\":4,\"total_tokens\":7}");
    sst_value_unref(m);
    sst_value_unref(u);
    /* Anthropic: the cached tokens are input tokens too (LangChain). */
    u = tu_json("{\"input_tokens\":21,\"cache_creation_input_tokens\":1800,"
                "\"cache_read_input_tokens\":100,\"output_tokens\":12}");
    m = sst__usage_from_anthropic(u, &err);
    assert_json_eq(m, "{\"input_tokens\":1921,\"output_tokens\":12,\"total_tokens\":1933,"
                      "\"input_token_details\":{\"cache_read\":100,\"cache_creation\":1800}}");
    sst_value_unref(m);
    sst_value_unref(u);
    u = tu_json("{\"input_tokens\":5,\"output_tokens\":6}");
    m = sst__usage_from_anthropic(u, &err);
    assert_json_eq(m, "{\"input_tokens\":5,\"output_tokens\":6,\"total_tokens\":11}");
    sst_value_unref(m);
    sst_value_unref(u);
    assert_int_equal(err.code, SST_OK);
}

static void test_usage_add(void **state) {
    (void)state;
    sst_error err = {0};
    sst_value *total = NULL;
    sst_value *a = tu_json("{\"input_tokens\":10,\"output_tokens\":2,\"total_tokens\":12,"
                           "\"input_token_details\":{\"cache_read\":4}}");
    sst_value *b = tu_json("{\"input_tokens\":1,\"output_tokens\":1,\"total_tokens\":2,"
                           "\"input_token_details\":{\"cache_read\":1,\"cache_creation\":7},"
                           "\"output_token_details\":{\"reasoning\":3},\"note\":\"x\"}");
    assert_sst_ok(sst__usage_add(&total, a, &err), &err);
    assert_json_eq(total, "{\"input_tokens\":10,\"output_tokens\":2,\"total_tokens\":12,"
                          "\"input_token_details\":{\"cache_read\":4}}");
    assert_sst_ok(sst__usage_add(&total, b, &err), &err);
    assert_sst_ok(sst__usage_add(&total, NULL, &err), &err); /* a reply without usage */
    assert_json_eq(total, "{\"input_tokens\":11,\"output_tokens\":3,\"total_tokens\":14,"
                          "\"input_token_details\":{\"cache_read\":5,\"cache_creation\":7},"
                          "\"output_token_details\":{\"reasoning\":3}}");
    assert_json_eq(a, "{\"input_tokens\":10,\"output_tokens\":2,\"total_tokens\":12,"
                      "\"input_token_details\":{\"cache_read\":4}}"); /* not changed */
    /* Not an object: an error, and the total stays as it was. */
    sst_value *bad = tu_json("[1]");
    assert_int_equal(sst__usage_add(&total, bad, &err), SST_EINVAL);
    assert_has(err.msg, "expected a usage_metadata object, got array");
    assert_int_equal(sst_int_value(sst_object_get(total, "input_tokens")), 11);
    assert_int_equal(sst__usage_add(&total, bad, NULL), SST_EINVAL);
    /* A sum past INT64_MAX stays at the limit. */
    sst_value *huge = tu_json("{\"input_tokens\":9223372036854775807}");
    assert_sst_ok(sst__usage_add(&total, huge, &err), &err);
    assert_int_equal(sst_int_value(sst_object_get(total, "input_tokens")), INT64_MAX);
    sst_value_unref(huge);
    sst_value_unref(bad);
    sst_value_unref(a);
    sst_value_unref(b);
    sst_value_unref(total);
}

/* ---- the request -------------------------------------------------------- */

static const char k_conversation[] =
    "[{\"role\":\"system\",\"content\":\"You are terse.\"},"
    "{\"role\":\"system\",\"content\":[{\"type\":\"text\",\"text\":\"Answer in French.\"}]},"
    "{\"role\":\"user\",\"content\":\"Weather in Paris, and the time?\",\"id\":\"u1\"},"
    "{\"role\":\"assistant\",\"id\":\"a1\",\"content\":["
    "{\"type\":\"thinking\",\"thinking\":\"Two tools.\",\"signature\":\"sig1\"},"
    "{\"type\":\"redacted_thinking\",\"data\":\"abc\"},{\"type\":\"text\",\"text\":\"Checking.\"}],"
    "\"tool_calls\":[{\"id\":\"toolu_1\",\"type\":\"function\",\"function\":{\"name\":"
    "\"get_weather\",\"arguments\":\"{\\\"location\\\":\\\"Paris\\\"}\"}},"
    "{\"id\":\"toolu_2\",\"type\":\"function\",\"function\":{\"name\":\"get_time\","
    "\"arguments\":\"\"}}],"
    "\"usage_metadata\":{\"input_tokens\":1,\"output_tokens\":2,\"total_tokens\":3},"
    "\"response_metadata\":{\"stop_reason\":\"tool_use\"}},"
    "{\"role\":\"tool\",\"tool_call_id\":\"toolu_1\",\"name\":\"get_weather\","
    "\"content\":\"18C, cloudy\"},"
    "{\"role\":\"tool\",\"tool_call_id\":\"toolu_2\",\"name\":\"get_time\","
    "\"content\":\"error: the clock is broken\"},"
    "{\"role\":\"user\",\"content\":\"Thanks. And tomorrow?\"},"
    "{\"role\":\"assistant\",\"content\":\"\"},"
    "{\"role\":\"assistant\",\"content\":\"Demain : soleil.\"}]";

static const char k_tools[] =
    "[{\"type\":\"function\",\"function\":{\"name\":\"get_weather\",\"description\":\"Weather "
    "of a place\",\"parameters\":{\"type\":\"object\",\"properties\":{\"location\":{\"type\":"
    "\"string\"}},\"required\":[\"location\"]}}},"
    "{\"type\":\"function\",\"function\":{\"name\":\"get_time\"}}]";

static const char k_expected_messages[] =
    "[{\"role\":\"user\",\"content\":\"Weather in Paris, and the time?\"},"
    "{\"role\":\"assistant\",\"content\":["
    "{\"type\":\"thinking\",\"thinking\":\"Two tools.\",\"signature\":\"sig1\"},"
    "{\"type\":\"redacted_thinking\",\"data\":\"abc\"},{\"type\":\"text\",\"text\":\"Checking.\"},"
    "{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"get_weather\",\"input\":{\"location\":"
    "\"Paris\"}},"
    "{\"type\":\"tool_use\",\"id\":\"toolu_2\",\"name\":\"get_time\",\"input\":{}}]},"
    "{\"role\":\"user\",\"content\":["
    "{\"type\":\"tool_result\",\"tool_use_id\":\"toolu_1\",\"content\":\"18C, cloudy\"},"
    "{\"type\":\"tool_result\",\"tool_use_id\":\"toolu_2\",\"content\":\"error: the clock is "
    "broken\",\"is_error\":true},"
    "{\"type\":\"text\",\"text\":\"Thanks. And tomorrow?\"}]},"
    "{\"role\":\"assistant\",\"content\":\"Demain : soleil.\"}]";

static const char k_expected_tools[] =
    "[{\"name\":\"get_weather\",\"description\":\"Weather of a place\",\"input_schema\":{"
    "\"type\":\"object\",\"properties\":{\"location\":{\"type\":\"string\"}},\"required\":["
    "\"location\"]}},"
    "{\"name\":\"get_time\",\"input_schema\":{\"type\":\"object\",\"properties\":{}}}]";

static void test_request_conversion(void **state) {
    (void)state;
    sst__llm_config c;
    sst__llm_config_init(&c);
    c.provider = SST__LLM_ANTHROPIC;
    c.model = "claude-x";
    sst_value *msgs = tu_json(k_conversation);
    sst_value *tools = tu_json(k_tools);
    sst_error err = {0};
    sst_value *r = sst__anthropic_request(&c, msgs, tools, &err);
    if (r == NULL) {
        fail_msg("%s", err.msg);
    }
    assert_json_eq(sst_object_get(r, "messages"), k_expected_messages);
    assert_json_eq(sst_object_get(r, "system"),
                   "[{\"type\":\"text\",\"text\":\"You are terse.\"},"
                   "{\"type\":\"text\",\"text\":\"Answer in French.\"}]");
    assert_json_eq(sst_object_get(r, "tools"), k_expected_tools);
    assert_int_equal(sst_int_value(sst_object_get(r, "max_tokens")), SST__ANTHROPIC_MAX_TOKENS);
    assert_true(sst_bool_value(sst_object_get(r, "stream")));
    assert_string_equal(sst_string_cstr(sst_object_get(r, "model")), "claude-x");
    assert_int_equal(sst_object_len(r), 6);
    /* The members come in the order Anthropic's reference writes them. */
    assert_string_equal(sst_string_cstr(sst_object_key_at(r, 0)), "model");
    assert_string_equal(sst_string_cstr(sst_object_key_at(r, 1)), "max_tokens");
    sst_value_unref(r);
    /* The caller's conversation is not changed. */
    assert_json_eq(msgs, k_conversation);
    sst_value_unref(msgs);
    sst_value_unref(tools);
}

static void test_request_cache_and_params(void **state) {
    (void)state;
    sst__llm_config c;
    sst__llm_config_init(&c);
    c.model = "claude-x";
    c.stream = false;
    c.cache_prompt = true;
    sst_value *params =
        tu_json("{\"max_tokens\":16000,\"temperature\":1,\"thinking\":{\"type\":\"enabled\","
                "\"budget_tokens\":10000},\"tool_choice\":{\"type\":\"auto\"},\"top_p\":0.9,"
                "\"stop_sequences\":[\"END\"],\"metadata\":{\"user_id\":\"u-1\"}}");
    c.params = params;
    sst_value *msgs = tu_json(k_conversation);
    sst_value *tools = tu_json(k_tools);
    sst_error err = {0};
    sst_value *r = sst__anthropic_request(&c, msgs, tools, &err);
    assert_non_null(r);
    assert_json_eq(sst_object_get(r, "system"),
                   "[{\"type\":\"text\",\"text\":\"You are terse.\"},{\"type\":\"text\",\"text\":"
                   "\"Answer in French.\",\"cache_control\":{\"type\":\"ephemeral\"}}]");
    const sst_value *tl = sst_object_get(r, "tools");
    assert_null(sst_object_get(sst_array_get(tl, 0), "cache_control"));
    assert_json_eq(sst_object_get(sst_array_get(tl, 1), "cache_control"),
                   "{\"type\":\"ephemeral\"}");
    for (size_t i = 0; i < sst_object_len(params); i++) { /* params win, as they are */
        const char *k = sst_string_cstr(sst_object_key_at(params, i));
        assert_true(sst_value_equal(sst_object_get(r, k), sst_object_value_at(params, i)));
    }
    assert_false(sst_bool_value(sst_object_get(r, "stream")));
    sst_value_unref(r);
    assert_json_eq(tools, k_tools); /* the caller's tools are not changed */
    sst_value_unref(tools);
    sst_value_unref(msgs);
    /* No system prompt and no tools: neither member, and nothing to cache. */
    msgs =
        tu_json("[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"look\"},"
                "{\"type\":\"image_url\",\"image_url\":{\"url\":\"data:image/png;base64,iVBO\"}},"
                "{\"type\":\"image_url\",\"image_url\":{\"url\":\"https://x.test/a.jpg\"}},"
                "{\"type\":\"thinking\",\"thinking\":\"not the user's\"}]}]");
    c.params = NULL;
    r = sst__anthropic_request(&c, msgs, NULL, &err);
    assert_non_null(r);
    assert_null(sst_object_get(r, "system"));
    assert_null(sst_object_get(r, "tools"));
    assert_json_eq(sst_object_get(r, "messages"),
                   "[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"look\"},"
                   "{\"type\":\"image\",\"source\":{\"type\":\"base64\",\"media_type\":"
                   "\"image/png\",\"data\":\"iVBO\"}},{\"type\":\"image\",\"source\":{\"type\":"
                   "\"url\",\"url\":\"https://x.test/a.jpg\"}}]}]");
    sst_value_unref(r);
    sst_value_unref(params);
    sst_value_unref(msgs);
}

static void expect_request_error(const char *msgs_json, const char *tools_json,
                                 const char *needle) {
    sst__llm_config c;
    sst__llm_config_init(&c);
    c.model = "claude-x";
    sst_value *msgs = tu_json(msgs_json);
    sst_value *tools = tools_json != NULL ? tu_json(tools_json) : NULL;
    sst_error err = {0};
    sst_value *r = sst__anthropic_request(&c, msgs, tools, &err);
    if (r != NULL) {
        sst_value_unref(r);
        fail_msg("expected an error with '%s' for %s", needle, msgs_json);
    }
    assert_int_equal(err.code, SST_EINVAL);
    assert_has(err.msg, needle);
    /* Without an err: NULL all the same. */
    assert_null(sst__anthropic_request(&c, msgs, tools, NULL));
    sst_value_unref(msgs);
    sst_value_unref(tools);
}

static void test_request_errors(void **state) {
    (void)state;
    expect_request_error("[{\"role\":\"user\",\"content\":\"a\"},{\"role\":\"critic\","
                         "\"content\":\"b\"}]",
                         NULL, "messages[1] has role 'critic'");
    expect_request_error("[1]", NULL, "messages[0] is integer, not an object");
    expect_request_error("[{\"role\":\"user\",\"content\":42}]", NULL,
                         "messages[0] has content of type integer");
    expect_request_error("[{\"role\":\"user\",\"content\":[7]}]", NULL,
                         "messages[0] has a content block of type integer");
    expect_request_error("[{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":\"c\","
                         "\"function\":{\"name\":\"f\",\"arguments\":\"{oops\"}}]}]",
                         NULL, "messages[0]: the arguments of tool call 'f' are not JSON");
    expect_request_error("[{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":\"c\","
                         "\"function\":{\"name\":\"f\",\"arguments\":\"[1]\"}}]}]",
                         NULL, "the arguments of tool call 'f' are array, not an object");
    expect_request_error(
        "[{\"role\":\"assistant\",\"tool_calls\":[{\"function\":{\"name\":\"f\"}}]}]", NULL,
        "tool_calls[0] needs an id and a function name");
    expect_request_error("[{\"role\":\"assistant\",\"tool_calls\":{}}]", NULL,
                         "tool_calls is object, not an array");
    expect_request_error("[{\"role\":\"tool\",\"content\":\"x\"}]", NULL,
                         "messages[0]: a tool message needs a tool_call_id");
    expect_request_error("[{\"role\":\"user\",\"content\":\"a\"}]", "[{\"type\":\"function\"}]",
                         "tools[0] is not");
    expect_request_error("{\"role\":\"user\"}", NULL, "messages must be an array");
}

/* ---- the reply ---------------------------------------------------------- */

typedef struct feed {
    sst__anthropic_stream s;
    sst_error err;
} feed;

static sst_code feed_event(const char *event, const char *data, size_t len, void *ud) {
    feed *f = ud;
    return sst__anthropic_stream_event(&f->s, event, data, len, &f->err);
}

/*
 * Feeds @p body (@p n bytes) through the event-stream parser in pieces of
 * @p chunk bytes; returns the message, or NULL with *out (and *transient).
 */
static sst_value *assemble(const char *body, size_t n, size_t chunk, tokens *k, sst_error *out,
                           bool *transient) {
    feed f;
    memset(&f, 0, sizeof f);
    sst__anthropic_stream_init(&f.s, k != NULL ? on_token : NULL, k);
    sst__sse p;
    sst__sse_init(&p, 1 << 20, feed_event, &f);
    sst_code rc = SST_OK;
    for (size_t i = 0; i < n && rc == SST_OK; i += chunk) {
        rc = sst__sse_feed(&p, body + i, chunk < n - i ? chunk : n - i, &f.err);
    }
    if (rc == SST_OK) {
        rc = sst__sse_finish(&p, &f.err);
    }
    sst_value *m = rc == SST_OK ? sst__anthropic_stream_message(&f.s, &f.err) : NULL;
    *out = f.err;
    if (transient != NULL) {
        *transient = f.s.transient;
    }
    sst__sse_free(&p);
    sst__anthropic_stream_free(&f.s);
    return m;
}

static const char k_text_message[] =
    "{\"role\":\"assistant\",\"content\":\"Hello! How can I help caf\\u00e9 owners today?\","
    "\"usage_metadata\":{\"input_tokens\":25,\"output_tokens\":15,\"total_tokens\":40,"
    "\"input_token_details\":{\"cache_read\":0,\"cache_creation\":0}},"
    "\"response_metadata\":{\"model_name\":\"claude-sonnet-4-5-20250929\",\"stop_reason\":"
    "\"end_turn\",\"model_provider\":\"anthropic\"}}";

static const char k_tools_message[] =
    "{\"role\":\"assistant\",\"content\":\"Okay, let me check the weather and the time.\","
    "\"tool_calls\":[{\"id\":\"toolu_01T1x1fJ34qAmk2tNTrN7Up6\",\"type\":\"function\","
    "\"function\":{\"name\":\"get_weather\",\"arguments\":\"{\\\"location\\\":\\\"San "
    "Francisco, CA\\\",\\\"unit\\\":\\\"fahrenheit\\\"}\"}},"
    "{\"id\":\"toolu_02ClockNoArgs\",\"type\":\"function\",\"function\":{\"name\":\"get_time\","
    "\"arguments\":\"{}\"}}],"
    "\"usage_metadata\":{\"input_tokens\":472,\"output_tokens\":89,\"total_tokens\":561},"
    "\"response_metadata\":{\"model_name\":\"claude-sonnet-4-5-20250929\",\"stop_reason\":"
    "\"tool_use\",\"model_provider\":\"anthropic\"}}";

static const char k_thinking_message[] =
    "{\"role\":\"assistant\",\"content\":["
    "{\"type\":\"thinking\",\"thinking\":\"The user wants the weather in Paris.\\nI should call "
    "get_weather with location Paris.\",\"signature\":"
    "\"EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds+9U8WQm2x0c7Tm4rDXwc5wQ==\"},"
    "{\"type\":\"redacted_thinking\",\"data\":"
    "\"EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP\"},"
    "{\"type\":\"text\",\"text\":\"I'll look up the weather in Paris.\"}],"
    "\"tool_calls\":[{\"id\":\"toolu_01ParisWeather\",\"type\":\"function\",\"function\":{"
    "\"name\":\"get_weather\",\"arguments\":\"{\\\"location\\\":\\\"Paris\\\"}\"}}],"
    "\"usage_metadata\":{\"input_tokens\":612,\"output_tokens\":147,\"total_tokens\":759},"
    "\"response_metadata\":{\"model_name\":\"claude-sonnet-4-5-20250929\",\"stop_reason\":"
    "\"tool_use\",\"model_provider\":\"anthropic\"}}";

static const char k_cache1_usage[] =
    "{\"input_tokens\":1821,\"output_tokens\":12,\"total_tokens\":1833,"
    "\"input_token_details\":{\"cache_read\":0,\"cache_creation\":1800}}";
static const char k_cache2_usage[] =
    "{\"input_tokens\":1830,\"output_tokens\":16,\"total_tokens\":1846,"
    "\"input_token_details\":{\"cache_read\":1800,\"cache_creation\":0}}";

static void check_assembly(const char *file, const char *expected, const char *expected_tokens,
                           const char *expected_usage) {
    size_t n;
    char *body = recording_body(file, &n);
    const size_t chunks[] = {n, 1, 2, 3, 7, 61, 256};
    for (size_t i = 0; i < SST_ARRAY_LEN(chunks); i++) {
        tokens k;
        sst__buf_init(&k.text);
        sst_error err;
        sst_value *m = assemble(body, n, chunks[i], &k, &err, NULL);
        if (m == NULL) {
            fail_msg("%s in pieces of %zu: %s", file, chunks[i], err.msg);
        }
        if (expected != NULL) {
            assert_json_eq(m, expected);
        }
        if (expected_usage != NULL) {
            assert_json_eq(sst_object_get(m, "usage_metadata"), expected_usage);
        }
        assert_string_equal(tokens_text(&k), expected_tokens);
        sst_value_unref(m);
        sst__buf_free(&k.text);
    }
    free(body);
}

static void test_stream_assembly(void **state) {
    (void)state;
    check_assembly("anthropic-text.http", k_text_message,
                   "Hello|! How can I help caf\xc3\xa9 owners| today?|", NULL);
    check_assembly("anthropic-tools.http", k_tools_message,
                   "Okay|, let me check the weather and the time.|", NULL);
    check_assembly("anthropic-thinking.http", k_thinking_message,
                   "I'll look up the weather in Paris.|", NULL);
    /* message_delta with the output count only, and with every count (the newer form). */
    check_assembly("anthropic-cache.1.http", NULL, "The contract's term is two years.|",
                   k_cache1_usage);
    check_assembly("anthropic-cache.2.http", NULL, "Either party may end it with 30 days' notice.|",
                   k_cache2_usage);
}

static sst_value *assemble_text(const char *text, sst_error *err, bool *transient) {
    return assemble(text, strlen(text), 5, NULL, err, transient);
}

static void expect_stream_error(const char *text, sst_code code, bool transient,
                                const char *needle) {
    sst_error err;
    bool t = false;
    sst_value *m = assemble_text(text, &err, &t);
    if (m != NULL) {
        sst_value_unref(m);
        fail_msg("expected an error with '%s'", needle);
    }
    assert_int_equal(err.code, code);
    assert_int_equal(t, transient);
    assert_has(err.msg, needle);
}

#define START                                                                                      \
    "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"model\":\"m\","        \
    "\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}}\n\n"
#define TEXT_BLOCK                                                                                 \
    "data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\","    \
    "\"text\":\"\"}}\n\n"

static void test_stream_errors(void **state) {
    (void)state;
    size_t n;
    char *body = recording_body("anthropic-overloaded-once.1.http", &n);
    sst_error err;
    bool transient = false;
    tokens k;
    sst__buf_init(&k.text);
    assert_null(assemble(body, n, 3, &k, &err, &transient));
    assert_int_equal(err.code, SST_EUNAVAILABLE);
    assert_true(transient);
    assert_has(err.msg, "error event overloaded_error: Overloaded");
    assert_string_equal(tokens_text(&k), "Partial |"); /* what came before it was delivered */
    sst__buf_free(&k.text);
    free(body);
    expect_stream_error(START "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":"
                              "\"api_error\",\"message\":\"Internal server error\"}}\n\n",
                        SST_EUNAVAILABLE, true, "error event api_error: Internal server error");
    expect_stream_error(START "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":"
                              "\"invalid_request_error\",\"message\":\"prompt is too long\"}}\n\n",
                        SST_EINVAL, false, "invalid_request_error: prompt is too long");
    /* Cut off: before message_stop, and inside an event. */
    body = recording_body("anthropic-cut.http", &n);
    assert_null(assemble(body, n, 1, NULL, &err, NULL));
    assert_int_equal(err.code, SST_EPARSE);
    assert_has(err.msg, "ended before message_stop: truncated");
    free(body);
    expect_stream_error(START TEXT_BLOCK "data: {\"type\":\"content_blo", SST_EPARSE, false,
                        "truncated");
    /* Events of the wrong shape. */
    expect_stream_error(START "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{"
                              "\"type\":\"text_delta\",\"text\":\"x\"}}\n\n",
                        SST_EPARSE, false, "content_block_delta for block 0, which did not start");
    expect_stream_error(START "data: {\"type\":\"content_block_start\",\"index\":1,"
                              "\"content_block\":{\"type\":\"text\"}}\n\n",
                        SST_EPARSE, false, "content_block_start for block 1, expected block 0");
    expect_stream_error(START TEXT_BLOCK "data: {\"type\":\"content_block_delta\",\"index\":0,"
                                         "\"delta\":{\"type\":\"text_delta\"}}\n\n",
                        SST_EPARSE, false, "a text_delta without its \"text\" string");
    expect_stream_error(START "data: {\"type\":\"message_start\"\n\n", SST_EPARSE, false, "column");
    expect_stream_error("data: [1]\n\n", SST_EPARSE, false, "is not an object");
    expect_stream_error(START "data: {\"type\":\"content_block_start\",\"index\":0,"
                              "\"content_block\":{\"type\":\"tool_use\",\"id\":\"t\",\"name\":"
                              "\"f\",\"input\":{}}}\n\n"
                              "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{"
                              "\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"a\\\":\"}}\n\n"
                              "data: {\"type\":\"message_stop\"}\n\n",
                        SST_EPARSE, false, "the input of block 0 (tool_use) is not JSON");
    /* Unknown events and deltas are skipped, as Anthropic asks. */
    sst_value *m = assemble_text(START TEXT_BLOCK
                                 "event: future_event\ndata: {\"type\":\"future_event\"}\n\n"
                                 "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{"
                                 "\"type\":\"citations_delta\",\"citation\":{}}}\n\n"
                                 "data: {\"type\":\"message_stop\"}\n\n",
                                 &err, NULL);
    assert_non_null(m);
    assert_true(sst_is_null(sst_object_get(m, "content")));
    sst_value_unref(m);
}

/* Recordings cut anywhere, and with bytes changed: a message or an error, never a crash. */
static void test_damaged_streams(void **state) {
    (void)state;
    static const char *const files[] = {"anthropic-text.http", "anthropic-tools.http",
                                        "anthropic-thinking.http", "anthropic-cache.2.http"};
    tu_rng rng = {0x5eed5eedu};
    for (size_t f = 0; f < SST_ARRAY_LEN(files); f++) {
        size_t n;
        char *body = recording_body(files[f], &n);
        for (size_t cut = 0; cut < n; cut += 3) {
            sst_error err;
            sst_value *m = assemble(body, cut, 64, NULL, &err, NULL);
            if (m == NULL && err.code == SST_OK) {
                fail_msg("%s cut at %zu: NULL without an error", files[f], cut);
            }
            sst_value_unref(m);
        }
        char *copy = malloc(n + 1);
        assert_non_null(copy);
        for (int round = 0; round < 300; round++) {
            memcpy(copy, body, n + 1);
            for (uint64_t k = 1 + tu_rand(&rng) % 3; k > 0; k--) {
                copy[tu_rand(&rng) % n] = (char)(tu_rand(&rng) & 0xff);
            }
            sst_error err;
            sst_value *m = assemble(copy, n, 61, NULL, &err, NULL);
            if (m == NULL && err.code == SST_OK) {
                fail_msg("%s changed (round %d): NULL without an error", files[f], round);
            }
            sst_value_unref(m);
        }
        free(copy);
        free(body);
    }
}

/* A token handler's error stops the stream with its code. */
static sst_code refuse(const char *text, size_t len, void *ud) {
    (void)text, (void)len, (void)ud;
    return SST_ETASK;
}

static void test_token_handler_error(void **state) {
    (void)state;
    sst__anthropic_stream s;
    sst__anthropic_stream_init(&s, refuse, NULL);
    sst_error err = {0};
    const char ev[] = "{\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":"
                      "\"text\",\"text\":\"\"}}";
    const char delta[] = "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":"
                         "\"text_delta\",\"text\":\"no\"}}";
    assert_sst_ok(sst__anthropic_stream_event(&s, "message", ev, sizeof ev - 1, &err), &err);
    assert_int_equal(sst__anthropic_stream_event(&s, "message", delta, sizeof delta - 1, &err),
                     SST_ETASK);
    assert_has(err.msg, "the token handler failed");
    sst__anthropic_stream_free(&s);
}

static void test_parse_body(void **state) {
    (void)state;
    size_t n;
    char *body = recording_body("anthropic-body.http", &n);
    sst_error err = {0};
    sst_value *m = sst__anthropic_parse_body(body, n, &err);
    assert_non_null(m);
    assert_json_eq(m,
                   "{\"role\":\"assistant\",\"content\":\"I'll check the current weather in San "
                   "Francisco for you.\",\"tool_calls\":[{\"id\":\"toolu_01A09q90qw90lq917835lq9\","
                   "\"type\":\"function\",\"function\":{\"name\":\"get_weather\",\"arguments\":"
                   "\"{\\\"location\\\":\\\"San Francisco, CA\\\",\\\"unit\\\":\\\"celsius\\\"}\"}}"
                   "],\"usage_metadata\":{\"input_tokens\":2432,\"output_tokens\":65,"
                   "\"total_tokens\":2497,\"input_token_details\":{\"cache_read\":2048,"
                   "\"cache_creation\":0}},\"response_metadata\":{\"model_name\":"
                   "\"claude-sonnet-4-5-20250929\",\"stop_reason\":\"tool_use\","
                   "\"model_provider\":\"anthropic\"}}");
    sst_value_unref(m);
    free(body);
    body = recording_body("anthropic-redacted-body.http", &n);
    m = sst__anthropic_parse_body(body, n, &err);
    assert_non_null(m);
    assert_json_eq(sst_object_get(m, "content"),
                   "[{\"type\":\"thinking\",\"thinking\":\"Two plus two is four.\",\"signature\":"
                   "\"ErUBCkYIBxgCIkB0\"},{\"type\":\"redacted_thinking\",\"data\":"
                   "\"EmwKAhgBEgy3va3pzix\"},{\"type\":\"text\",\"text\":\"4\"}]");
    assert_null(sst_object_get(m, "tool_calls"));
    sst_value_unref(m);
    free(body);
    assert_null(sst__anthropic_parse_body("{\"type\":\"message\"}", 18, &err));
    assert_int_equal(err.code, SST_EPARSE);
    assert_has(err.msg, "without a content array");
    assert_null(sst__anthropic_parse_body("<html>", 6, &err));
    assert_int_equal(err.code, SST_EPARSE);
    assert_has(err.msg, "Anthropic reply");
    const char bad[] = "{\"content\":[{\"type\":\"tool_use\",\"input\":{}}]}";
    assert_null(sst__anthropic_parse_body(bad, sizeof bad - 1, &err));
    assert_has(err.msg, "tool_use block 0 without an id and a name");
    /* The error body's type and message, for HTTP errors. */
    sst__buf b;
    sst__buf_init(&b);
    const char eb[] = "{\"type\":\"error\",\"error\":{\"type\":\"not_found_error\",\"message\":"
                      "\"model: claude-9\"}}";
    sst__anthropic_error_text(eb, sizeof eb - 1, &b);
    sst__buf_putc(&b, '\0');
    assert_string_equal(b.data, "not_found_error: model: claude-9");
    b.len = 0;
    sst__anthropic_error_text("Bad Gateway", 11, &b);
    assert_int_equal(b.len, 0);
    sst__buf_free(&b);
}

/* ---- every allocation failing in turn ----------------------------------- */

typedef sst_value *(*op_fn)(sst_error *err);

static sst_value *op_request(sst_error *err) {
    sst__llm_config c;
    sst__llm_config_init(&c);
    c.model = "claude-x";
    c.cache_prompt = true;
    sst_value *msgs = sst_json_parse(k_conversation, err);
    sst_value *tools = msgs != NULL ? sst_json_parse(k_tools, err) : NULL;
    sst_value *r = tools != NULL ? sst__anthropic_request(&c, msgs, tools, err) : NULL;
    sst_value_unref(msgs);
    sst_value_unref(tools);
    return r;
}

/*
 * The events of a recording, split by the test itself: the event-stream
 * parser is sse.c's (test_sse.c), and here only the assembly's allocations
 * are to fail.
 */
typedef struct split_event {
    char name[64];
    char *data; /* malloc'd */
} split_event;

static split_event g_events[64];
static size_t g_n_events;

static void split_events(char *body) {
    g_n_events = 0;
    for (char *ev = body; *ev != '\0' && g_n_events < SST_ARRAY_LEN(g_events);) {
        char *end = strstr(ev, "\n\n");
        if (end == NULL) {
            break;
        }
        *end = '\0';
        split_event *e = &g_events[g_n_events++];
        snprintf(e->name, sizeof e->name, "message");
        e->data = NULL;
        for (char *line = ev; line != NULL;) {
            char *nl = strchr(line, '\n');
            if (nl != NULL) {
                *nl = '\0';
            }
            if (strncmp(line, "event: ", 7) == 0) {
                snprintf(e->name, sizeof e->name, "%s", line + 7);
            } else if (strncmp(line, "data: ", 6) == 0) {
                e->data = strdup(line + 6);
            }
            line = nl != NULL ? nl + 1 : NULL;
        }
        ev = end + 2;
    }
}

static sst_value *op_stream(sst_error *err) {
    sst__anthropic_stream s;
    sst__anthropic_stream_init(&s, NULL, NULL);
    sst_code rc = SST_OK;
    for (size_t i = 0; rc == SST_OK && i < g_n_events; i++) {
        rc = sst__anthropic_stream_event(&s, g_events[i].name, g_events[i].data,
                                         strlen(g_events[i].data), err);
    }
    sst_value *m = rc == SST_OK ? sst__anthropic_stream_message(&s, err) : NULL;
    sst__anthropic_stream_free(&s);
    return m;
}

static sst_value *op_body(sst_error *err) {
    const char body[] =
        "{\"content\":[{\"type\":\"thinking\",\"thinking\":\"t\",\"signature\":\"s\"},{\"type\":"
        "\"text\",\"text\":\"a\"},{\"type\":\"tool_use\",\"id\":\"i\",\"name\":\"n\",\"input\":{"
        "\"k\":[1,2]}}],\"model\":\"m\",\"stop_reason\":\"tool_use\",\"usage\":{\"input_tokens\":"
        "1,\"cache_read_input_tokens\":2,\"output_tokens\":3}}";
    return sst__anthropic_parse_body(body, sizeof body - 1, err);
}

static sst_value *op_usage(sst_error *err) {
    sst_value *a = sst_json_parse("{\"prompt_tokens\":100001,\"completion_tokens\":200002,"
                                  "\"prompt_tokens_details\":{\"cached_tokens\":300003},"
                                  "\"completion_tokens_details\":{\"reasoning_tokens\":400004}}",
                                  err);
    sst_value *u = a != NULL ? sst__usage_from_openai(a, err) : NULL;
    sst_value *total = NULL;
    sst_code rc = u != NULL ? sst__usage_add(&total, u, err) : SST_ENOMEM;
    if (rc == SST_OK) {
        rc = sst__usage_add(&total, u, err);
    }
    sst_value_unref(a);
    sst_value_unref(u);
    if (rc != SST_OK) {
        sst_value_unref(total);
        return NULL;
    }
    return total;
}

static void chaos(op_fn op, const char *name) {
    long baseline = tu_chaos_live();
    for (long n = 1;; n++) {
        sst_error err = {0};
        tu_chaos_fail_at(n);
        sst_value *v = op(&err);
        int fired = tu_chaos_fired();
        tu_chaos_off();
        if (!fired) {
            if (v == NULL) {
                fail_msg("%s: failed without an allocation failure: %s", name, err.msg);
            }
            sst_value_unref(v);
            break;
        }
        if (v != NULL) {
            fail_msg("%s: allocation %ld failed but the operation succeeded", name, n);
        }
        if (err.code != SST_ENOMEM) {
            fail_msg("%s: allocation %ld failed with %s: %s", name, n, sst_code_name(err.code),
                     err.msg);
        }
        if (tu_chaos_live() != baseline) {
            fail_msg("%s: allocation %ld failed and %ld blocks leaked", name, n,
                     tu_chaos_live() - baseline);
        }
    }
    assert_int_equal(tu_chaos_live(), baseline);
}

static void test_allocation_failures(void **state) {
    (void)state;
    size_t n;
    char *body = recording_body("anthropic-thinking.http", &n);
    split_events(body);
    assert_int_equal(g_n_events, 17);
    chaos(op_request, "request");
    chaos(op_stream, "stream");
    chaos(op_body, "body");
    chaos(op_usage, "usage");
    for (size_t i = 0; i < g_n_events; i++) {
        free(g_events[i].data);
    }
    free(body);
}

/* ---- against the replay server ------------------------------------------ */

static void test_chat_text(void **state) {
    (void)state;
    setenv(KEY_ENV, KEY, 1);
    const char *bases[] = {g_base, NULL};
    char with_v1[96];
    snprintf(with_v1, sizeof with_v1, "%s/v1/", g_base);
    bases[1] = with_v1; /* a base URL that names /v1 itself */
    for (size_t i = 0; i < SST_ARRAY_LEN(bases); i++) {
        char model[32];
        snprintf(model, sizeof model, "anthropic-text#%zu", i);
        sst__llm_config c;
        config(&c, model, true, 1);
        c.base_url = bases[i];
        tokens k;
        sst__buf_init(&k.text);
        sst_error err;
        sst_value *m = chat(&c, k_hello, NULL, &k, &err);
        if (m == NULL) {
            fail_msg("%s", err.msg);
        }
        assert_json_eq(m, k_text_message);
        assert_string_equal(tokens_text(&k), "Hello|! How can I help caf\xc3\xa9 owners| today?|");
        sst__buf_free(&k.text);
        sst_value_unref(m);
        sst_value *r = last_request(model);
        const sst_value *h = sst_object_get(r, "headers");
        assert_string_equal(sst_string_cstr(sst_object_get(r, "path")), "/v1/messages");
        assert_string_equal(sst_string_cstr(sst_object_get(h, "x-api-key")), KEY);
        assert_string_equal(sst_string_cstr(sst_object_get(h, "anthropic-version")), "2023-06-01");
        assert_string_equal(sst_string_cstr(sst_object_get(h, "content-type")), "application/json");
        assert_string_equal(sst_string_cstr(sst_object_get(h, "accept")), "text/event-stream");
        assert_null(sst_object_get(h, "authorization")); /* the key goes in x-api-key alone */
        const sst_value *body = sst_object_get(r, "body");
        assert_string_equal(sst_string_cstr(sst_object_get(body, "model")), model);
        assert_int_equal(sst_int_value(sst_object_get(body, "max_tokens")), 4096);
        assert_true(sst_bool_value(sst_object_get(body, "stream")));
        assert_json_eq(sst_object_get(body, "messages"), k_hello);
        assert_null(sst_object_get(body, "system"));
        assert_null(sst_object_get(body, "tools"));
        sst_value_unref(r);
    }
    unsetenv(KEY_ENV);
}

/* A model's tool calls, run, and their results sent back: one user turn with both. */
static void test_chat_tools_roundtrip(void **state) {
    (void)state;
    sst__llm_config c;
    config(&c, "anthropic-tools", true, 1);
    sst_value *tools = tu_json(k_tools);
    sst_error err;
    sst_value *m = chat(&c, k_hello, tools, NULL, &err);
    assert_non_null(m);
    assert_json_eq(m, k_tools_message);
    sst_value *r = last_request("anthropic-tools");
    assert_json_eq(sst_object_get(sst_object_get(r, "body"), "tools"), k_expected_tools);
    sst_value_unref(r);
    /* The history as the agent keeps it: the reply (with its id) and two tool results. */
    sst_value *history = tu_json(k_hello);
    history =
        sst_array_push_take(history, sst_object_set_take(m, "id", tu_json("\"r1\""), &err), &err);
    history = sst_array_push_take(
        history,
        tu_json("{\"role\":\"tool\",\"tool_call_id\":\"toolu_01T1x1fJ34qAmk2tNTrN7Up6\","
                "\"name\":\"get_weather\",\"content\":\"64F, sunny\"}"),
        &err);
    history = sst_array_push_take(
        history,
        tu_json("{\"role\":\"tool\",\"tool_call_id\":\"toolu_02ClockNoArgs\",\"name\":"
                "\"get_time\",\"content\":\"error: tool 'get_time' failed: no clock\"}"),
        &err);
    assert_non_null(history);
    c.model = "anthropic-text#tools";
    sst_value *m2 = sst__model_chat(&c, history, tools, NULL, NULL, &err);
    assert_non_null(m2);
    r = last_request("anthropic-text#tools");
    assert_json_eq(
        sst_object_get(sst_object_get(r, "body"), "messages"),
        "[{\"role\":\"user\",\"content\":\"hi\"},"
        "{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"Okay, let me check "
        "the weather and the time.\"},{\"type\":\"tool_use\",\"id\":"
        "\"toolu_01T1x1fJ34qAmk2tNTrN7Up6\",\"name\":\"get_weather\",\"input\":{\"location\":"
        "\"San Francisco, CA\",\"unit\":\"fahrenheit\"}},{\"type\":\"tool_use\",\"id\":"
        "\"toolu_02ClockNoArgs\",\"name\":\"get_time\",\"input\":{}}]},"
        "{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":"
        "\"toolu_01T1x1fJ34qAmk2tNTrN7Up6\",\"content\":\"64F, sunny\"},{\"type\":"
        "\"tool_result\",\"tool_use_id\":\"toolu_02ClockNoArgs\",\"content\":\"error: tool "
        "'get_time' failed: no clock\",\"is_error\":true}]}]");
    sst_value_unref(r);
    sst_value_unref(m2);
    sst_value_unref(history);
    sst_value_unref(tools);
}

/* Extended thinking: the thinking blocks go back verbatim, before the tool_use block. */
static void test_chat_thinking_roundtrip(void **state) {
    (void)state;
    sst__llm_config c;
    config(&c, "anthropic-thinking", true, 1);
    sst_value *params = tu_json("{\"thinking\":{\"type\":\"enabled\",\"budget_tokens\":2048},"
                                "\"max_tokens\":8192}");
    c.params = params;
    sst_error err;
    sst_value *m = chat(&c, k_hello, NULL, NULL, &err);
    assert_non_null(m);
    assert_json_eq(m, k_thinking_message);
    sst_value *r = last_request("anthropic-thinking");
    const sst_value *body = sst_object_get(r, "body");
    assert_json_eq(sst_object_get(body, "thinking"),
                   "{\"type\":\"enabled\",\"budget_tokens\":2048}");
    assert_int_equal(sst_int_value(sst_object_get(body, "max_tokens")), 8192);
    sst_value_unref(r);
    sst_value *history = tu_json(k_hello);
    history = sst_array_push_take(history, m, &err);
    history = sst_array_push_take(
        history,
        tu_json(
            "{\"role\":\"tool\",\"tool_call_id\":\"toolu_01ParisWeather\",\"content\":\"12C\"}"),
        &err);
    c.model = "anthropic-text#thinking";
    sst_value *m2 = sst__model_chat(&c, history, NULL, NULL, NULL, &err);
    assert_non_null(m2);
    r = last_request("anthropic-text#thinking");
    const sst_value *sent = sst_array_get(sst_object_get(sst_object_get(r, "body"), "messages"), 1);
    assert_json_eq(
        sent,
        "{\"role\":\"assistant\",\"content\":["
        "{\"type\":\"thinking\",\"thinking\":\"The user wants the weather in Paris.\\nI should "
        "call get_weather with location Paris.\",\"signature\":"
        "\"EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds+9U8WQm2x0c7Tm4rDXwc5wQ==\"},"
        "{\"type\":\"redacted_thinking\",\"data\":"
        "\"EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP\"},"
        "{\"type\":\"text\",\"text\":\"I'll look up the weather in Paris.\"},"
        "{\"type\":\"tool_use\",\"id\":\"toolu_01ParisWeather\",\"name\":\"get_weather\","
        "\"input\":{\"location\":\"Paris\"}}]}");
    sst_value_unref(r);
    sst_value_unref(m2);
    sst_value_unref(history);
    sst_value_unref(params);
}

/* Prompt caching: cache_control sent; the cache's figures in usage_metadata, summed per run. */
static void test_chat_cache(void **state) {
    (void)state;
    sst__llm_config c;
    config(&c, "anthropic-cache", true, 1);
    c.cache_prompt = true;
    sst_value *tools = tu_json(k_tools);
    const char msgs[] = "[{\"role\":\"system\",\"content\":\"A long contract...\"},"
                        "{\"role\":\"user\",\"content\":\"How long is the term?\"}]";
    sst_value *total = NULL;
    const char *usages[] = {k_cache1_usage, k_cache2_usage};
    for (int i = 0; i < 2; i++) {
        sst_error err;
        sst_value *m = chat(&c, msgs, tools, NULL, &err);
        if (m == NULL) {
            fail_msg("%s", err.msg);
        }
        assert_json_eq(sst_object_get(m, "usage_metadata"), usages[i]);
        assert_sst_ok(sst__usage_add(&total, sst_object_get(m, "usage_metadata"), &err), &err);
        sst_value_unref(m);
    }
    assert_json_eq(total, "{\"input_tokens\":3651,\"output_tokens\":28,\"total_tokens\":3679,"
                          "\"input_token_details\":{\"cache_read\":1800,\"cache_creation\":1800}}");
    sst_value_unref(total);
    sst_value *r = last_request("anthropic-cache");
    const sst_value *body = sst_object_get(r, "body");
    assert_json_eq(sst_object_get(body, "system"),
                   "[{\"type\":\"text\",\"text\":\"A long contract...\",\"cache_control\":{"
                   "\"type\":\"ephemeral\"}}]");
    assert_json_eq(sst_object_get(sst_array_get(sst_object_get(body, "tools"), 1), "cache_control"),
                   "{\"type\":\"ephemeral\"}");
    assert_int_equal(sst_int_value(sst_object_get(r, "count")), 2);
    sst_value_unref(r);
    sst_value_unref(tools);
}

static void test_chat_body(void **state) {
    (void)state;
    sst__llm_config c;
    config(&c, "anthropic-body", false, 1);
    sst_error err;
    sst_value *m = chat(&c, k_hello, NULL, NULL, &err);
    assert_non_null(m);
    assert_string_equal(sst_string_cstr(sst_object_get(m, "content")),
                        "I'll check the current weather in San Francisco for you.");
    sst_value_unref(m);
    sst_value *r = last_request("anthropic-body");
    const sst_value *body = sst_object_get(r, "body");
    assert_false(sst_bool_value(sst_object_get(body, "stream")));
    assert_string_equal(sst_string_cstr(sst_object_get(sst_object_get(r, "headers"), "accept")),
                        "application/json");
    sst_value_unref(r);
}

static void test_chat_retries(void **state) {
    (void)state;
    sst_error err;
    sst__llm_config c;
    /* An overloaded_error event mid-stream: retried as a dropped stream, then the reply. */
    config(&c, "anthropic-overloaded-once", true, 3);
    tokens k;
    sst__buf_init(&k.text);
    sst_value *m = chat(&c, k_hello, NULL, &k, &err);
    if (m == NULL) {
        fail_msg("%s", err.msg);
    }
    assert_json_eq(m, k_text_message);
    assert_int_equal(request_count("anthropic-overloaded-once"), 2);
    /* The first attempt's tokens arrived too: a stream is not taken back. */
    assert_string_equal(tokens_text(&k),
                        "Partial |Hello|! How can I help caf\xc3\xa9 owners| today?|");
    sst__buf_free(&k.text);
    sst_value_unref(m);
    /* Every attempt overloaded: the error names the event. */
    config(&c, "anthropic-overloaded-once#only", true, 1);
    assert_null(chat(&c, k_hello, NULL, NULL, &err));
    assert_int_equal(err.code, SST_EUNAVAILABLE);
    assert_has(err.msg, "error event overloaded_error: Overloaded");
    assert_has(err.msg, "/v1/messages");
    /* 429 with retry-after: 1, then the reply: the client waited about a second. */
    config(&c, "anthropic-429-once", true, 3);
    double t0 = tu_now_s();
    m = chat(&c, k_hello, NULL, NULL, &err);
    double waited = tu_now_s() - t0;
    assert_non_null(m);
    assert_true(waited >= 0.9);
    assert_int_equal(request_count("anthropic-429-once"), 2);
    sst_value_unref(m);
    /* 529 every time: transient, retried, the body's type and message quoted. */
    config(&c, "anthropic-529", false, 2);
    assert_null(chat(&c, k_hello, NULL, NULL, &err));
    assert_int_equal(err.code, SST_EUNAVAILABLE);
    assert_has(err.msg, "after 2 attempts");
    assert_has(err.msg, "answered HTTP 529: overloaded_error: Overloaded");
    assert_int_equal(request_count("anthropic-529"), 2);
    /* A stream cut before message_stop: truncated, and retried. */
    config(&c, "anthropic-cut", true, 2);
    assert_null(chat(&c, k_hello, NULL, NULL, &err));
    assert_int_equal(err.code, SST_EPARSE);
    assert_has(err.msg, "truncated");
    assert_int_equal(request_count("anthropic-cut"), 2);
    /* 400: permanent, not retried, Anthropic's explanation quoted. */
    config(&c, "anthropic-400", true, 3);
    assert_null(chat(&c, k_hello, NULL, NULL, &err));
    assert_int_equal(err.code, SST_EINVAL);
    assert_has(err.msg, "answered HTTP 400: invalid_request_error: max_tokens: 100000 > 64000");
    assert_int_equal(request_count("anthropic-400"), 1);
    /* An error event of another type: permanent too. */
    config(&c, "anthropic-error-event", true, 3);
    assert_null(chat(&c, k_hello, NULL, NULL, &err));
    assert_int_equal(err.code, SST_EINVAL);
    assert_has(err.msg, "error event invalid_request_error: the request was refused");
    assert_int_equal(request_count("anthropic-error-event"), 1);
    /* No recording: the server's 404 is permanent. */
    config(&c, "anthropic-no-such-scenario", true, 3);
    assert_null(chat(&c, k_hello, NULL, NULL, &err));
    assert_int_equal(err.code, SST_EINVAL);
    assert_has(err.msg, "answered HTTP 404: not_found_error: no recording");
}

/* An endpoint that quotes the key it got, in an error body and in an error event. */
static void test_key_not_in_errors(void **state) {
    (void)state;
    setenv(KEY_ENV, KEY, 1);
    sst_error err;
    sst__llm_config c;
    config(&c, "anthropic-401", true, 3);
    assert_null(chat(&c, k_hello, NULL, NULL, &err));
    assert_no_secret(err.msg);
    assert_int_equal(err.code, SST_EINVAL);
    assert_has(err.msg, "answered HTTP 401: authentication_error: invalid x-api-key: [redacted]");
    assert_int_equal(request_count("anthropic-401"), 1);
    config(&c, "anthropic-error-event#key", true, 1);
    assert_null(chat(&c, k_hello, NULL, NULL, &err));
    assert_no_secret(err.msg);
    assert_has(err.msg, "refused for key [redacted]");
    /* The request did carry it. */
    sst_value *r = last_request("anthropic-401");
    assert_string_equal(sst_string_cstr(sst_object_get(sst_object_get(r, "headers"), "x-api-key")),
                        KEY);
    sst_value_unref(r);
    /* A key that is not sk-shaped is masked as the literal value. */
    setenv(KEY_ENV, SECRET, 1);
    config(&c, "anthropic-401#plain", false, 1);
    assert_null(chat(&c, k_hello, NULL, NULL, &err));
    assert_no_secret(err.msg);
    assert_has(err.msg, "invalid x-api-key: [redacted]");
    unsetenv(KEY_ENV);
    /* Without a key: no x-api-key header at all. */
    config(&c, "anthropic-401#none", false, 1);
    assert_null(chat(&c, k_hello, NULL, NULL, &err));
    r = last_request("anthropic-401#none");
    assert_null(sst_object_get(sst_object_get(r, "headers"), "x-api-key"));
    sst_value_unref(r);
}

/* Says stop once the deadline (a double, monotonic seconds) has passed. */
static bool past(void *ud) {
    return tu_now_s() > *(const double *)ud;
}

static void test_model_chat(void **state) {
    (void)state;
    sst_error err;
    sst__llm_config c;
    /* The provider switch. */
    config(&c, "anthropic-text#switch", false, 1);
    c.provider = (sst__llm_provider)7;
    assert_null(chat(&c, k_hello, NULL, NULL, &err));
    assert_int_equal(err.code, SST_EINVAL);
    assert_has(err.msg, "unknown provider 7");
    assert_int_equal(request_count("anthropic-text#switch"), 0);
    /* Bad configuration. */
    config(&c, NULL, true, 1);
    assert_null(chat(&c, k_hello, NULL, NULL, &err));
    assert_int_equal(err.code, SST_EINVAL);
    assert_has(err.msg, "a model and a messages array are needed");
    config(&c, "anthropic-text#bad", true, 1);
    assert_null(chat(&c, "[{\"role\":\"robot\",\"content\":\"x\"}]", NULL, NULL, &err));
    assert_int_equal(err.code, SST_EINVAL);
    assert_has(err.msg, "role 'robot'");
    assert_int_equal(request_count("anthropic-text#bad"), 0);
    /* Nobody listening. */
    config(&c, "anthropic-text", true, 1);
    c.base_url = "http://127.0.0.1:9";
    assert_null(chat(&c, k_hello, NULL, NULL, &err));
    assert_int_equal(err.code, SST_EUNAVAILABLE);
    assert_has(err.msg, "http://127.0.0.1:9/v1/messages");
    /* A node out of time stops the call, and it is not retried. */
    config(&c, "anthropic-529#cancel", true, 3);
    double deadline = tu_now_s() - 1.0;
    c.cancelled = past;
    c.cancel_ud = &deadline;
    assert_null(chat(&c, k_hello, NULL, NULL, &err));
    assert_int_equal(err.code, SST_ETIMEOUT);
    assert_has(err.msg, "ran out of time");
    assert_true(request_count("anthropic-529#cancel") <= 1);
    /* Without an err: NULL, no crash. */
    config(&c, "anthropic-400#noerr", true, 1);
    sst_value *msgs = tu_json(k_hello);
    assert_null(sst__model_chat(&c, msgs, NULL, NULL, NULL, NULL));
    sst_value_unref(msgs);
}

int main(void) {
    tu_chaos_install();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_usage_conversions),
        cmocka_unit_test(test_usage_add),
        cmocka_unit_test(test_request_conversion),
        cmocka_unit_test(test_request_cache_and_params),
        cmocka_unit_test(test_request_errors),
        cmocka_unit_test(test_stream_assembly),
        cmocka_unit_test(test_stream_errors),
        cmocka_unit_test(test_damaged_streams),
        cmocka_unit_test(test_token_handler_error),
        cmocka_unit_test(test_parse_body),
        cmocka_unit_test(test_allocation_failures),
        cmocka_unit_test(test_chat_text),
        cmocka_unit_test(test_chat_tools_roundtrip),
        cmocka_unit_test(test_chat_thinking_roundtrip),
        cmocka_unit_test(test_chat_cache),
        cmocka_unit_test(test_chat_body),
        cmocka_unit_test(test_chat_retries),
        cmocka_unit_test(test_key_not_in_errors),
        cmocka_unit_test(test_model_chat),
    };
    return cmocka_run_group_tests(tests, start_server, stop_server);
}
