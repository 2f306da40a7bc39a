/* SPDX-License-Identifier: MIT */
/* The simple built-in reducers: replace, append, sum, merge, deep_merge. */
#include <math.h>

#include "reducers_int.h"

sst_value *sst__reduce_replace(void *ud, const char *field, sst_value *cur, const sst_value *upd,
                               sst_error *err) {
    SST_UNUSED(ud);
    SST_UNUSED(field);
    SST_UNUSED(err);
    sst_value_unref(cur);
    return sst_value_ref(upd);
}

sst_value *sst__reduce_append(void *ud, const char *field, sst_value *cur, const sst_value *upd,
                              sst_error *err) {
    SST_UNUSED(ud);
    SST_UNUSED(field);
    if (!sst_is_array(cur)) {
        /* Semantic 2: a non-list current value is replaced. */
        sst_value_unref(cur);
        cur = sst_array_empty();
    }
    if (sst_is_array(upd)) {
        return sst_array_concat_take(cur, upd, err);
    }
    return sst_array_push_take(cur, sst_value_ref(upd), err);
}

sst_value *sst__reduce_sum(void *ud, const char *field, sst_value *cur, const sst_value *upd,
                           sst_error *err) {
    SST_UNUSED(ud);
    if (!sst_is_number(upd)) {
        sst__reducer_type_error(err, "sum", field, "number", upd, false);
        sst_value_unref(cur);
        return NULL;
    }
    if (cur == NULL || sst_is_null(cur)) {
        sst_value_unref(cur);
        return sst_value_ref(upd);
    }
    if (!sst_is_number(cur)) {
        sst__reducer_type_error(err, "sum", field, "number", cur, true);
        sst_value_unref(cur);
        return NULL;
    }
    sst_value *out;
    if (sst_is_int(cur) && sst_is_int(upd)) {
        int64_t a = sst_int_value(cur), b = sst_int_value(upd), r;
        if (__builtin_add_overflow(a, b, &r)) {
            sst__error(err, SST_ERANGE,
                       "reducer 'sum' on field '%s': integer overflow adding %lld to %lld", field,
                       (long long)b, (long long)a);
            sst_value_unref(cur);
            return NULL;
        }
        out = sst_int_new(r, err);
    } else {
        double r = sst_number_value(cur) + sst_number_value(upd);
        out = sst_double_new(r, NULL);
        if (out == NULL && !isfinite(r)) {
            sst__error(err, SST_ERANGE, "reducer 'sum' on field '%s': result is out of range",
                       field);
        } else if (out == NULL) {
            sst__enomem(err);
        }
    }
    sst_value_unref(cur);
    return out;
}

/*
 * Sets every member of @p upd into @p cur (both objects; takes cur). With
 * @p deep, members that are objects on both sides are merged recursively.
 */
static sst_value *merge_members(sst_value *cur, const sst_value *upd, bool deep, sst_error *err) {
    for (size_t i = 0, n = sst_object_len(upd); i < n && cur != NULL; i++) {
        const sst_value *key = sst_object_key_at(upd, i);
        const sst_value *val = sst_object_value_at(upd, i);
        const sst_value *old = sst_object_getn(cur, sst_string_cstr(key), sst_string_len(key));
        sst_value *merged = sst_value_ref(val);
        if (deep && sst_is_object(old) && sst_is_object(val)) {
            sst_value_unref(merged);
            merged = merge_members(sst_value_ref(old), val, true, err);
            if (merged == NULL) {
                sst_value_unref(cur);
                return NULL;
            }
        }
        cur = sst_object_setv_take(cur, key, merged, err);
    }
    return cur;
}

/* merge and deep_merge: both need objects; absent or null counts as {}. */
static sst_value *reduce_objects(const char *name, bool deep, const char *field, sst_value *cur,
                                 const sst_value *upd, sst_error *err) {
    if (!sst_is_object(upd)) {
        sst__reducer_type_error(err, name, field, "object", upd, false);
        sst_value_unref(cur);
        return NULL;
    }
    if (cur == NULL || sst_is_null(cur)) {
        sst_value_unref(cur);
        return sst_value_ref(upd);
    }
    if (!sst_is_object(cur)) {
        sst__reducer_type_error(err, name, field, "object", cur, true);
        sst_value_unref(cur);
        return NULL;
    }
    return merge_members(cur, upd, deep, err);
}

sst_value *sst__reduce_merge(void *ud, const char *field, sst_value *cur, const sst_value *upd,
                             sst_error *err) {
    SST_UNUSED(ud);
    return reduce_objects("merge", false, field, cur, upd, err);
}

sst_value *sst__reduce_deep_merge(void *ud, const char *field, sst_value *cur, const sst_value *upd,
                                  sst_error *err) {
    SST_UNUSED(ud);
    return reduce_objects("deep_merge", true, field, cur, upd, err);
}
