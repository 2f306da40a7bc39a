/* SPDX-License-Identifier: MIT */
/* Anthropic's Messages API over http.h; see anthropic.h. */
#include "anthropic.h"

#include <stdio.h>

#include "http.h"
#include "sse.h"
#include "superstep/json.h"

/*
 * One call's state across its attempts, for the HTTP handler: each attempt
 * starts a fresh event-stream parser and assembly (a retried stream starts
 * over), and the end of a 200 reply makes the message.
 */
typedef struct call {
    const sst__llm_config *cfg;
    const sst__http_request *q;
    sst__token_fn on_token;
    void *ud;
    sst__sse sse;
    sst__anthropic_stream stream;
    sst_error *feed_err; /* the err of the sst__sse_feed under way, for on_event */
    sst_value *out;      /* owned: the message, once an attempt made it */
} call;

static sst_code on_event(const char *event, const char *data, size_t len, void *ud) {
    call *c = ud;
    return sst__anthropic_stream_event(&c->stream, event, data, len, c->feed_err);
}

static void call_begin(void *ud) {
    call *c = ud;
    sst__anthropic_stream_init(&c->stream, c->on_token, c->ud);
    c->stream.secrets = c->q->secrets; /* an error event may quote the key */
    c->stream.n_secrets = SST_ARRAY_LEN(c->q->secrets);
    sst__sse_init(&c->sse, c->cfg->max_response, on_event, c);
}

static void call_end(void *ud) {
    call *c = ud;
    sst__sse_free(&c->sse);
    sst__anthropic_stream_free(&c->stream);
}

static sst_code call_data(void *ud, const char *bytes, size_t len, bool *transient,
                          sst_error *err) {
    call *c = ud;
    c->feed_err = err;
    sst_code rc = sst__sse_feed(&c->sse, bytes, len, err);
    if (rc != SST_OK && c->stream.error_event) {
        /* An overloaded server said so mid-stream: retried as a dropped stream. */
        *transient = c->stream.transient;
        sst__error_prefix(err, "LLM stream from %s", c->q->shown);
    }
    return rc;
}

static sst_code call_done(void *ud, const char *body, size_t len, bool *transient, sst_error *err) {
    call *c = ud;
    if (!c->cfg->stream) {
        c->out = sst__anthropic_parse_body(body, len, err);
        return c->out != NULL ? SST_OK : sst__code(err);
    }
    if (sst__sse_finish(&c->sse, err) == SST_OK) {
        c->out = sst__anthropic_stream_message(&c->stream, err);
    }
    if (c->out == NULL && err->code == SST_EPARSE) {
        *transient = true; /* a stream cut off: the connection dropped */
        sst__error_prefix(err, "LLM stream from %s", c->q->shown);
    }
    return c->out != NULL ? SST_OK : sst__code(err);
}

static void call_error_text(void *ud, const char *body, size_t len, sst__buf *out) {
    (void)ud;
    sst__anthropic_error_text(body, len, out);
}

/* The path to post to: "/v1/messages", or "/messages" when the base URL names /v1 itself. */
static const char *messages_path(const char *base) {
    size_t n = strlen(base);
    n = n > 0 && base[n - 1] == '/' ? n - 1 : n;
    return n >= 3 && memcmp(base + n - 3, "/v1", 3) == 0 ? "/messages" : "/v1/messages";
}

sst_value *sst__anthropic_chat(const sst__llm_config *c, const sst_value *messages,
                               const sst_value *tools, sst__token_fn on_token, void *ud,
                               sst_error *err) {
    /* Never NULL below: a callback's error is copied out, a dropped stream is told by its code. */
    SST__ERR_LOCAL(err);
    if (c->model == NULL || c->model[0] == '\0' || !sst_is_array(messages)) {
        sst__error(err, SST_EINVAL, "Anthropic client: a model and a messages array are needed");
        return NULL;
    }
    const char *base = c->base_url != NULL ? c->base_url : SST__ANTHROPIC_BASE_URL;
    sst__http_config hc;
    char trace[96];
    sst__llm_http_config(c, &hc, trace);
    const char *headers[] = {"anthropic-version: " SST__ANTHROPIC_VERSION,
                             trace[0] != '\0' ? trace : NULL, NULL};
    sst__http_auth auth = {
        .key_env = c->api_key_env, .key_header = "x-api-key", .headers = headers};
    sst__http_request q;
    char *body = NULL;
    call ch = {.cfg = c, .q = &q, .on_token = on_token, .ud = ud};
    sst_value *req = sst__anthropic_request(c, messages, tools, err);
    if (req != NULL &&
        sst__http_request_init_auth(&q, &hc, base, messages_path(base),
                                    c->stream ? "text/event-stream" : "application/json", &auth,
                                    err) == SST_OK &&
        (body = sst_json_write(req, SST_JSON_COMPACT, NULL, err)) != NULL) {
        sst__http_handler h = {.ud = &ch,
                               .begin = call_begin,
                               .data = c->stream ? call_data : NULL,
                               .done = call_done,
                               .end = call_end,
                               .error_text = call_error_text};
        if (sst__http_post(&q, body, &h, err) != SST_OK) {
            sst_value_unref(ch.out); /* only a message made before a later failure */
            ch.out = NULL;
        }
    }
    sst_value_unref(req);
    sst_free(body);
    if (req != NULL) {
        sst__http_request_free(&q);
    }
    return ch.out;
}
