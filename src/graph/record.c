/* SPDX-License-Identifier: MIT */
/*
 * The graph's checkpoint records: how a checkpoint's state, deltas, resume
 * point and metadata become the opaque payloads of a typed record
 * (superstep/checkpoint.h), and back. The store never reads them; this file
 * is the one place that knows their layout.
 *
 * Record format 2 (written):
 *   body      snapshot: {"state": S, "chunked": [field, ...]}, each chunked
 *             field of S being {"blob": i, "n": k, "tail": [...]}: the
 *             record's blobs i .. i+k-1 (64 elements each), then the tail:
 *             a list of 64 elements or more stored as shared blobs of 64
 *             (a chat history that only grows is written once, not once
 *             per snapshot); delta: [[update, ...], ...], one group per
 *             superstep, replayed in order through the reducers
 *   next      {"since": deltas since the snapshot, "rp": resume point} with
 *             the resume point's defaults left out ("superstep" equal to the
 *             record's step, empty "pending" and "resume")
 *   metadata  {"writes": {node: ...}, ...}: "source" and "step" are the
 *             record's typed fields, added back when it is read
 * Stores that keep values (SST_SAVER_VALUES) get the same content as values
 * and no blobs.
 *
 * Record format 1 (read only: SQLite files of schema 3): "next" holds the
 * saver's former header {"next", "since_snapshot", "run_key", "metadata",
 * "chunked"} and a snapshot body is the state itself, its chunked fields
 * being {"chunks": [blob id, ...], "tail": [...]}.
 *
 * Read back, a record is the object the rest of this layer works with:
 *   {"thread", "id", "parent", "step", "kind": "snapshot" | "delta", "body",
 *    "since_snapshot", "next", "run_key", "metadata", "writes"}
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "checkpoint/checkpoint_int.h"
#include "graph_int.h"
#include "values/build.h"

#define CHUNK       64
#define CHUNK_MEMOS 8

/* ---- what the graph keeps per checkpointer ---- */

/*
 * The blob ids of a list stored by an earlier snapshot. A later version of
 * the list (add_messages keeps the elements of the old one) reuses the ids
 * of the blobs whose 64 elements are the same values, so a snapshot costs
 * only its new blobs instead of re-encoding the whole history.
 */
typedef struct chunk_memo {
    sst_value *list; /* owned reference: keeps the elements (and their addresses) alive */
    sst_value *ids;  /* owned: the id of each full chunk */
    uint64_t used;   /* LRU clock */
} chunk_memo;

typedef struct store_ext {
    pthread_mutex_t mu;
    struct {
        char *thread; /* owned, or NULL: empty slot */
        char id[40];
        sst_value *state; /* owned */
    } cache[SST__STATE_CACHE];
    unsigned next;
    chunk_memo memo[CHUNK_MEMOS];
    uint64_t memo_clock;
} store_ext;

static void ext_free(void *p) {
    store_ext *x = p;
    for (int i = 0; i < SST__STATE_CACHE; i++) {
        sst__free(x->cache[i].thread);
        sst_value_unref(x->cache[i].state);
    }
    for (int i = 0; i < CHUNK_MEMOS; i++) {
        sst_value_unref(x->memo[i].list);
        sst_value_unref(x->memo[i].ids);
    }
    pthread_mutex_destroy(&x->mu);
    sst__free(x);
}

static void *ext_new(sst_error *err) {
    store_ext *x = sst__calloc(1, sizeof *x);
    if (x == NULL) {
        sst__enomem(err);
        return NULL;
    }
    pthread_mutex_init(&x->mu, NULL);
    return x;
}

static store_ext *ext_of(sst_checkpointer *cp) {
    sst_error ignored;
    return sst__checkpointer_ext(cp, ext_new, ext_free, &ignored);
}

sst_value *sst__cache_get(sst_checkpointer *cp, const char *thread, const char *id) {
    store_ext *x = ext_of(cp);
    sst_value *out = NULL;
    if (x == NULL) {
        return NULL;
    }
    pthread_mutex_lock(&x->mu);
    for (int i = 0; i < SST__STATE_CACHE && out == NULL; i++) {
        if (x->cache[i].thread != NULL && strcmp(x->cache[i].id, id) == 0 &&
            strcmp(x->cache[i].thread, thread) == 0) {
            out = sst_value_ref(x->cache[i].state);
        }
    }
    pthread_mutex_unlock(&x->mu);
    return out;
}

void sst__cache_put(sst_checkpointer *cp, const char *thread, const char *id,
                    const sst_value *state) {
    store_ext *x = ext_of(cp);
    char *t = x != NULL ? sst__strndup(thread, strlen(thread)) : NULL;
    if (t == NULL || strlen(id) >= sizeof x->cache[0].id) {
        sst__free(t);
        return; /* a cache: out of memory only costs a replay later */
    }
    pthread_mutex_lock(&x->mu);
    unsigned i = x->next++ % SST__STATE_CACHE;
    sst__free(x->cache[i].thread);
    sst_value_unref(x->cache[i].state);
    x->cache[i].thread = t;
    snprintf(x->cache[i].id, sizeof x->cache[i].id, "%s", id);
    x->cache[i].state = sst_value_ref(state);
    pthread_mutex_unlock(&x->mu);
}

/* ---- blobs of long lists (the memo_* functions run under the ext mutex) ---- */

/* The memo of a list that starts with the same element as @p list, or NULL. */
static chunk_memo *memo_find(store_ext *x, const sst_value *list) {
    const sst_value *first = sst_array_get(list, 0);
    for (int i = 0; i < CHUNK_MEMOS; i++) {
        if (x->memo[i].list != NULL && sst_array_get(x->memo[i].list, 0) == first) {
            return &x->memo[i];
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

/* Remembers @p list's chunk ids once their record is stored. */
static void memo_put(store_ext *x, const sst_value *list, const sst_value *ids) {
    chunk_memo *m = memo_find(x, list);
    if (m == NULL) {
        m = &x->memo[0];
        for (int i = 1; i < CHUNK_MEMOS; i++) {
            if (x->memo[i].used < m->used) {
                m = &x->memo[i];
            }
        }
    }
    sst_value_unref(m->list);
    sst_value_unref(m->ids);
    m->list = sst_value_ref(list);
    m->ids = sst_value_ref(ids);
    m->used = ++x->memo_clock;
}

static void memo_clear(store_ext *x) {
    for (int i = 0; i < CHUNK_MEMOS; i++) {
        sst_value_unref(x->memo[i].list);
        sst_value_unref(x->memo[i].ids);
        x->memo[i] = (chunk_memo){0};
    }
}

/* The blobs of a record being written: ids, and texts of the new ones. */
typedef struct blob_set {
    sst_blob *b;
    char **texts; /* owned, parallel to b (NULL: stored earlier) */
    size_t n, cap;
} blob_set;

static void blob_set_free(blob_set *s) {
    for (size_t i = 0; i < s->n; i++) {
        sst_free(s->texts[i]);
    }
    sst__free(s->b);
    sst__free(s->texts);
}

/* The id of a blob: two 64-bit hashes of its text. */
static void blob_id(const char *text, size_t len, char id[40]) {
    snprintf(id, 40, "%016llx%016llx", (unsigned long long)sst__hash_bytes(text, len, 0x63686b31),
             (unsigned long long)sst__hash_bytes(text, len, 0x63686b32));
}

/* Adds blob @p id (its value kept alive by @p idv) with @p text (taken; NULL: stored before). */
static bool blob_add(blob_set *s, const sst_value *idv, char *text, size_t len) {
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 16;
        sst_blob *b = sst__realloc(s->b, cap * sizeof *b);
        if (b != NULL) {
            s->b = b;
        }
        char **t = b != NULL ? sst__realloc(s->texts, cap * sizeof *t) : NULL;
        if (t == NULL) {
            sst_free(text);
            return false;
        }
        s->texts = t;
        s->cap = cap;
    }
    s->texts[s->n] = text;
    s->b[s->n++] = (sst_blob){sst_string_cstr(idv), {.data = text, .len = len}};
    return true;
}

/*
 * {"blob": first, "n": count, "tail": [the rest]} for @p list (new): its full
 * chunks are the record's blobs first .. first + count - 1, added to @p blobs
 * (*ids gets their ids, new). Chunks @p memo (may be NULL) knows go without
 * their text.
 */
static sst_value *chunk_list(const chunk_memo *memo, const sst_value *list, blob_set *blobs,
                             sst_value **ids, sst_error *err) {
    size_t n = sst_array_len(list), full = n / CHUNK * CHUNK, first = blobs->n;
    *ids = sst_array_empty();
    for (size_t i = 0; i < full && *ids != NULL; i += CHUNK) {
        const sst_value *known = memo_id(memo, list, i / CHUNK);
        char *text = NULL;
        size_t len = 0;
        sst_value *idv = known != NULL ? sst_value_ref(known) : NULL;
        if (known == NULL) {
            sst_value *chunk = sst_array_empty();
            for (size_t k = i; k < i + CHUNK && chunk != NULL; k++) {
                chunk = sst_array_push_take(chunk, sst_value_ref(sst_array_get(list, k)), err);
            }
            text = chunk != NULL ? sst_json_write(chunk, SST_JSON_COMPACT, &len, err) : NULL;
            sst_value_unref(chunk);
            char id[40];
            if (text != NULL) {
                blob_id(text, len, id);
                idv = sst_string_new(id, err);
            }
        }
        *ids = idv != NULL ? sst_array_push_take(*ids, idv, err) : (sst_value_unref(*ids), NULL);
        if (*ids != NULL &&
            !blob_add(blobs, sst_array_get(*ids, sst_array_len(*ids) - 1), text, len)) {
            sst_value_unref(*ids);
            *ids = NULL;
            sst__enomem(err);
        } else if (*ids == NULL) {
            sst_free(text);
        }
    }
    sst_value *tail = *ids != NULL ? sst_array_empty() : NULL;
    for (size_t k = full; k < n && tail != NULL; k++) {
        tail = sst_array_push_take(tail, sst_value_ref(sst_array_get(list, k)), err);
    }
    sst_value *out = sst__set_take(sst__object_with_capacity(3, err), "blob",
                                   sst_int_new((int64_t)first, err), err);
    out = sst__set_take(out, "n", sst_int_new((int64_t)(blobs->n - first), err), err);
    out = sst__set_take(out, "tail", tail, err);
    if (out == NULL) {
        sst_value_unref(*ids);
        *ids = NULL;
    }
    return out;
}

/*
 * A snapshot body {"state", "chunked"} with long lists as blobs (byte stores
 * only); *ids gets {field: [blob ids]} (new) for the memo.
 */
static sst_value *snapshot_body(store_ext *x, const sst_value *state, bool chunk, bool resend,
                                blob_set *blobs, sst_value **ids, sst_error *err) {
    sst_value *s = sst_value_ref(state);
    sst_value *chunked = sst_array_empty();
    *ids = sst_object_empty();
    for (size_t i = 0; chunk && i < sst_object_len(state) && s != NULL && chunked != NULL; i++) {
        const sst_value *v = sst_object_value_at(state, i);
        if (!sst_is_array(v) || sst_array_len(v) < CHUNK) {
            continue;
        }
        const sst_value *key = sst_object_key_at(state, i);
        /* The memo's entry, held by reference: the encoding runs unlocked. */
        chunk_memo memo = {0};
        pthread_mutex_lock(&x->mu);
        const chunk_memo *m = resend ? NULL : memo_find(x, v);
        if (m != NULL) {
            memo = (chunk_memo){sst_value_ref(m->list), sst_value_ref(m->ids), 0};
        }
        pthread_mutex_unlock(&x->mu);
        sst_value *list_ids = NULL;
        sst_value *enc = chunk_list(memo.list != NULL ? &memo : NULL, v, blobs, &list_ids, err);
        sst_value_unref(memo.list);
        sst_value_unref(memo.ids);
        s = enc != NULL ? sst_object_setv_take(s, key, enc, err) : (sst_value_unref(s), NULL);
        *ids = list_ids != NULL ? sst_object_setv_take(*ids, key, list_ids, err)
                                : (sst_value_unref(*ids), NULL);
        chunked = sst_array_push_take(chunked, sst_value_ref(key), err);
    }
    sst_value *body = s != NULL ? sst__set_take(sst_object_empty(), "state", s, err) : NULL;
    if (body != NULL && sst_array_len(chunked) > 0) {
        body = sst__set_take(body, "chunked", chunked, err);
    } else {
        sst_value_unref(chunked);
    }
    if (body == NULL || *ids == NULL) {
        sst_value_unref(body);
        sst_value_unref(*ids);
        *ids = NULL;
        return NULL;
    }
    return body;
}

/* ---- writing ---- */

/* The resume point without what reading puts back (see the file comment). */
static sst_value *stripped_next(const sst_value *next, int64_t step, uint64_t since,
                                sst_error *err) {
    sst_value *out =
        sst__set_take(sst_object_empty(), "since", sst_int_new((int64_t)since, err), err);
    if (!sst_is_object(next) || out == NULL) {
        return out;
    }
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
    return sst__set_take(out, "rp", n, err);
}

/* A payload for @p v: the value itself for value stores, else its JSON text (in *text). */
static sst_code payload_of(const sst_checkpointer *cp, const sst_value *v, sst_payload *p,
                           char **text, sst_error *err) {
    *p = (sst_payload){0};
    *text = NULL;
    if (sst_checkpointer_flags(cp) & SST_SAVER_VALUES) {
        p->value = v;
        return SST_OK;
    }
    *text = sst_json_write(v, SST_JSON_COMPACT, &p->len, err);
    p->data = *text;
    return *text != NULL ? SST_OK : sst__code(err);
}

/*
 * Puts the record, sending every blob again if the store lost one the memo knew. Whether
 * the commit is flushed is the saver's flush policy (sst_sqlite_opts.synchronous,
 * sst_postgres_saver_opts.synchronous_commit), not the durability mode: put's @c sync
 * (flush this one whatever the policy) stays false.
 */
static sst_code put_with_blobs(sst_graph_thread *th, sst_checkpoint *r, const sst__put *w,
                               sst_error *err) {
    store_ext *x = ext_of(th->cp);
    bool bytes = !(sst_checkpointer_flags(th->cp) & SST_SAVER_VALUES);
    sst_code rc = SST_OK;
    for (int attempt = 0; attempt < 2; attempt++) {
        blob_set blobs = {0};
        char *body_text = NULL;
        sst_value *ids = NULL;
        sst_value *body = w->snapshot ? snapshot_body(x, w->state, bytes && x != NULL, attempt > 0,
                                                      &blobs, &ids, err)
                                      : sst_value_ref(w->groups);
        rc = body != NULL ? payload_of(th->cp, body, &r->body, &body_text, err) : sst__code(err);
        r->blobs = blobs.b;
        r->n_blobs = blobs.n;
        rc = rc == SST_OK ? sst_checkpointer_put(th->cp, r, false, err) : rc;
        if (rc == SST_OK && w->snapshot && x != NULL && bytes) {
            /* Only blobs of a stored record are known to be in the store. */
            pthread_mutex_lock(&x->mu);
            for (size_t i = 0; i < sst_object_len(ids); i++) {
                const sst_value *key = sst_object_key_at(ids, i);
                memo_put(x, sst_object_getn(w->state, sst_string_cstr(key), sst_string_len(key)),
                         sst_object_value_at(ids, i));
            }
            pthread_mutex_unlock(&x->mu);
        }
        sst_value_unref(ids);
        sst_free(body_text);
        sst_value_unref(body);
        blob_set_free(&blobs);
        if (rc != SST_ENOTFOUND || !w->snapshot || x == NULL) {
            break;
        }
        pthread_mutex_lock(&x->mu); /* a blob was swept: forget them all and resend */
        memo_clear(x);
        pthread_mutex_unlock(&x->mu);
        sst_error_clear(err);
    }
    r->blobs = NULL;
    r->n_blobs = 0;
    return rc;
}

/* The run id stored for a run key "THREAD/ID": ID (the thread is the record's own). */
static const char *run_id_of(const sst_graph_thread *th, const char *run_key) {
    size_t n = strlen(th->thread_id);
    return run_key != NULL && strncmp(run_key, th->thread_id, n) == 0 && run_key[n] == '/'
               ? run_key + n + 1
               : run_key;
}

sst_code sst__record_put(sst_graph_thread *th, const sst__put *w, sst_error *err) {
    int64_t step = w->step;
    sst_value *meta = sst_value_ref(w->extra_meta != NULL ? w->extra_meta : sst_object_empty());
    meta = sst__set_take(
        meta, "writes", sst_value_ref(w->writes_meta != NULL ? w->writes_meta : sst_object_empty()),
        err);
    sst_value *next = stripped_next(w->next, step, w->since, err);
    sst_checkpoint r = {
        .format = SST_CHECKPOINT_FORMAT,
        .thread_id = th->thread_id,
        .ns = th->ns,
        .id = w->id,
        .parent_id = w->parent,
        .step = step,
        .source = w->source,
        .run_id = run_id_of(th, w->run_key),
        .kind = w->snapshot ? SST_CHECKPOINT_SNAPSHOT : SST_CHECKPOINT_DELTA,
        .created_at = w->created_at != 0 ? w->created_at : (int64_t)sst__now_ms(),
        .status = SST_THREAD_IDLE,
        .fork = w->fork,
        .put_flags = w->flags,
    };
    char *meta_text = NULL, *next_text = NULL;
    sst_code rc = meta != NULL && next != NULL ? SST_OK : sst__code(err);
    rc = rc == SST_OK ? payload_of(th->cp, meta, &r.metadata, &meta_text, err) : rc;
    rc = rc == SST_OK ? payload_of(th->cp, next, &r.next, &next_text, err) : rc;
    rc = rc == SST_OK ? put_with_blobs(th, &r, w, err) : rc;
    if (rc == SST_OK && (w->flags & (SST_PUT_TAKE_LOCK | SST_PUT_GIVE_LOCK))) {
        atomic_store(&th->lock, (w->flags & SST_PUT_GIVE_LOCK) ? SST__LOCK_GIVEN : SST__LOCK_HELD);
    } else if ((w->flags & SST_PUT_TAKE_LOCK) && (rc == SST_EBUSY || rc == SST_ECONFLICT)) {
        /* Another holds the thread, or it moved since it was loaded: invoke.c takes the
         * lock and starts again from the thread's latest checkpoint. */
        th->lock_lost = true;
    }
    sst_free(meta_text);
    sst_free(next_text);
    sst_value_unref(meta);
    sst_value_unref(next);
    return rc;
}

/* ---- reading ---- */

/* Parses payload @p p of record @p r (NULL when empty). */
static sst_value *parse(const sst_checkpoint *r, const sst_payload *p, const char *what,
                        sst_error *err) {
    if (sst__payload_empty(p)) {
        return NULL;
    }
    sst_value *v = sst__payload_parse(p, (size_t)1 << 30, err);
    if (v == NULL) {
        sst__error_prefix(err, "checkpoint %s of thread '%s': its %s is damaged", r->id,
                          r->thread_id, what);
    }
    return v;
}

/* The resume point with its defaults put back, or null. */
static sst_value *expand_next(const sst_value *rp, int64_t step, sst_error *err) {
    if (!sst_is_object(rp)) {
        return sst_null();
    }
    sst_value *n = sst_value_ref(rp);
    if (sst_object_get(n, "superstep") == NULL) {
        n = sst__set_take(n, "superstep", sst_int_new(step, err), err);
    }
    if (n != NULL && sst_object_get(n, "pending") == NULL) {
        n = sst__set_take(n, "pending", sst_array_empty(), err);
    }
    if (n != NULL && sst_object_get(n, "resume") == NULL) {
        n = sst__set_take(n, "resume", sst_object_empty(), err);
    }
    return n;
}

/* Metadata with "source" and "step" from the record's fields put back (at the end). */
static sst_value *full_metadata(const sst_checkpoint *r, const sst_value *stored, sst_error *err) {
    sst_value *m = stored != NULL ? sst_value_ref(stored) : sst_object_empty();
    if (sst_object_get(m, "source") == NULL) {
        m = sst__set_take(m, "source", sst_string_new(r->source != NULL ? r->source : "loop", err),
                          err);
    }
    if (m != NULL && sst_object_get(m, "step") == NULL) {
        m = sst__set_take(m, "step", sst_int_new(r->step, err), err);
    }
    return m;
}

/* Appends to @p list (taken) the elements of blob @p b of @p r. */
static sst_value *add_blob(const sst_checkpoint *r, const sst_blob *b, const char *want,
                           sst_value *list, sst_error *err) {
    sst_value *chunk = b != NULL ? parse(r, &b->content, "history blob", err) : NULL;
    if (b == NULL) {
        sst__error(err, SST_EIO, "checkpoint %s of thread '%s': history blob %s is missing", r->id,
                   r->thread_id, want);
    }
    list = chunk != NULL ? sst_array_concat_take(list, chunk, err) : (sst_value_unref(list), NULL);
    sst_value_unref(chunk);
    return list;
}

/*
 * A chunked list put back together from the record's blobs: format 2 names a
 * range of them ({"blob", "n"}), format 1 their ids ({"chunks"}); then the tail.
 */
static sst_value *unchunk(const sst_checkpoint *r, const sst_value *enc, sst_error *err) {
    sst_value *list = sst_array_empty();
    const sst_value *ids = sst_object_get(enc, "chunks");
    for (size_t i = 0; i < sst_array_len(ids) && list != NULL; i++) {
        const char *want = sst_string_cstr(sst_array_get(ids, i));
        const sst_blob *b = NULL;
        for (size_t k = 0; k < r->n_blobs && b == NULL; k++) {
            b = strcmp(r->blobs[k].id, want) == 0 ? &r->blobs[k] : NULL;
        }
        list = add_blob(r, b, want, list, err);
    }
    int64_t first = sst_int_value(sst_object_get(enc, "blob"));
    int64_t n = sst_int_value(sst_object_get(enc, "n"));
    for (int64_t i = 0; i < n && list != NULL; i++) {
        bool in = first >= 0 && (uint64_t)(first + i) < r->n_blobs;
        list = add_blob(r, in ? &r->blobs[first + i] : NULL, "(out of range)", list, err);
    }
    const sst_value *tail = sst_object_get(enc, "tail");
    return list != NULL && tail != NULL ? sst_array_concat_take(list, tail, err) : list;
}

/* The state or the delta groups of @p r. */
static sst_value *decode_body(const sst_checkpoint *r, const sst_value *legacy_header,
                              sst_error *err) {
    sst_value *body = parse(r, &r->body, "body", err);
    if (r->kind != SST_CHECKPOINT_SNAPSHOT) { /* delta groups; an empty body has none */
        return body != NULL || !sst__payload_empty(&r->body) ? body : sst_array_empty();
    }
    sst_value *state = sst_value_ref(r->format <= 1 ? body : sst_object_get(body, "state"));
    const sst_value *chunked =
        r->format <= 1 ? sst_object_get(legacy_header, "chunked") : sst_object_get(body, "chunked");
    for (size_t i = 0; i < sst_array_len(chunked) && state != NULL; i++) {
        const sst_value *key = sst_array_get(chunked, i);
        sst_value *list =
            unchunk(r, sst_object_getn(state, sst_string_cstr(key), sst_string_len(key)), err);
        state = list != NULL ? sst_object_setv_take(state, key, list, err)
                             : (sst_value_unref(state), NULL);
    }
    sst_value_unref(body);
    if (state == NULL) {
        sst__error_unless_set(err, SST_EIO, "checkpoint %s of thread '%s': its body has no state",
                              r->id, r->thread_id);
    }
    return state;
}

/* The run key of @p r: "THREAD/ID" for a stored id (format 1 stored the whole key). */
static sst_value *run_key_of(const sst_checkpoint *r, sst_error *err) {
    if (r->run_id == NULL || strchr(r->run_id, '/') != NULL) {
        return sst_string_new(r->run_id != NULL ? r->run_id : "", err);
    }
    sst__buf b;
    sst__buf_init(&b);
    sst__buf_printf(&b, "%s/%s", r->thread_id, r->run_id);
    size_t len;
    char *key = sst__buf_detach(&b, &len);
    if (key == NULL) {
        sst__enomem(err);
        return NULL;
    }
    sst_value *v = sst_string_newn(key, len, err);
    sst__free(key);
    return v;
}

/* The record object of @p r (see the file comment); @p with_body for get. */
static sst_value *record_value(const sst_checkpoint *r, bool with_body, sst_error *err) {
    sst_value *head = parse(r, &r->next, "header", err);
    if (head == NULL && !sst__payload_empty(&r->next)) {
        return NULL;
    }
    bool legacy = r->format <= 1;
    sst_value *stored = legacy ? sst_value_ref(sst_object_get(head, "metadata"))
                               : parse(r, &r->metadata, "metadata", err);
    if (stored == NULL && !legacy && !sst__payload_empty(&r->metadata)) {
        sst_value_unref(head);
        return NULL;
    }
    const sst_value *rp = sst_object_get(head, legacy ? "next" : "rp");
    const sst_value *since = sst_object_get(head, legacy ? "since_snapshot" : "since");
    sst_value *o = sst__object_with_capacity(12, err);
    o = sst__set_take(o, "thread", sst_string_new(r->thread_id, err), err);
    o = sst__set_take(o, "id", sst_string_new(r->id, err), err);
    o = sst__set_take(o, "parent", r->parent_id ? sst_string_new(r->parent_id, err) : sst_null(),
                      err);
    o = sst__set_take(o, "step", sst_int_new(r->step, err), err);
    o = sst__set_take(o, "created_at", sst_int_new(r->created_at, err), err);
    o = sst__set_take(
        o, "kind", sst_string_new(r->kind == SST_CHECKPOINT_SNAPSHOT ? "snapshot" : "delta", err),
        err);
    o = sst__set_take(o, "since_snapshot", sst_int_new(sst_int_value(since), err), err);
    o = sst__set_take(o, "run_key", run_key_of(r, err), err);
    o = sst__set_take(o, "metadata", full_metadata(r, stored, err), err);
    if (with_body) {
        o = sst__set_take(o, "next", expand_next(rp, r->step, err), err);
        o = sst__set_take(o, "body", decode_body(r, head, err), err);
        sst_value *w = parse(r, &r->writes, "pending writes", err);
        o = w != NULL || sst__payload_empty(&r->writes)
                ? sst__set_take(o, "writes", w ? w : sst_null(), err)
                : (sst_value_unref(o), NULL);
    }
    sst_value_unref(head);
    sst_value_unref(stored);
    return o;
}

sst_value *sst__record_get(sst_graph_thread *th, const char *id, sst_error *err) {
    sst_checkpoint *r = sst_checkpointer_get(th->cp, th->thread_id, th->ns, id, err);
    sst_value *v = r != NULL ? record_value(r, true, err) : NULL;
    sst_checkpoint_free(r);
    return v;
}

typedef struct list_ctx {
    sst_value *out;
    sst_error *err;
} list_ctx;

static bool add_head(const sst_checkpoint *r, void *user_data) {
    list_ctx *l = user_data;
    sst_value *h = record_value(r, false, l->err);
    l->out = h != NULL ? sst_array_push_take(l->out, h, l->err) : (sst_value_unref(l->out), NULL);
    return l->out != NULL;
}

sst_value *sst__record_list(sst_graph_thread *th, const sst_value *filter, const char *before,
                            size_t limit, sst_error *err) {
    sst_checkpoint_query q = {.thread_id = th->thread_id,
                              .ns = th->ns,
                              .filter = filter,
                              .before = before,
                              .limit = limit};
    list_ctx l = {sst_array_empty(), err};
    sst_code rc = sst_checkpointer_list(th->cp, &q, add_head, &l, err);
    if (rc != SST_OK || l.out == NULL) { /* a failed listing, or add_head's (recorded) */
        sst_value_unref(l.out);
        return NULL;
    }
    return l.out;
}
