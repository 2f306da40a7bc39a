/* SPDX-License-Identifier: MIT */
/*
 * What an invoke or a stream reads before it runs: LangGraph's config table
 * ({configurable = {thread_id, checkpoint_id, ...}, recursion_limit,
 * durability, context}), the options table (docs/lua.md), and the thread the
 * config names.
 */
#include "lua_int.h"

#define SST_LUA_THREAD "superstep.thread"

void sst__lua_check_options(lua_State *L, int idx, const char *const *known, const char *what) {
    idx = lua_absindex(L, idx);
    lua_pushnil(L);
    while (lua_next(L, idx) != 0) {
        lua_pop(L, 1);
        const char *key = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
        bool ok = false;
        for (size_t i = 0; key != NULL && known[i] != NULL && !ok; i++) {
            ok = strcmp(key, known[i]) == 0;
        }
        if (!ok) {
            sst__lua_raisef(L, SST_EINVAL, "%s: unknown option '%s'", what,
                            key != NULL ? key : luaL_typename(L, -1));
        }
    }
}

const char **sst__lua_string_list(lua_State *L, int idx, size_t *n, const char *what) {
    idx = lua_absindex(L, idx);
    *n = lua_rawlen(L, idx);
    const char **out = lua_newuserdatauv(L, (*n > 0 ? *n : 1) * sizeof *out, 0);
    for (size_t i = 0; i < *n; i++) {
        lua_rawgeti(L, idx, (lua_Integer)i + 1);
        out[i] = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
        lua_pop(L, 1);
        if (out[i] == NULL) {
            sst__lua_raisef(L, SST_EINVAL, "%s: expected a list of names, item %zu is not a string",
                            what, i + 1);
        }
    }
    return out;
}

sst_durability sst__lua_durability(lua_State *L, int idx, sst_durability def, const char *what) {
    if (lua_isnil(L, idx)) {
        return def;
    }
    const char *d = lua_tostring(L, idx);
    if (lua_type(L, idx) == LUA_TSTRING && strcmp(d, "sync") == 0) {
        return SST_DURABILITY_SYNC;
    } else if (lua_type(L, idx) == LUA_TSTRING && strcmp(d, "async") == 0) {
        return SST_DURABILITY_ASYNC;
    } else if (lua_type(L, idx) == LUA_TSTRING && strcmp(d, "exit") == 0) {
        return SST_DURABILITY_EXIT;
    }
    sst__lua_raisef(L, SST_EINVAL, "%s: durability must be \"sync\", \"async\" or \"exit\", got %s",
                    what, d != NULL ? d : luaL_typename(L, idx));
    return def;
}

const char *sst__lua_config_string(lua_State *L, int cfg, const char *key) {
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

int sst__lua_config_index(lua_State *L, int idx) {
    if (lua_isnoneornil(L, idx)) {
        return 0;
    }
    luaL_checktype(L, idx, LUA_TTABLE);
    return lua_absindex(L, idx);
}

/* ---- threads ---- */

void sst__lua_thread_unref(sst__lua_thread *lt) {
    if (lt != NULL && --lt->refs == 0) {
        sst_graph_thread_free(lt->t);
        sst__free(lt);
    }
}

static int thread_gc(lua_State *L) {
    sst__lua_thread **ud = luaL_checkudata(L, 1, SST_LUA_THREAD);
    sst__lua_thread_unref(*ud);
    *ud = NULL;
    return 0;
}

/* Pushes a superstep.thread userdata holding a new, empty sst__lua_thread. */
static sst__lua_thread *new_thread_ud(lua_State *L) {
    sst__lua_thread **ud = lua_newuserdatauv(L, sizeof *ud, 0);
    *ud = NULL;
    if (luaL_newmetatable(L, SST_LUA_THREAD)) {
        lua_pushcfunction(L, thread_gc);
        lua_setfield(L, -2, "__gc");
    }
    lua_setmetatable(L, -2);
    if ((*ud = sst__calloc(1, sizeof **ud)) == NULL) {
        sst__lua_raise_enomem(L);
    }
    (*ud)->refs = 1;
    return *ud;
}

void sst__lua_thread_drop(lua_State *L, int idx, bool durable_only) {
    sst__lua_thread **ud = luaL_testudata(L, idx, SST_LUA_THREAD);
    if (ud != NULL && *ud != NULL && (!durable_only || (*ud)->durable)) {
        sst__lua_thread_unref(*ud);
        *ud = NULL;
    }
}

sst__lua_thread *sst__lua_thread_for(lua_State *L, int app_idx, sst__lua_app *a, int cfg,
                                     bool with_ns) {
    app_idx = lua_absindex(L, app_idx);
    const char *id = sst__lua_config_string(L, cfg, "thread_id");
    if (id == NULL) {
        lua_pushnil(L);
        return NULL;
    }
    sst_error err = {0};
    if (a->saver != NULL) {
        const char *ns = with_ns ? sst__lua_config_string(L, cfg, "checkpoint_ns") : NULL;
        sst__lua_thread *lt = new_thread_ud(L);
        lt->durable = true;
        if ((lt->t = sst_graph_thread_open_ns(a->cg, a->saver, id, ns != NULL ? ns : "", &err)) ==
            NULL) {
            sst__lua_raise(L, &err);
        }
        return lt;
    }
    lua_getiuservalue(L, app_idx, SST__APP_THREADS);
    if (lua_getfield(L, -1, id) == LUA_TUSERDATA) {
        lua_remove(L, -2);
        return *(sst__lua_thread **)lua_touserdata(L, -1);
    }
    lua_pop(L, 1);
    sst__lua_thread *lt = new_thread_ud(L);
    if ((lt->t = sst_graph_thread_new(a->cg, &err)) == NULL) {
        sst__lua_raise(L, &err);
    }
    lua_pushvalue(L, -1);
    lua_setfield(L, -3, id);
    lua_remove(L, -2);
    return lt;
}

/* ---- a prepared call ---- */

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

/* The Lua value at @p idx as an owned value in c->values[slot] (nil: NULL). */
static const sst_value *own(lua_State *L, sst__lua_call *c, size_t slot, int idx,
                            const char *what) {
    if (lua_isnoneornil(L, idx)) {
        return NULL;
    }
    sst_error err = {0};
    /* The config is an object even when empty ({} is a list otherwise). */
    c->values[slot] =
        slot == 4 ? sst__lua_to_object(L, idx, what, &err) : sst__lua_to_value(L, idx, what, &err);
    if (c->values[slot] == NULL) {
        sst__lua_raise(L, &err);
    }
    return c->values[slot];
}

/* The input at index 2: a Command's resume, update and goto, or a state update. */
static void read_input(lua_State *L, sst__lua_call *c) {
    if (sst__lua_is_command(L, 2)) {
        static const char *const keys[] = {"resume", "update", "goto"};
        static const char *const whats[] = {"Command resume", "Command update", "Command goto"};
        const sst_value *v[3];
        for (size_t i = 0; i < 3; i++) {
            lua_getfield(L, 2, keys[i]);
            v[i] = own(L, c, i, -1, whats[i]);
            lua_pop(L, 1);
        }
        if (v[1] != NULL && !sst_is_object(v[1])) {
            sst__lua_raisef(L, SST_ETYPE, "Command update must be a table of fields, got %s",
                            sst_type_name(sst_value_type(v[1])));
        }
        c->o.resume = v[0];
        c->o.update = v[1];
        c->o.goto_targets = v[2];
    } else if (!lua_isnoneornil(L, 2)) {
        sst_error err = {0};
        if ((c->input = sst__lua_to_object(L, 2, "input", &err)) == NULL) {
            sst__lua_raise(L, &err);
        }
    }
}

/*
 * The interrupt list @p key of the options at @p t: nil (none), "*" (every
 * node: SST_ALL_NODES) or a list of node names, kept in a scratch userdata
 * left on the stack (the names stay alive in the options table).
 */
const char *const *sst__lua_interrupt_list(lua_State *L, int t, const char *key, const char *who,
                                           size_t *n) {
    static const char *const all[] = {SST_ALL_NODES};
    *n = 0;
    int type = lua_getfield(L, t, key);
    if (type == LUA_TNIL) {
        return NULL;
    }
    if (type == LUA_TSTRING && strcmp(lua_tostring(L, -1), SST_ALL_NODES) == 0) {
        *n = 1;
        return all;
    }
    if (type != LUA_TTABLE) {
        sst__lua_raisef(L, SST_EINVAL, "%s: %s must be \"*\" or a list of node names, got %s%s%s%s",
                        who, key, luaL_typename(L, -1), type == LUA_TSTRING ? " '" : "",
                        type == LUA_TSTRING ? lua_tostring(L, -1) : "",
                        type == LUA_TSTRING ? "'" : "");
    }
    char what[64];
    snprintf(what, sizeof what, "%s: %s", who, key);
    return sst__lua_string_list(L, -1, n, what);
}

/*
 * interrupt_before/after of an invoke's options, read as compile's and
 * copied (a stream outlives its arguments); they replace the compiled lists.
 */
static void read_interrupts(lua_State *L, sst__lua_call *c, int t, const char *what) {
    for (int k = 0; k < 2; k++) {
        int top = lua_gettop(L);
        size_t n;
        const char *const *list = sst__lua_interrupt_list(
            L, t, k == 0 ? "interrupt_before" : "interrupt_after", what, &n);
        if (list != NULL) {
            char **names = sst__calloc(n > 0 ? n : 1, sizeof *names);
            if (names == NULL) {
                sst__lua_raise_enomem(L);
            }
            c->interrupts[k] = names;
            for (size_t i = 0; i < n; i++) {
                if ((names[i] = sst__strndup(list[i], strlen(list[i]))) == NULL) {
                    sst__lua_raise_enomem(L);
                }
                *(k == 0 ? &c->o.n_before : &c->o.n_after) = i + 1;
            }
            *(k == 0 ? &c->o.interrupt_before : &c->o.interrupt_after) = (const char *const *)names;
        }
        lua_settop(L, top);
    }
}

/* recursion_limit, durability and context from the table at @p t (config, then options). */
static void read_settings(lua_State *L, sst__lua_call *c, int t, const char *what) {
    lua_getfield(L, t, "recursion_limit");
    if (!lua_isnil(L, -1)) {
        int ok;
        lua_Integer n = lua_tointegerx(L, -1, &ok);
        if (!ok || n < 1) {
            sst__lua_raisef(L, SST_EINVAL, "%s: recursion_limit must be an integer of at least 1",
                            what);
        }
        c->o.recursion_limit = (uint64_t)n;
    }
    lua_pop(L, 1);
    lua_getfield(L, t, "durability");
    c->o.durability = sst__lua_durability(L, -1, c->o.durability, what);
    lua_pop(L, 1);
    lua_getfield(L, t, "context");
    if (!lua_isnil(L, -1)) {
        sst_value_unref(c->values[3]);
        c->values[3] = NULL;
        c->o.context = own(L, c, 3, -1, "context");
    }
    lua_pop(L, 1);
}

void sst__lua_call_prepare(lua_State *L, sst__lua_call *c, int holder, int opts,
                           const char *const *known, const char *what) {
    holder = lua_absindex(L, holder);
    opts = opts != 0 ? lua_absindex(L, opts) : 0;
    sst__lua_app *a = sst__lua_check_app(L, 1);
    forbid_worker(L, what);
    int cfg = sst__lua_config_index(L, 3);
    if (opts != 0) {
        sst__lua_check_options(L, opts, known, what);
    }
    lua_pushvalue(L, 1);
    lua_setiuservalue(L, holder, 1);
    c->app = a;
    sst_invoke_opts_init(&c->o);
    c->o.recursion_limit = a->recursion_limit;
    c->o.durability = a->durability;
    read_input(L, c);
    if (cfg != 0) {
        read_settings(L, c, cfg, what);
        c->o.config = own(L, c, 4, cfg, "config");
    }
    if (opts != 0) {
        read_settings(L, c, opts, what);
        read_interrupts(L, c, opts, what);
    }
    const char *cp = sst__lua_config_string(L, cfg, "checkpoint_id");
    if (cp != NULL && (c->checkpoint_id = sst__strndup(cp, strlen(cp))) == NULL) {
        sst__lua_raise_enomem(L);
    }
    c->o.checkpoint_id = c->checkpoint_id;
    sst_error err = {0};
    if (a->workers > 1 && a->engine == NULL) {
        sst_engine_opts eo;
        sst_engine_opts_init(&eo);
        eo.workers = a->workers;
        if ((a->engine = sst_engine_new(&eo, &err)) == NULL) {
            sst__lua_raise(L, &err);
        }
    }
    c->o.engine = a->engine;
    if (a->saver != NULL && sst__lua_config_string(L, cfg, "thread_id") == NULL) {
        sst__lua_raisef(L, SST_EINVAL,
                        "%s: a checkpointer needs a thread_id in config.configurable", what);
    }
    sst__lua_thread *lt = sst__lua_thread_for(L, 1, a, cfg, false);
    if (lt != NULL) {
        lt->refs++;
        c->thread = lt;
        sst__lua_thread_drop(L, -1,
                             true); /* a durable thread: the call's reference is the only one */
    }
    lua_pop(L, 1);
}

void sst__lua_call_release(sst__lua_call *c) {
    sst__lua_thread_unref(c->thread);
    c->thread = NULL;
}

void sst__lua_call_clear(sst__lua_call *c) {
    sst__lua_call_release(c);
    sst_value_unref(c->input);
    c->input = NULL;
    for (size_t i = 0; i < SST_ARRAY_LEN(c->values); i++) {
        sst_value_unref(c->values[i]);
        c->values[i] = NULL;
    }
    sst__free(c->checkpoint_id);
    c->checkpoint_id = NULL;
    for (int k = 0; k < 2; k++) {
        size_t n = k == 0 ? c->o.n_before : c->o.n_after;
        for (size_t i = 0; c->interrupts[k] != NULL && i < n; i++) {
            sst__free(c->interrupts[k][i]);
        }
        sst__free(c->interrupts[k]);
        c->interrupts[k] = NULL;
    }
}

int sst__lua_raise_run_error(lua_State *L, sst_graph_result *r, const sst_error *err) {
    if (r == NULL) {
        return sst__lua_raise(L, err);
    }
    const sst_error *e = sst_graph_result_error(r);
    if (e->code == SST_ELIMIT) {
        sst__lua_note_limit(L); /* a node calling this run fails for the limit too */
    }
    sst__lua_push_error(L, e->code, e->msg, sst_graph_result_error_node(r));
    const sst_value *detail = sst_graph_result_error_detail(r);
    for (size_t i = 0; i < sst_object_len(detail); i++) { /* a timeout's kind, elapsed, ... */
        sst__lua_push_value(L, sst_object_value_at(detail, i));
        lua_setfield(L, -2, sst_string_cstr(sst_object_key_at(detail, i)));
    }
    sst_graph_result_free(r);
    return lua_error(L);
}
