/* SPDX-License-Identifier: MIT */
/*
 * The SQLite saver: opening a file, its schema and migrations, and the
 * statement helpers its other files share (sqlite_int.h lists them). WAL
 * journal; synchronous NORMAL, raised to FULL around commits that ask for
 * SST_DURABILITY_SYNC.
 *
 * Opening checks the file before writing anything to it: not SQLite, another
 * application's database (application_id), a newer schema (user_version) or
 * a corrupt file (quick_check) are errors naming the file. Several processes
 * may open a new file at once: the busy handler is set first, the schema is
 * made inside one IMMEDIATE transaction that re-reads the version, and a
 * step that still finds the file locked is retried with backoff.
 */
#include <stdio.h>
#include <string.h>

#include "sqlite_int.h"

static const char *const k_sql[S_COUNT] = {
    [S_BEGIN] = "BEGIN IMMEDIATE",
    [S_COMMIT] = "COMMIT",
    [S_ROLLBACK] = "ROLLBACK",
    [S_PUT] = "INSERT INTO checkpoints(thread, ns, id, parent, step, format, kind, source, run_id,"
              " created, status, header, body, meta, hcrc, bcrc, mcrc, blobs) "
              "VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    [S_HEAD] = "SELECT id FROM checkpoints WHERE thread=? AND ns=? ORDER BY seq DESC LIMIT 1",
    [S_GET_ID] = "SELECT " REC_COLS " FROM checkpoints WHERE thread=? AND ns=? AND id=?",
    [S_GET_LATEST] = "SELECT " REC_COLS " FROM checkpoints WHERE thread=? AND ns=? "
                     "ORDER BY seq DESC LIMIT 1",
    [S_GET_WRITES] = "SELECT body, crc FROM writes WHERE thread=? AND id=?",
    [S_PUT_WRITES] = "INSERT OR REPLACE INTO writes(thread, id, body, crc) VALUES(?,?,?,?)",
    [S_DEL_WRITES] = "DELETE FROM writes WHERE thread=? AND id=?",
    [S_SET_STATUS] = "UPDATE checkpoints SET status=? WHERE thread=? AND ns=? AND id=?",
    [S_LIST] = "SELECT " REC_HEAD_COLS " FROM checkpoints WHERE thread=?1 AND (?2 IS NULL OR ns=?2)"
               " AND (?3 IS NULL OR seq < (SELECT seq FROM checkpoints WHERE thread=?1 AND id=?3))"
               " ORDER BY seq DESC",
    [S_LOCK] = "INSERT OR IGNORE INTO locks(thread, owner, pid, expires) VALUES(?,?,?,?)",
    [S_LOCK_OWNER] = "SELECT owner, pid, expires FROM locks WHERE thread=?",
    [S_LOCK_TAKE] = "UPDATE locks SET owner=?, pid=?, expires=? WHERE thread=? AND owner=?",
    [S_LOCK_RENEW] = "UPDATE locks SET expires=? WHERE thread=? AND owner=?",
    [S_UNLOCK] = "DELETE FROM locks WHERE thread=? AND owner=?",
    [S_PUT_BLOB] = "INSERT OR IGNORE INTO chunks(id, body, crc) VALUES(?,?,?)",
    [S_HAS_BLOB] = "SELECT 1 FROM chunks WHERE id=?",
    [S_GET_BLOB] = "SELECT body, crc FROM chunks WHERE id=?",
    [S_SWEEP_ADD_REC] =
        "INSERT OR IGNORE INTO temp.sweep SELECT j.value FROM checkpoints c, " BLOB_IDS_OF_C " "
        "WHERE c.thread=? AND c.id=? AND c.blobs IS NOT NULL",
    [S_SWEEP_ADD_THREAD] =
        "INSERT OR IGNORE INTO temp.sweep SELECT j.value FROM checkpoints c, " BLOB_IDS_OF_C " "
        "WHERE c.thread=? AND c.blobs IS NOT NULL",
    [S_SWEEP] = "DELETE FROM chunks WHERE id IN (SELECT blob FROM temp.sweep) AND NOT EXISTS "
                "(SELECT 1 FROM checkpoints c WHERE c.blobs IS NOT NULL AND "
                "instr(',' || c.blobs || ',', ',' || chunks.id || ',') > 0)",
    [S_THREAD_NEW] = "INSERT OR IGNORE INTO threads(thread, created, updated, metadata) "
                     "VALUES(?1,?2,?2,'{}')",
    [S_THREAD_PUT] = "INSERT INTO threads(thread, created, updated, metadata, mcrc) "
                     "VALUES(?1,?2,?2,?3,?4) ON CONFLICT(thread) DO UPDATE SET "
                     "metadata=excluded.metadata, mcrc=excluded.mcrc, "
                     "updated=max(updated, excluded.updated)",
    [S_THREAD_EXISTS] = "SELECT 1 FROM threads WHERE thread=?1 UNION ALL "
                        "SELECT 1 FROM checkpoints WHERE thread=?1 LIMIT 1",
    [S_THREAD_GET] = THREAD_SELECT " WHERE t.thread = ?2",
    [S_CHAIN] = "SELECT id, ns, parent, kind FROM checkpoints WHERE thread=? ORDER BY seq",
    [S_DEL_REC] = "DELETE FROM checkpoints WHERE thread=? AND id=?",
    [S_DATA_VERSION] = "PRAGMA data_version",
    [S_SWEEP_CLEAR] = "DELETE FROM temp.sweep",
    [S_DEL_THREAD_C] = "DELETE FROM checkpoints WHERE thread=?",
    [S_DEL_THREAD_W] = "DELETE FROM writes WHERE thread=?",
    [S_DEL_THREAD_T] = "DELETE FROM threads WHERE thread=?",
    [S_COPY_C] = "INSERT INTO checkpoints(thread, ns, id, parent, step, format, kind, source, "
                 "run_id, created, status, header, body, meta, hcrc, bcrc, mcrc, blobs) "
                 "SELECT ?2, ns, id, parent, step, format, kind, source, run_id, created, status,"
                 " header, body, meta, hcrc, bcrc, mcrc, blobs FROM checkpoints WHERE thread=?1 "
                 "ORDER BY seq",
    [S_COPY_W] = "INSERT INTO writes(thread, id, body, crc) SELECT ?2, id, body, crc FROM writes "
                 "WHERE thread=?1",
    [S_COPY_T] = "INSERT INTO threads(thread, created, updated, metadata, mcrc) "
                 "SELECT ?2, created, updated, metadata, mcrc FROM threads WHERE thread=?1",
    [S_GROUP_SP] = "SAVEPOINT sst_group_unit",
    [S_GROUP_RELEASE] = "RELEASE sst_group_unit",
    [S_GROUP_UNDO] = "ROLLBACK TO sst_group_unit",
};

void sst_sqlite_opts_init(sst_sqlite_opts *o) {
    memset(o, 0, sizeof *o);
    o->busy_timeout_ms = 5000;
    o->check_integrity = true;
    o->lease_ms = 30000;
    o->max_record_bytes = (size_t)256 << 20;
}

/* ---- helpers shared by the saver's files ---- */

static sst_code code_of(int rc) {
    return sst__sqlite_code(rc, SST_EBUSY);
}

sst_code sst__sq_db_error(const sqlite_saver *s, sst_error *err, const char *what) {
    return sst__sqlite_error(s->db, "checkpoint store", s->path, SST_EBUSY, what, err);
}

bool sst__sq_exec(sqlite_saver *s, const char *sql, sst_error *err) {
    return sst__sqlite_exec(s->db, sql, "checkpoint store", s->path, SST_EBUSY, sql, err);
}

sqlite3_stmt *sst__sq_stmt(sqlite_saver *s, int which) {
    sqlite3_stmt *st = s->st[which];
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    return st;
}

void sst__sq_bind_text(sqlite3_stmt *st, int i, const char *text) {
    if (text != NULL) {
        sqlite3_bind_text(st, i, text, -1, SQLITE_TRANSIENT);
    } else {
        sqlite3_bind_null(st, i);
    }
}

bool sst__sq_step_done(sqlite_saver *s, sqlite3_stmt *st, const char *what, sst_error *err) {
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    if (rc != SQLITE_DONE) {
        sst__sq_db_error(s, err, what);
        return false;
    }
    return true;
}

/* Runs one of the prepared transaction statements. */
static bool run_tx(sqlite_saver *s, int which, const char *what, sst_error *err) {
    return sst__sq_step_done(s, s->st[which], what, err);
}

bool sst__sq_begin(sqlite_saver *s, bool sync, sst_error *err) {
    if (s->in_group) { /* a unit of a group commit: a savepoint of the leader's transaction */
        return run_tx(s, S_GROUP_SP, "beginning a transaction", err);
    }
    if (sst__sqlite_db_batch(s->conn)) { /* a savepoint of the caller's transaction */
        return sst__sqlite_tx(s->conn, SST__TX_BEGIN) ||
               (sst__sq_db_error(s, err, "beginning a transaction"), false);
    }
    if (sync && !s->flush_on && !sst__sq_exec(s, "PRAGMA synchronous=FULL", err)) {
        return false;
    }
    return run_tx(s, S_BEGIN, "beginning a transaction", err);
}

bool sst__sq_commit(sqlite_saver *s, bool sync, bool ok, sst_error *err) {
    if (s->in_group) {
        if (ok && !run_tx(s, S_GROUP_RELEASE, "committing", err)) {
            ok = false;
        }
        if (!ok && sqlite3_get_autocommit(s->db) == 0) {
            run_tx(s, S_GROUP_UNDO, "rolling back", NULL);
            run_tx(s, S_GROUP_RELEASE, "rolling back", NULL);
        }
        return ok;
    }
    if (sst__sqlite_db_batch(s->conn)) {
        if (ok && !sst__sqlite_tx(s->conn, SST__TX_COMMIT)) {
            sst__sq_db_error(s, err, "committing");
            ok = false;
        }
        if (!ok) {
            sst__sqlite_tx(s->conn, SST__TX_ROLLBACK);
        }
        return ok;
    }
    if (!ok) {
        run_tx(s, S_ROLLBACK, "rolling back", NULL);
    } else if (!run_tx(s, S_COMMIT, "committing", err)) {
        run_tx(s, S_ROLLBACK, "rolling back", NULL);
        ok = false;
    }
    if (sync && !s->flush_on) {
        sst__sq_exec(s, "PRAGMA synchronous=NORMAL", NULL);
    }
    return ok;
}

/* ---- opening ---- */

/* SST_EBUSY when the last statement failed on a lock (worth another try), else SST_EIO. */
static sst_code last_code(const sqlite_saver *s) {
    return code_of(sqlite3_extended_errcode(s->db)) == SST_EBUSY ? SST_EBUSY : SST_EIO;
}

static sst_code check_version(sqlite_saver *s, sst_error *err) {
    bool ok;
    int64_t app = sst__sqlite_int(s->db, "PRAGMA application_id", &ok);
    if (!ok || app != SST__SQLITE_APP_ID) {
        return sst__error(err, ok ? SST_EIO : last_code(s),
                          "checkpoint store '%s' is not a superstep database (application_id "
                          "0x%08llx, expected 0x%08x)",
                          s->path, (unsigned long long)app, SST__SQLITE_APP_ID);
    }
    int64_t version = sst__sqlite_int(s->db, "PRAGMA user_version", &ok);
    if (!ok || version > SST_SQLITE_SCHEMA_VERSION) {
        return sst__error(err, ok ? SST_EIO : last_code(s),
                          "checkpoint store '%s' has schema version %lld, newer than this build "
                          "supports (%d)",
                          s->path, (long long)version, SST_SQLITE_SCHEMA_VERSION);
    }
    return SST_OK;
}

static sst_code quick_check(sqlite_saver *s, sst_error *err) {
    sqlite3_stmt *st = NULL;
    char first[200] = "";
    bool busy = false;
    if (sqlite3_prepare_v2(s->db, "PRAGMA quick_check", -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW) {
        const char *res = (const char *)sqlite3_column_text(st, 0);
        snprintf(first, sizeof first, "%s", res != NULL ? res : "");
    } else {
        busy = last_code(s) == SST_EBUSY;
        snprintf(first, sizeof first, "%s", sqlite3_errmsg(s->db));
    }
    sqlite3_finalize(st);
    if (strcmp(first, "ok") != 0) {
        return sst__error(err, busy ? SST_EBUSY : SST_EIO, "checkpoint store '%s' is corrupt: %s",
                          s->path, first);
    }
    return SST_OK;
}

/* Checks an existing file before anything is written to it; *empty for a new file. */
static sst_code check_file(sqlite_saver *s, const sst_sqlite_opts *o, bool *empty, sst_error *err) {
    bool ok;
    int64_t tables = sst__sqlite_int(s->db, "SELECT count(*) FROM sqlite_master", &ok);
    if (!ok) {
        return sst__error(err, last_code(s),
                          "checkpoint store '%s' is not a usable SQLite database: %s", s->path,
                          sqlite3_errmsg(s->db));
    }
    *empty = tables == 0;
    if (*empty) {
        return SST_OK;
    }
    sst_code rc = check_version(s, err);
    return rc == SST_OK && o->check_integrity ? quick_check(s, err) : rc;
}

static const char *const k_schema_v1 =
    "CREATE TABLE checkpoints("
    " seq INTEGER PRIMARY KEY AUTOINCREMENT,"
    " thread TEXT NOT NULL, id TEXT NOT NULL, parent TEXT, step INTEGER NOT NULL,"
    " header TEXT NOT NULL, body TEXT NOT NULL, UNIQUE(thread, id));"
    "CREATE INDEX checkpoints_thread ON checkpoints(thread, seq);"
    "CREATE TABLE writes(thread TEXT NOT NULL, id TEXT NOT NULL, body TEXT NOT NULL,"
    " PRIMARY KEY(thread, id));"
    "CREATE TABLE locks(thread TEXT PRIMARY KEY, pid INTEGER NOT NULL, since INTEGER NOT NULL);";

static const char *const k_schema_v2 =
    "CREATE TABLE chunks(id TEXT PRIMARY KEY, body TEXT NOT NULL) WITHOUT ROWID;";

/* 2 -> 3: checksums (NULL on older rows: read unchecked) and leases instead of pid locks. */
static const char *const k_schema_v3 =
    "ALTER TABLE checkpoints ADD COLUMN hcrc INTEGER;"
    "ALTER TABLE checkpoints ADD COLUMN bcrc INTEGER;"
    "ALTER TABLE writes ADD COLUMN crc INTEGER;"
    "DROP TABLE locks;"
    "CREATE TABLE locks(thread TEXT PRIMARY KEY, owner TEXT NOT NULL, pid INTEGER NOT NULL,"
    " expires INTEGER NOT NULL);";

/*
 * 3 -> 4: typed records (the store contract). New columns for the indexed
 * fields and the metadata; blobs (the old history chunks) get sums, and each record the list of
 * the blobs it refers to; threads get rows for their metadata. Rows written before
 * are record format 1: their header (the saver's old layout) stays as the
 * record's "next" payload, read by the graph layer; this migration reads it
 * once to fill the new columns and the references of their chunks. It is the
 * only code in this layer that knows that old layout.
 */
static const char *const k_schema_v4 =
    "ALTER TABLE checkpoints ADD COLUMN ns TEXT NOT NULL DEFAULT '';"
    "ALTER TABLE checkpoints ADD COLUMN format INTEGER NOT NULL DEFAULT 1;"
    "ALTER TABLE checkpoints ADD COLUMN kind INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE checkpoints ADD COLUMN source TEXT;"
    "ALTER TABLE checkpoints ADD COLUMN run_id TEXT;"
    "ALTER TABLE checkpoints ADD COLUMN created INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE checkpoints ADD COLUMN status INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE checkpoints ADD COLUMN meta TEXT;"
    "ALTER TABLE checkpoints ADD COLUMN mcrc INTEGER;"
    "DROP INDEX IF EXISTS checkpoints_thread;"
    "CREATE INDEX checkpoints_ns ON checkpoints(thread, ns, seq);"
    "ALTER TABLE checkpoints ADD COLUMN blobs TEXT;"
    "CREATE INDEX checkpoints_blobs ON checkpoints(seq) WHERE blobs IS NOT NULL;"
    "ALTER TABLE chunks ADD COLUMN crc INTEGER;"
    "CREATE TABLE threads(thread TEXT PRIMARY KEY, created INTEGER NOT NULL,"
    " updated INTEGER NOT NULL, metadata TEXT NOT NULL, mcrc INTEGER) WITHOUT ROWID;"
    "UPDATE checkpoints SET"
    " kind = CASE WHEN json_extract(header, '$.since_snapshot') = 0 THEN 0 ELSE 1 END,"
    " source = coalesce(json_extract(header, '$.metadata.source'), 'loop'),"
    " run_id = json_extract(header, '$.run_key'),"
    " meta = json_extract(header, '$.metadata') WHERE json_valid(header);"
    "UPDATE checkpoints SET blobs = (SELECT group_concat(c.value, ',')"
    " FROM json_each(checkpoints.header, '$.chunked') f,"
    " json_each(checkpoints.body, '$.\"' || f.value || '\".chunks') c)"
    " WHERE json_valid(header) AND json_valid(body) AND json_type(header, '$.chunked') = 'array';"
    "INSERT OR IGNORE INTO threads(thread, created, updated, metadata)"
    " SELECT thread, 0, 0, '{}' FROM checkpoints GROUP BY thread;";

/*
 * 4 -> 5 (issue 37): fewer b-tree pages written per commit, so fewer WAL frames.
 * checkpoints loses AUTOINCREMENT: its row in sqlite_sequence was one more page in the
 * WAL at every checkpoint's commit. seq only orders a thread's rows, and a new row's rowid
 * is still above every live row's (SQLite takes the largest plus one), so nothing that
 * reads it changes; only the seq of a deleted newest row may be given again. locks
 * becomes WITHOUT ROWID: one b-tree keyed by thread instead of a table and the index of
 * its key, two pages fewer per lease taken and given back. Both tables are copied whole.
 */
static const char *const k_schema_v5 =
    "CREATE TABLE checkpoints_v5("
    " seq INTEGER PRIMARY KEY,"
    " thread TEXT NOT NULL, id TEXT NOT NULL, parent TEXT, step INTEGER NOT NULL,"
    " header TEXT NOT NULL, body TEXT NOT NULL, hcrc INTEGER, bcrc INTEGER,"
    " ns TEXT NOT NULL DEFAULT '', format INTEGER NOT NULL DEFAULT 1,"
    " kind INTEGER NOT NULL DEFAULT 0, source TEXT, run_id TEXT,"
    " created INTEGER NOT NULL DEFAULT 0, status INTEGER NOT NULL DEFAULT 0, meta TEXT,"
    " mcrc INTEGER, blobs TEXT, UNIQUE(thread, id));"
    "INSERT INTO checkpoints_v5(seq, thread, id, parent, step, header, body, hcrc, bcrc, ns,"
    " format, kind, source, run_id, created, status, meta, mcrc, blobs)"
    " SELECT seq, thread, id, parent, step, header, body, hcrc, bcrc, ns, format, kind, source,"
    " run_id, created, status, meta, mcrc, blobs FROM checkpoints ORDER BY seq;"
    "DROP TABLE checkpoints;"
    "ALTER TABLE checkpoints_v5 RENAME TO checkpoints;"
    "CREATE INDEX checkpoints_ns ON checkpoints(thread, ns, seq);"
    "CREATE INDEX checkpoints_blobs ON checkpoints(seq) WHERE blobs IS NOT NULL;"
    "DELETE FROM sqlite_sequence WHERE name = 'checkpoints';"
    "CREATE TABLE locks_v5(thread TEXT PRIMARY KEY, owner TEXT NOT NULL, pid INTEGER NOT NULL,"
    " expires INTEGER NOT NULL) WITHOUT ROWID;"
    "INSERT INTO locks_v5(thread, owner, pid, expires) SELECT thread, owner, pid, expires"
    " FROM locks;"
    "DROP TABLE locks;"
    "ALTER TABLE locks_v5 RENAME TO locks;";

/* One migration step from @p version, inside the open transaction. */
static bool migrate_step(sqlite_saver *s, int64_t version, sst_error *err) {
    char sql[64];
    switch (version) {
        case 0:
            snprintf(sql, sizeof sql, "PRAGMA application_id=%d", SST__SQLITE_APP_ID);
            return sst__sq_exec(s, k_schema_v1, err) && sst__sq_exec(s, sql, err);
        case 1: /* snapshots keep long lists as shared chunks */
            return sst__sq_exec(s, k_schema_v2, err);
        case 2:
            return sst__sq_exec(s, k_schema_v3, err);
        case 3:
            return sst__sq_exec(s, k_schema_v4, err);
        case 4:
            return sst__sq_exec(s, k_schema_v5, err);
        default:
            return false;
    }
}

/*
 * Brings the schema to SST_SQLITE_SCHEMA_VERSION in one IMMEDIATE transaction
 * that re-reads the version: of several processes opening a new file at once,
 * the first makes the schema and the others find it made.
 */
static sst_code migrate(sqlite_saver *s, sst_error *err) {
    if (!sst__sq_exec(s, "BEGIN IMMEDIATE", err)) {
        return sst__code(err);
    }
    bool ok;
    int64_t version = sst__sqlite_int(s->db, "PRAGMA user_version", &ok);
    sst_code rc = ok ? SST_OK : sst__sq_db_error(s, err, "reading the schema version");
    if (rc == SST_OK && version > 0 && version <= SST_SQLITE_SCHEMA_VERSION) {
        rc = check_version(s, err); /* another process made it meanwhile: still ours? */
    }
    for (; rc == SST_OK && version < SST_SQLITE_SCHEMA_VERSION; version++) {
        rc = migrate_step(s, version, err) ? SST_OK : sst__code(err);
    }
    if (rc == SST_OK) {
        char sql[64];
        snprintf(sql, sizeof sql, "PRAGMA user_version=%d", SST_SQLITE_SCHEMA_VERSION);
        rc = sst__sq_exec(s, sql, err) && sst__sq_exec(s, "COMMIT", err) ? SST_OK : sst__code(err);
    }
    if (rc != SST_OK) {
        sst__sq_exec(s, "ROLLBACK", NULL);
    }
    return rc;
}

/* One attempt at preparing the connection; SST_EBUSY means try again. */
static sst_code prepare_file(sqlite_saver *s, const sst_sqlite_opts *o, sst_error *err) {
    bool empty = false;
    sst_code rc = check_file(s, o, &empty, err);
    /* Small pages for a new file: a checkpoint touches three b-tree pages, and each commit
     * appends them to the WAL, so smaller pages mean less to write per superstep (2 KiB:
     * measured against 1 and 4 KiB on W3 and W4, see bench/RESULTS.md). */
    if (rc == SST_OK && empty && !sst__sq_exec(s, "PRAGMA page_size=2048", err)) {
        rc = sst__code(err);
    }
    if (rc == SST_OK &&
        (!sst__sq_exec(s, "PRAGMA journal_mode=WAL", err) ||
         !sst__sq_exec(s, s->flush_on ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL",
                       err) ||
         !sst__sq_exec(s, "PRAGMA temp_store=MEMORY", err))) {
        rc = sst__code(err);
    }
    bool ok;
    if (rc == SST_OK &&
        (empty || sst__sqlite_int(s->db, "PRAGMA user_version", &ok) < SST_SQLITE_SCHEMA_VERSION)) {
        rc = migrate(s, err);
    }
    return rc;
}

/* Opens and checks the file, retrying with backoff while another process holds it. */
static sst_code open_file(sqlite_saver *s, const sst_sqlite_opts *o, sst_error *err) {
    sst__sqlite_busy(s->db, o->busy_timeout_ms); /* before anything touches the file */
    sst_code code = SST_EBUSY;
    uint64_t waited = 0;
    for (uint64_t pause = 2; code == SST_EBUSY; pause = pause < 100 ? pause * 2 : 100) {
        code = prepare_file(s, o, err);
        if (code != SST_EBUSY || waited >= (uint64_t)o->busy_timeout_ms + 1000) {
            break;
        }
        sst__sleep_ms(pause);
        waited += pause;
    }
    return code;
}

void sst__sq_destroy(void *self) {
    sqlite_saver *s = self;
    sst__sq_known_clear(s);
    sst__map_free(&s->known);
    sst__sq_head_clear(s);
    sst__sq_leases_free(s);
    sst__sq_group_destroy(s);
    for (int i = 0; i < S_COUNT; i++) {
        sqlite3_finalize(s->st[i]);
    }
    sst_sqlite_db_release(s->conn);
    sst__free(s->path);
    sst__free(s);
}

/* A saver on @p shared (a new reference), or on a connection of its own to @p path. */
static sqlite_saver *saver_new(const char *path, sst_sqlite_db *shared, const sst_sqlite_opts *o,
                               sst_error *err) {
    if (o->flush != SST_FLUSH_DEFAULT && o->flush != SST_FLUSH_OFF && o->flush != SST_FLUSH_ON) {
        sst__error(err, SST_EINVAL,
                   "SQLite saver %s: flush policy %d is not one of "
                   "SST_FLUSH_DEFAULT, SST_FLUSH_OFF, SST_FLUSH_ON",
                   path, (int)o->flush);
        return NULL;
    }
    sqlite_saver *s = sst__calloc(1, sizeof *s);
    if (s == NULL || (s->path = sst__strndup(path, strlen(path))) == NULL) {
        sst__free(s);
        sst__enomem(err);
        return NULL;
    }
    s->conn = sst__sqlite_db_attach(shared, path, 0, "checkpoint store", &s->db, &s->mu, err);
    if (s->conn == NULL) {
        sst__free(s->path);
        sst__free(s);
        return NULL;
    }
    sst__sq_group_init(s);
    s->lease_ms = o->lease_ms > 0 ? (uint64_t)o->lease_ms : 30000;
    s->flush_on = o->flush == SST_FLUSH_ON;
    size_t cap = (size_t)256 << 20;
    s->max_record_bytes =
        o->max_record_bytes > 0 && o->max_record_bytes < cap ? o->max_record_bytes : cap;
    return s;
}

sqlite_saver *sst__sq_open(const char *path, sst_sqlite_db *shared, const sst_sqlite_opts *o,
                           sst_error *err) {
    sqlite_saver *s = saver_new(path, shared, o, err);
    if (s == NULL) {
        return NULL;
    }
    pthread_mutex_lock(s->mu);
    sst_code code = open_file(s, o, err);
    if (code == SST_OK &&
        !sst__sq_exec(s, "CREATE TEMP TABLE IF NOT EXISTS sweep(blob TEXT PRIMARY KEY)", err)) {
        code = sst__code(err);
    }
    for (int i = 0; code == SST_OK && i < S_COUNT; i++) {
        if (sqlite3_prepare_v2(s->db, k_sql[i], -1, &s->st[i], NULL) != SQLITE_OK) {
            code = sst__sq_db_error(s, err, "preparing statements");
        }
    }
    pthread_mutex_unlock(s->mu);
    if (code != SST_OK) {
        sst__sq_destroy(s);
        return NULL;
    }
    return s;
}

/* The saver of both opens: on @p shared when not NULL, else on its own connection. */
static sst_checkpointer *saver_open(const char *path, sst_sqlite_db *shared,
                                    const sst_sqlite_opts *opts, sst_error *err) {
    sst_sqlite_opts defaults;
    if (opts == NULL) {
        sst_sqlite_opts_init(&defaults);
        opts = &defaults;
    }
    sqlite_saver *s = sst__sq_open(path, shared, opts, err);
    if (s == NULL) {
        return NULL;
    }
    static const sst_checkpointer_ops ops = {
        .size = sizeof(sst_checkpointer_ops),
        .flags = SST_SAVER_LOCK_IN_PUT, /* the lock in a put's transaction: sqlite_records.c */
        .destroy = sst__sq_destroy,
        .put = sst__sq_put,
        .put_writes = sst__sq_put_writes,
        .get = sst__sq_get,
        .list = sst__sq_list,
        .lock = sst__sq_lock,
        .unlock = sst__sq_unlock,
        .threads = sst__sq_threads,
        .thread_get = sst__sq_thread_get,
        .thread_put = sst__sq_thread_put,
        .copy_thread = sst__sq_copy_thread,
        .delete_thread = sst__sq_delete_thread,
        .prune = sst__sq_prune,
    };
    sst_checkpointer *cp = sst_checkpointer_new(&ops, s, err);
    if (cp == NULL) {
        sst__sq_destroy(s);
    }
    return cp;
}

sst_checkpointer *sst_sqlite_saver_open(const char *path, const sst_sqlite_opts *opts,
                                        sst_error *err) {
    SST__ERR_LOCAL(err);
    if (path == NULL) {
        sst__error(err, SST_EINVAL, "checkpoint store: NULL path");
        return NULL;
    }
    return saver_open(path, NULL, opts, err);
}

sst_checkpointer *sst_sqlite_saver_open_db(sst_sqlite_db *db, const sst_sqlite_opts *opts,
                                           sst_error *err) {
    SST__ERR_LOCAL(err);
    if (db == NULL) {
        sst__error(err, SST_EINVAL, "checkpoint store: NULL database");
        return NULL;
    }
    return saver_open(sst_sqlite_db_path(db), db, opts, err);
}
