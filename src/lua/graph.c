/* SPDX-License-Identifier: MIT */
/*
 * superstep.StateGraph: the builder with LangGraph's names. Each graph gets
 * a number in creation order; its Lua functions live in the registry under
 * superstep.graphs[number] so that a worker state, which ran the same
 * script, finds the same function for the same node.
 */
#include <stdio.h>

#include "graph_retry.h"

typedef struct lgraph {
    sst_graph *g;
    int number;
    sst__lua_cb **cbs; /* owned; must outlive every compiled graph (apps hold the graph) */
    size_t n_cbs, cap_cbs;
    sst__lua_retries retry; /* retry_on callbacks, as cbs */
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
    sst__lua_retries_free(&lg->retry);
    return 0;
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
        /* LangGraph refuses a reducer that does not take (current, update). */
        lua_Debug ar;
        lua_pushvalue(L, idx);
        lua_getinfo(L, ">u", &ar);
        if (!ar.isvararg && ar.nparams < 2) {
            sst__lua_raisef(L, SST_EINVAL,
                            "StateGraph: field '%s': Invalid reducer: a reducer takes two "
                            "parameters (current, update), this function takes %d",
                            field, (int)ar.nparams);
        }
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

/*
 * The fields declared { untracked = true } (LangGraph's UntrackedValue), in
 * the name order of the list at @p names, given to the graph at once.
 */
static void untracked_fields(lua_State *L, lgraph *lg, int names, lua_Integer n) {
    const char **list = lua_newuserdatauv(L, (size_t)(n > 0 ? n : 1) * sizeof *list, 0);
    size_t k = 0;
    for (lua_Integer i = 1; i <= n; i++) {
        lua_rawgeti(L, names, i);
        const char *field = lua_tostring(L, -1);
        lua_getfield(L, 1, field);
        if (lua_type(L, -1) == LUA_TTABLE && lua_getfield(L, -1, "untracked") != LUA_TNIL) {
            if (!lua_isboolean(L, -1)) {
                sst__lua_raisef(L, SST_EINVAL,
                                "StateGraph: field '%s': untracked must be a boolean", field);
            }
            if (lua_toboolean(L, -1)) {
                list[k++] = field; /* alive in the names list */
            }
            lua_pop(L, 1);
        }
        lua_pop(L, 2);
    }
    sst_error err = {0};
    if (k > 0) {
        check_ok(L, sst_graph_set_untracked_fields(lg->g, list, k, &err), &err);
    }
    lua_pop(L, 1);
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
 * The names of an input or output schema that the state does not declare, declared with
 * replace: LangGraph makes a channel of each key of those schemas, so a closed state
 * keeps them.
 */
static void declare_schema_fields(lua_State *L, lgraph *lg, const char **names, size_t n) {
    const sst_schema *schema = sst_graph_schema(lg->g);
    for (size_t i = 0; i < n; i++) {
        bool known = false;
        for (size_t k = 0; k < sst_schema_field_count(schema) && !known; k++) {
            known = strcmp(sst_schema_field_name(schema, k), names[i]) == 0;
        }
        if (!known) {
            sst_error err = {0};
            check_ok(L, sst_graph_add_field(lg->g, names[i], sst_reducer_replace(), NULL, &err),
                     &err);
        }
    }
}

/*
 * StateGraph options: input_schema / output_schema, lists of field names;
 * closed (LangGraph's TypedDict state: keys of updates and the input that are not
 * declared fields, or names of the input and output schemas, are dropped; the default
 * when the state declares fields, false keeps undeclared keys with replace); context_schema
 * (LangGraph's runtime context) is accepted and kept, with the whole options
 * table, as graphs[number].options for compile to read.
 */
static void graph_schemas(lua_State *L, lgraph *lg, int opts, bool closed_default) {
    static const char *const known[] = {"input_schema", "output_schema", "context_schema",
                                        "closed",       "default",       NULL};
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
    bool is_closed = closed == LUA_TNIL ? closed_default : lua_toboolean(L, -1);
    if (is_closed) {
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
            if (is_closed) {
                declare_schema_fields(L, lg, names, n);
            }
            sst_code rc = out ? sst_graph_set_output_fields(lg->g, names, n, &err)
                              : sst_graph_set_input_fields(lg->g, names, n, &err);
            check_ok(L, rc, &err);
            lua_pop(L, 1);
        }
        lua_pop(L, 1);
    }
}

/*
 * A root state (LangGraph's StateGraph(Annotated[list, operator.add])): the
 * reducer at 1, the default from the options at 2. graphs[number].root tells
 * the callbacks to hand nodes and routers the value itself.
 */
static void root_state(lua_State *L, lgraph *lg) {
    sst_reducer *owned;
    sst__lua_cb *cb;
    const sst_reducer *r = reducer_of(L, lg, 1, SST_ROOT, &owned, &cb);
    sst_error err = {0};
    sst_value *def = NULL;
    if (lua_istable(L, 2) && lua_getfield(L, 2, "default") != LUA_TNIL) {
        def = sst__lua_to_value(L, -1, "StateGraph: default", &err);
        if (def == NULL) {
            sst_reducer_free(owned);
            sst__lua_raise(L, &err);
        }
    }
    sst_code rc = sst_graph_set_root(lg->g, r, def, &err);
    sst_reducer_free(owned);
    check_ok(L, rc, &err);
    if (cb != NULL) {
        store_function(L, cb, 1);
    }
    lua_getfield(L, LUA_REGISTRYINDEX, SST_LUA_GRAPHS);
    lua_rawgeti(L, -1, lg->number);
    lua_pushboolean(L, 1);
    lua_setfield(L, -2, "root");
    lua_pop(L, 2);
}

/*
 * superstep.StateGraph(schema [, {input_schema = {...}, output_schema = {...}}]),
 * or StateGraph(reducer [, {default = v}]) for a root state.
 */
static int state_graph(lua_State *L) {
    bool root = lua_type(L, 1) == LUA_TLIGHTUSERDATA || lua_type(L, 1) == LUA_TFUNCTION;
    if (!lua_isnoneornil(L, 1) && !root) {
        luaL_checktype(L, 1, LUA_TTABLE);
    }
    if (!lua_isnoneornil(L, 2)) {
        luaL_checktype(L, 2, LUA_TTABLE);
    }
    lua_settop(L, 2);
    bool declared = false;
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
        untracked_fields(L, lg, names, n);
        lua_settop(L, self);
        declared = n > 0;
    }
    if (root) {
        root_state(L, lg);
        lua_settop(L, self);
    } else if (lua_istable(L, 2) && lua_getfield(L, 2, "default") != LUA_TNIL) {
        return sst__lua_raisef(L, SST_EINVAL,
                               "StateGraph: default: only a root state has one "
                               "(StateGraph(reducer, {default = v}))");
    }
    lua_settop(L, self);
    if (lua_istable(L, 2)) {
        graph_schemas(L, lg, 2, declared && !root);
        lua_settop(L, self);
    } else if (declared && !root) {
        check_ok(L, sst_schema_set_closed(sst_graph_schema(lg->g), true, &err), &err);
    }
    return 1;
}

/*
 * Reads the options table at 4 of add_node into @p o: retry (a policy or a
 * list; the retry_on functions to store are left at index 5), ends, defer,
 * input_schema. The lists stay on the stack above index 5.
 */
static void node_options(lua_State *L, lgraph *lg, const char *name, const char *what,
                         sst_node_opts *o) {
    static const char *const known[] = {
        "retry",   "retry_policy",  "metadata",     "ends", "destinations", "defer", "input_schema",
        "timeout", "error_handler", "cache_policy", NULL};
    luaL_checktype(L, 4, LUA_TTABLE);
    sst__lua_check_options(L, 4, known, what);
    if (lua_getfield(L, 4, "retry") == LUA_TNIL) {
        lua_pop(L, 1);
        lua_getfield(L, 4, "retry_policy");
    }
    sst_retry_policy *policies;
    size_t n;
    sst__lua_read_retry(L, &lg->retry, lg->number, lua_gettop(L), what, name, &policies, &n);
    lua_replace(L, 5); /* the retry_on functions, stored once the node is accepted */
    if (n == 1) {
        o->retry = policies[0];
    } else if (n > 1) {
        o->retry_policies = policies; /* kept alive at index 7 */
        o->n_retry_policies = n;
    }
    if (lua_getfield(L, 4, "ends") == LUA_TNIL) {
        lua_pop(L, 1);
        lua_getfield(L, 4, "destinations");
    }
    if (lua_type(L, -1) == LUA_TTABLE) {
        o->ends = sst__lua_string_list(L, -1, &o->n_ends, "ends");
    } else if (!lua_isnil(L, -1)) {
        sst__lua_raisef(L, SST_EINVAL, "%s: ends: expected a list of node names, got %s", what,
                        luaL_typename(L, -1));
    }
    if (lua_getfield(L, 4, "input_schema") == LUA_TTABLE) {
        o->input_fields = sst__lua_string_list(L, -1, &o->n_input_fields, "input_schema");
    } else if (!lua_isnil(L, -1)) {
        sst__lua_raisef(L, SST_EINVAL, "%s: input_schema: expected a list of field names, got %s",
                        what, luaL_typename(L, -1));
    }
    lua_getfield(L, 4, "defer");
    o->defer = lua_toboolean(L, -1);
    lua_pop(L, 1);
    lua_getfield(L, 4, "timeout");
    sst__lua_read_timeout(L, -1, what, &o->timeout);
    lua_pop(L, 1);
}

/*
 * A cache_policy option at @p idx ({ttl = s, key = fn}, LangGraph's CachePolicy) into @p p;
 * a key function is left at @p fn_slot with its callback (a router-kind callback under
 * @p key) returned, else NULL.
 */
static sst__lua_cb *cache_policy_option(lua_State *L, lgraph *lg, int idx, int fn_slot,
                                        const char *key, const char *what,
                                        sst_node_cache_policy *p) {
    static const char *const known[] = {"ttl", "key", "key_func", NULL};
    idx = lua_absindex(L, idx);
    if (lua_isnil(L, idx)) {
        return NULL;
    }
    if (!lua_istable(L, idx)) {
        sst__lua_raisef(L, SST_EINVAL, "%s: cache_policy: expected a table {ttl, key}, got %s",
                        what, luaL_typename(L, idx));
    }
    sst__lua_check_options(L, idx, known, what);
    p->enabled = true;
    if (lua_getfield(L, idx, "ttl") != LUA_TNIL &&
        (!lua_isnumber(L, -1) || !((p->ttl_s = lua_tonumber(L, -1)) > 0))) {
        sst__lua_raisef(L, SST_EINVAL, "%s: cache_policy ttl must be a positive number of seconds",
                        what);
    }
    lua_pop(L, 1);
    if (lua_getfield(L, idx, "key") == LUA_TNIL) {
        lua_pop(L, 1);
        lua_getfield(L, idx, "key_func");
    }
    if (lua_isnil(L, -1)) {
        lua_pop(L, 1);
        return NULL;
    }
    char kwhat[320];
    snprintf(kwhat, sizeof kwhat, "%s: cache_policy key", what);
    sst__lua_check_callable(L, -1, kwhat);
    lua_replace(L, fn_slot);
    sst__lua_cb *cb = add_callback(L, lg, SST__CB_ROUTER, key);
    p->key = sst__lua_router; /* called with the node's input, it returns the key */
    p->key_user_data = cb;
    return cb;
}

/*
 * The error_handler option of the add_node options at 4 (LangGraph's): a callable left at
 * index 6 with its callback made, under the handler node's name; NULL when there is none.
 */
static sst__lua_cb *error_handler_option(lua_State *L, lgraph *lg, const char *name,
                                         const char *what) {
    if (!lua_istable(L, 4) || lua_getfield(L, 4, "error_handler") == LUA_TNIL) {
        if (lua_istable(L, 4)) {
            lua_pop(L, 1);
        }
        return NULL;
    }
    lua_replace(L, 6);
    char hwhat[320];
    snprintf(hwhat, sizeof hwhat, "%s: error_handler", what);
    sst__lua_check_callable(L, 6, hwhat);
    char key[300];
    snprintf(key, sizeof key, "__error_handler__%s", name);
    return add_callback(L, lg, SST__CB_NODE, key);
}

/*
 * g:add_node(name, fn [, {retry = true | {...} | {{...}, {...}}, metadata = ...,
 * ends = {...}, defer = true, input_schema = {...}}]) (retry_policy and
 * destinations are LangGraph's names for retry and ends).
 */
static int graph_add_node(lua_State *L) {
    lgraph *lg = check_graph(L, 1);
    const char *name = luaL_checkstring(L, 2);
    char what[300];
    snprintf(what, sizeof what, "add_node '%.255s'", name);
    bool sub = sst__lua_has_metatable(L, 3, SST_LUA_APP);
    if (!sub) {
        sst__lua_check_callable(L, 3, what);
    }
    sst_node_opts o;
    sst_node_opts_init(&o);
    sst_value *meta = NULL;
    lua_settop(L, 7);
    if (!lua_isnil(L, 4)) {
        node_options(L, lg, name, what, &o);
    }
    sst__lua_cb *kcb = NULL;
    if (lua_istable(L, 4)) {
        char key[300];
        snprintf(key, sizeof key, "__cache_key__%s", name);
        lua_getfield(L, 4, "cache_policy");
        kcb = cache_policy_option(L, lg, -1, 7, key, what, &o.cache_policy);
        lua_pop(L, 1);
    }
    sst__lua_cb *hcb = error_handler_option(L, lg, name, what);
    if (hcb != NULL) {
        o.error_handler = sst__lua_node;
        o.error_handler_user_data = hcb;
    }
    /* The callback, then the metadata last: nothing raises while it is held. */
    sst__lua_cb *cb = add_callback(L, lg, SST__CB_NODE, name);
    sst_error err = {0};
    if (lua_istable(L, 4) && lua_getfield(L, 4, "metadata") != LUA_TNIL &&
        (meta = sst__lua_to_value(L, -1, "metadata", &err)) == NULL) {
        return sst__lua_raise(L, &err);
    }
    o.metadata = meta;
    /* A compiled graph runs as a subgraph; the registry keeps its app alive with the graph. */
    sst_code rc = sub ? sst_graph_add_subgraph(lg->g, name, sst__lua_check_app(L, 3)->cg, &o, &err)
                      : sst_graph_add_node(lg->g, name, sst__lua_node, cb, &o, &err);
    sst_value_unref(meta);
    check_ok(L, rc, &err);
    store_function(L, cb, 3);
    if (hcb != NULL) {
        store_function(L, hcb, 6);
    }
    if (kcb != NULL) {
        store_function(L, kcb, 7);
    }
    if (lua_istable(L, 5)) {
        sst__lua_store_retry_on(L, lg->number, 5);
    }
    lua_settop(L, 1);
    return 1;
}

/*
 * g:set_node_defaults{retry = ...} (LangGraph's set_node_defaults(retry_policy=...)):
 * the retry policy (or list) of every node that sets none, added before or after.
 */
static int graph_set_node_defaults(lua_State *L) {
    static const char *const known[] = {"retry",         "retry_policy", "timeout",
                                        "error_handler", "cache_policy", NULL};
    lgraph *lg = check_graph(L, 1);
    luaL_checktype(L, 2, LUA_TTABLE);
    sst__lua_check_options(L, 2, known, "set_node_defaults");
    lua_settop(L, 3);
    sst_error err = {0};
    lua_getfield(L, 2, "cache_policy");
    if (!lua_isnil(L, -1)) {
        sst_node_cache_policy cp = {0};
        sst__lua_cb *kcb = cache_policy_option(L, lg, -1, 3, "__cache_key____defaults__",
                                               "set_node_defaults", &cp);
        check_ok(L, sst_graph_set_default_cache_policy(lg->g, &cp, &err), &err);
        if (kcb != NULL) {
            store_function(L, kcb, 3);
        }
    }
    lua_settop(L, 2);
    if (lua_getfield(L, 2, "timeout") != LUA_TNIL) {
        sst_timeout_policy tp;
        sst__lua_read_timeout(L, -1, "set_node_defaults", &tp);
        check_ok(L, sst_graph_set_default_timeout(lg->g, &tp, &err), &err);
    }
    lua_pop(L, 1);
    if (lua_getfield(L, 2, "error_handler") != LUA_TNIL) {
        sst__lua_check_callable(L, -1, "set_node_defaults: error_handler");
        sst__lua_cb *cb = add_callback(L, lg, SST__CB_NODE, "__default_error_handler__");
        check_ok(L, sst_graph_set_default_error_handler(lg->g, sst__lua_node, cb, &err), &err);
        store_function(L, cb, -1);
    }
    lua_pop(L, 1);
    bool retry = lua_getfield(L, 2, "retry") != LUA_TNIL;
    if (!retry) {
        lua_pop(L, 1);
        retry = lua_getfield(L, 2, "retry_policy") != LUA_TNIL;
    }
    if (!retry) {
        lua_settop(L, 1);
        return 1;
    }
    sst_retry_policy *policies;
    size_t n;
    sst__lua_read_retry(L, &lg->retry, lg->number, 3, "set_node_defaults", "__defaults__",
                        &policies, &n);
    check_ok(L, sst_graph_set_default_retry(lg->g, policies, n, &err), &err);
    sst__lua_store_retry_on(L, lg->number, -1);
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
    sst__lua_check_callable(L, router_idx, what);
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

int sst__lua_entrypoint(lua_State *L, int opts_idx, int fn_idx, const char *name) {
    opts_idx = opts_idx != 0 ? lua_absindex(L, opts_idx) : 0;
    fn_idx = lua_absindex(L, fn_idx);
    lua_pushcfunction(L, state_graph);
    lua_call(L, 0, 1);
    int gidx = lua_gettop(L);
    lgraph *lg = check_graph(L, gidx);
    sst_node_opts o;
    sst_node_opts_init(&o);
    int compile_opts = 0;
    if (opts_idx != 0) {
        /* The node's options (retry, timeout) are read here; the rest go to compile. */
        static const char *const node_keys[] = {"retry", "retry_policy", "timeout"};
        lua_newtable(L);
        compile_opts = lua_gettop(L);
        lua_pushnil(L);
        while (lua_next(L, opts_idx) != 0) {
            bool node_key = false;
            for (size_t i = 0; i < SST_ARRAY_LEN(node_keys); i++) {
                node_key = node_key || (lua_type(L, -2) == LUA_TSTRING &&
                                        strcmp(lua_tostring(L, -2), node_keys[i]) == 0);
            }
            if (!node_key) {
                lua_pushvalue(L, -2);
                lua_insert(L, -2);
                lua_rawset(L, compile_opts);
            } else {
                lua_pop(L, 1);
            }
        }
        if (lua_getfield(L, opts_idx, "retry") == LUA_TNIL) {
            lua_pop(L, 1);
            lua_getfield(L, opts_idx, "retry_policy");
        }
        if (!lua_isnil(L, -1)) {
            sst__lua_read_task_retry(L, lua_gettop(L), &o.retry);
        }
        lua_pop(L, 1);
        lua_getfield(L, opts_idx, "timeout");
        sst__lua_read_timeout(L, -1, "entrypoint", &o.timeout);
        lua_pop(L, 1);
    }
    sst__lua_cb *cb = add_callback(L, lg, SST__CB_NODE, name);
    sst_error err = {0};
    check_ok(L, sst_graph_set_entrypoint(lg->g, name, sst__lua_entry, cb, &o, &err), &err);
    store_function(L, cb, fn_idx);
    return sst__lua_compile(L, gidx, compile_opts);
}

const sst_graph *sst__lua_graph_of(lua_State *L, int idx) {
    return check_graph(L, idx)->g;
}

void sst__lua_open_graph(lua_State *L) {
    static const luaL_Reg methods[] = {
        {"add_node", graph_add_node},
        {"set_node_defaults", graph_set_node_defaults},
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
