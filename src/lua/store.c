/* SPDX-License-Identifier: MIT */
/*
 * superstep.InMemoryStore(opts), superstep.SqliteStore(path, opts),
 * superstep.PostgresStore(url, opts) and
 * superstep.embeddings(fn | {base_url, model, ...}): the long-term store
 * (store.h) with LangGraph's names (put, get, delete, search,
 * list_namespaces, sweep_ttl), given to compile{store = ...} and reached in
 * nodes as ctx.store. docs/store.md describes the Lua API.
 *
 * Lua embed functions and threads. The C store calls its embed hook on the
 * thread that calls put or search: a node on a worker thread, or the
 * script's own thread. As with nodes (graph.c, callbacks.c), each thread
 * runs Lua on its own state, which ran the same script; so embedders are
 * numbered in creation order per state and kept in the registry
 * (superstep.embedders[number], never collected before the state closes,
 * since a compiled graph may hold the C store after the Lua store is gone),
 * and the hook finds the function of that number in the calling thread's
 * state (sst__lua_state_for_thread). Scripts must therefore create their
 * embedders (and the stores made with Lua functions) in the same order each
 * time they run, as they build their graphs.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>

#include "lua_int.h"
#include "superstep/postgres.h"

/* A Lua function (or object with embed_documents) or an OpenAI-compatible client. */
typedef struct lembedder {
    sst__lua_rt *rt;    /* the runtime whose states hold the function; NULL for http */
    int number;         /* superstep.embedders[number] in every state; 0 for http */
    sst_embedder *http; /* owned; NULL for a Lua function */
} lembedder;

typedef struct lstore {
    sst_store *st; /* one reference */
    /* clock = "manual": the store's clock (µs since the epoch), moved by advance_clock only
     * and read by the store from any thread; NULL for the system clock. A userdata of its
     * own, anchored in the registry as embedders are: a compiled graph may hold the C
     * store after the Lua store is gone. */
    _Atomic int64_t *clock_us;
} lstore;

/* One call of a Lua embed function, handed to embed_protected. */
typedef struct embed_call {
    const lembedder *e;
    const char *const *texts; /* borrowed from the store */
    size_t n, dims;
    float *out; /* OUT: n * dims floats */
} embed_call;

/* ---- embedders ---- */

static int embedder_gc(lua_State *L) {
    lembedder *e = luaL_checkudata(L, 1, SST_LUA_EMBEDDER);
    sst_embedder_free(e->http);
    e->http = NULL;
    return 0;
}

/* Pushes the registry table of embedders (made on first use). */
static void push_embedders(lua_State *L) {
    if (lua_getfield(L, LUA_REGISTRYINDEX, SST_LUA_EMBEDDERS) != LUA_TTABLE) {
        lua_pop(L, 1);
        lua_newtable(L);
        lua_pushvalue(L, -1);
        lua_setfield(L, LUA_REGISTRYINDEX, SST_LUA_EMBEDDERS);
    }
}

static lembedder *new_embedder(lua_State *L) {
    lembedder *e = lua_newuserdatauv(L, sizeof *e, 1);
    memset(e, 0, sizeof *e);
    luaL_setmetatable(L, SST_LUA_EMBEDDER);
    return e;
}

/* True for what can embed: a function, a callable, or an object with embed_documents. */
static bool is_embed_callable(lua_State *L, int idx) {
    int t = lua_type(L, idx);
    if (t == LUA_TFUNCTION) {
        return true;
    }
    if (t == LUA_TTABLE) {
        bool method = lua_getfield(L, idx, "embed_documents") == LUA_TFUNCTION;
        lua_pop(L, 1);
        if (method) {
            return true;
        }
    }
    if ((t == LUA_TTABLE || t == LUA_TUSERDATA) &&
        luaL_getmetafield(L, idx, "__call") != LUA_TNIL) {
        lua_pop(L, 1);
        return true;
    }
    return false;
}

/* Pushes a new embedder for the callable at @p idx, numbered and kept in the registry. */
static lembedder *lua_embedder(lua_State *L, int idx) {
    idx = lua_absindex(L, idx);
    lembedder *e = new_embedder(L);
    e->rt = sst__lua_runtime(L);
    lua_pushvalue(L, idx);
    lua_setiuservalue(L, -2, 1);
    push_embedders(L);
    e->number = (int)lua_rawlen(L, -1) + 1;
    lua_pushvalue(L, -2);
    lua_rawseti(L, -2, e->number);
    lua_pop(L, 1);
    return e;
}

/*
 * Pushes a new embedder for an OpenAI-compatible endpoint. It is kept in the
 * registry too: a compiled graph may use the store after the Lua values are gone.
 */
static lembedder *http_embedder(lua_State *L, const sst_embedder_opts *eo, const char *what) {
    lembedder *e = new_embedder(L);
    sst_error err = {0};
    if ((e->http = sst_embedder_openai(eo, &err)) == NULL) {
        sst__lua_raisef(L, err.code, "%s: %s", what, err.msg);
    }
    push_embedders(L);
    lua_pushlightuserdata(L, e);
    lua_pushvalue(L, -3);
    lua_rawset(L, -3);
    lua_pop(L, 1);
    return e;
}

/* An optional non-negative integer field @p key of the table at @p t. */
static lua_Integer opt_integer(lua_State *L, int t, const char *key, lua_Integer def,
                               lua_Integer min, const char *what) {
    lua_Integer v = def;
    if (lua_getfield(L, t, key) != LUA_TNIL) {
        int ok;
        v = lua_tointegerx(L, -1, &ok);
        if (!ok || v < min) {
            sst__lua_raisef(L, SST_EINVAL, "%s: %s must be an integer of at least %lld, got %s",
                            what, key, (long long)min, luaL_tolstring(L, -1, NULL));
        }
    }
    lua_pop(L, 1);
    return v;
}

/* An optional string field @p key of the table at @p t (alive with the table), or NULL. */
static const char *opt_string(lua_State *L, int t, const char *key, const char *what) {
    const char *s = NULL;
    int type = lua_getfield(L, t, key);
    if (type == LUA_TSTRING) {
        s = lua_tostring(L, -1);
    } else if (type != LUA_TNIL) {
        sst__lua_raisef(L, SST_EINVAL, "%s: %s must be a string, got %s", what, key,
                        luaL_typename(L, -1));
    }
    lua_pop(L, 1);
    return s;
}

/* superstep.embeddings{base_url = ..., model = ..., api_key_env = ..., dims = ..., ...}. */
static lembedder *http_embedder_from_table(lua_State *L, int t) {
    static const char *const known[] = {
        "base_url",   "model",        "api_key_env",        "dims", "batch",
        "timeout_ms", "max_attempts", "connect_timeout_ms", NULL};
    static const char what[] = "embeddings";
    sst__lua_check_options(L, t, known, what);
    sst_embedder_opts eo;
    sst_embedder_opts_init(&eo);
    eo.base_url = opt_string(L, t, "base_url", what);
    eo.model = opt_string(L, t, "model", what);
    eo.api_key_env = opt_string(L, t, "api_key_env", what);
    eo.dims = (size_t)opt_integer(L, t, "dims", 0, 0, what);
    eo.batch = (size_t)opt_integer(L, t, "batch", 0, 0, what);
    eo.timeout_ms = (long)opt_integer(L, t, "timeout_ms", 0, 0, what);
    eo.connect_timeout_ms = (long)opt_integer(L, t, "connect_timeout_ms", 0, 0, what);
    eo.max_attempts = (unsigned)opt_integer(L, t, "max_attempts", 0, 0, what);
    return http_embedder(L, &eo, what);
}

/*
 * superstep.embeddings(fn): an embedder value for index.embed. fn(texts)
 * returns one list of numbers per text; an object with embed_documents(self,
 * texts) works too. superstep.embeddings{base_url, model, ...}: an
 * OpenAI-compatible client (agent.h, sst_embedder_openai).
 */
static int l_embeddings(lua_State *L) {
    if (lua_type(L, 1) == LUA_TTABLE && !is_embed_callable(L, 1)) {
        http_embedder_from_table(L, 1);
        return 1;
    }
    if (!is_embed_callable(L, 1)) {
        return sst__lua_raisef(L, SST_EINVAL,
                               "embeddings: expected a function(texts), an object with "
                               "embed_documents, or {base_url = ..., model = ...}, got %s",
                               luaL_typename(L, 1));
    }
    lua_embedder(L, 1);
    return 1;
}

/* ---- the Lua embed hook ---- */

/* Reads vector @p i (1-based) of the result at @p res into its row of c->out. */
static void read_vector(lua_State *L, const embed_call *c, int res, size_t i) {
    lua_geti(L, res, (lua_Integer)i);
    int row = lua_gettop(L);
    if (lua_type(L, row) != LUA_TTABLE && lua_type(L, row) != LUA_TUSERDATA) {
        sst__lua_raisef(L, SST_ETYPE,
                        "embed function: vector %zu is a %s, expected a list of %zu "
                        "numbers",
                        i, luaL_typename(L, row), c->dims);
    }
    lua_Integer len = luaL_len(L, row);
    if (len < 0 || (size_t)len != c->dims) {
        sst__lua_raisef(L, SST_EINVAL,
                        "embed function: vector %zu has %lld numbers; the index has dims %zu", i,
                        (long long)len, c->dims);
    }
    float *out = c->out + (i - 1) * c->dims;
    for (size_t k = 0; k < c->dims; k++) {
        lua_geti(L, row, (lua_Integer)k + 1);
        int isnum;
        lua_Number x = lua_tonumberx(L, -1, &isnum);
        if (!isnum) {
            sst__lua_raisef(L, SST_ETYPE, "embed function: vector %zu, element %zu is a %s", i,
                            k + 1, luaL_typename(L, -1));
        }
        out[k] = (float)x;
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
}

/* Runs inside a protected call: finds the function, calls it, reads its vectors. */
static int embed_protected(lua_State *L) {
    const embed_call *c = lua_touserdata(L, 1);
    push_embedders(L);
    if (lua_rawgeti(L, -1, c->e->number) != LUA_TUSERDATA ||
        lua_getiuservalue(L, -1, 1) == LUA_TNIL) {
        return sst__lua_raisef(L, SST_EINVAL,
                               "embed function %d is missing in this thread's Lua state (the "
                               "script must create the same stores and embedders each time it "
                               "runs)",
                               c->e->number);
    }
    int fn = lua_gettop(L);
    int nargs = 1;
    if (lua_type(L, fn) == LUA_TTABLE && lua_getfield(L, fn, "embed_documents") == LUA_TFUNCTION) {
        lua_pushvalue(L, fn); /* obj:embed_documents(texts) */
        nargs = 2;
    } else {
        lua_settop(L, fn);
        lua_pushvalue(L, fn);
    }
    lua_createtable(L, c->n > INT32_MAX ? 0 : (int)c->n, 0);
    for (size_t i = 0; i < c->n; i++) {
        lua_pushstring(L, c->texts[i]);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    lua_call(L, nargs, 1);
    int res = lua_gettop(L);
    if (lua_type(L, res) != LUA_TTABLE && lua_type(L, res) != LUA_TUSERDATA) {
        return sst__lua_raisef(L, SST_ETYPE,
                               "embed function returned a %s; it returns a list of vectors, one "
                               "per text",
                               luaL_typename(L, res));
    }
    lua_Integer got = luaL_len(L, res);
    if (got < 0 || (size_t)got != c->n) {
        return sst__lua_raisef(L, SST_EINVAL, "embed function returned %lld vectors for %zu texts",
                               (long long)got, c->n);
    }
    for (size_t i = 1; i <= c->n; i++) {
        read_vector(L, c, res, i);
    }
    return 0;
}

/*
 * The store's hook (sst_embed_fn) for a Lua embedder: runs the function of
 * the embedder's number in the calling thread's state. Everything Lua does
 * happens inside the protected call, so no error unwinds the store's frames;
 * the memory limit applies only there (sst__lua_arm), as for nodes.
 */
static sst_code lua_embed_hook(void *ud, const char *const *texts, size_t n, size_t dims,
                               float *out, sst_error *err) {
    const lembedder *e = ud;
    lua_State *L = sst__lua_state_for_thread(e->rt, err);
    if (L == NULL) {
        return sst__code(err);
    }
    if (!lua_checkstack(L, 4)) {
        return sst__error(err, SST_ENOMEM, "embed function: no room on the Lua stack");
    }
    bool armed = sst__lua_arm(L, false);
    int base = lua_gettop(L);
    embed_call c = {.e = e, .texts = texts, .n = n, .dims = dims, .out = out};
    lua_pushcfunction(L, sst__lua_traceback);
    lua_pushcfunction(L, embed_protected);
    lua_pushlightuserdata(L, &c);
    bool over_limit;
    int rc = sst__lua_pcall(L, 1, 0, base + 1, &over_limit);
    sst_code code = SST_OK;
    if (rc != LUA_OK) {
        code = sst__lua_call_failed(L, rc, over_limit, SST_ETASK, err, "%s", "");
    }
    lua_settop(L, base);
    sst__lua_arm(L, armed);
    return code;
}

/* ---- reading arguments ---- */

/*
 * The labels of the namespace list at @p idx (a table or a list proxy) in a
 * scratch userdata pushed on the stack, whose user value anchors the
 * strings. With @p nil_ok, nil is the empty namespace.
 */
static const char **read_ns(lua_State *L, int idx, size_t *n, const char *what, const char *arg,
                            bool nil_ok) {
    idx = lua_absindex(L, idx);
    *n = 0;
    int t = lua_type(L, idx);
    if (!(t == LUA_TTABLE || sst__lua_proxy_value(L, idx) != NULL) && !(nil_ok && t == LUA_TNIL)) {
        sst__lua_raisef(L, SST_EINVAL, "%s: %s must be a list of strings, got %s", what, arg,
                        luaL_typename(L, idx));
    }
    lua_Integer len = t == LUA_TNIL ? 0 : luaL_len(L, idx);
    if (len < 0 || len > 4096) {
        sst__lua_raisef(L, SST_EINVAL, "%s: %s has %lld labels", what, arg, (long long)len);
    }
    const char **out = lua_newuserdatauv(L, (size_t)(len > 0 ? len : 1) * sizeof *out, 1);
    lua_createtable(L, (int)len, 0);
    for (lua_Integer i = 1; i <= len; i++) {
        lua_geti(L, idx, i);
        size_t l;
        const char *s = lua_type(L, -1) == LUA_TSTRING ? lua_tolstring(L, -1, &l) : NULL;
        if (s == NULL || strlen(s) != l) {
            sst__lua_raisef(
                L, SST_EINVAL, "%s: %s label %lld %s", what, arg, (long long)i,
                s == NULL ? lua_pushfstring(L, "is a %s, expected a string", luaL_typename(L, -1))
                          : "contains a NUL byte");
        }
        out[i - 1] = s;
        lua_rawseti(L, -2, i);
    }
    lua_setiuservalue(L, -2, 1);
    *n = (size_t)len;
    return out;
}

/* The key at @p idx: a string without NUL bytes. */
static const char *read_key(lua_State *L, int idx, const char *what) {
    size_t len;
    const char *k = lua_type(L, idx) == LUA_TSTRING ? lua_tolstring(L, idx, &len) : NULL;
    if (k == NULL || strlen(k) != len) {
        sst__lua_raisef(L, SST_EINVAL, "%s: the key must be a string without NUL bytes, got %s",
                        what, k == NULL ? luaL_typename(L, idx) : "a string with a NUL byte");
    }
    return k;
}

/* An options table at @p idx (nil: none, returns 0) checked against @p known. */
static int read_opts(lua_State *L, int idx, const char *const *known, const char *what) {
    if (lua_isnoneornil(L, idx)) {
        return 0;
    }
    if (lua_type(L, idx) != LUA_TTABLE) {
        sst__lua_raisef(L, SST_EINVAL, "%s: expected a table of options, got %s", what,
                        luaL_typename(L, idx));
    }
    sst__lua_check_options(L, idx, known, what);
    return lua_absindex(L, idx);
}

/* refresh_ttl of the options at @p t: 1, 0, or -1 for the store's default. */
static int opt_tristate(lua_State *L, int t, const char *key, const char *what) {
    int out = -1;
    if (t != 0 && lua_getfield(L, t, key) != LUA_TNIL) {
        if (!lua_isboolean(L, -1)) {
            sst__lua_raisef(L, SST_EINVAL, "%s: %s must be a boolean, got %s", what, key,
                            luaL_typename(L, -1));
        }
        out = lua_toboolean(L, -1);
    }
    if (t != 0) {
        lua_pop(L, 1);
    }
    return out;
}

/* A positive number of minutes at @p idx (raises naming @p key). */
static double read_minutes(lua_State *L, int idx, const char *key, const char *what) {
    double m = lua_tonumber(L, idx);
    if (lua_type(L, idx) != LUA_TNUMBER || !(m > 0) || m > 1e11) {
        sst__lua_raisef(L, SST_EINVAL, "%s: %s must be a positive number of minutes, got %s", what,
                        key, luaL_tolstring(L, idx, NULL));
    }
    return m;
}

/* True for sst.null. */
static bool is_null(lua_State *L, int idx) {
    idx = lua_absindex(L, idx);
    lua_getfield(L, LUA_REGISTRYINDEX, "superstep.null");
    bool n = lua_rawequal(L, idx, -1);
    lua_pop(L, 1);
    return n;
}

/* ---- results ---- */

/*
 * Pushes @p v (new, taken; NULL raises @p err) as plain tables. A search
 * item's null score becomes nil; with @p single, null (no item) is nil.
 */
static void push_result(lua_State *L, sst_value *v, bool single, const sst_error *err) {
    if (v == NULL) {
        sst__lua_raise(L, err);
    }
    if (single && sst_is_null(v)) {
        sst_value_unref(v);
        lua_pushnil(L);
        return;
    }
    sst__lua_push_owned(L, v); /* freed by the collector even if a copy below fails */
    sst__lua_push_table(L, v);
    int list = lua_gettop(L);
    lua_Integer n = sst_is_array(v) ? (lua_Integer)sst_array_len(v) : 0;
    for (lua_Integer i = 1; i <= n; i++) {
        if (lua_rawgeti(L, list, i) == LUA_TTABLE && lua_getfield(L, -1, "score") != LUA_TNIL &&
            is_null(L, -1)) {
            lua_pushnil(L);
            lua_setfield(L, list + 1, "score");
        }
        lua_settop(L, list);
    }
    lua_remove(L, list - 1);
}

/* ---- the store userdata ---- */

static sst_store *check_store(lua_State *L, int idx) {
    lstore *s = luaL_checkudata(L, idx, SST_LUA_STORE);
    if (s->st == NULL) {
        sst__lua_raisef(L, SST_EINVAL, "store: the store is closed");
    }
    return s->st;
}

sst_store *sst__lua_store(lua_State *L, int idx) {
    lstore *s = luaL_testudata(L, idx, SST_LUA_STORE);
    return s != NULL ? s->st : NULL;
}

static lstore *new_store_ud(lua_State *L) {
    lstore *s = lua_newuserdatauv(L, sizeof *s, 1);
    s->st = NULL;
    s->clock_us = NULL;
    luaL_setmetatable(L, SST_LUA_STORE);
    return s;
}

void sst__lua_push_store(lua_State *L, sst_store *st) {
    lstore *s = new_store_ud(L);
    s->st = sst_store_ref(st);
    size_t dims = sst_store_dims(st);
    if (dims > 0) { /* the index config a node can know: its size */
        lua_createtable(L, 0, 1);
        lua_pushinteger(L, (lua_Integer)dims);
        lua_setfield(L, -2, "dims");
        lua_setiuservalue(L, -2, 1);
    }
}

static int store_gc(lua_State *L) {
    lstore *s = luaL_checkudata(L, 1, SST_LUA_STORE);
    sst_store_free(s->st);
    s->st = NULL;
    return 0;
}

/* store:put(namespace, key, value [, {index = false | {fields...}, ttl = minutes | false}]) */
static int store_put(lua_State *L) {
    static const char *const known[] = {"index", "ttl", NULL};
    static const char what[] = "store put";
    sst_store *st = check_store(L, 1);
    lua_settop(L, 5); /* scratch values go above the arguments */
    size_t ns_len;
    const char **ns = read_ns(L, 2, &ns_len, what, "the namespace", false);
    const char *key = read_key(L, 3, what);
    if (lua_type(L, 4) != LUA_TTABLE && sst__lua_proxy_value(L, 4) == NULL) {
        return sst__lua_raisef(L, SST_ETYPE, "%s: the value must be a table, got %s", what,
                               luaL_typename(L, 4));
    }
    int t = read_opts(L, 5, known, what);
    sst_store_put_opts po;
    sst_store_put_opts_init(&po);
    if (t != 0 && lua_getfield(L, t, "index") != LUA_TNIL) {
        if (lua_type(L, -1) == LUA_TBOOLEAN && !lua_toboolean(L, -1)) {
            po.no_index = true;
        } else if (lua_type(L, -1) == LUA_TTABLE) {
            po.index_fields = sst__lua_string_list(L, -1, &po.n_index_fields, "store put: index");
        } else {
            return sst__lua_raisef(L, SST_EINVAL,
                                   "%s: index must be false or a list of field paths, got %s", what,
                                   luaL_typename(L, -1));
        }
    }
    if (t != 0 && lua_getfield(L, t, "ttl") != LUA_TNIL) {
        bool none = (lua_isboolean(L, -1) && !lua_toboolean(L, -1)) || is_null(L, -1);
        po.ttl_minutes = none ? SST_STORE_TTL_NONE : read_minutes(L, -1, "ttl", what);
    }
    sst_error err = {0};
    sst_value *v = sst__lua_to_object(L, 4, "store put value", &err);
    if (v == NULL) {
        return sst__lua_raise(L, &err);
    }
    sst__lua_push_owned(L, v);
    if (sst_store_put(st, ns, ns_len, key, v, &po, &err) != SST_OK) {
        return sst__lua_raise(L, &err);
    }
    return 0;
}

/* store:get(namespace, key [, {refresh_ttl = bool}]): the item, or nil. */
static int store_get(lua_State *L) {
    static const char *const known[] = {"refresh_ttl", NULL};
    static const char what[] = "store get";
    sst_store *st = check_store(L, 1);
    lua_settop(L, 4); /* scratch values go above the arguments */
    size_t ns_len;
    const char **ns = read_ns(L, 2, &ns_len, what, "the namespace", false);
    const char *key = read_key(L, 3, what);
    int refresh = opt_tristate(L, read_opts(L, 4, known, what), "refresh_ttl", what);
    sst_error err = {0};
    push_result(L, sst_store_get(st, ns, ns_len, key, refresh, &err), true, &err);
    return 1;
}

/* store:delete(namespace, key) */
static int store_delete(lua_State *L) {
    static const char what[] = "store delete";
    sst_store *st = check_store(L, 1);
    lua_settop(L, 3); /* scratch values go above the arguments */
    size_t ns_len;
    const char **ns = read_ns(L, 2, &ns_len, what, "the namespace", false);
    const char *key = read_key(L, 3, what);
    sst_error err = {0};
    if (sst_store_delete(st, ns, ns_len, key, &err) != SST_OK) {
        return sst__lua_raise(L, &err);
    }
    return 0;
}

/* store:search(namespace_prefix [, {query, filter, limit, offset, refresh_ttl}]): items. */
static int store_search(lua_State *L) {
    static const char *const known[] = {"query", "filter", "limit", "offset", "refresh_ttl", NULL};
    static const char what[] = "store search";
    sst_store *st = check_store(L, 1);
    lua_settop(L, 3); /* scratch values go above the arguments */
    sst_store_search_opts q;
    sst_store_search_opts_init(&q);
    q.prefix = read_ns(L, 2, &q.prefix_len, what, "the namespace prefix", true);
    int t = read_opts(L, 3, known, what);
    if (t != 0) {
        q.query = opt_string(L, t, "query", what); /* alive with the options table */
        q.limit = (size_t)opt_integer(L, t, "limit", 10, 1, what);
        q.offset = (size_t)opt_integer(L, t, "offset", 0, 0, what);
        q.refresh_ttl = opt_tristate(L, t, "refresh_ttl", what);
    }
    sst_error err = {0};
    if (t != 0 && lua_getfield(L, t, "filter") != LUA_TNIL) {
        if (lua_type(L, -1) != LUA_TTABLE && sst__lua_proxy_value(L, -1) == NULL) {
            return sst__lua_raisef(L, SST_EINVAL, "%s: filter must be a table, got %s", what,
                                   luaL_typename(L, -1));
        }
        sst_value *f = sst__lua_to_object(L, -1, "store search filter", &err);
        if (f == NULL) {
            return sst__lua_raise(L, &err);
        }
        sst__lua_push_owned(L, f);
        q.filter = f;
    }
    push_result(L, sst_store_search(st, &q, &err), false, &err);
    return 1;
}

/* store:list_namespaces{prefix, suffix, max_depth, limit, offset}: a list of namespaces. */
static int store_list_namespaces(lua_State *L) {
    static const char *const known[] = {"prefix", "suffix", "max_depth", "limit", "offset", NULL};
    static const char what[] = "store list_namespaces";
    sst_store *st = check_store(L, 1);
    lua_settop(L, 2); /* scratch values go above the arguments */
    sst_store_list_opts q;
    sst_store_list_opts_init(&q);
    int t = read_opts(L, 2, known, what);
    if (t != 0) {
        lua_getfield(L, t, "prefix");
        q.prefix = read_ns(L, -1, &q.prefix_len, what, "prefix", true);
        lua_getfield(L, t, "suffix");
        q.suffix = read_ns(L, -1, &q.suffix_len, what, "suffix", true);
        q.max_depth = (size_t)opt_integer(L, t, "max_depth", 0, 1, what);
        q.limit = (size_t)opt_integer(L, t, "limit", 100, 1, what);
        q.offset = (size_t)opt_integer(L, t, "offset", 0, 0, what);
    }
    sst_error err = {0};
    push_result(L, sst_store_list_namespaces(st, &q, &err), false, &err);
    return 1;
}

/* store:sweep_ttl(): deletes the expired items now; returns how many. */
/* store:advance_clock(seconds): moves a manual clock (clock = "manual") forward. */
static int store_advance_clock(lua_State *L) {
    check_store(L, 1);
    lstore *s = luaL_checkudata(L, 1, SST_LUA_STORE);
    if (s->clock_us == NULL) {
        return sst__lua_raisef(L, SST_EINVAL,
                               "store advance_clock: the store has the system clock (open it "
                               "with clock = \"manual\")");
    }
    int isnum;
    lua_Number secs = lua_tonumberx(L, 2, &isnum);
    if (!isnum || !(secs >= 0) || secs > 1e9) {
        return sst__lua_raisef(L, SST_EINVAL,
                               "store advance_clock: expected seconds, a number from 0 to 1e9, "
                               "got %s",
                               isnum ? "a number out of range" : luaL_typename(L, 2));
    }
    atomic_fetch_add(s->clock_us, (int64_t)(secs * 1e6));
    return 0;
}

/* The manual clock of a store (clock = "manual"): what advance_clock made it. */
static int64_t manual_clock(void *user_data) {
    return atomic_load((_Atomic int64_t *)user_data);
}

static int store_sweep_ttl(lua_State *L) {
    sst_store *st = check_store(L, 1);
    size_t removed = 0;
    sst_error err = {0};
    if (sst_store_sweep_ttl(st, &removed, &err) != SST_OK) {
        return sst__lua_raise(L, &err);
    }
    lua_pushinteger(L, (lua_Integer)removed);
    return 1;
}

/* Methods first, then store.index_config (the index options given, or nil). */
static int store_index(lua_State *L) {
    luaL_checkudata(L, 1, SST_LUA_STORE);
    lua_pushvalue(L, 2);
    if (lua_rawget(L, lua_upvalueindex(1)) != LUA_TNIL) {
        return 1;
    }
    if (lua_type(L, 2) == LUA_TSTRING && strcmp(lua_tostring(L, 2), "index_config") == 0) {
        lua_getiuservalue(L, 1, 1);
        return 1;
    }
    lua_pushnil(L);
    return 1;
}

/* ---- making stores ---- */

/* index.embed at @p idx: pushes the embedder (made from a function, object or URL). */
static lembedder *read_embed(lua_State *L, int index_t, int idx) {
    static const char what[] = "store: index.embed";
    if (luaL_testudata(L, idx, SST_LUA_EMBEDDER) != NULL) {
        lua_pushvalue(L, idx);
        return lua_touserdata(L, -1);
    }
    if (is_embed_callable(L, idx)) {
        return lua_embedder(L, idx);
    }
    if (lua_type(L, idx) != LUA_TSTRING) {
        sst__lua_raisef(L, SST_EINVAL,
                        "%s must be a function(texts), an object with embed_documents, "
                        "superstep.embeddings(...), \"openai:MODEL\" or an http(s) URL with "
                        "index.model, got %s",
                        what, luaL_typename(L, idx));
    }
    const char *s = lua_tostring(L, idx);
    sst_embedder_opts eo;
    sst_embedder_opts_init(&eo);
    eo.model = opt_string(L, index_t, "model", "store: index");
    eo.api_key_env = opt_string(L, index_t, "api_key_env", "store: index");
    if (strncmp(s, "openai:", 7) == 0) { /* LangGraph's "provider:model" form */
        eo.base_url = "https://api.openai.com/v1";
        eo.model = s + 7;
        eo.api_key_env = eo.api_key_env != NULL ? eo.api_key_env : "OPENAI_API_KEY";
    } else {
        eo.base_url = s;
    }
    return http_embedder(L, &eo, what);
}

/* A shallow copy of the table at @p idx (store.index_config). */
static void push_copy(lua_State *L, int idx) {
    idx = lua_absindex(L, idx);
    lua_newtable(L);
    lua_pushnil(L);
    while (lua_next(L, idx) != 0) {
        lua_pushvalue(L, -2);
        lua_insert(L, -2);
        lua_rawset(L, -4);
    }
}

/* opts.index at @p t into @p o; pushes what must stay alive, then the config copy. */
static void read_index(lua_State *L, int t, sst_store_opts *o) {
    static const char *const known[] = {"dims",          "embed", "fields",      "text_fields",
                                        "distance_type", "model", "api_key_env", NULL};
    static const char what[] = "store: index";
    if (lua_type(L, t) != LUA_TTABLE) {
        sst__lua_raisef(L, SST_EINVAL, "%s must be a table {dims, embed, fields}, got %s", what,
                        luaL_typename(L, t));
    }
    sst__lua_check_options(L, t, known, what);
    o->index.dims = (size_t)opt_integer(L, t, "dims", 0, 1, what);
    if (o->index.dims == 0) {
        sst__lua_raisef(L, SST_EINVAL, "%s.dims is required (the size of the vectors)", what);
    }
    const char *dist = opt_string(L, t, "distance_type", what);
    if (dist != NULL && strcmp(dist, "cosine") != 0) {
        sst__lua_raisef(L, SST_EINVAL, "%s.distance_type '%s' is not supported (only \"cosine\")",
                        what, dist);
    }
    /* fields (LangGraph), or text_fields (SqliteStore's older name): a list or one path */
    if (lua_getfield(L, t, "fields") == LUA_TNIL) {
        lua_pop(L, 1);
        lua_getfield(L, t, "text_fields");
    }
    if (lua_type(L, -1) == LUA_TSTRING) {
        lua_createtable(L, 1, 0);
        lua_insert(L, -2);
        lua_rawseti(L, -2, 1);
    }
    if (lua_type(L, -1) == LUA_TTABLE) {
        o->index.fields = sst__lua_string_list(L, -1, &o->index.n_fields, "store: index.fields");
    } else if (!lua_isnil(L, -1)) {
        sst__lua_raisef(L, SST_EINVAL, "%s.fields must be a list of paths, got %s", what,
                        luaL_typename(L, -1));
    }
    if (lua_getfield(L, t, "embed") == LUA_TNIL) {
        sst__lua_raisef(L, SST_EINVAL, "%s.embed is required (a function(texts) or an embedder)",
                        what);
    }
    lembedder *e = read_embed(L, t, lua_gettop(L));
    o->index.embed = e->http != NULL ? sst_embedder_embed : lua_embed_hook;
    o->index.embed_user_data = e->http != NULL ? (void *)e->http : (void *)e;
    push_copy(L, t);
}

/* opts.ttl at @p t into @p o (LangGraph's TTLConfig). */
static void read_ttl(lua_State *L, int t, sst_store_opts *o) {
    static const char *const known[] = {"default_ttl", "refresh_on_read", "sweep_interval_minutes",
                                        "omit_expired", NULL};
    static const char what[] = "store: ttl";
    if (lua_type(L, t) != LUA_TTABLE) {
        sst__lua_raisef(L, SST_EINVAL, "%s must be a table {default_ttl, ...}, got %s", what,
                        luaL_typename(L, t));
    }
    sst__lua_check_options(L, t, known, what);
    if (lua_getfield(L, t, "default_ttl") != LUA_TNIL) {
        o->default_ttl_minutes = read_minutes(L, -1, "default_ttl", what);
    }
    if (lua_getfield(L, t, "sweep_interval_minutes") != LUA_TNIL) {
        o->sweep_interval_minutes = read_minutes(L, -1, "sweep_interval_minutes", what);
    }
    lua_pop(L, 2);
    int refresh = opt_tristate(L, t, "refresh_on_read", what);
    o->refresh_on_read = refresh != 0;
    o->omit_expired = opt_tristate(L, t, "omit_expired", what) == 1;
}

/* The backends open_store makes. */
enum { STORE_MEMORY, STORE_SQLITE, STORE_POSTGRES };

/* InMemoryStore(opts), SqliteStore(path, opts) and PostgresStore(url, opts): @p path is
 * the file or URL (NULL for memory). */
static int open_store(lua_State *L, int kind, const char *path, int opts) {
    static const char *const names[] = {"InMemoryStore", "SqliteStore", "PostgresStore"};
    static const char *const known[] = {"index", "ttl", "clock", NULL};
    lstore *s = new_store_ud(L);
    int ud = lua_gettop(L);
    sst_store_opts o;
    sst_store_opts_init(&o);
    int config = 0;
    if (read_opts(L, opts, known, names[kind]) != 0) {
        if (lua_getfield(L, opts, "index") != LUA_TNIL) {
            read_index(L, lua_gettop(L), &o);
            config = lua_gettop(L);
        }
        if (lua_getfield(L, opts, "ttl") != LUA_TNIL) {
            read_ttl(L, lua_gettop(L), &o);
        }
        /* clock = "manual": TTLs count time advance_clock gives, from now (tests). */
        if (lua_getfield(L, opts, "clock") != LUA_TNIL) {
            const char *c = lua_tostring(L, -1);
            if (lua_type(L, -1) != LUA_TSTRING || strcmp(c, "manual") != 0) {
                return sst__lua_raisef(L, SST_EINVAL,
                                       "%s: clock must be \"manual\" (or left out for the "
                                       "system clock), got %s",
                                       names[kind], luaL_typename(L, -1));
            }
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            s->clock_us = lua_newuserdatauv(L, sizeof *s->clock_us, 0);
            atomic_init(s->clock_us, (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000);
            luaL_ref(L, LUA_REGISTRYINDEX); /* kept until the state closes */
            o.clock = manual_clock;
            o.clock_user_data = s->clock_us;
        }
    }
    sst_error err = {0};
    s->st = kind == STORE_SQLITE     ? sst_sqlite_store_new(path, &o, &err)
            : kind == STORE_POSTGRES ? sst_postgres_store_new(path, &o, &err)
                                     : sst_memory_store_new(&o, &err);
    if (s->st == NULL) {
        return sst__lua_raise(L, &err);
    }
    if (config != 0) {
        lua_pushvalue(L, config);
        lua_setiuservalue(L, ud, 1);
    }
    lua_settop(L, ud);
    return 1;
}

static int memory_store(lua_State *L) {
    lua_settop(L, 1);
    return open_store(L, STORE_MEMORY, NULL, 1);
}

static int sqlite_store(lua_State *L) {
    size_t len;
    const char *path = lua_type(L, 1) == LUA_TSTRING ? lua_tolstring(L, 1, &len) : NULL;
    if (path == NULL || strlen(path) != len || len == 0) {
        return sst__lua_raisef(L, SST_EINVAL, "SqliteStore: expected a file path, got %s",
                               path == NULL ? luaL_typename(L, 1) : "a bad string");
    }
    lua_settop(L, 2);
    return open_store(L, STORE_SQLITE, path, 2);
}

/* PostgresStore(url, opts): a URL, or "" for libpq's PG* variables. */
static int postgres_store(lua_State *L) {
    size_t len;
    const char *url = lua_type(L, 1) == LUA_TSTRING ? lua_tolstring(L, 1, &len) : NULL;
    if (url == NULL || strlen(url) != len) {
        return sst__lua_raisef(L, SST_EINVAL, "PostgresStore: expected a URL, got %s",
                               url == NULL ? luaL_typename(L, 1) : "a bad string");
    }
    lua_settop(L, 2);
    return open_store(L, STORE_POSTGRES, url, 2);
}

void sst__lua_open_stores(lua_State *L) {
    static const luaL_Reg methods[] = {{"put", store_put},
                                       {"get", store_get},
                                       {"delete", store_delete},
                                       {"search", store_search},
                                       {"list_namespaces", store_list_namespaces},
                                       {"sweep_ttl", store_sweep_ttl},
                                       {"advance_clock", store_advance_clock},
                                       {NULL, NULL}};
    luaL_newmetatable(L, SST_LUA_STORE);
    lua_pushcfunction(L, store_gc);
    lua_setfield(L, -2, "__gc");
    lua_pushstring(L, "superstep store");
    lua_setfield(L, -2, "__name");
    luaL_newlib(L, methods);
    lua_pushcclosure(L, store_index, 1);
    lua_setfield(L, -2, "__index");
    lua_pop(L, 1);
    luaL_newmetatable(L, SST_LUA_EMBEDDER);
    lua_pushcfunction(L, embedder_gc);
    lua_setfield(L, -2, "__gc");
    lua_pushstring(L, "superstep embedder");
    lua_setfield(L, -2, "__name");
    lua_pop(L, 1);
    lua_pushcfunction(L, memory_store);
    lua_setfield(L, -2, "InMemoryStore");
    lua_pushcfunction(L, sqlite_store);
    lua_setfield(L, -2, "SqliteStore");
    lua_pushcfunction(L, postgres_store);
    lua_setfield(L, -2, "PostgresStore");
    lua_pushcfunction(L, l_embeddings);
    lua_setfield(L, -2, "embeddings");
}
