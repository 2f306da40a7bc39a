/* SPDX-License-Identifier: MIT */
/*
 * LangGraph's StateSnapshot from a stored record: values, next, config,
 * metadata, created_at, parent_config, tasks and interrupts.
 *
 * - tasks[i] = {id, name, path, interrupts, error?, result?}: the ids are
 *   the engine's task ids; a task's result is its pending write (a task that
 *   succeeded in a superstep that did not commit) or, in the history, its
 *   delta in the child checkpoint that committed the superstep.
 * - At the head (no checkpoint id asked for), successful pending writes are
 *   applied to values and their tasks leave next, as LangGraph does.
 * - The input checkpoint has next ["__start__"] and a __start__ task whose
 *   result is the input.
 * - interrupts lists the interrupt() calls ({id, value}); interrupt_before
 *   and interrupt_after stops are not interrupts (LangGraph's shape).
 * - pending_writes is LangGraph's CheckpointTuple.pending_writes: [task_id,
 *   channel, value] triples, the failed task's as [id, "__error__", message].
 * - The older keys checkpoint_id, parent_id and step stay.
 * - parent_config and created_at are left out when there are none.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "checkpoint/checkpoint_int.h"
#include "graph_persist.h"
#include "values/build.h"

static sst_value *str(const char *s, sst_error *err) {
    return s != NULL ? sst_string_new(s, err) : sst_null();
}

/* {"configurable": {"thread_id", "checkpoint_ns", "checkpoint_id"}} */
static sst_value *config_of(const char *thread_id, const char *ns, const sst_value *id,
                            const sst_value *parents, sst_error *err) {
    if (!sst_is_string(id)) {
        return sst_null();
    }
    sst_value *c = sst__set_take(sst_object_empty(), "thread_id", str(thread_id, err), err);
    c = sst__set_take(c, "checkpoint_ns", str(ns != NULL ? ns : "", err), err);
    c = sst__set_take(c, "checkpoint_id", sst_value_ref(id), err);
    if (ns != NULL && ns[0] != '\0' && parents != NULL) {
        /* A subgraph's: its ancestors' checkpoints and its own (LangGraph's checkpoint_map). */
        sst_value *map = sst_is_object(parents) ? sst_value_ref(parents) : sst_object_empty();
        c = sst__set_take(c, "checkpoint_map", sst__set_take(map, ns, sst_value_ref(id), err), err);
    }
    return sst__set_take(sst_object_empty(), "configurable", c, err);
}

/*
 * ISO 8601 with microseconds and +00:00, as Python's datetime.isoformat().
 * Times are kept in milliseconds; the microseconds are the counter of the
 * checkpoint's time-ordered id @p id (when it was made in that millisecond),
 * so checkpoints made in one millisecond still sort in creation order.
 */
static sst_value *iso_time(const sst_value *ms_v, const sst_value *id, sst_error *err) {
    if (!sst_is_int(ms_v) || sst_int_value(ms_v) <= 0) {
        return sst_null(); /* records written before created_at was kept */
    }
    int64_t ms = sst_int_value(ms_v);
    time_t secs = (time_t)(ms / 1000);
    struct tm tm;
    if (gmtime_r(&secs, &tm) == NULL) {
        return sst_null();
    }
    uint64_t clock = sst__uuid7_clock(sst_is_string(id) ? sst_string_cstr(id) : NULL);
    int micro = (int)(ms % 1000) * 1000;
    if (clock >> 16 == (uint64_t)ms) {
        uint64_t counter = clock & 0x0fff;
        micro += counter > 999 ? 999 : (int)counter;
    }
    char buf[64];
    snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%06d+00:00", tm.tm_year + 1900,
             tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, micro);
    return sst_string_new(buf, err);
}

/* The metadata as LangGraph shows it: without our "writes", with "parents". */
static sst_value *public_metadata(const sst_value *meta, const sst_value *parents, sst_error *err) {
    sst_value *m = sst_value_ref(sst_is_object(meta) ? meta : sst_object_empty());
    if (sst_object_get(m, "writes") != NULL) {
        m = sst_object_remove_take(m, "writes", err);
    }
    if (m != NULL && sst_object_get(m, "pp") != NULL) {
        m = sst_object_remove_take(m, "pp", err);
    }
    return sst__set_take(m, "parents", sst_value_ref(parents), err);
}

sst_value *sst__parents_of(sst_graph_thread *t, const sst_value *meta, sst_error *err) {
    const sst_value *pp = sst_object_get(meta, "pp");
    const sst_value *full = sst_object_get(meta, "parents"); /* written before "pp" was */
    if (sst_is_object(full)) {
        return sst_value_ref(full);
    }
    if (!sst_is_string(pp) || t->ns == NULL || t->ns[0] == '\0') {
        return sst_object_empty();
    }
    if (t->pp_map != NULL && strcmp(t->pp_id, sst_string_cstr(pp)) == 0) {
        return sst_value_ref(t->pp_map);
    }
    sst_value *map = sst_object_empty();
    size_t len = strlen(t->ns); /* each ancestor's namespace is a prefix of t->ns */
    sst_value *m = sst_value_ref(meta);
    while (map != NULL && len > 0 && sst_is_string(sst_object_get(m, "pp"))) {
        len = sst__parent_ns_len(t->ns, len);
        char *up = sst__strndup(t->ns, len);
        const char *id = sst_string_cstr(sst_object_get(m, "pp"));
        map = up != NULL ? sst__set_take(map, up, sst_string_new(id, err), err)
                         : (sst_value_unref(map), sst__enomem(err), NULL);
        sst_error e;
        sst_error_clear(&e);
        sst_checkpoint *rec =
            map != NULL ? sst_checkpointer_get(t->cp, t->thread_id, up, id, &e) : NULL;
        sst__free(up);
        sst_value_unref(m);
        m = rec != NULL && !sst__payload_empty(&rec->metadata)
                ? sst__payload_parse(&rec->metadata, (size_t)1 << 30, &e)
                : NULL;
        sst_checkpoint_free(rec);
        if (m == NULL) {
            break; /* an ancestor's checkpoint is gone (pruned): the map stops there */
        }
    }
    sst_value_unref(m);
    if (map != NULL && strlen(sst_string_cstr(pp)) < SST__ID_MAX) {
        sst_value_unref(t->pp_map);
        t->pp_map = sst_value_ref(map);
        snprintf(t->pp_id, sizeof t->pp_id, "%s", sst_string_cstr(pp));
    }
    return map;
}

/* The interrupts of task @p id, as {id, value}; NULL for all dynamic ones. */
static sst_value *interrupts_of(const sst_value *raw, const char *id, sst_error *err) {
    sst_value *out = sst_array_empty();
    for (size_t i = 0; i < sst_array_len(raw) && out != NULL; i++) {
        const sst_value *x = sst_array_get(raw, i);
        const char *tid = sst_string_cstr(sst_object_get(x, "task"));
        if (tid == NULL || sst_object_get(x, "when") != NULL ||
            (id != NULL && !sst__interrupt_of_task(x, id))) {
            continue; /* an interrupt_before/after stop, or another task's */
        }
        sst_value *e =
            sst__set_take(sst_object_empty(), "id", sst_value_ref(sst_object_get(x, "id")), err);
        const sst_value *v = sst_object_get(x, "value");
        e = sst__set_take(e, "value", sst_value_ref(v != NULL ? v : sst_null()), err);
        out = sst__push_take(out, e, err);
    }
    return out;
}

/* What the snapshot of one record is made from. */
typedef struct snap_in {
    const sst_graph_thread *t;
    const sst_value *rec;
    const sst_value *child; /* the checkpoint that committed rec's tasks, or NULL */
    bool head;              /* apply successful pending writes */
} snap_in;

/*
 * The values the k-th update as @p name wrote in an update_state child
 * checkpoint (LangGraph counts an update as that node's task), or NULL.
 */
static const sst_value *update_values(const sst_value *child, const char *name, size_t k) {
    const sst_value *meta = sst_object_get(child, "metadata");
    const char *source = sst_string_cstr(sst_object_get(meta, "source"));
    if (source == NULL || strcmp(source, "update") != 0) {
        return NULL;
    }
    const sst_value *list = sst_object_get(sst_object_get(meta, "writes"), "__updates__");
    for (size_t i = 0; i < sst_array_len(list); i++) {
        const sst_value *u = sst_array_get(list, i);
        const char *as = sst_string_cstr(sst_object_get(u, "as_node"));
        if (as != NULL && strcmp(as, name) == 0 && k-- == 0) {
            const sst_value *v = sst_object_get(u, "values");
            return v != NULL && !sst_is_null(v) ? v : NULL;
        }
    }
    return NULL;
}

/* The delta of task @p i (named @p name) in the child checkpoint, or NULL. */
static const sst_value *child_delta(const snap_in *in, size_t i, const char *name) {
    if (in->child == NULL) {
        return NULL;
    }
    const sst_value *list = sst_object_get(sst_object_get(in->rec, "next"), "tasks");
    size_t k = 0; /* earlier tasks of the same node */
    for (size_t j = 0; j < i; j++) {
        const char *v = sst_string_cstr(sst_object_get(sst_array_get(list, j), "vertex"));
        k += v != NULL && strcmp(v, name) == 0;
    }
    const sst_value *upd = update_values(in->child, name, k);
    if (upd != NULL) {
        return upd;
    }
    const sst_value *kind = sst_object_get(in->child, "kind");
    const char *source =
        sst_string_cstr(sst_object_get(sst_object_get(in->child, "metadata"), "source"));
    if (!sst_is_string(kind) || strcmp(sst_string_cstr(kind), "delta") != 0 || source == NULL ||
        strcmp(source, "loop") != 0) {
        return NULL; /* a snapshot keeps no deltas; an update's are not these tasks' */
    }
    /* The child committed exactly these tasks: one superstep later, one group (a
     * durability "exit" checkpoint holds a whole run's groups instead). */
    const sst_value *groups = sst_object_get(in->child, "body");
    int64_t step = sst_int_value(sst_object_get(in->rec, "step"));
    if (sst_array_len(groups) != 1 ||
        sst_int_value(sst_object_get(in->child, "step")) != step + 1) {
        return NULL;
    }
    const sst_value *group = sst_array_get(groups, 0);
    size_t n = sst_array_len(sst_object_get(sst_object_get(in->rec, "next"), "tasks"));
    return sst_array_len(group) == n ? sst_array_get(group, i) : NULL;
}

/* The engine's id of @p task (an entry of rec.next.tasks) in @p out. */
static void task_id_at(const snap_in *in, const sst_value *task, char out[33]) {
    sst__entry_task_id(
        sst_string_cstr(sst_object_get(in->rec, "run_key")),
        (uint64_t)sst_int_value(sst_object_get(sst_object_get(in->rec, "next"), "superstep")), task,
        out);
}

static sst_value *path_of(const char *name, const sst_value *send, sst_error *err) {
    sst_value *p = sst__push_take(sst_array_empty(),
                                  str(send != NULL ? "__pregel_push" : "__pregel_pull", err), err);
    if (send != NULL) {
        p = sst__push_take(p, sst_value_ref(send), err);
        return sst__push_take(p, sst_bool(false), err);
    }
    return sst__push_take(p, str(name, err), err);
}

/* The pending entry of the error handler that took over task @p id and did not finish. */
static const sst_value *failed_handler(const sst_value *pending, const char *id) {
    for (size_t i = 0; i < sst_array_len(pending); i++) {
        const sst_value *w = sst_array_get(pending, i);
        const sst_value *done = sst_object_get(w, "done");
        const char *t = sst_string_cstr(sst_object_get(sst_object_get(w, "origin"), "task"));
        if (t != NULL && strcmp(t, id) == 0 && sst_is_bool(done) && !sst_bool_value(done)) {
            return w;
        }
    }
    return NULL;
}

/* One task of the snapshot; *done when it has a result (it leaves next at the head). */
static sst_value *task_of(const snap_in *in, size_t i, const sst_value *task, bool *done,
                          sst_error *err) {
    const sst_value *writes = sst_object_get(in->rec, "writes");
    const char *name = sst_string_cstr(sst_object_get(task, "vertex"));
    const sst_value *send = sst_object_get(task, "send");
    char id[33];
    task_id_at(in, task, id);
    const sst_value *pw = sst__pending_of(sst_object_get(writes, "pending"), id);
    const sst_value *result = pw != NULL ? sst_object_get(pw, "delta") : child_delta(in, i, name);
    sst_value *ints = interrupts_of(sst_object_get(writes, "interrupts"), id, err);
    sst_value *o = sst__set_take(sst_object_empty(), "id", str(id, err), err);
    o = sst__set_take(o, "name", str(name, err), err);
    o = sst__set_take(o, "path", path_of(name, send, err), err);
    o = sst__set_take(o, "interrupts", ints, err);
    const sst_value *error = sst_object_get(writes, "error");
    const sst_value *handler = failed_handler(sst_object_get(writes, "pending"), id);
    if (handler != NULL && sst_is_string(error)) {
        /* Its error handler failed too: the task shows its own error (LangGraph's pending
         * writes keep each task's), the handler's is in pending_writes. */
        const sst_value *own = sst_object_get(
            sst_object_get(sst_object_get(sst_object_get(handler, "origin"), "failure"), "error"),
            "message");
        error = sst_is_string(own) ? own : error;
    }
    /* A task without a stored write in a failed superstep is the one that failed: it keeps
     * the error after a resume committed its result (LangGraph keeps both writes). */
    if (o != NULL && pw == NULL && sst_array_len(ints) == 0 && sst_is_string(error)) {
        o = sst__set_take(o, "error", sst_value_ref(error), err);
    }
    if (o != NULL && result != NULL) {
        /* A join's barrier is the engine's: the result shows the node's own writes. */
        o = sst__set_take(o, "result",
                          sst_is_object(result) ? sst__graph_public_state(result, err)
                                                : sst_value_ref(result),
                          err);
    }
    *done = pw != NULL;
    return o;
}

/* The __start__ task of an input checkpoint: its result is the input. */
static sst_value *start_task(const snap_in *in, sst_error *err) {
    const sst_value *meta = sst_object_get(in->rec, "metadata");
    const sst_value *input = in->child != NULL ? update_values(in->child, SST_START, 0) : NULL;
    if (input == NULL) {
        input = sst_object_get(sst_object_get(meta, "writes"), SST_START);
    }
    char id[33];
    sst_task_id_of(sst_string_cstr(sst_object_get(in->rec, "run_key")),
                   (uint64_t)(sst_int_value(sst_object_get(in->rec, "step")) + 1), UINT64_MAX,
                   SST_START, id);
    sst_value *o = sst__set_take(sst_object_empty(), "id", str(id, err), err);
    o = sst__set_take(o, "name", str(SST_START, err), err);
    o = sst__set_take(o, "path", path_of(SST_START, NULL, err), err);
    o = sst__set_take(o, "interrupts", sst_array_empty(), err);
    if (o != NULL && input != NULL && !sst_is_null(input)) {
        o = sst__set_take(o, "result", sst_value_ref(input), err);
    }
    return o;
}

/* An input checkpoint, or a copy of one (source fork, the input kept): next is __start__. */
static bool is_input(const sst_value *rec) {
    const sst_value *meta = sst_object_get(rec, "metadata");
    const char *source = sst_string_cstr(sst_object_get(meta, "source"));
    const sst_value *tasks = sst_object_get(sst_object_get(rec, "next"), "tasks");
    return source != NULL && sst_array_len(tasks) == 0 &&
           (strcmp(source, "input") == 0 ||
            (strcmp(source, "fork") == 0 &&
             sst_object_get(sst_object_get(meta, "writes"), SST_START) != NULL));
}

/* tasks and next (names of the tasks without a result at the head). */
static sst_code tasks_and_next(const snap_in *in, sst_value **tasks, sst_value **next,
                               sst_error *err) {
    *tasks = sst_array_empty();
    *next = sst_array_empty();
    if (is_input(in->rec)) {
        *tasks = sst__push_take(*tasks, start_task(in, err), err);
        *next = sst__push_take(*next, str(SST_START, err), err);
        return *tasks != NULL && *next != NULL ? SST_OK : sst__code(err);
    }
    /* Listed as LangGraph lists them, Sends first. */
    const sst_value *list = sst_object_get(sst_object_get(in->rec, "next"), "tasks");
    for (int pass = 0; pass < 2; pass++) {
        for (size_t i = 0; i < sst_array_len(list) && *tasks != NULL && *next != NULL; i++) {
            const sst_value *raw = sst_array_get(list, i);
            if ((sst_object_get(raw, "send") != NULL) != (pass == 0)) {
                continue;
            }
            bool done = false;
            sst_value *tk = task_of(in, i, raw, &done, err);
            if (tk != NULL && !(in->head && done)) {
                *next = sst__push_take(*next, sst_value_ref(sst_object_get(tk, "name")), err);
            }
            *tasks = sst__push_take(*tasks, tk, err);
        }
    }
    return *tasks != NULL && *next != NULL ? SST_OK : sst__code(err);
}

/* The values: the state, at the head with the succeeded tasks' pending writes on top. */
static sst_value *values_of(const snap_in *in, const sst_value *state, sst_error *err) {
    const sst_value *pending = sst_object_get(sst_object_get(in->rec, "writes"), "pending");
    sst_value *s = in->head ? sst__with_pending(in->t->cg, sst_value_ref(state), pending, err)
                            : sst_value_ref(state);
    sst_value *pub = s != NULL ? sst__graph_public_state(s, err) : NULL;
    sst_value_unref(s);
    return pub;
}

/* Sets @p key to @p v (taken) unless @p v is null. */
static sst_value *set_unless_null(sst_value *s, const char *key, sst_value *v, sst_error *err) {
    if (v != NULL && sst_is_null(v)) {
        sst_value_unref(v);
        return s;
    }
    return sst__set_take(s, key, v, err);
}

/* [task_id, channel, value] appended to @p out (taken). */
static sst_value *add_write(sst_value *out, const sst_value *id, const char *channel,
                            const sst_value *v, sst_error *err) {
    sst_value *w = sst__push_take(sst_array_empty(), sst_value_ref(id), err);
    w = sst__push_take(w, str(channel, err), err);
    w = sst__push_take(w, sst_value_ref(v), err);
    return sst__push_take(out, w, err);
}

/*
 * LangGraph's pending writes of the checkpoint (CheckpointTuple.pending_writes):
 * [task_id, channel, value] for each field a task wrote (each write of a field
 * written several times), [task_id, "__error__", message] for a failed task and
 * [task_id, "__interrupt__", [{id, value}]] for an interrupted one, in task
 * order; a task whose error handler failed too is followed by the handler's
 * [handler_task_id, "__error__", message]. A task's writes are its stored pending write or, in the
 * history, what the child checkpoint committed for it.
 */
static sst_value *pending_writes_of(const sst_value *tasks, const sst_value *writes,
                                    sst_error *err) {
    sst_value *out = sst_array_empty();
    for (size_t i = 0; i < sst_array_len(tasks) && out != NULL; i++) {
        const sst_value *tk = sst_array_get(tasks, i);
        const sst_value *id = sst_object_get(tk, "id");
        const char *name = sst_string_cstr(sst_object_get(tk, "name"));
        if (name != NULL && strcmp(name, SST_START) == 0) {
            continue; /* the input is not a task's write */
        }
        const sst_value *result = sst_object_get(tk, "result");
        for (size_t k = 0; sst_is_object(result) && k < sst_object_len(result) && out != NULL;
             k++) {
            const char *field = sst_string_cstr(sst_object_key_at(result, k));
            const sst_value *v = sst_object_value_at(result, k);
            const sst_value *many = sst_object_get(v, "$writes");
            if (sst_is_object(v) && sst_object_len(v) == 1 && sst_is_array(many)) {
                for (size_t j = 0; j < sst_array_len(many) && out != NULL; j++) {
                    out = add_write(out, id, field, sst_array_get(many, j), err);
                }
            } else {
                out = add_write(out, id, field, v, err);
            }
        }
        const sst_value *e = sst_object_get(tk, "error");
        if (out != NULL && e != NULL) {
            out = add_write(out, id, "__error__", e, err);
        }
        const sst_value *h = sst_is_string(id) ? failed_handler(sst_object_get(writes, "pending"),
                                                                sst_string_cstr(id))
                                               : NULL;
        const sst_value *he = sst_object_get(writes, "error");
        if (out != NULL && h != NULL && sst_is_string(he)) { /* its handler's failure */
            out = add_write(out, sst_object_get(h, "task"), "__error__", he, err);
        }
        const sst_value *ints = sst_object_get(tk, "interrupts");
        if (out != NULL && sst_array_len(ints) > 0) {
            out = add_write(out, id, "__interrupt__", ints, err);
        }
    }
    return out;
}

/* The older keys (checkpoint_id, parent_id, step, error) and pending_writes on @p s. */
static sst_value *legacy_keys(sst_value *s, const sst_value *rec, sst_error *err) {
    const sst_value *writes = sst_object_get(rec, "writes");
    s = sst__set_take(s, "checkpoint_id", sst_value_ref(sst_object_get(rec, "id")), err);
    s = sst__set_take(s, "parent_id", sst_value_ref(sst_object_get(rec, "parent")), err);
    s = sst__set_take(s, "step", sst_value_ref(sst_object_get(rec, "step")), err);
    s = s != NULL ? sst__set_take(s, "pending_writes",
                                  pending_writes_of(sst_object_get(s, "tasks"), writes, err), err)
                  : NULL;
    if (s != NULL && sst_is_object(writes) && sst_object_get(writes, "error") != NULL) {
        s = sst__set_take(s, "error", sst_value_ref(sst_object_get(writes, "error")), err);
    }
    return s;
}

sst_value *sst__snapshot(const sst_graph_thread *t, const sst_value *rec, const sst_value *state,
                         const sst_value *child, bool head, sst_error *err) {
    snap_in in = {t, rec, child, head};
    sst_value *tasks, *next;
    if (tasks_and_next(&in, &tasks, &next, err) != SST_OK) {
        sst_value_unref(tasks);
        sst_value_unref(next);
        return NULL;
    }
    const sst_value *writes = sst_object_get(rec, "writes");
    sst_value *parents =
        sst__parents_of((sst_graph_thread *)t, sst_object_get(rec, "metadata"), err);
    if (parents == NULL) {
        sst_value_unref(tasks);
        sst_value_unref(next);
        return NULL;
    }
    sst_value *s = sst__set_take(sst_object_empty(), "values", values_of(&in, state, err), err);
    s = sst__set_take(s, "next", next, err);
    s = sst__set_take(s, "config",
                      config_of(t->thread_id, t->ns, sst_object_get(rec, "id"), parents, err), err);
    s = sst__set_take(s, "metadata", public_metadata(sst_object_get(rec, "metadata"), parents, err),
                      err);
    /* Absent rather than null when there is none (Lua reads nil, as LangGraph's None). */
    s = set_unless_null(s, "created_at",
                        iso_time(sst_object_get(rec, "created_at"), sst_object_get(rec, "id"), err),
                        err);
    s = set_unless_null(s, "parent_config",
                        config_of(t->thread_id, t->ns, sst_object_get(rec, "parent"), parents, err),
                        err);
    s = sst__set_take(s, "tasks", tasks, err);
    s = sst__set_take(s, "interrupts",
                      interrupts_of(sst_object_get(writes, "interrupts"), NULL, err), err);
    sst_value_unref(parents);
    return s != NULL ? legacy_keys(s, rec, err) : NULL;
}

/* ---- subgraph tasks (the "state" of a snapshot's subgraph tasks) ---- */

/* {"configurable": {"thread_id", "checkpoint_ns"}}: how a snapshot points at a subgraph. */
static sst_value *ns_config(const char *thread_id, const char *ns, sst_error *err) {
    sst_value *c =
        sst__set_take(sst_object_empty(), "thread_id", sst_string_new(thread_id, err), err);
    c = sst__set_take(c, "checkpoint_ns", sst_string_new(ns, err), err);
    return sst__set_take(sst_object_empty(), "configurable", c, err);
}

/* The "state" of subgraph task @p tk: the nested snapshot, else the subgraph's config. */
static sst_value *task_state(sst_graph_thread *t, const sst_compiled_graph *sub, const char *ns,
                             bool nested, sst_error *err) {
    if (nested && sub->checkpoints != SST_SUBGRAPH_NONE) {
        sst_error e;
        sst_error_clear(&e);
        sst_graph_thread *cth = sst__thread_open(sub, t->cp, t->thread_id, ns, &e);
        sst_value *snap = cth != NULL ? sst_graph_get_state_nested(cth, NULL, &e) : NULL;
        sst_graph_thread_free(cth);
        if (snap != NULL) {
            return snap;
        }
        if (e.code != SST_ENOTFOUND) {
            *err = e;
            return NULL;
        }
    }
    return ns_config(t->thread_id, ns, err);
}

sst_value *sst__snapshot_subgraphs(sst_graph_thread *t, sst_value *snap, bool nested,
                                   sst_error *err) {
    const sst_value *tasks = sst_object_get(snap, "tasks");
    sst_value *out = sst_array_empty();
    bool any = false;
    for (size_t i = 0; i < sst_array_len(tasks) && out != NULL; i++) {
        const sst_value *tk = sst_array_get(tasks, i);
        const char *name = sst_string_cstr(sst_object_get(tk, "name"));
        const sst_compiled_graph *sub = sst__subgraph_of(t->cg, name);
        if (sub == NULL) {
            out = sst__push_take(out, sst_value_ref(tk), err);
            continue;
        }
        any = true;
        char *ns = sst__subgraph_ns(sub, t->ns, name, sst_string_cstr(sst_object_get(tk, "id")));
        sst_value *st = ns != NULL ? task_state(t, sub, ns, nested, err) : NULL;
        sst__free(ns);
        if (st == NULL) {
            sst__error_unless_set(err, SST_ENOMEM, "out of memory");
            sst_value_unref(out);
            sst_value_unref(snap);
            return NULL;
        }
        out = sst__push_take(out, sst__set_take(sst_value_ref(tk), "state", st, err), err);
    }
    if (!any || out == NULL) {
        sst_value_unref(out);
        return any ? (sst_value_unref(snap), NULL) : snap;
    }
    return sst__set_take(snap, "tasks", out, err);
}
