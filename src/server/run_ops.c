/* SPDX-License-Identifier: MIT */
/*
 * Runs once created: list, get, delete, join (wait for the result), join
 * the stream (with Last-Event-ID), cancel.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server_int.h"
#include "superstep/json.h"

bool srv_run_copy_fn(const sst_queued_run *run, void *ud) {
    run_copy *c = ud;
    c->found = true;
    c->run = *run;
    snprintf(c->run_id, sizeof c->run_id, "%s", run->run_id);
    snprintf(c->thread_id, sizeof c->thread_id, "%s", run->thread_id);
    snprintf(c->assistant_id, sizeof c->assistant_id, "%s",
             run->assistant_id != NULL ? run->assistant_id : "");
    snprintf(c->strategy, sizeof c->strategy, "%s",
             run->multitask_strategy != NULL ? run->multitask_strategy : "");
    c->kwargs = sst_value_ref(run->kwargs != NULL ? run->kwargs : sst_object_empty());
    c->metadata = sst_value_ref(run->metadata != NULL ? run->metadata : sst_object_empty());
    c->run.run_id = c->run_id;
    c->run.thread_id = c->thread_id;
    c->run.assistant_id = c->assistant_id;
    c->run.multitask_strategy = run->multitask_strategy != NULL ? c->strategy : NULL;
    c->run.kwargs = c->kwargs;
    c->run.metadata = c->metadata;
    snprintf(c->cancel, sizeof c->cancel, "%s", run->cancel != NULL ? run->cancel : "");
    c->run.cancel = run->cancel != NULL ? c->cancel : NULL;
    c->run.owner = NULL;
    return false;
}

void srv_run_copy_free(run_copy *c) {
    sst_value_unref(c->kwargs);
    sst_value_unref(c->metadata);
}

/* The run of the path (thread, run); false after a 404 or 400. */
static bool path_run(srv_request *r, srv_response *res, run_copy *out) {
    *out = (run_copy){0};
    const char *tid = srv_path_thread(r, res);
    if (tid == NULL) {
        return false;
    }
    if (!srv_is_uuid(r->param[1])) {
        srv_error(res, 400, "run_id must be a UUID, got '%.64s'", r->param[1]);
        return false;
    }
    sst_error err = {0};
    sst_code rc = sst_queue_get(r->s->queue, r->param[1], srv_run_copy_fn, out, &err);
    if (rc == SST_OK && strcmp(out->thread_id, tid) != 0) {
        rc = SST_ENOTFOUND;
    }
    if (rc == SST_ENOTFOUND) {
        srv_run_copy_free(out);
        srv_error(res, 404, "Run %.64s not found on thread %s", r->param[1], tid);
        return false;
    }
    if (rc != SST_OK) {
        srv_fail(res, &err);
        return false;
    }
    return true;
}

void srv_run_get(srv_request *r, srv_response *res) {
    run_copy c;
    if (!path_run(r, res, &c)) {
        return;
    }
    sst_error err = {0};
    srv_json(res, 200, srv_run_value(&c.run, &err));
    srv_run_copy_free(&c);
}

typedef struct list_ctx {
    sst_value *out;
    sst_error err;
} list_ctx;

static bool add_run(const sst_queued_run *run, void *ud) {
    list_ctx *l = ud;
    l->out = sst__push_take(l->out, srv_run_value(run, &l->err), &l->err);
    return l->out != NULL;
}

/* A query parameter as a count; false after a 400. */
static bool query_count(srv_request *r, srv_response *res, const char *key, size_t *out) {
    const char *v = srv_query(r, key);
    if (v == NULL) {
        return true;
    }
    char *end;
    errno = 0;
    unsigned long long n = strtoull(v, &end, 10);
    if (errno != 0 || *end != '\0' || v[0] == '-' || n > 100000) {
        srv_error(res, 400, "query parameter '%s' must be a number from 0 to 100000", key);
        return false;
    }
    *out = (size_t)n;
    return true;
}

void srv_runs_list(srv_request *r, srv_response *res) {
    const char *tid = srv_path_thread(r, res);
    size_t limit = 10, offset = 0;
    if (tid == NULL || !query_count(r, res, "limit", &limit) ||
        !query_count(r, res, "offset", &offset)) {
        return;
    }
    sst_queue_query q = {.thread_id = tid, .limit = limit, .offset = offset};
    const char *status = srv_query(r, "status");
    if (status != NULL) {
        if (!sst_queue_status_parse(status, &q.status)) {
            srv_error(res, 400, "unknown run status '%.64s'", status);
            return;
        }
        q.by_status = true;
    }
    if (!srv_need_thread(r, res, tid)) {
        return;
    }
    sst_error err = {0};
    list_ctx l = {sst_array_empty(), {0}};
    if (sst_queue_list(r->s->queue, &q, add_run, &l, &err) != SST_OK || l.out == NULL) {
        sst_value_unref(l.out);
        srv_fail(res, err.code != SST_OK ? &err : &l.err);
        return;
    }
    srv_json(res, 200, l.out);
}

void srv_run_delete(srv_request *r, srv_response *res) {
    run_copy c;
    if (!path_run(r, res, &c)) {
        return;
    }
    if (!sst_queue_status_final(c.run.status)) {
        srv_run_copy_free(&c);
        srv_error(res, 409, "run %s is %s: cancel it before deleting it", c.run_id,
                  sst_queue_status_name(c.run.status));
        return;
    }
    sst_error err = {0};
    sst_code rc = sst_queue_remove(r->s->queue, c.run_id, &err);
    srv_run_copy_free(&c);
    if (rc != SST_OK) {
        srv_fail(res, &err);
        return;
    }
    srv_no_content(res);
}

/* The result body of a finished run that this process no longer streams. */
static char *finished_result(sst_server *s, const run_copy *c) {
    if (c->run.status == SST_QUEUE_INTERRUPTED && c->run.cancel != NULL) {
        return NULL;
    }
    sst_error err = {0};
    sst_value *st = srv_state_of(s, c->thread_id, NULL, false, &err);
    sst_value *body = NULL;
    if (c->run.status == SST_QUEUE_ERROR || c->run.status == SST_QUEUE_TIMEOUT) {
        sst_value *e =
            sst__set_take(sst_object_empty(), "error", sst_string_new("Error", &err), &err);
        e = sst__set_take(e, "message", sst_string_new("the run failed", &err), &err);
        body = sst__set_take(sst_object_empty(), "__error__", e, &err);
    } else if (c->run.status == SST_QUEUE_INTERRUPTED && st != NULL) {
        body = sst__set_take(sst_object_empty(), "__interrupt__",
                             sst_value_ref(sst_object_get(st, "interrupts")), &err);
    } else if (st != NULL) {
        body = sst_value_ref(srv_unroot(sst_object_get(st, "values")));
    }
    sst_value_unref(st);
    char *text = body != NULL ? sst_json_write(body, SST_JSON_COMPACT, NULL, &err) : NULL;
    sst_value_unref(body);
    return text;
}

/* Answers with the run's result, now (finished) or when it ends. */
static void send_result(srv_request *r, srv_response *res, const run_copy *c, unsigned kind) {
    srv_stream *st = srv_stream_find(r->s, c->run_id);
    if (st == NULL) {
        st = srv_stream_get(r->s, c->run_id);
        if (st == NULL) {
            srv_error(res, 500, "out of memory");
            return;
        }
        /* With PostgreSQL the run's events so far are rows: another process may run it. */
        bool ended = r->s->relay != NULL && srv_relay_catch_up(r->s, st, c->run_id);
        if (!ended && sst_queue_status_final(c->run.status)) {
            srv_stream_finish(r->s, st, kind == SRV_SEND_RESULT ? finished_result(r->s, c) : NULL);
        }
    }
    res->status = 200;
    res->stream = st;
    res->stream_kind = kind;
}

void srv_run_join(srv_request *r, srv_response *res) {
    run_copy c;
    if (!path_run(r, res, &c)) {
        return;
    }
    /* The status read before the stream was looked up: re-read it so a run that ended in
     * between is not waited for forever. */
    send_result(r, res, &c, SRV_SEND_RESULT);
    srv_run_copy_free(&c);
}

void srv_run_join_stream(srv_request *r, srv_response *res) {
    run_copy c;
    if (!path_run(r, res, &c)) {
        return;
    }
    uint64_t after = 0;
    const char *last = srv_header(r, "Last-Event-ID");
    if (last != NULL) {
        char *end;
        long long n = strtoll(last, &end, 10);
        after = *end == '\0' && n >= 0 ? (uint64_t)n + 1 : 0;
    }
    unsigned modes = 0;
    const char *m = srv_query(r, "stream_mode");
    if (m != NULL && (modes = srv_mode_bit(m)) == 0) {
        srv_run_copy_free(&c);
        srv_error(res, 400, "unknown stream_mode '%.64s'", m);
        return;
    }
    send_result(r, res, &c, SRV_SEND_EVENTS);
    const char *cod = srv_query(r, "cancel_on_disconnect");
    res->cancel_on_disconnect = cod != NULL && (strcmp(cod, "true") == 0 || strcmp(cod, "1") == 0);
    res->after = after;
    res->ids = true;
    res->modes = modes;
    snprintf(res->location_buf, sizeof res->location_buf, "/threads/%s/runs/%s", c.thread_id,
             c.run_id);
    res->location = res->location_buf;
    srv_run_copy_free(&c);
}

/* Cancels one run: in the queue (durable), and at once if a worker here runs it. */
sst_code srv_cancel_run(sst_server *s, const char *run_id, const char *action,
                        sst_queue_status *status, sst_error *err) {
    sst_code rc = sst_queue_cancel(s->queue, run_id, action, srv_now(), status, err);
    if (rc == SST_OK && *status == SST_QUEUE_RUNNING) {
        srv_workers_cancel(s, run_id, action);
    } else if (rc == SST_OK && *status == SST_QUEUE_INTERRUPTED) {
        srv_stream *st = srv_stream_find(s, run_id);
        if (st != NULL) {
            srv_stream_end(s, st, NULL);
            srv_stream_unref(s, st);
        }
    }
    return rc;
}

typedef struct active_ctx {
    size_t n;
    char ids[16][64];
    size_t n_ids;
} active_ctx;

static bool count_active(const sst_queued_run *run, void *ud) {
    active_ctx *a = ud;
    if (!sst_queue_status_final(run->status)) {
        if (a->n_ids < 16) {
            snprintf(a->ids[a->n_ids++], sizeof a->ids[0], "%s", run->run_id);
        }
        a->n++;
    }
    return true;
}

size_t srv_thread_active_runs(sst_server *s, const sst_queue_query *q) {
    active_ctx a = {0};
    sst_error err = {0};
    if (sst_queue_list(s->queue, q, count_active, &a, &err) != SST_OK) {
        return 0;
    }
    return a.n;
}

void srv_thread_cancel_runs(sst_server *s, const char *thread_id, const char *action) {
    active_ctx a = {0};
    sst_queue_query q = {.thread_id = thread_id};
    sst_error err = {0};
    if (sst_queue_list(s->queue, &q, count_active, &a, &err) != SST_OK) {
        return;
    }
    for (size_t i = 0; i < a.n_ids; i++) {
        sst_queue_status st;
        (void)srv_cancel_run(s, a.ids[i], action, &st, &err);
    }
}

void srv_run_cancel(srv_request *r, srv_response *res) {
    run_copy c;
    if (!path_run(r, res, &c)) {
        return;
    }
    const char *action = srv_query(r, "action");
    if (action == NULL) {
        action = "interrupt";
    }
    if (strcmp(action, "interrupt") != 0 && strcmp(action, "rollback") != 0) {
        srv_run_copy_free(&c);
        srv_error(res, 400, "query parameter 'action' must be 'interrupt' or 'rollback'");
        return;
    }
    const char *w = srv_query(r, "wait");
    bool wait = w != NULL && strcmp(w, "false") != 0 && strcmp(w, "0") != 0;
    sst_error err = {0};
    sst_queue_status status;
    if (srv_cancel_run(r->s, c.run_id, action, &status, &err) != SST_OK) {
        srv_run_copy_free(&c);
        srv_fail(res, &err);
        return;
    }
    sst_value_unref(res->json);
    res->json = NULL;
    res->status = wait ? 204 : 202;
    if (wait && !sst_queue_status_final(status)) {
        /* Answered when the worker running it ends its stream (no HTTP thread waits). */
        c.run.status = status;
        send_result(r, res, &c, SRV_SEND_AWAIT);
        res->status = 204;
    }
    srv_run_copy_free(&c);
}

void srv_runs_cancel_many(srv_request *r, srv_response *res) {
    static const char *const known[] = {"thread_id", "run_ids", "status", NULL};
    static const char *const actions[] = {"interrupt", "rollback", NULL};
    const char *tid = NULL, *status = NULL, *action = "interrupt";
    const sst_value *ids = NULL;
    if (!srv_body_object(r, res) || !srv_known_fields(r, res, known) ||
        !srv_field_string(r, res, "thread_id", &tid) ||
        !srv_field_strings(r, res, "run_ids", &ids) ||
        !srv_field_string(r, res, "status", &status)) {
        return;
    }
    const char *qa = srv_query(r, "action");
    for (size_t i = 0; qa != NULL && actions[i] != NULL; i++) {
        if (strcmp(actions[i], qa) == 0) {
            action = actions[i];
        }
    }
    if (tid != NULL && ids == NULL) {
        srv_thread_cancel_runs(r->s, tid, action);
    }
    for (size_t i = 0; ids != NULL && i < sst_array_len(ids); i++) {
        sst_error err = {0};
        sst_queue_status st;
        (void)srv_cancel_run(r->s, sst_string_cstr(sst_array_get(ids, i)), action, &st, &err);
    }
    res->status = 204;
}
