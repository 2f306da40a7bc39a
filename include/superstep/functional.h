/* SPDX-License-Identifier: MIT */
/*
 * The functional API (the graph layer; LangGraph's @entrypoint and @task;
 * docs/functional.md).
 *
 * An entrypoint is a workflow written as one function. sst_graph_set_entrypoint
 * turns an empty sst_graph into a graph with one node, the entrypoint, so the
 * compiled graph has every call a compiled graph has: invoke, stream,
 * get_state, history, update_state, serving. Its state is a root state
 * (SST_ROOT): the entrypoint's last return value. Input and snapshots are
 * {SST_ROOT: value} as for any root graph.
 *
 * Inside the entrypoint (and inside tasks) work is split into tasks:
 * sst_node_submit starts a task function with an input and returns a future;
 * tasks submitted before one is joined run in parallel on the engine's
 * workers (sst_invoke_opts.engine). Each finished task's result is written
 * to the checkpointer as a pending write of the running superstep, so when
 * the entrypoint runs again (after an interrupt, a failure or a crash) a
 * task submitted again with the same position returns the stored result
 * without running: side effects happen once.
 *
 * Task ids are deterministic: the caller's task id, the task's name and its
 * position among the caller's submissions. A workflow must submit its tasks
 * in the same order each time it runs (LangGraph's rule too).
 *
 * Threads: a node context, and the futures submitted through it, are used
 * only by the thread running that entrypoint or task (as any node context).
 * Task functions run on any worker thread, concurrently with each other and
 * with their caller: what they share must be thread-safe. Building and
 * compiling an entrypoint graph follow graph.h's rules.
 */
#ifndef SUPERSTEP_FUNCTIONAL_H
#define SUPERSTEP_FUNCTIONAL_H

#include "superstep/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The hidden field holding the entrypoint's input during its run. */
#define SST_ENTRY_INPUT "__input__"
/** The hidden field holding what the entrypoint saved (ctx.previous next time). */
#define SST_ENTRY_PREVIOUS "__previous__"

/**
 * Makes @p g, a graph with nothing declared, an entrypoint graph: a root
 * state, and one node @p name running @p fn between START and END.
 * In @p fn: sst_entrypoint_input is the invoke's input, sst_entrypoint_previous
 * what the last run on the thread saved; return a value with sst_node_return
 * (or sst_node_return_final). @p opts: the node's options (retry, cache,
 * timeout...), NULL for the defaults.
 * @return SST_OK; SST_EINVAL (fields, nodes or a root declared before; bad
 *         name), SST_ENOMEM.
 */
SST_NODISCARD SST_API sst_code sst_graph_set_entrypoint(sst_graph *g, const char *name,
                                                        sst_node_fn fn, void *user_data,
                                                        const sst_node_opts *opts, sst_error *err);

/** True when @p cg was made with sst_graph_set_entrypoint. */
SST_API bool sst_compiled_graph_is_entrypoint(const sst_compiled_graph *cg);

/** The entrypoint's input (borrowed; null when the run had none). NULL outside an entrypoint. */
SST_API const sst_value *sst_entrypoint_input(const sst_node_ctx *ctx);
/** What the last run on the thread saved (borrowed; null for the first run). */
SST_API const sst_value *sst_entrypoint_previous(const sst_node_ctx *ctx);

/**
 * Sets the result of the running entrypoint or task (takes @p value; a
 * second call replaces the first). An entrypoint's result becomes the state
 * and, unless sst_node_return_final says otherwise, what the next run sees
 * as previous. Without a call the result is null.
 * @return SST_OK; SST_EINVAL outside an entrypoint or task, or a NULL value.
 */
SST_NODISCARD SST_API sst_code sst_node_return(sst_node_ctx *ctx, sst_value *value, sst_error *err);
/**
 * LangGraph's entrypoint.final(value=, save=): returns @p value and saves
 * @p save (both taken) as the next run's previous. Entrypoints only.
 */
SST_NODISCARD SST_API sst_code sst_node_return_final(sst_node_ctx *ctx, sst_value *value,
                                                     sst_value *save, sst_error *err);

/* ---- tasks ---- */

/**
 * A task function: a node function (sst_node_fn) run with a context of its
 * own, whose sst_node_input is the task's input and sst_node_name the task's
 * name. It returns its result with sst_node_return, may interrupt
 * (sst_node_interrupt), emit custom events, stream messages, submit tasks of
 * its own and run subgraphs; it has no state to write (sst_node_update fails).
 */
typedef struct sst_task_spec {
    const char *name;       /* shown in streams and ids; copied at submission */
    sst_node_fn fn;         /* required */
    void *user_data;        /* passed to fn */
    sst_retry_policy retry; /* default: one attempt */
    /* LangGraph's CachePolicy on a task: with a cache on the graph
     * (sst_compile_opts.cache), an input seen before returns the stored
     * result without running. Default off. */
    sst_node_cache_policy cache;
    /* LangGraph's timeout on a task: one attempt past it fails with SST_ETIMEOUT (retried
     * under @c retry as any error). Default none. */
    sst_timeout_policy timeout;
    /* The task runs only on the thread that joins it (its function lives in
     * that thread's interpreter): no parallelism, same results. Default false. */
    bool pinned;
} sst_task_spec;

/** Fills @p s: @p name, @p fn, @p user_data, one attempt, no cache, not pinned. */
SST_API void sst_task_spec_init(sst_task_spec *s, const char *name, sst_node_fn fn,
                                void *user_data);

typedef struct sst_future sst_future;

/**
 * Submits task @p spec with @p input (taken; NULL: null) from the running
 * entrypoint or task. It runs on a free worker, or on the thread that joins
 * it first. The future belongs to @p ctx: valid until the calling function
 * returns, which first waits for every task it submitted.
 * @return the future; NULL with SST_EINVAL (outside a node, bad spec) or
 *         SST_ENOMEM.
 */
SST_NODISCARD SST_API sst_future *sst_node_submit(sst_node_ctx *ctx, const sst_task_spec *spec,
                                                  sst_value *input, sst_error *err);

/**
 * Waits for the task (running it here if no worker has taken it) and gives
 * its result (borrowed: valid as long as the future).
 * @return the result; NULL with the task's error (its code and message,
 *         prefixed with the task's name), or SST_EINTERRUPT when the task
 *         interrupted: the caller then returns SST_EINTERRUPT from its own
 *         function, and the run stops with the task's interrupt.
 */
SST_API const sst_value *sst_future_result(sst_future *f, sst_error *err);

/** The task's id (32 hex characters, borrowed). */
SST_API const char *sst_future_id(const sst_future *f);
/** True when the result came from an earlier run's pending write (the task did not run). */
SST_API bool sst_future_replayed(const sst_future *f);

/**
 * Drops the cached results of task @p name from the cache of @p cg
 * (LangGraph's task.clear_cache(cache)).
 */
SST_NODISCARD SST_API sst_code sst_compiled_graph_clear_task_cache(const sst_compiled_graph *cg,
                                                                   const char *name,
                                                                   sst_error *err);

#ifdef __cplusplus
}
#endif
#endif /* SUPERSTEP_FUNCTIONAL_H */
