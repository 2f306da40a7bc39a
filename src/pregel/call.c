/* SPDX-License-Identifier: MIT */
/*
 * Calls: tasks started by a running task (the functional API's tasks).
 *
 * A call is a task of its own (struct sst_call holds its sst_task) with an
 * id made from its caller's id, its name and its position among the
 * caller's calls. It waits in the engine's queue until a worker with no
 * batch takes it, or until a thread joins it and runs it itself; a thread
 * that waits for a call another thread runs takes other waiting calls
 * meanwhile. Calls form a tree (a call joins only calls it started), so a
 * waiter never waits on itself.
 *
 * A call that succeeds is recorded in the run's registry (id -> {"task",
 * "name", "result"}) and reported through sst_run_opts.on_call; a call whose id is
 * in the registry (an earlier attempt of its caller) or in the resume
 * point's "calls" (an earlier run) is replayed: it returns that result
 * without running. The registry goes into the resume point of a superstep
 * that did not commit, and is dropped when one commits.
 */
#include <string.h>

#include "pregel_int.h"
#include "values/build.h"

void sst_call_opts_init(sst_call_opts *o) {
    memset(o, 0, sizeof *o);
    sst_retry_policy_init(&o->retry);
    o->retry.max_attempts = 1;
}

void sst__run_calls_init(sst__run_calls *rc, sst_engine *e) {
    memset(rc, 0, sizeof *rc);
    rc->e = e;
    pthread_mutex_init(&rc->mu, NULL);
}

void sst__run_calls_free(sst__run_calls *rc) {
    sst__run_calls_reset(rc);
    pthread_mutex_destroy(&rc->mu);
}

void sst__run_calls_reset(sst__run_calls *rc) {
    sst_value_unref(rc->done);
    sst_value_unref(rc->stored);
    rc->done = rc->stored = NULL;
    rc->stored_list = NULL;
}

bool sst__run_calls_load(sst__run_calls *rc, const sst_value *list, sst_error *err) {
    rc->stored_list = list;
    sst_value *by_id = sst_object_empty();
    for (size_t i = 0; i < sst_array_len(list) && by_id != NULL; i++) {
        const sst_value *e = sst_array_get(list, i);
        const sst_value *id = sst_object_get(e, "task");
        if (!sst_is_string(id) || sst_object_get(e, "result") == NULL) {
            sst_value_unref(by_id);
            sst__error(err, SST_ETYPE, "resume point: call %zu needs 'task' (its id) and 'result'",
                       i);
            return false;
        }
        by_id = sst_object_setv_take(by_id, id, sst_value_ref(e), err);
    }
    rc->stored = by_id;
    return by_id != NULL;
}

sst_value *sst__run_calls_list(const sst__run_calls *rc, sst_error *err) {
    sst_value *all = sst_value_ref(rc->stored_list != NULL ? rc->stored_list : sst_array_empty());
    for (size_t i = 0; all != NULL && i < sst_object_len(rc->done); i++) {
        all = sst__push_take(all, sst_value_ref(sst_object_value_at(rc->done, i)), err);
    }
    return all;
}

/* The result an earlier run or attempt recorded for call @p id (a new reference), or NULL. */
static sst_value *recorded(sst__run_calls *rc, const char *id, bool *found) {
    const sst_value *w = sst_object_get(rc->stored, id);
    if (w != NULL) {
        *found = true;
        return sst_value_ref(sst_object_get(w, "result"));
    }
    pthread_mutex_lock(&rc->mu);
    w = sst_object_get(rc->done, id);
    sst_value *res = w != NULL ? sst_value_ref(sst_object_get(w, "result")) : NULL;
    pthread_mutex_unlock(&rc->mu);
    *found = w != NULL;
    return res;
}

/* Records the result of call @p c in the registry, as a resume point's "calls" entry
 * {"task", "name", "result"}: a new reference to it, or NULL when out of memory. */
static sst_value *record(sst__run_calls *rc, sst_call *c, const char *id) {
    sst_value *e = sst__set_take(sst_object_empty(), "task", sst_string_new(id, NULL), NULL);
    e = sst__set_take(e, "name", sst_string_newn(c->name, c->name_len, NULL), NULL);
    e = sst__set_take(e, "result", sst_value_ref(c->result != NULL ? c->result : sst_null()), NULL);
    if (e == NULL) {
        return NULL;
    }
    pthread_mutex_lock(&rc->mu);
    sst_value *d = rc->done != NULL ? rc->done : sst_object_empty();
    rc->done = sst_object_set_take(d, id, sst_value_ref(e), NULL);
    bool ok = rc->done != NULL;
    pthread_mutex_unlock(&rc->mu);
    if (!ok) {
        sst_value_unref(e);
        return NULL;
    }
    return e;
}

sst_call *sst_task_call(sst_task *t, const char *name, sst_compute_fn fn, void *user_data,
                        sst_value *input, const sst_call_opts *opts, sst_error *err) {
    SST__ERR_LOCAL(err);
    size_t len = name != NULL ? strlen(name) : 0;
    if (t == NULL || fn == NULL || len == 0 || len > SST__VERTEX_NAME_MAX || t->rc == NULL) {
        sst_value_unref(input);
        sst__error(err, SST_EINVAL, "call: %s",
                   t == NULL || t->rc == NULL ? "not inside a running task"
                   : fn == NULL               ? "no function"
                                              : "the name must be 1 to 255 bytes");
        return NULL;
    }
    sst_call *c = sst__calloc(1, sizeof *c);
    char *copy = c != NULL ? sst__strndup(name, len) : NULL;
    if (copy == NULL) {
        sst__free(c);
        sst_value_unref(input);
        sst__enomem(err);
        return NULL;
    }
    c->name = copy;
    c->name_len = len;
    c->parent = t;
    c->fn = fn;
    c->user_data = user_data;
    if (opts != NULL) {
        c->opts = *opts;
    } else {
        sst_call_opts_init(&c->opts);
    }
    c->index = t->ncalls++;
    sst_task *ct = &c->task;
    sst__task_init(ct, t->p, t->ro, t->state, t->superstep, t->vertex, t->rc);
    ct->input = input != NULL ? input : sst_null();
    ct->self = c;
    if (t->calls_tail != NULL) {
        t->calls_tail->next = c;
    } else {
        t->calls = c;
    }
    t->calls_tail = c;

    /* The id is made here, on the caller's thread, before the call is queued: once queued,
     * the worker running it reads it while the caller may too (sst_call_id, a future's id);
     * made lazily, the two threads would both write it. */
    const char *id = sst_task_id(ct);
    sst__run_calls *rc = t->rc;
    /* Only an earlier run (stored) or an earlier attempt of the caller can have a result. */
    if (sst_object_len(rc->stored) > 0 || t->attempt > 1) {
        bool found;
        sst_value *res = recorded(rc, id, &found);
        if (found) {
            c->result = res;
            c->replayed = true;
            c->state = SST__CALL_DONE;
            return c;
        }
    }
    if (rc->resume_map != NULL && sst_object_len(rc->resume_map) > 0) {
        ct->resume = sst_object_get(rc->resume_map, id);
    }
    sst_engine *e = rc->e;
    if (!c->opts.pinned && e != NULL && e->nthreads > 0) {
        pthread_mutex_lock(&e->mu);
        c->qprev = e->cq_tail;
        if (e->cq_tail != NULL) {
            e->cq_tail->qnext = c;
        } else {
            e->cq_head = c;
        }
        e->cq_tail = c;
        c->queued = true;
        if (e->idle > 0) {
            pthread_cond_signal(&e->work_cv); /* busy workers look at the queue anyway */
        }
        pthread_mutex_unlock(&e->mu);
    }
    return c;
}

/* Takes @p c out of the engine's queue (under its mutex). */
static void unqueue(sst_engine *e, sst_call *c) {
    if (c->qprev != NULL) {
        c->qprev->qnext = c->qnext;
    } else {
        e->cq_head = c->qnext;
    }
    if (c->qnext != NULL) {
        c->qnext->qprev = c->qprev;
    } else {
        e->cq_tail = c->qprev;
    }
    c->qnext = c->qprev = NULL;
    c->queued = false;
}

/* Waits @p ms before a retry: the run's sleep hook, else a real sleep. */
static void sleep_ms(const sst_task *t, uint64_t ms) {
    if (t->ro->sleep != NULL) {
        t->ro->sleep(ms, t->ro->user_data);
    } else {
        sst__sleep_ms(ms);
    }
}

/* Runs one attempt of @p c; returns its code. */
static sst_code attempt(sst_call *c, unsigned n) {
    sst_task *t = &c->task;
    sst__task_clear_outputs(t);
    sst_value_unref(c->result);
    c->result = NULL;
    t->attempt = n;
    bool limited = false;
    if (sst__has_timeout(&c->opts.timeout)) {
        t->timeout = &c->opts.timeout;
        limited = sst__timeout_start(t);
    }
    sst_code code = c->fn(t, c->user_data);
    sst__task_join_calls(t);
    if (code == SST_OK && t->out_error != SST_OK) {
        code = t->out_error;
    }
    if (code == SST_EINTERRUPT && t->interrupt == NULL && !t->bubbled) {
        t->interrupt = sst_null();
    }
    if (code != SST_OK && code != SST_EINTERRUPT && t->error == NULL) {
        t->error = sst__malloc(sizeof *t->error);
        if (t->error != NULL) {
            sst__error(t->error, code, "%s", sst_strerror(code));
        }
    }
    if (code != SST_OK && code != SST_EINTERRUPT && t->error != NULL) {
        t->error->code = code;
    }
    t->code = code;
    if (limited && code != SST_EINTERRUPT) {
        sst__timeout_check(t); /* an attempt past its time fails with SST_ETIMEOUT */
    }
    return t->code;
}

/* Runs @p c on this thread (it was claimed): cache, attempts under its retry policy, record. */
static void run_call(sst_call *c) {
    sst_task *t = &c->task;
    sst_cache *cache = t->ro->cache;
    bool cacheable = c->opts.cache.enabled && cache != NULL && t->resume == NULL;
    sst_value *key = NULL;
    char ns[SST__VERTEX_NAME_MAX + 220];
    if (cacheable) {
        sst__cache_ns(t->ro->cache_ns, c->name, ns, sizeof ns);
        key = sst__cache_key(t, &c->opts.cache, NULL);
        sst_value *hit = NULL;
        if (sst_is_string(key) &&
            sst_cache_get(cache, ns, sst_string_cstr(key), &hit, NULL) == SST_OK && hit != NULL) {
            c->result = hit;
            t->cached = true;
            t->code = SST_OK;
            sst_value_unref(key);
            key = NULL;
            goto succeeded;
        }
    }
    const sst_retry_policy *p = &c->opts.retry;
    uint64_t rng = sst__hash_mix((uint64_t)(uintptr_t)c ^ sst__now_ns()) | 1;
    for (unsigned n = 1;; n++) {
        sst_code code = attempt(c, n);
        if (code == SST_OK || code == SST_EINTERRUPT || code == SST_ENOMEM ||
            n >= p->max_attempts || !sst__retry_wanted(p, t)) {
            break;
        }
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        sleep_ms(t, sst_retry_policy_delay_ms(p, n, (double)(rng >> 11) / 9007199254740992.0));
    }
    if (t->code != SST_OK) {
        sst_value_unref(key);
        return;
    }
    if (sst_is_string(key)) {
        (void)!sst_cache_set(cache, ns, sst_string_cstr(key),
                             c->result != NULL ? c->result : sst_null(), c->opts.cache.ttl_s, NULL);
    }
    sst_value_unref(key);
succeeded:;
    sst_value *entry = record(t->rc, c, sst_task_id(t));
    if (entry == NULL) {
        t->code = SST_ENOMEM;
        return;
    }
    if (t->ro->on_call != NULL) {
        t->ro->on_call(t, entry, t->ro->user_data);
    }
    sst_value_unref(entry);
}

/* Marks @p c done and wakes its waiters (takes the engine's mutex when there is one). */
static void finish(sst_engine *e, sst_call *c) {
    if (e == NULL) {
        c->state = SST__CALL_DONE;
        return;
    }
    pthread_mutex_lock(&e->mu);
    c->state = SST__CALL_DONE;
    if (e->call_waiters > 0) {
        pthread_cond_broadcast(&e->call_cv);
    }
    pthread_mutex_unlock(&e->mu);
}

bool sst__pool_run_one_call(sst_engine *e) {
    pthread_mutex_lock(&e->mu);
    sst_call *c = e->cq_head;
    if (c != NULL) {
        unqueue(e, c);
        c->state = SST__CALL_RUNNING;
    }
    pthread_mutex_unlock(&e->mu);
    if (c == NULL) {
        return false;
    }
    run_call(c);
    finish(e, c);
    return true;
}

/* Waits for @p c, running it (or other waiting calls) on this thread meanwhile. */
static void wait_for(sst_call *c) {
    sst_engine *e = c->task.rc->e;
    if (e == NULL) {
        if (c->state == SST__CALL_WAITING) {
            c->state = SST__CALL_RUNNING;
            run_call(c);
            c->state = SST__CALL_DONE;
        }
        return;
    }
    pthread_mutex_lock(&e->mu);
    while (c->state != SST__CALL_DONE) {
        sst_call *run = NULL;
        if (c->state == SST__CALL_WAITING) {
            run = c;
        } else if (e->cq_head != NULL) {
            run = e->cq_head; /* help while the call runs elsewhere */
        }
        if (run == NULL) {
            e->call_waiters++;
            pthread_cond_wait(&e->call_cv, &e->mu);
            e->call_waiters--;
            continue;
        }
        if (run->queued) {
            unqueue(e, run);
        }
        run->state = SST__CALL_RUNNING;
        pthread_mutex_unlock(&e->mu);
        run_call(run);
        pthread_mutex_lock(&e->mu);
        run->state = SST__CALL_DONE;
        if (e->call_waiters > 0) {
            pthread_cond_broadcast(&e->call_cv);
        }
    }
    pthread_mutex_unlock(&e->mu);
}

sst_code sst_call_join(sst_call *c, sst_error *err) {
    SST__ERR_LOCAL(err);
    if (c == NULL) {
        return sst__error(err, SST_EINVAL, "call: join of a NULL call");
    }
    if (!c->replayed) {
        wait_for(c); /* reads the state under the engine's mutex */
    }
    const sst_task *t = &c->task;
    if (t->code == SST_OK) {
        return SST_OK;
    }
    if (t->code == SST_EINTERRUPT) {
        c->parent->bubbled = true;
        return sst__error(err, SST_EINTERRUPT, "task '%s' interrupted", c->name);
    }
    sst__error(err, t->code, "%s", t->error != NULL ? t->error->msg : sst_strerror(t->code));
    return t->code;
}

const sst_value *sst_call_result(const sst_call *c) {
    if (c == NULL || c->state != SST__CALL_DONE || c->task.code != SST_OK) {
        return NULL;
    }
    return c->result != NULL ? c->result : sst_null();
}

const char *sst_call_id(sst_call *c) {
    return sst_task_id(&c->task);
}

const char *sst_call_name(const sst_call *c) {
    return c->name;
}

bool sst_call_replayed(const sst_call *c) {
    return c != NULL && c->replayed;
}

sst_code sst_task_return(sst_task *t, sst_value *value, sst_error *err) {
    SST__ERR_LOCAL(err);
    if (t == NULL || t->self == NULL) {
        sst_value_unref(value);
        return sst__error(err, SST_EINVAL, "return: not inside a call");
    }
    sst_value_unref(t->self->result);
    t->self->result = value != NULL ? value : sst_null();
    return SST_OK;
}

sst_call *sst_task_self_call(const sst_task *t) {
    return t != NULL ? t->self : NULL;
}

void sst__task_join_calls(sst_task *t) {
    for (sst_call *c = t->calls; c != NULL; c = c->next) {
        if (!c->replayed) {
            wait_for(c);
        }
    }
}

void sst__task_free_calls(sst_task *t) {
    sst__task_join_calls(t); /* a caller that failed before joining still waits for its calls */
    sst_call *c = t->calls;
    while (c != NULL) {
        sst_call *next = c->next;
        sst__task_destroy(&c->task);
        sst_value_unref(c->result);
        sst__free(c->name);
        sst__free(c);
        c = next;
    }
    t->calls = t->calls_tail = NULL;
    t->ncalls = 0;
    t->bubbled = false;
}

sst_value *sst__call_interrupts(const sst_task *t, const char *owner, sst_value *list,
                                sst_error *err) {
    for (sst_call *c = t->calls; c != NULL && list != NULL; c = c->next) {
        if (c->task.code != SST_EINTERRUPT) {
            continue;
        }
        if (c->task.interrupt != NULL) {
            sst_value *o = sst__set_take(sst_object_empty(), "vertex",
                                         sst_string_newn(c->name, c->name_len, err), err);
            o = sst__set_take(o, "task", sst_string_new(sst_call_id(c), err), err);
            o = sst__set_take(o, "value", sst_value_ref(c->task.interrupt), err);
            o = sst__set_take(o, "owner", sst_string_new(owner, err), err);
            list = o != NULL ? sst_array_push_take(list, o, err) : (sst_value_unref(list), NULL);
        }
        list = list != NULL ? sst__call_interrupts(&c->task, owner, list, err) : NULL;
    }
    return list;
}
