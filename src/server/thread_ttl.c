/* SPDX-License-Identifier: MIT */
/*
 * Thread TTLs. A thread's TTL is an item of the server's store under the
 * reserved namespace ("superstep_server", "thread_ttl"), keyed by the thread
 * id, whose value is {"strategy": "delete", "ttl_minutes": n}: it lives in
 * the server's database whatever it is (SQLite or memory), like the
 * assistants and crons. The sweep (srv_threads_ttl_sweep, called by the
 * keeper thread) deletes a thread once it has not been updated for n
 * minutes, as LangGraph's platform does; docs/server.md ("Thread TTL").
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prune.h"
#include "thread_ttl.h"

static const char *const k_ns[] = {SRV_RESERVED_NS, "thread_ttl"};

/* Minutes a TTL may have at most (about 190 years: its ms fit an int64 with room). */
#define MAX_TTL_MINUTES 1e8
/* TTLs looked at, and threads deleted, by one sweep at most. */
#define SWEEP_LOOK   500
#define SWEEP_DELETE 50

/* ---- reading the member --------------------------------------------------------- */

bool srv_thread_ttl_field(srv_request *r, srv_response *res, bool *given, sst_value **out) {
    *out = NULL;
    const sst_value *v = sst_object_get(r->json, "ttl");
    *given = v != NULL;
    if (v == NULL || sst_is_null(v)) {
        return true;
    }
    if (!sst_is_object(v)) {
        srv_error(res, 400,
                  "body member 'ttl' must be an object {\"strategy\": \"delete\", \"ttl\": "
                  "minutes}, got %s",
                  sst_type_name(sst_value_type(v)));
        return false;
    }
    for (size_t i = 0; i < sst_object_len(v); i++) {
        const char *k = sst_string_cstr(sst_object_key_at(v, i));
        if (strcmp(k, "strategy") != 0 && strcmp(k, "ttl") != 0) {
            srv_error(res, 400, "unknown body member 'ttl.%.200s' (ttl has 'strategy' and 'ttl')",
                      k);
            return false;
        }
    }
    const sst_value *strategy = sst_object_get(v, "strategy");
    if (strategy != NULL && !sst_is_null(strategy)) {
        if (!sst_is_string(strategy)) {
            srv_error(res, 400, "body member 'ttl.strategy' must be a string, got %s",
                      sst_type_name(sst_value_type(strategy)));
            return false;
        }
        /* LangGraph's thread API knows "delete" only ("keep_latest" is a strategy of
         * langgraph.json's checkpointer.ttl, not of a thread's ttl). */
        if (strcmp(sst_string_cstr(strategy), "delete") != 0) {
            srv_error(res, 400, "body member 'ttl.strategy' must be one of 'delete', got '%.200s'",
                      sst_string_cstr(strategy));
            return false;
        }
    }
    const sst_value *minutes = sst_object_get(v, "ttl");
    if (minutes == NULL || sst_is_null(minutes)) {
        srv_error(res, 400,
                  "body member 'ttl.ttl' is required: the minutes a thread is kept "
                  "after its last update");
        return false;
    }
    if (!sst_is_number(minutes)) {
        srv_error(res, 400, "body member 'ttl.ttl' must be a number of minutes, got %s",
                  sst_type_name(sst_value_type(minutes)));
        return false;
    }
    double d = sst_number_value(minutes);
    if (!(d > 0 && d <= MAX_TTL_MINUTES)) {
        srv_error(res, 400,
                  "body member 'ttl.ttl' must be more than 0 and at most %g minutes, got %.17g",
                  MAX_TTL_MINUTES, d);
        return false;
    }
    sst_error err = {0};
    sst_value *t =
        sst__set_take(sst_object_empty(), "strategy", sst_string_new("delete", &err), &err);
    t = sst__set_take(t, "ttl_minutes", sst_value_ref(minutes), &err);
    if (t == NULL) {
        srv_fail(res, &err);
        return false;
    }
    *out = t;
    return true;
}

/* ---- the store item ------------------------------------------------------------- */

sst_code srv_thread_ttl_set(sst_server *s, const char *thread_id, const sst_value *ttl,
                            sst_error *err) {
    if (ttl == NULL) {
        return sst_store_delete(s->store, k_ns, 2, thread_id, err);
    }
    return sst_store_put(s->store, k_ns, 2, thread_id, ttl, NULL, err);
}

/* ---- the sweep ------------------------------------------------------------------ */

/*
 * True when @p s is due to sweep at @p now_ms, with *cursor where to start; the sweep
 * is then counted as done. *first: its first sweep. The state is the server's own
 * (ttl_swept, ttl_last_ms, ttl_cursor under s->mu).
 */
static bool sweep_due(sst_server *s, int64_t now_ms, size_t *cursor, bool *first) {
    pthread_mutex_lock(&s->mu);
    *first = !s->ttl_swept;
    bool due =
        *first || now_ms - s->ttl_last_ms >= SRV_TTL_SWEEP_EVERY_MS || now_ms < s->ttl_last_ms;
    if (due) {
        s->ttl_swept = true;
        s->ttl_last_ms = now_ms;
        *cursor = s->ttl_cursor;
    }
    pthread_mutex_unlock(&s->mu);
    return due;
}

static void sweep_moved(sst_server *s, size_t cursor) {
    pthread_mutex_lock(&s->mu);
    s->ttl_cursor = cursor;
    pthread_mutex_unlock(&s->mu);
}

typedef struct last_update {
    bool found;
    int64_t updated_ms;
    sst_thread_status status;
} last_update;

static bool got_thread(const sst_thread_info *t, void *ud) {
    last_update *u = ud;
    u->found = true;
    u->updated_ms = t->updated_at;
    u->status = t->status;
    return false;
}

/* What the sweep does with one thread. */
typedef enum ttl_verdict { TTL_KEEP, TTL_GONE, TTL_EXPIRED, TTL_ERROR } ttl_verdict;

/* Whether thread @p id, whose TTL is @p ttl_ms, has expired at @p now_ms. */
static ttl_verdict judge(sst_server *s, const char *id, int64_t ttl_ms, int64_t now_ms,
                         sst_error *err) {
    last_update u = {0};
    sst_code rc = sst_checkpointer_thread_get(s->cp, id, got_thread, &u, err);
    if (rc == SST_ENOTFOUND || (rc == SST_OK && !u.found)) {
        return TTL_GONE;
    }
    if (rc != SST_OK) {
        return TTL_ERROR;
    }
    /* A busy thread is not idle, however old its last checkpoint: a run (or its lease)
     * is working on it, and the next checkpoint will restart its clock. */
    if (u.status == SST_THREAD_BUSY || now_ms - u.updated_ms <= ttl_ms) {
        return TTL_KEEP;
    }
    sst_queue_query q = {.thread_id = id};
    return srv_thread_active_runs(s, &q) > 0 ? TTL_KEEP : TTL_EXPIRED;
}

void srv_threads_ttl_sweep(sst_server *s, int64_t now_ms) {
    int64_t offset_ms = s->ttl_offset_ms;
    srv_cp_ttl_sweep(s, now_ms, offset_ms); /* langgraph.json's checkpointer.ttl */
    size_t cursor = 0;
    bool first = false;
    if (!sweep_due(s, now_ms, &cursor, &first)) {
        return;
    }
    if (first && offset_ms != 0) {
        srv_log(s,
                "threads: the TTL clock is moved by %lld ms (SST_SERVE_TTL_CLOCK_OFFSET_MS, a "
                "test knob)",
                (long long)offset_ms);
    }
    now_ms += offset_ms;

    sst_store_search_opts q;
    sst_store_search_opts_init(&q);
    q.prefix = k_ns;
    q.prefix_len = 2;
    q.offset = cursor;
    q.limit = SWEEP_LOOK;
    q.refresh_ttl = 0;
    sst_error err = {0};
    sst_value *items = sst_store_search(s->store, &q, &err);
    if (items == NULL) {
        srv_log(s, "threads: cannot list the thread TTLs: %s", err.msg);
        return;
    }
    size_t n = sst_array_len(items), deleted = 0, dropped = 0, looked = 0;
    for (size_t i = 0; i < n && deleted < SWEEP_DELETE; i++, looked++) {
        const sst_value *item = sst_array_get(items, i);
        const char *id = sst_string_cstr(sst_object_get(item, "key"));
        const sst_value *v = sst_object_get(item, "value");
        const sst_value *minutes = sst_object_get(v, "ttl_minutes");
        const char *strategy = sst_string_cstr(sst_object_get(v, "strategy"));
        if (id == NULL || !sst_is_number(minutes) || strategy == NULL ||
            strcmp(strategy, "delete") != 0) {
            continue; /* not ours to read (a later version's item): left alone */
        }
        int64_t ttl_ms = (int64_t)llround(sst_number_value(minutes) * 60000.0);
        err = (sst_error){0};
        switch (judge(s, id, ttl_ms, now_ms, &err)) {
            case TTL_KEEP:
                break;
            case TTL_GONE: /* deleted some other way (a stateless run's thread, another process) */
                if (srv_thread_ttl_set(s, id, NULL, &err) != SST_OK) {
                    srv_log(s, "threads: cannot drop the TTL of deleted thread %s: %s", id,
                            err.msg);
                } else {
                    dropped++;
                }
                break;
            case TTL_EXPIRED:
                if (srv_thread_remove(s, id, &err) != SST_OK) {
                    srv_log(s, "threads: cannot delete thread %s (TTL passed): %s", id, err.msg);
                } else {
                    deleted++;
                    srv_log(s, "threads: deleted thread %s: not updated for %g minutes (its TTL)",
                            id, sst_number_value(minutes));
                }
                break;
            case TTL_ERROR:
                srv_log(s, "threads: cannot read thread %s for its TTL: %s", id, err.msg);
                break;
        }
    }
    sst_value_unref(items);
    /* The next sweep goes on after the TTLs this one looked at, less the ones it dropped;
     * after the last page it starts over. Items written meanwhile shift the list a little:
     * one may be looked at a sweep late, never forever. */
    size_t next = n < SWEEP_LOOK && looked == n ? 0 : cursor + looked - deleted - dropped;
    sweep_moved(s, next);
}
