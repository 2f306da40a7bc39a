/* SPDX-License-Identifier: MIT */
/*
 * The master: the superstep loop of one run.
 *
 * Each superstep: make the tasks (vertex tasks in name order, then Sends in
 * send order), run them on the pool, retry the failed ones under their
 * vertex's policy while the successful ones wait (deferred commit), then
 * either commit every delta in task order and route the outboxes, or end the
 * run with the successful writes reported as pending.
 *
 * Retry delays use a virtual clock: the sum of the delays the run asked the
 * sleep hook for. Tests replace the hook and check the delays, not wall time.
 */
#include <stdio.h>
#include <string.h>

#include "pregel_int.h"

struct sst_run_result {
    sst_run_status status;
    sst_value *state; /* owned */
    uint64_t supersteps;
    sst_error error;
    char *error_vertex;      /* owned, or NULL */
    sst_value *error_detail; /* owned, or NULL */
    sst_value *interrupts;   /* owned array */
    sst_value *pending;      /* owned array */
    sst_value *resume_point; /* owned; null for a completed run */
    uint64_t tasks, retries;
};

/* A Send waiting for the next superstep. */
typedef struct pending_send {
    uint32_t vertex;
    sst_value *payload;          /* owned */
    sst_timeout_policy *timeout; /* owned: the Send's own timeout, or NULL */
} pending_send;

typedef struct run {
    sst_engine *e;
    const sst_pregel *p;
    const sst_run_opts *o;
    sst_run_result *r;
    sst_value *state;   /* owned: the committed state */
    uint64_t superstep; /* the one being run */
    uint64_t vclock_ms; /* virtual time for retry scheduling */
    uint64_t rng;       /* jitter */
    /* Routing into the next superstep. */
    bool *active;        /* per vertex */
    sst_value **inbox;   /* per vertex: owned array of messages, or NULL */
    pending_send *sends; /* owned, in send order */
    size_t nsends, sends_cap;
    /* The current superstep's tasks. */
    sst_task *tasks;
    sst_task **batch;
    size_t ntasks, tasks_cap;
    sst_task_stat *stats;        /* owned: for the on_superstep hook */
    const sst_value *resume_map; /* borrowed: task id -> resume values, or NULL */
    sst_code hook_stop;          /* what a hook asked to stop with, or SST_OK */
    sst__run_calls calls;        /* the calls of the current superstep (call.c) */
} run;

struct sst_commit {
    run *R;
};

const sst_value *sst_commit_state(const sst_commit *c) {
    return c->R->state;
}

static bool activate_vertex(run *R, const char *vertex) {
    size_t v = sst__pregel_find(R->p, vertex, strlen(vertex));
    if (v == SIZE_MAX) {
        return false;
    }
    R->active[v] = true;
    return true;
}

sst_code sst_commit_activate(sst_commit *c, const char *vertex, sst_error *err) {
    if (vertex == NULL || !activate_vertex(c->R, vertex)) {
        return sst__error(err, SST_EINVAL, "commit hook activates unknown vertex '%s'",
                          vertex != NULL ? vertex : "(NULL)");
    }
    return SST_OK;
}

/* ---- small helpers ---- */

static uint64_t next_rand(run *R) {
    R->rng ^= R->rng << 13;
    R->rng ^= R->rng >> 7;
    R->rng ^= R->rng << 17;
    return R->rng;
}

static void default_sleep(uint64_t ms, void *user_data) {
    SST_UNUSED(user_data);
    sst__sleep_ms(ms);
}

void sst_run_opts_init(sst_run_opts *o) {
    memset(o, 0, sizeof *o);
    o->max_supersteps = 25;
    o->run_key = "";
}

static bool reserve_tasks(run *R, size_t n) {
    if (n <= R->tasks_cap) {
        return true;
    }
    size_t cap = R->tasks_cap ? R->tasks_cap : 16;
    while (cap < n) {
        cap *= 2;
    }
    sst_task *t = sst__realloc(R->tasks, cap * sizeof *t);
    if (t == NULL) {
        return false;
    }
    R->tasks = t;
    sst_task **b = sst__realloc(R->batch, cap * sizeof *b);
    if (b == NULL) {
        return false;
    }
    R->batch = b;
    if (R->o->on_superstep != NULL) {
        sst_task_stat *s = sst__realloc(R->stats, cap * sizeof *s);
        if (s == NULL) {
            return false;
        }
        R->stats = s;
    }
    R->tasks_cap = cap;
    return true;
}

static void init_task(run *R, sst_task *t, uint32_t vertex) {
    sst__task_init(t, R->p, R->o, R->state, R->superstep, vertex, &R->calls);
    t->timed = R->o->on_superstep != NULL;
    t->keep_raw = R->o->keep_raw_deltas;
    t->timeout = sst__vertex_timeout(&R->p->v[vertex]);
}

static void destroy_tasks(run *R) {
    for (size_t i = 0; i < R->ntasks; i++) {
        sst__task_destroy(&R->tasks[i]);
    }
    R->ntasks = 0;
}

/*
 * Whether the routing state holds work other than activations of deferred
 * vertices: while it does, those activations wait (LangGraph's defer=True,
 * whose trigger becomes visible only when the run would otherwise finish).
 */
static bool holds_deferred(const run *R) {
    if (R->nsends > 0) {
        return true;
    }
    for (size_t v = 0; v < R->p->n; v++) {
        if (R->inbox[v] != NULL || (R->active[v] && !R->p->v[v].defer)) {
            return true;
        }
    }
    return false;
}

/* Whether vertex @p v gets a vertex task from the routing state (@p hold: holds_deferred). */
static bool gets_task(const run *R, uint32_t v, bool hold) {
    if (R->inbox[v] != NULL) {
        return true;
    }
    return R->active[v] && !(hold && R->p->v[v].defer);
}

/* Turns the routing state into this superstep's tasks. false on OOM. */
static bool make_tasks(run *R) {
    bool hold = holds_deferred(R);
    size_t n = R->nsends;
    for (uint32_t v = 0; v < R->p->n; v++) {
        n += gets_task(R, v, hold);
    }
    if (!reserve_tasks(R, n)) {
        return false;
    }
    size_t k = 0;
    for (size_t i = 0; i < R->p->n; i++) {
        uint32_t v = R->p->by_name[i];
        if (!gets_task(R, v, hold)) {
            continue;
        }
        sst_task *t = &R->tasks[k++];
        init_task(R, t, v);
        t->inbox = R->inbox[v]; /* ownership moves to the task */
        R->inbox[v] = NULL;
        R->active[v] = false;
        t->send_index = UINT64_MAX; /* a vertex task */
    }
    for (size_t s = 0; s < R->nsends; s++) {
        sst_task *t = &R->tasks[k++];
        init_task(R, t, R->sends[s].vertex);
        t->input = R->sends[s].payload;
        t->send_index = s;
        if (R->sends[s].timeout != NULL) { /* the Send's own: moved into the task */
            sst__task_ext *x = sst__task_ext_of(t);
            if (x == NULL) {
                return false; /* make_tasks fails on OOM only */
            }
            x->own_timeout = *R->sends[s].timeout;
            t->timeout = &x->own_timeout;
            sst__free(R->sends[s].timeout);
            R->sends[s].timeout = NULL;
        }
    }
    R->nsends = 0;
    R->ntasks = k;
    if (R->resume_map != NULL && sst_object_len(R->resume_map) > 0) {
        for (size_t i = 0; i < k; i++) {
            R->tasks[i].resume = sst_object_get(R->resume_map, sst_task_id(&R->tasks[i]));
        }
    }
    return true;
}

/*
 * Adds "deferred": the names of the deferred vertices whose activation waits
 * (@p hold: holds_deferred, or true when the tasks were already made), to
 * the resume point @p rp (takes), when there are any.
 */
static sst_value *add_deferred(const run *R, sst_value *rp, bool hold, sst_error *err) {
    sst_value *names = NULL;
    for (size_t i = 0; rp != NULL && hold && i < R->p->n; i++) {
        const sst__vertex *v = &R->p->v[R->p->by_name[i]];
        if (!v->defer || !R->active[R->p->by_name[i]]) {
            continue;
        }
        sst_value *name = sst_string_newn(v->name, v->name_len, err);
        names = name != NULL
                    ? sst_array_push_take(names != NULL ? names : sst_array_empty(), name, err)
                    : (sst_value_unref(names), NULL);
        if (names == NULL) {
            sst_value_unref(rp);
            return NULL;
        }
    }
    return names != NULL ? sst_object_set_take(rp, "deferred", names, err) : rp;
}

/* Reads a resume point's "deferred" names back into the routing state. */
static bool restore_deferred(run *R, const sst_value *rp, sst_error *err) {
    const sst_value *names = sst_object_get(rp, "deferred");
    for (size_t i = 0; i < sst_array_len(names); i++) {
        const sst_value *n = sst_array_get(names, i);
        size_t v = sst_is_string(n) ? sst__pregel_find(R->p, sst_string_cstr(n), sst_string_len(n))
                                    : SIZE_MAX;
        if (v == SIZE_MAX) {
            sst__error(err, SST_EINVAL, "resume point: unknown deferred vertex '%s'",
                       sst_is_string(n) ? sst_string_cstr(n) : "(not a string)");
            return false;
        }
        R->active[v] = true;
    }
    return true;
}

/*
 * The next superstep's tasks as a resume point, without consuming the
 * routing state (make_tasks does that): for checkpoints after a commit.
 */
static sst_value *next_resume_point(run *R, sst_error *err) {
    sst_value *tasks = sst_array_empty();
    sst_task t;
    bool hold = holds_deferred(R);
    for (size_t i = 0; i < R->p->n + R->nsends && tasks != NULL; i++) {
        bool send = i >= R->p->n;
        uint32_t v = send ? R->sends[i - R->p->n].vertex : R->p->by_name[i];
        if (!send && !gets_task(R, v, hold)) {
            continue;
        }
        init_task(R, &t, v);
        t.superstep = R->superstep + 1;
        t.send_index = send ? i - R->p->n : UINT64_MAX;
        t.input = send ? R->sends[i - R->p->n].payload : NULL;
        t.inbox = send ? NULL : R->inbox[v];
        if (send && R->sends[i - R->p->n].timeout != NULL) {
            t.timeout = R->sends[i - R->p->n].timeout; /* borrowed for the descriptor */
        }
        sst_value *d = sst__task_descriptor(&t, err); /* borrows input and inbox */
        tasks = d != NULL ? sst_array_push_take(tasks, d, err) : (sst_value_unref(tasks), NULL);
    }
    sst_value *step = sst_int_new((int64_t)R->superstep + 1, err);
    sst_value *rp =
        step != NULL ? sst_object_set_take(sst_object_empty(), "superstep", step, err) : NULL;
    if (rp == NULL || tasks == NULL) {
        sst_value_unref(rp);
        sst_value_unref(tasks);
        return NULL;
    }
    rp = sst_object_set_take(rp, "tasks", tasks, err);
    rp = rp != NULL ? sst_object_set_take(rp, "pending", sst_array_empty(), err) : NULL;
    rp = rp != NULL ? sst_object_set_take(rp, "resume", sst_object_empty(), err) : NULL;
    return add_deferred(R, rp, hold, err);
}

/* The pending write of @p pending whose "task" (or, @p origin, "origin"."task") is @p id. */
static const sst_value *pending_for(const sst_value *pending, const char *id, bool origin) {
    for (size_t j = 0; j < sst_array_len(pending); j++) {
        const sst_value *w = sst_array_get(pending, j);
        const sst_value *o = origin ? sst_object_get(w, "origin") : w;
        const char *tid = sst_string_cstr(sst_object_get(o, "task"));
        if (tid != NULL && strcmp(tid, id) == 0) {
            return w;
        }
    }
    return NULL;
}

/*
 * Gives the resumed task @p t its pending write: a task whose error handler took
 * over becomes the handler's task again (run unless it had finished); a task
 * that had succeeded gets its writes back and is not run.
 */
static bool restore_task(run *R, sst_task *t, const sst_value *pending, sst_error *err) {
    const sst_value *w = pending_for(pending, sst_task_id(t), true);
    if (w != NULL && sst__task_restore_handler(t, w, err) != SST_OK) {
        return false;
    }
    const char *id = sst_task_id(t);
    t->resume = R->resume_map != NULL ? sst_object_get(R->resume_map, id) : NULL;
    if (w == NULL) {
        w = pending_for(pending, id, false);
    } else if (sst_object_get(w, "done") != NULL) {
        w = NULL; /* the handler runs */
    }
    return w == NULL || sst__task_restore(t, w, err) == SST_OK;
}

/*
 * The first superstep of a resumed run: its tasks from the resume point,
 * with the writes of the tasks that had already succeeded restored.
 */
static bool make_tasks_from_resume(run *R, const sst_value *rp, sst_error *err) {
    const sst_value *tasks = sst_object_get(rp, "tasks");
    const sst_value *pending = sst_object_get(rp, "pending");
    if (!sst_is_array(tasks) || (pending != NULL && !sst_is_array(pending))) {
        sst__error(err, SST_ETYPE, "resume point: 'tasks' and 'pending' must be arrays");
        return false;
    }
    size_t n = sst_array_len(tasks);
    if (!reserve_tasks(R, n)) {
        sst__enomem(err);
        return false;
    }
    if (!restore_deferred(R, rp, err)) {
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        sst_task *t = &R->tasks[i];
        init_task(R, t, 0);
        R->ntasks = i + 1;
        if (sst__task_from_descriptor(t, R->p, sst_array_get(tasks, i), err) != SST_OK) {
            return false;
        }
        if (!restore_task(R, t, pending, err)) {
            return false;
        }
    }
    return true;
}

/* ---- retries ---- */

static bool retryable(const sst_task *t) {
    if (t->code == SST_OK || t->code == SST_EINTERRUPT || t->code == SST_ENOMEM ||
        t->step_expired) {
        return false;
    }
    const sst_retry_policy *p = &t->p->v[t->vertex].retry;
    return t->attempt < p->max_attempts && sst__retry_wanted(p, t);
}

/* Schedules a retry for every task that failed and may retry. */
static void schedule_retries(run *R) {
    for (size_t i = 0; i < R->ntasks; i++) {
        sst_task *t = &R->tasks[i];
        if (t->retry_pending || !retryable(t)) {
            continue;
        }
        const sst_retry_policy *p = &R->p->v[t->vertex].retry;
        double j = (double)(next_rand(R) >> 11) / 9007199254740992.0;
        uint64_t delay = sst_retry_policy_delay_ms(p, t->attempt, j);
        if (R->o->on_retry != NULL) {
            R->o->on_retry(sst_task_vertex(t), t->attempt, t->error, delay, R->o->user_data);
        }
        t->due_ms = R->vclock_ms + delay;
        t->retry_pending = true;
        R->r->retries++;
    }
}

/* Runs the @p n tasks of the batch, then retry rounds until nothing is left to retry. */
static void run_with_retries(run *R, size_t n) {
    sst__pool_run(R->e, R->batch, n);
    R->r->tasks += n;
    for (;;) {
        schedule_retries(R);
        uint64_t due = UINT64_MAX;
        for (size_t i = 0; i < R->ntasks; i++) {
            if (R->tasks[i].retry_pending && R->tasks[i].due_ms < due) {
                due = R->tasks[i].due_ms;
            }
        }
        if (due == UINT64_MAX) {
            return;
        }
        if (due > R->vclock_ms) {
            sst_sleep_fn sleep = R->o->sleep != NULL ? R->o->sleep : default_sleep;
            sleep(due - R->vclock_ms, R->o->user_data);
            R->vclock_ms = due;
        }
        size_t k = 0;
        for (size_t i = 0; i < R->ntasks; i++) {
            sst_task *t = &R->tasks[i];
            if (t->retry_pending && t->due_ms <= R->vclock_ms) {
                t->retry_pending = false;
                t->attempt++;
                R->batch[k++] = t;
            }
        }
        sst__pool_run(R->e, R->batch, k);
        R->r->tasks += k;
    }
}

/*
 * Runs every task (first attempts and retries); then the tasks that failed for
 * good and whose vertex has an error handler become tasks of their handler,
 * which run (with their own retries) in the same superstep.
 */
static void run_superstep_tasks(run *R) {
    double st = R->o->step_timeout_s;
    uint64_t deadline = st > 0 ? sst__now_ns() + (uint64_t)(st * 1e9) : 0;
    for (size_t i = 0; i < R->ntasks; i++) {
        R->tasks[i].attempt = 1;
        if (deadline != 0 && sst__task_ext_of(&R->tasks[i]) != NULL) {
            R->tasks[i].ext->step_deadline_ns = deadline;
        }
        R->batch[i] = &R->tasks[i];
    }
    run_with_retries(R, R->ntasks);
    size_t n = 0;
    for (size_t i = 0; i < R->ntasks; i++) {
        sst_task *t = &R->tasks[i];
        if (sst__task_handled(t) && sst__task_to_handler(t) == SST_OK) {
            R->batch[n++] = t;
        }
    }
    if (n > 0) {
        run_with_retries(R, n);
    }
}

/* ---- outcomes ---- */

static sst_value *set_str(sst_value *o, const char *key, const char *s, sst_error *err) {
    sst_value *v = o != NULL ? sst_string_new(s, err) : NULL;
    return v != NULL ? sst_object_set_take(o, key, v, err) : (sst_value_unref(o), NULL);
}

/* The successful tasks' writes, which were not committed. */
static sst_code collect_pending(run *R, sst_error *err) {
    sst_value *list = sst_array_empty();
    for (size_t i = 0; i < R->ntasks && list != NULL; i++) {
        /* An error handler's task is kept whatever its outcome: a resume runs the
         * handler again instead of the node that failed (LangGraph's ERROR_SOURCE_NODE). */
        if (R->tasks[i].code != SST_OK && R->tasks[i].origin == SST__NO_VERTEX) {
            continue;
        }
        sst_value *e = sst__task_writes(&R->tasks[i], err);
        list = e != NULL ? sst_array_push_take(list, e, err) : (sst_value_unref(list), NULL);
    }
    if (list == NULL) {
        return sst__code(err);
    }
    sst_value_unref(R->r->pending);
    R->r->pending = list;
    return SST_OK;
}

/* Adds "calls": the results of the calls of earlier runs and of this superstep, if any. */
static sst_value *add_calls(run *R, sst_value *rp, sst_error *err) {
    if (rp == NULL || (sst_array_len(R->calls.stored_list) == 0 && R->calls.done == NULL)) {
        return rp;
    }
    sst_value *all = sst__run_calls_list(&R->calls, err);
    return all != NULL ? sst_object_set_take(rp, "calls", all, err) : (sst_value_unref(rp), NULL);
}

/*
 * Records where the run can go on: the current tasks (the superstep that did
 * not commit, or the next one), the pending writes and the resume values.
 */
static sst_code set_resume_point(run *R, bool with_pending, sst_error *err) {
    sst_value *tasks = sst_array_empty();
    for (size_t i = 0; i < R->ntasks && tasks != NULL; i++) {
        sst_value *d = sst__task_descriptor(&R->tasks[i], err);
        tasks = d != NULL ? sst_array_push_take(tasks, d, err) : (sst_value_unref(tasks), NULL);
    }
    sst_value *step = sst_int_new((int64_t)R->superstep, err);
    sst_value *rp =
        step != NULL ? sst_object_set_take(sst_object_empty(), "superstep", step, err) : NULL;
    if (rp != NULL && tasks != NULL) {
        rp = sst_object_set_take(rp, "tasks", tasks, err);
    } else {
        sst_value_unref(tasks);
        sst_value_unref(rp);
        rp = NULL;
    }
    if (rp != NULL) {
        rp = sst_object_set_take(
            rp, "pending", sst_value_ref(with_pending ? R->r->pending : sst_array_empty()), err);
    }
    if (rp != NULL) {
        rp = sst_object_set_take(
            rp, "resume", sst_value_ref(R->resume_map != NULL ? R->resume_map : sst_object_empty()),
            err);
    }
    rp = add_calls(R, rp, err);
    rp = add_deferred(R, rp, true, err); /* the tasks are made: what is still active waits */
    if (rp == NULL) {
        return sst__code(err);
    }
    sst_value_unref(R->r->resume_point);
    R->r->resume_point = rp;
    return SST_OK;
}

static sst_code collect_interrupts(run *R, sst_error *err) {
    sst_value *list = sst_array_empty();
    for (size_t i = 0; i < R->ntasks && list != NULL; i++) {
        const sst_task *t = &R->tasks[i];
        if (t->code != SST_EINTERRUPT) {
            continue;
        }
        sst_value *o = set_str(sst_object_empty(), "vertex", sst_task_vertex(t), err);
        o = set_str(o, "task", sst_task_id(t), err);
        if (t->interrupt != NULL) {
            o = o != NULL ? sst_object_set_take(o, "value", sst_value_ref(t->interrupt), err)
                          : NULL;
            list = o != NULL ? sst_array_push_take(list, o, err) : (sst_value_unref(list), NULL);
        } else {
            sst_value_unref(o); /* only its calls interrupted */
        }
        list = list != NULL ? sst__call_interrupts(t, sst_task_id(t), list, err) : NULL;
    }
    if (list == NULL) {
        return sst__code(err);
    }
    sst_value_unref(R->r->interrupts);
    R->r->interrupts = list;
    return SST_OK;
}

static void fail_run(run *R, const char *vertex, sst_code code, const char *fmt, ...)
    SST_PRINTF(4, 5);

static void fail_run(run *R, const char *vertex, sst_code code, const char *fmt, ...) {
    R->r->status = SST_RUN_FAILED;
    va_list ap;
    va_start(ap, fmt);
    sst__verror(&R->r->error, code, fmt, ap);
    va_end(ap);
    sst__free(R->r->error_vertex);
    R->r->error_vertex = vertex != NULL ? sst__strndup(vertex, strlen(vertex)) : NULL;
}

/* Queues a Send for the next superstep. false on OOM. */
static bool queue_send(run *R, uint32_t vertex, const sst_value *payload,
                       const sst_timeout_policy *timeout) {
    if (R->nsends == R->sends_cap) {
        size_t cap = R->sends_cap ? R->sends_cap * 2 : 16;
        pending_send *s = sst__realloc(R->sends, cap * sizeof *s);
        if (s == NULL) {
            return false;
        }
        R->sends = s;
        R->sends_cap = cap;
    }
    R->sends[R->nsends].vertex = vertex;
    R->sends[R->nsends].payload = sst_value_ref(payload);
    R->sends[R->nsends].timeout = NULL;
    if (timeout != NULL) {
        R->sends[R->nsends].timeout = sst__malloc(sizeof *timeout);
        if (R->sends[R->nsends].timeout == NULL) {
            sst_value_unref(R->sends[R->nsends].payload);
            return false;
        }
        *R->sends[R->nsends].timeout = *timeout;
    }
    R->nsends++;
    return true;
}

/* Routes one task's outbox into the next superstep. false (run failed) on error. */
static bool route(run *R, const sst_task *t) {
    if (!t->halt) {
        R->active[t->vertex] = true; /* classic Pregel: active until it votes to halt */
    }
    for (size_t i = 0; i < t->nout; i++) {
        const sst__out *o = &t->out[i];
        if (o->kind == SST__OUT_ACTIVATE) {
            R->active[o->vertex] = true;
        } else if (o->kind == SST__OUT_SEND) {
            if (!queue_send(R, o->vertex, o->value, sst__out_timeout(t, i))) {
                fail_run(R, NULL, SST_ENOMEM, "out of memory routing sends");
                return false;
            }
        } else {
            const sst__vertex *v = &R->p->v[o->vertex];
            sst_value *box = R->inbox[o->vertex];
            sst_error err;
            sst_error_clear(&err);
            if (v->combiner != NULL && box != NULL) {
                /* Keep a single combined message. */
                sst_value *acc = sst_value_ref(sst_array_get(box, 0));
                acc = v->combiner(v->combiner_user_data, acc, o->value, &err);
                if (acc == NULL) {
                    sst__error_unless_set(&err, SST_ETASK, "it returned no message");
                    fail_run(R, v->name, err.code, "combiner of vertex '%s' failed: %s", v->name,
                             err.msg);
                    return false;
                }
                box = sst_array_set_take(box, 0, acc, &err);
            } else {
                box = sst_array_push_take(box != NULL ? box : sst_array_empty(),
                                          sst_value_ref(o->value), &err);
            }
            R->inbox[o->vertex] = box;
            if (box == NULL) {
                fail_run(R, v->name, err.code, "routing messages to '%s': %s", v->name, err.msg);
                return false;
            }
        }
    }
    return true;
}

/* Applies the tasks' deltas in task order to the state; counts their fields in *fields.
 * false: a reducer refused them and the run stops with nothing committed. */
static bool apply_deltas(run *R, size_t *fields) {
    const sst_value *stack[32];
    const sst_value **deltas = R->ntasks <= 32 ? stack : sst__malloc(R->ntasks * sizeof *deltas);
    if (deltas == NULL) {
        fail_run(R, NULL, SST_ENOMEM, "out of memory committing superstep %llu",
                 (unsigned long long)R->superstep);
        return false;
    }
    size_t n = 0;
    *fields = 0;
    for (size_t i = 0; i < R->ntasks; i++) {
        if (R->tasks[i].delta != NULL) {
            deltas[n++] = R->tasks[i].delta;
            *fields += sst_object_len(R->tasks[i].delta);
        }
    }
    sst_error err;
    sst_value *next = sst_schema_apply(R->p->schema, sst_value_ref(R->state), deltas, n, &err);
    if (deltas != stack) {
        sst__free(deltas);
    }
    if (next == NULL) {
        /* A reducer refused the writes (type error, unique conflict): nothing is committed. */
        collect_pending(R, NULL);
        set_resume_point(R, true, NULL);
        fail_run(R, NULL, err.code, "superstep %llu: %s", (unsigned long long)R->superstep,
                 err.msg);
        return false;
    }
    sst_value_unref(R->state);
    R->state = next;
    return true;
}

/* Calls the on_superstep hook with the committed superstep's stats. false: the run stops. */
static bool report_superstep(run *R, uint64_t started_ns, size_t fields) {
    size_t retries = 0;
    for (size_t i = 0; i < R->ntasks; i++) {
        const sst_task *t = &R->tasks[i];
        R->stats[i].vertex = sst_task_vertex(t);
        R->stats[i].task_id = sst_task_id(t);
        R->stats[i].delta = t->delta != NULL ? t->delta : sst_object_empty();
        R->stats[i].raw_delta = t->raw_delta != NULL ? t->raw_delta : R->stats[i].delta;
        R->stats[i].events = t->events != NULL ? t->events : sst_array_empty();
        R->stats[i].duration_ns = t->duration_ns;
        R->stats[i].attempts = t->attempt;
        R->stats[i].cached = t->cached;
        R->stats[i].failure = t->ext != NULL && t->ext->failed_now && t->origin != SST__NO_VERTEX
                                  ? t->ext->failure
                                  : NULL;
        R->stats[i].send_index = t->send_index;
        retries += t->attempt > 0 ? t->attempt - 1 : 0;
    }
    sst_superstep_stats st;
    st.superstep = R->superstep;
    st.tasks = R->ntasks;
    st.retries = retries;
    st.delta_fields = fields;
    st.wall_ns = sst__now_ns() - started_ns;
    st.task = R->stats;
    st.state = R->state;
    st.next = NULL;
    sst_value *next_rp = NULL;
    if (R->o->want_next) {
        sst_error nerr;
        next_rp = next_resume_point(R, &nerr);
        if (next_rp == NULL) {
            fail_run(R, NULL, SST_ENOMEM, "out of memory after superstep %llu",
                     (unsigned long long)R->superstep);
            return false;
        }
        st.next = next_rp;
    }
    sst_code rc = R->o->on_superstep(&st, R->o->user_data);
    sst_value_unref(next_rp);
    if (rc != SST_OK) {
        R->hook_stop = rc; /* the loop stops before the next superstep */
    }
    return true;
}

/* Applies every delta in task order and routes the outboxes. false: the run stops. */
static bool commit(run *R, uint64_t started_ns) {
    size_t fields;
    if (!apply_deltas(R, &fields)) {
        return false;
    }
    for (size_t i = 0; i < R->ntasks; i++) {
        if (!route(R, &R->tasks[i])) {
            return false;
        }
    }
    R->r->supersteps = R->superstep + 1;
    if (R->p->commit_fn != NULL) {
        struct sst_commit c = {R};
        sst_code rc = R->p->commit_fn(&c, R->p->commit_user_data);
        if (rc != SST_OK) {
            fail_run(R, NULL, rc, "commit hook failed after superstep %llu",
                     (unsigned long long)R->superstep);
            return false;
        }
    }
    return R->o->on_superstep == NULL || report_superstep(R, started_ns, fields);
}

/* Decides how the superstep ends. true: committed, go on. */
static bool finish_superstep(run *R, uint64_t started_ns) {
    const sst_task *failed = NULL;
    bool interrupted = false;
    for (size_t i = 0; i < R->ntasks; i++) {
        const sst_task *t = &R->tasks[i];
        if (t->code == SST_EINTERRUPT) {
            interrupted = true;
        } else if (t->code != SST_OK && failed == NULL) {
            failed = t;
        }
    }
    if (failed != NULL) {
        collect_pending(R, NULL);
        set_resume_point(R, true, NULL);
        fail_run(R, sst_task_vertex(failed), failed->code,
                 "vertex '%s' failed after %u attempt%s: %s", sst_task_vertex(failed),
                 failed->attempt, failed->attempt == 1 ? "" : "s",
                 failed->error != NULL ? failed->error->msg : sst_strerror(failed->code));
        const sst_value *detail = failed->ext != NULL ? failed->ext->detail : NULL;
        R->r->error_detail = detail != NULL ? sst_value_ref(detail) : NULL;
        return false;
    }
    if (interrupted) {
        R->r->status = SST_RUN_INTERRUPTED;
        sst_error err;
        sst_error_clear(&err);
        if (collect_pending(R, &err) != SST_OK || collect_interrupts(R, &err) != SST_OK ||
            set_resume_point(R, true, &err) != SST_OK) {
            fail_run(R, NULL, err.code, "recording the interrupt: %s", err.msg);
        }
        return false;
    }
    return commit(R, started_ns);
}

/* ---- the run ---- */

static void run_free(run *R) {
    destroy_tasks(R);
    for (size_t i = 0; R->inbox != NULL && i < R->p->n; i++) {
        sst_value_unref(R->inbox[i]);
    }
    for (size_t i = 0; i < R->nsends; i++) {
        sst_value_unref(R->sends[i].payload);
        sst__free(R->sends[i].timeout);
    }
    sst__free(R->active);
    sst__free(R->inbox);
    sst__free(R->sends);
    sst__free(R->tasks);
    sst__free(R->batch);
    sst__free(R->stats);
    sst_value_unref(R->state);
    sst__run_calls_free(&R->calls);
}

void sst_run_result_free(sst_run_result *r) {
    if (r == NULL) {
        return;
    }
    sst_value_unref(r->state);
    sst__free(r->error_vertex);
    sst_value_unref(r->error_detail);
    sst_value_unref(r->interrupts);
    sst_value_unref(r->pending);
    sst_value_unref(r->resume_point);
    sst__free(r);
}

/* The initial state: opts->state or the defaults, then the input as step -1. */
static sst_value *initial_state(const sst_pregel *p, const sst_run_opts *o, sst_error *err) {
    sst_value *state =
        o->state != NULL ? sst_value_ref(o->state) : sst_schema_initial_state(p->schema, err);
    if (state == NULL || o->input == NULL || o->resume != NULL) {
        return state;
    }
    sst_value *input = sst_schema_prepare_delta(p->schema, sst_value_ref(o->input), err);
    if (input == NULL) {
        sst_value_unref(state);
        sst__error_prefix(err, "input");
        return NULL;
    }
    const sst_value *deltas[] = {input};
    state = sst_schema_apply(p->schema, state, deltas, 1, err);
    sst_value_unref(input);
    if (state == NULL) {
        sst__error_prefix(err, "input");
    }
    return state;
}

/* The routing of superstep 0: start vertices and initial Sends. */
static bool initial_routing(run *R, const sst_run_opts *o, sst_error *err) {
    for (size_t i = 0; i < o->n_start; i++) {
        const char *name = o->start[i];
        if (name == NULL || !activate_vertex(R, name)) {
            sst__error(err, SST_EINVAL, "engine run: unknown start vertex '%s'",
                       name != NULL ? name : "(NULL)");
            return false;
        }
    }
    for (size_t i = 0; i < sst_array_len(o->sends); i++) {
        const sst_value *s = sst_array_get(o->sends, i);
        const sst_value *to = sst_object_get(s, "to");
        size_t v = sst_is_string(to)
                       ? sst__pregel_find(R->p, sst_string_cstr(to), sst_string_len(to))
                       : SIZE_MAX;
        if (v == SIZE_MAX) {
            sst__error(err, SST_EINVAL, "engine run: initial Send to unknown vertex '%s'",
                       sst_is_string(to) ? sst_string_cstr(to) : "(not a string)");
            return false;
        }
        const sst_value *in = sst_object_get(s, "input");
        if (!queue_send(R, (uint32_t)v, in != NULL ? in : sst_null(), NULL)) {
            sst__enomem(err);
            return false;
        }
    }
    return true;
}

/* Asks the before_superstep hook; false: the run stops before this superstep. */
static bool before_superstep(run *R) {
    if (R->o->before_superstep == NULL) {
        return true;
    }
    const char *stack[16];
    const char **names = R->ntasks <= 16 ? stack : sst__malloc(R->ntasks * sizeof *names);
    if (names == NULL) {
        fail_run(R, NULL, SST_ENOMEM, "out of memory before superstep %llu",
                 (unsigned long long)R->superstep);
        return false;
    }
    for (size_t i = 0; i < R->ntasks; i++) {
        names[i] = sst_task_vertex(&R->tasks[i]);
    }
    sst_code rc = R->o->before_superstep(R->superstep, names, R->ntasks, R->o->user_data);
    if (names != stack) {
        sst__free(names);
    }
    if (rc == SST_OK) {
        return true;
    }
    set_resume_point(R, false, NULL);
    if (rc == SST_EINTERRUPT) {
        R->r->status = SST_RUN_INTERRUPTED;
    } else if (rc == SST_ECANCELLED) {
        fail_run(R, NULL, rc, "the run was cancelled before superstep %llu",
                 (unsigned long long)R->superstep);
    } else {
        fail_run(R, NULL, rc, "stopped by the before_superstep hook at superstep %llu",
                 (unsigned long long)R->superstep);
    }
    return false;
}

static void stop_after_hook(run *R) {
    /* The next superstep's tasks are the resume point. */
    R->superstep++;
    if (!make_tasks(R)) {
        fail_run(R, NULL, SST_ENOMEM, "out of memory after superstep %llu",
                 (unsigned long long)R->superstep - 1);
        return;
    }
    set_resume_point(R, false, NULL);
    if (R->hook_stop == SST_EINTERRUPT) {
        R->r->status = SST_RUN_INTERRUPTED;
    } else {
        fail_run(R, NULL, R->hook_stop, "stopped by the on_superstep hook after superstep %llu",
                 (unsigned long long)R->superstep - 1);
    }
}

/* Reads opts->resume (borrowed) into the superstep to run and its resume values. */
static bool read_resume_point(run *R, const sst_value *resume, sst_error *err) {
    const sst_value *step = sst_object_get(resume, "superstep");
    const sst_value *map = sst_object_get(resume, "resume");
    if (!sst_is_int(step) || sst_int_value(step) < 0 || (map != NULL && !sst_is_object(map))) {
        sst__error(err, SST_ETYPE,
                   "resume point: needs 'superstep' (an integer) and an optional 'resume' "
                   "object");
        return false;
    }
    const sst_value *calls = sst_object_get(resume, "calls");
    if (calls != NULL && !sst_is_array(calls)) {
        sst__error(err, SST_ETYPE, "resume point: 'calls' must be a list");
        return false;
    }
    R->superstep = (uint64_t)sst_int_value(step);
    R->resume_map = map;
    R->calls.resume_map = map;
    return sst_array_len(calls) == 0 || sst__run_calls_load(&R->calls, calls, err);
}

/* Sets up @p R for a run: the result, the state and the first superstep's routing or tasks.
 * false with @p err set: everything @p R held is freed. */
static bool run_init(run *R, sst_engine *e, const sst_pregel *p, const sst_run_opts *opts,
                     sst_error *err) {
    memset(R, 0, sizeof *R);
    R->e = e;
    sst__run_calls_init(&R->calls, e);
    R->p = p;
    R->o = opts;
    R->r = sst__calloc(1, sizeof *R->r);
    R->active = sst__calloc(p->n, sizeof *R->active);
    R->inbox = sst__calloc(p->n, sizeof *R->inbox);
    if (R->r == NULL || R->active == NULL || R->inbox == NULL) {
        sst__free(R->r);
        R->r = NULL;
        run_free(R);
        sst__enomem(err);
        return false;
    }
    R->r->interrupts = sst_array_empty();
    R->r->pending = sst_array_empty();
    R->r->resume_point = sst_null();
    bool ok = opts->resume == NULL || read_resume_point(R, opts->resume, err);
    R->state = ok ? initial_state(p, opts, err) : NULL;
    ok = R->state != NULL;
    if (ok && opts->resume != NULL) {
        ok = make_tasks_from_resume(R, opts->resume, err);
    } else if (ok) {
        R->superstep = opts->first_superstep;
        ok = initial_routing(R, opts, err);
    }
    if (!ok) {
        sst_run_result_free(R->r);
        run_free(R);
        return false;
    }
    R->rng = opts->jitter_seed;
    if (R->rng == 0 && sst__random_bytes(&R->rng, sizeof R->rng, NULL) != SST_OK) {
        R->rng = sst__now_ns();
    }
    R->rng |= 1; /* xorshift needs a non-zero state */
    return true;
}

/* Runs supersteps until no vertex is active or the run stops; the outcome is in R->r. */
static void run_supersteps(run *R) {
    const sst_run_opts *opts = R->o;
    bool first = true;
    for (;;) {
        if (!(first && opts->resume != NULL) && !make_tasks(R)) {
            fail_run(R, NULL, SST_ENOMEM, "out of memory making the tasks of superstep %llu",
                     (unsigned long long)R->superstep);
            break;
        }
        first = false;
        if (R->ntasks == 0) {
            break; /* no vertex active: done */
        }
        if (R->superstep >= opts->max_supersteps) {
            set_resume_point(R, false, NULL);
            fail_run(R, NULL, SST_ELIMIT,
                     "recursion limit of %llu supersteps reached with %zu task%s still to run "
                     "(raise max_supersteps / recursion_limit if the run is meant to be longer)",
                     (unsigned long long)opts->max_supersteps, R->ntasks,
                     R->ntasks == 1 ? "" : "s");
            break;
        }
        if (!before_superstep(R)) {
            break;
        }
        uint64_t started = sst__now_ns();
        run_superstep_tasks(R);
        if (!finish_superstep(R, started)) {
            break;
        }
        destroy_tasks(R);
        /* The superstep committed: its calls' results are no longer pending. */
        sst__run_calls_reset(&R->calls);
        if (R->hook_stop != SST_OK) {
            stop_after_hook(R);
            break;
        }
        R->superstep++;
    }
}

sst_run_result *sst_engine_run(sst_engine *e, const sst_pregel *p, const sst_run_opts *opts,
                               sst_error *err) {
    sst_run_opts defaults;
    if (opts == NULL) {
        sst_run_opts_init(&defaults);
        opts = &defaults;
    }
    if (e == NULL || p == NULL) {
        sst__error(err, SST_EINVAL, "engine run: NULL %s", e == NULL ? "engine" : "vertex set");
        return NULL;
    }
    if (e->running) {
        sst__error(err, SST_EINVAL, "engine run: this engine is already running a run");
        return NULL;
    }
    run R;
    if (!run_init(&R, e, p, opts, err)) {
        return NULL;
    }
    e->running = true;
    R.r->status = SST_RUN_COMPLETED;
    R.r->supersteps = R.superstep;
    run_supersteps(&R);
    e->running = false;
    R.r->state = R.state;
    R.state = NULL;
    sst_run_result *result = R.r;
    run_free(&R);
    return result;
}

/* ---- result accessors ---- */

sst_run_status sst_run_result_status(const sst_run_result *r) {
    return r->status;
}

const char *sst_run_status_name(sst_run_status s) {
    switch (s) {
        case SST_RUN_COMPLETED:
            return "completed";
        case SST_RUN_INTERRUPTED:
            return "interrupted";
        case SST_RUN_FAILED:
            return "error";
    }
    return "unknown";
}

const sst_value *sst_run_result_state(const sst_run_result *r) {
    return r->state;
}

uint64_t sst_run_result_supersteps(const sst_run_result *r) {
    return r->supersteps;
}

const sst_error *sst_run_result_error(const sst_run_result *r) {
    return &r->error;
}

const sst_value *sst_run_result_error_detail(const sst_run_result *r) {
    return r->error_detail;
}

const char *sst_run_result_error_vertex(const sst_run_result *r) {
    return r->error_vertex;
}

const sst_value *sst_run_result_interrupts(const sst_run_result *r) {
    return r->interrupts;
}

const sst_value *sst_run_result_pending(const sst_run_result *r) {
    return r->pending;
}

const sst_value *sst_run_result_resume_point(const sst_run_result *r) {
    return r->resume_point;
}

uint64_t sst_run_result_tasks(const sst_run_result *r) {
    return r->tasks;
}

uint64_t sst_run_result_retries(const sst_run_result *r) {
    return r->retries;
}
