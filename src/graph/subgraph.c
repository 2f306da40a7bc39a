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
#include <string.h>

#include "graph_int.h"
#include "stream.h"
#include "values/build.h"

/* ---- building ---- */

sst_code sst_graph_add_subgraph(sst_graph *g, const char *name, const sst_compiled_graph *child,
                                const sst_node_opts *opts, sst_error *err) {
    if (child == NULL) {
        return sst__error(err, SST_EINVAL, "graph: subgraph node '%s': NULL compiled graph",
                          name != NULL ? name : "(null)");
    }
    /* The child is the node's user data: a compiled graph is immutable. */
    sst_code rc = sst_graph_add_node(g, name, sst__subgraph_node, (void *)child, opts, err);
    if (rc == SST_OK) {
        g->nodes[g->n_nodes - 1].sub = child;
    }
    return rc;
}

const sst_compiled_graph *sst_compiled_graph_subgraph(const sst_compiled_graph *cg,
                                                      const char *node) {
    size_t i = cg != NULL && node != NULL ? sst__graph_find(cg->g, node) : SIZE_MAX;
    return i != SIZE_MAX ? cg->g->nodes[i].sub : NULL;
}

/* ---- namespaces ---- */

char *sst__subgraph_ns(const sst_compiled_graph *child, const char *parent_ns, const char *node,
                       const char *task_id) {
    sst__buf b;
    sst__buf_init(&b);
    sst__buf_printf(&b, "%s%s%s", parent_ns, parent_ns[0] != '\0' ? "|" : "", node);
    if (child->checkpoints != SST_SUBGRAPH_KEEP) {
        sst__buf_printf(&b, ":%s", task_id);
    }
    return sst__buf_detach(&b, NULL);
}

/* The graph namespace @p ns names under @p cg, or NULL with @p err set. */
static const sst_compiled_graph *graph_at(const sst_compiled_graph *cg, const char *ns,
                                          sst_error *err) {
    const char *p = ns;
    while (*p != '\0') {
        size_t len = strcspn(p, "|");
        size_t name_len = strcspn(p, ":|");
        char name[256];
        if (name_len == 0 || name_len >= sizeof name) {
            sst__error(err, SST_EINVAL, "checkpoint_ns '%s': malformed", ns);
            return NULL;
        }
        memcpy(name, p, name_len);
        name[name_len] = '\0';
        const sst_compiled_graph *sub = sst_compiled_graph_subgraph(cg, name);
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

/* True for a state field the engine keeps to itself. */
static bool hidden(const char *field) {
    return strncmp(field, "__", 2) == 0 && strcmp(field, SST_ROOT) != 0;
}

/* The user's fields of @p cg's schema: NULL when it declares none (every field). */
static bool declares(const sst_compiled_graph *cg, const char *field) {
    size_t n = sst_schema_field_count(cg->schema), declared = 0;
    for (size_t i = 0; i < n; i++) {
        const char *f = sst_schema_field_name(cg->schema, i);
        if (hidden(f)) {
            continue;
        }
        declared++;
        if (strcmp(f, field) == 0) {
            return true;
        }
    }
    return declared == 0 && !hidden(field);
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

/* The values this task was resumed with, by the child's interrupt ids, or NULL: none. */
static sst_value *resume_by_id(sst_task *t, sst_error *err) {
    sst_value *map = NULL;
    for (size_t k = 0;; k++) {
        const sst_value *e = sst_task_resume_value(t, k);
        if (e == NULL) {
            break;
        }
        const sst_value *id = sst_object_get(e, "id");
        if (!sst_is_string(id) || sst_object_get(e, "value") == NULL) {
            continue; /* not resumed this time */
        }
        map = sst__setv_take(map != NULL ? map : sst_object_empty(), id,
                             sst_value_ref(sst_object_get(e, "value")), err);
        if (map == NULL) {
            return NULL;
        }
    }
    return map;
}

/* The parent's config with the child's namespace and the thread id (new). */
static sst_value *child_config(const sst_value *parent, const char *ns, const char *thread_id,
                               sst_error *err) {
    sst_value *cfg = sst_is_object(parent) ? sst_value_ref(parent) : sst_object_empty();
    const sst_value *c = sst_object_get(cfg, "configurable");
    sst_value *conf = sst_is_object(c) ? sst_value_ref(c) : sst_object_empty();
    conf = sst__set_take(conf, "checkpoint_ns", sst_string_new(ns, err), err);
    if (thread_id != NULL) {
        conf = sst__set_take(conf, "thread_id", sst_string_new(thread_id, err), err);
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
    bool failed;               /* the node failed with the child's error already */
} sub_run;

static void sub_run_free(sub_run *s) {
    sst__free(s->ns);
    sst_graph_thread_free(s->th);
    sst_value_unref(s->by_id);
    sst_value_unref(s->config);
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
    if (s->th == NULL || sst__persist_load(s->th, NULL, err) != SST_OK) {
        return sst__code(err);
    }
    /* An interrupted or cut run goes on from its checkpoint: resumed, re-run, or crashed. */
    *cont = s->th->resume_point != NULL || s->th->restart;
    return SST_OK;
}

/* The node's outcome from the child's result @p r. */
static sst_code child_outcome(sub_run *s, const sst_graph_result *r, sst_error *err) {
    sst_node_ctx *ctx = s->ctx;
    switch (sst_graph_result_status(r)) {
        case SST_RUN_COMPLETED:
            return write_output(ctx, sst_graph_result_state(r), err);
        case SST_RUN_INTERRUPTED: {
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
        return rc;
    }
    s->failed = true;
    return sst_node_fail(ctx, e->code, "%s", e->msg);
}

sst_code sst__subgraph_node(sst_node_ctx *ctx, void *user_data) {
    sub_run s = {.ctx = ctx, .child = user_data};
    sst_task *t = sst__node_task(ctx);
    void *ud = sst_task_run_user_data(t);
    s.po = sst__invoke_opts(ud);
    sst_error err;
    sst_error_clear(&err);
    s.ns = sst__subgraph_ns(s.child, sst_node_checkpoint_ns(ctx), sst_node_name(ctx),
                            sst_node_task_id(ctx));
    if (s.ns == NULL) {
        return sst_node_fail(ctx, SST_ENOMEM, "subgraph '%s': out of memory", sst_node_name(ctx));
    }
    bool cont = false;
    sst_value *input = NULL;
    sst_code rc = open_child(&s, &cont, &err);
    if (rc == SST_OK && !cont && (input = child_input(s.child, ctx, &err)) == NULL) {
        rc = sst__code(&err);
    }
    if (rc == SST_OK && cont && (s.by_id = resume_by_id(t, &err)) == NULL) {
        rc = sst__code(&err);
    }
    sst_graph_thread *pth = sst__invoke_thread(ud);
    s.config = rc == SST_OK ? child_config(s.po != NULL ? s.po->config : NULL, s.ns,
                                           pth != NULL ? pth->thread_id : NULL, &err)
                            : NULL;
    if (rc == SST_OK && s.config == NULL) {
        rc = sst__code(&err);
    }
    sst_graph_result *r = NULL;
    if (rc == SST_OK) {
        sst_invoke_opts o;
        sst_invoke_opts_init(&o);
        forward f = {s.po, sst__invoke_live(ud), s.ns};
        if (s.po != NULL) {
            o.recursion_limit = s.po->recursion_limit;
            o.context = s.po->context;
            o.durability = s.po->durability;
            o.snapshot_every = s.po->snapshot_every;
            o.sleep = s.po->sleep;
            o.sleep_user_data = s.po->sleep_user_data;
            if (s.po->subgraphs && sst__has_stream(s.po)) {
                o.stream_modes = s.po->stream_modes;
                o.stream_ns = forward_event;
                o.stream_user_data = &f;
                o.subgraphs = true;
            }
        }
        o.config = s.config;
        o.resume_by_id = s.by_id;
        r = sst__graph_invoke_nested(s.child, s.th, input, &o, &err);
        rc = r != NULL ? child_outcome(&s, r, &err) : sst__code(&err);
    }
    sst_graph_result_free(r);
    sst_value_unref(input);
    bool failed = s.failed;
    sub_run_free(&s);
    if (rc != SST_OK && rc != SST_EINTERRUPT && !failed) {
        return sst_node_fail(ctx, rc, "subgraph '%s': %s", sst_node_name(ctx),
                             err.msg[0] != '\0' ? err.msg : sst_strerror(rc));
    }
    return rc;
}
