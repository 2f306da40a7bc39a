/* SPDX-License-Identifier: MIT */
/*
 * Internal helpers for code in any layer that builds a value in several
 * steps and checks for failure once, at the end.
 */
#ifndef SUPERSTEP_VALUES_BUILD_H
#define SUPERSTEP_VALUES_BUILD_H

#include "superstep/value.h"

/*
 * sst_object_set_take that chains: when @p o or @p v is NULL (an earlier
 * step failed), both are released, NULL is returned and the error already in
 * @p err is kept (SST_ENOMEM is set only if @p err holds none). @p err must
 * be initialised (zeroed, or filled by a previous call).
 */
sst_value *sst__set_take(sst_value *o, const char *key, sst_value *v, sst_error *err);
/*
 * An empty, unshared object with room for @p n members (1..4096; else the
 * empty object), so that building it does not reallocate. NULL on SST_ENOMEM.
 */
sst_value *sst__object_with_capacity(size_t n, sst_error *err);
/* sst_array_push_take that chains the same way. */
sst_value *sst__push_take(sst_value *a, sst_value *v, sst_error *err);
/* The same with the key as a string value (borrowed, shared: no copy). */
sst_value *sst__setv_take(sst_value *o, const sst_value *key, sst_value *v, sst_error *err);
/*
 * @p acc (taken; NULL: an empty object) with the integer members of the
 * object @p more added to its own, member by member, nested objects too (8
 * levels): {"input_tokens": 3, "input_token_details": {"cache_read": 1}}.
 * Members of @p more that are neither integers nor objects are left out; a
 * sum that would overflow stays at the limit. NULL on SST_ENOMEM.
 */
sst_value *sst__counts_add(sst_value *acc, const sst_value *more, sst_error *err);

#endif
