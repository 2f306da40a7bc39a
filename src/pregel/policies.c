/* SPDX-License-Identifier: MIT */
/*
 * Node policies the engine enforces around a compute function: timeouts
 * (LangGraph's TimeoutPolicy: a run timeout and an idle timeout per attempt,
 * and the superstep's step_timeout) and error handlers (LangGraph's
 * error_handler: a failed task becomes a task of its vertex's handler, in
 * the same superstep). Their state lives in the task's ext, made on first
 * use, so that tasks without policies stay small.
 *
 * Timeouts are cooperative: a task's own thread reads its clocks
 * (sst_task_cancelled) and, after the compute function returns, an attempt
 * that ran out of time is failed with SST_ETIMEOUT whatever it returned.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "pregel_int.h"
#include "values/build.h"

sst__task_ext *sst__task_ext_of(sst_task *t) {
    if (t->ext == NULL) {
        t->ext = sst__calloc(1, sizeof *t->ext);
    }
    return t->ext;
}

void sst__task_ext_clear(sst_task *t) {
    if (t->ext != NULL) {
        sst_value_unref(t->ext->detail);
        t->ext->detail = NULL;
        t->ext->ntimed = 0;
    }
}

const sst_timeout_policy *sst__out_timeout(const sst_task *t, size_t i) {
    for (size_t k = 0; t->ext != NULL && k < t->ext->ntimed; k++) {
        if (t->ext->timed[k].out == i) {
            return &t->ext->timed[k].policy;
        }
    }
    return NULL;
}

bool sst_timeout_policy_valid(const sst_timeout_policy *p) {
    return p->run_timeout_s >= 0 && p->idle_timeout_s >= 0 && p->run_timeout_s <= 1e9 &&
           p->idle_timeout_s <= 1e9;
}

sst_value *sst_timeout_policy_value(const sst_timeout_policy *p, sst_error *err) {
    SST__ERR_LOCAL(err);
    sst_value *o =
        sst__set_take(sst_object_empty(), "run", sst_double_new(p->run_timeout_s, err), err);
    o = sst__set_take(o, "idle", sst_double_new(p->idle_timeout_s, err), err);
    return p->heartbeat_only ? sst__set_take(o, "heartbeat", sst_bool(true), err) : o;
}

bool sst_timeout_policy_from_value(const sst_value *v, sst_timeout_policy *out) {
    memset(out, 0, sizeof *out);
    const sst_value *run = sst_object_get(v, "run"), *idle = sst_object_get(v, "idle");
    if (!sst_is_number(run) || !sst_is_number(idle)) {
        return false;
    }
    out->run_timeout_s = sst_number_value(run);
    out->idle_timeout_s = sst_number_value(idle);
    out->heartbeat_only = sst_bool_value(sst_object_get(v, "heartbeat"));
    return true;
}

bool sst__has_timeout(const sst_timeout_policy *p) {
    return p->run_timeout_s > 0 || p->idle_timeout_s > 0;
}

bool sst__task_limited(const sst_task *t) {
    return t->timeout != NULL || (t->ext != NULL && t->ext->step_deadline_ns != 0);
}

const sst_timeout_policy *sst_task_timeout(const sst_task *t) {
    static const sst_timeout_policy none = {0, 0, false};
    if (t == NULL || !sst__task_limited(t)) {
        return NULL;
    }
    return t->timeout != NULL ? t->timeout : &none;
}

static uint64_t ns_of(double s) {
    return (uint64_t)llround(s * 1e9);
}

bool sst__timeout_start(sst_task *t) {
    sst__task_ext *x = sst__task_ext_of(t);
    if (x == NULL) {
        return false;
    }
    x->start_ns = sst__now_ns();
    x->progress_ns = x->start_ns;
    return true;
}

void sst_task_heartbeat(sst_task *t) {
    if (t != NULL && t->timeout != NULL && t->ext != NULL) {
        t->ext->progress_ns = sst__now_ns();
    }
}

/* Which limit @p t passed at @p now: 's' (its superstep's), 'r' (run), 'i' (idle) or 0; the
 * earlier of run and idle when both. */
static char passed(const sst_task *t, uint64_t now) {
    const sst__task_ext *x = t->ext;
    if (x->step_deadline_ns != 0 && now > x->step_deadline_ns) {
        return 's';
    }
    const sst_timeout_policy *p = t->timeout;
    if (p == NULL) {
        return 0;
    }
    uint64_t run_at = p->run_timeout_s > 0 ? x->start_ns + ns_of(p->run_timeout_s) : UINT64_MAX;
    uint64_t idle_at =
        p->idle_timeout_s > 0 ? x->progress_ns + ns_of(p->idle_timeout_s) : UINT64_MAX;
    if (now <= run_at && now <= idle_at) {
        return 0;
    }
    return run_at <= idle_at ? 'r' : 'i';
}

bool sst_task_cancelled(const sst_task *t) {
    if (t == NULL || t->ext == NULL || t->ext->start_ns == 0) {
        return false;
    }
    return passed(t, sst__now_ns()) != 0;
}

static sst_value *seconds_or_null(double s, sst_error *err) {
    return s > 0 ? sst_double_new(s, err) : sst_null();
}

/* {"kind", "timeout", "run_timeout", "idle_timeout", "elapsed"} of a timeout. */
static sst_value *timeout_detail(const sst_timeout_policy *p, char kind, double elapsed,
                                 sst_error *err) {
    double limit = kind == 'r' ? p->run_timeout_s : p->idle_timeout_s;
    sst_value *d = sst__set_take(sst_object_empty(), "kind",
                                 sst_string_new(kind == 'r' ? "run" : "idle", err), err);
    d = sst__set_take(d, "timeout", sst_double_new(limit, err), err);
    d = sst__set_take(d, "run_timeout", seconds_or_null(p->run_timeout_s, err), err);
    d = sst__set_take(d, "idle_timeout", seconds_or_null(p->idle_timeout_s, err), err);
    return sst__set_take(d, "elapsed", sst_double_new(elapsed, err), err);
}

void sst__timeout_check(sst_task *t) {
    if (t->ext == NULL || t->ext->start_ns == 0) {
        return; /* its clocks could not start (out of memory): nothing to hold it to */
    }
    uint64_t now = sst__now_ns();
    char kind = passed(t, now);
    if (kind == 0) {
        return;
    }
    /* Whatever the attempt produced after its time ran out is dropped. */
    sst__task_clear_outputs(t);
    double elapsed = (double)(now - t->ext->start_ns) / 1e9;
    if (kind == 's') {
        t->step_expired = true;
        sst_task_fail(t, SST_ETIMEOUT, "superstep %llu timed out",
                      (unsigned long long)t->superstep);
        t->code = t->error != NULL ? SST_ETIMEOUT : SST_ENOMEM;
        return;
    }
    const sst_timeout_policy *p = t->timeout;
    sst_error err;
    sst_error_clear(&err);
    t->ext->detail = timeout_detail(p, kind, elapsed, &err);
    if (kind == 'r') {
        sst_task_fail(t, SST_ETIMEOUT, "'%s' exceeded its run timeout of %.3fs (elapsed: %.3fs)",
                      sst_task_vertex(t), p->run_timeout_s, elapsed);
    } else {
        sst_task_fail(t, SST_ETIMEOUT,
                      "'%s' exceeded its idle timeout of %.3fs without making progress "
                      "(elapsed: %.3fs)",
                      sst_task_vertex(t), p->idle_timeout_s, elapsed);
    }
    t->code = t->error != NULL && t->ext->detail != NULL ? SST_ETIMEOUT : SST_ENOMEM;
}

void sst_task_set_error_detail(sst_task *t, sst_value *detail) {
    sst__task_ext *x = sst__task_ext_of(t);
    if (x == NULL) {
        sst_value_unref(detail);
        return;
    }
    sst_value_unref(x->detail);
    x->detail = detail;
}

const sst_value *sst_task_failure(const sst_task *t) {
    return t != NULL && t->ext != NULL ? t->ext->failure : NULL;
}

bool sst__task_handled(const sst_task *t) {
    return t->code != SST_OK && t->code != SST_EINTERRUPT && t->code != SST_EPARENT &&
           t->code != SST_ENOMEM && !t->step_expired && t->origin == SST__NO_VERTEX &&
           t->p->v[t->vertex].handler != SST__NO_VERTEX;
}

/* {"node", "error": {"code", "message", and a timeout's details}} of the failed task @p t. */
static sst_value *failure_of(const sst_task *t, sst_error *err) {
    const char *msg = t->error != NULL ? t->error->msg : sst_strerror(t->code);
    const sst_value *detail = t->ext != NULL ? t->ext->detail : NULL;
    sst_value *e = sst_value_ref(detail != NULL ? detail : sst_object_empty());
    e = sst__set_take(e, "code", sst_string_new(sst_code_name(t->code), err), err);
    e = sst__set_take(e, "message", sst_string_new(msg, err), err);
    sst_value *f =
        sst__set_take(sst_object_empty(), "node", sst_string_new(sst_task_vertex(t), err), err);
    return sst__set_take(f, "error", e, err);
}

const sst_timeout_policy *sst__vertex_timeout(const sst__vertex *v) {
    return sst__has_timeout(&v->timeout) ? &v->timeout : NULL;
}

sst_code sst__task_to_handler(sst_task *t) {
    sst_error err;
    sst_error_clear(&err);
    sst__task_ext *x = sst__task_ext_of(t);
    sst_value *f = x != NULL ? failure_of(t, &err) : NULL;
    if (f == NULL) {
        return SST_ENOMEM;
    }
    sst__task_clear_outputs(t);
    sst_value_unref(x->failure);
    x->failure = f;
    x->failed_now = true;
    t->origin = t->vertex;
    t->vertex = t->p->v[t->vertex].handler;
    t->id_text[0] = '\0';
    t->timeout = sst__vertex_timeout(&t->p->v[t->vertex]);
    x->start_ns = 0;
    t->first_ns = 0;
    t->first_wall = 0;
    t->attempt = 1;
    t->retry_pending = false;
    t->resume = NULL;
    return SST_OK;
}

bool sst__retry_wanted(const sst_retry_policy *p, const sst_task *t) {
    if (p->retry_on_error != NULL) {
        sst_error e;
        sst_error_clear(&e);
        e.code = t->code;
        const sst_error *shown = t->error != NULL ? t->error : &e;
        return p->retry_on_error(shown, sst_task_vertex(t), p->retry_on_user_data);
    }
    return p->retry_on != NULL ? p->retry_on(t->code, p->retry_on_user_data)
                               : sst_code_is_transient(t->code);
}
