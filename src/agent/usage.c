/* SPDX-License-Identifier: MIT */
/* Token usage in LangChain's names, and sums of it; see usage.h. */
#include "usage.h"

#include "values/build.h"

/* The integer member @p key of @p o, or -1 when it is absent or not a count. */
static int64_t count(const sst_value *o, const char *key) {
    const sst_value *v = sst_object_get(o, key);
    return sst_is_int(v) && sst_int_value(v) >= 0 ? sst_int_value(v) : -1;
}

static int64_t add_sat(int64_t a, int64_t b) {
    return a > INT64_MAX - b ? INT64_MAX : a + b;
}

/* @p o (taken) with the member @p key = @p n when @p n is a known count (>= 0). */
static sst_value *set_known(sst_value *o, const char *key, int64_t n, sst_error *err) {
    if (o == NULL || n < 0) {
        return o;
    }
    return sst__set_take(o, key, sst_int_new(n, err), err);
}

/* @p o (taken) with @p key = @p details (taken) unless the details are empty. */
static sst_value *set_details(sst_value *o, const char *key, sst_value *details, sst_error *err) {
    if (details != NULL && sst_object_len(details) == 0) {
        sst_value_unref(details);
        return o;
    }
    return sst__set_take(o, key, details, err);
}

/* The three totals, in LangChain's order. */
static sst_value *totals(int64_t in, int64_t out, int64_t total, sst_error *err) {
    sst_value *u = sst__object_with_capacity(5, err);
    u = set_known(u, "input_tokens", in, err);
    u = set_known(u, "output_tokens", out, err);
    return set_known(u, "total_tokens", total, err);
}

sst_value *sst__usage_from_openai(const sst_value *usage, sst_error *err) {
    int64_t in = count(usage, "prompt_tokens"), out = count(usage, "completion_tokens");
    int64_t total = count(usage, "total_tokens");
    in = in < 0 ? 0 : in;
    out = out < 0 ? 0 : out;
    total = total > 0 ? total : add_sat(in, out); /* LangChain: total_tokens or in + out */
    const sst_value *pd = sst_object_get(usage, "prompt_tokens_details");
    const sst_value *cd = sst_object_get(usage, "completion_tokens_details");
    sst_value *u = totals(in, out, total, err);
    sst_value *id = set_known(sst_object_empty(), "audio", count(pd, "audio_tokens"), err);
    id = set_known(id, "cache_read", count(pd, "cached_tokens"), err);
    u = set_details(u, "input_token_details", id, err);
    sst_value *od = set_known(sst_object_empty(), "audio", count(cd, "audio_tokens"), err);
    od = set_known(od, "reasoning", count(cd, "reasoning_tokens"), err);
    return set_details(u, "output_token_details", od, err);
}

sst_value *sst__usage_from_anthropic(const sst_value *usage, sst_error *err) {
    int64_t base = count(usage, "input_tokens"), out = count(usage, "output_tokens");
    int64_t read = count(usage, "cache_read_input_tokens");
    int64_t made = count(usage, "cache_creation_input_tokens");
    /* Anthropic's input_tokens leaves the cached tokens out; LangChain's counts them. */
    int64_t in = add_sat(add_sat(base < 0 ? 0 : base, read < 0 ? 0 : read), made < 0 ? 0 : made);
    out = out < 0 ? 0 : out;
    sst_value *u = totals(in, out, add_sat(in, out), err);
    sst_value *id = set_known(sst_object_empty(), "cache_read", read, err);
    id = set_known(id, "cache_creation", made, err);
    return set_details(u, "input_token_details", id, err);
}

sst_code sst__usage_add(sst_value **total, const sst_value *usage_metadata, sst_error *err) {
    if (usage_metadata == NULL) {
        return SST_OK;
    }
    if (!sst_is_object(usage_metadata)) {
        return sst__error(err, SST_EINVAL, "usage: expected a usage_metadata object, got %s",
                          sst_type_name(sst_value_type(usage_metadata)));
    }
    /* The sum is made on a reference of our own: *total stays as it was if it fails. */
    sst_value *acc = *total != NULL ? sst_value_ref(*total) : NULL;
    sst_value *sum = sst__counts_add(acc, usage_metadata, err);
    if (sum == NULL) {
        return sst__error_unless_set(err, SST_ENOMEM, "out of memory");
    }
    sst_value_unref(*total);
    *total = sum;
    return SST_OK;
}
