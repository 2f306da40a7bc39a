/* SPDX-License-Identifier: MIT */
/* The tool registry, argument checks and tool calls; see tools.h. */
#include "tools.h"

#include <stdio.h>

#include "superstep/json.h"
#include "values/build.h"

void sst__tools_init(sst__tools *t) {
    memset(t, 0, sizeof *t);
}

void sst__tools_free(sst__tools *t) {
    for (size_t i = 0; i < t->n; i++) {
        sst__free(t->items[i].name);
        sst__free(t->items[i].description);
        sst_value_unref(t->items[i].parameters);
        sst__json_schema_free(t->items[i].check);
    }
    sst__free(t->items);
    memset(t, 0, sizeof *t);
}

static const sst__tool *find(const sst__tools *t, const char *name) {
    for (size_t i = 0; i < t->n; i++) {
        if (strcmp(t->items[i].name, name) == 0) {
            return &t->items[i];
        }
    }
    return NULL;
}

/* Adds a tool with @p fn or @p ctx_fn (exactly one set). */
static sst_code add(sst__tools *t, const char *name, const char *description,
                    const sst_value *parameters, sst__tool_fn fn, sst__tool_ctx_fn ctx_fn, void *ud,
                    sst_error *err) {
    if (name == NULL || name[0] == '\0' || (fn == NULL && ctx_fn == NULL)) {
        return sst__error(err, SST_EINVAL, "tools: a tool needs a name and a function");
    }
    if (find(t, name) != NULL) {
        return sst__error(err, SST_EINVAL, "tools: duplicate tool '%s'", name);
    }
    const sst_value *type = sst_object_get(parameters, "type");
    if (!sst_is_object(parameters) || !sst_is_string(type) ||
        strcmp(sst_string_cstr(type), "object") != 0) {
        return sst__error(err, SST_EINVAL,
                          "tools: the parameters of '%s' must be an object schema "
                          "({\"type\": \"object\", ...})",
                          name);
    }
    /* Compiled once here, so that each call only validates (and a bad schema fails now). */
    sst_error local = {0};
    sst__json_schema *check = sst__json_schema_compile(parameters, &local);
    if (check == NULL) {
        return local.code == SST_ENOMEM
                   ? sst__enomem(err)
                   : sst__error(err, local.code,
                                "tools: the parameters of '%s' are not a valid "
                                "schema: %s",
                                name, local.msg);
    }
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 4;
        sst__tool *items = sst__realloc(t->items, cap * sizeof *items);
        if (items == NULL) {
            sst__json_schema_free(check);
            return sst__enomem(err);
        }
        t->items = items;
        t->cap = cap;
    }
    sst__tool *tool = &t->items[t->n];
    tool->name = sst__strndup(name, strlen(name));
    tool->description = sst__strndup(description != NULL ? description : "",
                                     description != NULL ? strlen(description) : 0);
    if (tool->name == NULL || tool->description == NULL) {
        sst__free(tool->name);
        sst__free(tool->description);
        sst__json_schema_free(check);
        return sst__enomem(err);
    }
    tool->check = check;
    tool->parameters = sst_value_ref(parameters);
    tool->fn = fn;
    tool->ctx_fn = ctx_fn;
    tool->ud = ud;
    t->n++;
    return SST_OK;
}

sst_code sst__tools_add(sst__tools *t, const char *name, const char *description,
                        const sst_value *parameters, sst__tool_fn fn, void *ud, sst_error *err) {
    return add(t, name, description, parameters, fn, NULL, ud, err);
}

sst_code sst__tools_add_ctx(sst__tools *t, const char *name, const char *description,
                            const sst_value *parameters, sst__tool_ctx_fn fn, void *ud,
                            sst_error *err) {
    return add(t, name, description, parameters, NULL, fn, ud, err);
}

sst_code sst__tools_extend(sst__tools *t, const sst__tools *from, sst_error *err) {
    for (size_t i = 0; i < from->n; i++) {
        const sst__tool *f = &from->items[i];
        sst_code rc = add(t, f->name, f->description, f->parameters, f->fn, f->ctx_fn, f->ud, err);
        if (rc != SST_OK) {
            return rc;
        }
    }
    return SST_OK;
}

sst_value *sst__tools_schema(const sst__tools *t, sst_error *err) {
    sst_value *out = sst_array_empty();
    for (size_t i = 0; i < t->n && out != NULL; i++) {
        const sst__tool *tool = &t->items[i];
        sst_value *f =
            sst__set_take(sst_object_empty(), "name", sst_string_new(tool->name, err), err);
        f = sst__set_take(f, "description", sst_string_new(tool->description, err), err);
        f = sst__set_take(f, "parameters", sst_value_ref(tool->parameters), err);
        sst_value *e =
            sst__set_take(sst_object_empty(), "type", sst_string_new("function", err), err);
        e = sst__set_take(e, "function", f, err);
        out = e != NULL ? sst_array_push_take(out, e, err) : (sst_value_unref(out), NULL);
    }
    return out;
}

sst_code sst__schema_check(const sst_value *schema, const sst_value *value, const char *path,
                           sst_error *err) {
    if (schema == NULL) {
        return SST_OK;
    }
    sst__json_schema *s = sst__json_schema_compile(schema, err);
    if (s == NULL) {
        return sst__code(err);
    }
    sst_code rc = sst__json_schema_validate_report(s, value, path, 0, NULL, err);
    sst__json_schema_free(s);
    return rc;
}

/* The tool message for a call, with @p content taken. */
const char *sst__call_name(const sst_value *call) {
    const sst_value *n = sst_object_get(sst_object_get(call, "function"), "name");
    return sst_is_string(n) ? sst_string_cstr(n) : "";
}

sst_value *sst__tool_message_take(const sst_value *call, sst_value *content, sst_error *err) {
    const sst_value *id = sst_object_get(call, "id");
    sst_value *m = sst__set_take(sst_object_empty(), "role", sst_string_new("tool", err), err);
    m = sst__set_take(m, "tool_call_id", sst_value_ref(sst_is_string(id) ? id : sst_null()), err);
    m = sst__set_take(m, "name", sst_string_new(sst__call_name(call), err), err);
    return sst__set_take(m, "content", content, err);
}

static sst_value *error_message(const sst_value *call, const char *text, sst_error *err) {
    char buf[1040];
    snprintf(buf, sizeof buf, "error: %s", text);
    return sst__tool_message_take(call, sst_string_new(buf, err), err);
}

sst_value *sst__tools_call(const sst__tools *t, const sst_value *call, sst_error *err) {
    return sst__tools_call_ctx(t, call, NULL, err);
}

sst_value *sst__tools_call_ctx(const sst__tools *t, const sst_value *call, sst_node_ctx *ctx,
                               sst_error *err) {
    const sst_value *fn = sst_object_get(call, "function");
    const char *name = sst__call_name(call);
    const sst__tool *tool = find(t, name);
    char msg[1024];
    if (tool == NULL) {
        snprintf(msg, sizeof msg, "unknown tool '%s'", name);
        return error_message(call, msg, err);
    }
    const sst_value *argtext = sst_object_get(fn, "arguments");
    sst_error local = {0};
    sst_value *args = NULL;
    if (sst_is_string(argtext) && sst_string_len(argtext) > 0) {
        args = sst_json_read(sst_string_cstr(argtext), sst_string_len(argtext), NULL, &local);
        if (args == NULL) {
            snprintf(msg, sizeof msg, "the arguments of '%s' are not JSON: %s", name, local.msg);
            return error_message(call, msg, err);
        }
    } else {
        args = sst_object_empty();
    }
    /* The whole report (every failure, up to 8), which local.msg may be too short for. */
    char *report = NULL;
    sst_code rc =
        sst__json_schema_validate_report(tool->check, args, "arguments", 0, &report, &local);
    if (rc != SST_OK) {
        sst_value_unref(args);
        if (rc == SST_ENOMEM) {
            sst__enomem(err);
            return NULL;
        }
        sst__buf b;
        sst__buf_init(&b);
        sst__buf_printf(&b, "error: bad arguments for '%s': %s", name,
                        report != NULL ? report : local.msg);
        sst__free(report);
        sst_value *content = b.oom ? NULL : sst_string_newn(b.data, b.len, err);
        if (b.oom) {
            sst__enomem(err);
        }
        sst__buf_free(&b);
        return content != NULL ? sst__tool_message_take(call, content, err) : NULL;
    }
    local = (sst_error){0};
    sst_value *result = tool->ctx_fn != NULL ? tool->ctx_fn(args, ctx, tool->ud, &local)
                                             : tool->fn(args, tool->ud, &local);
    sst_value_unref(args);
    if (result == NULL) {
        snprintf(msg, sizeof msg, "tool '%s' failed: %s", name,
                 local.msg[0] != '\0' ? local.msg : "no reason given");
        return error_message(call, msg, err);
    }
    sst_value *content = sst_is_string(result) ? sst_value_ref(result) : NULL;
    if (content == NULL) {
        char *text = sst_json_write(result, SST_JSON_COMPACT, NULL, err);
        content = text != NULL ? sst_string_new(text, err) : NULL;
        sst_free(text);
    }
    sst_value_unref(result);
    return sst__tool_message_take(call, content, err);
}
