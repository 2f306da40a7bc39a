/* SPDX-License-Identifier: MIT */
/*
 * Update markers (LangGraph's Overwrite and a node's repeated writes):
 *
 *   {"__overwrite__": v}   Overwrite(v): sets the field to v, bypassing its
 *                          reducer; two in one superstep are an error
 *   {"$writes": [w1, ...]} several writes to one field from one update, in
 *                          order (a node returning a list of updates)
 *
 * Both are properties of the stored delta, so replaying a checkpoint's
 * deltas through sst_schema_apply gives the same state.
 */
#include <string.h>

#include "reducers_int.h"

static const sst_value *marker(const sst_value *v, const char *key) {
    if (!sst_is_object(v) || sst_object_len(v) != 1) {
        return NULL;
    }
    return sst_object_get(v, key);
}

const sst_value *sst_overwrite_value(const sst_value *v) {
    return marker(v, SST_OVERWRITE_KEY);
}

const sst_value *sst__writes_list(const sst_value *v) {
    const sst_value *list = marker(v, SST_WRITES_KEY);
    return sst_is_array(list) ? list : NULL;
}

sst_value *sst_overwrite_new(sst_value *value, sst_error *err) {
    if (value == NULL) {
        sst__error(err, SST_EINVAL, "Overwrite: NULL value");
        return NULL;
    }
    return sst_object_set_take(sst_object_empty(), SST_OVERWRITE_KEY, value, err);
}

sst_value *sst_delta_add_write(sst_value *delta, const char *field, sst_value *value,
                               sst_error *err) {
    if (delta == NULL || !sst_is_object(delta) || field == NULL || value == NULL) {
        sst__error(err, delta != NULL && !sst_is_object(delta) ? SST_ETYPE : SST_EINVAL,
                   "delta add write: %s",
                   delta == NULL           ? "NULL delta"
                   : !sst_is_object(delta) ? "the delta is not an object"
                   : field == NULL         ? "NULL field"
                                           : "NULL value");
        sst_value_unref(delta);
        sst_value_unref(value);
        return NULL;
    }
    const sst_value *old = sst_object_get(delta, field);
    if (old == NULL) {
        return sst_object_set_take(delta, field, value, err);
    }
    const sst_value *list = sst__writes_list(old);
    sst_value *writes = list != NULL
                            ? sst_value_ref(list)
                            : sst_array_push_take(sst_array_empty(), sst_value_ref(old), err);
    writes =
        writes != NULL ? sst_array_push_take(writes, value, err) : (sst_value_unref(value), NULL);
    sst_value *m = writes != NULL
                       ? sst_object_set_take(sst_object_empty(), SST_WRITES_KEY, writes, err)
                       : NULL;
    if (m == NULL) {
        sst_value_unref(delta);
        return NULL;
    }
    return sst_object_set_take(delta, field, m, err);
}

/* Counts the writes of @p updates once markers are expanded. */
static size_t count_writes(const sst_value *const *updates, size_t n) {
    size_t total = 0;
    for (size_t i = 0; i < n; i++) {
        const sst_value *list = sst__writes_list(updates[i]);
        total += list != NULL ? sst_array_len(list) : 1;
    }
    return total;
}

const sst_value **sst__writes_flatten(const sst_value *const *updates, size_t n, size_t *out_n,
                                      sst_error *err) {
    size_t total = count_writes(updates, n);
    const sst_value **flat = sst__malloc((total > 0 ? total : 1) * sizeof *flat);
    if (flat == NULL) {
        sst__enomem(err);
        return NULL;
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        const sst_value *list = sst__writes_list(updates[i]);
        if (list == NULL) {
            flat[k++] = updates[i];
            continue;
        }
        for (size_t j = 0; j < sst_array_len(list); j++) {
            flat[k++] = sst_array_get(list, j);
        }
    }
    *out_n = k;
    return flat;
}

bool sst__writes_has_markers(const sst_value *const *updates, size_t n) {
    for (size_t i = 0; i < n; i++) {
        if (updates[i] != NULL &&
            (sst__writes_list(updates[i]) != NULL || sst_overwrite_value(updates[i]) != NULL)) {
            return true;
        }
    }
    return false;
}

/*
 * The Overwrite among @p updates (flat), or NULL when there is none. Two are
 * an SST_ECONFLICT error (*conflict set), as LangGraph's InvalidUpdateError.
 */
const sst_value *sst__writes_overwrite(const char *field, const sst_value *const *updates, size_t n,
                                       bool *conflict, sst_error *err) {
    const sst_value *found = NULL;
    *conflict = false;
    for (size_t i = 0; i < n; i++) {
        const sst_value *v = sst_overwrite_value(updates[i]);
        if (v == NULL) {
            continue;
        }
        if (found != NULL) {
            *conflict = true;
            sst__error(err, SST_ECONFLICT,
                       "field '%s': Can receive only one Overwrite value per super-step.", field);
            return NULL;
        }
        found = v;
    }
    return found;
}

/* Normalises one add_messages write: an Overwrite's value inside its marker. */
static sst_value *prepare_one(const char *field, const sst_value *w, sst_error *err) {
    const sst_value *inner = sst_overwrite_value(w);
    sst_value *p = sst__messages_normalize(field, inner != NULL ? inner : w, err);
    return p != NULL && inner != NULL ? sst_overwrite_new(p, err) : p;
}

sst_value *sst__messages_prepare(const char *field, sst_value *update, sst_error *err) {
    const sst_value *list = sst__writes_list(update);
    if (list == NULL) {
        sst_value *out = prepare_one(field, update, err);
        sst_value_unref(update);
        return out;
    }
    sst_value *out = sst_array_empty();
    for (size_t i = 0; out != NULL && i < sst_array_len(list); i++) {
        sst_value *p = prepare_one(field, sst_array_get(list, i), err);
        out = p != NULL ? sst_array_push_take(out, p, err) : (sst_value_unref(out), NULL);
    }
    sst_value_unref(update);
    return out != NULL ? sst_object_set_take(sst_object_empty(), SST_WRITES_KEY, out, err) : NULL;
}
