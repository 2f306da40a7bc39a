/* SPDX-License-Identifier: MIT */
/*
 * The agent's tool node: one tool call (a Send of the model node's reply),
 * asked for approval first when the agent says so, run through the
 * middleware's wrap_tool_call hooks to the tool, its message added to the
 * state with a scratchpad entry.
 */
#include <stdio.h>

#include "react_int.h"
#include "superstep/json.h"
#include "values/build.h"

typedef struct run_tool {
    const sst__agent *a;
    sst_node_ctx *ctx;
} run_tool;

/* The end of the chain: the tool itself (an unknown tool or bad arguments: an error
 * message the model reads). */
static sst_value *call_tool(const sst_value *call, void *ud, sst_error *err) {
    const run_tool *rt = ud;
    const char *tool = sst__call_name(call);
    void *span = NULL;
    if (sst_node_tracer(rt->ctx) != NULL) { /* GenAI's execute_tool span */
        sst_error e = {0};
        sst_value *a = sst__set_take(sst_object_empty(), "gen_ai.operation.name",
                                     sst_string_new("execute_tool", &e), &e);
        a = sst__set_take(a, "gen_ai.tool.name", sst_string_new(tool, &e), &e);
        const sst_value *id = sst_object_get(call, "id");
        if (sst_is_string(id)) {
            a = sst__set_take(a, "gen_ai.tool.call.id", sst_value_ref(id), &e);
        }
        char span_name[160];
        snprintf(span_name, sizeof span_name, "execute_tool %s", tool);
        span = sst_node_span_start(rt->ctx, "tool", span_name, a);
        sst_value_unref(a);
    }
    sst_value *m = sst__tools_call_ctx(rt->a->tools, call, rt->ctx, err);
    /* A tool's failure is a message the model reads ("error: ..."): the span says so. */
    const sst_value *content = sst_object_get(m, "content");
    bool failed = m == NULL ||
                  (sst_is_string(content) && strncmp(sst_string_cstr(content), "error: ", 7) == 0);
    sst_node_span_end(rt->ctx, span, failed ? SST_ETASK : SST_OK,
                      failed ? (m != NULL ? sst_string_cstr(content) : err->msg) : NULL, NULL);
    return m;
}

/* One tool call; with approval, an interrupt first. */
sst_code sst__react_tool(sst_node_ctx *ctx, void *ud) {
    const sst__agent *a = ud;
    sst_error err = {0};
    sst_value *call = sst_value_ref(sst_node_input(ctx));
    if (a->opts->approve_tools) {
        sst_value *ask =
            sst__set_take(sst_object_empty(), "approve_tool_call", sst_value_ref(call), &err);
        const sst_value *answer = sst_node_interrupt(ctx, ask);
        if (answer == NULL) {
            sst_value_unref(call);
            return SST_EINTERRUPT;
        }
        const sst_value *edited = sst_object_get(answer, "arguments");
        if (sst_is_string(answer) && strcmp(sst_string_cstr(answer), "reject") == 0) {
            sst_value *m =
                sst__set_take(sst_object_empty(), "role", sst_string_new("tool", &err), &err);
            m = sst__set_take(m, "tool_call_id", sst_value_ref(sst_object_get(call, "id")), &err);
            m = sst__set_take(m, "content",
                              sst_string_new("error: the user rejected this tool call", &err),
                              &err);
            sst_value_unref(call);
            sst_value *list = m != NULL ? sst_array_push_take(sst_array_empty(), m, &err) : NULL;
            return list != NULL ? sst_node_update(ctx, "messages", list, &err) : SST_ENOMEM;
        }
        if (edited != NULL) {
            char *text = sst_json_write(edited, SST_JSON_COMPACT, NULL, &err);
            sst_value *fn = sst_value_ref(sst_object_get(call, "function"));
            fn = sst__set_take(fn, "arguments", text != NULL ? sst_string_new(text, &err) : NULL,
                               &err);
            sst_free(text);
            call = sst__set_take(call, "function", fn, &err);
        } else if (!sst_is_string(answer) || strcmp(sst_string_cstr(answer), "approve") != 0) {
            sst_value_unref(call);
            return sst_node_fail(ctx, SST_EINVAL,
                                 "tool approval: resume with \"approve\", \"reject\" or "
                                 "{\"arguments\": {...}}");
        }
    }
    sst__react_event(a, "tool_start", call);
    run_tool rt = {a, ctx};
    sst_value *m = call != NULL ? sst__run_tool_chain(a->opts->middleware, a->opts->n_middleware,
                                                      call, ctx, call_tool, &rt, &err)
                                : NULL;
    sst__react_event(a, "tool_end", m);
    if (m == NULL && call != NULL && err.code != SST_ENOMEM) {
        sst_value_unref(call); /* a wrapper's failure fails the node */
        return sst_node_fail(ctx, sst__code(&err), "%s", err.msg);
    }
    /* The scratchpad keeps what was called and what came back, in one entry. */
    const sst_value *fn = sst_object_get(call, "function");
    sst_value *note = m != NULL ? sst__set_take(sst_object_empty(), "tool",
                                                sst_value_ref(sst_object_get(fn, "name")), &err)
                                : NULL;
    note = sst__set_take(note, "arguments", sst_value_ref(sst_object_get(fn, "arguments")), &err);
    note = sst__set_take(note, "result",
                         m != NULL ? sst_value_ref(sst_object_get(m, "content")) : NULL, &err);
    sst_value_unref(call);
    sst_value *list =
        m != NULL ? sst_array_push_take(sst_array_empty(), sst_value_ref(m), &err) : NULL;
    sst_value *full = m != NULL ? sst_array_push_take(sst_array_empty(), m, &err) : NULL;
    sst_value *pad = note != NULL ? sst_array_push_take(sst_array_empty(), note, &err) : NULL;
    sst_code rc = list != NULL && full != NULL && pad != NULL ? SST_OK : sst__enomem(&err);
    if (rc == SST_OK) {
        rc = sst_node_update(ctx, "messages", list, &err);
        list = NULL;
    }
    if (rc == SST_OK) {
        rc = sst_node_update(ctx, "full_messages", full, &err);
        full = NULL;
    }
    if (rc == SST_OK) {
        rc = sst_node_update(ctx, "scratchpad", pad, &err);
        pad = NULL;
    }
    sst_value_unref(list);
    sst_value_unref(full);
    sst_value_unref(pad);
    return rc;
}
