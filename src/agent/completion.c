/* SPDX-License-Identifier: MIT */
/* Chat-completion responses, whole or streamed; see completion.h. */
#include "completion.h"

#include <stdio.h>

#include "superstep/json.h"
#include "usage.h"
#include "values/build.h"

void sst__completion_init(sst__completion *c, sst__token_fn on_token, void *ud) {
    memset(c, 0, sizeof *c);
    c->on_token = on_token;
    c->ud = ud;
    sst__buf_init(&c->content);
    c->tool_calls = sst_array_empty();
}

void sst__completion_free(sst__completion *c) {
    sst__buf_free(&c->content);
    sst_value_unref(c->tool_calls);
    sst__free(c->finish_reason);
    sst__free(c->model);
    sst_value_unref(c->usage);
}

static sst_code shape(sst_error *err, const char *what) {
    return sst__error(err, SST_EPARSE, "chat completion: %s", what);
}

static bool set_owned(char **slot, const sst_value *s) {
    if (!sst_is_string(s)) {
        return true;
    }
    char *copy = sst__strndup(sst_string_cstr(s), sst_string_len(s));
    if (copy == NULL) {
        return false;
    }
    sst__free(*slot);
    *slot = copy;
    return true;
}

/* @p obj (taken) with the string @p piece appended to its member @p key. */
static sst_value *append_str(sst_value *obj, const char *key, const sst_value *piece,
                             sst_error *err) {
    if (!sst_is_string(piece)) {
        return obj;
    }
    const sst_value *old = sst_object_get(obj, key);
    sst__buf b;
    sst__buf_init(&b);
    if (sst_is_string(old)) {
        sst__buf_append(&b, sst_string_cstr(old), sst_string_len(old));
    }
    sst__buf_append(&b, sst_string_cstr(piece), sst_string_len(piece));
    sst_value *s = b.oom ? NULL : sst_string_newn(b.data != NULL ? b.data : "", b.len, err);
    sst__buf_free(&b);
    return sst__set_take(obj, key, s, err);
}

/* Merges one tool-call fragment {"index", "id"?, "type"?, "function": {"name"?, "arguments"?}}. */
static sst_code merge_tool_call(sst__completion *c, const sst_value *frag, sst_error *err) {
    const sst_value *index = sst_object_get(frag, "index");
    if (!sst_is_int(index) || sst_int_value(index) < 0 || sst_int_value(index) > 1024) {
        return shape(err, "a tool-call fragment without a valid index");
    }
    size_t i = (size_t)sst_int_value(index);
    while (sst_array_len(c->tool_calls) <= i) {
        sst_value *blank = sst__set_take(sst_object_empty(), "id", sst_string_new("", err), err);
        blank = sst__set_take(blank, "type", sst_string_new("function", err), err);
        sst_value *fn = sst__set_take(sst_object_empty(), "name", sst_string_new("", err), err);
        fn = sst__set_take(fn, "arguments", sst_string_new("", err), err);
        blank = sst__set_take(blank, "function", fn, err);
        c->tool_calls = blank != NULL ? sst_array_push_take(c->tool_calls, blank, err)
                                      : (sst_value_unref(c->tool_calls), NULL);
        if (c->tool_calls == NULL) {
            c->tool_calls = sst_array_empty();
            return sst__enomem(err);
        }
    }
    sst_value *call = sst_value_ref(sst_array_get(c->tool_calls, i));
    call = append_str(call, "id", sst_object_get(frag, "id"), err);
    const sst_value *f = sst_object_get(frag, "function");
    if (call != NULL && sst_is_object(f)) {
        sst_value *fn = sst_value_ref(sst_object_get(call, "function"));
        fn = append_str(fn, "name", sst_object_get(f, "name"), err);
        fn = append_str(fn, "arguments", sst_object_get(f, "arguments"), err);
        call = sst__set_take(call, "function", fn, err);
    }
    if (call == NULL) {
        return sst__error_unless_set(err, SST_ENOMEM, "out of memory");
    }
    sst_value *calls = sst_array_set_take(c->tool_calls, i, call, err);
    if (calls == NULL) {
        c->tool_calls = sst_array_empty();
        return sst__code(err);
    }
    c->tool_calls = calls;
    return SST_OK;
}

sst_code sst__completion_chunk(sst__completion *c, const char *data, size_t len, sst_error *err) {
    if (len == 6 && memcmp(data, "[DONE]", 6) == 0) {
        c->done = true;
        return SST_OK;
    }
    sst_value *v = sst_json_read(data, len, NULL, err);
    if (v == NULL) {
        sst__error_prefix(err, "chat completion chunk");
        return sst__code(err);
    }
    sst_code rc = SST_OK;
    const sst_value *choices = sst_object_get(v, "choices");
    const sst_value *usage = sst_object_get(v, "usage");
    if (!sst_is_object(v) || (choices != NULL && !sst_is_array(choices))) {
        rc = shape(err, "a chunk that is not {\"choices\": [...]}");
    } else if (c->model == NULL && !set_owned(&c->model, sst_object_get(v, "model"))) {
        rc = sst__enomem(err);
    } else if (sst_is_object(usage)) { /* servers send "usage": null in the other chunks */
        sst_value_unref(c->usage);
        c->usage = sst_value_ref(usage);
    }
    for (size_t i = 0; rc == SST_OK && i < sst_array_len(choices); i++) {
        const sst_value *ch = sst_array_get(choices, i);
        const sst_value *delta = sst_object_get(ch, "delta");
        if (!set_owned(&c->finish_reason, sst_object_get(ch, "finish_reason"))) {
            rc = sst__enomem(err);
            break;
        }
        if (!sst_is_object(delta)) {
            continue;
        }
        const sst_value *text = sst_object_get(delta, "content");
        if (sst_is_string(text) && sst_string_len(text) > 0) {
            sst__buf_append(&c->content, sst_string_cstr(text), sst_string_len(text));
            if (c->content.oom) {
                rc = sst__enomem(err);
            } else if (c->on_token != NULL) {
                rc = c->on_token(sst_string_cstr(text), sst_string_len(text), c->ud);
                if (rc != SST_OK) {
                    sst__error_unless_set(err, rc, "chat completion: the token handler failed");
                }
            }
        }
        const sst_value *calls = sst_object_get(delta, "tool_calls");
        for (size_t k = 0; rc == SST_OK && k < sst_array_len(calls); k++) {
            rc = merge_tool_call(c, sst_array_get(calls, k), err);
        }
    }
    sst_value_unref(v);
    return rc;
}

/*
 * @p m (taken) with "usage_metadata" (when @p usage, borrowed, is an object)
 * and "response_metadata" as LangChain names them.
 */
static sst_value *with_metadata(sst_value *m, const sst_value *usage, const char *model,
                                const char *finish_reason, sst_error *err) {
    if (m != NULL && sst_is_object(usage)) {
        m = sst__set_take(m, "usage_metadata", sst__usage_from_openai(usage, err), err);
    }
    sst_value *meta = sst__object_with_capacity(3, err);
    if (model != NULL) {
        meta = sst__set_take(meta, "model_name", sst_string_new(model, err), err);
    }
    if (finish_reason != NULL) {
        meta = sst__set_take(meta, "finish_reason", sst_string_new(finish_reason, err), err);
    }
    meta = sst__set_take(meta, "model_provider", sst_string_new("openai", err), err);
    return sst__set_take(m, "response_metadata", meta, err);
}

sst_value *sst__completion_message(const sst__completion *c, sst_error *err) {
    if (!c->done && c->finish_reason == NULL) {
        sst__error(err, SST_EPARSE,
                   "chat completion: the stream ended before its end (no finish_reason, no "
                   "[DONE]): truncated");
        return NULL;
    }
    sst_value *m = sst__set_take(sst_object_empty(), "role", sst_string_new("assistant", err), err);
    sst_value *content =
        c->content.len > 0 ? sst_string_newn(c->content.data, c->content.len, err) : sst_null();
    m = sst__set_take(m, "content", content, err);
    if (m != NULL && sst_array_len(c->tool_calls) > 0) {
        m = sst__set_take(m, "tool_calls", sst_value_ref(c->tool_calls), err);
    }
    return with_metadata(m, c->usage, c->model, c->finish_reason, err);
}

sst_value *sst__completion_parse_body(const char *body, size_t len, sst_error *err) {
    sst_value *v = sst_json_read(body, len, NULL, err);
    if (v == NULL) {
        sst__error_prefix(err, "chat completion");
        return NULL;
    }
    const sst_value *choice = sst_array_get(sst_object_get(v, "choices"), 0);
    const sst_value *msg = sst_object_get(choice, "message");
    const sst_value *model = sst_object_get(v, "model");
    const sst_value *finish = sst_object_get(choice, "finish_reason");
    sst_value *out = NULL;
    if (!sst_is_object(msg)) {
        shape(err, "a response without choices[0].message");
    } else {
        const sst_value *content = sst_object_get(msg, "content");
        const sst_value *calls = sst_object_get(msg, "tool_calls");
        out = sst__set_take(sst_object_empty(), "role", sst_string_new("assistant", err), err);
        out = sst__set_take(out, "content",
                            sst_value_ref(sst_is_string(content) ? content : sst_null()), err);
        if (out != NULL && sst_is_array(calls) && sst_array_len(calls) > 0) {
            out = sst__set_take(out, "tool_calls", sst_value_ref(calls), err);
        }
        out = with_metadata(out, sst_object_get(v, "usage"),
                            sst_is_string(model) ? sst_string_cstr(model) : NULL,
                            sst_is_string(finish) ? sst_string_cstr(finish) : NULL, err);
    }
    sst_value_unref(v);
    return out;
}
