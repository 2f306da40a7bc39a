/* SPDX-License-Identifier: MIT */
/*
 * The agent's model node (llm_call): the request built from the state, run
 * through the middleware's wrap_model_call hooks to the model, the reply's
 * usage reported, structured output checked, and the state updated.
 */
#include <stdio.h>

#include "react_int.h"
#include "superstep/json.h"
#include "values/build.h"

/* Where a model call's tokens go: the agent's callback and the graph's message stream. */
typedef struct tokens {
    const sst__agent *a;
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

/* The LLM client's cancel check: the model node ran out of time (its timeout policy). */
static bool node_out_of_time(void *ctx) {
    return sst_node_cancelled(ctx);
}

sst_value *sst__model_call(const sst__model *m, const sst_value *messages, const sst_value *tools,
                           const sst_value *params, sst_node_ctx *ctx, void *span,
                           sst__token_fn on_token, void *ud, sst_error *err) {
    if (m->fake != NULL) {
        return sst__fake_model_chat(m->fake, on_token, ud, err);
    }
    sst__llm_config cfg = *m->llm; /* the call's own: it stops when its node is out of time */
    char trace[64];
    if (ctx != NULL) {
        cfg.cancelled = node_out_of_time;
        cfg.cancel_ud = ctx;
        if (sst_node_traceparent(ctx, span, trace, sizeof trace)) {
            cfg.traceparent = trace; /* the provider's spans join the run's trace */
        }
    }
    if (params != NULL) {
        cfg.params = params;
    }
    return sst__model_chat(&cfg, messages, tools, on_token, ud, err);
}

/* The tools the model is offered: the agent's, and the structured answer's (tool strategy). */
static sst_value *offered_tools(const sst__agent *a, sst_error *err) {
    sst_value *tools = sst__tools_schema(a->tools, err);
    const sst__structured *so = a->opts->structured;
    if (tools != NULL && so != NULL && so->strategy == SST__SO_TOOL) {
        tools = sst__push_take(tools, sst__structured_tool(so, err), err);
    }
    return tools;
}

/* What the last step of the model chain needs. */
typedef struct model_call {
    const sst__agent *a;
    tokens *k;
} model_call;

/* GenAI's name of the model's provider, and its model name. */
static const char *provider_name(const sst__model *m) {
    return m->llm == NULL                           ? "superstep.fake"
           : m->llm->provider == SST__LLM_ANTHROPIC ? "anthropic"
                                                    : "openai";
}

/* A span for the model call (OpenTelemetry's GenAI conventions), or NULL when untraced. */
static void *start_llm_span(sst_node_ctx *ctx, const sst__model *m, const sst_value *msgs) {
    const sst_tracer *t = sst_node_tracer(ctx);
    if (t == NULL) {
        return NULL;
    }
    const char *model = m->llm != NULL && m->llm->model != NULL ? m->llm->model : "fake";
    sst_error err = {0};
    sst_value *a = sst__set_take(sst_object_empty(), "gen_ai.operation.name",
                                 sst_string_new("chat", &err), &err);
    a = sst__set_take(a, "gen_ai.provider.name", sst_string_new(provider_name(m), &err), &err);
    a = sst__set_take(a, "gen_ai.request.model", sst_string_new(model, &err), &err);
    if (t->capture_content) {
        char *text = sst_json_write(msgs, SST_JSON_COMPACT, NULL, &err);
        a = sst__set_take(a, "gen_ai.input.messages",
                          text != NULL ? sst_string_new(text, &err) : NULL, &err);
        sst_free(text);
    }
    char name[160];
    snprintf(name, sizeof name, "chat %s", model);
    void *span = sst_node_span_start(ctx, "llm", name, a);
    sst_value_unref(a);
    return span;
}

/* Ends the model call's span with the reply's usage and finish reason. */
static void end_llm_span(sst_node_ctx *ctx, void *span, const sst_value *reply,
                         const sst_error *failed) {
    if (span == NULL) {
        return;
    }
    sst_error err = {0};
    sst_value *a = sst_object_empty();
    const sst_value *usage = sst_object_get(reply, "usage_metadata");
    const sst_value *meta = sst_object_get(reply, "response_metadata");
    const sst_value *in = sst_object_get(usage, "input_tokens");
    const sst_value *out = sst_object_get(usage, "output_tokens");
    const sst_value *reason = sst_object_get(meta, "finish_reason");
    reason = reason != NULL ? reason : sst_object_get(meta, "stop_reason");
    const sst_value *model = sst_object_get(meta, "model_name");
    if (sst_is_int(in)) {
        a = sst__set_take(a, "gen_ai.usage.input_tokens", sst_value_ref(in), &err);
    }
    if (sst_is_int(out)) {
        a = sst__set_take(a, "gen_ai.usage.output_tokens", sst_value_ref(out), &err);
    }
    if (sst_is_string(reason)) {
        a = sst__set_take(a, "gen_ai.response.finish_reasons",
                          sst__push_take(sst_array_empty(), sst_value_ref(reason), &err), &err);
    }
    if (sst_is_string(model)) {
        a = sst__set_take(a, "gen_ai.response.model", sst_value_ref(model), &err);
    }
    const sst_tracer *t = sst_node_tracer(ctx);
    if (reply != NULL && t != NULL && t->capture_content) {
        char *text = sst_json_write(reply, SST_JSON_COMPACT, NULL, &err);
        a = sst__set_take(a, "gen_ai.output.messages",
                          text != NULL ? sst_string_new(text, &err) : NULL, &err);
        sst_free(text);
    }
    sst_node_span_end(ctx, span, reply != NULL ? SST_OK : failed->code,
                      reply != NULL ? NULL : failed->msg, a);
    sst_value_unref(a);
}

/* The end of the chain: the request sent to its model. */
static sst_value *call_model(sst_model_request *req, void *ud, sst_error *err) {
    const model_call *mc = ud;
    const sst__model *m = req->model;
    sst_value *msgs = sst__request_wire_messages(req, err);
    sst_value *params = NULL; /* the scripted model takes none */
    sst_value *reply = NULL;
    if (msgs != NULL &&
        (m->llm == NULL || sst__structured_params(mc->a->opts->structured, m->llm->params,
                                                  m->llm->provider, &params, err) == SST_OK)) {
        sst__react_event(mc->a, "llm_start", msgs);
        void *span = start_llm_span(req->ctx, m, msgs);
        reply = sst__model_call(req->model, msgs, req->tools, params, req->ctx, span, on_tokens,
                                mc->k, err);
        end_llm_span(req->ctx, span, reply, err);
    }
    sst_value_unref(params);
    sst_value_unref(msgs);
    return reply;
}

/*
 * Structured output after a reply: the messages to add (@p list and @p full, the
 * reply's, get the feedback), "structured_response" when the answer is valid, and
 * "structured_retries". SST_EINVAL (in @p err) once the wrong answers reach the bound.
 */
static sst_code structured_outcome(const sst__agent *a, sst_node_ctx *ctx, const sst_value *reply,
                                   sst_value **list, sst_value **full, sst_error *err) {
    const sst__structured *so = a->opts->structured;
    sst__so_outcome out = {0};
    sst_code rc = sst__structured_check(so, reply, &out, err);
    int64_t retries = sst_int_value(sst_object_get(sst_node_state(ctx), "structured_retries")) + 1;
    if (rc == SST_OK && out.retry && retries >= (int64_t)so->max_attempts) {
        rc = sst__error(err, SST_EINVAL,
                        "structured output: no valid answer after %u attempts; the last: %s",
                        so->max_attempts, out.error);
    }
    for (size_t i = 0; rc == SST_OK && i < sst_array_len(out.feedback); i++) {
        const sst_value *m = sst_array_get(out.feedback, i);
        *list = sst_array_push_take(*list, sst_value_ref(m), err);
        *full = *list != NULL ? sst_array_push_take(*full, sst_value_ref(m), err) : *full;
        rc = *list != NULL && *full != NULL ? SST_OK : sst__enomem(err);
    }
    if (rc == SST_OK && out.value != NULL) {
        rc = sst_node_update(ctx, "structured_response", out.value, err);
        out.value = NULL;
    }
    if (rc == SST_OK) {
        rc = sst_node_update(ctx, "structured_retries", sst_int_new(out.retry ? retries : 0, err),
                             err);
    }
    sst__so_outcome_free(&out);
    return rc;
}

/* The request from the state: its conversation, system prompt and the tools offered. */
static sst_code build_request(const sst__agent *a, sst_node_ctx *ctx, sst_model_request *req,
                              sst_error *err) {
    const sst_value *state = sst_node_state(ctx);
    memset(req, 0, sizeof *req);
    req->ctx = ctx;
    req->model = a->model;
    const sst_value *history = sst_object_get(state, "messages");
    req->messages = sst_value_ref(history != NULL ? history : sst_array_empty());
    req->tools = offered_tools(a, err);
    const sst_value *prompt = sst_object_get(state, "system_prompt");
    return req->tools == NULL
               ? sst__code(err)
               : sst_model_request_set_system_prompt(
                     req, sst_is_string(prompt) ? sst_string_cstr(prompt) : NULL, err);
}

static void free_request(sst_model_request *req) {
    sst_value_unref(req->messages);
    sst_value_unref(req->tools);
    sst__free(req->system_prompt);
}

/* Writes the reply (and what structured output adds) to the state. */
static sst_code write_reply(const sst__agent *a, sst_node_ctx *ctx, sst_value *reply,
                            sst_error *err) {
    sst_value *list = sst_array_push_take(sst_array_empty(), sst_value_ref(reply), err);
    sst_value *full = sst_array_push_take(sst_array_empty(), sst_value_ref(reply), err);
    sst_code rc = list != NULL && full != NULL ? SST_OK : sst__enomem(err);
    if (rc == SST_OK && a->opts->structured != NULL) {
        rc = structured_outcome(a, ctx, reply, &list, &full, err);
    }
    if (rc == SST_OK) {
        rc = sst_node_update(ctx, "messages", list, err);
    } else {
        sst_value_unref(list);
    }
    if (rc == SST_OK) {
        rc = sst_node_update(ctx, "full_messages", full, err);
    } else {
        sst_value_unref(full);
    }
    if (rc == SST_OK) {
        rc = sst_node_update(ctx, "last_response", reply, err);
        reply = NULL;
    }
    sst_value_unref(reply);
    if (rc == SST_OK) {
        rc = sst_node_update(ctx, "iteration", sst_int_new(1, err), err);
    }
    if (rc == SST_OK && a->jumps) { /* a jump asked for before this call is spent */
        rc = sst_node_update(ctx, "jump_to", sst_null(), err);
    }
    return rc;
}

sst_code sst__react_llm_call(sst_node_ctx *ctx, void *ud) {
    const sst__agent *a = ud;
    sst_error err = {0};
    /* The reply's id is fixed first: streamed tokens and the stored message share it. */
    char id[37];
    if (sst__uuid4(id, &err) != SST_OK) {
        return sst_node_fail(ctx, err.code, "%s", err.msg);
    }
    tokens k = {a, ctx, id};
    model_call mc = {a, &k};
    sst_model_request req;
    sst_value *reply = NULL;
    if (build_request(a, ctx, &req, &err) == SST_OK) {
        reply = sst__run_model_chain(a->opts->middleware, a->opts->n_middleware, &req, call_model,
                                     &mc, &err);
    }
    free_request(&req);
    if (reply != NULL && sst_is_object(reply)) {
        reply = sst__set_take(reply, "id", sst_string_new(id, &err), &err);
        sst__react_event(a, "llm_end", reply);
    } else if (reply != NULL) {
        sst_value_unref(reply);
        reply = NULL;
        sst__error(&err, SST_ETASK, "model call: the reply is not a message object");
    }
    if (reply == NULL) {
        /* Transient model errors (timeouts, 429, 5xx) are retried by the node's policy. */
        return sst_node_fail(ctx, sst__code(&err), "%s", err.msg);
    }
    const sst_value *usage = sst_object_get(reply, "usage_metadata");
    if (sst_is_object(usage) && sst_node_report_usage(ctx, usage, &err) != SST_OK) {
        sst_value_unref(reply);
        return sst_node_fail(ctx, sst__code(&err), "%s", err.msg);
    }
    sst_code rc = write_reply(a, ctx, reply, &err);
    return rc == SST_OK ? SST_OK : sst_node_fail(ctx, rc, "%s", err.msg);
}
