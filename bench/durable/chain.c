/* SPDX-License-Identifier: MIT */
/*
 * The 3-node chain (W4: a -> b -> c on `value`, +1, *2, -3, each appending its
 * name to `path`) run through the C API on a durable checkpointer by T threads
 * at once, each run on a thread id of its own, for bench/durable/run.sh
 * (issue 37). Uses the public API only, so the same file builds against any
 * superstep tree (bench/durable/CMakeLists.txt, SST_SOURCE).
 *
 *   bench_durable --db DB [--threads T] [--secs S | --runs N] [--warmup K]
 *                 [--mode sync|async|exit]
 *
 * DB: "memory", a SQLite file path, or a postgresql:// URL. K sequential
 * runs first (default 20, not measured), then T threads run the chain until S
 * seconds have passed (default 5) or N runs are done. Every result is checked.
 * Prints one JSON object: runs/s, p50/p99 latency of one run, CPU of this
 * process per run (user + system, all threads), and the runs made in all.
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "superstep/superstep.h"

#define MAX_THREADS 256

typedef struct bench {
    const sst_compiled_graph *cg;
    sst_checkpointer *cp;
    sst_durability durability;
    double stop_at; /* monotonic seconds; 0: stop on the run quota only */
    long quota;     /* runs to make; 0: until stop_at */
    atomic_long taken;
    atomic_bool failed;
} bench;

typedef struct worker {
    bench *b;
    int index;
    double *lat_ms;
    size_t n, cap;
    char error[512];
} worker;

static double now_s(int clock) {
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static sst_code step(sst_node_ctx *ctx, int64_t v, const char *name) {
    sst_code rc = sst_node_update(ctx, "value", sst_int_new(v, NULL), NULL);
    return rc == SST_OK ? sst_node_update(ctx, "path", sst_string_new(name, NULL), NULL) : rc;
}

static int64_t value_of(sst_node_ctx *ctx) {
    return sst_int_value(sst_object_get(sst_node_state(ctx), "value"));
}

static sst_code node_a(sst_node_ctx *ctx, void *ud) {
    (void)ud;
    return step(ctx, value_of(ctx) + 1, "a");
}

static sst_code node_b(sst_node_ctx *ctx, void *ud) {
    (void)ud;
    return step(ctx, value_of(ctx) * 2, "b");
}

static sst_code node_c(sst_node_ctx *ctx, void *ud) {
    (void)ud;
    return step(ctx, value_of(ctx) - 3, "c");
}

static sst_compiled_graph *chain(sst_error *err) {
    sst_graph *g = sst_graph_new(err);
    if (g == NULL) {
        return NULL;
    }
    sst_compiled_graph *cg = NULL;
    if (!sst_graph_add_field(g, "path", sst_reducer_append(), sst_array_empty(), err) &&
        !sst_graph_add_node(g, "a", node_a, NULL, NULL, err) &&
        !sst_graph_add_node(g, "b", node_b, NULL, NULL, err) &&
        !sst_graph_add_node(g, "c", node_c, NULL, NULL, err) &&
        !sst_graph_add_edge(g, SST_START, "a", err) && !sst_graph_add_edge(g, "a", "b", err) &&
        !sst_graph_add_edge(g, "b", "c", err) && !sst_graph_add_edge(g, "c", SST_END, err)) {
        cg = sst_graph_compile(g, NULL, err);
    }
    sst_graph_free(g);
    return cg;
}

/* One run of the chain on thread id "d<pid>-<who>-<i>", checked; false with a message. */
static bool run_one(bench *b, int who, long i, char *msg, size_t msg_n) {
    sst_error err;
    char id[64], in[48];
    snprintf(id, sizeof id, "d%ld-%d-%ld", (long)getpid(), who, i);
    snprintf(in, sizeof in, "{\"value\":%ld}", i);
    sst_invoke_opts o;
    sst_invoke_opts_init(&o);
    o.durability = b->durability;
    sst_value *input = sst_json_parse(in, &err);
    sst_graph_thread *th = input != NULL ? sst_graph_thread_open(b->cg, b->cp, id, &err) : NULL;
    sst_graph_result *r = th != NULL ? sst_graph_invoke(b->cg, th, input, &o, &err) : NULL;
    bool ok = false;
    if (r == NULL) {
        snprintf(msg, msg_n, "run %s: %.150s", id, err.msg);
    } else if (sst_graph_result_status(r) != SST_RUN_COMPLETED) {
        snprintf(msg, msg_n, "run %s did not complete: %.150s", id, sst_graph_result_error(r)->msg);
    } else {
        const sst_value *state = sst_graph_result_state(r);
        const sst_value *path = sst_object_get(state, "path");
        ok = sst_int_value(sst_object_get(state, "value")) == (i + 1) * 2 - 3 && path != NULL &&
             sst_array_len(path) == 3;
        if (!ok) {
            snprintf(msg, msg_n, "run %s: wrong result", id);
        }
    }
    sst_graph_result_free(r);
    sst_graph_thread_free(th);
    sst_value_unref(input);
    return ok;
}

static void *worker_main(void *arg) {
    worker *w = arg;
    bench *b = w->b;
    for (;;) {
        if (atomic_load(&b->failed) || (b->stop_at > 0 && now_s(CLOCK_MONOTONIC) >= b->stop_at)) {
            break;
        }
        long i = atomic_fetch_add(&b->taken, 1);
        if (b->quota > 0 && i >= b->quota) {
            break;
        }
        double t0 = now_s(CLOCK_MONOTONIC);
        if (!run_one(b, w->index, i, w->error, sizeof w->error)) {
            atomic_store(&b->failed, true);
            break;
        }
        if (w->n == w->cap) {
            w->cap = w->cap ? w->cap * 2 : 4096;
            double *grown = realloc(w->lat_ms, w->cap * sizeof *grown);
            if (grown == NULL) {
                snprintf(w->error, sizeof w->error, "out of memory");
                atomic_store(&b->failed, true);
                break;
            }
            w->lat_ms = grown;
        }
        w->lat_ms[w->n++] = (now_s(CLOCK_MONOTONIC) - t0) * 1e3;
    }
    return NULL;
}

static int by_value(const void *x, const void *y) {
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

static double pct(const double *sorted, size_t n, double p) {
    if (n == 0) {
        return 0;
    }
    size_t i = (size_t)(p / 100.0 * (double)n);
    return sorted[i < n ? i : n - 1];
}

static int usage(const char *why) {
    if (why != NULL) {
        fprintf(stderr, "bench_durable: %s\n", why);
    }
    fprintf(stderr, "usage: bench_durable --db memory|FILE|postgresql://... [--threads T]\n"
                    "                     [--secs S | --runs N] [--warmup K] "
                    "[--mode sync|async|exit]\n");
    return 2;
}

static bool parse_long(const char *s, long lo, long hi, long *out) {
    char *end;
    long v = s != NULL ? strtol(s, &end, 10) : 0;
    if (s == NULL || *s == 0 || *end != 0 || v < lo || v > hi) {
        return false;
    }
    *out = v;
    return true;
}

int main(int argc, char **argv) {
    const char *db = NULL, *mode = "sync";
    long threads = 1, secs = 5, runs = 0, warmup = 20;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        bool ok = v != NULL;
        if (strcmp(a, "--db") == 0) {
            db = v;
        } else if (strcmp(a, "--mode") == 0) {
            mode = v;
        } else if (strcmp(a, "--threads") == 0) {
            ok = parse_long(v, 1, MAX_THREADS, &threads);
        } else if (strcmp(a, "--secs") == 0) {
            ok = parse_long(v, 1, 3600, &secs);
        } else if (strcmp(a, "--runs") == 0) {
            ok = parse_long(v, 1, 100000000, &runs);
        } else if (strcmp(a, "--warmup") == 0) {
            ok = parse_long(v, 0, 1000000, &warmup);
        } else {
            return usage(strcmp(a, "--help") == 0 ? NULL : "unknown option");
        }
        if (!ok) {
            char why[160];
            snprintf(why, sizeof why, "%s: expected a value in range, got '%s'", a, v ? v : "");
            return usage(why);
        }
        i++;
    }
    if (db == NULL) {
        return usage("--db is required");
    }
    sst_durability durability;
    if (strcmp(mode, "sync") == 0) {
        durability = SST_DURABILITY_SYNC;
    } else if (strcmp(mode, "async") == 0) {
        durability = SST_DURABILITY_ASYNC;
    } else if (strcmp(mode, "exit") == 0) {
        durability = SST_DURABILITY_EXIT;
    } else {
        return usage("--mode: expected sync, async or exit");
    }

    sst_error err;
    const char *kind = "sqlite";
    sst_checkpointer *cp;
    if (strcmp(db, "memory") == 0) {
        kind = "memory";
        cp = sst_memory_saver_new(&err);
    } else if (strncmp(db, "postgres", 8) == 0) {
        kind = "postgres";
        cp = sst_postgres_saver_open(db, NULL, &err);
    } else {
        cp = sst_sqlite_saver_open(db, NULL, &err);
    }
    sst_compiled_graph *cg = cp != NULL ? chain(&err) : NULL;
    if (cg == NULL) {
        fprintf(stderr, "bench_durable: %s: %s\n", db, err.msg);
        sst_checkpointer_free(cp);
        return 1;
    }

    bench b = {.cg = cg, .cp = cp, .durability = durability, .quota = runs};
    atomic_init(&b.taken, 0);
    atomic_init(&b.failed, false);
    char msg[512];
    int rc = 0;
    for (long i = 0; i < warmup; i++) {
        if (!run_one(&b, 999, i, msg, sizeof msg)) {
            fprintf(stderr, "bench_durable: warm-up: %s\n", msg);
            rc = 1;
            break;
        }
    }
    worker *ws = calloc((size_t)threads, sizeof *ws);
    pthread_t *tids = calloc((size_t)threads, sizeof *tids);
    if (rc == 0 && (ws == NULL || tids == NULL)) {
        fprintf(stderr, "bench_durable: out of memory\n");
        rc = 1;
    }
    double wall = 0, cpu = 0;
    long started = 0;
    if (rc == 0) {
        double c0 = now_s(CLOCK_PROCESS_CPUTIME_ID), t0 = now_s(CLOCK_MONOTONIC);
        b.stop_at = runs > 0 ? 0 : t0 + (double)secs;
        for (; started < threads; started++) {
            ws[started].b = &b;
            ws[started].index = (int)started;
            if (pthread_create(&tids[started], NULL, worker_main, &ws[started]) != 0) {
                fprintf(stderr, "bench_durable: cannot start thread %ld\n", started);
                atomic_store(&b.failed, true);
                rc = 1;
                break;
            }
        }
        for (long i = 0; i < started; i++) {
            pthread_join(tids[i], NULL);
        }
        wall = now_s(CLOCK_MONOTONIC) - t0;
        cpu = now_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
    }
    size_t n = 0;
    for (long i = 0; i < started; i++) {
        if (ws[i].error[0] != 0) {
            fprintf(stderr, "bench_durable: %s\n", ws[i].error);
            rc = 1;
        }
        n += ws[i].n;
    }
    double *all = rc == 0 ? malloc((n ? n : 1) * sizeof *all) : NULL;
    if (rc == 0 && all == NULL) {
        fprintf(stderr, "bench_durable: out of memory\n");
        rc = 1;
    }
    if (rc == 0) {
        size_t k = 0;
        for (long i = 0; i < started; i++) {
            memcpy(all + k, ws[i].lat_ms, ws[i].n * sizeof *all);
            k += ws[i].n;
        }
        qsort(all, n, sizeof *all, by_value);
        struct rusage ru;
        getrusage(RUSAGE_SELF, &ru);
        printf("{\"impl\":\"c-api\",\"db\":\"%s\",\"mode\":\"%s\",\"threads\":%ld,\"runs\":%zu,"
               "\"total_runs\":%zu,\"secs\":%.3f,\"runs_per_s\":%.1f,\"p50_ms\":%.3f,"
               "\"p99_ms\":%.3f,\"cpu_ms_per_run\":%.4f,\"peak_rss_kib\":%ld}\n",
               kind, mode, threads, n, n + (size_t)warmup, wall, wall > 0 ? (double)n / wall : 0.0,
               pct(all, n, 50), pct(all, n, 99), n ? cpu * 1e3 / (double)n : 0.0, ru.ru_maxrss);
    }
    free(all);
    for (long i = 0; i < started; i++) {
        free(ws[i].lat_ms);
    }
    free(ws);
    free(tids);
    sst_compiled_graph_free(cg);
    sst_checkpointer_free(cp);
    return rc;
}
