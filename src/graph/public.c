/* SPDX-License-Identifier: MIT */
/*
 * The public face of the state (state layer, see graph_int.h): the state
 * and the updates as users and streams see them, without the engine's
 * hidden "__" fields.
 */
#include <string.h>

#include "graph_int.h"
#include "values/build.h"

sst_value *sst__graph_public_state(const sst_value *state, sst_error *err) {
    bool hidden = false;
    for (size_t i = 0; i < sst_object_len(state) && !hidden; i++) {
        const char *k = sst_string_cstr(sst_object_key_at(state, i));
        hidden = sst__hidden_field(k);
    }
    if (!hidden) {
        return sst_value_ref(state);
    }
    sst_value *out = sst_object_empty();
    for (size_t i = 0; i < sst_object_len(state) && out != NULL; i++) {
        const sst_value *k = sst_object_key_at(state, i);
        if (!sst__hidden_field(sst_string_cstr(k))) {
            out = sst_object_setv_take(out, k, sst_value_ref(sst_object_value_at(state, i)), err);
        }
    }
    return out;
}

/* Appends {field: w} to *list for each write of member @p i of @p delta. */
static sst_value *push_writes(sst_value *list, const sst_value *delta, size_t i, sst_error *err) {
    const sst_value *k = sst_object_key_at(delta, i);
    const sst_value *v = sst_object_value_at(delta, i);
    const sst_value *writes = sst_object_len(v) == 1 ? sst_object_get(v, SST_WRITES_KEY) : NULL;
    size_t n = sst_is_array(writes) ? sst_array_len(writes) : 1;
    for (size_t j = 0; j < n && list != NULL; j++) {
        const sst_value *w = sst_is_array(writes) ? sst_array_get(writes, j) : v;
        sst_value *one = sst_object_setv_take(sst_object_empty(), k, sst_value_ref(w), err);
        list = one != NULL ? sst_array_push_take(list, one, err) : (sst_value_unref(list), NULL);
    }
    return list;
}

sst_value *sst__graph_public_update(const sst_value *delta, sst_error *err) {
    sst_value *pub = sst__graph_public_state(delta, err);
    bool repeated = false;
    for (size_t i = 0; pub != NULL && i < sst_object_len(pub) && !repeated; i++) {
        const sst_value *v = sst_object_value_at(pub, i);
        repeated = sst_object_len(v) == 1 && sst_is_array(sst_object_get(v, SST_WRITES_KEY));
    }
    if (!repeated) {
        return pub;
    }
    /* A field written more than once: one {field: value} per write (LangGraph's updates). */
    sst_value *list = sst_array_empty();
    for (size_t i = 0; list != NULL && i < sst_object_len(pub); i++) {
        list = push_writes(list, pub, i, err);
    }
    sst_value_unref(pub);
    return list;
}
