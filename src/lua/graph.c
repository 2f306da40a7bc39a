/* SPDX-License-Identifier: MIT */
/*
 * superstep.StateGraph: the builder with LangGraph's names. Each graph gets
 * a number in creation order; its Lua functions live in the registry under
 * superstep.graphs[number] so that a worker state, which ran the same
 * script, finds the same function for the same node.
 */
#include <stdio.h>

#include "lua_int.h"

typedef struct lgraph {
    sst_graph *g;
    int number;
    sst__lua_cb **cbs; /* owned; must outlive every compiled graph (apps hold the graph) */
    size_t n_cbs, cap_cbs;
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

/* superstep.StateGraph(schema) */
static int state_graph(lua_State *L) {
    if (!lua_isnoneornil(L, 1)) {
        luaL_checktype(L, 1, LUA_TTABLE);
    }
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
    lua_createtable(L, 0, 3);
    lua_newtable(L);
    lua_setfield(L, -2, "nodes");
    lua_newtable(L);
    lua_setfield(L, -2, "routers");
    lua_newtable(L);
    lua_setfield(L, -2, "reducers");
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
    return 1;
}

static double opt_number(lua_State *L, int t, const char *k, double def) {
    lua_getfield(L, t, k);
    double d = lua_isnil(L, -1) ? def : luaL_checknumber(L, -1);
    lua_pop(L, 1);
    return d;
}

/* g:add_node(name, fn [, {retry = {...}, metadata = ..., ends = {...}}]) */
static int graph_add_node(lua_State *L) {
    lgraph *lg = check_graph(L, 1);
    const char *name = luaL_checkstring(L, 2);
    luaL_checktype(L, 3, LUA_TFUNCTION);
    sst_node_opts o;
    sst_node_opts_init(&o);
    sst_value *meta = NULL;
    const char *ends[64];
    if (!lua_isnoneornil(L, 4)) {
        luaL_checktype(L, 4, LUA_TTABLE);
        if (lua_getfield(L, 4, "retry") == LUA_TTABLE) {
            int r = lua_gettop(L);
            o.retry.max_attempts = (unsigned)opt_number(L, r, "max_attempts", o.retry.max_attempts);
            o.retry.initial_interval_s =
                opt_number(L, r, "initial_interval", o.retry.initial_interval_s);
            o.retry.backoff_factor = opt_number(L, r, "backoff_factor", o.retry.backoff_factor);
            o.retry.max_interval_s = opt_number(L, r, "max_interval", o.retry.max_interval_s);
            lua_getfield(L, r, "jitter");
            if (!lua_isnil(L, -1)) {
                o.retry.jitter = lua_toboolean(L, -1);
            }
            lua_pop(L, 1);
            if (o.retry.max_attempts < 1) {
                return sst__lua_raisef(
                    L, SST_EINVAL, "add_node '%s': retry.max_attempts must be at least 1", name);
            }
        }
        lua_pop(L, 1);
        if (lua_getfield(L, 4, "ends") == LUA_TTABLE) {
            size_t n = lua_rawlen(L, -1);
            if (n > SST_ARRAY_LEN(ends)) {
                return sst__lua_raisef(L, SST_EINVAL, "add_node '%s': too many ends", name);
            }
            for (size_t i = 0; i < n; i++) {
                lua_rawgeti(L, -1, (lua_Integer)i + 1);
                ends[i] = lua_tostring(L, -1); /* kept alive by the opts table */
                lua_pop(L, 1);
            }
            o.ends = ends;
            o.n_ends = n;
        }
        lua_pop(L, 1);
    }
    /* The callback, then the metadata last: nothing raises while it is held. */
    sst__lua_cb *cb = add_callback(L, lg, SST__CB_NODE, name);
    sst_error err = {0};
    if (!lua_isnoneornil(L, 4) && lua_getfield(L, 4, "metadata") != LUA_TNIL &&
        (meta = sst__lua_to_value(L, -1, "metadata", &err)) == NULL) {
        return sst__lua_raise(L, &err);
    }
    o.metadata = meta;
    sst_code rc = sst_graph_add_node(lg->g, name, sst__lua_node, cb, &o, &err);
    sst_value_unref(meta);
    check_ok(L, rc, &err);
    store_function(L, cb, 3);
    lua_settop(L, 1);
    return 1;
}

/* g:add_edge(from, to); from may be a list: wait for all of them. */
static int graph_add_edge(lua_State *L) {
    lgraph *lg = check_graph(L, 1);
    const char *to = luaL_checkstring(L, 3);
    sst_error err = {0};
    sst_code rc;
    if (lua_type(L, 2) == LUA_TTABLE) {
        const char *from[64];
        size_t n = lua_rawlen(L, 2);
        if (n == 0 || n > SST_ARRAY_LEN(from)) {
            return sst__lua_raisef(L, SST_EINVAL, "add_edge: a join needs 1 to 64 source nodes");
        }
        for (size_t i = 0; i < n; i++) {
            lua_rawgeti(L, 2, (lua_Integer)i + 1);
            from[i] = lua_tostring(L, -1);
            lua_pop(L, 1);
            if (from[i] == NULL) {
                return sst__lua_raisef(L, SST_EINVAL, "add_edge: join sources must be node names");
            }
        }
        rc = sst_graph_add_join(lg->g, from, n, to, &err);
    } else {
        rc = sst_graph_add_edge(lg->g, luaL_checkstring(L, 2), to, &err);
    }
    check_ok(L, rc, &err);
    lua_settop(L, 1);
    return 1;
}

/* g:add_conditional_edges(from, router [, path_map]) */
static int graph_add_conditional_edges(lua_State *L) {
    lgraph *lg = check_graph(L, 1);
    const char *from = luaL_checkstring(L, 2);
    luaL_checktype(L, 3, LUA_TFUNCTION);
    sst_error err = {0};
    char key[32];
    snprintf(key, sizeof key, "%d", ++lg->routers);
    /* The callback first: it may raise, and nothing of this call is held then. */
    sst__lua_cb *cb = add_callback(L, lg, SST__CB_ROUTER, key);
    sst_value *map = NULL;
    if (!lua_isnoneornil(L, 4) && (map = sst__lua_to_value(L, 4, "path map", &err)) == NULL) {
        return sst__lua_raise(L, &err);
    }
    sst_code rc = sst_graph_add_conditional_edges(lg->g, from, sst__lua_router, cb, map, &err);
    sst_value_unref(map);
    check_ok(L, rc, &err);
    store_function(L, cb, 3);
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
    static const luaL_Reg methods[] = {{"add_node", graph_add_node},
                                       {"add_edge", graph_add_edge},
                                       {"add_conditional_edges", graph_add_conditional_edges},
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
