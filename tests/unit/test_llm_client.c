/* SPDX-License-Identifier: MIT */
/*
 * The LLM client against a real HTTP server process on 127.0.0.1
 * (tests/agent/openai_server.py): plain and streamed replies, tool calls
 * split across events, the API key, and injected faults (429 with
 * Retry-After, 500, 401, a reply past the timeout, malformed JSON, a stream
 * cut off, nobody listening), and secrets kept out of errors (an endpoint
 * that echoes the Authorization header, a base URL with user:password@).
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent/llm_client.h"
#include "test_util.h"

static char g_base[64];

static int start_server(void **state) {
    (void)state;
    return tu_openai_server_start(g_base, sizeof g_base);
}

static int stop_server(void **state) {
    (void)state;
    tu_openai_server_stop();
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
    assert_json_eq(m, "{\"role\":\"assistant\",\"content\":\"echo: hi\"}");
    sst_value_unref(m);
    tokens k = {0};
    m = chat("stream", true, 1, GENEROUS_MS, &k, &err);
    assert_non_null(m);
    assert_json_eq(m, "{\"role\":\"assistant\",\"content\":\"echo: hi\"}");
    assert_int_equal(k.count, 2);
    assert_string_equal(k.text, "echo: hi");
    sst_value_unref(m);
    m = chat("stream-tools", true, 1, GENEROUS_MS, NULL, &err);
    assert_non_null(m);
    assert_json_eq(m, "{\"role\":\"assistant\",\"content\":\"calling\",\"tool_calls\":[{\"id\":"
                      "\"call_1\",\"type\":\"function\",\"function\":{\"name\":\"search\","
                      "\"arguments\":\"{\\\"q\\\":\\\"x\\\"}\"}}]}");
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

/* A node that runs out of time stops its request at once, and it is not retried. */
static void test_cancelled(void **state) {
    (void)state;
    sst__llm_config c;
    sst__llm_config_init(&c);
    c.base_url = g_base;
    c.model = "slow"; /* a 3 s reply */
    c.stream = false;
    c.max_attempts = 3;
    c.timeout_ms = GENEROUS_MS;
    double deadline = tu_now_s() + 0.2;
    c.cancelled = past;
    c.cancel_ud = &deadline;
    sst_value *msgs = tu_json("[{\"role\":\"user\",\"content\":\"hi\"}]");
    sst_error err = {0};
    double t0 = tu_now_s();
    assert_null(sst__llm_chat(&c, msgs, NULL, NULL, NULL, &err));
    double took = tu_now_s() - t0;
    assert_int_equal(err.code, SST_ETIMEOUT);
    assert_non_null(strstr(err.msg, "ran out of time"));
    assert_null(strstr(err.msg, "attempts"));
    assert_true(took < 2.0); /* well before the reply's 3 s */
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

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plain_and_stream),
        cmocka_unit_test(test_api_key),
        cmocka_unit_test(test_faults),
        cmocka_unit_test(test_cancelled),
        cmocka_unit_test(test_without_err),
        cmocka_unit_test(test_key_not_in_errors),
        cmocka_unit_test(test_userinfo_not_in_errors),
    };
    return cmocka_run_group_tests(tests, start_server, stop_server);
}
