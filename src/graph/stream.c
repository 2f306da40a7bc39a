/* SPDX-License-Identifier: MIT */
/*
 * The stream of an invoke, in LangGraph's shapes (docs/graph.md,
 * "Streaming"):
 *
 * - values: the state (output fields only) after the input and after each
 *   superstep that wrote an output field; first the current state when a
 *   run resumes; with "__interrupt__" added when a node interrupts.
 * - updates: {node: update} per task; {"__interrupt__": [{id, value}]} per
 *   interrupted task, [] after an interrupt_before/after stop.
 * - tasks: {id, name, input, triggers} as a task starts and {id, name,
 *   error, interrupts, result} as it ends (pregel/debug.py's TaskPayload and
 *   TaskResultPayload); ids are the engine's task ids.
 * - checkpoints: each checkpoint as written, {config, parent_config, values,
 *   metadata, next, tasks} (CheckpointPayload), read back through the
 *   snapshot code: durable threads only, and only when asked for.
 * - debug: the tasks and checkpoints chunks in {type, timestamp, step,
 *   payload}, type "task" | "task_result" | "checkpoint".
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "stream.h"
#include "superstep/functional.h"
#include "values/build.h"

static sst_value *str(const char *s) {
    return sst_string_new(s, NULL);
}

static bool hidden(const char *name) {
    return name[0] == '_' && name[1] == '_';
}

void sst__stream_init(sst__streamer *s, const sst_compiled_graph *cg, const sst_invoke_opts *o,
                      sst_graph_thread *th) {
    memset(s, 0, sizeof *s);
    s->cg = cg;
    s->o = o;
    s->th = th;
    s->run_key = "";
    /* Checkpoints newer than the thread's newest when the invoke starts are this run's. */
    const char *newest = th != NULL ? (th->latest_id != NULL ? th->latest_id : th->last_id) : NULL;
    if (newest != NULL &&
        (sst__stream_on(s, SST_STREAM_CHECKPOINTS) || sst__stream_on(s, SST_STREAM_DEBUG))) {
        s->mark = sst__strndup(newest, strlen(newest));
        if (s->mark == NULL) {
            s->rc = sst__enomem(&s->err);
        }
    }
    if (th != NULL) {
        th->exit_id[0] = '\0';
    }
    if (th != NULL && th->last_id != NULL && o->durability == SST_DURABILITY_EXIT &&
        s->rc == SST_OK &&
        (sst__stream_on(s, SST_STREAM_CHECKPOINTS) || sst__stream_on(s, SST_STREAM_DEBUG))) {
        sst_error err = {0};
        sst_value *rec = sst__record_get(th, th->last_id, &err);
        const char *parent = sst_string_cstr(sst_object_get(rec, "parent"));
        snprintf(s->base_parent, sizeof s->base_parent, "%s", parent != NULL ? parent : "");
        sst_value_unref(rec);
    }
}

void sst__stream_free(sst__streamer *s) {
    if (s->th != NULL) {
        s->th->exit_id[0] = '\0'; /* taken by the checkpoint saved at the end, or by none */
    }
    sst_value_unref(s->state);
    sst_value_unref(s->next);
    sst_value_unref(s->cached);
    sst__free(s->mark);
    memset(s, 0, sizeof *s);
}

bool sst__stream_on(const sst__streamer *s, sst_stream_mode m) {
    return sst__has_stream(s->o) && (s->o->stream_modes & (unsigned)m) != 0;
}

bool sst__stream_wants_next(const sst__streamer *s) {
    return sst__stream_on(s, SST_STREAM_TASKS) || sst__stream_on(s, SST_STREAM_DEBUG);
}

static bool results_on(const sst__streamer *s) {
    return sst__stream_wants_next(s);
}

/* ---- shapes ---- */

sst_value *sst__stream_output(const sst_compiled_graph *cg, const sst_value *state,
                              sst_error *err) {
    sst_value *pub = sst__graph_public_state(state, err);
    const sst_value *keep = cg->g->output_fields;
    if (pub == NULL || keep == NULL) {
        return pub;
    }
    sst_value *out = sst_object_empty();
    for (size_t i = 0; i < sst_array_len(keep) && out != NULL; i++) {
        const sst_value *v = sst_object_get(pub, sst_string_cstr(sst_array_get(keep, i)));
        if (v != NULL) {
            out = sst__setv_take(out, sst_array_get(keep, i), sst_value_ref(v), err);
        }
    }
    sst_value_unref(pub);
    return out;
}

/* True when @p delta writes an output field (LangGraph emits values only then). */
static bool touches_output(const sst_compiled_graph *cg, const sst_value *delta) {
    const sst_value *keep = cg->g->output_fields;
    for (size_t k = 0; k < sst_object_len(delta); k++) {
        const sst_value *key = sst_object_key_at(delta, k);
        if (sst__hidden_field(sst_string_cstr(key))) {
            continue; /* an engine field (a root state's value is shown) */
        }
        if (keep == NULL) {
            return true;
        }
        for (size_t i = 0; i < sst_array_len(keep); i++) {
            if (sst_value_equal(sst_array_get(keep, i), key)) {
                return true;
            }
        }
    }
    return false;
}

/* A task's writes as LangGraph's task result shows them: {field: value}, a field written
 * several times as {"$writes": [...]}, hidden fields left out (new). */
static sst_value *task_writes(const sst_value *delta) {
    sst_value *out = sst_object_empty();
    for (size_t k = 0; k < sst_object_len(delta) && out != NULL; k++) {
        const sst_value *key = sst_object_key_at(delta, k);
        if (!hidden(sst_string_cstr(key))) {
            out = sst__setv_take(out, key, sst_value_ref(sst_object_value_at(delta, k)), NULL);
        }
    }
    return out;
}

sst_value *sst__stream_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    time_t secs = ts.tv_sec;
    struct tm tm;
    if (gmtime_r(&secs, &tm) == NULL) {
        return sst_null();
    }
    char buf[64];
    snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%06ld+00:00", tm.tm_year + 1900,
             tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000);
    return str(buf);
}

/* ---- emitting ---- */

/* Sends one event (takes @p ev); false once the callback has asked to stop. */
static bool emit(sst__streamer *s, sst_stream_mode m, const char *node, sst_value *ev) {
    if (s->rc != SST_OK) {
        sst_value_unref(ev);
        return false;
    }
    if (ev == NULL) {
        s->rc = sst__enomem(&s->err);
        return false;
    }
    sst_code rc = sst__stream_call(s->o, m, node, ev);
    sst_value_unref(ev);
    if (rc != SST_OK) {
        s->rc = rc;
        sst__error(&s->err, rc, "the stream callback stopped the run (%s)", sst_code_name(rc));
        return false;
    }
    return true;
}

/*
 * Sends @p payload (takes) as mode @p m and, with debug on, in LangGraph's debug
 * envelope of type @p type at @p step (@p when: its timestamp, NULL: now).
 */
static void emit_typed(sst__streamer *s, sst_stream_mode m, const char *type, int64_t step,
                       const char *node, sst_value *payload, const sst_value *when) {
    if (sst__stream_on(s, m)) {
        emit(s, m, node, sst_value_ref(payload));
    }
    if (sst__stream_on(s, SST_STREAM_DEBUG)) {
        sst_value *e = sst__set_take(sst_object_empty(), "type", str(type), NULL);
        e = sst__set_take(
            e, "timestamp",
            when != NULL && !sst_is_null(when) ? sst_value_ref(when) : sst__stream_now(), NULL);
        e = sst__set_take(e, "step", sst_int_new(step, NULL), NULL);
        e = sst__set_take(e, "payload", sst_value_ref(payload), NULL);
        emit(s, SST_STREAM_DEBUG, node, e);
    }
    sst_value_unref(payload);
}

static void emit_values(sst__streamer *s, const sst_value *state) {
    if (sst__stream_on(s, SST_STREAM_VALUES)) {
        emit(s, SST_STREAM_VALUES, NULL, sst__stream_output(s->cg, state, NULL));
    }
}

/* {id, name, error, interrupts, result} for task @p id of @p node at LangGraph step @p step. */
static void emit_result(sst__streamer *s, int64_t step, const char *id, const char *node,
                        const char *error, sst_value *interrupts, const sst_value *delta) {
    sst_value *r = sst__set_take(sst_object_empty(), "id", str(id), NULL);
    r = sst__set_take(r, "name", str(node), NULL);
    r = sst__set_take(r, "error", error != NULL ? str(error) : sst_null(), NULL);
    r = sst__set_take(r, "interrupts", interrupts, NULL);
    sst_value *res = delta == NULL ? sst_object_empty() : task_writes(delta);
    const sst_value *ret = s->cg->g->entrypoint ? sst_object_get(delta, SST_ROOT) : NULL;
    if (ret != NULL) { /* LangGraph's entrypoint writes its return value to END */
        res = sst__set_take(res, SST_END, sst_value_ref(ret), NULL);
    }
    r = sst__set_take(r, "result", res, NULL);
    emit_typed(s, SST_STREAM_TASKS, "task_result", step, node, r, NULL);
}

/* The result of the node whose failure handler task @p t ran: its id, the error, no writes. */
static void emit_failed(sst__streamer *s, uint64_t step, const sst_task_stat *t) {
    const char *node = sst_string_cstr(sst_object_get(t->failure, "node"));
    const char *msg =
        sst_string_cstr(sst_object_get(sst_object_get(t->failure, "error"), "message"));
    if (node == NULL) {
        return;
    }
    char id[33];
    sst_task_id_of(s->run_key, step, t->send_index, node, id);
    emit_result(s, sst__lg_step(s->cg, step), id, node, msg != NULL ? msg : "", sst_array_empty(),
                NULL);
}

/*
 * A task's writes as LangGraph's updates stream shows them: the fields as the
 * node returned them (a single message stays single, keys a closed schema
 * drops stay), with the values the schema prepared (message ids) where the
 * shapes agree, as Python's reducers fill in the returned objects.
 */
static sst_value *shown_update(const sst_value *raw, const sst_value *prepared) {
    if (raw == prepared || !sst_is_object(raw)) {
        return sst_value_ref(prepared);
    }
    sst_value *out = sst_value_ref(raw);
    for (size_t i = 0; i < sst_object_len(raw) && out != NULL; i++) {
        const sst_value *key = sst_object_key_at(raw, i), *v = sst_object_value_at(raw, i);
        const sst_value *p = sst_object_getn(prepared, sst_string_cstr(key), sst_string_len(key));
        if (p == NULL || p == v) {
            continue;
        }
        bool single = sst_is_object(v) && sst_is_array(p) && sst_array_len(p) == 1;
        if (single || sst_value_type(v) == sst_value_type(p)) {
            out = sst_object_setv_take(out, key, sst_value_ref(single ? sst_array_get(p, 0) : p),
                                       NULL);
        }
    }
    return out;
}

/* The update of one task in the updates stream: {node: update}, null when it wrote nothing. */
static void emit_update_marked(sst__streamer *s, const char *node, const sst_value *raw,
                               const sst_value *delta, bool cached) {
    if (!sst__stream_on(s, SST_STREAM_UPDATES)) {
        return;
    }
    sst_value *shown = shown_update(raw, delta);
    sst_value *pub = shown != NULL ? sst__graph_public_update(shown, NULL) : NULL;
    sst_value_unref(shown);
    sst_value *u =
        sst_object_len(pub) > 0 || sst_array_len(pub) > 0 ? sst_value_ref(pub) : sst_null();
    sst_value_unref(pub);
    sst_value *chunk = sst_object_empty();
    if (cached) { /* a write a resume restored: LangGraph marks it */
        chunk =
            sst__set_take(chunk, "__metadata__",
                          sst__set_take(sst_object_empty(), "cached", sst_bool(true), NULL), NULL);
    }
    emit(s, SST_STREAM_UPDATES, node, sst__set_take(chunk, node, u, NULL));
}

static void emit_update(sst__streamer *s, const char *node, const sst_value *raw,
                        const sst_value *delta) {
    emit_update_marked(s, node, raw, delta, false);
}

/* True for a pending entry of an error handler that did not finish ("done": false). */
static bool unfinished(const sst_value *w) {
    const sst_value *done = sst_object_get(w, "done");
    return sst_is_bool(done) && !sst_bool_value(done);
}

/* True when task @p id had its writes restored by a resume (LangGraph's cached writes). */
static bool is_cached(const sst__streamer *s, uint64_t step, const char *id) {
    for (size_t i = 0; step == s->cached_step && i < sst_array_len(s->cached); i++) {
        const sst_value *w = sst_array_get(s->cached, i);
        const char *t = sst_string_cstr(sst_object_get(w, "task"));
        if (unfinished(w)) {
            continue; /* an error handler that did not finish: it runs again, not restored */
        }
        if (t != NULL && strcmp(t, id) == 0) {
            return true;
        }
    }
    return false;
}

/* ---- the points of a run ---- */

void sst__stream_input(sst__streamer *s, const sst_value *state, const sst_value *prepared) {
    if (!sst__has_stream(s->o)) {
        return;
    }
    s->fresh = true;
    if (prepared != NULL && touches_output(s->cg, prepared)) {
        emit_values(s, state);
    }
    sst__stream_checkpoints(s);
}

static void emit_checkpoint(sst__streamer *s, const sst_value *rec);
static void stream_unsaved(sst__streamer *s, int64_t step, const char *source,
                           const sst_value *state, uint64_t next_step);

void sst__stream_resume(sst__streamer *s, const sst_value *state) {
    emit_values(s, state);
    sst_graph_thread *th = s->th;
    if (th != NULL && th->last_id != NULL && s->mark != NULL && strcmp(th->last_id, s->mark) == 0 &&
        s->rc == SST_OK && s->cg->g->entrypoint) {
        /* Nothing written since the load: LangGraph's first step streams the checkpoint
         * the entrypoint goes on from (a StateGraph's resume streams only what it writes). */
        sst_error err = {0};
        sst_value *rec = sst__record_get(th, th->last_id, &err);
        if (rec == NULL) {
            s->rc = sst__error_unless_set(&err, SST_ENOMEM, "out of memory");
            s->err = err;
            return;
        }
        emit_checkpoint(s, rec);
        sst_value_unref(rec);
        return;
    }
    sst__stream_checkpoints(s);
}

void sst__stream_start(sst__streamer *s, const char *run_key, const sst_value *rp,
                       const sst_value *state) {
    s->run_key = run_key;
    sst_value_unref(s->state);
    s->state = sst_value_ref(state);
    sst_value_unref(s->next);
    s->next = sst_value_ref(sst_object_get(rp, "tasks"));
    sst_value_unref(s->cached);
    s->cached = sst_value_ref(sst_object_get(rp, "pending"));
    s->cached_step = (uint64_t)sst_int_value(sst_object_get(rp, "superstep"));
    if (s->fresh && s->cg->g->entrypoint) { /* its input checkpoint, when not saved */
        stream_unsaved(s, sst__lg_step(s->cg, s->cached_step) - 1, "input", state, s->cached_step);
    }
}

/* {"configurable": {thread_id, checkpoint_ns, checkpoint_id}} of checkpoint @p id of @p th. */
static sst_value *unsaved_config(const sst_graph_thread *th, const char *id) {
    sst_value *c = sst__set_take(sst_object_empty(), "thread_id", str(th->thread_id), NULL);
    c = sst__set_take(c, "checkpoint_ns", str(th->ns), NULL);
    c = sst__set_take(c, "checkpoint_id", str(id), NULL);
    return sst__set_take(sst_object_empty(), "configurable", c, NULL);
}

/*
 * With durability "exit" nothing is saved until the run ends, but LangGraph still
 * streams each checkpoint (checkpoints and debug streams): one built from @p state
 * and the next tasks (s->next, of superstep @p next_step), at LangGraph step @p step,
 * with an id of its own that the checkpoint saved at the end takes (th->exit_id, as
 * LangGraph saves its last checkpoint under the id it streamed), its parent_config
 * LangGraph's prev_checkpoint_config in such a run: the parent of the checkpoint the
 * run started from (null on a new thread).
 */
static void stream_unsaved(sst__streamer *s, int64_t step, const char *source,
                           const sst_value *state, uint64_t next_step) {
    sst_graph_thread *th = s->th;
    if (th == NULL || s->rc != SST_OK || s->o->durability != SST_DURABILITY_EXIT ||
        !(sst__stream_on(s, SST_STREAM_CHECKPOINTS) || sst__stream_on(s, SST_STREAM_DEBUG))) {
        return;
    }
    char id[37];
    sst__uuid7(&th->id_clock, id);
    const char *parent = s->base_parent[0] != '\0' ? s->base_parent : NULL;
    sst_value *next = sst_array_empty(), *tasks = sst_array_empty();
    for (size_t i = 0; i < sst_array_len(s->next); i++) {
        const sst_value *d = sst_array_get(s->next, i);
        char tid[33];
        sst__entry_task_id(s->run_key, next_step, d, tid);
        next = sst__push_take(next, sst_value_ref(sst_object_get(d, "vertex")), NULL);
        sst_value *t = sst__set_take(sst_object_empty(), "id", str(tid), NULL);
        t = sst__set_take(t, "name", sst_value_ref(sst_object_get(d, "vertex")), NULL);
        t = sst__set_take(t, "interrupts", sst_array_empty(), NULL);
        t = sst__set_take(t, "state", sst_null(), NULL);
        tasks = sst__push_take(tasks, t, NULL);
    }
    sst_value *md = sst__set_take(sst_object_empty(), "source", str(source), NULL);
    md = sst__set_take(md, "step", sst_int_new(step, NULL), NULL);
    if (th->ns == NULL || th->ns[0] == '\0') { /* a root's: no parent graphs */
        md = sst__set_take(md, "parents", sst_object_empty(), NULL);
    }
    sst_value *p = sst__set_take(sst_object_empty(), "config", unsaved_config(th, id), NULL);
    p = sst__set_take(p, "parent_config", parent != NULL ? unsaved_config(th, parent) : sst_null(),
                      NULL);
    p = sst__set_take(p, "values", sst__stream_output(s->cg, state, NULL), NULL);
    p = sst__set_take(p, "metadata", md, NULL);
    p = sst__set_take(p, "next", next, NULL);
    p = sst__set_take(p, "tasks", tasks, NULL);
    char *mark = sst__strndup(id, strlen(id));
    if (p == NULL || mark == NULL) {
        sst_value_unref(p);
        sst__free(mark);
        s->rc = sst__enomem(&s->err);
        return;
    }
    memcpy(th->exit_id, id, sizeof id);
    sst__free(s->mark); /* the saved one is this one: not streamed again */
    s->mark = mark;
    emit_typed(s, SST_STREAM_CHECKPOINTS, "checkpoint", step, NULL, p, NULL);
}

/* The descriptor of the next task of @p vertex from *cursor on (then past it), or NULL. */
static const sst_value *descriptor(const sst__streamer *s, const char *vertex, size_t *cursor) {
    for (size_t j = *cursor; j < sst_array_len(s->next); j++) {
        const sst_value *d = sst_array_get(s->next, j);
        const char *name = sst_string_cstr(sst_object_get(d, "vertex"));
        if (name != NULL && strcmp(name, vertex) == 0) {
            *cursor = j + 1;
            return d;
        }
    }
    return NULL; /* not foreseen (a deferred node let go): a task of edges */
}

/*
 * The pending entry of the unfinished error handler that task @p i of @p v (the names of
 * the superstep's tasks) runs again after a resume: the k-th such entry of that handler
 * for its k-th task. NULL for other tasks.
 */
static const sst_value *resumed_handler(const sst__streamer *s, uint64_t step, const char *const *v,
                                        size_t i) {
    if (step != s->cached_step) {
        return NULL;
    }
    size_t k = 0;
    for (size_t j = 0; j < i; j++) {
        k += strcmp(v[j], v[i]) == 0;
    }
    for (size_t j = 0; j < sst_array_len(s->cached); j++) {
        const sst_value *w = sst_array_get(s->cached, j);
        const char *name = sst_string_cstr(sst_object_get(w, "vertex"));
        if (unfinished(w) && name != NULL && strcmp(name, v[i]) == 0 &&
            sst_is_string(sst_object_get(w, "task")) && k-- == 0) {
            return w;
        }
    }
    return NULL;
}

void sst__stream_tasks(sst__streamer *s, uint64_t step, const char *const *v, size_t n) {
    if (!results_on(s) || s->rc != SST_OK) {
        return;
    }
    sst_value *pub = sst__graph_public_state(s->state, NULL);
    size_t cursor = 0;
    for (size_t i = 0; i < n; i++) {
        const sst_value *d = descriptor(s, v[i], &cursor);
        const sst_value *send = d != NULL ? sst_object_get(d, "send") : NULL;
        char id[33];
        sst_task_id_of(s->run_key, step, send != NULL ? (uint64_t)sst_int_value(send) : UINT64_MAX,
                       v[i], id);
        const sst_value *h = resumed_handler(s, step, v, i);
        if (h != NULL) { /* an error handler a resume runs again: its own id, pushed */
            snprintf(id, sizeof id, "%s", sst_string_cstr(sst_object_get(h, "task")));
        }
        if (is_cached(s, step, id)) {
            continue; /* LangGraph announces only the tasks that run */
        }
        const sst_value *in = send != NULL ? sst_object_get(d, "input") : pub;
        sst_value *trig = sst_array_empty();
        if (s->cg->g->entrypoint) { /* LangGraph's entrypoint: __start__'s, with the input */
            trig = sst__push_take(trig, str(SST_START), NULL);
            in = sst_object_get(s->state, SST_ENTRY_INPUT);
        } else if (send != NULL || h != NULL) {
            trig = sst__push_take(trig, str("__pregel_push"), NULL);
        } else {
            sst__buf b;
            sst__buf_init(&b);
            sst__buf_printf(&b, "branch:to:%s", v[i]);
            char *t = sst__buf_detach(&b, NULL);
            trig = sst__push_take(trig, t != NULL ? str(t) : NULL, NULL);
            sst__free(t);
        }
        sst_value *p = sst__set_take(sst_object_empty(), "id", str(id), NULL);
        p = sst__set_take(p, "name", str(v[i]), NULL);
        p = sst__set_take(p, "input", sst_value_ref(in != NULL ? in : sst_null()), NULL);
        p = sst__set_take(p, "triggers", trig, NULL);
        emit_typed(s, SST_STREAM_TASKS, "task", sst__lg_step(s->cg, step), v[i], p, NULL);
    }
    sst_value_unref(pub);
}

void sst__stream_superstep(sst__streamer *s, const sst_superstep_stats *st) {
    if (!sst__has_stream(s->o)) {
        return; /* no stream: nothing to look at */
    }
    /* Custom events went out live, as the nodes emitted them (live.c). */
    bool touched = false;
    /* Writes a resume restored come first, marked cached, as LangGraph's. */
    for (int pass = 0; pass < 2; pass++) {
        for (size_t i = 0; i < st->tasks; i++) {
            const sst_task_stat *t = &st->task[i];
            /* A cache hit, or writes a resume restored. */
            bool cached = t->cached || is_cached(s, st->superstep, t->task_id);
            if (cached != (pass == 0)) {
                continue;
            }
            touched = touched || touches_output(s->cg, t->delta);
            if (t->failure != NULL && results_on(s)) {
                /* The node an error handler took over failed: LangGraph's task result
                 * with its error comes before the handler's. */
                emit_failed(s, st->superstep, t);
            }
            emit_update_marked(s, t->vertex, t->raw_delta, t->delta, cached);
            if (results_on(s) && !cached) {
                emit_result(s, sst__lg_step(s->cg, st->superstep), t->task_id, t->vertex, NULL,
                            sst_array_empty(), t->delta);
            }
        }
    }
    if (touched) {
        emit_values(s, st->state);
    }
    if (results_on(s)) {
        sst_value_unref(s->state);
        s->state = sst_value_ref(st->state);
        sst_value_unref(s->next);
        s->next = st->next != NULL ? sst_value_ref(sst_object_get(st->next, "tasks")) : NULL;
    }
    sst__stream_checkpoints(s);
    stream_unsaved(s, sst__lg_step(s->cg, st->superstep), "loop", st->state, st->superstep + 1);
}

/* The interrupts of task @p id in @p interrupts, as LangGraph's Interrupt: {id, value}. */
static sst_value *interrupts_of(const sst_value *interrupts, const char *id) {
    sst_value *out = sst_array_empty();
    for (size_t i = 0; i < sst_array_len(interrupts) && out != NULL; i++) {
        const sst_value *x = sst_array_get(interrupts, i);
        if (!sst__interrupt_of_task(x, id)) {
            continue;
        }
        sst_value *e =
            sst__set_take(sst_object_empty(), "id", sst_value_ref(sst_object_get(x, "id")), NULL);
        e = sst__set_take(e, "value", sst_value_ref(sst_object_get(x, "value")), NULL);
        out = sst__push_take(out, e, NULL);
    }
    return out;
}

/* An interrupted task: {"__interrupt__": ints} in updates, the state with it in values. */
static void emit_interrupt(sst__streamer *s, const sst_value *state, const sst_value *ints) {
    if (sst__stream_on(s, SST_STREAM_UPDATES)) {
        emit(s, SST_STREAM_UPDATES, NULL,
             sst__set_take(sst_object_empty(), "__interrupt__", sst_value_ref(ints), NULL));
    }
    if (sst__stream_on(s, SST_STREAM_VALUES) && sst_array_len(ints) > 0) {
        sst_value *v = sst__stream_output(s->cg, state, NULL);
        emit(s, SST_STREAM_VALUES, NULL,
             sst__set_take(v, "__interrupt__", sst_value_ref(ints), NULL));
    }
}

/* The values chunk LangGraph ends an interrupted run with: the pending writes applied. */
static void emit_with_pending(sst__streamer *s, const sst_value *state, const sst_value *pending) {
    sst_error err = {0};
    sst_value *after = sst__with_pending(s->cg, sst_value_ref(state), pending, &err);
    if (after != NULL) {
        emit_values(s, after);
    } else if (err.code == SST_ENOMEM) {
        s->rc = sst__enomem(&s->err);
    }
    sst_value_unref(after);
}

/* True when the engine recorded an interrupt for task @p id. */
static bool engine_interrupted(const sst_run_result *rr, const char *id) {
    const sst_value *ints = sst_run_result_interrupts(rr);
    for (size_t i = 0; i < sst_array_len(ints); i++) {
        if (sst__interrupt_of_task(sst_array_get(ints, i), id)) {
            return true;
        }
    }
    return false;
}

/* The pending entry of the unfinished error handler that took over task @p id, or NULL. */
static const sst_value *handler_entry(const sst_value *pending, const char *id) {
    for (size_t i = 0; i < sst_array_len(pending); i++) {
        const sst_value *w = sst_array_get(pending, i);
        const char *t = sst_string_cstr(sst_object_get(sst_object_get(w, "origin"), "task"));
        if (t != NULL && strcmp(t, id) == 0 && unfinished(w)) {
            return w;
        }
    }
    return NULL;
}

/* One task of a superstep that did not commit: its writes, interrupts or error. */
static bool stop_task(sst__streamer *s, const sst_run_result *rr, const sst_value *d, uint64_t step,
                      const sst_value *interrupts, bool *failed_seen, bool writes_pass) {
    const char *vertex = sst_string_cstr(sst_object_get(d, "vertex"));
    char id[33];
    sst__entry_task_id(s->run_key, step, d, id);
    const sst_value *rp = sst_run_result_resume_point(rr);
    const sst_value *pw = sst__pending_of(sst_object_get(rp, "pending"), id);
    bool cached = is_cached(s, step, id);
    if ((pw != NULL) != writes_pass) {
        return false; /* the succeeded tasks' writes first, then interrupts and errors */
    }
    if (pw != NULL) {
        emit_update(s, vertex, sst_object_get(pw, "delta"), sst_object_get(pw, "delta"));
        if (results_on(s) && !cached) {
            emit_result(s, sst__lg_step(s->cg, step), id, vertex, NULL, sst_array_empty(),
                        sst_object_get(pw, "delta"));
        }
        return touches_output(s->cg, sst_object_get(pw, "delta"));
    }
    const char *failed = sst_run_result_error_vertex(rr);
    const sst_value *h = handler_entry(sst_object_get(rp, "pending"), id);
    if (h != NULL) {
        /* The node failed and its error handler failed too: LangGraph's results of both,
         * the node's with its own error, the handler's (its own id) with the run's. */
        if (results_on(s) && !is_cached(s, step, id)) {
            const sst_value *f = sst_object_get(sst_object_get(h, "origin"), "failure");
            const char *msg =
                sst_string_cstr(sst_object_get(sst_object_get(f, "error"), "message"));
            emit_result(s, sst__lg_step(s->cg, step), id, vertex, msg != NULL ? msg : "",
                        sst_array_empty(), NULL);
            const char *hv = sst_string_cstr(sst_object_get(h, "vertex"));
            if (sst_run_result_status(rr) == SST_RUN_FAILED && failed != NULL && hv != NULL &&
                strcmp(failed, hv) == 0 && !*failed_seen) {
                *failed_seen = true;
                emit_result(s, sst__lg_step(s->cg, step),
                            sst_string_cstr(sst_object_get(h, "task")), hv,
                            sst_run_result_error(rr)->msg, sst_array_empty(), NULL);
            }
        }
        return false;
    }
    sst_value *ints = interrupts_of(interrupts, id);
    /* A subgraph stopped by its interrupt_before/after interrupts with no values: the root
     * alone streams that (LangGraph's GraphInterrupt with none). */
    if (sst_array_len(ints) > 0 || (!s->nested && engine_interrupted(rr, id))) {
        emit_interrupt(s, sst_run_result_state(rr), ints);
        if (results_on(s)) {
            emit_result(s, sst__lg_step(s->cg, step), id, vertex, NULL, sst_value_ref(ints), NULL);
        }
    } else if (sst_run_result_status(rr) == SST_RUN_FAILED && failed != NULL &&
               strcmp(failed, vertex) == 0 && !*failed_seen && results_on(s)) {
        *failed_seen = true;
        emit_result(s, sst__lg_step(s->cg, step), id, vertex, sst_run_result_error(rr)->msg,
                    sst_array_empty(), NULL);
    }
    sst_value_unref(ints);
    return false;
}

void sst__stream_stop(sst__streamer *s, const sst_run_result *rr, const sst_value *interrupts,
                      const char *when) {
    sst_run_status status = sst_run_result_status(rr);
    bool any = sst__has_stream(s->o) && status != SST_RUN_COMPLETED && s->rc == SST_OK;
    if (any && when != NULL && !s->nested) {
        /* interrupt_before/after: LangGraph's GraphInterrupt with no interrupts (the root's
         * loop alone streams it; a subgraph's reaches the root through its parent task). */
        if (sst__stream_on(s, SST_STREAM_UPDATES)) {
            emit(s, SST_STREAM_UPDATES, NULL,
                 sst__set_take(sst_object_empty(), "__interrupt__", sst_array_empty(), NULL));
        }
    } else if (any && when == NULL) {
        const sst_value *rp = sst_run_result_resume_point(rr);
        const sst_value *tasks = sst_object_get(rp, "tasks");
        uint64_t step = (uint64_t)sst_int_value(sst_object_get(rp, "superstep"));
        bool touched = false, failed_seen = false;
        for (int pass = 0; pass < 2; pass++) {
            for (size_t i = 0; i < sst_array_len(tasks); i++) {
                touched = stop_task(s, rr, sst_array_get(tasks, i), step, interrupts, &failed_seen,
                                    pass == 0) ||
                          touched;
            }
        }
        if (touched && status == SST_RUN_INTERRUPTED && !s->nested) {
            emit_with_pending(s, sst_run_result_state(rr), sst_object_get(rp, "pending"));
        }
    }
    sst__stream_checkpoints(s);
}

/* ---- checkpoints ---- */

/* A snapshot's task as LangGraph's CheckpointTask when written: {id, name, interrupts, state}. */
static sst_value *checkpoint_tasks(const sst_value *tasks) {
    sst_value *out = sst_array_empty();
    for (size_t i = 0; i < sst_array_len(tasks) && out != NULL; i++) {
        const sst_value *t = sst_array_get(tasks, i);
        sst_value *e =
            sst__set_take(sst_object_empty(), "id", sst_value_ref(sst_object_get(t, "id")), NULL);
        e = sst__set_take(e, "name", sst_value_ref(sst_object_get(t, "name")), NULL);
        e = sst__set_take(e, "interrupts", sst_value_ref(sst_object_get(t, "interrupts")), NULL);
        const sst_value *st = sst_object_get(t, "state"); /* a subgraph's config */
        e = sst__set_take(e, "state", sst_value_ref(st != NULL ? st : sst_null()), NULL);
        out = sst__push_take(out, e, NULL);
    }
    return out;
}

/* Streams checkpoint record @p rec as LangGraph's CheckpointPayload. */
static void emit_checkpoint(sst__streamer *s, const sst_value *rec) {
    sst_error err = {0};
    sst_value *state = sst__persist_materialize(s->th, rec, &err);
    sst_value *snap = state != NULL ? sst__snapshot(s->th, rec, state, NULL, false, &err) : NULL;
    snap = snap != NULL ? sst__snapshot_subgraphs(s->th, snap, false, &err) : NULL;
    sst_value_unref(state);
    if (snap == NULL) {
        s->rc = sst__error_unless_set(&err, SST_ENOMEM, "out of memory");
        s->err = err;
        sst__error_prefix(&s->err, "checkpoints stream");
        return;
    }
    static const char *const keys[] = {"config", "parent_config", "values", "metadata", "next"};
    sst_value *p = sst_object_empty();
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        const sst_value *v = sst_object_get(snap, keys[i]); /* no parent: left out */
        p = sst__set_take(p, keys[i], sst_value_ref(v != NULL ? v : sst_null()), NULL);
    }
    p = sst__set_take(p, "tasks", checkpoint_tasks(sst_object_get(snap, "tasks")), NULL);
    int64_t step = sst_int_value(sst_object_get(rec, "step"));
    emit_typed(s, SST_STREAM_CHECKPOINTS, "checkpoint", step, NULL, p,
               sst_object_get(snap, "created_at"));
    sst_value_unref(snap);
}

/* The most checkpoints one call streams (an invoke writes at most a few between calls). */
#define MAX_CHAIN 64

void sst__stream_checkpoints(sst__streamer *s) {
    sst_graph_thread *th = s->th;
    if (th == NULL || th->last_id == NULL || s->rc != SST_OK ||
        !(sst__stream_on(s, SST_STREAM_CHECKPOINTS) || sst__stream_on(s, SST_STREAM_DEBUG)) ||
        (s->mark != NULL && strcmp(th->last_id, s->mark) <= 0)) {
        return;
    }
    /* This run's checkpoints: from the newest back while newer than the mark (ids are
     * time-ordered), then streamed oldest first; with durability "async", once stored. */
    sst_error err = {0};
    if (sst__persist_flush(th, &err) != SST_OK) {
        s->rc = err.code;
        s->err = err;
        return;
    }
    sst_value *chain = sst_array_empty();
    const char *id = th->last_id;
    while (chain != NULL && id != NULL && sst_array_len(chain) < MAX_CHAIN) {
        sst_value *rec = sst__record_get(th, id, &err);
        if (rec == NULL) {
            s->rc = sst__error_unless_set(&err, SST_ENOMEM, "out of memory");
            s->err = err;
            sst__error_prefix(&s->err, "checkpoints stream");
            break;
        }
        chain = sst__push_take(chain, rec, NULL);
        if (chain == NULL) {
            s->rc = sst__enomem(&s->err);
            break;
        }
        id = sst_string_cstr(sst_object_get(rec, "parent"));
        if (id != NULL && (id[0] == '\0' || (s->mark != NULL && strcmp(id, s->mark) <= 0))) {
            break; /* the first checkpoint (no parent), or one streamed before */
        }
    }
    for (size_t i = sst_array_len(chain); i > 0 && s->rc == SST_OK; i--) {
        emit_checkpoint(s, sst_array_get(chain, i - 1));
    }
    sst_value_unref(chain);
    char *mark = sst__strndup(th->last_id, strlen(th->last_id));
    if (mark != NULL) {
        sst__free(s->mark);
        s->mark = mark;
    }
}
