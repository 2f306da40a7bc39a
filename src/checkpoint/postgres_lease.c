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

/* After a take that found the row live (and locked it): the holder read, and taken over
 * when it is gone or this saver; else SST_EBUSY naming it. */
static sst_code take_busy(sst__pg_conn *c, lock_job *j, sst_error *err);

static sst_code lock_tx(sst__pg_conn *c, void *user, sst_error *err) {
    lock_job *j = user;
    bool taken = false;
    sst_code rc = lease_stmt(c, j, "sst_cp_lock", k_take_sql, NULL, &taken, err);
    if (rc != SST_OK || taken) {
        return rc;
    }
    return take_busy(c, j, err);
}

static sst_code take_busy(sst__pg_conn *c, lock_job *j, sst_error *err) {
    bool taken = false;
    sst_code rc;
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
         * list, where its entry stands for this call): the earlier attempt's COMMIT applied, or an
         * unlock's DELETE was lost with the server. The row is ours to take again. */
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
static pgs_lease *lease_new(const char *thread, int state) {
    pgs_lease *l = sst__calloc(1, sizeof *l);
    if (l == NULL || (l->thread = sst__strndup(thread, strlen(thread))) == NULL) {
        sst__free(l);
        return NULL;
    }
    l->state = state;
    return l;
}

/* This saver's entry for @p thread (under mu), or NULL. */
static pgs_lease **entry_of(pg_saver *s, const char *thread) {
    for (pgs_lease **p = &s->leases; *p != NULL; p = &(*p)->next) {
        if (strcmp((*p)->thread, thread) == 0) {
            return p;
        }
    }
    return NULL;
}

/* Takes @p l (under mu) out of the list and frees it; wakes who waits for its thread. */
static void entry_drop(pg_saver *s, pgs_lease *l) {
    for (pgs_lease **p = &s->leases; *p != NULL; p = &(*p)->next) {
        if (*p == l) {
            *p = l->next;
            break;
        }
    }
    sst__free(l->thread);
    sst__free(l);
    pthread_cond_broadcast(&s->cv);
}

static sst_code try_lock(pg_saver *s, const char *thread, sst_error *err) {
    pgs_lease *l = lease_new(thread, PGS_TAKING);
    if (l == NULL) {
        return sst__enomem(err);
    }
    lock_job j = {.s = s, .thread = thread};
    sst__owner_self(j.owner, &j.pid);
    sst__pgs_owner(s, j.owner);
    pthread_mutex_lock(&s->mu);
    pgs_lease **at;
    while ((at = entry_of(s, thread)) != NULL && (*at)->state == PGS_GIVING) {
        pthread_cond_wait(&s->cv, &s->mu); /* its row is being given back: then take it */
    }
    if (at != NULL) {
        pthread_mutex_unlock(&s->mu);
        sst__free(l->thread);
        sst__free(l);
        return sst__error(err, SST_EBUSY,
                          "thread '%s' is busy with another invoke (process %lld, through this "
                          "checkpointer)",
                          thread, (long long)j.pid);
    }
    l->next = s->leases;
    s->leases = l;
    pthread_mutex_unlock(&s->mu);
    /* The entry (PGS_TAKING) keeps this saver's other calls on the thread away. */
    sst_code rc = sst__pg_tx(s->pg, true, lock_tx, &j, err);
    pthread_mutex_lock(&s->mu);
    if (rc != SST_OK) {
        entry_drop(s, l);
    } else {
        l->state = PGS_HELD;
        l->renew_at = sst__now_ms() + (uint64_t)s->lease_ms / 3;
    }
    pthread_mutex_unlock(&s->mu);
    return rc;
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
    pgs_lease **at = entry_of(s, thread);
    if (at != NULL && (*at)->state == PGS_HELD) {
        *held = true;
        due = sst__now_ms() >= (*at)->renew_at;
    }
    pthread_mutex_unlock(&s->mu);
    return due;
}

void sst__pgs_renewed(pg_saver *s, const char *thread) {
    pthread_mutex_lock(&s->mu);
    pgs_lease **at = entry_of(s, thread);
    if (at != NULL) {
        (*at)->renew_at = sst__now_ms() + (uint64_t)s->lease_ms / 3;
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
    return sst__pg_run_last(c, "sst_cp_unlock", k_unlock_sql, &p,
                            "checkpoint store: unlocking a thread", err);
}

void sst__pgs_unlock(void *self, const char *thread) {
    pg_saver *s = self;
    sst__pgs_hold_settle(s, thread); /* an input checkpoint whose next put never came */
    pgs_lease *fresh = lease_new(thread, PGS_GIVING);
    pthread_mutex_lock(&s->mu);
    pgs_lease **at = entry_of(s, thread), *l = NULL;
    if (at != NULL && (*at)->state == PGS_HELD) {
        l = *at;
        l->state = PGS_GIVING;
    } else if (at == NULL && fresh != NULL) {
        /* Not in the list (a row left behind by a lost DELETE): delete it all the same. */
        l = fresh;
        l->next = s->leases;
        s->leases = l;
        fresh = NULL;
    }
    pthread_mutex_unlock(&s->mu);
    if (fresh != NULL) {
        sst__free(fresh->thread);
        sst__free(fresh);
    }
    if (l == NULL) {
        return; /* being taken or given back by another call: not this call's to give */
    }
    unlock_job j = {.thread = thread};
    sst__pgs_owner(s, j.owner);
    /* Best effort: a lease left behind expires, is taken over once this process is gone,
     * or is taken again by this saver's next lock of the thread. */
    (void)sst__pg_tx(s->pg, true, unlock_tx, &j, NULL);
    pthread_mutex_lock(&s->mu);
    entry_drop(s, l);
    pthread_mutex_unlock(&s->mu);
}

void sst__pgs_leases_free(pg_saver *s) {
    while (s->leases != NULL) {
        pgs_lease *l = s->leases;
        s->leases = l->next;
        sst__free(l->thread);
        sst__free(l);
    }
}

/* ---- the lease in a put's transaction (SST_PUT_TAKE_LOCK, SST_PUT_GIVE_LOCK) ---- */

sst_code sst__pgs_take_begin(pg_saver *s, const char *thread, sst_error *err) {
    pgs_lease *l = lease_new(thread, PGS_TAKING);
    if (l == NULL) {
        return sst__enomem(err);
    }
    pthread_mutex_lock(&s->mu);
    pgs_lease **at;
    while ((at = entry_of(s, thread)) != NULL && (*at)->state == PGS_GIVING) {
        pthread_cond_wait(&s->cv, &s->mu);
    }
    if (at != NULL) {
        pthread_mutex_unlock(&s->mu);
        sst__free(l->thread);
        sst__free(l);
        pid_t pid = 0;
        char id[SST__OWNER_MAX];
        sst__owner_self(id, &pid);
        return sst__error(err, SST_EBUSY,
                          "thread '%s' is busy with another invoke (process %lld, through this "
                          "checkpointer)",
                          thread, (long long)pid);
    }
    l->next = s->leases;
    s->leases = l;
    pthread_mutex_unlock(&s->mu);
    return SST_OK;
}

sst_code sst__pgs_take_busy(sst__pg_conn *c, pg_saver *s, const char *thread, sst_error *err) {
    lock_job j = {.s = s, .thread = thread};
    sst__owner_self(j.owner, &j.pid);
    sst__pgs_owner(s, j.owner);
    return take_busy(c, &j, err);
}

void sst__pgs_take_end(pg_saver *s, const char *thread, bool ok) {
    pthread_mutex_lock(&s->mu);
    pgs_lease **at = entry_of(s, thread);
    if (at != NULL && (*at)->state == PGS_TAKING) {
        if (ok) {
            (*at)->state = PGS_HELD;
            (*at)->renew_at = sst__now_ms() + (uint64_t)s->lease_ms / 3;
        } else {
            entry_drop(s, *at);
        }
    }
    pthread_mutex_unlock(&s->mu);
}

bool sst__pgs_give_begin(pg_saver *s, const char *thread) {
    pthread_mutex_lock(&s->mu);
    pgs_lease **at = entry_of(s, thread);
    bool held = at != NULL && (*at)->state == PGS_HELD;
    if (held) {
        (*at)->state = PGS_GIVING;
    }
    pthread_mutex_unlock(&s->mu);
    return held;
}

sst_code sst__pgs_give_tx(sst__pg_conn *c, pg_saver *s, const char *thread, sst_error *err) {
    unlock_job j = {.thread = thread};
    sst__pgs_owner(s, j.owner);
    return unlock_tx(c, &j, err);
}

void sst__pgs_give_end(pg_saver *s, const char *thread, bool ok) {
    pthread_mutex_lock(&s->mu);
    pgs_lease **at = entry_of(s, thread);
    if (at != NULL && (*at)->state == PGS_GIVING) {
        if (ok) {
            entry_drop(s, *at);
        } else {
            (*at)->state = PGS_HELD;
            pthread_cond_broadcast(&s->cv);
        }
    }
    pthread_mutex_unlock(&s->mu);
}
