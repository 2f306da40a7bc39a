/* SPDX-License-Identifier: MIT */
/*
 * langgraph.json's http.app: custom routes written in Lua, mounted beside the API as
 * LangGraph mounts a Starlette/FastAPI app (docs/server.md "Custom routes"). The script
 * returns a table {["GET /hello/{name}"] = function(req) ... end, ...}; a request whose
 * method and path match a key (in the table's order; before the API's own routes, which a
 * custom route may override) calls its function with req = {method, path, params, query,
 * body (the JSON body decoded, or nil), text (the raw body)}. Its return value is the answer:
 * {status = n, body = value} (or {status = n, text = "..."} for text/plain), else any value
 * as a 200 JSON body (nil: 204). One lua_State serves every route, one call at a time, on the
 * HTTP thread: routes are for small things (health, webhooks, lookups); graphs run work.
 */
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "server_int.h"
#include "superstep/json.h"
#include "superstep/lua.h"

typedef struct app_route {
    char *method;
    char *pattern; /* "/hello/{name}" */
    int ref;       /* the function, in the registry */
} app_route;

struct srv_app {
    pthread_mutex_t mu;
    lua_State *L;
    app_route *routes;
    size_t n;
    char *file;
};

static void app_free(srv_app *a) {
    if (a == NULL) {
        return;
    }
    for (size_t i = 0; i < a->n; i++) {
        sst__free(a->routes[i].method);
        sst__free(a->routes[i].pattern);
    }
    sst__free(a->routes);
    if (a->L != NULL) {
        lua_close(a->L);
    }
    sst__free(a->file);
    pthread_mutex_destroy(&a->mu);
    sst__free(a);
}

void srv_app_free(sst_server *s) {
    app_free(s->app);
    s->app = NULL;
}

static bool method_known(const char *m, size_t n) {
    static const char *const methods[] = {"GET", "POST", "PUT", "PATCH", "DELETE"};
    for (size_t i = 0; i < sizeof methods / sizeof methods[0]; i++) {
        if (strlen(methods[i]) == n && strncmp(methods[i], m, n) == 0) {
            return true;
        }
    }
    return false;
}

/* Reads the route table on top of a->L; SST_EINVAL naming a bad key or value. */
static sst_code read_routes(srv_app *a, const char *script, sst_error *err) {
    lua_State *L = a->L;
    if (!lua_istable(L, -1)) {
        return sst__error(err, SST_EINVAL,
                          "http.app %s must return a table {[\"GET /path\"] = function(req) "
                          "... end}, got %s",
                          script, luaL_typename(L, -1));
    }
    lua_pushnil(L);
    while (lua_next(L, -2) != 0) {
        const char *key = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : NULL;
        const char *sp = key != NULL ? strchr(key, ' ') : NULL;
        if (key == NULL || sp == NULL || !method_known(key, (size_t)(sp - key)) || sp[1] != '/' ||
            !lua_isfunction(L, -1)) {
            return sst__error(err, SST_EINVAL,
                              "http.app %s: route %s%s%s must be \"METHOD /path\" (GET, POST, "
                              "PUT, PATCH or DELETE) = function(req)",
                              script, key != NULL ? "'" : "", key != NULL ? key : "(not a string)",
                              key != NULL ? "'" : "");
        }
        app_route *grown = sst__realloc(a->routes, (a->n + 1) * sizeof *a->routes);
        if (grown == NULL) {
            return sst__enomem(err);
        }
        a->routes = grown;
        app_route *r = &a->routes[a->n];
        r->method = sst__strndup(key, (size_t)(sp - key));
        r->pattern = sst__strndup(sp + 1, strlen(sp + 1));
        r->ref = luaL_ref(L, LUA_REGISTRYINDEX); /* pops the function */
        a->n++;
        if (r->method == NULL || r->pattern == NULL) {
            return sst__enomem(err);
        }
    }
    lua_pop(L, 1);
    return SST_OK;
}

sst_code srv_app_load(sst_server *s, const char *script, sst_error *err) {
    srv_app *a = sst__calloc(1, sizeof *a);
    if (a == NULL) {
        return sst__enomem(err);
    }
    pthread_mutex_init(&a->mu, NULL);
    a->file = sst__strndup(script, strlen(script));
    a->L = luaL_newstate();
    if (a->L == NULL || a->file == NULL) {
        app_free(a);
        return sst__enomem(err);
    }
    luaL_openlibs(a->L);
    luaL_requiref(a->L, "superstep", luaopen_superstep, 1);
    lua_pop(a->L, 1);
    sst_code rc = SST_OK;
    if (luaL_loadfile(a->L, script) != LUA_OK || lua_pcall(a->L, 0, 1, 0) != LUA_OK) {
        rc = sst__error(err, SST_EINVAL, "http.app %s: %s", script, lua_tostring(a->L, -1));
    } else {
        rc = read_routes(a, script, err);
    }
    if (rc != SST_OK) {
        app_free(a);
        return rc;
    }
    app_free(s->app);
    s->app = a;
    return SST_OK;
}

/* Matches @p path against @p pattern ("{name}": one segment); on a match, sets
 * params[name] = segment in the table at @p t (when L is not NULL). */
static bool match(lua_State *L, int t, const char *pattern, const char *path) {
    const char *p = pattern, *q = path;
    while (*p != '\0') {
        if (*p == '{') {
            const char *close = strchr(p, '}');
            size_t len = strcspn(q, "/");
            if (close == NULL || len == 0) {
                return false;
            }
            if (L != NULL) {
                lua_pushlstring(L, p + 1, (size_t)(close - p - 1));
                lua_pushlstring(L, q, len);
                lua_rawset(L, t);
            }
            p = close + 1;
            q += len;
            continue;
        }
        if (*p++ != *q++) {
            return false;
        }
    }
    return *q == '\0';
}

static enum MHD_Result add_query(void *cls, enum MHD_ValueKind kind, const char *key,
                                 const char *value) {
    SST_UNUSED(kind);
    lua_State *L = cls;
    lua_pushstring(L, value != NULL ? value : "");
    lua_setfield(L, -2, key);
    return MHD_YES;
}

/* Encodes the value on top of L as a JSON value (new) through superstep.json_encode. */
static sst_value *to_value(lua_State *L, sst_error *err) {
    lua_getglobal(L, "superstep");
    lua_getfield(L, -1, "json_encode");
    lua_remove(L, -2);
    lua_insert(L, -2);
    if (lua_pcall(L, 1, 1, 0) != LUA_OK) {
        sst__error(err, SST_EINVAL, "its answer is not JSON: %s", lua_tostring(L, -1));
        lua_pop(L, 1);
        return NULL;
    }
    size_t len;
    const char *text = lua_tolstring(L, -1, &len);
    sst_value *v = sst_json_read(text, len, NULL, err);
    lua_pop(L, 1);
    return v;
}

/* Sets @p res from the route's return value on top of L (popped). */
static void answer(lua_State *L, srv_response *res, const char *route) {
    sst_error err = {0};
    if (lua_isnil(L, -1)) {
        lua_pop(L, 1);
        srv_no_content(res);
        return;
    }
    unsigned status = 200;
    int st_type = lua_istable(L, -1) ? lua_getfield(L, -1, "status") : LUA_TNONE;
    if (st_type == LUA_TNUMBER) {
        lua_Integer st = lua_tointeger(L, -1);
        lua_pop(L, 1);
        if (st < 100 || st > 599) {
            lua_pop(L, 1);
            srv_error(res, 500, "http.app route %s answered status %lld", route, (long long)st);
            return;
        }
        status = (unsigned)st;
        if (lua_getfield(L, -1, "text") == LUA_TSTRING) {
            size_t len;
            const char *t = lua_tolstring(L, -1, &len);
            res->status = status;
            res->text = sst__strndup(t, len);
            res->text_len = len;
            res->type = "text/plain; charset=utf-8";
            lua_pop(L, 2);
            return;
        }
        lua_pop(L, 1);
        lua_getfield(L, -1, "body");
        lua_remove(L, -2);
    } else if (st_type != LUA_TNONE) {
        lua_pop(L, 1); /* the status lookup's value: the table is the body */
    }
    sst_value *v = to_value(L, &err);
    if (v == NULL) {
        srv_error(res, 500, "http.app route %s: %s", route, err.msg);
        return;
    }
    srv_json(res, status, v);
}

bool srv_app_dispatch(srv_request *r, srv_response *res) {
    srv_app *a = r->s->app;
    if (a == NULL) {
        return false;
    }
    size_t plen = strcspn(r->url, "?");
    char path[1024];
    if (plen >= sizeof path) {
        return false;
    }
    memcpy(path, r->url, plen);
    path[plen] = '\0';
    pthread_mutex_lock(&a->mu);
    size_t i = 0;
    while (i < a->n && !(strcmp(a->routes[i].method, r->method) == 0 &&
                         match(NULL, 0, a->routes[i].pattern, path))) {
        i++;
    }
    if (i == a->n) {
        pthread_mutex_unlock(&a->mu);
        return false;
    }
    lua_State *L = a->L;
    char route[600];
    snprintf(route, sizeof route, "%s %s", a->routes[i].method, a->routes[i].pattern);
    lua_rawgeti(L, LUA_REGISTRYINDEX, a->routes[i].ref);
    lua_createtable(L, 0, 6);
    lua_pushstring(L, r->method);
    lua_setfield(L, -2, "method");
    lua_pushstring(L, path);
    lua_setfield(L, -2, "path");
    lua_newtable(L);
    (void)match(L, lua_gettop(L), a->routes[i].pattern, path);
    lua_setfield(L, -2, "params");
    lua_newtable(L);
    MHD_get_connection_values(r->conn, MHD_GET_ARGUMENT_KIND, add_query, L);
    lua_setfield(L, -2, "query");
    if (r->body != NULL && r->body_len > 0) {
        lua_pushlstring(L, r->body, r->body_len);
        lua_setfield(L, -2, "text");
    }
    if (r->json != NULL) {
        char *text = sst_json_write(r->json, SST_JSON_COMPACT, NULL, NULL);
        lua_getglobal(L, "superstep");
        lua_getfield(L, -1, "json_decode");
        lua_remove(L, -2);
        lua_pushstring(L, text != NULL ? text : "null");
        sst__free(text);
        if (lua_pcall(L, 1, 1, 0) == LUA_OK) {
            lua_setfield(L, -2, "body");
        } else {
            lua_pop(L, 1);
        }
    }
    if (lua_pcall(L, 1, 1, 0) != LUA_OK) {
        srv_error(res, 500, "http.app route %s failed: %s", route, lua_tostring(L, -1));
        srv_log(r->s, "http.app route %s failed: %s", route, lua_tostring(L, -1));
        lua_pop(L, 1);
    } else {
        answer(L, res, route);
    }
    lua_settop(L, 0);
    pthread_mutex_unlock(&a->mu);
    return true;
}
