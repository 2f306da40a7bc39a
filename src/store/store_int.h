/* SPDX-License-Identifier: MIT */
/*
 * The store layer's private parts (include/superstep/store.h is the contract):
 *   store.c       the handle: reference count, options, the calls and their checks
 *   sweeper.c     the background TTL sweeper thread
 *   embed.c       texts of an item's fields through the embed hook into unit vectors
 *   paths.c       LangGraph's field paths (tokenize_path, get_text_at_path)
 *   pytext.c      Python's str() and json.dumps(sort_keys=True) of values
 *   filter.c      checking and matching search filters
 *   items.c       namespaces (checks, joining), timestamps, items as values
 *   vector.c      the contiguous vector array and the dot-product kernel
 *   index.c       the in-memory index both backends share (items, namespaces, vectors)
 *   order.c       a search's order over the index: scores, then write order
 *   nslist.c      list_namespaces: conditions, depth, sorting, paging
 *   memory.c      the in-memory backend
 *   sqlite*.c     the SQLite backend (sqlite_int.h)
 *   postgres*.c   the PostgreSQL backend (postgres_int.h)
 */
#ifndef SUPERSTEP_STORE_INT_H
#define SUPERSTEP_STORE_INT_H

#include <pthread.h>
#include <stdatomic.h>

#include "common.h"
#include "superstep/json.h"
#include "superstep/store.h"

/* ---- field paths (paths.c) ---- */

/* A field path, tokenised as LangGraph's tokenize_path does. */
typedef struct sst__path {
    char *text;    /* the path as given (owned) */
    char **tokens; /* owned; each owned */
    size_t n;
    bool whole; /* "$" or "": the whole value */
} sst__path;

/* Growable list of owned strings. */
typedef struct sst__texts {
    char **s; /* owned; each owned (sst__malloc) */
    size_t n, cap;
} sst__texts;

/* Tokenises @p text into @p p (never fails but for memory: LangGraph accepts any path). */
sst_code sst__path_parse(const char *text, sst__path *p, sst_error *err);
void sst__path_free(sst__path *p);
/* Appends the texts at @p p in @p v to @p out, in LangGraph's order. */
sst_code sst__path_texts(const sst_value *v, const sst__path *p, sst__texts *out, sst_error *err);
/* Appends @p s (copied); false when out of memory. */
bool sst__texts_add(sst__texts *t, const char *s, size_t len);
/* The index of @p s in @p t, or SIZE_MAX. */
size_t sst__texts_find(const sst__texts *t, const char *s);
void sst__texts_free(sst__texts *t);

/* ---- Python's text of values (pytext.c) ---- */

/* Appends json.dumps(v, sort_keys=True, ensure_ascii=False) (sets b->oom on failure). */
void sst__py_json(sst__buf *b, const sst_value *v);
/* Appends str(v) for a scalar (string as is, True/False, ints, float repr). */
void sst__py_str(sst__buf *b, const sst_value *v);
/* Appends Python's repr(float(d)) ("1.0", "1e-05", "1e+16"). */
void sst__py_float(sst__buf *b, double d);

/* ---- filters (filter.c) ---- */

/* SST_EINVAL naming the member when @p filter is not a valid filter (NULL is). */
sst_code sst__filter_check(const sst_value *filter, sst_error *err);
/* True when @p value (an object) matches the checked @p filter. */
bool sst__filter_match(const sst_value *filter, const sst_value *value);

/* ---- namespaces, timestamps, items (items.c) ---- */

enum {
    SST__NS_PUT = 1,      /* put's rules: not empty, first label not "langgraph" */
    SST__NS_WILDCARD = 2, /* "*" is a label pattern (list_namespaces) */
    SST__NS_EMPTY_OK = 4  /* no labels is fine (a search prefix, a list condition) */
};
/* SST_EINVAL naming @p what, the namespace and the bad label. */
sst_code sst__ns_check(const char *const *ns, size_t n, unsigned flags, const char *what,
                       sst_error *err);
/* "a.b.c" in a new string; NULL when out of memory. */
char *sst__ns_join(const char *const *ns, size_t n);
/* Writes "('a', 'b')" into @p out (cut to @p cap) for messages. */
void sst__ns_show(const char *const *ns, size_t n, char *out, size_t cap);
/* Python's datetime.isoformat() of @p us microseconds since the epoch, UTC. */
#define SST__ISO_MAX 40
void sst__iso_time(int64_t us, char out[SST__ISO_MAX]);
/* The wall clock in microseconds since the epoch. */
int64_t sst__clock_us(void);
/*
 * @p it as an item value (new): its value is @p value (borrowed) when not
 * NULL, else it->value, else it->json parsed (SST_EIO naming the item when
 * damaged). With @p search, a "score" member (a number when it->scored).
 */
sst_value *sst__item_value(const sst_store_item *it, const sst_value *value, bool search,
                           sst_error *err);
/* The value of @p it (new): it->value or it->json parsed; SST_EIO naming the item. */
sst_value *sst__item_payload(const sst_store_item *it, sst_error *err);

/* ---- vectors (vector.c) ---- */

/*
 * The vectors of a store's items: rows of dims floats in one contiguous
 * array (so a query reads them at memory speed), each row with the index
 * slot of the item it belongs to. Rows are unit length or zero, so a dot
 * product is the cosine similarity.
 */
typedef struct sst__vecs {
    float *data;     /* n * dims floats (owned) */
    uint32_t *owner; /* n item slots (owned) */
    size_t n, cap, dims;
} sst__vecs;

/* Makes room for @p extra more rows; false when out of memory (unchanged). */
bool sst__vecs_reserve(sst__vecs *vs, size_t extra);
/* Appends a row (room was reserved); returns its index. */
size_t sst__vecs_push(sst__vecs *vs, const float *row, uint32_t owner);
/* Removes row @p r, moving the last row into its place. */
void sst__vecs_remove(sst__vecs *vs, size_t r);
void sst__vecs_free(sst__vecs *vs);
/* Scales @p v to length 1 (a zero vector stays zero). */
void sst__vec_normalize(float *v, size_t dims);
/* True when every float is finite. */
bool sst__vec_finite(const float *v, size_t n);
/*
 * The ranking kernel: out[i] = dot(row i, q) for every row, the rows split
 * over up to @p threads threads (1: the caller's only). Cannot fail: when a
 * thread cannot start, the caller does its part.
 */
void sst__vecs_dots(const sst__vecs *vs, const float *q, float *out, size_t threads);
/*
 * The kernel on some rows only (a gather): out[i] = dot(row rows[i], q) for
 * i < @p n, threaded as sst__vecs_dots. Each score is the one sst__vecs_dots
 * gives that row. @p rows ascending reads the array forwards.
 */
void sst__vecs_dots_at(const sst__vecs *vs, const uint32_t *rows, size_t n, const float *q,
                       float *out, size_t threads);
/* The kernel on one block of @p n rows (exposed for the benchmark and tests). */
void sst__vec_dot_rows(const float *rows, size_t n, size_t dims, const float *q, float *out);

/* ---- the in-memory index (index.c) ---- */

/* A namespace with items, interned. */
typedef struct sst__ixns {
    char *joined;  /* "a.b.c" (owned; the map key) */
    char *buf;     /* "a\0b\0c\0" (owned) */
    char **labels; /* into buf (owned array) */
    size_t len;
    size_t items;  /* items in it; 0: a free slot */
    uint32_t next; /* free list link when free */
} sst__ixns;

/* An item (a slot of the index). */
typedef struct sst__ixitem {
    char *mapkey;    /* "<len>:<ns joined>" then the key (owned; the map key); NULL: free */
    const char *key; /* into mapkey */
    uint32_t ns;     /* its namespace's slot */
    uint32_t n_rows; /* its vectors' rows in the index's vecs */
    uint32_t *rows;  /* owned, cap_rows long */
    uint32_t cap_rows;
    uint32_t next; /* free list link when free */
    uint64_t seq;  /* its last write: larger is newer */
    int64_t rowid; /* SQLite: its row */
    /* the memory backend's record */
    sst_value *value; /* owned reference */
    int64_t created_at_us, updated_at_us;
    _Atomic int64_t expires_at_us; /* refreshed by readers holding the read lock */
    double ttl_minutes;
} sst__ixitem;

#define SST__IX_NONE UINT32_MAX

typedef struct sst__index {
    size_t dims; /* 0: no vectors kept */
    sst__ixns *ns;
    size_t n_ns, cap_ns;
    uint32_t ns_free; /* first free namespace slot, or SST__IX_NONE */
    sst__strmap ns_map;
    sst__ixitem *items;
    size_t n_items, cap_items; /* slots used (live and free) */
    size_t live;
    uint32_t item_free; /* first free item slot, or SST__IX_NONE */
    sst__strmap item_map;
    sst__vecs vecs;
    uint64_t seq; /* the last write order given */
} sst__index;

/* What sst__index_prepare made ready for sst__index_commit (owned until then). */
typedef struct sst__ixput {
    uint32_t slot; /* the item's slot (existing, or the one it will take) */
    bool existing; /* the item was there */
    uint32_t ns;   /* its namespace slot (existing, or the one it will take) */
    bool new_ns;   /* the namespace is new: the fields below are its parts */
    char *joined;  /* new namespace: "a.b" */
    char *buf;     /* new namespace: "a\0b\0" */
    char **labels; /* new namespace: into buf */
    size_t ns_len;
    char *mapkey;   /* new item: its map key */
    size_t key_at;  /* new item: where the key starts in mapkey */
    uint32_t *rows; /* new item: room for its rows */
    size_t n_vectors;
} sst__ixput;

void sst__index_init(sst__index *ix, size_t dims);
void sst__index_free(sst__index *ix);
/* Frees everything and starts again empty (the SQLite backend's reload). */
void sst__index_clear(sst__index *ix);
/* *slot = the slot of (ns, key), or SST__IX_NONE; SST_ENOMEM for a long key without memory. */
sst_code sst__index_lookup(const sst__index *ix, const char *const *ns, size_t ns_len,
                           const char *key, uint32_t *slot, sst_error *err);
/*
 * Allocates what writing (ns, key) with @p n_vectors vectors needs, so that
 * sst__index_commit cannot fail. On failure (SST_ENOMEM) nothing changed.
 */
sst_code sst__index_prepare(sst__index *ix, const char *const *ns, size_t ns_len, const char *key,
                            size_t n_vectors, sst__ixput *p, sst_error *err);
/* Applies a prepared write: the item's vectors are replaced; returns its slot. */
uint32_t sst__index_commit(sst__index *ix, const sst__ixput *p, const float *vectors, uint64_t seq);
/* Gives back what sst__index_prepare reserved but was not committed. */
void sst__index_abort(sst__index *ix, const sst__ixput *p);
/* Removes the item in @p slot (its vectors, its namespace when empty). Never allocates. */
void sst__index_remove(sst__index *ix, uint32_t slot);
/* True when namespace @p ns starts with the labels of @p prefix (whole labels). */
bool sst__index_ns_under(const sst__ixns *ns, const char *const *prefix, size_t prefix_len);

/* ---- a search's order (order.c) ---- */

typedef struct sst__order_entry {
    float score;
    uint32_t slot;
    uint64_t key; /* group (ranked before unranked) and seq, for ordering */
} sst__order_entry;

/* A search's candidates as a heap: popped best first. */
typedef struct sst__order {
    sst__order_entry *heap; /* owned */
    size_t n;
} sst__order;

/*
 * The items of @p ix under @p prefix in a search's order (store.h,
 * sst_store_ops.search): with @p query, by descending best score of their
 * vectors then the items without vectors; each group newest write first.
 * @p threads ranks the vectors in parallel. With @p keep (one byte per item
 * slot, NULL: all), only the items whose byte is not SST__KEEP_NO are
 * candidates, and only their vectors are scored. SST_ENOMEM on failure.
 */
sst_code sst__order_make(const sst__index *ix, const char *const *prefix, size_t prefix_len,
                         const float *query, size_t threads, const uint8_t *keep, sst__order *o,
                         sst_error *err);
/* A search's prefilter verdicts (sst__order_make's keep). */
enum {
    SST__KEEP_NO = 0,      /* not a candidate (filtered out, or expired) */
    SST__KEEP_MATCHED = 1, /* the filter accepted it */
    SST__KEEP_UNKNOWN = 2  /* not decided (the filter failed on it): decide when paging */
};
/* Which namespaces lie under @p prefix (one byte per namespace slot); NULL: out of memory. */
uint8_t *sst__order_ns_mask(const sst__index *ix, const char *const *prefix, size_t prefix_len);
/* The next candidate: false at the end. */
bool sst__order_next(sst__order *o, uint32_t *slot, bool *scored, float *score);
void sst__order_free(sst__order *o);

/* ---- list_namespaces (nslist.c) ---- */

/* Namespaces gathered for one listing (copies of their labels, cut to the depth). */
typedef struct sst__nslist {
    const sst_store_list_opts *q;
    char ***ns; /* each: labels array, NULL-terminated, one allocation */
    size_t n, cap;
    bool oom;
} sst__nslist;

void sst__nslist_init(sst__nslist *l, const sst_store_list_opts *q);
/* Keeps @p ns when it matches the conditions (cut to max_depth). */
void sst__nslist_add(sst__nslist *l, const char *const *ns, size_t ns_len);
/* Sorts, deduplicates, pages and hands the namespaces to @p each; frees the list. */
sst_code sst__nslist_emit(sst__nslist *l, sst_store_ns_fn each, void *user_data, sst_error *err);
/* True when @p ns matches the @p pat labels from its start ("*": any label). */
bool sst__ns_match_prefix(const char *const *ns, size_t ns_len, const char *const *pat,
                          size_t pat_len);
bool sst__ns_match_suffix(const char *const *ns, size_t ns_len, const char *const *pat,
                          size_t pat_len);

/* ---- the handle (store.c) ---- */

struct sst_store {
    sst_store_ops ops;
    void *self;
    atomic_size_t refs;
    size_t dims;
    sst__path *fields; /* owned; n_fields of them (the default: one "$") */
    size_t n_fields;
    sst_embed_fn embed;
    void *embed_user_data;
    double default_ttl_minutes;
    bool refresh_on_read;
    bool omit_expired;
    sst_store_clock_fn clock;
    void *clock_user_data;
    /* the sweeper (sweeper.c) */
    double sweep_interval_minutes;
    bool sweeper_running;
    bool sweeper_stop; /* under sweep_mu */
    pthread_t sweeper;
    pthread_mutex_t sweep_mu;
    pthread_cond_t sweep_cv;
};

/* The store's time now (its clock, or the wall clock). */
int64_t sst__store_now(const sst_store *st);
/* Starts the sweeper when configured; SST_EINVAL/ENOMEM when it cannot. */
sst_code sst__sweeper_start(sst_store *st, sst_error *err);
/* Stops and joins the sweeper (when running). */
void sst__sweeper_stop(sst_store *st);

/*
 * The vectors of @p value for a put: the texts at @p paths (deduplicated, in
 * order) embedded through the hook and normalised. *vectors (sst__malloc,
 * n * st->dims floats) is NULL when there is nothing to embed.
 */
sst_code sst__embed_value(sst_store *st, const sst_value *value, const sst__path *paths,
                          size_t n_paths, float **vectors, size_t *n, sst_error *err);
/* The unit vector of a query text (sst__malloc'd st->dims floats). */
sst_code sst__embed_query(sst_store *st, const char *query, float **vector, sst_error *err);

/* The thread count a search uses for @p requested (0: the CPUs, at most 4). */
size_t sst__store_threads(size_t requested);

/* ---- the provided backends' shared wrapper ---- */

/* SST_EINVAL naming the bad option (sst_store_new checks the same). */
sst_code sst__store_check_opts(const sst_store_opts *o, sst_error *err);
/* sst_store_new for a provided backend; on failure @p destroy(self) is called. */
sst_store *sst__store_wrap(const sst_store_ops *ops, void *self, const sst_store_opts *o,
                           sst_error *err);

/* The application id SQLite files of superstep carry (the checkpointer's: one file format). */
#define SST__STORE_SQLITE_APP_ID 0x53535450 /* "SSTP" */

#endif /* SUPERSTEP_STORE_INT_H */
