/* SPDX-License-Identifier: MIT */
/*
 * Checkpoint savers (the checkpoint layer): an in-memory saver and a SQLite
 * saver, both implementing sst_checkpointer_ops (superstep/graph.h). Open a
 * durable thread on one with sst_graph_thread_open. docs/checkpoints.md
 * describes the storage layout and guarantees.
 *
 * Thread-safety: a saver may be shared by several graph threads, also on
 * different OS threads (each call takes the saver's own mutex). Locks taken
 * with the lock operation are per thread id and, for SQLite, a lease per
 * process: another process holding a thread gets SST_EBUSY until it finishes,
 * dies, or (in another PID namespace or host) its lease expires. The lease
 * only gives that friendly error: commits are fenced, so two writers on one
 * thread never fork its history (the loser gets SST_ECONFLICT).
 *
 * Integrity: every SQLite record carries a CRC-32C checksum verified on
 * reading; a damaged record is an SST_EIO error naming the thread and the
 * checkpoint, never a wrong state. sst_sqlite_check finds and repairs them.
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
    /* How long a thread's busy lease lasts without a commit (ms); default 30000. A
     * holder in another host, boot or PID namespace is presumed alive until then. */
    int lease_ms;
    /* The largest record text written, the same limit it is read back with; a
     * checkpoint over it fails with SST_ELIMIT before anything is stored.
     * Default and maximum 256 MiB. */
    size_t max_record_bytes;
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

/** One problem found by sst_sqlite_check. */
typedef struct sst_sqlite_damage {
    const char *thread;        /* NULL for damage to the file itself */
    const char *checkpoint_id; /* NULL when not about one checkpoint */
    const char *problem;       /* what is wrong, e.g. "body checksum mismatch" */
} sst_sqlite_damage;

/** What sst_sqlite_check found and did. */
typedef struct sst_sqlite_check_report {
    size_t checkpoints;      /* checkpoint records read */
    size_t damaged;          /* problems reported */
    size_t threads_repaired; /* threads whose head was moved back (repair) */
    size_t removed;          /* checkpoints removed from damaged threads (repair) */
    bool file_ok;            /* PRAGMA integrity_check said ok */
    char backup[512];        /* the copy made before repairing ("" when none) */
} sst_sqlite_check_report;

typedef void (*sst_sqlite_damage_fn)(const sst_sqlite_damage *damage, void *user_data);

/**
 * Checks the checkpoint database at @p path: SQLite's integrity_check, then
 * every record's checksum (checkpoints, pending writes, history chunks) and
 * whether every checkpoint can be rebuilt (its delta chain back to a snapshot
 * is intact). Each problem goes to @p on_damage (may be NULL).
 *
 * With @p repair, a thread whose latest checkpoint cannot be rebuilt gets its
 * head moved back to its newest checkpoint that can: the newer records (and
 * their pending writes) are removed, after the whole file was copied to
 * "PATH.bak-<time>" (report->backup). Damage to SQLite's own structures
 * (integrity_check) is reported, never repaired: restore the file instead.
 * @return SST_OK when the check ran (look at @p report); SST_EIO when the file
 *         cannot be opened or is not a superstep database.
 */
SST_NODISCARD SST_API sst_code sst_sqlite_check(const char *path, bool repair,
                                                sst_sqlite_damage_fn on_damage, void *user_data,
                                                sst_sqlite_check_report *report, sst_error *err);

/** The SQLite schema version this build writes. */
#define SST_SQLITE_SCHEMA_VERSION 3

#ifdef __cplusplus
}
#endif
#endif /* SUPERSTEP_CHECKPOINT_H */
