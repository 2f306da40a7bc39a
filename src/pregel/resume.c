/* SPDX-License-Identifier: MIT */
/*
 * Tasks and their writes as values, and back: what a resume point is made
 * of (sst_run_result_resume_point), so that a run stopped by an interrupt,
 * a failure or a crash (through the checkpoint layer) can go on.
 */
#include <string.h>

#include "pregel_int.h"
#include "values/build.h"

static sst_value *str(const char *s, sst_error *err) {
    return sst_string_new(s, err);
}

sst_value *sst__task_descriptor(const sst_task *t, sst_error *err) {
    /* No task id: it follows from the run key, the superstep and these fields. An error
     * handler's task is described as the task that failed (its pending write converts it). */
    bool handler = t->origin != SST__NO_VERTEX;
    const sst__vertex *v = &t->p->v[handler ? t->origin : t->vertex];
    sst_value *o = sst__set_take(sst_object_empty(), "vertex", str(v->name, err), err);
    if (t->send_index != UINT64_MAX) {
        o = sst__set_take(o, "send", sst_int_new((int64_t)t->send_index, err), err);
        o = sst__set_take(o, "input", sst_value_ref(t->input), err);
    }
    if (!handler && t->timeout != NULL && t->timeout != &v->timeout) {
        o = sst__set_take(o, "timeout", sst_timeout_policy_value(t->timeout, err),
                          err); /* a Send's own */
    }
    if (t->inbox != NULL) {
        o = sst__set_take(o, "inbox", sst_value_ref(t->inbox), err);
    }
    return o;
}

/* {"vertex", "task", "failure"}: the failed task an error handler's task stands for. */
static sst_value *origin_value(const sst_task *t, sst_error *err) {
    const char *name = t->p->v[t->origin].name;
    char id[33];
    sst_task_id_of(t->ro->run_key, t->superstep, t->send_index, name, id);
    sst_value *o = sst__set_take(sst_object_empty(), "vertex", str(name, err), err);
    o = sst__set_take(o, "task", str(id, err), err);
    const sst_value *f = t->ext != NULL ? t->ext->failure : NULL;
    return sst__set_take(o, "failure", sst_value_ref(f != NULL ? f : sst_null()), err);
}

sst_value *sst__task_writes(const sst_task *t, sst_error *err) {
    sst_value *o = sst__set_take(sst_object_empty(), "vertex", str(sst_task_vertex(t), err), err);
    o = sst__set_take(o, "task", str(sst_task_id(t), err), err);
    if (t->origin != SST__NO_VERTEX) {
        o = sst__set_take(o, "origin", origin_value(t, err), err);
        if (t->code != SST_OK) { /* the handler has not finished: nothing of it is kept */
            o = sst__set_take(o, "done", sst_bool(false), err);
            o = sst__set_take(o, "delta", sst_object_empty(), err);
            o = sst__set_take(o, "activate", sst_array_empty(), err);
            o = sst__set_take(o, "send", sst_array_empty(), err);
            o = sst__set_take(o, "message", sst_array_empty(), err);
            o = sst__set_take(o, "halt", sst_bool(true), err);
            return sst__set_take(o, "events", sst_array_empty(), err);
        }
    }
    o = sst__set_take(o, "delta", t->delta != NULL ? sst_value_ref(t->delta) : sst_object_empty(),
                      err);
    sst_value *act = sst_array_empty(), *send = sst_array_empty(), *msg = sst_array_empty();
    for (size_t i = 0; i < t->nout && o != NULL && act != NULL && send != NULL && msg != NULL;
         i++) {
        const sst__out *e = &t->out[i];
        sst_value *to = str(t->p->v[e->vertex].name, err);
        if (e->kind == SST__OUT_ACTIVATE) {
            act = to != NULL ? sst_array_push_take(act, to, err) : (sst_value_unref(act), NULL);
            continue;
        }
        sst_value *x = sst__set_take(sst_object_empty(), "to", to, err);
        x = sst__set_take(x, e->kind == SST__OUT_SEND ? "input" : "value", sst_value_ref(e->value),
                          err);
        const sst_timeout_policy *tp = sst__out_timeout(t, i);
        if (tp != NULL) {
            x = sst__set_take(x, "timeout", sst_timeout_policy_value(tp, err), err);
        }
        sst_value **list = e->kind == SST__OUT_SEND ? &send : &msg;
        *list = x != NULL ? sst_array_push_take(*list, x, err) : (sst_value_unref(*list), NULL);
    }
    o = sst__set_take(o, "activate", act, err);
    o = sst__set_take(o, "send", send, err);
    o = sst__set_take(o, "message", msg, err);
    o = sst__set_take(o, "halt", sst_bool(t->halt), err);
    o = sst__set_take(o, "events", t->events != NULL ? sst_value_ref(t->events) : sst_array_empty(),
                      err);
    return o;
}

/* Looks up a vertex named by a string value; SIZE_MAX (with err) when unknown. */
static size_t vertex_of(const sst_pregel *p, const sst_value *name, const char *what,
                        sst_error *err) {
    size_t v = sst_is_string(name)
                   ? sst__pregel_find(p, sst_string_cstr(name), sst_string_len(name))
                   : SIZE_MAX;
    if (v == SIZE_MAX) {
        sst__error(err, SST_EINVAL, "resume point: %s names unknown vertex '%s'", what,
                   sst_is_string(name) ? sst_string_cstr(name) : "(not a string)");
    }
    return v;
}

sst_code sst__task_restore(sst_task *t, const sst_value *w, sst_error *err) {
    sst__task_clear_outputs(t);
    const sst_value *delta = sst_object_get(w, "delta");
    if (delta != NULL && !sst_is_object(delta)) {
        return sst__error(err, SST_ETYPE, "resume point: pending delta of task %s is not an object",
                          sst_task_id(t));
    }
    t->delta = sst_object_len(delta) > 0 ? sst_value_ref(delta) : NULL;
    t->halt = sst_bool_value(sst_object_get(w, "halt"));
    const sst_value *ev = sst_object_get(w, "events");
    t->events = sst_array_len(ev) > 0 ? sst_value_ref(ev) : NULL;
    static const char *const lists[] = {"activate", "send", "message"};
    for (int k = 0; k < 3; k++) {
        const sst_value *list = sst_object_get(w, lists[k]);
        for (size_t i = 0; i < sst_array_len(list); i++) {
            const sst_value *e = sst_array_get(list, i);
            const sst_value *to = k == 0 ? e : sst_object_get(e, "to");
            size_t v = vertex_of(t->p, to, lists[k], err);
            if (v == SIZE_MAX) {
                return SST_EINVAL;
            }
            const char *name = t->p->v[v].name;
            const sst_value *val = sst_object_get(e, k == 1 ? "input" : "value");
            sst_timeout_policy tp;
            bool own = k == 1 && sst_timeout_policy_from_value(sst_object_get(e, "timeout"), &tp);
            sst_code rc =
                k == 0   ? sst_task_activate(t, name, err)
                : k == 1 ? sst_task_send_timeout(t, name, sst_value_ref(val), own ? &tp : NULL, err)
                         : sst_task_message(t, name, sst_value_ref(val), err);
            if (rc != SST_OK) {
                return rc;
            }
        }
    }
    t->code = SST_OK;
    t->attempt = 0;
    t->replayed = true;
    return SST_OK;
}

sst_code sst__task_from_descriptor(sst_task *t, const sst_pregel *p, const sst_value *d,
                                   sst_error *err) {
    size_t v = vertex_of(p, sst_object_get(d, "vertex"), "a task", err);
    if (v == SIZE_MAX) {
        return SST_EINVAL;
    }
    t->vertex = (uint32_t)v;
    t->timeout = sst__vertex_timeout(&p->v[v]); /* the task was made for vertex 0 */
    const sst_value *send = sst_object_get(d, "send");
    if (send != NULL) {
        if (!sst_is_int(send) || sst_int_value(send) < 0) {
            return sst__error(err, SST_ETYPE, "resume point: task 'send' must be an index");
        }
        t->send_index = (uint64_t)sst_int_value(send);
        const sst_value *in = sst_object_get(d, "input");
        t->input = sst_value_ref(in != NULL ? in : sst_null());
    } else {
        t->send_index = UINT64_MAX;
    }
    const sst_value *tm = sst_object_get(d, "timeout");
    if (tm != NULL) {
        sst__task_ext *x = sst__task_ext_of(t);
        if (x == NULL) {
            return sst__enomem(err);
        }
        if (!sst_timeout_policy_from_value(tm, &x->own_timeout)) {
            return sst__error(err, SST_ETYPE, "resume point: task 'timeout' must hold numbers");
        }
        t->timeout = &x->own_timeout;
    }
    const sst_value *inbox = sst_object_get(d, "inbox");
    if (inbox != NULL) {
        if (!sst_is_array(inbox)) {
            return sst__error(err, SST_ETYPE, "resume point: task 'inbox' must be an array");
        }
        t->inbox = sst_value_ref(inbox);
    }
    return SST_OK;
}

sst_code sst__task_restore_handler(sst_task *t, const sst_value *w, sst_error *err) {
    const sst_value *origin = sst_object_get(w, "origin");
    size_t v = vertex_of(t->p, sst_object_get(w, "vertex"), "an error handler", err);
    if (v == SIZE_MAX) {
        return SST_EINVAL;
    }
    if (t->p->v[t->vertex].handler != v) {
        return sst__error(err, SST_EINVAL,
                          "resume point: '%s' does not handle the errors of vertex '%s'",
                          t->p->v[v].name, sst_task_vertex(t));
    }
    sst__task_ext *x = sst__task_ext_of(t);
    if (x == NULL) {
        return sst__enomem(err);
    }
    sst_value_unref(x->failure);
    const sst_value *f = sst_object_get(origin, "failure");
    x->failure = sst_value_ref(f != NULL ? f : sst_null());
    t->origin = t->vertex;
    t->vertex = (uint32_t)v;
    t->id_text[0] = '\0';
    t->timeout = sst__vertex_timeout(&t->p->v[v]);
    return SST_OK;
}
