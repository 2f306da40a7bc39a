/* SPDX-License-Identifier: MIT */
/*
 * superstep.mcp_tools{command = {...} | url = "...", ...}: an MCP server's
 * tools for create_react_agent{tools = {...}} (superstep/mcp.h):
 *   local fs = superstep.mcp_tools{ command = {"npx", "server-everything"},
 *                                   env = {"TOKEN=..."}, cwd = "/tmp",
 *                                   prefix = "ev_", timeout_ms = 60000 }
 *   local web = superstep.mcp_tools{ url = "http://127.0.0.1:3001/mcp",
 *                                    headers = {"Authorization: Bearer ..."} }
 * The object also lists and calls the tools itself: fs:list_tools(),
 * fs:call("echo", {message = "hi"}), fs:server_info(), fs:close().
 */
#include "superstep/mcp.h"
#include "lua_int.h"

#define SST_LUA_MCP "superstep.mcp"

typedef struct lmcp {
    sst_mcp_client *client; /* NULL once closed */
    char prefix[64];
} lmcp;

static lmcp *check_mcp(lua_State *L, int idx) {
    lmcp *m = luaL_checkudata(L, idx, SST_LUA_MCP);
    if (m->client == NULL) {
        luaL_error(L, "mcp: the connection is closed");
    }
    return m;
}

static int mcp_close(lua_State *L) {
    lmcp *m = luaL_checkudata(L, 1, SST_LUA_MCP);
    sst_mcp_close(m->client);
    m->client = NULL;
    return 0;
}

/* A list of strings at field @p key of the options (NULL-terminated, in a scratch
 * userdata left on the stack), or NULL when absent. */
static const char **string_list(lua_State *L, const char *key, const char *what) {
    if (lua_getfield(L, 1, key) == LUA_TNIL) {
        lua_pop(L, 1);
        return NULL;
    }
    if (!lua_istable(L, -1)) {
        luaL_error(L, "mcp_tools: %s must be a list of strings", what);
    }
    size_t n;
    const char **list = sst__lua_string_list(L, -1, &n, what);
    const char **out = lua_newuserdatauv(L, (n + 1) * sizeof *out, 0);
    memcpy(out, list, n * sizeof *out);
    out[n] = NULL;
    return out; /* the strings stay alive in the options table */
}

static int mcp_tools(lua_State *L) {
    luaL_checktype(L, 1, LUA_TTABLE);
    static const char *const known[] = {"command",    "url",    "env",  "cwd", "headers",
                                        "timeout_ms", "prefix", "name", NULL};
    sst__lua_check_options(L, 1, known, "mcp_tools");
    sst_mcp_opts o;
    sst_mcp_opts_init(&o);
    const char **argv = string_list(L, "command", "command");
    lua_getfield(L, 1, "url");
    const char *url = luaL_optstring(L, -1, NULL);
    if ((argv == NULL) == (url == NULL)) {
        return luaL_error(L, "mcp_tools: give either command = {...} or url = \"...\"");
    }
    o.env = string_list(L, "env", "env");
    o.headers = string_list(L, "headers", "headers");
    lua_getfield(L, 1, "cwd");
    o.cwd = luaL_optstring(L, -1, NULL);
    lua_getfield(L, 1, "name");
    o.name = luaL_optstring(L, -1, NULL);
    lua_getfield(L, 1, "timeout_ms");
    lua_Integer timeout = luaL_optinteger(L, -1, 0);
    if (timeout < 0) {
        return luaL_error(L, "mcp_tools: timeout_ms must be positive");
    }
    o.timeout_ms = (long)timeout;
    lua_getfield(L, 1, "prefix");
    const char *prefix = luaL_optstring(L, -1, "");
    if (strlen(prefix) >= sizeof((lmcp *)0)->prefix) {
        return luaL_error(L, "mcp_tools: prefix is too long");
    }
    lmcp *m = lua_newuserdatauv(L, sizeof *m, 0);
    memset(m, 0, sizeof *m);
    luaL_setmetatable(L, SST_LUA_MCP);
    snprintf(m->prefix, sizeof m->prefix, "%s", prefix);
    sst_error err = {0};
    m->client =
        argv != NULL ? sst_mcp_connect_stdio(argv, &o, &err) : sst_mcp_connect_http(url, &o, &err);
    if (m->client == NULL) {
        return sst__lua_raise(L, &err);
    }
    return 1;
}

sst_code sst__lua_mcp_add(lua_State *L, int idx, struct sst_toolset *tools, sst_error *err) {
    lmcp *m = luaL_testudata(L, idx, SST_LUA_MCP);
    if (m == NULL) {
        return SST_ENOTFOUND;
    }
    if (m->client == NULL) {
        return sst__error(err, SST_EINVAL, "mcp: the connection is closed");
    }
    return sst_toolset_add_mcp(tools, m->client, m->prefix[0] != '\0' ? m->prefix : NULL, err);
}

static int mcp_list_tools(lua_State *L) {
    lmcp *m = check_mcp(L, 1);
    sst_error err = {0};
    sst_value *list = sst_mcp_list_tools(m->client, &err);
    if (list == NULL) {
        return sst__lua_raise(L, &err);
    }
    sst__lua_push_table(L, list);
    sst_value_unref(list);
    return 1;
}

static int mcp_call(lua_State *L) {
    lmcp *m = check_mcp(L, 1);
    const char *name = luaL_checkstring(L, 2);
    sst_error err = {0};
    sst_value *args =
        lua_isnoneornil(L, 3) ? sst_object_empty() : sst__lua_to_object(L, 3, "arguments", &err);
    if (args == NULL) {
        return sst__lua_raise(L, &err);
    }
    sst__lua_push_owned(L, args); /* freed by the collector, even when the call fails */
    sst_value *out = sst_mcp_call_tool(m->client, name, args, &err);
    if (out == NULL) {
        return sst__lua_raise(L, &err);
    }
    sst__lua_push_table(L, out);
    sst_value_unref(out);
    return 1;
}

static int mcp_server_info(lua_State *L) {
    lmcp *m = check_mcp(L, 1);
    sst__lua_push_table(L, sst_mcp_server_info(m->client));
    return 1;
}

void sst__lua_open_mcp(lua_State *L) {
    luaL_newmetatable(L, SST_LUA_MCP);
    static const luaL_Reg methods[] = {{"list_tools", mcp_list_tools},
                                       {"call", mcp_call},
                                       {"server_info", mcp_server_info},
                                       {"close", mcp_close},
                                       {NULL, NULL}};
    luaL_newlib(L, methods);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, mcp_close);
    lua_setfield(L, -2, "__gc");
    lua_pop(L, 1);
    lua_pushcfunction(L, mcp_tools);
    lua_setfield(L, -2, "mcp_tools");
}
