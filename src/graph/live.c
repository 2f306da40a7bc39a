/* SPDX-License-Identifier: MIT */
/*
 * What nodes stream while they run (stream.h, "live events"): delivered on
 * the node's thread at once, one call at a time, not at the superstep's
 * commit. A task's own events keep their order; tasks running in parallel
 * interleave as they run.
 *
 * The callback never runs under the invoke's lock (mu): a node that holds a lock of
 * its own while it emits, and a callback that takes that lock, would otherwise wait
 * for each other for ever (so would binding code that sends with an interpreter lock
 * held, as Python's writer()). An event goes on a queue under mu; the thread that
 * finds nobody sending becomes the sender and delivers the queue, one call at a time
 * and in queue order, with mu released around each call, until it is empty. A thread
 * that finds a sender returns at once: its event leaves right after the ones before
 * it. Every sender has returned when the superstep's tasks have, so the queue is
 * empty when the engine streams the commit (stream.c).
 *
 * The "messages" mode for the state follows LangGraph's StreamMessagesHandler:
 * when a node ends, each message its update writes to a field with the
 * add_messages reducer is streamed as
 * [message, metadata] unless its id was streamed before in this invoke or
 * was in the input of a task that started earlier (a node returning the state
 * it read streams nothing again); sst_node_push_message streams at once.
 */
#include <string.h>
#include <time.h>

#include "stream.h"
#include "values/build.h"

void sst__live_init(sst__live *l, const sst_compiled_graph *cg, const sst_invoke_opts *o,
                    sst_graph_thread *th) {
    memset(l, 0, sizeof *l);
    l->cg = cg;
    l->o = o;
    l->th = th;
    /* A default mutex with static initialization: nothing to destroy. */
    l->mu = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
}

/* A queued event: its node's name follows it. */
struct sst__live_event {
    sst__live_event *next;
    sst_stream_mode mode;
    sst_value *event; /* owned */
    char node[];
};

void sst__live_free(sst__live *l) {
    /* Empty: every sender empties the queue before it returns (this frees nothing). */
    while (l->head != NULL) {
        sst__live_event *e = l->head;
        l->head = e->next;
        sst_value_unref(e->event);
        sst__free(e);
    }
    l->tail = NULL;
    sst_value_unref(l->seen);
    l->seen = NULL;
}

bool sst__live_on(const sst__live *l, sst_stream_mode m) {
    return l != NULL && sst__has_stream(l->o) && (l->o->stream_modes & (unsigned)m) != 0;
}

/* The callback's failure on event @p e into @p err, unless one is there already. */
static void failed(const sst__live_event *e, sst_code rc, sst_code *first, sst_error *err) {
    if (*first != SST_OK) {
        return;
    }
    *first = rc;
    sst__error(err, rc, "stream: the callback failed on a %s event of node '%s'",
               e->mode == SST_STREAM_CUSTOM ? "custom" : "messages", e->node);
}

sst_code sst__live_send(sst__live *l, sst_stream_mode m, const char *node, sst_value *event,
                        sst_error *err) {
    if (event == NULL) {
        return sst__enomem(err);
    }
    if (!sst__live_on(l, m)) {
        sst_value_unref(event);
        return SST_OK;
    }
    size_t n = strlen(node);
    sst__live_event *e = sst__malloc(sizeof *e + n + 1);
    if (e == NULL) {
        sst_value_unref(event);
        return sst__enomem(err);
    }
    e->next = NULL;
    e->mode = m;
    e->event = event;
    memcpy(e->node, node, n + 1);
    pthread_mutex_lock(&l->mu);
    if (l->tail != NULL) {
        l->tail->next = e;
    } else {
        l->head = e;
    }
    l->tail = e;
    if (l->sending) {
        pthread_mutex_unlock(&l->mu); /* the sender delivers it after what it has */
        return SST_OK;
    }
    l->sending = true;
    sst_code first = SST_OK;
    while (l->head != NULL) {
        e = l->head;
        l->head = e->next;
        if (l->head == NULL) {
            l->tail = NULL;
        }
        pthread_mutex_unlock(&l->mu);
        sst_code rc = sst__stream_call(l->o, e->mode, e->node, e->event);
        if (rc != SST_OK) {
            failed(e, rc, &first, err);
        }
        sst_value_unref(e->event);
        sst__free(e);
        pthread_mutex_lock(&l->mu);
    }
    l->sending = false;
    pthread_mutex_unlock(&l->mu);
    return first;
}

sst_code sst__live_task_event(sst__live *l, const char *type, int64_t step, const char *node,
                              sst_value *payload, sst_error *err) {
    if (payload == NULL) {
        return sst__enomem(err);
    }
    sst_code rc = SST_OK;
    bool tasks = strcmp(type, "checkpoint") != 0;
    if (sst__live_on(l, tasks ? SST_STREAM_TASKS : SST_STREAM_CHECKPOINTS)) {
        rc = sst__live_send(l, tasks ? SST_STREAM_TASKS : SST_STREAM_CHECKPOINTS, node,
                            sst_value_ref(payload), err);
    }
    if (rc == SST_OK && sst__live_on(l, SST_STREAM_DEBUG)) {
        sst_value *e = sst__set_take(sst_object_empty(), "type", sst_string_new(type, NULL), NULL);
        e = sst__set_take(e, "timestamp", sst__stream_now(), NULL);
        e = sst__set_take(e, "step", sst_int_new(step, NULL), NULL);
        e = sst__set_take(e, "payload", sst_value_ref(payload), NULL);
        rc = sst__live_send(l, SST_STREAM_DEBUG, node, e, err);
    }
    sst_value_unref(payload);
    return rc;
}

sst_code sst__live_push_task(sst__live *l, int64_t step, const char *id, const char *name,
                             const sst_value *input, sst_error *err) {
    if (!sst__live_on(l, SST_STREAM_TASKS) && !sst__live_on(l, SST_STREAM_DEBUG)) {
        return SST_OK;
    }
    sst_value *p = sst__set_take(sst_object_empty(), "id", sst_string_new(id, NULL), NULL);
    p = sst__set_take(p, "name", sst_string_new(name, NULL), NULL);
    p = sst__set_take(p, "input", sst_value_ref(input != NULL ? input : sst_null()), NULL);
    p = sst__set_take(
        p, "triggers",
        sst__push_take(sst_array_empty(), sst_string_new("__pregel_push", NULL), NULL), NULL);
    return sst__live_task_event(l, "task", step, name, p, err);
}

/* True when @p v looks like a message: an object with "content" and "role" or "type". */
static bool is_message(const sst_value *v) {
    return sst_is_object(v) && sst_object_get(v, "content") != NULL &&
           (sst_object_get(v, "role") != NULL || sst_object_get(v, "type") != NULL);
}

/* Adds @p id (a string, else nothing) to the seen set (under mu); false when out of memory. */
static bool see_id(sst__live *l, const sst_value *id) {
    if (!sst_is_string(id)) {
        return true;
    }
    sst_value *obj = l->seen != NULL ? l->seen : sst_object_empty();
    l->seen = obj != NULL ? sst_object_setv_take(obj, id, sst_bool(true), NULL) : NULL;
    return l->seen != NULL;
}

/* Adds the id of message @p m to the seen set (under mu). */
static bool see(sst__live *l, const sst_value *m) {
    return see_id(l, sst_object_get(m, "id"));
}

sst_code sst__live_note_input(sst__live *l, const sst_value *input, sst_error *err) {
    if (!sst__live_on(l, SST_STREAM_MESSAGES) || !sst_is_object(input)) {
        return SST_OK;
    }
    bool ok = true;
    pthread_mutex_lock(&l->mu);
    for (size_t k = 0; k < sst_object_len(input) && ok; k++) {
        const sst_value *v = sst_object_value_at(input, k);
        ok = !is_message(v) || see(l, v);
        for (size_t i = 0; ok && sst_is_array(v) && i < sst_array_len(v); i++) {
            ok = !is_message(sst_array_get(v, i)) || see(l, sst_array_get(v, i));
        }
    }
    pthread_mutex_unlock(&l->mu);
    return ok ? SST_OK : sst__enomem(err);
}

const char *sst__live_ns(const sst__live *l) {
    if (l == NULL) {
        return "";
    }
    if (l->th != NULL && l->th->ns != NULL) {
        return l->th->ns;
    }
    const sst_value *v =
        sst_object_get(sst_object_get(l->o->config, "configurable"), "checkpoint_ns");
    return sst_is_string(v) ? sst_string_cstr(v) : "";
}

/* The configurable keys LangGraph copies into the metadata of a "messages" chunk. */
static const char *const k_meta_keys[] = {"thread_id", "checkpoint_id", "checkpoint_ns", "task_id",
                                          "run_id",    "assistant_id",  "graph_id"};

/* The metadata of a "messages" chunk of task @p t (LangGraph's task metadata). */
static sst_value *metadata(const sst__live *l, sst_task *t, const char *node) {
    sst_value *m = sst_object_empty();
    const sst_value *conf = sst_object_get(l->o->config, "configurable");
    for (size_t i = 0; i < sizeof k_meta_keys / sizeof k_meta_keys[0]; i++) {
        const sst_value *v = sst_object_get(conf, k_meta_keys[i]);
        if (v != NULL && (sst_is_string(v) || sst_is_number(v) || sst_is_bool(v))) {
            m = sst__set_take(m, k_meta_keys[i], sst_value_ref(v), NULL);
        }
    }
    m = sst__set_take(m, "langgraph_step",
                      sst_int_new(sst__lg_step(l->cg, sst_task_superstep(t)), NULL), NULL);
    m = sst__set_take(m, "langgraph_node", sst_string_new(node, NULL), NULL);
    sst__buf b;
    sst__buf_init(&b);
    if (sst_task_input(t) != NULL) {
        sst__buf_printf(&b, "__pregel_push");
    } else {
        sst__buf_printf(&b, "branch:to:%s", node);
    }
    char *trig = sst__buf_detach(&b, NULL);
    m = sst__set_take(
        m, "langgraph_triggers",
        trig != NULL ? sst__push_take(sst_array_empty(), sst_string_new(trig, NULL), NULL) : NULL,
        NULL);
    sst__free(trig);
    char *ns = sst__subgraph_ns(NULL, sst__live_ns(l), node, sst_task_id(t));
    m = sst__set_take(m, "langgraph_checkpoint_ns", ns != NULL ? sst_string_new(ns, NULL) : NULL,
                      NULL);
    sst__free(ns);
    return m;
}

sst_code sst__live_token(sst__live *l, const char *node, sst_value *event, sst_error *err) {
    if (sst__live_on(l, SST_STREAM_MESSAGES)) {
        /* The message the tokens make up is not streamed again when the node writes it. */
        pthread_mutex_lock(&l->mu);
        bool ok = see_id(l, sst_object_get(event, "id"));
        pthread_mutex_unlock(&l->mu);
        if (!ok) {
            sst_value_unref(event);
            return sst__enomem(err);
        }
    }
    return sst__live_send(l, SST_STREAM_MESSAGES, node, event, err);
}

sst_code sst__live_message(sst__live *l, sst_task *t, const char *node, const sst_value *msg,
                           bool dedupe, sst_error *err) {
    if (!sst__live_on(l, SST_STREAM_MESSAGES)) {
        return SST_OK;
    }
    const sst_value *id = sst_object_get(msg, "id");
    pthread_mutex_lock(&l->mu);
    bool seen = sst_is_string(id) && sst_object_get(l->seen, sst_string_cstr(id)) != NULL;
    bool ok = seen || see(l, msg);
    pthread_mutex_unlock(&l->mu);
    if (!ok) {
        return sst__enomem(err);
    }
    if (dedupe && seen) {
        return SST_OK;
    }
    sst_value *ev = sst__push_take(sst_array_empty(), sst_value_ref(msg), NULL);
    ev = sst__push_take(ev, metadata(l, t, node), NULL);
    return sst__live_send(l, SST_STREAM_MESSAGES, node, ev, err);
}

/* Streams the messages in one write @p v (a message, a list, or a marker holding them). */
static sst_code write_messages(sst__live *l, sst_task *t, const char *node, const sst_value *v,
                               sst_error *err) {
    if (is_message(v)) {
        return sst__live_message(l, t, node, v, true, err);
    }
    const sst_value *inner = sst_object_get(v, "__overwrite__");
    if (inner == NULL) {
        inner = sst_object_get(v, "$writes");
    }
    if (inner != NULL) {
        return write_messages(l, t, node, inner, err);
    }
    sst_code rc = SST_OK;
    for (size_t i = 0; sst_is_array(v) && i < sst_array_len(v) && rc == SST_OK; i++) {
        const sst_value *e = sst_array_get(v, i);
        rc = is_message(e)                         ? sst__live_message(l, t, node, e, true, err)
             : sst_is_array(e) || sst_is_object(e) ? write_messages(l, t, node, e, err)
                                                   : SST_OK;
    }
    return rc;
}

sst_code sst__live_update_messages(sst__live *l, sst_task *t, const char *node,
                                   const sst_value *delta, sst_error *err) {
    sst_code rc = SST_OK;
    for (size_t k = 0; k < sst_object_len(delta) && rc == SST_OK; k++) {
        const char *field = sst_string_cstr(sst_object_key_at(delta, k));
        const char *r = sst_reducer_name(sst_schema_field_reducer(l->cg->schema, field));
        if (r != NULL && strcmp(r, "add_messages") == 0) {
            rc = write_messages(l, t, node, sst_object_value_at(delta, k), err);
        }
    }
    return rc;
}
