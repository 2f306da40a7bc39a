/* SPDX-License-Identifier: MIT */
/*
 * The run context of an invoke (the graph layer's "run context" level, see
 * graph_int.h for the stack): what an invoke (invoke.c) hands the engine as
 * its run user data, and the accessors through which the node runner,
 * subgraphs and the functional API read it (run_ctx.c).
 */
#ifndef SUPERSTEP_GRAPH_RUN_CTX_H
#define SUPERSTEP_GRAPH_RUN_CTX_H

#include "stream.h"

/* What the engine hooks need. */
typedef struct sst__invoke_ctx {
    const sst_compiled_graph *cg;
    const sst_invoke_opts *o;
    uint64_t first_step;  /* the superstep this invoke starts at */
    bool skip_before;     /* do not interrupt before the first superstep (a resume) */
    uint64_t step;        /* the superstep being run */
    const char *stopped;  /* "before" or "after" when a static interrupt stopped the run */
    sst_value *nodes;     /* owned: the nodes that caused it */
    sst__streamer s;      /* the stream (its callback's failure in s.rc, s.err) */
    sst_graph_thread *th; /* durable threads: where checkpoints go; else NULL */
    sst_code persist_rc;  /* a checkpoint that could not be written */
    sst_error persist_err;
    sst__live live;          /* what nodes stream while they run (live.c) */
    bool nested;             /* a subgraph's run: Command{graph = PARENT} goes to its parent */
    sst_value *parent_cmd;   /* owned: the first such Command (under live.mu), or NULL */
    const char *replay_from; /* time travel: the checkpoint replayed from (subgraphs load theirs) */
    sst_value *visited;      /* owned (under live.mu): subgraph paths loaded for that, or NULL */
    const sst_value *targets; /* time travel to subgraph checkpoints: {ns: id}, or NULL */
    sst_value *usage;         /* owned (under live.mu): model usage reported, or NULL */
    void *run_span;           /* the tracer's span of this run, or NULL */
    void *step_span;          /* of the superstep running (set before its tasks), or NULL */
    /* Calls (the functional API's tasks) that finished in the running superstep. */
    pthread_mutex_t calls_mu; /* guards what follows (taken on the calls' threads) */
    const sst_value *run_rp;  /* borrowed: the resume point the engine started from */
    sst_value *calls_rp;      /* owned: the resume point written with their results, or NULL */
    uint64_t calls_step;      /* the superstep calls_rp belongs to */
} sst__invoke_ctx;
/* The live side of the invoke whose run user data is @p run_user_data (run_ctx.c), or NULL. */
sst__live *sst__invoke_live(void *run_user_data);
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
/* The checkpoint the invoke of @p run_user_data replays from (time travel), or NULL. */
const char *sst__invoke_replay_from(void *run_user_data);
/*
 * Time travel to a subgraph's checkpoint (a config naming one, with its checkpoint map):
 * {namespace: checkpoint id} of the subgraphs to go on from, or NULL.
 */
const sst_value *sst__invoke_targets(void *run_user_data);
/* True the first time the invoke of @p run_user_data asks for subgraph path @p path. */
bool sst__invoke_first_visit(void *run_user_data, const char *path);
/* The namespace of the graph the invoke of @p run_user_data runs ("" for a root graph). */
const char *sst__graph_ns(void *run_user_data);
/* The options of the invoke whose run user data is @p run_user_data, or NULL (invoke.c). */
const sst_invoke_opts *sst__invoke_opts(void *run_user_data);
/* The first superstep that invoke may not run (its recursion limit). */
uint64_t sst__invoke_stop_step(void *run_user_data);

#endif /* SUPERSTEP_GRAPH_RUN_CTX_H */
