/* SPDX-License-Identifier: MIT */
/*
 * The graph layer's "run" level (see graph_int.h for the stack): an invoke
 * (invoke.c) and its run context's accessors, the node runner and its
 * context (node.c), subgraphs (subgraph.c), the functional API
 * (functional.c), Command (command.c) and update_state (update.c); the
 * stream is in stream.h. Includes the "persist" and "state" levels.
 */
#ifndef SUPERSTEP_GRAPH_RUN_H
#define SUPERSTEP_GRAPH_RUN_H

#include "graph_int.h"
#include "graph_persist.h"

/* ---- the run context of an invoke (invoke.c), read by the files of this level ---- */

/* The store of the run (sst_node_store), from the invoke context. */
sst_store *sst__invoke_store(void *run_user_data);
/* True when the invoke streams messages events (sst_node_stream_message). */
bool sst__invoke_streams_messages(void *run_user_data);
/* Takes @p event. */
sst_code sst__invoke_stream_message(void *run_user_data, const char *node, sst_value *event,
                                    sst_error *err);
/* The tracer of the invoke of @p run_user_data (NULL: none) and its superstep's span. */
const sst_tracer *sst__invoke_tracer(void *run_user_data, void **step_span);
/* Adds @p usage (borrowed object) to the model usage of the invoke of @p run_user_data. */
sst_code sst__invoke_add_usage(void *run_user_data, const sst_value *usage, sst_error *err);
/* The durable thread of the invoke whose run user data is @p run_user_data, or NULL. */
sst_graph_thread *sst__invoke_thread(void *run_user_data);
/*
 * Records Command{graph = PARENT} @p cmd (takes: {"update"?, "goto"?}) for the invoke of
 * @p run_user_data: the first one wins. SST_EPARENT when the invoke runs no subgraph.
 */
sst_code sst__invoke_parent_command(void *run_user_data, sst_value *cmd);
/* ---- subgraphs (subgraph.c, invoke.c) ---- */

/* The Command{graph = PARENT} that ended the run of @p r (borrowed), or NULL. */
const sst_value *sst__result_parent_command(const sst_graph_result *r);
/* What a subgraph's run gets from its parent's (subgraph.c -> invoke.c). */
typedef struct sst__nested {
    const char *replay_from;  /* the root's time travel: the checkpoint replayed from, or NULL */
    bool start_empty;         /* the thread starts with no state: it had none at that point */
    const sst_value *targets; /* time travel to a subgraph's checkpoint: {ns: id}, or NULL */
    bool loaded; /* the thread is loaded at the invoke's checkpoint_id already: not read again */
    struct sst__writer *writer; /* durability "async": the root invoke's writer, or NULL */
} sst__nested;
/*
 * Invokes as sst_graph_invoke, as a subgraph's run (@p nested NULL: nothing more), without
 * taking the thread's lock (its parent holds it).
 */
sst_graph_result *sst__graph_invoke_nested(const sst_compiled_graph *cg, sst_graph_thread *thread,
                                           const sst_value *input, const sst_invoke_opts *opts,
                                           const sst__nested *nested, sst_error *err);
/* The checkpoint the invoke of @p run_user_data replays from (time travel), or NULL. */
const char *sst__invoke_replay_from(void *run_user_data);
/*
 * Time travel to a subgraph's checkpoint (a config naming one, with its checkpoint map):
 * {namespace: checkpoint id} of the subgraphs to go on from, or NULL.
 */
const sst_value *sst__invoke_targets(void *run_user_data);
/* True the first time the invoke of @p run_user_data asks for subgraph path @p path. */
bool sst__invoke_first_visit(void *run_user_data, const char *path);
/* The node function of every subgraph node: runs the child graph @p user_data. */
sst_code sst__subgraph_node(sst_node_ctx *ctx, void *user_data);
/* ---- the node runner and its context (node.c; functional.c for entrypoints and tasks) ---- */

/* Adds Command goto @p go (borrowed: a name, a Send or a list of them) to the node's gotos. */
sst_code sst__node_goto_value(sst_node_ctx *ctx, const sst_value *go, sst_error *err);
/* The compiled graph a node context's node belongs to. */
const sst_compiled_graph *sst__node_graph(const sst_node_ctx *ctx);
/* The index of the subgraph the node runs now among those of this run (0, 1, ...). */
size_t sst__node_subgraph_call(sst_node_ctx *ctx);
/* The task of a node context. */
sst_task *sst__node_task(sst_node_ctx *ctx);
/*
 * Interrupts the task with the child's interrupts @p list (borrowed: [{id, node, value}]),
 * kept as one interrupt {"index": 0, "value", "sub": list} (node.c). Returns SST_EINTERRUPT.
 */
sst_code sst__node_forward_interrupts(sst_node_ctx *ctx, const sst_value *list);
/* The namespace of the graph the invoke of @p run_user_data runs ("" for a root graph). */
const char *sst__graph_ns(void *run_user_data);
/* ---- Command and START (command.c, invoke.c) ---- */

/*
 * Command{update, goto} on an interrupted run (command.c): the state and the
 * resume point of @p th changed, and on a durable thread written as a
 * checkpoint that keeps the pending interrupts.
 */
sst_code sst__apply_command(const sst_compiled_graph *cg, sst_graph_thread *th,
                            const sst_invoke_opts *o, bool durable, sst_error *err);
/* Appends Command{goto} @p go (checked; NULL: nothing) to *targets. */
sst_code sst__command_targets(const sst_compiled_graph *cg, const sst_value *go,
                              sst_value **targets, sst_error *err);
/* The options of the invoke whose run user data is @p run_user_data, or NULL (invoke.c). */
const sst_invoke_opts *sst__invoke_opts(void *run_user_data);
/* The first superstep that invoke may not run (its recursion limit). */
uint64_t sst__invoke_stop_step(void *run_user_data);
/*
 * @p view (taken) with the keys of @p delta a closed schema dropped (node.c):
 * routers still see them, as LangGraph's see a node's extra keys.
 */
sst_value *sst__router_extra(const sst_compiled_graph *cg, sst_value *view, const sst_value *delta,
                             sst_error *err);
/* START's routing on @p state (invoke.c). */
sst_code sst__start_routing(const sst_compiled_graph *cg, const sst_value *state,
                            sst_value **targets, sst_error *err);
/* The vertex compute function of every node (node.c). */
sst_code sst__node_vertex(sst_task *t, void *user_data);
/* The commit hook that fires joins (node.c). */
sst_code sst__graph_commit(sst_commit *c, void *user_data);

typedef struct sst_future sst_future; /* functional.h */

struct sst_node_ctx {
    sst_task *task;
    const sst_compiled_graph *cg;
    size_t node;
    sst_value *gotos;         /* owned list of names and Sends, or NULL: no Command goto */
    size_t interrupt_calls;   /* how many times sst_node_interrupt was called */
    sst_value *view;          /* owned: the state restricted to the node's input fields, or NULL */
    char *task_ns;            /* owned: the task's namespace once asked for, or NULL */
    size_t subgraph_calls;    /* subgraphs this run of the node ran (sst_node_run_subgraph) */
    const sst_tracer *tracer; /* the invoke's, or NULL */
    void *span;               /* this task's span, or NULL */
    /* The functional API (functional.c). */
    const char *call_name; /* a task's context: the task's name (borrowed), else NULL */
    bool functional;       /* an entrypoint's or a task's context: sst_node_return works */
    sst_value *ret;        /* owned: what sst_node_return gave, or NULL */
    sst_value *save;       /* owned: sst_node_return_final's save, or NULL */
    sst_future *futures;   /* owned: the tasks submitted, in order */
    sst_future *futures_tail;
};

/* Frees what the functional API left on @p ctx (its futures, return values). */
void sst__functional_ctx_free(sst_node_ctx *ctx);
/* The entrypoint node's function (sst_graph_set_entrypoint). */
sst_code sst__entry_node(sst_node_ctx *ctx, void *user_data);
/*
 * An entrypoint run's start on a durable thread: its input checkpoint, with the input
 * applied (@p prepared, @p state_after) and the entrypoint as its next task (@p rp), as
 * LangGraph's; no loop checkpoint before the entrypoint runs. Durability "exit" holds it
 * back as sst__persist_start does.
 */
sst_code sst__entry_persist_start(sst_graph_thread *th, const sst_value *input,
                                  const sst_value *prepared, const sst_value *state_after,
                                  const sst_value *rp, bool fork, const sst_invoke_opts *o,
                                  sst_error *err);

#endif /* SUPERSTEP_GRAPH_RUN_H */
