/* SPDX-License-Identifier: MIT */
/*
 * The HTTP client layer (src/agent/http_client.c): the one Retry-After rule
 * (delta-seconds and the three HTTP-date forms, one cap), and the four
 * clients that share it, the LLM client (agent/http.c), the OTLP exporter,
 * the MCP HTTP transport and the server's webhooks, each given the same
 * answers by a local server (429 with Retry-After: 2, then 503 with an
 * HTTP-date 4 s ahead, then 200): each waits the same before its second and
 * third attempts. The waits are the ones asked for (a wait hook takes them,
 * so no time passes). The date's wait is checked against the clock readings
 * that bracket the client's own (the answer was written before it read the
 * clock, the hook ran after), so a busy machine cannot push it out of range.
 */
#define _GNU_SOURCE /* gmtime_r */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>

#include "agent/http.h"
#include "agent/http_client.h"
#include "agent/mcp.h"
#include "agent/otlp.h"
#include "superstep/json.h"
#include "superstep/server.h"
#include "superstep/superstep.h"
#include "test_util.h"

/* ---- the rule ---- */

#define NOV_6_1994_MS INT64_C(784111777000) /* Sun, 06 Nov 1994 08:49:37 GMT */

static int64_t parse(const char *v, int64_t now_ms) {
    return sst__retry_after_parse(v, strlen(v), now_ms);
}

static void test_retry_after_rule(void **state) {
    (void)state;
    assert_int_equal(parse("120", 0), 120000);
    assert_int_equal(parse(" 2 \r\n", 0), 2000);
    assert_int_equal(parse("0", 0), 0);
    assert_int_equal(parse("1.5", 0), 1500);
    int64_t before = NOV_6_1994_MS - 5000;
    assert_int_equal(parse("Sun, 06 Nov 1994 08:49:37 GMT", before), 5000);
    assert_int_equal(parse("Sunday, 06-Nov-94 08:49:37 GMT", before), 5000);
    assert_int_equal(parse("Sun Nov  6 08:49:37 1994", before), 5000);
    assert_int_equal(parse("Sun, 06 Nov 1994 08:49:37 GMT", NOV_6_1994_MS + 1000), 0); /* past */
    /* One cap, whichever form asks for more. */
    assert_int_equal(parse("99999999999", 0), SST__RETRY_AFTER_MAX_MS);
    assert_int_equal(parse("Sun, 06 Nov 1994 08:49:37 GMT", 0), SST__RETRY_AFTER_MAX_MS);
    const char *bad[] = {"",
                         "   ",
                         "soon",
                         "-1",
                         "0x10",
                         "1e3",
                         ".5",
                         "1.2.3",
                         "2 s",
                         "inf",
                         "Sun, 06 Nov 1994 08:49:37 CET",
                         "Sun, 32 Nov 1994 08:49:37 GMT",
                         "Sun, 06 Foo 1994 08:49:37 GMT"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        if (parse(bad[i], 0) != -1) {
            fail_msg("'%s' was taken as a Retry-After", bad[i]);
        }
    }
    const char line[] = "Retry-After: 7\r\n";
    assert_true(sst__retry_after_header(line, sizeof line - 1) == 7000);
    const char other[] = "Retry-Afterwards: 7\r\n";
    assert_true(sst__retry_after_header(other, sizeof other - 1) == -1);
}

/* ---- a server that asks for waits ---- */

static int64_t realtime_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

typedef struct asker {
    int fd;
    unsigned port;
    atomic_int answered;        /* requests answered since the last reset */
    _Atomic int64_t date_ms;    /* the last 503's Retry-After date */
    _Atomic int64_t written_ms; /* the clock when that answer was written */
    atomic_bool stop;
    pthread_t th;
} asker;

/* Reads a request's head and body from @p c; false when the client went away. */
static bool read_request(int c) {
    char buf[65536];
    size_t len = 0;
    char *end = NULL;
    while (end == NULL) {
        ssize_t n = recv(c, buf + len, sizeof buf - 1 - len, 0);
        if (n <= 0) {
            return false;
        }
        len += (size_t)n;
        buf[len] = '\0';
        end = strstr(buf, "\r\n\r\n");
    }
    size_t body = 0;
    const char *cl = strcasestr(buf, "\r\ncontent-length:");
    if (cl != NULL) {
        body = strtoul(cl + 17, NULL, 10);
    }
    if (strcasestr(buf, "\r\nexpect: 100-continue") != NULL) {
        const char go[] = "HTTP/1.1 100 Continue\r\n\r\n";
        assert_true(send(c, go, sizeof go - 1, MSG_NOSIGNAL) == (ssize_t)(sizeof go - 1));
    }
    size_t have = len - (size_t)(end + 4 - buf);
    while (have < body) {
        ssize_t n = recv(c, buf, sizeof buf, 0);
        if (n <= 0) {
            return false;
        }
        have += (size_t)n;
    }
    return true;
}

/* The answers, in turn: 429 with Retry-After: 2, 503 with a date 4 s ahead, 200. */
static void answer(asker *a, int c) {
    int k = atomic_load(&a->answered) % 3;
    char reply[512];
    if (k == 0) {
        snprintf(reply, sizeof reply,
                 "HTTP/1.1 429 Too Many Requests\r\nRetry-After: 2\r\nContent-Length: 4\r\n"
                 "Connection: close\r\n\r\nbusy");
    } else if (k == 1) {
        int64_t now = realtime_ms();
        time_t at = (time_t)(now / 1000) + 4;
        atomic_store(&a->date_ms, (int64_t)at * 1000);
        atomic_store(&a->written_ms, now);
        struct tm tm;
        gmtime_r(&at, &tm);
        char date[64];
        strftime(date, sizeof date, "%a, %d %b %Y %H:%M:%S GMT", &tm);
        snprintf(reply, sizeof reply,
                 "HTTP/1.1 503 Service Unavailable\r\nRetry-After: %s\r\nContent-Length: 4\r\n"
                 "Connection: close\r\n\r\nbusy",
                 date);
    } else {
        snprintf(reply, sizeof reply,
                 "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n"
                 "Connection: close\r\n\r\n{}");
    }
    size_t n = strlen(reply);
    atomic_fetch_add(&a->answered, 1); /* before the client can see the reply */
    assert_true(send(c, reply, n, MSG_NOSIGNAL) == (ssize_t)n);
}

static void *asker_main(void *arg) {
    asker *a = arg;
    while (!atomic_load(&a->stop)) {
        struct pollfd p = {a->fd, POLLIN, 0};
        if (poll(&p, 1, 50) <= 0) {
            continue;
        }
        int c = accept(a->fd, NULL, NULL);
        if (c < 0) {
            continue;
        }
        if (read_request(c)) {
            answer(a, c);
        }
        close(c);
    }
    return NULL;
}

static void asker_start(asker *a) {
    memset(a, 0, sizeof *a);
    a->fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(a->fd >= 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    assert_int_equal(bind(a->fd, (struct sockaddr *)&sa, sizeof sa), 0);
    assert_int_equal(listen(a->fd, 16), 0);
    socklen_t sl = sizeof sa;
    assert_int_equal(getsockname(a->fd, (struct sockaddr *)&sa, &sl), 0);
    a->port = ntohs(sa.sin_port);
    assert_int_equal(pthread_create(&a->th, NULL, asker_main, a), 0);
}

static void asker_stop(asker *a) {
    atomic_store(&a->stop, true);
    pthread_join(a->th, NULL);
    close(a->fd);
}

/* ---- the waits the clients ask for ---- */

#define MAX_WAITS 16

typedef struct waits {
    pthread_mutex_t mu;
    const char *who[MAX_WAITS];
    uint64_t ms[MAX_WAITS];
    int64_t at_ms[MAX_WAITS]; /* the clock when the hook was called */
    size_t n;
} waits;

static waits g_waits = {.mu = PTHREAD_MUTEX_INITIALIZER};

static void on_wait(void *ud, const char *who, uint64_t ms) {
    waits *w = ud;
    pthread_mutex_lock(&w->mu);
    if (w->n < MAX_WAITS) {
        w->who[w->n] = who;
        w->ms[w->n] = ms;
        w->at_ms[w->n] = realtime_ms();
        w->n++;
    }
    pthread_mutex_unlock(&w->mu);
}

static void waits_reset(void) {
    pthread_mutex_lock(&g_waits.mu);
    g_waits.n = 0;
    pthread_mutex_unlock(&g_waits.mu);
}

/* Client @p who asked for two waits: 2 s (delta-seconds), then what was left
 * of the 503's date when it read the clock, which lies between the clock after
 * that answer was written and the clock when its wait hook ran. */
static void assert_waits(const asker *a, const char *who) {
    pthread_mutex_lock(&g_waits.mu);
    size_t n = g_waits.n;
    uint64_t first = n > 0 ? g_waits.ms[0] : 0, second = n > 1 ? g_waits.ms[1] : 0;
    int64_t hooked = n > 1 ? g_waits.at_ms[1] : 0;
    bool named = n == 2 && strcmp(g_waits.who[0], who) == 0 && strcmp(g_waits.who[1], who) == 0;
    pthread_mutex_unlock(&g_waits.mu);
    int64_t date = atomic_load(&a->date_ms), written = atomic_load(&a->written_ms);
    int64_t hi = date - written, lo = date - hooked;
    hi = hi < 0 ? 0 : hi;
    lo = lo < 0 ? 0 : lo;
    if (n != 2 || !named || first != 2000 || (int64_t)second < lo || (int64_t)second > hi) {
        fail_msg("%s: %zu waits (%s): %llu ms, %llu ms; wanted 2000 ms, then %lld to %lld ms", who,
                 n, named ? "named so" : "not all named so", (unsigned long long)first,
                 (unsigned long long)second, (long long)lo, (long long)hi);
    }
}

static sst_code done_ok(void *ud, const char *body, size_t len, bool *transient, sst_error *err) {
    (void)ud, (void)body, (void)len, (void)transient, (void)err;
    return SST_OK;
}

static void llm_client(const char *base) {
    sst__http_config c;
    sst__http_config_init(&c);
    c.what = "LLM";
    sst__http_request q;
    sst_error err = {0};
    tu_assert_ok(sst__http_request_init(&q, &c, base, "/v1/chat/completions", "application/json",
                                        NULL, &err),
                 &err, __FILE__, __LINE__);
    sst__http_handler h = {.done = done_ok};
    tu_assert_ok(sst__http_post(&q, "{}", &h, &err), &err, __FILE__, __LINE__);
    sst__http_request_free(&q);
}

static void otlp_exporter(const char *base) {
    char url[128];
    snprintf(url, sizeof url, "%s/v1/traces", base);
    sst__otlp_opts o;
    sst__otlp_opts_init(&o);
    o.endpoint = url;
    sst_error err = {0};
    sst__otlp_exporter *e = sst__otlp_exporter_new(&o, &err);
    tu_assert_ok(e != NULL ? SST_OK : err.code, &err, __FILE__, __LINE__);
    sst__span *s = sst__span_start("wait", SST__SPAN_INTERNAL, NULL, &err);
    assert_non_null(s);
    sst__otlp_export(e, s);
    tu_assert_ok(sst__otlp_flush(e, (uint32_t)(60000 * tu_time_scale()), &err), &err, __FILE__,
                 __LINE__);
    sst__otlp_stats st;
    sst__otlp_stats_get(e, &st);
    assert_int_equal(st.retries, 2);
    sst__otlp_exporter_free(e);
}

static void on_message(void *ud, const char *json, size_t len) {
    (void)json, (void)len;
    atomic_fetch_add((atomic_int *)ud, 1);
}

static void mcp_transport(const char *base) {
    char url[128];
    snprintf(url, sizeof url, "%s/mcp", base);
    sst_mcp_opts o;
    sst_mcp_opts_init(&o);
    atomic_int messages = 0;
    sst__mcp_sink sink = {.message = on_message, .ud = &messages};
    sst_error err = {0};
    sst__mcp_transport *t = sst__mcp_http_open(url, &o, &sink, &err);
    tu_assert_ok(t != NULL ? SST_OK : err.code, &err, __FILE__, __LINE__);
    const char ping[] = "{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"ping\"}";
    sst__mcp_wait w = {.deadline_ms = sst__mcp_now_ms() + (uint64_t)(60000 * tu_time_scale())};
    tu_assert_ok(t->send(t, ping, sizeof ping - 1, &w, &err), &err, __FILE__, __LINE__);
    assert_int_equal(atomic_load(&messages), 1); /* the 200's reply, once */
    t->close(t);
}

/* ---- the webhook: a server whose run ends ---- */

static sst_code inc(sst_node_ctx *ctx, void *ud) {
    (void)ud;
    return sst_node_update(ctx, "count", sst_int_new(1, NULL), NULL);
}

static void *acquire(void *ud, const sst_compiled_graph **graph, sst_error *err) {
    (void)err;
    *graph = ud;
    return ud;
}

static void release(void *ud, void *inst) {
    (void)ud, (void)inst;
}

static void webhook(asker *a) {
    sst_error err = {0};
    sst_graph *g = sst_graph_new(&err);
    assert_non_null(g);
    tu_assert_ok(sst_graph_add_field(g, "count", sst_reducer_sum(), sst_int_new(0, NULL), &err),
                 &err, __FILE__, __LINE__);
    tu_assert_ok(sst_graph_add_node(g, "inc", inc, NULL, NULL, &err), &err, __FILE__, __LINE__);
    tu_assert_ok(sst_graph_add_edge(g, SST_START, "inc", &err), &err, __FILE__, __LINE__);
    tu_assert_ok(sst_graph_add_edge(g, "inc", SST_END, &err), &err, __FILE__, __LINE__);
    sst_compiled_graph *cg = sst_graph_compile(g, NULL, &err);
    assert_non_null(cg);
    sst_server_opts o;
    sst_server_opts_init(&o);
    o.port = 0;
    o.db = ":memory:";
    o.workers = 1;
    o.no_web = true;
    sst_server *s = sst_server_new(&o, &err);
    tu_assert_ok(s != NULL ? SST_OK : err.code, &err, __FILE__, __LINE__);
    sst_graph_source src = {
        .acquire = acquire, .release = release, .user_data = cg, .shared = true};
    tu_assert_ok(sst_server_add_graph_source(s, "counter", &src, &err), &err, __FILE__, __LINE__);
    tu_assert_ok(sst_server_start(s, &err), &err, __FILE__, __LINE__);

    char url[128], body[256];
    snprintf(url, sizeof url, "http://127.0.0.1:%u/runs", sst_server_port(s));
    snprintf(body, sizeof body,
             "{\"assistant_id\": \"counter\", \"input\": {}, "
             "\"webhook\": \"http://127.0.0.1:%u/hook\"}",
             a->port);
    CURL *h = curl_easy_init();
    struct curl_slist *hdr = curl_slist_append(NULL, "Content-Type: application/json");
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, NULL);
    FILE *sink = fopen("/dev/null", "w");
    curl_easy_setopt(h, CURLOPT_WRITEDATA, sink);
    assert_int_equal(curl_easy_perform(h), CURLE_OK);
    long status = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    assert_int_equal(status, 200);
    fclose(sink);
    curl_slist_free_all(hdr);
    curl_easy_cleanup(h);
    /* The run ends, then its worker posts the webhook three times. */
    double deadline = tu_now_s() + 60 * tu_time_scale();
    while (atomic_load(&a->answered) < 3 && tu_now_s() < deadline) {
        struct timespec ts = {0, 20 * 1000000L}; /* polling, not synchronisation */
        nanosleep(&ts, NULL);
    }
    sst_server_free(s); /* joins the worker: its webhook is done */
    assert_int_equal(atomic_load(&a->answered), 3);
    sst_compiled_graph_free(cg);
    sst_graph_free(g);
}

static void test_four_clients_wait_alike(void **state) {
    (void)state;
    asker a;
    asker_start(&a);
    char base[64];
    snprintf(base, sizeof base, "http://127.0.0.1:%u", a.port);
    sst__http_set_wait_hook(on_wait, &g_waits);
    struct {
        const char *who;
        void (*run)(const char *base);
    } clients[] = {{"LLM", llm_client}, {"OTLP", otlp_exporter}, {"MCP", mcp_transport}};
    for (size_t i = 0; i < sizeof clients / sizeof clients[0]; i++) {
        atomic_store(&a.answered, 0);
        waits_reset();
        clients[i].run(base);
        assert_int_equal(atomic_load(&a.answered), 3);
        assert_waits(&a, clients[i].who);
    }
    atomic_store(&a.answered, 0);
    waits_reset();
    webhook(&a);
    assert_waits(&a, "webhook");
    sst__http_set_wait_hook(NULL, NULL);
    asker_stop(&a);
}

int main(void) {
    curl_global_init(CURL_GLOBAL_DEFAULT);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_retry_after_rule),
        cmocka_unit_test(test_four_clients_wait_alike),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    curl_global_cleanup();
    return rc;
}
