/* SPDX-License-Identifier: MIT */
/*
 * Allocation failures in the checkpoint layer (issue 12; STYLE rule 40): the
 * chaos allocator fails the n-th allocation, for n = 1, 2, ..., over
 *   1 the savers themselves (memory and SQLite): create/open, put (with two
 *     blobs, then a delta with blob references), put_writes, get (latest and
 *     by id), list, search_threads, thread_put, copy_thread, prune (also of a
 *     delta whose snapshot must stay), delete_thread;
 *   2 durable graph runs through src/graph/persist.c on each saver: an invoke
 *     of ten supersteps whose list grows past 64 elements (snapshots carry
 *     blobs, snapshot_every = 4), with the default durability and with
 *     durability exit; then get_state (latest, and an older checkpoint read
 *     by replaying deltas), get_state_history, history_page and update_state;
 *   3 the Lua layer: sst_lua_script_load of a script compiled with a
 *     SqliteSaver, then a durable invoke of its graph.
 * Every failing call must report SST_ENOMEM (a NULL result or a failed run),
 * leak nothing (tu_chaos_live back to where it was), release the thread's
 * lock, and leave the store uncorrupted: what the store shows is unchanged
 * after a failed store call, every delta still has its parent; after a failed
 * run a fresh thread reads the state of one of the reference run's
 * checkpoints and a new run ends in the reference's final state; a SQLite
 * file passes sst_sqlite_check. A call may succeed although an allocation
 * failed (a best-effort cache, Lua's emergency collection): its result must
 * then be the one a call without failures gives.
 *
 * SQLite allocates through its own allocator, which never fails here: only
 * our allocations fail. Lua states allocate through the library allocator
 * (src/lua/memory.c), so the chaos allocator reaches them, but Lua answers a
 * failed allocation with an emergency collection and asks again: a single
 * failure inside Lua itself is absorbed.
 *
 * Problems are collected (printed, counted) rather than stopping at the first,
 * so that one run reports all of them; each case fails if it found any.
 */
#define _GNU_SOURCE /* mkdtemp, strdup, memmem */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "superstep/lua.h"
#include "superstep/superstep.h"
#include "test_util.h"

/*
 * Every n is tried up to DENSE_N; past it, every STRIDE-th, to keep an
 * operation that grows past it fast (today the largest, get_state_history on
 * SQLite, has about 2950 allocation points: all are tried).
 */
#define DENSE_N 3000
#define STRIDE  7
/* An operation that still fails at this n is reported. */
#define MAX_N 20000

static char g_dir[256];
static long g_problems; /* found by the current test */
static long g_shown;    /* printed by the current loop (loop_start resets it) */

/* Problems printed per loop (SST_CHAOS_SHOW=n for more); the others are only counted. */
static long show_max(void) {
    const char *v = getenv("SST_CHAOS_SHOW");
    long n = v != NULL ? strtol(v, NULL, 10) : 0;
    return n > 0 ? n : 6;
}

static void loop_start(void) {
    g_shown = 0;
}

/*
 * To reproduce one failure under a debugger: SST_CHAOS_OP=name runs only the
 * loops whose name contains it (the other store operations run once, without
 * failures), and SST_CHAOS_FROM=n starts them at n. E.g. SST_TEST_FILTER=
 * test_graph_sqlite SST_CHAOS_OP="sqlite update_state" SST_CHAOS_FROM=343.
 * SST_CHAOS_SKIP=name skips the loops whose name contains it. Both take
 * several names separated by '|'; a name written "=name" matches only a loop
 * of exactly that name. CTest splits test_graph_sqlite in three with them
 * (tests/CMakeLists.txt): the run ("=graph/sqlite"), the histories, the rest.
 */
static bool name_in(const char *name, const char *list) {
    for (const char *p = list; *p != '\0';) {
        const char *bar = strchr(p, '|');
        size_t len = bar != NULL ? (size_t)(bar - p) : strlen(p);
        bool exact = len > 0 && p[0] == '=';
        const char *want = exact ? p + 1 : p;
        size_t wlen = exact ? len - 1 : len;
        if (wlen > 0 && (exact ? strlen(name) == wlen && strncmp(name, want, wlen) == 0
                               : memmem(name, strlen(name), want, wlen) != NULL)) {
            return true;
        }
        p += len + (bar != NULL);
    }
    return false;
}

static bool skip_loop(const char *name) {
    const char *op = getenv("SST_CHAOS_OP"), *skip = getenv("SST_CHAOS_SKIP");
    return (op != NULL && !name_in(name, op)) || (skip != NULL && name_in(name, skip));
}

static long first_n(const char *name) {
    const char *from = getenv("SST_CHAOS_FROM");
    if (from == NULL || strtol(from, NULL, 10) < 1 || skip_loop(name)) {
        return 1;
    }
    return strtol(from, NULL, 10);
}

static long next_n(long n) {
    return n < DENSE_N ? n + 1 : n + STRIDE;
}

static void problem(const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

static void problem(const char *fmt, ...) {
    g_problems++;
    if (++g_shown <= show_max()) {
        char buf[2048];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(buf, sizeof buf, fmt, ap);
        va_end(ap);
        print_error("PROBLEM: %s\n", buf);
    } else if (g_shown == show_max() + 1) {
        print_error("PROBLEM: (more problems in this loop not shown)\n");
    }
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void no_sleep(uint64_t ms, void *ud) {
    (void)ms;
    (void)ud;
}

static void remove_db(const char *path) {
    char p[400];
    unlink(path);
    snprintf(p, sizeof p, "%s-wal", path);
    unlink(p);
    snprintf(p, sizeof p, "%s-shm", path);
    unlink(p);
}

/* Runs sst_sqlite_check on @p path (chaos off): no damage, file ok. */
static void check_file(const char *what, const char *path) {
    sst_sqlite_check_report rep;
    memset(&rep, 0, sizeof rep);
    sst_error err;
    sst_code rc = sst_sqlite_check(path, false, NULL, NULL, &rep, &err);
    if (rc != SST_OK) {
        problem("%s: sst_sqlite_check(%s): %s: %s", what, path, sst_code_name(rc), err.msg);
    } else if (rep.damaged != 0 || !rep.file_ok) {
        problem("%s: sst_sqlite_check(%s): %zu problems, file_ok %d", what, path, rep.damaged,
                (int)rep.file_ok);
    }
}

/* Canonical JSON of @p v in a malloc'd string ("<null>" for NULL). */
static char *canon(const sst_value *v) {
    if (v == NULL) {
        return strdup("<null>");
    }
    char *t = sst_json_write(v, SST_JSON_CANONICAL, NULL, NULL);
    assert_non_null(t);
    char *out = strdup(t);
    sst_free(t);
    return out;
}

static bool same_json(const sst_value *a, const sst_value *b) {
    char *x = canon(a), *y = canon(b);
    bool eq = strcmp(x, y) == 0;
    free(x);
    free(y);
    return eq;
}

/* ---- a string builder on libc (never the chaos allocator) ---- */

typedef struct sb {
    char *p;
    size_t len, cap;
} sb;

static void sb_add(sb *b, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static void sb_add(sb *b, const char *fmt, ...) {
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        char one[1]; /* the first call, with no buffer yet, only measures */
        char *dst = b->p != NULL ? b->p + b->len : one;
        size_t room = b->p != NULL ? b->cap - b->len : sizeof one;
        int k = vsnprintf(dst, room, fmt, ap);
        va_end(ap);
        assert_true(k >= 0);
        if ((size_t)k < room) {
            b->len += (size_t)k;
            return;
        }
        b->cap = 2 * (b->cap + (size_t)k + 64);
        b->p = realloc(b->p, b->cap);
        assert_non_null(b->p);
    }
}

/* ======================================================================
 * Case 1: the savers directly
 * ====================================================================== */

typedef struct store {
    const char *name;
    sst_checkpointer *cp;
    char path[300]; /* the SQLite file; "" for the memory saver */
} store;

static sst_checkpointer *store_open(store *s, sst_error *err) {
    return s->path[0] != '\0' ? sst_sqlite_saver_open(s->path, NULL, err)
                              : sst_memory_saver_new(err);
}

static void describe_payload(sb *b, const char *what, const sst_payload *p) {
    if (p->data == NULL && p->value == NULL) {
        sb_add(b, " %s=-", what);
        return;
    }
    sst_error err;
    sst_value *v = sst_payload_value(p, &err);
    if (v == NULL) {
        sb_add(b, " %s=<unreadable: %s>", what, err.msg);
        return;
    }
    char *t = canon(v);
    sst_value_unref(v);
    sb_add(b, " %s=%s", what, t);
    free(t);
}

static int blob_cmp(const void *a, const void *b) {
    return strcmp(((const sst_blob *)a)->id, ((const sst_blob *)b)->id);
}

static void describe_record(sb *b, const sst_checkpoint *r) {
    sb_add(b, "[%u %s/%s/%s parent=%s step=%lld source=%s run=%s kind=%d at=%lld status=%d",
           (unsigned)r->format, r->thread_id, r->ns, r->id,
           r->parent_id != NULL ? r->parent_id : "-", (long long)r->step,
           r->source != NULL ? r->source : "-", r->run_id != NULL ? r->run_id : "-", (int)r->kind,
           (long long)r->created_at, (int)r->status);
    describe_payload(b, "body", &r->body);
    describe_payload(b, "next", &r->next);
    describe_payload(b, "metadata", &r->metadata);
    describe_payload(b, "writes", &r->writes);
    sst_blob *blobs = NULL;
    if (r->n_blobs > 0) {
        blobs = malloc(r->n_blobs * sizeof *blobs);
        assert_non_null(blobs);
        memcpy(blobs, r->blobs, r->n_blobs * sizeof *blobs);
        qsort(blobs, r->n_blobs, sizeof *blobs, blob_cmp);
    }
    for (size_t i = 0; i < r->n_blobs; i++) {
        sb_add(b, " blob %s:", blobs[i].id);
        describe_payload(b, "content", &blobs[i].content);
    }
    free(blobs);
    sb_add(b, "]\n");
}

typedef struct id_list {
    char *ids[32];
    size_t n;
    sb *out; /* also describes each record listed, or NULL */
} id_list;

static bool collect_ids(const sst_checkpoint *rec, void *ud) {
    id_list *l = ud;
    if (l->out != NULL) {
        describe_record(l->out, rec);
    }
    if (l->n < sizeof l->ids / sizeof l->ids[0]) {
        l->ids[l->n++] = strdup(rec->id); /* libc: never fails under chaos */
    }
    return true;
}

static void ids_free(id_list *l) {
    for (size_t i = 0; i < l->n; i++) {
        free(l->ids[i]);
    }
    l->n = 0;
}

static const char *const k_threads[] = {"t0", "t1", "t2", "t3"};

/*
 * What the store shows (chaos off): each thread's records as listed, each
 * record as read back whole (body, writes, blobs), and the threads as
 * search_threads gives them. malloc'd.
 */
static char *fingerprint_cp(sst_checkpointer *cp) {
    sb b = {0};
    sb_add(&b, "%s", "");
    sst_error err;
    for (size_t t = 0; t < sizeof k_threads / sizeof k_threads[0]; t++) {
        id_list l = {.out = &b};
        sst_checkpoint_query q = {.thread_id = k_threads[t]};
        sst_code rc = sst_checkpointer_list(cp, &q, collect_ids, &l, &err);
        sb_add(&b, "list %s: %s\n", k_threads[t], sst_code_name(rc));
        for (size_t i = 0; i < l.n; i++) {
            sst_checkpoint *rec = sst_checkpointer_get(cp, k_threads[t], "", l.ids[i], &err);
            if (rec == NULL) {
                sb_add(&b, "get %s: %s\n", l.ids[i], err.msg);
                continue;
            }
            describe_record(&b, rec);
            sst_checkpoint_free(rec);
        }
        ids_free(&l);
    }
    sst_value *threads = sst_checkpointer_search_threads(cp, NULL, &err);
    char *t = canon(threads);
    sst_value_unref(threads);
    sb_add(&b, "threads %s\n", t);
    free(t);
    return b.p;
}

/* The fingerprint of the store; when closed, of the file opened once more. */
static char *fingerprint(store *s) {
    if (s->cp != NULL) {
        return fingerprint_cp(s->cp);
    }
    if (s->path[0] == '\0') {
        return strdup("(no store)\n");
    }
    sst_error err;
    sst_checkpointer *cp = sst_sqlite_saver_open(s->path, NULL, &err);
    if (cp == NULL) {
        char buf[600];
        snprintf(buf, sizeof buf, "(cannot open: %s)\n", err.msg);
        return strdup(buf);
    }
    char *fp = fingerprint_cp(cp);
    sst_checkpointer_free(cp);
    return fp;
}

typedef struct chain_ctx {
    char ids[32][16];
    char parents[32][16]; /* "" for none; only deltas' */
    size_t n;
} chain_ctx;

static bool collect_chain(const sst_checkpoint *rec, void *ud) {
    chain_ctx *c = ud;
    if (c->n < 32) {
        snprintf(c->ids[c->n], sizeof c->ids[0], "%s", rec->id);
        snprintf(c->parents[c->n], sizeof c->parents[0], "%s",
                 rec->kind == SST_CHECKPOINT_DELTA && rec->parent_id != NULL ? rec->parent_id : "");
        c->n++;
    }
    return true;
}

/*
 * Every delta of the store is read from a parent still there (sst_sqlite_check
 * does not report a broken chain unless asked to repair it).
 */
static void check_chains(store *s, const char *after) {
    sst_error err;
    for (size_t t = 0; t < sizeof k_threads / sizeof k_threads[0]; t++) {
        chain_ctx c = {.n = 0};
        sst_checkpoint_query q = {.thread_id = k_threads[t]};
        assert_sst_ok(sst_checkpointer_list(s->cp, &q, collect_chain, &c, &err), &err);
        for (size_t i = 0; i < c.n; i++) {
            bool found = c.parents[i][0] == '\0';
            for (size_t k = 0; k < c.n && !found; k++) {
                found = strcmp(c.ids[k], c.parents[i]) == 0;
            }
            if (!found) {
                problem("%s: after %s, delta %s of thread %s is read from %s, which is gone",
                        s->name, after, c.ids[i], k_threads[t], c.parents[i]);
            }
        }
    }
}

/* Prints where two fingerprints first differ. */
static void show_diff(const char *before, const char *after) {
    if (g_shown > show_max()) {
        return; /* as problem(): the first ones only */
    }
    size_t i = 0;
    while (before[i] != '\0' && before[i] == after[i]) {
        i++;
    }
    size_t from = i > 120 ? i - 120 : 0;
    print_error("  before: ...%.300s\n  after:  ...%.300s\n", before + from, after + from);
}

/* One call's inputs and outputs. Inputs are made with chaos off (prep). */
typedef struct op_io {
    sst_value *hold[8]; /* payload values */
    size_t n_hold;
    char *texts[8]; /* payload bytes (libc) */
    size_t n_texts;
    sst_checkpoint rec;
    sst_blob blobs[2];
    /* outputs */
    sst_checkpoint *got;
    sst_value *val;
    size_t removed;
    id_list listed;
} op_io;

static void io_free(op_io *io) {
    for (size_t i = 0; i < io->n_hold; i++) {
        sst_value_unref(io->hold[i]);
    }
    for (size_t i = 0; i < io->n_texts; i++) {
        free(io->texts[i]);
    }
    sst_checkpoint_free(io->got);
    sst_value_unref(io->val);
    ids_free(&io->listed);
    memset(io, 0, sizeof *io);
}

/* @p json as the store takes it: a value for SST_SAVER_VALUES stores, else its bytes. */
static sst_payload pl(store *s, op_io *io, const char *json) {
    sst_payload p = {0};
    if ((sst_checkpointer_flags(s->cp) & SST_SAVER_VALUES) != 0) {
        assert_true(io->n_hold < 8);
        p.value = io->hold[io->n_hold++] = tu_json(json);
    } else {
        assert_true(io->n_texts < 8);
        p.data = io->texts[io->n_texts++] = strdup(json);
        p.len = strlen(json);
    }
    return p;
}

/* A list of @p n strings "<prefix> i ..." as JSON (malloc'd): a blob big enough to matter. */
static char *big_list(const char *prefix, int n) {
    sb b = {0};
    sb_add(&b, "[");
    for (int i = 0; i < n; i++) {
        sb_add(&b, "%s\"%s %d, a string long enough to need its own block\"", i ? "," : "", prefix,
               i);
    }
    sb_add(&b, "]");
    return b.p;
}

/* A snapshot record of t1 (or @p thread) with body {"items": {"$blob": ...}}. */
static void make_record(store *s, op_io *io, const char *thread, const char *id, const char *parent,
                        int64_t step, int64_t at) {
    char body[200], meta[200];
    snprintf(body, sizeof body, "{\"n\":%lld,\"items\":{\"$blob\":\"%s\"}}", (long long)step, id);
    snprintf(meta, sizeof meta, "{\"source\":\"loop\",\"step\":%lld,\"writes\":{\"a\":[1,2]}}",
             (long long)step);
    io->rec = (sst_checkpoint){.format = SST_CHECKPOINT_FORMAT,
                               .thread_id = thread,
                               .ns = "",
                               .id = id,
                               .parent_id = parent,
                               .step = step,
                               .source = "loop",
                               .run_id = "run-1",
                               .kind = SST_CHECKPOINT_SNAPSHOT,
                               .created_at = at,
                               .status = SST_THREAD_IDLE,
                               .body = pl(s, io, body),
                               .next = pl(s, io, "[{\"vertex\":\"step\"}]"),
                               .metadata = pl(s, io, meta)};
}

/* Two blobs: ids @p a and @p b, with content (or a reference to a stored one when NULL). */
static void set_blobs(store *s, op_io *io, const char *a, const char *ca, const char *b,
                      const char *cb) {
    io->blobs[0] = (sst_blob){a, ca != NULL ? pl(s, io, ca) : (sst_payload){0}};
    io->blobs[1] = (sst_blob){b, cb != NULL ? pl(s, io, cb) : (sst_payload){0}};
    io->rec.blobs = io->blobs;
    io->rec.n_blobs = 2;
}

/* ---- the operations ---- */

typedef struct store_op {
    const char *name;
    void (*prep)(store *s, op_io *io);                    /* chaos off */
    sst_code (*run)(store *s, op_io *io, sst_error *err); /* under chaos */
    void (*check)(store *s, op_io *io);                   /* chaos off, after success */
    bool no_fingerprint; /* the store cannot be looked at between attempts */
} store_op;

static sst_code run_put(store *s, op_io *io, sst_error *err) {
    return sst_checkpointer_put(s->cp, &io->rec, false, err);
}

static void prep_put_blobs(store *s, op_io *io) {
    char *l4 = big_list("four", 80), *l5 = big_list("five", 70);
    make_record(s, io, "t1", "c0003", "c0002", 3, 1700000000300);
    set_blobs(s, io, "b-4", l4, "b-5", l5);
    free(l4);
    free(l5);
}

/* A delta on c0003: prune must keep c0003, which it is read from. */
static void prep_put_refs(store *s, op_io *io) {
    make_record(s, io, "t1", "c0004", "c0003", 4, 1700000000400);
    io->rec.kind = SST_CHECKPOINT_DELTA;
    set_blobs(s, io, "b-1", NULL, "b-4", NULL);
}

static void check_put(store *s, op_io *io) {
    sst_error err;
    sst_checkpoint *got = sst_checkpointer_get(s->cp, "t1", "", io->rec.id, &err);
    if (got == NULL || got->n_blobs != 2 || got->blobs[0].content.data == NULL) {
        if (got == NULL || got->blobs[0].content.value == NULL) {
            problem("%s: put %s: read back %s", s->name, io->rec.id,
                    got == NULL ? err.msg : "without its blobs");
        }
    }
    sst_checkpoint_free(got);
}

static void prep_put_writes(store *s, op_io *io) {
    io->rec.body = pl(s, io, "[{\"task\":\"step\",\"writes\":{\"n\":1,\"items\":[\"w\"]}}]");
}

static sst_code run_put_writes(store *s, op_io *io, sst_error *err) {
    return sst_checkpointer_put_writes(s->cp, "t1", "", "c0004", &io->rec.body,
                                       SST_THREAD_INTERRUPTED, true, err);
}

static sst_code run_get_latest(store *s, op_io *io, sst_error *err) {
    io->got = sst_checkpointer_get(s->cp, "t1", "", NULL, err);
    return io->got != NULL ? SST_OK : err->code;
}

static void check_get_latest(store *s, op_io *io) {
    if (strcmp(io->got->id, "c0004") != 0 || io->got->n_blobs != 2 ||
        (io->got->writes.data == NULL && io->got->writes.value == NULL) ||
        io->got->status != SST_THREAD_INTERRUPTED) {
        problem("%s: get latest: got %s with %zu blobs", s->name, io->got->id, io->got->n_blobs);
    }
}

static sst_code run_get_first(store *s, op_io *io, sst_error *err) {
    io->got = sst_checkpointer_get(s->cp, "t1", "", "c0001", err);
    return io->got != NULL ? SST_OK : err->code;
}

static void check_get_first(store *s, op_io *io) {
    sb b = {0};
    describe_record(&b, io->got);
    if (io->got->n_blobs != 2 || strstr(b.p, "blob b-1: content=[\"one 0,") == NULL ||
        strstr(b.p, "blob b-3: content={\"three\"") == NULL) {
        problem("%s: get c0001: %.300s", s->name, b.p);
    }
    free(b.p);
}

static sst_code run_list(store *s, op_io *io, sst_error *err) {
    sst_checkpoint_query q = {.thread_id = "t1"};
    return sst_checkpointer_list(s->cp, &q, collect_ids, &io->listed, err);
}

static void check_list(store *s, op_io *io) {
    static const char *const want[] = {"c0004", "c0003", "c0002", "c0001"};
    bool ok = io->listed.n == 4;
    for (size_t i = 0; ok && i < 4; i++) {
        ok = strcmp(io->listed.ids[i], want[i]) == 0;
    }
    if (!ok) {
        problem("%s: list t1: %zu records, not c0004..c0001", s->name, io->listed.n);
    }
}

static sst_code run_search(store *s, op_io *io, sst_error *err) {
    io->val = sst_checkpointer_search_threads(s->cp, NULL, err);
    return io->val != NULL ? SST_OK : err->code;
}

static void check_search(store *s, op_io *io) {
    const sst_value *t1 = sst_array_get(io->val, 1);
    if (sst_array_len(io->val) != 3 ||
        strcmp(sst_string_cstr(sst_object_get(t1, "thread_id")), "t1") != 0 ||
        strcmp(sst_string_cstr(sst_object_get(t1, "latest")), "c0004") != 0 ||
        !same_json(sst_object_get(t1, "metadata"), io->hold[0])) {
        char *t = canon(io->val);
        problem("%s: search_threads: %.400s", s->name, t);
        free(t);
    }
}

static void prep_search(store *s, op_io *io) {
    (void)s;
    io->hold[io->n_hold++] = tu_json("{\"owner\":\"me\"}");
}

static void prep_thread_put(store *s, op_io *io) {
    (void)s;
    io->hold[io->n_hold++] = tu_json("{\"owner\":\"you\",\"tags\":[\"a\",\"b\"],\"n\":12345678}");
}

static sst_code run_thread_put(store *s, op_io *io, sst_error *err) {
    return sst_checkpointer_thread_put(s->cp, "t1", io->hold[0], err);
}

static sst_code run_copy(store *s, op_io *io, sst_error *err) {
    (void)io;
    return sst_checkpointer_copy_thread(s->cp, "t1", "t2", err);
}

static void check_copy(store *s, op_io *io) {
    sst_checkpoint_query q = {.thread_id = "t2"};
    sst_error err;
    if (sst_checkpointer_list(s->cp, &q, collect_ids, &io->listed, &err) != SST_OK ||
        io->listed.n != 4) {
        problem("%s: copy_thread: t2 has %zu records", s->name, io->listed.n);
    }
}

/* t3 is a snapshot and a delta on it: keeping the latest keeps both. */
static sst_code run_prune_chain(store *s, op_io *io, sst_error *err) {
    return sst_checkpointer_prune(s->cp, "t3", 1, &io->removed, err);
}

static void check_prune_chain(store *s, op_io *io) {
    sst_checkpoint_query q = {.thread_id = "t3"};
    sst_error err;
    if (io->removed != 0 ||
        sst_checkpointer_list(s->cp, &q, collect_ids, &io->listed, &err) != SST_OK ||
        io->listed.n != 2) {
        problem("%s: prune t3 keep 1 removed %zu records, not 0 (the delta's snapshot must stay)",
                s->name, io->removed);
    }
}

/* Keeps c0004 (a delta) and c0003 (its snapshot); removes c0002 and c0001. */
static sst_code run_prune(store *s, op_io *io, sst_error *err) {
    return sst_checkpointer_prune(s->cp, "t1", 1, &io->removed, err);
}

static void check_prune(store *s, op_io *io) {
    sst_checkpoint_query q = {.thread_id = "t1"};
    sst_error err;
    if (io->removed != 2 ||
        sst_checkpointer_list(s->cp, &q, collect_ids, &io->listed, &err) != SST_OK ||
        io->listed.n != 2) {
        problem("%s: prune t1 keep 1 removed %zu records, not 2; %zu left", s->name, io->removed,
                io->listed.n);
    }
}

static sst_code run_delete(store *s, op_io *io, sst_error *err) {
    (void)io;
    return sst_checkpointer_delete_thread(s->cp, "t2", err);
}

static sst_code run_create(store *s, op_io *io, sst_error *err) {
    (void)io;
    s->cp = store_open(s, err);
    return s->cp != NULL ? SST_OK : err->code;
}

static void prep_create(store *s, op_io *io) {
    (void)io;
    if (s->path[0] != '\0') {
        remove_db(s->path);
    }
}

static const store_op k_op_create = {"create", prep_create, run_create, NULL, true};
static const store_op k_op_open = {"open", NULL, run_create, NULL, false};

static const store_op k_store_ops[] = {
    {"put (two blobs)", prep_put_blobs, run_put, check_put, false},
    {"put (blob references)", prep_put_refs, run_put, check_put, false},
    {"put_writes", prep_put_writes, run_put_writes, NULL, false},
    {"get latest", NULL, run_get_latest, check_get_latest, false},
    {"get by id", NULL, run_get_first, check_get_first, false},
    {"list", NULL, run_list, check_list, false},
    {"search_threads", prep_search, run_search, check_search, false},
    {"thread_put", prep_thread_put, run_thread_put, NULL, false},
    {"copy_thread", NULL, run_copy, check_copy, false},
    {"prune (a delta and its snapshot)", NULL, run_prune_chain, check_prune_chain, false},
    {"prune", NULL, run_prune, check_prune, false},
    {"delete_thread", NULL, run_delete, NULL, false},
};

/* Fails allocation n of @p op for n = 1, 2, ... until it succeeds. */
static void store_chaos(store *s, const store_op *op) {
    char name[128];
    snprintf(name, sizeof name, "%s %s", s->name, op->name);
    if (skip_loop(name)) {
        op_io io;
        memset(&io, 0, sizeof io);
        if (op->prep != NULL) {
            op->prep(s, &io);
        }
        sst_error err;
        assert_sst_ok(op->run(s, &io, &err), &err);
        io_free(&io);
        return;
    }
    char *before = op->no_fingerprint ? NULL : fingerprint(s);
    long points = -1;
    loop_start();
    for (long n = first_n(name); n <= MAX_N; n++) {
        op_io io;
        memset(&io, 0, sizeof io);
        if (op->prep != NULL) {
            op->prep(s, &io);
        }
        long base = tu_chaos_live();
        sst_error err;
        sst_error_clear(&err);
        tu_chaos_fail_at(n);
        sst_code rc = op->run(s, &io, &err);
        int fired = tu_chaos_fired();
        tu_chaos_off();
        if (!fired || rc == SST_OK) {
            if (rc != SST_OK) {
                problem("%s %s: failed without an allocation failure: %s: %s", s->name, op->name,
                        sst_code_name(rc), err.msg);
            } else if (fired) {
                problem("%s %s: allocation %ld failed but the call succeeded", s->name, op->name,
                        n);
            }
            if (rc == SST_OK && op->check != NULL) {
                op->check(s, &io);
            }
            io_free(&io);
            points = n - 1;
            break;
        }
        if (rc != SST_ENOMEM) {
            problem("%s %s: allocation %ld failed: %s (%s), not SST_ENOMEM", s->name, op->name, n,
                    sst_code_name(rc), err.msg);
        }
        if (io.got != NULL || io.val != NULL) {
            problem("%s %s: allocation %ld failed but a result came back", s->name, op->name, n);
        }
        if (tu_chaos_live() != base) {
            problem("%s %s: allocation %ld failed and %ld blocks leaked", s->name, op->name, n,
                    tu_chaos_live() - base);
        }
        io_free(&io);
        if (before != NULL) {
            char *after = fingerprint(s);
            if (strcmp(before, after) != 0) {
                problem("%s %s: allocation %ld failed and the store changed", s->name, op->name, n);
                show_diff(before, after);
                free(before);
                before = after;
            } else {
                free(after);
            }
        }
    }
    if (points < 0) {
        problem("%s %s: still failing at allocation %d", s->name, op->name, MAX_N);
    } else {
        print_message("%s %s: %ld allocation points\n", s->name, op->name, points);
    }
    if (s->cp != NULL) {
        check_chains(s, op->name);
    }
    free(before);
}

/*
 * What the ops expect to find: t0 and t1 sharing blob b-1, t1 with two records
 * and metadata, t3 with a snapshot and a delta on it.
 */
static void seed(store *s) {
    sst_error err;
    op_io io;
    memset(&io, 0, sizeof io);
    char *l1 = big_list("one", 70);
    make_record(s, &io, "t0", "c0001", NULL, 0, 1700000000000);
    set_blobs(s, &io, "b-1", l1, "b-2", "{\"two\":[1,2,3]}");
    assert_sst_ok(sst_checkpointer_put(s->cp, &io.rec, false, &err), &err);
    io_free(&io);
    make_record(s, &io, "t1", "c0001", NULL, 1, 1700000000100);
    set_blobs(s, &io, "b-1", NULL, "b-3", "{\"three\":\"3\"}");
    assert_sst_ok(sst_checkpointer_put(s->cp, &io.rec, false, &err), &err);
    io_free(&io);
    make_record(s, &io, "t1", "c0002", "c0001", 2, 1700000000200);
    io.rec.kind = SST_CHECKPOINT_DELTA;
    assert_sst_ok(sst_checkpointer_put(s->cp, &io.rec, false, &err), &err);
    sst_payload w = pl(s, &io, "[{\"task\":\"x\",\"value\":1}]");
    assert_sst_ok(
        sst_checkpointer_put_writes(s->cp, "t1", "", "c0002", &w, SST_THREAD_IDLE, false, &err),
        &err);
    io_free(&io);
    make_record(s, &io, "t3", "c0001", NULL, 1, 1700000000150);
    assert_sst_ok(sst_checkpointer_put(s->cp, &io.rec, false, &err), &err);
    io_free(&io);
    make_record(s, &io, "t3", "c0002", "c0001", 2, 1700000000160);
    io.rec.kind = SST_CHECKPOINT_DELTA;
    assert_sst_ok(sst_checkpointer_put(s->cp, &io.rec, false, &err), &err);
    io_free(&io);
    sst_value *meta = tu_json("{\"owner\":\"me\"}");
    assert_sst_ok(sst_checkpointer_thread_put(s->cp, "t1", meta, &err), &err);
    sst_value_unref(meta);
    free(l1);
}

static void saver_chaos(const char *name, bool sqlite) {
    double t0 = now_s();
    g_problems = 0;
    store s = {.name = name};
    if (sqlite) {
        snprintf(s.path, sizeof s.path, "%s/store.db", g_dir);
    }
    long base = tu_chaos_live();
    store_chaos(&s, &k_op_create);
    assert_non_null(s.cp);
    seed(&s);
    for (size_t i = 0; i < sizeof k_store_ops / sizeof k_store_ops[0]; i++) {
        store_chaos(&s, &k_store_ops[i]);
    }
    char *last = fingerprint(&s);
    sst_checkpointer_free(s.cp);
    s.cp = NULL;
    if (sqlite) {
        /* Reopening an existing file fails cleanly too, and finds what was stored. */
        store_chaos(&s, &k_op_open);
        char *again = fingerprint(&s);
        if (strcmp(last, again) != 0) {
            problem("%s: the reopened file differs from what was stored", name);
            show_diff(last, again);
        }
        free(again);
        sst_checkpointer_free(s.cp);
        check_file(name, s.path);
    }
    free(last);
    if (tu_chaos_live() != base) {
        problem("%s: %ld blocks still live after the store was freed", name,
                tu_chaos_live() - base);
    }
    print_message("%s saver: %.1f s\n", name, now_s() - t0);
    assert_int_equal(g_problems, 0);
}

static void test_memory_saver(void **state) {
    (void)state;
    saver_chaos("memory", false);
}

static void test_sqlite_saver(void **state) {
    (void)state;
    saver_chaos("sqlite", true);
}

/* ======================================================================
 * Case 2: durable graph runs (src/graph/persist.c)
 * ====================================================================== */

#define LAST_N   10 /* the run stops when n reaches it */
#define PER_STEP 8  /* items appended per superstep: 80 in all, past a 64-element chunk */

static sst_compiled_graph *g_cg;
static sst_graph *g_graph;
static sst_value *g_expect[LAST_N + 2]; /* the state after k supersteps */

static void item_text(char *buf, size_t n, int64_t i) {
    snprintf(buf, n, "item %lld, with enough text to be a block of its own", (long long)i);
}

/* Appends items 8n .. 8n+7 and adds 1 to n. */
static sst_code step_node(sst_node_ctx *ctx, void *ud) {
    (void)ud;
    sst_error err;
    int64_t n = sst_int_value(sst_object_get(sst_node_state(ctx), "n"));
    sst_value *list = sst_array_empty();
    for (int i = 0; i < PER_STEP && list != NULL; i++) {
        char text[96];
        item_text(text, sizeof text, PER_STEP * n + i);
        sst_value *s = sst_string_new(text, &err);
        list = s != NULL ? sst_array_push_take(list, s, &err) : (sst_value_unref(list), NULL);
    }
    if (list == NULL) {
        return err.code;
    }
    sst_code rc = sst_node_update(ctx, "items", list, &err);
    if (rc != SST_OK) {
        return rc;
    }
    sst_value *one = sst_int_new(1, &err);
    return one != NULL ? sst_node_update(ctx, "n", one, &err) : err.code;
}

static sst_value *route(const sst_value *state, void *ud, sst_error *err) {
    (void)ud;
    return sst_string_new(sst_int_value(sst_object_get(state, "n")) >= LAST_N ? SST_END : "step",
                          err);
}

static void build_graph(void) {
    sst_error err;
    g_graph = sst_graph_new(&err);
    assert_non_null(g_graph);
    assert_sst_ok(sst_graph_add_field(g_graph, "n", sst_reducer_sum(), sst_int_new(0, NULL), &err),
                  &err);
    assert_sst_ok(
        sst_graph_add_field(g_graph, "items", sst_reducer_append(), sst_array_empty(), &err), &err);
    assert_sst_ok(sst_graph_add_node(g_graph, "step", step_node, NULL, NULL, &err), &err);
    sst_value *paths = tu_json("[\"step\",\"__end__\"]");
    /* From START too: a new run on a finished thread does nothing. */
    assert_sst_ok(sst_graph_add_conditional_edges(g_graph, SST_START, route, NULL, paths, &err),
                  &err);
    assert_sst_ok(sst_graph_add_conditional_edges(g_graph, "step", route, NULL, paths, &err), &err);
    sst_value_unref(paths);
    g_cg = sst_graph_compile(g_graph, NULL, &err);
    assert_non_null(g_cg);
    for (int k = 0; k <= LAST_N + 1; k++) {
        sst_value *items = sst_array_empty();
        for (int64_t i = 0; i < PER_STEP * k; i++) {
            char text[96];
            item_text(text, sizeof text, i);
            items = sst_array_push_take(items, sst_string_new(text, NULL), NULL);
        }
        sst_value *o = sst_object_set_take(sst_object_empty(), "n", sst_int_new(k, NULL), NULL);
        g_expect[k] = sst_object_set_take(o, "items", items, NULL);
        assert_non_null(g_expect[k]);
    }
}

static void free_graph(void) {
    for (int k = 0; k <= LAST_N + 1; k++) {
        sst_value_unref(g_expect[k]);
        g_expect[k] = NULL;
    }
    sst_compiled_graph_free(g_cg);
    sst_graph_free(g_graph);
    g_cg = NULL;
    g_graph = NULL;
}

/* The k whose expected state @p v is, or -1. */
static int which_state(const sst_value *v) {
    for (int k = 0; k <= LAST_N + 1; k++) {
        if (sst_value_equal(v, g_expect[k])) {
            return k;
        }
    }
    return -1;
}

static void invoke_opts(sst_invoke_opts *o) {
    sst_invoke_opts_init(o);
    o->snapshot_every = 4;
    o->sleep = no_sleep;
}

static sst_checkpointer *open_saver(bool sqlite, const char *path) {
    sst_error err;
    sst_checkpointer *cp =
        sqlite ? sst_sqlite_saver_open(path, NULL, &err) : sst_memory_saver_new(&err);
    if (cp == NULL) {
        fail_msg("open %s: %s", sqlite ? path : "memory", err.msg);
    }
    return cp;
}

/*
 * After a failed run (chaos off): a fresh thread reads the state of one of the
 * reference's checkpoints (or none at all), and a new run ends in the
 * reference's final state. @p completed: the failed run said it completed.
 */
static void check_recovers(const char *what, long n, sst_checkpointer *cp, const sst_value *input,
                           bool completed) {
    sst_error err;
    sst_graph_thread *th = sst_graph_thread_open(g_cg, cp, "t", &err);
    assert_non_null(th);
    sst_value *st = sst_graph_get_state(th, NULL, &err);
    if (st == NULL) {
        if (err.code != SST_ENOTFOUND || completed) {
            problem("%s: allocation %ld failed, then get_state: %s: %s", what, n,
                    sst_code_name(err.code), err.msg);
        }
    } else {
        int k = which_state(sst_object_get(st, "values"));
        if (k < 0 || k > LAST_N || (completed && k != LAST_N)) {
            char *t = canon(sst_object_get(st, "values"));
            problem("%s: allocation %ld failed, then the thread reads %.300s", what, n, t);
            free(t);
        }
    }
    sst_value_unref(st);
    sst_invoke_opts o;
    invoke_opts(&o);
    sst_graph_result *r = sst_graph_invoke(g_cg, th, input, &o, &err);
    if (r == NULL || sst_graph_result_status(r) != SST_RUN_COMPLETED ||
        !sst_value_equal(sst_graph_result_state(r), g_expect[LAST_N])) {
        problem("%s: allocation %ld failed, then a new run %s: %s", what, n,
                r == NULL ? "did not start" : "did not complete to the reference state",
                r == NULL ? err.msg : sst_graph_result_error(r)->msg);
    }
    sst_graph_result_free(r);
    st = sst_graph_get_state(th, NULL, &err);
    if (st == NULL || !sst_value_equal(sst_object_get(st, "values"), g_expect[LAST_N])) {
        problem("%s: allocation %ld failed; after the new run get_state %s", what, n,
                st == NULL ? err.msg : "differs from the reference");
    }
    sst_value_unref(st);
    sst_graph_thread_free(th);
}

/* The reference run on @p cp (chaos off): completes, every checkpoint one of g_expect. */
static void reference_run(sst_checkpointer *cp, const sst_value *input) {
    sst_error err;
    sst_graph_thread *th = sst_graph_thread_open(g_cg, cp, "ref", &err);
    assert_non_null(th);
    sst_invoke_opts o;
    invoke_opts(&o);
    sst_graph_result *r = sst_graph_invoke(g_cg, th, input, &o, &err);
    assert_non_null(r);
    assert_int_equal(sst_graph_result_status(r), SST_RUN_COMPLETED);
    assert_true(sst_value_equal(sst_graph_result_state(r), g_expect[LAST_N]));
    sst_graph_result_free(r);
    sst_value *h = sst_graph_get_state_history(th, NULL, 0, &err);
    assert_non_null(h);
    assert_int_equal(sst_array_len(h), LAST_N + 2); /* input, then 0..10 */
    for (size_t i = 0; i < sst_array_len(h); i++) {
        assert_true(which_state(sst_object_get(sst_array_get(h, i), "values")) >= 0);
    }
    sst_value_unref(h);
    sst_graph_thread_free(th);
}

/*
 * A durable invoke on a fresh store, failing allocation n, for n = 1, 2, ...
 * (every @p every-th n: durability exit repeats the paths of the default).
 */
static void invoke_chaos(const char *what, bool sqlite, sst_durability durability, long every) {
    if (skip_loop(what)) {
        return;
    }
    double t0 = now_s();
    sst_value *input = tu_json("{}");
    long points = -1, absorbed = 0;
    loop_start();
    for (long n = first_n(what); n <= MAX_N; n = every > 1 ? n + every : next_n(n)) {
        char path[300];
        snprintf(path, sizeof path, "%s/invoke-%ld.db", g_dir, n);
        long base = tu_chaos_live();
        sst_checkpointer *cp = open_saver(sqlite, path);
        sst_error err;
        sst_graph_thread *th = sst_graph_thread_open(g_cg, cp, "t", &err);
        assert_non_null(th);
        sst_invoke_opts o;
        invoke_opts(&o);
        o.durability = durability;
        sst_error_clear(&err);
        tu_chaos_fail_at(n);
        sst_graph_result *r = sst_graph_invoke(g_cg, th, input, &o, &err);
        int fired = tu_chaos_fired();
        tu_chaos_off();
        bool completed = false;
        if (r == NULL) {
            if (!fired || err.code != SST_ENOMEM) {
                problem("%s: allocation %ld%s: invoke returned NULL with %s: %s", what, n,
                        fired ? " failed" : " (none failed)", sst_code_name(err.code), err.msg);
            }
        } else if (sst_graph_result_status(r) == SST_RUN_COMPLETED) {
            completed = true;
            if (!sst_value_equal(sst_graph_result_state(r), g_expect[LAST_N])) {
                problem("%s: allocation %ld: the run completed with another state", what, n);
            }
            absorbed += fired;
        } else {
            const sst_error *e = sst_graph_result_error(r);
            if (!fired || sst_graph_result_status(r) != SST_RUN_FAILED || e->code != SST_ENOMEM) {
                problem("%s: allocation %ld%s: run status %d, %s (node %s): %s", what, n,
                        fired ? " failed" : " (none failed)", (int)sst_graph_result_status(r),
                        sst_code_name(e->code),
                        sst_graph_result_error_node(r) ? sst_graph_result_error_node(r) : "-",
                        e->msg);
            }
        }
        sst_graph_result_free(r);
        sst_graph_thread_free(th);
        if (sst_checkpointer_lock(cp, "t", false, &err) != SST_OK) {
            problem("%s: allocation %ld%s: the thread's lock was not released: %s", what, n,
                    fired ? " failed" : " (none failed)", err.msg);
        } else {
            sst_checkpointer_unlock(cp, "t");
        }
        check_recovers(what, n, cp, input, completed);
        sst_checkpointer_free(cp);
        if (tu_chaos_live() != base) {
            problem("%s: allocation %ld failed and %ld blocks leaked", what, n,
                    tu_chaos_live() - base);
        }
        if (sqlite) {
            check_file(what, path);
            remove_db(path);
        }
        if (!fired) {
            points = n - 1;
            break;
        }
    }
    sst_value_unref(input);
    if (points < 0) {
        problem("%s: the invoke still failed at allocation %d", what, MAX_N);
    }
    if (every > 1) {
        print_message("%s: about %ld allocation points (every %ld-th tried); %ld failures absorbed "
                      "(the run completed); %.1f s\n",
                      what, points, every, absorbed, now_s() - t0);
    } else {
        print_message("%s: %ld allocation points (every n to %d, then every %d-th); %ld failures "
                      "absorbed (the run completed); %.1f s\n",
                      what, points, DENSE_N, STRIDE, absorbed, now_s() - t0);
    }
}

/* ---- state reads and update_state on the reference thread ---- */

typedef sst_value *(*thread_fn)(sst_graph_thread *th, const char *arg, sst_error *err);

static sst_value *op_get_state(sst_graph_thread *th, const char *arg, sst_error *err) {
    return sst_graph_get_state(th, arg, err);
}

static sst_value *op_history(sst_graph_thread *th, const char *arg, sst_error *err) {
    (void)arg;
    return sst_graph_get_state_history(th, NULL, 0, err);
}

static sst_value *g_filter; /* {"source": "loop"} */

static sst_value *op_history_filtered(sst_graph_thread *th, const char *arg, sst_error *err) {
    (void)arg;
    return sst_graph_get_state_history(th, g_filter, 5, err);
}

static sst_value *op_page_updates(sst_graph_thread *th, const char *arg, sst_error *err) {
    (void)arg;
    return sst_graph_history_page(th, NULL, NULL, 0, false, err);
}

static sst_value *op_page_values(sst_graph_thread *th, const char *arg, sst_error *err) {
    return sst_graph_history_page(th, NULL, arg, 4, true, err);
}

static const sst_value *g_update_values;

static sst_value *op_update(sst_graph_thread *th, const char *arg, sst_error *err) {
    (void)arg;
    sst_code rc = sst_graph_update_state(th, NULL, g_update_values, "step", err);
    return rc == SST_OK ? sst_null() : NULL;
}

/* The thread's checkpoint ids, newest first, as one malloc'd line. */
static char *thread_ids(sst_checkpointer *cp, const char *thread) {
    id_list l = {0};
    sst_checkpoint_query q = {.thread_id = thread};
    sst_error err;
    assert_sst_ok(sst_checkpointer_list(cp, &q, collect_ids, &l, &err), &err);
    sb b = {0};
    sb_add(&b, "%zu:", l.n);
    for (size_t i = 0; i < l.n; i++) {
        sb_add(&b, " %s", l.ids[i]);
    }
    ids_free(&l);
    return b.p;
}

/*
 * A checkpointer that forwards every call to another one. The graph layer
 * keeps a bounded state cache on the sst_checkpointer handle, so the blocks
 * live after a call depend on what the cache held before it; a fresh wrapper
 * per attempt starts with an empty cache, and freeing it frees the cache: the
 * leak check then compares the live blocks before the wrapper was made and
 * after it was freed.
 */
static sst_checkpointer *inner(void *self) {
    return self;
}

static void fwd_destroy(void *self) {
    sst_checkpointer_free(inner(self));
}

static sst_code fwd_put(void *self, const sst_checkpoint *rec, bool sync, sst_error *err) {
    return sst_checkpointer_put(inner(self), rec, sync, err);
}

static sst_code fwd_put_writes(void *self, const char *thread_id, const char *ns, const char *id,
                               const sst_payload *writes, sst_thread_status status, bool sync,
                               sst_error *err) {
    return sst_checkpointer_put_writes(inner(self), thread_id, ns, id, writes, status, sync, err);
}

static sst_code fwd_get(void *self, const char *thread_id, const char *ns, const char *id,
                        sst_checkpoint_fn each, void *user_data, sst_error *err) {
    sst_checkpoint *rec = sst_checkpointer_get(inner(self), thread_id, ns, id, err);
    if (rec == NULL) {
        return err->code;
    }
    each(rec, user_data);
    sst_checkpoint_free(rec);
    return SST_OK;
}

static sst_code fwd_list(void *self, const sst_checkpoint_query *q, sst_checkpoint_fn each,
                         void *user_data, sst_error *err) {
    return sst_checkpointer_list(inner(self), q, each, user_data, err);
}

static sst_code fwd_lock(void *self, const char *thread_id, bool wait, sst_error *err) {
    return sst_checkpointer_lock(inner(self), thread_id, wait, err);
}

static void fwd_unlock(void *self, const char *thread_id) {
    sst_checkpointer_unlock(inner(self), thread_id);
}

static sst_code fwd_threads(void *self, const sst_thread_query *q, sst_thread_fn each,
                            void *user_data, sst_error *err) {
    return sst_checkpointer_threads(inner(self), q, each, user_data, err);
}

static sst_code fwd_thread_get(void *self, const char *thread_id, sst_thread_fn each,
                               void *user_data, sst_error *err) {
    return sst_checkpointer_thread_get(inner(self), thread_id, each, user_data, err);
}

static sst_code fwd_thread_put(void *self, const char *thread_id, const sst_payload *metadata,
                               sst_error *err) {
    sst_value *m = sst_payload_value(metadata, err);
    sst_code rc =
        m != NULL ? sst_checkpointer_thread_put(inner(self), thread_id, m, err) : err->code;
    sst_value_unref(m);
    return rc;
}

static sst_code fwd_copy_thread(void *self, const char *from, const char *to, sst_error *err) {
    return sst_checkpointer_copy_thread(inner(self), from, to, err);
}

static sst_code fwd_delete_thread(void *self, const char *thread_id, sst_error *err) {
    return sst_checkpointer_delete_thread(inner(self), thread_id, err);
}

static sst_code fwd_prune(void *self, const char *thread_id, size_t keep, size_t *removed,
                          sst_error *err) {
    return sst_checkpointer_prune(inner(self), thread_id, keep, removed, err);
}

/* A new forwarding checkpointer on @p cp (chaos off). */
static sst_checkpointer *fwd_new(sst_checkpointer *cp) {
    sst_checkpointer_ops ops = {.size = sizeof ops,
                                .flags = sst_checkpointer_flags(cp),
                                .destroy = fwd_destroy,
                                .put = fwd_put,
                                .put_writes = fwd_put_writes,
                                .get = fwd_get,
                                .list = fwd_list,
                                .lock = fwd_lock,
                                .unlock = fwd_unlock,
                                .threads = fwd_threads,
                                .thread_get = fwd_thread_get,
                                .thread_put = fwd_thread_put,
                                .copy_thread = fwd_copy_thread,
                                .delete_thread = fwd_delete_thread,
                                .prune = fwd_prune};
    sst_error err;
    sst_checkpointer *w = sst_checkpointer_new(&ops, sst_checkpointer_ref(cp), &err);
    assert_non_null(w);
    return w;
}

/* Whether thread @p name of @p cp reads the state after the update (n = LAST_N + 1). */
static bool reads_updated(sst_checkpointer *cp, const char *name) {
    sst_error err;
    sst_checkpointer *w = fwd_new(cp); /* a cache of its own */
    sst_graph_thread *th = sst_graph_thread_open(g_cg, w, name, &err);
    assert_non_null(th);
    sst_value *st = sst_graph_get_state(th, NULL, &err);
    bool ok = st != NULL && which_state(sst_object_get(st, "values")) == LAST_N + 1;
    sst_value_unref(st);
    sst_graph_thread_free(th);
    sst_checkpointer_free(w);
    return ok;
}

/*
 * Opens a thread and runs @p fn on it, failing allocation n, for n = 1, 2, ...
 * A read (@p mutates false) runs on the reference thread and must give what a
 * call without failures gave. A write runs on "upd-N", a fresh copy of the
 * reference thread for each n (copy_thread), which must then read the updated
 * state. A failed call leaves the thread's checkpoints as they were, and no
 * call leaves the thread locked. A call may succeed although an allocation
 * failed (the state cache is best effort): its result must still be right,
 * and the loop goes on. Each attempt goes through a fresh forwarding
 * checkpointer (fwd_new), so that blocks the cache keeps are freed with it.
 */
static void thread_chaos(const char *what, sst_checkpointer *cp, thread_fn fn, const char *arg,
                         bool mutates) {
    if (skip_loop(what)) {
        return;
    }
    double t0 = now_s();
    char name[64] = "ref";
    sst_error err;
    char *want = NULL;
    if (!mutates) {
        sst_checkpointer *w = fwd_new(cp);
        sst_graph_thread *th = sst_graph_thread_open(g_cg, w, name, &err);
        sst_value *v = fn(th, arg, &err);
        if (v == NULL) {
            fail_msg("%s: without failures: %s", what, err.msg);
        }
        want = canon(v);
        sst_value_unref(v);
        sst_graph_thread_free(th);
        sst_checkpointer_free(w);
    }
    long points = -1, absorbed = 0;
    loop_start();
    for (long n = first_n(what); n <= MAX_N; n = next_n(n)) {
        if (mutates) {
            snprintf(name, sizeof name, "upd-%ld", n); /* a thread left locked stays apart */
            assert_sst_ok(sst_checkpointer_copy_thread(cp, "ref", name, &err), &err);
        }
        char *ids = thread_ids(cp, name);
        long base = tu_chaos_live();
        sst_checkpointer *w = fwd_new(cp);
        sst_error_clear(&err);
        tu_chaos_fail_at(n);
        sst_graph_thread *th = sst_graph_thread_open(g_cg, w, name, &err);
        sst_value *v = th != NULL ? fn(th, arg, &err) : NULL;
        int fired = tu_chaos_fired();
        tu_chaos_off();
        sst_graph_thread_free(th);
        sst_checkpointer_free(w);
        if (v != NULL) {
            absorbed += fired;
            if (want != NULL) {
                char *got = canon(v);
                if (strcmp(got, want) != 0) {
                    problem("%s: allocation %ld%s: the result differs from the one without "
                            "failures",
                            what, n, fired ? " failed" : " (none failed)");
                    show_diff(want, got);
                }
                free(got);
            }
            sst_value_unref(v);
            if (!mutates && tu_chaos_live() != base) {
                problem("%s: allocation %ld%s: the read succeeded and %ld blocks leaked", what, n,
                        fired ? " failed" : " (none failed)", tu_chaos_live() - base);
            }
            if (mutates && !reads_updated(cp, name)) {
                problem("%s: allocation %ld%s: the update succeeded but the thread does not read "
                        "it",
                        what, n, fired ? " failed" : " (none failed)");
            }
        } else if (!fired) {
            problem("%s: failed without an allocation failure: %s: %s", what,
                    sst_code_name(err.code), err.msg);
        } else {
            if (err.code != SST_ENOMEM) {
                problem("%s: allocation %ld failed: %s (%s), not SST_ENOMEM", what, n,
                        sst_code_name(err.code), err.msg);
            }
            if (tu_chaos_live() != base) {
                problem("%s: allocation %ld failed and %ld blocks leaked", what, n,
                        tu_chaos_live() - base);
            }
            char *now = thread_ids(cp, name);
            if (strcmp(now, ids) != 0) {
                problem("%s: allocation %ld failed and the thread's checkpoints changed: "
                        "%.200s -> %.200s",
                        what, n, ids, now);
            }
            free(now);
        }
        free(ids);
        if (sst_checkpointer_lock(cp, name, false, &err) != SST_OK) {
            problem("%s: allocation %ld%s: the thread's lock was not released: %s", what, n,
                    fired ? " failed" : " (none failed)", err.msg);
        } else {
            sst_checkpointer_unlock(cp, name);
        }
        if (mutates) {
            assert_sst_ok(sst_checkpointer_delete_thread(cp, name, &err), &err);
        }
        if (!fired) {
            points = n - 1;
            break;
        }
    }
    if (points < 0) {
        problem("%s: still failing at allocation %d", what, MAX_N);
    } else {
        print_message("%s: %ld allocation points, %ld failures absorbed; %.1f s\n", what, points,
                      absorbed, now_s() - t0);
    }
    free(want);
}

static void graph_chaos(const char *what, bool sqlite) {
    g_problems = 0;
    long base = tu_chaos_live();
    build_graph();
    invoke_chaos(what, sqlite, SST_DURABILITY_ASYNC, 1);
    char name[128];
    snprintf(name, sizeof name, "%s (durability exit)", what);
    invoke_chaos(name, sqlite, SST_DURABILITY_EXIT, sqlite ? 5 : 1);
    /* Reads and update_state on a finished thread. */
    char path[300];
    snprintf(path, sizeof path, "%s/ref.db", g_dir);
    sst_checkpointer *cp = open_saver(sqlite, path);
    sst_value *input = tu_json("{}");
    reference_run(cp, input);
    sst_value_unref(input);
    sst_error err;
    sst_graph_thread *th = sst_graph_thread_open(g_cg, cp, "ref", &err);
    sst_value *h = sst_graph_get_state_history(th, NULL, 0, &err);
    assert_non_null(h);
    /* An older checkpoint read by replaying two deltas or more onto a snapshot. */
    char mid[64] = "", page_from[64];
    for (size_t i = 1; i < sst_array_len(h) && mid[0] == '\0'; i++) {
        const char *id = sst_string_cstr(sst_object_get(sst_array_get(h, i), "checkpoint_id"));
        sst_checkpoint *rec = sst_checkpointer_get(cp, "ref", "", id, &err);
        sst_checkpoint *parent =
            rec != NULL && rec->kind == SST_CHECKPOINT_DELTA && rec->parent_id != NULL
                ? sst_checkpointer_get(cp, "ref", "", rec->parent_id, &err)
                : NULL;
        if (parent != NULL && parent->kind == SST_CHECKPOINT_DELTA) {
            snprintf(mid, sizeof mid, "%s", id);
        }
        sst_checkpoint_free(parent);
        sst_checkpoint_free(rec);
    }
    assert_true(mid[0] != '\0');
    snprintf(page_from, sizeof page_from, "%s",
             sst_string_cstr(sst_object_get(sst_array_get(h, 1), "checkpoint_id")));
    sst_value_unref(h);
    sst_graph_thread_free(th);
    snprintf(name, sizeof name, "%s get_state (latest)", what);
    thread_chaos(name, cp, op_get_state, NULL, false);
    snprintf(name, sizeof name, "%s get_state (older, deltas)", what);
    thread_chaos(name, cp, op_get_state, mid, false);
    snprintf(name, sizeof name, "%s get_state_history", what);
    thread_chaos(name, cp, op_history, NULL, false);
    snprintf(name, sizeof name, "%s get_state_history (filter, limit)", what);
    g_filter = tu_json("{\"source\":\"loop\"}");
    thread_chaos(name, cp, op_history_filtered, NULL, false);
    sst_value_unref(g_filter);
    g_filter = NULL;
    snprintf(name, sizeof name, "%s history_page (updates)", what);
    thread_chaos(name, cp, op_page_updates, NULL, false);
    snprintf(name, sizeof name, "%s history_page (values)", what);
    thread_chaos(name, cp, op_page_values, page_from, false);
    sst_value *update = tu_json("{}");
    sst_value *items = sst_array_empty();
    for (int i = 0; i < PER_STEP; i++) {
        char text[96];
        item_text(text, sizeof text, PER_STEP * LAST_N + i);
        items = sst_array_push_take(items, sst_string_new(text, NULL), NULL);
    }
    update = sst_object_set_take(update, "items", items, NULL);
    update = sst_object_set_take(update, "n", sst_int_new(1, NULL), NULL);
    g_update_values = update;
    snprintf(name, sizeof name, "%s update_state", what);
    thread_chaos(name, cp, op_update, NULL, true);
    g_update_values = NULL;
    sst_value_unref(update);
    sst_checkpointer_free(cp);
    if (sqlite) {
        check_file(what, path);
        remove_db(path);
    }
    free_graph();
    if (tu_chaos_live() != base) {
        problem("%s: %ld blocks still live at the end", what, tu_chaos_live() - base);
    }
    assert_int_equal(g_problems, 0);
}

static void test_graph_memory(void **state) {
    (void)state;
    graph_chaos("graph/memory", false);
}

static void test_graph_sqlite(void **state) {
    (void)state;
    graph_chaos("graph/sqlite", true);
}

/* ======================================================================
 * Case 3: the Lua layer
 * ====================================================================== */

#define LUA_STEPS 5

/*
 * A sum field and an append field, LUA_STEPS supersteps. START routes too, so
 * that a new run on a finished thread does nothing. One attempt per node: a
 * node that fails of an allocation shows its code instead of being retried.
 */
static const char k_script[] = "local sst = superstep\n"
                               "local g = sst.StateGraph{\n"
                               "  total = { reducer = sst.reducers.sum, default = 0 },\n"
                               "  log = { reducer = sst.reducers.append, default = sst.array{} },\n"
                               "}\n"
                               "local function route(state)\n"
                               "  if state.total >= %d then return sst.END end\n"
                               "  return 'work'\n"
                               "end\n"
                               "g:add_node('work', function(state)\n"
                               "  return { total = 1, log = { 'step ' .. state.total } }\n"
                               "end, { retry = { max_attempts = 1 } })\n"
                               "g:add_conditional_edges(sst.START, route, { 'work', sst.END })\n"
                               "g:add_conditional_edges('work', route, { 'work', sst.END })\n"
                               "return g:compile{ checkpointer = sst.SqliteSaver('%s') }\n";

/* The script's graph in C: the same fields, node and routers. */
static sst_code twin_work(sst_node_ctx *ctx, void *ud) {
    (void)ud;
    sst_error err;
    char text[64];
    snprintf(text, sizeof text, "step %lld",
             (long long)sst_int_value(sst_object_get(sst_node_state(ctx), "total")));
    sst_value *s = sst_string_new(text, &err);
    sst_value *log = s != NULL ? sst_array_push_take(sst_array_empty(), s, &err) : NULL;
    sst_code rc = log != NULL ? sst_node_update(ctx, "log", log, &err) : err.code;
    sst_value *one = rc == SST_OK ? sst_int_new(1, &err) : NULL;
    return one != NULL ? sst_node_update(ctx, "total", one, &err) : err.code;
}

static sst_value *twin_route(const sst_value *state, void *ud, sst_error *err) {
    (void)ud;
    return sst_string_new(
        sst_int_value(sst_object_get(state, "total")) >= LUA_STEPS ? SST_END : "work", err);
}

static sst_graph *twin_graph(void) {
    sst_error err;
    sst_graph *g = sst_graph_new(&err);
    assert_non_null(g);
    assert_sst_ok(sst_graph_add_field(g, "total", sst_reducer_sum(), sst_int_new(0, NULL), &err),
                  &err);
    assert_sst_ok(sst_graph_add_field(g, "log", sst_reducer_append(), sst_array_empty(), &err),
                  &err);
    assert_sst_ok(sst_graph_add_node(g, "work", twin_work, NULL, NULL, &err), &err);
    sst_value *paths = tu_json("[\"work\",\"__end__\"]");
    assert_sst_ok(sst_graph_add_conditional_edges(g, SST_START, twin_route, NULL, paths, &err),
                  &err);
    assert_sst_ok(sst_graph_add_conditional_edges(g, "work", twin_route, NULL, paths, &err), &err);
    sst_value_unref(paths);
    return g;
}

/* The state after k Lua supersteps, as JSON text (malloc'd). */
static sst_value *lua_expect(int k) {
    sb b = {0};
    sb_add(&b, "{\"total\":%d,\"log\":[", k);
    for (int i = 0; i < k; i++) {
        sb_add(&b, "%s\"step %d\"", i ? "," : "", i);
    }
    sb_add(&b, "]}");
    sst_value *v = tu_json(b.p);
    free(b.p);
    return v;
}

static int lua_which(const sst_value *v, sst_value *const *expect) {
    for (int k = 0; k <= LUA_STEPS; k++) {
        if (sst_value_equal(v, expect[k])) {
            return k;
        }
    }
    return -1;
}

/* Loads the script and opens thread "lt" (chaos off). */
static sst_lua_script *lua_open(const char *script, sst_graph_thread **th) {
    sst_error err;
    sst_lua_script *s = sst_lua_script_load(script, &err);
    if (s == NULL) {
        fail_msg("load %s: %s", script, err.msg);
    }
    *th =
        sst_graph_thread_open(sst_lua_script_graph(s), sst_lua_script_checkpointer(s), "lt", &err);
    assert_non_null(*th);
    return s;
}

static void test_lua(void **state) {
    (void)state;
    double t0 = now_s();
    g_problems = 0;
    char db[300], script[300];
    snprintf(db, sizeof db, "%s/lua.db", g_dir);
    snprintf(script, sizeof script, "%s/chaos.lua", g_dir);
    char text[2048];
    snprintf(text, sizeof text, k_script, LUA_STEPS, db);
    FILE *f = fopen(script, "w");
    assert_non_null(f);
    assert_true(fputs(text, f) >= 0);
    assert_int_equal(fclose(f), 0);
    long base0 = tu_chaos_live();
    sst_value *expect[LUA_STEPS + 1];
    for (int k = 0; k <= LUA_STEPS; k++) {
        expect[k] = lua_expect(k);
    }
    sst_value *input = tu_json("{}");
    sst_graph *twin_g = twin_graph();
    sst_compiled_graph *twin = sst_graph_compile(twin_g, NULL, NULL);
    assert_non_null(twin);
    /* The reference run. */
    {
        remove_db(db);
        sst_graph_thread *th;
        sst_lua_script *s = lua_open(script, &th);
        sst_invoke_opts o;
        sst_invoke_opts_init(&o);
        sst_lua_script_invoke_opts(s, &o);
        sst_error err;
        sst_graph_result *r = sst_graph_invoke(sst_lua_script_graph(s), th, input, &o, &err);
        assert_non_null(r);
        assert_int_equal(sst_graph_result_status(r), SST_RUN_COMPLETED);
        assert_true(sst_value_equal(sst_graph_result_state(r), expect[LUA_STEPS]));
        sst_graph_result_free(r);
        sst_graph_thread_free(th);
        sst_lua_script_free(s);
    }
    long points = -1, absorbed = 0;
    loop_start();
    for (long n = first_n("lua"); n <= MAX_N; n = next_n(n)) {
        remove_db(db);
        long base = tu_chaos_live();
        sst_error err;
        sst_error_clear(&err);
        const char *stage = "load";
        sst_graph_thread *th = NULL;
        sst_graph_result *r = NULL;
        tu_chaos_fail_at(n);
        sst_lua_script *s = sst_lua_script_load(script, &err);
        if (s != NULL) {
            stage = "thread_open";
            th = sst_graph_thread_open(sst_lua_script_graph(s), sst_lua_script_checkpointer(s),
                                       "lt", &err);
        }
        if (th != NULL) {
            stage = "invoke";
            sst_invoke_opts o;
            sst_invoke_opts_init(&o);
            sst_lua_script_invoke_opts(s, &o);
            o.sleep = no_sleep;
            r = sst_graph_invoke(sst_lua_script_graph(s), th, input, &o, &err);
        }
        int fired = tu_chaos_fired();
        tu_chaos_off();
        bool completed = false;
        if (r != NULL && sst_graph_result_status(r) == SST_RUN_COMPLETED) {
            completed = true;
            if (!sst_value_equal(sst_graph_result_state(r), expect[LUA_STEPS])) {
                problem("lua: allocation %ld: the run completed with another state", n);
            }
            absorbed += fired;
        } else if (r != NULL) {
            const sst_error *e = sst_graph_result_error(r);
            if (!fired || sst_graph_result_status(r) != SST_RUN_FAILED || e->code != SST_ENOMEM) {
                problem("lua: allocation %ld%s: run status %d, %s (node %s): %s", n,
                        fired ? " failed" : " (none failed)", (int)sst_graph_result_status(r),
                        sst_code_name(e->code),
                        sst_graph_result_error_node(r) ? sst_graph_result_error_node(r) : "-",
                        e->msg);
            }
        } else if (!fired || err.code != SST_ENOMEM) {
            problem("lua: allocation %ld%s: %s failed with %s: %s", n,
                    fired ? " failed" : " (none failed)", stage, sst_code_name(err.code), err.msg);
        }
        sst_graph_result_free(r);
        sst_graph_thread_free(th);
        sst_lua_script_free(s);
        if (tu_chaos_live() != base) {
            problem("lua: allocation %ld failed (%s) and %ld blocks leaked", n, stage,
                    tu_chaos_live() - base);
        }
        if (access(db, F_OK) == 0) {
            char what[64];
            snprintf(what, sizeof what, "lua allocation %ld", n);
            check_file(what, db);
            /*
             * The store reads back a committed state, and a new run completes it
             * (chaos off), through the script's twin in C: loading the script
             * again for each n would double the time.
             */
            sst_checkpointer *cp = sst_sqlite_saver_open(db, NULL, &err);
            assert_non_null(cp);
            th = sst_graph_thread_open(twin, cp, "lt", &err);
            assert_non_null(th);
            sst_value *st = sst_graph_get_state(th, NULL, &err);
            if (st == NULL ? err.code != SST_ENOTFOUND || completed
                           : lua_which(sst_object_get(st, "values"), expect) < 0 ||
                                 (completed &&
                                  lua_which(sst_object_get(st, "values"), expect) != LUA_STEPS)) {
                problem("lua: allocation %ld failed (%s), then get_state %s", n, stage,
                        st == NULL ? err.msg : "reads no committed state");
            }
            sst_value_unref(st);
            sst_invoke_opts o;
            sst_invoke_opts_init(&o);
            r = sst_graph_invoke(twin, th, input, &o, &err);
            if (r == NULL || sst_graph_result_status(r) != SST_RUN_COMPLETED ||
                !sst_value_equal(sst_graph_result_state(r), expect[LUA_STEPS])) {
                problem("lua: allocation %ld failed (%s), then a new run did not complete to the "
                        "reference state: %s",
                        n, stage, r == NULL ? err.msg : sst_graph_result_error(r)->msg);
            }
            sst_graph_result_free(r);
            sst_graph_thread_free(th);
            sst_checkpointer_free(cp);
        }
        if (!fired) {
            points = n - 1;
            break;
        }
    }
    remove_db(db);
    unlink(script);
    sst_compiled_graph_free(twin);
    sst_graph_free(twin_g);
    sst_value_unref(input);
    for (int k = 0; k <= LUA_STEPS; k++) {
        sst_value_unref(expect[k]);
    }
    if (tu_chaos_live() != base0) {
        problem("lua: %ld blocks still live at the end", tu_chaos_live() - base0);
    }
    if (points < 0) {
        problem("lua: still failing at allocation %d", MAX_N);
    }
    print_message("lua: %ld allocation points (every n to %d, then every %d-th); %ld failures "
                  "absorbed (the run completed); %.1f s\n",
                  points, DENSE_N, STRIDE, absorbed, now_s() - t0);
    assert_int_equal(g_problems, 0);
}

/* ---- main ---- */

static int group_setup(void **state) {
    (void)state;
    /* Hundreds of SQLite files are made: on tmpfs when there is one, their syncs cost nothing. */
    snprintf(g_dir, sizeof g_dir, "/dev/shm/sst-chaos-store-XXXXXX");
    if (mkdtemp(g_dir) != NULL) {
        return 0;
    }
    snprintf(g_dir, sizeof g_dir, "/tmp/sst-chaos-store-XXXXXX");
    return mkdtemp(g_dir) == NULL;
}

static int group_teardown(void **state) {
    (void)state;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
    return system(cmd) != 0;
}

int main(void) {
    tu_chaos_install();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_memory_saver), cmocka_unit_test(test_sqlite_saver),
        cmocka_unit_test(test_graph_memory), cmocka_unit_test(test_graph_sqlite),
        cmocka_unit_test(test_lua),
    };
    /* CTest runs one case per entry (tests/CMakeLists.txt), e.g. SST_TEST_FILTER=test_lua:
     * a name that is none of them would run nothing and pass, so it is refused. */
    const char *filter = getenv("SST_TEST_FILTER");
    if (filter != NULL) {
        bool known = false;
        for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++) {
            known = known || strcmp(tests[i].name, filter) == 0;
        }
        if (!known) {
            fprintf(stderr, "test_chaos_store: SST_TEST_FILTER=%s names no case\n", filter);
            return 2;
        }
        cmocka_set_test_filter(filter);
    }
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
