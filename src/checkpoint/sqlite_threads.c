/* SPDX-License-Identifier: MIT */
/*
 * The SQLite saver's threads: their rows (created time, user metadata),
 * search with filters and paging, copy, delete and prune. Deleting records
 * sweeps the blobs no record refers to any more: the blobs the deleted
 * records referred to are collected in a temporary table, the records go,
 * and those blobs no remaining record lists are deleted, all in the same
 * transaction.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "sqlite_int.h"

bool sst__sq_run(sqlite_saver *s, int which, const char *what, sst_error *err, ...) {
    sqlite3_stmt *st = sst__sq_stmt(s, which);
    va_list ap;
    va_start(ap, err);
    int i = 1;
    for (const char *t = va_arg(ap, const char *); t != NULL; t = va_arg(ap, const char *)) {
        sst__sq_bind_text(st, i++, t);
    }
    va_end(ap);
    return sst__sq_step_done(s, st, what, err);
}

/* ---- listing ---- */

/* Reads the current row of a THREAD_SELECT statement into @p t. */
static sst_code read_thread(sqlite_saver *s, sqlite3_stmt *st, sst_thread_info *t, sst_error *err) {
    const char *meta = (const char *)sqlite3_column_text(st, 4);
    size_t mlen = (size_t)sqlite3_column_bytes(st, 4);
    *t = (sst_thread_info){
        .thread_id = (const char *)sqlite3_column_text(st, 0),
        .created_at = sqlite3_column_int64(st, 1),
        .updated_at = sqlite3_column_int64(st, 2),
        /* busy: a lease not expired whose holder is alive (one killed with -9 on this
         * host left its row behind) */
        .status = sqlite3_column_type(st, 9) != SQLITE_NULL &&
                          !sst__owner_gone((const char *)sqlite3_column_text(st, 9))
                      ? SST_THREAD_BUSY
                      : (sst_thread_status)sqlite3_column_int(st, 3),
        .metadata = {.data = meta != NULL ? meta : "{}", .len = meta != NULL ? mlen : 2},
        .checkpoints = (size_t)sqlite3_column_int64(st, 6),
        .latest_id = (const char *)sqlite3_column_text(st, 7),
        .step = sqlite3_column_int64(st, 8),
    };
    if ((unsigned)t->status > SST_THREAD_ERROR) {
        t->status = SST_THREAD_IDLE;
    }
    if (t->thread_id == NULL ||
        (meta != NULL && sqlite3_column_type(st, 5) != SQLITE_NULL &&
         (uint32_t)sqlite3_column_int64(st, 5) != sst__crc32c(0, meta, mlen))) {
        return sst__error(err, SST_EIO,
                          "checkpoint store '%s': the metadata of thread '%s' is damaged "
                          "(checksum mismatch)",
                          s->path, t->thread_id != NULL ? t->thread_id : "?");
    }
    return SST_OK;
}

/* Runs a prepared THREAD_SELECT statement, calling @p each for matches. */
static sst_code each_thread(sqlite_saver *s, sqlite3_stmt *st, const sst_thread_query *q,
                            sst_thread_fn each, void *user_data, size_t *found, sst_error *err) {
    sqlite3_bind_int64(st, 1, (int64_t)sst__now_ms());
    sst__thread_pager pager = {.q = q};
    int step = SQLITE_DONE;
    sst_code rc = SST_OK;
    while (rc == SST_OK && (step = sqlite3_step(st)) == SQLITE_ROW) {
        sst_thread_info t;
        rc = read_thread(s, st, &t, err);
        if (rc != SST_OK) {
            break;
        }
        unsigned long was = atomic_exchange(&s->cb_owner, (unsigned long)pthread_self());
        bool more = sst__thread_page(&pager, &t, each, user_data);
        atomic_store(&s->cb_owner, was);
        if (!more) {
            break;
        }
    }
    if (rc == SST_OK && step != SQLITE_ROW && step != SQLITE_DONE) {
        rc = sst__sq_db_error(s, err, "listing threads");
    }
    if (found != NULL) {
        *found = pager.sent;
    }
    return rc;
}

/*
 * The owner of a thread's metadata (sst_thread_query.owner: the server's users), and the
 * index that serves a search by it (with the order by created time): made the first time
 * a saver searches by owner, so a file never searched that way has no index to update.
 */
#define OWNER_EXPR "(CASE WHEN json_valid(metadata) THEN json_extract(metadata, '$.owner') END)"
static const char k_owner_index[] =
    "CREATE INDEX IF NOT EXISTS threads_owner ON threads(" OWNER_EXPR ", created)";

sst_code sst__sq_threads(void *self, const sst_thread_query *q, sst_thread_fn each, void *user_data,
                         sst_error *err) {
    sqlite_saver *s = self;
    static const char *const order[] = {"t.thread", "t.created", "3"};
    char sql[1024];
    snprintf(sql, sizeof sql, THREAD_SELECT "%s ORDER BY %s %s, t.thread %s",
             q->owner != NULL ? " WHERE " OWNER_EXPR " = ?2" : "",
             order[q->order <= SST_THREADS_BY_UPDATED ? q->order : 0],
             q->descending ? "DESC" : "ASC", q->descending ? "DESC" : "ASC");
    pthread_mutex_lock(s->mu);
    if (q->owner != NULL && !s->owner_index) {
        s->owner_index = true;
        /* Without it (a read-only file, a busy one) the search still works, unindexed. */
        (void)sqlite3_exec(s->db, k_owner_index, NULL, NULL, NULL);
    }
    sqlite3_stmt *st = NULL;
    sst_code rc = sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) == SQLITE_OK
                      ? SST_OK
                      : sst__sq_db_error(s, err, "listing threads");
    if (rc == SST_OK && q->owner != NULL) {
        sst__sq_bind_text(st, 2, q->owner);
    }
    rc = rc == SST_OK ? each_thread(s, st, q, each, user_data, NULL, err) : rc;
    sqlite3_finalize(st);
    pthread_mutex_unlock(s->mu);
    return rc;
}

sst_code sst__sq_thread_get(void *self, const char *thread, sst_thread_fn each, void *user_data,
                            sst_error *err) {
    sqlite_saver *s = self;
    pthread_mutex_lock(s->mu);
    sqlite3_stmt *st = sst__sq_stmt(s, S_THREAD_GET);
    sst_thread_query all = {0};
    size_t found = 0;
    sst__sq_bind_text(st, 2, thread);
    sst_code rc = each_thread(s, st, &all, each, user_data, &found, err);
    sqlite3_reset(st);
    pthread_mutex_unlock(s->mu);
    if (rc == SST_OK && found == 0) {
        rc = sst__error(err, SST_ENOTFOUND, "checkpoint store '%s': no thread '%s'", s->path,
                        thread);
    }
    return rc;
}

/* A thread's metadata upsert, a unit of the group commit (under mu). */
typedef struct thread_put_job {
    const char *thread;
    const sst_payload *metadata;
} thread_put_job;

static sst_code thread_put_run(sqlite_saver *s, void *arg, sst_error *err) {
    thread_put_job *j = arg;
    bool ok = sst__sq_begin(s, false, err);
    if (ok) {
        sqlite3_stmt *st = sst__sq_stmt(s, S_THREAD_PUT);
        sst__sq_bind_text(st, 1, j->thread);
        sqlite3_bind_int64(st, 2, (int64_t)sst__now_ms());
        sqlite3_bind_text(st, 3, j->metadata->data, (int)j->metadata->len, SQLITE_STATIC);
        sqlite3_bind_int64(st, 4, sst__crc32c(0, j->metadata->data, j->metadata->len));
        ok = sst__sq_step_done(s, st, "writing a thread's metadata", err);
    }
    sst_code rc = ok ? SST_OK : sst__code(err);
    ok = sst__sq_commit(s, false, ok, ok ? err : NULL);
    return rc != SST_OK ? rc : ok ? SST_OK : sst__code(err);
}

sst_code sst__sq_thread_put(void *self, const char *thread, const sst_payload *metadata,
                            sst_error *err) {
    sqlite_saver *s = self;
    if (metadata->len > s->max_record_bytes) {
        return sst__error(err, SST_ELIMIT,
                          "checkpoint store '%s': thread metadata of %zu bytes "
                          "is over the limit",
                          s->path, metadata->len);
    }
    /* A unit of the group commit (issue 37): `POST /threads` of many clients in flight
     * shares the commits of the runs' checkpoints, enqueues and finishes. */
    thread_put_job j = {thread, metadata};
    sq_unit u = {.run = thread_put_run, .arg = &j};
    return sst__sq_write_unit(s, &u, false, err);
}

/* ---- copy, delete, prune ---- */

/* True when @p thread has a row or a checkpoint; *err set on a storage error. */
static bool thread_exists(sqlite_saver *s, const char *thread, sst_code *rc, sst_error *err) {
    sqlite3_stmt *st = sst__sq_stmt(s, S_THREAD_EXISTS);
    sst__sq_bind_text(st, 1, thread);
    int step = sqlite3_step(st);
    sqlite3_reset(st);
    if (step != SQLITE_ROW && step != SQLITE_DONE) {
        *rc = sst__sq_db_error(s, err, "reading threads");
    }
    return step == SQLITE_ROW;
}

sst_code sst__sq_copy_thread(void *self, const char *from, const char *to, sst_error *err) {
    sqlite_saver *s = self;
    pthread_mutex_lock(s->mu);
    sst_code rc = sst__sq_begin(s, false, err) ? SST_OK : sst__code(err);
    bool began = rc == SST_OK;
    if (rc == SST_OK && !thread_exists(s, from, &rc, err) && rc == SST_OK) {
        rc = sst__error(err, SST_ENOTFOUND, "checkpoint store '%s': no thread '%s' to copy",
                        s->path, from);
    }
    if (rc == SST_OK && thread_exists(s, to, &rc, err) && rc == SST_OK) {
        rc = sst__error(err, SST_ECONFLICT, "checkpoint store '%s': thread '%s' exists already",
                        s->path, to);
    }
    static const int steps[] = {S_COPY_C, S_COPY_W, S_COPY_T};
    for (size_t i = 0; rc == SST_OK && i < sizeof steps / sizeof steps[0]; i++) {
        rc = sst__sq_run(s, steps[i], "copying a thread", err, from, to, NULL) ? SST_OK
                                                                               : sst__code(err);
    }
    bool ok = began && sst__sq_commit(s, false, rc == SST_OK, rc == SST_OK ? err : NULL);
    pthread_mutex_unlock(s->mu);
    return rc != SST_OK ? rc : ok ? SST_OK : sst__code(err);
}

sst_code sst__sq_delete_thread(void *self, const char *thread, sst_error *err) {
    sqlite_saver *s = self;
    pthread_mutex_lock(s->mu);
    bool ok = sst__sq_begin(s, false, err);
    static const int steps[] = {S_SWEEP_CLEAR,  S_SWEEP_ADD_THREAD, S_DEL_THREAD_C,
                                S_DEL_THREAD_W, S_DEL_THREAD_T,     S_SWEEP,
                                S_SWEEP_CLEAR};
    for (size_t i = 0; ok && i < sizeof steps / sizeof steps[0]; i++) {
        ok = steps[i] == S_SWEEP || steps[i] == S_SWEEP_CLEAR
                 ? sst__sq_run(s, steps[i], "deleting a thread", err, NULL)
                 : sst__sq_run(s, steps[i], "deleting a thread", err, thread, NULL);
    }
    sst_code rc = ok ? SST_OK : sst__code(err);
    ok = sst__sq_commit(s, false, ok, ok ? err : NULL);
    if (rc == SST_OK && ok) {
        sst__sq_known_clear(s); /* blobs may be gone */
    }
    pthread_mutex_unlock(s->mu);
    return rc != SST_OK ? rc : ok ? SST_OK : sst__code(err);
}

/* A thread's records in put order, as prune needs them. */
typedef struct chain_rec {
    char *id, *ns, *parent; /* owned */
    bool delta, keep;
} chain_rec;

static void chain_free(chain_rec *c, size_t n) {
    for (size_t i = 0; i < n; i++) {
        sst__free(c[i].id);
        sst__free(c[i].ns);
        sst__free(c[i].parent);
    }
    sst__free(c);
}

static char *dup_text(sqlite3_stmt *st, int col) {
    const char *t = (const char *)sqlite3_column_text(st, col);
    return t != NULL ? sst__strndup(t, strlen(t)) : NULL;
}

static sst_code read_chain(sqlite_saver *s, const char *thread, chain_rec **out, size_t *n,
                           sst_error *err) {
    sqlite3_stmt *st = sst__sq_stmt(s, S_CHAIN);
    sst__sq_bind_text(st, 1, thread);
    size_t cap = 0;
    sst_code rc = SST_OK;
    int step;
    while (rc == SST_OK && (step = sqlite3_step(st)) == SQLITE_ROW) {
        if (!sst__grow((void **)out, &cap, *n, sizeof **out, 64)) {
            rc = sst__enomem(err);
            break;
        }
        chain_rec *c = &(*out)[(*n)++];
        *c = (chain_rec){dup_text(st, 0), dup_text(st, 1), dup_text(st, 2),
                         sqlite3_column_int(st, 3) != 0, false};
        if (c->id == NULL || c->ns == NULL ||
            (c->parent == NULL && sqlite3_column_type(st, 2) != SQLITE_NULL)) {
            rc = sst__enomem(err);
        }
    }
    if (rc == SST_OK && step != SQLITE_DONE) {
        rc = sst__sq_db_error(s, err, "reading a thread's checkpoints");
    }
    sqlite3_reset(st);
    return rc;
}

/* Marks the latest @p keep records of each namespace and their chains back to a snapshot. */
static void mark_kept(chain_rec *c, size_t n, size_t keep) {
    enum { MAX_NS = 64 };
    const char *ns[MAX_NS];
    size_t seen[MAX_NS], m = 0;
    for (size_t i = n; i-- > 0;) {
        size_t j = 0;
        while (j < m && strcmp(ns[j], c[i].ns) != 0) {
            j++;
        }
        if (j == m && m < MAX_NS) {
            ns[m] = c[i].ns;
            seen[m++] = 0;
        }
        /* (past MAX_NS namespaces, records are kept rather than counted) */
        c[i].keep |= j == MAX_NS || seen[j]++ < keep;
        if (!c[i].keep || !c[i].delta || c[i].parent == NULL) {
            continue;
        }
        for (size_t p = i; p-- > 0;) {
            if (strcmp(c[p].id, c[i].parent) == 0) {
                c[p].keep = true;
                break;
            }
        }
    }
}

sst_code sst__sq_prune(void *self, const char *thread, size_t keep, size_t *removed,
                       sst_error *err) {
    sqlite_saver *s = self;
    chain_rec *c = NULL;
    size_t n = 0, gone = 0;
    pthread_mutex_lock(s->mu);
    bool ok = sst__sq_begin(s, false, err);
    sst_code rc = ok ? read_chain(s, thread, &c, &n, err) : sst__code(err);
    if (rc == SST_OK) {
        mark_kept(c, n, keep);
        ok = sst__sq_run(s, S_SWEEP_CLEAR, "pruning a thread", err, NULL);
    }
    for (size_t i = 0; rc == SST_OK && ok && i < n; i++) {
        if (c[i].keep) {
            continue;
        }
        static const int steps[] = {S_SWEEP_ADD_REC, S_DEL_WRITES, S_DEL_REC};
        for (size_t k = 0; ok && k < sizeof steps / sizeof steps[0]; k++) {
            ok = sst__sq_run(s, steps[k], "pruning a thread", err, thread, c[i].id, NULL);
        }
        gone++;
    }
    ok = ok && rc == SST_OK && sst__sq_run(s, S_SWEEP, "pruning a thread", err, NULL) &&
         sst__sq_run(s, S_SWEEP_CLEAR, "pruning a thread", err, NULL);
    rc = rc != SST_OK ? rc : ok ? SST_OK : sst__code(err);
    ok = sst__sq_commit(s, false, rc == SST_OK, rc == SST_OK ? err : NULL);
    if (rc == SST_OK && ok) {
        sst__sq_known_clear(s); /* blobs may be gone */
    }
    pthread_mutex_unlock(s->mu);
    chain_free(c, n);
    if (removed != NULL) {
        *removed = rc == SST_OK && ok ? gone : 0;
    }
    return rc != SST_OK ? rc : ok ? SST_OK : sst__code(err);
}
