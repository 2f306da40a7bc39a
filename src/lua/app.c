/* SPDX-License-Identifier: MIT */
/*
 * The compiled app: invoke, stream, get_state, get_state_history,
 * update_state and drawing, with LangGraph's config tables
 * ({configurable = {thread_id = ..., checkpoint_id = ...}, recursion_limit = ...}).
 */
#include <stdio.h>

#include "lua_int.h"

enum { UV_GRAPH = 1, UV_SAVER = 2, UV_THREADS = 3 };

typedef struct lthread {
    sst_graph_thread *t;
} lthread;

sst__lua_app *sst__lua_check_app(lua_State *L, int idx) {
    sst__lua_app *a = luaL_checkudata(L, idx, SST_LUA_APP);
    if (a->cg == NULL) {
        sst__lua_raisef(L, SST_EINVAL, "app: closed");
    }
    return a;
}

/* Frees the thread of the lthread at @p idx (once). */
static void free_lthread(lua_State *L, int idx) {
    lthread *t = lua_touserdata(L, idx);
    if (t != NULL) {
        sst_graph_thread_free(t->t);
        t->t = NULL;
    }
}

static int thread_gc(lua_State *L) {
    free_lthread(L, 1);
    return 0;
}

static int app_gc(lua_State *L) {
    sst__lua_app *a = luaL_checkudata(L, 1, SST_LUA_APP);
    /* In-memory threads go before the compiled graph they point to. */
    if (lua_getiuservalue(L, 1, UV_THREADS) == LUA_TTABLE) {
        lua_pushnil(L);
        while (lua_next(L, -2) != 0) {
            free_lthread(L, -1);
            lua_pop(L, 1);
        }
    }
    lua_pop(L, 1);
    sst_engine_free(a->engine);
    a->engine = NULL;
    if (!a->borrowed_cg) {
        sst_compiled_graph_free(a->cg);
    }
    a->cg = NULL;
    return 0;
}

int sst__lua_app_wrap(lua_State *L, sst_compiled_graph *cg, int owner_idx, int saver_idx,
                      uint64_t recursion_limit) {
    owner_idx = lua_absindex(L, owner_idx);
    saver_idx = saver_idx != 0 ? lua_absindex(L, saver_idx) : 0;
    sst__lua_app *a = lua_newuserdatauv(L, sizeof *a, 3);
    memset(a, 0, sizeof *a);
    a->cg = cg;
    a->borrowed_cg = true;
    a->workers = 1; /* Lua tools run in the invoking thread's state */
    a->recursion_limit = recursion_limit;
    luaL_setmetatable(L, SST_LUA_APP);
    lua_pushvalue(L, owner_idx);
    lua_setiuservalue(L, -2, UV_GRAPH);
    lua_newtable(L);
    lua_setiuservalue(L, -2, UV_THREADS);
    if (saver_idx != 0) {
        a->saver = sst__lua_saver(L, saver_idx);
        lua_pushvalue(L, saver_idx);
        lua_setiuservalue(L, -2, UV_SAVER);
    }
    return 1;
}

/* A list of node names at @p idx as an array of C strings (kept alive by the table). */
static size_t name_list(lua_State *L, int t, const char *key, const char **out, size_t max) {
    size_t n = 0;
    if (lua_getfield(L, t, key) == LUA_TTABLE) {
        n = lua_rawlen(L, -1);
        if (n > max) {
            sst__lua_raisef(L, SST_EINVAL, "compile: %s lists more than %d nodes", key, (int)max);
        }
        for (size_t i = 0; i < n; i++) {
            lua_rawgeti(L, -1, (lua_Integer)i + 1);
            out[i] = lua_tostring(L, -1);
            lua_pop(L, 1);
            if (out[i] == NULL) {
                sst__lua_raisef(L, SST_EINVAL, "compile: %s must list node names", key);
            }
        }
    }
    lua_pop(L, 1);
    return n;
}

static sst_durability durability_of(lua_State *L, int idx, sst_durability def) {
    if (lua_isnil(L, idx)) {
        return def;
    }
    const char *d = luaL_checkstring(L, idx);
    if (strcmp(d, "sync") == 0) {
        return SST_DURABILITY_SYNC;
    } else if (strcmp(d, "async") == 0) {
        return SST_DURABILITY_ASYNC;
    } else if (strcmp(d, "exit") == 0) {
        return SST_DURABILITY_EXIT;
    }
    sst__lua_raisef(L, SST_EINVAL, "durability must be \"sync\", \"async\" or \"exit\", got \"%s\"",
                    d);
    return def;
}

int sst__lua_compile(lua_State *L, int graph_idx, int opts_idx) {
    graph_idx = lua_absindex(L, graph_idx);
    const sst_graph *g = sst__lua_graph_of(L, graph_idx);
    sst_compile_opts co;
    sst_compile_opts_init(&co);
    const char *before[64], *after[64];
    sst__lua_app *a = lua_newuserdatauv(L, sizeof *a, 3);
    memset(a, 0, sizeof *a);
    a->workers = 1;
    a->recursion_limit = 25;
    luaL_setmetatable(L, SST_LUA_APP);
    int app = lua_gettop(L);
    lua_pushvalue(L, graph_idx);
    lua_setiuservalue(L, app, UV_GRAPH);
    lua_newtable(L);
    lua_setiuservalue(L, app, UV_THREADS);
    if (opts_idx != 0) {
        opts_idx = lua_absindex(L, opts_idx);
        co.n_before = name_list(L, opts_idx, "interrupt_before", before, SST_ARRAY_LEN(before));
        co.interrupt_before = before;
        co.n_after = name_list(L, opts_idx, "interrupt_after", after, SST_ARRAY_LEN(after));
        co.interrupt_after = after;
        if (lua_getfield(L, opts_idx, "checkpointer") != LUA_TNIL) {
            if ((a->saver = sst__lua_saver(L, -1)) == NULL) {
                return sst__lua_raisef(L, SST_EINVAL,
                                       "compile: checkpointer must be a MemorySaver() or "
                                       "SqliteSaver(path)");
            }
            lua_pushvalue(L, -1);
            lua_setiuservalue(L, app, UV_SAVER);
        }
        lua_pop(L, 1);
        lua_getfield(L, opts_idx, "recursion_limit");
        if (!lua_isnil(L, -1)) {
            lua_Integer n = luaL_checkinteger(L, -1);
            if (n < 1) {
                return sst__lua_raisef(L, SST_EINVAL,
                                       "compile: recursion_limit must be at least 1");
            }
            a->recursion_limit = (uint64_t)n;
        }
        lua_pop(L, 1);
        lua_getfield(L, opts_idx, "durability");
        a->durability = durability_of(L, -1, SST_DURABILITY_ASYNC);
        lua_pop(L, 1);
        lua_getfield(L, opts_idx, "workers");
        if (!lua_isnil(L, -1)) {
            lua_Integer n = luaL_checkinteger(L, -1);
            if (n < 1 || n > 256) {
                return sst__lua_raisef(L, SST_EINVAL, "compile: workers must be between 1 and 256");
            }
            a->workers = (unsigned)n;
        }
        lua_pop(L, 1);
        lua_getfield(L, opts_idx, "memory_limit");
        if (!lua_isnil(L, -1)) {
            int ok;
            lua_Integer n = lua_tointegerx(L, -1, &ok);
            if (!ok || n < 1) {
                return sst__lua_raisef(L, SST_EINVAL,
                                       "compile: memory_limit must be a number of bytes above 0");
            }
            /* This state's limit (a worker state runs this compile too), unless the host set it. */
            sst__lua_mem *m = sst__lua_mem_of(L);
            if (m != NULL && !m->fixed) {
                m->limit = (size_t)n;
            }
        }
        lua_pop(L, 1);
    }
    sst_error err = {0};
    if ((a->cg = sst_graph_compile(g, &co, &err)) == NULL) {
        return sst__lua_raise(L, &err);
    }
    lua_settop(L, app);
    return 1;
}

/* ---- config ---- */

/* config.configurable[key] or config[key] as a string, or NULL. */
static const char *config_string(lua_State *L, int cfg, const char *key) {
    if (cfg == 0) {
        return NULL;
    }
    const char *s = NULL;
    if (lua_getfield(L, cfg, "configurable") == LUA_TTABLE) {
        if (lua_getfield(L, -1, key) != LUA_TNIL) {
            s = luaL_checkstring(L, -1);
        }
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
    if (s == NULL) {
        if (lua_getfield(L, cfg, key) != LUA_TNIL) {
            s = luaL_checkstring(L, -1);
        }
        lua_pop(L, 1);
    }
    return s; /* strings stay alive: they are referenced by the config table */
}

static int config_index(lua_State *L, int idx) {
    if (lua_isnoneornil(L, idx)) {
        return 0;
    }
    luaL_checktype(L, idx, LUA_TTABLE);
    return lua_absindex(L, idx);
}

static void forbid_worker(lua_State *L, const char *what) {
    lua_getfield(L, LUA_REGISTRYINDEX, "superstep.is_worker");
    bool worker = lua_toboolean(L, -1);
    lua_pop(L, 1);
    if (worker) {
        sst__lua_raisef(L, SST_EINVAL,
                        "app:%s was called while a worker thread loads the script; guard top-level "
                        "runs with `if not superstep.worker then ... end`",
                        what);
    }
}

static lthread *new_lthread(lua_State *L) {
    lthread *lt = lua_newuserdatauv(L, sizeof *lt, 0);
    lt->t = NULL;
    if (luaL_newmetatable(L, "superstep.thread")) {
        lua_pushcfunction(L, thread_gc);
        lua_setfield(L, -2, "__gc");
    }
    lua_setmetatable(L, -2);
    return lt;
}

/* Frees an owned thread now (its userdata on the stack then holds nothing). */
static void release_thread(lua_State *L, sst_graph_thread *t) {
    for (int i = lua_gettop(L); i > 0; i--) {
        lthread *lt = luaL_testudata(L, i, "superstep.thread");
        if (lt != NULL && lt->t == t) {
            sst_graph_thread_free(t);
            lt->t = NULL;
            return;
        }
    }
}

/*
 * The thread for a config: a durable one opened on the saver (to be freed by
 * release_thread: *owned; left on the stack until then), an in-memory one kept by the app, or NULL
 * (no id).
 */
static sst_graph_thread *thread_for(lua_State *L, int app_idx, sst__lua_app *a, int cfg,
                                    bool *owned) {
    *owned = false;
    const char *id = config_string(L, cfg, "thread_id");
    if (id == NULL) {
        return NULL;
    }
    sst_error err = {0};
    if (a->saver != NULL) {
        /* Left on the stack: its __gc frees the thread if a later step raises. */
        lthread *lt = new_lthread(L);
        if ((lt->t = sst_graph_thread_open(a->cg, a->saver, id, &err)) == NULL) {
            sst__lua_raise(L, &err);
        }
        *owned = true;
        return lt->t;
    }
    lua_getiuservalue(L, app_idx, UV_THREADS);
    if (lua_getfield(L, -1, id) == LUA_TUSERDATA) {
        sst_graph_thread *t = ((lthread *)lua_touserdata(L, -1))->t;
        lua_pop(L, 2);
        return t;
    }
    lua_pop(L, 1);
    lthread *lt = new_lthread(L);
    if ((lt->t = sst_graph_thread_new(a->cg, &err)) == NULL) {
        sst__lua_raise(L, &err);
    }
    lua_setfield(L, -2, id);
    lua_pop(L, 1);
    return lt->t;
}

/* ---- running ---- */

typedef struct collect {
    lua_State *L;
    int list; /* stack index of the events table */
} collect;

static const char *mode_name(sst_stream_mode m) {
    switch (m) {
        case SST_STREAM_VALUES:
            return "values";
        case SST_STREAM_UPDATES:
            return "updates";
        case SST_STREAM_CUSTOM:
            return "custom";
        case SST_STREAM_MESSAGES:
            return "messages";
        default:
            return "debug";
    }
}

static sst_code collect_event(sst_stream_mode mode, const char *node, const sst_value *event,
                              void *ud) {
    collect *c = ud;
    lua_State *L = c->L;
    if (!lua_checkstack(L, 4)) {
        return SST_ENOMEM;
    }
    /* Called by the graph layer inside app:stream: no memory limit (see callbacks.c). */
    bool armed = sst__lua_arm(L, false);
    lua_createtable(L, 3, 0);
    lua_pushstring(L, mode_name(mode));
    lua_rawseti(L, -2, 1);
    sst__lua_push_table(L, event);
    lua_rawseti(L, -2, 2);
    if (node != NULL) {
        lua_pushstring(L, node);
        lua_rawseti(L, -2, 3);
    }
    lua_rawseti(L, c->list, (lua_Integer)lua_rawlen(L, c->list) + 1);
    sst__lua_arm(L, armed);
    return SST_OK;
}

static unsigned parse_mode(lua_State *L, int idx) {
    static const char *const names[] = {"values", "updates", "custom", "debug", "messages", NULL};
    if (lua_isnoneornil(L, idx)) {
        return SST_STREAM_VALUES;
    }
    if (lua_type(L, idx) == LUA_TTABLE) {
        unsigned modes = 0;
        for (lua_Integer i = 1; i <= (lua_Integer)lua_rawlen(L, idx); i++) {
            lua_rawgeti(L, idx, i);
            modes |= 1u << luaL_checkoption(L, -1, NULL, names);
            lua_pop(L, 1);
        }
        return modes;
    }
    return 1u << luaL_checkoption(L, idx, NULL, names);
}

/* Field @p key of the Command at index 2 as a value kept on the stack, or NULL. */
static const sst_value *command_field(lua_State *L, const char *key, const char *what) {
    if (lua_getfield(L, 2, key) == LUA_TNIL) {
        lua_pop(L, 1);
        return NULL;
    }
    sst_error err = {0};
    sst_value *v = sst__lua_to_value(L, -1, what, &err);
    lua_pop(L, 1);
    if (v == NULL) {
        sst__lua_raise(L, &err);
    }
    sst__lua_push_owned(L, v); /* kept alive by the stack until the call returns */
    return v;
}

/*
 * Runs the app: arguments (app, input, config); @p events is the index of a
 * table collecting stream events, or 0. Leaves the final state table (with
 * __interrupt__ when interrupted) on the stack.
 */
static int run(lua_State *L, unsigned modes, int events) {
    sst__lua_app *a = sst__lua_check_app(L, 1);
    forbid_worker(L, events != 0 ? "stream" : "invoke");
    int cfg = config_index(L, 3);
    sst_invoke_opts o;
    sst_invoke_opts_init(&o);
    o.recursion_limit = a->recursion_limit;
    o.durability = a->durability;
    sst_error err = {0};
    sst_value *input = NULL;
    if (sst__lua_is_command(L, 2)) {
        o.resume = command_field(L, "resume", "Command resume");
        o.update = command_field(L, "update", "Command update");
        o.goto_targets = command_field(L, "goto", "Command goto");
        if (o.update != NULL && !sst_is_object(o.update)) {
            return sst__lua_raisef(L, SST_ETYPE, "Command update must be a table of fields, got %s",
                                   sst_type_name(sst_value_type(o.update)));
        }
    } else if (!lua_isnoneornil(L, 2)) {
        if ((input = sst__lua_to_object(L, 2, "input", &err)) == NULL) {
            return sst__lua_raise(L, &err);
        }
        sst__lua_push_owned(L, input);
    }
    if (cfg != 0) {
        lua_getfield(L, cfg, "recursion_limit");
        if (!lua_isnil(L, -1)) {
            o.recursion_limit = (uint64_t)luaL_checkinteger(L, -1);
        }
        lua_pop(L, 1);
        lua_getfield(L, cfg, "durability");
        o.durability = durability_of(L, -1, o.durability);
        lua_pop(L, 1);
    }
    o.checkpoint_id = config_string(L, cfg, "checkpoint_id");
    if (a->workers > 1 && a->engine == NULL) {
        sst_engine_opts eo;
        sst_engine_opts_init(&eo);
        eo.workers = a->workers;
        if ((a->engine = sst_engine_new(&eo, &err)) == NULL) {
            return sst__lua_raise(L, &err);
        }
    }
    o.engine = a->engine;
    collect c = {L, events};
    if (events != 0) {
        o.stream_modes = modes;
        o.stream = collect_event;
        o.stream_user_data = &c;
    }
    bool owned;
    sst_graph_thread *t = thread_for(L, 1, a, cfg, &owned);
    sst_graph_result *r = sst_graph_invoke(a->cg, t, input, &o, &err);
    if (owned) {
        release_thread(L, t);
    }
    if (r == NULL) {
        return sst__lua_raise(L, &err);
    }
    if (sst_graph_result_status(r) == SST_RUN_FAILED) {
        if (sst_graph_result_error(r)->code == SST_ELIMIT) {
            sst__lua_note_limit(L); /* a node calling this run fails for the limit too */
        }
        sst__lua_push_error(L, sst_graph_result_error(r)->code, sst_graph_result_error(r)->msg,
                            sst_graph_result_error_node(r));
        sst_graph_result_free(r);
        return lua_error(L);
    }
    sst__lua_push_table(L, sst_graph_result_state(r));
    if (sst_graph_result_status(r) == SST_RUN_INTERRUPTED) {
        sst__lua_push_table(L, sst_graph_result_interrupts(r));
        lua_setfield(L, -2, "__interrupt__");
    }
    sst_graph_result_free(r);
    return 1;
}

/* app:invoke(input, config) -> state */
static int app_invoke(lua_State *L) {
    lua_settop(L, 3);
    return run(L, 0, 0);
}

static int stream_next(lua_State *L) {
    lua_Integer i = lua_tointeger(L, lua_upvalueindex(2)) + 1;
    lua_pushinteger(L, i);
    lua_replace(L, lua_upvalueindex(2));
    if (lua_rawgeti(L, lua_upvalueindex(1), i) != LUA_TTABLE) {
        return 0;
    }
    int ev = lua_gettop(L);
    if (lua_toboolean(L, lua_upvalueindex(3))) { /* several modes: (mode, event) */
        lua_rawgeti(L, ev, 1);
        lua_rawgeti(L, ev, 2);
        return 2;
    }
    lua_rawgeti(L, ev, 2);
    return 1;
}

/* app:stream(input, config, mode) -> iterator over the events of the run */
static int app_stream(lua_State *L) {
    lua_settop(L, 4);
    unsigned modes = parse_mode(L, 4);
    lua_newtable(L);
    int events = lua_gettop(L);
    run(L, modes, events);
    lua_pushvalue(L, events);
    lua_pushinteger(L, 0);
    lua_pushboolean(L, lua_type(L, 4) == LUA_TTABLE);
    lua_pushcclosure(L, stream_next, 3);
    return 1;
}

/* app:get_state(config) */
static int app_get_state(lua_State *L) {
    sst__lua_app *a = sst__lua_check_app(L, 1);
    int cfg = config_index(L, 2);
    bool owned;
    sst_graph_thread *t = thread_for(L, 1, a, cfg, &owned);
    if (t == NULL) {
        return sst__lua_raisef(L, SST_EINVAL, "get_state: the config names no thread_id");
    }
    if (!owned) { /* in-memory thread: its values only */
        lua_createtable(L, 0, 1);
        sst__lua_push_table(L, sst_graph_thread_state(t));
        lua_setfield(L, -2, "values");
        return 1;
    }
    sst_error err = {0};
    sst_value *st = sst_graph_get_state(t, config_string(L, cfg, "checkpoint_id"), &err);
    release_thread(L, t);
    if (st == NULL) {
        return sst__lua_raise(L, &err);
    }
    sst__lua_push_table(L, st);
    sst_value_unref(st);
    return 1;
}

/* app:get_state_history(config [, {filter = {...}, limit = n}]) */
static int app_get_state_history(lua_State *L) {
    sst__lua_app *a = sst__lua_check_app(L, 1);
    int cfg = config_index(L, 2);
    sst_error err = {0};
    sst_value *filter = NULL;
    size_t limit = 0;
    if (lua_istable(L, 3)) {
        if (lua_getfield(L, 3, "filter") != LUA_TNIL) {
            if ((filter = sst__lua_to_value(L, -1, "filter", &err)) == NULL) {
                return sst__lua_raise(L, &err);
            }
            sst__lua_push_owned(L, filter);
        }
        lua_getfield(L, 3, "limit");
        limit = lua_isnil(L, -1) ? 0 : (size_t)luaL_checkinteger(L, -1);
        lua_pop(L, 1);
    }
    bool owned;
    sst_graph_thread *t = a->saver != NULL ? thread_for(L, 1, a, cfg, &owned) : NULL;
    if (t == NULL) {
        return sst__lua_raisef(L, SST_EINVAL,
                               "get_state_history: needs a checkpointer and a thread_id");
    }
    sst_value *h = sst_graph_get_state_history(t, filter, limit, &err);
    release_thread(L, t);
    if (h == NULL) {
        return sst__lua_raise(L, &err);
    }
    sst__lua_push_table(L, h);
    sst_value_unref(h);
    return 1;
}

/* Pushes {configurable = {thread_id, checkpoint_ns = "", checkpoint_id}} of thread @p t's head. */
static int push_head_config(lua_State *L, sst_graph_thread *t, const char *thread_id) {
    sst_error err = {0};
    sst_value *st = sst_graph_get_state(t, NULL, &err);
    release_thread(L, t);
    if (st == NULL) {
        return sst__lua_raise(L, &err);
    }
    lua_createtable(L, 0, 1);
    lua_createtable(L, 0, 3);
    lua_pushstring(L, thread_id);
    lua_setfield(L, -2, "thread_id");
    lua_pushstring(L, "");
    lua_setfield(L, -2, "checkpoint_ns");
    sst__lua_push_value(L, sst_object_get(st, "checkpoint_id"));
    lua_setfield(L, -2, "checkpoint_id");
    lua_setfield(L, -2, "configurable");
    sst_value_unref(st);
    return 1;
}

/* The durable thread of config @p cfg for @p what, or raises. */
static sst_graph_thread *durable_thread(lua_State *L, sst__lua_app *a, int cfg, const char *what) {
    bool owned = false;
    sst_graph_thread *t = a->saver != NULL ? thread_for(L, 1, a, cfg, &owned) : NULL;
    if (t == NULL) {
        sst__lua_raisef(L, SST_EINVAL, "%s: needs a checkpointer and a thread_id", what);
    }
    return t;
}

/* app:update_state(config, values | nil [, as_node]) -> config of the new checkpoint */
static int app_update_state(lua_State *L) {
    sst__lua_app *a = sst__lua_check_app(L, 1);
    int cfg = config_index(L, 2);
    const char *as_node = luaL_optstring(L, 4, NULL);
    sst_error err = {0};
    sst_value *values = NULL;
    if (!lua_isnoneornil(L, 3)) {
        if ((values = sst__lua_to_object(L, 3, "values", &err)) == NULL) {
            return sst__lua_raise(L, &err);
        }
        sst__lua_push_owned(L, values);
    }
    sst_graph_thread *t = durable_thread(L, a, cfg, "update_state");
    if (sst_graph_update_state(t, config_string(L, cfg, "checkpoint_id"), values, as_node, &err) !=
        SST_OK) {
        release_thread(L, t);
        return sst__lua_raise(L, &err);
    }
    return push_head_config(L, t, config_string(L, cfg, "thread_id"));
}

/* app:bulk_update_state(config, { { {values = ..., as_node = ...}, ... }, ... }) -> config */
static int app_bulk_update_state(lua_State *L) {
    sst__lua_app *a = sst__lua_check_app(L, 1);
    int cfg = config_index(L, 2);
    luaL_checktype(L, 3, LUA_TTABLE);
    sst_error err = {0};
    sst_value *steps = sst__lua_to_value(L, 3, "supersteps", &err);
    if (steps == NULL) {
        return sst__lua_raise(L, &err);
    }
    sst__lua_push_owned(L, steps);
    sst_graph_thread *t = durable_thread(L, a, cfg, "bulk_update_state");
    if (sst_graph_bulk_update_state(t, config_string(L, cfg, "checkpoint_id"), steps, &err) !=
        SST_OK) {
        release_thread(L, t);
        return sst__lua_raise(L, &err);
    }
    return push_head_config(L, t, config_string(L, cfg, "thread_id"));
}

static int draw(lua_State *L, bool mermaid) {
    sst__lua_app *a = sst__lua_check_app(L, 1);
    sst_error err = {0};
    char *text =
        mermaid ? sst_compiled_graph_mermaid(a->cg, &err) : sst_compiled_graph_dot(a->cg, &err);
    if (text == NULL) {
        return sst__lua_raise(L, &err);
    }
    lua_pushstring(L, text);
    sst_free(text);
    return 1;
}

static int app_draw_mermaid(lua_State *L) {
    return draw(L, true);
}

static int app_draw_dot(lua_State *L) {
    return draw(L, false);
}

void sst__lua_open_app(lua_State *L) {
    static const luaL_Reg methods[] = {{"invoke", app_invoke},
                                       {"stream", app_stream},
                                       {"get_state", app_get_state},
                                       {"get_state_history", app_get_state_history},
                                       {"update_state", app_update_state},
                                       {"bulk_update_state", app_bulk_update_state},
                                       {"draw_mermaid", app_draw_mermaid},
                                       {"draw_dot", app_draw_dot},
                                       {NULL, NULL}};
    luaL_newmetatable(L, SST_LUA_APP);
    lua_pushcfunction(L, app_gc);
    lua_setfield(L, -2, "__gc");
    luaL_newlib(L, methods);
    lua_setfield(L, -2, "__index");
    lua_pop(L, 1);
}
