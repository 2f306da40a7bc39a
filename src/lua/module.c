/* SPDX-License-Identifier: MIT */
/*
 * luaopen_superstep: the module table (StateGraph, START, END, Send,
 * Command, Overwrite, interrupt, reducers, savers, null/array/object, JSON helpers).
 */
#include "lua_int.h"
#include "superstep/json.h"
#include "superstep/version.h"

static char null_token;

/*
 * superstep.sleep(seconds): waits (a number >= 0, fractions allowed). Inside a node it
 * wakes every 10 ms to ask whether the node ran out of time or its run was cancelled,
 * and raises then (SST_ECANCELLED), so a sleeping node never holds up a cancel.
 */
static int l_sleep(lua_State *L) {
    lua_Number s = luaL_checknumber(L, 1);
    luaL_argcheck(L, s >= 0 && s <= 1e9, 1, "seconds from 0 to 1e9 expected");
    sst_node_ctx *ctx = sst__lua_running_ctx(L);
    uint64_t left = (uint64_t)(s * 1000.0 + 0.5);
    while (left > 0) {
        if (ctx != NULL && sst_node_cancelled(ctx)) {
            return sst__lua_raisef(L, SST_ECANCELLED, "node '%s' was cancelled while sleeping",
                                   sst_node_name(ctx));
        }
        uint64_t slice = ctx != NULL && left > 10 ? 10 : left;
        sst__sleep_ms(slice);
        left -= slice;
    }
    return 0;
}

/* superstep.Send(node, payload): a value the graph layer routes. */
static int l_send(lua_State *L) {
    const char *node = luaL_checkstring(L, 1);
    sst_error err = {0};
    /* A Command payload stays a Command for the node that receives it (LangGraph). */
    sst_value *arg = sst__lua_is_command(L, 2) ? sst__lua_command_value(L, 2, &err)
                                               : sst__lua_to_value(L, 2, "Send payload", &err);
    sst_timeout_policy tp = {0};
    if (lua_istable(L, 3)) { /* Send(node, arg, {timeout = ...}) */
        static const char *const known[] = {"timeout", NULL};
        sst__lua_check_options(L, 3, known, "Send");
        lua_getfield(L, 3, "timeout");
        sst__lua_read_timeout(L, -1, "Send", &tp);
        lua_pop(L, 1);
    } else if (!lua_isnoneornil(L, 3)) {
        sst_value_unref(arg);
        return luaL_typeerror(L, 3, "table of Send options");
    }
    sst_value *s = arg != NULL ? sst_send_new_timeout(node, arg, &tp, &err) : NULL;
    if (s == NULL) {
        return sst__lua_raise(L, &err);
    }
    sst__lua_push_value(L, s);
    sst_value_unref(s);
    return 1;
}

/*
 * superstep.Overwrite(value): {"__overwrite__": value}, a write that sets a
 * field bypassing its reducer (reducer.h).
 */
static int l_overwrite(lua_State *L) {
    luaL_checkany(L, 1);
    sst_error err = {0};
    sst_value *v = sst__lua_to_value(L, 1, "Overwrite value", &err);
    sst_value *o = v != NULL ? sst_overwrite_new(v, &err) : NULL;
    if (o == NULL) {
        return sst__lua_raise(L, &err);
    }
    sst__lua_push_owned(L, o);
    return 1;
}

/* superstep.Command{update = ..., ["goto"] = ..., resume = ...} */
static int l_command(lua_State *L) {
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_pushnil(L);
    while (lua_next(L, 1) != 0) {
        lua_pop(L, 1);
        const char *k = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "";
        if (strcmp(k, "update") != 0 && strcmp(k, "goto") != 0 && strcmp(k, "resume") != 0 &&
            strcmp(k, "graph") != 0) {
            return luaL_error(L, "Command: unknown key '%s' (expected update, goto, resume, graph)",
                              lua_type(L, -1) == LUA_TSTRING ? k : luaL_typename(L, -1));
        }
    }
    lua_createtable(L, 0, 3);
    lua_pushnil(L);
    while (lua_next(L, 1) != 0) {
        lua_pushvalue(L, -2);
        lua_insert(L, -2);
        lua_rawset(L, -4);
    }
    luaL_setmetatable(L, SST_LUA_COMMAND);
    return 1;
}

/* superstep.array(t) / superstep.object(t): mark a table's JSON kind. */
static int mark(lua_State *L, const char *meta) {
    if (lua_isnoneornil(L, 1)) {
        lua_newtable(L);
    } else {
        luaL_checktype(L, 1, LUA_TTABLE);
        lua_settop(L, 1);
    }
    luaL_setmetatable(L, meta);
    return 1;
}

static int l_array(lua_State *L) {
    return mark(L, SST_LUA_ARRAY);
}

static int l_object(lua_State *L) {
    return mark(L, SST_LUA_OBJECT);
}

static int l_json_encode(lua_State *L) {
    sst_error err = {0};
    sst_value *v = sst__lua_to_value(L, 1, "json_encode", &err);
    char *text = v != NULL ? sst_json_write(v, SST_JSON_COMPACT, NULL, &err) : NULL;
    sst_value_unref(v);
    return sst__lua_push_text(L, text, &err);
}

static int l_json_decode(lua_State *L) {
    size_t len;
    const char *text = luaL_checklstring(L, 1, &len);
    sst_error err = {0};
    sst_value *v = sst_json_read(text, len, NULL, &err);
    if (v == NULL) {
        return sst__lua_raise(L, &err);
    }
    sst__lua_push_table(L, v);
    sst_value_unref(v);
    return 1;
}

/* superstep.to_table(v): a deep copy of a state proxy as plain tables. */
static int l_to_table(lua_State *L) {
    const sst_value *v = sst__lua_proxy_value(L, 1);
    if (v == NULL) {
        lua_settop(L, 1);
        return 1;
    }
    sst__lua_push_table(L, v);
    return 1;
}

/* superstep.memory_limit(): the bytes this state may hold, or nil (a host's own state). */
static int l_memory_limit(lua_State *L) {
    const sst__lua_mem *m = sst__lua_mem_of(L);
    if (m == NULL) {
        lua_pushnil(L);
    } else if (m->limit > (size_t)LUA_MAXINTEGER) {
        lua_pushinteger(L, LUA_MAXINTEGER);
    } else {
        lua_pushinteger(L, (lua_Integer)m->limit);
    }
    return 1;
}

const char *const sst__lua_reducer_names[SST__LUA_REDUCERS] = {
    "replace", "append", "sum", "merge", "deep_merge", "unique", "add_messages"};

static void open_reducers(lua_State *L) {
    const char *const *names = sst__lua_reducer_names;
    lua_createtable(L, 0, SST__LUA_REDUCERS);
    for (size_t i = 0; i < SST__LUA_REDUCERS; i++) {
        lua_pushlightuserdata(L, (void *)sst_reducer_builtin(names[i]));
        lua_setfield(L, -2, names[i]);
    }
    lua_setfield(L, -2, "reducers");
}

int luaopen_superstep(lua_State *L) {
    if (sst__lua_runtime(L) == NULL) {
        sst_error err = {0};
        if (sst__lua_runtime_new(L, NULL, &err) == NULL) {
            return sst__lua_raise(L, &err);
        }
    }
    if (lua_getfield(L, LUA_REGISTRYINDEX, SST_LUA_GRAPHS) != LUA_TTABLE) {
        lua_newtable(L);
        lua_setfield(L, LUA_REGISTRYINDEX, SST_LUA_GRAPHS);
    }
    lua_pop(L, 1);
    /* null is a unique light userdata, printed as "null" through the proxy path. */
    lua_pushlightuserdata(L, &null_token);
    lua_setfield(L, LUA_REGISTRYINDEX, "superstep.null");
    luaL_newmetatable(L, SST_LUA_ARRAY);
    lua_pop(L, 1);
    luaL_newmetatable(L, SST_LUA_OBJECT);
    lua_pop(L, 1);
    luaL_newmetatable(L, SST_LUA_COMMAND);
    lua_pop(L, 1);
    sst__lua_open_errors(L);
    sst__lua_open_proxy(L);
    sst__lua_open_app(L);

    static const luaL_Reg funcs[] = {{"Send", l_send},
                                     {"Command", l_command},
                                     {"Overwrite", l_overwrite},
                                     {"interrupt", sst__lua_interrupt},
                                     {"push_message", sst__lua_push_message},
                                     {"array", l_array},
                                     {"object", l_object},
                                     {"json_encode", l_json_encode},
                                     {"json_decode", l_json_decode},
                                     {"to_table", l_to_table},
                                     {"memory_limit", l_memory_limit},
                                     {"sleep", l_sleep},
                                     {NULL, NULL}};
    luaL_newlib(L, funcs);
    sst__lua_open_graph(L);
    sst__lua_open_savers(L);
    sst__lua_open_caches(L);
    sst__lua_open_stores(L);
    sst__lua_open_agent(L);
    sst__lua_open_middleware(L);
    sst__lua_open_mcp(L);
    sst__lua_open_functional(L);
    open_reducers(L);
    lua_pushstring(L, SST_START);
    lua_setfield(L, -2, "START");
    lua_pushstring(L, SST_END);
    lua_setfield(L, -2, "END");
    lua_pushstring(L, SST_LUA_PARENT);
    lua_setfield(L, -2, "PARENT");
    lua_getfield(L, LUA_REGISTRYINDEX, "superstep.null");
    lua_setfield(L, -2, "null");
    lua_getfield(L, LUA_REGISTRYINDEX, "superstep.is_worker");
    lua_pushboolean(L, lua_toboolean(L, -1));
    lua_remove(L, -2);
    lua_setfield(L, -2, "worker");
    lua_pushstring(L, sst_version());
    lua_setfield(L, -2, "version");
    return 1;
}
