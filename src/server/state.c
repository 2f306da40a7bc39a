/* SPDX-License-Identifier: MIT */
/*
 * A thread's state and history (LangGraph's ThreadState), and update_state,
 * read through the graph the thread runs (its metadata's graph_id) with the
 * API threads' copy of that graph.
 */
#include <stdio.h>
#include <string.h>

#include "server_int.h"

/* The state of a thread that has no checkpoint (yet). */
static sst_value *empty_state(const char *thread_id, sst_error *err) {
    SST_UNUSED(thread_id);
    sst_value *cp = sst_null();
    sst_value *o = sst__set_take(sst_object_empty(), "values", sst_object_empty(), err);
    o = sst__set_take(o, "next", sst_array_empty(), err);
    o = sst__set_take(o, "tasks", sst_array_empty(), err);
    o = sst__set_take(o, "metadata", sst_object_empty(), err);
    o = sst__set_take(o, "created_at", sst_null(), err);
    o = sst__set_take(o, "checkpoint", cp, err);
    o = sst__set_take(o, "parent_checkpoint", sst_null(), err);
    return sst__set_take(o, "interrupts", sst_array_empty(), err);
}

/* Opens the thread on @p g's reader (g->mu held by the caller). */
static sst_graph_thread *open_thread(sst_server *s, srv_graph *g, const char *thread_id,
                                     sst_error *err) {
    return sst_graph_thread_open(g->graph, s->cp, thread_id, err);
}

sst_value *srv_state_of(sst_server *s, const char *thread_id, const char *checkpoint_id,
                        bool nested, sst_error *err) {
    if (!srv_thread_exists(s, thread_id, err)) {
        if (err == NULL || err->code == SST_OK) {
            sst__error(err, SST_ENOTFOUND, "Thread with ID %s not found", thread_id);
        }
        return NULL;
    }
    return srv_state_in(s, srv_thread_graph(s, thread_id), thread_id, checkpoint_id, nested, err);
}

sst_value *srv_state_in(sst_server *s, srv_graph *g, const char *thread_id,
                        const char *checkpoint_id, bool nested, sst_error *err) {
    if (g == NULL) {
        if (checkpoint_id != NULL) {
            sst__error(err, SST_ENOTFOUND, "thread %s has no checkpoint %s", thread_id,
                       checkpoint_id);
            return NULL;
        }
        return empty_state(thread_id, err);
    }
    pthread_mutex_lock(&g->mu);
    sst_graph_thread *th = open_thread(s, g, thread_id, err);
    sst_error e = {0};
    sst_value *snap = NULL;
    if (th != NULL) {
        snap = nested ? sst_graph_get_state_nested(th, checkpoint_id, &e)
                      : sst_graph_get_state(th, checkpoint_id, &e);
    }
    sst_graph_thread_free(th);
    pthread_mutex_unlock(&g->mu);
    if (th == NULL) {
        return NULL;
    }
    if (snap == NULL) {
        if (e.code == SST_ENOTFOUND && checkpoint_id == NULL) {
            return empty_state(thread_id, err);
        }
        if (err != NULL) {
            *err = e;
        }
        return NULL;
    }
    sst_value *out = srv_thread_state(thread_id, snap, err);
    sst_value_unref(snap);
    return out;
}

static bool truthy(const char *q) {
    return q != NULL && strcmp(q, "false") != 0 && strcmp(q, "0") != 0;
}

void srv_state_get(srv_request *r, srv_response *res) {
    const char *id = srv_path_thread(r, res);
    if (id == NULL) {
        return;
    }
    sst_error err = {0};
    sst_value *st = srv_state_of(r->s, id, NULL, truthy(srv_query(r, "subgraphs")), &err);
    srv_answer(res, st, &err);
}

void srv_state_checkpoint(srv_request *r, srv_response *res) {
    static const char *const known[] = {"checkpoint", "subgraphs", NULL};
    const char *id = srv_path_thread(r, res);
    const sst_value *cp = NULL;
    bool sub = false;
    if (id == NULL || !srv_body_object(r, res) || !srv_known_fields(r, res, known) ||
        !srv_field_object(r, res, "checkpoint", &cp) ||
        !srv_field_bool(r, res, "subgraphs", &sub)) {
        return;
    }
    const sst_value *cid = sst_object_get(cp, "checkpoint_id");
    sst_error err = {0};
    sst_value *st =
        srv_state_of(r->s, id, sst_is_string(cid) ? sst_string_cstr(cid) : NULL, sub, &err);
    srv_answer(res, st, &err);
}

void srv_state_at(srv_request *r, srv_response *res) {
    const char *id = srv_path_thread(r, res);
    if (id == NULL) {
        return;
    }
    sst_error err = {0};
    sst_value *st = srv_state_of(r->s, id, r->param[1], truthy(srv_query(r, "subgraphs")), &err);
    srv_answer(res, st, &err);
}

/* The checkpoint id a body names: "checkpoint_id", or "checkpoint": {"checkpoint_id"}. */
static bool body_checkpoint(srv_request *r, srv_response *res, const char **out) {
    const sst_value *c = NULL;
    if (!srv_field_string(r, res, "checkpoint_id", out) ||
        !srv_field_object(r, res, "checkpoint", &c)) {
        return false;
    }
    const sst_value *id = sst_object_get(c, "checkpoint_id");
    if (*out == NULL && sst_is_string(id)) {
        *out = sst_string_cstr(id);
    }
    return true;
}

/* The graph of a thread that must have one (its runs' or threads.create's graph_id). */
static srv_graph *needs_graph(srv_request *r, srv_response *res, const char *id) {
    if (!srv_need_thread(r, res, id)) {
        return NULL;
    }
    srv_graph *g = srv_thread_graph(r->s, id);
    if (g == NULL) {
        srv_error(res, 400, "thread %s has no graph yet: run it once, or create it with a graph_id",
                  id);
    }
    return g;
}

void srv_state_post(srv_request *r, srv_response *res) {
    static const char *const known[] = {"values", "as_node", "checkpoint_id", "checkpoint", NULL};
    const char *id = srv_path_thread(r, res);
    const char *as_node = NULL, *checkpoint_id = NULL;
    if (id == NULL || !srv_body_object(r, res) || !srv_known_fields(r, res, known) ||
        !srv_field_string(r, res, "as_node", &as_node) ||
        !body_checkpoint(r, res, &checkpoint_id)) {
        return;
    }
    srv_graph *g = needs_graph(r, res, id);
    if (g == NULL) {
        return;
    }
    const sst_value *values = sst_object_get(r->json, "values");
    sst_error err = {0};
    pthread_mutex_lock(&g->mu);
    sst_graph_thread *th = open_thread(r->s, g, id, &err);
    sst_code rc = th != NULL ? sst_graph_update_state(th, checkpoint_id, values, as_node, &err)
                             : sst__code(&err);
    sst_value *snap = rc == SST_OK ? sst_graph_get_state(th, NULL, &err) : NULL;
    sst_graph_thread_free(th);
    pthread_mutex_unlock(&g->mu);
    if (snap == NULL) {
        srv_fail(res, &err);
        return;
    }
    sst_value *st = srv_thread_state(id, snap, &err);
    sst_value_unref(snap);
    sst_value *cp = sst_value_ref(sst_object_get(st, "checkpoint"));
    if (sst_object_get(cp, "checkpoint_map") != NULL) {
        cp = sst_object_remove_take(cp, "checkpoint_map", &err);
    }
    sst_value *out = st != NULL ? sst__set_take(sst_object_empty(), "checkpoint", cp, &err) : NULL;
    sst_value_unref(st);
    srv_answer(res, out, &err);
}

/* The history page: @p limit states before @p before matching @p filter, newest first. */
static void history(srv_request *r, srv_response *res, const char *id, int64_t limit,
                    const char *before, const sst_value *filter) {
    if (!srv_need_thread(r, res, id)) {
        return;
    }
    sst_error err = {0};
    srv_graph *g = srv_thread_graph(r->s, id);
    if (g == NULL) {
        srv_json(res, 200, sst_array_empty());
        return;
    }
    pthread_mutex_lock(&g->mu);
    sst_graph_thread *th = open_thread(r->s, g, id, &err);
    sst_value *page =
        th != NULL ? sst_graph_history_page(th, filter, before, (size_t)limit, true, &err) : NULL;
    sst_graph_thread_free(th);
    pthread_mutex_unlock(&g->mu);
    if (page == NULL) {
        srv_fail(res, &err);
        return;
    }
    sst_value *out = sst_array_empty();
    for (size_t i = 0; i < sst_array_len(page) && out != NULL; i++) {
        out = sst__push_take(out, srv_thread_state(id, sst_array_get(page, i), &err), &err);
    }
    sst_value_unref(page);
    srv_answer(res, out, &err);
}

void srv_history_get(srv_request *r, srv_response *res) {
    const char *id = srv_path_thread(r, res);
    if (id == NULL) {
        return;
    }
    const char *l = srv_query(r, "limit");
    char *end = NULL;
    long long limit = l != NULL ? strtoll(l, &end, 10) : 10;
    if (l != NULL && (*end != '\0' || limit < 1 || limit > 10000)) {
        srv_error(res, 400, "query parameter 'limit' must be a number from 1 to 10000");
        return;
    }
    history(r, res, id, limit, srv_query(r, "before"), NULL);
}

/*
 * The checkpoint id of history's "before": a string, or a config as LangGraph's SDK
 * sends it ({"configurable": {"checkpoint_id": ...}}, or {"checkpoint_id": ...}).
 */
static bool before_of(srv_request *r, srv_response *res, const char **out) {
    const sst_value *b = sst_object_get(r->json, "before");
    *out = NULL;
    if (b == NULL || sst_is_null(b)) {
        return true;
    }
    if (sst_is_object(b)) {
        const sst_value *c = sst_object_get(b, "configurable");
        b = sst_object_get(sst_is_object(c) ? c : b, "checkpoint_id");
    }
    if (!sst_is_string(b)) {
        srv_error(res, 400,
                  "body member 'before' must be a checkpoint id or a config "
                  "{\"configurable\": {\"checkpoint_id\": ...}}");
        return false;
    }
    *out = sst_string_cstr(b);
    return true;
}

void srv_history_post(srv_request *r, srv_response *res) {
    static const char *const known[] = {"limit", "before", "metadata", "checkpoint", NULL};
    const char *id = srv_path_thread(r, res);
    int64_t limit = 10;
    const char *before = NULL;
    const sst_value *meta = NULL, *cp = NULL;
    if (id == NULL || !srv_body_object(r, res) || !srv_known_fields(r, res, known) ||
        !srv_field_int(r, res, "limit", 1, 10000, &limit) || !before_of(r, res, &before) ||
        !srv_field_object(r, res, "metadata", &meta) ||
        !srv_field_object(r, res, "checkpoint", &cp)) {
        return;
    }
    history(r, res, id, limit, before, meta);
}

sst_code srv_thread_apply_supersteps(sst_server *s, const char *thread_id, const char *graph_id,
                                     const sst_value *supersteps, sst_error *err) {
    srv_graph *g = srv_graph_find(s, graph_id);
    if (g == NULL) {
        return sst__error(err, SST_EINVAL, "supersteps need the thread's graph_id");
    }
    /* LangGraph's [{"updates": [{"values", "as_node"}]}] -> our [[{"values", "as_node"}]] */
    sst_value *steps = sst_array_empty();
    for (size_t i = 0; i < sst_array_len(supersteps) && steps != NULL; i++) {
        const sst_value *u = sst_object_get(sst_array_get(supersteps, i), "updates");
        if (!sst_is_array(u)) {
            sst_value_unref(steps);
            return sst__error(err, SST_EINVAL, "supersteps[%zu] needs a list 'updates'", i);
        }
        steps = sst__push_take(steps, sst_value_ref(u), err);
    }
    if (steps == NULL) {
        return sst__code(err);
    }
    pthread_mutex_lock(&g->mu);
    sst_graph_thread *th = open_thread(s, g, thread_id, err);
    sst_code rc = th != NULL ? sst_graph_bulk_update_state(th, NULL, steps, err) : sst__code(err);
    sst_graph_thread_free(th);
    pthread_mutex_unlock(&g->mu);
    sst_value_unref(steps);
    return rc;
}
