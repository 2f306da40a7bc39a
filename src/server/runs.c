/* SPDX-License-Identifier: MIT */
/*
 * Creating runs: a run request (LangGraph's RunCreate) is checked, turned
 * into a queued run whose kwargs say what to run, put in the durable queue
 * under the thread's multitask strategy, and answered as the endpoint asks:
 * the run (background), its result when it ends (wait), or its events (SSE
 * stream). Workers (worker.c) run it.
 */
#include <stdio.h>
#include <string.h>

#include "auth.h"
#include "server_int.h"
#include "superstep/json.h"

enum { WANT_BACKGROUND, WANT_WAIT, WANT_STREAM };

/* What a request asks for, read from its body. */
typedef struct run_req {
    const char *assistant_id, *multitask, *if_not_exists, *on_completion, *checkpoint_id;
    const sst_value *input, *command, *config, *context, *metadata, *webhook;
    const sst_value *stream_mode, *before, *after;
    bool subgraphs, resumable, cancel_on_disconnect;
    double after_seconds;
    const char *durability;
} run_req;

static const char *const k_run_fields[] = {"assistant_id",     "input",
                                           "command",          "checkpoint",
                                           "checkpoint_id",    "checkpoint_during",
                                           "config",           "context",
                                           "metadata",         "stream_mode",
                                           "stream_subgraphs", "stream_resumable",
                                           "on_disconnect",    "feedback_keys",
                                           "interrupt_before", "interrupt_after",
                                           "webhook",          "multitask_strategy",
                                           "if_not_exists",    "on_completion",
                                           "after_seconds",    "durability",
                                           "langsmith_tracer", "checkpoint_ns",
                                           "strict_resume",    NULL};

/* "*" or a list of node names. */
static bool interrupt_list(srv_request *r, srv_response *res, const char *key,
                           const sst_value **out) {
    const sst_value *v = sst_object_get(r->json, key);
    if (v == NULL || sst_is_null(v)) {
        return true;
    }
    if (sst_is_string(v) && strcmp(sst_string_cstr(v), "*") == 0) {
        *out = v;
        return true;
    }
    return srv_field_strings(r, res, key, out);
}

static bool read_request(srv_request *r, srv_response *res, run_req *q, bool stateless,
                         bool need_assistant) {
    static const char *const strategies[] = {"reject", "rollback", "interrupt", "enqueue", NULL};
    static const char *const creates[] = {"create", "reject", NULL};
    static const char *const completions[] = {"delete", "keep", NULL};
    static const char *const disconnects[] = {"cancel", "continue", NULL};
    static const char *const durabilities[] = {"sync", "async", "exit", NULL};
    *q = (run_req){.multitask = "reject",
                   .if_not_exists = "reject",
                   .on_completion = stateless ? "delete" : "keep"};
    const char *disc = NULL, *webhook = NULL;
    const sst_value *checkpoint = NULL;
    if (!srv_body_object(r, res) || !srv_known_fields(r, res, k_run_fields) ||
        !srv_check_run_body(r->json, res) ||
        !srv_field_string(r, res, "assistant_id", &q->assistant_id) ||
        !srv_field_object(r, res, "command", &q->command) ||
        !srv_field_object(r, res, "config", &q->config) ||
        !srv_field_object(r, res, "context", &q->context) ||
        !srv_field_object(r, res, "metadata", &q->metadata) ||
        !srv_field_strings(r, res, "stream_mode", &q->stream_mode) ||
        !srv_field_bool(r, res, "stream_subgraphs", &q->subgraphs) ||
        !srv_field_bool(r, res, "stream_resumable", &q->resumable) ||
        !interrupt_list(r, res, "interrupt_before", &q->before) ||
        !interrupt_list(r, res, "interrupt_after", &q->after) ||
        !srv_field_string(r, res, "webhook", &webhook) ||
        !srv_field_enum(r, res, "multitask_strategy", strategies, &q->multitask) ||
        !srv_field_enum(r, res, "if_not_exists", creates, &q->if_not_exists) ||
        !srv_field_enum(r, res, "on_completion", completions, &q->on_completion) ||
        !srv_field_enum(r, res, "on_disconnect", disconnects, &disc) ||
        !srv_field_enum(r, res, "durability", durabilities, &q->durability) ||
        !srv_field_number(r, res, "after_seconds", 0, 1e9, &q->after_seconds) ||
        !srv_field_string(r, res, "checkpoint_id", &q->checkpoint_id) ||
        !srv_field_object(r, res, "checkpoint", &checkpoint)) {
        return false;
    }
    q->cancel_on_disconnect = disc != NULL && strcmp(disc, "cancel") == 0;
    if (q->assistant_id == NULL && need_assistant) {
        srv_error(res, 400, "body member 'assistant_id' is required");
        return false;
    }
    const sst_value *limit = sst_object_get(q->config, "recursion_limit");
    if (limit != NULL && !sst_is_null(limit) &&
        (!sst_is_int(limit) || sst_int_value(limit) < 1 || sst_int_value(limit) > 100000000)) {
        srv_error(res, 400, "config.recursion_limit must be an integer from 1 to 100000000");
        return false;
    }
    const sst_value *cid = sst_object_get(checkpoint, "checkpoint_id");
    if (q->checkpoint_id == NULL && sst_is_string(cid)) {
        q->checkpoint_id = sst_string_cstr(cid);
    }
    q->input = sst_object_get(r->json, "input");
    q->webhook = sst_object_get(r->json, "webhook");
    if (webhook != NULL && strncmp(webhook, "http://", 7) != 0 &&
        strncmp(webhook, "https://", 8) != 0) {
        srv_error(res, 400, "webhook must be an http:// or https:// URL, got '%.200s'", webhook);
        return false;
    }
    return true;
}

/* The stream modes as bits; false after a 400 naming an unknown mode. */
static bool mode_bits(srv_response *res, const sst_value *modes, unsigned *bits) {
    *bits = 0;
    size_t n = modes == NULL ? 0 : sst_is_string(modes) ? 1 : sst_array_len(modes);
    for (size_t i = 0; i < n; i++) {
        const char *m = sst_is_string(modes) ? sst_string_cstr(modes)
                                             : sst_string_cstr(sst_array_get(modes, i));
        unsigned b = srv_mode_bit(m);
        if (b == 0 || b == SRV_MODE_EVENTS) {
            srv_error(res, 400,
                      "unknown stream_mode '%.100s' (values, updates, messages, "
                      "messages-tuple, custom, debug, tasks, checkpoints)",
                      m);
            return false;
        }
        *bits |= b;
    }
    if (n == 0) {
        *bits = SRV_MODE_VALUES;
    }
    return true;
}

/* The modes as a list of names (what the run object shows). */
static sst_value *mode_list(const sst_value *modes, sst_error *err) {
    if (modes == NULL) {
        return sst__push_take(sst_array_empty(), sst_string_new("values", err), err);
    }
    if (sst_is_string(modes)) {
        return sst__push_take(sst_array_empty(), sst_value_ref(modes), err);
    }
    return sst_value_ref(modes);
}

/* The kwargs of the run: what the worker needs to run it. */
static sst_value *kwargs_of(const run_req *q, const sst_value *assistant, bool temporary,
                            bool events, sst_error *err) {
    /* The assistant's config and context under the run's own. */
    sst_value *config = srv_merged(sst_object_get(assistant, "config"), q->config, err);
    sst_value *context = srv_merged(sst_object_get(assistant, "context"), q->context, err);
    sst_value *k = sst__set_take(sst_object_empty(), "input",
                                 sst_value_ref(q->input != NULL ? q->input : sst_null()), err);
    k = sst__set_take(k, "command", sst_value_ref(q->command != NULL ? q->command : sst_null()),
                      err);
    k = sst__set_take(k, "config", config, err);
    k = sst__set_take(k, "context", context, err);
    k = sst__set_take(k, "stream_mode", mode_list(q->stream_mode, err), err);
    k = sst__set_take(k, "interrupt_before",
                      sst_value_ref(q->before != NULL ? q->before : sst_null()), err);
    k = sst__set_take(k, "interrupt_after", sst_value_ref(q->after != NULL ? q->after : sst_null()),
                      err);
    k = sst__set_take(k, "checkpoint_id",
                      q->checkpoint_id != NULL ? sst_string_new(q->checkpoint_id, err) : sst_null(),
                      err);
    k = sst__set_take(k, "subgraphs", sst_bool(q->subgraphs), err);
    k = sst__set_take(k, "resumable", sst_bool(q->resumable), err);
    k = sst__set_take(k, "temporary", sst_bool(temporary), err);
    k = sst__set_take(k, "durability",
                      sst_string_new(q->durability != NULL ? q->durability : "async", err), err);
    k = sst__set_take(k, "on_completion", sst_string_new(q->on_completion, err), err);
    k = sst__set_take(k, "webhook", sst_value_ref(q->webhook != NULL ? q->webhook : sst_null()),
                      err);
    k = sst__set_take(k, "graph_id", sst_value_ref(sst_object_get(assistant, "graph_id")), err);
    return sst__set_take(k, "events", sst_bool(events), err);
}

/* Makes the thread ready (created for a stateless run or with if_not_exists "create") and
 * tagged with the run's graph and assistant, as LangGraph does; false after an answer. */
static bool prepare_thread(srv_request *r, srv_response *res, const char *id, bool stateless,
                           const run_req *q, const sst_value *assistant) {
    sst_error err = {0};
    sst_value *tags = sst__set_take(sst_object_empty(), "graph_id",
                                    sst_value_ref(sst_object_get(assistant, "graph_id")), &err);
    tags = sst__set_take(tags, "assistant_id",
                         sst_value_ref(sst_object_get(assistant, "assistant_id")), &err);
    /* A thread made here is the user's (auth.c), or the cron creator's (r->thread_stamp). */
    sst_value *mine = srv_auth_stamp(r, sst_object_empty());
    sst_value *stamp = mine != NULL && r->thread_stamp != NULL
                           ? srv_merged(mine, r->thread_stamp, &err)
                           : sst_value_ref(mine);
    sst_value_unref(mine);
    bool create = stateless || strcmp(q->if_not_exists, "create") == 0;
    sst_code rc = tags != NULL && stamp != NULL
                      ? srv_thread_for_run(r->s, id, create, tags, stamp, &err)
                      : SST_ENOMEM;
    sst_value_unref(tags);
    sst_value_unref(stamp);
    if (rc == SST_ENOTFOUND) {
        srv_error(res, 404, "Thread with ID %s not found", id);
        return false;
    }
    if (rc != SST_OK) {
        srv_fail(res, &err);
        return false;
    }
    return true;
}

/* Puts the run in the queue under the thread's multitask strategy; false after an answer. */
static bool enqueue(srv_request *r, srv_response *res, const sst_queued_run *run,
                    const char *strategy) {
    sst_error err = {0};
    unsigned flags = 0;
    if (strcmp(strategy, "reject") == 0) {
        flags = SST_QUEUE_IF_IDLE;
    } else if (strcmp(strategy, "interrupt") == 0 || strcmp(strategy, "rollback") == 0) {
        srv_thread_cancel_runs(r->s, run->thread_id, strategy);
    }
    sst_queue_query lq = {.thread_id = run->thread_id};
    size_t active = srv_thread_active_runs(r->s, &lq);
    if (active >= r->s->o.runs_per_thread) {
        srv_error(res, 429, "thread %s already has %zu pending or running runs (the limit)",
                  run->thread_id, active);
        return false;
    }
    sst_code rc = sst_queue_enqueue(r->s->queue, run, flags, &err);
    if (rc == SST_EBUSY) {
        srv_error(res, 422,
                  "Thread is already running a task. Wait for it to finish or choose a "
                  "different multitask strategy.");
        return false;
    }
    if (rc != SST_OK) {
        srv_fail(res, &err);
        return false;
    }
    if (r->s->pg == NULL) {
        /* One connection for all: the woken worker's claim waits for this transaction's
         * commit and sees the run; woken now, it is first in line. (On PostgreSQL the
         * caller wakes a worker once this has committed.) */
        srv_workers_wake(r->s);
    }
    return true;
}

typedef struct enqueue_job {
    srv_request *r;
    srv_response *res;
    const char *thread_id;
    bool stateless;
    const run_req *q;
    const sst_value *assistant;
    const sst_queued_run *run;
    bool events; /* publish the run's metadata event on its stream */
    const char *strategy;
    srv_stream *st;    /* the run's stream (a reference), made once the thread is ready */
    bool prepared, ok; /* the thread was made or tagged; the run was enqueued */
} enqueue_job;

/* The run's transaction (srv_tx): its thread made or tagged, the run enqueued. Not
 * SST_OK when either failed (its answer is set), so that a group rolls it back. */
static sst_code enqueue_tx(void *arg, sst_error *err) {
    enqueue_job *j = arg;
    bool batch = srv_batch_begin(j->r->s);
    j->prepared = prepare_thread(j->r, j->res, j->thread_id, j->stateless, j->q, j->assistant);
    if (j->prepared && j->run->kwargs != NULL) {
        j->st = srv_stream_get(j->r->s, j->run->run_id);
        if (j->st != NULL && j->events) {
            srv_publish_metadata(j->r->s, j->st, j->run->run_id, 1);
        }
    }
    j->ok = j->st != NULL && enqueue(j->r, j->res, j->run, j->strategy);
    if (batch) {
        sst_code rc = srv_batch_commit(j->r->s, j->ok, j->ok ? err : NULL);
        if (rc != SST_OK) {
            return rc;
        }
    }
    return j->ok ? SST_OK : sst__error(err, SST_EINVAL, "run not enqueued");
}

/* The first event of every stream: {"run_id", "attempt"}. */
void srv_publish_metadata(sst_server *s, srv_stream *st, const char *run_id, unsigned attempt) {
    char buf[160];
    int n = snprintf(buf, sizeof buf, "{\"run_id\":\"%s\",\"attempt\":%u}", run_id, attempt);
    srv_stream_publish(s, st, "metadata", sst__strndup(buf, (size_t)n), (size_t)n);
}

/* The assistant the request names (a new reference), its graph taking the request's
 * input; NULL after a 404 or a 400 (an input its graph does not take). */
static sst_value *assistant_for(sst_server *s, const run_req *q, srv_response *res) {
    sst_error err = {0};
    sst_value *assistant = srv_assistant_lookup(s, q->assistant_id, &err);
    if (assistant == NULL) {
        srv_fail(res, &err);
        return NULL;
    }
    const sst_value *graph_id = sst_object_get(assistant, "graph_id");
    srv_graph *g = sst_is_string(graph_id) ? srv_graph_find(s, sst_string_cstr(graph_id)) : NULL;
    if (!srv_check_input(g, q->input, res)) {
        sst_value_unref(assistant);
        return NULL;
    }
    return assistant;
}

/*
 * The whole creation: on @p thread_id, or @p stateless on a new thread (@p thread_id, or a
 * new id when NULL); @p fixed_run_id NULL: a new run id. A stateless thread made here is
 * deleted again when the run could not be enqueued.
 */
static void create_run(srv_request *r, srv_response *res, const char *thread_id, bool stateless,
                       const char *fixed_run_id, int want) {
    run_req q;
    unsigned bits;
    if (!read_request(r, res, &q, stateless, true) || !mode_bits(res, q.stream_mode, &bits)) {
        return;
    }
    if (q.durability == NULL) { /* the server's default (--durability) */
        sst_durability d = r->s->o.durability;
        q.durability = d == SST_DURABILITY_SYNC   ? "sync"
                       : d == SST_DURABILITY_EXIT ? "exit"
                                                  : "async";
    }
    sst_error err = {0};
    sst_value *assistant = assistant_for(r->s, &q, res);
    if (assistant == NULL) {
        return;
    }
    char tid[37], run_id[37];
    if (stateless && thread_id == NULL) {
        srv_new_id(tid);
        thread_id = tid;
    }
    if (fixed_run_id != NULL) {
        snprintf(run_id, sizeof run_id, "%s", fixed_run_id);
    } else {
        srv_new_id(run_id);
    }
    /* A wait that cancels on disconnect has events too: each one wakes the waiting
     * connection, which then notices a client that left (stream.c). */
    bool events = want != WANT_WAIT || q.cancel_on_disconnect;
    sst_value *kwargs = kwargs_of(&q, assistant, stateless, events, &err);
    /* The caller's trace context, for a traced server (not shown in the run's kwargs). */
    const char *tp = r->s->o.tracer != NULL ? srv_header(r, "traceparent") : NULL;
    if (kwargs != NULL && tp != NULL && strlen(tp) < 128) {
        kwargs = sst__set_take(kwargs, "traceparent", sst_string_new(tp, &err), &err);
    }
    sst_queued_run run = {
        .run_id = run_id,
        .thread_id = thread_id,
        .assistant_id = sst_string_cstr(sst_object_get(assistant, "assistant_id")),
        .kwargs = kwargs,
        .metadata = q.metadata,
        .multitask_strategy = q.multitask,
        .created_at = srv_now(),
        .run_after = q.after_seconds > 0 ? srv_now() + (int64_t)(q.after_seconds * 1000) : 0};
    run.updated_at = run.created_at;
    /* The thread's tags and the run in one commit (on a SQLite file, in the group commit
     * of the runs in flight). */
    enqueue_job job = {.r = r,
                       .res = res,
                       .thread_id = thread_id,
                       .stateless = stateless,
                       .q = &q,
                       .assistant = assistant,
                       .run = &run,
                       .events = events,
                       .strategy = stateless ? "enqueue" : q.multitask};
    sst_code rc = srv_tx(r->s, enqueue_tx, &job, &err);
    srv_stream *st = job.st;
    bool ok = job.ok;
    if (rc != SST_OK && ok) { /* the commit failed */
        ok = false;
        srv_fail(res, &err);
    }
    if (ok && r->s->pg != NULL) {
        /* Committed: a worker woken now sees the run (woken before, inside the batch,
         * its claim on another connection found nothing, and the run waited for a
         * NOTIFY or the idle workers' poll). */
        srv_workers_wake(r->s);
    }
    if (!job.prepared) { /* the thread was refused: its answer is given */
        sst_value_unref(kwargs);
        sst_value_unref(assistant);
        return;
    }
    if (st == NULL) {
        srv_error(res, 500, "out of memory creating the run");
    }
    /* Not enqueued (409: the run id is taken, its stream and thread are that run's): no run
     * will end the stream, so let the sweep take it, and drop a stateless run's thread. */
    if (!ok && st != NULL && res->status != 409) {
        srv_stream_finish(r->s, st, NULL);
        if (stateless && sst_checkpointer_delete_thread(r->s->cp, thread_id, &err) != SST_OK) {
            srv_log(r->s, "thread %s: %s", thread_id, err.msg);
        }
    }
    if (ok && want == WANT_BACKGROUND) {
        run.status = SST_QUEUE_PENDING;
        srv_json(res, 200, srv_run_value(&run, &err));
    } else if (ok) {
        res->status = 200;
        res->stream = st;
        st = NULL;
        res->stream_kind = want == WANT_WAIT ? SRV_SEND_RESULT : SRV_SEND_EVENTS;
        res->cancel_on_disconnect = q.cancel_on_disconnect;
        res->ids = !stateless;
        snprintf(res->location_buf, sizeof res->location_buf,
                 stateless ? "/runs/%s%s" : "/threads/%s/runs/%s", stateless ? run_id : thread_id,
                 stateless ? "" : run_id);
        res->location = res->location_buf;
    }
    srv_stream_unref(r->s, st);
    sst_value_unref(kwargs);
    sst_value_unref(assistant);
}

static void create(srv_request *r, srv_response *res, const char *thread_id, int want) {
    create_run(r, res, thread_id, thread_id == NULL, NULL, want);
}

/* A request with only a body, for the two functions below (body.c reads r->json only). */
static srv_request body_request(sst_server *s, const sst_value *body) {
    return (srv_request){.s = s, .json = (sst_value *)body};
}

bool srv_run_body_ok(sst_server *s, const sst_value *body, bool need_assistant, srv_response *res) {
    srv_request r = body_request(s, body);
    run_req q;
    unsigned bits;
    if (!read_request(&r, res, &q, false, need_assistant) ||
        !mode_bits(res, q.stream_mode, &bits)) {
        return false;
    }
    sst_value *assistant = q.assistant_id != NULL ? assistant_for(s, &q, res) : NULL;
    sst_value_unref(assistant);
    return q.assistant_id == NULL || assistant != NULL;
}

void srv_run_create_from(sst_server *s, const sst_value *body, const char *thread_id,
                         bool stateless, const char *run_id, const sst_value *thread_stamp,
                         srv_response *res) {
    srv_request r = body_request(s, body);
    r.thread_stamp = thread_stamp;
    create_run(&r, res, thread_id, stateless, run_id, WANT_BACKGROUND);
}

void srv_runs_create(srv_request *r, srv_response *res) {
    const char *id = srv_path_thread(r, res);
    if (id != NULL) {
        create(r, res, id, WANT_BACKGROUND);
    }
}

void srv_runs_wait(srv_request *r, srv_response *res) {
    const char *id = srv_path_thread(r, res);
    if (id != NULL) {
        create(r, res, id, WANT_WAIT);
    }
}

void srv_runs_stream(srv_request *r, srv_response *res) {
    const char *id = srv_path_thread(r, res);
    if (id != NULL) {
        create(r, res, id, WANT_STREAM);
    }
}

void srv_runs_stateless_create(srv_request *r, srv_response *res) {
    create(r, res, NULL, WANT_BACKGROUND);
}

void srv_runs_stateless_wait(srv_request *r, srv_response *res) {
    create(r, res, NULL, WANT_WAIT);
}

void srv_runs_stateless_stream(srv_request *r, srv_response *res) {
    create(r, res, NULL, WANT_STREAM);
}

/*
 * The SDK's runs.createBatch sends each payload as given to it, in its own camelCase
 * (RunsCreatePayload: streamMode, multitaskStrategy, ...), with assistant_id added next to
 * assistantId. LangGraph.js's server drops the members it does not know, so a batch's
 * streamMode or afterSeconds is lost there; here each is read as its snake_case member.
 */
static const char *const k_batch_aliases[][2] = {
    {"assistantId", "assistant_id"},         {"streamMode", "stream_mode"},
    {"streamSubgraphs", "stream_subgraphs"}, {"streamResumable", "stream_resumable"},
    {"feedbackKeys", "feedback_keys"},       {"interruptBefore", "interrupt_before"},
    {"interruptAfter", "interrupt_after"},   {"multitaskStrategy", "multitask_strategy"},
    {"onCompletion", "on_completion"},       {"onDisconnect", "on_disconnect"},
    {"afterSeconds", "after_seconds"},       {"ifNotExists", "if_not_exists"},
    {"checkpointId", "checkpoint_id"},       {"checkpointDuring", "checkpoint_during"},
    {"strictResume", "strict_resume"},
};

/* Item @p i of a batch with its camelCase members renamed (a new reference); NULL after a
 * 400 (not an object, or a member given in both spellings with two values). */
static sst_value *batch_item(const sst_value *item, size_t i, srv_response *res) {
    if (!sst_is_object(item)) {
        srv_error(res, 400, "the body of /runs/batch: item %zu must be a run request object", i);
        return NULL;
    }
    sst_error err = {0};
    sst_value *out = sst_value_ref(item);
    for (size_t k = 0; out != NULL && k < sizeof k_batch_aliases / sizeof k_batch_aliases[0]; k++) {
        const char *camel = k_batch_aliases[k][0], *snake = k_batch_aliases[k][1];
        const sst_value *v = sst_object_get(out, camel), *w = sst_object_get(out, snake);
        if (v == NULL) {
            continue;
        }
        if (w != NULL && !sst_value_equal(v, w)) {
            srv_error(res, 400, "the body of /runs/batch: item %zu has '%s' and '%s' that differ",
                      i, camel, snake);
            sst_value_unref(out);
            return NULL;
        }
        sst_value *held = sst_value_ref(v);
        out = sst_object_remove_take(out, camel, &err);
        out = sst__set_take(out, snake, held, &err);
    }
    if (out == NULL) {
        srv_error(res, 500, "out of memory reading the batch");
    }
    return out;
}

/* Prefixes the detail of a refused item with its index. */
static void name_item(srv_response *res, size_t i) {
    const sst_value *d = sst_object_get(res->json, "detail");
    if (sst_is_string(d) && strncmp(sst_string_cstr(d), "the body of", 11) != 0) {
        srv_error(res, res->status, "the body of /runs/batch: item %zu: %s", i, sst_string_cstr(d));
    }
}

/*
 * POST /runs/batch: stateless background runs, all checked before any is created (as
 * LangGraph.js validates the whole list first): a refused item refuses the batch.
 */
void srv_runs_batch(srv_request *r, srv_response *res) {
    if (!sst_is_array(r->json) || sst_array_len(r->json) == 0) {
        srv_error(res, 400, "the body of /runs/batch must be a non-empty list of run requests");
        return;
    }
    sst_value *all = r->json;
    size_t n = sst_array_len(all);
    sst_error err = {0};
    sst_value *items = sst_array_empty();
    for (size_t i = 0; i < n && items != NULL; i++) {
        sst_value *item = batch_item(sst_array_get(all, i), i, res);
        if (item == NULL || !srv_run_body_ok(r->s, item, true, res)) {
            name_item(res, i);
            sst_value_unref(item);
            sst_value_unref(items);
            return;
        }
        items = sst__push_take(items, item, &err);
    }
    if (items == NULL) {
        srv_error(res, 500, "out of memory reading the batch");
        return;
    }
    sst_value *out = sst_array_empty();
    for (size_t i = 0; i < n && out != NULL; i++) {
        srv_response one = {.status = 200};
        r->json = sst_value_ref(sst_array_get(items, i));
        create(r, &one, NULL, WANT_BACKGROUND);
        sst_value_unref(r->json);
        r->json = NULL;
        if (one.status != 200) {
            sst_value_unref(out);
            out = NULL;
            *res = one;
            name_item(res, i);
            break;
        }
        out = sst__push_take(out, one.json, &err);
    }
    r->json = all;
    sst_value_unref(items);
    if (out != NULL) {
        srv_json(res, 200, out);
    } else if (res->json == NULL) {
        srv_error(res, 500, "out of memory creating the batch");
    }
}
