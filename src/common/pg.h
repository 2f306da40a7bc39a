/* SPDX-License-Identifier: MIT */
/*
 * The PostgreSQL backends' shared internals (pg.c): the connection pool of
 * include/superstep/postgres.h, statements prepared once per connection,
 * transactions retried whole when the connection is lost, typed parameters
 * and result getters, and schema versions with migrations.
 *
 * Results are asked for in binary format (see sst__pg_exec): read them with
 * the getters below, which know PostgreSQL's binary encodings of the types
 * the backends use (bool, int2/4/8, text, bytea, and jsonb as text).
 */
#ifndef SUPERSTEP_COMMON_PG_H
#define SUPERSTEP_COMMON_PG_H

#include <libpq-fe.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common.h"
#include "superstep/postgres.h"

/* One connection of a pool, used by one thread at a time. */
typedef struct sst__pg_conn {
    PGconn *conn;
    struct sst_pg *pg;
    sst__strmap prepared; /* statement names prepared on this connection */
    bool broken;          /* lost: closed instead of going back to the pool */
    char sqlstate[6];     /* of the last failed statement, "" when none */
    /* Set while sst__pg_tx re-runs a transaction whose COMMIT was sent but whose
     * answer was lost: the commit may have happened, so a step that would fail on
     * finding its own earlier write (a duplicate key) should take it as done. */
    bool after_lost_commit;
    /* Frame statements of the open transaction (BEGIN, SET LOCAL, SAVEPOINT: constants)
     * not sent yet: they go with the next statement, in one round trip (libpq's pipeline
     * mode), and are never sent when no statement follows (pg.c, "round trips"). */
    const char *pending[4];
    int n_pending;
    bool solo;        /* the open transaction runs one sst__pg_tx alone (sst__pg_exec_last) */
    bool committed;   /* ... and it was committed with its last statement */
    bool commit_sent; /* ... or that COMMIT was sent (lost after: it may have applied) */
    /* The running job of a group or batch sent its one statement without its savepoint
     * (sst__pg_exec_last): should that statement fail, the transaction is aborted whole. */
    bool unguarded;
    struct sst__pg_conn *next; /* in the pool's idle list */
} sst__pg_conn;

/* Takes a connection (making one if the pool has room, else waiting for one; a
 * refused connection is retried with backoff for the pool's retry_ms).
 * NULL with SST_EUNAVAILABLE naming the server, SST_ENOMEM. */
sst__pg_conn *sst__pg_get(struct sst_pg *pg, sst_error *err);
/* Gives @p c back (a broken one is closed). NULL is a no-op. */
void sst__pg_put(sst__pg_conn *c);

/* Statement parameters: text, or binary for bytes. */
#define SST__PG_MAX_PARAMS 24
typedef struct sst__pg_params {
    int n;
    const char *val[SST__PG_MAX_PARAMS];
    int len[SST__PG_MAX_PARAMS];
    int fmt[SST__PG_MAX_PARAMS];
    char num[SST__PG_MAX_PARAMS][24]; /* the text of numbers */
} sst__pg_params;

void sst__pg_params_init(sst__pg_params *p);
/* Appends a text parameter (NULL: SQL NULL). */
void sst__pg_text(sst__pg_params *p, const char *s);
/* Appends text of @p len bytes (no NUL needed; sent in binary format, which for
 * text is the bytes: not for a jsonb parameter, whose binary format differs;
 * write `$1::text::jsonb` there). NULL: SQL NULL. */
void sst__pg_textn(sst__pg_params *p, const char *s, size_t len);
/* Appends bytes (bytea, sent binary); NULL: SQL NULL. */
void sst__pg_bytes(sst__pg_params *p, const void *data, size_t len);
void sst__pg_i64(sst__pg_params *p, int64_t v);
void sst__pg_bool(sst__pg_params *p, bool v);

/*
 * Runs statement @p sql, prepared on this connection under @p name the first
 * time (a name is one SQL text for the life of the process: use a constant).
 * @p p may be NULL (no parameters). @return the result (PGRES_TUPLES_OK or
 * PGRES_COMMAND_OK), freed with PQclear; NULL with @p err filled: SST_ECONFLICT
 * for a unique violation (23505), SST_EUNAVAILABLE for a lost connection (the
 * connection is marked broken), SST_EBUSY for a lock not available (55P03),
 * SST_EIO otherwise; the message starts with @p what and holds the server's.
 */
PGresult *sst__pg_exec(sst__pg_conn *c, const char *name, const char *sql, const sst__pg_params *p,
                       const char *what, sst_error *err);
/* sst__pg_exec without a result: SST_OK, or its failure. */
sst_code sst__pg_run(sst__pg_conn *c, const char *name, const char *sql, const sst__pg_params *p,
                     const char *what, sst_error *err);
/*
 * sst__pg_exec for the last statement of an sst__pg_tx function: when the transaction
 * holds that function alone (no group formed, no batch, no commit hook set), its COMMIT
 * goes in the same round trip, and a result means the statement's writes are
 * committed. So only for a statement after which the function sends nothing more, and
 * whose result never makes it fail with writes of its own to undo (a statement that
 * writes nothing when it answers "no"). In a group or a batch, when it is the
 * function's only statement, it goes without the function's SAVEPOINT (nothing of the
 * function to undo on a "no"; an error aborts the transaction, which is then rolled
 * back and its other functions run again, or fails the batch). Elsewhere the same as
 * sst__pg_exec.
 */
PGresult *sst__pg_exec_last(sst__pg_conn *c, const char *name, const char *sql,
                            const sst__pg_params *p, const char *what, sst_error *err);
/* sst__pg_exec_last without a result. */
sst_code sst__pg_run_last(sst__pg_conn *c, const char *name, const char *sql,
                          const sst__pg_params *p, const char *what, sst_error *err);
/* Runs SQL text without parameters or preparing (DDL, SET, several statements). */
sst_code sst__pg_simple(sst__pg_conn *c, const char *sql, const char *what, sst_error *err);

/*
 * Runs fn in one transaction (BEGIN .. COMMIT, or ROLLBACK when fn fails) on a
 * connection of the pool. When the connection is lost (or the transaction hits
 * a serialization failure or a deadlock) the whole transaction is run again on
 * a new connection, with backoff, until the pool's retry_ms has passed; fn
 * must therefore keep no state across calls but what it can redo. @p sync
 * false commits with synchronous_commit off (a server crash may lose the last
 * few hundred milliseconds of such commits, never corrupt them).
 *
 * Group commit: the transactions of the pool's threads go through one committer
 * (pg.c, "group commit"). When none is being committed, fn runs at once, alone;
 * while one is, the transactions that come meanwhile are run together next, each
 * in a savepoint, and committed with one COMMIT (one flush). fn may therefore run
 * on another thread than the caller's, inside a transaction that holds other
 * callers' savepoints: it must not depend on thread-local state, and its failure
 * rolls back its own statements only. The call returns once the COMMIT that holds
 * fn's statements is done (or fn failed).
 *
 * Inside a batch the calling thread opened on @p pg (sst__pg_batch_begin) fn runs
 * in a savepoint of the batch's transaction instead, and is committed with it.
 */
typedef sst_code (*sst__pg_tx_fn)(sst__pg_conn *c, void *user, sst_error *err);
sst_code sst__pg_tx(struct sst_pg *pg, bool sync, sst__pg_tx_fn fn, void *user, sst_error *err);
/* The same for reads: one statement-level snapshot per statement, no BEGIN. Retried
 * like sst__pg_tx. Inside a batch of the calling thread: on the batch's connection. */
sst_code sst__pg_read(struct sst_pg *pg, sst__pg_tx_fn fn, void *user, sst_error *err);

/*
 * A batch: one transaction of the calling thread, on a connection it holds, that
 * every sst__pg_tx and sst__pg_read of the thread on @p pg joins until
 * sst__pg_batch_commit (as sst_sqlite_db_begin does for SQLite): a claim and the
 * thread lease it takes, or a run's finish and the lease it gives back, commit
 * together. Nested begins count; the outermost commit commits. A transaction
 * inside it that fails rolls back its own savepoint only; one that lost the
 * connection fails the batch (its commit returns SST_EUNAVAILABLE, nothing of
 * it was committed) and is not retried. Commits with synchronous_commit on when
 * any transaction in it asked for sync.
 */
sst_code sst__pg_batch_begin(struct sst_pg *pg, sst_error *err);
/* Ends the batch: commits when @p ok, else rolls back. SST_OK when the calling thread
 * has no batch on @p pg open (handed over and committed already). */
sst_code sst__pg_batch_commit(struct sst_pg *pg, bool ok, sst_error *err);
/* The next sst__pg_tx of the calling thread on @p pg that succeeds commits the open
 * batch with it (a claim's transaction then ends with the run's first checkpoint:
 * one flush for both). No-op without an open batch. */
void sst__pg_batch_hand_over(struct sst_pg *pg);
/* The next transaction of the calling thread's handed-over batch on @p pg joins it without
 * committing it: the one after that commits it (a run's input checkpoint, whose step runs
 * no node, then commits with its first superstep's, and with the claim). No-op without a
 * handed-over batch. */
void sst__pg_batch_hand_over_past(struct sst_pg *pg);
/* Calls @p fn with @p ud on the calling thread once its open batch on @p pg has
 * committed (not when it is rolled back or lost). A handed-over batch commits inside
 * another transaction's call: who must not act on the batch's writes before they are
 * committed (a claim other threads see as held) learns it here. No-op without a batch. */
void sst__pg_batch_on_commit(struct sst_pg *pg, void (*fn)(void *ud), void *ud);
/* Whether the calling thread has a batch open on @p pg. */
bool sst__pg_batch_open(const struct sst_pg *pg);

/*
 * Keeping a run's last checkpoint for its finish (the server's worker): while armed on the
 * calling thread for @p key (sst__pg_keep; a NULL key disarms; borrowed until then), the
 * thread's next sst__pg_tx_keep for the same key (the run's thread id) runs its
 * transaction in the thread's batch (begun for it when none is open, its BEGIN sent with
 * its first statement; a claim handed over to it joins instead of committing) and leaves
 * the batch open, uncommitted: its owner commits it with sst__pg_batch_commit, with
 * whatever it adds (the run's finish: one flush for both). Once per arming. Unarmed, for
 * another key, or inside another batch, it is sst__pg_tx. Who keeps a transaction open
 * must commit it before anything waits on its writes (the next superstep:
 * sst__pg_batch_kept tells).
 */
void sst__pg_keep(struct sst_pg *pg, const char *key);
sst_code sst__pg_tx_keep(struct sst_pg *pg, const char *key, bool sync, sst__pg_tx_fn fn,
                         void *user, sst_error *err);
/* The calling thread's open batch on @p pg commits with its next sst__pg_exec_last
 * statement, in the same round trip (for the batch's last statement: the run's finish),
 * when a transaction in it asked for a flush (else its commit goes as usual); the
 * outermost sst__pg_batch_commit then only settles it. No-op without a batch. */
void sst__pg_batch_commit_along(struct sst_pg *pg);
/* Whether the calling thread's open batch on @p pg holds a kept transaction. */
bool sst__pg_batch_kept(const struct sst_pg *pg);

/* Tests only: @p fn (NULL: none) is called with @p ud before each COMMIT the pool
 * sends for sst__pg_tx (on the committing thread), its statements run and its locks
 * held: a hook that blocks there is a process stopped mid-transaction, and the pool's
 * next transactions gather behind it. Set it while no transaction of the pool runs. */
void sst__pg_set_commit_hook(struct sst_pg *pg, void (*fn)(void *ud), void *ud);

/* What a pool has committed: COMMITs sent with synchronous_commit on (each a flush
 * the caller waited for) and off, and the transactions (sst__pg_tx calls and
 * batches) those COMMITs held; and the statements it sent (frames included: BEGIN,
 * SAVEPOINT, COMMIT; a text of several statements counts one). Tests and benchmarks
 * read them. */
typedef struct sst__pg_stats {
    uint64_t flushed, unflushed, jobs, statements;
} sst__pg_stats;
void sst__pg_commit_stats(struct sst_pg *pg, sst__pg_stats *out);
/* Tests only: waits until at least @p at_least transactions wait for the committer
 * (queued behind a COMMIT under way); returns how many do. */
size_t sst__pg_group_waiting(struct sst_pg *pg, size_t at_least);

/*
 * Brings component @p name's tables to version @p n_steps: steps[i] is the SQL
 * that takes version i to i+1 (run with sst__pg_simple). The versions live in
 * table sst_schema(component, version), and the migration holds an advisory
 * lock, so processes starting at once migrate once. A version above n_steps
 * (a newer build wrote it) fails with SST_ENOTSUP naming both versions, and
 * nothing is changed.
 */
sst_code sst__pg_schema(struct sst_pg *pg, const char *name, const char *const *steps, int n_steps,
                        sst_error *err);

/* A new connection outside the pool (for LISTEN), connected like the pool's
 * (retried for retry_ms). Close it with PQfinish. NULL with SST_EUNAVAILABLE. */
PGconn *sst__pg_connect_raw(struct sst_pg *pg, sst_error *err);

/* ---- results (binary format) ---- */

bool sst__pg_null(const PGresult *r, int row, int col);
/* int2, int4, int8 or bool as an integer (0 for NULL). */
int64_t sst__pg_int(const PGresult *r, int row, int col);
/* text, varchar, jsonb (its version byte skipped) or bytea: the bytes, and their
 * length in *len (if not NULL). NULL for SQL NULL. Valid while @p r lives. */
const char *sst__pg_bytes_at(const PGresult *r, int row, int col, size_t *len);
/* As sst__pg_bytes_at, copied into a new NUL-terminated string (sst__free).
 * NULL for SQL NULL or out of memory (tell them apart with sst__pg_null). */
char *sst__pg_strdup(const PGresult *r, int row, int col);

#endif /* SUPERSTEP_COMMON_PG_H */
