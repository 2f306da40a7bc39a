/* SPDX-License-Identifier: MIT */
/*
 * The functional API (functional.h): entrypoint graphs and tasks.
 *
 * An entrypoint graph is a root graph with one node between START and END
 * and two hidden fields: SST_ENTRY_INPUT (the invoke's input, invoke.c puts
 * it there) and SST_ENTRY_PREVIOUS (what the last run saved). The node runs
 * the user's function and writes its result to SST_ROOT and what it saves
 * to SST_ENTRY_PREVIOUS.
 *
 * Tasks are pregel calls (src/pregel/call.c): a future wraps the call, and
 * the call's compute function gives the task function a node context of its
 * own (named after the task). The engine records each finished call; the
 * invoke's call hook (invoke.c) streams it and writes it as a pending write.
 */
#include <string.h>

#include "graph_node.h"
#include "stream.h"
#include "superstep/functional.h"
#include "values/build.h"

struct sst_future {
    sst_node_ctx *owner; /* the context that submitted it */
    sst_call *call;
    sst_task_spec spec; /* name borrowed from the call */
    sst_future *next;
};

bool sst_compiled_graph_is_entrypoint(const sst_compiled_graph *cg) {
    return cg != NULL && cg->g->entrypoint;
}

sst_code sst__entry_node(sst_node_ctx *ctx, void *user_data) {
    (void)user_data;
    const struct sst_graph *g = ctx->cg->g;
    ctx->functional = true;
    sst_code rc = g->entry_fn(ctx, g->entry_user_data);
    if (rc != SST_OK) {
        return rc;
    }
    sst_error err;
    sst_error_clear(&err);
    sst_value *ret = ctx->ret != NULL ? ctx->ret : sst_null();
    sst_value *save = ctx->save != NULL ? ctx->save : sst_value_ref(ret);
    ctx->ret = ctx->save = NULL;
    rc = sst_task_write(ctx->task, SST_ROOT, ret, &err);
    if (rc == SST_OK) {
        rc = sst_task_write(ctx->task, SST_ENTRY_PREVIOUS, save, &err);
    } else {
        sst_value_unref(save);
    }
    return rc != SST_OK
               ? sst_task_fail(ctx->task, rc, "entrypoint '%s': %s", sst_node_name(ctx), err.msg)
               : SST_OK;
}

sst_code sst__entry_persist_start(sst_graph_thread *th, const sst_value *input,
                                  const sst_value *prepared, const sst_value *state_after,
                                  const sst_value *rp, bool fork, const sst_invoke_opts *o,
                                  sst_error *err) {
    /* With durability "exit" the input is held back with the supersteps' deltas;
     * sst__persist_stop writes the input checkpoint when the entrypoint stopped in its step. */
    sst_value *groups;
    sst_code rc = sst__persist_start_groups(th, prepared, o, &groups, err);
    if (rc != SST_OK || groups == NULL) {
        return rc;
    }
    sst_value *meta = sst__set_take(sst_object_empty(), SST_START,
                                    sst_value_ref(input != NULL ? input : sst_null()), err);
    rc = meta != NULL ? sst__persist_put(th, th->last_step + 1, fork ? "fork" : "input",
                                         state_after, groups, rp, meta, o, err)
                      : sst__code(err);
    sst_value_unref(meta);
    sst_value_unref(groups);
    return rc;
}

static const sst_value *state_field(const sst_node_ctx *ctx, const char *field) {
    if (ctx == NULL || !ctx->cg->g->entrypoint || ctx->call_name != NULL) {
        return NULL;
    }
    const sst_value *v = sst_object_get(sst_task_state(ctx->task), field);
    return v != NULL ? v : sst_null();
}

const sst_value *sst_entrypoint_input(const sst_node_ctx *ctx) {
    return state_field(ctx, SST_ENTRY_INPUT);
}

const sst_value *sst_entrypoint_previous(const sst_node_ctx *ctx) {
    const sst__live *l = ctx != NULL ? sst__invoke_live(sst_task_run_user_data(ctx->task)) : NULL;
    if (ctx != NULL && ctx->cg->g->entrypoint && (l == NULL || l->th == NULL)) {
        return sst_null(); /* as LangGraph's: without a checkpointer nothing is remembered */
    }
    return state_field(ctx, SST_ENTRY_PREVIOUS);
}

sst_code sst_node_return(sst_node_ctx *ctx, sst_value *value, sst_error *err) {
    SST__ERR_LOCAL(err);
    if (ctx == NULL || !ctx->functional || value == NULL) {
        sst_value_unref(value);
        return sst__error(err, SST_EINVAL, "return: %s",
                          value == NULL ? "NULL value" : "not inside an entrypoint or a task");
    }
    sst_value_unref(ctx->ret);
    ctx->ret = value;
    return SST_OK;
}

sst_code sst_node_return_final(sst_node_ctx *ctx, sst_value *value, sst_value *save,
                               sst_error *err) {
    SST__ERR_LOCAL(err);
    if (ctx == NULL || !ctx->functional || ctx->call_name != NULL || value == NULL ||
        save == NULL) {
        sst_value_unref(value);
        sst_value_unref(save);
        return sst__error(err, SST_EINVAL, "final: %s",
                          value == NULL || save == NULL ? "NULL value"
                                                        : "not inside an entrypoint");
    }
    sst_value_unref(ctx->ret);
    sst_value_unref(ctx->save);
    ctx->ret = value;
    ctx->save = save;
    return SST_OK;
}

/* ---- tasks ---- */

void sst_task_spec_init(sst_task_spec *s, const char *name, sst_node_fn fn, void *user_data) {
    memset(s, 0, sizeof *s);
    s->name = name;
    s->fn = fn;
    s->user_data = user_data;
    sst_retry_policy_init(&s->retry);
    s->retry.max_attempts = 1;
}

/* The call's compute function: the task function with a context of its own. */
static sst_code run_task(sst_task *t, void *user_data) {
    sst_future *f = user_data;
    sst_node_ctx ctx = {.task = t,
                        .cg = f->owner->cg,
                        .node = f->owner->node,
                        .call_name = sst_call_name(sst_task_self_call(t)),
                        .functional = true};
    /* Traced as a task span under its caller's. */
    const sst_tracer *tr = f->owner->tracer;
    if (tr != NULL && f->owner->span != NULL) {
        sst_value *attrs = sst__set_take(sst_object_empty(), "superstep.task_id",
                                         sst_string_new(sst_task_id(t), NULL), NULL);
        attrs = sst__set_take(attrs, "superstep.attempt",
                              sst_int_new((int64_t)sst_task_attempt(t), NULL), NULL);
        ctx.tracer = tr;
        ctx.span = tr->start(tr->user_data, f->owner->span, "task", ctx.call_name, attrs);
        sst_value_unref(attrs);
    }
    sst_code rc = SST_OK;
    if (sst_task_attempt(t) <= 1) { /* announced as it starts: before its result */
        rc = sst__live_push_task(sst__invoke_live(sst_task_run_user_data(t)),
                                 sst__lg_step(ctx.cg, sst_task_superstep(t)), sst_task_id(t),
                                 ctx.call_name, sst_task_input(t), NULL);
    }
    rc = rc == SST_OK ? f->spec.fn(&ctx, f->spec.user_data) : rc;
    if (ctx.span != NULL) {
        const sst_error *e = sst_task_error(t);
        bool failed = rc != SST_OK && rc != SST_EINTERRUPT;
        tr->end(tr->user_data, ctx.span, failed ? rc : SST_OK,
                failed ? (e != NULL ? e->msg : sst_strerror(rc)) : NULL, NULL);
        ctx.span = NULL;
    }
    if (rc == SST_OK && sst_task_delta(t) != NULL && sst_object_len(sst_task_delta(t)) > 0) {
        rc = sst_task_fail(t, SST_EINVAL,
                           "task '%s' wrote to the state: a task gives its result with "
                           "sst_node_return; only its caller writes the state",
                           ctx.call_name);
    }
    if (rc == SST_OK) {
        sst_value *ret = ctx.ret != NULL ? ctx.ret : sst_null();
        ctx.ret = NULL;
        rc = sst_task_return(t, ret, NULL);
    }
    sst__functional_ctx_free(&ctx);
    return rc;
}

/* LangGraph's key_func on a task: the spec's key function on the task's input. */
static sst_value *task_cache_key(const sst_task *t, void *user_data, sst_error *err) {
    const sst_future *f = user_data;
    return f->spec.cache.key(sst_task_input(t), f->spec.cache.key_user_data, err);
}

sst_future *sst_node_submit(sst_node_ctx *ctx, const sst_task_spec *spec, sst_value *input,
                            sst_error *err) {
    SST__ERR_LOCAL(err);
    if (ctx == NULL || spec == NULL || spec->fn == NULL || spec->name == NULL) {
        sst_value_unref(input);
        sst__error(err, SST_EINVAL, "submit: %s",
                   ctx == NULL ? "not inside a node" : "the task needs a name and a function");
        return NULL;
    }
    sst_future *f = sst__calloc(1, sizeof *f);
    if (f == NULL) {
        sst_value_unref(input);
        sst__enomem(err);
        return NULL;
    }
    f->owner = ctx;
    f->spec = *spec;
    sst_call_opts co;
    sst_call_opts_init(&co);
    co.retry = spec->retry;
    co.pinned = spec->pinned;
    if (!sst_timeout_policy_valid(&spec->timeout)) {
        sst__free(f);
        sst_value_unref(input);
        sst__error(err, SST_EINVAL, "submit: task '%s': a timeout must be positive", spec->name);
        return NULL;
    }
    co.timeout = spec->timeout;
    co.cache.enabled = spec->cache.enabled;
    co.cache.ttl_s = spec->cache.ttl_s;
    if (spec->cache.key != NULL) {
        co.cache.key = task_cache_key;
        co.cache.key_user_data = f;
    }
    const sst_value *in = input; /* the call's input (taken by it): lives with the call */
    f->call = sst_task_call(ctx->task, spec->name, run_task, f, input, &co, err);
    if (f->call == NULL) {
        sst__free(f);
        return NULL;
    }
    f->spec.name = sst_call_name(f->call);
    if (ctx->futures_tail != NULL) {
        ctx->futures_tail->next = f;
    } else {
        ctx->futures = f;
    }
    ctx->futures_tail = f;
    if (sst_call_replayed(f->call)) { /* LangGraph announces it too; it does not run */
        sst_code rc = sst__live_push_task(sst__invoke_live(sst_task_run_user_data(ctx->task)),
                                          sst__lg_step(ctx->cg, sst_task_superstep(ctx->task)),
                                          sst_call_id(f->call), f->spec.name, in, err);
        if (rc != SST_OK) {
            return NULL; /* the future stays on ctx: freed with it */
        }
    }
    return f;
}

const sst_value *sst_future_result(sst_future *f, sst_error *err) {
    SST__ERR_LOCAL(err);
    if (f == NULL) {
        sst__error(err, SST_EINVAL, "result: NULL future");
        return NULL;
    }
    return sst_call_join(f->call, err) == SST_OK ? sst_call_result(f->call) : NULL;
}

const char *sst_future_id(const sst_future *f) {
    return sst_call_id(f->call);
}

bool sst_future_replayed(const sst_future *f) {
    return f != NULL && sst_call_replayed(f->call);
}

void sst__functional_ctx_free(sst_node_ctx *ctx) {
    /* The tasks end before their futures go: their functions use them. */
    for (sst_future *f = ctx->futures; f != NULL; f = f->next) {
        if (sst_call_join(f->call, NULL) != SST_OK) {
            continue; /* a task that failed or interrupted: its caller saw it, or ignored it */
        }
    }
    while (ctx->futures != NULL) {
        sst_future *next = ctx->futures->next;
        sst__free(ctx->futures);
        ctx->futures = next;
    }
    ctx->futures_tail = NULL;
    sst_value_unref(ctx->ret);
    sst_value_unref(ctx->save);
    ctx->ret = ctx->save = NULL;
}

sst_code sst_compiled_graph_clear_task_cache(const sst_compiled_graph *cg, const char *name,
                                             sst_error *err) {
    SST__ERR_LOCAL(err);
    if (cg == NULL || name == NULL) {
        return sst__error(err, SST_EINVAL, "clear_task_cache: NULL %s",
                          cg == NULL ? "graph" : "name");
    }
    if (cg->cache == NULL) {
        return SST_OK;
    }
    return sst_cache_clear_vertex(cg->cache, cg->cache_ns, name, err);
}
