/* SPDX-License-Identifier: MIT */
/*
 * The leases of the PostgreSQL run queue: claim, renew, finish and release.
 *
 * A claim is one short transaction (the row lock is not held while the run
 * runs: the lease is). It reads which holders of this host are gone (their
 * leases count as expired at once), picks the oldest runnable run whose
 * thread is free with FOR UPDATE SKIP LOCKED, taking its thread's advisory
 * lock on the way, and then takes it with an UPDATE that checks again, under
 * that lock, that the run is claimable and its thread free. The token comes
 * from a sequence, so it is unique across every process of the database.
 *
 * Renew, finish and release are single statements whose UPDATE holds the
 * token in its WHERE clause (run_id = $1 AND token = $2), so the check and
 * the write are one atomic step: a worker that lost its lease changes nothing
 * and learns it with SST_ECONFLICT. The same statement reads the run's row as
 * it was, to say what became of it.
 */
#include <stdio.h>
#include <string.h>

#include "postgres_int.h"

/*
 * Why a thread never has two live runs, and its runs are claimed in order.
 *
 * SKIP LOCKED alone does not give it: two claimers whose snapshots differ
 * may each find a different run of the thread runnable, and they lock
 * different rows, so neither waits for the other. Say two enqueues of one
 * idle thread commit out of seq order: a claimer whose snapshot does not
 * show the older run yet takes the newer one, while a claimer whose snapshot
 * shows both, but not that claim, takes the older one. So every claim of a
 * thread holds the thread's advisory lock, pg_try_advisory_xact_lock(hash of
 * the schema, hash of the thread id), from the pick to its COMMIT:
 *
 *  (a) The pick takes the lock of a candidate's thread only once the
 *      candidate passed every other test (the CASE orders the evaluation),
 *      and a claimer that finds the lock taken skips that thread, as SKIP
 *      LOCKED skips a row; it never waits.
 *  (b) The take is a second statement, so under READ COMMITTED its snapshot
 *      is taken after the lock was granted. A transaction's locks are let go
 *      after its commit became visible, so that snapshot holds every earlier
 *      claim of the thread, and the UPDATE checks there again that the run
 *      is claimable and that its thread has no older unfinished run and no
 *      other run holding a live lease. A claim that fails that check takes
 *      nothing and picks again.
 *  (c) Only claims make a run running (enqueue, release, finish, cancel and
 *      remove add pending runs or end running ones), and every claim of a
 *      thread is serialised by (a) and checked by (b): two live runs of one
 *      thread would need two claims of it to both pass (b), the later one
 *      seeing the earlier one's committed claim.
 *
 * The lock is keyed by hashes, so two threads may share one: that only makes
 * a claimer skip a thread for the milliseconds of another claim. The "if
 * idle" enqueue takes the same lock (postgres_ops.c).
 */

/* r's thread has no older unfinished run and no other run holding a live lease at NOW. */
#define THREAD_FREE(now, gone)                                                                     \
    "NOT EXISTS (SELECT 1 FROM sst_runs o WHERE o.thread_id = r.thread_id"                         \
    " AND o.status IN ('pending', 'running') AND o.seq < r.seq)"                                   \
    " AND NOT EXISTS (SELECT 1 FROM sst_runs o WHERE o.thread_id = r.thread_id"                    \
    " AND o.status = 'running' AND o.seq > r.seq AND o.lease_expires >= " now                      \
    " AND NOT o.owner = ANY(" gone "))"
/* r may be claimed at NOW: pending and due, or running with an expired lease or a gone holder. */
#define CLAIMABLE(now, gone)                                                                       \
    "((r.status = 'pending' AND r.run_after <= " now ") OR (r.status = 'running'"                  \
    " AND (r.lease_expires < " now " OR r.owner = ANY(" gone "))))"
#define THREAD_LOCK "pg_try_advisory_xact_lock(hashtext(current_schema()), hashtext(r.thread_id))"

/*
 * The holders of this host ($1 < owner < $2: "PLACE " .. "PLACE!"), each
 * once: a loose index scan of sst_runs_owner (one probe per holder, however
 * many runs each holds). Then one row with a NULL owner, made by the settings
 * of the claim's transaction, set here to save a round trip: the claim's
 * statements run with their generic plans (made once per connection; a custom
 * plan costs more to make than to run), and never JIT-compiled (a generic
 * estimate of them may pass jit_above_cost, and compiling takes tens of
 * milliseconds where running takes a fraction of one).
 */
/* The distinct holders LOW < owner < HIGH, as CTE o (a loose index scan; NULL ends it). */
#define OWNERS_CTE(low, high)                                                                      \
    "WITH RECURSIVE o(owner) AS ("                                                                 \
    " SELECT min(owner) FROM sst_runs WHERE status = 'running' AND owner > " low                   \
    " AND owner < " high " UNION ALL SELECT (SELECT min(r.owner) FROM sst_runs r"                  \
    " WHERE r.status = 'running' AND r.owner > o.owner AND r.owner < " high ")"                    \
    " FROM o WHERE o.owner IS NOT NULL)"
static const char k_owners[] =
    OWNERS_CTE("$1", "$2") " SELECT owner FROM o WHERE owner IS NOT NULL"
                           " UNION ALL SELECT NULL FROM (SELECT set_config('plan_cache_mode', "
                           "'force_generic_plan', true),"
                           " set_config('jit', 'off', true)) AS settings";

/* The pieces of k_pick's branches (the CASE tests the thread first: see (a)). */
#define PICK_FREE THREAD_FREE("$1", "$2")
#define PICK_THEN " THEN " THREAD_LOCK " ELSE false END"
#define PICK_LOCK " LIMIT 1 FOR UPDATE SKIP LOCKED"

/*
 * The oldest runnable run ($1 now, $2 the gone holders): the oldest pending
 * one whose run_after has come (walking sst_runs_status in enqueue order),
 * the oldest running one whose lease expired (sst_runs_lease) and the oldest
 * running one whose holder is gone (sst_runs_owner), each only when its
 * thread is free and then locked with its thread, and the oldest of the
 * three. The last two are sorted ("seq + 0" keeps the planner from walking
 * the whole table in seq order instead), so they lock the threads of all
 * their free candidates, not only the first: such runs are few, and those
 * locks end with this claim's transaction.
 */
static const char k_pick[] =
    "WITH p AS (SELECT r.seq, r.thread_id FROM sst_runs r WHERE r.status = 'pending'"
    " AND CASE WHEN r.run_after <= $1 AND " PICK_FREE PICK_THEN " ORDER BY r.seq" PICK_LOCK "),"
    " e AS (SELECT r.seq, r.thread_id FROM sst_runs r WHERE r.status = 'running'"
    " AND r.lease_expires < $1 AND CASE WHEN " PICK_FREE PICK_THEN " ORDER BY r.seq + 0" PICK_LOCK
    "),"
    " g AS (SELECT r.seq, r.thread_id FROM sst_runs r WHERE r.status = 'running'"
    " AND r.owner = ANY($2) AND CASE WHEN " PICK_FREE PICK_THEN " ORDER BY r.seq + 0" PICK_LOCK ")"
    " SELECT seq, thread_id FROM p UNION ALL SELECT seq, thread_id FROM e"
    " UNION ALL SELECT seq, thread_id FROM g ORDER BY 1 LIMIT 1";

/*
 * Whether a claim may find something ($1 now; $2, $3 the bounds of this host's holders as
 * in k_owners): one statement outside any transaction, for an idle worker to ask before
 * it opens a claim's (issue 37's profile: a claim that finds nothing cost about a
 * millisecond of PostgreSQL, in four exchanges). Its rows: one with a NULL owner holding
 * whether a pending run is due, or a running run's lease expired, with its thread free
 * (k_pick's tests without the gone holders, and without its locks), and one per holder
 * of this host (as k_owners), which the caller probes: a gone holder's runs are
 * claimable too. So it says "maybe" whenever the pick could find a run, and more often
 * (a row or thread another claim locks, a thread a gone holder keeps busy).
 */
#define PROBE_FREE THREAD_FREE("$1", "'{}'::text[]")
static const char k_probe[] = OWNERS_CTE(
    "$2",
    "$3") " SELECT NULL::text, (SELECT r.seq FROM sst_runs r WHERE r.status = 'pending'"
          " AND CASE WHEN r.run_after <= $1 THEN " PROBE_FREE " ELSE false END"
          " ORDER BY r.seq LIMIT 1) IS NOT NULL"
          " OR (SELECT r.seq FROM sst_runs r WHERE r.status = 'running' AND r.lease_expires < $1"
          " AND " PROBE_FREE " ORDER BY r.lease_expires LIMIT 1) IS NOT NULL"
          " UNION ALL SELECT owner, NULL FROM o WHERE owner IS NOT NULL";

/* Takes run ($1 thread, $2 seq) if it is still claimable and its thread free (see above). */
#define TAKE_CLAIMABLE CLAIMABLE("$5", "$6")
#define TAKE_FREE      THREAD_FREE("$5", "$6")
static const char k_take[] =
    "UPDATE sst_runs r SET status = 'running', owner = $3, lease_expires = $4,"
    " attempt = r.attempt + 1, token = nextval('sst_run_tokens'), updated_at = $5"
    " WHERE r.thread_id = $1 AND r.seq = $2 AND " TAKE_CLAIMABLE " AND " TAKE_FREE
    " RETURNING " PQ_RUN_COLS;

/* After a lost COMMIT: the run that claim took, if it was applied and still holds. */
static const char k_reclaim[] =
    "SELECT " PQ_RUN_COLS " FROM sst_runs WHERE status = 'running' AND owner = $1 AND token = $2";

/*
 * The holder's calls: one row with what was changed, and the run as it was
 * before (status, attempt, owner, done_token; NULL when there is none) to say
 * what became of it when the token no longer holds it.
 */
#define HOLDER                                                                                     \
    " h.status, h.attempt, h.owner, h.done_token FROM (SELECT 1) AS one"                           \
    " LEFT JOIN sst_runs h ON h.run_id = $1"
static const char k_renew[] =
    "WITH u AS (UPDATE sst_runs SET lease_expires = $3, updated_at = $4"
    " WHERE run_id = $1 AND token = $2 AND status = 'running' RETURNING cancel)"
    " SELECT (SELECT count(*) FROM u), (SELECT cancel FROM u)," HOLDER;
/*
 * Finish ($3 a final status) and release ($3 'pending'). A release wakes the waiters (its
 * run is pending again); a finish only when a pending run waits for its thread. Any other
 * pending run is pending because every worker was busy, and the worker finishing claims
 * again at once: a NOTIFY would wake an idle worker of every listening process to claim
 * nothing (and NOTIFYs serialize their transactions' commits in PostgreSQL).
 */
static const char k_settle[] =
    "WITH u AS (UPDATE sst_runs SET status = $3, owner = NULL, lease_expires = 0, token = 0,"
    " done_token = $2, updated_at = $4"
    " WHERE run_id = $1 AND token = $2 AND status = 'running' RETURNING thread_id)"
    " SELECT (SELECT count(*) FROM u), (SELECT pg_notify($5, '') FROM u WHERE $3 = 'pending'"
    " OR EXISTS (SELECT 1 FROM sst_runs w WHERE w.thread_id = u.thread_id"
    " AND w.status = 'pending'))," HOLDER;
/* The columns of HOLDER in k_renew's and k_settle's rows. */
enum { H_STATUS = 2, H_ATTEMPT, H_OWNER, H_DONE_TOKEN };

/* now + lease_ms without overflowing. */
static int64_t expiry(int64_t now, int64_t lease_ms) {
    return now > 0 && lease_ms > INT64_MAX - now ? INT64_MAX : now + lease_ms;
}

/* ---- claim ---- */

/* This host's holder bounds for k_owners and k_probe: "PLACE " < owner < "PLACE!". */
static void owner_bounds(char *low, char *high, size_t n) {
    char place[SST__OWNER_MAX];
    sst__owner_place(place);
    snprintf(low, n, "%s ", place);
    snprintf(high, n, "%s!", place); /* '!' follows ' ': past every "PLACE ..." */
}

typedef struct claim_job {
    pg_queue *s;
    const char *owner;
    int64_t now, expires;
    /* The token of the claim the last attempt made (0: none). Kept across re-runs:
     * a re-run after a lost COMMIT looks for it first, as that claim may hold. */
    uint64_t token;
    PGresult *res; /* OUT, owned: the claimed run (PQ_RUN_COLS), NULL when none */
} claim_job;

/* Appends @p s as a quoted element to the array literal @p b ("{" so far, or "{...", no "}"). */
static void array_add(sst__buf *b, const char *s) {
    if (b->len > 1) {
        sst__buf_putc(b, ',');
    }
    sst__buf_putc(b, '"');
    for (; *s != '\0'; s++) {
        if (*s == '"' || *s == '\\') {
            sst__buf_putc(b, '\\');
        }
        sst__buf_putc(b, *s);
    }
    sst__buf_putc(b, '"');
}

/*
 * The holders of this host whose process is gone, as a text[] literal in
 * *out (new, sst__free): their leases count as expired. Holders elsewhere
 * cannot be probed and are not read.
 */
static sst_code gone_owners(sst__pg_conn *c, char **out, sst_error *err) {
    *out = NULL;
    char low[SST__OWNER_MAX + 1], high[SST__OWNER_MAX + 1];
    owner_bounds(low, high, sizeof low);
    sst__pg_params p;
    sst__pg_params_init(&p);
    sst__pg_text(&p, low);
    sst__pg_text(&p, high);
    PGresult *r =
        sst__pg_exec(c, "sst_queue_owners", k_owners, &p, "queue: looking for holders", err);
    if (r == NULL) {
        return sst__code(err);
    }
    sst__buf gone;
    sst__buf_init(&gone);
    sst__buf_putc(&gone, '{');
    for (int i = 0; i < PQntuples(r); i++) {
        const char *owner = sst__pg_bytes_at(r, i, 0, NULL);
        if (owner != NULL && sst__owner_gone(owner)) {
            array_add(&gone, owner);
        }
    }
    PQclear(r);
    sst__buf_putc(&gone, '}');
    return (*out = sst__buf_detach(&gone, NULL)) != NULL ? SST_OK : sst__enomem(err);
}

typedef struct probe_job {
    int64_t now;
    bool claimable; /* OUT */
} probe_job;

static sst_code probe_read(sst__pg_conn *c, void *user, sst_error *err) {
    probe_job *j = user;
    char low[SST__OWNER_MAX + 1], high[SST__OWNER_MAX + 1];
    owner_bounds(low, high, sizeof low);
    sst__pg_params p;
    sst__pg_params_init(&p);
    sst__pg_i64(&p, j->now);
    sst__pg_text(&p, low);
    sst__pg_text(&p, high);
    PGresult *r =
        sst__pg_exec(c, "sst_queue_probe", k_probe, &p, "queue: looking for a run to claim", err);
    if (r == NULL) {
        return sst__code(err);
    }
    j->claimable = false;
    for (int i = 0; i < PQntuples(r) && !j->claimable; i++) {
        const char *owner = sst__pg_bytes_at(r, i, 0, NULL);
        j->claimable = owner == NULL ? sst__pg_int(r, i, 1) != 0 : sst__owner_gone(owner);
    }
    PQclear(r);
    return SST_OK;
}

sst_code sst__pq_probe(pg_queue *s, int64_t now, bool *claimable, sst_error *err) {
    probe_job j = {.now = now};
    sst_code rc = sst__pg_read(s->pg, probe_read, &j, err);
    *claimable = rc != SST_OK || j.claimable; /* a failure: let the claim tell */
    return rc;
}

/* The oldest runnable run: *found, its seq and its thread (@p thread owned, sst__free). */
static sst_code pick(sst__pg_conn *c, const claim_job *j, const char *gone, bool *found,
                     int64_t *seq, char **thread, sst_error *err) {
    sst__pg_params p;
    sst__pg_params_init(&p);
    sst__pg_i64(&p, j->now);
    sst__pg_text(&p, gone);
    PGresult *r =
        sst__pg_exec(c, "sst_queue_pick", k_pick, &p, "queue: looking for a run to claim", err);
    if (r == NULL) {
        return sst__code(err);
    }
    *found = PQntuples(r) > 0;
    sst_code rc = SST_OK;
    if (*found) {
        *seq = sst__pg_int(r, 0, 0);
        if ((*thread = sst__pg_strdup(r, 0, 1)) == NULL) {
            rc = sst__enomem(err);
        }
    }
    PQclear(r);
    return rc;
}

/* Takes run (@p thread, @p seq) if it still may be (j->res set), or takes nothing. */
static sst_code take(sst__pg_conn *c, claim_job *j, const char *thread, int64_t seq,
                     const char *gone, sst_error *err) {
    sst__pg_params p;
    sst__pg_params_init(&p);
    sst__pg_text(&p, thread);
    sst__pg_i64(&p, seq);
    sst__pg_text(&p, j->owner);
    sst__pg_i64(&p, j->expires);
    sst__pg_i64(&p, j->now);
    sst__pg_text(&p, gone);
    PGresult *r = sst__pg_exec(c, "sst_queue_take", k_take, &p, "queue: claiming a run", err);
    if (r == NULL) {
        return sst__code(err);
    }
    if (PQntuples(r) == 0) {
        PQclear(r);
        return SST_OK;
    }
    j->res = r;
    j->token = (uint64_t)sst__pg_int(r, 0, PC_TOKEN);
    return SST_OK;
}

/* After a lost COMMIT: j->res gets the run the first attempt claimed, if that claim holds. */
static sst_code reclaim(sst__pg_conn *c, claim_job *j, sst_error *err) {
    sst__pg_params p;
    sst__pg_params_init(&p);
    sst__pg_text(&p, j->owner);
    sst__pg_i64(&p, (int64_t)j->token);
    PGresult *r =
        sst__pg_exec(c, "sst_queue_reclaim", k_reclaim, &p, "queue: looking for a claim", err);
    if (r == NULL) {
        return sst__code(err);
    }
    if (PQntuples(r) > 0) {
        j->res = r;
    } else {
        PQclear(r);
    }
    return SST_OK;
}

/* How often a claim picks again when the run it picked was taken first (see (b)). */
#define PICK_TRIES 4

static sst_code claim_tx(sst__pg_conn *c, void *user, sst_error *err) {
    claim_job *j = user;
    PQclear(j->res);
    j->res = NULL;
    if (c->after_lost_commit && j->token != 0) {
        sst_code rc = reclaim(c, j, err);
        if (rc != SST_OK || j->res != NULL) {
            return rc;
        }
    }
    j->token = 0;
    char *gone = NULL;
    sst_code rc = gone_owners(c, &gone, err);
    for (int i = 0; rc == SST_OK && j->res == NULL && i < PICK_TRIES; i++) {
        bool found = false;
        int64_t seq = 0;
        char *thread = NULL;
        rc = pick(c, j, gone, &found, &seq, &thread, err);
        if (rc == SST_OK && found) {
            rc = take(c, j, thread, seq, gone, err);
        }
        sst__free(thread);
        if (!found) {
            break;
        }
    }
    sst__free(gone);
    if (rc != SST_OK) {
        PQclear(j->res);
        j->res = NULL;
    }
    return rc;
}

sst_code sst__pq_claim(void *self, const char *owner, int64_t now, int64_t lease_ms,
                       sst_queued_run_fn each, void *user_data, sst_error *err) {
    SST__ERR_LOCAL(err);
    pg_queue *s = self;
    claim_job j = {.s = s, .owner = owner, .now = now, .expires = expiry(now, lease_ms)};
    sst_code rc = sst__pg_tx(s->pg, true, claim_tx, &j, err);
    if (rc == SST_OK && j.res == NULL) {
        return sst__error(err, SST_ENOTFOUND, "queue '%s': no run is ready to claim",
                          sst__pq_name(s));
    }
    /* After the commit, holding nothing: should the stored JSON not parse (a damaged
     * row), the run stays claimed and comes back when this lease expires, attempt + 1. */
    if (rc == SST_OK) {
        rc = sst__pq_emit(s, j.res, 0, each, user_data, NULL, err);
    }
    PQclear(j.res);
    return rc;
}

/* ---- the holder's calls ---- */

/* SST_ECONFLICT for @p what on @p run_id, saying what became of it (row 0 of @p r, HOLDER). */
static sst_code lease_lost(const pg_queue *s, const PGresult *r, const char *what,
                           const char *run_id, sst_error *err) {
    char now[200];
    const char *status = sst__pg_bytes_at(r, 0, H_STATUS, NULL);
    if (status == NULL) {
        snprintf(now, sizeof now, "it is no longer in the queue");
    } else if (strcmp(status, "running") == 0) {
        const char *owner = sst__pg_bytes_at(r, 0, H_OWNER, NULL);
        snprintf(now, sizeof now, "claimed again by '%.120s' (attempt %lld)",
                 owner != NULL ? owner : "?", (long long)sst__pg_int(r, 0, H_ATTEMPT));
    } else {
        snprintf(now, sizeof now, "it is %s now", status);
    }
    return sst__error(err, SST_ECONFLICT, "queue '%s': %s run '%s': lease lost: %s",
                      sst__pq_name(s), what, run_id, now);
}

typedef struct holder_job {
    pg_queue *s;
    const char *run_id;
    uint64_t token;
    int64_t now, expires;
    const char *status; /* settle: the status to set */
    bool release;       /* settle: release, not finish */
    char *cancel;       /* OUT (renew), owned: the cancel action asked for */
} holder_job;

static sst_code renew_tx(sst__pg_conn *c, void *user, sst_error *err) {
    holder_job *j = user;
    sst__free(j->cancel);
    j->cancel = NULL;
    sst__pg_params p;
    sst__pg_params_init(&p);
    sst__pg_text(&p, j->run_id);
    sst__pg_i64(&p, (int64_t)j->token);
    sst__pg_i64(&p, j->expires);
    sst__pg_i64(&p, j->now);
    /* The token is not changed by a renew: a re-run after a lost COMMIT finds it again. */
    /* Changes nothing when the lease is lost: its COMMIT may go with it. */
    PGresult *r =
        sst__pg_exec_last(c, "sst_queue_renew", k_renew, &p, "queue: renewing a lease", err);
    if (r == NULL) {
        return sst__code(err);
    }
    sst_code rc = SST_OK;
    if (sst__pg_int(r, 0, 0) == 0) {
        rc = lease_lost(j->s, r, "renew", j->run_id, err);
    } else if (!sst__pg_null(r, 0, 1) && (j->cancel = sst__pg_strdup(r, 0, 1)) == NULL) {
        rc = sst__enomem(err);
    }
    PQclear(r);
    return rc;
}

sst_code sst__pq_renew(void *self, const char *run_id, uint64_t token, int64_t now,
                       int64_t lease_ms, char **cancel, sst_error *err) {
    SST__ERR_LOCAL(err);
    holder_job j = {
        .s = self, .run_id = run_id, .token = token, .now = now, .expires = expiry(now, lease_ms)};
    sst_code rc = sst__pg_tx(j.s->pg, true, renew_tx, &j, err);
    if (rc == SST_OK && cancel != NULL) {
        *cancel = j.cancel;
        j.cancel = NULL;
    }
    sst__free(j.cancel);
    return rc;
}

static sst_code settle_tx(sst__pg_conn *c, void *user, sst_error *err) {
    holder_job *j = user;
    sst__pg_params p;
    sst__pg_params_init(&p);
    sst__pg_text(&p, j->run_id);
    sst__pg_i64(&p, (int64_t)j->token);
    sst__pg_text(&p, j->status);
    sst__pg_i64(&p, j->now);
    sst__pg_text(&p, j->s->channel);
    /* Changes nothing when the lease is lost: its COMMIT may go with it. */
    PGresult *r =
        sst__pg_exec_last(c, "sst_queue_settle", k_settle, &p,
                          j->release ? "queue: releasing a run" : "queue: finishing a run", err);
    if (r == NULL) {
        return sst__code(err);
    }
    sst_code rc = SST_OK;
    if (sst__pg_int(r, 0, 0) == 0) {
        /* A re-run after a lost COMMIT: that COMMIT applied this very change when the run
         * shows this token as the last one to settle it (and, for a finish, its status). */
        const char *status = sst__pg_bytes_at(r, 0, H_STATUS, NULL);
        bool applied = c->after_lost_commit && status != NULL &&
                       (uint64_t)sst__pg_int(r, 0, H_DONE_TOKEN) == j->token &&
                       (j->release || strcmp(status, j->status) == 0);
        if (!applied) {
            rc = lease_lost(j->s, r, j->release ? "release" : "finish", j->run_id, err);
        }
    }
    PQclear(r);
    return rc;
}

sst_code sst__pq_finish(void *self, const char *run_id, uint64_t token, sst_queue_status status,
                        int64_t now, sst_error *err) {
    SST__ERR_LOCAL(err);
    holder_job j = {.s = self,
                    .run_id = run_id,
                    .token = token,
                    .now = now,
                    .status = sst_queue_status_name(status)};
    return sst__pg_tx(j.s->pg, true, settle_tx, &j, err);
}

sst_code sst__pq_release(void *self, const char *run_id, uint64_t token, int64_t now,
                         sst_error *err) {
    SST__ERR_LOCAL(err);
    holder_job j = {.s = self,
                    .run_id = run_id,
                    .token = token,
                    .now = now,
                    .status = "pending",
                    .release = true};
    return sst__pg_tx(j.s->pg, true, settle_tx, &j, err);
}
