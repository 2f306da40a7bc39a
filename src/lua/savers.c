/* SPDX-License-Identifier: MIT */
/* superstep.MemorySaver() and superstep.SqliteSaver(path), with saver:delete_thread(id). */
#include "lua_int.h"
#include "superstep/checkpoint.h"

typedef struct lsaver {
    sst_checkpointer *cp;
} lsaver;

sst_checkpointer *sst__lua_saver(lua_State *L, int idx) {
    lsaver *s = luaL_testudata(L, idx, SST_LUA_SAVER);
    return s != NULL ? s->cp : NULL;
}

static int saver_gc(lua_State *L) {
    lsaver *s = luaL_checkudata(L, 1, SST_LUA_SAVER);
    sst_checkpointer_free(s->cp);
    s->cp = NULL;
    return 0;
}

/* saver:delete_thread(thread_id): removes every checkpoint of the thread (none: a no-op). */
static int saver_delete_thread(lua_State *L) {
    lsaver *s = luaL_checkudata(L, 1, SST_LUA_SAVER);
    const char *id = luaL_checkstring(L, 2);
    sst_error err = {0};
    if (s->cp == NULL) {
        return sst__lua_raisef(L, SST_EINVAL, "delete_thread: the saver is closed");
    }
    if (sst_checkpointer_delete_thread(s->cp, id, &err) != SST_OK) {
        return sst__lua_raise(L, &err);
    }
    return 0;
}

static lsaver *new_saver(lua_State *L) {
    lsaver *s = lua_newuserdatauv(L, sizeof *s, 0);
    s->cp = NULL;
    luaL_setmetatable(L, SST_LUA_SAVER);
    return s;
}

static int memory_saver(lua_State *L) {
    lsaver *s = new_saver(L);
    sst_error err = {0};
    if ((s->cp = sst_memory_saver_new(&err)) == NULL) {
        return sst__lua_raise(L, &err);
    }
    return 1;
}

static int sqlite_saver(lua_State *L) {
    const char *path = luaL_checkstring(L, 1);
    lsaver *s = new_saver(L);
    sst_error err = {0};
    if ((s->cp = sst_sqlite_saver_open(path, NULL, &err)) == NULL) {
        return sst__lua_raise(L, &err);
    }
    return 1;
}

void sst__lua_open_savers(lua_State *L) {
    luaL_newmetatable(L, SST_LUA_SAVER);
    lua_pushcfunction(L, saver_gc);
    lua_setfield(L, -2, "__gc");
    lua_pushstring(L, "superstep saver");
    lua_setfield(L, -2, "__name");
    lua_createtable(L, 0, 1);
    lua_pushcfunction(L, saver_delete_thread);
    lua_setfield(L, -2, "delete_thread");
    lua_setfield(L, -2, "__index");
    lua_pop(L, 1);
    lua_pushcfunction(L, memory_saver);
    lua_setfield(L, -2, "MemorySaver");
    lua_pushcfunction(L, sqlite_saver);
    lua_setfield(L, -2, "SqliteSaver");
}
