/* SPDX-License-Identifier: MIT */
/*
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

typedef struct sst__llm_config {
    const char *base_url; /* e.g. "http://127.0.0.1:8080/v1" */
    const char *model;
    const char *api_key_env; /* the variable holding the key, or NULL for none */
    long connect_timeout_ms; /* default 5000 */
    long timeout_ms;         /* whole request (plain) or a stall (stream); default 60000 */
    unsigned max_attempts;   /* default 3 */
    long retry_base_ms;      /* first backoff, doubled each retry; default 500 */
    long max_retry_after_ms; /* cap on a server's Retry-After; default 30000 */
    size_t max_response;     /* bytes; default 8 MiB */
    bool stream;             /* default true */
    const sst_value *params; /* borrowed: more request members (temperature, max_tokens,
                                tool_choice, ...), or NULL */
    /* Stops a request early (sst__http_config.cancelled): a node out of time. NULL: never. */
    bool (*cancelled)(void *ud);
    void *cancel_ud;
} sst__llm_config;

void sst__llm_config_init(sst__llm_config *c);

/*
 * One chat completion: @p messages (an array of chat messages) and @p tools
 * (an array of tool schemas, or NULL). Streamed content reaches @p on_token.
 * @return the assistant message (new); NULL with SST_ETIMEOUT, SST_EUNAVAILABLE
 *         (connection failures, 429, 5xx: transient), SST_EINVAL (other 4xx,
 *         bad configuration), SST_EPARSE (a malformed or truncated reply),
 *         SST_ERANGE (a reply larger than max_response), SST_ENOMEM.
 */
sst_value *sst__llm_chat(const sst__llm_config *c, const sst_value *messages,
                         const sst_value *tools, sst__token_fn on_token, void *ud, sst_error *err);

#endif
