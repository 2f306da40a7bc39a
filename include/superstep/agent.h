/* SPDX-License-Identifier: MIT */
/**
 * @file agent.h
 * @brief The agent layer: models (an OpenAI-compatible endpoint, or a
 * scripted offline one), tools, and the prebuilt ReAct agent graph.
 *
 * An agent is a compiled graph like any other: run it with
 * sst_graph_invoke on a durable thread for multi-turn conversations
 * (input {"messages": [{"role": "user", "content": "..."}]}). Its state:
 * `messages` (add_messages), `iteration` (sum), `max_iterations`,
 * `system_prompt`, and `stop_reason` ("max_iterations" when the limit ended it).
 * Link `superstep_agent` (libcurl).
 *
 * Thread-safety: set up models and tool sets (sst_model_set_param,
 * sst_toolset_add) before an agent uses them. After that a model, a tool set
 * and an agent may serve several invokes at once (the scripted model hands
 * out its replies under a lock); tool functions and callbacks may be called
 * from worker threads and must be thread-safe themselves.
 */
#ifndef SUPERSTEP_AGENT_H
#define SUPERSTEP_AGENT_H

#include "superstep/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A chat model. */
typedef struct sst_model sst_model;

/**
 * A model behind an OpenAI-compatible `POST {base_url}/chat/completions`
 * (OpenAI, vLLM, llama.cpp server, Ollama, LM Studio). @p api_key_env names
 * the environment variable holding the key (NULL: none); the key is never
 * logged. Replies are streamed; transient failures (timeouts, 429 with
 * Retry-After, 5xx, dropped connections) are retried.
 * @return new model (strings copied); NULL with SST_EINVAL or SST_ENOMEM.
 */
SST_NODISCARD SST_API sst_model *sst_model_openai(const char *base_url, const char *model,
                                                  const char *api_key_env, sst_error *err);
/**
 * The scripted offline model: one assistant reply per call from the JSONL
 * file @p path ({"content": ..., "tool_calls": [...]} per line), in order.
 * @return new model; NULL with SST_EIO, SST_EPARSE (naming the line), SST_ENOMEM.
 */
SST_NODISCARD SST_API sst_model *sst_model_fake(const char *path, sst_error *err);
/**
 * Sets a request parameter of an OpenAI-compatible model ("temperature",
 * "max_tokens", "tool_choice", "top_p", ...); @p value is borrowed (copied).
 * @return SST_OK; SST_EINVAL for the scripted model or the members the client
 *         sets itself (model, messages, tools, stream).
 */
SST_NODISCARD SST_API sst_code sst_model_set_param(sst_model *m, const char *name,
                                                   const sst_value *value, sst_error *err);
/** "fake:FILE" or an http(s) base URL (then @p model_name and @p api_key_env apply). */
SST_NODISCARD SST_API sst_model *sst_model_from_spec(const char *spec, const char *model_name,
                                                     const char *api_key_env, sst_error *err);
SST_API void sst_model_free(sst_model *m);

/** A set of tools. */
typedef struct sst_toolset sst_toolset;
/**
 * A tool: gets its arguments (borrowed, already checked against the
 * schema), returns the result (new: a string, or any value sent as JSON),
 * or NULL with @p err filled; the model then reads "error: ...".
 */
typedef sst_value *(*sst_tool_fn)(const sst_value *args, void *user_data, sst_error *err);

SST_NODISCARD SST_API sst_toolset *sst_toolset_new(sst_error *err);
SST_API void sst_toolset_free(sst_toolset *t);
/**
 * Adds a tool. @p parameters (borrowed) is a JSON schema with "type": "object".
 * @return SST_OK; SST_EINVAL for a duplicate or empty name or a bad schema.
 */
SST_NODISCARD SST_API sst_code sst_toolset_add(sst_toolset *t, const char *name,
                                               const char *description, const sst_value *parameters,
                                               sst_tool_fn fn, void *user_data, sst_error *err);

/** Receives each streamed token of the model's replies. */
typedef sst_code (*sst_token_fn)(const char *text, size_t len, void *user_data);

/**
 * Agent events: "llm_start" (the messages sent), "llm_end" (the reply),
 * "tool_start" (the call), "tool_end" (the tool message). @p data is
 * borrowed. Called on the thread running the node.
 */
typedef void (*sst_agent_event_fn)(const char *kind, const sst_value *data, void *user_data);

/** Agent options; fill with sst_agent_opts_init. */
typedef struct sst_agent_opts {
    const char *system_prompt; /* copied; NULL for none */
    int64_t max_iterations;    /* model calls per run; default 10 */
    bool approve_tools;        /* interrupt before each tool call: resume with "approve",
                                  "reject" or {"arguments": {...}} (by interrupt id) */
    sst_token_fn on_token;     /* NULL: none */
    void *token_user_data;
    sst_agent_event_fn on_event; /* NULL: none */
    void *event_user_data;
} sst_agent_opts;

SST_API void sst_agent_opts_init(sst_agent_opts *o);

/** A prebuilt ReAct agent. */
typedef struct sst_agent sst_agent;

/**
 * create_react_agent: llm_call -> one tool task per tool call (in
 * parallel, results in call order) -> llm_call ..., until a reply without
 * tool calls or max_iterations.
 * @param model, tools borrowed: must outlive the agent (tools may be NULL)
 * @return new agent; NULL with SST_EINVAL or SST_ENOMEM.
 */
SST_NODISCARD SST_API sst_agent *sst_agent_new(sst_model *model, const sst_toolset *tools,
                                               const sst_agent_opts *opts, sst_error *err);
SST_API void sst_agent_free(sst_agent *a);
/** The agent's compiled graph (borrowed). */
SST_API const sst_compiled_graph *sst_agent_graph(const sst_agent *a);
/**
 * The supersteps a run may take with the max_iterations given at creation
 * (a model call and a tool step per iteration, then the stop): pass it as
 * sst_invoke_opts.recursion_limit, whose default (25) is smaller once
 * max_iterations exceeds 11.
 */
SST_API uint64_t sst_agent_recursion_limit(const sst_agent *a);

#ifdef __cplusplus
}
#endif
#endif /* SUPERSTEP_AGENT_H */
