/* SPDX-License-Identifier: MIT */
/*
 * What node policies cost in W1's loop (issue 16): the loop of N supersteps
 * with its node "inc" plain, with a timeout (two clock reads per task), and
 * with a cache policy: a cold run (every task misses and stores its writes)
 * and a warm run (every task hits: the node does not run, its writes and
 * its route are replayed), on the in-memory and on the SQLite cache.
 *
 *   bench_policies [--quick] [--json] [--n N] [--reps R]
 *
 * Prints microseconds per superstep (median of R runs) and, for the warm
 * cache, the cost of a hit over running the node. Goal: a hit costs <= 2 us.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "workloads.h"

typedef enum { PLAIN, TIMEOUT, CACHED } variant;

/* W1 (bench/workloads.c) with a policy on "inc". */
static sst_compiled_graph *w1_with(variant v, sst_cache *cache) {
    sst_node_opts o;
    sst_node_opts_init(&o);
    if (v == TIMEOUT) {
        o.timeout.run_timeout_s = 60;
        o.timeout.idle_timeout_s = 60;
    } else if (v == CACHED) {
        o.cache_policy.enabled = true;
    }
    sst_compile_opts co;
    sst_compile_opts_init(&co);
    co.cache = cache;
    return bw_w1_with(&o, &co);
}

/* Microseconds per superstep of one run of @p cg over @p n supersteps. */
static double run_us(const sst_compiled_graph *cg, long n) {
    char json[64];
    snprintf(json, sizeof json, "{\"n\": %ld}", n);
    sst_value *in = bw_json(json);
    double s = bw_invoke_timed(cg, NULL, in, (uint64_t)n + 10, "counter", n);
    sst_value_unref(in);
    return s * 1e6 / (double)n;
}

typedef struct figures {
    double plain, timeout, mem_cold, mem_warm, sql_cold, sql_warm;
} figures;

/* One repetition of every variant; the caches start empty each time. */
static void one_rep(long n, const char *db, figures *f) {
    sst_error err;
    sst_compiled_graph *plain = w1_with(PLAIN, NULL), *timed = w1_with(TIMEOUT, NULL);
    f->plain = run_us(plain, n);
    f->timeout = run_us(timed, n);
    sst_compiled_graph_free(plain);
    sst_compiled_graph_free(timed);
    for (int k = 0; k < 2; k++) {
        bw_remove_db(db);
        sst_cache *c = k == 0 ? sst_memory_cache_new(&err) : sst_sqlite_cache_open(db, &err);
        if (c == NULL) {
            bw_die("cache", &err);
        }
        sst_compiled_graph *cg = w1_with(CACHED, c);
        double cold = run_us(cg, n), warm = run_us(cg, n);
        *(k == 0 ? &f->mem_cold : &f->sql_cold) = cold;
        *(k == 0 ? &f->mem_warm : &f->sql_warm) = warm;
        sst_compiled_graph_free(cg);
        sst_cache_free(c);
    }
    bw_remove_db(db);
}

int main(int argc, char **argv) {
    long n = 20000;
    int reps = 5;
    bool json = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0) {
            n = 2000;
            reps = 1;
        } else if (strcmp(argv[i], "--json") == 0) {
            json = true;
        } else if (strcmp(argv[i], "--n") == 0 && i + 1 < argc) {
            n = strtol(argv[++i], NULL, 10);
        } else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) {
            reps = (int)strtol(argv[++i], NULL, 10);
        } else {
            fprintf(stderr, "usage: bench_policies [--quick] [--json] [--n N] [--reps R]\n");
            return 2;
        }
    }
    reps = reps < 1 ? 1 : reps > BW_MAX_REPS ? BW_MAX_REPS : reps;
    char db[64];
    snprintf(db, sizeof db, "/tmp/sst-bench-policies-%ld.db", (long)getpid());
    double xs[6][BW_MAX_REPS];
    for (int r = 0; r < reps; r++) {
        figures f;
        one_rep(n, db, &f);
        double v[6] = {f.plain, f.timeout, f.mem_cold, f.mem_warm, f.sql_cold, f.sql_warm};
        for (int k = 0; k < 6; k++) {
            xs[k][r] = v[k];
        }
    }
    static const char *const names[] = {"plain",         "timeout",           "cache_mem_cold",
                                        "cache_mem_hit", "cache_sqlite_cold", "cache_sqlite_hit"};
    double med[6];
    for (int k = 0; k < 6; k++) {
        med[k] = bw_median(xs[k], reps);
    }
    if (json) {
        printf("{\"bench\":\"policies\",\"n\":%ld,\"reps\":%d", n, reps);
        for (int k = 0; k < 6; k++) {
            printf(",\"%s_us_per_step\":%.3f", names[k], med[k]);
        }
        printf("}\n");
        return 0;
    }
    printf("W1's loop, %ld supersteps, median of %d (us per superstep)\n", n, reps);
    for (int k = 0; k < 6; k++) {
        printf("  %-18s %8.3f us   (%+.3f us vs plain)\n", names[k], med[k], med[k] - med[0]);
    }
    printf("a cache hit in place of running the node: %+.3f us (memory), %+.3f us (SQLite)\n",
           med[3] - med[0], med[5] - med[0]);
    return 0;
}
