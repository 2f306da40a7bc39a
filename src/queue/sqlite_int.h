/* SPDX-License-Identifier: MIT */
/*
 * The SQLite run queue's private parts, shared by its files:
 *   sqlite.c        opening a file, the schema, statement and error helpers
 *   sqlite_rows.c   reading rows out of statements and handing them to callbacks
 *   sqlite_ops.c    enqueue, get, list, remove, remove_thread, cancel
 *   sqlite_claim.c  claim, renew, finish, release (the leases and their tokens)
 *
 * Tables (beside the checkpoint saver's and the store's, in the same file if
 * wanted; docs/queue.md):
 *   sst_queue_meta(key, value)  'schema' (SST__QUEUE_SCHEMA_VERSION)
 *   sst_runs(seq, run_id, thread_id, assistant_id, status, kwargs, metadata,
 *            multitask_strategy, created_at, updated_at, run_after, attempt,
 *            cancel, owner, lease_expires, token)  one row per run; seq is
 *            the enqueue order; kwargs and metadata are JSON text
 *
 * Locking: one connection per queue, behind `mu`; every operation takes it
 * for its statements only, and callbacks run after it was let go (rows are
 * copied out first). Between processes (or queues on one file), SQLite's
 * file locks: writes that read first (claim, enqueue if idle) are IMMEDIATE
 * transactions.
 */
#ifndef SUPERSTEP_QUEUE_SQLITE_INT_H
#define SUPERSTEP_QUEUE_SQLITE_INT_H

#include <pthread.h>
#include <sqlite3.h>

#include "common.h"
#include "superstep/queue.h"

/* The application_id of superstep's SQLite files: the checkpoint saver's and the store's. */
#define SST__QUEUE_SQLITE_APP_ID 0x53535450 /* "SSTP" */
/* The queue tables' schema version (sst_queue_meta 'schema'). */
#define SST__QUEUE_SCHEMA_VERSION 3
/* The largest kwargs or metadata text stored. */
#define SST__QUEUE_MAX_JSON ((size_t)16 << 20)
/* How long a statement waits for another connection's lock (ms). */
#define SST__QUEUE_BUSY_MS 5000

/* Prepared statements, made when the file is opened. */
enum {
    QS_BEGIN,
    QS_COMMIT,
    QS_ROLLBACK,
    QS_INSERT,
    QS_THREAD_ACTIVE,
    QS_GET,
    QS_LIST,
    QS_LIST_THREAD,
    QS_LIST_STATUS,
    QS_LIST_THREAD_STATUS,
    QS_REMOVE,
    QS_REMOVE_THREAD,
    QS_CANCEL,
    QS_CLAIM_PENDING,
    QS_CLAIM_EXPIRED,
    QS_LOCAL_OWNER,
    QS_CLAIM_OWNER,
    QS_CLAIM_SET,
    QS_GET_SEQ,
    QS_RENEW,
    QS_FINISH,
    QS_RELEASE,
    QS_HOLDER,
    QS_COUNT
};

/* The columns every run read returns, in this order (the RC_ names below). */
#define QUEUE_RUN_COLS                                                                             \
    "run_id, thread_id, assistant_id, status, kwargs, metadata, multitask_strategy, created_at, "  \
    "updated_at, run_after, attempt, cancel, owner, lease_expires, token"

enum {
    RC_RUN_ID,
    RC_THREAD_ID,
    RC_ASSISTANT_ID,
    RC_STATUS,
    RC_KWARGS,
    RC_METADATA,
    RC_STRATEGY,
    RC_CREATED_AT,
    RC_UPDATED_AT,
    RC_RUN_AFTER,
    RC_ATTEMPT,
    RC_CANCEL,
    RC_OWNER,
    RC_LEASE_EXPIRES,
    RC_TOKEN
};

typedef struct sqlite_queue {
    char *path;                 /* owned, for messages */
    sqlite3 *db;                /* conn's */
    struct sst_sqlite_db *conn; /* a reference: own, or shared with a saver and a store */
    pthread_mutex_t *mu;        /* conn's (recursive): the connection and the statements */
    sqlite3_stmt *st[QS_COUNT]; /* protected by mu */
} sqlite_queue;

/*
 * A run copied out of a statement's row, so that it outlives the statement
 * and the lock: the strings point into @c buf.
 */
typedef struct queue_row {
    char *buf; /* owned, sst__malloc: every string below */
    const char *run_id, *thread_id, *assistant_id, *kwargs, *metadata, *strategy, *cancel, *owner;
    size_t kwargs_len, metadata_len;
    sst_queue_status status;
    int64_t created_at, updated_at, run_after, lease_expires;
    uint32_t attempt;
    uint64_t token;
} queue_row;

/* Rows gathered by a listing. */
typedef struct queue_rows {
    queue_row *rows; /* owned, sst__malloc */
    size_t n, cap;
} queue_rows;

/* Fills err with "queue 'PATH': WHAT: <sqlite's message>"; returns the code. */
sst_code sst__qs_error(const sqlite_queue *s, sst_error *err, const char *what);
/* Statement @p which, reset and unbound (mu held). */
sqlite3_stmt *sst__qs_stmt(sqlite_queue *s, int which);
/* Binds text, or NULL for a NULL @p text. */
void sst__qs_bind_text(sqlite3_stmt *st, int i, const char *text);
/* Runs a statement that returns no rows, then resets it; false with err filled. */
bool sst__qs_done(sqlite_queue *s, sqlite3_stmt *st, const char *what, sst_error *err);
/* Begins an IMMEDIATE transaction (mu held); false with err filled. */
bool sst__qs_begin(sqlite_queue *s, sst_error *err);
/* Commits when @p ok, else rolls back; false when anything failed (err filled when ok). */
bool sst__qs_end(sqlite_queue *s, bool ok, sst_error *err);

/*
 * Copies the current row of @p st (QUEUE_RUN_COLS) into @p r. On failure
 * (SST_ENOMEM; SST_EIO for a status this build does not know) @p r holds
 * nothing to free.
 */
sst_code sst__qs_row_read(sqlite_queue *s, sqlite3_stmt *st, queue_row *r, sst_error *err);
void sst__qs_row_free(queue_row *r);
/* Steps @p st to its end, copying each row into @p rows; resets @p st. */
sst_code sst__qs_rows_read(sqlite_queue *s, sqlite3_stmt *st, const char *what, queue_rows *rows,
                           sst_error *err);
void sst__qs_rows_free(queue_rows *rows);
/*
 * Parses the row's JSON and calls @p each with it (call without mu held).
 * *more (if not NULL) gets what @p each returned. SST_EIO naming the run when
 * its stored JSON does not parse.
 */
sst_code sst__qs_row_emit(const sqlite_queue *s, const queue_row *r, sst_queued_run_fn each,
                          void *user_data, bool *more, sst_error *err);

/* The operations (sqlite_ops.c, sqlite_claim.c). */
sst_code sst__qs_enqueue(void *self, const sst_queued_run *run, unsigned flags, sst_error *err);
sst_code sst__qs_get(void *self, const char *run_id, sst_queued_run_fn each, void *user_data,
                     sst_error *err);
sst_code sst__qs_list(void *self, const sst_queue_query *q, sst_queued_run_fn each, void *user_data,
                      sst_error *err);
sst_code sst__qs_remove(void *self, const char *run_id, sst_error *err);
sst_code sst__qs_remove_thread(void *self, const char *thread_id, sst_error *err);
sst_code sst__qs_cancel(void *self, const char *run_id, const char *action, int64_t now,
                        sst_queue_status *status, sst_error *err);
sst_code sst__qs_claim(void *self, const char *owner, int64_t now, int64_t lease_ms,
                       sst_queued_run_fn each, void *user_data, sst_error *err);
sst_code sst__qs_renew(void *self, const char *run_id, uint64_t token, int64_t now,
                       int64_t lease_ms, char **cancel, sst_error *err);
sst_code sst__qs_finish(void *self, const char *run_id, uint64_t token, sst_queue_status status,
                        int64_t now, sst_error *err);
sst_code sst__qs_release(void *self, const char *run_id, uint64_t token, int64_t now,
                         sst_error *err);

#endif /* SUPERSTEP_QUEUE_SQLITE_INT_H */
