/* SPDX-License-Identifier: MIT */
/*
 * Errors raised to Lua: objects, not strings, so a script can tell kinds
 * apart. An error object is a table { code = "SST_ELIMIT", message = "...",
 * node = "..." (when a node failed) } whose metatable gives tostring() the
 * message, so code that matched the text of string errors keeps working.
 */
#include <stdarg.h>
#include <stdio.h>

#include "lua_int.h"

static int error_tostring(lua_State *L) {
    lua_getfield(L, 1, "message");
    if (!lua_isstring(L, -1)) {
        lua_pushstring(L, "superstep error");
    }
    return 1;
}

void sst__lua_open_errors(lua_State *L) {
    luaL_newmetatable(L, SST_LUA_ERROR);
    lua_pushcfunction(L, error_tostring);
    lua_setfield(L, -2, "__tostring");
    lua_pushstring(L, "superstep.Error");
    lua_setfield(L, -2, "__name");
    lua_pop(L, 1);
}

void sst__lua_push_error(lua_State *L, sst_code code, const char *msg, const char *node) {
    lua_createtable(L, 0, 3);
    lua_pushstring(L, sst_code_name(code));
    lua_setfield(L, -2, "code");
    lua_pushstring(L, msg);
    lua_setfield(L, -2, "message");
    if (node != NULL) {
        lua_pushstring(L, node);
        lua_setfield(L, -2, "node");
    }
    luaL_setmetatable(L, SST_LUA_ERROR);
}

int sst__lua_raise(lua_State *L, const sst_error *err) {
    sst__lua_mem *m = sst__lua_mem_of(L);
    if (m != NULL && err->code == SST_ENOMEM) {
        m->enomem++; /* the protected call that fails of it reports SST_ENOMEM */
    }
    sst__lua_push_error(L, err->code, err->msg, NULL);
    return lua_error(L);
}

int sst__lua_push_text(lua_State *L, char *text, const sst_error *err) {
    if (text == NULL) {
        return sst__lua_raise(L, err);
    }
    lua_pushstring(L, text);
    sst_free(text);
    return 1;
}

int sst__lua_raisef(lua_State *L, sst_code code, const char *fmt, ...) {
    sst_error err;
    sst_error_clear(&err);
    va_list ap;
    va_start(ap, fmt);
    sst__verror(&err, code, fmt, ap);
    va_end(ap);
    return sst__lua_raise(L, &err);
}

int sst__lua_raise_enomem(lua_State *L) {
    sst_error err;
    sst_error_clear(&err);
    sst__enomem(&err);
    return sst__lua_raise(L, &err);
}
