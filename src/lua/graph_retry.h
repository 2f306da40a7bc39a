/* SPDX-License-Identifier: MIT */
/*
 * Retry options of StateGraph nodes and of set_node_defaults (graph_retry.c),
 * shared with the builder (graph.c).
 */
#ifndef SUPERSTEP_LUA_GRAPH_RETRY_H
#define SUPERSTEP_LUA_GRAPH_RETRY_H

#include "lua_int.h"

/*
 * A retry_on: a Lua function (graphs[graph].retry_on[key] in each state) or
 * a list of error codes. Called on the thread running the engine.
 */
typedef struct sst__lua_retry_cb {
    sst__lua_rt *rt;
    int graph;
    char *key;       /* owned: the node name, "name#i" in a list, "__defaults__#i" */
    sst_code *codes; /* owned: the codes retried, or NULL: call the function */
    size_t n_codes;
} sst__lua_retry_cb;

/* The retry_on callbacks of one graph; they must outlive its compiled graphs. */
typedef struct sst__lua_retries {
    sst__lua_retry_cb **list; /* owned */
    size_t n;
} sst__lua_retries;

void sst__lua_retries_free(sst__lua_retries *r);

/*
 * The callable at @p idx as a function: a function as is, a table or
 * userdata with __call wrapped in a closure. Replaces the value at @p idx;
 * raises for anything else, naming @p what.
 */
void sst__lua_check_callable(lua_State *L, int idx, const char *what);

/*
 * Reads the RetryPolicy fields of the table at @p idx (max_attempts,
 * initial_interval, backoff_factor, max_interval, jitter) into @p p, over
 * what it holds; the one reader of node, default and task retries. Raises
 * SST_EINVAL naming @p what (a node, "task") and the field: max_attempts a
 * whole number from 1 to 1000000, the others numbers from 0 to 1e9. Other
 * keys are the caller's to check.
 */
void sst__lua_read_retry_fields(lua_State *L, int idx, const char *what, sst_retry_policy *p);

/*
 * Reads the retry option at @p idx for @p name (a node, or "set_node_defaults"):
 * nil (none: *n = 0), false (no retry), true (the default policy), a table
 * of fields, or a list of such tables. Fills *policies (a scratch userdata
 * left on the stack) and *n, then pushes a table {key = retry_on function}
 * to store with sst__lua_store_retry_on once the node is accepted.
 * @p key_base names the callbacks (the node name, or "__defaults__").
 */
void sst__lua_read_retry(lua_State *L, sst__lua_retries *set, int graph, int idx, const char *name,
                         const char *key_base, sst_retry_policy **policies, size_t *n);

/* Stores the functions of the table at @p idx in graphs[graph].retry_on. */
void sst__lua_store_retry_on(lua_State *L, int graph, int idx);

#endif /* SUPERSTEP_LUA_GRAPH_RETRY_H */
