/* SPDX-License-Identifier: MIT */
/*
 * Run events across processes (--db postgresql://...): the relay.
 *
 * With PostgreSQL, any API process may hold a client's stream of a run that
 * a worker in any other process executes. A run's events are therefore rows
 * of sst_run_events (run, sequence number, name, data), the run's end one
 * more row (name "__end__", data its result), and each insert NOTIFYs the
 * run id on the events channel of the schema. Every process LISTENs there
 * (one thread and connection of its own, this file's) and copies the new
 * rows of the runs it has a stream for into that stream, with the rows'
 * sequence numbers: so every process numbers a run's events alike, and a
 * client that reconnects anywhere with Last-Event-ID resumes where it was.
 *
 * Publishing never touches a local stream directly: the worker's events
 * reach its own process's streams through the table too, so there is one
 * path and one numbering. A stream made for a run that already has rows (a
 * join) is caught up from the table at once (srv_relay_catch_up), then fed
 * by notifications. A lost listening connection is made again, and every
 * open stream is caught up, since notifications sent meanwhile are lost.
 * The end rows are kept for a minute (late joins), then the keeper deletes
 * the run's rows.
 */
#include <errno.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/pg.h"
#include "queue/postgres_wait.h"
#include "server_int.h"

/* How often the keeper deletes the rows of runs that ended over a minute ago (the
 * interval in purge_tx), as long as streams are kept for late joins (ms). */
#define RELAY_PURGE_EVERY_MS 60000
/* Rows read per query when feeding a stream. */
#define RELAY_PAGE 500

static const char *const k_steps[] = {
    "CREATE TABLE sst_run_events(run_id text NOT NULL, seq bigint NOT NULL,"
    " name text NOT NULL, data text, at timestamptz NOT NULL DEFAULT now(),"
    " PRIMARY KEY (run_id, seq));"
    "CREATE INDEX sst_run_events_ends ON sst_run_events(at) WHERE name = '__end__'",
};

struct srv_relay {
    sst_pg *pg; /* the server's */
    char channel[64];
    pthread_t thread;
    pthread_t waker; /* wakes this process's idle workers for runs enqueued anywhere */
    bool started, waker_started;
    _Atomic bool quit;     /* set by srv_relay_stop */
    int pipe[2];           /* written to stop the thread */
    pthread_mutex_t feed;  /* one feeder of a stream at a time */
    int64_t last_purge_ms; /* the keeper's last purge of finished runs' rows */
};

/* ---- publishing ---- */

typedef struct append_job {
    const char *run_id, *name, *data;
    size_t len;
    const char *channel;
} append_job;

static sst_code append_tx(sst__pg_conn *c, void *user, sst_error *err) {
    append_job *j = user;
    sst__pg_params p;
    sst__pg_params_init(&p);
    sst__pg_text(&p, j->run_id);
    sst__pg_text(&p, j->name);
    sst__pg_textn(&p, j->data, j->len);
    sst__pg_text(&p, j->channel);
    /* The next number of the run's events, then the notification (sent at commit). One
     * run has one publisher at a time (its worker); a race loses on the key and retries. */
    return sst__pg_run(c, "relay_append",
                       "WITH ins AS (INSERT INTO sst_run_events(run_id, seq, name, data)"
                       " SELECT $1, coalesce(max(seq) + 1, 0), $2, $3 FROM sst_run_events"
                       " WHERE run_id = $1 RETURNING seq)"
                       " SELECT pg_notify($4, $1) FROM ins",
                       &p, "appending a run event", err);
}

void srv_relay_publish(sst_server *s, const char *run_id, const char *name, const char *data,
                       size_t len) {
    append_job j = {run_id, name, data, len, s->relay->channel};
    sst_error err = {0};
    sst_code rc = SST_ECONFLICT;
    for (int tries = 0; tries < 5 && rc == SST_ECONFLICT; tries++) {
        sst_error_clear(&err);
        rc = sst__pg_tx(s->relay->pg, false, append_tx, &j, &err);
    }
    if (rc != SST_OK) {
        srv_log(s, "run %s: event '%s' not published: %s", run_id, name, err.msg);
    }
}

void srv_relay_end(sst_server *s, const char *run_id, const char *result) {
    const char *r = result != NULL ? result : "null";
    srv_relay_publish(s, run_id, "__end__", r, strlen(r));
}

/* ---- feeding local streams ---- */

typedef struct feed_job {
    sst_server *s;
    srv_stream *st;
    const char *run_id;
    bool ended;
} feed_job;

static sst_code feed_read(sst__pg_conn *c, void *user, sst_error *err) {
    feed_job *j = user;
    for (;;) {
        sst__pg_params p;
        sst__pg_params_init(&p);
        sst__pg_text(&p, j->run_id);
        sst__pg_i64(&p, (int64_t)srv_stream_next_seq(j->s, j->st));
        sst__pg_i64(&p, RELAY_PAGE);
        PGresult *r = sst__pg_exec(c, "relay_feed",
                                   "SELECT seq, name, data FROM sst_run_events WHERE run_id = $1"
                                   " AND seq >= $2 ORDER BY seq LIMIT $3",
                                   &p, "reading run events", err);
        if (r == NULL) {
            return sst__code(err);
        }
        int n = PQntuples(r);
        for (int i = 0; i < n && !j->ended; i++) {
            uint64_t seq = (uint64_t)sst__pg_int(r, i, 0);
            const char *name = sst__pg_bytes_at(r, i, 1, NULL);
            char *data = sst__pg_strdup(r, i, 2);
            if (strcmp(name, "__end__") == 0) {
                bool null = data == NULL || strcmp(data, "null") == 0;
                if (null) {
                    sst__free(data);
                    data = NULL;
                }
                srv_stream_finish(j->s, j->st, data);
                j->ended = true;
            } else if (data != NULL) {
                srv_stream_publish_at(j->s, j->st, seq, name, data, strlen(data));
            }
        }
        PQclear(r);
        if (n < RELAY_PAGE || j->ended) {
            return SST_OK;
        }
    }
}

/* Copies the new rows of @p st's run into it; true when the run's end was among them. */
static bool feed(sst_server *s, srv_stream *st, const char *run_id) {
    srv_relay *rl = s->relay;
    feed_job j = {s, st, run_id, false};
    sst_error err = {0};
    pthread_mutex_lock(&rl->feed);
    if (srv_stream_done(s, st)) {
        pthread_mutex_unlock(&rl->feed);
        return true;
    }
    if (sst__pg_read(rl->pg, feed_read, &j, &err) != SST_OK) {
        srv_log(s, "run %s: reading its events: %s", run_id, err.msg);
    }
    pthread_mutex_unlock(&rl->feed);
    return j.ended;
}

bool srv_relay_catch_up(sst_server *s, srv_stream *st, const char *run_id) {
    return feed(s, st, run_id);
}

/* Feeds the stream of @p run_id if this process has one. */
static void feed_run(sst_server *s, const char *run_id) {
    srv_stream *st = srv_stream_find(s, run_id);
    if (st != NULL) {
        feed(s, st, run_id);
        srv_stream_unref(s, st);
    }
}

/* Feeds every open stream (after the listening connection was made again). */
static void feed_all(sst_server *s) {
    char **ids = NULL;
    size_t n = srv_streams_open(s, &ids);
    for (size_t i = 0; i < n; i++) {
        feed_run(s, ids[i]);
        sst__free(ids[i]);
    }
    sst__free(ids);
}

/* ---- the listening thread ---- */

static PGconn *listen_conn(sst_server *s, sst_error *err) {
    PGconn *conn = sst__pg_connect_raw(s->relay->pg, err);
    if (conn == NULL) {
        return NULL;
    }
    char sql[128];
    snprintf(sql, sizeof sql, "LISTEN \"%s\"", s->relay->channel);
    PGresult *r = PQexec(conn, sql);
    bool ok = PQresultStatus(r) == PGRES_COMMAND_OK;
    PQclear(r);
    if (!ok) {
        sst__error(err, SST_EUNAVAILABLE, "LISTEN on %s: %s", s->relay->channel,
                   PQerrorMessage(conn));
        PQfinish(conn);
        return NULL;
    }
    return conn;
}

static bool stopping(sst_server *s) {
    if (atomic_load(&s->relay->quit)) {
        return true;
    }
    pthread_mutex_lock(&s->mu);
    bool stop = s->stopping;
    pthread_mutex_unlock(&s->mu);
    return stop;
}

static void *relay_main(void *arg) {
    sst_server *s = arg;
    srv_relay *rl = s->relay;
    PGconn *conn = NULL;
    /* Reconnecting: 100 ms, doubled up to 2 s. */
    static const sst_retry_policy reconnect = {
        .max_attempts = 0, .initial_interval_s = 0.1, .backoff_factor = 2.0, .max_interval_s = 2.0};
    unsigned failures = 0;
    for (;;) {
        if (conn == NULL) {
            sst_error err = {0};
            conn = listen_conn(s, &err);
            if (conn == NULL) {
                srv_log(s, "run events: %s (retrying)", err.msg);
            } else {
                failures = 0;
                feed_all(s); /* notifications sent while it was away are lost */
            }
        }
        struct pollfd fds[2] = {{rl->pipe[0], POLLIN, 0},
                                {conn != NULL ? PQsocket(conn) : -1, POLLIN, 0}};
        int rc =
            poll(fds, conn != NULL ? 2 : 1,
                 conn != NULL ? 1000 : (int)sst_retry_policy_delay_ms(&reconnect, failures + 1, 0));
        if (rc < 0 && errno != EINTR) {
            break;
        }
        if ((fds[0].revents & POLLIN) != 0 || stopping(s)) {
            break;
        }
        if (conn == NULL) {
            failures = failures < 32 ? failures + 1 : failures;
            continue;
        }
        if (rc == 0) {
            feed_all(s); /* a safety net: a notification may have been missed */
            continue;
        }
        if (!PQconsumeInput(conn) || PQstatus(conn) != CONNECTION_OK) {
            PQfinish(conn);
            conn = NULL;
            continue;
        }
        PGnotify *n;
        while ((n = PQnotifies(conn)) != NULL) {
            feed_run(s, n->extra);
            PQfreemem(n);
        }
    }
    PQfinish(conn);
    return NULL;
}

/* Idle workers wait up to half a second between claims; a run enqueued by another
 * process wakes one of them at once through the queue's notifications. This process's
 * own enqueues woke one already (srv_runs_create): their notifications wake nobody
 * here, or a second idle worker would claim nothing (issue 37's profile). */
static void *waker_main(void *arg) {
    sst_server *s = arg;
    while (!stopping(s)) {
        sst_error err = {0};
        sst_code rc = sst__postgres_queue_wait_others(s->queue, 1000, &err);
        if (rc == SST_OK) {
            srv_workers_wake_remote(s);
        } else if (rc != SST_ETIMEOUT) {
            sst__sleep_ms(500); /* e.g. the server is away: the queue reconnects */
        }
    }
    return NULL;
}

/* ---- lifetime ---- */

typedef struct schema_name_job {
    char *out;
    size_t n;
} schema_name_job;

static sst_code schema_name(sst__pg_conn *c, void *user, sst_error *err) {
    schema_name_job *j = user;
    PGresult *r = sst__pg_exec(c, "relay_schema", "SELECT current_schema()::text", NULL,
                               "reading the current schema", err);
    if (r == NULL) {
        return sst__code(err);
    }
    const char *name = sst__pg_null(r, 0, 0) ? "public" : sst__pg_bytes_at(r, 0, 0, NULL);
    snprintf(j->out, j->n, "sst_events_%.50s", name);
    PQclear(r);
    return SST_OK;
}

sst_code srv_relay_start(sst_server *s, sst_error *err) {
    if (s->pg == NULL) {
        return SST_OK;
    }
    srv_relay *rl = sst__calloc(1, sizeof *rl);
    if (rl == NULL) {
        return sst__enomem(err);
    }
    rl->pg = s->pg;
    rl->pipe[0] = rl->pipe[1] = -1;
    pthread_mutex_init(&rl->feed, NULL);
    s->relay = rl;
    schema_name_job j = {rl->channel, sizeof rl->channel};
    if (sst__pg_schema(s->pg, "server", k_steps, (int)SST_ARRAY_LEN(k_steps), err) != SST_OK ||
        sst__pg_read(s->pg, schema_name, &j, err) != SST_OK) {
        srv_relay_free(s);
        return sst__code(err);
    }
    if (pipe(rl->pipe) != 0 || pthread_create(&rl->thread, NULL, relay_main, s) != 0) {
        srv_relay_free(s);
        return sst__error(err, SST_EIO, "serve: cannot start the run events thread");
    }
    rl->started = true;
    if (pthread_create(&rl->waker, NULL, waker_main, s) != 0) {
        srv_relay_free(s);
        return sst__error(err, SST_EIO, "serve: cannot start the queue's waker thread");
    }
    rl->waker_started = true;
    return SST_OK;
}

void srv_relay_stop(sst_server *s) {
    srv_relay *rl = s->relay;
    if (rl == NULL || !rl->started) {
        return;
    }
    atomic_store(&rl->quit, true);
    ssize_t w = write(rl->pipe[1], "x", 1);
    SST_UNUSED(w);
    pthread_join(rl->thread, NULL);
    rl->started = false;
    if (rl->waker_started) {
        pthread_join(rl->waker, NULL); /* sees quit within its wait (a second) */
        rl->waker_started = false;
    }
}

void srv_relay_free(sst_server *s) {
    srv_relay *rl = s->relay;
    if (rl == NULL) {
        return;
    }
    srv_relay_stop(s);
    for (int i = 0; i < 2; i++) {
        if (rl->pipe[i] >= 0) {
            close(rl->pipe[i]);
        }
    }
    pthread_mutex_destroy(&rl->feed);
    sst__free(rl);
    s->relay = NULL;
}

static sst_code purge_tx(sst__pg_conn *c, void *user, sst_error *err) {
    SST_UNUSED(user);
    return sst__pg_run(c, "relay_purge",
                       "DELETE FROM sst_run_events WHERE run_id IN (SELECT run_id FROM"
                       " sst_run_events WHERE name = '__end__' AND at < now() - interval"
                       " '60 seconds')",
                       NULL, "deleting the events of finished runs", err);
}

void srv_relay_purge(sst_server *s, int64_t now) {
    srv_relay *rl = s->relay;
    if (rl == NULL || now - rl->last_purge_ms < RELAY_PURGE_EVERY_MS) {
        return;
    }
    rl->last_purge_ms = now;
    sst_error err = {0};
    if (sst__pg_tx(rl->pg, false, purge_tx, NULL, &err) != SST_OK) {
        srv_log(s, "run events: %s", err.msg);
    }
}
