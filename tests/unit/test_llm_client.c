/* SPDX-License-Identifier: MIT */
/*
 * The LLM client against a real HTTP server process on 127.0.0.1
 * (tests/agent/openai_server.py): plain and streamed replies, tool calls
 * split across events, the API key, and injected faults (429 with
 * Retry-After, 500, 401, a reply past the timeout, malformed JSON, a stream
 * cut off, nobody listening), and secrets kept out of errors (an endpoint
 * that echoes the Authorization header, a base URL with user:password@).
 * Against tests/agent/replay_server.py (recordings in tests/data/llm): token
 * usage and metadata in LangChain's names, stream_options.include_usage
 * asked for, and messages sent as OpenAI takes them (content lists with
 * Anthropic's thinking blocks, members OpenAI does not know).
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>

#include "agent/http.h"
#include "agent/llm_client.h"
#include "replay_client.h"
#include "test_util.h"

static char g_base[64];
static char g_replay_root[64]; /* the replay server: "http://127.0.0.1:PORT" */
static char g_replay[80];      /* its base URL for the client: "http://127.0.0.1:PORT/v1" */
static pid_t g_replay_pid;

/* Starts tests/agent/replay_server.py. */
static int start_replay(void) {
    char script[512];
    tu_data_path("../agent/replay_server.py", script, sizeof script);
    int port;
    g_replay_pid = tu_python_server_start(script, &port);
    if (g_replay_pid < 0) {
        return -1;
    }
    snprintf(g_replay_root, sizeof g_replay_root, "http://127.0.0.1:%d", port);
    snprintf(g_replay, sizeof g_replay, "%s/v1", g_replay_root);
    return 0;
}

static int start_server(void **state) {
    (void)state;
    return tu_openai_server_start(g_base, sizeof g_base) == 0 ? start_replay() : -1;
}

static int stop_server(void **state) {
    (void)state;
    tu_openai_server_stop();
    tu_server_stop(g_replay_pid);
    g_replay_pid = 0;
    return 0;
}

typedef struct tokens {
    int count;
    char text[256];
} tokens;

static sst_code on_token(const char *t, size_t n, void *ud) {
    tokens *k = ud;
    k->count++;
    strncat(k->text, t, n < sizeof k->text - strlen(k->text) - 1 ? n : 0);
    return SST_OK;
}

/* The timeout of calls that must succeed: far above any machine's slowness, so
 * only the "slow" case (300 ms against a 3 s reply) depends on a timeout. */
#define GENEROUS_MS 120000

static sst_value *chat_at(const char *base, const char *model, bool stream, unsigned attempts,
                          long timeout_ms, tokens *k, sst_error *err) {
    sst__llm_config c;
    sst__llm_config_init(&c);
    c.base_url = base;
    c.model = model;
    c.stream = stream;
    c.max_attempts = attempts;
    c.retry_base_ms = 50;
    c.timeout_ms = timeout_ms;
    c.api_key_env = "SST_TEST_LLM_KEY";
    sst_value *msgs = tu_json("[{\"role\":\"user\",\"content\":\"hi\"}]");
    *err = (sst_error){0};
    sst_value *m = sst__llm_chat(&c, msgs, NULL, k != NULL ? on_token : NULL, k, err);
    sst_value_unref(msgs);
    return m;
}

static sst_value *chat(const char *model, bool stream, unsigned attempts, long timeout_ms,
                       tokens *k, sst_error *err) {
    return chat_at(g_base, model, stream, attempts, timeout_ms, k, err);
}

static void test_plain_and_stream(void **state) {
    (void)state;
    sst_error err;
    sst_value *m = chat("plain", false, 1, GENEROUS_MS, NULL, &err);
    assert_non_null(m);
    assert_json_eq(m, "{\"role\":\"assistant\",\"content\":\"echo: hi\",\"response_metadata\":"
                      "{\"finish_reason\":\"stop\",\"model_provider\":\"openai\"}}");
    sst_value_unref(m);
    tokens k = {0};
    m = chat("stream", true, 1, GENEROUS_MS, &k, &err);
    assert_non_null(m);
    assert_json_eq(m, "{\"role\":\"assistant\",\"content\":\"echo: hi\",\"response_metadata\":"
                      "{\"finish_reason\":\"stop\",\"model_provider\":\"openai\"}}");
    assert_int_equal(k.count, 2);
    assert_string_equal(k.text, "echo: hi");
    sst_value_unref(m);
    m = chat("stream-tools", true, 1, GENEROUS_MS, NULL, &err);
    assert_non_null(m);
    assert_json_eq(m, "{\"role\":\"assistant\",\"content\":\"calling\",\"tool_calls\":[{\"id\":"
                      "\"call_1\",\"type\":\"function\",\"function\":{\"name\":\"search\","
                      "\"arguments\":\"{\\\"q\\\":\\\"x\\\"}\"}}],\"response_metadata\":{"
                      "\"finish_reason\":\"tool_calls\",\"model_provider\":\"openai\"}}");
    sst_value_unref(m);
}

static void test_api_key(void **state) {
    (void)state;
    sst_error err;
    unsetenv("SST_TEST_LLM_KEY");
    assert_null(chat("auth", false, 3, GENEROUS_MS, NULL, &err));
    assert_int_equal(err.code, SST_EINVAL); /* 401: permanent, not retried */
    assert_non_null(
        strstr(err.msg, "answered HTTP 401: {\"error\": {\"message\": \"invalid api key\"}}"));
    setenv("SST_TEST_LLM_KEY", "secret", 1);
    sst_value *m = chat("auth", false, 1, GENEROUS_MS, NULL, &err);
    if (m == NULL) {
        print_error("%s\n", err.msg);
        fail();
    }
    assert_null(strstr(err.msg, "secret"));
    sst_value_unref(m);
    unsetenv("SST_TEST_LLM_KEY");
}

static void test_faults(void **state) {
    (void)state;
    sst_error err;
    /* 429 with Retry-After: 1, then a reply: the client waited about a second. */
    double t0 = tu_now_s();
    sst_value *m = chat("429-once", false, 3, GENEROUS_MS, NULL, &err);
    double waited = tu_now_s() - t0;
    assert_non_null(m);
    assert_true(waited >= 0.9);
    sst_value_unref(m);
    /* 500 every time: transient, retried, then an error naming status and body. */
    assert_null(chat("500", false, 2, GENEROUS_MS, NULL, &err));
    assert_int_equal(err.code, SST_EUNAVAILABLE);
    assert_non_null(strstr(err.msg, "after 2 attempts"));
    assert_non_null(strstr(err.msg, "answered HTTP 500"));
    assert_non_null(strstr(err.msg, "the model is overloaded"));
    /* A reply slower than the timeout. */
    assert_null(chat("slow", false, 1, 300, NULL, &err));
    assert_int_equal(err.code, SST_ETIMEOUT);
    assert_non_null(strstr(err.msg, "timed out"));
    /* Malformed JSON in a 200. */
    assert_null(chat("malformed", false, 1, GENEROUS_MS, NULL, &err));
    assert_int_equal(err.code, SST_EPARSE);
    assert_non_null(strstr(err.msg, "chat completion"));
    /* A stream cut off before its end. */
    tokens k = {0};
    assert_null(chat("drop", true, 1, GENEROUS_MS, &k, &err));
    assert_int_equal(err.code, SST_EPARSE);
    assert_non_null(strstr(err.msg, "truncated"));
    assert_int_equal(k.count, 2); /* the tokens that did arrive were delivered */
    /* Nobody listening. */
    sst__llm_config c;
    sst__llm_config_init(&c);
    c.base_url = "http://127.0.0.1:9/v1";
    c.model = "plain";
    c.max_attempts = 1;
    sst_value *msgs = tu_json("[{\"role\":\"user\",\"content\":\"hi\"}]");
    err = (sst_error){0};
    assert_null(sst__llm_chat(&c, msgs, NULL, NULL, NULL, &err));
    assert_int_equal(err.code, SST_EUNAVAILABLE);
    assert_non_null(strstr(err.msg, "http://127.0.0.1:9/v1/chat/completions"));
    sst_value_unref(msgs);
}

/* Says stop once the deadline (a double, monotonic seconds) has passed. */
static bool past(void *ud) {
    return tu_now_s() > *(const double *)ud;
}

static size_t on_reply(char *ptr, size_t size, size_t n, void *ud) {
    strncat(ud, ptr, size * n < 255 - strlen(ud) ? size * n : 0);
    return size * n;
}

/* The server's "hold" counts {"received", "sent"} (new); @p release lets its replies go. */
static sst_value *hold_state(bool release) {
    char url[128], reply[256] = "";
    snprintf(url, sizeof url, "%s/hold", g_base);
    CURL *c = curl_easy_init();
    assert_non_null(c);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, release ? "{\"release\": true}" : "{}");
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_reply);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, (void *)reply);
    assert_int_equal(curl_easy_perform(c), CURLE_OK);
    curl_easy_cleanup(c);
    return tu_json(reply);
}

/*
 * A node that runs out of time stops its request at once, and it is not
 * retried: the call returns while the server still holds its reply.
 */
static void test_cancelled(void **state) {
    (void)state;
    sst__llm_config c;
    sst__llm_config_init(&c);
    c.base_url = g_base;
    c.model = "hold"; /* answers once hold_state(true) says so */
    c.stream = false;
    c.max_attempts = 3;
    c.timeout_ms = GENEROUS_MS;
    double deadline = tu_now_s() + 0.2;
    c.cancelled = past;
    c.cancel_ud = &deadline;
    sst_value *msgs = tu_json("[{\"role\":\"user\",\"content\":\"hi\"}]");
    sst_error err = {0};
    assert_null(sst__llm_chat(&c, msgs, NULL, NULL, NULL, &err));
    assert_int_equal(err.code, SST_ETIMEOUT);
    assert_non_null(strstr(err.msg, "ran out of time"));
    assert_null(strstr(err.msg, "attempts"));
    sst_value *held = hold_state(true);
    assert_json_eq(held, "{\"received\":1,\"sent\":0}"); /* once, and not answered yet */
    sst_value_unref(held);
    sst_value_unref(msgs);
}

static sst_code refuse_token(const char *t, size_t n, void *ud) {
    (void)t;
    (void)n;
    (void)ud;
    return SST_ETASK;
}

/* Without an err (NULL): a failing token handler ends the chat with NULL, no crash. */
static void test_without_err(void **state) {
    (void)state;
    sst__llm_config c;
    sst__llm_config_init(&c);
    c.base_url = g_base;
    c.model = "stream";
    c.max_attempts = 1;
    c.timeout_ms = GENEROUS_MS;
    sst_value *msgs = tu_json("[{\"role\":\"user\",\"content\":\"hi\"}]");
    assert_null(sst__llm_chat(&c, msgs, NULL, refuse_token, NULL, NULL));
    sst_error err = {0};
    assert_null(sst__llm_chat(&c, msgs, NULL, refuse_token, NULL, &err));
    assert_int_equal(err.code, SST_ETASK);
    sst_value_unref(msgs);
}

/* @p msg (an error message) holds none of the secrets. */
static void assert_no_secret(const char *msg) {
    static const char *const secrets[] = {"SECRETKEY123", "sk-test", "secretpass",
                                          "dXNlcjpzZWNyZXRwYXNz" /* user:secretpass */};
    for (size_t i = 0; i < sizeof secrets / sizeof secrets[0]; i++) {
        if (strstr(msg, secrets[i]) != NULL) {
            print_error("'%s' leaked into: %s\n", secrets[i], msg);
            fail();
        }
    }
}

/* An endpoint that quotes the request's Authorization header in its error body. */
static void test_key_not_in_errors(void **state) {
    (void)state;
    sst_error err;
    setenv("SST_TEST_LLM_KEY", "sk-test-SECRETKEY123", 1);
    for (int stream = 0; stream <= 1; stream++) {
        assert_null(chat("echo-auth", stream, 3, GENEROUS_MS, NULL, &err));
        assert_no_secret(err.msg);
        assert_int_equal(err.code, SST_EINVAL);
        assert_non_null(strstr(err.msg, "answered HTTP 401"));
        assert_non_null(strstr(err.msg, "rejected Authorization: Bearer [redacted]"));
    }
    /* Through the retries: the last attempt's error is the one kept. */
    assert_null(chat("echo-auth-500", false, 2, GENEROUS_MS, NULL, &err));
    assert_no_secret(err.msg);
    assert_int_equal(err.code, SST_EUNAVAILABLE);
    assert_non_null(strstr(err.msg, "after 2 attempts"));
    assert_non_null(strstr(err.msg, "answered HTTP 500"));
    /* A key that is not sk-shaped is masked as the literal value. */
    setenv("SST_TEST_LLM_KEY", "SECRETKEY123", 1);
    assert_null(chat("echo-auth", false, 1, GENEROUS_MS, NULL, &err));
    assert_no_secret(err.msg);
    unsetenv("SST_TEST_LLM_KEY");
}

/* A base URL with user:password@: still sent (basic auth), never shown. */
static void test_userinfo_not_in_errors(void **state) {
    (void)state;
    sst_error err;
    unsetenv("SST_TEST_LLM_KEY");
    char base[128], shown[128];
    snprintf(base, sizeof base, "http://user:secretpass@%s", g_base + strlen("http://"));
    snprintf(shown, sizeof shown, "%s/chat/completions", g_base);
    assert_null(chat_at(base, "echo-auth", false, 1, GENEROUS_MS, NULL, &err));
    assert_no_secret(err.msg);
    assert_int_equal(err.code, SST_EINVAL);
    assert_non_null(strstr(err.msg, shown));
    assert_non_null(strstr(err.msg, "Basic [redacted]")); /* the credentials were sent */
    assert_null(chat_at(base, "echo-auth-500", true, 2, GENEROUS_MS, NULL, &err));
    assert_no_secret(err.msg);
    assert_int_equal(err.code, SST_EUNAVAILABLE);
    assert_null(chat_at(base, "slow", false, 1, 300, NULL, &err));
    assert_no_secret(err.msg);
    assert_int_equal(err.code, SST_ETIMEOUT);
    assert_non_null(strstr(err.msg, shown));
    /* Nobody listening. */
    assert_null(chat_at("http://user:secretpass@127.0.0.1:9/v1", "plain", false, 1, GENEROUS_MS,
                        NULL, &err));
    assert_no_secret(err.msg);
    assert_int_equal(err.code, SST_EUNAVAILABLE);
    assert_non_null(strstr(err.msg, "http://127.0.0.1:9/v1/chat/completions"));
}

/* ---- against the replay server ---- */

/* The body of the last request the replay server got for @p model. */
static sst_value *last_body(const char *model) {
    sst_value *r = replay_last_request(g_replay_root, model);
    sst_value *b = sst_value_ref(sst_object_get(r, "body"));
    sst_value_unref(r);
    return b;
}

static sst_value *replay_chat(const char *model, bool stream, const sst_value *params,
                              const char *msgs_json, sst_error *err) {
    sst__llm_config c;
    sst__llm_config_init(&c);
    c.base_url = g_replay;
    c.model = model;
    c.stream = stream;
    c.max_attempts = 1;
    c.timeout_ms = GENEROUS_MS;
    c.params = params;
    sst_value *msgs = tu_json(msgs_json);
    *err = (sst_error){0};
    sst_value *m = sst__model_chat(&c, msgs, NULL, NULL, NULL, err); /* OpenAI: the default */
    sst_value_unref(msgs);
    return m;
}

/* A recorded stream that ends with the usage chunk; the request asked for it. */
static void test_usage(void **state) {
    (void)state;
    sst_error err;
    sst_value *m = replay_chat("openai-usage", true, NULL,
                               "[{\"role\":\"user\",\"content\":"
                               "\"hi\"}]",
                               &err);
    if (m == NULL) {
        fail_msg("%s", err.msg);
    }
    assert_json_eq(m, "{\"role\":\"assistant\",\"content\":\"Hello there!\",\"usage_metadata\":{"
                      "\"input_tokens\":1200,\"output_tokens\":340,\"total_tokens\":1540,"
                      "\"input_token_details\":{\"audio\":0,\"cache_read\":1024},"
                      "\"output_token_details\":{\"audio\":0,\"reasoning\":256}},"
                      "\"response_metadata\":{\"model_name\":\"gpt-4o-2024-08-06\","
                      "\"finish_reason\":\"stop\",\"model_provider\":\"openai\"}}");
    sst_value_unref(m);
    sst_value *b = last_body("openai-usage");
    assert_json_eq(sst_object_get(b, "stream_options"), "{\"include_usage\":true}");
    sst_value_unref(b);
    /* Params say otherwise: they win. */
    sst_value *params = tu_json("{\"stream_options\":{\"include_usage\":false}}");
    m = replay_chat("openai-usage#off", true, params, "[{\"role\":\"user\",\"content\":\"hi\"}]",
                    &err);
    assert_non_null(m);
    sst_value_unref(m);
    b = last_body("openai-usage#off");
    assert_json_eq(sst_object_get(b, "stream_options"), "{\"include_usage\":false}");
    sst_value_unref(b);
    sst_value_unref(params);
    /* Not streamed: no stream_options; the body's usage. */
    m = replay_chat("openai-usage-body", false, NULL, "[{\"role\":\"user\",\"content\":\"hi\"}]",
                    &err);
    assert_non_null(m);
    assert_json_eq(sst_object_get(m, "usage_metadata"),
                   "{\"input_tokens\":19,\"output_tokens\":210,\"total_tokens\":229,"
                   "\"input_token_details\":{\"cache_read\":0},\"output_token_details\":{"
                   "\"reasoning\":192}}");
    assert_string_equal(
        sst_string_cstr(sst_object_get(sst_object_get(m, "response_metadata"), "model_name")),
        "o3-mini-2025-01-31");
    sst_value_unref(m);
    b = last_body("openai-usage-body");
    assert_null(sst_object_get(b, "stream_options"));
    sst_value_unref(b);
}

/*
 * A history made with Anthropic (thinking blocks in a content list, usage and
 * metadata on the messages) sent to an OpenAI-compatible server: the parts
 * OpenAI knows, an assistant's text as a string, no member OpenAI does not know.
 */
static void test_messages_sent_as_openai_takes_them(void **state) {
    (void)state;
    static const char history[] =
        "[{\"role\":\"system\",\"content\":\"Be brief.\",\"id\":\"s\"},"
        "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"What is this?\"},"
        "{\"type\":\"image_url\",\"image_url\":{\"url\":\"https://x.test/a.png\"}},"
        "\"and this\",{\"type\":\"thinking\",\"thinking\":\"x\"}],\"id\":\"u\"},"
        "{\"role\":\"assistant\",\"id\":\"a\",\"content\":[{\"type\":\"thinking\",\"thinking\":"
        "\"Let me look.\",\"signature\":\"sig\"},{\"type\":\"redacted_thinking\",\"data\":\"d\"},"
        "{\"type\":\"text\",\"text\":\"A cat.\"}],\"tool_calls\":[{\"id\":\"t1\",\"type\":"
        "\"function\",\"function\":{\"name\":\"zoom\",\"arguments\":\"{}\"}}],"
        "\"usage_metadata\":{\"input_tokens\":1,\"output_tokens\":2,\"total_tokens\":3},"
        "\"response_metadata\":{\"stop_reason\":\"tool_use\"}},"
        "{\"role\":\"tool\",\"tool_call_id\":\"t1\",\"name\":\"zoom\",\"content\":\"ok\","
        "\"id\":\"t\"},"
        "{\"role\":\"assistant\",\"content\":[{\"type\":\"thinking\",\"thinking\":\"t\","
        "\"signature\":\"s\"}]}]";
    sst_error err;
    sst_value *m = replay_chat("openai-usage#history", true, NULL, history, &err);
    if (m == NULL) {
        fail_msg("%s", err.msg);
    }
    sst_value_unref(m);
    sst_value *b = last_body("openai-usage#history");
    assert_json_eq(
        sst_object_get(b, "messages"),
        "[{\"role\":\"system\",\"content\":\"Be brief.\"},"
        "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"What is this?\"},"
        "{\"type\":\"image_url\",\"image_url\":{\"url\":\"https://x.test/a.png\"}},"
        "{\"type\":\"text\",\"text\":\"and this\"}]},"
        "{\"role\":\"assistant\",\"content\":\"A cat.\",\"tool_calls\":[{\"id\":\"t1\","
        "\"type\":\"function\",\"function\":{\"name\":\"zoom\",\"arguments\":\"{}\"}}]},"
        "{\"role\":\"tool\",\"content\":\"ok\",\"tool_call_id\":\"t1\",\"name\":\"zoom\"},"
        "{\"role\":\"assistant\",\"content\":null}]");
    sst_value_unref(b);
    /* A message that is not an object: an error naming it, nothing sent. */
    assert_null(replay_chat("openai-usage#bad", true, NULL, "[{\"role\":\"user\"},7]", &err));
    assert_int_equal(err.code, SST_EINVAL);
    assert_non_null(strstr(err.msg, "messages[1] is integer, not an object"));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plain_and_stream),
        cmocka_unit_test(test_api_key),
        cmocka_unit_test(test_faults),
        cmocka_unit_test(test_cancelled),
        cmocka_unit_test(test_without_err),
        cmocka_unit_test(test_key_not_in_errors),
        cmocka_unit_test(test_userinfo_not_in_errors),
        cmocka_unit_test(test_usage),
        cmocka_unit_test(test_messages_sent_as_openai_takes_them),
    };
    return cmocka_run_group_tests(tests, start_server, stop_server);
}
