/* SPDX-License-Identifier: MIT */
/*
 * What the agent graph's parts share: the agent the nodes get as user data
 * (react.c builds it; react_model.c holds the model node, react_tool.c the
 * tool node).
 */
#ifndef SUPERSTEP_AGENT_REACT_INT_H
#define SUPERSTEP_AGENT_REACT_INT_H

#include "react.h"

#define SST__NODE_NAME_MAX 160

typedef struct sst__agent sst__agent;

/* A node hook of a middleware, as a node, and where it goes when it does not jump. */
typedef struct sst__hook {
    sst__agent *a;
    sst_middleware *mw;
    sst_code (*fn)(sst_node_ctx *ctx, void *ud);
    char node[SST__NODE_NAME_MAX]; /* "<name>.before_model" */
    char next[SST__NODE_NAME_MAX]; /* the next node, or "" for the model's router */
    bool after_agent;              /* "end" from here is the graph's end */
} sst__hook;

struct sst__agent {
    const sst__model *model;
    const sst__tools *tools;
    const sst__react_opts *opts;
    bool jumps;                          /* the state has "jump_to" (node hooks exist) */
    char loop_entry[SST__NODE_NAME_MAX]; /* the first before_model hook, or llm_call */
    char exit_node[SST__NODE_NAME_MAX];  /* the last after_agent hook, or END */
    sst__hook *hooks;                    /* owned */
    size_t n_hooks;
};

/* The nodes. */
sst_code sst__react_llm_call(sst_node_ctx *ctx, void *ud);
sst_code sst__react_tool(sst_node_ctx *ctx, void *ud);
/* Reports an agent event to the agent's callback. */
void sst__react_event(const sst__agent *a, const char *kind, const sst_value *data);

#endif
