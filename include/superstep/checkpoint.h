/* SPDX-License-Identifier: MIT */
/*
 * Checkpoint savers (the checkpoint layer): an in-memory saver and a SQLite
 * saver, both implementing sst_checkpointer_ops (superstep/graph.h). Open a
 * durable thread on one with sst_graph_thread_open. docs/checkpoints.md
 * describes the storage layout and guarantees.
 *
 * Thread-safety: a saver may be shared by several graph threads, also on
 * different OS threads (each call takes the saver's own mutex). Locks taken
 * with the lock operation are per thread id and, for SQLite, per process:
 * another process holding a thread gets SST_EBUSY until it finishes or dies.
 */
#ifndef SUPERSTEP_CHECKPOINT_H
#define SUPERSTEP_CHECKPOINT_H

#include "superstep/error.h"
#include "superstep/export.h"
#include "superstep/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * A saver that keeps every checkpoint in memory (lost with the process).
 * @return new checkpointer, freed with sst_checkpointer_free; NULL on SST_ENOMEM.
 */
SST_NODISCARD SST_API sst_checkpointer *sst_memory_saver_new(sst_error *err);

/** SQLite saver options; fill with sst_sqlite_opts_init. */
typedef struct sst_sqlite_opts {
    int busy_timeout_ms;  /* wait for other writers; default 5000 */
    bool check_integrity; /* run PRAGMA quick_check when opening; default true */
} sst_sqlite_opts;

SST_API void sst_sqlite_opts_init(sst_sqlite_opts *o);

/**
 * Opens (or creates) the SQLite checkpoint database at @p path: WAL journal,
 * synchronous NORMAL for SST_DURABILITY_ASYNC and FULL for _SYNC commits,
 * one transaction per checkpoint, a schema version with migrations.
 * @return new checkpointer; NULL with SST_EIO and a message naming the file
 *         and the problem: it cannot be opened, it is not a SQLite database,
 *         it is another application's database, its schema is newer than
 *         this build, or it is corrupt. Nothing is written to such a file.
 */
SST_NODISCARD SST_API sst_checkpointer *
sst_sqlite_saver_open(const char *path, const sst_sqlite_opts *opts, sst_error *err);

/** The SQLite schema version this build writes. */
#define SST_SQLITE_SCHEMA_VERSION 2

#ifdef __cplusplus
}
#endif
#endif /* SUPERSTEP_CHECKPOINT_H */
