/* SPDX-License-Identifier: MIT */
/*
 * sst_sqlite_db: one SQLite connection, its mutex and a reference count,
 * shared by the SQLite backends of a process (include/superstep/sqlite.h).
 * Every SQLite backend works through one of these: its path-taking open
 * makes a private one, its `_db` open takes a reference on a shared one.
 *
 * Also the statement helpers every backend uses (sst__sqlite_int, _error,
 * _exec in common.h).
 *
 * The mutex is recursive: a backend calls its callbacks holding it (a saver's
 * list, a store's search), and a callback may use another backend on the same
 * connection. The connection is opened NOMUTEX: this mutex is the only one.
 */
#include <errno.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdatomic.h>
#include <string.h>

#include "common.h"
#include "superstep/sqlite.h"

/* The batch paths' transaction statements (sst_sqlite_db.tx). */
enum { TX_BEGIN, TX_COMMIT, TX_ROLLBACK, TX_SAVEPOINT, TX_RELEASE, TX_UNDO, TX_COUNT };
static const char *const k_tx_sql[TX_COUNT] = {
    [TX_BEGIN] = "BEGIN IMMEDIATE",  [TX_COMMIT] = "COMMIT",
    [TX_ROLLBACK] = "ROLLBACK",      [TX_SAVEPOINT] = "SAVEPOINT sst_tx",
    [TX_RELEASE] = "RELEASE sst_tx", [TX_UNDO] = "ROLLBACK TO sst_tx",
};

struct sst_sqlite_db {
    sqlite3 *db;
    char *path; /* owned */
    pthread_mutex_t mu;
    _Atomic int refs;
    int batch; /* depth of sst_sqlite_db_begin (under mu, by the thread holding it) */
    /* The thread inside sst_sqlite_db_begin .. commit, read without mu by the store. */
    _Atomic(unsigned long) batch_owner;
    _Atomic bool batch_open;
    /* Under mu, by the batch's thread: the backends' savepoints open in it; the next one
     * to be released at depth 0 commits the batch (sst__sqlite_db_hand_over). */
    int savepoints;
    bool hand_over;
    /* The transaction statements of the batch paths, prepared on first use (under mu) and
     * kept: parsing "BEGIN IMMEDIATE" or "SAVEPOINT sst_tx" at every call cost ~3.5 % of a
     * `serve --db FILE` run's CPU (bench/RESULTS.md, issue 37). */
    sqlite3_stmt *tx[TX_COUNT];
};

/* The busy timeout until a backend sets its own (each does, on opening). */
#define DEFAULT_BUSY_MS 5000

static void db_free(sst_sqlite_db *d) {
    for (int i = 0; i < TX_COUNT; i++) {
        sqlite3_finalize(d->tx[i]);
    }
    sqlite3_close(d->db);
    pthread_mutex_destroy(&d->mu);
    sst__free(d->path);
    sst__free(d);
}

sst_sqlite_db *sst__sqlite_db_new(const char *path, bool exclusive, int flags, const char *what,
                                  sst_error *err) {
    sst_sqlite_db *d = sst__calloc(1, sizeof *d);
    if (d == NULL || (d->path = sst__strndup(path, strlen(path))) == NULL) {
        sst__free(d);
        sst__enomem(err);
        return NULL;
    }
    pthread_mutexattr_t attr;
    pthread_mutexattr_init(&attr);
    pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&d->mu, &attr);
    pthread_mutexattr_destroy(&attr);
    atomic_init(&d->refs, 1);
    flags |= SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX;
    if (sqlite3_open_v2(path, &d->db, flags, sst__sqlite_vfs()) != SQLITE_OK) {
        sst__error(err, SST_EIO, "cannot open %s '%s': %s", what, path,
                   d->db != NULL ? sqlite3_errmsg(d->db) : "out of memory");
        db_free(d);
        return NULL;
    }
    sst__sqlite_busy(d->db, DEFAULT_BUSY_MS); /* before anything touches the file */
    /* A WAL checkpoint every SST__SQLITE_WAL_PAGES pages, not SQLite's 1 000: each one
     * flushes the WAL and the file (two fdatasync) and copies the pages changed since the
     * last, and the pages a run changes are mostly the same few (the tables' last leaves,
     * the queue's rows), so fewer, larger checkpoints copy fewer pages per commit. The WAL
     * stays bounded (8 MiB at 2 KiB pages). issue 37: server CPU per run -10..20 %. */
    sqlite3_wal_autocheckpoint(d->db, SST__SQLITE_WAL_PAGES);
    /* Before the first access: in WAL mode SQLite then keeps the WAL index in memory. */
    if (exclusive &&
        sqlite3_exec(d->db, "PRAGMA locking_mode=EXCLUSIVE", NULL, NULL, NULL) != SQLITE_OK) {
        sst__error(err, SST_EIO, "%s '%s': setting the exclusive locking mode: %s", what, path,
                   sqlite3_errmsg(d->db));
        db_free(d);
        return NULL;
    }
    return d;
}

sst_sqlite_db *sst_sqlite_db_open(const char *path, bool exclusive, sst_error *err) {
    SST__ERR_LOCAL(err);
    if (path == NULL || path[0] == '\0' || strcmp(path, ":memory:") == 0) {
        sst__error(err, SST_EINVAL, "shared SQLite database: the path must name a file, not '%s'",
                   path != NULL ? path : "(null)");
        return NULL;
    }
    return sst__sqlite_db_new(path, exclusive, 0, "database", err);
}

sst_sqlite_db *sst__sqlite_db_attach(sst_sqlite_db *shared, const char *path, int flags,
                                     const char *what, sqlite3 **db, pthread_mutex_t **mu,
                                     sst_error *err) {
    sst_sqlite_db *d = shared != NULL ? sst__sqlite_db_retain(shared)
                                      : sst__sqlite_db_new(path, false, flags, what, err);
    if (d != NULL) {
        *db = d->db;
        *mu = &d->mu;
    }
    return d;
}

sst_code sst__sqlite_backend_open(sst_sqlite_db *shared, const char *path, int flags,
                                  const char *what, char **path_copy, sst_sqlite_db **conn,
                                  sqlite3 **db, pthread_mutex_t **mu,
                                  sst_code (*prepare)(void *self, sst_error *err), void *self,
                                  sst_error *err) {
    SST__ERR_LOCAL(err);
    if ((*path_copy = sst__strndup(path, strlen(path))) == NULL) {
        return sst__enomem(err);
    }
    if ((*conn = sst__sqlite_db_attach(shared, path, flags, what, db, mu, err)) == NULL) {
        return sst__code(err);
    }
    if (prepare == NULL) {
        return SST_OK;
    }
    pthread_mutex_lock(*mu);
    sst_code rc = prepare(self, err);
    pthread_mutex_unlock(*mu);
    return rc;
}

sst_sqlite_db *sst__sqlite_db_retain(sst_sqlite_db *d) {
    atomic_fetch_add(&d->refs, 1);
    return d;
}

void sst_sqlite_db_release(sst_sqlite_db *d) {
    if (d != NULL && atomic_fetch_sub(&d->refs, 1) == 1) {
        db_free(d);
    }
}

const char *sst_sqlite_db_path(const sst_sqlite_db *d) {
    return d->path;
}

/* Runs the transaction statement @p which (preparing it on first use; call holding mu):
 * SQLITE_DONE on success, else SQLite's code (the connection's error message is set). */
static int tx_step(sst_sqlite_db *d, int which) {
    if (d->tx[which] == NULL) {
        int rc = sqlite3_prepare_v2(d->db, k_tx_sql[which], -1, &d->tx[which], NULL);
        if (rc != SQLITE_OK) {
            return rc;
        }
    }
    int rc = sqlite3_step(d->tx[which]);
    sqlite3_reset(d->tx[which]);
    return rc;
}

/* The connection's PRAGMA synchronous (0 OFF .. 3 EXTRA), or -1. */
static int synchronous_of(sqlite3 *db) {
    sqlite3_stmt *st = NULL;
    int v = -1;
    if (sqlite3_prepare_v2(db, "PRAGMA synchronous", -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW) {
        v = sqlite3_column_int(st, 0);
    }
    sqlite3_finalize(st);
    return v;
}

sst_code sst_sqlite_db_begin(sst_sqlite_db *d, sst_error *err) {
    SST__ERR_LOCAL(err);
    pthread_mutex_lock(&d->mu);
    if (d->batch > 0) {
        d->batch++;
        return SST_OK;
    }
    if (tx_step(d, TX_BEGIN) != SQLITE_DONE) {
        int code = sqlite3_extended_errcode(d->db);
        sst__error(err, (code & 0xff) == SQLITE_BUSY ? SST_EBUSY : SST_EIO,
                   "database '%s': beginning a transaction: %s", d->path, sqlite3_errmsg(d->db));
        pthread_mutex_unlock(&d->mu);
        return sst__code(err);
    }
    d->batch = 1;
    atomic_store(&d->batch_owner, (unsigned long)pthread_self());
    atomic_store(&d->batch_open, true);
    return SST_OK;
}

sst_code sst_sqlite_db_commit(sst_sqlite_db *d, bool ok, sst_error *err) {
    SST__ERR_LOCAL(err);
    sst_code rc = SST_OK;
    if (d->batch > 1) {
        d->batch--;
        pthread_mutex_unlock(&d->mu);
        return SST_OK;
    }
    if (ok && tx_step(d, TX_COMMIT) != SQLITE_DONE) {
        rc = sst__error(err, SST_EIO, "database '%s': committing: %s", d->path,
                        sqlite3_errmsg(d->db));
        ok = false;
    }
    if (!ok && sqlite3_get_autocommit(d->db) == 0) {
        (void)tx_step(d, TX_ROLLBACK);
    }
    d->batch = 0;
    d->savepoints = 0;
    d->hand_over = false;
    atomic_store(&d->batch_open, false);
    pthread_mutex_unlock(&d->mu);
    return rc;
}

bool sst__sqlite_db_batch_mine(sst_sqlite_db *d) {
    return atomic_load(&d->batch_open) &&
           atomic_load(&d->batch_owner) == (unsigned long)pthread_self();
}

bool sst__sqlite_db_batch(sst_sqlite_db *d) {
    return d->batch > 0;
}

bool sst__sqlite_tx(sst_sqlite_db *d, int what) {
    bool ok;
    if (what == SST__TX_BEGIN) {
        ok = tx_step(d, TX_SAVEPOINT) == SQLITE_DONE;
    } else if (what == SST__TX_COMMIT) {
        ok = tx_step(d, TX_RELEASE) == SQLITE_DONE;
    } else {
        ok = tx_step(d, TX_UNDO) == SQLITE_DONE && tx_step(d, TX_RELEASE) == SQLITE_DONE;
    }
    if (what == SST__TX_BEGIN) {
        d->savepoints += ok;
        return ok;
    }
    d->savepoints -= d->savepoints > 0;
    if (ok && what == SST__TX_COMMIT && d->hand_over && d->savepoints == 0 && d->batch == 1) {
        /* The transaction the batch was handed over to commits the batch: that lets go
         * of sst_sqlite_db_begin's hold of the mutex; the caller's own stays. */
        ok = sst_sqlite_db_commit(d, true, NULL) == SST_OK;
    }
    return ok;
}

void sst__sqlite_db_hand_over(sst_sqlite_db *d) {
    if (sst__sqlite_db_batch_mine(d)) {
        d->hand_over = true;
    }
}

bool sst__sqlite_db_flushes(sst_sqlite_db *d) {
    return synchronous_of(d->db) >= 2; /* FULL or EXTRA */
}

sst_code sst_sqlite_db_set_flush(sst_sqlite_db *d, bool flush, sst_error *err) {
    SST__ERR_LOCAL(err);
    if (d == NULL) {
        return sst__error(err, SST_EINVAL, "sst_sqlite_db_set_flush: NULL database");
    }
    pthread_mutex_lock(&d->mu);
    const char *sql = flush ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL";
    sst_code rc = SST_OK;
    if (sqlite3_exec(d->db, sql, NULL, NULL, NULL) != SQLITE_OK) {
        rc = sst__error(err, SST_EIO, "database '%s': setting the flush policy (%s): %s", d->path,
                        sql, sqlite3_errmsg(d->db));
    }
    pthread_mutex_unlock(&d->mu);
    return rc;
}

/* ---- statement helpers of every backend ---- */

int64_t sst__sqlite_int(sqlite3 *db, const char *sql, bool *ok) {
    sqlite3_stmt *st = NULL;
    int64_t v = 0;
    *ok = sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW;
    if (*ok) {
        v = sqlite3_column_int64(st, 0);
    }
    sqlite3_finalize(st);
    return v;
}

sst_code sst__sqlite_code(int rc, sst_code busy) {
    int c = rc & 0xff;
    return c == SQLITE_BUSY || c == SQLITE_LOCKED ? busy : c == SQLITE_NOMEM ? SST_ENOMEM : SST_EIO;
}

sst_code sst__sqlite_error(sqlite3 *db, const char *kind, const char *path, sst_code busy,
                           const char *what, sst_error *err) {
    return sst__error(err, sst__sqlite_code(sqlite3_extended_errcode(db), busy), "%s '%s': %s: %s",
                      kind, path, what, sqlite3_errmsg(db));
}

bool sst__sqlite_exec(sqlite3 *db, const char *sql, const char *kind, const char *path,
                      sst_code busy, const char *what, sst_error *err) {
    char *msg = NULL;
    int rc = sqlite3_exec(db, sql, NULL, NULL, &msg);
    if (rc != SQLITE_OK) {
        sst__error(err, sst__sqlite_code(rc, busy), "%s '%s': %s: %s", kind, path, what,
                   msg != NULL ? msg : sqlite3_errmsg(db));
        sqlite3_free(msg);
        return false;
    }
    return true;
}
