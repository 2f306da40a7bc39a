/* SPDX-License-Identifier: MIT */
/*
 * The retry option of add_node and set_node_defaults (LangGraph's
 * retry_policy): true, a table of RetryPolicy fields, or a list of tables
 * (the first policy whose retry_on matches applies). retry_on is a Lua
 * function given the error object, or a list of error kinds.
 */
#include <stdio.h>

#include "graph_retry.h"

void sst__lua_retries_free(sst__lua_retries *r) {
    for (size_t i = 0; i < r->n; i++) {
        sst__free(r->list[i]->key);
        sst__free(r->list[i]->codes);
        sst__free(r->list[i]);
    }
    sst__free(r->list);
    r->list = NULL;
    r->n = 0;
}

static int call_upvalue(lua_State *L) {
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
    return lua_gettop(L);
}

void sst__lua_check_callable(lua_State *L, int idx, const char *what) {
    idx = lua_absindex(L, idx);
    if (lua_type(L, idx) == LUA_TFUNCTION) {
        return;
    }
    if ((lua_type(L, idx) == LUA_TTABLE || lua_type(L, idx) == LUA_TUSERDATA) &&
        luaL_getmetafield(L, idx, "__call") != LUA_TNIL) {
        lua_pop(L, 1);
        lua_pushvalue(L, idx);
        lua_pushcclosure(L, call_upvalue, 1);
        lua_replace(L, idx);
        return;
    }
    sst__lua_raisef(L, SST_EINVAL, "%s: expected a function or a callable table, got %s", what,
                    luaL_typename(L, idx));
}

void sst__lua_read_retry_fields(lua_State *L, int idx, const char *what, sst_retry_policy *p) {
    idx = lua_absindex(L, idx);
    if (lua_getfield(L, idx, "max_attempts") != LUA_TNIL) {
        lua_Integer n = lua_tointeger(L, -1);
        if (!lua_isinteger(L, -1) || n < 1 || n > 1000000) {
            sst__lua_raisef(L, SST_EINVAL,
                            "%s: retry.max_attempts must be at least 1 (a whole number up to "
                            "1000000)",
                            what);
        }
        p->max_attempts = (unsigned)n;
    }
    lua_pop(L, 1);
    static const char *const nums[] = {"initial_interval", "backoff_factor", "max_interval"};
    double *dst[] = {&p->initial_interval_s, &p->backoff_factor, &p->max_interval_s};
    for (size_t i = 0; i < 3; i++) {
        if (lua_getfield(L, idx, nums[i]) != LUA_TNIL) {
            double d = lua_tonumber(L, -1);
            if (lua_type(L, -1) != LUA_TNUMBER) {
                sst__lua_raisef(L, SST_EINVAL,
                                "%s: retry.%s must be a number from 0 to 1e9, got %s", what,
                                nums[i], luaL_typename(L, -1));
            }
            if (!(d >= 0) || d > 1e9) {
                sst__lua_raisef(L, SST_EINVAL,
                                "%s: retry.%s must be a number from 0 to 1e9, got %g", what,
                                nums[i], d);
            }
            *dst[i] = d;
        }
        lua_pop(L, 1);
    }
    if (lua_getfield(L, idx, "jitter") != LUA_TNIL) {
        p->jitter = lua_toboolean(L, -1);
    }
    lua_pop(L, 1);
}

/* The codes named by the list at @p idx ("SST_ETASK", ...), in a scratch userdata pushed. */
static sst_code *code_list(lua_State *L, int idx, const char *name, size_t *n) {
    const char **names = sst__lua_string_list(L, idx, n, "retry_on");
    sst_code *codes = lua_newuserdatauv(L, (*n > 0 ? *n : 1) * sizeof *codes, 0);
    for (size_t i = 0; i < *n; i++) {
        int c = 0;
        while (c < SST_CODE_COUNT && strcmp(sst_code_name((sst_code)c), names[i]) != 0) {
            c++;
        }
        if (c == SST_CODE_COUNT) {
            sst__lua_raisef(L, SST_EINVAL, "%s: retry_on: unknown error kind '%s'", name, names[i]);
        }
        codes[i] = (sst_code)c;
    }
    lua_remove(L, -2);
    return codes;
}

/* A retry that never happens: an explicit "no retry" that the graph's default does not replace. */
static bool never_retry(const sst_error *e, const char *vertex, void *ud) {
    (void)e;
    (void)vertex;
    (void)ud;
    return false;
}

/*
 * Calls the Lua retry_on with the error object {code, message, node}: true
 * retries. An error in retry_on, or a missing function, does not retry.
 */
static bool lua_retry_on(const sst_error *e, const char *vertex, void *ud) {
    const sst__lua_retry_cb *rc = ud;
    for (size_t i = 0; rc->codes != NULL && i < rc->n_codes; i++) {
        if (rc->codes[i] == e->code) {
            return true;
        }
    }
    if (rc->codes != NULL) {
        return false;
    }
    sst_error err = {0};
    lua_State *L = sst__lua_state_for_thread(rc->rt, &err);
    if (L == NULL) {
        return false;
    }
    bool armed = sst__lua_arm(L, false);
    int base = lua_gettop(L);
    lua_pushcfunction(L, sst__lua_traceback);
    lua_getfield(L, LUA_REGISTRYINDEX, SST_LUA_GRAPHS);
    bool found = lua_rawgeti(L, -1, rc->graph) == LUA_TTABLE &&
                 lua_getfield(L, -1, "retry_on") == LUA_TTABLE &&
                 lua_getfield(L, -1, rc->key) == LUA_TFUNCTION;
    bool out = false;
    if (found) {
        lua_replace(L, base + 2);
        lua_settop(L, base + 2);
        /* The message without the traceback the node's handler added. */
        const char *tb = strstr(e->msg, "\nstack traceback:");
        lua_pushlstring(L, e->msg, tb != NULL ? (size_t)(tb - e->msg) : strlen(e->msg));
        sst__lua_push_error(L, e->code, lua_tostring(L, -1), vertex);
        lua_remove(L, -2);
        bool over_limit;
        out = sst__lua_pcall(L, 1, 1, base + 1, &over_limit) == LUA_OK && lua_toboolean(L, -1);
    }
    lua_settop(L, base);
    sst__lua_arm(L, armed);
    return out;
}

/* Records a retry_on callback named @p key. */
static sst__lua_retry_cb *add_retry_cb(lua_State *L, sst__lua_retries *set, int graph,
                                       const char *key, const sst_code *codes, size_t n_codes) {
    sst__lua_retry_cb **list = sst__realloc(set->list, (set->n + 1) * sizeof *list);
    if (list == NULL) {
        sst__lua_raise_enomem(L);
    }
    set->list = list;
    sst__lua_retry_cb *rc = sst__calloc(1, sizeof *rc);
    if (rc == NULL || (rc->key = sst__strndup(key, strlen(key))) == NULL ||
        (codes != NULL &&
         (rc->codes = sst__malloc((n_codes ? n_codes : 1) * sizeof *codes)) == NULL)) {
        if (rc != NULL) {
            sst__free(rc->key);
        }
        sst__free(rc);
        sst__lua_raise_enomem(L);
    }
    if (codes != NULL) {
        memcpy(rc->codes, codes, n_codes * sizeof *codes);
    }
    rc->n_codes = n_codes;
    rc->rt = sst__lua_runtime(L);
    rc->graph = graph;
    set->list[set->n++] = rc;
    return rc;
}

/* retry_on at the stack top (popped) for policy @p p; a function goes to fns[key]. */
static void read_retry_on(lua_State *L, sst__lua_retries *set, int graph, const char *name,
                          const char *key, int fns, sst_retry_policy *p) {
    if (lua_istable(L, -1) && luaL_getmetafield(L, -1, "__call") == LUA_TNIL) {
        size_t n;
        sst_code *codes = code_list(L, -1, name, &n);
        p->retry_on_error = lua_retry_on;
        p->retry_on_user_data = add_retry_cb(L, set, graph, key, codes, n);
        lua_pop(L, 2);
        return;
    }
    if (lua_istable(L, -1)) {
        lua_pop(L, 1); /* the __call field */
    }
    char what[300];
    snprintf(what, sizeof what, "%.255s: retry_on", name);
    sst__lua_check_callable(L, -1, what);
    p->retry_on_error = lua_retry_on;
    p->retry_on_user_data = add_retry_cb(L, set, graph, key, NULL, 0);
    lua_setfield(L, fns, key);
}

/* One policy at @p idx: true / false or a table of fields over the default policy. */
static void read_policy(lua_State *L, sst__lua_retries *set, int graph, int idx, const char *name,
                        const char *key, int fns, sst_retry_policy *p) {
    static const char *const known[] = {"max_attempts",
                                        "initial_interval",
                                        "backoff_factor",
                                        "max_interval",
                                        "jitter",
                                        "retry_on",
                                        NULL};
    sst_retry_policy_init(p);
    if (lua_type(L, idx) == LUA_TBOOLEAN) {
        if (!lua_toboolean(L, idx)) {
            p->max_attempts = 1;
            p->retry_on_error = never_retry;
        }
        return;
    }
    if (lua_type(L, idx) != LUA_TTABLE) {
        sst__lua_raisef(L, SST_EINVAL, "%s: retry: expected true or a table, got %s", name,
                        luaL_typename(L, idx));
    }
    char what[300];
    snprintf(what, sizeof what, "%.255s: retry", name);
    sst__lua_check_options(L, idx, known, what);
    sst__lua_read_retry_fields(L, idx, name, p);
    if (lua_getfield(L, idx, "retry_on") != LUA_TNIL) {
        read_retry_on(L, set, graph, name, key, fns, p);
    } else {
        lua_pop(L, 1);
    }
    if (p->max_attempts == 1 && p->retry_on_error == NULL) {
        p->retry_on_error = never_retry; /* the node's own: a default does not replace it */
    }
}

/* A list of policies: a non-empty table whose first element is a table. */
static bool is_list(lua_State *L, int idx) {
    bool list = lua_istable(L, idx) && lua_rawgeti(L, idx, 1) == LUA_TTABLE;
    if (lua_istable(L, idx)) {
        lua_pop(L, 1);
    }
    return list;
}

void sst__lua_read_retry(lua_State *L, sst__lua_retries *set, int graph, int idx, const char *name,
                         const char *key_base, sst_retry_policy **policies, size_t *n) {
    idx = lua_absindex(L, idx);
    bool list = is_list(L, idx);
    *n = lua_isnil(L, idx) ? 0 : list ? (size_t)lua_rawlen(L, idx) : 1;
    *policies = lua_newuserdatauv(L, (*n > 0 ? *n : 1) * sizeof **policies, 0);
    lua_newtable(L);
    int fns = lua_gettop(L);
    for (size_t i = 0; i < *n; i++) {
        char key[300];
        if (list) {
            snprintf(key, sizeof key, "%.255s#%zu", key_base, i + 1);
            lua_rawgeti(L, idx, (lua_Integer)i + 1);
        } else {
            snprintf(key, sizeof key, "%.255s", key_base);
            lua_pushvalue(L, idx);
        }
        read_policy(L, set, graph, lua_gettop(L), name, key, fns, &(*policies)[i]);
        lua_settop(L, fns);
    }
}

void sst__lua_store_retry_on(lua_State *L, int graph, int idx) {
    idx = lua_absindex(L, idx);
    lua_getfield(L, LUA_REGISTRYINDEX, SST_LUA_GRAPHS);
    lua_rawgeti(L, -1, graph);
    lua_getfield(L, -1, "retry_on");
    int dst = lua_gettop(L);
    lua_pushnil(L);
    while (lua_next(L, idx) != 0) {
        lua_pushvalue(L, -2);
        lua_insert(L, -2);
        lua_settable(L, dst);
    }
    lua_pop(L, 3);
}
