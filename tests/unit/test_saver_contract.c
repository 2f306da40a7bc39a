/* SPDX-License-Identifier: MIT */
/*
 * The checkpoint store contract (include/superstep/checkpoint.h): one suite run
 * against every backend of k_backends (a new backend is one more row). Cases:
 *   1 round trip of every field, get(NULL) = latest, unknown -> ENOTFOUND
 *   2 list: newest first, no body; metadata filters (source/step fall back on the
 *     fields); limit; paging with before; namespaces; a thread without records
 *   3 fencing: stale parent, fork, first record, duplicate id, namespaces apart
 *   4 put_writes replaces as a whole, deletes, sets the status; unknown -> ENOTFOUND
 *   5 records sort in put order, not id order      6 shared blobs and their lifetime
 *   7 threads: info, search (metadata, status, order, paging), busy while locked,
 *     search_threads as values                     8 copy_thread     9 delete_thread
 *  10 prune                 11 record formats      12 argument checks
 *  13 references            14 concurrent readers and one writer (TSan)
 *  15 storage errors (SQLite file damaged, unopenable path; PostgreSQL server unreachable,
 *     newer tables, tables of another shape)     16 persistence (reopen)
 *  17 two savers on one store (two processes): fencing and shared blobs under races
 *  18 the lease across them; PostgreSQL: renewal by commits, expiry, options
 *  19 PostgreSQL: connections cut under a writer (retried, no checkpoint lost or doubled)
 * Once, against fake implementations: ops versioning (size 0, a missing op, an
 * older header whose later fields are garbage) and destroy at the last reference.
 */
#define _GNU_SOURCE /* mkdtemp, strdup */
#include <pthread.h>
#include <sched.h>
#include <sqlite3.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "superstep/superstep.h"
#include "test_util.h"

/* ---- backends ---- */

typedef struct backend {
    const char *name;
    /* Opens the store kept under @p dir (empty the first time). */
    sst_checkpointer *(*open)(const char *dir, sst_error *err);
    bool reopen;             /* opening dir again finds what was stored */
    const char *sqlite_file; /* its SQLite file under dir (case 15), or NULL */
    bool postgres;           /* on the test PostgreSQL server (a schema per fixture) */
} backend;

static sst_checkpointer *open_memory(const char *dir, sst_error *err) {
    (void)dir;
    return sst_memory_saver_new(err);
}

static sst_checkpointer *open_sqlite(const char *dir, sst_error *err) {
    char path[128];
    snprintf(path, sizeof path, "%s/store.db", dir);
    return sst_sqlite_saver_open(path, NULL, err);
}

/* The URL of the fixture's schema (PG_URL_FILE under its dir) in @p url; false when none. */
#define PG_URL_FILE "pg_url"
static bool pg_url_of(const char *dir, char *url, size_t n) {
    char file[128];
    snprintf(file, sizeof file, "%s/" PG_URL_FILE, dir);
    char *text = tu_read_file(file, NULL);
    if (text == NULL) {
        return false;
    }
    snprintf(url, n, "%s", text);
    free(text);
    url[strcspn(url, "\r\n")] = '\0';
    return url[0] != '\0';
}

/*
 * A saver on a fresh schema of the test server the first time, its URL kept in
 * PG_URL_FILE under @p dir; on that schema again when reopened.
 */
static sst_checkpointer *open_postgres(const char *dir, sst_error *err) {
    char url[600];
    if (!pg_url_of(dir, url, sizeof url)) {
        char file[128];
        snprintf(file, sizeof file, "%s/" PG_URL_FILE, dir);
        FILE *f = NULL;
        if (tu_pg_fresh("saver", url, sizeof url) != 0 || (f = fopen(file, "w")) == NULL ||
            fputs(url, f) < 0) {
            if (f != NULL) {
                fclose(f);
            }
            snprintf(err->msg, sizeof err->msg, "no schema on the test PostgreSQL server");
            err->code = SST_EIO;
            return NULL;
        }
        fclose(f);
    }
    return sst_postgres_saver_open(url, NULL, err);
}

/* Drops the fixture's schema (after its savers are freed). */
static void pg_drop_schema(const char *dir) {
    char url[600], sql[240];
    const char *at;
    if (tu_pg_url() == NULL || !pg_url_of(dir, url, sizeof url) ||
        (at = strstr(url, "search_path%3D")) == NULL) {
        return;
    }
    snprintf(sql, sizeof sql, "SET client_min_messages = warning; DROP SCHEMA IF EXISTS %s CASCADE",
             at + strlen("search_path%3D"));
    (void)tu_pg_exec(tu_pg_url(), sql);
}

static const backend k_backends[] = {
    {"memory", open_memory, false, NULL, false},
    {"sqlite", open_sqlite, true, "store.db", false},
    {"postgres", open_postgres, true, NULL, true},
};

/* ---- fixture: a fresh store per test, and the payloads it was given ---- */

typedef struct held {
    char *text;       /* malloc'd JSON text (the bytes of a payload) */
    sst_value *value; /* or its value, for SST_SAVER_VALUES stores */
} held;

typedef struct fixture {
    const backend *be;
    char dir[64];
    sst_checkpointer *cp;
    sst_error err; /* the error of the last call made through E */
    held *held;    /* payloads kept until teardown */
    size_t n_held, cap_held;
    int64_t clock; /* created_at of the last record made by rec_make (ms) */
} fixture;

/* In a case (a local `fx`): E is the error argument; OK and FAILS check a code. */
#define E                 (&fx->err)
#define OK(call)          tu_assert_ok((call), E, __FILE__, __LINE__)
#define FAILS(call, code) code_at((call), (code), E, __FILE__, __LINE__)
#define MSG_HAS(s)        msg_has_at(E, (s), __FILE__, __LINE__)

static int fx_setup(void **state) {
    fixture *fx = calloc(1, sizeof *fx);
    fx->be = *state;
    if (tu_temp_dir("contract", fx->dir, sizeof fx->dir) != 0 ||
        (fx->cp = fx->be->open(fx->dir, E)) == NULL) {
        print_error("%s: cannot open a store in %s: %s\n", fx->be->name, fx->dir, fx->err.msg);
        free(fx);
        return -1;
    }
    fx->clock = 1700000000000;
    *state = fx;
    return 0;
}

static int fx_teardown(void **state) {
    fixture *fx = *state;
    sst_checkpointer_free(fx->cp);
    for (size_t i = 0; i < fx->n_held; i++) {
        free(fx->held[i].text);
        sst_value_unref(fx->held[i].value);
    }
    free(fx->held);
    if (fx->be->postgres) {
        pg_drop_schema(fx->dir);
    }
    int rc = tu_rm_rf(fx->dir);
    free(fx);
    return rc;
}

static void fx_reopen(fixture *fx) {
    sst_checkpointer_free(fx->cp);
    if ((fx->cp = fx->be->open(fx->dir, E)) == NULL) {
        fail_msg("%s: reopening %s: %s", fx->be->name, fx->dir, fx->err.msg);
    }
}

/*
 * @p json as the store wants it: a value (new, in *holder) for stores with
 * SST_SAVER_VALUES, else the bytes of @p json itself (borrowed; *holder NULL).
 */
static sst_payload payload_of(sst_checkpointer *cp, const char *json, sst_value **holder) {
    sst_payload p = {0};
    *holder = NULL;
    if ((sst_checkpointer_flags(cp) & SST_SAVER_VALUES) != 0) {
        *holder = tu_json(json);
        p.value = *holder;
    } else {
        p.data = json;
        p.len = strlen(json);
    }
    return p;
}

/* payload_of with the text and value kept by the fixture; NULL is the empty payload. */
static sst_payload pl(fixture *fx, const char *json) {
    if (json == NULL) {
        return (sst_payload){0};
    }
    if (fx->n_held == fx->cap_held) {
        fx->cap_held = fx->cap_held ? 2 * fx->cap_held : 64;
        fx->held = realloc(fx->held, fx->cap_held * sizeof *fx->held);
        assert_non_null(fx->held);
    }
    held *h = &fx->held[fx->n_held++];
    h->text = strdup(json);
    return payload_of(fx->cp, h->text, &h->value);
}

/* A snapshot record: step 0, source "loop", body {"id":ID,"thread":THREAD}, metadata {}. */
static sst_checkpoint rec_make(fixture *fx, const char *thread, const char *ns, const char *id,
                               const char *parent) {
    char body[256];
    snprintf(body, sizeof body, "{\"id\":\"%s\",\"thread\":\"%s\"}", id, thread);
    fx->clock += 10;
    return (sst_checkpoint){.format = SST_CHECKPOINT_FORMAT,
                            .thread_id = thread,
                            .ns = ns,
                            .id = id,
                            .parent_id = parent,
                            .source = "loop",
                            .created_at = fx->clock,
                            .body = pl(fx, body),
                            .metadata = pl(fx, "{}")};
}

/* ---- asserts ---- */

static void code_at(sst_code got, sst_code want, const sst_error *err, const char *file, int line) {
    if (got != want) {
        print_error("%s:%d: expected %s, got %s: %s\n", file, line, sst_code_name(want),
                    sst_code_name(got), got != SST_OK ? err->msg : "");
        _fail(file, line);
    }
}

static void msg_has_at(const sst_error *err, const char *s, const char *file, int line) {
    if (strstr(err->msg, s) == NULL) {
        print_error("%s:%d: message \"%s\" does not name '%s'\n", file, line, err->msg, s);
        _fail(file, line);
    }
}

static bool payload_empty(const sst_payload *p) {
    return p->data == NULL && p->value == NULL;
}

/* The payload's content as canonical JSON (malloc'd); fails the test when unreadable. */
static char *payload_json(const sst_payload *p, const char *what, const char *file, int line) {
    sst_error err;
    sst_value *v = sst_payload_value(p, &err);
    if (v == NULL) {
        print_error("%s:%d: %s: sst_payload_value: %s\n", file, line, what, err.msg);
        _fail(file, line);
    }
    char *text = sst_json_write(v, SST_JSON_CANONICAL, NULL, NULL);
    assert_non_null(text);
    char *copy = strdup(text);
    sst_free(text);
    sst_value_unref(v);
    return copy;
}

/* @p got has the content of @p want: both empty, or equal values. */
static void payload_eq_at(const sst_payload *got, const sst_payload *want, const char *what,
                          const char *file, int line) {
    if (payload_empty(want) || payload_empty(got)) {
        if (payload_empty(want) != payload_empty(got)) {
            print_error("%s:%d: %s: expected %s, got %s\n", file, line, what,
                        payload_empty(want) ? "an empty payload" : "content",
                        payload_empty(got) ? "an empty one" : "content");
            _fail(file, line);
        }
        return;
    }
    char *g = payload_json(got, what, file, line), *w = payload_json(want, what, file, line);
    if (strcmp(g, w) != 0) {
        print_error("%s:%d: %s differs\n  expected: %s\n  actual:   %s\n", file, line, what, w, g);
        _fail(file, line);
    }
    free(g);
    free(w);
}

#define assert_payload(p, json) payload_json_eq_at((p), (json), __FILE__, __LINE__)
static void payload_json_eq_at(const sst_payload *p, const char *json, const char *file, int line) {
    sst_value *v = tu_json(json);
    sst_payload want = {.value = v};
    payload_eq_at(p, &want, json, file, line);
    sst_value_unref(v);
}

static void str_eq_at(const char *got, const char *want, const char *what, const char *file,
                      int line) {
    if ((got == NULL) != (want == NULL) || (got != NULL && strcmp(got, want) != 0)) {
        print_error("%s:%d: %s: expected \"%s\", got \"%s\"\n", file, line, what,
                    want ? want : "(NULL)", got ? got : "(NULL)");
        _fail(file, line);
    }
}

static void int_eq_at(int64_t got, int64_t want, const char *what, const char *file, int line) {
    if (got != want) {
        print_error("%s:%d: %s: expected %lld, got %lld\n", file, line, what, (long long)want,
                    (long long)got);
        _fail(file, line);
    }
}

static const sst_blob *find_blob(const sst_checkpoint *rec, const char *id) {
    for (size_t i = 0; i < rec->n_blobs; i++) {
        if (rec->blobs[i].id != NULL && strcmp(rec->blobs[i].id, id) == 0) {
            return &rec->blobs[i];
        }
    }
    return NULL;
}

/* @p rec came with blob @p id holding @p json. */
#define assert_blob(rec, id, json) blob_at((rec), (id), (json), __FILE__, __LINE__)
static void blob_at(const sst_checkpoint *rec, const char *id, const char *json, const char *file,
                    int line) {
    const sst_blob *b = find_blob(rec, id);
    if (b == NULL) {
        print_error("%s:%d: %s came back without blob '%s'\n", file, line, rec->id, id);
        _fail(file, line);
    }
    payload_json_eq_at(&b->content, json, file, line);
}

/*
 * Every field of @p got equals @p want's; with @p full also body, writes and
 * blobs (a blob @p want gives without content is only looked up by id).
 */
#define assert_rec_eq(got, want, full) rec_eq_at((got), (want), (full), __FILE__, __LINE__)
static void rec_eq_at(const sst_checkpoint *g, const sst_checkpoint *w, bool full, const char *file,
                      int line) {
    int_eq_at(g->format, w->format, "format", file, line);
    str_eq_at(g->thread_id, w->thread_id, "thread_id", file, line);
    str_eq_at(g->ns, w->ns, "ns", file, line);
    str_eq_at(g->id, w->id, "id", file, line);
    str_eq_at(g->parent_id, w->parent_id, "parent_id", file, line);
    int_eq_at(g->step, w->step, "step", file, line);
    str_eq_at(g->source, w->source, "source", file, line);
    str_eq_at(g->run_id, w->run_id, "run_id", file, line);
    int_eq_at(g->kind, w->kind, "kind", file, line);
    int_eq_at(g->created_at, w->created_at, "created_at", file, line);
    int_eq_at(g->status, w->status, "status", file, line);
    payload_eq_at(&g->next, &w->next, "next", file, line);
    payload_eq_at(&g->metadata, &w->metadata, "metadata", file, line);
    if (full) {
        payload_eq_at(&g->body, &w->body, "body", file, line);
        payload_eq_at(&g->writes, &w->writes, "writes", file, line);
        int_eq_at((int64_t)g->n_blobs, (int64_t)w->n_blobs, "n_blobs", file, line);
        for (size_t i = 0; i < w->n_blobs; i++) {
            const sst_blob *b = find_blob(g, w->blobs[i].id);
            str_eq_at(b != NULL ? b->id : NULL, w->blobs[i].id, "blob id", file, line);
            if (payload_empty(&b->content)) {
                print_error("%s:%d: blob '%s' came back without content\n", file, line, b->id);
                _fail(file, line);
            }
            if (!payload_empty(&w->blobs[i].content)) {
                payload_eq_at(&b->content, &w->blobs[i].content, "blob content", file, line);
            }
        }
    }
}

/* ---- calls ---- */

static sst_code put(fixture *fx, const sst_checkpoint *rec) {
    return sst_checkpointer_put(fx->cp, rec, false, E);
}

/* Puts rec_make(...) and fails unless it is stored. */
#define PUT(t, ns, id, parent) put_simple_at(fx, (t), (ns), (id), (parent), __FILE__, __LINE__)
static void put_simple_at(fixture *fx, const char *thread, const char *ns, const char *id,
                          const char *parent, const char *file, int line) {
    sst_checkpoint r = rec_make(fx, thread, ns, id, parent);
    tu_assert_ok(put(fx, &r), E, file, line);
}

/* A record with one blob (@p content NULL: a reference to a stored one). */
static sst_code put_blob(fixture *fx, const char *thread, const char *id, const char *parent,
                         const char *blob, const char *content) {
    sst_blob b = {blob, pl(fx, content)};
    sst_checkpoint r = rec_make(fx, thread, "", id, parent);
    r.blobs = &b;
    r.n_blobs = 1;
    return put(fx, &r);
}

static sst_code put_writes(fixture *fx, const char *thread, const char *ns, const char *id,
                           const char *writes, sst_thread_status status) {
    sst_payload w = pl(fx, writes);
    return sst_checkpointer_put_writes(fx->cp, thread, ns, id, &w, status, false, E);
}

#define GET(t, ns, id) get_at(fx, (t), (ns), (id), __FILE__, __LINE__)
static sst_checkpoint *get_at(fixture *fx, const char *thread, const char *ns, const char *id,
                              const char *file, int line) {
    sst_checkpoint *r = sst_checkpointer_get(fx->cp, thread, ns, id, E);
    if (r == NULL) {
        print_error("%s:%d: get %s/%s/%s: %s: %s\n", file, line, thread, ns, id ? id : "(latest)",
                    sst_code_name(fx->err.code), fx->err.msg);
        _fail(file, line);
    }
    return r;
}

/* The code of a get: SST_OK when it found a record. */
static sst_code get_code(fixture *fx, const char *thread, const char *ns, const char *id) {
    sst_checkpoint *r = sst_checkpointer_get(fx->cp, thread, ns, id, E);
    sst_checkpoint_free(r);
    return r != NULL ? SST_OK : fx->err.code;
}

/* Fails unless the latest record of (thread, ns) is @p want. */
#define LATEST(t, ns, want)                                                                        \
    do {                                                                                           \
        sst_checkpoint *latest_ = GET((t), (ns), NULL);                                            \
        assert_string_equal(latest_->id, (want));                                                  \
        sst_checkpoint_free(latest_);                                                              \
    } while (0)

/* What a listing returned: ids joined with ',', and records with content. */
typedef struct listing {
    char ids[2048];
    size_t n;
    size_t with_content;   /* records listed with a body, writes or blobs */
    size_t stop_after;     /* the callback returns false after this many (0: never) */
    sst_checkpoint *first; /* a copy of the first record */
} listing;

static bool on_rec(const sst_checkpoint *rec, void *ud) {
    listing *l = ud;
    size_t len = strlen(l->ids);
    snprintf(l->ids + len, sizeof l->ids - len, "%s%s", len > 0 ? "," : "", rec->id);
    if (l->n++ == 0) {
        l->first = sst_checkpoint_copy(rec, NULL);
    }
    if (!payload_empty(&rec->body) || !payload_empty(&rec->writes) || rec->n_blobs > 0) {
        l->with_content++;
    }
    return l->stop_after == 0 || l->n < l->stop_after;
}

static sst_code list_q(fixture *fx, const char *thread, const char *ns, const char *filter,
                       const char *before, size_t limit, listing *l) {
    sst_value *f = filter != NULL ? tu_json(filter) : NULL;
    sst_checkpoint_query q = {
        .thread_id = thread, .ns = ns, .filter = f, .before = before, .limit = limit};
    *l = (listing){.stop_after = l->stop_after};
    sst_code rc = sst_checkpointer_list(fx->cp, &q, on_rec, l, E);
    sst_value_unref(f);
    return rc;
}

/* Fails unless listing (thread, ns, filter, before, limit) gives the ids @p want, no bodies. */
#define LIST(t, ns, filter, before, limit, want)                                                   \
    list_at(fx, (t), (ns), (filter), (before), (limit), (want), __FILE__, __LINE__)
static void list_at(fixture *fx, const char *thread, const char *ns, const char *filter,
                    const char *before, size_t limit, const char *want, const char *file,
                    int line) {
    listing l = {0};
    tu_assert_ok(list_q(fx, thread, ns, filter, before, limit, &l), E, file, line);
    sst_checkpoint_free(l.first);
    if (strcmp(l.ids, want) != 0) {
        print_error("%s:%d: list %s ns=%s filter=%s before=%s limit=%zu\n  expected: [%s]\n"
                    "  actual:   [%s]\n",
                    file, line, thread, ns ? ns : "(all)", filter ? filter : "-",
                    before ? before : "-", limit, want, l.ids);
        _fail(file, line);
    }
    int_eq_at((int64_t)l.with_content, 0, "listed records with body/writes/blobs", file, line);
}

/* Threads as reported, copied out of the callback. */
typedef struct tinfo {
    char id[64], latest[64]; /* latest: "" when NULL */
    bool has_latest;
    int64_t created_at, updated_at, step;
    sst_thread_status status;
    sst_value *metadata; /* new */
    size_t checkpoints;
} tinfo;

typedef struct tlist {
    tinfo v[8];
    size_t n;
    char ids[256];
} tlist;

static bool on_thread(const sst_thread_info *t, void *ud) {
    tlist *l = ud;
    size_t len = strlen(l->ids);
    snprintf(l->ids + len, sizeof l->ids - len, "%s%s", len > 0 ? "," : "", t->thread_id);
    if (l->n < 8) {
        tinfo *i = &l->v[l->n];
        *i = (tinfo){.has_latest = t->latest_id != NULL,
                     .created_at = t->created_at,
                     .updated_at = t->updated_at,
                     .step = t->step,
                     .status = t->status,
                     .metadata = sst_payload_value(&t->metadata, NULL),
                     .checkpoints = t->checkpoints};
        snprintf(i->id, sizeof i->id, "%s", t->thread_id);
        snprintf(i->latest, sizeof i->latest, "%s", t->latest_id ? t->latest_id : "");
    }
    l->n++;
    return true;
}

static void tlist_clear(tlist *l) {
    for (size_t i = 0; i < l->n && i < 8; i++) {
        sst_value_unref(l->v[i].metadata);
    }
    memset(l, 0, sizeof *l);
}

/* Skips the test when an optional operation is not implemented. */
#define OPTIONAL(rc, what)                                                                         \
    do {                                                                                           \
        if ((rc) == SST_ENOTSUP) {                                                                 \
            print_message("%s: not supported by this backend; skipped\n", (what));                 \
            skip();                                                                                \
        }                                                                                          \
    } while (0)

static sst_code thread_info(fixture *fx, const char *thread, tlist *out) {
    tlist_clear(out);
    return sst_checkpointer_thread_get(fx->cp, thread, on_thread, out, E);
}

/* thread_get @p t and check every field (created, updated < 0: not checked). */
#define THREAD(t, created, updated, status, n, latest, step, meta)                                 \
    thread_at(fx, (t), (created), (updated), (status), (n), (latest), (step), (meta), __FILE__,    \
              __LINE__)
static void thread_at(fixture *fx, const char *thread, int64_t created, int64_t updated,
                      sst_thread_status status, size_t n, const char *latest, int64_t step,
                      const char *meta, const char *file, int line) {
    tlist l = {0};
    sst_code rc = thread_info(fx, thread, &l);
    OPTIONAL(rc, "thread_get");
    tu_assert_ok(rc, E, file, line);
    int_eq_at((int64_t)l.n, 1, "thread_get callbacks", file, line);
    str_eq_at(l.v[0].id, thread, "thread_id", file, line);
    if (created >= 0) {
        int_eq_at(l.v[0].created_at, created, "created_at", file, line);
    }
    if (updated >= 0) {
        int_eq_at(l.v[0].updated_at, updated, "updated_at", file, line);
    }
    str_eq_at(sst_thread_status_name(l.v[0].status), sst_thread_status_name(status), "status", file,
              line);
    int_eq_at((int64_t)l.v[0].checkpoints, (int64_t)n, "checkpoints", file, line);
    str_eq_at(l.v[0].has_latest ? l.v[0].latest : NULL, latest, "latest_id", file, line);
    int_eq_at(l.v[0].step, step, "step", file, line);
    tu_assert_json_eq(l.v[0].metadata, meta, file, line);
    tlist_clear(&l);
}

/* Fails unless the ids of the threads matching @p q are @p want. */
#define THREADS(q, want) threads_at(fx, (q), (want), __FILE__, __LINE__)
static void threads_at(fixture *fx, const sst_thread_query *q, const char *want, const char *file,
                       int line) {
    tlist l = {0};
    sst_code rc = sst_checkpointer_threads(fx->cp, q, on_thread, &l, E);
    OPTIONAL(rc, "threads");
    tu_assert_ok(rc, E, file, line);
    str_eq_at(l.ids, want, "threads", file, line);
    tlist_clear(&l);
}

static void thread_put(fixture *fx, const char *thread, const char *meta) {
    sst_value *m = tu_json(meta);
    sst_code rc = sst_checkpointer_thread_put(fx->cp, thread, m, E);
    sst_value_unref(m);
    OPTIONAL(rc, "thread_put");
    OK(rc);
}

/* ---- 1. round trip ---- */

static void case_round_trip(void **state) {
    fixture *fx = *state;
    sst_checkpoint a = rec_make(fx, "t-rt", "", "c0001", NULL);
    a.step = -1;
    a.source = "input";
    a.run_id = "run-1";
    a.created_at = 1700000000123;
    a.body = pl(fx, "{\"a\":[1,2.5,{\"b\":\"x\"}],\"s\":\"\\u00e9\",\"n\":null}");
    a.next = pl(fx, "[\"n1\",\"n2\"]");
    a.metadata = pl(fx, "{\"source\":\"input\",\"step\":-1,\"user\":\"u\"}");
    OK(put(fx, &a));
    sst_checkpoint b = rec_make(fx, "t-rt", "", "c0002", "c0001");
    b.step = 7;
    b.source = "update";
    b.kind = SST_CHECKPOINT_DELTA;
    b.status = SST_THREAD_INTERRUPTED;
    b.metadata = pl(fx, "{\"k\":{\"x\":[true,null]}}");
    OK(sst_checkpointer_put(fx->cp, &b, true, E)); /* sync */
    sst_checkpoint k = rec_make(fx, "t-rt", "sub:1|x", "k0001", NULL);
    k.status = SST_THREAD_ERROR;
    k.step = 3;
    k.run_id = "run-2";
    OK(put(fx, &k));

    const sst_checkpoint *want[] = {&a, &b, &k, &b, &k};
    const char *ids[] = {"c0001", "c0002", "k0001", NULL, NULL};
    for (size_t i = 0; i < 5; i++) {
        sst_checkpoint *got = GET("t-rt", want[i]->ns, ids[i]);
        assert_rec_eq(got, want[i], true);
        if (i == 0) { /* a copy outlives the record it copied */
            sst_checkpoint *copy = sst_checkpoint_copy(got, E);
            assert_non_null(copy);
            sst_checkpoint_free(got);
            got = copy;
            assert_rec_eq(got, want[i], true);
        }
        sst_checkpoint_free(got);
    }
    FAILS(get_code(fx, "t-rt", "", "c0009"), SST_ENOTFOUND);
    MSG_HAS("t-rt");
    FAILS(get_code(fx, "t-none", "", NULL), SST_ENOTFOUND);
    MSG_HAS("t-none");
    FAILS(get_code(fx, "t-none", "", "c0001"), SST_ENOTFOUND);
    MSG_HAS("t-none");
    FAILS(get_code(fx, "t-rt", "", "k0001"), SST_ENOTFOUND); /* another namespace's */
}

/* ---- 2. list ---- */

static void case_list(void **state) {
    fixture *fx = *state;
    static const struct {
        const char *id, *source, *meta;
        int64_t step;
    } rows[] = {
        {"c0001", "input", "{\"k\":\"odd\",\"u\":{\"name\":\"ann\",\"n\":1}}", -1},
        {"c0002", "loop", "{\"k\":\"even\",\"u\":{\"name\":\"ann\",\"n\":1}}", 0},
        {"c0003", "loop", "{\"k\":\"odd\",\"u\":{\"name\":\"ann\"}}", 1},
        {"c0004", "loop", "{\"k\":\"even\"}", 2},
        {"c0005", "loop", "{\"k\":\"odd\",\"source\":\"update\"}", 3},
        {"c0006", "update", "{\"k\":\"even\",\"step\":99}", 4},
        {"c0007", "loop", "{\"k\":\"odd\"}", 3},
    };
    sst_checkpoint recs[7];
    for (size_t i = 0; i < 7; i++) {
        recs[i] = rec_make(fx, "t-l", "", rows[i].id, i > 0 ? rows[i - 1].id : NULL);
        recs[i].source = rows[i].source;
        recs[i].step = rows[i].step;
        recs[i].metadata = pl(fx, rows[i].meta);
        recs[i].next = pl(fx, "[\"n\"]");
        OK(put(fx, &recs[i]));
    }
    sst_checkpoint x = rec_make(fx, "t-l", "child", "x0001", NULL);
    x.step = 3;
    x.metadata = pl(fx, "{\"k\":\"odd\"}");
    OK(put(fx, &x));
    PUT("t-l", "child", "x0002", "x0001");

    const char *all = "c0007,c0006,c0005,c0004,c0003,c0002,c0001";
    const char *every = "x0002,x0001,c0007,c0006,c0005,c0004,c0003,c0002,c0001";
    LIST("t-l", "", NULL, NULL, 0, all);
    LIST("t-l", NULL, NULL, NULL, 0, every);
    LIST("t-l", "child", NULL, NULL, 0, "x0002,x0001");
    LIST("t-l", "", "{}", NULL, 0, all);
    LIST("t-l", "", "{\"k\":\"odd\"}", NULL, 0, "c0007,c0005,c0003,c0001");
    LIST("t-l", "", "{\"u\":{\"name\":\"ann\"}}", NULL, 0, "c0003");
    LIST("t-l", "", "{\"u\":{\"name\":\"ann\",\"n\":1}}", NULL, 0, "c0002,c0001");
    LIST("t-l", "", "{\"source\":\"loop\"}", NULL, 0, "c0007,c0004,c0003,c0002");
    LIST("t-l", "", "{\"source\":\"update\"}", NULL, 0, "c0006,c0005");
    LIST("t-l", "", "{\"step\":3}", NULL, 0, "c0007,c0005");
    LIST("t-l", NULL, "{\"step\":3}", NULL, 0, "x0001,c0007,c0005");
    LIST("t-l", "", "{\"step\":99}", NULL, 0, "c0006");
    LIST("t-l", "", "{\"k\":\"odd\",\"step\":3}", NULL, 0, "c0007,c0005");
    LIST("t-l", "", "{\"k\":\"none\"}", NULL, 0, "");
    LIST("t-l", "", NULL, NULL, 2, "c0007,c0006");
    LIST("t-l", "", "{\"k\":\"odd\"}", NULL, 2, "c0007,c0005");
    LIST("t-l", "", NULL, "c0004", 0, "c0003,c0002,c0001");
    LIST("t-l", "", NULL, "c0004", 1, "c0003");
    LIST("t-l", "", NULL, "c0001", 0, "");
    LIST("t-none", "", NULL, NULL, 0, "");
    LIST("t-none", NULL, NULL, NULL, 0, "");

    /* Paging with before walks everything once, for one namespace and for all. */
    for (int k = 0; k < 2; k++) {
        char walked[4200] = "", before[32] = "";
        for (size_t pages = 0;; pages++) {
            listing l = {0};
            OK(list_q(fx, "t-l", k == 0 ? "" : NULL, NULL, before[0] ? before : NULL, 3, &l));
            sst_checkpoint_free(l.first);
            if (l.n == 0) {
                break;
            }
            assert_true(l.n <= 3 && pages < 4);
            snprintf(walked + strlen(walked), sizeof walked - strlen(walked), "%s%s",
                     walked[0] ? "," : "", l.ids);
            const char *last = strrchr(l.ids, ',') ? strrchr(l.ids, ',') + 1 : l.ids;
            snprintf(before, sizeof before, "%.31s", last);
        }
        assert_string_equal(walked, k == 0 ? all : every);
    }

    /* Records are listed with their fields but without their body; false stops. */
    listing l = {.stop_after = 2};
    OK(list_q(fx, "t-l", "", NULL, NULL, 0, &l));
    assert_int_equal(l.n, 2);
    assert_non_null(l.first);
    assert_rec_eq(l.first, &recs[6], false);
    assert_true(payload_empty(&l.first->body));
    sst_checkpoint_free(l.first);
}

/* ---- 3. fencing ---- */

static void case_fencing(void **state) {
    fixture *fx = *state;
    PUT("t-f", "", "c0001", NULL);
    PUT("t-f", "", "c0002", "c0001");
    sst_checkpoint r = rec_make(fx, "t-f", "", "c0003", "c0001");
    FAILS(put(fx, &r), SST_ECONFLICT);
    MSG_HAS("t-f");
    MSG_HAS("c0001");
    MSG_HAS("c0002");
    LIST("t-f", NULL, NULL, NULL, 0, "c0002,c0001");
    r.fork = true;
    OK(put(fx, &r));
    LIST("t-f", "", NULL, NULL, 0, "c0003,c0002,c0001");
    LATEST("t-f", "", "c0003");
    sst_checkpoint stale = rec_make(fx, "t-f", "", "c0004", "c0002");
    FAILS(put(fx, &stale), SST_ECONFLICT);

    /* The first record of a thread has no parent. */
    sst_checkpoint first = rec_make(fx, "t-g", "", "c0001", "c0000");
    FAILS(put(fx, &first), SST_ECONFLICT);
    LIST("t-g", NULL, NULL, NULL, 0, "");

    /* A duplicate id, even where fencing passes or with fork. */
    sst_checkpoint dup = rec_make(fx, "t-f", "", "c0003", "c0003");
    FAILS(put(fx, &dup), SST_ECONFLICT);
    dup = rec_make(fx, "t-f", "", "c0002", "c0003");
    dup.fork = true;
    FAILS(put(fx, &dup), SST_ECONFLICT);
    LIST("t-f", NULL, NULL, NULL, 0, "c0003,c0002,c0001");

    /* Namespaces are fenced apart; ids are unique across them. */
    PUT("t-f", "child", "k0001", NULL);
    PUT("t-f", "child", "k0002", "k0001");
    sst_checkpoint cross = rec_make(fx, "t-f", "", "c0004", "k0002");
    FAILS(put(fx, &cross), SST_ECONFLICT);
    cross = rec_make(fx, "t-f", "child", "k0003", "c0003");
    FAILS(put(fx, &cross), SST_ECONFLICT);
    cross = rec_make(fx, "t-f", "child", "c0001", "k0002");
    FAILS(put(fx, &cross), SST_ECONFLICT);
    PUT("t-f", "", "c0004", "c0003");
    LIST("t-f", NULL, NULL, NULL, 0, "c0004,k0002,k0001,c0003,c0002,c0001");
}

/* ---- 4. put_writes ---- */

/* Fails unless checkpoint (t, "", id) has @p writes (NULL: none) and @p status. */
#define WRITES(t, id, writes, status)                                                              \
    writes_at(fx, (t), (id), (writes), (status), __FILE__, __LINE__)
static void writes_at(fixture *fx, const char *thread, const char *id, const char *writes,
                      sst_thread_status status, const char *file, int line) {
    sst_checkpoint *r = get_at(fx, thread, "", id, file, line);
    sst_value *w = writes != NULL ? tu_json(writes) : NULL;
    sst_payload want = {.value = w};
    payload_eq_at(&r->writes, &want, "writes", file, line);
    str_eq_at(sst_thread_status_name(r->status), sst_thread_status_name(status), "status", file,
              line);
    sst_value_unref(w);
    sst_checkpoint_free(r);
}

static void case_put_writes(void **state) {
    fixture *fx = *state;
    PUT("t-w", "", "c0001", NULL);
    PUT("t-w", "", "c0002", "c0001");
    const char *wa = "[[\"task-a\",\"x\",1]]", *wb = "[[\"task-b\",\"y\",{\"z\":2}]]";
    OK(put_writes(fx, "t-w", "", "c0002", wa, SST_THREAD_IDLE));
    WRITES("t-w", "c0002", wa, SST_THREAD_IDLE);
    OK(put_writes(fx, "t-w", "", "c0002", wb, SST_THREAD_INTERRUPTED));
    WRITES("t-w", "c0002", wb, SST_THREAD_INTERRUPTED);
    THREAD("t-w", -1, -1, SST_THREAD_INTERRUPTED, 2, "c0002", 0, "{}");

    /* An older checkpoint's writes and status do not change the thread's status. */
    OK(put_writes(fx, "t-w", "", "c0001", wa, SST_THREAD_ERROR));
    WRITES("t-w", "c0001", wa, SST_THREAD_ERROR);
    WRITES("t-w", "c0002", wb, SST_THREAD_INTERRUPTED);
    THREAD("t-w", -1, -1, SST_THREAD_INTERRUPTED, 2, "c0002", 0, "{}");

    sst_payload none = {0};
    OK(sst_checkpointer_put_writes(fx->cp, "t-w", "", "c0002", &none, SST_THREAD_ERROR, true, E));
    WRITES("t-w", "c0002", NULL, SST_THREAD_ERROR);
    THREAD("t-w", -1, -1, SST_THREAD_ERROR, 2, "c0002", 0, "{}");
    FAILS(put_writes(fx, "t-w", "", "c0009", wa, SST_THREAD_IDLE), SST_ENOTFOUND);
    FAILS(put_writes(fx, "t-none", "", "c0001", wa, SST_THREAD_IDLE), SST_ENOTFOUND);
    FAILS(put_writes(fx, "t-w", "child", "c0001", wa, SST_THREAD_IDLE), SST_ENOTFOUND);
}

/* ---- 5. put order ---- */

static void case_put_order(void **state) {
    fixture *fx = *state;
    PUT("t-o", "", "z", NULL);
    PUT("t-o", "", "a", "z");
    PUT("t-o", "", "m", "a");
    LIST("t-o", "", NULL, NULL, 0, "m,a,z");
    LIST("t-o", NULL, NULL, NULL, 2, "m,a");
    LIST("t-o", "", NULL, "a", 0, "z");
    LIST("t-o", "", NULL, "m", 0, "a,z");
    LATEST("t-o", "", "m");
    sst_checkpoint r = rec_make(fx, "t-o", "", "b", "a");
    FAILS(put(fx, &r), SST_ECONFLICT);
}

/* ---- 6. blobs ---- */

static void case_blobs(void **state) {
    fixture *fx = *state;
    sst_blob two[2] = {{"blob-1", pl(fx, "[1,2,3]")}, {"blob-2", pl(fx, "{\"big\":\"x\"}")}};
    sst_checkpoint r1 = rec_make(fx, "t-b1", "", "c0001", NULL);
    r1.blobs = two;
    r1.n_blobs = 2;
    OK(put(fx, &r1));
    sst_checkpoint *got = GET("t-b1", "", "c0001");
    assert_rec_eq(got, &r1, true);
    sst_checkpoint_free(got);
    OK(put_blob(fx, "t-b1", "c0002", "c0001", "blob-1", NULL));
    got = GET("t-b1", "", "c0002");
    assert_int_equal(got->n_blobs, 1);
    assert_blob(got, "blob-1", "[1,2,3]");
    sst_checkpoint_free(got);

    /* An unknown reference writes nothing, not even the other blobs of the record. */
    sst_blob bad[2] = {{"blob-3", pl(fx, "\"three\"")}, {"blob-none", {0}}};
    sst_checkpoint r3 = rec_make(fx, "t-b1", "", "c0003", "c0002");
    r3.blobs = bad;
    r3.n_blobs = 2;
    FAILS(put(fx, &r3), SST_ENOTFOUND);
    MSG_HAS("blob-none");
    LIST("t-b1", NULL, NULL, NULL, 0, "c0002,c0001");
    FAILS(put_blob(fx, "t-b9", "c0001", NULL, "blob-3", NULL), SST_ENOTFOUND);

    /* Blobs are shared across threads and live while a record refers to them. */
    OK(put_blob(fx, "t-b2", "c0001", NULL, "blob-1", NULL));
    OK(sst_checkpointer_delete_thread(fx->cp, "t-b1", E));
    got = GET("t-b2", "", "c0001");
    assert_blob(got, "blob-1", "[1,2,3]");
    sst_checkpoint_free(got);
    FAILS(put_blob(fx, "t-b3", "c0001", NULL, "blob-2", NULL), SST_ENOTFOUND);
    OK(put_blob(fx, "t-b3", "c0001", NULL, "blob-1", NULL));
    OK(sst_checkpointer_delete_thread(fx->cp, "t-b2", E));
    OK(sst_checkpointer_delete_thread(fx->cp, "t-b3", E));
    FAILS(put_blob(fx, "t-b4", "c0001", NULL, "blob-1", NULL), SST_ENOTFOUND);
    MSG_HAS("blob-1");
}

/* ---- 7. threads ---- */

static void put_at(fixture *fx, const char *thread, const char *ns, const char *id,
                   const char *parent, int64_t created, sst_thread_status status, int64_t step) {
    sst_checkpoint r = rec_make(fx, thread, ns, id, parent);
    r.created_at = created;
    r.status = status;
    r.step = step;
    OK(put(fx, &r));
}

/* search_threads(@p q) has the fields of the threads listed by threads(@p q). */
static void check_search_threads(fixture *fx, const sst_thread_query *q, size_t n) {
    tlist l = {0};
    OK(sst_checkpointer_threads(fx->cp, q, on_thread, &l, E));
    sst_value *arr = sst_checkpointer_search_threads(fx->cp, q, E);
    assert_non_null(arr);
    assert_int_equal(sst_array_len(arr), n);
    assert_int_equal(l.n, n);
    for (size_t i = 0; i < n; i++) {
        const sst_value *t = sst_array_get(arr, i);
        const tinfo *w = &l.v[i];
        assert_string_equal(sst_string_cstr(sst_object_get(t, "thread_id")), w->id);
        assert_int_equal(sst_int_value(sst_object_get(t, "created_at")), w->created_at);
        assert_int_equal(sst_int_value(sst_object_get(t, "updated_at")), w->updated_at);
        assert_string_equal(sst_string_cstr(sst_object_get(t, "status")),
                            sst_thread_status_name(w->status));
        assert_true(sst_value_equal(sst_object_get(t, "metadata"), w->metadata));
        assert_int_equal(sst_int_value(sst_object_get(t, "checkpoints")), w->checkpoints);
        const sst_value *latest = sst_object_get(t, "latest");
        assert_non_null(latest);
        if (w->has_latest) {
            assert_string_equal(sst_string_cstr(latest), w->latest);
        } else {
            assert_true(sst_is_null(latest));
        }
        assert_int_equal(sst_int_value(sst_object_get(t, "step")), w->step);
    }
    tlist_clear(&l);
    sst_value_unref(arr);
}

static void case_threads(void **state) {
    fixture *fx = *state;
    const int64_t t0 = 1700000000000;
    put_at(fx, "ta", "", "c0001", NULL, t0 + 300, SST_THREAD_IDLE, -1);
    put_at(fx, "ta", "child", "k0001", NULL, t0 + 350, SST_THREAD_IDLE, 0);
    put_at(fx, "ta", "", "c0002", "c0001", t0 + 400, SST_THREAD_IDLE, 4);
    put_at(fx, "tb", "", "c0001", NULL, t0 + 100, SST_THREAD_INTERRUPTED, 0);
    put_at(fx, "tb", "", "c0002", "c0001", t0 + 900, SST_THREAD_INTERRUPTED, 5);
    put_at(fx, "tc", "", "c0001", NULL, t0 + 200, SST_THREAD_ERROR, 1);
    THREAD("ta", t0 + 300, t0 + 400, SST_THREAD_IDLE, 3, "c0002", 4, "{}");
    THREAD("tb", t0 + 100, t0 + 900, SST_THREAD_INTERRUPTED, 2, "c0002", 5, "{}");
    THREAD("tc", t0 + 200, t0 + 200, SST_THREAD_ERROR, 1, "c0001", 1, "{}");
    tlist l = {0};
    FAILS(thread_info(fx, "tz", &l), SST_ENOTFOUND);

    /* Orders (ids, created and updated differ), paging, status. */
    static const struct {
        sst_thread_order order;
        bool desc;
        size_t offset, limit;
        const char *want;
    } orders[] = {
        {SST_THREADS_BY_ID, false, 0, 0, "ta,tb,tc"},
        {SST_THREADS_BY_ID, true, 0, 0, "tc,tb,ta"},
        {SST_THREADS_BY_CREATED, false, 0, 0, "tb,tc,ta"},
        {SST_THREADS_BY_CREATED, true, 0, 0, "ta,tc,tb"},
        {SST_THREADS_BY_UPDATED, false, 0, 0, "tc,ta,tb"},
        {SST_THREADS_BY_UPDATED, true, 0, 0, "tb,ta,tc"},
        {SST_THREADS_BY_UPDATED, true, 1, 2, "ta,tc"},
        {SST_THREADS_BY_ID, false, 1, 1, "tb"},
        {SST_THREADS_BY_ID, false, 1, 0, "tb,tc"},
        {SST_THREADS_BY_ID, false, 2, 5, "tc"},
        {SST_THREADS_BY_ID, false, 3, 0, ""},
    };
    for (size_t i = 0; i < sizeof orders / sizeof orders[0]; i++) {
        sst_thread_query q = {.order = orders[i].order,
                              .descending = orders[i].desc,
                              .offset = orders[i].offset,
                              .limit = orders[i].limit};
        THREADS(&q, orders[i].want);
    }
    const sst_thread_status statuses[] = {SST_THREAD_IDLE, SST_THREAD_INTERRUPTED, SST_THREAD_ERROR,
                                          SST_THREAD_BUSY};
    const char *by_status[] = {"ta", "tb", "tc", ""};
    for (size_t i = 0; i < 4; i++) {
        sst_thread_query q = {.by_status = true, .status = statuses[i]};
        THREADS(&q, by_status[i]);
    }

    /* Busy while locked. */
    OK(sst_checkpointer_lock(fx->cp, "ta", false, E));
    FAILS(sst_checkpointer_lock(fx->cp, "ta", false, E), SST_EBUSY);
    THREAD("ta", t0 + 300, t0 + 400, SST_THREAD_BUSY, 3, "c0002", 4, "{}");
    sst_thread_query busy = {.by_status = true, .status = SST_THREAD_BUSY};
    THREADS(&busy, "ta");
    busy.status = SST_THREAD_IDLE;
    THREADS(&busy, "");
    sst_checkpointer_unlock(fx->cp, "ta");
    THREAD("ta", t0 + 300, t0 + 400, SST_THREAD_IDLE, 3, "c0002", 4, "{}");

    /* search_threads gives the same as values. */
    sst_thread_query q = {0};
    check_search_threads(fx, &q, 3);
    q = (sst_thread_query){.by_status = true, .status = SST_THREAD_INTERRUPTED};
    check_search_threads(fx, &q, 1);
    sst_value *arr = sst_checkpointer_search_threads(fx->cp, NULL, E); /* NULL: all, by id */
    assert_non_null(arr);
    assert_int_equal(sst_array_len(arr), 3);
    assert_json_eq(sst_object_get(sst_array_get(arr, 1), "status"), "\"interrupted\"");
    assert_json_eq(sst_object_get(sst_array_get(arr, 1), "latest"), "\"c0002\"");
    sst_value_unref(arr);

    /* User metadata: replaced as a whole, searched by member. */
    thread_put(fx, "ta", "{\"owner\":\"ann\",\"tier\":1}");
    thread_put(fx, "tb", "{\"owner\":\"bob\",\"x\":1}");
    thread_put(fx, "tb", "{\"owner\":\"bob\"}");
    thread_put(fx, "tc", "{\"owner\":\"ann\",\"tier\":2}");
    THREAD("tb", t0 + 100, -1, SST_THREAD_INTERRUPTED, 2, "c0002", 5, "{\"owner\":\"bob\"}");
    OK(thread_info(fx, "tb", &l));
    assert_true(l.v[0].updated_at >= t0 + 900);
    tlist_clear(&l);
    const char *filters[] = {"{\"owner\":\"ann\"}", "{\"owner\":\"ann\",\"tier\":2}",
                             "{\"nope\":1}", "{\"owner\":\"ann\"}"};
    const char *matching[] = {"ta,tc", "tc", "", "tc"};
    for (size_t i = 0; i < 4; i++) {
        sst_value *m = tu_json(filters[i]);
        q = (sst_thread_query){.metadata = m, .by_status = i == 3, .status = SST_THREAD_ERROR};
        THREADS(&q, matching[i]);
        sst_value_unref(m);
    }

    /* A thread made by thread_put alone. */
    thread_put(fx, "td", "{\"m\":1}");
    THREAD("td", -1, -1, SST_THREAD_IDLE, 0, NULL, 0, "{\"m\":1}");
    sst_value *m = tu_json("{\"m\":1}");
    q = (sst_thread_query){.metadata = m};
    check_search_threads(fx, &q, 1);
    sst_value_unref(m);
}

/* ---- 8. copy_thread ---- */

/* Fails unless every record of @p a equals that of @p b but for the thread id. */
static void assert_same_history(fixture *fx, const char *a, const char *b) {
    listing la = {0}, lb = {0};
    OK(list_q(fx, a, NULL, NULL, NULL, 0, &la));
    OK(list_q(fx, b, NULL, NULL, NULL, 0, &lb));
    sst_checkpoint_free(la.first);
    sst_checkpoint_free(lb.first);
    assert_string_equal(la.ids, lb.ids);
    const char *ids[] = {"c0001", "c0002", "k0001"}, *nss[] = {"", "", "child"};
    for (size_t i = 0; i < 3; i++) {
        sst_checkpoint *ga = GET(a, nss[i], ids[i]), *gb = GET(b, nss[i], ids[i]);
        sst_checkpoint want = *ga;
        want.thread_id = b;
        assert_rec_eq(gb, &want, true);
        sst_checkpoint_free(ga);
        sst_checkpoint_free(gb);
    }
}

static void case_copy_thread(void **state) {
    fixture *fx = *state;
    OK(put_blob(fx, "src", "c0001", NULL, "cb-1", "[\"shared\"]"));
    OK(put_blob(fx, "src", "c0002", "c0001", "cb-1", NULL));
    PUT("src", "child", "k0001", NULL);
    OK(put_writes(fx, "src", "", "c0002", "[[\"t\",\"w\",1]]", SST_THREAD_INTERRUPTED));
    thread_put(fx, "src", "{\"m\":1}");
    sst_code rc = sst_checkpointer_copy_thread(fx->cp, "src", "dst", E);
    OPTIONAL(rc, "copy_thread");
    OK(rc);
    assert_same_history(fx, "src", "dst");
    THREAD("dst", -1, -1, SST_THREAD_INTERRUPTED, 3, "c0002", 0, "{\"m\":1}");
    THREAD("src", -1, -1, SST_THREAD_INTERRUPTED, 3, "c0002", 0, "{\"m\":1}");
    LIST("src", NULL, NULL, NULL, 0, "k0001,c0002,c0001");
    FAILS(sst_checkpointer_copy_thread(fx->cp, "src", "dst", E), SST_ECONFLICT);
    thread_put(fx, "dmeta", "{\"x\":1}");
    FAILS(sst_checkpointer_copy_thread(fx->cp, "src", "dmeta", E), SST_ECONFLICT);
    LIST("dmeta", NULL, NULL, NULL, 0, "");

    /* The copy stands alone. */
    OK(sst_checkpointer_delete_thread(fx->cp, "src", E));
    FAILS(get_code(fx, "src", "", NULL), SST_ENOTFOUND);
    sst_checkpoint *got = GET("dst", "", "c0002");
    assert_blob(got, "cb-1", "[\"shared\"]");
    assert_payload(&got->writes, "[[\"t\",\"w\",1]]");
    sst_checkpoint_free(got);
    got = GET("dst", "", "c0001");
    assert_blob(got, "cb-1", "[\"shared\"]");
    sst_checkpoint_free(got);
    THREAD("dst", -1, -1, SST_THREAD_INTERRUPTED, 3, "c0002", 0, "{\"m\":1}");
    OK(put_blob(fx, "other", "c0001", NULL, "cb-1", NULL));
    PUT("dst", "", "c0003", "c0002");
}

/* ---- 9. delete_thread ---- */

static void case_delete_thread(void **state) {
    fixture *fx = *state;
    PUT("t-d", "", "c0001", NULL);
    PUT("t-d", "", "c0002", "c0001");
    PUT("t-d", "child", "k0001", NULL);
    OK(put_writes(fx, "t-d", "", "c0002", "[[\"t\",\"w\",1]]", SST_THREAD_IDLE));
    thread_put(fx, "t-d", "{\"a\":1}");
    PUT("t-keep", "", "c0001", NULL);
    OK(sst_checkpointer_delete_thread(fx->cp, "t-d", E));
    FAILS(get_code(fx, "t-d", "", NULL), SST_ENOTFOUND);
    FAILS(get_code(fx, "t-d", "", "c0001"), SST_ENOTFOUND);
    FAILS(get_code(fx, "t-d", "child", NULL), SST_ENOTFOUND);
    LIST("t-d", NULL, NULL, NULL, 0, "");
    tlist l = {0};
    FAILS(thread_info(fx, "t-d", &l), SST_ENOTFOUND);
    sst_thread_query q = {0};
    THREADS(&q, "t-keep");
    LATEST("t-keep", "", "c0001");
    OK(sst_checkpointer_delete_thread(fx->cp, "t-unknown", E));
    OK(sst_checkpointer_delete_thread(fx->cp, "t-d", E));
    PUT("t-d", "", "c0001", NULL); /* its history starts again */
    LIST("t-d", NULL, NULL, NULL, 0, "c0001");
}

/* ---- 10. prune ---- */

/* Puts a chain PREFIX0001... of the kinds 'S' (snapshot) and 'D' (delta) in @p kinds. */
static void put_kinds(fixture *fx, const char *thread, const char *ns, char prefix,
                      const char *kinds) {
    char id[32], parent[32] = "";
    for (size_t i = 0; kinds[i] != '\0'; i++) {
        snprintf(id, sizeof id, "%c%04zu", prefix, i + 1);
        sst_checkpoint r = rec_make(fx, thread, ns, id, i > 0 ? parent : NULL);
        r.kind = kinds[i] == 'S' ? SST_CHECKPOINT_SNAPSHOT : SST_CHECKPOINT_DELTA;
        OK(put(fx, &r));
        memcpy(parent, id, sizeof id);
    }
}

static void case_prune(void **state) {
    fixture *fx = *state;
    const char *kinds = "SDDSDDD"; /* pb-old: c0001..c0003; pb-new: c0004..c0007 */
    for (size_t i = 0; i < 7; i++) {
        char id[32], parent[32];
        snprintf(id, sizeof id, "c%04zu", i + 1);
        snprintf(parent, sizeof parent, "c%04zu", i);
        sst_blob b = {i < 3 ? "pb-old" : "pb-new", {0}};
        if (i == 0 || i == 3) {
            b.content = pl(fx, i == 0 ? "\"old\"" : "\"new\"");
        }
        sst_checkpoint r = rec_make(fx, "t-p", "", id, i > 0 ? parent : NULL);
        r.kind = kinds[i] == 'S' ? SST_CHECKPOINT_SNAPSHOT : SST_CHECKPOINT_DELTA;
        r.blobs = &b;
        r.n_blobs = 1;
        OK(put(fx, &r));
    }
    OK(put_writes(fx, "t-p", "", "c0002", "[[\"old\",\"w\",1]]", SST_THREAD_IDLE));
    OK(put_writes(fx, "t-p", "", "c0007", "[[\"new\",\"w\",7]]", SST_THREAD_IDLE));
    size_t removed = 99;
    sst_code rc = sst_checkpointer_prune(fx->cp, "t-p", 2, &removed, E);
    OPTIONAL(rc, "prune");
    OK(rc);
    assert_int_equal(removed, 3);
    LIST("t-p", NULL, NULL, NULL, 0, "c0007,c0006,c0005,c0004");
    FAILS(get_code(fx, "t-p", "", "c0001"), SST_ENOTFOUND);
    FAILS(get_code(fx, "t-p", "", "c0003"), SST_ENOTFOUND);
    sst_checkpoint *got = GET("t-p", "", "c0007");
    assert_payload(&got->writes, "[[\"new\",\"w\",7]]");
    assert_blob(got, "pb-new", "\"new\"");
    sst_checkpoint_free(got);
    got = GET("t-p", "", "c0004");
    assert_int_equal(got->kind, SST_CHECKPOINT_SNAPSHOT);
    assert_blob(got, "pb-new", "\"new\"");
    sst_checkpoint_free(got);
    FAILS(put_blob(fx, "t-q", "c0001", NULL, "pb-old", NULL), SST_ENOTFOUND);
    OK(put_blob(fx, "t-q", "c0001", NULL, "pb-new", NULL));
    /* A removed checkpoint's writes do not come back with a new record of its id. */
    sst_checkpoint again = rec_make(fx, "t-p", "", "c0002", "c0007");
    again.fork = true;
    OK(put(fx, &again));
    WRITES("t-p", "c0002", NULL, SST_THREAD_IDLE);

    put_kinds(fx, "t-p2", "", 'c', "SDS");
    OK(sst_checkpointer_prune(fx->cp, "t-p2", 1, &removed, E));
    assert_int_equal(removed, 2);
    LIST("t-p2", NULL, NULL, NULL, 0, "c0003");
    OK(sst_checkpointer_prune(fx->cp, "t-p2", 1, NULL, E));
    FAILS(sst_checkpointer_prune(fx->cp, "t-p2", 0, &removed, E), SST_EINVAL);
    LIST("t-p2", NULL, NULL, NULL, 0, "c0003");

    /* Each namespace keeps its own latest records and what they are read from. */
    put_kinds(fx, "t-p3", "", 'c', "S");
    put_kinds(fx, "t-p3", "child", 'k', "SSDS");
    OK(sst_checkpointer_prune(fx->cp, "t-p3", 2, &removed, E));
    assert_int_equal(removed, 1);
    LIST("t-p3", NULL, NULL, NULL, 0, "k0004,k0003,k0002,c0001");
}

/* ---- 11. formats ---- */

static void case_formats(void **state) {
    fixture *fx = *state;
    sst_checkpoint old = rec_make(fx, "fmt", "", "a-old", NULL);
    old.format = 1;
    OK(put(fx, &old));
    sst_checkpoint *got = GET("fmt", "", "a-old");
    assert_int_equal(got->format, 1);
    sst_checkpoint_free(got);
    sst_checkpoint newer = rec_make(fx, "fmt", "", "b-new", "a-old");
    newer.format = SST_CHECKPOINT_FORMAT + 1;
    OK(put(fx, &newer));
    char ours[16], theirs[16];
    snprintf(ours, sizeof ours, "%d", SST_CHECKPOINT_FORMAT);
    snprintf(theirs, sizeof theirs, "%d", SST_CHECKPOINT_FORMAT + 1);
    FAILS(get_code(fx, "fmt", "", "b-new"), SST_ENOTSUP);
    MSG_HAS(ours);
    MSG_HAS(theirs);
    FAILS(get_code(fx, "fmt", "", NULL), SST_ENOTSUP);
    listing l = {0};
    FAILS(list_q(fx, "fmt", "", NULL, NULL, 0, &l), SST_ENOTSUP);
    sst_checkpoint_free(l.first);
    assert_int_equal(l.n, 0);
    LIST("fmt", "", NULL, "b-new", 0, "a-old");
}

/* ---- 12. argument checks, 13. references ---- */

static void case_arguments(void **state) {
    fixture *fx = *state;
    sst_checkpoint r = rec_make(fx, "t-a", "", "c0001", NULL);
    const char *threads[] = {NULL, "", "t-a", "t-a"}, *ids[] = {"c0001", "c0001", NULL, ""};
    for (size_t i = 0; i < 4; i++) {
        r.thread_id = threads[i];
        r.id = ids[i];
        FAILS(put(fx, &r), SST_EINVAL);
        MSG_HAS(i < 2 ? "thread_id" : "id");
    }
    FAILS(put(fx, NULL), SST_EINVAL);
    LIST("t-a", NULL, NULL, NULL, 0, "");
    FAILS(get_code(fx, NULL, "", NULL), SST_EINVAL);
    listing l = {0};
    FAILS(list_q(fx, NULL, NULL, NULL, NULL, 0, &l), SST_EINVAL);
    FAILS(put_writes(fx, NULL, "", "c0001", "[]", SST_THREAD_IDLE), SST_EINVAL);
    FAILS(put_writes(fx, "t-a", "", NULL, "[]", SST_THREAD_IDLE), SST_EINVAL);
    FAILS(sst_checkpointer_lock(fx->cp, NULL, false, E), SST_EINVAL);
}

static void case_references(void **state) {
    fixture *fx = *state;
    assert_ptr_equal(sst_checkpointer_ref(fx->cp), fx->cp);
    sst_checkpointer_free(fx->cp); /* drops the extra reference: still usable */
    PUT("t-r", "", "c0001", NULL);
    LATEST("t-r", "", "c0001");
    sst_checkpointer_free(NULL);
}

/* ---- 14. concurrent readers and one writer ---- */

enum { CC_RECORDS = 300, CC_READERS = 4 };

typedef struct reader {
    sst_checkpointer *cp;
    atomic_int *done;
    long rounds;
    char error[300]; /* the first inconsistency seen, "" when none */
} reader;

/* n of an id "cNNNN" in 1..CC_RECORDS, else -1. */
static int cc_number(const char *id) {
    char *end = NULL;
    long n = id != NULL && id[0] == 'c' ? strtol(id + 1, &end, 10) : -1;
    return n >= 1 && n <= CC_RECORDS && *end == '\0' && strlen(id) == 5 ? (int)n : -1;
}

typedef struct cc_listing {
    int count, prev;
    char expect[16]; /* the previous record's parent: this one's id */
    char error[200];
} cc_listing;

static bool cc_on_rec(const sst_checkpoint *rec, void *ud) {
    cc_listing *l = ud;
    int n = cc_number(rec->id);
    if (n < 0) {
        snprintf(l->error, sizeof l->error, "listed an id never put: '%s'", rec->id);
    } else if (l->count > 0 && (n >= l->prev || strcmp(rec->id, l->expect) != 0)) {
        snprintf(l->error, sizeof l->error, "listed %s after c%04d (expected %s)", rec->id, l->prev,
                 l->expect);
    } else if (!payload_empty(&rec->body)) {
        snprintf(l->error, sizeof l->error, "listed %s with its body", rec->id);
    }
    l->count++;
    l->prev = n;
    snprintf(l->expect, sizeof l->expect, "%s", rec->parent_id ? rec->parent_id : "");
    return l->error[0] == '\0';
}

/* Checks the latest record; returns its number, or -1 with rd->error set. */
static int cc_check_latest(reader *rd, int last) {
    sst_error err;
    sst_checkpoint *r = sst_checkpointer_get(rd->cp, "cc", "", NULL, &err);
    if (r == NULL) {
        snprintf(rd->error, sizeof rd->error, "get: %s: %s", sst_code_name(err.code), err.msg);
        return -1;
    }
    int n = cc_number(r->id);
    char parent[16];
    snprintf(parent, sizeof parent, "c%04d", n - 1);
    sst_value *body = sst_payload_value(&r->body, &err);
    const sst_value *bid = body != NULL ? sst_object_get(body, "id") : NULL;
    if (n < 0 || n < last) {
        snprintf(rd->error, sizeof rd->error, "latest is %s after c%04d", r->id, last);
    } else if (r->step != n || (n > 1 && (r->parent_id == NULL || strcmp(r->parent_id, parent)))) {
        snprintf(rd->error, sizeof rd->error, "%s has step %lld, parent %s", r->id,
                 (long long)r->step, r->parent_id ? r->parent_id : "(NULL)");
    } else if (bid == NULL || !sst_is_string(bid) || strcmp(sst_string_cstr(bid), r->id) != 0 ||
               sst_int_value(sst_object_get(body, "n")) != n) {
        snprintf(rd->error, sizeof rd->error, "%s has a body of another record", r->id);
    }
    sst_value_unref(body);
    sst_checkpoint_free(r);
    return rd->error[0] ? -1 : n;
}

static void *cc_reader(void *arg) {
    reader *rd = arg;
    int last = 0;
    while (rd->error[0] == '\0') {
        bool finished = atomic_load(rd->done) != 0; /* one more round after the last put */
        if ((last = cc_check_latest(rd, last)) < 0) {
            break;
        }
        cc_listing l = {0};
        sst_error err;
        sst_checkpoint_query q = {.thread_id = "cc", .ns = "", .limit = 8};
        sst_code rc = sst_checkpointer_list(rd->cp, &q, cc_on_rec, &l, &err);
        if (rc != SST_OK || l.error[0] || l.count == 0) {
            snprintf(rd->error, sizeof rd->error, "list: %s: %s", sst_code_name(rc),
                     rc != SST_OK   ? err.msg
                     : l.count == 0 ? "nothing listed"
                                    : l.error);
        }
        rd->rounds++;
        if (finished) {
            break;
        }
        sched_yield();
    }
    return NULL;
}

static sst_code cc_put(fixture *fx, int n) {
    char id[16], parent[16], body[64];
    snprintf(id, sizeof id, "c%04d", n);
    snprintf(parent, sizeof parent, "c%04d", n - 1);
    snprintf(body, sizeof body, "{\"id\":\"%s\",\"n\":%d}", id, n);
    sst_value *holder;
    sst_checkpoint r = {.format = SST_CHECKPOINT_FORMAT,
                        .thread_id = "cc",
                        .ns = "",
                        .id = id,
                        .parent_id = n > 1 ? parent : NULL,
                        .step = n,
                        .source = "loop",
                        .created_at = 1700000000000 + n,
                        .body = payload_of(fx->cp, body, &holder)};
    sst_code rc = put(fx, &r);
    sst_value_unref(holder);
    return rc;
}

static void case_concurrent_readers(void **state) {
    fixture *fx = *state;
    OK(cc_put(fx, 1));
    atomic_int done = 0;
    reader readers[CC_READERS];
    pthread_t tids[CC_READERS];
    for (int i = 0; i < CC_READERS; i++) {
        readers[i] = (reader){.cp = fx->cp, .done = &done};
        assert_int_equal(pthread_create(&tids[i], NULL, cc_reader, &readers[i]), 0);
    }
    sst_code rc = SST_OK;
    for (int n = 2; n <= CC_RECORDS && rc == SST_OK; n++) {
        rc = cc_put(fx, n);
    }
    atomic_store(&done, 1);
    for (int i = 0; i < CC_READERS; i++) {
        pthread_join(tids[i], NULL);
    }
    OK(rc);
    for (int i = 0; i < CC_READERS; i++) {
        if (readers[i].error[0]) {
            fail_msg("reader %d after %ld rounds: %s", i, readers[i].rounds, readers[i].error);
        }
        assert_true(readers[i].rounds > 0);
    }
    LATEST("cc", "", "c0300");
}

/* ---- 15. storage errors, 16. persistence ---- */

/* A table named like "%checkpoint%" with a column named like "%body%", from the schema. */
static bool find_body_column(sqlite3 *db, char *table, char *column, size_t n) {
    sqlite3_stmt *st;
    bool found = false;
    if (sqlite3_prepare_v2(db,
                           "SELECT m.name, p.name FROM sqlite_master m, pragma_table_info(m.name) p"
                           " WHERE m.type = 'table' AND m.name LIKE '%checkpoint%'"
                           " AND p.name LIKE '%body%' ORDER BY p.name <> 'body', m.name",
                           -1, &st, NULL) != SQLITE_OK) {
        return false;
    }
    if (sqlite3_step(st) == SQLITE_ROW) {
        snprintf(table, n, "%s", (const char *)sqlite3_column_text(st, 0));
        snprintf(column, n, "%s", (const char *)sqlite3_column_text(st, 1));
        found = true;
    }
    sqlite3_finalize(st);
    return found;
}

/* Fails unless @p sql (PL/pgSQL raising when something is off) runs on @p url. */
#define PG_CHECK(url, sql) assert_int_equal(tu_pg_exec((url), "DO $$ BEGIN " sql " END $$"), 0)

/*
 * PostgreSQL: an unreachable server; tables at a newer schema version (refused,
 * nothing changed); a table altered to another shape; another application's table
 * under one of the saver's names in an empty schema (refused, nothing made).
 */
static void pg_storage_errors(fixture *fx) {
    char url[600], other[600];
    assert_true(pg_url_of(fx->dir, url, sizeof url));
    PUT("t-x", "", "c0001", NULL);

    assert_null(sst_postgres_saver_open("postgresql://nobody@127.0.0.1:1/none", NULL, E));
    FAILS(fx->err.code, SST_EUNAVAILABLE);
    MSG_HAS("127.0.0.1:1");
    assert_null(sst_postgres_saver_open_pg(NULL, NULL, E));
    FAILS(fx->err.code, SST_EINVAL);

    sst_checkpointer_free(fx->cp);
    fx->cp = NULL;
    assert_int_equal(
        tu_pg_exec(url, "UPDATE sst_schema SET version = 99 WHERE component = 'checkpoint'"), 0);
    assert_null(sst_postgres_saver_open(url, NULL, E));
    FAILS(fx->err.code, SST_ENOTSUP);
    MSG_HAS("version 99");
    MSG_HAS("postgresql://");
    PG_CHECK(url, "IF (SELECT version FROM sst_schema WHERE component = 'checkpoint') <> 99"
                  " OR (SELECT count(*) FROM sst_checkpoints) <> 1"
                  " THEN RAISE EXCEPTION 'changed'; END IF;");
    assert_int_equal(
        tu_pg_exec(url, "UPDATE sst_schema SET version = 1 WHERE component = 'checkpoint'"), 0);

    assert_int_equal(tu_pg_exec(url, "ALTER TABLE sst_checkpoints RENAME COLUMN body TO b"), 0);
    assert_null(sst_postgres_saver_open(url, NULL, E));
    FAILS(fx->err.code, SST_EIO);
    MSG_HAS("sst_checkpoints");
    MSG_HAS("body");
    assert_int_equal(tu_pg_exec(url, "ALTER TABLE sst_checkpoints RENAME COLUMN b TO body"), 0);
    fx_reopen(fx);
    LATEST("t-x", "", "c0001");

    assert_int_equal(tu_pg_fresh("foreign", other, sizeof other), 0);
    assert_int_equal(tu_pg_exec(other, "CREATE TABLE sst_checkpoint_heads(k integer)"), 0);
    sst_checkpointer *cp = sst_postgres_saver_open(other, NULL, E);
    assert_null(cp);
    FAILS(fx->err.code, SST_EIO);
    MSG_HAS("sst_checkpoint_heads");
    PG_CHECK(other, "IF to_regclass('sst_checkpoints') IS NOT NULL"
                    " OR (SELECT count(*) FROM pg_attribute WHERE attnum > 0 AND NOT attisdropped"
                    " AND attrelid = 'sst_checkpoint_heads'::regclass) <> 1"
                    " THEN RAISE EXCEPTION 'changed'; END IF;");
    const char *schema = strstr(other, "search_path%3D") + strlen("search_path%3D");
    char sql[240];
    snprintf(sql, sizeof sql, "SET client_min_messages = warning; DROP SCHEMA %s CASCADE", schema);
    assert_int_equal(tu_pg_exec(tu_pg_url(), sql), 0);
}

static void case_storage_errors(void **state) {
    fixture *fx = *state;
    if (fx->be->postgres) {
        pg_storage_errors(fx);
        return;
    }
    if (fx->be->sqlite_file == NULL) {
        print_message("%s: no file to damage; skipped\n", fx->be->name);
        skip();
    }
    char path[128], table[64], column[64], sql[256];
    snprintf(path, sizeof path, "%s/%s", fx->dir, fx->be->sqlite_file);
    PUT("t-x", "", "c0001", NULL);
    sst_checkpointer_free(fx->cp);
    fx->cp = NULL;
    sqlite3 *db;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    if (!find_body_column(db, table, column, sizeof table)) {
        sqlite3_close(db);
        fx_reopen(fx);
        print_message("%s: no checkpoint table with a body column in the schema; skipped\n", path);
        skip();
    }
    snprintf(sql, sizeof sql, "UPDATE \"%s\" SET \"%s\" = 'x'", table, column);
    assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
    assert_true(sqlite3_changes(db) >= 1);
    sqlite3_close(db);
    fx_reopen(fx);
    FAILS(get_code(fx, "t-x", "", "c0001"), SST_EIO);
    MSG_HAS(path);
    MSG_HAS("t-x");
    MSG_HAS("c0001");
    FAILS(get_code(fx, "t-x", "", NULL), SST_EIO);

    /* A path that cannot be opened (we may run as root: chmod would not stop us). */
    snprintf(path, sizeof path, "%s/missing/dir/store.db", fx->dir);
    assert_null(sst_sqlite_saver_open(path, NULL, E));
    FAILS(fx->err.code, SST_EIO);
    MSG_HAS(path);
}

static void case_persistence(void **state) {
    fixture *fx = *state;
    if (!fx->be->reopen) {
        print_message("%s: keeps nothing across opening; skipped\n", fx->be->name);
        skip();
    }
    sst_blob b = {"pblob", pl(fx, "{\"kept\":[1,2]}")};
    sst_checkpoint a = rec_make(fx, "t-s", "", "c0001", NULL);
    a.blobs = &b;
    a.n_blobs = 1;
    a.next = pl(fx, "[\"x\"]");
    a.run_id = "r";
    a.step = -1;
    OK(put(fx, &a));
    PUT("t-s", "", "c0002", "c0001");
    PUT("t-s", "child", "k0001", NULL);
    OK(put_writes(fx, "t-s", "", "c0002", "[[\"t\",\"w\",2]]", SST_THREAD_INTERRUPTED));
    thread_put(fx, "t-s", "{\"p\":1}");
    const char *ids[] = {"c0001", "c0002", "k0001"}, *nss[] = {"", "", "child"};
    sst_checkpoint *before[3];
    for (size_t i = 0; i < 3; i++) {
        before[i] = GET("t-s", nss[i], ids[i]);
    }
    fx_reopen(fx);
    for (size_t i = 0; i < 3; i++) {
        sst_checkpoint *after = GET("t-s", nss[i], ids[i]);
        assert_rec_eq(after, before[i], true);
        sst_checkpoint_free(after);
        sst_checkpoint_free(before[i]);
    }
    LIST("t-s", NULL, NULL, NULL, 0, "k0001,c0002,c0001");
    THREAD("t-s", a.created_at, -1, SST_THREAD_INTERRUPTED, 3, "c0002", 0, "{\"p\":1}");
    sst_checkpoint r = rec_make(fx, "t-s", "", "c0003", NULL);
    FAILS(put(fx, &r), SST_ECONFLICT);
    r.parent_id = "c0002";
    OK(put(fx, &r));
}

static void sleep_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

/* ---- 17. two savers on one store (two processes), 18. the lease across them ---- */

/* A second saver on the fixture's store (for SQLite a second connection to its file, for
 * PostgreSQL a second pool on its schema: another process as far as the store can tell). */
static sst_checkpointer *second_saver(fixture *fx) {
    if (!fx->be->reopen) {
        print_message("%s: one store per saver; skipped\n", fx->be->name);
        skip();
    }
    sst_checkpointer *cp = fx->be->open(fx->dir, E);
    if (cp == NULL) {
        fail_msg("%s: a second saver on %s: %s", fx->be->name, fx->dir, fx->err.msg);
    }
    return cp;
}

typedef struct racer {
    sst_checkpointer *cp;
    pthread_barrier_t *start;
    const char *thread, *parent, *blob;
    char id[16];
    bool del; /* delete the thread instead of putting */
    sst_code rc;
    sst_error err;
} racer;

static void *race(void *arg) {
    racer *r = arg;
    char body[64];
    snprintf(body, sizeof body, "{\"id\":\"%s\"}", r->id);
    sst_value *holder;
    sst_blob b = {r->blob, {0}};
    sst_checkpoint rec = {.format = SST_CHECKPOINT_FORMAT,
                          .thread_id = r->thread,
                          .ns = "",
                          .id = r->id,
                          .parent_id = r->parent,
                          .source = "loop",
                          .created_at = 1700000000000,
                          .body = payload_of(r->cp, body, &holder),
                          .blobs = r->blob != NULL ? &b : NULL,
                          .n_blobs = r->blob != NULL ? 1 : 0};
    pthread_barrier_wait(r->start);
    r->rc = r->del ? sst_checkpointer_delete_thread(r->cp, r->thread, &r->err)
                   : sst_checkpointer_put(r->cp, &rec, false, &r->err);
    sst_value_unref(holder);
    return NULL;
}

/* Runs @p a and @p b at once (each on its own OS thread). */
static void race_two(racer *a, racer *b) {
    pthread_barrier_t start;
    pthread_t ta, tb;
    pthread_barrier_init(&start, NULL, 2);
    a->start = b->start = &start;
    assert_int_equal(pthread_create(&ta, NULL, race, a), 0);
    assert_int_equal(pthread_create(&tb, NULL, race, b), 0);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    pthread_barrier_destroy(&start);
}

enum { RACE_ROUNDS = 40 };

/* Two savers put a child of the same parent at once: exactly one wins, every round. */
static void case_two_savers_fencing(void **state) {
    fixture *fx = *state;
    sst_checkpointer *other = second_saver(fx);
    char head[16] = "";
    for (int i = 0; i < RACE_ROUNDS; i++) {
        racer a = {.cp = fx->cp, .thread = "t-race", .parent = head[0] ? head : NULL};
        racer b = {.cp = other, .thread = "t-race", .parent = head[0] ? head : NULL};
        snprintf(a.id, sizeof a.id, "c%04d-a", i);
        snprintf(b.id, sizeof b.id, "c%04d-b", i);
        race_two(&a, &b);
        racer *won = a.rc == SST_OK ? &a : &b, *lost = a.rc == SST_OK ? &b : &a;
        code_at(won->rc, SST_OK, &won->err, __FILE__, __LINE__);
        code_at(lost->rc, SST_ECONFLICT, &lost->err, __FILE__, __LINE__);
        msg_has_at(&lost->err, "t-race", __FILE__, __LINE__);
        snprintf(head, sizeof head, "%s", won->id);
    }
    /* One linear history, as seen through both savers. */
    listing l = {0};
    OK(list_q(fx, "t-race", "", NULL, NULL, 0, &l));
    sst_checkpoint_free(l.first);
    assert_int_equal(l.n, RACE_ROUNDS);
    LATEST("t-race", "", head);
    sst_checkpoint *r = sst_checkpointer_get(other, "t-race", "", NULL, E);
    assert_non_null(r);
    assert_string_equal(r->id, head);
    sst_checkpoint_free(r);
    sst_checkpointer_free(other);
}

/*
 * A blob referred to by one saver while the other deletes the only record holding it:
 * the reference either comes first (the blob stays and reads back) or finds it gone
 * (SST_ENOTFOUND, and sending the content again works); the last reference deletes it.
 */
static void case_two_savers_blobs(void **state) {
    fixture *fx = *state;
    sst_checkpointer *other = second_saver(fx);
    int kept = 0;
    for (int i = 0; i < RACE_ROUNDS; i++) {
        char t1[32], t2[32], blob[32];
        snprintf(t1, sizeof t1, "t-bd-%d", i);
        snprintf(t2, sizeof t2, "t-br-%d", i);
        snprintf(blob, sizeof blob, "rb-%d", i);
        OK(put_blob(fx, t1, "c0001", NULL, blob, "[\"shared\"]"));
        racer del = {.cp = fx->cp, .thread = t1, .del = true};
        racer ref = {.cp = other, .thread = t2, .blob = blob, .id = "c0001"};
        race_two(&del, &ref);
        code_at(del.rc, SST_OK, &del.err, __FILE__, __LINE__);
        if (ref.rc == SST_OK) {
            kept++;
        } else {
            code_at(ref.rc, SST_ENOTFOUND, &ref.err, __FILE__, __LINE__);
            msg_has_at(&ref.err, blob, __FILE__, __LINE__);
            OK(put_blob(fx, t2, "c0001", NULL, blob, "[\"shared\"]"));
        }
        sst_checkpoint *got = GET(t2, "", "c0001");
        assert_blob(got, blob, "[\"shared\"]");
        sst_checkpoint_free(got);
        OK(sst_checkpointer_delete_thread(other, t2, E));
        FAILS(put_blob(fx, t2, "c0001", NULL, blob, NULL), SST_ENOTFOUND);
    }
    print_message("%s: the reference came first in %d of %d rounds\n", fx->be->name, kept,
                  RACE_ROUNDS);
    sst_checkpointer_free(other);
}

typedef struct waiter {
    sst_checkpointer *cp;
    sst_code rc;
    sst_error err;
} waiter;

static void *lock_waiting(void *arg) {
    waiter *w = arg;
    w->rc = sst_checkpointer_lock(w->cp, "t-lk", true, &w->err);
    return NULL;
}

/* A thread locked through one saver is busy for the other, until unlocked. */
static void case_two_savers_lock(void **state) {
    fixture *fx = *state;
    sst_checkpointer *other = second_saver(fx);
    PUT("t-lk", "", "c0001", NULL);
    OK(sst_checkpointer_lock(fx->cp, "t-lk", false, E));
    sst_error err;
    code_at(sst_checkpointer_lock(other, "t-lk", false, &err), SST_EBUSY, &err, __FILE__, __LINE__);
    msg_has_at(&err, "t-lk", __FILE__, __LINE__);
    tlist l = {0};
    code_at(sst_checkpointer_thread_get(other, "t-lk", on_thread, &l, &err), SST_OK, &err, __FILE__,
            __LINE__);
    assert_int_equal(l.v[0].status, SST_THREAD_BUSY);
    tlist_clear(&l);
    /* The holder keeps committing under its lease. */
    PUT("t-lk", "", "c0002", "c0001");
    if (fx->be->postgres) { /* SQLite's lease is the process's: the other saver's too */
        sst_checkpointer_unlock(other, "t-lk"); /* not its lock: changes nothing */
        FAILS(sst_checkpointer_lock(fx->cp, "t-lk", false, E), SST_EBUSY);
    }

    /* A waiting locker gets it once the holder lets go. */
    waiter w = {.cp = other};
    pthread_t tid;
    assert_int_equal(pthread_create(&tid, NULL, lock_waiting, &w), 0);
    sleep_ms(150);
    sst_checkpointer_unlock(fx->cp, "t-lk");
    pthread_join(tid, NULL);
    code_at(w.rc, SST_OK, &w.err, __FILE__, __LINE__);
    FAILS(sst_checkpointer_lock(fx->cp, "t-lk", false, E), SST_EBUSY);
    THREAD("t-lk", -1, -1, SST_THREAD_BUSY, 2, "c0002", 0, "{}");
    sst_checkpointer_unlock(other, "t-lk");
    THREAD("t-lk", -1, -1, SST_THREAD_IDLE, 2, "c0002", 0, "{}");
    OK(sst_checkpointer_lock(fx->cp, "t-lk", false, E));
    sst_checkpointer_unlock(fx->cp, "t-lk");
    sst_checkpointer_free(other);
}

/*
 * PostgreSQL: a holder alive in this process keeps its lease while it commits (renewed
 * by its puts) and loses it once it stops committing and the lease expires; then its
 * commits are refused (fencing).
 */
static void case_pg_lease_expiry(void **state) {
    fixture *fx = *state;
    if (!fx->be->postgres) {
        print_message("%s: no lease times to set; skipped\n", fx->be->name);
        skip();
    }
    char url[600];
    assert_true(pg_url_of(fx->dir, url, sizeof url));
    sst_postgres_saver_opts o;
    sst_postgres_saver_opts_init(&o);
    assert_int_equal(o.lease_ms, 30000);
    assert_int_equal(o.max_record_bytes, (size_t)256 << 20);
    o.lease_ms = 1500;
    sst_checkpointer *brief = sst_postgres_saver_open(url, &o, E);
    assert_non_null(brief);
    OK(sst_checkpointer_lock(brief, "t-ex", false, E));
    /* 12 commits 50 ms apart, longer in all than the lease: after each, another saver
     * must find the thread busy. The check counts only when it came less than a lease
     * after the commit began (the lease runs from the commit, so it was surely still
     * running then); on a machine so busy that it did not, the other saver may have
     * taken a lease that had run out: it gives the thread back and the round is not
     * counted. At least one round must count. */
    char id[16], parent[16] = "";
    int counted = 0;
    for (int i = 1; i <= 12; i++) {
        snprintf(id, sizeof id, "c%04d", i);
        sst_checkpoint r = rec_make(fx, "t-ex", "", id, parent[0] ? parent : NULL);
        double began = tu_now_s();
        OK(sst_checkpointer_put(brief, &r, false, E));
        snprintf(parent, sizeof parent, "%s", id);
        sst_error probe = {0};
        sst_code rc = sst_checkpointer_lock(fx->cp, "t-ex", false, &probe);
        bool in_lease = tu_now_s() - began < o.lease_ms / 1000.0;
        if (rc == SST_OK) {
            sst_checkpointer_unlock(fx->cp, "t-ex");
            if (in_lease) {
                fail_msg("round %d: the lease of a holder that commits was taken over", i);
            }
            OK(sst_checkpointer_lock(brief, "t-ex", false, E)); /* the machine stalled */
        } else {
            assert_int_equal(rc, SST_EBUSY);
            counted += in_lease;
        }
        sst_error_clear(&probe);
        sleep_ms(50);
    }
    assert_true(counted > 0);
    sleep_ms(o.lease_ms + 150);
    OK(sst_checkpointer_lock(fx->cp, "t-ex", false, E)); /* expired: taken over */
    FAILS(sst_checkpointer_lock(brief, "t-ex", false, E), SST_EBUSY);
    /* Fencing: the holder that stopped past its lease (paused, cut off) may not commit
     * any more, even on the latest checkpoint; the new holder may. */
    sst_checkpoint late = rec_make(fx, "t-ex", "", "c0013", "c0012");
    FAILS(sst_checkpointer_put(brief, &late, false, E), SST_ECONFLICT);
    MSG_HAS("taken over");
    LATEST("t-ex", "", "c0012");
    sst_checkpoint next = rec_make(fx, "t-ex", "", "c0013", "c0012");
    OK(sst_checkpointer_put(fx->cp, &next, false, E));
    LATEST("t-ex", "", "c0013");
    sst_checkpointer_unlock(brief, "t-ex"); /* no longer its lock: changes nothing */
    THREAD("t-ex", -1, -1, SST_THREAD_BUSY, 13, "c0013", 0, "{}");
    sst_checkpointer_unlock(fx->cp, "t-ex");

    /* A payload over the limit is refused before anything is written. */
    o.max_record_bytes = 16;
    sst_checkpointer *small = sst_postgres_saver_open(url, &o, E);
    assert_non_null(small);
    sst_checkpoint r = rec_make(fx, "t-ex", "", "c0014", "c0013");
    FAILS(sst_checkpointer_put(small, &r, false, E), SST_ELIMIT);
    LATEST("t-ex", "", "c0013");
    sst_checkpointer_free(small);
    sst_checkpointer_free(brief);
}

/* The test server's URL @p base with database @p db instead of its own; false when
 * @p base is not a URL (a libpq keyword string). */
static bool pg_url_with_db(const char *base, const char *db, char *out, size_t n) {
    const char *scheme = strstr(base, "://");
    if (scheme == NULL) {
        return false;
    }
    const char *tail = scheme + 3 + strcspn(scheme + 3, "/?"), *query = strchr(tail, '?');
    return (size_t)snprintf(out, n, "%.*s/%s%s", (int)(tail - base), base, db,
                            query != NULL ? query : "") < n;
}

typedef struct cutter {
    const char *db;
    atomic_int *done;
    atomic_int rounds;
} cutter;

/* Terminates every connection to database c->db, every few ms, until told to stop. */
static void *cut_connections(void *arg) {
    cutter *c = arg;
    char sql[200];
    snprintf(sql, sizeof sql,
             "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '%s'"
             " AND pid <> pg_backend_pid()",
             c->db);
    while (atomic_load(c->done) == 0) {
        (void)tu_pg_exec(tu_pg_url(), sql);
        atomic_fetch_add(&c->rounds, 1);
        sleep_ms(7);
    }
    return NULL;
}

/*
 * PostgreSQL: connections cut under the saver (as a server restart or a network cut
 * would) cost time, never a checkpoint: every put is retried on a new connection,
 * and one whose COMMIT applied before its answer was lost is taken as done, so
 * the history stays one linear chain with every record in it. A database of its
 * own, so the other tests' connections are left alone.
 */
static void case_pg_connections_cut(void **state) {
    fixture *fx = *state;
    if (!fx->be->postgres) {
        print_message("%s: no connections to cut; skipped\n", fx->be->name);
        skip();
    }
    char db[64], url[600], quiet[640], sql[160];
    snprintf(db, sizeof db, "sst_cut_%ld", (long)getpid());
    if (!pg_url_with_db(tu_pg_url(), db, url, sizeof url)) {
        print_message("the test server's address is not a URL; skipped\n");
        skip();
    }
    snprintf(quiet, sizeof quiet, "%s%soptions=-cclient_min_messages%%3Dwarning", tu_pg_url(),
             strchr(tu_pg_url(), '?') != NULL ? "&" : "?");
    snprintf(sql, sizeof sql, "DROP DATABASE IF EXISTS %s WITH (FORCE)", db);
    assert_int_equal(tu_pg_exec(quiet, sql), 0);
    snprintf(sql, sizeof sql, "CREATE DATABASE %s", db);
    assert_int_equal(tu_pg_exec(tu_pg_url(), sql), 0);
    sst_checkpointer *cp = sst_postgres_saver_open(url, NULL, E);
    assert_non_null(cp);
    atomic_int done = 0;
    cutter c = {db, &done, 0};
    pthread_t tid;
    assert_int_equal(pthread_create(&tid, NULL, cut_connections, &c), 0);
    /* At least N puts, and on until the connections were cut CUTS times. */
    enum { N = 60, CUTS = 40, MAX = 5000 };
    char id[16], parent[16] = "";
    sst_code rc = SST_OK;
    int n = 0;
    while (rc == SST_OK && (n < N || atomic_load(&c.rounds) < CUTS) && n < MAX) {
        int i = ++n;
        snprintf(id, sizeof id, "c%04d", i);
        sst_value *holder;
        sst_checkpoint r = {.format = SST_CHECKPOINT_FORMAT,
                            .thread_id = "t-cut",
                            .ns = "",
                            .id = id,
                            .parent_id = parent[0] ? parent : NULL,
                            .step = i,
                            .source = "loop",
                            .created_at = 1700000000000 + i,
                            .body = payload_of(cp, "{\"n\":1}", &holder)};
        rc = sst_checkpointer_put(cp, &r, i % 2 == 0, E);
        sst_value_unref(holder);
        snprintf(parent, sizeof parent, "%s", id);
    }
    atomic_store(&done, 1);
    pthread_join(tid, NULL);
    OK(rc);
    listing l = {0};
    OK(sst_checkpointer_list(cp, &(sst_checkpoint_query){.thread_id = "t-cut"}, on_rec, &l, E));
    sst_checkpoint_free(l.first);
    assert_int_equal(l.n, n);
    sst_checkpoint *latest = sst_checkpointer_get(cp, "t-cut", "", NULL, E);
    assert_non_null(latest);
    assert_string_equal(latest->id, id);
    sst_checkpoint_free(latest);
    print_message("%d rounds of cut connections during %d puts\n", atomic_load(&c.rounds), n);
    sst_checkpointer_free(cp);
    snprintf(sql, sizeof sql, "DROP DATABASE %s WITH (FORCE)", db);
    assert_int_equal(tu_pg_exec(tu_pg_url(), sql), 0);
}

/* ---- the wrapper, against fake implementations (12, 13) ---- */

typedef struct fake {
    int destroyed, puts;
} fake;

static void fake_destroy(void *self) {
    ((fake *)self)->destroyed++;
}

static sst_code fake_put(void *self, const sst_checkpoint *rec, bool sync, sst_error *err) {
    (void)rec, (void)sync, (void)err;
    ((fake *)self)->puts++;
    return SST_OK;
}

static sst_code fake_none(sst_error *err, const char *thread) {
    if (err != NULL) {
        err->code = SST_ENOTFOUND;
        snprintf(err->msg, sizeof err->msg, "fake: thread '%s' has no checkpoints", thread);
    }
    return SST_ENOTFOUND;
}

static sst_code fake_put_writes(void *self, const char *thread, const char *ns, const char *id,
                                const sst_payload *writes, sst_thread_status status, bool sync,
                                sst_error *err) {
    (void)self, (void)ns, (void)id, (void)writes, (void)status, (void)sync;
    return fake_none(err, thread);
}

static sst_code fake_get(void *self, const char *thread, const char *ns, const char *id,
                         sst_checkpoint_fn each, void *ud, sst_error *err) {
    (void)self, (void)ns, (void)id, (void)each, (void)ud;
    return fake_none(err, thread);
}

static sst_code fake_list(void *self, const sst_checkpoint_query *q, sst_checkpoint_fn each,
                          void *ud, sst_error *err) {
    (void)self, (void)q, (void)each, (void)ud, (void)err;
    return SST_OK;
}

static sst_code fake_lock(void *self, const char *thread, bool wait, sst_error *err) {
    (void)self, (void)thread, (void)wait, (void)err;
    return SST_OK;
}

static void fake_unlock(void *self, const char *thread) {
    (void)self, (void)thread;
}

/* Sets the required operations; whatever else @p ops holds stays. */
static void fake_ops(sst_checkpointer_ops *ops, size_t size) {
    ops->size = size;
    ops->flags = 0;
    ops->destroy = fake_destroy;
    ops->put = fake_put;
    ops->put_writes = fake_put_writes;
    ops->get = fake_get;
    ops->list = fake_list;
    ops->lock = fake_lock;
    ops->unlock = fake_unlock;
}

static void api_ops_checked(void **state) {
    (void)state;
    fake f = {0};
    sst_error err;
    sst_checkpointer_ops ops = {0};
    fake_ops(&ops, 0);
    assert_null(sst_checkpointer_new(&ops, &f, &err));
    code_at(err.code, SST_EINVAL, &err, __FILE__, __LINE__);
    for (int i = 0; i < 6; i++) {
        ops = (sst_checkpointer_ops){0};
        fake_ops(&ops, sizeof ops);
        ops.put = i == 0 ? NULL : ops.put;
        ops.put_writes = i == 1 ? NULL : ops.put_writes;
        ops.get = i == 2 ? NULL : ops.get;
        ops.list = i == 3 ? NULL : ops.list;
        ops.lock = i == 4 ? NULL : ops.lock;
        ops.unlock = i == 5 ? NULL : ops.unlock;
        assert_null(sst_checkpointer_new(&ops, &f, &err));
        code_at(err.code, SST_EINVAL, &err, __FILE__, __LINE__);
    }
    assert_int_equal(f.destroyed, 0); /* self is not destroyed on failure */
    ops = (sst_checkpointer_ops){0};
    fake_ops(&ops, sizeof ops);
    ops.destroy = NULL; /* optional */
    sst_checkpointer *cp = sst_checkpointer_new(&ops, &f, &err);
    assert_non_null(cp);
    sst_checkpointer_free(cp);
}

/*
 * Built against an older header (the fields past @c size are garbage, never
 * called), and built against this one without the optional operations.
 */
static void api_ops_older_header(void **state) {
    (void)state;
    const size_t sizes[] = {offsetof(sst_checkpointer_ops, threads), sizeof(sst_checkpointer_ops)};
    for (size_t k = 0; k < 2; k++) {
        fake f = {0};
        sst_error err;
        sst_checkpointer_ops ops;
        memset(&ops, k == 0 ? 0xAB : 0, sizeof ops);
        fake_ops(&ops, sizes[k]);
        sst_checkpointer *cp = sst_checkpointer_new(&ops, &f, &err);
        assert_non_null(cp);
        memset(&ops, 0xCD, sizeof ops); /* the ops were copied */
        assert_ptr_equal(sst_checkpointer_self(cp), &f);
        assert_int_equal(sst_checkpointer_flags(cp), 0);
        sst_checkpoint r = {.format = SST_CHECKPOINT_FORMAT,
                            .thread_id = "t",
                            .ns = "",
                            .id = "c0001",
                            .source = "loop",
                            .body = {.data = "{}", .len = 2}};
        tu_assert_ok(sst_checkpointer_put(cp, &r, false, &err), &err, __FILE__, __LINE__);
        assert_int_equal(f.puts, 1);
        assert_null(sst_checkpointer_get(cp, "t", "", NULL, &err));
        code_at(err.code, SST_ENOTFOUND, &err, __FILE__, __LINE__);
        sst_thread_query q = {0};
        sst_value *m = tu_json("{}");
        const char *names[] = {"threads",     "thread_get",    "thread_put",
                               "copy_thread", "delete_thread", "prune"};
        const sst_code got[] = {
            sst_checkpointer_threads(cp, &q, on_thread, NULL, &err),
            sst_checkpointer_thread_get(cp, "t", on_thread, NULL, &err),
            sst_checkpointer_thread_put(cp, "t", m, &err),
            sst_checkpointer_copy_thread(cp, "t", "u", &err),
            sst_checkpointer_delete_thread(cp, "t", &err),
            sst_checkpointer_prune(cp, "t", 1, NULL, &err),
        };
        for (size_t i = 0; i < 6; i++) {
            if (got[i] != SST_ENOTSUP) {
                fail_msg("size %zu: %s gave %s, not SST_ENOTSUP", sizes[k], names[i],
                         sst_code_name(got[i]));
            }
        }
        assert_null(sst_checkpointer_search_threads(cp, NULL, &err));
        code_at(err.code, SST_ENOTSUP, &err, __FILE__, __LINE__);
        sst_value_unref(m);
        sst_checkpointer_free(cp);
        assert_int_equal(f.destroyed, 1);
    }
}

static void api_refcount(void **state) {
    (void)state;
    fake f = {0};
    sst_checkpointer_ops ops = {0};
    fake_ops(&ops, sizeof ops);
    sst_checkpointer *cp = sst_checkpointer_new(&ops, &f, NULL);
    assert_non_null(cp);
    assert_ptr_equal(sst_checkpointer_ref(cp), cp);
    sst_checkpointer_free(cp);
    assert_int_equal(f.destroyed, 0);
    sst_checkpointer_free(cp);
    assert_int_equal(f.destroyed, 1);
}

#define BACKEND_CASES(X)                                                                           \
    X(case_round_trip)                                                                             \
    X(case_list)                                                                                   \
    X(case_fencing)                                                                                \
    X(case_put_writes)                                                                             \
    X(case_put_order)                                                                              \
    X(case_blobs)                                                                                  \
    X(case_threads)                                                                                \
    X(case_copy_thread)                                                                            \
    X(case_delete_thread)                                                                          \
    X(case_prune)                                                                                  \
    X(case_formats)                                                                                \
    X(case_arguments)                                                                              \
    X(case_references)                                                                             \
    X(case_concurrent_readers)                                                                     \
    X(case_storage_errors)                                                                         \
    X(case_persistence)                                                                            \
    X(case_two_savers_fencing)                                                                     \
    X(case_two_savers_blobs)                                                                       \
    X(case_two_savers_lock)                                                                        \
    X(case_pg_lease_expiry)                                                                        \
    X(case_pg_connections_cut)

int main(void) {
    int failed = 0;
    for (size_t b = 0; b < sizeof k_backends / sizeof k_backends[0]; b++) {
        void *be = (void *)&k_backends[b];
        if (k_backends[b].postgres && tu_pg_url() == NULL) {
            print_message("[  SKIPPED ] %s: no test PostgreSQL server (SST_PGTEST_URL or "
                          "SST_PGTEST_URL_FILE; CTest's fixture \"pg\" starts one)\n",
                          k_backends[b].name);
            continue;
        }
#define SST_CASE(fn) cmocka_unit_test_prestate_setup_teardown(fn, fx_setup, fx_teardown, be),
        const struct CMUnitTest tests[] = {BACKEND_CASES(SST_CASE)};
#undef SST_CASE
        failed += cmocka_run_group_tests_name(k_backends[b].name, tests, NULL, NULL);
    }
    const struct CMUnitTest api[] = {
        cmocka_unit_test(api_ops_checked),
        cmocka_unit_test(api_ops_older_header),
        cmocka_unit_test(api_refcount),
    };
    failed += cmocka_run_group_tests_name("checkpointer", api, NULL, NULL);
    return failed != 0;
}
