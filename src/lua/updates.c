/* SPDX-License-Identifier: MIT */
/*
 * The values of update_state and bulk_update_state from Lua: an update is
 * { values = table | Command | nil, as_node = name }, as LangGraph's
 * StateUpdate; a Command's update is the values and its goto routes the
 * update ({"values", "as_node", "goto"} for sst_graph_bulk_update_state).
 */
#include "lua_int.h"
#include "values/build.h"

/* {"values", "as_node", "goto"?} from the values at @p vidx (any) and @p as_node. */
static sst_value *entry(lua_State *L, int vidx, const char *as_node, sst_error *err) {
    sst_value *values = NULL, *go = NULL;
    vidx = lua_absindex(L, vidx);
    if (sst__lua_is_command(L, vidx)) {
        bool failed = false;
        if (lua_getfield(L, vidx, "update") != LUA_TNIL) {
            values = sst__lua_to_object(L, -1, "Command update", err);
            failed = values == NULL;
        }
        lua_pop(L, 1);
        if (!failed) {
            if (lua_getfield(L, vidx, "goto") != LUA_TNIL) {
                go = sst__lua_to_value(L, -1, "Command goto", err);
                failed = go == NULL;
            }
            lua_pop(L, 1);
        }
        if (failed) {
            sst_value_unref(values);
            return NULL;
        }
    } else if (!lua_isnoneornil(L, vidx) &&
               (values = sst__lua_to_object(L, vidx, "values", err)) == NULL) {
        return NULL;
    }
    sst_value *e =
        sst__set_take(sst_object_empty(), "values", values != NULL ? values : sst_null(), err);
    if (as_node != NULL) {
        e = sst__set_take(e, "as_node", sst_string_new(as_node, err), err);
    }
    return go != NULL ? sst__set_take(e, "goto", go, err) : e;
}

sst_value *sst__lua_command_value(lua_State *L, int idx, sst_error *err) {
    static const char *const keys[] = {"update", "goto", "resume"};
    idx = lua_absindex(L, idx);
    sst_value *body = sst_object_empty();
    for (size_t i = 0; i < 3 && body != NULL; i++) {
        if (lua_getfield(L, idx, keys[i]) != LUA_TNIL) {
            body = sst__set_take(body, keys[i], sst__lua_to_value(L, -1, keys[i], err), err);
        }
        lua_pop(L, 1);
    }
    return sst__set_take(sst_object_empty(), SST_LUA_COMMAND_KEY, body, err);
}

bool sst__lua_push_command(lua_State *L, const sst_value *v) {
    const sst_value *body = sst_object_get(v, SST_LUA_COMMAND_KEY);
    if (sst_object_len(v) != 1 || !sst_is_object(body)) {
        return false;
    }
    lua_createtable(L, 0, 3);
    for (size_t i = 0; i < sst_object_len(body); i++) {
        sst__lua_push_value(L, sst_object_value_at(body, i));
        lua_setfield(L, -2, sst_string_cstr(sst_object_key_at(body, i)));
    }
    luaL_setmetatable(L, SST_LUA_COMMAND);
    return true;
}

/* True when the table at @p idx is a list of updates (its first item is a table). */
static bool is_update_list(lua_State *L, int idx) {
    if (!lua_istable(L, idx) || sst__lua_is_command(L, idx) || lua_rawlen(L, idx) == 0) {
        return false;
    }
    bool list = lua_rawgeti(L, idx, 1) == LUA_TTABLE;
    lua_pop(L, 1);
    return list;
}

/* The updates of one superstep: a list of {values, as_node} tables. */
static sst_value *update_list(lua_State *L, int idx, sst_error *err) {
    sst_value *out = sst_array_empty();
    idx = lua_absindex(L, idx);
    for (lua_Integer i = 1; i <= (lua_Integer)lua_rawlen(L, idx) && out != NULL; i++) {
        if (lua_rawgeti(L, idx, i) != LUA_TTABLE) {
            lua_pop(L, 1);
            sst_value_unref(out);
            sst__error(err, SST_ETYPE, "update %d: expected {values = ..., as_node = ...}", (int)i);
            return NULL;
        }
        lua_getfield(L, -1, "as_node");
        const char *as_node = lua_tostring(L, -1);
        lua_getfield(L, -2, "values");
        out = sst__push_take(out, entry(L, -1, as_node, err), err);
        lua_pop(L, 3);
    }
    return out;
}

sst_value *sst__lua_update_values(lua_State *L, int idx, const char **as_node, sst_error *err) {
    if (lua_isnoneornil(L, idx)) {
        return NULL;
    }
    if (is_update_list(L, idx)) {
        return update_list(L, idx, err);
    }
    if (sst__lua_is_command(L, idx)) { /* one update: a list of one, with its node */
        sst_value *list = sst__push_take(sst_array_empty(), entry(L, idx, *as_node, err), err);
        *as_node = NULL;
        return list;
    }
    return sst__lua_to_object(L, idx, "values", err);
}

sst_value *sst__lua_supersteps(lua_State *L, int idx, sst_error *err) {
    luaL_checktype(L, idx, LUA_TTABLE);
    idx = lua_absindex(L, idx);
    sst_value *out = sst_array_empty();
    for (lua_Integer i = 1; i <= (lua_Integer)lua_rawlen(L, idx) && out != NULL; i++) {
        if (lua_rawgeti(L, idx, i) != LUA_TTABLE) {
            lua_pop(L, 1);
            sst_value_unref(out);
            sst__error(err, SST_ETYPE, "superstep %d: expected a list of updates", (int)i);
            return NULL;
        }
        out = sst__push_take(out, update_list(L, -1, err), err);
        lua_pop(L, 1);
    }
    return out;
}
