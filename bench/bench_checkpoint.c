/* SPDX-License-Identifier: MIT */
/*
 * Checkpoint benchmarks (issue 5). Prints figures; never fails on speed.
 *
 *  W3  the chat loop of ../shared/peers/langgraphjs/w3_chat.mjs: llm appends
 *      an assistant message with a tool call, tool answers it; one thread
 *      driven to 100, 250 and 500 iterations (1 000 supersteps) with the
 *      SQLite saver: time and database bytes at each mark, per-step time.
 *  get_state latency of a thread whose history holds 100 000 messages.
 *  W4  10 000 thread ids each running a 3-node chain once (SQLite and memory).
 *  W6  W1's loop three subgraphs deep (issue 15) at 500, 1 000 and 2 000
 *      innermost supersteps on SQLite, next to flat W1 on SQLite: time per
 *      superstep, bytes per checkpoint, and whether storage grows linearly.
 *
 * Usage: bench_checkpoint [--quick | --w4 | --w6]
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "superstep/superstep.h"
#include "workloads.h"

/* ---- W3 ---- */

static void w3(const char *dir, bool quick) {
    char db[300];
    snprintf(db, sizeof db, "%s/w3.db", dir);
    sst_error err;
    sst_compiled_graph *cg = bw_w3();
    sst_checkpointer *cp = sst_sqlite_saver_open(db, NULL, &err);
    if (cg == NULL || cp == NULL) {
        bw_die("w3 setup", &err);
    }
    sst_graph_thread *th = sst_graph_thread_open(cg, cp, "w3", &err);
    sst_invoke_opts o;
    sst_invoke_opts_init(&o);
    o.recursion_limit = 100000;
    const long marks[] = {100, 250, 500};
    bw_w3_set_target(0);
    double total = 0, first_ms_per_step = 0, last_ms_per_step = 0;
    printf("W3 chat loop, SQLite saver (LangGraph.js: 7.57 s and 171,851,776 bytes at 500)\n");
    printf("  %-12s %10s %14s %12s %16s\n", "iterations", "time ms", "db bytes", "bytes/step",
           "us/superstep");
    long done = 0;
    for (int m = 0; m < 3; m++) {
        long target = quick ? marks[m] / 5 : marks[m];
        bw_w3_set_target(target);
        double t0 = bw_now_s();
        sst_value *input = done == 0 ? sst_json_parse("{\"messages\":\"Find the answer.\"}", NULL)
                                     : sst_json_parse("{\"messages\":\"Go on.\"}", NULL);
        sst_graph_result *r = sst_graph_invoke(cg, th, input, &o, &err);
        sst_value_unref(input);
        double dt = bw_now_s() - t0;
        if (r == NULL || sst_graph_result_status(r) != SST_RUN_COMPLETED) {
            bw_die("w3 run", r != NULL ? sst_graph_result_error(r) : &err);
        }
        sst_graph_result_free(r);
        total += dt;
        long steps = (target - done) * 2;
        double us = dt / (double)steps * 1e6;
        if (m == 0) {
            first_ms_per_step = us;
        }
        last_ms_per_step = us;
        /* Storage as LangGraph.js's script counts it: the main file once the WAL is folded in
         * (outside the timed region). */
        long long bytes = bw_db_bytes(db);
        printf("  %-12ld %10.1f %14lld %12.0f %16.1f\n", target, total * 1e3, bytes,
               (double)bytes / (double)(target * 2), us);
        done = target;
    }
    printf("  total %.1f ms for %ld supersteps (goal <= 100 ms); per-step time first %.1f us, "
           "last %.1f us (flat is the goal)\n\n",
           total * 1e3, done * 2, first_ms_per_step, last_ms_per_step);
    sst_graph_thread_free(th);
    sst_checkpointer_free(cp);
    sst_compiled_graph_free(cg);
}

/* ---- get_state with 100 000 messages ---- */

static long g_batch;

static sst_code bulk(sst_node_ctx *ctx, void *ud) {
    (void)ud;
    sst_value *list = sst_array_empty();
    for (long i = 0; i < g_batch; i++) {
        char msg[160];
        snprintf(
            msg, sizeof msg,
            "{\"id\":\"b%llu-%ld\",\"role\":\"user\",\"content\":\"message %ld of the history\"}",
            (unsigned long long)sst_node_step(ctx), i, i);
        list = sst_array_push_take(list, sst_json_parse(msg, NULL), NULL);
    }
    return sst_node_update(ctx, "messages", list, NULL);
}

static void get_state_latency(const char *dir, bool quick) {
    char db[300];
    snprintf(db, sizeof db, "%s/big.db", dir);
    sst_error err;
    sst_graph *g = sst_graph_new(&err);
    if (sst_graph_add_field(g, "messages", sst_reducer_add_messages(), sst_array_empty(), &err) ||
        sst_graph_add_node(g, "bulk", bulk, NULL, NULL, &err) ||
        sst_graph_add_edge(g, SST_START, "bulk", &err)) {
        bw_die("get_state setup", &err);
    }
    sst_compiled_graph *cg = sst_graph_compile(g, NULL, &err);
    sst_checkpointer *cp = sst_sqlite_saver_open(db, NULL, &err);
    sst_graph_thread *th = sst_graph_thread_open(cg, cp, "big", &err);
    long total = quick ? 20000 : 100000;
    g_batch = total / 10;
    for (int i = 0; i < 10; i++) { /* ten invokes of 10 000 messages each */
        sst_value *in = sst_json_parse("{}", NULL);
        sst_graph_result *r = sst_graph_invoke(cg, th, in, NULL, &err);
        sst_value_unref(in);
        if (r == NULL) {
            bw_die("get_state build", &err);
        }
        sst_graph_result_free(r);
    }
    size_t n = 0;
    for (int warm = 0; warm < 2; warm++) {
        double best = 1e9, sum = 0;
        int reps = 5;
        for (int i = 0; i < reps; i++) {
            if (!warm) {
                /* Cold: a fresh saver each time, everything read and parsed from the file. */
                sst_graph_thread_free(th);
                sst_checkpointer_free(cp);
                cp = sst_sqlite_saver_open(db, NULL, &err);
                th = sst_graph_thread_open(cg, cp, "big", &err);
            }
            double t0 = bw_now_s();
            sst_value *st = sst_graph_get_state(th, NULL, &err);
            double dt = bw_now_s() - t0;
            if (st == NULL) {
                bw_die("get_state", &err);
            }
            n = sst_array_len(sst_object_get(sst_object_get(st, "values"), "messages"));
            sst_value_unref(st);
            best = dt < best ? dt : best;
            sum += dt;
        }
        printf("get_state, %zu messages in the history, %s: mean %.3f ms, best %.3f ms%s\n", n,
               warm ? "warm (state cached by the saver)" : "cold (a new process: from the file)",
               sum / reps * 1e3, best * 1e3, warm ? " (goal <= 5 ms)" : "");
    }
    printf("\n");
    sst_graph_thread_free(th);
    sst_checkpointer_free(cp);
    sst_compiled_graph_free(cg);
    sst_graph_free(g);
}

/* ---- W4 ---- */

static void w4(const char *dir, bool sqlite, long threads) {
    char db[300];
    snprintf(db, sizeof db, "%s/w4.db", dir);
    sst_error err;
    sst_compiled_graph *cg = bw_w4();
    sst_checkpointer *cp =
        sqlite ? sst_sqlite_saver_open(db, NULL, &err) : sst_memory_saver_new(&err);
    if (cg == NULL || cp == NULL) {
        bw_die("w4 setup", &err);
    }
    sst_engine *e = sst_engine_new(NULL, &err);
    sst_invoke_opts o;
    sst_invoke_opts_init(&o);
    o.engine = e;
    double t0 = bw_now_s();
    for (long i = 0; i < threads; i++) {
        char id[32], in[48];
        snprintf(id, sizeof id, "t-%ld", i);
        snprintf(in, sizeof in, "{\"value\":%ld}", i);
        sst_graph_thread *th = sst_graph_thread_open(cg, cp, id, &err);
        sst_value *input = sst_json_parse(in, NULL);
        sst_graph_result *r = sst_graph_invoke(cg, th, input, &o, &err);
        if (r == NULL ||
            sst_int_value(sst_object_get(sst_graph_result_state(r), "value")) != (i + 1) * 2 - 3) {
            bw_die("w4 run", r != NULL ? sst_graph_result_error(r) : &err);
        }
        sst_graph_result_free(r);
        sst_value_unref(input);
        sst_graph_thread_free(th);
    }
    double dt = bw_now_s() - t0;
    printf("W4 %ld threads x 3-node chain, %s saver: %.0f runs/s (%.1f us per run; goal >= %s; "
           "LangGraph.js 613/s with its memory saver)\n",
           threads, sqlite ? "SQLite" : "memory", (double)threads / dt, dt / (double)threads * 1e6,
           sqlite ? "10 000/s" : "100 000/s");
    sst_engine_free(e);
    sst_checkpointer_free(cp);
    sst_compiled_graph_free(cg);
}

/* ---- W6 ---- */

/* One size: @p reps runs of flat W1 and W6 alternating; prints one row, returns W6's bytes. */
static long long w6_row(const char *db, const sst_compiled_graph *flat, const bw_nested *w, long n,
                        int reps) {
    double wall[2][BW_MAX_REPS], cpu[2][BW_MAX_REPS];
    bw_durable last[2];
    for (int r = 0; r < reps; r++) {
        for (int k = 0; k < 2; k++) {
            last[k] = bw_loop_sqlite(k == 0 ? flat : w->root, db, n);
            wall[k][r] = last[k].wall_s / (double)n * 1e6;
            cpu[k][r] = last[k].cpu_s / (double)n * 1e6;
        }
    }
    double fw = bw_median(wall[0], reps), nw = bw_median(wall[1], reps);
    double fc = bw_median(cpu[0], reps), nc = bw_median(cpu[1], reps);
    double fb = (double)last[0].db_bytes / (double)last[0].checkpoints;
    double nb = (double)last[1].db_bytes / (double)last[1].checkpoints;
    printf("  %6ld %7.1f %7.1f %5.2fx %7.1f %7.1f %5.2fx %9lld %9lld %6.0f %6.0f %5.2fx  "
           "%zu/%zu/%zu\n",
           n, fw, nw, nw / fw, fc, nc, nc / fc, last[0].db_bytes, last[1].db_bytes, fb, nb, nb / fb,
           last[1].per_depth[0], last[1].per_depth[1], last[1].per_depth[2]);
    return last[1].db_bytes;
}

static void w6(const char *dir, bool quick) {
    char db[300];
    snprintf(db, sizeof db, "%s/w6.db", dir);
    bw_nested w;
    bw_w6(&w);
    sst_compiled_graph *flat = bw_w1();
    int reps = quick ? 1 : 7;
    printf(
        "W6 nested subgraphs (root -> mid -> inner = W1), SQLite saver, next to flat W1 on SQLite "
        "(medians of %d, alternating)\n",
        reps);
    printf("  %6s %15s %6s %15s %6s %19s %13s %6s  %s\n", "N", "us/step wall", "", "us/step cpu",
           "", "db bytes", "bytes/ckpt", "", "W6 checkpoints");
    printf("  %6s %7s %7s %6s %7s %7s %6s %9s %9s %6s %6s %6s  %s\n", "", "flat", "nested", "ratio",
           "flat", "nested", "ratio", "flat", "nested", "flat", "nested", "ratio",
           "root/mid/inner");
    long sizes[3] = {500, 1000, 2000};
    long long bytes[3];
    for (int i = 0; i < 3; i++) {
        sizes[i] /= quick ? 5 : 1;
        bytes[i] = w6_row(db, flat, &w, sizes[i], reps);
    }
    /* The file has a fixed part (schema, empty tables), so linear growth shows as a constant
     * cost per added superstep rather than as an exact doubling. */
    printf("  W6 storage: x%.2f from N=%ld to %ld, x%.2f from %ld to %ld; each added superstep "
           "%.0f then %.0f bytes (linear: the same)\n\n",
           (double)bytes[1] / (double)bytes[0], sizes[0], sizes[1],
           (double)bytes[2] / (double)bytes[1], sizes[1], sizes[2],
           (double)(bytes[1] - bytes[0]) / (double)(sizes[1] - sizes[0]),
           (double)(bytes[2] - bytes[1]) / (double)(sizes[2] - sizes[1]));
    sst_compiled_graph_free(flat);
    bw_w6_free(&w);
}

int main(int argc, char **argv) {
    bool quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
    bool only_w4 = argc > 1 && strcmp(argv[1], "--w4") == 0;
    bool only_w6 = argc > 1 && strcmp(argv[1], "--w6") == 0;
    char dir[] = "/tmp/sst-bench-XXXXXX";
    if (mkdtemp(dir) == NULL) {
        perror("mkdtemp");
        return 1;
    }
    printf("superstep %s checkpoint benchmark%s\n\n", sst_version(), quick ? " (quick)" : "");
    if (!only_w4 && !only_w6) {
        w3(dir, quick);
        get_state_latency(dir, quick);
    }
    if (!only_w6) {
        w4(dir, true, quick ? 1000 : 10000);
        w4(dir, false, quick ? 1000 : 10000);
    }
    if (!only_w4) {
        w6(dir, quick);
    }
    if (getenv("SST_BENCH_KEEP") != NULL) {
        printf("kept %s\n", dir);
        return 0;
    }
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : 1;
}
