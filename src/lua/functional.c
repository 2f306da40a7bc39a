/* SPDX-License-Identifier: MIT */
/*
 * The functional API in Lua (docs/functional.md): superstep.task,
 * superstep.entrypoint and entrypoint.final, and the futures a task call
 * returns.
 *
 * A task made while the script loads (no node running) is numbered in
 * creation order and its function kept in the registry table
 * superstep.tasks: every state of the script makes the same tasks, so a
 * worker thread runs task k with its own state's function k, in parallel.
 * A task made inside a running function (a closure) exists only in that
 * state: it is pinned, and runs on the thread that joins it.
 */
#include <stdio.h>
#include <string.h>

#include "graph_retry.h"
#include "lua_int.h"
#include "superstep/functional.h"

/* A future: the submitted task and the context userdata of the function that submitted it. */
typedef struct lfuture {
    sst_future *f;
} lfuture;

/* ---- default names ---- */

/*
 * A function has no name in Lua, so a task or entrypoint made without one
 * takes the name its source gives it, as Python's decorators take the
 * function's __name__: the name of the function's definition
 * (`local function mapper(x)`, `function M.mapper(x)`, `mapper = function(x)`,
 * on a line that defines no other function), else the one variable the
 * line calling sst.task assigns
 * (`local mapper = sst.task(function(x) ... end)`). The source is the
 * script's file (chunk "@path") or the chunk's own text.
 */

/* Copies line @p lineno of the source of chunk @p source into @p out; false when unavailable. */
static bool source_line(const char *source, int lineno, char *out, size_t n) {
    if (source == NULL || lineno < 1 || source[0] == '=') {
        return false;
    }
    size_t len = 0;
    int line = 1;
    if (source[0] == '@') {
        FILE *f = fopen(source + 1, "r");
        if (f == NULL) {
            return false;
        }
        int ch;
        while ((ch = getc(f)) != EOF && line <= lineno) {
            if (ch == '\n') {
                line++;
            } else if (line == lineno && len + 1 < n) {
                out[len++] = (char)ch;
            }
        }
        fclose(f);
    } else {
        for (const char *s = source; *s != '\0' && line <= lineno; s++) {
            if (*s == '\n') {
                line++;
            } else if (line == lineno && len + 1 < n) {
                out[len++] = *s;
            }
        }
    }
    out[len] = '\0';
    return line >= lineno && len > 0;
}

static bool ident_start(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool ident_char(char c) {
    return ident_start(c) || (c >= '0' && c <= '9');
}

static const char *skip_blanks(const char *s) {
    while (*s == ' ' || *s == '\t' || *s == '\r') {
        s++;
    }
    return s;
}

/* True when @p s starts with the word @p w (not a longer identifier). */
static bool word_at(const char *s, const char *w) {
    size_t n = strlen(w);
    return strncmp(s, w, n) == 0 && !ident_char(s[n]);
}

/* Reads a name or dotted path (a.b.c, a.b:c) at @p s; its last part to @p out; past it, or NULL. */
static const char *read_path(const char *s, char *out, size_t n) {
    static const char *const keywords[] = {"and",   "break", "do",       "else", "elseif", "end",
                                           "false", "for",   "function", "goto", "if",     "in",
                                           "local", "nil",   "not",      "or",   "repeat", "return",
                                           "then",  "true",  "until",    "while"};
    const char *last;
    size_t len;
    for (;;) {
        if (!ident_start(*s)) {
            return NULL;
        }
        last = s;
        while (ident_char(*s)) {
            s++;
        }
        len = (size_t)(s - last);
        if ((*s == '.' || *s == ':') && ident_start(s[1])) {
            s++;
            continue;
        }
        break;
    }
    for (size_t i = 0; i < SST_ARRAY_LEN(keywords); i++) {
        if (len == strlen(keywords[i]) && strncmp(last, keywords[i], len) == 0) {
            return NULL;
        }
    }
    if (len == 0 || len >= n) {
        return NULL;
    }
    memcpy(out, last, len);
    out[len] = '\0';
    return s;
}

/*
 * The name @p line gives: `[local] function NAME(` or `[local] NAME = function` when
 * @p definition, else `[local] NAME =` (one name assigned, whatever follows).
 */
static bool name_in_line(const char *line, bool definition, char *out, size_t n) {
    int functions = 0;
    for (const char *w = line; *w != '\0'; w++) {
        functions += word_at(w, "function") && (w == line || !ident_char(w[-1]));
    }
    if (definition && functions != 1) {
        return false; /* which of the line's functions it is cannot be told */
    }
    const char *s = skip_blanks(line);
    if (word_at(s, "local")) {
        s = skip_blanks(s + 5);
    }
    if (word_at(s, "function")) {
        s = definition ? read_path(skip_blanks(s + 8), out, n) : NULL;
        return s != NULL && *skip_blanks(s) == '(';
    }
    s = read_path(s, out, n);
    if (s == NULL) {
        return false;
    }
    s = skip_blanks(s);
    if (s[0] != '=' || s[1] == '=') {
        return false;
    }
    return !definition || word_at(skip_blanks(s + 1), "function");
}

/* The default name of the function at @p fn given to the C function running now (see above). */
static bool default_name(lua_State *L, int fn, char *out, size_t n) {
    char line[1024];
    lua_Debug ar;
    if (lua_type(L, fn) == LUA_TFUNCTION && !lua_iscfunction(L, fn)) {
        lua_pushvalue(L, fn);
        if (lua_getinfo(L, ">S", &ar) &&
            source_line(ar.source, ar.linedefined, line, sizeof line) &&
            name_in_line(line, true, out, n)) {
            return true;
        }
    }
    /* the Lua code calling: past C functions between (sst.entrypoint(fn) calls its decorator) */
    for (int level = 1; level <= 3 && lua_getstack(L, level, &ar); level++) {
        if (lua_getinfo(L, "Sl", &ar) && ar.currentline > 0) {
            return source_line(ar.source, ar.currentline, line, sizeof line) &&
                   name_in_line(line, false, out, n);
        }
    }
    return false;
}

/* ---- tasks ---- */

static sst__lua_task *check_task(lua_State *L, int idx) {
    return luaL_checkudata(L, idx, SST_LUA_TASK);
}

static int task_gc(lua_State *L) {
    sst__lua_task *t = check_task(L, 1);
    if (t->number == 0 && t->ref != LUA_NOREF) {
        luaL_unref(L, LUA_REGISTRYINDEX, t->ref);
        t->ref = LUA_NOREF;
    }
    return 0;
}

/* task(args...): submits the task from the running entrypoint, task or node; a future. */
static int task_call(lua_State *L) {
    sst__lua_task *t = check_task(L, 1);
    sst_node_ctx *ctx = sst__lua_running_ctx(L);
    if (ctx == NULL) {
        return sst__lua_raisef(
            L, SST_EINVAL, "task '%s': call it inside an entrypoint, a task or a node", t->name);
    }
    int n = lua_gettop(L);
    while (n > 1 && lua_isnil(L, n)) {
        n--; /* trailing nils are not arguments */
    }
    sst_error err = {0};
    sst_value *args = sst_array_empty();
    for (int i = 2; i <= n && args != NULL; i++) {
        char what[256];
        snprintf(what, sizeof what, "argument %d of task '%.200s'", i - 1, t->name);
        sst_value *v = lua_isnil(L, i) ? sst_null() : sst__lua_to_value(L, i, what, &err);
        args = v != NULL ? sst_array_push_take(args, v, &err) : (sst_value_unref(args), NULL);
    }
    if (args == NULL) {
        return sst__lua_raise(L, &err);
    }
    lfuture *u = lua_newuserdatauv(L, sizeof *u, 2);
    u->f = NULL;
    luaL_setmetatable(L, SST_LUA_FUTURE);
    lua_pushvalue(L, 1); /* the task stays alive while its future does */
    lua_setiuservalue(L, -2, 1);
    sst__lua_push_running_lctx(L);
    lua_setiuservalue(L, -2, 2);
    if ((u->f = sst_node_submit(ctx, &t->spec, args, &err)) == NULL) {
        return sst__lua_raise(L, &err);
    }
    return 1;
}

static int task_index(lua_State *L) {
    sst__lua_task *t = check_task(L, 1);
    const char *k = luaL_checkstring(L, 2);
    if (strcmp(k, "name") == 0) {
        lua_pushstring(L, t->name);
        return 1;
    }
    lua_pushnil(L);
    return 1;
}

/*
 * A task's retry option at @p idx: true (LangGraph's RetryPolicy()), false (none) or
 * {max_attempts, initial_interval, backoff_factor, max_interval, jitter}.
 */
void sst__lua_read_task_retry(lua_State *L, int idx, sst_retry_policy *p) {
    sst_retry_policy_init(p);
    if (lua_isboolean(L, idx)) {
        if (!lua_toboolean(L, idx)) {
            p->max_attempts = 1;
        }
        return;
    }
    if (!lua_istable(L, idx)) {
        sst__lua_raisef(L, SST_EINVAL, "task: retry must be true, false or a table, got %s",
                        luaL_typename(L, idx));
    }
    static const char *const known[] = {"max_attempts", "initial_interval", "backoff_factor",
                                        "max_interval", "jitter",           NULL};
    sst__lua_check_options(L, idx, known, "task retry");
    sst__lua_read_retry_fields(L, idx, "task", p);
}

/* Reads the options of superstep.task{...} at @p opts into @p t. */
static void task_options(lua_State *L, int opts, sst__lua_task *t) {
    static const char *const known[] = {"name",         "retry",   "retry_policy",
                                        "cache_policy", "timeout", NULL};
    sst__lua_check_options(L, opts, known, "task");
    if (lua_getfield(L, opts, "name") != LUA_TNIL) {
        size_t len;
        const char *name = lua_tolstring(L, -1, &len);
        if (name == NULL || len == 0 || len > 255) {
            sst__lua_raisef(L, SST_EINVAL, "task: name must be a string of 1 to 255 bytes");
        }
        memcpy(t->name, name, len + 1);
    }
    lua_pop(L, 1);
    if (lua_getfield(L, opts, "retry") == LUA_TNIL) {
        lua_pop(L, 1);
        lua_getfield(L, opts, "retry_policy");
    }
    if (!lua_isnil(L, -1)) {
        sst__lua_read_task_retry(L, lua_gettop(L), &t->spec.retry);
    }
    lua_pop(L, 1);
    lua_getfield(L, opts, "timeout");
    sst__lua_read_timeout(L, -1, "task", &t->spec.timeout);
    lua_pop(L, 1);
    if (lua_getfield(L, opts, "cache_policy") != LUA_TNIL) {
        if (lua_toboolean(L, -1) && !lua_istable(L, -1)) {
            t->spec.cache.enabled = true;
        } else if (lua_istable(L, -1)) {
            t->spec.cache.enabled = true;
            if (lua_getfield(L, -1, "ttl") != LUA_TNIL) {
                double ttl = lua_tonumber(L, -1);
                if (!lua_isnumber(L, -1) || !(ttl > 0)) {
                    sst__lua_raisef(L, SST_EINVAL,
                                    "task: cache_policy.ttl must be a positive number");
                }
                t->spec.cache.ttl_s = ttl;
            }
            lua_pop(L, 1);
        }
    }
    lua_pop(L, 1);
}

/* Makes the task object for the function at @p fn with options at @p opts (0: none). */
static int make_task(lua_State *L, int fn, int opts, const char *name) {
    sst__lua_check_callable(L, fn, "task");
    sst__lua_task *t = lua_newuserdatauv(L, sizeof *t, 0);
    memset(t, 0, sizeof *t);
    t->ref = LUA_NOREF;
    t->rt = sst__lua_runtime(L);
    if (name != NULL) {
        snprintf(t->name, sizeof t->name, "%s", name);
    } else if (!default_name(L, fn, t->name, sizeof t->name)) {
        snprintf(t->name, sizeof t->name, "task");
    }
    sst_task_spec_init(&t->spec, t->name, sst__lua_task_fn, t);
    luaL_setmetatable(L, SST_LUA_TASK);
    int self = lua_gettop(L);
    if (opts != 0) {
        task_options(L, opts, t);
    }
    /* A task made while a function runs is that state's alone: it stays on its thread. */
    bool pinned = sst__lua_running_ctx(L) != NULL || t->rt == NULL || t->rt->script == NULL;
    if (pinned) {
        lua_pushvalue(L, fn);
        t->ref = luaL_ref(L, LUA_REGISTRYINDEX);
        t->spec.pinned = true;
    } else {
        if (lua_getfield(L, LUA_REGISTRYINDEX, SST_LUA_TASKS) != LUA_TTABLE) {
            lua_pop(L, 1);
            lua_newtable(L);
            lua_pushvalue(L, -1);
            lua_setfield(L, LUA_REGISTRYINDEX, SST_LUA_TASKS);
        }
        t->number = (int)lua_rawlen(L, -1) + 1;
        lua_pushvalue(L, fn);
        lua_rawseti(L, -2, t->number);
        lua_pop(L, 1);
    }
    lua_settop(L, self);
    return 1;
}

/* The decorator superstep.task{...} returns: fn -> task. */
static int task_decorator(lua_State *L) {
    return make_task(L, 1, lua_upvalueindex(1), NULL);
}

/* superstep.task(fn), superstep.task("name", fn), superstep.task{name = ..., retry = ...}(fn). */
static int l_task(lua_State *L) {
    if (lua_type(L, 1) == LUA_TSTRING) {
        const char *name = lua_tostring(L, 1);
        size_t len = strlen(name);
        if (len == 0 || len > 255) {
            return sst__lua_raisef(L, SST_EINVAL, "task: name must be 1 to 255 bytes");
        }
        return make_task(L, 2, lua_istable(L, 3) ? 3 : 0, name);
    }
    if (lua_istable(L, 1) && !lua_getmetatable(L, 1)) {
        lua_settop(L, 1);
        lua_pushcclosure(L, task_decorator, 1);
        return 1;
    }
    lua_settop(L, 1);
    return make_task(L, 1, 0, NULL);
}

/* ---- futures ---- */

static lfuture *check_future(lua_State *L, int idx) {
    lfuture *u = luaL_checkudata(L, idx, SST_LUA_FUTURE);
    lua_getiuservalue(L, idx, 2);
    bool alive = u->f != NULL && sst__lua_lctx_alive(L, -1);
    lua_pop(L, 1);
    if (!alive) {
        luaL_error(L, "a future is used after the function that called its task returned");
    }
    return u;
}

/* fut:result(): waits for the task; raises its error, or unwinds on its interrupt. */
static int future_result(lua_State *L) {
    lfuture *u = check_future(L, 1);
    sst_error err = {0};
    const sst_value *v = sst_future_result(u->f, &err);
    if (v == NULL && err.code == SST_EINTERRUPT) {
        lua_pushlightuserdata(L, &sst__lua_interrupt_token);
        return lua_error(L);
    }
    if (v == NULL) {
        return sst__lua_raise(L, &err);
    }
    if (sst_is_null(v)) {
        lua_pushnil(L);
    } else {
        sst__lua_push_table(L, v);
    }
    return 1;
}

static int future_id(lua_State *L) {
    lua_pushstring(L, sst_future_id(check_future(L, 1)->f));
    return 1;
}

/* The writer superstep.get_stream_writer() returns: emits on the running node or task. */
static int stream_write(lua_State *L) {
    sst_node_ctx *ctx = sst__lua_running_ctx(L);
    if (ctx == NULL) {
        return sst__lua_raisef(L, SST_EINVAL,
                               "stream writer: call it inside an entrypoint, a task or a node");
    }
    sst_error err = {0};
    sst_value *v = sst__lua_to_value(L, 1, "stream writer", &err);
    if (v == NULL || sst_node_emit(ctx, v, &err) != SST_OK) {
        return sst__lua_raise(L, &err);
    }
    return 0;
}

/* superstep.get_stream_writer(): LangGraph's get_stream_writer (custom stream events). */
static int l_get_stream_writer(lua_State *L) {
    lua_pushcfunction(L, stream_write);
    return 1;
}

/* ---- entrypoints ---- */

/* The decorator superstep.entrypoint{...} returns: fn -> app. */
static int entrypoint_decorator(lua_State *L) {
    sst__lua_check_callable(L, 1, "entrypoint");
    char found[256];
    const char *name = default_name(L, 1, found, sizeof found) ? found : "entrypoint";
    int opts = lua_upvalueindex(1);
    if (lua_istable(L, opts) && lua_getfield(L, opts, "name") == LUA_TSTRING) {
        name = lua_tostring(L, -1); /* kept alive by the options table */
    }
    return sst__lua_entrypoint(L, lua_istable(L, opts) ? opts : 0, 1, name);
}

/* superstep.entrypoint{checkpointer = ..., store = ..., name = ...}(fn), or entrypoint(fn). */
static int l_entrypoint(lua_State *L) {
    /* called as a table with __call: argument 1 is superstep.entrypoint itself */
    if (lua_gettop(L) >= 2 &&
        (lua_isfunction(L, 2) || sst__lua_has_metatable(L, 2, SST_LUA_TASK))) {
        lua_pushnil(L);
        lua_pushcclosure(L, entrypoint_decorator, 1);
        lua_pushvalue(L, 2);
        lua_call(L, 1, 1);
        return 1;
    }
    if (!lua_isnoneornil(L, 2)) {
        luaL_checktype(L, 2, LUA_TTABLE);
    }
    lua_settop(L, 2);
    lua_pushcclosure(L, entrypoint_decorator, 1);
    return 1;
}

/* superstep.entrypoint.final{value = v, save = s}: return v, save s as the next previous. */
static int l_final(lua_State *L) {
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_createtable(L, 0, 2);
    lua_getfield(L, 1, "value");
    lua_setfield(L, -2, "value");
    lua_getfield(L, 1, "save");
    lua_setfield(L, -2, "save");
    luaL_setmetatable(L, SST_LUA_FINAL);
    return 1;
}

void sst__lua_open_functional(lua_State *L) {
    luaL_newmetatable(L, SST_LUA_TASK);
    lua_pushcfunction(L, task_call);
    lua_setfield(L, -2, "__call");
    lua_pushcfunction(L, task_index);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, task_gc);
    lua_setfield(L, -2, "__gc");
    lua_pop(L, 1);
    static const luaL_Reg fmethods[] = {{"result", future_result}, {"id", future_id}, {NULL, NULL}};
    luaL_newmetatable(L, SST_LUA_FUTURE);
    luaL_newlib(L, fmethods);
    lua_setfield(L, -2, "__index");
    lua_pop(L, 1);
    luaL_newmetatable(L, SST_LUA_FINAL);
    lua_pop(L, 1);
    lua_pushcfunction(L, l_task);
    lua_setfield(L, -2, "task");
    lua_pushcfunction(L, l_get_stream_writer);
    lua_setfield(L, -2, "get_stream_writer");
    /* superstep.entrypoint: callable, with .final */
    lua_newtable(L);
    lua_pushcfunction(L, l_final);
    lua_setfield(L, -2, "final");
    lua_newtable(L);
    lua_pushcfunction(L, l_entrypoint);
    lua_setfield(L, -2, "__call");
    lua_setmetatable(L, -2);
    lua_setfield(L, -2, "entrypoint");
}
