/* SPDX-License-Identifier: MIT */
/*
 * Tracing (src/agent/otlp.h): W3C traceparent formatting and parsing, ids,
 * the span model and its limits, the OTLP JSON of a span tree (pure), the
 * OpenTelemetry environment variables, and the exporter against
 * tests/otlp/receiver.mjs, a Node process on 127.0.0.1 that decodes every
 * export with OpenTelemetry's own protobuf definitions and refuses what they
 * do not read exactly as sent: a span tree (names, parents, typed
 * attributes, status, events, resource, headers), batching by size and by
 * delay, retries (503, 429 with Retry-After) and what is not retried (500),
 * a partial success, a collector that is slow or not there at all (100 000
 * spans exported fast into a bounded queue, the overflow counted, the
 * shutdown bounded), four threads exporting at once, and every allocation
 * failure of the span functions.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <math.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>

#include "agent/otlp.h"
#include "superstep/json.h"
#include "test_util.h"
#include "values/build.h"

/* ---- helpers ------------------------------------------------------------ */

static pid_t g_recv_pid;
static int g_recv_stdin = -1;
static char g_recv_base[64]; /* "http://127.0.0.1:PORT" */
static char g_recv_url[96];  /* g_recv_base + "/v1/traces" */

static double realtime_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1e6;
}

/* Starts tests/otlp/receiver.mjs once (SST_NODE, SST_OTLP_RECEIVER) and returns its base URL. */
static const char *receiver(void) {
    if (g_recv_pid > 0) {
        return g_recv_base;
    }
    const char *node = getenv("SST_NODE");
    node = node != NULL && node[0] != '\0' ? node : "node";
    char buf[512];
    const char *script = getenv("SST_OTLP_RECEIVER");
    if (script == NULL || script[0] == '\0') {
        script = tu_data_path("../otlp/receiver.mjs", buf, sizeof buf);
    }
    int out[2], in[2];
    assert_int_equal(pipe(out), 0);
    assert_int_equal(pipe(in), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        dup2(in[0], 0);
        dup2(out[1], 1);
        close(in[0]);
        close(in[1]);
        close(out[0]);
        close(out[1]);
        execlp(node, node, script, (char *)NULL);
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    g_recv_pid = pid;
    g_recv_stdin = in[1]; /* the receiver exits when this closes, should we die */
    FILE *f = fdopen(out[0], "r");
    int port = 0;
    if (f == NULL || fscanf(f, "%d", &port) != 1 || port <= 0) {
        fail_msg("the OTLP receiver did not start (%s %s); its packages come from: "
                 "npm ci --prefix tests/otlp",
                 node, script);
    }
    fclose(f);
    snprintf(g_recv_base, sizeof g_recv_base, "http://127.0.0.1:%d", port);
    snprintf(g_recv_url, sizeof g_recv_url, "%s/v1/traces", g_recv_base);
    return g_recv_base;
}

static void receiver_stop(void) {
    if (g_recv_pid > 0) {
        close(g_recv_stdin);
        kill(g_recv_pid, SIGTERM);
        waitpid(g_recv_pid, NULL, 0);
        g_recv_pid = 0;
    }
}

typedef struct text {
    char *data;
    size_t len;
} text;

static size_t on_text(char *p, size_t size, size_t n, void *ud) {
    text *t = ud;
    char *d = realloc(t->data, t->len + size * n + 1);
    if (d == NULL) {
        return 0;
    }
    memcpy(d + t->len, p, size * n);
    t->len += size * n;
    d[t->len] = '\0';
    t->data = d;
    return size * n;
}

/* A request to the receiver that must answer 200; the body (malloc'd). */
static char *http(const char *path, const char *post) {
    char url[160];
    snprintf(url, sizeof url, "%s%s", receiver(), path);
    CURL *c = curl_easy_init();
    assert_non_null(c);
    text t = {0};
    struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/json");
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 30000L);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_text);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &t);
    if (post != NULL) {
        curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, post);
    }
    CURLcode rc = curl_easy_perform(c);
    long status = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    curl_slist_free_all(h);
    curl_easy_cleanup(c);
    if (rc != CURLE_OK || status != 200) {
        fail_msg("receiver %s: %s, HTTP %ld", path, curl_easy_strerror(rc), status);
    }
    return t.data != NULL ? t.data : strdup("");
}

static void control(const char *json) {
    free(http("/control", json));
}

static void reset(void) {
    free(http("/reset", "{}"));
}

/* The receiver's state: {"requests":[...],"spans":[...],"nspans":N,"errors":[...]}. */
static sst_value *state(bool spans) {
    char *t = http(spans ? "/state" : "/state?spans=0", NULL);
    sst_error err = {0};
    sst_value *v = sst_json_parse(t, &err);
    free(t);
    assert_sst_ok(v != NULL ? SST_OK : err.code, &err);
    return v;
}

/* Fails, printing them, when the receiver refused any export. */
static void assert_no_errors(const sst_value *st) {
    const sst_value *errors = sst_object_get(st, "errors");
    for (size_t i = 0; i < sst_array_len(errors); i++) {
        print_error("receiver: %s\n", sst_string_cstr(sst_array_get(errors, i)));
    }
    assert_int_equal(sst_array_len(errors), 0);
}

static size_t n_requests(const sst_value *st) {
    return sst_array_len(sst_object_get(st, "requests"));
}

static const sst_value *request_at(const sst_value *st, size_t i) {
    return sst_array_get(sst_object_get(st, "requests"), i);
}

static int64_t req_int(const sst_value *st, size_t i, const char *key) {
    return sst_int_value(sst_object_get(request_at(st, i), key));
}

/* Polls the receiver until it has seen @p n requests; fails after @p ms. */
static sst_value *wait_requests(size_t n, double ms) {
    double end = tu_now_s() + ms / 1000.0;
    for (;;) {
        sst_value *st = state(false);
        if (n_requests(st) >= n) {
            return st;
        }
        sst_value_unref(st);
        if (tu_now_s() > end) {
            fail_msg("the receiver saw fewer than %zu requests in %.0f ms", n, ms);
        }
        usleep(20000);
    }
}

static const sst_value *span_named(const sst_value *st, const char *name) {
    const sst_value *spans = sst_object_get(st, "spans");
    for (size_t i = 0; i < sst_array_len(spans); i++) {
        const sst_value *s = sst_array_get(spans, i);
        if (strcmp(sst_string_cstr(sst_object_get(s, "name")), name) == 0) {
            return s;
        }
    }
    fail_msg("no span named '%s' reached the receiver", name);
    return NULL;
}

static void assert_member(const sst_value *o, const char *key, const char *json) {
    const sst_value *v = sst_object_get(o, key);
    if (v == NULL) {
        fail_msg("no member '%s'", key);
    }
    assert_json_eq(v, json);
}

static void opts_for_receiver(sst__otlp_opts *o) {
    receiver();
    sst__otlp_opts_init(o);
    o->endpoint = g_recv_url;
    o->schedule_delay_ms = 60000; /* only flushes and full batches send */
    o->retry_base_ms = 100;
    o->retry_max_ms = 400;
}

static sst__otlp_exporter *exporter(const sst__otlp_opts *o) {
    sst_error err = {0};
    sst__otlp_exporter *e = sst__otlp_exporter_new(o, &err);
    assert_sst_ok(e != NULL ? SST_OK : err.code, &err);
    return e;
}

static sst__span *span(const char *name, sst__span_kind kind, const sst__span *parent) {
    sst__trace_ctx ctx;
    if (parent != NULL) {
        sst__span_context(parent, &ctx);
    }
    sst_error err = {0};
    sst__span *s = sst__span_start(name, kind, parent != NULL ? &ctx : NULL, &err);
    assert_sst_ok(s != NULL ? SST_OK : err.code, &err);
    return s;
}

static void hex(const uint8_t *b, size_t n, char *out) {
    sst__hex_lower(b, n, out);
}

/* A port of 127.0.0.1 with nothing listening (bound, then closed). */
static int dead_port(void) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = 0};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
    close(fd);
    return ntohs(a.sin_port);
}

/* ---- traceparent and ids ------------------------------------------------ */

#define TP_TRACE "4bf92f3577b34da6a3ce929d0e0e4736"
#define TP_SPAN  "00f067aa0ba902b7"

static void test_traceparent(void **state_) {
    (void)state_;
    sst_error err = {0};
    sst__trace_ctx c;
    const char *valid = "00-" TP_TRACE "-" TP_SPAN "-01";
    assert_sst_ok(sst__traceparent_parse(valid, &c, &err), &err);
    char h[33];
    hex(c.trace_id, 16, h);
    assert_string_equal(h, TP_TRACE);
    hex(c.span_id, 8, h);
    assert_string_equal(h, TP_SPAN);
    assert_int_equal(c.flags, 1);
    char out[SST__TRACEPARENT_LEN + 1];
    sst__traceparent_format(&c, out);
    assert_string_equal(out, valid);

    /* HTTP's optional whitespace; flags kept as they are; later versions' extra fields. */
    assert_sst_ok(sst__traceparent_parse(" \t00-" TP_TRACE "-" TP_SPAN "-00\t ", &c, &err), &err);
    assert_int_equal(c.flags, 0);
    assert_sst_ok(
        sst__traceparent_parse("cc-" TP_TRACE "-" TP_SPAN "-09-what-the-future-holds", &c, &err),
        &err);
    assert_int_equal(c.flags, 9);
    assert_sst_ok(sst__traceparent_parse("01-" TP_TRACE "-" TP_SPAN "-01", &c, &err), &err);

    static const struct {
        const char *text;
        const char *says;
    } bad[] = {
        {"", "0 characters"},
        {"00", "2 characters"},
        {"00-" TP_TRACE "-" TP_SPAN "-0", "54 characters, expected 55"},
        {"00-" TP_TRACE "-" TP_SPAN "-01-", "56 characters, expected 55 for version 00"},
        {"00-" TP_TRACE "-" TP_SPAN "-01-extra", "expected 55 for version 00"},
        {"ff-" TP_TRACE "-" TP_SPAN "-01", "version ff is invalid"},
        {"0G-" TP_TRACE "-" TP_SPAN "-01", "the version has 'G' at offset 1"},
        {"0A-" TP_TRACE "-" TP_SPAN "-01", "the version has 'A' at offset 1"},
        {"00-4BF92F3577B34DA6A3CE929D0E0E4736-" TP_SPAN "-01", "the trace-id has 'B' at offset 4"},
        {"00-" TP_TRACE "-00F067AA0BA902B7-01", "the parent-id has 'F' at offset 38"},
        {"00-" TP_TRACE "-" TP_SPAN "-0A", "the trace-flags has 'A' at offset 54"},
        {"00-4bf92f3577b34da6a3ce929d0e0e473g-" TP_SPAN "-01", "the trace-id has 'g' at offset 34"},
        {"00-00000000000000000000000000000000-" TP_SPAN "-01", "the trace-id is all zeros"},
        {"00-" TP_TRACE "-0000000000000000-01", "the parent-id is all zeros"},
        {"00_" TP_TRACE "-" TP_SPAN "-01", "expected '-' at offset 2"},
        {"00-" TP_TRACE "_" TP_SPAN "-01", "expected '-' at offset 35"},
        {"00-" TP_TRACE "-" TP_SPAN "_01", "expected '-' at offset 52"},
        {"00-4bf92f3577b34da6a3ce929d0e0e47-" TP_SPAN "-0101", "expected '-' at offset 35"},
        {"cc-" TP_TRACE "-" TP_SPAN "-01x", "expected '-' after the flags"},
        {"cc-" TP_TRACE "-" TP_SPAN, "52 characters, expected at least 55"},
    };
    for (size_t i = 0; i < SST_ARRAY_LEN(bad); i++) {
        sst__trace_ctx untouched;
        memset(&untouched, 0xAA, sizeof untouched);
        sst__trace_ctx before = untouched;
        sst_error_clear(&err);
        sst_code rc = sst__traceparent_parse(bad[i].text, &untouched, &err);
        if (rc != SST_EPARSE || strstr(err.msg, bad[i].says) == NULL) {
            fail_msg("traceparent '%s': %s \"%s\", expected SST_EPARSE \"...%s...\"", bad[i].text,
                     sst_code_name(rc), err.msg, bad[i].says);
        }
        assert_memory_equal(&untouched, &before, sizeof before);
    }
    assert_int_equal(sst__traceparent_parse(NULL, &c, &err), SST_EINVAL);
}

static int cmp_id(const void *a, const void *b) {
    return memcmp(a, b, 8);
}

static void test_ids(void **state_) {
    (void)state_;
    sst_error err = {0};
    enum { N = 2000 };
    static uint8_t spans[N][8];
    uint8_t trace[16], prev[16] = {0};
    for (size_t i = 0; i < N; i++) {
        assert_sst_ok(sst__trace_ids_new(trace, spans[i], &err), &err);
        assert_memory_not_equal(trace, prev, 16);
        memcpy(prev, trace, 16);
        sst__trace_ctx c = {.flags = 1};
        memcpy(c.trace_id, trace, 16);
        memcpy(c.span_id, spans[i], 8);
        assert_true(sst__trace_ctx_valid(&c));
    }
    qsort(spans, N, 8, cmp_id);
    for (size_t i = 1; i < N; i++) {
        assert_memory_not_equal(spans[i - 1], spans[i], 8); /* 2000 random 64-bit ids differ */
    }
    sst__trace_ctx zero = {0};
    assert_false(sst__trace_ctx_valid(&zero));
    assert_false(sst__trace_ctx_valid(NULL));

    /* A child joins its parent's trace; a root starts one, sampled; a remote parent's
     * flags are kept, and the traceparent of a span reads back as its context. */
    sst__span *root = span("root", SST__SPAN_SERVER, NULL);
    sst__span *child = span("child", SST__SPAN_INTERNAL, root);
    assert_memory_equal(child->ctx.trace_id, root->ctx.trace_id, 16);
    assert_memory_equal(child->parent_span_id, root->ctx.span_id, 8);
    assert_memory_not_equal(child->ctx.span_id, root->ctx.span_id, 8);
    assert_int_equal(root->ctx.flags, SST__TRACE_SAMPLED);
    uint8_t zero8[8] = {0};
    assert_memory_equal(root->parent_span_id, zero8, 8);
    char tp[SST__TRACEPARENT_LEN + 1];
    sst__trace_ctx c, back;
    sst__span_context(child, &c);
    sst__traceparent_format(&c, tp);
    assert_sst_ok(sst__traceparent_parse(tp, &back, &err), &err);
    assert_memory_equal(&back, &c, sizeof c);
    assert_sst_ok(sst__traceparent_parse("00-" TP_TRACE "-" TP_SPAN "-00", &c, &err), &err);
    sst__span *remote = sst__span_start("remote child", SST__SPAN_SERVER, &c, &err);
    assert_non_null(remote);
    assert_int_equal(remote->ctx.flags, 0);
    assert_memory_equal(remote->ctx.trace_id, c.trace_id, 16);
    assert_memory_equal(remote->parent_span_id, c.span_id, 8);
    sst__span_free(remote);
    sst__span_free(child);
    sst__span_free(root);
}

/* ---- spans ----------------------------------------------------------------- */

static void test_span_api(void **state_) {
    (void)state_;
    sst_error err = {0};
    assert_null(sst__span_start(NULL, SST__SPAN_INTERNAL, NULL, &err));
    assert_int_equal(err.code, SST_EINVAL);

    sst__span *s = span("limits", SST__SPAN_INTERNAL, NULL);
    uint64_t t0 = sst__otlp_now_ns();
    assert_true(s->start_unix_ns <= t0 && t0 - s->start_unix_ns < 60ull * 1000000000u);
    char key[32];
    for (int i = 0; i < SST__SPAN_MAX_ATTRIBUTES + 2; i++) {
        snprintf(key, sizeof key, "k%d", i);
        assert_sst_ok(sst__span_set_int(s, key, i, &err), &err);
    }
    assert_int_equal(sst_object_len(s->attributes), SST__SPAN_MAX_ATTRIBUTES);
    assert_int_equal(s->dropped_attributes, 2);
    assert_sst_ok(sst__span_set_str(s, "k0", "replaced", &err), &err); /* a known key: kept */
    assert_json_eq(sst_object_get(s->attributes, "k0"), "\"replaced\"");
    assert_sst_ok(sst__span_set_take(s, "k1", sst_null(), &err), &err); /* null removes */
    assert_null(sst_object_get(s->attributes, "k1"));
    assert_sst_ok(sst__span_set_bool(s, "fits now", true, &err), &err);
    assert_sst_ok(sst__span_set_str(s, "nothing", NULL, &err), &err);
    assert_null(sst_object_get(s->attributes, "nothing"));
    assert_int_equal(sst__span_set_double(s, "nan", NAN, &err), SST_ERANGE);
    assert_int_equal(sst__span_set_take(s, NULL, sst_bool(true), &err), SST_EINVAL);
    assert_int_equal(sst__span_set_take(s, "k", NULL, &err), SST_EINVAL);

    for (int i = 0; i < SST__SPAN_MAX_EVENTS + 3; i++) {
        assert_sst_ok(sst__span_add_event_take(s, "tick", NULL, &err), &err);
    }
    assert_int_equal(s->n_events, SST__SPAN_MAX_EVENTS);
    assert_int_equal(s->dropped_events, 3);
    /* attributes that are not an object are refused and released (ASan: no leak) */
    sst_value *arr = sst_array_push_take(sst_array_empty(), sst_bool(true), &err);
    assert_int_equal(sst__span_add_event_take(s, "bad", arr, &err), SST_EINVAL);

    assert_sst_ok(sst__span_set_status(s, SST__STATUS_OK, "ignored for OK", &err), &err);
    assert_int_equal(s->status, SST__STATUS_OK);
    assert_null(s->status_message);
    sst__span_end(s);
    uint64_t end = s->end_unix_ns;
    assert_true(end >= s->start_unix_ns);
    sst__span_end(s);
    assert_true(s->end_unix_ns == end);
    sst__span_free(s);

    s = span("fails", SST__SPAN_CLIENT, NULL);
    assert_sst_ok(sst__span_record_error(s, "SST_ETIMEOUT", "tool 'search' timed out", &err), &err);
    assert_int_equal(s->status, SST__STATUS_ERROR);
    assert_string_equal(s->status_message, "tool 'search' timed out");
    assert_int_equal(s->n_events, 1);
    assert_string_equal(s->events[0].name, "exception");
    assert_json_eq(s->events[0].attributes, "{\"exception.type\":\"SST_ETIMEOUT\","
                                            "\"exception.message\":\"tool 'search' timed out\"}");
    assert_int_equal(sst__span_record_error(s, NULL, NULL, &err), SST_EINVAL);
    /* A NULL exporter frees what it is given: hooks may export whether tracing is on or not. */
    sst__otlp_export(NULL, s);
    sst__otlp_export(NULL, NULL);
    sst__span_free(NULL);
}

/* Fixed ids and times, so that the encoding can be compared whole. */
static sst__span *fixed_span(const char *name, sst__span_kind kind, uint8_t id,
                             const sst__span *parent, uint64_t start, uint64_t end) {
    sst__span *s = span(name, kind, parent);
    static const uint8_t trace[16] = {0x0a, 0xf7, 0x65, 0x19, 0x16, 0xcd, 0x43, 0xdd,
                                      0x84, 0x48, 0xeb, 0x21, 0x1c, 0x80, 0x31, 0x9c};
    memcpy(s->ctx.trace_id, trace, 16);
    memset(s->ctx.span_id, 0, 8);
    s->ctx.span_id[7] = id;
    if (parent != NULL) {
        memcpy(s->parent_span_id, parent->ctx.span_id, 8);
    }
    s->start_unix_ns = start;
    s->end_unix_ns = end;
    return s;
}

static void test_encode(void **state_) {
    (void)state_;
    sst_error err = {0};
    sst__span *run = fixed_span("run", SST__SPAN_SERVER, 1, NULL, 1700000000000000000ull,
                                1700000000900000000ull);
    assert_sst_ok(sst__span_set_str(run, "superstep.thread_id", "t-1", &err), &err);
    sst__span *llm = fixed_span("chat gpt-4o", SST__SPAN_CLIENT, 2, run, 1700000000100000000ull,
                                1700000000800000000ull);
    assert_sst_ok(sst__span_set_int(llm, "gen_ai.usage.input_tokens", 42, &err), &err);
    assert_sst_ok(sst__span_set_int(llm, "big", INT64_MIN, &err), &err);
    assert_sst_ok(sst__span_set_double(llm, "gen_ai.request.temperature", 0.25, &err), &err);
    assert_sst_ok(sst__span_set_double(llm, "whole", 2.0, &err), &err);
    assert_sst_ok(sst__span_set_bool(llm, "stream", true, &err), &err);
    assert_sst_ok(
        sst__span_set_take(llm, "stop", tu_json("[\"a\", 1, null, {\"k\": false}]"), &err), &err);
    assert_sst_ok(sst__span_record_error(llm, "SST_EUNAVAILABLE", "HTTP 503", &err), &err);
    llm->events[0].time_unix_ns = 1700000000700000000ull;
    /* Not UTF-8 (a lone 0xFF, a truncated sequence) and control characters. */
    sst__span *odd = fixed_span("bad\xff name\x01\"\\\n\xe2\x82", SST__SPAN_INTERNAL, 3, run,
                                1700000000200000000ull, 0);
    sst__span *spans[] = {llm, odd, run};
    sst_value *resource = tu_json("{\"deployment.environment\": \"test\", \"service.name\": "
                                  "\"not this one\", \"replicas\": 3}");
    size_t len = 0;
    char *json = sst__otlp_encode_request("svc", resource, spans, 3, &len, &err);
    assert_non_null(json);
    assert_int_equal(len, strlen(json));
    /* The OTLP JSON mapping, as written: hex ids, int64 as strings, enums as numbers. */
    assert_non_null(strstr(json, "\"traceId\":\"0af7651916cd43dd8448eb211c80319c\""));
    assert_non_null(strstr(json, "\"spanId\":\"0000000000000002\","
                                 "\"parentSpanId\":\"0000000000000001\""));
    assert_non_null(strstr(json, "{\"intValue\":\"42\"}"));
    assert_non_null(strstr(json, "{\"intValue\":\"-9223372036854775808\"}"));
    assert_non_null(strstr(json, "\"kind\":3,\"startTimeUnixNano\":\"1700000000100000000\""));
    assert_non_null(strstr(json, "\"name\":\"bad\xEF\xBF\xBD name\\u0001\\\"\\\\\\n\xEF\xBF\xBD"
                                 "\xEF\xBF\xBD\""));
    sst_value *got = sst_json_parse(json, &err); /* valid JSON, valid UTF-8 */
    assert_sst_ok(got != NULL ? SST_OK : err.code, &err);
    char version[64];
    snprintf(version, sizeof version, "\"%s\"", sst_version());
    char expected[8192];
    snprintf(
        expected, sizeof expected,
        "{\"resourceSpans\": [{"
        "  \"resource\": {\"attributes\": ["
        "    {\"key\": \"service.name\", \"value\": {\"stringValue\": \"svc\"}},"
        "    {\"key\": \"telemetry.sdk.name\", \"value\": {\"stringValue\": \"superstep\"}},"
        "    {\"key\": \"telemetry.sdk.language\", \"value\": {\"stringValue\": \"c\"}},"
        "    {\"key\": \"telemetry.sdk.version\", \"value\": {\"stringValue\": %s}},"
        "    {\"key\": \"deployment.environment\", \"value\": {\"stringValue\": \"test\"}},"
        "    {\"key\": \"replicas\", \"value\": {\"intValue\": \"3\"}}]},"
        "  \"scopeSpans\": [{\"scope\": {\"name\": \"superstep\", \"version\": %s}, \"spans\": ["
        "    {\"traceId\": \"0af7651916cd43dd8448eb211c80319c\", \"spanId\": \"0000000000000002\","
        "     \"parentSpanId\": \"0000000000000001\", \"name\": \"chat gpt-4o\", \"kind\": 3,"
        "     \"startTimeUnixNano\": \"1700000000100000000\","
        "     \"endTimeUnixNano\": \"1700000000800000000\","
        "     \"attributes\": ["
        "       {\"key\": \"gen_ai.usage.input_tokens\", \"value\": {\"intValue\": \"42\"}},"
        "       {\"key\": \"big\", \"value\": {\"intValue\": \"-9223372036854775808\"}},"
        "       {\"key\": \"gen_ai.request.temperature\", \"value\": {\"doubleValue\": 0.25}},"
        "       {\"key\": \"whole\", \"value\": {\"doubleValue\": 2.0}},"
        "       {\"key\": \"stream\", \"value\": {\"boolValue\": true}},"
        "       {\"key\": \"stop\", \"value\": {\"arrayValue\": {\"values\": ["
        "         {\"stringValue\": \"a\"}, {\"intValue\": \"1\"}, {},"
        "         {\"kvlistValue\": {\"values\": [{\"key\": \"k\", \"value\": {\"boolValue\": "
        "false}}]}}]}}}],"
        "     \"events\": [{\"timeUnixNano\": \"1700000000700000000\", \"name\": \"exception\","
        "       \"attributes\": ["
        "         {\"key\": \"exception.type\", \"value\": {\"stringValue\": "
        "\"SST_EUNAVAILABLE\"}},"
        "         {\"key\": \"exception.message\", \"value\": {\"stringValue\": \"HTTP 503\"}}]}],"
        "     \"status\": {\"code\": 2, \"message\": \"HTTP 503\"}},"
        "    {\"traceId\": \"0af7651916cd43dd8448eb211c80319c\", \"spanId\": \"0000000000000003\","
        "     \"parentSpanId\": \"0000000000000001\","
        "     \"name\": \"bad\\ufffd name\\u0001\\\"\\\\\\n\\ufffd\\ufffd\", \"kind\": 1,"
        "     \"startTimeUnixNano\": \"1700000000200000000\","
        "     \"endTimeUnixNano\": \"1700000000200000000\"},"
        "    {\"traceId\": \"0af7651916cd43dd8448eb211c80319c\", \"spanId\": \"0000000000000001\","
        "     \"name\": \"run\", \"kind\": 2,"
        "     \"startTimeUnixNano\": \"1700000000000000000\","
        "     \"endTimeUnixNano\": \"1700000000900000000\","
        "     \"attributes\": [{\"key\": \"superstep.thread_id\", \"value\": {\"stringValue\": "
        "\"t-1\"}}]}"
        "  ]}]}]}",
        version, version);
    assert_json_eq(got, expected);
    sst_value_unref(got);
    sst_free(json);

    /* Nesting deeper than 16 goes as the JSON text of what is left. */
    sst_value *deep = tu_json("[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]"); /* 20 deep */
    assert_sst_ok(sst__span_set_take(run, "deep", deep, &err), &err);
    sst__buf b;
    sst__buf_init(&b);
    sst__otlp_encode_span(&b, run);
    assert_false(b.oom);
    sst__buf_putc(&b, '\0');
    assert_non_null(strstr(b.data, "{\"stringValue\":\"[[[[1]]]]\"}"));
    got = sst_json_parse(b.data, &err);
    assert_non_null(got);
    sst_value_unref(got);
    sst__buf_free(&b);

    sst_value_unref(resource);
    for (size_t i = 0; i < SST_ARRAY_LEN(spans); i++) {
        sst__span_free(spans[i]);
    }
}

/* Every allocation failure of building, encoding and exporting a span: SST_ENOMEM, no leak. */
static void test_chaos(void **state_) {
    (void)state_;
    long baseline = tu_chaos_live();
    bool completed = false;
    for (long n = 1; !completed && n < 5000; n++) {
        sst_error err = {0};
        tu_chaos_fail_at(n);
        sst__span *s = sst__span_start("chaos", SST__SPAN_CLIENT, NULL, &err);
        char *json = NULL;
        if (s != NULL) {
            sst_code rc[6];
            rc[0] = sst__span_set_str(s, "s", "text", &err);
            rc[1] = sst__span_set_int(s, "i", 7, &err);
            rc[2] = sst__span_set_take(
                s, "a", sst__push_take(sst_array_empty(), sst_int_new(1, &err), &err), &err);
            rc[3] = sst__span_add_event_take(s, "ev", NULL, &err);
            rc[4] = sst__span_record_error(s, "SST_EIO", "broken", &err);
            rc[5] = sst__span_set_status(s, SST__STATUS_ERROR, "still broken", &err);
            for (size_t i = 0; i < SST_ARRAY_LEN(rc); i++) {
                assert_true(rc[i] == SST_OK || rc[i] == SST_ENOMEM || rc[i] == SST_EINVAL);
            }
            sst__span *one[] = {s};
            json = sst__otlp_encode_request("svc", NULL, one, 1, NULL, &err);
        } else {
            assert_int_equal(err.code, SST_ENOMEM);
        }
        sst_value *kv = sst__otlp_parse_kv("a=1,b=%20two", "X", &err);
        int fired = tu_chaos_fired();
        tu_chaos_off();
        if (!fired) {
            assert_non_null(json);
            assert_non_null(kv);
            completed = true;
        }
        sst_free(json);
        sst_value_unref(kv);
        sst__span_free(s);
        assert_int_equal(tu_chaos_live(), baseline);
    }
    assert_true(completed);

    /* The exporter's constructor: every failure is SST_ENOMEM with nothing left behind. */
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/v1/traces", dead_port());
    completed = false;
    for (long n = 1; !completed && n < 5000; n++) {
        sst__otlp_opts o;
        sst__otlp_opts_init(&o);
        o.endpoint = url;
        o.headers = "authorization=Bearer x,k=v";
        sst_error err = {0};
        tu_chaos_fail_at(n);
        sst__otlp_exporter *e = sst__otlp_exporter_new(&o, &err);
        int fired = tu_chaos_fired();
        tu_chaos_off();
        if (e == NULL) {
            assert_int_equal(err.code, SST_ENOMEM);
        }
        completed = !fired;
        sst__otlp_exporter_free(e);
        assert_int_equal(tu_chaos_live(), baseline);
    }
    assert_true(completed);
}

/* ---- the environment ---------------------------------------------------------- */

static const char *const otel_vars[] = {
    "OTEL_SDK_DISABLED",           "OTEL_TRACES_EXPORTER",
    "OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    "OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
    "OTEL_SERVICE_NAME",           "OTEL_RESOURCE_ATTRIBUTES",
    "OTEL_EXPORTER_OTLP_HEADERS",  "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
    "OTEL_EXPORTER_OTLP_TIMEOUT",  "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT",
    "OTEL_BSP_SCHEDULE_DELAY",     "OTEL_BSP_EXPORT_TIMEOUT",
    "OTEL_BSP_MAX_QUEUE_SIZE",     "OTEL_BSP_MAX_EXPORT_BATCH_SIZE",
};

static void clear_env(void) {
    for (size_t i = 0; i < SST_ARRAY_LEN(otel_vars); i++) {
        unsetenv(otel_vars[i]);
    }
}

/* sst__otlp_opts_from_env, which must return @p expect. */
static void from_env(sst__otlp_opts *o, sst_code expect, sst_error *err) {
    sst_error_clear(err);
    sst_code rc = sst__otlp_opts_from_env(o, err);
    if (rc != expect) {
        fail_msg("sst__otlp_opts_from_env: %s \"%s\", expected %s", sst_code_name(rc), err->msg,
                 sst_code_name(expect));
    }
}

static void test_env(void **state_) {
    (void)state_;
    sst_error err = {0};
    sst__otlp_opts o;
    clear_env();
    from_env(&o, SST_OK, &err);
    assert_null(o.endpoint); /* nothing asked for: no tracing */
    assert_string_equal(o.service_name, "superstep");
    assert_null(o.headers);
    assert_null(o.resource);
    assert_int_equal(o.max_queue, 2048);
    assert_int_equal(o.max_batch, 512);
    assert_int_equal(o.schedule_delay_ms, 5000);
    assert_int_equal(o.timeout_ms, 10000);
    assert_int_equal(o.export_timeout_ms, 30000);
    sst__otlp_opts_free(&o);

    /* The base endpoint gets /v1/traces (no double slash); the traces one is used as is. */
    setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318/", 1);
    from_env(&o, SST_OK, &err);
    assert_string_equal(o.endpoint, "http://collector:4318/v1/traces");
    sst__otlp_opts_free(&o);
    setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "https://collector.example/otlp", 1);
    from_env(&o, SST_OK, &err);
    assert_string_equal(o.endpoint, "https://collector.example/otlp/v1/traces");
    sst__otlp_opts_free(&o);
    setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://other:9999/custom/path", 1);
    from_env(&o, SST_OK, &err);
    assert_string_equal(o.endpoint, "http://other:9999/custom/path");
    sst__otlp_opts_free(&o);
    setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "", 1); /* empty is unset */
    from_env(&o, SST_OK, &err);
    assert_string_equal(o.endpoint, "https://collector.example/otlp/v1/traces");
    sst__otlp_opts_free(&o);

    /* Names, resource attributes, headers (the traces variable wins), numbers. */
    setenv("OTEL_RESOURCE_ATTRIBUTES", "service.name=from-attrs, deployment.environment=prod%20eu",
           1);
    setenv("OTEL_EXPORTER_OTLP_HEADERS", "x-ignored=1", 1);
    setenv("OTEL_EXPORTER_OTLP_TRACES_HEADERS", "api-key=secret%20value%2C1 , x-team = blue,,", 1);
    setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "2500", 1);
    setenv("OTEL_BSP_SCHEDULE_DELAY", "250", 1);
    setenv("OTEL_BSP_EXPORT_TIMEOUT", "0", 1);
    setenv("OTEL_BSP_MAX_QUEUE_SIZE", "100", 1);
    setenv("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "10", 1);
    setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json", 1);
    from_env(&o, SST_OK, &err);
    assert_string_equal(o.service_name, "from-attrs");
    assert_json_eq(o.resource,
                   "{\"service.name\": \"from-attrs\", \"deployment.environment\": \"prod eu\"}");
    sst_value *h = sst__otlp_parse_kv(o.headers, "headers", &err);
    assert_non_null(h);
    assert_json_eq(h, "{\"api-key\": \"secret value,1\", \"x-team\": \"blue\"}");
    sst_value_unref(h);
    assert_int_equal(o.timeout_ms, 2500);
    assert_int_equal(o.schedule_delay_ms, 250);
    assert_int_equal(o.export_timeout_ms, 0);
    assert_int_equal(o.max_queue, 100);
    assert_int_equal(o.max_batch, 10);
    sst__otlp_opts_free(&o);
    setenv("OTEL_SERVICE_NAME", "svc", 1); /* wins over service.name of the attributes */
    setenv("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "700", 1);
    from_env(&o, SST_OK, &err);
    assert_string_equal(o.service_name, "svc");
    assert_int_equal(o.timeout_ms, 700);
    sst__otlp_opts_free(&o);

    /* Bad values: each named and ignored (as if not set: the default, or for the traces
     * variables the general one), the rest still read. */
    setenv("OTEL_BSP_MAX_QUEUE_SIZE", "-5", 1);
    setenv("OTEL_BSP_SCHEDULE_DELAY", "soon", 1);
    setenv("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "1e3", 1);
    setenv("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "4096", 1);
    from_env(&o, SST_EINVAL, &err);
    static const char *const named[] = {
        "OTEL_BSP_MAX_QUEUE_SIZE: '-5' is not an integer 1..16777216",
        "OTEL_BSP_SCHEDULE_DELAY: 'soon' is not an integer 0..2147483647",
        "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT: '1e3' is not an integer 0..2147483647",
        "OTEL_BSP_MAX_EXPORT_BATCH_SIZE: 4096 > queue size 2048"};
    for (size_t i = 0; i < SST_ARRAY_LEN(named); i++) {
        if (strstr(err.msg, named[i]) == NULL) {
            fail_msg("\"%s\" does not name \"%s\"", err.msg, named[i]);
        }
    }
    assert_string_equal(o.endpoint, "https://collector.example/otlp/v1/traces");
    assert_string_equal(o.service_name, "svc");
    assert_int_equal(o.max_queue, 2048);
    assert_int_equal(o.max_batch, 2048); /* 4096 is valid alone, above the queue: cut to it */
    assert_int_equal(o.schedule_delay_ms, 5000);
    assert_int_equal(o.timeout_ms, 2500); /* OTEL_EXPORTER_OTLP_TIMEOUT */
    sst__otlp_opts_free(&o);
    setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf", 1);
    setenv("OTEL_EXPORTER_OTLP_TRACES_HEADERS", "novalue", 1);
    setenv("OTEL_RESOURCE_ATTRIBUTES", "a=%zz", 1);
    from_env(&o, SST_EINVAL, &err);
    static const char *const named2[] = {
        "OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf' unsupported (http/json only)",
        "OTEL_RESOURCE_ATTRIBUTES: the value of 'a' has a bad %-escape",
        "OTEL_EXPORTER_OTLP_TRACES_HEADERS: entry 1 has no '='"};
    for (size_t i = 0; i < SST_ARRAY_LEN(named2); i++) {
        if (strstr(err.msg, named2[i]) == NULL) {
            fail_msg("\"%s\" does not name \"%s\"", err.msg, named2[i]);
        }
    }
    assert_null(o.resource); /* the whole variable is discarded */
    assert_string_equal(o.headers, "x-ignored=1");
    assert_string_equal(o.endpoint, "https://collector.example/otlp/v1/traces");
    sst__otlp_opts_free(&o);

    /* Off switches. */
    setenv("OTEL_TRACES_EXPORTER", "none", 1);
    from_env(&o, SST_OK, &err);
    assert_null(o.endpoint);
    sst__otlp_opts_free(&o);
    unsetenv("OTEL_TRACES_EXPORTER");
    setenv("OTEL_SDK_DISABLED", "TRUE", 1);
    from_env(&o, SST_OK, &err);
    assert_null(o.endpoint);
    sst__otlp_opts_free(&o);
    clear_env();

    /* The k=v lists themselves; values (maybe secrets) never appear in messages. */
    static const struct {
        const char *text;
        const char *says;
    } bad[] = {
        {"a=1,secretvalue", "X: entry 2 has no '='"},
        {" =secret", "X: entry 1 has an empty key"},
        {"my key=secret", "X: the key of entry 1 has a character not allowed in a key at offset 2"},
        {"k=secret%zz", "X: the value of 'k' has a bad %-escape"},
        {"k=secret%4", "X: the value of 'k' has a bad %-escape"},
        {"k=secret%0a", "X: the value of 'k' has a control character"},
        {"k=secret%ff", "X: the value of 'k' is not UTF-8"},
    };
    for (size_t i = 0; i < SST_ARRAY_LEN(bad); i++) {
        sst_error_clear(&err);
        sst_value *v = sst__otlp_parse_kv(bad[i].text, "X", &err);
        if (v != NULL || err.code != SST_EINVAL || strcmp(err.msg, bad[i].says) != 0) {
            fail_msg("'%s': \"%s\", expected \"%s\"", bad[i].text, err.msg, bad[i].says);
        }
        assert_null(strstr(err.msg, "secret"));
    }
    sst_value *v = sst__otlp_parse_kv("", "X", &err);
    assert_json_eq(v, "{}");
    sst_value_unref(v);
    v = sst__otlp_parse_kv("k=a=b,empty=, u=%C3%A9t%C3%A9", "X", &err);
    assert_json_eq(v, "{\"k\": \"a=b\", \"empty\": \"\", \"u\": \"\xC3\xA9t\xC3\xA9\"}");
    sst_value_unref(v);
}

static void test_bad_opts(void **state_) {
    (void)state_;
    sst__otlp_opts o;
    sst_error err = {0};
    static const struct {
        const char *endpoint;
        size_t queue, batch;
        const char *headers;
        const char *says;
    } bad[] = {
        {NULL, 10, 5, NULL, "OTLP exporter: no endpoint"},
        {"ftp://u:secret@h/v1/traces", 10, 5, NULL,
         "OTLP exporter: endpoint 'ftp://h/v1/traces' is not an http:// or https:// URL"},
        {"http://h/v1/traces", 0, 5, NULL, "OTLP exporter: max_queue 0 is not 1 to 16777216"},
        {"http://h/v1/traces", 10, 0, NULL,
         "OTLP exporter: max_batch 0 is not 1 to max_queue (10)"},
        {"http://h/v1/traces", 10, 11, NULL, "max_batch 11 is not 1 to max_queue (10)"},
        {"http://h/v1/traces", 10, 5, "k=%", "OTLP exporter headers: the value of 'k' has a bad"},
    };
    for (size_t i = 0; i < SST_ARRAY_LEN(bad); i++) {
        sst__otlp_opts_init(&o);
        o.endpoint = bad[i].endpoint;
        o.max_queue = bad[i].queue;
        o.max_batch = bad[i].batch;
        o.headers = bad[i].headers;
        sst_error_clear(&err);
        assert_null(sst__otlp_exporter_new(&o, &err));
        if (err.code != SST_EINVAL || strstr(err.msg, bad[i].says) == NULL) {
            fail_msg("case %zu: %s \"%s\", expected \"%s\"", i, sst_code_name(err.code), err.msg,
                     bad[i].says);
        }
    }
    assert_null(sst__otlp_exporter_new(NULL, &err));
    sst__otlp_exporter_free(NULL);
    assert_sst_ok(sst__otlp_flush(NULL, 0, &err), &err);
}

/* ---- export to the receiver -------------------------------------------------------- */

static void id_hex(const uint8_t *id, size_t n, char *out) {
    sst__hex_lower(id, n, out);
}

static void test_export_tree(void **state_) {
    (void)state_;
    sst_error err = {0};
    sst__otlp_opts o;
    opts_for_receiver(&o);
    reset();
    o.service_name = "otlp-test";
    sst_value *resource = tu_json("{\"deployment.environment\": \"test\"}");
    o.resource = resource;
    o.headers = "authorization=Bearer%20tok,x-tenant=t1";
    sst__otlp_exporter *e = exporter(&o);

    /* A run continuing a remote trace (a traceparent header), two steps, a task, an LLM
     * call and a tool call that fails; exported children first, as they end. */
    sst__trace_ctx remote;
    assert_sst_ok(sst__traceparent_parse("00-" TP_TRACE "-" TP_SPAN "-01", &remote, &err), &err);
    sst__span *run = sst__span_start("run", SST__SPAN_SERVER, &remote, &err);
    assert_non_null(run);
    assert_sst_ok(sst__span_set_str(run, "superstep.thread_id", "thread-1", &err), &err);
    sst__span *step0 = span("superstep 0", SST__SPAN_INTERNAL, run);
    assert_sst_ok(sst__span_set_int(step0, "superstep.step", 0, &err), &err);
    sst__span *task = span("task agent", SST__SPAN_INTERNAL, step0);
    sst__span *llm = span("chat gpt-4o", SST__SPAN_CLIENT, task);
    llm->start_unix_ns = 1700000000100000000ull;
    llm->end_unix_ns = 1700000000800000000ull;
    assert_sst_ok(sst__span_set_str(llm, "gen_ai.request.model", "gpt-4o", &err), &err);
    assert_sst_ok(sst__span_set_int(llm, "gen_ai.usage.input_tokens", 42, &err), &err);
    assert_sst_ok(sst__span_set_int(llm, "negative", -7, &err), &err);
    assert_sst_ok(sst__span_set_double(llm, "gen_ai.request.temperature", 0.25, &err), &err);
    assert_sst_ok(sst__span_set_bool(llm, "stream", true, &err), &err);
    assert_sst_ok(sst__span_set_take(llm, "stop", tu_json("[\"END\", \"STOP\"]"), &err), &err);
    assert_sst_ok(sst__span_set_status(llm, SST__STATUS_OK, NULL, &err), &err);
    sst__span *tool = span("tool search", SST__SPAN_CLIENT, task);
    assert_sst_ok(sst__span_record_error(tool, "SST_ETIMEOUT", "tool 'search' timed out", &err),
                  &err);
    sst__span *step1 = span("superstep 1", SST__SPAN_INTERNAL, run);
    char ids[7][17], trace[33];
    sst__span *all[] = {run, step0, task, llm, tool, step1};
    for (size_t i = 0; i < SST_ARRAY_LEN(all); i++) {
        id_hex(all[i]->ctx.span_id, 8, ids[i]);
    }
    id_hex(run->ctx.trace_id, 16, trace);
    assert_string_equal(trace, TP_TRACE);
    sst__otlp_export(e, llm);
    sst__otlp_export(e, tool);
    sst__otlp_export(e, task);
    sst__otlp_export(e, step0);
    sst__otlp_export(e, step1);
    sst__otlp_export(e, run); /* ended by the export */
    assert_sst_ok(sst__otlp_flush(e, 20000, &err), &err);

    sst_value *st = state(true);
    assert_no_errors(st);
    assert_int_equal(n_requests(st), 1);
    assert_int_equal(req_int(st, 0, "spans"), 6);
    const sst_value *headers = sst_object_get(request_at(st, 0), "headers");
    assert_member(headers, "authorization", "\"Bearer tok\"");
    assert_member(headers, "x-tenant", "\"t1\"");
    assert_member(headers, "content-type", "\"application/json\"");
    assert_non_null(
        strstr(sst_string_cstr(sst_object_get(headers, "user-agent")), "superstep-otlp/"));

    static const char *const names[] = {"run",         "superstep 0", "task agent",
                                        "chat gpt-4o", "tool search", "superstep 1"};
    static const int parent_of[] = {-1, 0, 1, 2, 2, 0};
    for (size_t i = 0; i < SST_ARRAY_LEN(names); i++) {
        const sst_value *s = span_named(st, names[i]);
        assert_string_equal(sst_string_cstr(sst_object_get(s, "traceId")), TP_TRACE);
        assert_string_equal(sst_string_cstr(sst_object_get(s, "spanId")), ids[i]);
        assert_string_equal(sst_string_cstr(sst_object_get(s, "parentSpanId")),
                            parent_of[i] < 0 ? TP_SPAN : ids[parent_of[i]]);
        const sst_value *r = sst_object_get(s, "resource");
        assert_member(r, "service.name", "{\"stringValue\": \"otlp-test\"}");
        assert_member(r, "telemetry.sdk.name", "{\"stringValue\": \"superstep\"}");
        assert_member(r, "telemetry.sdk.language", "{\"stringValue\": \"c\"}");
        assert_member(r, "deployment.environment", "{\"stringValue\": \"test\"}");
        assert_string_equal(sst_string_cstr(sst_object_get(
                                sst_object_get(r, "telemetry.sdk.version"), "stringValue")),
                            sst_version());
        assert_member(sst_object_get(s, "scope"), "name", "\"superstep\"");
        const sst_value *start = sst_object_get(s, "startTimeUnixNano");
        const sst_value *end = sst_object_get(s, "endTimeUnixNano");
        assert_true(sst_is_string(start) && sst_is_string(end));
        assert_true(strtoull(sst_string_cstr(start), NULL, 10) <=
                    strtoull(sst_string_cstr(end), NULL, 10));
    }
    const sst_value *s = span_named(st, "run");
    assert_member(s, "kind", "2");
    assert_member(s, "status", "{}");
    assert_member(sst_object_get(s, "attributes"), "superstep.thread_id",
                  "{\"stringValue\": \"thread-1\"}");
    s = span_named(st, "chat gpt-4o");
    assert_member(s, "kind", "3");
    assert_member(s, "startTimeUnixNano", "\"1700000000100000000\"");
    assert_member(s, "endTimeUnixNano", "\"1700000000800000000\"");
    assert_member(s, "status", "{\"code\": 1}");
    const sst_value *a = sst_object_get(s, "attributes");
    assert_member(a, "gen_ai.request.model", "{\"stringValue\": \"gpt-4o\"}");
    assert_member(a, "gen_ai.usage.input_tokens", "{\"intValue\": \"42\"}");
    assert_member(a, "negative", "{\"intValue\": \"-7\"}");
    assert_member(a, "gen_ai.request.temperature", "{\"doubleValue\": 0.25}");
    assert_member(a, "stream", "{\"boolValue\": true}");
    assert_member(a, "stop",
                  "{\"arrayValue\": {\"values\": [{\"stringValue\": \"END\"}, "
                  "{\"stringValue\": \"STOP\"}]}}");
    s = span_named(st, "tool search");
    assert_member(s, "status", "{\"code\": 2, \"message\": \"tool 'search' timed out\"}");
    const sst_value *ev = sst_array_get(sst_object_get(s, "events"), 0);
    assert_member(ev, "name", "\"exception\"");
    assert_member(ev, "attributes",
                  "{\"exception.type\": {\"stringValue\": \"SST_ETIMEOUT\"},"
                  " \"exception.message\": {\"stringValue\": \"tool 'search' timed out\"}}");
    assert_member(span_named(st, "superstep 0"), "attributes",
                  "{\"superstep.step\": {\"intValue\": \"0\"}}");
    sst_value_unref(st);

    sst__otlp_stats stats;
    sst__otlp_stats_get(e, &stats);
    assert_int_equal(stats.exported, 6);
    assert_int_equal(stats.dropped, 0);
    assert_int_equal(stats.requests, 1);
    assert_int_equal(stats.queued, 0);
    sst__otlp_exporter_free(e);
    sst_value_unref(resource);
}

static void export_n(sst__otlp_exporter *e, int n, const char *prefix) {
    for (int i = 0; i < n; i++) {
        char name[48];
        snprintf(name, sizeof name, "%s %d", prefix, i);
        sst__otlp_export(e, span(name, SST__SPAN_INTERNAL, NULL));
    }
}

static void test_batching(void **state_) {
    (void)state_;
    sst_error err = {0};
    sst__otlp_opts o;
    opts_for_receiver(&o);
    reset();
    o.max_queue = 100;
    o.max_batch = 5;
    sst__otlp_exporter *e = exporter(&o);
    /* The thread is waiting out the delay of the first spans when the batch fills: a full
     * batch must wake it. */
    export_n(e, 3, "batched");
    usleep(200000);
    export_n(e, 9, "batched later");
    /* Two full batches go at once; the two spans left wait (the delay is a minute). */
    sst_value *st = wait_requests(2, 20000);
    assert_int_equal(req_int(st, 0, "spans"), 5);
    assert_int_equal(req_int(st, 1, "spans"), 5);
    sst_value_unref(st);
    usleep(300000);
    st = state(false);
    assert_int_equal(n_requests(st), 2);
    sst_value_unref(st);
    assert_sst_ok(sst__otlp_flush(e, 20000, &err), &err);
    st = state(true);
    assert_no_errors(st);
    assert_int_equal(n_requests(st), 3);
    assert_int_equal(req_int(st, 2, "spans"), 2);
    assert_int_equal(sst_int_value(sst_object_get(st, "nspans")), 12);
    sst_value_unref(st);
    /* A flush with nothing queued returns at once and sends nothing. */
    assert_sst_ok(sst__otlp_flush(e, 0, &err), &err);
    sst__otlp_exporter_free(e);
    st = state(false);
    assert_int_equal(n_requests(st), 3);
    sst_value_unref(st);
}

static void test_schedule_delay(void **state_) {
    (void)state_;
    sst__otlp_opts o;
    opts_for_receiver(&o);
    reset();
    o.schedule_delay_ms = 800;
    sst__otlp_exporter *e = exporter(&o);
    double t0 = realtime_ms();
    export_n(e, 3, "delayed");
    /* Not before the delay: when it arrived (the receiver's clock), not what a sleep saw. */
    sst_value *st = wait_requests(1, 20000);
    double at = (double)req_int(st, 0, "at");
    assert_int_equal(req_int(st, 0, "spans"), 3);
    if (at - t0 < 800 - 20) {
        fail_msg("the batch arrived %.0f ms after its first span; the delay is 800 ms", at - t0);
    }
    sst_value_unref(st);
    /* A second span later waits for its own delay again. */
    t0 = realtime_ms();
    export_n(e, 1, "later");
    st = wait_requests(2, 20000);
    assert_true((double)req_int(st, 1, "at") - t0 >= 800 - 20);
    sst_value_unref(st);
    sst__otlp_exporter_free(e);
}

static void test_retries(void **state_) {
    (void)state_;
    sst_error err = {0};
    sst__otlp_opts o;
    opts_for_receiver(&o);
    reset();
    control("{\"answers\": [{\"status\": 503}, {\"status\": 429, \"retryAfter\": 1}]}");
    sst__otlp_exporter *e = exporter(&o);
    export_n(e, 3, "retried");
    assert_sst_ok(sst__otlp_flush(e, 20000, &err), &err);
    sst_value *st = state(true);
    assert_no_errors(st);
    assert_int_equal(n_requests(st), 3);
    assert_int_equal(req_int(st, 0, "status"), 503);
    assert_int_equal(req_int(st, 1, "status"), 429);
    assert_int_equal(req_int(st, 2, "status"), 200);
    int64_t gap = req_int(st, 2, "at") - req_int(st, 1, "at");
    if (gap < 950) {
        fail_msg("retried %lld ms after a Retry-After of 1 s", (long long)gap);
    }
    assert_int_equal(sst_int_value(sst_object_get(st, "nspans")), 3);
    sst_value_unref(st);
    sst__otlp_stats stats;
    sst__otlp_stats_get(e, &stats);
    assert_int_equal(stats.requests, 3);
    assert_int_equal(stats.retries, 2);
    assert_int_equal(stats.exported, 3);
    assert_int_equal(stats.dropped, 0);
    sst__otlp_exporter_free(e);

    /* 500 is not retried (OTLP/HTTP: only 429, 502, 503 and 504 are): dropped at once. */
    reset();
    control("{\"answers\": [{\"status\": 500, \"body\": {\"message\": \"broken\"}}]}");
    e = exporter(&o);
    export_n(e, 2, "refused");
    sst_error_clear(&err);
    assert_int_equal(sst__otlp_flush(e, 20000, &err), SST_EINVAL);
    assert_non_null(strstr(err.msg, "answered HTTP 500: {\"message\":\"broken\"}"));
    assert_non_null(strstr(err.msg, g_recv_base + 7)); /* names the collector */
    usleep(400000); /* past the first backoff (100 ms): no second request */
    st = state(false);
    assert_int_equal(n_requests(st), 1);
    sst_value_unref(st);
    sst__otlp_stats_get(e, &stats);
    assert_int_equal(stats.dropped_failed, 2);
    assert_int_equal(stats.dropped, 2);
    assert_int_equal(stats.retries, 0);
    assert_non_null(strstr(stats.last_error, "HTTP 500"));
    sst__otlp_exporter_free(e);

    /* Retried until max_attempts, then dropped and counted. */
    reset();
    control("{\"answers\": [{\"status\": 503}, {\"status\": 502}, {\"status\": 504}]}");
    o.max_attempts = 3;
    e = exporter(&o);
    export_n(e, 4, "unlucky");
    sst_error_clear(&err);
    assert_int_equal(sst__otlp_flush(e, 20000, &err), SST_EUNAVAILABLE);
    assert_non_null(strstr(err.msg, "after 3 attempts"));
    assert_non_null(strstr(err.msg, "HTTP 504"));
    sst__otlp_stats_get(e, &stats);
    assert_int_equal(stats.requests, 3);
    assert_int_equal(stats.dropped_failed, 4);
    assert_int_equal(stats.exported, 0);
    /* The next batch goes through. */
    export_n(e, 1, "lucky");
    assert_sst_ok(sst__otlp_flush(e, 20000, &err), &err);
    sst__otlp_stats_get(e, &stats);
    assert_int_equal(stats.exported, 1);
    sst__otlp_exporter_free(e);
    st = state(true);
    assert_no_errors(st);
    assert_int_equal(sst_int_value(sst_object_get(st, "nspans")), 1);
    sst_value_unref(st);
}

static void test_partial_success(void **state_) {
    (void)state_;
    sst_error err = {0};
    sst__otlp_opts o;
    opts_for_receiver(&o);
    reset();
    control("{\"answers\": [{\"status\": 200, \"body\": {\"partialSuccess\": "
            "{\"rejectedSpans\": \"2\", \"errorMessage\": \"two too many\"}}}]}");
    sst__otlp_exporter *e = exporter(&o);
    export_n(e, 5, "partly");
    assert_sst_ok(sst__otlp_flush(e, 20000, &err), &err);
    sst__otlp_stats stats;
    sst__otlp_stats_get(e, &stats);
    assert_int_equal(stats.requests, 1); /* a partial success is never retried */
    assert_int_equal(stats.rejected, 2);
    assert_int_equal(stats.exported, 3);
    assert_int_equal(stats.dropped, 2);
    assert_non_null(strstr(stats.last_error, "rejected 2 of 5 spans: two too many"));
    sst__otlp_exporter_free(e);
}

/* The slowest single sst__otlp_export of @p n spans, in milliseconds. */
static double export_timed(sst__otlp_exporter *e, int n) {
    double worst = 0;
    for (int i = 0; i < n; i++) {
        sst__span *s = span("timed", SST__SPAN_INTERNAL, NULL);
        double t = tu_now_s();
        sst__otlp_export(e, s);
        double ms = (tu_now_s() - t) * 1000.0;
        worst = ms > worst ? ms : worst;
    }
    return worst;
}

static void test_slow_collector(void **state_) {
    (void)state_;
    sst_error err = {0};
    sst__otlp_opts o;
    opts_for_receiver(&o);
    reset();
    /* Each request times out (300 ms against a 1.5 s answer); retried, then dropped. */
    control("{\"delayMs\": 1500}");
    o.timeout_ms = 300;
    o.max_attempts = 2;
    sst__otlp_exporter *e = exporter(&o);
    export_n(e, 1, "too slow");
    sst_error_clear(&err);
    assert_int_equal(sst__otlp_flush(e, 20000, &err), SST_ETIMEOUT);
    assert_non_null(strstr(err.msg, "after 2 attempts"));
    assert_non_null(strstr(err.msg, "timed out"));
    sst__otlp_exporter_free(e);

    /* A request in flight when the exporter is freed is cut off: the free takes the
     * shutdown bound, not the request's 15 s timeout; exports meanwhile never wait. */
    reset();
    control("{\"delayMs\": 20000}");
    o.timeout_ms = 15000;
    o.shutdown_ms = 500;
    e = exporter(&o);
    export_n(e, 1, "stuck");
    assert_int_equal(sst__otlp_flush(e, 50, &err), SST_ETIMEOUT);
    sst_value_unref(wait_requests(1, 20000)); /* in flight now */
    /* A blocking export would wait out the 15 s timeout of the request in flight. */
    assert_no_hang(export_timed(e, 1000) / 1000.0, 0.1);
    double t = tu_now_s();
    sst__otlp_stats stats;
    sst__otlp_shutdown(e, o.shutdown_ms);
    double took = tu_now_s() - t;
    sst__otlp_stats_get(e, &stats);
    sst__otlp_exporter_free(e);
    /* Cut off, not waited for: every span (the one in flight too) dropped by the shutdown. */
    assert_no_hang(took, 0.5);
    assert_int_equal(stats.queued_total, 1001);
    assert_int_equal(stats.dropped_shutdown, 1001);
    assert_int_equal(stats.exported, 0);
    control("{\"delayMs\": 0}");
}

static void test_dead_endpoint(void **state_) {
    (void)state_;
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/v1/traces", dead_port());
    sst__otlp_opts o;
    sst__otlp_opts_init(&o);
    o.endpoint = url;
    o.schedule_delay_ms = 50;
    o.timeout_ms = 1000;
    o.export_timeout_ms = 3000;
    o.retry_base_ms = 200;
    o.shutdown_ms = 1500;
    long before = tu_chaos_live();
    sst__otlp_exporter *e = exporter(&o);

    /* What one exported span holds, to bound what max_queue spans may hold. */
    long base = tu_chaos_live();
    sst__span *probe = span("probe", SST__SPAN_INTERNAL, NULL);
    sst_error err = {0};
    assert_sst_ok(sst__span_set_int(probe, "i", 1234567, &err), &err); /* not a cached int */
    assert_sst_ok(sst__span_set_str(probe, "s", "some text", &err), &err);
    long per_span = tu_chaos_live() - base;
    sst__span_free(probe);
    long bound = base + (long)(o.max_queue + o.max_batch) * per_span + 256;

    enum { N = 100000 };
    double start = tu_now_s(), worst = 0;
    long most = 0;
    for (int i = 0; i < N; i++) {
        sst__span *s = span("dead", SST__SPAN_INTERNAL, NULL);
        assert_sst_ok(sst__span_set_int(s, "i", i, &err), &err);
        assert_sst_ok(sst__span_set_str(s, "s", "some text", &err), &err);
        double t = tu_now_s();
        sst__otlp_export(e, s);
        double ms = (tu_now_s() - t) * 1000.0;
        worst = ms > worst ? ms : worst;
        if (i % 1000 == 0) {
            long live = tu_chaos_live();
            most = live > most ? live : most;
            sst__otlp_stats stats;
            sst__otlp_stats_get(e, &stats);
            assert_true(stats.queued <= o.max_queue);
        }
    }
    double total = tu_now_s() - start;
    sst__otlp_stats stats;
    sst__otlp_stats_get(e, &stats);
    print_message("dead endpoint: %d spans exported in %.2f s (slowest %.2f ms); %llu dropped "
                  "for a full queue; at most %ld live blocks (bound %ld)\n",
                  N, total, worst, (unsigned long long)stats.dropped_queue_full, most, bound);
    /* Waiting on a connection would take at least the 200 ms backoff per export (5.5 hours
     * in all); waiting for room in the queue, about 3 s (a failing batch) per export that
     * found it full, of which none would then be dropped. */
    assert_no_hang(worst / 1000.0, 0.1);
    assert_no_hang(total, 0.5);
    if (most > bound) {
        fail_msg("%ld live blocks with a queue of %zu spans (bound %ld)", most, o.max_queue, bound);
    }
    assert_true(stats.max_queued <= o.max_queue);
    assert_true(stats.dropped_queue_full > 0);
    assert_int_equal(stats.queued_total + stats.dropped_queue_full, N);
    assert_int_equal(stats.exported, 0);

    double t = tu_now_s();
    sst__otlp_shutdown(e, o.shutdown_ms);
    double took = tu_now_s() - t;
    sst__otlp_stats_get(e, &stats);
    /* Its bound kept: what was queued (about 12 s of failing batches) is dropped, not tried. */
    assert_no_hang(took, 1.5);
    assert_true(stats.dropped_shutdown > 0);
    assert_int_equal(stats.dropped, N); /* every span accounted for */
    assert_int_equal(stats.exported, 0);
    assert_true(stats.dropped_failed + stats.dropped_shutdown + stats.dropped_queue_full == N);
    assert_non_null(strstr(stats.last_error, url + 7));                    /* names the endpoint */
    sst__otlp_export(e, span("after shutdown", SST__SPAN_INTERNAL, NULL)); /* dropped */
    assert_int_equal(sst__otlp_dropped(e), N + 1);
    sst__otlp_exporter_free(e);
    assert_int_equal(tu_chaos_live(), before);
}

typedef struct thread_arg {
    sst__otlp_exporter *e;
    int id;
} thread_arg;

enum { THREADS = 4, PER_THREAD = 2000 };

static void *exporting_thread(void *p) {
    thread_arg *a = p;
    sst__span *root = NULL;
    for (int i = 0; i < PER_THREAD; i++) {
        if (i % 100 == 0) {
            if (root != NULL) {
                sst__otlp_export(a->e, root);
            }
            root = sst__span_start("thread root", SST__SPAN_INTERNAL, NULL, NULL);
            if (root == NULL) {
                return (void *)1;
            }
            sst__span_set_int(root, "thread", a->id, NULL);
            continue;
        }
        sst__trace_ctx ctx;
        sst__span_context(root, &ctx);
        sst__span *s = sst__span_start("thread child", SST__SPAN_INTERNAL, &ctx, NULL);
        if (s == NULL) {
            return (void *)1;
        }
        sst__span_set_int(s, "i", i, NULL);
        sst__otlp_export(a->e, s);
    }
    sst__otlp_export(a->e, root);
    return NULL;
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void test_threads(void **state_) {
    (void)state_;
    sst_error err = {0};
    sst__otlp_opts o;
    opts_for_receiver(&o);
    reset();
    o.max_queue = THREADS * PER_THREAD;
    o.max_batch = 500;
    o.schedule_delay_ms = 100;
    sst__otlp_exporter *e = exporter(&o);
    pthread_t th[THREADS];
    thread_arg args[THREADS];
    for (int i = 0; i < THREADS; i++) {
        args[i] = (thread_arg){.e = e, .id = i};
        assert_int_equal(pthread_create(&th[i], NULL, exporting_thread, &args[i]), 0);
    }
    for (int i = 0; i < 5; i++) { /* flushes and counters while they export */
        sst_code rc = sst__otlp_flush(e, 10, &err);
        assert_true(rc == SST_OK || rc == SST_ETIMEOUT);
        sst__otlp_stats stats;
        sst__otlp_stats_get(e, &stats);
        assert_true(stats.queued <= o.max_queue);
    }
    for (int i = 0; i < THREADS; i++) {
        void *ret;
        assert_int_equal(pthread_join(th[i], &ret), 0);
        assert_null(ret);
    }
    assert_sst_ok(sst__otlp_flush(e, 60000, &err), &err);
    sst__otlp_stats stats;
    sst__otlp_stats_get(e, &stats);
    assert_int_equal(stats.exported, THREADS * PER_THREAD);
    assert_int_equal(stats.dropped, 0);
    sst__otlp_exporter_free(e);

    sst_value *st = state(true);
    assert_no_errors(st);
    const sst_value *spans = sst_object_get(st, "spans");
    size_t n = sst_array_len(spans);
    assert_int_equal(n, THREADS * PER_THREAD);
    const char **ids = calloc(n, sizeof *ids);
    assert_non_null(ids);
    size_t roots = 0;
    for (size_t i = 0; i < n; i++) {
        const sst_value *s = sst_array_get(spans, i);
        ids[i] = sst_string_cstr(sst_object_get(s, "spanId"));
        roots += sst_string_len(sst_object_get(s, "parentSpanId")) == 0;
    }
    assert_int_equal(roots, THREADS * PER_THREAD / 100);
    qsort(ids, n, sizeof *ids, cmp_str);
    for (size_t i = 1; i < n; i++) {
        if (strcmp(ids[i - 1], ids[i]) == 0) {
            fail_msg("span id %s arrived twice", ids[i]);
        }
    }
    free(ids);
    sst_value_unref(st);
}

static int teardown(void **state_) {
    (void)state_;
    receiver_stop();
    return 0;
}

int main(void) {
    tu_chaos_install();
    curl_global_init(CURL_GLOBAL_DEFAULT);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_traceparent),    cmocka_unit_test(test_ids),
        cmocka_unit_test(test_span_api),       cmocka_unit_test(test_encode),
        cmocka_unit_test(test_chaos),          cmocka_unit_test(test_env),
        cmocka_unit_test(test_bad_opts),       cmocka_unit_test(test_export_tree),
        cmocka_unit_test(test_batching),       cmocka_unit_test(test_schedule_delay),
        cmocka_unit_test(test_retries),        cmocka_unit_test(test_partial_success),
        cmocka_unit_test(test_slow_collector), cmocka_unit_test(test_dead_endpoint),
        cmocka_unit_test(test_threads),
    };
    int failed = cmocka_run_group_tests(tests, NULL, teardown);
    curl_global_cleanup();
    return failed;
}
