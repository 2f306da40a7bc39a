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
