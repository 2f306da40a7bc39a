/* SPDX-License-Identifier: MIT */
/*
 * Values in Lua and back. Nodes see the state through read-only proxies: a
 * proxy holds a reference to an array or object and converts only what is
 * read, so reading one field of a state with a 100 000-message history costs
 * nothing for the history. Lua values become values with a check that names
 * the path of anything that is not JSON-compatible.
 */
#include <math.h>
#include <stdio.h>

#include "lua_int.h"
#include "superstep/json.h"

#define MAX_DEPTH 200

/* ---- proxies ---- */

typedef struct proxy {
    sst_value *v; /* owned reference */
} proxy;

const sst_value *sst__lua_proxy_value(lua_State *L, int idx) {
    proxy *p = luaL_testudata(L, idx, SST_LUA_PROXY);
    return p != NULL ? p->v : NULL;
}

static const sst_value *check_proxy(lua_State *L, int idx) {
    return ((proxy *)luaL_checkudata(L, idx, SST_LUA_PROXY))->v;
}

void sst__lua_push_value(lua_State *L, const sst_value *v) {
    switch (sst_value_type(v)) {
        case SST_TYPE_NULL:
            lua_getfield(L, LUA_REGISTRYINDEX, "superstep.null");
            return;
        case SST_TYPE_BOOL:
            lua_pushboolean(L, sst_bool_value(v));
            return;
        case SST_TYPE_INT:
            lua_pushinteger(L, (lua_Integer)sst_int_value(v));
            return;
        case SST_TYPE_DOUBLE:
            lua_pushnumber(L, sst_double_value(v));
            return;
        case SST_TYPE_STRING:
            lua_pushlstring(L, sst_string_cstr(v), sst_string_len(v));
            return;
        default: {
            proxy *p = lua_newuserdatauv(L, sizeof *p, 0);
            p->v = sst_value_ref(v);
            luaL_setmetatable(L, SST_LUA_PROXY);
        }
    }
}

void sst__lua_push_owned(lua_State *L, sst_value *v) {
    proxy *p = lua_newuserdatauv(L, sizeof *p, 0);
    p->v = v;
    luaL_setmetatable(L, SST_LUA_PROXY);
}

static int proxy_gc(lua_State *L) {
    proxy *p = luaL_checkudata(L, 1, SST_LUA_PROXY);
    sst_value_unref(p->v);
    p->v = NULL;
    return 0;
}

static int proxy_index(lua_State *L) {
    const sst_value *v = check_proxy(L, 1);
    const sst_value *item = NULL;
    if (sst_is_array(v)) {
        int isnum = 0;
        lua_Integer i = lua_tointegerx(L, 2, &isnum);
        if (isnum && i >= 1 && (uint64_t)i <= sst_array_len(v)) {
            item = sst_array_get(v, (size_t)(i - 1));
        }
    } else if (lua_type(L, 2) == LUA_TSTRING) {
        size_t len;
        const char *key = lua_tolstring(L, 2, &len);
        item = sst_object_getn(v, key, len);
    }
    if (item == NULL && lua_type(L, 2) == LUA_TSTRING && strcmp(lua_tostring(L, 2), "node") == 0) {
        item = sst_object_get(v, "__send__"); /* a Send: send.node, as LangGraph's */
    }
    if (item == NULL) {
        lua_pushnil(L);
    } else {
        sst__lua_push_value(L, item);
    }
    return 1;
}

static int proxy_newindex(lua_State *L) {
    return luaL_error(L, "the state is read-only: return an update table instead");
}

static int proxy_len(lua_State *L) {
    const sst_value *v = check_proxy(L, 1);
    lua_pushinteger(L, (lua_Integer)(sst_is_array(v) ? sst_array_len(v) : sst_object_len(v)));
    return 1;
}

/* The __pairs iterator: the control value is the 1-based position. */
static int proxy_next(lua_State *L) {
    const sst_value *v = check_proxy(L, 1);
    lua_Integer i = lua_isnil(L, 2) ? 0 : (lua_Integer)lua_tointeger(L, lua_upvalueindex(1));
    size_t n = sst_is_array(v) ? sst_array_len(v) : sst_object_len(v);
    if ((size_t)i >= n) {
        lua_pushnil(L);
        return 1;
    }
    lua_pushinteger(L, i + 1);
    lua_replace(L, lua_upvalueindex(1));
    if (sst_is_array(v)) {
        lua_pushinteger(L, i + 1);
        sst__lua_push_value(L, sst_array_get(v, (size_t)i));
    } else {
        sst__lua_push_value(L, sst_object_key_at(v, (size_t)i));
        sst__lua_push_value(L, sst_object_value_at(v, (size_t)i));
    }
    return 2;
}

static int proxy_pairs(lua_State *L) {
    check_proxy(L, 1);
    lua_pushinteger(L, 0);
    lua_pushcclosure(L, proxy_next, 1);
    lua_pushvalue(L, 1);
    lua_pushnil(L);
    return 3;
}

static int proxy_tostring(lua_State *L) {
    sst_error err;
    char *text = sst_json_write(check_proxy(L, 1), SST_JSON_COMPACT, NULL, &err);
    return sst__lua_push_text(L, text, &err);
}

static int proxy_eq(lua_State *L) {
    const sst_value *a = sst__lua_proxy_value(L, 1), *b = sst__lua_proxy_value(L, 2);
    lua_pushboolean(L, a != NULL && b != NULL && sst_value_equal(a, b));
    return 1;
}

void sst__lua_open_proxy(lua_State *L) {
    static const luaL_Reg meta[] = {{"__gc", proxy_gc},
                                    {"__index", proxy_index},
                                    {"__newindex", proxy_newindex},
                                    {"__len", proxy_len},
                                    {"__pairs", proxy_pairs},
                                    {"__tostring", proxy_tostring},
                                    {"__eq", proxy_eq},
                                    {NULL, NULL}};
    luaL_newmetatable(L, SST_LUA_PROXY);
    luaL_setfuncs(L, meta, 0);
    lua_pushstring(L, "superstep value");
    lua_setfield(L, -2, "__name");
    lua_pop(L, 1);
}

bool sst__lua_has_metatable(lua_State *L, int idx, const char *name) {
    if (!lua_getmetatable(L, idx)) {
        return false;
    }
    luaL_getmetatable(L, name);
    bool yes = lua_rawequal(L, -1, -2);
    lua_pop(L, 2);
    return yes;
}

bool sst__lua_is_command(lua_State *L, int idx) {
    return lua_type(L, idx) == LUA_TTABLE && sst__lua_has_metatable(L, idx, SST_LUA_COMMAND);
}

/* ---- deep copies into tables ---- */

void sst__lua_push_table(lua_State *L, const sst_value *v) {
    luaL_checkstack(L, 4, "value nested too deeply");
    if (sst_is_array(v)) {
        size_t n = sst_array_len(v);
        lua_createtable(L, n > INT32_MAX ? 0 : (int)n, 0);
        for (size_t i = 0; i < n; i++) {
            sst__lua_push_table(L, sst_array_get(v, i));
            lua_rawseti(L, -2, (lua_Integer)i + 1);
        }
        if (n == 0) {
            luaL_setmetatable(L, SST_LUA_ARRAY);
        }
    } else if (sst_is_object(v)) {
        size_t n = sst_object_len(v);
        lua_createtable(L, 0, n > INT32_MAX ? 0 : (int)n);
        for (size_t i = 0; i < n; i++) {
            const sst_value *k = sst_object_key_at(v, i);
            lua_pushlstring(L, sst_string_cstr(k), sst_string_len(k));
            sst__lua_push_table(L, sst_object_value_at(v, i));
            lua_rawset(L, -3);
        }
        if (n == 0) {
            luaL_setmetatable(L, SST_LUA_OBJECT);
        }
    } else {
        sst__lua_push_value(L, v);
    }
}

/* ---- Lua to values ---- */

/* One step of the path being converted: a key, or a 1-based index when key is NULL. */
typedef struct seg {
    const char *key;
    lua_Integer index;
} seg;

typedef struct conv {
    lua_State *L;
    sst_error *err;
    const char *what; /* names the root ("update", "input") */
    seg path[MAX_DEPTH + 2];
    int depth; /* segments in use */
} conv;

/* The error, with the path rendered only now ("update.items[3].name"). */
static sst_value *conv_fail(conv *c, sst_code code, const char *what) {
    char path[256];
    size_t n = (size_t)snprintf(path, sizeof path, "%s", c->what);
    int shown = c->depth < (int)SST_ARRAY_LEN(c->path) ? c->depth : (int)SST_ARRAY_LEN(c->path);
    for (int i = 0; i < shown && n < sizeof path; i++) {
        if (shown > 8 && i == 4) { /* a deep path: its first and last steps */
            n += (size_t)snprintf(path + n, sizeof path - n, "...");
            i = shown - 4;
        }
        if (c->path[i].key != NULL) {
            n += (size_t)snprintf(path + n, sizeof path - n, ".%s", c->path[i].key);
        } else {
            n += (size_t)snprintf(path + n, sizeof path - n, "[%lld]", (long long)c->path[i].index);
        }
    }
    sst__error(c->err, code, "%s: %s", path, what);
    return NULL;
}

static void path_push(conv *c, const char *key, lua_Integer index) {
    if (c->depth < (int)SST_ARRAY_LEN(c->path)) {
        c->path[c->depth] = (seg){key, index};
    }
    c->depth++;
}

static void path_pop(conv *c) {
    c->depth--;
}

static sst_value *to_value(conv *c, int idx, int depth);

typedef struct lkey {
    const char *s;
    size_t len;
} lkey;

static int lkey_cmp(const void *pa, const void *pb) {
    const lkey *a = pa, *b = pb;
    int r = memcmp(a->s, b->s, a->len < b->len ? a->len : b->len);
    return r != 0 ? r : (a->len > b->len) - (a->len < b->len);
}

/* A table: an array when its keys are 1..n, an object when they are all strings. */
static sst_value *table_to_value(conv *c, int idx, int depth) {
    lua_State *L = c->L;
    /* 0 unknown, 1 array, 2 object */
    int kind = sst__lua_has_metatable(L, idx, SST_LUA_ARRAY)    ? 1
               : sst__lua_has_metatable(L, idx, SST_LUA_OBJECT) ? 2
                                                                : 0;
    lua_Integer n = (lua_Integer)lua_rawlen(L, idx);
    size_t count = 0;
    bool strings = true;
    lua_pushnil(L);
    while (lua_next(L, idx) != 0) {
        count++;
        if (lua_type(L, -2) != LUA_TSTRING) {
            strings = false;
        }
        lua_pop(L, 1);
    }
    if (kind == 0) {
        if (count == 0 || (n > 0 && (size_t)n == count)) {
            kind = 1;
        } else if (strings) {
            kind = 2;
        } else {
            return conv_fail(c, SST_ETYPE,
                             "a table that is neither a list (keys 1..n) nor a map with string "
                             "keys cannot be stored");
        }
    }
    if (kind == 1) {
        if ((size_t)n != count) {
            return conv_fail(c, SST_ETYPE, "superstep.array(): a list must have keys 1..n only");
        }
        sst_value *a = sst_array_empty();
        for (lua_Integer i = 1; i <= n && a != NULL; i++) {
            path_push(c, NULL, i);
            lua_rawgeti(L, idx, i);
            sst_value *item = to_value(c, lua_gettop(L), depth + 1);
            lua_pop(L, 1);
            path_pop(c);
            a = item != NULL ? sst_array_push_take(a, item, c->err) : (sst_value_unref(a), NULL);
        }
        return a;
    }
    if (!strings) {
        return conv_fail(c, SST_ETYPE, "superstep.object(): a map must have string keys only");
    }
    /*
     * Keys in sorted order: Lua's table order is not stable between runs.
     * The key strings stay alive in the table while it is converted.
     */
    lkey small[16];
    lkey *keys = count <= SST_ARRAY_LEN(small) ? small : sst__malloc(count * sizeof *keys);
    if (keys == NULL) {
        sst__enomem(c->err);
        return NULL;
    }
    size_t k = 0;
    lua_pushnil(L);
    while (lua_next(L, idx) != 0) {
        lua_pop(L, 1);
        if (k < count) { /* always: count came from a full pass over the same table */
            keys[k].s = lua_tolstring(L, -1, &keys[k].len);
            k++;
        }
    }
    qsort(keys, k, sizeof *keys, lkey_cmp);
    sst_value *o = sst_object_empty();
    for (size_t i = 0; i < k && o != NULL; i++) {
        path_push(c, keys[i].s, 0);
        lua_pushlstring(L, keys[i].s, keys[i].len);
        lua_rawget(L, idx);
        sst_value *item = to_value(c, lua_gettop(L), depth + 1);
        lua_pop(L, 1);
        path_pop(c);
        o = item != NULL ? sst_object_setn_take(o, keys[i].s, keys[i].len, item, c->err)
                         : (sst_value_unref(o), NULL);
    }
    if (keys != small) {
        sst__free(keys);
    }
    return o;
}

static sst_value *to_value(conv *c, int idx, int depth) {
    lua_State *L = c->L;
    if (depth > MAX_DEPTH) {
        return conv_fail(c, SST_ERANGE, "nested too deeply (a table that contains itself?)");
    }
    switch (lua_type(L, idx)) {
        case LUA_TNIL:
            return sst_null();
        case LUA_TBOOLEAN:
            return sst_bool(lua_toboolean(L, idx));
        case LUA_TNUMBER:
            if (lua_isinteger(L, idx)) {
                return sst_int_new((int64_t)lua_tointeger(L, idx), c->err);
            } else {
                double d = lua_tonumber(L, idx);
                if (!isfinite(d)) {
                    return conv_fail(c, SST_ERANGE, "NaN and infinities cannot be stored");
                }
                return sst_double_new(d, c->err);
            }
        case LUA_TSTRING: {
            size_t len;
            const char *s = lua_tolstring(L, idx, &len);
            if (!sst_utf8_valid(s, len)) {
                return conv_fail(c, SST_EUTF8, "the string is not valid UTF-8");
            }
            return sst_string_newn(s, len, c->err);
        }
        case LUA_TTABLE:
            luaL_checkstack(L, 8, "value nested too deeply");
            return table_to_value(c, idx, depth);
        case LUA_TLIGHTUSERDATA:
        case LUA_TUSERDATA: {
            const sst_value *v = sst__lua_proxy_value(L, idx);
            if (v != NULL) {
                return sst_value_ref(v);
            }
            lua_getfield(L, LUA_REGISTRYINDEX, "superstep.null");
            bool is_null = lua_rawequal(L, idx, -1);
            lua_pop(L, 1);
            if (is_null) {
                return sst_null();
            }
            return conv_fail(c, SST_ETYPE,
                             "a userdata cannot be stored (only JSON-compatible values cross "
                             "into the state)");
        }
        default: {
            char msg[128];
            snprintf(msg, sizeof msg,
                     "a %s cannot be stored (only JSON-compatible values cross into the state)",
                     lua_typename(L, lua_type(L, idx)));
            return conv_fail(c, SST_ETYPE, msg);
        }
    }
}

sst_value *sst__lua_to_value(lua_State *L, int idx, const char *what, sst_error *err) {
    conv c = {.L = L, .err = err, .what = what};
    sst_value *v = to_value(&c, lua_absindex(L, idx), 0);
    if (v == NULL) {
        sst__error_unless_set(err, SST_ENOMEM, "out of memory");
    }
    return v;
}

sst_value *sst__lua_to_object(lua_State *L, int idx, const char *what, sst_error *err) {
    idx = lua_absindex(L, idx);
    if (lua_type(L, idx) == LUA_TTABLE && !sst__lua_has_metatable(L, idx, SST_LUA_ARRAY)) {
        lua_pushnil(L);
        if (lua_next(L, idx) == 0) {
            return sst_object_empty(); /* {} where an object is expected */
        }
        lua_pop(L, 2);
    }
    return sst__lua_to_value(L, idx, what, err);
}
