/* SPDX-License-Identifier: MIT */
/*
 * The runtime behind one script: which lua_State runs a callback on which
 * thread. The thread that loaded the script uses the master state; any
 * other worker thread gets its own state, made by running the script again
 * with superstep.worker = true. A live stream lends a state to the thread
 * running its graph while the loop waits (stream.c).
 */
#include "lua_int.h"

sst__lua_rt *sst__lua_runtime(lua_State *L) {
    lua_getfield(L, LUA_REGISTRYINDEX, SST_LUA_RUNTIME);
    sst__lua_rt *rt = lua_touserdata(L, -1);
    lua_pop(L, 1);
    return rt;
}

static int owner_gc(lua_State *L) {
    sst__lua_rt **owner = lua_touserdata(L, 1);
    sst__lua_runtime_free(*owner);
    *owner = NULL;
    return 0;
}

sst__lua_rt *sst__lua_runtime_new(lua_State *L, const char *script, sst_error *err) {
    sst__lua_rt *rt = sst__calloc(1, sizeof *rt);
    if (rt == NULL) {
        sst__enomem(err);
        return NULL;
    }
    if (script != NULL && (rt->script = sst__strndup(script, strlen(script))) == NULL) {
        sst__free(rt);
        sst__enomem(err);
        return NULL;
    }
    rt->master = L;
    rt->master_thread = pthread_self();
    pthread_mutex_init(&rt->mu, NULL);
    lua_pushlightuserdata(L, rt);
    lua_setfield(L, LUA_REGISTRYINDEX, SST_LUA_RUNTIME);
    /* The master state owns the runtime: a userdata whose __gc frees it. */
    sst__lua_rt **owner = lua_newuserdatauv(L, sizeof *owner, 0);
    *owner = rt;
    lua_newtable(L);
    lua_pushcfunction(L, owner_gc);
    lua_setfield(L, -2, "__gc");
    lua_setmetatable(L, -2);
    lua_setfield(L, LUA_REGISTRYINDEX, "superstep.runtime_owner");
    return rt;
}

void sst__lua_runtime_free(sst__lua_rt *rt) {
    if (rt == NULL) {
        return;
    }
    for (size_t i = 0; i < rt->n_workers; i++) {
        sst__lua_close(rt->workers[i].L);
    }
    sst__free(rt->workers);
    sst__free(rt->script);
    pthread_mutex_destroy(&rt->mu);
    sst__free(rt);
}

/* Loads the script into a new state for a worker thread. */
static lua_State *new_worker_state(sst__lua_rt *rt, sst_error *err) {
    if (rt->script == NULL) {
        sst__error(err, SST_EINVAL,
                   "lua: nodes can run on more than one worker only for a script loaded "
                   "from a file (sst_lua_script_load or the superstep tool)");
        return NULL;
    }
    /* Its own limit, as the loading state's: the script's compile{} may then change it. */
    lua_State *L = sst__lua_newstate(rt->memory_limit, rt->memory_fixed);
    if (L == NULL) {
        sst__enomem(err);
        return NULL;
    }
    /* The worker shares the master's runtime: its callbacks find it there. */
    lua_pushlightuserdata(L, rt);
    lua_setfield(L, LUA_REGISTRYINDEX, SST_LUA_RUNTIME);
    lua_pushboolean(L, 1);
    lua_setfield(L, LUA_REGISTRYINDEX, "superstep.is_worker");
    luaL_requiref(L, "superstep", luaopen_superstep, 1);
    lua_pop(L, 1);
    lua_pushcfunction(L, sst__lua_traceback);
    int rc = luaL_loadfile(L, rt->script);
    bool over_limit = false;
    if (rc == LUA_OK) {
        rc = sst__lua_pcall(L, 0, 0, -2, &over_limit);
    }
    if (rc != LUA_OK) {
        sst__lua_call_failed(L, rc, over_limit, SST_EINVAL, err,
                             "lua: loading '%s' for a worker thread", rt->script);
        sst__lua_close(L);
        return NULL;
    }
    lua_settop(L, 0);
    return L;
}

bool sst__lua_runtime_lend(sst__lua_rt *rt, pthread_t from, pthread_t to) {
    bool found = false;
    pthread_mutex_lock(&rt->mu);
    if (pthread_equal(from, rt->master_thread)) {
        rt->master_thread = to;
        found = true;
    }
    for (size_t i = 0; !found && i < rt->n_workers; i++) {
        if (pthread_equal(rt->workers[i].thread, from)) {
            rt->workers[i].thread = to;
            found = true;
        }
    }
    pthread_mutex_unlock(&rt->mu);
    return found;
}

/*
 * The master thread is read under the lock: a live stream lends the master
 * state to the thread running its graph (sst__lua_runtime_lend) while worker
 * threads of that run may be looking up their own states.
 */
lua_State *sst__lua_state_for_thread(sst__lua_rt *rt, sst_error *err) {
    pthread_t self = pthread_self();
    pthread_mutex_lock(&rt->mu);
    if (pthread_equal(self, rt->master_thread)) {
        pthread_mutex_unlock(&rt->mu);
        return rt->master;
    }
    for (size_t i = 0; i < rt->n_workers; i++) {
        if (pthread_equal(rt->workers[i].thread, self)) {
            lua_State *L = rt->workers[i].L;
            pthread_mutex_unlock(&rt->mu);
            return L;
        }
    }
    pthread_mutex_unlock(&rt->mu);
    /* Made outside the lock: the script may take a while. Only this thread adds itself. */
    lua_State *L = new_worker_state(rt, err);
    if (L == NULL) {
        return NULL;
    }
    pthread_mutex_lock(&rt->mu);
    if (rt->n_workers == rt->cap_workers) {
        size_t cap = rt->cap_workers ? rt->cap_workers * 2 : 4;
        sst__lua_worker *w = sst__realloc(rt->workers, cap * sizeof *w);
        if (w == NULL) {
            pthread_mutex_unlock(&rt->mu);
            sst__lua_close(L);
            sst__enomem(err);
            return NULL;
        }
        rt->workers = w;
        rt->cap_workers = cap;
    }
    rt->workers[rt->n_workers++] = (sst__lua_worker){self, L};
    pthread_mutex_unlock(&rt->mu);
    return L;
}
