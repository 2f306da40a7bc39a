/* SPDX-License-Identifier: MIT */
/*
 * The durable path's commits on PostgreSQL (issue 37), against a real server
 * (the CTest fixture "pg"), counted through the pool's own numbers
 * (sst__pg_commit_stats) and its commit hook, never through timing:
 *
 *  - group commit: transactions that come while a COMMIT is under way wait and
 *    are committed together, with one COMMIT (more transactions than flushes);
 *    one transaction's failing statement fails it alone; many threads at once
 *    commit every row once (TSan);
 *  - a batch handed over to the next transaction commits with it (one flush);
 *  - a batch begun on a pooled connection whose backend was ended meanwhile
 *    begins on a new one (it used to read the lost connection after freeing it);
 *  - a chain run through `serve` (its queue, its worker) in durability "sync"
 *    costs at most as many flushed commits as it has checkpoints (its
 *    supersteps + 2): the enqueue, the claim with its lease, its input
 *    checkpoint and its first superstep's, one per later checkpoint, the last
 *    one with the run's finish and its lease given back;
 *  - round trips (libpq's trace of the messages sent): a transaction of one
 *    statement is one exchange with its BEGIN and one for its COMMIT, or one in
 *    all when its last statement takes the COMMIT along (sst__pg_exec_last),
 *    and a transaction that sends no statement sends nothing;
 *  - savepoints only where a job may fail alone (unguarded_jobs): none for a
 *    job of one sst__pg_exec_last statement nor for a read in a batch, whose
 *    errors abort the transaction (a group runs its other jobs again, a batch
 *    commits nothing);
 *  - a kept transaction (sst__pg_tx_keep) stays open for its owner's commit;
 *    the run's last checkpoint commits with its finish or not at all: a worker
 *    whose connection ends before that commit leaves the run to attempt 2,
 *    which runs its last superstep alone again;
 *  - the API's POST /threads {} sends at most 5 statements (api_statements: a
 *    thread id the server made is not looked up first);
 *  - the lease keeper leaves a claim alone until it is committed.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <sqlite3.h>

#include "common.h"
#include "common/pg.h"
#include "server/server_int.h"
#include "superstep/server.h"
#include "superstep/sqlite.h"
#include "test_util.h"

#define E (&err)

static char g_url[600];

static int setup(void **state) {
    (void)state;
    return tu_pg_group_setup("durpath", g_url, sizeof g_url);
}

#define NEED_PG() TU_NEED_PG(g_url)

static sst_code simple_tx(sst__pg_conn *c, void *user, sst_error *err) {
    return sst__pg_simple(c, user, "test statement", err);
}

/* ---- a gate in the commit hook: the first COMMIT after arming waits there ---- */

typedef struct gate {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int state; /* 0 open, 1 armed, 2 holding, 3 released */
} gate;

static void gate_hook(void *ud) {
    gate *g = ud;
    pthread_mutex_lock(&g->mu);
    if (g->state == 1) {
        g->state = 2;
        pthread_cond_broadcast(&g->cv);
        while (g->state == 2) {
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

static void gate_wait_holding(gate *g) {
    pthread_mutex_lock(&g->mu);
    while (g->state != 2) {
        pthread_cond_wait(&g->cv, &g->mu);
    }
    pthread_mutex_unlock(&g->mu);
}

/* A transaction on its own thread. */
typedef struct tx_call {
    pthread_t tid;
    sst_pg *pg;
    char sql[200];
    sst_code rc;
    sst_error err;
} tx_call;

static void *tx_main(void *arg) {
    tx_call *t = arg;
    t->rc = sst__pg_tx(t->pg, true, simple_tx, t->sql, &t->err);
    return NULL;
}

static void tx_start(tx_call *t) {
    assert_int_equal(pthread_create(&t->tid, NULL, tx_main, t), 0);
}

static int64_t count_rows(const char *sql) {
    sst_error err = {0};
    sst_pg *pg = tu_pg_pool(g_url, 1);
    sst__pg_conn *c = sst__pg_get(pg, E);
    assert_non_null(c);
    PGresult *r = sst__pg_exec(c, "count", sql, NULL, "counting", E);
    assert_non_null(r);
    int64_t n = sst__pg_int(r, 0, 0);
    PQclear(r);
    sst__pg_put(c);
    sst_pg_release(pg);
    return n;
}

/* Transactions that come while a COMMIT is under way share the next one. */
static void group_commit_gathers(void **state) {
    (void)state;
    NEED_PG();
    enum { N = 8 };
    sst_pg *pg = tu_pg_pool(g_url, 4);
    sst_error err = {0};
    assert_int_equal(
        sst__pg_tx(pg, true, simple_tx, "CREATE TABLE g1(k int PRIMARY KEY, v text NOT NULL)", E),
        SST_OK);
    gate g = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 1};
    sst__pg_set_commit_hook(pg, gate_hook, &g);
    sst__pg_stats before, after;
    sst__pg_commit_stats(pg, &before);
    tx_call first = {.pg = pg, .sql = "INSERT INTO g1 VALUES (0, 'leader')"};
    tx_start(&first);
    gate_wait_holding(&g); /* a flush under way */
    tx_call t[N];
    for (int i = 0; i < N; i++) {
        t[i] = (tx_call){.pg = pg};
        /* one of them fails (a duplicate key): it alone */
        snprintf(t[i].sql, sizeof t[i].sql, "INSERT INTO g1 VALUES (%d, 'w')", i == 3 ? 0 : i + 1);
        tx_start(&t[i]);
    }
    assert_int_equal(sst__pg_group_waiting(pg, N), N);
    gate_set(&g, 3);
    assert_int_equal(pthread_join(first.tid, NULL), 0);
    assert_int_equal(first.rc, SST_OK);
    for (int i = 0; i < N; i++) {
        assert_int_equal(pthread_join(t[i].tid, NULL), 0);
        assert_int_equal(t[i].rc, i == 3 ? SST_ECONFLICT : SST_OK);
    }
    sst__pg_commit_stats(pg, &after);
    /* The leader's COMMIT, then one for the eight that waited (seven of them stored). */
    assert_int_equal(after.flushed - before.flushed, 2);
    assert_int_equal(after.jobs - before.jobs, 1 + N - 1);
    assert_int_equal(count_rows("SELECT count(*) FROM g1"), N);
    sst__pg_set_commit_hook(pg, NULL, NULL);
    sst_pg_release(pg);
}

/* Many threads at once: every transaction committed once, in fewer flushes or as many. */
typedef struct hammer {
    sst_pg *pg;
    int id;
    sst_code rc;
} hammer;

static sst_code bump_tx(sst__pg_conn *c, void *user, sst_error *err) {
    hammer *h = user;
    sst__pg_params p;
    sst__pg_params_init(&p);
    sst__pg_i64(&p, h->id);
    return sst__pg_run(c, "bump", "UPDATE g2 SET n = n + 1 WHERE k = $1::int", &p, "bumping", err);
}

static void *hammer_main(void *arg) {
    hammer *h = arg;
    for (int i = 0; i < 40 && h->rc == SST_OK; i++) {
        sst_error err = {0};
        h->rc = sst__pg_tx(h->pg, i % 2 == 0, bump_tx, h, E);
        if (h->rc != SST_OK) {
            print_error("thread %d: %s\n", h->id, err.msg);
        }
    }
    return NULL;
}

static void group_commit_many_threads(void **state) {
    (void)state;
    NEED_PG();
    enum { T = 12 };
    sst_pg *pg = tu_pg_pool(g_url, 4);
    sst_error err = {0};
    assert_int_equal(sst__pg_tx(pg, true, simple_tx,
                                "CREATE TABLE g2(k int PRIMARY KEY, n int NOT NULL);"
                                " INSERT INTO g2 SELECT g, 0 FROM generate_series(0, 11) g",
                                E),
                     SST_OK);
    sst__pg_stats before, after;
    sst__pg_commit_stats(pg, &before);
    pthread_t tid[T];
    hammer h[T];
    for (int i = 0; i < T; i++) {
        h[i] = (hammer){.pg = pg, .id = i};
        assert_int_equal(pthread_create(&tid[i], NULL, hammer_main, &h[i]), 0);
    }
    for (int i = 0; i < T; i++) {
        assert_int_equal(pthread_join(tid[i], NULL), 0);
        assert_int_equal(h[i].rc, SST_OK);
    }
    sst__pg_commit_stats(pg, &after);
    assert_int_equal(after.jobs - before.jobs, T * 40);
    assert_true(after.flushed + after.unflushed - before.flushed - before.unflushed <= T * 40);
    assert_int_equal(count_rows("SELECT sum(n) FROM g2 WHERE n = 40"), T * 40);
    print_message(
        "%d transactions in %llu commits\n", T * 40,
        (unsigned long long)(after.flushed + after.unflushed - before.flushed - before.unflushed));
    sst_pg_release(pg);
}

/* A batch handed over commits with the next transaction: one flush for both. */
static void batch_hand_over(void **state) {
    (void)state;
    NEED_PG();
    sst_pg *pg = tu_pg_pool(g_url, 2);
    sst_error err = {0};
    assert_int_equal(sst__pg_tx(pg, true, simple_tx, "CREATE TABLE g3(k int PRIMARY KEY)", E),
                     SST_OK);
    sst__pg_stats before, after;
    sst__pg_commit_stats(pg, &before);
    assert_int_equal(sst__pg_batch_begin(pg, E), SST_OK);
    assert_true(sst__pg_batch_open(pg));
    assert_int_equal(sst__pg_tx(pg, true, simple_tx, "INSERT INTO g3 VALUES (1)", E), SST_OK);
    /* a failing one inside rolls back its own savepoint only */
    assert_int_equal(sst__pg_tx(pg, true, simple_tx, "INSERT INTO g3 VALUES (1)", E),
                     SST_ECONFLICT);
    sst_error_clear(E);
    sst__pg_batch_hand_over(pg);
    assert_int_equal(sst__pg_tx(pg, false, simple_tx, "INSERT INTO g3 VALUES (2)", E), SST_OK);
    assert_false(sst__pg_batch_open(pg));
    assert_int_equal(sst__pg_batch_commit(pg, true, E), SST_OK); /* nothing left: a no-op */
    sst__pg_commit_stats(pg, &after);
    assert_int_equal(after.flushed - before.flushed, 1);
    assert_int_equal(after.unflushed - before.unflushed, 0);
    assert_int_equal(count_rows("SELECT count(*) FROM g3"), 2);
    /* Rolled back: nothing of it stays. */
    assert_int_equal(sst__pg_batch_begin(pg, E), SST_OK);
    assert_int_equal(sst__pg_tx(pg, true, simple_tx, "INSERT INTO g3 VALUES (3)", E), SST_OK);
    assert_int_equal(sst__pg_batch_commit(pg, false, E), SST_OK);
    assert_int_equal(count_rows("SELECT count(*) FROM g3"), 2);
    sst_pg_release(pg);
}

/* A batch begun while the pool's idle connection is lost (its backend ended, as a
 * server restart would) begins on a new connection; nothing is read after the lost
 * one is closed (ASan, TSan). */
static void batch_begin_on_lost_connection(void **state) {
    (void)state;
    NEED_PG();
    sst_pg *pg = tu_pg_pool(g_url, 1);
    sst_error err = {0};
    assert_int_equal(sst__pg_tx(pg, true, simple_tx, "CREATE TABLE g4(k int PRIMARY KEY)", E),
                     SST_OK);
    sst__pg_conn *c = sst__pg_get(pg, E);
    assert_non_null(c);
    PGresult *r = sst__pg_exec(c, "pid", "SELECT pg_backend_pid()", NULL, "pid", E);
    assert_non_null(r);
    int64_t pid = sst__pg_int(r, 0, 0);
    PQclear(r);
    sst__pg_put(c); /* idle in the pool: the next batch takes it */
    char sql[128];
    /* pg_terminate_backend waits (up to the timeout, ms) until the backend is gone. */
    snprintf(sql, sizeof sql, "SELECT pg_terminate_backend(%lld, %d)", (long long)pid,
             (int)(10000 * tu_time_scale()));
    assert_int_equal(tu_pg_exec(g_url, sql), 0);
    assert_int_equal(sst__pg_batch_begin(pg, E), SST_OK);
    assert_int_equal(sst__pg_tx(pg, true, simple_tx, "INSERT INTO g4 VALUES (1)", E), SST_OK);
    assert_int_equal(sst__pg_batch_commit(pg, true, E), SST_OK);
    assert_int_equal(count_rows("SELECT count(*) FROM g4"), 1);
    sst_pg_release(pg);
}

/* ---- round trips ---- */

/* The exchanges with the server in @p f (a libpq trace, timestamps off) from @p *at on:
 * each simple query ("Query") or pipeline ("Sync") the client sent is one round trip. */
static int trips(FILE *f, long *at) {
    fflush(f);
    fseek(f, *at, SEEK_SET);
    char line[4096];
    int n = 0;
    while (fgets(line, sizeof line, f) != NULL) {
        if (line[0] == 'F' &&
            (strstr(line, "\tSync") != NULL || strstr(line, "\tQuery\t") != NULL)) {
            n++;
        }
    }
    *at = ftell(f);
    return n;
}

typedef struct ins_job {
    int k;
    bool last; /* the statement goes with sst__pg_run_last */
    bool none; /* no statement at all */
} ins_job;

static sst_code ins_tx(sst__pg_conn *c, void *user, sst_error *err) {
    ins_job *j = user;
    if (j->none) {
        return SST_OK;
    }
    sst__pg_params p;
    sst__pg_params_init(&p);
    sst__pg_i64(&p, j->k);
    static const char sql[] = "INSERT INTO g5 VALUES ($1::int)";
    return j->last ? sst__pg_run_last(c, "g5_ins", sql, &p, "inserting", err)
                   : sst__pg_run(c, "g5_ins", sql, &p, "inserting", err);
}

/* A transaction's frame goes with its statements (libpq's pipeline mode), its COMMIT with
 * its last statement when it can, and a transaction without statements sends nothing. */
static void round_trips(void **state) {
    (void)state;
    NEED_PG();
    sst_pg *pg = tu_pg_pool(g_url, 1);
    sst_error err = {0};
    assert_int_equal(sst__pg_tx(pg, true, simple_tx, "CREATE TABLE g5(k int PRIMARY KEY)", E),
                     SST_OK);
    sst__pg_conn *c = sst__pg_get(pg, E); /* the pool's one connection: every call below's */
    assert_non_null(c);
    FILE *f = tmpfile();
    assert_non_null(f);
    PQtrace(c->conn, f);
    PQsetTraceFlags(c->conn, PQTRACE_SUPPRESS_TIMESTAMPS);
    sst__pg_put(c);
    long at = 0;
    sst__pg_stats before, after;

    /* BEGIN, the statement (prepared in the same exchange, its first use), then COMMIT. */
    ins_job j = {.k = 1};
    assert_int_equal(sst__pg_tx(pg, true, ins_tx, &j, E), SST_OK);
    assert_int_equal(trips(f, &at), 2);
    /* Its COMMIT along with it: one exchange in all, committed (and counted) once. */
    sst__pg_commit_stats(pg, &before);
    j = (ins_job){.k = 2, .last = true};
    assert_int_equal(sst__pg_tx(pg, true, ins_tx, &j, E), SST_OK);
    assert_int_equal(trips(f, &at), 1);
    sst__pg_commit_stats(pg, &after);
    assert_int_equal(after.flushed - before.flushed, 1);
    assert_int_equal(count_rows("SELECT count(*) FROM g5"), 2);
    /* The same without a flush: SET LOCAL goes in the same exchange. */
    j = (ins_job){.k = 3, .last = true};
    assert_int_equal(sst__pg_tx(pg, false, ins_tx, &j, E), SST_OK);
    assert_int_equal(trips(f, &at), 1);
    /* A last statement that fails: its COMMIT is skipped, nothing of it stays, and the
     * connection goes on (the next transaction works). */
    j = (ins_job){.k = 1, .last = true};
    assert_int_equal(sst__pg_tx(pg, true, ins_tx, &j, E), SST_ECONFLICT);
    sst_error_clear(E);
    j = (ins_job){.k = 4, .last = true};
    assert_int_equal(sst__pg_tx(pg, true, ins_tx, &j, E), SST_OK);
    assert_int_equal(count_rows("SELECT count(*) FROM g5"), 4);
    trips(f, &at);
    /* No statement: nothing sent, nothing committed. */
    sst__pg_commit_stats(pg, &before);
    j = (ins_job){.none = true};
    assert_int_equal(sst__pg_tx(pg, true, ins_tx, &j, E), SST_OK);
    assert_int_equal(trips(f, &at), 0);
    sst__pg_commit_stats(pg, &after);
    assert_int_equal(after.flushed - before.flushed, 0);
    /* In a batch: each transaction's savepoint goes with its statement. */
    assert_int_equal(sst__pg_batch_begin(pg, E), SST_OK);
    trips(f, &at);                       /* the BEGIN */
    j = (ins_job){.k = 5, .last = true}; /* no COMMIT along: the batch commits */
    assert_int_equal(sst__pg_tx(pg, true, ins_tx, &j, E), SST_OK);
    j = (ins_job){.k = 6};
    assert_int_equal(sst__pg_tx(pg, true, ins_tx, &j, E), SST_OK);
    assert_int_equal(trips(f, &at), 2);
    assert_int_equal(count_rows("SELECT count(*) FROM g5"), 4); /* not committed yet */
    assert_int_equal(sst__pg_batch_commit(pg, true, E), SST_OK);
    assert_int_equal(count_rows("SELECT count(*) FROM g5"), 6);
    c = sst__pg_get(pg, E);
    assert_non_null(c);
    PQuntrace(c->conn);
    sst__pg_put(c);
    fclose(f);
    sst_pg_release(pg);
}

/* A kept transaction stays open for its owner, who commits it with what it adds: its
 * BEGIN goes with its statement, and the owner's COMMIT is the one flush of both. Unarmed
 * (or once used), sst__pg_tx_keep is an ordinary transaction. */
static void keep_for_owner(void **state) {
    (void)state;
    NEED_PG();
    sst_pg *pg = tu_pg_pool(g_url, 1);
    sst_error err = {0};
    /* Table g5 of round_trips, keys above 100. */
    sst__pg_conn *c = sst__pg_get(pg, E);
    assert_non_null(c);
    FILE *f = tmpfile();
    assert_non_null(f);
    PQtrace(c->conn, f);
    PQsetTraceFlags(c->conn, PQTRACE_SUPPRESS_TIMESTAMPS);
    sst__pg_put(c);
    long at = 0;
    sst__pg_stats before, after;
    sst__pg_commit_stats(pg, &before);
    sst__pg_keep(pg, "t1");
    ins_job j = {.k = 101, .last = true}; /* its COMMIT is not taken along: kept */
    assert_int_equal(sst__pg_tx_keep(pg, "t1", true, ins_tx, &j, E), SST_OK);
    assert_int_equal(trips(f, &at), 1); /* BEGIN and the statement */
    assert_true(sst__pg_batch_open(pg));
    assert_true(sst__pg_batch_kept(pg));
    assert_int_equal(count_rows("SELECT count(*) FROM g5 WHERE k > 100"), 0);
    j = (ins_job){.k = 102}; /* used once: this one joins it as any transaction would */
    assert_int_equal(sst__pg_tx_keep(pg, "t1", true, ins_tx, &j, E), SST_OK);
    assert_int_equal(count_rows("SELECT count(*) FROM g5 WHERE k > 100"), 0);
    trips(f, &at);
    /* The batch's last statement takes its COMMIT along (the run's finish): one exchange
     * for both, and the owner's commit only settles it. */
    sst__pg_batch_commit_along(pg);
    j = (ins_job){.k = 105, .last = true};
    assert_int_equal(sst__pg_tx(pg, true, ins_tx, &j, E), SST_OK);
    assert_int_equal(trips(f, &at), 1);
    assert_int_equal(count_rows("SELECT count(*) FROM g5 WHERE k > 100"), 3);
    assert_int_equal(sst__pg_batch_commit(pg, true, E), SST_OK);
    assert_int_equal(trips(f, &at), 0);
    assert_false(sst__pg_batch_kept(pg));
    assert_int_equal(count_rows("SELECT count(*) FROM g5 WHERE k > 100"), 3);
    sst__pg_commit_stats(pg, &after);
    assert_int_equal(after.flushed - before.flushed, 1);
    /* Unarmed: committed at once. A failure of a kept one leaves no batch open. */
    j = (ins_job){.k = 103, .last = true};
    assert_int_equal(sst__pg_tx_keep(pg, "t1", true, ins_tx, &j, E), SST_OK);
    assert_false(sst__pg_batch_open(pg));
    assert_int_equal(count_rows("SELECT count(*) FROM g5 WHERE k > 100"), 4);
    sst__pg_keep(pg, "t1");
    j = (ins_job){.k = 103, .last = true};
    assert_int_equal(sst__pg_tx_keep(pg, "t1", true, ins_tx, &j, E), SST_ECONFLICT);
    assert_false(sst__pg_batch_open(pg));
    sst_error_clear(E);
    /* Armed for another key (a graph a node invokes on another thread id): not kept. */
    sst__pg_keep(pg, "t1");
    j = (ins_job){.k = 104, .last = true};
    assert_int_equal(sst__pg_tx_keep(pg, "t2", true, ins_tx, &j, E), SST_OK);
    assert_false(sst__pg_batch_open(pg));
    assert_int_equal(count_rows("SELECT count(*) FROM g5 WHERE k > 100"), 5);
    sst__pg_keep(pg, NULL);
    c = sst__pg_get(pg, E);
    assert_non_null(c);
    PQuntrace(c->conn);
    sst__pg_put(c);
    fclose(f);
    sst_pg_release(pg);
}

/* Lines of the trace since @p at that send SAVEPOINT sst_job (not ROLLBACK TO it). */
static int savepoints(FILE *f, long *at) {
    fflush(f);
    fseek(f, *at, SEEK_SET);
    char line[4096];
    int n = 0;
    while (fgets(line, sizeof line, f) != NULL) {
        n += line[0] == 'F' && strstr(line, "SAVEPOINT sst_job") != NULL &&
             strstr(line, "ROLLBACK TO") == NULL;
    }
    *at = ftell(f);
    return n;
}

typedef struct ins_call {
    pthread_t tid;
    sst_pg *pg;
    ins_job j;
    sst_code rc;
} ins_call;

static void *ins_main(void *arg) {
    ins_call *t = arg;
    sst_error err = {0};
    t->rc = sst__pg_tx(t->pg, true, ins_tx, &t->j, E);
    return NULL;
}

/* Savepoints only where a job may fail alone: a job whose one statement answers "no"
 * without writing (sst__pg_exec_last) goes without one, in a group and in a batch. Its
 * error aborts the transaction: in a group the others run again and commit, in a batch
 * nothing commits; a read that fails in a batch does the same. */
static void unguarded_jobs(void **state) {
    (void)state;
    NEED_PG();
    sst_pg *pg = tu_pg_pool(g_url, 1);
    sst_error err = {0};
    sst__pg_conn *c = sst__pg_get(pg, E); /* the pool's one connection */
    assert_non_null(c);
    FILE *f = tmpfile();
    assert_non_null(f);
    PQtrace(c->conn, f);
    PQsetTraceFlags(c->conn, PQTRACE_SUPPRESS_TIMESTAMPS);
    sst__pg_put(c);
    long at = 0;
    /* A group: the leader held at its COMMIT, four jobs behind it, one a duplicate. */
    gate g = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 1};
    sst__pg_set_commit_hook(pg, gate_hook, &g);
    ins_call first = {.pg = pg, .j = {.k = 200, .last = true}};
    assert_int_equal(pthread_create(&first.tid, NULL, ins_main, &first), 0);
    gate_wait_holding(&g);
    enum { N = 4 };
    ins_call t[N];
    for (int i = 0; i < N; i++) {
        t[i] = (ins_call){.pg = pg, .j = {.k = i == 2 ? 200 : 201 + i, .last = true}};
        assert_int_equal(pthread_create(&t[i].tid, NULL, ins_main, &t[i]), 0);
    }
    assert_int_equal(sst__pg_group_waiting(pg, N), N);
    gate_set(&g, 3);
    assert_int_equal(pthread_join(first.tid, NULL), 0);
    assert_int_equal(first.rc, SST_OK);
    for (int i = 0; i < N; i++) {
        assert_int_equal(pthread_join(t[i].tid, NULL), 0);
        assert_int_equal(t[i].rc, i == 2 ? SST_ECONFLICT : SST_OK);
    }
    sst__pg_set_commit_hook(pg, NULL, NULL);
    assert_int_equal(savepoints(f, &at), 0);
    assert_int_equal(count_rows("SELECT count(*) FROM g5 WHERE k >= 200"), 1 + N - 1);
    /* A batch: no savepoint for such jobs; one failing commits nothing of the batch. */
    assert_int_equal(sst__pg_batch_begin(pg, E), SST_OK);
    ins_job j = {.k = 210, .last = true};
    assert_int_equal(sst__pg_tx(pg, true, ins_tx, &j, E), SST_OK);
    j = (ins_job){.k = 211, .last = true};
    assert_int_equal(sst__pg_tx(pg, true, ins_tx, &j, E), SST_OK);
    assert_int_equal(savepoints(f, &at), 0);
    assert_int_equal(sst__pg_batch_commit(pg, true, E), SST_OK);
    assert_int_equal(count_rows("SELECT count(*) FROM g5 WHERE k >= 210"), 2);
    assert_int_equal(sst__pg_batch_begin(pg, E), SST_OK);
    j = (ins_job){.k = 212, .last = true};
    assert_int_equal(sst__pg_tx(pg, true, ins_tx, &j, E), SST_OK);
    j = (ins_job){.k = 210, .last = true};
    assert_int_equal(sst__pg_tx(pg, true, ins_tx, &j, E), SST_ECONFLICT);
    sst_error_clear(E);
    assert_int_equal(sst__pg_batch_commit(pg, true, E), SST_EIO);
    assert_non_null(strstr(err.msg, "aborted the transaction"));
    sst_error_clear(E);
    assert_int_equal(count_rows("SELECT count(*) FROM g5 WHERE k >= 210"), 2);
    /* A read that fails in a batch (no savepoint either). */
    assert_int_equal(sst__pg_batch_begin(pg, E), SST_OK);
    j = (ins_job){.k = 213, .last = true};
    assert_int_equal(sst__pg_tx(pg, true, ins_tx, &j, E), SST_OK);
    assert_int_equal(sst__pg_read(pg, simple_tx, "SELECT 1 / 0", E), SST_EIO);
    sst_error_clear(E);
    assert_int_equal(savepoints(f, &at), 0);
    assert_int_equal(sst__pg_batch_commit(pg, true, E), SST_EIO);
    sst_error_clear(E);
    assert_int_equal(count_rows("SELECT count(*) FROM g5 WHERE k >= 210"), 2);
    /* A job of several statements keeps its savepoint: its failure undoes it alone. */
    assert_int_equal(sst__pg_batch_begin(pg, E), SST_OK);
    j = (ins_job){.k = 214, .last = true};
    assert_int_equal(sst__pg_tx(pg, true, ins_tx, &j, E), SST_OK);
    assert_int_equal(sst__pg_tx(pg, true, simple_tx, "INSERT INTO g5 VALUES (214)", E),
                     SST_ECONFLICT);
    sst_error_clear(E);
    assert_int_equal(savepoints(f, &at), 1);
    assert_int_equal(sst__pg_batch_commit(pg, true, E), SST_OK);
    assert_int_equal(count_rows("SELECT count(*) FROM g5 WHERE k >= 210"), 3);
    c = sst__pg_get(pg, E);
    assert_non_null(c);
    PQuntrace(c->conn);
    sst__pg_put(c);
    fclose(f);
    sst_pg_release(pg);
}

/* A handed-over batch passed on past one transaction commits with the one after it. */
static void batch_hand_over_past(void **state) {
    (void)state;
    NEED_PG();
    sst_pg *pg = tu_pg_pool(g_url, 2);
    sst_error err = {0};
    assert_int_equal(sst__pg_tx(pg, true, simple_tx, "CREATE TABLE g6(k int PRIMARY KEY)", E),
                     SST_OK);
    sst__pg_stats before, after;
    sst__pg_commit_stats(pg, &before);
    assert_int_equal(sst__pg_batch_begin(pg, E), SST_OK);
    assert_int_equal(sst__pg_tx(pg, true, simple_tx, "INSERT INTO g6 VALUES (1)", E), SST_OK);
    sst__pg_batch_hand_over(pg);
    sst__pg_batch_hand_over_past(pg);
    assert_int_equal(sst__pg_tx(pg, true, simple_tx, "INSERT INTO g6 VALUES (2)", E), SST_OK);
    assert_true(sst__pg_batch_open(pg)); /* passed on */
    assert_int_equal(count_rows("SELECT count(*) FROM g6"), 0);
    assert_int_equal(sst__pg_tx(pg, true, simple_tx, "INSERT INTO g6 VALUES (3)", E), SST_OK);
    assert_false(sst__pg_batch_open(pg));
    sst__pg_commit_stats(pg, &after);
    assert_int_equal(after.flushed - before.flushed, 1);
    assert_int_equal(count_rows("SELECT count(*) FROM g6"), 3);
    sst_pg_release(pg);
}

/* ---- a chain run through the server ---- */

static bool count_rec(const sst_checkpoint *rec, void *ud) {
    (void)rec;
    (*(int *)ud)++;
    return true;
}

#define THREAD "6f1c3c1e-5d2a-4c1e-9a57-3c0e1f2a4b5c"

static void chain_run_commits(void **state) {
    (void)state;
    NEED_PG();
    sst_error err = {0};
    sst_server_opts o;
    sst_server_opts_init(&o);
    o.db = g_url;
    o.port = 0;
    o.workers = 1;
    o.no_web = true;
    sst_server *s = sst_server_new(&o, E);
    if (s == NULL) {
        print_error("%s\n", err.msg);
    }
    assert_non_null(s);
    char path[512];
    assert_int_equal(
        sst_server_add_graph(s, "chain",
                             tu_data_path("../server/graphs/chain.lua", path, sizeof path), E),
        SST_OK);
    assert_int_equal(sst_server_start(s, E), SST_OK);
    unsigned port = sst_server_port(s);
    int status = 0;
    char *t = tu_http_post(port, "/threads", "{\"thread_id\":\"" THREAD "\"}", &status);
    if (status != 200) {
        print_error("%s\n", t);
    }
    assert_int_equal(status, 200);
    free(t);
    for (int round = 0; round < 2; round++) { /* a new thread, then one with checkpoints */
        sst__pg_stats before, after;
        sst__pg_commit_stats(s->pg, &before);
        uint64_t renewed = atomic_load(&s->renewals);
        char *body = tu_http_post(port, "/threads/" THREAD "/runs/wait",
                                  "{\"assistant_id\":\"chain\",\"input\":{\"items\":[]},"
                                  "\"durability\":\"sync\"}",
                                  &status);
        assert_int_equal(status, 200);
        assert_non_null(strstr(body, "\"c\""));
        free(body);
        sst__pg_commit_stats(s->pg, &after);
        uint64_t renewals = atomic_load(&s->renewals) - renewed;
        int checkpoints = 0;
        sst_checkpoint_query q = {.thread_id = THREAD, .ns = ""};
        assert_int_equal(sst_checkpointer_list(s->cp, &q, count_rec, &checkpoints, E), SST_OK);
        checkpoints = round == 0 ? checkpoints : checkpoints / 2; /* this run's */
        uint64_t flushed = after.flushed - before.flushed;
        print_message("round %d: %d checkpoints, %llu flushed commits (%llu unflushed), "
                      "%llu lease renewals\n",
                      round, checkpoints, (unsigned long long)flushed,
                      (unsigned long long)(after.unflushed - before.unflushed),
                      (unsigned long long)renewals);
        assert_int_equal(checkpoints, 5); /* steps -1 .. 3 */
        /* The enqueue; claim, lease, the input checkpoint and the first superstep's; one
         * per later checkpoint, the last with the finish and the lease given back: 5 for
         * the 5 checkpoints of this chain (3 nodes: supersteps + 2). A renewal of the
         * keeper may add one. */
        assert_true(flushed <= (uint64_t)checkpoints + renewals);
    }
    sst_server_stop(s);
    sst_server_free(s);
}

/* ---- the API's statements ----
 *
 * POST /threads {} on a server without workers (nothing else talks to PostgreSQL):
 * the thread written (BEGIN, its row and COMMIT, one exchange) and read back once for
 * the answer, with the thread's latest checkpoint (none). A thread id the server made
 * is new: it is not looked up first (one read fewer than before). */

static void api_statements(void **state) {
    (void)state;
    NEED_PG();
    sst_error err = {0};
    sst_server_opts o;
    sst_server_opts_init(&o);
    o.db = g_url;
    o.port = 0;
    o.workers = 0;
    o.no_web = true;
    sst_server *s = sst_server_new(&o, E);
    assert_non_null(s);
    char path[512];
    assert_int_equal(
        sst_server_add_graph(s, "chain",
                             tu_data_path("../server/graphs/chain.lua", path, sizeof path), E),
        SST_OK);
    assert_int_equal(sst_server_start(s, E), SST_OK);
    unsigned port = sst_server_port(s);
    int status = 0;
    for (int round = 0; round < 2; round++) { /* the first prepares its statements */
        sst__pg_stats before, after;
        sst__pg_commit_stats(s->pg, &before);
        char *t = tu_http_post(port, "/threads", "{}", &status);
        assert_int_equal(status, 200);
        assert_non_null(strstr(t, "\"thread_id\""));
        free(t);
        sst__pg_commit_stats(s->pg, &after);
        uint64_t n = after.statements - before.statements;
        print_message("POST /threads: %llu statements\n", (unsigned long long)n);
        /* BEGIN, the thread's row, COMMIT; the thread read back; its latest checkpoint. */
        assert_true(n <= 5);
    }
    sst_server_stop(s);
    sst_server_free(s);
}

/* ---- the keeper while a claim is left open for its first checkpoint ----
 *
 * A worker's claim on PostgreSQL stays uncommitted until the run's first checkpoint
 * commits it. The keeper, renewing the lease of every run in flight, must not renew it
 * meanwhile: its UPDATE does not see the claim (only the run pending), would judge the
 * lease lost, and the worker would stop the run without committing, leaving it running
 * under a token nobody holds until the lease ran out (bench/postgres.sh's 30 s stalls).
 * The worker is stopped at that COMMIT (the commit hook) while the keeper goes round
 * twice; the run must then finish on its first attempt. */

#define THREAD2 "0b7e2f4a-8c1d-4e6f-9a3b-5d2c7e1f0a9b"

typedef struct worker_gate {
    gate g;
    sst_server *s;
} worker_gate;

/* Holds the first COMMIT a worker of the server sends after arming (the claim's). */
static void worker_gate_hook(void *ud) {
    worker_gate *wg = ud;
    pthread_mutex_lock(&wg->g.mu);
    bool mine = wg->g.state == 1 && srv_is_worker_thread(wg->s);
    pthread_mutex_unlock(&wg->g.mu);
    if (mine) {
        gate_hook(&wg->g);
    }
}

/* Waits for the held COMMIT, then for two rounds of the keeper, then lets it go. */
static void *releaser_main(void *arg) {
    worker_gate *wg = arg;
    gate_wait_holding(&wg->g);
    uint64_t from = atomic_load(&wg->s->keeper_passes);
    while (atomic_load(&wg->s->keeper_passes) < from + 2) {
        sst__sleep_ms(20); /* polling a counter the keeper bumps: no timing assumed */
    }
    gate_set(&wg->g, 3);
    return NULL;
}

static void keeper_leaves_open_claim(void **state) {
    (void)state;
    NEED_PG();
    sst_error err = {0};
    sst_server_opts o;
    sst_server_opts_init(&o);
    o.db = g_url;
    o.port = 0;
    o.workers = 1;
    o.no_web = true;
    o.lease_s = 5; /* a lost run would come back after it, on attempt 2 */
    sst_server *s = sst_server_new(&o, E);
    assert_non_null(s);
    char path[512];
    assert_int_equal(
        sst_server_add_graph(s, "chain",
                             tu_data_path("../server/graphs/chain.lua", path, sizeof path), E),
        SST_OK);
    worker_gate wg = {{PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0}, s};
    sst__pg_set_commit_hook(s->pg, worker_gate_hook, &wg); /* before any thread uses the pool */
    assert_int_equal(sst_server_start(s, E), SST_OK);
    unsigned port = sst_server_port(s);
    int status = 0;
    char *t = tu_http_post(port, "/threads", "{\"thread_id\":\"" THREAD2 "\"}", &status);
    assert_int_equal(status, 200);
    free(t);
    gate_set(&wg.g, 1);
    pthread_t rel;
    assert_int_equal(pthread_create(&rel, NULL, releaser_main, &wg), 0);
    char *body = tu_http_post(port, "/threads/" THREAD2 "/runs/wait",
                              "{\"assistant_id\":\"chain\",\"input\":{\"items\":[]},"
                              "\"durability\":\"sync\"}",
                              &status);
    assert_int_equal(pthread_join(rel, NULL), 0);
    assert_int_equal(status, 200);
    assert_non_null(strstr(body, "\"c\""));
    free(body);
    /* Finished by the worker that claimed it, not taken over once its lease ran out. */
    assert_int_equal(count_rows("SELECT max(attempt) FROM sst_runs WHERE thread_id = '" THREAD2
                                "' AND status = 'success'"),
                     1);
    sst_server_stop(s);
    sst__pg_set_commit_hook(s->pg, NULL, NULL);
    sst_server_free(s);
}

/* ---- the last checkpoint commits with the finish, or neither does ----
 *
 * The worker keeps the run's last checkpoint open for its finish (sst__pg_keep): held at
 * that COMMIT, the thread shows 4 of the 5 checkpoints and the run still running; the
 * worker's connection is then ended there (a worker killed before its commit), so neither
 * commits. Once the lease runs out the run comes back, on attempt 2, and runs only its
 * last superstep again: 5 checkpoints in all, the last one attempt 2's. */

#define THREAD3 "3c9a1e7f-2b4d-4f8a-9c6e-1d5b7a3f2e8c"

typedef struct kill_gate {
    sst_server *s;
    _Atomic int state; /* 0 armed, 1 fired */
    int64_t seen_checkpoints, seen_running, ended;
} kill_gate;

static void kill_hook(void *ud) {
    kill_gate *k = ud;
    if (atomic_load(&k->state) != 0 || !srv_is_worker_thread(k->s) ||
        !sst__pg_batch_kept(k->s->pg)) {
        return;
    }
    atomic_store(&k->state, 1);
    k->seen_checkpoints =
        count_rows("SELECT count(*) FROM sst_checkpoints WHERE thread = '" THREAD3 "'");
    k->seen_running = count_rows("SELECT count(*) FROM sst_runs WHERE thread_id = '" THREAD3
                                 "' AND status = 'running'");
    /* The worker's connection, idle in the transaction it is about to commit: the one
     * holding locks in this test's schema (other tests share the server and may have
     * connections idle in a transaction of their own). */
    k->ended = count_rows("SELECT count(pg_terminate_backend(pid, 10000)) FROM pg_stat_activity"
                          " WHERE datname = current_database() AND pid <> pg_backend_pid()"
                          " AND state = 'idle in transaction' AND pid IN (SELECT l.pid FROM"
                          " pg_locks l JOIN pg_class c ON c.oid = l.relation"
                          " WHERE c.relnamespace = current_schema()::regnamespace)");
}

static void last_checkpoint_with_finish(void **state) {
    (void)state;
    NEED_PG();
    sst_error err = {0};
    sst_server_opts o;
    sst_server_opts_init(&o);
    o.db = g_url;
    o.port = 0;
    o.workers = 1;
    o.no_web = true;
    o.lease_s = 2; /* the lost run comes back after it */
    sst_server *s = sst_server_new(&o, E);
    assert_non_null(s);
    char path[512];
    assert_int_equal(
        sst_server_add_graph(s, "chain",
                             tu_data_path("../server/graphs/chain.lua", path, sizeof path), E),
        SST_OK);
    kill_gate k = {.s = s};
    sst__pg_set_commit_hook(s->pg, kill_hook, &k); /* before any thread uses the pool */
    assert_int_equal(sst_server_start(s, E), SST_OK);
    unsigned port = sst_server_port(s);
    int status = 0;
    char *t = tu_http_post(port, "/threads", "{\"thread_id\":\"" THREAD3 "\"}", &status);
    assert_int_equal(status, 200);
    free(t);
    char *body = tu_http_post(port, "/threads/" THREAD3 "/runs/wait",
                              "{\"assistant_id\":\"chain\",\"input\":{\"items\":[]},"
                              "\"durability\":\"sync\"}",
                              &status);
    assert_int_equal(status, 200);
    assert_non_null(strstr(body, "[\"a\",\"b\",\"c\"]"));
    free(body);
    assert_int_equal(atomic_load(&k.state), 1);
    assert_int_equal(k.seen_checkpoints, 4); /* the last one not committed before the finish */
    assert_int_equal(k.seen_running, 1);
    assert_int_equal(k.ended, 1);
    /* Attempt 2 ran the last superstep alone: one checkpoint more, not a run again. */
    assert_int_equal(
        count_rows("SELECT count(*) FROM sst_checkpoints WHERE thread = '" THREAD3 "'"), 5);
    assert_int_equal(count_rows("SELECT max(attempt) FROM sst_runs WHERE thread_id = '" THREAD3
                                "' AND status = 'success'"),
                     2);
    sst_server_stop(s);
    sst__pg_set_commit_hook(s->pg, NULL, NULL);
    sst_server_free(s);
}

/* ---- the same run on SQLite: a commit per checkpoint, and two more ----
 *
 * `serve --db FILE`: the API, its queue and its worker share one connection
 * (sst_sqlite_db); every COMMIT of it is counted through SQLite's commit hook. */

static int count_commit(void *ud) {
    (*(int *)ud)++;
    return 0; /* let it commit */
}

static void sqlite_chain_run_commits(void **state) {
    (void)state;
    sst_error err = {0};
    char dir[256], file[300];
    assert_int_equal(tu_temp_dir("durpath", dir, sizeof dir), 0);
    snprintf(file, sizeof file, "%s/app.db", dir);
    sst_server_opts o;
    sst_server_opts_init(&o);
    o.db = file;
    o.port = 0;
    o.workers = 1;
    o.no_web = true;
    o.flush = SST_FLUSH_ON; /* the claim is handed over to a flushed first checkpoint */
    sst_server *s = sst_server_new(&o, E);
    assert_non_null(s);
    assert_non_null(s->sdb);
    char path[512];
    assert_int_equal(
        sst_server_add_graph(s, "chain",
                             tu_data_path("../server/graphs/chain.lua", path, sizeof path), E),
        SST_OK);
    assert_int_equal(sst_server_start(s, E), SST_OK);
    sqlite3 *db = NULL;
    pthread_mutex_t *mu = NULL;
    sst_sqlite_db *ref = sst__sqlite_db_attach(s->sdb, NULL, 0, "test", &db, &mu, E);
    assert_non_null(ref);
    unsigned port = sst_server_port(s);
    int status = 0;
    char *t = tu_http_post(port, "/threads", "{\"thread_id\":\"" THREAD "\"}", &status);
    assert_int_equal(status, 200);
    free(t);
    int commits = 0;
    pthread_mutex_lock(mu);
    sqlite3_commit_hook(db, count_commit, &commits);
    pthread_mutex_unlock(mu);
    for (int round = 0; round < 2; round++) { /* a new thread, then one with checkpoints */
        pthread_mutex_lock(mu);
        int before = commits;
        pthread_mutex_unlock(mu);
        char *body = tu_http_post(port, "/threads/" THREAD "/runs/wait",
                                  "{\"assistant_id\":\"chain\",\"input\":{\"items\":[]},"
                                  "\"durability\":\"sync\"}",
                                  &status);
        assert_int_equal(status, 200);
        assert_non_null(strstr(body, "\"c\""));
        free(body);
        pthread_mutex_lock(mu);
        int made = commits - before;
        pthread_mutex_unlock(mu);
        int checkpoints = 0;
        sst_checkpoint_query q = {.thread_id = THREAD, .ns = ""};
        assert_int_equal(sst_checkpointer_list(s->cp, &q, count_rec, &checkpoints, E), SST_OK);
        checkpoints = round == 0 ? checkpoints : checkpoints / 2; /* this run's */
        print_message("SQLite round %d: %d checkpoints, %d commits\n", round, checkpoints, made);
        assert_int_equal(checkpoints, 5);
        /* The enqueue; the claim with its lease and the first checkpoint; one per later
         * checkpoint; the finish with the lease given back. */
        assert_true(made <= checkpoints + 2);
    }
    pthread_mutex_lock(mu);
    sqlite3_commit_hook(db, NULL, NULL);
    pthread_mutex_unlock(mu);
    sst_sqlite_db_release(ref);
    sst_server_stop(s);
    sst_server_free(s);
    tu_rm_rf(dir);
}

/* ---- every durability mode through the queue, on both backends ----
 *
 * Only a "sync" run's input checkpoint is written on the worker's thread; an "async"
 * run's go through the invoke's writer thread. Were its claim handed over all the same,
 * that thread would wait for the claim's open transaction while the worker waits for it
 * (on SQLite the connection's mutex: forever). Each run must finish on its first
 * attempt. */

typedef struct attempts {
    uint32_t max;
    int runs, done;
} attempts;

static bool note_attempt(const sst_queued_run *run, void *ud) {
    attempts *a = ud;
    a->runs++;
    a->done += run->status == SST_QUEUE_SUCCESS;
    a->max = run->attempt > a->max ? run->attempt : a->max;
    return true;
}

static void each_durability(const char *db, sst_flush_policy flush) {
    static const char *const modes[] = {"sync", "async", "exit"};
    sst_error err = {0};
    sst_server_opts o;
    sst_server_opts_init(&o);
    o.db = db;
    o.port = 0;
    o.workers = 2;
    o.no_web = true;
    o.flush = flush;
    sst_server *s = sst_server_new(&o, E);
    if (s == NULL) {
        print_error("%s\n", err.msg);
    }
    assert_non_null(s);
    char path[512];
    assert_int_equal(
        sst_server_add_graph(s, "chain",
                             tu_data_path("../server/graphs/chain.lua", path, sizeof path), E),
        SST_OK);
    assert_int_equal(sst_server_start(s, E), SST_OK);
    unsigned port = sst_server_port(s);
    for (size_t m = 0; m < sizeof modes / sizeof *modes; m++) {
        char thread[64], url[160], req[200];
        snprintf(thread, sizeof thread, "5d0c4e2a-1b3f-4a6e-8c7d-%012zu", m + 1);
        int status = 0;
        snprintf(req, sizeof req, "{\"thread_id\":\"%s\"}", thread);
        free(tu_http_post(port, "/threads", req, &status));
        assert_int_equal(status, 200);
        for (int round = 0; round < 2; round++) {
            snprintf(url, sizeof url, "/threads/%s/runs/wait", thread);
            snprintf(req, sizeof req,
                     "{\"assistant_id\":\"chain\",\"input\":{\"items\":[]},"
                     "\"durability\":\"%s\"}",
                     modes[m]);
            char *body = tu_http_post(port, url, req, &status);
            if (status != 200 || strstr(body, "\"c\"") == NULL) {
                print_error("%s: %s\n", modes[m], body);
            }
            assert_int_equal(status, 200);
            assert_non_null(strstr(body, "\"c\""));
            free(body);
        }
        attempts a = {0};
        sst_queue_query q = {.thread_id = thread};
        assert_int_equal(sst_queue_list(s->queue, &q, note_attempt, &a, E), SST_OK);
        assert_int_equal(a.runs, 2);
        assert_int_equal(a.done, 2);
        assert_int_equal(a.max, 1);
    }
    sst_server_stop(s);
    sst_server_free(s);
}

static void durability_modes_pg(void **state) {
    (void)state;
    NEED_PG();
    each_durability(g_url, SST_FLUSH_DEFAULT);
}

static void durability_modes_sqlite(void **state) {
    (void)state;
    char dir[256], file[300];
    assert_int_equal(tu_temp_dir("durpath", dir, sizeof dir), 0);
    snprintf(file, sizeof file, "%s/default.db", dir);
    each_durability(file, SST_FLUSH_DEFAULT);
    snprintf(file, sizeof file, "%s/flushed.db", dir);
    each_durability(file, SST_FLUSH_ON);
    tu_rm_rf(dir);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(group_commit_gathers),
        cmocka_unit_test(group_commit_many_threads),
        cmocka_unit_test(batch_hand_over),
        cmocka_unit_test(batch_begin_on_lost_connection),
        cmocka_unit_test(round_trips),
        cmocka_unit_test(keep_for_owner),
        cmocka_unit_test(unguarded_jobs),
        cmocka_unit_test(batch_hand_over_past),
        cmocka_unit_test(chain_run_commits),
        cmocka_unit_test(last_checkpoint_with_finish),
        cmocka_unit_test(api_statements),
        cmocka_unit_test(keeper_leaves_open_claim),
        cmocka_unit_test(sqlite_chain_run_commits),
        cmocka_unit_test(durability_modes_pg),
        cmocka_unit_test(durability_modes_sqlite),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
