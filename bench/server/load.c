/* SPDX-License-Identifier: MIT */
/*
 * A load generator for LangGraph's HTTP API (`superstep serve`, or
 * LangGraph.js's own server), for bench/server/server.sh (issue 17). One
 * thread drives N concurrent "clients" with the libcurl multi interface; each
 * client keeps its own keep-alive connection, so the generator is not the
 * bottleneck (it prints its own CPU time to show it).
 *
 *   bench_server_load --mode chain [--conc N] [--secs S] [--url URL] [--pid PID]
 *       each client loops: POST /threads {}, then POST /threads/{id}/runs/wait
 *       {"assistant_id":"chain","input":{"items":["x"]}}, and checks the body
 *       is {"items":["x","a","b","c"]}. Latency of runs/wait and of the pair.
 *   bench_server_load --mode stateless [--conc N] [--secs S]
 *       the same through POST /runs/wait (no thread).
 *   bench_server_load --mode stream [--n N]
 *       one POST /threads, then POST /threads/{id}/runs/stream of "counter"
 *       with {"n":N}, stream_mode "updates", recursion_limit N+100; counts the
 *       `event: updates` frames as they arrive, then checks the thread's count.
 *
 * --pid PID[,PID]: also report the CPU time (utime+stime, /proc/PID/stat) the
 * server spent during the measured phase, and its VmHWM / VmRSS at the end.
 * --warmup K: K sequential chain runs first, not measured (default 3).
 * --durability MODE: every run's body asks for that durability (sync, async,
 * exit); without it the body names none and the server's default applies.
 * Prints one JSON object on stdout.
 */
#define _POSIX_C_SOURCE 200809L
#include <curl/curl.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

enum mode { MODE_CHAIN, MODE_STATELESS, MODE_STREAM };

typedef struct opts {
    enum mode mode;
    const char *url;
    int conc;
    double secs;
    long n;
    int warmup;
    const char *pids;
    const char *durability; /* NULL: not in the run bodies */
    const char *bearer;     /* --bearer: an Authorization: Bearer header on every request */
} opts;

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double self_cpu_ms(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
           (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
}

/* ---- the server process, from /proc ---- */

static double proc_cpu_ms(long pid) {
    char path[64], buf[4096];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    size_t len = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[len] = 0;
    char *p = strrchr(buf, ')');
    if (!p)
        return -1;
    p += 2; /* fields from 3 (state) on */
    unsigned long long ut = 0, st = 0;
    for (int field = 3; field <= 15 && *p; field++) {
        if (field == 14)
            ut = strtoull(p, NULL, 10);
        if (field == 15)
            st = strtoull(p, NULL, 10);
        p = strchr(p, ' ');
        if (!p)
            break;
        p++;
    }
    return (double)(ut + st) * 1000.0 / (double)sysconf(_SC_CLK_TCK);
}

static long proc_status_kib(long pid, const char *key) {
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%ld/status", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    long v = -1;
    size_t kl = strlen(key);
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, key, kl) == 0 && line[kl] == ':') {
            v = strtol(line + kl + 1, NULL, 10);
            break;
        }
    }
    fclose(f);
    return v;
}

static long g_pids[8];
static int g_npids;

static double servers_cpu_ms(void) {
    double t = 0;
    for (int i = 0; i < g_npids; i++)
        t += proc_cpu_ms(g_pids[i]);
    return t;
}

/* ---- latencies ---- */

typedef struct lat {
    double *v;
    size_t n, cap;
} lat;

static void lat_add(lat *l, double ms) {
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 1024;
        l->v = realloc(l->v, l->cap * sizeof *l->v);
        if (!l->v)
            abort();
    }
    l->v[l->n++] = ms;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The same percentile as bench_server.mjs: sorted[floor(p/100 * n)]. */
static double pct(const lat *l, double p) {
    if (!l->n)
        return 0;
    size_t i = (size_t)(p / 100.0 * (double)l->n);
    if (i >= l->n)
        i = l->n - 1;
    return l->v[i];
}

static void lat_json(const char *name, lat *l) {
    qsort(l->v, l->n, sizeof *l->v, cmp_double);
    printf("\"%s\":{\"n\":%zu,\"p50_ms\":%.3f,\"p99_ms\":%.3f,\"min_ms\":%.3f,\"max_ms\":%.3f}",
           name, l->n, pct(l, 50), pct(l, 99), l->n ? l->v[0] : 0, l->n ? l->v[l->n - 1] : 0);
}

/* ---- one client ---- */

typedef struct buf {
    char *p;
    size_t n, cap;
} buf;

enum step { STEP_CREATE, STEP_WAIT, STEP_STREAM, STEP_STATE, STEP_DONE };

typedef struct client {
    CURL *h;
    struct curl_slist *hdrs;
    enum step step;
    buf body;
    char thread_id[64];
    char url[512];
    char post[256];
    double t_pair, t_req;
    /* stream mode */
    char line[256];
    size_t line_n;
    long updates, events;
    double t_first, t_last;
} client;

static size_t on_body(char *data, size_t size, size_t nmemb, void *ud) {
    client *c = ud;
    size_t len = size * nmemb;
    if (c->step == STEP_STREAM) {
        /* SSE: look at whole lines; only `event:` lines matter. */
        double t = 0;
        for (size_t i = 0; i < len; i++) {
            char ch = data[i];
            if (ch == '\n') {
                if (c->line_n >= 6 && memcmp(c->line, "event:", 6) == 0) {
                    c->events++;
                    size_t k = 6;
                    while (k < c->line_n && c->line[k] == ' ')
                        k++;
                    if (c->line_n - k == 7 && memcmp(c->line + k, "updates", 7) == 0) {
                        if (t == 0)
                            t = now_s();
                        if (c->updates++ == 0)
                            c->t_first = t;
                        c->t_last = t;
                    }
                }
                c->line_n = 0;
            } else if (c->line_n < sizeof c->line) {
                c->line[c->line_n++] = ch;
            }
        }
        return len;
    }
    buf *b = &c->body;
    if (b->n + len + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 1024;
        while (cap < b->n + len + 1)
            cap *= 2;
        b->p = realloc(b->p, cap);
        if (!b->p)
            abort();
        b->cap = cap;
    }
    memcpy(b->p + b->n, data, len);
    b->n += len;
    b->p[b->n] = 0;
    return len;
}

static const opts *g_o;
static char g_base[400];
static char g_durability[48]; /* ",\"durability\":\"MODE\"" or "" */

static void client_init(client *c) {
    memset(c, 0, sizeof *c);
    c->h = curl_easy_init();
    c->hdrs = curl_slist_append(NULL, "Content-Type: application/json");
    c->hdrs = curl_slist_append(c->hdrs, "Expect:");
    if (g_o->bearer != NULL) {
        char auth[9000];
        snprintf(auth, sizeof auth, "Authorization: Bearer %s", g_o->bearer);
        c->hdrs = curl_slist_append(c->hdrs, auth);
    }
    curl_easy_setopt(c->h, CURLOPT_HTTPHEADER, c->hdrs);
    curl_easy_setopt(c->h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c->h, CURLOPT_WRITEDATA, c);
    curl_easy_setopt(c->h, CURLOPT_PRIVATE, c);
    curl_easy_setopt(c->h, CURLOPT_TCP_NODELAY, 1L);
    curl_easy_setopt(c->h, CURLOPT_TIMEOUT, 300L);
    curl_easy_setopt(c->h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c->h, CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_1_1);
}

/* Prepare the next request of c (a POST unless STEP_STATE). */
static void client_prepare(client *c) {
    c->body.n = 0;
    if (c->body.p)
        c->body.p[0] = 0;
    switch (c->step) {
        case STEP_CREATE:
            snprintf(c->url, sizeof c->url, "%s/threads", g_base);
            snprintf(c->post, sizeof c->post, "{}");
            break;
        case STEP_WAIT:
            if (g_o->mode == MODE_STATELESS)
                snprintf(c->url, sizeof c->url, "%s/runs/wait", g_base);
            else
                snprintf(c->url, sizeof c->url, "%s/threads/%s/runs/wait", g_base, c->thread_id);
            snprintf(c->post, sizeof c->post,
                     "{\"assistant_id\":\"chain\",\"input\":{\"items\":[\"x\"]}%s}", g_durability);
            break;
        case STEP_STREAM:
            snprintf(c->url, sizeof c->url, "%s/threads/%s/runs/stream", g_base, c->thread_id);
            snprintf(
                c->post, sizeof c->post,
                "{\"assistant_id\":\"counter\",\"input\":{\"n\":%ld},\"stream_mode\":\"updates\","
                "\"config\":{\"recursion_limit\":%ld}%s}",
                g_o->n, g_o->n + 100, g_durability);
            break;
        case STEP_STATE:
            snprintf(c->url, sizeof c->url, "%s/threads/%s/state", g_base, c->thread_id);
            break;
        case STEP_DONE:
            break;
    }
    curl_easy_setopt(c->h, CURLOPT_URL, c->url);
    if (c->step == STEP_STATE) {
        curl_easy_setopt(c->h, CURLOPT_HTTPGET, 1L);
    } else {
        curl_easy_setopt(c->h, CURLOPT_POSTFIELDS, c->post);
        curl_easy_setopt(c->h, CURLOPT_POSTFIELDSIZE, (long)strlen(c->post));
    }
    c->t_req = now_s();
}

/* The body without whitespace (LangGraph.js pads runs/wait with keep-alive spaces). */
static bool body_is(const buf *b, const char *want) {
    size_t j = 0;
    for (size_t i = 0; i < b->n; i++) {
        char ch = b->p[i];
        if (ch == ' ' || ch == '\n' || ch == '\r' || ch == '\t')
            continue;
        if (want[j] != ch)
            return false;
        j++;
    }
    return want[j] == 0;
}

static bool take_thread_id(client *c) {
    const char *k = c->body.p ? strstr(c->body.p, "\"thread_id\"") : NULL;
    if (!k)
        return false;
    k = strchr(k + 11, '"');
    if (!k)
        return false;
    k++;
    const char *e = strchr(k, '"');
    if (!e || (size_t)(e - k) >= sizeof c->thread_id)
        return false;
    memcpy(c->thread_id, k, (size_t)(e - k));
    c->thread_id[e - k] = 0;
    return true;
}

/* ---- the run ---- */

typedef struct stats {
    lat wait, pair, create;
    long errors;
    char first_error[3][200];
    int nfirst;
} stats;

static void note_error(stats *s, const char *fmt, const char *a, const char *b) {
    s->errors++;
    if (s->nfirst < 3) {
        snprintf(s->first_error[s->nfirst], sizeof s->first_error[0], fmt, a, b);
        for (char *p = s->first_error[s->nfirst]; *p; p++)
            if (*p == '"' || *p == '\\' || (unsigned char)*p < 0x20)
                *p = ' ';
        s->nfirst++;
    }
}

/* Runs conc clients until the deadline (or, with deadline 0, until each did
 * `count` runs). Returns the elapsed seconds. */
static double run_loops(CURLM *m, int conc, double secs, long count, stats *s) {
    client *cs = calloc((size_t)conc, sizeof *cs);
    long *done = calloc((size_t)conc, sizeof *done);
    if (!cs || !done)
        abort();
    double t0 = now_s(), deadline = secs > 0 ? t0 + secs : 0;
    int running = 0;
    for (int i = 0; i < conc; i++) {
        client_init(&cs[i]);
        cs[i].step = g_o->mode == MODE_STATELESS ? STEP_WAIT : STEP_CREATE;
        cs[i].t_pair = now_s();
        client_prepare(&cs[i]);
        curl_multi_add_handle(m, cs[i].h);
        running++;
    }
    while (running > 0) {
        int still;
        curl_multi_perform(m, &still);
        CURLMsg *msg;
        int left;
        while ((msg = curl_multi_info_read(m, &left))) {
            if (msg->msg != CURLMSG_DONE)
                continue;
            char *pv = NULL;
            curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, &pv);
            client *c = (client *)(void *)pv;
            int idx = (int)(c - cs);
            double t = now_s();
            long code = 0;
            curl_easy_getinfo(c->h, CURLINFO_RESPONSE_CODE, &code);
            curl_multi_remove_handle(m, c->h);
            bool ok = msg->data.result == CURLE_OK && code == 200;
            if (!ok) {
                char codes[32];
                snprintf(codes, sizeof codes, "%ld", code);
                note_error(s, "%s: %s",
                           msg->data.result != CURLE_OK ? curl_easy_strerror(msg->data.result)
                                                        : "HTTP",
                           msg->data.result != CURLE_OK ? "" : codes);
            }
            if (ok && c->step == STEP_CREATE) {
                if (take_thread_id(c)) {
                    lat_add(&s->create, (t - c->t_req) * 1e3);
                    c->step = STEP_WAIT;
                    client_prepare(c);
                    curl_multi_add_handle(m, c->h);
                    continue;
                }
                note_error(s, "no thread_id in %s%s", c->body.p ? c->body.p : "(empty)", "");
            } else if (ok && c->step == STEP_WAIT) {
                if (body_is(&c->body, "{\"items\":[\"x\",\"a\",\"b\",\"c\"]}")) {
                    lat_add(&s->wait, (t - c->t_req) * 1e3);
                    lat_add(&s->pair, (t - c->t_pair) * 1e3);
                    done[idx]++;
                } else {
                    note_error(s, "bad result %.150s%s", c->body.p ? c->body.p : "(empty)", "");
                }
            }
            /* next pair, or stop */
            bool more = deadline > 0 ? t < deadline : done[idx] < count;
            if (!ok && deadline == 0)
                more = false;
            if (more) {
                c->step = g_o->mode == MODE_STATELESS ? STEP_WAIT : STEP_CREATE;
                c->t_pair = t;
                client_prepare(c);
                curl_multi_add_handle(m, c->h);
            } else {
                running--;
            }
        }
        if (running > 0)
            curl_multi_poll(m, NULL, 0, 100, NULL);
    }
    double el = now_s() - t0;
    for (int i = 0; i < conc; i++) {
        curl_easy_cleanup(cs[i].h);
        curl_slist_free_all(cs[i].hdrs);
        free(cs[i].body.p);
    }
    free(cs);
    free(done);
    return el;
}

/* Drives one client through its steps until STEP_DONE. */
static bool run_one(CURLM *m, client *c) {
    client_prepare(c);
    curl_multi_add_handle(m, c->h);
    for (;;) {
        int still;
        curl_multi_perform(m, &still);
        CURLMsg *msg;
        int left;
        while ((msg = curl_multi_info_read(m, &left))) {
            if (msg->msg != CURLMSG_DONE)
                continue;
            long code = 0;
            curl_easy_getinfo(c->h, CURLINFO_RESPONSE_CODE, &code);
            curl_multi_remove_handle(m, c->h);
            if (msg->data.result != CURLE_OK || code != 200) {
                fprintf(stderr, "bench_server_load: %s -> %s (HTTP %ld)\n", c->url,
                        curl_easy_strerror(msg->data.result), code);
                return false;
            }
            return true;
        }
        curl_multi_poll(m, NULL, 0, 100, NULL);
    }
}

static void print_server(double cpu0, double cpu1, long runs) {
    if (!g_npids)
        return;
    double cpu = cpu1 - cpu0;
    printf(",\"server_cpu_ms\":%.0f", cpu);
    if (runs > 0)
        printf(",\"server_cpu_ms_per_run\":%.3f", cpu / (double)runs);
    long hwm = 0, rss = 0;
    for (int i = 0; i < g_npids; i++) {
        hwm += proc_status_kib(g_pids[i], "VmHWM");
        rss += proc_status_kib(g_pids[i], "VmRSS");
    }
    printf(",\"server_vmhwm_kib\":%ld,\"server_vmrss_kib\":%ld", hwm, rss);
}

static int mode_stream(CURLM *m) {
    client c;
    client_init(&c);
    c.step = STEP_CREATE;
    if (!run_one(m, &c) || !take_thread_id(&c))
        return 1;
    double cpu0 = servers_cpu_ms(), ccpu0 = self_cpu_ms();
    double t0 = now_s();
    c.step = STEP_STREAM;
    if (!run_one(m, &c))
        return 1;
    double t1 = now_s();
    double cpu1 = servers_cpu_ms(), ccpu1 = self_cpu_ms();
    c.step = STEP_STATE;
    long count = -1;
    if (run_one(m, &c) && c.body.p) {
        const char *v = strstr(c.body.p, "\"values\"");
        const char *k = v ? strstr(v, "\"count\":") : NULL;
        if (k)
            count = strtol(k + 8, NULL, 10);
    }
    double total = t1 - t0, span = c.t_last - c.t_first;
    printf(
        "{\"mode\":\"stream\",\"n\":%ld,\"update_events\":%ld,\"events\":%ld,\"final_count\":%ld,"
        "\"total_s\":%.4f,\"events_per_s_total\":%.0f,\"time_to_first_update_ms\":%.3f,"
        "\"first_to_last_update_s\":%.4f,\"events_per_s_first_to_last\":%.0f,"
        "\"after_last_update_until_close_ms\":%.3f,\"client_cpu_ms\":%.1f",
        g_o->n, c.updates, c.events, count, total, c.updates / total,
        c.updates ? (c.t_first - t0) * 1e3 : -1.0, span,
        span > 0 ? (double)(c.updates - 1) / span : 0.0, c.updates ? (t1 - c.t_last) * 1e3 : -1.0,
        ccpu1 - ccpu0);
    print_server(cpu0, cpu1, 0);
    printf(",\"errors\":%d}\n", (c.updates == g_o->n && count == g_o->n) ? 0 : 1);
    curl_easy_cleanup(c.h);
    curl_slist_free_all(c.hdrs);
    free(c.body.p);
    return c.updates == g_o->n ? 0 : 1;
}

static int mode_loops(CURLM *m) {
    if (g_o->warmup > 0) {
        stats w = {0};
        run_loops(m, 1, 0, g_o->warmup, &w);
        if (w.errors) {
            fprintf(stderr, "bench_server_load: warm-up failed: %s\n", w.first_error[0]);
            return 1;
        }
        free(w.wait.v);
        free(w.pair.v);
        free(w.create.v);
    }
    stats s = {0};
    double cpu0 = servers_cpu_ms(), ccpu0 = self_cpu_ms();
    double el = run_loops(m, g_o->conc, g_o->secs, 0, &s);
    double cpu1 = servers_cpu_ms(), ccpu1 = self_cpu_ms();
    long runs = (long)s.wait.n;
    printf("{\"mode\":\"%s\",\"conc\":%d,\"secs\":%.2f,\"runs\":%ld,\"runs_per_s\":%.2f,",
           g_o->mode == MODE_CHAIN ? "chain" : "stateless", g_o->conc, el, runs, (double)runs / el);
    lat_json("wait", &s.wait);
    printf(",");
    lat_json("pair", &s.pair);
    if (g_o->mode == MODE_CHAIN) {
        printf(",");
        lat_json("create", &s.create);
    }
    printf(",\"errors\":%ld", s.errors);
    if (s.nfirst) {
        printf(",\"first_errors\":[");
        for (int i = 0; i < s.nfirst; i++)
            printf("%s\"%s\"", i ? "," : "", s.first_error[i]);
        printf("]");
    }
    printf(",\"client_cpu_ms\":%.1f,\"client_cpu_ms_per_run\":%.4f", ccpu1 - ccpu0,
           runs ? (ccpu1 - ccpu0) / (double)runs : 0.0);
    print_server(cpu0, cpu1, runs);
    printf("}\n");
    free(s.wait.v);
    free(s.pair.v);
    free(s.create.v);
    return s.errors && !runs ? 1 : 0;
}

static void usage(FILE *f) {
    fprintf(f,
            "usage: bench_server_load [--mode chain|stateless|stream] [--url URL] [--conc N]\n"
            "                         [--secs S] [--n N] [--warmup K] [--pid PID[,PID]]\n"
            "\n"
            "Load for LangGraph's HTTP API (superstep serve, LangGraph.js's server).\n"
            "  --mode chain      each of N clients loops POST /threads, POST\n"
            "                    /threads/{id}/runs/wait of \"chain\" (default)\n"
            "  --mode stateless  the same through POST /runs/wait\n"
            "  --mode stream     one runs/stream of \"counter\" with n=N, stream_mode updates\n"
            "  --url URL         the server (default http://127.0.0.1:2024)\n"
            "  --conc N          concurrent clients, one keep-alive connection each (default 1)\n"
            "  --secs S          seconds to run (default 10)\n"
            "  --n N             counter steps in stream mode (default 1000)\n"
            "  --warmup K        unmeasured sequential chain runs first (default 3)\n"
            "  --pid PID[,PID]   report the server's CPU time in the phase, VmHWM, VmRSS\n"
            "  --durability M    every run asks for durability M (sync, async, exit)\n"
            "  --bearer TOKEN    send 'Authorization: Bearer TOKEN' (a JWT: docs/auth.md)\n"
            "Prints one JSON object; latencies in ms; client_cpu_ms is this program's CPU.\n");
}

int main(int argc, char **argv) {
    opts o = {MODE_CHAIN, "http://127.0.0.1:2024", 1, 10, 1000, 3, NULL, NULL, NULL};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return 0;
        }
        if (!v) {
            usage(stderr);
            return 2;
        }
        if (!strcmp(a, "--mode")) {
            if (!strcmp(v, "chain"))
                o.mode = MODE_CHAIN;
            else if (!strcmp(v, "stateless"))
                o.mode = MODE_STATELESS;
            else if (!strcmp(v, "stream"))
                o.mode = MODE_STREAM;
            else {
                usage(stderr);
                return 2;
            }
        } else if (!strcmp(a, "--url"))
            o.url = v;
        else if (!strcmp(a, "--conc"))
            o.conc = (int)strtol(v, NULL, 10);
        else if (!strcmp(a, "--secs"))
            o.secs = strtod(v, NULL);
        else if (!strcmp(a, "--n"))
            o.n = strtol(v, NULL, 10);
        else if (!strcmp(a, "--warmup"))
            o.warmup = (int)strtol(v, NULL, 10);
        else if (!strcmp(a, "--durability"))
            o.durability = v;
        else if (!strcmp(a, "--bearer"))
            o.bearer = v;
        else if (!strcmp(a, "--pid"))
            o.pids = v;
        else {
            usage(stderr);
            return 2;
        }
        i++;
    }
    if (o.conc < 1 || o.secs <= 0 || o.n < 1) {
        usage(stderr);
        return 2;
    }
    if (o.durability) {
        size_t dl = strlen(o.durability);
        if (dl == 0 || dl > 16 || strspn(o.durability, "abcdefghijklmnopqrstuvwxyz") != dl) {
            fprintf(stderr,
                    "bench_server_load: --durability: expected a mode name such as "
                    "sync, async or exit, got '%s'\n",
                    o.durability);
            return 2;
        }
        snprintf(g_durability, sizeof g_durability, ",\"durability\":\"%s\"", o.durability);
    }
    snprintf(g_base, sizeof g_base, "%s", o.url);
    size_t bl = strlen(g_base);
    while (bl && g_base[bl - 1] == '/')
        g_base[--bl] = 0;
    for (const char *p = o.pids; p && *p && g_npids < 8;) {
        char *e;
        long pid = strtol(p, &e, 10);
        if (e == p)
            break;
        g_pids[g_npids++] = pid;
        p = *e == ',' ? e + 1 : e;
    }
    g_o = &o;
    curl_global_init(CURL_GLOBAL_DEFAULT);
    CURLM *m = curl_multi_init();
    curl_multi_setopt(m, CURLMOPT_MAXCONNECTS, (long)(o.conc * 2 + 4));
    int rc = o.mode == MODE_STREAM ? mode_stream(m) : mode_loops(m);
    curl_multi_cleanup(m);
    curl_global_cleanup();
    return rc;
}
