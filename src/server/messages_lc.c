/* SPDX-License-Identifier: MIT */
/*
 * Messages on the wire in LangChain's shape, both ways (docs/server.md "Messages"):
 *
 * - out: every message the API answers or streams (an object whose "role" is a chat role
 *   and that has "content" or "tool_calls") also gets LangChain's "type" (human, ai,
 *   system, tool, function; a "type" it has is kept), "additional_kwargs" and
 *   "response_metadata" ({} when absent), and for an AI message "tool_calls" (its OpenAI
 *   calls each with LangChain's "name" and "args" beside "function") and
 *   "invalid_tool_calls" (the calls whose arguments are not a JSON object). Its "role",
 *   id, name, tool_call_id and every other member stay as stored.
 * - in: a tool call that comes in LangChain's shape ({name, args, id}), as LangGraph's
 *   UIs send an edited call back, also gets OpenAI's members (type "function", function
 *   {name, arguments}), which the models and tools read; "args" wins over
 *   "function.arguments" when a call has both.
 *
 * Stored checkpoints keep their shape: roles and OpenAI tool calls (add_messages takes a
 * LangChain "type" as the role, docs/reducers.md).
 */
#include <string.h>

#include "server_int.h"
#include "superstep/json.h"

/* Values nested deeper than this are left as they are (messages sit near the top). */
#define MAX_DEPTH 8

static const struct {
    const char *role, *type;
} k_types[] = {
    {"user", "human"},    {"human", "human"},      {"assistant", "ai"}, {"ai", "ai"},
    {"system", "system"}, {"developer", "system"}, {"tool", "tool"},    {"function", "function"},
};

static const char *type_of_role(const sst_value *role) {
    const char *r = sst_is_string(role) ? sst_string_cstr(role) : NULL;
    for (size_t i = 0; r != NULL && i < sizeof k_types / sizeof k_types[0]; i++) {
        if (strcmp(r, k_types[i].role) == 0) {
            return k_types[i].type;
        }
    }
    return NULL;
}

static bool is_message(const sst_value *v) {
    return sst_is_object(v) && type_of_role(sst_object_get(v, "role")) != NULL &&
           (sst_object_get(v, "content") != NULL || sst_object_get(v, "tool_calls") != NULL);
}

/* ---- out -------------------------------------------------------------------------- */

/* @p m's OpenAI tool calls with LangChain's name and args; the ones whose arguments are
 * not a JSON object also go to *invalid (new). */
static sst_value *calls_out(const sst_value *calls, sst_value **invalid, sst_error *err) {
    sst_value *out = sst_array_empty();
    for (size_t i = 0; i < sst_array_len(calls); i++) {
        const sst_value *c = sst_array_get(calls, i);
        const sst_value *fn = sst_object_get(c, "function");
        if (!sst_is_object(c) || !sst_is_object(fn) || sst_object_get(c, "args") != NULL) {
            out = sst__push_take(out, sst_value_ref(c), err);
            continue;
        }
        const sst_value *name = sst_object_get(fn, "name");
        const sst_value *text = sst_object_get(fn, "arguments");
        sst_error perr = {0};
        sst_value *args = sst_is_string(text) ? (sst_string_len(text) == 0
                                                     ? sst_object_empty()
                                                     : sst_json_parse(sst_string_cstr(text), &perr))
                                              : NULL;
        sst_value *call = sst_value_ref(c);
        call = sst__set_take(call, "name", name != NULL ? sst_value_ref(name) : sst_null(), err);
        if (args == NULL || !sst_is_object(args)) {
            sst_value *bad = sst__set_take(sst_object_empty(), "name",
                                           name != NULL ? sst_value_ref(name) : sst_null(), err);
            bad = sst__set_take(bad, "args", text != NULL ? sst_value_ref(text) : sst_null(), err);
            bad = sst__set_take(bad, "id",
                                sst_value_ref(sst_object_get(c, "id") != NULL
                                                  ? sst_object_get(c, "id")
                                                  : sst_null()),
                                err);
            bad = sst__set_take(bad, "error",
                                sst_string_new("the arguments are not a JSON object", err), err);
            bad = sst__set_take(bad, "type", sst_string_new("invalid_tool_call", err), err);
            *invalid = sst__push_take(*invalid, bad, err);
            sst_value_unref(args);
            args = sst_object_empty();
        }
        call = sst__set_take(call, "args", args, err);
        out = sst__push_take(out, call, err);
    }
    return out;
}

static sst_value *message_out(const sst_value *m, sst_error *err) {
    const char *type = type_of_role(sst_object_get(m, "role"));
    sst_value *o = sst_value_ref(m);
    if (!sst_is_string(sst_object_get(m, "type"))) {
        o = sst__set_take(o, "type", sst_string_new(type, err), err);
    }
    if (sst_object_get(m, "additional_kwargs") == NULL) {
        o = sst__set_take(o, "additional_kwargs", sst_object_empty(), err);
    }
    if (sst_object_get(m, "response_metadata") == NULL) {
        o = sst__set_take(o, "response_metadata", sst_object_empty(), err);
    }
    if (strcmp(type, "ai") == 0) {
        sst_value *invalid = sst_array_empty();
        const sst_value *calls = sst_object_get(m, "tool_calls");
        o = sst__set_take(o, "tool_calls",
                          sst_is_array(calls) ? calls_out(calls, &invalid, err) : sst_array_empty(),
                          err);
        if (sst_object_get(m, "invalid_tool_calls") == NULL) {
            o = sst__set_take(o, "invalid_tool_calls", invalid, err);
        } else {
            sst_value_unref(invalid);
        }
    }
    return o;
}

/* @p v with its messages in LangChain's shape (new reference; @p v itself, referenced,
 * when it holds none). */
static sst_value *walk_out(const sst_value *v, unsigned depth, sst_error *err) {
    if (is_message(v)) {
        return message_out(v, err);
    }
    if (depth >= MAX_DEPTH || (!sst_is_object(v) && !sst_is_array(v))) {
        return sst_value_ref(v);
    }
    sst_value *o = sst_value_ref(v);
    bool obj = sst_is_object(v);
    size_t n = obj ? sst_object_len(v) : sst_array_len(v);
    for (size_t i = 0; i < n && o != NULL; i++) {
        const sst_value *child = obj ? sst_object_value_at(v, i) : sst_array_get(v, i);
        sst_value *c = walk_out(child, depth + 1, err);
        if (c == child) {
            sst_value_unref(c);
            continue;
        }
        if (c == NULL) {
            sst_value_unref(o);
            return NULL;
        }
        o = obj ? sst__setv_take(o, sst_object_key_at(v, i), c, err)
                : sst_array_set_take(o, i, c, err);
    }
    return o;
}

sst_value *srv_lc_out(sst_value *v) {
    if (v == NULL) {
        return NULL;
    }
    sst_error err = {0};
    sst_value *o = walk_out(v, 0, &err);
    if (o == NULL) {
        return v; /* out of memory: as stored */
    }
    sst_value_unref(v);
    return o;
}

char *srv_lc_out_text(char *text, size_t *len) {
    /* Most events hold no message: only those that name a role are parsed again. */
    if (text == NULL || strstr(text, "\"role\":") == NULL) {
        return text;
    }
    sst_error err = {0};
    sst_value *v = sst_json_read(text, *len, NULL, &err);
    if (v == NULL) {
        return text;
    }
    sst_value *o = walk_out(v, 0, &err);
    size_t n = 0;
    char *out = o != NULL && o != v ? sst_json_write(o, SST_JSON_COMPACT, &n, &err) : NULL;
    sst_value_unref(o);
    sst_value_unref(v);
    if (out == NULL) {
        return text;
    }
    sst__free(text);
    *len = n;
    return out;
}

/* ---- in --------------------------------------------------------------------------- */

/* A LangChain tool call {name, args, id} with OpenAI's members too (function {name,
 * arguments} from them, type "function"), or NULL when @p c is not one. */
static sst_value *call_in(const sst_value *c, sst_error *err) {
    const sst_value *args = sst_object_get(c, "args");
    const sst_value *name = sst_object_get(c, "name");
    if (!sst_is_object(c) || args == NULL) {
        return NULL;
    }
    if (!sst_is_string(name)) {
        name = sst_object_get(sst_object_get(c, "function"), "name");
    }
    char *text = sst_json_write(args, SST_JSON_COMPACT, NULL, err);
    sst_value *f = sst__set_take(sst_object_empty(), "name",
                                 name != NULL ? sst_value_ref(name) : sst_null(), err);
    f = sst__set_take(f, "arguments", text != NULL ? sst_string_new(text, err) : NULL, err);
    sst__free(text);
    sst_value *o = sst__set_take(sst_value_ref(c), "function", f, err);
    const sst_value *type = sst_object_get(c, "type");
    if (type == NULL || (sst_is_string(type) && strcmp(sst_string_cstr(type), "tool_call") == 0)) {
        o = sst__set_take(o, "type", sst_string_new("function", err), err);
    }
    return o;
}

/* @p m (a message) with its LangChain tool calls as OpenAI's, or NULL when unchanged. */
static sst_value *message_in(const sst_value *m, sst_error *err) {
    const sst_value *calls = sst_object_get(m, "tool_calls");
    if (!sst_is_array(calls)) {
        return NULL;
    }
    sst_value *out = NULL;
    for (size_t i = 0; i < sst_array_len(calls); i++) {
        sst_value *c = call_in(sst_array_get(calls, i), err);
        if (c == NULL) {
            continue;
        }
        if (out == NULL) {
            out = sst_value_ref(calls);
        }
        out = sst_array_set_take(out, i, c, err);
    }
    return out != NULL ? sst__set_take(sst_value_ref(m), "tool_calls", out, err) : NULL;
}

/* @p v with the messages in it converted (new), or NULL when unchanged. */
static sst_value *walk_in(const sst_value *v, unsigned depth, sst_error *err) {
    if (sst_is_object(v) && sst_is_array(sst_object_get(v, "tool_calls"))) {
        return message_in(v, err);
    }
    if (depth >= MAX_DEPTH || (!sst_is_object(v) && !sst_is_array(v))) {
        return NULL;
    }
    sst_value *o = NULL;
    bool obj = sst_is_object(v);
    size_t n = obj ? sst_object_len(v) : sst_array_len(v);
    for (size_t i = 0; i < n; i++) {
        sst_value *c =
            walk_in(obj ? sst_object_value_at(v, i) : sst_array_get(v, i), depth + 1, err);
        if (c == NULL) {
            continue;
        }
        if (o == NULL) {
            o = sst_value_ref(v);
        }
        o = obj ? sst__setv_take(o, sst_object_key_at(v, i), c, err)
                : sst_array_set_take(o, i, c, err);
    }
    return o;
}

void srv_lc_in(sst_value **body) {
    static const char *const members[] = {"input", "command", "values", "supersteps"};
    if (*body == NULL || !sst_is_object(*body)) {
        return;
    }
    sst_error err = {0};
    for (size_t i = 0; i < sizeof members / sizeof members[0]; i++) {
        const sst_value *v = sst_object_get(*body, members[i]);
        sst_value *c = v != NULL ? walk_in(v, 0, &err) : NULL;
        if (c != NULL) {
            sst_value *b = sst_object_set_take(sst_value_ref(*body), members[i], c, &err);
            if (b != NULL) {
                sst_value_unref(*body);
                *body = b;
            }
        }
    }
}
