/* SPDX-License-Identifier: MIT */
/*
 * Group commit of the SQLite saver (issue 37): the checkpoints, pending
 * writes and thread metadata of every run in flight on one saver share a
 * commit.
 *
 * A writer hands its transaction over as a unit (sq_unit) and waits. When no
 * group is being committed, the writer leads at once: it takes every unit
 * queued so far (its own at least), and commits them in one transaction, each
 * in a savepoint of its own (a unit that fails is rolled back alone). Units
 * that arrive meanwhile queue up; when the leader is done, one of their
 * writers leads the next group. So one writer alone commits at once, as
 * before, and many in flight share one COMMIT: its WAL frames (the pages the
 * runs' rows share are written once per group) and, when the connection
 * flushes, its fsync. A writer returns when the commit that holds its unit has
 * ended: a `sync` run still has its checkpoint committed before its next
 * superstep starts.
 *
 * Another backend's transaction on the connection may join as a unit too
 * (sst__sq_group_call: the server's enqueue and finish). A group of several
 * units is therefore a batch of the connection (sst_sqlite_db_begin), so the
 * queue's writes inside such a call are savepoints of it; the leader wraps the
 * call in a savepoint of its own, rolled back when the call fails.
 *
 * A group of one unit is written as a lone transaction (no savepoint). The
 * saver's mutex (the connection's) is held by the leader from BEGIN to COMMIT,
 * as any writer of the connection holds it; the queue's lock (gmu) is never
 * held across SQL. A writer inside a batch of the connection (it holds the
 * connection's mutex, sst_sqlite_db_begin) or inside one of this saver's
 * reader callbacks (which hold it too) writes alone, at once: a leader on
 * another thread would wait for that mutex while the writer waited for the
 * leader.
 */
#include <pthread.h>
#include <stdio.h>

#include "sqlite_int.h"

void sst__sq_group_init(sqlite_saver *s) {
    pthread_mutex_init(&s->gmu, NULL);
    pthread_cond_init(&s->gcv, NULL);
}

void sst__sq_group_destroy(sqlite_saver *s) {
    pthread_cond_destroy(&s->gcv);
    pthread_mutex_destroy(&s->gmu);
}

bool sst__sq_group_bypass(sqlite_saver *s) {
    return sst__sqlite_db_batch_mine(s->conn) ||
           atomic_load(&s->cb_owner) == (unsigned long)pthread_self();
}

/* Marks every unit from @p u on failed with @p code and @p what (those not failed yet). */
static void fail_all(sq_unit *u, sq_unit *end, sqlite_saver *s, sst_code code, const char *what) {
    for (; u != end; u = u->next) {
        if (u->rc == SST_OK) {
            u->rc = sst__error(&u->err, code, "checkpoint store '%s': %s: %s", s->path, what,
                               sqlite3_errmsg(s->db));
        }
    }
}

static bool step_tx(sqlite_saver *s, int which) {
    sqlite3_stmt *st = s->st[which];
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    return rc == SQLITE_OK || rc == SQLITE_DONE;
}

/* Runs unit @p u inside the group's transaction: the saver's own units in a savepoint of
 * their begin (in_group); another's (a call) in one the leader makes around it, its
 * backends' writes then being savepoints of the connection's batch. */
static void run_in_group(sqlite_saver *s, sq_unit *u) {
    if (!u->call) {
        s->in_group = true;
        u->rc = u->run(s, u->arg, &u->err);
        s->in_group = false;
        return;
    }
    if (!step_tx(s, S_GROUP_SP)) {
        u->rc = sst__sq_db_error(s, &u->err, "beginning a transaction");
        return;
    }
    u->rc = u->run(s, u->arg, &u->err);
    if (u->rc == SST_OK && step_tx(s, S_GROUP_RELEASE)) {
        return;
    }
    if (u->rc == SST_OK) {
        u->rc = sst__sq_db_error(s, &u->err, "committing");
    }
    if (sqlite3_get_autocommit(s->db) == 0) {
        step_tx(s, S_GROUP_UNDO);
        step_tx(s, S_GROUP_RELEASE);
    }
}

/* Writes and commits the units of @p list (under mu), as one batch of the connection
 * (sst_sqlite_db_begin): the queue's and the store's writes inside a call are then
 * savepoints of it, as in any batch. */
static void commit_group(sqlite_saver *s, sq_unit *list) {
    if (list->next == NULL) { /* alone: its own transaction, as without a group */
        list->rc = list->run(s, list->arg, &list->err);
        if (list->finish != NULL) {
            list->finish(s, list->arg, list->rc == SST_OK);
        }
        return;
    }
    sq_unit *first = list; /* the first unit of the open transaction */
    sst_error e = {0};
    bool open = sst_sqlite_db_begin(s->conn, &e) == SST_OK;
    if (!open) {
        fail_all(list, NULL, s, e.code, "beginning a group commit");
    }
    for (sq_unit *u = list; open && u != NULL; u = u->next) {
        run_in_group(s, u);
        if (sqlite3_get_autocommit(s->db) != 0) {
            /* SQLite rolled the whole transaction back (an I/O error, a full disk):
             * every unit in it so far is lost; the rest go in a new one. */
            fail_all(first, u->next, s, SST_EIO, "the group's transaction was rolled back");
            (void)sst_sqlite_db_commit(s->conn, false, NULL);
            first = u->next;
            open = first == NULL || sst_sqlite_db_begin(s->conn, &e) == SST_OK;
            if (!open) {
                fail_all(first, NULL, s, SST_EIO, "beginning a group commit");
            }
        }
    }
    if (open && first != NULL && sst_sqlite_db_commit(s->conn, true, &e) != SST_OK) {
        fail_all(first, NULL, s, e.code, "committing a group");
    }
    for (sq_unit *u = list; u != NULL; u = u->next) {
        if (u->finish != NULL) {
            u->finish(s, u->arg, u->rc == SST_OK);
        }
    }
}

typedef struct call_job {
    sst_code (*fn)(void *arg, sst_error *err);
    void *arg;
} call_job;

static sst_code call_run(sqlite_saver *s, void *arg, sst_error *err) {
    (void)s;
    call_job *j = arg;
    return j->fn(j->arg, err);
}

bool sst__sq_is_saver(const sst_checkpointer *cp) {
    return cp != NULL && cp->ops.put == sst__sq_put;
}

sst_code sst__sq_group_call(sst_checkpointer *cp, sst_code (*fn)(void *arg, sst_error *err),
                            void *arg, sst_error *err) {
    sqlite_saver *s = sst_checkpointer_self(cp);
    call_job j = {fn, arg};
    sq_unit u = {.run = call_run, .arg = &j, .call = true};
    if (sst__sq_group_bypass(s)) {
        return fn(arg, err);
    }
    return sst__sq_group_run(s, &u, err);
}

sst_code sst__sq_group_run(sqlite_saver *s, sq_unit *u, sst_error *err) {
    u->next = NULL;
    u->rc = SST_OK;
    u->done = false;
    sst_error_clear(&u->err);
    pthread_mutex_lock(&s->gmu);
    if (s->gtail != NULL) {
        s->gtail->next = u;
    } else {
        s->ghead = u;
    }
    s->gtail = u;
    while (!u->done) {
        if (s->leading) {
            pthread_cond_wait(&s->gcv, &s->gmu);
            continue;
        }
        /* Lead: take every unit queued so far (this one among them). */
        sq_unit *list = s->ghead;
        s->ghead = s->gtail = NULL;
        s->leading = true;
        pthread_mutex_unlock(&s->gmu);
        pthread_mutex_lock(s->mu);
        commit_group(s, list);
        pthread_mutex_unlock(s->mu);
        pthread_mutex_lock(&s->gmu);
        s->groups++;
        while (list != NULL) { /* its writer may return (and drop it) once done is set */
            sq_unit *next = list->next;
            s->units++;
            list->done = true;
            list = next;
        }
        s->leading = false;
        pthread_cond_broadcast(&s->gcv);
    }
    pthread_mutex_unlock(&s->gmu);
    if (u->rc != SST_OK && err != NULL) {
        *err = u->err;
    }
    return u->rc;
}

sst_code sst__sq_write_unit(sqlite_saver *s, sq_unit *u, bool alone, sst_error *err) {
    if (!alone && !sst__sq_group_bypass(s)) {
        return sst__sq_group_run(s, u, err);
    }
    pthread_mutex_lock(s->mu);
    sst_code rc = u->run(s, u->arg, err);
    if (u->finish != NULL) {
        u->finish(s, u->arg, rc == SST_OK);
    }
    pthread_mutex_unlock(s->mu);
    return rc;
}
