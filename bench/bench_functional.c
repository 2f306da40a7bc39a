/* SPDX-License-Identifier: MIT */
/*
 * The functional API against the graph versions (issue 21). W1 and W2
 * (bench/workloads.h) run in this process as graphs and as entrypoints with
 * tasks (superstep/functional.h), interleaved, R times each:
 *
 *   W1 graph       `inc` adds 1 to a sum field and loops: N supersteps.
 *   W1 functional  an entrypoint calls the task `inc` (x + 1) N times in
 *                  sequence (x = inc(x).result()) and returns x: N tasks.
 *   W2 graph       `split` fans out K Send("work", {x}), `work` returns [2x]
 *                  into an append field, `join` sums: K tasks.
 *   W2 functional  an entrypoint submits K `work` tasks (2x) before joining
 *                  any, then joins them all and returns the sum: K tasks.
 *
 * each with no checkpointer and with a memory saver (a fresh saver and thread
 * per run), W2 with 1 worker (no engine: the calling thread) and 2 workers
 * (an engine with a pool of one thread plus the caller). One untimed run of
 * every mode comes first. Prints the median and p90 µs per unit (a superstep
 * of W1's graph, a task otherwise) and the functional/graph ratio of the
 * medians; goal: <= 2x. Never fails on speed.
 *
 *   bench_functional [--quick] [--reps R] [--n N] [--k K] [--only W1|W2]
 *                    [--saver none|memory] [--api graph|functional] [--json]
 *
 * --quick: 5 repetitions. --saver and --api keep only those modes (for perf;
 * with --api the ratios are not printed). --json: one JSON line per mode and one per pair
 * instead of the table (bench/functional.sh reads them).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "superstep/functional.h"
#include "workloads.h"

#define MAX_REPS 1000

static long g_n = 1000, g_k = 1000;

/* ---- the functional versions ---------------------------------------------------------------- */

/* Turns a failed join into the calling function's failure (an interrupt passes through). */
static sst_code joined_fail(sst_node_ctx *ctx, const sst_error *err) {
    if (err->code == SST_EINTERRUPT) {
        return SST_EINTERRUPT;
    }
    return sst_node_fail(ctx, err->code != SST_OK ? err->code : SST_EINVAL, "%s", err->msg);
}

static sst_code f_inc(sst_node_ctx *ctx, void *ud) {
    (void)ud;
    sst_error err;
    sst_value *x = sst_int_new(sst_int_value(sst_node_input(ctx)) + 1, &err);
    return x != NULL ? sst_node_return(ctx, x, &err) : err.code;
}

/* W1: input n; x = inc(x) n times from 0; returns x. */
static sst_code f_w1(sst_node_ctx *ctx, void *ud) {
    (void)ud;
    sst_error err;
    int64_t n = sst_int_value(sst_entrypoint_input(ctx));
    sst_task_spec spec;
    sst_task_spec_init(&spec, "inc", f_inc, NULL);
    sst_value *x = sst_int_new(0, &err);
    for (int64_t i = 0; i < n && x != NULL; i++) {
        sst_future *f = sst_node_submit(ctx, &spec, x, &err);
        const sst_value *r = f != NULL ? sst_future_result(f, &err) : NULL;
        if (r == NULL) {
            return joined_fail(ctx, &err);
        }
        x = sst_value_ref(r);
    }
    return x != NULL ? sst_node_return(ctx, x, &err) : SST_ENOMEM;
}

static sst_code f_work(sst_node_ctx *ctx, void *ud) {
    (void)ud;
    sst_error err;
    sst_value *y = sst_int_new(2 * sst_int_value(sst_node_input(ctx)), &err);
    return y != NULL ? sst_node_return(ctx, y, &err) : err.code;
}

/* W2: input a list of k integers; submits work(x) for each, then joins all and sums. */
static sst_code f_w2(sst_node_ctx *ctx, void *ud) {
    (void)ud;
    sst_error err;
    const sst_value *items = sst_entrypoint_input(ctx);
    size_t k = sst_array_len(items);
    sst_future **fs = malloc((k > 0 ? k : 1) * sizeof *fs);
    if (fs == NULL) {
        return SST_ENOMEM;
    }
    sst_task_spec spec;
    sst_task_spec_init(&spec, "work", f_work, NULL);
    for (size_t i = 0; i < k; i++) {
        if ((fs[i] = sst_node_submit(ctx, &spec, sst_value_ref(sst_array_get(items, i)), &err)) ==
            NULL) {
            free(fs);
            return joined_fail(ctx, &err);
        }
    }
    int64_t total = 0;
    for (size_t i = 0; i < k; i++) {
        const sst_value *r = sst_future_result(fs[i], &err);
        if (r == NULL) {
            free(fs);
            return joined_fail(ctx, &err);
        }
        total += sst_int_value(r);
    }
    free(fs);
    sst_value *v = sst_int_new(total, &err);
    return v != NULL ? sst_node_return(ctx, v, &err) : err.code;
}

static sst_compiled_graph *entrypoint_graph(const char *name, sst_node_fn fn) {
    sst_error err;
    sst_graph *g = sst_graph_new(&err);
    if (g == NULL || sst_graph_set_entrypoint(g, name, fn, NULL, NULL, &err) != SST_OK) {
        bw_die(name, &err);
    }
    sst_compiled_graph *cg = sst_graph_compile(g, NULL, &err);
    if (cg == NULL) {
        bw_die(name, &err);
    }
    sst_graph_free(g);
    return cg;
}

/* ---- modes ---------------------------------------------------------------------------------- */

typedef struct mode {
    const char *workload; /* "W1", "W2" */
    bool functional;
    bool memory;      /* a memory saver */
    unsigned workers; /* 1: no engine; 2: the 2-worker engine */
    const sst_compiled_graph *cg;
    const sst_value *input;
    uint64_t limit;
    const char *key; /* the result's integer field */
    int64_t want;
    long units;
    double secs[MAX_REPS];
    int runs;
    size_t checkpoints; /* per run, memory saver */
} mode;

static bool count_one(const sst_checkpoint *rec, void *ud) {
    (void)rec;
    ++*(size_t *)ud;
    return true;
}

/* One invoke of @p m (a fresh saver and thread with a memory saver); seconds. */
static double run_mode(mode *m, sst_engine *e2, bool count) {
    sst_error err;
    sst_checkpointer *cp = NULL;
    sst_graph_thread *th = NULL;
    if (m->memory) {
        cp = sst_memory_saver_new(&err);
        th = cp != NULL ? sst_graph_thread_open(m->cg, cp, "t", &err) : NULL;
        if (th == NULL) {
            bw_die("memory saver", &err);
        }
    }
    sst_invoke_opts o;
    sst_invoke_opts_init(&o);
    o.recursion_limit = m->limit;
    o.engine = m->workers > 1 ? e2 : NULL;
    double t0 = bw_now_s();
    sst_graph_result *r = sst_graph_invoke(m->cg, th, m->input, &o, &err);
    double dt = bw_now_s() - t0;
    if (r == NULL || sst_graph_result_status(r) != SST_RUN_COMPLETED) {
        bw_die(m->workload, r != NULL ? sst_graph_result_error(r) : &err);
    }
    const sst_value *got = sst_object_get(sst_graph_result_state(r), m->key);
    if (got == NULL || sst_int_value(got) != m->want) {
        fprintf(stderr, "bench: %s %s: %s is not %lld\n", m->workload,
                m->functional ? "functional" : "graph", m->key, (long long)m->want);
        exit(1);
    }
    sst_graph_result_free(r);
    if (count && cp != NULL) {
        sst_checkpoint_query q = {.thread_id = "t"};
        m->checkpoints = 0;
        if (sst_checkpointer_list(cp, &q, count_one, &m->checkpoints, &err) != SST_OK) {
            bw_die("list", &err);
        }
    }
    sst_graph_thread_free(th);
    sst_checkpointer_free(cp);
    return dt;
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The @p q quantile (0..1, nearest rank; 0.5 the median) of @p m's runs, in µs per unit. */
static double quantile_us(const mode *m, double q) {
    double s[MAX_REPS];
    memcpy(s, m->secs, (size_t)m->runs * sizeof *s);
    qsort(s, (size_t)m->runs, sizeof *s, by_value);
    double v;
    if (q == 0.5) {
        int n = m->runs;
        v = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
    } else {
        int i = (int)(q * (double)m->runs + 0.999999) - 1;
        v = s[i < 0 ? 0 : (i >= m->runs ? m->runs - 1 : i)];
    }
    return v / (double)m->units * 1e6;
}

static const char *unit_of(const mode *m) {
    return strcmp(m->workload, "W1") == 0 && !m->functional ? "superstep" : "task";
}

int main(int argc, char **argv) {
    int reps = 31;
    bool json = false;
    const char *only = NULL, *only_saver = NULL, *only_api = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0) {
            reps = 5;
        } else if (strcmp(argv[i], "--json") == 0) {
            json = true;
        } else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) {
            reps = (int)strtol(argv[++i], NULL, 10);
        } else if (strcmp(argv[i], "--n") == 0 && i + 1 < argc) {
            g_n = strtol(argv[++i], NULL, 10);
        } else if (strcmp(argv[i], "--k") == 0 && i + 1 < argc) {
            g_k = strtol(argv[++i], NULL, 10);
        } else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc) {
            only = argv[++i];
        } else if (strcmp(argv[i], "--saver") == 0 && i + 1 < argc) {
            only_saver = argv[++i];
        } else if (strcmp(argv[i], "--api") == 0 && i + 1 < argc) {
            only_api = argv[++i];
        } else {
            fprintf(stderr,
                    "usage: bench_functional [--quick] [--reps R] [--n N] [--k K] "
                    "[--only W1|W2] [--saver none|memory] [--api graph|functional] [--json]\n");
            return 2;
        }
    }
    if (reps < 1 || reps > MAX_REPS || g_n < 1 || g_k < 1) {
        fprintf(stderr, "bench_functional: --reps 1..%d, --n and --k >= 1\n", MAX_REPS);
        return 2;
    }
    bool do_w1 = only == NULL || strcmp(only, "W1") == 0;
    bool do_w2 = only == NULL || strcmp(only, "W2") == 0;

    sst_error err;
    sst_engine_opts eo;
    sst_engine_opts_init(&eo);
    eo.workers = 2;
    sst_engine *e2 = sst_engine_new(&eo, &err);
    if (e2 == NULL) {
        bw_die("engine", &err);
    }

    sst_compiled_graph *w1g = bw_w1(), *w2g = bw_w2();
    sst_compiled_graph *w1f = entrypoint_graph("w1", f_w1);
    sst_compiled_graph *w2f = entrypoint_graph("w2", f_w2);

    char text[64];
    snprintf(text, sizeof text, "{\"counter\":0,\"n\":%ld}", g_n);
    sst_value *w1g_in = bw_json(text);
    sst_value *w1f_in =
        sst_object_set_take(sst_object_empty(), SST_ROOT, sst_int_new(g_n, NULL), NULL);
    sst_value *items = sst_array_empty();
    for (long i = 0; i < g_k; i++) {
        items = sst_array_push_take(items, sst_int_new(i, NULL), NULL);
    }
    sst_value *w2g_in =
        sst_object_set_take(sst_object_empty(), "items", sst_value_ref(items), NULL);
    sst_value *w2f_in = sst_object_set_take(sst_object_empty(), SST_ROOT, items, NULL);
    if (w1f_in == NULL || w2g_in == NULL || w2f_in == NULL) {
        bw_die("inputs", NULL);
    }

    static mode modes[16];
    int nm = 0;
    int64_t w2sum = (int64_t)g_k * (g_k - 1);
    for (int memory = 0; memory <= 1; memory++) {
        if (do_w1) {
            for (int f = 0; f <= 1; f++) {
                modes[nm++] = (mode){.workload = "W1",
                                     .functional = f,
                                     .memory = memory,
                                     .workers = 1,
                                     .cg = f ? w1f : w1g,
                                     .input = f ? w1f_in : w1g_in,
                                     .limit = f ? 25 : (uint64_t)g_n + 10,
                                     .key = f ? SST_ROOT : "counter",
                                     .want = g_n,
                                     .units = g_n};
            }
        }
        if (do_w2) {
            for (unsigned w = 1; w <= 2; w++) {
                for (int f = 0; f <= 1; f++) {
                    modes[nm++] = (mode){.workload = "W2",
                                         .functional = f,
                                         .memory = memory,
                                         .workers = w,
                                         .cg = f ? w2f : w2g,
                                         .input = f ? w2f_in : w2g_in,
                                         .limit = 25,
                                         .key = f ? SST_ROOT : "total",
                                         .want = w2sum,
                                         .units = g_k};
                }
            }
        }
    }

    if (only_saver != NULL || only_api != NULL) { /* profiling: keep the modes asked for */
        int kept = 0;
        for (int i = 0; i < nm; i++) {
            bool saver_ok =
                only_saver == NULL || strcmp(only_saver, modes[i].memory ? "memory" : "none") == 0;
            bool api_ok = only_api == NULL ||
                          strcmp(only_api, modes[i].functional ? "functional" : "graph") == 0;
            if (saver_ok && api_ok) {
                modes[kept++] = modes[i];
            }
        }
        nm = kept;
        if (only_api != NULL) {
            for (int i = 0; i < nm; i++) {
                run_mode(&modes[i], e2, true);
                for (int r = 0; r < reps; r++) {
                    modes[i].secs[modes[i].runs++] = run_mode(&modes[i], e2, false);
                }
                printf("%s %s %s workers %u: %.3f µs per %s (median of %d)\n", modes[i].workload,
                       only_api, modes[i].memory ? "memory" : "none", modes[i].workers,
                       quantile_us(&modes[i], 0.5), unit_of(&modes[i]), reps);
            }
            return 0;
        }
    }
    for (int i = 0; i < nm; i++) { /* warm-up, and the checkpoints a run stores */
        run_mode(&modes[i], e2, true);
    }
    for (int r = 0; r < reps; r++) {
        for (int i = 0; i < nm; i++) {
            modes[i].secs[modes[i].runs++] = run_mode(&modes[i], e2, false);
        }
    }

    if (!json) {
        printf("functional API vs graph, one process, interleaved; median (p90) of %d runs; "
               "W1 n=%ld, W2 k=%ld\n\n",
               reps, g_n, g_k);
        printf("%-4s %-7s %-7s  %-24s  %-24s  %-10s  %s\n", "", "saver", "workers", "graph µs/unit",
               "functional µs/task", "func/graph", "checkpoints/run g|f");
    }
    double worst = 0;
    for (int i = 0; i < nm; i += 2) {
        mode *g = &modes[i], *f = &modes[i + 1];
        double gm = quantile_us(g, 0.5), fm = quantile_us(f, 0.5);
        double ratio = fm / gm;
        worst = ratio > worst ? ratio : worst;
        if (json) {
            for (int j = 0; j < 2; j++) {
                mode *m = &modes[i + j];
                printf("{\"impl\":\"superstep-c\",\"api\":\"%s\",\"workload\":\"%s\","
                       "\"saver\":\"%s\",\"workers\":%u,\"size\":%ld,\"reps\":%d,"
                       "\"median_wall_ms\":%.4f,\"us_per_unit\":%.4f,\"p90_us_per_unit\":%.4f,"
                       "\"unit\":\"%s\",\"checkpoints_per_run\":%zu}\n",
                       m->functional ? "functional" : "graph", m->workload,
                       m->memory ? "memory" : "none", m->workers, m->units, m->runs,
                       quantile_us(m, 0.5) * (double)m->units / 1e3, quantile_us(m, 0.5),
                       quantile_us(m, 0.9), unit_of(m), m->checkpoints);
            }
            printf("{\"pair\":\"%s\",\"saver\":\"%s\",\"workers\":%u,\"functional_over_graph\":"
                   "%.4f}\n",
                   g->workload, g->memory ? "memory" : "none", g->workers, ratio);
        } else {
            char gs[64], fs[64];
            snprintf(gs, sizeof gs, "%.3f (%.3f)/%s", gm, quantile_us(g, 0.9),
                     strcmp(unit_of(g), "task") == 0 ? "task" : "step");
            snprintf(fs, sizeof fs, "%.3f (%.3f)", fm, quantile_us(f, 0.9));
            printf("%-4s %-7s %-7u  %-24s  %-24s  %-10.2f  %zu|%zu\n", g->workload,
                   g->memory ? "memory" : "none", g->workers, gs, fs, ratio, g->checkpoints,
                   f->checkpoints);
        }
    }
    if (!json) {
        printf("\nworst functional/graph ratio: %.2fx (goal <= 2x)\n", worst);
    }

    sst_value_unref(w1g_in);
    sst_value_unref(w1f_in);
    sst_value_unref(w2g_in);
    sst_value_unref(w2f_in);
    sst_compiled_graph_free(w1g);
    sst_compiled_graph_free(w2g);
    sst_compiled_graph_free(w1f);
    sst_compiled_graph_free(w2f);
    sst_engine_free(e2);
    return 0;
}
