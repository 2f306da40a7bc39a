/* SPDX-License-Identifier: MIT */
/*
 * The compiled app: its state methods (get_state, get_state_history,
 * update_state, bulk_update_state, delete_thread) and drawing, with
 * LangGraph's config tables ({configurable = {thread_id = ..., checkpoint_id
 * = ...}}). Compiling is in compile.c, invoke in run.c, stream in stream.c.
 */
#include "lua_int.h"
#include "values/build.h"

sst__lua_app *sst__lua_check_app(lua_State *L, int idx) {
    sst__lua_app *a = luaL_checkudata(L, idx, SST_LUA_APP);
    if (a->cg == NULL) {
        sst__lua_raisef(L, SST_EINVAL, "app: closed");
    }
    return a;
}

static int app_gc(lua_State *L) {
    sst__lua_app *a = luaL_checkudata(L, 1, SST_LUA_APP);
    /* In-memory threads go before the compiled graph they point to. */
    if (lua_getiuservalue(L, 1, SST__APP_THREADS) == LUA_TTABLE) {
        lua_pushnil(L);
        while (lua_next(L, -2) != 0) {
            sst__lua_thread_drop(L, -1, false);
            lua_pop(L, 1);
        }
    }
    lua_pop(L, 1);
    sst_engine_free(a->engine);
    a->engine = NULL;
    if (!a->borrowed_cg) {
        sst_compiled_graph_free(a->cg);
    }
    a->cg = NULL;
    return 0;
}

int sst__lua_app_wrap(lua_State *L, sst_compiled_graph *cg, int owner_idx, int saver_idx,
                      uint64_t recursion_limit) {
    owner_idx = lua_absindex(L, owner_idx);
    saver_idx = saver_idx != 0 ? lua_absindex(L, saver_idx) : 0;
    sst__lua_app *a = lua_newuserdatauv(L, sizeof *a, 3);
    memset(a, 0, sizeof *a);
    a->cg = cg;
    a->borrowed_cg = true;
    a->workers = 1; /* Lua tools run in the invoking thread's state */
    a->recursion_limit = recursion_limit;
    luaL_setmetatable(L, SST_LUA_APP);
    lua_pushvalue(L, owner_idx);
    lua_setiuservalue(L, -2, SST__APP_GRAPH);
    lua_newtable(L);
    lua_setiuservalue(L, -2, SST__APP_THREADS);
    if (saver_idx != 0) {
        a->saver = sst__lua_saver(L, saver_idx);
        lua_pushvalue(L, saver_idx);
        lua_setiuservalue(L, -2, SST__APP_SAVER);
    }
    return 1;
}

/* app:get_state(config [, {subgraphs = true}]) */
/*
 * An entrypoint's snapshot shows its value as LangGraph's does: values is the last
 * return value, not {SST_ROOT: v} (the table at @p idx is changed).
 */
static void entry_values(lua_State *L, const sst__lua_app *a, int idx) {
    if (!sst_compiled_graph_is_entrypoint(a->cg) || !lua_istable(L, idx)) {
        return;
    }
    idx = lua_absindex(L, idx);
    if (lua_getfield(L, idx, "values") == LUA_TTABLE) {
        lua_getfield(L, -1, SST_ROOT);
        lua_setfield(L, idx, "values");
    }
    lua_pop(L, 1);
}

static int app_get_state(lua_State *L) {
    static const char *const known[] = {"subgraphs", NULL};
    sst__lua_app *a = sst__lua_check_app(L, 1);
    int cfg = sst__lua_config_index(L, 2);
    bool nested = false;
    if (lua_istable(L, 3)) {
        sst__lua_check_options(L, 3, known, "get_state");
        lua_getfield(L, 3, "subgraphs");
        nested = lua_toboolean(L, -1);
        lua_pop(L, 1);
    }
    sst__lua_thread *lt = sst__lua_thread_for(L, 1, a, cfg, true);
    if (lt == NULL) {
        return sst__lua_raisef(L, SST_EINVAL, "get_state: the config names no thread_id");
    }
    if (!lt->durable) { /* in-memory thread: its values only */
        lua_createtable(L, 0, 1);
        sst__lua_push_table(L, sst_graph_thread_state(lt->t));
        lua_setfield(L, -2, "values");
        entry_values(L, a, -1);
        return 1;
    }
    sst_error err = {0};
    const char *id = sst__lua_config_string(L, cfg, "checkpoint_id");
    sst_value *st =
        nested ? sst_graph_get_state_nested(lt->t, id, &err) : sst_graph_get_state(lt->t, id, &err);
    sst__lua_thread_drop(L, -1, true);
    if (st == NULL) {
        return sst__lua_raise(L, &err);
    }
    sst__lua_push_owned(L, st);
    sst__lua_push_table(L, st);
    entry_values(L, a, -1);
    return 1;
}

/* The durable thread of config @p cfg for @p what, pushed (its userdata), or raises. */
static sst_graph_thread *durable_thread(lua_State *L, sst__lua_app *a, int cfg, const char *what) {
    sst__lua_thread *lt = a->saver != NULL ? sst__lua_thread_for(L, 1, a, cfg, true) : NULL;
    if (lt == NULL) {
        sst__lua_raisef(L, SST_EINVAL, "%s: needs a checkpointer and a thread_id", what);
    }
    return lt->t;
}

/* app:get_state_history(config [, {filter = {...}, limit = n}]) */
static int app_get_state_history(lua_State *L) {
    sst__lua_app *a = sst__lua_check_app(L, 1);
    int cfg = sst__lua_config_index(L, 2);
    sst_error err = {0};
    sst_value *filter = NULL;
    size_t limit = 0;
    if (lua_istable(L, 3)) {
        if (lua_getfield(L, 3, "filter") != LUA_TNIL) {
            if ((filter = sst__lua_to_value(L, -1, "filter", &err)) == NULL) {
                return sst__lua_raise(L, &err);
            }
            sst__lua_push_owned(L, filter);
        }
        lua_getfield(L, 3, "limit");
        limit = lua_isnil(L, -1) ? 0 : (size_t)luaL_checkinteger(L, -1);
        lua_pop(L, 1);
    }
    sst_graph_thread *t = durable_thread(L, a, cfg, "get_state_history");
    sst_value *h = sst_graph_get_state_history(t, filter, limit, &err);
    sst__lua_thread_drop(L, -1, true);
    if (h == NULL) {
        return sst__lua_raise(L, &err);
    }
    sst__lua_push_owned(L, h);
    sst__lua_push_table(L, h);
    for (lua_Integer i = 1; i <= (lua_Integer)lua_rawlen(L, -1); i++) {
        lua_rawgeti(L, -1, i);
        entry_values(L, a, -1);
        lua_pop(L, 1);
    }
    return 1;
}

/*
 * Pushes the config of the head of the thread whose userdata is on the stack top (closed
 * here): {configurable = {thread_id, checkpoint_ns, checkpoint_id}}, with a subgraph's
 * checkpoint_map (its ancestors' checkpoints and its own).
 */
static int push_head_config(lua_State *L, sst_graph_thread *t) {
    sst_error err = {0};
    sst_value *st = sst_graph_get_state(t, NULL, &err);
    sst__lua_thread_drop(L, -1, true);
    if (st == NULL) {
        return sst__lua_raise(L, &err);
    }
    sst__lua_push_owned(L, st);
    sst__lua_push_table(L, sst_object_get(st, "config"));
    return 1;
}

/* app:update_state(config, values | nil [, as_node]) -> config of the new checkpoint */
static int app_update_state(lua_State *L) {
    sst__lua_app *a = sst__lua_check_app(L, 1);
    int cfg = sst__lua_config_index(L, 2);
    const char *as_node = luaL_optstring(L, 4, NULL);
    sst_error err = {0};
    sst_value *values = NULL;
    if (sst_compiled_graph_is_entrypoint(a->cg) && !lua_isnoneornil(L, 3)) {
        /* an entrypoint's update is a value (its return and previous), as LangGraph's */
        sst_value *v = sst__lua_to_value(L, 3, "update_state values", &err);
        values = v != NULL ? sst__set_take(sst_object_empty(), SST_ROOT, v, &err) : NULL;
    } else {
        values = sst__lua_update_values(L, 3, &as_node, &err);
    }
    if (values == NULL && !lua_isnoneornil(L, 3)) {
        return sst__lua_raise(L, &err);
    }
    if (values != NULL) {
        sst__lua_push_owned(L, values);
    }
    sst_graph_thread *t = durable_thread(L, a, cfg, "update_state");
    const char *cp = sst__lua_config_string(L, cfg, "checkpoint_id");
    if (sst_graph_update_state(t, cp, values, as_node, &err) != SST_OK) {
        sst__lua_thread_drop(L, -1, true);
        return sst__lua_raise(L, &err);
    }
    return push_head_config(L, t);
}

/* app:bulk_update_state(config, { { {values = ..., as_node = ...}, ... }, ... }) -> config */
static int app_bulk_update_state(lua_State *L) {
    sst__lua_app *a = sst__lua_check_app(L, 1);
    int cfg = sst__lua_config_index(L, 2);
    sst_error err = {0};
    sst_value *steps = sst__lua_supersteps(L, 3, &err);
    if (steps == NULL) {
        return sst__lua_raise(L, &err);
    }
    sst__lua_push_owned(L, steps);
    sst_graph_thread *t = durable_thread(L, a, cfg, "bulk_update_state");
    const char *cp = sst__lua_config_string(L, cfg, "checkpoint_id");
    if (sst_graph_bulk_update_state(t, cp, steps, &err) != SST_OK) {
        sst__lua_thread_drop(L, -1, true);
        return sst__lua_raise(L, &err);
    }
    return push_head_config(L, t);
}

/*
 * app:delete_thread(thread_id): every checkpoint of the thread (with a
 * checkpointer), or the in-memory thread of that id.
 */
static int app_delete_thread(lua_State *L) {
    sst__lua_app *a = sst__lua_check_app(L, 1);
    const char *id = luaL_checkstring(L, 2);
    if (a->saver != NULL) {
        sst_error err = {0};
        if (sst_checkpointer_delete_thread(a->saver, id, &err) != SST_OK) {
            return sst__lua_raise(L, &err);
        }
        return 0;
    }
    /* The collector frees the thread once no running stream holds it. */
    lua_getiuservalue(L, 1, SST__APP_THREADS);
    lua_pushnil(L);
    lua_setfield(L, -2, id);
    return 0;
}

/* The xray option of the options table at @p opts (0: none): true, false or a level. */
static unsigned xray_option(lua_State *L, int opts, const char *what) {
    static const char *const known[] = {"xray", NULL};
    unsigned xray = 0;
    if (opts != 0 && lua_istable(L, opts)) {
        sst__lua_check_options(L, opts, known, what);
        lua_getfield(L, opts, "xray");
        if (lua_isinteger(L, -1) && lua_tointeger(L, -1) >= 0) {
            xray = (unsigned)lua_tointeger(L, -1);
        } else if (lua_isboolean(L, -1)) {
            xray = lua_toboolean(L, -1) ? SST_XRAY_ALL : 0;
        } else if (!lua_isnil(L, -1)) {
            return (unsigned)sst__lua_raisef(L, SST_EINVAL,
                                             "xray: expected true, false or a level >= 0");
        }
        lua_pop(L, 1);
    }
    return xray;
}

/*
 * The drawing of the app at @p app with the options at @p opts (0: none): with xray,
 * subgraph nodes are drawn expanded, every level or n levels (LangGraph's
 * get_graph(xray=...)).
 */
static int draw_with(lua_State *L, int app, int opts, bool mermaid) {
    sst__lua_app *a = sst__lua_check_app(L, app);
    unsigned xray = xray_option(L, opts, mermaid ? "draw_mermaid" : "draw_dot");
    sst_error err = {0};
    char *text = mermaid ? sst_compiled_graph_mermaid_xray(a->cg, xray, &err)
                         : sst_compiled_graph_dot_xray(a->cg, xray, &err);
    return sst__lua_push_text(L, text, &err);
}

/* app:draw_mermaid([{xray = true | n}]) / app:draw_dot(...) */
static int draw(lua_State *L, bool mermaid) {
    return draw_with(L, 1, lua_istable(L, 2) ? 2 : 0, mermaid);
}

/* The graph as data (sst_compiled_graph_json) for get_graph's upvalues: app, options. */
static sst_value *graph_json(lua_State *L) {
    sst__lua_app *a = sst__lua_check_app(L, lua_upvalueindex(1));
    unsigned xray =
        xray_option(L, lua_istable(L, lua_upvalueindex(2)) ? lua_upvalueindex(2) : 0, "get_graph");
    sst_error err = {0};
    sst_value *v = sst_compiled_graph_json(a->cg, xray, &err);
    if (v == NULL) {
        sst__lua_raise(L, &err);
    }
    return v;
}

/* graph:to_json(): LangGraph's Graph.to_json(), {nodes = {...}, edges = {...}} as plain tables. */
static int graph_to_json(lua_State *L) {
    sst_value *v = graph_json(L);
    sst__lua_push_table(L, v);
    sst_value_unref(v);
    return 1;
}

/* graph:draw_mermaid([{with_styles = false}]): LangGraph's Mermaid text of the graph. */
static int graph_draw_mermaid(lua_State *L) {
    static const char *const known[] = {"with_styles", NULL};
    int opts = lua_istable(L, 2) ? 2 : 0; /* graph:draw_mermaid{...} */
    if (lua_istable(L, 1)) {
        if (lua_getmetatable(L, 1)) {
            lua_pop(L, 1); /* the graph itself */
        } else {
            opts = 1; /* graph.draw_mermaid{...} */
        }
    }
    bool styles = true;
    if (opts != 0) {
        sst__lua_check_options(L, opts, known, "draw_mermaid");
        lua_getfield(L, opts, "with_styles");
        styles = lua_isnil(L, -1) || lua_toboolean(L, -1);
        lua_pop(L, 1);
    }
    sst_value *v = graph_json(L);
    sst_error err = {0};
    char *text = sst_graph_json_mermaid(v, styles, &err);
    sst_value_unref(v);
    return sst__lua_push_text(L, text, &err);
}

/* graph:draw_dot(): superstep's Graphviz drawing at the graph's xray. */
static int graph_draw_dot(lua_State *L) {
    return draw_with(L, lua_upvalueindex(1), lua_upvalueindex(2), false);
}

/*
 * app:get_graph([{xray = true | n}]) (LangGraph's): the graph as data, a table
 * {nodes = {...}, edges = {...}} in the shape of LangGraph's Graph.to_json()
 * (sst_compiled_graph_json), with methods to_json(), draw_mermaid([{with_styles}])
 * (LangGraph's Mermaid text) and draw_dot().
 */
static int app_get_graph(lua_State *L) {
    sst__lua_check_app(L, 1);
    lua_settop(L, 2);
    static const struct {
        const char *name;
        lua_CFunction fn;
    } methods[] = {{"to_json", graph_to_json},
                   {"draw_mermaid", graph_draw_mermaid},
                   {"draw_dot", graph_draw_dot}};
    lua_pushvalue(L, 1);
    lua_pushvalue(L, 2);
    lua_pushcclosure(L, graph_to_json, 2);
    lua_call(L, 0, 1); /* the graph's table */
    lua_createtable(L, 0, 1);
    lua_createtable(L, 0, 3);
    for (size_t k = 0; k < sizeof methods / sizeof methods[0]; k++) {
        lua_pushvalue(L, 1);
        lua_pushvalue(L, 2);
        lua_pushcclosure(L, methods[k].fn, 2);
        lua_setfield(L, -2, methods[k].name);
    }
    lua_setfield(L, -2, "__index");
    lua_setmetatable(L, -2);
    return 1;
}

static int app_draw_mermaid(lua_State *L) {
    return draw(L, true);
}

static int app_draw_dot(lua_State *L) {
    return draw(L, false);
}

/* app:clear_cache([nodes]) (LangGraph's clear_cache): drops the nodes' cached writes. */
static int app_clear_cache(lua_State *L) {
    sst__lua_app *a = sst__lua_check_app(L, 1);
    size_t n = 0;
    const char **nodes = NULL;
    if (!lua_isnoneornil(L, 2)) {
        luaL_checktype(L, 2, LUA_TTABLE);
        nodes = sst__lua_string_list(L, 2, &n, "clear_cache");
    }
    sst_error err = {0};
    if (sst_compiled_graph_clear_cache(a->cg, nodes, n, &err) != SST_OK) {
        return sst__lua_raise(L, &err);
    }
    return 0;
}

/* app:clear_task_cache(name...): LangGraph's task.clear_cache(cache) for the app's cache. */
static int app_clear_task_cache(lua_State *L) {
    sst__lua_app *a = sst__lua_check_app(L, 1);
    sst_error err = {0};
    for (int i = 2; i <= lua_gettop(L); i++) {
        const char *name = luaL_checkstring(L, i);
        if (sst_compiled_graph_clear_task_cache(a->cg, name, &err) != SST_OK) {
            return sst__lua_raise(L, &err);
        }
    }
    return 0;
}

void sst__lua_open_app(lua_State *L) {
    static const luaL_Reg methods[] = {{"invoke", sst__lua_app_invoke},
                                       {"stream", sst__lua_app_stream},
                                       {"get_state", app_get_state},
                                       {"get_state_history", app_get_state_history},
                                       {"update_state", app_update_state},
                                       {"bulk_update_state", app_bulk_update_state},
                                       {"delete_thread", app_delete_thread},
                                       {"draw_mermaid", app_draw_mermaid},
                                       {"draw_dot", app_draw_dot},
                                       {"get_graph", app_get_graph},
                                       {"clear_cache", app_clear_cache},
                                       {"clear_task_cache", app_clear_task_cache},
                                       {NULL, NULL}};
    luaL_newmetatable(L, SST_LUA_APP);
    lua_pushcfunction(L, app_gc);
    lua_setfield(L, -2, "__gc");
    luaL_newlib(L, methods);
    lua_setfield(L, -2, "__index");
    lua_pop(L, 1);
    sst__lua_open_stream(L);
}
