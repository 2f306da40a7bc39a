/* SPDX-License-Identifier: MIT */
/*
 * The SQLite run queue's bookkeeping operations: enqueue, get, list, remove,
 * remove_thread and cancel (the leases are in sqlite_claim.c). Rows are
 * copied out under the lock and handed to callbacks after it is let go.
 */
#include <stdio.h>
#include <string.h>

#include "sqlite_int.h"
#include "superstep/json.h"

/* ---- enqueue ---- */

/* @p v as JSON text (new, sst__free), or NULL for a NULL @p v; SST_ELIMIT over 16 MiB. */
static sst_code json_text(const sqlite_queue *s, const char *run_id, const char *name,
                          const sst_value *v, char **out, sst_error *err) {
    *out = NULL;
    if (v == NULL) {
        return SST_OK;
    }
    size_t len = 0;
    if ((*out = sst_json_write(v, SST_JSON_COMPACT, &len, err)) == NULL) {
        return sst__code(err);
    }
    if (len > SST__QUEUE_MAX_JSON) {
        sst__free(*out);
        *out = NULL;
        return sst__error(err, SST_ELIMIT,
                          "queue '%s': run '%s': %s is %zu bytes of JSON, over the limit of %zu "
                          "bytes (16 MiB)",
                          s->path, run_id, name, len, SST__QUEUE_MAX_JSON);
    }
    return SST_OK;
}

/* SST_EBUSY when the run's thread has a pending or running run (inside the transaction). */
static sst_code check_idle(sqlite_queue *s, const sst_queued_run *run, sst_error *err) {
    sqlite3_stmt *st = sst__qs_stmt(s, QS_THREAD_ACTIVE);
    sst__qs_bind_text(st, 1, run->thread_id);
    int step = sqlite3_step(st);
    sst_code rc = SST_OK;
    if (step == SQLITE_ROW) {
        rc = sst__error(
            err, SST_EBUSY, "queue '%s': run '%s': thread '%s' has a pending or running run ('%s')",
            s->path, run->run_id, run->thread_id, (const char *)sqlite3_column_text(st, 0));
    } else if (step != SQLITE_DONE) {
        rc = sst__qs_error(s, err, "looking for the thread's runs");
    }
    sqlite3_reset(st);
    return rc;
}

static sst_code insert(sqlite_queue *s, const sst_queued_run *run, const char *kwargs,
                       const char *metadata, sst_error *err) {
    int64_t now = (int64_t)sst__now_ms();
    sqlite3_stmt *st = sst__qs_stmt(s, QS_INSERT);
    sst__qs_bind_text(st, 1, run->run_id);
    sst__qs_bind_text(st, 2, run->thread_id);
    sst__qs_bind_text(st, 3, run->assistant_id != NULL ? run->assistant_id : "");
    sst__qs_bind_text(st, 4, kwargs != NULL ? kwargs : "{}");
    sst__qs_bind_text(st, 5, metadata != NULL ? metadata : "{}");
    sst__qs_bind_text(st, 6, run->multitask_strategy);
    sqlite3_bind_int64(st, 7, run->created_at != 0 ? run->created_at : now);
    sqlite3_bind_int64(st, 8, now);
    sqlite3_bind_int64(st, 9, run->run_after);
    int step = sqlite3_step(st);
    sst_code rc = SST_OK;
    if (step == SQLITE_CONSTRAINT && sqlite3_extended_errcode(s->db) == SQLITE_CONSTRAINT_UNIQUE) {
        rc = sst__error(err, SST_ECONFLICT, "queue '%s': run '%s' exists already", s->path,
                        run->run_id);
    } else if (step != SQLITE_DONE) {
        rc = sst__qs_error(s, err, "inserting a run");
    }
    sqlite3_reset(st);
    return rc;
}

sst_code sst__qs_enqueue(void *self, const sst_queued_run *run, unsigned flags, sst_error *err) {
    SST__ERR_LOCAL(err);
    sqlite_queue *s = self;
    char *kwargs = NULL, *metadata = NULL;
    sst_code rc = json_text(s, run->run_id, "kwargs", run->kwargs, &kwargs, err);
    rc = rc == SST_OK ? json_text(s, run->run_id, "metadata", run->metadata, &metadata, err) : rc;
    if (rc == SST_OK) {
        pthread_mutex_lock(s->mu);
        if (flags & SST_QUEUE_IF_IDLE) {
            /* The check and the insert in one write transaction: no other enqueue between. */
            rc = sst__qs_begin(s, err) ? check_idle(s, run, err) : sst__code(err);
            rc = rc == SST_OK ? insert(s, run, kwargs, metadata, err) : rc;
            if (!sst__qs_end(s, rc == SST_OK, rc == SST_OK ? err : NULL) && rc == SST_OK) {
                rc = sst__code(err);
            }
        } else {
            rc = insert(s, run, kwargs, metadata, err);
        }
        pthread_mutex_unlock(s->mu);
    }
    sst__free(kwargs);
    sst__free(metadata);
    return rc;
}

/* ---- reading ---- */

sst_code sst__qs_get(void *self, const char *run_id, sst_queued_run_fn each, void *user_data,
                     sst_error *err) {
    SST__ERR_LOCAL(err);
    sqlite_queue *s = self;
    queue_row row;
    pthread_mutex_lock(s->mu);
    sqlite3_stmt *st = sst__qs_stmt(s, QS_GET);
    sst__qs_bind_text(st, 1, run_id);
    int step = sqlite3_step(st);
    sst_code rc = step == SQLITE_ROW ? sst__qs_row_read(s, st, &row, err)
                  : step == SQLITE_DONE
                      ? sst__error(err, SST_ENOTFOUND, "queue '%s': no run '%s'", s->path, run_id)
                      : sst__qs_error(s, err, "reading a run");
    sqlite3_reset(st);
    pthread_mutex_unlock(s->mu);
    if (rc == SST_OK) {
        rc = sst__qs_row_emit(s, &row, each, user_data, NULL, err);
        sst__qs_row_free(&row);
    }
    return rc;
}

/* A size_t count as SQLite's LIMIT/OFFSET (0 limit: no limit). */
static int64_t as_count(size_t n, bool limit) {
    if (limit && n == 0) {
        return -1;
    }
    return n > (size_t)INT64_MAX ? INT64_MAX : (int64_t)n;
}

sst_code sst__qs_list(void *self, const sst_queue_query *q, sst_queued_run_fn each, void *user_data,
                      sst_error *err) {
    SST__ERR_LOCAL(err);
    sqlite_queue *s = self;
    int which = q->thread_id != NULL ? (q->by_status ? QS_LIST_THREAD_STATUS : QS_LIST_THREAD)
                                     : (q->by_status ? QS_LIST_STATUS : QS_LIST);
    queue_rows rows = {0};
    pthread_mutex_lock(s->mu);
    sqlite3_stmt *st = sst__qs_stmt(s, which);
    sqlite3_bind_int64(st, 1, as_count(q->limit, true));
    sqlite3_bind_int64(st, 2, as_count(q->offset, false));
    if (q->thread_id != NULL) {
        sst__qs_bind_text(st, 3, q->thread_id);
    }
    if (q->by_status) {
        sst__qs_bind_text(st, 4, sst_queue_status_name(q->status));
    }
    sst_code rc = sst__qs_rows_read(s, st, "listing runs", &rows, err);
    pthread_mutex_unlock(s->mu);
    bool more = true;
    for (size_t i = 0; rc == SST_OK && more && i < rows.n; i++) {
        rc = sst__qs_row_emit(s, &rows.rows[i], each, user_data, &more, err);
    }
    sst__qs_rows_free(&rows);
    return rc;
}

/* ---- removing and cancelling ---- */

sst_code sst__qs_remove(void *self, const char *run_id, sst_error *err) {
    SST__ERR_LOCAL(err);
    sqlite_queue *s = self;
    pthread_mutex_lock(s->mu);
    sqlite3_stmt *st = sst__qs_stmt(s, QS_REMOVE);
    sst__qs_bind_text(st, 1, run_id);
    sst_code rc = sst__qs_done(s, st, "removing a run", err) ? SST_OK : sst__code(err);
    if (rc == SST_OK && sqlite3_changes(s->db) == 0) {
        rc = sst__error(err, SST_ENOTFOUND, "queue '%s': no run '%s'", s->path, run_id);
    }
    pthread_mutex_unlock(s->mu);
    return rc;
}

sst_code sst__qs_remove_thread(void *self, const char *thread_id, sst_error *err) {
    SST__ERR_LOCAL(err);
    sqlite_queue *s = self;
    pthread_mutex_lock(s->mu);
    sqlite3_stmt *st = sst__qs_stmt(s, QS_REMOVE_THREAD);
    sst__qs_bind_text(st, 1, thread_id);
    sst_code rc = sst__qs_done(s, st, "removing a thread's runs", err) ? SST_OK : sst__code(err);
    pthread_mutex_unlock(s->mu);
    return rc;
}

sst_code sst__qs_cancel(void *self, const char *run_id, const char *action, int64_t now,
                        sst_queue_status *status, sst_error *err) {
    SST__ERR_LOCAL(err);
    sqlite_queue *s = self;
    pthread_mutex_lock(s->mu);
    sqlite3_stmt *st = sst__qs_stmt(s, QS_CANCEL);
    sst__qs_bind_text(st, 1, run_id);
    sst__qs_bind_text(st, 2, action);
    sqlite3_bind_int64(st, 3, now);
    int step = sqlite3_step(st);
    sst_queue_status after = SST_QUEUE_PENDING;
    bool found = step == SQLITE_ROW &&
                 sst_queue_status_parse((const char *)sqlite3_column_text(st, 0), &after);
    while (step == SQLITE_ROW) {
        step = sqlite3_step(st); /* to the end: the change is made when the statement ends */
    }
    sst_code rc = SST_OK;
    if (step != SQLITE_DONE) {
        rc = sst__qs_error(s, err, "cancelling a run");
    } else if (!found) {
        rc = sst__error(err, SST_ENOTFOUND, "queue '%s': no run '%s'", s->path, run_id);
    }
    sqlite3_reset(st);
    pthread_mutex_unlock(s->mu);
    if (rc == SST_OK && status != NULL) {
        *status = after;
    }
    return rc;
}
