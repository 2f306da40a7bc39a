/* SPDX-License-Identifier: MIT */
/*
 * The leases of the SQLite run queue: claim, renew, finish and release.
 *
 * A claim is one IMMEDIATE transaction: it finds the oldest runnable run
 * (the oldest pending run whose run_after has come, the oldest running run
 * whose lease expired, and the oldest of each local holder whose process is
 * gone, each only when its thread is free; the oldest of them wins) and
 * takes it with a fresh random token. Renew, finish and release are single UPDATEs whose WHERE
 * clause holds the token, so the check and the write are one atomic step: a worker that lost its
 * lease changes nothing and learns it with SST_ECONFLICT.
 */
#include <stdio.h>
#include <string.h>

#include "sqlite_int.h"

/* now + lease_ms without overflowing. */
static int64_t expiry(int64_t now, int64_t lease_ms) {
    return now > 0 && lease_ms > INT64_MAX - now ? INT64_MAX : now + lease_ms;
}

/* The best candidate so far: the oldest. */
typedef struct candidate {
    bool found;
    int64_t seq;
} candidate;

/* Offers the first row of claim statement @p st (bound by the caller) as a candidate (a
 * NULL seq, min() over no rows: none). */
static sst_code offer(sqlite_queue *s, sqlite3_stmt *st, candidate *best, sst_error *err) {
    int step = sqlite3_step(st);
    if (step == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL) {
        int64_t seq = sqlite3_column_int64(st, 0);
        if (!best->found || seq < best->seq) {
            best->found = true;
            best->seq = seq;
        }
    }
    sqlite3_reset(st);
    return step == SQLITE_ROW || step == SQLITE_DONE
               ? SST_OK
               : sst__qs_error(s, err, "looking for a run to claim");
}

/*
 * Offers the oldest claimable run of each holder of this host whose process
 * is gone. The holders are visited once each, in a skip-scan of
 * sst_runs_owner over the owners that start with this host's place, so the
 * cost is the number of local holders (a server's workers), not of running
 * runs; holders elsewhere cannot be probed and are not visited.
 */
static sst_code offer_gone(sqlite_queue *s, int64_t now, candidate *best, sst_error *err) {
    char place[SST__OWNER_MAX], low[SST__OWNER_MAX + 1], high[SST__OWNER_MAX + 1];
    sst__owner_place(place);
    snprintf(low, sizeof low, "%s ", place);
    snprintf(high, sizeof high, "%s!", place); /* '!' follows ' ': past every "PLACE ..." */
    char *after = NULL;                        /* the last holder visited (owned) */
    sst_code rc = SST_OK;
    for (;;) {
        sqlite3_stmt *st = sst__qs_stmt(s, QS_LOCAL_OWNER);
        sst__qs_bind_text(st, 1, after != NULL ? after : low);
        sst__qs_bind_text(st, 2, high);
        int step = sqlite3_step(st);
        const char *owner = step == SQLITE_ROW ? (const char *)sqlite3_column_text(st, 0) : NULL;
        char *next = owner != NULL ? sst__strndup(owner, strlen(owner)) : NULL;
        sqlite3_reset(st);
        if (step != SQLITE_ROW) {
            rc = step == SQLITE_DONE ? SST_OK : sst__qs_error(s, err, "looking for holders");
            break;
        }
        sst__free(after);
        if ((after = next) == NULL) {
            rc = sst__enomem(err);
            break;
        }
        if (sst__owner_gone(after)) {
            st = sst__qs_stmt(s, QS_CLAIM_OWNER);
            sqlite3_bind_int64(st, 1, now);
            sst__qs_bind_text(st, 2, after);
            if ((rc = offer(s, st, best, err)) != SST_OK) {
                break;
            }
        }
    }
    sst__free(after);
    return rc;
}

/* The oldest runnable run (inside the claim's transaction). */
static sst_code pick(sqlite_queue *s, int64_t now, candidate *best, sst_error *err) {
    sqlite3_stmt *st = sst__qs_stmt(s, QS_CLAIM_PENDING);
    sqlite3_bind_int64(st, 1, now);
    sst_code rc = offer(s, st, best, err);
    if (rc == SST_OK) {
        st = sst__qs_stmt(s, QS_CLAIM_EXPIRED);
        sqlite3_bind_int64(st, 1, now);
        rc = offer(s, st, best, err);
    }
    return rc == SST_OK ? offer_gone(s, now, best, err) : rc;
}

/* Takes run @p seq for @p owner and copies it into @p row (inside the transaction). */
static sst_code take(sqlite_queue *s, int64_t seq, const char *owner, int64_t now, int64_t lease_ms,
                     uint64_t token, queue_row *row, sst_error *err) {
    sqlite3_stmt *st = sst__qs_stmt(s, QS_CLAIM_SET);
    sqlite3_bind_int64(st, 1, seq);
    sst__qs_bind_text(st, 2, owner);
    sqlite3_bind_int64(st, 3, expiry(now, lease_ms));
    sqlite3_bind_int64(st, 4, (int64_t)token);
    sqlite3_bind_int64(st, 5, now);
    if (!sst__qs_done(s, st, "claiming a run", err)) {
        return sst__code(err);
    }
    st = sst__qs_stmt(s, QS_GET_SEQ);
    sqlite3_bind_int64(st, 1, seq);
    int step = sqlite3_step(st);
    sst_code rc = step == SQLITE_ROW    ? sst__qs_row_read(s, st, row, err)
                  : step == SQLITE_DONE ? sst__error(err, SST_EIO,
                                                     "queue '%s': claimed run %lld "
                                                     "is gone",
                                                     s->path, (long long)seq)
                                        : sst__qs_error(s, err, "reading a claimed run");
    sqlite3_reset(st);
    return rc;
}

/* A fresh fencing token: 64 random bits, never 0 (0 means "no claim"). */
static sst_code new_token(uint64_t *token, sst_error *err) {
    *token = 0;
    while (*token == 0) {
        sst_code rc = sst__random_bytes(token, sizeof *token, err);
        if (rc != SST_OK) {
            return rc;
        }
    }
    return SST_OK;
}

sst_code sst__qs_claim(void *self, const char *owner, int64_t now, int64_t lease_ms,
                       sst_queued_run_fn each, void *user_data, sst_error *err) {
    SST__ERR_LOCAL(err);
    sqlite_queue *s = self;
    uint64_t token;
    sst_code rc = new_token(&token, err);
    if (rc != SST_OK) {
        return rc;
    }
    queue_row row = {0};
    candidate best = {0};
    pthread_mutex_lock(s->mu);
    if (sst__qs_begin(s, err)) {
        rc = pick(s, now, &best, err);
        rc = rc == SST_OK && best.found ? take(s, best.seq, owner, now, lease_ms, token, &row, err)
                                        : rc;
        if (!sst__qs_end(s, rc == SST_OK, rc == SST_OK ? err : NULL) && rc == SST_OK) {
            rc = sst__code(err);
            sst__qs_row_free(&row);
        }
    } else {
        rc = sst__code(err);
    }
    pthread_mutex_unlock(s->mu);
    if (rc == SST_OK && !best.found) {
        return sst__error(err, SST_ENOTFOUND, "queue '%s': no run is ready to claim", s->path);
    }
    /* After the commit, without the lock: should the stored JSON not parse (a damaged
     * row), the run stays claimed and comes back when this lease expires, attempt + 1. */
    if (rc == SST_OK) {
        rc = sst__qs_row_emit(s, &row, each, user_data, NULL, err);
    }
    sst__qs_row_free(&row);
    return rc;
}

/* ---- the holder's calls ---- */

/*
 * SST_ECONFLICT for @p what on @p run_id, whose token no longer holds it,
 * saying what became of the run (mu held).
 */
static sst_code lease_lost(sqlite_queue *s, const char *what, const char *run_id, sst_error *err) {
    sqlite3_stmt *st = sst__qs_stmt(s, QS_HOLDER);
    sst__qs_bind_text(st, 1, run_id);
    char now[200];
    if (sqlite3_step(st) != SQLITE_ROW) {
        snprintf(now, sizeof now, "it is no longer in the queue");
    } else {
        const char *status = (const char *)sqlite3_column_text(st, 0);
        const char *owner = (const char *)sqlite3_column_text(st, 2);
        if (status != NULL && strcmp(status, "running") == 0) {
            snprintf(now, sizeof now, "claimed again by '%.120s' (attempt %lld)",
                     owner != NULL ? owner : "?", (long long)sqlite3_column_int64(st, 1));
        } else {
            snprintf(now, sizeof now, "it is %s now", status != NULL ? status : "?");
        }
    }
    sqlite3_reset(st);
    return sst__error(err, SST_ECONFLICT, "queue '%s': %s run '%s': lease lost: %s", s->path, what,
                      run_id, now);
}

sst_code sst__qs_renew(void *self, const char *run_id, uint64_t token, int64_t now,
                       int64_t lease_ms, char **cancel, sst_error *err) {
    SST__ERR_LOCAL(err);
    sqlite_queue *s = self;
    char *action = NULL;
    pthread_mutex_lock(s->mu);
    sqlite3_stmt *st = sst__qs_stmt(s, QS_RENEW);
    sst__qs_bind_text(st, 1, run_id);
    sqlite3_bind_int64(st, 2, (int64_t)token);
    sqlite3_bind_int64(st, 3, expiry(now, lease_ms));
    sqlite3_bind_int64(st, 4, now);
    int step = sqlite3_step(st);
    bool held = step == SQLITE_ROW;
    const char *text = held ? (const char *)sqlite3_column_text(st, 0) : NULL;
    bool oom = text != NULL && (action = sst__strndup(text, strlen(text))) == NULL;
    while (step == SQLITE_ROW) {
        step = sqlite3_step(st); /* to the end: the change is made when the statement ends */
    }
    sst_code rc = step != SQLITE_DONE ? sst__qs_error(s, err, "renewing a lease") : SST_OK;
    sqlite3_reset(st);
    if (rc == SST_OK && !held) {
        rc = lease_lost(s, "renew", run_id, err);
    }
    pthread_mutex_unlock(s->mu);
    if (rc == SST_OK && oom) {
        rc = sst__enomem(err); /* the lease was renewed; the caller learns nothing of a cancel */
    }
    if (rc == SST_OK && cancel != NULL) {
        *cancel = action;
        action = NULL;
    }
    sst__free(action);
    return rc;
}

/* Runs an UPDATE guarded by the token (bound by the caller) and reports a lost lease. */
static sst_code guarded(sqlite_queue *s, sqlite3_stmt *st, const char *what, const char *run_id,
                        sst_error *err) {
    char doing[64];
    snprintf(doing, sizeof doing, "%s a run", what);
    sst_code rc = sst__qs_done(s, st, doing, err) ? SST_OK : sst__code(err);
    if (rc == SST_OK && sqlite3_changes(s->db) == 0) {
        rc = lease_lost(s, what, run_id, err);
    }
    return rc;
}

sst_code sst__qs_finish(void *self, const char *run_id, uint64_t token, sst_queue_status status,
                        int64_t now, sst_error *err) {
    SST__ERR_LOCAL(err);
    sqlite_queue *s = self;
    pthread_mutex_lock(s->mu);
    sqlite3_stmt *st = sst__qs_stmt(s, QS_FINISH);
    sst__qs_bind_text(st, 1, run_id);
    sqlite3_bind_int64(st, 2, (int64_t)token);
    sst__qs_bind_text(st, 3, sst_queue_status_name(status));
    sqlite3_bind_int64(st, 4, now);
    sst_code rc = guarded(s, st, "finish", run_id, err);
    pthread_mutex_unlock(s->mu);
    return rc;
}

sst_code sst__qs_release(void *self, const char *run_id, uint64_t token, int64_t now,
                         sst_error *err) {
    SST__ERR_LOCAL(err);
    sqlite_queue *s = self;
    pthread_mutex_lock(s->mu);
    sqlite3_stmt *st = sst__qs_stmt(s, QS_RELEASE);
    sst__qs_bind_text(st, 1, run_id);
    sqlite3_bind_int64(st, 2, (int64_t)token);
    sqlite3_bind_int64(st, 3, now);
    sst_code rc = guarded(s, st, "release", run_id, err);
    pthread_mutex_unlock(s->mu);
    return rc;
}
