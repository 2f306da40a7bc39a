/* SPDX-License-Identifier: MIT */
/*
 * superstep.StateGraph: the builder with LangGraph's names. Each graph gets
 * a number in creation order; its Lua functions live in the registry under
 * superstep.graphs[number] so that a worker state, which ran the same
 * script, finds the same function for the same node.
 */
#include <stdio.h>

#include "lua_int.h"

/*
 * A node's retry_on: a Lua function (graphs[graph].retry_on[node] in each
 * state) or a list of error codes. Called on the thread running the engine.
 */
typedef struct retry_cb {
    sst__lua_rt *rt;
    int graph;
    char *node;      /* owned */
    sst_code *codes; /* owned: the codes retried, or NULL: call the function */
    size_t n_codes;
} retry_cb;

typedef struct lgraph {
    sst_graph *g;
    int number;
    sst__lua_cb **cbs; /* owned; must outlive every compiled graph (apps hold the graph) */
    size_t n_cbs, cap_cbs;
    retry_cb **retry; /* owned, as cbs */
    size_t n_retry;
    int routers;
} lgraph;

static lgraph *check_graph(lua_State *L, int idx) {
    lgraph *lg = luaL_checkudata(L, idx, SST_LUA_GRAPH);
    if (lg->g == NULL) {
        sst__lua_raisef(L, SST_EINVAL, "StateGraph: the graph is closed");
    }
    return lg;
}

static int graph_gc(lua_State *L) {
    lgraph *lg = luaL_checkudata(L, 1, SST_LUA_GRAPH);
    sst_graph_free(lg->g);
    lg->g = NULL;
    for (size_t i = 0; i < lg->n_cbs; i++) {
        sst__free(lg->cbs[i]->key);
        sst__free(lg->cbs[i]);
    }
    sst__free(lg->cbs);
    lg->cbs = NULL;
    lg->n_cbs = 0;
    for (size_t i = 0; i < lg->n_retry; i++) {
        sst__free(lg->retry[i]->node);
        sst__free(lg->retry[i]->codes);
        sst__free(lg->retry[i]);
    }
    sst__free(lg->retry);
    lg->retry = NULL;
    lg->n_retry = 0;
    return 0;
}

/*
 * The callable at @p idx as a function: a function as is, a table or
 * userdata with __call wrapped in a closure (LangGraph accepts any callable,
 * e.g. an object with __call__). Replaces the value at @p idx; raises for
 * anything else, naming @p what.
 */
static int call_upvalue(lua_State *L) {
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
    return lua_gettop(L);
}

static void check_callable(lua_State *L, int idx, const char *what) {
    idx = lua_absindex(L, idx);
    if (lua_type(L, idx) == LUA_TFUNCTION) {
        return;
    }
    if ((lua_type(L, idx) == LUA_TTABLE || lua_type(L, idx) == LUA_TUSERDATA) &&
        luaL_getmetafield(L, idx, "__call") != LUA_TNIL) {
        lua_pop(L, 1);
        lua_pushvalue(L, idx);
        lua_pushcclosure(L, call_upvalue, 1);
        lua_replace(L, idx);
        return;
    }
    sst__lua_raisef(L, SST_EINVAL, "%s: expected a function or a callable table, got %s", what,
                    luaL_typename(L, idx));
}

/* A new callback for graphs[number][kind][key]; the function is stored by store_function. */
static sst__lua_cb *add_callback(lua_State *L, lgraph *lg, sst__cb_kind kind, const char *key) {
    if (lg->n_cbs == lg->cap_cbs) {
        size_t cap = lg->cap_cbs ? lg->cap_cbs * 2 : 8;
        sst__lua_cb **n = sst__realloc(lg->cbs, cap * sizeof *n);
        if (n == NULL) {
            sst__lua_raise_enomem(L);
        }
        lg->cbs = n;
        lg->cap_cbs = cap;
    }
    sst__lua_cb *cb = sst__calloc(1, sizeof *cb);
    if (cb == NULL || (cb->key = sst__strndup(key, strlen(key))) == NULL) {
        sst__free(cb);
        sst__lua_raise_enomem(L);
    }
    cb->rt = sst__lua_runtime(L);
    cb->graph = lg->number;
    cb->kind = kind;
    lg->cbs[lg->n_cbs++] = cb;
    return cb;
}

/* Stores the function at @p fn_idx for @p cb, once the graph accepted it. */
static void store_function(lua_State *L, const sst__lua_cb *cb, int fn_idx) {
    static const char *const tables[] = {"nodes", "routers", "reducers"};
    fn_idx = lua_absindex(L, fn_idx);
    lua_getfield(L, LUA_REGISTRYINDEX, SST_LUA_GRAPHS);
    lua_rawgeti(L, -1, cb->graph);
    lua_getfield(L, -1, tables[cb->kind]);
    lua_pushvalue(L, fn_idx);
    lua_setfield(L, -2, cb->key);
    lua_pop(L, 3);
}

static void check_ok(lua_State *L, sst_code rc, const sst_error *err) {
    if (rc != SST_OK) {
        sst__lua_raise(L, err);
    }
}

/* A reducer spec: a built-in (light userdata) or a Lua function. */
static const sst_reducer *reducer_of(lua_State *L, lgraph *lg, int idx, const char *field,
                                     sst_reducer **owned, sst__lua_cb **cbp) {
    *owned = NULL;
    *cbp = NULL;
    if (lua_isnil(L, idx)) {
        return sst_reducer_replace();
    }
    if (lua_type(L, idx) == LUA_TFUNCTION) {
        sst__lua_cb *cb = add_callback(L, lg, SST__CB_REDUCER, field);
        *cbp = cb;
        sst_error err = {0};
        *owned = sst_reducer_new("lua", sst__lua_reducer, cb, &err);
        if (*owned == NULL) {
            sst__lua_raise(L, &err);
        }
        return *owned;
    }
    if (lua_type(L, idx) == LUA_TLIGHTUSERDATA) {
        const sst_reducer *r = lua_touserdata(L, idx);
        /* Only a pointer from superstep.reducers (a light userdata could be anything). */
        for (size_t i = 0; i < SST__LUA_REDUCERS; i++) {
            if (sst_reducer_builtin(sst__lua_reducer_names[i]) == r) {
                return r;
            }
        }
    }
    sst__lua_raisef(
        L, SST_EINVAL,
        "StateGraph: field '%s': expected a reducer (superstep.reducers.*) or a function, "
        "got %s",
        field, luaL_typename(L, idx));
    return NULL;
}

static void add_field(lua_State *L, lgraph *lg, const char *field, int spec) {
    int reducer_idx = spec, default_idx = 0;
    if (lua_type(L, spec) == LUA_TTABLE) {
        lua_getfield(L, spec, "reducer");
        reducer_idx = lua_gettop(L);
        lua_getfield(L, spec, "default");
        default_idx = lua_isnil(L, -1) ? 0 : lua_gettop(L);
    }
    sst_reducer *owned;
    sst__lua_cb *cb;
    const sst_reducer *r = reducer_of(L, lg, reducer_idx, field, &owned, &cb);
    sst_error err = {0};
    sst_value *def = NULL;
    if (default_idx != 0) {
        char what[160];
        snprintf(what, sizeof what, "default of field '%s'", field);
        def = sst__lua_to_value(L, default_idx, what, &err);
        if (def == NULL) {
            sst_reducer_free(owned);
            sst__lua_raise(L, &err);
        }
    }
    sst_code rc = sst_graph_add_field(lg->g, field, r, def, &err);
    sst_reducer_free(owned);
    check_ok(L, rc, &err);
    if (cb != NULL) {
        store_function(L, cb, reducer_idx);
    }
    if (spec != reducer_idx) {
        lua_pop(L, 2);
    }
}

/*
 * StateGraph options: input_schema / output_schema, lists of field names;
 * closed = true (undeclared keys of updates are dropped); context_schema
 * (LangGraph's runtime context) is accepted and kept, with the whole options
 * table, as graphs[number].options for compile to read.
 */
static void graph_schemas(lua_State *L, lgraph *lg, int opts) {
    static const char *const known[] = {"input_schema", "output_schema", "context_schema", "closed",
                                        NULL};
    sst__lua_check_options(L, opts, known, "StateGraph");
    lua_getfield(L, LUA_REGISTRYINDEX, SST_LUA_GRAPHS);
    lua_rawgeti(L, -1, lg->number);
    lua_pushvalue(L, opts);
    lua_setfield(L, -2, "options");
    lua_pop(L, 2);
    int closed = lua_getfield(L, opts, "closed");
    if (closed != LUA_TNIL && closed != LUA_TBOOLEAN) {
        sst__lua_raisef(L, SST_EINVAL, "StateGraph: closed: expected a boolean, got %s",
                        luaL_typename(L, -1));
    }
    if (lua_toboolean(L, -1)) {
        sst_error err = {0};
        check_ok(L, sst_schema_set_closed(sst_graph_schema(lg->g), true, &err), &err);
    }
    lua_pop(L, 1);
    for (int out = 0; out < 2; out++) {
        const char *key = known[out];
        int t = lua_getfield(L, opts, key);
        if (t != LUA_TNIL) {
            if (t != LUA_TTABLE) {
                sst__lua_raisef(L, SST_EINVAL,
                                "StateGraph: %s: expected a list of field names, "
                                "got %s",
                                key, luaL_typename(L, -1));
            }
            size_t n;
            const char **names = sst__lua_string_list(L, -1, &n, key);
            sst_error err = {0};
            sst_code rc = out ? sst_graph_set_output_fields(lg->g, names, n, &err)
                              : sst_graph_set_input_fields(lg->g, names, n, &err);
            check_ok(L, rc, &err);
            lua_pop(L, 1);
        }
        lua_pop(L, 1);
    }
}

/* superstep.StateGraph(schema [, {input_schema = {...}, output_schema = {...}}]) */
static int state_graph(lua_State *L) {
    if (!lua_isnoneornil(L, 1)) {
        luaL_checktype(L, 1, LUA_TTABLE);
    }
    if (!lua_isnoneornil(L, 2)) {
        luaL_checktype(L, 2, LUA_TTABLE);
    }
    lua_settop(L, 2);
    lgraph *lg = lua_newuserdatauv(L, sizeof *lg, 0);
    memset(lg, 0, sizeof *lg);
    luaL_setmetatable(L, SST_LUA_GRAPH);
    int self = lua_gettop(L);
    sst_error err = {0};
    if ((lg->g = sst_graph_new(&err)) == NULL) {
        return sst__lua_raise(L, &err);
    }
    lua_getfield(L, LUA_REGISTRYINDEX, SST_LUA_GRAPHS);
    lg->number = (int)lua_rawlen(L, -1) + 1;
    lua_createtable(L, 0, 4);
    lua_newtable(L);
    lua_setfield(L, -2, "nodes");
    lua_newtable(L);
    lua_setfield(L, -2, "routers");
    lua_newtable(L);
    lua_setfield(L, -2, "reducers");
    lua_newtable(L);
    lua_setfield(L, -2, "retry_on");
    lua_rawseti(L, -2, lg->number);
    lua_pop(L, 1);
    if (lua_istable(L, 1)) {
        /* Fields in sorted order, so every state has the same key order. */
        lua_newtable(L);
        int names = lua_gettop(L);
        lua_Integer n = 0;
        lua_pushnil(L);
        while (lua_next(L, 1) != 0) {
            lua_pop(L, 1);
            if (lua_type(L, -1) != LUA_TSTRING) {
                return sst__lua_raisef(L, SST_EINVAL,
                                       "StateGraph: schema keys must be field names (strings)");
            }
            lua_pushvalue(L, -1);
            lua_rawseti(L, names, ++n);
        }
        lua_getglobal(L, "table");
        lua_getfield(L, -1, "sort");
        lua_pushvalue(L, names);
        lua_call(L, 1, 0);
        lua_pop(L, 1);
        for (lua_Integer i = 1; i <= n; i++) {
            lua_rawgeti(L, names, i);
            const char *field = lua_tostring(L, -1);
            lua_getfield(L, 1, field);
            add_field(L, lg, field, lua_gettop(L));
            lua_pop(L, 2);
        }
        lua_settop(L, self);
    }
    if (lua_istable(L, 2)) {
        graph_schemas(L, lg, 2);
        lua_settop(L, self);
    }
    return 1;
}

static double opt_number(lua_State *L, int t, const char *k, double def) {
    lua_getfield(L, t, k);
    if (!lua_isnil(L, -1) && lua_type(L, -1) != LUA_TNUMBER) {
        sst__lua_raisef(L, SST_EINVAL, "retry.%s: expected a number, got %s", k,
                        luaL_typename(L, -1));
    }
    double d = lua_isnil(L, -1) ? def : lua_tonumber(L, -1);
    lua_pop(L, 1);
    return d;
}

/* The codes named by the list at @p idx ("SST_ETASK", ...), in a scratch userdata pushed. */
static sst_code *code_list(lua_State *L, int idx, const char *node, size_t *n) {
    const char **names = sst__lua_string_list(L, idx, n, "retry_on");
    sst_code *codes = lua_newuserdatauv(L, (*n > 0 ? *n : 1) * sizeof *codes, 0);
    for (size_t i = 0; i < *n; i++) {
        int c = 0;
        while (c < SST_CODE_COUNT && strcmp(sst_code_name((sst_code)c), names[i]) != 0) {
            c++;
        }
        if (c == SST_CODE_COUNT) {
            sst__lua_raisef(L, SST_EINVAL, "add_node '%s': retry_on: unknown error kind '%s'", node,
                            names[i]);
        }
        codes[i] = (sst_code)c;
    }
    lua_remove(L, -2);
    return codes;
}

/*
 * Calls the node's Lua retry_on with the error object {code, message, node}:
 * true retries. An error in retry_on, or a missing function, does not retry.
 */
static bool lua_retry_on(const sst_error *e, const char *vertex, void *ud) {
    const retry_cb *rc = ud;
    for (size_t i = 0; rc->codes != NULL && i < rc->n_codes; i++) {
        if (rc->codes[i] == e->code) {
            return true;
        }
    }
    if (rc->codes != NULL) {
        return false;
    }
    sst_error err = {0};
    lua_State *L = sst__lua_state_for_thread(rc->rt, &err);
    if (L == NULL) {
        return false;
    }
    bool armed = sst__lua_arm(L, false);
    int base = lua_gettop(L);
    lua_pushcfunction(L, sst__lua_traceback);
    lua_getfield(L, LUA_REGISTRYINDEX, SST_LUA_GRAPHS);
    bool found = lua_rawgeti(L, -1, rc->graph) == LUA_TTABLE &&
                 lua_getfield(L, -1, "retry_on") == LUA_TTABLE &&
                 lua_getfield(L, -1, rc->node) == LUA_TFUNCTION;
    bool out = false;
    if (found) {
        lua_replace(L, base + 2);
        lua_settop(L, base + 2);
        /* The message without the traceback the node's handler added. */
        const char *tb = strstr(e->msg, "\nstack traceback:");
        lua_pushlstring(L, e->msg, tb != NULL ? (size_t)(tb - e->msg) : strlen(e->msg));
        sst__lua_push_error(L, e->code, lua_tostring(L, -1), vertex);
        lua_remove(L, -2);
        bool over_limit;
        out = sst__lua_pcall(L, 1, 1, base + 1, &over_limit) == LUA_OK && lua_toboolean(L, -1);
    }
    lua_settop(L, base);
    sst__lua_arm(L, armed);
    return out;
}

/* Records a retry_on callback for node @p name of @p lg. */
static retry_cb *add_retry_cb(lua_State *L, lgraph *lg, const char *name, const sst_code *codes,
                              size_t n_codes) {
    retry_cb **list = sst__realloc(lg->retry, (lg->n_retry + 1) * sizeof *list);
    if (list == NULL) {
        sst__lua_raise_enomem(L);
    }
    lg->retry = list;
    retry_cb *rc = sst__calloc(1, sizeof *rc);
    if (rc == NULL || (rc->node = sst__strndup(name, strlen(name))) == NULL ||
        (codes != NULL &&
         (rc->codes = sst__malloc((n_codes ? n_codes : 1) * sizeof *codes)) == NULL)) {
        if (rc != NULL) {
            sst__free(rc->node);
        }
        sst__free(rc);
        sst__lua_raise_enomem(L);
    }
    if (codes != NULL) {
        memcpy(rc->codes, codes, n_codes * sizeof *codes);
    }
    rc->n_codes = n_codes;
    rc->rt = sst__lua_runtime(L);
    rc->graph = lg->number;
    lg->retry[lg->n_retry++] = rc;
    return rc;
}

/*
 * The retry option at @p idx: true (the default policy), false/nil (none),
 * or a table of fields over the default policy, with retry_on a function or
 * a list of error kinds. A retry_on function is left on the stack top
 * (*fn_pushed) for the caller to store once the node is accepted.
 */
static void read_retry(lua_State *L, lgraph *lg, int idx, const char *name, sst_retry_policy *p,
                       bool *fn_pushed) {
    static const char *const known[] = {"max_attempts",
                                        "initial_interval",
                                        "backoff_factor",
                                        "max_interval",
                                        "jitter",
                                        "retry_on",
                                        NULL};
    *fn_pushed = false;
    if (lua_isnil(L, idx) || (lua_type(L, idx) == LUA_TBOOLEAN && !lua_toboolean(L, idx))) {
        return;
    }
    sst_retry_policy_init(p);
    if (lua_type(L, idx) == LUA_TBOOLEAN) {
        return;
    }
    if (lua_type(L, idx) != LUA_TTABLE) {
        sst__lua_raisef(L, SST_EINVAL, "add_node '%s': retry: expected true or a table, got %s",
                        name, luaL_typename(L, idx));
    }
    sst__lua_check_options(L, idx, known, "add_node: retry");
    double attempts = opt_number(L, idx, "max_attempts", p->max_attempts);
    if (!(attempts >= 1 && attempts <= 1e6)) {
        sst__lua_raisef(L, SST_EINVAL, "add_node '%s': retry.max_attempts must be at least 1",
                        name);
    }
    p->max_attempts = (unsigned)attempts;
    p->initial_interval_s = opt_number(L, idx, "initial_interval", p->initial_interval_s);
    p->backoff_factor = opt_number(L, idx, "backoff_factor", p->backoff_factor);
    p->max_interval_s = opt_number(L, idx, "max_interval", p->max_interval_s);
    if (lua_getfield(L, idx, "jitter") != LUA_TNIL) {
        p->jitter = lua_toboolean(L, -1);
    }
    lua_pop(L, 1);
    int t = lua_getfield(L, idx, "retry_on");
    if (t == LUA_TNIL) {
        lua_pop(L, 1);
        return;
    }
    if (t == LUA_TTABLE && luaL_getmetafield(L, -1, "__call") == LUA_TNIL) {
        size_t n;
        sst_code *codes = code_list(L, -1, name, &n);
        p->retry_on_error = lua_retry_on;
        p->retry_on_user_data = add_retry_cb(L, lg, name, codes, n);
        lua_pop(L, 2);
        return;
    }
    if (t == LUA_TTABLE) {
        lua_pop(L, 1); /* the __call field */
    }
    char what[300];
    snprintf(what, sizeof what, "add_node '%.255s': retry_on", name);
    check_callable(L, -1, what);
    p->retry_on_error = lua_retry_on;
    p->retry_on_user_data = add_retry_cb(L, lg, name, NULL, 0);
    *fn_pushed = true;
}

/* Stores the retry_on function on the stack top as graphs[number].retry_on[node]; pops it. */
static void store_retry_on(lua_State *L, const lgraph *lg, const char *name) {
    int fn = lua_gettop(L);
    lua_getfield(L, LUA_REGISTRYINDEX, SST_LUA_GRAPHS);
    lua_rawgeti(L, -1, lg->number);
    lua_getfield(L, -1, "retry_on");
    lua_pushvalue(L, fn);
    lua_setfield(L, -2, name);
    lua_settop(L, fn - 1);
}

/*
 * g:add_node(name, fn [, {retry = true | {...}, metadata = ..., ends = {...}, defer = true}])
 * (retry_policy and destinations are LangGraph's names for retry and ends).
 */
static int graph_add_node(lua_State *L) {
    static const char *const known[] = {"retry",        "retry_policy", "metadata", "ends",
                                        "destinations", "defer",        NULL};
    lgraph *lg = check_graph(L, 1);
    const char *name = luaL_checkstring(L, 2);
    char what[300];
    snprintf(what, sizeof what, "add_node '%.255s'", name);
    check_callable(L, 3, what);
    sst_node_opts o;
    sst_node_opts_init(&o);
    sst_value *meta = NULL;
    bool retry_fn = false;
    lua_settop(L, 4);
    if (!lua_isnil(L, 4)) {
        luaL_checktype(L, 4, LUA_TTABLE);
        sst__lua_check_options(L, 4, known, what);
        if (lua_getfield(L, 4, "retry") == LUA_TNIL) {
            lua_pop(L, 1);
            lua_getfield(L, 4, "retry_policy");
        }
        read_retry(L, lg, lua_gettop(L), name, &o.retry, &retry_fn);
        if (retry_fn) {
            lua_replace(L, 5); /* the retry_on function, stored once the node is accepted */
        } else {
            lua_settop(L, 4);
            lua_pushnil(L);
        }
        if (lua_getfield(L, 4, "ends") == LUA_TNIL) {
            lua_pop(L, 1);
            lua_getfield(L, 4, "destinations");
        }
        if (lua_type(L, -1) == LUA_TTABLE) {
            o.ends = sst__lua_string_list(L, -1, &o.n_ends, "ends"); /* kept at index 7 */
        } else if (!lua_isnil(L, -1)) {
            return sst__lua_raisef(L, SST_EINVAL, "%s: ends: expected a list of node names, got %s",
                                   what, luaL_typename(L, -1));
        }
        lua_getfield(L, 4, "defer");
        o.defer = lua_toboolean(L, -1);
        lua_pop(L, 1);
    }
    /* The callback, then the metadata last: nothing raises while it is held. */
    sst__lua_cb *cb = add_callback(L, lg, SST__CB_NODE, name);
    sst_error err = {0};
    if (lua_istable(L, 4) && lua_getfield(L, 4, "metadata") != LUA_TNIL &&
        (meta = sst__lua_to_value(L, -1, "metadata", &err)) == NULL) {
        return sst__lua_raise(L, &err);
    }
    o.metadata = meta;
    sst_code rc = sst_graph_add_node(lg->g, name, sst__lua_node, cb, &o, &err);
    sst_value_unref(meta);
    check_ok(L, rc, &err);
    store_function(L, cb, 3);
    if (retry_fn) {
        lua_pushvalue(L, 5);
        store_retry_on(L, lg, name);
    }
    lua_settop(L, 1);
    return 1;
}

/* g:add_edge(from, to); from may be a list: wait for all of them (to may be END). */
static int graph_add_edge(lua_State *L) {
    lgraph *lg = check_graph(L, 1);
    const char *to = luaL_checkstring(L, 3);
    sst_error err = {0};
    sst_code rc;
    if (lua_type(L, 2) == LUA_TTABLE) {
        size_t n;
        const char **from = sst__lua_string_list(L, 2, &n, "add_edge: join sources");
        if (n == 0) {
            return sst__lua_raisef(L, SST_EINVAL, "add_edge: a join needs at least one source");
        }
        rc = sst_graph_add_join(lg->g, from, n, to, &err);
    } else {
        rc = sst_graph_add_edge(lg->g, luaL_checkstring(L, 2), to, &err);
    }
    check_ok(L, rc, &err);
    lua_settop(L, 1);
    return 1;
}

/* Conditional edges from @p from: the router at @p router_idx, the path map at @p map_idx. */
static void conditional_edges(lua_State *L, lgraph *lg, const char *from, int router_idx,
                              int map_idx) {
    char key[32];
    snprintf(key, sizeof key, "%d", lg->routers + 1);
    char what[300];
    snprintf(what, sizeof what, "conditional edges from '%.255s': router", from);
    check_callable(L, router_idx, what);
    lg->routers++;
    sst_error err = {0};
    /* The callback first: it may raise, and nothing of this call is held then. */
    sst__lua_cb *cb = add_callback(L, lg, SST__CB_ROUTER, key);
    sst_value *map = NULL;
    if (!lua_isnoneornil(L, map_idx) &&
        (map = sst__lua_to_value(L, map_idx, "path map", &err)) == NULL) {
        sst__lua_raise(L, &err);
    }
    sst_code rc = sst_graph_add_conditional_edges(lg->g, from, sst__lua_router, cb, map, &err);
    sst_value_unref(map);
    check_ok(L, rc, &err);
    store_function(L, cb, router_idx);
}

/* g:add_conditional_edges(from, router [, path_map]); router: a function or a callable table */
static int graph_add_conditional_edges(lua_State *L) {
    lgraph *lg = check_graph(L, 1);
    const char *from = luaL_checkstring(L, 2);
    lua_settop(L, 4);
    conditional_edges(L, lg, from, 3, 4);
    lua_settop(L, 1);
    return 1;
}

/* g:set_conditional_entry_point(router [, path_map]): conditional edges from START. */
static int graph_set_conditional_entry_point(lua_State *L) {
    lgraph *lg = check_graph(L, 1);
    lua_settop(L, 3);
    conditional_edges(L, lg, SST_START, 2, 3);
    lua_settop(L, 1);
    return 1;
}

/*
 * g:add_sequence{ {"a", fa [, opts]}, {"b", fb}, ... }: the nodes (through
 * add_node) and an edge from each to the next. The list is checked whole
 * before anything is added.
 */
static int graph_add_sequence(lua_State *L) {
    check_graph(L, 1);
    luaL_checktype(L, 2, LUA_TTABLE);
    size_t n = lua_rawlen(L, 2);
    if (n == 0) {
        return sst__lua_raisef(L, SST_EINVAL, "add_sequence: a sequence needs at least one node");
    }
    for (size_t i = 1; i <= n; i++) {
        lua_rawgeti(L, 2, (lua_Integer)i);
        bool ok = lua_istable(L, -1) && lua_rawgeti(L, -1, 1) == LUA_TSTRING;
        lua_pop(L, ok ? 2 : lua_istable(L, -1) ? 2 : 1);
        if (!ok) {
            return sst__lua_raisef(
                L, SST_EINVAL, "add_sequence: item %zu: expected {name, function [, options]}", i);
        }
    }
    for (size_t i = 1; i <= n; i++) {
        lua_pushcfunction(L, graph_add_node);
        lua_pushvalue(L, 1);
        lua_rawgeti(L, 2, (lua_Integer)i);
        int item = lua_gettop(L);
        lua_rawgeti(L, item, 1);
        lua_rawgeti(L, item, 2);
        lua_rawgeti(L, item, 3);
        lua_remove(L, item);
        lua_call(L, 4, 0);
    }
    sst_error err = {0};
    for (size_t i = 2; i <= n; i++) {
        lua_rawgeti(L, 2, (lua_Integer)i - 1);
        lua_rawgeti(L, -1, 1);
        lua_rawgeti(L, 2, (lua_Integer)i);
        lua_rawgeti(L, -1, 1);
        check_ok(L,
                 sst_graph_add_edge(check_graph(L, 1)->g, lua_tostring(L, -3), lua_tostring(L, -1),
                                    &err),
                 &err);
        lua_pop(L, 4);
    }
    lua_settop(L, 1);
    return 1;
}

static int graph_set_entry_point(lua_State *L) {
    lgraph *lg = check_graph(L, 1);
    sst_error err = {0};
    check_ok(L, sst_graph_add_edge(lg->g, SST_START, luaL_checkstring(L, 2), &err), &err);
    lua_settop(L, 1);
    return 1;
}

static int graph_set_finish_point(lua_State *L) {
    lgraph *lg = check_graph(L, 1);
    sst_error err = {0};
    check_ok(L, sst_graph_add_edge(lg->g, luaL_checkstring(L, 2), SST_END, &err), &err);
    lua_settop(L, 1);
    return 1;
}

static int graph_compile(lua_State *L) {
    check_graph(L, 1);
    if (!lua_isnoneornil(L, 2)) {
        luaL_checktype(L, 2, LUA_TTABLE);
    }
    return sst__lua_compile(L, 1, lua_istable(L, 2) ? 2 : 0);
}

const sst_graph *sst__lua_graph_of(lua_State *L, int idx) {
    return check_graph(L, idx)->g;
}

void sst__lua_open_graph(lua_State *L) {
    static const luaL_Reg methods[] = {
        {"add_node", graph_add_node},
        {"add_edge", graph_add_edge},
        {"add_conditional_edges", graph_add_conditional_edges},
        {"set_conditional_entry_point", graph_set_conditional_entry_point},
        {"add_sequence", graph_add_sequence},
        {"set_entry_point", graph_set_entry_point},
        {"set_finish_point", graph_set_finish_point},
        {"compile", graph_compile},
        {NULL, NULL}};
    luaL_newmetatable(L, SST_LUA_GRAPH);
    lua_pushcfunction(L, graph_gc);
    lua_setfield(L, -2, "__gc");
    luaL_newlib(L, methods);
    lua_setfield(L, -2, "__index");
    lua_pop(L, 1);
    lua_pushcfunction(L, state_graph);
    lua_setfield(L, -2, "StateGraph");
}
