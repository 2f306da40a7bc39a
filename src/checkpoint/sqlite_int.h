/* SPDX-License-Identifier: MIT */
/*
 * The SQLite saver's private parts, shared by its files:
 *   sqlite.c          opening, schema and migrations, statement helpers
 *   sqlite_records.c  checkpoints, pending writes, blobs, listing
 *   sqlite_threads.c  threads: metadata, search, copy, delete, prune, the blob sweep
 *   sqlite_lease.c    the busy-thread lease
 *   sqlite_check.c    checking every record and repairing damaged threads
 */
#ifndef SUPERSTEP_SQLITE_INT_H
#define SUPERSTEP_SQLITE_INT_H

#include <pthread.h>
#include <sqlite3.h>
#include <stdatomic.h>

#include "checkpoint_int.h"

#define SST__SQLITE_APP_ID 0x53535450 /* "SSTP" */

/* Prepared statements, made once when the file is opened. */
enum {
    S_BEGIN,
    S_COMMIT,
    S_ROLLBACK,
    S_PUT,
    S_HEAD,
    S_GET_ID,
    S_GET_LATEST,
    S_GET_WRITES,
    S_PUT_WRITES,
    S_DEL_WRITES,
    S_SET_STATUS,
    S_LIST,
    S_LOCK,
    S_LOCK_OWNER,
    S_LOCK_TAKE,
    S_LOCK_RENEW,
    S_UNLOCK,
    S_PUT_BLOB,
    S_HAS_BLOB,
    S_GET_BLOB,
    S_SWEEP_ADD_REC,
    S_SWEEP_ADD_THREAD,
    S_THREAD_NEW,
    S_THREAD_PUT,
    S_THREAD_EXISTS,
    S_THREAD_GET,
    S_CHAIN,
    S_DEL_REC,
    S_SWEEP,
    S_SWEEP_CLEAR,
    S_DATA_VERSION,
    S_DEL_THREAD_C,
    S_DEL_THREAD_W,
    S_DEL_THREAD_T,
    S_COPY_C,
    S_COPY_W,
    S_COPY_T,
    S_GROUP_SP,      /* a unit's savepoint inside a group commit (sqlite_group.c) */
    S_GROUP_RELEASE, /* ... kept */
    S_GROUP_UNDO,    /* ... rolled back to (then released) */
    S_COUNT
};

/*
 * The ids in checkpoints.blobs of the row aliased c, as rows of json_each
 * aliased j (j.value): blob ids are [A-Za-z0-9_.:-] (checked on put), so the
 * comma list becomes a JSON array by quoting.
 */
#define BLOB_IDS_OF_C "json_each('[\"' || replace(c.blobs, ',', '\",\"') || '\"]') j"

/* A thread's row as sst_thread_info needs it (sqlite_threads.c reads it; ?1 is now). */
#define THREAD_SELECT                                                                              \
    "SELECT t.thread, t.created, max(t.updated, coalesce(h.created, 0)), coalesce(h.status, 0),"   \
    " t.metadata, t.mcrc, (SELECT count(*) FROM checkpoints c WHERE c.thread = t.thread),"         \
    " h.id, coalesce(h.step, 0),"                                                                  \
    " (SELECT l.owner FROM locks l WHERE l.thread = t.thread AND l.expires > ?1)"                  \
    " FROM threads t LEFT JOIN checkpoints h ON h.seq = (SELECT max(seq) FROM checkpoints c"       \
    " WHERE c.thread = t.thread AND c.ns = '')"

/* The columns every checkpoint read returns, in this order (the C_ names below). */
#define REC_COLS                                                                                   \
    "id, parent, step, format, kind, source, run_id, created, status, header, hcrc, meta, mcrc, "  \
    "ns, body, bcrc, blobs"
#define REC_HEAD_COLS                                                                              \
    "id, parent, step, format, kind, source, run_id, created, status, header, hcrc, meta, mcrc, "  \
    "ns, NULL, NULL, blobs"

/* The columns of a checkpoint read (REC_COLS). */
enum {
    C_ID,
    C_PARENT,
    C_STEP,
    C_FORMAT,
    C_KIND,
    C_SOURCE,
    C_RUN_ID,
    C_CREATED,
    C_STATUS,
    C_HEADER,
    C_HCRC,
    C_META,
    C_MCRC,
    C_NS,
    C_BODY,
    C_BCRC,
    C_BLOBS /* the ids of its blobs, joined by commas (NULL: none) */
};

/* A lease this saver holds, renewed by the commits made under it. */
typedef struct held_lease {
    char *thread;      /* owned */
    uint64_t renew_at; /* ms since the epoch: renew at the first commit after this */
    struct held_lease *next;
} held_lease;

typedef struct sqlite_saver {
    sqlite3 *db;                /* conn's */
    struct sst_sqlite_db *conn; /* a reference: own or shared with a store and a queue */
    char *path;                 /* owned, for messages */
    pthread_mutex_t *mu;        /* conn's (recursive) */
    sqlite3_stmt *st[S_COUNT];  /* protected by mu */
    held_lease *leases;         /* protected by mu */
    /* Blobs known to be in the file (ids owned, protected by mu): stored or seen by this
     * connection since data_version last changed (no other connection committed since,
     * so none of them was swept); cleared by this connection's own sweeps. */
    sst__strmap known;
    int64_t known_version;
    uint64_t lease_ms;       /* how long a lease lasts without a commit */
    bool flush_on;           /* sst_sqlite_opts.flush: synchronous FULL for every commit */
    size_t max_record_bytes; /* the largest text stored (and read back) */
    bool owner_index;        /* threads_owner was made (or tried), under mu */
    /* Group commit (sqlite_group.c): units waiting for a leader, under gmu. */
    pthread_mutex_t gmu;
    pthread_cond_t gcv;
    struct sq_unit *ghead, *gtail;
    bool leading;  /* a leader is running a group (under gmu) */
    bool in_group; /* the leader's transaction is open: units use savepoints (under mu) */
    /* The thread that runs a reader's callback holding mu (0: none): its writes go alone. */
    _Atomic(unsigned long) cb_owner;
    uint64_t groups, units; /* groups committed and units in them (under gmu) */
    /* The head this saver last committed (under mu): its put's fence then needs no head
     * SELECT while nothing else changed the file since (sqlite_records.c, issue 37). */
    struct {
        char *buf;           /* owned: thread, ns and id, each NUL-terminated */
        size_t cap;          /* buf's size, made before a put's transaction */
        size_t ns_at, id_at; /* offsets of ns and id in buf */
        bool valid;          /* false: nothing cached */
        int64_t changes;     /* sqlite3_total_changes64 of the connection after the commit */
        int64_t version;     /* PRAGMA data_version after the commit */
    } head;
    uint64_t head_hits; /* puts fenced by the cached head (tests read it; under mu) */
} sqlite_saver;

/* One write transaction handed to the group committer: @p run writes it (under mu, inside
 * the group's transaction); @p finish, when set, learns whether it was committed (under
 * mu, after the commit). The caller's stack holds it until sst__sq_group_run returns. */
typedef struct sq_unit {
    struct sq_unit *next;
    sst_code (*run)(sqlite_saver *s, void *arg, sst_error *err);
    void (*finish)(sqlite_saver *s, void *arg, bool committed);
    void *arg;
    sst_code rc;
    sst_error err;
    bool call; /* another backend's transaction (sst__sq_group_call), not the saver's */
    bool done; /* under gmu */
} sq_unit;

/* Runs @p u in the next group commit of @p s and waits for that commit (sqlite_group.c):
 * its result, SST_OK once committed. */
sst_code sst__sq_group_run(sqlite_saver *s, sq_unit *u, sst_error *err);
/* Runs @p u alone now (@p alone: a flushed write, which raises synchronous around its own
 * transaction; or a write inside a batch or a reader's callback), else in the next group
 * commit: the saver's writes (a checkpoint, pending writes, a thread's metadata). */
sst_code sst__sq_write_unit(sqlite_saver *s, sq_unit *u, bool alone, sst_error *err);
/* Whether a write of the calling thread must run alone, now: it is inside a batch of the
 * connection (sst_sqlite_db_begin) or a reader's callback of this saver. */
bool sst__sq_group_bypass(sqlite_saver *s);
void sst__sq_group_init(sqlite_saver *s);
/* Whether @p cp is this SQLite saver (its group commit may take others' transactions). */
bool sst__sq_is_saver(const sst_checkpointer *cp);
/* Runs @p fn, a transaction of another backend on the saver's connection (the server's
 * enqueue, a run's finish), in the saver's next group commit: alone, @p fn makes its own
 * transaction (a batch of the connection, sst_sqlite_db_begin); in a group, its batch is
 * nested in the group's and its writes are rolled back alone when it fails. Returns once
 * the commit that holds them has ended: @p fn's result, or the commit's failure. */
sst_code sst__sq_group_call(struct sst_checkpointer *cp, sst_code (*fn)(void *arg, sst_error *err),
                            void *arg, sst_error *err);
void sst__sq_group_destroy(sqlite_saver *s);

/* Fills err with "checkpoint store 'path': what: sqlite's message"; returns the code. */
sst_code sst__sq_db_error(const sqlite_saver *s, sst_error *err, const char *what);
/* Runs SQL without rows; false with err filled on failure. */
bool sst__sq_exec(sqlite_saver *s, const char *sql, sst_error *err);
/* Statement @p which, reset and unbound. */
sqlite3_stmt *sst__sq_stmt(sqlite_saver *s, int which);
/* Binds text, or NULL for a NULL @p text. */
void sst__sq_bind_text(sqlite3_stmt *st, int i, const char *text);
/* Runs a statement that returns no rows. */
bool sst__sq_step_done(sqlite_saver *s, sqlite3_stmt *st, const char *what, sst_error *err);
/* Begins a write transaction (FULL sync when @p sync). */
bool sst__sq_begin(sqlite_saver *s, bool sync, sst_error *err);
/* Commits when @p ok (else rolls back); false when anything failed. */
bool sst__sq_commit(sqlite_saver *s, bool sync, bool ok, sst_error *err);

/* A saver on @p path with its statements prepared (no checkpointer around it). */
sqlite_saver *sst__sq_open(const char *path, struct sst_sqlite_db *shared, const sst_sqlite_opts *o,
                           sst_error *err);
void sst__sq_destroy(void *self);

/* Record operations (sqlite_records.c). */
sst_code sst__sq_put(void *self, const sst_checkpoint *rec, bool sync, sst_error *err);
sst_code sst__sq_put_writes(void *self, const char *thread, const char *ns, const char *id,
                            const sst_payload *writes, sst_thread_status status, bool sync,
                            sst_error *err);
sst_code sst__sq_get(void *self, const char *thread, const char *ns, const char *id,
                     sst_checkpoint_fn each, void *user_data, sst_error *err);
sst_code sst__sq_list(void *self, const sst_checkpoint_query *q, sst_checkpoint_fn each,
                      void *user_data, sst_error *err);
/* Reads the current row of a checkpoint statement (REC_COLS) into @p r, checking its sums
 * (SST_EIO naming the checkpoint); strings point into the statement's row; no blobs, no
 * writes. */
sst_code sst__sq_read_row(sqlite_saver *s, sqlite3_stmt *st, const char *thread, sst_checkpoint *r,
                          sst_error *err);

/* Forgets the cached head and frees its buffer (sqlite_records.c). */
void sst__sq_head_clear(sqlite_saver *s);

/* Forgets the blobs known to be stored (after a sweep). */
void sst__sq_known_clear(sqlite_saver *s);

/* Threads (sqlite_threads.c). */
sst_code sst__sq_threads(void *self, const sst_thread_query *q, sst_thread_fn each, void *user_data,
                         sst_error *err);
sst_code sst__sq_thread_get(void *self, const char *thread, sst_thread_fn each, void *user_data,
                            sst_error *err);
sst_code sst__sq_thread_put(void *self, const char *thread, const sst_payload *metadata,
                            sst_error *err);
sst_code sst__sq_copy_thread(void *self, const char *from, const char *to, sst_error *err);
sst_code sst__sq_delete_thread(void *self, const char *thread, sst_error *err);
sst_code sst__sq_prune(void *self, const char *thread, size_t keep, size_t *removed,
                       sst_error *err);
/* Runs statement @p which with text bindings (NULL ends them); false with err on failure. */
bool sst__sq_run(sqlite_saver *s, int which, const char *what, sst_error *err, ...);

/* The lease (sqlite_lease.c). */
sst_code sst__sq_lock(void *self, const char *thread, bool wait, sst_error *err);
void sst__sq_unlock(void *self, const char *thread);
/* Inside a commit's transaction: extends the lease on @p thread when due. */
bool sst__sq_renew_lease(sqlite_saver *s, const char *thread, sst_error *err);
void sst__sq_leases_free(sqlite_saver *s);
/* Inside a put's transaction (under mu): takes the thread's lease as lock(wait = false)
 * would (SST_EBUSY when another holds it); *out is the lease to pass to
 * sst__sq_lease_keep once the commit ended (remembered when committed, else freed). */
sst_code sst__sq_lease_take(sqlite_saver *s, const char *thread, held_lease **out, sst_error *err);
void sst__sq_lease_keep(sqlite_saver *s, held_lease *l, bool committed);
/* Inside a put's transaction: deletes this process's lease row of @p thread; once
 * committed, sst__sq_lease_forget drops it from the leases renewed (under mu). */
bool sst__sq_lease_give(sqlite_saver *s, const char *thread, sst_error *err);
void sst__sq_lease_forget(sqlite_saver *s, const char *thread);

#endif /* SUPERSTEP_SQLITE_INT_H */
