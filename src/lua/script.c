/* SPDX-License-Identifier: MIT */
/* sst_lua_script: a script file loaded into its own state, and the graph it returned. */
#include <errno.h>
#include <stdio.h>

#include <lualib.h>

#include "lua_int.h"

struct sst_lua_script {
    lua_State *L;
    sst__lua_app *app; /* kept alive by the registry reference */
    int app_ref;
};

void sst_lua_script_free(sst_lua_script *s) {
    if (s == NULL) {
        return;
    }
    sst__lua_close(s->L);
    sst__free(s);
}

/* Compiles a returned StateGraph with default options (protected). */
static int compile_default(lua_State *L) {
    return sst__lua_compile(L, 1, 0);
}

void sst_lua_opts_init(sst_lua_opts *o) {
    o->memory_limit = 0;
}

/* The error of a failed sst__lua_pcall while loading. */
static sst_code load_error(lua_State *L, int rc, bool over_limit, sst_error *err) {
    return sst__lua_call_failed(L, rc, over_limit, SST_EINVAL, err, "%s", "");
}

sst_lua_script *sst_lua_script_load(const char *path, sst_error *err) {
    return sst_lua_script_load_opts(path, NULL, err);
}

sst_lua_script *sst_lua_script_load_opts(const char *path, const sst_lua_opts *opts,
                                         sst_error *err) {
    size_t limit = opts != NULL ? opts->memory_limit : 0;
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        char buf[128];
        const char *why = strerror_r(errno, buf, sizeof buf); /* the GNU variant */
        sst__error(err, SST_EIO, "cannot open script '%s': %s", path, why);
        return NULL;
    }
    fclose(f);
    sst_lua_script *s = sst__calloc(1, sizeof *s);
    lua_State *L = s != NULL ? sst__lua_newstate(limit, limit != 0) : NULL;
    if (L == NULL) {
        sst__free(s);
        sst__enomem(err);
        return NULL;
    }
    s->L = L;
    sst__lua_rt *rt = sst__lua_runtime_new(L, path, err);
    if (rt == NULL) {
        sst_lua_script_free(s);
        return NULL;
    }
    rt->memory_limit = limit;
    rt->memory_fixed = limit != 0;
    luaL_requiref(L, "superstep", luaopen_superstep, 1);
    lua_pop(L, 1);
    lua_pushcfunction(L, sst__lua_traceback);
    int rc = luaL_loadfile(L, path);
    if (rc != LUA_OK) {
        sst__error(err, rc == LUA_ERRSYNTAX ? SST_EPARSE : SST_EIO, "%s", lua_tostring(L, -1));
        sst_lua_script_free(s);
        return NULL;
    }
    bool over_limit;
    if ((rc = sst__lua_pcall(L, 0, 1, 1, &over_limit)) != LUA_OK) {
        load_error(L, rc, over_limit, err);
        sst_lua_script_free(s);
        return NULL;
    }
    if (luaL_testudata(L, -1, SST_LUA_GRAPH) != NULL) {
        lua_pushcfunction(L, compile_default);
        lua_insert(L, -2);
        if ((rc = sst__lua_pcall(L, 1, 1, 1, &over_limit)) != LUA_OK) {
            load_error(L, rc, over_limit, err);
            sst_lua_script_free(s);
            return NULL;
        }
    }
    if (luaL_testudata(L, -1, SST_LUA_APP) == NULL) {
        sst__error(err, SST_EINVAL,
                   "script '%s' returned %s; it must return a StateGraph or a compiled app "
                   "(return graph:compile{...})",
                   path, luaL_typename(L, -1));
        sst_lua_script_free(s);
        return NULL;
    }
    s->app = lua_touserdata(L, -1);
    s->app_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    lua_settop(L, 0);
    return s;
}

const sst_compiled_graph *sst_lua_script_graph(const sst_lua_script *s) {
    return s->app->cg;
}

sst_checkpointer *sst_lua_script_checkpointer(const sst_lua_script *s) {
    return s->app->saver;
}

void sst_lua_script_invoke_opts(const sst_lua_script *s, sst_invoke_opts *o) {
    o->recursion_limit = s->app->recursion_limit;
    o->durability = s->app->durability;
}

unsigned sst_lua_script_workers(const sst_lua_script *s) {
    return s->app->workers;
}

size_t sst_lua_script_memory_limit(const sst_lua_script *s) {
    return sst__lua_mem_of(s->L)->limit;
}
