/* SPDX-License-Identifier: MIT */
/*
 * superstep.MemorySaver(), superstep.SqliteSaver(path) and superstep.PostgresSaver(url),
 * with saver:delete_thread(id) and saver:list(config).
 */
#include <string.h>

#include "lua_int.h"
#include "superstep/checkpoint.h"
#include "superstep/postgres.h"

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

/* One listed record as {config = {configurable = {thread_id, checkpoint_ns, checkpoint_id}},
 * parent_config, step, source}, appended to the list at the top of the stack. */
static bool push_record(const sst_checkpoint *rec, void *ud) {
    lua_State *L = ud;
    lua_createtable(L, 0, 4);
    const char *const keys[] = {"checkpoint_id", "parent_config"};
    const char *const ids[] = {rec->id, rec->parent_id};
    for (size_t i = 0; i < 2; i++) {
        if (ids[i] == NULL) {
            continue;
        }
        lua_createtable(L, 0, 1);
        lua_createtable(L, 0, 3);
        lua_pushstring(L, rec->thread_id);
        lua_setfield(L, -2, "thread_id");
        lua_pushstring(L, rec->ns);
        lua_setfield(L, -2, "checkpoint_ns");
        lua_pushstring(L, ids[i]);
        lua_setfield(L, -2, "checkpoint_id");
        lua_setfield(L, -2, "configurable");
        lua_setfield(L, -2, i == 0 ? "config" : keys[1]);
    }
    lua_pushinteger(L, (lua_Integer)rec->step);
    lua_setfield(L, -2, "step");
    lua_pushstring(L, rec->source);
    lua_setfield(L, -2, "source");
    lua_rawseti(L, -2, (lua_Integer)lua_rawlen(L, -2) + 1);
    return true;
}

/*
 * saver:list(config [, {limit = n}]): the thread's checkpoints newest first, every
 * namespace unless config.configurable.checkpoint_ns names one (LangGraph's
 * checkpointer.list).
 */
static int saver_list(lua_State *L) {
    static const char *const known[] = {"limit", NULL};
    lsaver *s = luaL_checkudata(L, 1, SST_LUA_SAVER);
    int cfg = sst__lua_config_index(L, 2);
    const char *thread = cfg != 0 ? sst__lua_config_string(L, cfg, "thread_id") : NULL;
    if (s->cp == NULL || thread == NULL) {
        return sst__lua_raisef(L, SST_EINVAL, "list: %s",
                               s->cp == NULL ? "the saver is closed"
                                             : "the config names no thread_id");
    }
    sst_checkpoint_query q = {.thread_id = thread,
                              .ns = sst__lua_config_string(L, cfg, "checkpoint_ns")};
    if (lua_istable(L, 3)) {
        sst__lua_check_options(L, 3, known, "list");
        lua_getfield(L, 3, "limit");
        q.limit = (size_t)luaL_optinteger(L, -1, 0);
        lua_pop(L, 1);
    }
    lua_newtable(L);
    sst_error err = {0};
    if (sst_checkpointer_list(s->cp, &q, push_record, L, &err) != SST_OK) {
        return sst__lua_raise(L, &err);
    }
    return 1;
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

/*
 * The flush policy of the saver's options table at @p idx ({flush = "on" | "off"}; none or
 * nil: the database's default), or raises naming @p what.
 */
static sst_flush_policy flush_option(lua_State *L, int idx, const char *what) {
    if (lua_isnoneornil(L, idx)) {
        return SST_FLUSH_DEFAULT;
    }
    luaL_checktype(L, idx, LUA_TTABLE);
    lua_getfield(L, idx, "flush");
    const char *f = lua_isnil(L, -1) ? NULL : lua_tostring(L, -1);
    sst_flush_policy p = SST_FLUSH_DEFAULT;
    if (f != NULL && strcmp(f, "on") == 0) {
        p = SST_FLUSH_ON;
    } else if (f != NULL && strcmp(f, "off") == 0) {
        p = SST_FLUSH_OFF;
    } else if (!lua_isnil(L, -1)) {
        sst__lua_raisef(L, SST_EINVAL, "%s: flush must be \"on\" or \"off\", got %s", what,
                        luaL_tolstring(L, -1, NULL));
    }
    lua_pop(L, 1);
    return p;
}

/* SqliteSaver(path [, {flush = "on" | "off"}]): PRAGMA synchronous FULL or NORMAL. */
static int sqlite_saver(lua_State *L) {
    const char *path = luaL_checkstring(L, 1);
    sst_sqlite_opts o;
    sst_sqlite_opts_init(&o);
    o.flush = flush_option(L, 2, "SqliteSaver");
    lsaver *s = new_saver(L);
    sst_error err = {0};
    if ((s->cp = sst_sqlite_saver_open(path, &o, &err)) == NULL) {
        return sst__lua_raise(L, &err);
    }
    return 1;
}

/* PostgresSaver(url [, {flush = "on" | "off"}]): a URL ("postgresql://..."), or "" for
 * libpq's PG* variables; flush is synchronous_commit (default on). */
static int postgres_saver(lua_State *L) {
    const char *url = luaL_checkstring(L, 1);
    sst_postgres_saver_opts o;
    sst_postgres_saver_opts_init(&o);
    o.synchronous_commit = flush_option(L, 2, "PostgresSaver") != SST_FLUSH_OFF;
    lsaver *s = new_saver(L);
    sst_error err = {0};
    if ((s->cp = sst_postgres_saver_open(url, &o, &err)) == NULL) {
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
    lua_createtable(L, 0, 2);
    lua_pushcfunction(L, saver_delete_thread);
    lua_setfield(L, -2, "delete_thread");
    lua_pushcfunction(L, saver_list);
    lua_setfield(L, -2, "list");
    lua_setfield(L, -2, "__index");
    lua_pop(L, 1);
    lua_pushcfunction(L, memory_saver);
    lua_setfield(L, -2, "MemorySaver");
    lua_pushcfunction(L, sqlite_saver);
    lua_setfield(L, -2, "SqliteSaver");
    lua_pushcfunction(L, postgres_saver);
    lua_setfield(L, -2, "PostgresSaver");
}
