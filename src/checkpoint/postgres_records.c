/* SPDX-License-Identifier: MIT */
/*
 * The PostgreSQL saver's records: one row per checkpoint (its typed fields as
 * columns, its payloads and pending writes as bytea, as given, and the ids of
 * its blobs), a head row per (thread, namespace), and the shared blobs with
 * their reference counts. A put is one statement (CTEs) in one transaction:
 * BEGIN, the statement, COMMIT.
 *
 * Fencing across processes: the head row of (thread, ns) names its latest
 * checkpoint. A put advances it with `UPDATE ... WHERE head = parent` (a
 * thread's first record inserts it, a fork overwrites it), and the record is
 * inserted only from that statement's RETURNING. Under READ COMMITTED the
 * UPDATE takes the row lock, so two writers of one thread queue on it; the
 * second re-checks its WHERE against the row the first committed, finds
 * another head and changes nothing: it gets SST_ECONFLICT, and nothing it
 * sent is written. A thread's first record inserts the head with ON
 * CONFLICT: of two at once, the second waits for the first and finds a row.
 * Put order is the database-wide sequence "seq": a record of (thread, ns) is
 * inserted only after the head row lock, so after the commit of the record
 * before it, and its seq is larger.
 */
#include <stdio.h>
#include <string.h>

#include "postgres_int.h"

/* The columns a record read returns, in this order (get adds the last three). */
#define REC_COLS "id, parent, step, format, kind, source, run_id, created, status, next, meta, ns"
enum {
    R_ORD, /* get: 0 for the record, then its blobs in order */
    R_ID,
    R_PARENT,
    R_STEP,
    R_FORMAT,
    R_KIND,
    R_SOURCE,
    R_RUN_ID,
    R_CREATED,
    R_STATUS,
    R_NEXT,
    R_META,
    R_NS,
    R_BODY,   /* get: the body, or a blob's content */
    R_WRITES, /* get */
    R_PRESENT /* get: false for a blob the record lists that is not stored */
};

/*
 * The put (see the file comment): one statement, in a variant per way of moving the
 * head and with or without blobs, chosen here rather than by parameters in the SQL
 * so that each variant's plan has no branch a parameter decides: PostgreSQL then
 * keeps its generic plan after five puts (pg_prepared_statements shows it) instead of
 * planning the statement again on every put, which a single statement with such
 * branches did and which cost most of a put's time. Parameters: $1 thread, $2 ns, $3 id,
 * $4 parent, $5 step, $6 format, $7 kind, $8 source, $9 run_id, $10 created,
 * $11 status, $12 next, $13 metadata, $14 body; with blobs also $15 their ids
 * (text[]) and $16 their contents (bytea[], NULL for a reference to a stored blob).
 * The statement returns whether the record was stored (0: fenced out), the
 * first blob referred to that is not stored (NULL: none) and, under a lease, whether the
 * lease was still this saver's (see below).
 *
 * The head CTE "hd" returns a row when the record may be stored: a thread's first
 * record of the namespace inserts the head (a head found there, even one committed
 * meanwhile by another process, which the INSERT waits for, means a conflict); a
 * record with a parent moves it only from that parent; a fork moves it from wherever
 * it is. The thread's row is made with its first record (or a fork's): a record with
 * a parent follows one that made it (delete_thread removes both, copy_thread copies
 * both).
 *
 * Blobs: a blob row counts the records that refer to it ("refs"). A put adds one
 * to each of its blobs, inserting those sent with content (a stored one keeps its
 * bytes: equal ids mean equal content); a reference to a blob that is not there
 * leaves it out of rb and the statement names it. Deleting records subtracts
 * their references and deletes the rows that reach 0, in the same transaction
 * (postgres_threads.c). Both sides change the count under the row lock, so a put
 * referring to a blob while another process deletes its last record either comes
 * first (the count stays above 0 and the blob stays) or waits and then finds the
 * row gone (SST_ENOTFOUND: the writer sends the content again): a record never
 * refers to a missing blob. A count avoids scanning every record's blob list on
 * each delete, which in a shared database would also need a lock on all of them.
 */
#define HEAD_FIRST                                                                                 \
    "hd AS (INSERT INTO sst_checkpoint_heads(thread, ns, head)"                                    \
    " VALUES($1::text, $2::text, $3::text) ON CONFLICT (thread, ns) DO NOTHING RETURNING 1)"
#define HEAD_ADVANCE                                                                               \
    "hd AS (UPDATE sst_checkpoint_heads SET head = $3::text"                                       \
    " WHERE thread = $1::text AND ns = $2::text AND head = $4::text RETURNING 1)"
#define HEAD_FORK                                                                                  \
    "hd AS (INSERT INTO sst_checkpoint_heads(thread, ns, head)"                                    \
    " VALUES($1::text, $2::text, $3::text)"                                                        \
    " ON CONFLICT (thread, ns) DO UPDATE SET head = excluded.head RETURNING 1)"
#define PUT_REC(BLOB_IDS)                                                                          \
    " rec AS (INSERT INTO sst_checkpoints(thread, ns, id, parent, step, format, kind, source,"     \
    " run_id, created, status, next, meta, body, blobs)"                                           \
    " SELECT $1::text, $2::text, $3::text, $4::text, $5::bigint, $6::integer, $7::smallint,"       \
    " $8::text, $9::text, $10::bigint, $11::smallint, $12::bytea, $13::bytea, "                    \
    "$14::bytea, " BLOB_IDS " FROM hd RETURNING 1)"
#define PUT_BLOBS                                                                                  \
    ", bl AS (SELECT b.id, b.body FROM unnest($15::text[], $16::bytea[]) AS b(id, body)),"         \
    " nb AS (INSERT INTO sst_checkpoint_blobs AS b(id, refs, body)"                                \
    " SELECT bl.id, 1, bl.body FROM bl, rec WHERE bl.body IS NOT NULL ORDER BY bl.id"              \
    " ON CONFLICT (id) DO UPDATE SET refs = b.refs + 1),"                                          \
    " rb AS (UPDATE sst_checkpoint_blobs AS b SET refs = b.refs + 1 FROM bl, rec"                  \
    " WHERE bl.body IS NULL AND b.id = bl.id RETURNING b.id)"
#define PUT_THREAD                                                                                 \
    ", th AS (INSERT INTO sst_checkpoint_threads(thread, created, updated)"                        \
    " SELECT $1::text, $10::bigint, $10::bigint FROM rec ON CONFLICT (thread) DO NOTHING)"
#define PUT_MISSING                                                                                \
    "(SELECT min(bl.id) FROM bl WHERE bl.body IS NULL AND bl.id NOT IN (SELECT id FROM rb))"
/*
 * A put under a lease (this saver holds the thread): the statement also checks that the
 * lease is still this saver's, in CTE "lk" (the owner is the last parameter: $15, or $17
 * with blobs), and the head moves only from a row of lk: a put whose lease was taken over
 * writes nothing, and the statement's third column says why (0: the lease). The share
 * lock makes a takeover (an UPDATE of the row) wait for this transaction, or this one
 * see its result. One statement where the fence was one of its own: a round trip and a
 * statement less per checkpoint.
 */
#define LEASE(N)                                                                                   \
    "lk AS (SELECT 1 FROM sst_checkpoint_locks WHERE thread = $1::text AND owner = $" N            \
    "::text FOR SHARE), "
#define HEAD_FIRST_L                                                                               \
    "hd AS (INSERT INTO sst_checkpoint_heads(thread, ns, head)"                                    \
    " SELECT $1::text, $2::text, $3::text FROM lk ON CONFLICT (thread, ns) DO NOTHING RETURNING "  \
    "1)"
#define HEAD_ADVANCE_L                                                                             \
    "hd AS (UPDATE sst_checkpoint_heads SET head = $3::text WHERE thread = $1::text"               \
    " AND ns = $2::text AND head = $4::text AND EXISTS (SELECT 1 FROM lk) RETURNING 1)"
#define HEAD_FORK_L                                                                                \
    "hd AS (INSERT INTO sst_checkpoint_heads(thread, ns, head)"                                    \
    " SELECT $1::text, $2::text, $3::text FROM lk"                                                 \
    " ON CONFLICT (thread, ns) DO UPDATE SET head = excluded.head RETURNING 1)"
#define PUT_SQL(HEAD, THREAD)                                                                      \
    {                                                                                              \
        "WITH " HEAD "," PUT_REC("NULL::text[]") THREAD                                            \
            " SELECT (SELECT count(*) FROM rec), NULL::text, 1::bigint",                           \
            "WITH " HEAD "," PUT_REC("$15::text[]") PUT_BLOBS THREAD                               \
            " SELECT (SELECT count(*) FROM rec), " PUT_MISSING ", 1::bigint"                       \
    }
#define PUT_SQL_L(HEAD, THREAD, LK, LK_B, GV, GV_B)                                                \
    {                                                                                              \
        "WITH " LK HEAD "," PUT_REC("NULL::text[]") THREAD GV                                      \
            " SELECT (SELECT count(*) FROM rec), NULL::text, (SELECT count(*) FROM lk)",           \
            "WITH " LK_B HEAD "," PUT_REC("$15::text[]") PUT_BLOBS THREAD GV_B                     \
            " SELECT (SELECT count(*) FROM rec), " PUT_MISSING ", (SELECT count(*) FROM lk)"       \
    }
/*
 * A put that takes the lease (SST_PUT_TAKE_LOCK): "lk" is the take itself (a free or
 * expired row, as postgres_lease.c takes it; $15 owner, $16 pid, $17 lease ms, or $17..
 * $19 with blobs), and the head moves only when it took the row: one statement for the
 * lease and the record. A live holder's row is left locked by the INSERT (ON CONFLICT);
 * the caller then reads it and may take it over (sst__pgs_take_busy).
 */
#define TAKE(N, P, L)                                                                              \
    "lk AS (INSERT INTO sst_checkpoint_locks AS l(thread, owner, pid, expires)"                    \
    " VALUES($1::text, $" N "::text, $" P "::bigint, " PGS_NOW_MS " + $" L "::bigint)"             \
    " ON CONFLICT (thread) DO UPDATE SET owner = excluded.owner, pid = excluded.pid,"              \
    " expires = excluded.expires WHERE l.expires <= " PGS_NOW_MS " RETURNING 1), "
/* A put that gives the lease back (SST_PUT_GIVE_LOCK), under it: the row goes once the
 * record is in (gv), in the same statement. */
#define GIVE(N)                                                                                    \
    ", gv AS (DELETE FROM sst_checkpoint_locks WHERE thread = $1::text AND owner = $" N            \
    "::text AND EXISTS (SELECT 1 FROM rec))"
enum { PUT_FIRST, PUT_ADVANCE, PUT_FORK };
/* How a put stands to the lease: none held, held (checked), taken with it, held and
 * given back with it. */
enum { PUT_FREE, PUT_HELD, PUT_TAKE, PUT_GIVE };
#define PUT_VARIANTS(HEAD, HEAD_L, THREAD)                                                         \
    {                                                                                              \
        PUT_SQL(HEAD, THREAD), PUT_SQL_L(HEAD_L, THREAD, LEASE("15"), LEASE("17"), "", ""),        \
            PUT_SQL_L(HEAD_L, THREAD, TAKE("15", "16", "17"), TAKE("17", "18", "19"), "", ""),     \
            PUT_SQL_L(HEAD_L, THREAD, LEASE("15"), LEASE("17"), GIVE("15"), GIVE("17"))            \
    }
/* [how][lease][blobs] */
static const char *const k_put_sql[3][4][2] = {
    [PUT_FIRST] = PUT_VARIANTS(HEAD_FIRST, HEAD_FIRST_L, PUT_THREAD),
    [PUT_ADVANCE] = PUT_VARIANTS(HEAD_ADVANCE, HEAD_ADVANCE_L, ""),
    [PUT_FORK] = PUT_VARIANTS(HEAD_FORK, HEAD_FORK_L, PUT_THREAD),
};
#define PUT_NAMES(P)                                                                               \
    {                                                                                              \
        {P, P "_b"}, {P "_l", P "_bl"}, {P "_t", P "_bt"}, {                                       \
            P "_g", P "_bg"                                                                        \
        }                                                                                          \
    }
static const char *const k_put_name[3][4][2] = {
    [PUT_FIRST] = PUT_NAMES("sst_cp_put_first"),
    [PUT_ADVANCE] = PUT_NAMES("sst_cp_put"),
    [PUT_FORK] = PUT_NAMES("sst_cp_put_fork"),
};

/* Renews this saver's lease on a thread, inside a put's transaction. */
static const char k_renew_sql[] =
    "UPDATE sst_checkpoint_locks SET expires = " PGS_NOW_MS " + $3::bigint"
    " WHERE thread = $1::text AND owner = $2::text";

/* A retried put whose first COMMIT may have applied: is this exact record there? */
static const char k_put_done_sql[] =
    "SELECT 1 FROM sst_checkpoints WHERE thread = $1::text AND id = $2::text AND ns = $3::text"
    " AND parent IS NOT DISTINCT FROM $4::text";

static const char k_head_sql[] =
    "SELECT head FROM sst_checkpoint_heads WHERE thread = $1::text AND ns = $2::text";

static const char k_put_writes_sql[] =
    "UPDATE sst_checkpoints SET status = $4::smallint, writes = $5::bytea"
    " WHERE thread = $1::text AND ns = $2::text AND id = $3::text RETURNING 1";

/* A record (id NULL: the latest, its namespace's head) with its pending writes, then one
 * row per blob it lists, in order. */
static const char k_get_sql[] =
    "WITH c AS (SELECT * FROM sst_checkpoints WHERE thread = $1::text AND ns = $2::text"
    " AND id = coalesce($3::text, (SELECT head FROM sst_checkpoint_heads"
    " WHERE thread = $1::text AND ns = $2::text)))"
    " SELECT 0::bigint, " REC_COLS ", body, writes, true FROM c"
    " UNION ALL SELECT b.ord, b.id, NULL, 0, 0, 0, NULL, NULL, 0, 0, NULL, NULL, NULL, s.body,"
    " NULL, s.id IS NOT NULL FROM c CROSS JOIN LATERAL unnest(c.blobs) WITH ORDINALITY"
    " AS b(id, ord) LEFT JOIN sst_checkpoint_blobs s ON s.id = b.id ORDER BY 1";

/* Listing, newest first: $2 before (NULL: from the newest), $3 the limit (NULL: all). */
#define LIST_SQL(NS_WHERE)                                                                         \
    "SELECT 0::bigint, " REC_COLS " FROM sst_checkpoints WHERE thread = $1::text" NS_WHERE         \
    " AND ($2::text IS NULL OR seq < (SELECT seq FROM sst_checkpoints"                             \
    " WHERE thread = $1::text AND id = $2::text)) ORDER BY seq DESC LIMIT $3::bigint"
static const char k_list_ns_sql[] = LIST_SQL(" AND ns = $4::text");
static const char k_list_all_sql[] = LIST_SQL("");

/* ---- writing ---- */

static sst_code too_large(const pg_saver *s, const char *what, size_t len, sst_error *err) {
    return sst__error(err, SST_ELIMIT,
                      "checkpoint store (PostgreSQL %s): %s of %zu bytes is over the limit of "
                      "%zu bytes; nothing was written",
                      sst_pg_name(s->pg), what, len, s->max_record_bytes);
}

static sst_code check_sizes(const pg_saver *s, const sst_checkpoint *r, sst_error *err) {
    size_t big = sst__record_largest(r);
    if (big <= s->max_record_bytes) {
        return SST_OK;
    }
    char what[160];
    snprintf(what, sizeof what, "the checkpoint of thread '%s' at step %lld", r->thread_id,
             (long long)r->step);
    return too_large(s, what, big, err);
}

/* A record's blobs as the two arrays of the put: each id once, in the order first listed,
 * with the content any of its entries carries. */
typedef struct blob_arrays {
    char *ids, *bodies; /* binary arrays (new), NULL when the record has no blobs */
    size_t ids_len, bodies_len;
} blob_arrays;

static void blob_arrays_free(blob_arrays *a) {
    sst__free(a->ids);
    sst__free(a->bodies);
}

static sst_code blob_arrays_make(const sst_checkpoint *r, blob_arrays *a, sst_error *err) {
    *a = (blob_arrays){0};
    if (r->n_blobs == 0) {
        return SST_OK;
    }
    const char **ids = sst__calloc(r->n_blobs, sizeof *ids);
    const char **bodies = sst__calloc(r->n_blobs, sizeof *bodies);
    size_t *id_lens = sst__calloc(r->n_blobs, sizeof *id_lens);
    size_t *body_lens = sst__calloc(r->n_blobs, sizeof *body_lens);
    sst__strmap seen = {0};
    sst_code rc = SST_OK;
    if (ids == NULL || bodies == NULL || id_lens == NULL || body_lens == NULL ||
        !sst__map_reserve(&seen, r->n_blobs)) {
        rc = sst__enomem(err);
    }
    size_t n = 0;
    for (size_t i = 0; rc == SST_OK && i < r->n_blobs; i++) {
        const sst_blob *b = &r->blobs[i];
        size_t at;
        if (!sst__map_get(&seen, b->id, &at)) {
            at = n++;
            (void)sst__map_put(&seen, b->id, at); /* room reserved above */
            ids[at] = b->id;
            id_lens[at] = strlen(b->id);
        }
        if (bodies[at] == NULL && b->content.data != NULL) {
            bodies[at] = b->content.data;
            body_lens[at] = b->content.len;
        }
    }
    rc = rc == SST_OK ? sst__pgs_array(25, n, ids, id_lens, &a->ids, &a->ids_len, err) : rc;
    rc = rc == SST_OK ? sst__pgs_array(17, n, bodies, body_lens, &a->bodies, &a->bodies_len, err)
                      : rc;
    if (rc != SST_OK) {
        blob_arrays_free(a);
        *a = (blob_arrays){0};
    }
    sst__map_free(&seen);
    sst__free(ids);
    sst__free(bodies);
    sst__free(id_lens);
    sst__free(body_lens);
    return rc;
}

static void payload_param(sst__pg_params *p, const sst_payload *pl) {
    sst__pg_bytes(p, pl->data, pl->data != NULL ? pl->len : 0);
}

typedef struct put_job {
    pg_saver *s;
    const sst_checkpoint *r;
    blob_arrays blobs;
    bool held;                  /* this saver holds the thread's lease: check it is still its */
    bool renew;                 /* and renew it */
    bool take, give;            /* take the lease / give it back, in the put's statement */
    int64_t pid;                /* this process's pid (a take's row names it) */
    char owner[SST__OWNER_MAX]; /* this saver's lease owner (when held) */
} put_job;

/* SST_ECONFLICT for a put whose parent is not the head, naming the head as it is now. */
static sst_code fenced_out(sst__pg_conn *c, const sst_checkpoint *r, sst_error *err) {
    sst__pg_params p;
    sst__pg_params_init(&p);
    sst__pg_text(&p, r->thread_id);
    sst__pg_text(&p, r->ns);
    PGresult *res = sst__pg_exec(c, "sst_cp_head", k_head_sql, &p,
                                 "checkpoint store: reading a thread's latest checkpoint", err);
    if (res == NULL) {
        return sst__code(err);
    }
    const char *head = PQntuples(res) > 0 ? sst__pg_bytes_at(res, 0, 0, NULL) : NULL;
    const char *parent = r->parent_id;
    sst__error(err, SST_ECONFLICT,
               "thread '%s': checkpoint %s follows %s, but the thread's latest checkpoint is "
               "now %s (another writer committed first); nothing was written",
               r->thread_id, r->id, parent != NULL ? parent : "nothing (a new thread)",
               head != NULL ? head : "none");
    PQclear(res);
    return SST_ECONFLICT;
}

/* True when the record is stored as put (after a COMMIT whose answer was lost). */
static sst_code put_done(sst__pg_conn *c, const sst_checkpoint *r, bool *done, sst_error *err) {
    sst__pg_params p;
    sst__pg_params_init(&p);
    sst__pg_text(&p, r->thread_id);
    sst__pg_text(&p, r->id);
    sst__pg_text(&p, r->ns);
    sst__pg_text(&p, r->parent_id);
    PGresult *res = sst__pg_exec(c, "sst_cp_put_done", k_put_done_sql, &p,
                                 "checkpoint store: looking for a checkpoint", err);
    if (res == NULL) {
        return sst__code(err);
    }
    *done = PQntuples(res) > 0;
    PQclear(res);
    return SST_OK;
}

/* SST_ECONFLICT for a put whose lease (this saver held it) has another holder now. */
static sst_code lease_lost(const put_job *j, sst_error *err) {
    return sst__error(err, SST_ECONFLICT,
                      "thread '%s': this writer's lease on the thread was taken over (it "
                      "was paused or cut off past the lease); checkpoint %s was not written",
                      j->r->thread_id, j->r->id);
}

/* The put's statement in variant @p lease (PUT_FREE ...); the result, or NULL with @p err. */
static PGresult *put_stmt(sst__pg_conn *c, const put_job *j, int lease, sst_error *err) {
    const sst_checkpoint *r = j->r;
    sst__pg_params p;
    sst__pg_params_init(&p);
    sst__pg_text(&p, r->thread_id);
    sst__pg_text(&p, r->ns);
    sst__pg_text(&p, r->id);
    sst__pg_text(&p, r->parent_id);
    sst__pg_i64(&p, r->step);
    sst__pg_i64(&p, r->format);
    sst__pg_i64(&p, r->kind);
    sst__pg_text(&p, r->source);
    sst__pg_text(&p, r->run_id);
    sst__pg_i64(&p, r->created_at);
    sst__pg_i64(&p, r->status);
    payload_param(&p, &r->next);
    payload_param(&p, &r->metadata);
    payload_param(&p, &r->body);
    int blobs = j->blobs.ids != NULL;
    if (blobs) {
        sst__pg_bytes(&p, j->blobs.ids, j->blobs.ids_len);
        sst__pg_bytes(&p, j->blobs.bodies, j->blobs.bodies_len);
    }
    if (lease != PUT_FREE) {
        sst__pg_text(&p, j->owner);
    }
    if (lease == PUT_TAKE) {
        sst__pg_i64(&p, j->pid);
        sst__pg_i64(&p, j->s->lease_ms);
    }
    int how = r->fork ? PUT_FORK : r->parent_id != NULL ? PUT_ADVANCE : PUT_FIRST;
    /* The transaction's last statement unless a renewal or a give-back follows, and one
     * that writes nothing when it answers no (not a take: its lease row is written even
     * when the head has moved; nor with blobs: a missing one's record is rolled back):
     * then its COMMIT may go with it (sst__pg_exec_last). */
    bool last = !j->renew && !blobs && lease != PUT_TAKE && (!j->give || lease == PUT_GIVE);
    PGresult *res = (last ? sst__pg_exec_last : sst__pg_exec)(
        c, k_put_name[how][lease][blobs], k_put_sql[how][lease][blobs], &p,
        "checkpoint store: writing a checkpoint", err);
    if (res == NULL && sst__code(err) == SST_ECONFLICT) { /* the primary key (thread, id) */
        sst__error(err, SST_ECONFLICT,
                   "thread '%s' has a checkpoint %s already; nothing was written", r->thread_id,
                   r->id);
    }
    return res;
}

static sst_code put_tx(sst__pg_conn *c, void *user, sst_error *err) {
    put_job *j = user;
    const sst_checkpoint *r = j->r;
    if (c->after_lost_commit) {
        bool done = false;
        sst_code rc = put_done(c, r, &done, err);
        if (rc != SST_OK || done) {
            return rc;
        }
    }
    /* The lease taken (SST_PUT_TAKE_LOCK) or given back (SST_PUT_GIVE_LOCK) in the put's own
     * statement; a put made under it checks it there (PUT_HELD). */
    int lease = j->take ? PUT_TAKE : j->held && j->give ? PUT_GIVE : j->held ? PUT_HELD : PUT_FREE;
    PGresult *res = put_stmt(c, j, lease, err);
    if (res == NULL) {
        return sst__code(err);
    }
    bool leased = sst__pg_int(res, 0, 2) > 0;
    if (!leased && lease == PUT_TAKE) {
        /* A live holder's row (locked by the take): gone, or this saver's own from a commit
         * whose answer was lost, it is taken over; else SST_EBUSY naming it. Then the put. */
        PQclear(res);
        sst_code rc = sst__pgs_take_busy(c, j->s, r->thread_id, err);
        if (rc != SST_OK || (res = put_stmt(c, j, PUT_FREE, err)) == NULL) {
            return sst__code(err);
        }
        leased = true;
    }
    bool stored = sst__pg_int(res, 0, 0) > 0;
    const char *missing = sst__pg_bytes_at(res, 0, 1, NULL);
    sst_code rc = SST_OK;
    if (!leased) {
        PQclear(res);
        return lease_lost(j, err);
    }
    if (stored && missing != NULL) {
        rc = sst__error(err, SST_ENOTFOUND,
                        "checkpoint store (PostgreSQL %s): blob %s of checkpoint %s of thread "
                        "'%s' is not stored (send its content); nothing was written",
                        sst_pg_name(c->pg), missing, r->id, r->thread_id);
    }
    PQclear(res);
    if (!stored) {
        rc = fenced_out(c, r, err);
    }
    sst__pg_params p;
    if (rc == SST_OK && j->renew) { /* a third of the lease has passed: once in a while */
        sst__pg_params_init(&p);
        sst__pg_text(&p, r->thread_id);
        sst__pg_text(&p, j->owner);
        sst__pg_i64(&p, j->s->lease_ms);
        rc = sst__pg_run_last(c, "sst_cp_renew", k_renew_sql, &p,
                              "checkpoint store: renewing a thread's lease", err);
    }
    if (rc == SST_OK && j->give && lease != PUT_GIVE) { /* taken and given back in one put */
        rc = sst__pgs_give_tx(c, j->s, r->thread_id, err);
    }
    return rc;
}

/*
 * A put held open for the next one (SST_PUT_WITH_NEXT: a run's input checkpoint, its first
 * loop checkpoint following at once from the same OS thread): the calling thread's batch
 * on the pool (sst__pg_tx_keep) holds it, uncommitted, and the next put of the thread
 * commits it with its own statement (sst__pg_batch_hand_over, _commit_along): one flush
 * for both. Per OS thread, as the batch is.
 */
static _Thread_local const pg_saver *tl_hold;
static _Thread_local char *tl_hold_thread; /* owned */

static bool hold_for(const pg_saver *s, const char *thread) {
    return tl_hold == s && tl_hold_thread != NULL && strcmp(tl_hold_thread, thread) == 0;
}

static void hold_clear(void) {
    sst__free(tl_hold_thread);
    tl_hold_thread = NULL;
    tl_hold = NULL;
}

void sst__pgs_hold_settle(pg_saver *s, const char *thread) {
    if (hold_for(s, thread)) {
        if (sst__pg_batch_open(s->pg)) {
            (void)sst__pg_batch_commit(s->pg, true, NULL);
        }
        hold_clear();
    }
}

sst_code sst__pgs_put(void *self, const sst_checkpoint *r, bool sync, sst_error *err) {
    pg_saver *s = self;
    sst_code rc = check_sizes(s, r, err);
    put_job j = {.s = s, .r = r};
    rc = rc == SST_OK ? blob_arrays_make(r, &j.blobs, err) : rc;
    if (rc != SST_OK) {
        return rc;
    }
    j.take = (r->put_flags & SST_PUT_TAKE_LOCK) != 0;
    if (j.take && (rc = sst__pgs_take_begin(s, r->thread_id, err)) != SST_OK) {
        blob_arrays_free(&j.blobs);
        return rc;
    }
    j.renew = sst__pgs_renew_due(s, r->thread_id, &j.held);
    if (j.held || j.take) {
        pid_t pid = 0;
        sst__owner_self(j.owner, &pid);
        j.pid = pid;
        sst__pgs_owner(s, j.owner);
    }
    /* Given back only when this saver holds it (or takes it in this very put). */
    j.give =
        (r->put_flags & SST_PUT_GIVE_LOCK) != 0 && (j.take || sst__pgs_give_begin(s, r->thread_id));
    j.renew = j.renew && !j.give;
    if (r->source != NULL && strcmp(r->source, "input") == 0 &&
        (r->ns == NULL || r->ns[0] == '\0')) {
        /* A run's input checkpoint in the claim's transaction (the server's worker hands it
         * over): the input step runs no node, so it commits with the first superstep's
         * checkpoint, one commit for claim, lease and both; a crash before that commit
         * leaves the run pending, to be claimed and started again. */
        sst__pg_batch_hand_over_past(s->pg);
    }
    /*
     * The run's last checkpoint (SST_PUT_RUN_END, set by the graph: the root graph's, nothing
     * left to run) is kept open for the run's finish when the server's worker asked for it
     * (sst__pg_keep): one flush for both. Should one be kept that is not the last after all,
     * the worker commits it before the next superstep starts, so a run never goes on over
     * an uncommitted checkpoint. A put that takes or gives back the lease commits itself.
     */
    bool follows = hold_for(s, r->thread_id);
    bool hold = !follows && (r->put_flags & SST_PUT_WITH_NEXT) != 0 && !j.give &&
                !sst__pg_batch_open(s->pg);
    if (hold) {
        hold_clear(); /* one left by a batch that committed with another transaction */
        tl_hold_thread = sst__strndup(r->thread_id, strlen(r->thread_id));
        hold = tl_hold_thread != NULL;
    }
    bool keep = hold || ((r->put_flags & SST_PUT_RUN_END) != 0 && !j.take && !j.give);
    if (hold) {
        sst__pg_keep(s->pg, r->thread_id);
    } else if (follows) { /* commits the held put with this one, in its exchange */
        sst__pg_batch_hand_over(s->pg);
        sst__pg_batch_commit_along(s->pg);
    }
    rc = keep ? sst__pg_tx_keep(s->pg, r->thread_id, sync || s->sync_all, put_tx, &j, err)
              : sst__pg_tx(s->pg, sync || s->sync_all, put_tx, &j, err);
    if (hold) {
        sst__pg_keep(s->pg, NULL);
        if (rc == SST_OK && sst__pg_batch_open(s->pg)) {
            tl_hold = s;
        } else {
            hold_clear(); /* committed or failed: nothing held */
        }
    } else if (follows && !sst__pg_batch_open(s->pg)) {
        hold_clear();
    }
    if (rc == SST_OK && j.renew) {
        sst__pgs_renewed(s, r->thread_id);
    }
    if (j.take) {
        sst__pgs_take_end(s, r->thread_id, rc == SST_OK && !j.give);
    } else if (j.give) {
        sst__pgs_give_end(s, r->thread_id, rc == SST_OK);
    }
    blob_arrays_free(&j.blobs);
    return rc;
}

typedef struct writes_job {
    const char *thread, *ns, *id;
    const sst_payload *writes;
    sst_thread_status status;
} writes_job;

static sst_code put_writes_tx(sst__pg_conn *c, void *user, sst_error *err) {
    writes_job *j = user;
    sst__pg_params p;
    sst__pg_params_init(&p);
    sst__pg_text(&p, j->thread);
    sst__pg_text(&p, j->ns);
    sst__pg_text(&p, j->id);
    sst__pg_i64(&p, j->status);
    payload_param(&p, j->writes);
    PGresult *res = sst__pg_exec_last(c, "sst_cp_put_writes", k_put_writes_sql, &p,
                                      "checkpoint store: writing pending writes", err);
    if (res == NULL) {
        return sst__code(err);
    }
    bool found = PQntuples(res) > 0;
    PQclear(res);
    return found ? SST_OK
                 : sst__error(err, SST_ENOTFOUND,
                              "checkpoint store (PostgreSQL %s): thread '%s' has no checkpoint "
                              "%s to write to",
                              sst_pg_name(c->pg), j->thread, j->id);
}

sst_code sst__pgs_put_writes(void *self, const char *thread, const char *ns, const char *id,
                             const sst_payload *writes, sst_thread_status status, bool sync,
                             sst_error *err) {
    pg_saver *s = self;
    if (writes->len > s->max_record_bytes) {
        return too_large(s, "the pending writes", writes->len, err);
    }
    writes_job j = {thread, ns, id, writes, status};
    return sst__pg_tx(s->pg, sync || s->sync_all, put_writes_tx, &j, err);
}

/* ---- reading ---- */

static const char *col_text(const PGresult *r, int row, int col) {
    return sst__pg_bytes_at(r, row, col, NULL);
}

/* A bytea column as a payload: empty for NULL or no bytes. */
static sst_payload col_payload(const PGresult *r, int row, int col) {
    size_t len;
    const char *data = sst__pg_bytes_at(r, row, col, &len);
    return data != NULL && len > 0 ? (sst_payload){.data = data, .len = len} : (sst_payload){0};
}

/* Row @p row of a record read (REC_COLS) into @p out; strings point into @p r. */
static void read_rec(const PGresult *r, int row, const char *thread, sst_checkpoint *out) {
    *out = (sst_checkpoint){
        .format = (uint32_t)sst__pg_int(r, row, R_FORMAT),
        .thread_id = thread,
        .ns = col_text(r, row, R_NS),
        .id = col_text(r, row, R_ID),
        .parent_id = col_text(r, row, R_PARENT),
        .step = sst__pg_int(r, row, R_STEP),
        .source = col_text(r, row, R_SOURCE),
        .run_id = col_text(r, row, R_RUN_ID),
        .kind = sst__pg_int(r, row, R_KIND) == 0 ? SST_CHECKPOINT_SNAPSHOT : SST_CHECKPOINT_DELTA,
        .created_at = sst__pg_int(r, row, R_CREATED),
        .status = (sst_thread_status)sst__pg_int(r, row, R_STATUS),
        .next = col_payload(r, row, R_NEXT),
        .metadata = col_payload(r, row, R_META),
    };
    if ((unsigned)out->status > SST_THREAD_ERROR) {
        out->status = SST_THREAD_IDLE;
    }
}

sst_code sst__pgs_get(void *self, const char *thread, const char *ns, const char *id,
                      sst_checkpoint_fn each, void *user_data, sst_error *err) {
    pg_saver *s = self;
    sst__pgs_read_job j = {
        "sst_cp_get", k_get_sql, "checkpoint store: reading a checkpoint", {0}, NULL};
    sst__pg_params_init(&j.p);
    sst__pg_text(&j.p, thread);
    sst__pg_text(&j.p, ns);
    sst__pg_text(&j.p, id);
    sst_code rc = sst__pg_read(s->pg, sst__pgs_read_tx, &j, err);
    if (rc != SST_OK) {
        PQclear(j.res);
        return rc;
    }
    int rows = PQntuples(j.res);
    if (rows == 0 || sst__pg_int(j.res, 0, R_ORD) != 0) {
        PQclear(j.res);
        return sst__error(err, SST_ENOTFOUND, "thread '%s' has no checkpoint%s%s", thread,
                          id != NULL ? " " : "", id != NULL ? id : "");
    }
    sst_checkpoint r;
    read_rec(j.res, 0, thread, &r);
    r.body = col_payload(j.res, 0, R_BODY);
    r.writes = col_payload(j.res, 0, R_WRITES);
    sst_blob *blobs = rows > 1 ? sst__calloc((size_t)rows - 1, sizeof *blobs) : NULL;
    if (rows > 1 && blobs == NULL) {
        rc = sst__enomem(err);
    }
    for (int i = 1; rc == SST_OK && i < rows; i++) {
        const char *bid = col_text(j.res, i, R_ID);
        if (sst__pg_int(j.res, i, R_PRESENT) == 0) {
            rc = sst__error(err, SST_EIO,
                            "checkpoint store (PostgreSQL %s): blob %s of checkpoint %s of "
                            "thread '%s' is missing",
                            sst_pg_name(s->pg), bid, r.id, thread);
        }
        size_t len;
        const char *data = sst__pg_bytes_at(j.res, i, R_BODY, &len);
        blobs[i - 1] = (sst_blob){.id = bid, .content = {.data = data, .len = len}};
    }
    if (rc == SST_OK) {
        r.blobs = blobs;
        r.n_blobs = rows > 1 ? (size_t)rows - 1 : 0;
        each(&r, user_data);
    }
    sst__free(blobs);
    PQclear(j.res);
    return rc;
}

sst_code sst__pgs_list(void *self, const sst_checkpoint_query *q, sst_checkpoint_fn each,
                       void *user_data, sst_error *err) {
    pg_saver *s = self;
    sst__pgs_read_job j = {q->ns != NULL ? "sst_cp_list_ns" : "sst_cp_list_all",
                           q->ns != NULL ? k_list_ns_sql : k_list_all_sql,
                           "checkpoint store: listing checkpoints",
                           {0},
                           NULL};
    sst__pg_params_init(&j.p);
    sst__pg_text(&j.p, q->thread_id);
    sst__pg_text(&j.p, q->before);
    /* The metadata filter is applied here (its comparison is JSON value equality, with
     * the source and step fallbacks): the server limits only an unfiltered listing. */
    if (q->limit > 0 && q->filter == NULL) {
        sst__pg_i64(&j.p, (int64_t)q->limit);
    } else {
        sst__pg_text(&j.p, NULL);
    }
    if (q->ns != NULL) {
        sst__pg_text(&j.p, q->ns);
    }
    sst_code rc = sst__pg_read(s->pg, sst__pgs_read_tx, &j, err);
    if (rc != SST_OK) {
        PQclear(j.res);
        return rc;
    }
    size_t sent = 0;
    for (int i = 0; i < PQntuples(j.res) && (q->limit == 0 || sent < q->limit); i++) {
        sst_checkpoint r;
        read_rec(j.res, i, q->thread_id, &r);
        if (!sst__record_matches(&r, q->filter)) {
            continue;
        }
        sent++;
        if (!each(&r, user_data)) {
            break;
        }
    }
    PQclear(j.res);
    return SST_OK;
}
