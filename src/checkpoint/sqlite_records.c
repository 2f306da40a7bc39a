/* SPDX-License-Identifier: MIT */
/*
 * The SQLite saver's records: one row per checkpoint (its header and body as
 * JSON text), one row per checkpoint's writes, and content-addressed history
 * chunks. Every write is one IMMEDIATE transaction, so a checkpoint is all
 * there or not at all after a crash.
 *
 * Snapshots store each long list of the state (64 elements or more) as
 * chunks of 64 elements plus a tail: a chat history that only grows is
 * written once, not once per snapshot, so storage grows linearly.
 *
 * Integrity: every checkpoint row carries CRC-32C sums of its header (with
 * its thread, id, parent and step columns) and of its body, every writes row
 * a sum of its body, and a chunk's id is a hash of its text; a mismatch on
 * reading is an error naming the thread and checkpoint, never a wrong state.
 * Rows written before schema 3 have no sums (NULL) and are read unchecked.
 *
 * Fencing: a checkpoint is stored only if its parent is still the thread's
 * latest checkpoint (or the record says "fork": true), checked inside the
 * same transaction, so two writers on one thread can never fork its history.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "sqlite_int.h"
#include "values/build.h"

void sst__sq_chunk_id(const char *text, size_t len, char id[40]) {
    snprintf(id, 40, "%016llx%016llx", (unsigned long long)sst__hash_bytes(text, len, 0x63686b31),
             (unsigned long long)sst__hash_bytes(text, len, 0x63686b32));
}

static sst_code too_large(const sqlite_saver *s, const char *what, size_t len, sst_error *err) {
    return sst__error(err, SST_ELIMIT,
                      "checkpoint store '%s': %s of %zu bytes is over the limit of %zu bytes "
                      "a stored record can be read back with; nothing was written",
                      s->path, what, len, s->max_record_bytes);
}

uint32_t sst__sq_header_crc(const char *thread, const char *id, const char *parent, int64_t step,
                            const char *header, size_t len) {
    char num[24];
    int n = snprintf(num, sizeof num, "%" PRId64, step);
    uint32_t c = sst__crc32c(0, thread, strlen(thread) + 1);
    c = sst__crc32c(c, id, strlen(id) + 1);
    c = parent != NULL ? sst__crc32c(c, parent, strlen(parent) + 1) : sst__crc32c(c, "", 1);
    c = sst__crc32c(c, num, (size_t)n + 1);
    return sst__crc32c(c, header, len);
}

sst_value *sst__sq_read_text(sqlite_saver *s, const char *text, size_t len, const int64_t *crc,
                             const char *what, sst_error *err) {
    if (crc != NULL && (uint32_t)*crc != sst__crc32c(0, text, len)) {
        sst__error(err, SST_EIO, "checkpoint store '%s': %s is damaged (checksum mismatch)",
                   s->path, what);
        return NULL;
    }
    sst_json_read_opts o;
    sst_json_read_opts_init(&o);
    o.max_depth = 4200; /* the writer's depth limit (4096) plus the record's own levels */
    o.max_bytes = s->max_record_bytes > o.max_bytes ? s->max_record_bytes : o.max_bytes;
    sst_value *v = sst_json_read(text, len, &o, err);
    if (v == NULL) {
        sst__error_prefix(err, "checkpoint store '%s': %s is damaged", s->path, what);
    }
    return v;
}

/* ---- history chunks ---- */

/* The memo of a list that starts with the same element as @p list, or NULL. */
static chunk_memo *memo_find(sqlite_saver *s, const sst_value *list) {
    const sst_value *first = sst_array_get(list, 0);
    for (int i = 0; i < CHUNK_MEMOS; i++) {
        if (s->memo[i].list != NULL && sst_array_get(s->memo[i].list, 0) == first) {
            return &s->memo[i];
        }
    }
    return NULL;
}

/* The id of chunk @p c of @p list if @p m stored the same 64 values, else NULL. */
static const sst_value *memo_id(const chunk_memo *m, const sst_value *list, size_t c) {
    if (m == NULL || c >= sst_array_len(m->ids)) {
        return NULL;
    }
    for (size_t k = c * CHUNK; k < (c + 1) * CHUNK; k++) {
        if (sst_array_get(list, k) != sst_array_get(m->list, k)) {
            return NULL;
        }
    }
    return sst_array_get(m->ids, c);
}

/* Remembers @p list's chunk ids once their transaction committed. */
static void memo_put(sqlite_saver *s, const sst_value *list, const sst_value *ids) {
    chunk_memo *m = memo_find(s, list);
    if (m == NULL) {
        m = &s->memo[0];
        for (int i = 1; i < CHUNK_MEMOS; i++) {
            if (s->memo[i].used < m->used) {
                m = &s->memo[i];
            }
        }
    }
    sst_value_unref(m->list);
    sst_value_unref(m->ids);
    m->list = sst_value_ref(list);
    m->ids = sst_value_ref(ids);
    m->used = ++s->memo_clock;
}

void sst__sq_memo_clear(sqlite_saver *s) {
    for (int i = 0; i < CHUNK_MEMOS; i++) {
        sst_value_unref(s->memo[i].list);
        sst_value_unref(s->memo[i].ids);
        s->memo[i] = (chunk_memo){0};
    }
}

/*
 * Stores the full 64-element chunks of @p list and returns
 * {"chunks": [ids], "tail": [the rest]} (new). Inside the open transaction.
 * Chunks an earlier snapshot stored (the memo) are neither encoded nor written.
 */
static sst_value *store_chunks(sqlite_saver *s, const sst_value *list, sst_error *err) {
    size_t n = sst_array_len(list), full = n / CHUNK * CHUNK;
    sst_value *ids = sst_array_empty();
    sst_value *tail = sst_array_empty();
    const chunk_memo *memo = memo_find(s, list);
    for (size_t i = 0; i < full && ids != NULL; i += CHUNK) {
        const sst_value *known = memo_id(memo, list, i / CHUNK);
        if (known != NULL) {
            ids = sst_array_push_take(ids, sst_value_ref(known), err);
            continue;
        }
        sst_value *chunk = sst_array_empty();
        for (size_t k = i; k < i + CHUNK && chunk != NULL; k++) {
            chunk = sst_array_push_take(chunk, sst_value_ref(sst_array_get(list, k)), err);
        }
        size_t len = 0;
        char *text = chunk != NULL ? sst_json_write(chunk, SST_JSON_COMPACT, &len, err) : NULL;
        sst_value_unref(chunk);
        if (text == NULL) {
            sst_value_unref(ids);
            ids = NULL;
            break;
        }
        char id[40];
        sst__sq_chunk_id(text, len, id);
        if (len > s->max_record_bytes) {
            too_large(s, "a history chunk", len, err);
            sst_free(text);
            sst_value_unref(ids);
            ids = NULL;
            break;
        }
        sqlite3_stmt *st = sst__sq_stmt(s, S_PUT_CHUNK);
        sst__sq_bind_text(st, 1, id);
        sqlite3_bind_text(st, 2, text, (int)len, SQLITE_TRANSIENT);
        bool ok = sst__sq_step_done(s, st, "writing a history chunk", err);
        sst_free(text);
        sst_value *idv = ok ? sst_string_new(id, err) : NULL;
        ids = idv != NULL ? sst_array_push_take(ids, idv, err) : (sst_value_unref(ids), NULL);
    }
    for (size_t k = full; k < n && tail != NULL; k++) {
        tail = sst_array_push_take(tail, sst_value_ref(sst_array_get(list, k)), err);
    }
    sst_value *out = ids != NULL && tail != NULL
                         ? sst_object_set_take(sst_object_empty(), "chunks", ids, err)
                         : (sst_value_unref(ids), NULL);
    return out != NULL && tail != NULL ? sst_object_set_take(out, "tail", tail, err)
                                       : (sst_value_unref(out), sst_value_unref(tail), NULL);
}

/* A snapshot body with its long lists replaced by chunks; *chunked lists the fields. */
static sst_value *encode_snapshot(sqlite_saver *s, const sst_value *state, sst_value **chunked,
                                  sst_error *err) {
    sst_value *body = sst_value_ref(state);
    *chunked = sst_array_empty();
    for (size_t i = 0; i < sst_object_len(state) && body != NULL && *chunked != NULL; i++) {
        const sst_value *v = sst_object_value_at(state, i);
        if (!sst_is_array(v) || sst_array_len(v) < CHUNK) {
            continue;
        }
        const sst_value *key = sst_object_key_at(state, i);
        sst_value *enc = store_chunks(s, v, err);
        body =
            enc != NULL ? sst_object_setv_take(body, key, enc, err) : (sst_value_unref(body), NULL);
        *chunked = sst_array_push_take(*chunked, sst_value_ref(key), err);
    }
    if (body == NULL || *chunked == NULL) {
        sst_value_unref(body);
        sst_value_unref(*chunked);
        *chunked = NULL;
        return NULL;
    }
    return body;
}

/*
 * The header stored beside the body: no body, no columns duplicated, and the
 * parts of "next" and "metadata" that can be restored on reading left out
 * (a chat checkpoint is a few hundred bytes, so these matter).
 */
static sst_value *stored_header(const sst_value *record, const sst_value *chunked, sst_error *err) {
    /* "kind" follows from "since_snapshot" (0: a snapshot). */
    static const char *const drop[] = {"body",   "writes", "thread", "id",
                                       "parent", "step",   "kind",   "fork"};
    sst_value *h = sst_value_ref(record);
    for (size_t i = 0; i < sizeof drop / sizeof drop[0] && h != NULL; i++) {
        h = sst_object_remove_take(h, drop[i], err);
    }
    int64_t step = sst_int_value(sst_object_get(record, "step"));
    const sst_value *next = sst_object_get(record, "next");
    if (h != NULL && sst_is_object(next)) {
        sst_value *n = sst_value_ref(next);
        if (sst_int_value(sst_object_get(n, "superstep")) == step) {
            n = sst_object_remove_take(n, "superstep", err);
        }
        if (n != NULL && sst_array_len(sst_object_get(n, "pending")) == 0) {
            n = sst_object_remove_take(n, "pending", err);
        }
        if (n != NULL && sst_object_len(sst_object_get(n, "resume")) == 0) {
            n = sst_object_remove_take(n, "resume", err);
        }
        h = n != NULL ? sst_object_set_take(h, "next", n, err) : (sst_value_unref(h), NULL);
    }
    const sst_value *meta = sst_object_get(record, "metadata");
    if (h != NULL && sst_is_object(meta)) {
        sst_value *m = sst_value_ref(meta);
        if (sst_int_value(sst_object_get(m, "step")) == step) {
            m = sst_object_remove_take(m, "step", err);
        }
        const sst_value *src = m != NULL ? sst_object_get(m, "source") : NULL;
        if (sst_is_string(src) && strcmp(sst_string_cstr(src), "loop") == 0) {
            m = sst_object_remove_take(m, "source", err); /* the usual source */
        }
        h = m != NULL ? sst_object_set_take(h, "metadata", m, err) : (sst_value_unref(h), NULL);
    }
    if (h != NULL && sst_array_len(chunked) > 0) {
        h = sst_object_set_take(h, "chunked", sst_value_ref(chunked), err);
    }
    return h;
}

/* Restores what stored_header left out; @p step from the column. */
static sst_value *expand_header(sst_value *h, int64_t step, sst_error *err) {
    sst_value *next = sst_value_ref(sst_object_get(h, "next"));
    if (h != NULL && sst_is_object(next)) {
        if (sst_object_get(next, "superstep") == NULL) {
            sst_value *v = sst_int_new(step, err);
            next = v != NULL ? sst_object_set_take(next, "superstep", v, err)
                             : (sst_value_unref(next), NULL);
        }
        if (next != NULL && sst_object_get(next, "pending") == NULL) {
            next = sst_object_set_take(next, "pending", sst_array_empty(), err);
        }
        if (next != NULL && sst_object_get(next, "resume") == NULL) {
            next = sst_object_set_take(next, "resume", sst_object_empty(), err);
        }
        h = next != NULL ? sst_object_set_take(h, "next", next, err) : (sst_value_unref(h), NULL);
    } else {
        sst_value_unref(next);
    }
    const sst_value *meta = h != NULL ? sst_object_get(h, "metadata") : NULL;
    if (sst_is_object(meta)) {
        sst_value *m = sst_value_ref(meta);
        if (sst_object_get(m, "source") == NULL) {
            m = sst_object_set_take(m, "source", sst_string_new("loop", err), err);
        }
        if (m != NULL && sst_object_get(m, "step") == NULL) {
            sst_value *v = sst_int_new(step, err);
            m = v != NULL ? sst_object_set_take(m, "step", v, err) : (sst_value_unref(m), NULL);
        }
        h = m != NULL ? sst_object_set_take(h, "metadata", m, err) : (sst_value_unref(h), NULL);
    }
    if (h != NULL && sst_object_get(h, "kind") == NULL) {
        bool snap = sst_int_value(sst_object_get(h, "since_snapshot")) == 0;
        sst_value *k = sst_string_new(snap ? "snapshot" : "delta", err);
        h = k != NULL ? sst_object_set_take(h, "kind", k, err) : (sst_value_unref(h), NULL);
    }
    return h;
}

/* ---- writing ---- */

/* SST_ECONFLICT unless @p parent is the thread's latest checkpoint (in the open transaction). */
static sst_code check_head(sqlite_saver *s, const char *thread, const char *id, const char *parent,
                           sst_error *err) {
    sqlite3_stmt *st = sst__sq_stmt(s, S_HEAD);
    sst__sq_bind_text(st, 1, thread);
    int rc = sqlite3_step(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
        sst__sq_db_error(s, err, "reading a thread's latest checkpoint");
        sqlite3_reset(st);
        return sst__sq_code(err, SST_EIO);
    }
    const char *head = rc == SQLITE_ROW ? (const char *)sqlite3_column_text(st, 0) : NULL;
    sst_code out = SST_OK;
    if ((head == NULL) != (parent == NULL) ||
        (head != NULL && parent != NULL && strcmp(head, parent) != 0)) {
        out = sst__error(err, SST_ECONFLICT,
                         "thread '%s': checkpoint %s follows %s, but the thread's latest "
                         "checkpoint is now %s (another writer committed first); nothing was "
                         "written",
                         thread, id, parent != NULL ? parent : "nothing (a new thread)",
                         head != NULL ? head : "none");
    }
    sqlite3_reset(st);
    return out;
}

/* The texts of a record: its stored header and body. */
typedef struct record_text {
    char *header, *body;
    size_t hlen, blen;
    sst_value *chunked, *body_value; /* kept until the memo is updated */
} record_text;

static void record_text_free(record_text *t) {
    sst_free(t->header);
    sst_free(t->body);
    sst_value_unref(t->chunked);
    sst_value_unref(t->body_value);
}

/* Encodes @p record (inside the transaction: snapshots write their chunks). */
static sst_code encode_record(sqlite_saver *s, const sst_value *record, bool snapshot,
                              record_text *t, sst_error *err) {
    const sst_value *raw = sst_object_get(record, "body");
    t->body_value = snapshot && sst_is_object(raw) ? encode_snapshot(s, raw, &t->chunked, err)
                                                   : sst_value_ref(raw != NULL ? raw : sst_null());
    sst_value *header = t->body_value != NULL ? stored_header(record, t->chunked, err) : NULL;
    t->header = header != NULL ? sst_json_write(header, SST_JSON_COMPACT, &t->hlen, err) : NULL;
    sst_value_unref(header);
    t->body =
        t->header != NULL ? sst_json_write(t->body_value, SST_JSON_COMPACT, &t->blen, err) : NULL;
    if (t->body == NULL) {
        return sst__sq_code(err, SST_ENOMEM);
    }
    size_t big = t->hlen > t->blen ? t->hlen : t->blen;
    if (big > s->max_record_bytes) {
        char what[160];
        snprintf(what, sizeof what, "the checkpoint of thread '%s' at step %lld",
                 sst_string_cstr(sst_object_get(record, "thread")),
                 (long long)sst_int_value(sst_object_get(record, "step")));
        return too_large(s, what, big, err);
    }
    return SST_OK;
}

static bool insert_record(sqlite_saver *s, const sst_value *record, const record_text *t,
                          sst_error *err) {
    const char *thread = sst_string_cstr(sst_object_get(record, "thread"));
    const char *id = sst_string_cstr(sst_object_get(record, "id"));
    const sst_value *pv = sst_object_get(record, "parent");
    const char *parent = sst_is_string(pv) ? sst_string_cstr(pv) : NULL;
    int64_t step = sst_int_value(sst_object_get(record, "step"));
    sqlite3_stmt *st = sst__sq_stmt(s, S_PUT);
    sst__sq_bind_text(st, 1, thread);
    sst__sq_bind_text(st, 2, id);
    sst__sq_bind_text(st, 3, parent);
    sqlite3_bind_int64(st, 4, step);
    sqlite3_bind_text(st, 5, t->header, (int)t->hlen, SQLITE_STATIC);
    sqlite3_bind_text(st, 6, t->body, (int)t->blen, SQLITE_STATIC);
    sqlite3_bind_int64(st, 7, sst__sq_header_crc(thread, id, parent, step, t->header, t->hlen));
    sqlite3_bind_int64(st, 8, sst__crc32c(0, t->body, t->blen));
    return sst__sq_step_done(s, st, "writing a checkpoint", err);
}

sst_code sst__sq_put(void *self, const sst_value *record, bool sync, sst_error *err) {
    sqlite_saver *s = self;
    const sst_value *kind = sst_object_get(record, "kind");
    bool snapshot = sst_is_string(kind) && strcmp(sst_string_cstr(kind), "snapshot") == 0;
    const char *thread = sst_string_cstr(sst_object_get(record, "thread"));
    const sst_value *pv = sst_object_get(record, "parent");
    record_text t = {0};
    pthread_mutex_lock(&s->mu);
    bool ok = sst__sq_begin(s, sync, err);
    ok = ok && (sst_bool_value(sst_object_get(record, "fork")) ||
                check_head(s, thread, sst_string_cstr(sst_object_get(record, "id")),
                           sst_is_string(pv) ? sst_string_cstr(pv) : NULL, err) == SST_OK);
    ok = ok && encode_record(s, record, snapshot, &t, err) == SST_OK;
    ok = ok && insert_record(s, record, &t, err) && sst__sq_renew_lease(s, thread, err);
    ok = sst__sq_commit(s, sync, ok, err);
    if (snapshot) {
        /* Only chunks of a committed snapshot are known to be in the file. */
        const sst_value *raw = sst_object_get(record, "body");
        for (size_t i = 0; ok && i < sst_array_len(t.chunked); i++) {
            const sst_value *key = sst_array_get(t.chunked, i);
            const sst_value *enc = sst_object_get(t.body_value, sst_string_cstr(key));
            memo_put(s, sst_object_get(raw, sst_string_cstr(key)), sst_object_get(enc, "chunks"));
        }
    }
    pthread_mutex_unlock(&s->mu);
    record_text_free(&t);
    return ok ? SST_OK : sst__sq_code(err, SST_EIO);
}

sst_code sst__sq_put_writes(void *self, const char *thread, const char *id, const sst_value *writes,
                            bool sync, sst_error *err) {
    sqlite_saver *s = self;
    bool del = writes == NULL || sst_is_null(writes);
    size_t len = 0;
    char *text = del ? NULL : sst_json_write(writes, SST_JSON_COMPACT, &len, err);
    if (!del && text == NULL) {
        return sst__sq_code(err, SST_ENOMEM);
    }
    if (len > s->max_record_bytes) {
        sst_free(text);
        return too_large(s, "the pending writes", len, err);
    }
    pthread_mutex_lock(&s->mu);
    bool ok = sst__sq_begin(s, sync, err);
    if (ok) {
        sqlite3_stmt *st = sst__sq_stmt(s, del ? S_DEL_WRITES : S_PUT_WRITES);
        sst__sq_bind_text(st, 1, thread);
        sst__sq_bind_text(st, 2, id);
        if (!del) {
            sqlite3_bind_text(st, 3, text, (int)len, SQLITE_STATIC);
            sqlite3_bind_int64(st, 4, sst__crc32c(0, text, len));
        }
        ok = sst__sq_step_done(s, st, "writing pending writes", err);
        ok = sst__sq_commit(s, sync, ok, err);
    }
    pthread_mutex_unlock(&s->mu);
    sst_free(text);
    return ok ? SST_OK : sst__sq_code(err, SST_EIO);
}

/* ---- reading ---- */

/* Column @p col as a stored sum, or NULL when the row has none (written before schema 3). */
static const int64_t *column_crc(sqlite3_stmt *st, int col, int64_t *slot) {
    if (sqlite3_column_type(st, col) == SQLITE_NULL) {
        return NULL;
    }
    *slot = sqlite3_column_int64(st, col);
    return slot;
}

/*
 * The header of the current row (columns header, body, id, parent, step, hcrc),
 * checked against its sum and with its columns put back.
 */
static sst_value *read_header(sqlite_saver *s, sqlite3_stmt *st, const char *thread,
                              sst_error *err) {
    const char *text = (const char *)sqlite3_column_text(st, 0);
    size_t len = (size_t)sqlite3_column_bytes(st, 0);
    const char *id = (const char *)sqlite3_column_text(st, 2);
    const char *parent = (const char *)sqlite3_column_text(st, 3);
    int64_t step = sqlite3_column_int64(st, 4), sum;
    const int64_t *crc = column_crc(st, 5, &sum);
    char what[200];
    snprintf(what, sizeof what, "checkpoint %s of thread '%s'", id != NULL ? id : "?", thread);
    if (text == NULL || id == NULL ||
        (crc != NULL &&
         (uint32_t)*crc != sst__sq_header_crc(thread, id, parent, step, text, len))) {
        sst__error(err, SST_EIO, "checkpoint store '%s': %s is damaged (checksum mismatch)",
                   s->path, what);
        return NULL;
    }
    sst_value *h = sst__sq_read_text(s, text, len, NULL, what, err);
    h = sst__set_take(h, "thread", sst_string_new(thread, err), err);
    h = sst__set_take(h, "id", sst_string_new(id, err), err);
    h = sst__set_take(h, "parent", parent != NULL ? sst_string_new(parent, err) : sst_null(), err);
    h = sst__set_take(h, "step", sst_int_new(step, err), err);
    return h != NULL ? expand_header(h, step, err) : NULL;
}

/* Rebuilds a chunked list: its chunks' elements (each checked against its id), then the tail. */
static sst_value *load_chunks(sqlite_saver *s, const sst_value *enc, sst_error *err) {
    sst_value *list = sst_array_empty();
    const sst_value *ids = sst_object_get(enc, "chunks");
    for (size_t i = 0; i < sst_array_len(ids) && list != NULL; i++) {
        const char *want = sst_string_cstr(sst_array_get(ids, i));
        sqlite3_stmt *st = sst__sq_stmt(s, S_GET_CHUNK);
        sst__sq_bind_text(st, 1, want);
        sst_value *chunk = NULL;
        if (sqlite3_step(st) == SQLITE_ROW) {
            const char *text = (const char *)sqlite3_column_text(st, 0);
            size_t len = (size_t)sqlite3_column_bytes(st, 0);
            char got[40];
            sst__sq_chunk_id(text != NULL ? text : "", len, got);
            char what[80];
            snprintf(what, sizeof what, "history chunk %s", want);
            chunk = strcmp(got, want) == 0
                        ? sst__sq_read_text(s, text, len, NULL, what, err)
                        : (sst__error(err, SST_EIO,
                                      "checkpoint store '%s': %s is damaged (checksum mismatch)",
                                      s->path, what),
                           NULL);
        } else {
            sst__error(err, SST_EIO, "checkpoint store '%s': history chunk %s is missing", s->path,
                       want);
        }
        sqlite3_reset(st);
        list =
            chunk != NULL ? sst_array_concat_take(list, chunk, err) : (sst_value_unref(list), NULL);
        sst_value_unref(chunk);
    }
    const sst_value *tail = sst_object_get(enc, "tail");
    return list != NULL && tail != NULL ? sst_array_concat_take(list, tail, err) : list;
}

/* The body of the current row (column 1, sum in column 6) with its chunked lists loaded. */
static sst_value *read_body(sqlite_saver *s, sqlite3_stmt *st, const sst_value *rec,
                            sst_error *err) {
    int64_t sum;
    char what[200];
    snprintf(what, sizeof what, "checkpoint %s of thread '%s'",
             sst_string_cstr(sst_object_get(rec, "id")),
             sst_string_cstr(sst_object_get(rec, "thread")));
    const char *text = (const char *)sqlite3_column_text(st, 1);
    sst_value *body = text != NULL ? sst__sq_read_text(s, text, (size_t)sqlite3_column_bytes(st, 1),
                                                       column_crc(st, 6, &sum), what, err)
                                   : sst_null();
    const sst_value *chunked = sst_object_get(rec, "chunked");
    for (size_t i = 0; i < sst_array_len(chunked) && body != NULL; i++) {
        const sst_value *key = sst_array_get(chunked, i);
        sst_value *list =
            load_chunks(s, sst_object_getn(body, sst_string_cstr(key), sst_string_len(key)), err);
        body = list != NULL ? sst_object_setv_take(body, key, list, err)
                            : (sst_value_unref(body), NULL);
    }
    return body;
}

/* The pending writes of checkpoint @p id (null when none). */
static sst_value *read_writes(sqlite_saver *s, const char *thread, const char *id, sst_error *err) {
    sqlite3_stmt *w = sst__sq_stmt(s, S_GET_WRITES);
    sst__sq_bind_text(w, 1, thread);
    sst__sq_bind_text(w, 2, id);
    int rc = sqlite3_step(w);
    sst_value *out = NULL;
    if (rc == SQLITE_ROW) {
        int64_t sum;
        char what[200];
        snprintf(what, sizeof what, "the pending writes of checkpoint %s of thread '%s'", id,
                 thread);
        const char *text = (const char *)sqlite3_column_text(w, 0);
        out = sst__sq_read_text(s, text != NULL ? text : "", (size_t)sqlite3_column_bytes(w, 0),
                                column_crc(w, 1, &sum), what, err);
    } else if (rc == SQLITE_DONE) {
        out = sst_null();
    } else {
        sst__sq_db_error(s, err, "reading pending writes");
    }
    sqlite3_reset(w);
    return out;
}

sst_value *sst__sq_get(void *self, const char *thread, const char *id, sst_error *err) {
    sqlite_saver *s = self;
    pthread_mutex_lock(&s->mu);
    sqlite3_stmt *st = sst__sq_stmt(s, id != NULL ? S_GET_ID : S_GET_LATEST);
    sst__sq_bind_text(st, 1, thread);
    if (id != NULL) {
        sst__sq_bind_text(st, 2, id);
    }
    sst_value *rec = NULL;
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        rec = read_header(s, st, thread, err);
        sst_value *body = rec != NULL ? read_body(s, st, rec, err) : NULL;
        rec = body != NULL ? sst_object_set_take(rec, "body", body, err)
                           : (sst_value_unref(rec), NULL);
    } else if (rc == SQLITE_DONE) {
        sst__error(err, SST_ENOTFOUND, "thread '%s' has no checkpoint%s%s", thread,
                   id != NULL ? " " : "", id != NULL ? id : "");
    } else {
        sst__sq_db_error(s, err, "reading a checkpoint");
    }
    sqlite3_reset(st);
    if (rec != NULL) {
        sst_value *writes = read_writes(s, thread, sst_string_cstr(sst_object_get(rec, "id")), err);
        rec = writes != NULL ? sst_object_set_take(rec, "writes", writes, err)
                             : (sst_value_unref(rec), NULL);
    }
    pthread_mutex_unlock(&s->mu);
    return rec;
}

sst_value *sst__sq_list_page(void *self, const char *thread, const sst_value *filter,
                             const char *before, size_t limit, sst_error *err) {
    sqlite_saver *s = self;
    pthread_mutex_lock(&s->mu);
    sqlite3_stmt *st = sst__sq_stmt(s, before != NULL ? S_LIST_BEFORE : S_LIST);
    sst__sq_bind_text(st, 1, thread);
    if (before != NULL) {
        sst__sq_bind_text(st, 2, thread);
        sst__sq_bind_text(st, 3, before);
    }
    sst_value *out = sst_array_empty();
    int rc = SQLITE_DONE;
    while (out != NULL && (limit == 0 || sst_array_len(out) < limit)) {
        if ((rc = sqlite3_step(st)) != SQLITE_ROW) {
            break;
        }
        sst_value *h = read_header(s, st, thread, err);
        if (h != NULL && !sst__metadata_matches(sst_object_get(h, "metadata"), filter)) {
            sst_value_unref(h);
            continue;
        }
        h = h != NULL ? sst_object_remove_take(h, "next", err) : NULL;
        out = h != NULL ? sst_array_push_take(out, h, err) : (sst_value_unref(out), NULL);
    }
    if (out != NULL && rc != SQLITE_ROW && rc != SQLITE_DONE) {
        sst__sq_db_error(s, err, "listing checkpoints");
        sst_value_unref(out);
        out = NULL;
    }
    sqlite3_reset(st);
    pthread_mutex_unlock(&s->mu);
    return out;
}

sst_value *sst__sq_list(void *self, const char *thread, const sst_value *filter, size_t limit,
                        sst_error *err) {
    return sst__sq_list_page(self, thread, filter, NULL, limit, err);
}

sst_value *sst__sq_threads(void *self, sst_error *err) {
    sqlite_saver *s = self;
    pthread_mutex_lock(&s->mu);
    sqlite3_stmt *st = sst__sq_stmt(s, S_THREADS);
    sst_value *out = sst_array_empty();
    int rc = SQLITE_DONE;
    while (out != NULL && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        sst_value *t =
            sst__set_take(sst_object_empty(), "thread_id",
                          sst_string_new((const char *)sqlite3_column_text(st, 0), err), err);
        t = sst__set_take(t, "checkpoints", sst_int_new(sqlite3_column_int64(st, 1), err), err);
        t = sst__set_take(t, "latest",
                          sst_string_new((const char *)sqlite3_column_text(st, 2), err), err);
        t = sst__set_take(t, "step", sst_int_new(sqlite3_column_int64(st, 3), err), err);
        out = t != NULL ? sst_array_push_take(out, t, err) : (sst_value_unref(out), NULL);
    }
    if (out != NULL && rc != SQLITE_DONE) {
        sst__sq_db_error(s, err, "listing threads");
        sst_value_unref(out);
        out = NULL;
    }
    sqlite3_reset(st);
    pthread_mutex_unlock(&s->mu);
    return out;
}

sst_code sst__sq_delete_thread(void *self, const char *thread, sst_error *err) {
    sqlite_saver *s = self;
    pthread_mutex_lock(&s->mu);
    bool ok = sst__sq_begin(s, false, err);
    if (ok) {
        sqlite3_stmt *st = sst__sq_stmt(s, S_DEL_THREAD_C);
        sst__sq_bind_text(st, 1, thread);
        ok = sst__sq_step_done(s, st, "deleting a thread", err);
        if (ok) {
            st = sst__sq_stmt(s, S_DEL_THREAD_W);
            sst__sq_bind_text(st, 1, thread);
            ok = sst__sq_step_done(s, st, "deleting a thread", err);
        }
        ok = sst__sq_commit(s, false, ok, err);
    }
    pthread_mutex_unlock(&s->mu);
    return ok ? SST_OK : sst__sq_code(err, SST_EIO);
}
