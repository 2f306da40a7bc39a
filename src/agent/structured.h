/* SPDX-License-Identifier: MIT */
/*
 * Structured output (LangChain's response_format): the model's final answer
 * checked against a JSON schema and kept as a value. Two strategies, as
 * LangChain's:
 *   - tool: the schema is offered as one more tool (named after the schema's
 *     "title", else "structured_response"); the model answers by calling it,
 *     and its arguments are the answer. For providers without a JSON-schema
 *     mode (Anthropic, where the model is made to call a tool) and the
 *     scripted model.
 *   - provider: the provider constrains the reply itself (OpenAI's
 *     response_format json_schema); the reply's text is the answer as JSON.
 * An answer that is missing, not JSON or not valid is sent back to the model
 * with the error ("error: ... Please fix your mistakes."), a bounded number
 * of times.
 */
#ifndef SUPERSTEP_AGENT_STRUCTURED_H
#define SUPERSTEP_AGENT_STRUCTURED_H

#include "json_schema.h"
#include "superstep/value.h"

typedef enum sst__so_strategy {
    SST__SO_TOOL = 0,
    SST__SO_PROVIDER = 1,
} sst__so_strategy;

typedef struct sst__structured {
    sst_value *schema;          /* owned: the JSON schema */
    sst__json_schema *compiled; /* owned */
    char name[65];              /* the tool's name (tool) or the schema's name (provider) */
    char *description;          /* owned */
    sst__so_strategy strategy;
    unsigned max_attempts; /* answers the model may give before the run fails; >= 1 */
} sst__structured;

/*
 * Compiles @p schema (borrowed; an object schema or any schema the validator
 * takes). SST_EINVAL for a schema the validator refuses (naming where).
 */
sst_code sst__structured_init(sst__structured *s, const sst_value *schema,
                              sst__so_strategy strategy, unsigned max_attempts, sst_error *err);
void sst__structured_free(sst__structured *s);

/* Tool strategy: the tool the model answers with, as chat-completions lists tools (new). */
sst_value *sst__structured_tool(const sst__structured *s, sst_error *err);
/*
 * Provider strategy: OpenAI's response_format member
 * {"type": "json_schema", "json_schema": {"name", "schema", "strict": true}} (new).
 */
sst_value *sst__structured_response_format(const sst__structured *s, sst_error *err);

/*
 * A request's extra members for a model whose own are @p own (borrowed, may be NULL) of
 * @p provider (an sst__llm_provider), with structured output @p s (may be NULL): OpenAI's
 * response_format (provider strategy), or Anthropic's tool_choice "any" (tool strategy:
 * the model must answer with a tool). *out: a new reference, or NULL when there are none.
 * SST_OK or SST_ENOMEM.
 */
sst_code sst__structured_params(const sst__structured *s, const sst_value *own, int provider,
                                sst_value **out, sst_error *err);

/* What a reply means for the structured answer. */
typedef struct sst__so_outcome {
    sst_value *value;    /* owned: the valid answer, or NULL */
    sst_value *feedback; /* owned: messages to add after the reply (tool results, the error
                            sent back), or NULL */
    bool retry;          /* the answer was wrong or missing: ask the model again */
    bool pending;        /* the reply calls other tools: no answer yet, run them first */
    char error[2048];    /* when retry: what was wrong */
} sst__so_outcome;

/*
 * Looks at the assistant message @p reply. Fills @p out (zero it first; free with
 * sst__so_outcome_free). SST_ENOMEM only: a wrong answer is an outcome, not an error.
 */
sst_code sst__structured_check(const sst__structured *s, const sst_value *reply,
                               sst__so_outcome *out, sst_error *err);
void sst__so_outcome_free(sst__so_outcome *out);

#endif
