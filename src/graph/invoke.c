/* SPDX-License-Identifier: MIT */
/*
 * Invoking a compiled graph: the input step (filtered to the input fields),
 * START's routing (no superstep of its own, as in LangGraph), the engine run
 * with the hooks that implement interrupt_before/after and call the stream
 * (stream.c), what a thread keeps for the next invoke (interrupts.c has the
 * interrupts and their answers), and a subgraph's run inside its parent's
 * (subgraph.c): the parent Command, time travel's points.
 */
#include <stdio.h>
#include <string.h>

#include "graph_invoke.h"
#include "stream.h"
#include "superstep/functional.h"
#include "values/build.h"

struct sst_graph_result {
    sst_run_status status;
    sst_value *state;      /* owned, public */
    sst_value *interrupts; /* owned array */
    sst_error error;
    char *error_node;        /* owned, or NULL */
    sst_value *error_detail; /* owned, or NULL */
    uint64_t steps;
    sst_value *parent_cmd; /* owned: the Command{graph = PARENT} that ended the run, or NULL */
    sst_value *usage;      /* owned: the model usage reported, or NULL */
};

const sst_value *sst__result_parent_command(const sst_graph_result *r) {
    return r != NULL ? r->parent_cmd : NULL;
}

/* Ends the superstep's span, if one is open. */
static void end_step_span(sst__invoke_ctx *c, sst_code code, const char *message) {
    if (c->step_span != NULL) {
        c->o->tracer->end(c->o->tracer->user_data, c->step_span, code, message, NULL);
        c->step_span = NULL;
    }
}

/* Opens the span of superstep @p step (@p n tasks) under the run's. */
static void start_step_span(sst__invoke_ctx *c, uint64_t step, size_t n) {
    const sst_tracer *t = c->o->tracer;
    if (t == NULL) {
        return;
    }
    end_step_span(c, SST_OK, NULL);
    sst_error err = {0};
    sst_value *attrs =
        sst__set_take(sst_object_empty(), "superstep.step", sst_int_new((int64_t)step, &err), &err);
    attrs = sst__set_take(attrs, "superstep.tasks", sst_int_new((int64_t)n, &err), &err);
    /* One name for all (OpenTelemetry wants names of low cardinality): the number is
     * superstep.step. */
    c->step_span = t->start(t->user_data, c->run_span, "superstep", "superstep", attrs);
    sst_value_unref(attrs);
}

/* Opens the run's span under the invoke's trace_parent. */
static void start_run_span(sst__invoke_ctx *c, const sst_graph_thread *th) {
    const sst_tracer *t = c->o->tracer;
    if (t == NULL) {
        return;
    }
    sst_error err = {0};
    sst_value *attrs = sst_object_empty();
    if (th != NULL && th->thread_id != NULL) {
        attrs =
            sst__set_take(attrs, "superstep.thread_id", sst_string_new(th->thread_id, &err), &err);
    }
    if (th != NULL && th->ns != NULL && th->ns[0] != '\0') {
        attrs = sst__set_take(attrs, "superstep.checkpoint_ns", sst_string_new(th->ns, &err), &err);
    }
    c->run_span = t->start(t->user_data, c->o->trace_parent, "run",
                           c->nested ? "subgraph run" : "run", attrs);
    sst_value_unref(attrs);
}

/* Ends the run's span (and a superstep's left open by a failure) with the outcome. */
static void end_run_span(sst__invoke_ctx *c, const sst_graph_result *r, const sst_error *err) {
    const sst_tracer *t = c->o->tracer;
    if (t == NULL) {
        return;
    }
    sst_code code = r == NULL ? err->code : r->status == SST_RUN_FAILED ? r->error.code : SST_OK;
    const char *msg = r == NULL ? err->msg : r->status == SST_RUN_FAILED ? r->error.msg : NULL;
    end_step_span(c, code, msg);
    if (c->run_span == NULL) {
        return;
    }
    sst_error e = {0};
    sst_value *attrs = NULL;
    if (r != NULL) {
        attrs = sst__set_take(sst_object_empty(), "superstep.status",
                              sst_string_new(sst_run_status_name(r->status), &e), &e);
        attrs = sst__set_take(attrs, "superstep.steps", sst_int_new((int64_t)r->steps, &e), &e);
    }
    t->end(t->user_data, c->run_span, code, msg, attrs);
    sst_value_unref(attrs);
    c->run_span = NULL;
}

/* The usage so far (new reference, or NULL), for the checkpoint being written. */
static void usage_to_thread(sst__invoke_ctx *c) {
    if (c->th == NULL) {
        return;
    }
    pthread_mutex_lock(&c->live.mu);
    sst_value *u = c->usage != NULL ? sst_value_ref(c->usage) : NULL;
    pthread_mutex_unlock(&c->live.mu);
    sst_value_unref(c->th->run_usage);
    c->th->run_usage = u;
}

/* ---- results ---- */

sst_run_status sst_graph_result_status(const sst_graph_result *r) {
    return r->status;
}

const sst_value *sst_graph_result_state(const sst_graph_result *r) {
    return r->state;
}

const sst_value *sst_graph_result_usage(const sst_graph_result *r) {
    return r->usage;
}

const sst_value *sst_graph_result_interrupts(const sst_graph_result *r) {
    return r->interrupts;
}

const sst_error *sst_graph_result_error(const sst_graph_result *r) {
    return &r->error;
}

const sst_value *sst_graph_result_error_detail(const sst_graph_result *r) {
    return r->error_detail;
}

const char *sst_graph_result_error_node(const sst_graph_result *r) {
    return r->error_node;
}

uint64_t sst_graph_result_steps(const sst_graph_result *r) {
    return r->steps;
}

void sst_graph_result_free(sst_graph_result *r) {
    if (r == NULL) {
        return;
    }
    sst_value_unref(r->state);
    sst_value_unref(r->interrupts);
    sst_value_unref(r->parent_cmd);
    sst_value_unref(r->usage);
    sst__free(r->error_node);
    sst_value_unref(r->error_detail);
    sst__free(r);
}

/* ---- small value helpers ---- */

static sst_value *str(const char *s) {
    return sst_string_new(s, NULL);
}

/* ---- engine hooks ---- */

static size_t node_index(const sst__invoke_ctx *c, const char *vertex) {
    return sst__graph_find(c->cg->g, vertex);
}

/* True when the invoke stops before (or after) node @p k: its own list, else the compiled one. */
static bool stops_at(const sst__invoke_ctx *c, size_t k, bool before) {
    const char *const *list = before ? c->o->interrupt_before : c->o->interrupt_after;
    size_t n = before ? c->o->n_before : c->o->n_after;
    if (list == NULL) {
        return before ? c->cg->routes[k].interrupt_before : c->cg->routes[k].interrupt_after;
    }
    for (size_t i = 0; i < n; i++) {
        if (strcmp(list[i], SST_ALL_NODES) == 0 || strcmp(list[i], c->cg->g->nodes[k].name) == 0) {
            return true;
        }
    }
    return false;
}

static sst_code before_hook(uint64_t step, const char *const *v, size_t n, void *ud) {
    sst__invoke_ctx *c = ud;
    c->step = step;
    start_step_span(c, step, n);
    if (c->o->cancelled != NULL && c->o->cancelled(c->o->cancel_user_data, false)) {
        return SST_ECANCELLED;
    }
    if (c->skip_before && step == c->first_step) {
        sst__stream_tasks(&c->s, step, v, n);
        return c->s.rc;
    }
    sst_value *nodes = sst_array_empty();
    for (size_t i = 0; i < n && nodes != NULL; i++) {
        size_t k = node_index(c, v[i]);
        if (k != SIZE_MAX && stops_at(c, k, true)) {
            nodes = sst_array_push_take(nodes, str(v[i]), NULL);
        }
    }
    if (nodes == NULL) {
        return SST_ENOMEM;
    }
    if (sst_array_len(nodes) == 0) {
        sst_value_unref(nodes);
        sst__stream_tasks(&c->s, step, v, n);
        return c->s.rc;
    }
    c->stopped = "before";
    sst_value_unref(c->nodes);
    c->nodes = nodes;
    return SST_EINTERRUPT;
}

static void sleep_hook(uint64_t ms, void *ud) {
    sst__invoke_ctx *c = ud;
    if (c->o->sleep != NULL) {
        c->o->sleep(ms, c->o->sleep_user_data);
        return;
    }
    sst__sleep_ms(ms);
}

/* Stops the run after a superstep that ran an interrupt_after node (each named once). */
static sst_code interrupt_after(sst__invoke_ctx *c, const sst_superstep_stats *st) {
    sst_value *nodes = sst_array_empty();
    for (size_t i = 0; i < st->tasks && nodes != NULL; i++) {
        size_t k = node_index(c, st->task[i].vertex);
        bool seen = false;
        for (size_t j = 0; j < sst_array_len(nodes); j++) {
            seen =
                seen || strcmp(sst_string_cstr(sst_array_get(nodes, j)), st->task[i].vertex) == 0;
        }
        if (k != SIZE_MAX && stops_at(c, k, false) && !seen) {
            nodes = sst_array_push_take(nodes, str(st->task[i].vertex), NULL);
        }
    }
    if (nodes == NULL) {
        return SST_ENOMEM;
    }
    if (sst_array_len(nodes) == 0) {
        sst_value_unref(nodes);
        return SST_OK;
    }
    c->stopped = "after";
    sst_value_unref(c->nodes);
    c->nodes = nodes;
    return SST_EINTERRUPT;
}

/* True when interrupt_after will stop the run after superstep @p st. */
static bool stops_after(const sst__invoke_ctx *c, const sst_superstep_stats *st) {
    for (size_t i = 0; i < st->tasks; i++) {
        size_t k = node_index(c, st->task[i].vertex);
        if (k != SIZE_MAX && stops_at(c, k, false)) {
            return true;
        }
    }
    return false;
}

/* Streams a committed superstep, then applies interrupt_after. */
static sst_code superstep_hook(const sst_superstep_stats *st, void *ud) {
    sst__invoke_ctx *c = ud;
    end_step_span(c, SST_OK, NULL);
    if (c->th != NULL) {
        usage_to_thread(c);
        /* With no task left and no stop after it, this checkpoint is the run's last
         * (persist.c gives the thread's lock back with it). */
        c->th->run_ending = !stops_after(c, st);
        sst_error_clear(&c->persist_err);
        c->persist_rc = sst__persist_superstep(c->th, st, c->o, &c->persist_err);
        if (c->persist_rc != SST_OK) {
            return c->persist_rc;
        }
    }
    sst__stream_superstep(&c->s, st);
    if (c->s.rc != SST_OK) {
        return c->s.rc;
    }
    return interrupt_after(c, st);
}

/* ---- starting a run ---- */

/* START's routing on the state after the input: node names and Sends. */
sst_code sst__start_routing(const sst_compiled_graph *cg, const sst_value *state,
                            sst_value **targets, sst_error *err) {
    *targets = sst_array_empty();
    sst_code rc = SST_OK;
    for (size_t i = 0; i < cg->start.n_edges && rc == SST_OK; i++) {
        *targets = sst_array_push_take(*targets, str(cg->g->nodes[cg->start.edges[i]].name), err);
        rc = *targets != NULL ? SST_OK : SST_ENOMEM;
    }
    for (size_t i = 0; i < cg->start.n_branches && rc == SST_OK; i++) {
        const sst__branch *b = &cg->g->branches[cg->start.branches[i]];
        sst_value *res = b->router(state, b->user_data, err);
        if (res == NULL) {
            rc = sst__error_unless_set(err, SST_ETASK, "it returned no result");
            sst__error_prefix(err, "router of START failed");
            break;
        }
        rc = sst__route_result(cg, b, SST_START, res, targets, err);
        sst_value_unref(res);
    }
    return rc;
}

static void set_thread_state(sst_graph_thread *th, const sst_value *state) {
    sst_value *pub = sst__graph_public_state(state, NULL);
    if (pub == NULL) {
        return; /* out of memory: keep the previous public copy */
    }
    sst_value_unref(th->state);
    th->state = sst_value_ref(state);
    sst_value_unref(th->public_state);
    th->public_state = pub;
}

static sst_graph_result *new_result(sst_error *err) {
    sst_graph_result *r = sst__calloc(1, sizeof *r);
    if (r == NULL) {
        sst__enomem(err);
        return NULL;
    }
    r->interrupts = sst_array_empty();
    return r;
}

/* A result for a run that ended before the engine started (a START router error). */
static sst_graph_result *failed_before_start(const sst_compiled_graph *cg, const sst_value *state,
                                             const sst_error *why, sst_error *err) {
    sst_graph_result *r = new_result(err);
    if (r == NULL) {
        return NULL;
    }
    r->status = SST_RUN_FAILED;
    r->error = *why;
    r->error_node = sst__strndup(SST_START, strlen(SST_START));
    r->state = sst__stream_output(cg, state, NULL);
    if (r->state == NULL || r->error_node == NULL) {
        sst_graph_result_free(r);
        sst__enomem(err);
        return NULL;
    }
    return r;
}

/* The result for an invoke with no input and nothing to resume: the thread as it is
 * (LangGraph streams its values, as for any resume). */
static sst_graph_result *unchanged_result(const sst_compiled_graph *cg, const sst_graph_thread *th,
                                          const sst_invoke_opts *o, sst_error *err) {
    sst__streamer s;
    sst__stream_init(&s, cg, o, NULL);
    sst__stream_resume(&s, th->public_state);
    sst_code rc = s.rc;
    sst_error serr = s.err;
    sst__stream_free(&s);
    sst_graph_result *r = new_result(err);
    if (r != NULL) {
        r->status = rc == SST_OK ? SST_RUN_COMPLETED : SST_RUN_FAILED;
        r->error = serr;
        r->state = sst__stream_output(cg, th->public_state, NULL);
        if (r->state == NULL) {
            sst_graph_result_free(r);
            r = NULL;
            sst__enomem(err);
        }
    }
    return r;
}

/* Applies @p input to @p state (takes it); puts the prepared delta in *prepared (owned). */
static sst_value *apply_input(const sst_compiled_graph *cg, sst_value *state,
                              const sst_value *input, sst_value **prepared, sst_error *err) {
    *prepared = sst_schema_prepare_delta(cg->schema, sst_value_ref(input), err);
    const sst_value *deltas[] = {*prepared};
    state = *prepared != NULL ? sst_schema_apply(cg->schema, state, deltas, 1, err)
                              : (sst_value_unref(state), NULL);
    if (state == NULL) {
        sst_value_unref(*prepared);
        *prepared = NULL;
        sst__error_prefix(err, "input");
    }
    return state;
}

/*
 * Starts a new run: applies the input, routes START, names the run and writes its input
 * checkpoint. Takes *state and leaves the state after the input there, with the start point
 * (owned) in *rp. On failure returns false with *state consumed and set to NULL; *early is then
 * the result for a failed START router, or NULL with @p err set.
 */
static bool begin_run(sst__invoke_ctx *c, sst_graph_thread *th, const sst_value *input,
                      bool restart, bool fork, sst_value **state, sst_value **rp,
                      sst_graph_result **early, sst_error *err) {
    const sst_compiled_graph *cg = c->cg;
    bool durable = c->th != NULL;
    *early = NULL;
    sst_value *prepared = NULL;
    if (input != NULL && (*state = apply_input(cg, *state, input, &prepared, err)) == NULL) {
        return false;
    }
    sst_error rerr;
    sst_error_clear(&rerr);
    sst_value *targets = NULL;
    /* A Command input runs its goto targets only (LangGraph's START is not triggered). */
    bool command = c->o->update != NULL || c->o->goto_targets != NULL;
    sst_code rc = command ? ((targets = sst_array_empty()) != NULL ? SST_OK : sst__enomem(&rerr))
                          : sst__start_routing(cg, *state, &targets, &rerr);
    if (rc == SST_OK && command) {
        rc = sst__command_targets(cg, c->o->goto_targets, &targets, &rerr);
    }
    /* A new run's first superstep comes after its input and loop checkpoints. */
    uint64_t first = durable ? (uint64_t)(th->last_step + (restart ? 1 : 2)) : 0;
    if (rc == SST_OK) {
        *rp = sst__start_point(cg, first, targets, &rerr);
        rc = *rp != NULL ? SST_OK : SST_ENOMEM;
    }
    sst_value_unref(targets);
    if (rc != SST_OK) {
        sst_value_unref(prepared);
        *early = rc == SST_ENOMEM ? (sst__enomem(err), NULL)
                                  : failed_before_start(cg, *state, &rerr, err);
        if (*early != NULL && th != NULL) {
            set_thread_state(th, *state);
        }
        sst_value_unref(*state);
        *state = NULL;
        return false;
    }
    if (th != NULL && (rc = sst__name_run(th, err)) != SST_OK) {
        sst_value_unref(prepared);
        sst_value_unref(*rp);
        *rp = NULL;
        sst_value_unref(*state);
        *state = NULL;
        return false;
    }
    if (durable &&
        (cg->g->entrypoint
             ? sst__entry_persist_start(th, input, prepared, *state, *rp, fork, c->o, err)
             : sst__persist_start(th, restart, input, prepared, *state, *rp, fork, c->o, err)) !=
            SST_OK) {
        sst_value_unref(prepared);
        sst_value_unref(*rp);
        *rp = NULL;
        sst_value_unref(*state);
        *state = NULL;
        return false;
    }
    sst__stream_input(&c->s, *state, prepared);
    sst_value_unref(prepared);
    return true;
}

/* Runs the engine from the resume point @p rp on @p state (takes both), with the hooks on @p c. */
/*
 * A call (a task of the functional API) finished: its result streams as an update
 * {name: result} and, on a durable thread, becomes a pending write of the running
 * superstep at once, so a run that stops or crashes before the superstep commits
 * replays it instead of running it again.
 */
static void call_hook(const sst_task *t, const sst_value *entry, void *user_data) {
    sst__invoke_ctx *c = user_data;
    const char *name = sst_string_cstr(sst_object_get(entry, "name"));
    if (sst__live_on(&c->live, SST_STREAM_UPDATES)) {
        (void)sst__live_send(&c->live, SST_STREAM_UPDATES, name,
                             sst__set_take(sst_object_empty(), name,
                                           sst_value_ref(sst_object_get(entry, "result")), NULL),
                             NULL);
    }
    if (sst__live_on(&c->live, SST_STREAM_TASKS) || sst__live_on(&c->live, SST_STREAM_DEBUG)) {
        if (sst_task_cached(t)) { /* a cache hit did not run: announced here */
            (void)sst__live_push_task(&c->live, sst__lg_step(c->cg, sst_task_superstep(t)),
                                      sst_string_cstr(sst_object_get(entry, "task")), name,
                                      sst_task_input(t), NULL);
        }
        /* LangGraph's task result: the task's write to its __return__ channel. */
        sst_value *p = sst__set_take(sst_object_empty(), "id",
                                     sst_value_ref(sst_object_get(entry, "task")), NULL);
        p = sst__set_take(p, "name", str(name), NULL);
        p = sst__set_take(p, "error", sst_null(), NULL);
        p = sst__set_take(p, "interrupts", sst_array_empty(), NULL);
        p = sst__set_take(p, "result",
                          sst__set_take(sst_object_empty(), "__return__",
                                        sst_value_ref(sst_object_get(entry, "result")), NULL),
                          NULL);
        (void)sst__live_task_event(&c->live, "task_result",
                                   sst__lg_step(c->cg, sst_task_superstep(t)), name, p, NULL);
    }
    sst_graph_thread *th = c->th;
    /* A saver living in this process (SST_SAVER_VALUES) dies with it: a crash leaves nothing
     * to replay, and a stop writes every result with its resume point. */
    if (th == NULL || th->last_id == NULL || c->o->durability == SST_DURABILITY_EXIT ||
        (sst_checkpointer_flags(th->cp) & SST_SAVER_VALUES) != 0) {
        return;
    }
    sst_error err;
    sst_error_clear(&err);
    pthread_mutex_lock(&c->calls_mu);
    uint64_t step = sst_task_superstep(t);
    if (c->calls_rp == NULL || c->calls_step != step) {
        /* The first call of this superstep: from what the run resumed with (its pending
         * writes and answers), else nothing. */
        sst_value_unref(c->calls_rp);
        c->calls_rp = sst_value_ref(
            step == c->first_step && c->run_rp != NULL ? c->run_rp : sst_object_empty());
        c->calls_step = step;
    }
    /* A persistent list: appending shares what the saver holds of the previous record. */
    const sst_value *calls = sst_object_get(c->calls_rp, "calls");
    sst_value *list = sst__push_take(sst_value_ref(calls != NULL ? calls : sst_array_empty()),
                                     sst_value_ref(entry), &err);
    c->calls_rp = list != NULL ? sst__set_take(c->calls_rp, "calls", list, &err)
                               : (sst_value_unref(c->calls_rp), NULL);
    /* A write that failed costs only the replay after a crash: a run that stops writes
     * every result with its resume point (sst__persist_stop), and a commit needs none. */
    if (c->calls_rp != NULL &&
        sst__persist_writes(th, c->calls_rp, NULL, false, NULL, true, &err) != SST_OK) {
        sst_error_clear(&err);
    }
    pthread_mutex_unlock(&c->calls_mu);
}

static sst_run_result *run_engine(sst__invoke_ctx *c, sst_value *rp, sst_value *state,
                                  const char *run_key, sst_error *err) {
    c->first_step = (uint64_t)sst_int_value(sst_object_get(rp, "superstep"));
    sst_run_opts ro;
    sst_run_opts_init(&ro);
    ro.resume = rp;
    ro.state = state;
    ro.run_key = run_key;
    ro.max_supersteps = c->first_step + c->o->recursion_limit;
    ro.step_timeout_s = c->cg->step_timeout_s;
    ro.cache = c->cg->cache;
    ro.cache_ns = c->cg->cache_ns;
    ro.want_next = c->th != NULL || sst__stream_wants_next(&c->s);
    /* The updates stream shows each node's writes as it returned them. */
    ro.keep_raw_deltas = sst__has_stream(c->o) && (c->o->stream_modes & SST_STREAM_UPDATES) != 0;
    ro.before_superstep = before_hook;
    ro.on_superstep = superstep_hook;
    ro.sleep = sleep_hook;
    ro.on_call = call_hook;
    ro.user_data = c;
    c->run_rp = rp;
    c->step = c->first_step;
    sst__stream_start(&c->s, run_key, rp, state);

    sst_engine *own = NULL;
    sst_engine *e = c->o->engine;
    if (e == NULL) {
        e = own = sst_engine_new(NULL, err);
    }
    sst_run_result *rr = e != NULL ? sst_engine_run(e, c->cg->pregel, &ro, err) : NULL;
    sst_engine_free(own);
    sst_value_unref(rp);
    sst_value_unref(state);
    return rr;
}

/* Keeps what the next invoke of @p th needs after the run @p rr (borrowed), and writes the
 * final checkpoint of a durable thread; a failure to write it fails @p r. */
static void remember_run(sst__invoke_ctx *c, sst_graph_thread *th, const sst_run_result *rr,
                         const char *run_key, sst_graph_result *r) {
    set_thread_state(th, sst_run_result_state(rr));
    sst_value_unref(th->resume_point);
    sst_value_unref(th->pending);
    th->resume_point = NULL;
    th->pending = sst_array_empty();
    th->skip_before = false;
    if (r->status != SST_RUN_COMPLETED && !sst_is_null(sst_run_result_resume_point(rr))) {
        th->resume_point = sst_value_ref(sst_run_result_resume_point(rr));
        sst_value_unref(th->pending);
        th->pending = sst__collect_interrupts(rr, c->stopped, c->nodes, run_key, true);
        /* Its superstep passed the interrupt_before check already, unless an
         * interrupt_after stopped the run ahead of the next one. */
        th->skip_before = c->stopped == NULL || strcmp(c->stopped, "before") == 0;
    }
    if (c->th != NULL && c->persist_rc == SST_OK) {
        usage_to_thread(c);
        sst_error perr;
        sst_error_clear(&perr);
        if (sst__persist_stop(th, rr, th->pending, th->skip_before, c->o, &perr) != SST_OK &&
            r->status != SST_RUN_FAILED) {
            r->status = SST_RUN_FAILED;
            r->error = perr;
        }
    }
}

/* The graph result of the engine run @p rr (takes it); updates @p th when not NULL. */
/*
 * The state an interrupted run shows, as LangGraph's last values: the writes
 * of the tasks that succeeded in the interrupted superstep applied (they stay
 * pending in the checkpoint). NULL when out of memory.
 */
static sst_value *interrupted_state(const sst_compiled_graph *cg, const sst_run_result *rr) {
    sst_error err;
    sst_error_clear(&err);
    return sst__with_pending(cg, sst_value_ref(sst_run_result_state(rr)),
                             sst_object_get(sst_run_result_resume_point(rr), "pending"), &err);
}

static sst_graph_result *finish_run(sst__invoke_ctx *c, sst_graph_thread *th, sst_run_result *rr,
                                    const char *run_key, sst_error *err) {
    sst_graph_result *r = new_result(err);
    if (r == NULL) {
        sst_run_result_free(rr);
        return NULL;
    }
    r->status = sst_run_result_status(rr);
    r->steps = sst_run_result_supersteps(rr) - c->first_step;
    sst_value *shown = r->status == SST_RUN_INTERRUPTED ? interrupted_state(c->cg, rr)
                                                        : sst_value_ref(sst_run_result_state(rr));
    r->state = shown != NULL ? sst__stream_output(c->cg, shown, NULL) : NULL;
    sst_value_unref(shown);
    if (r->status == SST_RUN_INTERRUPTED) {
        sst_value_unref(r->interrupts);
        r->interrupts = sst__collect_interrupts(rr, c->stopped, c->nodes, run_key, false);
    } else if (r->status == SST_RUN_FAILED) {
        r->error = c->s.rc != SST_OK         ? c->s.err
                   : c->persist_rc != SST_OK ? c->persist_err
                                             : *sst_run_result_error(rr);
        const char *node = sst_run_result_error_vertex(rr);
        r->error_node = node != NULL ? sst__strndup(node, strlen(node)) : NULL;
        const sst_value *detail = sst_run_result_error_detail(rr);
        r->error_detail = detail != NULL ? sst_value_ref(detail) : NULL;
    }
    if (th != NULL) {
        remember_run(c, th, rr, run_key, r);
    }
    if (sst__has_stream(c->o)) {
        sst_value *ints = r->status == SST_RUN_INTERRUPTED && c->stopped == NULL
                              ? sst__collect_interrupts(rr, c->stopped, c->nodes, run_key, true)
                              : NULL;
        sst__stream_stop(&c->s, rr, ints, c->stopped);
        sst_value_unref(ints);
        if (c->s.rc != SST_OK && r->status != SST_RUN_FAILED) {
            r->status = SST_RUN_FAILED; /* the callback failed on the last events */
            r->error = c->s.err;
        }
    }
    sst_run_result_free(rr);
    if (r->state == NULL || r->interrupts == NULL || (th != NULL && th->pending == NULL)) {
        sst_graph_result_free(r);
        sst__enomem(err);
        return NULL;
    }
    return r;
}

/* How an invoke goes on: what invoke_locked decided. */
typedef struct run_how {
    bool resuming, command, restart, fork;
} run_how;

/*
 * A new run whose lock was deferred to its input checkpoint (invoke_checked) found the
 * thread busy, or moved on since it was loaded: nothing ran and nothing was written.
 * Takes the lock as an invoke takes it (waiting when asked to) and loads the thread's
 * latest checkpoint again; false with @p err set when that fails (SST_EBUSY: busy).
 */
static bool lock_and_reload(sst__invoke_ctx *c, sst_graph_thread *th, sst_error *err) {
    if (th == NULL || !th->lock_lost) {
        return false;
    }
    th->lock_lost = false;
    sst_error_clear(err);
    if (sst_checkpointer_lock(th->cp, th->thread_id, c->o->wait, err) != SST_OK) {
        atomic_store(&th->lock, SST__LOCK_NONE);
        return false;
    }
    atomic_store(&th->lock, SST__LOCK_HELD);
    return sst__persist_load(th, NULL, err) == SST_OK && th->state != NULL;
}

/* Resumes the thread's run or starts a new one on @p state (takes it), then runs it. */
static sst_graph_result *run_thread(sst__invoke_ctx *c, sst_graph_thread *th,
                                    const sst_value *input, const run_how *how, sst_value *state,
                                    sst_error *err) {
    const sst_invoke_opts *o = c->o;
    sst_value *rp = NULL;
    if (how->resuming && how->fork && sst__persist_replay(th, o, err) != SST_OK) {
        sst_value_unref(state);
        return NULL;
    }
    if (how->command && how->resuming) {
        sst_value_unref(state); /* the run goes on from the state with the update */
        if (sst__apply_command(c->cg, th, o, c->th != NULL, err) != SST_OK) {
            return NULL;
        }
        state = sst_value_ref(th->state);
    }
    if (how->resuming) {
        rp = sst__resume_point_with_values(th, o, err);
        if (rp == NULL) {
            sst_value_unref(state);
            return NULL;
        }
        c->skip_before = th->skip_before;
        sst__stream_resume(&c->s, state); /* LangGraph starts a resume with the values */
    } else {
        sst_graph_result *early = NULL;
        while (!begin_run(c, th, input, how->restart, how->fork, &state, &rp, &early, err)) {
            if (early != NULL || !lock_and_reload(c, th, err)) {
                return early;
            }
            state = sst_value_ref(th->state);
        }
    }
    if (c->s.rc != SST_OK) { /* the callback stopped the run before its first superstep */
        sst_value_unref(rp);
        sst_graph_result *r = new_result(err);
        if (r != NULL) {
            r->status = SST_RUN_FAILED;
            r->error = c->s.err;
            r->state = sst__stream_output(c->cg, state, NULL);
        }
        sst_value_unref(state);
        if (r != NULL && r->state == NULL) {
            sst_graph_result_free(r);
            r = NULL;
            sst__enomem(err);
        }
        return r;
    }
    /* The run's task ids: th->run_key stays the same until the next invoke. */
    const char *run_key = th != NULL && th->run_key != NULL ? th->run_key : "";
    sst_run_result *rr = run_engine(c, rp, state, run_key, err);
    return rr != NULL ? finish_run(c, th, rr, run_key, err) : NULL;
}

/*
 * The point a run from checkpoint @p id travels back to (LangGraph's ReplayState): @p id
 * itself, or for a checkpoint update_state made (source "update" or "fork") the one it
 * branched from. In @p buf; NULL when it cannot be read (no subgraph then loads older).
 */
static const char *replay_point(sst_graph_thread *th, const char *id, char buf[SST__ID_MAX]) {
    sst_error err;
    sst_error_clear(&err);
    sst_value *rec = sst__record_get(th, id, &err);
    if (rec == NULL) {
        return NULL;
    }
    const char *source = sst_string_cstr(sst_object_get(sst_object_get(rec, "metadata"), "source"));
    const sst_value *parent = sst_object_get(rec, "parent");
    bool branched =
        source != NULL && (strcmp(source, "update") == 0 || strcmp(source, "fork") == 0);
    snprintf(buf, SST__ID_MAX, "%s",
             branched && sst_is_string(parent) ? sst_string_cstr(parent) : id);
    sst_value_unref(rec);
    return buf;
}

/*
 * A root run whose config names a subgraph's checkpoint (LangGraph's time travel to it:
 * checkpoint_ns and checkpoint_map from a subgraph snapshot's config): the root runs from
 * the map's "" entry (in *copy, which @p o then points to) and the map's other entries are
 * where the subgraphs go on from. NULL when the config names none.
 */
static const sst_value *subgraph_targets(const sst_invoke_opts **o, sst_invoke_opts *copy) {
    const sst_value *conf = sst_object_get((*o)->config, "configurable");
    const char *ns = sst_string_cstr(sst_object_get(conf, "checkpoint_ns"));
    if (ns == NULL || ns[0] == '\0') {
        return NULL;
    }
    const sst_value *map = sst_object_get(conf, "checkpoint_map");
    const sst_value *root = sst_object_get(map, "");
    *copy = **o;
    copy->checkpoint_id = sst_is_string(root) ? sst_string_cstr(root) : NULL;
    *o = copy;
    return sst_is_object(map) ? map : NULL;
}

/*
 * Durability "async": @p c's thread writes through the root invoke's writer, a new one
 * for a root (in *own), its root's for a subgraph (one order for the whole tree, see
 * writer.c). False when out of memory.
 */
static bool start_writes(sst__invoke_ctx *c, const sst__nested *nested, sst__writer **own,
                         sst_error *err) {
    *own = NULL;
    if (c->th == NULL || c->o->durability != SST_DURABILITY_ASYNC) {
        return true;
    }
    if (nested == NULL || nested->writer == NULL) {
        *own = sst__writer_new(c->cg->writers, err);
        if (*own == NULL) {
            return false;
        }
    }
    c->th->writer = *own != NULL ? *own : nested->writer;
    c->th->ticket = 0;
    c->th->chain = false;
    return true;
}

/*
 * The end of a run with a writer: every checkpoint of @p c's thread is stored (and, for
 * the root, every one of its subgraphs'; the writer goes) before the invoke returns. A
 * write that failed fails the run with the saver's error, if nothing failed it before.
 */
static void end_writes(sst__invoke_ctx *c, sst__writer *own, sst_graph_result *r) {
    sst_error e;
    sst_error_clear(&e);
    sst_code rc = own != NULL ? sst__writer_drain(own, &e) : sst__persist_flush(c->th, &e);
    if (rc != SST_OK && r != NULL && r->status != SST_RUN_FAILED) {
        r->status = SST_RUN_FAILED;
        r->error = e;
    }
    c->th->writer = NULL;
    c->th->ticket = 0;
    c->th->chain = false;
    sst__writer_free(own);
}

static sst_graph_result *invoke_locked(const sst_compiled_graph *cg, sst_graph_thread *th,
                                       const sst_value *input, const sst_invoke_opts *o,
                                       const sst__nested *nested, sst_error *err) {
    bool durable = th != NULL && th->cp != NULL;
    sst_invoke_opts travel;
    const sst_value *targets = nested != NULL ? nested->targets
                               : durable      ? subgraph_targets(&o, &travel)
                                              : NULL;
    if (sst__check_interrupt_lists(cg->g, o->interrupt_before, o->n_before, o->interrupt_after,
                                   o->n_after, "invoke", err) != SST_OK ||
        (durable && (nested == NULL || !nested->loaded) &&
         sst__persist_load(th, o->checkpoint_id, err) != SST_OK) ||
        (durable && nested != NULL && nested->start_empty &&
         sst__persist_empty(th, err) != SST_OK)) {
        return NULL;
    }
    bool fork = durable && o->checkpoint_id != NULL &&
                (th->latest_id == NULL || strcmp(th->latest_id, th->last_id) != 0);
    bool resuming = th != NULL && th->resume_point != NULL &&
                    (o->resume != NULL || o->resume_by_id != NULL || input == NULL);
    /* Command{resume = {id = value, ...}} naming pending interrupts: resume by id. */
    sst_invoke_opts by_id;
    if (resuming && sst__resume_is_id_map(th->pending, o->resume)) {
        by_id = *o;
        by_id.resume_by_id = o->resume;
        by_id.resume = NULL;
        o = &by_id;
    }
    bool command = o->update != NULL || o->goto_targets != NULL;
    if (command && !resuming && input == NULL) {
        input = o->update != NULL ? o->update : sst_object_empty(); /* a new run */
    }
    if ((o->resume != NULL || o->resume_by_id != NULL) && !resuming) {
        sst__error(err, SST_EINVAL, "resume: there is no interrupted run to resume");
        return NULL;
    }
    /* A run whose start was cut between its input checkpoint and its first loop
     * checkpoint starts again from the input checkpoint, with the same input. */
    bool restart = durable && !resuming && input == NULL && th->restart && !fork;
    if (restart) {
        input = th->restart_input;
    }
    if (durable && !resuming && !restart && input == NULL && th->last_id != NULL) {
        return unchanged_result(cg, th, o, err);
    }
    sst_value *state = th != NULL && th->state != NULL ? sst_value_ref(th->state)
                                                       : sst_schema_initial_state(cg->schema, err);
    if (state == NULL) {
        return NULL;
    }
    sst__invoke_ctx c;
    memset(&c, 0, sizeof c);
    c.cg = cg;
    c.o = o;
    c.th = durable ? th : NULL;
    c.nested = nested != NULL;
    c.targets = targets;
    /* Time travel (a run from a named checkpoint, not answering interrupts): each subgraph
     * loads its state as of that point; a subgraph's run keeps its root's point. */
    bool answers = o->resume != NULL || o->resume_by_id != NULL;
    char point[SST__ID_MAX];
    if (nested != NULL && nested->replay_from != NULL) {
        c.replay_from = nested->replay_from;
    } else if (durable && o->checkpoint_id != NULL && !answers) {
        c.replay_from = replay_point(th, o->checkpoint_id, point);
    }
    sst__stream_init(&c.s, cg, o, c.th);
    c.s.nested = nested != NULL;
    sst__live_init(&c.live, cg, o, c.th);
    c.calls_mu = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
    run_how how = {resuming, command, restart, fork};
    if (c.th != NULL) { /* each invoke counts its own usage */
        sst_value_unref(c.th->run_usage);
        c.th->run_usage = NULL;
    }
    start_run_span(&c, th);
    sst__writer *own = NULL;
    sst_graph_result *r = NULL;
    if (start_writes(&c, nested, &own, err)) {
        r = run_thread(&c, th, input, &how, state, err);
        if (c.th != NULL && c.th->writer != NULL) {
            end_writes(&c, own, r);
        }
    } else {
        sst_value_unref(state);
    }
    end_run_span(&c, r, err);
    if (r != NULL) {
        r->usage = c.usage;
        c.usage = NULL;
    }
    sst_value_unref(c.usage);
    if (r != NULL && r->status == SST_RUN_FAILED && r->error.code == SST_EPARENT) {
        r->parent_cmd = c.parent_cmd;
        c.parent_cmd = NULL;
    }
    sst_value_unref(c.parent_cmd);
    sst_value_unref(c.visited);
    sst__stream_free(&c.s);
    sst__live_free(&c.live);
    sst_value_unref(c.nodes);
    sst_value_unref(c.calls_rp);
    return r;
}

/* @p input (an object) restricted to the declared input fields (a new reference). */
static sst_value *input_fields_only(const sst_compiled_graph *cg, const sst_value *input,
                                    sst_error *err) {
    const sst_value *keep = cg->g->input_fields;
    if (keep == NULL) {
        return sst_value_ref(input);
    }
    sst_value *out = sst_object_empty();
    for (size_t i = 0; i < sst_array_len(keep) && out != NULL; i++) {
        const sst_value *v = sst_object_get(input, sst_string_cstr(sst_array_get(keep, i)));
        if (v != NULL) {
            out = sst__setv_take(out, sst_array_get(keep, i), sst_value_ref(v), err);
        }
    }
    return out;
}

/*
 * Whether the invoke may take the thread's lock with its run's input checkpoint rather
 * than in a transaction of its own before it (SST_PUT_TAKE_LOCK: one commit fewer): a new
 * run from @p input whose first write, before any node runs, is that checkpoint, on a
 * saver that takes the lock in its put. Not for a resume, a Command, time travel, an
 * entrypoint, durability "exit" (its nodes run before it writes anything) or a stream of
 * checkpoints (it marks the thread's newest checkpoint before the run starts).
 */
static bool lock_deferrable(const sst_compiled_graph *cg, const sst_graph_thread *th,
                            const sst_value *input, const sst_invoke_opts *o) {
    const sst_value *conf = sst_object_get(o->config, "configurable");
    const char *ns = sst_string_cstr(sst_object_get(conf, "checkpoint_ns"));
    return (sst_checkpointer_flags(th->cp) & SST_SAVER_LOCK_IN_PUT) != 0 && input != NULL &&
           o->resume == NULL && o->resume_by_id == NULL && o->update == NULL &&
           o->goto_targets == NULL && o->checkpoint_id == NULL && (ns == NULL || ns[0] == '\0') &&
           o->durability != SST_DURABILITY_EXIT && !cg->g->entrypoint &&
           (o->stream_modes & (SST_STREAM_CHECKPOINTS | SST_STREAM_DEBUG)) == 0;
}

static sst_graph_result *invoke_checked(const sst_compiled_graph *cg, sst_graph_thread *thread,
                                        const sst_value *input, const sst_invoke_opts *opts,
                                        const sst__nested *nested, sst_error *err) {
    sst_invoke_opts defaults;
    if (opts == NULL) {
        sst_invoke_opts_init(&defaults);
        opts = &defaults;
    }
    if (cg == NULL) {
        sst__error(err, SST_EINVAL, "invoke: NULL compiled graph");
        return NULL;
    }
    if (thread != NULL && thread->cg != cg) {
        sst__error(err, SST_EINVAL, "invoke: the thread belongs to another compiled graph");
        return NULL;
    }
    if (input != NULL && !sst_is_object(input)) {
        sst__error(err, SST_ETYPE, "invoke: the input must be an object, got %s",
                   sst_type_name(sst_value_type(input)));
        return NULL;
    }
    /* LangGraph's input_schema: the other keys of the input are ignored. An entrypoint's
     * input ({SST_ROOT: v}, or any other object as itself) goes to its hidden input field:
     * its state is what it returned. */
    const sst_value *root = input != NULL ? sst_object_get(input, SST_ROOT) : NULL;
    sst_value *kept = input == NULL ? NULL
                      : cg->g->entrypoint
                          ? sst__set_take(sst_object_empty(), SST_ENTRY_INPUT,
                                          sst_value_ref(root != NULL ? root : input), err)
                          : input_fields_only(cg, input, err);
    if (input != NULL && kept == NULL) {
        return NULL;
    }
    if (thread != NULL && atomic_exchange(&thread->busy, true)) {
        sst_value_unref(kept);
        sst__error(err, SST_EBUSY, "invoke: the thread is busy with another invoke");
        return NULL;
    }
    /* A subgraph's thread is the parent's thread, whose lock the parent holds. */
    bool lock = thread != NULL && thread->cp != NULL && nested == NULL && !opts->caller_locked;
    bool defer = lock && lock_deferrable(cg, thread, kept, opts);
    if (lock && !defer &&
        sst_checkpointer_lock(thread->cp, thread->thread_id, opts->wait, err) != SST_OK) {
        sst_value_unref(kept);
        atomic_store(&thread->busy, false);
        return NULL;
    }
    if (thread != NULL) {
        thread->lock_lost = false;
        thread->after_hold = false;
        atomic_store(&thread->lock, defer  ? SST__LOCK_DEFERRED
                                    : lock ? SST__LOCK_HELD
                                           : SST__LOCK_NONE);
    }
    sst_graph_result *r = invoke_locked(cg, thread, kept, opts, nested, err);
    sst_value_unref(kept);
    if (thread != NULL) {
        /* Given back with the run's last checkpoint, or never taken (a deferred lock whose
         * run wrote nothing): nothing to give back here. */
        if (lock && atomic_load(&thread->lock) == SST__LOCK_HELD) {
            sst_checkpointer_unlock(thread->cp, thread->thread_id);
        }
        atomic_store(&thread->lock, SST__LOCK_NONE);
        atomic_store(&thread->busy, false);
    }
    return r;
}

sst_graph_result *sst_graph_invoke(const sst_compiled_graph *cg, sst_graph_thread *thread,
                                   const sst_value *input, const sst_invoke_opts *opts,
                                   sst_error *err) {
    return invoke_checked(cg, thread, input, opts, NULL, err);
}

sst_graph_result *sst__graph_invoke_nested(const sst_compiled_graph *cg, sst_graph_thread *thread,
                                           const sst_value *input, const sst_invoke_opts *opts,
                                           const sst__nested *nested, sst_error *err) {
    static const sst__nested plain = {NULL, false, NULL, false, NULL};
    return invoke_checked(cg, thread, input, opts, nested != NULL ? nested : &plain, err);
}
