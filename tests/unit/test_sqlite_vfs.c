/* SPDX-License-Identifier: MIT */
/*
 * The library's SQLite VFS, "sst-wal" (src/common/sqlite_vfs.c, issue 37): a
 * commit's WAL frames reach the file in one write call.
 *   1 one write call per commit: 50 rows in one transaction (over 10 frames
 *     with the index), then 20 commits of one row each: 21 write calls;
 *     another connection (SQLite's default VFS, the handle still open) reads
 *     every row
 *   2 a commit larger than the buffer (a 600 KiB row: overflow pages) is
 *     written out as it goes and reads back whole, through both connections
 *   3 kill -9 right after COMMIT returned: a child process commits through
 *     the VFS and kills itself without closing; the parent finds every
 *     committed row (nothing of a commit waits in the buffer)
 *   4 a connection's own reads of the WAL see what it buffered: a
 *     transaction spilling its cache (cache_size 10 pages) rereads its pages
 *   5 the library's connections (sst__sqlite_db_new) use the VFS and check-
 *     point the WAL every SST__SQLITE_WAL_PAGES pages, not SQLite's 1 000
 */
#include <pthread.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"
#include "superstep/sqlite.h"
#include "test_util.h"

typedef struct fixture {
    char dir[256];
    char path[300];
} fixture;

static int setup(void **state) {
    static fixture fx;
    memset(&fx, 0, sizeof fx);
    if (tu_temp_dir("sst-sqlite-vfs", fx.dir, sizeof fx.dir) != 0) {
        return -1;
    }
    snprintf(fx.path, sizeof fx.path, "%s/vfs.db", fx.dir);
    *state = &fx;
    return 0;
}

static int teardown(void **state) {
    fixture *fx = *state;
    tu_rm_rf(fx->dir);
    return 0;
}

static void exec_ok(sqlite3 *db, const char *sql) {
    char *msg = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        fail_msg("%s: %s", sql, msg != NULL ? msg : sqlite3_errmsg(db));
    }
}

static int64_t int_of(sqlite3 *db, const char *sql) {
    bool ok = false;
    int64_t v = sst__sqlite_int(db, sql, &ok);
    if (!ok) {
        fail_msg("%s: %s", sql, sqlite3_errmsg(db));
    }
    return v;
}

/* A connection through the library's VFS, in WAL mode with the library's settings. */
static sqlite3 *open_lib(const char *path) {
    const char *vfs = sst__sqlite_vfs();
    assert_non_null(vfs);
    assert_string_equal(vfs, "sst-wal");
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, vfs),
                     SQLITE_OK);
    exec_ok(db, "PRAGMA page_size=2048; PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
                "CREATE TABLE IF NOT EXISTS t(k INTEGER PRIMARY KEY, v TEXT NOT NULL, w TEXT);"
                "CREATE INDEX IF NOT EXISTS t_v ON t(v)");
    return db;
}

/* A plain connection (SQLite's default VFS). */
static sqlite3 *open_plain(const char *path) {
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL), SQLITE_OK);
    sqlite3_busy_timeout(db, 5000);
    return db;
}

static void one_write_per_commit(void **state) {
    fixture *fx = *state;
    sqlite3 *db = open_lib(fx->path);
    uint64_t before = sst__sqlite_vfs_wal_writes();
    exec_ok(db, "BEGIN;"
                "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 50)"
                " INSERT INTO t(k, v) SELECT i, printf('%0200d', i) FROM n;"
                "COMMIT");
    for (int i = 0; i < 20; i++) {
        char sql[128];
        snprintf(sql, sizeof sql, "INSERT INTO t(k, v) VALUES(%d, 'row %d')", 100 + i, i);
        exec_ok(db, sql);
    }
    uint64_t writes = sst__sqlite_vfs_wal_writes() - before;
    print_message("21 commits: %llu write calls\n", (unsigned long long)writes);
    assert_int_equal(writes, 21);
    sqlite3 *other = open_plain(fx->path);
    assert_int_equal(int_of(other, "SELECT count(*) FROM t"), 70);
    assert_int_equal(int_of(other, "SELECT count(*) FROM t INDEXED BY t_v WHERE v > ''"), 70);
    sqlite3_close(other);
    sqlite3_close(db);
}

static void big_commit(void **state) {
    fixture *fx = *state;
    sqlite3 *db = open_lib(fx->path);
    exec_ok(db, "INSERT INTO t(k, v, w) VALUES(1, 'big', hex(zeroblob(307200)))");
    sqlite3 *other = open_plain(fx->path);
    assert_int_equal(int_of(other, "SELECT length(w) FROM t WHERE k = 1"), 614400);
    assert_int_equal(int_of(db, "SELECT length(w) FROM t WHERE k = 1"), 614400);
    sqlite3_close(other);
    sqlite3_close(db);
    other = open_plain(fx->path);
    assert_int_equal(
        int_of(other, "SELECT count(*) FROM t WHERE length(w) = 614400 AND w NOT GLOB '*[^0]*'"),
        1);
    sqlite3_close(other);
}

static void killed_after_commit(void **state) {
    fixture *fx = *state;
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        sqlite3 *db = open_lib(fx->path);
        for (int i = 0; i < 30; i++) {
            char sql[128];
            snprintf(sql, sizeof sql, "INSERT INTO t(k, v) VALUES(%d, 'row %d')", i, i);
            if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK) {
                _exit(3);
            }
        }
        raise(SIGKILL); /* no close, no checkpoint: the WAL holds everything */
        _exit(4);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status));
    assert_int_equal(WTERMSIG(status), SIGKILL);
    sqlite3 *db = open_plain(fx->path);
    assert_int_equal(int_of(db, "SELECT count(*) FROM t"), 30);
    assert_int_equal(int_of(db, "SELECT max(k) FROM t"), 29);
    sqlite3_close(db);
}

static void rereads_own_frames(void **state) {
    fixture *fx = *state;
    sqlite3 *db = open_lib(fx->path);
    exec_ok(db, "PRAGMA cache_size=10;"
                "BEGIN;"
                "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2000)"
                " INSERT INTO t(k, v) SELECT i, printf('%0300d', i) FROM n;"
                "UPDATE t SET w = v WHERE k % 7 = 0;");
    assert_int_equal(int_of(db, "SELECT count(*) FROM t WHERE w IS NOT NULL"), 285);
    exec_ok(db, "COMMIT");
    assert_int_equal(int_of(db, "SELECT sum(length(v)) FROM t"), 2000 * 300);
    sqlite3 *other = open_plain(fx->path);
    assert_int_equal(int_of(other, "SELECT count(*) FROM t WHERE w = v"), 285);
    sqlite3_close(other);
    sqlite3_close(db);
}

static void library_connection(void **state) {
    fixture *fx = *state;
    sst_error err = {0};
    struct sst_sqlite_db *d = sst__sqlite_db_new(fx->path, false, 0, "test", &err);
    assert_non_null(d);
    sqlite3 *db = NULL;
    pthread_mutex_t *mu = NULL;
    struct sst_sqlite_db *ref = sst__sqlite_db_attach(d, NULL, 0, "test", &db, &mu, &err);
    assert_non_null(ref);
    pthread_mutex_lock(mu);
    assert_int_equal(int_of(db, "PRAGMA wal_autocheckpoint"), SST__SQLITE_WAL_PAGES);
    sqlite3_vfs *vfs = NULL;
    assert_int_equal(sqlite3_file_control(db, "main", SQLITE_FCNTL_VFS_POINTER, &vfs), SQLITE_OK);
    assert_non_null(vfs);
    assert_string_equal(vfs->zName, "sst-wal");
    pthread_mutex_unlock(mu);
    sst_sqlite_db_release(ref);
    sst_sqlite_db_release(d);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(one_write_per_commit, setup, teardown),
        cmocka_unit_test_setup_teardown(big_commit, setup, teardown),
        cmocka_unit_test_setup_teardown(killed_after_commit, setup, teardown),
        cmocka_unit_test_setup_teardown(rereads_own_frames, setup, teardown),
        cmocka_unit_test_setup_teardown(library_connection, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
