/* SPDX-License-Identifier: MIT */
/**
 * @file postgres.h
 * @brief A pool of connections to one PostgreSQL database, shared by the
 *        PostgreSQL saver, store and run queue of a process.
 *
 * Many `superstep serve` and `superstep worker` processes, on many machines,
 * coordinate through one PostgreSQL database and nothing else (DESIGN.md,
 * "Serving and scale-out"). In each process the PostgreSQL backends
 * (sst_postgres_saver_open, sst_postgres_store_new, sst_postgres_queue_open)
 * draw their connections from one sst_pg: a bounded pool, each connection
 * with its own prepared statements.
 *
 * Where the database is: a URL (`postgresql://user:pass@host:port/db?...`,
 * also `postgres://`) or a libpq keyword string (`host=... dbname=...`); an
 * empty or NULL one takes everything from libpq's environment variables
 * (PGHOST, PGPORT, PGUSER, PGDATABASE, PGPASSWORD, ...). A URL's
 * `options=-csearch_path%3DNAME` puts the tables in schema NAME (the tests
 * give each case a schema of its own).
 *
 * A lost connection (the server restarted, a network cut) is not an error
 * at once: the backends run every change in a transaction that is retried
 * whole on a new connection, with backoff, for up to @c retry_ms; only
 * when the server stays away does a call fail, with SST_EUNAVAILABLE
 * naming the server and libpq's reason.
 *
 * Thread-safety: the handle may be used from any thread; each connection
 * is used by one thread at a time.
 */
#ifndef SUPERSTEP_POSTGRES_H
#define SUPERSTEP_POSTGRES_H

#include <stdbool.h>
#include <stddef.h>

#include "superstep/error.h"
#include "superstep/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A pool of connections to one PostgreSQL database (reference counted). */
typedef struct sst_pg sst_pg;

/** Pool options; fill with sst_pg_opts_init. */
typedef struct sst_pg_opts {
    int pool_size;          /* connections at most, kept open once made; default 8 */
    int connect_timeout_ms; /* one connection attempt; default 5000 */
    int retry_ms;           /* how long a lost server is retried; default 30000 (0: never) */
    /* How long the server keeps a transaction open while this process sends
     * nothing (PostgreSQL's idle_in_transaction_session_timeout, set on every
     * connection): a process stopped mid-transaction (SIGSTOP, a stall, a
     * partition) would otherwise hold its row and advisory locks for as long
     * as it stays stopped, and no lease could be taken over. The server then
     * ends that session, its transaction rolls back and its locks go; the
     * process, woken, retries the transaction on a new connection, where its
     * lease checks refuse what it no longer holds. Keep it at most the
     * shortest lease the pool's users hold (the server and workers set it to
     * --lease). Default 30000; 0 leaves the server's setting. */
    int idle_tx_timeout_ms;
} sst_pg_opts;

SST_API void sst_pg_opts_init(sst_pg_opts *o);

/**
 * True when @p db names a PostgreSQL database: it starts with
 * "postgresql://" or "postgres://" (what `--db` accepts for PostgreSQL).
 */
SST_API bool sst_pg_is_url(const char *db);

/**
 * Opens a pool on the database @p url (see the file comment) and makes its
 * first connection, so a wrong address fails here.
 * @param url   NULL or "" for libpq's environment variables.
 * @param opts  NULL for the defaults.
 * @return a handle holding one reference; NULL with SST_EUNAVAILABLE (the
 *         server cannot be reached or refused the connection: the message
 *         names the server and libpq's reason), SST_EINVAL (a malformed URL,
 *         a bad option), SST_ENOMEM.
 */
SST_NODISCARD SST_API sst_pg *sst_pg_open(const char *url, const sst_pg_opts *opts, sst_error *err);

/** Adds a reference; returns @p pg. */
SST_API sst_pg *sst_pg_ref(sst_pg *pg);

/** Drops one reference; the last one closes every connection. NULL is a no-op. */
SST_API void sst_pg_release(sst_pg *pg);

/**
 * The database for messages: "postgresql://USER@HOST:PORT/DB" (never the
 * password), as the first connection reported it.
 */
SST_API const char *sst_pg_name(const sst_pg *pg);

#ifdef __cplusplus
}
#endif

#endif /* SUPERSTEP_POSTGRES_H */
