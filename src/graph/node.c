/* SPDX-License-Identifier: MIT */
/*
 * Running one node as a Pregel task: the node context (state, update,
 * goto, interrupt, emit), then routing: Command goto, or the static edges,
 * joins and conditional edges evaluated on the state plus the node's own
 * update. A route to an unknown node or a router result of the wrong type
 * fails the node with an error naming both; nothing is dropped silently.
 */
#include <stdio.h>
#include <string.h>

#include "graph_node.h"
#include "stream.h"
#include "values/build.h"

sst_code sst_node_report_usage(sst_node_ctx *ctx, const sst_value *usage, sst_error *err) {
    return sst__invoke_add_usage(sst_task_run_user_data(ctx->task), usage, err);
}

const sst_value *sst_node_state(const sst_node_ctx *ctx) {
    return ctx->view != NULL ? ctx->view : sst_task_state(ctx->task);
}

/* A field nodes may not write: "__" names, except SST_ROOT in a root graph. */
static bool reserved(const sst_node_ctx *ctx, const char *field) {
    return strncmp(field, "__", 2) == 0 && !(ctx->cg->g->root && strcmp(field, SST_ROOT) == 0);
}

const sst_value *sst_node_input(const sst_node_ctx *ctx) {
    return sst_task_input(ctx->task);
}

const char *sst_node_name(const sst_node_ctx *ctx) {
    return ctx->call_name != NULL ? ctx->call_name : ctx->cg->g->nodes[ctx->node].name;
}

uint64_t sst_node_step(const sst_node_ctx *ctx) {
    return sst_task_superstep(ctx->task);
}

unsigned sst_node_attempt(const sst_node_ctx *ctx) {
    return sst_task_attempt(ctx->task);
}

const sst_value *sst_node_context(const sst_node_ctx *ctx) {
    const sst_invoke_opts *o = sst__invoke_opts(sst_task_run_user_data(ctx->task));
    return o != NULL ? o->context : NULL;
}

const sst_value *sst_node_config(const sst_node_ctx *ctx) {
    const sst_invoke_opts *o = sst__invoke_opts(sst_task_run_user_data(ctx->task));
    return o != NULL ? o->config : NULL;
}

uint64_t sst_node_remaining_steps(const sst_node_ctx *ctx) {
    uint64_t stop = sst__invoke_stop_step(sst_task_run_user_data(ctx->task));
    uint64_t step = sst_task_superstep(ctx->task);
    return stop > step ? stop - step : 0;
}

bool sst_node_is_last_step(const sst_node_ctx *ctx) {
    return sst_node_remaining_steps(ctx) <= 1;
}

const char *sst_node_task_id(const sst_node_ctx *ctx) {
    return sst_task_id(ctx->task);
}

double sst_node_first_attempt_time(const sst_node_ctx *ctx) {
    return sst_task_first_attempt_time(ctx->task);
}

/* configurable[key] of the invoke's config when a string, else NULL. */
static const char *configurable(const sst_node_ctx *ctx, const char *key) {
    const sst_value *v = sst_object_get(sst_object_get(sst_node_config(ctx), "configurable"), key);
    return sst_is_string(v) ? sst_string_cstr(v) : NULL;
}

const char *sst_node_thread_id(const sst_node_ctx *ctx) {
    const sst__live *l = sst__invoke_live(sst_task_run_user_data(ctx->task));
    return l != NULL && l->th != NULL ? l->th->thread_id : configurable(ctx, "thread_id");
}

const char *sst_node_run_id(const sst_node_ctx *ctx) {
    const sst_value *v = sst_object_get(sst_node_config(ctx), "run_id");
    return sst_is_string(v) ? sst_string_cstr(v) : configurable(ctx, "run_id");
}

const char *sst_node_checkpoint_id(const sst_node_ctx *ctx) {
    const sst__live *l = sst__invoke_live(sst_task_run_user_data(ctx->task));
    return l != NULL && l->th != NULL && l->th->last_id != NULL ? l->th->last_id : "";
}

const char *sst_node_checkpoint_ns(const sst_node_ctx *ctx) {
    if (ctx->task_ns == NULL) {
        /* Computed once per run of the node (ctx is the node's own, used by its thread). */
        sst_node_ctx *c = (sst_node_ctx *)ctx;
        c->task_ns = sst__subgraph_ns(NULL, sst__graph_ns(sst_task_run_user_data(ctx->task)),
                                      sst_node_name(ctx), sst_node_task_id(ctx));
    }
    return ctx->task_ns != NULL ? ctx->task_ns : "";
}

size_t sst__node_subgraph_call(sst_node_ctx *ctx) {
    return ctx->subgraph_calls++;
}

sst_task *sst__node_task(sst_node_ctx *ctx) {
    return ctx->task;
}

sst_code sst__node_forward_interrupts(sst_node_ctx *ctx, const sst_value *list) {
    const sst_value *first = sst_array_len(list) > 0 ? sst_array_get(list, 0) : NULL;
    const sst_value *v = first != NULL ? sst_object_get(first, "value") : NULL;
    sst_value *w =
        sst__set_take(sst_object_empty(), "value", sst_value_ref(v != NULL ? v : sst_null()), NULL);
    w = sst__set_take(w, "index", sst_int_new(0, NULL), NULL);
    w = sst__set_take(w, "sub", sst_value_ref(list), NULL);
    ctx->interrupt_calls++;
    return sst_task_interrupt(ctx->task, w != NULL ? w : sst_null());
}

sst_code sst_node_parent_command(sst_node_ctx *ctx, sst_value *update, sst_value *go) {
    sst_value *cmd = sst_object_empty();
    if (update != NULL) {
        cmd = sst__set_take(cmd, "update", update, NULL);
    }
    if (go != NULL) {
        cmd = sst__set_take(cmd, "goto", go, NULL);
    }
    if (cmd == NULL) {
        return sst_node_fail(ctx, SST_ENOMEM, "node '%s': out of memory", sst_node_name(ctx));
    }
    sst_value *shown = sst_value_ref(cmd);
    sst_code rc = sst__invoke_parent_command(sst_task_run_user_data(ctx->task), cmd);
    if (rc != SST_OK) { /* the root graph: the command escapes the invoke, as LangGraph's */
        sst_task_set_error_detail(ctx->task,
                                  sst__set_take(sst_object_empty(), "command", shown, NULL));
        shown = NULL;
        return sst_node_fail(ctx, SST_EPARENT,
                             "node '%s': Command(graph=PARENT): there is no parent graph",
                             sst_node_name(ctx));
    }
    sst_value_unref(shown);
    return sst_node_fail(ctx, SST_EPARENT, "node '%s': Command(graph=PARENT) for the parent graph",
                         sst_node_name(ctx));
}

sst_code sst_node_update(sst_node_ctx *ctx, const char *field, sst_value *value, sst_error *err) {
    if (field != NULL && reserved(ctx, field)) {
        sst_value_unref(value);
        return sst__error(err, SST_EINVAL, "node '%s': field '%s' is reserved", sst_node_name(ctx),
                          field);
    }
    return sst_task_write(ctx->task, field, value, err);
}

sst_code sst_node_update_all(sst_node_ctx *ctx, sst_value *update, sst_error *err) {
    for (size_t i = 0; i < sst_object_len(update); i++) {
        if (reserved(ctx, sst_string_cstr(sst_object_key_at(update, i)))) {
            sst_code rc =
                sst__error(err, SST_EINVAL, "node '%s': field '%s' is reserved", sst_node_name(ctx),
                           sst_string_cstr(sst_object_key_at(update, i)));
            sst_value_unref(update);
            return rc;
        }
    }
    return sst_task_write_all(ctx->task, update, err);
}

/* Fails with SST_EINVAL when @p field is reserved ("__..."); releases @p v then. */
static sst_code check_field(sst_node_ctx *ctx, const char *field, sst_value *v, sst_error *err) {
    if (field == NULL || v == NULL) {
        sst_value_unref(v);
        return sst__error(err, SST_EINVAL, "node '%s': write with a NULL %s", sst_node_name(ctx),
                          field == NULL ? "field" : "value");
    }
    if (reserved(ctx, field)) {
        sst_value_unref(v);
        return sst__error(err, SST_EINVAL, "node '%s': field '%s' is reserved", sst_node_name(ctx),
                          field);
    }
    return SST_OK;
}

sst_code sst_node_add_write(sst_node_ctx *ctx, const char *field, sst_value *value,
                            sst_error *err) {
    SST__ERR_LOCAL(err);
    sst_code rc = check_field(ctx, field, value, err);
    if (rc != SST_OK) {
        return rc;
    }
    const sst_value *old = sst_object_get(sst_task_delta(ctx->task), field);
    if (old == NULL) {
        return sst_task_write(ctx->task, field, value, err);
    }
    /* Only the field is rebuilt: {field: old} plus the write, then stored over old. */
    sst_value *one = sst_object_set_take(sst_object_empty(), field, sst_value_ref(old), err);
    one =
        one != NULL ? sst_delta_add_write(one, field, value, err) : (sst_value_unref(value), NULL);
    if (one == NULL) {
        return sst__code(err);
    }
    rc = sst_task_write(ctx->task, field, sst_value_ref(sst_object_get(one, field)), err);
    sst_value_unref(one);
    return rc;
}

sst_code sst_node_add_update(sst_node_ctx *ctx, sst_value *update, sst_error *err) {
    SST__ERR_LOCAL(err);
    if (!sst_is_object(update)) {
        sst__error(err, SST_ETYPE, "node '%s': an update must be an object, got %s",
                   sst_node_name(ctx),
                   update == NULL ? "NULL" : sst_type_name(sst_value_type(update)));
        sst_value_unref(update);
        return SST_ETYPE;
    }
    sst_code rc = SST_OK;
    for (size_t i = 0; rc == SST_OK && i < sst_object_len(update); i++) {
        rc = sst_node_add_write(ctx, sst_string_cstr(sst_object_key_at(update, i)),
                                sst_value_ref(sst_object_value_at(update, i)), err);
    }
    sst_value_unref(update);
    return rc;
}

/* Appends @p target (taken; NULL when making it failed, with @p err set) to the gotos. */
static sst_code push_goto(sst_node_ctx *ctx, sst_value *target, sst_error *err) {
    if (target == NULL) {
        return sst__code(err);
    }
    sst_value *list = ctx->gotos != NULL ? ctx->gotos : sst_array_empty();
    ctx->gotos = sst_array_push_take(list, target, err);
    return ctx->gotos != NULL ? SST_OK : sst__code(err);
}

sst_code sst__node_goto_value(sst_node_ctx *ctx, const sst_value *go, sst_error *err) {
    if (!sst_is_array(go)) {
        return push_goto(ctx, sst_value_ref(go), err);
    }
    sst_code rc = SST_OK;
    for (size_t i = 0; i < sst_array_len(go) && rc == SST_OK; i++) {
        rc = push_goto(ctx, sst_value_ref(sst_array_get(go, i)), err);
    }
    return rc;
}

const sst_compiled_graph *sst__node_graph(const sst_node_ctx *ctx) {
    return ctx->cg;
}

sst_code sst_node_goto(sst_node_ctx *ctx, const char *node, sst_error *err) {
    SST__ERR_LOCAL(err);
    if (node == NULL) {
        return sst__error(err, SST_EINVAL, "node '%s': goto NULL", sst_node_name(ctx));
    }
    return push_goto(ctx, sst_string_new(node, err), err);
}

sst_code sst_node_goto_send(sst_node_ctx *ctx, const char *node, sst_value *arg, sst_error *err) {
    SST__ERR_LOCAL(err);
    return push_goto(ctx, sst_send_new(node, arg, err), err);
}

/* Interrupt values carry their index among the node's interrupt calls. */
const sst_value *sst_node_interrupt(sst_node_ctx *ctx, sst_value *value) {
    size_t k = ctx->interrupt_calls++;
    const sst_value *resume = sst_task_resume_value(ctx->task, k);
    if (resume != NULL) {
        sst_value_unref(value);
        return resume;
    }
    sst_value *wrapped =
        sst_object_set_take(sst_object_empty(), "value", value != NULL ? value : sst_null(), NULL);
    sst_value *index = sst_int_new((int64_t)k, NULL);
    wrapped = wrapped != NULL && index != NULL
                  ? sst_object_set_take(wrapped, "index", index, NULL)
                  : (sst_value_unref(wrapped), sst_value_unref(index), NULL);
    sst_task_interrupt(ctx->task, wrapped != NULL ? wrapped : sst_null());
    return NULL;
}

bool sst_node_streams_messages(const sst_node_ctx *ctx) {
    return sst__invoke_streams_messages(sst_task_run_user_data(ctx->task));
}

static void progress(sst_node_ctx *ctx);

sst_code sst_node_stream_message(sst_node_ctx *ctx, sst_value *event, sst_error *err) {
    progress(ctx); /* a token streamed */
    return sst__invoke_stream_message(sst_task_run_user_data(ctx->task), sst_node_name(ctx), event,
                                      err);
}

/* An event the node produced: progress for its idle timeout (unless heartbeats only count). */
static void progress(sst_node_ctx *ctx) {
    const sst_timeout_policy *tp = sst_task_timeout(ctx->task);
    if (tp != NULL && !tp->heartbeat_only) {
        sst_task_heartbeat(ctx->task);
    }
}

sst_code sst_node_emit(sst_node_ctx *ctx, sst_value *value, sst_error *err) {
    if (value == NULL) {
        return sst__error(err, SST_EINVAL, "node '%s': emit of a NULL value", sst_node_name(ctx));
    }
    progress(ctx);
    return sst__live_send(sst__invoke_live(sst_task_run_user_data(ctx->task)), SST_STREAM_CUSTOM,
                          sst_node_name(ctx), value, err);
}

sst_code sst_node_push_message(sst_node_ctx *ctx, const char *field, sst_value *message,
                               sst_error *err) {
    SST__ERR_LOCAL(err);
    field = field != NULL ? field : "messages";
    if (!sst_is_object(message) || !sst_is_string(sst_object_get(message, "id"))) {
        sst_value_unref(message);
        return sst__error(err, SST_EINVAL, "node '%s': push_message: Message ID is required",
                          sst_node_name(ctx));
    }
    /* The message as the field's reducer stores it (add_messages: a canonical role). */
    sst_value *one = sst_object_set_take(sst_object_empty(), field,
                                         sst_array_push_take(sst_array_empty(), message, err), err);
    sst_value *prep = one != NULL ? sst_schema_prepare_delta(ctx->cg->schema, one, err) : NULL;
    if (prep == NULL) {
        return sst__code(err);
    }
    const sst_value *m = sst_array_get(sst_object_get(prep, field), 0);
    if (m == NULL) {
        sst_value_unref(prep);
        return sst__error(err, SST_EINVAL, "node '%s': push_message: no field '%s' in the state",
                          sst_node_name(ctx), field);
    }
    sst_code rc = sst__live_message(sst__invoke_live(sst_task_run_user_data(ctx->task)), ctx->task,
                                    sst_node_name(ctx), m, false, err);
    if (rc == SST_OK && ctx->call_name == NULL) { /* a task has no state: it only streams */
        rc = sst_node_add_write(ctx, field, sst_value_ref(m), err);
    }
    sst_value_unref(prep);
    return rc;
}

/*
 * LangGraph's "messages" mode for the state: the messages the node wrote, with the ids
 * the engine would give them fixed now (so that the stream and the state agree).
 */
static sst_code stream_written_messages(sst_node_ctx *ctx, sst__live *live) {
    const sst_value *delta = sst_task_delta(ctx->task);
    if (!sst__live_on(live, SST_STREAM_MESSAGES) || delta == NULL) {
        return SST_OK;
    }
    sst_error err;
    sst_error_clear(&err);
    sst_value *prepared = sst_schema_prepare_delta(ctx->cg->schema, sst_value_ref(delta), &err);
    if (prepared == NULL) { /* a bad write: the engine fails the task with this error */
        return err.code == SST_ENOMEM ? sst_task_fail(ctx->task, SST_ENOMEM, "%s", err.msg)
                                      : SST_OK;
    }
    sst_code rc = sst_task_write_all(ctx->task, sst_value_ref(prepared), &err);
    if (rc == SST_OK) {
        rc = sst__live_update_messages(live, ctx->task, sst_node_name(ctx), prepared, &err);
    }
    sst_value_unref(prepared);
    return rc != SST_OK ? sst_task_fail(ctx->task, rc, "%s", err.msg) : SST_OK;
}

const sst_value *sst_node_error(const sst_node_ctx *ctx) {
    return ctx != NULL ? sst_task_failure(ctx->task) : NULL;
}

bool sst_node_cancelled(const sst_node_ctx *ctx) {
    if (ctx == NULL) {
        return false;
    }
    if (sst_task_cancelled(ctx->task)) {
        return true;
    }
    const sst_invoke_opts *o = sst__invoke_opts(sst_task_run_user_data(ctx->task));
    return o != NULL && o->cancelled != NULL && o->cancelled(o->cancel_user_data, true);
}

sst_store *sst_node_store(const sst_node_ctx *ctx) {
    return ctx != NULL ? sst__invoke_store(sst_task_run_user_data(ctx->task)) : NULL;
}

const sst_timeout_policy *sst_node_timeout(const sst_node_ctx *ctx) {
    return ctx != NULL ? sst_task_timeout(ctx->task) : NULL;
}

void sst_node_heartbeat(sst_node_ctx *ctx) {
    if (ctx != NULL) {
        sst_task_heartbeat(ctx->task);
    }
}

sst_code sst_node_fail(sst_node_ctx *ctx, sst_code code, const char *fmt, ...) {
    char msg[SST_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return sst_task_fail(ctx->task, code, "%s", msg);
}

/* Turns resolved targets into activations and Sends of the task. */
static sst_code go(sst_task *t, const sst_value *targets, sst_error *err) {
    for (size_t i = 0; i < sst_array_len(targets); i++) {
        const sst_value *x = sst_array_get(targets, i);
        sst_code rc;
        if (sst__is_send(x)) {
            sst_timeout_policy tp;
            bool own = sst_timeout_policy_from_value(sst_object_get(x, "timeout"), &tp);
            rc = sst_task_send_timeout(t, sst_string_cstr(sst_object_get(x, "__send__")),
                                       sst_value_ref(sst_object_get(x, "arg")), own ? &tp : NULL,
                                       err);
        } else {
            rc = sst_task_activate(t, sst_string_cstr(x), err);
        }
        if (rc != SST_OK) {
            return rc;
        }
    }
    return SST_OK;
}

/* Adds @p n to source @p source of join @p join in the barrier update *upd. */
static sst_code barrier_add(sst_value **upd, size_t join, const char *source, int64_t n,
                            sst_error *err) {
    char key[24];
    snprintf(key, sizeof key, "%zu", join);
    sst_value *u = *upd != NULL ? *upd : sst_object_empty();
    sst_value *inner = sst_value_ref(sst_object_get(u, key));
    sst_value *count = sst_int_new(n, err);
    if (inner == NULL) {
        inner = sst_object_empty();
    }
    inner = count != NULL ? sst_object_set_take(inner, source, count, err)
                          : (sst_value_unref(inner), NULL);
    *upd = inner != NULL ? sst_object_set_take(u, key, inner, err) : (sst_value_unref(u), NULL);
    return *upd != NULL ? SST_OK : sst__code(err);
}

/* True when every source of join @p j has arrived at least once in @p state. */
static bool join_ready(const sst_compiled_graph *cg, const sst_value *state, size_t j) {
    char key[24];
    snprintf(key, sizeof key, "%zu", j);
    const sst_value *counts = sst_object_get(sst_object_get(state, SST__BARRIERS), key);
    const sst__join *jn = &cg->g->joins[j];
    for (size_t k = 0; k < jn->n; k++) {
        if (sst_int_value(sst_object_get(counts, jn->from[k])) < 1) {
            return false;
        }
    }
    return true;
}

/* Writes the barrier updates of this node: arrivals and, when it is a join's target, consumption.
 */
static sst_code write_barriers(sst_task *t, const sst_compiled_graph *cg, const sst__route *r,
                               const char *name, sst_error *err) {
    sst_value *upd = NULL;
    sst_code rc = SST_OK;
    for (size_t i = 0; rc == SST_OK && i < r->n_joins_in; i++) {
        rc = barrier_add(&upd, r->joins_in[i], name, 1, err);
    }
    for (size_t i = 0; rc == SST_OK && i < r->n_joins_out; i++) {
        size_t j = r->joins_out[i];
        if (!join_ready(cg, sst_task_state(t), j)) {
            continue; /* reached by another edge: the barrier stays as it is */
        }
        const sst__join *jn = &cg->g->joins[j];
        for (size_t k = 0; rc == SST_OK && k < jn->n; k++) {
            rc = barrier_add(&upd, j, jn->from[k], -1, err);
        }
    }
    if (rc != SST_OK) {
        sst_value_unref(upd);
        return rc;
    }
    return upd != NULL ? sst_task_write(t, SST__BARRIERS, upd, err) : SST_OK;
}

/* The state a router sees: the snapshot plus this node's own update. */
static sst_value *router_view(const sst_compiled_graph *cg, sst_task *t, const sst_value *delta,
                              sst_error *err) {
    if (delta == NULL) {
        return sst_value_ref(sst_task_state(t));
    }
    sst_value *prepared = sst_schema_prepare_delta(cg->schema, sst_value_ref(delta), err);
    if (prepared == NULL) {
        return NULL;
    }
    const sst_value *deltas[] = {prepared};
    sst_value *view =
        sst_schema_apply(cg->schema, sst_value_ref(sst_task_state(t)), deltas, 1, err);
    sst_value_unref(prepared);
    return sst__router_extra(cg, view, delta, err);
}

/* A closed schema drops undeclared keys from the state, but the node's routers
 * still see them (LangGraph: "nodes can pass extra data to their cond edges"). */
sst_value *sst__router_extra(const sst_compiled_graph *cg, sst_value *view, const sst_value *delta,
                             sst_error *err) {
    if (view == NULL || !sst_schema_closed(cg->schema)) {
        return view;
    }
    for (size_t i = 0; view != NULL && i < sst_object_len(delta); i++) {
        const sst_value *key = sst_object_key_at(delta, i);
        if (sst_object_getn(view, sst_string_cstr(key), sst_string_len(key)) == NULL) {
            view =
                sst_object_setv_take(view, key, sst_value_ref(sst_object_value_at(delta, i)), err);
        }
    }
    return view;
}

/* Opens the task's span under its superstep's, when the invoke is traced. */
static void start_task_span(sst_node_ctx *ctx, const char *node) {
    void *step = NULL;
    ctx->tracer = sst__invoke_tracer(sst_task_run_user_data(ctx->task), &step);
    if (ctx->tracer == NULL) {
        return;
    }
    sst_error err = {0};
    sst_value *attrs =
        sst__set_take(sst_object_empty(), "superstep.node", sst_string_new(node, &err), &err);
    attrs = sst__set_take(attrs, "superstep.task_id", sst_string_new(sst_task_id(ctx->task), &err),
                          &err);
    attrs = sst__set_take(attrs, "superstep.attempt",
                          sst_int_new((int64_t)sst_task_attempt(ctx->task), &err), &err);
    ctx->span = ctx->tracer->start(ctx->tracer->user_data, step, "task", node, attrs);
    sst_value_unref(attrs);
}

/* Ends the task's span: an interrupt is no error; a failure carries its message. */
static void end_task_span(sst_node_ctx *ctx, sst_code rc) {
    if (ctx->span == NULL) {
        return;
    }
    const sst_error *failed = sst_task_error(ctx->task);
    sst_error err = {0};
    sst_value *attrs =
        rc == SST_EINTERRUPT
            ? sst__set_take(sst_object_empty(), "superstep.interrupted", sst_bool(true), &err)
            : NULL;
    sst_code code = rc == SST_EINTERRUPT ? SST_OK : rc;
    ctx->tracer->end(ctx->tracer->user_data, ctx->span, code,
                     code == SST_OK   ? NULL
                     : failed != NULL ? failed->msg
                                      : sst_strerror(code),
                     attrs);
    sst_value_unref(attrs);
    ctx->span = NULL;
}

void *sst_node_span_start(sst_node_ctx *ctx, const char *kind, const char *name,
                          const sst_value *attrs) {
    if (ctx == NULL || ctx->tracer == NULL) {
        return NULL;
    }
    return ctx->tracer->start(ctx->tracer->user_data, ctx->span, kind, name, attrs);
}

const sst_tracer *sst_node_tracer(const sst_node_ctx *ctx) {
    return ctx != NULL ? ctx->tracer : NULL;
}

void sst_node_span_end(sst_node_ctx *ctx, void *span, sst_code code, const char *message,
                       const sst_value *attrs) {
    if (ctx != NULL && ctx->tracer != NULL && span != NULL) {
        ctx->tracer->end(ctx->tracer->user_data, span, code, message, attrs);
    }
}

bool sst_node_traceparent(sst_node_ctx *ctx, void *span, char *buf, size_t n) {
    if (ctx == NULL || ctx->tracer == NULL || ctx->tracer->traceparent == NULL) {
        return false;
    }
    void *s = span != NULL ? span : ctx->span;
    return s != NULL && ctx->tracer->traceparent(ctx->tracer->user_data, s, buf, n);
}

void *sst_node_span(const sst_node_ctx *ctx) {
    return ctx != NULL ? ctx->span : NULL;
}

sst_code sst__node_vertex(sst_task *t, void *user_data) {
    const sst__node_ref *ref = user_data;
    const sst_compiled_graph *cg = ref->cg;
    const sst__node *node = &cg->g->nodes[ref->index];
    const sst__route *r = &cg->routes[ref->index];
    sst_task_vote_halt(t);
    sst_node_ctx ctx = {.task = t, .cg = cg, .node = ref->index};
    sst__live *live = sst__invoke_live(sst_task_run_user_data(t));
    sst_error err;
    sst_error_clear(&err);
    if (node->input_fields != NULL &&
        (ctx.view = sst__node_view(node, sst_task_state(t), &err)) == NULL) {
        return sst_task_fail(t, err.code, "node '%s': %s", node->name, err.msg);
    }
    sst_code rc = sst__live_note_input(
        live, sst_task_input(t) != NULL ? sst_task_input(t) : sst_node_state(&ctx), &err);
    if (rc != SST_OK) {
        sst_value_unref(ctx.view);
        return sst_task_fail(t, rc, "node '%s': %s", node->name, err.msg);
    }
    start_task_span(&ctx, node->name);
    rc = node->fn(&ctx, node->user_data);
    end_task_span(&ctx, rc);
    sst__functional_ctx_free(&ctx);
    if (rc == SST_OK) {
        rc = stream_written_messages(&ctx, live);
    }
    sst_value_unref(ctx.view);
    sst__free(ctx.task_ns);
    if (rc != SST_OK) {
        sst_value_unref(ctx.gotos);
        return rc;
    }
    sst_value *targets = sst_array_empty();
    if (ctx.gotos != NULL) {
        /* Command goto replaces the node's edges and conditional edges. */
        rc = sst__route_result(cg, NULL, node->name, ctx.gotos, &targets, &err);
    } else {
        for (size_t i = 0; rc == SST_OK && i < r->n_edges; i++) {
            sst_value *s = sst_string_new(cg->g->nodes[r->edges[i]].name, &err);
            targets = s != NULL ? sst_array_push_take(targets, s, &err) : NULL;
            rc = targets != NULL ? SST_OK : sst__code(&err);
        }
        sst_value *view = NULL;
        for (size_t i = 0; rc == SST_OK && i < r->n_branches; i++) {
            const sst__branch *b = &cg->g->branches[r->branches[i]];
            if (view == NULL) {
                view = router_view(cg, t, sst_task_delta(t), &err);
                if (view == NULL) {
                    rc = sst__code(&err);
                    break;
                }
            }
            sst_value *res = b->router(view, b->user_data, &err);
            if (res == NULL) {
                rc = sst_task_fail(t, err.code != SST_OK ? err.code : SST_ETASK,
                                   "router of node '%s' failed: %s", node->name,
                                   err.code != SST_OK ? err.msg : "no result");
                sst_value_unref(view);
                sst_value_unref(targets);
                sst_value_unref(ctx.gotos);
                return rc;
            }
            rc = sst__route_result(cg, b, node->name, res, &targets, &err);
            sst_value_unref(res);
        }
        sst_value_unref(view);
    }
    if (rc == SST_OK) {
        rc = write_barriers(t, cg, r, node->name, &err);
    }
    if (rc == SST_OK) {
        rc = go(t, targets, &err);
    }
    sst_value_unref(targets);
    sst_value_unref(ctx.gotos);
    if (rc != SST_OK) {
        /* Routing errors are the graph's, not transient: SST_EINVAL/ETYPE are not retried. */
        return sst_task_fail(t, rc, "%s", err.msg[0] != '\0' ? err.msg : sst_strerror(rc));
    }
    return SST_OK;
}

sst_code sst__graph_commit(sst_commit *c, void *user_data) {
    const sst_compiled_graph *cg = user_data;
    for (size_t j = 0; j < cg->g->n_joins; j++) {
        if (join_ready(cg, sst_commit_state(c), j)) {
            sst_code rc = sst_commit_activate(c, cg->g->joins[j].to, NULL);
            if (rc != SST_OK) {
                return rc;
            }
        }
    }
    return SST_OK;
}
