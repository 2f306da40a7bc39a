/* SPDX-License-Identifier: MIT */
/*
 * The tasks of a resume point and their pending writes: the id of a task
 * entry ({"vertex", "send"?, "input"?}), the pending write of a task, and a
 * state with the pending writes of the tasks that succeeded applied (what
 * LangGraph shows for a superstep that did not commit).
 */
#include <string.h>

#include "graph_int.h"
#include "values/build.h"

void sst__entry_task_id(const char *run_key, uint64_t superstep, const sst_value *entry,
                        char out[33]) {
    const sst_value *send = sst_object_get(entry, "send");
    sst_task_id_of(run_key, superstep, send != NULL ? (uint64_t)sst_int_value(send) : UINT64_MAX,
                   sst_string_cstr(sst_object_get(entry, "vertex")), out);
}

const sst_value *sst__pending_of(const sst_value *pending, const char *task_id) {
    for (size_t i = 0; i < sst_array_len(pending); i++) {
        const char *t = sst_string_cstr(sst_object_get(sst_array_get(pending, i), "task"));
        if (t != NULL && strcmp(t, task_id) == 0) {
            return sst_array_get(pending, i);
        }
    }
    return NULL;
}

sst_value *sst__asked_afresh(const sst_value *rp, bool keep_pending, sst_error *err) {
    sst_value *n = sst__set_take(sst_value_ref(rp), "resume", sst_object_empty(), err);
    return keep_pending ? n : sst__set_take(n, "pending", sst_array_empty(), err);
}

sst_value *sst__with_pending(const sst_compiled_graph *cg, sst_value *state,
                             const sst_value *pending, sst_error *err) {
    size_t n = sst_array_len(pending);
    if (n == 0 || state == NULL) {
        return state;
    }
    const sst_value **deltas = sst__calloc(n, sizeof *deltas);
    if (deltas == NULL) {
        sst_value_unref(state);
        sst__enomem(err);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        deltas[i] = sst_object_get(sst_array_get(pending, i), "delta");
    }
    sst_value *out = sst_schema_apply(cg->schema, state, deltas, n, err);
    sst__free(deltas);
    return out;
}
