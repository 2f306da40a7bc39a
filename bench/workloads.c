/* SPDX-License-Identifier: MIT */
/* The reference workloads as C graphs; see workloads.h. */
#define _GNU_SOURCE
#include "workloads.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include <sqlite3.h>

double bw_now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double bw_cpu_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double bw_median(const double *xs, int n) {
    double s[BW_MAX_REPS];
    n = n < BW_MAX_REPS ? n : BW_MAX_REPS;
    memcpy(s, xs, (size_t)n * sizeof *s);
    qsort(s, (size_t)n, sizeof *s, by_value);
    return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

long bw_peak_rss_kib(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

void bw_die(const char *what, const sst_error *err) {
    fprintf(stderr, "bench: %s: %s\n", what, err != NULL ? err->msg : "failed");
    exit(1);
}

sst_value *bw_json(const char *text) {
    sst_error err;
    sst_value *v = sst_json_parse(text, &err);
    if (v == NULL) {
        bw_die("json", &err);
    }
    return v;
}

long long bw_db_bytes(const char *db) {
    sqlite3 *h;
    if (sqlite3_open(db, &h) == SQLITE_OK) {
        sqlite3_exec(h, "PRAGMA wal_checkpoint(TRUNCATE)", NULL, NULL, NULL);
    }
    sqlite3_close(h);
    FILE *f = fopen(db, "rb");
    long long n = 0;
    if (f != NULL) {
        fseek(f, 0, SEEK_END);
        n = ftell(f);
        fclose(f);
    }
    return n;
}

void bw_remove_db(const char *db) {
    char side[600];
    remove(db);
    snprintf(side, sizeof side, "%s-wal", db);
    remove(side);
    snprintf(side, sizeof side, "%s-shm", db);
    remove(side);
}

double bw_invoke_timed(const sst_compiled_graph *cg, sst_graph_thread *th, const sst_value *input,
                       uint64_t recursion_limit, const char *key, int64_t want) {
    sst_error err;
    sst_invoke_opts o;
    sst_invoke_opts_init(&o);
    o.recursion_limit = recursion_limit;
    double t0 = bw_now_s();
    sst_graph_result *r = sst_graph_invoke(cg, th, input, &o, &err);
    double dt = bw_now_s() - t0;
    if (r == NULL || sst_graph_result_status(r) != SST_RUN_COMPLETED) {
        bw_die("invoke", r != NULL ? sst_graph_result_error(r) : &err);
    }
    const sst_value *got = sst_object_get(sst_graph_result_state(r), key);
    if (got == NULL || sst_int_value(got) != want) {
        fprintf(stderr, "bench: %s is not %lld\n", key, (long long)want);
        exit(1);
    }
    sst_graph_result_free(r);
    return dt;
}

static sst_compiled_graph *compile(sst_graph *g, const char *what) {
    sst_error err;
    sst_compiled_graph *cg = sst_graph_compile(g, NULL, &err);
    if (cg == NULL) {
        bw_die(what, &err);
    }
    sst_graph_free(g);
    return cg;
}

/* ---- W1 ---- */

static sst_code w1_inc(sst_node_ctx *ctx, void *ud) {
    (void)ud;
    return sst_node_update(ctx, "counter", sst_int_new(1, NULL), NULL);
}

static sst_value *w1_loop(const sst_value *state, void *ud, sst_error *err) {
    (void)ud;
    bool done = sst_int_value(sst_object_get(state, "counter")) >=
                sst_int_value(sst_object_get(state, "n"));
    return sst_string_new(done ? SST_END : "inc", err);
}

sst_compiled_graph *bw_w1_with(const sst_node_opts *inc_opts, const sst_compile_opts *co) {
    sst_error err;
    sst_graph *g = sst_graph_new(&err);
    if (sst_graph_add_field(g, "counter", sst_reducer_sum(), sst_int_new(0, NULL), &err) ||
        sst_graph_add_field(g, "n", sst_reducer_replace(), NULL, &err) ||
        sst_graph_add_node(g, "inc", w1_inc, NULL, inc_opts, &err) ||
        sst_graph_add_edge(g, SST_START, "inc", &err) ||
        sst_graph_add_conditional_edges(g, "inc", w1_loop, NULL, NULL, &err)) {
        bw_die("w1", &err);
    }
    sst_compiled_graph *cg = sst_graph_compile(g, co, &err);
    if (cg == NULL) {
        bw_die("w1", &err);
    }
    sst_graph_free(g);
    return cg;
}

sst_compiled_graph *bw_w1(void) {
    return bw_w1_with(NULL, NULL);
}

/* ---- W2 ---- */

static sst_code w2_split(sst_node_ctx *ctx, void *ud) {
    (void)ctx, (void)ud;
    return SST_OK;
}

static sst_code w2_work(sst_node_ctx *ctx, void *ud) {
    (void)ud;
    int64_t x = sst_int_value(sst_object_get(sst_node_input(ctx), "x"));
    sst_value *list = sst_array_push_take(sst_array_empty(), sst_int_new(2 * x, NULL), NULL);
    return sst_node_update(ctx, "results", list, NULL);
}

static sst_code w2_join(sst_node_ctx *ctx, void *ud) {
    (void)ud;
    const sst_value *r = sst_object_get(sst_node_state(ctx), "results");
    int64_t total = 0;
    for (size_t i = 0; i < sst_array_len(r); i++) {
        total += sst_int_value(sst_array_get(r, i));
    }
    return sst_node_update(ctx, "total", sst_int_new(total, NULL), NULL);
}

static sst_value *w2_fan(const sst_value *state, void *ud, sst_error *err) {
    (void)ud;
    const sst_value *items = sst_object_get(state, "items");
    sst_value *sends = sst_array_empty();
    for (size_t i = 0; i < sst_array_len(items) && sends != NULL; i++) {
        sst_value *arg = sst_object_set_take(sst_object_empty(), "x",
                                             sst_value_ref(sst_array_get(items, i)), err);
        sends = sst_array_push_take(sends, sst_send_new("work", arg, err), err);
    }
    return sends;
}

sst_compiled_graph *bw_w2(void) {
    sst_error err;
    sst_graph *g = sst_graph_new(&err);
    if (sst_graph_add_field(g, "items", sst_reducer_replace(), NULL, &err) ||
        sst_graph_add_field(g, "results", sst_reducer_append(), sst_array_empty(), &err) ||
        sst_graph_add_field(g, "total", sst_reducer_replace(), NULL, &err) ||
        sst_graph_add_node(g, "split", w2_split, NULL, NULL, &err) ||
        sst_graph_add_node(g, "work", w2_work, NULL, NULL, &err) ||
        sst_graph_add_node(g, "join", w2_join, NULL, NULL, &err) ||
        sst_graph_add_edge(g, SST_START, "split", &err) ||
        sst_graph_add_conditional_edges(g, "split", w2_fan, NULL, NULL, &err) ||
        sst_graph_add_edge(g, "work", "join", &err) ||
        sst_graph_add_edge(g, "join", SST_END, &err)) {
        bw_die("w2", &err);
    }
    return compile(g, "w2");
}

/* ---- W3 ---- */

static long g_ai, g_target;

void bw_w3_set_target(long iterations) {
    g_target = iterations;
    if (iterations == 0) {
        g_ai = 0;
    }
}

static sst_code w3_llm(sst_node_ctx *ctx, void *ud) {
    (void)ud;
    g_ai++;
    char msg[400];
    snprintf(msg, sizeof msg,
             "{\"role\":\"assistant\",\"content\":\"Step %ld: I will look this up with the search "
             "tool.\",\"tool_calls\":[{\"id\":\"call_%ld\",\"type\":\"function\",\"function\":{"
             "\"name\":\"search\",\"arguments\":\"{\\\"query\\\":\\\"question %ld\\\"}\"}}]}",
             g_ai, g_ai, g_ai);
    return sst_node_update(ctx, "messages", sst_json_parse(msg, NULL), NULL);
}

static sst_code w3_tool(sst_node_ctx *ctx, void *ud) {
    (void)ud;
    const sst_value *msgs = sst_object_get(sst_node_state(ctx), "messages");
    const sst_value *last = sst_array_get(msgs, sst_array_len(msgs) - 1);
    const sst_value *call = sst_array_get(sst_object_get(last, "tool_calls"), 0);
    char msg[300];
    snprintf(msg, sizeof msg,
             "{\"role\":\"tool\",\"tool_call_id\":\"%s\",\"content\":\"Result for question %ld: 42 "
             "documents found.\"}",
             sst_string_cstr(sst_object_get(call, "id")), g_ai);
    return sst_node_update(ctx, "messages", sst_json_parse(msg, NULL), NULL);
}

static sst_value *w3_after_tool(const sst_value *state, void *ud, sst_error *err) {
    (void)state, (void)ud;
    return sst_string_new(g_ai >= g_target ? SST_END : "llm", err);
}

sst_compiled_graph *bw_w3(void) {
    sst_error err;
    sst_graph *g = sst_graph_new(&err);
    if (sst_graph_add_field(g, "messages", sst_reducer_add_messages(), sst_array_empty(), &err) ||
        sst_graph_add_node(g, "llm", w3_llm, NULL, NULL, &err) ||
        sst_graph_add_node(g, "tool", w3_tool, NULL, NULL, &err) ||
        sst_graph_add_edge(g, SST_START, "llm", &err) ||
        sst_graph_add_edge(g, "llm", "tool", &err) ||
        sst_graph_add_conditional_edges(g, "tool", w3_after_tool, NULL, NULL, &err)) {
        bw_die("w3", &err);
    }
    return compile(g, "w3");
}

/* ---- W4 ---- */

static sst_code w4_step(sst_node_ctx *ctx, int64_t v, const char *name) {
    sst_code rc = sst_node_update(ctx, "value", sst_int_new(v, NULL), NULL);
    return rc == SST_OK ? sst_node_update(ctx, "path", sst_string_new(name, NULL), NULL) : rc;
}

static int64_t w4_value(sst_node_ctx *ctx) {
    return sst_int_value(sst_object_get(sst_node_state(ctx), "value"));
}

static sst_code w4a(sst_node_ctx *ctx, void *ud) {
    (void)ud;
    return w4_step(ctx, w4_value(ctx) + 1, "a");
}

static sst_code w4b(sst_node_ctx *ctx, void *ud) {
    (void)ud;
    return w4_step(ctx, w4_value(ctx) * 2, "b");
}

static sst_code w4c(sst_node_ctx *ctx, void *ud) {
    (void)ud;
    return w4_step(ctx, w4_value(ctx) - 3, "c");
}

sst_compiled_graph *bw_w4(void) {
    sst_error err;
    sst_graph *g = sst_graph_new(&err);
    if (sst_graph_add_field(g, "path", sst_reducer_append(), sst_array_empty(), &err) ||
        sst_graph_add_node(g, "a", w4a, NULL, NULL, &err) ||
        sst_graph_add_node(g, "b", w4b, NULL, NULL, &err) ||
        sst_graph_add_node(g, "c", w4c, NULL, NULL, &err) ||
        sst_graph_add_edge(g, SST_START, "a", &err) || sst_graph_add_edge(g, "a", "b", &err) ||
        sst_graph_add_edge(g, "b", "c", &err) || sst_graph_add_edge(g, "c", SST_END, &err)) {
        bw_die("w4", &err);
    }
    return compile(g, "w4");
}

/* ---- W5 ---- */

static sst_code w5_add(sst_node_ctx *ctx, void *ud) {
    (void)ud;
    return sst_node_update(ctx, "counter", sst_int_new(4, NULL), NULL);
}

static sst_code w5_write(sst_node_ctx *ctx, void *ud) {
    char text[32];
    snprintf(text, sizeof text, "from-%s", (const char *)ud);
    return sst_node_update(ctx, "key", sst_string_new(text, NULL), NULL);
}

static sst_compiled_graph *two_parallel(const char *field, const sst_reducer *r, sst_node_fn fn) {
    sst_error err;
    sst_graph *g = sst_graph_new(&err);
    if (sst_graph_add_field(g, field, r, NULL, &err) ||
        sst_graph_add_node(g, "left", fn, "left", NULL, &err) ||
        sst_graph_add_node(g, "right", fn, "right", NULL, &err) ||
        sst_graph_add_edge(g, SST_START, "left", &err) ||
        sst_graph_add_edge(g, SST_START, "right", &err)) {
        bw_die("w5", &err);
    }
    return compile(g, "w5");
}

sst_compiled_graph *bw_w5_sum(void) {
    return two_parallel("counter", sst_reducer_sum(), w5_add);
}

sst_compiled_graph *bw_w5_plain(void) {
    return two_parallel("key", sst_reducer_unique(), w5_write);
}

/* ---- W6 ---- */

/* START -> @p node (the subgraph @p child) -> END, on W1's fields. */
static sst_compiled_graph *wrap(const char *node, const sst_compiled_graph *child) {
    sst_error err;
    sst_graph *g = sst_graph_new(&err);
    if (sst_graph_add_field(g, "counter", sst_reducer_sum(), sst_int_new(0, NULL), &err) ||
        sst_graph_add_field(g, "n", sst_reducer_replace(), NULL, &err) ||
        sst_graph_add_subgraph(g, node, child, NULL, &err) ||
        sst_graph_add_edge(g, SST_START, node, &err) ||
        sst_graph_add_edge(g, node, SST_END, &err)) {
        bw_die("w6", &err);
    }
    return compile(g, "w6");
}

void bw_w6(bw_nested *w) {
    w->inner = bw_w1();
    w->mid = wrap("inner", w->inner);
    w->root = wrap("mid", w->mid);
}

void bw_w6_free(bw_nested *w) {
    sst_compiled_graph_free(w->root);
    sst_compiled_graph_free(w->mid);
    sst_compiled_graph_free(w->inner);
}

/* Counts a record by its namespace's depth: "" 0, "mid:t" 1, "mid:t|inner:t" 2. */
static bool count_record(const sst_checkpoint *rec, void *ud) {
    bw_durable *d = ud;
    size_t depth = rec->ns[0] == '\0' ? 0 : 1;
    for (const char *p = rec->ns; *p != '\0'; p++) {
        depth += *p == '|';
    }
    d->checkpoints++;
    d->per_depth[depth < 2 ? depth : 2]++;
    return true;
}

bw_durable bw_loop_sqlite(const sst_compiled_graph *cg, const char *db, long n) {
    bw_remove_db(db);
    sst_error err;
    sst_checkpointer *cp = sst_sqlite_saver_open(db, NULL, &err);
    sst_graph_thread *th = cp != NULL ? sst_graph_thread_open(cg, cp, "loop", &err) : NULL;
    if (th == NULL) {
        bw_die(db, &err);
    }
    char in[64];
    snprintf(in, sizeof in, "{\"counter\":0,\"n\":%ld}", n);
    sst_value *input = bw_json(in);
    bw_durable d = {0};
    double cpu0 = bw_cpu_s();
    d.wall_s = bw_invoke_timed(cg, th, input, (uint64_t)n + 10, "counter", n);
    d.cpu_s = bw_cpu_s() - cpu0;
    sst_value_unref(input);
    sst_checkpoint_query q = {.thread_id = "loop"};
    if (sst_checkpointer_list(cp, &q, count_record, &d, &err) != SST_OK) {
        bw_die("list", &err);
    }
    sst_graph_thread_free(th);
    sst_checkpointer_free(cp);
    d.db_bytes = bw_db_bytes(db);
    if (getenv("SST_BENCH_KEEP") == NULL) {
        bw_remove_db(db);
    }
    return d;
}
