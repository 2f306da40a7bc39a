/* SPDX-License-Identifier: MIT */
/*
 * Agent middleware (superstep/agent.h): the public object, the model request
 * wrap hooks see, the wrap chains, and a node hook's jump. The agent graph
 * (react.c) runs the node hooks as nodes and the chains inside its model and
 * tool nodes; the built-in middleware live in mw_*.c.
 */
#ifndef SUPERSTEP_AGENT_MIDDLEWARE_H
#define SUPERSTEP_AGENT_MIDDLEWARE_H

#include "fake_model.h"
#include "llm_client.h"
#include "superstep/agent.h"
#include "tools.h"

struct sst_middleware {
    char *name; /* owned */
    sst_middleware_hooks h;
};

/* The model an agent calls: the scripted fake, or a provider's endpoint. */
typedef struct sst__model {
    sst__fake_model *fake;      /* borrowed, or NULL */
    const sst__llm_config *llm; /* borrowed, used when fake is NULL */
} sst__model;

/* The model behind a public model (borrowed). */
const sst__model *sst__model_of(const sst_model *m);

/*
 * One call of @p m: the scripted model's next reply, or a request with @p params (NULL:
 * the model's own) that stops when @p ctx's node runs out of time (@p ctx may be NULL)
 * and carries the traceparent of @p span (NULL: the task's).
 */
sst_value *sst__model_call(const sst__model *m, const sst_value *messages, const sst_value *tools,
                           const sst_value *params, sst_node_ctx *ctx, void *span,
                           sst__token_fn on_token, void *ud, sst_error *err);

struct sst_model_request {
    sst_node_ctx *ctx;
    const sst__model *model; /* borrowed */
    sst_value *messages;     /* owned: the conversation, without the system prompt */
    char *system_prompt;     /* owned, or NULL */
    sst_value *tools;        /* owned array */
};

/* The messages sent: the system prompt first, then the conversation (new). */
sst_value *sst__request_wire_messages(const sst_model_request *r, sst_error *err);

/* The last step of a model chain: the call itself. */
typedef sst_value *(*sst__model_final_fn)(sst_model_request *req, void *ud, sst_error *err);
/* Runs @p req through the wrap_model_call hooks of @p mw (first outermost), then @p final. */
sst_value *sst__run_model_chain(sst_middleware *const *mw, size_t n, sst_model_request *req,
                                sst__model_final_fn final, void *final_ud, sst_error *err);
/* The last step of a tool chain: runs the call, returns the tool message. */
typedef sst_value *(*sst__tool_final_fn)(const sst_value *call, void *ud, sst_error *err);
/* Runs @p call through the wrap_tool_call hooks of @p mw (first outermost), then @p final. */
sst_value *sst__run_tool_chain(sst_middleware *const *mw, size_t n, const sst_value *call,
                               sst_node_ctx *ctx, sst__tool_final_fn final, void *final_ud,
                               sst_error *err);

/* ---- node hooks ---- */

/* The jump a node hook asked for, NULL for none. Set by sst_agent_jump_to. */
typedef struct sst__hook_run {
    sst_node_ctx *ctx;
    const char *jump; /* "model", "tools", "end", or NULL */
} sst__hook_run;

/* Runs @p fn as the node hook of @p ctx; *jump gets its jump (NULL: none). */
sst_code sst__run_hook(sst_code (*fn)(sst_node_ctx *, void *), void *ud, sst_node_ctx *ctx,
                       const char **jump);

/* ---- helpers for built-in middleware ---- */

/* sst__tool_message_take (tools.h) with the text @p content. */
sst_value *sst__tool_message(const sst_value *call, const char *content, sst_error *err);
/* {"role": @p role, "content": @p content (taken)} (new). */
sst_value *sst__message_take(const char *role, sst_value *content, sst_error *err);
/* True when @p m has @p role ("tool", "assistant"), in OpenAI's shape or LangChain's type. */
bool sst__message_is(const sst_value *m, const char *role);
/* The index of the last assistant message of @p msgs, or SIZE_MAX. */
size_t sst__last_ai_index(const sst_value *msgs);
/* True when a tool message after @p from in @p msgs answers the call with id @p id. */
bool sst__call_answered(const sst_value *msgs, size_t from, const sst_value *id);

#endif
