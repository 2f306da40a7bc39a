/* SPDX-License-Identifier: MIT */
/*
 * sst_postgres_queue_wait: idle workers wait for a NOTIFY instead of polling
 * the queue.
 *
 * Enqueue, release, finish, cancel and remove notify the queue's channel
 * (pg_queue.channel) in their transaction; PostgreSQL delivers it to every
 * listener when that transaction commits. Each queue has one listening
 * connection of its own (sst__pg_connect_raw: a LISTEN ties up its session,
 * so it stays out of the pool), made at the first wait. The waiters of a
 * queue share it: one of them polls its socket (`polling`), the others sleep
 * on the condition variable, and whatever the poller hears wakes them all
 * (`wakes` counts wake-ups; a waiter returns when it moved). A waiter for others'
 * news only (sst__postgres_queue_wait_others) watches `wakes_others` instead, which
 * what this queue's own enqueues notify (their payload is its id) does not move.
 *
 * A notification sent while nobody listened was not heard, so making the
 * connection (the first wait, and the first after it was lost) counts as a
 * wake-up: the caller looks at the queue again, then waits.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "postgres_int.h"

static uint64_t mono_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Frees the notifications libpq has read; true when there was one (*other: one that
 * is not of an enqueue through @p s itself). */
static bool drain(const pg_queue *s, PGconn *conn, bool *other) {
    bool heard = false;
    PGnotify *n;
    while ((n = PQnotifies(conn)) != NULL) {
        heard = true;
        *other = *other || n->extra == NULL || strcmp(n->extra, s->id) != 0;
        PQfreemem(n);
    }
    return heard;
}

/* The server's notices on the listening connection (a shutdown's warning) are not ours to print. */
static void quiet(void *arg, const char *message) {
    SST_UNUSED(arg);
    SST_UNUSED(message);
}

/* Makes the listening connection. */
static sst_code connect_listen(pg_queue *s, sst_error *err) {
    PGconn *conn = sst__pg_connect_raw(s->pg, err);
    if (conn == NULL) {
        return sst__code(err);
    }
    PQsetNoticeProcessor(conn, quiet, NULL);
    char sql[64];
    snprintf(sql, sizeof sql, "LISTEN %s", s->channel); /* a plain identifier: no quoting */
    PGresult *r = PQexec(conn, sql);
    sst_code rc = SST_OK;
    if (PQresultStatus(r) != PGRES_COMMAND_OK) {
        const char *m = PQresultErrorMessage(r);
        char why[300];
        snprintf(why, sizeof why, "%s", m != NULL && m[0] != '\0' ? m : PQerrorMessage(conn));
        why[strcspn(why, "\n")] = '\0';
        rc = sst__error(err, SST_EUNAVAILABLE, "queue '%s': listening on %s: %s", sst__pq_name(s),
                        s->channel, why);
        PQfinish(conn);
    } else {
        s->listen = conn;
    }
    PQclear(r);
    return rc;
}

/*
 * One turn of the poller (the waiter that set `polling`; mu not held). Makes the
 * connection when there is none (*heard), else reads what came and waits on the
 * socket until a notification (*heard) or @p deadline (monotonic ms; a deadline
 * already past still looks once). A connection found lost is closed and counts as
 * heard: notifications may have been missed, and the next turn makes a new one.
 * *other: what was heard is not only notifications of this queue's own enqueues.
 */
static sst_code listen_turn(pg_queue *s, uint64_t deadline, bool *heard, bool *other,
                            sst_error *err) {
    *heard = *other = false;
    if (s->listen == NULL) {
        sst_code rc = connect_listen(s, err);
        *heard = *other = rc == SST_OK;
        return rc;
    }
    for (;;) {
        /* libpq's sockets are non-blocking: this reads what is there and returns. */
        if (!PQconsumeInput(s->listen) || PQstatus(s->listen) != CONNECTION_OK) {
            break;
        }
        if (drain(s, s->listen, other)) {
            *heard = true;
            return SST_OK;
        }
        uint64_t now = mono_ms();
        uint64_t left = deadline > now ? deadline - now : 0;
        struct pollfd pfd = {.fd = PQsocket(s->listen), .events = POLLIN};
        int n = pfd.fd >= 0 ? poll(&pfd, 1, left > INT_MAX ? INT_MAX : (int)left) : -1;
        if (n == 0 && mono_ms() >= deadline) {
            return SST_OK;
        }
        if (n < 0 && errno != EINTR) {
            break;
        }
    }
    PQfinish(s->listen);
    s->listen = NULL;
    *heard = *other = true;
    return SST_OK;
}

sst_code sst__pq_wait(pg_queue *s, int timeout_ms, bool others, sst_error *err) {
    uint64_t deadline = mono_ms() + (uint64_t)timeout_ms;
    struct timespec until = {.tv_sec = (time_t)(deadline / 1000),
                             .tv_nsec = (long)(deadline % 1000) * 1000000L};
    sst_code rc = SST_OK;
    pthread_mutex_lock(&s->mu);
    uint64_t *wakes = others ? &s->wakes_others : &s->wakes;
    uint64_t seen = *wakes;
    for (;;) {
        if (*wakes != seen) {
            break;
        }
        if (!s->polling) {
            s->polling = true;
            pthread_mutex_unlock(&s->mu);
            bool heard = false, other = false;
            rc = listen_turn(s, deadline, &heard, &other, err);
            pthread_mutex_lock(&s->mu);
            s->polling = false;
            s->wakes += heard ? 1 : 0;
            s->wakes_others += other ? 1 : 0;
            pthread_cond_broadcast(&s->cv); /* woken, or another waiter polls now */
            if (rc != SST_OK || *wakes != seen) {
                break;
            }
        }
        if (mono_ms() >= deadline) {
            rc = SST_ETIMEOUT;
            break;
        }
        if (s->polling) {
            pthread_cond_timedwait(&s->cv, &s->mu, &until);
        }
    }
    pthread_mutex_unlock(&s->mu);
    if (rc == SST_ETIMEOUT) {
        sst__error(err, SST_ETIMEOUT,
                   "queue '%s': nothing was enqueued, released or finished in %d ms",
                   sst__pq_name(s), timeout_ms);
    }
    return rc;
}

void sst__pq_listen_close(pg_queue *s) {
    PQfinish(s->listen); /* NULL is a no-op */
    s->listen = NULL;
}
