/* SPDX-License-Identifier: MIT */
/*
 * The route table: LangGraph's API paths, "{name}" standing for one path
 * segment (a thread, run or assistant id, a checkpoint id), matched in order;
 * which routes need no token; and GET /openapi.json, made from the table.
 */
#include <stdio.h>
#include <string.h>

#include "auth.h"
#include "crons.h"
#include "prune.h"
#include "server_int.h"
#include "superstep/version.h"

typedef struct route {
    const char *method;
    const char *pattern;
    srv_handler handler;
    bool open; /* served without the token (--auth-token-env) */
} route;

static void openapi(srv_request *r, srv_response *res);

static const route k_routes[] = {
    /* Open without the token: the health check and the API's description, as on
     * LangGraph's server, and the web page's files (docs/web.md), built into the binary:
     * they hold no data, and the page asks for the token before it asks for any. */
    {"GET", "/ok", srv_ok, true},
    {"GET", "/openapi.json", openapi, true},
    {"GET", "/", srv_web_index, true},
    {"GET", "/ui/{file}", srv_web_file, true},
    {"GET", "/info", srv_info, false},
    /* assistants */
    {"POST", "/assistants", srv_assistants_create, false},
    {"POST", "/assistants/search", srv_assistants_search, false},
    {"POST", "/assistants/count", srv_assistants_count, false},
    {"GET", "/assistants/{assistant_id}", srv_assistant_get, false},
    {"PATCH", "/assistants/{assistant_id}", srv_assistant_patch, false},
    {"DELETE", "/assistants/{assistant_id}", srv_assistant_delete, false},
    {"GET", "/assistants/{assistant_id}/graph", srv_assistant_graph, false},
    {"GET", "/assistants/{assistant_id}/graph.svg", srv_assistant_graph_svg, false},
    {"GET", "/assistants/{assistant_id}/schemas", srv_assistant_schemas, false},
    {"GET", "/assistants/{assistant_id}/subgraphs", srv_assistant_subgraphs, false},
    {"GET", "/assistants/{assistant_id}/subgraphs/{namespace}", srv_assistant_subgraphs, false},
    {"POST", "/assistants/{assistant_id}/versions", srv_assistant_versions, false},
    {"POST", "/assistants/{assistant_id}/latest", srv_assistant_latest, false},
    /* threads */
    {"POST", "/threads", srv_threads_create, false},
    {"POST", "/threads/search", srv_threads_search, false},
    {"POST", "/threads/count", srv_threads_count, false},
    {"POST", "/threads/prune", srv_threads_prune, false},
    {"GET", "/threads/{thread_id}", srv_thread_get, false},
    {"PATCH", "/threads/{thread_id}", srv_thread_patch, false},
    {"DELETE", "/threads/{thread_id}", srv_thread_delete, false},
    {"POST", "/threads/{thread_id}/copy", srv_thread_copy, false},
    {"GET", "/threads/{thread_id}/state", srv_state_get, false},
    {"POST", "/threads/{thread_id}/state", srv_state_post, false},
    {"POST", "/threads/{thread_id}/state/checkpoint", srv_state_checkpoint, false},
    {"GET", "/threads/{thread_id}/state/{checkpoint_id}", srv_state_at, false},
    {"GET", "/threads/{thread_id}/history", srv_history_get, false},
    {"POST", "/threads/{thread_id}/history", srv_history_post, false},
    /* runs on a thread */
    {"POST", "/threads/{thread_id}/runs/crons", srv_crons_create_for_thread, false},
    {"POST", "/threads/{thread_id}/runs", srv_runs_create, false},
    {"GET", "/threads/{thread_id}/runs", srv_runs_list, false},
    {"POST", "/threads/{thread_id}/runs/wait", srv_runs_wait, false},
    {"POST", "/threads/{thread_id}/runs/stream", srv_runs_stream, false},
    {"GET", "/threads/{thread_id}/runs/{run_id}", srv_run_get, false},
    {"DELETE", "/threads/{thread_id}/runs/{run_id}", srv_run_delete, false},
    {"GET", "/threads/{thread_id}/runs/{run_id}/join", srv_run_join, false},
    {"GET", "/threads/{thread_id}/runs/{run_id}/stream", srv_run_join_stream, false},
    {"POST", "/threads/{thread_id}/runs/{run_id}/cancel", srv_run_cancel, false},
    /* stateless runs */
    {"POST", "/runs", srv_runs_stateless_create, false},
    {"POST", "/runs/wait", srv_runs_stateless_wait, false},
    {"POST", "/runs/stream", srv_runs_stateless_stream, false},
    {"POST", "/runs/batch", srv_runs_batch, false},
    {"POST", "/runs/cancel", srv_runs_cancel_many, false},
    /* crons */
    {"POST", "/runs/crons", srv_crons_create, false},
    {"POST", "/runs/crons/search", srv_crons_search, false},
    {"POST", "/runs/crons/count", srv_crons_count, false},
    {"PATCH", "/runs/crons/{cron_id}", srv_cron_patch, false},
    {"DELETE", "/runs/crons/{cron_id}", srv_cron_delete, false},
    /* MCP: the assistants as tools (mcp_server.c) */
    {"POST", "/mcp", srv_mcp_post, false},
    {"GET", "/mcp", srv_mcp_other, false},
    {"DELETE", "/mcp", srv_mcp_other, false},
    /* the store */
    {"PUT", "/store/items", srv_store_put, false},
    {"GET", "/store/items", srv_store_get, false},
    {"DELETE", "/store/items", srv_store_delete, false},
    {"POST", "/store/items/search", srv_store_search, false},
    {"POST", "/store/namespaces", srv_store_namespaces, false},
};

/* Matches @p path against @p pattern; with @p r, the "{name}" segments of @p path become its
 * params (cut out of @p path). @p path is changed only on a match with @p r. */
static bool match(const char *pattern, char *path, srv_request *r) {
    size_t n = 0;
    const char *p = pattern;
    char *q = path;
    const char *params[4];
    while (*p != '\0') {
        if (p[0] == '{') {
            char *end = strchr(q, '/');
            size_t len = end != NULL ? (size_t)(end - q) : strlen(q);
            if (len == 0 || n == 4) {
                return false;
            }
            params[n++] = q;
            q += len;
            p = strchr(p, '}') + 1;
            continue;
        }
        if (*p != *q) {
            return false;
        }
        p++;
        q++;
    }
    if (*q != '\0' && strcmp(q, "/") != 0) {
        return false;
    }
    if (r == NULL) {
        return true;
    }
    /* Cut the parameters out of the copy. */
    for (size_t i = 0; i < n; i++) {
        char *end = strchr(params[i], '/');
        if (end != NULL) {
            *end = '\0';
        }
        r->param[i] = params[i];
    }
    r->n_param = n;
    return true;
}

/* The route group of @p pattern that langgraph.json's http.disable_* switches remove. */
static unsigned group_of(const char *pattern) {
    static const struct {
        const char *prefix;
        unsigned group;
    } groups[] = {
        {"/assistants", SRV_GROUP_ASSISTANTS},
        {"/threads/{thread_id}/runs", SRV_GROUP_RUNS},
        {"/threads", SRV_GROUP_THREADS},
        {"/runs", SRV_GROUP_RUNS},
        {"/store", SRV_GROUP_STORE},
        {"/openapi.json", SRV_GROUP_META},
        {"/info", SRV_GROUP_META},
        {"/ui/", SRV_GROUP_UI},
        {"/mcp", SRV_GROUP_MCP},
    };
    if (strcmp(pattern, "/") == 0) {
        return SRV_GROUP_UI;
    }
    for (size_t i = 0; i < sizeof groups / sizeof groups[0]; i++) {
        if (strncmp(pattern, groups[i].prefix, strlen(groups[i].prefix)) == 0) {
            return groups[i].group;
        }
    }
    return 0;
}

/* True when the route is served (not removed by an http.disable_* switch). */
static bool served(const sst_server *s, const route *rt) {
    return (group_of(rt->pattern) & s->disabled) == 0;
}

srv_handler srv_route(srv_request *r, unsigned *status) {
    *status = 404;
    /* match() changes the copy only when it matches: one copy serves every try. */
    char *copy = sst__strndup(r->url, strlen(r->url));
    if (copy == NULL) {
        *status = 500;
        return NULL;
    }
    sst__free(r->path_copy);
    r->path_copy = copy;
    for (size_t i = 0; i < sizeof k_routes / sizeof k_routes[0]; i++) {
        if (!served(r->s, &k_routes[i])) {
            continue;
        }
        if (strcmp(k_routes[i].method, r->method) != 0) {
            if (*status == 404 && match(k_routes[i].pattern, copy, NULL)) {
                *status = 405;
            }
            continue;
        }
        if (match(k_routes[i].pattern, copy, r)) {
            /* Every request passes the one check of users and ownership (auth.c). */
            return srv_auth_gate(r, k_routes[i].pattern, k_routes[i].handler, k_routes[i].open);
        }
    }
    return NULL;
}

const char *srv_route_allowed(srv_request *r, char *out, size_t size) {
    out[0] = '\0';
    size_t n = 0;
    for (size_t i = 0; i < sizeof k_routes / sizeof k_routes[0]; i++) {
        if (!served(r->s, &k_routes[i]) || !match(k_routes[i].pattern, r->path_copy, NULL) ||
            strstr(out, k_routes[i].method) != NULL) {
            continue;
        }
        int k = snprintf(out + n, size - n, "%s%s", n > 0 ? ", " : "", k_routes[i].method);
        if (k < 0 || (size_t)k >= size - n) {
            break;
        }
        n += (size_t)k;
    }
    return out;
}

bool srv_route_open(const char *method, const char *url) {
    size_t n = strcspn(url, "?");
    char path[512];
    if (n >= sizeof path) {
        return false;
    }
    memcpy(path, url, n);
    path[n] = '\0';
    for (size_t i = 0; i < sizeof k_routes / sizeof k_routes[0]; i++) {
        if (k_routes[i].open && strcmp(k_routes[i].method, method) == 0 &&
            match(k_routes[i].pattern, path, NULL)) {
            return true;
        }
    }
    return false;
}

/* The path parameters of @p pattern as OpenAPI's parameter objects (new). */
static sst_value *path_params(const char *pattern, sst_error *err) {
    sst_value *list = sst_array_empty();
    for (const char *p = strchr(pattern, '{'); p != NULL; p = strchr(p + 1, '{')) {
        const char *end = strchr(p, '}');
        char *name = sst__strndup(p + 1, (size_t)(end - p - 1));
        sst_value *schema =
            sst__set_take(sst_object_empty(), "type", sst_string_new("string", err), err);
        sst_value *o = sst__set_take(sst_object_empty(), "name",
                                     name != NULL ? sst_string_new(name, err) : NULL, err);
        sst__free(name);
        o = sst__set_take(o, "in", sst_string_new("path", err), err);
        o = sst__set_take(o, "required", sst_bool(true), err);
        o = sst__set_take(o, "schema", schema, err);
        list = sst__push_take(list, o, err);
    }
    return list;
}

/* One operation: its path parameters, a generic answer, and no security when open. */
static sst_value *operation(const route *rt, sst_error *err) {
    sst_value *ok =
        sst__set_take(sst_object_empty(), "description", sst_string_new("Success", err), err);
    sst_value *op =
        sst__set_take(sst_object_empty(), "parameters", path_params(rt->pattern, err), err);
    op = sst__set_take(op, "responses", sst__set_take(sst_object_empty(), "200", ok, err), err);
    if (rt->open) {
        op = sst__set_take(op, "security", sst_array_empty(), err);
    }
    return op;
}

/*
 * GET /openapi.json: an OpenAPI 3.1 document of the routes: their paths, methods and path
 * parameters, and which need the bearer token (all but the open ones, when the server has
 * one). It describes no request or response bodies: docs/server.md and LangGraph's SDK
 * types do.
 */
static void openapi(srv_request *r, srv_response *res) {
    sst_error err = {0};
    sst_value *paths = sst_object_empty();
    for (size_t i = 0; i < sizeof k_routes / sizeof k_routes[0]; i++) {
        const route *rt = &k_routes[i];
        if (!served(r->s, rt)) {
            continue;
        }
        char method[8];
        size_t n = strlen(rt->method);
        for (size_t k = 0; k <= n && k < sizeof method; k++) {
            method[k] = (char)(rt->method[k] >= 'A' && rt->method[k] <= 'Z' ? rt->method[k] + 32
                                                                            : rt->method[k]);
        }
        const sst_value *have = sst_object_get(paths, rt->pattern);
        sst_value *item = have != NULL ? sst_value_ref(have) : sst_object_empty();
        item = sst__set_take(item, method, operation(rt, &err), &err);
        paths = sst__set_take(paths, rt->pattern, item, &err);
    }
    sst_value *info =
        sst__set_take(sst_object_empty(), "title", sst_string_new("superstep serve", &err), &err);
    info = sst__set_take(info, "version", sst_string_new(sst_version(), &err), &err);
    info = sst__set_take(
        info, "description",
        sst_string_new("LangGraph's HTTP API as superstep serves it (docs/server.md).", &err),
        &err);
    sst_value *doc =
        sst__set_take(sst_object_empty(), "openapi", sst_string_new("3.1.0", &err), &err);
    doc = sst__set_take(doc, "info", info, &err);
    doc = sst__set_take(doc, "paths", paths, &err);
    if (r->s->token != NULL) {
        sst_value *bearer =
            sst__set_take(sst_object_empty(), "type", sst_string_new("http", &err), &err);
        bearer = sst__set_take(bearer, "scheme", sst_string_new("bearer", &err), &err);
        sst_value *schemes = sst__set_take(sst_object_empty(), "bearer", bearer, &err);
        doc = sst__set_take(doc, "components",
                            sst__set_take(sst_object_empty(), "securitySchemes", schemes, &err),
                            &err);
        sst_value *need = sst__set_take(sst_object_empty(), "bearer", sst_array_empty(), &err);
        doc = sst__set_take(doc, "security", sst__push_take(sst_array_empty(), need, &err), &err);
    }
    if (doc == NULL) {
        srv_error(res, 500, "out of memory writing the OpenAPI document");
        return;
    }
    srv_json(res, 200, doc);
}
