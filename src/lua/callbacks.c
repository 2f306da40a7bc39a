/* SPDX-License-Identifier: MIT */
/*
 * The C functions the graph layer calls for Lua nodes, routers and
 * reducers. Each finds its Lua function in the calling thread's state
 * (registry superstep.graphs[graph][kind][key]), calls it under a message
 * handler that adds the traceback, and converts the result.
 */
#include <stdio.h>

#include "lua_int.h"
#include "superstep/functional.h"
#include "superstep/json.h"

char sst__lua_interrupt_token;
char sst__lua_parent_token;

/* Registry key of the running node's sst_node_ctx (light userdata). */
static char running_ctx_key;
/* Registry key of the running node's context userdata (futures check it is still alive). */
static char running_lctx_key;

sst_node_ctx *sst__lua_running_ctx(lua_State *L) {
    lua_rawgetp(L, LUA_REGISTRYINDEX, &running_ctx_key);
    sst_node_ctx *ctx = lua_touserdata(L, -1);
    lua_pop(L, 1);
    return ctx;
}

static const char *const kind_table[] = {"nodes", "routers", "reducers"};

int sst__lua_traceback(lua_State *L) {
    if (lua_touserdata(L, 1) == &sst__lua_interrupt_token ||
        lua_touserdata(L, 1) == &sst__lua_parent_token) {
        return 1; /* interrupt() or a subgraph's parent Command unwinding a node: keep it */
    }
    if (lua_type(L, 1) == LUA_TTABLE && lua_getfield(L, 1, "message") == LUA_TSTRING) {
        lua_pop(L, 1);
        return 1; /* an error object {code, message}: kept, its code tells the kind */
    }
    const char *msg =
        lua_type(L, 1) == LUA_TTABLE && luaL_getmetafield(L, 1, "__tostring") != LUA_TNIL
            ? (lua_pop(L, 1), luaL_tolstring(L, 1, NULL))
            : lua_tostring(L, 1);
    if (msg == NULL) {
        msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
    }
    luaL_traceback(L, L, msg, 1);
    return 1;
}

/*
 * Pushes the message handler and the callback's function; returns the
 * handler's index, or 0 with @p err filled. *root (may be NULL) tells
 * whether the graph has a root state (graphs[graph].root).
 */
static int push_function(lua_State *L, const sst__lua_cb *cb, bool *root, sst_error *err) {
    lua_pushcfunction(L, sst__lua_traceback);
    int handler = lua_gettop(L);
    lua_getfield(L, LUA_REGISTRYINDEX, SST_LUA_GRAPHS);
    if (lua_rawgeti(L, -1, cb->graph) == LUA_TTABLE && root != NULL) {
        *root = lua_getfield(L, -1, "root") == LUA_TBOOLEAN;
        lua_pop(L, 1);
    }
    if (lua_istable(L, -1) && lua_getfield(L, -1, kind_table[cb->kind]) == LUA_TTABLE &&
        lua_getfield(L, -1, cb->key) == LUA_TFUNCTION) {
        lua_replace(L, handler + 1);
        lua_settop(L, handler + 1);
        return handler;
    }
    lua_settop(L, handler - 1);
    sst__error(err, SST_EINVAL,
               "lua: %s '%s' of graph %d is missing in this worker's state (the script must "
               "build the same graphs each time it runs)",
               cb->kind == SST__CB_NODE     ? "node"
               : cb->kind == SST__CB_ROUTER ? "router"
                                            : "reducer",
               cb->key, cb->graph);
    return 0;
}

/* ---- the node context userdata ---- */

typedef struct lctx {
    sst_node_ctx *ctx; /* NULL once the node has returned */
} lctx;

static sst_node_ctx *check_ctx(lua_State *L, int idx) {
    lctx *c = luaL_checkudata(L, idx, SST_LUA_CTX);
    if (c->ctx == NULL) {
        luaL_error(L, "the node context is used after its node returned");
    }
    return c->ctx;
}

/* ctx.emit(value) or ctx:emit(value); the context is the closure's upvalue. */
static int ctx_emit(lua_State *L) {
    sst_node_ctx *ctx = check_ctx(L, lua_upvalueindex(1));
    int arg = lua_gettop(L) >= 2 && lua_rawequal(L, 1, lua_upvalueindex(1)) ? 2 : 1;
    sst_error err = {0};
    sst_value *v = sst__lua_to_value(L, arg, "emit", &err);
    if (v == NULL || sst_node_emit(ctx, v, &err) != SST_OK) {
        return sst__lua_raise(L, &err);
    }
    return 0;
}

/* ctx.heartbeat() (LangGraph's runtime.heartbeat()): progress for the idle timeout. */
static int ctx_heartbeat(lua_State *L) {
    sst_node_heartbeat(check_ctx(L, lua_upvalueindex(1)));
    return 0;
}

/* LangGraph's runtime.execution_info as a plain table (a copy: ctx lives only in the node). */
static void push_execution_info(lua_State *L, const sst_node_ctx *ctx) {
    lua_createtable(L, 0, 7);
    const char *const keys[] = {"thread_id", "task_id", "run_id", "checkpoint_id", "checkpoint_ns"};
    const char *const vals[] = {sst_node_thread_id(ctx), sst_node_task_id(ctx),
                                sst_node_run_id(ctx), sst_node_checkpoint_id(ctx),
                                sst_node_checkpoint_ns(ctx)};
    for (size_t i = 0; i < SST_ARRAY_LEN(keys); i++) {
        if (vals[i] != NULL) {
            lua_pushstring(L, vals[i]);
            lua_setfield(L, -2, keys[i]);
        }
    }
    lua_pushinteger(L, (lua_Integer)sst_node_attempt(ctx));
    lua_setfield(L, -2, "node_attempt");
    lua_pushnumber(L, (lua_Number)sst_node_first_attempt_time(ctx));
    lua_setfield(L, -2, "node_first_attempt_time");
}

static int ctx_index(lua_State *L) {
    sst_node_ctx *ctx = check_ctx(L, 1);
    const char *k = luaL_checkstring(L, 2);
    if (strcmp(k, "node") == 0) {
        lua_pushstring(L, sst_node_name(ctx));
    } else if (strcmp(k, "step") == 0) {
        lua_pushinteger(L, (lua_Integer)sst_node_step(ctx));
    } else if (strcmp(k, "attempt") == 0) {
        lua_pushinteger(L, (lua_Integer)sst_node_attempt(ctx));
    } else if (strcmp(k, "input") == 0) {
        const sst_value *in = sst_node_input(ctx);
        if (in == NULL) {
            lua_pushnil(L);
        } else {
            sst__lua_push_value(L, in);
        }
    } else if (strcmp(k, "emit") == 0 || strcmp(k, "heartbeat") == 0) {
        lua_pushvalue(L, 1);
        lua_pushcclosure(L, k[0] == 'e' ? ctx_emit : ctx_heartbeat, 1);
    } else if (strcmp(k, "context") == 0 || strcmp(k, "config") == 0) {
        /* LangGraph's runtime.context and config, as plain tables (nil when not given). */
        bool config = strcmp(k, "config") == 0;
        const sst_value *v = config ? sst_node_config(ctx) : sst_node_context(ctx);
        if (v == NULL && !config) {
            lua_pushnil(L);
        } else if (v == NULL) {
            lua_newtable(L);
        } else {
            sst__lua_push_table(L, v);
        }
        if (config) { /* configurable.checkpoint_ns is the task's, as in LangGraph */
            if (lua_getfield(L, -1, "configurable") != LUA_TTABLE) {
                lua_pop(L, 1);
                lua_newtable(L);
                lua_pushvalue(L, -1);
                lua_setfield(L, -3, "configurable");
            }
            lua_pushstring(L, sst_node_checkpoint_ns(ctx));
            lua_setfield(L, -2, "checkpoint_ns");
            lua_pop(L, 1);
        }
    } else if (strcmp(k, "previous") == 0) { /* an entrypoint's last saved value */
        const sst_value *prev = sst_entrypoint_previous(ctx);
        if (prev == NULL || sst_is_null(prev)) {
            lua_pushnil(L);
        } else {
            sst__lua_push_table(L, prev);
        }
    } else if (strcmp(k, "remaining_steps") == 0) {
        lua_pushinteger(L, (lua_Integer)sst_node_remaining_steps(ctx));
    } else if (strcmp(k, "is_last_step") == 0) {
        lua_pushboolean(L, sst_node_is_last_step(ctx));
    } else if (strcmp(k, "execution_info") == 0) {
        push_execution_info(L, ctx);
    } else if (strcmp(k, "store") == 0) { /* LangGraph's runtime.store: the run's store */
        sst_store *st = sst_node_store(ctx);
        if (st == NULL) {
            lua_pushnil(L);
        } else {
            sst__lua_push_store(L, st);
        }
    } else {
        lua_pushnil(L);
    }
    return 1;
}

static void open_ctx(lua_State *L) {
    if (luaL_newmetatable(L, SST_LUA_CTX)) {
        lua_pushcfunction(L, ctx_index);
        lua_setfield(L, -2, "__index");
    }
    lua_pop(L, 1);
}

int sst__lua_interrupt(lua_State *L) {
    lua_rawgetp(L, LUA_REGISTRYINDEX, &running_ctx_key);
    sst_node_ctx *ctx = lua_touserdata(L, -1);
    lua_pop(L, 1);
    if (ctx == NULL) {
        return luaL_error(L, "superstep.interrupt() can only be called inside a node");
    }
    sst_error err = {0};
    sst_value *v = sst__lua_to_value(L, 1, "interrupt value", &err);
    if (v == NULL) {
        return sst__lua_raise(L, &err);
    }
    const sst_value *answer = sst_node_interrupt(ctx, v);
    if (answer != NULL) {
        sst__lua_push_table(L, answer);
        return 1;
    }
    lua_pushlightuserdata(L, &sst__lua_interrupt_token);
    return lua_error(L);
}

/* superstep.push_message(message [, field]): LangGraph's push_message; returns the message. */
int sst__lua_push_message(lua_State *L) {
    lua_rawgetp(L, LUA_REGISTRYINDEX, &running_ctx_key);
    sst_node_ctx *ctx = lua_touserdata(L, -1);
    lua_pop(L, 1);
    if (ctx == NULL) {
        return luaL_error(L, "superstep.push_message() can only be called inside a node");
    }
    const char *field = luaL_optstring(L, 2, "messages");
    sst_error err = {0};
    sst_value *v = sst__lua_to_value(L, 1, "push_message", &err);
    if (v == NULL || sst_node_push_message(ctx, field, v, &err) != SST_OK) {
        return sst__lua_raise(L, &err);
    }
    lua_settop(L, 1);
    return 1;
}

/* ---- what a node returns ---- */

/* Applies one goto target: a node name or a Send proxy. */
static sst_code apply_goto(lua_State *L, sst_node_ctx *ctx, int idx, sst_error *err) {
    if (lua_type(L, idx) == LUA_TSTRING) {
        return sst_node_goto(ctx, lua_tostring(L, idx), err);
    }
    const sst_value *send = sst__lua_proxy_value(L, idx);
    const sst_value *to = send != NULL ? sst_object_get(send, "__send__") : NULL;
    if (to == NULL) {
        return sst__error(err, SST_ETYPE, "Command goto: expected a node name or a Send, got %s",
                          luaL_typename(L, idx));
    }
    const sst_value *arg = sst_object_get(send, "arg");
    return sst_node_goto_send(ctx, sst_string_cstr(to),
                              sst_value_ref(arg != NULL ? arg : sst_null()), err);
}

/* A Command update given as a list of {field, value} pairs: one write each, in order. */
static sst_code apply_pairs(sst_node_ctx *ctx, sst_value *pairs, sst_error *err) {
    sst_code rc = SST_OK;
    for (size_t i = 0; rc == SST_OK && i < sst_array_len(pairs); i++) {
        const sst_value *p = sst_array_get(pairs, i);
        if (sst_array_len(p) != 2 || !sst_is_string(sst_array_get(p, 0))) {
            rc = sst__error(err, SST_ETYPE,
                            "Command update: element %zu is not a {field, value} pair (a list "
                            "update holds pairs; use a table keyed by field otherwise)",
                            i + 1);
            break;
        }
        rc = sst_node_add_write(ctx, sst_string_cstr(sst_array_get(p, 0)),
                                sst_value_ref(sst_array_get(p, 1)), err);
    }
    sst_value_unref(pairs);
    return rc;
}

/* Writes the value at @p idx to a root state, as one more write. */
static sst_code write_root(lua_State *L, sst_node_ctx *ctx, int idx, sst_error *err) {
    sst_value *v = sst__lua_to_value(L, idx, "root state update", err);
    return v != NULL ? sst_node_add_write(ctx, SST_ROOT, v, err) : sst__code(err);
}

/* Command{graph = PARENT, update, goto}: for the parent graph (sst_node_parent_command). */
static sst_code parent_command(lua_State *L, sst_node_ctx *ctx, int idx, sst_error *err) {
    sst_value *update = NULL, *go = NULL;
    if (lua_getfield(L, idx, "update") != LUA_TNIL &&
        (update = sst__lua_to_object(L, -1, "Command update", err)) == NULL) {
        lua_pop(L, 1);
        return sst__code(err);
    }
    lua_pop(L, 1);
    if (lua_getfield(L, idx, "goto") != LUA_TNIL &&
        (go = sst__lua_to_value(L, -1, "Command goto", err)) == NULL) {
        lua_pop(L, 1);
        sst_value_unref(update);
        return sst__code(err);
    }
    lua_pop(L, 1);
    return sst_node_parent_command(ctx, update, go);
}

/*
 * Command{update, goto}: the update's writes are added to the node's earlier
 * ones; with @p root, the update is a value of the root state.
 */
static sst_code apply_command(lua_State *L, sst_node_ctx *ctx, int idx, bool root, sst_error *err) {
    sst_code rc = SST_OK;
    if (lua_getfield(L, idx, "graph") != LUA_TNIL) {
        const char *g = lua_tostring(L, -1);
        if (g == NULL || strcmp(g, SST_LUA_PARENT) != 0) {
            lua_pop(L, 1);
            return sst__error(err, SST_EINVAL,
                              "Command graph: expected superstep.PARENT (the only graph a "
                              "Command may name)");
        }
        lua_pop(L, 1);
        return parent_command(L, ctx, idx, err);
    }
    lua_pop(L, 1);
    if (lua_getfield(L, idx, "update") != LUA_TNIL && root) {
        rc = write_root(L, ctx, lua_gettop(L), err);
    } else if (!lua_isnil(L, -1)) {
        sst_value *u = sst__lua_to_object(L, -1, "Command update", err);
        rc = u == NULL         ? sst__code(err)
             : sst_is_array(u) ? apply_pairs(ctx, u, err)
                               : sst_node_add_update(ctx, u, err);
    }
    lua_pop(L, 1);
    if (rc == SST_OK && lua_getfield(L, idx, "goto") != LUA_TNIL) {
        int g = lua_gettop(L);
        if (lua_type(L, g) == LUA_TTABLE && lua_getmetatable(L, g) == 0) {
            for (lua_Integer i = 1; rc == SST_OK && i <= (lua_Integer)lua_rawlen(L, g); i++) {
                lua_rawgeti(L, g, i);
                rc = apply_goto(L, ctx, lua_gettop(L), err);
                lua_pop(L, 1);
            }
        } else {
            rc = apply_goto(L, ctx, g, err);
        }
    }
    lua_pop(L, 1);
    return rc;
}

/* One update (a table keyed by field, or a proxy of an object) or a Command. */
static sst_code apply_one(lua_State *L, sst_node_ctx *ctx, int idx, const char *what,
                          sst_error *err) {
    if (sst__lua_is_command(L, idx)) {
        return apply_command(L, ctx, idx, false, err);
    }
    if (lua_type(L, idx) != LUA_TTABLE && sst__lua_proxy_value(L, idx) == NULL) {
        return sst__error(err, SST_ETYPE,
                          "%s a %s; a node returns a table of updates, a Command, a list of "
                          "them or nil",
                          what, luaL_typename(L, idx));
    }
    sst_value *u = sst__lua_to_object(L, idx, "update", err);
    if (u == NULL) {
        return sst__code(err);
    }
    if (!sst_is_object(u)) {
        bool empty = sst_array_len(u) == 0;
        sst_value_unref(u);
        return empty ? SST_OK /* an empty list: no updates */
                     : sst__error(err, SST_ETYPE,
                                  "%s a list inside a list; a list holds updates keyed by field "
                                  "and Commands",
                                  what);
    }
    return sst_node_add_update(ctx, u, err);
}

/* The length of the plain list at @p idx, or 0 when it is not one (a table of fields). */
static size_t list_length(lua_State *L, int idx, bool *mixed) {
    *mixed = false;
    if (lua_type(L, idx) != LUA_TTABLE || sst__lua_is_command(L, idx)) {
        return 0;
    }
    size_t n = (size_t)lua_rawlen(L, idx);
    if (n == 0) {
        return 0;
    }
    size_t keys = 0;
    lua_pushnil(L);
    while (lua_next(L, idx) != 0) {
        lua_pop(L, 1);
        keys++;
    }
    *mixed = keys != n;
    return n;
}

/*
 * A node's return: nil, a table of updates, a Command, or a list of updates
 * and Commands applied in order as the node's writes (LangGraph's list return).
 */
static sst_code node_result(lua_State *L, sst_node_ctx *ctx, int idx, sst_error *err) {
    idx = lua_absindex(L, idx);
    if (lua_isnil(L, idx)) {
        return SST_OK;
    }
    bool mixed;
    size_t n = list_length(L, idx, &mixed);
    if (mixed) {
        return sst__error(err, SST_ETYPE,
                          "returned a table mixing a list and fields; return a table of updates "
                          "keyed by field or a list of updates and Commands");
    }
    const sst_value *pv = sst__lua_proxy_value(L, idx);
    if (n == 0 && sst_is_array(pv)) {
        /* A list value (e.g. a copy of part of the state): each element is one update. */
        sst_code rc = SST_OK;
        for (size_t i = 0; rc == SST_OK && i < sst_array_len(pv); i++) {
            const sst_value *u = sst_array_get(pv, i);
            rc = sst_is_object(u) ? sst_node_add_update(ctx, sst_value_ref(u), err)
                                  : sst__error(err, SST_ETYPE,
                                               "returned a list whose element %zu is a %s; a "
                                               "list holds updates keyed by field",
                                               i + 1, sst_type_name(sst_value_type(u)));
        }
        return rc;
    }
    if (n == 0) {
        return apply_one(L, ctx, idx, "returned", err);
    }
    sst_code rc = SST_OK;
    for (size_t i = 1; rc == SST_OK && i <= n; i++) {
        lua_rawgeti(L, idx, (lua_Integer)i);
        char what[64];
        snprintf(what, sizeof what, "returned a list whose element %zu is", i);
        rc = apply_one(L, ctx, lua_gettop(L), what, err);
        lua_pop(L, 1);
    }
    return rc;
}

/*
 * A node's return in a graph with a root state, as LangGraph's: nil, a
 * Command, a list holding Commands (each item a Command or a value written
 * in order), or else the value itself (a list too), written to the root.
 */
static sst_code root_result(lua_State *L, sst_node_ctx *ctx, int idx, sst_error *err) {
    idx = lua_absindex(L, idx);
    if (lua_isnil(L, idx)) {
        return SST_OK;
    }
    if (sst__lua_is_command(L, idx)) {
        return apply_command(L, ctx, idx, true, err);
    }
    size_t n = lua_type(L, idx) == LUA_TTABLE ? (size_t)lua_rawlen(L, idx) : 0;
    bool commands = false;
    for (size_t i = 1; i <= n && !commands; i++) {
        lua_rawgeti(L, idx, (lua_Integer)i);
        commands = sst__lua_is_command(L, -1);
        lua_pop(L, 1);
    }
    if (!commands) {
        return write_root(L, ctx, idx, err);
    }
    sst_code rc = SST_OK;
    for (size_t i = 1; rc == SST_OK && i <= n; i++) {
        lua_rawgeti(L, idx, (lua_Integer)i);
        rc = sst__lua_is_command(L, -1) ? apply_command(L, ctx, lua_gettop(L), true, err)
                                        : write_root(L, ctx, lua_gettop(L), err);
        lua_pop(L, 1);
    }
    return rc;
}

/* Pushes the root of a root state @p state (nil when unset). */
static void push_root(lua_State *L, const sst_value *state) {
    const sst_value *v = sst_object_get(state, SST_ROOT);
    if (v == NULL) {
        lua_pushnil(L);
    } else {
        sst__lua_push_value(L, v);
    }
}

/* Registry keys of the last state pushed and its proxy. */
static char state_ptr_key, state_proxy_key;

/*
 * Pushes the state's proxy. The tasks of one superstep share one state, so
 * the last proxy is kept and reused while the state is the same.
 */
static void push_state(lua_State *L, const sst_value *state) {
    lua_rawgetp(L, LUA_REGISTRYINDEX, &state_ptr_key);
    bool same = lua_touserdata(L, -1) == (void *)state;
    lua_pop(L, 1);
    if (same && lua_rawgetp(L, LUA_REGISTRYINDEX, &state_proxy_key) == LUA_TUSERDATA &&
        sst__lua_proxy_value(L, -1) == state) {
        return;
    }
    if (same) {
        lua_pop(L, 1);
    }
    sst__lua_push_value(L, state);
    lua_pushvalue(L, -1);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &state_proxy_key);
    lua_pushlightuserdata(L, (void *)state);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &state_ptr_key);
}

/*
 * An error handler's second argument, LangGraph's NodeError: {node = name, error = an
 * error object {code, message, node, and a timeout's kind, elapsed, ...}}.
 */
static void push_failure(lua_State *L, const sst_value *f) {
    const sst_value *node = sst_object_get(f, "node"), *e = sst_object_get(f, "error");
    lua_createtable(L, 0, 2);
    lua_pushstring(L, sst_string_cstr(node));
    lua_setfield(L, -2, "node");
    const char *code = sst_string_cstr(sst_object_get(e, "code"));
    sst_code c = SST_ETASK;
    for (int k = 0; code != NULL && k < SST_CODE_COUNT; k++) {
        if (strcmp(sst_code_name((sst_code)k), code) == 0) {
            c = (sst_code)k;
        }
    }
    const char *msg = sst_string_cstr(sst_object_get(e, "message"));
    msg = msg != NULL ? msg : "";
    const char *tb = strstr(msg, "\nstack traceback:"); /* the error's own message, as raised */
    lua_pushlstring(L, msg, tb != NULL ? (size_t)(tb - msg) : strlen(msg));
    sst__lua_push_error(L, c, lua_tostring(L, -1), sst_string_cstr(node));
    lua_remove(L, -2);
    for (size_t i = 0; i < sst_object_len(e); i++) {
        const char *k = sst_string_cstr(sst_object_key_at(e, i));
        if (strcmp(k, "code") != 0 && strcmp(k, "message") != 0) {
            sst__lua_push_value(L, sst_object_value_at(e, i));
            lua_setfield(L, -2, k);
        }
    }
    lua_setfield(L, -2, "error");
}

/*
 * A middleware hook's result: its "jump_to" (a string) is taken out into @p jump (the
 * table is changed; a read-only value keeps it and jumps nowhere), the rest are updates.
 */
static void take_jump(lua_State *L, int idx, char *jump, size_t n) {
    idx = lua_absindex(L, idx);
    jump[0] = '\0';
    if (!lua_istable(L, idx) || sst__lua_proxy_value(L, idx) != NULL) {
        return;
    }
    if (lua_getfield(L, idx, "jump_to") == LUA_TSTRING) {
        snprintf(jump, n, "%s", lua_tostring(L, -1));
    }
    lua_pop(L, 1);
    lua_pushnil(L);
    lua_setfield(L, idx, "jump_to");
}

/* Pushes a new context userdata for @p ctx (invalidated when its code returns). */
static lctx *push_lctx(lua_State *L, sst_node_ctx *ctx) {
    lctx *c = lua_newuserdatauv(L, sizeof *c, 0);
    c->ctx = ctx;
    if (luaL_getmetatable(L, SST_LUA_CTX) == LUA_TNIL) {
        lua_pop(L, 1);
        open_ctx(L);
        luaL_getmetatable(L, SST_LUA_CTX);
    }
    lua_setmetatable(L, -2);
    return c;
}

/*
 * sst__lua_pcall of the function below the @p nargs arguments on top, as the code of
 * @p ctx (its context userdata at @p lctx_idx): interrupt(), tasks and futures find them
 * while it runs; the outer ones (a nested run's) are put back afterwards.
 */
static int pcall_as(lua_State *L, sst_node_ctx *ctx, int lctx_idx, int nargs, int handler,
                    bool *over_limit) {
    lua_rawgetp(L, LUA_REGISTRYINDEX, &running_ctx_key);
    void *outer = lua_touserdata(L, -1);
    lua_pop(L, 1);
    lua_rawgetp(L, LUA_REGISTRYINDEX, &running_lctx_key);
    int outer_lctx = luaL_ref(L, LUA_REGISTRYINDEX);
    lua_pushlightuserdata(L, ctx);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &running_ctx_key);
    lua_pushvalue(L, lctx_idx);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &running_lctx_key);
    int rc = sst__lua_pcall(L, nargs, 1, handler, over_limit);
    lua_pushlightuserdata(L, outer);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &running_ctx_key);
    lua_rawgeti(L, LUA_REGISTRYINDEX, outer_lctx);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &running_lctx_key);
    luaL_unref(L, LUA_REGISTRYINDEX, outer_lctx);
    return rc;
}

/*
 * Runs a node function (@p cb's, or the one in the registry at @p fn_ref when @p cb is
 * NULL: a middleware hook, whose jump goes to @p jump) as the node of @p ctx.
 */
static sst_code call_node_fn(lua_State *L, sst_node_ctx *ctx, const sst__lua_cb *cb, int fn_ref,
                             char *jump, size_t jump_n) {
    sst_error err = {0};
    bool root = false;
    int base = lua_gettop(L);
    /* The context sits below the call so that it can be invalidated afterwards. */
    lctx *c = push_lctx(L, ctx);
    int handler = 0;
    if (cb != NULL) {
        handler = push_function(L, cb, &root, &err);
    } else {
        lua_pushcfunction(L, sst__lua_traceback);
        handler = lua_gettop(L);
        lua_rawgeti(L, LUA_REGISTRYINDEX, fn_ref);
    }
    if (handler == 0) {
        c->ctx = NULL;
        lua_settop(L, base);
        return sst_node_fail(ctx, err.code, "%s", err.msg);
    }
    const sst_value *in = sst_node_input(ctx);
    if (root) {
        push_root(L, sst_node_state(ctx));
    } else {
        push_state(L, sst_node_state(ctx));
    }
    if (cb == NULL) {
        /* a middleware hook: fn(state, ctx) */
    } else if (sst_node_error(ctx) != NULL) {
        push_failure(L, sst_node_error(ctx)); /* an error handler: what failed, not the input */
    } else if (in != NULL && !sst__lua_push_command(L, in)) {
        sst__lua_push_value(L, in);
    } else if (in == NULL) {
        lua_pushnil(L);
    }
    lua_pushvalue(L, base + 1);
    bool over_limit;
    int rc = pcall_as(L, ctx, base + 1, cb != NULL ? 3 : 2, handler, &over_limit);
    c->ctx = NULL;
    sst_code out;
    if (rc != LUA_OK) {
        if (lua_touserdata(L, -1) == &sst__lua_interrupt_token) {
            out = SST_EINTERRUPT;
        } else if (lua_touserdata(L, -1) == &sst__lua_parent_token) {
            out = SST_OK; /* a subgraph's Command{graph = PARENT} set the update and goto */
        } else {
            char buf[SST_ERROR_MSG_MAX];
            const char *msg;
            out = sst__lua_pcall_error(L, rc, over_limit, buf, sizeof buf, &msg);
            out = sst_node_fail(ctx, out, "%s", msg);
        }
    } else {
        if (jump != NULL) {
            take_jump(L, -1, jump, jump_n);
        }
        out = root ? root_result(L, ctx, -1, &err) : node_result(L, ctx, -1, &err);
        if (out != SST_OK && out != SST_EPARENT) { /* a parent Command failed the node already */
            out = sst_node_fail(ctx, out, "node '%s': %s", sst_node_name(ctx), err.msg);
        }
    }
    lua_settop(L, base);
    return out;
}

/*
 * The callbacks below may be entered from a Lua call on the same state (a
 * node or a script invoking a graph): they lift the memory limit (sst__lua_arm)
 * until their own protected call, since a refused allocation outside it would
 * raise an error across the graph layer's C frames.
 */
/* What run_code runs as a node's code: a node or a middleware hook (call_node_fn), or an
 * entrypoint or a task (call_functional). */
typedef struct lua_code {
    const sst__lua_cb *cb; /* a node's or an entrypoint's function, else NULL */
    int fn_ref;            /* a hook's function (in the registry) when cb is NULL */
    char *jump;            /* a hook's jump_to goes here (jump_n bytes) */
    size_t jump_n;
    bool functional;           /* an entrypoint (cb) or a task (task) */
    const sst__lua_task *task; /* the task, or NULL */
} lua_code;

static sst_code call_functional(lua_State *L, sst_node_ctx *ctx, const sst__lua_cb *cb,
                                const sst__lua_task *task);

static sst_code run_code(lua_State *L, sst_node_ctx *ctx, const lua_code *w) {
    bool armed = sst__lua_arm(L, false);
    /* The node runs on a Lua thread of its own (anchored in the registry, not on L's
     * stack): a live stream hands events over from inside it (ctx.emit) and runs the
     * loop on L while it waits (stream.c), so L's stack must not hold the node's frames. */
    lua_State *co = lua_newthread(L);
    int ref = luaL_ref(L, LUA_REGISTRYINDEX);
    sst__lua_watch_timeout(co, ctx);
    sst_code out = w->functional ? call_functional(co, ctx, w->cb, w->task)
                                 : call_node_fn(co, ctx, w->cb, w->fn_ref, w->jump, w->jump_n);
    luaL_unref(L, LUA_REGISTRYINDEX, ref);
    sst__lua_arm(L, armed);
    return out;
}

sst_code sst__lua_node(sst_node_ctx *ctx, void *ud) {
    const sst__lua_cb *cb = ud;
    sst_error err = {0};
    lua_State *L = sst__lua_state_for_thread(cb->rt, &err);
    if (L == NULL) {
        return sst_node_fail(ctx, err.code, "%s", err.msg);
    }
    lua_code w = {.cb = cb, .fn_ref = LUA_NOREF};
    return run_code(L, ctx, &w);
}

sst_code sst__lua_hook(lua_State *L, int fn_ref, sst_node_ctx *ctx, char *jump, size_t jump_n) {
    lua_code w = {.fn_ref = fn_ref, .jump = jump, .jump_n = jump_n};
    return run_code(L, ctx, &w);
}

/* ---- the functional API: entrypoints and tasks ---- */

void sst__lua_push_running_lctx(lua_State *L) {
    lua_rawgetp(L, LUA_REGISTRYINDEX, &running_lctx_key);
}

bool sst__lua_lctx_alive(lua_State *L, int idx) {
    const lctx *c = luaL_testudata(L, idx, SST_LUA_CTX);
    return c != NULL && c->ctx != NULL;
}

/* Pushes the function of task @p t (from this state's registry); false when it is missing. */
static bool push_task_function(lua_State *L, const sst__lua_task *t) {
    if (t->number == 0) {
        return lua_rawgeti(L, LUA_REGISTRYINDEX, t->ref) == LUA_TFUNCTION;
    }
    lua_getfield(L, LUA_REGISTRYINDEX, SST_LUA_TASKS);
    int type = lua_istable(L, -1) ? lua_rawgeti(L, -1, t->number) : LUA_TNIL;
    lua_remove(L, -2);
    return type == LUA_TFUNCTION;
}

/* The entrypoint's or a task's result at @p idx: its return value (entrypoint.final too). */
static sst_code functional_result(lua_State *L, sst_node_ctx *ctx, int idx, bool entry,
                                  sst_error *err) {
    if (entry && sst__lua_has_metatable(L, idx, SST_LUA_FINAL)) {
        lua_getfield(L, idx, "value");
        sst_value *v = sst__lua_to_value(L, -1, "entrypoint.final value", err);
        lua_getfield(L, idx, "save");
        sst_value *save = v != NULL ? sst__lua_to_value(L, -1, "entrypoint.final save", err) : NULL;
        lua_pop(L, 2);
        if (save == NULL) {
            sst_value_unref(v);
            return sst__code(err);
        }
        return sst_node_return_final(ctx, v, save, err);
    }
    sst_value *v =
        sst__lua_to_value(L, idx, entry ? "the entrypoint's result" : "the task's result", err);
    return v != NULL ? sst_node_return(ctx, v, err) : sst__code(err);
}

/*
 * Runs an entrypoint (@p cb: fn(input, ctx)) or a task (@p task: fn(args...)) on @p L as
 * the code of @p ctx: interrupt() and tasks work inside, as in a node.
 */
static sst_code call_functional(lua_State *L, sst_node_ctx *ctx, const sst__lua_cb *cb,
                                const sst__lua_task *task) {
    sst_error err = {0};
    int base = lua_gettop(L);
    lctx *c = push_lctx(L, ctx);
    lua_pushcfunction(L, sst__lua_traceback);
    int handler = lua_gettop(L);
    int nargs = 0;
    if (cb != NULL) {
        handler = push_function(L, cb, NULL, &err);
        if (handler == 0) {
            c->ctx = NULL;
            lua_settop(L, base);
            return sst_node_fail(ctx, err.code, "%s", err.msg);
        }
        const sst_value *in = sst_entrypoint_input(ctx);
        if (in == NULL || sst_is_null(in)) {
            lua_pushnil(L);
        } else {
            sst__lua_push_table(L, in);
        }
        lua_pushvalue(L, base + 1);
        nargs = 2;
    } else {
        if (!push_task_function(L, task)) {
            c->ctx = NULL;
            lua_settop(L, base);
            return sst_node_fail(ctx, SST_EINVAL,
                                 "lua: task '%s' is missing in this worker's state (the script "
                                 "must make the same tasks each time it runs)",
                                 task->name);
        }
        const sst_value *args = sst_node_input(ctx);
        for (size_t i = 0; i < sst_array_len(args); i++) {
            const sst_value *a = sst_array_get(args, i);
            if (sst_is_null(a)) {
                lua_pushnil(L);
            } else {
                sst__lua_push_table(L, a);
            }
            nargs++;
        }
    }
    bool over_limit;
    int rc = pcall_as(L, ctx, base + 1, nargs, handler, &over_limit);
    sst_code out;
    if (rc != LUA_OK) {
        if (lua_touserdata(L, -1) == &sst__lua_interrupt_token) {
            out = SST_EINTERRUPT;
        } else {
            char buf[SST_ERROR_MSG_MAX];
            const char *msg;
            out = sst__lua_pcall_error(L, rc, over_limit, buf, sizeof buf, &msg);
            out = sst_node_fail(ctx, out, "%s", msg);
        }
    } else {
        out = functional_result(L, ctx, lua_gettop(L), cb != NULL, &err);
        if (out != SST_OK) {
            out = sst_node_fail(ctx, out, "%s '%s': %s", cb != NULL ? "entrypoint" : "task",
                                sst_node_name(ctx), err.msg);
        }
    }
    c->ctx = NULL;
    lua_settop(L, base);
    return out;
}

/* An entrypoint (@p cb) or a task (@p task) on the calling thread's state, as run_code runs it. */
static sst_code run_functional(sst_node_ctx *ctx, sst__lua_rt *rt, const sst__lua_cb *cb,
                               const sst__lua_task *task) {
    sst_error err = {0};
    lua_State *L = sst__lua_state_for_thread(rt, &err);
    if (L == NULL) {
        return sst_node_fail(ctx, err.code, "%s", err.msg);
    }
    lua_code w = {.cb = cb, .fn_ref = LUA_NOREF, .functional = true, .task = task};
    return run_code(L, ctx, &w);
}

sst_code sst__lua_entry(sst_node_ctx *ctx, void *ud) {
    const sst__lua_cb *cb = ud;
    return run_functional(ctx, cb->rt, cb, NULL);
}

sst_code sst__lua_task_fn(sst_node_ctx *ctx, void *ud) {
    const sst__lua_task *t = ud;
    return run_functional(ctx, t->rt, NULL, t);
}

/* A router's result: a name, a Send, or a list of them. */
sst_value *sst__lua_router(const sst_value *state, void *ud, sst_error *err) {
    const sst__lua_cb *cb = ud;
    lua_State *L = sst__lua_state_for_thread(cb->rt, err);
    if (L == NULL) {
        return NULL;
    }
    bool armed = sst__lua_arm(L, false);
    bool root = false;
    int base = lua_gettop(L);
    int handler = push_function(L, cb, &root, err);
    if (handler == 0) {
        sst__lua_arm(L, armed);
        return NULL;
    }
    if (root) {
        push_root(L, state);
    } else {
        sst__lua_push_value(L, state);
    }
    sst_value *out = NULL;
    bool over_limit;
    int rc = sst__lua_pcall(L, 1, 1, handler, &over_limit);
    if (rc != LUA_OK) {
        sst__lua_call_failed(L, rc, over_limit, SST_ETASK, err, "router");
    } else if (lua_isnil(L, -1)) {
        sst__error(err, SST_ETYPE,
                   "router returned nil; return a node name, END, a Send or a list");
    } else {
        out = sst__lua_to_value(L, -1, "router result", err);
    }
    lua_settop(L, base);
    sst__lua_arm(L, armed);
    return out;
}

sst_value *sst__lua_call_tool(lua_State *L, int fn_ref, const sst_value *args, sst_error *err) {
    bool armed = sst__lua_arm(L, false);
    int base = lua_gettop(L);
    lua_pushcfunction(L, sst__lua_traceback);
    lua_rawgeti(L, LUA_REGISTRYINDEX, fn_ref);
    sst__lua_push_table(L, args);
    sst_value *out = NULL;
    bool over_limit;
    int rc = sst__lua_pcall(L, 1, 1, base + 1, &over_limit);
    if (rc != LUA_OK) {
        sst__lua_call_failed(L, rc, over_limit, SST_ETASK, err, "%s", "");
    } else {
        out = sst__lua_to_value(L, -1, "tool result", err);
    }
    lua_settop(L, base);
    sst__lua_arm(L, armed);
    return out;
}

sst_code sst__lua_read_tool(lua_State *L, int item, const char **name, const char **description,
                            int *fn_ref, sst_value **params, sst_error *err) {
    item = lua_absindex(L, item);
    *params = NULL;
    if (!lua_istable(L, item)) {
        return SST_ENOTFOUND;
    }
    lua_getfield(L, item, "name"); /* the strings stay alive in the tool table */
    *name = lua_tostring(L, -1);
    lua_getfield(L, item, "description");
    *description = lua_tostring(L, -1);
    lua_pop(L, 2);
    if (*name == NULL || lua_getfield(L, item, "fn") != LUA_TFUNCTION) {
        lua_pop(L, *name == NULL ? 0 : 1);
        return SST_ENOTFOUND;
    }
    if (lua_getfield(L, item, "parameters") == LUA_TNIL) {
        *params = sst_json_parse("{\"type\":\"object\"}", err);
    } else {
        *params = sst__lua_to_value(L, -1, "parameters", err);
    }
    lua_pop(L, 1);
    if (*params == NULL) {
        lua_pop(L, 1);
        return sst__code(err);
    }
    *fn_ref = luaL_ref(L, LUA_REGISTRYINDEX); /* pops the function */
    return SST_OK;
}

sst_value *sst__lua_reducer(void *ud, const char *field, sst_value *current,
                            const sst_value *update, sst_error *err) {
    const sst__lua_cb *cb = ud;
    lua_State *L = sst__lua_state_for_thread(cb->rt, err);
    bool armed = L != NULL && sst__lua_arm(L, false);
    int base = L != NULL ? lua_gettop(L) : 0;
    int handler = L != NULL ? push_function(L, cb, NULL, err) : 0;
    if (handler == 0) {
        if (L != NULL) {
            sst__lua_arm(L, armed);
        }
        sst_value_unref(current);
        return NULL;
    }
    if (current != NULL) {
        sst__lua_push_value(L, current);
    } else {
        lua_pushnil(L);
    }
    sst_value_unref(current);
    sst__lua_push_value(L, update);
    sst_value *out = NULL;
    bool over_limit;
    int rc = sst__lua_pcall(L, 2, 1, handler, &over_limit);
    if (rc != LUA_OK) {
        sst__lua_call_failed(L, rc, over_limit, SST_ETASK, err, "reducer on field '%s'", field);
    } else {
        char what[160];
        snprintf(what, sizeof what, "reducer result for field '%s'", field);
        out = sst__lua_to_value(L, -1, what, err);
    }
    lua_settop(L, base);
    sst__lua_arm(L, armed);
    return out;
}
