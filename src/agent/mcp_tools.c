/* SPDX-License-Identifier: MIT */
/*
 * MCP tools as agent tools (see mcp.h): each listed tool joins a tool list
 * under an optional prefix, with a callback that calls it on the server.
 * The callback's user data (the client and the tool's MCP name) lives in the
 * client, which is why the client must outlive the tool list.
 */
#include "mcp.h"
#include "values/build.h"

sst_value *sst__mcp_object_schema(const sst_value *schema, sst_error *err) {
    const sst_value *type = sst_object_get(schema, "type");
    if (sst_is_object(schema) && sst_is_string(type) &&
        strcmp(sst_string_cstr(type), "object") == 0) {
        return sst_value_ref(schema);
    }
    if (sst_is_object(schema) && type == NULL) {
        /* {"properties": ...} without its type: the object schema it means. */
        sst_value *s =
            sst__set_take(sst_object_empty(), "type", sst_string_new("object", err), err);
        if (sst_object_get(schema, "properties") == NULL) {
            s = sst__set_take(s, "properties", sst_object_empty(), err);
        }
        for (size_t i = 0; i < sst_object_len(schema) && s != NULL; i++) {
            s = sst__setv_take(s, sst_object_key_at(schema, i),
                               sst_value_ref(sst_object_value_at(schema, i)), err);
        }
        return s;
    }
    sst_value *s = sst__set_take(sst_object_empty(), "type", sst_string_new("object", err), err);
    return sst__set_take(s, "properties", sst_object_empty(), err);
}

/* Stops the call when the node it runs in ran out of time or its run was cancelled. */
static bool node_cancelled(void *ud) {
    return sst_node_cancelled(ud);
}

static sst_value *call(const sst_value *args, sst_node_ctx *ctx, void *ud, sst_error *err) {
    const sst__mcp_binding *b = ud;
    sst_mcp_call_opts how;
    sst_mcp_call_opts_init(&how);
    char trace[64];
    if (ctx != NULL) {
        how.cancelled = node_cancelled;
        how.cancel_user_data = ctx;
        if (sst_node_traceparent(ctx, NULL, trace, sizeof trace)) {
            how.traceparent = trace; /* the tool node's span: the server's join the trace */
        }
    }
    return sst__mcp_call_tool(b->client, b->name, args, &how, err);
}

static bool has_tool(const sst__tools *t, const char *name) {
    for (size_t i = 0; i < t->n; i++) {
        if (strcmp(t->items[i].name, name) == 0) {
            return true;
        }
    }
    return false;
}

sst_code sst__mcp_tools_add(sst__tools *t, sst__mcp_client *c, const char *prefix, sst_error *err) {
    prefix = prefix != NULL ? prefix : "";
    sst_value *list = sst__mcp_list_tools(c, NULL, err);
    if (list == NULL) {
        return sst__code(err);
    }
    /* Into a list of their own first: a clash leaves @p t as it was. */
    sst__tools mine;
    sst__tools_init(&mine);
    sst_code code = SST_OK;
    sst__buf name;
    sst__buf_init(&name);
    for (size_t i = 0; i < sst_array_len(list) && code == SST_OK; i++) {
        const sst_value *e = sst_array_get(list, i);
        const char *mcp_name = sst_string_cstr(sst_object_get(e, "name"));
        name.len = 0;
        sst__buf_printf(&name, "%s%s", prefix, mcp_name);
        sst__buf_putc(&name, '\0');
        if (name.oom) {
            code = sst__enomem(err);
            break;
        }
        if (has_tool(t, name.data) || has_tool(&mine, name.data)) {
            code = sst__error(err, SST_EINVAL,
                              "MCP server '%s': its tool '%s' clashes with a tool named '%s' "
                              "already there (give a prefix)",
                              sst__mcp_label(c), mcp_name, name.data);
            break;
        }
        sst_error le = {0};
        sst_value *schema = sst__mcp_object_schema(sst_object_get(e, "inputSchema"), &le);
        sst__mcp_binding *b = schema != NULL ? sst__mcp_bind(c, mcp_name, &le) : NULL;
        if (b == NULL) {
            sst_value_unref(schema);
            code = sst__enomem(err);
            break;
        }
        code =
            sst__tools_add_ctx(&mine, name.data, sst_string_cstr(sst_object_get(e, "description")),
                               schema, call, b, err);
        sst_value_unref(schema);
    }
    if (code == SST_OK) {
        code = sst__tools_extend(t, &mine, err);
    }
    sst__buf_free(&name);
    sst__tools_free(&mine);
    sst_value_unref(list);
    return code;
}
