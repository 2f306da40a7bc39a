/* SPDX-License-Identifier: MIT */
/*
 * The long-term memory store contract (the store layer, beside checkpoint,
 * below graph): LangGraph's BaseStore in C.
 *
 * A store keeps JSON objects ("items") under a namespace (a path of labels,
 * such as ("users", "42", "memories")) and a key, and finds them again by
 * key, by namespace prefix with filters on their content, and, when the
 * store has an index, by meaning: the texts at chosen paths of each item are
 * embedded into vectors by a hook (sst_embed_fn), and a query text is ranked
 * against them by cosine similarity. Items may expire (a TTL in minutes,
 * refreshed when they are read).
 *
 * Two parts, as checkpoint.h: the generic layer (this header's calls) checks
 * arguments, embeds texts through the hook, applies TTL defaults, parses
 * filters and builds the items callers see; a backend (sst_store_ops) stores
 * an item's value as an opaque payload and indexes only its namespace, key,
 * timestamps, expiry and vectors. A third backend implements sst_store_ops
 * without reading anything else; tests/unit/test_store_contract.c is the
 * suite every backend passes. This library provides three: an in-memory
 * store, a SQLite store (which may share its file with the SQLite
 * checkpointer) and a PostgreSQL store (shared by many processes).
 *
 * Semantics are LangGraph's (langgraph.store.base, InMemoryStore,
 * SqliteStore, PostgresStore). Where those disagree, this contract picks one
 * rule for every backend and says so: see "Choices" below.
 *
 * Items as values (new references, immutable):
 *   {"namespace": ["users", "42"], "key": "k", "value": {...},
 *    "created_at": "2026-11-23T06:50:01.123456+00:00",
 *    "updated_at": "2026-11-23T06:50:01.123456+00:00"}
 * as Item.dict() prints them: timestamps are UTC in Python's
 * datetime.isoformat() form (microseconds, left out when zero, as Python
 * does). Search results are SearchItems: the same members plus "score" (a
 * number when the search had a query and the item has vectors, else null).
 * A put keeps the item's created_at and sets updated_at.
 *
 * Namespaces. A namespace is 1 or more labels; a label is a non-empty UTF-8
 * string without '.'. A put also refuses "langgraph" as the first label
 * (LangGraph reserves it); get, delete and search accept it. Keys are any
 * UTF-8 string.
 *
 * Choices (where LangGraph's backends differ):
 *   - Search without a query returns the most recently written items first
 *     (SqliteStore and PostgresStore: ORDER BY updated_at DESC; InMemoryStore
 *     returns insertion order).
 *   - Search with a query returns the items with vectors by descending score
 *     (ties: the order without a query), then the matching items without
 *     vectors (put with no_index, or nothing to embed) with score null, as
 *     InMemoryStore does; offset and limit apply to that whole sequence.
 *     (SqliteStore and PostgresStore leave those items out.)
 *   - A put replaces all of an item's vectors (LangGraph's memory and SQLite
 *     stores keep vectors of fields the new value no longer has).
 *   - Filters: see sst_store_search_opts.filter.
 *   - list_namespaces lists the namespaces that hold items (a namespace whose
 *     last item was deleted is gone), sorted as Python sorts tuples.
 *   - TTL is supported by both provided stores (LangGraph's InMemoryStore
 *     has none).
 *   - The field path "$" is the whole value wherever it is given (LangGraph
 *     reads a per-put index=["$"] as a member named "$").
 *
 * Field paths (index.fields, sst_store_put_opts.index_fields) are LangGraph's
 * get_text_at_path: "$" (or "") is the whole value as json.dumps(value,
 * sort_keys=True, ensure_ascii=False) prints it; "a.b" a member of a member;
 * "a[0]", "a[-1]" an element; "a[*]" every element, each its own vector;
 * "a.*" every member; "{a,b.c}" several members. A string is embedded as it
 * is, a number or boolean as Python's str() prints it ("25", "1.5", "True"),
 * an array or object as json.dumps prints it; null and missing paths give
 * nothing. An item yields each distinct text once (one vector per text). As
 * in LangGraph, "$" is special only alone: "$.a" looks for a member named
 * "$", then its member "a".
 *
 * Ownership: every pointer passed into a call is borrowed for that call.
 *
 * Thread-safety: a store may be used by several threads at once (graph nodes
 * on the worker pool share one). The embed hook is called without any store
 * lock held, possibly from several threads at once: it must be thread-safe.
 * A backend callback (sst_store_item_fn, sst_store_match_fn, sst_store_ns_fn)
 * runs while the backend may hold its locks: it must not call the store.
 *
 * Lifetime: a store is reference counted like a checkpointer. sst_store_free
 * drops the creator's reference; whoever keeps the store (a compiled graph, a
 * runtime) holds its own, and the backend is closed when the last goes.
 */
#ifndef SUPERSTEP_STORE_H
#define SUPERSTEP_STORE_H

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

typedef struct sst_store sst_store;

/* ---- the embedding hook --------------------------------------------------- */

/**
 * Embeds @p n texts (NUL-terminated UTF-8, borrowed) into @p out, a row-major
 * array of n * @p dims floats the store provides: row i is the vector of
 * texts[i]. Vectors need not be normalised (the store does it); a zero
 * vector is allowed (it scores 0). On failure return a code and fill @p err
 * (the store keeps the hook's message and names the hook); nothing is stored.
 * Called without store locks held, maybe from several threads at once.
 */
typedef sst_code (*sst_embed_fn)(void *user_data, const char *const *texts, size_t n, size_t dims,
                                 float *out, sst_error *err);

/* ---- options -------------------------------------------------------------- */

/** A clock for TTLs: microseconds since the Unix epoch (tests and simulations). */
typedef int64_t (*sst_store_clock_fn)(void *user_data);

/** Store options (LangGraph's IndexConfig and TTLConfig); fill with sst_store_opts_init. */
typedef struct sst_store_opts {
    struct {
        size_t dims;               /* vector size; 0: no index (queries are ignored) */
        const char *const *fields; /* paths to embed; NULL: {"$"}, the whole value */
        size_t n_fields;           /* entries in fields */
        sst_embed_fn embed;        /* required when dims > 0 */
        void *embed_user_data;     /* handed to embed */
    } index;
    double default_ttl_minutes;    /* TTL of puts that ask for the default; 0: none */
    bool refresh_on_read;          /* get/search refresh TTLs by default; default true */
    bool omit_expired;             /* reads skip expired items not yet swept; default false */
    double sweep_interval_minutes; /* > 0: a thread deletes expired items this often */
    size_t search_threads;         /* threads ranking one query; 0: the CPUs (at most 4) */
    sst_store_clock_fn clock;      /* NULL: the system clock */
    void *clock_user_data;         /* handed to clock */
} sst_store_opts;

/** Sets the defaults: no index, no TTL, refresh_on_read true, the system clock. */
SST_API void sst_store_opts_init(sst_store_opts *o);

/** put's ttl_minutes: the store's default_ttl_minutes. */
#define SST_STORE_TTL_DEFAULT 0.0
/** put's ttl_minutes: no expiry, whatever the store's default. */
#define SST_STORE_TTL_NONE (-1.0)

/** Per-put options (LangGraph's put(index=..., ttl=...)); zero is the default. */
typedef struct sst_store_put_opts {
    double ttl_minutes;              /* SST_STORE_TTL_DEFAULT, SST_STORE_TTL_NONE or minutes > 0 */
    bool no_index;                   /* true: no vectors for this item (index=False) */
    const char *const *index_fields; /* non-NULL: embed these paths, not the store's fields */
    size_t n_index_fields;
} sst_store_put_opts;

SST_API void sst_store_put_opts_init(sst_store_put_opts *o);

/** What sst_store_search returns; fill with sst_store_search_opts_init. */
typedef struct sst_store_search_opts {
    const char *const *prefix; /* namespace prefix (whole labels; "*" is literal) */
    size_t prefix_len;         /* 0: every namespace */
    /*
     * A JSON object each item's value must match, or NULL. Each member names
     * a path in the value (a member of that name, else "a.b" is member b of
     * member a; a missing path reads as null) and gives a value or operators:
     *   value             equal (numbers by value: 1 equals 1.0; true is not 1);
     *                     an object matches an object having at least those
     *                     members, each matching recursively; an array an array
     *                     of the same length whose elements match in order;
     *                     null matches null and missing paths;
     *   {"$eq": v}        equal, as above but whole (objects compare whole);
     *   {"$ne": v}        not equal (a missing path is not equal to "x");
     *   {"$gt": v}, {"$gte": v}, {"$lt": v}, {"$lte": v}
     *                     numbers compare by value, strings by their UTF-8
     *                     bytes; any other pair (a missing path, a string
     *                     against a number) does not match.
     * An object with a member starting with '$' is read as operators: any
     * other member is SST_EINVAL naming it. The filter applies before ranking.
     */
    const sst_value *filter;
    const char *query; /* text to rank by (needs an index); NULL or "": none */
    size_t limit;      /* at most this many; default 10 (0 reads as 10) */
    size_t offset;     /* skip this many first */
    int refresh_ttl;   /* refresh the TTLs of the items returned: 1, 0, -1 the store's default */
} sst_store_search_opts;

SST_API void sst_store_search_opts_init(sst_store_search_opts *o);

/** What sst_store_list_namespaces returns; fill with sst_store_list_opts_init. */
typedef struct sst_store_list_opts {
    const char *const *prefix; /* namespaces starting with these labels ("*": any one label) */
    size_t prefix_len;         /* 0: no condition */
    const char *const *suffix; /* namespaces ending with these labels ("*": any one label) */
    size_t suffix_len;         /* 0: no condition */
    size_t max_depth;          /* > 0: cut namespaces to this many labels (deduplicated) */
    size_t limit;              /* at most this many; default 100 (0 reads as 100) */
    size_t offset;             /* skip this many first */
} sst_store_list_opts;

SST_API void sst_store_list_opts_init(sst_store_list_opts *o);

/* ---- the implementation interface ---------------------------------------- */

/** The ops version this header describes. */
#define SST_STORE_OPS_VERSION 1

/** The backend keeps item values as sst_value (it lives in this process). */
#define SST_STORE_VALUES 1u

/**
 * An item as the generic layer hands it to a backend and gets it back.
 * Strings are NUL-terminated UTF-8. The value is a JSON object: bytes for
 * backends without SST_STORE_VALUES, a value for those with it (readers of
 * a returned item accept either).
 */
typedef struct sst_store_item {
    const char *const *ns; /* the namespace's labels */
    size_t ns_len;
    const char *key;
    const char *json;       /* the value as JSON text, or NULL */
    size_t json_len;        /* bytes at json */
    const sst_value *value; /* or the value, or NULL */
    int64_t created_at_us;  /* put: the time now (a backend keeps an existing item's) */
    int64_t updated_at_us;  /* put: the time now */
    int64_t expires_at_us;  /* 0: never */
    double ttl_minutes;     /* 0: none; else what a refresh adds to the time of reading */
    /* put: the item's vectors, n_vectors rows of dims floats, each of length 1 or
     * 0 (the store normalised them). Backends keep them, replacing the old ones. */
    const float *vectors;
    size_t n_vectors;
    size_t dims;
    /* search results: the item's score (the largest of its vectors' cosine
     * similarities with the query) when scored is true */
    bool scored;
    double score;
} sst_store_item;

/** Receives one item; a failure stops the call and is returned by it. */
typedef sst_code (*sst_store_item_fn)(void *user_data, const sst_store_item *item, sst_error *err);

/** Decides whether an item matches the search's filter (*matches). */
typedef sst_code (*sst_store_match_fn)(void *match_data, const sst_store_item *item, bool *matches,
                                       sst_error *err);

/** Receives one namespace (borrowed labels); a failure stops the listing. */
typedef sst_code (*sst_store_ns_fn)(void *user_data, const char *const *ns, size_t ns_len,
                                    sst_error *err);

/** How a read treats TTLs. */
typedef struct sst_store_read {
    int64_t now_us;    /* the time of the call */
    bool refresh_ttl;  /* set expires_at = now + ttl_minutes on the items read that have a TTL */
    bool omit_expired; /* skip items with 0 < expires_at <= now */
} sst_store_read;

/** A search as a backend receives it (the generic layer made the vector and the matcher). */
typedef struct sst_store_query {
    const char *const *prefix; /* namespace prefix, whole labels; prefix_len 0: all */
    size_t prefix_len;
    const float *vector; /* the query, dims floats of length 1 or 0; NULL: no ranking */
    size_t dims;
    size_t limit; /* >= 1 */
    size_t offset;
    sst_store_match_fn match; /* the filter, or NULL: every item matches */
    void *match_data;
    sst_store_read read;
} sst_store_query;

/**
 * What a backend implements (LangGraph's BaseStore.batch, one operation at a
 * time). Fill it by field name with @c version = SST_STORE_OPS_VERSION:
 * later versions append fields and a backend built against an older header
 * keeps working. Every function fills @p err on failure with a message
 * naming the store and the problem; a storage failure is SST_EIO (SST_EBUSY
 * when locked out), never SST_ENOTFOUND. Each call is atomic: on failure
 * nothing changed. Required: put, delete_item, get, search, list_namespaces.
 * Every function may be called from several threads at once.
 */
typedef struct sst_store_ops {
    unsigned version; /* SST_STORE_OPS_VERSION as the backend was built */
    unsigned flags;   /* SST_STORE_VALUES */
    /* Frees the backend; called once, when the last reference goes. */
    void (*destroy)(void *self);
    /*
     * Stores @p item, replacing the item of the same namespace and key: its
     * value, updated_at, expiry, TTL and all its vectors are replaced; its
     * created_at stays. The write of one item is atomic.
     */
    sst_code (*put)(void *self, const sst_store_item *item, sst_error *err);
    /* Deletes the item and its vectors; an absent item is not an error. */
    sst_code (*delete_item)(void *self, const char *const *ns, size_t ns_len, const char *key,
                            sst_error *err);
    /*
     * Calls @p each once with the item (without vectors) when it exists (and,
     * with r->omit_expired, has not expired); refreshes its TTL first when
     * r->refresh_ttl.
     */
    sst_code (*get)(void *self, const char *const *ns, size_t ns_len, const char *key,
                    const sst_store_read *r, sst_store_item_fn each, void *user_data,
                    sst_error *err);
    /*
     * Calls @p each for the page of the items in namespaces starting with
     * q->prefix (whole labels) that q->match accepts, in this order:
     *   - without q->vector: the most recently written first;
     *   - with q->vector: the items with vectors, by descending score (the
     *     largest dot product of the query with one of the item's vectors;
     *     ties in the order above), with item->scored set; then the items
     *     without vectors in the order above, scored false.
     * The page skips q->offset accepted items and has at most q->limit. The
     * filter applies before paging: a backend may call match on items in
     * any order and as often as it likes, and must call it before each. With
     * q->read.refresh_ttl the TTLs of the items returned are refreshed.
     */
    sst_code (*search)(void *self, const sst_store_query *q, sst_store_item_fn each,
                       void *user_data, sst_error *err);
    /*
     * Calls @p each for the page of the namespaces holding items (with
     * r->omit_expired: items not expired) that match q's prefix and suffix
     * ("*" matches any one label; a condition longer than the namespace does
     * not match), cut to q->max_depth labels when it is > 0 and deduplicated,
     * sorted label by label (bytes; a namespace sorts before the longer ones
     * it starts), skipping q->offset and at most q->limit (>= 1).
     */
    sst_code (*list_namespaces)(void *self, const sst_store_list_opts *q, const sst_store_read *r,
                                sst_store_ns_fn each, void *user_data, sst_error *err);
    /* Deletes the items with 0 < expires_at <= @p now_us; *removed counts them.
     * Optional (sst_store_sweep_ttl gives SST_ENOTSUP without it). */
    sst_code (*sweep)(void *self, int64_t now_us, size_t *removed, sst_error *err);
} sst_store_ops;

/**
 * Wraps a backend: @p ops is copied, @p self is handed to every call and to
 * destroy, @p opts (NULL: the defaults) is copied. A background sweeper
 * starts when opts->sweep_interval_minutes > 0 and ops has sweep.
 * @return new store holding one reference; NULL with SST_EINVAL (a required
 *         operation missing, index.dims > 0 without embed, a bad field path
 *         or TTL), SST_ENOTSUP (ops built for a newer version), SST_ENOMEM.
 *         On failure @p self is not destroyed.
 */
SST_NODISCARD SST_API sst_store *sst_store_new(const sst_store_ops *ops, void *self,
                                               const sst_store_opts *opts, sst_error *err);
/** Adds a reference; returns @p st. */
SST_API sst_store *sst_store_ref(sst_store *st);
/** Drops a reference; the last one stops the sweeper and destroys the backend. NULL: no-op. */
SST_API void sst_store_free(sst_store *st);
/** The backend's self pointer (borrowed). */
SST_API void *sst_store_self(const sst_store *st);
/** The index's vector size (0: no index). */
SST_API size_t sst_store_dims(const sst_store *st);

/* ---- the calls ------------------------------------------------------------ */

/*
 * Every call checks its arguments first (SST_EINVAL naming the bad one: the
 * namespace and its label, the key, the value's type, the filter member and
 * operator) and changes nothing when it fails.
 */

/**
 * Stores @p value (a JSON object) under (ns, key), replacing what was there
 * (LangGraph's put). With an index, the texts at the store's fields (or
 * o->index_fields) are embedded first, through the hook, outside any lock.
 * @param o NULL: the defaults (store's TTL and fields)
 * @return SST_OK; SST_EINVAL (namespace, key, TTL), SST_ETYPE (value not an
 *         object), the hook's code with "embed hook: <its message>" (nothing
 *         stored), SST_EIO, SST_ENOMEM.
 */
SST_NODISCARD SST_API sst_code sst_store_put(sst_store *st, const char *const *ns, size_t ns_len,
                                             const char *key, const sst_value *value,
                                             const sst_store_put_opts *o, sst_error *err);

/** Deletes (ns, key); deleting an absent item is SST_OK. */
SST_NODISCARD SST_API sst_code sst_store_delete(sst_store *st, const char *const *ns, size_t ns_len,
                                                const char *key, sst_error *err);

/**
 * The item (ns, key) (LangGraph's get).
 * @param refresh_ttl 1: refresh its TTL; 0: do not; -1: the store's refresh_on_read
 * @return new item object, or sst_null() when there is none; NULL only on
 *         failure (SST_EINVAL, SST_EIO, SST_ENOMEM).
 */
SST_NODISCARD SST_API sst_value *sst_store_get(sst_store *st, const char *const *ns, size_t ns_len,
                                               const char *key, int refresh_ttl, sst_error *err);

/**
 * Items by namespace prefix, filter and query (LangGraph's search); see the
 * order in sst_store_ops.search. A query on a store without an index is
 * ignored (no scores), as LangGraph does.
 * @param q NULL: every item, the first 10
 * @return new array of search items; NULL with SST_EINVAL (prefix, filter),
 *         the hook's code (query embedding), SST_EIO, SST_ENOMEM.
 */
SST_NODISCARD SST_API sst_value *sst_store_search(sst_store *st, const sst_store_search_opts *q,
                                                  sst_error *err);

/**
 * The namespaces holding items (LangGraph's list_namespaces), as an array of
 * arrays of strings.
 * @param q NULL: all, the first 100
 * @return new array; NULL with SST_EINVAL (a bad label), SST_EIO, SST_ENOMEM.
 */
SST_NODISCARD SST_API sst_value *
sst_store_list_namespaces(sst_store *st, const sst_store_list_opts *q, sst_error *err);

/**
 * Deletes expired items now (LangGraph's sweep_ttl).
 * @param removed OUT (may be NULL): how many were deleted
 * @return SST_OK; SST_ENOTSUP (the backend cannot), SST_EIO.
 */
SST_NODISCARD SST_API sst_code sst_store_sweep_ttl(sst_store *st, size_t *removed, sst_error *err);

/* ---- the provided backends ----------------------------------------------- */

/**
 * A store in memory (LangGraph's InMemoryStore), lost with the process. It
 * keeps values as given (SST_STORE_VALUES) and vectors in one contiguous
 * float array. Memory: dims * 4 bytes per vector, plus about 200 bytes per
 * item with its key and namespace, plus the value itself.
 * @return new store; NULL with the errors of sst_store_new.
 */
SST_NODISCARD SST_API sst_store *sst_memory_store_new(const sst_store_opts *o, sst_error *err);

/**
 * Opens (or creates) a store in the SQLite file at @p path (LangGraph's
 * SqliteStore). Its tables (store_meta, store_items, store_vectors) live
 * beside the SQLite checkpointer's, so one file may hold both (open each
 * with its own call). WAL journal, synchronous NORMAL, busy timeout 5 s; each
 * put is one transaction. A "file:" URI is accepted ("file:x.db?mode=ro"
 * opens read-only: reads work but refresh no TTLs, writes fail with SST_EIO).
 *
 * Memory: for vector search without reading the file, the store keeps every
 * vector in memory too, in one contiguous float array (dims * 4 bytes per
 * vector: 600 MB for 100 000 items of 1536 dims), with each item's namespace
 * and key (about 200 bytes per item); they are loaded when the file is
 * opened (about 2.5 s for those 100 000 items, see bench/bench_store.c). Another process writing
 * the same store is noticed at the next call, which then reloads them.
 *
 * @return new store; NULL with SST_EIO and a message naming the file and the
 *         problem: it cannot be opened, it is not a SQLite database, it is
 *         another application's database, its store schema is newer than
 *         this build, it holds vectors of another size than opts index.dims;
 *         or the errors of sst_store_new. Nothing is written to such a file.
 */
SST_NODISCARD SST_API sst_store *sst_sqlite_store_new(const char *path, const sst_store_opts *o,
                                                      sst_error *err);

/**
 * sst_sqlite_store_new on a connection shared with other backends of this
 * process (include/superstep/sqlite.h). The store holds a reference to
 * @p db until it is freed.
 * @return new store; NULL as sst_sqlite_store_new, or SST_EINVAL for a NULL @p db.
 */
SST_NODISCARD SST_API sst_store *sst_sqlite_store_new_db(sst_sqlite_db *db, const sst_store_opts *o,
                                                         sst_error *err);

/** The store schema version this build writes in SQLite files. */
#define SST_STORE_SQLITE_SCHEMA_VERSION 1

/**
 * Opens (or creates) a store in a PostgreSQL database (LangGraph's
 * PostgresStore), shared by every process that opens the same database and
 * schema: what one writes, the others read at their next call (nothing is
 * cached in the process). Its tables (sst_store_items, sst_store_vectors, the
 * sequence sst_store_seq) are created or migrated on opening (schema component
 * "store" in sst_schema, beside the PostgreSQL saver's and queue's). Each put,
 * delete and sweep is one transaction, run again whole on a new connection
 * when the connection is lost (for up to the pool's retry_ms).
 *
 * Vectors are stored as bytea (float32) and ranked in this process: a
 * search with a query reads every item under its prefix with its vectors
 * (dims * 4 bytes per vector over the network, per query), so keep prefixes
 * to some thousands of items with vectors; searches without a query read
 * only what they return (and, with a filter, what the filter looked at).
 * TTLs are kept as in the SQLite store; sweeps of several processes at once
 * skip one another's rows.
 *
 * @param url as sst_pg_open (NULL or "": libpq's PG* environment variables);
 *            the store opens its own pool (sst_pg_opts defaults).
 * @param o   NULL: the defaults
 * @return new store; NULL with SST_EUNAVAILABLE (the server cannot be
 *         reached), SST_EINVAL (a malformed URL, bad options), SST_ENOTSUP
 *         (the store tables are at a newer schema version than this build's:
 *         nothing is changed), SST_EIO (the tables hold vectors of another
 *         size than o->index.dims, or another failure, naming the database),
 *         SST_ENOMEM.
 */
SST_NODISCARD SST_API sst_store *sst_postgres_store_new(const char *url, const sst_store_opts *o,
                                                        sst_error *err);

/**
 * sst_postgres_store_new on a pool shared with the saver and queue of this
 * process (include/superstep/postgres.h). The store holds a reference to
 * @p pg until it is freed.
 * @return new store; NULL as sst_postgres_store_new, or SST_EINVAL for a NULL @p pg.
 */
SST_NODISCARD SST_API sst_store *sst_postgres_store_new_pg(sst_pg *pg, const sst_store_opts *o,
                                                           sst_error *err);

/** The store schema version this build writes in PostgreSQL (component "store"). */
#define SST_STORE_POSTGRES_SCHEMA_VERSION 1

#ifdef __cplusplus
}
#endif
#endif /* SUPERSTEP_STORE_H */
