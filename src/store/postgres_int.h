/* SPDX-License-Identifier: MIT */
/*
 * The PostgreSQL store's private parts (LangGraph's PostgresStore), shared by
 * its files:
 *   postgres.c         opening (the pool, the schema, the vector size check),
 *                      the tables, and helpers (namespaces, vectors, errors)
 *   postgres_ops.c     put, delete, get, list_namespaces and sweep
 *   postgres_search.c  search: reading, filtering, ranking and paging
 *
 * Tables (schema component "store", common/pg.h sst__pg_schema):
 *   sst_store_items(ns, key, value, created_us, updated_us, expires_us,
 *               ttl_minutes, seq)   one row per item, PRIMARY KEY (ns, key).
 *       ns is the labels as text[] COLLATE "C": a prefix of whole labels is
 *       a range of the primary key (postgres.c, k_prefix), and ORDER BY ns
 *       sorts label by label in bytes, as the contract lists namespaces.
 *       value is the JSON text as bytes (opaque); times are microseconds of
 *       the store's clock; expires_us and ttl_minutes are NULL for none; seq
 *       (sst_store_seq) is the write order: the newest write is the largest.
 *   sst_store_vectors(ns, key, n, vector)  an item's vectors: float32
 *       little-endian, unit length, n the vector's place among the item's;
 *       deleted with their item (ON DELETE CASCADE).
 *
 * Nothing about the items is kept in the process: every call reads
 * PostgreSQL, so any number of processes share one store. Invariants are
 * PostgreSQL's: the upsert serialises puts of an item on its row, sweeps skip
 * rows others hold (SKIP LOCKED). The handle is immutable after opening, so
 * any thread may call it at once with no lock of ours.
 */
#ifndef SUPERSTEP_STORE_POSTGRES_INT_H
#define SUPERSTEP_STORE_POSTGRES_INT_H

#include "common/pg.h"
#include "store_int.h"

typedef struct pgstore {
    sst_pg *pg;     /* a reference: own, or shared with a saver and a queue */
    size_t dims;    /* the index's vector size (0: no index) */
    size_t threads; /* for ranking */
} pgstore;

/*
 * The condition "ns lies under the prefix $N" (whole labels) as an index
 * range: $N is the prefix's labels joined with '.' (labels hold no '.'), and
 * every label array starting with them sorts at or after them and before
 * them with chr(1) appended to the last label (text holds no NUL, so nothing
 * but that label itself lies between the two). COL is the column.
 */
#define SST__PGS_UNDER(col, n)                                                                     \
    " " col " >= string_to_array($" n "::text, '.') COLLATE \"C\" AND " col                        \
    " < string_to_array($" n "::text || chr(1), '.') COLLATE \"C\" "

/* Fills @p err with "store (PostgreSQL NAME): <what>" and returns @p code. */
sst_code sst__pgs_error(const pgstore *s, sst_error *err, sst_code code, const char *fmt, ...)
    SST_PRINTF(4, 5);
/*
 * Splits @p joined ("a.b", owned by the caller, len bytes) into labels: one
 * allocation holding the pointers then the text, NULL-terminated array.
 * NULL when out of memory.
 */
char **sst__pgs_split(const char *joined, size_t len, size_t *n);
/* Copies @p n floats from the little-endian bytes at @p src. */
void sst__pgs_floats_in(float *dst, const void *src, size_t n);
/* @p n floats as little-endian bytes (sst__malloc'd); NULL when out of memory. */
void *sst__pgs_floats_out(const float *src, size_t n);
/* Appends @p s, quoted, to a text[] literal in @p b (the braces and commas are the caller's). */
void sst__pgs_array_add(sst__buf *b, const char *s);
/* @p v in float8's binary format, for a `$N::float8` parameter sent with sst__pg_bytes. */
void sst__pgs_float8(unsigned char out[8], double v);
/* A float8 column of a binary result (0 for NULL). */
double sst__pgs_double_at(const PGresult *r, int row, int col);

/* The operations (postgres_ops.c, postgres_search.c), installed by the constructors. */
sst_code sst__pgs_search(void *self, const sst_store_query *q, sst_store_item_fn each,
                         void *user_data, sst_error *err);
/*
 * Refreshes the TTLs of the items named by @p ns (text[] literal of joined
 * namespaces) and @p keys (text[] literal) to @p now_us + their TTL, in one
 * write transaction (synchronous_commit off: a lost refresh costs nothing).
 */
sst_code sst__pgs_refresh(pgstore *s, const char *ns, const char *keys, int64_t now_us,
                          sst_error *err);
extern const sst_store_ops sst__pgs_ops;
/* Drops the pool reference and frees the handle (the ops' destroy). */
void sst__pgs_destroy(void *self);

#endif /* SUPERSTEP_STORE_POSTGRES_INT_H */
