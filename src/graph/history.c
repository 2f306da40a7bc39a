/* SPDX-License-Identifier: MIT */
/*
 * Paging through a thread's history: a page of checkpoints with what each
 * one changed, so a long history can be printed in constant memory (the
 * `superstep history` command) instead of as one array of whole states.
 */
#include <string.h>

#include "graph_persist.h"
#include "values/build.h"

/*
 * When @p old is a prefix of @p now (both arrays): true with *tail the
 * appended elements (new; NULL when out of memory, err filled). Else false.
 */
static bool appended(const sst_value *old, const sst_value *now, sst_value **tail, sst_error *err) {
    size_t n = sst_array_len(old), m = sst_array_len(now);
    *tail = NULL;
    if (!sst_is_array(old) || !sst_is_array(now) || n > m) {
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        const sst_value *a = sst_array_get(old, i), *b = sst_array_get(now, i);
        if (a != b && !sst_value_equal(a, b)) {
            return false;
        }
    }
    *tail = sst_array_empty();
    for (size_t i = n; i < m && *tail != NULL; i++) {
        *tail = sst_array_push_take(*tail, sst_value_ref(sst_array_get(now, i)), err);
    }
    return true;
}

/* The fields of @p now that differ from @p old: an appended tail for grown lists. */
static sst_value *changes(const sst_value *old, const sst_value *now, sst_error *err) {
    sst_value *out = sst_object_empty();
    for (size_t i = 0; i < sst_object_len(now) && out != NULL; i++) {
        const sst_value *key = sst_object_key_at(now, i), *v = sst_object_value_at(now, i);
        const sst_value *was = sst_object_getn(old, sst_string_cstr(key), sst_string_len(key));
        if (was == v || (was != NULL && sst_value_equal(was, v))) {
            continue;
        }
        sst_value *tail;
        bool grown = appended(was, v, &tail, err);
        out = grown && tail == NULL
                  ? (sst_value_unref(out), NULL)
                  : sst__setv_take(out, key, grown ? tail : sst_value_ref(v), err);
    }
    return out;
}

/* What checkpoint @p rec changed: its stored deltas, or a diff with its parent's state. */
static sst_value *updates_of(sst_graph_thread *t, const sst_value *rec, sst_error *err) {
    const sst_value *kind = sst_object_get(rec, "kind");
    if (!sst_is_string(kind) || strcmp(sst_string_cstr(kind), "snapshot") != 0) {
        sst_value *flat = sst_array_empty(); /* groups of updates, one group per superstep */
        const sst_value *groups = sst_object_get(rec, "body");
        for (size_t g = 0; g < sst_array_len(groups) && flat != NULL; g++) {
            const sst_value *group = sst_array_get(groups, g);
            for (size_t k = 0; k < sst_array_len(group) && flat != NULL; k++) {
                const sst_value *d = sst_array_get(group, k);
                flat = sst_object_len(d) > 0 ? sst_array_push_take(flat, sst_value_ref(d), err)
                                             : flat; /* a task that wrote nothing */
            }
        }
        return flat;
    }
    const sst_value *pid = sst_object_get(rec, "parent");
    sst_value *parent = sst_is_string(pid) ? sst__record_get(t, sst_string_cstr(pid), err) : NULL;
    sst_value *old = parent != NULL ? sst__persist_materialize(t, parent, err) : NULL;
    if (sst_is_string(pid) && old == NULL) { /* the parent could not be read: no diff */
        sst_value_unref(parent);
        return NULL;
    }
    sst_value *now = (parent != NULL || !sst_is_string(pid))
                         ? sst__graph_public_state(sst_object_get(rec, "body"), err)
                         : NULL;
    sst_value *oldp = old != NULL ? sst__graph_public_state(old, err) : sst_object_empty();
    sst_value *out = now != NULL && oldp != NULL ? changes(oldp, now, err) : NULL;
    sst_value *one = out != NULL ? sst_array_push_take(sst_array_empty(), out, err) : NULL;
    sst_value_unref(parent);
    sst_value_unref(old);
    sst_value_unref(oldp);
    sst_value_unref(now);
    return one;
}

static sst_value *entry_of(sst_graph_thread *t, const sst_value *head, bool values,
                           sst_error *err) {
    const char *id = sst_string_cstr(sst_object_get(head, "id"));
    if (values) {
        return sst_graph_get_state(t, id, err);
    }
    sst_value *rec = sst__record_get(t, id, err);
    sst_value *upd = rec != NULL ? updates_of(t, rec, err) : NULL;
    sst_value *e = upd != NULL ? sst_object_empty() : NULL;
    e = sst__set_take(e, "checkpoint_id", sst_value_ref(sst_object_get(head, "id")), err);
    e = sst__set_take(e, "parent_id", sst_value_ref(sst_object_get(head, "parent")), err);
    e = sst__set_take(e, "step", sst_value_ref(sst_object_get(head, "step")), err);
    e = sst__set_take(e, "metadata", sst_value_ref(sst_object_get(head, "metadata")), err);
    e = sst__set_take(e, "updates", upd, err);
    sst_value_unref(rec);
    return e;
}

sst_value *sst_graph_history_page(sst_graph_thread *t, const sst_value *filter, const char *before,
                                  size_t limit, bool values, sst_error *err) {
    if (t == NULL || t->cp == NULL) {
        sst__error(err, SST_EINVAL, "history: not a durable thread (open it with a checkpointer)");
        return NULL;
    }
    sst_value *heads = sst__record_list(t, filter, before, limit > 0 ? limit : 100, err);
    if (heads != NULL && values) { /* whole snapshots, their tasks' results from the newer */
        sst_value *snaps = sst__snapshots_of(t, heads, before, err);
        sst_value_unref(heads);
        return snaps;
    }
    sst_value *out = heads != NULL ? sst_array_empty() : NULL;
    for (size_t i = 0; i < sst_array_len(heads) && out != NULL; i++) {
        sst_value *e = entry_of(t, sst_array_get(heads, i), values, err);
        out = e != NULL ? sst_array_push_take(out, e, err) : (sst_value_unref(out), NULL);
    }
    sst_value_unref(heads);
    return out;
}
