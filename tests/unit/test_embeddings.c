/* SPDX-License-Identifier: MIT */
/*
 * The embeddings client (sst_embedder_*, superstep/agent.h) against a real
 * HTTP server process on 127.0.0.1 (tests/agent/openai_server.py, whose
 * /v1/embeddings answers deterministic vectors that expected() recomputes):
 * the vectors and their order (shuffled or index-less replies), "dimensions"
 * sent only when asked, batching, retries (500 then a reply, 429 with
 * Retry-After, 500 throughout), a timeout, nobody listening, each malformed
 * reply (not JSON, one embedding short, one float too many, a repeated
 * index), a reply over the size limit, bad arguments, the API key and a
 * URL's password kept out of errors, concurrent calls on one embedder, and
 * every allocation failure.
 */
#define _GNU_SOURCE
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>

#include "superstep/agent.h"
#include "superstep/json.h"
#include "test_util.h"

#include "superstep/store.h" /* the embedder must fit the store's hook */

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

/*
 * The server's vector for @p text (openai_server.py embedding()): the FNV-1a
 * 32 hash of its bytes seeds mulberry32, whose draws in [-1, 1) are
 * normalised to unit length.
 */
static void expected(const char *text, size_t dims, float *out) {
    uint32_t h = 0x811C9DC5u;
    for (const unsigned char *p = (const unsigned char *)text; *p != '\0'; p++) {
        h = (h ^ *p) * 0x01000193u;
    }
    uint32_t a = h;
    double v[64], norm = 0;
    assert_true(dims <= 64);
    for (size_t i = 0; i < dims; i++) {
        a += 0x6D2B79F5u;
        uint32_t t = (a ^ (a >> 15)) * (1u | a);
        t = (t + (t ^ (t >> 7)) * (61u | t)) ^ t;
        v[i] = (double)(t ^ (t >> 14)) / 4294967296.0 * 2.0 - 1.0;
        norm += v[i] * v[i];
    }
    norm = sqrt(norm);
    for (size_t i = 0; i < dims; i++) {
        out[i] = (float)(v[i] / norm);
    }
}

/* Row i of @p got is expected(texts[i]), for each of the @p n texts. */
static void assert_rows(const char *const *texts, size_t n, size_t dims, const float *got) {
    for (size_t i = 0; i < n; i++) {
        float want[64];
        expected(texts[i], dims, want);
        for (size_t k = 0; k < dims; k++) {
            if (fabsf(got[i * dims + k] - want[k]) > 1e-6f) {
                print_error("text %zu ('%s') float %zu: got %g, want %g\n", i, texts[i], k,
                            (double)got[i * dims + k], (double)want[k]);
                fail();
            }
        }
    }
}

static size_t on_reply(char *ptr, size_t size, size_t n, void *ud) {
    strncat(ud, ptr, size * n < 4095 - strlen(ud) ? size * n : 0);
    return size * n;
}

/* What the server saw for @p model: {"requests", "sizes", "dimensions"} (new). */
static sst_value *stats(const char *model) {
    char url[128], body[256], reply[4096] = "";
    snprintf(url, sizeof url, "%s/embeddings/stats", g_base);
    snprintf(body, sizeof body, "{\"of\": \"%s\"}", model);
    CURL *c = curl_easy_init();
    assert_non_null(c);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_reply);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, reply);
    assert_int_equal(curl_easy_perform(c), CURLE_OK);
    curl_easy_cleanup(c);
    return tu_json(reply);
}

static void assert_stats(const char *model, const char *json) {
    sst_value *s = stats(model);
    assert_json_eq(s, json);
    sst_value_unref(s);
}

/* An embedder for @p model on the test server (or @p base), with quick retries. */
static sst_embedder *embedder_at(const char *base, const char *model, size_t dims, size_t batch,
                                 unsigned attempts, long timeout_ms) {
    sst_embedder_opts o;
    sst_embedder_opts_init(&o);
    o.base_url = base;
    o.model = model;
    o.api_key_env = "SST_TEST_EMBED_KEY";
    o.dims = dims;
    o.batch = batch;
    o.max_attempts = attempts;
    o.retry_base_ms = 50;
    o.timeout_ms = timeout_ms;
    sst_error err = {0};
    sst_embedder *e = sst_embedder_openai(&o, &err);
    assert_sst_ok(e != NULL ? SST_OK : err.code, &err);
    return e;
}

/* The timeout of calls that must succeed: only the "slow" case depends on one. */
#define GENEROUS_MS 120000

static sst_embedder *embedder(const char *model, size_t dims, size_t batch, unsigned attempts) {
    return embedder_at(g_base, model, dims, batch, attempts, GENEROUS_MS);
}

static const char *const k_texts[] = {"hello", "wörld — ünïcode ✓", "",
                                      "a longer text, with "
                                      "punctuation: \"quotes\" and \\ backslashes\n",
                                      "the fifth"};
#define N_TEXTS (sizeof k_texts / sizeof k_texts[0])

static void test_vectors(void **state) {
    (void)state;
    sst_error err = {0};
    float out[N_TEXTS * 16];
    /* dims 0: the model's own size (8 on the test server), "dimensions" not sent. */
    sst_embedder *e = embedder("embed#vectors", 0, 0, 1);
    assert_int_equal(sst_embedder_dims(e), 0);
    assert_sst_ok(sst_embedder_embed(e, k_texts, N_TEXTS, 8, out, &err), &err);
    assert_rows(k_texts, N_TEXTS, 8, out);
    assert_stats("embed#vectors", "{\"requests\":1,\"sizes\":[5],\"dimensions\":[null]}");
    /* No texts: nothing is sent. */
    assert_sst_ok(sst_embedder_embed(e, k_texts, 0, 8, out, &err), &err);
    assert_sst_ok(sst_embedder_embed(e, NULL, 0, 8, NULL, &err), &err);
    assert_stats("embed#vectors", "{\"requests\":1,\"sizes\":[5],\"dimensions\":[null]}");
    /* Through the store's hook type: the compiler checks that the signatures agree. */
    sst_embed_fn hook = sst_embedder_embed;
    memset(out, 0, sizeof out);
    assert_sst_ok(hook(e, k_texts, N_TEXTS, 8, out, &err), &err);
    assert_rows(k_texts, N_TEXTS, 8, out);
    sst_embedder_free(e);
    /* dims 16: sent as "dimensions"; the caller must expect that size. */
    e = embedder("embed#dims", 16, 0, 1);
    assert_int_equal(sst_embedder_dims(e), 16);
    assert_sst_ok(sst_embedder_embed(e, k_texts, N_TEXTS, 16, out, &err), &err);
    assert_rows(k_texts, N_TEXTS, 16, out);
    assert_stats("embed#dims", "{\"requests\":1,\"sizes\":[5],\"dimensions\":[16]}");
    assert_int_equal(sst_embedder_embed(e, k_texts, N_TEXTS, 8, out, &err), SST_EINVAL);
    assert_non_null(strstr(err.msg, "asks model 'embed#dims' for 16 dims, the caller expects 8"));
    assert_stats("embed#dims", "{\"requests\":1,\"sizes\":[5],\"dimensions\":[16]}");
    sst_embedder_free(e);
}

/* Replies out of order, or without indices (input order), land in the right rows. */
static void test_order(void **state) {
    (void)state;
    static const char *const models[] = {"embed-shuffled", "embed-no-index"};
    for (size_t m = 0; m < sizeof models / sizeof models[0]; m++) {
        sst_error err = {0};
        float out[N_TEXTS * 8];
        sst_embedder *e = embedder(models[m], 0, 2, 1);
        assert_sst_ok(sst_embedder_embed(e, k_texts, N_TEXTS, 8, out, &err), &err);
        assert_rows(k_texts, N_TEXTS, 8, out);
        sst_embedder_free(e);
    }
}

static void test_batching(void **state) {
    (void)state;
    enum { N = 10 };
    char buf[N][32];
    const char *texts[N];
    for (int i = 0; i < N; i++) {
        snprintf(buf[i], sizeof buf[i], "text number %d", i);
        texts[i] = buf[i];
    }
    sst_error err = {0};
    float out[N * 8];
    sst_embedder *e = embedder("embed#batch3", 0, 3, 1);
    assert_sst_ok(sst_embedder_embed(e, texts, N, 8, out, &err), &err);
    assert_rows(texts, N, 8, out);
    assert_stats("embed#batch3",
                 "{\"requests\":4,\"sizes\":[3,3,3,1],\"dimensions\":[null,null,null,null]}");
    sst_embedder_free(e);
    /* The default batch (256) sends 300 texts in two requests. */
    enum { M = 300 };
    static char big[M][24];
    static const char *bigt[M];
    static float bigout[M * 8];
    for (int i = 0; i < M; i++) {
        snprintf(big[i], sizeof big[i], "item %d", i);
        bigt[i] = big[i];
    }
    e = embedder("embed#default-batch", 0, 0, 1);
    assert_sst_ok(sst_embedder_embed(e, bigt, M, 8, bigout, &err), &err);
    assert_rows(bigt, M, 8, bigout);
    assert_stats("embed#default-batch",
                 "{\"requests\":2,\"sizes\":[256,44],\"dimensions\":[null,null]}");
    sst_embedder_free(e);
    /* A batch that fails for good: the error names its texts; nothing more is sent. */
    e = embedder("embed-400-second", 0, 2, 3);
    assert_int_equal(sst_embedder_embed(e, k_texts, N_TEXTS, 8, out, &err), SST_EINVAL);
    assert_non_null(strstr(err.msg, "texts 2 to 3 (batch 2 of 3): embeddings endpoint "));
    assert_non_null(strstr(err.msg, "/embeddings answered HTTP 400: "));
    assert_non_null(strstr(err.msg, "input too long"));
    assert_stats("embed-400-second", "{\"requests\":2,\"sizes\":[2,2],\"dimensions\":[null,null]}");
    sst_embedder_free(e);
}

static void test_retries(void **state) {
    (void)state;
    sst_error err = {0};
    float out[N_TEXTS * 8];
    /* 500, then a reply. */
    sst_embedder *e = embedder("embed-500-once", 0, 0, 3);
    assert_sst_ok(sst_embedder_embed(e, k_texts, N_TEXTS, 8, out, &err), &err);
    assert_rows(k_texts, N_TEXTS, 8, out);
    assert_stats("embed-500-once", "{\"requests\":2,\"sizes\":[5,5],\"dimensions\":[null,null]}");
    sst_embedder_free(e);
    /* 429 with Retry-After: 1, then a reply: the client waited about a second. */
    e = embedder("embed-429-once", 0, 0, 3);
    double t0 = tu_now_s();
    assert_sst_ok(sst_embedder_embed(e, k_texts, N_TEXTS, 8, out, &err), &err);
    assert_true(tu_now_s() - t0 >= 0.9);
    assert_rows(k_texts, N_TEXTS, 8, out);
    sst_embedder_free(e);
    /* 500 every time: transient, retried, then an error naming the status and the body. */
    e = embedder("embed-500", 0, 0, 2);
    assert_int_equal(sst_embedder_embed(e, k_texts, N_TEXTS, 8, out, &err), SST_EUNAVAILABLE);
    assert_non_null(strstr(err.msg, "after 2 attempts: embeddings endpoint "));
    assert_non_null(strstr(err.msg, "answered HTTP 500"));
    assert_non_null(strstr(err.msg, "the embedder is overloaded"));
    assert_stats("embed-500", "{\"requests\":2,\"sizes\":[5,5],\"dimensions\":[null,null]}");
    sst_embedder_free(e);
    /* A reply slower than the timeout. */
    e = embedder_at(g_base, "embed-slow", 0, 0, 1, 300);
    assert_int_equal(sst_embedder_embed(e, k_texts, N_TEXTS, 8, out, &err), SST_ETIMEOUT);
    assert_non_null(strstr(err.msg, "embeddings request to "));
    assert_non_null(strstr(err.msg, "timed out (limit 300 ms)"));
    sst_embedder_free(e);
    /* Nobody listening. */
    e = embedder_at("http://127.0.0.1:9/v1/", "embed", 0, 0, 1, GENEROUS_MS);
    assert_int_equal(sst_embedder_embed(e, k_texts, N_TEXTS, 8, out, &err), SST_EUNAVAILABLE);
    assert_non_null(
        strstr(err.msg, "embeddings request to http://127.0.0.1:9/v1/embeddings failed"));
    sst_embedder_free(e);
}

/* Runs @p model on the five texts, expecting @p dims floats each; the code and message. */
static sst_code embed_error(const char *model, size_t dims, sst_error *err) {
    float out[N_TEXTS * 16];
    sst_embedder *e = embedder(model, 0, 0, 3);
    *err = (sst_error){0};
    sst_code rc = sst_embedder_embed(e, k_texts, N_TEXTS, dims, out, err);
    sst_embedder_free(e);
    return rc;
}

/* Malformed replies are errors that say what was expected and what came; none is retried. */
static void test_bad_replies(void **state) {
    (void)state;
    sst_error err;
    assert_int_equal(embed_error("embed-malformed", 8, &err), SST_EPARSE);
    assert_non_null(strstr(err.msg, "embeddings reply from http://127.0.0.1:"));
    assert_true(err.offset > 0); /* where the JSON text broke off */
    assert_stats("embed-malformed", "{\"requests\":1,\"sizes\":[5],\"dimensions\":[null]}");
    assert_int_equal(embed_error("embed-wrong-count", 8, &err), SST_EPARSE);
    assert_non_null(strstr(err.msg, "4 embeddings for 5 texts, expected 5"));
    assert_int_equal(embed_error("embed-wrong-dims", 8, &err), SST_EINVAL);
    assert_non_null(strstr(err.msg, "model 'embed-wrong-dims' gave 9 dims for text 0, expected 8"));
    /* The caller expects 16 dims, the model gives its own 8 (dims was not asked for). */
    assert_int_equal(embed_error("embed#size", 16, &err), SST_EINVAL);
    assert_non_null(strstr(err.msg, "gave 8 dims for text 0, expected 16"));
    assert_int_equal(embed_error("embed-dup-index", 8, &err), SST_EPARSE);
    assert_non_null(strstr(err.msg, "index 0 appears twice"));
    assert_stats("embed-dup-index", "{\"requests\":1,\"sizes\":[5],\"dimensions\":[null]}");
    /* A reply larger than max_response_bytes. */
    sst_embedder_opts o;
    sst_embedder_opts_init(&o);
    o.base_url = g_base;
    o.model = "embed";
    o.max_response_bytes = 100;
    sst_embedder *e = sst_embedder_openai(&o, &err);
    assert_non_null(e);
    float out[N_TEXTS * 8];
    assert_int_equal(sst_embedder_embed(e, k_texts, N_TEXTS, 8, out, &err), SST_ERANGE);
    assert_non_null(strstr(err.msg, "embeddings reply from "));
    assert_non_null(strstr(err.msg, "is larger than 100 bytes"));
    sst_embedder_free(e);
}

/* The caller's mistakes are found before anything is sent. */
static void test_bad_arguments(void **state) {
    (void)state;
    sst_error err = {0};
    float out[16];
    sst_embedder *e = embedder("embed#args", 0, 0, 1);
    const char *bad_utf8[] = {"fine", "\xff\xfe"};
    assert_int_equal(sst_embedder_embed(e, bad_utf8, 2, 8, out, &err), SST_EUTF8);
    assert_non_null(strstr(err.msg, "text 1 is not valid UTF-8"));
    const char *with_null[] = {"fine", NULL};
    assert_int_equal(sst_embedder_embed(e, with_null, 2, 8, out, &err), SST_EINVAL);
    assert_non_null(strstr(err.msg, "text 1 is NULL"));
    assert_int_equal(sst_embedder_embed(e, k_texts, 1, 0, out, &err), SST_EINVAL);
    assert_int_equal(sst_embedder_embed(e, k_texts, 1, 8, NULL, &err), SST_EINVAL);
    assert_int_equal(sst_embedder_embed(NULL, k_texts, 1, 8, out, &err), SST_EINVAL);
    assert_int_equal(sst_embedder_embed(e, k_texts, SIZE_MAX / 2, 8, out, &err), SST_EINVAL);
    /* Without an err ("not interested"): the code alone. */
    assert_int_equal(sst_embedder_embed(e, bad_utf8, 2, 8, out, NULL), SST_EUTF8);
    assert_stats("embed#args", "{\"requests\":0,\"sizes\":[],\"dimensions\":[]}");
    sst_embedder_free(e);
    sst_embedder_free(NULL);
    /* Bad options. */
    sst_embedder_opts o;
    sst_embedder_opts_init(&o);
    assert_null(sst_embedder_openai(&o, &err));
    assert_int_equal(err.code, SST_EINVAL);
    assert_null(sst_embedder_openai(NULL, &err));
    assert_int_equal(err.code, SST_EINVAL);
    o.base_url = "ftp://user:secretpass@example.com/v1";
    o.model = "embed";
    assert_null(sst_embedder_openai(&o, &err));
    assert_int_equal(err.code, SST_EINVAL);
    assert_non_null(strstr(err.msg, "'ftp://example.com/v1' is not an http(s) base URL"));
    o.base_url = g_base;
    o.model = "";
    assert_null(sst_embedder_openai(&o, NULL));
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

/* An endpoint that quotes the request's credentials in its error body. */
static void test_secrets_not_in_errors(void **state) {
    (void)state;
    sst_error err;
    setenv("SST_TEST_EMBED_KEY", "sk-test-SECRETKEY123", 1);
    assert_int_equal(embed_error("embed-echo-auth", 8, &err), SST_EINVAL);
    assert_no_secret(err.msg);
    assert_non_null(strstr(err.msg, "answered HTTP 401"));
    assert_non_null(strstr(err.msg, "rejected Authorization: Bearer [redacted]"));
    /* A key that is not sk-shaped is masked as the literal value. */
    setenv("SST_TEST_EMBED_KEY", "SECRETKEY123", 1);
    assert_int_equal(embed_error("embed-echo-auth", 8, &err), SST_EINVAL);
    assert_no_secret(err.msg);
    assert_non_null(strstr(err.msg, "Bearer [redacted]"));
    unsetenv("SST_TEST_EMBED_KEY");
    /* A base URL with user:password@: sent (basic auth), never shown. */
    char base[128], shown[128];
    snprintf(base, sizeof base, "http://user:secretpass@%s", g_base + strlen("http://"));
    snprintf(shown, sizeof shown, "%s/embeddings", g_base);
    float out[N_TEXTS * 8];
    sst_embedder *e = embedder_at(base, "embed-echo-auth", 0, 0, 1, GENEROUS_MS);
    assert_int_equal(sst_embedder_embed(e, k_texts, N_TEXTS, 8, out, &err), SST_EINVAL);
    assert_no_secret(err.msg);
    assert_non_null(strstr(err.msg, shown));
    assert_non_null(strstr(err.msg, "Basic [redacted]")); /* the credentials were sent */
    sst_embedder_free(e);
    e = embedder_at(base, "embed-slow", 0, 0, 1, 300);
    assert_int_equal(sst_embedder_embed(e, k_texts, N_TEXTS, 8, out, &err), SST_ETIMEOUT);
    assert_no_secret(err.msg);
    assert_non_null(strstr(err.msg, shown));
    sst_embedder_free(e);
    e = embedder_at("http://user:secretpass@127.0.0.1:9/v1", "embed", 0, 0, 1, GENEROUS_MS);
    assert_int_equal(sst_embedder_embed(e, k_texts, N_TEXTS, 8, out, &err), SST_EUNAVAILABLE);
    assert_no_secret(err.msg);
    assert_non_null(strstr(err.msg, "http://127.0.0.1:9/v1/embeddings"));
    sst_embedder_free(e);
}

typedef struct worker {
    sst_embedder *e;
    int id;
    sst_code rc;
    bool wrong; /* a row was not the text's vector */
    sst_error err;
} worker;

/* 20 calls of 7 texts (batches of 3) that differ per thread and call. */
static void *work(void *arg) {
    worker *w = arg;
    for (int call = 0; call < 20 && w->rc == SST_OK && !w->wrong; call++) {
        char buf[7][48];
        const char *texts[7];
        for (int i = 0; i < 7; i++) {
            snprintf(buf[i], sizeof buf[i], "thread %d call %d text %d", w->id, call, i);
            texts[i] = buf[i];
        }
        float out[7 * 8];
        w->rc = sst_embedder_embed(w->e, texts, 7, 8, out, &w->err);
        for (int i = 0; w->rc == SST_OK && i < 7; i++) {
            float want[8];
            expected(texts[i], 8, want);
            for (int k = 0; k < 8; k++) {
                w->wrong = w->wrong || fabsf(out[i * 8 + k] - want[k]) > 1e-6f;
            }
        }
    }
    return NULL;
}

/* One embedder, four threads calling it at once. */
static void test_concurrent(void **state) {
    (void)state;
    sst_embedder *e = embedder("embed#threads", 0, 3, 3);
    worker w[4];
    pthread_t th[4];
    for (int i = 0; i < 4; i++) {
        w[i] = (worker){.e = e, .id = i};
        assert_int_equal(pthread_create(&th[i], NULL, work, &w[i]), 0);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        assert_sst_ok(w[i].rc, &w[i].err);
        assert_false(w[i].wrong);
    }
    sst_value *s = stats("embed#threads");
    assert_int_equal(sst_int_value(sst_object_get(s, "requests")), 4 * 20 * 3);
    sst_value_unref(s);
    sst_embedder_free(e);
}

/* Every allocation of a call and of the constructor fails in turn: SST_ENOMEM, no leak. */
static void test_chaos(void **state) {
    (void)state;
    sst_embedder *e = embedder("embed#chaos", 0, 2, 1);
    setenv("SST_TEST_EMBED_KEY", "sk-chaos-key", 1);
    long baseline = tu_chaos_live();
    for (long n = 1;; n++) {
        sst_error err = {0};
        float out[N_TEXTS * 8];
        tu_chaos_fail_at(n);
        sst_code rc = sst_embedder_embed(e, k_texts, N_TEXTS, 8, out, &err);
        int fired = tu_chaos_fired();
        tu_chaos_off();
        if (!fired) {
            assert_sst_ok(rc, &err);
            assert_rows(k_texts, N_TEXTS, 8, out);
            print_message("embed: %ld allocation points, all clean\n", n - 1);
            break;
        }
        if (rc != SST_ENOMEM) {
            print_error("embed: allocation %ld failed but the result was %s: %s\n", n,
                        sst_code_name(rc), err.msg);
            fail();
        }
        assert_int_equal(err.code, SST_ENOMEM);
        assert_int_equal(tu_chaos_live(), baseline);
    }
    unsetenv("SST_TEST_EMBED_KEY");
    sst_embedder_free(e);
    baseline = tu_chaos_live();
    sst_embedder_opts o;
    sst_embedder_opts_init(&o);
    o.base_url = g_base;
    o.model = "embed";
    o.api_key_env = "SST_TEST_EMBED_KEY";
    for (long n = 1;; n++) {
        sst_error err = {0};
        tu_chaos_fail_at(n);
        e = sst_embedder_openai(&o, &err);
        int fired = tu_chaos_fired();
        tu_chaos_off();
        if (!fired) {
            assert_non_null(e);
            sst_embedder_free(e);
            break;
        }
        assert_null(e);
        assert_int_equal(err.code, SST_ENOMEM);
        assert_int_equal(tu_chaos_live(), baseline);
    }
}

int main(void) {
    tu_chaos_install();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vectors),
        cmocka_unit_test(test_order),
        cmocka_unit_test(test_batching),
        cmocka_unit_test(test_retries),
        cmocka_unit_test(test_bad_replies),
        cmocka_unit_test(test_bad_arguments),
        cmocka_unit_test(test_secrets_not_in_errors),
        cmocka_unit_test(test_concurrent),
        cmocka_unit_test(test_chaos),
    };
    return cmocka_run_group_tests(tests, start_server, stop_server);
}
