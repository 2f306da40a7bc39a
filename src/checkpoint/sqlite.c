/* SPDX-License-Identifier: MIT */
/*
 * The SQLite saver: one row per checkpoint (its header and body as JSON
 * text), one row per checkpoint's writes, and a lock row per busy thread.
 * WAL journal; synchronous NORMAL, raised to FULL around commits that ask
 * for SST_DURABILITY_SYNC.
 *
 * Snapshots store each long list of the state (64 elements or more) as
 * content-addressed chunks of 64 elements plus a tail: a chat history that
 * only grows is written once, not once per snapshot, so storage grows
 * linearly with the history instead of quadratically. Every write is one IMMEDIATE transaction, so
 * a checkpoint is all there or not at all after a crash.
 *
 * Opening checks the file before writing anything to it: not SQLite, another
 * application's database (application_id), a newer schema (user_version) or
 * a corrupt file (quick_check) are errors naming the file.
 *
 * Locks: a row (thread, pid). Another live process holding it means busy; a
 * row left by a dead process (kill -9) is taken over.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "checkpoint_int.h"
#include "values/build.h"

#define APP_ID 0x53535450 /* "SSTP" */

enum {
    S_PUT,
    S_GET_ID,
    S_GET_LATEST,
    S_GET_WRITES,
    S_PUT_WRITES,
    S_DEL_WRITES,
    S_LIST,
    S_LOCK,
    S_LOCK_OWNER,
    S_LOCK_TAKE,
    S_UNLOCK,
    S_DEL_THREAD_C,
    S_DEL_THREAD_W,
    S_PUT_CHUNK,
    S_GET_CHUNK,
    S_THREADS,
    S_COUNT
};

static const char *const k_sql[S_COUNT] = {
    [S_PUT] = "INSERT INTO checkpoints(thread, id, parent, step, header, body) VALUES(?,?,?,?,?,?)",
    [S_GET_ID] = "SELECT header, body, id, parent, step FROM checkpoints WHERE thread=? AND id=?",
    [S_GET_LATEST] = "SELECT header, body, id, parent, step FROM checkpoints WHERE thread=? "
                     "ORDER BY seq DESC LIMIT 1",
    [S_GET_WRITES] = "SELECT body FROM writes WHERE thread=? AND id=?",
    [S_PUT_WRITES] = "INSERT OR REPLACE INTO writes(thread, id, body) VALUES(?,?,?)",
    [S_DEL_WRITES] = "DELETE FROM writes WHERE thread=? AND id=?",
    [S_LIST] = "SELECT header, NULL, id, parent, step FROM checkpoints WHERE thread=? "
               "ORDER BY seq DESC",
    [S_LOCK] = "INSERT OR IGNORE INTO locks(thread, pid, since) VALUES(?,?,?)",
    [S_LOCK_OWNER] = "SELECT pid FROM locks WHERE thread=?",
    [S_LOCK_TAKE] = "UPDATE locks SET pid=?, since=? WHERE thread=? AND pid=?",
    [S_UNLOCK] = "DELETE FROM locks WHERE thread=? AND pid=?",
    [S_DEL_THREAD_C] = "DELETE FROM checkpoints WHERE thread=?",
    [S_DEL_THREAD_W] = "DELETE FROM writes WHERE thread=?",
    [S_PUT_CHUNK] = "INSERT OR IGNORE INTO chunks(id, body) VALUES(?,?)",
    [S_GET_CHUNK] = "SELECT body FROM chunks WHERE id=?",
    [S_THREADS] =
        "SELECT c.thread, n, c.id, c.step FROM checkpoints c JOIN "
        "(SELECT thread, COUNT(*) AS n, MAX(seq) AS last FROM checkpoints GROUP BY thread) t "
        "ON c.seq = t.last ORDER BY c.thread",
};

#define CHUNK 64

/*
 * The chunk ids of a list stored by an earlier snapshot. A later version of
 * the list (add_messages keeps the elements of the old one) reuses the ids
 * of the chunks whose 64 elements are the same values, so a snapshot costs
 * only its new chunks instead of re-encoding the whole history.
 */
#define CHUNK_MEMOS 8
typedef struct chunk_memo {
    sst_value *list; /* owned reference: keeps the elements (and their addresses) alive */
    sst_value *ids;  /* owned: the id of each full chunk */
    uint64_t used;   /* LRU clock */
} chunk_memo;

typedef struct sqlite_saver {
    sqlite3 *db;
    char *path; /* owned, for messages */
    pthread_mutex_t mu;
    sqlite3_stmt *st[S_COUNT];    /* protected by mu */
    chunk_memo memo[CHUNK_MEMOS]; /* protected by mu */
    uint64_t memo_clock;
} sqlite_saver;

void sst_sqlite_opts_init(sst_sqlite_opts *o) {
    o->busy_timeout_ms = 5000;
    o->check_integrity = true;
}

/* Fills err with "checkpoint store 'path': what: sqlite's message". */
static sst_code db_error(const sqlite_saver *s, sst_error *err, const char *what) {
    int code = sqlite3_extended_errcode(s->db);
    sst_code c = (code & 0xff) == SQLITE_BUSY || (code & 0xff) == SQLITE_LOCKED ? SST_EBUSY
                 : (code & 0xff) == SQLITE_NOMEM                                ? SST_ENOMEM
                                                                                : SST_EIO;
    return sst__error(err, c, "checkpoint store '%s': %s: %s", s->path, what,
                      sqlite3_errmsg(s->db));
}

static bool exec(sqlite_saver *s, const char *sql, sst_error *err) {
    char *msg = NULL;
    if (sqlite3_exec(s->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        sst__error(err, SST_EIO, "checkpoint store '%s': %s: %s", s->path, sql,
                   msg != NULL ? msg : sqlite3_errmsg(s->db));
        sqlite3_free(msg);
        return false;
    }
    return true;
}

static sqlite3_stmt *stmt(sqlite_saver *s, int which) {
    sqlite3_stmt *st = s->st[which];
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    return st;
}

static void bind_text(sqlite3_stmt *st, int i, const char *text) {
    if (text != NULL) {
        sqlite3_bind_text(st, i, text, -1, SQLITE_TRANSIENT);
    } else {
        sqlite3_bind_null(st, i);
    }
}

/* Runs a statement that returns no rows. */
static bool step_done(sqlite_saver *s, sqlite3_stmt *st, const char *what, sst_error *err) {
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    if (rc != SQLITE_DONE) {
        db_error(s, err, what);
        return false;
    }
    return true;
}

/* Begins, and commits or rolls back, a write transaction; FULL sync when asked. */
static bool begin(sqlite_saver *s, bool sync, sst_error *err) {
    if (sync && !exec(s, "PRAGMA synchronous=FULL", err)) {
        return false;
    }
    return exec(s, "BEGIN IMMEDIATE", err);
}

static bool commit(sqlite_saver *s, bool sync, bool ok, sst_error *err) {
    if (!ok) {
        exec(s, "ROLLBACK", NULL);
    } else if (!exec(s, "COMMIT", err)) {
        exec(s, "ROLLBACK", NULL);
        ok = false;
    }
    if (sync) {
        exec(s, "PRAGMA synchronous=NORMAL", NULL);
    }
    return ok;
}

/* ---- operations ---- */

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

static void memo_clear(sqlite_saver *s) {
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
        snprintf(id, sizeof id, "%016llx%016llx",
                 (unsigned long long)sst__hash_bytes(text, len, 0x63686b31),
                 (unsigned long long)sst__hash_bytes(text, len, 0x63686b32));
        sqlite3_stmt *st = stmt(s, S_PUT_CHUNK);
        bind_text(st, 1, id);
        sqlite3_bind_text(st, 2, text, (int)len, SQLITE_TRANSIENT);
        bool ok = step_done(s, st, "writing a history chunk", err);
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
    static const char *const drop[] = {"body", "writes", "thread", "id", "parent", "step", "kind"};
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

static sst_code sq_put(void *self, const sst_value *record, bool sync, sst_error *err) {
    sqlite_saver *s = self;
    const sst_value *kind = sst_object_get(record, "kind");
    bool snapshot = sst_is_string(kind) && strcmp(sst_string_cstr(kind), "snapshot") == 0;
    pthread_mutex_lock(&s->mu);
    bool ok = begin(s, sync, err);
    sst_value *chunked = NULL;
    sst_value *body = NULL;
    if (ok) {
        const sst_value *raw = sst_object_get(record, "body");
        body = snapshot && sst_is_object(raw) ? encode_snapshot(s, raw, &chunked, err)
                                              : sst_value_ref(raw != NULL ? raw : sst_null());
        ok = body != NULL;
    }
    sst_value *header = ok ? stored_header(record, chunked, err) : NULL;
    size_t blen = 0;
    char *htext = header != NULL ? sst_json_write(header, SST_JSON_COMPACT, NULL, err) : NULL;
    char *btext = body != NULL ? sst_json_write(body, SST_JSON_COMPACT, &blen, err) : NULL;
    ok = ok && htext != NULL && btext != NULL;
    if (ok) {
        sqlite3_stmt *st = stmt(s, S_PUT);
        bind_text(st, 1, sst_string_cstr(sst_object_get(record, "thread")));
        bind_text(st, 2, sst_string_cstr(sst_object_get(record, "id")));
        const sst_value *parent = sst_object_get(record, "parent");
        bind_text(st, 3, sst_is_string(parent) ? sst_string_cstr(parent) : NULL);
        sqlite3_bind_int64(st, 4, sst_int_value(sst_object_get(record, "step")));
        bind_text(st, 5, htext);
        sqlite3_bind_text(st, 6, btext, (int)blen, SQLITE_TRANSIENT);
        ok = step_done(s, st, "writing a checkpoint", err);
    }
    ok = commit(s, sync, ok, err);
    if (snapshot) {
        /* Only chunks of a committed snapshot are known to be in the file. */
        const sst_value *raw = sst_object_get(record, "body");
        for (size_t i = 0; ok && i < sst_array_len(chunked); i++) {
            const sst_value *key = sst_array_get(chunked, i);
            const sst_value *enc = sst_object_get(body, sst_string_cstr(key));
            memo_put(s, sst_object_get(raw, sst_string_cstr(key)), sst_object_get(enc, "chunks"));
        }
    }
    pthread_mutex_unlock(&s->mu);
    sst_value_unref(header);
    sst_value_unref(body);
    sst_value_unref(chunked);
    sst_free(htext);
    sst_free(btext);
    return ok ? SST_OK : (err != NULL && err->code != SST_OK ? err->code : SST_EIO);
}

static sst_code sq_put_writes(void *self, const char *thread, const char *id,
                              const sst_value *writes, bool sync, sst_error *err) {
    sqlite_saver *s = self;
    bool del = writes == NULL || sst_is_null(writes);
    char *text = del ? NULL : sst_json_write(writes, SST_JSON_COMPACT, NULL, err);
    if (!del && text == NULL) {
        return err != NULL && err->code != SST_OK ? err->code : SST_ENOMEM;
    }
    pthread_mutex_lock(&s->mu);
    bool ok = begin(s, sync, err);
    if (ok) {
        sqlite3_stmt *st = stmt(s, del ? S_DEL_WRITES : S_PUT_WRITES);
        bind_text(st, 1, thread);
        bind_text(st, 2, id);
        if (!del) {
            bind_text(st, 3, text);
        }
        ok = step_done(s, st, "writing pending writes", err);
        ok = commit(s, sync, ok, err);
    }
    pthread_mutex_unlock(&s->mu);
    sst_free(text);
    return ok ? SST_OK : (err != NULL ? err->code : SST_EIO);
}

/* Parses column @p col of the current row as JSON. */
static sst_value *column_json(sqlite_saver *s, sqlite3_stmt *st, int col, sst_error *err) {
    const char *text = (const char *)sqlite3_column_text(st, col);
    int n = sqlite3_column_bytes(st, col);
    if (text == NULL) {
        return sst_null();
    }
    sst_value *v = sst_json_read(text, (size_t)n, NULL, err);
    if (v == NULL) {
        sst__error_prefix(err, "checkpoint store '%s': a stored record is damaged", s->path);
    }
    return v;
}

/* Puts the columns id, parent and step (2..4) back into a stored header. */
static sst_value *with_columns(sqlite_saver *s, sqlite3_stmt *st, const char *thread, sst_value *h,
                               sst_error *err) {
    SST_UNUSED(s);
    const char *id = (const char *)sqlite3_column_text(st, 2);
    const char *parent = (const char *)sqlite3_column_text(st, 3);
    sst_value *t = sst_string_new(thread, err);
    h = t != NULL && h != NULL ? sst_object_set_take(h, "thread", t, err)
                               : (sst_value_unref(t), sst_value_unref(h), NULL);
    sst_value *v = h != NULL ? sst_string_new(id != NULL ? id : "", err) : NULL;
    h = v != NULL ? sst_object_set_take(h, "id", v, err) : (sst_value_unref(h), NULL);
    v = h != NULL ? (parent != NULL ? sst_string_new(parent, err) : sst_null()) : NULL;
    h = v != NULL ? sst_object_set_take(h, "parent", v, err) : (sst_value_unref(h), NULL);
    v = h != NULL ? sst_int_new(sqlite3_column_int64(st, 4), err) : NULL;
    h = v != NULL ? sst_object_set_take(h, "step", v, err) : (sst_value_unref(h), NULL);
    return h != NULL ? expand_header(h, sqlite3_column_int64(st, 4), err) : NULL;
}

/* Rebuilds a chunked list: its chunks' elements, then the tail. */
static sst_value *load_chunks(sqlite_saver *s, const sst_value *enc, sst_error *err) {
    sst_value *list = sst_array_empty();
    const sst_value *ids = sst_object_get(enc, "chunks");
    for (size_t i = 0; i < sst_array_len(ids) && list != NULL; i++) {
        sqlite3_stmt *st = stmt(s, S_GET_CHUNK);
        bind_text(st, 1, sst_string_cstr(sst_array_get(ids, i)));
        sst_value *chunk = NULL;
        if (sqlite3_step(st) == SQLITE_ROW) {
            const char *text = (const char *)sqlite3_column_text(st, 0);
            chunk = sst_json_read(text, (size_t)sqlite3_column_bytes(st, 0), NULL, err);
        } else {
            sst__error(err, SST_EIO, "checkpoint store '%s': history chunk %s is missing", s->path,
                       sst_string_cstr(sst_array_get(ids, i)));
        }
        sqlite3_reset(st);
        list =
            chunk != NULL ? sst_array_concat_take(list, chunk, err) : (sst_value_unref(list), NULL);
        sst_value_unref(chunk);
    }
    const sst_value *tail = sst_object_get(enc, "tail");
    return list != NULL && tail != NULL ? sst_array_concat_take(list, tail, err) : list;
}

static sst_value *sq_get(void *self, const char *thread, const char *id, sst_error *err) {
    sqlite_saver *s = self;
    pthread_mutex_lock(&s->mu);
    sqlite3_stmt *st = stmt(s, id != NULL ? S_GET_ID : S_GET_LATEST);
    bind_text(st, 1, thread);
    if (id != NULL) {
        bind_text(st, 2, id);
    }
    sst_value *rec = NULL;
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        rec = with_columns(s, st, thread, column_json(s, st, 0, err), err);
        sst_value *body = rec != NULL ? column_json(s, st, 1, err) : NULL;
        const sst_value *chunked = rec != NULL ? sst_object_get(rec, "chunked") : NULL;
        for (size_t i = 0; i < sst_array_len(chunked) && body != NULL; i++) {
            const sst_value *key = sst_array_get(chunked, i);
            sst_value *list = load_chunks(
                s, sst_object_getn(body, sst_string_cstr(key), sst_string_len(key)), err);
            body = list != NULL ? sst_object_setv_take(body, key, list, err)
                                : (sst_value_unref(body), NULL);
        }
        rec = body != NULL ? sst_object_set_take(rec, "body", body, err)
                           : (sst_value_unref(rec), NULL);
    } else if (rc == SQLITE_DONE) {
        sst__error(err, SST_ENOTFOUND, "thread '%s' has no checkpoint%s%s", thread,
                   id != NULL ? " " : "", id != NULL ? id : "");
    } else {
        db_error(s, err, "reading a checkpoint");
    }
    sqlite3_reset(st);
    if (rec != NULL) {
        sqlite3_stmt *w = stmt(s, S_GET_WRITES);
        bind_text(w, 1, thread);
        bind_text(w, 2, sst_string_cstr(sst_object_get(rec, "id")));
        rc = sqlite3_step(w);
        sst_value *writes = rc == SQLITE_ROW ? column_json(s, w, 0, err)
                            : rc == SQLITE_DONE
                                ? sst_null()
                                : (db_error(s, err, "reading pending writes"), NULL);
        sqlite3_reset(w);
        rec = writes != NULL ? sst_object_set_take(rec, "writes", writes, err)
                             : (sst_value_unref(rec), NULL);
    }
    pthread_mutex_unlock(&s->mu);
    return rec;
}

static sst_value *sq_list(void *self, const char *thread, const sst_value *filter, size_t limit,
                          sst_error *err) {
    sqlite_saver *s = self;
    pthread_mutex_lock(&s->mu);
    sqlite3_stmt *st = stmt(s, S_LIST);
    bind_text(st, 1, thread);
    sst_value *out = sst_array_empty();
    int rc = SQLITE_DONE;
    while (out != NULL && (limit == 0 || sst_array_len(out) < limit) &&
           (rc = sqlite3_step(st)) == SQLITE_ROW) {
        sst_value *h = with_columns(s, st, thread, column_json(s, st, 0, err), err);
        if (h == NULL) {
            sst_value_unref(out);
            out = NULL;
            break;
        }
        if (!sst__metadata_matches(sst_object_get(h, "metadata"), filter)) {
            sst_value_unref(h);
            continue;
        }
        h = sst_object_remove_take(h, "next", err);
        out = h != NULL ? sst_array_push_take(out, h, err) : (sst_value_unref(out), NULL);
    }
    if (out != NULL && limit == 0 && rc != SQLITE_DONE) {
        db_error(s, err, "listing checkpoints");
        sst_value_unref(out);
        out = NULL;
    }
    sqlite3_reset(st);
    pthread_mutex_unlock(&s->mu);
    return out;
}

static sst_value *sq_threads(void *self, sst_error *err) {
    sqlite_saver *s = self;
    pthread_mutex_lock(&s->mu);
    sqlite3_stmt *st = stmt(s, S_THREADS);
    sst_value *out = sst_array_empty();
    int rc;
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
        db_error(s, err, "listing threads");
        sst_value_unref(out);
        out = NULL;
    }
    sqlite3_reset(st);
    pthread_mutex_unlock(&s->mu);
    return out;
}

static sst_code sq_delete_thread(void *self, const char *thread, sst_error *err) {
    sqlite_saver *s = self;
    pthread_mutex_lock(&s->mu);
    bool ok = begin(s, false, err);
    if (ok) {
        sqlite3_stmt *st = stmt(s, S_DEL_THREAD_C);
        bind_text(st, 1, thread);
        ok = step_done(s, st, "deleting a thread", err);
        if (ok) {
            st = stmt(s, S_DEL_THREAD_W);
            bind_text(st, 1, thread);
            ok = step_done(s, st, "deleting a thread", err);
        }
        ok = commit(s, false, ok, err);
    }
    pthread_mutex_unlock(&s->mu);
    return ok ? SST_OK : (err != NULL ? err->code : SST_EIO);
}

/* One attempt at the lock row; SST_EBUSY when a live process holds it. */
static sst_code try_lock(sqlite_saver *s, const char *thread, sst_error *err) {
    int64_t pid = (int64_t)getpid(), now = (int64_t)time(NULL);
    if (!begin(s, false, err)) {
        return err != NULL ? err->code : SST_EIO;
    }
    sqlite3_stmt *st = stmt(s, S_LOCK);
    bind_text(st, 1, thread);
    sqlite3_bind_int64(st, 2, pid);
    sqlite3_bind_int64(st, 3, now);
    bool ok = step_done(s, st, "locking a thread", err);
    sst_code rc = ok ? SST_OK : SST_EIO;
    if (ok && sqlite3_changes(s->db) == 0) {
        st = stmt(s, S_LOCK_OWNER);
        bind_text(st, 1, thread);
        int64_t owner = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
        sqlite3_reset(st);
        bool dead = owner > 0 && owner != pid && kill((pid_t)owner, 0) != 0 && errno == ESRCH;
        if (dead) {
            st = stmt(s, S_LOCK_TAKE); /* left behind by a process that died */
            sqlite3_bind_int64(st, 1, pid);
            sqlite3_bind_int64(st, 2, now);
            bind_text(st, 3, thread);
            sqlite3_bind_int64(st, 4, owner);
            ok = step_done(s, st, "taking over a thread lock", err);
            rc = ok ? SST_OK : SST_EIO;
        } else {
            rc =
                sst__error(err, SST_EBUSY, "thread '%s' is busy with another invoke (process %lld)",
                           thread, (long long)owner);
        }
    }
    ok = commit(s, false, rc == SST_OK, rc == SST_OK ? err : NULL);
    return rc != SST_OK ? rc : ok ? SST_OK : (err != NULL ? err->code : SST_EIO);
}

static sst_code sq_lock(void *self, const char *thread, bool wait, sst_error *err) {
    sqlite_saver *s = self;
    for (;;) {
        pthread_mutex_lock(&s->mu);
        sst_code rc = try_lock(s, thread, err);
        pthread_mutex_unlock(&s->mu);
        if (rc != SST_EBUSY || !wait) {
            return rc;
        }
        struct timespec ts = {0, 5 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

static void sq_unlock(void *self, const char *thread) {
    sqlite_saver *s = self;
    pthread_mutex_lock(&s->mu);
    sqlite3_stmt *st = stmt(s, S_UNLOCK);
    bind_text(st, 1, thread);
    sqlite3_bind_int64(st, 2, (int64_t)getpid());
    if (sqlite3_step(st) != SQLITE_DONE) {
        /* Best effort: a lock left behind is taken over once this process is gone. */
    }
    sqlite3_reset(st);
    pthread_mutex_unlock(&s->mu);
}

static void sq_destroy(void *self) {
    sqlite_saver *s = self;
    memo_clear(s);
    for (int i = 0; i < S_COUNT; i++) {
        sqlite3_finalize(s->st[i]);
    }
    sqlite3_close(s->db);
    pthread_mutex_destroy(&s->mu);
    sst__free(s->path);
    sst__free(s);
}

/* ---- opening ---- */

static int64_t pragma_int(sqlite_saver *s, const char *sql, bool *ok) {
    sqlite3_stmt *st = NULL;
    int64_t v = 0;
    *ok = sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) == SQLITE_OK &&
          sqlite3_step(st) == SQLITE_ROW;
    if (*ok) {
        v = sqlite3_column_int64(st, 0);
    }
    sqlite3_finalize(st);
    return v;
}

/* Checks an existing file before anything is written to it. */
static sst_code check_file(sqlite_saver *s, const sst_sqlite_opts *o, bool *empty, sst_error *err) {
    bool ok;
    int64_t tables = pragma_int(s, "SELECT count(*) FROM sqlite_master", &ok);
    if (!ok) {
        return sst__error(err, SST_EIO, "checkpoint store '%s' is not a usable SQLite database: %s",
                          s->path, sqlite3_errmsg(s->db));
    }
    *empty = tables == 0;
    if (*empty) {
        return SST_OK;
    }
    int64_t app = pragma_int(s, "PRAGMA application_id", &ok);
    if (!ok || app != APP_ID) {
        return sst__error(err, SST_EIO,
                          "checkpoint store '%s' is not a superstep database (application_id "
                          "0x%08llx, expected 0x%08x)",
                          s->path, (unsigned long long)app, APP_ID);
    }
    int64_t version = pragma_int(s, "PRAGMA user_version", &ok);
    if (!ok || version > SST_SQLITE_SCHEMA_VERSION) {
        return sst__error(err, SST_EIO,
                          "checkpoint store '%s' has schema version %lld, newer than this build "
                          "supports (%d)",
                          s->path, (long long)version, SST_SQLITE_SCHEMA_VERSION);
    }
    if (o->check_integrity) {
        sqlite3_stmt *st = NULL;
        const char *res = NULL;
        char first[200] = "";
        if (sqlite3_prepare_v2(s->db, "PRAGMA quick_check", -1, &st, NULL) == SQLITE_OK &&
            sqlite3_step(st) == SQLITE_ROW) {
            res = (const char *)sqlite3_column_text(st, 0);
            snprintf(first, sizeof first, "%s", res != NULL ? res : "");
        } else {
            snprintf(first, sizeof first, "%s", sqlite3_errmsg(s->db));
        }
        sqlite3_finalize(st);
        if (strcmp(first, "ok") != 0) {
            return sst__error(err, SST_EIO, "checkpoint store '%s' is corrupt: %s", s->path, first);
        }
    }
    return SST_OK;
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

/*
 * Migrations: schema version n -> n + 1, each in its own transaction. A
 * future version appends its step here and bumps SST_SQLITE_SCHEMA_VERSION.
 */
static bool migrate(sqlite_saver *s, sst_error *err) {
    bool ok;
    int64_t version = pragma_int(s, "PRAGMA user_version", &ok);
    if (!ok) {
        return false;
    }
    while (version < SST_SQLITE_SCHEMA_VERSION) {
        if (!exec(s, "BEGIN IMMEDIATE", err)) {
            return false;
        }
        bool step_ok = false;
        char sql[64];
        if (version == 0) {
            snprintf(sql, sizeof sql, "PRAGMA application_id=%d", APP_ID);
            step_ok = exec(s, k_schema_v1, err) && exec(s, sql, err) &&
                      exec(s, "PRAGMA user_version=1", err);
        } else if (version == 1) {
            /* 1 -> 2: snapshots keep long lists as shared chunks. */
            step_ok = exec(s, k_schema_v2, err) && exec(s, "PRAGMA user_version=2", err);
        }
        if (!step_ok || !exec(s, "COMMIT", err)) {
            exec(s, "ROLLBACK", NULL);
            return false;
        }
        version++;
    }
    return true;
}

sst_checkpointer *sst_sqlite_saver_open(const char *path, const sst_sqlite_opts *opts,
                                        sst_error *err) {
    sst_sqlite_opts defaults;
    if (opts == NULL) {
        sst_sqlite_opts_init(&defaults);
        opts = &defaults;
    }
    if (path == NULL) {
        sst__error(err, SST_EINVAL, "checkpoint store: NULL path");
        return NULL;
    }
    sqlite_saver *s = sst__calloc(1, sizeof *s);
    if (s == NULL || (s->path = sst__strndup(path, strlen(path))) == NULL) {
        sst__free(s);
        sst__enomem(err);
        return NULL;
    }
    pthread_mutex_init(&s->mu, NULL);
    int rc = sqlite3_open_v2(
        path, &s->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL);
    bool empty = false;
    sst_code code = SST_OK;
    if (rc != SQLITE_OK) {
        code = sst__error(err, SST_EIO, "cannot open checkpoint store '%s': %s", path,
                          s->db != NULL ? sqlite3_errmsg(s->db) : "out of memory");
    } else {
        sqlite3_busy_timeout(s->db, opts->busy_timeout_ms);
        code = check_file(s, opts, &empty, err);
    }
    /* Small pages for a new file: a checkpoint touches three b-tree pages, and each commit
     * appends them to the WAL, so smaller pages mean less to write per superstep (2 KiB:
     * measured against 1 and 4 KiB on W3 and W4, see bench/RESULTS.md). */
    if (code == SST_OK && empty && !exec(s, "PRAGMA page_size=2048", err)) {
        code = err != NULL ? err->code : SST_EIO;
    }
    if (code == SST_OK &&
        (!exec(s, "PRAGMA journal_mode=WAL", err) || !exec(s, "PRAGMA synchronous=NORMAL", err) ||
         !exec(s, "PRAGMA temp_store=MEMORY", err) || !migrate(s, err))) {
        code = err != NULL && err->code != SST_OK ? err->code : SST_EIO;
    }
    for (int i = 0; code == SST_OK && i < S_COUNT; i++) {
        if (sqlite3_prepare_v2(s->db, k_sql[i], -1, &s->st[i], NULL) != SQLITE_OK) {
            code = db_error(s, err, "preparing statements");
        }
    }
    if (code != SST_OK) {
        sq_destroy(s);
        return NULL;
    }
    static const sst_checkpointer_ops ops = {sq_put,    sq_put_writes,    sq_get,
                                             sq_list,   sq_delete_thread, sq_lock,
                                             sq_unlock, sq_destroy,       sq_threads};
    sst_checkpointer *cp = sst_checkpointer_new(&ops, s, err);
    if (cp == NULL) {
        sq_destroy(s);
    }
    return cp;
}
