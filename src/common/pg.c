/* SPDX-License-Identifier: MIT */
/*
 * sst_pg: a bounded pool of libpq connections to one database, shared by the
 * PostgreSQL backends of a process (include/superstep/postgres.h), and the
 * helpers of common/pg.h they run their statements through.
 */
#include "common/pg.h"

#include <arpa/inet.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

struct sst_pg {
    char *conninfo; /* owned: as given ("" for the environment) */
    char name[256]; /* for messages */
    sst_pg_opts opts;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    sst__pg_conn *idle; /* under mu */
    int open;           /* connections made and not closed, under mu */
    _Atomic int refs;
    /* Tests only (sst__pg_set_commit_hook): called before each COMMIT; NULL otherwise. */
    void (*before_commit)(void *ud);
    void *before_commit_ud;
    /* The committer (see "group commit"): jobs waiting for a transaction, under gmu. */
    pthread_mutex_t gmu;
    pthread_cond_t gcv;
    struct pg_job *ghead, *gtail;
    size_t gqueued;   /* jobs in the queue */
    size_t gwatchers; /* callers of sst__pg_group_waiting (tests): woken by each enqueue */
    bool leading;     /* a caller is running a group's transaction */
    /* Commits sent (flushed: synchronous_commit on), and the transactions they held. */
    _Atomic uint64_t flushed, unflushed, jobs, statements;
};

/* ---- options and names ---- */

void sst_pg_opts_init(sst_pg_opts *o) {
    if (o != NULL) {
        o->pool_size = 8;
        o->connect_timeout_ms = 5000;
        o->retry_ms = 30000;
        o->idle_tx_timeout_ms = 30000;
    }
}

bool sst_pg_is_url(const char *db) {
    return db != NULL &&
           (strncmp(db, "postgresql://", 13) == 0 || strncmp(db, "postgres://", 11) == 0);
}

const char *sst_pg_name(const sst_pg *pg) {
    return pg->name;
}

/* The one-line reason libpq gives for @p conn's failure. */
static const char *conn_reason(PGconn *conn, char *buf, size_t n) {
    const char *m = conn != NULL ? PQerrorMessage(conn) : "out of memory";
    snprintf(buf, n, "%s", m != NULL && m[0] != '\0' ? m : "connection lost");
    size_t len = strlen(buf);
    while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == ' ')) {
        buf[--len] = '\0';
    }
    for (char *s = buf; *s != '\0'; s++) {
        if (*s == '\n') {
            *s = ' ';
        }
    }
    return buf;
}

/* ---- connecting ---- */

/* One attempt. The connect timeout goes in as a keyword next to what was given. */
static PGconn *connect_once(sst_pg *pg) {
    char timeout[16];
    int secs = (pg->opts.connect_timeout_ms + 999) / 1000;
    snprintf(timeout, sizeof timeout, "%d", secs < 2 ? 2 : secs);
    const char *keys[] = {"dbname", "connect_timeout", "application_name", NULL};
    const char *vals[] = {pg->conninfo, timeout, "superstep", NULL};
    /* expand_dbname: a URL or keyword string given as dbname is parsed as one. */
    return PQconnectdbParams(keys, vals, 1);
}

/* Connects, retrying a refused or failed attempt with backoff until @p deadline (ms). */
static PGconn *connect_retry(sst_pg *pg, uint64_t deadline, sst_error *err) {
    uint64_t wait = 50;
    for (;;) {
        PGconn *conn = connect_once(pg);
        if (conn != NULL && PQstatus(conn) == CONNECTION_OK) {
            return conn;
        }
        char why[512];
        conn_reason(conn, why, sizeof why);
        PQfinish(conn);
        uint64_t now = sst__now_ms();
        if (now + wait > deadline) {
            sst__error(err, SST_EUNAVAILABLE, "PostgreSQL %s: cannot connect: %s", pg->name, why);
            return NULL;
        }
        sst__sleep_ms(wait);
        wait = wait * 2 > 1000 ? 1000 : wait * 2;
    }
}

PGconn *sst__pg_connect_raw(sst_pg *pg, sst_error *err) {
    SST__ERR_LOCAL(err);
    return connect_retry(pg, sst__now_ms() + (uint64_t)pg->opts.retry_ms, err);
}

/* Every connection's session settings: UTC, quiet notices, UTF-8 (the contracts' strings),
 * no JIT (it compiled the backends' short statements on every call: ~40 ms each), and the
 * idle-in-transaction timeout (sst_pg_opts: a stopped process must not hold locks forever). */
static bool session_setup(const sst_pg *pg, PGconn *conn) {
    char timeout[80] = "";
    if (pg->opts.idle_tx_timeout_ms > 0) {
        snprintf(timeout, sizeof timeout, "; SET idle_in_transaction_session_timeout = %d",
                 pg->opts.idle_tx_timeout_ms);
    }
    char sql[256];
    snprintf(sql, sizeof sql,
             "SET TIME ZONE 'UTC'; SET client_min_messages = warning; SET "
             "client_encoding = 'UTF8'; SET jit = off%s",
             timeout);
    PGresult *r = PQexec(conn, sql);
    bool ok = PQresultStatus(r) == PGRES_COMMAND_OK;
    PQclear(r);
    return ok;
}

static void conn_close(sst__pg_conn *c) {
    PQfinish(c->conn);
    sst__map_free(&c->prepared);
    sst__free(c);
}

sst__pg_conn *sst__pg_get(sst_pg *pg, sst_error *err) {
    SST__ERR_LOCAL(err);
    pthread_mutex_lock(&pg->mu);
    while (pg->idle == NULL && pg->open >= pg->opts.pool_size) {
        pthread_cond_wait(&pg->cv, &pg->mu);
    }
    sst__pg_conn *c = pg->idle;
    if (c != NULL) {
        pg->idle = c->next;
        pthread_mutex_unlock(&pg->mu);
        c->next = NULL;
        return c;
    }
    pg->open++; /* a slot for the connection made below, outside the lock */
    pthread_mutex_unlock(&pg->mu);
    c = sst__calloc(1, sizeof *c);
    if (c == NULL) {
        sst__enomem(err);
    } else {
        c->pg = pg;
        c->conn = connect_retry(pg, sst__now_ms() + (uint64_t)pg->opts.retry_ms, err);
        if (c->conn != NULL && !session_setup(pg, c->conn)) {
            char why[512];
            sst__error(err, SST_EUNAVAILABLE, "PostgreSQL %s: setting up a connection: %s",
                       pg->name, conn_reason(c->conn, why, sizeof why));
            PQfinish(c->conn);
            c->conn = NULL;
        }
        if (c->conn == NULL) {
            sst__free(c);
            c = NULL;
        }
    }
    if (c == NULL) {
        pthread_mutex_lock(&pg->mu);
        pg->open--;
        pthread_cond_signal(&pg->cv);
        pthread_mutex_unlock(&pg->mu);
    }
    return c;
}

void sst__pg_put(sst__pg_conn *c) {
    if (c == NULL) {
        return;
    }
    sst_pg *pg = c->pg;
    c->n_pending = 0; /* frames never sent: their transaction never began */
    c->solo = false;
    c->committed = c->commit_sent = false;
    if (!c->broken && PQstatus(c->conn) == CONNECTION_OK &&
        PQtransactionStatus(c->conn) == PQTRANS_IDLE) {
        c->after_lost_commit = false;
        pthread_mutex_lock(&pg->mu);
        c->next = pg->idle;
        pg->idle = c;
    } else {
        conn_close(c);
        pthread_mutex_lock(&pg->mu);
        pg->open--;
    }
    pthread_cond_signal(&pg->cv);
    pthread_mutex_unlock(&pg->mu);
}

/* ---- the pool ---- */

sst_pg *sst_pg_open(const char *url, const sst_pg_opts *opts, sst_error *err) {
    SST__ERR_LOCAL(err);
    sst_pg_opts o;
    sst_pg_opts_init(&o);
    if (opts != NULL) {
        o = *opts;
    }
    if (o.pool_size < 1 || o.pool_size > 1000 || o.connect_timeout_ms < 1 || o.retry_ms < 0 ||
        o.idle_tx_timeout_ms < 0) {
        sst__error(err, SST_EINVAL,
                   "PostgreSQL options: pool_size must be 1..1000, connect_timeout_ms at least "
                   "1, retry_ms and idle_tx_timeout_ms at least 0 (got %d, %d, %d, %d)",
                   o.pool_size, o.connect_timeout_ms, o.retry_ms, o.idle_tx_timeout_ms);
        return NULL;
    }
    if (url == NULL) {
        url = "";
    }
    char *perr = NULL;
    PQconninfoOption *parsed = PQconninfoParse(url, &perr);
    if (parsed == NULL) {
        char why[512];
        snprintf(why, sizeof why, "%s", perr != NULL ? perr : "out of memory");
        why[strcspn(why, "\n")] = '\0';
        PQfreemem(perr);
        sst__error(err, SST_EINVAL, "PostgreSQL URL '%s': %s", url, why);
        return NULL;
    }
    PQconninfoFree(parsed);
    sst_pg *pg = sst__calloc(1, sizeof *pg);
    if (pg == NULL || (pg->conninfo = sst__strndup(url, strlen(url))) == NULL) {
        sst__free(pg);
        sst__enomem(err);
        return NULL;
    }
    pg->opts = o;
    snprintf(pg->name, sizeof pg->name, "%s", url[0] != '\0' ? "(given)" : "(environment)");
    pthread_mutex_init(&pg->mu, NULL);
    pthread_cond_init(&pg->cv, NULL);
    pthread_mutex_init(&pg->gmu, NULL);
    pthread_cond_init(&pg->gcv, NULL);
    atomic_init(&pg->refs, 1);
    /* The first connection: a wrong address fails now, at once (no retrying). */
    PGconn *conn = connect_once(pg);
    if (conn == NULL || PQstatus(conn) != CONNECTION_OK) {
        char why[512];
        sst__error(err, SST_EUNAVAILABLE, "PostgreSQL '%s': cannot connect: %s",
                   url[0] != '\0' ? url : "(from the PG* environment variables)",
                   conn_reason(conn, why, sizeof why));
        PQfinish(conn);
        sst_pg_release(pg);
        return NULL;
    }
    const char *host = PQhost(conn);
    snprintf(pg->name, sizeof pg->name, "postgresql://%s@%s%s%s:%s/%s", PQuser(conn),
             host != NULL && host[0] == '/' ? "[" : "", host != NULL ? host : "",
             host != NULL && host[0] == '/' ? "]" : "", PQport(conn), PQdb(conn));
    sst__pg_conn *c = sst__calloc(1, sizeof *c);
    if (c == NULL || !session_setup(pg, conn)) {
        PQfinish(conn);
        sst__free(c);
        sst__error(err, c == NULL ? SST_ENOMEM : SST_EUNAVAILABLE,
                   "PostgreSQL %s: setting up the first connection failed", pg->name);
        sst_pg_release(pg);
        return NULL;
    }
    c->conn = conn;
    c->pg = pg;
    pg->idle = c;
    pg->open = 1;
    return pg;
}

sst_pg *sst_pg_ref(sst_pg *pg) {
    atomic_fetch_add(&pg->refs, 1);
    return pg;
}

void sst_pg_release(sst_pg *pg) {
    if (pg == NULL || atomic_fetch_sub(&pg->refs, 1) != 1) {
        return;
    }
    while (pg->idle != NULL) {
        sst__pg_conn *c = pg->idle;
        pg->idle = c->next;
        conn_close(c);
    }
    pthread_cond_destroy(&pg->cv);
    pthread_mutex_destroy(&pg->mu);
    pthread_cond_destroy(&pg->gcv);
    pthread_mutex_destroy(&pg->gmu);
    sst__free(pg->conninfo);
    sst__free(pg);
}

/* ---- parameters ---- */

void sst__pg_params_init(sst__pg_params *p) {
    p->n = 0;
}

static void param(sst__pg_params *p, const void *v, int len, int fmt) {
    SST_ASSERT(p->n < SST__PG_MAX_PARAMS);
    if (p->n >= SST__PG_MAX_PARAMS) {
        return;
    }
    p->val[p->n] = v;
    p->len[p->n] = len;
    p->fmt[p->n] = fmt;
    p->n++;
}

void sst__pg_text(sst__pg_params *p, const char *s) {
    param(p, s, 0, 0);
}

void sst__pg_textn(sst__pg_params *p, const char *s, size_t len) {
    /* Binary format for text is the bytes themselves: no NUL needed. */
    param(p, s, (int)len, 1);
}

void sst__pg_bytes(sst__pg_params *p, const void *data, size_t len) {
    param(p, data, (int)len, 1);
}

void sst__pg_i64(sst__pg_params *p, int64_t v) {
    if (p->n >= SST__PG_MAX_PARAMS) {
        SST_ASSERT(false);
        return;
    }
    snprintf(p->num[p->n], sizeof p->num[p->n], "%lld", (long long)v);
    param(p, p->num[p->n], 0, 0);
}

void sst__pg_bool(sst__pg_params *p, bool v) {
    param(p, v ? "t" : "f", 0, 0);
}

/* ---- statements ---- */

/* Codes of SQLSTATE classes: a lost connection or a server going away. */
static bool state_lost(const char *st) {
    return strncmp(st, "08", 2) == 0 || strcmp(st, "57P01") == 0 || strcmp(st, "57P02") == 0 ||
           strcmp(st, "57P03") == 0;
}

/* Fills @p err from a failed result (or a NULL one); marks @p c broken when lost. */
static void fail(sst__pg_conn *c, PGresult *r, const char *what, sst_error *err) {
    const char *st = r != NULL ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : NULL;
    snprintf(c->sqlstate, sizeof c->sqlstate, "%s", st != NULL ? st : "");
    char why[512];
    const char *m = r != NULL ? PQresultErrorMessage(r) : NULL;
    if (m == NULL || m[0] == '\0') {
        conn_reason(c->conn, why, sizeof why);
    } else {
        snprintf(why, sizeof why, "%s", m);
        why[strcspn(why, "\n")] = '\0';
    }
    sst_code code = SST_EIO;
    if (PQstatus(c->conn) != CONNECTION_OK || (st != NULL && state_lost(st))) {
        c->broken = true;
        code = SST_EUNAVAILABLE;
    } else if (st != NULL && strcmp(st, "23505") == 0) {
        code = SST_ECONFLICT;
    } else if (st != NULL && strcmp(st, "55P03") == 0) {
        code = SST_EBUSY;
    }
    sst__error(err, code, "%s (PostgreSQL %s): %s", what, c->pg->name, why);
}

static bool result_ok(PGresult *r) {
    ExecStatusType s = PQresultStatus(r);
    return s == PGRES_TUPLES_OK || s == PGRES_COMMAND_OK;
}

/* ---- round trips ----
 *
 * Each message exchange with the server costs both sides a send and a receive (on a
 * loopback connection the sender also pays the receiver's network stack): the profile
 * of issue 37 put a third of PostgreSQL's CPU per run there. So a transaction's frame
 * statements (BEGIN, SET LOCAL, SAVEPOINT) are not sent on their own: they wait in
 * c->pending and go with the next statement, and a statement new to the connection is
 * prepared in the same exchange, in one pipeline (PQenterPipelineMode .. PQpipelineSync):
 * one round trip where there were up to four. A frame no statement follows is never
 * sent (a job that ran no statement needs no savepoint, a transaction that ran none
 * needs no BEGIN nor COMMIT).
 */

/* The frame statements (constants: compared by address). */
static const char k_begin[] = "BEGIN";
static const char k_async[] = "SET LOCAL synchronous_commit = off";
static const char k_savepoint[] = "SAVEPOINT sst_job";

/* Reads one query's results in pipeline mode: the last non-NULL one (the caller clears
 * it), or NULL when the connection gave none. */
static PGresult *pipe_result(PGconn *conn) {
    PGresult *r = PQgetResult(conn), *more;
    if (r == NULL) {
        return NULL;
    }
    while ((more = PQgetResult(conn)) != NULL) {
        PQclear(r);
        r = more;
    }
    return r;
}

/* A pipeline that could not be sent or whose answers stopped: the connection is lost. */
static PGresult *pipe_lost(sst__pg_conn *c, const char *what, sst_error *err) {
    char why[512];
    c->broken = true;
    snprintf(c->sqlstate, sizeof c->sqlstate, "%s", "");
    sst__error(err, SST_EUNAVAILABLE, "%s (PostgreSQL %s): %s", what, c->pg->name,
               conn_reason(c->conn, why, sizeof why));
    return NULL;
}

/* Sends c->pending, then (when @p prepare) the preparation of @p name as @p sql, then the
 * statement itself (@p name with @p p, or @p sql without parameters when @p name is NULL),
 * then a sync, and reads every answer: one round trip. Returns the statement's result,
 * or NULL with @p err filled (the first failure's; the connection is marked broken when
 * lost). c->pending is empty afterwards. */
static PGresult *exec_pipeline(sst__pg_conn *c, const char *name, const char *sql, bool prepare,
                               bool commit, const sst__pg_params *p, const char *what,
                               sst_error *err) {
    PGconn *conn = c->conn;
    int n_frames = c->n_pending;
    c->n_pending = 0;
    atomic_fetch_add(&c->pg->statements, (uint64_t)(n_frames + 1 + (commit ? 1 : 0)));
    bool sent = PQenterPipelineMode(conn) == 1;
    for (int i = 0; sent && i < n_frames; i++) {
        sent = PQsendQueryParams(conn, c->pending[i], 0, NULL, NULL, NULL, NULL, 1) == 1;
    }
    if (sent && prepare) {
        sent = PQsendPrepare(conn, name, sql, 0, NULL) == 1;
    }
    if (sent) {
        int n = p != NULL ? p->n : 0;
        sent = name != NULL ? PQsendQueryPrepared(conn, name, n, p != NULL ? p->val : NULL,
                                                  p != NULL ? p->len : NULL,
                                                  p != NULL ? p->fmt : NULL, 1) == 1
                            : PQsendQueryParams(conn, sql, 0, NULL, NULL, NULL, NULL, 1) == 1;
    }
    if (sent && commit) {
        sent = PQsendQueryParams(conn, "COMMIT", 0, NULL, NULL, NULL, NULL, 1) == 1;
        c->commit_sent = true; /* lost from here on, it may have been applied */
    }
    sent = sent && PQpipelineSync(conn) == 1;
    if (!sent) {
        return pipe_lost(c, what, err);
    }
    int stmt = n_frames + (prepare ? 1 : 0), queries = stmt + 1 + (commit ? 1 : 0);
    PGresult *first_bad = NULL, *last = NULL;
    bool lost = false, prepared = false;
    for (int q = 0; q < queries && !lost; q++) {
        PGresult *r = pipe_result(conn);
        if (r == NULL) {
            lost = true;
            break;
        }
        if (prepare && q == n_frames) {
            /* The session keeps a statement prepared whatever becomes of what follows it
             * (a failed execution, a transaction rolled back): so does the map. */
            prepared = result_ok(r);
        }
        if (q == stmt) {
            last = r;
        } else if (q > stmt) { /* the COMMIT: skipped when the statement failed */
            if (result_ok(last) && !result_ok(r)) {
                first_bad = r;
            } else {
                PQclear(r);
            }
        } else if (first_bad == NULL && !result_ok(r)) {
            first_bad = r;
        } else {
            PQclear(r);
        }
    }
    PGresult *sync = lost ? NULL : PQgetResult(conn);
    lost |= sync == NULL || PQresultStatus(sync) != PGRES_PIPELINE_SYNC;
    PQclear(sync);
    if (!lost && PQexitPipelineMode(conn) != 1) {
        lost = true;
    }
    if (prepared && !lost) {
        (void)sst__map_put(&c->prepared, name, 0); /* room reserved by the caller */
    }
    PGresult *bad = first_bad != NULL ? first_bad : last;
    if (lost) {
        PQclear(first_bad);
        PQclear(last);
        return pipe_lost(c, what, err);
    }
    if (!result_ok(bad)) {
        fail(c, bad, what, err);
        PQclear(first_bad);
        PQclear(last);
        return NULL;
    }
    c->committed |= commit;
    return last;
}

static PGresult *exec(sst__pg_conn *c, const char *name, const char *sql, const sst__pg_params *p,
                      bool last, const char *what, sst_error *err) {
    c->sqlstate[0] = '\0';
    if (c->broken) {
        sst__error(err, SST_EUNAVAILABLE, "%s (PostgreSQL %s): connection lost", what, c->pg->name);
        return NULL;
    }
    size_t slot;
    bool prepare = !sst__map_get(&c->prepared, name, &slot);
    if (prepare && !sst__map_reserve(&c->prepared, 1)) {
        sst__enomem(err);
        return NULL;
    }
    if (prepare || c->n_pending > 0 || last) {
        return exec_pipeline(c, name, sql, prepare, last, p, what, err);
    }
    int n = p != NULL ? p->n : 0;
    atomic_fetch_add(&c->pg->statements, 1);
    PGresult *r = PQexecPrepared(c->conn, name, n, p != NULL ? p->val : NULL,
                                 p != NULL ? p->len : NULL, p != NULL ? p->fmt : NULL, 1);
    if (!result_ok(r)) {
        fail(c, r, what, err);
        PQclear(r);
        return NULL;
    }
    return r;
}

PGresult *sst__pg_exec(sst__pg_conn *c, const char *name, const char *sql, const sst__pg_params *p,
                       const char *what, sst_error *err) {
    SST__ERR_LOCAL(err);
    return exec(c, name, sql, p, false, what, err);
}

PGresult *sst__pg_exec_last(sst__pg_conn *c, const char *name, const char *sql,
                            const sst__pg_params *p, const char *what, sst_error *err) {
    SST__ERR_LOCAL(err);
    /* A commit hook (tests) stops a transaction after its statements, before its COMMIT:
     * then the COMMIT goes on its own, after the hook. */
    bool commit = c->solo && !c->committed && c->pg->before_commit == NULL;
    if (c->n_pending > 0 && c->pending[c->n_pending - 1] == k_savepoint) {
        c->n_pending--; /* the job's only statement: no savepoint (pg.h) */
        c->unguarded = true;
    }
    return exec(c, name, sql, p, commit, what, err);
}

/* A statement whose rows are not wanted: sst__pg_exec or, when @p last, sst__pg_exec_last. */
static sst_code run(sst__pg_conn *c, const char *name, const char *sql, const sst__pg_params *p,
                    bool last, const char *what, sst_error *err) {
    SST__ERR_LOCAL(err);
    PGresult *r = last ? sst__pg_exec_last(c, name, sql, p, what, err)
                       : sst__pg_exec(c, name, sql, p, what, err);
    if (r == NULL) {
        return sst__code(err);
    }
    PQclear(r);
    return SST_OK;
}

sst_code sst__pg_run_last(sst__pg_conn *c, const char *name, const char *sql,
                          const sst__pg_params *p, const char *what, sst_error *err) {
    return run(c, name, sql, p, true, what, err);
}

sst_code sst__pg_run(sst__pg_conn *c, const char *name, const char *sql, const sst__pg_params *p,
                     const char *what, sst_error *err) {
    return run(c, name, sql, p, false, what, err);
}

sst_code sst__pg_simple(sst__pg_conn *c, const char *sql, const char *what, sst_error *err) {
    SST__ERR_LOCAL(err);
    c->sqlstate[0] = '\0';
    if (c->broken) {
        return sst__error(err, SST_EUNAVAILABLE, "%s (PostgreSQL %s): connection lost", what,
                          c->pg->name);
    }
    atomic_fetch_add(&c->pg->statements, (uint64_t)c->n_pending + 1);
    PGresult *r;
    if (c->n_pending > 0) {
        /* The frame statements not sent yet go first, in the same simple query. */
        size_t len = strlen(sql) + 1;
        for (int i = 0; i < c->n_pending; i++) {
            len += strlen(c->pending[i]) + 2;
        }
        char *all = sst__malloc(len);
        if (all == NULL) {
            return sst__enomem(err);
        }
        size_t at = 0;
        for (int i = 0; i < c->n_pending; i++) {
            size_t n = strlen(c->pending[i]);
            memcpy(all + at, c->pending[i], n);
            memcpy(all + at + n, "; ", 2);
            at += n + 2;
        }
        memcpy(all + at, sql, strlen(sql) + 1);
        c->n_pending = 0;
        r = PQexec(c->conn, all);
        sst__free(all);
    } else {
        r = PQexec(c->conn, sql);
    }
    /* PQexec returns the last statement's result; an earlier failure stops the list. */
    if (!result_ok(r)) {
        fail(c, r, what, err);
        PQclear(r);
        return sst__code(err);
    }
    PQclear(r);
    return SST_OK;
}

/* ---- transactions ---- */

/* Whether a failure is worth running the whole transaction again. */
static bool retryable(const sst__pg_conn *c, sst_code code) {
    if (c == NULL || c->broken || code == SST_EUNAVAILABLE) {
        return true;
    }
    return strcmp(c->sqlstate, "40001") == 0 || strcmp(c->sqlstate, "40P01") == 0;
}

/* A statement of the transaction's frame (BEGIN, SAVEPOINT...): false when it failed
 * (the connection is then unusable for this transaction: marked broken). */
static bool frame(sst__pg_conn *c, const char *sql) {
    if (c->broken) {
        return false;
    }
    PGresult *r;
    if (c->n_pending > 0) {
        sst_error e = {0};
        r = exec_pipeline(c, NULL, sql, false, false, NULL, "a transaction's frame", &e);
    } else {
        atomic_fetch_add(&c->pg->statements, 1);
        r = PQexec(c->conn, sql);
    }
    bool ok = PQresultStatus(r) == PGRES_COMMAND_OK;
    PQclear(r);
    if (!ok) {
        c->broken = true;
    }
    return ok;
}

/* Queues frame statement @p sql (a constant) to go with the next statement (see "round
 * trips"). A savepoint right after one of the same name (a job that ran nothing) is
 * the same savepoint. */
static void defer(sst__pg_conn *c, const char *sql) {
    if (c->n_pending > 0 && strcmp(c->pending[c->n_pending - 1], sql) == 0) {
        return;
    }
    SST_ASSERT(c->n_pending < (int)(sizeof c->pending / sizeof *c->pending));
    if (c->n_pending >= (int)(sizeof c->pending / sizeof *c->pending)) {
        (void)frame(c, sql); /* not expected: BEGIN, SET LOCAL and SAVEPOINT at most */
        return;
    }
    c->pending[c->n_pending++] = sql;
}

/* Whether @p c's transaction has not reached the server yet (its BEGIN is pending): then
 * there is nothing to commit or roll back. */
static bool tx_unsent(const sst__pg_conn *c) {
    return c->n_pending > 0 && c->pending[0] == k_begin;
}

/* Rolls back what @p c has open (a failed transaction); a failure breaks the connection. */
static void roll_back(sst__pg_conn *c) {
    c->n_pending = 0;
    if (!c->broken && PQtransactionStatus(c->conn) != PQTRANS_IDLE) {
        (void)frame(c, "ROLLBACK");
    }
}

/* Reads: one statement-level snapshot per statement, no BEGIN, retried whole. */
static sst_code run_read(sst_pg *pg, sst__pg_tx_fn fn, void *user, sst_error *err) {
    uint64_t deadline = sst__now_ms() + (uint64_t)pg->opts.retry_ms;
    uint64_t wait = 50;
    for (;;) {
        sst_error_clear(err);
        sst__pg_conn *c = sst__pg_get(pg, err);
        sst_code code = c == NULL ? sst__code(err) : fn(c, user, err);
        bool again = code != SST_OK && code != SST_ENOMEM && retryable(c, code);
        if (c != NULL && code != SST_OK) {
            roll_back(c); /* a read that began one (it should not) */
        }
        sst__pg_put(c);
        if (!again || pg->opts.retry_ms == 0 || sst__now_ms() + wait > deadline) {
            return code;
        }
        sst__sleep_ms(wait);
        wait = wait * 2 > 1000 ? 1000 : wait * 2;
    }
}

/* ---- group commit ----
 *
 * Every transaction of a pool (sst__pg_tx) is a job given to the pool's committer. When
 * no flush is under way the caller takes the lead at once and commits its job alone: one
 * run in flight waits for nothing more than before. While a leader is flushing, new jobs
 * wait; when it is done, one of their callers takes the lead and runs all of them in one
 * transaction, each in a savepoint of its own, and commits once: one flush for every run
 * in flight. A job whose statement fails is rolled back to its savepoint alone (the others
 * commit); one that hit a deadlock or a serialization failure runs again in the next
 * transaction; a lost connection or COMMIT runs every job of the transaction again (each
 * fn is redoable, as sst__pg_tx asks). The committer's mutex guards the queue only: it is
 * never held across a statement or a flush. A caller waits for the flush that holds its
 * own job, no other.
 */

/* At most this many jobs share a transaction (the rest take the next one). */
#define GROUP_MAX 64

typedef struct pg_job {
    sst__pg_tx_fn fn;
    void *user;
    bool sync;
    sst_code rc;
    sst_error err;
    bool done;    /* rc and err hold the outcome (set under the committer's mutex) */
    bool fin;     /* within the leader: the outcome is final */
    bool again;   /* within the leader: run it in the next transaction */
    bool aborted; /* its statement failed without a savepoint: the transaction is lost */
    struct pg_job *next;
} pg_job;

/* The thread leading a group (its jobs' fns run on it): a transaction a fn starts on the
 * pool runs outside the committer, on a connection of its own, as it did before. */
static _Thread_local sst_pg *tl_leading;

/* The transaction of sst__pg_batch_begin bound to the calling thread, if any. */
typedef struct pg_batch {
    sst_pg *pg;
    sst__pg_conn *c;
    int depth;
    bool sync;       /* a sync transaction joined it: commit with the flush */
    bool hand_over;  /* the next transaction on this thread commits it */
    bool pass;       /* ... the one after it (sst__pg_batch_hand_over_past) */
    bool kept;       /* a transaction of sst__pg_tx_keep is in it (sst__pg_batch_kept) */
    sst_code failed; /* a transaction in it lost the connection: commit fails with this */
    void (*on_commit)(void *ud); /* sst__pg_batch_on_commit: called once it committed */
    void *on_commit_ud;
} pg_batch;
static _Thread_local pg_batch tl_batch;
/* The pool and key for which the calling thread keeps its next sst__pg_tx_keep open. */
static _Thread_local sst_pg *tl_keep;
static _Thread_local const char *tl_keep_key;

/* Runs one job in @p c's open transaction, in a savepoint when @p sp. A job that
 * succeeded leaves its savepoint in place (the COMMIT ends them all; a RELEASE would
 * cost a round trip per job): a later job's SAVEPOINT of the same name shadows it, so
 * that job's ROLLBACK TO undoes that job alone. */
static sst_code run_job(sst__pg_conn *c, pg_job *j, bool sp) {
    sst_error_clear(&j->err);
    j->aborted = false;
    c->unguarded = false;
    if (sp) {
        defer(c, k_savepoint); /* sent with the job's first statement */
    }
    sst_code rc = j->fn(c, j->user, &j->err);
    if (rc != SST_OK && sp && !c->broken) {
        if (c->n_pending > 0 && c->pending[c->n_pending - 1] == k_savepoint) {
            c->n_pending--; /* it sent nothing: nothing to undo */
        } else if (c->unguarded) {
            /* Its one statement, sent without a savepoint: a "no" wrote nothing, an error
             * aborted the transaction (the caller rolls it back whole). */
            j->aborted = PQtransactionStatus(c->conn) == PQTRANS_INERROR;
        } else {
            (void)frame(c, "ROLLBACK TO SAVEPOINT sst_job");
        }
    }
    c->unguarded = false;
    return rc;
}

/* Commits the jobs of @p head (a list): sets each one's rc and err. */
static void run_group(sst_pg *pg, pg_job *head) {
    uint64_t deadline = sst__now_ms() + (uint64_t)pg->opts.retry_ms;
    uint64_t wait = 50;
    bool lost_commit = false;
    for (pg_job *j = head; j != NULL; j = j->next) {
        j->fin = false;
        j->rc = SST_OK;
    }
    tl_leading = pg;
    for (;;) {
        size_t n = 0;
        bool sync = false;
        for (pg_job *j = head; j != NULL; j = j->next) {
            if (!j->fin) {
                n++;
                sync |= j->sync;
            }
        }
        if (n == 0) {
            break;
        }
        sst_error cerr = {0};
        sst__pg_conn *c = sst__pg_get(pg, &cerr);
        bool lost = c == NULL; /* no connection, or it (or the COMMIT) was lost */
        if (c != NULL) {
            c->after_lost_commit = lost_commit;
            c->solo = n == 1; /* alone: its last statement may take the COMMIT along */
            c->committed = c->commit_sent = false;
            defer(c, k_begin); /* sent with the first statement */
            if (!sync) {
                defer(c, k_async);
            }
        }
        size_t ok = 0;
        pg_job *aborted = NULL;
        for (pg_job *j = head; !lost && aborted == NULL && j != NULL; j = j->next) {
            if (j->fin) {
                continue;
            }
            j->again = false;
            j->rc = run_job(c, j, n > 1);
            if (c->broken) {
                lost = true;
            } else if (j->rc == SST_OK) {
                ok++;
            } else {
                /* A deadlock victim or a serialization failure runs again. */
                j->again = j->rc != SST_ENOMEM && retryable(c, j->rc);
                if (n == 1) {
                    roll_back(c);
                } else if (j->aborted) {
                    aborted = j; /* its error aborted the transaction: the others redo */
                }
            }
        }
        bool committed = false, redo = false;
        if (aborted != NULL) {
            roll_back(c);
            for (pg_job *j = head; j != NULL; j = j->next) {
                if (!j->fin && j != aborted) {
                    j->again = true;
                    j->rc = SST_OK;
                }
            }
            redo = !aborted->again; /* settled: the rest run again at once */
        } else if (!lost && c->committed) {
            committed = true; /* with the job's last statement (sst__pg_exec_last) */
            atomic_fetch_add(sync ? &pg->flushed : &pg->unflushed, 1);
            atomic_fetch_add(&pg->jobs, ok);
        } else if (!lost && ok > 0) {
            if (pg->before_commit != NULL) {
                pg->before_commit(pg->before_commit_ud);
            }
            bool empty = tx_unsent(c); /* no job sent a statement */
            if (empty) {
                c->n_pending = 0;
            }
            committed = empty || frame(c, "COMMIT");
            if (committed && empty) {
                atomic_fetch_add(&pg->jobs, ok);
            } else if (committed) {
                atomic_fetch_add(sync ? &pg->flushed : &pg->unflushed, 1);
                atomic_fetch_add(&pg->jobs, ok);
            } else {
                lost = true;
                lost_commit = true; /* the COMMIT may have been applied before the line dropped */
            }
        } else if (!lost) {
            roll_back(c); /* every job failed: nothing to commit */
        }
        if (lost && c != NULL) {
            c->broken = true;
            lost_commit |= c->commit_sent; /* a COMMIT sent with a statement, its answer lost */
        }
        sst__pg_put(c);
        /* Settle what is final; what is left runs again. */
        bool left = false;
        for (pg_job *j = head; j != NULL; j = j->next) {
            if (j->fin) {
                continue;
            }
            if (lost) {
                sst_code code = c == NULL ? cerr.code : SST_EUNAVAILABLE;
                if (c == NULL || j->rc == SST_OK || j->rc == SST_EUNAVAILABLE) {
                    sst_error_clear(&j->err);
                    sst__error(&j->err, code, "%s",
                               c == NULL ? cerr.msg : "PostgreSQL: the connection was lost");
                    j->rc = code;
                }
                j->again = code == SST_EUNAVAILABLE;
            }
            if ((committed && j->rc == SST_OK) || !j->again) {
                j->fin = true;
            } else {
                left = true;
            }
        }
        if (!left) {
            break;
        }
        if (redo) {
            continue;
        }
        if (pg->opts.retry_ms == 0 || sst__now_ms() + wait > deadline) {
            for (pg_job *j = head; j != NULL; j = j->next) {
                j->fin = true;
            }
            break;
        }
        sst__sleep_ms(wait);
        wait = wait * 2 > 1000 ? 1000 : wait * 2;
    }
    tl_leading = NULL;
}

/* sst__pg_tx through the committer (see above). */
static sst_code run_grouped(sst_pg *pg, bool sync, sst__pg_tx_fn fn, void *user, sst_error *err) {
    pg_job me = {.fn = fn, .user = user, .sync = sync};
    pthread_mutex_lock(&pg->gmu);
    if (pg->gtail != NULL) {
        pg->gtail->next = &me;
    } else {
        pg->ghead = &me;
    }
    pg->gtail = &me;
    pg->gqueued++;
    if (pg->gwatchers > 0) {
        pthread_cond_broadcast(&pg->gcv); /* for sst__pg_group_waiting */
    }
    while (!me.done) {
        if (pg->leading) {
            pthread_cond_wait(&pg->gcv, &pg->gmu);
            continue;
        }
        /* Idle: lead. Take the queue (this caller's job among it) up to GROUP_MAX. */
        pg->leading = true;
        pg_job *head = pg->ghead, *last = head;
        size_t n = 1;
        while (last->next != NULL && n < GROUP_MAX) {
            last = last->next;
            n++;
        }
        pg->ghead = last->next;
        if (pg->ghead == NULL) {
            pg->gtail = NULL;
        }
        last->next = NULL;
        pg->gqueued -= n;
        pthread_mutex_unlock(&pg->gmu);
        run_group(pg, head);
        pthread_mutex_lock(&pg->gmu);
        pg->leading = false;
        for (pg_job *j = head, *next; j != NULL; j = next) {
            next = j->next; /* a follower's job lives on its stack: read it before waking it */
            j->done = true;
        }
        pthread_cond_broadcast(&pg->gcv);
    }
    pthread_mutex_unlock(&pg->gmu);
    if (me.rc != SST_OK && err != NULL) {
        *err = me.err;
    }
    return me.rc;
}

/* A transaction inside the thread's batch: a savepoint of its transaction. */
static sst_code run_in_batch(pg_batch *b, bool sync, sst__pg_tx_fn fn, void *user, sst_error *err) {
    pg_job j = {.fn = fn, .user = user, .sync = sync};
    sst_code rc =
        b->failed != SST_OK
            ? sst__error(&j.err, b->failed, "PostgreSQL %s: the transaction was lost", b->pg->name)
            : run_job(b->c, &j, !tx_unsent(b->c)); /* the first of a kept one: no savepoint */
    if (b->c->broken && b->failed == SST_OK) {
        b->failed = SST_EUNAVAILABLE;
    } else if (j.aborted && b->failed == SST_OK) {
        b->failed = SST_EIO; /* aborted by a statement without a savepoint */
    }
    if (rc == SST_OK) {
        b->sync |= sync;
    } else if (err != NULL) {
        *err = j.err;
    }
    if (b->hand_over && b->depth > 0 && rc == SST_OK && b->pass) {
        b->pass = false; /* this one passes the batch on to the next */
    } else if (b->hand_over && b->depth > 0 && rc == SST_OK) {
        /* The transaction the batch was handed over to: it commits the batch. */
        b->depth = 1;
        return sst__pg_batch_commit(b->pg, true, err);
    }
    return rc;
}

/* A read on the thread's batch's connection: it sees the batch's writes, and a worker
 * holding a batch never waits for a second connection of a pool it may have exhausted.
 * Without a savepoint (a read has nothing to undo): one that fails with an error aborts
 * the batch's transaction, which then commits nothing. */
static sst_code read_in_batch(pg_batch *b, sst__pg_tx_fn fn, void *user, sst_error *err) {
    if (b->failed != SST_OK) {
        return sst__error(err, b->failed, "PostgreSQL %s: the transaction was lost", b->pg->name);
    }
    sst__pg_conn *c = b->c;
    sst_code rc = fn(c, user, err);
    if (c->broken) {
        b->failed = SST_EUNAVAILABLE;
    } else if (rc != SST_OK && PQtransactionStatus(c->conn) == PQTRANS_INERROR) {
        b->failed = SST_EIO;
    }
    return rc;
}

sst_code sst__pg_batch_begin(sst_pg *pg, sst_error *err) {
    SST__ERR_LOCAL(err);
    pg_batch *b = &tl_batch;
    if (b->depth > 0) {
        if (b->pg != pg) {
            return sst__error(err, SST_EINVAL, "PostgreSQL: a batch of another pool is open");
        }
        b->depth++;
        return SST_OK;
    }
    /* An idle connection of the pool may have been lost meanwhile (the server
     * restarted, the backend was ended): nothing ran on it yet, so BEGIN is tried
     * once more, on a new connection. */
    for (int attempt = 0;; attempt++) {
        sst__pg_conn *c = sst__pg_get(pg, err);
        if (c == NULL) {
            return sst__code(err);
        }
        if (frame(c, "BEGIN")) {
            *b = (pg_batch){.pg = pg, .c = c, .depth = 1};
            return SST_OK;
        }
        sst__error(err, SST_EUNAVAILABLE, "PostgreSQL %s: beginning a transaction: %s", pg->name,
                   PQerrorMessage(c->conn));
        c->broken = true;
        sst__pg_put(c); /* closed: c is not touched after this */
        if (attempt > 0) {
            return SST_EUNAVAILABLE;
        }
        sst_error_clear(err);
    }
}

void sst__pg_batch_on_commit(sst_pg *pg, void (*fn)(void *ud), void *ud) {
    if (tl_batch.depth > 0 && tl_batch.pg == pg) {
        tl_batch.on_commit = fn;
        tl_batch.on_commit_ud = ud;
    }
}

void sst__pg_batch_hand_over(sst_pg *pg) {
    if (tl_batch.depth > 0 && tl_batch.pg == pg) {
        tl_batch.hand_over = true;
    }
}

void sst__pg_batch_hand_over_past(sst_pg *pg) {
    if (tl_batch.depth > 0 && tl_batch.pg == pg && tl_batch.hand_over) {
        tl_batch.pass = true;
    }
}

bool sst__pg_batch_open(const sst_pg *pg) {
    return tl_batch.depth > 0 && tl_batch.pg == pg;
}

void sst__pg_batch_commit_along(sst_pg *pg) {
    pg_batch *b = &tl_batch;
    if (b->depth > 0 && b->pg == pg && b->sync && b->failed == SST_OK && !b->c->broken) {
        b->c->solo = true; /* sst__pg_exec_last sends the COMMIT with its statement */
    }
}

bool sst__pg_batch_kept(const sst_pg *pg) {
    return tl_batch.pg == pg && tl_batch.kept; /* in its commit too (depth 0 there) */
}

void sst__pg_keep(sst_pg *pg, const char *key) {
    tl_keep = key != NULL ? pg : NULL;
    tl_keep_key = key;
}

/* Begins the calling thread's batch for sst__pg_tx_keep: its BEGIN goes with the first
 * statement (no round trip of its own; a connection found lost then fails the
 * transaction, which sst__pg_tx_keep runs again the ordinary way). */
static sst_code keep_begin(sst_pg *pg, sst_error *err) {
    sst__pg_conn *c = sst__pg_get(pg, err);
    if (c == NULL) {
        return sst__code(err);
    }
    defer(c, k_begin);
    tl_batch = (pg_batch){.pg = pg, .c = c, .depth = 1};
    return SST_OK;
}

sst_code sst__pg_tx_keep(sst_pg *pg, const char *key, bool sync, sst__pg_tx_fn fn, void *user,
                         sst_error *err) {
    SST__ERR_LOCAL(err);
    pg_batch *b = &tl_batch;
    bool mine = b->depth > 0 && b->pg == pg;
    if (tl_keep != pg || strcmp(tl_keep_key, key) != 0 || (b->depth > 0 && !mine) ||
        (mine && b->hand_over && b->pass)) {
        return sst__pg_tx(pg, sync, fn, user, err);
    }
    tl_keep = NULL; /* once: the run's last checkpoint */
    bool began = !mine;
    if (began && keep_begin(pg, err) != SST_OK) {
        return sst__code(err);
    }
    b->hand_over = false; /* a claim handed over to this transaction stays open with it */
    sst_code rc = run_in_batch(b, sync, fn, user, err);
    if (rc == SST_OK) {
        b->kept = true;
        return SST_OK;
    }
    if (began) {
        /* Nothing else is in it: end it, and run the transaction the ordinary way when the
         * connection was lost (retried on a new one, as sst__pg_tx does). */
        bool lost = b->failed != SST_OK;
        (void)sst__pg_batch_commit(pg, false, NULL);
        if (lost) {
            sst_error_clear(err);
            return sst__pg_tx(pg, sync, fn, user, err);
        }
    }
    return rc;
}

sst_code sst__pg_batch_commit(sst_pg *pg, bool ok, sst_error *err) {
    SST__ERR_LOCAL(err);
    pg_batch *b = &tl_batch;
    if (b->depth == 0 || b->pg != pg) {
        return SST_OK; /* handed over and committed already */
    }
    if (--b->depth > 0) {
        return SST_OK;
    }
    sst__pg_conn *c = b->c;
    sst_code rc = b->failed;
    if (rc != SST_OK) {
        sst__error(err, rc,
                   rc == SST_EUNAVAILABLE
                       ? "PostgreSQL %s: the transaction was lost; nothing of it was committed"
                       : "PostgreSQL %s: a statement failed and aborted the transaction; "
                         "nothing of it was committed",
                   pg->name);
    } else if (ok && c->committed) {
        /* With its last statement (sst__pg_batch_commit_along): flushed, b->sync. */
        atomic_fetch_add(&pg->flushed, 1);
        atomic_fetch_add(&pg->jobs, 1);
    } else if (ok) {
        if (!b->sync) {
            defer(c, k_async); /* sent with the COMMIT */
        }
        if (pg->before_commit != NULL) {
            pg->before_commit(pg->before_commit_ud);
        }
        if (frame(c, "COMMIT")) {
            atomic_fetch_add(b->sync ? &pg->flushed : &pg->unflushed, 1);
            atomic_fetch_add(&pg->jobs, 1);
        } else {
            rc = sst__error(err, SST_EUNAVAILABLE, "PostgreSQL %s: committing: connection lost",
                            pg->name);
        }
    }
    if (!ok || rc != SST_OK) {
        roll_back(c);
    }
    void (*on_commit)(void *) = ok && rc == SST_OK ? b->on_commit : NULL;
    void *on_commit_ud = b->on_commit_ud;
    *b = (pg_batch){0};
    sst__pg_put(c);
    if (on_commit != NULL) {
        on_commit(on_commit_ud);
    }
    return rc;
}

void sst__pg_set_commit_hook(sst_pg *pg, void (*fn)(void *ud), void *ud) {
    pg->before_commit = fn;
    pg->before_commit_ud = ud;
}

void sst__pg_commit_stats(sst_pg *pg, sst__pg_stats *out) {
    out->flushed = atomic_load(&pg->flushed);
    out->unflushed = atomic_load(&pg->unflushed);
    out->jobs = atomic_load(&pg->jobs);
    out->statements = atomic_load(&pg->statements);
}

size_t sst__pg_group_waiting(sst_pg *pg, size_t at_least) {
    pthread_mutex_lock(&pg->gmu);
    pg->gwatchers++;
    while (pg->gqueued < at_least) {
        pthread_cond_wait(&pg->gcv, &pg->gmu);
    }
    pg->gwatchers--;
    size_t n = pg->gqueued;
    pthread_mutex_unlock(&pg->gmu);
    return n;
}

sst_code sst__pg_tx(sst_pg *pg, bool sync, sst__pg_tx_fn fn, void *user, sst_error *err) {
    SST__ERR_LOCAL(err);
    if (tl_batch.depth > 0 && tl_batch.pg == pg) {
        return run_in_batch(&tl_batch, sync, fn, user, err);
    }
    if (tl_leading == pg) {
        /* A fn of a group starting a transaction of its own: outside the group. */
        pg_job j = {.fn = fn, .user = user, .sync = sync};
        run_group(pg, &j);
        tl_leading = pg;
        if (j.rc != SST_OK) {
            *err = j.err;
        }
        return j.rc;
    }
    return run_grouped(pg, sync, fn, user, err);
}

sst_code sst__pg_read(sst_pg *pg, sst__pg_tx_fn fn, void *user, sst_error *err) {
    SST__ERR_LOCAL(err);
    if (tl_batch.depth > 0 && tl_batch.pg == pg) {
        /* On the batch's connection: it sees the batch's writes, and a worker holding a
         * batch never waits for a second connection of a pool it may have exhausted. */
        return read_in_batch(&tl_batch, fn, user, err);
    }
    return run_read(pg, fn, user, err);
}

/* ---- schema versions ---- */

typedef struct schema_job {
    const char *name;
    const char *const *steps;
    int n_steps;
} schema_job;

static sst_code schema_tx(sst__pg_conn *c, void *user, sst_error *err) {
    schema_job *j = user;
    sst__pg_params p;
    sst__pg_params_init(&p);
    sst__pg_text(&p, j->name);
    /* One migration at a time per database and component (the lock ends with the
     * transaction); the table itself is made under a lock of its own. */
    if (sst__pg_simple(c, "SELECT pg_advisory_xact_lock(5353540001)", "schema lock", err) !=
            SST_OK ||
        sst__pg_simple(c,
                       "CREATE TABLE IF NOT EXISTS sst_schema(component text PRIMARY KEY,"
                       " version integer NOT NULL)",
                       "creating sst_schema", err) != SST_OK) {
        return sst__code(err);
    }
    PGresult *r =
        sst__pg_exec(c, "sst_schema_get", "SELECT version FROM sst_schema WHERE component = $1", &p,
                     "reading the schema version", err);
    if (r == NULL) {
        return sst__code(err);
    }
    int64_t have = PQntuples(r) > 0 ? sst__pg_int(r, 0, 0) : 0;
    PQclear(r);
    if (have > j->n_steps) {
        return sst__error(err, SST_ENOTSUP,
                          "PostgreSQL %s: the %s tables are at schema version %lld, newer than "
                          "this build's %d: use a newer superstep",
                          c->pg->name, j->name, (long long)have, j->n_steps);
    }
    if (have == j->n_steps) {
        return SST_OK;
    }
    for (int64_t v = have; v < j->n_steps; v++) {
        char what[96];
        snprintf(what, sizeof what, "migrating the %s tables to version %lld", j->name,
                 (long long)v + 1);
        if (sst__pg_simple(c, j->steps[v], what, err) != SST_OK) {
            return sst__code(err);
        }
    }
    sst__pg_i64(&p, j->n_steps);
    return sst__pg_run(c, "sst_schema_set",
                       "INSERT INTO sst_schema(component, version) VALUES($1, $2)"
                       " ON CONFLICT(component) DO UPDATE SET version = excluded.version",
                       &p, "writing the schema version", err);
}

sst_code sst__pg_schema(sst_pg *pg, const char *name, const char *const *steps, int n_steps,
                        sst_error *err) {
    schema_job j = {name, steps, n_steps};
    return sst__pg_tx(pg, true, schema_tx, &j, err);
}

/* ---- results ---- */

bool sst__pg_null(const PGresult *r, int row, int col) {
    return PQgetisnull(r, row, col) != 0;
}

/* Type OIDs (pg_type.h is a server header). */
enum { OID_BOOL = 16, OID_INT8 = 20, OID_INT2 = 21, OID_INT4 = 23, OID_JSONB = 3802 };

int64_t sst__pg_int(const PGresult *r, int row, int col) {
    if (PQgetisnull(r, row, col)) {
        return 0;
    }
    const unsigned char *v = (const unsigned char *)PQgetvalue(r, row, col);
    if (PQfformat(r, col) == 0) {
        return v[0] == 't' ? 1 : v[0] == 'f' ? 0 : strtoll((const char *)v, NULL, 10);
    }
    uint64_t x = 0;
    int n = PQgetlength(r, row, col);
    switch (PQftype(r, col)) {
        case OID_BOOL:
            return n > 0 && v[0] != 0;
        case OID_INT2:
            return n == 2 ? (int16_t)((v[0] << 8) | v[1]) : 0;
        case OID_INT4:
            return n == 4 ? (int32_t)((uint32_t)v[0] << 24 | (uint32_t)v[1] << 16 |
                                      (uint32_t)v[2] << 8 | v[3])
                          : 0;
        case OID_INT8:
            for (int i = 0; i < n && i < 8; i++) {
                x = x << 8 | v[i];
            }
            return (int64_t)x;
        default:
            SST_ASSERT(false); /* a column of a type the getters do not know */
            return 0;
    }
}

const char *sst__pg_bytes_at(const PGresult *r, int row, int col, size_t *len) {
    if (PQgetisnull(r, row, col)) {
        if (len != NULL) {
            *len = 0;
        }
        return NULL;
    }
    const char *v = PQgetvalue(r, row, col);
    size_t n = (size_t)PQgetlength(r, row, col);
    if (PQfformat(r, col) == 1 && PQftype(r, col) == OID_JSONB && n > 0) {
        v++; /* the jsonb binary format's version byte */
        n--;
    }
    if (len != NULL) {
        *len = n;
    }
    return v;
}

char *sst__pg_strdup(const PGresult *r, int row, int col) {
    size_t n;
    const char *v = sst__pg_bytes_at(r, row, col, &n);
    return v != NULL ? sst__strndup(v, n) : NULL;
}
