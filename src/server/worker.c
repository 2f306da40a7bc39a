/* SPDX-License-Identifier: MIT */
/*
 * Workers: threads that claim runs from the queue and run them. Each worker
 * gets its own copy of every graph from its source (a Lua state runs on one
 * thread at a time) unless the source is shared (graph_source.c), publishes the run's events to its
 * stream as they come, and finishes the run in the queue with its status. A keeper thread renews
 * the leases of the runs being run (and so learns of cancels asked through the queue) and drops old
 * streams.
 *
 * A run claimed again after its worker died (attempt > 1) that had already
 * committed checkpoints (their metadata carries its run_id) continues from
 * its last checkpoint with no input: committed tasks never run again.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "checkpoint/sqlite_int.h"
#include "common/pg.h"
#include "queue/postgres_wait.h"
#include "server_int.h"
#include "superstep/functional.h"
#include "superstep/json.h"
#include "thread_ttl.h"

enum { CANCEL_NONE = 0, CANCEL_INTERRUPT, CANCEL_ROLLBACK, CANCEL_STOP, CANCEL_LOST };

struct srv_worker {
    sst_server *s;
    unsigned index;
    pthread_t th;
    bool started;
    /* One per graph, got on first use on this thread (srv_graph_get): its graph and the
     * instance to give back (NULL for a shared source's). */
    struct {
        const sst_compiled_graph *cg;
        void *inst;
    } * graphs;
    char owner[480];
    /* The run being run (guarded by s->mu): its id and token, for cancels and renewals. */
    char run_id[64];
    uint64_t token;
    /* The keeper may renew its lease: its claim is committed (one handed over to the
     * run's first checkpoint is not, at first: a renewal would not see it and judge the
     * lease lost) and its finish has not begun (which gives the lease back). */
    bool renewable;
    atomic_int cancel;
};

/* The worker's graph of @p g, got from its source on first use. */
static const sst_compiled_graph *graph_of(srv_worker *w, srv_graph *g, sst_error *err) {
    size_t i = (size_t)(g - w->s->graphs);
    if (w->graphs[i].cg == NULL) {
        w->graphs[i].cg = srv_graph_get(g, &w->graphs[i].inst, err);
    }
    return w->graphs[i].cg;
}

/* A cancel (or a lost lease) stops nodes too; the server stopping only stops the run at
 * its next superstep boundary, so what is running finishes and commits. */
static bool cancelled(void *ud, bool in_node) {
    srv_worker *w = ud;
    if (!in_node && w->s->pg != NULL && sst__pg_batch_kept(w->s->pg)) {
        /* A checkpoint kept open for the finish that was not the run's last: committed
         * before this superstep runs, as durability "sync" promises. Lost: the run stops
         * without committing, and whoever claims it next goes on from the one before. */
        sst_error err = {0};
        if (sst__pg_batch_commit(w->s->pg, true, &err) != SST_OK) {
            srv_log(w->s, "worker %u: committing a checkpoint: %s", w->index, err.msg);
            atomic_store(&w->cancel, CANCEL_LOST);
        }
    }
    int c = atomic_load(&w->cancel);
    return c != CANCEL_NONE && !(in_node && c == CANCEL_STOP);
}

/* What the stream callback needs. */
typedef struct emit_ctx {
    sst_server *s;
    srv_stream *st;
    unsigned modes; /* the engine's stream bits asked for */
    const run_copy *run;
    unsigned user;  /* the modes the run asked for (SRV_MODE_*) */
    bool subgraphs; /* the run asked for its subgraphs' events */
    srv_msgs *msgs; /* the legacy "messages" mode's state, when asked for */
} emit_ctx;

static const char *mode_name(sst_stream_mode m) {
    switch (m) {
        case SST_STREAM_VALUES:
            return "values";
        case SST_STREAM_UPDATES:
            return "updates";
        case SST_STREAM_CUSTOM:
            return "custom";
        case SST_STREAM_DEBUG:
            return "debug";
        case SST_STREAM_MESSAGES:
            return "messages";
        case SST_STREAM_TASKS:
            return "tasks";
        default:
            return "checkpoints";
    }
}

/* {"__interrupt__": [{id, value}]} with only those members (LangGraph's Interrupt). */
static sst_value *interrupts_only(const sst_value *list, sst_error *err) {
    sst_value *out = sst_array_empty();
    for (size_t i = 0; i < sst_array_len(list); i++) {
        const sst_value *it = sst_array_get(list, i);
        if (sst_object_get(it, "when") != NULL) {
            continue; /* interrupt_before/after: LangGraph shows none */
        }
        const sst_value *v = sst_object_get(it, "value");
        sst_value *o =
            sst__set_take(sst_object_empty(), "id", sst_value_ref(sst_object_get(it, "id")), err);
        o = sst__set_take(o, "value", sst_value_ref(v != NULL ? v : sst_null()), err);
        out = sst__push_take(out, o, err);
    }
    return sst__set_take(sst_object_empty(), "__interrupt__", out, err);
}

/* A messages event as LangGraph's messages-tuple: [message or chunk, metadata]. */
static sst_value *message_tuple(const sst_value *ev, sst_error *err) {
    if (sst_is_array(ev)) {
        return sst_value_ref(ev);
    }
    sst_value *chunk = sst__set_take(sst_object_empty(), "content",
                                     sst_value_ref(sst_object_get(ev, "delta") != NULL
                                                       ? sst_object_get(ev, "delta")
                                                       : sst_string_empty()),
                                     err);
    chunk = sst__set_take(chunk, "type", sst_string_new("AIMessageChunk", err), err);
    const sst_value *id = sst_object_get(ev, "id");
    chunk = sst__set_take(chunk, "id", sst_value_ref(id != NULL ? id : sst_null()), err);
    sst_value *t = sst__push_take(sst_array_empty(), chunk, err);
    return sst__push_take(t, sst_object_empty(), err);
}

/* {node: update} with a node that wrote nothing shown as {} (LangGraph's server). */
static sst_value *updates_of(const sst_value *ev, sst_error *err) {
    sst_value *o = sst_value_ref(ev);
    for (size_t i = 0; i < sst_object_len(ev) && o != NULL; i++) {
        const sst_value *u = sst_object_value_at(ev, i);
        if (sst_is_null(u)) {
            o = sst__setv_take(o, sst_object_key_at(ev, i), sst_object_empty(), err);
        } else if (srv_unroot(u) != u) { /* a root state's update: the value itself */
            o = sst__setv_take(o, sst_object_key_at(ev, i), sst_value_ref(srv_unroot(u)), err);
        }
    }
    return o;
}

/* A tasks event: a task's start carries "interrupts": [] as LangGraph's server sends it. */
static sst_value *task_event(const sst_value *ev, sst_error *err) {
    if (sst_object_get(ev, "triggers") != NULL && sst_object_get(ev, "interrupts") == NULL) {
        return sst__set_take(sst_value_ref(ev), "interrupts", sst_array_empty(), err);
    }
    return sst_value_ref(ev);
}

/* A debug event: a checkpoint's payload gains "checkpoint" and "parent_checkpoint" and its
 * config the run id; a task's payload is the tasks event's. */
static sst_value *debug_event(const emit_ctx *e, const sst_value *ev, sst_error *err) {
    const sst_value *p = sst_object_get(ev, "payload");
    const char *type = sst_string_cstr(sst_object_get(ev, "type"));
    if (type != NULL && strcmp(type, "checkpoint") == 0 && sst_is_object(p)) {
        const char *tid = e->run->thread_id;
        const sst_value *cfg = sst_object_get(p, "config");
        sst_value *conf = sst_value_ref(sst_object_get(cfg, "configurable"));
        conf = sst__set_take(conf, "run_id", sst_string_new(e->run->run_id, err), err);
        sst_value *q =
            sst__set_take(sst_value_ref(p), "checkpoint", srv_checkpoint_of(tid, cfg, err), err);
        q = sst__set_take(q, "parent_checkpoint",
                          srv_checkpoint_of(tid, sst_object_get(p, "parent_config"), err), err);
        q = sst__set_take(q, "config", sst__set_take(sst_value_ref(cfg), "configurable", conf, err),
                          err);
        return sst__set_take(sst_value_ref(ev), "payload", q, err);
    }
    if (type != NULL && strncmp(type, "task", 4) == 0 && sst_is_object(p)) {
        return sst__set_take(sst_value_ref(ev), "payload", task_event(p, err), err);
    }
    return sst_value_ref(ev);
}

static void publish(emit_ctx *e, const char *mode, const char *ns, const sst_value *data) {
    size_t len = 0;
    sst_error err = {0};
    char *text = data != NULL ? sst_json_write(data, SST_JSON_COMPACT, &len, &err) : NULL;
    if (text == NULL) {
        return; /* an event lost to memory must not fail the run */
    }
    char name[512];
    snprintf(name, sizeof name, "%s%s%s", mode, ns != NULL && ns[0] != '\0' ? "|" : "",
             ns != NULL ? ns : "");
    srv_stream_publish(e->s, e->st, name, text, len);
}

/* The modes "messages" adds for the engine (values, messages) show only when asked for too. */
static bool shown(const emit_ctx *e, sst_stream_mode mode) {
    return mode == SST_STREAM_VALUES     ? (e->user & SRV_MODE_VALUES) != 0
           : mode == SST_STREAM_MESSAGES ? (e->user & SRV_MODE_MESSAGES) != 0
                                         : true;
}

/* The legacy "messages" mode (messages_mode.c) on a messages-tuple @p tuple of a token. */
static void publish_partial(emit_ctx *e, const sst_value *tuple) {
    sst_error err = {0};
    sst_value *first = NULL;
    sst_value *part =
        srv_msgs_partial(e->msgs, sst_array_get(tuple, 0), sst_array_get(tuple, 1), &first, &err);
    publish(e, "messages/metadata", NULL, first);
    publish(e, "messages/partial", NULL, part);
    sst_value_unref(first);
    sst_value_unref(part);
}

/* The legacy "messages" mode on a root chunk's payload @p data: its new messages. As
 * LangGraph.js's server, none with stream_subgraphs (it reads [ns, mode] there). */
static void publish_complete(emit_ctx *e, const sst_value *data) {
    if (e->msgs == NULL || e->subgraphs) {
        return;
    }
    sst_error err = {0};
    sst_value *done = srv_msgs_complete(e->msgs, data, &err);
    publish(e, "messages/complete", NULL, done);
    sst_value_unref(done);
}

static sst_code on_event(sst_stream_mode mode, const char *ns, const char *node,
                         const sst_value *event, void *ud) {
    SST_UNUSED(node);
    emit_ctx *e = ud;
    sst_error err = {0};
    sst_value *data;
    bool token = mode == SST_STREAM_MESSAGES && !sst_is_array(event);
    if (ns != NULL && ns[0] != '\0' && !e->subgraphs) {
        /* only "messages" asked for them: its tokens come from any depth */
        if (e->msgs != NULL && token) {
            data = message_tuple(event, &err);
            publish_partial(e, data);
            sst_value_unref(data);
        }
        return SST_OK;
    }
    const sst_value *ints = sst_object_get(event, "__interrupt__");
    if ((mode == SST_STREAM_VALUES || mode == SST_STREAM_UPDATES) && ints != NULL) {
        data = interrupts_only(ints, &err);
        if (mode == SST_STREAM_UPDATES && sst_array_len(ints) == 0 &&
            (e->user & SRV_MODE_VALUES) != 0) {
            /* interrupt_before/after: LangGraph's server shows it in both modes */
            publish(e, "updates", ns, data);
            publish(e, "values", ns, data);
            sst_value_unref(data);
            return SST_OK;
        }
    } else if (mode == SST_STREAM_UPDATES) {
        data = updates_of(event, &err);
    } else if (mode == SST_STREAM_TASKS) {
        data = task_event(event, &err);
    } else if (mode == SST_STREAM_DEBUG) {
        data = debug_event(e, event, &err);
    } else if (mode == SST_STREAM_MESSAGES) {
        data = message_tuple(event, &err);
        if (e->msgs != NULL && token && data != NULL) {
            publish_partial(e, data);
        }
    } else {
        data = sst_value_ref(mode == SST_STREAM_VALUES ? srv_unroot(event) : event);
    }
    if (shown(e, mode)) {
        publish(e, mode_name(mode), ns, data);
    }
    if (mode != SST_STREAM_MESSAGES && data != NULL) {
        publish_complete(e, data);
    }
    sst_value_unref(data);
    return SST_OK;
}

/* The stream modes of kwargs.stream_mode as engine bits. */
static unsigned engine_modes(const sst_value *modes) {
    unsigned bits = 0;
    for (size_t i = 0; i < sst_array_len(modes); i++) {
        unsigned b = srv_mode_bit(sst_string_cstr(sst_array_get(modes, i)));
        bits |= b & SRV_MODE_VALUES ? SST_STREAM_VALUES : 0;
        bits |= b & SRV_MODE_UPDATES ? SST_STREAM_UPDATES : 0;
        bits |= b & SRV_MODE_CUSTOM ? SST_STREAM_CUSTOM : 0;
        bits |= b & SRV_MODE_DEBUG ? SST_STREAM_DEBUG : 0;
        bits |= b & (SRV_MODE_MESSAGES | SRV_MODE_MESSAGES_LEGACY) ? SST_STREAM_MESSAGES : 0;
        bits |= b & SRV_MODE_MESSAGES_LEGACY ? SST_STREAM_VALUES : 0; /* as LangGraph's server */
        bits |= b & SRV_MODE_TASKS ? SST_STREAM_TASKS : 0;
        bits |= b & SRV_MODE_CHECKPOINTS ? SST_STREAM_CHECKPOINTS : 0;
    }
    return bits;
}

/* The names of an interrupt_before/after member: "*" or a list. */
static const char **names_of(const sst_value *v, size_t *n) {
    *n = 0;
    if (v == NULL || sst_is_null(v)) {
        return NULL;
    }
    size_t count = sst_is_string(v) ? 1 : sst_array_len(v);
    const char **out = sst__calloc(count + 1, sizeof *out);
    for (size_t i = 0; out != NULL && i < count; i++) {
        out[i] = sst_is_string(v) ? sst_string_cstr(v) : sst_string_cstr(sst_array_get(v, i));
    }
    *n = out != NULL ? count : 0;
    return out;
}

/* The run's config with the ids LangGraph puts in configurable (and so in checkpoint
 * metadata): run_id, graph_id, assistant_id, run_attempt. */
static sst_value *run_config(const run_copy *c, sst_error *err) {
    const sst_value *given = sst_object_get(c->kwargs, "config");
    sst_value *cfg = sst_value_ref(sst_is_object(given) ? given : sst_object_empty());
    const sst_value *conf0 = sst_object_get(cfg, "configurable");
    sst_value *conf = sst_value_ref(sst_is_object(conf0) ? conf0 : sst_object_empty());
    /* "__" keys are the engine's and its hosts' (the Python binding's "__pyrun__" is an
     * address): a client never sets them. */
    for (size_t i = sst_object_len(conf); conf != NULL && i > 0; i--) {
        const sst_value *k = sst_object_key_at(conf, i - 1);
        if (strncmp(sst_string_cstr(k), "__", 2) == 0) {
            sst_value *key = sst_value_ref(k); /* outlives the member it names */
            conf = sst_object_remove_take(conf, sst_string_cstr(key), err);
            sst_value_unref(key);
        }
    }
    conf = sst__set_take(conf, "run_id", sst_string_new(c->run_id, err), err);
    conf = sst__set_take(conf, "thread_id", sst_string_new(c->thread_id, err), err);
    conf =
        sst__set_take(conf, "graph_id", sst_value_ref(sst_object_get(c->kwargs, "graph_id")), err);
    conf = sst__set_take(conf, "assistant_id", sst_string_new(c->assistant_id, err), err);
    conf = sst__set_take(conf, "run_attempt", sst_int_new(c->run.attempt, err), err);
    return sst__set_take(cfg, "configurable", conf, err);
}

/* True when checkpoint @p rec was made by run @p run_id (its metadata's run_id: runs
 * put their id in configurable, which checkpoints copy into their metadata). */
static bool made_by(const sst_checkpoint *rec, const char *run_id) {
    sst_error err = {0};
    sst_value *meta = sst_payload_value(&rec->metadata, &err);
    const sst_value *rid = sst_object_get(meta, "run_id");
    bool mine = sst_is_string(rid) && strcmp(sst_string_cstr(rid), run_id) == 0;
    sst_value_unref(meta);
    return mine;
}

/* What the worker found of a run that ran before (attempt > 1). */
enum { FRESH, CONTINUE, ALREADY_DONE };

typedef struct latest_mine {
    const char *run_id;
    bool mine;
} latest_mine;

static bool is_latest_mine(const sst_checkpoint *rec, void *ud) {
    latest_mine *l = ud;
    l->mine = made_by(rec, l->run_id);
    return false; /* the latest only */
}

/* Whether the thread's latest checkpoint was made by this run: then the run continues from
 * it (or it had ended and only its status was lost). */
static int earlier_progress(sst_server *s, const run_copy *c, sst_graph_thread *th) {
    sst_error err = {0};
    latest_mine l = {c->run_id, false};
    sst_checkpoint_query q = {.thread_id = c->thread_id, .ns = "", .limit = 1};
    if (sst_checkpointer_list(s->cp, &q, is_latest_mine, &l, &err) != SST_OK || !l.mine) {
        return FRESH;
    }
    sst_value *st = sst_graph_get_state(th, NULL, &err);
    bool done = st != NULL && sst_array_len(sst_object_get(st, "next")) == 0;
    sst_value_unref(st);
    return done ? ALREADY_DONE : CONTINUE;
}

/* Command{resume}: by interrupt id when it is an object whose keys are all pending ids. */
static void set_resume(sst_graph_thread *th, const sst_value *resume, sst_invoke_opts *o) {
    if (sst_is_object(resume) && sst_object_len(resume) > 0) {
        sst_error err = {0};
        sst_value *st = sst_graph_get_state(th, NULL, &err);
        const sst_value *ints = sst_object_get(st, "interrupts");
        bool ids = true;
        for (size_t i = 0; ids && i < sst_object_len(resume); i++) {
            const sst_value *k = sst_object_key_at(resume, i);
            bool found = false;
            for (size_t j = 0; !found && j < sst_array_len(ints); j++) {
                found = sst_value_equal(sst_object_get(sst_array_get(ints, j), "id"), k);
            }
            ids = found;
        }
        sst_value_unref(st);
        if (ids) {
            o->resume_by_id = resume;
            return;
        }
    }
    o->resume = resume;
}

/* Command{goto}: names, and Sends as {"node", "input"} made into our Send values. */
static sst_value *goto_of(const sst_value *g, sst_error *err) {
    if (g == NULL || sst_is_null(g)) {
        return NULL;
    }
    if (sst_is_object(g) && sst_is_string(sst_object_get(g, "node"))) {
        const sst_value *in = sst_object_get(g, "input");
        return sst_send_new(sst_string_cstr(sst_object_get(g, "node")),
                            sst_value_ref(in != NULL ? in : sst_null()), err);
    }
    if (sst_is_array(g)) {
        sst_value *out = sst_array_empty();
        for (size_t i = 0; i < sst_array_len(g) && out != NULL; i++) {
            out = sst__push_take(out, goto_of(sst_array_get(g, i), err), err);
        }
        return out;
    }
    return sst_value_ref(g);
}

/* LangGraph's error name for a failed run. */
static const char *error_name(const sst_error *e) {
    if (e->code == SST_ELIMIT && strstr(e->msg, "ecursion") != NULL) {
        return "GraphRecursionError";
    }
    switch (e->code) {
        case SST_ETIMEOUT:
            return "TimeoutError";
        case SST_ECANCELLED:
            return "CancelledError";
        case SST_EINVAL:
        case SST_ETYPE:
            return "ValueError";
        default:
            return "Error";
    }
}

/* {"error": name, "message": msg} as JSON text. */
static char *error_json(const sst_error *e) {
    sst_error err = {0};
    sst_value *o =
        sst__set_take(sst_object_empty(), "error", sst_string_new(error_name(e), &err), &err);
    o = sst__set_take(o, "message", sst_string_new(e->msg, &err), &err);
    char *t = o != NULL ? sst_json_write(o, SST_JSON_COMPACT, NULL, &err) : NULL;
    sst_value_unref(o);
    return t;
}

/* The outcome of one run, to finish it with. */
typedef struct outcome {
    sst_queue_status status;
    char *result; /* JSON text for wait/join; NULL: null */
    char *values; /* JSON text of the final values (webhook) */
    int cancel;
    bool by_cancel; /* it stopped because of a cancel (or the server stopping) */
} outcome;

static char *json_of(const sst_value *v) {
    return v != NULL ? sst_json_write(v, SST_JSON_COMPACT, NULL, NULL) : NULL;
}

/* Fills @p out from the invoke's result (NULL: it could not start, @p e says why). */
static void judge(srv_worker *w, emit_ctx *ec, sst_graph_result *gr, const sst_error *e,
                  outcome *out) {
    sst_error err = {0};
    sst_error fail = gr != NULL ? *sst_graph_result_error(gr) : *e;
    out->cancel = atomic_load(&w->cancel);
    if (gr != NULL && sst_graph_result_status(gr) == SST_RUN_COMPLETED) {
        out->status = SST_QUEUE_SUCCESS;
        out->result = json_of(srv_unroot(sst_graph_result_state(gr)));
        out->values = json_of(srv_unroot(sst_graph_result_state(gr)));
        return;
    }
    if (gr != NULL && sst_graph_result_status(gr) == SST_RUN_INTERRUPTED) {
        out->status = SST_QUEUE_INTERRUPTED;
        sst_value *i = interrupts_only(sst_graph_result_interrupts(gr), &err);
        if (sst_array_len(sst_object_get(i, "__interrupt__")) == 0 &&
            (ec->user & (SRV_MODE_VALUES | SRV_MODE_UPDATES)) == SRV_MODE_VALUES) {
            /* interrupt_before/after asked for "values" without "updates" (useStream): the
             * stream ends with values {"__interrupt__": []} as LangGraph.js's ends it (with
             * "updates" too, on_event sends both) */
            publish(ec, "values", NULL, i);
        }
        out->result = json_of(i);
        sst_value_unref(i);
        out->values = json_of(srv_unroot(sst_graph_result_state(gr)));
        return;
    }
    if (fail.code == SST_ECANCELLED && out->cancel != CANCEL_NONE) {
        out->status = SST_QUEUE_INTERRUPTED;
        out->by_cancel = true;
        return;
    }
    if (fail.code == SST_ECONFLICT || fail.code == SST_EUNAVAILABLE) {
        /* The store refused a commit (the thread moved under the run: its lease was taken
         * over, or commits it made were lost with a crashed database server) or stayed
         * away: not the run's fault. Give it back to the queue, if it is still ours, to
         * resume from the latest checkpoint that is really there (attempts are bounded). */
        out->by_cancel = true;
        out->cancel = CANCEL_STOP;
        srv_log(w->s, "run %s (thread %s): %s; given back to the queue", ec->run->run_id,
                ec->run->thread_id, fail.msg);
        return;
    }
    out->status = fail.code == SST_ETIMEOUT ? SST_QUEUE_TIMEOUT : SST_QUEUE_ERROR;
    char *ej = error_json(&fail);
    if (ej != NULL) {
        size_t n = strlen(ej);
        srv_stream_publish(ec->s, ec->st, "error", sst__strndup(ej, n), n);
        sst__buf b;
        sst__buf_init(&b);
        sst__buf_printf(&b, "{\"__error__\":%s}", ej);
        out->result = sst__buf_detach(&b, NULL);
        sst_free(ej);
    }
    srv_log(w->s, "run %s (thread %s) failed: %s", ec->run->run_id, ec->run->thread_id, fail.msg);
}

/* The outcome of a run that had ended before its worker died (only its status was lost). */
static void judge_done(sst_server *s, const run_copy *c, outcome *out) {
    sst_error err = {0};
    sst_value *st = srv_state_of(s, c->thread_id, NULL, false, &err);
    const sst_value *ints = sst_object_get(st, "interrupts");
    if (sst_array_len(ints) > 0) {
        out->status = SST_QUEUE_INTERRUPTED;
        sst_value *i = interrupts_only(ints, &err);
        out->result = json_of(i);
        sst_value_unref(i);
    } else {
        out->status = SST_QUEUE_SUCCESS;
        out->result = json_of(srv_unroot(sst_object_get(st, "values")));
    }
    out->values = json_of(srv_unroot(sst_object_get(st, "values")));
    sst_value_unref(st);
}

/* What a rollback looks for: the parent of the oldest checkpoint the run made. */
typedef struct start_find {
    const char *run_id;
    bool seen;
    char parent[128];
} start_find;

static bool find_start(const sst_checkpoint *rec, void *ud) {
    start_find *f = ud;
    bool mine = made_by(rec, f->run_id);
    if (mine) {
        f->seen = true;
        snprintf(f->parent, sizeof f->parent, "%s", rec->parent_id != NULL ? rec->parent_id : "");
    }
    return mine || !f->seen; /* newest first: stop below the run's oldest checkpoint */
}

/* Puts the thread back as it was before the run: a copy of the checkpoint it started from
 * as the latest, or no checkpoint at all when it started from none. */
static void roll_back(sst_server *s, sst_graph_thread *th, const run_copy *c) {
    sst_error err = {0};
    start_find f = {.run_id = c->run_id};
    sst_checkpoint_query q = {.thread_id = c->thread_id, .ns = ""};
    if (sst_checkpointer_list(s->cp, &q, find_start, &f, &err) != SST_OK) {
        srv_log(s, "thread %s: rollback failed: %s", c->thread_id, err.msg);
        return;
    }
    if (!f.seen) {
        return; /* the run committed nothing */
    }
    sst_code rc = f.parent[0] != '\0' ? sst_graph_update_state(th, f.parent, NULL, "__copy__", &err)
                                      : srv_thread_reset(s, c->thread_id, &err);
    if (rc != SST_OK) {
        srv_log(s, "thread %s: rollback failed: %s", c->thread_id, err.msg);
    }
}

bool srv_batch_begin(sst_server *s) {
    return s->sdb != NULL  ? sst_sqlite_db_begin(s->sdb, NULL) == SST_OK
           : s->pg != NULL ? sst__pg_batch_begin(s->pg, NULL) == SST_OK
                           : false;
}

sst_code srv_batch_commit(sst_server *s, bool ok, sst_error *err) {
    return s->sdb != NULL ? sst_sqlite_db_commit(s->sdb, ok, err)
                          : sst__pg_batch_commit(s->pg, ok, err);
}

sst_code srv_tx(sst_server *s, sst_code (*fn)(void *arg, sst_error *err), void *arg,
                sst_error *err) {
    if (s->sdb != NULL && sst__sq_is_saver(s->cp)) {
        return sst__sq_group_call(s->cp, fn, arg, err);
    }
    return fn(arg, err);
}

/* Whether the calling thread holds a batch open (a claim not handed over yet). */
static bool batch_open_here(sst_server *s) {
    return s->sdb != NULL  ? sst__sqlite_db_batch_mine(s->sdb)
           : s->pg != NULL ? sst__pg_batch_open(s->pg)
                           : false;
}

/* Forgets the run being run (cancels then go nowhere). */
static void clear_current(srv_worker *w) {
    pthread_mutex_lock(&w->s->mu);
    w->run_id[0] = '\0';
    w->token = 0;
    w->renewable = false;
    pthread_mutex_unlock(&w->s->mu);
}

/* Gives the thread's lock back, when the worker took it with the claim. */
static void unlock_thread(sst_server *s, const run_copy *c, bool *locked) {
    if (*locked) {
        sst_checkpointer_unlock(s->cp, c->thread_id);
        *locked = false;
    }
}

typedef struct finish_job {
    sst_server *s;
    const run_copy *c;
    sst_queue_status status;
    bool locked;
    sst_code finished; /* sst_queue_finish's result */
    sst_error ferr;
} finish_job;

/* The finish's transaction: the thread's lock given back, the run finished. The lock is
 * given back even when the finish fails (a run fenced off): only a failed commit fails. */
static sst_code finish_tx(void *arg, sst_error *err) {
    finish_job *j = arg;
    bool batch = j->locked && srv_batch_begin(j->s);
    unlock_thread(j->s, j->c, &j->locked);
    sst_error_clear(&j->ferr);
    if (j->s->pg != NULL && sst__pg_batch_open(j->s->pg)) {
        sst__pg_batch_commit_along(j->s->pg); /* the finish's statement takes the COMMIT */
    }
    j->finished = sst_queue_finish(j->s->queue, j->c->run_id, j->c->run.token, j->status, srv_now(),
                                   &j->ferr);
    return batch ? srv_batch_commit(j->s, true, err) : SST_OK;
}

/* Finishes the run in the queue (or gives it back when the server stops), then ends its
 * stream with the result and calls its webhook. @p locked: the worker holds the thread's
 * lock (taken with the claim): given back here, in the commit that finishes the run. */
static void finish(srv_worker *w, const run_copy *c, sst_graph_thread *th, emit_ctx *ec,
                   outcome *out, int64_t started, bool locked) {
    sst_server *s = w->s;
    sst_error err = {0};
    pthread_mutex_lock(&s->mu);
    w->renewable = false; /* from here on the keeper leaves the run to its finish */
    pthread_mutex_unlock(&s->mu);
    bool rollback = out->by_cancel && out->cancel == CANCEL_ROLLBACK;
    bool stop = out->by_cancel && (out->cancel == CANCEL_STOP || out->cancel == CANCEL_LOST);
    /* On PostgreSQL an open batch (the run's last checkpoint kept for the finish, or a
     * claim left open for a first checkpoint that never came) commits with the finish
     * below; elsewhere, or when the run stops without a finish, now. */
    bool held = batch_open_here(s);
    if (held && s->pg != NULL && !stop && !rollback) {
        sst__pg_batch_on_commit(s->pg, NULL, NULL); /* the keeper is done with the run */
    } else if (held && srv_batch_commit(s, true, &err) != SST_OK) {
        srv_log(s, "run %s: committing its claim or last checkpoint: %s", c->run_id, err.msg);
        clear_current(w);
        sst__free(out->result);
        sst__free(out->values);
        return;
    } else {
        held = false;
    }
    if (stop || rollback) {
        unlock_thread(s, c, &locked); /* a rollback writes the thread under its own lock */
    }
    if (stop) {
        if (out->cancel == CANCEL_STOP &&
            sst_queue_release(s->queue, c->run_id, c->run.token, srv_now(), &err) != SST_OK) {
            srv_log(s, "run %s: could not give it back to the queue: %s", c->run_id, err.msg);
        }
        clear_current(w);
        sst__free(out->result);
        sst__free(out->values);
        return;
    }
    if (rollback && th != NULL) {
        roll_back(s, th, c);
    }
    /* One commit for both: the lease given back and the run finished (in the group commit
     * of the runs in flight, on a SQLite file). */
    finish_job fj = {.s = s, .c = c, .status = out->status, .locked = locked};
    sst_code rc = srv_tx(s, finish_tx, &fj, &err);
    locked = false;
    if (held) {
        sst_error cerr = {0};
        if (srv_batch_commit(s, rc == SST_OK, &cerr) != SST_OK && rc == SST_OK) {
            /* Neither the last checkpoint nor the finish happened: the run comes back to
             * a worker once its lease runs out, and runs its last superstep again. */
            rc = cerr.code;
            err = cerr;
        }
    }
    if (rc == SST_OK && fj.finished != SST_OK) {
        rc = fj.finished;
        err = fj.ferr;
    }
    if (rc != SST_OK) {
        srv_log(s, "run %s: %s", c->run_id, err.msg);
    }
    if (rc == SST_OK &&
        (rollback ||
         (srv_true(sst_object_get(c->kwargs, "temporary")) &&
          strcmp(sst_string_cstr(sst_object_get(c->kwargs, "on_completion")), "delete") == 0))) {
        if (sst_queue_remove(s->queue, c->run_id, &err) != SST_OK ||
            (!rollback && sst_checkpointer_delete_thread(s->cp, c->thread_id, &err) != SST_OK)) {
            srv_log(s, "run %s: cleaning up: %s", c->run_id, err.msg);
        }
    }
    clear_current(w);
    if (rc == SST_OK) {
        srv_webhook(s, c, sst_queue_status_name(out->status), out->values, started, srv_now());
        srv_stream_end(s, ec->st, out->result);
    } else {
        sst__free(out->result);
    }
    sst__free(out->values);
}

/* Sets the invoke options of the run from its kwargs (@p hold keeps what they borrow). */
static void invoke_opts(srv_worker *w, const run_copy *c, sst_graph_thread *th, emit_ctx *ec,
                        sst_invoke_opts *o, sst_value **hold, const char ***names, sst_error *err) {
    const sst_value *kw = c->kwargs;
    sst_invoke_opts_init(o);
    /* The thread may still be locked by this run's previous holder: one in this process
     * whose queue lease ran out while the database was away, or one elsewhere whose lease
     * in the saver has not expired yet. Wait for it (at most that lease) instead of failing
     * the run: the holder's commits and its queue finish are fenced. */
    o->wait = true;
    const sst_value *cfg = sst_object_get(kw, "config");
    const sst_value *limit = sst_object_get(cfg, "recursion_limit");
    if (sst_is_int(limit) && sst_int_value(limit) > 0) {
        o->recursion_limit = (uint64_t)sst_int_value(limit);
    }
    hold[0] = run_config(c, err);
    o->config = hold[0];
    const sst_value *ctx = sst_object_get(kw, "context");
    o->context = sst_is_object(ctx) && sst_object_len(ctx) > 0 ? ctx : NULL;
    o->store = w->s->store;
    o->tracer = w->s->o.tracer;
    const char *dur = sst_string_cstr(sst_object_get(kw, "durability"));
    o->durability = dur == NULL                 ? w->s->o.durability /* --durability */
                    : strcmp(dur, "async") == 0 ? SST_DURABILITY_ASYNC
                    : strcmp(dur, "sync") == 0  ? SST_DURABILITY_SYNC
                                                : SST_DURABILITY_EXIT;
    o->cancelled = cancelled;
    o->cancel_user_data = w;
    if (srv_true(sst_object_get(kw, "events"))) {
        const sst_value *modes = sst_object_get(kw, "stream_mode");
        o->stream_modes = engine_modes(modes);
        ec->modes = o->stream_modes;
        for (size_t i = 0; i < sst_array_len(modes); i++) {
            ec->user |= srv_mode_bit(sst_string_cstr(sst_array_get(modes, i)));
        }
        if ((ec->user & SRV_MODE_MESSAGES_LEGACY) != 0) {
            ec->msgs = srv_msgs_new(); /* NULL when out of memory: no messages/... events */
        }
        o->stream_ns = on_event;
        o->stream_user_data = ec;
        ec->subgraphs = srv_true(sst_object_get(kw, "subgraphs"));
        /* The legacy messages mode streams the tokens of subgraphs' models too. */
        o->subgraphs = ec->subgraphs || ec->msgs != NULL;
    }
    names[0] = names_of(sst_object_get(kw, "interrupt_before"), &o->n_before);
    names[1] = names_of(sst_object_get(kw, "interrupt_after"), &o->n_after);
    o->interrupt_before = names[0];
    o->interrupt_after = names[1];
    const sst_value *cid = sst_object_get(kw, "checkpoint_id");
    o->checkpoint_id = sst_is_string(cid) ? sst_string_cstr(cid) : NULL;
    const sst_value *cmd = sst_object_get(kw, "command");
    if (sst_is_object(cmd)) {
        const sst_value *resume = sst_object_get(cmd, "resume");
        if (resume != NULL) {
            set_resume(th, resume, o);
        }
        const sst_value *update = sst_object_get(cmd, "update");
        o->update = update != NULL && !sst_is_null(update) ? update : NULL;
        hold[1] = goto_of(sst_object_get(cmd, "goto"), err);
        o->goto_targets = hold[1];
    }
}

/* Commits the claim's transaction when the invoke wrote nothing that did (claim): true
 * when it was open. Should that commit fail, the claim never happened: the run is
 * judged as lost to the database (given back, which finds it pending). */
static bool settle_claim(sst_server *s, const run_copy *c, sst_graph_result **gr, sst_error *err) {
    if (!batch_open_here(s) || (s->pg != NULL && sst__pg_batch_kept(s->pg))) {
        return false; /* nothing open, or the last checkpoint kept for the finish */
    }
    sst_error cerr = {0};
    if (srv_batch_commit(s, true, &cerr) != SST_OK) {
        srv_log(s, "run %s: committing its claim: %s", c->run_id, cerr.msg);
        sst_graph_result_free(*gr);
        *gr = NULL;
        *err = cerr;
        err->code = SST_EUNAVAILABLE;
    }
    return true;
}

/* Runs the claimed run @p c to its end (or to a cancel) and finishes it in the queue. */
static void execute(srv_worker *w, run_copy *c, bool locked, bool open) {
    sst_server *s = w->s;
    int64_t started = srv_now();
    sst_error err = {0};
    srv_graph *g = srv_graph_find(s, sst_string_cstr(sst_object_get(c->kwargs, "graph_id")));
    const sst_compiled_graph *graph = g != NULL ? graph_of(w, g, &err) : NULL;
    if (g == NULL) {
        sst__error(&err, SST_ENOTFOUND, "graph '%s' is not served here",
                   sst_string_cstr(sst_object_get(c->kwargs, "graph_id")));
    }
    emit_ctx ec = {.s = s, .st = srv_stream_get(s, c->run_id), .run = c};
    if (c->run.attempt > SRV_MAX_ATTEMPTS) {
        /* Its workers died (or it could not be read) every time: give it up. */
        outcome out = {.status = SST_QUEUE_ERROR};
        sst_error gone = {0};
        sst__error(&gone, SST_EIO,
                   "run %s was claimed %u times and never finished (its worker "
                   "died each time): given up",
                   c->run_id, c->run.attempt);
        judge(w, &ec, NULL, &gone, &out);
        finish(w, c, NULL, &ec, &out, started, locked);
        srv_stream_unref(s, ec.st);
        return;
    }
    if (c->run.attempt > 1 && ec.st != NULL && srv_true(sst_object_get(c->kwargs, "events"))) {
        srv_publish_metadata(s, ec.st, c->run_id, c->run.attempt);
    }
    sst_graph_thread *th =
        graph != NULL ? sst_graph_thread_open(graph, s->cp, c->thread_id, &err) : NULL;
    outcome out = {0};
    sst_graph_result *gr = NULL;
    /* A run claimed again whose thread another holder still locks (its previous attempt,
     * going on after its lease in the queue ran out while the database was away; in this
     * process, through the same saver, so its commits are not fenced off) waits for it, as
     * its invoke would, but before judging what the run already did: judged first, an
     * attempt that ended meanwhile (in durability exit, its one checkpoint written at its
     * end) would be run again from the input, on top of its own result. */
    sst_error lock_err = {0};
    if (th != NULL && c->run.attempt > 1 && !locked &&
        sst_checkpointer_lock(s->cp, c->thread_id, true, &lock_err) == SST_OK) {
        locked = true;
    }
    int earlier = th != NULL && c->run.attempt > 1 ? earlier_progress(s, c, th) : FRESH;
    if (th != NULL && earlier == ALREADY_DONE) {
        /* Its worker died after the last checkpoint, before giving the thread's lease back:
         * take the dead holder's lease over and give it back, so the thread is not shown
         * busy until that lease would have expired. */
        if (!locked && sst_checkpointer_lock(s->cp, c->thread_id, false, &err) == SST_OK) {
            sst_checkpointer_unlock(s->cp, c->thread_id);
        }
        judge_done(s, c, &out);
        finish(w, c, th, &ec, &out, started, locked);
        sst_graph_thread_free(th);
        srv_stream_unref(s, ec.st);
        return;
    }
    if (th != NULL) {
        sst_invoke_opts o;
        sst_value *hold[2] = {NULL, NULL};
        const char **names[2] = {NULL, NULL};
        invoke_opts(w, c, th, &ec, &o, hold, names, &err);
        o.caller_locked = locked;
        const sst_value *input = sst_object_get(c->kwargs, "input");
        if (earlier != FRESH) {
            input = NULL;
            o.resume = o.resume_by_id = o.update = o.goto_targets = NULL;
            o.checkpoint_id = NULL;
        } else if (input != NULL && sst_is_null(input)) {
            input = NULL;
        }
        /* An entrypoint takes any value as its input: 5 is {SST_ROOT: 5}. */
        sst_value *wrapped = NULL;
        if (input != NULL && !sst_is_object(input) && sst_compiled_graph_is_entrypoint(graph)) {
            wrapped = sst_object_set_take(sst_object_empty(), SST_ROOT, sst_value_ref(input), NULL);
            input = wrapped;
        }
        /* A run started with a traceparent joins the caller's trace. */
        const sst_tracer *tr = o.tracer;
        const sst_value *tp = sst_object_get(c->kwargs, "traceparent");
        if (tr != NULL && tr->parent_from != NULL && sst_is_string(tp)) {
            o.trace_parent = tr->parent_from(tr->user_data, sst_string_cstr(tp));
        }
        /* Durability "sync" (and "exit"): the run's last checkpoint is written on this
         * thread; kept open, it commits with the finish (one flush for both). */
        bool keep = s->pg != NULL && o.durability != SST_DURABILITY_ASYNC;
        if (keep) {
            sst__pg_keep(s->pg, c->thread_id); /* not a graph a node invokes on another */
        }
        gr = sst_graph_invoke(graph, th, input, &o, &err);
        if (keep) {
            sst__pg_keep(s->pg, NULL);
        }
        sst_value_unref(wrapped);
        open = open && !settle_claim(s, c, &gr, &err);
        if (o.trace_parent != NULL && tr->parent_free != NULL) {
            tr->parent_free(tr->user_data, o.trace_parent);
        }
        srv_msgs_free(ec.msgs);
        ec.msgs = NULL;
        sst_value_unref(hold[0]);
        sst_value_unref(hold[1]);
        sst__free(names[0]);
        sst__free(names[1]);
    }
    judge(w, &ec, gr, &err, &out);
    sst_graph_result_free(gr);
    finish(w, c, th, &ec, &out, started, locked);
    sst_graph_thread_free(th);
    srv_stream_unref(s, ec.st);
}

/* Whether the run's first write is its input checkpoint, made on the worker's thread
 * before any of its nodes runs: a new run (attempt 1) with input and none of what starts
 * elsewhere (a command, a checkpoint to start from) in durability "sync". Not "async":
 * its checkpoints are written by the invoke's writer thread, which would wait for the
 * claim's open transaction while the worker waits for it (a SQLite connection's mutex, a
 * PostgreSQL row lock until the idle-transaction timeout); nor "exit", which writes
 * nothing until the end. On SQLite whether or not the connection flushes: an unflushed
 * commit still writes its pages to the WAL (about a tenth of a run's server CPU each,
 * bench/RESULTS.md), and the graph never asks the saver for a flushed commit of its own
 * (put's sync), which a batch could not honour. */
static bool first_write_is_input(sst_server *s, const run_copy *c) {
    const sst_value *kw = c->kwargs, *in = sst_object_get(kw, "input");
    const sst_value *cmd = sst_object_get(kw, "command"),
                    *from = sst_object_get(kw, "checkpoint_id");
    const char *dur = sst_string_cstr(sst_object_get(kw, "durability"));
    bool sync = dur == NULL ? s->o.durability == SST_DURABILITY_SYNC : strcmp(dur, "sync") == 0;
    return c->run.attempt == 1 && in != NULL && !sst_is_null(in) &&
           (cmd == NULL || sst_is_null(cmd)) && (from == NULL || sst_is_null(from)) && sync;
}

/* The claim's transaction (left open, handed over) has committed: the run's lease is
 * in the database now, and the keeper may renew it. */
static void claim_committed(void *ud) {
    srv_worker *w = ud;
    pthread_mutex_lock(&w->s->mu);
    w->renewable = true;
    pthread_mutex_unlock(&w->s->mu);
}

/*
 * Claims the next run and takes its thread's lock in the same transaction (*locked; the
 * run then holds it until finish), on a shared SQLite connection or on PostgreSQL.
 * Without the lock (another process holds it, or memory) the invoke takes it itself, as
 * for any caller. A new run's transaction stays open (*open) and is handed over to its
 * input checkpoint, written first thing by the invoke on this thread: claim, lock and
 * first checkpoint are one commit (one flush). execute commits it if nothing did.
 * On PostgreSQL, unless @p sure, it first asks the queue whether anything is claimable.
 */
static sst_code claim(srv_worker *w, int64_t lease_ms, bool sure, run_copy *c, bool *locked,
                      bool *open, sst_error *err) {
    sst_server *s = w->s;
    int64_t now = srv_now();
    if (s->pg != NULL && !sure) {
        /* Most claims of idle workers find nothing (a wake another worker or process
         * answered first, a poll, the claim after a run): ask first, in one statement
         * outside any transaction, and open the claim's only when it may find a run.
         * Not when a run of this process's is known to wait (@p sure): the claim would
         * find it, and the question would cost as much again. */
        bool claimable = true;
        (void)sst__postgres_queue_probe(s->queue, now, &claimable, NULL);
        atomic_fetch_add(&s->claim_probes, 1);
        if (!claimable) {
            return SST_ENOTFOUND;
        }
    }
    bool batch = srv_batch_begin(s);
    sst_code rc = sst_queue_claim(s->queue, w->owner, now, lease_ms, srv_run_copy_fn, c, err);
    if (!batch) {
        return rc;
    }
    if (rc == SST_OK && c->found && c->run.attempt <= SRV_MAX_ATTEMPTS) {
        *locked = sst_checkpointer_lock(s->cp, c->thread_id, false, NULL) == SST_OK;
    }
    if (rc == SST_OK && c->found && *locked && first_write_is_input(s, c)) {
        if (s->pg != NULL) {
            sst__pg_batch_hand_over(s->pg);
            sst__pg_batch_on_commit(s->pg, claim_committed, w);
        } else {
            /* The connection's mutex stays held until then: the keeper's renewal waits
             * for the commit and sees the claim, so the run is renewable at once. */
            sst__sqlite_db_hand_over(s->sdb);
        }
        *open = true;
        return rc;
    }
    /* Nothing claimed: nothing to commit (a poll costs no flush). */
    if (srv_batch_commit(s, rc == SST_OK && c->found, err) != SST_OK) {
        *locked = false; /* nothing of it happened */
        c->found = false;
        return sst__code(err);
    }
    return rc;
}

/* CLOCK_REALTIME @p ms from now: a deadline for pthread_cond_timedwait on s->mu's conditions. */
static struct timespec realtime_after(int64_t ms) {
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    t.tv_sec += (time_t)(ms / 1000);
    t.tv_nsec += (long)(ms % 1000) * 1000000L;
    if (t.tv_nsec >= 1000000000L) {
        t.tv_sec++;
        t.tv_nsec -= 1000000000L;
    }
    return t;
}

/*
 * Waits (under mu) for a wake given to an idle worker, the stop, or the poll interval:
 * expired leases notify nobody, and a wake is a hint that may have been missed. True
 * when the wake was this process's own enqueue's (a run of its own waits).
 */
static bool wait_idle(sst_server *s) {
    int poll_ms = s->idle_poll_ms > 0 ? s->idle_poll_ms : 500;
    struct timespec until = realtime_after(poll_ms);
    s->idle++;
    while (s->wake_tokens == 0 && !s->stopping) {
        if (pthread_cond_timedwait(&s->wake, &s->mu, &until) != 0) {
            break; /* the poll interval */
        }
    }
    bool local = false;
    if (s->wake_tokens > 0) {
        s->wake_tokens--;
        if (s->wake_local > 0) {
            s->wake_local--;
            local = true;
        }
    }
    s->idle--;
    return local;
}

static void *worker_main(void *arg) {
    srv_worker *w = arg;
    sst_server *s = w->s;
    int64_t lease_ms = (int64_t)s->o.lease_s * 1000;
    bool sure = false; /* a run of this process's waits: claim without asking first */
    for (;;) {
        pthread_mutex_lock(&s->mu);
        bool stop = s->stopping;
        s->claiming += stop ? 0 : 1;
        pthread_mutex_unlock(&s->mu);
        if (stop) {
            break;
        }
        run_copy c = {0};
        sst_error err = {0};
        bool locked = false, open = false;
        sst_code rc = claim(w, lease_ms, sure, &c, &locked, &open, &err);
        sure = false;
        atomic_fetch_add(&s->claims, 1);
        /* From the end of the claim to waiting idle under one hold of mu: a wake in
         * between would find the worker neither idle nor claiming, and be lost. */
        pthread_mutex_lock(&s->mu);
        s->claiming--;
        if (rc == SST_OK && c.found) {
            if (s->missed > s->claiming) {
                s->missed = s->claiming; /* a wake left for claimers, and none is left */
            }
            snprintf(w->run_id, sizeof w->run_id, "%s", c.run_id);
            w->token = c.run.token;
            w->renewable = !open || s->pg == NULL;
            atomic_store(&w->cancel, s->stopping ? CANCEL_STOP : CANCEL_NONE);
            pthread_mutex_unlock(&s->mu);
            execute(w, &c, locked, open);
            srv_run_copy_free(&c);
            pthread_mutex_lock(&s->mu);
            if (s->backlog > 0) {
                s->backlog--; /* an enqueue found every worker busy: its run waits */
                sure = true;
            }
            pthread_mutex_unlock(&s->mu);
            continue;
        }
        atomic_fetch_add(&s->claims_empty, 1);
        if (s->missed > 0) {
            s->missed--; /* a run came while this claim looked, and no idle worker took it */
        } else if (!s->stopping) {
            sure = wait_idle(s);
        }
        pthread_mutex_unlock(&s->mu);
        srv_run_copy_free(&c);
        if (rc != SST_OK && rc != SST_ENOTFOUND) {
            srv_log(s, "worker %u: claiming a run: %s", w->index, err.msg);
        }
    }
    for (size_t i = 0; i < s->n_graphs; i++) {
        srv_graph_put(&s->graphs[i], w->graphs[i].inst);
        w->graphs[i].cg = NULL;
        w->graphs[i].inst = NULL;
    }
    return NULL;
}

/* Renews the lease of the run worker @p w runs, and takes in a cancel asked through the
 * queue (by another process, or one made while this one was away). */
static void renew(srv_worker *w, int64_t lease_ms) {
    sst_server *s = w->s;
    char run_id[64];
    pthread_mutex_lock(&s->mu);
    snprintf(run_id, sizeof run_id, "%s", w->run_id);
    uint64_t token = w->token;
    bool renewable = w->renewable;
    pthread_mutex_unlock(&s->mu);
    if (run_id[0] == '\0' || !renewable) {
        return; /* nothing to renew: no run, a claim not committed yet, or a finish begun */
    }
    char *cancel = NULL;
    sst_error err = {0};
    sst_code rc = sst_queue_renew(s->queue, run_id, token, srv_now(), lease_ms, &cancel, &err);
    atomic_fetch_add(&s->renewals, 1);
    int flag = rc == SST_ECONFLICT               ? CANCEL_LOST
               : cancel == NULL                  ? CANCEL_NONE
               : strcmp(cancel, "rollback") == 0 ? CANCEL_ROLLBACK
                                                 : CANCEL_INTERRUPT;
    sst_free(cancel);
    if (flag == CANCEL_NONE) {
        return;
    }
    pthread_mutex_lock(&s->mu);
    /* A renewal that met the run's own finish (begun meanwhile) lost nothing. */
    bool current = strcmp(w->run_id, run_id) == 0 && w->token == token && w->renewable;
    if (current && atomic_load(&w->cancel) == CANCEL_NONE) {
        atomic_store(&w->cancel, flag);
    }
    pthread_mutex_unlock(&s->mu);
    if (flag == CANCEL_LOST && current) {
        srv_log(s, "run %s: its lease was taken over (%s); stopping it without committing", run_id,
                err.msg);
    }
}

static void *keeper_main(void *arg) {
    sst_server *s = arg;
    int64_t lease_ms = (int64_t)s->o.lease_s * 1000;
    int64_t every = lease_ms / 3 < 1000 ? lease_ms / 3 : 1000;
    for (;;) {
        pthread_mutex_lock(&s->mu);
        if (!s->stopping) {
            struct timespec until = realtime_after(every);
            pthread_cond_timedwait(&s->done, &s->mu, &until);
        }
        bool stop = s->stopping;
        pthread_mutex_unlock(&s->mu);
        for (size_t i = 0; i < s->n_workers; i++) {
            renew(&s->workers[i], lease_ms);
        }
        atomic_fetch_add(&s->keeper_passes, 1);
        if (stop) {
            return NULL;
        }
        srv_streams_sweep(s);
        srv_http_sweep(s);
        srv_threads_ttl_sweep(s, srv_now()); /* at most every SRV_TTL_SWEEP_EVERY_MS */
        srv_relay_purge(s, srv_now());       /* at most once a minute */
    }
}

bool srv_is_worker_thread(sst_server *s) {
    for (size_t i = 0; i < s->n_workers; i++) {
        if (s->workers[i].started && pthread_equal(s->workers[i].th, pthread_self())) {
            return true;
        }
    }
    return false;
}

sst_code srv_workers_start(sst_server *s, sst_error *err) {
    s->workers = sst__calloc(s->o.workers, sizeof *s->workers);
    if (s->workers == NULL) {
        return sst__enomem(err);
    }
    char self[SST__OWNER_MAX];
    sst__owner_self(self, NULL);
    for (unsigned i = 0; i < s->o.workers; i++) {
        srv_worker *w = &s->workers[i];
        w->s = s;
        w->index = i;
        snprintf(w->owner, sizeof w->owner, "%s w%u", self, i);
        w->graphs = sst__calloc(s->n_graphs, sizeof *w->graphs);
        if (w->graphs == NULL) {
            s->n_workers = i + 1;
            srv_workers_stop(s);
            return sst__enomem(err);
        }
        if (pthread_create(&w->th, NULL, worker_main, w) != 0) {
            s->n_workers = i + 1;
            srv_workers_stop(s);
            return sst__error(err, SST_ENOMEM, "serve: cannot start worker thread %u", i);
        }
        w->started = true;
        s->n_workers = i + 1;
    }
    if (pthread_create(&s->keeper, NULL, keeper_main, s) != 0) {
        srv_workers_stop(s);
        return sst__error(err, SST_ENOMEM, "serve: cannot start the lease keeper thread");
    }
    s->keeper_started = true;
    return SST_OK;
}

/* srv_workers_wake (@p local: for this process's own enqueue) and srv_workers_wake_remote. */
static void wake(sst_server *s, bool local) {
    pthread_mutex_lock(&s->mu);
    if (s->idle > s->wake_tokens) {
        s->wake_tokens++; /* one idle worker, not all: the others would claim nothing */
        s->wake_local += local ? 1 : 0;
        pthread_cond_signal(&s->wake);
    } else if (s->missed < s->claiming) {
        s->missed++; /* a claim under way may have looked before the run was there */
    } else if (local) {
        s->backlog++; /* every worker busy: the first to end its run claims without asking */
    }
    pthread_mutex_unlock(&s->mu);
}

void srv_workers_wake(sst_server *s) {
    wake(s, true);
}

void srv_workers_wake_remote(sst_server *s) {
    wake(s, false);
}

bool srv_workers_cancel(sst_server *s, const char *run_id, const char *action) {
    bool found = false;
    pthread_mutex_lock(&s->mu);
    for (size_t i = 0; i < s->n_workers; i++) {
        srv_worker *w = &s->workers[i];
        if (strcmp(w->run_id, run_id) == 0) {
            atomic_store(&w->cancel,
                         strcmp(action, "rollback") == 0 ? CANCEL_ROLLBACK : CANCEL_INTERRUPT);
            found = true;
        }
    }
    pthread_mutex_unlock(&s->mu);
    return found;
}

void srv_workers_stop(sst_server *s) {
    pthread_mutex_lock(&s->mu);
    s->stopping = true;
    for (size_t i = 0; i < s->n_workers; i++) {
        if (s->workers[i].run_id[0] != '\0') {
            atomic_store(&s->workers[i].cancel, CANCEL_STOP);
        }
    }
    pthread_cond_broadcast(&s->wake);
    pthread_cond_broadcast(&s->done);
    pthread_mutex_unlock(&s->mu);
    for (size_t i = 0; i < s->n_workers; i++) {
        if (s->workers[i].started) {
            pthread_join(s->workers[i].th, NULL);
            s->workers[i].started = false;
        }
    }
    if (s->keeper_started) {
        pthread_join(s->keeper, NULL);
        s->keeper_started = false;
    }
    for (size_t i = 0; i < s->n_workers; i++) {
        sst__free(s->workers[i].graphs);
    }
    sst__free(s->workers);
    s->workers = NULL;
    s->n_workers = 0;
}
