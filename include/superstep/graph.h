/* SPDX-License-Identifier: MIT */
/*
 * The graph layer: LangGraph's StateGraph on top of the Pregel engine
 * (DESIGN.md semantics 2, 5, 7, 8 and 10; docs/graph.md).
 *
 * Build a graph (state fields, nodes, edges, joins, conditional edges),
 * compile it into an immutable sst_compiled_graph, then invoke it. Nodes read
 * the state of the previous superstep and return a partial update, nothing,
 * or a Command (update + goto). Routers pick the next nodes; Send runs one
 * task per payload. Runs end as completed, interrupted or error; an
 * interrupted run resumes through its thread.
 *
 * Names: "__start__" (SST_START) and "__end__" (SST_END) are reserved, and
 * state fields whose names start with "__" belong to the engine (they are
 * hidden from results and streams).
 *
 * Threads: a builder is used by one thread at a time. A compiled graph is
 * immutable: any number of threads may invoke it at once. A thread handle
 * (sst_graph_thread) is used by one invoke at a time; a second concurrent
 * invoke on it fails with SST_EBUSY. Node and router functions may run on
 * worker threads, several at once.
 */
#ifndef SUPERSTEP_GRAPH_H
#define SUPERSTEP_GRAPH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "superstep/checkpoint.h"
#include "superstep/error.h"
#include "superstep/export.h"
#include "superstep/pregel.h"
#include "superstep/reducer.h"
#include "superstep/store.h"
#include "superstep/value.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SST_START "__start__"
#define SST_END   "__end__"

typedef struct sst_graph sst_graph;
typedef struct sst_compiled_graph sst_compiled_graph;
typedef struct sst_node_ctx sst_node_ctx;
/** Receives spans of runs, supersteps and tasks (defined with sst_invoke_opts). */
typedef struct sst_tracer sst_tracer;
typedef struct sst_graph_thread sst_graph_thread;
typedef struct sst_graph_result sst_graph_result;

/* ---- building --------------------------------------------------------- */

/** @return a new empty graph (no fields, no nodes); NULL on SST_ENOMEM. */
SST_NODISCARD SST_API sst_graph *sst_graph_new(sst_error *err);
SST_API void sst_graph_free(sst_graph *g);

/**
 * Declares a state field with its reducer and default (fields not declared
 * use `replace`).
 * @param default_value takes; NULL for none
 * @return SST_OK; SST_EINVAL (reserved "__" name, declared twice), SST_ENOMEM.
 */
SST_NODISCARD SST_API sst_code sst_graph_add_field(sst_graph *g, const char *field,
                                                   const sst_reducer *r, sst_value *default_value,
                                                   sst_error *err);

/** The graph's schema (borrowed), e.g. to set a whole-state reducer. */
SST_API sst_schema *sst_graph_schema(sst_graph *g);

/** The field that holds a root state (sst_graph_set_root). */
#define SST_ROOT "__root__"

/**
 * A root state (LangGraph's StateGraph(Annotated[list, operator.add])): the
 * whole state is one value of any type, merged by @p r, held in the field
 * SST_ROOT. The input, the result state, snapshots and stream chunks are
 * objects {SST_ROOT: value} (the one "__" field shown); nodes read
 * sst_object_get(sst_node_state(ctx), SST_ROOT) and write it with
 * sst_node_update / sst_node_add_write on SST_ROOT.
 * @param r NULL: replace
 * @param default_value takes; NULL for none
 * @return SST_OK; SST_EINVAL (fields were declared, or a root was set before), SST_ENOMEM.
 */
SST_NODISCARD SST_API sst_code sst_graph_set_root(sst_graph *g, const sst_reducer *r,
                                                  sst_value *default_value, sst_error *err);

/**
 * A node: read the state with sst_node_state, write with sst_node_update,
 * route with sst_node_goto (Command goto). Return SST_OK; an error code (use
 * sst_node_fail for a message) fails the task, subject to the node's retry
 * policy; return SST_EINTERRUPT after sst_node_interrupt asked for input.
 */
typedef sst_code (*sst_node_fn)(sst_node_ctx *ctx, void *user_data);

/**
 * A node's cache key from its input (borrowed: its Send argument, else its
 * view of the state): a new string value, or NULL with @p err filled (the
 * node then runs uncached).
 */
typedef sst_value *(*sst_node_cache_key_fn)(const sst_value *input, void *user_data,
                                            sst_error *err);

/**
 * LangGraph's CachePolicy(key_func=, ttl=): with a cache given to the
 * compiled graph (sst_compile_opts.cache), a task of the node whose key was
 * seen before skips the node and replays the writes it made then (updates,
 * goto, Sends), shown with "__metadata__": {"cached": true} in the updates
 * stream. Not for error handlers, nor tasks resumed with resume values.
 */
typedef struct sst_node_cache_policy {
    bool enabled;
    double ttl_s;              /* seconds an entry lives; 0: as long as the cache */
    sst_node_cache_key_fn key; /* NULL: a 64-bit hash of the input */
    void *key_user_data;
} sst_node_cache_policy;

/** Node options; fill with sst_node_opts_init. */
typedef struct sst_node_opts {
    /*
     * default: one attempt, no retry (LangGraph's default). For LangGraph's
     * RetryPolicy() (3 attempts, 0.5 s, x2, 128 s cap, jitter) call
     * sst_retry_policy_init(&opts.retry) or assign SST_RETRY_POLICY_DEFAULT.
     */
    sst_retry_policy retry;
    const sst_value
        *metadata; /* borrowed (copied): any JSON, shown by sst_compiled_graph_node_metadata */
    /*
     * Nodes a goto of this node may reach: checked by sst_graph_compile and
     * drawn. Optional: a node reached only through goto compiles with a warning.
     */
    const char *const *ends;
    size_t n_ends;
    /*
     * LangGraph's defer=True: once triggered, the node waits until no other
     * task is left to run (the other branches are done), then runs.
     */
    bool defer;
    /*
     * LangGraph's add_node(input_schema=...): the fields the node sees
     * (copied); sst_node_state gives it a view of the state with only these
     * (absent ones left out). NULL / 0: the whole state.
     */
    const char *const *input_fields;
    size_t n_input_fields;
    /*
     * LangGraph's retry_policy=(p1, p2, ...): a list of policies (copied); a
     * failure is retried under the first whose retry_on (or retry_on_error)
     * matches, none matching: not retried. Overrides `retry` when n > 0.
     * The engine keeps one policy per node: the attempts are those of the
     * largest max_attempts in the list and the delays those of the first
     * policy (see docs/graph.md).
     */
    const sst_retry_policy *retry_policies;
    size_t n_retry_policies;
    /*
     * LangGraph's timeout=TimeoutPolicy(run_timeout=, idle_timeout=): how long
     * one attempt may take (see sst_timeout_policy in pregel.h). A node that
     * runs out of time fails with SST_ETIMEOUT (retried under its policy);
     * long-running C code asks sst_node_cancelled. Zeroes: the graph's default
     * (sst_graph_set_default_timeout), else none.
     */
    sst_timeout_policy timeout;
    /*
     * LangGraph's error_handler=: run in the same superstep when this node
     * fails for good (its retries spent; interrupts are not failures). The
     * handler is node "__error_handler__<name>": it sees the same state view
     * and Send input, sst_node_error tells what failed, and its updates and
     * goto are committed in the failed node's place. Its own failure fails
     * the run. NULL: the graph's default handler (set_node_defaults), if any.
     */
    sst_node_fn error_handler;
    void *error_handler_user_data;
    /* Cache the node's writes; not enabled: the graph's default (set_node_defaults), if any. */
    sst_node_cache_policy cache_policy;
} sst_node_opts;

SST_API void sst_node_opts_init(sst_node_opts *o);

/**
 * LangGraph's set_node_defaults(retry_policy=...): the retry policy of every
 * node, added before or after this call, whose options leave `retry` as
 * sst_node_opts_init set it (one attempt, no retry_on, no list). @p policies
 * (copied) is one policy or a list as sst_node_opts.retry_policies; n == 0
 * clears the default.
 * @return SST_OK; SST_EINVAL (NULL graph or list, max_attempts 0), SST_ENOMEM.
 */
SST_NODISCARD SST_API sst_code sst_graph_set_default_retry(sst_graph *g,
                                                           const sst_retry_policy *policies,
                                                           size_t n, sst_error *err);

/**
 * LangGraph's set_node_defaults(timeout=...): the timeout of every node,
 * error handlers included, whose options leave `timeout` zero. NULL or
 * zeroes clear it.
 * @return SST_OK; SST_EINVAL (NULL graph, a negative timeout).
 */
SST_NODISCARD SST_API sst_code sst_graph_set_default_timeout(sst_graph *g,
                                                             const sst_timeout_policy *timeout,
                                                             sst_error *err);

/**
 * LangGraph's set_node_defaults(cache_policy=...): the cache policy of every
 * node that sets none, error handlers excepted. NULL or not enabled clears it.
 * @return SST_OK; SST_EINVAL (NULL graph, negative ttl).
 */
SST_NODISCARD SST_API sst_code sst_graph_set_default_cache_policy(
    sst_graph *g, const sst_node_cache_policy *policy, sst_error *err);

/**
 * LangGraph's set_node_defaults(error_handler=...): the error handler of
 * every node that has none of its own (error handlers excepted), run as node
 * "__default_error_handler__" with the whole state. NULL clears it.
 * @return SST_OK; SST_EINVAL for a NULL graph.
 */
SST_NODISCARD SST_API sst_code sst_graph_set_default_error_handler(sst_graph *g, sst_node_fn fn,
                                                                   void *user_data, sst_error *err);

/**
 * Adds node @p name (copied).
 * @return SST_OK; SST_EINVAL for a reserved ("__start__", "__end__", "__..."),
 *         empty or duplicate name or a NULL function; SST_ENOMEM.
 */
SST_NODISCARD SST_API sst_code sst_graph_add_node(sst_graph *g, const char *name, sst_node_fn fn,
                                                  void *user_data, const sst_node_opts *opts,
                                                  sst_error *err);

/**
 * An edge: @p to runs in the superstep after @p from (START: the first one;
 * END: nothing). Unknown names are reported by sst_graph_compile.
 */
SST_NODISCARD SST_API sst_code sst_graph_add_edge(sst_graph *g, const char *from, const char *to,
                                                  sst_error *err);

/**
 * A wait-for-all join (LangGraph's add_edge([a, b], c)): @p to runs once after
 * every source has run since its last run, even when they finish in
 * different supersteps. With @p to SST_END, the sources simply end their
 * branches (LangGraph's add_edge([a, b], END)).
 */
SST_NODISCARD SST_API sst_code sst_graph_add_join(sst_graph *g, const char *const *from, size_t n,
                                                  const char *to, sst_error *err);

/** One node of a sequence (sst_graph_add_sequence). */
typedef struct sst_sequence_node {
    const char *name; /* copied */
    sst_node_fn fn;
    void *user_data;
    const sst_node_opts *opts; /* NULL: the defaults */
} sst_sequence_node;

/**
 * LangGraph's add_sequence: adds the @p n nodes and an edge from each to the
 * next, in order (no edge from START or to END).
 * @return SST_OK; SST_EINVAL (n == 0, or a node sst_graph_add_node refuses,
 *         named), SST_ENOMEM. On error the graph is unchanged.
 */
SST_NODISCARD SST_API sst_code sst_graph_add_sequence(sst_graph *g, const sst_sequence_node *nodes,
                                                      size_t n, sst_error *err);

/**
 * Input and output schemas (LangGraph's StateGraph(input_schema=...,
 * output_schema=...)): the state fields an invoke accepts as input and the
 * ones it returns. The names are copied; n == 0 clears the declaration (all
 * fields). Fields need not be declared with sst_graph_add_field.
 * @return SST_OK; SST_EINVAL (NULL or reserved "__" name), SST_ENOMEM.
 */
SST_NODISCARD SST_API sst_code sst_graph_set_input_fields(sst_graph *g, const char *const *fields,
                                                          size_t n, sst_error *err);
/**
 * Untracked fields (LangGraph's UntrackedValue): they live in the state
 * while a run goes on (nodes, routers, the result and the streams see them)
 * but are never written to checkpoints, so get_state, the history and the
 * next invoke do not see them. n == 0 clears the declaration.
 * @return as sst_graph_set_input_fields.
 */
SST_NODISCARD SST_API sst_code sst_graph_set_untracked_fields(sst_graph *g,
                                                              const char *const *fields, size_t n,
                                                              sst_error *err);
SST_NODISCARD SST_API sst_code sst_graph_set_output_fields(sst_graph *g, const char *const *fields,
                                                           size_t n, sst_error *err);

/**
 * A router: picks where to go from the state (borrowed: the committed state
 * plus the node's own update). Return a node name or SST_END (a string), a
 * list of them, a Send (sst_send_new) or a list mixing names and Sends;
 * with a path map, return its keys instead of names.
 * @return new value; NULL with @p err filled fails the node.
 */
typedef sst_value *(*sst_router_fn)(const sst_value *state, void *user_data, sst_error *err);

/**
 * Conditional edges from @p from (a node or SST_START).
 * @param path_map borrowed (copied), NULL for none: an object mapping the
 *        router's results to node names, or a list of the names it may return.
 */
SST_NODISCARD SST_API sst_code sst_graph_add_conditional_edges(sst_graph *g, const char *from,
                                                               sst_router_fn router,
                                                               void *user_data,
                                                               const sst_value *path_map,
                                                               sst_error *err);

/**
 * Send(node, arg): a router or goto result that runs @p node once with
 * @p arg (takes) as its input, in parallel with other Sends.
 * @return new value {"__send__": node, "arg": arg}; NULL on SST_EINVAL/ENOMEM.
 */
SST_NODISCARD SST_API sst_value *sst_send_new(const char *node, sst_value *arg, sst_error *err);

/**
 * Send(node, arg, timeout=...): as sst_send_new, with a timeout (copied) for
 * the task it makes, in place of the node's. The value gets a "timeout":
 * {"run": s, "idle": s, "heartbeat"?: true} member.
 */
SST_NODISCARD SST_API sst_value *sst_send_new_timeout(const char *node, sst_value *arg,
                                                      const sst_timeout_policy *timeout,
                                                      sst_error *err);

/* ---- subgraphs --------------------------------------------------------- */

/**
 * A compiled graph as node @p name (LangGraph's add_node(name, subgraph);
 * docs/subgraphs.md): the node runs @p child with the parent's state
 * restricted to the child's fields (its input fields when declared, else
 * its declared fields, else the whole state) and writes the child's
 * resulting state back, restricted to the parent's declared fields (all
 * when it declares none), through the parent's reducers. The child
 * checkpoints in the parent's checkpointer under the namespace
 * "name:task_id" (nested ones joined with "|"), as its compile options
 * say (sst_compile_opts.checkpoints); its interrupts surface at the root
 * invoke and a resume continues it from its own checkpoint; a
 * Command{graph = PARENT} of its nodes (sst_node_parent_command) routes
 * in the parent.
 * @param child borrowed: must outlive @p g and every graph compiled from it
 * @return as sst_graph_add_node; SST_EINVAL for a NULL child.
 */
SST_NODISCARD SST_API sst_code sst_graph_add_subgraph(sst_graph *g, const char *name,
                                                      const sst_compiled_graph *child,
                                                      const sst_node_opts *opts, sst_error *err);

/** How a graph keeps its checkpoints when it runs as a subgraph (sst_compile_opts.checkpoints). */
typedef enum sst_subgraph_checkpoints {
    /* LangGraph's checkpointer=None: the parent's checkpointer under "node:task_id". Each run
     * of the node starts afresh; an interrupted (or crashed) one continues where it stopped. */
    SST_SUBGRAPH_PER_TASK = 0,
    /* checkpointer=True: under "node" alone, so the state stays across the parent's invokes
     * (per-agent memory). */
    SST_SUBGRAPH_KEEP,
    /* checkpointer=False: no checkpoints; each run of the node starts afresh. */
    SST_SUBGRAPH_NONE
} sst_subgraph_checkpoints;

/* ---- compiling -------------------------------------------------------- */

/** A single entry "*" in an interrupt list (LangGraph's interrupt_before="*"): every node. */
#define SST_ALL_NODES "*"

/** Compile options; fill with sst_compile_opts_init. */
typedef struct sst_compile_opts {
    const char *const *interrupt_before; /* stop before a superstep that runs one of these;
                                            SST_ALL_NODES: any node */
    size_t n_before;
    const char *const *interrupt_after; /* stop after a superstep that ran one of these;
                                           SST_ALL_NODES: any node */
    size_t n_after;
    sst_subgraph_checkpoints checkpoints; /* as a subgraph; default SST_SUBGRAPH_PER_TASK */
    /*
     * LangGraph's graph.step_timeout: seconds a superstep may take, its tasks'
     * retries included; a superstep past it fails the run with SST_ETIMEOUT
     * (not retried, not handled by error handlers). 0: none.
     */
    double step_timeout_s;
    /*
     * LangGraph's compile(cache=...): where nodes with a cache policy keep
     * their writes (the compiled graph holds a reference). NULL: no caching.
     */
    sst_cache *cache;
    /* The graph's part of the cache: namespaces "writes|<cache_ns>|<node>"; NULL: "". Give
     * graphs that share one cache and have nodes of the same name their own. */
    const char *cache_ns;
    /*
     * LangGraph's compile(store=...): the long-term memory store (store.h)
     * the graph's nodes reach with sst_node_store, and its subgraphs' nodes
     * too (the compiled graph holds a reference). NULL: none.
     */
    sst_store *store;
} sst_compile_opts;

SST_API void sst_compile_opts_init(sst_compile_opts *o);

/**
 * LangGraph's graph.clear_cache(nodes=...): drops the cached writes of the
 * @p n nodes named (n == 0: every node) from the graph's cache.
 * @return SST_OK (also without a cache); SST_EINVAL for an unknown node;
 *         the cache's error.
 */
SST_NODISCARD SST_API sst_code sst_compiled_graph_clear_cache(const sst_compiled_graph *cg,
                                                              const char *const *nodes, size_t n,
                                                              sst_error *err);

/**
 * Validates @p g and freezes it. Errors name the culprit: an edge from or to
 * an unknown node, a path map naming an unknown node, no entry point (no
 * edge from START), an unknown node in the interrupt lists. A graph with
 * nodes that no edge, path map or `ends` reaches from START (they may still
 * be reached by a goto), or from which END cannot be reached, compiles with
 * a warning (sst_compiled_graph_warning).
 * @return new compiled graph; NULL with SST_EINVAL or SST_ENOMEM.
 * Thread-safety: the result may be invoked from many threads at once.
 */
SST_NODISCARD SST_API sst_compiled_graph *
sst_graph_compile(const sst_graph *g, const sst_compile_opts *opts, sst_error *err);
SST_API void sst_compiled_graph_free(sst_compiled_graph *cg);

/** The compiled graph node @p node runs as a subgraph (borrowed), or NULL. */
SST_API const sst_compiled_graph *sst_compiled_graph_subgraph(const sst_compiled_graph *cg,
                                                              const char *node);

/**
 * The @p i-th node of @p cg that runs a subgraph given to sst_graph_add_subgraph, counting
 * from 0 in the order the nodes were added (one level of LangGraph's get_subgraphs()): call
 * it with i = 0, 1, ... until it answers NULL to list them. A graph that a node's function
 * runs (sst_node_run_subgraph) is not listed, as LangGraph lists only declared subgraphs.
 * @param cg NULL: it has none
 * @param name OUT, optional (NULL: not wanted): the node's name, borrowed from @p cg; left
 *        unchanged when the answer is NULL
 * @return the subgraph (borrowed: valid while @p cg lives), or NULL when @p cg has @p i or
 *         fewer subgraph nodes.
 */
SST_API const sst_compiled_graph *sst_compiled_graph_subgraph_at(const sst_compiled_graph *cg,
                                                                 size_t i, const char **name);

/** True when the graph has a root state (sst_graph_set_root). */
SST_API bool sst_compiled_graph_has_root(const sst_compiled_graph *cg);

SST_API size_t sst_compiled_graph_warning_count(const sst_compiled_graph *cg);
/** Warning @p i (borrowed), or NULL. */
SST_API const char *sst_compiled_graph_warning(const sst_compiled_graph *cg, size_t i);
/**
 * The declared input / output fields (sst_graph_set_input_fields): a borrowed
 * array of names, or NULL when none were declared (every field).
 */
SST_API const sst_value *sst_compiled_graph_input_fields(const sst_compiled_graph *cg);
SST_API const sst_value *sst_compiled_graph_output_fields(const sst_compiled_graph *cg);
/**
 * The names of the state's fields (the schema's, in its order; hidden fields
 * left out). @return new array; NULL on SST_EINVAL or SST_ENOMEM.
 */
SST_NODISCARD SST_API sst_value *sst_compiled_graph_state_fields(const sst_compiled_graph *cg,
                                                                 sst_error *err);
/**
 * The compiled graph's state schema (borrowed, lives as long as @p cg): each field's
 * reducer (sst_schema_field_reducer) and default (sst_schema_initial_state), as the
 * server's GET /assistants/{id}/schemas types them. NULL for a NULL @p cg.
 */
SST_API const sst_schema *sst_compiled_graph_schema(const sst_compiled_graph *cg);
/** A node's metadata (borrowed; null when none), or NULL for an unknown node. */
SST_API const sst_value *sst_compiled_graph_node_metadata(const sst_compiled_graph *cg,
                                                          const char *node);

/**
 * The graph as a Mermaid flowchart / a Graphviz digraph: conditional edges
 * dashed (labelled with path map keys), joins drawn as one junction.
 * @return new NUL-terminated text, freed with sst_free; NULL on SST_ENOMEM.
 */
SST_NODISCARD SST_API char *sst_compiled_graph_mermaid(const sst_compiled_graph *cg,
                                                       sst_error *err);
SST_NODISCARD SST_API char *sst_compiled_graph_dot(const sst_compiled_graph *cg, sst_error *err);

/** Every level of nesting (sst_compiled_graph_mermaid_xray). */
#define SST_XRAY_ALL ((unsigned)-1)

/**
 * As sst_compiled_graph_mermaid / sst_compiled_graph_dot with the subgraph
 * nodes drawn expanded, @p xray levels deep (LangGraph's get_graph(xray=...)):
 * 0 draws as the plain functions, SST_XRAY_ALL every level. A subgraph's
 * nodes are named "node:child" (nested with ":"), grouped in a Mermaid
 * subgraph block / a DOT cluster named after the node.
 * @return new NUL-terminated text, freed with sst_free; NULL on SST_ENOMEM.
 */
SST_NODISCARD SST_API char *sst_compiled_graph_mermaid_xray(const sst_compiled_graph *cg,
                                                            unsigned xray, sst_error *err);
/**
 * The graph as data: LangGraph's drawable graph (get_graph(xray=...)) in
 * the shape of its Graph.to_json(), what its server's GET
 * /assistants/{id}/graph answers: {"nodes": [{"id", "type": "runnable",
 * "data": {"id": [...], "name"}, "metadata"}], "edges": [{"source",
 * "target", "data": label, "conditional": true}]}. END has only its id;
 * "metadata" (the node's, with "defer" and "__interrupt" marks), "data" and
 * "conditional" appear only when set. Nodes: START, the nodes in the order
 * added, END when an edge reaches it; edges sorted as LangGraph's dry run
 * gives them (docs/graph.md). Subgraph nodes are replaced by their child's
 * graph, @p xray levels deep (SST_XRAY_ALL: every level), ids prefixed
 * "node:", the child's START and END kept when they are not trivial.
 * @return new object; NULL with SST_EINVAL, SST_ENOMEM.
 */
SST_NODISCARD SST_API sst_value *sst_compiled_graph_json(const sst_compiled_graph *cg,
                                                         unsigned xray, sst_error *err);
/**
 * LangGraph's draw_mermaid() of a graph @p graph (borrowed) as
 * sst_compiled_graph_json gives it: each subgraph's nodes and edges in a
 * Mermaid subgraph block, ids with characters outside [a-zA-Z0-9_-] as
 * "\<hex>", with @p with_styles its front matter, node declarations and
 * class definitions. (sst_compiled_graph_mermaid is superstep's own drawing.)
 * @return new NUL-terminated text, freed with sst_free; NULL with SST_EINVAL
 * (not such a graph, or two subgraph blocks of one name), SST_ENOMEM.
 */
SST_NODISCARD SST_API char *sst_graph_json_mermaid(const sst_value *graph, bool with_styles,
                                                   sst_error *err);
SST_NODISCARD SST_API char *sst_compiled_graph_dot_xray(const sst_compiled_graph *cg, unsigned xray,
                                                        sst_error *err);

/* ---- inside a node ---------------------------------------------------- */

/** The state of the previous superstep (borrowed, shared, never copied). */
SST_API const sst_value *sst_node_state(const sst_node_ctx *ctx);
/** The Send argument (borrowed), or NULL when the node was reached by an edge. */
SST_API const sst_value *sst_node_input(const sst_node_ctx *ctx);
SST_API const char *sst_node_name(const sst_node_ctx *ctx);
/** The superstep (0 = the first after the input) and the attempt (1-based). */
SST_API uint64_t sst_node_step(const sst_node_ctx *ctx);
SST_API unsigned sst_node_attempt(const sst_node_ctx *ctx);
/** The invoke's runtime context (sst_invoke_opts.context, borrowed), or NULL. */
SST_API const sst_value *sst_node_context(const sst_node_ctx *ctx);
/** The invoke's config (sst_invoke_opts.config, borrowed), or NULL. */
SST_API const sst_value *sst_node_config(const sst_node_ctx *ctx);
/**
 * Supersteps this invoke may still run, this one included (LangGraph's
 * RemainingSteps): 1 in the last superstep the recursion limit allows.
 */
SST_API uint64_t sst_node_remaining_steps(const sst_node_ctx *ctx);
/** True in the last superstep the recursion limit allows (LangGraph's IsLastStep). */
SST_API bool sst_node_is_last_step(const sst_node_ctx *ctx);
/*
 * LangGraph's runtime.execution_info. The strings are borrowed, valid while
 * the node runs.
 */
/** The engine's task id (32 hex digits; the same on every attempt of the task). */
SST_API const char *sst_node_task_id(const sst_node_ctx *ctx);
/** When the first attempt of this task started, in seconds since the epoch (retries keep it). */
SST_API double sst_node_first_attempt_time(const sst_node_ctx *ctx);
/** The durable thread's id, else config.configurable.thread_id (a string), else NULL. */
SST_API const char *sst_node_thread_id(const sst_node_ctx *ctx);
/** config.run_id, else config.configurable.run_id (a string), else NULL. */
SST_API const char *sst_node_run_id(const sst_node_ctx *ctx);
/** The checkpoint the task runs from (durable threads), else "". */
SST_API const char *sst_node_checkpoint_id(const sst_node_ctx *ctx);

/** Writes @p value (takes) to @p field of the node's update. */
SST_NODISCARD SST_API sst_code sst_node_update(sst_node_ctx *ctx, const char *field,
                                               sst_value *value, sst_error *err);
/** Writes every member of @p update (takes: an object). */
SST_NODISCARD SST_API sst_code sst_node_update_all(sst_node_ctx *ctx, sst_value *update,
                                                   sst_error *err);

/**
 * Adds one more write of @p value (takes) to @p field, as LangGraph applies
 * each write a node makes: unlike sst_node_update, a field written before in
 * this run keeps its earlier writes and the reducer merges them all in order
 * (stored as a {"$writes": [...]} marker, reducer.h). Wrap @p value with
 * sst_overwrite_new to bypass the reducer.
 */
SST_NODISCARD SST_API sst_code sst_node_add_write(sst_node_ctx *ctx, const char *field,
                                                  sst_value *value, sst_error *err);
/**
 * Adds @p update (takes: an object) as one more update of the node, each
 * member a write as with sst_node_add_write: a node returning a list of
 * updates calls it once per update, in order.
 */
SST_NODISCARD SST_API sst_code sst_node_add_update(sst_node_ctx *ctx, sst_value *update,
                                                   sst_error *err);

/**
 * Command goto: go to @p node (or SST_END) next. Any goto replaces the
 * node's edges and conditional edges for this run of the node (DESIGN.md
 * semantic 5); several gotos run their targets in parallel. An unknown node
 * fails the node with SST_EINVAL.
 */
SST_NODISCARD SST_API sst_code sst_node_goto(sst_node_ctx *ctx, const char *node, sst_error *err);
/** Command goto Send(node, arg): takes @p arg. */
SST_NODISCARD SST_API sst_code sst_node_goto_send(sst_node_ctx *ctx, const char *node,
                                                  sst_value *arg, sst_error *err);

/**
 * interrupt(value): the k-th call in one run of the node returns the k-th
 * resume value (borrowed) once the run is resumed; until then it records
 * @p value (takes) and returns NULL, and the node must return SST_EINTERRUPT.
 * The node then runs again from its start when resumed.
 */
SST_API const sst_value *sst_node_interrupt(sst_node_ctx *ctx, sst_value *value);

/**
 * Streams a piece of a message as it is produced (takes @p event, e.g.
 * {"id": message id, "delta": "tok"}): delivered at once as
 * SST_STREAM_MESSAGES when the invoke asked for that mode, on this node's
 * thread (calls are serialized); dropped otherwise. Returns the stream
 * callback's error, if any.
 */
SST_NODISCARD SST_API sst_code sst_node_stream_message(sst_node_ctx *ctx, sst_value *event,
                                                       sst_error *err);
/** True when the invoke asked for SST_STREAM_MESSAGES. */
SST_API bool sst_node_streams_messages(const sst_node_ctx *ctx);

/**
 * A span under this task's (sst_tracer.start), e.g. a model or tool call; NULL when the
 * invoke is not traced. End it with sst_node_span_end on the same node run.
 */
SST_API void *sst_node_span_start(sst_node_ctx *ctx, const char *kind, const char *name,
                                  const sst_value *attrs);
/** The invoke's tracer (borrowed), or NULL when it is not traced. */
SST_API const sst_tracer *sst_node_tracer(const sst_node_ctx *ctx);
/**
 * The task's span (the parent for spans of its own, or for an invoke the node makes:
 * sst_invoke_opts.trace_parent), or NULL when the invoke is not traced.
 */
SST_API void *sst_node_span(const sst_node_ctx *ctx);
/** Ends @p span (NULL: nothing) as sst_tracer.end does. */
SST_API void sst_node_span_end(sst_node_ctx *ctx, void *span, sst_code code, const char *message,
                               const sst_value *attrs);
/**
 * The traceparent of @p span (NULL: the task's span) into @p buf (56 bytes or more), for
 * outgoing calls. False when the invoke is not traced.
 */
SST_API bool sst_node_traceparent(sst_node_ctx *ctx, void *span, char *buf, size_t n);

/**
 * Reports what a model call used: @p usage (borrowed) is LangChain's
 * usage_metadata, e.g. {"input_tokens": 12, "output_tokens": 3,
 * "total_tokens": 15, "input_token_details": {"cache_read": 8}}. Its integer
 * members (nested objects too) are added to the run's total: every
 * checkpoint this invoke writes afterwards carries the total so far as
 * metadata "usage", and sst_graph_result_usage returns it. A subgraph's
 * total joins its parent run's. Thread-safe (parallel tasks may report).
 * @return SST_OK; SST_EINVAL when @p usage is not an object; SST_ENOMEM.
 */
SST_NODISCARD SST_API sst_code sst_node_report_usage(sst_node_ctx *ctx, const sst_value *usage,
                                                     sst_error *err);

/**
 * Emits a custom stream event (takes @p value): delivered at once as
 * SST_STREAM_CUSTOM when the invoke asked for that mode (on this node's
 * thread, calls serialized, a task's events in emit order, also those of
 * attempts that failed, as LangGraph's stream writer); dropped otherwise.
 * While the callback runs for another node's event, the event is queued and
 * that call's thread delivers it right after (docs/graph.md, "Live events").
 * Returns the stream callback's error on an event this thread delivered.
 */
SST_NODISCARD SST_API sst_code sst_node_emit(sst_node_ctx *ctx, sst_value *value, sst_error *err);

/**
 * LangGraph's push_message: writes @p message (takes: an object with an
 * "id", else SST_EINVAL "Message ID is required") to @p field (NULL:
 * "messages") as one more write (sst_node_add_write), and streams it at
 * once as SST_STREAM_MESSAGES [message, metadata] when that mode is on.
 */
SST_NODISCARD SST_API sst_code sst_node_push_message(sst_node_ctx *ctx, const char *field,
                                                     sst_value *message, sst_error *err);

/**
 * LangGraph's Command(graph=Command.PARENT, update=..., goto=...): ends the
 * run of the subgraph this node is in, and the parent graph's node that ran
 * the subgraph applies @p update (takes; NULL: none) and goes to @p go
 * (takes: a node name, a Send or a list of them; NULL: its own edges) as if
 * it had returned that Command. Return what this returns (SST_EPARENT) from
 * the node. In a graph that is not running as a subgraph the node fails with
 * SST_EPARENT "there is no parent graph".
 */
SST_NODISCARD SST_API sst_code sst_node_parent_command(sst_node_ctx *ctx, sst_value *update,
                                                       sst_value *go);
/**
 * Runs @p child as a subgraph of this node (LangGraph's subgraph invoked
 * inside a node function, with state shapes mapped by hand): from
 * @p input (borrowed object; NULL: {}), under the namespace
 * "node:task_id" in the parent's checkpointer, as sst_graph_add_subgraph
 * runs it. The child's resulting state goes to *out (new) on SST_OK.
 * @return SST_OK; SST_EINTERRUPT: the child interrupted (its interrupts are
 *         the node's): return it from the node, and the node runs again on
 *         resume, when this call continues the child with the resume values;
 *         SST_EPARENT: the child's Command{graph = PARENT} became this
 *         node's update and goto: return SST_OK from the node; another code
 *         with @p err filled: the child failed.
 */
SST_NODISCARD SST_API sst_code sst_node_run_subgraph(sst_node_ctx *ctx,
                                                     const sst_compiled_graph *child,
                                                     const sst_value *input, sst_value **out,
                                                     sst_error *err);

/**
 * The task's namespace, as LangGraph's config["configurable"]["checkpoint_ns"]
 * inside a node: "node:task_id" in the root graph, joined with "|" after
 * the namespace of the subgraph the node runs in ("sub:task_id|node:task_id").
 * A subgraph the node runs checkpoints under this namespace. Valid while the
 * node runs.
 */
SST_API const char *sst_node_checkpoint_ns(const sst_node_ctx *ctx);

/**
 * In an error handler (sst_node_opts.error_handler): what failed, as
 * {"node": name, "error": {"code": "SST_...", "message": ..., and for a
 * timeout "kind", "timeout", "run_timeout", "idle_timeout", "elapsed"}}
 * (LangGraph's NodeError). NULL in any other node. Borrowed.
 */
SST_API const sst_value *sst_node_error(const sst_node_ctx *ctx);

/**
 * Whether the node ran out of time (sst_node_opts.timeout), or its run was
 * cancelled (sst_invoke_opts.cancelled): long-running C code asks now and
 * then and returns when it did; a timed-out node's result is dropped for an
 * SST_ETIMEOUT failure either way, and a cancelled run stops before its next
 * superstep.
 */
SST_API bool sst_node_cancelled(const sst_node_ctx *ctx);

/** Records progress: restarts the node's idle timeout (LangGraph's runtime.heartbeat()). */
SST_API void sst_node_heartbeat(sst_node_ctx *ctx);

/**
 * The long-term store of the run (LangGraph's runtime.store): the invoke's
 * (sst_invoke_opts.store), else the compiled graph's, else the one of the
 * graph running this subgraph; NULL when there is none. Borrowed: valid
 * while the node runs.
 */
SST_API sst_store *sst_node_store(const sst_node_ctx *ctx);

/** The node's timeout (borrowed), or NULL when it has none. */
SST_API const sst_timeout_policy *sst_node_timeout(const sst_node_ctx *ctx);

/** Fails the node with a message; returns @p code (retried only under the node's retry policy). */
SST_API sst_code sst_node_fail(sst_node_ctx *ctx, sst_code code, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* ---- checkpointers ------------------------------------------------------ */

/**
 * When a superstep's checkpoint is committed, as LangGraph's `durability`
 * (docs/durability.md). Whether a commit is also on disk is the saver's flush
 * policy (sst_flush_policy, superstep/checkpoint.h), the same in every mode.
 */
typedef enum sst_durability {
    /* default: by a writer thread while the next superstep computes (one in flight per
     * graph level); the invoke's end, an interrupt and an error wait for every write, and
     * a failed write fails the run with the saver's error */
    SST_DURABILITY_ASYNC = 0,
    SST_DURABILITY_SYNC, /* committed before the next superstep starts */
    SST_DURABILITY_EXIT  /* written only when the invoke ends */
} sst_durability;

/* ---- running ---------------------------------------------------------- */

/**
 * Stream modes; combine with |. The shapes are LangGraph's (docs/graph.md,
 * "Streaming"); steps are LangGraph's: the first superstep after the input
 * is step 1, a checkpoint's step is its metadata step.
 */
typedef enum sst_stream_mode {
    /* The state (output fields only) after the input and after each superstep that wrote
     * an output field; a resume starts with the current state; {..., "__interrupt__":
     * [{id, value}]} when a node interrupts. */
    SST_STREAM_VALUES = 1 << 0,
    /* Each task's update: {node: update} (null: wrote nothing), in task order;
     * {"__interrupt__": [{id, value}]} per interrupted task, [] after an
     * interrupt_before/after stop. */
    SST_STREAM_UPDATES = 1 << 1,
    SST_STREAM_CUSTOM = 1 << 2, /* values nodes emit with sst_node_emit, delivered live */
    /* {"type": "task" | "task_result" | "checkpoint", "timestamp": ISO 8601, "step",
     * "payload": the tasks / checkpoints chunk}. */
    SST_STREAM_DEBUG = 1 << 3,
    /* Delivered live, on the node's thread, one at a time (not at the commit):
     * pieces of messages as nodes produce them (LLM tokens), {"id": message id, "delta":
     * text}; and LangGraph's (message, metadata) as [message, {langgraph_step,
     * langgraph_node, langgraph_triggers, langgraph_checkpoint_ns, and the configurable
     * keys thread_id, checkpoint_id, checkpoint_ns, task_id, run_id, assistant_id,
     * graph_id}] for each message a node writes to an add_messages field (when it
     * returns; each id once per invoke: not again after its tokens, nor the ones in a
     * task's input) or pushes (sst_node_push_message). */
    SST_STREAM_MESSAGES = 1 << 4,
    /* A task's start {id, name, input, triggers} and its result {id, name, error,
     * interrupts, result}; ids are the engine's task ids (get_state's tasks[i].id). */
    SST_STREAM_TASKS = 1 << 5,
    /* Each checkpoint as written (durable threads): {config, parent_config, values,
     * metadata, next, tasks: [{id, name, interrupts, state}]}. */
    SST_STREAM_CHECKPOINTS = 1 << 6
} sst_stream_mode;

/**
 * Receives one stream event (borrowed) on the invoking thread, or for custom
 * and messages events on the thread of the node that sent them (one call at
 * a time). @p node names the node for updates, custom, messages and tasks
 * events (and debug task events), else
 * NULL (also for {"__interrupt__": ...} chunks). Return SST_OK, or an error to
 * stop the run (status error).
 */
typedef sst_code (*sst_stream_fn)(sst_stream_mode mode, const char *node, const sst_value *event,
                                  void *user_data);

/**
 * A stream callback that also receives the namespace of the graph an event
 * comes from (borrowed): "" for the invoked graph, "node:task_id" for a
 * subgraph's, nested ones joined with "|" (sst_invoke_opts.stream_ns).
 */
typedef sst_code (*sst_stream_ns_fn)(sst_stream_mode mode, const char *ns, const char *node,
                                     const sst_value *event, void *user_data);

/**
 * Tracing: a tracer gets a span for each run (an invoke), superstep and task
 * (a node's run, each attempt), and for what nodes report through
 * sst_node_span_start (the agent's model and tool calls). The OpenTelemetry
 * exporter (sst_otlp_tracer_new, superstep/agent.h) is one; any other may be.
 * Calls come from several threads (tasks run on the engine's workers) and
 * must be quick: a tracer must never block or fail a run.
 */
struct sst_tracer {
    /**
     * Starts a span under @p parent (a span this tracer started, or NULL for a root)
     * of @p kind ("run", "superstep", "task", "llm", "tool") named @p name, with
     * attributes @p attrs (borrowed object, or NULL). Returns the span (opaque), or NULL
     * for none.
     */
    void *(*start)(void *user_data, void *parent, const char *kind, const char *name,
                   const sst_value *attrs);
    /**
     * Ends @p span (never NULL): @p code SST_OK, or the error with @p message; @p attrs
     * (borrowed object, or NULL) are added to it.
     */
    void (*end)(void *user_data, void *span, sst_code code, const char *message,
                const sst_value *attrs);
    /**
     * Writes the W3C traceparent of @p span ("00-<trace id>-<span id>-01") into @p buf
     * (at least 56 bytes): outgoing HTTP calls carry it. NULL, or false: none.
     */
    bool (*traceparent)(void *user_data, void *span, char *buf, size_t n);
    void *user_data;
    /* Spans of model calls may carry the prompts and replies (GenAI's opt-in content). */
    bool capture_content;
    /**
     * A parent for a run's span from a W3C traceparent (an incoming request's), to pass
     * as sst_invoke_opts.trace_parent, and its release after the invoke. NULL (or a NULL
     * result, for a malformed traceparent): runs start traces of their own.
     */
    void *(*parent_from)(void *user_data, const char *traceparent);
    void (*parent_free)(void *user_data, void *parent);
};

/** Invoke options; fill with sst_invoke_opts_init. */
typedef struct sst_invoke_opts {
    uint64_t recursion_limit;      /* supersteps one invoke may run; default 25 */
    const sst_value *resume;       /* Command{resume}: the value for the single pending interrupt */
    const sst_value *resume_by_id; /* {interrupt id: value} when several are pending */
    /* Command{update}: applied through the reducers before the run goes on (the
     * interrupted run, else a new one); borrowed, NULL: none. */
    const sst_value *update;
    /* Command{goto}: a node name, a Send ({"__send__", "arg"}) or a list of them,
     * run in the next superstep beside the interrupted tasks (a new run runs only
     * these, not START's edges, as LangGraph does); borrowed, NULL: none. */
    const sst_value *goto_targets;
    /* LangGraph's runtime context (invoke(..., context=...)): any value nodes read with
     * sst_node_context; borrowed, NULL: none. */
    const sst_value *context;
    /* The run's config, {"configurable": {...}, ...} as LangGraph's: nodes read it with
     * sst_node_config, and the configurable keys with scalar values (except thread_id,
     * checkpoint_* and "__" keys) are copied into every checkpoint's metadata; borrowed. */
    const sst_value *config;
    /* LangGraph's invoke(..., interrupt_before=, interrupt_after=): when a list is set
     * (non-NULL, even with a count of 0) it replaces the compiled one for this invoke;
     * SST_ALL_NODES alone means every node. Unknown names: SST_EINVAL. */
    const char *const *interrupt_before;
    size_t n_before;
    const char *const *interrupt_after;
    size_t n_after;
    unsigned stream_modes; /* sst_stream_mode bits; several modes: the callback gets the mode */
    sst_stream_fn stream;  /* NULL: no stream (nothing is built for it) */
    void *stream_user_data;
    /* Used instead of stream when set: every event with its namespace. */
    sst_stream_ns_fn stream_ns;
    /* LangGraph's stream(subgraphs=True): the subgraphs' events are streamed too (in the
     * modes asked for), live as their supersteps commit, with their namespace. */
    bool subgraphs;
    sst_engine *engine;        /* borrowed: runs tasks on its pool; NULL: one worker, this thread */
    const char *checkpoint_id; /* durable threads: run from this checkpoint (a fork when it
                                  is not the latest); NULL: the latest */
    sst_durability durability; /* durable threads; default SST_DURABILITY_ASYNC */
    uint64_t snapshot_every;   /* durable threads: a full snapshot every K checkpoints;
                                  default 64 (reads replay at most K deltas) */
    bool wait;                 /* wait for a busy thread instead of failing with SST_EBUSY */
    /* Durable threads: the caller already holds the thread's lock (sst_checkpointer_lock)
     * and gives it back itself; the invoke neither takes nor releases it. A server takes
     * it in the transaction that claims the run, and gives it back in the one that
     * finishes it. */
    bool caller_locked;
    /* borrowed: the long-term store nodes reach (sst_node_store) in place of the compiled
     * graph's; subgraphs get the store of the graph that runs them. NULL: the graph's. */
    sst_store *store;
    sst_sleep_fn sleep; /* retry waits (tests); NULL: real sleep */
    void *sleep_user_data;
    /* Asked before each superstep (@p in_node false) and by sst_node_cancelled while nodes
     * run (@p in_node true): true before a superstep stops the run there with
     * SST_ECANCELLED (status error; what committed stays, the thread is left idle and
     * resumes from it); true to a node asks it to stop now (its work is then lost and
     * runs again on resume). A server's cancel says yes to both; a server stopping
     * gracefully says yes only between supersteps, so running nodes finish and commit.
     * NULL: never. Called on several threads; must be cheap. */
    bool (*cancelled)(void *user_data, bool in_node);
    void *cancel_user_data;
    /* Spans for the run, its supersteps and tasks (borrowed; must outlive the invoke); a
     * subgraph's run is traced under its node's task. NULL: no tracing. */
    const sst_tracer *tracer;
    void *trace_parent; /* the run span's parent (a span of the tracer), or NULL */
} sst_invoke_opts;

SST_API void sst_invoke_opts_init(sst_invoke_opts *o);

/**
 * An in-memory thread: the state and, after an interrupt, what is needed to
 * resume. (The checkpoint layer makes threads durable.)
 * @return new thread, freed with sst_graph_thread_free; NULL on SST_ENOMEM.
 */
SST_NODISCARD SST_API sst_graph_thread *sst_graph_thread_new(const sst_compiled_graph *cg,
                                                             sst_error *err);
SST_API void sst_graph_thread_free(sst_graph_thread *t);
/** The thread's current state (borrowed; hidden fields removed); {} before the first invoke. */
SST_API const sst_value *sst_graph_thread_state(const sst_graph_thread *t);

/**
 * A durable thread: every superstep is checkpointed through @p cp under
 * @p thread_id (copied), and an invoke continues the thread's latest
 * checkpoint, also in another process after a crash.
 * @param cp borrowed; must outlive the thread
 * @return new thread; NULL on SST_EINVAL or SST_ENOMEM.
 */
SST_NODISCARD SST_API sst_graph_thread *sst_graph_thread_open(const sst_compiled_graph *cg,
                                                              sst_checkpointer *cp,
                                                              const char *thread_id,
                                                              sst_error *err);

/**
 * The durable thread of a subgraph: namespace @p ns ("node:task_id", nested
 * with "|", or "node" for an SST_SUBGRAPH_KEEP subgraph; "" is the root)
 * of thread @p thread_id of @p cg. The thread's graph is the subgraph the
 * namespace names (sst_graph_thread_graph), so that sst_graph_get_state,
 * sst_graph_get_state_history and sst_graph_update_state read and change
 * the subgraph's own checkpoints; an invoke on it runs the subgraph alone.
 * @return new thread; NULL with SST_EINVAL (a namespace naming no subgraph
 *         node, named), SST_ENOMEM.
 */
SST_NODISCARD SST_API sst_graph_thread *sst_graph_thread_open_ns(const sst_compiled_graph *cg,
                                                                 sst_checkpointer *cp,
                                                                 const char *thread_id,
                                                                 const char *ns, sst_error *err);
/** The compiled graph a thread runs (borrowed). */
SST_API const sst_compiled_graph *sst_graph_thread_graph(const sst_graph_thread *t);

/**
 * The state of a durable thread at checkpoint @p checkpoint_id (NULL: the
 * latest): {"values", "next": [node names], "tasks": [...], "interrupts":
 * [...], "pending_writes": [[task_id, channel, value], ...], "metadata",
 * "checkpoint_id", "parent_id", "step"} (LangGraph's StateSnapshot; its
 * pending_writes are LangGraph's CheckpointTuple's, a failed task's error as
 * [task_id, "__error__", message]).
 * @return new object; NULL with SST_ENOTFOUND (no such checkpoint), SST_EINVAL
 *         (not a durable thread), a storage error.
 */
SST_NODISCARD SST_API sst_value *sst_graph_get_state(sst_graph_thread *t, const char *checkpoint_id,
                                                     sst_error *err);

/**
 * As sst_graph_get_state, with each task that runs a subgraph carrying the
 * subgraph's own snapshot (nested in turn) in "state", when the subgraph has
 * checkpoints (LangGraph's get_state(config, subgraphs=True)); without it, a
 * subgraph task's "state" is the subgraph's config {"configurable":
 * {"thread_id", "checkpoint_ns"}}.
 */
SST_NODISCARD SST_API sst_value *
sst_graph_get_state_nested(sst_graph_thread *t, const char *checkpoint_id, sst_error *err);

/**
 * The thread's checkpoints newest first (each as sst_graph_get_state gives
 * it), keeping those whose metadata has every member of @p filter (NULL:
 * all), at most @p limit (0: all).
 */
SST_NODISCARD SST_API sst_value *sst_graph_get_state_history(sst_graph_thread *t,
                                                             const sst_value *filter, size_t limit,
                                                             sst_error *err);

/**
 * One page of the thread's history, newest first, for reading a long history
 * in constant memory: the checkpoints older than @p before (NULL: from the
 * latest) whose metadata has every member of @p filter, at most @p limit (0:
 * 100). Each entry is {"checkpoint_id", "parent_id", "step", "metadata",
 * "updates"}: what the checkpoint changed, as the list of updates its
 * supersteps applied (for a snapshot record, the fields that differ from its
 * parent's state, grown lists as their appended elements); with @p values,
 * the whole StateSnapshot instead (as sst_graph_get_state). The next page
 * starts before the last entry's checkpoint_id.
 * @return new array; NULL with SST_EINVAL (not durable), SST_ENOTSUP (the
 *         saver has no list_before), a storage error.
 */
SST_NODISCARD SST_API sst_value *sst_graph_history_page(sst_graph_thread *t,
                                                        const sst_value *filter, const char *before,
                                                        size_t limit, bool values, sst_error *err);

/**
 * Writes @p values (borrowed; NULL or null: none) as if node @p as_node had
 * returned them, on top of checkpoint @p checkpoint_id (NULL: the latest), in
 * a new checkpoint with metadata source "update" (on an older checkpoint the
 * thread branches there). Its next tasks are @p as_node's routing (which
 * usually triggers again the node an interrupt_before stopped at, so the next
 * invoke runs it) plus the waiting tasks whose trigger lasts until they run
 * (a join's target, a deferred node); other waiting tasks and Sends are
 * dropped, as LangGraph's are. Without @p as_node the node that wrote in the last
 * superstep is used (several: SST_EINVAL naming them; none: the values only,
 * next unchanged). Special names, as LangGraph's: SST_START (START's
 * routing), SST_END (no next tasks), "__input__" (@p values become a new
 * input that the next invoke runs from START), "__copy__" (a copy of the
 * checkpoint beside it, same parent, source "fork"; @p values ignored unless
 * a list). @p values may also be a list of updates {"values", "as_node"}
 * applied as one superstep (on the copy, with "__copy__").
 * @return SST_OK; SST_EINVAL, SST_ETYPE, SST_ENOTFOUND, a reducer's error, a
 *         storage error.
 */
SST_NODISCARD SST_API sst_code sst_graph_update_state(sst_graph_thread *t,
                                                      const char *checkpoint_id,
                                                      const sst_value *values, const char *as_node,
                                                      sst_error *err);

/**
 * Several supersteps of updates, each one checkpoint: @p supersteps
 * (borrowed) is a list of lists of {"values": object or null, "as_node":
 * name}; the updates of one superstep apply in order as sst_graph_update_state
 * describes, their nodes' routing combined (LangGraph's bulk_update_state).
 * @return as sst_graph_update_state; SST_EINVAL for an empty or misshapen list.
 */
SST_NODISCARD SST_API sst_code sst_graph_bulk_update_state(sst_graph_thread *t,
                                                           const char *checkpoint_id,
                                                           const sst_value *supersteps,
                                                           sst_error *err);

/**
 * Runs the graph. With @p thread NULL, one run from the schema defaults.
 * With a thread: when it is interrupted and resume values are given (or
 * @p input is NULL), the run resumes; otherwise a new run starts from the
 * thread's state. @p input (borrowed; NULL for none) is applied through the
 * reducers before the first superstep.
 * @return new result (completed, interrupted or error), freed with
 *         sst_graph_result_free; NULL only when the run could not start:
 *         SST_EINVAL (a resume that names no pending interrupt, several
 *         pending interrupts resumed without ids), a reducer's error for a
 *         bad input, SST_EBUSY (the thread is running another invoke),
 *         SST_ENOMEM.
 */
SST_NODISCARD SST_API sst_graph_result *
sst_graph_invoke(const sst_compiled_graph *cg, sst_graph_thread *thread, const sst_value *input,
                 const sst_invoke_opts *opts, sst_error *err);

SST_API sst_run_status sst_graph_result_status(const sst_graph_result *r);
/** The state (borrowed; hidden fields removed). */
SST_API const sst_value *sst_graph_result_state(const sst_graph_result *r);
/**
 * Pending interrupts (borrowed array), each {"id", "node", "value"}:
 * dynamic interrupts carry their value; interrupt_before/after entries carry
 * null and "when": "before" | "after".
 */
SST_API const sst_value *sst_graph_result_interrupts(const sst_graph_result *r);
/** The error (code SST_OK unless the status is error; borrowed). */
SST_API const sst_error *sst_graph_result_error(const sst_graph_result *r);
/** The node whose failure ended the run (borrowed), or NULL. */
SST_API const char *sst_graph_result_error_node(const sst_graph_result *r);
/**
 * More about the error (borrowed), or NULL: for a timeout {"kind": "run" |
 * "idle", "timeout", "run_timeout", "idle_timeout", "elapsed"} (seconds).
 */
SST_API const sst_value *sst_graph_result_error_detail(const sst_graph_result *r);
/** Supersteps run by this invoke. */
SST_API uint64_t sst_graph_result_steps(const sst_graph_result *r);
/**
 * The model usage the invoke's nodes reported (sst_node_report_usage),
 * summed: borrowed, or NULL when none was reported.
 */
SST_API const sst_value *sst_graph_result_usage(const sst_graph_result *r);
SST_API void sst_graph_result_free(sst_graph_result *r);

#ifdef __cplusplus
}
#endif
#endif /* SUPERSTEP_GRAPH_H */
