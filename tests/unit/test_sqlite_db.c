/* SPDX-License-Identifier: MIT */
/*
 * One SQLite connection shared by a saver, a store and a queue
 * (include/superstep/sqlite.h):
 *   1 the three on one handle work, and what they wrote is there after a
 *     reopen by path (one file, three backends)
 *   2 sst_sqlite_db_begin/commit: a queue enqueue and a thread write commit
 *     as one, or roll back as one; nested begins; a failing call inside
 *     rolls back only its own part
 *   3 exclusive: another connection (another backend opened by path, plain
 *     SQLite) is refused while the handle is open, and works once it is
 *     released; not exclusive: both work at once
 *   4 argument checks: NULL or empty path, ":memory:", NULL handles
 *   5 threads: 4 threads write through the three backends at once, with
 *     batches, on one handle (TSan sees the shared recursive mutex); the
 *     store refuses calls inside a batch (SST_EINVAL) rather than deadlock
 */
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>

#include "superstep/queue.h"
#include "superstep/sqlite.h"
#include "superstep/superstep.h"
#include "test_util.h"

typedef struct fixture {
    char dir[256];
    char path[300];
} fixture;

static int setup(void **state) {
    static fixture fx;
    memset(&fx, 0, sizeof fx);
    if (tu_temp_dir("sst-sqlite-db", fx.dir, sizeof fx.dir) != 0) {
        return -1;
    }
    snprintf(fx.path, sizeof fx.path, "%s/shared.db", fx.dir);
    *state = &fx;
    return 0;
}

static int teardown(void **state) {
    fixture *fx = *state;
    tu_rm_rf(fx->dir);
    return 0;
}

static sst_code enqueue(sst_queue *q, const char *run_id, const char *thread_id, sst_error *err) {
    sst_queued_run r = {.run_id = run_id, .thread_id = thread_id, .assistant_id = "a"};
    return sst_queue_enqueue(q, &r, 0, err);
}

static bool count_run(const sst_queued_run *run, void *ud) {
    (void)run;
    (*(int *)ud)++;
    return true;
}

static int runs_of(sst_queue *q, const char *run_id) {
    int n = 0;
    sst_error err = {0};
    sst_code rc = sst_queue_get(q, run_id, count_run, &n, &err);
    assert_true(rc == SST_OK || rc == SST_ENOTFOUND);
    return n;
}

static bool count_thread(const sst_thread_info *t, void *ud) {
    (void)t;
    (*(int *)ud)++;
    return true;
}

static int threads_of(sst_checkpointer *cp, const char *thread_id) {
    int n = 0;
    sst_error err = {0};
    sst_code rc = sst_checkpointer_thread_get(cp, thread_id, count_thread, &n, &err);
    assert_true(rc == SST_OK || rc == SST_ENOTFOUND);
    return n;
}

typedef struct three {
    sst_sqlite_db *db;
    sst_checkpointer *cp;
    sst_store *store;
    sst_queue *queue;
} three;

static void open_three(three *t, const char *path, bool exclusive) {
    sst_error err = {0};
    t->db = sst_sqlite_db_open(path, exclusive, &err);
    assert_non_null(t->db);
    assert_string_equal(sst_sqlite_db_path(t->db), path);
    t->cp = sst_sqlite_saver_open_db(t->db, NULL, &err);
    assert_non_null(t->cp);
    t->store = sst_sqlite_store_new_db(t->db, NULL, &err);
    assert_non_null(t->store);
    t->queue = sst_sqlite_queue_open_db(t->db, &err);
    assert_non_null(t->queue);
    sst_sqlite_db_release(t->db); /* the backends hold it */
}

static void close_three(three *t) {
    sst_queue_free(t->queue);
    sst_store_free(t->store);
    sst_checkpointer_free(t->cp);
}

/* 1 */
static void shared_backends(void **state) {
    fixture *fx = *state;
    sst_error err = {0};
    three t;
    open_three(&t, fx->path, true);
    sst_value *meta = tu_json("{\"owner\":\"ada\"}");
    assert_sst_ok(sst_checkpointer_thread_put(t.cp, "t1", meta, &err), &err);
    static const char *const ns[] = {"users"};
    assert_sst_ok(sst_store_put(t.store, ns, 1, "k", meta, NULL, &err), &err);
    assert_sst_ok(enqueue(t.queue, "r1", "t1", &err), &err);
    sst_value_unref(meta);
    close_three(&t);
    /* Every backend by path, as another process would. */
    sst_checkpointer *cp = sst_sqlite_saver_open(fx->path, NULL, &err);
    assert_non_null(cp);
    assert_int_equal(threads_of(cp, "t1"), 1);
    sst_checkpointer_free(cp);
    sst_store *st = sst_sqlite_store_new(fx->path, NULL, &err);
    assert_non_null(st);
    sst_value *got = sst_store_get(st, ns, 1, "k", 0, &err);
    assert_non_null(got);
    sst_value_unref(got);
    sst_store_free(st);
    sst_queue *q = sst_sqlite_queue_open(fx->path, &err);
    assert_non_null(q);
    assert_int_equal(runs_of(q, "r1"), 1);
    sst_queue_free(q);
}

/* 2 */
static void batches(void **state) {
    fixture *fx = *state;
    sst_error err = {0};
    three t;
    open_three(&t, fx->path, false);
    sst_value *meta = tu_json("{}");
    /* Rolled back: neither write is there. */
    assert_sst_ok(sst_sqlite_db_begin(t.db, &err), &err);
    assert_sst_ok(enqueue(t.queue, "r1", "t1", &err), &err);
    assert_sst_ok(sst_checkpointer_thread_put(t.cp, "t1", meta, &err), &err);
    assert_int_equal(runs_of(t.queue, "r1"), 1); /* seen inside */
    assert_sst_ok(sst_sqlite_db_commit(t.db, false, &err), &err);
    assert_int_equal(runs_of(t.queue, "r1"), 0);
    assert_int_equal(threads_of(t.cp, "t1"), 0);
    /* Committed, with a nested pair, and a failing call inside (a duplicate run id)
     * that rolls back only itself. */
    assert_sst_ok(sst_sqlite_db_begin(t.db, &err), &err);
    assert_sst_ok(enqueue(t.queue, "r2", "t2", &err), &err);
    assert_sst_ok(sst_sqlite_db_begin(t.db, &err), &err);
    assert_int_equal(enqueue(t.queue, "r2", "t2", &err), SST_ECONFLICT);
    assert_sst_ok(sst_checkpointer_thread_put(t.cp, "t2", meta, &err), &err);
    assert_sst_ok(sst_sqlite_db_commit(t.db, true, &err), &err); /* inner: nothing yet */
    assert_sst_ok(sst_checkpointer_lock(t.cp, "t2", false, &err), &err);
    assert_sst_ok(sst_sqlite_db_commit(t.db, true, &err), &err);
    assert_int_equal(runs_of(t.queue, "r2"), 1);
    assert_int_equal(threads_of(t.cp, "t2"), 1);
    /* Seen by another connection: committed to the file. */
    sst_queue *other = sst_sqlite_queue_open(fx->path, &err);
    assert_non_null(other);
    assert_int_equal(runs_of(other, "r2"), 1);
    assert_int_equal(runs_of(other, "r1"), 0);
    sst_queue_free(other);
    /* The lock taken in the batch holds: unlock in another batch. */
    assert_sst_ok(sst_sqlite_db_begin(t.db, &err), &err);
    sst_checkpointer_unlock(t.cp, "t2");
    assert_sst_ok(sst_sqlite_db_commit(t.db, true, &err), &err);
    assert_sst_ok(sst_checkpointer_lock(t.cp, "t2", false, &err), &err);
    sst_checkpointer_unlock(t.cp, "t2");
    sst_value_unref(meta);
    close_three(&t);
}

/* 3 */
static void exclusive_locks(void **state) {
    fixture *fx = *state;
    sst_error err = {0};
    three t;
    open_three(&t, fx->path, true);
    assert_sst_ok(enqueue(t.queue, "r1", "t1", &err), &err);
    sst_error e2 = {0};
    sst_sqlite_opts o;
    sst_sqlite_opts_init(&o);
    o.busy_timeout_ms = 50;
    sst_checkpointer *cp = sst_sqlite_saver_open(fx->path, &o, &e2);
    assert_null(cp);
    assert_int_equal(e2.code, SST_EBUSY);
    assert_non_null(strstr(e2.msg, "locked"));
    sqlite3 *raw = NULL;
    assert_int_equal(sqlite3_open(fx->path, &raw), SQLITE_OK);
    assert_int_not_equal(sqlite3_exec(raw, "SELECT count(*) FROM sst_runs", NULL, NULL, NULL),
                         SQLITE_OK);
    close_three(&t);
    assert_int_equal(sqlite3_exec(raw, "SELECT count(*) FROM sst_runs", NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(raw);
    /* Not exclusive: another connection works meanwhile. */
    open_three(&t, fx->path, false);
    sst_queue *q = sst_sqlite_queue_open(fx->path, &err);
    assert_non_null(q);
    assert_int_equal(runs_of(q, "r1"), 1);
    assert_sst_ok(enqueue(q, "r2", "t2", &err), &err);
    assert_int_equal(runs_of(t.queue, "r2"), 1);
    sst_queue_free(q);
    close_three(&t);
}

/* 4 */
static void arguments(void **state) {
    (void)state;
    sst_error err = {0};
    assert_null(sst_sqlite_db_open(NULL, false, &err));
    assert_int_equal(err.code, SST_EINVAL);
    assert_null(sst_sqlite_db_open("", false, &err));
    assert_int_equal(err.code, SST_EINVAL);
    assert_null(sst_sqlite_db_open(":memory:", true, &err));
    assert_int_equal(err.code, SST_EINVAL);
    assert_non_null(strstr(err.msg, ":memory:"));
    assert_null(sst_sqlite_saver_open_db(NULL, NULL, &err));
    assert_int_equal(err.code, SST_EINVAL);
    assert_null(sst_sqlite_store_new_db(NULL, NULL, &err));
    assert_int_equal(err.code, SST_EINVAL);
    assert_null(sst_sqlite_queue_open_db(NULL, &err));
    assert_int_equal(err.code, SST_EINVAL);
    assert_null(sst_sqlite_db_open("/nonexistent-dir/x/y.db", false, &err));
    assert_int_equal(err.code, SST_EIO);
    assert_non_null(strstr(err.msg, "/nonexistent-dir/x/y.db"));
    sst_sqlite_db_release(NULL);
}

/* 5 */
typedef struct worker {
    three *t;
    int index;
    int failures;
} worker;

static void *hammer(void *arg) {
    worker *w = arg;
    sst_value *meta = sst_object_empty();
    for (int i = 0; i < 200; i++) {
        char run[64], thread[64];
        snprintf(run, sizeof run, "r-%d-%d", w->index, i);
        snprintf(thread, sizeof thread, "t-%d-%d", w->index, i % 7);
        sst_error err = {0};
        bool batch = i % 2 == 0;
        if (batch && sst_sqlite_db_begin(w->t->db, &err) != SST_OK) {
            w->failures++;
            continue;
        }
        w->failures += enqueue(w->t->queue, run, thread, &err) != SST_OK;
        w->failures += sst_checkpointer_thread_put(w->t->cp, thread, meta, &err) != SST_OK;
        static const char *const ns[] = {"hammer"};
        /* The store refuses calls inside a batch (its own lock comes first). */
        sst_code want = batch ? SST_EINVAL : SST_OK;
        w->failures += sst_store_put(w->t->store, ns, 1, run, meta, NULL, &err) != want;
        if (batch) {
            w->failures += sst_sqlite_db_commit(w->t->db, true, &err) != SST_OK;
        }
    }
    sst_value_unref(meta);
    return NULL;
}

static void threads(void **state) {
    fixture *fx = *state;
    three t;
    open_three(&t, fx->path, true);
    pthread_t th[4];
    worker w[4];
    for (int i = 0; i < 4; i++) {
        w[i] = (worker){.t = &t, .index = i};
        assert_int_equal(pthread_create(&th[i], NULL, hammer, &w[i]), 0);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        assert_int_equal(w[i].failures, 0);
    }
    int n = 0;
    sst_error err = {0};
    sst_queue_query q = {0};
    assert_sst_ok(sst_queue_list(t.queue, &q, count_run, &n, &err), &err);
    assert_int_equal(n, 800);
    close_three(&t);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(shared_backends, setup, teardown),
        cmocka_unit_test_setup_teardown(batches, setup, teardown),
        cmocka_unit_test_setup_teardown(exclusive_locks, setup, teardown),
        cmocka_unit_test(arguments),
        cmocka_unit_test_setup_teardown(threads, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
