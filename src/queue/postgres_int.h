/* SPDX-License-Identifier: MIT */
/*
 * The PostgreSQL run queue's private parts, shared by its files:
 *   postgres.c         opening (the pool, the schema, the channel), rows and errors
 *   postgres_ops.c     enqueue, get, list, remove, remove_thread, cancel
 *   postgres_claim.c   claim, renew, finish, release (the leases and their tokens)
 *   postgres_listen.c  sst_postgres_queue_wait: LISTEN on a connection of its own
 *
 * Tables (in the schema the pool's search_path names; docs/queue.md):
 *   sst_runs(thread_id, seq, run_id, assistant_id, status, kwargs, metadata,
 *            multitask_strategy, created_at, updated_at, run_after, attempt,
 *            cancel, owner, lease_expires, token, done_token)  one row per run,
 *            keyed by (thread_id, seq); seq is the enqueue order; kwargs and
 *            metadata are the JSON text's bytes (bytea)
 *   sst_run_tokens  the sequence the fencing tokens come from
 *   sst_schema      the component versions (common/pg.c), 'queue' among them
 *
 * Every invariant between processes is kept by PostgreSQL inside the
 * transactions (row locks, advisory locks, unique keys, conditional
 * UPDATEs), never by a lock of this process: the only mutex here guards the
 * listening connection of sst_postgres_queue_wait.
 */
#ifndef SUPERSTEP_QUEUE_POSTGRES_INT_H
#define SUPERSTEP_QUEUE_POSTGRES_INT_H

#include <pthread.h>

#include "common.h"
#include "common/pg.h"
#include "superstep/queue.h"

/* The queue tables' schema version (sst_schema 'queue'): the number of migration steps. */
#define SST__PQ_SCHEMA_VERSION 1
/* The largest kwargs or metadata text stored (as the SQLite queue). */
#define SST__PQ_MAX_JSON ((size_t)16 << 20)

/* The columns every run read returns, in this order (the PC_ names below). */
#define PQ_RUN_COLS                                                                                \
    "run_id, thread_id, assistant_id, status, kwargs, metadata, multitask_strategy, created_at, "  \
    "updated_at, run_after, attempt, cancel, owner, lease_expires, token"

enum {
    PC_RUN_ID,
    PC_THREAD_ID,
    PC_ASSISTANT_ID,
    PC_STATUS,
    PC_KWARGS,
    PC_METADATA,
    PC_STRATEGY,
    PC_CREATED_AT,
    PC_UPDATED_AT,
    PC_RUN_AFTER,
    PC_ATTEMPT,
    PC_CANCEL,
    PC_OWNER,
    PC_LEASE_EXPIRES,
    PC_TOKEN
};

typedef struct pg_queue {
    struct sst_pg *pg; /* a reference: own, or shared with a saver and a store */
    /* The NOTIFY channel of this schema's queue: "sst_queue_" and 16 hex digits of a
     * hash of current_schema(), so queues in other schemas of the database (the
     * tests') do not wake each other. */
    char channel[32];
    /* This queue's own name (a UUIDv4): the payload of its enqueues' notifications, so
     * that sst__postgres_queue_wait_others can tell them from other queues' (another
     * process's, another machine's). */
    char id[37];
    pthread_mutex_t mu; /* the fields below */
    pthread_cond_t cv;  /* signalled when a poll ends (CLOCK_MONOTONIC) */
    /* The LISTEN connection (sst__pg_connect_raw), NULL until the first wait and after
     * it was lost. Used without mu by the one waiter that set `polling`. */
    PGconn *listen;
    bool polling;          /* under mu: a waiter is polling `listen` */
    uint64_t wakes;        /* under mu: wake-ups heard so far (notifications, reconnections) */
    uint64_t wakes_others; /* under mu: those not only of this queue's own enqueues */
} pg_queue;

/* The database's name for messages (sst_pg_name). */
const char *sst__pq_name(const pg_queue *s);

/*
 * Calls @p each with row @p row of @p r (PQ_RUN_COLS), parsing its JSON; call it
 * after the connection went back to the pool (holding nothing). *more (if not
 * NULL) gets what @p each returned. SST_EIO naming the run when its stored
 * JSON does not parse or its status is unknown; SST_ENOMEM.
 */
sst_code sst__pq_emit(const pg_queue *s, const PGresult *r, int row, sst_queued_run_fn each,
                      void *user_data, bool *more, sst_error *err);

/* The operations (postgres_ops.c, postgres_claim.c). */
sst_code sst__pq_enqueue(void *self, const sst_queued_run *run, unsigned flags, sst_error *err);
sst_code sst__pq_get(void *self, const char *run_id, sst_queued_run_fn each, void *user_data,
                     sst_error *err);
sst_code sst__pq_list(void *self, const sst_queue_query *q, sst_queued_run_fn each, void *user_data,
                      sst_error *err);
sst_code sst__pq_remove(void *self, const char *run_id, sst_error *err);
sst_code sst__pq_remove_thread(void *self, const char *thread_id, sst_error *err);
sst_code sst__pq_cancel(void *self, const char *run_id, const char *action, int64_t now,
                        sst_queue_status *status, sst_error *err);
sst_code sst__pq_claim(void *self, const char *owner, int64_t now, int64_t lease_ms,
                       sst_queued_run_fn each, void *user_data, sst_error *err);
sst_code sst__pq_renew(void *self, const char *run_id, uint64_t token, int64_t now,
                       int64_t lease_ms, char **cancel, sst_error *err);
sst_code sst__pq_finish(void *self, const char *run_id, uint64_t token, sst_queue_status status,
                        int64_t now, sst_error *err);
sst_code sst__pq_release(void *self, const char *run_id, uint64_t token, int64_t now,
                         sst_error *err);
/* Whether a claim at @p now may find a run (k_probe, postgres_claim.c): one statement
 * outside any transaction. *claimable is true on a failure too (the claim then tells). */
sst_code sst__pq_probe(pg_queue *s, int64_t now, bool *claimable, sst_error *err);

/* The waiting side (postgres_listen.c): sst_postgres_queue_wait on @p s (@p others:
 * sst__postgres_queue_wait_others). */
sst_code sst__pq_wait(pg_queue *s, int timeout_ms, bool others, sst_error *err);
/* Closes the listening connection (destroy: no waiter is left). */
void sst__pq_listen_close(pg_queue *s);

#endif /* SUPERSTEP_QUEUE_POSTGRES_INT_H */
