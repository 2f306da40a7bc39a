/* SPDX-License-Identifier: MIT */
/* Helpers on checkpoint records shared by the savers. */
#include "checkpoint_int.h"

bool sst__metadata_matches(const sst_value *metadata, const sst_value *filter) {
    for (size_t i = 0; i < sst_object_len(filter); i++) {
        const sst_value *k = sst_object_key_at(filter, i);
        const sst_value *v = sst_object_getn(metadata, sst_string_cstr(k), sst_string_len(k));
        if (v == NULL || !sst_value_equal(v, sst_object_value_at(filter, i))) {
            return false;
        }
    }
    return true;
}

sst_value *sst__record_header(const sst_value *record, sst_error *err) {
    sst_value *h = sst_object_remove_take(sst_value_ref(record), "body", err);
    h = h != NULL ? sst_object_remove_take(h, "next", err) : NULL;
    return h != NULL ? sst_object_remove_take(h, "writes", err) : NULL;
}
