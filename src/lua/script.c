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
    lua_close(s->L);
    sst__free(s);
}

/* Compiles a returned StateGraph with default options (protected). */
static int compile_default(lua_State *L) {
    return sst__lua_compile(L, 1, 0);
}

sst_lua_script *sst_lua_script_load(const char *path, sst_error *err) {
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        char buf[128];
        const char *why = strerror_r(errno, buf, sizeof buf); /* the GNU variant */
        sst__error(err, SST_EIO, "cannot open script '%s': %s", path, why);
        return NULL;
    }
    fclose(f);
    sst_lua_script *s = sst__calloc(1, sizeof *s);
    lua_State *L = s != NULL ? luaL_newstate() : NULL;
    if (L == NULL) {
        sst__free(s);
        sst__enomem(err);
        return NULL;
    }
    s->L = L;
    luaL_openlibs(L);
    if (sst__lua_runtime_new(L, path, err) == NULL) {
        sst_lua_script_free(s);
        return NULL;
    }
    luaL_requiref(L, "superstep", luaopen_superstep, 1);
    lua_pop(L, 1);
    lua_pushcfunction(L, sst__lua_traceback);
    int rc = luaL_loadfile(L, path);
    if (rc != LUA_OK) {
        sst__error(err, rc == LUA_ERRSYNTAX ? SST_EPARSE : SST_EIO, "%s", lua_tostring(L, -1));
        sst_lua_script_free(s);
        return NULL;
    }
    if (lua_pcall(L, 0, 1, 1) != LUA_OK) {
        sst__error(err, SST_EINVAL, "%s", lua_tostring(L, -1));
        sst_lua_script_free(s);
        return NULL;
    }
    if (luaL_testudata(L, -1, SST_LUA_GRAPH) != NULL) {
        lua_pushcfunction(L, compile_default);
        lua_insert(L, -2);
        if (lua_pcall(L, 1, 1, 1) != LUA_OK) {
            sst__error(err, SST_EINVAL, "%s", lua_tostring(L, -1));
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
