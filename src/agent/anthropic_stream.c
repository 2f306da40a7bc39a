/* SPDX-License-Identifier: MIT */
/*
 * Anthropic Messages replies, streamed (events assembled block by block) or
 * whole, as assistant messages in the internal shape; see anthropic.h.
 */
#include "anthropic.h"

#include "redact.h"
#include "superstep/json.h"
#include "usage.h"
#include "values/build.h"

/* Blocks per reply: far above what a reply holds, low enough to bound a hostile stream. */
#define MAX_BLOCKS 4096

void sst__anthropic_stream_init(sst__anthropic_stream *s, sst__token_fn on_token, void *ud) {
    memset(s, 0, sizeof *s);
    s->on_token = on_token;
    s->ud = ud;
}

void sst__anthropic_stream_free(sst__anthropic_stream *s) {
    for (size_t i = 0; i < s->n_blocks; i++) {
        sst__anthropic_block *b = &s->blocks[i];
        sst_value_unref(b->start);
        sst__buf_free(&b->text);
        sst__buf_free(&b->json);
        sst__buf_free(&b->signature);
    }
    sst__free(s->blocks);
    sst_value_unref(s->message);
    sst_value_unref(s->usage);
    sst_value_unref(s->stop_reason);
    sst_value_unref(s->stop_sequence);
    memset(s, 0, sizeof *s);
}

static sst_code shape(sst_error *err, const char *type, const char *what) {
    return sst__error(err, SST_EPARSE, "Anthropic stream: a %s event %s", type, what);
}

/* *slot = @p v (borrowed; may be NULL), releasing what was there. */
static void keep(sst_value **slot, const sst_value *v) {
    sst_value *old = *slot;
    *slot = v != NULL ? sst_value_ref(v) : NULL;
    sst_value_unref(old);
}

/* @p usage (taken, or NULL) with the integer members of @p more (borrowed) put over its own. */
static sst_value *merge_usage(sst_value *usage, const sst_value *more, sst_error *err) {
    if (!sst_is_object(more)) {
        return usage;
    }
    if (usage == NULL) {
        usage = sst_object_empty();
    }
    for (size_t i = 0; usage != NULL && i < sst_object_len(more); i++) {
        const sst_value *v = sst_object_value_at(more, i);
        if (sst_is_int(v)) { /* message_delta's counts are totals so far, not increments */
            usage = sst__setv_take(usage, sst_object_key_at(more, i), sst_value_ref(v), err);
        }
    }
    return usage;
}

static sst_code block_start(sst__anthropic_stream *s, const sst_value *ev, sst_error *err) {
    const sst_value *index = sst_object_get(ev, "index");
    const sst_value *cb = sst_object_get(ev, "content_block");
    if (!sst_is_int(index) || !sst_is_object(cb) || !sst_is_string(sst_object_get(cb, "type"))) {
        return shape(err, "content_block_start", "without an index and a typed content_block");
    }
    if (sst_int_value(index) != (int64_t)s->n_blocks || s->n_blocks >= MAX_BLOCKS) {
        return sst__error(err, SST_EPARSE,
                          "Anthropic stream: content_block_start for block %lld, expected block "
                          "%zu",
                          (long long)sst_int_value(index), s->n_blocks);
    }
    if (s->n_blocks == s->cap_blocks &&
        !sst__grow((void **)&s->blocks, &s->cap_blocks, s->n_blocks, sizeof *s->blocks, 4)) {
        return sst__enomem(err);
    }
    sst__anthropic_block *b = &s->blocks[s->n_blocks++];
    memset(b, 0, sizeof *b);
    b->start = sst_value_ref(cb);
    sst__buf_init(&b->text);
    sst__buf_init(&b->json);
    sst__buf_init(&b->signature);
    return SST_OK;
}

static sst_code block_delta(sst__anthropic_stream *s, const sst_value *ev, sst_error *err) {
    const sst_value *index = sst_object_get(ev, "index");
    const sst_value *delta = sst_object_get(ev, "delta");
    if (!sst_is_int(index) || !sst_is_object(delta)) {
        return shape(err, "content_block_delta", "without an index and a delta");
    }
    if (sst_int_value(index) < 0 || sst_int_value(index) >= (int64_t)s->n_blocks) {
        return sst__error(err, SST_EPARSE,
                          "Anthropic stream: content_block_delta for block %lld, which did not "
                          "start",
                          (long long)sst_int_value(index));
    }
    sst__anthropic_block *b = &s->blocks[sst_int_value(index)];
    const char *type = sst_string_cstr(sst_object_get(delta, "type"));
    const char *field = NULL;
    sst__buf *into = NULL;
    if (strcmp(type, "text_delta") == 0) {
        field = "text", into = &b->text;
    } else if (strcmp(type, "thinking_delta") == 0) {
        field = "thinking", into = &b->text;
    } else if (strcmp(type, "signature_delta") == 0) {
        field = "signature", into = &b->signature;
    } else if (strcmp(type, "input_json_delta") == 0) {
        field = "partial_json", into = &b->json;
    } else {
        return SST_OK; /* a delta of a kind this client does not keep (citations_delta) */
    }
    const sst_value *piece = sst_object_get(delta, field);
    if (!sst_is_string(piece)) {
        return sst__error(err, SST_EPARSE, "Anthropic stream: a %s without its \"%s\" string", type,
                          field);
    }
    sst__buf_append(into, sst_string_cstr(piece), sst_string_len(piece));
    if (into->oom) {
        return sst__enomem(err);
    }
    bool answer = strcmp(type, "text_delta") == 0; /* thinking is not the answer's text */
    if (answer && s->on_token != NULL && sst_string_len(piece) > 0) {
        sst_code rc = s->on_token(sst_string_cstr(piece), sst_string_len(piece), s->ud);
        if (rc != SST_OK) {
            return sst__error_unless_set(err, rc, "Anthropic stream: the token handler failed");
        }
    }
    return SST_OK;
}

/* An error event: {"type": "error", "error": {"type", "message"}}. */
static sst_code error_event(sst__anthropic_stream *s, const sst_value *ev, sst_error *err) {
    const sst_value *e = sst_object_get(ev, "error");
    const char *type = sst_string_cstr(sst_object_get(e, "type"));
    const sst_value *msg = sst_object_get(e, "message");
    /* The server's text, masked before it is cut to fit: no part of a secret shows. */
    sst__buf said;
    sst__buf_init(&said);
    sst__redact(sst_string_cstr(msg), sst_string_len(msg), s->secrets, s->n_secrets, 160, &said);
    sst__buf_putc(&said, '\0');
    /* The server's trouble, not the request's: another attempt may go through. */
    s->error_event = true;
    s->transient = strcmp(type, "overloaded_error") == 0 || strcmp(type, "api_error") == 0 ||
                   strcmp(type, "rate_limit_error") == 0;
    sst_code rc = sst__error(err, s->transient ? SST_EUNAVAILABLE : SST_EINVAL,
                             "Anthropic stream: error event %.40s: %s",
                             type[0] != '\0' ? type : "(untyped)", said.oom ? "" : said.data);
    sst__buf_free(&said);
    return rc;
}

sst_code sst__anthropic_stream_event(sst__anthropic_stream *s, const char *event, const char *data,
                                     size_t len, sst_error *err) {
    sst_value *ev = sst_json_read(data, len, NULL, err);
    if (ev == NULL) {
        sst__error_prefix(err, "Anthropic stream: event '%s'", event);
        return sst__code(err);
    }
    const sst_value *t = sst_object_get(ev, "type");
    const char *type = sst_is_string(t) ? sst_string_cstr(t) : event;
    sst_code rc = SST_OK;
    if (!sst_is_object(ev)) {
        rc = sst__error(err, SST_EPARSE, "Anthropic stream: event '%s' is not an object", event);
    } else if (strcmp(type, "message_start") == 0) {
        const sst_value *m = sst_object_get(ev, "message");
        if (!sst_is_object(m)) {
            rc = shape(err, type, "without a message");
        } else {
            keep(&s->message, m);
            sst_value_unref(s->usage);
            s->usage = merge_usage(NULL, sst_object_get(m, "usage"), err);
            rc = s->usage != NULL || !sst_is_object(sst_object_get(m, "usage")) ? SST_OK
                                                                                : sst__code(err);
        }
    } else if (strcmp(type, "content_block_start") == 0) {
        rc = block_start(s, ev, err);
    } else if (strcmp(type, "content_block_delta") == 0) {
        rc = block_delta(s, ev, err);
    } else if (strcmp(type, "message_delta") == 0) {
        const sst_value *d = sst_object_get(ev, "delta");
        const sst_value *u = sst_object_get(ev, "usage");
        if (sst_is_object(d) && sst_object_get(d, "stop_reason") != NULL) {
            keep(&s->stop_reason, sst_object_get(d, "stop_reason"));
        }
        if (sst_is_object(d) && sst_object_get(d, "stop_sequence") != NULL) {
            keep(&s->stop_sequence, sst_object_get(d, "stop_sequence"));
        }
        if (sst_is_object(u)) {
            s->usage = merge_usage(s->usage, u, err);
            rc = s->usage != NULL ? SST_OK : sst__code(err);
        }
    } else if (strcmp(type, "message_stop") == 0) {
        s->stopped = true;
    } else if (strcmp(type, "error") == 0) {
        rc = error_event(s, ev, err);
    } /* content_block_stop, ping, and event types Anthropic may add: nothing to keep */
    sst_value_unref(ev);
    return rc;
}

/* The string member @p field of @p start followed by the deltas in @p more, as a new string. */
static sst_value *joined(const sst_value *start, const char *field, const sst__buf *more,
                         sst_error *err) {
    const sst_value *first = sst_object_get(start, field);
    sst__buf all;
    sst__buf_init(&all);
    sst__buf_append(&all, sst_string_cstr(first), sst_string_len(first));
    sst__buf_append(&all, more->data, more->len);
    sst_value *s = all.oom ? (sst__enomem(err), NULL) : sst_string_newn(all.data, all.len, err);
    sst__buf_free(&all);
    return s;
}

/* The final content block @p b made: its start with the deltas applied. */
static sst_value *finished_block(const sst__anthropic_block *b, size_t i, sst_error *err) {
    const char *type = sst_string_cstr(sst_object_get(b->start, "type"));
    sst_value *out = sst_value_ref(b->start);
    if (b->text.len > 0) {
        const char *field = strcmp(type, "thinking") == 0 ? "thinking" : "text";
        out = sst__set_take(out, field, joined(b->start, field, &b->text, err), err);
    }
    if (b->signature.len > 0) {
        out =
            sst__set_take(out, "signature", joined(b->start, "signature", &b->signature, err), err);
    }
    if (b->json.len > 0 && out != NULL) {
        sst_error perr = {0};
        sst_value *input = sst_json_read(b->json.data, b->json.len, NULL, &perr);
        if (input == NULL) {
            sst_value_unref(out);
            if (perr.code == SST_ENOMEM) {
                sst__enomem(err);
            } else {
                sst__error(err, SST_EPARSE,
                           "Anthropic stream: the input of block %zu (%s) is not JSON: %s", i, type,
                           perr.msg);
            }
            return NULL;
        }
        out = sst__set_take(out, "input", input, err);
    }
    return out;
}

sst_value *sst__anthropic_stream_message(const sst__anthropic_stream *s, sst_error *err) {
    if (!s->stopped) {
        sst__error(err, SST_EPARSE,
                   "Anthropic stream: the stream ended before message_stop: truncated");
        return NULL;
    }
    sst_value *content = sst_array_empty();
    for (size_t i = 0; content != NULL && i < s->n_blocks; i++) {
        sst_value *b = finished_block(&s->blocks[i], i, err);
        content =
            b != NULL ? sst_array_push_take(content, b, err) : (sst_value_unref(content), NULL);
    }
    if (content == NULL) {
        return NULL;
    }
    sst_value *m = sst__anthropic_message(content, s->usage, sst_object_get(s->message, "model"),
                                          s->stop_reason, s->stop_sequence, err);
    sst_value_unref(content);
    return m;
}

/* The content-list form of a block (LangChain's), or NULL with an error. */
static sst_value *list_block(const sst_value *b, sst_error *err) {
    const char *type = sst_string_cstr(sst_object_get(b, "type"));
    static const char *const thinking[] = {"type", "thinking", "signature"};
    static const char *const redacted[] = {"type", "data"};
    static const char *const text[] = {"type", "text"};
    const char *const *keys = NULL;
    size_t n = 0;
    if (strcmp(type, "thinking") == 0) {
        keys = thinking, n = SST_ARRAY_LEN(thinking);
    } else if (strcmp(type, "redacted_thinking") == 0) {
        keys = redacted, n = SST_ARRAY_LEN(redacted);
    } else if (strcmp(type, "text") == 0) {
        keys = text, n = SST_ARRAY_LEN(text);
    } else {
        return sst_value_ref(b); /* a server tool's block: kept as it came */
    }
    sst_value *out = sst__object_with_capacity(n, err);
    for (size_t k = 0; out != NULL && k < n; k++) {
        const sst_value *v = sst_object_get(b, keys[k]);
        out = sst__set_take(out, keys[k], sst_value_ref(v != NULL ? v : sst_string_empty()), err);
    }
    return out;
}

/* The tool call of a tool_use block: {id, type: "function", function: {name, arguments}}. */
static sst_value *tool_call(const sst_value *b, size_t i, sst_error *err) {
    const sst_value *id = sst_object_get(b, "id");
    const sst_value *name = sst_object_get(b, "name");
    const sst_value *input = sst_object_get(b, "input");
    if (!sst_is_string(id) || !sst_is_string(name)) {
        sst__error(err, SST_EPARSE, "Anthropic reply: tool_use block %zu without an id and a name",
                   i);
        return NULL;
    }
    char *args =
        sst_json_write(input != NULL ? input : sst_object_empty(), SST_JSON_COMPACT, NULL, err);
    if (args == NULL) {
        return NULL;
    }
    sst_value *fn =
        sst__set_take(sst__object_with_capacity(2, err), "name", sst_value_ref(name), err);
    fn = sst__set_take(fn, "arguments", sst_string_new(args, err), err);
    sst_free(args);
    sst_value *call = sst__object_with_capacity(3, err);
    call = sst__set_take(call, "id", sst_value_ref(id), err);
    call = sst__set_take(call, "type", sst_string_new("function", err), err);
    return sst__set_take(call, "function", fn, err);
}

sst_value *sst__anthropic_message(const sst_value *content, const sst_value *usage,
                                  const sst_value *model, const sst_value *stop_reason,
                                  const sst_value *stop_sequence, sst_error *err) {
    /* Blocks other than text and tool_use (thinking, redacted_thinking, a server tool's)
     * make the content LangChain's list of blocks; else it is the text. */
    bool as_list = false;
    for (size_t i = 0; i < sst_array_len(content); i++) {
        const char *type = sst_string_cstr(sst_object_get(sst_array_get(content, i), "type"));
        as_list = as_list || (strcmp(type, "text") != 0 && strcmp(type, "tool_use") != 0);
    }
    sst__buf text;
    sst__buf_init(&text);
    sst_value *calls = sst_array_empty();
    for (size_t i = 0; calls != NULL && i < sst_array_len(content); i++) {
        const sst_value *b = sst_array_get(content, i);
        const char *type = sst_string_cstr(sst_object_get(b, "type"));
        if (!sst_is_object(b)) {
            sst_value_unref(calls);
            calls = NULL;
            sst__error(err, SST_EPARSE, "Anthropic reply: content block %zu is not an object", i);
        } else if (strcmp(type, "text") == 0 && !as_list) {
            const sst_value *t = sst_object_get(b, "text");
            sst__buf_append(&text, sst_string_cstr(t), sst_string_len(t));
        } else if (strcmp(type, "tool_use") == 0) {
            sst_value *call = tool_call(b, i, err);
            calls = call != NULL ? sst_array_push_take(calls, call, err)
                                 : (sst_value_unref(calls), NULL);
        }
    }
    sst_value *c = NULL;
    if (calls != NULL && as_list) {
        c = sst_array_empty();
        for (size_t i = 0; c != NULL && i < sst_array_len(content); i++) {
            const sst_value *b = sst_array_get(content, i);
            if (strcmp(sst_string_cstr(sst_object_get(b, "type")), "tool_use") != 0) {
                c = sst__push_take(c, list_block(b, err), err);
            }
        }
    } else if (calls != NULL) {
        c = text.oom   ? (sst__enomem(err), NULL)
            : text.len ? sst_string_newn(text.data, text.len, err)
                       : sst_null();
    }
    sst__buf_free(&text);
    if (c == NULL) {
        sst_value_unref(calls);
        return NULL;
    }
    sst_value *m = sst__object_with_capacity(5, err);
    m = sst__set_take(m, "role", sst_string_new("assistant", err), err);
    m = sst__set_take(m, "content", c, err);
    if (sst_array_len(calls) > 0) {
        m = sst__set_take(m, "tool_calls", calls, err);
    } else {
        sst_value_unref(calls);
    }
    if (m != NULL && sst_is_object(usage)) {
        m = sst__set_take(m, "usage_metadata", sst__usage_from_anthropic(usage, err), err);
    }
    sst_value *meta = sst__object_with_capacity(4, err);
    if (sst_is_string(model)) {
        meta = sst__set_take(meta, "model_name", sst_value_ref(model), err);
    }
    if (sst_is_string(stop_reason)) {
        meta = sst__set_take(meta, "stop_reason", sst_value_ref(stop_reason), err);
    }
    if (sst_is_string(stop_sequence)) {
        meta = sst__set_take(meta, "stop_sequence", sst_value_ref(stop_sequence), err);
    }
    meta = sst__set_take(meta, "model_provider", sst_string_new("anthropic", err), err);
    return sst__set_take(m, "response_metadata", meta, err);
}

sst_value *sst__anthropic_parse_body(const char *body, size_t len, sst_error *err) {
    sst_value *v = sst_json_read(body, len, NULL, err);
    if (v == NULL) {
        sst__error_prefix(err, "Anthropic reply");
        return NULL;
    }
    const sst_value *content = sst_object_get(v, "content");
    sst_value *m = NULL;
    if (!sst_is_array(content)) {
        sst__error(err, SST_EPARSE, "Anthropic reply: a body without a content array");
    } else {
        m = sst__anthropic_message(content, sst_object_get(v, "usage"), sst_object_get(v, "model"),
                                   sst_object_get(v, "stop_reason"),
                                   sst_object_get(v, "stop_sequence"), err);
    }
    sst_value_unref(v);
    return m;
}

void sst__anthropic_error_text(const char *body, size_t len, sst__buf *out) {
    sst_value *v = sst_json_read(body, len, NULL, NULL);
    const sst_value *e = sst_object_get(v, "error");
    const sst_value *type = sst_object_get(e, "type");
    const sst_value *msg = sst_object_get(e, "message");
    if (sst_is_string(type) && sst_is_string(msg)) {
        sst__buf_printf(out, "%s: %s", sst_string_cstr(type), sst_string_cstr(msg));
    }
    sst_value_unref(v);
}
