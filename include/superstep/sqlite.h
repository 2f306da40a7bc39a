/* SPDX-License-Identifier: MIT */
/**
 * @file sqlite.h
 * @brief One SQLite connection shared by the saver, the store and the run queue of a process.
 *
 * Each SQLite backend (sst_sqlite_saver_open, sst_sqlite_store_new,
 * sst_sqlite_queue_open) opens a connection of its own by default. When one
 * process uses several of them on one file, as `superstep serve` does, each
 * connection sees the others' commits as changes made by "another
 * connection": it re-reads its pages, and every transaction takes and drops
 * file locks. Opening them on one sst_sqlite_db instead (the `_db` variants
 * of those functions) gives them one connection, one page cache and one
 * mutex: their transactions run one at a time, as SQLite runs writes anyway.
 *
 * With @c exclusive, the connection also holds the file's locks from its
 * first use until it is closed (SQLite's `locking_mode=EXCLUSIVE`; in WAL
 * mode the WAL index then lives in the process's memory, not in a -shm
 * file). No file lock is taken or dropped per transaction, which is most of
 * a small transaction's cost, but no other process can read or write the
 * file while it is open: other processes get SST_EBUSY ("database is
 * locked") until it is closed. Durability is the same either way.
 *
 * Thread-safety: the handle may be used from any thread; the backends
 * opened on it serialise their transactions on its mutex.
 */
#ifndef SUPERSTEP_SQLITE_H
#define SUPERSTEP_SQLITE_H

#include <stdbool.h>

#include "superstep/error.h"
#include "superstep/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A shared SQLite connection (reference counted). */
typedef struct sst_sqlite_db sst_sqlite_db;

/**
 * Opens (creating if needed) the SQLite file @p path for backends to share.
 * Nothing is written to the file until a backend is opened on it; the
 * backends check the file as their path-taking variants do.
 *
 * @param path       the file ("" or ":memory:" are refused: a shared
 *                   connection is for a file several backends keep).
 * @param exclusive  hold the file's locks until the last reference goes.
 * @param err        NULL, or filled on failure.
 * @return a handle holding one reference, or NULL: SST_EINVAL (NULL or empty
 *         path, ":memory:"), SST_EIO (cannot open), SST_ENOMEM.
 * Thread-safety: thread-safe.
 */
SST_NODISCARD SST_API sst_sqlite_db *sst_sqlite_db_open(const char *path, bool exclusive,
                                                        sst_error *err);

/** Drops one reference; the last one closes the connection. NULL is a no-op. */
SST_API void sst_sqlite_db_release(sst_sqlite_db *db);

/**
 * Starts one SQLite transaction for what this thread does next, until
 * sst_sqlite_db_commit, through any backend opened on @p db: their own
 * transactions become savepoints of it, and it commits (or rolls back) as
 * one. E.g. `superstep serve` finishes a run in the queue and gives its
 * thread's lease back in one commit. Holds the connection's mutex meanwhile
 * (other threads' calls on these backends wait), so keep it short. Calls
 * nest: only the outermost pair begins and commits. The store's calls are
 * refused inside (SST_EINVAL): it keeps an index in memory beside its rows,
 * and writes both under a lock of its own.
 * @return SST_OK; SST_EBUSY (another process holds the file), SST_EIO.
 */
SST_NODISCARD SST_API sst_code sst_sqlite_db_begin(sst_sqlite_db *db, sst_error *err);

/**
 * Ends what sst_sqlite_db_begin started: commits when @p ok, else rolls
 * back everything since then. A failed commit rolls back too.
 * @return SST_OK; SST_EIO (the commit failed: nothing of it was written).
 */
SST_API sst_code sst_sqlite_db_commit(sst_sqlite_db *db, bool ok, sst_error *err);

/**
 * The flush policy of the connection (docs/durability.md), for every backend
 * on it: with @p flush every commit is on disk before it returns (SQLite's
 * `PRAGMA synchronous=FULL`), else it returns before (`NORMAL`, the default:
 * in WAL mode a crash of the process loses nothing committed, an OS crash or a
 * power loss may lose the last commits, never corrupting the file). Call it
 * after opening the backends: each sets NORMAL when it opens.
 * @return SST_OK; SST_EINVAL (NULL @p db), SST_EIO.
 */
SST_NODISCARD SST_API sst_code sst_sqlite_db_set_flush(sst_sqlite_db *db, bool flush,
                                                       sst_error *err);

/** The file's path, as given to sst_sqlite_db_open. */
SST_API const char *sst_sqlite_db_path(const sst_sqlite_db *db);

#ifdef __cplusplus
}
#endif

#endif /* SUPERSTEP_SQLITE_H */
