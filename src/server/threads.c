/* SPDX-License-Identifier: MIT */
/*
 * Threads: the checkpointer's threads (their metadata, status and
 * checkpoints) shown as LangGraph's Thread objects, and the thread routes:
 * create, get, patch, delete, search, count, copy. A thread's TTL is kept
 * and swept by thread_ttl.c.
 */
#include <stdio.h>
#include <string.h>

#include "auth.h"
#include "server_int.h"
#include "superstep/id.h"
#include "thread_ttl.h"

typedef struct tinfo {
    bool found;
    int64_t created, updated;
    sst_thread_status status;
    sst_value *metadata;
    sst_code rc;
} tinfo;

static bool got_info(const sst_thread_info *t, void *ud) {
    tinfo *i = ud;
    i->found = true;
    i->created = t->created_at;
    i->updated = t->updated_at;
    i->status = t->status;
    sst_error err = {0};
    i->metadata = t->metadata.data != NULL || t->metadata.value != NULL
                      ? sst_payload_value(&t->metadata, &err)
                      : sst_object_empty();
    i->rc = i->metadata != NULL ? SST_OK : err.code;
    return false;
}

/* The thread's row; SST_ENOTFOUND naming it when there is none. */
static sst_code thread_info(sst_server *s, const char *id, tinfo *out, sst_error *err) {
    *out = (tinfo){0};
    sst_code rc = sst_checkpointer_thread_get(s->cp, id, got_info, out, err);
    if (rc == SST_OK && !out->found) {
        rc = SST_ENOTFOUND;
    }
    if (rc == SST_ENOTFOUND) {
        sst_value_unref(out->metadata);
        out->metadata = NULL;
        return sst__error(err, SST_ENOTFOUND, "Thread with ID %s not found", id);
    }
    if (rc == SST_OK && out->rc != SST_OK) {
        return sst__error(err, out->rc, "thread %s: unreadable metadata", id);
    }
    return rc;
}

bool srv_thread_exists(sst_server *s, const char *thread_id, sst_error *err) {
    tinfo i;
    sst_error e = {0};
    sst_code rc = thread_info(s, thread_id, &i, &e);
    sst_value_unref(i.metadata);
    if (rc != SST_OK && rc != SST_ENOTFOUND && err != NULL) {
        *err = e;
    }
    return rc == SST_OK;
}

/*
 * The graph a thread's @p metadata names: its graph_id when that graph is
 * served; else the served graph whose script is the file its "script" names
 * (`superstep run` stamps both, graph_id being the script's file name, which
 * a server may serve under another name); else, for a thread that names
 * neither (written by something else than this server or the CLI), the one
 * graph when one is served. NULL when none.
 */
static srv_graph *graph_named(sst_server *s, const sst_value *metadata) {
    const sst_value *gid = sst_object_get(metadata, "graph_id");
    const sst_value *script = sst_object_get(metadata, "script");
    srv_graph *g = sst_is_string(gid) ? srv_graph_find(s, sst_string_cstr(gid)) : NULL;
    for (size_t i = 0; g == NULL && sst_is_string(script) && i < s->n_graphs; i++) {
        if (s->graphs[i].real != NULL && strcmp(s->graphs[i].real, sst_string_cstr(script)) == 0) {
            g = &s->graphs[i];
        }
    }
    return g == NULL && gid == NULL && script == NULL && s->n_graphs == 1 ? &s->graphs[0] : g;
}

/*
 * @p metadata (taken) as a Thread shows it: with graph_id the served graph the
 * thread is read with (graph_named), so clients (the web page's thread list)
 * see the graph of a thread the CLI wrote, under the name it is served by.
 */
static sst_value *shown_metadata(sst_server *s, sst_value *metadata, sst_error *err) {
    srv_graph *g = metadata != NULL ? graph_named(s, metadata) : NULL;
    const sst_value *gid = sst_object_get(metadata, "graph_id");
    if (g == NULL || (sst_is_string(gid) && strcmp(sst_string_cstr(gid), g->id) == 0)) {
        return metadata;
    }
    return sst__set_take(metadata, "graph_id", sst_string_new(g->id, err), err);
}

srv_graph *srv_thread_graph(sst_server *s, const char *thread_id) {
    tinfo i;
    sst_error e = {0};
    if (thread_info(s, thread_id, &i, &e) != SST_OK) {
        return NULL;
    }
    srv_graph *g = graph_named(s, i.metadata);
    sst_value_unref(i.metadata);
    return g;
}

sst_code srv_thread_merge_metadata(sst_server *s, const char *thread_id, const sst_value *add,
                                   sst_error *err) {
    tinfo i;
    sst_error e = {0};
    sst_code rc = thread_info(s, thread_id, &i, &e);
    if (rc != SST_OK && rc != SST_ENOTFOUND) {
        *err = e;
        return rc;
    }
    sst_value *m = srv_merged(i.metadata, add, err);
    sst_value_unref(i.metadata);
    if (m == NULL) {
        return sst__code(err);
    }
    rc = sst_checkpointer_thread_put(s->cp, thread_id, m, err);
    sst_value_unref(m);
    return rc;
}

/* {task_id: [interrupts]} of a ThreadState's tasks. */
static sst_value *interrupts_by_task(const sst_value *state, sst_error *err) {
    sst_value *o = sst_object_empty();
    const sst_value *tasks = sst_object_get(state, "tasks");
    for (size_t i = 0; i < sst_array_len(tasks); i++) {
        const sst_value *t = sst_array_get(tasks, i);
        const sst_value *ints = sst_object_get(t, "interrupts");
        if (sst_array_len(ints) > 0) {
            o = sst__setv_take(o, sst_object_get(t, "id"), sst_value_ref(ints), err);
        }
    }
    return o;
}

sst_value *srv_thread_value(sst_server *s, const char *thread_id, bool with_values,
                            sst_error *err) {
    tinfo i;
    if (thread_info(s, thread_id, &i, err) != SST_OK) {
        return NULL;
    }
    sst_value *o =
        sst__set_take(sst_object_empty(), "thread_id", sst_string_new(thread_id, err), err);
    o = sst__set_take(o, "created_at", srv_iso_time(i.created, err), err);
    o = sst__set_take(o, "updated_at", srv_iso_time(i.updated, err), err);
    o = sst__set_take(o, "metadata", shown_metadata(s, i.metadata, err), err);
    o = sst__set_take(o, "status", sst_string_new(sst_thread_status_name(i.status), err), err);
    o = sst__set_take(o, "config", sst_object_empty(), err);
    if (with_values && o != NULL) {
        sst_error e = {0};
        srv_graph *g = graph_named(s, sst_object_get(o, "metadata"));
        sst_value *state = srv_state_in(s, g, thread_id, NULL, false, &e);
        if (state != NULL) {
            o = sst__set_take(o, "values",
                              sst_value_ref(srv_unroot(sst_object_get(state, "values"))), err);
            o = sst__set_take(o, "interrupts", interrupts_by_task(state, err), err);
            sst_value_unref(state);
        } else {
            o = sst__set_take(o, "values", sst_null(), err);
            o = sst__set_take(o, "interrupts", sst_object_empty(), err);
        }
    }
    return o;
}

bool srv_need_thread(srv_request *r, srv_response *res, const char *id) {
    sst_error err = {0};
    if (srv_thread_exists(r->s, id, &err)) {
        return true;
    }
    if (err.code == SST_OK) {
        sst__error(&err, SST_ENOTFOUND, "Thread with ID %s not found", id);
    }
    srv_fail(res, &err);
    return false;
}

/* The thread id of the path, checked; NULL after a 400. */
const char *srv_path_thread(srv_request *r, srv_response *res) {
    /* A thread that `superstep run` wrote on the same database may have any id: one
     * that exists is taken as it is (the API makes only UUIDs). */
    if (!srv_is_uuid(r->param[0]) && srv_thread_exists(r->s, r->param[0], NULL)) {
        return r->param[0];
    }
    return srv_path_uuid(r, res, "thread_id");
}

void srv_threads_create(srv_request *r, srv_response *res) {
    static const char *const known[] = {"thread_id",  "metadata", "if_exists", "ttl",
                                        "supersteps", "graph_id", NULL};
    static const char *const modes[] = {"raise", "do_nothing", NULL};
    const char *id = NULL, *mode = "raise", *graph_id = NULL;
    const sst_value *meta = NULL, *supersteps = NULL;
    if (!srv_body_object(r, res) || !srv_known_fields(r, res, known) ||
        !srv_field_string(r, res, "thread_id", &id) ||
        !srv_field_object(r, res, "metadata", &meta) ||
        !srv_field_enum(r, res, "if_exists", modes, &mode) ||
        !srv_field_array(r, res, "supersteps", &supersteps) ||
        !srv_field_string(r, res, "graph_id", &graph_id)) {
        return;
    }
    bool has_ttl;
    sst_value *ttl;
    if (!srv_thread_ttl_field(r, res, &has_ttl, &ttl)) {
        return;
    }
    char fresh[37];
    bool made_here = id == NULL;
    if (made_here) {
        srv_new_id(fresh); /* a new UUIDv7: no thread has it, nothing to look up */
        id = fresh;
    } else if (!srv_is_uuid(id)) {
        sst_value_unref(ttl);
        srv_error(res, 400, "thread_id must be a UUID, got '%.64s'", id);
        return;
    }
    sst_error err = {0};
    if (!made_here && srv_thread_exists(r->s, id, &err)) {
        /* do_nothing answers the thread as it is: its TTL too stays as it was. */
        if (strcmp(mode, "raise") == 0) {
            sst_value_unref(ttl);
            srv_error(res, 409, "Thread with ID %s already exists", id);
            return;
        }
    } else if (err.code != SST_OK) {
        sst_value_unref(ttl);
        srv_fail(res, &err);
        return;
    } else {
        sst_value *m = sst_value_ref(meta != NULL ? meta : sst_object_empty());
        if (graph_id != NULL) {
            m = sst__set_take(m, "graph_id", sst_string_new(graph_id, &err), &err);
        }
        sst_code rc = m != NULL ? sst_checkpointer_thread_put(r->s->cp, id, m, &err) : SST_ENOMEM;
        sst_value_unref(m);
        if (rc == SST_OK && supersteps != NULL) {
            rc = srv_thread_apply_supersteps(r->s, id, graph_id, supersteps, &err);
        }
        /* After the thread: a TTL written first could be taken by the sweep for one
         * whose thread is gone, and dropped. */
        if (rc == SST_OK && ttl != NULL) {
            rc = srv_thread_ttl_set(r->s, id, ttl, &err);
        }
        if (rc != SST_OK) {
            sst_value_unref(ttl);
            srv_fail(res, &err);
            return;
        }
    }
    sst_value_unref(ttl);
    sst_value *t = srv_thread_value(r->s, id, true, &err);
    srv_answer(res, t, &err);
}

void srv_thread_get(srv_request *r, srv_response *res) {
    const char *id = srv_path_thread(r, res);
    if (id == NULL) {
        return;
    }
    sst_error err = {0};
    sst_value *t = srv_thread_value(r->s, id, true, &err);
    srv_answer(res, t, &err);
}

void srv_thread_patch(srv_request *r, srv_response *res) {
    static const char *const known[] = {"metadata", "ttl", NULL};
    const sst_value *meta = NULL;
    const char *id = srv_path_thread(r, res);
    if (id == NULL || !srv_body_object(r, res) || !srv_known_fields(r, res, known) ||
        !srv_field_object(r, res, "metadata", &meta)) {
        return;
    }
    bool has_ttl;
    sst_value *ttl;
    if (!srv_thread_ttl_field(r, res, &has_ttl, &ttl)) {
        return;
    }
    if (!srv_need_thread(r, res, id)) {
        sst_value_unref(ttl);
        return;
    }
    /*
     * Every patch rewrites the metadata, so it moves updated_at, the time a TTL counts
     * from: a thread patched with a new TTL keeps it from now, as LangGraph's "minutes
     * from now until the thread should be swept". "ttl": null drops the TTL; no "ttl"
     * keeps it.
     */
    sst_error err = {0};
    sst_code rc = srv_thread_merge_metadata(r->s, id, meta, &err);
    if (rc == SST_OK && has_ttl) {
        rc = srv_thread_ttl_set(r->s, id, ttl, &err);
    }
    sst_value_unref(ttl);
    if (rc != SST_OK) {
        srv_fail(res, &err);
        return;
    }
    sst_value *t = srv_thread_value(r->s, id, true, &err);
    srv_answer(res, t, &err);
}

void srv_thread_delete(srv_request *r, srv_response *res) {
    const char *id = srv_path_thread(r, res);
    if (id == NULL) {
        return;
    }
    if (!srv_need_thread(r, res, id)) {
        return;
    }
    sst_error err = {0};
    if (srv_thread_remove(r->s, id, &err) != SST_OK) {
        srv_fail(res, &err);
        return;
    }
    srv_no_content(res);
}

sst_code srv_thread_remove(sst_server *s, const char *thread_id, sst_error *err) {
    srv_thread_cancel_runs(s, thread_id, "interrupt");
    sst_code rc = sst_queue_remove_thread(s->queue, thread_id, err);
    if (rc == SST_OK) {
        rc = sst_checkpointer_delete_thread(s->cp, thread_id, err);
    }
    /* Last: a TTL left by a failure above is dropped by the sweep once the thread is gone. */
    if (rc == SST_OK) {
        rc = srv_thread_ttl_set(s, thread_id, NULL, err);
    }
    return rc;
}

void srv_thread_copy(srv_request *r, srv_response *res) {
    const char *id = srv_path_thread(r, res);
    if (id == NULL) {
        return;
    }
    if (!srv_need_thread(r, res, id)) {
        return;
    }
    sst_error err = {0};
    char to[37];
    srv_new_id(to);
    if (sst_checkpointer_copy_thread(r->s->cp, id, to, &err) != SST_OK) {
        srv_fail(res, &err);
        return;
    }
    sst_value *t = srv_thread_value(r->s, to, true, &err);
    srv_answer(res, t, &err);
}

typedef struct search_ctx {
    sst_value *ids;
    const srv_request *after; /* keeps only what its user's $contains filter keeps, or NULL */
} search_ctx;

static bool collect_id(const sst_thread_info *t, void *ud) {
    search_ctx *c = ud;
    sst_error err = {0};
    if (c->after != NULL) {
        sst_value *meta = sst_payload_value(&t->metadata, NULL);
        bool keep = srv_auth_search_keeps(c->after, meta);
        sst_value_unref(meta);
        if (!keep) {
            return true;
        }
    }
    c->ids = sst__push_take(c->ids, sst_string_new(t->thread_id, &err), &err);
    return c->ids != NULL;
}

/*
 * The ids of the threads a search or count body selects, in its order: the page
 * @p page (a search's limit and offset) of them, or all of them when it is NULL (a
 * count). The saver pages unless a filter it cannot apply ("ids", "values", a $contains
 * filter of the user's auth handler) is given.
 * NULL after filling @p res.
 */
static sst_value *search_ids(srv_request *r, srv_response *res, sst_thread_query *q,
                             const int64_t page[2]) {
    static const char *const known[] = {"metadata", "values",     "status", "limit",  "offset",
                                        "sort_by",  "sort_order", "ids",    "select", NULL};
    static const char *const statuses[] = {"idle", "busy", "interrupted", "error", NULL};
    static const char *const sorts[] = {"thread_id", "status", "created_at", "updated_at", NULL};
    static const char *const orders[] = {"asc", "desc", NULL};
    const char *status = NULL, *sort = "created_at", *order = "desc";
    const sst_value *meta = NULL, *values = NULL, *ids = NULL;
    if (!srv_body_object(r, res) || !srv_known_fields(r, res, known) ||
        !srv_field_object(r, res, "metadata", &meta) ||
        !srv_field_object(r, res, "values", &values) ||
        !srv_field_enum(r, res, "status", statuses, &status) ||
        !srv_field_enum(r, res, "sort_by", sorts, &sort) ||
        !srv_field_enum(r, res, "sort_order", orders, &order) ||
        !srv_field_array(r, res, "ids", &ids)) {
        return NULL;
    }
    *q = (sst_thread_query){.metadata = meta,
                            .order = strcmp(sort, "updated_at") == 0   ? SST_THREADS_BY_UPDATED
                                     : strcmp(sort, "created_at") == 0 ? SST_THREADS_BY_CREATED
                                                                       : SST_THREADS_BY_ID,
                            .descending = strcmp(order, "desc") == 0};
    q->owner = srv_auth_owner(r); /* users and ownership (auth.c) */
    bool after = srv_auth_filters_after(r);
    if (page != NULL && ids == NULL && values == NULL && !after) {
        q->limit = (size_t)page[0];
        q->offset = (size_t)page[1];
    }
    if (status != NULL) {
        q->by_status = true;
        q->status = strcmp(status, "busy") == 0          ? SST_THREAD_BUSY
                    : strcmp(status, "interrupted") == 0 ? SST_THREAD_INTERRUPTED
                    : strcmp(status, "error") == 0       ? SST_THREAD_ERROR
                                                         : SST_THREAD_IDLE;
    }
    search_ctx c = {sst_array_empty(), after ? r : NULL};
    sst_error err = {0};
    if (sst_checkpointer_threads(r->s->cp, q, collect_id, &c, &err) != SST_OK || c.ids == NULL) {
        sst_value_unref(c.ids);
        srv_fail(res, &err);
        return NULL;
    }
    if (ids == NULL && values == NULL && !after) {
        return c.ids;
    }
    size_t skip = page != NULL ? (size_t)page[1] : 0;
    size_t want = page != NULL ? (size_t)page[0] : SIZE_MAX;
    sst_value *kept = sst_array_empty();
    for (size_t i = 0; i < sst_array_len(c.ids) && kept != NULL && sst_array_len(kept) < want;
         i++) {
        const sst_value *id = sst_array_get(c.ids, i);
        bool in = ids == NULL;
        for (size_t k = 0; !in && k < sst_array_len(ids); k++) {
            in = sst_value_equal(sst_array_get(ids, k), id);
        }
        if (in && values != NULL) {
            sst_value *st = srv_state_of(r->s, sst_string_cstr(id), NULL, false, &err);
            const sst_value *v = sst_object_get(st, "values");
            for (size_t k = 0; in && k < sst_object_len(values); k++) {
                const sst_value *have =
                    sst_object_get(v, sst_string_cstr(sst_object_key_at(values, k)));
                in = have != NULL && sst_value_equal(have, sst_object_value_at(values, k));
            }
            sst_value_unref(st);
        }
        if (in && skip > 0) {
            skip--;
        } else if (in) {
            kept = sst__push_take(kept, sst_value_ref(id), &err);
        }
    }
    sst_value_unref(c.ids);
    return kept;
}

/* True when @p select (a string or list of strings; NULL: every field) names @p field. */
static bool selected(const sst_value *select, const char *field) {
    if (select == NULL) {
        return true;
    }
    if (sst_is_string(select)) {
        return strcmp(sst_string_cstr(select), field) == 0;
    }
    for (size_t i = 0; i < sst_array_len(select); i++) {
        if (strcmp(sst_string_cstr(sst_array_get(select, i)), field) == 0) {
            return true;
        }
    }
    return false;
}

/* A thread's fields as the API answers them (LangGraph's ThreadSelectField). */
static const char *const k_thread_fields[] = {"thread_id", "created_at", "updated_at",
                                              "metadata",  "config",     "status",
                                              "values",    "interrupts", NULL};

/* search's "select": the thread's fields to answer with. */
static bool select_field(srv_request *r, srv_response *res, const sst_value **out) {
    const char *const *fields = k_thread_fields;
    if (!srv_field_strings(r, res, "select", out)) {
        return false;
    }
    if (*out == NULL) {
        return true;
    }
    for (size_t i = 0; i < (sst_is_array(*out) ? sst_array_len(*out) : 1); i++) {
        const char *f = sst_string_cstr(sst_is_array(*out) ? sst_array_get(*out, i) : *out);
        size_t k = 0;
        while (fields[k] != NULL && strcmp(fields[k], f) != 0) {
            k++;
        }
        if (fields[k] == NULL) {
            srv_error(res, 422, "select: unknown thread field '%.64s'", f);
            return false;
        }
    }
    return true;
}

/* Drops the fields of @p t that @p select does not name. */
static sst_value *keep_selected(sst_value *t, const sst_value *select, sst_error *err) {
    for (const char *const *f = k_thread_fields; t != NULL && *f != NULL; f++) {
        if (!selected(select, *f) && sst_object_get(t, *f) != NULL) {
            t = sst_object_remove_take(t, *f, err);
        }
    }
    return t;
}

void srv_threads_search(srv_request *r, srv_response *res) {
    sst_thread_query q;
    int64_t limit = 10, offset = 0;
    const sst_value *select = NULL;
    if (!srv_body_object(r, res) || !srv_field_int(r, res, "limit", 1, 10000, &limit) ||
        !srv_field_int(r, res, "offset", 0, INT32_MAX, &offset) || !select_field(r, res, &select)) {
        return;
    }
    bool with_values = selected(select, "values") || selected(select, "interrupts");
    const int64_t page[2] = {limit, offset};
    sst_value *ids = search_ids(r, res, &q, page);
    if (ids == NULL) {
        return;
    }
    sst_error err = {0};
    sst_value *out = sst_array_empty();
    for (size_t i = 0; i < sst_array_len(ids); i++) {
        sst_value *t =
            srv_thread_value(r->s, sst_string_cstr(sst_array_get(ids, i)), with_values, &err);
        t = select != NULL ? keep_selected(t, select, &err) : t;
        if (t != NULL) {
            out = sst__push_take(out, t, &err);
        }
    }
    sst_value_unref(ids);
    srv_json(res, out != NULL ? 200 : 500, out);
}

void srv_threads_count(srv_request *r, srv_response *res) {
    sst_thread_query q;
    if (!srv_body_object(r, res)) {
        return;
    }
    sst_value *ids = search_ids(r, res, &q, NULL);
    if (ids != NULL) {
        sst_error err = {0};
        srv_json(res, 200, sst_int_new((int64_t)sst_array_len(ids), &err));
        sst_value_unref(ids);
    }
}

sst_code srv_thread_reset(sst_server *s, const char *thread_id, sst_error *err) {
    tinfo i;
    sst_code rc = thread_info(s, thread_id, &i, err);
    if (rc != SST_OK) {
        return rc;
    }
    rc = sst_checkpointer_delete_thread(s->cp, thread_id, err);
    if (rc == SST_OK) {
        rc = sst_checkpointer_thread_put(s->cp, thread_id, i.metadata, err);
    }
    sst_value_unref(i.metadata);
    return rc;
}

sst_code srv_thread_for_run(sst_server *s, const char *thread_id, bool create,
                            const sst_value *tags, const sst_value *new_tags, sst_error *err) {
    tinfo i;
    sst_error e = {0};
    sst_code rc = thread_info(s, thread_id, &i, &e);
    if (rc == SST_ENOTFOUND && !create) {
        *err = e;
        return rc;
    }
    if (rc != SST_OK && rc != SST_ENOTFOUND) {
        *err = e;
        return rc;
    }
    sst_value *m = i.metadata != NULL ? i.metadata : sst_object_empty();
    bool same = rc == SST_OK;
    for (size_t k = 0; same && k < sst_object_len(tags); k++) {
        const sst_value *have = sst_object_get(m, sst_string_cstr(sst_object_key_at(tags, k)));
        same = have != NULL && sst_value_equal(have, sst_object_value_at(tags, k));
    }
    if (same) { /* the usual case of a thread's later runs: nothing to write */
        sst_value_unref(m);
        return SST_OK;
    }
    sst_value *tagged = srv_merged(m, tags, err);
    sst_value_unref(m);
    m = tagged;
    if (rc == SST_ENOTFOUND && m != NULL && new_tags != NULL) { /* made here: its owner */
        tagged = srv_merged(m, new_tags, err);
        sst_value_unref(m);
        m = tagged;
    }
    rc = m != NULL ? sst_checkpointer_thread_put(s->cp, thread_id, m, err) : sst__code(err);
    sst_value_unref(m);
    return rc;
}
