/* SPDX-License-Identifier: MIT */
/*
 * The model clients: sst__model_chat sends a conversation to the configured
 * provider, OpenAI-compatible chat completions (sst__llm_chat, here) or
 * Anthropic's Messages API (anthropic.h); docs/providers.md describes both.
 *
 * A client for OpenAI-compatible chat completions (POST
 * {base_url}/chat/completions) over libcurl: plain or streamed replies,
 * timeouts, and retries with backoff on 429, 5xx and connection errors that
 * honour Retry-After (the HTTP machinery, shared with the embeddings client,
 * is http.h's). Errors name the URL, the HTTP status and an excerpt of
 * the body, and never a secret (redact.h): the URL without its user info
 * (which is still sent, as basic auth), no request header, and the excerpt
 * with bearer and basic credentials, sk-... keys, the API key (read from an
 * environment variable) and the URL's password masked.
 */
#ifndef SUPERSTEP_AGENT_LLM_CLIENT_H
#define SUPERSTEP_AGENT_LLM_CLIENT_H

#include "completion.h"
#include "http.h"

/* The API a model is reached through. Append only. */
typedef enum sst__llm_provider {
    SST__LLM_OPENAI = 0,   /* OpenAI-compatible chat completions (the default) */
    SST__LLM_ANTHROPIC = 1 /* Anthropic's Messages API (anthropic.h) */
} sst__llm_provider;

typedef struct sst__llm_config {
    sst__llm_provider provider; /* default SST__LLM_OPENAI */
    /* OpenAI: e.g. "http://127.0.0.1:8080/v1". Anthropic: e.g. "https://api.anthropic.com"
     * (also the default when NULL), to which "/v1/messages" is added. */
    const char *base_url;
    const char *model;
    const char *api_key_env; /* the variable holding the key, or NULL for none */
    /* Anthropic: cache_control {"type": "ephemeral"} on the system prompt's last block and
     * on the last tool (prompt caching). Default false; OpenAI caches by itself. */
    bool cache_prompt;
    long connect_timeout_ms; /* default 5000 */
    long timeout_ms;         /* whole request (plain) or a stall (stream); default 60000 */
    unsigned max_attempts;   /* default 3 */
    long retry_base_ms;      /* first backoff, doubled each retry; default 500 */
    long max_retry_after_ms; /* cap on a server's Retry-After; default 30000 */
    size_t max_response;     /* bytes; default 8 MiB */
    bool stream;             /* default true */
    /* borrowed: more request members (temperature, max_tokens, tool_choice, thinking, ...),
       or NULL; they go into the body as they are and win over the client's own */
    const sst_value *params;
    /* Stops a request early (sst__http_config.cancelled): a node out of time. NULL: never. */
    bool (*cancelled)(void *ud);
    void *cancel_ud;
    /* W3C trace context sent as the "traceparent" header (the model call's span), or NULL. */
    const char *traceparent;
} sst__llm_config;

void sst__llm_config_init(sst__llm_config *c);
/*
 * The HTTP settings of a model request made with @p c (timeouts, retries, limits,
 * cancel check) into @p hc, and its "traceparent: ..." header line into @p trace
 * (at least 96 bytes): *@p trace is "" without one.
 */
void sst__llm_http_config(const sst__llm_config *c, sst__http_config *hc, char *trace);

/*
 * One chat completion: @p messages (an array of chat messages) and @p tools
 * (an array of tool schemas, or NULL). Streamed content reaches @p on_token.
 * Messages go out with role, content, tool_calls, tool_call_id and name only;
 * a content list (LangChain's blocks, thinking included) keeps the parts
 * OpenAI knows (text, image_url, input_audio, file), and an assistant's is
 * sent as its text. A streamed request asks for stream_options.include_usage
 * unless @p c's params say otherwise.
 * @return the assistant message (new, completion.h's shape, with usage_metadata
 *         and response_metadata); NULL with SST_ETIMEOUT, SST_EUNAVAILABLE
 *         (connection failures, 429, 5xx: transient), SST_EINVAL (other 4xx,
 *         bad configuration), SST_EPARSE (a malformed or truncated reply),
 *         SST_ERANGE (a reply larger than max_response), SST_ENOMEM.
 */
sst_value *sst__llm_chat(const sst__llm_config *c, const sst_value *messages,
                         const sst_value *tools, sst__token_fn on_token, void *ud, sst_error *err);

/*
 * One model call through the provider @p c names: sst__llm_chat, or
 * sst__anthropic_chat (anthropic.h). @p messages are in the internal (OpenAI)
 * shape and @p tools in OpenAI's; the reply comes back in the same shape, with
 * usage_metadata and response_metadata. Errors as sst__llm_chat's.
 */
sst_value *sst__model_chat(const sst__llm_config *c, const sst_value *messages,
                           const sst_value *tools, sst__token_fn on_token, void *ud,
                           sst_error *err);

#endif
