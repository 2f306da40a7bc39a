/* SPDX-License-Identifier: MIT */
/*
 * The choke point of users and ownership (docs/auth.md). The router hands every matched
 * request to srv_auth_gate: it finds the user (authenticate), names the request's
 * resource.action from its route, and then, for a user without the admin permission:
 *
 * - create: stamps metadata.owner = identity on what is made (threads, assistants, crons;
 *   a thread a run makes gets it through srv_auth_stamp);
 * - a resource named in the path (a thread, and so its state, history, copy, runs, joins
 *   and streams; an assistant; a cron): another user's answers 404, as if it did not exist;
 * - search and count: the owner becomes a filter (threads: sst_thread_query.owner, a SQL
 *   condition; crons: the metadata filter; assistants: srv_auth_sees);
 * - the store: a namespace must begin with the user's identity;
 * - runs: the user reaches the graph as config.configurable.langgraph_auth_user.
 *
 * An admin (a user whose permissions hold the configured admin permission) sees and
 * changes everything; what they create is still stamped with their identity.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "auth.h"
#include "server_int.h"
#include "superstep/json.h"

struct srv_auth {
    srv_jwt *jwt;
    srv_token_cache *tokens; /* the JWTs verified (auth_cache.c); NULL: verify every time */
    srv_keys *keys;
    srv_lua_auth *lua; /* a Lua auth file: its handlers decide (auth_lua.c) */
    char *admin;       /* the admin permission */
};

/* One request's user and, when refused, the answer. */
struct srv_auth_req {
    sst_value *user; /* {"identity", "permissions", ...} */
    const char *identity;
    bool admin;
    unsigned status;
    char msg[300];
    bool lua;          /* the Lua handlers decide: no owner rules of the built-in modes */
    sst_value *filter; /* the Lua handler's metadata filter, or NULL (no restriction) */
};

/* ---- configuration -------------------------------------------------------------- */

void srv_auth_free(srv_auth *a) {
    if (a == NULL) {
        return;
    }
    srv_jwt_free(a->jwt);
    srv_token_cache_free(a->tokens);
    srv_keys_free(a->keys);
    srv_lua_auth_free(a->lua);
    sst__free(a->admin);
    sst__free(a);
}

static char *beside(const char *base, const char *rel) {
    const char *slash = base != NULL ? strrchr(base, '/') : NULL;
    sst__buf b;
    sst__buf_init(&b);
    if (rel[0] != '/' && slash != NULL) {
        sst__buf_append(&b, base, (size_t)(slash - base) + 1);
    }
    sst__buf_printf(&b, "%s", rel[0] == '.' && rel[1] == '/' ? rel + 2 : rel);
    return sst__buf_detach(&b, NULL);
}

/* True for LangGraph's Python form of "path": FILE.py or FILE.py:NAME. */
static bool python_file(const char *path) {
    const char *colon = strrchr(path, ':');
    size_t n = colon != NULL ? (size_t)(colon - path) : strlen(path);
    return n >= 3 && strncmp(path + n - 3, ".py", 3) == 0;
}

const char *srv_auth_unknown_member(const sst_value *spec, const char *const *known) {
    for (size_t i = 0; i < sst_object_len(spec); i++) {
        const char *k = sst_string_cstr(sst_object_key_at(spec, i));
        size_t n = 0;
        while (known[n] != NULL && strcmp(known[n], k) != 0) {
            n++;
        }
        if (known[n] == NULL) {
            return k;
        }
    }
    return NULL;
}

static sst_code configure(srv_auth *a, const sst_value *spec, const char *base, sst_error *err) {
    static const char *const known[] = {"path", "jwt", "api_keys", "admin_permission", NULL};
    const char *unknown = srv_auth_unknown_member(spec, known);
    if (unknown != NULL) {
        return sst__error(err, SST_EINVAL,
                          "auth: unknown member \"%s\" (path, jwt, api_keys, admin_permission)",
                          unknown);
    }
    const sst_value *jwt = sst_object_get(spec, "jwt");
    const sst_value *keys = sst_object_get(spec, "api_keys");
    const sst_value *admin = sst_object_get(spec, "admin_permission");
    const sst_value *path = sst_object_get(spec, "path");
    if ((jwt == NULL && keys == NULL) == (path == NULL)) {
        return sst__error(err, SST_EINVAL,
                          "auth: give \"path\" (a Lua auth file), or \"jwt\" and/or \"api_keys\"");
    }
    if (admin != NULL && (!sst_is_string(admin) || sst_string_len(admin) == 0)) {
        return sst__error(err, SST_EINVAL, "auth: \"admin_permission\" must be a string");
    }
    const char *adm = admin != NULL ? sst_string_cstr(admin) : "admin";
    if ((a->admin = sst__strndup(adm, strlen(adm))) == NULL) {
        return sst__enomem(err);
    }
    if (path != NULL) {
        if (!sst_is_string(path) || sst_string_len(path) == 0) {
            return sst__error(err, SST_EINVAL, "auth: \"path\" must be a file name");
        }
        if (python_file(sst_string_cstr(path))) {
            return sst__error(err, SST_EINVAL,
                              "auth: \"path\" names a Python auth file (%s): superstep does not "
                              "run LangGraph's Python Auth handlers, not even under `python3 -m "
                              "superstep serve`. Write them in a Lua file (\"path\": "
                              "\"./auth.lua\", the same authenticate and on handlers) or use the "
                              "built-in \"jwt\" or \"api_keys\" modes (docs/auth.md)",
                              sst_string_cstr(path));
        }
        char *file = beside(base, sst_string_cstr(path));
        a->lua = file != NULL ? srv_lua_auth_load(file, err) : NULL;
        sst__free(file);
        return a->lua != NULL ? SST_OK : sst__code(err);
    }
    if (jwt != NULL && (a->jwt = srv_jwt_new(jwt, base, err)) == NULL) {
        return sst__code(err);
    }
    if (jwt != NULL && (a->tokens = srv_token_cache_new()) == NULL) {
        return sst__enomem(err);
    }
    if (keys != NULL) {
        if (!sst_is_string(keys) || sst_string_len(keys) == 0) {
            return sst__error(err, SST_EINVAL, "auth: \"api_keys\" must be a file name");
        }
        char *file = beside(base, sst_string_cstr(keys));
        a->keys = file != NULL ? srv_keys_load(file, err) : NULL;
        sst__free(file);
        if (a->keys == NULL) {
            return sst__code(err);
        }
    }
    return SST_OK;
}

sst_code sst_server_set_auth(sst_server *s, const sst_value *spec, const char *base,
                             sst_error *err) {
    SST__ERR_LOCAL(err);
    if (!sst_is_object(spec)) {
        return sst__error(err, SST_EINVAL,
                          "auth: must be an object: {\"path\": \"./auth.lua\"}, {\"jwt\": {...}} "
                          "or {\"api_keys\": \"./keys.json\"}");
    }
    if (s->token != NULL) {
        return sst__error(err, SST_EINVAL,
                          "auth: --auth-token-env (one shared token) and an \"auth\" "
                          "configuration do not go together: use one");
    }
    srv_auth *a = sst__calloc(1, sizeof *a);
    if (a == NULL) {
        return sst__enomem(err);
    }
    sst_code rc = configure(a, spec, base, err);
    if (rc != SST_OK) {
        srv_auth_free(a);
        return rc;
    }
    srv_auth_free(s->auth);
    s->auth = a;
    return SST_OK;
}

/* ---- one request's state ---------------------------------------------------------- */

void srv_auth_release(srv_request *r) {
    srv_auth_req *q = r->auth;
    if (q == NULL) {
        return;
    }
    sst_value_unref(q->user);
    sst_value_unref(q->filter);
    sst__free(q);
    r->auth = NULL;
}

/* Refuses the request with @p status and a message; returns false. */
static bool refuse(srv_auth_req *q, unsigned status, const char *fmt, ...) SST_PRINTF(3, 4);
static bool refuse(srv_auth_req *q, unsigned status, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(q->msg, sizeof q->msg, fmt, ap);
    va_end(ap);
    q->status = status;
    return false;
}

static void denied(srv_request *r, srv_response *res) {
    srv_error(res, r->auth->status, "%s", r->auth->msg);
}

static void out_of_memory(srv_request *r, srv_response *res) {
    SST_UNUSED(r);
    srv_error(res, 500, "out of memory checking the request's user");
}

/* The value a filter member asks equality with (v or {"$eq": v}), or NULL ($contains). */
static const sst_value *eq_value(const sst_value *want) {
    if (!sst_is_object(want)) {
        return want;
    }
    const sst_value *eq = sst_object_get(want, "$eq");
    return sst_object_len(want) == 1 && eq != NULL ? eq : NULL;
}

bool srv_auth_filter_matches(const sst_value *filter, const sst_value *metadata) {
    for (size_t i = 0; i < sst_object_len(filter); i++) {
        const sst_value *have =
            sst_object_get(metadata, sst_string_cstr(sst_object_key_at(filter, i)));
        const sst_value *want = sst_object_value_at(filter, i);
        const sst_value *eq = eq_value(want);
        const sst_value *in = sst_is_object(want) ? sst_object_get(want, "$contains") : NULL;
        bool ok = eq != NULL ? have != NULL && sst_value_equal(have, eq) : false;
        if (eq == NULL && in != NULL && sst_object_len(want) == 1 && sst_is_array(have)) {
            /* As LangGraph's servers: the member is a list holding the value, or every
             * value of a list (PostgreSQL's containment at the top level). */
            size_t n_in = sst_is_array(in) ? sst_array_len(in) : 1;
            ok = true;
            for (size_t j = 0; ok && j < n_in; j++) {
                const sst_value *v = sst_is_array(in) ? sst_array_get(in, j) : in;
                ok = false;
                for (size_t k = 0; !ok && k < sst_array_len(have); k++) {
                    ok = sst_value_equal(sst_array_get(have, k), v);
                }
            }
        }
        if (!ok) {
            return false;
        }
    }
    return true;
}

const char *srv_auth_owner(const srv_request *r) {
    const srv_auth_req *q = r->auth;
    if (q == NULL || q->admin) {
        return NULL;
    }
    if (q->lua) {
        const sst_value *o = eq_value(sst_object_get(q->filter, "owner"));
        return sst_is_string(o) ? sst_string_cstr(o) : NULL;
    }
    return q->identity;
}

const sst_value *srv_auth_user(const srv_request *r) {
    return r->auth != NULL ? r->auth->user : NULL;
}

/* ---- authentication ----------------------------------------------------------------- */

/* The user value (new) with identity and permissions checked; NULL after a refusal. */
static bool set_user(srv_auth *a, srv_auth_req *q, sst_value *user) {
    const sst_value *id = sst_object_get(user, "identity");
    const sst_value *perms = sst_object_get(user, "permissions");
    if (!sst_is_string(id) || sst_string_len(id) == 0) {
        sst_value_unref(user);
        return refuse(q, 500, "auth: the user has no identity string");
    }
    q->user = user;
    q->identity = sst_string_cstr(id);
    for (size_t i = 0; sst_is_array(perms) && i < sst_array_len(perms); i++) {
        const sst_value *p = sst_array_get(perms, i);
        q->admin = q->admin || (sst_is_string(p) && strcmp(sst_string_cstr(p), a->admin) == 0);
    }
    return true;
}

/* The permissions of JWT claims: a list of strings, or a space-separated string
 * (OAuth's "scope"). New. */
static sst_value *permissions_of(const sst_value *claim) {
    sst_error err = {0};
    sst_value *list = sst_array_empty();
    if (sst_is_array(claim)) {
        for (size_t i = 0; i < sst_array_len(claim); i++) {
            if (sst_is_string(sst_array_get(claim, i))) {
                list = sst__push_take(list, sst_value_ref(sst_array_get(claim, i)), &err);
            }
        }
    } else if (sst_is_string(claim)) {
        const char *p = sst_string_cstr(claim);
        while (*p != '\0') {
            size_t n = strcspn(p, " ");
            if (n > 0) {
                list = sst__push_take(list, sst_string_newn(p, n, &err), &err);
            }
            p += n + (p[n] == ' ');
        }
    }
    return list;
}

static bool authenticate_builtin(srv_auth *a, srv_request *r, srv_auth_req *q) {
    const char *h = srv_header(r, "Authorization");
    const char *key = srv_header(r, "x-api-key");
    const char *token = NULL;
    if (h != NULL && strncasecmp(h, "Bearer ", 7) == 0) {
        token = h + 7;
    }
    if (key == NULL && token == NULL) {
        return refuse(q, 401, "Missing authentication: send 'Authorization: Bearer <token>'%s",
                      a->keys != NULL ? " or 'x-api-key: <key>'" : "");
    }
    if (a->keys != NULL && (key != NULL || a->jwt == NULL || strchr(token, '.') == NULL)) {
        sst_value *user = srv_keys_find(a->keys, key != NULL ? key : token);
        if (user == NULL) {
            return refuse(q, 401, "Invalid API key");
        }
        return set_user(a, q, user);
    }
    if (a->jwt == NULL) {
        return refuse(q, 401, "Invalid API key");
    }
    /* A token verified before, whose exp has not passed, is the same user still. */
    int64_t now = (int64_t)time(NULL);
    sst_value *known = srv_token_cache_get(a->tokens, token, now);
    if (known != NULL) {
        return set_user(a, q, known);
    }
    sst_error err = {0};
    sst_value *claims = srv_jwt_verify(a->jwt, token, now, &err);
    if (claims == NULL) {
        return refuse(q, 401, "%s", err.msg);
    }
    const sst_value *exp = sst_object_get(claims, "exp");
    double exp_s = sst_is_number(exp) ? sst_number_value(exp) : NAN;
    sst_value *user =
        sst__set_take(sst_value_ref(claims), "identity",
                      sst_value_ref(sst_object_get(claims, srv_jwt_identity_claim(a->jwt))), &err);
    user = sst__set_take(user, "permissions",
                         permissions_of(sst_object_get(claims, srv_jwt_permissions_claim(a->jwt))),
                         &err);
    sst_value_unref(claims);
    if (user == NULL) {
        return refuse(q, 500, "out of memory reading the token");
    }
    srv_token_cache_put(a->tokens, token, user, exp_s, srv_jwt_leeway_s(a->jwt), now);
    return set_user(a, q, user);
}

/* ---- resources and actions ---------------------------------------------------------- */

typedef enum res_kind { R_NONE, R_THREADS, R_ASSISTANTS, R_CRONS, R_STORE, R_RUNS } res_kind;

typedef struct action {
    const char *method, *pattern;
    res_kind kind;
    const char *name; /* "threads.read" */
} action;

static const action k_actions[] = {
    {"POST", "/assistants", R_ASSISTANTS, "assistants.create"},
    {"POST", "/assistants/search", R_ASSISTANTS, "assistants.search"},
    {"POST", "/assistants/count", R_ASSISTANTS, "assistants.search"},
    {"PATCH", "/assistants/{assistant_id}", R_ASSISTANTS, "assistants.update"},
    {"DELETE", "/assistants/{assistant_id}", R_ASSISTANTS, "assistants.delete"},
    {"*", "/assistants/{assistant_id}", R_ASSISTANTS, "assistants.read"}, /* and below it */
    {"POST", "/threads", R_THREADS, "threads.create"},
    {"POST", "/threads/search", R_THREADS, "threads.search"},
    {"POST", "/threads/count", R_THREADS, "threads.search"},
    {"PATCH", "/threads/{thread_id}", R_THREADS, "threads.update"},
    {"DELETE", "/threads/{thread_id}", R_THREADS, "threads.delete"},
    {"POST", "/threads/{thread_id}/copy", R_THREADS, "threads.read"},
    {"POST", "/threads/{thread_id}/state", R_THREADS, "threads.update"},
    {"POST", "/threads/{thread_id}/runs/crons", R_CRONS, "crons.create"},
    {"POST", "/threads/{thread_id}/runs", R_THREADS, "threads.create_run"},
    {"POST", "/threads/{thread_id}/runs/wait", R_THREADS, "threads.create_run"},
    {"POST", "/threads/{thread_id}/runs/stream", R_THREADS, "threads.create_run"},
    {"DELETE", "/threads/{thread_id}/runs/{run_id}", R_THREADS, "threads.delete"},
    {"POST", "/threads/{thread_id}/runs/{run_id}/cancel", R_THREADS, "threads.update"},
    {"*", "/threads/{thread_id}", R_THREADS, "threads.read"}, /* and below it */
    {"POST", "/runs/crons", R_CRONS, "crons.create"},
    {"POST", "/runs/crons/search", R_CRONS, "crons.search"},
    {"POST", "/runs/crons/count", R_CRONS, "crons.search"},
    {"PATCH", "/runs/crons/{cron_id}", R_CRONS, "crons.update"},
    {"DELETE", "/runs/crons/{cron_id}", R_CRONS, "crons.delete"},
    {"POST", "/runs/cancel", R_RUNS, "threads.update"},
    {"POST", "/runs/batch", R_RUNS, "threads.create_run"},
    {"POST", "/runs", R_RUNS, "threads.create_run"},
    {"POST", "/runs/wait", R_RUNS, "threads.create_run"},
    {"POST", "/runs/stream", R_RUNS, "threads.create_run"},
    {"PUT", "/store/items", R_STORE, "store.put"},
    {"GET", "/store/items", R_STORE, "store.get"},
    {"DELETE", "/store/items", R_STORE, "store.delete"},
    {"POST", "/store/items/search", R_STORE, "store.search"},
    {"POST", "/store/namespaces", R_STORE, "store.list_namespaces"},
};

/* The action of a route: an exact (method, pattern), else a "*" entry whose pattern is a
 * prefix of the route's. */
static const action *action_of(const char *method, const char *pattern) {
    for (size_t i = 0; i < sizeof k_actions / sizeof k_actions[0]; i++) {
        const action *x = &k_actions[i];
        if (x->method[0] == '*') {
            size_t n = strlen(x->pattern);
            if (strncmp(pattern, x->pattern, n) == 0 && (pattern[n] == '\0' || pattern[n] == '/')) {
                return x;
            }
        } else if (strcmp(x->method, method) == 0 && strcmp(x->pattern, pattern) == 0) {
            return x;
        }
    }
    return NULL;
}

/* ---- ownership -------------------------------------------------------------------------- */

/* True when @p metadata (NULL: none) belongs to the user, or when the user is an admin. */
static bool owns(const srv_auth_req *q, const sst_value *metadata) {
    if (q->admin) {
        return true;
    }
    if (q->lua) {
        return q->filter == NULL || srv_auth_filter_matches(q->filter, metadata);
    }
    const sst_value *o = sst_object_get(metadata, "owner");
    return sst_is_string(o) && strcmp(sst_string_cstr(o), q->identity) == 0;
}

bool srv_auth_sees(const srv_request *r, const sst_value *metadata) {
    const srv_auth_req *q = r->auth;
    if (q == NULL || q->admin) {
        return true;
    }
    /* Shared resources (the graphs' own assistants) have no owner: everyone sees them
     * (with the built-in modes; a Lua handler's filter decides alone). */
    return (!q->lua && sst_object_get(metadata, "owner") == NULL) || owns(q, metadata);
}

typedef struct meta_probe {
    bool found;
    sst_value *metadata;
} meta_probe;

static bool got_meta(const sst_thread_info *t, void *ud) {
    meta_probe *p = ud;
    p->found = true;
    p->metadata = t->metadata.data != NULL || t->metadata.value != NULL
                      ? sst_payload_value(&t->metadata, NULL)
                      : NULL;
    return false;
}

/* The metadata of thread @p id (new; {} when it has none), *found false when there is no
 * such thread. NULL with *found true: a storage error. */
static sst_value *thread_metadata(sst_server *s, const char *id, bool *found) {
    meta_probe p = {0};
    sst_error err = {0};
    sst_code rc = sst_checkpointer_thread_get(s->cp, id, got_meta, &p, &err);
    *found = rc == SST_OK && p.found;
    if (rc == SST_ENOTFOUND) {
        return NULL;
    }
    if (*found && p.metadata == NULL) {
        p.metadata = sst_object_empty();
    }
    *found = *found || rc != SST_OK;
    return p.metadata;
}

/* A thread the user may not see answers as a thread that does not exist. */
static bool check_thread(sst_server *s, srv_auth_req *q, const char *id) {
    bool found = false;
    sst_value *m = thread_metadata(s, id, &found);
    bool ok = !found || (m != NULL && owns(q, m));
    sst_value_unref(m);
    return ok ? true : refuse(q, 404, "Thread with ID %.64s not found", id);
}

/* ---- changing the body ------------------------------------------------------------------ */

/* The body as an object (an absent one: {}); false when it is not one (the handler says). */
static bool body_object(srv_request *r) {
    if (r->json == NULL) {
        r->json = sst_object_empty();
    }
    return sst_is_object(r->json);
}

/* Sets body[@p key][@p member] = @p v (taken); the member object is made when absent. */
static void set_in(srv_request *r, const char *key, const char *member, sst_value *v) {
    sst_error err = {0};
    const sst_value *o = sst_object_get(r->json, key);
    sst_value *copy = sst_is_object(o) ? sst_value_ref(o) : sst_object_empty();
    copy = sst__set_take(copy, member, v, &err);
    r->json = sst__set_take(r->json, key, copy, &err);
}

static sst_value *identity_value(const srv_auth_req *q) {
    return sst_value_ref(sst_object_get(q->user, "identity"));
}

/* What the graph sees: LangGraph's BaseUser fields and the user's own. */
static sst_value *graph_user(const srv_auth_req *q) {
    sst_error err = {0};
    sst_value *u = sst_value_ref(q->user);
    if (sst_object_get(u, "display_name") == NULL) {
        u = sst__set_take(u, "display_name", identity_value(q), &err);
    }
    return sst__set_take(u, "is_authenticated", sst_bool(true), &err);
}

/* config.configurable.langgraph_auth_user of the run body @p body (taken; new). */
static sst_value *with_user(const srv_auth_req *q, sst_value *body) {
    sst_error err = {0};
    if (!sst_is_object(body)) {
        return body;
    }
    const sst_value *config = sst_object_get(body, "config");
    sst_value *c = sst_is_object(config) ? sst_value_ref(config) : sst_object_empty();
    const sst_value *conf = sst_object_get(c, "configurable");
    sst_value *cc = sst_is_object(conf) ? sst_value_ref(conf) : sst_object_empty();
    cc = sst__set_take(cc, "langgraph_auth_user", graph_user(q), &err);
    c = sst__set_take(c, "configurable", cc, &err);
    return sst__set_take(body, "config", c, &err);
}

/* Stamps metadata.owner on a body that creates something (the built-in modes: a Lua
 * handler stamps what it wants itself). */
static void stamp_owner(srv_request *r, srv_auth_req *q) {
    if (q->lua) {
        return;
    }
    const sst_value *meta = sst_object_get(r->json, "metadata");
    if (meta == NULL || sst_is_null(meta) || sst_is_object(meta)) {
        set_in(r, "metadata", "owner", identity_value(q));
    }
}

/* A non-admin's update may not give a resource away: its owner stays. */
static void keep_owner(srv_request *r, srv_auth_req *q) {
    const sst_value *meta = sst_object_get(r->json, "metadata");
    if (!q->admin && !q->lua && sst_is_object(meta) && sst_object_get(meta, "owner") != NULL) {
        set_in(r, "metadata", "owner", identity_value(q));
    }
}

sst_value *srv_auth_stamp(const srv_request *r, sst_value *metadata) {
    if (r == NULL || r->auth == NULL || metadata == NULL) {
        return metadata;
    }
    sst_error err = {0};
    if (!r->auth->lua) {
        return sst__set_take(metadata, "owner", identity_value(r->auth), &err);
    }
    /* A Lua handler's filter: the thread gets its equality members, so the filter that made
     * it can see it. */
    const sst_value *f = r->auth->filter;
    for (size_t i = 0; i < sst_object_len(f) && metadata != NULL; i++) {
        const sst_value *eq = eq_value(sst_object_value_at(f, i));
        if (eq != NULL) {
            metadata = sst__set_take(metadata, sst_string_cstr(sst_object_key_at(f, i)),
                                     sst_value_ref(eq), &err);
        }
    }
    return metadata;
}

bool srv_auth_filters_after(const srv_request *r) {
    const srv_auth_req *q = r->auth;
    for (size_t i = 0; q != NULL && q->lua && i < sst_object_len(q->filter); i++) {
        if (eq_value(sst_object_value_at(q->filter, i)) == NULL) {
            return true;
        }
    }
    return false;
}

bool srv_auth_search_keeps(const srv_request *r, const sst_value *metadata) {
    return !srv_auth_filters_after(r) || srv_auth_filter_matches(r->auth->filter, metadata);
}

/* A search of a Lua-filtered user: the filter's owner goes to the saver (srv_auth_owner),
 * its other equality members into the body's metadata filter; its $contains members are
 * applied by the search to each resource's metadata (srv_auth_search_keeps). Another
 * operator is refused, naming it. */
static bool filter_search(srv_request *r, srv_auth_req *q, bool owner_to_saver) {
    const sst_value *f = q->filter;
    for (size_t i = 0; i < sst_object_len(f); i++) {
        const char *k = sst_string_cstr(sst_object_key_at(f, i));
        const sst_value *want = sst_object_value_at(f, i);
        const sst_value *eq = eq_value(want);
        if (eq == NULL && sst_object_len(want) == 1 && sst_object_get(want, "$contains") != NULL) {
            continue;
        }
        if (eq == NULL) {
            return refuse(q, 500,
                          "auth: the filter on '%s' is neither a value, {$eq = v} nor "
                          "{$contains = v} (docs/auth.md)",
                          k);
        }
        if (!(owner_to_saver && strcmp(k, "owner") == 0)) {
            set_in(r, "metadata", k, sst_value_ref(eq));
        }
    }
    return true;
}

/* ---- per resource ------------------------------------------------------------------------- */

/* A run body's assistant must be one the user sees (another user's answers 404). */
static bool check_run_assistant(srv_request *r, srv_auth_req *q, const sst_value *body) {
    const sst_value *id = sst_object_get(body, "assistant_id");
    if (q->admin || q->lua || !sst_is_string(id)) {
        return true;
    }
    sst_value *a = srv_assistant_lookup(r->s, sst_string_cstr(id), NULL);
    bool ok = a == NULL || srv_auth_sees(r, sst_object_get(a, "metadata"));
    sst_value_unref(a);
    return ok ? true : refuse(q, 404, "Assistant %.64s not found", sst_string_cstr(id));
}

static bool check_assistant(srv_request *r, srv_auth_req *q, const action *act) {
    if (strcmp(act->name, "assistants.create") == 0) {
        if (!body_object(r)) {
            return true;
        }
        const sst_value *id = sst_object_get(r->json, "assistant_id");
        if (sst_is_string(id)) {
            sst_value *a = srv_assistant_lookup(r->s, sst_string_cstr(id), NULL);
            bool theirs = a != NULL && !srv_auth_sees(r, sst_object_get(a, "metadata"));
            sst_value_unref(a);
            if (theirs) {
                return refuse(q, 409, "Assistant %.64s already exists", sst_string_cstr(id));
            }
        }
        stamp_owner(r, q);
        return true;
    }
    if (r->n_param == 0) {
        return true; /* search and count: srv_auth_sees in assistants.c */
    }
    sst_value *a = srv_assistant_lookup(r->s, r->param[0], NULL);
    if (a == NULL) {
        return true; /* the handler answers 404 */
    }
    const sst_value *meta = sst_object_get(a, "metadata");
    bool sees = srv_auth_sees(r, meta), shared = sst_object_get(meta, "owner") == NULL;
    sst_value_unref(a);
    if (!sees) {
        return refuse(q, 404, "Assistant %.64s not found", r->param[0]);
    }
    bool writes = strcmp(act->name, "assistants.read") != 0;
    if (writes && shared && !q->admin) {
        return refuse(q, 403,
                      "Assistant %.64s is shared: only a user with the '%s' permission "
                      "may change it",
                      r->param[0], "admin");
    }
    if (strcmp(act->name, "assistants.update") == 0 && body_object(r)) {
        keep_owner(r, q);
    }
    return true;
}

static bool check_cron(srv_request *r, srv_auth_req *q, const action *act) {
    if (strcmp(act->name, "crons.create") == 0) {
        if (r->n_param > 0 && !check_thread(r->s, q, r->param[0])) {
            return false;
        }
        if (body_object(r)) {
            if (!check_run_assistant(r, q, r->json)) {
                return false;
            }
            stamp_owner(r, q);
            r->json = with_user(q, r->json);
        }
        return true;
    }
    if (strcmp(act->name, "crons.search") == 0) {
        if (q->lua) {
            return !body_object(r) || filter_search(r, q, false);
        }
        if (!q->admin && body_object(r)) {
            set_in(r, "metadata", "owner", identity_value(q));
        }
        return true;
    }
    bool missing = false;
    sst_value *c = srv_hidden_get(r->s, "crons", r->param[0], &missing, NULL);
    bool ok = c == NULL || owns(q, sst_object_get(c, "metadata"));
    sst_value_unref(c);
    if (!ok) {
        return refuse(q, 404, "Cron with ID %.64s not found", r->param[0]);
    }
    if (strcmp(act->name, "crons.update") == 0 && body_object(r)) {
        keep_owner(r, q);
    }
    return true;
}

/* The first label of the namespace the store request names, or NULL (none given). */
static bool check_store(srv_request *r, srv_auth_req *q, const action *act) {
    if (q->admin || q->lua) {
        return true;
    }
    const char *what = "namespace";
    if (strcmp(act->name, "store.get") == 0) {
        const char *ns = srv_query(r, "namespace");
        size_t n = ns != NULL ? strcspn(ns, ".") : 0;
        if (ns != NULL && (n != strlen(q->identity) || strncmp(ns, q->identity, n) != 0)) {
            return refuse(q, 403, "store: a namespace must begin with your identity ('%.100s')",
                          q->identity);
        }
        return true;
    }
    if (!body_object(r)) {
        return true;
    }
    bool listing =
        strcmp(act->name, "store.search") == 0 || strcmp(act->name, "store.list_namespaces") == 0;
    if (listing) {
        what = strcmp(act->name, "store.search") == 0 ? "namespace_prefix" : "prefix";
    }
    const sst_value *ns = sst_object_get(r->json, what);
    if (listing &&
        (ns == NULL || sst_is_null(ns) || (sst_is_array(ns) && sst_array_len(ns) == 0))) {
        sst_error err = {0};
        r->json = sst__set_take(r->json, what,
                                sst__push_take(sst_array_empty(), identity_value(q), &err), &err);
        return true;
    }
    if (!sst_is_array(ns) || sst_array_len(ns) == 0) {
        return true; /* the handler names the problem */
    }
    const sst_value *first = sst_array_get(ns, 0);
    if (!sst_is_string(first) || strcmp(sst_string_cstr(first), q->identity) != 0) {
        return refuse(q, 403, "store: a namespace must begin with your identity ('%.100s')",
                      q->identity);
    }
    return true;
}

/* POST /runs/cancel: a non-admin cancels only runs of their own threads. */
static bool check_cancel(srv_request *r, srv_auth_req *q) {
    if (q->admin || (q->lua && q->filter == NULL) || !body_object(r)) {
        return true;
    }
    const sst_value *tid = sst_object_get(r->json, "thread_id");
    const sst_value *ids = sst_object_get(r->json, "run_ids");
    if (!sst_is_string(tid) && !sst_is_array(ids)) {
        return refuse(q, 403, "cancelling runs by status alone needs the '%s' permission", "admin");
    }
    if (sst_is_string(tid) && !check_thread(r->s, q, sst_string_cstr(tid))) {
        return false;
    }
    for (size_t i = 0; sst_is_array(ids) && i < sst_array_len(ids); i++) {
        const sst_value *id = sst_array_get(ids, i);
        run_copy c = {0};
        if (!sst_is_string(id) ||
            sst_queue_get(r->s->queue, sst_string_cstr(id), srv_run_copy_fn, &c, NULL) != SST_OK) {
            continue; /* the handler skips runs it cannot find */
        }
        bool ok = check_thread(r->s, q, c.thread_id);
        srv_run_copy_free(&c);
        if (!ok) {
            return refuse(q, 404, "Run %.64s not found", sst_string_cstr(id));
        }
    }
    return true;
}

static bool check_thread_route(srv_request *r, srv_auth_req *q, const action *act) {
    const char *name = act->name;
    if (r->n_param > 0 && !check_thread(r->s, q, r->param[0])) {
        return false;
    }
    if (strcmp(name, "threads.search") == 0) {
        /* srv_auth_owner: the saver's owner filter */
        return !q->lua || !body_object(r) || filter_search(r, q, true);
    }
    if (strcmp(name, "threads.create") == 0 && r->n_param == 0) {
        if (!body_object(r)) {
            return true;
        }
        const sst_value *id = sst_object_get(r->json, "thread_id");
        if (sst_is_string(id) && !check_thread(r->s, q, sst_string_cstr(id))) {
            return refuse(q, 409, "Thread with ID %.64s already exists", sst_string_cstr(id));
        }
        stamp_owner(r, q);
        return true;
    }
    if (strcmp(name, "threads.update") == 0 && r->n_param == 1 && body_object(r)) {
        keep_owner(r, q);
    }
    if (strcmp(name, "threads.create_run") == 0 && body_object(r)) {
        if (!check_run_assistant(r, q, r->json)) {
            return false;
        }
        r->json = with_user(q, r->json);
    }
    return true;
}

static bool check_runs(srv_request *r, srv_auth_req *q, const action *act) {
    if (strcmp(act->name, "threads.update") == 0) {
        return check_cancel(r, q);
    }
    if (r->json != NULL && sst_is_array(r->json)) { /* /runs/batch */
        sst_error err = {0};
        sst_value *list = sst_array_empty();
        for (size_t i = 0; i < sst_array_len(r->json); i++) {
            list =
                sst__push_take(list, with_user(q, sst_value_ref(sst_array_get(r->json, i))), &err);
        }
        sst_value_unref(r->json);
        r->json = list;
        return true;
    }
    if (body_object(r)) {
        if (!check_run_assistant(r, q, r->json)) {
            return false;
        }
        r->json = with_user(q, r->json);
    }
    return true;
}

/* ---- a Lua auth file --------------------------------------------------------------------------
 */

static bool authenticate_lua(srv_auth *a, srv_request *r, srv_auth_req *q) {
    q->lua = true;
    sst_value *user = srv_lua_auth_authenticate(a->lua, r, &q->status, q->msg, sizeof q->msg);
    if (user == NULL) {
        return false;
    }
    if (!set_user(a, q, user)) {
        return false;
    }
    q->admin = false; /* the handlers decide what each user sees */
    return true;
}

/*
 * The value a handler gets: the body (an object; else {}), with the path's ids ("thread_id",
 * "assistant_id", "cron_id", "run_id", named by @p pattern) and, for store.get, the query's
 * namespace (a list) and key. What the handler leaves becomes the body again (without the
 * members added here) unless the request has none (GET).
 */
static bool authorize_lua(srv_auth *a, srv_request *r, srv_auth_req *q, const char *pattern,
                          const char *name) {
    sst_error err = {0};
    bool has_body = strcmp(r->method, "GET") != 0 && (r->json == NULL || sst_is_object(r->json));
    sst_value *value = sst_is_object(r->json) ? sst_value_ref(r->json) : sst_object_empty();
    const char *added[6];
    size_t n_added = 0;
    size_t k = 0;
    for (const char *p = strchr(pattern, '{'); p != NULL && k < r->n_param;
         p = strchr(p + 1, '{')) {
        char key[32];
        size_t len = strcspn(p + 1, "}");
        snprintf(key, sizeof key, "%.*s", (int)(len < sizeof key ? len : sizeof key - 1), p + 1);
        if (sst_object_get(value, key) == NULL && n_added < 4) {
            value = sst__set_take(value, key, sst_string_new(r->param[k], &err), &err);
            added[n_added++] = strcmp(key, "thread_id") == 0      ? "thread_id"
                               : strcmp(key, "assistant_id") == 0 ? "assistant_id"
                               : strcmp(key, "cron_id") == 0      ? "cron_id"
                                                                  : "run_id";
        }
        k++;
    }
    if (strcmp(name, "store.get") == 0) {
        const char *ns = srv_query(r, "namespace"), *key = srv_query(r, "key");
        sst_value *list = sst_array_empty();
        while (ns != NULL && *ns != '\0' && list != NULL) {
            size_t len = strcspn(ns, ".");
            list = sst__push_take(list, sst_string_newn(ns, len, &err), &err);
            ns += len + (ns[len] == '.');
        }
        value = sst__set_take(value, "namespace", list, &err);
        value =
            sst__set_take(value, "key", key != NULL ? sst_string_new(key, &err) : sst_null(), &err);
    }
    if (value == NULL) {
        return refuse(q, 500, "out of memory calling the auth handler");
    }
    char resource[32];
    const char *dot = strchr(name, '.');
    snprintf(resource, sizeof resource, "%.*s", (int)(dot - name), name);
    if (srv_lua_auth_authorize(a->lua, q->user, resource, dot + 1, &value, &q->filter, &q->status,
                               q->msg, sizeof q->msg) != SRV_LUA_ALLOW) {
        sst_value_unref(value);
        return false;
    }
    if (has_body && sst_is_object(value)) {
        for (size_t i = 0; i < n_added && value != NULL; i++) {
            value = sst_object_remove_take(value, added[i], &err);
        }
        sst_value_unref(r->json);
        r->json = value;
    } else {
        sst_value_unref(value);
    }
    return true;
}

/* ---- the gate ------------------------------------------------------------------------------ */

srv_handler srv_auth_gate(srv_request *r, const char *pattern, srv_handler h, bool open) {
    srv_auth *a = r->s->auth;
    srv_auth_release(r);
    if (a == NULL || open) {
        return h;
    }
    srv_auth_req *q = sst__calloc(1, sizeof *q);
    if (q == NULL) {
        return out_of_memory;
    }
    r->auth = q;
    bool ok = a->lua != NULL ? authenticate_lua(a, r, q) : authenticate_builtin(a, r, q);
    if (!ok) {
        return denied;
    }
    const action *act = action_of(r->method, pattern);
    if (act == NULL) {
        return h; /* /info and the like: any user */
    }
    if (a->lua != NULL && !authorize_lua(a, r, q, pattern, act->name)) {
        return denied;
    }
    switch (act->kind) {
        case R_THREADS:
            ok = check_thread_route(r, q, act);
            break;
        case R_ASSISTANTS:
            ok = check_assistant(r, q, act);
            break;
        case R_CRONS:
            ok = check_cron(r, q, act);
            break;
        case R_STORE:
            ok = check_store(r, q, act);
            break;
        case R_RUNS:
            ok = check_runs(r, q, act);
            break;
        case R_NONE:
            break;
    }
    return ok ? h : denied;
}
