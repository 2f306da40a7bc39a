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
 * `system_prompt`, and `stop_reason` ("max_iterations" when the limit ended it);
 * with a response_format also `structured_response` and `structured_retries`.
 * Each reply's usage_metadata is summed per run (sst_graph_result_usage and
 * checkpoint metadata "usage").
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
/**
 * A model behind Anthropic's Messages API (`POST {base_url}/v1/messages`),
 * natively: streamed replies, tool use, system prompts, extended thinking
 * (thinking blocks stay in the history, as LangChain keeps them), prompt
 * caching (sst_model_cache_prompt) and usage with cache tokens. Messages
 * stay in the one shape superstep uses (OpenAI's); conversion is done at the
 * edge (docs/providers.md). Retries, timeouts, bounded bodies and key
 * redaction are as for sst_model_openai.
 * @param base_url     NULL: https://api.anthropic.com
 * @param api_key_env  the variable holding the key, sent as x-api-key (NULL: none)
 * @return new model (strings copied); NULL with SST_EINVAL or SST_ENOMEM.
 */
SST_NODISCARD SST_API sst_model *sst_model_anthropic(const char *base_url, const char *model,
                                                     const char *api_key_env, sst_error *err);
/**
 * Anthropic's prompt caching: `cache_control` on the system prompt and the
 * last tool, so that later calls read them from the cache (usage then shows
 * input_token_details.cache_read). SST_EINVAL for other providers.
 */
SST_NODISCARD SST_API sst_code sst_model_cache_prompt(sst_model *m, bool on, sst_error *err);
/**
 * A model from a spec, as LangChain's init_chat_model names them:
 *   - "fake:FILE": the scripted model;
 *   - "http(s)://...": an OpenAI-compatible base URL (@p model_name names the model);
 *   - "openai:MODEL": OpenAI ($OPENAI_BASE_URL, else https://api.openai.com/v1);
 *   - "anthropic:MODEL": Anthropic ($ANTHROPIC_BASE_URL, else https://api.anthropic.com);
 *   - "anthropic:http(s)://...": Anthropic's API at that base URL (@p model_name names the model).
 * @p api_key_env NULL takes OPENAI_API_KEY or ANTHROPIC_API_KEY for the named providers.
 */
SST_NODISCARD SST_API sst_model *sst_model_from_spec(const char *spec, const char *model_name,
                                                     const char *api_key_env, sst_error *err);

/** Receives each streamed token of the model's replies. */
typedef sst_code (*sst_token_fn)(const char *text, size_t len, void *user_data);

/** How structured output is asked for (LangChain's ToolStrategy and ProviderStrategy). */
typedef enum sst_structured_strategy {
    SST_STRUCTURED_AUTO = 0, /* provider for OpenAI-compatible models, tool for the others */
    SST_STRUCTURED_TOOL,     /* the schema is one more tool; its call's arguments are the answer
                                (Anthropic: the model must call a tool, tool_choice "any") */
    SST_STRUCTURED_PROVIDER, /* OpenAI's response_format json_schema: the reply is the JSON */
} sst_structured_strategy;

/** Options of one model call (sst_model_invoke); fill with sst_model_call_opts_init. */
typedef struct sst_model_call_opts {
    const sst_value *tools; /* borrowed: tool schemas as chat completions lists them, or NULL */
    /* A JSON schema for the answer (an object schema; the subset of docs/json-schema.md);
     * borrowed. NULL: a plain reply. */
    const sst_value *response_format;
    sst_structured_strategy strategy; /* default SST_STRUCTURED_AUTO */
    unsigned max_attempts;            /* structured: answers the model may give; default 3 */
    sst_token_fn on_token;            /* NULL: none */
    void *token_user_data;
} sst_model_call_opts;

SST_API void sst_model_call_opts_init(sst_model_call_opts *o);

/**
 * One model call outside a graph: @p messages (an array of chat messages) in,
 * the assistant message out (new), with LangChain's usage_metadata and
 * response_metadata when the provider gives them. With response_format the
 * answer is checked against the schema; a wrong or missing answer is sent
 * back with the error, up to max_attempts, and the valid answer is the
 * reply's member "structured_response".
 * @return new message; NULL with the provider's errors (see sst_model_openai),
 *         SST_EINVAL (a bad schema; no valid answer after max_attempts, naming
 *         the last problem), SST_ERANGE (the scripted model ran out of replies).
 * Thread-safety: as an agent's model (see the top of this file).
 */
SST_NODISCARD SST_API sst_value *sst_model_invoke(sst_model *m, const sst_value *messages,
                                                  const sst_model_call_opts *o, sst_error *err);
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
/**
 * Adds every tool of @p from to @p t (the same functions and user data, which must
 * outlive @p t). SST_EINVAL for a name @p t has already (then @p t may hold some).
 */
SST_NODISCARD SST_API sst_code sst_toolset_extend(sst_toolset *t, const sst_toolset *from,
                                                  sst_error *err);

/**
 * Agent events: "llm_start" (the messages sent), "llm_end" (the reply),
 * "tool_start" (the call), "tool_end" (the tool message). @p data is
 * borrowed. Called on the thread running the node.
 */
typedef void (*sst_agent_event_fn)(const char *kind, const sst_value *data, void *user_data);

/* ---- Middleware ------------------------------------------------------------------------------
 *
 * LangChain 1.x's agent middleware: an agent takes an ordered list, and each
 * middleware may hook the agent's loop (docs/agent.md):
 *   - node hooks, each run as its own graph node "<name>.<hook>": before_agent
 *     (once per invoke, first to last), before_model (before each model call,
 *     first to last), after_model (after each reply, last to first),
 *     after_agent (once at the end, last to first). A hook reads the state
 *     (sst_node_state), writes updates (sst_node_update, e.g. "messages"), may
 *     interrupt (sst_node_interrupt) and may jump (sst_agent_jump_to);
 *   - wrap hooks around each model call (wrap_model_call: change the request,
 *     call the next handler zero, one or several times, change the reply) and
 *     each tool call (wrap_tool_call). The first middleware wraps all others.
 */

/** A model call as a wrap_model_call hook sees it: what will be sent. */
typedef struct sst_model_request sst_model_request;
/** Calls the rest of the chain (the next wrapper, at last the model): the reply (new) or NULL. */
typedef sst_value *(*sst_model_handler)(sst_model_request *req, void *handler_data, sst_error *err);
/** Runs the rest of the chain for a tool call: the tool message (new) or NULL. */
typedef sst_value *(*sst_tool_handler)(const sst_value *call, void *handler_data, sst_error *err);

/** What a middleware does; fill the hooks it has, leave the others NULL. */
typedef struct sst_middleware_hooks {
    sst_code (*before_agent)(sst_node_ctx *ctx, void *user_data);
    sst_code (*before_model)(sst_node_ctx *ctx, void *user_data);
    sst_code (*after_model)(sst_node_ctx *ctx, void *user_data);
    sst_code (*after_agent)(sst_node_ctx *ctx, void *user_data);
    /* Returns the reply (new): next's, a changed one, or its own; NULL with @p err. */
    sst_value *(*wrap_model_call)(sst_model_request *req, sst_model_handler next, void *next_data,
                                  void *user_data, sst_error *err);
    /* @p call {"id", "function": {"name", "arguments"}} (borrowed); returns the tool message. */
    sst_value *(*wrap_tool_call)(const sst_value *call, sst_node_ctx *ctx, sst_tool_handler next,
                                 void *next_data, void *user_data, sst_error *err);
    /* Adds the fields the middleware keeps in the agent's state (sst_graph_add_field),
     * once, when an agent is built; the names of fields it wants untracked (per run) go to
     * *untracked (up to 8, static strings). NULL: none. */
    sst_code (*add_fields)(sst_graph *g, void *user_data, const char **untracked,
                           size_t *n_untracked, sst_error *err);
    void *user_data;
    void (*free_user_data)(void *user_data); /* by sst_middleware_free; NULL: none */
} sst_middleware_hooks;

/** A middleware. */
typedef struct sst_middleware sst_middleware;

/**
 * A middleware named @p name (its hooks' node names start with it; unique among an
 * agent's middleware) with @p hooks (copied).
 * @return new middleware; NULL with SST_EINVAL (no name, a name over 100 bytes or with '.',
 *         ':' or '|', no hook)
 *         or SST_ENOMEM. On failure the user data is not freed.
 */
SST_NODISCARD SST_API sst_middleware *
sst_middleware_new(const char *name, const sst_middleware_hooks *hooks, sst_error *err);
/** Frees @p m and, through free_user_data, its user data. No agent may still use it. */
SST_API void sst_middleware_free(sst_middleware *m);
/** The middleware's name (borrowed). */
SST_API const char *sst_middleware_name(const sst_middleware *m);

/**
 * From a node hook: where the agent goes next instead of the hook's usual
 * successor: "model" (the first before_model hook, else the model), "tools"
 * (the last reply's tool calls that have no answer yet) or "end" (the first
 * after_agent hook, else the end), as LangChain's jump_to.
 * @return SST_OK; SST_EINVAL for another target or when not called from a node hook.
 */
SST_NODISCARD SST_API sst_code sst_agent_jump_to(sst_node_ctx *ctx, const char *target,
                                                 sst_error *err);

/** The conversation the model will get, without the system prompt (borrowed). */
SST_API const sst_value *sst_model_request_messages(const sst_model_request *r);
/** Replaces the conversation (takes @p messages: an array). SST_EINVAL if not an array. */
SST_NODISCARD SST_API sst_code sst_model_request_set_messages(sst_model_request *r,
                                                              sst_value *messages, sst_error *err);
/** The system prompt, or NULL for none (borrowed). */
SST_API const char *sst_model_request_system_prompt(const sst_model_request *r);
/** Replaces the system prompt (copied; NULL: none). */
SST_NODISCARD SST_API sst_code sst_model_request_set_system_prompt(sst_model_request *r,
                                                                   const char *prompt,
                                                                   sst_error *err);
/** The tools offered, as chat completions lists them (borrowed). */
SST_API const sst_value *sst_model_request_tools(const sst_model_request *r);
/** Replaces the tools offered (takes @p tools: an array). */
SST_NODISCARD SST_API sst_code sst_model_request_set_tools(sst_model_request *r, sst_value *tools,
                                                           sst_error *err);
/** Calls @p m instead of the agent's model (borrowed: must outlive the call). */
SST_API void sst_model_request_set_model(sst_model_request *r, sst_model *m);
/** The model node's context (its state, config, store). */
SST_API sst_node_ctx *sst_model_request_node(sst_model_request *r);

/**
 * LangChain's HumanInTheLoopMiddleware. @p interrupt_on (borrowed) maps tool names to
 * true (any decision), false (never asked) or {"allowed_decisions": ["approve", "edit",
 * "reject", "respond"], "description": "..."}. After a reply that calls such tools the
 * agent interrupts once with {"action_requests": [{"name", "args", "description"}],
 * "review_configs": [{"action_name", "allowed_decisions"}]}; resume with {"decisions":
 * [...]}, one per action request in order: {"type": "approve"}, {"type": "edit",
 * "edited_action": {"name", "args"}}, {"type": "reject", "message"?} (the model reads
 * the message as the tool's error) or {"type": "respond", "message"} (the model reads it
 * as the tool's result; the tool does not run).
 * @return new middleware; NULL with SST_EINVAL naming a bad entry, SST_ENOMEM.
 */
SST_NODISCARD SST_API sst_middleware *
sst_middleware_human_in_the_loop(const sst_value *interrupt_on, sst_error *err);
/**
 * LangChain's SummarizationMiddleware: before a model call, when the conversation
 * passes @p trigger_tokens (estimated: 4 characters a token), the messages before the
 * last @p keep_messages are summarized by @p model (borrowed) and replaced by one
 * message with the summary (RemoveMessage of all, then the summary and the kept
 * messages); a tool call is never kept apart from its results.
 */
SST_NODISCARD SST_API sst_middleware *sst_middleware_summarization(sst_model *model,
                                                                   int64_t trigger_tokens,
                                                                   size_t keep_messages,
                                                                   sst_error *err);

/** What a call limit does once reached. */
typedef enum sst_limit_behavior {
    SST_LIMIT_END = 0,  /* the run ends with an assistant message saying why */
    SST_LIMIT_ERROR,    /* the run fails with SST_ERANGE */
    SST_LIMIT_CONTINUE, /* tool calls only: the calls over the limit get an error result */
} sst_limit_behavior;

/**
 * LangChain's ModelCallLimitMiddleware: at most @p thread_limit model calls on a
 * thread and @p run_limit in one invoke (negative: no limit). Its counts are the state's
 * "thread_model_call_count" and "run_model_call_count" (untracked).
 */
SST_NODISCARD SST_API sst_middleware *sst_middleware_model_call_limit(int64_t thread_limit,
                                                                      int64_t run_limit,
                                                                      sst_limit_behavior exit,
                                                                      sst_error *err);
/**
 * LangChain's ToolCallLimitMiddleware: at most @p thread_limit / @p run_limit calls of
 * the tool @p tool_name (NULL: of all tools) per thread / invoke (negative: no limit).
 * Counts are kept per tool in "thread_tool_call_count" and "run_tool_call_count".
 */
SST_NODISCARD SST_API sst_middleware *
sst_middleware_tool_call_limit(const char *tool_name, int64_t thread_limit, int64_t run_limit,
                               sst_limit_behavior exit, sst_error *err);
/**
 * Retry with fallback models (LangChain's ModelRetryMiddleware and
 * ModelFallbackMiddleware in one): a model call that fails with a transient error
 * (timeout, 429, 5xx, connection) is tried again up to @p retries times, then the
 * same call goes to @p fallbacks in order (borrowed, each tried as often), and the
 * first reply wins. A call that fails for good (400, 401, ...) goes to the next model
 * at once.
 */
SST_NODISCARD SST_API sst_middleware *sst_middleware_model_fallback(sst_model *const *fallbacks,
                                                                    size_t n, unsigned retries,
                                                                    sst_error *err);

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
    /*
     * Long-term memory (LangMem's manage_memory and search_memory tools): the
     * namespace the memories live under, as labels; a label "{key}" is filled
     * at each call from the run's config.configurable.key (a string or an
     * integer; missing: the tool answers with an error), e.g.
     * {"memories", "{user_id}"}. Copied. NULL: no memory tools. The tools use
     * the run's store (sst_node_store): the one below, or sst_invoke_opts.store.
     * A tool of either name in the tool set is SST_EINVAL.
     */
    const char *const *memory_namespace;
    size_t n_memory_namespace;
    /* LangGraph's create_react_agent(store=...): compiled into the agent's graph (it keeps
     * a reference); NULL: none (an invoke may still give one). */
    sst_store *store;
    /*
     * Structured output (LangChain's create_agent(response_format=...)): a JSON object
     * schema (copied) the final answer must match. The valid answer is kept in the state's
     * "structured_response" and ends the run; a wrong or missing one is sent back to the
     * model with the error, up to structured_attempts times in a row, then the run fails
     * (SST_EINVAL). NULL: none.
     */
    const sst_value *response_format;
    sst_structured_strategy structured_strategy; /* default SST_STRUCTURED_AUTO */
    unsigned structured_attempts;                /* default 3 */
    /* The middleware, in order (the list is copied; the middleware are borrowed and must
     * outlive the agent); n 0: none. */
    sst_middleware *const *middleware;
    size_t n_middleware;
} sst_agent_opts;

SST_API void sst_agent_opts_init(sst_agent_opts *o);

/** A prebuilt ReAct agent. */
typedef struct sst_agent sst_agent;

/**
 * create_react_agent: llm_call -> one tool task per tool call (in
 * parallel, results in call order) -> llm_call ..., until a reply without
 * tool calls or max_iterations.
 * @param model, tools borrowed: must outlive the agent (tools may be NULL);
 *        with memory tools the agent keeps a copy of the tool set's list, so
 *        tools added to @p tools later are not offered
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

/* ---- Traces ----------------------------------------------------------------------------------
 *
 * OpenTelemetry traces over OTLP/HTTP (JSON): a span per run, superstep and
 * task, per model call (GenAI conventions: gen_ai.request.model, token
 * counts, finish reasons; prompts and replies only with capture_content) and
 * per tool call. Outgoing model requests carry the call span's traceparent.
 * Export is batched on a background thread with a bounded queue: a slow,
 * failing or absent collector never slows or fails a run (spans that cannot
 * be delivered are dropped and counted). See docs/tracing.md.
 */

/** An OTLP exporter with the engine's tracing hooks. */
typedef struct sst_otlp_tracer sst_otlp_tracer;

/** Tracer options; fill with sst_otlp_tracer_opts_init. */
typedef struct sst_otlp_tracer_opts {
    /* The traces URL ("http://127.0.0.1:4318/v1/traces"); NULL: from the environment
     * (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, else OTEL_EXPORTER_OTLP_ENDPOINT + "/v1/traces").
     * The other OTEL_* variables of docs/tracing.md apply either way. Copied. */
    const char *endpoint;
    const char *service_name; /* NULL: OTEL_SERVICE_NAME, else "superstep"; copied */
    bool capture_content;     /* model spans carry the messages sent and the reply */
} sst_otlp_tracer_opts;

SST_API void sst_otlp_tracer_opts_init(sst_otlp_tracer_opts *o);

/**
 * A tracer exporting to the endpoint the options or the environment name.
 * @return new tracer (its thread started); NULL with SST_ENOTFOUND (no endpoint set
 *         anywhere, or OTEL_SDK_DISABLED), SST_EINVAL (a bad endpoint), SST_ENOMEM, SST_EIO.
 */
SST_NODISCARD SST_API sst_otlp_tracer *sst_otlp_tracer_new(const sst_otlp_tracer_opts *o,
                                                           sst_error *err);
/** The hooks to pass as sst_invoke_opts.tracer (borrowed: lives as long as @p t). */
SST_API const sst_tracer *sst_otlp_tracer_hooks(sst_otlp_tracer *t);
/**
 * A parent for a run's span from a W3C traceparent (an incoming request's): the run
 * joins that trace. Pass it as sst_invoke_opts.trace_parent; free it with
 * sst_otlp_tracer_parent_free after the invoke. NULL for a malformed traceparent.
 */
SST_API void *sst_otlp_tracer_parent(sst_otlp_tracer *t, const char *traceparent);
SST_API void sst_otlp_tracer_parent_free(void *parent);
/** Waits up to @p timeout_ms for the queued spans to be sent. SST_ETIMEOUT, or the send's error. */
SST_NODISCARD SST_API sst_code sst_otlp_tracer_flush(sst_otlp_tracer *t, uint32_t timeout_ms,
                                                     sst_error *err);
/** Spans dropped so far (queue full, collector failing, shut down). */
SST_API uint64_t sst_otlp_tracer_dropped(sst_otlp_tracer *t);
/**
 * Sends what is queued within @p timeout_ms (a request in flight is cut off then) and
 * stops the exporting thread; later spans are dropped. Returns the spans dropped in all.
 * A process about to exit calls it with a short bound: a dead collector then costs at
 * most that.
 */
SST_API uint64_t sst_otlp_tracer_shutdown(sst_otlp_tracer *t, uint32_t timeout_ms);
/** Sends what is queued (a bounded wait), stops the thread, frees. NULL is a no-op. */
SST_API void sst_otlp_tracer_free(sst_otlp_tracer *t);

/* ---- Embeddings ----------------------------------------------------------------------------
 *
 * An embedder turns texts into vectors through an OpenAI-compatible
 * `POST {base_url}/embeddings` (OpenAI, vLLM, llama.cpp server, Ollama, LM
 * Studio, text-embeddings-inference): the texts go in batches, each reply is
 * checked (one embedding per text, placed by its index, each of the size the
 * caller expects), and transient failures (timeouts, 429 with Retry-After,
 * 5xx, dropped connections) are retried with backoff. Errors name the URL
 * (without user info), the HTTP status and an excerpt of the body with
 * credentials masked; the API key never appears. See docs/embeddings.md.
 *
 * sst_embedder_embed has the type of the store's embedding hook
 * (sst_embed_fn): pass it with the embedder as its user data.
 *
 * Thread-safety: an embedder is immutable once made; any number of threads may
 * call sst_embedder_embed on it at once (each call makes its own connection).
 * The API key is read from the environment at each call: do not change that
 * variable while calls run.
 */

/** An embeddings client. */
typedef struct sst_embedder sst_embedder;

/** Embedder options; fill with sst_embedder_opts_init, then set base_url and model. */
typedef struct sst_embedder_opts {
    const char *base_url;      /* e.g. "https://api.openai.com/v1"; copied */
    const char *model;         /* e.g. "text-embedding-3-small"; copied */
    const char *api_key_env;   /* the environment variable holding the key; NULL: none; copied */
    size_t dims;               /* sent as "dimensions" (models that can shorten their vectors);
                                  0: the model's own size, not sent; default 0 */
    size_t batch;              /* texts per request; default 256 */
    long timeout_ms;           /* each request, whole; default 60000 */
    long connect_timeout_ms;   /* default 5000 */
    unsigned max_attempts;     /* per request, retries included; default 3 */
    long retry_base_ms;        /* first backoff, doubled each retry (Retry-After wins); 500 */
    size_t max_response_bytes; /* one reply's size; default 64 MiB */
} sst_embedder_opts;

/** Fills @p o with the defaults (base_url and model NULL). */
SST_API void sst_embedder_opts_init(sst_embedder_opts *o);

/**
 * An embedder for an OpenAI-compatible endpoint.
 * @param o borrowed (its strings are copied); a batch, size, timeout or
 *          max_attempts of 0 keeps its default (retry_base_ms 0 means no wait)
 * @return new embedder; NULL with SST_EINVAL (no base URL or model, a URL that
 *         is not http(s)) or SST_ENOMEM.
 */
SST_NODISCARD SST_API sst_embedder *sst_embedder_openai(const sst_embedder_opts *o, sst_error *err);

/** Frees @p e; NULL is a no-op. No call may be running on it. */
SST_API void sst_embedder_free(sst_embedder *e);

/** The dims the embedder asks for (sst_embedder_opts.dims), 0 for the model's own size. */
SST_API size_t sst_embedder_dims(const sst_embedder *e);

/**
 * Embeds @p n texts. Matches sst_embed_fn: pass sst_embedder_embed as the hook
 * and the embedder as user_data.
 * @param embedder   an sst_embedder (void * for the hook's type)
 * @param texts      borrowed: @p n NUL-terminated UTF-8 strings (texts and out
 *                   may be NULL when @p n is 0)
 * @param dims       floats per embedding: each reply must give exactly this many
 *                   (and, when the embedder's dims is not 0, it must equal it)
 * @param out        OUT: n * dims floats, row-major, row i for texts[i];
 *                   unspecified on failure
 * @return SST_OK (n == 0 sends nothing); SST_EINVAL (bad arguments, an HTTP
 *         error status other than 429/5xx, embeddings of another size than
 *         @p dims: "expected 1536 dims, got 3072"), SST_EUTF8 (a text that is
 *         not UTF-8), SST_EPARSE (a malformed reply, or one with the wrong
 *         number of embeddings: "9 embeddings for 10 texts"), SST_ETIMEOUT or
 *         SST_EUNAVAILABLE (transient, after the retries), SST_ERANGE (a reply
 *         over max_response_bytes), SST_ENOMEM. With several batches the
 *         message starts with the texts of the batch that failed.
 * Thread-safety: thread-safe (see above).
 */
SST_NODISCARD SST_API sst_code sst_embedder_embed(void *embedder, const char *const *texts,
                                                  size_t n, size_t dims, float *out,
                                                  sst_error *err);

#ifdef __cplusplus
}
#endif
#endif /* SUPERSTEP_AGENT_H */
