/* SPDX-License-Identifier: MIT */
/*
 * The run queue contract (include/superstep/queue.h): one suite run against
 * every backend of k_backends (a new backend is one more row). Cases, per
 * backend:
 *   1 enqueue/get round trip: every field, JSON kwargs and metadata,
 *     timestamps, defaults; the kwargs size limit; a run as a value
 *   2 duplicate run id          3 list: thread, status, offset, limit, order, stop
 *   4 remove, remove_thread     5 enqueue if idle (SST_EBUSY)
 *   6 claim: FIFO, what a claim sets, one running run per thread, a callback
 *     that calls the queue      7 run_after, and FIFO within a thread
 *   8 lease expiry: reclaimed with attempt + 1 and a new token; the old token
 *     fails renew, finish and release; renew extends the lease
 *   9 release                  10 cancel: pending, running (seen by renew), finished
 *  11 argument checks          12 owners: gone (dead pid, reused pid, with a
 *     worker suffix) taken at once; alive or elsewhere wait for expiry
 *  13 threads: 4 workers on each of 2 handles (1 when the backend cannot share)
 *     claim and finish 2 000 runs over 50 threads: each run claimed once, in
 *     order within its thread, never two of one thread at once (TSan)
 *  14 claim speed with 10 000 pending runs, 1 000 under sanitizers, a fifth of
 *     that on PostgreSQL (printed only)
 *  15 persistence (reopen)     16 a worker killed mid-run (fork, _exit): its
 *     run is claimed again at once, not after its 60 s lease
 * The backends: SQLite on a file and in memory, and PostgreSQL on a fresh
 * schema of the test server per case (skipped, saying so, without one).
 * PostgreSQL only: four pools (four processes) with three workers each claim
 * 600 runs over 4 threads (each run once, one live run per thread, in order);
 * sst_postgres_queue_wait wakes on what other pools do and times out
 * otherwise (not on another schema's queue; several waiters; arguments); a
 * newer queue schema is refused; opening (bad servers, a shared pool); the
 * server restarting under a holder, a claimer and a waiter.
 * Once: foreign, garbage, damaged and newer-schema SQLite files; a schema-1 file
 * (AUTOINCREMENT, two indexes over the running runs) upgraded to schema 3 keeping its
 * runs, claimed in order with one enqueued after; a schema-2 file (sst_runs_status)
 * upgraded to 3 (sst_runs_pending), claimed in order; one file
 * shared with the checkpoint saver and the store; and against a fake backend:
 * required ops and the reference count.
 */
#define _GNU_SOURCE /* strdup */
#include <fcntl.h>
#include <libpq-fe.h>
#include <pthread.h>
#include <sched.h>
#include <sqlite3.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h" /* sst__owner_self: the identity a server's workers claim with */
#include "superstep/queue.h"
#include "superstep/superstep.h"
#include "test_util.h"

/* ---- backends ---- */

typedef struct backend {
    const char *name;
    /* Opens the queue kept under @p dir (empty the first time). */
    sst_queue *(*open)(const char *dir, sst_error *err);
    bool shared; /* opening dir again (another handle, a reopen, a child) finds the same queue */
    bool pg;     /* needs the test PostgreSQL server (tu_pg_url): skipped without one */
} backend;

static sst_queue *open_sqlite(const char *dir, sst_error *err) {
    char path[128];
    snprintf(path, sizeof path, "%s/queue.db", dir);
    return sst_sqlite_queue_open(path, err);
}

static sst_queue *open_sqlite_memory(const char *dir, sst_error *err) {
    (void)dir;
    return sst_sqlite_queue_open(":memory:", err);
}

/*
 * A fresh schema of the test server per fixture (tu_pg_fresh), its URL kept in
 * DIR/pg-url so that opening DIR again (a second handle, a reopen, a child
 * process) finds the same schema; every open makes a pool of its own, as
 * another process would.
 */
static sst_queue *open_postgres(const char *dir, sst_error *err) {
    char path[128], url[700];
    snprintf(path, sizeof path, "%s/pg-url", dir);
    char *saved = tu_read_file(path, NULL);
    if (saved != NULL) {
        snprintf(url, sizeof url, "%s", saved);
        free(saved);
    } else {
        FILE *f = NULL;
        if (tu_pg_fresh("queue", url, sizeof url) != 0 || (f = fopen(path, "w")) == NULL) {
            if (err != NULL) {
                *err = (sst_error){.code = SST_EUNAVAILABLE};
                snprintf(err->msg, sizeof err->msg, "no schema on the test PostgreSQL server");
            }
            return NULL;
        }
        fputs(url, f);
        fclose(f);
    }
    return sst_postgres_queue_open(url, err);
}

static const backend k_backends[] = {
    {"sqlite", open_sqlite, true, false},
    {"sqlite-memory", open_sqlite_memory, false, false},
    {"postgres", open_postgres, true, true},
};

/* ---- fixture ---- */

#define T0    1700000000000LL /* the tests' clock (ms), passed as `now` */
#define LEASE 60000LL

typedef struct fixture {
    const backend *be;
    char dir[64];
    sst_queue *q;
    sst_error err; /* the error of the last call made through E */
} fixture;

#define E                 (&fx->err)
#define OK(call)          tu_assert_ok((call), E, __FILE__, __LINE__)
#define FAILS(call, code) code_at((call), (code), E, __FILE__, __LINE__)
#define MSG_HAS(s)        msg_has_at(E, (s), __FILE__, __LINE__)

static void code_at(sst_code got, sst_code want, const sst_error *err, const char *file, int line) {
    if (got != want) {
        print_error("%s:%d: expected %s, got %s: %s\n", file, line, sst_code_name(want),
                    sst_code_name(got), got != SST_OK ? err->msg : "");
        _fail(file, line);
    }
}

static void msg_has_at(const sst_error *err, const char *s, const char *file, int line) {
    if (strstr(err->msg, s) == NULL) {
        print_error("%s:%d: message \"%s\" does not name '%s'\n", file, line, err->msg, s);
        _fail(file, line);
    }
}

static int fx_setup(void **state) {
    fixture *fx = calloc(1, sizeof *fx);
    fx->be = *state;
    if (tu_temp_dir("queue", fx->dir, sizeof fx->dir) != 0 ||
        (fx->q = fx->be->open(fx->dir, E)) == NULL) {
        print_error("%s: cannot open a queue in %s: %s\n", fx->be->name, fx->dir, fx->err.msg);
        free(fx);
        return -1;
    }
    *state = fx;
    return 0;
}

static int fx_teardown(void **state) {
    fixture *fx = *state;
    sst_queue_free(fx->q);
    int rc = tu_rm_rf(fx->dir);
    free(fx);
    return rc;
}

static void fx_reopen(fixture *fx) {
    sst_queue_free(fx->q);
    if ((fx->q = fx->be->open(fx->dir, E)) == NULL) {
        fail_msg("%s: reopening %s: %s", fx->be->name, fx->dir, fx->err.msg);
    }
}

/* ---- what a callback saw ---- */

typedef struct seen {
    int calls;
    char run_id[64], thread_id[64], assistant_id[64], strategy[64], cancel[64];
    char owner[SST__OWNER_MAX + 16];
    bool has_strategy, has_cancel, has_owner;
    char *kwargs, *metadata; /* malloc'd compact JSON */
    sst_value *value;        /* sst_queued_run_value of the run */
    sst_queue_status status;
    int64_t created_at, updated_at, run_after, lease_expires;
    uint32_t attempt;
    uint64_t token;
} seen;

static void copy_opt(char *dst, size_t n, bool *has, const char *src) {
    *has = src != NULL;
    snprintf(dst, n, "%s", src != NULL ? src : "");
}

static char *json_of(const sst_value *v) {
    char *text = sst_json_write(v, SST_JSON_COMPACT, NULL, NULL);
    char *copy = strdup(text != NULL ? text : "(null)");
    sst_free(text);
    return copy;
}

static void seen_clear(seen *s) {
    free(s->kwargs);
    free(s->metadata);
    sst_value_unref(s->value);
    memset(s, 0, sizeof *s);
}

static bool on_run(const sst_queued_run *run, void *user_data) {
    seen *s = user_data;
    seen_clear(s);
    s->calls = 1;
    snprintf(s->run_id, sizeof s->run_id, "%s", run->run_id);
    snprintf(s->thread_id, sizeof s->thread_id, "%s", run->thread_id);
    snprintf(s->assistant_id, sizeof s->assistant_id, "%s", run->assistant_id);
    copy_opt(s->strategy, sizeof s->strategy, &s->has_strategy, run->multitask_strategy);
    copy_opt(s->cancel, sizeof s->cancel, &s->has_cancel, run->cancel);
    copy_opt(s->owner, sizeof s->owner, &s->has_owner, run->owner);
    s->kwargs = json_of(run->kwargs);
    s->metadata = json_of(run->metadata);
    s->value = sst_queued_run_value(run, NULL);
    s->status = run->status;
    s->created_at = run->created_at;
    s->updated_at = run->updated_at;
    s->run_after = run->run_after;
    s->lease_expires = run->lease_expires;
    s->attempt = run->attempt;
    s->token = run->token;
    return true;
}

/* ---- shorthands ---- */

static sst_code enqueue_at(fixture *fx, const char *id, const char *thread, int64_t run_after,
                           unsigned flags) {
    sst_queued_run r = {.run_id = id, .thread_id = thread, .run_after = run_after};
    return sst_queue_enqueue(fx->q, &r, flags, E);
}

static void enqueue(fixture *fx, const char *id, const char *thread) {
    OK(enqueue_at(fx, id, thread, 0, 0));
}

/* Claims for @p owner at @p now; the run goes to @p s. */
static sst_code claim(fixture *fx, const char *owner, int64_t now, seen *s) {
    return sst_queue_claim(fx->q, owner, now, LEASE, on_run, s, E);
}

/* Claims and checks which run came. */
static uint64_t claim_expect(fixture *fx, const char *owner, int64_t now, const char *run_id,
                             uint32_t attempt) {
    seen s = {0};
    OK(claim(fx, owner, now, &s));
    assert_string_equal(s.run_id, run_id);
    assert_int_equal(s.attempt, attempt);
    uint64_t token = s.token;
    seen_clear(&s);
    return token;
}

static void get(fixture *fx, const char *id, seen *s) {
    OK(sst_queue_get(fx->q, id, on_run, s, E));
    assert_int_equal(s->calls, 1);
}

/* The run ids a listing returned, joined with ','. */
typedef struct ids {
    char text[4096];
    int n, stop_after; /* stop_after > 0: return false at that run */
} ids;

static bool on_id(const sst_queued_run *run, void *user_data) {
    ids *l = user_data;
    size_t len = strlen(l->text);
    snprintf(l->text + len, sizeof l->text - len, "%s%s", len > 0 ? "," : "", run->run_id);
    return ++l->n != l->stop_after;
}

static const char *list(fixture *fx, const char *thread, int status, size_t offset, size_t limit,
                        ids *l) {
    memset(l, 0, sizeof *l);
    sst_queue_query q = {.thread_id = thread,
                         .by_status = status >= 0,
                         .status = status >= 0 ? (sst_queue_status)status : SST_QUEUE_PENDING,
                         .offset = offset,
                         .limit = limit};
    OK(sst_queue_list(fx->q, &q, on_id, l, E));
    return l->text;
}

/* ---- 1 round trip ---- */

static const char *k_kwargs =
    "{\"input\":{\"messages\":[{\"role\":\"user\",\"content\":\"h\\u00e9llo \\ud83d\\ude00\"}]},"
    "\"config\":{\"configurable\":{\"thread_id\":\"t1\",\"n\":3}},\"stream_mode\":[\"values\"],"
    "\"z\":1.5,\"a\":null,\"b\":false}";

static void case_round_trip(void **state) {
    fixture *fx = *state;
    sst_value *kwargs = tu_json(k_kwargs), *meta = tu_json("{\"user\":\"u1\",\"tags\":[1,2]}");
    sst_queued_run r = {.run_id = "run-1",
                        .thread_id = "thread-1",
                        .assistant_id = "agent",
                        .status = SST_QUEUE_SUCCESS, /* ignored: a new run is pending */
                        .kwargs = kwargs,
                        .metadata = meta,
                        .multitask_strategy = "enqueue",
                        .created_at = 1234,
                        .updated_at = 99,
                        .run_after = 5678,
                        .attempt = 7,
                        .cancel = "interrupt",
                        .owner = "someone",
                        .lease_expires = 42,
                        .token = 42};
    int64_t before = (int64_t)sst__now_ms();
    OK(sst_queue_enqueue(fx->q, &r, 0, E));
    int64_t after = (int64_t)sst__now_ms();
    sst_value_unref(kwargs);
    sst_value_unref(meta);
    seen s = {0};
    get(fx, "run-1", &s);
    assert_string_equal(s.run_id, "run-1");
    assert_string_equal(s.thread_id, "thread-1");
    assert_string_equal(s.assistant_id, "agent");
    assert_int_equal(s.status, SST_QUEUE_PENDING);
    sst_value *want = tu_json(k_kwargs);
    assert_json_text(want, SST_JSON_COMPACT, s.kwargs); /* kept as given, key order too */
    sst_value_unref(want);
    assert_string_equal(s.metadata, "{\"user\":\"u1\",\"tags\":[1,2]}");
    assert_true(s.has_strategy);
    assert_string_equal(s.strategy, "enqueue");
    assert_int_equal(s.created_at, 1234);
    assert_in_range(s.updated_at, before, after);
    assert_int_equal(s.run_after, 5678);
    assert_int_equal(s.attempt, 0);
    assert_false(s.has_cancel);
    assert_false(s.has_owner);
    assert_int_equal(s.lease_expires, 0);
    assert_int_equal(s.token, 0);
    char expect[1024];
    snprintf(expect, sizeof expect,
             "{\"run_id\":\"run-1\",\"thread_id\":\"thread-1\",\"assistant_id\":\"agent\","
             "\"status\":\"pending\",\"kwargs\":%s,\"metadata\":{\"user\":\"u1\",\"tags\":[1,2]},"
             "\"multitask_strategy\":\"enqueue\",\"created_at\":1234,\"updated_at\":%lld,"
             "\"run_after\":5678,\"attempt\":0,\"cancel\":null,\"owner\":null,"
             "\"lease_expires\":0}",
             k_kwargs, (long long)s.updated_at);
    assert_json_eq(s.value, expect);
    seen_clear(&s);

    /* Defaults: created_at 0 is now; NULL kwargs, metadata and assistant are {}, {} and "". */
    sst_queued_run d = {.run_id = "run-2", .thread_id = "thread-1"};
    before = (int64_t)sst__now_ms();
    OK(sst_queue_enqueue(fx->q, &d, 0, E));
    after = (int64_t)sst__now_ms();
    get(fx, "run-2", &s);
    assert_in_range(s.created_at, before, after);
    assert_int_equal(s.updated_at, s.created_at);
    assert_string_equal(s.kwargs, "{}");
    assert_string_equal(s.metadata, "{}");
    assert_string_equal(s.assistant_id, "");
    assert_false(s.has_strategy);
    seen_clear(&s);

    FAILS(sst_queue_get(fx->q, "run-3", on_run, &s, E), SST_ENOTFOUND);
    MSG_HAS("run-3");
    assert_int_equal(s.calls, 0);
}

/* kwargs up to 16 MiB of JSON are kept; more is SST_ELIMIT naming the size (nothing stored). */
static void case_size_limit(void **state) {
    fixture *fx = *state;
    size_t big = (size_t)2 << 20;
    char *text = malloc(big + 1);
    memset(text, 'x', big);
    text[big] = '\0';
    sst_value *o = sst_object_set_take(sst_object_empty(), "blob", sst_string_new(text, NULL), E);
    assert_non_null(o);
    sst_queued_run r = {.run_id = "big", .thread_id = "t", .kwargs = o};
    OK(sst_queue_enqueue(fx->q, &r, 0, E));
    seen s = {0};
    get(fx, "big", &s);
    assert_int_equal(strlen(s.kwargs), big + strlen("{\"blob\":\"\"}"));
    seen_clear(&s);
    sst_value_unref(o);
    free(text);

    big = ((size_t)16 << 20) + 1;
    text = malloc(big + 1);
    memset(text, 'y', big);
    text[big] = '\0';
    o = sst_object_set_take(sst_object_empty(), "blob", sst_string_new(text, NULL), E);
    assert_non_null(o);
    sst_queued_run too = {.run_id = "too-big", .thread_id = "t", .kwargs = o};
    FAILS(sst_queue_enqueue(fx->q, &too, 0, E), SST_ELIMIT);
    MSG_HAS("too-big");
    MSG_HAS("16777228 bytes"); /* the JSON text: {"blob":"..."} */
    FAILS(sst_queue_get(fx->q, "too-big", on_run, &s, E), SST_ENOTFOUND);
    sst_value_unref(o);
    free(text);
}

/* ---- 2 duplicate ids ---- */

static void case_duplicate(void **state) {
    fixture *fx = *state;
    sst_value *k1 = tu_json("{\"n\":1}"), *k2 = tu_json("{\"n\":2}");
    sst_queued_run r = {.run_id = "r", .thread_id = "t1", .kwargs = k1};
    OK(sst_queue_enqueue(fx->q, &r, 0, E));
    sst_queued_run again = {.run_id = "r", .thread_id = "t2", .kwargs = k2};
    FAILS(sst_queue_enqueue(fx->q, &again, 0, E), SST_ECONFLICT);
    MSG_HAS("'r'");
    FAILS(sst_queue_enqueue(fx->q, &again, SST_QUEUE_IF_IDLE, E), SST_ECONFLICT);
    seen s = {0};
    get(fx, "r", &s);
    assert_string_equal(s.thread_id, "t1"); /* the first is kept */
    assert_string_equal(s.kwargs, "{\"n\":1}");
    seen_clear(&s);
    ids l;
    assert_string_equal(list(fx, NULL, -1, 0, 0, &l), "r");
    sst_value_unref(k1);
    sst_value_unref(k2);
}

/* ---- 3 list ---- */

static void case_list(void **state) {
    fixture *fx = *state;
    /* Enqueue order is not id order. */
    const char *runs[][2] = {{"r5", "a"}, {"r1", "b"}, {"r4", "a"}, {"r2", "c"},
                             {"r3", "a"}, {"r0", "b"}, {"r9", "a"}};
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
        enqueue(fx, runs[i][0], runs[i][1]);
    }
    ids l;
    assert_string_equal(list(fx, NULL, -1, 0, 0, &l), "r5,r1,r4,r2,r3,r0,r9");
    assert_string_equal(list(fx, "a", -1, 0, 0, &l), "r5,r4,r3,r9");
    assert_string_equal(list(fx, "a", -1, 1, 2, &l), "r4,r3");
    assert_string_equal(list(fx, "a", -1, 3, 5, &l), "r9");
    assert_string_equal(list(fx, "a", -1, 4, 0, &l), "");
    assert_string_equal(list(fx, NULL, -1, 2, 3, &l), "r4,r2,r3");
    assert_string_equal(list(fx, "nobody", -1, 0, 0, &l), "");
    /* Claim r5 (a) and r1 (b), finish r1: statuses. */
    uint64_t t5 = claim_expect(fx, "w", T0, "r5", 1);
    uint64_t t1 = claim_expect(fx, "w", T0, "r1", 1);
    OK(sst_queue_finish(fx->q, "r1", t1, SST_QUEUE_ERROR, T0 + 1, E));
    assert_string_equal(list(fx, NULL, SST_QUEUE_PENDING, 0, 0, &l), "r4,r2,r3,r0,r9");
    assert_string_equal(list(fx, NULL, SST_QUEUE_RUNNING, 0, 0, &l), "r5");
    assert_string_equal(list(fx, NULL, SST_QUEUE_ERROR, 0, 0, &l), "r1");
    assert_string_equal(list(fx, NULL, SST_QUEUE_SUCCESS, 0, 0, &l), "");
    assert_string_equal(list(fx, "a", SST_QUEUE_PENDING, 1, 0, &l), "r3,r9");
    assert_string_equal(list(fx, "b", SST_QUEUE_PENDING, 0, 0, &l), "r0");
    assert_string_equal(list(fx, "a", SST_QUEUE_RUNNING, 0, 1, &l), "r5");
    OK(sst_queue_finish(fx->q, "r5", t5, SST_QUEUE_SUCCESS, T0 + 2, E));
    /* The callback stops the listing. */
    memset(&l, 0, sizeof l);
    l.stop_after = 2;
    sst_queue_query all = {0};
    OK(sst_queue_list(fx->q, &all, on_id, &l, E));
    assert_string_equal(l.text, "r5,r1");
}

/* ---- 4 remove ---- */

static void case_remove(void **state) {
    fixture *fx = *state;
    enqueue(fx, "a1", "a");
    enqueue(fx, "b1", "b");
    enqueue(fx, "a2", "a");
    enqueue(fx, "b2", "b");
    claim_expect(fx, "w", T0, "a1", 1);
    OK(sst_queue_remove(fx->q, "b1", E));
    FAILS(sst_queue_remove(fx->q, "b1", E), SST_ENOTFOUND);
    MSG_HAS("b1");
    seen s = {0};
    FAILS(sst_queue_get(fx->q, "b1", on_run, &s, E), SST_ENOTFOUND);
    ids l;
    assert_string_equal(list(fx, NULL, -1, 0, 0, &l), "a1,a2,b2");
    OK(sst_queue_remove_thread(fx->q, "a", E)); /* a running run too */
    assert_string_equal(list(fx, NULL, -1, 0, 0, &l), "b2");
    OK(sst_queue_remove_thread(fx->q, "a", E)); /* nothing left: not an error */
    OK(sst_queue_remove_thread(fx->q, "nobody", E));
    claim_expect(fx, "w", T0, "b2", 1);
    FAILS(claim(fx, "w", T0, &s), SST_ENOTFOUND);
}

/* ---- 5 enqueue if idle ---- */

static void case_if_idle(void **state) {
    fixture *fx = *state;
    OK(enqueue_at(fx, "r1", "t", 0, SST_QUEUE_IF_IDLE));
    FAILS(enqueue_at(fx, "r2", "t", 0, SST_QUEUE_IF_IDLE), SST_EBUSY); /* r1 pending */
    MSG_HAS("'t'");
    MSG_HAS("r1");
    OK(enqueue_at(fx, "o1", "other", 0, SST_QUEUE_IF_IDLE)); /* other threads are free */
    uint64_t tok = claim_expect(fx, "w", T0, "r1", 1);
    FAILS(enqueue_at(fx, "r2", "t", 0, SST_QUEUE_IF_IDLE), SST_EBUSY); /* r1 running */
    seen s = {0};
    FAILS(sst_queue_get(fx->q, "r2", on_run, &s, E), SST_ENOTFOUND); /* nothing stored */
    OK(sst_queue_finish(fx->q, "r1", tok, SST_QUEUE_SUCCESS, T0 + 1, E));
    OK(enqueue_at(fx, "r2", "t", 0, SST_QUEUE_IF_IDLE)); /* its runs are finished */
    OK(enqueue_at(fx, "r3", "t", 0, 0));                 /* without the flag: queued behind */
    ids l;
    assert_string_equal(list(fx, "t", -1, 0, 0, &l), "r1,r2,r3");
}

/* ---- 6 claim ---- */

typedef struct reentry {
    fixture *fx;
    seen inner;
    sst_code got;
} reentry;

/* A claim callback that reads the queue it was called from. */
static bool on_claim_get(const sst_queued_run *run, void *user_data) {
    reentry *r = user_data;
    r->got = sst_queue_get(r->fx->q, run->run_id, on_run, &r->inner, NULL);
    return true;
}

static void case_claim(void **state) {
    fixture *fx = *state;
    enqueue(fx, "a1", "a");
    enqueue(fx, "b1", "b");
    enqueue(fx, "a2", "a");
    enqueue(fx, "c1", "c");
    seen s = {0};
    OK(claim(fx, "worker-1", T0, &s));
    assert_string_equal(s.run_id, "a1");
    assert_int_equal(s.status, SST_QUEUE_RUNNING);
    assert_string_equal(s.owner, "worker-1");
    assert_int_equal(s.lease_expires, T0 + LEASE);
    assert_int_equal(s.attempt, 1);
    assert_int_equal(s.updated_at, T0);
    assert_true(s.token != 0);
    uint64_t ta1 = s.token;
    seen_clear(&s);
    get(fx, "a1", &s); /* stored as the claim said */
    assert_int_equal(s.status, SST_QUEUE_RUNNING);
    assert_string_equal(s.owner, "worker-1");
    assert_int_equal(s.token, ta1);
    assert_int_equal(s.lease_expires, T0 + LEASE);
    seen_clear(&s);
    /* b1 next; a2 waits for a1 (one running run per thread); c1 is free. */
    uint64_t tb1 = claim_expect(fx, "worker-2", T0 + 1, "b1", 1);
    assert_true(tb1 != ta1);
    reentry re = {.fx = fx};
    OK(sst_queue_claim(fx->q, "worker-3", T0 + 2, LEASE, on_claim_get, &re, E));
    assert_int_equal(re.got, SST_OK);
    assert_string_equal(re.inner.run_id, "c1");
    assert_int_equal(re.inner.status, SST_QUEUE_RUNNING);
    seen_clear(&re.inner);
    FAILS(claim(fx, "worker-4", T0 + 3, &s), SST_ENOTFOUND);
    assert_int_equal(s.calls, 0);
    /* Finishing a1 frees its thread: a2 is claimed. */
    OK(sst_queue_finish(fx->q, "a1", ta1, SST_QUEUE_SUCCESS, T0 + 4, E));
    get(fx, "a1", &s);
    assert_int_equal(s.status, SST_QUEUE_SUCCESS);
    assert_false(s.has_owner);
    assert_int_equal(s.lease_expires, 0);
    assert_int_equal(s.token, 0);
    assert_int_equal(s.attempt, 1);
    assert_int_equal(s.updated_at, T0 + 4);
    seen_clear(&s);
    claim_expect(fx, "worker-4", T0 + 5, "a2", 1);
    FAILS(claim(fx, "worker-5", T0 + 6, &s), SST_ENOTFOUND);
    /* Finishing again with the same token: the claim is over. */
    FAILS(sst_queue_finish(fx->q, "a1", ta1, SST_QUEUE_ERROR, T0 + 7, E), SST_ECONFLICT);
    MSG_HAS("success");
}

/* ---- 7 run_after ---- */

static void case_run_after(void **state) {
    fixture *fx = *state;
    OK(enqueue_at(fx, "later", "t", T0 + 1000, 0));
    OK(enqueue_at(fx, "behind", "t", 0, 0)); /* same thread: waits for "later" */
    OK(enqueue_at(fx, "other", "u", 0, 0));
    seen s = {0};
    claim_expect(fx, "w", T0, "other", 1);
    FAILS(claim(fx, "w", T0 + 999, &s), SST_ENOTFOUND);
    uint64_t tok = claim_expect(fx, "w", T0 + 1000, "later", 1);
    FAILS(claim(fx, "w", T0 + 1001, &s), SST_ENOTFOUND);
    OK(sst_queue_finish(fx->q, "later", tok, SST_QUEUE_SUCCESS, T0 + 1002, E));
    claim_expect(fx, "w", T0 + 1003, "behind", 1);
}

/* ---- 8 lease expiry ---- */

static void case_lease_expiry(void **state) {
    fixture *fx = *state;
    enqueue(fx, "r1", "t");
    enqueue(fx, "r2", "t");
    seen s = {0};
    OK(sst_queue_claim(fx->q, "w1", T0, 1000, on_run, &s, E));
    assert_string_equal(s.run_id, "r1");
    uint64_t old = s.token;
    seen_clear(&s);
    FAILS(claim(fx, "w2", T0 + 500, &s), SST_ENOTFOUND);
    FAILS(claim(fx, "w2", T0 + 1000, &s), SST_ENOTFOUND); /* expires at T0 + 1000: not before */
    /* Expired: r1 again (older than r2), attempt 2, a new token. */
    OK(sst_queue_claim(fx->q, "w2", T0 + 1001, 1000, on_run, &s, E));
    assert_string_equal(s.run_id, "r1");
    assert_int_equal(s.attempt, 2);
    assert_string_equal(s.owner, "w2");
    assert_int_equal(s.lease_expires, T0 + 2001);
    uint64_t now_tok = s.token;
    assert_true(now_tok != old && now_tok != 0);
    seen_clear(&s);
    /* The old holder wakes up: every call fails and changes nothing. */
    char *cancel = (char *)"unset";
    FAILS(sst_queue_renew(fx->q, "r1", old, T0 + 1100, 1000, &cancel, E), SST_ECONFLICT);
    assert_null(cancel);
    MSG_HAS("lease lost");
    MSG_HAS("w2");
    FAILS(sst_queue_finish(fx->q, "r1", old, SST_QUEUE_SUCCESS, T0 + 1100, E), SST_ECONFLICT);
    MSG_HAS("r1");
    FAILS(sst_queue_release(fx->q, "r1", old, T0 + 1100, E), SST_ECONFLICT);
    get(fx, "r1", &s);
    assert_int_equal(s.status, SST_QUEUE_RUNNING);
    assert_string_equal(s.owner, "w2");
    assert_int_equal(s.token, now_tok);
    assert_int_equal(s.lease_expires, T0 + 2001);
    seen_clear(&s);
    /* The holder renews: the lease moves; past the old expiry, nothing is claimable. */
    OK(sst_queue_renew(fx->q, "r1", now_tok, T0 + 1900, 5000, &cancel, E));
    assert_null(cancel);
    get(fx, "r1", &s);
    assert_int_equal(s.lease_expires, T0 + 6900);
    assert_int_equal(s.updated_at, T0 + 1900);
    seen_clear(&s);
    FAILS(claim(fx, "w3", T0 + 3000, &s), SST_ENOTFOUND);
    OK(sst_queue_finish(fx->q, "r1", now_tok, SST_QUEUE_TIMEOUT, T0 + 3001, E));
    FAILS(sst_queue_renew(fx->q, "r1", now_tok, T0 + 3002, 1000, NULL, E), SST_ECONFLICT);
    MSG_HAS("timeout");
    FAILS(sst_queue_renew(fx->q, "nope", now_tok, T0 + 3002, 1000, NULL, E), SST_ECONFLICT);
    MSG_HAS("no longer in the queue");
    claim_expect(fx, "w3", T0 + 3003, "r2", 1);
}

/* ---- 9 release ---- */

static void case_release(void **state) {
    fixture *fx = *state;
    enqueue(fx, "r1", "t");
    enqueue(fx, "r2", "t");
    uint64_t tok = claim_expect(fx, "w1", T0, "r1", 1);
    OK(sst_queue_release(fx->q, "r1", tok, T0 + 10, E));
    seen s = {0};
    get(fx, "r1", &s);
    assert_int_equal(s.status, SST_QUEUE_PENDING);
    assert_false(s.has_owner);
    assert_int_equal(s.token, 0);
    assert_int_equal(s.lease_expires, 0);
    assert_int_equal(s.attempt, 1); /* kept */
    assert_int_equal(s.updated_at, T0 + 10);
    seen_clear(&s);
    FAILS(sst_queue_release(fx->q, "r1", tok, T0 + 11, E), SST_ECONFLICT);
    MSG_HAS("pending");
    FAILS(sst_queue_finish(fx->q, "r1", tok, SST_QUEUE_SUCCESS, T0 + 11, E), SST_ECONFLICT);
    uint64_t again = claim_expect(fx, "w2", T0 + 12, "r1", 2); /* still first in its thread */
    assert_true(again != tok);
    OK(sst_queue_finish(fx->q, "r1", again, SST_QUEUE_SUCCESS, T0 + 13, E));
}

/* ---- 10 cancel ---- */

static void case_cancel(void **state) {
    fixture *fx = *state;
    enqueue(fx, "p", "t1");
    enqueue(fx, "r", "t2");
    enqueue(fx, "f", "t3");
    OK(sst_queue_remove(fx->q, "p", E)); /* p goes to the end: r and f are claimed first */
    enqueue(fx, "p", "t1");
    uint64_t tr = claim_expect(fx, "w", T0, "r", 1);
    uint64_t tf = claim_expect(fx, "w", T0, "f", 1);
    OK(sst_queue_finish(fx->q, "f", tf, SST_QUEUE_SUCCESS, T0 + 1, E));
    /* Pending: finished at once as interrupted. */
    sst_queue_status st = SST_QUEUE_RUNNING;
    OK(sst_queue_cancel(fx->q, "p", "interrupt", T0 + 2, &st, E));
    assert_int_equal(st, SST_QUEUE_INTERRUPTED);
    seen s = {0};
    get(fx, "p", &s);
    assert_int_equal(s.status, SST_QUEUE_INTERRUPTED);
    assert_string_equal(s.cancel, "interrupt");
    assert_int_equal(s.updated_at, T0 + 2);
    seen_clear(&s);
    /* Running: keeps running, its holder sees the cancel when it renews. */
    char *cancel = NULL;
    OK(sst_queue_renew(fx->q, "r", tr, T0 + 3, LEASE, &cancel, E));
    assert_null(cancel);
    OK(sst_queue_cancel(fx->q, "r", "rollback", T0 + 4, &st, E));
    assert_int_equal(st, SST_QUEUE_RUNNING);
    get(fx, "r", &s);
    assert_int_equal(s.status, SST_QUEUE_RUNNING);
    assert_string_equal(s.cancel, "rollback");
    assert_int_equal(s.token, tr);
    seen_clear(&s);
    OK(sst_queue_renew(fx->q, "r", tr, T0 + 5, LEASE, &cancel, E));
    assert_non_null(cancel);
    assert_string_equal(cancel, "rollback");
    sst_free(cancel);
    OK(sst_queue_renew(fx->q, "r", tr, T0 + 6, LEASE, NULL, E)); /* NULL: not interested */
    OK(sst_queue_finish(fx->q, "r", tr, SST_QUEUE_INTERRUPTED, T0 + 7, E));
    /* Finished: left as it is. */
    OK(sst_queue_cancel(fx->q, "f", "interrupt", T0 + 8, &st, E));
    assert_int_equal(st, SST_QUEUE_SUCCESS);
    get(fx, "f", &s);
    assert_int_equal(s.status, SST_QUEUE_SUCCESS);
    assert_false(s.has_cancel);
    assert_int_equal(s.updated_at, T0 + 1);
    seen_clear(&s);
    OK(sst_queue_cancel(fx->q, "p", "rollback", T0 + 9, NULL, E)); /* finished now: no change */
    get(fx, "p", &s);
    assert_string_equal(s.cancel, "interrupt");
    seen_clear(&s);
    FAILS(sst_queue_cancel(fx->q, "nope", "interrupt", T0, &st, E), SST_ENOTFOUND);
    MSG_HAS("nope");
    FAILS(claim(fx, "w", T0 + 10, &s), SST_ENOTFOUND); /* the interrupted run is not claimed */
}

/* ---- 11 arguments ---- */

static void case_arguments(void **state) {
    fixture *fx = *state;
    sst_queue *q = fx->q;
    seen s = {0};
    sst_value *arr = tu_json("[1]");
    sst_queued_run ok = {.run_id = "r", .thread_id = "t"};
    sst_queued_run bad[] = {
        {.run_id = NULL, .thread_id = "t"},
        {.run_id = "", .thread_id = "t"},
        {.run_id = "r", .thread_id = NULL},
        {.run_id = "r", .thread_id = ""},
        {.run_id = "r", .thread_id = "t", .kwargs = arr},
        {.run_id = "r", .thread_id = "t", .metadata = arr},
        {.run_id = "r", .thread_id = "t", .run_after = -1},
    };
    const char *names[] = {"run_id", "run_id",   "thread_id", "thread_id",
                           "kwargs", "metadata", "run_after"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        FAILS(sst_queue_enqueue(q, &bad[i], 0, E), SST_EINVAL);
        MSG_HAS(names[i]);
    }
    sst_value_unref(arr);
    FAILS(sst_queue_enqueue(q, NULL, 0, E), SST_EINVAL);
    FAILS(sst_queue_enqueue(NULL, &ok, 0, E), SST_EINVAL);
    MSG_HAS("NULL queue");
    FAILS(sst_queue_enqueue(q, &ok, 0x80, E), SST_EINVAL);
    MSG_HAS("flags");
    ids l;
    assert_string_equal(list(fx, NULL, -1, 0, 0, &l), ""); /* nothing was stored */
    OK(sst_queue_enqueue(q, &ok, 0, E));

    FAILS(sst_queue_get(q, NULL, on_run, &s, E), SST_EINVAL);
    FAILS(sst_queue_get(q, "", on_run, &s, E), SST_EINVAL);
    FAILS(sst_queue_get(q, "r", NULL, &s, E), SST_EINVAL);
    MSG_HAS("callback");
    sst_queue_query query = {.thread_id = ""};
    FAILS(sst_queue_list(q, &query, on_id, &l, E), SST_EINVAL);
    MSG_HAS("thread_id");
    sst_queue_query by = {.by_status = true, .status = (sst_queue_status)17};
    FAILS(sst_queue_list(q, &by, on_id, &l, E), SST_EINVAL);
    FAILS(sst_queue_list(q, NULL, on_id, &l, E), SST_EINVAL);
    FAILS(sst_queue_remove(q, "", E), SST_EINVAL);
    FAILS(sst_queue_remove_thread(q, NULL, E), SST_EINVAL);
    FAILS(sst_queue_claim(q, NULL, T0, LEASE, on_run, &s, E), SST_EINVAL);
    MSG_HAS("owner");
    FAILS(sst_queue_claim(q, "", T0, LEASE, on_run, &s, E), SST_EINVAL);
    FAILS(sst_queue_claim(q, "w", T0, 0, on_run, &s, E), SST_EINVAL);
    MSG_HAS("lease_ms");
    FAILS(sst_queue_claim(q, "w", T0, -5, on_run, &s, E), SST_EINVAL);
    FAILS(sst_queue_claim(q, "w", T0, LEASE, NULL, NULL, E), SST_EINVAL);
    assert_int_equal(s.calls, 0); /* nothing was claimed by the bad calls */
    uint64_t tok = claim_expect(fx, "w", T0, "r", 1);
    char *cancel = (char *)"unset";
    FAILS(sst_queue_renew(q, "r", tok, T0, 0, &cancel, E), SST_EINVAL);
    assert_null(cancel);
    FAILS(sst_queue_renew(q, "", tok, T0, LEASE, NULL, E), SST_EINVAL);
    FAILS(sst_queue_finish(q, "r", tok, SST_QUEUE_RUNNING, T0, E), SST_EINVAL);
    MSG_HAS("not final");
    FAILS(sst_queue_finish(q, "r", tok, SST_QUEUE_PENDING, T0, E), SST_EINVAL);
    FAILS(sst_queue_finish(q, "r", tok, (sst_queue_status)9, T0, E), SST_EINVAL);
    FAILS(sst_queue_finish(q, NULL, tok, SST_QUEUE_SUCCESS, T0, E), SST_EINVAL);
    FAILS(sst_queue_release(q, "", tok, T0, E), SST_EINVAL);
    FAILS(sst_queue_cancel(q, "r", "", T0, NULL, E), SST_EINVAL);
    MSG_HAS("action");
    FAILS(sst_queue_cancel(q, "r", NULL, T0, NULL, E), SST_EINVAL);
    FAILS(sst_queue_cancel(NULL, "r", "x", T0, NULL, E), SST_EINVAL);
    /* None of them touched the claim. */
    get(fx, "r", &s);
    assert_int_equal(s.status, SST_QUEUE_RUNNING);
    assert_int_equal(s.token, tok);
    assert_false(s.has_cancel);
    seen_clear(&s);
    /* NULL errors are fine. */
    assert_int_equal(sst_queue_get(q, "zz", on_run, &s, NULL), SST_ENOTFOUND);
    assert_int_equal(sst_queue_claim(q, "", T0, LEASE, on_run, &s, NULL), SST_EINVAL);
}

/* ---- 12 owners ---- */

/* This process's identity without its last two fields ("HOST BOOT NS"). */
static void place_of_self(char *out, size_t n) {
    char me[SST__OWNER_MAX];
    sst__owner_self(me, NULL);
    char *last = strrchr(me, ' ');
    assert_non_null(last);
    *last = '\0';
    last = strrchr(me, ' ');
    assert_non_null(last);
    *last = '\0';
    snprintf(out, n, "%s", me);
}

/* A pid that was a process of ours and is gone. */
static pid_t dead_pid(void) {
    pid_t pid = fork();
    if (pid == 0) {
        _exit(0);
    }
    assert_true(pid > 0);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    return pid;
}

/* Claims run @p id for @p owner at @p now (60 s lease). */
static void held_by(fixture *fx, const char *id, const char *owner, int64_t now) {
    seen s = {0};
    OK(claim(fx, owner, now, &s));
    assert_string_equal(s.run_id, id);
    assert_string_equal(s.owner, owner);
    seen_clear(&s);
}

static void case_owners(void **state) {
    fixture *fx = *state;
    char place[SST__OWNER_MAX], me[SST__OWNER_MAX], gone[3][SST__OWNER_MAX + 32];
    char alive[SST__OWNER_MAX + 32];
    place_of_self(place, sizeof place);
    sst__owner_self(me, NULL);
    pid_t dead = dead_pid();
    /* Gone: a dead pid (bare identity, and with a worker suffix); our pid with another start. */
    snprintf(gone[0], sizeof gone[0], "%s %d 12345", place, (int)dead);
    snprintf(gone[1], sizeof gone[1], "%s %d 12345 w3", place, (int)dead);
    snprintf(gone[2], sizeof gone[2], "%s %d %llu w1", place, (int)getpid(),
             strtoull(strrchr(me, ' ') + 1, NULL, 10) + 1);
    /* Alive: ourselves, with a worker suffix; elsewhere: another host cannot be probed. */
    snprintf(alive, sizeof alive, "%s w0", me);
    enqueue(fx, "alive", "t-alive");
    enqueue(fx, "elsewhere", "t-elsewhere");
    enqueue(fx, "free-text", "t-free-text");
    held_by(fx, "alive", alive, T0);
    held_by(fx, "elsewhere", "otherhost 0f0f-boot pid:[1] 1 1 w0", T0);
    held_by(fx, "free-text", "worker on some box", T0);
    /* A run whose holder is gone is claimed before any newer one: claim the newest first. */
    OK(enqueue_at(fx, "dead", "t-dead", T0 + 20, 0));
    OK(enqueue_at(fx, "dead-w3", "t-dead-w3", T0 + 10, 0));
    OK(enqueue_at(fx, "reused", "t-reused", 0, 0));
    held_by(fx, "reused", gone[2], T0);
    held_by(fx, "dead-w3", gone[1], T0 + 10);
    held_by(fx, "dead", gone[0], T0 + 20);
    /* One millisecond later, the three whose holders are gone are claimed again. */
    seen s = {0};
    claim_expect(fx, "new", T0 + 21, "dead", 2);
    claim_expect(fx, "new", T0 + 21, "dead-w3", 2);
    claim_expect(fx, "new", T0 + 21, "reused", 2);
    FAILS(claim(fx, "new", T0 + 21, &s), SST_ENOTFOUND);
    /* The others wait for their lease. */
    FAILS(claim(fx, "new", T0 + LEASE, &s), SST_ENOTFOUND);
    claim_expect(fx, "new", T0 + LEASE + 1, "alive", 2);
    claim_expect(fx, "new", T0 + LEASE + 1, "elsewhere", 2);
    claim_expect(fx, "new", T0 + LEASE + 1, "free-text", 2);
    FAILS(claim(fx, "new", T0 + LEASE + 1, &s), SST_ENOTFOUND);
}

/* ---- 13 threads ---- */

#define C_RUNS    2000
#define C_THREADS 50
#define C_WORKERS 4

#define C_PRODUCERS 4

/*
 * Workers claiming and finishing runs "r<i>" on threads "t<crowd_thread(i)>",
 * enqueued first, or meanwhile by producers (producer i % producers makes
 * run i, so that several producers feed each thread at once).
 */
typedef struct crowd {
    int runs, threads;          /* at most C_RUNS and C_THREADS */
    int producers;              /* 0: all enqueued before; else at most C_PRODUCERS */
    int hold_us;                /* how long a worker holds a run before finishing it */
    atomic_int claims[C_RUNS];  /* claims of each run */
    atomic_int busy[C_THREADS]; /* runs of each thread being worked on now */
    /* The index of the last claimed run of each thread and producer: a producer's runs
     * of a thread are claimed in the order it enqueued them. */
    atomic_int last[C_THREADS * C_PRODUCERS];
    atomic_int finished;             /* runs finished */
    atomic_int bad;                  /* broken promises seen */
    char problem[SST_ERROR_MSG_MAX]; /* the first one (written by whoever set bad to 1) */
} crowd;

typedef struct worker {
    crowd *c;
    sst_queue *q;
    int id;
    int claimed;
} worker;

static void crowd_fail(crowd *c, const char *what, int i, const char *msg) {
    if (atomic_fetch_add(&c->bad, 1) == 0) {
        snprintf(c->problem, sizeof c->problem, "%.40s %d %.200s", what, i, msg);
    }
}

typedef struct claimed {
    int index; /* run "r<index>" on thread "t<crowd_thread(index)>" */
    uint64_t token;
} claimed;

static int crowd_producers(const crowd *c) {
    return c->producers > 0 ? c->producers : 1;
}

static int crowd_thread(const crowd *c, int i) {
    return i / crowd_producers(c) % c->threads;
}

static bool on_crowd_run(const sst_queued_run *run, void *user_data) {
    claimed *c = user_data;
    c->index = (int)strtol(run->run_id + 1, NULL, 10);
    c->token = run->token;
    return true;
}

/* Works on one claimed run: checks the promises, then finishes it. */
static bool work_one(worker *w, const claimed *got, sst_error *err) {
    crowd *c = w->c;
    int i = got->index, t = crowd_thread(c, i);
    if (atomic_fetch_add(&c->claims[i], 1) != 0) {
        crowd_fail(c, "run", i, "claimed twice");
    }
    if (atomic_fetch_add(&c->busy[t], 1) != 0) {
        crowd_fail(c, "thread", t, "has two runs running at once");
    }
    if (atomic_exchange(&c->last[t * C_PRODUCERS + i % crowd_producers(c)], i) >= i) {
        crowd_fail(c, "thread", t, "had its runs claimed out of order");
    }
    if (c->hold_us > 0) {
        usleep((useconds_t)c->hold_us); /* a claim made meanwhile must not take the thread */
    } else {
        sched_yield(); /* give another worker the chance to break the rule */
    }
    atomic_fetch_sub(&c->busy[t], 1);
    char id[16];
    snprintf(id, sizeof id, "r%d", i);
    sst_code rc;
    do { /* SST_EUNAVAILABLE: the other handle held the file past the busy timeout; retry */
        rc = sst_queue_finish(w->q, id, got->token, SST_QUEUE_SUCCESS, (int64_t)sst__now_ms(), err);
    } while (rc == SST_EUNAVAILABLE);
    if (rc != SST_OK) {
        crowd_fail(c, "finishing run", i, err->msg);
        return false;
    }
    atomic_fetch_add(&c->finished, 1);
    return true;
}

static void *work(void *arg) {
    worker *w = arg;
    crowd *c = w->c;
    char owner[32];
    snprintf(owner, sizeof owner, "worker-%d", w->id);
    while (atomic_load(&c->finished) < c->runs && atomic_load(&c->bad) == 0) {
        sst_error err;
        claimed got = {-1, 0};
        sst_code rc =
            sst_queue_claim(w->q, owner, (int64_t)sst__now_ms(), LEASE, on_crowd_run, &got, &err);
        if (rc == SST_ENOTFOUND || rc == SST_EUNAVAILABLE) {
            sched_yield();
            continue;
        }
        if (rc != SST_OK || got.index < 0 || got.index >= c->runs) {
            crowd_fail(c, "claim by worker", w->id, rc != SST_OK ? err.msg : "bad run id");
            break;
        }
        w->claimed++;
        if (!work_one(w, &got, &err)) {
            break;
        }
    }
    return NULL;
}

typedef struct producer {
    crowd *c;
    sst_queue *q;
    int id;
} producer;

/* Enqueues the runs of producer p->id, one after the other. */
static void *produce(void *arg) {
    producer *p = arg;
    crowd *c = p->c;
    for (int i = p->id; i < c->runs && atomic_load(&c->bad) == 0; i += c->producers) {
        char id[16], thread[16];
        snprintf(id, sizeof id, "r%d", i);
        snprintf(thread, sizeof thread, "t%d", crowd_thread(c, i));
        sst_queued_run r = {.run_id = id, .thread_id = thread};
        sst_error err;
        sst_code rc;
        do {
            rc = sst_queue_enqueue(p->q, &r, 0, &err);
        } while (rc == SST_EUNAVAILABLE);
        if (rc != SST_OK) {
            crowd_fail(c, "enqueueing run", i, err.msg);
        }
    }
    return NULL;
}

/*
 * Makes @p runs runs over @p threads threads, enqueued before the workers
 * start (@p producers 0) or meanwhile by @p producers producers spread over
 * the queues; lets @p per_handle workers on each of the @p handles queues
 * claim and finish them all, and checks: each run claimed once, a producer's
 * runs of a thread in the order it enqueued them, never two runs of one
 * thread at once, all finished.
 */
static void crowd_run(fixture *fx, sst_queue **qs, int handles, int per_handle, int runs,
                      int threads, int producers, int hold_us) {
    assert_true(runs <= C_RUNS && threads <= C_THREADS && producers <= C_PRODUCERS &&
                handles * per_handle <= 16);
    crowd *c = calloc(1, sizeof *c);
    c->runs = runs;
    c->threads = threads;
    c->producers = producers;
    c->hold_us = hold_us;
    for (int t = 0; t < C_THREADS * C_PRODUCERS; t++) {
        atomic_init(&c->last[t], -1);
    }
    for (int i = 0; producers == 0 && i < runs; i++) {
        char id[16], thread[16];
        snprintf(id, sizeof id, "r%d", i);
        snprintf(thread, sizeof thread, "t%d", crowd_thread(c, i));
        enqueue(fx, id, thread);
    }
    worker w[16];
    pthread_t th[16], pth[C_PRODUCERS];
    producer pr[C_PRODUCERS];
    int n = handles * per_handle;
    double t0 = tu_now_s();
    for (int i = 0; i < producers; i++) {
        pr[i] = (producer){.c = c, .q = qs[i % handles], .id = i};
        assert_int_equal(pthread_create(&pth[i], NULL, produce, &pr[i]), 0);
    }
    for (int i = 0; i < n; i++) {
        w[i] = (worker){.c = c, .q = qs[i % handles], .id = i};
        assert_int_equal(pthread_create(&th[i], NULL, work, &w[i]), 0);
    }
    for (int i = 0; i < producers; i++) {
        pthread_join(pth[i], NULL);
    }
    for (int i = 0; i < n; i++) {
        pthread_join(th[i], NULL);
    }
    double secs = tu_now_s() - t0;
    if (atomic_load(&c->bad) != 0) {
        fail_msg("%s: %d problems, the first: %s", fx->be->name, atomic_load(&c->bad), c->problem);
    }
    assert_int_equal(atomic_load(&c->finished), runs);
    int total = 0;
    for (int i = 0; i < n; i++) {
        total += w[i].claimed;
    }
    assert_int_equal(total, runs);
    for (int i = 0; i < runs; i++) {
        assert_int_equal(atomic_load(&c->claims[i]), 1);
    }
    print_message("%s: %d workers on %d handle(s)%s: %d runs over %d threads in %.2f s\n",
                  fx->be->name, n, handles, producers > 0 ? ", enqueued meanwhile" : "", runs,
                  threads, secs);
    free(c);
    ids l;
    list(fx, NULL, SST_QUEUE_SUCCESS, (size_t)runs - 1, 0, &l);
    assert_int_equal(l.n, 1); /* all finished as success */
    assert_string_equal(list(fx, NULL, SST_QUEUE_PENDING, 0, 0, &l), "");
    assert_string_equal(list(fx, NULL, SST_QUEUE_RUNNING, 0, 0, &l), "");
}

static void case_threads(void **state) {
    fixture *fx = *state;
    int handles = fx->be->shared ? 2 : 1;
    sst_queue *qs[2] = {fx->q, NULL};
    if (handles == 2) {
        qs[1] = fx->be->open(fx->dir, E);
        assert_non_null(qs[1]);
    }
    crowd_run(fx, qs, handles, C_WORKERS, C_RUNS, C_THREADS, 0, 0);
    sst_queue_free(qs[1]);
}

/* ---- 14 claim speed ---- */

/* Sanitizers make SQLite 10 to 50 times slower: measure with fewer runs there. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SPEED_RUNS 1000
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SPEED_RUNS 1000
#endif
#endif
#ifndef SPEED_RUNS
#define SPEED_RUNS 10000
#endif

static bool on_token(const sst_queued_run *run, void *user_data) {
    *(uint64_t *)user_data = run->token;
    *((uint64_t *)user_data + 1) = (uint64_t)strtoull(run->run_id + 1, NULL, 10);
    return true;
}

static void case_claim_speed(void **state) {
    fixture *fx = *state;
    /* Each PostgreSQL call is a few round trips to the server: a fifth of the runs there. */
    const int N = fx->be->pg ? SPEED_RUNS / 5 : SPEED_RUNS;
    for (int i = 0; i < N; i++) {
        char id[16], thread[16];
        snprintf(id, sizeof id, "r%d", i);
        snprintf(thread, sizeof thread, "t%d", i % (N / 10));
        enqueue(fx, id, thread);
    }
    /* As a server's worker: this process's identity (each claim probes its holders). */
    char me[SST__OWNER_MAX], w[SST__OWNER_MAX + 8];
    sst__owner_self(me, NULL);
    snprintf(w, sizeof w, "%s w0", me);
    /* Claim and finish them all (threads of 10 runs each: each claim finds the head). */
    double t0 = tu_now_s();
    for (int i = 0; i < N; i++) {
        uint64_t got[2] = {0, 0};
        OK(sst_queue_claim(fx->q, w, T0 + i, LEASE, on_token, got, E));
        char id[16];
        snprintf(id, sizeof id, "r%llu", (unsigned long long)got[1]);
        OK(sst_queue_finish(fx->q, id, got[0], SST_QUEUE_SUCCESS, T0 + i, E));
    }
    double claim_finish = tu_now_s() - t0;
    /* Claims alone: as many pending runs, each on its own thread, none finished. */
    for (int i = 0; i < N; i++) {
        char id[16], thread[16];
        snprintf(id, sizeof id, "s%d", i);
        snprintf(thread, sizeof thread, "u%d", i);
        enqueue(fx, id, thread);
    }
    t0 = tu_now_s();
    for (int i = 0; i < N; i++) {
        uint64_t got[2];
        OK(sst_queue_claim(fx->q, w, T0 + N, LEASE, on_token, got, E));
    }
    double claim_only = tu_now_s() - t0;
    seen s = {0};
    FAILS(claim(fx, w, T0 + N, &s), SST_ENOTFOUND);
    print_message("%s: claim+finish %.0f/s, claim %.0f/s (%d pending runs)\n", fx->be->name,
                  N / claim_finish, N / claim_only, N);
}

/* ---- 15 persistence ---- */

static void case_persistence(void **state) {
    fixture *fx = *state;
    if (!fx->be->shared) {
        skip();
    }
    sst_value *k = tu_json("{\"input\":{\"x\":1}}");
    sst_queued_run r = {.run_id = "r1", .thread_id = "t", .kwargs = k, .created_at = 7};
    OK(sst_queue_enqueue(fx->q, &r, 0, E));
    sst_value_unref(k);
    enqueue(fx, "r2", "t");
    enqueue(fx, "r3", "u");
    uint64_t tok = claim_expect(fx, "w", T0, "r1", 1);
    OK(sst_queue_cancel(fx->q, "r3", "interrupt", T0, NULL, E));
    fx_reopen(fx);
    seen s = {0};
    get(fx, "r1", &s);
    assert_int_equal(s.status, SST_QUEUE_RUNNING);
    assert_int_equal(s.token, tok);
    assert_int_equal(s.created_at, 7);
    assert_string_equal(s.kwargs, "{\"input\":{\"x\":1}}");
    seen_clear(&s);
    get(fx, "r3", &s);
    assert_int_equal(s.status, SST_QUEUE_INTERRUPTED);
    seen_clear(&s);
    ids l;
    assert_string_equal(list(fx, NULL, -1, 0, 0, &l), "r1,r2,r3");
    FAILS(claim(fx, "w", T0 + 1, &s), SST_ENOTFOUND); /* r1 still holds its thread */
    OK(sst_queue_finish(fx->q, "r1", tok, SST_QUEUE_SUCCESS, T0 + 2, E)); /* the token lives on */
    claim_expect(fx, "w", T0 + 3, "r2", 1);
    enqueue(fx, "r4", "v"); /* enqueue order continues after the reopen */
    assert_string_equal(list(fx, NULL, -1, 0, 0, &l), "r1,r2,r3,r4");
}

/* ---- 16 a worker killed mid-run ---- */

static void case_killed_worker(void **state) {
    fixture *fx = *state;
    if (!fx->be->shared) {
        skip();
    }
    enqueue(fx, "r1", "t");
    enqueue(fx, "r2", "t");
    /* SQLite connections must not cross a fork: the child opens its own. */
    sst_queue_free(fx->q);
    fx->q = NULL;
    pid_t child = fork();
    if (child == 0) {
        char me[SST__OWNER_MAX], owner[SST__OWNER_MAX + 8];
        sst__owner_self(me, NULL);
        snprintf(owner, sizeof owner, "%s w0", me); /* as the server's worker 0 */
        sst_queue *q = fx->be->open(fx->dir, NULL);
        seen s = {0};
        bool ok = q != NULL && sst_queue_claim(q, owner, (int64_t)sst__now_ms(), LEASE, on_run, &s,
                                               NULL) == SST_OK;
        _exit(ok && strcmp(s.run_id, "r1") == 0 ? 0 : 1); /* dies holding r1 */
    }
    assert_true(child > 0);
    int status = 0;
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    fx_reopen(fx);
    seen s = {0};
    get(fx, "r1", &s);
    assert_int_equal(s.status, SST_QUEUE_RUNNING);
    char want[64];
    snprintf(want, sizeof want, " %d ", (int)child);
    assert_non_null(strstr(s.owner, want)); /* the child's identity */
    assert_true(s.lease_expires > (int64_t)sst__now_ms() + LEASE / 2);
    seen_clear(&s);
    /* At once, not in 60 s: the holder's process is gone. */
    OK(claim(fx, "restarted", (int64_t)sst__now_ms(), &s));
    assert_string_equal(s.run_id, "r1");
    assert_int_equal(s.attempt, 2);
    assert_string_equal(s.owner, "restarted");
    seen_clear(&s);
}

/* ---- PostgreSQL only ---- */

/* The URL of the fixture's schema (open_postgres kept it in DIR/pg-url). */
static void pg_url_of(const fixture *fx, char *url, size_t n) {
    char path[128];
    snprintf(path, sizeof path, "%s/pg-url", fx->dir);
    char *text = tu_read_file(path, NULL);
    assert_non_null(text);
    snprintf(url, n, "%s", text);
    free(text);
}

/*
 * Four queues, a pool each (four processes, as far as PostgreSQL can tell),
 * with three workers each, claim from one schema at once: many runs over few
 * threads, each held a while, so that claims of one thread keep meeting. Each
 * run is claimed once, a thread never has two live runs, and its runs are
 * claimed in enqueue order.
 */
static void pg_processes(void **state) {
    fixture *fx = *state;
    enum { HANDLES = 4, PER_HANDLE = 3 };
    sst_queue *qs[HANDLES] = {fx->q};
    for (int i = 1; i < HANDLES; i++) {
        qs[i] = fx->be->open(fx->dir, E);
        assert_non_null(qs[i]);
    }
    /* 200 runs each time: enough for every worker to meet every other many times; 600
     * took over 300 s on a 2-core machine with a load of 14 (12 workers poll 4 threads). */
    crowd_run(fx, qs, HANDLES, PER_HANDLE, 200, 4, 0, 300);
    /* The same while four producers enqueue meanwhile, each on every thread: their
     * enqueues of one thread commit in any order, which SKIP LOCKED alone gets wrong. */
    OK(sst_queue_remove_thread(fx->q, "t0", E));
    OK(sst_queue_remove_thread(fx->q, "t1", E));
    OK(sst_queue_remove_thread(fx->q, "t2", E));
    OK(sst_queue_remove_thread(fx->q, "t3", E));
    crowd_run(fx, qs, HANDLES, PER_HANDLE, 200, 3, C_PRODUCERS, 0);
    for (int i = 1; i < HANDLES; i++) {
        sst_queue_free(qs[i]);
    }
}

/* A connection of the test's own to the fixture's schema (another process's claim, say). */
static PGconn *pg_side(const fixture *fx) {
    char url[700];
    pg_url_of(fx, url, sizeof url);
    PGconn *c = PQconnectdb(url);
    if (PQstatus(c) != CONNECTION_OK) {
        fail_msg("connecting: %s", PQerrorMessage(c));
    }
    return c;
}

static void pg_side_exec(PGconn *c, const char *sql) {
    PGresult *r = PQexec(c, sql);
    ExecStatusType st = PQresultStatus(r);
    if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
        fail_msg("%s: %s", sql, PQresultErrorMessage(r));
    }
    PQclear(r);
}

typedef struct idle_job {
    sst_queue *q;
    atomic_bool committed; /* the test committed the transaction holding the lock */
    sst_code rc;
    bool after_commit; /* committed was true when the enqueue returned */
} idle_job;

static void *enqueue_if_idle(void *arg) {
    idle_job *j = arg;
    sst_queued_run r = {.run_id = "v1", .thread_id = "v"};
    j->rc = sst_queue_enqueue(j->q, &r, SST_QUEUE_IF_IDLE, NULL);
    j->after_commit = atomic_load(&j->committed);
    return NULL;
}

/*
 * Waits until a session other than @p side waits for the advisory lock of
 * thread @p thread (pg_locks), which @p side holds; fails when none does
 * within 10 s (scaled by tu_time_scale).
 */
static void pg_wait_for_lock_waiter(PGconn *side, const char *thread) {
    const char *params[] = {thread};
    double end = tu_now_s() + 10 * tu_time_scale();
    for (;;) {
        PGresult *r = PQexecParams(side,
                                   "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND "
                                   "NOT granted AND classid = hashtext(current_schema())::oid AND "
                                   "objid = hashtext($1)::oid AND objsubid = 2",
                                   1, NULL, params, NULL, NULL, 0);
        if (PQresultStatus(r) != PGRES_TUPLES_OK) {
            fail_msg("pg_locks: %s", PQresultErrorMessage(r));
        }
        bool waiting = strcmp(PQgetvalue(r, 0, 0), "0") != 0;
        PQclear(r);
        if (waiting) {
            return;
        }
        if (tu_now_s() > end) {
            fail_msg("nobody waits for the lock of thread '%s'", thread);
        }
        usleep(5000);
    }
}

/*
 * While a claim of thread t is under way elsewhere (its transaction holds the
 * thread's advisory lock), claims skip t and take other threads' runs; once it
 * ends, t's run is claimed. This is what keeps two claims of one thread from
 * both succeeding when their snapshots differ (postgres_claim.c).
 */
static void pg_thread_lock(void **state) {
    fixture *fx = *state;
    enqueue(fx, "t1", "t");
    enqueue(fx, "u1", "u");
    PGconn *side = pg_side(fx);
    pg_side_exec(side, "BEGIN; SELECT pg_advisory_xact_lock(hashtext(current_schema()), "
                       "hashtext('t'))");
    seen s = {0};
    claim_expect(fx, "w", T0, "u1", 1);
    FAILS(claim(fx, "w", T0, &s), SST_ENOTFOUND);
    pg_side_exec(side, "COMMIT");
    claim_expect(fx, "w", T0, "t1", 1);
    /* An "if idle" enqueue of a thread waits for the lock as well. */
    pg_side_exec(side, "BEGIN; SELECT pg_advisory_xact_lock(hashtext(current_schema()), "
                       "hashtext('v'))");
    idle_job j = {.q = fx->q, .rc = SST_EIO};
    atomic_init(&j.committed, false);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, enqueue_if_idle, &j), 0);
    pg_wait_for_lock_waiter(side, "v");
    atomic_store(&j.committed, true);
    pg_side_exec(side, "COMMIT");
    pthread_join(th, NULL);
    assert_int_equal(j.rc, SST_OK);
    assert_true(j.after_commit); /* it returned only once the lock was free */
    PQfinish(side);
}

typedef struct later {
    sst_queue *q;
    const char *run_id, *thread_id;
    int delay_ms;
    sst_code rc;
    atomic_bool begun; /* the enqueue has begun (after the delay) */
} later;

/* Enqueues a run after a delay (from another thread, while the test waits). */
static void *enqueue_later(void *arg) {
    later *l = arg;
    usleep((useconds_t)l->delay_ms * 1000);
    atomic_store(&l->begun, true);
    sst_queued_run r = {.run_id = l->run_id, .thread_id = l->thread_id};
    l->rc = sst_queue_enqueue(l->q, &r, 0, NULL);
    return NULL;
}

typedef struct waiter {
    sst_queue *q;
    atomic_int *started;
    int timeout_ms;
    sst_code rc;
} waiter;

static void *wait_thread(void *arg) {
    waiter *w = arg;
    atomic_fetch_add(w->started, 1);
    w->rc = sst_postgres_queue_wait(w->q, w->timeout_ms, NULL);
    return NULL;
}

/* Waits on @p q; returns the seconds it took. */
static double timed_wait(fixture *fx, sst_queue *q, int timeout_ms, sst_code want) {
    double t0 = tu_now_s();
    FAILS(sst_postgres_queue_wait(q, timeout_ms, E), want);
    return tu_now_s() - t0;
}

static void pg_wait(void **state) {
    fixture *fx = *state;
    sst_queue *other = fx->be->open(fx->dir, E); /* another process */
    assert_non_null(other);
    /* The first wait starts listening and returns at once (SST_OK, where waiting would end
     * in SST_ETIMEOUT): what came before was not heard. */
    timed_wait(fx, fx->q, 10000, SST_OK);
    /* Nothing happens: it times out, having waited. */
    assert_true(timed_wait(fx, fx->q, 300, SST_ETIMEOUT) >= 0.29);
    MSG_HAS("300 ms");
    /* An enqueue through the other queue wakes it (SST_OK: woken, not timed out), and not
     * before the enqueue began. */
    later l = {.q = other, .run_id = "r1", .thread_id = "t", .delay_ms = 200, .rc = SST_EIO};
    atomic_init(&l.begun, false);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, enqueue_later, &l), 0);
    timed_wait(fx, fx->q, 20000, SST_OK);
    assert_true(atomic_load(&l.begun));
    pthread_join(th, NULL);
    assert_int_equal(l.rc, SST_OK);
    /* A notification that came between two waits is not lost. */
    enqueue(fx, "r2", "u");
    timed_wait(fx, fx->q, 20000, SST_OK);
    timed_wait(fx, fx->q, 200, SST_ETIMEOUT);
    /* A claim notifies nobody; a release elsewhere does; a finish only when a run of its
     * thread is pending (any other pending run waits for a busy worker, which claims again
     * when it finishes: waking the idle workers of every process would find nothing). */
    seen s = {0};
    OK(sst_queue_claim(other, "w", T0, LEASE, on_run, &s, E));
    assert_string_equal(s.run_id, "r1");
    timed_wait(fx, fx->q, 200, SST_ETIMEOUT);
    OK(sst_queue_release(other, "r1", s.token, T0 + 1, E));
    timed_wait(fx, fx->q, 20000, SST_OK);
    OK(sst_queue_claim(other, "w", T0 + 2, LEASE, on_run, &s, E));
    assert_string_equal(s.run_id, "r1");
    OK(sst_queue_finish(other, s.run_id, s.token, SST_QUEUE_SUCCESS, T0 + 3, E));
    seen_clear(&s);
    timed_wait(fx, fx->q, 200, SST_ETIMEOUT); /* r2 is pending, but on thread u */
    OK(sst_queue_claim(other, "w", T0 + 4, LEASE, on_run, &s, E));
    assert_string_equal(s.run_id, "r2");
    enqueue(fx, "r4", "u"); /* waits for r2's thread */
    timed_wait(fx, fx->q, 20000, SST_OK);
    OK(sst_queue_finish(other, s.run_id, s.token, SST_QUEUE_SUCCESS, T0 + 5, E));
    seen_clear(&s);
    timed_wait(fx, fx->q, 20000, SST_OK);
    /* A queue in another schema of the database does not wake this one. */
    char dir2[64];
    assert_int_equal(tu_temp_dir("queue", dir2, sizeof dir2), 0);
    sst_queue *elsewhere = open_postgres(dir2, E);
    assert_non_null(elsewhere);
    l = (later){.q = elsewhere, .run_id = "x1", .thread_id = "t", .delay_ms = 100, .rc = SST_EIO};
    atomic_init(&l.begun, false);
    assert_int_equal(pthread_create(&th, NULL, enqueue_later, &l), 0);
    timed_wait(fx, fx->q, 700, SST_ETIMEOUT);
    pthread_join(th, NULL);
    assert_int_equal(l.rc, SST_OK);
    sst_queue_free(elsewhere);
    assert_int_equal(tu_rm_rf(dir2), 0);
    /* Several waiters of one queue share its connection, and all are woken. */
    atomic_int started = 0;
    waiter w[3];
    pthread_t wt[3];
    for (int i = 0; i < 3; i++) {
        w[i] = (waiter){.q = fx->q, .started = &started, .timeout_ms = 20000, .rc = SST_EIO};
        assert_int_equal(pthread_create(&wt[i], NULL, wait_thread, &w[i]), 0);
    }
    while (atomic_load(&started) < 3) {
        usleep(1000);
    }
    usleep(300 * 1000);
    enqueue_at(fx, "r3", "v", 0, 0); /* through fx->q itself: its own notification counts */
    for (int i = 0; i < 3; i++) {    /* woken, not timed out */
        pthread_join(wt[i], NULL);
        assert_int_equal(w[i].rc, SST_OK);
    }
    /* Arguments. */
    FAILS(sst_postgres_queue_wait(NULL, 10, E), SST_EINVAL);
    FAILS(sst_postgres_queue_wait(fx->q, -1, E), SST_EINVAL);
    MSG_HAS("timeout_ms");
    char path[128];
    snprintf(path, sizeof path, "%s/queue.db", fx->dir);
    sst_queue *lite = sst_sqlite_queue_open(path, E);
    assert_non_null(lite);
    FAILS(sst_postgres_queue_wait(lite, 10, E), SST_EINVAL);
    MSG_HAS("not a PostgreSQL queue");
    sst_queue_free(lite);
    sst_queue_free(other);
}

/* A database whose queue tables are newer than this build is refused, and left as it is. */
static void pg_newer_schema(void **state) {
    fixture *fx = *state;
    char url[700];
    pg_url_of(fx, url, sizeof url);
    enqueue(fx, "r1", "t");
    sst_queue_free(fx->q);
    fx->q = NULL;
    assert_int_equal(tu_pg_exec(url, "UPDATE sst_schema SET version = 2 WHERE component = 'queue'"),
                     0);
    assert_null(sst_postgres_queue_open(url, E));
    code_at(fx->err.code, SST_ENOTSUP, E, __FILE__, __LINE__);
    MSG_HAS("queue tables are at schema version 2, newer than this build's 1");
    MSG_HAS("postgresql://");
    assert_int_equal(tu_pg_exec(url, "UPDATE sst_schema SET version = 1 WHERE component = 'queue'"),
                     0);
    fx_reopen(fx);
    seen s = {0};
    get(fx, "r1", &s);
    assert_int_equal(s.status, SST_QUEUE_PENDING);
    seen_clear(&s);
}

/* Opening: bad arguments and servers; queues on one pool shared with other backends. */
static void pg_open(void **state) {
    fixture *fx = *state;
    assert_null(sst_postgres_queue_open_pg(NULL, E));
    code_at(fx->err.code, SST_EINVAL, E, __FILE__, __LINE__);
    assert_null(sst_postgres_queue_open("postgresql://nobody@127.0.0.1:1/none", E));
    code_at(fx->err.code, SST_EUNAVAILABLE, E, __FILE__, __LINE__);
    MSG_HAS("127.0.0.1:1");
    assert_null(sst_postgres_queue_open("postgresql://127.0.0.1:1:2:3/x?bogus_option=1", E));
    code_at(fx->err.code, SST_EINVAL, E, __FILE__, __LINE__);
    char url[700];
    pg_url_of(fx, url, sizeof url);
    sst_pg *pg = sst_pg_open(url, NULL, E);
    assert_non_null(pg);
    sst_queue *a = sst_postgres_queue_open_pg(pg, E);
    sst_queue *b = sst_postgres_queue_open_pg(pg, E);
    sst_pg_release(pg); /* each queue holds its own reference */
    assert_non_null(a);
    assert_non_null(b);
    sst_queued_run r = {.run_id = "r1", .thread_id = "t"};
    OK(sst_queue_enqueue(a, &r, 0, E));
    seen s = {0};
    OK(sst_queue_claim(b, "w", T0, LEASE, on_run, &s, E));
    assert_string_equal(s.run_id, "r1");
    OK(sst_queue_finish(a, "r1", s.token, SST_QUEUE_SUCCESS, T0 + 1, E));
    seen_clear(&s);
    sst_queue_free(a);
    get(fx, "r1", &s); /* the fixture's queue, on a pool of its own, sees it too */
    assert_int_equal(s.status, SST_QUEUE_SUCCESS);
    seen_clear(&s);
    sst_queue_free(b);
}

static int pg_cluster(const char *cmd, const char *dir) {
    char line[1024], script[512];
    snprintf(line, sizeof line, "sh '%s' %s '%s' >/dev/null",
             tu_data_path("../pg/cluster.sh", script, sizeof script), cmd, dir);
    return system(line) == 0 ? 0 : -1;
}

/*
 * The server restarts under two queues (a cluster of this case's own, so the
 * other tests are not disturbed): the holder's finish and another claim are
 * run again on new connections, and a waiter hears of the lost connection,
 * listens again and hears what follows.
 */
static void pg_restart(void **state) {
    fixture *fx = *state;
    char dir[64], urlfile[128];
    assert_int_equal(tu_temp_dir("queue-restart", dir, sizeof dir), 0);
    assert_int_equal(pg_cluster("start", dir), 0);
    snprintf(urlfile, sizeof urlfile, "%s/url", dir);
    char *url = tu_read_file(urlfile, NULL);
    assert_non_null(url);
    url[strcspn(url, "\n")] = '\0';
    sst_queue *q = sst_postgres_queue_open(url, E);
    sst_queue *q2 = q != NULL ? sst_postgres_queue_open(url, E) : NULL;
    if (q2 == NULL) {
        fail_msg("opening the queues: %s", fx->err.msg);
    }
    sst_queued_run r = {.run_id = "r1", .thread_id = "t"};
    OK(sst_queue_enqueue(q, &r, 0, E));
    r.run_id = "r2";
    OK(sst_queue_enqueue(q, &r, 0, E));
    seen s = {0};
    OK(sst_queue_claim(q, "w", T0, LEASE, on_run, &s, E));
    assert_string_equal(s.run_id, "r1");
    OK(sst_postgres_queue_wait(q, 0, E)); /* listening */
    atomic_int started = 0;
    waiter w = {.q = q, .started = &started, .timeout_ms = 60000, .rc = SST_EIO};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, wait_thread, &w), 0);
    while (atomic_load(&started) < 1) {
        usleep(1000);
    }
    usleep(200 * 1000);
    assert_int_equal(pg_cluster("restart", dir), 0);
    pthread_join(th, NULL);
    assert_int_equal(w.rc, SST_OK); /* the lost connection woke it (not its 60 s timeout) */
    OK(sst_queue_finish(q, "r1", s.token, SST_QUEUE_SUCCESS, T0 + 1, E));
    seen_clear(&s);
    OK(sst_queue_claim(q2, "w2", T0 + 2, LEASE, on_run, &s, E));
    assert_string_equal(s.run_id, "r2");
    seen_clear(&s);
    OK(sst_postgres_queue_wait(q, 30000, E)); /* listening again: returns at once */
    FAILS(sst_postgres_queue_wait(q, 200, E), SST_ETIMEOUT);
    later l = {.q = q2, .run_id = "r3", .thread_id = "u", .delay_ms = 200, .rc = SST_EIO};
    atomic_init(&l.begun, false);
    assert_int_equal(pthread_create(&th, NULL, enqueue_later, &l), 0);
    OK(sst_postgres_queue_wait(q, 30000, E));
    assert_true(atomic_load(&l.begun));
    pthread_join(th, NULL);
    assert_int_equal(l.rc, SST_OK);
    sst_queue_free(q);
    sst_queue_free(q2);
    free(url);
    assert_int_equal(pg_cluster("stop", dir), 0);
    tu_rm_rf(dir);
}

/* ---- once: SQLite files ---- */

typedef struct file_fx {
    char dir[64];
    char path[128];
    sst_error err;
} file_fx;

static int file_setup(void **state) {
    file_fx *f = calloc(1, sizeof *f);
    if (tu_temp_dir("queue-file", f->dir, sizeof f->dir) != 0) {
        free(f);
        return -1;
    }
    snprintf(f->path, sizeof f->path, "%s/queue.db", f->dir);
    *state = f;
    return 0;
}

static int file_teardown(void **state) {
    file_fx *f = *state;
    int rc = tu_rm_rf(f->dir);
    free(f);
    return rc;
}

static void sql_exec(const char *path, const char *sql) {
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    char *msg = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        fail_msg("%s: %s", sql, msg);
    }
    sqlite3_close(db);
}

/* Opening @p path fails with SST_EIO naming it and @p what, and leaves the file as it was. */
static void refused(file_fx *f, const char *what) {
    size_t before_len = 0, after_len = 0;
    char *before = tu_read_file(f->path, &before_len);
    assert_non_null(before);
    assert_null(sst_sqlite_queue_open(f->path, &f->err));
    code_at(f->err.code, SST_EIO, &f->err, __FILE__, __LINE__);
    msg_has_at(&f->err, f->path, __FILE__, __LINE__);
    msg_has_at(&f->err, what, __FILE__, __LINE__);
    char *after = tu_read_file(f->path, &after_len);
    assert_non_null(after);
    assert_int_equal(before_len, after_len);
    assert_memory_equal(before, after, before_len);
    free(before);
    free(after);
}

static void files_foreign(void **state) {
    file_fx *f = *state;
    sql_exec(f->path, "PRAGMA application_id=1234; CREATE TABLE things(x); INSERT INTO things "
                      "VALUES(1);");
    refused(f, "not a superstep database");
}

static void files_garbage(void **state) {
    file_fx *f = *state;
    FILE *fp = fopen(f->path, "w");
    assert_non_null(fp);
    for (int i = 0; i < 200; i++) {
        fputs("this is not a database. ", fp);
    }
    fclose(fp);
    refused(f, "not a usable SQLite database");
}

static void files_newer(void **state) {
    file_fx *f = *state;
    sst_queue *q = sst_sqlite_queue_open(f->path, &f->err);
    assert_non_null(q);
    sst_queue_free(q);
    sql_exec(f->path, "UPDATE sst_queue_meta SET value = 4 WHERE key = 'schema'");
    refused(f, "queue schema version 4, newer than this build supports (3)");
}

/* count(*) of @p sql's rows on @p path. */
static long sql_count(const char *path, const char *sql) {
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    long n = (long)sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return n;
}

/* A schema-1 file (sst_runs with AUTOINCREMENT, sst_runs_lease and sst_runs_owner) opens as
 * schema 3 through 2 (no AUTOINCREMENT, sst_runs_running, sst_runs_pending), its runs kept: the
 * running one's lease expires and it is claimed again, then the pending one, then one enqueued
 * since. */
static void files_upgrade(void **state) {
    file_fx *f = *state;
    sst_queue *q = sst_sqlite_queue_open(f->path, &f->err);
    assert_non_null(q);
    sst_queued_run r1 = {.run_id = "r1", .thread_id = "t1"};
    sst_queued_run r2 = {.run_id = "r2", .thread_id = "t2"};
    tu_assert_ok(sst_queue_enqueue(q, &r1, 0, &f->err), &f->err, __FILE__, __LINE__);
    tu_assert_ok(sst_queue_enqueue(q, &r2, 0, &f->err), &f->err, __FILE__, __LINE__);
    seen s = {0};
    tu_assert_ok(sst_queue_claim(q, "w1", T0, LEASE, on_run, &s, &f->err), &f->err, __FILE__,
                 __LINE__);
    assert_string_equal(s.run_id, "r1");
    seen_clear(&s);
    sst_queue_free(q);
    /* Schema 1's sst_runs, as it made it (with AUTOINCREMENT and its two indexes). */
    sql_exec(
        f->path,
        "CREATE TABLE old(seq INTEGER PRIMARY KEY AUTOINCREMENT, run_id TEXT NOT NULL UNIQUE,"
        " thread_id TEXT NOT NULL, assistant_id TEXT NOT NULL, status TEXT NOT NULL,"
        " kwargs TEXT NOT NULL, metadata TEXT NOT NULL, multitask_strategy TEXT,"
        " created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, run_after INTEGER NOT NULL,"
        " attempt INTEGER NOT NULL DEFAULT 0, cancel TEXT, owner TEXT,"
        " lease_expires INTEGER NOT NULL DEFAULT 0, token INTEGER NOT NULL DEFAULT 0);"
        "INSERT INTO old SELECT * FROM sst_runs;"
        "DROP TABLE sst_runs;"
        "ALTER TABLE old RENAME TO sst_runs;"
        "CREATE INDEX sst_runs_status ON sst_runs(status, seq);"
        "CREATE INDEX sst_runs_thread ON sst_runs(thread_id, seq);"
        "CREATE INDEX sst_runs_active ON sst_runs(thread_id, seq)"
        " WHERE status IN ('pending', 'running');"
        "CREATE INDEX sst_runs_lease ON sst_runs(lease_expires) WHERE status = 'running';"
        "CREATE INDEX sst_runs_owner ON sst_runs(owner) WHERE status = 'running';"
        "UPDATE sst_queue_meta SET value = 1 WHERE key = 'schema'");
    assert_int_equal(sql_count(f->path, "SELECT count(*) FROM sqlite_sequence"), 1);
    q = sst_sqlite_queue_open(f->path, &f->err);
    if (q == NULL) {
        fail_msg("opening a schema-1 queue: %s", f->err.msg);
    }
    assert_int_equal(sql_count(f->path, "SELECT value FROM sst_queue_meta WHERE key = 'schema'"),
                     3);
    assert_int_equal(sql_count(f->path, "SELECT count(*) FROM sqlite_master WHERE name IN "
                                        "('sst_runs_lease', 'sst_runs_owner', 'sst_runs_status')"),
                     0);
    assert_int_equal(
        sql_count(f->path, "SELECT count(*) FROM sqlite_master WHERE name = 'sst_runs_running'"),
        1);
    assert_int_equal(sql_count(f->path, "SELECT count(*) FROM sqlite_sequence"), 0);
    assert_int_equal(sql_count(f->path, "SELECT count(*) FROM sqlite_master WHERE name = "
                                        "'sst_runs' AND sql LIKE '%AUTOINCREMENT%'"),
                     0);
    sst_queued_run r3 = {.run_id = "r3", .thread_id = "t3"};
    tu_assert_ok(sst_queue_enqueue(q, &r3, 0, &f->err), &f->err, __FILE__, __LINE__);
    const int64_t expired_at = T0 + LEASE + 1;
    tu_assert_ok(sst_queue_claim(q, "w2", expired_at, LEASE, on_run, &s, &f->err), &f->err,
                 __FILE__, __LINE__);
    assert_string_equal(s.run_id, "r1"); /* its lease expired: the oldest claimable */
    assert_int_equal(s.attempt, 2);
    tu_assert_ok(sst_queue_finish(q, "r1", s.token, SST_QUEUE_SUCCESS, expired_at, &f->err),
                 &f->err, __FILE__, __LINE__);
    seen_clear(&s);
    tu_assert_ok(sst_queue_claim(q, "w2", expired_at, LEASE, on_run, &s, &f->err), &f->err,
                 __FILE__, __LINE__);
    assert_string_equal(s.run_id, "r2");
    seen_clear(&s);
    tu_assert_ok(sst_queue_claim(q, "w2", expired_at, LEASE, on_run, &s, &f->err), &f->err,
                 __FILE__, __LINE__);
    assert_string_equal(s.run_id, "r3"); /* enqueued after the upgrade: after the others */
    seen_clear(&s);
    sst_queue_free(q);
}

/* A schema-2 file (sst_runs_status over every run) opens as schema 3: sst_runs_pending over
 * the pending runs instead; its runs stay and are claimed in enqueue order (issue 37). */
static void files_upgrade_2(void **state) {
    file_fx *f = *state;
    sst_queue *q = sst_sqlite_queue_open(f->path, &f->err);
    assert_non_null(q);
    static const char *const run_ids[] = {"u1", "u2", "u3"};
    for (int i = 0; i < 3; i++) {
        sst_queued_run r = {.run_id = run_ids[i], .thread_id = run_ids[i]};
        tu_assert_ok(sst_queue_enqueue(q, &r, 0, &f->err), &f->err, __FILE__, __LINE__);
    }
    seen s = {0};
    tu_assert_ok(sst_queue_claim(q, "w1", T0, LEASE, on_run, &s, &f->err), &f->err, __FILE__,
                 __LINE__);
    assert_string_equal(s.run_id, "u1");
    tu_assert_ok(sst_queue_finish(q, "u1", s.token, SST_QUEUE_SUCCESS, T0, &f->err), &f->err,
                 __FILE__, __LINE__);
    seen_clear(&s);
    sst_queue_free(q);
    sql_exec(f->path, "DROP INDEX sst_runs_pending;"
                      "CREATE INDEX sst_runs_status ON sst_runs(status, seq);"
                      "UPDATE sst_queue_meta SET value = 2 WHERE key = 'schema'");
    q = sst_sqlite_queue_open(f->path, &f->err);
    if (q == NULL) {
        fail_msg("opening a schema-2 queue: %s", f->err.msg);
    }
    assert_int_equal(sql_count(f->path, "SELECT value FROM sst_queue_meta WHERE key = 'schema'"),
                     3);
    assert_int_equal(
        sql_count(f->path, "SELECT count(*) FROM sqlite_master WHERE name = 'sst_runs_status'"), 0);
    assert_int_equal(sql_count(f->path, "SELECT count(*) FROM sqlite_master WHERE name = "
                                        "'sst_runs_pending' AND sql LIKE '%WHERE status%'"),
                     1);
    for (int i = 1; i < 3; i++) {
        tu_assert_ok(sst_queue_claim(q, "w1", T0, LEASE, on_run, &s, &f->err), &f->err, __FILE__,
                     __LINE__);
        assert_string_equal(s.run_id, run_ids[i]);
        seen_clear(&s);
    }
    assert_int_equal(sst_queue_claim(q, "w1", T0, LEASE, on_run, &s, &f->err), SST_ENOTFOUND);
    sst_queue_free(q);
}

/* The first page of table @p name and the page size. */
static void table_page(const char *path, const char *name, long *root, long *page_size) {
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    char sql[128];
    snprintf(sql, sizeof sql, "SELECT rootpage FROM sqlite_master WHERE name = '%s'", name);
    assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    *root = (long)sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    assert_int_equal(sqlite3_prepare_v2(db, "PRAGMA page_size", -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    *page_size = (long)sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
}

static void files_damaged(void **state) {
    file_fx *f = *state;
    sst_queue *q = sst_sqlite_queue_open(f->path, &f->err);
    assert_non_null(q);
    for (int i = 0; i < 300; i++) {
        char id[16];
        snprintf(id, sizeof id, "r%d", i);
        sst_queued_run r = {.run_id = id, .thread_id = id};
        tu_assert_ok(sst_queue_enqueue(q, &r, 0, &f->err), &f->err, __FILE__, __LINE__);
    }
    sst_queue_free(q); /* the last connection: the WAL goes into the file */
    long root, page;
    table_page(f->path, "sst_runs_thread", &root, &page);
    int fd = open(f->path, O_WRONLY);
    assert_true(fd >= 0);
    unsigned char junk[64];
    memset(junk, 0xA5, sizeof junk);
    assert_int_equal(pwrite(fd, junk, sizeof junk, (root - 1) * page + 8), (ssize_t)sizeof junk);
    close(fd);
    refused(f, "corrupt");
}

/* The queue, the checkpoint saver and the store share one file, whichever opens it first. */
static void files_shared(void **state) {
    file_fx *f = *state;
    char other[160];
    snprintf(other, sizeof other, "%s/saver-first.db", f->dir);
    const char *paths[2] = {f->path, other};
    for (int order = 0; order < 2; order++) {
        const char *path = paths[order];
        sst_checkpointer *cp = NULL;
        if (order == 1) {
            cp = sst_sqlite_saver_open(path, NULL, &f->err);
            assert_non_null(cp);
        }
        sst_queue *q = sst_sqlite_queue_open(path, &f->err);
        if (q == NULL) {
            fail_msg("opening the queue: %s", f->err.msg);
        }
        sst_queued_run r = {.run_id = "r1", .thread_id = "t1"};
        tu_assert_ok(sst_queue_enqueue(q, &r, 0, &f->err), &f->err, __FILE__, __LINE__);
        if (cp == NULL) {
            cp = sst_sqlite_saver_open(path, NULL, &f->err);
            if (cp == NULL) {
                fail_msg("opening the saver after the queue: %s", f->err.msg);
            }
        }
        sst_checkpoint rec = {.format = SST_CHECKPOINT_FORMAT,
                              .thread_id = "t1",
                              .ns = "",
                              .id = "c0001",
                              .source = "input",
                              .body = {.data = "{}", .len = 2}};
        tu_assert_ok(sst_checkpointer_put(cp, &rec, false, &f->err), &f->err, __FILE__, __LINE__);
        sst_store *st = sst_sqlite_store_new(path, NULL, &f->err);
        if (st == NULL) {
            fail_msg("opening the store beside the queue: %s", f->err.msg);
        }
        sst_store_free(st);
        sst_checkpointer_free(cp);
        sst_queue_free(q);
        q = sst_sqlite_queue_open(path, &f->err);
        assert_non_null(q);
        seen s = {0};
        tu_assert_ok(sst_queue_get(q, "r1", on_run, &s, &f->err), &f->err, __FILE__, __LINE__);
        assert_string_equal(s.thread_id, "t1");
        seen_clear(&s);
        sst_queue_free(q);
    }
}

static void files_bad_path(void **state) {
    file_fx *f = *state;
    char path[200];
    snprintf(path, sizeof path, "%s/no/such/dir/queue.db", f->dir);
    assert_null(sst_sqlite_queue_open(path, &f->err));
    code_at(f->err.code, SST_EIO, &f->err, __FILE__, __LINE__);
    msg_has_at(&f->err, path, __FILE__, __LINE__);
    assert_null(sst_sqlite_queue_open(NULL, &f->err));
    code_at(f->err.code, SST_EINVAL, &f->err, __FILE__, __LINE__);
    assert_null(sst_sqlite_queue_open("", NULL));
}

/* ---- once: the wrapper, against a fake backend ---- */

typedef struct fake {
    int destroyed, calls;
} fake;

static void fake_destroy(void *self) {
    ((fake *)self)->destroyed++;
}
static sst_code fake_enqueue(void *self, const sst_queued_run *run, unsigned flags,
                             sst_error *err) {
    (void)run, (void)flags, (void)err;
    ((fake *)self)->calls++;
    return SST_OK;
}
static sst_code fake_get(void *self, const char *id, sst_queued_run_fn each, void *ud,
                         sst_error *err) {
    (void)id, (void)each, (void)ud, (void)err;
    ((fake *)self)->calls++;
    return SST_ENOTFOUND;
}
static sst_code fake_list(void *self, const sst_queue_query *q, sst_queued_run_fn each, void *ud,
                          sst_error *err) {
    (void)q, (void)each, (void)ud, (void)err;
    ((fake *)self)->calls++;
    return SST_OK;
}
static sst_code fake_remove(void *self, const char *id, sst_error *err) {
    (void)id, (void)err;
    ((fake *)self)->calls++;
    return SST_OK;
}
static sst_code fake_claim(void *self, const char *owner, int64_t now, int64_t lease_ms,
                           sst_queued_run_fn each, void *ud, sst_error *err) {
    (void)owner, (void)now, (void)lease_ms, (void)each, (void)ud, (void)err;
    ((fake *)self)->calls++;
    return SST_ENOTFOUND;
}
static sst_code fake_renew(void *self, const char *id, uint64_t token, int64_t now,
                           int64_t lease_ms, char **cancel, sst_error *err) {
    (void)id, (void)token, (void)now, (void)lease_ms, (void)cancel, (void)err;
    ((fake *)self)->calls++;
    return SST_OK;
}
static sst_code fake_finish(void *self, const char *id, uint64_t token, sst_queue_status status,
                            int64_t now, sst_error *err) {
    (void)id, (void)token, (void)status, (void)now, (void)err;
    ((fake *)self)->calls++;
    return SST_OK;
}
static sst_code fake_release(void *self, const char *id, uint64_t token, int64_t now,
                             sst_error *err) {
    (void)id, (void)token, (void)now, (void)err;
    ((fake *)self)->calls++;
    return SST_OK;
}
static sst_code fake_cancel(void *self, const char *id, const char *action, int64_t now,
                            sst_queue_status *status, sst_error *err) {
    (void)id, (void)action, (void)now, (void)status, (void)err;
    ((fake *)self)->calls++;
    return SST_OK;
}

static sst_queue_ops fake_ops(void) {
    return (sst_queue_ops){.size = sizeof(sst_queue_ops),
                           .destroy = fake_destroy,
                           .enqueue = fake_enqueue,
                           .get = fake_get,
                           .list = fake_list,
                           .remove = fake_remove,
                           .remove_thread = fake_remove,
                           .claim = fake_claim,
                           .renew = fake_renew,
                           .finish = fake_finish,
                           .release = fake_release,
                           .cancel = fake_cancel};
}

static void api_ops_checked(void **state) {
    (void)state;
    fake f = {0};
    sst_error err;
    sst_queue_ops ops = fake_ops();
    ops.size = 0;
    assert_null(sst_queue_new(&ops, &f, &err));
    code_at(err.code, SST_EINVAL, &err, __FILE__, __LINE__);
    msg_has_at(&err, "size", __FILE__, __LINE__);
    assert_null(sst_queue_new(NULL, &f, &err));
    /* Each operation is required. */
    size_t offsets[] = {offsetof(sst_queue_ops, destroy), offsetof(sst_queue_ops, enqueue),
                        offsetof(sst_queue_ops, claim), offsetof(sst_queue_ops, cancel)};
    for (size_t i = 0; i < sizeof offsets / sizeof offsets[0]; i++) {
        ops = fake_ops();
        memset((char *)&ops + offsets[i], 0, sizeof(void *));
        assert_null(sst_queue_new(&ops, &f, &err));
        code_at(err.code, SST_EINVAL, &err, __FILE__, __LINE__);
        msg_has_at(&err, "required", __FILE__, __LINE__);
    }
    assert_int_equal(f.destroyed, 0); /* on failure self is not destroyed */
    /* The ops are copied; the checks run before the backend is called. */
    ops = fake_ops();
    sst_queue *q = sst_queue_new(&ops, &f, &err);
    assert_non_null(q);
    memset(&ops, 0xCD, sizeof ops);
    sst_queued_run r = {.run_id = "r", .thread_id = "t"};
    tu_assert_ok(sst_queue_enqueue(q, &r, 0, &err), &err, __FILE__, __LINE__);
    assert_int_equal(f.calls, 1);
    assert_int_equal(sst_queue_claim(q, "w", 0, 0, on_run, NULL, &err), SST_EINVAL);
    assert_int_equal(sst_queue_finish(q, "r", 1, SST_QUEUE_RUNNING, 0, &err), SST_EINVAL);
    assert_int_equal(f.calls, 1);
    assert_int_equal(sst_queue_claim(q, "w", 0, 1, on_run, NULL, &err), SST_ENOTFOUND);
    assert_int_equal(f.calls, 2);
    sst_queue_free(q);
    assert_int_equal(f.destroyed, 1);
}

static void api_refcount(void **state) {
    (void)state;
    fake f = {0};
    sst_queue_ops ops = fake_ops();
    sst_queue *q = sst_queue_new(&ops, &f, NULL);
    assert_non_null(q);
    assert_ptr_equal(sst_queue_ref(q), q);
    sst_queue_free(q);
    assert_int_equal(f.destroyed, 0);
    sst_queue_free(q);
    assert_int_equal(f.destroyed, 1);
    sst_queue_free(NULL);
    assert_null(sst_queue_ref(NULL));
}

static void api_statuses(void **state) {
    (void)state;
    const char *names[] = {"pending", "running", "success", "error", "interrupted", "timeout"};
    for (int i = 0; i < 6; i++) {
        assert_string_equal(sst_queue_status_name((sst_queue_status)i), names[i]);
        sst_queue_status s = SST_QUEUE_TIMEOUT;
        assert_true(sst_queue_status_parse(names[i], &s));
        assert_int_equal(s, i);
        assert_int_equal(sst_queue_status_final((sst_queue_status)i), i >= 2);
    }
    assert_string_equal(sst_queue_status_name((sst_queue_status)6), "?");
    assert_string_equal(sst_queue_status_name((sst_queue_status)-1), "?");
    sst_queue_status s = SST_QUEUE_ERROR;
    assert_false(sst_queue_status_parse("Pending", &s));
    assert_false(sst_queue_status_parse(NULL, &s));
    assert_false(sst_queue_status_parse("", &s));
    assert_int_equal(s, SST_QUEUE_ERROR); /* unchanged */
    assert_false(sst_queue_status_final((sst_queue_status)6));
    /* A run as a value: absent strings null, kwargs and metadata {} when NULL. */
    sst_queued_run r = {.run_id = "r",
                        .thread_id = "t",
                        .status = SST_QUEUE_RUNNING,
                        .attempt = 3,
                        .owner = "w",
                        .lease_expires = 9,
                        .token = 77};
    sst_value *v = sst_queued_run_value(&r, NULL);
    assert_json_eq(v, "{\"run_id\":\"r\",\"thread_id\":\"t\",\"assistant_id\":null,"
                      "\"status\":\"running\",\"kwargs\":{},\"metadata\":{},"
                      "\"multitask_strategy\":null,\"created_at\":0,\"updated_at\":0,"
                      "\"run_after\":0,\"attempt\":3,\"cancel\":null,\"owner\":\"w\","
                      "\"lease_expires\":9}");
    sst_value_unref(v);
    sst_error err;
    assert_null(sst_queued_run_value(NULL, &err));
    assert_int_equal(err.code, SST_EINVAL);
}

#define BACKEND_CASES(X)                                                                           \
    X(case_round_trip)                                                                             \
    X(case_size_limit)                                                                             \
    X(case_duplicate)                                                                              \
    X(case_list)                                                                                   \
    X(case_remove)                                                                                 \
    X(case_if_idle)                                                                                \
    X(case_claim)                                                                                  \
    X(case_run_after)                                                                              \
    X(case_lease_expiry)                                                                           \
    X(case_release)                                                                                \
    X(case_cancel)                                                                                 \
    X(case_arguments)                                                                              \
    X(case_owners)                                                                                 \
    X(case_threads)                                                                                \
    X(case_claim_speed)                                                                            \
    X(case_persistence)                                                                            \
    X(case_killed_worker)

int main(void) {
    int failed = 0;
    const void *pg_backend = NULL;
    for (size_t b = 0; b < sizeof k_backends / sizeof k_backends[0]; b++) {
        void *be = (void *)&k_backends[b];
        if (k_backends[b].pg) {
            /* tu_pg_url fails the test instead when SST_REQUIRE_POSTGRES=1. */
            if (tu_pg_url() == NULL) {
                print_message("%s: no test PostgreSQL server (SST_PGTEST_URL, "
                              "SST_PGTEST_URL_FILE): its cases and the PostgreSQL-only "
                              "ones skip\n",
                              k_backends[b].name);
                continue;
            }
            pg_backend = be;
        }
#define SST_CASE(fn) cmocka_unit_test_prestate_setup_teardown(fn, fx_setup, fx_teardown, be),
        const struct CMUnitTest tests[] = {BACKEND_CASES(SST_CASE)};
#undef SST_CASE
        failed += cmocka_run_group_tests_name(k_backends[b].name, tests, NULL, NULL);
    }
    if (pg_backend != NULL) {
        void *be = (void *)pg_backend;
        const struct CMUnitTest pg[] = {
            cmocka_unit_test_prestate_setup_teardown(pg_processes, fx_setup, fx_teardown, be),
            cmocka_unit_test_prestate_setup_teardown(pg_thread_lock, fx_setup, fx_teardown, be),
            cmocka_unit_test_prestate_setup_teardown(pg_wait, fx_setup, fx_teardown, be),
            cmocka_unit_test_prestate_setup_teardown(pg_newer_schema, fx_setup, fx_teardown, be),
            cmocka_unit_test_prestate_setup_teardown(pg_open, fx_setup, fx_teardown, be),
            cmocka_unit_test_prestate_setup_teardown(pg_restart, fx_setup, fx_teardown, be),
        };
        failed += cmocka_run_group_tests_name("postgres only", pg, NULL, NULL);
    }
    const struct CMUnitTest files[] = {
        cmocka_unit_test_setup_teardown(files_foreign, file_setup, file_teardown),
        cmocka_unit_test_setup_teardown(files_garbage, file_setup, file_teardown),
        cmocka_unit_test_setup_teardown(files_newer, file_setup, file_teardown),
        cmocka_unit_test_setup_teardown(files_upgrade, file_setup, file_teardown),
        cmocka_unit_test_setup_teardown(files_upgrade_2, file_setup, file_teardown),
        cmocka_unit_test_setup_teardown(files_damaged, file_setup, file_teardown),
        cmocka_unit_test_setup_teardown(files_shared, file_setup, file_teardown),
        cmocka_unit_test_setup_teardown(files_bad_path, file_setup, file_teardown),
    };
    failed += cmocka_run_group_tests_name("sqlite files", files, NULL, NULL);
    const struct CMUnitTest api[] = {
        cmocka_unit_test(api_ops_checked),
        cmocka_unit_test(api_refcount),
        cmocka_unit_test(api_statuses),
    };
    failed += cmocka_run_group_tests_name("queue", api, NULL, NULL);
    return failed != 0;
}
