/* SPDX-License-Identifier: MIT */
/*
 * The server object: options, the database (checkpoints, store and run
 * queue in one file), the graphs it serves, start, stop and wait.
 */
#include <arpa/inet.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "auth.h"
#include "cors.h"
#include "crons.h"
#include "prune.h"
#include "server_int.h"
#include "superstep/agent.h"
#include "superstep/functional.h"
#include "superstep/id.h"
#include "superstep/json.h"

void sst_server_opts_init(sst_server_opts *o) {
    *o = (sst_server_opts){.host = "127.0.0.1",
                           .port = 2024,
                           .db = "superstep.db",
                           .workers = 2,
                           .max_body_bytes = (size_t)16 << 20,
                           .max_connections = 1024,
                           .http_threads = 2,
                           .connection_timeout = 30,
                           .stream_backlog = 10000,
                           .runs_per_thread = 100,
                           .lease_s = 30};
}

void srv_log(sst_server *s, const char *fmt, ...) {
    if (s->o.log == NULL) {
        return;
    }
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    s->o.log(line, s->o.log_user_data);
}

void srv_new_id(char out[37]) {
    sst_uuid7(out);
}

int64_t srv_now(void) {
    return (int64_t)sst__now_ms();
}

/* True for 127.0.0.0/8, ::1 and "localhost". */
static bool loopback(const char *host) {
    if (strcmp(host, "localhost") == 0 || strcmp(host, "::1") == 0) {
        return true;
    }
    struct in_addr a;
    return inet_pton(AF_INET, host, &a) == 1 && (ntohl(a.s_addr) >> 24) == 127;
}

static char *dup_or_null(const char *s) {
    return s != NULL ? sst__strndup(s, strlen(s)) : NULL;
}

/* Opens the checkpointer, the store and the queue on one PostgreSQL pool. */
static sst_code open_pg(sst_server *s, sst_error *err) {
    sst_pg_opts po;
    sst_pg_opts_init(&po);
    /* A connection per worker and HTTP thread at most, and a few for the keeper and crons. */
    po.pool_size = (int)(s->o.workers + s->o.http_threads + 4);
    /* A process stopped mid-transaction loses it after one lease, so its row and advisory
     * locks cannot keep another worker from taking its runs over (docs/scale-out.md). */
    po.idle_tx_timeout_ms = (int)s->o.lease_s * 1000;
    if ((s->pg = sst_pg_open(s->db, &po, err)) == NULL) {
        return sst__code(err);
    }
    sst_store_opts so;
    sst_store_opts_init(&so);
    /* The thread's lease in the saver lasts as long as the run's in the queue: a worker
     * paused past it finds both taken over, and its next commit is refused. */
    sst_postgres_saver_opts co;
    sst_postgres_saver_opts_init(&co);
    co.lease_ms = (int)s->o.lease_s * 1000;
    co.synchronous_commit = s->o.flush != SST_FLUSH_OFF;
    s->cp = sst_postgres_saver_open_pg(s->pg, &co, err);
    s->store = s->cp != NULL ? sst_postgres_store_new_pg(s->pg, &so, err) : NULL;
    s->queue = s->store != NULL ? sst_postgres_queue_open_pg(s->pg, err) : NULL;
    return s->queue != NULL ? SST_OK : sst__code(err);
}

/*
 * Opens the checkpointer, the store and the queue on @p s->db: one SQLite
 * connection for the three (exclusive unless shared_db), a PostgreSQL pool,
 * or memory.
 */
static sst_code open_db(sst_server *s, sst_error *err) {
    if (sst_pg_is_url(s->db)) {
        return open_pg(s, err);
    }
    if (strcmp(s->db, ":memory:") == 0) {
        sst_store_opts so;
        sst_store_opts_init(&so);
        s->cp = sst_memory_saver_new(err);
        s->store = s->cp != NULL ? sst_memory_store_new(&so, err) : NULL;
        s->queue = s->store != NULL ? sst_sqlite_queue_open(s->db, err) : NULL;
        return s->queue != NULL ? SST_OK : sst__code(err);
    }
    sst_sqlite_db *db = sst_sqlite_db_open(s->db, !s->o.shared_db, err);
    if (db == NULL) {
        return sst__code(err);
    }
    sst_store_opts so;
    sst_store_opts_init(&so);
    s->cp = sst_sqlite_saver_open_db(db, NULL, err);
    s->store = s->cp != NULL ? sst_sqlite_store_new_db(db, &so, err) : NULL;
    s->queue = s->store != NULL ? sst_sqlite_queue_open_db(db, err) : NULL;
    s->sdb = db;
    if (s->queue != NULL && s->o.flush != SST_FLUSH_DEFAULT) { /* after the backends' own */
        return sst_sqlite_db_set_flush(db, s->o.flush == SST_FLUSH_ON, err);
    }
    return s->queue != NULL ? SST_OK : sst__code(err);
}

sst_server *sst_server_new(const sst_server_opts *opts, sst_error *err) {
    sst_server_opts def;
    sst_server_opts_init(&def);
    const sst_server_opts *o = opts != NULL ? opts : &def;
    if (o->host == NULL || o->db == NULL || o->workers > 256 || o->http_threads == 0 ||
        o->max_connections == 0 || o->stream_backlog == 0 || o->lease_s == 0 ||
        o->lease_s > 86400 || o->port > 65535) {
        sst__error(err, SST_EINVAL,
                   "serve: bad options (host, db, workers 1..256, lease_s 1..86400, port ...)");
        return NULL;
    }
    if ((unsigned)o->durability > SST_DURABILITY_EXIT || (unsigned)o->flush > SST_FLUSH_ON) {
        sst__error(err, SST_EINVAL, "serve: bad options (durability %d, flush policy %d)",
                   (int)o->durability, (int)o->flush);
        return NULL;
    }
    if (o->workers == 0 && (o->workers_only || !sst_pg_is_url(o->db))) {
        sst__error(err, SST_EINVAL,
                   "serve: 0 workers (an API process only) needs a PostgreSQL database, where "
                   "`superstep worker` processes run the runs; a worker needs 1 at least");
        return NULL;
    }
    if (o->workers_only && !sst_pg_is_url(o->db)) {
        sst__error(err, SST_EINVAL,
                   "worker: the database must be PostgreSQL (postgresql://...): workers in other "
                   "processes share runs and their events only through it, not '%s'",
                   o->db);
        return NULL;
    }
    if (o->auth_token != NULL && o->auth_token[0] == '\0') {
        sst__error(err, SST_EINVAL, "serve: the auth token is empty");
        return NULL;
    }
    sst_server *s = sst__calloc(1, sizeof *s);
    if (s == NULL) {
        sst__enomem(err);
        return NULL;
    }
    s->o = *o;
    s->host = dup_or_null(o->host);
    s->db = dup_or_null(o->db);
    s->token = dup_or_null(o->auth_token);
    s->web_dir = dup_or_null(o->web_dir);
    s->cron_offset_ms = srv_env_offset_ms("SST_SERVE_CRON_CLOCK_OFFSET_MS");
    s->ttl_offset_ms = srv_env_offset_ms("SST_SERVE_TTL_CLOCK_OFFSET_MS");
    pthread_mutex_init(&s->mu, NULL);
    pthread_mutex_init(&s->bmu, NULL);
    pthread_mutex_init(&s->hmu, NULL);
    pthread_mutex_init(&s->cron_mu, NULL);
    pthread_cond_init(&s->wake, NULL);
    pthread_cond_init(&s->done, NULL);
    if (s->host == NULL || s->db == NULL || (o->auth_token != NULL && s->token == NULL) ||
        (o->web_dir != NULL && s->web_dir == NULL)) {
        sst__enomem(err);
        sst_server_free(s);
        return NULL;
    }
    if (open_db(s, err) != SST_OK) {
        sst_server_free(s);
        return NULL;
    }
    return s;
}

srv_graph *srv_graph_find(sst_server *s, const char *id) {
    for (size_t i = 0; id != NULL && i < s->n_graphs; i++) {
        if (strcmp(s->graphs[i].id, id) == 0) {
            return &s->graphs[i];
        }
    }
    return NULL;
}

sst_code sst_server_start(sst_server *s, sst_error *err) {
    if (s->started) {
        return sst__error(err, SST_EINVAL, "serve: already started");
    }
    if (s->n_graphs == 0) {
        return sst__error(err, SST_EINVAL,
                          "serve: no graph to serve (give a config file or "
                          "--graph NAME=script.lua)");
    }
    /* Checked here, not in sst_server_new: langgraph.json's "auth" (sst_server_set_auth)
     * comes after it. */
    if (s->token == NULL && s->auth == NULL && !s->o.insecure_listen_any && !s->o.workers_only &&
        !loopback(s->host)) {
        return sst__error(err, SST_EINVAL,
                          "serve: refusing to listen on '%s' without authentication: give "
                          "--auth-token-env VAR or an \"auth\" member in langgraph.json "
                          "(docs/auth.md), or --insecure-listen-any to serve without it",
                          s->host);
    }
    snprintf(s->owner, sizeof s->owner, "%s", "");
    s->started_ms = srv_now();
    sst_code rc = srv_assistants_init(s, err);
    if (rc == SST_OK) {
        rc = srv_relay_start(s, err);
    }
    if (rc == SST_OK && (rc = srv_workers_start(s, err)) != SST_OK) {
        srv_relay_free(s);
    }
    if (rc == SST_OK && !s->o.workers_only && (rc = srv_http_start(s, err)) != SST_OK) {
        srv_workers_stop(s);
        srv_relay_free(s);
    }
    if (rc != SST_OK) {
        return rc;
    }
    (void)srv_crons_start(s, NULL); /* logs why crons will not fire if it fails */
    pthread_mutex_lock(&s->mu);
    s->started = true;
    pthread_mutex_unlock(&s->mu);
    if (s->o.workers_only) {
        srv_log(s, "working (%zu graph%s, %u workers, database %s)", s->n_graphs,
                s->n_graphs == 1 ? "" : "s", s->o.workers, sst_pg_name(s->pg));
    } else {
        srv_log(s, "listening on http://%s:%u (%zu graph%s, %u workers, database %s)", s->host,
                s->port, s->n_graphs, s->n_graphs == 1 ? "" : "s", s->o.workers,
                s->pg != NULL ? sst_pg_name(s->pg) : s->db);
    }
    return SST_OK;
}

unsigned sst_server_port(const sst_server *s) {
    return s != NULL ? s->port : 0;
}

void sst_server_stop(sst_server *s) {
    if (s == NULL) {
        return;
    }
    pthread_mutex_lock(&s->mu);
    s->stopping = true;
    pthread_cond_broadcast(&s->wake);
    pthread_cond_broadcast(&s->done);
    pthread_mutex_unlock(&s->mu);
}

void sst_server_wait(sst_server *s) {
    pthread_mutex_lock(&s->mu);
    while (!s->stopping) {
        pthread_cond_wait(&s->done, &s->mu);
    }
    bool started = s->started;
    s->started = false;
    pthread_mutex_unlock(&s->mu);
    if (!started) {
        return;
    }
    srv_http_quiesce(s);
    srv_crons_stop(s);
    srv_workers_stop(s); /* runs stop at a superstep boundary and go back to the queue */
    srv_relay_stop(s);
    srv_streams_close_all(s);
    srv_http_stop(s);
    srv_log(s, "stopped");
}

void sst_server_free(sst_server *s) {
    if (s == NULL) {
        return;
    }
    sst_server_stop(s);
    sst_server_wait(s);
    srv_streams_close_all(s);
    srv_streams_sweep_all(s);
    srv_graphs_free(s);
    srv_auth_free(s->auth);
    sst_queue_free(s->queue);
    sst_store_free(s->store);
    sst_embedder_free(s->embedder); /* after the store that embeds with it */
    sst_checkpointer_free(s->cp);
    sst_sqlite_db_release(s->sdb);
    srv_relay_free(s);
    sst_pg_release(s->pg);
    pthread_mutex_destroy(&s->mu);
    pthread_mutex_destroy(&s->bmu);
    pthread_mutex_destroy(&s->hmu);
    pthread_mutex_destroy(&s->cron_mu);
    pthread_cond_destroy(&s->wake);
    pthread_cond_destroy(&s->done);
    sst__free(s->host);
    sst__free(s->db);
    sst__free(s->token);
    sst__free(s->web_dir);
    srv_cors_free(s->cors);
    srv_cp_ttl_free(s);
    srv_app_free(s);
    sst__free(s);
}
