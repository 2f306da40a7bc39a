/* SPDX-License-Identifier: MIT */
/*
 * The ReAct agent as a graph: llm_call -> (tool calls?) -> one `tool` task
 * per call, in parallel (Sends), results in call order -> llm_call ... It
 * ends on a reply without tool calls, or when `iteration` reaches
 * `max_iterations` (then `stop_reason` is "max_iterations"). With approval
 * on, each tool call first interrupts with the proposed call; the resume
 * value "approve" runs it, "reject" answers the model that the call was
 * rejected, and {"arguments": {...}} runs it with edited arguments.
 * With structured output, a reply that gives no valid answer is answered
 * with the error and llm_call runs again ("structured_retries" counts the
 * wrong answers in a row; the run fails once they reach the bound); a valid
 * answer is kept in "structured_response" and ends the run. Each reply's
 * usage_metadata is reported to the run (sst_node_report_usage).
 */
#ifndef SUPERSTEP_AGENT_REACT_H
#define SUPERSTEP_AGENT_REACT_H

#include "fake_model.h"
#include "llm_client.h"
#include "middleware.h"
#include "structured.h"
#include "superstep/graph.h"
#include "tools.h"

typedef struct sst__react_opts {
    const char *system_prompt; /* or NULL */
    int64_t max_iterations;    /* default 10 */
    bool approve_tools;        /* interrupt before each tool call */
    sst__token_fn on_token;    /* streamed tokens, or NULL */
    void *token_ud;
    void (*on_event)(const char *kind, const sst_value *data, void *ud); /* or NULL */
    void *event_ud;
    sst_store *store; /* compiled into the graph (sst_node_store), or NULL */
    /* Structured output: the final answer checked against a schema and kept in
     * "structured_response" (structured.h); NULL: none. Borrowed. */
    const sst__structured *structured;
    /* The middleware, in order (borrowed); n 0: none. */
    sst_middleware *const *middleware;
    size_t n_middleware;
} sst__react_opts;

void sst__react_opts_init(sst__react_opts *o);

/* A built agent: its graph (run it with sst_graph_invoke) and what the nodes use. */
typedef struct sst__react {
    sst_graph *graph;
    sst_compiled_graph *app;
    void *agent; /* owned: the nodes' user data */
} sst__react;

/*
 * Builds and compiles the agent graph. @p model, @p tools and @p opts are
 * borrowed and must outlive @p r (freed with sst__react_free).
 */
sst_code sst__react_build(sst__react *r, const sst__model *model, const sst__tools *tools,
                          const sst__react_opts *opts, sst_error *err);
void sst__react_free(sst__react *r);

#endif
