/* SPDX-License-Identifier: MIT */
/*
 * LangChain's SummarizationMiddleware: before a model call, a conversation
 * longer than the trigger (tokens estimated at 4 characters each) has its
 * older messages replaced by a summary the middleware's model writes; the
 * last messages are kept as they are, and a tool call is never separated
 * from its results.
 */
#include <stdio.h>

#include "middleware.h"
#include "superstep/json.h"
#include "values/build.h"

#define SUMMARY_PREFIX "Here is a summary of the conversation to date:\n\n"

static const char k_prompt[] =
    "You are summarizing the earlier part of a conversation between a user and an AI assistant "
    "with tools, so that the assistant can go on without it. Keep every fact, decision, name, "
    "number and open question that may matter later; leave out pleasantries. Answer with the "
    "summary only.";

typedef struct summarize {
    const sst__model *model; /* borrowed */
    int64_t trigger;
    size_t keep;
} summarize;

static void free_summarize(void *ud) {
    sst__free(ud);
}

/* A message's text: its content (a string, or the text of its blocks) and tool calls. */
static void append_text(sst__buf *b, const sst_value *m) {
    const sst_value *c = sst_object_get(m, "content");
    if (sst_is_string(c)) {
        sst__buf_append(b, sst_string_cstr(c), sst_string_len(c));
    }
    for (size_t i = 0; sst_is_array(c) && i < sst_array_len(c); i++) {
        const sst_value *t = sst_object_get(sst_array_get(c, i), "text");
        if (sst_is_string(t)) {
            sst__buf_append(b, sst_string_cstr(t), sst_string_len(t));
        }
    }
    const sst_value *calls = sst_object_get(m, "tool_calls");
    if (sst_array_len(calls) > 0) {
        char *json = sst_json_write(calls, SST_JSON_COMPACT, NULL, NULL);
        if (json != NULL) {
            sst__buf_append(b, " [tool calls: ", 14);
            sst__buf_append(b, json, strlen(json));
            sst__buf_append(b, "]", 1);
        }
        sst_free(json);
    }
}

/* The estimated tokens of @p msgs: 4 characters a token, and 3 more per message. */
static int64_t estimate_tokens(const sst_value *msgs) {
    int64_t chars = 0;
    for (size_t i = 0; i < sst_array_len(msgs); i++) {
        sst__buf b;
        sst__buf_init(&b);
        append_text(&b, sst_array_get(msgs, i));
        chars += (int64_t)b.len + 12;
        sst__buf_free(&b);
    }
    return chars / 4;
}

/* The conversation before @p cut as a transcript for the summarizer (new). */
static sst_value *transcript(const sst_value *msgs, size_t cut, sst_error *err) {
    sst__buf b;
    sst__buf_init(&b);
    for (size_t i = 0; i < cut; i++) {
        const sst_value *m = sst_array_get(msgs, i);
        const sst_value *role = sst_object_get(m, "role");
        if (!sst_is_string(role)) {
            role = sst_object_get(m, "type");
        }
        const char *r = sst_is_string(role) ? sst_string_cstr(role) : "message";
        sst__buf_append(&b, r, strlen(r));
        sst__buf_append(&b, ": ", 2);
        append_text(&b, m);
        sst__buf_append(&b, "\n", 1);
    }
    sst_value *s = b.oom ? NULL : sst_string_newn(b.data != NULL ? b.data : "", b.len, err);
    if (b.oom) {
        sst__enomem(err);
    }
    sst__buf_free(&b);
    return s;
}

/* The summary of the messages before @p cut, written by the model (new text). */
static sst_value *summary_of(const summarize *s, sst_node_ctx *ctx, const sst_value *msgs,
                             size_t cut, sst_error *err) {
    sst_value *ask = sst__push_take(
        sst_array_empty(), sst__message_take("system", sst_string_new(k_prompt, err), err), err);
    ask = sst__push_take(ask, sst__message_take("user", transcript(msgs, cut, err), err), err);
    sst_value *reply =
        ask != NULL ? sst__model_call(s->model, ask, NULL, NULL, ctx, NULL, NULL, NULL, err) : NULL;
    sst_value_unref(ask);
    if (reply == NULL) {
        return NULL;
    }
    const sst_value *usage = sst_object_get(reply, "usage_metadata");
    sst_error uerr = {0};
    if (sst_is_object(usage) && sst_node_report_usage(ctx, usage, &uerr) != SST_OK) {
        sst_error_clear(&uerr); /* the summary stands without its count */
    }
    sst__buf b;
    sst__buf_init(&b);
    sst__buf_append(&b, SUMMARY_PREFIX, strlen(SUMMARY_PREFIX));
    append_text(&b, reply);
    sst_value_unref(reply);
    sst_value *text = b.oom ? NULL : sst_string_newn(b.data, b.len, err);
    if (b.oom) {
        sst__enomem(err);
    }
    sst__buf_free(&b);
    return text;
}

static sst_code before_model(sst_node_ctx *ctx, void *ud) {
    const summarize *s = ud;
    const sst_value *msgs = sst_object_get(sst_node_state(ctx), "messages");
    size_t n = sst_array_len(msgs);
    if (estimate_tokens(msgs) <= s->trigger || n <= s->keep) {
        return SST_OK;
    }
    size_t cut = n - s->keep;
    while (cut > 0 && sst__message_is(sst_array_get(msgs, cut), "tool")) {
        cut--; /* the kept part starts with the call, never with its results */
    }
    if (cut == 0) {
        return SST_OK;
    }
    sst_error err = {0};
    sst_value *summary = summary_of(s, ctx, msgs, cut, &err);
    if (summary == NULL) {
        return sst_node_fail(ctx, sst__code(&err), "summarization: %s", err.msg);
    }
    sst_value *all =
        sst__set_take(sst_object_empty(), "type", sst_string_new("remove", &err), &err);
    all = sst__set_take(all, "id", sst_string_new("__remove_all__", &err), &err);
    sst_value *list = sst__push_take(sst_array_empty(), all, &err);
    list = sst__push_take(list, sst__message_take("user", summary, &err), &err);
    for (size_t i = cut; list != NULL && i < n; i++) {
        list = sst__push_take(list, sst_value_ref(sst_array_get(msgs, i)), &err);
    }
    sst_code rc = list != NULL ? sst_node_update(ctx, "messages", list, &err) : sst__code(&err);
    return rc == SST_OK ? SST_OK : sst_node_fail(ctx, rc, "%s", err.msg);
}

sst_middleware *sst_middleware_summarization(sst_model *model, int64_t trigger_tokens,
                                             size_t keep_messages, sst_error *err) {
    if (model == NULL || trigger_tokens < 1) {
        sst__error(err, SST_EINVAL,
                   "summarization: a model and a trigger of at least 1 token are needed");
        return NULL;
    }
    summarize *s = sst__calloc(1, sizeof *s);
    if (s == NULL) {
        sst__enomem(err);
        return NULL;
    }
    s->model = sst__model_of(model);
    s->trigger = trigger_tokens;
    s->keep = keep_messages;
    sst_middleware_hooks h = {
        .before_model = before_model, .user_data = s, .free_user_data = free_summarize};
    sst_middleware *m = sst_middleware_new("SummarizationMiddleware", &h, err);
    if (m == NULL) {
        free_summarize(s);
    }
    return m;
}
