/* SPDX-License-Identifier: MIT */
/*
 * The SQLite saver's records: one row per checkpoint (its typed fields as
 * columns, its payloads as text: "header" holds the next payload, "body" the
 * body, "meta" the metadata, "blobs" the ids of its blobs), one row per
 * checkpoint's pending writes, and the shared blobs (table "chunks"). Every write is one IMMEDIATE
 * transaction, so a checkpoint is all there or not at all after a crash. Payloads are stored as
 * given and never parsed (metadata is, to filter on).
 *
 * Integrity: every checkpoint row carries CRC-32C sums of its header with its
 * columns, of its body and of its metadata; every writes row and every blob
 * a sum of its text. A mismatch on reading is an error naming the thread and
 * checkpoint, never a wrong state. Rows written before schema 3 have no sums
 * (NULL) and are read unchecked.
 *
 * Fencing: a checkpoint is stored only if its parent is still the latest
 * checkpoint of its thread and namespace (or it is a fork), checked inside
 * the same transaction, so two writers on one thread can never fork its
 * history. The head a put compares with is read with a SELECT, or, when this
 * saver committed it itself and nothing has changed a row of the file since
 * (the connection's change count and data_version), taken from memory: a
 * chain of puts on one thread (a long run's supersteps) reads no head.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "sqlite_int.h"

static sst_code too_large(const sqlite_saver *s, const char *what, size_t len, sst_error *err) {
    return sst__error(err, SST_ELIMIT,
                      "checkpoint store '%s': %s of %zu bytes is over the limit of %zu bytes "
                      "a stored record can be read back with; nothing was written",
                      s->path, what, len, s->max_record_bytes);
}

static uint32_t crc_str(uint32_t c, const char *s) {
    return s != NULL ? sst__crc32c(c, s, strlen(s) + 1) : sst__crc32c(c, "", 1);
}

/* Format 1 summed numbers as decimal text, later formats as 8 little-endian bytes. */
static uint32_t crc_text_int(uint32_t c, int64_t v) {
    char num[24];
    int n = snprintf(num, sizeof num, "%" PRId64, v);
    return sst__crc32c(c, num, (size_t)n + 1);
}

static uint32_t crc_int(uint32_t c, int64_t v) {
    unsigned char b[8];
    for (int i = 0; i < 8; i++) {
        b[i] = (unsigned char)((uint64_t)v >> (8 * i));
    }
    return sst__crc32c(c, b, sizeof b);
}

/*
 * Format 1 rows (schema 3) sum thread, id, parent, step and the header;
 * later ones also every typed column except the thread (so a thread copies
 * by SQL) and the status (which put_writes changes), and the metadata.
 */
static uint32_t header_crc(const char *thread, const sst_checkpoint *r, const char *header,
                           size_t len, const sst_payload *meta, const char *blobs) {
    uint32_t c = 0;
    if (r->format <= 1) {
        c = crc_str(c, thread);
    }
    c = crc_str(c, r->id);
    c = crc_str(c, r->parent_id);
    c = r->format <= 1 ? crc_text_int(c, r->step) : crc_int(c, r->step);
    if (r->format > 1) {
        c = crc_str(c, r->ns);
        c = crc_int(c, r->format);
        c = crc_int(c, r->kind);
        c = crc_str(c, r->source);
        c = crc_str(c, r->run_id);
        c = crc_int(c, r->created_at);
        c = meta->data != NULL ? sst__crc32c(c, meta->data, meta->len) : c;
        c = crc_int(c, meta->data != NULL ? (int64_t)meta->len : -1);
        c = crc_str(c, blobs);
    }
    return sst__crc32c(c, header != NULL ? header : "", len);
}

/* ---- writing ---- */

/* SST_ECONFLICT unless @p head (NULL: none) is @p r's parent. */
static sst_code fence(const sst_checkpoint *r, const char *head, sst_error *err) {
    const char *parent = r->parent_id;
    if ((head == NULL) != (parent == NULL) ||
        (head != NULL && parent != NULL && strcmp(head, parent) != 0)) {
        return sst__error(err, SST_ECONFLICT,
                          "thread '%s': checkpoint %s follows %s, but the thread's latest "
                          "checkpoint is now %s (another writer committed first); nothing was "
                          "written",
                          r->thread_id, r->id, parent != NULL ? parent : "nothing (a new thread)",
                          head != NULL ? head : "none");
    }
    return SST_OK;
}

/* PRAGMA data_version: changes when another connection commits (-1 on failure). */
static int64_t data_version(sqlite_saver *s) {
    sqlite3_stmt *st = sst__sq_stmt(s, S_DATA_VERSION);
    int64_t v = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : -1;
    sqlite3_reset(st);
    return v;
}

void sst__sq_head_clear(sqlite_saver *s) {
    sst__free(s->head.buf);
    s->head.buf = NULL;
    s->head.cap = 0;
    s->head.valid = false;
}

/* Room in the head's buffer for @p r's thread, ns and id, made before its transaction so
 * that remembering it after the commit cannot fail. */
static sst_code head_reserve(sqlite_saver *s, const sst_checkpoint *r, sst_error *err) {
    size_t need = strlen(r->thread_id) + strlen(r->ns) + strlen(r->id) + 3;
    if (need <= s->head.cap) {
        return SST_OK;
    }
    char *buf = sst__realloc(s->head.buf, need);
    if (buf == NULL) {
        return sst__enomem(err);
    }
    s->head.buf = buf;
    s->head.cap = need;
    return SST_OK;
}

/*
 * Whether the cached head is @p r's namespace's head now (inside the transaction): this
 * saver committed it, and since then no statement of this connection changed a row
 * (sqlite3_total_changes64 counts every row an INSERT, UPDATE or DELETE of the connection
 * changed, committed or rolled back: another saver or backend on a shared connection, a
 * prune, a delete) and no other connection committed (@p version, PRAGMA data_version,
 * read after BEGIN IMMEDIATE: no other commit can come before ours).
 */
static bool head_cached(const sqlite_saver *s, const sst_checkpoint *r, int64_t version,
                        int64_t changes) {
    return s->head.valid && version >= 0 && version == s->head.version &&
           changes == s->head.changes && strcmp(s->head.buf, r->thread_id) == 0 &&
           strcmp(s->head.buf + s->head.ns_at, r->ns) == 0;
}

/* After @p r's real COMMIT (not a savepoint of a caller's batch): it is its head. The
 * buffer was made large enough by head_reserve. */
static void head_remember(sqlite_saver *s, const sst_checkpoint *r, int64_t version) {
    size_t t = strlen(r->thread_id) + 1, n = strlen(r->ns) + 1, i = strlen(r->id) + 1;
    if (s->head.buf == NULL || t + n + i > s->head.cap) {
        s->head.valid = false;
        return;
    }
    memcpy(s->head.buf, r->thread_id, t);
    memcpy(s->head.buf + t, r->ns, n);
    memcpy(s->head.buf + t + n, r->id, i);
    s->head.ns_at = t;
    s->head.id_at = t + n;
    s->head.changes = sqlite3_total_changes64(s->db);
    s->head.version = version;
    s->head.valid = true;
}

/* SST_ECONFLICT unless @p r may follow the latest checkpoint of its namespace. @p changes:
 * the connection's sqlite3_total_changes64 before the put's own lease row changed. */
static sst_code check_head(sqlite_saver *s, const sst_checkpoint *r, int64_t version,
                           int64_t changes, sst_error *err) {
    if (r->fork) {
        return SST_OK;
    }
    if (head_cached(s, r, version, changes)) {
        s->head_hits++;
        return fence(r, s->head.buf + s->head.id_at, err);
    }
    sqlite3_stmt *st = sst__sq_stmt(s, S_HEAD);
    sqlite3_bind_text(st, 1, r->thread_id, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, r->ns, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
        sst_code code = sst__sq_db_error(s, err, "reading a thread's latest checkpoint");
        sqlite3_reset(st);
        return code;
    }
    sst_code out =
        fence(r, rc == SQLITE_ROW ? (const char *)sqlite3_column_text(st, 0) : NULL, err);
    sqlite3_reset(st);
    return out;
}

static void bind_payload(sqlite3_stmt *st, int i, const sst_payload *p) {
    if (p->data != NULL) {
        sqlite3_bind_text(st, i, p->data, (int)p->len, SQLITE_STATIC);
    } else {
        sqlite3_bind_null(st, i);
    }
}

static void bind_sum(sqlite3_stmt *st, int i, const sst_payload *p) {
    if (p->data != NULL) {
        sqlite3_bind_int64(st, i, sst__crc32c(0, p->data, p->len));
    } else {
        sqlite3_bind_null(st, i);
    }
}

/* Binds text the caller keeps until the statement is reset, or NULL. */
static void bind_static(sqlite3_stmt *st, int i, const char *text) {
    if (text != NULL) {
        sqlite3_bind_text(st, i, text, -1, SQLITE_STATIC);
    } else {
        sqlite3_bind_null(st, i);
    }
}

static bool insert_record(sqlite_saver *s, const sst_checkpoint *r, const char *blobs,
                          sst_error *err) {
    sqlite3_stmt *st = sst__sq_stmt(s, S_PUT);
    bind_static(st, 1, r->thread_id);
    bind_static(st, 2, r->ns);
    bind_static(st, 3, r->id);
    bind_static(st, 4, r->parent_id);
    sqlite3_bind_int64(st, 5, r->step);
    sqlite3_bind_int64(st, 6, r->format);
    sqlite3_bind_int(st, 7, (int)r->kind);
    bind_static(st, 8, r->source);
    bind_static(st, 9, r->run_id);
    sqlite3_bind_int64(st, 10, r->created_at);
    sqlite3_bind_int(st, 11, (int)r->status);
    /* header and body are NOT NULL columns (schema 1): an empty payload is "" */
    sqlite3_bind_text(st, 12, r->next.data != NULL ? r->next.data : "", (int)r->next.len,
                      SQLITE_STATIC);
    sqlite3_bind_text(st, 13, r->body.data != NULL ? r->body.data : "", (int)r->body.len,
                      SQLITE_STATIC);
    bind_payload(st, 14, &r->metadata);
    sqlite3_bind_int64(st, 15,
                       header_crc(r->thread_id, r, r->next.data, r->next.len, &r->metadata, blobs));
    sqlite3_bind_int64(st, 16,
                       sst__crc32c(0, r->body.data != NULL ? r->body.data : "", r->body.len));
    sqlite3_bind_null(st, 17); /* the metadata's sum is in hcrc */
    bind_static(st, 18, blobs);
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    if ((rc & 0xff) == SQLITE_CONSTRAINT) { /* UNIQUE(thread, id) */
        sst__error(err, SST_ECONFLICT,
                   "thread '%s' has a checkpoint %s already; nothing was written", r->thread_id,
                   r->id);
        return false;
    }
    if (rc != SQLITE_DONE) {
        sst__sq_db_error(s, err, "writing a checkpoint");
        return false;
    }
    return true;
}

void sst__sq_known_clear(sqlite_saver *s) {
    for (size_t i = 0; i < s->known.cap; i++) {
        if (s->known.keys[i] != NULL && s->known.keys[i] != SST__MAP_TOMB) {
            sst__free((char *)s->known.keys[i]);
        }
    }
    sst__map_free(&s->known);
    s->known = (sst__strmap){0};
}

/* Inside the transaction (@p v: its data_version): forgets the known blobs if another
 * connection committed since. */
static void known_check_version(sqlite_saver *s, int64_t v) {
    if (v < 0 || v != s->known_version) {
        sst__sq_known_clear(s);
        s->known_version = v;
    }
}

/*
 * Copies of the ids of @p r's blobs not yet known, with room made for them in
 * the known set: made before the record is written, so that remembering them
 * after its commit cannot fail. *ids is NULL when there are none.
 */
static sst_code known_prepare(sqlite_saver *s, const sst_checkpoint *r, char ***ids, size_t *n,
                              sst_error *err) {
    *ids = NULL;
    *n = 0;
    if (r->n_blobs == 0) {
        return SST_OK;
    }
    if (s->known.live > 1000000) {
        sst__sq_known_clear(s); /* a cache: bounded */
    }
    if ((*ids = sst__calloc(r->n_blobs, sizeof **ids)) == NULL ||
        !sst__map_reserve(&s->known, r->n_blobs)) {
        sst__free(*ids);
        *ids = NULL;
        return sst__enomem(err);
    }
    for (size_t i = 0; i < r->n_blobs; i++) {
        if (sst__map_find(&s->known, r->blobs[i].id) != SIZE_MAX) {
            continue;
        }
        if (((*ids)[*n] = sst__strndup(r->blobs[i].id, strlen(r->blobs[i].id))) == NULL) {
            for (size_t k = 0; k < *n; k++) {
                sst__free((*ids)[k]);
            }
            sst__free(*ids);
            *ids = NULL;
            *n = 0;
            return sst__enomem(err);
        }
        (*n)++;
    }
    return SST_OK;
}

/* After the commit (@p ok) remembers the prepared ids, else frees them. */
static void known_finish(sqlite_saver *s, char **ids, size_t n, bool ok) {
    for (size_t i = 0; i < n; i++) {
        if (!ok || sst__map_find(&s->known, ids[i]) != SIZE_MAX ||
            !sst__map_put(&s->known, ids[i], 0)) {
            sst__free(ids[i]); /* (the put cannot fail: room was made) */
        }
    }
    sst__free(ids);
}

/* Stores the record's new blobs and checks that the others are there. */
static sst_code put_blobs(sqlite_saver *s, const sst_checkpoint *r, int64_t version,
                          sst_error *err) {
    if (r->n_blobs > 0) {
        known_check_version(s, version);
    }
    for (size_t i = 0; i < r->n_blobs; i++) {
        const sst_blob *b = &r->blobs[i];
        sqlite3_stmt *st;
        if (b->content.data == NULL && sst__map_find(&s->known, b->id) != SIZE_MAX) {
            continue; /* stored or seen, and no sweep since */
        }
        if (b->content.data == NULL) {
            st = sst__sq_stmt(s, S_HAS_BLOB);
            sst__sq_bind_text(st, 1, b->id);
            int rc = sqlite3_step(st);
            sqlite3_reset(st);
            if (rc == SQLITE_DONE) {
                return sst__error(err, SST_ENOTFOUND,
                                  "checkpoint store '%s': blob %s of checkpoint %s of thread "
                                  "'%s' is not stored (send its content); nothing was written",
                                  s->path, b->id, r->id, r->thread_id);
            }
            if (rc != SQLITE_ROW) {
                return sst__sq_db_error(s, err, "reading a blob");
            }
            continue;
        }
        st = sst__sq_stmt(s, S_PUT_BLOB);
        sst__sq_bind_text(st, 1, b->id);
        bind_payload(st, 2, &b->content);
        bind_sum(st, 3, &b->content);
        if (!sst__sq_step_done(s, st, "writing a blob", err)) {
            return sst__code(err);
        }
    }
    return SST_OK;
}

/* The record's blob ids joined by commas (new), or NULL when it has none. */
static sst_code blob_list(const sst_checkpoint *r, char **out, sst_error *err) {
    *out = NULL;
    size_t len = 0;
    for (size_t i = 0; i < r->n_blobs; i++) {
        len += strlen(r->blobs[i].id) + 1;
    }
    if (len == 0) {
        return SST_OK;
    }
    char *p = *out = sst__malloc(len);
    if (p == NULL) {
        return sst__enomem(err);
    }
    for (size_t i = 0; i < r->n_blobs; i++) {
        size_t n = strlen(r->blobs[i].id);
        memcpy(p, r->blobs[i].id, n);
        p += n;
        *p++ = i + 1 < r->n_blobs ? ',' : '\0';
    }
    return SST_OK;
}

static sst_code check_sizes(const sqlite_saver *s, const sst_checkpoint *r, sst_error *err) {
    size_t big = sst__record_largest(r);
    if (big <= s->max_record_bytes) {
        return SST_OK;
    }
    char what[160];
    snprintf(what, sizeof what, "the checkpoint of thread '%s' at step %lld", r->thread_id,
             (long long)r->step);
    return too_large(s, what, big, err);
}

/* A checkpoint's transaction (put_unit_run under mu; put_unit_finish after its commit). */
typedef struct put_job {
    const sst_checkpoint *r;
    const char *blobs;
    bool sync;
    char **fresh;
    size_t n_fresh;
    bool own_commit;   /* its commit is a real COMMIT (alone or the group's), not a savepoint of
                        * a caller's batch that may still roll back */
    int64_t version;   /* PRAGMA data_version inside its transaction */
    held_lease *taken; /* SST_PUT_TAKE_LOCK: the lease taken, kept once committed */
} put_job;

static sst_code put_unit_run(sqlite_saver *s, void *arg, sst_error *err) {
    put_job *j = arg;
    const sst_checkpoint *r = j->r;
    sst_code rc = head_reserve(s, r, err);
    rc = rc == SST_OK ? known_prepare(s, r, &j->fresh, &j->n_fresh, err) : rc;
    if (rc != SST_OK) {
        return rc;
    }
    j->own_commit = s->in_group || !sst__sqlite_db_batch(s->conn);
    rc = sst__sq_begin(s, j->sync, err) ? SST_OK : sst__code(err);
    j->version = rc == SST_OK ? data_version(s) : -1;
    /* The lock first (SST_PUT_TAKE_LOCK): a thread another holds writes nothing. Its lease
     * row is no checkpoint's: the head this saver remembers still holds after it. */
    int64_t changes = sqlite3_total_changes64(s->db);
    if (rc == SST_OK && (r->put_flags & SST_PUT_TAKE_LOCK)) {
        rc = sst__sq_lease_take(s, r->thread_id, &j->taken, err);
    }
    rc = rc == SST_OK ? check_head(s, r, j->version, changes, err) : rc;
    if (rc == SST_OK && !insert_record(s, r, j->blobs, err)) {
        rc = sst__code(err);
    }
    rc = rc == SST_OK ? put_blobs(s, r, j->version, err) : rc;
    if (rc == SST_OK && r->parent_id == NULL) {
        char created[24];
        snprintf(created, sizeof created, "%" PRId64, r->created_at);
        rc = sst__sq_run(s, S_THREAD_NEW, "writing a thread", err, r->thread_id, created, NULL)
                 ? SST_OK
                 : sst__code(err);
    }
    if (rc == SST_OK && !(r->put_flags & SST_PUT_GIVE_LOCK) &&
        !sst__sq_renew_lease(s, r->thread_id, err)) {
        rc = sst__code(err);
    }
    /* The lock given back after the record (SST_PUT_GIVE_LOCK): the put was still fenced. */
    if (rc == SST_OK && (r->put_flags & SST_PUT_GIVE_LOCK) &&
        !sst__sq_lease_give(s, r->thread_id, err)) {
        rc = sst__code(err);
    }
    bool ok = sst__sq_commit(s, j->sync, rc == SST_OK, rc == SST_OK ? err : NULL);
    return rc != SST_OK ? rc : ok ? SST_OK : sst__code(err);
}

static void put_unit_finish(sqlite_saver *s, void *arg, bool committed) {
    put_job *j = arg;
    if (committed && j->own_commit) {
        head_remember(s, j->r, j->version);
    }
    sst__sq_lease_keep(s, j->taken, committed);
    j->taken = NULL;
    if (committed && (j->r->put_flags & SST_PUT_GIVE_LOCK)) {
        sst__sq_lease_forget(s, j->r->thread_id);
    }
    known_finish(s, j->fresh, j->n_fresh, committed);
    j->fresh = NULL;
    j->n_fresh = 0;
}

sst_code sst__sq_put(void *self, const sst_checkpoint *r, bool sync, sst_error *err) {
    sqlite_saver *s = self;
    sst_code rc = check_sizes(s, r, err);
    if (rc != SST_OK) {
        return rc;
    }
    char *blobs = NULL;
    if ((rc = blob_list(r, &blobs, err)) != SST_OK) {
        return rc;
    }
    put_job j = {.r = r, .blobs = blobs, .sync = sync};
    sq_unit u = {.run = put_unit_run, .finish = put_unit_finish, .arg = &j};
    /* A flushed commit (sync) raises synchronous around its own transaction: alone. */
    rc = sst__sq_write_unit(s, &u, sync, err);
    sst__free(blobs);
    return rc;
}

typedef struct writes_job {
    const char *thread, *ns, *id;
    const sst_payload *writes;
    sst_thread_status status;
    bool sync;
} writes_job;

static sst_code writes_unit_run(sqlite_saver *s, void *arg, sst_error *err) {
    writes_job *j = arg;
    bool ok = sst__sq_begin(s, j->sync, err);
    if (ok) {
        sqlite3_stmt *st = sst__sq_stmt(s, S_SET_STATUS);
        sqlite3_bind_int(st, 1, (int)j->status);
        sst__sq_bind_text(st, 2, j->thread);
        sst__sq_bind_text(st, 3, j->ns);
        sst__sq_bind_text(st, 4, j->id);
        ok = sst__sq_step_done(s, st, "writing a checkpoint's status", err);
        if (ok && sqlite3_changes(s->db) == 0) {
            ok = false;
            sst__error(err, SST_ENOTFOUND,
                       "checkpoint store '%s': thread '%s' has no checkpoint %s to write to",
                       s->path, j->thread, j->id);
        }
    }
    if (ok) {
        bool del = j->writes->data == NULL;
        sqlite3_stmt *st = sst__sq_stmt(s, del ? S_DEL_WRITES : S_PUT_WRITES);
        sst__sq_bind_text(st, 1, j->thread);
        sst__sq_bind_text(st, 2, j->id);
        if (!del) {
            bind_payload(st, 3, j->writes);
            bind_sum(st, 4, j->writes);
        }
        ok = sst__sq_step_done(s, st, "writing pending writes", err);
    }
    sst_code rc = ok ? SST_OK : sst__code(err);
    ok = sst__sq_commit(s, j->sync, ok, ok ? err : NULL);
    return rc != SST_OK ? rc : ok ? SST_OK : sst__code(err);
}

sst_code sst__sq_put_writes(void *self, const char *thread, const char *ns, const char *id,
                            const sst_payload *writes, sst_thread_status status, bool sync,
                            sst_error *err) {
    sqlite_saver *s = self;
    if (writes->len > s->max_record_bytes) {
        return too_large(s, "the pending writes", writes->len, err);
    }
    writes_job j = {thread, ns, id, writes, status, sync};
    sq_unit u = {.run = writes_unit_run, .arg = &j};
    return sst__sq_write_unit(s, &u, sync, err);
}

/* ---- reading ---- */

static const char *col_text(sqlite3_stmt *st, int col) {
    return (const char *)sqlite3_column_text(st, col);
}

/* Column @p col's text as a payload, checked against the sum in @p crc_col (NULL: none). */
static sst_code col_payload(sqlite_saver *s, sqlite3_stmt *st, int col, int crc_col,
                            const char *what, sst_payload *p, sst_error *err) {
    const char *text = col_text(st, col);
    size_t len = (size_t)sqlite3_column_bytes(st, col);
    *p = (sst_payload){0};
    if (text == NULL) {
        return SST_OK;
    }
    if (crc_col >= 0 && sqlite3_column_type(st, crc_col) != SQLITE_NULL &&
        (uint32_t)sqlite3_column_int64(st, crc_col) != sst__crc32c(0, text, len)) {
        return sst__error(err, SST_EIO, "checkpoint store '%s': %s is damaged (checksum mismatch)",
                          s->path, what);
    }
    if (len > 0) {
        *p = (sst_payload){.data = text, .len = len};
    }
    return SST_OK;
}

sst_code sst__sq_read_row(sqlite_saver *s, sqlite3_stmt *st, const char *thread, sst_checkpoint *r,
                          sst_error *err) {
    *r = (sst_checkpoint){
        .format = (uint32_t)sqlite3_column_int64(st, C_FORMAT),
        .thread_id = thread,
        .ns = col_text(st, C_NS),
        .id = col_text(st, C_ID),
        .parent_id = col_text(st, C_PARENT),
        .step = sqlite3_column_int64(st, C_STEP),
        .source = col_text(st, C_SOURCE),
        .run_id = col_text(st, C_RUN_ID),
        .kind =
            sqlite3_column_int(st, C_KIND) == 0 ? SST_CHECKPOINT_SNAPSHOT : SST_CHECKPOINT_DELTA,
        .created_at = sqlite3_column_int64(st, C_CREATED),
        .status = (sst_thread_status)sqlite3_column_int(st, C_STATUS),
    };
    char what[200];
    snprintf(what, sizeof what, "checkpoint %s of thread '%s'", r->id != NULL ? r->id : "?",
             thread);
    const char *header = col_text(st, C_HEADER);
    size_t hlen = (size_t)sqlite3_column_bytes(st, C_HEADER);
    sst_payload meta = {col_text(st, C_META), (size_t)sqlite3_column_bytes(st, C_META), NULL};
    const char *blobs = col_text(st, C_BLOBS);
    if (r->id == NULL || r->ns == NULL || header == NULL ||
        (sqlite3_column_type(st, C_HCRC) != SQLITE_NULL &&
         (uint32_t)sqlite3_column_int64(st, C_HCRC) !=
             header_crc(thread, r, header, hlen, &meta, blobs))) {
        return sst__error(err, SST_EIO, "checkpoint store '%s': %s is damaged (checksum mismatch)",
                          s->path, what);
    }
    if ((unsigned)r->status > SST_THREAD_ERROR) {
        r->status = SST_THREAD_IDLE;
    }
    r->next = hlen > 0 ? (sst_payload){.data = header, .len = hlen} : (sst_payload){0};
    sst_code rc = col_payload(s, st, C_META, C_MCRC, what, &r->metadata, err);
    return rc == SST_OK ? col_payload(s, st, C_BODY, C_BCRC, what, &r->body, err) : rc;
}

/* One blob's content (a new copy, with its id after it), or an error naming it. */
static sst_code read_blob(sqlite_saver *s, const char *bid, size_t idlen, const sst_checkpoint *r,
                          sst_blob *out, sst_error *err) {
    char what[200];
    snprintf(what, sizeof what, "blob %.*s of checkpoint %s of thread '%s'", (int)idlen, bid, r->id,
             r->thread_id);
    sqlite3_stmt *st = sst__sq_stmt(s, S_GET_BLOB);
    sqlite3_bind_text(st, 1, bid, (int)idlen, SQLITE_TRANSIENT);
    int step = sqlite3_step(st);
    sst_payload p = {0};
    sst_code rc =
        step == SQLITE_ROW ? col_payload(s, st, 0, 1, what, &p, err)
        : step == SQLITE_DONE
            ? sst__error(err, SST_EIO, "checkpoint store '%s': %s is missing", s->path, what)
            : sst__sq_db_error(s, err, "reading a blob");
    char *copy = rc == SST_OK ? sst__malloc(p.len + idlen + 2) : NULL;
    if (rc == SST_OK && copy == NULL) {
        rc = sst__enomem(err);
    }
    if (rc == SST_OK) {
        memcpy(copy, p.data != NULL ? p.data : "", p.len);
        copy[p.len] = '\0';
        memcpy(copy + p.len + 1, bid, idlen);
        copy[p.len + 1 + idlen] = '\0';
        *out = (sst_blob){.id = copy + p.len + 1, .content = {.data = copy, .len = p.len}};
    }
    sqlite3_reset(st);
    return rc;
}

/* The blobs of record @p r (ids in @p list, comma-separated) with their content. */
static sst_code read_blobs(sqlite_saver *s, const sst_checkpoint *r, const char *list,
                           sst_blob **out, size_t *n, sst_error *err) {
    *out = NULL;
    *n = 0;
    size_t count = 0;
    for (const char *p = list; p != NULL && *p != '\0'; p++) {
        count += *p == ',';
    }
    if (list == NULL || *list == '\0') {
        return SST_OK;
    }
    *out = sst__calloc(count + 1, sizeof **out);
    if (*out == NULL) {
        return sst__enomem(err);
    }
    sst_code rc = SST_OK;
    for (const char *p = list; rc == SST_OK && p != NULL;) {
        const char *end = strchr(p, ',');
        size_t len = end != NULL ? (size_t)(end - p) : strlen(p);
        rc = read_blob(s, p, len, r, &(*out)[*n], err);
        *n += rc == SST_OK;
        p = end != NULL ? end + 1 : NULL;
    }
    return rc;
}

static void free_blobs(sst_blob *b, size_t n) {
    for (size_t i = 0; i < n; i++) {
        sst__free((char *)b[i].content.data);
    }
    sst__free(b);
}

/* The pending writes of checkpoint @p id, into @p w (empty when none). */
static sst_code read_writes(sqlite_saver *s, const char *thread, const char *id, sst_payload *w,
                            sst_error *err) {
    sqlite3_stmt *st = sst__sq_stmt(s, S_GET_WRITES);
    sst__sq_bind_text(st, 1, thread);
    sst__sq_bind_text(st, 2, id);
    int rc = sqlite3_step(st);
    *w = (sst_payload){0};
    if (rc == SQLITE_ROW) {
        char what[200];
        snprintf(what, sizeof what, "the pending writes of checkpoint %s of thread '%s'", id,
                 thread);
        return col_payload(s, st, 0, 1, what, w, err);
    }
    return rc == SQLITE_DONE ? SST_OK : sst__sq_db_error(s, err, "reading pending writes");
}

sst_code sst__sq_get(void *self, const char *thread, const char *ns, const char *id,
                     sst_checkpoint_fn each, void *user_data, sst_error *err) {
    sqlite_saver *s = self;
    pthread_mutex_lock(s->mu);
    sqlite3_stmt *st = sst__sq_stmt(s, id != NULL ? S_GET_ID : S_GET_LATEST);
    sst__sq_bind_text(st, 1, thread);
    sst__sq_bind_text(st, 2, ns);
    if (id != NULL) {
        sst__sq_bind_text(st, 3, id);
    }
    sst_checkpoint r;
    sst_blob *blobs = NULL;
    size_t n = 0;
    sst_code rc = SST_OK;
    int step = sqlite3_step(st);
    if (step == SQLITE_ROW) {
        rc = sst__sq_read_row(s, st, thread, &r, err);
        rc = rc == SST_OK ? read_blobs(s, &r, col_text(st, C_BLOBS), &blobs, &n, err) : rc;
        rc = rc == SST_OK ? read_writes(s, thread, r.id, &r.writes, err) : rc;
        if (rc == SST_OK) {
            r.blobs = blobs;
            r.n_blobs = n;
            unsigned long was = atomic_exchange(&s->cb_owner, (unsigned long)pthread_self());
            each(&r, user_data);
            atomic_store(&s->cb_owner, was);
        }
    } else if (step == SQLITE_DONE) {
        rc = sst__error(err, SST_ENOTFOUND, "thread '%s' has no checkpoint%s%s", thread,
                        id != NULL ? " " : "", id != NULL ? id : "");
    } else {
        rc = sst__sq_db_error(s, err, "reading a checkpoint");
    }
    free_blobs(blobs, n);
    sqlite3_reset(st);
    sqlite3_reset(s->st[S_GET_WRITES]);
    pthread_mutex_unlock(s->mu);
    return rc;
}

sst_code sst__sq_list(void *self, const sst_checkpoint_query *q, sst_checkpoint_fn each,
                      void *user_data, sst_error *err) {
    sqlite_saver *s = self;
    pthread_mutex_lock(s->mu);
    sqlite3_stmt *st = sst__sq_stmt(s, S_LIST);
    sst__sq_bind_text(st, 1, q->thread_id);
    sst__sq_bind_text(st, 2, q->ns);
    sst__sq_bind_text(st, 3, q->before);
    size_t sent = 0;
    sst_code rc = SST_OK;
    int step = SQLITE_DONE;
    while (rc == SST_OK && (q->limit == 0 || sent < q->limit)) {
        if ((step = sqlite3_step(st)) != SQLITE_ROW) {
            break;
        }
        sst_checkpoint r;
        rc = sst__sq_read_row(s, st, q->thread_id, &r, err);
        if (rc != SST_OK || !sst__record_matches(&r, q->filter)) {
            continue;
        }
        sent++;
        unsigned long was = atomic_exchange(&s->cb_owner, (unsigned long)pthread_self());
        bool more = each(&r, user_data);
        atomic_store(&s->cb_owner, was);
        if (!more) {
            break;
        }
    }
    if (rc == SST_OK && step != SQLITE_ROW && step != SQLITE_DONE) {
        rc = sst__sq_db_error(s, err, "listing checkpoints");
    }
    sqlite3_reset(st);
    pthread_mutex_unlock(s->mu);
    return rc;
}
