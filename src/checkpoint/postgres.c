/* SPDX-License-Identifier: MIT */
/*
 * The PostgreSQL saver: opening it on a pool (its own or a shared one), its
 * tables and their versions (common/pg.c sst__pg_schema, component
 * "checkpoint"), the check that tables of these names are this build's, and
 * the helpers its other files share (postgres_int.h lists them).
 *
 * Every table is keyed by thread id first where it has one, so that threads
 * can later be sharded by it; the blobs, shared across threads, are keyed by
 * their id. docs/checkpoints.md describes the tables.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include "postgres_int.h"

/*
 * Version 1. Checkpoints keep their typed fields as columns and their
 * payloads as bytea, as given; "seq" is the put order of the whole database
 * (listing order), "writes" the pending writes, "blobs" the ids of the shared
 * blobs the record refers to. A head row per (thread, namespace) names its
 * latest checkpoint: puts are fenced on it (postgres_records.c). A blob's
 * "refs" counts the records that refer to it (postgres_threads.c).
 */
static const char *const k_steps[] = {
    "CREATE TABLE sst_checkpoints("
    " thread text NOT NULL, id text NOT NULL, ns text NOT NULL, seq bigserial NOT NULL,"
    " parent text, step bigint NOT NULL, format integer NOT NULL, kind smallint NOT NULL,"
    " source text, run_id text, created bigint NOT NULL, status smallint NOT NULL,"
    " next bytea, meta bytea, body bytea, writes bytea, blobs text[],"
    " PRIMARY KEY (thread, id));"
    "CREATE INDEX sst_checkpoints_ns ON sst_checkpoints(thread, ns, seq);"
    "CREATE INDEX sst_checkpoints_seq ON sst_checkpoints(thread, seq);"
    "CREATE TABLE sst_checkpoint_heads(thread text NOT NULL, ns text NOT NULL,"
    " head text NOT NULL, PRIMARY KEY (thread, ns));"
    "CREATE TABLE sst_checkpoint_threads(thread text PRIMARY KEY, created bigint NOT NULL,"
    " updated bigint NOT NULL, metadata bytea);"
    "CREATE TABLE sst_checkpoint_locks(thread text PRIMARY KEY, owner text NOT NULL,"
    " pid bigint NOT NULL, expires bigint NOT NULL);"
    "CREATE TABLE sst_checkpoint_blobs(id text PRIMARY KEY, refs bigint NOT NULL,"
    " body bytea NOT NULL);",
    /*
     * Version 2. The owner of a thread's metadata (sst_thread_query.owner: the server's
     * users, docs/auth.md) and the index that serves a search by it in created order, as
     * the SQLite saver's threads_owner does. The function is IMMUTABLE, as an index needs
     * (convert_from is only STABLE: it depends on the database's encoding, which is fixed
     * for a database), and answers NULL for metadata that is not JSON or an owner that is
     * not a string, so that no write fails on it. Both statements may run again (a
     * database whose version was set back by hand).
     */
    "CREATE OR REPLACE FUNCTION sst_thread_owner(m bytea) RETURNS text LANGUAGE plpgsql IMMUTABLE "
    "STRICT"
    " PARALLEL SAFE AS $f$ DECLARE j jsonb; BEGIN j := convert_from(m, 'UTF8')::jsonb;"
    " RETURN CASE WHEN jsonb_typeof(j -> 'owner') = 'string' THEN j ->> 'owner' END;"
    " EXCEPTION WHEN others THEN RETURN NULL; END $f$;"
    "CREATE INDEX IF NOT EXISTS sst_checkpoint_threads_owner ON sst_checkpoint_threads("
    "sst_thread_owner(metadata), created);",
};

/*
 * The columns this build reads and writes, with their types: tables of these
 * names made by something else (or altered by hand) fail at opening, naming
 * the table, rather than at the first checkpoint.
 */
static const char k_shape_sql[] =
    "SELECT e.t, e.c, e.ty, coalesce(format_type(a.atttypid, a.atttypmod), 'none')"
    " FROM (VALUES ('sst_checkpoints', 'thread', 'text'), ('sst_checkpoints', 'id', 'text'),"
    " ('sst_checkpoints', 'ns', 'text'), ('sst_checkpoints', 'seq', 'bigint'),"
    " ('sst_checkpoints', 'parent', 'text'), ('sst_checkpoints', 'step', 'bigint'),"
    " ('sst_checkpoints', 'format', 'integer'), ('sst_checkpoints', 'kind', 'smallint'),"
    " ('sst_checkpoints', 'source', 'text'), ('sst_checkpoints', 'run_id', 'text'),"
    " ('sst_checkpoints', 'created', 'bigint'), ('sst_checkpoints', 'status', 'smallint'),"
    " ('sst_checkpoints', 'next', 'bytea'), ('sst_checkpoints', 'meta', 'bytea'),"
    " ('sst_checkpoints', 'body', 'bytea'), ('sst_checkpoints', 'writes', 'bytea'),"
    " ('sst_checkpoints', 'blobs', 'text[]'),"
    " ('sst_checkpoint_heads', 'thread', 'text'), ('sst_checkpoint_heads', 'ns', 'text'),"
    " ('sst_checkpoint_heads', 'head', 'text'),"
    " ('sst_checkpoint_threads', 'thread', 'text'),"
    " ('sst_checkpoint_threads', 'created', 'bigint'),"
    " ('sst_checkpoint_threads', 'updated', 'bigint'),"
    " ('sst_checkpoint_threads', 'metadata', 'bytea'),"
    " ('sst_checkpoint_locks', 'thread', 'text'), ('sst_checkpoint_locks', 'owner', 'text'),"
    " ('sst_checkpoint_locks', 'pid', 'bigint'), ('sst_checkpoint_locks', 'expires', 'bigint'),"
    " ('sst_checkpoint_blobs', 'id', 'text'), ('sst_checkpoint_blobs', 'refs', 'bigint'),"
    " ('sst_checkpoint_blobs', 'body', 'bytea')) AS e(t, c, ty)"
    " LEFT JOIN pg_attribute a ON a.attrelid = to_regclass(e.t) AND a.attname = e.c"
    " AND a.attnum > 0 AND NOT a.attisdropped"
    " WHERE a.atttypid IS NULL OR format_type(a.atttypid, a.atttypmod) <> e.ty LIMIT 1";

void sst_postgres_saver_opts_init(sst_postgres_saver_opts *o) {
    if (o != NULL) {
        memset(o, 0, sizeof *o);
        o->lease_ms = 30000;
        o->max_record_bytes = (size_t)256 << 20;
        o->synchronous_commit = true;
    }
}

/* ---- binary arrays ---- */

static char *put_u32(char *p, uint32_t v) {
    uint32_t be = htonl(v);
    memcpy(p, &be, 4);
    return p + 4;
}

sst_code sst__pgs_array(uint32_t elem_oid, size_t n, const char *const *vals, const size_t *lens,
                        char **out, size_t *out_len, sst_error *err) {
    /* Header: ndim, has-nulls, element type, then (length, lower bound) of the one dimension;
     * each element is its length (-1: NULL) and its bytes. */
    const size_t limit = (size_t)1 << 30;
    size_t total = 20;
    bool nulls = false;
    for (size_t i = 0; i < n; i++) {
        nulls |= vals[i] == NULL;
        total += 4 + (vals[i] != NULL ? lens[i] : 0);
        if (total > limit || (vals[i] != NULL && lens[i] > limit)) {
            return sst__error(err, SST_ELIMIT,
                              "checkpoint store: %zu values of over 1 GiB together are more than "
                              "one statement can send to PostgreSQL; nothing was written",
                              n);
        }
    }
    char *buf = sst__malloc(total), *p = buf;
    if (buf == NULL) {
        return sst__enomem(err);
    }
    p = put_u32(p, 1);
    p = put_u32(p, nulls ? 1 : 0);
    p = put_u32(p, elem_oid);
    p = put_u32(p, (uint32_t)n);
    p = put_u32(p, 1);
    for (size_t i = 0; i < n; i++) {
        p = put_u32(p, vals[i] != NULL ? (uint32_t)lens[i] : UINT32_MAX);
        if (vals[i] != NULL && lens[i] > 0) {
            memcpy(p, vals[i], lens[i]);
            p += lens[i];
        }
    }
    *out = buf;
    *out_len = total;
    return SST_OK;
}

sst_code sst__pgs_read_tx(sst__pg_conn *c, void *user, sst_error *err) {
    sst__pgs_read_job *j = user;
    PQclear(j->res); /* an earlier attempt's, on a connection since lost */
    j->res = sst__pg_exec(c, j->name, j->sql, &j->p, j->what, err);
    return j->res != NULL ? SST_OK : sst__code(err);
}

/* ---- opening ---- */

static sst_code check_shape(sst__pg_conn *c, void *user, sst_error *err) {
    (void)user;
    PGresult *r = sst__pg_exec(c, "sst_cp_shape", k_shape_sql, NULL,
                               "checkpoint store: checking its tables", err);
    if (r == NULL) {
        return sst__code(err);
    }
    sst_code rc = SST_OK;
    if (PQntuples(r) > 0) {
        rc = sst__error(err, SST_EIO,
                        "checkpoint store (PostgreSQL %s): table %s is not this build's: it "
                        "has no column %s of type %s (found: %s); was it made by another "
                        "application, or altered by hand?",
                        sst_pg_name(c->pg), PQgetvalue(r, 0, 0), PQgetvalue(r, 0, 1),
                        PQgetvalue(r, 0, 2), PQgetvalue(r, 0, 3));
    }
    PQclear(r);
    return rc;
}

static void saver_destroy(void *self) {
    pg_saver *s = self;
    sst__pgs_leases_free(s);
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->cv);
    sst_pg_release(s->pg);
    sst__free(s);
}

static sst_checkpointer *saver_open(sst_pg *pg, const sst_postgres_saver_opts *opts,
                                    sst_error *err) {
    sst_postgres_saver_opts o;
    sst_postgres_saver_opts_init(&o);
    if (opts != NULL) {
        o = *opts;
    }
    char uuid[37];
    if (sst__uuid4(uuid, err) != SST_OK) {
        return NULL;
    }
    sst_code rc =
        sst__pg_schema(pg, "checkpoint", k_steps, (int)(sizeof k_steps / sizeof *k_steps), err);
    rc = rc == SST_OK ? sst__pg_read(pg, check_shape, NULL, err) : rc;
    if (rc != SST_OK) {
        return NULL;
    }
    pg_saver *s = sst__calloc(1, sizeof *s);
    if (s == NULL) {
        sst__enomem(err);
        return NULL;
    }
    s->pg = sst_pg_ref(pg);
    snprintf(s->token, sizeof s->token, "cp-%.8s", uuid);
    s->lease_ms = o.lease_ms > 0 ? o.lease_ms : 30000;
    s->sync_all = o.synchronous_commit;
    size_t cap = (size_t)256 << 20;
    s->max_record_bytes =
        o.max_record_bytes > 0 && o.max_record_bytes < cap ? o.max_record_bytes : cap;
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    static const sst_checkpointer_ops ops = {
        .size = sizeof(sst_checkpointer_ops),
        .flags = SST_SAVER_LOCK_IN_PUT, /* postgres_records.c: the lease in the put's tx */
        .destroy = saver_destroy,
        .put = sst__pgs_put,
        .put_writes = sst__pgs_put_writes,
        .get = sst__pgs_get,
        .list = sst__pgs_list,
        .lock = sst__pgs_lock,
        .unlock = sst__pgs_unlock,
        .threads = sst__pgs_threads,
        .thread_get = sst__pgs_thread_get,
        .thread_put = sst__pgs_thread_put,
        .copy_thread = sst__pgs_copy_thread,
        .delete_thread = sst__pgs_delete_thread,
        .prune = sst__pgs_prune,
    };
    sst_checkpointer *cp = sst_checkpointer_new(&ops, s, err);
    if (cp == NULL) {
        saver_destroy(s);
    }
    return cp;
}

sst_checkpointer *sst_postgres_saver_open(const char *url, const sst_postgres_saver_opts *opts,
                                          sst_error *err) {
    SST__ERR_LOCAL(err);
    sst_pg *pg = sst_pg_open(url, NULL, err);
    if (pg == NULL) {
        sst__error_prefix(err, "checkpoint store");
        return NULL;
    }
    sst_checkpointer *cp = saver_open(pg, opts, err);
    sst_pg_release(pg); /* the saver holds its own reference */
    return cp;
}

sst_checkpointer *sst_postgres_saver_open_pg(sst_pg *pg, const sst_postgres_saver_opts *opts,
                                             sst_error *err) {
    SST__ERR_LOCAL(err);
    if (pg == NULL) {
        sst__error(err, SST_EINVAL, "checkpoint store: NULL PostgreSQL pool");
        return NULL;
    }
    return saver_open(pg, opts, err);
}
