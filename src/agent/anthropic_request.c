/* SPDX-License-Identifier: MIT */
/*
 * A conversation in the internal (OpenAI) shape as an Anthropic Messages
 * request body; see anthropic.h for the rules and docs/providers.md.
 */
#include "anthropic.h"

#include "superstep/json.h"
#include "values/build.h"

static bool type_is(const sst_value *block, const char *type) {
    return strcmp(sst_string_cstr(sst_object_get(block, "type")), type) == 0;
}

/* {"type": "text", "text": @p text} (@p text borrowed, a string). */
static sst_value *text_block(const sst_value *text, sst_error *err) {
    sst_value *b =
        sst__set_take(sst__object_with_capacity(2, err), "type", sst_string_new("text", err), err);
    return sst__set_take(b, "text", sst_value_ref(text), err);
}

/*
 * An OpenAI image_url part as an Anthropic image block: a data URL
 * ("data:image/png;base64,...") becomes a base64 source, any other URL a url
 * source.
 */
static sst_value *image_block(const sst_value *part, sst_error *err) {
    const sst_value *url = sst_object_get(part, "image_url");
    url = sst_is_object(url) ? sst_object_get(url, "url") : url;
    const char *u = sst_string_cstr(url);
    const char *semi = strstr(u, ";base64,");
    sst_value *src = sst__object_with_capacity(3, err);
    if (strncmp(u, "data:", 5) == 0 && semi != NULL) {
        src = sst__set_take(src, "type", sst_string_new("base64", err), err);
        src = sst__set_take(src, "media_type", sst_string_newn(u + 5, (size_t)(semi - u - 5), err),
                            err);
        src = sst__set_take(src, "data", sst_string_new(semi + 8, err), err);
    } else {
        src = sst__set_take(src, "type", sst_string_new("url", err), err);
        src = sst__set_take(src, "url", sst_string_new(u, err), err);
    }
    sst_value *b =
        sst__set_take(sst__object_with_capacity(2, err), "type", sst_string_new("image", err), err);
    return sst__set_take(b, "source", src, err);
}

/*
 * @p blocks (taken) with the blocks of @p content (borrowed) appended: a
 * string is a text block (none when empty), a list keeps its parts (text
 * parts as {type, text, cache_control}, image_url parts as image blocks,
 * thinking blocks only when @p assistant, tool_use blocks never: the tool
 * calls make those), others as they are; @p text_only (the system prompt)
 * keeps only the text. @p what names the message in errors.
 */
static sst_value *content_blocks(sst_value *blocks, const sst_value *content, bool assistant,
                                 bool text_only, const char *what, sst_error *err) {
    if (blocks == NULL || content == NULL || sst_is_null(content)) {
        return blocks;
    }
    if (sst_is_string(content)) {
        return sst_string_len(content) > 0 ? sst__push_take(blocks, text_block(content, err), err)
                                           : blocks;
    }
    if (!sst_is_array(content)) {
        sst_value_unref(blocks);
        sst__error(err, SST_EINVAL, "Anthropic request: %s has content of type %s", what,
                   sst_type_name(sst_value_type(content)));
        return NULL;
    }
    for (size_t i = 0; blocks != NULL && i < sst_array_len(content); i++) {
        const sst_value *p = sst_array_get(content, i);
        if (sst_is_string(p) || type_is(p, "text")) {
            const sst_value *text = sst_is_string(p) ? p : sst_object_get(p, "text");
            if (sst_string_len(text) == 0) {
                continue; /* Anthropic refuses empty text blocks */
            }
            sst_value *b = text_block(text, err);
            const sst_value *cc = sst_object_get(p, "cache_control");
            if (cc != NULL && b != NULL) {
                b = sst__set_take(b, "cache_control", sst_value_ref(cc), err);
            }
            blocks = sst__push_take(blocks, b, err);
        } else if (!sst_is_object(p)) {
            sst_value_unref(blocks);
            sst__error(err, SST_EINVAL, "Anthropic request: %s has a content block of type %s",
                       what, sst_type_name(sst_value_type(p)));
            return NULL;
        } else if (text_only || type_is(p, "tool_use")) {
            continue;
        } else if (type_is(p, "image_url")) {
            blocks = sst__push_take(blocks, image_block(p, err), err);
        } else if (!assistant && (type_is(p, "thinking") || type_is(p, "redacted_thinking"))) {
            continue; /* the model's own thinking, in a message that is not the model's */
        } else {
            blocks = sst__push_take(blocks, sst_value_ref(p), err); /* thinking: verbatim */
        }
    }
    return blocks;
}

/*
 * The tool_use block of an OpenAI tool call {id, function: {name, arguments}}
 * of the message @p what.
 */
static sst_value *tool_use_block(const sst_value *call, const char *what, size_t k,
                                 sst_error *err) {
    const sst_value *fn = sst_object_get(call, "function");
    const sst_value *id = sst_object_get(call, "id");
    const sst_value *name = sst_object_get(fn, "name");
    const sst_value *args = sst_object_get(fn, "arguments");
    if (!sst_is_string(id) || !sst_is_string(name)) {
        sst__error(err, SST_EINVAL,
                   "Anthropic request: %s: tool_calls[%zu] needs an id and a function name", what,
                   k);
        return NULL;
    }
    sst_value *input = NULL;
    if (args == NULL || sst_is_null(args) || (sst_is_string(args) && sst_string_len(args) == 0)) {
        input = sst_object_empty(); /* a call without arguments */
    } else if (sst_is_string(args)) {
        sst_error perr = {0};
        input = sst_json_read(sst_string_cstr(args), sst_string_len(args), NULL, &perr);
        if (input == NULL) {
            if (perr.code == SST_ENOMEM) {
                sst__enomem(err);
                return NULL;
            }
            sst__error(err, SST_EINVAL,
                       "Anthropic request: %s: the arguments of tool call '%s' are not JSON: %s",
                       what, sst_string_cstr(name), perr.msg);
            return NULL;
        }
    } else {
        input = sst_value_ref(args); /* arguments given as an object already */
    }
    if (!sst_is_object(input)) {
        sst__error(err, SST_EINVAL,
                   "Anthropic request: %s: the arguments of tool call '%s' are %s, not an object",
                   what, sst_string_cstr(name), sst_type_name(sst_value_type(input)));
        sst_value_unref(input);
        return NULL;
    }
    sst_value *b = sst__object_with_capacity(4, err);
    b = sst__set_take(b, "type", sst_string_new("tool_use", err), err);
    b = sst__set_take(b, "id", sst_value_ref(id), err);
    b = sst__set_take(b, "name", sst_value_ref(name), err);
    return sst__set_take(b, "input", input, err);
}

/* The blocks of an assistant message: its content restored, then a tool_use per tool call. */
static sst_value *assistant_blocks(const sst_value *m, const char *what, sst_error *err) {
    sst_value *blocks =
        content_blocks(sst_array_empty(), sst_object_get(m, "content"), true, false, what, err);
    const sst_value *calls = sst_object_get(m, "tool_calls");
    if (calls != NULL && !sst_is_null(calls) && !sst_is_array(calls)) {
        sst_value_unref(blocks);
        sst__error(err, SST_EINVAL, "Anthropic request: %s: tool_calls is %s, not an array", what,
                   sst_type_name(sst_value_type(calls)));
        return NULL;
    }
    for (size_t k = 0; blocks != NULL && k < sst_array_len(calls); k++) {
        sst_value *b = tool_use_block(sst_array_get(calls, k), what, k, err);
        if (b == NULL) {
            sst_value_unref(blocks);
            return NULL;
        }
        blocks = sst__push_take(blocks, b, err);
    }
    return blocks;
}

/* A tool message as a tool_result block in a list of one. */
static sst_value *tool_result_blocks(const sst_value *m, const char *what, sst_error *err) {
    const sst_value *id = sst_object_get(m, "tool_call_id");
    const sst_value *content = sst_object_get(m, "content");
    if (!sst_is_string(id)) {
        sst__error(err, SST_EINVAL, "Anthropic request: %s: a tool message needs a tool_call_id",
                   what);
        return NULL;
    }
    sst_value *c = NULL;
    if (sst_is_array(content)) {
        c = content_blocks(sst_array_empty(), content, false, false, what, err);
    } else if (content == NULL || sst_is_null(content)) {
        c = sst_string_empty();
    } else if (sst_is_string(content)) {
        c = sst_value_ref(content);
    } else { /* a value the tool returned, not yet text */
        char *text = sst_json_write(content, SST_JSON_COMPACT, NULL, err);
        c = text != NULL ? sst_string_new(text, err) : NULL;
        sst_free(text);
    }
    sst_value *b = sst__object_with_capacity(4, err);
    b = sst__set_take(b, "type", sst_string_new("tool_result", err), err);
    b = sst__set_take(b, "tool_use_id", sst_value_ref(id), err);
    b = sst__set_take(b, "content", c, err);
    if (b != NULL && strncmp(sst_string_cstr(content), "error: ", 7) == 0) {
        b = sst__set_take(b, "is_error", sst_bool(true), err); /* tools.c's failures */
    }
    return sst__push_take(sst_array_empty(), b, err);
}

/* {"role": @p role, "content": @p blocks (taken)}. */
static sst_value *turn(const char *role, sst_value *blocks, sst_error *err) {
    sst_value *t =
        sst__set_take(sst__object_with_capacity(2, err), "role", sst_string_new(role, err), err);
    return sst__set_take(t, "content", blocks, err);
}

/*
 * @p turns (taken) with @p blocks (taken) as a turn of @p role: appended to
 * the last turn when it has the same role (Anthropic's turns alternate; tool
 * results and the user text after them are one user turn).
 */
static sst_value *add_turn(sst_value *turns, const char *role, sst_value *blocks, sst_error *err) {
    if (turns == NULL || blocks == NULL) {
        sst_value_unref(turns);
        sst_value_unref(blocks);
        return NULL;
    }
    if (sst_array_len(blocks) == 0) {
        sst_value_unref(blocks); /* Anthropic refuses a message without content */
        return turns;
    }
    size_t n = sst_array_len(turns);
    const sst_value *last = n > 0 ? sst_array_get(turns, n - 1) : NULL;
    if (last == NULL || strcmp(sst_string_cstr(sst_object_get(last, "role")), role) != 0) {
        return sst__push_take(turns, turn(role, blocks, err), err);
    }
    sst_value *content =
        sst_array_concat_take(sst_value_ref(sst_object_get(last, "content")), blocks, err);
    sst_value_unref(blocks);
    sst_value *merged = turn(role, content, err);
    if (merged == NULL) {
        sst_value_unref(turns);
        return NULL;
    }
    return sst_array_set_take(turns, n - 1, merged, err);
}

/* A turn whose content is one plain text block is sent with the text as its content. */
static sst_value *plain_turns(sst_value *turns, sst_error *err) {
    for (size_t i = 0; turns != NULL && i < sst_array_len(turns); i++) {
        const sst_value *t = sst_array_get(turns, i);
        const sst_value *content = sst_object_get(t, "content");
        const sst_value *b = sst_array_get(content, 0);
        if (sst_array_len(content) == 1 && type_is(b, "text") && sst_object_len(b) == 2) {
            sst_value *s = turn(sst_string_cstr(sst_object_get(t, "role")),
                                sst_value_ref(sst_object_get(b, "text")), err);
            turns =
                s != NULL ? sst_array_set_take(turns, i, s, err) : (sst_value_unref(turns), NULL);
        }
    }
    return turns;
}

/* OpenAI tools as Anthropic's: {name, description, input_schema}; Anthropic's pass as they are. */
static sst_value *convert_tools(const sst_value *tools, sst_error *err) {
    sst_value *out = sst_array_empty();
    for (size_t i = 0; out != NULL && i < sst_array_len(tools); i++) {
        const sst_value *t = sst_array_get(tools, i);
        const sst_value *fn = sst_object_get(t, "function");
        if (sst_is_string(sst_object_get(t, "name")) && sst_object_get(t, "input_schema")) {
            out = sst__push_take(out, sst_value_ref(t), err);
            continue;
        }
        if (!sst_is_string(sst_object_get(fn, "name"))) {
            sst_value_unref(out);
            sst__error(err, SST_EINVAL,
                       "Anthropic request: tools[%zu] is not {\"type\": \"function\", "
                       "\"function\": {\"name\", \"parameters\"}}",
                       i);
            return NULL;
        }
        const sst_value *desc = sst_object_get(fn, "description");
        const sst_value *params = sst_object_get(fn, "parameters");
        sst_value *a = sst__object_with_capacity(4, err);
        a = sst__set_take(a, "name", sst_value_ref(sst_object_get(fn, "name")), err);
        if (sst_is_string(desc)) {
            a = sst__set_take(a, "description", sst_value_ref(desc), err);
        }
        sst_value *schema = NULL;
        if (sst_is_object(params)) {
            schema = sst_value_ref(params);
        } else { /* a tool without parameters: Anthropic still wants a schema */
            schema = sst__set_take(sst_object_empty(), "type", sst_string_new("object", err), err);
            schema = sst__set_take(schema, "properties", sst_object_empty(), err);
        }
        a = sst__set_take(a, "input_schema", schema, err);
        out = sst__push_take(out, a, err);
    }
    return out;
}

/* @p list (taken) with cache_control {"type": "ephemeral"} on its last element. */
static sst_value *cache_last(sst_value *list, sst_error *err) {
    size_t n = sst_array_len(list);
    if (list == NULL || n == 0) {
        return list;
    }
    sst_value *cc =
        sst__set_take(sst_object_empty(), "type", sst_string_new("ephemeral", err), err);
    sst_value *last =
        sst__set_take(sst_value_ref(sst_array_get(list, n - 1)), "cache_control", cc, err);
    if (last == NULL) {
        sst_value_unref(list);
        return NULL;
    }
    return sst_array_set_take(list, n - 1, last, err);
}

sst_value *sst__anthropic_request(const sst__llm_config *c, const sst_value *messages,
                                  const sst_value *tools, sst_error *err) {
    if (!sst_is_array(messages)) {
        sst__error(err, SST_EINVAL, "Anthropic request: messages must be an array");
        return NULL;
    }
    sst_value *system = sst_array_empty();
    sst_value *turns = sst_array_empty();
    bool bad = false; /* a message of the wrong shape (the callees' failures leave a NULL) */
    for (size_t i = 0; !bad && system != NULL && turns != NULL && i < sst_array_len(messages);
         i++) {
        const sst_value *m = sst_array_get(messages, i);
        const char *role = sst_string_cstr(sst_object_get(m, "role"));
        char what[48];
        snprintf(what, sizeof what, "messages[%zu]", i);
        if (!sst_is_object(m)) {
            sst__error(err, SST_EINVAL, "Anthropic request: %s is %s, not an object", what,
                       sst_type_name(sst_value_type(m)));
            bad = true;
            continue;
        }
        const sst_value *content = sst_object_get(m, "content");
        if (strcmp(role, "system") == 0) {
            system = content_blocks(system, content, false, true, what, err);
        } else if (strcmp(role, "user") == 0) {
            turns =
                add_turn(turns, "user",
                         content_blocks(sst_array_empty(), content, false, false, what, err), err);
        } else if (strcmp(role, "tool") == 0) {
            turns = add_turn(turns, "user", tool_result_blocks(m, what, err), err);
        } else if (strcmp(role, "assistant") == 0) {
            turns = add_turn(turns, "assistant", assistant_blocks(m, what, err), err);
        } else {
            sst__error(err, SST_EINVAL,
                       "Anthropic request: %s has role '%s', not system, user, assistant or tool",
                       what, role);
            bad = true;
        }
    }
    sst_value *tl = NULL;
    if (!bad && system != NULL && turns != NULL) {
        tl = sst_array_len(tools) > 0 ? convert_tools(tools, err) : sst_array_empty();
    }
    if (tl == NULL) {
        sst_value_unref(system);
        sst_value_unref(turns);
        return NULL;
    }
    turns = plain_turns(turns, err);
    if (c->cache_prompt) {
        system = cache_last(system, err);
        tl = cache_last(tl, err);
    }
    sst_value *r = sst__object_with_capacity(8, err);
    r = sst__set_take(r, "model", sst_string_new(c->model != NULL ? c->model : "", err), err);
    r = sst__set_take(r, "max_tokens", sst_int_new(SST__ANTHROPIC_MAX_TOKENS, err), err);
    if (sst_array_len(system) > 0 || system == NULL) {
        r = sst__set_take(r, "system", system, err);
    } else {
        sst_value_unref(system);
    }
    r = sst__set_take(r, "messages", turns, err);
    if (sst_array_len(tl) > 0 || tl == NULL) {
        r = sst__set_take(r, "tools", tl, err);
    } else {
        sst_value_unref(tl);
    }
    r = sst__set_take(r, "stream", sst_bool(c->stream), err);
    for (size_t i = 0; r != NULL && i < sst_object_len(c->params); i++) {
        r = sst__setv_take(r, sst_object_key_at(c->params, i),
                           sst_value_ref(sst_object_value_at(c->params, i)), err);
    }
    return r;
}
