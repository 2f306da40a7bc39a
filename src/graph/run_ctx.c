/* SPDX-License-Identifier: MIT */
/*
 * The accessors of an invoke's run context (run_ctx.h): the engine hands
 * every task the invoke's context as its run user data, and the node runner,
 * subgraphs and the functional API read the invoke's options, store, thread,
 * tracer and live stream through these. Fields written while tasks run
 * (parent_cmd, visited, usage) are guarded by live.mu.
 */
#include "run_ctx.h"
#include "values/build.h"

const sst_invoke_opts *sst__invoke_opts(void *run_user_data) {
    const sst__invoke_ctx *c = run_user_data;
    return c != NULL ? c->o : NULL;
}

sst_store *sst__invoke_store(void *run_user_data) {
    const sst__invoke_ctx *c = run_user_data;
    if (c == NULL) {
        return NULL;
    }
    return c->o->store != NULL ? c->o->store : c->cg->store;
}

uint64_t sst__invoke_stop_step(void *run_user_data) {
    const sst__invoke_ctx *c = run_user_data;
    return c != NULL ? c->first_step + c->o->recursion_limit : UINT64_MAX;
}

sst_graph_thread *sst__invoke_thread(void *run_user_data) {
    sst__invoke_ctx *c = run_user_data;
    return c != NULL ? c->th : NULL;
}

sst_code sst__invoke_parent_command(void *run_user_data, sst_value *cmd) {
    sst__invoke_ctx *c = run_user_data;
    if (c == NULL || !c->nested) {
        sst_value_unref(cmd);
        return SST_EPARENT;
    }
    pthread_mutex_lock(&c->live.mu);
    if (c->parent_cmd == NULL) {
        c->parent_cmd = cmd;
        cmd = NULL;
    }
    pthread_mutex_unlock(&c->live.mu);
    sst_value_unref(cmd);
    return SST_OK;
}

const char *sst__invoke_replay_from(void *run_user_data) {
    const sst__invoke_ctx *c = run_user_data;
    return c != NULL ? c->replay_from : NULL;
}

const sst_value *sst__invoke_targets(void *run_user_data) {
    const sst__invoke_ctx *c = run_user_data;
    return c != NULL ? c->targets : NULL;
}

bool sst__invoke_first_visit(void *run_user_data, const char *path) {
    sst__invoke_ctx *c = run_user_data;
    if (c == NULL) {
        return false;
    }
    pthread_mutex_lock(&c->live.mu);
    bool first = c->visited == NULL || sst_object_get(c->visited, path) == NULL;
    if (first) {
        sst_value *v = c->visited != NULL ? c->visited : sst_object_empty();
        c->visited = v != NULL ? sst_object_set_take(v, path, sst_bool(true), NULL) : NULL;
    }
    pthread_mutex_unlock(&c->live.mu);
    return first;
}

sst__live *sst__invoke_live(void *run_user_data) {
    sst__invoke_ctx *c = run_user_data;
    return c != NULL ? &c->live : NULL;
}

bool sst__invoke_streams_messages(void *run_user_data) {
    return sst__live_on(sst__invoke_live(run_user_data), SST_STREAM_MESSAGES);
}

sst_code sst__invoke_stream_message(void *run_user_data, const char *node, sst_value *event,
                                    sst_error *err) {
    return sst__live_token(sst__invoke_live(run_user_data), node, event, err);
}

sst_code sst__invoke_add_usage(void *run_user_data, const sst_value *usage, sst_error *err) {
    sst__invoke_ctx *c = run_user_data;
    if (!sst_is_object(usage)) {
        return sst__error(err, SST_EINVAL, "usage: expected an object, got %s",
                          sst_type_name(sst_value_type(usage)));
    }
    if (c == NULL) {
        return SST_OK;
    }
    pthread_mutex_lock(&c->live.mu);
    sst_value *sum = sst__counts_add(c->usage, usage, err);
    c->usage = sum;
    pthread_mutex_unlock(&c->live.mu);
    return sum != NULL ? SST_OK : sst__code(err);
}

const sst_tracer *sst__invoke_tracer(void *run_user_data, void **step_span) {
    const sst__invoke_ctx *c = run_user_data;
    *step_span = c != NULL ? c->step_span : NULL;
    return c != NULL ? c->o->tracer : NULL;
}

const char *sst__graph_ns(void *run_user_data) {
    return sst__live_ns(sst__invoke_live(run_user_data));
}
