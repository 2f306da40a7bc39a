/* SPDX-License-Identifier: MIT */
/**
 * @file queue.h
 * @brief The durable run queue: runs as rows with a status and a lease.
 *
 * `superstep serve` and its workers coordinate through a queue only (DESIGN.md,
 * "Serving and scale-out"). A run is a row: what to run (an opaque JSON
 * object the queue never reads), on which thread, its status, and while it
 * runs a lease held by one worker. A worker claims the oldest runnable run,
 * renews the lease while it runs and finishes it with a final status; a
 * worker that dies stops renewing, its lease expires, and another worker
 * claims the run again (attempt + 1) and resumes it from its last
 * checkpoint. Every claim gets a new fencing token: renew and finish check
 * it atomically with their write, so a worker that lost its lease (paused
 * past it, then woken) learns it with SST_ECONFLICT and never overwrites
 * the new holder's outcome.
 *
 * One run at a time per thread: a run is not claimed while another run of
 * its thread holds a live lease, and runs of one thread are claimed in the
 * order they were enqueued.
 *
 * Backends implement sst_queue_ops (like sst_checkpointer_ops): SQLite
 * (sst_sqlite_queue_open, in the checkpoint database's file) and PostgreSQL
 * (sst_postgres_queue_open, shared by processes on many machines). One
 * contract suite (tests/unit/test_queue_contract.c) runs against every
 * backend.
 *
 * Thread-safety: every call may be made from any thread at any time. The
 * provided backends call the callbacks (sst_queued_run_fn) holding no lock,
 * so a callback may call the queue again.
 */
#ifndef SUPERSTEP_QUEUE_H
#define SUPERSTEP_QUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "superstep/error.h"
#include "superstep/export.h"
#include "superstep/postgres.h"
#include "superstep/sqlite.h"
#include "superstep/value.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A run's status (LangGraph's RunStatus names). */
typedef enum sst_queue_status {
    SST_QUEUE_PENDING = 0,     /* waiting to be claimed */
    SST_QUEUE_RUNNING = 1,     /* claimed: a worker holds its lease */
    SST_QUEUE_SUCCESS = 2,     /* finished: completed */
    SST_QUEUE_ERROR = 3,       /* finished: failed */
    SST_QUEUE_INTERRUPTED = 4, /* finished: stopped at an interrupt, or cancelled */
    SST_QUEUE_TIMEOUT = 5      /* finished: ran out of time */
} sst_queue_status;

/** "pending", "running", "success", "error", "interrupted", "timeout"; "?" otherwise. */
SST_API const char *sst_queue_status_name(sst_queue_status s);
/** Parses a status name; false (and *out unchanged) when @p name is none of them. */
SST_API bool sst_queue_status_parse(const char *name, sst_queue_status *out);
/** True for success, error, interrupted and timeout. */
SST_API bool sst_queue_status_final(sst_queue_status s);

/** A run as the queue keeps it. Strings are NUL-terminated UTF-8. */
typedef struct sst_queued_run {
    const char *run_id;       /* non-empty, unique in the queue */
    const char *thread_id;    /* non-empty: the thread the run runs on */
    const char *assistant_id; /* free text (may be ""), kept for listing */
    sst_queue_status status;
    /* What to run: a JSON object the queue stores and returns as given; NULL: {}. */
    const sst_value *kwargs;
    const sst_value *metadata;      /* a JSON object (user metadata); NULL: {} */
    const char *multitask_strategy; /* free text, kept for listing; NULL: none */
    int64_t created_at;             /* ms since the Unix epoch; enqueue: 0 means now */
    int64_t updated_at;             /* ms: the last change of status or lease */
    int64_t run_after;              /* ms: not claimed before then (0: at once) */
    uint32_t attempt;               /* claims so far (0 until the first) */
    /* A cancel asked for and not yet acted on: NULL, or the action ("interrupt",
     * "rollback"; free text). */
    const char *cancel;
    /* get/list/claim: the current holder, or NULL when none holds it. */
    const char *owner;
    int64_t lease_expires; /* ms; 0 when none holds it */
    uint64_t token;        /* the fencing token of the current claim (0: none) */
} sst_queued_run;

/** Receives one run (borrowed, valid during the call); return false to stop a listing. */
typedef bool (*sst_queued_run_fn)(const sst_queued_run *run, void *user_data);

/** What sst_queue_list returns, oldest enqueued first. */
typedef struct sst_queue_query {
    const char *thread_id; /* NULL: every thread */
    bool by_status;        /* keep only runs with @p status */
    sst_queue_status status;
    size_t offset; /* skip this many */
    size_t limit;  /* at most this many (0: all) */
} sst_queue_query;

/** sst_queue_enqueue flags. */
enum {
    /* Atomically with the insert: fail with SST_EBUSY when the thread has a pending or
     * running run (LangGraph's multitask_strategy "reject"). */
    SST_QUEUE_IF_IDLE = 1u << 0
};

/**
 * What a backend implements; fill by field name with @c size =
 * sizeof(sst_queue_ops). Every function fills @p err on failure with a
 * message naming the queue and the problem (a storage failure is SST_EIO;
 * storage still locked by another process when its wait ran out is
 * SST_EUNAVAILABLE, worth a retry, never SST_EBUSY). All are required.
 */
typedef struct sst_queue_ops {
    size_t size; /* sizeof(sst_queue_ops) as the implementation was built */
    /* Frees the implementation; called once, when the last reference goes. */
    void (*destroy)(void *self);
    /* Inserts @p run (status pending whatever run->status says, attempt 0, no lease,
     * no cancel). SST_ECONFLICT when the run id exists; SST_EBUSY (see
     * SST_QUEUE_IF_IDLE). */
    sst_code (*enqueue)(void *self, const sst_queued_run *run, unsigned flags, sst_error *err);
    /* Calls @p each once with the run; SST_ENOTFOUND when there is none. */
    sst_code (*get)(void *self, const char *run_id, sst_queued_run_fn each, void *user_data,
                    sst_error *err);
    /* Calls @p each for the runs matching @p q, oldest enqueued first. */
    sst_code (*list)(void *self, const sst_queue_query *q, sst_queued_run_fn each, void *user_data,
                     sst_error *err);
    /* Deletes a run whatever its status; SST_ENOTFOUND when there is none. */
    sst_code (*remove)(void *self, const char *run_id, sst_error *err);
    /* Deletes every run of a thread (none is not an error). */
    sst_code (*remove_thread)(void *self, const char *thread_id, sst_error *err);
    /*
     * Claims the oldest runnable run for @p owner: a pending run whose
     * run_after has come, or a running run whose lease expired before @p now
     * (lease_expires < now; or at once when the backend can tell its holder
     * died, see sst_sqlite_queue_open), whose thread has no other run holding
     * a live lease and no older pending or running run. The claim sets status running,
     * owner, lease_expires = now + lease_ms, attempt + 1 and a new token, and
     * calls @p each with the claimed run. SST_ENOTFOUND when nothing is runnable.
     */
    sst_code (*claim)(void *self, const char *owner, int64_t now, int64_t lease_ms,
                      sst_queued_run_fn each, void *user_data, sst_error *err);
    /* Extends the lease of @p run_id to now + lease_ms if @p token still holds it;
     * *cancel (if not NULL) gets the cancel action asked for (a new string, freed with
     * sst_free) or NULL (also on failure). SST_ECONFLICT when the token no longer holds
     * the run (it was claimed again, finished, released or removed). */
    sst_code (*renew)(void *self, const char *run_id, uint64_t token, int64_t now, int64_t lease_ms,
                      char **cancel, sst_error *err);
    /* Sets the final @p status (sst_queue_status_final) and drops the lease, if
     * @p token still holds the run; SST_ECONFLICT otherwise (nothing written). */
    sst_code (*finish)(void *self, const char *run_id, uint64_t token, sst_queue_status status,
                       int64_t now, sst_error *err);
    /* Gives the run back (status pending, lease dropped, attempt kept) if @p token
     * still holds it: a worker stopping cleanly before the run ended. */
    sst_code (*release)(void *self, const char *run_id, uint64_t token, int64_t now,
                        sst_error *err);
    /*
     * Asks to cancel a run with @p action (free text, non-empty): a pending run is
     * finished at once as interrupted; a running run keeps running with its cancel
     * set, for its holder to see (renew) and act on; a finished run is left as it
     * is. *status (if not NULL) gets the run's status after the call.
     * SST_ENOTFOUND when there is no such run.
     */
    sst_code (*cancel)(void *self, const char *run_id, const char *action, int64_t now,
                       sst_queue_status *status, sst_error *err);
} sst_queue_ops;

typedef struct sst_queue sst_queue;

/**
 * Wraps an implementation: @p ops is copied, @p self is handed to every
 * call and to destroy. @return new queue holding one reference; NULL with
 * SST_EINVAL (an operation missing, @c size 0), SST_ENOMEM. On failure
 * @p self is not destroyed.
 */
SST_NODISCARD SST_API sst_queue *sst_queue_new(const sst_queue_ops *ops, void *self,
                                               sst_error *err);
/** Adds a reference; returns @p q. */
SST_API sst_queue *sst_queue_ref(sst_queue *q);
/** Drops a reference; the last one destroys the implementation. NULL is a no-op. */
SST_API void sst_queue_free(sst_queue *q);

/*
 * The calls below check their arguments (SST_EINVAL naming the bad one: a
 * NULL queue, run or query, a NULL or empty id, owner or action, kwargs or
 * metadata that is not an object, an unknown flag or status, a NULL
 * callback, a lease_ms below 1, a status that is not final for finish) and
 * call the implementation; see sst_queue_ops.
 */
SST_NODISCARD SST_API sst_code sst_queue_enqueue(sst_queue *q, const sst_queued_run *run,
                                                 unsigned flags, sst_error *err);
SST_NODISCARD SST_API sst_code sst_queue_get(sst_queue *q, const char *run_id,
                                             sst_queued_run_fn each, void *user_data,
                                             sst_error *err);
SST_NODISCARD SST_API sst_code sst_queue_list(sst_queue *q, const sst_queue_query *query,
                                              sst_queued_run_fn each, void *user_data,
                                              sst_error *err);
SST_NODISCARD SST_API sst_code sst_queue_remove(sst_queue *q, const char *run_id, sst_error *err);
SST_NODISCARD SST_API sst_code sst_queue_remove_thread(sst_queue *q, const char *thread_id,
                                                       sst_error *err);
SST_NODISCARD SST_API sst_code sst_queue_claim(sst_queue *q, const char *owner, int64_t now,
                                               int64_t lease_ms, sst_queued_run_fn each,
                                               void *user_data, sst_error *err);
SST_NODISCARD SST_API sst_code sst_queue_renew(sst_queue *q, const char *run_id, uint64_t token,
                                               int64_t now, int64_t lease_ms, char **cancel,
                                               sst_error *err);
SST_NODISCARD SST_API sst_code sst_queue_finish(sst_queue *q, const char *run_id, uint64_t token,
                                                sst_queue_status status, int64_t now,
                                                sst_error *err);
SST_NODISCARD SST_API sst_code sst_queue_release(sst_queue *q, const char *run_id, uint64_t token,
                                                 int64_t now, sst_error *err);
SST_NODISCARD SST_API sst_code sst_queue_cancel(sst_queue *q, const char *run_id,
                                                const char *action, int64_t now,
                                                sst_queue_status *status, sst_error *err);

/**
 * A run as a value: {"run_id", "thread_id", "assistant_id", "status",
 * "kwargs", "metadata", "multitask_strategy", "created_at", "updated_at",
 * "run_after", "attempt", "cancel", "owner", "lease_expires"} (times in ms,
 * absent strings null, NULL kwargs or metadata {}; the token is left out).
 * @return new object; NULL with SST_EINVAL (a NULL run), SST_ENOMEM.
 */
SST_NODISCARD SST_API sst_value *sst_queued_run_value(const sst_queued_run *run, sst_error *err);

/* ---- the provided backends ---------------------------------------------- */

/**
 * Opens (or creates) the run queue in the SQLite database at @p path (the
 * checkpoint database's file, or its own; ":memory:" for one process): its
 * own tables (sst_runs) beside the savers' and the store's, WAL journal, a
 * schema version (its own, in sst_queue_meta) refused when newer than this
 * build. Expired leases are those past their time; a lease whose owner is a
 * process identity of this host, boot and PID namespace, "HOST BOOT-ID
 * PID-NAMESPACE PID START-TIME" optionally followed by " " and anything (the
 * server passes "IDENTITY wN" for its worker N), expires at once when that
 * process is gone (or its pid was reused), so a server restarted after a
 * kill -9 takes its runs back without waiting. Other owner strings are free
 * text and wait for expiry. One connection per queue, behind a mutex; several
 * queues (and processes) may share a file: claims are made in IMMEDIATE
 * transactions, so a run is never claimed twice.
 * @return new queue; NULL with SST_EIO naming the file and the problem (it
 *         cannot be opened, it is not SQLite, it is another application's
 *         database, its queue schema is newer, its queue tables are damaged;
 *         SST_EUNAVAILABLE when another process kept it locked); nothing is
 *         written to such a file.
 */
SST_NODISCARD SST_API sst_queue *sst_sqlite_queue_open(const char *path, sst_error *err);

/**
 * sst_sqlite_queue_open on a connection shared with other backends of this
 * process (include/superstep/sqlite.h), e.g. the saver and the store of
 * `superstep serve`. The queue holds a reference to @p db until it is freed.
 * @return new queue; NULL as sst_sqlite_queue_open, or SST_EINVAL for a NULL @p db.
 */
SST_NODISCARD SST_API sst_queue *sst_sqlite_queue_open_db(sst_sqlite_db *db, sst_error *err);

/**
 * Opens (or creates) the run queue in a PostgreSQL database (version 12 or
 * newer), on a pool of its own: the queue of `superstep serve` and
 * `superstep worker` processes on many machines. Its tables (sst_runs and the token sequence
 * sst_run_tokens, beside the saver's and the store's) go in the schema the
 * connection's search_path names, under a schema version of its own
 * (component "queue" of sst_schema) that is migrated on open and refused
 * when newer than this build. Every invariant of the contract holds across
 * processes, enforced by PostgreSQL: a claim is one short transaction that
 * picks the oldest runnable run FOR UPDATE SKIP LOCKED under its thread's
 * advisory lock (one live run per thread, in enqueue order); the row is not
 * locked while the run runs, the lease is. Tokens come from a sequence
 * (unique across processes). Expired leases are those past their time; a
 * lease whose owner is a process identity of this host that is gone
 * expires at once, as in sst_sqlite_queue_open; owners on other machines
 * wait for expiry. Every change is a transaction retried whole on a new
 * connection when the connection is lost (postgres.h), committed with
 * synchronous_commit on. Enqueue, release, finish, cancel and remove NOTIFY
 * the schema's channel (see sst_postgres_queue_wait).
 * @param url  as sst_pg_open: a postgresql:// URL or a libpq keyword string;
 *             NULL or "" for libpq's PG* environment variables.
 * @return new queue; NULL with SST_EUNAVAILABLE (the server cannot be
 *         reached), SST_EINVAL (a malformed URL), SST_ENOTSUP (its queue
 *         schema is newer than this build), SST_EIO (the tables cannot be
 *         made or read), SST_ENOMEM; messages name the database.
 */
SST_NODISCARD SST_API sst_queue *sst_postgres_queue_open(const char *url, sst_error *err);

/**
 * sst_postgres_queue_open on a pool shared with the saver and the store of
 * this process (include/superstep/postgres.h). The queue holds a reference
 * to @p pg until it is freed.
 * @return new queue; NULL as sst_postgres_queue_open, or SST_EINVAL for a NULL @p pg.
 */
SST_NODISCARD SST_API sst_queue *sst_postgres_queue_open_pg(sst_pg *pg, sst_error *err);

/**
 * Waits until a run may have become claimable (a run was enqueued, released,
 * finished, cancelled or removed anywhere, heard through PostgreSQL's
 * LISTEN/NOTIFY on a connection of the queue's own, outside the pool) or
 * @p timeout_ms passes. For idle workers, so that they do not poll: claim
 * until SST_ENOTFOUND, then wait, then claim again. A wake-up is a hint, not
 * a promise (another worker may claim the run first), and an expired lease
 * notifies nobody: keep the timeout to a few seconds. The first call, and the
 * first after the listening connection was lost (it is made again then, and
 * retried as the pool retries a lost server), returns SST_OK at once, as
 * notifications sent before it listened were not heard.
 * @param timeout_ms  0 or more; 0 only looks at what arrived already.
 * @return SST_OK when woken; SST_ETIMEOUT; SST_EINVAL (a NULL queue, a
 *         queue that is not a PostgreSQL queue, a negative timeout);
 *         SST_EUNAVAILABLE when the server stayed away.
 * Thread-safety: any number of threads may wait on one queue at once; they
 * share its listening connection and are all woken by what it hears.
 */
SST_NODISCARD SST_API sst_code sst_postgres_queue_wait(sst_queue *q, int timeout_ms,
                                                       sst_error *err);

#ifdef __cplusplus
}
#endif
#endif /* SUPERSTEP_QUEUE_H */
