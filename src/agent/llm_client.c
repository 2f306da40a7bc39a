/* SPDX-License-Identifier: MIT */
/* OpenAI-compatible chat completions over libcurl, and the provider switch; see llm_client.h. */
#include "llm_client.h"

#include <stdio.h>

#include "anthropic.h"
#include "http.h"
#include "sse.h"
#include "superstep/json.h"
#include "values/build.h"

void sst__llm_config_init(sst__llm_config *c) {
    sst__http_config h; /* the HTTP defaults are the HTTP layer's (http.c) */
    sst__http_config_init(&h);
    *c = (sst__llm_config){.connect_timeout_ms = h.connect_timeout_ms,
                           .timeout_ms = h.timeout_ms,
                           .max_attempts = h.max_attempts,
                           .retry_base_ms = h.retry_base_ms,
                           .max_retry_after_ms = h.max_retry_after_ms,
                           .max_response = h.max_response,
                           .stream = true};
}

/*
 * One chat's state across its attempts, for the HTTP handler: each attempt
 * starts a fresh event-stream parser and completion (a retried stream starts
 * over), and the end of a 200 reply makes the message.
 */
typedef struct chat {
    const sst__llm_config *cfg;
    const sst__http_request *q;
    sst__token_fn on_token;
    void *ud;
    sst__sse sse;
    sst__completion completion;
    sst_error *feed_err; /* the err of the sst__sse_feed under way, for on_event */
    sst_value *out;      /* owned: the message, once an attempt made it */
} chat;

static sst_code on_event(const char *event, const char *data, size_t len, void *ud) {
    (void)event;
    chat *ch = ud;
    return sst__completion_chunk(&ch->completion, data, len, ch->feed_err);
}

static void chat_begin(void *ud) {
    chat *ch = ud;
    sst__completion_init(&ch->completion, ch->on_token, ch->ud);
    sst__sse_init(&ch->sse, ch->cfg->max_response, on_event, ch);
}

static void chat_end(void *ud) {
    chat *ch = ud;
    sst__sse_free(&ch->sse);
    sst__completion_free(&ch->completion);
}

static sst_code chat_data(void *ud, const char *bytes, size_t len, bool *transient,
                          sst_error *err) {
    (void)transient; /* a chunk's error is the reply's: another attempt gets the same */
    chat *ch = ud;
    ch->feed_err = err;
    return sst__sse_feed(&ch->sse, bytes, len, err);
}

static sst_code chat_done(void *ud, const char *body, size_t len, bool *transient, sst_error *err) {
    chat *ch = ud;
    if (!ch->cfg->stream) {
        ch->out = sst__completion_parse_body(body, len, err);
        return ch->out != NULL ? SST_OK : sst__code(err);
    }
    if (sst__sse_finish(&ch->sse, err) == SST_OK) {
        ch->out = sst__completion_message(&ch->completion, err);
    }
    if (ch->out == NULL && err->code == SST_EPARSE) {
        *transient = true; /* a stream cut off: the connection dropped */
        sst__error_prefix(err, "LLM stream from %s", ch->q->shown);
    }
    return ch->out != NULL ? SST_OK : sst__code(err);
}

static bool is_one_of(const sst_value *s, const char *const *names, size_t n) {
    for (size_t i = 0; i < n; i++) {
        if (strcmp(sst_string_cstr(s), names[i]) == 0) {
            return true;
        }
    }
    return false;
}

/*
 * The content of a message as OpenAI takes it: a list of content blocks
 * (LangChain's, which may hold Anthropic's thinking blocks) keeps the parts
 * OpenAI knows, and an assistant's list becomes its text (null when it has
 * none): OpenAI-compatible servers do not all take parts from the assistant.
 * Any other content goes as it is.
 */
static sst_value *openai_content(const sst_value *content, bool assistant, sst_error *err) {
    static const char *const known[] = {"text", "image_url", "input_audio", "file"};
    if (!sst_is_array(content)) {
        return sst_value_ref(content);
    }
    sst__buf text;
    sst__buf_init(&text);
    sst_value *parts = sst_array_empty();
    for (size_t i = 0; parts != NULL && i < sst_array_len(content); i++) {
        const sst_value *p = sst_array_get(content, i);
        const sst_value *type = sst_object_get(p, "type");
        bool is_text = sst_is_string(p) || strcmp(sst_string_cstr(type), "text") == 0;
        const sst_value *t = sst_is_string(p) ? p : sst_object_get(p, "text");
        if (assistant) {
            if (is_text) {
                sst__buf_append(&text, sst_string_cstr(t), sst_string_len(t));
            }
        } else if (is_text) {
            sst_value *part =
                sst__set_take(sst_object_empty(), "type", sst_string_new("text", err), err);
            part =
                sst__set_take(part, "text", sst_value_ref(sst_is_string(t) ? t : sst_null()), err);
            parts = sst__push_take(parts, part, err);
        } else if (is_one_of(type, known, SST_ARRAY_LEN(known))) {
            parts = sst__push_take(parts, sst_value_ref(p), err);
        } /* thinking, redacted_thinking and the like: Anthropic's alone */
    }
    sst_value *out = parts;
    if (assistant && parts != NULL) {
        sst_value_unref(parts);
        out = text.oom   ? (sst__enomem(err), NULL)
              : text.len ? sst_string_newn(text.data, text.len, err)
                         : sst_null();
    }
    sst__buf_free(&text);
    return out;
}

/*
 * @p m (borrowed, a message in the internal shape) as OpenAI takes it: the
 * members it knows (LangChain's usage_metadata, response_metadata and id stay
 * home), with its content made OpenAI's (openai_content).
 */
static sst_value *openai_message(const sst_value *m, size_t i, sst_error *err) {
    static const char *const keep[] = {"role", "content", "tool_calls", "tool_call_id", "name"};
    if (!sst_is_object(m)) {
        sst__error(err, SST_EINVAL, "LLM client: messages[%zu] is %s, not an object", i,
                   sst_type_name(sst_value_type(m)));
        return NULL;
    }
    bool assistant = strcmp(sst_string_cstr(sst_object_get(m, "role")), "assistant") == 0;
    sst_value *out = sst__object_with_capacity(SST_ARRAY_LEN(keep), err);
    for (size_t k = 0; out != NULL && k < SST_ARRAY_LEN(keep); k++) {
        const sst_value *v = sst_object_get(m, keep[k]);
        if (v != NULL) {
            sst_value *sent = k == 1 ? openai_content(v, assistant, err) : sst_value_ref(v);
            out = sst__set_take(out, keep[k], sent, err);
        }
    }
    return out;
}

static char *request_body(const sst__llm_config *c, const sst_value *messages,
                          const sst_value *tools, sst_error *err) {
    sst_value *msgs = sst_array_empty();
    for (size_t i = 0; msgs != NULL && i < sst_array_len(messages); i++) {
        sst_value *m = openai_message(sst_array_get(messages, i), i, err);
        msgs = m != NULL ? sst_array_push_take(msgs, m, err) : (sst_value_unref(msgs), NULL);
    }
    if (msgs == NULL) {
        return NULL;
    }
    sst_value *r = sst__set_take(sst_object_empty(), "model", sst_string_new(c->model, err), err);
    r = sst__set_take(r, "messages", msgs, err);
    if (tools != NULL && sst_array_len(tools) > 0) {
        r = sst__set_take(r, "tools", sst_value_ref(tools), err);
    }
    r = sst__set_take(r, "stream", sst_bool(c->stream), err);
    if (c->stream) { /* the usage comes in a last chunk, when asked for (params may say no) */
        sst_value *o = sst__set_take(sst_object_empty(), "include_usage", sst_bool(true), err);
        r = sst__set_take(r, "stream_options", o, err);
    }
    for (size_t i = 0; r != NULL && i < sst_object_len(c->params); i++) {
        r = sst_object_setv_take(r, sst_object_key_at(c->params, i),
                                 sst_value_ref(sst_object_value_at(c->params, i)), err);
    }
    char *text = r != NULL ? sst_json_write(r, SST_JSON_COMPACT, NULL, err) : NULL;
    sst_value_unref(r);
    return text;
}

sst_value *sst__model_chat(const sst__llm_config *c, const sst_value *messages,
                           const sst_value *tools, sst__token_fn on_token, void *ud,
                           sst_error *err) {
    switch (c->provider) {
        case SST__LLM_OPENAI:
            return sst__llm_chat(c, messages, tools, on_token, ud, err);
        case SST__LLM_ANTHROPIC:
            return sst__anthropic_chat(c, messages, tools, on_token, ud, err);
    }
    sst__error(err, SST_EINVAL, "model client: unknown provider %d", (int)c->provider);
    return NULL;
}

void sst__llm_http_config(const sst__llm_config *c, sst__http_config *hc, char *trace) {
    sst__http_config_init(hc);
    hc->what = "LLM";
    hc->connect_timeout_ms = c->connect_timeout_ms;
    hc->timeout_ms = c->timeout_ms;
    hc->stall_timeout = c->stream;
    hc->max_attempts = c->max_attempts;
    hc->retry_base_ms = c->retry_base_ms;
    hc->max_retry_after_ms = c->max_retry_after_ms;
    hc->max_response = c->max_response;
    hc->cancelled = c->cancelled;
    hc->cancel_ud = c->cancel_ud;
    trace[0] = '\0';
    if (c->traceparent != NULL) {
        snprintf(trace, 96, "traceparent: %s", c->traceparent);
    }
}

sst_value *sst__llm_chat(const sst__llm_config *c, const sst_value *messages,
                         const sst_value *tools, sst__token_fn on_token, void *ud, sst_error *err) {
    /* Never NULL below: a callback's error is copied out, a dropped stream is told by its code. */
    SST__ERR_LOCAL(err);
    if (c->base_url == NULL || c->model == NULL || !sst_is_array(messages)) {
        sst__error(err, SST_EINVAL, "LLM client: base_url, model and a messages array are needed");
        return NULL;
    }
    sst__http_config hc;
    char trace[96];
    sst__llm_http_config(c, &hc, trace);
    sst__http_request q;
    char *body = NULL;
    chat ch = {.cfg = c, .q = &q, .on_token = on_token, .ud = ud};
    const char *headers[2] = {trace[0] != '\0' ? trace : NULL, NULL};
    sst__http_auth auth = {.key_env = c->api_key_env, .headers = headers};
    if (sst__http_request_init_auth(&q, &hc, c->base_url, "/chat/completions",
                                    c->stream ? "text/event-stream" : "application/json", &auth,
                                    err) == SST_OK &&
        (body = request_body(c, messages, tools, err)) != NULL) {
        sst__http_handler h = {.ud = &ch,
                               .begin = chat_begin,
                               .data = c->stream ? chat_data : NULL,
                               .done = chat_done,
                               .end = chat_end};
        if (sst__http_post(&q, body, &h, err) != SST_OK) {
            sst_value_unref(ch.out); /* only a message made before a later failure */
            ch.out = NULL;
        }
    }
    sst__free(body);
    sst__http_request_free(&q);
    return ch.out;
}
