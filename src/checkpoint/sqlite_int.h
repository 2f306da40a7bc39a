/* SPDX-License-Identifier: MIT */
/*
 * The SQLite saver's private parts, shared by its files:
 *   sqlite.c          opening, schema and migrations, statement helpers
 *   sqlite_records.c  checkpoints, pending writes, history chunks, listing
 *   sqlite_lease.c    the busy-thread lease
 *   sqlite_check.c    checking every record and repairing damaged threads
 */
#ifndef SUPERSTEP_SQLITE_INT_H
#define SUPERSTEP_SQLITE_INT_H

#include <pthread.h>
#include <sqlite3.h>

#include "checkpoint_int.h"

#define SST__SQLITE_APP_ID 0x53535450 /* "SSTP" */

/* Prepared statements, made once when the file is opened. */
enum {
    S_PUT,
    S_HEAD,
    S_GET_ID,
    S_GET_LATEST,
    S_GET_WRITES,
    S_PUT_WRITES,
    S_DEL_WRITES,
    S_LIST,
    S_LIST_BEFORE,
    S_LOCK,
    S_LOCK_OWNER,
    S_LOCK_TAKE,
    S_LOCK_RENEW,
    S_UNLOCK,
    S_DEL_THREAD_C,
    S_DEL_THREAD_W,
    S_PUT_CHUNK,
    S_GET_CHUNK,
    S_THREADS,
    S_COUNT
};

#define CHUNK 64

/*
 * The chunk ids of a list stored by an earlier snapshot. A later version of
 * the list (add_messages keeps the elements of the old one) reuses the ids
 * of the chunks whose 64 elements are the same values, so a snapshot costs
 * only its new chunks instead of re-encoding the whole history.
 */
#define CHUNK_MEMOS 8
typedef struct chunk_memo {
    sst_value *list; /* owned reference: keeps the elements (and their addresses) alive */
    sst_value *ids;  /* owned: the id of each full chunk */
    uint64_t used;   /* LRU clock */
} chunk_memo;

/* A lease this saver holds, renewed by the commits made under it. */
typedef struct held_lease {
    char *thread;      /* owned */
    uint64_t renew_at; /* ms since the epoch: renew at the first commit after this */
    struct held_lease *next;
} held_lease;

typedef struct sqlite_saver {
    sqlite3 *db;
    char *path; /* owned, for messages */
    pthread_mutex_t mu;
    sqlite3_stmt *st[S_COUNT];    /* protected by mu */
    chunk_memo memo[CHUNK_MEMOS]; /* protected by mu */
    uint64_t memo_clock;
    held_lease *leases;      /* protected by mu */
    uint64_t lease_ms;       /* how long a lease lasts without a commit */
    size_t max_record_bytes; /* the largest text stored (and read back) */
} sqlite_saver;

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
/* The code in @p err, or @p fallback when err is NULL or holds no code. */
sst_code sst__sq_code(const sst_error *err, sst_code fallback);

/* A saver on @p path with its statements prepared (no checkpointer around it). */
sqlite_saver *sst__sq_open(const char *path, const sst_sqlite_opts *o, sst_error *err);
void sst__sq_destroy(void *self);

/* Record operations (sqlite_records.c). */
sst_code sst__sq_put(void *self, const sst_value *record, bool sync, sst_error *err);
sst_code sst__sq_put_writes(void *self, const char *thread, const char *id, const sst_value *writes,
                            bool sync, sst_error *err);
sst_value *sst__sq_get(void *self, const char *thread, const char *id, sst_error *err);
sst_value *sst__sq_list(void *self, const char *thread, const sst_value *filter, size_t limit,
                        sst_error *err);
sst_value *sst__sq_list_page(void *self, const char *thread, const sst_value *filter,
                             const char *before, size_t limit, sst_error *err);
sst_value *sst__sq_threads(void *self, sst_error *err);
sst_code sst__sq_delete_thread(void *self, const char *thread, sst_error *err);
void sst__sq_memo_clear(sqlite_saver *s);
/* The checksums of a checkpoint row's header (with its columns) and of a text. */
uint32_t sst__sq_header_crc(const char *thread, const char *id, const char *parent, int64_t step,
                            const char *header, size_t len);
/* The id of a history chunk: two 64-bit hashes of its text. */
void sst__sq_chunk_id(const char *text, size_t len, char id[40]);
/* Parses a stored text, refusing it when @p crc (if not NULL: a stored sum) differs. */
sst_value *sst__sq_read_text(sqlite_saver *s, const char *text, size_t len, const int64_t *crc,
                             const char *what, sst_error *err);

/* The lease (sqlite_lease.c). */
sst_code sst__sq_lock(void *self, const char *thread, bool wait, sst_error *err);
void sst__sq_unlock(void *self, const char *thread);
/* Inside a commit's transaction: extends the lease on @p thread when due. */
bool sst__sq_renew_lease(sqlite_saver *s, const char *thread, sst_error *err);
void sst__sq_leases_free(sqlite_saver *s);

#endif /* SUPERSTEP_SQLITE_INT_H */
