/* SPDX-License-Identifier: MIT */
/*
 * Token usage in LangChain's names: the usage_metadata every assistant reply
 * of the model clients carries ({input_tokens, output_tokens, total_tokens,
 * input_token_details: {cache_read, cache_creation, audio},
 * output_token_details: {reasoning, audio}}), made from what OpenAI and
 * Anthropic report, and summed across replies. docs/providers.md has the
 * semantics.
 */
#ifndef SUPERSTEP_AGENT_USAGE_H
#define SUPERSTEP_AGENT_USAGE_H

#include "common.h"
#include "superstep/value.h"

/*
 * The usage_metadata of an OpenAI-style usage object (borrowed, an object):
 * input_tokens = prompt_tokens, output_tokens = completion_tokens,
 * total_tokens = total_tokens (or their sum when absent),
 * input_token_details.cache_read = prompt_tokens_details.cached_tokens,
 * input_token_details.audio = prompt_tokens_details.audio_tokens,
 * output_token_details.reasoning = completion_tokens_details.reasoning_tokens,
 * output_token_details.audio = completion_tokens_details.audio_tokens. A
 * detail object is only present with at least one member the server reported.
 * @return new object; NULL with SST_ENOMEM.
 */
sst_value *sst__usage_from_openai(const sst_value *usage, sst_error *err);

/*
 * The usage_metadata of an Anthropic usage object (borrowed, an object).
 * Anthropic's input_tokens leaves out the tokens read from or written to the
 * prompt cache; LangChain's input_tokens counts them:
 * input_tokens = input_tokens + cache_read_input_tokens +
 * cache_creation_input_tokens, with input_token_details.cache_read and
 * .cache_creation when the server reported them.
 * @return new object; NULL with SST_ENOMEM.
 */
sst_value *sst__usage_from_anthropic(const sst_value *usage, sst_error *err);

/*
 * Adds @p usage_metadata (borrowed; NULL adds nothing) to *@p total (NULL
 * starts from zero), member by member, the nested details too; members that
 * are not integers are left out, and a sum that would overflow stays at the
 * limit. On success *total is replaced by the sum (the old value is
 * released); on failure it is left as it was.
 * @return SST_OK; SST_EINVAL (@p usage_metadata is not an object), SST_ENOMEM.
 */
sst_code sst__usage_add(sst_value **total, const sst_value *usage_metadata, sst_error *err);

#endif
