/* SPDX-License-Identifier: MIT */
/* Sums of counters kept as nested objects (token usage); see build.h. */
#include "build.h"

#include <stdint.h>

#include "common.h"

#define MAX_DEPTH 8

static sst_value *add(sst_value *acc, const sst_value *more, int depth, sst_error *err) {
    for (size_t i = 0; acc != NULL && i < sst_object_len(more); i++) {
        const sst_value *k = sst_object_key_at(more, i), *v = sst_object_value_at(more, i);
        const sst_value *old = sst_object_get(acc, sst_string_cstr(k));
        sst_value *sum = NULL;
        if (sst_is_int(v)) {
            int64_t a = sst_is_int(old) ? sst_int_value(old) : 0, b = sst_int_value(v);
            bool over = (b > 0 && a > INT64_MAX - b) || (b < 0 && a < INT64_MIN - b);
            sum = sst_int_new(over ? (b > 0 ? INT64_MAX : INT64_MIN) : a + b, err);
        } else if (sst_is_object(v) && depth < MAX_DEPTH) {
            sum = add(sst_is_object(old) ? sst_value_ref(old) : sst_object_empty(), v, depth + 1,
                      err);
        } else {
            continue; /* not a count: left out */
        }
        acc = sst__setv_take(acc, k, sum, err);
    }
    return acc;
}

sst_value *sst__counts_add(sst_value *acc, const sst_value *more, sst_error *err) {
    if (acc == NULL) {
        acc = sst_object_empty();
    }
    if (!sst_is_object(acc)) {
        sst_value_unref(acc);
        acc = sst_object_empty();
    }
    return add(acc, more, 0, err);
}
