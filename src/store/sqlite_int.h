/* SPDX-License-Identifier: MIT */
/*
 * The SQLite store's private parts, shared by its files:
 *   sqlite.c      opening a file, the schema, loading the in-memory index,
 *                 noticing other processes' writes
 *   sqlite_ops.c  the operations (put, delete, get, search, list, sweep)
 *
 * Tables (beside the checkpointer's, in the same file if wanted):
 *   store_meta(key, value)      'schema' (SST_STORE_SQLITE_SCHEMA_VERSION) and
 *                               'generation' (+1 on every write of items)
 *   store_items(id, ns, key, value, created_us, updated_us, expires_us,
 *               ttl_minutes, seq)  one row per item; ns is the labels joined
 *                               with '.'; value is the JSON text; seq the
 *                               generation of its last write
 *   store_vectors(item, n, vector)  an item's vectors: float32 little-endian,
 *                               unit length
 *
 * Locking: `lk` (read-write) guards the in-memory index and `mu` the
 * connection; lock order lk, then mu. Writers hold both; searches hold lk
 * for reading while they rank (without mu) and take mu to read rows.
 */
#ifndef SUPERSTEP_STORE_SQLITE_INT_H
#define SUPERSTEP_STORE_SQLITE_INT_H

#include <sqlite3.h>

#include "store_int.h"

/* Prepared statements, made when the file is opened. */
enum {
    Q_BEGIN,
    Q_BEGIN_WRITE,
    Q_COMMIT,
    Q_ROLLBACK,
    Q_DATA_VERSION,
    Q_GENERATION,
    Q_SET_GENERATION,
    Q_UPSERT,
    Q_DEL_VECTORS,
    Q_ADD_VECTOR,
    Q_FIND,
    Q_DEL_ITEM,
    Q_GET,
    Q_ROW,
    Q_REFRESH,
    Q_EXPIRED,
    Q_LIVE_NS,
    Q_LOAD,
    Q_LOAD_KEYS,
    Q_COUNT
};

typedef struct sqstore {
    char *path;                 /* owned */
    sqlite3 *db;                /* conn's; under mu */
    struct sst_sqlite_db *conn; /* a reference: own, or shared with a saver and a queue */
    sqlite3_stmt *q[Q_COUNT];
    pthread_mutex_t *mu;  /* conn's (recursive) */
    pthread_rwlock_t lk;  /* the index */
    sst__index ix;        /* under lk */
    int64_t generation;   /* the generation the index reflects (written under lk and mu) */
    int64_t data_version; /* the last PRAGMA data_version seen (under mu) */
    size_t threads;       /* for ranking */
    bool read_only;
} sqstore;

/* SST_EINVAL: a call inside sst_sqlite_db_begin .. commit (its index lock would be taken
 * after the connection's, the reverse of every other call: a deadlock). */
sst_code sst__sqs_in_batch(sqstore *s, sst_error *err);
/* Fills @p err with "store 'PATH': WHAT: <sqlite message>"; SST_EBUSY when locked, else SST_EIO. */
sst_code sst__sqs_error(sqstore *s, sst_error *err, const char *what);
/* Runs a statement without results (reset afterwards); false with @p err filled. */
bool sst__sqs_run(sqstore *s, int q, const char *what, sst_error *err);
/* The store's generation (store_meta), within the caller's transaction. */
sst_code sst__sqs_generation(sqstore *s, int64_t *gen, sst_error *err);
/*
 * Makes the index current: when another connection wrote the store since
 * the index was loaded (a different generation), reloads it. Takes lk for
 * writing only then. Call without lk or mu held.
 */
sst_code sst__sqs_fresh(sqstore *s, sst_error *err);
/*
 * Within a transaction the caller holds (with lk written and mu): reloads
 * the index when the generation differs from the one it reflects.
 */
sst_code sst__sqs_sync_locked(sqstore *s, int64_t *gen, sst_error *err);
/* Splits "a.b" into labels in @p buf (at least strlen + 1 bytes) and @p labels. */
size_t sst__sqs_split_ns(const char *joined, char *buf, const char **labels, size_t max);
/* True on big-endian hosts (vectors are stored little-endian). */
bool sst__sqs_big_endian(void);
/* Copies @p n floats from the little-endian bytes at @p src. */
void sst__sqs_floats_in(float *dst, const void *src, size_t n);
/* Copies @p n floats to little-endian bytes at @p dst. */
void sst__sqs_floats_out(void *dst, const float *src, size_t n);

/* The operations (sqlite_ops.c), installed by sst_sqlite_store_new. */
extern const sst_store_ops sst__sqs_ops;
void sst__sqs_destroy(void *self);

#endif /* SUPERSTEP_STORE_SQLITE_INT_H */
