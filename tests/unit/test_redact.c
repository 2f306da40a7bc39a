/* SPDX-License-Identifier: MIT */
/*
 * Secrets kept out of messages (src/agent/redact.c): URLs lose their user
 * info; quoted text loses bearer and basic credentials, sk-... keys and
 * given literal secrets, also when cut short.
 */
#include <stdio.h>
#include <string.h>

#include "agent/redact.h"
#include "test_util.h"

static void check_url(const char *url, const char *want) {
    char out[128];
    sst__url_redact(url, out, sizeof out);
    assert_string_equal(out, want);
}

static void test_url(void **state) {
    (void)state;
    check_url("http://user:secretpass@127.0.0.1:8080/v1", "http://127.0.0.1:8080/v1");
    check_url("https://token@api.example.com/v1/chat/completions",
              "https://api.example.com/v1/chat/completions");
    check_url("http://u:p%40ss@host@evil/v1", "http://evil/v1"); /* the last '@' ends it */
    check_url("http://user:pw@host", "http://host");
    check_url("http://host/v1/models/a@b", "http://host/v1/models/a@b"); /* '@' in the path */
    check_url("http://host:8080/v1?x=a@b", "http://host:8080/v1?x=a@b");
    check_url("http://host/v1", "http://host/v1");
    check_url("ftp://user:secretpass@host/v1", "ftp://host/v1");
    check_url("user:secretpass@host/v1", "host/v1"); /* no scheme (curl guesses http) */
    check_url("fake:replies.jsonl", "fake:replies.jsonl");
    check_url("", "");
    size_t off = 0, len = 0;
    assert_true(sst__url_userinfo("http://user:pw@host/v1", &off, &len));
    assert_int_equal(off, 7);
    assert_int_equal(len, 8); /* "user:pw@" */
    assert_false(sst__url_userinfo("http://host/v1@x", &off, &len));
    /* Cut to the buffer, never past it. */
    char small[12];
    sst__url_redact("http://user:secretpass@127.0.0.1:8080/v1", small, sizeof small);
    assert_string_equal(small, "http://127.");
}

/* @p text masked with @p secrets (NULL-terminated list) and a limit of @p max bytes. */
static char *masked(const char *text, const char *const *secrets, size_t max) {
    size_t n = 0;
    while (secrets != NULL && secrets[n] != NULL) {
        n++;
    }
    sst__buf b;
    sst__buf_init(&b);
    sst__redact(text, strlen(text), secrets, n, max, &b);
    sst__buf_putc(&b, '\0');
    assert_false(b.oom);
    return sst__buf_detach(&b, NULL);
}

static void check(const char *text, const char *const *secrets, const char *want) {
    char *got = masked(text, secrets, SIZE_MAX);
    assert_string_equal(got, want);
    sst__free(got);
}

static void test_patterns(void **state) {
    (void)state;
    check("{\"error\": \"rejected Authorization: Bearer sk-test-SECRETKEY123\"}", NULL,
          "{\"error\": \"rejected Authorization: Bearer [redacted]\"}");
    check("authorization: bearer abc.DEF_ghi-jkl~mno+pq/rs==, next", NULL,
          "authorization: bearer [redacted], next");
    check("Authorization: Basic dXNlcjpzZWNyZXRwYXNz\r\n", NULL,
          "Authorization: Basic [redacted]\r\n");
    check("BEARER\tTOKEN123 and Bearer  x", NULL, "BEARER\t[redacted] and Bearer  [redacted]");
    check("X-Api-Bearer abc", NULL, "X-Api-Bearer [redacted]");
    check("key sk-proj-AbCdEf_123456789 in use; also \"sk-test-SECRETKEY123\".", NULL,
          "key sk-[redacted] in use; also \"sk-[redacted]\".");
    /* Left alone: no token after the scheme, words that only end in it, short sk- words. */
    check("Bearer token required", NULL, "Bearer [redacted] required");
    check("a Bearer: none, Bearer [x], Bearer", NULL, "a Bearer: none, Bearer [x], Bearer");
    check("the subearer abc, task-scheduler-of-things, sk-learn", NULL,
          "the subearer abc, task-scheduler-of-things, sk-learn");
    check("", NULL, "");
}

static void test_literal_secrets(void **state) {
    (void)state;
    const char *const key[] = {"plainSECRET42", NULL};
    check("the key plainSECRET42 was wrong (plainSECRET42)", key,
          "the key [redacted] was wrong ([redacted])");
    /* Anywhere, not only as a word. */
    check("xplainSECRET42x", key, "x[redacted]x");
    const char *const two[] = {"k3y", "", "secretpass", NULL}; /* empty strings ignored */
    check("{\"credentials\": \"user:secretpass\", \"k\": \"k3y\"}", two,
          "{\"credentials\": \"user:[redacted]\", \"k\": \"[redacted]\"}");
    check("no secret here", two, "no secret here");
    check("secretpas", two, "secretpas"); /* a prefix of a secret at the end is not it */
}

/* The limit: the output stops near it, and a secret across it is never cut open. */
static void test_limit(void **state) {
    (void)state;
    const char *const key[] = {"0123456789SECRET", NULL};
    char *got = masked("abcdef 0123456789SECRET tail", key, 10);
    assert_string_equal(got, "abcdef [redacted]"); /* the replacement may pass the limit */
    sst__free(got);
    got = masked("abcdef Bearer sk-test-SECRETKEY123 tail", NULL, 9);
    assert_string_equal(got, "abcdef Bearer [redacted]");
    sst__free(got);
    got = masked("abcdef tail", NULL, 3);
    assert_string_equal(got, "abc");
    sst__free(got);
    /* Many secrets shrink the text: what the limit keeps is still all masked. */
    sst__buf in;
    sst__buf_init(&in);
    for (int i = 0; i < 50; i++) {
        sst__buf_printf(&in, "Bearer sk-%040d ", i);
    }
    sst__buf_putc(&in, '\0');
    got = masked(in.data, NULL, 200);
    assert_null(strstr(got, "0000"));
    assert_true(strlen(got) >= 200);
    sst__free(got);
    sst__buf_free(&in);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_url),
        cmocka_unit_test(test_patterns),
        cmocka_unit_test(test_literal_secrets),
        cmocka_unit_test(test_limit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
