/* SPDX-License-Identifier: MIT */
/*
 * superstep.create_react_agent{model = ..., tools = {...}, system_prompt = ...,
 * max_iterations = ..., approve_tools = ..., checkpointer = ..., store = ...,
 * memory = {namespace = {...}}, response_format = schema, ...}: the prebuilt
 * ReAct agent (superstep/agent.h) as an app, with tools written in Lua (and
 * LangMem's memory tools); superstep.model_invoke{...}: one model call.
 */
#include "lua_int.h"
#include "superstep/json.h"
#include "values/build.h"

#define SST_LUA_AGENT "superstep.agent"
#define SST_LUA_MODEL "superstep.model"

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

sst_model *sst__lua_read_model(lua_State *L, int t, const char *who, sst_error *err) {
    sst_model *m = NULL;
    const char *key_env = opt_string(L, t, "api_key_env");
    lua_getfield(L, t, "model");
    if (lua_type(L, -1) == LUA_TSTRING) {
        const char *spec = lua_tostring(L, -1);
        const char *name = opt_string(L, t, "model_name");
        bool url = strncmp(spec, "http://", 7) == 0 || strncmp(spec, "https://", 8) == 0;
        /* A bare URL is OpenAI-compatible: its key is OPENAI_API_KEY's, as before. */
        m = sst_model_from_spec(spec, name != NULL ? name : "gpt-4o-mini",
                                key_env != NULL ? key_env
                                : url           ? "OPENAI_API_KEY"
                                                : NULL,
                                err);
    } else if (lua_istable(L, -1)) {
        int mt = lua_gettop(L);
        const char *provider = opt_string(L, mt, "provider");
        const char *own_key = opt_string(L, mt, "api_key_env");
        bool anthropic = provider != NULL && strcmp(provider, "anthropic") == 0;
        if (provider != NULL && !anthropic && strcmp(provider, "openai") != 0) {
            luaL_error(L, "%s: model.provider must be \"openai\" or \"anthropic\", got \"%s\"", who,
                       provider);
        }
        m = anthropic
                ? sst_model_anthropic(opt_string(L, mt, "base_url"), opt_string(L, mt, "model"),
                                      own_key != NULL ? own_key : "ANTHROPIC_API_KEY", err)
                : sst_model_openai(opt_string(L, mt, "base_url"), opt_string(L, mt, "model"),
                                   own_key != NULL ? own_key : "OPENAI_API_KEY", err);
        lua_getfield(L, mt, "cache_prompt");
        bool cache = lua_toboolean(L, -1);
        lua_pop(L, 1);
        if (m != NULL && cache && sst_model_cache_prompt(m, true, err) != SST_OK) {
            sst_model_free(m);
            m = NULL;
        }
    } else {
        luaL_error(L,
                   "%s: model must be \"fake:FILE\", a base URL, \"openai:MODEL\", "
                   "\"anthropic:MODEL\" or {provider =, base_url =, model =, api_key_env =}",
                   who);
    }
    lua_pop(L, 1);
    return m;
}

/*
 * response_format at field "response_format" of table @p t: a schema table or its JSON
 * text (new), or NULL when absent; raises on anything else.
 */
static sst_value *read_response_format(lua_State *L, int t, const char *who) {
    int type = lua_getfield(L, t, "response_format");
    sst_value *v = NULL;
    sst_error err = {0};
    if (type == LUA_TSTRING) {
        size_t len;
        const char *text = lua_tolstring(L, -1, &len);
        v = sst_json_read(text, len, NULL, &err);
    } else if (type == LUA_TTABLE) {
        v = sst__lua_to_object(L, -1, "response_format", &err);
    } else if (type != LUA_TNIL) {
        luaL_error(L, "%s: response_format must be a JSON schema (a table or its JSON text)", who);
    }
    lua_pop(L, 1);
    if (type != LUA_TNIL && v == NULL) {
        sst__error_prefix(&err, "%s: response_format", who);
        sst__lua_raise(L, &err);
    }
    return v;
}

/* structured_strategy = "auto" | "tool" | "provider" at table @p t. */
static sst_structured_strategy read_strategy(lua_State *L, int t, const char *who) {
    const char *s = opt_string(L, t, "structured_strategy");
    if (s == NULL || strcmp(s, "auto") == 0) {
        return SST_STRUCTURED_AUTO;
    }
    if (strcmp(s, "tool") == 0) {
        return SST_STRUCTURED_TOOL;
    }
    if (strcmp(s, "provider") == 0) {
        return SST_STRUCTURED_PROVIDER;
    }
    luaL_error(L, "%s: structured_strategy must be \"auto\", \"tool\" or \"provider\"", who);
    return SST_STRUCTURED_AUTO;
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
    o->structured_strategy = read_strategy(L, 1, "create_react_agent");
    lua_getfield(L, 1, "structured_attempts");
    if (!lua_isnil(L, -1)) {
        lua_Integer n = luaL_checkinteger(L, -1);
        if (n < 1 || n > 100) {
            luaL_error(L, "create_react_agent: structured_attempts must be 1..100");
        }
        o->structured_attempts = (unsigned)n;
    }
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
    /* user values: the middleware list, the tools list (MCP connections the agent calls) */
    lagent *a = lua_newuserdatauv(L, sizeof *a, 2);
    memset(a, 0, sizeof *a);
    a->rt = sst__lua_runtime(L);
    a->on_token_ref = LUA_NOREF;
    a->on_event_ref = LUA_NOREF;
    luaL_setmetatable(L, SST_LUA_AGENT);
    int self = lua_gettop(L);
    sst_error err = {0};
    a->model = sst__lua_read_model(L, 1, "create_react_agent", &err);
    if (a->model == NULL || (a->tools = sst_toolset_new(&err)) == NULL) {
        return sst__lua_raise(L, &err);
    }
    if (lua_getfield(L, 1, "tools") == LUA_TTABLE) {
        int list = lua_gettop(L);
        lua_pushvalue(L, list);
        lua_setiuservalue(L, self, 2);
        size_t n = lua_rawlen(L, list);
        a->calls = sst__calloc(n > 0 ? n : 1, sizeof *a->calls);
        if (a->calls == NULL) {
            return sst__lua_raise_enomem(L);
        }
        for (size_t i = 0; i < n; i++) {
            lua_rawgeti(L, list, (lua_Integer)i + 1);
            /* An MCP server's tools (superstep.mcp_tools): all of them join. */
            sst_code mrc = sst__lua_mcp_add(L, -1, a->tools, &err);
            if (mrc != SST_ENOTFOUND) {
                if (mrc != SST_OK) {
                    return sst__lua_raise(L, &err);
                }
                lua_settop(L, list);
                continue;
            }
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
    /* middleware = {...}: kept alive by the agent (its user value). */
    sst_middleware *mws[32];
    if (lua_getfield(L, 1, "middleware") == LUA_TTABLE) {
        size_t n = lua_rawlen(L, -1);
        if (n > SST_ARRAY_LEN(mws)) {
            return luaL_error(L, "create_react_agent: at most %d middleware",
                              (int)SST_ARRAY_LEN(mws));
        }
        for (size_t i = 0; i < n; i++) {
            lua_rawgeti(L, -1, (lua_Integer)i + 1);
            if ((mws[i] = sst__lua_middleware(L, -1)) == NULL) {
                return luaL_error(L,
                                  "create_react_agent: middleware %d is not a "
                                  "superstep.middleware",
                                  (int)i + 1);
            }
            lua_pop(L, 1);
        }
        o.middleware = mws;
        o.n_middleware = n;
        lua_pushvalue(L, -1);
        lua_setiuservalue(L, self, 1);
    } else if (!lua_isnil(L, -1)) {
        return luaL_error(L, "create_react_agent: middleware must be a list");
    }
    lua_pop(L, 1);
    sst_value *schema = read_response_format(L, 1, "create_react_agent");
    o.response_format = schema;
    a->agent = sst_agent_new(a->model, a->tools, &o, &err);
    sst_value_unref(schema); /* the agent keeps its own reference */
    if (a->agent == NULL) {
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

/* The chat-completions schema of Lua tool tables {name, description?, parameters?} (new). */
static sst_value *tool_schemas(lua_State *L, int list, sst_error *err) {
    for (size_t i = 1; i <= lua_rawlen(L, list); i++) { /* raise before anything is built */
        lua_rawgeti(L, list, (lua_Integer)i);
        if (!lua_istable(L, -1) || lua_getfield(L, -1, "name") != LUA_TSTRING) {
            luaL_error(L, "model_invoke: tool %d needs a name", (int)i);
        }
        lua_settop(L, list);
    }
    sst_value *out = sst_array_empty();
    for (size_t i = 1; out != NULL && i <= lua_rawlen(L, list); i++) {
        lua_rawgeti(L, list, (lua_Integer)i);
        int item = lua_gettop(L);
        const char *name = opt_string(L, item, "name");
        lua_getfield(L, item, "description");
        const char *desc = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
        sst_value *params = NULL;
        if (lua_getfield(L, item, "parameters") != LUA_TNIL) {
            params = sst__lua_to_object(L, -1, "a tool's parameters", err);
        } else {
            params = sst__set_take(sst_object_empty(), "type", sst_string_new("object", err), err);
        }
        sst_value *fn = sst__set_take(sst_object_empty(), "name", sst_string_new(name, err), err);
        fn = sst__set_take(fn, "description", sst_string_new(desc != NULL ? desc : "", err), err);
        fn = sst__set_take(fn, "parameters", params, err);
        sst_value *t =
            sst__set_take(sst_object_empty(), "type", sst_string_new("function", err), err);
        out = sst__push_take(out, sst__set_take(t, "function", fn, err), err);
        lua_settop(L, list);
    }
    return out;
}

/*
 * superstep.model_invoke{model = ..., messages = {...}, tools = {...}?, response_format =
 * schema?, structured_strategy =?, max_attempts =?, on_token =?}: one model call; returns
 * the assistant message (with structured_response when a response_format is given).
 */
static int model_invoke(lua_State *L) {
    luaL_checktype(L, 1, LUA_TTABLE);
    static const char *const known[] = {
        "model",           "model_name",          "api_key_env",  "messages", "tools",
        "response_format", "structured_strategy", "max_attempts", NULL};
    sst__lua_check_options(L, 1, known, "model_invoke");
    sst_error err = {0};
    sst_model **slot = lua_newuserdatauv(L, sizeof *slot, 0); /* freed by its __gc, even on error */
    *slot = NULL;
    luaL_setmetatable(L, SST_LUA_MODEL);
    *slot = sst__lua_read_model(L, 1, "model_invoke", &err);
    if (*slot == NULL) {
        return sst__lua_raise(L, &err);
    }
    sst_model_call_opts o;
    sst_model_call_opts_init(&o);
    o.strategy = read_strategy(L, 1, "model_invoke");
    lua_getfield(L, 1, "max_attempts");
    if (!lua_isnil(L, -1)) {
        lua_Integer n = luaL_checkinteger(L, -1);
        if (n < 1 || n > 100) {
            return luaL_error(L, "model_invoke: max_attempts must be 1..100");
        }
        o.max_attempts = (unsigned)n;
    }
    lua_pop(L, 1);
    /* What is converted is held by proxies on the stack: a later error frees it. */
    if (lua_getfield(L, 1, "messages") != LUA_TTABLE) {
        return luaL_error(L, "model_invoke: messages must be a list of messages");
    }
    sst_value *msgs = sst__lua_to_value(L, -1, "messages", &err);
    if (msgs == NULL) {
        return sst__lua_raise(L, &err);
    }
    sst__lua_push_owned(L, msgs);
    if (lua_getfield(L, 1, "tools") == LUA_TTABLE) {
        sst_value *tools = tool_schemas(L, lua_gettop(L), &err);
        if (tools == NULL) {
            return sst__lua_raise(L, &err);
        }
        sst__lua_push_owned(L, tools);
        o.tools = tools;
    }
    sst_value *schema = read_response_format(L, 1, "model_invoke");
    if (schema != NULL) {
        sst__lua_push_owned(L, schema);
        o.response_format = schema;
    }
    sst_value *reply = sst_model_invoke(*slot, msgs, &o, &err);
    if (reply == NULL) {
        return sst__lua_raise(L, &err);
    }
    sst__lua_push_table(L, reply);
    sst_value_unref(reply);
    return 1;
}

static int model_gc(lua_State *L) {
    sst_model **slot = luaL_checkudata(L, 1, SST_LUA_MODEL);
    sst_model_free(*slot);
    *slot = NULL;
    return 0;
}

void sst__lua_open_agent(lua_State *L) {
    luaL_newmetatable(L, SST_LUA_MODEL);
    lua_pushcfunction(L, model_gc);
    lua_setfield(L, -2, "__gc");
    lua_pop(L, 1);
    lua_pushcfunction(L, model_invoke);
    lua_setfield(L, -2, "model_invoke");
    luaL_newmetatable(L, SST_LUA_AGENT);
    lua_pushcfunction(L, agent_gc);
    lua_setfield(L, -2, "__gc");
    lua_pop(L, 1);
    lua_pushcfunction(L, create_react_agent);
    lua_setfield(L, -2, "create_react_agent");
}
