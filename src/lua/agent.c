/* SPDX-License-Identifier: MIT */
/*
 * superstep.create_react_agent{model = ..., tools = {...}, system_prompt = ...,
 * max_iterations = ..., approve_tools = ..., checkpointer = ..., store = ...,
 * memory = {namespace = {...}}}: the prebuilt ReAct agent (superstep/agent.h)
 * as an app, with tools written in Lua (and LangMem's memory tools).
 */
#include "lua_int.h"

#define SST_LUA_AGENT "superstep.agent"

typedef struct lagent {
    sst_model *model;
    sst_toolset *tools;
    sst_agent *agent;
    struct ltool *calls; /* owned: one per tool */
    size_t n_calls;
    sst__lua_rt *rt;
    int on_token_ref, on_event_ref; /* LUA_NOREF when not given */
} lagent;

typedef struct ltool {
    sst__lua_rt *rt;
    int fn_ref; /* in the main state's registry */
} ltool;

/* Runs a Lua tool in the main state (agent apps run on the invoking thread only). */
static sst_value *call_tool(const sst_value *args, void *ud, sst_error *err) {
    const ltool *t = ud;
    if (!pthread_equal(pthread_self(), t->rt->master_thread)) {
        sst__error(err, SST_EINVAL, "Lua tools run on the thread that loaded the script");
        return NULL;
    }
    lua_State *L = t->rt->master;
    return sst__lua_call_tool(L, t->fn_ref, args, err);
}

/* The main state, when called on its thread (agent apps run there), else NULL. */
static lua_State *main_state(const lagent *a) {
    return pthread_equal(pthread_self(), a->rt->master_thread) ? a->rt->master : NULL;
}

static sst_code lua_on_token(const char *text, size_t len, void *ud) {
    const lagent *a = ud;
    lua_State *L = main_state(a);
    if (L == NULL) {
        return SST_OK;
    }
    bool armed = sst__lua_arm(L, false); /* as in callbacks.c: a limit only inside the call */
    int base = lua_gettop(L);
    lua_pushcfunction(L, sst__lua_traceback);
    lua_rawgeti(L, LUA_REGISTRYINDEX, a->on_token_ref);
    lua_pushlstring(L, text, len);
    bool over_limit;
    int rc = sst__lua_pcall(L, 1, 0, base + 1, &over_limit);
    lua_settop(L, base);
    sst__lua_arm(L, armed);
    return rc == LUA_OK ? SST_OK : SST_ETASK;
}

static void lua_on_event(const char *kind, const sst_value *data, void *ud) {
    const lagent *a = ud;
    lua_State *L = main_state(a);
    if (L == NULL) {
        return;
    }
    bool armed = sst__lua_arm(L, false);
    int base = lua_gettop(L);
    lua_pushcfunction(L, sst__lua_traceback);
    lua_rawgeti(L, LUA_REGISTRYINDEX, a->on_event_ref);
    lua_pushstring(L, kind);
    sst__lua_push_table(L, data);
    bool over_limit; /* an observer's error, this one too, does not stop the agent */
    sst__lua_pcall(L, 2, 0, base + 1, &over_limit);
    lua_settop(L, base);
    sst__lua_arm(L, armed);
}

static int agent_gc(lua_State *L) {
    lagent *a = luaL_checkudata(L, 1, SST_LUA_AGENT);
    luaL_unref(L, LUA_REGISTRYINDEX, a->on_token_ref);
    luaL_unref(L, LUA_REGISTRYINDEX, a->on_event_ref);
    sst_agent_free(a->agent);
    sst_toolset_free(a->tools);
    sst_model_free(a->model);
    for (size_t i = 0; i < a->n_calls; i++) {
        luaL_unref(L, LUA_REGISTRYINDEX, a->calls[i].fn_ref);
    }
    sst__free(a->calls);
    memset(a, 0, sizeof *a);
    return 0;
}

static const char *opt_string(lua_State *L, int t, const char *key) {
    lua_getfield(L, t, key);
    const char *s = lua_isnil(L, -1) ? NULL : luaL_checkstring(L, -1);
    lua_pop(L, 1); /* the string stays alive in the options table */
    return s;
}

/*
 * The options of the table at 1 other than the model, tools and callbacks:
 * system_prompt, max_iterations, approve_tools, store = InMemoryStore() |
 * SqliteStore(path) (compiled into the agent), and memory = {namespace =
 * {"memories", "{user_id}"}} (or a single label) for the memory tools, whose
 * strings stay alive in a scratch left on the stack. Raises on a bad option.
 */
static void read_options(lua_State *L, sst_agent_opts *o) {
    sst_agent_opts_init(o);
    o->system_prompt = opt_string(L, 1, "system_prompt");
    lua_getfield(L, 1, "max_iterations");
    if (!lua_isnil(L, -1)) {
        o->max_iterations = (int64_t)luaL_checkinteger(L, -1);
    }
    lua_pop(L, 1);
    lua_getfield(L, 1, "approve_tools");
    o->approve_tools = lua_toboolean(L, -1);
    lua_pop(L, 1);
    if (lua_getfield(L, 1, "store") != LUA_TNIL && (o->store = sst__lua_store(L, -1)) == NULL) {
        luaL_error(L, "create_react_agent: store must be an InMemoryStore(), SqliteStore(path) "
                      "or PostgresStore(url)");
    }
    lua_pop(L, 1); /* the options table keeps the store alive */
    if (lua_getfield(L, 1, "memory") == LUA_TNIL) {
        lua_pop(L, 1);
        return;
    }
    static const char *const known[] = {"namespace", NULL};
    int ns_type = lua_istable(L, -1) ? lua_getfield(L, -1, "namespace") : LUA_TNONE;
    if (ns_type == LUA_TSTRING) {
        const char **one = lua_newuserdatauv(L, sizeof *one, 0);
        one[0] = lua_tostring(L, -2);
        o->memory_namespace = one;
        o->n_memory_namespace = 1;
    } else if (ns_type == LUA_TTABLE) {
        o->memory_namespace = sst__lua_string_list(L, -1, &o->n_memory_namespace,
                                                   "create_react_agent: memory.namespace");
    } else {
        luaL_error(L, "create_react_agent: memory must be {namespace = {\"memories\", "
                      "\"{user_id}\"}}");
    }
    sst__lua_check_options(L, -3, known, "create_react_agent: memory");
}

static int create_react_agent(lua_State *L) {
    luaL_checktype(L, 1, LUA_TTABLE);
    lagent *a = lua_newuserdatauv(L, sizeof *a, 0);
    memset(a, 0, sizeof *a);
    a->rt = sst__lua_runtime(L);
    a->on_token_ref = LUA_NOREF;
    a->on_event_ref = LUA_NOREF;
    luaL_setmetatable(L, SST_LUA_AGENT);
    int self = lua_gettop(L);
    sst_error err = {0};
    /* The model: "fake:FILE", a base URL, or {base_url =, model =, api_key_env =}. */
    lua_getfield(L, 1, "model");
    if (lua_type(L, -1) == LUA_TSTRING) {
        a->model = sst_model_from_spec(
            lua_tostring(L, -1),
            opt_string(L, 1, "model_name") ? opt_string(L, 1, "model_name") : "gpt-4o-mini",
            "OPENAI_API_KEY", &err);
    } else if (lua_istable(L, -1)) {
        int m = lua_gettop(L);
        const char *key_env = opt_string(L, m, "api_key_env");
        a->model = sst_model_openai(opt_string(L, m, "base_url"), opt_string(L, m, "model"),
                                    key_env != NULL ? key_env : "OPENAI_API_KEY", &err);
    } else {
        return luaL_error(L, "create_react_agent: model must be \"fake:FILE\", a base URL or "
                             "{base_url =, model =, api_key_env =}");
    }
    lua_pop(L, 1);
    if (a->model == NULL || (a->tools = sst_toolset_new(&err)) == NULL) {
        return sst__lua_raise(L, &err);
    }
    if (lua_getfield(L, 1, "tools") == LUA_TTABLE) {
        int list = lua_gettop(L);
        size_t n = lua_rawlen(L, list);
        a->calls = sst__calloc(n > 0 ? n : 1, sizeof *a->calls);
        if (a->calls == NULL) {
            return sst__lua_raise_enomem(L);
        }
        for (size_t i = 0; i < n; i++) {
            lua_rawgeti(L, list, (lua_Integer)i + 1);
            const char *name, *description;
            sst_value *params;
            ltool *t = &a->calls[a->n_calls];
            t->rt = sst__lua_runtime(L);
            sst_code rc = sst__lua_read_tool(L, -1, &name, &description, &t->fn_ref, &params, &err);
            if (rc == SST_ENOTFOUND) {
                return luaL_error(L, "create_react_agent: tool %d needs a name and fn", (int)i + 1);
            }
            if (rc == SST_OK) {
                a->n_calls++;
                rc = sst_toolset_add(a->tools, name, description, params, call_tool, t, &err);
            }
            sst_value_unref(params);
            if (rc != SST_OK) {
                return sst__lua_raise(L, &err);
            }
            lua_settop(L, list);
        }
    }
    lua_pop(L, 1);
    sst_agent_opts o;
    read_options(L, &o);
    /* Callbacks: on_token(text) and on_event(kind, data), kind
     * llm_start/llm_end/tool_start/tool_end. */
    if (lua_getfield(L, 1, "on_token") == LUA_TFUNCTION) {
        a->on_token_ref = luaL_ref(L, LUA_REGISTRYINDEX);
        o.on_token = lua_on_token;
        o.token_user_data = a;
    } else {
        lua_pop(L, 1);
    }
    if (lua_getfield(L, 1, "on_event") == LUA_TFUNCTION) {
        a->on_event_ref = luaL_ref(L, LUA_REGISTRYINDEX);
        o.on_event = lua_on_event;
        o.event_user_data = a;
    } else {
        lua_pop(L, 1);
    }
    if ((a->agent = sst_agent_new(a->model, a->tools, &o, &err)) == NULL) {
        return sst__lua_raise(L, &err);
    }
    int saver = 0;
    if (lua_getfield(L, 1, "checkpointer") != LUA_TNIL) {
        if (sst__lua_saver(L, -1) == NULL) {
            return luaL_error(L, "create_react_agent: checkpointer must be a MemorySaver(), "
                                 "SqliteSaver(path) or PostgresSaver(url)");
        }
        saver = lua_gettop(L);
    }
    return sst__lua_app_wrap(L, (sst_compiled_graph *)sst_agent_graph(a->agent), self, saver,
                             sst_agent_recursion_limit(a->agent));
}

void sst__lua_open_agent(lua_State *L) {
    luaL_newmetatable(L, SST_LUA_AGENT);
    lua_pushcfunction(L, agent_gc);
    lua_setfield(L, -2, "__gc");
    lua_pop(L, 1);
    lua_pushcfunction(L, create_react_agent);
    lua_setfield(L, -2, "create_react_agent");
}
