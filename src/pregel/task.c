/* SPDX-License-Identifier: MIT */
/*
 * A task: what a compute function sees (inputs) and produces (delta,
 * outbox, status). Each attempt starts from empty outputs; a failed or
 * interrupted attempt's outputs are dropped.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "pregel_int.h"

void sst__task_init(sst_task *t, const sst_pregel *p, const sst_run_opts *ro,
                    const sst_value *state, uint64_t superstep, uint32_t vertex,
                    struct sst__run_calls *rc) {
    memset(t, 0, sizeof *t);
    t->p = p;
    t->ro = ro;
    t->state = state;
    t->superstep = superstep;
    t->vertex = vertex;
    t->send_index = UINT64_MAX;
    t->out = t->out_inline;
    t->outcap = SST__OUT_INLINE;
    t->origin = SST__NO_VERTEX;
    t->rc = rc;
}

const char *sst_task_vertex(const sst_task *t) {
    return t->self != NULL ? t->self->name : t->p->v[t->vertex].name;
}

/*
 * The deterministic task id: a 128-bit hash of (run key, superstep, vertex,
 * vertex task or Send index), so stored writes map back to their tasks after
 * a restart. A vertex's task makes it on first use, on its own thread (most
 * never need it); a call's is made by sst_task_call before the call is queued,
 * since its caller and the worker running it both read it.
 */
#define TASK_NAME_MAX (SST__VERTEX_NAME_MAX + 40)

static void task_id(const char *run_key, uint64_t superstep, uint64_t send_index, const char *name,
                    size_t name_len, char out[33]) {
    unsigned char buf[64 + TASK_NAME_MAX];
    size_t n = 0;
    for (int i = 0; i < 8; i++) {
        buf[n++] = (unsigned char)(superstep >> (8 * i));
    }
    for (int i = 0; i < 8; i++) {
        buf[n++] = (unsigned char)(send_index >> (8 * i));
    }
    name_len = name_len > TASK_NAME_MAX ? TASK_NAME_MAX : name_len;
    memcpy(buf + n, name, name_len);
    n += name_len;
    uint64_t key = sst__hash_bytes(run_key, strlen(run_key), 0x72756e6b6579);
    uint64_t hi = sst__hash_bytes(buf, n, key);
    uint64_t lo = sst__hash_bytes(buf, n, key ^ 0x5a5a5a5a5a5a5a5aull);
    static const char hex[] = "0123456789abcdef";
    for (int i = 0; i < 16; i++) {
        out[i] = hex[(hi >> (60 - 4 * i)) & 15];
        out[16 + i] = hex[(lo >> (60 - 4 * i)) & 15];
    }
    out[32] = '\0';
}

const char *sst_task_id(const sst_task *ct) {
    sst_task *t = (sst_task *)ct; /* a cache: see above for who fills it */
    if (t->id_text[0] == '\0' && t->self != NULL) {
        /* A call: its caller's id, its position among the caller's calls and its name. */
        const sst_call *c = t->self;
        task_id(sst_task_id(c->parent), t->superstep, c->index, c->name, c->name_len, t->id_text);
    }
    if (t->id_text[0] == '\0') {
        const sst__vertex *v = &t->p->v[t->vertex];
        if (t->origin == SST__NO_VERTEX) {
            task_id(t->ro->run_key, t->superstep, t->send_index, v->name, v->name_len, t->id_text);
            return t->id_text;
        }
        /* An error handler's task: its own id, made from the failed task's and its name. */
        const sst__vertex *o = &t->p->v[t->origin];
        char name[TASK_NAME_MAX + 1];
        task_id(t->ro->run_key, t->superstep, t->send_index, o->name, o->name_len, name);
        size_t len = v->name_len > TASK_NAME_MAX - 33 ? TASK_NAME_MAX - 33 : v->name_len;
        name[32] = '|';
        memcpy(name + 33, v->name, len);
        task_id(t->ro->run_key, t->superstep, t->send_index, name, 33 + len, t->id_text);
    }
    return t->id_text;
}

void sst_task_id_of(const char *run_key, uint64_t superstep, uint64_t send_index,
                    const char *vertex, char out[33]) {
    task_id(run_key != NULL ? run_key : "", superstep, send_index, vertex, strlen(vertex), out);
}

void *sst_task_run_user_data(const sst_task *t) {
    return t->ro->user_data;
}

uint64_t sst_task_superstep(const sst_task *t) {
    return t->superstep;
}

double sst_task_first_attempt_time(const sst_task *ct) {
    sst_task *t = (sst_task *)ct; /* a cache, filled by the task's own thread */
    if (t->first_wall != 0) {
        return t->first_wall; /* every attempt sees the same value */
    }
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    double now = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
    uint64_t mono = sst__now_ns();
    /* Wall time of attempt 1's start: now, less the monotonic time since then. */
    t->first_wall =
        t->first_ns != 0 && mono >= t->first_ns ? now - (double)(mono - t->first_ns) / 1e9 : now;
    return t->first_wall;
}

unsigned sst_task_attempt(const sst_task *t) {
    return t->attempt;
}

const sst_value *sst_task_state(const sst_task *t) {
    return t->state;
}

const sst_value *sst_task_input(const sst_task *t) {
    return t->input;
}

const sst_value *sst_task_inbox(const sst_task *t) {
    return t->inbox != NULL ? t->inbox : sst_array_empty();
}

const sst_value *sst_task_config(const sst_task *t) {
    return t->p->v[t->vertex].config;
}

const sst_value *sst_task_delta(const sst_task *t) {
    return t->delta;
}

const sst_value *sst_task_resume_value(const sst_task *t, size_t k) {
    return t->resume != NULL ? sst_array_get(t->resume, k) : NULL;
}

sst_code sst_task_emit(sst_task *t, sst_value *value, sst_error *err) {
    SST__ERR_LOCAL(err);
    if (value == NULL) {
        return sst__error(err, SST_EINVAL, "vertex '%s': emit of a NULL value", sst_task_vertex(t));
    }
    t->events = sst_array_push_take(t->events != NULL ? t->events : sst_array_empty(), value, err);
    if (t->timeout != NULL && !t->timeout->heartbeat_only) {
        sst_task_heartbeat(t);
    }
    return t->events != NULL ? SST_OK : sst__code(err);
}

sst_code sst_task_write(sst_task *t, const char *field, sst_value *value, sst_error *err) {
    SST__ERR_LOCAL(err);
    if (field == NULL || value == NULL) {
        sst_value_unref(value);
        return sst__error(err, SST_EINVAL, "vertex '%s': write with a NULL %s", sst_task_vertex(t),
                          field == NULL ? "field" : "value");
    }
    sst_value *d = t->delta != NULL ? t->delta : sst_object_empty();
    t->delta = sst_object_set_take(d, field, value, err);
    return t->delta != NULL ? SST_OK : sst__code(err);
}

sst_code sst_task_write_all(sst_task *t, sst_value *delta, sst_error *err) {
    SST__ERR_LOCAL(err);
    if (!sst_is_object(delta)) {
        sst__error(err, SST_ETYPE, "vertex '%s': a delta must be an object, got %s",
                   sst_task_vertex(t),
                   delta == NULL ? "NULL" : sst_type_name(sst_value_type(delta)));
        sst_value_unref(delta);
        return SST_ETYPE;
    }
    if (t->delta == NULL) {
        t->delta = delta;
        return SST_OK;
    }
    for (size_t i = 0; i < sst_object_len(delta); i++) {
        t->delta = sst_object_setv_take(t->delta, sst_object_key_at(delta, i),
                                        sst_value_ref(sst_object_value_at(delta, i)), err);
        if (t->delta == NULL) {
            sst_value_unref(delta);
            return sst__code(err);
        }
    }
    sst_value_unref(delta);
    return SST_OK;
}

/*
 * Records an outbox entry. An unknown target fails the task (never a silent
 * drop). @p err is not NULL (the public callers use SST__ERR_LOCAL).
 */
static sst_code push_out(sst_task *t, sst__out_kind kind, const char *vertex, sst_value *value,
                         sst_error *err) {
    static const char *const verbs[] = {"activates", "sends to", "messages"};
    size_t target = vertex != NULL ? sst__pregel_find(t->p, vertex, strlen(vertex)) : SIZE_MAX;
    if (t->self != NULL) {
        target = SIZE_MAX; /* a call routes nothing: its result is all it gives */
    }
    if (target == SIZE_MAX) {
        sst_value_unref(value);
        if (t->self != NULL) {
            sst__error(err, SST_EINVAL, "task '%s' %s vertex '%s': a task only returns a result",
                       sst_task_vertex(t), verbs[kind], vertex != NULL ? vertex : "(NULL)");
        } else {
            sst__error(err, SST_EINVAL, "vertex '%s' %s unknown vertex '%s'", sst_task_vertex(t),
                       verbs[kind], vertex != NULL ? vertex : "(NULL)");
        }
        if (t->out_error == SST_OK) {
            t->out_error = SST_EINVAL;
            if (t->error == NULL) {
                t->error = sst__malloc(sizeof *t->error);
            }
            if (t->error != NULL) {
                *t->error = *err;
            }
        }
        return SST_EINVAL;
    }
    if (t->nout == t->outcap) {
        size_t cap = t->outcap * 2;
        sst__out *o;
        if (t->out == t->out_inline) {
            o = sst__malloc(cap * sizeof *o);
            if (o != NULL) {
                memcpy(o, t->out_inline, sizeof t->out_inline);
            }
        } else {
            o = sst__realloc(t->out, cap * sizeof *o);
        }
        if (o == NULL) {
            sst_value_unref(value);
            return sst__enomem(err);
        }
        t->out = o;
        t->outcap = cap;
    }
    t->out[t->nout].kind = kind;
    t->out[t->nout].vertex = (uint32_t)target;
    t->out[t->nout].value = value;
    t->nout++;
    return SST_OK;
}

sst_code sst_task_activate(sst_task *t, const char *vertex, sst_error *err) {
    SST__ERR_LOCAL(err);
    return push_out(t, SST__OUT_ACTIVATE, vertex, NULL, err);
}

sst_code sst_task_send(sst_task *t, const char *vertex, sst_value *payload, sst_error *err) {
    SST__ERR_LOCAL(err);
    return push_out(t, SST__OUT_SEND, vertex, payload != NULL ? payload : sst_null(), err);
}

sst_code sst_task_message(sst_task *t, const char *vertex, sst_value *message, sst_error *err) {
    SST__ERR_LOCAL(err);
    return push_out(t, SST__OUT_MESSAGE, vertex, message != NULL ? message : sst_null(), err);
}

/* Room for one more timed Send in @p x. */
static bool grow_timed(sst__task_ext *x) {
    if (x->ntimed < x->timedcap) {
        return true;
    }
    size_t cap = x->timedcap ? x->timedcap * 2 : 4;
    sst__timed_send *n = sst__realloc(x->timed, cap * sizeof *n);
    if (n == NULL) {
        return false;
    }
    x->timed = n;
    x->timedcap = cap;
    return true;
}

sst_code sst_task_send_timeout(sst_task *t, const char *vertex, sst_value *payload,
                               const sst_timeout_policy *timeout, sst_error *err) {
    SST__ERR_LOCAL(err);
    bool own = timeout != NULL && sst__has_timeout(timeout);
    if (own && !sst_timeout_policy_valid(timeout)) {
        sst_value_unref(payload);
        return sst__error(err, SST_EINVAL, "vertex '%s': a Send's timeout must be positive",
                          sst_task_vertex(t));
    }
    sst__task_ext *x = own ? sst__task_ext_of(t) : NULL;
    if (own && (x == NULL || !grow_timed(x))) {
        sst_value_unref(payload);
        return sst__enomem(err);
    }
    sst_code rc = push_out(t, SST__OUT_SEND, vertex, payload != NULL ? payload : sst_null(), err);
    if (rc == SST_OK && own) {
        x->timed[x->ntimed].out = t->nout - 1;
        x->timed[x->ntimed].policy = *timeout;
        x->ntimed++;
    }
    return rc;
}

void sst_task_vote_halt(sst_task *t) {
    t->halt = true;
}

const sst_error *sst_task_error(const sst_task *t) {
    return t->error;
}

sst_code sst_task_fail(sst_task *t, sst_code code, const char *fmt, ...) {
    if (code == SST_OK || code == SST_EINTERRUPT) {
        code = SST_ETASK;
    }
    if (t->error == NULL) {
        t->error = sst__malloc(sizeof *t->error);
    }
    if (t->error != NULL) {
        va_list ap;
        va_start(ap, fmt);
        sst__verror(t->error, code, fmt, ap);
        va_end(ap);
    }
    return code;
}

sst_code sst_task_interrupt(sst_task *t, sst_value *value) {
    sst_value_unref(t->interrupt);
    t->interrupt = value != NULL ? value : sst_null();
    return SST_EINTERRUPT;
}

void sst__task_clear_outputs(sst_task *t) {
    if (t->calls != NULL || t->ncalls != 0) {
        sst__task_free_calls(t);
    }
    sst_value_unref(t->delta);
    t->delta = NULL;
    sst_value_unref(t->raw_delta);
    t->raw_delta = NULL;
    for (size_t i = 0; i < t->nout; i++) {
        sst_value_unref(t->out[i].value);
    }
    t->nout = 0;
    sst__task_ext_clear(t);
    t->cached = false;
    t->halt = false;
    t->code = SST_OK;
    t->out_error = SST_OK;
    sst__free(t->error);
    t->error = NULL;
    sst_value_unref(t->interrupt);
    t->interrupt = NULL;
    sst_value_unref(t->events);
    t->events = NULL;
}

void sst__task_destroy(sst_task *t) {
    sst__task_clear_outputs(t);
    if (t->out != t->out_inline) {
        sst__free(t->out);
    }
    t->out = t->out_inline;
    t->outcap = SST__OUT_INLINE;
    sst_value_unref(t->input);
    t->input = NULL;
    sst_value_unref(t->inbox);
    t->inbox = NULL;
    if (t->ext != NULL) {
        sst_value_unref(t->ext->failure);
        sst_value_unref(t->ext->cache_key);
        sst__free(t->ext->timed);
        sst__free(t->ext);
        t->ext = NULL;
    }
}

/* Makes sure a failed task carries an error message. */
static void ensure_error(sst_task *t, sst_code code, const char *fallback) {
    if (t->error == NULL) {
        t->error = sst__malloc(sizeof *t->error);
        if (t->error == NULL) {
            t->code = SST_ENOMEM;
            return;
        }
        sst__error(t->error, code, "%s", fallback);
    }
}

void sst__held_enter(sst__held *h) {
    if (h != NULL && h->hook != NULL && !h->in) {
        h->token = h->hook->enter(h->hook->user_data);
        h->in = true;
    }
}

void sst__held_leave(sst__held *h) {
    if (h != NULL && h->in) {
        h->in = false;
        h->hook->leave(h->token, h->hook->user_data);
    }
}

void sst__task_run(sst_task *t) {
    sst__task_run_held(t, NULL);
}

void sst__task_run_held(sst_task *t, sst__held *h) {
    if (t->replayed) {
        return; /* its writes came from the pending writes of an earlier run */
    }
    sst__task_clear_outputs(t);
    const sst__vertex *v = &t->p->v[t->vertex];
    bool cacheable = sst__task_cacheable(t);
    if (cacheable) {
        sst__held_leave(h); /* the cache may wait (its backend's lock, I/O) */
        if (sst__cache_lookup(t)) {
            return; /* the writes of an earlier run with the same key */
        }
    }
    uint64_t t0 = t->timed ? sst__now_ns() : 0;
    if (t->first_ns == 0) {
        t->first_ns = t0; /* the clock read the duration needs anyway */
    }
    bool limited = sst__task_limited(t) && sst__timeout_start(t);
    sst__held_enter(h);
    sst_code code = v->fn(t, v->user_data);
    if (t->calls != NULL) {
        sst__held_leave(h);      /* the calls may run on threads that need what it holds */
        sst__task_join_calls(t); /* its calls end with it */
    }
    t->duration_ns = t->timed ? sst__now_ns() - t0 : 0;
    if (code == SST_OK && t->out_error != SST_OK) {
        code = t->out_error; /* an outbox call named an unknown vertex */
    }
    if (code == SST_OK && t->delta != NULL) {
        /* Fix ids (add_messages) now, on the worker, so stored writes replay exactly. */
        sst_error perr;
        t->raw_delta = t->keep_raw ? sst_value_ref(t->delta) : NULL; /* for the updates stream */
        t->delta = sst_schema_prepare_delta(t->p->schema, t->delta, &perr);
        if (t->delta == NULL) {
            code = perr.code;
            if (t->error == NULL) {
                t->error = sst__malloc(sizeof *t->error);
            }
            if (t->error != NULL) {
                *t->error = perr;
            }
        }
    }
    if (code == SST_EINTERRUPT && t->interrupt == NULL && !t->bubbled) {
        t->interrupt = sst_null(); /* (a call's interrupt is the call's own) */
    }
    if (code != SST_OK && code != SST_EINTERRUPT) {
        ensure_error(t, code, sst_strerror(code));
        if (t->error != NULL) {
            t->error->code = code;
        }
    }
    t->code = code;
    if (limited) {
        sst__timeout_check(t);
    }
    if (cacheable && t->code == SST_OK) {
        sst__held_leave(h);
        sst__cache_store(t);
    }
}
