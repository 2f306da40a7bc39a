/* SPDX-License-Identifier: MIT */
/*
 * Crons: LangGraph's scheduled runs. A cron is an item of the server's store
 * under the reserved namespace ("superstep_server", "crons"), keyed by its
 * id, whose value is LangGraph's Cron object plus two members of ours:
 * next_run_ms (the next fire, ms since the epoch, or null when it will not
 * fire again) and end_ms (end_time in ms, or null). So crons live in the
 * server's database whatever it is, like the assistants (assistants.c).
 *
 * srv_crons_tick fires the crons that are due: each fire enqueues the run a
 * client would have created by POSTing the cron's payload to /runs (a new
 * thread per fire) or /threads/{id}/runs, with ids derived from the cron id
 * and the fire time, so two processes sharing the database enqueue a fire
 * once (the queue answers the second with SST_ECONFLICT). A ticker thread
 * (srv_crons_start) calls it every second. Schedules are evaluated in UTC
 * (cron_expr.c).
 *
 * Locks: the server's cron_mu serializes the read-modify-write of its cron
 * items (PATCH, DELETE and the tick's fire-and-advance), so a tick never
 * brings back a cron deleted meanwhile nor undoes a PATCH. Across processes
 * the store has no compare-and-set: see docs/server.md ("Crons").
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "auth.h"
#include "cron_expr.h"
#include "crons.h"
#include "superstep/id.h"

static const char *const k_ns[] = {SRV_RESERVED_NS, "crons"};

/* The members of a run request (LangGraph's RunCreate) a cron keeps as its payload. */
static const char *const k_payload_fields[] = {"assistant_id",
                                               "input",
                                               "config",
                                               "context",
                                               "metadata",
                                               "webhook",
                                               "interrupt_before",
                                               "interrupt_after",
                                               "durability",
                                               "stream_mode",
                                               "stream_subgraphs",
                                               "stream_resumable",
                                               "multitask_strategy",
                                               "checkpoint_during",
                                               NULL};

/* Our members of the stored value, not shown in the Cron object. */
#define M_NEXT "next_run_ms"
#define M_END  "end_ms"
/* What a thread a fire makes gets in its metadata: the owner of the cron's creator
 * (srv_auth_stamp at its creation; auth.c). */
#define M_STAMP "thread_stamp"

/* ---- reading a request ----------------------------------------------------- */

/* Checks the run-request members of the body as POST /runs would (400 naming one; runs.c
 * reads them): the run is created later, so a bad payload must be refused now. */
static sst_value *payload_of(const sst_value *body, sst_error *err);
static bool check_payload(srv_request *r, srv_response *res) {
    sst_error err = {0};
    sst_value *p = payload_of(r->json, &err);
    bool ok = p != NULL ? srv_run_body_ok(r->s, p, false, res) : (srv_fail(res, &err), false);
    sst_value_unref(p);
    return ok;
}

/* What the cron-only members of a body say (schedule, end_time, timezone, ...). */
typedef struct cron_req {
    const char *schedule; /* NULL: not given */
    srv_cron parsed;
    bool has_end;   /* end_time given (a string or null) */
    int64_t end_ms; /* -1: none (null) */
    bool has_enabled;
    bool enabled;
    const char *on_run_completed; /* NULL: not given */
    const char *timezone;         /* NULL: not given; else one that means UTC */
} cron_req;

/* Reads and checks the cron members; 422 for a bad schedule, end_time or timezone. */
static bool read_cron(srv_request *r, srv_response *res, cron_req *q) {
    static const char *const completions[] = {"delete", "keep", NULL};
    const char *end = NULL;
    *q = (cron_req){.end_ms = -1};
    const sst_value *en = sst_object_get(r->json, "enabled");
    if (!srv_field_string(r, res, "schedule", &q->schedule) ||
        !srv_field_string(r, res, "end_time", &end) ||
        !srv_field_string(r, res, "timezone", &q->timezone) ||
        !srv_field_bool(r, res, "enabled", &q->enabled) ||
        !srv_field_enum(r, res, "on_run_completed", completions, &q->on_run_completed)) {
        return false;
    }
    q->has_enabled = en != NULL && !sst_is_null(en);
    sst_error err = {0};
    if (q->schedule != NULL && srv_cron_parse(q->schedule, &q->parsed, &err) != SST_OK) {
        srv_error(res, 422, "body member 'schedule': %s", err.msg);
        return false;
    }
    q->has_end = sst_object_get(r->json, "end_time") != NULL;
    if (end != NULL && !srv_time_parse_iso(end, &q->end_ms)) {
        srv_error(res, 422,
                  "body member 'end_time' must be an ISO 8601 date-time "
                  "(\"2030-01-31T12:00:00Z\"), got '%.100s'",
                  end);
        return false;
    }
    const char *tz = q->timezone;
    if (tz != NULL && strcmp(tz, "UTC") != 0 && strcmp(tz, "Etc/UTC") != 0 &&
        strcmp(tz, "GMT") != 0 && strcmp(tz, "Etc/GMT") != 0) {
        srv_error(res, 422,
                  "body member 'timezone': '%.100s' is not supported; schedules are evaluated "
                  "in UTC (give \"UTC\" or leave it out)",
                  tz);
        return false;
    }
    return true;
}

/* ---- values ------------------------------------------------------------------ */

static sst_value *ms_or_null(int64_t ms, sst_error *err) {
    return ms >= 0 ? sst_int_new(ms, err) : sst_null();
}

static sst_value *iso_or_null(int64_t ms, sst_error *err) {
    return ms >= 0 ? srv_iso_time(ms, err) : sst_null();
}

/* A stored member as ms: -1 when absent or null. */
static int64_t ms_of(const sst_value *cron, const char *key) {
    const sst_value *v = sst_object_get(cron, key);
    return sst_is_int(v) ? sst_int_value(v) : -1;
}

/* The next fire after @p after_ms, or -1 when there is none before @p end_ms (-1: no end). */
static int64_t next_fire(const srv_cron *c, int64_t after_ms, int64_t end_ms) {
    int64_t next = srv_cron_next(c, after_ms);
    return next >= 0 && end_ms >= 0 && next > end_ms ? -1 : next;
}

/* @p cron (taken) with next_run_ms and next_run_date set to @p next_ms (-1: null). */
static sst_value *with_next(sst_value *cron, int64_t next_ms, sst_error *err) {
    cron = sst__set_take(cron, "next_run_date", iso_or_null(next_ms, err), err);
    return sst__set_take(cron, M_NEXT, ms_or_null(next_ms, err), err);
}

/* The Cron object of a stored value (our members dropped), with only @p select's fields
 * when it is not NULL. */
static sst_value *public_of(const sst_value *cron, const sst_value *select, sst_error *err) {
    sst_value *o = sst_object_empty();
    for (size_t i = 0; i < sst_object_len(cron) && o != NULL; i++) {
        const char *k = sst_string_cstr(sst_object_key_at(cron, i));
        if (strcmp(k, M_NEXT) == 0 || strcmp(k, M_END) == 0 || strcmp(k, M_STAMP) == 0) {
            continue;
        }
        bool want = select == NULL;
        for (size_t j = 0; !want && j < sst_array_len(select); j++) {
            want = strcmp(sst_string_cstr(sst_array_get(select, j)), k) == 0;
        }
        if (want) {
            o = sst__setv_take(o, sst_object_key_at(cron, i),
                               sst_value_ref(sst_object_value_at(cron, i)), err);
        }
    }
    return o;
}

/* The payload: the body's run-request members that are given (not null). */
static sst_value *payload_of(const sst_value *body, sst_error *err) {
    sst_value *p = sst_object_empty();
    for (size_t i = 0; k_payload_fields[i] != NULL && p != NULL; i++) {
        const sst_value *v = sst_object_get(body, k_payload_fields[i]);
        if (v != NULL && !sst_is_null(v)) {
            p = sst__set_take(p, k_payload_fields[i], sst_value_ref(v), err);
        }
    }
    return p;
}

/* ---- the store --------------------------------------------------------------- */

/* The stored cron @p id, or NULL (SST_ENOTFOUND when there is none). */
static sst_value *load(sst_server *s, const char *id, sst_error *err) {
    bool missing = false;
    sst_value *v = srv_hidden_get(s, k_ns[1], id, &missing, err);
    if (missing) {
        sst__error(err, SST_ENOTFOUND, "Cron with ID %s not found", id);
    }
    return v;
}

static sst_code save(sst_server *s, const sst_value *cron, sst_error *err) {
    const char *id = sst_string_cstr(sst_object_get(cron, "cron_id"));
    return sst_store_put(s->store, k_ns, 2, id, cron, NULL, err);
}

/* Every stored cron (values), or NULL after an answer. */
static sst_value *all_crons(sst_server *s, const sst_value *filter, size_t limit, sst_error *err) {
    sst_store_search_opts q;
    sst_store_search_opts_init(&q);
    q.prefix = k_ns;
    q.prefix_len = 2;
    q.filter = filter;
    q.limit = limit;
    sst_value *items = sst_store_search(s->store, &q, err);
    if (items == NULL) {
        return NULL;
    }
    sst_value *out = sst_array_empty();
    for (size_t i = 0; i < sst_array_len(items) && out != NULL; i++) {
        const sst_value *v = sst_object_get(sst_array_get(items, i), "value");
        if (sst_is_object(v)) {
            out = sst__push_take(out, sst_value_ref(v), err);
        }
    }
    sst_value_unref(items);
    return out;
}

/* The cron id of the path (r->param[0]), checked; NULL after a 400. */
static const char *path_cron(srv_request *r, srv_response *res) {
    return srv_path_uuid(r, res, "cron_id");
}

/* ---- create ------------------------------------------------------------------ */

/* assistant_id, then what a PATCH may change too (k_create_fields + 1). */
static const char *const k_create_fields[] = {"assistant_id",
                                              "schedule",
                                              "end_time",
                                              "timezone",
                                              "enabled",
                                              "on_run_completed",
                                              "input",
                                              "config",
                                              "context",
                                              "metadata",
                                              "webhook",
                                              "durability",
                                              "interrupt_before",
                                              "interrupt_after",
                                              "stream_mode",
                                              "stream_subgraphs",
                                              "stream_resumable",
                                              "multitask_strategy",
                                              "checkpoint_during",
                                              NULL};

/* Creates a cron: on thread @p thread_id, or stateless when it is NULL. */
static void create(srv_request *r, srv_response *res, const char *thread_id) {
    cron_req q;
    if (!srv_body_object(r, res) || !srv_known_fields(r, res, k_create_fields) ||
        !check_payload(r, res) || !read_cron(r, res, &q)) {
        return;
    }
    if (q.schedule == NULL) {
        srv_error(res, 422, "body member 'schedule' is required (a cron expression)");
        return;
    }
    const char *aid = sst_string_cstr(sst_object_get(r->json, "assistant_id"));
    if (aid == NULL) {
        srv_error(res, 400, "body member 'assistant_id' is required");
        return;
    }
    sst_error err = {0};
    sst_value *assistant = srv_assistant_lookup(r->s, aid, &err);
    if (assistant == NULL) {
        srv_fail(res, &err);
        return;
    }
    if (thread_id != NULL && !srv_need_thread(r, res, thread_id)) {
        sst_value_unref(assistant);
        return;
    }
    char id[37];
    if (sst_uuid4(id, &err) != SST_OK) {
        sst_value_unref(assistant);
        srv_fail(res, &err);
        return;
    }
    int64_t now = srv_now();
    bool stateless = thread_id == NULL;
    const char *completed =
        stateless ? (q.on_run_completed != NULL ? q.on_run_completed : "delete") : NULL;
    sst_value *created = srv_iso_time(now, &err);
    sst_value *c = sst__set_take(sst_object_empty(), "cron_id", sst_string_new(id, &err), &err);
    c = sst__set_take(c, "assistant_id", sst_value_ref(sst_object_get(assistant, "assistant_id")),
                      &err);
    c = sst__set_take(c, "thread_id",
                      thread_id != NULL ? sst_string_new(thread_id, &err) : sst_null(), &err);
    c = sst__set_take(c, "on_run_completed",
                      completed != NULL ? sst_string_new(completed, &err) : sst_null(), &err);
    c = sst__set_take(c, "end_time", iso_or_null(q.end_ms, &err), &err);
    c = sst__set_take(c, "schedule", sst_string_new(q.schedule, &err), &err);
    c = sst__set_take(c, "timezone",
                      q.timezone != NULL ? sst_string_new(q.timezone, &err) : sst_null(), &err);
    c = sst__set_take(c, "created_at", sst_value_ref(created), &err);
    c = sst__set_take(c, "updated_at", created, &err);
    c = sst__set_take(c, "payload", payload_of(r->json, &err), &err);
    c = sst__set_take(c, "user_id", sst_null(), &err);
    c = sst__set_take(c, "next_run_date", sst_null(), &err);
    const sst_value *meta = sst_object_get(r->json, "metadata");
    c = sst__set_take(c, "metadata", sst_value_ref(sst_is_object(meta) ? meta : sst_object_empty()),
                      &err);
    c = sst__set_take(c, "enabled", sst_bool(q.has_enabled ? q.enabled : true), &err);
    c = sst__set_take(c, M_END, ms_or_null(q.end_ms, &err), &err);
    c = sst__set_take(c, M_STAMP, srv_auth_stamp(r, sst_object_empty()), &err);
    c = with_next(c, next_fire(&q.parsed, now, q.end_ms), &err);
    sst_value_unref(assistant);
    if (c == NULL || save(r->s, c, &err) != SST_OK) {
        sst_value_unref(c);
        srv_fail(res, &err);
        return;
    }
    srv_json(res, 200, public_of(c, NULL, &err));
    sst_value_unref(c);
}

void srv_crons_create_for_thread(srv_request *r, srv_response *res) {
    const char *id = srv_path_thread(r, res);
    if (id != NULL) {
        create(r, res, id);
    }
}

void srv_crons_create(srv_request *r, srv_response *res) {
    create(r, res, NULL);
}

/* ---- search and count -------------------------------------------------------- */

/* Every member of @p want equals @p have's (both objects). */
static bool contains(const sst_value *have, const sst_value *want) {
    for (size_t i = 0; want != NULL && i < sst_object_len(want); i++) {
        const sst_value *h = sst_object_get(have, sst_string_cstr(sst_object_key_at(want, i)));
        if (h == NULL || !sst_value_equal(h, sst_object_value_at(want, i))) {
            return false;
        }
    }
    return true;
}

static bool str_is(const sst_value *v, const char *s) {
    return sst_is_string(v) && strcmp(sst_string_cstr(v), s) == 0;
}

/* The crons matching the body's assistant_id (or graph id), thread_id, enabled and
 * metadata; NULL after an answer. */
static sst_value *matching(srv_request *r, srv_response *res, const char *const *known) {
    const char *aid = NULL, *tid = NULL;
    const sst_value *meta = NULL;
    bool enabled = false;
    if (!srv_body_object(r, res) || !srv_known_fields(r, res, known) ||
        !srv_field_string(r, res, "assistant_id", &aid) ||
        !srv_field_string(r, res, "thread_id", &tid) ||
        !srv_field_bool(r, res, "enabled", &enabled) ||
        !srv_field_object(r, res, "metadata", &meta)) {
        return NULL;
    }
    const sst_value *en = sst_object_get(r->json, "enabled");
    bool by_enabled = en != NULL && !sst_is_null(en);
    srv_graph *g = aid != NULL ? srv_graph_find(r->s, aid) : NULL;
    if (g != NULL) {
        aid = g->assistant_id; /* a graph id stands for its default assistant */
    }
    sst_error err = {0};
    sst_value *all = all_crons(r->s, NULL, 1000000, &err);
    if (all == NULL) {
        srv_fail(res, &err);
        return NULL;
    }
    sst_value *out = sst_array_empty();
    for (size_t i = 0; i < sst_array_len(all) && out != NULL; i++) {
        const sst_value *c = sst_array_get(all, i);
        const sst_value *e = sst_object_get(c, "enabled");
        if ((aid == NULL || str_is(sst_object_get(c, "assistant_id"), aid)) &&
            (tid == NULL || str_is(sst_object_get(c, "thread_id"), tid)) &&
            (!by_enabled || (sst_is_bool(e) && sst_bool_value(e) == enabled)) &&
            contains(sst_object_get(c, "metadata"), meta) &&
            srv_auth_search_keeps(r, sst_object_get(c, "metadata"))) {
            out = sst__push_take(out, sst_value_ref(c), &err);
        }
    }
    sst_value_unref(all);
    if (out == NULL) {
        srv_fail(res, &err);
    }
    return out;
}

/* One cron with its sort key (qsort has no context: the direction rides along). */
typedef struct sorted {
    const sst_value *cron;
    const char *text; /* a string key, or NULL (null sorts last in asc, first in desc) */
    int64_t num;      /* next_run_ms (-1: null) */
    bool numeric;
    int dir; /* 1 asc, -1 desc */
} sorted;

static int cmp_sorted(const void *pa, const void *pb) {
    const sorted *a = pa, *b = pb;
    int c;
    if (a->numeric) {
        bool an = a->num < 0, bn = b->num < 0;
        c = an != bn ? (an ? 1 : -1) : (a->num > b->num) - (a->num < b->num);
    } else {
        bool an = a->text == NULL, bn = b->text == NULL;
        c = an != bn ? (an ? 1 : -1) : an ? 0 : strcmp(a->text, b->text);
    }
    if (c != 0) {
        return c * a->dir;
    }
    return strcmp(sst_string_cstr(sst_object_get(a->cron, "cron_id")),
                  sst_string_cstr(sst_object_get(b->cron, "cron_id")));
}

void srv_crons_search(srv_request *r, srv_response *res) {
    static const char *const known[] = {"assistant_id", "thread_id", "enabled",    "limit",
                                        "offset",       "sort_by",   "sort_order", "select",
                                        "metadata",     NULL};
    static const char *const sort_by[] = {"cron_id",    "assistant_id",  "thread_id", "created_at",
                                          "updated_at", "next_run_date", NULL};
    static const char *const orders[] = {"asc", "desc", NULL};
    static const char *const selectable[] = {
        "cron_id",  "assistant_id",  "thread_id",        "end_time",
        "schedule", "created_at",    "updated_at",       "user_id",
        "payload",  "next_run_date", "metadata",         "now",
        "timezone", "enabled",       "on_run_completed", NULL};
    int64_t limit = 10, offset = 0;
    const char *by = "created_at", *order = "desc";
    const sst_value *select = NULL;
    if (!srv_body_object(r, res) || !srv_field_int(r, res, "limit", 1, 10000, &limit) ||
        !srv_field_int(r, res, "offset", 0, INT32_MAX, &offset) ||
        !srv_field_enum(r, res, "sort_by", sort_by, &by) ||
        !srv_field_enum(r, res, "sort_order", orders, &order) ||
        !srv_field_strings(r, res, "select", &select)) {
        return;
    }
    for (size_t i = 0; select != NULL && sst_is_array(select) && i < sst_array_len(select); i++) {
        const char *f = sst_string_cstr(sst_array_get(select, i));
        size_t j = 0;
        while (selectable[j] != NULL && strcmp(selectable[j], f) != 0) {
            j++;
        }
        if (selectable[j] == NULL) {
            srv_error(res, 400, "body member 'select': unknown field '%.100s'", f);
            return;
        }
    }
    if (select != NULL && !sst_is_array(select)) {
        srv_error(res, 400, "body member 'select' must be a list of field names");
        return;
    }
    sst_value *all = matching(r, res, known);
    if (all == NULL) {
        return;
    }
    size_t n = sst_array_len(all);
    sorted *v = sst__calloc(n > 0 ? n : 1, sizeof *v);
    if (v == NULL) {
        sst_value_unref(all);
        srv_error(res, 500, "out of memory");
        return;
    }
    bool numeric = strcmp(by, "next_run_date") == 0;
    for (size_t i = 0; i < n; i++) {
        const sst_value *c = sst_array_get(all, i);
        v[i] = (sorted){.cron = c,
                        .text = numeric ? NULL : sst_string_cstr(sst_object_get(c, by)),
                        .num = ms_of(c, M_NEXT),
                        .numeric = numeric,
                        .dir = strcmp(order, "asc") == 0 ? 1 : -1};
    }
    qsort(v, n, sizeof *v, cmp_sorted);
    sst_error err = {0};
    sst_value *page = sst_array_empty();
    for (size_t i = (size_t)offset; i < n && i < (size_t)(offset + limit) && page != NULL; i++) {
        page = sst__push_take(page, public_of(v[i].cron, select, &err), &err);
    }
    sst__free(v);
    sst_value_unref(all);
    srv_answer(res, page, &err);
}

void srv_crons_count(srv_request *r, srv_response *res) {
    static const char *const known[] = {"assistant_id", "thread_id", "metadata", "enabled", NULL};
    sst_value *all = matching(r, res, known);
    if (all != NULL) {
        sst_error err = {0};
        srv_json(res, 200, sst_int_new((int64_t)sst_array_len(all), &err));
        sst_value_unref(all);
    }
}

/* ---- update and delete --------------------------------------------------------- */

void srv_cron_patch(srv_request *r, srv_response *res) {
    const char *const *known = k_create_fields + 1; /* all but assistant_id */
    cron_req q;
    const char *id = path_cron(r, res);
    if (id == NULL || !srv_body_object(r, res) || !srv_known_fields(r, res, known) ||
        !check_payload(r, res) || !read_cron(r, res, &q)) {
        return;
    }
    sst_error err = {0};
    pthread_mutex_lock(&r->s->cron_mu);
    sst_value *c = load(r->s, id, &err);
    if (c == NULL) {
        pthread_mutex_unlock(&r->s->cron_mu);
        srv_fail(res, &err);
        return;
    }
    int64_t now = srv_now();
    /* The payload: the given run members replace the old ones; metadata is merged, and it
     * is the cron's metadata too. */
    sst_value *payload = sst_value_ref(sst_object_get(c, "payload"));
    sst_value *given = payload_of(r->json, &err);
    const sst_value *meta = sst_object_get(r->json, "metadata");
    for (size_t i = 0; given != NULL && i < sst_object_len(given) && payload != NULL; i++) {
        const char *k = sst_string_cstr(sst_object_key_at(given, i));
        if (strcmp(k, "metadata") != 0) {
            payload = sst__setv_take(payload, sst_object_key_at(given, i),
                                     sst_value_ref(sst_object_value_at(given, i)), &err);
        }
    }
    sst_value_unref(given);
    if (sst_is_object(meta)) {
        sst_value *merged = srv_merged(sst_object_get(c, "metadata"), meta, &err);
        payload = sst__set_take(payload, "metadata", sst_value_ref(merged), &err);
        c = sst__set_take(c, "metadata", merged, &err);
    }
    c = sst__set_take(c, "payload", payload, &err);
    bool reschedule = q.schedule != NULL || q.has_end || q.has_enabled;
    if (q.schedule != NULL) {
        c = sst__set_take(c, "schedule", sst_string_new(q.schedule, &err), &err);
    }
    if (q.has_end) {
        c = sst__set_take(c, "end_time", iso_or_null(q.end_ms, &err), &err);
        c = sst__set_take(c, M_END, ms_or_null(q.end_ms, &err), &err);
    }
    if (q.has_enabled) {
        c = sst__set_take(c, "enabled", sst_bool(q.enabled), &err);
    }
    if (q.timezone != NULL) {
        c = sst__set_take(c, "timezone", sst_string_new(q.timezone, &err), &err);
    }
    if (q.on_run_completed != NULL && c != NULL && sst_is_null(sst_object_get(c, "thread_id"))) {
        c = sst__set_take(c, "on_run_completed", sst_string_new(q.on_run_completed, &err), &err);
    }
    if (reschedule && c != NULL) {
        /* A new schedule, end or enabling counts from now: missed fires are not made up. */
        srv_cron sched;
        if (srv_cron_parse(sst_string_cstr(sst_object_get(c, "schedule")), &sched, &err) ==
            SST_OK) {
            c = with_next(c, next_fire(&sched, now, ms_of(c, M_END)), &err);
        }
    }
    c = sst__set_take(c, "updated_at", srv_iso_time(now, &err), &err);
    sst_code rc = c != NULL ? save(r->s, c, &err) : sst__code(&err);
    pthread_mutex_unlock(&r->s->cron_mu);
    if (rc != SST_OK) {
        sst_value_unref(c);
        srv_fail(res, &err);
        return;
    }
    srv_json(res, 200, public_of(c, NULL, &err));
    sst_value_unref(c);
}

void srv_cron_delete(srv_request *r, srv_response *res) {
    const char *id = path_cron(r, res);
    if (id == NULL) {
        return;
    }
    sst_error err = {0};
    pthread_mutex_lock(&r->s->cron_mu);
    sst_value *c = load(r->s, id, &err);
    sst_code rc = c != NULL ? sst_store_delete(r->s->store, k_ns, 2, id, &err) : sst__code(&err);
    pthread_mutex_unlock(&r->s->cron_mu);
    sst_value_unref(c);
    if (rc != SST_OK) {
        srv_fail(res, &err);
        return;
    }
    srv_no_content(res);
}

/* ---- firing ------------------------------------------------------------------ */

enum fire_result {
    FIRED,   /* enqueued now */
    ALREADY, /* enqueued before (by this process or another) */
    SKIPPED, /* not enqueued (thread busy under "reject", run limit, an error): logged */
    GONE     /* its thread or assistant no longer exists */
};

/* A fire's id: uuid5(cron_id, "<what>:<fire ms>"). */
static sst_code fire_id(const char *cron_id, const char *what, int64_t fire_ms, char out[37],
                        sst_error *err) {
    char name[64];
    snprintf(name, sizeof name, "%s:%lld", what, (long long)fire_ms);
    return sst_uuid5(cron_id, name, out, err);
}

/* The body of a fire's run: the payload, with the completion and the multitask strategy
 * of a cron's run (a thread cron enqueues behind a busy thread unless it says otherwise). */
static sst_value *fire_body(const sst_value *cron, bool stateless, sst_error *err) {
    const sst_value *p = sst_object_get(cron, "payload");
    sst_value *b = sst_object_empty();
    for (size_t i = 0; b != NULL && i < sst_object_len(p); i++) {
        b = sst__setv_take(b, sst_object_key_at(p, i), sst_value_ref(sst_object_value_at(p, i)),
                           err);
    }
    const sst_value *done = sst_object_get(cron, "on_run_completed");
    b = sst__set_take(b, "on_completion",
                      sst_string_new(!stateless            ? "keep"
                                     : sst_is_string(done) ? sst_string_cstr(done)
                                                           : "delete",
                                     err),
                      err);
    if (b != NULL && sst_object_get(b, "multitask_strategy") == NULL) {
        b = sst__set_take(b, "multitask_strategy", sst_string_new("enqueue", err), err);
    }
    return b;
}

/* Enqueues the run of @p cron's fire at @p fire_ms, as POST .../runs would with its
 * payload (srv_run_create_from), under ids derived from the fire. */
static enum fire_result fire(sst_server *s, const sst_value *cron, int64_t fire_ms) {
    const char *cron_id = sst_string_cstr(sst_object_get(cron, "cron_id"));
    const sst_value *tv = sst_object_get(cron, "thread_id");
    bool stateless = !sst_is_string(tv);
    sst_error err = {0};
    char run_id[37], tid[37];
    if (fire_id(cron_id, "run", fire_ms, run_id, &err) != SST_OK ||
        (stateless && fire_id(cron_id, "thread", fire_ms, tid, &err) != SST_OK)) {
        srv_log(s, "cron %s: %s", cron_id, err.msg);
        return SKIPPED;
    }
    /* Enqueued already (the queue keeps the run; a stateless run that ended and was
     * deleted is gone, but its cron's next_run_date had moved on by then). */
    run_copy seen = {0};
    if (sst_queue_get(s->queue, run_id, srv_run_copy_fn, &seen, &err) == SST_OK) {
        srv_run_copy_free(&seen);
        return ALREADY;
    }
    srv_run_copy_free(&seen);
    err = (sst_error){0};
    sst_value *body = fire_body(cron, stateless, &err);
    if (body == NULL) {
        srv_log(s, "cron %s: %s", cron_id, err.msg);
        return SKIPPED;
    }
    srv_response res = {.status = 200};
    srv_run_create_from(s, body, stateless ? tid : sst_string_cstr(tv), stateless, run_id,
                        sst_object_get(cron, M_STAMP), &res);
    sst_value_unref(body);
    enum fire_result out = res.status == 200   ? FIRED
                           : res.status == 409 ? ALREADY /* another process enqueued it */
                           : res.status == 404 ? GONE
                                               : SKIPPED;
    if (out == GONE || out == SKIPPED) {
        const char *detail = sst_string_cstr(sst_object_get(res.json, "detail"));
        srv_log(s, "cron %s: fire skipped: %s", cron_id, detail != NULL ? detail : "?");
    }
    sst_value_unref(res.json);
    sst_free(res.text);
    return out;
}

/* Fires @p due (a cron as listed) if it is still due once re-read under cron_mu, and moves
 * its next_run_date on. */
static void tick_one(sst_server *s, const sst_value *due, int64_t now) {
    const char *id = sst_string_cstr(sst_object_get(due, "cron_id"));
    int64_t fire_ms = ms_of(due, M_NEXT);
    if (id == NULL || fire_ms < 0) {
        return;
    }
    sst_error err = {0};
    pthread_mutex_lock(&s->cron_mu);
    sst_value *c = load(s, id, &err);
    /* Fired by another tick, changed or deleted since it was listed: nothing to do. */
    if (c == NULL || ms_of(c, M_NEXT) != fire_ms || !srv_true(sst_object_get(c, "enabled"))) {
        pthread_mutex_unlock(&s->cron_mu);
        sst_value_unref(c);
        return;
    }
    srv_cron sched;
    int64_t end_ms = ms_of(c, M_END), next = -1;
    if (srv_cron_parse(sst_string_cstr(sst_object_get(c, "schedule")), &sched, &err) != SST_OK) {
        srv_log(s, "cron %s: %s: no longer fired", id, err.msg);
    } else if (end_ms < 0 || fire_ms <= end_ms) { /* else past its end_time: kept, not fired */
        enum fire_result fr = fire(s, c, fire_ms);
        if (fr == GONE) {
            srv_log(s, "cron %s: its thread or assistant is gone: cron deleted", id);
            if (sst_store_delete(s->store, k_ns, 2, id, &err) != SST_OK) {
                srv_log(s, "cron %s: %s", id, err.msg);
            }
            pthread_mutex_unlock(&s->cron_mu);
            sst_value_unref(c);
            return;
        }
        next = next_fire(&sched, now > fire_ms ? now : fire_ms, end_ms);
    }
    /* Read it again: a PATCH or DELETE another process made while the run was being made
     * wins (only this server's requests wait for its cron_mu). */
    sst_value_unref(c);
    err = (sst_error){0};
    c = load(s, id, &err);
    if (c != NULL && ms_of(c, M_NEXT) == fire_ms) {
        c = with_next(c, next, &err);
        if (c == NULL || save(s, c, &err) != SST_OK) {
            srv_log(s, "cron %s: cannot move next_run_date on: %s", id, err.msg);
        }
    } else if (c == NULL && err.code != SST_ENOTFOUND) {
        srv_log(s, "cron %s: %s", id, err.msg);
    }
    pthread_mutex_unlock(&s->cron_mu);
    sst_value_unref(c);
}

void srv_crons_tick(sst_server *s, int64_t now_ms) {
    int64_t now = now_ms + s->cron_offset_ms;
    sst_error err = {0};
    sst_value *lte = sst__set_take(sst_object_empty(), "$lte", sst_int_new(now, &err), &err);
    sst_value *filter = sst__set_take(sst_object_empty(), "enabled", sst_bool(true), &err);
    filter = sst__set_take(filter, M_NEXT, lte, &err);
    sst_value *due = filter != NULL ? all_crons(s, filter, 100, &err) : NULL;
    sst_value_unref(filter);
    if (due == NULL) {
        srv_log(s, "crons: cannot list the crons due: %s", err.msg);
        return;
    }
    for (size_t i = 0; i < sst_array_len(due); i++) {
        tick_one(s, sst_array_get(due, i), now);
    }
    sst_value_unref(due);
}

/* ---- the ticker thread --------------------------------------------------------- */

static void *ticker_main(void *arg) {
    sst_server *s = arg;
    for (;;) {
        pthread_mutex_lock(&s->mu);
        if (!s->stopping) {
            struct timespec until;
            clock_gettime(CLOCK_REALTIME, &until);
            until.tv_sec += 1;
            pthread_cond_timedwait(&s->done, &s->mu, &until);
        }
        bool stop = s->stopping;
        pthread_mutex_unlock(&s->mu);
        if (stop) {
            return NULL;
        }
        srv_crons_tick(s, srv_now());
    }
}

sst_code srv_crons_start(sst_server *s, sst_error *err) {
    if (s->cron_offset_ms != 0) {
        srv_log(s,
                "crons: the clock is moved by %lld ms (SST_SERVE_CRON_CLOCK_OFFSET_MS, a "
                "test knob)",
                (long long)s->cron_offset_ms);
    }
    if (s->cron_ticker_started) {
        return SST_OK;
    }
    if (pthread_create(&s->cron_ticker, NULL, ticker_main, s) != 0) {
        srv_log(s, "crons: cannot start the ticker thread: crons will not fire");
        return sst__error(err, SST_ENOMEM, "serve: cannot start the cron ticker thread");
    }
    s->cron_ticker_started = true;
    return SST_OK;
}

void srv_crons_stop(sst_server *s) {
    if (s->cron_ticker_started) {
        pthread_join(s->cron_ticker, NULL);
        s->cron_ticker_started = false;
    }
}
