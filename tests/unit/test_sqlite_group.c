/* SPDX-License-Identifier: MIT */
/*
 * The SQLite saver's group commit (src/checkpoint/sqlite_group.c, issue 37):
 *   1 writers that arrive while a commit is under way share the next one:
 *     the test holds the connection's mutex (a commit under way), six
 *     threads put a checkpoint each; the first leads and waits for the
 *     mutex, the five others queue; released, they make two commits (the
 *     leader's alone, the five together), and every checkpoint is there
 *   2 a unit that fails inside a group is rolled back alone: one of the
 *     five queued puts conflicts with its thread's head (SST_ECONFLICT),
 *     the four others commit in the group
 *   3 a writer inside a batch of the connection writes at once, inside it
 *     (no leader waits for the mutex its own thread holds)
 *   3b another backend's transaction (the server's enqueue and finish, through
 *     sst__sq_group_call) joins a group: a queue enqueue in a batch commits with
 *     the checkpoints queued beside it; one that fails is rolled back alone
 *   3c a thread's metadata (sst_checkpointer_thread_put: `POST /threads`) is a
 *     unit of the group too: three puts queued behind a leader commit in one
 *     transaction (they took the connection's mutex one by one before, three
 *     commits)
 *   3d the queue's pages (queue schema 3): with a history of finished runs, a
 *     claim writes 4 WAL pages and a finish 3 (schema 2's index over every
 *     run's status made a finish write ~5), no claim statement sorts, and
 *     the claim reads its row after the UPDATE rather than with RETURNING
 *     (fewer steps of SQLite's virtual machine)
 *   3e a chain of puts on one thread reads no head: the saver fences each put
 *     against the head it committed itself (no head SELECT, fewer SQLite
 *     virtual machine steps); a checkpoint written meanwhile by another
 *     connection, by another saver on the same connection, or a put inside a
 *     caller's batch that was rolled back still make a stale parent a conflict
 *   4 threads: eight threads each put a chain of checkpoints at once; all
 *     are stored in order (TSan sees the committer's hand-offs)
 *   5 `serve --db FILE` with the default flush policy (synchronous NORMAL):
 *     a chain run through the queue in durability "sync" costs at most its
 *     checkpoints + 2 commits (the claim goes with its first checkpoint), and
 *     at most 38 WAL frames on a fresh file (counted with sqlite3_wal_hook; 41-44
 *     before the saver's schema 5 and the queue's schema 2), written in one
 *     write call per commit (src/common/sqlite_vfs.c; two per frame without it)
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <sqlite3.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "checkpoint/checkpoint_int.h"
#include "checkpoint/sqlite_int.h"
#include "common.h"
#include "server/server_int.h"
#include "superstep/queue.h"
#include "superstep/server.h"
#include "superstep/sqlite.h"
#include "test_util.h"

#define E (&err)
#define OK(x)                                                                                      \
    do {                                                                                           \
        sst_code rc_ = (x);                                                                        \
        if (rc_ != SST_OK) {                                                                       \
            print_error("%s:%d: %s: %s\n", __FILE__, __LINE__, sst_code_name(rc_), err.msg);       \
            fail();                                                                                \
        }                                                                                          \
    } while (0)

typedef struct fixture {
    char dir[256], path[300];
    sst_sqlite_db *db;
    sst_checkpointer *cp;
    sqlite_saver *s;
    sqlite3 *raw;
    pthread_mutex_t *mu;
    sst_sqlite_db *ref;
    int commits; /* under mu */
} fixture;

static int count_commit(void *ud) {
    (*(int *)ud)++;
    return 0;
}

/* sqlite3_wal_hook: the frames in the WAL after each commit (no checkpoint runs meanwhile:
 * this hook replaces the automatic one). */
static int wal_frames(void *ud, sqlite3 *db, const char *name, int frames) {
    (void)db;
    (void)name;
    *(int *)ud = frames;
    return SQLITE_OK;
}

static int setup(void **state) {
    static fixture fx;
    memset(&fx, 0, sizeof fx);
    sst_error err = {0};
    if (tu_temp_dir("sst-sqlite-group", fx.dir, sizeof fx.dir) != 0) {
        return -1;
    }
    snprintf(fx.path, sizeof fx.path, "%s/group.db", fx.dir);
    fx.db = sst_sqlite_db_open(fx.path, false, E);
    fx.cp = fx.db != NULL ? sst_sqlite_saver_open_db(fx.db, NULL, E) : NULL;
    if (fx.cp == NULL) {
        print_error("%s\n", err.msg);
        return -1;
    }
    fx.s = sst_checkpointer_self(fx.cp);
    fx.ref = sst__sqlite_db_attach(fx.db, NULL, 0, "test", &fx.raw, &fx.mu, E);
    pthread_mutex_lock(fx.mu);
    sqlite3_commit_hook(fx.raw, count_commit, &fx.commits);
    pthread_mutex_unlock(fx.mu);
    *state = &fx;
    return 0;
}

static int teardown(void **state) {
    fixture *fx = *state;
    pthread_mutex_lock(fx->mu);
    sqlite3_commit_hook(fx->raw, NULL, NULL);
    pthread_mutex_unlock(fx->mu);
    sst_sqlite_db_release(fx->ref);
    sst_checkpointer_free(fx->cp);
    sst_sqlite_db_release(fx->db);
    tu_rm_rf(fx->dir);
    return 0;
}

static sst_checkpoint rec_of(const char *thread, const char *id, const char *parent, int step) {
    static const char body[] = "{\"n\":1}";
    return (sst_checkpoint){.format = SST_CHECKPOINT_FORMAT,
                            .thread_id = thread,
                            .ns = "",
                            .id = id,
                            .parent_id = parent,
                            .step = step,
                            .source = "loop",
                            .created_at = 1700000000000 + step,
                            .body = {.data = body, .len = sizeof body - 1}};
}

typedef struct putter {
    fixture *fx;
    char thread[32], id[32], parent[32];
    sst_code rc;
    sst_error err;
} putter;

static void *put_one(void *arg) {
    putter *p = arg;
    sst_checkpoint r = rec_of(p->thread, p->id, p->parent[0] ? p->parent : NULL, 1);
    p->rc = sst_checkpointer_put(p->fx->cp, &r, false, &p->err);
    return NULL;
}

/* Units queued behind a leader (under the committer's lock). */
static int queued(sqlite_saver *s, bool *leading) {
    pthread_mutex_lock(&s->gmu);
    int n = 0;
    for (sq_unit *u = s->ghead; u != NULL; u = u->next) {
        n++;
    }
    *leading = s->leading;
    pthread_mutex_unlock(&s->gmu);
    return n;
}

/* Waits (polling the committer's state, no fixed sleep) until a leader runs and @p n
 * units are queued behind it. */
static void await_queued(sqlite_saver *s, int n) {
    bool leading = false;
    for (long i = 0; queued(s, &leading) < n || !leading; i++) {
        assert_true(i < 200000L * tu_time_scale()); /* about 20 s on a quiet machine */
        struct timespec ts = {0, 100000};
        nanosleep(&ts, NULL);
    }
}

static bool count_rec(const sst_checkpoint *r, void *ud) {
    (void)r;
    (*(int *)ud)++;
    return true;
}

enum { N_PUTTERS = 6 };

/* Six putters while the test holds the connection; @p bad: the index whose put conflicts
 * (-1: none). Returns the commits they made. */
static int gather(fixture *fx, int bad) {
    sst_error err = {0};
    if (bad >= 0) { /* its thread gets a head the put will not follow */
        sst_checkpoint head = rec_of("g-bad", "h0", NULL, 0);
        OK(sst_checkpointer_put(fx->cp, &head, false, E));
    }
    putter p[N_PUTTERS];
    pthread_t t[N_PUTTERS];
    pthread_mutex_lock(fx->mu);
    int before = fx->commits;
    for (int i = 0; i < N_PUTTERS; i++) {
        memset(&p[i], 0, sizeof p[i]);
        p[i].fx = fx;
        snprintf(p[i].thread, sizeof p[i].thread, i == bad ? "g-bad" : "g%d-%d", bad + 1, i);
        snprintf(p[i].id, sizeof p[i].id, "c%d", i);
        if (i == bad) {
            snprintf(p[i].parent, sizeof p[i].parent, "not-the-head");
        }
        assert_int_equal(pthread_create(&t[i], NULL, put_one, &p[i]), 0);
        if (i == 0) {
            await_queued(fx->s, 0); /* the first leads, and waits for the mutex */
        }
    }
    await_queued(fx->s, N_PUTTERS - 1);
    pthread_mutex_unlock(fx->mu);
    for (int i = 0; i < N_PUTTERS; i++) {
        pthread_join(t[i], NULL);
    }
    pthread_mutex_lock(fx->mu);
    int made = fx->commits - before;
    pthread_mutex_unlock(fx->mu);
    for (int i = 0; i < N_PUTTERS; i++) {
        if (i == bad) {
            assert_int_equal(p[i].rc, SST_ECONFLICT);
            continue;
        }
        if (p[i].rc != SST_OK) {
            print_error("put %d: %s\n", i, p[i].err.msg);
        }
        assert_int_equal(p[i].rc, SST_OK);
        int n = 0;
        sst_checkpoint_query q = {.thread_id = p[i].thread, .ns = ""};
        OK(sst_checkpointer_list(fx->cp, &q, count_rec, &n, E));
        assert_int_equal(n, 1);
    }
    return made;
}

static void gathers(void **state) {
    fixture *fx = *state;
    uint64_t groups = fx->s->groups;
    assert_int_equal(gather(fx, -1), 2);
    assert_int_equal(fx->s->groups - groups, 2);
}

static void unit_fails_alone(void **state) {
    fixture *fx = *state;
    assert_int_equal(gather(fx, 3), 2);
    sst_error err = {0};
    int n = 0;
    sst_checkpoint_query q = {.thread_id = "g-bad", .ns = ""};
    OK(sst_checkpointer_list(fx->cp, &q, count_rec, &n, E));
    assert_int_equal(n, 1); /* its head only */
}

static void inside_batch(void **state) {
    fixture *fx = *state;
    sst_error err = {0};
    pthread_mutex_lock(fx->mu);
    int before = fx->commits;
    pthread_mutex_unlock(fx->mu);
    OK(sst_sqlite_db_begin(fx->db, E));
    sst_checkpoint a = rec_of("b-1", "a", NULL, 0);
    sst_checkpoint b = rec_of("b-1", "b", "a", 1);
    OK(sst_checkpointer_put(fx->cp, &a, false, E));
    OK(sst_checkpointer_put(fx->cp, &b, false, E));
    OK(sst_sqlite_db_commit(fx->db, true, E));
    pthread_mutex_lock(fx->mu);
    assert_int_equal(fx->commits - before, 1);
    pthread_mutex_unlock(fx->mu);
}

typedef struct caller {
    fixture *fx;
    sst_queue *q;
    const char *run_id;
    bool fail; /* enqueue, then fail: the group must roll the enqueue back */
    sst_code rc;
    sst_error err;
} caller;

static sst_code enqueue_tx(void *arg, sst_error *err) {
    caller *c = arg;
    sst_code rc = sst_sqlite_db_begin(c->fx->db, err);
    if (rc != SST_OK) {
        return rc;
    }
    sst_queued_run r = {.run_id = c->run_id, .thread_id = c->run_id, .assistant_id = "a"};
    rc = sst_queue_enqueue(c->q, &r, 0, err);
    sst_code crc = sst_sqlite_db_commit(c->fx->db, rc == SST_OK && !c->fail, err);
    if (rc == SST_OK && c->fail) {
        rc = sst__error(err, SST_EINVAL, "refused after the enqueue");
    }
    return rc != SST_OK ? rc : crc;
}

static void *call_one(void *arg) {
    caller *c = arg;
    c->rc = sst__sq_group_call(c->fx->cp, enqueue_tx, c, &c->err);
    return NULL;
}

static bool count_run(const sst_queued_run *run, void *ud) {
    (void)run;
    (*(int *)ud)++;
    return true;
}

static int runs_of(sst_queue *q, const char *thread) {
    sst_error err = {0};
    int n = 0;
    sst_queue_query lq = {.thread_id = thread};
    OK(sst_queue_list(q, &lq, count_run, &n, E));
    return n;
}

static void calls_join(void **state) {
    fixture *fx = *state;
    sst_error err = {0};
    sst_queue *q = sst_sqlite_queue_open_db(fx->db, E);
    assert_non_null(q);
    putter lead = {.fx = fx, .thread = "call-lead", .id = "c0"};
    putter p = {.fx = fx, .thread = "call-put", .id = "c0"};
    caller good = {.fx = fx, .q = q, .run_id = "run-good"};
    caller bad = {.fx = fx, .q = q, .run_id = "run-bad", .fail = true};
    pthread_t t[4];
    pthread_mutex_lock(fx->mu);
    int before = fx->commits;
    assert_int_equal(pthread_create(&t[0], NULL, put_one, &lead), 0);
    await_queued(fx->s, 0); /* the leader waits for the mutex */
    assert_int_equal(pthread_create(&t[1], NULL, call_one, &good), 0);
    await_queued(fx->s, 1);
    assert_int_equal(pthread_create(&t[2], NULL, put_one, &p), 0);
    await_queued(fx->s, 2);
    assert_int_equal(pthread_create(&t[3], NULL, call_one, &bad), 0);
    await_queued(fx->s, 3);
    pthread_mutex_unlock(fx->mu);
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
    }
    pthread_mutex_lock(fx->mu);
    int made = fx->commits - before;
    pthread_mutex_unlock(fx->mu);
    assert_int_equal(lead.rc, SST_OK);
    assert_int_equal(p.rc, SST_OK);
    if (good.rc != SST_OK) {
        print_error("good call: %s\n", good.err.msg);
    }
    assert_int_equal(good.rc, SST_OK);
    assert_int_equal(bad.rc, SST_EINVAL);
    assert_int_equal(made, 2); /* the leader's put alone; the call, the put and the failed call */
    assert_int_equal(runs_of(q, "run-good"), 1);
    assert_int_equal(runs_of(q, "run-bad"), 0);
    int n = 0;
    sst_checkpoint_query cq = {.thread_id = "call-put", .ns = ""};
    OK(sst_checkpointer_list(fx->cp, &cq, count_rec, &n, E));
    assert_int_equal(n, 1);
    sst_queue_free(q);
}

typedef struct meta_putter {
    fixture *fx;
    char thread[32];
    sst_code rc;
    sst_error err;
} meta_putter;

static void *meta_put_one(void *arg) {
    meta_putter *m = arg;
    sst_value *md =
        sst_object_set_take(sst_object_empty(), "owner", sst_string_new(m->thread, NULL), NULL);
    assert_non_null(md);
    m->rc = sst_checkpointer_thread_put(m->fx->cp, m->thread, md, &m->err);
    sst_value_unref(md);
    return NULL;
}

static bool thread_owner(const sst_thread_info *t, void *ud) {
    snprintf(ud, 64, "%.*s", (int)t->metadata.len, t->metadata.data);
    return true;
}

enum { N_META = 3 };

static void thread_puts_join(void **state) {
    fixture *fx = *state;
    sst_error err = {0};
    putter lead = {.fx = fx, .thread = "meta-lead", .id = "c0"};
    meta_putter m[N_META];
    pthread_t lt, t[N_META];
    pthread_mutex_lock(fx->mu);
    int before = fx->commits;
    assert_int_equal(pthread_create(&lt, NULL, put_one, &lead), 0);
    await_queued(fx->s, 0); /* the leader waits for the mutex */
    for (int i = 0; i < N_META; i++) {
        memset(&m[i], 0, sizeof m[i]);
        m[i].fx = fx;
        snprintf(m[i].thread, sizeof m[i].thread, "meta-%d", i);
        assert_int_equal(pthread_create(&t[i], NULL, meta_put_one, &m[i]), 0);
        await_queued(fx->s, i + 1); /* without the group: blocked on the mutex, never queued */
    }
    pthread_mutex_unlock(fx->mu);
    pthread_join(lt, NULL);
    for (int i = 0; i < N_META; i++) {
        pthread_join(t[i], NULL);
    }
    pthread_mutex_lock(fx->mu);
    int made = fx->commits - before;
    pthread_mutex_unlock(fx->mu);
    assert_int_equal(lead.rc, SST_OK);
    for (int i = 0; i < N_META; i++) {
        if (m[i].rc != SST_OK) {
            print_error("thread put %d: %s\n", i, m[i].err.msg);
        }
        assert_int_equal(m[i].rc, SST_OK);
        char got[64] = "", want[64];
        OK(sst_checkpointer_thread_get(fx->cp, m[i].thread, thread_owner, got, E));
        snprintf(want, sizeof want, "{\"owner\":\"%s\"}", m[i].thread);
        assert_string_equal(got, want);
    }
    assert_int_equal(made, 2); /* the leader's put alone; the three thread puts together */
}

/* ---- the queue's pages per run (queue schema 3) ---- */

enum { HISTORY = 400, N_MEASURED = 20 };

typedef struct claimed {
    char run_id[64];
    uint64_t token;
} claimed;

static bool on_claim(const sst_queued_run *run, void *ud) {
    claimed *c = ud;
    snprintf(c->run_id, sizeof c->run_id, "%s", run->run_id);
    c->token = run->token;
    return true;
}

/* The sorts (SQLITE_STMTSTATUS_SORT) and virtual machine steps (_VM_STEP) of every statement
 * of @p db since the last call (its counters reset; call holding the connection's mutex). */
static void stmt_counts(sqlite3 *db, int *sorts, int *steps) {
    *sorts = *steps = 0;
    for (sqlite3_stmt *st = sqlite3_next_stmt(db, NULL); st != NULL;
         st = sqlite3_next_stmt(db, st)) {
        *sorts += sqlite3_stmt_status(st, SQLITE_STMTSTATUS_SORT, 1);
        *steps += sqlite3_stmt_status(st, SQLITE_STMTSTATUS_VM_STEP, 1);
    }
}

/* Enqueues, claims and finishes run @p i; *frames gets the WAL frames of the claim's
 * commit and of the finish's. */
static void run_through(fixture *fx, sst_queue *q, int i, int *frames, int frames_of[2]) {
    sst_error err = {0};
    char id[64];
    snprintf(id, sizeof id, "5a1f0c2e-%04d-4000-8000-%012d", i % 10000, i * 7919);
    sst_queued_run r = {.run_id = id, .thread_id = id, .assistant_id = "a"};
    OK(sst_queue_enqueue(q, &r, 0, E));
    claimed c = {0};
    pthread_mutex_lock(fx->mu);
    int before = *frames;
    pthread_mutex_unlock(fx->mu);
    OK(sst_queue_claim(q, "w1", 1000, 60000, on_claim, &c, E));
    assert_string_equal(c.run_id, id);
    pthread_mutex_lock(fx->mu);
    frames_of[0] = *frames - before;
    before = *frames;
    pthread_mutex_unlock(fx->mu);
    OK(sst_queue_finish(q, id, c.token, SST_QUEUE_SUCCESS, 1001, E));
    pthread_mutex_lock(fx->mu);
    frames_of[1] = *frames - before;
    pthread_mutex_unlock(fx->mu);
}

/* A claim and a finish on a queue with a history of finished runs: each writes the run's
 * row and the indexes over the unfinished runs, and no page of an index over every run (queue
 * schema 2's sst_runs_status moved the run's entry at both: a page more each once the
 * history outgrew one page). Counted with sqlite3_wal_hook, no WAL checkpoint meanwhile. */
static void queue_pages(void **state) {
    fixture *fx = *state;
    sst_error err = {0};
    sst_queue *q = sst_sqlite_queue_open_db(fx->db, E);
    assert_non_null(q);
    int frames = 0, got[2];
    pthread_mutex_lock(fx->mu);
    sqlite3_wal_hook(fx->raw, wal_frames, &frames);
    pthread_mutex_unlock(fx->mu);
    for (int i = 0; i < HISTORY; i++) {
        run_through(fx, q, i, &frames, got);
    }
    int sorts, steps;
    pthread_mutex_lock(fx->mu);
    stmt_counts(fx->raw, &sorts, &steps); /* counting from here */
    pthread_mutex_unlock(fx->mu);
    int claims = 0, finishes = 0;
    for (int i = HISTORY; i < HISTORY + N_MEASURED; i++) {
        run_through(fx, q, i, &frames, got);
        claims += got[0];
        finishes += got[1];
    }
    pthread_mutex_lock(fx->mu);
    stmt_counts(fx->raw, &sorts, &steps);
    pthread_mutex_unlock(fx->mu);
    print_message("%d runs enqueued, claimed and finished: WAL frames of the claims %d, of the "
                  "finishes %d; sorts %d; SQLite VM steps %d\n",
                  N_MEASURED, claims, finishes, sorts, steps);
    /* The run's row, sst_runs_active, sst_runs_running and sst_runs_pending at a claim; the
     * row and the two indexes over the unfinished runs at a finish (schema 2: 80 and 103). A
     * page split may add one now and then. */
    assert_true(claims <= 4 * N_MEASURED + 2);
    assert_true(finishes <= 3 * N_MEASURED + 2);
    /* No statement of an enqueue, a claim or a finish sorts (the expired-lease lookup took
     * ORDER BY seq LIMIT 1 over sst_runs_running, a temporary b-tree at every claim). */
    assert_int_equal(sorts, 0);
    /* SQLite's own count of the work: 6 380 steps of its virtual machine; 7 040 while the claim's
     * UPDATE returned the row (RETURNING gathers it in a temporary table first: 131 steps a
     * claim, against 76 for the UPDATE and 22 for the SELECT after it). */
    assert_true(steps <= 6700);
    pthread_mutex_lock(fx->mu);
    sqlite3_wal_autocheckpoint(fx->raw, SST__SQLITE_WAL_PAGES); /* the library's hook again */
    pthread_mutex_unlock(fx->mu);
    sst_queue_free(q);
}

enum { N_CHAINS = 8, CHAIN_LEN = 25 };

static void *put_chain(void *arg) {
    putter *p = arg;
    char id[32], parent[32] = "";
    for (int i = 0; i < CHAIN_LEN && p->rc == SST_OK; i++) {
        snprintf(id, sizeof id, "c%03d", i);
        sst_checkpoint r = rec_of(p->thread, id, parent[0] ? parent : NULL, i);
        p->rc = sst_checkpointer_put(p->fx->cp, &r, false, &p->err);
        snprintf(parent, sizeof parent, "%s", id);
    }
    return NULL;
}

static void threads(void **state) {
    fixture *fx = *state;
    sst_error err = {0};
    putter p[N_CHAINS];
    pthread_t t[N_CHAINS];
    for (int i = 0; i < N_CHAINS; i++) {
        memset(&p[i], 0, sizeof p[i]);
        p[i].fx = fx;
        snprintf(p[i].thread, sizeof p[i].thread, "chain-%d", i);
        assert_int_equal(pthread_create(&t[i], NULL, put_chain, &p[i]), 0);
    }
    for (int i = 0; i < N_CHAINS; i++) {
        pthread_join(t[i], NULL);
        if (p[i].rc != SST_OK) {
            print_error("chain %d: %s\n", i, p[i].err.msg);
        }
        assert_int_equal(p[i].rc, SST_OK);
    }
    for (int i = 0; i < N_CHAINS; i++) {
        int n = 0;
        sst_checkpoint_query q = {.thread_id = p[i].thread, .ns = ""};
        OK(sst_checkpointer_list(fx->cp, &q, count_rec, &n, E));
        assert_int_equal(n, CHAIN_LEN);
        sst_checkpoint *latest = sst_checkpointer_get(fx->cp, p[i].thread, "", NULL, E);
        assert_non_null(latest);
        assert_string_equal(latest->id, "c024");
        sst_checkpoint_free(latest);
    }
}

/* ---- the head a put is fenced against (sqlite_records.c) ---- */

static int head_selects(fixture *fx) {
    pthread_mutex_lock(fx->mu);
    int n = sqlite3_stmt_status(fx->s->st[S_HEAD], SQLITE_STMTSTATUS_RUN, 0);
    pthread_mutex_unlock(fx->mu);
    return n;
}

static int saver_steps(fixture *fx) {
    int n = 0;
    pthread_mutex_lock(fx->mu);
    for (int i = 0; i < S_COUNT; i++) {
        n += sqlite3_stmt_status(fx->s->st[i], SQLITE_STMTSTATUS_VM_STEP, 0);
    }
    pthread_mutex_unlock(fx->mu);
    return n;
}

static void put_expect(sst_checkpointer *cp, const char *id, const char *parent, sst_code want) {
    sst_error err = {0};
    sst_checkpoint r = rec_of("h-1", id, parent, 1);
    sst_code rc = sst_checkpointer_put(cp, &r, false, E);
    if (rc != want) {
        print_error("put %s after %s: %s (%s), expected %s\n", id, parent, sst_code_name(rc),
                    err.msg, sst_code_name(want));
        fail();
    }
}

static void head_cached(void **state) {
    fixture *fx = *state;
    sst_error err = {0};
    int selects = head_selects(fx), steps = saver_steps(fx);
    char id[16], parent[16] = "";
    for (int i = 0; i < 20; i++) {
        snprintf(id, sizeof id, "c%03d", i);
        put_expect(fx->cp, id, i > 0 ? parent : NULL, SST_OK);
        memcpy(parent, id, sizeof id);
    }
    selects = head_selects(fx) - selects;
    steps = saver_steps(fx) - steps;
    print_message("20 puts on one thread: %d head SELECTs, %d VM steps\n", selects, steps);
    assert_true(selects <= 1); /* the first put's: 20 before (one a put) */
    /* 72 VM steps a put here; 82 with a head SELECT each (16 steps, where the
     * data_version read that replaces it takes 6) */
    assert_true(steps <= 20 * 76);

    /* Another connection writes the thread: our head is stale (data_version). */
    sst_checkpointer *other = sst_sqlite_saver_open(fx->path, NULL, E);
    assert_non_null(other);
    put_expect(other, "x1", "c019", SST_OK);
    put_expect(fx->cp, "c020", "c019", SST_ECONFLICT);
    put_expect(fx->cp, "c020", "x1", SST_OK);
    sst_checkpointer_free(other);

    /* Another saver on this connection writes it (the connection's change count). */
    sst_checkpointer *twin = sst_sqlite_saver_open_db(fx->db, NULL, E);
    assert_non_null(twin);
    put_expect(fx->cp, "c021", "c020", SST_OK);
    put_expect(twin, "y1", "c021", SST_OK);
    put_expect(fx->cp, "c022", "c021", SST_ECONFLICT);
    put_expect(fx->cp, "c022", "y1", SST_OK);
    sst_checkpointer_free(twin);

    /* A put inside a caller's batch that rolls back never becomes the head. */
    OK(sst_sqlite_db_begin(fx->db, E));
    put_expect(fx->cp, "z1", "c022", SST_OK);
    OK(sst_sqlite_db_commit(fx->db, false, E));
    put_expect(fx->cp, "z2", "z1", SST_ECONFLICT);
    put_expect(fx->cp, "z2", "c022", SST_OK);
    sst_checkpoint *latest = sst_checkpointer_get(fx->cp, "h-1", "", NULL, E);
    assert_non_null(latest);
    assert_string_equal(latest->id, "z2");
    sst_checkpoint_free(latest);
}

/* ---- a chain run through the server's queue (serve --db FILE) ---- */

static void chain_run_commits(void **state) {
    (void)state;
    sst_error err = {0};
    char dir[256], file[300];
    assert_int_equal(tu_temp_dir("sqlgroup-serve", dir, sizeof dir), 0);
    snprintf(file, sizeof file, "%s/app.db", dir);
    sst_server_opts o;
    sst_server_opts_init(&o);
    o.db = file;
    o.port = 0;
    o.workers = 1;
    o.no_web = true; /* the flush policy stays the default: synchronous NORMAL */
    sst_server *s = sst_server_new(&o, E);
    assert_non_null(s);
    assert_non_null(s->sdb);
    char path[512];
    OK(sst_server_add_graph(s, "chain",
                            tu_data_path("../server/graphs/chain.lua", path, sizeof path), E));
    OK(sst_server_start(s, E));
    sqlite3 *db = NULL;
    pthread_mutex_t *mu = NULL;
    sst_sqlite_db *ref = sst__sqlite_db_attach(s->sdb, NULL, 0, "test", &db, &mu, E);
    assert_non_null(ref);
    unsigned port = sst_server_port(s);
    int status = 0, commits = 0, frames = 0;
    pthread_mutex_lock(mu);
    sqlite3_commit_hook(db, count_commit, &commits);
    sqlite3_wal_hook(db, wal_frames, &frames);
    pthread_mutex_unlock(mu);
    static const char *const threads_[] = {"5a1f0c2e-0000-4000-8000-000000000001",
                                           "5a1f0c2e-0000-4000-8000-000000000002"};
    for (int round = 0; round < 2; round++) {
        char req[200], url[200];
        snprintf(req, sizeof req, "{\"thread_id\":\"%s\"}", threads_[round]);
        free(tu_http_post(port, "/threads", req, &status));
        assert_int_equal(status, 200);
        pthread_mutex_lock(mu);
        int before = commits, frames_before = frames;
        uint64_t writes_before = sst__sqlite_vfs_wal_writes();
        pthread_mutex_unlock(mu);
        snprintf(url, sizeof url, "/threads/%s/runs/wait", threads_[round]);
        char *body = tu_http_post(port, url,
                                  "{\"assistant_id\":\"chain\",\"input\":{\"items\":[]},"
                                  "\"durability\":\"sync\"}",
                                  &status);
        assert_int_equal(status, 200);
        assert_non_null(strstr(body, "\"c\""));
        free(body);
        pthread_mutex_lock(mu);
        int made = commits - before, written = frames - frames_before;
        int writes = (int)(sst__sqlite_vfs_wal_writes() - writes_before);
        pthread_mutex_unlock(mu);
        int checkpoints = 0;
        sst_checkpoint_query q = {.thread_id = threads_[round], .ns = ""};
        OK(sst_checkpointer_list(s->cp, &q, count_rec, &checkpoints, E));
        print_message("round %d: %d checkpoints, %d commits, %d WAL frames in %d write calls\n",
                      round, checkpoints, made, written, writes);
        assert_int_equal(checkpoints, 5);
        /* The enqueue; the claim with its lease and the first checkpoint; one per later
         * checkpoint; the finish with the lease given back. */
        assert_true(made <= checkpoints + 2);
        /* WAL frames (b-tree pages written): 41-44 before schema 5 / queue schema 2 (the
         * checkpoints' sqlite_sequence row at each commit, the lease's table and key index,
         * two indexes over the running runs, the queue's own sqlite_sequence row); 31-34 with them
         * (issue 37). */
        assert_true(written <= 38);
        /* One write call per commit (sqlite_vfs.c), where SQLite makes two per frame. */
        assert_true(writes <= made);
    }
    pthread_mutex_lock(mu);
    sqlite3_commit_hook(db, NULL, NULL);
    sqlite3_wal_autocheckpoint(db, SST__SQLITE_WAL_PAGES); /* the library's hook again */
    pthread_mutex_unlock(mu);
    sst_sqlite_db_release(ref);
    sst_server_stop(s);
    sst_server_free(s);
    tu_rm_rf(dir);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(gathers, setup, teardown),
        cmocka_unit_test_setup_teardown(unit_fails_alone, setup, teardown),
        cmocka_unit_test_setup_teardown(inside_batch, setup, teardown),
        cmocka_unit_test_setup_teardown(calls_join, setup, teardown),
        cmocka_unit_test_setup_teardown(thread_puts_join, setup, teardown),
        cmocka_unit_test_setup_teardown(queue_pages, setup, teardown),
        cmocka_unit_test_setup_teardown(head_cached, setup, teardown),
        cmocka_unit_test_setup_teardown(threads, setup, teardown),
        cmocka_unit_test(chain_run_commits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
