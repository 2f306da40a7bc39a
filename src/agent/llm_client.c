/* SPDX-License-Identifier: MIT */
/* OpenAI-compatible chat completions over libcurl; see llm_client.h. */
#include "llm_client.h"

#include "http.h"
#include "sse.h"
#include "superstep/json.h"
#include "values/build.h"

void sst__llm_config_init(sst__llm_config *c) {
    memset(c, 0, sizeof *c);
    c->connect_timeout_ms = 5000;
    c->timeout_ms = 60000;
    c->max_attempts = 3;
    c->retry_base_ms = 500;
    c->max_retry_after_ms = 30000;
    c->max_response = 8u << 20;
    c->stream = true;
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

static sst_code chat_data(void *ud, const char *bytes, size_t len, sst_error *err) {
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

static char *request_body(const sst__llm_config *c, const sst_value *messages,
                          const sst_value *tools, sst_error *err) {
    sst_value *r = sst__set_take(sst_object_empty(), "model", sst_string_new(c->model, err), err);
    r = sst__set_take(r, "messages", sst_value_ref(messages), err);
    if (tools != NULL && sst_array_len(tools) > 0) {
        r = sst__set_take(r, "tools", sst_value_ref(tools), err);
    }
    r = sst__set_take(r, "stream", sst_bool(c->stream), err);
    for (size_t i = 0; r != NULL && i < sst_object_len(c->params); i++) {
        r = sst_object_setv_take(r, sst_object_key_at(c->params, i),
                                 sst_value_ref(sst_object_value_at(c->params, i)), err);
    }
    char *text = r != NULL ? sst_json_write(r, SST_JSON_COMPACT, NULL, err) : NULL;
    sst_value_unref(r);
    return text;
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
    sst__http_config_init(&hc);
    hc.what = "LLM";
    hc.connect_timeout_ms = c->connect_timeout_ms;
    hc.timeout_ms = c->timeout_ms;
    hc.stall_timeout = c->stream;
    hc.max_attempts = c->max_attempts;
    hc.retry_base_ms = c->retry_base_ms;
    hc.max_retry_after_ms = c->max_retry_after_ms;
    hc.max_response = c->max_response;
    hc.cancelled = c->cancelled;
    hc.cancel_ud = c->cancel_ud;
    sst__http_request q;
    char *body = NULL;
    chat ch = {.cfg = c, .q = &q, .on_token = on_token, .ud = ud};
    if (sst__http_request_init(&q, &hc, c->base_url, "/chat/completions",
                               c->stream ? "text/event-stream" : "application/json", c->api_key_env,
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
