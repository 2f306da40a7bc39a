/* SPDX-License-Identifier: MIT */
/*
 * A Lua auth file (langgraph.json "auth": {"path": "./auth.lua"}; docs/auth.md): LangGraph's
 * custom auth in Lua. The file returns a table with
 *
 *   authenticate(request) -> user      request: {method, path, headers = {lowercase = value},
 *                                        query = {name = value}}; user: an identity string or
 *                                        {identity = ..., permissions = {...}, ...}
 *   on = {["*"] = fn, threads = fn | {create = fn, ...}, ["threads.create"] = fn, ...}
 *                                      fn(ctx, value): ctx = {user, resource, action,
 *                                        permissions}; value: the request's body (and path ids)
 *                                        as a table the handler may change; returns nil or
 *                                        true (allowed, no filter), false (403), or a metadata
 *                                        filter {owner = id}, {k = {["$eq"] = v}},
 *                                        {k = {["$contains"] = v}}
 *
 * and either may refuse with error({status = 4xx, message = "..."}). Any other error is a
 * 500 naming the file. One Lua state serves every HTTP thread, under a lock.
 */
#include <microhttpd.h>
#include <stdio.h>
#include <string.h>

#include "auth.h"
#include "lua/lua_int.h"

struct srv_lua_auth {
    pthread_mutex_t mu;
    lua_State *L;
    char *path;
    int ref; /* the auth table, in the registry */
};

void srv_lua_auth_free(srv_lua_auth *l) {
    if (l == NULL) {
        return;
    }
    sst__lua_close(l->L);
    pthread_mutex_destroy(&l->mu);
    sst__free(l->path);
    sst__free(l);
}

srv_lua_auth *srv_lua_auth_load(const char *path, sst_error *err) {
    SST__ERR_LOCAL(err);
    srv_lua_auth *l = sst__calloc(1, sizeof *l);
    if (l == NULL || (l->path = sst__strndup(path, strlen(path))) == NULL ||
        (l->L = sst__lua_newstate(0, false)) == NULL) {
        srv_lua_auth_free(l);
        sst__enomem(err);
        return NULL;
    }
    pthread_mutex_init(&l->mu, NULL);
    lua_State *L = l->L;
    sst__lua_open_proxy(L);
    if (luaL_loadfile(L, path) != LUA_OK || lua_pcall(L, 0, 1, 0) != LUA_OK) {
        sst__error(err, SST_EINVAL, "auth: %s: %s", path,
                   lua_isstring(L, -1) ? lua_tostring(L, -1) : "failed to load");
        srv_lua_auth_free(l);
        return NULL;
    }
    bool ok = lua_istable(L, -1);
    if (ok) {
        lua_getfield(L, -1, "authenticate");
        ok = lua_isfunction(L, -1);
        lua_pop(L, 1);
        lua_getfield(L, -1, "on");
        ok = ok && (lua_isnil(L, -1) || lua_istable(L, -1));
        lua_pop(L, 1);
    }
    if (!ok) {
        sst__error(err, SST_EINVAL,
                   "auth: %s must return a table with a function 'authenticate' (and a table "
                   "'on' of handlers)",
                   path);
        srv_lua_auth_free(l);
        return NULL;
    }
    l->ref = luaL_ref(L, LUA_REGISTRYINDEX);
    return l;
}

/* Fills the refusal from the error at the top of the stack: {status, message} as given, any
 * other error a 500 naming the file and @p what. */
static void refusal(srv_lua_auth *l, const char *what, unsigned *status, char *msg, size_t n) {
    lua_State *L = l->L;
    if (lua_istable(L, -1)) {
        lua_getfield(L, -1, "status");
        lua_getfield(L, -2, "message");
        lua_Integer st = lua_isinteger(L, -2) ? lua_tointeger(L, -2) : 0;
        const char *m = lua_isstring(L, -1) ? lua_tostring(L, -1) : NULL;
        if (st >= 400 && st <= 599) {
            *status = (unsigned)st;
            snprintf(msg, n, "%s", m != NULL ? m : "Forbidden");
            lua_pop(L, 2);
            return;
        }
        lua_pop(L, 2);
    }
    *status = 500;
    snprintf(msg, n, "auth: %s: %s failed: %s", l->path, what,
             lua_isstring(L, -1) ? lua_tostring(L, -1) : "an error that is not a string");
}

static enum MHD_Result header_cb(void *cls, enum MHD_ValueKind kind, const char *key,
                                 const char *value) {
    SST_UNUSED(kind);
    lua_State *L = cls;
    char name[128];
    size_t n = strlen(key);
    if (value == NULL || n >= sizeof name) {
        return MHD_YES;
    }
    for (size_t i = 0; i <= n; i++) {
        name[i] = (char)(key[i] >= 'A' && key[i] <= 'Z' ? key[i] + 32 : key[i]);
    }
    lua_pushstring(L, value);
    lua_setfield(L, -2, name);
    return MHD_YES;
}

static enum MHD_Result query_cb(void *cls, enum MHD_ValueKind kind, const char *key,
                                const char *value) {
    SST_UNUSED(kind);
    lua_State *L = cls;
    lua_pushstring(L, value != NULL ? value : "");
    lua_setfield(L, -2, key);
    return MHD_YES;
}

sst_value *srv_lua_auth_authenticate(srv_lua_auth *l, srv_request *r, unsigned *status, char *msg,
                                     size_t n) {
    pthread_mutex_lock(&l->mu);
    lua_State *L = l->L;
    int top = lua_gettop(L);
    lua_rawgeti(L, LUA_REGISTRYINDEX, l->ref);
    lua_getfield(L, -1, "authenticate");
    lua_createtable(L, 0, 4);
    lua_pushstring(L, r->method);
    lua_setfield(L, -2, "method");
    lua_pushlstring(L, r->url, strcspn(r->url, "?"));
    lua_setfield(L, -2, "path");
    lua_newtable(L);
    if (r->conn != NULL) {
        MHD_get_connection_values(r->conn, MHD_HEADER_KIND, header_cb, L);
    }
    lua_setfield(L, -2, "headers");
    lua_newtable(L);
    if (r->conn != NULL) {
        MHD_get_connection_values(r->conn, MHD_GET_ARGUMENT_KIND, query_cb, L);
    }
    lua_setfield(L, -2, "query");
    sst_value *user = NULL;
    if (lua_pcall(L, 1, 1, 0) != LUA_OK) {
        refusal(l, "authenticate", status, msg, n);
    } else if (lua_isstring(L, -1) && lua_rawlen(L, -1) > 0) {
        sst_error err = {0};
        user = sst__set_take(sst_object_empty(), "identity",
                             sst_string_new(lua_tostring(L, -1), &err), &err);
    } else if (lua_istable(L, -1)) {
        sst_error err = {0};
        user = sst__lua_to_object(L, -1, "the user authenticate returned", &err);
        if (user == NULL) {
            *status = 500;
            snprintf(msg, n, "auth: %s: %s", l->path, err.msg);
        }
    } else {
        *status = 401;
        snprintf(msg, n, "Unauthorized");
    }
    lua_settop(L, top);
    pthread_mutex_unlock(&l->mu);
    if (user != NULL && sst_object_get(user, "permissions") == NULL) {
        sst_error err = {0};
        user = sst__set_take(user, "permissions", sst_array_empty(), &err);
    }
    return user;
}

/* Pushes the most specific handler of @p resource.@p action (nil when none). */
static void push_handler(lua_State *L, const char *resource, const char *action) {
    char full[64];
    snprintf(full, sizeof full, "%s.%s", resource, action);
    lua_getfield(L, -1, "on");
    if (!lua_istable(L, -1)) {
        return; /* nil: no handlers */
    }
    lua_getfield(L, -1, full);
    if (lua_isfunction(L, -1)) {
        lua_remove(L, -2);
        return;
    }
    lua_pop(L, 1);
    lua_getfield(L, -1, resource);
    if (lua_istable(L, -1)) {
        lua_getfield(L, -1, action);
        if (lua_isfunction(L, -1)) {
            lua_remove(L, -2);
            lua_remove(L, -2);
            return;
        }
        lua_pop(L, 1);
    }
    if (lua_isfunction(L, -1)) {
        lua_remove(L, -2);
        return;
    }
    lua_pop(L, 1);
    lua_getfield(L, -1, "*");
    lua_remove(L, -2);
}

srv_lua_verdict srv_lua_auth_authorize(srv_lua_auth *l, const sst_value *user, const char *resource,
                                       const char *action, sst_value **value, sst_value **filter,
                                       unsigned *status, char *msg, size_t n) {
    *filter = NULL;
    pthread_mutex_lock(&l->mu);
    lua_State *L = l->L;
    int top = lua_gettop(L);
    lua_rawgeti(L, LUA_REGISTRYINDEX, l->ref);
    push_handler(L, resource, action);
    srv_lua_verdict v = SRV_LUA_ALLOW;
    if (lua_isfunction(L, -1)) {
        lua_createtable(L, 0, 4);
        sst__lua_push_table(L, user);
        lua_setfield(L, -2, "user");
        sst__lua_push_table(L, sst_object_get(user, "permissions"));
        lua_setfield(L, -2, "permissions");
        lua_pushstring(L, resource);
        lua_setfield(L, -2, "resource");
        lua_pushstring(L, action);
        lua_setfield(L, -2, "action");
        sst__lua_push_table(L, *value);
        lua_pushvalue(L, -1);
        lua_insert(L, top + 2); /* keep the value table below the call */
        char what[80];
        snprintf(what, sizeof what, "the handler of %s.%s", resource, action);
        sst_error err = {0};
        if (lua_pcall(L, 2, 1, 0) != LUA_OK) {
            refusal(l, what, status, msg, n);
            v = SRV_LUA_REFUSE;
        } else if (lua_isboolean(L, -1) && !lua_toboolean(L, -1)) {
            *status = 403;
            snprintf(msg, n, "Forbidden");
            v = SRV_LUA_REFUSE;
        } else if (lua_istable(L, -1)) {
            *filter = sst__lua_to_object(L, -1, "the filter", &err);
        } else if (!lua_isnil(L, -1) && !lua_isboolean(L, -1)) {
            err.code = SST_ETYPE;
            snprintf(err.msg, sizeof err.msg, "returned a %s (want nil, a boolean or a filter)",
                     luaL_typename(L, -1));
        }
        if (v == SRV_LUA_ALLOW && err.code == SST_OK) {
            sst_value *changed = sst__lua_to_object(L, top + 2, "the value", &err);
            if (changed != NULL) {
                sst_value_unref(*value);
                *value = changed;
            }
        }
        if (v == SRV_LUA_ALLOW && err.code != SST_OK) {
            sst_value_unref(*filter);
            *filter = NULL;
            *status = 500;
            snprintf(msg, n, "auth: %s: %s: %s", l->path, what, err.msg);
            v = SRV_LUA_REFUSE;
        }
    }
    lua_settop(L, top);
    pthread_mutex_unlock(&l->mu);
    return v;
}
