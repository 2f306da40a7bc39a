/* SPDX-License-Identifier: MIT */
/*
 * The call-limit middleware (LangChain's ModelCallLimitMiddleware and
 * ToolCallLimitMiddleware): counts kept in the agent's state per thread
 * (tracked) and per run (untracked, so each invoke starts at 0).
 */
#include <stdio.h>

#include "middleware.h"
#include "superstep/json.h"
#include "values/build.h"

typedef struct limits {
    int64_t thread_limit, run_limit; /* < 0: none */
    sst_limit_behavior exit;
    char *tool; /* tool limits: the tool counted, or NULL for all */
} limits;

static void free_limits(void *ud) {
    limits *l = ud;
    sst__free(l->tool);
    sst__free(l);
}

static int64_t count_of(const sst_value *state, const char *field, const char *key) {
    const sst_value *v = sst_object_get(state, field);
    return sst_int_value(key != NULL ? sst_object_get(v, key) : v);
}

/* "thread limit (3/3), run limit (2/2)" for the limits reached at the counts given. */
static bool exceeded(const limits *l, int64_t thread, int64_t run, char *buf, size_t n) {
    buf[0] = '\0';
    bool over = false;
    if (l->thread_limit >= 0 && thread >= l->thread_limit) {
        snprintf(buf, n, "thread limit (%lld/%lld)", (long long)thread, (long long)l->thread_limit);
        over = true;
    }
    if (l->run_limit >= 0 && run >= l->run_limit) {
        size_t used = strlen(buf);
        snprintf(buf + used, n - used, "%srun limit (%lld/%lld)", over ? ", " : "", (long long)run,
                 (long long)l->run_limit);
        over = true;
    }
    return over;
}

/* The run ends with an assistant message saying why (LangChain's exit_behavior "end"). */
static sst_code end_with(sst_node_ctx *ctx, sst_value *extra, const char *text) {
    sst_error err = {0};
    sst_value *list = extra != NULL ? extra : sst_array_empty();
    list = sst__push_take(list, sst__message_take("assistant", sst_string_new(text, &err), &err),
                          &err);
    sst_code rc = list != NULL ? sst_node_update(ctx, "messages", list, &err) : sst__code(&err);
    if (rc == SST_OK) {
        rc = sst_agent_jump_to(ctx, "end", &err);
    }
    return rc == SST_OK ? SST_OK : sst_node_fail(ctx, rc, "%s", err.msg);
}

/* ---- model calls ---- */

static sst_code model_fields(sst_graph *g, void *ud, const char **untracked, size_t *n,
                             sst_error *err) {
    (void)ud;
    sst_code rc = sst_graph_add_field(g, "thread_model_call_count", sst_reducer_replace(),
                                      sst_int_new(0, err), err);
    if (rc == SST_OK) {
        rc = sst_graph_add_field(g, "run_model_call_count", sst_reducer_replace(),
                                 sst_int_new(0, err), err);
    }
    untracked[0] = "run_model_call_count";
    *n = 1;
    return rc;
}

static sst_code model_before(sst_node_ctx *ctx, void *ud) {
    const limits *l = ud;
    const sst_value *state = sst_node_state(ctx);
    int64_t thread = count_of(state, "thread_model_call_count", NULL);
    int64_t run = count_of(state, "run_model_call_count", NULL);
    char what[160], text[200];
    if (!exceeded(l, thread, run, what, sizeof what)) {
        return SST_OK;
    }
    if (l->exit == SST_LIMIT_ERROR) {
        return sst_node_fail(ctx, SST_ERANGE, "model call limits exceeded: %s", what);
    }
    snprintf(text, sizeof text, "Model call limits exceeded: %s", what);
    return end_with(ctx, NULL, text);
}

static sst_code model_after(sst_node_ctx *ctx, void *ud) {
    (void)ud;
    const sst_value *state = sst_node_state(ctx);
    sst_error err = {0};
    sst_code rc = sst_node_update(
        ctx, "thread_model_call_count",
        sst_int_new(count_of(state, "thread_model_call_count", NULL) + 1, &err), &err);
    if (rc == SST_OK) {
        rc = sst_node_update(ctx, "run_model_call_count",
                             sst_int_new(count_of(state, "run_model_call_count", NULL) + 1, &err),
                             &err);
    }
    return rc;
}

static limits *new_limits(int64_t thread_limit, int64_t run_limit, sst_limit_behavior exit,
                          const char *tool, sst_error *err) {
    limits *l = sst__calloc(1, sizeof *l);
    if (l == NULL || (tool != NULL && (l->tool = sst__strndup(tool, strlen(tool))) == NULL)) {
        sst__free(l);
        sst__enomem(err);
        return NULL;
    }
    l->thread_limit = thread_limit;
    l->run_limit = run_limit;
    l->exit = exit;
    return l;
}

sst_middleware *sst_middleware_model_call_limit(int64_t thread_limit, int64_t run_limit,
                                                sst_limit_behavior exit, sst_error *err) {
    if ((thread_limit < 0 && run_limit < 0) || exit == SST_LIMIT_CONTINUE) {
        sst__error(err, SST_EINVAL,
                   "model call limit: give a thread or a run limit, and an exit of end or error");
        return NULL;
    }
    limits *l = new_limits(thread_limit, run_limit, exit, NULL, err);
    sst_middleware_hooks h = {.before_model = model_before,
                              .after_model = model_after,
                              .add_fields = model_fields,
                              .user_data = l,
                              .free_user_data = free_limits};
    sst_middleware *m = l != NULL ? sst_middleware_new("ModelCallLimitMiddleware", &h, err) : NULL;
    if (m == NULL && l != NULL) {
        free_limits(l);
    }
    return m;
}

/* ---- tool calls ---- */

static sst_code tool_fields(sst_graph *g, void *ud, const char **untracked, size_t *n,
                            sst_error *err) {
    (void)ud;
    /* Several tool limits share the two fields: the first adds them. */
    if (sst_schema_field_reducer(sst_graph_schema(g), "thread_tool_call_count") != NULL) {
        return SST_OK;
    }
    sst_code rc = sst_graph_add_field(g, "thread_tool_call_count", sst_reducer_merge(),
                                      sst_object_empty(), err);
    if (rc == SST_OK) {
        rc = sst_graph_add_field(g, "run_tool_call_count", sst_reducer_merge(), sst_object_empty(),
                                 err);
    }
    untracked[0] = "run_tool_call_count";
    *n = 1;
    return rc;
}

static sst_code tool_after(sst_node_ctx *ctx, void *ud) {
    const limits *l = ud;
    const sst_value *state = sst_node_state(ctx);
    const sst_value *msgs = sst_object_get(state, "messages");
    size_t ai = sst__last_ai_index(msgs);
    const sst_value *calls =
        ai != SIZE_MAX ? sst_object_get(sst_array_get(msgs, ai), "tool_calls") : NULL;
    const char *key = l->tool != NULL ? l->tool : "__all__";
    int64_t thread = count_of(state, "thread_tool_call_count", key);
    int64_t run = count_of(state, "run_tool_call_count", key);
    sst_error err = {0};
    sst_value *blocked = sst_array_empty();
    int64_t allowed = 0;
    char what[160] = "", text[300];
    for (size_t i = 0; blocked != NULL && i < sst_array_len(calls); i++) {
        const sst_value *call = sst_array_get(calls, i);
        if ((l->tool != NULL && strcmp(sst__call_name(call), l->tool) != 0) ||
            sst__call_answered(msgs, ai, sst_object_get(call, "id"))) {
            continue;
        }
        if (!exceeded(l, thread + allowed, run + allowed, what, sizeof what)) {
            allowed++;
            continue;
        }
        if (l->exit == SST_LIMIT_ERROR) {
            sst_value_unref(blocked);
            return sst_node_fail(ctx, SST_ERANGE, "tool call limits exceeded for '%s': %s", key,
                                 what);
        }
        snprintf(text, sizeof text, "error: tool call limit exceeded (%s): do not call '%s' again.",
                 what, sst__call_name(call));
        blocked = sst__push_take(blocked, sst__tool_message(call, text, &err), &err);
    }
    if (blocked == NULL) {
        return sst_node_fail(ctx, sst__code(&err), "%s", err.msg);
    }
    sst_code rc = SST_OK;
    if (allowed > 0) {
        sst_value *t =
            sst__set_take(sst_object_empty(), key, sst_int_new(thread + allowed, &err), &err);
        sst_value *r =
            sst__set_take(sst_object_empty(), key, sst_int_new(run + allowed, &err), &err);
        rc = t != NULL ? sst_node_update(ctx, "thread_tool_call_count", t, &err) : SST_ENOMEM;
        rc = rc == SST_OK && r != NULL ? sst_node_update(ctx, "run_tool_call_count", r, &err)
                                       : (sst_value_unref(r), rc == SST_OK ? SST_ENOMEM : rc);
    }
    if (rc != SST_OK || sst_array_len(blocked) == 0) {
        sst_value_unref(blocked);
        return rc;
    }
    if (l->exit == SST_LIMIT_END) {
        /* Every call still waiting gets an answer, so the history stays one the APIs take. */
        for (size_t i = 0; blocked != NULL && i < sst_array_len(calls); i++) {
            const sst_value *call = sst_array_get(calls, i);
            bool named = l->tool == NULL || strcmp(sst__call_name(call), l->tool) == 0;
            if (!named && !sst__call_answered(msgs, ai, sst_object_get(call, "id"))) {
                blocked = sst__push_take(
                    blocked, sst__tool_message(call, "error: not run: the run ended", &err), &err);
            }
        }
        snprintf(text, sizeof text, "Tool call limits exceeded for '%s': %s", key, what);
        return end_with(ctx, blocked, text);
    }
    return sst_node_update(ctx, "messages", blocked, &err);
}

sst_middleware *sst_middleware_tool_call_limit(const char *tool_name, int64_t thread_limit,
                                               int64_t run_limit, sst_limit_behavior exit,
                                               sst_error *err) {
    if (thread_limit < 0 && run_limit < 0) {
        sst__error(err, SST_EINVAL, "tool call limit: give a thread or a run limit");
        return NULL;
    }
    limits *l = new_limits(thread_limit, run_limit, exit, tool_name, err);
    char name[96];
    snprintf(name, sizeof name, "ToolCallLimitMiddleware%s%.60s", tool_name != NULL ? "_" : "",
             tool_name != NULL ? tool_name : "");
    sst_middleware_hooks h = {.after_model = tool_after,
                              .add_fields = tool_fields,
                              .user_data = l,
                              .free_user_data = free_limits};
    sst_middleware *m = l != NULL ? sst_middleware_new(name, &h, err) : NULL;
    if (m == NULL && l != NULL) {
        free_limits(l);
    }
    return m;
}
