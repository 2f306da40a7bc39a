/* SPDX-License-Identifier: MIT */
/*
 * Pruning threads: POST /threads/prune (LangGraph's threads.prune: "delete" removes a
 * thread as DELETE /threads/{id} does, "keep_latest" keeps the thread and its latest
 * checkpoint only), and langgraph.json's checkpointer.ttl, which prunes every thread not
 * updated for default_ttl minutes that has no TTL of its own, the same two ways, every
 * sweep_interval_minutes (docs/server.md "Thread TTL").
 */
#include <math.h>
#include <string.h>

#include "prune.h"
#include "thread_ttl.h"

struct srv_cp_ttl {
    bool keep_latest;
    double minutes;
    int64_t every_ms;
    size_t limit;
    int64_t last_ms; /* the keeper's last sweep (only the keeper reads and writes it) */
    bool logged;
};

/*
 * Prunes one thread; *pruned true when it existed and was pruned, *changed when that
 * removed anything. keep_latest keeps the latest checkpoint of each namespace and the ones
 * it is read from (a checkpoint stored as a delta needs its chain back to a snapshot: at
 * most 63 more, docs/server.md).
 */
static sst_code prune_one(sst_server *s, const char *id, bool keep_latest, bool *pruned,
                          bool *changed, sst_error *err) {
    *pruned = *changed = false;
    if (!srv_thread_exists(s, id, err)) {
        return err->code == SST_OK ? SST_OK : err->code;
    }
    sst_code rc;
    size_t removed = 1;
    if (keep_latest) {
        removed = 0;
        rc = sst_checkpointer_prune(s->cp, id, 1, &removed, err);
    } else {
        rc = srv_thread_remove(s, id, err);
    }
    *pruned = rc == SST_OK;
    *changed = *pruned && removed > 0;
    return rc;
}

void srv_threads_prune(srv_request *r, srv_response *res) {
    static const char *const known[] = {"thread_ids", "strategy", NULL};
    static const char *const strategies[] = {"delete", "keep_latest", NULL};
    const sst_value *ids = NULL;
    const char *strategy = "delete";
    if (!srv_body_object(r, res) || !srv_known_fields(r, res, known) ||
        !srv_field_array(r, res, "thread_ids", &ids) ||
        !srv_field_enum(r, res, "strategy", strategies, &strategy)) {
        return;
    }
    if (ids == NULL) {
        srv_error(res, 400, "body member 'thread_ids' is required: a list of thread ids");
        return;
    }
    for (size_t i = 0; i < sst_array_len(ids); i++) {
        const sst_value *v = sst_array_get(ids, i);
        if (!sst_is_string(v) || !srv_is_uuid(sst_string_cstr(v))) {
            srv_error(res, 400, "body member 'thread_ids[%zu]' must be a thread id (a UUID)", i);
            return;
        }
    }
    bool keep = strcmp(strategy, "keep_latest") == 0;
    int64_t n = 0;
    for (size_t i = 0; i < sst_array_len(ids); i++) {
        sst_error err = {0};
        bool pruned = false, changed = false;
        if (prune_one(r->s, sst_string_cstr(sst_array_get(ids, i)), keep, &pruned, &changed,
                      &err) != SST_OK) {
            srv_fail(res, &err);
            return;
        }
        n += pruned ? 1 : 0;
    }
    sst_error err = {0};
    srv_json(res, 200,
             sst__set_take(sst_object_empty(), "pruned_count", sst_int_new(n, &err), &err));
}

/* ---- langgraph.json's checkpointer.ttl ------------------------------------------ */

static bool number_member(const sst_value *o, const char *key, const char *file, double min,
                          double max, double *out, sst_error *err) {
    const sst_value *v = sst_object_get(o, key);
    if (v == NULL || sst_is_null(v)) {
        return true;
    }
    if (!sst_is_number(v) || !(sst_number_value(v) >= min && sst_number_value(v) <= max)) {
        sst__error(err, SST_EINVAL, "%s: checkpointer.ttl.%s must be a number from %g to %g", file,
                   key, min, max);
        return false;
    }
    *out = sst_number_value(v);
    return true;
}

sst_code srv_cp_ttl_configure(sst_server *s, const char *file, const sst_value *ttl,
                              sst_error *err) {
    static const char *const known[] = {"strategy", "default_ttl", "sweep_interval_minutes",
                                        "sweep_limit", NULL};
    if (!sst_is_object(ttl)) {
        return sst__error(err, SST_EINVAL, "%s: checkpointer.ttl must be an object", file);
    }
    for (size_t i = 0; i < sst_object_len(ttl); i++) {
        const char *k = sst_string_cstr(sst_object_key_at(ttl, i));
        bool ok = false;
        for (size_t j = 0; known[j] != NULL; j++) {
            ok = ok || strcmp(k, known[j]) == 0;
        }
        if (!ok) {
            return sst__error(err, SST_EINVAL,
                              "%s: unknown member checkpointer.ttl.%s (known: strategy, "
                              "default_ttl, sweep_interval_minutes, sweep_limit)",
                              file, k);
        }
    }
    srv_cp_ttl t = {.every_ms = 5 * 60000, .limit = 1000};
    const sst_value *st = sst_object_get(ttl, "strategy");
    if (st != NULL && !sst_is_null(st)) {
        const char *v = sst_is_string(st) ? sst_string_cstr(st) : "";
        if (strcmp(v, "delete") != 0 && strcmp(v, "keep_latest") != 0) {
            return sst__error(err, SST_EINVAL,
                              "%s: checkpointer.ttl.strategy must be \"delete\" or "
                              "\"keep_latest\"",
                              file);
        }
        t.keep_latest = strcmp(v, "keep_latest") == 0;
    }
    double every = 5, limit = 1000;
    if (!number_member(ttl, "default_ttl", file, 0, 1e8, &t.minutes, err) ||
        !number_member(ttl, "sweep_interval_minutes", file, 1, 1e6, &every, err) ||
        !number_member(ttl, "sweep_limit", file, 1, 1e6, &limit, err)) {
        return sst__code(err);
    }
    if (t.minutes <= 0) {
        return SST_OK; /* no default TTL: nothing to sweep */
    }
    t.every_ms = (int64_t)llround(every * 60000.0);
    t.limit = (size_t)limit;
    srv_cp_ttl *p = sst__calloc(1, sizeof *p);
    if (p == NULL) {
        return sst__enomem(err);
    }
    *p = t;
    sst__free(s->cp_ttl);
    s->cp_ttl = p;
    return SST_OK;
}

typedef struct old_threads {
    int64_t cutoff;
    char (*ids)[37];
    size_t n, cap;
    bool past; /* a thread updated after the cutoff was seen: the list is done */
} old_threads;

static bool collect_old(const sst_thread_info *t, void *ud) {
    old_threads *o = ud;
    if (t->updated_at > o->cutoff) {
        o->past = true;
        return false;
    }
    if (t->status == SST_THREAD_BUSY || strlen(t->thread_id) != 36) {
        return true; /* running now: its next checkpoint restarts its clock */
    }
    if (o->n == o->cap) {
        return false;
    }
    memcpy(o->ids[o->n++], t->thread_id, 37);
    return true;
}

void srv_cp_ttl_sweep(sst_server *s, int64_t now_ms, int64_t offset_ms) {
    srv_cp_ttl *t = s->cp_ttl;
    if (t == NULL || (t->last_ms != 0 && now_ms - t->last_ms < t->every_ms)) {
        return;
    }
    t->last_ms = now_ms;
    if (!t->logged) {
        t->logged = true;
        srv_log(s,
                "threads: langgraph.json's checkpointer.ttl: %s threads not updated for %g "
                "minutes, every %lld minutes",
                t->keep_latest ? "keep the latest checkpoint of" : "delete", t->minutes,
                (long long)(t->every_ms / 60000));
    }
    char(*ids)[37] = sst__calloc(t->limit, 37);
    if (ids == NULL) {
        return;
    }
    size_t acted = 0;
    /* Oldest update first, a page at a time, until past the cutoff or the limit. */
    for (size_t offset = 0, page = 0; acted < t->limit && page < 100; page++) {
        old_threads o = {.cutoff = now_ms + offset_ms - (int64_t)llround(t->minutes * 60000.0),
                         .ids = ids,
                         .cap = t->limit};
        sst_thread_query q = {.order = SST_THREADS_BY_UPDATED, .offset = offset, .limit = t->limit};
        sst_error err = {0};
        if (sst_checkpointer_threads(s->cp, &q, collect_old, &o, &err) != SST_OK) {
            srv_log(s, "threads: checkpointer.ttl cannot list threads: %s", err.msg);
            break;
        }
        size_t kept = 0;
        for (size_t i = 0; i < o.n && acted < t->limit; i++) {
            bool missing = false;
            err = (sst_error){0};
            sst_value *own = srv_hidden_get(s, "thread_ttl", ids[i], &missing, &err);
            sst_queue_query rq = {.thread_id = ids[i]};
            if (own != NULL || !missing || srv_thread_active_runs(s, &rq) > 0) {
                sst_value_unref(own); /* its own TTL rules it; or it is running */
                kept++;
                continue;
            }
            bool pruned = false, changed = false;
            if (prune_one(s, ids[i], t->keep_latest, &pruned, &changed, &err) != SST_OK) {
                srv_log(s, "threads: checkpointer.ttl cannot prune thread %s: %s", ids[i], err.msg);
                kept++;
            } else if (t->keep_latest) {
                kept++; /* still listed: the next page starts after it */
            }
            if (changed) {
                acted++;
                srv_log(s, "threads: %s thread %s: not updated for %g minutes (checkpointer.ttl)",
                        t->keep_latest ? "pruned" : "deleted", ids[i], t->minutes);
            }
        }
        if (o.past || o.n < t->limit) {
            break;
        }
        offset += kept;
    }
    if (acted > 0) {
        srv_log(s, "threads: checkpointer.ttl sweep done: %zu thread%s %s", acted,
                acted == 1 ? "" : "s", t->keep_latest ? "pruned" : "deleted");
    }
    sst__free(ids);
}

void srv_cp_ttl_free(sst_server *s) {
    sst__free(s->cp_ttl);
    s->cp_ttl = NULL;
}
