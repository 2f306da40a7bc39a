/* SPDX-License-Identifier: MIT */
/*
 * Private parts of the Pregel engine: the compiled vertex set, tasks and
 * their outboxes, the worker pool and the run. See include/superstep/pregel.h
 * for the model and docs/pregel.md for the design.
 *
 * Lock order: the pool mutex is the only lock; nothing else is locked while
 * it is held, and compute functions never run under it.
 */
#ifndef SUPERSTEP_PREGEL_INT_H
#define SUPERSTEP_PREGEL_INT_H

#include <pthread.h>
#include <stdatomic.h>

#include "common.h"
#include "superstep/pregel.h"

#define SST__VERTEX_NAME_MAX 255

typedef struct sst__vertex {
    char *name; /* owned */
    size_t name_len;
    sst_compute_fn fn;
    void *user_data;
    sst_value *config; /* owned reference (null when none) */
    sst_retry_policy retry;
    sst_combine_fn combiner;
    void *combiner_user_data;
    bool defer; /* activations wait until nothing else is left to run */
    sst_timeout_policy timeout;
    sst_cache_policy cache;
    char *error_vertex; /* owned: the handler's name until the set is built, or NULL */
    uint32_t handler;   /* built: the vertex handling this one's failures, or SST__NO_VERTEX */
} sst__vertex;

#define SST__NO_VERTEX UINT32_MAX

struct sst_pregel_builder {
    const sst_schema *schema; /* borrowed */
    sst__vertex *v;           /* owned array */
    size_t n, cap;
    sst_commit_fn commit_fn;
    void *commit_user_data;
};

struct sst_pregel {
    const sst_schema *schema; /* borrowed */
    sst__vertex *v;           /* owned array, in the order added */
    size_t n;
    uint32_t *by_name; /* owned: vertex indexes sorted by name (task order) */
    uint32_t *index;   /* owned: open-addressing name index, vertex + 1 (0 = empty) */
    size_t index_cap;  /* power of two */
    sst_commit_fn commit_fn;
    void *commit_user_data;
};

/* The vertex called @p name, or SIZE_MAX. */
size_t sst__pregel_find(const sst_pregel *p, const char *name, size_t len);

typedef enum sst__out_kind { SST__OUT_ACTIVATE, SST__OUT_SEND, SST__OUT_MESSAGE } sst__out_kind;

/* One outbox entry of a task. */
typedef struct sst__out {
    uint32_t kind;    /* sst__out_kind */
    uint32_t vertex;  /* target */
    sst_value *value; /* owned: Send payload or message; NULL for activations */
} sst__out;

#define SST__OUT_INLINE 2

/* A Send's own timeout: for out entry `out` of the task (sst_task_send_timeout). */
typedef struct sst__timed_send {
    size_t out;
    sst_timeout_policy policy;
} sst__timed_send;

/*
 * What a task needs only under a policy (policies.c, cache.c), allocated on
 * first use (sst__task_ext_of) so that the tasks of a run without policies
 * stay small: a fan-out of 10 000 Sends makes 10 000 of them at once.
 */
typedef struct sst__task_ext {
    sst_timeout_policy own_timeout; /* the Send's timeout, when sst_task.timeout points here */
    uint64_t start_ns;              /* start of the current attempt (timeouts) */
    uint64_t progress_ns;           /* last progress (idle timeout); the task's thread only */
    uint64_t step_deadline_ns;      /* the superstep's deadline (step_timeout_s), or 0 */
    sst_value *detail;              /* owned: details of the current attempt's error, or NULL */
    sst_value *failure;             /* owned: what failed, for an error handler's task */
    bool failed_now;                /* the failure happened in this run (not a resumed one) */
    sst_value *cache_key;           /* owned: the key of the last cache lookup, or NULL */
    sst__timed_send *timed;         /* owned: the current attempt's Sends with a timeout */
    size_t ntimed, timedcap;
} sst__task_ext;

struct sst_task {
    /* Inputs, fixed when the task is made. */
    const sst_pregel *p;
    const sst_run_opts *ro;  /* borrowed: the run's options (run key, user data, cache) */
    const sst_value *state;  /* borrowed committed snapshot */
    sst_value *input;        /* owned Send payload, or NULL */
    sst_value *inbox;        /* owned array of messages, or NULL */
    const sst_value *resume; /* borrowed array of resume values, or NULL */
    uint64_t superstep;
    uint32_t vertex;
    unsigned attempt;
    uint64_t send_index; /* position among the superstep's Sends; UINT64_MAX: vertex task */
    char id_text[33];    /* the task id, made on first use ("" until then) */
    bool replayed;       /* outputs restored from pending writes: not run */
    bool keep_raw;       /* the run keeps raw deltas (sst_run_opts.keep_raw_deltas) */
    bool halt;
    bool timed;
    bool retry_pending;
    bool step_expired; /* failed for the superstep's deadline: not retried nor handled */
    bool cached;       /* the writes came from the cache */
    /* Outputs of the current attempt. */
    sst_value *delta;     /* owned object, or NULL */
    sst_value *raw_delta; /* owned: the delta before it was prepared (keep_raw), or NULL */
    uint64_t first_ns;    /* monotonic start of attempt 1 (timed tasks), 0: unknown */
    double first_wall;    /* its wall-clock time, computed on first use (0: not yet) */
    sst__out *out;        /* out_inline or an owned array */
    size_t nout, outcap;
    sst__out out_inline[SST__OUT_INLINE];
    sst_code code;        /* SST_OK, SST_EINTERRUPT or an error */
    sst_code out_error;   /* first failed outbox call, turned into a task failure */
    sst_error *error;     /* owned, set on failure */
    sst_value *interrupt; /* owned interrupt value */
    sst_value *events;    /* owned array of emitted custom events, or NULL */
    uint64_t duration_ns; /* measured only when timed (a stats hook wants it) */
    uint64_t due_ms;      /* virtual time of the next retry */
    /* Policies (policies.c). */
    const sst_timeout_policy *timeout; /* the vertex's or ext->own_timeout; NULL: none */
    uint32_t origin;    /* the vertex whose failure this task handles, or SST__NO_VERTEX */
    sst__task_ext *ext; /* owned, or NULL until a policy needs it */
    /* Calls (call.c). */
    struct sst__run_calls *rc; /* the run's call registry (shared by its tasks) */
    sst_call *self;            /* the call this task runs, or NULL for a vertex's task */
    sst_call *calls;           /* owned: the calls this attempt started, in order */
    sst_call *calls_tail;
    uint64_t ncalls; /* calls started by this attempt (their positions) */
    bool bubbled;    /* a call of this attempt interrupted (its interrupt is the run's) */
};

/*
 * The calls of one run (call.c): what earlier runs stored (the resume
 * point's "calls") and what this run's calls returned, for replay and for
 * the next resume point.
 */
typedef struct sst__run_calls {
    sst_engine *e;
    pthread_mutex_t mu; /* guards done */
    const sst_value
        *stored_list;  /* borrowed: the resume point's "calls" [{"task", "name", "result"}] */
    sst_value *stored; /* owned: that list by id (id -> its entry), or NULL */
    sst_value *done;   /* owned: id -> {"task", "name", "result"} of this superstep, or NULL */
    const sst_value *resume_map; /* borrowed: task id -> resume values, or NULL */
} sst__run_calls;

/* A call: a task started by a task (the functional API's tasks). */
struct sst_call {
    sst_task task; /* the call's own task */
    sst_task *parent;
    char *name; /* owned */
    size_t name_len;
    sst_compute_fn fn;
    void *user_data;
    sst_call_opts opts;
    uint64_t index; /* position among the parent's calls */
    int state;      /* SST__CALL_*: under the engine's mutex once queued */
    bool queued;    /* in the engine's queue (under its mutex) */
    bool replayed;
    sst_value *result;       /* owned: set by sst_task_return */
    sst_call *qnext, *qprev; /* the engine's queue */
    sst_call *next;          /* the parent's list */
};

enum { SST__CALL_WAITING = 0, SST__CALL_RUNNING = 1, SST__CALL_DONE = 2 };

void sst__run_calls_init(sst__run_calls *rc, sst_engine *e);
void sst__run_calls_free(sst__run_calls *rc);
/* Drops what the registry holds (a superstep committed). */
void sst__run_calls_reset(sst__run_calls *rc);
/* Takes the resume point's "calls" (borrowed list) as the stored results. */
bool sst__run_calls_load(sst__run_calls *rc, const sst_value *list, sst_error *err);
/* The stored results and this superstep's, as a resume point's "calls" list (new). */
sst_value *sst__run_calls_list(const sst__run_calls *rc, sst_error *err);
/* Joins every call @p t started (after its compute function returned). */
void sst__task_join_calls(sst_task *t);
/* Frees the calls of @p t's attempt (joined already). */
void sst__task_free_calls(sst_task *t);
/* Appends the interrupts of @p t's interrupted calls (depth first, in order) to @p list,
 * each {"vertex": call name, "task": call id, "value", "owner": @p owner (the vertex task)}. */
sst_value *sst__call_interrupts(const sst_task *t, const char *owner, sst_value *list,
                                sst_error *err);
/* Runs one waiting call of the engine's queue on this thread; false when there was none. */
bool sst__pool_run_one_call(sst_engine *e);

/* Sets up @p t (zeroed first) as a task of @p vertex in @p superstep of the run @p ro,
 * reading @p state, in the call registry @p rc: no input, outbox inline, no timeout. */
void sst__task_init(sst_task *t, const sst_pregel *p, const sst_run_opts *ro,
                    const sst_value *state, uint64_t superstep, uint32_t vertex,
                    struct sst__run_calls *rc);
/* What a thread holds of the engine's batch hook (sst_batch_hook) while it runs a batch. */
typedef struct sst__held {
    const sst_batch_hook *hook; /* NULL: the engine has none */
    void *token;                /* what enter returned */
    bool in;                    /* enter was called and leave not yet */
} sst__held;

/* Takes the hook's resource when @p h has a hook and does not hold it yet. */
void sst__held_enter(sst__held *h);
/* Drops it when held (before the engine waits, and after a thread's last task). */
void sst__held_leave(sst__held *h);

/* Runs @p t once (its attempt number already set): clears the previous
 * attempt's outputs, calls the compute function, prepares the delta. */
void sst__task_run(sst_task *t);
/* The same on a thread holding @p h (NULL: none): the compute function runs with the
 * hook's resource taken, which is dropped before the task waits for its calls or the cache. */
void sst__task_run_held(sst_task *t, sst__held *h);
/* Frees the outputs of the current attempt. */
void sst__task_clear_outputs(sst_task *t);
/* Frees everything the task owns. */
void sst__task_destroy(sst_task *t);

/* ---- policies (policies.c) ---- */

bool sst__has_timeout(const sst_timeout_policy *p);
/* The task's policy state, made on first use; NULL when out of memory. */
sst__task_ext *sst__task_ext_of(sst_task *t);
/* Frees what the ext holds for one attempt (details, timed Sends). */
void sst__task_ext_clear(sst_task *t);
/* The Send timeout of out entry @p i of @p t, or NULL. */
const sst_timeout_policy *sst__out_timeout(const sst_task *t, size_t i);
/* Whether @p t runs against a clock: its own timeout or its superstep's deadline. */
bool sst__task_limited(const sst_task *t);
/* Starts the attempt's clocks; call before the compute function. false: out of memory (the
 * attempt then runs unbounded). */
bool sst__timeout_start(sst_task *t);
/* The vertex's timeout policy, or NULL when it has none. */
const sst_timeout_policy *sst__vertex_timeout(const sst__vertex *v);
/* After the compute function: turns an attempt that ran out of time into SST_ETIMEOUT. */
void sst__timeout_check(sst_task *t);
/* Makes the failed task @p t a task of its vertex's error handler; SST_ENOMEM leaves it failed. */
sst_code sst__task_to_handler(sst_task *t);
/* Replays @p t's writes from the cache; true on a hit (the task is then done). */
bool sst__cache_lookup(sst_task *t);
/* Stores the writes of @p t, which succeeded, in the cache (failures ignored). */
void sst__cache_store(sst_task *t);
/* The cache namespace of a task named @p name in the run part @p part ("writes|part|name"). */
void sst__cache_ns(const char *part, const char *name, char *out, size_t n);
/* @p t's cache key under policy @p p: its key function, or a hash of the task's input
 * (a Send's payload or a call's input), else of the state and inbox. */
sst_value *sst__cache_key(const sst_task *t, const sst_cache_policy *p, sst_error *err);
/* Whether policy @p p retries the failure of @p t (its code and error; the attempts aside). */
bool sst__retry_wanted(const sst_retry_policy *p, const sst_task *t);
/* Whether @p t's writes go through the cache. */
bool sst__task_cacheable(const sst_task *t);
/* Whether @p t failed in a way its vertex's error handler takes. */
bool sst__task_handled(const sst_task *t);

/* ---- resume points (resume.c) ---- */

/* {"vertex", "send"?, "input"?, "inbox"?}: enough to make the task again. */
sst_value *sst__task_descriptor(const sst_task *t, sst_error *err);
/* The task's writes: {"vertex", "task", "delta", "activate", "send", "message", "halt", "events"}.
 */
sst_value *sst__task_writes(const sst_task *t, sst_error *err);
/* Makes @p t the error handler's task of the pending write @p w (which has "origin"). */
sst_code sst__task_restore_handler(sst_task *t, const sst_value *w, sst_error *err);
/* Restores writes made by sst__task_writes; the task is then not run again. */
sst_code sst__task_restore(sst_task *t, const sst_value *writes, sst_error *err);
/* Fills vertex, send index, input and inbox of an initialised task from a descriptor. */
sst_code sst__task_from_descriptor(sst_task *t, const sst_pregel *p, const sst_value *d,
                                   sst_error *err);

/* ---- the worker pool (pool.c) ---- */

struct sst_engine {
    unsigned workers;         /* threads that run tasks, the caller's included */
    unsigned max_concurrency; /* participants per batch */
    pthread_t *threads;       /* owned: workers - 1 threads */
    size_t nthreads;
    bool running; /* a run is in progress (misuse check) */

    pthread_mutex_t mu;
    pthread_cond_t work_cv; /* protected by mu: a new batch or stop */
    pthread_cond_t done_cv; /* protected by mu: the batch's participants all left */
    uint64_t gen;           /* protected by mu: batch generation */
    bool stop;              /* protected by mu */
    unsigned participants;  /* protected by mu: thread ids below this take part */
    unsigned left;          /* protected by mu: participants that left the batch */

    /* Calls waiting for a thread (under mu), and their completions. */
    sst_call *cq_head, *cq_tail;
    pthread_cond_t call_cv; /* protected by mu: a call finished */
    unsigned idle;          /* protected by mu: workers waiting on work_cv */
    unsigned call_waiters;  /* protected by mu: threads waiting on call_cv */

    /* The batch, published under mu and read by participants after they saw gen change. */
    sst_task **batch;
    size_t nbatch;
    atomic_size_t next; /* next task to claim */

    sst_batch_hook hook; /* set between runs (sst_engine_set_batch_hook) */
    bool has_hook;
};

/* Runs every task of @p batch, spread over the pool; returns when all are done. */
void sst__pool_run(sst_engine *e, sst_task **batch, size_t n);

/* Monotonic nanoseconds. */
uint64_t sst__now_ns(void);

#endif /* SUPERSTEP_PREGEL_INT_H */
