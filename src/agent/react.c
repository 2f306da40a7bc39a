/* SPDX-License-Identifier: MIT */
/* The ReAct agent graph; see react.h. */
#include "react.h"

#include <stdio.h>

#include "superstep/json.h"
#include "values/build.h"

void sst__react_opts_init(sst__react_opts *o) {
    memset(o, 0, sizeof *o);
    o->max_iterations = 10;
}

typedef struct agent {
    const sst__model *model;
    const sst__tools *tools;
    const sst__react_opts *opts;
} agent;

static void event(const agent *a, const char *kind, const sst_value *data) {
    if (a->opts->on_event != NULL && data != NULL) {
        a->opts->on_event(kind, data, a->opts->event_ud);
    }
}

/* Where a model call's tokens go: the agent's callback and the graph's message stream. */
typedef struct tokens {
    const agent *a;
    sst_node_ctx *ctx;
    const char *id; /* the reply's message id, fixed before the first token */
} tokens;

static sst_code on_tokens(const char *text, size_t len, void *ud) {
    tokens *k = ud;
    sst_code rc = SST_OK;
    if (k->a->opts->on_token != NULL) {
        rc = k->a->opts->on_token(text, len, k->a->opts->token_ud);
    }
    if (rc == SST_OK && sst_node_streams_messages(k->ctx)) {
        sst_error err = {0};
        sst_value *e = sst__set_take(sst_object_empty(), "id", sst_string_new(k->id, &err), &err);
        e = sst__set_take(e, "delta", sst_string_newn(text, len, &err), &err);
        rc = sst_node_stream_message(k->ctx, e, &err);
    }
    return rc;
}

/* One model call: the system prompt, then the conversation. */
/* The LLM client's cancel check: the model node ran out of time (its timeout policy). */
static bool node_out_of_time(void *ctx) {
    return sst_node_cancelled(ctx);
}

static sst_code llm_call(sst_node_ctx *ctx, void *ud) {
    const agent *a = ud;
    sst_error err = {0};
    const sst_value *state = sst_node_state(ctx);
    sst_value *msgs = sst_array_empty();
    const sst_value *prompt = sst_object_get(state, "system_prompt");
    if (sst_is_string(prompt)) {
        sst_value *sys =
            sst__set_take(sst_object_empty(), "role", sst_string_new("system", &err), &err);
        sys = sst__set_take(sys, "content", sst_value_ref(prompt), &err);
        msgs = sys != NULL ? sst_array_push_take(msgs, sys, &err) : (sst_value_unref(msgs), NULL);
    }
    const sst_value *history = sst_object_get(state, "messages");
    for (size_t i = 0; msgs != NULL && i < sst_array_len(history); i++) {
        msgs = sst_array_push_take(msgs, sst_value_ref(sst_array_get(history, i)), &err);
    }
    /* The reply's id is fixed first: streamed tokens and the stored message share it. */
    char id[37];
    if (sst__uuid4(id, &err) != SST_OK) {
        sst_value_unref(msgs);
        return sst_node_fail(ctx, err.code, "%s", err.msg);
    }
    tokens k = {a, ctx, id};
    event(a, "llm_start", msgs);
    sst_value *reply = NULL;
    if (msgs != NULL) {
        if (a->model->fake != NULL) {
            reply = sst__fake_model_chat(a->model->fake, on_tokens, &k, &err);
        } else {
            sst_value *schema = sst__tools_schema(a->tools, &err);
            sst__llm_config cfg = *a->model->llm; /* the node's own: it stops when out of time */
            cfg.cancelled = node_out_of_time;
            cfg.cancel_ud = ctx;
            reply = schema != NULL ? sst__llm_chat(&cfg, msgs, schema, on_tokens, &k, &err) : NULL;
            sst_value_unref(schema);
        }
        reply = reply != NULL ? sst__set_take(reply, "id", sst_string_new(id, &err), &err) : NULL;
        event(a, "llm_end", reply);
    }
    sst_value_unref(msgs);
    if (reply == NULL) {
        /* Transient model errors (timeouts, 429, 5xx) are retried by the node's policy. */
        return sst_node_fail(ctx, sst__code(&err), "%s", err.msg);
    }
    sst_value *list = sst_array_push_take(sst_array_empty(), sst_value_ref(reply), &err);
    sst_value *full = sst_array_push_take(sst_array_empty(), sst_value_ref(reply), &err);
    sst_code rc = list != NULL ? sst_node_update(ctx, "messages", list, &err) : SST_ENOMEM;
    if (rc == SST_OK) {
        rc = full != NULL ? sst_node_update(ctx, "full_messages", full, &err) : SST_ENOMEM;
        full = NULL;
    }
    if (rc == SST_OK) {
        rc = sst_node_update(ctx, "last_response", reply, &err);
        reply = NULL;
    }
    if (rc == SST_OK) {
        rc = sst_node_update(ctx, "iteration", sst_int_new(1, &err), &err);
    }
    sst_value_unref(full);
    sst_value_unref(reply);
    return rc == SST_OK ? SST_OK : sst_node_fail(ctx, rc, "%s", err.msg);
}

/* After llm_call: one tool task per call (in call order), or the end. */
static sst_value *after_llm(const sst_value *state, void *ud, sst_error *err) {
    (void)ud;
    const sst_value *history = sst_object_get(state, "messages");
    const sst_value *last = sst_array_get(history, sst_array_len(history) - 1);
    const sst_value *calls = sst_object_get(last, "tool_calls");
    if (sst_array_len(calls) == 0) {
        return sst_string_new(SST_END, err);
    }
    if (sst_int_value(sst_object_get(state, "iteration")) >=
        sst_int_value(sst_object_get(state, "max_iterations"))) {
        return sst_string_new("stop", err);
    }
    sst_value *sends = sst_array_empty();
    for (size_t i = 0; sends != NULL && i < sst_array_len(calls); i++) {
        sends = sst_array_push_take(
            sends, sst_send_new("tool", sst_value_ref(sst_array_get(calls, i)), err), err);
    }
    return sends;
}

/* One tool call; with approval, an interrupt first. */
static sst_code tool(sst_node_ctx *ctx, void *ud) {
    const agent *a = ud;
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
    event(a, "tool_start", call);
    sst_value *m = call != NULL ? sst__tools_call_ctx(a->tools, call, ctx, &err) : NULL;
    event(a, "tool_end", m);
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

/* The iteration limit: the run ends with a clear reason. */
static sst_code stop(sst_node_ctx *ctx, void *ud) {
    (void)ud;
    return sst_node_update(ctx, "stop_reason", sst_string_new("max_iterations", NULL), NULL);
}

void sst__react_free(sst__react *r) {
    sst_compiled_graph_free(r->app);
    sst_graph_free(r->graph);
    sst__free(r->agent);
    memset(r, 0, sizeof *r);
}

sst_code sst__react_build(sst__react *r, const sst__model *model, const sst__tools *tools,
                          const sst__react_opts *opts, sst_error *err) {
    memset(r, 0, sizeof *r);
    agent *a = sst__calloc(1, sizeof *a);
    sst_graph *g = a != NULL ? sst_graph_new(err) : NULL;
    if (g == NULL) {
        sst__free(a);
        return a == NULL ? sst__enomem(err) : sst__code(err);
    }
    r->agent = a;
    r->graph = g;
    a->model = model;
    a->tools = tools;
    a->opts = opts;
    sst_node_opts no;
    sst_node_opts_init(&no);
    /* The model call retries (a flaky provider): nodes have no retry by default. */
    sst_retry_policy_init(&no.retry);
    no.retry.initial_interval_s = 0.2;
    sst_value *prompt =
        opts->system_prompt != NULL ? sst_string_new(opts->system_prompt, err) : NULL;
    sst_code rc =
        sst_graph_add_field(g, "messages", sst_reducer_add_messages(), sst_array_empty(), err);
    if (rc == SST_OK) {
        rc = sst_graph_add_field(g, "iteration", sst_reducer_sum(), sst_int_new(0, err), err);
    }
    if (rc == SST_OK) {
        rc = sst_graph_add_field(g, "max_iterations", sst_reducer_replace(),
                                 sst_int_new(opts->max_iterations, err), err);
    }
    if (rc == SST_OK && prompt != NULL) {
        rc = sst_graph_add_field(g, "system_prompt", sst_reducer_replace(), prompt, err);
        prompt = NULL;
    }
    sst_value_unref(prompt);
    /* Seed 002's agent fields: every message ever produced, the tool scratchpad, a shared
     * context, the tools offered and the last model reply. */
    if (rc == SST_OK) {
        rc = sst_graph_add_field(g, "full_messages", sst_reducer_append(), sst_array_empty(), err);
    }
    if (rc == SST_OK) {
        rc = sst_graph_add_field(g, "scratchpad", sst_reducer_append(), sst_array_empty(), err);
    }
    if (rc == SST_OK) {
        rc = sst_graph_add_field(g, "context", sst_reducer_merge(), sst_object_empty(), err);
    }
    if (rc == SST_OK) {
        sst_value *schema = sst__tools_schema(tools, err);
        rc = schema != NULL ? sst_graph_add_field(g, "tools", sst_reducer_replace(), schema, err)
                            : sst__code(err);
    }
    if (rc == SST_OK) {
        rc = sst_graph_add_field(g, "last_response", sst_reducer_replace(), NULL, err);
    }
    if (rc == SST_OK) {
        rc = sst_graph_add_node(g, "llm_call", llm_call, a, &no, err);
    }
    if (rc == SST_OK) {
        rc = sst_graph_add_node(g, "tool", tool, a, NULL, err);
    }
    if (rc == SST_OK) {
        rc = sst_graph_add_node(g, "stop", stop, NULL, NULL, err);
    }
    const char *const path[] = {"tool", "stop", SST_END};
    sst_value *map = sst_array_empty();
    for (size_t i = 0; i < 3 && map != NULL; i++) {
        map = sst_array_push_take(map, sst_string_new(path[i], err), err);
    }
    if (rc == SST_OK) {
        rc = map != NULL ? sst_graph_add_conditional_edges(g, "llm_call", after_llm, NULL, map, err)
                         : sst__code(err);
    }
    sst_value_unref(map);
    if (rc == SST_OK) {
        rc = sst_graph_add_edge(g, SST_START, "llm_call", err);
    }
    if (rc == SST_OK) {
        rc = sst_graph_add_edge(g, "tool", "llm_call", err);
    }
    if (rc == SST_OK) {
        rc = sst_graph_add_edge(g, "stop", SST_END, err);
    }
    sst_compile_opts co;
    sst_compile_opts_init(&co);
    co.store = opts->store;
    if (rc == SST_OK && (r->app = sst_graph_compile(g, &co, err)) == NULL) {
        rc = sst__code(err);
    }
    if (rc != SST_OK) {
        sst__react_free(r);
    }
    return rc;
}
