/* SPDX-License-Identifier: MIT */
/*
 * The PostgreSQL saver's threads: their rows (created time, user metadata),
 * search with filters and paging, copy, delete and prune, and releasing the
 * blobs of deleted records.
 *
 * Copy, delete and prune first lock the thread's head rows, which every put
 * of the thread updates (postgres_records.c): a put of the thread in another
 * process waits for them, so they work on a history nobody extends meanwhile,
 * and each later statement (READ COMMITTED: a snapshot per statement) sees
 * everything committed before the lock. Deleting records subtracts their
 * references from their blobs and deletes the blobs left with none, all in
 * the same transaction (see k_put_sql for why the count is race-free).
 */
#include <stdio.h>
#include <string.h>

#include "postgres_int.h"

/* A thread as sst_thread_info needs it; the columns are the T_ names below. */
#define THREAD_SELECT                                                                              \
    "SELECT t.thread, t.created, greatest(t.updated, coalesce(h.created, 0)),"                     \
    " coalesce(h.status, 0::smallint), t.metadata,"                                                \
    " (SELECT count(*) FROM sst_checkpoints c WHERE c.thread = t.thread), h.id,"                   \
    " coalesce(h.step, 0), (SELECT l.owner FROM sst_checkpoint_locks l"                            \
    " WHERE l.thread = t.thread AND l.expires > " PGS_NOW_MS ")"                                   \
    " FROM sst_checkpoint_threads t"                                                               \
    " LEFT JOIN sst_checkpoint_heads hd ON hd.thread = t.thread AND hd.ns = ''"                    \
    " LEFT JOIN sst_checkpoints h ON h.thread = hd.thread AND h.id = hd.head"
enum { T_THREAD, T_CREATED, T_UPDATED, T_STATUS, T_META, T_COUNT, T_LATEST, T_STEP, T_OWNER };

static const char k_thread_get_sql[] = THREAD_SELECT " WHERE t.thread = $1::text";

/* Searching: ORDER BY by sst_thread_order and direction; $1 limit (NULL: all), $2 offset;
 * with OWNER, $3 the owner of the metadata (sst_thread_query.owner), through the function
 * the index sst_checkpoint_threads_owner is on (postgres.c, version 2). */
#define THREADS_SQL(ORDER) THREAD_SELECT " ORDER BY " ORDER " LIMIT $1::bigint OFFSET $2::bigint"
#define OWNER_SQL(ORDER)                                                                           \
    THREAD_SELECT " WHERE sst_thread_owner(t.metadata) = $3::text"                                 \
                  " ORDER BY " ORDER " LIMIT $1::bigint OFFSET $2::bigint"
static const char *const k_threads_sql[2][3][2] = {
    {
        {THREADS_SQL("t.thread ASC"), THREADS_SQL("t.thread DESC")},
        {THREADS_SQL("t.created ASC, t.thread ASC"), THREADS_SQL("t.created DESC, t.thread DESC")},
        {THREADS_SQL("3 ASC, t.thread ASC"), THREADS_SQL("3 DESC, t.thread DESC")},
    },
    {
        {OWNER_SQL("t.thread ASC"), OWNER_SQL("t.thread DESC")},
        {OWNER_SQL("t.created ASC, t.thread ASC"), OWNER_SQL("t.created DESC, t.thread DESC")},
        {OWNER_SQL("3 ASC, t.thread ASC"), OWNER_SQL("3 DESC, t.thread DESC")},
    },
};
static const char *const k_threads_name[2][3][2] = {
    {
        {"sst_cp_threads_id", "sst_cp_threads_id_d"},
        {"sst_cp_threads_cr", "sst_cp_threads_cr_d"},
        {"sst_cp_threads_up", "sst_cp_threads_up_d"},
    },
    {
        {"sst_cp_threads_id_o", "sst_cp_threads_id_do"},
        {"sst_cp_threads_cr_o", "sst_cp_threads_cr_do"},
        {"sst_cp_threads_up_o", "sst_cp_threads_up_do"},
    },
};

const char *sst__pgs_threads_sql(const sst_thread_query *q, const char **name) {
    int order = q->order <= SST_THREADS_BY_UPDATED ? (int)q->order : 0;
    int desc = q->descending ? 1 : 0, owner = q->owner != NULL ? 1 : 0;
    if (name != NULL) {
        *name = k_threads_name[owner][order][desc];
    }
    return k_threads_sql[owner][order][desc];
}

static const char k_thread_put_sql[] =
    "INSERT INTO sst_checkpoint_threads AS t(thread, created, updated, metadata)"
    " VALUES($1::text, $2::bigint, $2::bigint, $3::bytea) ON CONFLICT (thread) DO UPDATE"
    " SET metadata = excluded.metadata, updated = greatest(t.updated, excluded.updated)";

/* Locks the head rows of thread $1 against puts (FOR SHARE: against its deletion only). */
static const char k_lock_heads_sql[] =
    "SELECT count(*) FROM (SELECT 1 FROM sst_checkpoint_heads WHERE thread = $1::text"
    " FOR UPDATE) AS h";
static const char k_share_heads_sql[] =
    "SELECT (SELECT count(*) FROM (SELECT 1 FROM sst_checkpoint_heads WHERE thread = $1::text"
    " FOR SHARE) AS h),"
    " EXISTS (SELECT 1 FROM sst_checkpoint_threads WHERE thread = $1::text)"
    " OR EXISTS (SELECT 1 FROM sst_checkpoints WHERE thread = $1::text),"
    " EXISTS (SELECT 1 FROM sst_checkpoint_threads WHERE thread = $2::text)"
    " OR EXISTS (SELECT 1 FROM sst_checkpoints WHERE thread = $2::text)";

/* Copies thread $1 to $2 in put order, adding the copies' references to their blobs;
 * returns the distinct blobs referred to and how many of them were found. */
static const char k_copy_sql[] =
    "WITH c AS (INSERT INTO sst_checkpoints(thread, ns, id, parent, step, format, kind, source,"
    " run_id, created, status, next, meta, body, writes, blobs)"
    " SELECT $2::text, ns, id, parent, step, format, kind, source, run_id, created, status,"
    " next, meta, body, writes, blobs FROM sst_checkpoints WHERE thread = $1::text ORDER BY seq"
    " RETURNING blobs),"
    " h AS (INSERT INTO sst_checkpoint_heads(thread, ns, head)"
    " SELECT $2::text, ns, head FROM sst_checkpoint_heads WHERE thread = $1::text),"
    " t AS (INSERT INTO sst_checkpoint_threads(thread, created, updated, metadata)"
    " SELECT $2::text, created, updated, metadata FROM sst_checkpoint_threads"
    " WHERE thread = $1::text),"
    " n AS (SELECT b.id, count(*) AS n FROM c CROSS JOIN LATERAL unnest(c.blobs) AS b(id)"
    " GROUP BY b.id),"
    " u AS (UPDATE sst_checkpoint_blobs s SET refs = s.refs + n.n FROM n WHERE s.id = n.id"
    " RETURNING 1)"
    " SELECT (SELECT count(*) FROM n), (SELECT count(*) FROM u)";

/*
 * Deletes records and subtracts their references from their blobs; returns the ids
 * of the blobs left without any (their rows stay locked until the commit, so nobody
 * adds a reference before they are deleted by k_blobs_drop_sql). The variants: the
 * records of $2 (text[]) of thread $1, or the whole thread with its heads and row.
 */
#define RELEASE_SQL(DELETE_RECORDS, MORE)                                                          \
    "WITH d AS (" DELETE_RECORDS " RETURNING blobs)" MORE ","                                      \
    " n AS (SELECT b.id, count(*) AS n FROM d CROSS JOIN LATERAL unnest(d.blobs) AS b(id)"         \
    " GROUP BY b.id),"                                                                             \
    " u AS (UPDATE sst_checkpoint_blobs s SET refs = s.refs - n.n FROM n WHERE s.id = n.id"        \
    " RETURNING s.id, s.refs)"                                                                     \
    " SELECT (SELECT count(*) FROM d), u.id FROM (SELECT 1) AS one LEFT JOIN u ON u.refs <= 0"
static const char k_delete_records_sql[] =
    RELEASE_SQL("DELETE FROM sst_checkpoints WHERE thread = $1::text AND id = ANY($2::text[])", "");
static const char k_delete_thread_sql[] =
    RELEASE_SQL("DELETE FROM sst_checkpoints WHERE thread = $1::text",
                ", h AS (DELETE FROM sst_checkpoint_heads WHERE thread = $1::text),"
                " t AS (DELETE FROM sst_checkpoint_threads WHERE thread = $1::text)");
static const char k_blobs_drop_sql[] =
    "DELETE FROM sst_checkpoint_blobs WHERE id = ANY($1::text[]) AND refs <= 0";

/* A thread's records in put order, as prune needs them. */
static const char k_chain_sql[] =
    "SELECT id, ns, parent, kind FROM sst_checkpoints WHERE thread = $1::text ORDER BY seq";

/* ---- listing ---- */

/* Row @p row of a THREAD_SELECT result; strings point into @p r. */
static void read_thread(const PGresult *r, int row, sst_thread_info *t) {
    size_t mlen;
    const char *meta = sst__pg_bytes_at(r, row, T_META, &mlen);
    const char *owner = sst__pg_bytes_at(r, row, T_OWNER, NULL);
    *t = (sst_thread_info){
        .thread_id = sst__pg_bytes_at(r, row, T_THREAD, NULL),
        .created_at = sst__pg_int(r, row, T_CREATED),
        .updated_at = sst__pg_int(r, row, T_UPDATED),
        /* busy: a lease not expired whose holder is alive (one killed with -9 on this host
         * left its row behind) */
        .status = owner != NULL && !sst__owner_gone(owner)
                      ? SST_THREAD_BUSY
                      : (sst_thread_status)sst__pg_int(r, row, T_STATUS),
        .metadata = {.data = meta != NULL && mlen > 0 ? meta : "{}",
                     .len = meta != NULL && mlen > 0 ? mlen : 2},
        .checkpoints = (size_t)sst__pg_int(r, row, T_COUNT),
        .latest_id = sst__pg_bytes_at(r, row, T_LATEST, NULL),
        .step = sst__pg_int(r, row, T_STEP),
    };
    if ((unsigned)t->status > SST_THREAD_ERROR) {
        t->status = SST_THREAD_IDLE;
    }
}

sst_code sst__pgs_threads(void *self, const sst_thread_query *q, sst_thread_fn each,
                          void *user_data, sst_error *err) {
    pg_saver *s = self;
    sst__pgs_read_job j = {NULL, NULL, "checkpoint store: listing threads", {0}, NULL};
    j.sql = sst__pgs_threads_sql(q, &j.name);
    sst__pg_params_init(&j.p);
    /* The status (busy needs the lease holder probed here) and the metadata (JSON value
     * equality) are filtered here: the server pages only an unfiltered search. */
    bool filtered = q->by_status || q->metadata != NULL;
    if (!filtered && q->limit > 0) {
        sst__pg_i64(&j.p, (int64_t)q->limit);
    } else {
        sst__pg_text(&j.p, NULL);
    }
    sst__pg_i64(&j.p, filtered ? 0 : (int64_t)q->offset);
    if (q->owner != NULL) {
        sst__pg_text(&j.p, q->owner);
    }
    sst_code rc = sst__pg_read(s->pg, sst__pgs_read_tx, &j, err);
    if (rc != SST_OK) {
        PQclear(j.res);
        return rc;
    }
    /* Unfiltered, the statement applied the offset and the limit itself. */
    sst__thread_pager pager = {.q = q, .skipped = filtered ? 0 : q->offset};
    for (int i = 0; i < PQntuples(j.res); i++) {
        sst_thread_info t;
        read_thread(j.res, i, &t);
        if (!sst__thread_page(&pager, &t, each, user_data)) {
            break;
        }
    }
    PQclear(j.res);
    return SST_OK;
}

sst_code sst__pgs_thread_get(void *self, const char *thread, sst_thread_fn each, void *user_data,
                             sst_error *err) {
    pg_saver *s = self;
    sst__pgs_read_job j = {
        "sst_cp_thread_get", k_thread_get_sql, "checkpoint store: reading a thread", {0}, NULL};
    sst__pg_params_init(&j.p);
    sst__pg_text(&j.p, thread);
    sst_code rc = sst__pg_read(s->pg, sst__pgs_read_tx, &j, err);
    if (rc == SST_OK && PQntuples(j.res) == 0) {
        rc = sst__error(err, SST_ENOTFOUND, "checkpoint store (PostgreSQL %s): no thread '%s'",
                        sst_pg_name(s->pg), thread);
    }
    if (rc == SST_OK) {
        sst_thread_info t;
        read_thread(j.res, 0, &t);
        each(&t, user_data);
    }
    PQclear(j.res);
    return rc;
}

typedef struct meta_job {
    const char *thread;
    const sst_payload *metadata;
    int64_t now;
} meta_job;

static sst_code thread_put_tx(sst__pg_conn *c, void *user, sst_error *err) {
    meta_job *j = user;
    sst__pg_params p;
    sst__pg_params_init(&p);
    sst__pg_text(&p, j->thread);
    sst__pg_i64(&p, j->now);
    sst__pg_bytes(&p, j->metadata->data != NULL ? j->metadata->data : "{}",
                  j->metadata->data != NULL ? j->metadata->len : 2);
    return sst__pg_run_last(c, "sst_cp_thread_put", k_thread_put_sql, &p,
                            "checkpoint store: writing a thread's metadata", err);
}

sst_code sst__pgs_thread_put(void *self, const char *thread, const sst_payload *metadata,
                             sst_error *err) {
    pg_saver *s = self;
    if (metadata->len > s->max_record_bytes) {
        return sst__error(err, SST_ELIMIT,
                          "checkpoint store (PostgreSQL %s): thread metadata of %zu bytes is "
                          "over the limit of %zu bytes",
                          sst_pg_name(s->pg), metadata->len, s->max_record_bytes);
    }
    meta_job j = {thread, metadata, (int64_t)sst__now_ms()};
    return sst__pg_tx(s->pg, s->sync_all, thread_put_tx, &j, err);
}

/* ---- copy ---- */

typedef struct copy_job {
    const char *from, *to;
} copy_job;

static sst_code copy_tx(sst__pg_conn *c, void *user, sst_error *err) {
    copy_job *j = user;
    sst__pg_params p;
    sst__pg_params_init(&p);
    sst__pg_text(&p, j->from);
    sst__pg_text(&p, j->to);
    PGresult *r = sst__pg_exec(c, "sst_cp_copy_check", k_share_heads_sql, &p,
                               "checkpoint store: copying a thread", err);
    if (r == NULL) {
        return sst__code(err);
    }
    bool from_exists = sst__pg_int(r, 0, 1) != 0, to_exists = sst__pg_int(r, 0, 2) != 0;
    PQclear(r);
    if (!from_exists) {
        return sst__error(err, SST_ENOTFOUND,
                          "checkpoint store (PostgreSQL %s): no thread '%s' to copy",
                          sst_pg_name(c->pg), j->from);
    }
    if (to_exists && c->after_lost_commit) {
        return SST_OK; /* (most likely) made by the earlier attempt, whose COMMIT applied */
    }
    if (to_exists) {
        return sst__error(err, SST_ECONFLICT,
                          "checkpoint store (PostgreSQL %s): thread '%s' exists already",
                          sst_pg_name(c->pg), j->to);
    }
    r = sst__pg_exec(c, "sst_cp_copy", k_copy_sql, &p, "checkpoint store: copying a thread", err);
    if (r == NULL) {
        if (sst__code(err) == SST_ECONFLICT) { /* made meanwhile by another process */
            return sst__error(err, SST_ECONFLICT,
                              "checkpoint store (PostgreSQL %s): thread '%s' exists already",
                              sst_pg_name(c->pg), j->to);
        }
        return sst__code(err);
    }
    int64_t wanted = sst__pg_int(r, 0, 0), found = sst__pg_int(r, 0, 1);
    PQclear(r);
    if (found != wanted) { /* cannot happen while the records refer to them */
        return sst__error(err, SST_EIO,
                          "checkpoint store (PostgreSQL %s): %lld of the blobs thread '%s' "
                          "refers to are missing; nothing was copied",
                          sst_pg_name(c->pg), (long long)(wanted - found), j->from);
    }
    return SST_OK;
}

sst_code sst__pgs_copy_thread(void *self, const char *from, const char *to, sst_error *err) {
    pg_saver *s = self;
    copy_job j = {from, to};
    return sst__pg_tx(s->pg, s->sync_all, copy_tx, &j, err);
}

/* ---- delete, prune ---- */

static sst_code lock_heads(sst__pg_conn *c, const char *thread, const char *what, sst_error *err) {
    sst__pg_params p;
    sst__pg_params_init(&p);
    sst__pg_text(&p, thread);
    return sst__pg_run(c, "sst_cp_lock_heads", k_lock_heads_sql, &p, what, err);
}

/*
 * Runs a RELEASE_SQL statement (@p p its parameters) and deletes the blobs it left
 * without references; *removed (if not NULL) counts the records deleted.
 */
static sst_code release(sst__pg_conn *c, const char *name, const char *sql, const sst__pg_params *p,
                        const char *what, size_t *removed, sst_error *err) {
    PGresult *r = sst__pg_exec(c, name, sql, p, what, err);
    if (r == NULL) {
        return sst__code(err);
    }
    int rows = PQntuples(r);
    if (removed != NULL) {
        *removed = rows > 0 ? (size_t)sst__pg_int(r, 0, 0) : 0;
    }
    const char **ids = sst__calloc((size_t)rows + 1, sizeof *ids);
    size_t *lens = sst__calloc((size_t)rows + 1, sizeof *lens);
    size_t n = 0;
    sst_code rc = ids != NULL && lens != NULL ? SST_OK : sst__enomem(err);
    for (int i = 0; rc == SST_OK && i < rows; i++) {
        if (!sst__pg_null(r, i, 1)) {
            ids[n] = sst__pg_bytes_at(r, i, 1, &lens[n]);
            n++;
        }
    }
    char *arr = NULL;
    size_t arr_len = 0;
    if (rc == SST_OK && n > 0 &&
        (rc = sst__pgs_array(25, n, ids, lens, &arr, &arr_len, err)) == SST_OK) {
        sst__pg_params q;
        sst__pg_params_init(&q);
        sst__pg_bytes(&q, arr, arr_len);
        rc = sst__pg_run(c, "sst_cp_blobs_drop", k_blobs_drop_sql, &q, what, err);
    }
    sst__free(arr);
    sst__free(ids);
    sst__free(lens);
    PQclear(r);
    return rc;
}

static sst_code delete_tx(sst__pg_conn *c, void *user, sst_error *err) {
    const char *thread = user;
    static const char what[] = "checkpoint store: deleting a thread";
    sst_code rc = lock_heads(c, thread, what, err);
    if (rc != SST_OK) {
        return rc;
    }
    sst__pg_params p;
    sst__pg_params_init(&p);
    sst__pg_text(&p, thread);
    return release(c, "sst_cp_delete_thread", k_delete_thread_sql, &p, what, NULL, err);
}

sst_code sst__pgs_delete_thread(void *self, const char *thread, sst_error *err) {
    pg_saver *s = self;
    return sst__pg_tx(s->pg, s->sync_all, delete_tx, (void *)thread, err);
}

/* A thread's records in put order, as prune needs them (strings point into a result). */
typedef struct chain_rec {
    const char *id, *ns, *parent;
    size_t id_len;
    bool delta, keep;
} chain_rec;

/*
 * Marks the latest @p keep records of each namespace and their chains back to a
 * snapshot. Records are visited newest first, so a kept delta marks its parent before
 * the parent is visited.
 */
static sst_code mark_kept(chain_rec *c, size_t n, size_t keep, sst_error *err) {
    sst__strmap seen = {0}, index = {0};
    if (!sst__map_reserve(&seen, n) || !sst__map_reserve(&index, n)) {
        sst__map_free(&seen);
        sst__map_free(&index);
        return sst__enomem(err);
    }
    for (size_t i = 0; i < n; i++) {
        (void)sst__map_put(&index, c[i].id, i); /* room reserved above */
    }
    for (size_t i = n; i-- > 0;) {
        size_t slot = sst__map_find(&seen, c[i].ns), count = 0;
        if (slot == SIZE_MAX) {
            (void)sst__map_put(&seen, c[i].ns, 1); /* room reserved above */
        } else {
            count = seen.vals[slot]++;
        }
        c[i].keep |= count < keep;
        size_t p;
        if (c[i].keep && c[i].delta && c[i].parent != NULL &&
            sst__map_get(&index, c[i].parent, &p) && p < i) {
            c[p].keep = true;
        }
    }
    sst__map_free(&seen);
    sst__map_free(&index);
    return SST_OK;
}

typedef struct prune_job {
    const char *thread;
    size_t keep;
    size_t removed; /* OUT */
} prune_job;

static sst_code prune_tx(sst__pg_conn *c, void *user, sst_error *err) {
    prune_job *j = user;
    static const char what[] = "checkpoint store: pruning a thread";
    j->removed = 0;
    sst_code rc = lock_heads(c, j->thread, what, err);
    if (rc != SST_OK) {
        return rc;
    }
    sst__pg_params p;
    sst__pg_params_init(&p);
    sst__pg_text(&p, j->thread);
    PGresult *r = sst__pg_exec(c, "sst_cp_chain", k_chain_sql, &p, what, err);
    if (r == NULL) {
        return sst__code(err);
    }
    size_t n = (size_t)PQntuples(r);
    chain_rec *recs = sst__calloc(n + 1, sizeof *recs);
    const char **gone = sst__calloc(n + 1, sizeof *gone);
    size_t *gone_lens = sst__calloc(n + 1, sizeof *gone_lens);
    rc = recs != NULL && gone != NULL && gone_lens != NULL ? SST_OK : sst__enomem(err);
    for (size_t i = 0; rc == SST_OK && i < n; i++) {
        size_t id_len;
        const char *id = sst__pg_bytes_at(r, (int)i, 0, &id_len);
        recs[i] = (chain_rec){.id = id,
                              .id_len = id_len,
                              .ns = sst__pg_bytes_at(r, (int)i, 1, NULL),
                              .parent = sst__pg_bytes_at(r, (int)i, 2, NULL),
                              .delta = sst__pg_int(r, (int)i, 3) != 0};
    }
    rc = rc == SST_OK ? mark_kept(recs, n, j->keep, err) : rc;
    size_t n_gone = 0;
    for (size_t i = 0; rc == SST_OK && i < n; i++) {
        if (!recs[i].keep) {
            gone[n_gone] = recs[i].id;
            gone_lens[n_gone++] = recs[i].id_len;
        }
    }
    char *arr = NULL;
    size_t arr_len = 0;
    if (rc == SST_OK && n_gone > 0 &&
        (rc = sst__pgs_array(25, n_gone, gone, gone_lens, &arr, &arr_len, err)) == SST_OK) {
        sst__pg_bytes(&p, arr, arr_len);
        rc = release(c, "sst_cp_delete_records", k_delete_records_sql, &p, what, &j->removed, err);
    }
    sst__free(arr);
    sst__free(recs);
    sst__free(gone);
    sst__free(gone_lens);
    PQclear(r);
    return rc;
}

sst_code sst__pgs_prune(void *self, const char *thread, size_t keep, size_t *removed,
                        sst_error *err) {
    pg_saver *s = self;
    prune_job j = {thread, keep, 0};
    sst_code rc = sst__pg_tx(s->pg, s->sync_all, prune_tx, &j, err);
    if (removed != NULL) {
        *removed = rc == SST_OK ? j.removed : 0;
    }
    return rc;
}
