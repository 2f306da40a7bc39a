/* SPDX-License-Identifier: MIT */
/*
 * app:invoke(input, config [, opts]): one run to its end, the final state
 * returned as a table (LangGraph's invoke; the options are read in config.c).
 */
#include "lua_int.h"
#include "values/build.h"

#define SST_LUA_CALL "superstep.call"

static int call_gc(lua_State *L) {
    sst__lua_call *c = luaL_checkudata(L, 1, SST_LUA_CALL);
    sst__lua_call_clear(c);
    return 0;
}

/*
 * Pushes the interrupt() calls among @p interrupts as LangGraph's Interrupt
 * objects {id, value}, or nothing (returns false) when there are none: a run
 * stopped by interrupt_before/after only has no __interrupt__ in LangGraph.
 */
static bool push_interrupts(lua_State *L, const sst_value *interrupts) {
    lua_Integer n = 0;
    for (size_t i = 0; i < sst_array_len(interrupts); i++) {
        const sst_value *it = sst_array_get(interrupts, i);
        if (sst_object_get(it, "when") != NULL) {
            continue; /* a static stop (interrupt_before/after) */
        }
        if (n == 0) {
            lua_newtable(L);
        }
        lua_createtable(L, 0, 2);
        const sst_value *id = sst_object_get(it, "id");
        const sst_value *value = sst_object_get(it, "value");
        sst__lua_push_table(L, id != NULL ? id : sst_null());
        lua_setfield(L, -2, "id");
        if (value != NULL) {
            sst__lua_push_table(L, value);
            lua_setfield(L, -2, "value");
        }
        lua_rawseti(L, -2, ++n);
    }
    return n > 0;
}

void sst__lua_root_input(lua_State *L, sst__lua_call *c) {
    if (!sst_compiled_graph_has_root(c->app->cg) || lua_isnoneornil(L, 2) ||
        sst__lua_is_command(L, 2)) {
        return;
    }
    sst_error err = {0};
    sst_value *v = sst__lua_to_value(L, 2, "input", &err);
    sst_value *in = v != NULL ? sst_object_set_take(sst_object_empty(), SST_ROOT, v, &err) : NULL;
    if (in == NULL) {
        sst__lua_raise(L, &err);
    }
    sst_value_unref(c->input);
    c->input = in;
}

void sst__lua_push_state(lua_State *L, const sst_compiled_graph *cg, const sst_value *state) {
    if (!sst_compiled_graph_has_root(cg)) {
        sst__lua_push_table(L, state);
        return;
    }
    const sst_value *v = sst_object_get(state, SST_ROOT);
    if (v == NULL) {
        lua_pushnil(L);
    } else {
        sst__lua_push_table(L, v);
    }
}

/*
 * app:invoke(input) inside a node with no config: the app runs as a subgraph of the node
 * (sst_node_run_subgraph), in its namespace and checkpointer; an interrupt or a
 * Command{graph = PARENT} inside it ends the node as LangGraph's exceptions do.
 */
static int invoke_in_node(lua_State *L, sst_node_ctx *ctx, const sst__lua_app *a) {
    sst_error err = {0};
    sst_value *in = NULL;
    if (!lua_isnil(L, 2) && sst_compiled_graph_has_root(a->cg)) {
        sst_value *v = sst__lua_to_value(L, 2, "input", &err);
        in = v != NULL ? sst__set_take(sst_object_empty(), SST_ROOT, v, &err) : NULL;
    } else if (!lua_isnil(L, 2)) {
        in = sst__lua_to_object(L, 2, "input", &err);
    }
    if (!lua_isnil(L, 2) && in == NULL) {
        return sst__lua_raise(L, &err);
    }
    sst__lua_push_owned(L, in);
    sst_value *out = NULL;
    sst_code rc = sst_node_run_subgraph(ctx, a->cg, in, &out, &err);
    if (rc == SST_EINTERRUPT || rc == SST_EPARENT) {
        lua_pushlightuserdata(L, rc == SST_EINTERRUPT ? &sst__lua_interrupt_token
                                                      : &sst__lua_parent_token);
        return lua_error(L);
    }
    if (rc != SST_OK) {
        return sst__lua_raise(L, &err);
    }
    sst__lua_push_owned(L, out);
    sst__lua_push_state(L, a->cg, out);
    return 1;
}

int sst__lua_app_invoke(lua_State *L) {
    /* subgraphs: accepted as LangGraph's invoke(..., subgraphs=True) is; it changes nothing. */
    static const char *const known[] = {
        "durability",      "recursion_limit", "context", "interrupt_before",
        "interrupt_after", "subgraphs",       NULL};
    lua_settop(L, 4);
    sst_node_ctx *running = lua_isnil(L, 3) ? sst__lua_running_ctx(L) : NULL;
    if (running != NULL) {
        return invoke_in_node(L, running, sst__lua_check_app(L, 1));
    }
    if (!lua_isnil(L, 4) && !lua_istable(L, 4)) {
        return sst__lua_raisef(L, SST_EINVAL, "invoke: options must be a table, got %s",
                               luaL_typename(L, 4));
    }
    sst__lua_call *c = lua_newuserdatauv(L, sizeof *c, 1);
    memset(c, 0, sizeof *c);
    if (luaL_newmetatable(L, SST_LUA_CALL)) {
        lua_pushcfunction(L, call_gc);
        lua_setfield(L, -2, "__gc");
    }
    lua_setmetatable(L, -2);
    int holder = lua_gettop(L);
    sst__lua_call_prepare(L, c, holder, lua_istable(L, 4) ? 4 : 0, known, "invoke");
    sst__lua_root_input(L, c);
    /* An app invoked from a node with a config of its own (a thread of its own) is traced
     * under that node's task, when the outer run is traced. */
    sst_node_ctx *outer = sst__lua_running_ctx(L);
    if (outer != NULL && sst_node_tracer(outer) != NULL) {
        c->o.tracer = sst_node_tracer(outer);
        c->o.trace_parent = sst_node_span(outer);
    }
    sst_error err = {0};
    sst_graph_result *r = sst_graph_invoke(c->app->cg, c->thread != NULL ? c->thread->t : NULL,
                                           c->input, &c->o, &err);
    sst__lua_call_release(c);
    if (r == NULL || sst_graph_result_status(r) == SST_RUN_FAILED) {
        return sst__lua_raise_run_error(L, r, &err);
    }
    bool entry_stopped = sst_compiled_graph_is_entrypoint(c->app->cg) &&
                         sst_graph_result_status(r) == SST_RUN_INTERRUPTED;
    if (entry_stopped) {
        lua_newtable(L); /* LangGraph's functional API: {__interrupt__ = {...}} */
    } else {
        sst__lua_push_state(L, c->app->cg, sst_graph_result_state(r));
    }
    if ((entry_stopped || !sst_compiled_graph_has_root(c->app->cg)) &&
        sst_graph_result_status(r) == SST_RUN_INTERRUPTED &&
        push_interrupts(L, sst_graph_result_interrupts(r))) {
        lua_setfield(L, -2, "__interrupt__");
    }
    sst_graph_result_free(r);
    return 1;
}
