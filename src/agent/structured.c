/* SPDX-License-Identifier: MIT */
/* Structured output: the model's final answer checked against a schema; see structured.h. */
#include "structured.h"

#include <stdio.h>

#include "llm_client.h"
#include "middleware.h"
#include "superstep/json.h"
#include "values/build.h"

static const char k_default_name[] = "structured_response";

/* A name the APIs take for a tool or a schema: [A-Za-z0-9_-]{1,64}. */
static bool usable_name(const sst_value *v) {
    if (!sst_is_string(v) || sst_string_len(v) == 0 || sst_string_len(v) > 64) {
        return false;
    }
    for (const char *p = sst_string_cstr(v); *p != '\0'; p++) {
        char c = *p;
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '_' || c == '-';
        if (!ok) {
            return false;
        }
    }
    return true;
}

sst_code sst__structured_init(sst__structured *s, const sst_value *schema,
                              sst__so_strategy strategy, unsigned max_attempts, sst_error *err) {
    memset(s, 0, sizeof *s);
    if (!sst_is_object(schema)) {
        return sst__error(err, SST_EINVAL, "response_format: expected a JSON schema object, got %s",
                          sst_type_name(sst_value_type(schema)));
    }
    const sst_value *type = sst_object_get(schema, "type");
    if (!sst_is_string(type) || strcmp(sst_string_cstr(type), "object") != 0) {
        return sst__error(err, SST_EINVAL,
                          "response_format: the schema must describe an object (\"type\": "
                          "\"object\"), as tool arguments and OpenAI's strict mode need");
    }
    s->compiled = sst__json_schema_compile(schema, err);
    if (s->compiled == NULL) {
        sst__error_prefix(err, "response_format");
        return sst__code(err);
    }
    s->schema = sst_value_ref(schema);
    const sst_value *title = sst_object_get(schema, "title");
    snprintf(s->name, sizeof s->name, "%s",
             usable_name(title) ? sst_string_cstr(title) : k_default_name);
    const sst_value *desc = sst_object_get(schema, "description");
    const char *d = sst_is_string(desc) ? sst_string_cstr(desc)
                                        : "Give your final answer by calling this tool: its "
                                          "arguments are the answer.";
    s->description = sst__strndup(d, strlen(d));
    s->strategy = strategy;
    s->max_attempts = max_attempts > 0 ? max_attempts : 3;
    if (s->description == NULL) {
        sst__structured_free(s);
        return sst__enomem(err);
    }
    return SST_OK;
}

void sst__structured_free(sst__structured *s) {
    sst__json_schema_free(s->compiled);
    sst_value_unref(s->schema);
    sst__free(s->description);
    memset(s, 0, sizeof *s);
}

sst_value *sst__structured_tool(const sst__structured *s, sst_error *err) {
    sst_value *fn = sst__set_take(sst_object_empty(), "name", sst_string_new(s->name, err), err);
    fn = sst__set_take(fn, "description", sst_string_new(s->description, err), err);
    fn = sst__set_take(fn, "parameters", sst_value_ref(s->schema), err);
    sst_value *t = sst__set_take(sst_object_empty(), "type", sst_string_new("function", err), err);
    return sst__set_take(t, "function", fn, err);
}

sst_value *sst__structured_response_format(const sst__structured *s, sst_error *err) {
    sst_value *js = sst__set_take(sst_object_empty(), "name", sst_string_new(s->name, err), err);
    js = sst__set_take(js, "schema", sst_value_ref(s->schema), err);
    js = sst__set_take(js, "strict", sst_bool(true), err);
    sst_value *rf =
        sst__set_take(sst_object_empty(), "type", sst_string_new("json_schema", err), err);
    return sst__set_take(rf, "json_schema", js, err);
}

sst_code sst__structured_params(const sst__structured *s, const sst_value *own, int provider,
                                sst_value **out, sst_error *err) {
    *out = own != NULL ? sst_value_ref(own) : NULL;
    if (s == NULL) {
        return SST_OK;
    }
    sst_value *p = *out != NULL ? *out : sst_object_empty();
    if (s->strategy == SST__SO_PROVIDER) {
        p = sst__set_take(p, "response_format", sst__structured_response_format(s, err), err);
    } else if (provider == SST__LLM_ANTHROPIC && sst_object_get(p, "tool_choice") == NULL) {
        sst_value *choice =
            sst__set_take(sst_object_empty(), "type", sst_string_new("any", err), err);
        p = sst__set_take(p, "tool_choice", choice, err);
    }
    *out = p;
    return p != NULL ? SST_OK : sst__code(err);
}

/* The reply's text: a string content, or the text parts of a list of blocks (new). */
static sst_value *reply_text(const sst_value *reply, sst_error *err) {
    const sst_value *c = sst_object_get(reply, "content");
    if (sst_is_string(c)) {
        return sst_value_ref(c);
    }
    sst__buf b;
    sst__buf_init(&b);
    for (size_t i = 0; i < sst_array_len(c); i++) {
        const sst_value *block = sst_array_get(c, i);
        const sst_value *type = sst_object_get(block, "type");
        const sst_value *text = sst_object_get(block, "text");
        if (sst_is_string(type) && strcmp(sst_string_cstr(type), "text") == 0 &&
            sst_is_string(text)) {
            sst__buf_append(&b, sst_string_cstr(text), sst_string_len(text));
        }
    }
    sst_value *s = b.oom ? NULL : sst_string_newn(b.data != NULL ? b.data : "", b.len, err);
    sst__buf_free(&b);
    return s;
}

/* Parses and validates @p text (JSON) into out->value, or fills out->error. */
static void parse_answer(const sst__structured *s, const char *text, size_t len,
                         sst__so_outcome *out) {
    sst_error e = {0};
    sst_value *v = sst_json_read(text, len, NULL, &e);
    if (v == NULL) {
        snprintf(out->error, sizeof out->error, "the answer is not JSON: %s", e.msg);
        return;
    }
    char *report = NULL; /* every failure, not only what fits an sst_error */
    if (sst__json_schema_validate_report(s->compiled, v, NULL, 0, &report, &e) != SST_OK) {
        snprintf(out->error, sizeof out->error, "the answer does not match the schema: %s",
                 report != NULL ? report : e.msg);
        sst__free(report);
        sst_value_unref(v);
        return;
    }
    out->value = v;
}

static sst_code tool_outcome(const sst__structured *s, const sst_value *reply, sst__so_outcome *out,
                             sst_error *err) {
    const sst_value *calls = sst_object_get(reply, "tool_calls");
    size_t mine = 0;
    const sst_value *answer = NULL;
    for (size_t i = 0; i < sst_array_len(calls); i++) {
        if (strcmp(sst__call_name(sst_array_get(calls, i)), s->name) == 0) {
            mine++;
            answer = sst_array_get(calls, i);
        }
    }
    if (mine == 0 && sst_array_len(calls) > 0) {
        out->pending = true; /* other tools first */
        return SST_OK;
    }
    char text[sizeof out->error + 128];
    if (mine == 0) {
        snprintf(out->error, sizeof out->error, "no structured response was given");
        snprintf(text, sizeof text, "error: %s: give your final answer by calling the tool '%s'.",
                 out->error, s->name);
        out->retry = true;
        out->feedback = sst__push_take(
            sst_array_empty(), sst__message_take("user", sst_string_new(text, err), err), err);
        return out->feedback != NULL ? SST_OK : sst__code(err);
    }
    if (mine > 1) {
        snprintf(out->error, sizeof out->error,
                 "%zu structured responses were given where one is expected", mine);
    } else {
        const sst_value *args = sst_object_get(sst_object_get(answer, "function"), "arguments");
        if (sst_is_string(args)) {
            parse_answer(s, sst_string_cstr(args), sst_string_len(args), out);
        } else {
            snprintf(out->error, sizeof out->error, "the tool call has no arguments");
        }
    }
    out->retry = out->value == NULL;
    /* Every call of the reply gets its answer, so the history stays one the APIs take. */
    out->feedback = sst_array_empty();
    for (size_t i = 0; i < sst_array_len(calls) && out->feedback != NULL; i++) {
        const sst_value *call = sst_array_get(calls, i);
        if (strcmp(sst__call_name(call), s->name) != 0) {
            snprintf(text, sizeof text, "error: not run: the final answer was given with it");
        } else if (out->retry) {
            snprintf(text, sizeof text, "error: %s\nPlease fix your mistakes.", out->error);
        } else {
            char *json = sst_json_write(out->value, SST_JSON_COMPACT, NULL, err);
            if (json == NULL) {
                return sst__code(err);
            }
            snprintf(text, sizeof text, "Returning structured response: %.2000s", json);
            sst_free(json);
        }
        out->feedback = sst__push_take(out->feedback, sst__tool_message(call, text, err), err);
    }
    return out->feedback != NULL ? SST_OK : sst__code(err);
}

static sst_code provider_outcome(const sst__structured *s, const sst_value *reply,
                                 sst__so_outcome *out, sst_error *err) {
    if (sst_array_len(sst_object_get(reply, "tool_calls")) > 0) {
        out->pending = true;
        return SST_OK;
    }
    sst_value *text = reply_text(reply, err);
    if (text == NULL) {
        return sst__code(err);
    }
    parse_answer(s, sst_string_cstr(text), sst_string_len(text), out);
    sst_value_unref(text);
    if (out->value != NULL) {
        return SST_OK;
    }
    out->retry = true;
    char msg[sizeof out->error + 128];
    snprintf(msg, sizeof msg,
             "error: %s\nPlease fix your mistakes: answer again with only the JSON value.",
             out->error);
    out->feedback = sst__push_take(sst_array_empty(),
                                   sst__message_take("user", sst_string_new(msg, err), err), err);
    return out->feedback != NULL ? SST_OK : sst__code(err);
}

sst_code sst__structured_check(const sst__structured *s, const sst_value *reply,
                               sst__so_outcome *out, sst_error *err) {
    return s->strategy == SST__SO_TOOL ? tool_outcome(s, reply, out, err)
                                       : provider_outcome(s, reply, out, err);
}

void sst__so_outcome_free(sst__so_outcome *out) {
    sst_value_unref(out->value);
    sst_value_unref(out->feedback);
    memset(out, 0, sizeof *out);
}
