/* SPDX-License-Identifier: MIT */
/*
 * The PostgreSQL store's operations but search (postgres_int.h describes the
 * tables). Each write is one statement in a transaction of sst__pg_tx, which
 * runs it again whole on a new connection when the line drops: every
 * statement here is an upsert or a delete, so running it twice leaves what
 * running it once does. Reads run through sst__pg_read; results reach the
 * caller's callback only after the read is over, so a re-run read never
 * hands an item out twice.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "postgres_int.h"

/* ---- put ---- */

/*
 * Two statements in one transaction. The first upserts the item (created_us kept, seq
 * drawn anew, so the item becomes the newest write) and takes its row lock, which
 * serialises puts of one item across processes. The second, with a snapshot taken
 * after that lock was granted, upserts vectors 0..n-1 from one bytea holding them all
 * and deletes any vectors n.. of an older value. (In one statement the delete would
 * run on the snapshot from before the lock wait, and miss the vectors that a put
 * committed meanwhile had added: an item torn between two values.)
 */
static const char k_put_item[] =
    "INSERT INTO sst_store_items(ns, key, value, created_us, updated_us, expires_us, ttl_minutes,"
    " seq) VALUES (string_to_array($1::text, '.'), $2::text, $3::bytea, $4::bigint, $5::bigint,"
    " $6::bigint, $7::float8, nextval('sst_store_seq'))"
    " ON CONFLICT (ns, key) DO UPDATE SET value = excluded.value,"
    " updated_us = excluded.updated_us, expires_us = excluded.expires_us,"
    " ttl_minutes = excluded.ttl_minutes, seq = excluded.seq";

static const char k_put_vectors[] =
    "WITH stale AS (DELETE FROM sst_store_vectors"
    " WHERE ns = string_to_array($1::text, '.') AND key = $2::text AND n >= $4::integer)"
    " INSERT INTO sst_store_vectors(ns, key, n, vector)"
    " SELECT string_to_array($1::text, '.'), $2::text, g,"
    " substring($3::bytea FROM g * $5::integer + 1 FOR $5::integer)"
    " FROM generate_series(0, $4::integer - 1) AS g"
    " ON CONFLICT (ns, key, n) DO UPDATE SET vector = excluded.vector";

typedef struct put_job {
    const sst__pg_params *item, *vectors;
} put_job;

static sst_code put_tx(sst__pg_conn *c, void *user, sst_error *err) {
    const put_job *j = user;
    if (sst__pg_run(c, "sst_store_put_item", k_put_item, j->item, "store put", err) != SST_OK) {
        return sst__code(err);
    }
    return sst__pg_run(c, "sst_store_put_vectors", k_put_vectors, j->vectors, "store put (vectors)",
                       err);
}

static sst_code pgs_put(void *self, const sst_store_item *it, sst_error *err) {
    SST__ERR_LOCAL(err);
    pgstore *s = self;
    if (it->n_vectors > 0 && it->dims != s->dims) {
        return sst__pgs_error(s, err, SST_EINVAL, "put: %zu-dim vectors, the store has %zu",
                              it->dims, s->dims);
    }
    size_t row_bytes = s->dims * sizeof(float);
    if (it->n_vectors > 0 && it->n_vectors > (size_t)(INT_MAX / 2) / row_bytes) {
        return sst__pgs_error(s, err, SST_EINVAL, "put: %zu vectors of %zu dims are too many",
                              it->n_vectors, s->dims);
    }
    if (it->json == NULL || it->json_len > (size_t)INT_MAX / 2) {
        return sst__pgs_error(s, err, SST_EINVAL, "put: the value is missing or too large");
    }
    char *ns = sst__ns_join(it->ns, it->ns_len);
    void *vectors =
        it->n_vectors > 0 ? sst__pgs_floats_out(it->vectors, it->n_vectors * s->dims) : NULL;
    if (ns == NULL || (it->n_vectors > 0 && vectors == NULL)) {
        sst__free(ns);
        sst__free(vectors);
        return sst__enomem(err);
    }
    unsigned char ttl[8];
    sst__pgs_float8(ttl, it->ttl_minutes);
    sst__pg_params p;
    sst__pg_params_init(&p);
    sst__pg_text(&p, ns);
    sst__pg_text(&p, it->key);
    sst__pg_bytes(&p, it->json, it->json_len);
    sst__pg_i64(&p, it->created_at_us);
    sst__pg_i64(&p, it->updated_at_us);
    if (it->expires_at_us > 0) {
        sst__pg_i64(&p, it->expires_at_us);
    } else {
        sst__pg_text(&p, NULL);
    }
    sst__pg_bytes(&p, it->ttl_minutes > 0 ? ttl : NULL, sizeof ttl);
    sst__pg_params v;
    sst__pg_params_init(&v);
    sst__pg_text(&v, ns);
    sst__pg_text(&v, it->key);
    sst__pg_bytes(&v, vectors, vectors != NULL ? it->n_vectors * row_bytes : 0);
    sst__pg_i64(&v, (int64_t)it->n_vectors);
    sst__pg_i64(&v, (int64_t)row_bytes);
    put_job j = {&p, &v};
    sst_code rc = sst__pg_tx(s->pg, true, put_tx, &j, err);
    sst__free(ns);
    sst__free(vectors);
    return rc;
}

/* ---- delete ---- */

typedef struct key_job {
    const sst__pg_params *p;
    PGresult *r; /* get: the row (owned), NULL before */
} key_job;

/*
 * The parameters of a statement on one item: $1 its namespace joined, $2 its key, in
 * @p p. @return the joined namespace @p p refers to (sst__free it after the statement);
 * NULL when out of memory.
 */
static char *key_params(sst__pg_params *p, const char *const *ns, size_t ns_len, const char *key) {
    char *joined = sst__ns_join(ns, ns_len);
    if (joined != NULL) {
        sst__pg_params_init(p);
        sst__pg_text(p, joined);
        sst__pg_text(p, key);
    }
    return joined;
}

static sst_code delete_tx(sst__pg_conn *c, void *user, sst_error *err) {
    const key_job *j = user;
    /* Its vectors go with it (ON DELETE CASCADE). */
    return sst__pg_run(c, "sst_store_delete",
                       "DELETE FROM sst_store_items"
                       " WHERE ns = string_to_array($1::text, '.') AND key = $2::text",
                       j->p, "store delete", err);
}

static sst_code pgs_delete(void *self, const char *const *ns, size_t ns_len, const char *key,
                           sst_error *err) {
    SST__ERR_LOCAL(err);
    pgstore *s = self;
    sst__pg_params p;
    char *joined = key_params(&p, ns, ns_len, key);
    if (joined == NULL) {
        return sst__enomem(err);
    }
    key_job j = {.p = &p};
    sst_code rc = sst__pg_tx(s->pg, true, delete_tx, &j, err);
    sst__free(joined);
    return rc;
}

/* ---- get ---- */

static sst_code get_read(sst__pg_conn *c, void *user, sst_error *err) {
    key_job *j = user;
    PQclear(j->r); /* an earlier attempt's */
    j->r = sst__pg_exec(c, "sst_store_get",
                        "SELECT value, created_us, updated_us, expires_us, ttl_minutes"
                        " FROM sst_store_items"
                        " WHERE ns = string_to_array($1::text, '.') AND key = $2::text",
                        j->p, "store get", err);
    return j->r != NULL ? SST_OK : sst__code(err);
}

static sst_code refresh_one_tx(sst__pg_conn *c, void *user, sst_error *err) {
    const key_job *j = user;
    return sst__pg_run(c, "sst_store_refresh_one",
                       "UPDATE sst_store_items"
                       " SET expires_us = $3::bigint + round(ttl_minutes * 60000000.0)::bigint"
                       " WHERE ns = string_to_array($1::text, '.') AND key = $2::text"
                       " AND ttl_minutes IS NOT NULL",
                       j->p, "store get: refreshing the TTL", err);
}

/*
 * The read, then (only for an item with a TTL, when asked) the refresh in a
 * write transaction of its own: most items have no TTL, and their gets stay
 * one round trip. An item another process replaced in between is refreshed
 * with its new TTL, which is what a read after that put would do.
 */
static sst_code pgs_get(void *self, const char *const *ns, size_t ns_len, const char *key,
                        const sst_store_read *r, sst_store_item_fn each, void *user_data,
                        sst_error *err) {
    SST__ERR_LOCAL(err);
    pgstore *s = self;
    sst__pg_params p;
    char *joined = key_params(&p, ns, ns_len, key);
    if (joined == NULL) {
        return sst__enomem(err);
    }
    key_job j = {.p = &p};
    sst_code rc = sst__pg_read(s->pg, get_read, &j, err);
    if (rc == SST_OK && PQntuples(j.r) == 1) {
        sst_store_item it = {.ns = ns, .ns_len = ns_len, .key = key};
        it.json = sst__pg_bytes_at(j.r, 0, 0, &it.json_len);
        it.created_at_us = sst__pg_int(j.r, 0, 1);
        it.updated_at_us = sst__pg_int(j.r, 0, 2);
        it.expires_at_us = sst__pg_int(j.r, 0, 3);
        it.ttl_minutes = sst__pgs_double_at(j.r, 0, 4);
        bool gone = r->omit_expired && it.expires_at_us > 0 && it.expires_at_us <= r->now_us;
        if (!gone && r->refresh_ttl && it.ttl_minutes > 0) {
            sst__pg_i64(&p, r->now_us);
            rc = sst__pg_tx(s->pg, false, refresh_one_tx, &j, err);
        }
        rc = rc == SST_OK && !gone ? each(user_data, &it, err) : rc;
    }
    PQclear(j.r);
    sst__free(joined);
    return rc;
}

/* ---- TTL refresh of search results ---- */

typedef struct refresh_job {
    const sst__pg_params *p;
} refresh_job;

static sst_code refresh_tx(sst__pg_conn *c, void *user, sst_error *err) {
    const refresh_job *j = user;
    return sst__pg_run(c, "sst_store_refresh",
                       "UPDATE sst_store_items i"
                       " SET expires_us = $3::bigint + round(i.ttl_minutes * 60000000.0)::bigint"
                       " FROM unnest($1::text[], $2::text[]) AS r(ns, key)"
                       " WHERE i.ns = string_to_array(r.ns, '.') AND i.key = r.key"
                       " AND i.ttl_minutes IS NOT NULL",
                       j->p, "store search: refreshing TTLs", err);
}

sst_code sst__pgs_refresh(pgstore *s, const char *ns, const char *keys, int64_t now_us,
                          sst_error *err) {
    sst__pg_params p;
    sst__pg_params_init(&p);
    sst__pg_text(&p, ns);
    sst__pg_text(&p, keys);
    sst__pg_i64(&p, now_us);
    refresh_job j = {&p};
    return sst__pg_tx(s->pg, false, refresh_tx, &j, err);
}

/* ---- list_namespaces ---- */

/*
 * Everything in SQL, so only the page travels: the conditions ("*" is any
 * one label; one longer than the namespace does not match), the cut to
 * max_depth, DISTINCT, the order (label arrays COLLATE "C": label by label in
 * bytes, a namespace before the longer ones it starts) and the page. The
 * variant with $8 also bounds the scan to the range of the literal labels
 * the prefix starts with (postgres_int.h, SST__PGS_UNDER).
 */
#define LIST_SQL(under)                                                                            \
    "SELECT array_to_string(n, '.') FROM (SELECT DISTINCT"                                         \
    " CASE WHEN $5::integer > 0 THEN ns[1:$5::integer] ELSE ns END AS n"                           \
    " FROM sst_store_items WHERE " under                                                           \
    " ($3::bool OR expires_us IS NULL OR expires_us > $4::bigint)"                                 \
    " AND cardinality(ns) >= cardinality(string_to_array($1::text, '.'))"                          \
    " AND NOT EXISTS (SELECT 1 FROM unnest(string_to_array($1::text, '.')) WITH ORDINALITY"        \
    " AS p(l, i) WHERE p.l <> '*' AND p.l <> ns[p.i::integer])"                                    \
    " AND cardinality(ns) >= cardinality(string_to_array($2::text, '.'))"                          \
    " AND NOT EXISTS (SELECT 1 FROM unnest(string_to_array($2::text, '.')) WITH ORDINALITY"        \
    " AS x(l, i) WHERE x.l <> '*' AND x.l <> ns[cardinality(ns)"                                   \
    " - cardinality(string_to_array($2::text, '.')) + x.i::integer])) AS d"                        \
    " ORDER BY n COLLATE \"C\" OFFSET $6::bigint LIMIT $7::bigint"

typedef struct list_job {
    const sst__pg_params *p;
    bool under; /* the variant with $8 */
    PGresult *r;
} list_job;

static sst_code list_read(sst__pg_conn *c, void *user, sst_error *err) {
    list_job *j = user;
    PQclear(j->r);
    j->r = j->under
               ? sst__pg_exec(c, "sst_store_list_under", LIST_SQL(SST__PGS_UNDER("ns", "8") "AND"),
                              j->p, "store list_namespaces", err)
               : sst__pg_exec(c, "sst_store_list_all", LIST_SQL(""), j->p, "store list_namespaces",
                              err);
    return j->r != NULL ? SST_OK : sst__code(err);
}

static int64_t clamp_i64(size_t v) {
    return v > (size_t)INT64_MAX ? INT64_MAX : (int64_t)v;
}

static sst_code pgs_list(void *self, const sst_store_list_opts *q, const sst_store_read *r,
                         sst_store_ns_fn each, void *user_data, sst_error *err) {
    SST__ERR_LOCAL(err);
    pgstore *s = self;
    size_t literal = 0; /* the prefix's labels before its first "*" */
    while (literal < q->prefix_len && strcmp(q->prefix[literal], "*") != 0) {
        literal++;
    }
    char *prefix = sst__ns_join(q->prefix, q->prefix_len);
    char *suffix = sst__ns_join(q->suffix, q->suffix_len);
    char *under = sst__ns_join(q->prefix, literal);
    if (prefix == NULL || suffix == NULL || under == NULL) {
        sst__free(prefix);
        sst__free(suffix);
        sst__free(under);
        return sst__enomem(err);
    }
    sst__pg_params p;
    sst__pg_params_init(&p);
    sst__pg_text(&p, prefix);
    sst__pg_text(&p, suffix);
    sst__pg_bool(&p, !r->omit_expired);
    sst__pg_i64(&p, r->now_us);
    sst__pg_i64(&p, q->max_depth > INT32_MAX ? INT32_MAX : (int64_t)q->max_depth);
    sst__pg_i64(&p, clamp_i64(q->offset));
    sst__pg_i64(&p, clamp_i64(q->limit));
    if (literal > 0) {
        sst__pg_text(&p, under);
    }
    list_job j = {.p = &p, .under = literal > 0};
    sst_code rc = sst__pg_read(s->pg, list_read, &j, err);
    for (int i = 0; rc == SST_OK && i < PQntuples(j.r); i++) {
        size_t len, n;
        const char *joined = sst__pg_bytes_at(j.r, i, 0, &len);
        char **labels = joined != NULL ? sst__pgs_split(joined, len, &n) : NULL;
        rc = labels == NULL ? sst__enomem(err)
                            : each(user_data, (const char *const *)labels, n, err);
        sst__free(labels);
    }
    PQclear(j.r);
    sst__free(prefix);
    sst__free(suffix);
    sst__free(under);
    return rc;
}

/* ---- sweep ---- */

typedef struct sweep_job {
    const sst__pg_params *p;
    size_t removed;
} sweep_job;

/*
 * Rows another transaction holds (a put renewing the item, another
 * process's sweeper) are skipped, not waited for: sweepers in many processes
 * then never queue behind or deadlock with one another, and what one skips
 * the next sweep finds if it is still expired.
 */
static sst_code sweep_tx(sst__pg_conn *c, void *user, sst_error *err) {
    sweep_job *j = user;
    PGresult *r = sst__pg_exec(c, "sst_store_sweep",
                               "WITH doomed AS (SELECT ns, key FROM sst_store_items"
                               " WHERE expires_us IS NOT NULL AND expires_us <= $1::bigint"
                               " FOR UPDATE SKIP LOCKED)"
                               " DELETE FROM sst_store_items i USING doomed d"
                               " WHERE i.ns = d.ns AND i.key = d.key",
                               j->p, "store sweep", err);
    if (r == NULL) {
        return sst__code(err);
    }
    j->removed = (size_t)strtoull(PQcmdTuples(r), NULL, 10);
    PQclear(r);
    return SST_OK;
}

static sst_code pgs_sweep(void *self, int64_t now_us, size_t *removed, sst_error *err) {
    SST__ERR_LOCAL(err);
    pgstore *s = self;
    sst__pg_params p;
    sst__pg_params_init(&p);
    sst__pg_i64(&p, now_us);
    sweep_job j = {.p = &p};
    /* A re-run after a lost COMMIT counts only what it deleted itself. */
    sst_code rc = sst__pg_tx(s->pg, true, sweep_tx, &j, err);
    *removed = rc == SST_OK ? j.removed : 0;
    return rc;
}

const sst_store_ops sst__pgs_ops = {.version = SST_STORE_OPS_VERSION,
                                    .destroy = sst__pgs_destroy,
                                    .put = pgs_put,
                                    .delete_item = pgs_delete,
                                    .get = pgs_get,
                                    .search = sst__pgs_search,
                                    .list_namespaces = pgs_list,
                                    .sweep = pgs_sweep};
