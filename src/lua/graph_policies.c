/* SPDX-License-Identifier: MIT */
/*
 * Node policies in Lua: the timeout option of add_node, set_node_defaults
 * and Send (LangGraph's TimeoutPolicy), and the debug hook that stops a Lua
 * node that runs out of time, spinning loops included.
 */
#include <string.h>

#include "lua_int.h"

/* A positive number of seconds from the table at @p idx, field @p key (0 when absent). */
static double seconds_field(lua_State *L, int idx, const char *key, const char *what) {
    double s = 0;
    if (lua_getfield(L, idx, key) != LUA_TNIL) {
        if (!lua_isnumber(L, -1) || !((s = lua_tonumber(L, -1)) > 0) || s > 1e9) {
            sst__lua_raisef(L, SST_EINVAL, "%s: timeout %s must be a positive number of seconds",
                            what, key);
        }
    }
    lua_pop(L, 1);
    return s;
}

void sst__lua_read_timeout(lua_State *L, int idx, const char *what, sst_timeout_policy *out) {
    static const char *const known[] = {"run_timeout", "idle_timeout", "refresh_on", NULL};
    memset(out, 0, sizeof *out);
    idx = lua_absindex(L, idx);
    if (lua_isnil(L, idx)) {
        return;
    }
    if (lua_type(L, idx) == LUA_TNUMBER) { /* LangGraph: a number is a run timeout */
        double s = lua_tonumber(L, idx);
        if (!(s > 0) || s > 1e9) {
            sst__lua_raisef(L, SST_EINVAL, "%s: timeout must be a positive number of seconds",
                            what);
        }
        out->run_timeout_s = s;
        return;
    }
    if (!lua_istable(L, idx)) {
        sst__lua_raisef(L, SST_EINVAL,
                        "%s: timeout: expected seconds or {run_timeout, idle_timeout, refresh_on}, "
                        "got %s",
                        what, luaL_typename(L, idx));
    }
    sst__lua_check_options(L, idx, known, what);
    out->run_timeout_s = seconds_field(L, idx, "run_timeout", what);
    out->idle_timeout_s = seconds_field(L, idx, "idle_timeout", what);
    if (lua_getfield(L, idx, "refresh_on") != LUA_TNIL) {
        const char *r = lua_tostring(L, -1);
        if (r == NULL || (strcmp(r, "auto") != 0 && strcmp(r, "heartbeat") != 0)) {
            sst__lua_raisef(L, SST_EINVAL,
                            "%s: timeout refresh_on must be \"auto\" or \"heartbeat\"", what);
        }
        out->heartbeat_only = strcmp(r, "heartbeat") == 0;
    }
    lua_pop(L, 1);
    if (out->run_timeout_s == 0 && out->idle_timeout_s == 0) {
        sst__lua_raisef(L, SST_EINVAL, "%s: timeout needs run_timeout or idle_timeout", what);
    }
}

/* Every 1000 instructions of a node with a timeout: stop it once its time ran out. */
static void timeout_hook(lua_State *L, lua_Debug *ar) {
    SST_UNUSED(ar);
    sst_node_ctx *ctx = sst__lua_running_ctx(L);
    if (ctx != NULL && sst_node_cancelled(ctx)) {
        /* The engine replaces this error with the timeout's own (kind, elapsed). */
        sst__lua_raisef(L, SST_ETIMEOUT, "node '%s' timed out", sst_node_name(ctx));
    }
}

void sst__lua_watch_timeout(lua_State *co, sst_node_ctx *ctx) {
    if (sst_node_timeout(ctx) != NULL) {
        lua_sethook(co, timeout_hook, LUA_MASKCOUNT, 1000);
    }
}
