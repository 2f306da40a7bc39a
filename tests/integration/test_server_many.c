/* SPDX-License-Identifier: MIT */
/*
 * Nine servers in one process, each with its own cron ticker, TTL sweep and
 * test clock offsets (src/server: all of it lives in sst_server). Six are
 * made with SST_SERVE_CRON_CLOCK_OFFSET_MS and SST_SERVE_TTL_CLOCK_OFFSET_MS
 * set, three (the first of them started before any other) without:
 * each of the six fires its monthly cron and deletes its thread whose TTL
 * (an hour) passed on its own clock; the three fire nothing and delete nothing.
 */
#define _GNU_SOURCE    /* setenv, timegm, gmtime_r */
#include <curl/curl.h> /* curl_global_init */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "superstep/json.h"
#include "superstep/server.h"
#include "superstep/superstep.h"
#include "test_util.h"

#define N_SERVERS 9

static sst_code inc(sst_node_ctx *ctx, void *ud) {
    (void)ud;
    return sst_node_update(ctx, "count", sst_int_new(1, NULL), NULL);
}

static sst_compiled_graph *counter(sst_graph **g) {
    sst_error err = {0};
    *g = sst_graph_new(&err);
    assert_non_null(*g);
    tu_assert_ok(sst_graph_add_field(*g, "count", sst_reducer_sum(), sst_int_new(0, NULL), &err),
                 &err, __FILE__, __LINE__);
    tu_assert_ok(sst_graph_add_node(*g, "inc", inc, NULL, NULL, &err), &err, __FILE__, __LINE__);
    tu_assert_ok(sst_graph_add_edge(*g, SST_START, "inc", &err), &err, __FILE__, __LINE__);
    tu_assert_ok(sst_graph_add_edge(*g, "inc", SST_END, &err), &err, __FILE__, __LINE__);
    sst_compiled_graph *cg = sst_graph_compile(*g, NULL, &err);
    tu_assert_ok(cg != NULL ? SST_OK : err.code, &err, __FILE__, __LINE__);
    return cg;
}

/* A shared graph source handing out the one compiled graph. */
static void *acquire(void *ud, const sst_compiled_graph **graph, sst_error *err) {
    (void)err;
    *graph = ud;
    return ud;
}

static void release(void *ud, void *inst) {
    (void)ud, (void)inst;
}

/* A string member of the JSON reply to @p method @p path, copied to @p out. */
static void post_id(unsigned port, const char *path, const char *body, const char *member,
                    char out[64]) {
    long status = 0;
    sst_value *v = tu_http_json(port, "POST", path, body, &status);
    assert_int_equal(status, 200);
    const char *id = sst_string_cstr(sst_object_get(v, member));
    assert_non_null(id);
    snprintf(out, 64, "%s", id);
    sst_value_unref(v);
}

/* Milliseconds from now to 00:00 UTC of the first day of next month, plus two minutes: a
 * clock moved by this much is past the next fire of "0 0 1 * *". */
static int64_t past_next_month_ms(void) {
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    time_t t = now.tv_sec;
    struct tm tm;
    gmtime_r(&t, &tm);
    struct tm first = {.tm_year = tm.tm_year, .tm_mon = tm.tm_mon + 1, .tm_mday = 1};
    time_t at = timegm(&first); /* normalises month 12 to January of the next year */
    return ((int64_t)at - (int64_t)now.tv_sec) * 1000 + 120000;
}

typedef struct served {
    sst_server *s;
    unsigned port;
    bool moved;          /* made with the clock offsets */
    char ttl_thread[64]; /* a thread with a TTL of an hour */
    char cron_thread[64];
    bool fired, swept;
} served;

static void make(served *v, bool moved, const sst_compiled_graph *cg) {
    char cron_offset[32];
    snprintf(cron_offset, sizeof cron_offset, "%lld", (long long)past_next_month_ms());
    if (moved) {
        setenv("SST_SERVE_CRON_CLOCK_OFFSET_MS", cron_offset, 1);
        setenv("SST_SERVE_TTL_CLOCK_OFFSET_MS", "3660000", 1); /* 61 minutes */
    }
    sst_server_opts o;
    sst_server_opts_init(&o);
    o.port = 0;
    o.db = ":memory:";
    o.workers = 1;
    o.no_web = true;
    sst_error err = {0};
    v->s = sst_server_new(&o, &err);
    unsetenv("SST_SERVE_CRON_CLOCK_OFFSET_MS"); /* read by sst_server_new: not needed after */
    unsetenv("SST_SERVE_TTL_CLOCK_OFFSET_MS");
    tu_assert_ok(v->s != NULL ? SST_OK : err.code, &err, __FILE__, __LINE__);
    v->moved = moved;
    sst_graph_source src = {
        .acquire = acquire, .release = release, .user_data = (void *)cg, .shared = true};
    tu_assert_ok(sst_server_add_graph_source(v->s, "counter", &src, &err), &err, __FILE__,
                 __LINE__);
    tu_assert_ok(sst_server_start(v->s, &err), &err, __FILE__, __LINE__);
    v->port = sst_server_port(v->s);
    post_id(v->port, "/threads", "{\"ttl\": {\"strategy\": \"delete\", \"ttl\": 60}}", "thread_id",
            v->ttl_thread);
    post_id(v->port, "/threads", "{}", "thread_id", v->cron_thread);
    char path[128], cron[64];
    snprintf(path, sizeof path, "/threads/%s/runs/crons", v->cron_thread);
    post_id(v->port, path, "{\"assistant_id\": \"counter\", \"schedule\": \"0 0 1 * *\"}",
            "cron_id", cron);
}

/* Whether @p v's cron thread has a run and its TTL thread is gone. */
static void look(served *v) {
    char path[128];
    long status = 0;
    snprintf(path, sizeof path, "/threads/%s/runs", v->cron_thread);
    sst_value *runs = tu_http_json(v->port, "GET", path, NULL, &status);
    assert_int_equal(status, 200);
    v->fired = sst_array_len(runs) > 0;
    sst_value_unref(runs);
    snprintf(path, sizeof path, "/threads/%s", v->ttl_thread);
    sst_value_unref(tu_http_json(v->port, "GET", path, NULL, &status));
    assert_true(status == 200 || status == 404);
    v->swept = status == 404;
}

static void test_nine_servers_tick_and_sweep_on_their_own(void **state) {
    (void)state;
    sst_graph *g = NULL;
    sst_compiled_graph *cg = counter(&g);
    served v[N_SERVERS];
    memset(v, 0, sizeof v);
    /* The first server, without offsets, starts its ticker and keeper before any other
     * server exists: a process-wide offset read once would be its (none) for all. */
    for (size_t i = 0; i < N_SERVERS; i++) {
        make(&v[i], i % 3 != 0, cg);
    }
    double deadline = tu_now_s() + 60 * tu_time_scale();
    size_t done = 0;
    while (done < 6 && tu_now_s() < deadline) {
        done = 0;
        for (size_t i = 0; i < N_SERVERS; i++) {
            if (v[i].moved) {
                look(&v[i]);
                done += v[i].fired && v[i].swept;
            }
        }
        if (done < 6) {
            struct timespec ts = {0, 100 * 1000000L}; /* polling, not synchronisation */
            nanosleep(&ts, NULL);
        }
    }
    for (size_t i = 0; i < N_SERVERS; i++) {
        look(&v[i]);
        if (v[i].moved) {
            if (!v[i].fired || !v[i].swept) {
                print_error("server %zu (offsets): fired %d, swept %d\n", i, v[i].fired,
                            v[i].swept);
            }
            assert_true(v[i].fired && v[i].swept);
        } else {
            /* Its own clock: the cron's month has not come, the thread is not an hour old. */
            assert_false(v[i].fired);
            assert_false(v[i].swept);
        }
    }
    for (size_t i = 0; i < N_SERVERS; i++) {
        sst_server_free(v[i].s);
    }
    sst_compiled_graph_free(cg);
    sst_graph_free(g);
}

int main(void) {
    curl_global_init(CURL_GLOBAL_DEFAULT);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nine_servers_tick_and_sweep_on_their_own),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    curl_global_cleanup();
    return rc;
}
