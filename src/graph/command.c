/* SPDX-License-Identifier: MIT */
/*
 * Command{update, goto} as the input of an invoke (with or without resume),
 * as LangGraph applies it: the update goes into the state through the
 * reducers and the goto targets join the tasks of the superstep that runs
 * next, the interrupted tasks among them. On a durable thread the changed
 * state and tasks are written first, as a checkpoint (source "update") that
 * keeps the pending interrupts and writes, so a crash before the next
 * superstep commits loses nothing and the resume still answers them.
 */
#include <string.h>

#include "graph_node.h"
#include "values/build.h"

/* The targets of @p resume_point's tasks plus @p go (checked): names, then Sends. */
static sst_value *targets_with(const sst_compiled_graph *cg, const sst_value *resume_point,
                               const sst_value *go, sst_error *err) {
    sst_value *targets = sst_array_empty();
    const sst_value *tasks = sst_object_get(resume_point, "tasks");
    /* Old Sends first, in order: their indexes (and task ids) stay the same. */
    for (size_t i = 0; i < sst_array_len(tasks) && targets != NULL; i++) {
        const sst_value *tk = sst_array_get(tasks, i);
        const sst_value *vertex = sst_object_get(tk, "vertex");
        if (sst_object_get(tk, "send") == NULL) {
            targets = sst__push_take(targets, sst_value_ref(vertex), err);
            continue;
        }
        sst_value *s = sst__set_take(sst_object_empty(), "__send__", sst_value_ref(vertex), err);
        const sst_value *arg = sst_object_get(tk, "input");
        s = sst__set_take(s, "arg", sst_value_ref(arg != NULL ? arg : sst_null()), err);
        targets = sst__push_take(targets, s, err);
    }
    if (targets != NULL && go != NULL &&
        sst__route_result(cg, NULL, "Command input", go, &targets, err) != SST_OK) {
        sst_value_unref(targets);
        return NULL;
    }
    return targets;
}

/* The resume point with @p go's tasks added; its resume values and pending writes kept. */
static sst_value *resume_point_with(const sst_compiled_graph *cg, const sst_value *rp,
                                    const sst_value *go, sst_error *err) {
    if (go == NULL) {
        return sst_value_ref(rp);
    }
    sst_value *targets = targets_with(cg, rp, go, err);
    if (targets == NULL) {
        return NULL;
    }
    sst_value *n = sst__start_point(cg, (uint64_t)sst_int_value(sst_object_get(rp, "superstep")),
                                    targets, err);
    sst_value_unref(targets);
    const sst_value *resume = sst_object_get(rp, "resume");
    const sst_value *pending = sst_object_get(rp, "pending");
    n = sst__set_take(n, "resume", sst_value_ref(resume != NULL ? resume : sst_object_empty()),
                      err);
    return sst__set_take(n, "pending", sst_value_ref(pending != NULL ? pending : sst_array_empty()),
                         err);
}

/* Writes the changed state and tasks as a checkpoint, with the thread's pending writes. */
static sst_code persist_command(sst_graph_thread *th, const sst_value *prepared,
                                const sst_invoke_opts *o, sst_error *err) {
    sst_value *group = prepared != NULL
                           ? sst__push_take(sst_array_empty(), sst_value_ref(prepared), err)
                           : sst_array_empty(); /* a goto alone changes no field */
    sst_value *groups = sst__push_take(sst_array_empty(), group, err);
    sst_value *meta = sst__set_take(sst_object_empty(), "__command__",
                                    sst_value_ref(prepared != NULL ? prepared : sst_null()), err);
    sst_code rc = groups != NULL && meta != NULL
                      ? sst__persist_put(th, th->last_step, "update", th->state, groups,
                                         th->resume_point, meta, o, err)
                      : sst__code(err);
    sst_value_unref(groups);
    sst_value_unref(meta);
    if (rc != SST_OK) {
        return rc;
    }
    /* The pending interrupts and writes stay on the new checkpoint (in its namespace:
     * the root's writer used to put them under "" whatever the thread's). */
    return sst__persist_writes(th, th->resume_point, th->pending, th->skip_before, NULL, false,
                               err);
}

sst_code sst__apply_command(const sst_compiled_graph *cg, sst_graph_thread *th,
                            const sst_invoke_opts *o, bool durable, sst_error *err) {
    sst_value *prepared = NULL;
    sst_value *state = sst_value_ref(th->state);
    if (o->update != NULL) {
        prepared = sst_schema_prepare_delta(cg->schema, sst_value_ref(o->update), err);
        const sst_value *deltas[] = {prepared};
        state = prepared != NULL ? sst_schema_apply(cg->schema, state, deltas, 1, err)
                                 : (sst_value_unref(state), NULL);
        if (state == NULL) {
            sst_value_unref(prepared);
            sst__error_prefix(err, "Command update");
            return sst__code(err);
        }
    }
    sst_value *rp = resume_point_with(cg, th->resume_point, o->goto_targets, err);
    if (rp == NULL) {
        sst_value_unref(state);
        sst_value_unref(prepared);
        return sst__code(err);
    }
    sst_value_unref(th->resume_point);
    th->resume_point = rp;
    sst_value_unref(th->state);
    th->state = state;
    sst_code rc = durable ? persist_command(th, prepared, o, err) : SST_OK;
    sst_value_unref(prepared);
    return rc;
}

sst_code sst__command_targets(const sst_compiled_graph *cg, const sst_value *go,
                              sst_value **targets, sst_error *err) {
    return go == NULL ? SST_OK : sst__route_result(cg, NULL, "Command input", go, targets, err);
}
