/* SPDX-License-Identifier: MIT */
/*
 * The SQLite saver takes and gives back the thread's lock inside its puts
 * (SST_SAVER_LOCK_IN_PUT: SST_PUT_TAKE_LOCK, SST_PUT_GIVE_LOCK; issue 37):
 *  - chain_commits: an in-process 3-node chain (5 checkpoints) on a new thread
 *    and on one with checkpoints, durability "sync" and "async", commits 5
 *    times (it was 7: the lock taken and given back in transactions of their
 *    own), counted with sqlite3_commit_hook; while its nodes run, the lease
 *    is committed (another connection sees it), and none is left after;
 *  - busy_elsewhere: a thread another connection's saver holds gets SST_EBUSY
 *    and nothing is committed or written; once given back, the run goes;
 *  - give_failed: at the saver, a put that takes a lock this saver holds is
 *    SST_EBUSY and writes nothing; a put that gives the lock back but fails
 *    (a fencing conflict) keeps the lock held; one that succeeds frees it.
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "superstep/sqlite.h"
#include "superstep/superstep.h"
#include "test_util.h"

#define E (&err)

typedef struct fixture {
    char dir[256], path[300];
    sst_sqlite_db *db;
    sst_checkpointer *cp;
    sst_sqlite_db *ref; /* the saver's connection, attached for its commit hook */
    sqlite3 *raw;
    pthread_mutex_t *mu;
    int commits;   /* under mu */
    sqlite3 *peek; /* another connection, read only: what is committed */
} fixture;

static fixture *g_fx;

static int count_commit(void *ud) {
    (*(int *)ud)++;
    return 0;
}

static int setup(void **state) {
    static fixture fx;
    memset(&fx, 0, sizeof fx);
    sst_error err = {0};
    if (tu_temp_dir("sst-sqlite-lockput", fx.dir, sizeof fx.dir) != 0) {
        return -1;
    }
    snprintf(fx.path, sizeof fx.path, "%s/lock.db", fx.dir);
    fx.db = sst_sqlite_db_open(fx.path, false, E);
    fx.cp = fx.db != NULL ? sst_sqlite_saver_open_db(fx.db, NULL, E) : NULL;
    if (fx.cp == NULL) {
        print_error("%s\n", err.msg);
        return -1;
    }
    fx.ref = sst__sqlite_db_attach(fx.db, NULL, 0, "test", &fx.raw, &fx.mu, E);
    if (fx.ref == NULL || sqlite3_open_v2(fx.path, &fx.peek, SQLITE_OPEN_READONLY, NULL) != 0) {
        return -1;
    }
    sqlite3_busy_timeout(fx.peek, 10000);
    pthread_mutex_lock(fx.mu);
    sqlite3_commit_hook(fx.raw, count_commit, &fx.commits);
    pthread_mutex_unlock(fx.mu);
    g_fx = &fx;
    *state = &fx;
    return 0;
}

static int teardown(void **state) {
    fixture *fx = *state;
    pthread_mutex_lock(fx->mu);
    sqlite3_commit_hook(fx->raw, NULL, NULL);
    pthread_mutex_unlock(fx->mu);
    sqlite3_close(fx->peek);
    sst_sqlite_db_release(fx->ref);
    sst_checkpointer_free(fx->cp);
    sst_sqlite_db_release(fx->db);
    tu_rm_rf(fx->dir);
    return 0;
}

static int commits(fixture *fx) {
    pthread_mutex_lock(fx->mu);
    int n = fx->commits;
    pthread_mutex_unlock(fx->mu);
    return n;
}

/* A count over the committed file (the other connection). */
static int64_t count_rows(fixture *fx, const char *sql, const char *thread) {
    sqlite3_stmt *st = NULL;
    assert_int_equal(sqlite3_prepare_v2(fx->peek, sql, -1, &st, NULL), SQLITE_OK);
    sqlite3_bind_text(st, 1, thread, -1, SQLITE_STATIC);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    int64_t n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return n;
}

static int64_t leases(fixture *fx, const char *thread) {
    return count_rows(fx, "SELECT count(*) FROM locks WHERE thread = ?", thread);
}

static int64_t checkpoints(fixture *fx, const char *thread) {
    return count_rows(fx, "SELECT count(*) FROM checkpoints WHERE thread = ?", thread);
}

/* ---- the chain: value + 1, * 2, - 3 ---- */

static int64_t value_of(sst_node_ctx *ctx) {
    return sst_int_value(sst_object_get(sst_node_state(ctx), "value"));
}

/* The thread node "b" sees its lease on (NULL: not looked at), and what it saw. */
static const char *g_watch;
static int64_t g_seen = -1;

static sst_code node_a(sst_node_ctx *ctx, void *ud) {
    (void)ud;
    return sst_node_update(ctx, "value", sst_int_new(value_of(ctx) + 1, NULL), NULL);
}

static sst_code node_b(sst_node_ctx *ctx, void *ud) {
    (void)ud;
    if (g_watch != NULL) {
        g_seen = leases(g_fx, g_watch);
    }
    return sst_node_update(ctx, "value", sst_int_new(value_of(ctx) * 2, NULL), NULL);
}

static sst_code node_c(sst_node_ctx *ctx, void *ud) {
    (void)ud;
    return sst_node_update(ctx, "value", sst_int_new(value_of(ctx) - 3, NULL), NULL);
}

static sst_compiled_graph *chain(void) {
    sst_error err = {0};
    sst_graph *g = sst_graph_new(E);
    assert_non_null(g);
    assert_int_equal(sst_graph_add_node(g, "a", node_a, NULL, NULL, E), SST_OK);
    assert_int_equal(sst_graph_add_node(g, "b", node_b, NULL, NULL, E), SST_OK);
    assert_int_equal(sst_graph_add_node(g, "c", node_c, NULL, NULL, E), SST_OK);
    assert_int_equal(sst_graph_add_edge(g, SST_START, "a", E), SST_OK);
    assert_int_equal(sst_graph_add_edge(g, "a", "b", E), SST_OK);
    assert_int_equal(sst_graph_add_edge(g, "b", "c", E), SST_OK);
    assert_int_equal(sst_graph_add_edge(g, "c", SST_END, E), SST_OK);
    sst_compiled_graph *cg = sst_graph_compile(g, NULL, E);
    sst_graph_free(g);
    assert_non_null(cg);
    return cg;
}

static void chain_commits(void **state) {
    fixture *fx = *state;
    sst_error err = {0};
    sst_compiled_graph *cg = chain();
    const sst_durability modes[] = {SST_DURABILITY_SYNC, SST_DURABILITY_ASYNC};
    for (size_t m = 0; m < 2; m++) {
        char thread[64];
        snprintf(thread, sizeof thread, "commits-%zu", m);
        for (int round = 0; round < 2; round++) { /* a new thread, then one with checkpoints */
            int before = commits(fx);
            int64_t v = 0;
            g_watch = thread;
            g_seen = -1;
            sst_code rc = tu_invoke_value(cg, fx->cp, thread, round * 10, modes[m], &v, E);
            g_watch = NULL;
            if (rc != SST_OK) {
                print_error("%s\n", err.msg);
            }
            assert_int_equal(rc, SST_OK);
            assert_int_equal(v, (round * 10 + 1) * 2 - 3);
            int made = commits(fx) - before;
            print_message("%s, round %d: %d commits\n", m == 0 ? "sync" : "async", round, made);
            assert_int_equal(checkpoints(fx, thread), 5 * (round + 1)); /* steps -1 .. 3 */
            /* The lock taken with the input checkpoint, given back with the last: one commit
             * per checkpoint (was 7: the lock's own two). */
            assert_int_equal(made, 5);
            assert_int_equal(g_seen, 1); /* the lease was committed while the nodes ran */
            assert_int_equal(leases(fx, thread), 0);
        }
    }
    sst_compiled_graph_free(cg);
}

static void busy_elsewhere(void **state) {
    fixture *fx = *state;
    sst_error err = {0};
    sst_sqlite_db *other_db = sst_sqlite_db_open(fx->path, false, E);
    assert_non_null(other_db);
    sst_checkpointer *other = sst_sqlite_saver_open_db(other_db, NULL, E);
    assert_non_null(other);
    sst_compiled_graph *cg = chain();
    assert_int_equal(tu_invoke_value(cg, fx->cp, "busy", 0, SST_DURABILITY_SYNC, NULL, E), SST_OK);
    assert_int_equal(sst_checkpointer_lock(other, "busy", false, E), SST_OK);
    int before = commits(fx);
    sst_error_clear(E);
    assert_int_equal(tu_invoke_value(cg, fx->cp, "busy", 1, SST_DURABILITY_SYNC, NULL, E),
                     SST_EBUSY);
    assert_non_null(strstr(err.msg, "busy"));
    assert_int_equal(commits(fx) - before, 0); /* nothing committed */
    assert_int_equal(checkpoints(fx, "busy"), 5);
    assert_int_equal(leases(fx, "busy"), 1); /* the other's */
    sst_checkpointer_unlock(other, "busy");
    int64_t v = 0;
    assert_int_equal(tu_invoke_value(cg, fx->cp, "busy", 1, SST_DURABILITY_SYNC, &v, E), SST_OK);
    assert_int_equal(v, 1);
    assert_int_equal(checkpoints(fx, "busy"), 10);
    assert_int_equal(leases(fx, "busy"), 0);
    /* And the other way round: the first connection's run holds it, the other's fails. */
    assert_int_equal(sst_checkpointer_lock(fx->cp, "busy", false, E), SST_OK);
    sst_error_clear(E);
    assert_int_equal(tu_invoke_value(cg, other, "busy", 1, SST_DURABILITY_SYNC, NULL, E),
                     SST_EBUSY);
    assert_int_equal(checkpoints(fx, "busy"), 10);
    sst_checkpointer_unlock(fx->cp, "busy");
    assert_int_equal(leases(fx, "busy"), 0);
    sst_compiled_graph_free(cg);
    sst_checkpointer_free(other);
    sst_sqlite_db_release(other_db);
}

static sst_checkpoint rec_of(const char *thread, const char *id, const char *parent, int step,
                             unsigned flags) {
    static const char body[] = "{\"n\":1}";
    return (sst_checkpoint){.format = SST_CHECKPOINT_FORMAT,
                            .thread_id = thread,
                            .ns = "",
                            .id = id,
                            .parent_id = parent,
                            .step = step,
                            .source = "loop",
                            .created_at = 1700000000000 + step,
                            .body = {.data = body, .len = sizeof body - 1},
                            .put_flags = flags};
}

static void give_failed(void **state) {
    fixture *fx = *state;
    sst_error err = {0};
    sst_checkpoint r = rec_of("give", "g0", NULL, 0, SST_PUT_TAKE_LOCK);
    assert_int_equal(sst_checkpointer_put(fx->cp, &r, false, E), SST_OK);
    assert_int_equal(leases(fx, "give"), 1);
    /* Taken again while held (by this very saver): busy, nothing written. */
    r = rec_of("give", "g1", "g0", 1, SST_PUT_TAKE_LOCK);
    assert_int_equal(sst_checkpointer_put(fx->cp, &r, false, E), SST_EBUSY);
    assert_int_equal(checkpoints(fx, "give"), 1);
    /* A give-back whose put conflicts: nothing written, the lock still held. */
    r = rec_of("give", "g1", "nope", 1, SST_PUT_GIVE_LOCK);
    assert_int_equal(sst_checkpointer_put(fx->cp, &r, false, E), SST_ECONFLICT);
    assert_int_equal(leases(fx, "give"), 1);
    assert_int_equal(checkpoints(fx, "give"), 1);
    r = rec_of("give", "g1", "g0", 1, SST_PUT_GIVE_LOCK);
    assert_int_equal(sst_checkpointer_put(fx->cp, &r, false, E), SST_OK);
    assert_int_equal(leases(fx, "give"), 0);
    assert_int_equal(checkpoints(fx, "give"), 2);
    /* Free again: lock and unlock as ever. */
    assert_int_equal(sst_checkpointer_lock(fx->cp, "give", false, E), SST_OK);
    sst_checkpointer_unlock(fx->cp, "give");
    assert_int_equal(leases(fx, "give"), 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(chain_commits),
        cmocka_unit_test(busy_elsewhere),
        cmocka_unit_test(give_failed),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
