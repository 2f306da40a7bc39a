/* SPDX-License-Identifier: MIT */
/*
 * The SQLite run queue: opening a file, the queue's tables, and the statement
 * and error helpers its other files share (sqlite_int.h lists them).
 *
 * Opening checks the file before writing anything to it: not SQLite, another
 * application's database (application_id), a newer queue schema or damaged
 * queue tables are errors naming the file. The queue keeps its own schema
 * version (sst_queue_meta), apart from the saver's user_version and the
 * store's store_meta, so that each may be opened first on a shared file.
 * Several processes may open a new file at once: the tables are made in one
 * IMMEDIATE transaction that looks again whether another made them, and an
 * attempt that finds the file locked is retried with backoff.
 */
#include <stdio.h>
#include <string.h>

#include "sqlite_int.h"

/*
 * A run of r's thread that blocks claiming r: an older one not finished, or
 * another one holding a live lease (not expired at ?1, its holder not gone).
 * Both look in sst_runs_active, which holds the pending and running runs
 * only, so a thread's finished history costs nothing here.
 */
#define THREAD_FREE                                                                                \
    " AND NOT EXISTS(SELECT 1 FROM sst_runs o INDEXED BY sst_runs_active"                          \
    " WHERE o.thread_id = r.thread_id AND o.status IN ('pending', 'running') AND o.seq < r.seq)"   \
    " AND NOT EXISTS(SELECT 1 FROM sst_runs o INDEXED BY sst_runs_active"                          \
    " WHERE o.thread_id = r.thread_id AND o.status IN ('pending', 'running') AND o.seq > r.seq"    \
    " AND o.status = 'running' AND o.lease_expires >= ?1 AND NOT sst_owner_gone(o.owner))"

#define LIST_SQL(where)                                                                            \
    "SELECT " QUEUE_RUN_COLS " FROM sst_runs " where " ORDER BY seq LIMIT ?1 OFFSET ?2"

static const char *const k_sql[QS_COUNT] = {
    [QS_BEGIN] = "BEGIN IMMEDIATE",
    [QS_COMMIT] = "COMMIT",
    [QS_ROLLBACK] = "ROLLBACK",
    [QS_INSERT] = "INSERT INTO sst_runs(run_id, thread_id, assistant_id, status, kwargs, metadata,"
                  " multitask_strategy, created_at, updated_at, run_after)"
                  " VALUES(?1, ?2, ?3, 'pending', ?4, ?5, ?6, ?7, ?8, ?9)",
    [QS_THREAD_ACTIVE] =
        "SELECT run_id FROM sst_runs INDEXED BY sst_runs_active WHERE"
        " thread_id = ?1 AND status IN ('pending', 'running') ORDER BY seq LIMIT 1",
    [QS_GET] = "SELECT " QUEUE_RUN_COLS " FROM sst_runs WHERE run_id = ?1",
    [QS_LIST] = LIST_SQL(""),
    [QS_LIST_THREAD] = LIST_SQL("WHERE thread_id = ?3"),
    [QS_LIST_STATUS] = LIST_SQL("WHERE status = ?4"),
    [QS_LIST_THREAD_STATUS] = LIST_SQL("WHERE thread_id = ?3 AND status = ?4"),
    [QS_REMOVE] = "DELETE FROM sst_runs WHERE run_id = ?1",
    [QS_REMOVE_THREAD] = "DELETE FROM sst_runs WHERE thread_id = ?1",
    /* The right-hand sides all read the row as it was: a pending run is finished. */
    [QS_CANCEL] = "UPDATE sst_runs SET"
                  " cancel = CASE WHEN status IN ('pending', 'running') THEN ?2 ELSE cancel END,"
                  " updated_at = CASE WHEN status = 'pending' THEN ?3 ELSE updated_at END,"
                  " status = CASE WHEN status = 'pending' THEN 'interrupted' ELSE status END"
                  " WHERE run_id = ?1 RETURNING status",
    [QS_CLAIM_PENDING] = "SELECT r.seq FROM sst_runs r INDEXED BY sst_runs_pending"
                         " WHERE r.status = 'pending'"
                         " AND r.run_after <= ?1" THREAD_FREE " ORDER BY r.seq LIMIT 1",
    /* min(seq), not ORDER BY seq LIMIT 1: sst_runs_running is not in seq order, and the
     * sort would build a temporary b-tree at every claim (a row of NULL: none). */
    [QS_CLAIM_EXPIRED] = "SELECT min(r.seq) FROM sst_runs r INDEXED BY sst_runs_running"
                         " WHERE r.status = 'running' AND r.lease_expires < ?1" THREAD_FREE,
    /* The next holder after ?1 and before ?2 (a skip-scan over the distinct holders). */
    [QS_LOCAL_OWNER] = "SELECT owner FROM sst_runs INDEXED BY sst_runs_running"
                       " WHERE status = 'running' AND owner > ?1 AND owner < ?2"
                       " ORDER BY owner LIMIT 1",
    [QS_CLAIM_OWNER] = "SELECT min(r.seq) FROM sst_runs r INDEXED BY sst_runs_running"
                       " WHERE r.status = 'running' AND r.owner = ?2" THREAD_FREE,
    /* The claimed row is read after by QS_GET_SEQ, not with RETURNING: an UPDATE with
     * RETURNING gathers its rows in a temporary table first, and cost 2-3 times the UPDATE
     * and the SELECT together at every claim (issue 37). */
    [QS_CLAIM_SET] = "UPDATE sst_runs SET status = 'running', owner = ?2, lease_expires = ?3,"
                     " attempt = attempt + 1, token = ?4, updated_at = ?5 WHERE seq = ?1",
    [QS_GET_SEQ] = "SELECT " QUEUE_RUN_COLS " FROM sst_runs WHERE seq = ?1",
    [QS_RENEW] = "UPDATE sst_runs SET lease_expires = ?3, updated_at = ?4"
                 " WHERE run_id = ?1 AND token = ?2 AND status = 'running' RETURNING cancel",
    [QS_FINISH] = "UPDATE sst_runs SET status = ?3, owner = NULL, lease_expires = 0, token = 0,"
                  " updated_at = ?4 WHERE run_id = ?1 AND token = ?2 AND status = 'running'",
    [QS_RELEASE] = "UPDATE sst_runs SET status = 'pending', owner = NULL, lease_expires = 0,"
                   " token = 0, updated_at = ?3"
                   " WHERE run_id = ?1 AND token = ?2 AND status = 'running'",
    [QS_HOLDER] = "SELECT status, attempt, owner FROM sst_runs WHERE run_id = ?1",
};

/*
 * Indexes. sst_runs_pending is (seq) over the pending runs, not (run_after): a
 * claim wants the oldest runnable run, so it walks the pending runs in
 * enqueue order and stops at the first whose run_after has come; ordered by
 * run_after it would sort every runnable run on each claim. It is partial
 * (schema 3), where schema 2 had sst_runs_status (status, seq) over every run:
 * that one's entry moved at each claim (pending to running) and each finish
 * (running to a final status), two more WAL pages per run, for a list by
 * status without a thread, which now reads sst_runs in seq order instead. The
 * three partial indexes hold the unfinished runs only, so their size is the work in flight,
 * not the history: sst_runs_active for "is this thread free", sst_runs_running
 * (owner, lease_expires) for the distinct holders of this host (whose processes a
 * claim probes, a skip-scan on owner) and for expired leases (a scan of the running
 * runs: the work in flight, a few per worker). One index for both, not one each:
 * every claim and finish writes each index's page (schema 2).
 */
/* sst_runs as schema 2 makes it (the name given: an upgrade builds a copy first). */
#define RUNS_TABLE(name)                                                                           \
    "CREATE TABLE " name "(seq INTEGER PRIMARY KEY, run_id TEXT NOT NULL UNIQUE,"                  \
    " thread_id TEXT NOT NULL, assistant_id TEXT NOT NULL, status TEXT NOT NULL,"                  \
    " kwargs TEXT NOT NULL, metadata TEXT NOT NULL, multitask_strategy TEXT,"                      \
    " created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, run_after INTEGER NOT NULL,"       \
    " attempt INTEGER NOT NULL DEFAULT 0, cancel TEXT, owner TEXT,"                                \
    " lease_expires INTEGER NOT NULL DEFAULT 0, token INTEGER NOT NULL DEFAULT 0);"
#define RUNS_INDEXES                                                                               \
    "CREATE INDEX sst_runs_pending ON sst_runs(seq) WHERE status = 'pending';"                     \
    "CREATE INDEX sst_runs_thread ON sst_runs(thread_id, seq);"                                    \
    "CREATE INDEX sst_runs_active ON sst_runs(thread_id, seq)"                                     \
    " WHERE status IN ('pending', 'running');"                                                     \
    "CREATE INDEX sst_runs_running ON sst_runs(owner, lease_expires) WHERE status = 'running';"
#define RUNS_COLS                                                                                  \
    "seq, run_id, thread_id, assistant_id, status, kwargs, metadata, multitask_strategy,"          \
    " created_at, updated_at, run_after, attempt, cancel, owner, lease_expires, token"

static const char k_schema[] = "CREATE TABLE sst_queue_meta(key TEXT PRIMARY KEY, value INTEGER "
                               "NOT NULL) WITHOUT ROWID;" RUNS_TABLE("sst_runs") RUNS_INDEXES
    "INSERT INTO sst_queue_meta(key, value) VALUES('schema', 3);";

/*
 * 1 -> 2 (issue 37), fewer b-tree pages written per run: sst_runs_lease (lease_expires)
 * and sst_runs_owner (owner), both over the running runs, become one index,
 * sst_runs_running (owner, lease_expires), so a claim and a finish write one page fewer
 * each; and sst_runs loses AUTOINCREMENT, whose sqlite_sequence row was one more page at
 * every enqueue (seq orders the runs; a new row's rowid is still above every live row's,
 * only the seq of a removed newest run may be given again). The table is copied whole.
 * A process of a build before it must not share the file meanwhile (its claims name the
 * old indexes).
 */
static const char k_schema_v2[] =
    RUNS_TABLE("sst_runs_v2") "INSERT INTO sst_runs_v2(" RUNS_COLS ") SELECT " RUNS_COLS
                              " FROM sst_runs ORDER BY seq;"
                              "DROP TABLE sst_runs;"
                              "ALTER TABLE sst_runs_v2 RENAME TO sst_runs;" RUNS_INDEXES
                              "DELETE FROM sqlite_sequence WHERE name = 'sst_runs';"
                              "UPDATE sst_queue_meta SET value = 2 WHERE key = 'schema';";

/*
 * 2 -> 3 (issue 37): sst_runs_status (status, seq) over every run becomes
 * sst_runs_pending (seq) over the pending runs: a claim and a finish no longer
 * move the run's entry in an index of the whole history (about two WAL pages
 * fewer per run). From schema 1, k_schema_v2 already made the new index.
 */
static const char k_schema_v3[] =
    "DROP INDEX IF EXISTS sst_runs_status;"
    "CREATE INDEX IF NOT EXISTS sst_runs_pending ON sst_runs(seq) WHERE status = 'pending';"
    "UPDATE sst_queue_meta SET value = 3 WHERE key = 'schema';";

/* ---- helpers shared by the queue's files ---- */

/* A lock still held by another connection when the busy timeout ran out is worth a retry. */
#define QUEUE_BUSY SST_EUNAVAILABLE
static sst_code code_of(int rc) {
    return sst__sqlite_code(rc, QUEUE_BUSY);
}

sst_code sst__qs_error(const sqlite_queue *s, sst_error *err, const char *what) {
    return sst__sqlite_error(s->db, "queue", s->path, QUEUE_BUSY, what, err);
}

sqlite3_stmt *sst__qs_stmt(sqlite_queue *s, int which) {
    sqlite3_stmt *st = s->st[which];
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    return st;
}

void sst__qs_bind_text(sqlite3_stmt *st, int i, const char *text) {
    if (text != NULL) {
        sqlite3_bind_text(st, i, text, -1, SQLITE_TRANSIENT);
    } else {
        sqlite3_bind_null(st, i);
    }
}

bool sst__qs_done(sqlite_queue *s, sqlite3_stmt *st, const char *what, sst_error *err) {
    int rc = sqlite3_step(st);
    if (rc != SQLITE_DONE) {
        sst__qs_error(s, err, what);
    }
    sqlite3_reset(st);
    return rc == SQLITE_DONE;
}

bool sst__qs_begin(sqlite_queue *s, sst_error *err) {
    if (sst__sqlite_db_batch(s->conn)) { /* a savepoint of the caller's transaction */
        return sst__sqlite_tx(s->conn, SST__TX_BEGIN) ||
               (sst__qs_error(s, err, "beginning a transaction"), false);
    }
    return sst__qs_done(s, s->st[QS_BEGIN], "beginning a transaction", err);
}

bool sst__qs_end(sqlite_queue *s, bool ok, sst_error *err) {
    if (sst__sqlite_db_batch(s->conn)) {
        if (ok && sst__sqlite_tx(s->conn, SST__TX_COMMIT)) {
            return true;
        }
        if (ok) {
            sst__qs_error(s, err, "committing");
        }
        sst__sqlite_tx(s->conn, SST__TX_ROLLBACK);
        return false;
    }
    if (ok && sst__qs_done(s, s->st[QS_COMMIT], "committing", err)) {
        return true;
    }
    if (sqlite3_get_autocommit(s->db) == 0) {
        sst__qs_done(s, s->st[QS_ROLLBACK], "rolling back", NULL);
    }
    return false;
}

/* sst_owner_gone(owner): SQL's view of sst__owner_gone, for the claim statements. */
static void owner_gone_fn(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
    SST_UNUSED(argc);
    const char *owner = (const char *)sqlite3_value_text(argv[0]);
    sqlite3_result_int(ctx, owner != NULL && sst__owner_gone(owner));
}

/* ---- opening ---- */

static bool exec(sqlite_queue *s, const char *sql, const char *what, sst_error *err) {
    return sst__sqlite_exec(s->db, sql, "queue", s->path, QUEUE_BUSY, what, err);
}

static bool has_table(sqlite_queue *s, const char *name, bool *ok) {
    char sql[128];
    snprintf(sql, sizeof sql,
             "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = '%s'", name);
    return sst__sqlite_int(s->db, sql, ok) > 0;
}

/* PRAGMA quick_check of the queue's tables and their indexes only (a shared file may be big). */
static sst_code quick_check(sqlite_queue *s, sst_error *err) {
    sqlite3_stmt *st = NULL;
    char first[200] = "";
    int rc = sqlite3_prepare_v2(s->db, "PRAGMA quick_check(sst_runs)", -1, &st, NULL);
    if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *res = (const char *)sqlite3_column_text(st, 0);
        snprintf(first, sizeof first, "%s", res != NULL ? res : "");
    } else {
        snprintf(first, sizeof first, "%s", sqlite3_errmsg(s->db));
    }
    sqlite3_finalize(st);
    if (strcmp(first, "ok") != 0) {
        sst_code code = code_of(rc) == SST_EUNAVAILABLE ? SST_EUNAVAILABLE : SST_EIO;
        return sst__error(err, code, "queue '%s' is corrupt: %s", s->path, first);
    }
    return SST_OK;
}

/* The checks of a file that has tables: ours, with queue tables this build reads. */
static sst_code check_tables(sqlite_queue *s, bool *has_queue, int64_t *schema_out,
                             sst_error *err) {
    bool ok;
    int64_t app = sst__sqlite_int(s->db, "PRAGMA application_id", &ok);
    if (!ok || app != SST__QUEUE_SQLITE_APP_ID) {
        return sst__error(err, ok ? SST_EIO : code_of(sqlite3_errcode(s->db)),
                          "queue '%s' is not a superstep database (application_id 0x%08llx, "
                          "expected 0x%08x)",
                          s->path, (unsigned long long)app, SST__QUEUE_SQLITE_APP_ID);
    }
    *has_queue = has_table(s, "sst_queue_meta", &ok);
    if (!ok || !*has_queue) {
        return ok ? SST_OK : sst__qs_error(s, err, "reading the schema");
    }
    int64_t schema =
        sst__sqlite_int(s->db, "SELECT value FROM sst_queue_meta WHERE key = 'schema'", &ok);
    if (!ok || !has_table(s, "sst_runs", &ok) || !ok) {
        return sst__error(err, SST_EIO, "queue '%s' has damaged queue tables: %s", s->path,
                          ok ? "sst_runs is missing" : sqlite3_errmsg(s->db));
    }
    *schema_out = schema;
    if (schema > SST__QUEUE_SCHEMA_VERSION) {
        return sst__error(err, SST_EIO,
                          "queue '%s' has queue schema version %lld, newer than this build "
                          "supports (%d)",
                          s->path, (long long)schema, SST__QUEUE_SCHEMA_VERSION);
    }
    return quick_check(s, err);
}

/* Makes the queue tables in one IMMEDIATE transaction (another process may race us). */
static sst_code create_schema(sqlite_queue *s, sst_error *err) {
    if (!exec(s, "BEGIN IMMEDIATE", "creating the queue tables", err)) {
        return sst__code(err);
    }
    bool ok;
    int64_t tables = sst__sqlite_int(s->db, "SELECT count(*) FROM sqlite_master", &ok);
    bool has = ok && has_table(s, "sst_queue_meta", &ok);
    char sql[64];
    snprintf(sql, sizeof sql, "PRAGMA application_id=%d", SST__QUEUE_SQLITE_APP_ID);
    ok = ok && (has || ((tables > 0 || exec(s, sql, "setting the application id", err)) &&
                        exec(s, k_schema, "creating the queue tables", err)));
    if (!ok || !exec(s, "COMMIT", "creating the queue tables", err)) {
        sst_code code = sst__error_unless_set(err, code_of(sqlite3_errcode(s->db)),
                                              "queue '%s': creating the queue tables: %s", s->path,
                                              sqlite3_errmsg(s->db));
        sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
        return code;
    }
    return SST_OK;
}

/* Brings queue tables of schema 1 or 2 to 3 (k_schema_v2, _v3) in one IMMEDIATE transaction that
 * reads the version again: of several processes opening the file at once, one upgrades. */
static sst_code upgrade_schema(sqlite_queue *s, sst_error *err) {
    if (!exec(s, "BEGIN IMMEDIATE", "upgrading the queue tables", err)) {
        return sst__code(err);
    }
    bool ok;
    int64_t schema =
        sst__sqlite_int(s->db, "SELECT value FROM sst_queue_meta WHERE key = 'schema'", &ok);
    if (!ok) {
        sst__qs_error(s, err, "upgrading the queue tables");
    }
    if (!ok || (schema < 2 && !exec(s, k_schema_v2, "upgrading the queue tables", err)) ||
        (schema < 3 && !exec(s, k_schema_v3, "upgrading the queue tables", err)) ||
        !exec(s, "COMMIT", "upgrading the queue tables", err)) {
        sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
        return sst__code(err);
    }
    return SST_OK;
}

/* One attempt at checking and preparing the file; SST_EUNAVAILABLE means try again. */
static sst_code prepare_file(sqlite_queue *s, sst_error *err) {
    bool ok, has_queue = false;
    int64_t schema = SST__QUEUE_SCHEMA_VERSION;
    int64_t tables = sst__sqlite_int(s->db, "SELECT count(*) FROM sqlite_master", &ok);
    if (!ok) {
        sst_code code =
            code_of(sqlite3_errcode(s->db)) == SST_EUNAVAILABLE ? SST_EUNAVAILABLE : SST_EIO;
        return sst__error(err, code, "queue '%s' is not a usable SQLite database: %s", s->path,
                          sqlite3_errmsg(s->db));
    }
    sst_code rc = tables > 0 ? check_tables(s, &has_queue, &schema, err) : SST_OK;
    if (rc == SST_OK && (!exec(s, "PRAGMA journal_mode=WAL", "setting the journal mode", err) ||
                         !exec(s, "PRAGMA synchronous=NORMAL", "setting synchronous", err))) {
        rc = sst__code(err);
    }
    if (rc == SST_OK && has_queue && schema < SST__QUEUE_SCHEMA_VERSION) {
        rc = upgrade_schema(s, err);
    }
    return rc == SST_OK && !has_queue ? create_schema(s, err) : rc;
}

/* Opens and checks the file, retrying with backoff while another process holds it
 * (sst__sqlite_backend_open calls it holding s->mu). */
static sst_code open_file(void *self, sst_error *err) {
    sqlite_queue *s = self;
    sst__sqlite_busy(s->db, SST__QUEUE_BUSY_MS); /* before anything touches the file */
    if (sqlite3_create_function_v2(s->db, "sst_owner_gone", 1, SQLITE_UTF8 | SQLITE_DIRECTONLY,
                                   NULL, owner_gone_fn, NULL, NULL, NULL) != SQLITE_OK) {
        return sst__qs_error(s, err, "registering sst_owner_gone");
    }
    sst_code code = SST_EUNAVAILABLE;
    uint64_t waited = 0;
    for (uint64_t pause = 2; code == SST_EUNAVAILABLE; pause = pause < 100 ? pause * 2 : 100) {
        code = prepare_file(s, err);
        if (code != SST_EUNAVAILABLE || waited >= SST__QUEUE_BUSY_MS + 1000) {
            break;
        }
        sst__sleep_ms(pause);
        waited += pause;
    }
    for (int i = 0; code == SST_OK && i < QS_COUNT; i++) {
        if (sqlite3_prepare_v3(s->db, k_sql[i], -1, SQLITE_PREPARE_PERSISTENT, &s->st[i], NULL) !=
            SQLITE_OK) {
            code = sst__qs_error(s, err, "preparing the statements");
        }
    }
    return code;
}

static void queue_destroy(void *self) {
    sqlite_queue *s = self;
    for (int i = 0; i < QS_COUNT; i++) {
        sqlite3_finalize(s->st[i]);
    }
    sst_sqlite_db_release(s->conn);
    sst__free(s->path);
    sst__free(s);
}

/* The queue of both opens: on @p shared when not NULL, else on its own connection. */
static sst_queue *queue_open(const char *path, sst_sqlite_db *shared, sst_error *err) {
    sqlite_queue *s = sst__calloc(1, sizeof *s);
    if (s == NULL) {
        sst__enomem(err);
        return NULL;
    }
    if (sst__sqlite_backend_open(shared, path, 0, "queue", &s->path, &s->conn, &s->db, &s->mu,
                                 open_file, s, err) != SST_OK) {
        queue_destroy(s);
        return NULL;
    }
    static const sst_queue_ops ops = {
        .size = sizeof(sst_queue_ops),
        .destroy = queue_destroy,
        .enqueue = sst__qs_enqueue,
        .get = sst__qs_get,
        .list = sst__qs_list,
        .remove = sst__qs_remove,
        .remove_thread = sst__qs_remove_thread,
        .claim = sst__qs_claim,
        .renew = sst__qs_renew,
        .finish = sst__qs_finish,
        .release = sst__qs_release,
        .cancel = sst__qs_cancel,
    };
    sst_queue *q = sst_queue_new(&ops, s, err);
    if (q == NULL) {
        queue_destroy(s);
    }
    return q;
}

sst_queue *sst_sqlite_queue_open(const char *path, sst_error *err) {
    SST__ERR_LOCAL(err);
    if (path == NULL || path[0] == '\0') {
        sst__error(err, SST_EINVAL, "sqlite queue: the path must be a non-empty string");
        return NULL;
    }
    return queue_open(path, NULL, err);
}

sst_queue *sst_sqlite_queue_open_db(sst_sqlite_db *db, sst_error *err) {
    SST__ERR_LOCAL(err);
    if (db == NULL) {
        sst__error(err, SST_EINVAL, "sqlite queue: NULL database");
        return NULL;
    }
    return queue_open(sst_sqlite_db_path(db), db, err);
}
