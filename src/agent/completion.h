/* SPDX-License-Identifier: MIT */
/*
 * Chat-completion responses of OpenAI-compatible servers, as values: a whole
 * response body, or a stream of chunks (the data of server-sent events)
 * assembled into the same assistant message. Token deltas and tool-call
 * fragments reach a callback as they arrive. The message carries the reply's
 * token usage and metadata in LangChain's names (usage.h, docs/providers.md).
 */
#ifndef SUPERSTEP_AGENT_COMPLETION_H
#define SUPERSTEP_AGENT_COMPLETION_H

#include "common.h"
#include "superstep/value.h"

/* A content delta (borrowed text, @p len bytes). Return SST_OK or an error to stop. */
typedef sst_code (*sst__token_fn)(const char *text, size_t len, void *ud);

typedef struct sst__completion {
    sst__token_fn on_token; /* may be NULL */
    void *ud;
    sst__buf content;      /* the content so far */
    sst_value *tool_calls; /* owned array of {"id","type","function":{"name","arguments"}} */
    char *finish_reason;   /* owned, or NULL */
    char *model;           /* owned: the model the server named, or NULL */
    sst_value *usage;      /* owned: the last "usage" object a chunk carried, or NULL */
    bool done;             /* "[DONE]" was seen */
} sst__completion;

void sst__completion_init(sst__completion *c, sst__token_fn on_token, void *ud);
void sst__completion_free(sst__completion *c);
/*
 * One streamed chunk (the data of one event). "[DONE]" ends the stream. A
 * chunk's "usage" (the last chunk's, with no choices, when the request asked
 * for stream_options.include_usage) is kept for the message.
 * SST_EPARSE for malformed JSON (with its position) or a chunk of the wrong
 * shape; an error from on_token; SST_ENOMEM.
 */
sst_code sst__completion_chunk(sst__completion *c, const char *data, size_t len, sst_error *err);
/*
 * The assistant message the stream made: {"role": "assistant", "content":
 * text or null, "tool_calls": [...] (only when there are some),
 * "usage_metadata": {...} (only when the server reported usage),
 * "response_metadata": {"model_name", "finish_reason" (each when known),
 * "model_provider": "openai"}}. SST_EPARSE when the stream was truncated (no
 * "[DONE]" and no finish_reason).
 */
sst_value *sst__completion_message(const sst__completion *c, sst_error *err);
/* The message of a whole (not streamed) response body, in the same shape. */
sst_value *sst__completion_parse_body(const char *body, size_t len, sst_error *err);

#endif
