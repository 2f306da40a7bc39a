/* SPDX-License-Identifier: MIT */
/*
 * One run of one reference workload, for bench/run.sh: prints one JSON line
 * with the figures of that run. Each run is a fresh process (as the
 * LangGraph.js scripts are), so peak RSS is the run's own. Like them, W1, W2
 * and W4 report the second (warm) run of the workload in the process.
 *
 *   bench_side W1 c|c-memory|lua N       loop of N supersteps
 *   bench_side W2 c|c-memory|lua K       K Send tasks
 *   bench_side W3 c-sqlite ITERS DIR     chat of ITERS iterations; bytes at 20/50/100 %
 *   bench_side W3 c-postgres ITERS URL   the same on PostgreSQL (bytes: pg_total_relation_size
 *                                        of the tables of the URL's schema; commits counted)
 *   bench_side W4 c-memory|c-sqlite T DIR  T threads, each a 3-node chain once
 *   bench_side W4 c-postgres T URL       the same on PostgreSQL
 *   bench_side W5 c REPS                 parallel sum (expect 18) and a plain-field conflict
 *   bench_side W6 c-sqlite N DIR         W1's loop of N supersteps three subgraphs deep, on
 *                                        SQLite, and flat W1 on SQLite in the same process
 *   bench_side dbbytes PATH              a SQLite file's size after a WAL checkpoint
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libpq-fe.h>

#include "superstep/lua.h"
#include "workloads.h"

#ifndef SST_SOURCE_DIR
#define SST_SOURCE_DIR "."
#endif

static const sst_compiled_graph *g_lua_graph;
static sst_lua_script *g_script;

/* The graph for @p impl: C, or the example script the CLI runs. */
static const sst_compiled_graph *graph_for(const char *impl, sst_compiled_graph *(*c)(void),
                                           const char *script, sst_compiled_graph **own) {
    *own = NULL;
    if (strcmp(impl, "lua") == 0) {
        char path[600];
        snprintf(path, sizeof path, "%s/examples/lua/%s", SST_SOURCE_DIR, script);
        sst_error err;
        if ((g_script = sst_lua_script_load(path, &err)) == NULL) {
            bw_die(path, &err);
        }
        g_lua_graph = sst_lua_script_graph(g_script);
        return g_lua_graph;
    }
    *own = c();
    return *own;
}

/* One invoke; with a memory saver when @p impl is c-memory. Returns seconds. */
static double invoke_once(const sst_compiled_graph *cg, const char *impl, const sst_value *input,
                          uint64_t limit, const char *check_key, int64_t want) {
    sst_error err;
    sst_checkpointer *cp = strcmp(impl, "c-memory") == 0 ? sst_memory_saver_new(&err) : NULL;
    sst_graph_thread *th = cp != NULL ? sst_graph_thread_open(cg, cp, "t", &err) : NULL;
    double dt = bw_invoke_timed(cg, th, input, limit, check_key, want);
    sst_graph_thread_free(th);
    sst_checkpointer_free(cp);
    return dt;
}

static void w1(const char *impl, long n) {
    sst_compiled_graph *own;
    const sst_compiled_graph *cg = graph_for(impl, bw_w1, "w1_loop.lua", &own);
    char in[64];
    snprintf(in, sizeof in, "{\"counter\":0,\"n\":%ld}", n);
    sst_value *input = bw_json(in);
    double cold = invoke_once(cg, impl, input, (uint64_t)n + 10, "counter", n);
    double warm = invoke_once(cg, impl, input, (uint64_t)n + 10, "counter", n);
    printf("{\"workload\":\"W1\",\"impl\":\"%s\",\"size\":%ld,\"cold_wall_ms\":%.3f,"
           "\"wall_ms\":%.3f,\"per_unit_us\":%.4f,\"unit\":\"superstep\",\"peak_rss_kib\":%ld}\n",
           impl, n, cold * 1e3, warm * 1e3, warm / (double)n * 1e6, bw_peak_rss_kib());
    sst_value_unref(input);
    sst_compiled_graph_free(own);
}

static void w2(const char *impl, long k) {
    sst_compiled_graph *own;
    const sst_compiled_graph *cg = graph_for(impl, bw_w2, "w2_fanout.lua", &own);
    sst_value *items = sst_array_empty();
    for (long i = 0; i < k; i++) {
        items = sst_array_push_take(items, sst_int_new(i, NULL), NULL);
    }
    sst_value *input = sst_object_set_take(sst_object_empty(), "items", items, NULL);
    double cold = invoke_once(cg, impl, input, 25, "total", k * (k - 1));
    double warm = invoke_once(cg, impl, input, 25, "total", k * (k - 1));
    printf("{\"workload\":\"W2\",\"impl\":\"%s\",\"size\":%ld,\"cold_wall_ms\":%.3f,"
           "\"wall_ms\":%.3f,\"per_unit_us\":%.4f,\"unit\":\"task\",\"peak_rss_kib\":%ld}\n",
           impl, k, cold * 1e3, warm * 1e3, warm / (double)k * 1e6, bw_peak_rss_kib());
    sst_value_unref(input);
    sst_compiled_graph_free(own);
}

/* One number the SQL @p sql gives on the database of @p url (-1 on failure). */
static long long pg_number(const char *url, const char *sql) {
    PGconn *c = PQconnectdb(url);
    long long n = -1;
    if (PQstatus(c) == CONNECTION_OK) {
        PGresult *r = PQexec(c, sql);
        if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1 && !PQgetisnull(r, 0, 0)) {
            n = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
        }
        PQclear(r);
    }
    PQfinish(c);
    return n;
}

/* The bytes of every table (with its indexes and TOAST) of the URL's schema. */
static long long pg_bytes(const char *url) {
    return pg_number(url, "SELECT sum(pg_total_relation_size(c.oid)) FROM pg_class c JOIN"
                          " pg_namespace n ON n.oid = c.relnamespace WHERE c.relkind = 'r' AND"
                          " n.nspname = current_schema()");
}

/* A checkpointer for @p impl: a SQLite file under @p where, or PostgreSQL at URL @p where. */
static sst_checkpointer *open_saver(const char *impl, const char *where, const char *name, char *db,
                                    size_t n, sst_error *err) {
    if (strcmp(impl, "c-postgres") == 0) {
        snprintf(db, n, "%s", where);
        return sst_postgres_saver_open(where, NULL, err);
    }
    snprintf(db, n, "%s/%s-%d.db", where, name, (int)getpid());
    bw_remove_db(db);
    return strcmp(impl, "c-memory") == 0 ? sst_memory_saver_new(err)
                                         : sst_sqlite_saver_open(db, NULL, err);
}

static long long saver_bytes(const char *impl, const char *db) {
    return strcmp(impl, "c-postgres") == 0 ? pg_bytes(db) : bw_db_bytes(db);
}

static void w3(const char *impl, long iters, const char *where) {
    char db[600];
    sst_error err;
    sst_compiled_graph *cg = bw_w3();
    sst_checkpointer *cp = open_saver(impl, where, "w3", db, sizeof db, &err);
    sst_graph_thread *th = cp != NULL ? sst_graph_thread_open(cg, cp, "w3", &err) : NULL;
    if (th == NULL) {
        bw_die("w3", &err);
    }
    sst_invoke_opts o;
    sst_invoke_opts_init(&o);
    o.recursion_limit = 10000000;
    long marks[3] = {iters / 5, iters / 2, iters};
    double total = 0;
    char growth[600] = "";
    size_t gl = 0;
    long long bytes = 0;
    bw_w3_set_target(0);
    for (int m = 0; m < 3; m++) {
        bw_w3_set_target(marks[m]);
        sst_value *input =
            bw_json(m == 0 ? "{\"messages\":\"Find the answer.\"}" : "{\"messages\":\"Go on.\"}");
        double t0 = bw_now_s();
        sst_graph_result *r = sst_graph_invoke(cg, th, input, &o, &err);
        total += bw_now_s() - t0;
        sst_value_unref(input);
        if (r == NULL || sst_graph_result_status(r) != SST_RUN_COMPLETED) {
            bw_die("w3", r != NULL ? sst_graph_result_error(r) : &err);
        }
        sst_graph_result_free(r);
        bytes = saver_bytes(impl, db); /* outside the timed region, as LangGraph.js's does */
        gl += (size_t)snprintf(growth + gl, sizeof growth - gl,
                               "%s{\"iters\":%ld,\"db_bytes\":%lld,\"cum_wall_ms\":%.3f}",
                               m ? "," : "", marks[m], bytes, total * 1e3);
    }
    printf("{\"workload\":\"W3\",\"impl\":\"%s\",\"size\":%ld,\"wall_ms\":%.3f,"
           "\"per_unit_us\":%.4f,\"unit\":\"superstep\",\"storage_bytes\":%lld,"
           "\"peak_rss_kib\":%ld,\"growth\":[%s]}\n",
           impl, iters, total * 1e3, total / (double)(2 * iters) * 1e6, bytes, bw_peak_rss_kib(),
           growth);
    sst_graph_thread_free(th);
    sst_checkpointer_free(cp);
    sst_compiled_graph_free(cg);
    if (strcmp(impl, "c-postgres") != 0) {
        bw_remove_db(db);
    }
}

/* @p threads runs of the chain, each on its own thread id; seconds. */
static double w4_runs(const sst_compiled_graph *cg, sst_checkpointer *cp, long from, long threads) {
    sst_error err;
    sst_invoke_opts o;
    sst_invoke_opts_init(&o);
    double t0 = bw_now_s();
    for (long i = from; i < from + threads; i++) {
        char id[32], in[48];
        snprintf(id, sizeof id, "t-%ld", i);
        snprintf(in, sizeof in, "{\"value\":%ld}", i);
        sst_graph_thread *th = sst_graph_thread_open(cg, cp, id, &err);
        sst_value *input = bw_json(in);
        sst_graph_result *r = th != NULL ? sst_graph_invoke(cg, th, input, &o, &err) : NULL;
        if (r == NULL ||
            sst_int_value(sst_object_get(sst_graph_result_state(r), "value")) != (i + 1) * 2 - 3) {
            bw_die("w4", r != NULL ? sst_graph_result_error(r) : &err);
        }
        sst_graph_result_free(r);
        sst_value_unref(input);
        sst_graph_thread_free(th);
    }
    return bw_now_s() - t0;
}

static void w4(const char *impl, long threads, const char *where) {
    char db[600];
    sst_error err;
    sst_compiled_graph *cg = bw_w4();
    sst_checkpointer *cp = open_saver(impl, where, "w4", db, sizeof db, &err);
    if (cp == NULL) {
        bw_die("w4", &err);
    }
    /* As LangGraph.js's script: a cold pass, then the measured warm pass on new thread ids. */
    double cold = w4_runs(cg, cp, 0, threads);
    double warm = w4_runs(cg, cp, threads, threads);
    printf("{\"workload\":\"W4\",\"impl\":\"%s\",\"size\":%ld,\"cold_wall_ms\":%.3f,"
           "\"wall_ms\":%.3f,\"per_unit_us\":%.4f,\"unit\":\"run\",\"runs_per_s\":%.1f,"
           "\"storage_bytes\":%lld,\"peak_rss_kib\":%ld}\n",
           impl, threads, cold * 1e3, warm * 1e3, warm / (double)threads * 1e6,
           (double)threads / warm, saver_bytes(impl, db), bw_peak_rss_kib());
    sst_checkpointer_free(cp);
    sst_compiled_graph_free(cg);
    if (strcmp(impl, "c-postgres") != 0) {
        bw_remove_db(db);
    }
}

static void json_string(const char *s) {
    putchar('"');
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') {
            putchar('\\');
        }
        putchar(*s == '\n' ? ' ' : *s);
    }
    putchar('"');
}

static void w5(long reps) {
    sst_error err;
    sst_engine_opts eo;
    sst_engine_opts_init(&eo);
    eo.workers = 2; /* the two nodes really run at once */
    sst_engine *e = sst_engine_new(&eo, &err);
    sst_compiled_graph *sum = bw_w5_sum(), *plain = bw_w5_plain();
    sst_invoke_opts o;
    sst_invoke_opts_init(&o);
    o.engine = e;
    sst_value *input = bw_json("{\"counter\":10}");
    long eighteen = 0;
    double t0 = bw_now_s();
    for (long i = 0; i < reps; i++) {
        sst_graph_result *r = sst_graph_invoke(sum, NULL, input, &o, &err);
        if (r != NULL &&
            sst_int_value(sst_object_get(sst_graph_result_state(r), "counter")) == 18) {
            eighteen++;
        }
        sst_graph_result_free(r);
    }
    double dt = bw_now_s() - t0;
    sst_value_unref(input);
    input = bw_json("{\"key\":\"init\"}");
    sst_graph_result *r = sst_graph_invoke(plain, NULL, input, &o, &err);
    const char *msg = r == NULL ? err.msg
                      : sst_graph_result_status(r) == SST_RUN_FAILED
                          ? sst_graph_result_error(r)->msg
                          : "(no error)";
    printf("{\"workload\":\"W5\",\"impl\":\"c\",\"size\":%ld,\"all_18\":%s,\"wall_ms\":%.3f,"
           "\"per_unit_us\":%.4f,\"unit\":\"invoke\",\"peak_rss_kib\":%ld,\"plain_conflict\":",
           reps, eighteen == reps ? "true" : "false", dt * 1e3, dt / (double)reps * 1e6,
           bw_peak_rss_kib());
    json_string(msg);
    printf("}\n");
    sst_graph_result_free(r);
    sst_value_unref(input);
    sst_compiled_graph_free(sum);
    sst_compiled_graph_free(plain);
    sst_engine_free(e);
}

/* W6's figures for one graph: medians of the warm runs, bytes of the last. */
typedef struct w6_figures {
    double us, cpu_us; /* per innermost superstep */
    bw_durable last;
} w6_figures;

/* One W6 figure set as JSON members (no braces). */
static void w6_json(const char *prefix, const w6_figures *f) {
    printf("\"%s_us_per_superstep\":%.4f,\"%s_cpu_us_per_superstep\":%.4f,\"%s_db_bytes\":%lld,"
           "\"%s_checkpoints\":%zu,\"%s_bytes_per_checkpoint\":%.1f",
           prefix, f->us, prefix, f->cpu_us, prefix, f->last.db_bytes, prefix, f->last.checkpoints,
           prefix, (double)f->last.db_bytes / (double)f->last.checkpoints);
}

/*
 * W6 and flat W1 on SQLite, alternating: a cold run of each, then W6_REPS
 * warm ones whose medians are reported (LangGraph.js's script reports its
 * one warm run; these runs are short, so one disk stall would skew one).
 */
#define W6_REPS 5
static void w6(long n, const char *dir) {
    char db[600];
    snprintf(db, sizeof db, "%s/w6-%d.db", dir, (int)getpid());
    bw_nested w;
    bw_w6(&w);
    sst_compiled_graph *flat = bw_w1();
    double us[2][W6_REPS], cpu[2][W6_REPS];
    w6_figures f[2]; /* flat, nested */
    for (int r = -1; r < W6_REPS; r++) {
        for (int k = 0; k < 2; k++) {
            f[k].last = bw_loop_sqlite(k == 0 ? flat : w.root, db, n);
            if (r >= 0) {
                us[k][r] = f[k].last.wall_s / (double)n * 1e6;
                cpu[k][r] = f[k].last.cpu_s / (double)n * 1e6;
            }
        }
    }
    for (int k = 0; k < 2; k++) {
        f[k].us = bw_median(us[k], W6_REPS);
        f[k].cpu_us = bw_median(cpu[k], W6_REPS);
    }
    const bw_durable *x = &f[1].last;
    printf("{\"workload\":\"W6\",\"impl\":\"c-sqlite\",\"size\":%ld,\"wall_ms\":%.3f,"
           "\"per_unit_us\":%.4f,\"unit\":\"superstep\",\"storage_bytes\":%lld,"
           "\"checkpoints\":%zu,\"checkpoints_by_depth\":[%zu,%zu,%zu],",
           n, f[1].us * (double)n / 1e3, f[1].us, x->db_bytes, x->checkpoints, x->per_depth[0],
           x->per_depth[1], x->per_depth[2]);
    w6_json("nested", &f[1]);
    putchar(',');
    w6_json("flat", &f[0]);
    printf(",\"nested_over_flat_time\":%.3f,\"nested_over_flat_cpu\":%.3f,"
           "\"nested_over_flat_bytes\":%.3f,\"peak_rss_kib\":%ld}\n",
           f[1].us / f[0].us, f[1].cpu_us / f[0].cpu_us,
           (double)x->db_bytes / (double)f[0].last.db_bytes, bw_peak_rss_kib());
    sst_compiled_graph_free(flat);
    bw_w6_free(&w);
}

int main(int argc, char **argv) {
    if (argc >= 3 && strcmp(argv[1], "dbbytes") == 0) {
        printf("%lld\n", bw_db_bytes(argv[2]));
        return 0;
    }
    if (argc < 4) {
        fprintf(stderr, "usage: bench_side W1|W2|W3|W4|W5|W6 IMPL SIZE [DIR]\n");
        return 2;
    }
    const char *w = argv[1], *impl = argv[2], *dir = argc > 4 ? argv[4] : "/tmp";
    long size = strtol(argv[3], NULL, 10);
    if (strcmp(w, "W1") == 0) {
        w1(impl, size);
    } else if (strcmp(w, "W2") == 0) {
        w2(impl, size);
    } else if (strcmp(w, "W3") == 0) {
        w3(impl, size, dir);
    } else if (strcmp(w, "W4") == 0) {
        w4(impl, size, dir);
    } else if (strcmp(w, "W5") == 0) {
        w5(size);
    } else if (strcmp(w, "W6") == 0) {
        w6(size, dir);
    } else {
        fprintf(stderr, "bench_side: unknown workload '%s'\n", w);
        return 2;
    }
    sst_lua_script_free(g_script);
    return 0;
}
