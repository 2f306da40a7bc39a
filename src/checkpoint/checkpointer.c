/* SPDX-License-Identifier: MIT */
/*
 * The checkpointer wrapper: the reference count, the argument and format
 * checks every call goes through, copies of records, and the helpers the
 * savers share (metadata filters, payload parsing).
 */
#include <stdio.h>
#include <string.h>

#include "checkpoint_int.h"
#include "values/build.h"

/* ---- the wrapper ---- */

/* Required operations, and the optional ones a smaller ops struct may lack. */
#define HAS_OP(cp, field)                                                                          \
    ((cp)->ops.size >= offsetof(sst_checkpointer_ops, field) + sizeof((cp)->ops.field) &&          \
     (cp)->ops.field != NULL)

sst_checkpointer *sst_checkpointer_new(const sst_checkpointer_ops *ops, void *self,
                                       sst_error *err) {
    if (ops == NULL || ops->size < offsetof(sst_checkpointer_ops, threads)) {
        sst__error(err, SST_EINVAL,
                   "checkpointer: ops.size must be sizeof(sst_checkpointer_ops) (got %zu)",
                   ops != NULL ? ops->size : 0);
        return NULL;
    }
    sst_checkpointer *cp = sst__calloc(1, sizeof *cp);
    if (cp == NULL) {
        sst__enomem(err);
        return NULL;
    }
    /* Fields past the implementation's size stay zero: not implemented. */
    memcpy(&cp->ops, ops, ops->size < sizeof cp->ops ? ops->size : sizeof cp->ops);
    cp->ops.size = ops->size;
    if (!HAS_OP(cp, put) || !HAS_OP(cp, put_writes) || !HAS_OP(cp, get) || !HAS_OP(cp, list) ||
        !HAS_OP(cp, lock) || !HAS_OP(cp, unlock)) {
        sst__free(cp);
        sst__error(err, SST_EINVAL,
                   "checkpointer: put, put_writes, get, list, lock and unlock are required");
        return NULL;
    }
    cp->self = self;
    atomic_init(&cp->refs, 1);
    pthread_mutex_init(&cp->mu, NULL);
    return cp;
}

sst_checkpointer *sst_checkpointer_ref(sst_checkpointer *cp) {
    if (cp != NULL) {
        atomic_fetch_add_explicit(&cp->refs, 1, memory_order_relaxed);
    }
    return cp;
}

void sst_checkpointer_free(sst_checkpointer *cp) {
    if (cp == NULL || atomic_fetch_sub_explicit(&cp->refs, 1, memory_order_acq_rel) != 1) {
        return;
    }
    if (HAS_OP(cp, destroy)) {
        cp->ops.destroy(cp->self);
    }
    if (cp->ext != NULL && cp->ext_free != NULL) {
        cp->ext_free(cp->ext);
    }
    pthread_mutex_destroy(&cp->mu);
    sst__free(cp);
}

void *sst_checkpointer_self(const sst_checkpointer *cp) {
    return cp != NULL ? cp->self : NULL;
}

unsigned sst_checkpointer_flags(const sst_checkpointer *cp) {
    return cp != NULL ? cp->ops.flags : 0;
}

void *sst__checkpointer_ext(sst_checkpointer *cp, void *(*make)(sst_error *err),
                            void (*free_fn)(void *ext), sst_error *err) {
    pthread_mutex_lock(&cp->mu);
    if (cp->ext == NULL) {
        cp->ext = make(err);
        cp->ext_free = free_fn;
    }
    void *ext = cp->ext;
    pthread_mutex_unlock(&cp->mu);
    return ext;
}

const char *sst_thread_status_name(sst_thread_status s) {
    switch (s) {
        case SST_THREAD_IDLE:
            return "idle";
        case SST_THREAD_BUSY:
            return "busy";
        case SST_THREAD_INTERRUPTED:
            return "interrupted";
        case SST_THREAD_ERROR:
            return "error";
    }
    return "?";
}

/* ---- argument checks ---- */

static sst_code need_cp(const sst_checkpointer *cp, const char *what, sst_error *err) {
    return cp != NULL ? SST_OK : sst__error(err, SST_EINVAL, "%s: NULL checkpointer", what);
}

static sst_code need_str(const char *s, const char *what, const char *name, sst_error *err) {
    return s != NULL && s[0] != '\0'
               ? SST_OK
               : sst__error(err, SST_EINVAL, "%s: %s must be a non-empty string", what, name);
}

static sst_code optional(const sst_checkpointer *cp, bool has, const char *what, sst_error *err) {
    if (need_cp(cp, what, err) != SST_OK) {
        return SST_EINVAL;
    }
    return has ? SST_OK : sst__error(err, SST_ENOTSUP, "%s: this saver does not support it", what);
}

/* Blob ids are 1 to 128 characters of [A-Za-z0-9_.:-] (stores may list them with commas). */
static sst_code check_blob_id(const char *id, sst_error *err) {
    size_t n = id != NULL ? strlen(id) : 0;
    bool ok = n > 0 && n <= 128;
    for (size_t i = 0; ok && i < n; i++) {
        char ch = id[i];
        ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
             ch == '_' || ch == '.' || ch == ':' || ch == '-';
    }
    return ok ? SST_OK
              : sst__error(err, SST_EINVAL,
                           "checkpointer put: blob id '%.40s' must be 1 to 128 characters of "
                           "A-Z, a-z, 0-9, '_', '.', ':' and '-'",
                           id != NULL ? id : "(null)");
}

static sst_code check_record(const sst_checkpoint *r, sst_error *err) {
    static const char what[] = "checkpointer put";
    if (r == NULL) {
        return sst__error(err, SST_EINVAL, "%s: NULL record", what);
    }
    sst_code rc = need_str(r->thread_id, what, "thread_id", err);
    rc = rc == SST_OK ? need_str(r->id, what, "id", err) : rc;
    if (rc == SST_OK && r->format == 0) {
        rc = sst__error(err, SST_EINVAL, "%s: format must be set (SST_CHECKPOINT_FORMAT)", what);
    }
    if (rc == SST_OK && r->kind != SST_CHECKPOINT_SNAPSHOT && r->kind != SST_CHECKPOINT_DELTA) {
        rc = sst__error(err, SST_EINVAL, "%s: kind %d is neither snapshot nor delta", what,
                        (int)r->kind);
    }
    if (rc == SST_OK && (unsigned)r->status > SST_THREAD_ERROR) {
        rc = sst__error(err, SST_EINVAL, "%s: status %d is unknown", what, (int)r->status);
    }
    for (size_t i = 0; rc == SST_OK && i < r->n_blobs; i++) {
        rc = check_blob_id(r->blobs[i].id, err);
    }
    return rc;
}

/* ---- payloads in the form the store takes ---- */

/*
 * A value payload written as JSON text in *text (new, freed by the caller),
 * for a store that keeps bytes; payloads with bytes (or empty) stay as they are.
 */
static sst_code encode_payload(sst_payload *p, char **text, sst_error *err) {
    *text = NULL;
    if (p->data != NULL || p->value == NULL) {
        return SST_OK;
    }
    if ((*text = sst_json_write(p->value, SST_JSON_COMPACT, &p->len, err)) == NULL) {
        return sst__code(err);
    }
    p->data = *text;
    p->value = NULL;
    return SST_OK;
}

/* A record as a byte store takes it, with the texts made for it. */
typedef struct encoded {
    sst_checkpoint rec;
    sst_blob *blobs; /* a copy of the blobs when one of them was a value */
    char **texts;    /* one per payload: body, next, metadata, then the blobs' */
} encoded;

static void encoded_free(encoded *e) {
    for (size_t i = 0; e->texts != NULL && i < 3 + e->rec.n_blobs; i++) {
        sst_free(e->texts[i]);
    }
    sst__free(e->texts);
    sst__free(e->blobs);
}

/* @p r with its value payloads written as JSON text, for stores that keep bytes. */
static sst_code encode_record(encoded *e, const sst_checkpoint *r, sst_error *err) {
    e->rec = *r;
    if ((e->texts = sst__calloc(3 + r->n_blobs, sizeof *e->texts)) == NULL) {
        return sst__enomem(err);
    }
    sst_code rc = encode_payload(&e->rec.body, &e->texts[0], err);
    rc = rc == SST_OK ? encode_payload(&e->rec.next, &e->texts[1], err) : rc;
    rc = rc == SST_OK ? encode_payload(&e->rec.metadata, &e->texts[2], err) : rc;
    bool blob_values = false;
    for (size_t i = 0; i < r->n_blobs; i++) {
        blob_values |= r->blobs[i].content.data == NULL && r->blobs[i].content.value != NULL;
    }
    if (rc == SST_OK && blob_values) {
        e->blobs = sst__malloc(r->n_blobs * sizeof *e->blobs);
        if (e->blobs == NULL) {
            return sst__enomem(err);
        }
        memcpy(e->blobs, r->blobs, r->n_blobs * sizeof *e->blobs);
        for (size_t i = 0; rc == SST_OK && i < r->n_blobs; i++) {
            rc = encode_payload(&e->blobs[i].content, &e->texts[3 + i], err);
        }
        e->rec.blobs = e->blobs;
    }
    return rc;
}

/* ---- the calls ---- */

sst_code sst_checkpointer_put(sst_checkpointer *cp, const sst_checkpoint *rec, bool sync,
                              sst_error *err) {
    SST__ERR_LOCAL(err);
    sst_code rc = need_cp(cp, "checkpointer put", err);
    rc = rc == SST_OK ? check_record(rec, err) : rc;
    if (rc != SST_OK) {
        return rc;
    }
    encoded e = {0};
    rc = (cp->ops.flags & SST_SAVER_VALUES) ? (e.rec = *rec, SST_OK) : encode_record(&e, rec, err);
    if (rc == SST_OK && e.rec.ns == NULL) {
        e.rec.ns = "";
    }
    /* The lock flags, for a store that cannot take them in its put: as lock and unlock. */
    unsigned lock_flags = rec->put_flags & (SST_PUT_TAKE_LOCK | SST_PUT_GIVE_LOCK);
    bool emulate = lock_flags != 0 && !(cp->ops.flags & SST_SAVER_LOCK_IN_PUT);
    if (emulate) {
        e.rec.put_flags &= ~lock_flags;
    }
    if (rc == SST_OK && emulate && (lock_flags & SST_PUT_TAKE_LOCK)) {
        rc = cp->ops.lock(cp->self, rec->thread_id, false, err);
    }
    if (rc == SST_OK) {
        rc = cp->ops.put(cp->self, &e.rec, sync, err);
        if (emulate && (lock_flags & (rc == SST_OK ? SST_PUT_GIVE_LOCK : SST_PUT_TAKE_LOCK))) {
            cp->ops.unlock(cp->self, rec->thread_id);
        }
    }
    encoded_free(&e);
    return rc;
}

sst_code sst_checkpointer_put_writes(sst_checkpointer *cp, const char *thread_id, const char *ns,
                                     const char *id, const sst_payload *writes,
                                     sst_thread_status status, bool sync, sst_error *err) {
    SST__ERR_LOCAL(err);
    static const char what[] = "checkpointer put_writes";
    sst_code rc = need_cp(cp, what, err);
    rc = rc == SST_OK ? need_str(thread_id, what, "thread_id", err) : rc;
    rc = rc == SST_OK ? need_str(id, what, "id", err) : rc;
    if (rc == SST_OK && (unsigned)status > SST_THREAD_ERROR) {
        rc = sst__error(err, SST_EINVAL, "%s: status %d is unknown", what, (int)status);
    }
    if (rc != SST_OK) {
        return rc;
    }
    sst_payload w = writes != NULL ? *writes : (sst_payload){0};
    char *text = NULL;
    if (!(cp->ops.flags & SST_SAVER_VALUES) && (rc = encode_payload(&w, &text, err)) != SST_OK) {
        return rc;
    }
    rc = cp->ops.put_writes(cp->self, thread_id, ns != NULL ? ns : "", id, &w, status, sync, err);
    sst_free(text);
    return rc;
}

static sst_code check_format(const sst_checkpoint *r, sst_error *err) {
    if (r->format <= SST_CHECKPOINT_FORMAT) {
        return SST_OK;
    }
    return sst__error(err, SST_ENOTSUP,
                      "checkpoint %s of thread '%s' was written in record format %u; this build "
                      "reads formats up to %d (upgrade superstep to read it)",
                      r->id, r->thread_id, (unsigned)r->format, SST_CHECKPOINT_FORMAT);
}

typedef struct get_ctx {
    sst_checkpoint *out;
    sst_error err; /* why the record was not kept */
} get_ctx;

static bool keep_copy(const sst_checkpoint *rec, void *user_data) {
    get_ctx *g = user_data;
    if (g->out == NULL && check_format(rec, &g->err) == SST_OK) {
        g->out = sst_checkpoint_copy(rec, &g->err);
    }
    return false;
}

sst_checkpoint *sst_checkpointer_get(sst_checkpointer *cp, const char *thread_id, const char *ns,
                                     const char *id, sst_error *err) {
    SST__ERR_LOCAL(err);
    if (need_cp(cp, "checkpointer get", err) != SST_OK ||
        need_str(thread_id, "checkpointer get", "thread_id", err) != SST_OK) {
        return NULL;
    }
    get_ctx g = {NULL, {0}};
    sst_error_clear(&g.err);
    sst_code rc = cp->ops.get(cp->self, thread_id, ns != NULL ? ns : "", id, keep_copy, &g, err);
    if (rc != SST_OK || g.out == NULL) {
        sst_checkpoint_free(g.out);
        if (rc == SST_OK && g.err.code != SST_OK) {
            *err = g.err;
        } else if (rc == SST_OK) {
            sst__error(err, SST_ENOTFOUND, "thread '%s' has no checkpoint%s%s", thread_id,
                       id != NULL ? " " : "", id != NULL ? id : "");
        }
        return NULL;
    }
    return g.out;
}

typedef struct list_ctx {
    sst_checkpoint_fn each;
    void *user_data;
    sst_error *err;
    bool refused;
} list_ctx;

static bool list_checked(const sst_checkpoint *rec, void *user_data) {
    list_ctx *l = user_data;
    if (check_format(rec, l->err) != SST_OK) {
        l->refused = true;
        return false;
    }
    return l->each(rec, l->user_data);
}

sst_code sst_checkpointer_list(sst_checkpointer *cp, const sst_checkpoint_query *q,
                               sst_checkpoint_fn each, void *user_data, sst_error *err) {
    SST__ERR_LOCAL(err);
    static const char what[] = "checkpointer list";
    sst_code rc = need_cp(cp, what, err);
    if (rc == SST_OK && (q == NULL || each == NULL)) {
        rc = sst__error(err, SST_EINVAL, "%s: NULL query or callback", what);
    }
    rc = rc == SST_OK ? need_str(q->thread_id, what, "thread_id", err) : rc;
    if (rc != SST_OK) {
        return rc;
    }
    list_ctx l = {each, user_data, err, false};
    rc = cp->ops.list(cp->self, q, list_checked, &l, err);
    return l.refused ? SST_ENOTSUP : rc;
}

sst_code sst_checkpointer_lock(sst_checkpointer *cp, const char *thread_id, bool wait,
                               sst_error *err) {
    SST__ERR_LOCAL(err);
    sst_code rc = need_cp(cp, "checkpointer lock", err);
    rc = rc == SST_OK ? need_str(thread_id, "checkpointer lock", "thread_id", err) : rc;
    return rc == SST_OK ? cp->ops.lock(cp->self, thread_id, wait, err) : rc;
}

void sst_checkpointer_unlock(sst_checkpointer *cp, const char *thread_id) {
    if (cp != NULL && thread_id != NULL) {
        cp->ops.unlock(cp->self, thread_id);
    }
}

sst_code sst_checkpointer_threads(sst_checkpointer *cp, const sst_thread_query *q,
                                  sst_thread_fn each, void *user_data, sst_error *err) {
    SST__ERR_LOCAL(err);
    sst_code rc = optional(cp, cp != NULL && HAS_OP(cp, threads), "checkpointer threads", err);
    if (rc == SST_OK && each == NULL) {
        rc = sst__error(err, SST_EINVAL, "checkpointer threads: NULL callback");
    }
    sst_thread_query all = {0};
    return rc == SST_OK ? cp->ops.threads(cp->self, q != NULL ? q : &all, each, user_data, err)
                        : rc;
}

sst_code sst_checkpointer_thread_get(sst_checkpointer *cp, const char *thread_id,
                                     sst_thread_fn each, void *user_data, sst_error *err) {
    SST__ERR_LOCAL(err);
    static const char what[] = "checkpointer thread_get";
    sst_code rc = optional(cp, cp != NULL && HAS_OP(cp, thread_get), what, err);
    rc = rc == SST_OK ? need_str(thread_id, what, "thread_id", err) : rc;
    if (rc == SST_OK && each == NULL) {
        rc = sst__error(err, SST_EINVAL, "%s: NULL callback", what);
    }
    return rc == SST_OK ? cp->ops.thread_get(cp->self, thread_id, each, user_data, err) : rc;
}

sst_code sst_checkpointer_thread_put(sst_checkpointer *cp, const char *thread_id,
                                     const sst_value *metadata, sst_error *err) {
    SST__ERR_LOCAL(err);
    static const char what[] = "checkpointer thread_put";
    sst_code rc = optional(cp, cp != NULL && HAS_OP(cp, thread_put), what, err);
    rc = rc == SST_OK ? need_str(thread_id, what, "thread_id", err) : rc;
    if (rc == SST_OK && metadata != NULL && !sst_is_object(metadata)) {
        rc = sst__error(err, SST_ETYPE, "%s: metadata must be an object, got %s", what,
                        sst_type_name(sst_value_type(metadata)));
    }
    if (rc != SST_OK) {
        return rc;
    }
    sst_value *m = metadata != NULL ? sst_value_ref(metadata) : sst_object_empty();
    sst_payload p = {.value = m};
    char *text = NULL;
    if (!(cp->ops.flags & SST_SAVER_VALUES)) {
        rc = encode_payload(&p, &text, err);
    }
    rc = rc == SST_OK ? cp->ops.thread_put(cp->self, thread_id, &p, err) : rc;
    sst_free(text);
    sst_value_unref(m);
    return rc;
}

sst_code sst_checkpointer_copy_thread(sst_checkpointer *cp, const char *from, const char *to,
                                      sst_error *err) {
    SST__ERR_LOCAL(err);
    static const char what[] = "checkpointer copy_thread";
    sst_code rc = optional(cp, cp != NULL && HAS_OP(cp, copy_thread), what, err);
    rc = rc == SST_OK ? need_str(from, what, "from", err) : rc;
    rc = rc == SST_OK ? need_str(to, what, "to", err) : rc;
    if (rc == SST_OK && strcmp(from, to) == 0) {
        rc = sst__error(err, SST_ECONFLICT, "%s: thread '%s' onto itself", what, from);
    }
    return rc == SST_OK ? cp->ops.copy_thread(cp->self, from, to, err) : rc;
}

sst_code sst_checkpointer_delete_thread(sst_checkpointer *cp, const char *thread_id,
                                        sst_error *err) {
    SST__ERR_LOCAL(err);
    static const char what[] = "checkpointer delete_thread";
    sst_code rc = optional(cp, cp != NULL && HAS_OP(cp, delete_thread), what, err);
    rc = rc == SST_OK ? need_str(thread_id, what, "thread_id", err) : rc;
    return rc == SST_OK ? cp->ops.delete_thread(cp->self, thread_id, err) : rc;
}

sst_code sst_checkpointer_prune(sst_checkpointer *cp, const char *thread_id, size_t keep,
                                size_t *removed, sst_error *err) {
    SST__ERR_LOCAL(err);
    static const char what[] = "checkpointer prune";
    if (removed != NULL) {
        *removed = 0;
    }
    sst_code rc = optional(cp, cp != NULL && HAS_OP(cp, prune), what, err);
    rc = rc == SST_OK ? need_str(thread_id, what, "thread_id", err) : rc;
    if (rc == SST_OK && keep == 0) {
        rc = sst__error(err, SST_EINVAL, "%s: keep must be at least 1", what);
    }
    return rc == SST_OK ? cp->ops.prune(cp->self, thread_id, keep, removed, err) : rc;
}

/* ---- threads as values ---- */

typedef struct search_ctx {
    sst_value *out;
    sst_error *err;
} search_ctx;

static bool add_thread(const sst_thread_info *t, void *user_data) {
    search_ctx *s = user_data;
    sst_error *err = s->err;
    sst_value *meta = sst__payload_empty(&t->metadata) ? sst_object_empty()
                                                       : sst_payload_value(&t->metadata, err);
    sst_value *o = sst__object_with_capacity(8, err);
    o = sst__set_take(o, "thread_id", sst_string_new(t->thread_id, err), err);
    o = sst__set_take(o, "created_at", sst_int_new(t->created_at, err), err);
    o = sst__set_take(o, "updated_at", sst_int_new(t->updated_at, err), err);
    o = sst__set_take(o, "status", sst_string_new(sst_thread_status_name(t->status), err), err);
    o = sst__set_take(o, "metadata", meta, err);
    o = sst__set_take(o, "checkpoints", sst_int_new((int64_t)t->checkpoints, err), err);
    o = sst__set_take(o, "latest",
                      t->latest_id != NULL ? sst_string_new(t->latest_id, err) : sst_null(), err);
    o = sst__set_take(o, "step", sst_int_new(t->step, err), err);
    s->out = o != NULL ? sst_array_push_take(s->out, o, err) : (sst_value_unref(s->out), NULL);
    return s->out != NULL;
}

sst_value *sst_checkpointer_search_threads(sst_checkpointer *cp, const sst_thread_query *q,
                                           sst_error *err) {
    SST__ERR_LOCAL(err);
    search_ctx s = {sst_array_empty(), err};
    sst_code rc = sst_checkpointer_threads(cp, q, add_thread, &s, err);
    if (rc != SST_OK || s.out == NULL) { /* a failed listing, or add_thread's (recorded) */
        sst_value_unref(s.out);
        return NULL;
    }
    return s.out;
}

/* ---- payloads ---- */

sst_value *sst__payload_parse(const sst_payload *p, size_t max_bytes, sst_error *err) {
    if (p->value != NULL) {
        return sst_value_ref(p->value);
    }
    if (p->data == NULL) {
        return NULL;
    }
    sst_json_read_opts o;
    sst_json_read_opts_init(&o);
    o.max_depth = 4200; /* the writer's depth limit (4096) plus a record's own levels */
    o.max_bytes = max_bytes > o.max_bytes ? max_bytes : o.max_bytes;
    return sst_json_read(p->data, p->len, &o, err);
}

sst_value *sst_payload_value(const sst_payload *p, sst_error *err) {
    SST__ERR_LOCAL(err);
    if (sst__payload_empty(p)) {
        sst__error(err, SST_EINVAL, "payload: empty");
        return NULL;
    }
    return sst__payload_parse(p, 0, err);
}

bool sst__metadata_matches(const sst_value *metadata, const sst_value *filter, const char *source,
                           int64_t step) {
    for (size_t i = 0; i < sst_object_len(filter); i++) {
        const sst_value *k = sst_object_key_at(filter, i);
        const sst_value *want = sst_object_value_at(filter, i);
        const char *name = sst_string_cstr(k);
        const sst_value *v = sst_object_getn(metadata, name, sst_string_len(k));
        if (v != NULL) {
            if (!sst_value_equal(v, want)) {
                return false;
            }
        } else if (strcmp(name, "source") == 0) {
            if (source == NULL || !sst_is_string(want) ||
                strcmp(source, sst_string_cstr(want)) != 0) {
                return false;
            }
        } else if (strcmp(name, "step") == 0) {
            if (!sst_is_int(want) || sst_int_value(want) != step) {
                return false;
            }
        } else {
            return false;
        }
    }
    return true;
}

/* ---- copies ---- */

static size_t str_size(const char *s) {
    return s != NULL ? strlen(s) + 1 : 0;
}

/* Copies @p s into the pool at *at; NULL stays NULL. */
static const char *pool_str(char **at, const char *s) {
    if (s == NULL) {
        return NULL;
    }
    size_t n = strlen(s) + 1;
    char *out = memcpy(*at, s, n);
    *at += n;
    return out;
}

static sst_payload pool_payload(char **at, const sst_payload *p) {
    sst_payload out = {.value = p->value != NULL ? sst_value_ref(p->value) : NULL};
    if (p->data != NULL) {
        out.data = memcpy(*at, p->data, p->len);
        (*at)[p->len] = '\0'; /* bytes stay NUL-terminated for readers of text */
        out.len = p->len;
        *at += p->len + 1;
    }
    return out;
}

static size_t payload_size(const sst_payload *p) {
    return p->data != NULL ? p->len + 1 : 0;
}

sst_checkpoint *sst_checkpoint_copy(const sst_checkpoint *rec, sst_error *err) {
    SST__ERR_LOCAL(err);
    if (rec == NULL) {
        sst__error(err, SST_EINVAL, "sst_checkpoint_copy: NULL record");
        return NULL;
    }
    size_t head = sizeof(sst_checkpoint) + rec->n_blobs * sizeof(sst_blob);
    size_t total = head + str_size(rec->thread_id) + str_size(rec->ns) + str_size(rec->id) +
                   str_size(rec->parent_id) + str_size(rec->source) + str_size(rec->run_id) +
                   payload_size(&rec->body) + payload_size(&rec->next) +
                   payload_size(&rec->metadata) + payload_size(&rec->writes);
    for (size_t i = 0; i < rec->n_blobs; i++) {
        total += str_size(rec->blobs[i].id) + payload_size(&rec->blobs[i].content);
    }
    sst_checkpoint *out = sst__malloc(total);
    if (out == NULL) {
        sst__enomem(err);
        return NULL;
    }
    *out = *rec;
    sst_blob *blobs = (sst_blob *)(out + 1);
    char *at = (char *)out + head;
    out->thread_id = pool_str(&at, rec->thread_id);
    out->ns = pool_str(&at, rec->ns);
    out->id = pool_str(&at, rec->id);
    out->parent_id = pool_str(&at, rec->parent_id);
    out->source = pool_str(&at, rec->source);
    out->run_id = pool_str(&at, rec->run_id);
    out->body = pool_payload(&at, &rec->body);
    out->next = pool_payload(&at, &rec->next);
    out->metadata = pool_payload(&at, &rec->metadata);
    out->writes = pool_payload(&at, &rec->writes);
    for (size_t i = 0; i < rec->n_blobs; i++) {
        blobs[i].id = pool_str(&at, rec->blobs[i].id);
        blobs[i].content = pool_payload(&at, &rec->blobs[i].content);
    }
    out->blobs = rec->n_blobs > 0 ? blobs : NULL;
    return out;
}

void sst_checkpoint_free(sst_checkpoint *rec) {
    if (rec == NULL) {
        return;
    }
    sst_value_unref((sst_value *)rec->body.value);
    sst_value_unref((sst_value *)rec->next.value);
    sst_value_unref((sst_value *)rec->metadata.value);
    sst_value_unref((sst_value *)rec->writes.value);
    for (size_t i = 0; i < rec->n_blobs; i++) {
        sst_value_unref((sst_value *)rec->blobs[i].content.value);
    }
    sst__free(rec);
}

bool sst__record_matches(const sst_checkpoint *r, const sst_value *filter) {
    if (filter == NULL) {
        return true;
    }
    sst_error ignored;
    sst_value *meta = sst__payload_parse(&r->metadata, 0, &ignored);
    bool ok = sst__metadata_matches(meta, filter, r->source, r->step);
    sst_value_unref(meta);
    return ok;
}

bool sst__thread_matches(const sst_thread_info *t, const sst_thread_query *q) {
    if (q->by_status && t->status != q->status) {
        return false;
    }
    if (q->metadata == NULL && q->owner == NULL) {
        return true;
    }
    sst_error ignored;
    sst_value *meta = sst__payload_parse(&t->metadata, 0, &ignored);
    const sst_value *owner = sst_object_get(meta, "owner");
    bool ok = (q->metadata == NULL || sst__metadata_matches(meta, q->metadata, NULL, 0)) &&
              (q->owner == NULL ||
               (sst_is_string(owner) && strcmp(sst_string_cstr(owner), q->owner) == 0));
    sst_value_unref(meta);
    return ok;
}

bool sst__thread_page(sst__thread_pager *p, const sst_thread_info *t, sst_thread_fn each,
                      void *user_data) {
    if (!sst__thread_matches(t, p->q)) {
        return true;
    }
    if (p->skipped < p->q->offset) {
        p->skipped++;
        return true;
    }
    p->sent++;
    return each(t, user_data) && (p->q->limit == 0 || p->sent < p->q->limit);
}

size_t sst__record_largest(const sst_checkpoint *r) {
    size_t big = r->body.len > r->next.len ? r->body.len : r->next.len;
    big = r->metadata.len > big ? r->metadata.len : big;
    for (size_t i = 0; i < r->n_blobs; i++) {
        big = r->blobs[i].content.len > big ? r->blobs[i].content.len : big;
    }
    return big;
}
