/* SPDX-License-Identifier: MIT */
/*
 * Lua against C: W1 and W2 built from the Lua scripts in examples/lua and
 * the same graphs written in C, run in one process, one after the other
 * (no checkpointer, one worker), plus the cost of a Lua node that reads one
 * field of a state that also holds a 100 000-message history.
 *
 * Usage: bench_lua [--quick]
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "superstep/lua.h"
#include "superstep/superstep.h"
#include "workloads.h"

#ifndef SST_BINARY_DIR
#define SST_BINARY_DIR "."
#endif
#ifndef SST_SOURCE_DIR
#define SST_SOURCE_DIR "."
#endif

/* Best of @p reps invokes of @p cg on @p input; checks field @p key == @p want. */
static double best_run(const sst_compiled_graph *cg, const sst_value *input, uint64_t limit,
                       const char *key, int64_t want, int reps) {
    double best = 1e9;
    for (int r = 0; r < reps; r++) {
        double dt = bw_invoke_timed(cg, NULL, input, limit, key, want);
        best = dt < best ? dt : best;
    }
    return best;
}

static sst_lua_script *load(const char *name) {
    char path[512];
    snprintf(path, sizeof path, "%s/examples/lua/%s", SST_SOURCE_DIR, name);
    sst_error err;
    sst_lua_script *s = sst_lua_script_load(path, &err);
    if (s == NULL) {
        bw_die(path, &err);
    }
    return s;
}

/* W1 in C on a durable SQLite thread: the same work as the CLI run below. */
static double c_w1_durable(const sst_compiled_graph *cg, const sst_value *input, long n,
                           const char *db) {
    sst_error err;
    bw_remove_db(db);
    sst_checkpointer *cp = sst_sqlite_saver_open(db, NULL, &err);
    sst_graph_thread *t = cp != NULL ? sst_graph_thread_open(cg, cp, "c", &err) : NULL;
    if (t == NULL) {
        bw_die("c w1 durable", &err);
    }
    sst_invoke_opts o;
    sst_invoke_opts_init(&o);
    o.recursion_limit = (uint64_t)n + 10;
    double t0 = bw_now_s();
    sst_graph_result *r = sst_graph_invoke(cg, t, input, &o, &err);
    double dt = bw_now_s() - t0;
    if (r == NULL || sst_graph_result_status(r) != SST_RUN_COMPLETED) {
        bw_die("c w1 durable", r != NULL ? sst_graph_result_error(r) : &err);
    }
    sst_graph_result_free(r);
    sst_graph_thread_free(t);
    sst_checkpointer_free(cp);
    return dt;
}

/* The same W1 through the superstep tool: a whole process, wall time. */
static double cli_w1(long n, const char *db) {
    char cmd[1400];
    remove(db);
    snprintf(cmd, sizeof cmd,
             "'%s/superstep' run '%s/examples/lua/w1_loop.lua' --db '%s' --thread cli "
             "--input '{\"counter\":0,\"n\":%ld}' --json > /dev/null",
             SST_BINARY_DIR, SST_SOURCE_DIR, db, n);
    double t0 = bw_now_s();
    int rc = system(cmd);
    double dt = bw_now_s() - t0;
    if (rc != 0) {
        fprintf(stderr, "bench_lua: '%s' failed (%d)\n", cmd, rc);
        exit(1);
    }
    return dt;
}

/* A state holding @p n messages plus counter/n fields, for the lazy-read check. */
static sst_value *history_input(long n, long steps) {
    sst_value *msgs = sst_array_empty();
    for (long i = 0; i < n; i++) {
        char text[96];
        snprintf(text, sizeof text,
                 "{\"id\":\"m%ld\",\"role\":\"user\",\"content\":\"message %ld\"}", i, i);
        msgs = sst_array_push_take(msgs, bw_json(text), NULL);
    }
    sst_value *in = sst_object_set_take(sst_object_empty(), "messages", msgs, NULL);
    in = sst_object_set_take(in, "counter", sst_int_new(0, NULL), NULL);
    return sst_object_set_take(in, "n", sst_int_new(steps, NULL), NULL);
}

int main(int argc, char **argv) {
    bool quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
    long n1 = quick ? 2000 : 20000, k2 = quick ? 1000 : 10000;
    int reps = quick ? 2 : 5;
    printf("superstep %s Lua benchmark (LangGraph.js: W1 817 us/superstep, W2 718 us/Send)\n\n",
           sst_version());

    char in1[64];
    snprintf(in1, sizeof in1, "{\"counter\":0,\"n\":%ld}", n1);
    sst_value *input1 = bw_json(in1);
    sst_compiled_graph *cw1 = bw_w1();
    sst_lua_script *lw1 = load("w1_loop.lua");
    double c1 = best_run(cw1, input1, (uint64_t)n1 + 10, "counter", n1, reps);
    double l1 = best_run(sst_lua_script_graph(lw1), input1, (uint64_t)n1 + 10, "counter", n1, reps);
    printf("W1 %6ld supersteps   C %8.2f us/superstep   Lua %8.2f us/superstep   Lua/C %.2fx   "
           "LangGraph.js/Lua %.0fx\n",
           n1, c1 / (double)n1 * 1e6, l1 / (double)n1 * 1e6, l1 / c1,
           817.0 / (l1 / (double)n1 * 1e6));

    sst_value *items = sst_array_empty();
    for (long i = 0; i < k2; i++) {
        items = sst_array_push_take(items, sst_int_new(i, NULL), NULL);
    }
    sst_value *input2 = sst_object_set_take(sst_object_empty(), "items", items, NULL);
    sst_compiled_graph *cw2 = bw_w2();
    sst_lua_script *lw2 = load("w2_fanout.lua");
    double c2 = best_run(cw2, input2, 25, "total", k2 * (k2 - 1), reps);
    double l2 = best_run(sst_lua_script_graph(lw2), input2, 25, "total", k2 * (k2 - 1), reps);
    printf("W2 %6ld Send tasks   C %8.2f us/task        Lua %8.2f us/task        Lua/C %.2fx   "
           "LangGraph.js/Lua %.0fx\n",
           k2, c2 / (double)k2 * 1e6, l2 / (double)k2 * 1e6, l2 / c2,
           718.0 / (l2 / (double)k2 * 1e6));

    /* Durable W1: C on a SQLite thread against the superstep tool running the Lua script. */
    long nd = quick ? 500 : 2000;
    char ind[64], db[64];
    snprintf(ind, sizeof ind, "{\"counter\":0,\"n\":%ld}", nd);
    snprintf(db, sizeof db, "/tmp/sst-bench-lua-%d.db", (int)getpid());
    sst_value *input_d = bw_json(ind);
    double cd = 1e9, ld = 1e9;
    for (int r = 0; r < reps; r++) {
        double a = c_w1_durable(cw1, input_d, nd, db), b = cli_w1(nd, db);
        cd = a < cd ? a : cd;
        ld = b < ld ? b : ld;
    }
    char side[80];
    snprintf(side, sizeof side, "%s-wal", db);
    remove(side);
    snprintf(side, sizeof side, "%s-shm", db);
    remove(side);
    remove(db);
    sst_value_unref(input_d);
    printf("W1 %6ld supersteps, durable (SQLite): C %.2f us/superstep; superstep run (a whole "
           "process) %.2f us/superstep; CLI/C %.2fx\n",
           nd, cd / (double)nd * 1e6, ld / (double)nd * 1e6, ld / cd);

    /* Lazy reads: W1's Lua node with a 100 000-message history in the state. */
    long steps = quick ? 500 : 2000;
    sst_value *small = history_input(0, steps);
    sst_value *big = history_input(100000, steps);
    double ts =
        best_run(sst_lua_script_graph(lw1), small, (uint64_t)steps + 10, "counter", steps, reps);
    double tb =
        best_run(sst_lua_script_graph(lw1), big, (uint64_t)steps + 10, "counter", steps, reps);
    printf("\nLua node reading one field: %.2f us/superstep with an empty history, %.2f us with "
           "100000 messages in the state (%.2fx)\n",
           ts / (double)steps * 1e6, tb / (double)steps * 1e6, tb / ts);
    printf("\ngoals: Lua within 3x of C (W1 %.2fx, W2 %.2fx); >= 100x faster than LangGraph.js "
           "(W1 %.0fx, W2 %.0fx)\n",
           l1 / c1, l2 / c2, 817.0 / (l1 / (double)n1 * 1e6), 718.0 / (l2 / (double)k2 * 1e6));

    sst_value_unref(small);
    sst_value_unref(big);
    sst_value_unref(input1);
    sst_value_unref(input2);
    sst_compiled_graph_free(cw1);
    sst_compiled_graph_free(cw2);
    sst_lua_script_free(lw1);
    sst_lua_script_free(lw2);
    return 0;
}
