/* SPDX-License-Identifier: MIT */
/*
 * g:compile{...}: the options LangGraph's compile takes (checkpointer, store,
 * interrupt_before/after) and superstep's own (recursion_limit, durability,
 * workers, memory_limit); docs/lua.md.
 */
#include <stdio.h>

#include "lua_int.h"

/* compile{workers}, compile{memory_limit} and compile{recursion_limit}. */
static void compile_numbers(lua_State *L, int opts, sst__lua_app *a) {
    lua_getfield(L, opts, "recursion_limit");
    if (!lua_isnil(L, -1)) {
        lua_Integer n = luaL_checkinteger(L, -1);
        if (n < 1) {
            sst__lua_raisef(L, SST_EINVAL, "compile: recursion_limit must be at least 1");
        }
        a->recursion_limit = (uint64_t)n;
    }
    lua_pop(L, 1);
    lua_getfield(L, opts, "workers");
    if (!lua_isnil(L, -1)) {
        lua_Integer n = luaL_checkinteger(L, -1);
        if (n < 1 || n > 256) {
            sst__lua_raisef(L, SST_EINVAL, "compile: workers must be between 1 and 256");
        }
        a->workers = (unsigned)n;
    }
    lua_pop(L, 1);
    lua_getfield(L, opts, "memory_limit");
    if (!lua_isnil(L, -1)) {
        int ok;
        lua_Integer n = lua_tointegerx(L, -1, &ok);
        if (!ok || n < 1) {
            sst__lua_raisef(L, SST_EINVAL,
                            "compile: memory_limit must be a number of bytes above 0");
        }
        /* This state's limit (a worker state runs this compile too), unless the host set it. */
        sst__lua_mem *m = sst__lua_mem_of(L);
        if (m != NULL && !m->fixed) {
            m->limit = (size_t)n;
        }
    }
    lua_pop(L, 1);
}

/* Reads the options at @p opts into @p co and the app at @p app. */
static void compile_options(lua_State *L, int opts, int app, sst_compile_opts *co) {
    static const char *const known[] = {"checkpointer",    "interrupt_before",
                                        "interrupt_after", "recursion_limit",
                                        "durability",      "workers",
                                        "memory_limit",    "name",
                                        "step_timeout",    "cache",
                                        "store",           NULL};
    sst__lua_app *a = lua_touserdata(L, app);
    sst__lua_check_options(L, opts, known, "compile");
    co->interrupt_before =
        sst__lua_interrupt_list(L, opts, "interrupt_before", "compile", &co->n_before);
    co->interrupt_after =
        sst__lua_interrupt_list(L, opts, "interrupt_after", "compile", &co->n_after);
    if (lua_getfield(L, opts, "checkpointer") == LUA_TBOOLEAN) {
        /* As a subgraph: true keeps its state across the parent's runs, false keeps none. */
        co->checkpoints = lua_toboolean(L, -1) ? SST_SUBGRAPH_KEEP : SST_SUBGRAPH_NONE;
    } else if (!lua_isnil(L, -1)) {
        if ((a->saver = sst__lua_saver(L, -1)) == NULL) {
            sst__lua_raisef(L, SST_EINVAL,
                            "compile: checkpointer must be a MemorySaver(), SqliteSaver(path), "
                            "PostgresSaver(url), true or false");
        }
        lua_pushvalue(L, -1);
        lua_setiuservalue(L, app, SST__APP_SAVER);
    }
    lua_pop(L, 1);
    if (lua_getfield(L, opts, "cache") != LUA_TNIL && (co->cache = sst__lua_cache(L, -1)) == NULL) {
        sst__lua_raisef(L, SST_EINVAL,
                        "compile: cache must be an InMemoryCache() or SqliteCache(path)");
    }
    lua_pop(L, 1); /* the compiled graph takes its own reference */
    if (lua_getfield(L, opts, "store") != LUA_TNIL && (co->store = sst__lua_store(L, -1)) == NULL) {
        sst__lua_raisef(L, SST_EINVAL,
                        "compile: store must be an InMemoryStore(), SqliteStore(path) or "
                        "PostgresStore(url)");
    }
    lua_pop(L, 1); /* the compiled graph takes its own reference, as for the cache */
    if (lua_getfield(L, opts, "name") == LUA_TSTRING) {
        co->cache_ns = lua_tostring(L, -1); /* the graph's part of a shared cache; the options
                                               table keeps the string alive until compiled */
    }
    lua_pop(L, 1);
    if (lua_getfield(L, opts, "step_timeout") != LUA_TNIL) {
        double s = lua_tonumber(L, -1);
        if (!lua_isnumber(L, -1) || !(s > 0)) {
            sst__lua_raisef(L, SST_EINVAL,
                            "compile: step_timeout must be a positive number of seconds");
        }
        co->step_timeout_s = s;
    }
    lua_pop(L, 1);
    lua_getfield(L, opts, "durability");
    a->durability = sst__lua_durability(L, -1, SST_DURABILITY_ASYNC, "compile");
    lua_pop(L, 1);
    compile_numbers(L, opts, a);
}

int sst__lua_compile(lua_State *L, int graph_idx, int opts_idx) {
    graph_idx = lua_absindex(L, graph_idx);
    const sst_graph *g = sst__lua_graph_of(L, graph_idx);
    sst_compile_opts co;
    sst_compile_opts_init(&co);
    sst__lua_app *a = lua_newuserdatauv(L, sizeof *a, 3);
    memset(a, 0, sizeof *a);
    a->workers = 1;
    a->recursion_limit = 25;
    luaL_setmetatable(L, SST_LUA_APP);
    int app = lua_gettop(L);
    lua_pushvalue(L, graph_idx);
    lua_setiuservalue(L, app, SST__APP_GRAPH);
    lua_newtable(L);
    lua_setiuservalue(L, app, SST__APP_THREADS);
    if (opts_idx != 0) {
        /* The interrupt lists stay on the stack until the graph is compiled. */
        compile_options(L, lua_absindex(L, opts_idx), app, &co);
    }
    sst_error err = {0};
    if ((a->cg = sst_graph_compile(g, &co, &err)) == NULL) {
        return sst__lua_raise(L, &err);
    }
    lua_settop(L, app);
    return 1;
}
