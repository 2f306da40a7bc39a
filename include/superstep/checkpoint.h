/* SPDX-License-Identifier: MIT */
/*
 * The checkpoint store contract (the checkpoint layer, below graph).
 *
 * A checkpointer stores typed checkpoint records for threads: the fields a
 * store may index (thread, namespace, id, parent, step, source, run, kind,
 * time, status) are C fields, and everything else is an opaque payload the
 * store keeps as it was given, never parsing it (the one exception: a
 * record's metadata is a JSON object a store may read to filter on). A third
 * backend implements sst_checkpointer_ops without reading pregel's or
 * graph's code; tests/unit/test_saver_contract.c is the suite every backend
 * passes. This library provides three: an in-memory saver, a SQLite saver and
 * a PostgreSQL saver (many processes on many machines sharing one database).
 *
 * Ownership: every pointer passed into a call is borrowed for that call. A
 * record handed to a callback (sst_checkpoint_fn, sst_thread_fn) is valid
 * only during the callback; keep it with sst_checkpoint_copy.
 *
 * Thread-safety: a checkpointer may be used by several OS threads at once;
 * every call of the memory and SQLite savers takes the saver's own mutex (the
 * PostgreSQL saver's calls run on connections of its pool, one per call). A
 * callback runs while the saver holds that mutex: it must not call the same
 * checkpointer. Locks taken with sst_checkpointer_lock are per thread id
 * and, for SQLite and PostgreSQL, a lease per process (PostgreSQL: per
 * saver): another process holding a thread gets SST_EBUSY until it
 * finishes, dies, or its lease expires. The lease only gives that friendly
 * error: commits are fenced (see put), so two writers on one thread never
 * fork its history.
 *
 * Lifetime: a checkpointer is reference counted. sst_checkpointer_free drops
 * the creator's reference; a durable graph thread holds its own, so freeing
 * the checkpointer before closing the thread is safe (the store is closed
 * when the last holder lets go).
 *
 * Integrity (SQLite): every record carries a CRC-32C checksum verified on
 * reading; a damaged record is an SST_EIO error naming the thread and the
 * checkpoint, never a wrong state. sst_sqlite_check finds and repairs them.
 * PostgreSQL records carry no sums: the server's WAL and page checksums keep them.
 */
#ifndef SUPERSTEP_CHECKPOINT_H
#define SUPERSTEP_CHECKPOINT_H

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

/* ---- records -------------------------------------------------------------- */

/**
 * The record format this build writes. Every stored record carries the
 * format it was written in; reading a record of a newer format fails with
 * SST_ENOTSUP naming both versions (sst_checkpointer_get/list check it).
 * Format 1: records written by schema-3 SQLite files (before this contract).
 */
#define SST_CHECKPOINT_FORMAT 2

/**
 * An opaque payload: bytes, or the same content as an immutable value.
 * A store keeps what it is given and returns it unchanged. Writers give
 * bytes (JSON text) to stores without SST_SAVER_VALUES and a value to stores
 * with it; readers accept either. Empty: data == NULL and value == NULL.
 */
typedef struct sst_payload {
    const char *data; /* the bytes, or NULL */
    size_t len;
    const sst_value *value; /* or the value, or NULL */
} sst_payload;

/**
 * A shared blob: content-addressed bytes a record's body refers to by id
 * (long lists kept once across snapshots and threads). The writer chooses
 * ids (1 to 128 characters of A-Z, a-z, 0-9, '_', '.', ':' and '-'): equal
 * ids mean equal content. On put, a blob with an empty @c content
 * is one stored earlier: the store fails with SST_ENOTFOUND naming it if it
 * is gone (the writer then sends it again). A store deletes a blob when no
 * record refers to it any more (delete_thread, prune).
 */
typedef struct sst_blob {
    const char *id;
    sst_payload content;
} sst_blob;

typedef enum sst_checkpoint_kind {
    SST_CHECKPOINT_SNAPSHOT = 0, /* the body is the whole state */
    SST_CHECKPOINT_DELTA = 1     /* the body is applied on the parent's state */
} sst_checkpoint_kind;

/** A thread's status: its latest root checkpoint's, or busy while a run holds it. */
typedef enum sst_thread_status {
    SST_THREAD_IDLE = 0,
    SST_THREAD_BUSY = 1,
    SST_THREAD_INTERRUPTED = 2,
    SST_THREAD_ERROR = 3
} sst_thread_status;

/** "idle", "busy", "interrupted" or "error" (LangGraph's names); "?" otherwise. */
SST_API const char *sst_thread_status_name(sst_thread_status s);

/**
 * A checkpoint record. Strings are NUL-terminated UTF-8.
 * Ids sort in creation order within a thread (the writer makes them so);
 * stores order a thread's records by the order they were put.
 */
typedef struct sst_checkpoint {
    uint32_t format;          /* SST_CHECKPOINT_FORMAT when written by this build */
    const char *thread_id;    /* non-empty */
    const char *ns;           /* the namespace: "" for a root graph, else a subgraph's path */
    const char *id;           /* non-empty, unique within the thread */
    const char *parent_id;    /* the checkpoint this follows; NULL for a thread's first */
    int64_t step;             /* the superstep it precedes (-1: before the input) */
    const char *source;       /* why it was made: "input", "loop", "update", "fork" (free text) */
    const char *run_id;       /* the run that made it (free text), or NULL */
    sst_checkpoint_kind kind; /* snapshot or delta: how the body is read back */
    int64_t created_at;       /* milliseconds since the Unix epoch */
    sst_thread_status status; /* the thread's status as of this record */
    bool fork;             /* put: a fork or replay from an older checkpoint, exempt from fencing */
    sst_payload body;      /* the state or the deltas; returned by get only */
    sst_payload next;      /* what runs next (a resume point); may be empty */
    sst_payload metadata;  /* a JSON object (user and writer metadata); may be empty */
    sst_payload writes;    /* get only: the pending writes (see put_writes); may be empty */
    const sst_blob *blobs; /* the body's shared blobs (get: with their content) */
    size_t n_blobs;
    unsigned put_flags; /* put only: SST_PUT_* (0 on records a store returns) */
} sst_checkpoint;

/*
 * What a put means beside its record (sst_checkpoint.put_flags), set by the
 * writer (the graph layer sets them; a store never infers them from the payloads):
 *
 * SST_PUT_RUN_END: the run's last checkpoint: the root graph's, nothing left to
 * run, and nothing of the run written after it. A store may use it to commit
 * the run's end with it (the PostgreSQL saver keeps such a put's transaction open
 * for the server worker's finish); it changes nothing that is stored.
 *
 * SST_PUT_TAKE_LOCK: the writer does not hold the thread's lock yet: take it in
 * this put's transaction, as lock(wait = false) would, so that the lock and the
 * record commit together (one commit instead of two). When another holds it the
 * put is SST_EBUSY and writes nothing; once it succeeded the writer holds the
 * lock, given back with unlock or SST_PUT_GIVE_LOCK. A writer must not have run
 * anything the lock guards before such a put succeeds.
 *
 * SST_PUT_GIVE_LOCK: give the writer's lock on the thread back in this put's
 * transaction (after the record: the put is still fenced by it). Once the put
 * succeeded the lock is free, as after unlock; when it failed, still held.
 *
 * SST_PUT_WITH_NEXT: the writer's next put, of the same thread and from the
 * same OS thread, follows at once, before anything the record guards runs (a
 * run's input checkpoint, then its first loop checkpoint): a store may commit
 * the two together, this put then returning before it is committed. The writer
 * asks nothing else of the store on that OS thread until then; should no put
 * follow (the run failed in between), its unlock of the thread, on the same OS
 * thread, commits it first. A store may ignore the flag (the put commits at
 * once); the graph sets it only for stores that say SST_SAVER_LOCK_IN_PUT.
 *
 * A store that does not say SST_SAVER_LOCK_IN_PUT gets the two lock flags
 * emulated by sst_checkpointer_put: lock before the put (unlock again when the
 * put fails), unlock after it succeeded; so they cost it nothing more than
 * lock and unlock did.
 */
#define SST_PUT_RUN_END   1u
#define SST_PUT_TAKE_LOCK 2u
#define SST_PUT_GIVE_LOCK 4u
#define SST_PUT_WITH_NEXT 8u

/**
 * A copy of @p rec in one allocation (strings, bytes and blobs copied;
 * values referenced). @return new record, freed with sst_checkpoint_free;
 * NULL on SST_ENOMEM.
 */
SST_NODISCARD SST_API sst_checkpoint *sst_checkpoint_copy(const sst_checkpoint *rec,
                                                          sst_error *err);
SST_API void sst_checkpoint_free(sst_checkpoint *rec);

/** Receives one record; return false to stop the listing. */
typedef bool (*sst_checkpoint_fn)(const sst_checkpoint *rec, void *user_data);

/** What sst_checkpointer_list returns. */
typedef struct sst_checkpoint_query {
    const char *thread_id; /* required */
    const char *ns;        /* NULL: every namespace; "": the root graph's */
    /* Keeps records whose metadata has every member of @p filter with an equal
     * value; the members "source" and "step" compare with the record's fields
     * when its metadata has no such member. NULL: all. */
    const sst_value *filter;
    const char *before; /* only records put before checkpoint @p before (NULL: from the newest) */
    size_t limit;       /* at most this many (0: all) */
} sst_checkpoint_query;

/* ---- threads ------------------------------------------------------------- */

/** A thread as stores describe it (LangGraph's Thread). */
typedef struct sst_thread_info {
    const char *thread_id;
    int64_t created_at;       /* ms: its first checkpoint, or sst_checkpointer_thread_put */
    int64_t updated_at;       /* ms: its latest checkpoint or metadata change */
    sst_thread_status status; /* busy while locked (a live lease), else its latest checkpoint's */
    sst_payload metadata;     /* user metadata, a JSON object ({} when none) */
    size_t checkpoints;       /* stored checkpoints, all namespaces */
    const char *latest_id;    /* its latest root checkpoint, or NULL */
    int64_t step;             /* that checkpoint's step (0 when none) */
} sst_thread_info;

typedef bool (*sst_thread_fn)(const sst_thread_info *thread, void *user_data);

typedef enum sst_thread_order {
    SST_THREADS_BY_ID = 0,
    SST_THREADS_BY_CREATED = 1,
    SST_THREADS_BY_UPDATED = 2
} sst_thread_order;

/** What sst_checkpointer_threads returns (LangGraph's threads.search). */
typedef struct sst_thread_query {
    const sst_value *metadata; /* members the user metadata must have (NULL: any) */
    bool by_status;            /* keep only threads with @p status */
    sst_thread_status status;
    sst_thread_order order;
    bool descending;
    size_t offset; /* skip this many */
    size_t limit;  /* at most this many (0: all) */
    /* Only threads whose user metadata's "owner" is this string (NULL: any): the server's
     * users (docs/auth.md). Every saver must apply it (a saver that ignored it would show
     * a user others' threads). The SQLite and PostgreSQL savers apply it in SQL, each
     * served by an index on (owner, created). */
    const char *owner;
} sst_thread_query;

/* ---- the implementation interface ---------------------------------------- */

/** The store keeps payload values as given (it lives in this process). */
#define SST_SAVER_VALUES 1u
/** put takes and gives back the thread's lock in its own transaction
 *  (SST_PUT_TAKE_LOCK, SST_PUT_GIVE_LOCK) rather than in transactions of its own. */
#define SST_SAVER_LOCK_IN_PUT 2u

/**
 * What a backend implements (LangGraph's BaseCheckpointSaver). Fill it by
 * field name, with @c size = sizeof(sst_checkpointer_ops): fields added in
 * later versions go at the end, and an implementation built against an
 * older header (a smaller size) gets SST_ENOTSUP for them. Every function
 * fills @p err on failure with a message naming the store and the problem;
 * a storage failure is SST_EIO (SST_EBUSY when locked out), never
 * SST_ENOTFOUND. Required: put, put_writes, get, list, lock, unlock.
 */
typedef struct sst_checkpointer_ops {
    size_t size;    /* sizeof(sst_checkpointer_ops) as the implementation was built */
    unsigned flags; /* SST_SAVER_VALUES, SST_SAVER_LOCK_IN_PUT */
    /* Frees the implementation; called once, when the last reference goes. */
    void (*destroy)(void *self);
    /*
     * Stores @p rec (all its fields and blobs) in one transaction. Whether the
     * commit is flushed to disk before put returns is the saver's flush policy
     * (sst_flush_policy); @p sync flushes this one whatever the policy (the
     * graph passes false: its durability modes say when a checkpoint is
     * committed, the policy whether committed means on disk). Fencing: unless @p rec->fork, @p
     * rec->parent_id must be the latest checkpoint of (thread, ns) (NULL: it has none), checked
     * atomically with the write; otherwise SST_ECONFLICT naming the thread
     * and both ids, and nothing is written. A duplicate id is SST_ECONFLICT.
     * @p rec->put_flags (SST_PUT_*) as described above them.
     */
    sst_code (*put)(void *self, const sst_checkpoint *rec, bool sync, sst_error *err);
    /* Replaces the pending writes of checkpoint @p id as a whole (an empty
     * @p writes deletes them) and sets its status. SST_ENOTFOUND when there
     * is no such checkpoint. */
    sst_code (*put_writes)(void *self, const char *thread_id, const char *ns, const char *id,
                           const sst_payload *writes, sst_thread_status status, bool sync,
                           sst_error *err);
    /* Calls @p each once with checkpoint @p id of (thread, ns) (NULL: the
     * latest), with its body, writes and blobs. SST_ENOTFOUND when none. */
    sst_code (*get)(void *self, const char *thread_id, const char *ns, const char *id,
                    sst_checkpoint_fn each, void *user_data, sst_error *err);
    /* Calls @p each for the records matching @p q, newest first, without
     * body, writes or blobs. A thread without records lists nothing. */
    sst_code (*list)(void *self, const sst_checkpoint_query *q, sst_checkpoint_fn each,
                     void *user_data, sst_error *err);
    /* Takes the thread's lock (also against other processes); SST_EBUSY when
     * held and @p wait is false. */
    sst_code (*lock)(void *self, const char *thread_id, bool wait, sst_error *err);
    void (*unlock)(void *self, const char *thread_id);
    /* Calls @p each for the threads matching @p q. Optional. */
    sst_code (*threads)(void *self, const sst_thread_query *q, sst_thread_fn each, void *user_data,
                        sst_error *err);
    /* Calls @p each for one thread; SST_ENOTFOUND when it has neither
     * checkpoints nor metadata. Optional. */
    sst_code (*thread_get)(void *self, const char *thread_id, sst_thread_fn each, void *user_data,
                           sst_error *err);
    /* Creates the thread if needed and replaces its user metadata (a JSON
     * object). Optional. */
    sst_code (*thread_put)(void *self, const char *thread_id, const sst_payload *metadata,
                           sst_error *err);
    /* Copies every checkpoint, write and the metadata of @p from to the new
     * thread @p to (SST_ECONFLICT when @p to exists). Optional. */
    sst_code (*copy_thread)(void *self, const char *from, const char *to, sst_error *err);
    /* Deletes a thread's checkpoints, writes and metadata, and the blobs no
     * other record refers to. Deleting an unknown thread is not an error. */
    sst_code (*delete_thread)(void *self, const char *thread_id, sst_error *err);
    /* Keeps the latest @p keep checkpoints of each namespace of the thread
     * (keep >= 1) and what they are read from: each kept delta's ancestors
     * back to a snapshot. Deletes the rest, their writes and orphaned blobs;
     * *removed (if not NULL) counts the records deleted. Optional. */
    sst_code (*prune)(void *self, const char *thread_id, size_t keep, size_t *removed,
                      sst_error *err);
} sst_checkpointer_ops;

typedef struct sst_checkpointer sst_checkpointer;

/**
 * Wraps an implementation: @p ops is copied (its @c size bytes), @p self is
 * handed to every call and to destroy. @return new checkpointer holding one
 * reference; NULL with SST_EINVAL when a required operation is missing or
 * @c size is 0, SST_ENOMEM. On failure @p self is not destroyed.
 */
SST_NODISCARD SST_API sst_checkpointer *sst_checkpointer_new(const sst_checkpointer_ops *ops,
                                                             void *self, sst_error *err);
/** Adds a reference; returns @p cp. */
SST_API sst_checkpointer *sst_checkpointer_ref(sst_checkpointer *cp);
/** Drops a reference; the last one destroys the implementation. NULL is a no-op. */
SST_API void sst_checkpointer_free(sst_checkpointer *cp);
/** The implementation's self pointer (borrowed). */
SST_API void *sst_checkpointer_self(const sst_checkpointer *cp);
/** The implementation's flags (SST_SAVER_VALUES). */
SST_API unsigned sst_checkpointer_flags(const sst_checkpointer *cp);

/*
 * The calls below check their arguments (SST_EINVAL naming the bad one) and
 * then call the implementation; see sst_checkpointer_ops for each.
 */
SST_NODISCARD SST_API sst_code sst_checkpointer_put(sst_checkpointer *cp, const sst_checkpoint *rec,
                                                    bool sync, sst_error *err);
SST_NODISCARD SST_API sst_code sst_checkpointer_put_writes(
    sst_checkpointer *cp, const char *thread_id, const char *ns, const char *id,
    const sst_payload *writes, sst_thread_status status, bool sync, sst_error *err);
/**
 * Checkpoint @p id of (thread, ns) (NULL: the latest) as a new record, freed
 * with sst_checkpoint_free. NULL with SST_ENOTFOUND when there is none,
 * SST_ENOTSUP when it was written in a newer format than this build reads.
 */
SST_NODISCARD SST_API sst_checkpoint *sst_checkpointer_get(sst_checkpointer *cp,
                                                           const char *thread_id, const char *ns,
                                                           const char *id, sst_error *err);
/** Lists records (see the ops); stops with SST_ENOTSUP at a record of a newer format. */
SST_NODISCARD SST_API sst_code sst_checkpointer_list(sst_checkpointer *cp,
                                                     const sst_checkpoint_query *q,
                                                     sst_checkpoint_fn each, void *user_data,
                                                     sst_error *err);
SST_NODISCARD SST_API sst_code sst_checkpointer_lock(sst_checkpointer *cp, const char *thread_id,
                                                     bool wait, sst_error *err);
SST_API void sst_checkpointer_unlock(sst_checkpointer *cp, const char *thread_id);
/* The optional operations: SST_ENOTSUP when the implementation lacks them. */
SST_NODISCARD SST_API sst_code sst_checkpointer_threads(sst_checkpointer *cp,
                                                        const sst_thread_query *q,
                                                        sst_thread_fn each, void *user_data,
                                                        sst_error *err);
SST_NODISCARD SST_API sst_code sst_checkpointer_thread_get(sst_checkpointer *cp,
                                                           const char *thread_id,
                                                           sst_thread_fn each, void *user_data,
                                                           sst_error *err);
SST_NODISCARD SST_API sst_code sst_checkpointer_thread_put(sst_checkpointer *cp,
                                                           const char *thread_id,
                                                           const sst_value *metadata,
                                                           sst_error *err);
SST_NODISCARD SST_API sst_code sst_checkpointer_copy_thread(sst_checkpointer *cp, const char *from,
                                                            const char *to, sst_error *err);
SST_NODISCARD SST_API sst_code sst_checkpointer_delete_thread(sst_checkpointer *cp,
                                                              const char *thread_id,
                                                              sst_error *err);
SST_NODISCARD SST_API sst_code sst_checkpointer_prune(sst_checkpointer *cp, const char *thread_id,
                                                      size_t keep, size_t *removed, sst_error *err);
/**
 * The threads matching @p q (NULL: all, by id) as values: [{"thread_id",
 * "created_at", "updated_at", "status", "metadata", "checkpoints", "latest",
 * "step"}] ("latest" null when none). @return new array; NULL with
 * SST_ENOTSUP (the saver cannot list) or a storage error.
 */
SST_NODISCARD SST_API sst_value *
sst_checkpointer_search_threads(sst_checkpointer *cp, const sst_thread_query *q, sst_error *err);
/** A payload's content as a value: its value (new reference) or its bytes parsed as JSON. */
SST_NODISCARD SST_API sst_value *sst_payload_value(const sst_payload *p, sst_error *err);

/* ---- the provided savers ------------------------------------------------- */

/**
 * A saver that keeps every checkpoint in memory (lost with the process);
 * it keeps payload values (SST_SAVER_VALUES).
 * @return new checkpointer, freed with sst_checkpointer_free; NULL on SST_ENOMEM.
 */
SST_NODISCARD SST_API sst_checkpointer *sst_memory_saver_new(sst_error *err);

/**
 * A saver's flush policy: whether a commit is on disk when it returns, apart
 * from when it is made (sst_durability). A committed checkpoint survives a
 * crash of the process either way; only an OS crash or a power loss (SQLite),
 * or a crash of the database server (PostgreSQL), tells them apart.
 */
typedef enum sst_flush_policy {
    SST_FLUSH_DEFAULT = 0, /* the backend's own: SQLite off (NORMAL), PostgreSQL on */
    /* A commit returns before it is flushed: SQLite `synchronous=NORMAL` (WAL: an OS
     * crash may lose the last commits, never corrupting the file), PostgreSQL
     * `synchronous_commit=off` (a server crash may lose the last few hundred ms). */
    SST_FLUSH_OFF,
    /* A commit returns once it is on disk: SQLite `synchronous=FULL`, PostgreSQL
     * `synchronous_commit=on`. */
    SST_FLUSH_ON
} sst_flush_policy;

/** SQLite saver options; fill with sst_sqlite_opts_init. */
typedef struct sst_sqlite_opts {
    int busy_timeout_ms;  /* wait for other writers; default 5000 */
    bool check_integrity; /* run PRAGMA quick_check when opening; default true */
    /* How long a thread's busy lease lasts without a commit (ms); default 30000. A
     * holder in another host, boot or PID namespace is presumed alive until then. */
    int lease_ms;
    /* The largest payload written, the same limit it is read back with; a
     * checkpoint over it fails with SST_ELIMIT before anything is stored.
     * Default and maximum 256 MiB. */
    size_t max_record_bytes;
    /* PRAGMA synchronous of the connection: SST_FLUSH_ON is FULL, else NORMAL. */
    sst_flush_policy flush;
} sst_sqlite_opts;

SST_API void sst_sqlite_opts_init(sst_sqlite_opts *o);

/**
 * Opens (or creates) the SQLite checkpoint database at @p path: WAL journal,
 * synchronous NORMAL (FULL with flush SST_FLUSH_ON, and for commits with
 * @c sync), one transaction per checkpoint, a schema version with migrations.
 * @return new checkpointer; NULL with SST_EIO and a message naming the file
 *         and the problem: it cannot be opened, it is not a SQLite database,
 *         it is another application's database, its schema is newer than
 *         this build, or it is corrupt. Nothing is written to such a file.
 */
SST_NODISCARD SST_API sst_checkpointer *
sst_sqlite_saver_open(const char *path, const sst_sqlite_opts *opts, sst_error *err);

/**
 * sst_sqlite_saver_open on a connection shared with other backends of this
 * process (include/superstep/sqlite.h): the same checks and schema, one
 * connection, page cache and mutex with them. The saver holds a reference
 * to @p db until it is freed.
 * @return new checkpointer; NULL as sst_sqlite_saver_open, or SST_EINVAL for a NULL @p db.
 */
SST_NODISCARD SST_API sst_checkpointer *
sst_sqlite_saver_open_db(sst_sqlite_db *db, const sst_sqlite_opts *opts, sst_error *err);

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
 * every record's checksum (checkpoints, pending writes, blobs) and whether
 * every checkpoint can be read back (its chain of deltas back to a snapshot
 * is intact, and the blobs it refers to are there). Each problem goes to
 * @p on_damage (may be NULL).
 *
 * With @p repair, a thread whose latest checkpoint cannot be read back gets
 * its head moved back to its newest checkpoint that can: the newer records
 * (and their pending writes) are removed, after the whole file was copied to
 * "PATH.bak-<time>" (report->backup). Damage to SQLite's own structures
 * (integrity_check) is reported, never repaired: restore the file instead.
 * @return SST_OK when the check ran (look at @p report); SST_EIO when the file
 *         cannot be opened or is not a superstep database.
 */
SST_NODISCARD SST_API sst_code sst_sqlite_check(const char *path, bool repair,
                                                sst_sqlite_damage_fn on_damage, void *user_data,
                                                sst_sqlite_check_report *report, sst_error *err);

/** The SQLite schema version this build writes. */
#define SST_SQLITE_SCHEMA_VERSION 5

/** PostgreSQL saver options; fill with sst_postgres_saver_opts_init. */
typedef struct sst_postgres_saver_opts {
    int lease_ms;            /* a thread's busy lease without a commit; default 30000 */
    size_t max_record_bytes; /* largest payload written; default and maximum 256 MiB */
    /* The flush policy (sst_flush_policy): every write waits for PostgreSQL's WAL flush
     * (synchronous_commit on), whatever a put's @c sync says; default true. A writer goes
     * on from each commit, so one that a crashed database server loses would leave the
     * writer ahead of the thread. false: writes with sync false commit with
     * synchronous_commit off (faster; a server crash may lose the last few hundred
     * milliseconds of them, never corrupt them). */
    bool synchronous_commit;
} sst_postgres_saver_opts;

/** Fills @p o with the defaults (NULL is a no-op). */
SST_API void sst_postgres_saver_opts_init(sst_postgres_saver_opts *o);

/**
 * Opens the PostgreSQL checkpoint saver on the database @p url, on a pool of
 * its own (sst_pg_open with the default pool options). Its tables
 * (sst_checkpoints and sst_checkpoint_*, in the schema the connection's
 * search_path names first) are created or migrated on first use, under a
 * version of their own; many processes on many machines may share them:
 * commits are fenced inside PostgreSQL transactions (see put), and the thread
 * lease is a row with an expiry on the server's clock. A lease @p lease_ms
 * long is renewed by the commits made under it; a holder on this host whose
 * process died is taken over at once, one elsewhere when its lease expires.
 * Payloads are stored as bytea, as given. Commits without @c sync run with
 * synchronous_commit off for that transaction. A lost connection is retried
 * as the pool says (include/superstep/postgres.h).
 * @param url   as sst_pg_open: NULL or "" for the PG* environment variables.
 * @param opts  NULL for the defaults.
 * @return new checkpointer, freed with sst_checkpointer_free; NULL with
 *         SST_EUNAVAILABLE (the server cannot be reached: the message names
 *         it), SST_EINVAL (a malformed URL), SST_ENOTSUP (the tables are at a
 *         newer schema version than this build's: nothing is changed),
 *         SST_EIO (tables of the same names that are not this build's, or
 *         another failure; the message names the table and the database),
 *         SST_ENOMEM.
 */
SST_NODISCARD SST_API sst_checkpointer *
sst_postgres_saver_open(const char *url, const sst_postgres_saver_opts *opts, sst_error *err);

/**
 * sst_postgres_saver_open on a pool shared with the PostgreSQL store and
 * queue of this process. The saver holds a reference to @p pg until it is
 * freed (the caller may release its own at once).
 * @return new checkpointer; NULL as sst_postgres_saver_open, or SST_EINVAL
 *         for a NULL @p pg.
 */
SST_NODISCARD SST_API sst_checkpointer *
sst_postgres_saver_open_pg(sst_pg *pg, const sst_postgres_saver_opts *opts, sst_error *err);

#ifdef __cplusplus
}
#endif
#endif /* SUPERSTEP_CHECKPOINT_H */
