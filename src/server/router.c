/* SPDX-License-Identifier: MIT */
/*
 * The route table: LangGraph's API paths, "{}" standing for one path segment
 * (a thread, run or assistant id, a checkpoint id), matched in order.
 */
#include <stdio.h>
#include <string.h>

#include "crons.h"
#include "server_int.h"

typedef struct route {
    const char *method;
    const char *pattern;
    srv_handler handler;
} route;

static const route k_routes[] = {
    {"GET", "/ok", srv_ok},
    {"GET", "/info", srv_info},
    /* the web page (docs/web.md) */
    {"GET", "/", srv_web_index},
    {"GET", "/ui/{}", srv_web_file},
    /* assistants */
    {"POST", "/assistants", srv_assistants_create},
    {"POST", "/assistants/search", srv_assistants_search},
    {"POST", "/assistants/count", srv_assistants_count},
    {"GET", "/assistants/{}", srv_assistant_get},
    {"PATCH", "/assistants/{}", srv_assistant_patch},
    {"DELETE", "/assistants/{}", srv_assistant_delete},
    {"GET", "/assistants/{}/graph", srv_assistant_graph},
    {"GET", "/assistants/{}/graph.svg", srv_assistant_graph_svg},
    {"GET", "/assistants/{}/schemas", srv_assistant_schemas},
    {"GET", "/assistants/{}/subgraphs", srv_assistant_subgraphs},
    {"GET", "/assistants/{}/subgraphs/{}", srv_assistant_subgraphs},
    {"POST", "/assistants/{}/versions", srv_assistant_versions},
    {"POST", "/assistants/{}/latest", srv_assistant_latest},
    /* threads */
    {"POST", "/threads", srv_threads_create},
    {"POST", "/threads/search", srv_threads_search},
    {"POST", "/threads/count", srv_threads_count},
    {"GET", "/threads/{}", srv_thread_get},
    {"PATCH", "/threads/{}", srv_thread_patch},
    {"DELETE", "/threads/{}", srv_thread_delete},
    {"POST", "/threads/{}/copy", srv_thread_copy},
    {"GET", "/threads/{}/state", srv_state_get},
    {"POST", "/threads/{}/state", srv_state_post},
    {"POST", "/threads/{}/state/checkpoint", srv_state_checkpoint},
    {"GET", "/threads/{}/state/{}", srv_state_at},
    {"GET", "/threads/{}/history", srv_history_get},
    {"POST", "/threads/{}/history", srv_history_post},
    /* runs on a thread */
    {"POST", "/threads/{}/runs/crons", srv_crons_create_for_thread},
    {"POST", "/threads/{}/runs", srv_runs_create},
    {"GET", "/threads/{}/runs", srv_runs_list},
    {"POST", "/threads/{}/runs/wait", srv_runs_wait},
    {"POST", "/threads/{}/runs/stream", srv_runs_stream},
    {"GET", "/threads/{}/runs/{}", srv_run_get},
    {"DELETE", "/threads/{}/runs/{}", srv_run_delete},
    {"GET", "/threads/{}/runs/{}/join", srv_run_join},
    {"GET", "/threads/{}/runs/{}/stream", srv_run_join_stream},
    {"POST", "/threads/{}/runs/{}/cancel", srv_run_cancel},
    /* stateless runs */
    {"POST", "/runs", srv_runs_stateless_create},
    {"POST", "/runs/wait", srv_runs_stateless_wait},
    {"POST", "/runs/stream", srv_runs_stateless_stream},
    {"POST", "/runs/batch", srv_runs_batch},
    {"POST", "/runs/cancel", srv_runs_cancel_many},
    /* crons */
    {"POST", "/runs/crons", srv_crons_create},
    {"POST", "/runs/crons/search", srv_crons_search},
    {"POST", "/runs/crons/count", srv_crons_count},
    {"PATCH", "/runs/crons/{}", srv_cron_patch},
    {"DELETE", "/runs/crons/{}", srv_cron_delete},
    /* the store */
    {"PUT", "/store/items", srv_store_put},
    {"GET", "/store/items", srv_store_get},
    {"DELETE", "/store/items", srv_store_delete},
    {"POST", "/store/items/search", srv_store_search},
    {"POST", "/store/namespaces", srv_store_namespaces},
};

/* Matches @p path against @p pattern; with @p r, the "{}" segments of @p path become its
 * params (cut out of @p path). @p path is changed only on a match with @p r. */
static bool match(const char *pattern, char *path, srv_request *r) {
    size_t n = 0;
    const char *p = pattern;
    char *q = path;
    const char *params[4];
    while (*p != '\0') {
        if (p[0] == '{' && p[1] == '}') {
            char *end = strchr(q, '/');
            size_t len = end != NULL ? (size_t)(end - q) : strlen(q);
            if (len == 0 || n == 4) {
                return false;
            }
            params[n++] = q;
            q += len;
            p += 2;
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
        if (strcmp(k_routes[i].method, r->method) != 0) {
            if (*status == 404 && match(k_routes[i].pattern, copy, NULL)) {
                *status = 405;
            }
            continue;
        }
        if (match(k_routes[i].pattern, copy, r)) {
            return k_routes[i].handler;
        }
    }
    return NULL;
}

const char *srv_route_allowed(srv_request *r, char *out, size_t size) {
    out[0] = '\0';
    size_t n = 0;
    for (size_t i = 0; i < sizeof k_routes / sizeof k_routes[0]; i++) {
        if (!match(k_routes[i].pattern, r->path_copy, NULL) ||
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
