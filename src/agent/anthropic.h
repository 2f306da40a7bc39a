/* SPDX-License-Identifier: MIT */
/*
 * Anthropic's Messages API (POST {base_url}/v1/messages) as a model provider.
 * Messages inside superstep keep one shape, OpenAI's (llm_client.h); the
 * conversion happens here, at the edge: anthropic_request.c turns a
 * conversation and OpenAI-shaped tools into a request body,
 * anthropic_stream.c turns a streamed or whole reply into an assistant
 * message with usage_metadata and response_metadata (usage.h), and
 * anthropic_client.c posts it over http.h with the key in "x-api-key".
 * docs/providers.md describes the mapping, thinking blocks and prompt caching.
 */
#ifndef SUPERSTEP_AGENT_ANTHROPIC_H
#define SUPERSTEP_AGENT_ANTHROPIC_H

#include "llm_client.h"

#define SST__ANTHROPIC_BASE_URL   "https://api.anthropic.com"
#define SST__ANTHROPIC_VERSION    "2023-06-01" /* the anthropic-version header */
#define SST__ANTHROPIC_MAX_TOKENS 4096         /* max_tokens unless params give one */

/* ---- the request (anthropic_request.c) ---------------------------------- */

/*
 * The request body for @p messages (borrowed, internal shape) and @p tools
 * (borrowed, OpenAI's [{type: "function", function: {name, description,
 * parameters}}], or NULL): {model, max_tokens, system, messages, tools,
 * stream} and then @p c's params, which win. (a) System messages become the
 * top-level "system", an array of text blocks. (b) An assistant's content
 * list (LangChain's blocks: thinking, redacted_thinking, text) is restored
 * verbatim, before a tool_use block per tool call whose JSON arguments become
 * its "input". (c) Tool messages become tool_result blocks ({tool_use_id,
 * content, is_error: true when the content starts with "error: "}), and
 * consecutive user-side messages (tool results, then user text) one user
 * message. (d) Messages left with no content are dropped. (e) With
 * cache_prompt, the system prompt's last block and the last tool carry
 * cache_control {"type": "ephemeral"}.
 * @return new object; NULL with SST_EINVAL (a message or tool of the wrong
 *         shape, tool-call arguments that are not a JSON object: the message
 *         names which), SST_ENOMEM.
 */
sst_value *sst__anthropic_request(const sst__llm_config *c, const sst_value *messages,
                                  const sst_value *tools, sst_error *err);

/* ---- the reply (anthropic_stream.c) ------------------------------------- */

/* One content block of a streamed reply, as its events build it. */
typedef struct sst__anthropic_block {
    sst_value *start;   /* owned: content_block_start's content_block */
    sst__buf text;      /* text_delta or thinking_delta text so far */
    sst__buf json;      /* input_json_delta fragments so far */
    sst__buf signature; /* signature_delta so far */
} sst__anthropic_block;

/* A streamed reply being assembled from its events (the data of server-sent events). */
typedef struct sst__anthropic_stream {
    sst__token_fn on_token; /* text deltas, as they arrive; may be NULL */
    void *ud;
    const char *const *secrets; /* borrowed: masked in an error event's text (redact.h) */
    size_t n_secrets;
    sst__anthropic_block *blocks; /* owned, by index */
    size_t n_blocks, cap_blocks;
    sst_value *message;     /* owned: message_start's message (model, usage), or NULL */
    sst_value *usage;       /* owned: the usage so far (message_start's, message_delta's over it) */
    sst_value *stop_reason; /* owned: message_delta's, or NULL */
    sst_value *stop_sequence; /* owned: message_delta's, or NULL */
    bool stopped;             /* message_stop was seen */
    bool error_event;         /* OUT: the stream failed on an error event */
    bool transient;           /* OUT: the error event's error may pass on another attempt */
} sst__anthropic_stream;

void sst__anthropic_stream_init(sst__anthropic_stream *s, sst__token_fn on_token, void *ud);
void sst__anthropic_stream_free(sst__anthropic_stream *s);

/*
 * One event: its data (@p len bytes of JSON; @p event, the SSE event name,
 * is used when the data names no "type"). message_start, content_block_start,
 * content_block_delta (text_delta reaches on_token; input_json_delta,
 * thinking_delta and signature_delta are kept), content_block_stop,
 * message_delta, message_stop and ping are understood; unknown events are
 * ignored, as Anthropic asks. An "error" event is an error: overloaded_error,
 * api_error and rate_limit_error are SST_EUNAVAILABLE with s->transient set,
 * any other type SST_EINVAL; the message names its type and quotes its text
 * with s->secrets and credentials masked.
 * @return SST_OK; SST_EPARSE (malformed JSON with its position, an event of
 *         the wrong shape), the error event's code, on_token's error, SST_ENOMEM.
 */
sst_code sst__anthropic_stream_event(sst__anthropic_stream *s, const char *event, const char *data,
                                     size_t len, sst_error *err);

/*
 * The assistant message the events made (see sst__anthropic_message).
 * @return new; NULL with SST_EPARSE (no message_stop: a truncated stream; a
 *         tool input that is not JSON), SST_ENOMEM.
 */
sst_value *sst__anthropic_stream_message(const sst__anthropic_stream *s, sst_error *err);

/*
 * The assistant message of a reply's content blocks (borrowed array) in the
 * internal shape: {"role": "assistant", "content", "tool_calls" (a tool_use
 * block each: {id, type: "function", function: {name, arguments: the compact
 * JSON text of its input}}), "usage_metadata" (from @p usage, when it is an
 * object), "response_metadata": {model_name, stop_reason, stop_sequence (each
 * when known), model_provider: "anthropic"}}. The content is the text (null
 * when there is none), or, when the reply has blocks other than text and
 * tool_use (thinking, redacted_thinking, a server tool's), LangChain's list of
 * the blocks in order without the tool_use ones: {type: "text", text},
 * {type: "thinking", thinking, signature}, {type: "redacted_thinking", data},
 * others as they came. @p model, @p stop_reason and @p stop_sequence are
 * borrowed strings or NULL/null.
 * @return new; NULL with SST_EPARSE (a block of the wrong shape), SST_ENOMEM.
 */
sst_value *sst__anthropic_message(const sst_value *content, const sst_value *usage,
                                  const sst_value *model, const sst_value *stop_reason,
                                  const sst_value *stop_sequence, sst_error *err);

/*
 * The message of a whole (not streamed) reply body: {"type": "message",
 * "content": [...], "model", "stop_reason", "stop_sequence", "usage"}.
 * @return new; NULL with SST_EPARSE (not JSON, with its position; no content
 *         array), SST_ENOMEM.
 */
sst_value *sst__anthropic_parse_body(const char *body, size_t len, sst_error *err);

/*
 * Appends "TYPE: MESSAGE" to @p out when @p body (@p len bytes) is an error
 * body {"type": "error", "error": {"type", "message"}}; nothing otherwise.
 */
void sst__anthropic_error_text(const char *body, size_t len, sst__buf *out);

/* ---- the client (anthropic_client.c) ------------------------------------ */

/*
 * One call to Anthropic's Messages API with @p c (provider SST__LLM_ANTHROPIC;
 * base_url NULL means SST__ANTHROPIC_BASE_URL, and a base URL that ends in
 * "/v1" gets "/messages" only), as sst__llm_chat does for OpenAI: the key from
 * the environment variable api_key_env goes in "x-api-key", with
 * "anthropic-version: 2023-06-01"; streamed text reaches @p on_token.
 * Retried: connection failures, timeouts, 429 (after its retry-after), 5xx
 * and 529, a stream cut before message_stop, an error event of type
 * overloaded_error, api_error or rate_limit_error. An HTTP error quotes the
 * body's error type and message; no message shows the key.
 * @return the assistant message (new; sst__anthropic_message); NULL with
 *         SST_ETIMEOUT, SST_EUNAVAILABLE (transient), SST_EINVAL (400, 401,
 *         403, 404 and other 4xx, an error event of another type, a bad
 *         conversation or configuration), SST_EPARSE (a malformed or truncated
 *         reply), SST_ERANGE (a reply larger than max_response), SST_ENOMEM.
 */
sst_value *sst__anthropic_chat(const sst__llm_config *c, const sst_value *messages,
                               const sst_value *tools, sst__token_fn on_token, void *ud,
                               sst_error *err);

#endif
