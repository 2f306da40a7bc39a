/* SPDX-License-Identifier: MIT */
/*
 * The PostgreSQL run queue: opening it on a pool (its own or one shared with
 * the saver and the store), its tables and their migrations, its NOTIFY
 * channel, and turning result rows into runs for the callbacks
 * (postgres_int.h lists the other files).
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "postgres_int.h"
#include "postgres_wait.h"
#include "queue_int.h"
#include "superstep/json.h"

/*
 * Migrations: k_steps[i] takes the queue tables from version i to i + 1
 * (sst__pg_schema; a database at a newer version is refused).
 *
 * The key is (thread_id, seq): a thread's runs sit together, so that the
 * table can later be sharded by thread. run_id is unique across the queue,
 * as the contract wants (on a sharded table that becomes a lookup table).
 * The indexes: sst_runs_order for listing everything in enqueue order;
 * sst_runs_status (status, seq) for listing by status and for the claim's
 * walk over the pending runs in enqueue order; and three partial indexes that
 * hold the unfinished runs only, so that their size is the work in flight,
 * not the history: sst_runs_active for "is this thread free", sst_runs_lease
 * for expired leases, sst_runs_owner for the holders of a host (whose
 * processes a claim probes). owner is compared bytewise (COLLATE "C") so that
 * the range "PLACE " .. "PLACE!" holds exactly the owners of one place,
 * whatever the database's collation. done_token is the token whose finish or
 * release came last: it lets a finish re-run after a lost COMMIT see that its
 * first attempt was applied.
 */
static const char *const k_steps[SST__PQ_SCHEMA_VERSION] = {
    "CREATE SEQUENCE sst_run_tokens;"
    "CREATE TABLE sst_runs(thread_id text NOT NULL, seq bigserial NOT NULL,"
    " run_id text NOT NULL, assistant_id text NOT NULL, status text NOT NULL,"
    " kwargs bytea NOT NULL, metadata bytea NOT NULL, multitask_strategy text,"
    " created_at bigint NOT NULL, updated_at bigint NOT NULL, run_after bigint NOT NULL,"
    " attempt integer NOT NULL DEFAULT 0, cancel text, owner text COLLATE \"C\","
    " lease_expires bigint NOT NULL DEFAULT 0, token bigint NOT NULL DEFAULT 0,"
    " done_token bigint NOT NULL DEFAULT 0,"
    " PRIMARY KEY (thread_id, seq), UNIQUE (run_id));"
    "CREATE INDEX sst_runs_order ON sst_runs(seq);"
    "CREATE INDEX sst_runs_status ON sst_runs(status, seq);"
    "CREATE INDEX sst_runs_active ON sst_runs(thread_id, seq)"
    " WHERE status IN ('pending', 'running');"
    "CREATE INDEX sst_runs_lease ON sst_runs(lease_expires) WHERE status = 'running';"
    "CREATE INDEX sst_runs_owner ON sst_runs(owner) WHERE status = 'running';",
};

const char *sst__pq_name(const pg_queue *s) {
    return sst_pg_name(s->pg);
}

/* ---- rows ---- */

/* The stored JSON object (column @p col) of row @p row as a new value. */
static sst_value *parse_json(const pg_queue *s, const PGresult *r, int row, int col,
                             const char *name, sst_error *err) {
    size_t len = 0;
    const char *text = sst__pg_bytes_at(r, row, col, &len);
    sst_error e = {0};
    sst_value *v = sst_json_read(text != NULL ? text : "", len, NULL, &e);
    if (v == NULL && e.code == SST_ENOMEM) {
        sst__enomem(err);
    } else if (v == NULL || !sst_is_object(v)) {
        sst__error(err, SST_EIO, "queue '%s': run '%s': the stored %s is not a JSON object: %s",
                   sst__pq_name(s), sst__pg_bytes_at(r, row, PC_RUN_ID, NULL), name,
                   v == NULL ? e.msg : sst_type_name(sst_value_type(v)));
        sst_value_unref(v);
        v = NULL;
    }
    return v;
}

sst_code sst__pq_emit(const pg_queue *s, const PGresult *r, int row, sst_queued_run_fn each,
                      void *user_data, bool *more, sst_error *err) {
    /* Text columns come in binary format, which is their bytes, NUL-terminated by libpq. */
    const char *id = sst__pg_bytes_at(r, row, PC_RUN_ID, NULL);
    const char *status_name = sst__pg_bytes_at(r, row, PC_STATUS, NULL);
    sst_queue_status status;
    if (!sst_queue_status_parse(status_name, &status)) {
        return sst__error(err, SST_EIO, "queue '%s': run '%s' has an unknown status '%s'",
                          sst__pq_name(s), id != NULL ? id : "?",
                          status_name != NULL ? status_name : "NULL");
    }
    sst_value *kwargs = parse_json(s, r, row, PC_KWARGS, "kwargs", err);
    sst_value *metadata =
        kwargs != NULL ? parse_json(s, r, row, PC_METADATA, "metadata", err) : NULL;
    if (metadata == NULL) {
        sst_value_unref(kwargs);
        return sst__code(err);
    }
    sst_queued_run run = {
        .run_id = id,
        .thread_id = sst__pg_bytes_at(r, row, PC_THREAD_ID, NULL),
        .assistant_id = sst__pg_bytes_at(r, row, PC_ASSISTANT_ID, NULL),
        .status = status,
        .kwargs = kwargs,
        .metadata = metadata,
        .multitask_strategy = sst__pg_bytes_at(r, row, PC_STRATEGY, NULL),
        .created_at = sst__pg_int(r, row, PC_CREATED_AT),
        .updated_at = sst__pg_int(r, row, PC_UPDATED_AT),
        .run_after = sst__pg_int(r, row, PC_RUN_AFTER),
        .attempt = (uint32_t)sst__pg_int(r, row, PC_ATTEMPT),
        .cancel = sst__pg_bytes_at(r, row, PC_CANCEL, NULL),
        .owner = sst__pg_bytes_at(r, row, PC_OWNER, NULL),
        .lease_expires = sst__pg_int(r, row, PC_LEASE_EXPIRES),
        .token = (uint64_t)sst__pg_int(r, row, PC_TOKEN),
    };
    bool go = each(&run, user_data);
    if (more != NULL) {
        *more = go;
    }
    sst_value_unref(kwargs);
    sst_value_unref(metadata);
    return SST_OK;
}

/* ---- opening ---- */

/* The channel of the schema the pool's tables are in (see pg_queue.channel). */
static sst_code read_channel(sst__pg_conn *c, void *user, sst_error *err) {
    pg_queue *s = user;
    PGresult *r = sst__pg_exec(c, "sst_queue_schema", "SELECT current_schema()", NULL,
                               "queue: reading the current schema", err);
    if (r == NULL) {
        return sst__code(err);
    }
    size_t len = 0;
    const char *schema = PQntuples(r) > 0 ? sst__pg_bytes_at(r, 0, 0, &len) : NULL;
    uint64_t h = sst__hash_bytes(schema != NULL ? schema : "", len, 0x5353545155455545ull);
    snprintf(s->channel, sizeof s->channel, "sst_queue_%016llx", (unsigned long long)h);
    PQclear(r);
    return SST_OK;
}

static void queue_destroy(void *self) {
    pg_queue *s = self;
    sst__pq_listen_close(s);
    pthread_cond_destroy(&s->cv);
    pthread_mutex_destroy(&s->mu);
    sst_pg_release(s->pg);
    sst__free(s);
}

sst_queue *sst_postgres_queue_open_pg(sst_pg *pg, sst_error *err) {
    SST__ERR_LOCAL(err);
    if (pg == NULL) {
        sst__error(err, SST_EINVAL, "postgres queue: NULL pool");
        return NULL;
    }
    pg_queue *s = sst__calloc(1, sizeof *s);
    if (s == NULL) {
        sst__enomem(err);
        return NULL;
    }
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&s->cv, &ca);
    pthread_condattr_destroy(&ca);
    pthread_mutex_init(&s->mu, NULL);
    s->pg = sst_pg_ref(pg);
    sst_code rc = sst__pg_schema(pg, "queue", k_steps, SST__PQ_SCHEMA_VERSION, err);
    rc = rc == SST_OK ? sst__pg_read(pg, read_channel, s, err) : rc;
    rc = rc == SST_OK ? sst__uuid4(s->id, err) : rc;
    if (rc != SST_OK) {
        queue_destroy(s);
        return NULL;
    }
    static const sst_queue_ops ops = {
        .size = sizeof(sst_queue_ops),
        .destroy = queue_destroy,
        .enqueue = sst__pq_enqueue,
        .get = sst__pq_get,
        .list = sst__pq_list,
        .remove = sst__pq_remove,
        .remove_thread = sst__pq_remove_thread,
        .claim = sst__pq_claim,
        .renew = sst__pq_renew,
        .finish = sst__pq_finish,
        .release = sst__pq_release,
        .cancel = sst__pq_cancel,
    };
    sst_queue *q = sst_queue_new(&ops, s, err);
    if (q == NULL) {
        queue_destroy(s);
    }
    return q;
}

sst_queue *sst_postgres_queue_open(const char *url, sst_error *err) {
    SST__ERR_LOCAL(err);
    sst_pg *pg = sst_pg_open(url, NULL, err);
    if (pg == NULL) {
        return NULL;
    }
    sst_queue *q = sst_postgres_queue_open_pg(pg, err);
    sst_pg_release(pg); /* the queue holds its own reference */
    return q;
}

sst_code sst_postgres_queue_wait(sst_queue *q, int timeout_ms, sst_error *err) {
    SST__ERR_LOCAL(err);
    if (q == NULL) {
        return sst__error(err, SST_EINVAL, "postgres queue wait: NULL queue");
    }
    pg_queue *s = sst__queue_impl(q, queue_destroy);
    if (s == NULL) {
        return sst__error(err, SST_EINVAL,
                          "postgres queue wait: the queue is not a PostgreSQL queue "
                          "(sst_postgres_queue_open)");
    }
    if (timeout_ms < 0) {
        return sst__error(err, SST_EINVAL,
                          "postgres queue wait: timeout_ms must be at least 0 (got %d)",
                          timeout_ms);
    }
    return sst__pq_wait(s, timeout_ms, false, err);
}

sst_code sst__postgres_queue_wait_others(sst_queue *q, int timeout_ms, sst_error *err) {
    SST__ERR_LOCAL(err);
    pg_queue *s = sst__queue_impl(q, queue_destroy);
    if (s == NULL || timeout_ms < 0) {
        return sst__error(err, SST_EINVAL,
                          "postgres queue wait: not a PostgreSQL queue, or a negative timeout");
    }
    return sst__pq_wait(s, timeout_ms, true, err);
}

sst_code sst__postgres_queue_probe(sst_queue *q, int64_t now, bool *claimable, sst_error *err) {
    SST__ERR_LOCAL(err);
    *claimable = true;
    pg_queue *s = sst__queue_impl(q, queue_destroy);
    if (s == NULL) {
        return sst__error(err, SST_EINVAL, "postgres queue probe: not a PostgreSQL queue");
    }
    return sst__pq_probe(s, now, claimable, err);
}
