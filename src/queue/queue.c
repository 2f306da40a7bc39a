/* SPDX-License-Identifier: MIT */
/*
 * The run queue wrapper (include/superstep/queue.h): the reference count, the
 * argument checks every call goes through before the backend sees it, status
 * names, and a run as a value. The backends live beside it (sqlite*.c,
 * postgres*.c).
 */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "common.h"
#include "queue_int.h"
#include "values/build.h"

struct sst_queue {
    sst_queue_ops ops; /* the implementation's */
    void *self;
    atomic_size_t refs;
};

/* ---- statuses ---- */

static const char *const k_status_names[] = {
    [SST_QUEUE_PENDING] = "pending",         [SST_QUEUE_RUNNING] = "running",
    [SST_QUEUE_SUCCESS] = "success",         [SST_QUEUE_ERROR] = "error",
    [SST_QUEUE_INTERRUPTED] = "interrupted", [SST_QUEUE_TIMEOUT] = "timeout",
};

const char *sst_queue_status_name(sst_queue_status s) {
    return (unsigned)s < SST_ARRAY_LEN(k_status_names) ? k_status_names[s] : "?";
}

bool sst_queue_status_parse(const char *name, sst_queue_status *out) {
    for (size_t i = 0; name != NULL && i < SST_ARRAY_LEN(k_status_names); i++) {
        if (strcmp(name, k_status_names[i]) == 0) {
            *out = (sst_queue_status)i;
            return true;
        }
    }
    return false;
}

bool sst_queue_status_final(sst_queue_status s) {
    return s == SST_QUEUE_SUCCESS || s == SST_QUEUE_ERROR || s == SST_QUEUE_INTERRUPTED ||
           s == SST_QUEUE_TIMEOUT;
}

/* ---- the wrapper ---- */

sst_queue *sst_queue_new(const sst_queue_ops *ops, void *self, sst_error *err) {
    /* Every operation is required: the size must reach the last one. */
    size_t need = offsetof(sst_queue_ops, cancel) + sizeof ops->cancel;
    if (ops == NULL || ops->size < need) {
        sst__error(err, SST_EINVAL, "queue: ops.size must be sizeof(sst_queue_ops) (got %zu)",
                   ops != NULL ? ops->size : 0);
        return NULL;
    }
    if (ops->destroy == NULL || ops->enqueue == NULL || ops->get == NULL || ops->list == NULL ||
        ops->remove == NULL || ops->remove_thread == NULL || ops->claim == NULL ||
        ops->renew == NULL || ops->finish == NULL || ops->release == NULL || ops->cancel == NULL) {
        sst__error(err, SST_EINVAL, "queue: every operation of sst_queue_ops is required");
        return NULL;
    }
    sst_queue *q = sst__calloc(1, sizeof *q);
    if (q == NULL) {
        sst__enomem(err);
        return NULL;
    }
    memcpy(&q->ops, ops, sizeof q->ops); /* fields past ours (a newer header) are ignored */
    q->self = self;
    atomic_init(&q->refs, 1);
    return q;
}

sst_queue *sst_queue_ref(sst_queue *q) {
    if (q != NULL) {
        atomic_fetch_add_explicit(&q->refs, 1, memory_order_relaxed);
    }
    return q;
}

void sst_queue_free(sst_queue *q) {
    if (q == NULL || atomic_fetch_sub_explicit(&q->refs, 1, memory_order_acq_rel) != 1) {
        return;
    }
    q->ops.destroy(q->self);
    sst__free(q);
}

void *sst__queue_impl(const sst_queue *q, void (*destroy)(void *self)) {
    return q != NULL && q->ops.destroy == destroy ? q->self : NULL;
}

/* ---- argument checks ---- */

static sst_code need_queue(const sst_queue *q, const char *what, sst_error *err) {
    return q != NULL ? SST_OK : sst__error(err, SST_EINVAL, "%s: NULL queue", what);
}

static sst_code need_str(const char *s, const char *what, const char *name, sst_error *err) {
    return s != NULL && s[0] != '\0'
               ? SST_OK
               : sst__error(err, SST_EINVAL, "%s: %s must be a non-empty string", what, name);
}

static sst_code need_fn(sst_queued_run_fn each, const char *what, sst_error *err) {
    return each != NULL ? SST_OK : sst__error(err, SST_EINVAL, "%s: NULL callback", what);
}

static sst_code need_lease(int64_t lease_ms, const char *what, sst_error *err) {
    return lease_ms >= 1 ? SST_OK
                         : sst__error(err, SST_EINVAL, "%s: lease_ms must be at least 1 (got %lld)",
                                      what, (long long)lease_ms);
}

/* NULL or an object. */
static sst_code need_object(const sst_value *v, const char *run_id, const char *name,
                            sst_error *err) {
    if (v == NULL || sst_is_object(v)) {
        return SST_OK;
    }
    return sst__error(err, SST_EINVAL, "queue enqueue: run '%s': %s must be a JSON object, not %s",
                      run_id, name, sst_type_name(sst_value_type(v)));
}

static sst_code check_run(const sst_queued_run *run, unsigned flags, sst_error *err) {
    const char *what = "queue enqueue";
    if (run == NULL) {
        return sst__error(err, SST_EINVAL, "%s: NULL run", what);
    }
    if (need_str(run->run_id, what, "run_id", err) != SST_OK) {
        return SST_EINVAL;
    }
    if (run->thread_id == NULL || run->thread_id[0] == '\0') {
        return sst__error(err, SST_EINVAL, "%s: run '%s': thread_id must be a non-empty string",
                          what, run->run_id);
    }
    sst_code rc = need_object(run->kwargs, run->run_id, "kwargs", err);
    rc = rc == SST_OK ? need_object(run->metadata, run->run_id, "metadata", err) : rc;
    if (rc == SST_OK && (flags & ~(unsigned)SST_QUEUE_IF_IDLE) != 0) {
        rc = sst__error(err, SST_EINVAL, "%s: run '%s': unknown flags 0x%x", what, run->run_id,
                        flags & ~(unsigned)SST_QUEUE_IF_IDLE);
    }
    if (rc == SST_OK && (run->created_at < 0 || run->run_after < 0)) {
        rc = sst__error(err, SST_EINVAL, "%s: run '%s': created_at and run_after must be >= 0",
                        what, run->run_id);
    }
    return rc;
}

/* ---- the calls ---- */

sst_code sst_queue_enqueue(sst_queue *q, const sst_queued_run *run, unsigned flags,
                           sst_error *err) {
    sst_code rc = need_queue(q, "queue enqueue", err);
    rc = rc == SST_OK ? check_run(run, flags, err) : rc;
    return rc == SST_OK ? q->ops.enqueue(q->self, run, flags, err) : rc;
}

sst_code sst_queue_get(sst_queue *q, const char *run_id, sst_queued_run_fn each, void *user_data,
                       sst_error *err) {
    sst_code rc = need_queue(q, "queue get", err);
    rc = rc == SST_OK ? need_str(run_id, "queue get", "run_id", err) : rc;
    rc = rc == SST_OK ? need_fn(each, "queue get", err) : rc;
    return rc == SST_OK ? q->ops.get(q->self, run_id, each, user_data, err) : rc;
}

sst_code sst_queue_list(sst_queue *q, const sst_queue_query *query, sst_queued_run_fn each,
                        void *user_data, sst_error *err) {
    const char *what = "queue list";
    sst_code rc = need_queue(q, what, err);
    if (rc == SST_OK && query == NULL) {
        rc = sst__error(err, SST_EINVAL, "%s: NULL query", what);
    }
    if (rc == SST_OK && query->thread_id != NULL && query->thread_id[0] == '\0') {
        rc = sst__error(err, SST_EINVAL, "%s: thread_id must be NULL (every thread) or non-empty",
                        what);
    }
    if (rc == SST_OK && query->by_status &&
        (unsigned)query->status >= SST_ARRAY_LEN(k_status_names)) {
        rc = sst__error(err, SST_EINVAL, "%s: unknown status %d", what, (int)query->status);
    }
    rc = rc == SST_OK ? need_fn(each, what, err) : rc;
    return rc == SST_OK ? q->ops.list(q->self, query, each, user_data, err) : rc;
}

sst_code sst_queue_remove(sst_queue *q, const char *run_id, sst_error *err) {
    sst_code rc = need_queue(q, "queue remove", err);
    rc = rc == SST_OK ? need_str(run_id, "queue remove", "run_id", err) : rc;
    return rc == SST_OK ? q->ops.remove(q->self, run_id, err) : rc;
}

sst_code sst_queue_remove_thread(sst_queue *q, const char *thread_id, sst_error *err) {
    sst_code rc = need_queue(q, "queue remove_thread", err);
    rc = rc == SST_OK ? need_str(thread_id, "queue remove_thread", "thread_id", err) : rc;
    return rc == SST_OK ? q->ops.remove_thread(q->self, thread_id, err) : rc;
}

sst_code sst_queue_claim(sst_queue *q, const char *owner, int64_t now, int64_t lease_ms,
                         sst_queued_run_fn each, void *user_data, sst_error *err) {
    sst_code rc = need_queue(q, "queue claim", err);
    rc = rc == SST_OK ? need_str(owner, "queue claim", "owner", err) : rc;
    rc = rc == SST_OK ? need_lease(lease_ms, "queue claim", err) : rc;
    rc = rc == SST_OK ? need_fn(each, "queue claim", err) : rc;
    return rc == SST_OK ? q->ops.claim(q->self, owner, now, lease_ms, each, user_data, err) : rc;
}

sst_code sst_queue_renew(sst_queue *q, const char *run_id, uint64_t token, int64_t now,
                         int64_t lease_ms, char **cancel, sst_error *err) {
    if (cancel != NULL) {
        *cancel = NULL;
    }
    sst_code rc = need_queue(q, "queue renew", err);
    rc = rc == SST_OK ? need_str(run_id, "queue renew", "run_id", err) : rc;
    rc = rc == SST_OK ? need_lease(lease_ms, "queue renew", err) : rc;
    return rc == SST_OK ? q->ops.renew(q->self, run_id, token, now, lease_ms, cancel, err) : rc;
}

sst_code sst_queue_finish(sst_queue *q, const char *run_id, uint64_t token, sst_queue_status status,
                          int64_t now, sst_error *err) {
    sst_code rc = need_queue(q, "queue finish", err);
    rc = rc == SST_OK ? need_str(run_id, "queue finish", "run_id", err) : rc;
    if (rc == SST_OK && !sst_queue_status_final(status)) {
        rc = sst__error(err, SST_EINVAL,
                        "queue finish: run '%s': status %s is not final (success, error, "
                        "interrupted or timeout)",
                        run_id, sst_queue_status_name(status));
    }
    return rc == SST_OK ? q->ops.finish(q->self, run_id, token, status, now, err) : rc;
}

sst_code sst_queue_release(sst_queue *q, const char *run_id, uint64_t token, int64_t now,
                           sst_error *err) {
    sst_code rc = need_queue(q, "queue release", err);
    rc = rc == SST_OK ? need_str(run_id, "queue release", "run_id", err) : rc;
    return rc == SST_OK ? q->ops.release(q->self, run_id, token, now, err) : rc;
}

sst_code sst_queue_cancel(sst_queue *q, const char *run_id, const char *action, int64_t now,
                          sst_queue_status *status, sst_error *err) {
    sst_code rc = need_queue(q, "queue cancel", err);
    rc = rc == SST_OK ? need_str(run_id, "queue cancel", "run_id", err) : rc;
    rc = rc == SST_OK ? need_str(action, "queue cancel", "action", err) : rc;
    return rc == SST_OK ? q->ops.cancel(q->self, run_id, action, now, status, err) : rc;
}

/* ---- a run as a value ---- */

/* A string value, or null for NULL. */
static sst_value *str_or_null(const char *s, sst_error *err) {
    return s != NULL ? sst_string_new(s, err) : sst_null();
}

/* @p v (new reference), or {} for NULL. */
static sst_value *object_or_empty(const sst_value *v) {
    return v != NULL ? sst_value_ref(v) : sst_object_empty();
}

sst_value *sst_queued_run_value(const sst_queued_run *run, sst_error *err) {
    SST__ERR_LOCAL(err);
    if (run == NULL) {
        sst__error(err, SST_EINVAL, "queued run value: NULL run");
        return NULL;
    }
    sst_value *o = sst__object_with_capacity(14, err);
    o = sst__set_take(o, "run_id", str_or_null(run->run_id, err), err);
    o = sst__set_take(o, "thread_id", str_or_null(run->thread_id, err), err);
    o = sst__set_take(o, "assistant_id", str_or_null(run->assistant_id, err), err);
    o = sst__set_take(o, "status", sst_string_new(sst_queue_status_name(run->status), err), err);
    o = sst__set_take(o, "kwargs", object_or_empty(run->kwargs), err);
    o = sst__set_take(o, "metadata", object_or_empty(run->metadata), err);
    o = sst__set_take(o, "multitask_strategy", str_or_null(run->multitask_strategy, err), err);
    o = sst__set_take(o, "created_at", sst_int_new(run->created_at, err), err);
    o = sst__set_take(o, "updated_at", sst_int_new(run->updated_at, err), err);
    o = sst__set_take(o, "run_after", sst_int_new(run->run_after, err), err);
    o = sst__set_take(o, "attempt", sst_int_new((int64_t)run->attempt, err), err);
    o = sst__set_take(o, "cancel", str_or_null(run->cancel, err), err);
    o = sst__set_take(o, "owner", str_or_null(run->owner, err), err);
    o = sst__set_take(o, "lease_expires", sst_int_new(run->lease_expires, err), err);
    return o;
}
