/* SPDX-License-Identifier: MIT */
/*
 * Subgraphs (docs/subgraphs.md): a compiled graph run as a node of another.
 *
 * The node runs the child graph on the parent's thread under a namespace of
 * its own ("node:task_id", nested ones joined with "|"; "node" for a child
 * that keeps its state, SST_SUBGRAPH_KEEP), so the child checkpoints every
 * superstep beside the parent's in the same store. The child reads the
 * parent's state restricted to its own fields and its resulting state is
 * the node's update, restricted to the parent's fields.
 *
 * An interrupt inside the child interrupts the node with the child's
 * interrupts, ids unchanged, so a resume by id at the root finds its way
 * down: the parent re-runs the node, which hands the values to the child by
 * id, and the child goes on from its own checkpoint (the supersteps it
 * committed do not run again). A crash mid-child ends the same way: the
 * child's unfinished run continues. Command{graph = PARENT} ends the child's
 * run and becomes the node's own update and goto.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "graph_subgraph.h"
#include "stream.h"
#include "superstep/id.h"
#include "values/build.h"

/* ---- lookups ---- */

const sst_compiled_graph *sst_compiled_graph_subgraph(const sst_compiled_graph *cg,
                                                      const char *node) {
    size_t i = cg != NULL && node != NULL ? sst__graph_find(cg->g, node) : SIZE_MAX;
    return i != SIZE_MAX ? cg->g->nodes[i].sub : NULL;
}

/* Remembers that node @p node of @p cg ran @p child (the first one it ran is kept). */
static void note_ran(const sst_compiled_graph *cg, const char *node,
                     const sst_compiled_graph *child) {
    size_t i = sst__graph_find(cg->g, node);
    if (i != SIZE_MAX && cg->g->nodes[i].sub == NULL) {
        const sst_compiled_graph *none = NULL;
        atomic_compare_exchange_strong(&cg->ran_sub[i], &none, child);
    }
}

/* The graph namespace @p ns names under @p cg, or NULL with @p err set. */
static const sst_compiled_graph *graph_at(const sst_compiled_graph *cg, const char *ns,
                                          sst_error *err) {
    const char *p = ns;
    while (*p != '\0') {
        size_t len = strcspn(p, "|");
        size_t name_len = strcspn(p, ":|");
        if (name_len == len && len > 0 && strspn(p, "0123456789") == len) {
            p += len; /* a subgraph counter ("node:id|1"): the same graph */
            p += *p == '|';
            continue;
        }
        char name[256];
        if (name_len == 0 || name_len >= sizeof name) {
            sst__error(err, SST_EINVAL, "checkpoint_ns '%s': malformed", ns);
            return NULL;
        }
        memcpy(name, p, name_len);
        name[name_len] = '\0';
        const sst_compiled_graph *sub = sst__subgraph_of(cg, name);
        if (sub == NULL) {
            sst__error(err, SST_EINVAL, "checkpoint_ns '%s': '%s' is not a subgraph node", ns,
                       name);
            return NULL;
        }
        cg = sub;
        p += len;
        p += *p == '|';
    }
    return cg;
}

sst_graph_thread *sst_graph_thread_open_ns(const sst_compiled_graph *cg, sst_checkpointer *cp,
                                           const char *thread_id, const char *ns, sst_error *err) {
    if (cg == NULL || ns == NULL) {
        sst__error(err, SST_EINVAL, "thread open: NULL %s", cg == NULL ? "graph" : "namespace");
        return NULL;
    }
    const sst_compiled_graph *at = graph_at(cg, ns, err);
    return at != NULL ? sst__thread_open(at, cp, thread_id, ns, err) : NULL;
}

/* ---- running ---- */

/* The user's fields of @p cg's schema: NULL when it declares none (every field). */
static bool declares(const sst_compiled_graph *cg, const char *field) {
    size_t n = sst_schema_field_count(cg->schema), declared = 0;
    for (size_t i = 0; i < n; i++) {
        const char *f = sst_schema_field_name(cg->schema, i);
        if (sst__hidden_field(f)) {
            continue;
        }
        declared++;
        if (strcmp(f, field) == 0) {
            return true;
        }
    }
    return declared == 0 && !sst__hidden_field(field);
}

/* True when @p names (an array of strings, or NULL: none) holds @p field. */
static bool listed(const sst_value *names, const char *field) {
    for (size_t i = 0; i < sst_array_len(names); i++) {
        if (strcmp(sst_string_cstr(sst_array_get(names, i)), field) == 0) {
            return true;
        }
    }
    return false;
}

/*
 * The child's input: a Send's argument, else the parent's state; restricted to the
 * child's input fields when declared, else to its declared fields.
 */
static sst_value *child_input(const sst_compiled_graph *child, sst_node_ctx *ctx, sst_error *err) {
    const sst_value *send = sst_node_input(ctx);
    const sst_value *src = send != NULL ? send : sst_node_state(ctx);
    if (!sst_is_object(src)) {
        sst__error(err, SST_ETYPE, "the subgraph's input must be an object, got %s",
                   sst_type_name(sst_value_type(src)));
        return NULL;
    }
    const sst_value *inputs = child->g->input_fields;
    sst_value *in = sst_object_empty();
    for (size_t i = 0; i < sst_object_len(src) && in != NULL; i++) {
        const char *k = sst_string_cstr(sst_object_key_at(src, i));
        bool keep = inputs != NULL ? listed(inputs, k) : declares(child, k);
        if (keep) {
            in = sst__setv_take(in, sst_object_key_at(src, i),
                                sst_value_ref(sst_object_value_at(src, i)), err);
        }
    }
    return in;
}

/* Writes the child's result @p out as the node's update: the parent's fields only. */
static sst_code write_output(sst_node_ctx *ctx, const sst_value *out, sst_error *err) {
    const sst_compiled_graph *cg = sst__node_graph(ctx);
    sst_code rc = SST_OK;
    for (size_t i = 0; i < sst_object_len(out) && rc == SST_OK; i++) {
        const char *k = sst_string_cstr(sst_object_key_at(out, i));
        if (declares(cg, k)) {
            rc = sst_node_update(ctx, k, sst_value_ref(sst_object_value_at(out, i)), err);
        }
    }
    return rc;
}

/*
 * The parent's config with the child's namespace, the thread id and the checkpoint map
 * (each ancestor's namespace -> the checkpoint its task runs from: the child's "parents").
 */
static sst_value *child_config(const sst_value *parent, const char *ns, const sst_graph_thread *pth,
                               const char *parent_ns, sst_error *err) {
    sst_value *cfg = sst_is_object(parent) ? sst_value_ref(parent) : sst_object_empty();
    const sst_value *c = sst_object_get(cfg, "configurable");
    sst_value *conf = sst_is_object(c) ? sst_value_ref(c) : sst_object_empty();
    conf = sst__set_take(conf, "checkpoint_ns", sst_string_new(ns, err), err);
    if (pth != NULL) {
        conf = sst__set_take(conf, "thread_id", sst_string_new(pth->thread_id, err), err);
        /* A root's own config may name a time travel's map: the ancestors start here. */
        const sst_value *m = parent_ns[0] != '\0' ? sst_object_get(conf, "checkpoint_map") : NULL;
        sst_value *map = sst_is_object(m) ? sst_value_ref(m) : sst_object_empty();
        /* Durability "exit" writes the parent's checkpoint only at its end: the map then
         * names a checkpoint that is never stored, as LangGraph's does. */
        char unsaved[37];
        const char *id = pth->last_id;
        if (id == NULL) {
            sst_uuid7(unsaved);
            id = unsaved;
        }
        map = sst__set_take(map, parent_ns, sst_string_new(id, err), err);
        conf = sst__set_take(conf, "checkpoint_map", map, err);
    }
    if (conf != NULL && sst_object_get(conf, "checkpoint_id") != NULL) {
        conf = sst_object_remove_take(conf, "checkpoint_id", err);
    }
    return sst__set_take(cfg, "configurable", conf, err);
}

/* Forwards the child's stream events to the parent's callback with their namespace. */
typedef struct forward {
    const sst_invoke_opts *po; /* the parent's options */
    sst__live *plive;          /* serializes with the parent's other live events */
    const char *ns;            /* the child's namespace */
} forward;

static sst_code forward_event(sst_stream_mode m, const char *ns, const char *node,
                              const sst_value *ev, void *ud) {
    const forward *f = ud;
    const char *full = ns[0] != '\0' ? ns : f->ns; /* a grandchild's is already complete */
    pthread_mutex_lock(&f->plive->mu);
    sst_code rc = f->po->stream_ns != NULL
                      ? f->po->stream_ns(m, full, node, ev, f->po->stream_user_data)
                      : f->po->stream(m, node, ev, f->po->stream_user_data);
    pthread_mutex_unlock(&f->plive->mu);
    return rc;
}

/* The child's interrupts for the parent: dynamic ones only, each with its namespace. */
static sst_value *forwarded(const sst_value *ints, const char *ns, sst_error *err) {
    sst_value *list = sst_array_empty();
    for (size_t i = 0; i < sst_array_len(ints) && list != NULL; i++) {
        const sst_value *x = sst_array_get(ints, i);
        if (sst_object_get(x, "when") != NULL) {
            continue; /* interrupt_before/after: nothing to answer */
        }
        sst_value *e = sst_value_ref(x);
        if (sst_object_get(x, "ns") == NULL) {
            e = sst__set_take(e, "ns", sst_string_new(ns, err), err);
        }
        list = sst__push_take(list, e, err);
    }
    return list;
}

/* What one run of a subgraph node needs. */
typedef struct sub_run {
    sst_node_ctx *ctx;
    const sst_compiled_graph *child;
    const sst_invoke_opts *po; /* the parent's options */
    char *ns;                  /* owned */
    sst_graph_thread *th;      /* owned: the child's durable thread, or NULL */
    sst_value *by_id;          /* owned: resume values by interrupt id, or NULL */
    sst_value *config;         /* owned */
    sst_value *done;           /* owned: the result of the child's earlier, finished run */
    sst__nested nested;        /* time travel: what the child's run loads */
    char at[SST__ID_MAX];      /* time travel: the child's checkpoint it starts from, or "" */
} sub_run;

static void sub_run_free(sub_run *s) {
    sst__free(s->ns);
    sst_graph_thread_free(s->th);
    sst_value_unref(s->by_id);
    sst_value_unref(s->config);
    sst_value_unref(s->done);
}

/* Keeps the id of the newest record older than the one in @p ud[0] in @p ud[1]; stops there. */
static bool older(const sst_checkpoint *rec, void *ud) {
    char **ids = ud;
    if (strcmp(rec->id, ids[0]) < 0) {
        snprintf(ids[1], SST__ID_MAX, "%s", rec->id);
        return false;
    }
    return true;
}

/* @p ns without its task ids ("a:1|b:2" -> "a|b"): the same subgraph across runs (new). */
static char *stable_path(const char *ns) {
    sst__buf b;
    sst__buf_init(&b);
    while (*ns != '\0') {
        size_t part = strcspn(ns, "|"), name = strcspn(ns, ":|");
        sst__buf_printf(&b, "%s%.*s", b.len > 0 ? "|" : "", (int)name, ns);
        ns += part;
        ns += *ns == '|';
    }
    sst__buf_printf(&b, "%s", "");
    return sst__buf_detach(&b, NULL);
}

/*
 * Time travel (the root replays from an older checkpoint): the first run of each subgraph
 * starts from its own newest checkpoint older than that point (LangGraph's ReplayState),
 * or from no state when it had none then. True when that applies (s->at, s->nested set).
 */
static bool replay_point(sub_run *s, void *ud, sst_error *err, sst_code *rc) {
    const char *replay = sst__invoke_replay_from(ud);
    *rc = SST_OK;
    if (replay == NULL) {
        return false;
    }
    char *path = stable_path(s->ns);
    bool first = path != NULL && sst__invoke_first_visit(ud, path);
    sst__free(path);
    if (!first) {
        return false;
    }
    s->nested.replay_from = replay;
    char *ids[2] = {(char *)replay, s->at};
    s->at[0] = '\0';
    sst_checkpoint_query q = {.thread_id = s->th->thread_id, .ns = s->ns};
    *rc = sst_checkpointer_list(s->th->cp, &q, older, ids, err);
    s->nested.start_empty = s->at[0] == '\0';
    return true;
}

/* The entry of @p targets ({ns: id}) for the subgraph at @p ns (task ids aside), or NULL. */
static const sst_value *target_of(const sst_value *targets, const char *ns, const char **key) {
    char *mine = stable_path(ns);
    const sst_value *id = NULL;
    for (size_t i = 0; mine != NULL && id == NULL && i < sst_object_len(targets); i++) {
        const char *k = sst_string_cstr(sst_object_key_at(targets, i));
        char *path = k[0] != '\0' ? stable_path(k) : NULL;
        if (path != NULL && strcmp(path, mine) == 0 &&
            sst_is_string(sst_object_value_at(targets, i))) {
            id = sst_object_value_at(targets, i);
            *key = k;
        }
        sst__free(path);
    }
    sst__free(mine);
    return id;
}

/*
 * Time travel to a subgraph's checkpoint (the root runs from a config that names it): the
 * first run of that subgraph goes on from it, in place when the namespace is the same (an
 * answer keeps the parent's task ids), else from a copy written in its new namespace.
 * True when that applies (*rc, *cont set).
 */
static bool travel(sub_run *s, void *ud, bool *cont, sst_error *err, sst_code *rc) {
    const char *key = NULL;
    const sst_value *id = target_of(s->nested.targets, s->ns, &key);
    char *path = id != NULL ? stable_path(s->ns) : NULL;
    bool first = path != NULL && sst__invoke_first_visit(ud, path);
    sst__free(path);
    if (!first) {
        return false;
    }
    s->nested.replay_from = sst__invoke_replay_from(ud);
    if (strcmp(key, s->ns) == 0) {
        snprintf(s->at, SST__ID_MAX, "%s", sst_string_cstr(id));
        *rc = sst__persist_load(s->th, s->at, err);
    } else {
        /* The copy is written at once: after what the parent handed its writer. */
        sst_graph_thread *pth = sst__invoke_thread(ud);
        *rc = pth != NULL && pth->writer != NULL ? sst__writer_drain(pth->writer, err) : SST_OK;
        sst_graph_thread *from =
            *rc == SST_OK ? sst__thread_open(s->child, s->th->cp, s->th->thread_id, key, err)
                          : NULL;
        *rc = from != NULL ? sst__persist_load(from, sst_string_cstr(id), err) : sst__code(err);
        *rc = *rc == SST_OK ? sst__persist_load(s->th, NULL, err) : *rc;
        *rc = *rc == SST_OK ? sst__persist_copy(s->th, from, err) : *rc;
        sst_graph_thread_free(from);
    }
    s->nested.loaded = true; /* at s->at, or the copy: the latest */
    *cont = *rc == SST_OK && (s->th->resume_point != NULL || s->th->restart);
    return true;
}

/* Opens the child's thread and decides whether its run goes on (*cont) or starts. */
static sst_code open_child(sub_run *s, bool *cont, sst_error *err) {
    void *ud = sst_task_run_user_data(sst__node_task(s->ctx));
    sst_graph_thread *pth = sst__invoke_thread(ud);
    *cont = false;
    if (pth == NULL || s->child->checkpoints == SST_SUBGRAPH_NONE) {
        return SST_OK; /* a run with no thread: nothing kept */
    }
    s->th = sst__thread_open(s->child, pth->cp, pth->thread_id, s->ns, err);
    if (s->th == NULL) {
        return sst__code(err);
    }
    sst_code rc;
    s->nested.targets = sst__invoke_targets(ud);
    if (travel(s, ud, cont, err, &rc) || replay_point(s, ud, err, &rc)) {
        return rc; /* a run from that point */
    }
    if (sst__persist_load(s->th, NULL, err) != SST_OK) {
        return sst__code(err);
    }
    s->nested.loaded = true; /* the latest, where the child's invoke starts */
    /* An interrupted or cut run goes on from its checkpoint: resumed, re-run, or crashed. */
    *cont = s->th->resume_point != NULL || s->th->restart;
    if (!*cont && s->th->last_id != NULL && s->child->checkpoints == SST_SUBGRAPH_PER_TASK) {
        /* This task's child ran to its end before (the node runs again after a resume or
         * a crash): its result stands, as a finished task's writes do. */
        s->done = sst__stream_output(s->child, s->th->state, err);
        return s->done != NULL ? SST_OK : sst__code(err);
    }
    return SST_OK;
}

/*
 * The answers the task was resumed with that are the child's: {interrupt id: value} for
 * the child's pending interrupts (another subgraph call of the node has its own), in
 * s->by_id (NULL: none).
 */
static sst_code own_answers(sub_run *s, sst_task *t, sst_error *err) {
    sst_value *mine = NULL;
    for (size_t k = 0;; k++) {
        const sst_value *e = sst_task_resume_value(t, k);
        if (e == NULL) {
            break;
        }
        const sst_value *id = sst_object_get(e, "id"), *v = sst_object_get(e, "value");
        bool pending = false;
        for (size_t i = 0;
             sst_is_string(id) && v != NULL && i < sst_array_len(s->th->pending) && !pending; i++) {
            pending = sst_value_equal(sst_object_get(sst_array_get(s->th->pending, i), "id"), id);
        }
        if (pending) { /* else not answered this time, or another call's */
            mine =
                sst__setv_take(mine != NULL ? mine : sst_object_empty(), id, sst_value_ref(v), err);
            if (mine == NULL) {
                return sst__code(err);
            }
        }
    }
    s->by_id = mine;
    return SST_OK;
}

/*
 * The message of the task @p node that failed a run, without the run's "vertex 'NODE' failed
 * after N attempt(s): " (src/pregel/run.c) before it; @p e->msg when it has none.
 */
static const char *raised_message(const sst_error *e, const char *node) {
    static const char head[] = "vertex '";
    size_t nl = node != NULL ? strlen(node) : 0;
    const char *p = e->msg;
    if (nl == 0 || strncmp(p, head, sizeof head - 1) != 0 ||
        strncmp(p + sizeof head - 1, node, nl) != 0) {
        return e->msg;
    }
    p += sizeof head - 1 + nl;
    static const char mid[] = "' failed after ";
    if (strncmp(p, mid, sizeof mid - 1) != 0) {
        return e->msg;
    }
    p += sizeof mid - 1;
    const char *digits = p;
    while (*p >= '0' && *p <= '9') {
        p++;
    }
    if (p == digits || strncmp(p, " attempt", 8) != 0) {
        return e->msg;
    }
    p += 8;
    p += *p == 's';
    return strncmp(p, ": ", 2) == 0 ? p + 2 : e->msg;
}

/* The outcome of the child's result @p r for the calling node (sst_node_run_subgraph). */
static sst_code child_outcome(sub_run *s, const sst_graph_result *r, sst_value **out,
                              sst_error *err) {
    sst_node_ctx *ctx = s->ctx;
    switch (sst_graph_result_status(r)) {
        case SST_RUN_COMPLETED:
            *out = sst_value_ref(sst_graph_result_state(r));
            return SST_OK;
        case SST_RUN_INTERRUPTED: {
            if (s->th == NULL && sst_task_resume_value(sst__node_task(ctx), 0) != NULL) {
                /* Resumed, it started afresh and asked again: it would ask forever. */
                return sst__error(err, SST_EINVAL,
                                  "node '%s': its subgraph was resumed but keeps no checkpoints "
                                  "to resume from, so it asked again (compiled with "
                                  "checkpointer = false, or the root graph has no checkpointer)",
                                  sst_node_name(ctx));
            }
            sst_value *list = forwarded(sst_graph_result_interrupts(r), s->ns, err);
            if (list == NULL) {
                return sst__code(err);
            }
            sst_code rc = sst__node_forward_interrupts(ctx, list);
            sst_value_unref(list);
            return rc;
        }
        default:
            break;
    }
    const sst_error *e = sst_graph_result_error(r);
    const sst_value *cmd = sst__result_parent_command(r);
    if (e->code == SST_EPARENT && cmd != NULL) {
        const sst_value *update = sst_object_get(cmd, "update");
        const sst_value *go = sst_object_get(cmd, "goto");
        sst_code rc = SST_OK;
        if (update != NULL && !sst_is_null(update)) {
            rc = sst_node_update_all(ctx, sst_value_ref(update), err);
        }
        if (rc == SST_OK && go != NULL && !sst_is_null(go)) {
            rc = sst__node_goto_value(ctx, go, err);
        }
        return rc != SST_OK ? rc : SST_EPARENT;
    }
    /* The node fails with the error as raised inside (LangGraph propagates the
     * subgraph's exception itself): its handler and the run's error read "boom", not
     * the child run's "vertex 'inner' failed after 1 attempt: boom"; a timeout's
     * details come along. */
    *err = *e;
    const char *raised = raised_message(e, sst_graph_result_error_node(r));
    if (raised != e->msg) {
        memmove(err->msg, raised, strlen(raised) + 1);
    }
    const sst_value *detail = sst_graph_result_error_detail(r);
    if (detail != NULL) {
        sst_task_set_error_detail(sst__node_task(ctx), sst_value_ref(detail));
    }
    return e->code != SST_OK ? e->code : SST_ETASK;
}

/* The child's options: the parent's limits, context, durability, and its stream forwarded. */
static void child_opts(const sub_run *s, forward *f, sst_invoke_opts *o) {
    sst_invoke_opts_init(o);
    if (s->po != NULL) {
        o->recursion_limit = s->po->recursion_limit;
        o->context = s->po->context;
        o->durability = s->po->durability;
        o->snapshot_every = s->po->snapshot_every;
        o->sleep = s->po->sleep;
        o->sleep_user_data = s->po->sleep_user_data;
        o->cancelled = s->po->cancelled;
        o->cancel_user_data = s->po->cancel_user_data;
        o->tracer = s->po->tracer; /* the child's run under this node's task */
        o->trace_parent = sst_node_span(s->ctx);
        if (s->po->subgraphs && sst__has_stream(s->po)) {
            o->stream_modes = s->po->stream_modes;
            o->stream_ns = forward_event;
            o->stream_user_data = f;
            o->subgraphs = true;
        }
    }
    o->config = s->config;
    /* The child's nodes reach the store of the graph running it, unless it has its own. */
    o->store = s->child->store == NULL
                   ? sst__invoke_store(sst_task_run_user_data(sst__node_task(s->ctx)))
                   : NULL;
    o->resume_by_id = s->by_id;
    o->checkpoint_id = s->at[0] != '\0' ? s->at : NULL;
}

/* Prepares @p s: the namespace, the child's thread (*cont: its run goes on), the config. */
static sst_code prepare(sub_run *s, bool *cont, sst_error *err) {
    sst_task *t = sst__node_task(s->ctx);
    void *ud = sst_task_run_user_data(t);
    s->po = sst__invoke_opts(ud);
    /* The k-th subgraph a node runs gets a namespace of its own: "node:task_id|k" (k > 0),
     * as LangGraph's subgraph counter makes it. */
    size_t call = sst__node_subgraph_call(s->ctx);
    if (call == 0) {
        note_ran(sst__node_graph(s->ctx), sst_node_name(s->ctx), s->child);
    }
    char task[64];
    snprintf(task, sizeof task, call == 0 ? "%s" : "%s|%zu", sst_node_task_id(s->ctx), call);
    s->ns = sst__subgraph_ns(s->child, sst__graph_ns(ud), sst_node_name(s->ctx), task);
    if (s->ns == NULL) {
        return sst__enomem(err);
    }
    sst_code rc = open_child(s, cont, err);
    if (rc == SST_OK && *cont && s->th != NULL) {
        rc = own_answers(s, t, err);
    }
    sst_graph_thread *pth = sst__invoke_thread(ud);
    /* Durability "async": the child's checkpoints queue behind its parent's (writer.c). */
    s->nested.writer = pth != NULL ? pth->writer : NULL;
    if (rc == SST_OK) {
        s->config =
            child_config(s->po != NULL ? s->po->config : NULL, s->ns, pth, sst__graph_ns(ud), err);
        rc = s->config != NULL ? SST_OK : sst__code(err);
    }
    return rc;
}

sst_code sst_node_run_subgraph(sst_node_ctx *ctx, const sst_compiled_graph *child,
                               const sst_value *input, sst_value **out, sst_error *err) {
    SST__ERR_LOCAL(err);
    *out = NULL;
    if (child == NULL || (input != NULL && !sst_is_object(input))) {
        return sst__error(err, SST_EINVAL, "node '%s': run subgraph: %s", sst_node_name(ctx),
                          child == NULL ? "NULL graph" : "the input must be an object");
    }
    sub_run s = {.ctx = ctx, .child = child};
    bool cont = false;
    sst_code rc = prepare(&s, &cont, err);
    sst_graph_result *r = NULL;
    if (rc == SST_OK && s.done != NULL) {
        *out = s.done;
        s.done = NULL;
    } else if (rc == SST_OK) {
        forward f = {s.po, sst__invoke_live(sst_task_run_user_data(sst__node_task(ctx))), s.ns};
        sst_invoke_opts o;
        child_opts(&s, &f, &o);
        /* A run that goes on ignores the input, as LangGraph's resuming subgraph does. */
        const sst_value *in = cont ? NULL : input != NULL ? input : sst_object_empty();
        r = sst__graph_invoke_nested(child, s.th, in, &o, &s.nested, err);
        const sst_value *used = r != NULL ? sst_graph_result_usage(r) : NULL;
        if (used != NULL) { /* the child's model usage joins this run's (never fails it) */
            sst_error uerr = {0};
            if (sst__invoke_add_usage(sst_task_run_user_data(sst__node_task(ctx)), used, &uerr) !=
                SST_OK) {
                sst_error_clear(&uerr);
            }
        }
        rc = r != NULL ? child_outcome(&s, r, out, err) : sst__code(err);
    }
    sst_graph_result_free(r);
    sub_run_free(&s);
    return rc;
}

sst_code sst__subgraph_node(sst_node_ctx *ctx, void *user_data) {
    const sst_compiled_graph *child = user_data;
    sst_error err;
    sst_error_clear(&err);
    sst_value *input = child_input(child, ctx, &err);
    sst_value *out = NULL;
    sst_code rc =
        input != NULL ? sst_node_run_subgraph(ctx, child, input, &out, &err) : sst__code(&err);
    sst_value_unref(input);
    if (rc == SST_OK) {
        rc = write_output(ctx, out, &err);
        sst_value_unref(out);
    }
    if (rc == SST_EPARENT) {
        return SST_OK; /* the child's Command{graph = PARENT} is this node's update and goto */
    }
    if (rc != SST_OK && rc != SST_EINTERRUPT) {
        return sst_node_fail(ctx, rc, "%s", err.msg[0] != '\0' ? err.msg : sst_strerror(rc));
    }
    return rc;
}
