/* SPDX-License-Identifier: MIT */
/**
 * @file lua.h
 * @brief Lua scripting: the `superstep` Lua module and scripts as graphs.
 *
 * A script builds a graph with LangGraph's names (docs/lua.md) and returns
 * it, compiled or not. Lua nodes run on worker threads in parallel: the
 * calling thread uses the state the script was loaded in, every other
 * worker thread gets its own lua_State, made by running the same script
 * once more. A script must therefore build the same graphs, in the same
 * order, each time it runs; `superstep.worker` is true while a worker state
 * runs it (guard top-level runs with `if not superstep.worker then`).
 *
 * Memory: each Lua state superstep creates (the loading one and one per
 * worker) may hold up to a limit, SST_LUA_MEMORY_LIMIT_DEFAULT unless the
 * host (sst_lua_opts) or the script (compile{memory_limit = bytes}) sets
 * another. A node that would pass it fails with SST_ELIMIT, "memory limit of
 * N bytes exceeded", which the default retry policy does not retry.
 *
 * Thread-safety: a script's graph may be invoked from the thread that
 * loaded it, one invoke at a time.
 */
#ifndef SUPERSTEP_LUA_H
#define SUPERSTEP_LUA_H

#include "superstep/agent.h"
#include "superstep/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

struct lua_State;

/**
 * The `superstep` module for an embedding host: `luaL_requiref(L,
 * "superstep", luaopen_superstep, 1)`. Without a script path (see
 * sst_lua_script_load) such a state runs nodes on its own thread only.
 */
SST_API int luaopen_superstep(struct lua_State *L);

/** A loaded script: its Lua state and the graph it returned. */
typedef struct sst_lua_script sst_lua_script;

/** The memory limit of each Lua state when nobody sets one: 1 GiB. */
#define SST_LUA_MEMORY_LIMIT_DEFAULT ((size_t)1 << 30)

/** Options of sst_lua_script_load_opts and sst_lua_tools_load_opts; fill with sst_lua_opts_init. */
typedef struct sst_lua_opts {
    /*
     * The most bytes each Lua state may hold: the state that loads the script
     * and, for a script run on several workers, each worker's own state (each
     * counted on its own). 0, the default: SST_LUA_MEMORY_LIMIT_DEFAULT, which
     * the script's compile{memory_limit = bytes} changes. Any other value is
     * the limit, and compile{memory_limit} is ignored (the CLI's
     * --memory-limit). SIZE_MAX: no limit.
     */
    size_t memory_limit;
} sst_lua_opts;

SST_API void sst_lua_opts_init(sst_lua_opts *o);

/**
 * Runs the script at @p path in a new Lua state with the `superstep`
 * module loaded (also as the global `superstep`). The script must return a
 * StateGraph (compiled here with default options) or a compiled app.
 * @return new script; NULL with SST_EIO (missing or unreadable file),
 *         SST_EPARSE (Lua syntax error, with the line), SST_EINVAL (the
 *         script failed: the message has the Lua traceback; or it returned
 *         something else), SST_ELIMIT (it passed the memory limit), SST_ENOMEM.
 */
SST_NODISCARD SST_API sst_lua_script *sst_lua_script_load(const char *path, sst_error *err);
/** sst_lua_script_load with options; @p opts NULL for the defaults. */
SST_NODISCARD SST_API sst_lua_script *
sst_lua_script_load_opts(const char *path, const sst_lua_opts *opts, sst_error *err);
SST_API void sst_lua_script_free(sst_lua_script *s);

/** The compiled graph (borrowed; lives as long as the script). */
SST_API const sst_compiled_graph *sst_lua_script_graph(const sst_lua_script *s);
/** The checkpointer given to compile{checkpointer=...} (borrowed), or NULL. */
SST_API sst_checkpointer *sst_lua_script_checkpointer(const sst_lua_script *s);
/** Fills @p o's recursion limit and durability from compile{...}. */
SST_API void sst_lua_script_invoke_opts(const sst_lua_script *s, sst_invoke_opts *o);
/** compile{workers=N} (default 1). */
SST_API unsigned sst_lua_script_workers(const sst_lua_script *s);
/**
 * The memory limit of the script's loading state, in bytes: sst_lua_opts's,
 * else the last compile{memory_limit = N} the script ran, else
 * SST_LUA_MEMORY_LIMIT_DEFAULT.
 */
SST_API size_t sst_lua_script_memory_limit(const sst_lua_script *s);

/** Tools written in Lua, for an agent (superstep/agent.h). */
typedef struct sst_lua_tools sst_lua_tools;

/**
 * Runs the script at @p path, which returns a list of tools:
 * `{ {name = "...", description = "...", parameters = {type = "object", ...},
 * fn = function(args) return result end}, ... }`. A tool's result (a
 * string, or any JSON-compatible value) is what the model reads; a Lua
 * error becomes "error: ..." for the model. Calls into the script are
 * serialized (one Lua state).
 * @return new tools; NULL with SST_EIO, SST_EPARSE, SST_EINVAL (naming the tool
 *         and the problem), SST_ENOMEM.
 */
SST_NODISCARD SST_API sst_lua_tools *sst_lua_tools_load(const char *path, sst_error *err);
/**
 * sst_lua_tools_load with options (@p opts NULL for the defaults): the tools'
 * state may hold up to opts->memory_limit bytes; a call that would pass it
 * fails with "memory limit of N bytes exceeded" (an error the model reads).
 */
SST_NODISCARD SST_API sst_lua_tools *
sst_lua_tools_load_opts(const char *path, const sst_lua_opts *opts, sst_error *err);
SST_API void sst_lua_tools_free(sst_lua_tools *t);
/** The toolset (borrowed; lives as long as @p t). */
SST_API const struct sst_toolset *sst_lua_tools_set(const sst_lua_tools *t);

#ifdef __cplusplus
}
#endif
#endif /* SUPERSTEP_LUA_H */
