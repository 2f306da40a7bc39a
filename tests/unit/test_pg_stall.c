/* SPDX-License-Identifier: MIT */
/*
 * A process stopped in the middle of a PostgreSQL transaction (SIGSTOP, a
 * stall, a partition), against a real server (the CTest fixture "pg"): the
 * interleaving that left a run "running" for good in the scale test's
 * fencing phase (issue 34). The stopped process is a thread blocked in the
 * pool's commit hook (sst__pg_set_commit_hook): its statements have run, its
 * row locks are held, and it sends nothing, which is all the server sees of a
 * stopped process. Without the pool's idle-in-transaction timeout the server
 * keeps that transaction open as long as the process stays stopped, so:
 *
 *  1. the run whose holder stopped while renewing its lease is never claimed
 *     again (the claim's FOR UPDATE SKIP LOCKED skips its locked row), and
 *  2. a worker taking a thread's lease over waits behind a put that the
 *     stopped holder began (the put's share lock on the lease row), forever.
 *
 * With it, the server ends the stopped session after the timeout, its
 * transaction rolls back, and the run (or the thread) is taken over; the
 * stopped process, woken, learns that it lost its lease and changes nothing.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common.h"
#include "common/pg.h"
#include "superstep/checkpoint.h"
#include "superstep/queue.h"
#include "test_util.h"

#define E        (&err)
#define LEASE_MS 300  /* the stopped holder's lease */
#define IDLE_MS  1000 /* the pools' idle-in-transaction timeout */
/* How long a takeover may take: the lease and the timeout take ~1 s; this bound is
 * only there so that a takeover that never happens fails the test instead of hanging. */
#define DEADLINE_MS 120000

static char g_url[600];

static int setup(void **state) {
    (void)state;
    return tu_pg_group_setup("stall", g_url, sizeof g_url);
}

#define NEED_PG() TU_NEED_PG(g_url)

/* ---- the stopped process: a gate in the commit hook ---- */

enum { GATE_OPEN, GATE_ARMED, GATE_HOLDING, GATE_RELEASED };

typedef struct gate {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int state;
} gate;

static void gate_init(gate *g) {
    pthread_mutex_init(&g->mu, NULL);
    pthread_cond_init(&g->cv, NULL);
    g->state = GATE_OPEN;
}

static void gate_destroy(gate *g) {
    pthread_mutex_destroy(&g->mu);
    pthread_cond_destroy(&g->cv);
}

/* The commit hook: the first commit after the gate is armed stops here until released. */
static void gate_hook(void *ud) {
    gate *g = ud;
    pthread_mutex_lock(&g->mu);
    if (g->state == GATE_ARMED) {
        g->state = GATE_HOLDING;
        pthread_cond_broadcast(&g->cv);
        while (g->state == GATE_HOLDING) {
            pthread_cond_wait(&g->cv, &g->mu);
        }
    }
    pthread_mutex_unlock(&g->mu);
}

static void gate_set(gate *g, int state) {
    pthread_mutex_lock(&g->mu);
    g->state = state;
    pthread_cond_broadcast(&g->cv);
    pthread_mutex_unlock(&g->mu);
}

/* Waits until a commit stopped at the gate (its transaction's locks are held now). */
static void gate_wait_holding(gate *g) {
    pthread_mutex_lock(&g->mu);
    while (g->state != GATE_HOLDING) {
        pthread_cond_wait(&g->cv, &g->mu);
    }
    pthread_mutex_unlock(&g->mu);
}

/* A call made on another thread, whose end the test waits for with a deadline. */
typedef struct call {
    pthread_t tid;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool done;
    sst_code rc;
    sst_error err;
    void (*fn)(struct call *c);
    void *a, *b; /* the call's arguments */
    uint64_t token;
} call;

static void *call_main(void *arg) {
    call *c = arg;
    c->fn(c);
    pthread_mutex_lock(&c->mu);
    c->done = true;
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
    return NULL;
}

static void call_start(call *c, void (*fn)(call *c)) {
    pthread_mutex_init(&c->mu, NULL);
    pthread_cond_init(&c->cv, NULL);
    c->done = false;
    c->fn = fn;
    assert_int_equal(pthread_create(&c->tid, NULL, call_main, c), 0);
}

/* Waits for the call to end, at most DEADLINE_MS; false when it did not. */
static bool call_wait(call *c) {
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += DEADLINE_MS / 1000;
    pthread_mutex_lock(&c->mu);
    int rc = 0;
    while (!c->done && rc == 0) {
        rc = pthread_cond_timedwait(&c->cv, &c->mu, &until);
    }
    bool done = c->done;
    pthread_mutex_unlock(&c->mu);
    if (done) {
        pthread_join(c->tid, NULL);
        pthread_mutex_destroy(&c->mu);
        pthread_cond_destroy(&c->cv);
    }
    return done;
}

static sst_pg *pool(void) {
    sst_error err = {0};
    sst_pg_opts o;
    sst_pg_opts_init(&o);
    o.idle_tx_timeout_ms = IDLE_MS;
    sst_pg *pg = sst_pg_open(g_url, &o, E);
    if (pg == NULL) {
        print_error("sst_pg_open: %s\n", err.msg);
    }
    assert_non_null(pg);
    return pg;
}

static int64_t now_ms(void) {
    return (int64_t)sst__now_ms();
}

/* ---- 1. a run whose holder stopped while renewing its lease ---- */

typedef struct seen {
    uint64_t token;
    uint32_t attempt;
    sst_queue_status status;
} seen;

static bool on_run(const sst_queued_run *run, void *ud) {
    seen *s = ud;
    s->token = run->token;
    s->attempt = run->attempt;
    s->status = run->status;
    return true;
}

static void renew_call(call *c) {
    c->rc = sst_queue_renew(c->a, "r1", c->token, now_ms(), LEASE_MS, NULL, &c->err);
}

static void run_taken_over(void **state) {
    (void)state;
    NEED_PG();
    sst_error err = {0};
    sst_pg *pa = pool(), *pb = pool();
    sst_queue *qa = sst_postgres_queue_open_pg(pa, E);
    sst_queue *qb = qa != NULL ? sst_postgres_queue_open_pg(pb, E) : NULL;
    assert_non_null(qb);
    sst_queued_run r = {.run_id = "r1", .thread_id = "t1"};
    assert_int_equal(sst_queue_enqueue(qa, &r, 0, E), SST_OK);
    seen a = {0}, b = {0};
    assert_int_equal(sst_queue_claim(qa, "worker-a", now_ms(), LEASE_MS, on_run, &a, E), SST_OK);
    assert_int_equal(a.attempt, 1);

    /* Worker A stops inside its next renewal: the run's row is locked, uncommitted. */
    gate g;
    gate_init(&g);
    sst__pg_set_commit_hook(pa, gate_hook, &g);
    gate_set(&g, GATE_ARMED);
    call renew = {.a = qa, .token = a.token};
    call_start(&renew, renew_call);
    gate_wait_holding(&g);

    /* Worker B polls as a worker does: the run must come back to it, attempt 2. */
    int64_t end = now_ms() + DEADLINE_MS;
    sst_code rc = SST_ENOTFOUND;
    while (rc == SST_ENOTFOUND && now_ms() < end) {
        sst_error_clear(E);
        rc = sst_queue_claim(qb, "worker-b", now_ms(), 60000, on_run, &b, E);
        if (rc == SST_ENOTFOUND) {
            sst__sleep_ms(20);
        }
    }
    if (rc != SST_OK) {
        print_error("the run of a holder stopped mid-transaction was never claimed again "
                    "(%d ms): %s\n",
                    DEADLINE_MS, err.msg);
    }
    assert_int_equal(rc, SST_OK);
    assert_int_equal(b.attempt, 2);
    assert_true(b.token != a.token);

    /* A wakes: its renewal's transaction is gone, and the retry finds the run taken. */
    gate_set(&g, GATE_RELEASED);
    assert_true(call_wait(&renew));
    assert_int_equal(renew.rc, SST_ECONFLICT);
    assert_non_null(strstr(renew.err.msg, "claimed again by 'worker-b'"));
    sst__pg_set_commit_hook(pa, NULL, NULL);
    rc = sst_queue_finish(qa, "r1", a.token, SST_QUEUE_SUCCESS, now_ms(), E);
    assert_int_equal(rc, SST_ECONFLICT);
    sst_error_clear(E);

    /* B finishes it: once. */
    assert_int_equal(sst_queue_finish(qb, "r1", b.token, SST_QUEUE_SUCCESS, now_ms(), E), SST_OK);
    seen got = {0};
    assert_int_equal(sst_queue_get(qb, "r1", on_run, &got, E), SST_OK);
    assert_int_equal(got.status, SST_QUEUE_SUCCESS);
    assert_int_equal(got.attempt, 2);
    gate_destroy(&g);
    sst_queue_free(qa);
    sst_queue_free(qb);
    sst_pg_release(pa);
    sst_pg_release(pb);
}

/* ---- 2. a thread's lease taken over from a holder stopped inside a put ---- */

static sst_payload payload(sst_checkpointer *cp, const char *json, sst_value **holder) {
    sst_payload p = {0};
    *holder = NULL;
    if ((sst_checkpointer_flags(cp) & SST_SAVER_VALUES) != 0) {
        *holder = tu_json(json);
        p.value = *holder;
    } else {
        p.data = json;
        p.len = strlen(json);
    }
    return p;
}

static void put_call(call *c) {
    sst_checkpointer *cp = c->a;
    sst_value *body = NULL, *meta = NULL;
    sst_checkpoint rec = {.format = SST_CHECKPOINT_FORMAT,
                          .thread_id = "t2",
                          .ns = "",
                          .id = "c1",
                          .source = "loop",
                          .created_at = now_ms(),
                          .body = payload(cp, "{\"by\":\"a\"}", &body),
                          .metadata = payload(cp, "{}", &meta)};
    c->rc = sst_checkpointer_put(cp, &rec, true, &c->err);
    sst_value_unref(body);
    sst_value_unref(meta);
}

static void lock_call(call *c) {
    c->rc = sst_checkpointer_lock(c->a, "t2", true, &c->err);
}

static void thread_taken_over(void **state) {
    (void)state;
    NEED_PG();
    sst_error err = {0};
    sst_pg *pa = pool(), *pb = pool();
    sst_postgres_saver_opts so;
    sst_postgres_saver_opts_init(&so);
    so.lease_ms = LEASE_MS;
    sst_checkpointer *ca = sst_postgres_saver_open_pg(pa, &so, E);
    sst_checkpointer *cb = ca != NULL ? sst_postgres_saver_open_pg(pb, &so, E) : NULL;
    if (cb == NULL) {
        print_error("saver: %s\n", err.msg);
    }
    assert_non_null(cb);
    assert_int_equal(sst_checkpointer_lock(ca, "t2", false, E), SST_OK);

    /* A stops inside a put: its fencing check holds a share lock on the lease row. */
    gate g;
    gate_init(&g);
    sst__pg_set_commit_hook(pa, gate_hook, &g);
    gate_set(&g, GATE_ARMED);
    call put = {.a = ca};
    call_start(&put, put_call);
    gate_wait_holding(&g);

    /* B waits for the thread, as a worker that claimed A's run does (wait = true). */
    call lock = {.a = cb};
    call_start(&lock, lock_call);
    if (!call_wait(&lock)) {
        fail_msg("a lease held by a process stopped inside a put was never taken over (%d ms)",
                 DEADLINE_MS);
    }
    if (lock.rc != SST_OK) {
        print_error("lock: %s\n", lock.err.msg);
    }
    assert_int_equal(lock.rc, SST_OK);

    /* A wakes: its put is refused, nothing of it is stored. */
    gate_set(&g, GATE_RELEASED);
    assert_true(call_wait(&put));
    assert_int_equal(put.rc, SST_ECONFLICT);
    assert_non_null(strstr(put.err.msg, "taken over"));
    sst__pg_set_commit_hook(pa, NULL, NULL);
    sst_checkpoint *got = sst_checkpointer_get(cb, "t2", "", NULL, E);
    assert_null(got);
    assert_int_equal(err.code, SST_ENOTFOUND);
    sst_error_clear(E);

    sst_checkpointer_unlock(cb, "t2");
    sst_checkpointer_unlock(ca, "t2");
    gate_destroy(&g);
    sst_checkpointer_free(ca);
    sst_checkpointer_free(cb);
    sst_pg_release(pa);
    sst_pg_release(pb);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(run_taken_over),
        cmocka_unit_test(thread_taken_over),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
