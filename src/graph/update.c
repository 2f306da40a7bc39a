/* SPDX-License-Identifier: MIT */
/*
 * update_state and bulk_update_state, with LangGraph's semantics:
 *
 * - Each superstep of updates writes one checkpoint (source "update") on top
 *   of the one the thread is at. Every update of it applies as if its node
 *   had returned the values, in order. The new next tasks are the nodes'
 *   routing plus the waiting tasks whose trigger persists until they run
 *   (a join's target, a deferred node), except the nodes the updates stand
 *   for (they count as run). Tasks triggered by edges and routers are
 *   dropped unless the updated nodes' routing triggers them again (the node
 *   an interrupt_before stopped at is the usual case), and waiting Sends are
 *   replaced, as LangGraph's branch channels and task topic are.
 * - Without as_node, the node that wrote in the last superstep (ambiguous
 *   when several did); on a checkpoint no node wrote, the values only.
 * - as_node "__start__": START's routing; "__input__": a new input (the next
 *   invoke runs it from START); "__copy__": a copy of the checkpoint beside
 *   it (same parent, source "fork"); END: no next tasks.
 * - A thread stopped by interrupt_before stays past that stop: the next
 *   invoke runs the node instead of stopping before it again.
 */
#include <string.h>

#include "graph_invoke.h"
#include "superstep/functional.h"
#include "values/build.h"

#define AS_COPY  "__copy__"
#define AS_INPUT "__input__"

/* The as_node of an update: NULL when absent or null. */
static const char *name_of(const sst_value *as_node) {
    return sst_is_string(as_node) ? sst_string_cstr(as_node) : NULL;
}

/* How one superstep of updates changes the thread (filled by plan_superstep). */
typedef struct plan {
    sst_value *state;   /* owned: the state after the updates */
    sst_value *group;   /* owned: the prepared deltas in order */
    sst_value *targets; /* owned: node names and Sends for next */
    sst_value *wmeta;   /* owned: {node: values} for the metadata */
    sst_value *list;    /* owned: [{as_node, values}] in order (metadata writes.__updates__) */
    bool routed;        /* some update named a node (else the old next stays) */
    bool end;           /* as_node END: no next tasks */
} plan;

static void plan_free(plan *p) {
    sst_value_unref(p->state);
    sst_value_unref(p->group);
    sst_value_unref(p->targets);
    sst_value_unref(p->wmeta);
    sst_value_unref(p->list);
}

/*
 * The node of one update: @p as_node, else the one node that wrote in the
 * last superstep (SIZE_MAX when none did: values only), else ambiguous.
 */
static sst_code infer_node(const sst_compiled_graph *cg, const sst_value *rec, const char *as_node,
                           size_t *node, sst_error *err) {
    if (as_node != NULL) {
        *node = sst__graph_find(cg->g, as_node);
        return *node != SIZE_MAX
                   ? SST_OK
                   : sst__error(err, SST_EINVAL, "update_state: unknown node '%s'", as_node);
    }
    const sst_value *w = sst_object_get(sst_object_get(rec, "metadata"), "writes");
    size_t writers = 0;
    sst__buf names;
    sst__buf_init(&names);
    *node = SIZE_MAX; /* values only: the next tasks stay as they are */
    for (size_t i = 0; i < sst_object_len(w); i++) {
        const char *n = sst_string_cstr(sst_object_key_at(w, i));
        if (strcmp(n, SST_START) == 0 || sst__graph_find(cg->g, n) == SIZE_MAX) {
            continue;
        }
        sst__buf_printf(&names, "%s'%s'", writers ? ", " : "", n);
        *node = sst__graph_find(cg->g, n);
        writers++;
    }
    sst_code rc = SST_OK;
    if (writers > 1) {
        rc = sst__error(err, SST_EINVAL,
                        "update_state: ambiguous: the last superstep ran %.*s; pass as_node",
                        (int)names.len, names.data != NULL ? names.data : "");
    }
    sst__buf_free(&names);
    return rc;
}

/* Appends the routing of @p node on @p state to p->targets. */
static sst_code route(const sst_compiled_graph *cg, size_t node, const sst_value *state, plan *p,
                      sst_error *err) {
    sst_value *t = NULL;
    sst_code rc = node == SIZE_MAX ? sst__start_routing(cg, state, &t, err)
                                   : sst__route_as(cg, node, state, &t, err);
    if (rc == SST_OK) {
        p->targets = sst_array_concat_take(p->targets, t, err);
        rc = p->targets != NULL ? SST_OK : sst__code(err);
    }
    sst_value_unref(t);
    return rc;
}

/* Applies one update {values, as_node} of a superstep to @p p. */
static sst_code plan_update(const sst_compiled_graph *cg, const sst_value *rec,
                            const sst_value *values, const char *as_node, const sst_value *go,
                            plan *p, sst_error *err) {
    bool start = as_node != NULL && strcmp(as_node, SST_START) == 0;
    bool end = as_node != NULL && strcmp(as_node, SST_END) == 0;
    size_t node = SIZE_MAX;
    sst_code rc = start || end ? SST_OK : infer_node(cg, rec, as_node, &node, err);
    if (rc != SST_OK) {
        return rc;
    }
    if (values != NULL && !sst_is_null(values)) {
        sst_value *given = sst_value_ref(values);
        const sst_value *root = sst_object_get(values, SST_ROOT);
        if (cg->g->entrypoint && root != NULL &&
            sst_object_get(values, SST_ENTRY_PREVIOUS) == NULL) {
            /* As LangGraph's: an entrypoint's update is both its value and its previous. */
            given = sst__set_take(given, SST_ENTRY_PREVIOUS, sst_value_ref(root), err);
        }
        sst_value *prepared =
            given != NULL ? sst_schema_prepare_delta(cg->schema, given, err) : NULL;
        const sst_value *deltas[] = {prepared};
        p->state = prepared != NULL ? sst_schema_apply(cg->schema, p->state, deltas, 1, err)
                                    : (sst_value_unref(p->state), NULL);
        p->group = sst__push_take(p->group, prepared, err);
        if (p->state == NULL || p->group == NULL) {
            return sst__code(err);
        }
    }
    const char *name = start              ? SST_START
                       : end              ? SST_END
                       : node != SIZE_MAX ? cg->g->nodes[node].name
                                          : "__update__";
    const sst_value *shown = values != NULL ? values : sst_null();
    p->wmeta = sst__set_take(p->wmeta, name, sst_value_ref(shown), err);
    sst_value *entry = sst__set_take(sst_object_empty(), "as_node", sst_string_new(name, err), err);
    entry = sst__set_take(entry, "values", sst_value_ref(shown), err);
    p->list = sst__push_take(p->list, entry, err);
    if (p->wmeta == NULL || p->list == NULL) {
        return sst__code(err);
    }
    p->end = p->end || end;
    if (go != NULL) { /* a Command's goto replaces the node's routing, as a node's does */
        p->routed = true;
        return sst__command_targets(cg, go, &p->targets, err);
    }
    if (end || (!start && node == SIZE_MAX)) {
        return SST_OK;
    }
    p->routed = true;
    sst_value *view = sst__router_extra(cg, sst_value_ref(p->state), values, err);
    rc = view != NULL ? route(cg, start ? SIZE_MAX : node, view, p, err) : sst__code(err);
    sst_value_unref(view);
    return rc;
}

/* True when a trigger of @p name persists until it runs: a join's target or a deferred node. */
static bool waits_until_run(const sst_compiled_graph *cg, const char *name) {
    size_t node = sst__graph_find(cg->g, name);
    if (node != SIZE_MAX && cg->g->nodes[node].defer) {
        return true;
    }
    for (size_t j = 0; j < cg->g->n_joins; j++) {
        if (strcmp(cg->g->joins[j].to, name) == 0) {
            return true;
        }
    }
    return false;
}

/* next after the updates: the routing plus the join targets that wait. */
static sst_value *next_of(const sst_compiled_graph *cg, const sst_value *rec, plan *p, int64_t step,
                          sst_error *err) {
    const sst_value *old = sst_object_get(rec, "next");
    if (p->end) {
        return sst_null();
    }
    if (!p->routed) {
        return sst_array_len(sst_object_get(old, "tasks")) > 0
                   ? sst__set_take(sst_value_ref(old), "superstep", sst_int_new(step, err), err)
                   : sst_null();
    }
    const sst_value *tasks = sst_object_get(old, "tasks");
    for (size_t i = 0; i < sst_array_len(tasks) && p->targets != NULL; i++) {
        const sst_value *tk = sst_array_get(tasks, i);
        const sst_value *vertex = sst_object_get(tk, "vertex");
        /* A join's target stays (its barrier keeps the arrivals), unless the updates
         * stand for it; edge and router triggers are the updated nodes' to make again,
         * as LangGraph's branch channels are; waiting Sends are replaced. */
        if (sst_object_get(tk, "send") == NULL && waits_until_run(cg, sst_string_cstr(vertex)) &&
            sst_object_get(p->wmeta, sst_string_cstr(vertex)) == NULL) {
            p->targets =
                sst_array_push_take(p->targets, sst_value_ref(sst_object_get(tk, "vertex")), err);
        }
    }
    if (p->targets == NULL) {
        return NULL;
    }
    sst_value *next = sst__start_point(cg, (uint64_t)step, p->targets, err);
    if (next != NULL && sst_array_len(sst_object_get(next, "tasks")) == 0) {
        sst_value_unref(next);
        return sst_null();
    }
    return next;
}

/* Keeps the thread past an interrupt_before stop on the checkpoint just written. */
static sst_code keep_skip_before(sst_graph_thread *t, sst_error *err) {
    sst_value *w = sst__set_take(sst_object_empty(), "skip_before", sst_bool(true), err);
    if (w == NULL) {
        return sst__code(err);
    }
    sst_payload pl = {.value = w};
    sst_code rc = sst_checkpointer_put_writes(t->cp, t->thread_id, t->ns, t->last_id, &pl,
                                              SST_THREAD_INTERRUPTED, false, err);
    sst_value_unref(w);
    return rc;
}

/*
 * The writes of the tasks that succeeded in a superstep that did not commit
 * (an interrupt or a failure) go in first, as LangGraph applies a checkpoint's
 * pending writes before an update.
 */
static sst_code apply_pending(const sst_compiled_graph *cg, const sst_value *rec, plan *p,
                              sst_error *err) {
    const sst_value *pending = sst_object_get(sst_object_get(rec, "writes"), "pending");
    for (size_t i = 0; i < sst_array_len(pending); i++) {
        const sst_value *d = sst_object_get(sst_array_get(pending, i), "delta");
        if (sst_object_len(d) == 0) {
            continue;
        }
        const sst_value *deltas[] = {d};
        p->state = sst_schema_apply(cg->schema, p->state, deltas, 1, err);
        p->group = sst__push_take(p->group, sst_value_ref(d), err);
        if (p->state == NULL || p->group == NULL) {
            return sst__code(err);
        }
    }
    return SST_OK;
}

/* One superstep of @p updates (a list of {values, as_node}) on the thread's checkpoint. */
static sst_code update_superstep(sst_graph_thread *t, const sst_value *updates, sst_error *err) {
    const sst_compiled_graph *cg = t->cg;
    /* A thread with no checkpoint yet: the updates start it. */
    sst_value *rec = t->last_id != NULL ? sst__record_get(t, t->last_id, err) : sst_object_empty();
    if (rec == NULL) {
        return sst__code(err);
    }
    bool skip_before = sst_bool_value(sst_object_get(sst_object_get(rec, "writes"), "skip_before"));
    plan p = {.state = sst_value_ref(t->state),
              .group = sst_array_empty(),
              .targets = sst_array_empty(),
              .wmeta = sst_object_empty(),
              .list = sst_array_empty()};
    sst_code rc = p.state != NULL && p.wmeta != NULL ? SST_OK : sst__enomem(err);
    rc = rc == SST_OK ? apply_pending(cg, rec, &p, err) : rc;
    for (size_t i = 0; i < sst_array_len(updates) && rc == SST_OK; i++) {
        const sst_value *u = sst_array_get(updates, i);
        rc = plan_update(cg, rec, sst_object_get(u, "values"),
                         name_of(sst_object_get(u, "as_node")), sst_object_get(u, "goto"), &p, err);
    }
    int64_t step = t->last_step + 1;
    sst_value *next = rc == SST_OK ? next_of(cg, rec, &p, step, err) : NULL;
    rc = rc == SST_OK && next == NULL ? sst__code(err) : rc;
    rc = rc == SST_OK ? sst__name_run(t, err) : rc;
    if (rc == SST_OK) {
        sst_value *groups = sst__push_take(sst_array_empty(), sst_value_ref(p.group), err);
        p.wmeta = sst__set_take(p.wmeta, "__updates__", sst_value_ref(p.list), err);
        rc = groups != NULL && p.wmeta != NULL
                 ? sst__persist_put(t, step, "update", p.state, groups, next, p.wmeta, NULL, err)
                 : sst__code(err);
        sst_value_unref(groups);
    }
    if (rc == SST_OK && skip_before && !sst_is_null(next)) {
        rc = keep_skip_before(t, err);
    }
    if (rc == SST_OK) {
        sst_value_unref(t->state);
        t->state = sst_value_ref(p.state);
    }
    sst_value_unref(next);
    sst_value_unref(rec);
    plan_free(&p);
    return rc;
}

/* as_node "__copy__": the checkpoint again beside itself (same parent), source "fork". */
static sst_code copy_checkpoint(sst_graph_thread *t, sst_error *err) {
    if (t->last_id == NULL) {
        return sst__error(err, SST_ENOTFOUND, "update_state: thread '%s' has no checkpoint to copy",
                          t->thread_id);
    }
    sst_value *rec = sst__record_get(t, t->last_id, err);
    if (rec == NULL) {
        return sst__code(err);
    }
    const sst_value *parent = sst_object_get(rec, "parent");
    sst_code rc = sst__persist_rebase(t, sst_is_string(parent) ? sst_string_cstr(parent) : NULL,
                                      (int64_t)sst_int_value(sst_object_get(rec, "step")) - 1, err);
    rc = rc == SST_OK ? sst__name_run(t, err) : rc;
    if (rc == SST_OK) {
        /* The same tasks, asked afresh: no stored resume values or pending writes. */
        const sst_value *old = sst_object_get(rec, "next");
        sst_value *next = NULL;
        if (sst_array_len(sst_object_get(old, "tasks")) > 0) {
            next = sst__asked_afresh(old, false, err);
            rc = next != NULL ? SST_OK : sst__code(err);
        }
        sst_value *groups = sst_array_empty();
        if (rc == SST_OK) {
            rc = sst__persist_put(
                t, sst_int_value(sst_object_get(rec, "step")), "fork", t->state, groups, next,
                sst_object_get(sst_object_get(rec, "metadata"), "writes"), NULL, err);
        }
        sst_value_unref(groups);
        sst_value_unref(next);
    }
    sst_value_unref(rec);
    return rc;
}

/* as_node "__input__": an input checkpoint with @p values as the input; invoke runs it. */
static sst_code input_checkpoint(sst_graph_thread *t, const sst_value *values, sst_error *err) {
    sst_value *meta = sst__set_take(sst_object_empty(), SST_START,
                                    sst_value_ref(values != NULL ? values : sst_null()), err);
    sst_code rc = meta != NULL ? sst__name_run(t, err) : sst__code(err);
    if (rc == SST_OK) {
        sst_value *groups = sst_array_empty();
        rc =
            sst__persist_put(t, t->last_step + 1, "input", t->state, groups, NULL, meta, NULL, err);
        sst_value_unref(groups);
    }
    sst_value_unref(meta);
    return rc;
}

/* One superstep: the special as_node values, else update_superstep. */
static sst_code apply_superstep(sst_graph_thread *t, const sst_value *updates, sst_error *err) {
    if (!sst_is_array(updates) || sst_array_len(updates) == 0) {
        return sst__error(err, SST_EINVAL,
                          "bulk_update_state: No updates provided (each superstep is a "
                          "non-empty list of updates)");
    }
    for (size_t i = 0; i < sst_array_len(updates); i++) {
        const sst_value *u = sst_array_get(updates, i);
        const sst_value *as = sst_object_get(u, "as_node");
        const sst_value *v = sst_object_get(u, "values");
        if (!sst_is_object(u) || (as != NULL && !sst_is_null(as) && !sst_is_string(as)) ||
            (v != NULL && !sst_is_null(v) && !sst_is_object(v))) {
            return sst__error(err, SST_ETYPE,
                              "update_state: an update is {values = object or null, as_node = "
                              "name}, got %s",
                              sst_type_name(sst_value_type(u)));
        }
        const char *name = name_of(as);
        bool special = name != NULL && (strcmp(name, AS_COPY) == 0 || strcmp(name, AS_INPUT) == 0);
        if (special && sst_array_len(updates) > 1) {
            return sst__error(err, SST_EINVAL,
                              "update_state: as_node '%s' must be the only update of its superstep",
                              name);
        }
        if (special) {
            return strcmp(name, AS_COPY) == 0 ? copy_checkpoint(t, err)
                                              : input_checkpoint(t, v, err);
        }
    }
    return update_superstep(t, updates, err);
}

sst_code sst_graph_bulk_update_state(sst_graph_thread *t, const char *checkpoint_id,
                                     const sst_value *supersteps, sst_error *err) {
    if (t == NULL || t->cp == NULL) {
        return sst__error(err, SST_EINVAL,
                          "update_state: not a durable thread (open it with a checkpointer)");
    }
    if (!sst_is_array(supersteps) || sst_array_len(supersteps) == 0) {
        return sst__error(err, SST_EINVAL,
                          "bulk_update_state: No supersteps provided (a non-empty list of "
                          "lists of updates)");
    }
    if (atomic_exchange(&t->busy, true)) {
        return sst__error(err, SST_EBUSY, "update_state: the thread is busy with another call");
    }
    sst_code rc = sst_checkpointer_lock(t->cp, t->thread_id, false, err);
    if (rc != SST_OK) {
        atomic_store(&t->busy, false);
        return rc;
    }
    rc = sst__persist_load(t, checkpoint_id, err);
    for (size_t i = 0; i < sst_array_len(supersteps) && rc == SST_OK; i++) {
        rc = apply_superstep(t, sst_array_get(supersteps, i), err);
    }
    sst_checkpointer_unlock(t->cp, t->thread_id);
    atomic_store(&t->busy, false);
    return rc;
}

/* One superstep [{values, as_node}] (new reference), or NULL. */
static sst_value *one_update(const sst_value *values, const char *as_node, sst_error *err) {
    sst_value *u = sst__set_take(sst_object_empty(), "values",
                                 sst_value_ref(values != NULL ? values : sst_null()), err);
    if (as_node != NULL) {
        u = sst__set_take(u, "as_node", sst_string_new(as_node, err), err);
    }
    return sst__push_take(sst_array_empty(), u, err);
}

sst_code sst_graph_update_state(sst_graph_thread *t, const char *checkpoint_id,
                                const sst_value *values, const char *as_node, sst_error *err) {
    bool list = sst_is_array(values);
    if (values != NULL && !sst_is_null(values) && !sst_is_object(values) && !list) {
        return sst__error(err, SST_ETYPE,
                          "update_state: values must be an object or a list of updates, got %s",
                          sst_type_name(sst_value_type(values)));
    }
    sst_value *all = sst_array_empty();
    if (list && as_node != NULL && strcmp(as_node, AS_COPY) == 0) {
        /* A copy, then the updates on it (LangGraph's values=[StateUpdate...], as_node=__copy__).
         */
        all = sst__push_take(all, one_update(NULL, AS_COPY, err), err);
        all = sst__push_take(all, sst_value_ref(values), err);
    } else if (list) {
        all = sst__push_take(all, sst_value_ref(values), err); /* the updates of one superstep */
    } else {
        all = sst__push_take(all, one_update(values, as_node, err), err);
    }
    sst_code rc =
        all != NULL ? sst_graph_bulk_update_state(t, checkpoint_id, all, err) : sst__code(err);
    sst_value_unref(all);
    return rc;
}
