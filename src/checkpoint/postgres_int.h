/* SPDX-License-Identifier: MIT */
/*
 * The PostgreSQL saver's private parts, shared by its files:
 *   postgres.c          opening, the tables and their versions, shared helpers
 *   postgres_records.c  checkpoints, pending writes, blobs, listing
 *   postgres_threads.c  threads: metadata, search, copy, delete, prune, releasing blobs
 *   postgres_lease.c    the busy-thread lease
 * docs/checkpoints.md ("The PostgreSQL saver") describes the tables, the
 * fencing and the lease across processes.
 */
#ifndef SUPERSTEP_POSTGRES_INT_H
#define SUPERSTEP_POSTGRES_INT_H

#include <pthread.h>

#include "checkpoint_int.h"
#include "common/pg.h"

/* The server's clock in ms since the epoch: leases expire on it, so that processes on
 * machines whose clocks differ agree on when a lease is over. */
#define PGS_NOW_MS "(extract(epoch FROM clock_timestamp()) * 1000)::bigint"

/* Where a lease of this saver is: its row being taken, held, or being given back. */
enum { PGS_TAKING, PGS_HELD, PGS_GIVING };

/* A lease this saver holds (or is taking or giving back), renewed by the commits made
 * under it. One entry per thread: the entry stands for the row while its transaction
 * runs, so a lock and an unlock of one thread never overlap, and no mutex is held
 * across a transaction (other threads' locks and puts go on meanwhile). */
typedef struct pgs_lease {
    char *thread;      /* owned */
    int state;         /* PGS_* */
    uint64_t renew_at; /* ms since the epoch: renew at the first commit after this */
    struct pgs_lease *next;
} pgs_lease;

typedef struct pg_saver {
    sst_pg *pg; /* a reference: its own pool, or one shared with a store and a queue */
    /* Appended to this process's identity in the lease rows it writes, so that two
     * savers of one process (two pools, as two processes) hold leases apart. */
    char token[16];
    int64_t lease_ms;        /* how long a lease lasts without a commit */
    bool sync_all;           /* every write with synchronous_commit on (opts) */
    size_t max_record_bytes; /* the largest payload written */
    pthread_mutex_t mu;      /* guards leases (this process's bookkeeping only) */
    pthread_cond_t cv;       /* signalled when an entry of leases leaves PGS_TAKING/GIVING */
    pgs_lease *leases;       /* protected by mu */
} pg_saver;

/*
 * A one-dimensional array in PostgreSQL's binary format (array_recv), to send
 * as one binary parameter ($n::text[] or $n::bytea[]): @p n elements of type
 * @p elem_oid (25 text, 17 bytea), element i being @p vals[i] of @p lens[i]
 * bytes (NULL: SQL NULL). *out is new (sst__free); SST_ELIMIT when over the
 * 1 GiB a parameter may hold, SST_ENOMEM.
 */
sst_code sst__pgs_array(uint32_t elem_oid, size_t n, const char *const *vals, const size_t *lens,
                        char **out, size_t *out_len, sst_error *err);

/*
 * A read of one statement for sst__pg_read(pg, sst__pgs_read_tx, &job, err): the
 * result is kept in @c res (PQclear it after, also on failure) so that callbacks run
 * after the connection went back to the pool, and may take their time.
 */
typedef struct sst__pgs_read_job {
    const char *name, *sql, *what; /* statement name, SQL, what it does (for messages) */
    sst__pg_params p;
    PGresult *res; /* OUT: the last attempt's result */
} sst__pgs_read_job;
sst_code sst__pgs_read_tx(sst__pg_conn *c, void *user, sst_error *err);

/* Record operations (postgres_records.c). */
sst_code sst__pgs_put(void *self, const sst_checkpoint *rec, bool sync, sst_error *err);
sst_code sst__pgs_put_writes(void *self, const char *thread, const char *ns, const char *id,
                             const sst_payload *writes, sst_thread_status status, bool sync,
                             sst_error *err);
sst_code sst__pgs_get(void *self, const char *thread, const char *ns, const char *id,
                      sst_checkpoint_fn each, void *user_data, sst_error *err);
sst_code sst__pgs_list(void *self, const sst_checkpoint_query *q, sst_checkpoint_fn each,
                       void *user_data, sst_error *err);

/* Threads (postgres_threads.c). */
/* The statement (and its name, when @p name is not NULL) a search @p q runs: $1 limit,
 * $2 offset and, with an owner, $3 the owner (tests EXPLAIN it). */
const char *sst__pgs_threads_sql(const sst_thread_query *q, const char **name);
sst_code sst__pgs_threads(void *self, const sst_thread_query *q, sst_thread_fn each,
                          void *user_data, sst_error *err);
sst_code sst__pgs_thread_get(void *self, const char *thread, sst_thread_fn each, void *user_data,
                             sst_error *err);
sst_code sst__pgs_thread_put(void *self, const char *thread, const sst_payload *metadata,
                             sst_error *err);
sst_code sst__pgs_copy_thread(void *self, const char *from, const char *to, sst_error *err);
sst_code sst__pgs_delete_thread(void *self, const char *thread, sst_error *err);
sst_code sst__pgs_prune(void *self, const char *thread, size_t keep, size_t *removed,
                        sst_error *err);

/* The lease (postgres_lease.c). */
sst_code sst__pgs_lock(void *self, const char *thread, bool wait, sst_error *err);
void sst__pgs_unlock(void *self, const char *thread);
/* This saver's owner string for lease rows: this process's identity and s->token. */
void sst__pgs_owner(const pg_saver *s, char out[SST__OWNER_MAX]);
/* Whether this saver holds a lease on @p thread (*held), and whether a commit on it
 * should renew it (the return: a third of its time has passed). */
bool sst__pgs_renew_due(pg_saver *s, const char *thread, bool *held);
/* After a commit that renewed the lease on @p thread: the next renewal is due later. */
void sst__pgs_renewed(pg_saver *s, const char *thread);
void sst__pgs_leases_free(pg_saver *s);
/*
 * The lease taken and given back inside a put's transaction (SST_PUT_TAKE_LOCK,
 * SST_PUT_GIVE_LOCK), so that it commits with the record. take_begin enters this
 * saver's entry for @p thread (being taken: this saver's other calls on the thread
 * get SST_EBUSY or wait, as during a lock), SST_EBUSY when it has one; the put's
 * statement takes a free or expired row; when it found a live one (which its INSERT
 * locked), take_busy reads the holder on @p c, in the put's transaction, and takes the
 * row over from a holder gone (or from this saver), else SST_EBUSY naming it; take_end
 * makes the entry held when the put committed (@p ok), else drops it. give_begin marks
 * a held entry being given back (false: this saver holds no lease on @p thread, and
 * the put gives nothing back); give_tx deletes the row on @p c as the transaction's
 * last statement; give_end drops the entry when the put committed, else holds it again.
 */
/* A put held open for the next (SST_PUT_WITH_NEXT, postgres_records.c): commits it now
 * when the calling OS thread holds one of @p s for @p thread (its unlock). */
void sst__pgs_hold_settle(pg_saver *s, const char *thread);
sst_code sst__pgs_take_begin(pg_saver *s, const char *thread, sst_error *err);
sst_code sst__pgs_take_busy(sst__pg_conn *c, pg_saver *s, const char *thread, sst_error *err);
void sst__pgs_take_end(pg_saver *s, const char *thread, bool ok);
bool sst__pgs_give_begin(pg_saver *s, const char *thread);
sst_code sst__pgs_give_tx(sst__pg_conn *c, pg_saver *s, const char *thread, sst_error *err);
void sst__pgs_give_end(pg_saver *s, const char *thread, bool ok);

#endif /* SUPERSTEP_POSTGRES_INT_H */
