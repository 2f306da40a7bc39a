/* SPDX-License-Identifier: MIT */
/*
 * Private parts of the graph layer, its lowest level ("state"): the
 * builder's records, the compiled graph (a Pregel vertex set plus routing
 * tables), the thread, and the helpers every level uses. docs/graph.md
 * describes how a StateGraph maps onto the engine.
 *
 * The files of src/graph form a one-way stack; a file includes the private
 * headers of its own level and the levels below, never above
 * (tools/check-layers.sh checks it; docs/graph.md "Source layout"):
 *
 *   0 state        graph_int.h: names.c route.c public.c pending.c interrupts.c
 *                  node_opts.c record.c thread.c writer.c
 *   1 persist      graph_persist.h: persist.c snapshot.c history.c
 *   2 stream       stream.h: stream.c live.c
 *   3 run context  run_ctx.h: run_ctx.c (an invoke's context and its accessors)
 *   4 node         graph_node.h: node.c functional.c command.c
 *   5 invoke       graph_invoke.h: invoke.c
 *   6 subgraph     graph_subgraph.h: subgraph.c update.c
 *   7 compile      builder.c introspect.c (the builder compiles onto the levels below)
 *   8 draw         draw.h: draw.c drawable.c
 */
#ifndef SUPERSTEP_GRAPH_INT_H
#define SUPERSTEP_GRAPH_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "common.h"
#include "superstep/graph.h"
#include "superstep/json.h"

/* The hidden state field holding join barriers: {join index: {source: arrivals}}. */
#define SST__BARRIERS "__barriers__"

typedef struct sst__node {
    char *name; /* owned */
    sst_node_fn fn;
    void *user_data;
    sst_retry_policy retry;
    sst_value *metadata; /* owned (null when none) */
    char **ends;         /* owned names */
    size_t n_ends;
    bool defer;                   /* LangGraph's defer=True (the vertex's sst_vertex_opts.defer) */
    sst_value *input_fields;      /* owned array of names the node sees, or NULL: all */
    sst_retry_policy *retry_list; /* owned list of policies (node_opts.c), or NULL */
    size_t n_retry_list;
    const sst_compiled_graph *sub; /* borrowed: the subgraph the node runs, or NULL */
    sst_timeout_policy timeout;    /* zeroes: the graph's default */
    sst_node_cache_policy cache;   /* not enabled: the graph's default */
    char *handler;                 /* owned: the name of its error handler node, or NULL */
    bool is_handler;               /* an error handler node (no edges; never handled itself) */
} sst__node;

#define SST__HANDLER_PREFIX  "__error_handler__"
#define SST__DEFAULT_HANDLER "__default_error_handler__"

/* The vertex cache key of a node (sst_cache_key_fn; user data: its sst__node_ref). */
sst_value *sst__node_cache_key(const sst_task *t, void *user_data, sst_error *err);

typedef struct sst__edge {
    char *from, *to; /* owned */
} sst__edge;

typedef struct sst__join {
    char **from; /* owned names */
    size_t n;
    char *to; /* owned */
} sst__join;

typedef struct sst__branch {
    char *from; /* owned */
    sst_router_fn router;
    void *user_data;
    sst_value *path_map; /* owned, or NULL */
} sst__branch;

struct sst_graph {
    sst_schema *schema; /* owned */
    sst__node *nodes;
    size_t n_nodes, cap_nodes;
    sst__edge *edges;
    size_t n_edges, cap_edges;
    sst__join *joins;
    size_t n_joins, cap_joins;
    sst__branch *branches;
    size_t n_branches, cap_branches;
    sst_value *input_fields;     /* owned array of names, or NULL: every field */
    sst_value *output_fields;    /* owned array of names, or NULL: every field */
    sst_value *untracked_fields; /* owned array of names never checkpointed, or NULL */
    bool root;                   /* the state is one value in field SST_ROOT */
    bool entrypoint;             /* sst_graph_set_entrypoint: its one node is entry_fn */
    sst_node_fn entry_fn;
    void *entry_user_data;
    sst_retry_policy *default_retry; /* owned: sst_graph_set_default_retry's list, or NULL */
    size_t n_default_retry;
    sst_timeout_policy default_timeout;  /* sst_graph_set_default_timeout */
    sst_node_fn default_handler;         /* sst_graph_set_default_error_handler, or NULL */
    sst_node_cache_policy default_cache; /* sst_graph_set_default_cache_policy */
    void *default_handler_user_data;
};

/* Per node in the compiled graph: what to do after it ran. */
typedef struct sst__route {
    size_t *edges; /* node indexes of static edges (END excluded) */
    size_t n_edges;
    size_t *branches; /* indexes into cg->branches */
    size_t n_branches;
    size_t *joins_in; /* joins this node is a source of */
    size_t n_joins_in;
    size_t *joins_out; /* joins this node is the target of */
    size_t n_joins_out;
    bool interrupt_before, interrupt_after;
} sst__route;

/* What a compiled node's vertex needs: back to the graph and its index. */
typedef struct sst__node_ref {
    const sst_compiled_graph *cg;
    size_t index;
} sst__node_ref;

struct sst_compiled_graph {
    sst_graph *g;       /* owned copy of the builder's records (nodes, edges, ...) */
    sst_schema *schema; /* owned: the user's fields plus the hidden barrier field */
    sst_reducer *barrier_reducer;
    sst_pregel *pregel; /* owned; vertex i is node i */
    sst__route *routes; /* per node */
    sst__route start;   /* START's edges and branches */
    sst__node_ref *refs;
    char **warnings;
    size_t n_warnings;
    sst_subgraph_checkpoints checkpoints; /* as a subgraph (sst_compile_opts) */
    double step_timeout_s;                /* sst_compile_opts */
    sst_cache *cache;                     /* owned reference (sst_compile_opts), or NULL */
    char *cache_ns;                       /* owned (sst_compile_opts) */
    sst_store *store;                     /* owned reference (sst_compile_opts), or NULL */
    /* Per node: the graph it ran first through sst_node_run_subgraph, so that snapshots
     * can show that subgraph's state (set once, read by any thread). */
    _Atomic(const sst_compiled_graph *) *ran_sub;
    struct sst__write_pool *writers; /* owned: the threads of durability "async" (writer.c) */
};

#define SST__STATE_CACHE 8
#define SST__ID_MAX      128 /* the longest checkpoint id a thread follows, NUL included */

/*
 * A thread: in memory, or durable through a checkpointer (then its fields
 * are reloaded from the latest checkpoint at each invoke).
 */
struct sst_graph_thread {
    const sst_compiled_graph *cg;
    atomic_bool busy;
    sst_value *state;        /* owned full state (hidden fields included), or NULL */
    sst_value *public_state; /* owned: state without hidden fields */
    sst_value *resume_point; /* owned engine resume point, or NULL: nothing to resume */
    sst_value *pending;      /* owned: pending interrupts with their task and index */
    bool skip_before;        /* the pending interrupt is an interrupt_before */
    char *run_key;           /* owned: the run whose task ids a resume uses, or NULL */
    uint64_t runs;           /* runs started on this thread */
    /* Durable threads only. */
    sst_checkpointer *cp;    /* a reference held by the thread, or NULL: in memory */
    char *thread_id;         /* owned */
    char *ns;                /* owned: the namespace ("" for a root graph's thread) */
    sst_value *parent_cp;    /* owned: the loaded checkpoint's "pp" or whole "parents", or NULL */
    char pp_id[SST__ID_MAX]; /* sst__parents_of's last answer: for this "pp" ... */
    sst_value *pp_map;       /* owned: ... this parents map, or NULL */
    char *last_id;           /* the checkpoint new ones hang off (in last_id_buf), or NULL */
    char *latest_id; /* the thread's newest checkpoint when loaded (latest_id_buf), or NULL */
    char last_id_buf[SST__ID_MAX], latest_id_buf[SST__ID_MAX]; /* set without allocating */
    int64_t last_step;       /* its step (-2 before the first checkpoint) */
    uint64_t since_snapshot; /* deltas since the last snapshot along the chain */
    uint64_t id_clock;       /* last checkpoint id timestamp, for monotonic ids */
    int64_t created_ms;      /* created_at of the last checkpoint made: they increase */
    bool rebased;            /* the next checkpoint is a branch (sst__persist_rebase) */
    sst_value *exit_groups;  /* owned: deltas held back by SST_DURABILITY_EXIT */
    sst_value *exit_writes;  /* owned: the nodes that wrote in its last superstep, or NULL */
    /* Durability "exit": the id of the last checkpoint streamed unsaved (stream.c), which
     * the checkpoint saved at the end takes, as LangGraph's does; "" when none. */
    char exit_id[37];
    /* The latest checkpoint is a run's input (or fork) checkpoint whose first loop
     * checkpoint never committed (a crash between the two): the run starts again. */
    bool restart;
    sst_value *restart_input; /* owned: that run's input, or NULL */
    /* The model usage this invoke reported up to its last committed superstep (metadata
     * "usage" of the checkpoints it writes), or NULL: none. Owned. */
    sst_value *run_usage;
    /* Durability "async": the writer of the root invoke running (shared by its subgraphs'
     * threads), or NULL: checkpoints are written in the caller's thread. */
    struct sst__writer *writer;
    uint64_t ticket; /* the writer's ticket of this thread's last checkpoint, 0: none */
    bool chain;      /* the next checkpoint goes without waiting for the last (a run's start) */
    /* The thread's lock as the invoke of a root graph holds it (invoke.c), SST__LOCK_*:
     * none (not the graph's: in memory, a subgraph's thread, the caller's lock), deferred
     * to the run's first checkpoint (taken in its commit), held, or given back with the
     * run's last checkpoint. Atomic: the writer of durability "async" gives it back. */
    atomic_int lock;
    bool lock_lost;  /* the deferred take failed (busy, or the thread moved): lock, reload */
    bool run_ending; /* the next checkpoint is the run's last: nothing is written after it */
    /* A run's input checkpoint goes with its first loop checkpoint (SST_PUT_WITH_NEXT), and
     * that one follows in the same OS thread (after_hold): one commit for both. */
    bool hold, after_hold;
};

enum { SST__LOCK_NONE = 0, SST__LOCK_DEFERRED, SST__LOCK_HELD, SST__LOCK_GIVEN };

/* ---- names and namespaces (names.c; sst__thread_open: thread.c) ---- */

/* The subgraph node @p node runs: its own (sst_graph_add_subgraph) or one it ran, or NULL. */
const sst_compiled_graph *sst__subgraph_of(const sst_compiled_graph *cg, const char *node);
/*
 * The namespace of the subgraph node @p node of task @p task_id under @p parent_ns (new):
 * "parent_ns|node:task_id", or "parent_ns|node" for an SST_SUBGRAPH_KEEP @p child (NULL:
 * the task's own namespace). A @p task_id "id|k" (the node's k-th subgraph) gives
 * "parent_ns|node:id|k", and "parent_ns|node|k" for a kept child.
 */
char *sst__subgraph_ns(const sst_compiled_graph *child, const char *parent_ns, const char *node,
                       const char *task_id);
/* The length of the parent namespace of the first @p len bytes of @p ns ("a:1|b:2" -> 3). */
size_t sst__parent_ns_len(const char *ns, size_t len);
/* Opens thread @p thread_id at namespace @p ns of @p cg (the graph the namespace names). */
sst_graph_thread *sst__thread_open(const sst_compiled_graph *cg, sst_checkpointer *cp,
                                   const char *thread_id, const char *ns, sst_error *err);

/* ---- interrupts and their answers (interrupts.c) ---- */

/*
 * The graph interrupts of the interrupted engine run @p rr: [{id, node, value}] (a
 * subgraph's with "ns"), then one per node of a static stop (@p stopped "before" |
 * "after", @p nodes their names; NULL: none) with "when"; with @p internal each dynamic
 * one also has its "task", "index" and (forwarded by a subgraph) "sub".
 */
sst_value *sst__collect_interrupts(const sst_run_result *rr, const char *stopped,
                                   const sst_value *nodes, const char *run_key, bool internal);
/* True when @p resume is an object whose keys are all ids of @p pending interrupts. */
bool sst__resume_is_id_map(const sst_value *pending, const sst_value *resume);
/*
 * @p th's resume point with the answers of @p o (resume, resume_by_id) put in for the
 * tasks of its pending interrupts (new); NULL with SST_EINVAL when they name none or
 * are ambiguous.
 */
sst_value *sst__resume_point_with_values(const sst_graph_thread *th, const sst_invoke_opts *o,
                                         sst_error *err);

/* ---- checkpoint records (record.c) ---- */

/* One checkpoint to write (sst__record_put). */
typedef struct sst__put {
    const char *id, *parent, *source, *run_key;
    int64_t step;
    bool snapshot, fork;
    uint64_t since;               /* deltas since the last snapshot (0 for a snapshot) */
    int64_t created_at;           /* ms since the epoch, stamped when the id was made */
    const sst_value *state;       /* the state (stored when snapshot) */
    const sst_value *groups;      /* the delta groups (stored otherwise) */
    const sst_value *next;        /* the resume point, or NULL */
    const sst_value *writes_meta; /* metadata "writes", or NULL */
    const sst_value *extra_meta;  /* more metadata keys (the run's configurable), or NULL */
    unsigned flags;               /* SST_PUT_* (the lock taken or given back, the run's end) */
} sst__put;

/* Writes one checkpoint of @p th as a typed record. */
sst_code sst__record_put(sst_graph_thread *th, const sst__put *w, sst_error *err);
/* Checkpoint @p id (NULL: latest) of @p th as a record object (see record.c). */
sst_value *sst__record_get(sst_graph_thread *th, const char *id, sst_error *err);
/* The headers of @p th's records, newest first (see sst_checkpoint_query). */
sst_value *sst__record_list(sst_graph_thread *th, const sst_value *filter, const char *before,
                            size_t limit, sst_error *err);
/* The cache of materialized states kept per checkpointer. */
sst_value *sst__cache_get(sst_checkpointer *cp, const char *thread, const char *id);
void sst__cache_put(sst_checkpointer *cp, const char *thread, const char *id,
                    const sst_value *state);

/* ---- the checkpoint writer of durability "async" (writer.c) ---- */

typedef struct sst__writer sst__writer;
typedef struct sst__write_pool sst__write_pool;
typedef sst_code (*sst__write_fn)(void *data, sst_error *err);
typedef void (*sst__write_free)(void *data);
/* A compiled graph's writer threads (none until a job needs one); NULL when out of memory. */
sst__write_pool *sst__write_pool_new(void);
/* Stops and joins the pool's threads (no invoke may be running), frees it (NULL: no-op). */
void sst__write_pool_free(sst__write_pool *p);
/* Where jobs run: measured (the default), always in the caller, always handed over. */
typedef enum { SST__WRITE_AUTO, SST__WRITE_INLINE, SST__WRITE_HANDOFF } sst__write_policy;
/* For tests: fixes where @p p's jobs run. */
void sst__write_pool_set_policy(sst__write_pool *p, sst__write_policy policy);
/* What a pool did so far, and its cost model's averages (writer.c). */
typedef struct sst__write_stats {
    size_t threads;           /* threads it has now */
    uint64_t threads_started; /* threads it ever started */
    uint64_t inline_jobs;     /* jobs run at once by the caller that handed them over */
    uint64_t handed_jobs;     /* jobs queued for a thread */
    uint64_t taken_over;      /* queues whose waiting caller ran them, no thread having yet */
    uint64_t write_samples, compute_samples, handoff_samples;
    int64_t w_ns, c_ns, h_ns; /* a write, a superstep's compute, a handoff's wait (averages) */
} sst__write_stats;
void sst__write_pool_stats(sst__write_pool *p, sst__write_stats *out);
/* One root invoke's writer: its jobs run one at a time, in order, by @p pool's threads. */
sst__writer *sst__writer_new(sst__write_pool *pool, sst_error *err);
/*
 * Before a job: true when the caller is to run it itself, at once (the pool measured
 * that a handoff would not pay, or was told to; the writer has nothing in flight):
 * *ticket is its number, and the caller calls sst__writer_release after it. False:
 * hand it over (sst__writer_submit). @p after_compute: the engine computed a superstep
 * since the writer's last job (the time since then is a sample of what a handoff
 * could overlap).
 */
bool sst__writer_claim(sst__writer *w, bool after_compute, uint64_t *ticket);
/* The end of a job the caller ran (sst__writer_claim): its result (@p err if failed). */
void sst__writer_release(sst__writer *w, sst_code rc, const sst_error *err);
/* Hands @p data to the writer (takes it: @p free_fn runs once, after @p run or instead of
 * it when an earlier job failed); *ticket gets its number (1, 2, ...). Jobs run in order. */
sst_code sst__writer_submit(sst__writer *w, sst__write_fn run, sst__write_free free_fn, void *data,
                            uint64_t *ticket, sst_error *err);
/* Waits until job @p ticket and every job before it finished; the first failure, if any. */
sst_code sst__writer_wait(sst__writer *w, uint64_t ticket, sst_error *err);
/* Waits for every job handed over so far; the first failure, if any. */
sst_code sst__writer_drain(sst__writer *w, sst_error *err);
/* Runs what is queued, waits for it and frees @p w (NULL: no-op). */
void sst__writer_free(sst__writer *w);

/* Names a new run of @p th (the one run-key format) in th->run_key. */
sst_code sst__name_run(sst_graph_thread *th, sst_error *err);
/* Sets th->run_key to a copy of @p key (any length). */
sst_code sst__set_run_key(sst_graph_thread *th, const char *key, sst_error *err);

/* ---- node options (node_opts.c) ---- */

/* Copies @p n policies into *list (owned; NULL for n == 0). SST_EINVAL for max_attempts 0. */
sst_code sst__retry_list_copy(sst_retry_policy **list, size_t *count, const sst_retry_policy *src,
                              size_t n, sst_error *err);
/* Copies opts' input fields and policy list into @p n (freed by the node's free). */
sst_code sst__node_opts_copy(sst__node *n, const sst_node_opts *opts, sst_error *err);
/* The engine policy of node @p n of @p g (graph defaults, lists combined). */
sst_retry_policy sst__node_policy(const sst_graph *g, const sst__node *n);
/* The state node @p n sees: a new view restricted to its input fields. */
sst_value *sst__node_view(const sst__node *n, const sst_value *state, sst_error *err);

/* True for a state field the engine keeps to itself: "__..." except a root state's SST_ROOT. */
static inline bool sst__hidden_field(const char *field) {
    return strncmp(field, "__", 2) == 0 && strcmp(field, SST_ROOT) != 0;
}

/* ---- names (names.c), routing values (route.c), the public state (public.c) ---- */

/* True for a Send (sst_send_new's value) among routing values. */
static inline bool sst__is_send(const sst_value *v) {
    return sst_is_object(v) && sst_is_string(sst_object_get(v, "__send__"));
}

/* The node index of @p name, or SIZE_MAX. */
size_t sst__graph_find(const sst_graph *g, const char *name);
/*
 * Checks interrupt lists (compile's or an invoke's): every name is a node or
 * SST_ALL_NODES, else SST_EINVAL "WHO: interrupt_before names unknown node 'x'".
 */
sst_code sst__check_interrupt_lists(const sst_graph *g, const char *const *before, size_t n_before,
                                    const char *const *after, size_t n_after, const char *who,
                                    sst_error *err);

/*
 * Resolves a router's result @p v for the branch @p b of node @p from into
 * gotos on the task (activations and Sends). Errors name the node and value.
 */
sst_code sst__route_result(const sst_compiled_graph *cg, const sst__branch *b, const char *from,
                           const sst_value *v, sst_value **targets, sst_error *err);

/* A copy of @p state without the hidden "__" fields (SST_ROOT is kept; new reference). */
sst_value *sst__graph_public_state(const sst_value *state, sst_error *err);
/*
 * A task's update as the updates stream shows it: the delta without
 * hidden fields, or, when a field was written more than once ($writes), the
 * list of {field: value}, one per write, as LangGraph streams it.
 */
sst_value *sst__graph_public_update(const sst_value *delta, sst_error *err);

/* ---- resume-point tasks and their pending writes (pending.c) ---- */

/* The engine's id of the task entry @p entry ({"vertex", "send"?}) of @p superstep. */
void sst__entry_task_id(const char *run_key, uint64_t superstep, const sst_value *entry,
                        char out[33]);
/* The pending write {"task", "delta", ...} of task @p task_id in @p pending, or NULL. */
const sst_value *sst__pending_of(const sst_value *pending, const char *task_id);
/*
 * Resume point @p rp with its tasks asked afresh (new reference): the stored
 * answers dropped and, unless @p keep_pending, the succeeded tasks' writes too.
 */
sst_value *sst__asked_afresh(const sst_value *rp, bool keep_pending, sst_error *err);
/* @p state (taken) with the deltas of @p pending applied in order; NULL on failure. */
sst_value *sst__with_pending(const sst_compiled_graph *cg, sst_value *state,
                             const sst_value *pending, sst_error *err);

/* True when interrupt @p x (a pending one, or the engine's) is task @p id's or one of its
 * functional tasks' ("owner"). */
bool sst__interrupt_of_task(const sst_value *x, const char *id);
/*
 * LangGraph's step of engine superstep @p superstep of @p cg: one more for a StateGraph
 * (its START runs as a step of its own there, before the first nodes), the same for an
 * entrypoint graph (its node runs at step 0, triggered by __start__).
 */
static inline int64_t sst__lg_step(const sst_compiled_graph *cg, uint64_t superstep) {
    return (int64_t)superstep + (cg->g->entrypoint ? 0 : 1);
}

#endif /* SUPERSTEP_GRAPH_INT_H */
