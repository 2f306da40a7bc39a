/* SPDX-License-Identifier: MIT */
/*
 * The statement helpers every SQLite backend uses (src/common/sqlite_db.c)
 * and the retry policy's common header:
 *   1 sst__sqlite_int: a count and a PRAGMA read; a bad statement is not ok
 *   2 sst__sqlite_exec: runs statements; a failure says "KIND 'PATH': WHAT:
 *     <SQLite's message>" with SST_EIO
 *   3 a lock held by another connection past the busy timeout gives the
 *     backend's own code (each backend's callers retry on a different one)
 *   4 sst__sqlite_code: busy and locked -> the caller's code, out of memory ->
 *     SST_ENOMEM, anything else -> SST_EIO
 *   5 superstep/retry.h stands alone (included first here) and gives the node
 *     cache's open backoff: 2 ms doubling up to 100 ms
 */
#include "superstep/retry.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "test_util.h"

typedef struct fixture {
    char dir[256];
    char path[300];
    sqlite3 *db; /* with table t(x) holding 1, 2, 3 */
} fixture;

static int setup(void **state) {
    fixture *f = calloc(1, sizeof *f);
    assert_non_null(f);
    assert_int_equal(tu_temp_dir("sqlite_helpers", f->dir, sizeof f->dir), 0);
    snprintf(f->path, sizeof f->path, "%s/db.sqlite", f->dir);
    assert_true(sqlite3_open(f->path, &f->db) == SQLITE_OK);
    assert_true(sqlite3_exec(f->db, "CREATE TABLE t(x); INSERT INTO t VALUES(1), (2), (3)", NULL,
                             NULL, NULL) == SQLITE_OK);
    *state = f;
    return 0;
}

static int teardown(void **state) {
    fixture *f = *state;
    sqlite3_close(f->db);
    tu_rm_rf(f->dir);
    free(f);
    return 0;
}

static void test_int(void **state) {
    sqlite3 *db = ((fixture *)*state)->db;
    bool ok = false;
    assert_true(sst__sqlite_int(db, "SELECT count(*) FROM t", &ok) == 3 && ok);
    assert_true(sst__sqlite_int(db, "PRAGMA user_version", &ok) == 0 && ok);
    assert_true(sst__sqlite_int(db, "SELECT x FROM t WHERE x > 9", &ok) == 0 && !ok);
    assert_true(sst__sqlite_int(db, "SELECT nonsense FROM", &ok) == 0 && !ok);
}

static void test_exec(void **state) {
    sqlite3 *db = ((fixture *)*state)->db;
    const char *path = ((fixture *)*state)->path;
    sst_error err;
    sst_error_clear(&err);
    assert_true(sst__sqlite_exec(db, "INSERT INTO t VALUES(4)", "queue", path, SST_EUNAVAILABLE,
                                 "adding", &err));
    bool ok = false;
    assert_true(sst__sqlite_int(db, "SELECT count(*) FROM t", &ok) == 4 && ok);
    assert_true(!sst__sqlite_exec(db, "INSERT INTO nowhere VALUES(1)", "store", path, SST_EBUSY,
                                  "adding", &err));
    assert_true(err.code == SST_EIO);
    char want[512];
    snprintf(want, sizeof want, "store '%s': adding: no such table: nowhere", path);
    assert_string_equal(err.msg, want);
    /* sst__sqlite_error reads the connection's last error the same way. */
    sst_error_clear(&err);
    assert_true(sqlite3_exec(db, "SELECT * FROM nowhere", NULL, NULL, NULL) != SQLITE_OK);
    assert_true(sst__sqlite_error(db, "cache", path, SST_EIO, "get", &err) == SST_EIO);
    snprintf(want, sizeof want, "cache '%s': get: no such table: nowhere", path);
    assert_string_equal(err.msg, want);
}

static void test_busy(void **state) {
    sqlite3 *db = ((fixture *)*state)->db;
    const char *path = ((fixture *)*state)->path;
    sqlite3 *other = NULL;
    assert_true(sqlite3_open(path, &other) == SQLITE_OK);
    assert_true(sqlite3_exec(other, "BEGIN EXCLUSIVE", NULL, NULL, NULL) == SQLITE_OK);
    sqlite3_busy_timeout(db, 0); /* no wait: the lock is held until the end of this case */
    const sst_code codes[] = {SST_EUNAVAILABLE, SST_EBUSY, SST_EIO};
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++) {
        sst_error err;
        sst_error_clear(&err);
        assert_true(!sst__sqlite_exec(db, "INSERT INTO t VALUES(5)", "queue", path, codes[i],
                                      "adding", &err));
        assert_true(err.code == codes[i]);
        assert_true(strstr(err.msg, "locked") != NULL);
    }
    sqlite3_exec(other, "ROLLBACK", NULL, NULL, NULL);
    sqlite3_close(other);
}

static void test_codes(void **state) {
    (void)state;
    assert_true(sst__sqlite_code(SQLITE_BUSY, SST_EUNAVAILABLE) == SST_EUNAVAILABLE);
    assert_true(sst__sqlite_code(SQLITE_BUSY_SNAPSHOT, SST_EBUSY) == SST_EBUSY);
    assert_true(sst__sqlite_code(SQLITE_LOCKED, SST_EBUSY) == SST_EBUSY);
    assert_true(sst__sqlite_code(SQLITE_NOMEM, SST_EBUSY) == SST_ENOMEM);
    assert_true(sst__sqlite_code(SQLITE_IOERR_WRITE, SST_EBUSY) == SST_EIO);
    assert_true(sst__sqlite_code(SQLITE_CORRUPT, SST_EUNAVAILABLE) == SST_EIO);
}

static void test_retry_header(void **state) {
    (void)state;
    const sst_retry_policy open_retry = {
        .initial_interval_s = 0.002, .backoff_factor = 2.0, .max_interval_s = 0.1};
    const uint64_t want[] = {2, 4, 8, 16, 32, 64, 100, 100};
    for (unsigned a = 1; a <= sizeof want / sizeof want[0]; a++) {
        assert_true(sst_retry_policy_delay_ms(&open_retry, a, 0.5) == want[a - 1]);
    }
    sst_retry_policy p;
    sst_retry_policy_init(&p);
    assert_true(p.max_attempts == 3 && p.jitter);
    assert_true(sst_retry_policy_delay_ms(&p, 2, 0) == 1000);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_int, setup, teardown),
        cmocka_unit_test_setup_teardown(test_exec, setup, teardown),
        cmocka_unit_test_setup_teardown(test_busy, setup, teardown),
        cmocka_unit_test(test_codes),
        cmocka_unit_test(test_retry_header),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
