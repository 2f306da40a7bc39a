/* SPDX-License-Identifier: MIT */
/*
 * The busy-thread lease of the SQLite saver: a row (thread, owner, pid,
 * expires). It only gives a fast, friendly "thread is busy" error; it never
 * guards data. Commits are fenced (sqlite_records.c): a checkpoint is stored
 * only after the thread's latest one, so a wrongly taken lease costs the
 * loser an error, never a lost update.
 *
 * The owner is "host boot-id pid-namespace pid start-time" (common/owner.c,
 * shared with the run queue's claims). A holder in the same host, boot and
 * PID namespace is judged alive by its pid and start time (a dead one,
 * killed with -9, is taken over at once). A holder
 * elsewhere (another container or machine sharing the file) cannot be
 * probed: its lease stands until it expires. Commits made under a lease
 * renew it once a third of its time has passed.
 */
#include <stdio.h>
#include <string.h>

#include "sqlite_int.h"

/* This process's owner string and pid (common/owner.c). */
typedef struct identity {
    pid_t pid;
    char owner[SST__OWNER_MAX];
} identity;

static void self_identity(identity *out) {
    sst__owner_self(out->owner, &out->pid);
}

/* True when a lease held by @p owner can be taken over now. */
static bool holder_gone(const char *owner, int64_t expires) {
    if (!sst__owner_local(owner)) {
        return (int64_t)sst__now_ms() >= expires; /* cannot be probed: wait for expiry */
    }
    return sst__owner_gone(owner);
}

/* A lease record for @p thread, made before the row is taken (nothing to undo after). */
static held_lease *lease_new(const char *thread) {
    held_lease *l = sst__calloc(1, sizeof *l);
    if (l == NULL || (l->thread = sst__strndup(thread, strlen(thread))) == NULL) {
        sst__free(l);
        return NULL;
    }
    return l;
}

static void remember(sqlite_saver *s, held_lease *l) {
    l->renew_at = sst__now_ms() + s->lease_ms / 3;
    l->next = s->leases;
    s->leases = l;
}

/* Takes the row when free or when its holder is gone; inside the transaction. */
static sst_code take_row(sqlite_saver *s, const identity *me, const char *thread, sst_error *err) {
    int64_t expires = (int64_t)(sst__now_ms() + s->lease_ms);
    sqlite3_stmt *st = sst__sq_stmt(s, S_LOCK);
    sst__sq_bind_text(st, 1, thread);
    sst__sq_bind_text(st, 2, me->owner);
    sqlite3_bind_int64(st, 3, me->pid);
    sqlite3_bind_int64(st, 4, expires);
    if (!sst__sq_step_done(s, st, "locking a thread", err)) {
        return sst__code(err);
    }
    if (sqlite3_changes(s->db) > 0) {
        return SST_OK;
    }
    st = sst__sq_stmt(s, S_LOCK_OWNER);
    sst__sq_bind_text(st, 1, thread);
    char owner[SST__OWNER_MAX] = "";
    int64_t pid = 0, until = 0;
    if (sqlite3_step(st) == SQLITE_ROW) {
        snprintf(owner, sizeof owner, "%s", (const char *)sqlite3_column_text(st, 0));
        pid = sqlite3_column_int64(st, 1);
        until = sqlite3_column_int64(st, 2);
    }
    sqlite3_reset(st);
    if (strcmp(owner, me->owner) == 0 || !holder_gone(owner, until)) {
        return sst__error(
            err, SST_EBUSY, "thread '%s' is busy with another invoke (process %lld%s)", thread,
            (long long)pid,
            sst__owner_local(owner) ? "" : " elsewhere: another host, boot or PID namespace");
    }
    st = sst__sq_stmt(s, S_LOCK_TAKE);
    sst__sq_bind_text(st, 1, me->owner);
    sqlite3_bind_int64(st, 2, me->pid);
    sqlite3_bind_int64(st, 3, expires);
    sst__sq_bind_text(st, 4, thread);
    sst__sq_bind_text(st, 5, owner);
    return sst__sq_step_done(s, st, "taking over a thread lock", err) ? SST_OK : sst__code(err);
}

static sst_code try_lock(sqlite_saver *s, const char *thread, sst_error *err) {
    identity me;
    self_identity(&me);
    held_lease *l = lease_new(thread);
    if (l == NULL) {
        return sst__enomem(err);
    }
    if (!sst__sq_begin(s, false, err)) {
        sst__free(l->thread);
        sst__free(l);
        return sst__code(err);
    }
    sst_code rc = take_row(s, &me, thread, err);
    bool ok = sst__sq_commit(s, false, rc == SST_OK, rc == SST_OK ? err : NULL);
    if (rc == SST_OK && ok) {
        remember(s, l);
        return SST_OK;
    }
    sst__free(l->thread);
    sst__free(l);
    return rc != SST_OK ? rc : sst__code(err);
}

/*
 * The lock taken and given back inside a put's own transaction (SST_PUT_TAKE_LOCK,
 * SST_PUT_GIVE_LOCK: one commit for the lock and the record, sqlite_records.c). The lease
 * is remembered (renewed by later commits) or forgotten only once that commit ended.
 */
sst_code sst__sq_lease_take(sqlite_saver *s, const char *thread, held_lease **out, sst_error *err) {
    identity me;
    self_identity(&me);
    *out = NULL;
    held_lease *l = lease_new(thread);
    if (l == NULL) {
        return sst__enomem(err);
    }
    sst_code rc = take_row(s, &me, thread, err);
    if (rc != SST_OK) {
        sst__free(l->thread);
        sst__free(l);
        return rc;
    }
    *out = l;
    return SST_OK;
}

void sst__sq_lease_keep(sqlite_saver *s, held_lease *l, bool committed) {
    if (l == NULL) {
        return;
    }
    if (committed) {
        remember(s, l);
        return;
    }
    sst__free(l->thread);
    sst__free(l);
}

bool sst__sq_lease_give(sqlite_saver *s, const char *thread, sst_error *err) {
    identity me;
    self_identity(&me);
    sqlite3_stmt *st = sst__sq_stmt(s, S_UNLOCK);
    sst__sq_bind_text(st, 1, thread);
    sst__sq_bind_text(st, 2, me.owner);
    return sst__sq_step_done(s, st, "giving a thread lock back", err);
}

sst_code sst__sq_lock(void *self, const char *thread, bool wait, sst_error *err) {
    sqlite_saver *s = self;
    for (uint64_t pause = 1;; pause = pause < 50 ? pause * 2 : 50) {
        pthread_mutex_lock(s->mu);
        sst_code rc = try_lock(s, thread, err);
        pthread_mutex_unlock(s->mu);
        if (rc != SST_EBUSY || !wait) {
            return rc;
        }
        sst__sleep_ms(pause);
    }
}

bool sst__sq_renew_lease(sqlite_saver *s, const char *thread, sst_error *err) {
    uint64_t now = 0;
    for (held_lease *l = s->leases; l != NULL; l = l->next) {
        if (strcmp(l->thread, thread) != 0) {
            continue;
        }
        now = now != 0 ? now : sst__now_ms();
        if (now < l->renew_at) {
            return true;
        }
        identity me;
        self_identity(&me);
        sqlite3_stmt *st = sst__sq_stmt(s, S_LOCK_RENEW);
        sqlite3_bind_int64(st, 1, (int64_t)(now + s->lease_ms));
        sst__sq_bind_text(st, 2, thread);
        sst__sq_bind_text(st, 3, me.owner);
        l->renew_at = now + s->lease_ms / 3;
        return sst__sq_step_done(s, st, "renewing a thread lease", err);
    }
    return true; /* no lease held here (e.g. update_state paths): nothing to renew */
}

void sst__sq_lease_forget(sqlite_saver *s, const char *thread) {
    for (held_lease **p = &s->leases; *p != NULL; p = &(*p)->next) {
        if (strcmp((*p)->thread, thread) == 0) {
            held_lease *l = *p;
            *p = l->next;
            sst__free(l->thread);
            sst__free(l);
            return;
        }
    }
}

void sst__sq_unlock(void *self, const char *thread) {
    sqlite_saver *s = self;
    identity me;
    self_identity(&me);
    pthread_mutex_lock(s->mu);
    sst__sq_lease_forget(s, thread);
    sqlite3_stmt *st = sst__sq_stmt(s, S_UNLOCK);
    sst__sq_bind_text(st, 1, thread);
    sst__sq_bind_text(st, 2, me.owner);
    if (sqlite3_step(st) != SQLITE_DONE) {
        /* Best effort: a lease left behind is taken over once its holder is gone. */
    }
    sqlite3_reset(st);
    pthread_mutex_unlock(s->mu);
}

void sst__sq_leases_free(sqlite_saver *s) {
    while (s->leases != NULL) {
        held_lease *l = s->leases;
        s->leases = l->next;
        sst__free(l->thread);
        sst__free(l);
    }
}
