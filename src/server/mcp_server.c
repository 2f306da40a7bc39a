/* SPDX-License-Identifier: MIT */
/*
 * /mcp: the server's assistants as MCP tools over Streamable HTTP, as LangGraph's server
 * exposes them (docs/server.md "MCP"). Stateless, as LangGraph's is: no session id, every
 * POST one JSON-RPC message answered with application/json (never an SSE stream), GET and
 * DELETE 405. Methods: initialize, ping, tools/list (one tool per assistant, named by the
 * assistant's name, described by its description, its input schema the graph's), tools/call
 * (a stateless run of that assistant with the arguments as input, waited for: the final
 * output as JSON text, isError when the run failed); notifications get 202.
 */
#include <stdio.h>
#include <string.h>

#include "server_int.h"
#include "superstep/json.h"
#include "superstep/version.h"

/* The protocol versions this server speaks, newest first. */
static const char *const k_versions[] = {"2025-06-18", "2025-03-26", "2024-11-05"};

/* JSON-RPC error codes. */
enum { RPC_INVALID_REQUEST = -32600, RPC_NO_METHOD = -32601, RPC_INVALID_PARAMS = -32602 };

/* {"jsonrpc": "2.0", "id": id} (new). */
static sst_value *envelope(const sst_value *id, sst_error *err) {
    sst_value *o = sst__set_take(sst_object_empty(), "jsonrpc", sst_string_new("2.0", err), err);
    return sst__set_take(o, "id", sst_value_ref(id != NULL ? id : sst_null()), err);
}

static void rpc_result(srv_response *res, const sst_value *id, sst_value *result) {
    sst_error err = {0};
    srv_json(res, 200, sst__set_take(envelope(id, &err), "result", result, &err));
}

static void rpc_error(srv_response *res, const sst_value *id, int code, const char *msg) {
    sst_error err = {0};
    sst_value *e = sst__set_take(sst_object_empty(), "code", sst_int_new(code, &err), &err);
    e = sst__set_take(e, "message", sst_string_new(msg, &err), &err);
    srv_json(res, 200, sst__set_take(envelope(id, &err), "error", e, &err));
}

/* {"content": [{"type": "text", "text": @p text}], "isError": @p is_error} (new). */
static sst_value *tool_result(const char *text, bool is_error, sst_error *err) {
    sst_value *c = sst__set_take(sst_object_empty(), "type", sst_string_new("text", err), err);
    c = sst__set_take(c, "text", sst_string_new(text, err), err);
    sst_value *r = sst__set_take(sst_object_empty(), "content",
                                 sst__push_take(sst_array_empty(), c, err), err);
    return sst__set_take(r, "isError", sst_bool(is_error), err);
}

char *srv_mcp_result(const char *id, const char *result) {
    sst_error err = {0};
    sst_value *idv = sst_json_parse(id, &err);
    sst_value *out = result != NULL ? sst_json_parse(result, &err) : sst_null();
    bool failed = sst_object_get(out, "__error__") != NULL;
    const char *text = result != NULL ? result : "null";
    sst_value *env = envelope(idv, &err);
    env = sst__set_take(env, "result", tool_result(text, failed, &err), &err);
    char *s = env != NULL ? sst_json_write(env, SST_JSON_COMPACT, NULL, &err) : NULL;
    sst_value_unref(env);
    sst_value_unref(out);
    sst_value_unref(idv);
    return s;
}

static void initialize(srv_response *res, const sst_value *id, const sst_value *params) {
    const sst_value *want = sst_object_get(params, "protocolVersion");
    const char *version = k_versions[0];
    for (size_t i = 0; sst_is_string(want) && i < sizeof k_versions / sizeof k_versions[0]; i++) {
        if (strcmp(sst_string_cstr(want), k_versions[i]) == 0) {
            version = k_versions[i];
        }
    }
    sst_error err = {0};
    sst_value *tools = sst__set_take(sst_object_empty(), "listChanged", sst_bool(false), &err);
    sst_value *caps = sst__set_take(sst_object_empty(), "tools", tools, &err);
    sst_value *info =
        sst__set_take(sst_object_empty(), "name", sst_string_new("superstep", &err), &err);
    info = sst__set_take(info, "version", sst_string_new(sst_version(), &err), &err);
    sst_value *r =
        sst__set_take(sst_object_empty(), "protocolVersion", sst_string_new(version, &err), &err);
    r = sst__set_take(r, "capabilities", caps, &err);
    r = sst__set_take(r, "serverInfo", info, &err);
    rpc_result(res, id, r);
}

/* The assistants whose graphs this server serves, one per name (the first of a name). */
static sst_value *tool_assistants(sst_server *s, sst_error *err) {
    sst_value *all = srv_assistants_all(s, err);
    if (all == NULL) {
        return NULL;
    }
    sst_value *seen = sst_object_empty();
    sst_value *out = sst_array_empty();
    for (size_t i = 0; i < sst_array_len(all) && out != NULL; i++) {
        const sst_value *a = sst_array_get(all, i);
        const sst_value *name = sst_object_get(a, "name");
        const char *graph = sst_string_cstr(sst_object_get(a, "graph_id"));
        if (!sst_is_string(name) || graph == NULL || srv_graph_find(s, graph) == NULL ||
            sst_object_getn(seen, sst_string_cstr(name), sst_string_len(name)) != NULL) {
            continue;
        }
        seen = sst__setv_take(seen, name, sst_bool(true), err);
        out = sst__push_take(out, sst_value_ref(a), err);
    }
    sst_value_unref(seen);
    sst_value_unref(all);
    return out;
}

static void tools_list(sst_server *s, srv_response *res, const sst_value *id) {
    sst_error err = {0};
    sst_value *as = tool_assistants(s, &err);
    if (as == NULL) {
        srv_fail(res, &err);
        return;
    }
    sst_value *tools = sst_array_empty();
    for (size_t i = 0; i < sst_array_len(as); i++) {
        const sst_value *a = sst_array_get(as, i);
        srv_graph *g = srv_graph_find(s, sst_string_cstr(sst_object_get(a, "graph_id")));
        const sst_value *desc = sst_object_get(a, "description");
        sst_value *schema = srv_graph_input_schema(g, &err);
        if (schema != NULL && sst_object_get(schema, "$schema") != NULL) {
            schema = sst_object_remove_take(schema, "$schema", &err);
        }
        char fallback[200];
        snprintf(fallback, sizeof fallback,
                 "Runs the graph '%s' on this input and answers its "
                 "output.",
                 g->id);
        sst_value *t = sst__set_take(sst_object_empty(), "name",
                                     sst_value_ref(sst_object_get(a, "name")), &err);
        t = sst__set_take(t, "description",
                          sst_is_string(desc) && sst_string_len(desc) > 0
                              ? sst_value_ref(desc)
                              : sst_string_new(fallback, &err),
                          &err);
        t = sst__set_take(t, "inputSchema", schema, &err);
        tools = sst__push_take(tools, t, &err);
    }
    sst_value_unref(as);
    rpc_result(res, id, sst__set_take(sst_object_empty(), "tools", tools, &err));
}

/* tools/call: a stateless run of the assistant named params.name, answered when it ends. */
static void tools_call(srv_request *r, srv_response *res, const sst_value *id,
                       const sst_value *params) {
    const sst_value *name = sst_object_get(params, "name");
    const sst_value *args = sst_object_get(params, "arguments");
    if (!sst_is_string(name) || (args != NULL && !sst_is_object(args))) {
        rpc_error(res, id, RPC_INVALID_PARAMS,
                  "tools/call needs params {\"name\": string, \"arguments\": object}");
        return;
    }
    sst_error err = {0};
    sst_value *as = tool_assistants(r->s, &err);
    const sst_value *found = NULL;
    for (size_t i = 0; i < sst_array_len(as) && found == NULL; i++) {
        const sst_value *a = sst_array_get(as, i);
        if (sst_value_equal(sst_object_get(a, "name"), name)) {
            found = a;
        }
    }
    if (found == NULL) {
        char msg[300];
        snprintf(msg, sizeof msg, "unknown tool '%.200s' (tools/list names them)",
                 sst_string_cstr(name));
        sst_value_unref(as);
        rpc_error(res, id, RPC_INVALID_PARAMS, msg);
        return;
    }
    sst_value *body = sst__set_take(sst_object_empty(), "assistant_id",
                                    sst_value_ref(sst_object_get(found, "assistant_id")), &err);
    body =
        sst__set_take(body, "input", args != NULL ? sst_value_ref(args) : sst_object_empty(), &err);
    sst_value_unref(as);
    size_t n = 0;
    char *idtext = sst_json_write(id, SST_JSON_COMPACT, &n, &err);
    if (body == NULL || idtext == NULL || n >= sizeof res->mcp_id) {
        sst_value_unref(body);
        sst__free(idtext);
        rpc_error(res, id, RPC_INVALID_REQUEST, "the request id is too long");
        return;
    }
    srv_request sub = *r;
    sub.json = body;
    srv_runs_stateless_wait(&sub, res);
    sst_value_unref(body);
    if (res->stream != NULL) {
        memcpy(res->mcp_id, idtext, n + 1);
    } else {
        /* Refused before it ran (a bad input): the tool's error, as MCP reports one. */
        const char *detail = sst_string_cstr(sst_object_get(res->json, "detail"));
        sst_value *tr = tool_result(detail != NULL ? detail : "the run was refused", true, &err);
        rpc_result(res, id, tr);
    }
    sst__free(idtext);
}

void srv_mcp_post(srv_request *r, srv_response *res) {
    const sst_value *msg = r->json;
    if (!sst_is_object(msg) || !sst_is_string(sst_object_get(msg, "jsonrpc")) ||
        strcmp(sst_string_cstr(sst_object_get(msg, "jsonrpc")), "2.0") != 0 ||
        !sst_is_string(sst_object_get(msg, "method"))) {
        rpc_error(res, sst_object_get(msg, "id"), RPC_INVALID_REQUEST,
                  "a JSON-RPC 2.0 message {\"jsonrpc\": \"2.0\", \"method\", \"id\"} was expected "
                  "(one per request: batches are not supported)");
        res->status = 400;
        return;
    }
    const char *method = sst_string_cstr(sst_object_get(msg, "method"));
    const sst_value *id = sst_object_get(msg, "id");
    const sst_value *params = sst_object_get(msg, "params");
    if (id == NULL) { /* a notification (notifications/initialized, ...): accepted */
        sst_value_unref(res->json);
        res->json = NULL;
        res->status = 202;
        return;
    }
    if (strcmp(method, "initialize") == 0) {
        initialize(res, id, params);
    } else if (strcmp(method, "ping") == 0) {
        rpc_result(res, id, sst_object_empty());
    } else if (strcmp(method, "tools/list") == 0) {
        tools_list(r->s, res, id);
    } else if (strcmp(method, "tools/call") == 0) {
        tools_call(r, res, id, params);
    } else {
        char m[200];
        snprintf(m, sizeof m,
                 "method '%.100s' is not supported (initialize, ping, tools/list, "
                 "tools/call)",
                 method);
        rpc_error(res, id, RPC_NO_METHOD, m);
    }
}

void srv_mcp_other(srv_request *r, srv_response *res) {
    SST_UNUSED(r);
    srv_error(res, 405,
              "/mcp is stateless: POST one JSON-RPC message per request (no SSE stream to GET, "
              "no session to DELETE)");
}
