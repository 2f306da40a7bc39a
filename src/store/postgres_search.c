/* SPDX-License-Identifier: MIT */
/*
 * The PostgreSQL store's search (store.h, sst_store_ops.search): the filter
 * callback runs in C on each candidate before paging, as the contract says,
 * so the order and the page are made here from rows PostgreSQL hands over.
 *
 * Without a query (or without an index) the order is the write order, seq
 * descending, which an index gives: with no filter PostgreSQL pages too and
 * only the page travels; with a filter the rows come in batches, newest
 * first, until offset + limit of them passed it (a batch starts below the
 * last seq seen, so an item rewritten meanwhile is not met twice).
 *
 * With a query, every item under the prefix is read with its vectors in one
 * statement and ranked in C by the kernel the other backends use
 * (vector.c), so scores agree with theirs to the bit. The cost at scale:
 * each query moves every vector under the prefix over the network (dims * 4
 * bytes per vector: 600 MB for 100 000 items of 1 536 dims) and scores them
 * all; that is fine up to some thousands of items per prefix and then
 * needs an index. With pgvector (Debian 12 has none) the vectors would be a
 * vector(dims) column with an HNSW index (vector_ip_ops), and this file
 * would ask PostgreSQL for the k nearest vectors under the prefix
 * (ORDER BY vector <#> $query LIMIT k, k well above offset + limit to leave
 * room for the filter and for several vectors of one item), group them by
 * item for the best score, and fall back to this full read only when the
 * filter rejects too many of them.
 */
#include <stdio.h>
#include <string.h>

#include "postgres_int.h"

/* Result columns of both reads: the item, then (ranking) its vectors. */
enum { C_NS, C_KEY, C_VALUE, C_CREATED, C_UPDATED, C_EXPIRES, C_TTL, C_SEQ, C_VECS, C_BAD };

#define ITEM_COLS                                                                                  \
    "array_to_string(i.ns, '.'), i.key, i.value, i.created_us, i.updated_us,"                      \
    " i.expires_us, i.ttl_minutes, i.seq"

/* The write order, newest first, below seq $1 (omit expired: $2 false, now $3). */
#define SEQ_SQL(under)                                                                             \
    "SELECT " ITEM_COLS " FROM sst_store_items i WHERE " under " i.seq < $1::bigint"               \
    " AND ($2::bool OR i.expires_us IS NULL OR i.expires_us > $3::bigint)"                         \
    " ORDER BY i.seq DESC OFFSET $4::bigint LIMIT $5::bigint"

/* Every item with its vectors in one bytea, and how many of them are not $3 bytes. */
#define RANK_SQL(under)                                                                            \
    "SELECT " ITEM_COLS ", string_agg(v.vector, ''::bytea),"                                       \
    " count(v.vector) FILTER (WHERE octet_length(v.vector) <> $3::integer)"                        \
    " FROM sst_store_items i LEFT JOIN sst_store_vectors v ON v.ns = i.ns AND v.key = i.key"       \
    " WHERE " under " ($1::bool OR i.expires_us IS NULL OR i.expires_us > $2::bigint)"             \
    " GROUP BY i.ns, i.key"

/* ---- the page being made ---- */

typedef struct entry {
    const PGresult *r;
    int row;
    char **labels; /* owned (sst__pgs_split) */
    size_t n_labels;
    bool scored;
    float score;
} entry;

typedef struct page {
    const sst_store_query *q;
    size_t skip;     /* accepted items to pass over before the page */
    size_t want;     /* stop once this many were accepted */
    size_t accepted; /* items the filter let through so far */
    entry *e;        /* the page, in order */
    size_t n, cap;
    PGresult **results; /* the reads the page points into (owned) */
    size_t n_results, cap_results;
} page;

static void page_free(page *pg) {
    for (size_t i = 0; i < pg->n; i++) {
        sst__free(pg->e[i].labels);
    }
    sst__free(pg->e);
    for (size_t i = 0; i < pg->n_results; i++) {
        PQclear(pg->results[i]);
    }
    sst__free(pg->results);
}

/* Keeps @p r for the page (or clears it when that fails: SST_ENOMEM). */
static sst_code keep_result(page *pg, PGresult *r, sst_error *err) {
    if (pg->n_results == pg->cap_results &&
        !sst__grow((void **)&pg->results, &pg->cap_results, pg->n_results, sizeof(PGresult *), 4)) {
        PQclear(r);
        return sst__enomem(err);
    }
    pg->results[pg->n_results++] = r;
    return SST_OK;
}

static sst_store_item row_item(const PGresult *r, int row, char **labels, size_t n_labels) {
    sst_store_item it = {.ns = (const char *const *)labels, .ns_len = n_labels};
    it.key = PQgetvalue(r, row, C_KEY); /* libpq ends every value with a NUL */
    it.json = sst__pg_bytes_at(r, row, C_VALUE, &it.json_len);
    it.created_at_us = sst__pg_int(r, row, C_CREATED);
    it.updated_at_us = sst__pg_int(r, row, C_UPDATED);
    it.expires_at_us = sst__pg_int(r, row, C_EXPIRES);
    it.ttl_minutes = sst__pgs_double_at(r, row, C_TTL);
    return it;
}

/* Filters row @p row of @p r and, when it is accepted and past the skipped ones, adds it. */
static sst_code consider(page *pg, const PGresult *r, int row, bool scored, float score,
                         sst_error *err) {
    size_t len, n;
    const char *joined = sst__pg_bytes_at(r, row, C_NS, &len);
    char **labels = sst__pgs_split(joined != NULL ? joined : "", joined != NULL ? len : 0, &n);
    if (labels == NULL) {
        return sst__enomem(err);
    }
    bool ok = true;
    sst_code rc = SST_OK;
    if (pg->q->match != NULL) {
        sst_store_item it = row_item(r, row, labels, n);
        rc = pg->q->match(pg->q->match_data, &it, &ok, err);
    }
    if (rc != SST_OK || !ok || pg->accepted++ < pg->skip) {
        sst__free(labels);
        return rc;
    }
    if (pg->n == pg->cap && !sst__grow((void **)&pg->e, &pg->cap, pg->n, sizeof *pg->e, 16)) {
        sst__free(labels);
        return sst__enomem(err);
    }
    pg->e[pg->n++] = (entry){
        .r = r, .row = row, .labels = labels, .n_labels = n, .scored = scored, .score = score};
    return SST_OK;
}

/* The page's items with a TTL as two text[] literals (joined namespaces, keys). */
static sst_code ttl_arrays(const page *pg, sst__buf *ns, sst__buf *keys, size_t *n,
                           sst_error *err) {
    *n = 0;
    for (size_t i = 0; i < pg->n; i++) {
        const entry *e = &pg->e[i];
        if (sst__pgs_double_at(e->r, e->row, C_TTL) > 0) {
            sst__buf_putc(ns, *n == 0 ? '{' : ',');
            sst__buf_putc(keys, *n == 0 ? '{' : ',');
            sst__pgs_array_add(ns, PQgetvalue(e->r, e->row, C_NS));
            sst__pgs_array_add(keys, PQgetvalue(e->r, e->row, C_KEY));
            (*n)++;
        }
    }
    sst__buf_append(ns, "}", 2); /* with the NUL */
    sst__buf_append(keys, "}", 2);
    return ns->oom || keys->oom ? sst__enomem(err) : SST_OK;
}

/* Refreshes the TTLs of the page's items that have one (when asked), then hands the page out. */
static sst_code emit(pgstore *s, page *pg, sst_store_item_fn each, void *user_data,
                     sst_error *err) {
    const sst_store_query *q = pg->q;
    sst_code rc = SST_OK;
    bool any_ttl = false;
    for (size_t i = 0; q->read.refresh_ttl && i < pg->n && !any_ttl; i++) {
        any_ttl = sst__pgs_double_at(pg->e[i].r, pg->e[i].row, C_TTL) > 0;
    }
    if (any_ttl) {
        sst__buf ns, keys;
        sst__buf_init(&ns);
        sst__buf_init(&keys);
        size_t n = 0;
        rc = ttl_arrays(pg, &ns, &keys, &n, err);
        if (rc == SST_OK && n > 0) {
            rc = sst__pgs_refresh(s, ns.data, keys.data, q->read.now_us, err);
        }
        sst__buf_free(&ns);
        sst__buf_free(&keys);
    }
    for (size_t i = 0; rc == SST_OK && i < pg->n; i++) {
        const entry *e = &pg->e[i];
        sst_store_item it = row_item(e->r, e->row, e->labels, e->n_labels);
        it.scored = e->scored;
        it.score = e->score;
        rc = each(user_data, &it, err);
    }
    return rc;
}

/* ---- reads ---- */

typedef struct read_job {
    const sst__pg_params *p;
    bool under; /* the variant bounded to the prefix's range */
    bool rank;  /* RANK_SQL, else SEQ_SQL */
    PGresult *r;
} read_job;

static sst_code search_read(sst__pg_conn *c, void *user, sst_error *err) {
    read_job *j = user;
    PQclear(j->r); /* an earlier attempt's */
    static const char what[] = "store search";
    if (j->rank) {
        j->r = j->under ? sst__pg_exec(c, "sst_store_rank_under",
                                       RANK_SQL(SST__PGS_UNDER("i.ns", "4") "AND"), j->p, what, err)
                        : sst__pg_exec(c, "sst_store_rank_all", RANK_SQL(""), j->p, what, err);
    } else {
        j->r = j->under ? sst__pg_exec(c, "sst_store_seq_under",
                                       SEQ_SQL(SST__PGS_UNDER("i.ns", "6") "AND"), j->p, what, err)
                        : sst__pg_exec(c, "sst_store_seq_all", SEQ_SQL(""), j->p, what, err);
    }
    return j->r != NULL ? SST_OK : sst__code(err);
}

static int64_t clamp_i64(size_t v) {
    return v > (size_t)INT64_MAX ? INT64_MAX : (int64_t)v;
}

/* ---- in write order ---- */

static sst_code by_seq(pgstore *s, page *pg, const char *prefix, sst_error *err) {
    const sst_store_query *q = pg->q;
    /* Without a filter PostgreSQL skips and limits; with one, batches until enough pass. */
    size_t batch = pg->want < 32 ? 64 : pg->want > 512 ? 1024 : 2 * pg->want;
    int64_t below = INT64_MAX;
    for (;;) {
        sst__pg_params p;
        sst__pg_params_init(&p);
        sst__pg_i64(&p, below);
        sst__pg_bool(&p, !q->read.omit_expired);
        sst__pg_i64(&p, q->read.now_us);
        sst__pg_i64(&p, q->match == NULL ? clamp_i64(q->offset) : 0);
        sst__pg_i64(&p, q->match == NULL ? clamp_i64(q->limit) : (int64_t)batch);
        if (q->prefix_len > 0) {
            sst__pg_text(&p, prefix);
        }
        read_job j = {.p = &p, .under = q->prefix_len > 0};
        sst_code rc = sst__pg_read(s->pg, search_read, &j, err);
        if (rc != SST_OK) {
            return rc;
        }
        if (keep_result(pg, j.r, err) != SST_OK) {
            return SST_ENOMEM;
        }
        int rows = PQntuples(j.r);
        size_t before = pg->n;
        for (int i = 0; rc == SST_OK && i < rows && pg->accepted < pg->want; i++) {
            below = sst__pg_int(j.r, i, C_SEQ);
            rc = consider(pg, j.r, i, false, 0, err);
        }
        if (pg->n == before) { /* nothing of it on the page: drop it now */
            PQclear(pg->results[--pg->n_results]);
        }
        if (rc != SST_OK || q->match == NULL || (size_t)rows < batch || pg->accepted >= pg->want) {
            return rc;
        }
    }
}

/* ---- ranked ---- */

typedef struct cand {
    int row;
    int64_t seq;
    float score;
    bool ranked;
} cand;

/* Ranked first, then the higher score, then the newer write (seq is unique). */
static int cand_cmp(const void *pa, const void *pb) {
    const cand *a = pa, *b = pb;
    if (a->ranked != b->ranked) {
        return a->ranked ? -1 : 1;
    }
    if (a->ranked && a->score != b->score) {
        return a->score > b->score ? -1 : 1;
    }
    return a->seq > b->seq ? -1 : a->seq < b->seq;
}

/* SST_EIO naming row @p row's item, whose vectors are not of the store's size. */
static sst_code bad_vectors(pgstore *s, const PGresult *r, int row, sst_error *err) {
    size_t len, n;
    const char *joined = sst__pg_bytes_at(r, row, C_NS, &len);
    char **labels = sst__pgs_split(joined != NULL ? joined : "", joined != NULL ? len : 0, &n);
    char show[160] = "";
    if (labels != NULL) {
        sst__ns_show((const char *const *)labels, n, show, sizeof show);
    }
    sst__free(labels);
    return sst__pgs_error(s, err, SST_EIO,
                          "item %s '%.60s' has vectors of another size than the index's %zu dims",
                          show, PQgetvalue(r, row, C_KEY), s->dims);
}

/*
 * Scores every item of @p r (one row each, its vectors in C_VECS) into
 * @p cands: the best dot product of the query with one of its vectors.
 */
static sst_code score_rows(pgstore *s, const PGresult *r, const float *query, cand *cands,
                           sst_error *err) {
    int rows = PQntuples(r);
    size_t row_bytes = s->dims * sizeof(float), total = 0;
    for (int i = 0; i < rows; i++) {
        size_t len = 0;
        (void)sst__pg_bytes_at(r, i, C_VECS, &len);
        if (sst__pg_int(r, i, C_BAD) != 0 || len % row_bytes != 0) {
            return bad_vectors(s, r, i, err);
        }
        total += len / row_bytes;
    }
    float *data = total > 0 ? sst__malloc(total * row_bytes) : NULL;
    float *dots = total > 0 ? sst__malloc(total * sizeof *dots) : NULL;
    if (total > 0 && (data == NULL || dots == NULL)) {
        sst__free(data);
        sst__free(dots);
        return sst__enomem(err);
    }
    size_t at = 0;
    for (int i = 0; i < rows; i++) {
        size_t len = 0;
        const char *v = sst__pg_bytes_at(r, i, C_VECS, &len);
        if (len > 0) {
            sst__pgs_floats_in(data + at * s->dims, v, len / sizeof(float));
            at += len / row_bytes;
        }
    }
    /* The kernel over all rows at once (threaded when large), as the other backends rank. */
    sst__vecs vs = {.data = data, .n = total, .cap = total, .dims = s->dims};
    if (total > 0) {
        sst__vecs_dots(&vs, query, dots, s->threads);
    }
    at = 0;
    for (int i = 0; i < rows; i++) {
        size_t len = 0;
        (void)sst__pg_bytes_at(r, i, C_VECS, &len);
        size_t k = len / row_bytes;
        float best = -2.0f; /* below any cosine */
        for (size_t j = 0; j < k; j++, at++) {
            best = dots[at] > best ? dots[at] : best;
        }
        cands[i] =
            (cand){.row = i, .seq = sst__pg_int(r, i, C_SEQ), .score = best, .ranked = k > 0};
    }
    sst__free(data);
    sst__free(dots);
    return SST_OK;
}

static sst_code ranked(pgstore *s, page *pg, const char *prefix, sst_error *err) {
    const sst_store_query *q = pg->q;
    sst__pg_params p;
    sst__pg_params_init(&p);
    sst__pg_bool(&p, !q->read.omit_expired);
    sst__pg_i64(&p, q->read.now_us);
    sst__pg_i64(&p, (int64_t)(s->dims * sizeof(float)));
    if (q->prefix_len > 0) {
        sst__pg_text(&p, prefix);
    }
    read_job j = {.p = &p, .under = q->prefix_len > 0, .rank = true};
    sst_code rc = sst__pg_read(s->pg, search_read, &j, err);
    if (rc != SST_OK) {
        return rc;
    }
    if (keep_result(pg, j.r, err) != SST_OK) {
        return SST_ENOMEM;
    }
    int rows = PQntuples(j.r);
    cand *cands = sst__malloc((rows > 0 ? (size_t)rows : 1) * sizeof *cands);
    rc = cands == NULL ? sst__enomem(err) : score_rows(s, j.r, q->vector, cands, err);
    if (rc == SST_OK) {
        qsort(cands, (size_t)rows, sizeof *cands, cand_cmp);
    }
    for (int i = 0; rc == SST_OK && i < rows && pg->accepted < pg->want; i++) {
        rc = consider(pg, j.r, cands[i].row, cands[i].ranked, cands[i].score, err);
    }
    sst__free(cands);
    return rc;
}

sst_code sst__pgs_search(void *self, const sst_store_query *q, sst_store_item_fn each,
                         void *user_data, sst_error *err) {
    SST__ERR_LOCAL(err);
    pgstore *s = self;
    char *prefix = sst__ns_join(q->prefix, q->prefix_len);
    if (prefix == NULL) {
        return sst__enomem(err);
    }
    page pg = {.q = q, .want = q->offset + q->limit};
    pg.want = pg.want < q->offset ? SIZE_MAX : pg.want; /* no wrap-around */
    bool rank = q->vector != NULL && s->dims > 0 && q->dims == s->dims;
    /* Without a filter the seq read skips in SQL: everything it returns is on the page. */
    pg.skip = !rank && q->match == NULL ? 0 : q->offset;
    sst_code rc = rank ? ranked(s, &pg, prefix, err) : by_seq(s, &pg, prefix, err);
    sst__free(prefix);
    rc = rc == SST_OK ? emit(s, &pg, each, user_data, err) : rc;
    page_free(&pg);
    return rc;
}
