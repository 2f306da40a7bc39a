/* SPDX-License-Identifier: MIT */
/*
 * The SQLite store (LangGraph's SqliteStore): opening a file, its schema,
 * and the in-memory index of every item's namespace, key and vectors, loaded
 * when the file is opened and kept in step with it (sqlite_int.h).
 *
 * A file is checked before anything is written to it: not SQLite, another
 * application's database (application_id), a newer store schema, or vectors
 * of another size are errors naming the file. A new file gets the
 * checkpointer's application_id, so that either may be opened first on it.
 * Other processes' writes are noticed through PRAGMA data_version (cheap,
 * checked at every call) and the store's generation counter, and make the
 * next call reload the index.
 */
#include <stdio.h>
#include <string.h>

#include "sqlite_int.h"

static const char *const k_sql[Q_COUNT] = {
    [Q_BEGIN] = "BEGIN",
    [Q_BEGIN_WRITE] = "BEGIN IMMEDIATE",
    [Q_COMMIT] = "COMMIT",
    [Q_ROLLBACK] = "ROLLBACK",
    [Q_DATA_VERSION] = "PRAGMA data_version",
    [Q_GENERATION] = "SELECT value FROM store_meta WHERE key = 'generation'",
    [Q_SET_GENERATION] = "UPDATE store_meta SET value = ? WHERE key = 'generation'",
    [Q_UPSERT] = "INSERT INTO store_items(ns, key, value, created_us, updated_us, expires_us,"
                 " ttl_minutes, seq) VALUES(?,?,?,?,?,?,?,?) ON CONFLICT(ns, key) DO UPDATE SET"
                 " value = excluded.value, updated_us = excluded.updated_us,"
                 " expires_us = excluded.expires_us, ttl_minutes = excluded.ttl_minutes,"
                 " seq = excluded.seq RETURNING id",
    [Q_DEL_VECTORS] = "DELETE FROM store_vectors WHERE item = ?",
    [Q_ADD_VECTOR] = "INSERT INTO store_vectors(item, n, vector) VALUES(?,?,?)",
    [Q_FIND] = "SELECT id FROM store_items WHERE ns = ? AND key = ?",
    [Q_DEL_ITEM] = "DELETE FROM store_items WHERE id = ?",
    [Q_GET] = "SELECT id, value, created_us, updated_us, expires_us, ttl_minutes"
              " FROM store_items WHERE ns = ? AND key = ?",
    [Q_ROW] = "SELECT ns, key, value, created_us, updated_us, expires_us, ttl_minutes"
              " FROM store_items WHERE id = ?",
    [Q_REFRESH] = "UPDATE store_items SET expires_us = ?1 +"
                  " CAST(round(ttl_minutes * 60000000.0) AS INTEGER)"
                  " WHERE id = ?2 AND ttl_minutes IS NOT NULL",
    [Q_EXPIRED] = "SELECT id, ns, key FROM store_items"
                  " WHERE expires_us IS NOT NULL AND expires_us <= ?",
    [Q_LIVE_NS] = "SELECT DISTINCT ns FROM store_items WHERE expires_us IS NULL OR expires_us > ?",
    [Q_LOAD] = "SELECT i.id, i.ns, i.key, i.seq, v.vector FROM store_items i"
               " LEFT JOIN store_vectors v ON v.item = i.id ORDER BY i.id, v.n",
    [Q_LOAD_KEYS] = "SELECT id, ns, key, seq, NULL FROM store_items ORDER BY id",
};

static const char k_schema[] =
    "CREATE TABLE store_meta(key TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;"
    "CREATE TABLE store_items(id INTEGER PRIMARY KEY, ns TEXT NOT NULL, key TEXT NOT NULL,"
    " value TEXT NOT NULL, created_us INTEGER NOT NULL, updated_us INTEGER NOT NULL,"
    " expires_us INTEGER, ttl_minutes REAL, seq INTEGER NOT NULL, UNIQUE(ns, key));"
    "CREATE INDEX store_items_expires ON store_items(expires_us) WHERE expires_us IS NOT NULL;"
    "CREATE TABLE store_vectors(item INTEGER NOT NULL, n INTEGER NOT NULL,"
    " vector BLOB NOT NULL, PRIMARY KEY(item, n)) WITHOUT ROWID;"
    "INSERT INTO store_meta(key, value) VALUES('schema', 1), ('generation', 0);";

/* ---- helpers ---- */

sst_code sst__sqs_error(sqstore *s, sst_error *err, const char *what) {
    return sst__sqlite_error(s->db, "store", s->path, SST_EBUSY, what, err);
}

/* Inside sst_sqlite_db_begin: the transaction statements as savepoints of that one. */
static bool nested_tx(sqstore *s, int q, const char *what, sst_error *err) {
    int tx = q == Q_COMMIT ? SST__TX_COMMIT : q == Q_ROLLBACK ? SST__TX_ROLLBACK : SST__TX_BEGIN;
    if (!sst__sqlite_tx(s->conn, tx)) {
        sst__sqs_error(s, err, what);
        return false;
    }
    return true;
}

bool sst__sqs_run(sqstore *s, int q, const char *what, sst_error *err) {
    if ((q == Q_BEGIN || q == Q_BEGIN_WRITE || q == Q_COMMIT || q == Q_ROLLBACK) &&
        sst__sqlite_db_batch(s->conn)) {
        return nested_tx(s, q, what, err);
    }
    int rc = sqlite3_step(s->q[q]);
    bool ok = rc == SQLITE_DONE || rc == SQLITE_ROW;
    if (!ok) {
        sst__sqs_error(s, err, what);
    }
    sqlite3_reset(s->q[q]);
    sqlite3_clear_bindings(s->q[q]);
    return ok;
}

sst_code sst__sqs_generation(sqstore *s, int64_t *gen, sst_error *err) {
    sqlite3_stmt *st = s->q[Q_GENERATION];
    int rc = sqlite3_step(st);
    sst_code code = rc == SQLITE_ROW ? SST_OK : sst__sqs_error(s, err, "reading the generation");
    *gen = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    sqlite3_reset(st);
    return code;
}

size_t sst__sqs_split_ns(const char *joined, char *buf, const char **labels, size_t max) {
    size_t len = strlen(joined), n = 0;
    memcpy(buf, joined, len + 1);
    char *at = buf;
    while (n < max) {
        labels[n++] = at;
        char *dot = strchr(at, '.');
        if (dot == NULL) {
            break;
        }
        *dot = '\0';
        at = dot + 1;
    }
    return n;
}

bool sst__sqs_big_endian(void) {
    const uint16_t one = 1;
    unsigned char b;
    memcpy(&b, &one, 1);
    return b == 0;
}

/* Reverses the bytes of each float of @p p (big-endian hosts only). */
static void swap_floats(void *p, size_t n) {
    unsigned char *b = p;
    for (size_t i = 0; i < n; i++, b += 4) {
        unsigned char t0 = b[0], t1 = b[1];
        b[0] = b[3];
        b[1] = b[2];
        b[2] = t1;
        b[3] = t0;
    }
}

void sst__sqs_floats_in(float *dst, const void *src, size_t n) {
    memcpy(dst, src, n * sizeof(float));
    if (sst__sqs_big_endian()) {
        swap_floats(dst, n);
    }
}

void sst__sqs_floats_out(void *dst, const float *src, size_t n) {
    memcpy(dst, src, n * sizeof(float));
    if (sst__sqs_big_endian()) {
        swap_floats(dst, n);
    }
}

static bool exec(sqstore *s, const char *sql, const char *what, sst_error *err) {
    return sst__sqlite_exec(s->db, sql, "store", s->path, SST_EBUSY, what, err);
}

/* ---- the in-memory index ---- */

/* The item being gathered while loading: its row and vectors. */
typedef struct loader {
    sqstore *s;
    bool have;
    int64_t id, seq;
    char *ns, *key; /* owned copies */
    float *vecs;    /* n rows of dims floats */
    size_t n, cap;
} loader;

/* Adds the gathered item to the index. */
static sst_code load_flush(loader *l, sst_error *err) {
    if (!l->have) {
        return SST_OK;
    }
    l->have = false;
    size_t len = strlen(l->ns), max = 1;
    for (size_t i = 0; i < len; i++) {
        max += l->ns[i] == '.';
    }
    char *buf = sst__malloc(len + 1);
    const char **labels = sst__malloc(max * sizeof *labels);
    sst_code rc = buf == NULL || labels == NULL ? sst__enomem(err) : SST_OK;
    sst__ixput p;
    if (rc == SST_OK) {
        size_t n = sst__sqs_split_ns(l->ns, buf, labels, max);
        rc = sst__index_prepare(&l->s->ix, labels, n, l->key, l->n, &p, err);
    }
    if (rc == SST_OK) {
        uint32_t slot = sst__index_commit(&l->s->ix, &p, l->vecs, (uint64_t)l->seq);
        l->s->ix.items[slot].rowid = l->id;
    }
    sst__free(buf);
    sst__free(labels);
    sst__free(l->ns);
    sst__free(l->key);
    l->ns = l->key = NULL;
    l->n = 0;
    return rc;
}

/* Starts gathering the item of the current row. */
static sst_code load_start(loader *l, sqlite3_stmt *st, sst_error *err) {
    l->have = true;
    l->id = sqlite3_column_int64(st, 0);
    l->seq = sqlite3_column_int64(st, 3);
    const char *ns = (const char *)sqlite3_column_text(st, 1);
    const char *key = (const char *)sqlite3_column_text(st, 2);
    l->ns = ns != NULL ? sst__strndup(ns, strlen(ns)) : NULL;
    l->key = key != NULL ? sst__strndup(key, strlen(key)) : NULL;
    return l->ns != NULL && l->key != NULL ? SST_OK : sst__enomem(err);
}

/* Adds the current row's vector to the gathered item. */
static sst_code load_vector(loader *l, sqlite3_stmt *st, sst_error *err) {
    size_t dims = l->s->ix.dims;
    const void *blob = sqlite3_column_blob(st, 4);
    size_t bytes = (size_t)sqlite3_column_bytes(st, 4);
    if (blob == NULL || dims == 0) {
        return SST_OK;
    }
    if (bytes != dims * sizeof(float)) {
        return sst__error(err, SST_EIO,
                          "store '%s': item '%.60s' in '%.60s' has %zu-dim vectors; the store was "
                          "opened with index dims %zu",
                          l->s->path, l->key, l->ns, bytes / sizeof(float), dims);
    }
    if (l->n == l->cap) {
        size_t cap = l->cap > 0 ? 2 * l->cap : 4;
        float *v = sst__realloc(l->vecs, cap * dims * sizeof(float));
        if (v == NULL) {
            return sst__enomem(err);
        }
        l->vecs = v;
        l->cap = cap;
    }
    sst__sqs_floats_in(l->vecs + l->n * dims, blob, dims);
    l->n++;
    return SST_OK;
}

/* Loads every item into the emptied index, within the caller's transaction. */
static sst_code load_index(sqstore *s, sst_error *err) {
    sst__index_clear(&s->ix);
    bool ok = true;
    /* One allocation for all the vectors, not a doubling series of copies. */
    int64_t n =
        s->ix.dims > 0 ? sst__sqlite_int(s->db, "SELECT count(*) FROM store_vectors", &ok) : 0;
    if (ok && n > 0 && !sst__vecs_reserve(&s->ix.vecs, (size_t)n)) {
        return sst__enomem(err);
    }
    sqlite3_stmt *st = s->q[s->ix.dims > 0 ? Q_LOAD : Q_LOAD_KEYS];
    loader l = {.s = s};
    sst_code rc = SST_OK;
    int step;
    while (rc == SST_OK && (step = sqlite3_step(st)) == SQLITE_ROW) {
        if (!l.have || sqlite3_column_int64(st, 0) != l.id) {
            rc = load_flush(&l, err);
            rc = rc == SST_OK ? load_start(&l, st, err) : rc;
        }
        rc = rc == SST_OK ? load_vector(&l, st, err) : rc;
    }
    if (rc == SST_OK && step != SQLITE_DONE) {
        rc = sst__sqs_error(s, err, "loading the items");
    }
    sqlite3_reset(st);
    rc = rc == SST_OK ? load_flush(&l, err) : rc;
    sst__free(l.ns);
    sst__free(l.key);
    sst__free(l.vecs);
    if (rc != SST_OK) {
        sst__index_clear(&s->ix);
        s->generation = -1; /* reload at the next call */
    }
    return rc;
}

sst_code sst__sqs_sync_locked(sqstore *s, int64_t *gen, sst_error *err) {
    sst_code rc = sst__sqs_generation(s, gen, err);
    if (rc == SST_OK && *gen != s->generation) {
        rc = load_index(s, err);
        s->generation = rc == SST_OK ? *gen : -1;
    }
    return rc;
}

/* The current PRAGMA data_version. */
static sst_code data_version(sqstore *s, int64_t *dv, sst_error *err) {
    sqlite3_stmt *st = s->q[Q_DATA_VERSION];
    int rc = sqlite3_step(st);
    *dv = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    sqlite3_reset(st);
    return rc == SQLITE_ROW ? SST_OK : sst__sqs_error(s, err, "reading the data version");
}

/* Reloads the index in a read transaction of its own (lk written, mu held). */
static sst_code reload(sqstore *s, int64_t dv, sst_error *err) {
    if (!sst__sqs_run(s, Q_BEGIN, "beginning a read", err)) {
        return sst__code(err);
    }
    int64_t gen;
    sst_code rc = sst__sqs_sync_locked(s, &gen, err);
    if (!sst__sqs_run(s, rc == SST_OK ? Q_COMMIT : Q_ROLLBACK, "ending a read", err)) {
        rc = rc == SST_OK ? sst__code(err) : rc;
    }
    if (rc == SST_OK) {
        s->data_version = dv;
    }
    return rc;
}

sst_code sst__sqs_in_batch(sqstore *s, sst_error *err) {
    return sst__error(err, SST_EINVAL,
                      "store '%s': cannot be used inside sst_sqlite_db_begin .. commit (the store "
                      "writes in transactions of its own)",
                      s->path);
}

sst_code sst__sqs_fresh(sqstore *s, sst_error *err) {
    if (sst__sqlite_db_batch_mine(s->conn)) {
        return sst__sqs_in_batch(s, err);
    }
    pthread_mutex_lock(s->mu);
    int64_t dv, gen = 0;
    sst_code rc = data_version(s, &dv, err);
    bool stale = false;
    if (rc == SST_OK && dv != s->data_version) {
        rc = sst__sqs_generation(s, &gen, err);
        stale = rc == SST_OK && gen != s->generation;
        if (rc == SST_OK && !stale) {
            s->data_version = dv;
        }
    } else if (rc == SST_OK) {
        stale = s->generation < 0; /* a failed load */
    }
    pthread_mutex_unlock(s->mu);
    if (rc != SST_OK || !stale) {
        return rc;
    }
    pthread_rwlock_wrlock(&s->lk);
    pthread_mutex_lock(s->mu);
    rc = reload(s, dv, err);
    pthread_mutex_unlock(s->mu);
    pthread_rwlock_unlock(&s->lk);
    return rc;
}

/* ---- opening ---- */

/* The checks of a file that has tables: ours, and a store schema this build reads. */
static sst_code check_file(sqstore *s, bool *has_store, sst_error *err) {
    bool ok;
    int64_t app = sst__sqlite_int(s->db, "PRAGMA application_id", &ok);
    if (!ok || app != SST__STORE_SQLITE_APP_ID) {
        return sst__error(err, SST_EIO,
                          "store '%s' is not a superstep database (application_id 0x%08llx, "
                          "expected 0x%08x)",
                          s->path, (unsigned long long)app, SST__STORE_SQLITE_APP_ID);
    }
    *has_store = sst__sqlite_int(s->db,
                                 "SELECT count(*) FROM sqlite_master"
                                 " WHERE type = 'table' AND name = 'store_meta'",
                                 &ok) > 0;
    if (!*has_store) {
        return SST_OK;
    }
    int64_t schema =
        sst__sqlite_int(s->db, "SELECT value FROM store_meta WHERE key = 'schema'", &ok);
    if (!ok) {
        return sst__error(err, SST_EIO, "store '%s' has a damaged store_meta table: %s", s->path,
                          sqlite3_errmsg(s->db));
    }
    if (schema > SST_STORE_SQLITE_SCHEMA_VERSION) {
        return sst__error(err, SST_EIO,
                          "store '%s' has store schema version %lld, newer than this build "
                          "supports (%d)",
                          s->path, (long long)schema, SST_STORE_SQLITE_SCHEMA_VERSION);
    }
    return SST_OK;
}

/* Makes the store tables in one IMMEDIATE transaction (another process may race us). */
static sst_code create_schema(sqstore *s, sst_error *err) {
    if (!exec(s, "BEGIN IMMEDIATE", "creating the store tables", err)) {
        return sst__code(err);
    }
    bool ok;
    int64_t tables = sst__sqlite_int(s->db, "SELECT count(*) FROM sqlite_master", &ok);
    bool has = ok && sst__sqlite_int(s->db,
                                     "SELECT count(*) FROM sqlite_master"
                                     " WHERE type = 'table' AND name = 'store_meta'",
                                     &ok) > 0;
    char sql[64];
    snprintf(sql, sizeof sql, "PRAGMA application_id=%d", SST__STORE_SQLITE_APP_ID);
    ok = ok && (has || ((tables > 0 || exec(s, sql, "setting the application id", err)) &&
                        exec(s, k_schema, "creating the store tables", err)));
    if (!ok || !exec(s, "COMMIT", "creating the store tables", err)) {
        sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
        return sst__error_unless_set(err, SST_EIO, "store '%s': creating the store tables: %s",
                                     s->path, sqlite3_errmsg(s->db));
    }
    return SST_OK;
}

static sst_code prepare_statements(sqstore *s, sst_error *err) {
    for (int i = 0; i < Q_COUNT; i++) {
        if (sqlite3_prepare_v2(s->db, k_sql[i], -1, &s->q[i], NULL) != SQLITE_OK) {
            return sst__sqs_error(s, err, "preparing the statements");
        }
    }
    return SST_OK;
}

static sst_code open_file(sqstore *s, sst_error *err) {
    sst__sqlite_busy(s->db, 5000);
    bool ok, has_store = false;
    int64_t tables = sst__sqlite_int(s->db, "SELECT count(*) FROM sqlite_master", &ok);
    if (!ok) {
        return sst__error(err, SST_EIO, "store '%s' is not a usable SQLite database: %s", s->path,
                          sqlite3_errmsg(s->db));
    }
    s->read_only = sqlite3_db_readonly(s->db, "main") == 1;
    sst_code rc = tables > 0 ? check_file(s, &has_store, err) : SST_OK;
    if (rc == SST_OK && !s->read_only &&
        (!exec(s, "PRAGMA journal_mode=WAL", "setting the journal mode", err) ||
         !exec(s, "PRAGMA synchronous=NORMAL", "setting synchronous", err))) {
        rc = sst__code(err);
    }
    if (rc == SST_OK && !has_store) {
        rc = s->read_only ? sst__error(err, SST_EIO,
                                       "store '%s' is read-only and holds no store tables", s->path)
                          : create_schema(s, err);
    }
    rc = rc == SST_OK ? prepare_statements(s, err) : rc;
    int64_t dv;
    rc = rc == SST_OK ? data_version(s, &dv, err) : rc;
    s->generation = -1;
    return rc == SST_OK ? reload(s, dv, err) : rc;
}

void sst__sqs_destroy(void *self) {
    sqstore *s = self;
    for (int i = 0; i < Q_COUNT; i++) {
        sqlite3_finalize(s->q[i]);
    }
    sst_sqlite_db_release(s->conn);
    sst__index_free(&s->ix);
    pthread_rwlock_destroy(&s->lk);
    sst__free(s->path);
    sst__free(s);
}

/* The store of both opens: on @p shared when not NULL, else on its own connection. */
static sst_store *store_open(const char *path, sst_sqlite_db *shared, const sst_store_opts *o,
                             sst_error *err) {
    sst_store_opts defaults;
    sst_store_opts_init(&defaults);
    o = o != NULL ? o : &defaults;
    if (sst__store_check_opts(o, err) != SST_OK) {
        return NULL;
    }
    sqstore *s = sst__calloc(1, sizeof *s);
    if (s == NULL || (s->path = sst__strndup(path, strlen(path))) == NULL) {
        sst__free(s);
        sst__enomem(err);
        return NULL;
    }
    s->conn = sst__sqlite_db_attach(shared, path, SQLITE_OPEN_URI, "store", &s->db, &s->mu, err);
    if (s->conn == NULL) {
        sst__free(s->path);
        sst__free(s);
        return NULL;
    }
    pthread_rwlock_init(&s->lk, NULL);
    sst__index_init(&s->ix, o->index.dims);
    s->threads = sst__store_threads(o->search_threads);
    pthread_mutex_lock(s->mu);
    sst_code rc = open_file(s, err);
    pthread_mutex_unlock(s->mu);
    if (rc != SST_OK) {
        sst__sqs_destroy(s);
        return NULL;
    }
    return sst__store_wrap(&sst__sqs_ops, s, o, err);
}

sst_store *sst_sqlite_store_new(const char *path, const sst_store_opts *o, sst_error *err) {
    if (path == NULL || path[0] == '\0') {
        sst__error(err, SST_EINVAL, "sqlite store: the path must be a non-empty string");
        return NULL;
    }
    return store_open(path, NULL, o, err);
}

sst_store *sst_sqlite_store_new_db(sst_sqlite_db *db, const sst_store_opts *o, sst_error *err) {
    if (db == NULL) {
        sst__error(err, SST_EINVAL, "sqlite store: NULL database");
        return NULL;
    }
    return store_open(sst_sqlite_db_path(db), db, o, err);
}
