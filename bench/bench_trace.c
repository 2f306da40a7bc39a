/* SPDX-License-Identifier: MIT */
/*
 * What tracing costs on W1 (issue 20). W1 (bench/workloads.h: `inc` adds 1
 * to a sum field and loops, 1 000 supersteps, no saver) runs in this process
 * in four modes, interleaved, R times each:
 *
 *   (a) no tracer;
 *   (b) the OTLP exporter (sst_otlp_tracer_new) sending to a dead endpoint,
 *       a local port where nothing listens (connections are refused);
 *   (c) a tracer whose hooks do nothing: the engine's side of tracing alone;
 *   (d) the OTLP exporter sending to a live sink in this process (a socket
 *       thread that reads each request and answers 200 "{}").
 *
 * Prints the median and p90 wall time per run and per superstep, the ratios
 * to (a) ((d) runs in a second phase, interleaved with its own (a)), the
 * spans a run makes, the spans each exporter dropped, and each mode's peak
 * RSS (measured alone in a fresh process). Goal: (b) <= 1.5x (a).
 * Never fails on speed.
 *
 *   bench_trace [--quick] [--n N] [--reps R] [--no-live] [--only b|c|d]
 *
 * --only runs (a) and that mode, without the peak RSS children (for perf).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "superstep/agent.h"
#include "workloads.h"

#define MAX_REPS 5000

/* ---- a live OTLP sink ------------------------------------------------------------------------ */

/*
 * An HTTP/1.1 server on 127.0.0.1 that answers every request 200 with "{}"
 * (an OTLP full success), one connection at a time: the exporter sends its
 * requests one after another on one kept-alive connection.
 */
typedef struct sink {
    int lfd;                  /* listening socket */
    unsigned short port;      /* host order */
    pthread_t thread;         /* runs sink_main */
    atomic_bool stop;         /* set by sink_stop */
    atomic_ullong requests;   /* answered */
    atomic_ullong body_bytes; /* request bodies read */
} sink;

/* Waits up to 100 ms for @p fd to be readable; false when the sink is stopping. */
static bool sink_wait(sink *s, int fd) {
    for (;;) {
        if (atomic_load(&s->stop)) {
            return false;
        }
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int rc = poll(&p, 1, 100);
        if (rc > 0) {
            return true;
        }
        if (rc < 0 && errno != EINTR) {
            return false;
        }
    }
}

/* The value of header @p name (case-insensitive) in @p head, or NULL. */
static const char *header(const char *head, const char *name) {
    size_t n = strlen(name);
    for (const char *p = strstr(head, "\r\n"); p != NULL; p = strstr(p + 2, "\r\n")) {
        if (strncasecmp(p + 2, name, n) == 0 && p[2 + n] == ':') {
            const char *v = p + 3 + n;
            while (*v == ' ' || *v == '\t') {
                v++;
            }
            return v;
        }
    }
    return NULL;
}

static bool send_all(int fd, const char *p, size_t n) {
    while (n > 0) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w <= 0) {
            return false;
        }
        p += w;
        n -= (size_t)w;
    }
    return true;
}

/* Answers the requests of one connection until it closes. */
static void sink_serve(sink *s, int fd) {
    static const char continue_100[] = "HTTP/1.1 100 Continue\r\n\r\n";
    static const char ok[] = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                             "Content-Length: 2\r\n\r\n{}";
    char buf[65536];
    size_t have = 0;
    for (;;) {
        /* The head of one request. */
        char *end = NULL;
        while ((end = memmem(buf, have, "\r\n\r\n", 4)) == NULL) {
            if (have == sizeof buf - 1 || !sink_wait(s, fd)) {
                return;
            }
            ssize_t r = recv(fd, buf + have, sizeof buf - 1 - have, 0);
            if (r <= 0) {
                return;
            }
            have += (size_t)r;
        }
        end[2] = '\0'; /* the head, with its last line's CRLF */
        size_t head_len = (size_t)(end - buf) + 4;
        const char *cl = header(buf, "Content-Length");
        const char *expect = header(buf, "Expect");
        unsigned long long body = cl != NULL ? strtoull(cl, NULL, 10) : 0;
        if (expect != NULL && strncasecmp(expect, "100-continue", 12) == 0 &&
            !send_all(fd, continue_100, sizeof continue_100 - 1)) {
            return;
        }
        /* Its body, read and thrown away. */
        size_t in_buf = have - head_len;
        size_t used = in_buf < body ? in_buf : (size_t)body;
        unsigned long long left = body - used;
        memmove(buf, buf + head_len + used, have - head_len - used);
        have -= head_len + used;
        while (left > 0) {
            if (!sink_wait(s, fd)) {
                return;
            }
            ssize_t r = recv(fd, buf, left < sizeof buf ? (size_t)left : sizeof buf, 0);
            if (r <= 0) {
                return;
            }
            left -= (unsigned long long)r;
        }
        atomic_fetch_add(&s->body_bytes, body);
        if (!send_all(fd, ok, sizeof ok - 1)) {
            return;
        }
        atomic_fetch_add(&s->requests, 1);
    }
}

static void *sink_main(void *arg) {
    sink *s = arg;
    while (sink_wait(s, s->lfd)) {
        int fd = accept(s->lfd, NULL, NULL);
        if (fd >= 0) {
            sink_serve(s, fd);
            close(fd);
        }
    }
    return NULL;
}

/* Starts the sink on an ephemeral port; exits on failure. */
static void sink_start(sink *s) {
    memset(s, 0, sizeof *s);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    s->lfd = socket(AF_INET, SOCK_STREAM, 0);
    if (s->lfd < 0 || bind(s->lfd, (struct sockaddr *)&a, sizeof a) != 0 ||
        listen(s->lfd, 8) != 0 || getsockname(s->lfd, (struct sockaddr *)&a, &len) != 0 ||
        pthread_create(&s->thread, NULL, sink_main, s) != 0) {
        perror("bench_trace: sink");
        exit(1);
    }
    s->port = ntohs(a.sin_port);
}

static void sink_stop(sink *s) {
    atomic_store(&s->stop, true);
    pthread_join(s->thread, NULL);
    close(s->lfd);
}

/* ---- a dead endpoint ------------------------------------------------------------------------- */

/* True when a TCP connection to 127.0.0.1:@p port is refused. */
static bool refused(unsigned short port) {
    struct sockaddr_in a = {
        .sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    bool no = fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) != 0 && errno == ECONNREFUSED;
    if (fd >= 0) {
        close(fd);
    }
    return no;
}

/*
 * A port on 127.0.0.1 that refuses connections: 9 (discard) when nothing
 * listens there, else one this process binds and never listens on (*hold
 * keeps it bound, so no one else can take it; -1 when not needed).
 */
static unsigned short dead_port(int *hold) {
    *hold = -1;
    if (refused(9)) {
        return 9;
    }
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    *hold = socket(AF_INET, SOCK_STREAM, 0);
    if (*hold < 0 || bind(*hold, (struct sockaddr *)&a, sizeof a) != 0 ||
        getsockname(*hold, (struct sockaddr *)&a, &len) != 0 || !refused(ntohs(a.sin_port))) {
        fprintf(stderr, "bench_trace: no port refusing connections\n");
        exit(1);
    }
    return ntohs(a.sin_port);
}

/* ---- tracers that do nothing ----------------------------------------------------------------- */

/* Every span is this one address: the engine needs a non-NULL span to end it and to nest under. */
static char g_span;
static atomic_ullong g_started; /* spans started by the counting tracer */

static void *noop_start(void *ud, void *parent, const char *kind, const char *name,
                        const sst_value *attrs) {
    (void)ud, (void)parent, (void)kind, (void)name, (void)attrs;
    return &g_span;
}

static void *counting_start(void *ud, void *parent, const char *kind, const char *name,
                            const sst_value *attrs) {
    (void)ud, (void)parent, (void)kind, (void)name, (void)attrs;
    atomic_fetch_add_explicit(&g_started, 1, memory_order_relaxed);
    return &g_span;
}

static void noop_end(void *ud, void *span, sst_code code, const char *message,
                     const sst_value *attrs) {
    (void)ud, (void)span, (void)code, (void)message, (void)attrs;
}

static const sst_tracer g_noop = {.start = noop_start, .end = noop_end};
static const sst_tracer g_counting = {.start = counting_start, .end = noop_end};

/* ---- the modes ------------------------------------------------------------------------------ */

/*
 * Two phases, each interleaved: (a), (b) and (c); then (a) again beside (d),
 * whose exporter thread encodes and sends while later runs go on and would
 * otherwise load the machine under the other modes' runs.
 */
enum { M_NONE, M_DEAD, M_NOOP, M_NONE_D, M_LIVE, M_COUNT };

static const char *const MODE_NAME[M_COUNT] = {"(a) no tracer", "(b) OTLP, dead endpoint",
                                               "(c) no-op hooks", "(a) no tracer, beside (d)",
                                               "(d) OTLP, live sink"};
static const int PHASE_OF[M_COUNT] = {1, 1, 1, 2, 2};

typedef struct mode {
    bool on;                 /* measured in this run */
    const sst_tracer *hooks; /* NULL for (a) */
    sst_otlp_tracer *otlp;   /* (b) and (d), owned */
    sink live;               /* (d) */
    int hold;                /* (b): the socket keeping the dead port bound, or -1 */
    char url[64];            /* (b) and (d) */
    double wall[MAX_REPS];   /* seconds per run */
    double cpu[MAX_REPS];    /* process CPU seconds per run (every thread) */
} mode;

static bool g_quick;

static void mode_open(mode *m, int which) {
    m->hold = -1;
    if (which == M_NOOP) {
        m->hooks = &g_noop;
        return;
    }
    if (which != M_DEAD && which != M_LIVE) {
        return;
    }
    if (which == M_DEAD) {
        snprintf(m->url, sizeof m->url, "http://127.0.0.1:%u/v1/traces", dead_port(&m->hold));
    } else {
        sink_start(&m->live);
        snprintf(m->url, sizeof m->url, "http://127.0.0.1:%u/v1/traces", m->live.port);
    }
    /*
     * A dead endpoint holds the exit for the exporter's shutdown bound (10 s:
     * each batch is retried with backoff). --quick must end in seconds, so
     * there a batch gives up after its first refused connection.
     */
    bool fast_fail = g_quick && which == M_DEAD;
    if (fast_fail) {
        setenv("OTEL_BSP_EXPORT_TIMEOUT", "1", 1);
    }
    sst_error err;
    sst_otlp_tracer_opts o;
    sst_otlp_tracer_opts_init(&o);
    o.endpoint = m->url;
    o.service_name = "bench_trace";
    m->otlp = sst_otlp_tracer_new(&o, &err);
    if (fast_fail) {
        unsetenv("OTEL_BSP_EXPORT_TIMEOUT");
    }
    if (m->otlp == NULL) {
        bw_die("tracer", &err);
    }
    m->hooks = sst_otlp_tracer_hooks(m->otlp);
}

/* Frees the mode's tracer (and stops its sink); returns the seconds the free took. */
static double mode_close(mode *m, int which) {
    double t0 = bw_now_s();
    sst_otlp_tracer_free(m->otlp);
    double dt = bw_now_s() - t0;
    m->otlp = NULL;
    if (which == M_LIVE) {
        sink_stop(&m->live);
    }
    if (m->hold >= 0) {
        close(m->hold);
    }
    return dt;
}

/* One W1 run traced by @p t (NULL: not traced); exits unless counter == n. Wall seconds. */
static double run_w1(const sst_compiled_graph *cg, const sst_value *input, long n,
                     const sst_tracer *t, double *cpu_s) {
    sst_error err;
    sst_invoke_opts o;
    sst_invoke_opts_init(&o);
    o.recursion_limit = (uint64_t)n + 10;
    o.tracer = t;
    double c0 = bw_cpu_s(), t0 = bw_now_s();
    sst_graph_result *r = sst_graph_invoke(cg, NULL, input, &o, &err);
    double dt = bw_now_s() - t0;
    *cpu_s = bw_cpu_s() - c0;
    if (r == NULL || sst_graph_result_status(r) != SST_RUN_COMPLETED) {
        bw_die("invoke", r != NULL ? sst_graph_result_error(r) : &err);
    }
    if (sst_int_value(sst_object_get(sst_graph_result_state(r), "counter")) != n) {
        fprintf(stderr, "bench_trace: W1 counted wrong\n");
        exit(1);
    }
    sst_graph_result_free(r);
    return dt;
}

/* ---- figures ------------------------------------------------------------------------------- */

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The @p q quantile (0..1, nearest rank) of @p n figures; 0.5 is the median. */
static double quantile(const double *xs, int n, double q) {
    static double s[MAX_REPS];
    memcpy(s, xs, (size_t)n * sizeof *s);
    qsort(s, (size_t)n, sizeof *s, by_value);
    if (q == 0.5) {
        return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
    }
    int k = (int)(q * n + 0.999999);
    return s[k < 1 ? 0 : k > n ? n - 1 : k - 1];
}

/*
 * Peak RSS (KiB) of a fresh process (this program again, --alone) that runs
 * mode @p which alone: each mode's memory is its own, libraries included.
 */
static long rss_alone(const char *self, int which, long n, int runs) {
    int fd[2];
    if (pipe(fd) != 0) {
        perror("pipe");
        exit(1);
    }
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        close(fd[0]);
        dup2(fd[1], STDOUT_FILENO);
        char k[16], ns[32], rs[32];
        snprintf(k, sizeof k, "%d", which);
        snprintf(ns, sizeof ns, "%ld", n);
        snprintf(rs, sizeof rs, "%d", runs);
        execl(self, self, "--alone", k, "--n", ns, "--reps", rs, g_quick ? "--quick" : NULL,
              (char *)NULL);
        _exit(127);
    }
    close(fd[1]);
    char buf[32] = {0};
    ssize_t got = read(fd[0], buf, sizeof buf - 1);
    close(fd[0]);
    int status;
    waitpid(pid, &status, 0);
    if (got <= 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "bench_trace: %s alone failed\n", MODE_NAME[which]);
        exit(1);
    }
    return strtol(buf, NULL, 10);
}

/* --alone: @p runs runs of mode @p which; prints the peak RSS (KiB) and exits at once. */
static int alone(int which, const sst_compiled_graph *cg, const sst_value *input, long n,
                 int runs) {
    static mode m;
    mode_open(&m, which);
    double cpu;
    for (int i = 0; i < runs; i++) {
        (void)run_w1(cg, input, n, m.hooks, &cpu);
    }
    printf("%ld\n", bw_peak_rss_kib());
    fflush(stdout);
    _exit(0); /* no shutdown wait for the dead endpoint: the figure is taken */
}

int main(int argc, char **argv) {
    long n = 1000;
    int reps = 0;
    bool live = true;
    int only = -1, solo = -1;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0) {
            g_quick = true;
        } else if (strcmp(argv[i], "--n") == 0 && i + 1 < argc) {
            n = strtol(argv[++i], NULL, 10);
        } else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) {
            reps = (int)strtol(argv[++i], NULL, 10);
        } else if (strcmp(argv[i], "--alone") == 0 && i + 1 < argc) {
            solo = (int)strtol(argv[++i], NULL, 10);
        } else if (strcmp(argv[i], "--no-live") == 0) {
            live = false;
        } else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc && argv[i + 1][0] >= 'b' &&
                   argv[i + 1][0] <= 'd' && argv[i + 1][1] == '\0') {
            char m = argv[++i][0];
            only = m == 'b' ? M_DEAD : m == 'c' ? M_NOOP : M_LIVE;
        } else {
            fprintf(stderr, "usage: bench_trace [--quick] [--n N] [--reps R] [--no-live] "
                            "[--only b|c|d]\n");
            return 2;
        }
    }
    if (reps <= 0) {
        reps = g_quick ? 5 : 301;
    }
    if (n < 1 || reps > MAX_REPS) {
        fprintf(stderr, "bench_trace: --n must be >= 1 and --reps <= %d\n", MAX_REPS);
        return 2;
    }
    int warm = g_quick ? 1 : 10;

    sst_compiled_graph *cg = bw_w1();
    char json[64];
    snprintf(json, sizeof json, "{\"counter\":0,\"n\":%ld}", n);
    sst_value *input = bw_json(json);
    if (solo >= 0 && solo < M_COUNT) {
        return alone(solo, cg, input, n, reps);
    }

    /* Spans one run makes (the engine calls start the same way whatever the tracer). */
    double cpu;
    (void)run_w1(cg, input, n, &g_counting, &cpu);
    unsigned long long spans = atomic_load(&g_started);

    static mode modes[M_COUNT];
    for (int k = 0; k < M_COUNT; k++) {
        bool in_phase = only < 0 || PHASE_OF[k] == PHASE_OF[only];
        modes[k].on = in_phase && (only < 0 || k == only || k == M_NONE || k == M_NONE_D) &&
                      (live || PHASE_OF[k] == 1);
    }
    long rss[M_COUNT] = {0};
    for (int k = 0; k < M_COUNT; k++) {
        if (modes[k].on && only < 0 && k != M_NONE_D) {
            rss[k] = rss_alone("/proc/self/exe", k, n, warm + reps);
        }
    }

    for (int k = 0; k < M_COUNT; k++) {
        if (modes[k].on) {
            mode_open(&modes[k], k);
        }
    }
    for (int phase = 1; phase <= 2; phase++) {
        int member[M_COUNT], count = 0;
        for (int k = 0; k < M_COUNT; k++) {
            if (modes[k].on && PHASE_OF[k] == phase) {
                member[count++] = k;
            }
        }
        for (int i = 0; i < warm * count; i++) {
            mode *m = &modes[member[i % count]];
            (void)run_w1(cg, input, n, m->hooks, &cpu);
        }
        /* Interleaved, the order rotating each round so no mode always follows the same one. */
        for (int i = 0; i < reps; i++) {
            for (int j = 0; j < count; j++) {
                mode *m = &modes[member[(i + j) % count]];
                m->wall[i] = run_w1(cg, input, n, m->hooks, &m->cpu[i]);
            }
        }
    }
    unsigned long long runs = (unsigned long long)(warm + reps); /* each mode's */
    uint64_t dropped[M_COUNT] = {0};
    for (int k = M_DEAD; k < M_COUNT; k++) {
        if (modes[k].otlp != NULL) {
            dropped[k] = sst_otlp_tracer_dropped(modes[k].otlp);
        }
    }
    /* The live sink gets what is still queued before its figures are read. */
    sst_error err;
    uint64_t live_dropped_flushed = 0;
    bool live_flushed = false;
    if (modes[M_LIVE].on) {
        live_flushed = sst_otlp_tracer_flush(modes[M_LIVE].otlp, 10000, &err) == SST_OK;
        live_dropped_flushed = sst_otlp_tracer_dropped(modes[M_LIVE].otlp);
    }
    double shut[M_COUNT] = {0};
    for (int k = 0; k < M_COUNT; k++) {
        if (modes[k].on) {
            shut[k] = mode_close(&modes[k], k);
        }
    }

    printf("superstep %s tracing overhead on W1%s: %ld supersteps per run, graph API, no saver,\n"
           "%d runs per mode interleaved (after %d warm-up runs each), one process\n\n",
           sst_version(), g_quick ? " (quick)" : "", n, reps, warm);
    printf("%-24s %11s %11s %9s %9s %11s %8s %8s %9s %14s %9s\n", "mode", "wall ms med",
           "wall ms p90", "us/step", "us/step", "cpu ms med", "ratio", "ratio", "spans", "dropped",
           "peak RSS");
    printf("%-24s %11s %11s %9s %9s %11s %8s %8s %9s %14s %9s\n", "", "", "", "med", "p90", "",
           "med", "p90", "per run", "at end", "MiB alone");
    double ratio[M_COUNT] = {0};
    for (int k = 0; k < M_COUNT; k++) {
        if (!modes[k].on) {
            continue;
        }
        const double *base = modes[PHASE_OF[k] == 1 ? M_NONE : M_NONE_D].wall;
        double med_a = quantile(base, reps, 0.5), p90_a = quantile(base, reps, 0.9);
        double med = quantile(modes[k].wall, reps, 0.5), p90 = quantile(modes[k].wall, reps, 0.9);
        ratio[k] = med / med_a;
        char drop[32] = "-";
        if (k == M_DEAD || k == M_LIVE) {
            snprintf(drop, sizeof drop, "%llu", (unsigned long long)dropped[k]);
        }
        char mib[16] = "-";
        if (rss[k] > 0) {
            snprintf(mib, sizeof mib, "%.1f", (double)rss[k] / 1024.0);
        }
        printf("%-24s %11.3f %11.3f %9.3f %9.3f %11.3f %7.2fx %7.2fx %9llu %14s %9s\n",
               MODE_NAME[k], med * 1e3, p90 * 1e3, med / (double)n * 1e6, p90 / (double)n * 1e6,
               quantile(modes[k].cpu, reps, 0.5) * 1e3, ratio[k], p90 / p90_a,
               k == M_NONE || k == M_NONE_D ? 0ull : spans, drop, mib);
    }
    printf("\nspans per traced run: %llu (1 run + %ld supersteps + %ld tasks); each tracer got "
           "%llu runs = %llu spans\n",
           spans, n, n, runs, runs * spans);
    if (modes[M_DEAD].on) {
        printf("(b) endpoint %s (connection refused): %llu of %llu spans dropped when the runs "
               "ended; the exporter's free took %.2f s%s\n",
               modes[M_DEAD].url, (unsigned long long)dropped[M_DEAD], runs * spans, shut[M_DEAD],
               g_quick ? " (--quick: OTEL_BSP_EXPORT_TIMEOUT=1, a batch fails at once)"
                       : " (the shutdown bound: the first batch is still being retried)");
    }
    if (modes[M_LIVE].on) {
        printf("(d) sink %s: %llu spans dropped when the runs ended, %llu after a flush (%s); "
               "%llu requests, %.1f MB of JSON; free %.2f s\n",
               modes[M_LIVE].url, (unsigned long long)dropped[M_LIVE],
               (unsigned long long)live_dropped_flushed, live_flushed ? "ok" : err.msg,
               (unsigned long long)atomic_load(&modes[M_LIVE].live.requests),
               (double)atomic_load(&modes[M_LIVE].live.body_bytes) / 1e6, shut[M_LIVE]);
    }
    printf("peak RSS of this process (all modes): %.1f MiB\n", (double)bw_peak_rss_kib() / 1024.0);
    if (modes[M_DEAD].on) {
        printf("\n(b)/(a) %.2fx (goal <= 1.5x: %s)", ratio[M_DEAD],
               ratio[M_DEAD] <= 1.5 ? "met" : "not met");
    }
    if (modes[M_NOOP].on) {
        printf("\n(c)/(a) %.2fx: the engine's side of tracing alone", ratio[M_NOOP]);
    }
    if (modes[M_LIVE].on) {
        printf("\n(d)/(a beside d) %.2fx: with the collector up", ratio[M_LIVE]);
    }
    printf("\n");

    sst_value_unref(input);
    sst_compiled_graph_free(cg);
    return 0;
}
