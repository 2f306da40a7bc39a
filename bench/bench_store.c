/* SPDX-License-Identifier: MIT */
/*
 * The long-term memory store under load (include/superstep/store.h): N items
 * with D-dim embeddings from a deterministic hook (a seeded xorshift per
 * text), in each backend: puts per second, the latency of vector searches
 * (p50/p99 over Q queries) without a filter and with one matching 10 % of the
 * items, and the bytes each item costs (memory: RSS growth / items; SQLite:
 * file size / items, plus the RSS of its in-memory vector copy). The memory
 * store is also searched with one ranking thread, to show what the second
 * buys. Usage:
 *   bench_store [--items N] [--dims D] [--queries Q] [--backend memory|sqlite|both]
 *               [--dir DIR] [--json] [--quick]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "workloads.h"

typedef struct config {
    size_t items, dims, queries;
    const char *backend;
    const char *dir;
    bool json;
} config;

/* What one backend measured. */
typedef struct result {
    const char *name;
    double puts_per_s;
    double embed_us;                     /* the hook's own cost per put, included in puts_per_s */
    double open_s;                       /* reopening (SQLite: loading the vectors), 0 for memory */
    double q_min_ms, q_p50_ms, q_p99_ms; /* min: the least disturbed query */
    double qf_p50_ms, qf_p99_ms;
    double q1_p50_ms; /* one ranking thread */
    double f_p50_ms;  /* no query, the filter only */
    double bytes_per_item;
    double rss_per_item;
} result;

/* ---- the embedding hook: a unit-ish random vector seeded by the text ---- */

static sst_code embed(void *ud, const char *const *texts, size_t n, size_t dims, float *out,
                      sst_error *err) {
    (void)ud, (void)err;
    for (size_t t = 0; t < n; t++) {
        uint64_t h = 1469598103934665603ull;
        for (const char *p = texts[t]; *p != '\0'; p++) {
            h = (h ^ (unsigned char)*p) * 1099511628211ull;
        }
        uint64_t x = h | 1;
        for (size_t i = 0; i < dims; i++) {
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            uint64_t r = x * 2685821657736338717ull;
            out[t * dims + i] = (float)((double)(r >> 40) / 16777216.0 * 2.0 - 1.0);
        }
    }
    return SST_OK;
}

/* ---- helpers ---- */

static long rss_bytes(void) {
    FILE *f = fopen("/proc/self/statm", "r");
    long pages = 0, resident = 0;
    if (f != NULL) {
        if (fscanf(f, "%ld %ld", &pages, &resident) != 2) {
            resident = 0;
        }
        fclose(f);
    }
    return resident * sysconf(_SC_PAGESIZE);
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double percentile(double *xs, size_t n, double p) {
    qsort(xs, n, sizeof *xs, cmp_double);
    size_t i = (size_t)(p * (double)(n - 1) + 0.5);
    return xs[i < n ? i : n - 1];
}

static sst_store_opts store_opts(const config *c, size_t threads) {
    sst_store_opts o;
    sst_store_opts_init(&o);
    o.index.dims = c->dims;
    o.index.embed = embed;
    o.search_threads = threads;
    static const char *const fields[] = {"text"};
    o.index.fields = fields;
    o.index.n_fields = 1;
    return o;
}

static sst_store *open_store(const config *c, const char *name, const char *path, size_t threads) {
    sst_error err;
    sst_store_opts o = store_opts(c, threads);
    sst_store *st = strcmp(name, "memory") == 0 ? sst_memory_store_new(&o, &err)
                                                : sst_sqlite_store_new(path, &o, &err);
    if (st == NULL) {
        bw_die("opening the store", &err);
    }
    return st;
}

/* Puts the items; returns puts per second. */
static double load(sst_store *st, const config *c) {
    sst_error err;
    char text[160], key[32], ns[32];
    double t0 = bw_now_s();
    for (size_t i = 0; i < c->items; i++) {
        snprintf(text, sizeof text,
                 "{\"text\":\"memory %zu: the user said something about topic %zu\","
                 "\"group\":%zu,\"n\":%zu}",
                 i, i % 977, i % 10, i);
        snprintf(key, sizeof key, "item-%zu", i);
        snprintf(ns, sizeof ns, "user-%zu", i % 100);
        sst_value *v = bw_json(text);
        if (sst_store_put(st, (const char *const[]){"memories", ns}, 2, key, v, NULL, &err) !=
            SST_OK) {
            bw_die("put", &err);
        }
        sst_value_unref(v);
    }
    return (double)c->items / (bw_now_s() - t0);
}

/* The hook alone, per text (its share of a put). */
static double embed_cost_us(const config *c) {
    float *out = malloc(c->dims * sizeof *out);
    const char *texts[1] = {"memory 12345: the user said something about topic 42"};
    size_t n = 2000;
    double t0 = bw_now_s();
    for (size_t i = 0; i < n; i++) {
        embed(NULL, texts, 1, c->dims, out, NULL);
    }
    double us = (bw_now_s() - t0) / (double)n * 1e6;
    free(out);
    return us;
}

/* Runs the queries; p50 and p99 in ms. */
static void run_queries(sst_store *st, const config *c, bool with_query, const sst_value *filter,
                        double *p50, double *p99, double *min) {
    double *ms = malloc(c->queries * sizeof *ms);
    char text[64];
    sst_error err;
    for (size_t i = 0; i < c->queries; i++) {
        snprintf(text, sizeof text, "what did the user say about topic %zu?", i);
        sst_store_search_opts q;
        sst_store_search_opts_init(&q);
        q.prefix = (const char *const[]){"memories"};
        q.prefix_len = 1;
        q.query = with_query ? text : NULL;
        q.filter = filter;
        double t0 = bw_now_s();
        sst_value *r = sst_store_search(st, &q, &err);
        ms[i] = (bw_now_s() - t0) * 1e3;
        if (r == NULL || sst_array_len(r) != 10) {
            bw_die("search", &err);
        }
        sst_value_unref(r);
    }
    *p50 = percentile(ms, c->queries, 0.50);
    *p99 = percentile(ms, c->queries, 0.99);
    *min = ms[0]; /* sorted by percentile() */
    free(ms);
}

static void searches(sst_store *st, const config *c, result *r) {
    sst_value *filter = bw_json("{\"group\":3}");
    double unused, unused2;
    run_queries(st, c, true, NULL, &r->q_p50_ms, &r->q_p99_ms, &r->q_min_ms);
    run_queries(st, c, true, filter, &r->qf_p50_ms, &r->qf_p99_ms, &unused2);
    run_queries(st, c, false, filter, &r->f_p50_ms, &unused, &unused2);
    sst_value_unref(filter);
}

static result bench_memory(const config *c) {
    result r = {.name = "memory"};
    long rss0 = rss_bytes();
    sst_store *st = open_store(c, "memory", NULL, 0);
    r.puts_per_s = load(st, c);
    r.rss_per_item = r.bytes_per_item = (double)(rss_bytes() - rss0) / (double)c->items;
    searches(st, c, &r);
    sst_store_free(st);
    /* one ranking thread: the same store rebuilt would double the RSS, so reload it */
    st = open_store(c, "memory", NULL, 1);
    load(st, c);
    double unused, unused2;
    run_queries(st, c, true, NULL, &r.q1_p50_ms, &unused, &unused2);
    sst_store_free(st);
    return r;
}

static result bench_sqlite(const config *c) {
    result r = {.name = "sqlite"};
    char path[512];
    snprintf(path, sizeof path, "%s/bench_store.db", c->dir);
    bw_remove_db(path);
    sst_store *st = open_store(c, "sqlite", path, 0);
    r.puts_per_s = load(st, c);
    sst_store_free(st);
    long rss0 = rss_bytes();
    double t0 = bw_now_s();
    st = open_store(c, "sqlite", path, 0);
    r.open_s = bw_now_s() - t0;
    r.rss_per_item = (double)(rss_bytes() - rss0) / (double)c->items;
    searches(st, c, &r);
    sst_store_free(st);
    st = open_store(c, "sqlite", path, 1);
    double unused, unused2;
    run_queries(st, c, true, NULL, &r.q1_p50_ms, &unused, &unused2);
    sst_store_free(st);
    r.bytes_per_item = (double)bw_db_bytes(path) / (double)c->items;
    if (getenv("SST_BENCH_KEEP") == NULL) {
        bw_remove_db(path);
    }
    return r;
}

static void print_table(const config *c, const result *rs, size_t n) {
    printf("store: %zu items, %zu-dim vectors (%.0f MB of float32), %zu queries, limit 10\n",
           c->items, c->dims, (double)c->items * (double)c->dims * 4 / 1e6, c->queries);
    printf("%-8s %9s %7s %9s %17s %17s %10s %7s %11s %9s\n", "backend", "puts/s", "open s",
           "query min", "query p50/p99 ms", "+filter p50/p99", "1 thr p50", "filter", "bytes/item",
           "RSS/item");
    for (size_t i = 0; i < n; i++) {
        const result *r = &rs[i];
        printf("%-8s %9.0f %7.2f %9.2f %8.2f/%-8.2f %8.2f/%-8.2f %10.2f %7.3f %11.0f %9.0f\n",
               r->name, r->puts_per_s, r->open_s, r->q_min_ms, r->q_p50_ms, r->q_p99_ms,
               r->qf_p50_ms, r->qf_p99_ms, r->q1_p50_ms, r->f_p50_ms, r->bytes_per_item,
               r->rss_per_item);
    }
    printf("(times in ms; the embed hook costs %.1f us per put, included in puts/s; \"filter\" is "
           "a search without a query; \"1 thr\" ranks with one thread)\n",
           rs[0].embed_us);
}

static void print_json(const config *c, const result *rs, size_t n) {
    printf("{\"items\":%zu,\"dims\":%zu,\"queries\":%zu,\"embed_us\":%.2f,\"backends\":[", c->items,
           c->dims, c->queries, rs[0].embed_us);
    for (size_t i = 0; i < n; i++) {
        const result *r = &rs[i];
        printf("%s{\"name\":\"%s\",\"puts_per_s\":%.0f,\"open_s\":%.3f,\"query_min_ms\":%.3f,"
               "\"query_p50_ms\":%.3f,"
               "\"query_p99_ms\":%.3f,\"filtered_p50_ms\":%.3f,\"filtered_p99_ms\":%.3f,"
               "\"query_1thread_p50_ms\":%.3f,\"filter_only_p50_ms\":%.3f,"
               "\"bytes_per_item\":%.0f,\"rss_per_item\":%.0f}",
               i > 0 ? "," : "", r->name, r->puts_per_s, r->open_s, r->q_min_ms, r->q_p50_ms,
               r->q_p99_ms, r->qf_p50_ms, r->qf_p99_ms, r->q1_p50_ms, r->f_p50_ms,
               r->bytes_per_item, r->rss_per_item);
    }
    printf("]}\n");
}

static config parse_args(int argc, char **argv) {
    config c = {.items = 100000, .dims = 1536, .queries = 200, .backend = "both", .dir = "/tmp"};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--json") == 0) {
            c.json = true;
        } else if (strcmp(a, "--quick") == 0) {
            c.items = 2000;
            c.queries = 20;
            c.dims = 256;
        } else if (v != NULL && strcmp(a, "--items") == 0 && ++i) {
            c.items = strtoul(v, NULL, 10);
        } else if (v != NULL && strcmp(a, "--dims") == 0 && ++i) {
            c.dims = strtoul(v, NULL, 10);
        } else if (v != NULL && strcmp(a, "--queries") == 0 && ++i) {
            c.queries = strtoul(v, NULL, 10);
        } else if (v != NULL && strcmp(a, "--backend") == 0 && ++i) {
            c.backend = v;
        } else if (v != NULL && strcmp(a, "--dir") == 0 && ++i) {
            c.dir = v;
        } else {
            fprintf(stderr, "usage: bench_store [--items N] [--dims D] [--queries Q] "
                            "[--backend memory|sqlite|both] [--dir DIR] [--json] [--quick]\n");
            exit(2);
        }
    }
    if (c.items < 100 || c.queries < 1 || c.dims < 1) {
        fprintf(stderr, "bench_store: need at least 100 items, 1 query and 1 dimension\n");
        exit(2);
    }
    return c;
}

int main(int argc, char **argv) {
    config c = parse_args(argc, argv);
    result rs[2];
    size_t n = 0;
    if (strcmp(c.backend, "sqlite") != 0) {
        rs[n++] = bench_memory(&c);
    }
    if (strcmp(c.backend, "memory") != 0) {
        rs[n++] = bench_sqlite(&c);
    }
    rs[0].embed_us = embed_cost_us(&c);
    if (c.json) {
        print_json(&c, rs, n);
    } else {
        print_table(&c, rs, n);
    }
    return 0;
}
