/* SPDX-License-Identifier: MIT */
/*
 * The graph layer's "node" level (see graph_int.h for the stack): the node
 * runner and its context (node.c), the functional API's entrypoint and tasks
 * (functional.c) and Command (command.c).
 */
#ifndef SUPERSTEP_GRAPH_NODE_H
#define SUPERSTEP_GRAPH_NODE_H

#include "run_ctx.h"

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
/*
 * @p view (taken) with the keys of @p delta a closed schema dropped (node.c):
 * routers still see them, as LangGraph's see a node's extra keys.
 */
sst_value *sst__router_extra(const sst_compiled_graph *cg, sst_value *view, const sst_value *delta,
                             sst_error *err);
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

#endif /* SUPERSTEP_GRAPH_NODE_H */
