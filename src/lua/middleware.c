/* SPDX-License-Identifier: MIT */
/*
 * superstep.middleware: agent middleware for create_react_agent{middleware =
 * {...}} (superstep/agent.h), as LangChain 1.x's:
 *   superstep.middleware.new{name =, before_agent =, before_model =,
 *       after_model =, after_agent = fn(state, ctx) -> nil | {updates...,
 *       jump_to = "model" | "tools" | "end"}, wrap_model_call =
 *       fn(request, handler) -> reply, wrap_tool_call = fn(call, handler) ->
 *       tool message}
 *   superstep.middleware.human_in_the_loop{interrupt_on = {...}}
 *   superstep.middleware.summarization{model =, trigger_tokens =, keep_messages =}
 *   superstep.middleware.model_call_limit{thread_limit =, run_limit =, exit_behavior =}
 *   superstep.middleware.tool_call_limit{tool =, thread_limit =, run_limit =, exit_behavior =}
 *   superstep.middleware.model_fallback{models = {...}, retries =}
 * Lua hooks run on the thread that loaded the script, as agent tools do.
 */
#include "lua_int.h"
#include "superstep/agent.h"

#define SST_LUA_MIDDLEWARE "superstep.middleware"
#define MAX_MODELS         8

enum {
    H_BEFORE_AGENT,
    H_BEFORE_MODEL,
    H_AFTER_MODEL,
    H_AFTER_AGENT,
    H_WRAP_MODEL,
    H_WRAP_TOOL,
    N_H
};
static const char *const k_hooks[N_H] = {"before_agent", "before_model",    "after_model",
                                         "after_agent",  "wrap_model_call", "wrap_tool_call"};

typedef struct lmw {
    sst_middleware *mw;
    sst__lua_rt *rt;
    int refs[N_H];                 /* custom middleware: the hooks, LUA_NOREF when not given */
    sst_model *models[MAX_MODELS]; /* owned: the built-ins' models */
    size_t n_models;
} lmw;

static int mw_gc(lua_State *L) {
    lmw *m = luaL_checkudata(L, 1, SST_LUA_MIDDLEWARE);
    sst_middleware_free(m->mw);
    m->mw = NULL;
    for (size_t i = 0; i < m->n_models; i++) {
        sst_model_free(m->models[i]);
    }
    m->n_models = 0;
    for (int i = 0; i < N_H; i++) {
        luaL_unref(L, LUA_REGISTRYINDEX, m->refs[i]);
        m->refs[i] = LUA_NOREF;
    }
    return 0;
}

static lmw *new_lmw(lua_State *L) {
    lmw *m = lua_newuserdatauv(L, sizeof *m, 0);
    memset(m, 0, sizeof *m);
    m->rt = sst__lua_runtime(L);
    for (int i = 0; i < N_H; i++) {
        m->refs[i] = LUA_NOREF;
    }
    luaL_setmetatable(L, SST_LUA_MIDDLEWARE);
    return m;
}

sst_middleware *sst__lua_middleware(lua_State *L, int idx) {
    lmw *m = luaL_testudata(L, idx, SST_LUA_MIDDLEWARE);
    return m != NULL ? m->mw : NULL;
}

/* The script's state, when called on its thread (agent apps run there), else NULL. */
static lua_State *main_state(const lmw *m) {
    return pthread_equal(pthread_self(), m->rt->master_thread) ? m->rt->master : NULL;
}

/* ---- custom middleware: node hooks ---- */

static sst_code node_hook(sst_node_ctx *ctx, const lmw *m, int which) {
    lua_State *L = main_state(m);
    if (L == NULL) {
        return sst_node_fail(ctx, SST_EINVAL,
                             "Lua middleware runs on the thread that loaded "
                             "the script");
    }
    char jump[16];
    sst_code rc = sst__lua_hook(L, m->refs[which], ctx, jump, sizeof jump);
    sst_error err = {0};
    if (rc == SST_OK && jump[0] != '\0' && sst_agent_jump_to(ctx, jump, &err) != SST_OK) {
        return sst_node_fail(ctx, err.code, "middleware '%s': %s", sst_middleware_name(m->mw),
                             err.msg);
    }
    return rc;
}

static sst_code before_agent(sst_node_ctx *ctx, void *ud) {
    return node_hook(ctx, ud, H_BEFORE_AGENT);
}
static sst_code before_model(sst_node_ctx *ctx, void *ud) {
    return node_hook(ctx, ud, H_BEFORE_MODEL);
}
static sst_code after_model(sst_node_ctx *ctx, void *ud) {
    return node_hook(ctx, ud, H_AFTER_MODEL);
}
static sst_code after_agent(sst_node_ctx *ctx, void *ud) {
    return node_hook(ctx, ud, H_AFTER_AGENT);
}

/* ---- custom middleware: wrap hooks ---- */

/* What a handler closure calls; req/call is NULL once its wrap returned. */
typedef struct wrap_call {
    sst_model_request *req;
    sst_model_handler next_model;
    const sst_value *call;
    sst_tool_handler next_tool;
    void *next_data;
} wrap_call;

/* request = {messages = {...}, system_prompt = "...", tools = {...}} (plain tables). */
static void push_request(lua_State *L, const sst_model_request *req) {
    lua_createtable(L, 0, 3);
    sst__lua_push_table(L, sst_model_request_messages(req));
    lua_setfield(L, -2, "messages");
    if (sst_model_request_system_prompt(req) != NULL) {
        lua_pushstring(L, sst_model_request_system_prompt(req));
        lua_setfield(L, -2, "system_prompt");
    }
    sst__lua_push_table(L, sst_model_request_tools(req));
    lua_setfield(L, -2, "tools");
}

/* The request table at @p idx written back into @p req; raises on a bad member. */
static void read_request(lua_State *L, int idx, sst_model_request *req) {
    sst_error err = {0};
    if (lua_getfield(L, idx, "messages") != LUA_TNIL) {
        sst_value *v = sst__lua_to_value(L, -1, "request.messages", &err);
        if (v == NULL || sst_model_request_set_messages(req, v, &err) != SST_OK) {
            sst__lua_raise(L, &err);
        }
    }
    lua_pop(L, 1);
    int t = lua_getfield(L, idx, "system_prompt");
    if (t != LUA_TSTRING && t != LUA_TNIL) {
        luaL_error(L, "request.system_prompt must be a string or nil");
    }
    if (sst_model_request_set_system_prompt(req, lua_tostring(L, -1), &err) != SST_OK) {
        sst__lua_raise(L, &err);
    }
    lua_pop(L, 1);
    if (lua_getfield(L, idx, "tools") != LUA_TNIL) {
        sst_value *v = sst__lua_to_value(L, -1, "request.tools", &err);
        if (v == NULL || sst_model_request_set_tools(req, v, &err) != SST_OK) {
            sst__lua_raise(L, &err);
        }
    }
    lua_pop(L, 1);
}

/* handler(request?) -> reply: the rest of the chain. */
static int model_handler(lua_State *L) {
    wrap_call *w = lua_touserdata(L, lua_upvalueindex(1));
    if (w->req == NULL) {
        return luaL_error(L, "wrap_model_call: the handler is used after its wrap returned");
    }
    if (lua_istable(L, 1)) {
        read_request(L, 1, w->req);
    }
    sst_error err = {0};
    sst_value *reply = w->next_model(w->req, w->next_data, &err);
    if (reply == NULL) {
        return sst__lua_raise(L, &err);
    }
    sst__lua_push_table(L, reply);
    sst_value_unref(reply);
    return 1;
}

/* handler(call?) -> tool message: the rest of the chain. */
static int tool_handler(lua_State *L) {
    wrap_call *w = lua_touserdata(L, lua_upvalueindex(1));
    if (w->call == NULL) {
        return luaL_error(L, "wrap_tool_call: the handler is used after its wrap returned");
    }
    sst_error err = {0};
    sst_value *call =
        lua_istable(L, 1) ? sst__lua_to_object(L, 1, "call", &err) : sst_value_ref(w->call);
    if (call == NULL) {
        return sst__lua_raise(L, &err);
    }
    sst__lua_push_owned(L, call); /* freed by the collector, even when next fails */
    sst_value *msg = w->next_tool(call, w->next_data, &err);
    if (msg == NULL) {
        return sst__lua_raise(L, &err);
    }
    sst__lua_push_table(L, msg);
    sst_value_unref(msg);
    return 1;
}

/* Calls the wrap hook @p which with (its argument already pushed, handler); the result. */
static sst_value *call_wrap(lua_State *L, const lmw *m, int which, int base, wrap_call *w,
                            lua_CFunction handler, sst_error *err) {
    lua_pushlightuserdata(L, w);
    lua_pushcclosure(L, handler, 1);
    bool over_limit;
    int rc = sst__lua_pcall(L, 2, 1, base + 1, &over_limit);
    sst_value *out = NULL;
    if (rc != LUA_OK) {
        sst__lua_call_failed(L, rc, over_limit, SST_ETASK, err, "middleware '%s': %s",
                             sst_middleware_name(m->mw), k_hooks[which]);
    } else {
        out = sst__lua_to_object(L, -1, k_hooks[which], err);
    }
    return out;
}

/* Runs wrap hook @p which with its argument (@p w's request or call) and a handler. */
static sst_value *run_wrap(const lmw *m, int which, wrap_call *w, lua_CFunction handler,
                           sst_error *err) {
    lua_State *L = main_state(m);
    if (L == NULL) {
        sst__error(err, SST_EINVAL, "Lua middleware runs on the thread that loaded the script");
        return NULL;
    }
    bool armed = sst__lua_arm(L, false);
    int base = lua_gettop(L);
    lua_pushcfunction(L, sst__lua_traceback);
    lua_rawgeti(L, LUA_REGISTRYINDEX, m->refs[which]);
    if (w->req != NULL) {
        push_request(L, w->req);
    } else {
        sst__lua_push_table(L, w->call);
    }
    sst_value *out = call_wrap(L, m, which, base, w, handler, err);
    w->req = NULL; /* the handler is spent */
    w->call = NULL;
    lua_settop(L, base);
    sst__lua_arm(L, armed);
    return out;
}

static sst_value *wrap_model(sst_model_request *req, sst_model_handler next, void *next_data,
                             void *ud, sst_error *err) {
    wrap_call w = {.req = req, .next_model = next, .next_data = next_data};
    return run_wrap(ud, H_WRAP_MODEL, &w, model_handler, err);
}

static sst_value *wrap_tool(const sst_value *call, sst_node_ctx *ctx, sst_tool_handler next,
                            void *next_data, void *ud, sst_error *err) {
    (void)ctx;
    wrap_call w = {.call = call, .next_tool = next, .next_data = next_data};
    return run_wrap(ud, H_WRAP_TOOL, &w, tool_handler, err);
}

/* superstep.middleware.new{name = ..., <hook> = function, ...} */
static int mw_new(lua_State *L) {
    luaL_checktype(L, 1, LUA_TTABLE);
    static const char *const known[] = {
        "name",        "before_agent",    "before_model",   "after_model",
        "after_agent", "wrap_model_call", "wrap_tool_call", NULL};
    sst__lua_check_options(L, 1, known, "middleware.new");
    lua_getfield(L, 1, "name");
    const char *name = luaL_optstring(L, -1, NULL);
    if (name == NULL) {
        return luaL_error(L, "middleware.new: a name is needed");
    }
    lmw *m = new_lmw(L);
    for (int i = 0; i < N_H; i++) {
        int t = lua_getfield(L, 1, k_hooks[i]);
        if (t == LUA_TFUNCTION) {
            m->refs[i] = luaL_ref(L, LUA_REGISTRYINDEX);
        } else if (t != LUA_TNIL) {
            return luaL_error(L, "middleware.new: %s must be a function", k_hooks[i]);
        } else {
            lua_pop(L, 1);
        }
    }
    sst_middleware_hooks h = {
        .before_agent = m->refs[H_BEFORE_AGENT] != LUA_NOREF ? before_agent : NULL,
        .before_model = m->refs[H_BEFORE_MODEL] != LUA_NOREF ? before_model : NULL,
        .after_model = m->refs[H_AFTER_MODEL] != LUA_NOREF ? after_model : NULL,
        .after_agent = m->refs[H_AFTER_AGENT] != LUA_NOREF ? after_agent : NULL,
        .wrap_model_call = m->refs[H_WRAP_MODEL] != LUA_NOREF ? wrap_model : NULL,
        .wrap_tool_call = m->refs[H_WRAP_TOOL] != LUA_NOREF ? wrap_tool : NULL,
        .user_data = m};
    sst_error err = {0};
    if ((m->mw = sst_middleware_new(name, &h, &err)) == NULL) {
        return sst__lua_raise(L, &err);
    }
    return 1;
}

/* ---- built-ins ---- */

static int64_t opt_limit(lua_State *L, const char *key) {
    lua_getfield(L, 1, key);
    int64_t v = lua_isnil(L, -1) ? -1 : (int64_t)luaL_checkinteger(L, -1);
    lua_pop(L, 1);
    return v;
}

static sst_limit_behavior opt_exit(lua_State *L, bool tools) {
    lua_getfield(L, 1, "exit_behavior");
    const char *s = luaL_optstring(L, -1, tools ? "continue" : "end");
    lua_pop(L, 1);
    if (strcmp(s, "end") == 0) {
        return SST_LIMIT_END;
    }
    if (strcmp(s, "error") == 0) {
        return SST_LIMIT_ERROR;
    }
    if (tools && strcmp(s, "continue") == 0) {
        return SST_LIMIT_CONTINUE;
    }
    luaL_error(L, "exit_behavior must be %s, got \"%s\"",
               tools ? "\"continue\", \"end\" or \"error\"" : "\"end\" or \"error\"", s);
    return SST_LIMIT_END;
}

static int finish(lua_State *L, lmw *m, sst_middleware *mw, sst_error *err) {
    if (mw == NULL) {
        return sst__lua_raise(L, err);
    }
    m->mw = mw;
    return 1;
}

static int mw_human_in_the_loop(lua_State *L) {
    luaL_checktype(L, 1, LUA_TTABLE);
    static const char *const known[] = {"interrupt_on", NULL};
    sst__lua_check_options(L, 1, known, "middleware.human_in_the_loop");
    lmw *m = new_lmw(L);
    sst_error err = {0};
    if (lua_getfield(L, 1, "interrupt_on") != LUA_TTABLE) {
        return luaL_error(L, "human_in_the_loop: interrupt_on must be a table of tool names");
    }
    sst_value *cfg = sst__lua_to_object(L, -1, "interrupt_on", &err);
    if (cfg == NULL) {
        return sst__lua_raise(L, &err);
    }
    sst__lua_push_owned(L, cfg);
    lua_pushvalue(L, -3); /* the middleware, returned */
    return finish(L, m, sst_middleware_human_in_the_loop(cfg, &err), &err);
}

static int mw_summarization(lua_State *L) {
    luaL_checktype(L, 1, LUA_TTABLE);
    static const char *const known[] = {"model",          "model_name",    "api_key_env",
                                        "trigger_tokens", "keep_messages", NULL};
    sst__lua_check_options(L, 1, known, "middleware.summarization");
    lmw *m = new_lmw(L);
    sst_error err = {0};
    if ((m->models[0] = sst__lua_read_model(L, 1, "summarization", &err)) == NULL) {
        return sst__lua_raise(L, &err);
    }
    m->n_models = 1;
    lua_getfield(L, 1, "trigger_tokens");
    int64_t trigger = (int64_t)luaL_checkinteger(L, -1);
    lua_getfield(L, 1, "keep_messages");
    lua_Integer keep = luaL_optinteger(L, -1, 20);
    lua_pop(L, 2);
    if (keep < 0) {
        return luaL_error(L, "summarization: keep_messages must be 0 or more");
    }
    return finish(L, m, sst_middleware_summarization(m->models[0], trigger, (size_t)keep, &err),
                  &err);
}

static int mw_model_call_limit(lua_State *L) {
    luaL_checktype(L, 1, LUA_TTABLE);
    static const char *const known[] = {"thread_limit", "run_limit", "exit_behavior", NULL};
    sst__lua_check_options(L, 1, known, "middleware.model_call_limit");
    lmw *m = new_lmw(L);
    sst_error err = {0};
    return finish(L, m,
                  sst_middleware_model_call_limit(opt_limit(L, "thread_limit"),
                                                  opt_limit(L, "run_limit"), opt_exit(L, false),
                                                  &err),
                  &err);
}

static int mw_tool_call_limit(lua_State *L) {
    luaL_checktype(L, 1, LUA_TTABLE);
    static const char *const known[] = {"tool", "thread_limit", "run_limit", "exit_behavior", NULL};
    sst__lua_check_options(L, 1, known, "middleware.tool_call_limit");
    lmw *m = new_lmw(L);
    lua_getfield(L, 1, "tool");
    const char *tool = luaL_optstring(L, -1, NULL);
    lua_pop(L, 1); /* the string stays alive in the options table */
    sst_error err = {0};
    return finish(L, m,
                  sst_middleware_tool_call_limit(tool, opt_limit(L, "thread_limit"),
                                                 opt_limit(L, "run_limit"), opt_exit(L, true),
                                                 &err),
                  &err);
}

static int mw_model_fallback(lua_State *L) {
    luaL_checktype(L, 1, LUA_TTABLE);
    static const char *const known[] = {"models", "retries", NULL};
    sst__lua_check_options(L, 1, known, "middleware.model_fallback");
    lmw *m = new_lmw(L);
    int self = lua_gettop(L);
    if (lua_getfield(L, 1, "models") != LUA_TTABLE) {
        return luaL_error(L, "model_fallback: models must be a list of models");
    }
    int list = lua_gettop(L);
    size_t n = lua_rawlen(L, list);
    if (n > MAX_MODELS) {
        return luaL_error(L, "model_fallback: at most %d models", MAX_MODELS);
    }
    sst_error err = {0};
    for (size_t i = 0; i < n; i++) {
        /* Each entry is read as a create_react_agent model: {model = entry}. */
        lua_createtable(L, 0, 1);
        lua_rawgeti(L, list, (lua_Integer)i + 1);
        lua_setfield(L, -2, "model");
        if ((m->models[i] = sst__lua_read_model(L, lua_gettop(L), "model_fallback", &err)) ==
            NULL) {
            return sst__lua_raise(L, &err);
        }
        m->n_models = i + 1;
        lua_pop(L, 1);
    }
    lua_getfield(L, 1, "retries");
    lua_Integer retries = luaL_optinteger(L, -1, 1);
    if (retries < 0 || retries > 10) {
        return luaL_error(L, "model_fallback: retries must be 0..10");
    }
    lua_settop(L, self);
    return finish(L, m, sst_middleware_model_fallback(m->models, n, (unsigned)retries, &err), &err);
}

void sst__lua_open_middleware(lua_State *L) {
    luaL_newmetatable(L, SST_LUA_MIDDLEWARE);
    lua_pushcfunction(L, mw_gc);
    lua_setfield(L, -2, "__gc");
    lua_pop(L, 1);
    static const luaL_Reg fns[] = {{"new", mw_new},
                                   {"human_in_the_loop", mw_human_in_the_loop},
                                   {"summarization", mw_summarization},
                                   {"model_call_limit", mw_model_call_limit},
                                   {"tool_call_limit", mw_tool_call_limit},
                                   {"model_fallback", mw_model_fallback},
                                   {NULL, NULL}};
    luaL_newlib(L, fns);
    lua_setfield(L, -2, "middleware");
}
