/* SPDX-License-Identifier: MIT */
/*
 * The SQLite node cache (LangGraph's SqliteCache, include/superstep/cache.h):
 * table sst_cache of a file that the checkpointer and the store may share.
 * One connection under one mutex (its own sst_sqlite_db, common/sqlite_db.c,
 * as every SQLite backend), WAL, statements prepared once. Values are
 * kept as JSON text with their deadline in Unix seconds (wall clock, so
 * another process reads the same deadlines).
 *
 * Like the store, a new file gets the checkpointer's application_id, so any
 * of the three may be opened first on it; a file with tables and another
 * application_id belongs to something else and is refused. A row this build
 * cannot read (not JSON, the wrong type) is a miss, never an error: the
 * cache is an optimisation and the next set replaces the row.
 */
#include <limits.h>
#include <stdio.h>
#include <time.h>

#include "sqlite_int.h"
#include "superstep/cache.h"
#include "superstep/retry.h"

enum { CQ_GET, CQ_SET, CQ_DROP_EXPIRED, CQ_CLEAR_NS, CQ_CLEAR_ALL, CQ_COUNT };

static const char *const k_cache_sql[CQ_COUNT] = {
    [CQ_GET] = "SELECT value, expires FROM sst_cache WHERE ns = ?1 AND key = ?2",
    [CQ_SET] = "INSERT INTO sst_cache(ns, key, value, expires) VALUES(?1, ?2, ?3, ?4)"
               " ON CONFLICT(ns, key) DO UPDATE SET value = excluded.value,"
               " expires = excluded.expires",
    /* Only while still expired: another process may have stored it again meanwhile. */
    [CQ_DROP_EXPIRED] = "DELETE FROM sst_cache WHERE ns = ?1 AND key = ?2"
                        " AND expires IS NOT NULL AND expires <= ?3",
    [CQ_CLEAR_NS] = "DELETE FROM sst_cache WHERE ns = ?1",
    [CQ_CLEAR_ALL] = "DELETE FROM sst_cache",
};

static const char k_cache_schema[] =
    "CREATE TABLE IF NOT EXISTS sst_cache(ns TEXT NOT NULL, key TEXT NOT NULL,"
    " value TEXT /* JSON */, expires REAL /* Unix seconds, NULL: never */,"
    " PRIMARY KEY(ns, key)) WITHOUT ROWID";

#define CACHE_BUSY_TIMEOUT_MS 5000
/* The backoff of opening a busy file (open_file): 2 ms doubling up to 100 ms, no jitter. */
static const sst_retry_policy k_open_retry = {
    .max_attempts = 0, /* unused: the busy timeout bounds the attempts */
    .initial_interval_s = 0.002,
    .backoff_factor = 2.0,
    .max_interval_s = 0.1,
    .jitter = false,
};

typedef struct sqlite_cache {
    sst_sqlite_db *conn;        /* owned reference: the connection and its mutex */
    sqlite3 *db;                /* conn's handle (SQLITE_OPEN_NOMUTEX): only used under mu */
    pthread_mutex_t *mu;        /* conn's (recursive) mutex */
    char *path;                 /* owned, for messages */
    sqlite3_stmt *st[CQ_COUNT]; /* protected by mu */
} sqlite_cache;

static double unix_now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static bool last_was_busy(const sqlite_cache *s) {
    int c = sqlite3_extended_errcode(s->db) & 0xff;
    return c == SQLITE_BUSY || c == SQLITE_LOCKED;
}

/* Fills err with "cache 'path': what: sqlite's message": SST_ENOMEM or SST_EIO (the open
 * retries a busy file itself; a busy get or put is an I/O error to the caller). */
static sst_code db_error(const sqlite_cache *s, sst_error *err, const char *what) {
    return sst__sqlite_error(s->db, "cache", s->path, SST_EIO, what, err);
}

static bool exec(sqlite_cache *s, const char *sql, const char *what, sst_error *err) {
    return sst__sqlite_exec(s->db, sql, "cache", s->path, SST_EIO, what, err);
}

/* ---- opening ---- */

/* Makes the table in one IMMEDIATE transaction (another process may be making the file). */
static sst_code create_table(sqlite_cache *s, sst_error *err) {
    static const char what[] = "creating table sst_cache";
    if (!exec(s, "BEGIN IMMEDIATE", what, err)) {
        return sst__code(err);
    }
    bool ok;
    int64_t tables = sst__sqlite_int(s->db, "SELECT count(*) FROM sqlite_master", &ok);
    char sql[64];
    snprintf(sql, sizeof sql, "PRAGMA application_id=%d", SST__SQLITE_APP_ID);
    ok = ok && (tables > 0 || exec(s, sql, what, err)) && exec(s, k_cache_schema, what, err) &&
         exec(s, "COMMIT", what, err);
    if (!ok) {
        sst_code rc = sst__error_unless_set(err, SST_EIO, "cache '%s': %s: %s", s->path, what,
                                            sqlite3_errmsg(s->db));
        sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
        return rc;
    }
    return SST_OK;
}

/* One attempt at checking and preparing the file; the caller retries while it is busy. */
static sst_code prepare_file(sqlite_cache *s, sst_error *err) {
    bool ok;
    int64_t tables = sst__sqlite_int(s->db, "SELECT count(*) FROM sqlite_master", &ok);
    if (!ok) {
        return sst__error(err, SST_EIO, "cache '%s' is not a usable SQLite database: %s", s->path,
                          sqlite3_errmsg(s->db));
    }
    int64_t app =
        tables > 0 ? sst__sqlite_int(s->db, "PRAGMA application_id", &ok) : SST__SQLITE_APP_ID;
    if (!ok || app != SST__SQLITE_APP_ID) {
        return sst__error(err, SST_EIO,
                          "cache '%s' is not a superstep database (application_id 0x%08llx, "
                          "expected 0x%08x)",
                          s->path, (unsigned long long)app, SST__SQLITE_APP_ID);
    }
    if (!exec(s, "PRAGMA journal_mode=WAL", "setting the journal mode", err) ||
        !exec(s, "PRAGMA synchronous=NORMAL", "setting synchronous", err)) {
        return sst__code(err);
    }
    return create_table(s, err);
}

/* Checks and prepares the connection's file (sst__sqlite_backend_open calls it holding
 * s->mu). */
static sst_code open_file(void *self, sst_error *err) {
    sqlite_cache *s = self;
    sst__sqlite_busy(s->db, CACHE_BUSY_TIMEOUT_MS); /* before anything touches the file */
    /* The busy handler does not cover every step (a journal mode change may fail at
     * once while another connection opens the file): retry those with backoff, 2 ms
     * doubling up to 100 ms (k_open_retry), for a second more than the busy timeout. */
    sst_code rc = SST_OK;
    uint64_t waited = 0;
    for (unsigned attempt = 1;; attempt++) {
        sst_error failed;
        sst_error_clear(&failed);
        rc = prepare_file(s, &failed);
        if (rc == SST_OK || !last_was_busy(s) || waited >= CACHE_BUSY_TIMEOUT_MS + 1000) {
            if (rc != SST_OK && err != NULL) {
                *err = failed;
            }
            break;
        }
        uint64_t pause = sst_retry_policy_delay_ms(&k_open_retry, attempt, 0);
        sst__sleep_ms(pause);
        waited += pause;
    }
    for (int i = 0; rc == SST_OK && i < CQ_COUNT; i++) {
        if (sqlite3_prepare_v2(s->db, k_cache_sql[i], -1, &s->st[i], NULL) != SQLITE_OK) {
            rc = db_error(s, err, "preparing statements");
        }
    }
    return rc;
}

static void sq_destroy(void *self) {
    sqlite_cache *s = self;
    if (s == NULL) {
        return;
    }
    for (int i = 0; i < CQ_COUNT; i++) {
        sqlite3_finalize(s->st[i]);
    }
    sst_sqlite_db_release(s->conn); /* closes the connection: its statements are finalized */
    sst__free(s->path);
    sst__free(s);
}

/* ---- operations ---- */

/* Runs statement @p st (bound) to its end and resets it, so it holds no read transaction. */
static sst_code run(sqlite_cache *s, sqlite3_stmt *st, const char *what, sst_error *err) {
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    }
    sst_code code = rc == SQLITE_DONE ? SST_OK : db_error(s, err, what);
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    return code;
}

static void bind_key(sqlite3_stmt *st, const char *ns, const char *key) {
    sqlite3_bind_text(st, 1, ns, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, key, -1, SQLITE_STATIC);
}

/*
 * Reads the row of (ns, key) under s->mu: *text is a copy of its JSON (NULL
 * for a miss, an expired row or one without text). An expired row is deleted.
 */
static sst_code read_row(sqlite_cache *s, const char *ns, const char *key, char **text, size_t *len,
                         sst_error *err) {
    sqlite3_stmt *st = s->st[CQ_GET];
    bind_key(st, ns, key);
    int rc = sqlite3_step(st);
    sst_code code = rc == SQLITE_ROW || rc == SQLITE_DONE ? SST_OK : db_error(s, err, "get");
    double now = unix_now_s();
    bool expired = false;
    if (rc == SQLITE_ROW) {
        expired = sqlite3_column_type(st, 1) != SQLITE_NULL && sqlite3_column_double(st, 1) <= now;
        const unsigned char *v = sqlite3_column_text(st, 0);
        *len = (size_t)sqlite3_column_bytes(st, 0);
        if (!expired && v != NULL && (*text = sst__strndup((const char *)v, *len)) == NULL) {
            code = sst__enomem(err);
        }
    }
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    if (expired) {
        st = s->st[CQ_DROP_EXPIRED];
        bind_key(st, ns, key);
        sqlite3_bind_double(st, 3, now);
        (void)run(s, st, "dropping an expired entry", NULL); /* a miss either way */
    }
    return code;
}

static sst_code sq_get(void *self, const char *ns, const char *key, sst_value **out,
                       sst_error *err) {
    sqlite_cache *s = self;
    char *text = NULL;
    size_t len = 0;
    pthread_mutex_lock(s->mu);
    sst_code rc = read_row(s, ns, key, &text, &len, err);
    pthread_mutex_unlock(s->mu);
    if (text != NULL) {
        /* A row that is not JSON (damaged, or written by something else) is a miss. */
        sst_json_read_opts o;
        sst_json_read_opts_init(&o);
        o.max_depth = 4200; /* as checkpoint payloads: deeper than the default 512 */
        *out = sst_json_read(text, len, &o, NULL);
        sst__free(text);
    }
    return rc;
}

static sst_code sq_set(void *self, const char *ns, const char *key, const sst_value *value,
                       double ttl_s, sst_error *err) {
    SST__ERR_LOCAL(err); /* sst__code reads back why the writer failed */
    sqlite_cache *s = self;
    size_t len = 0;
    char *text = sst_json_write(value, SST_JSON_COMPACT, &len, err);
    if (text == NULL) {
        return sst__code(err);
    }
    pthread_mutex_lock(s->mu);
    sqlite3_stmt *st = s->st[CQ_SET];
    bind_key(st, ns, key);
    sqlite3_bind_text64(st, 3, text, len, SQLITE_STATIC, SQLITE_UTF8);
    if (ttl_s > 0) {
        sqlite3_bind_double(st, 4, unix_now_s() + ttl_s);
    } else {
        sqlite3_bind_null(st, 4);
    }
    sst_code rc = run(s, st, "set", err);
    pthread_mutex_unlock(s->mu);
    sst_free(text);
    return rc;
}

static sst_code sq_clear(void *self, const char *ns, sst_error *err) {
    sqlite_cache *s = self;
    pthread_mutex_lock(s->mu);
    sqlite3_stmt *st = s->st[ns != NULL ? CQ_CLEAR_NS : CQ_CLEAR_ALL];
    if (ns != NULL) {
        sqlite3_bind_text(st, 1, ns, -1, SQLITE_STATIC);
    }
    sst_code rc = run(s, st, "clear", err);
    pthread_mutex_unlock(s->mu);
    return rc;
}

sst_cache *sst_sqlite_cache_open(const char *path, sst_error *err) {
    if (path == NULL || path[0] == '\0') {
        sst__error(err, SST_EINVAL, "sqlite cache: the path must be a non-empty string");
        return NULL;
    }
    sqlite_cache *s = sst__calloc(1, sizeof *s);
    if (s == NULL) {
        sst__enomem(err);
        return NULL;
    }
    if (sst__sqlite_backend_open(NULL, path, 0, "cache", &s->path, &s->conn, &s->db, &s->mu,
                                 open_file, s, err) != SST_OK) {
        sq_destroy(s);
        return NULL;
    }
    static const sst_cache_ops ops = {
        .version = SST_CACHE_OPS_VERSION,
        .destroy = sq_destroy,
        .get = sq_get,
        .set = sq_set,
        .clear = sq_clear,
    };
    sst_cache *c = sst_cache_new(&ops, s, err);
    if (c == NULL) {
        sq_destroy(s);
    }
    return c;
}
