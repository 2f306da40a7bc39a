/* SPDX-License-Identifier: MIT */
/*
 * Tools an agent's model may call: a registry of C callbacks, each with a
 * name, a description and JSON-schema parameters. A call's arguments are
 * checked against the schema before the callback runs; an unknown tool,
 * arguments that are not JSON or do not match, and a failing tool all
 * become a tool message the model reads ("error: ..."), never a failed run.
 */
#ifndef SUPERSTEP_AGENT_TOOLS_H
#define SUPERSTEP_AGENT_TOOLS_H

#include "common.h"
#include "json_schema.h"
#include "superstep/graph.h"
#include "superstep/value.h"

/* Runs a tool: @p args (borrowed) matched the schema. Returns the result (new) or NULL with @p err.
 */
typedef sst_value *(*sst__tool_fn)(const sst_value *args, void *ud, sst_error *err);
/*
 * A tool that also gets the node it runs in (@p ctx: the agent's tool node, to
 * reach the run's store and config; NULL when called outside a graph).
 */
typedef sst_value *(*sst__tool_ctx_fn)(const sst_value *args, sst_node_ctx *ctx, void *ud,
                                       sst_error *err);

typedef struct sst__tool {
    char *name;
    char *description;
    sst_value *parameters;   /* owned JSON schema (an object schema) */
    sst__json_schema *check; /* owned: the parameters compiled, to check arguments */
    sst__tool_fn fn;         /* one of fn and ctx_fn is set */
    sst__tool_ctx_fn ctx_fn; /* called with the node's context */
    void *ud;
} sst__tool;

typedef struct sst__tools {
    sst__tool *items;
    size_t n, cap;
} sst__tools;

void sst__tools_init(sst__tools *t);
void sst__tools_free(sst__tools *t);
/* The tool name a call {"id", "function": {"name", ...}} names ("" when none). */
const char *sst__call_name(const sst_value *call);
/*
 * The tool message answering @p call: {"role": "tool", "tool_call_id" (null when the call
 * has none), "name", "content": @p content (taken)} (new); NULL on SST_ENOMEM.
 */
sst_value *sst__tool_message_take(const sst_value *call, sst_value *content, sst_error *err);

/* Adds a tool; @p parameters is borrowed. SST_EINVAL for a duplicate or empty name, a schema that
 * is not an object schema, or one the validator refuses (json_schema.h; the message names where).
 */
sst_code sst__tools_add(sst__tools *t, const char *name, const char *description,
                        const sst_value *parameters, sst__tool_fn fn, void *ud, sst_error *err);
/* sst__tools_add for a tool that gets the node's context. */
sst_code sst__tools_add_ctx(sst__tools *t, const char *name, const char *description,
                            const sst_value *parameters, sst__tool_ctx_fn fn, void *ud,
                            sst_error *err);
/* Adds every tool of @p from to @p t (same callbacks and user data); SST_EINVAL for a name
 * @p t has already. On failure @p t may hold some of them: free it. */
sst_code sst__tools_extend(sst__tools *t, const sst__tools *from, sst_error *err);
/* The tools as the chat-completions API lists them: [{"type":"function","function":{...}}]. */
sst_value *sst__tools_schema(const sst__tools *t, sst_error *err);
/*
 * Checks @p value against @p schema (NULL: anything goes) with the JSON Schema
 * validator (json_schema.h), compiling the schema for this one call. SST_OK;
 * SST_EINVAL for a value that does not match, the failures located from
 * @p path ("arguments: missing required property 'b'; arguments/c: expected
 * integer, got string"), or for a schema the validator refuses; SST_ELIMIT,
 * SST_ENOMEM. Tools check their arguments with the schema compiled once.
 */
sst_code sst__schema_check(const sst_value *schema, const sst_value *value, const char *path,
                           sst_error *err);
/*
 * Runs one tool call {"id", "function": {"name", "arguments": JSON text}} and
 * returns the tool message {"role":"tool","tool_call_id","name","content"}
 * (new). The content is the result as text, or "error: ..." for an unknown
 * tool, bad arguments or a failing tool. NULL only on SST_ENOMEM.
 */
sst_value *sst__tools_call(const sst__tools *t, const sst_value *call, sst_error *err);
/* sst__tools_call from inside a node: @p ctx (may be NULL) goes to the tools that take it. */
sst_value *sst__tools_call_ctx(const sst__tools *t, const sst_value *call, sst_node_ctx *ctx,
                               sst_error *err);

#endif
