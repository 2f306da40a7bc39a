/* SPDX-License-Identifier: MIT */
/* Agent tools written in Lua; see sst_lua_tools_load in superstep/lua.h. */
#include <stdio.h>

#include "lua_int.h"
#include "superstep/json.h"

struct sst_lua_tools {
    lua_State *L;
    pthread_mutex_t mu; /* one call at a time into L */
    sst_toolset *set;
};

typedef struct tool_ref {
    sst_lua_tools *owner;
    int fn_ref;
} tool_ref;

static sst_value *call_tool(const sst_value *args, void *ud, sst_error *err) {
    tool_ref *t = ud;
    lua_State *L = t->owner->L;
    pthread_mutex_lock(&t->owner->mu);
    sst_value *out = sst__lua_call_tool(L, t->fn_ref, args, err);
    pthread_mutex_unlock(&t->owner->mu);
    return out;
}

void sst_lua_tools_free(sst_lua_tools *t) {
    if (t == NULL) {
        return;
    }
    sst_toolset_free(t->set);
    sst__lua_close(t->L); /* frees the tool_refs (userdata) */
    pthread_mutex_destroy(&t->mu);
    sst__free(t);
}

const sst_toolset *sst_lua_tools_set(const sst_lua_tools *t) {
    return t->set;
}

static sst_lua_tools *fail(sst_lua_tools *t, sst_error *err, sst_code code, const char *fmt,
                           const char *a, const char *b) {
    sst__error(err, code, fmt, a, b);
    sst_lua_tools_free(t);
    return NULL;
}

sst_lua_tools *sst_lua_tools_load(const char *path, sst_error *err) {
    return sst_lua_tools_load_opts(path, NULL, err);
}

sst_lua_tools *sst_lua_tools_load_opts(const char *path, const sst_lua_opts *opts, sst_error *err) {
    SST__ERR_LOCAL(err); /* a failing tool's message is quoted in the one returned */
    size_t limit = opts != NULL ? opts->memory_limit : 0;
    sst_lua_tools *t = sst__calloc(1, sizeof *t);
    if (t == NULL) {
        sst__enomem(err);
        return NULL;
    }
    pthread_mutex_init(&t->mu, NULL);
    if ((t->L = sst__lua_newstate(limit, limit != 0)) == NULL ||
        (t->set = sst_toolset_new(err)) == NULL) {
        sst_lua_tools_free(t);
        sst__enomem(err);
        return NULL;
    }
    lua_State *L = t->L;
    luaL_requiref(L, "superstep", luaopen_superstep, 1);
    lua_pop(L, 1);
    lua_pushcfunction(L, sst__lua_traceback);
    int rc = luaL_loadfile(L, path);
    if (rc == LUA_ERRFILE) {
        return fail(t, err, SST_EIO, "cannot open tools script '%s'%s", path, "");
    } else if (rc != LUA_OK) {
        return fail(t, err, SST_EPARSE, "%s%s", lua_tostring(L, -1), "");
    }
    bool over_limit;
    if ((rc = sst__lua_pcall(L, 0, 1, 1, &over_limit)) != LUA_OK) {
        char buf[SST_ERROR_MSG_MAX];
        const char *msg;
        sst_code code = sst__lua_pcall_error(L, rc, over_limit, buf, sizeof buf, &msg);
        return fail(t, err, code == SST_ETASK ? SST_EINVAL : code, "%s%s", msg, "");
    }
    if (!lua_istable(L, -1)) {
        return fail(t, err, SST_EINVAL, "tools script '%s' must return a list of tools%s", path,
                    "");
    }
    int list = lua_gettop(L);
    for (lua_Integer i = 1; i <= (lua_Integer)lua_rawlen(L, list); i++) {
        lua_rawgeti(L, list, i);
        const char *name, *description;
        sst_value *params;
        tool_ref *ref = lua_newuserdatauv(L, sizeof *ref, 0);
        ref->owner = t;
        sst_code code = sst__lua_read_tool(L, -2, &name, &description, &ref->fn_ref, &params, err);
        if (code == SST_ENOTFOUND) {
            return fail(t, err, SST_EINVAL, "tools script '%s': every tool needs a name and fn%s",
                        path, "");
        }
        luaL_ref(L, LUA_REGISTRYINDEX); /* keeps the userdata (ref) alive with the state */
        if (code == SST_OK) {
            code = sst_toolset_add(t->set, name, description, params, call_tool, ref, err);
        }
        sst_value_unref(params);
        if (code != SST_OK) {
            char msg[SST_ERROR_MSG_MAX];
            snprintf(msg, sizeof msg, "%s", err->msg);
            return fail(t, err, code, "tools script '%s': %s", path, msg);
        }
        lua_settop(L, list);
    }
    lua_settop(L, 0);
    return t;
}
