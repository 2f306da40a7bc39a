/* SPDX-License-Identifier: MIT */
/*
 * The PostgreSQL run queue's bookkeeping operations: enqueue, get, list,
 * remove, remove_thread and cancel (the leases are in postgres_claim.c).
 *
 * Each change is one transaction run through sst__pg_tx, which runs it again
 * whole on a new connection when the connection is lost, so each is written
 * to be run twice: an enqueue whose first COMMIT was applied finds its own
 * row (same thread and payload) and succeeds; a cancel leaves a run as the
 * first one did; a remove that finds nothing after a lost COMMIT takes the
 * run as removed by that COMMIT. Changes that may make a run claimable
 * (enqueue, remove, cancel) NOTIFY the queue's channel in their transaction,
 * which PostgreSQL delivers on commit (postgres_listen.c). Result rows are
 * handed to callbacks after the connection went back to the pool.
 */
#include <stdio.h>
#include <string.h>

#include "postgres_int.h"
#include "superstep/json.h"

/* ---- enqueue ---- */

#define INSERT_COLS                                                                                \
    "thread_id, run_id, assistant_id, status, kwargs, metadata, multitask_strategy, created_at,"   \
    " updated_at, run_after"
#define INSERT_VALUES                                                                              \
    "$1::text, $2::text, $3::text, 'pending', $4::bytea, $5::bytea, $6::text, $7::bigint,"         \
    " $8::bigint, $9::bigint"

/* Both return one row: the new run's seq (NULL when nothing was inserted), the
 * thread's oldest unfinished run (the "if idle" one only) and the notification, whose
 * payload is the enqueuing queue's id (sst__postgres_queue_wait_others). */
static const char k_insert[] =
    "WITH ins AS (INSERT INTO sst_runs(" INSERT_COLS ") VALUES(" INSERT_VALUES ")"
    " ON CONFLICT (run_id) DO NOTHING RETURNING seq)"
    " SELECT (SELECT seq FROM ins), NULL::text, (SELECT pg_notify($10, $11) FROM ins)";
static const char k_insert_idle[] =
    "WITH busy AS (SELECT run_id FROM sst_runs WHERE thread_id = $1"
    " AND status IN ('pending', 'running') ORDER BY seq LIMIT 1),"
    " ins AS (INSERT INTO sst_runs(" INSERT_COLS ") SELECT " INSERT_VALUES
    " WHERE NOT EXISTS (SELECT 1 FROM busy) ON CONFLICT (run_id) DO NOTHING RETURNING seq)"
    " SELECT (SELECT seq FROM ins), (SELECT run_id FROM busy),"
    " (SELECT pg_notify($10, $11) FROM ins)";
/*
 * The lock that serialises the "if idle" enqueues of one thread (the claims of
 * the thread take it too, postgres_claim.c). It is taken in a statement of its
 * own: the check-and-insert that follows reads a snapshot taken after the
 * lock was granted, so it sees every run that an earlier holder committed.
 */
static const char k_thread_lock[] =
    "SELECT pg_advisory_xact_lock(hashtext(current_schema()), hashtext($1))";
/* After a lost COMMIT: is the run that is there ours (same thread and payload)? */
static const char k_same[] = "SELECT 1 FROM sst_runs WHERE run_id = $1 AND thread_id = $2"
                             " AND kwargs = $3 AND metadata = $4";

typedef struct enqueue_job {
    pg_queue *s;
    const sst_queued_run *run;
    unsigned flags;
    const char *kwargs, *metadata; /* JSON text */
    size_t kwargs_len, metadata_len;
    int64_t now;
} enqueue_job;

/* @p v as JSON text (new, sst__free), "{}" for a NULL @p v; SST_ELIMIT over 16 MiB. */
static sst_code json_text(const pg_queue *s, const char *run_id, const char *name,
                          const sst_value *v, char **out, size_t *len, sst_error *err) {
    *out = NULL;
    *len = 0;
    if (v == NULL) {
        return SST_OK;
    }
    if ((*out = sst_json_write(v, SST_JSON_COMPACT, len, err)) == NULL) {
        return sst__code(err);
    }
    if (*len > SST__PQ_MAX_JSON) {
        sst__free(*out);
        *out = NULL;
        return sst__error(err, SST_ELIMIT,
                          "queue '%s': run '%s': %s is %zu bytes of JSON, over the limit of %zu "
                          "bytes (16 MiB)",
                          sst__pq_name(s), run_id, name, *len, SST__PQ_MAX_JSON);
    }
    return SST_OK;
}

/* True when the run stored under our run id is ours: a lost COMMIT was applied. */
static sst_code ours_already(sst__pg_conn *c, const enqueue_job *j, bool *ours, sst_error *err) {
    sst__pg_params p;
    sst__pg_params_init(&p);
    sst__pg_text(&p, j->run->run_id);
    sst__pg_text(&p, j->run->thread_id);
    sst__pg_bytes(&p, j->kwargs, j->kwargs_len);
    sst__pg_bytes(&p, j->metadata, j->metadata_len);
    PGresult *r = sst__pg_exec(c, "sst_queue_same", k_same, &p, "queue: looking for a run", err);
    if (r == NULL) {
        return sst__code(err);
    }
    *ours = PQntuples(r) > 0;
    PQclear(r);
    return SST_OK;
}

static sst_code enqueue_tx(sst__pg_conn *c, void *user, sst_error *err) {
    enqueue_job *j = user;
    const sst_queued_run *run = j->run;
    bool idle = (j->flags & SST_QUEUE_IF_IDLE) != 0;
    if (c->after_lost_commit) {
        bool ours = false;
        sst_code rc = ours_already(c, j, &ours, err);
        if (rc != SST_OK || ours) {
            return rc;
        }
    }
    sst__pg_params p;
    sst__pg_params_init(&p);
    sst__pg_text(&p, run->thread_id);
    if (idle && sst__pg_run(c, "sst_queue_thread_lock", k_thread_lock, &p,
                            "queue: locking the thread", err) != SST_OK) {
        return sst__code(err);
    }
    sst__pg_text(&p, run->run_id);
    sst__pg_text(&p, run->assistant_id != NULL ? run->assistant_id : "");
    sst__pg_bytes(&p, j->kwargs, j->kwargs_len);
    sst__pg_bytes(&p, j->metadata, j->metadata_len);
    sst__pg_text(&p, run->multitask_strategy);
    sst__pg_i64(&p, run->created_at != 0 ? run->created_at : j->now);
    sst__pg_i64(&p, j->now);
    sst__pg_i64(&p, run->run_after);
    sst__pg_text(&p, j->s->channel);
    sst__pg_text(&p, j->s->id); /* the notification's payload: who enqueued */
    /* The last statement, and one that inserts nothing when it answers no: its COMMIT
     * may go with it (sst__pg_exec_last). */
    PGresult *r = idle ? sst__pg_exec_last(c, "sst_queue_insert_idle", k_insert_idle, &p,
                                           "queue: inserting a run", err)
                       : sst__pg_exec_last(c, "sst_queue_insert", k_insert, &p,
                                           "queue: inserting a run", err);
    if (r == NULL) {
        return sst__code(err);
    }
    sst_code rc = SST_OK;
    if (!sst__pg_null(r, 0, 1)) {
        rc = sst__error(
            err, SST_EBUSY, "queue '%s': run '%s': thread '%s' has a pending or running run ('%s')",
            sst__pq_name(j->s), run->run_id, run->thread_id, sst__pg_bytes_at(r, 0, 1, NULL));
    } else if (sst__pg_null(r, 0, 0)) {
        rc = sst__error(err, SST_ECONFLICT, "queue '%s': run '%s' exists already",
                        sst__pq_name(j->s), run->run_id);
    }
    PQclear(r);
    return rc;
}

sst_code sst__pq_enqueue(void *self, const sst_queued_run *run, unsigned flags, sst_error *err) {
    SST__ERR_LOCAL(err);
    pg_queue *s = self;
    char *kwargs = NULL, *metadata = NULL;
    enqueue_job j = {.s = s, .run = run, .flags = flags, .now = (int64_t)sst__now_ms()};
    sst_code rc = json_text(s, run->run_id, "kwargs", run->kwargs, &kwargs, &j.kwargs_len, err);
    rc = rc == SST_OK
             ? json_text(s, run->run_id, "metadata", run->metadata, &metadata, &j.metadata_len, err)
             : rc;
    if (rc == SST_OK) {
        j.kwargs = kwargs != NULL ? kwargs : "{}";
        j.kwargs_len = kwargs != NULL ? j.kwargs_len : 2;
        j.metadata = metadata != NULL ? metadata : "{}";
        j.metadata_len = metadata != NULL ? j.metadata_len : 2;
        rc = sst__pg_tx(s->pg, true, enqueue_tx, &j, err);
    }
    sst__free(kwargs);
    sst__free(metadata);
    return rc;
}

/* ---- reading ---- */

static const char k_get[] = "SELECT " PQ_RUN_COLS " FROM sst_runs WHERE run_id = $1";

#define LIST_SQL(where)                                                                            \
    "SELECT " PQ_RUN_COLS " FROM sst_runs " where " ORDER BY seq LIMIT $1 OFFSET $2"
static const char k_list[] = LIST_SQL("");
static const char k_list_thread[] = LIST_SQL("WHERE thread_id = $3");
static const char k_list_status[] = LIST_SQL("WHERE status = $3");
static const char k_list_thread_status[] = LIST_SQL("WHERE thread_id = $3 AND status = $4");

/* A read: the statement, its parameters, and the rows it gave. */
typedef struct read_job {
    const char *name, *sql, *what;
    sst__pg_params p;
    PGresult *res; /* owned */
} read_job;

static sst_code read_tx(sst__pg_conn *c, void *user, sst_error *err) {
    read_job *j = user;
    PQclear(j->res);
    j->res = sst__pg_exec(c, j->name, j->sql, &j->p, j->what, err);
    return j->res != NULL ? SST_OK : sst__code(err);
}

sst_code sst__pq_get(void *self, const char *run_id, sst_queued_run_fn each, void *user_data,
                     sst_error *err) {
    SST__ERR_LOCAL(err);
    pg_queue *s = self;
    read_job j = {.name = "sst_queue_get", .sql = k_get, .what = "queue: reading a run"};
    sst__pg_params_init(&j.p);
    sst__pg_text(&j.p, run_id);
    sst_code rc = sst__pg_read(s->pg, read_tx, &j, err);
    if (rc == SST_OK && PQntuples(j.res) == 0) {
        rc = sst__error(err, SST_ENOTFOUND, "queue '%s': no run '%s'", sst__pq_name(s), run_id);
    } else if (rc == SST_OK) {
        rc = sst__pq_emit(s, j.res, 0, each, user_data, NULL, err);
    }
    PQclear(j.res);
    return rc;
}

/* A size_t count as a bigint, saturated. */
static int64_t as_count(size_t n) {
    return n > (size_t)INT64_MAX ? INT64_MAX : (int64_t)n;
}

sst_code sst__pq_list(void *self, const sst_queue_query *q, sst_queued_run_fn each, void *user_data,
                      sst_error *err) {
    SST__ERR_LOCAL(err);
    pg_queue *s = self;
    read_job j = {.what = "queue: listing runs"};
    if (q->thread_id != NULL) {
        j.name = q->by_status ? "sst_queue_list_thread_status" : "sst_queue_list_thread";
        j.sql = q->by_status ? k_list_thread_status : k_list_thread;
    } else {
        j.name = q->by_status ? "sst_queue_list_status" : "sst_queue_list";
        j.sql = q->by_status ? k_list_status : k_list;
    }
    sst__pg_params_init(&j.p);
    if (q->limit == 0) {
        sst__pg_text(&j.p, NULL); /* LIMIT NULL: all */
    } else {
        sst__pg_i64(&j.p, as_count(q->limit));
    }
    sst__pg_i64(&j.p, as_count(q->offset));
    if (q->thread_id != NULL) {
        sst__pg_text(&j.p, q->thread_id);
    }
    if (q->by_status) {
        sst__pg_text(&j.p, sst_queue_status_name(q->status));
    }
    sst_code rc = sst__pg_read(s->pg, read_tx, &j, err);
    bool more = true;
    for (int i = 0; rc == SST_OK && more && i < PQntuples(j.res); i++) {
        rc = sst__pq_emit(s, j.res, i, each, user_data, &more, err);
    }
    PQclear(j.res);
    return rc;
}

/* ---- removing and cancelling ---- */

/* One row per run deleted (at most one). */
static const char k_remove[] = "WITH d AS (DELETE FROM sst_runs WHERE run_id = $1 RETURNING 1)"
                               " SELECT pg_notify($2, '') FROM d";
static const char k_remove_thread[] =
    "WITH d AS (DELETE FROM sst_runs WHERE thread_id = $1 RETURNING 1)"
    " SELECT pg_notify($2, '') WHERE EXISTS (SELECT 1 FROM d)";
/*
 * One row: the run's status after the call (NULL when there is no such run) and
 * the notification. Only an unfinished run is written: a pending one becomes
 * interrupted, a running one keeps running with its cancel set; a finished one
 * is read as it is (the second subquery reads the statement's snapshot, where
 * a row the UPDATE did not touch is as it is now).
 */
static const char k_cancel[] =
    "WITH u AS (UPDATE sst_runs SET cancel = $2,"
    " updated_at = CASE WHEN status = 'pending' THEN $3 ELSE updated_at END,"
    " status = CASE WHEN status = 'pending' THEN 'interrupted' ELSE status END"
    " WHERE run_id = $1 AND status IN ('pending', 'running') RETURNING status)"
    " SELECT COALESCE((SELECT status FROM u), (SELECT status FROM sst_runs WHERE run_id = $1)),"
    " (SELECT pg_notify($4, '') FROM u)";

typedef struct change_job {
    pg_queue *s;
    const char *key;    /* the run id, or the thread id */
    const char *action; /* cancel */
    int64_t now;
    sst_queue_status status; /* OUT: cancel */
} change_job;

static sst_code remove_tx(sst__pg_conn *c, void *user, sst_error *err) {
    change_job *j = user;
    sst__pg_params p;
    sst__pg_params_init(&p);
    sst__pg_text(&p, j->key);
    sst__pg_text(&p, j->s->channel);
    PGresult *r = sst__pg_exec(c, "sst_queue_remove", k_remove, &p, "queue: removing a run", err);
    if (r == NULL) {
        return sst__code(err);
    }
    int n = PQntuples(r);
    PQclear(r);
    /* Nothing there after a lost COMMIT: that COMMIT removed it. */
    return n > 0 || c->after_lost_commit ? SST_OK
                                         : sst__error(err, SST_ENOTFOUND, "queue '%s': no run '%s'",
                                                      sst__pq_name(j->s), j->key);
}

sst_code sst__pq_remove(void *self, const char *run_id, sst_error *err) {
    SST__ERR_LOCAL(err);
    change_job j = {.s = self, .key = run_id};
    return sst__pg_tx(j.s->pg, true, remove_tx, &j, err);
}

static sst_code remove_thread_tx(sst__pg_conn *c, void *user, sst_error *err) {
    change_job *j = user;
    sst__pg_params p;
    sst__pg_params_init(&p);
    sst__pg_text(&p, j->key);
    sst__pg_text(&p, j->s->channel);
    return sst__pg_run(c, "sst_queue_remove_thread", k_remove_thread, &p,
                       "queue: removing a thread's runs", err);
}

sst_code sst__pq_remove_thread(void *self, const char *thread_id, sst_error *err) {
    SST__ERR_LOCAL(err);
    change_job j = {.s = self, .key = thread_id};
    return sst__pg_tx(j.s->pg, true, remove_thread_tx, &j, err);
}

static sst_code cancel_tx(sst__pg_conn *c, void *user, sst_error *err) {
    change_job *j = user;
    sst__pg_params p;
    sst__pg_params_init(&p);
    sst__pg_text(&p, j->key);
    sst__pg_text(&p, j->action);
    sst__pg_i64(&p, j->now);
    sst__pg_text(&p, j->s->channel);
    PGresult *r = sst__pg_exec(c, "sst_queue_cancel", k_cancel, &p, "queue: cancelling a run", err);
    if (r == NULL) {
        return sst__code(err);
    }
    sst_code rc = SST_OK;
    const char *status = sst__pg_bytes_at(r, 0, 0, NULL);
    if (status == NULL) {
        rc = sst__error(err, SST_ENOTFOUND, "queue '%s': no run '%s'", sst__pq_name(j->s), j->key);
    } else if (!sst_queue_status_parse(status, &j->status)) {
        rc = sst__error(err, SST_EIO, "queue '%s': run '%s' has an unknown status '%s'",
                        sst__pq_name(j->s), j->key, status);
    }
    PQclear(r);
    return rc;
}

sst_code sst__pq_cancel(void *self, const char *run_id, const char *action, int64_t now,
                        sst_queue_status *status, sst_error *err) {
    SST__ERR_LOCAL(err);
    change_job j = {.s = self, .key = run_id, .action = action, .now = now};
    sst_code rc = sst__pg_tx(j.s->pg, true, cancel_tx, &j, err);
    if (rc == SST_OK && status != NULL) {
        *status = j.status;
    }
    return rc;
}
