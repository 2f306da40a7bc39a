/* SPDX-License-Identifier: MIT */
/*
 * The Lua layer's internals: the runtime shared by every lua_State that runs
 * one script (the master state and one state per extra worker thread),
 * conversions between Lua and values, and the callbacks the graph layer
 * calls for Lua nodes, routers and reducers.
 */
#ifndef SUPERSTEP_LUA_INT_H
#define SUPERSTEP_LUA_INT_H

#include <pthread.h>

#include <lauxlib.h>
#include <lua.h>

#include "common.h"
#include "superstep/functional.h"
#include "superstep/lua.h"

/* Registry keys and metatable names. */
#define SST_LUA_PROXY   "superstep.value"
#define SST_LUA_GRAPH   "superstep.StateGraph"
#define SST_LUA_APP     "superstep.app"
#define SST_LUA_SAVER   "superstep.saver"
#define SST_LUA_CACHE   "superstep.cache"
#define SST_LUA_CTX     "superstep.context"
#define SST_LUA_COMMAND "superstep.Command"
#define SST_LUA_PARENT  "__parent__" /* superstep.PARENT: Command{graph = PARENT} */
#define SST_LUA_ARRAY   "superstep.array"
#define SST_LUA_OBJECT  "superstep.object"
#define SST_LUA_ERROR   "superstep.Error"
#define SST_LUA_RUNTIME "superstep.runtime" /* registry: lightuserdata sst__lua_rt */
#define SST_LUA_GRAPHS  "superstep.graphs"  /* registry: graph number -> callables */

/* One worker thread's own state. */
typedef struct sst__lua_worker {
    pthread_t thread;
    lua_State *L;
} sst__lua_worker;

/*
 * Shared by the master state and its worker states. Worker states are made
 * on demand by running the script again; the script must build its graphs
 * in the same order each time (graph k of a worker is graph k of the master).
 */
typedef struct sst__lua_rt {
    char *script;            /* path of the script, or NULL (no worker states) */
    lua_State *master;       /* the state the script was loaded in */
    pthread_t master_thread; /* guarded by mu: a live stream lends the master state */
    pthread_mutex_t mu;      /* guards master_thread and workers */
    sst__lua_worker *workers;
    size_t n_workers, cap_workers;
    size_t memory_limit; /* of a new worker state (sst_lua_opts; 0: the default) */
    bool memory_fixed;   /* the host set it: compile{memory_limit} is ignored */
} sst__lua_rt;

/* What a C callback needs to find its Lua function in any state. */
typedef enum { SST__CB_NODE, SST__CB_ROUTER, SST__CB_REDUCER } sst__cb_kind;
typedef struct sst__lua_cb {
    sst__lua_rt *rt;
    int graph; /* graph number in creation order */
    sst__cb_kind kind;
    char *key; /* node name, router number or field name */
} sst__lua_cb;

/* ---- runtime (runtime.c) ---- */

/* The runtime of @p L (every state with the module loaded has one). */
sst__lua_rt *sst__lua_runtime(lua_State *L);
/* Creates the runtime of a master state and records it in the registry. */
sst__lua_rt *sst__lua_runtime_new(lua_State *L, const char *script, sst_error *err);
/* The state to run callbacks on from the calling thread (made on first use). */
lua_State *sst__lua_state_for_thread(sst__lua_rt *rt, sst_error *err);
/*
 * Hands the state of thread @p from (the master state or a worker state) to
 * thread @p to: sst__lua_state_for_thread then gives it to @p to, and @p from
 * has none. A live stream lends the iterator's state to the thread running
 * the graph while the iterator waits, and takes it back when the iterator
 * runs (stream.c: only one of the two runs at a time). False when @p from
 * has no state.
 */
bool sst__lua_runtime_lend(sst__lua_rt *rt, pthread_t from, pthread_t to);
/* Frees the worker states (the master state belongs to its owner). */
void sst__lua_runtime_free(sst__lua_rt *rt);

/* ---- memory (memory.c) ---- */

/* The allocator's record of one state we made. Used only by the thread running the state. */
typedef struct sst__lua_mem {
    size_t used;            /* bytes the state holds */
    size_t limit;           /* the most it may hold inside sst__lua_pcall */
    bool fixed;             /* set by the host (sst_lua_opts): compile{memory_limit} leaves it */
    bool armed;             /* inside sst__lua_pcall: the limit applies */
    unsigned long refusals; /* allocations refused for the limit */
    unsigned long nested;   /* runs inside a call on this state that failed for a limit */
    unsigned long enomem;   /* errors raised for SST_ENOMEM by this layer (sst__lua_raise) */
} sst__lua_mem;

/*
 * A new state with the standard libraries, its allocator limited to @p limit
 * bytes (0: SST_LUA_MEMORY_LIMIT_DEFAULT), and luaL_newstate's panic and
 * warning functions. NULL when out of memory. Close with sst__lua_close.
 */
lua_State *sst__lua_newstate(size_t limit, bool fixed);
void sst__lua_close(lua_State *L);
/* The allocator record of a state made by sst__lua_newstate, else NULL (a host's state). */
sst__lua_mem *sst__lua_mem_of(lua_State *L);
/*
 * Turns the limit on or off for @p L (outside sst__lua_pcall it is off);
 * returns the previous setting. A no-op (false) for a host's state.
 */
bool sst__lua_arm(lua_State *L, bool on);
/*
 * lua_pcall with the memory limit applied. *over_limit: the call failed
 * because the limit refused an allocation, or because it ran a graph that
 * failed so (sst__lua_note_limit); the state was then collected.
 */
int sst__lua_pcall(lua_State *L, int nargs, int nresults, int msgh, bool *over_limit);
/* Records that a graph run from Lua on @p L failed with SST_ELIMIT. */
void sst__lua_note_limit(lua_State *L);
/*
 * The code and message of a failed sst__lua_pcall (error object on top):
 * when @p over_limit, SST_ELIMIT with "memory limit of N bytes exceeded" (in
 * @p buf) for LUA_ERRMEM, else the error's text, which says so already;
 * otherwise SST_ENOMEM for LUA_ERRMEM or SST_ETASK, with the error's text
 * (borrowed from the stack).
 */
sst_code sst__lua_pcall_error(lua_State *L, int rc, bool over_limit, char *buf, size_t n,
                              const char **msg);
/*
 * Fills @p err for a failed sst__lua_pcall: "PREFIX: message" (just the
 * message for an empty prefix), with sst__lua_pcall_error's code, except that
 * a plain Lua error (SST_ETASK) becomes @p task_code. Returns the code.
 */
sst_code sst__lua_call_failed(lua_State *L, int rc, bool over_limit, sst_code task_code,
                              sst_error *err, const char *prefix_fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 6, 7)))
#endif
    ;

/* ---- values (convert.c) ---- */

/* Pushes @p v (borrowed): scalars as Lua values, arrays/objects as read-only proxies. */
void sst__lua_push_value(lua_State *L, const sst_value *v);
/* Pushes a proxy that takes @p v: Lua's collector frees it, even after an error. */
void sst__lua_push_owned(lua_State *L, sst_value *v);
/* Pushes a deep copy of @p v as plain tables (empty ones marked array/object). */
void sst__lua_push_table(lua_State *L, const sst_value *v);
/*
 * The value at @p idx as a new value. @p what names it in errors ("field
 * 'x'", "the input"). NULL with SST_ETYPE/SST_EUTF8/SST_ERANGE, the message
 * naming the path, or SST_ENOMEM.
 */
sst_value *sst__lua_to_value(lua_State *L, int idx, const char *what, sst_error *err);
/* As sst__lua_to_value where an object is expected: an empty table is {}. */
sst_value *sst__lua_to_object(lua_State *L, int idx, const char *what, sst_error *err);
/* The value a proxy at @p idx wraps (borrowed), or NULL if it is not a proxy. */
const sst_value *sst__lua_proxy_value(lua_State *L, int idx);
void sst__lua_open_proxy(lua_State *L);
/* True when the value at @p idx has the metatable registered as @p name. */
bool sst__lua_has_metatable(lua_State *L, int idx, const char *name);
/* True for a superstep.Command{...} table. */
bool sst__lua_is_command(lua_State *L, int idx);
/*
 * update_state's values at @p idx (updates.c): nil -> NULL, a table of
 * fields, a list of updates {values, as_node} (one superstep), or a Command
 * (its update routed by its goto; *as_node moves into the update, then NULL).
 */
sst_value *sst__lua_update_values(lua_State *L, int idx, const char **as_node, sst_error *err);
/*
 * A Command inside a value (a Send's payload): {"__command__": {update, goto,
 * resume}} (updates.c); sst__lua_push_command pushes such a value back as a
 * Command table (false, nothing pushed, when @p v is not one).
 */
#define SST_LUA_COMMAND_KEY "__command__"
sst_value *sst__lua_command_value(lua_State *L, int idx, sst_error *err);
bool sst__lua_push_command(lua_State *L, const sst_value *v);
/* bulk_update_state's list of supersteps, each a list of updates. */
sst_value *sst__lua_supersteps(lua_State *L, int idx, sst_error *err);
/* Raises a Lua error with @p err's message. */
int sst__lua_raise(lua_State *L, const sst_error *err);
/* Pushes @p text (taken: freed with sst_free) and returns 1, or raises @p err when it is
 * NULL (the call that made it failed). */
int sst__lua_push_text(lua_State *L, char *text, const sst_error *err);
/* Raises an error object with @p code and a formatted message (errors.c). */
int sst__lua_raisef(lua_State *L, sst_code code, const char *fmt, ...) SST_PRINTF(3, 4);
/* Pushes an error object { code, message, node } (node may be NULL). */
void sst__lua_push_error(lua_State *L, sst_code code, const char *msg, const char *node);
void sst__lua_open_errors(lua_State *L);
/* Raises "out of memory" so that the protected call reports SST_ENOMEM. */
int sst__lua_raise_enomem(lua_State *L);

/* ---- callbacks (callbacks.c) ---- */

sst_code sst__lua_node(sst_node_ctx *ctx, void *ud);
/*
 * A middleware's node hook written in Lua (the function at @p fn_ref in @p L's registry),
 * run as a node function is (fn(state, ctx), interrupt() allowed); its result's
 * "jump_to" goes to @p jump ("" for none), the rest are the node's updates.
 */
sst_code sst__lua_hook(lua_State *L, int fn_ref, sst_node_ctx *ctx, char *jump, size_t jump_n);
sst_value *sst__lua_router(const sst_value *state, void *ud, sst_error *err);
sst_value *sst__lua_reducer(void *ud, const char *field, sst_value *current,
                            const sst_value *update, sst_error *err);
/*
 * Calls the tool function registered as @p fn_ref with @p args (as a table):
 * its result as a new value, or NULL with the Lua error and traceback.
 */
sst_value *sst__lua_call_tool(lua_State *L, int fn_ref, const sst_value *args, sst_error *err);
/*
 * Reads the tool table at @p item ({name, description?, parameters?, fn}):
 * *name and *description (borrowed from the table; description may be NULL),
 * the function stored in the registry (*fn_ref) and the parameters schema
 * (*params, new; {"type": "object"} when absent). SST_ENOTFOUND (err not
 * filled) when the name or the function is missing; a conversion error.
 */
sst_code sst__lua_read_tool(lua_State *L, int item, const char **name, const char **description,
                            int *fn_ref, sst_value **params, sst_error *err);
/* superstep.interrupt(value), callable only inside a node. */
int sst__lua_interrupt(lua_State *L);
/* superstep.push_message(message [, field]) (callbacks.c). */
int sst__lua_push_message(lua_State *L);
/* The message handler for lua_pcall: adds a traceback to string errors. */
int sst__lua_traceback(lua_State *L);
/* The error object interrupt() raises to unwind a node. */
extern char sst__lua_interrupt_token;
/* The error object that ends a node whose subgraph sent Command{graph = PARENT} (run.c). */
extern char sst__lua_parent_token;
/* The node running on @p L (inside its Lua function), or NULL. */
sst_node_ctx *sst__lua_running_ctx(lua_State *L);
/* Pushes the running node's context userdata (nil outside a node). */
void sst__lua_push_running_lctx(lua_State *L);
/* True when the context userdata at @p idx belongs to a node still running. */
bool sst__lua_lctx_alive(lua_State *L, int idx);

/* ---- the functional API (functional.c; runners in callbacks.c) ---- */

#define SST_LUA_TASKS  "superstep.tasks" /* registry: task number -> function */
#define SST_LUA_FINAL  "superstep.final" /* metatable of entrypoint.final{value, save} */
#define SST_LUA_TASK   "superstep.task"
#define SST_LUA_FUTURE "superstep.future"

/* A task made by superstep.task (the userdata of its Lua object). */
typedef struct sst__lua_task {
    sst__lua_rt *rt;
    int number; /* > 0: superstep.tasks[number] in every state of the script */
    int ref;    /* number == 0: the function in its home state's registry (a pinned task) */
    sst_task_spec spec;
    char name[256];
} sst__lua_task;

/* The entrypoint node's function: fn(input, ctx) found as @p ud's node (sst__lua_cb). */
sst_code sst__lua_entry(sst_node_ctx *ctx, void *ud);
/* A Lua task's function (@p ud: its sst__lua_task): fn(args...) with the task's input. */
sst_code sst__lua_task_fn(sst_node_ctx *ctx, void *ud);
/* superstep.entrypoint{...}(fn): the app (graph.c); @p opts_idx 0: none. */
int sst__lua_entrypoint(lua_State *L, int opts_idx, int fn_idx, const char *name);
void sst__lua_open_functional(lua_State *L);
/* A task's or entrypoint's retry option at @p idx: true, false or {max_attempts, ...}. */
void sst__lua_read_task_retry(lua_State *L, int idx, sst_retry_policy *p);

/* ---- builder and app (graph.c, app.c, savers.c) ---- */

/* The built-in reducers offered as superstep.reducers.* (light userdata). */
#define SST__LUA_REDUCERS 7
extern const char *const sst__lua_reducer_names[SST__LUA_REDUCERS];

void sst__lua_open_graph(lua_State *L);
/* The builder of the StateGraph at @p idx (raises a Lua error for anything else). */
const sst_graph *sst__lua_graph_of(lua_State *L, int idx);
void sst__lua_open_app(lua_State *L);
void sst__lua_open_savers(lua_State *L);
/* superstep.InMemoryCache and SqliteCache (caches.c); the cache at @p idx, or NULL. */
void sst__lua_open_caches(lua_State *L);
sst_cache *sst__lua_cache(lua_State *L, int idx);
/* Pushes an app (compiled graph) userdata for a StateGraph at @p idx with options table at @p opts
 * (0: none). */
int sst__lua_compile(lua_State *L, int graph_idx, int opts_idx);
/* The saver at @p idx (borrowed), or NULL. */
sst_checkpointer *sst__lua_saver(lua_State *L, int idx);

/*
 * The app userdata (a compiled graph). Its user values: 1 the StateGraph
 * (owns the callbacks), 2 the saver or nil, 3 a table of in-memory threads
 * (thread id -> superstep.thread userdata holding an sst__lua_thread).
 */
typedef struct sst__lua_app {
    sst_compiled_graph *cg;
    sst_engine *engine; /* made on first invoke when workers > 1 */
    unsigned workers;
    uint64_t recursion_limit;
    sst_durability durability;
    sst_checkpointer *saver; /* borrowed from user value 2 */
    bool borrowed_cg;        /* cg belongs to user value 1 (a prebuilt agent) */
} sst__lua_app;

/*
 * Pushes an app for a compiled graph owned by the userdata at @p owner_idx
 * (kept alive as user value 1), with the saver at @p saver_idx (0: none).
 */
int sst__lua_app_wrap(lua_State *L, sst_compiled_graph *cg, int owner_idx, int saver_idx,
                      uint64_t recursion_limit);
void sst__lua_open_agent(lua_State *L);
/*
 * The model of the options table at @p t ("model" = "fake:FILE", a base URL, "openai:M",
 * "anthropic:M" or {provider =, base_url =, model =, api_key_env =, cache_prompt =}, with
 * model_name and api_key_env beside it): new, or NULL with @p err; raises on a bad type.
 */
sst_model *sst__lua_read_model(lua_State *L, int t, const char *who, sst_error *err);
/* superstep.mcp_tools (mcp.c). */
void sst__lua_open_mcp(lua_State *L);
/*
 * Adds the tools of the MCP connection at @p idx to @p tools. SST_ENOTFOUND (err not
 * filled) when the value is not one; the toolset's errors.
 */
sst_code sst__lua_mcp_add(lua_State *L, int idx, struct sst_toolset *tools, sst_error *err);
/* superstep.middleware (middleware.c). */
void sst__lua_open_middleware(lua_State *L);
/* The middleware at @p idx (borrowed; the userdata keeps it), or NULL if it is not one. */
sst_middleware *sst__lua_middleware(lua_State *L, int idx);

sst__lua_app *sst__lua_check_app(lua_State *L, int idx);

/* The user values of an app userdata. */
enum { SST__APP_GRAPH = 1, SST__APP_SAVER = 2, SST__APP_THREADS = 3 };

/* ---- node policies (graph_policies.c) ---- */

/*
 * The timeout option at @p idx (nil: none; seconds: a run timeout; a table
 * {run_timeout, idle_timeout, refresh_on}) into @p out; raises naming @p what.
 */
void sst__lua_read_timeout(lua_State *L, int idx, const char *what, sst_timeout_policy *out);
/* Installs, on the node's Lua thread @p co, the hook that stops it when its time runs out. */
void sst__lua_watch_timeout(lua_State *co, sst_node_ctx *ctx);

/* ---- options and config tables (config.c) ---- */

/* Raises "WHAT: unknown option 'k'" for a key of the table at @p idx not in @p known (NULL-ended).
 */
void sst__lua_check_options(lua_State *L, int idx, const char *const *known, const char *what);
/* The strings of the list at @p idx in a scratch userdata pushed on the stack (raises naming
 * @p what for a non-string item; the strings stay alive in the list). */
const char **sst__lua_string_list(lua_State *L, int idx, size_t *n, const char *what);
/*
 * The interrupt list @p key of the options at @p t (compile's, an invoke's):
 * NULL when absent, "*" (SST_ALL_NODES) or a list of names; leaves its
 * scratch on the stack; @p who prefixes errors ("compile").
 */
const char *const *sst__lua_interrupt_list(lua_State *L, int t, const char *key, const char *who,
                                           size_t *n);
/* "sync" | "async" | "exit" at @p idx, or @p def for nil; raises naming @p what otherwise. */
sst_durability sst__lua_durability(lua_State *L, int idx, sst_durability def, const char *what);
/* config.configurable[key] or config[key] as a string (alive with the table), or NULL. */
const char *sst__lua_config_string(lua_State *L, int cfg, const char *key);
/* The absolute index of the config table at @p idx, or 0 for none or nil. */
int sst__lua_config_index(lua_State *L, int idx);

/*
 * An in-memory or durable graph thread shared by the Lua objects that use
 * it (the app's table of threads, a running stream), so that a stream
 * abandoned to the collector never outlives its thread. Used only by the
 * thread that owns the Lua state.
 */
typedef struct sst__lua_thread {
    sst_graph_thread *t;
    unsigned refs;
    bool durable; /* opened on the saver for one call */
} sst__lua_thread;
void sst__lua_thread_unref(sst__lua_thread *lt);
/*
 * The thread of config @p cfg for app @p a at @p app_idx: pushes the
 * superstep.thread userdata holding it (an in-memory thread kept by the app,
 * or a durable one opened on the saver) and returns it (borrowed), or pushes
 * nil and returns NULL when the config names no thread id. With @p with_ns, a
 * durable thread is opened at the config's checkpoint_ns (a subgraph's own).
 */
sst__lua_thread *sst__lua_thread_for(lua_State *L, int app_idx, sst__lua_app *a, int cfg,
                                     bool with_ns);
/*
 * Drops the reference of the superstep.thread userdata at @p idx now (with
 * @p durable_only, only that of a durable thread: it is closed at once).
 */
void sst__lua_thread_drop(lua_State *L, int idx, bool durable_only);

/*
 * One prepared invoke or stream: the options with the values they point to
 * (owned), and the thread. Lives inside a userdata whose user value 1 is the
 * app (kept alive while the call runs).
 */
typedef struct sst__lua_call {
    sst_invoke_opts o;       /* points into the owned values below */
    sst__lua_app *app;       /* borrowed: user value 1 of the holder */
    sst_value *input;        /* owned; NULL: none */
    sst_value *values[5];    /* owned: resume, update, goto, context, config */
    char *checkpoint_id;     /* owned */
    sst__lua_thread *thread; /* one reference; NULL: a run without a thread */
    char **interrupts[2];    /* owned copies: the call's interrupt_before, interrupt_after */
} sst__lua_call;

/*
 * Fills @p c, inside the userdata at @p holder, from the arguments (app,
 * input, config) at 1, 2, 3 and the options table at @p opts (0: none):
 * @p what ("invoke" or "stream") names the call in errors, and @p known
 * lists the options it takes. Raises on a bad argument; the holder's __gc
 * must call sst__lua_call_clear.
 */
void sst__lua_call_prepare(lua_State *L, sst__lua_call *c, int holder, int opts,
                           const char *const *known, const char *what);
/* Drops the thread now (it is free for the next run). */
void sst__lua_call_release(sst__lua_call *c);
void sst__lua_call_clear(sst__lua_call *c);
/*
 * Raises the error of a failed run (an error object {code, message, node}),
 * or of @p err when @p r is NULL; frees @p r.
 */
int sst__lua_raise_run_error(lua_State *L, sst_graph_result *r, const sst_error *err);

/* ---- store (store.c) ---- */

#define SST_LUA_STORE     "superstep.store"
#define SST_LUA_EMBEDDER  "superstep.embedder"
#define SST_LUA_EMBEDDERS "superstep.embedders" /* registry: number -> Lua embedder userdata */

/* superstep.InMemoryStore, SqliteStore and embeddings. */
void sst__lua_open_stores(lua_State *L);
/* The store of the store userdata at @p idx (borrowed), or NULL for anything else. */
sst_store *sst__lua_store(lua_State *L, int idx);
/* Pushes a store userdata holding its own reference to @p st (ctx.store). */
void sst__lua_push_store(lua_State *L, sst_store *st);

/* ---- running (run.c, stream.c) ---- */

int sst__lua_app_invoke(lua_State *L);
int sst__lua_app_stream(lua_State *L);
void sst__lua_open_stream(lua_State *L);
/*
 * A root state (sst_graph_set_root, run.c): the input at index 2 of a call
 * on a root graph becomes {SST_ROOT: value} (a Command is left as is).
 */
void sst__lua_root_input(lua_State *L, sst__lua_call *c);
/* Pushes a state: the root value itself for a root graph (nil when unset), else the table. */
void sst__lua_push_state(lua_State *L, const sst_compiled_graph *cg, const sst_value *state);

#endif
