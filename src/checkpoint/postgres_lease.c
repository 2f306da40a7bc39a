/* SPDX-License-Identifier: MIT */
/*
 * The busy-thread lease of the PostgreSQL saver, as sqlite_lease.c: a row
 * (thread, owner, pid, expires) in sst_checkpoint_locks. It gives a fast,
 * friendly "thread is busy" error, and it fences the holder: every put made
 * while holding it checks, in the put's transaction and under a share lock
 * on the row, that the row still names this saver (postgres_records.c). A
 * writer paused past its lease (SIGSTOP, a stall, a partition) whose lease
 * was taken over then gets SST_ECONFLICT and writes nothing, while the new
 * holder's takeover waits for any put that checked first.
 *
 * The owner is this process's identity (common/owner.c) followed by the
 * saver's token, so two savers of one process hold leases apart, like two
 * processes. The expiry is on the server's clock (PGS_NOW_MS): processes on
 * machines whose clocks differ agree on it. A free row or an expired one is
 * taken in one statement; a holder in the same host, boot and PID namespace
 * whose process is gone (killed with -9) is taken over at once; any other
 * holder keeps the lease until it expires. Commits made under a lease renew
 * it once a third of its time has passed (in the put's transaction).
 */
#include <stdio.h>
#include <string.h>

#include "postgres_int.h"

/* Takes the row when it is free or expired; returns 1 when taken. */
static const char k_take_sql[] =
    "INSERT INTO sst_checkpoint_locks AS l(thread, owner, pid, expires)"
    " VALUES($1::text, $2::text, $3::bigint, " PGS_NOW_MS " + $4::bigint)"
    " ON CONFLICT (thread) DO UPDATE SET owner = excluded.owner, pid = excluded.pid,"
    " expires = excluded.expires WHERE l.expires <= " PGS_NOW_MS " RETURNING 1";

/* The holder of a row the statement above found live (and locked). */
static const char k_holder_sql[] =
    "SELECT owner, pid FROM sst_checkpoint_locks WHERE thread = $1::text";

/* Takes over from a holder found gone. */
static const char k_takeover_sql[] =
    "UPDATE sst_checkpoint_locks SET owner = $2::text, pid = $3::bigint,"
    " expires = " PGS_NOW_MS " + $4::bigint WHERE thread = $1::text AND owner = $5::text"
    " RETURNING 1";

static const char k_unlock_sql[] =
    "DELETE FROM sst_checkpoint_locks WHERE thread = $1::text AND owner = $2::text";

void sst__pgs_owner(const pg_saver *s, char out[SST__OWNER_MAX]) {
    char id[SST__OWNER_MAX];
    sst__owner_self(id, NULL);
    snprintf(out, SST__OWNER_MAX, "%.*s %s", (int)(SST__OWNER_MAX - sizeof s->token - 2), id,
             s->token);
}

typedef struct lock_job {
    pg_saver *s;
    const char *thread;
    char owner[SST__OWNER_MAX];
    pid_t pid;
} lock_job;

/* Runs a statement of the lease with ($1 thread, $2 owner, $3 pid, $4 lease ms[, $5 old
 * owner]); *taken when it returned a row. */
static sst_code lease_stmt(sst__pg_conn *c, lock_job *j, const char *name, const char *sql,
                           const char *old, bool *taken, sst_error *err) {
    sst__pg_params p;
    sst__pg_params_init(&p);
    sst__pg_text(&p, j->thread);
    sst__pg_text(&p, j->owner);
    sst__pg_i64(&p, j->pid);
    sst__pg_i64(&p, j->s->lease_ms);
    if (old != NULL) {
        sst__pg_text(&p, old);
    }
    PGresult *r = sst__pg_exec(c, name, sql, &p, "checkpoint store: locking a thread", err);
    if (r == NULL) {
        return sst__code(err);
    }
    *taken = PQntuples(r) > 0;
    PQclear(r);
    return SST_OK;
}

static sst_code lock_tx(sst__pg_conn *c, void *user, sst_error *err) {
    lock_job *j = user;
    bool taken = false;
    sst_code rc = lease_stmt(c, j, "sst_cp_lock", k_take_sql, NULL, &taken, err);
    if (rc != SST_OK || taken) {
        return rc;
    }
    /* Live: the INSERT locked the row (ON CONFLICT), so its holder stays put until we end. */
    sst__pg_params p;
    sst__pg_params_init(&p);
    sst__pg_text(&p, j->thread);
    PGresult *r = sst__pg_exec(c, "sst_cp_lock_holder", k_holder_sql, &p,
                               "checkpoint store: reading a thread's lock", err);
    if (r == NULL) {
        return sst__code(err);
    }
    char owner[SST__OWNER_MAX] = "";
    int64_t pid = 0;
    if (PQntuples(r) > 0) {
        snprintf(owner, sizeof owner, "%s", PQgetvalue(r, 0, 0));
        pid = sst__pg_int(r, 0, 1);
    }
    PQclear(r);
    if (strcmp(owner, j->owner) == 0) {
        /* This saver's row, though it holds no lease on the thread (try_lock checked its
         * list under lock_mu): the earlier attempt's COMMIT applied, or an unlock's DELETE
         * was lost with the server. The row is ours to take again. */
        return lease_stmt(c, j, "sst_cp_lock_takeover", k_takeover_sql, owner, &taken, err);
    }
    if (owner[0] != '\0' && strcmp(owner, j->owner) != 0 && sst__owner_gone(owner)) {
        rc = lease_stmt(c, j, "sst_cp_lock_takeover", k_takeover_sql, owner, &taken, err);
        if (rc != SST_OK || taken) {
            return rc;
        }
    }
    return sst__error(err, SST_EBUSY, "thread '%s' is busy with another invoke (process %lld%s)",
                      j->thread, (long long)pid,
                      strcmp(owner, j->owner) == 0 ? ", through this checkpointer"
                      : sst__owner_local(owner)
                          ? ""
                          : " elsewhere: another host, boot or PID namespace");
}

/* A lease record for @p thread, made before the row is taken (nothing to undo after). */
static pgs_lease *lease_new(const char *thread) {
    pgs_lease *l = sst__calloc(1, sizeof *l);
    if (l == NULL || (l->thread = sst__strndup(thread, strlen(thread))) == NULL) {
        sst__free(l);
        return NULL;
    }
    return l;
}

/* Whether this saver's list has a lease on @p thread. */
static bool held_here(pg_saver *s, const char *thread) {
    bool held = false;
    pthread_mutex_lock(&s->mu);
    for (pgs_lease *l = s->leases; l != NULL && !held; l = l->next) {
        held = strcmp(l->thread, thread) == 0;
    }
    pthread_mutex_unlock(&s->mu);
    return held;
}

static sst_code try_lock(pg_saver *s, const char *thread, sst_error *err) {
    pgs_lease *l = lease_new(thread);
    if (l == NULL) {
        return sst__enomem(err);
    }
    lock_job j = {.s = s, .thread = thread};
    sst__owner_self(j.owner, &j.pid);
    sst__pgs_owner(s, j.owner);
    pthread_mutex_lock(&s->lock_mu);
    sst_code rc = SST_OK;
    if (held_here(s, thread)) {
        rc = sst__error(err, SST_EBUSY,
                        "thread '%s' is busy with another invoke (process %lld, through this "
                        "checkpointer)",
                        thread, (long long)j.pid);
    } else {
        rc = sst__pg_tx(s->pg, true, lock_tx, &j, err);
    }
    if (rc != SST_OK) {
        pthread_mutex_unlock(&s->lock_mu);
        sst__free(l->thread);
        sst__free(l);
        return rc;
    }
    pthread_mutex_lock(&s->mu);
    l->renew_at = sst__now_ms() + (uint64_t)s->lease_ms / 3;
    l->next = s->leases;
    s->leases = l;
    pthread_mutex_unlock(&s->mu);
    pthread_mutex_unlock(&s->lock_mu);
    return SST_OK;
}

sst_code sst__pgs_lock(void *self, const char *thread, bool wait, sst_error *err) {
    pg_saver *s = self;
    for (uint64_t pause = 5;; pause = pause < 100 ? pause * 2 : 100) {
        sst_code rc = try_lock(s, thread, err);
        if (rc != SST_EBUSY || !wait) {
            return rc;
        }
        sst__sleep_ms(pause);
    }
}

bool sst__pgs_renew_due(pg_saver *s, const char *thread, bool *held) {
    bool due = false;
    *held = false;
    pthread_mutex_lock(&s->mu);
    for (pgs_lease *l = s->leases; l != NULL; l = l->next) {
        if (strcmp(l->thread, thread) == 0) {
            *held = true;
            due = sst__now_ms() >= l->renew_at;
            break;
        }
    }
    pthread_mutex_unlock(&s->mu);
    return due;
}

void sst__pgs_renewed(pg_saver *s, const char *thread) {
    pthread_mutex_lock(&s->mu);
    for (pgs_lease *l = s->leases; l != NULL; l = l->next) {
        if (strcmp(l->thread, thread) == 0) {
            l->renew_at = sst__now_ms() + (uint64_t)s->lease_ms / 3;
            break;
        }
    }
    pthread_mutex_unlock(&s->mu);
}

typedef struct unlock_job {
    const char *thread;
    char owner[SST__OWNER_MAX];
} unlock_job;

static sst_code unlock_tx(sst__pg_conn *c, void *user, sst_error *err) {
    unlock_job *j = user;
    sst__pg_params p;
    sst__pg_params_init(&p);
    sst__pg_text(&p, j->thread);
    sst__pg_text(&p, j->owner);
    return sst__pg_run(c, "sst_cp_unlock", k_unlock_sql, &p, "checkpoint store: unlocking a thread",
                       err);
}

void sst__pgs_unlock(void *self, const char *thread) {
    pg_saver *s = self;
    pthread_mutex_lock(&s->lock_mu);
    pthread_mutex_lock(&s->mu);
    for (pgs_lease **p = &s->leases; *p != NULL; p = &(*p)->next) {
        if (strcmp((*p)->thread, thread) == 0) {
            pgs_lease *l = *p;
            *p = l->next;
            sst__free(l->thread);
            sst__free(l);
            break;
        }
    }
    pthread_mutex_unlock(&s->mu);
    unlock_job j = {.thread = thread};
    sst__pgs_owner(s, j.owner);
    /* Best effort: a lease left behind expires, is taken over once this process is gone,
     * or is taken again by this saver's next lock of the thread. */
    (void)sst__pg_tx(s->pg, true, unlock_tx, &j, NULL);
    pthread_mutex_unlock(&s->lock_mu);
}

void sst__pgs_leases_free(pg_saver *s) {
    while (s->leases != NULL) {
        pgs_lease *l = s->leases;
        s->leases = l->next;
        sst__free(l->thread);
        sst__free(l);
    }
}
