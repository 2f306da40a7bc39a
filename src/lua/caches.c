/* SPDX-License-Identifier: MIT */
/*
 * superstep.InMemoryCache() and superstep.SqliteCache(path) (LangGraph's
 * node caches, cache.h), given to compile{cache = ...}, with cache:clear().
 */
#include "lua_int.h"

typedef struct lcache {
    sst_cache *c;
} lcache;

sst_cache *sst__lua_cache(lua_State *L, int idx) {
    lcache *c = luaL_testudata(L, idx, SST_LUA_CACHE);
    return c != NULL ? c->c : NULL;
}

static int cache_gc(lua_State *L) {
    lcache *c = luaL_checkudata(L, 1, SST_LUA_CACHE);
    sst_cache_free(c->c);
    c->c = NULL;
    return 0;
}

/* cache:clear(): drops every entry, of every graph using the cache. */
static int cache_clear(lua_State *L) {
    lcache *c = luaL_checkudata(L, 1, SST_LUA_CACHE);
    sst_error err = {0};
    if (c->c == NULL || sst_cache_clear(c->c, NULL, &err) != SST_OK) {
        return c->c == NULL ? sst__lua_raisef(L, SST_EINVAL, "clear: the cache is closed")
                            : sst__lua_raise(L, &err);
    }
    return 0;
}

static lcache *new_cache(lua_State *L) {
    lcache *c = lua_newuserdatauv(L, sizeof *c, 0);
    c->c = NULL;
    luaL_setmetatable(L, SST_LUA_CACHE);
    return c;
}

static int memory_cache(lua_State *L) {
    lcache *c = new_cache(L);
    sst_error err = {0};
    if ((c->c = sst_memory_cache_new(&err)) == NULL) {
        return sst__lua_raise(L, &err);
    }
    return 1;
}

static int sqlite_cache(lua_State *L) {
    const char *path = luaL_checkstring(L, 1);
    lcache *c = new_cache(L);
    sst_error err = {0};
    if ((c->c = sst_sqlite_cache_open(path, &err)) == NULL) {
        return sst__lua_raise(L, &err);
    }
    return 1;
}

void sst__lua_open_caches(lua_State *L) {
    luaL_newmetatable(L, SST_LUA_CACHE);
    lua_pushcfunction(L, cache_gc);
    lua_setfield(L, -2, "__gc");
    lua_pushstring(L, "superstep cache");
    lua_setfield(L, -2, "__name");
    lua_createtable(L, 0, 1);
    lua_pushcfunction(L, cache_clear);
    lua_setfield(L, -2, "clear");
    lua_setfield(L, -2, "__index");
    lua_pop(L, 1);
    lua_pushcfunction(L, memory_cache);
    lua_setfield(L, -2, "InMemoryCache");
    lua_pushcfunction(L, sqlite_cache);
    lua_setfield(L, -2, "SqliteCache");
}
