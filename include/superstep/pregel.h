/* SPDX-License-Identifier: MIT */
/*
 * The Pregel engine in global-state mode (the pregel layer; DESIGN.md
 * semantics 1, 3, 4, 6 and 7; docs/pregel.md).
 *
 * A master holds the committed global state (an object merged by a
 * sst_schema). Vertices hold no value: a vertex is a name, a compute
 * function and private config. Execution runs in supersteps: every task of a
 * superstep reads the same immutable snapshot of the state, produces a delta
 * and an outbox, and after the barrier the master merges all deltas in task
 * order and routes the outboxes into the next superstep's tasks.
 *
 * Task order (deterministic, whatever thread finishes first): vertex tasks
 * sorted by vertex name, then Send tasks in the order they were sent.
 *
 * Handles and threads:
 *   sst_pregel_builder  one thread at a time.
 *   sst_pregel          immutable once built: any number of engines may run
 *                       it at once.
 *   sst_engine          owns a worker pool; one run at a time (calls to
 *                       sst_engine_run on one engine must not overlap).
 *   sst_task            valid only inside the compute call that received it,
 *                       on that call's thread.
 *   sst_run_result      owned by the caller; read it from any one thread.
 */
#ifndef SUPERSTEP_PREGEL_H
#define SUPERSTEP_PREGEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "superstep/cache.h"
#include "superstep/error.h"
#include "superstep/export.h"
#include "superstep/reducer.h"
#include "superstep/retry.h"
#include "superstep/value.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sst_pregel_builder sst_pregel_builder;
typedef struct sst_pregel sst_pregel;
typedef struct sst_engine sst_engine;
typedef struct sst_task sst_task;
typedef struct sst_run_result sst_run_result;

/* ---- timeouts ---------------------------------------------------------- */

/**
 * How long one attempt of a task may take (LangGraph's TimeoutPolicy). A
 * task past either limit fails with SST_ETIMEOUT, retried like any error
 * under its vertex's retry policy. Enforcement is cooperative: a compute
 * function that runs long asks sst_task_cancelled and stops (the Lua layer
 * asks from a debug hook, so a spinning Lua node stops by itself); whatever
 * an attempt returns after its time ran out is dropped for the timeout error.
 */
typedef struct sst_timeout_policy {
    double run_timeout_s;  /* wall-clock cap of one attempt, never refreshed; 0: none */
    double idle_timeout_s; /* longest time without progress; 0: none */
    /*
     * false (LangGraph's refresh_on="auto"): progress is sst_task_heartbeat
     * and every event the task emits (sst_task_emit, streamed tokens); true
     * ("heartbeat"): sst_task_heartbeat only.
     */
    bool heartbeat_only;
} sst_timeout_policy;

/* ---- caching ----------------------------------------------------------- */

/** A task's cache key: a new string value, or NULL with @p err filled (the task then runs). */
typedef sst_value *(*sst_cache_key_fn)(const sst_task *t, void *user_data, sst_error *err);

/**
 * LangGraph's CachePolicy: a task of the vertex looks its writes up in the
 * run's cache (sst_run_opts.cache) before it runs; a hit skips the compute
 * function and replays the writes (delta, outbox, events) of the run that
 * stored them. Tasks resumed with resume values and error handlers' tasks
 * are not cached; only successful writes are stored.
 */
typedef struct sst_cache_policy {
    bool enabled;
    double ttl_s;         /* seconds an entry lives; 0: as long as the cache */
    sst_cache_key_fn key; /* NULL: a 64-bit hash of the Send payload, else of the state and inbox */
    void *key_user_data;
} sst_cache_policy;

/**
 * Whether @p p holds limits the engine accepts: each 0 (none) or a positive
 * number of seconds up to 1e9 (NaN is not). Thread-safe.
 */
SST_API bool sst_timeout_policy_valid(const sst_timeout_policy *p);

/**
 * @p p as it is written in resume points and Send values: a new object
 * {"run": s, "idle": s, "heartbeat"?: true}; NULL with @p err on SST_ENOMEM.
 */
SST_NODISCARD SST_API sst_value *sst_timeout_policy_value(const sst_timeout_policy *p,
                                                          sst_error *err);

/**
 * Reads a value made by sst_timeout_policy_value (borrowed) into @p out.
 * @return true; false, with @p out zeroed, when @p v is not such an object
 *         (NULL included). The limits are not checked (sst_timeout_policy_valid).
 */
SST_API bool sst_timeout_policy_from_value(const sst_value *v, sst_timeout_policy *out);

/**
 * Drops the writes the tasks of @p vertex cached in @p cache under the run
 * part @p cache_ns (as sst_run_opts.cache_ns; NULL: ""), that is namespace
 * "writes|<cache_ns>|<vertex>". Thread-safe as the cache is.
 * @return SST_OK; SST_EINVAL for a NULL cache or vertex; the cache's error.
 */
SST_NODISCARD SST_API sst_code sst_cache_clear_vertex(sst_cache *cache, const char *cache_ns,
                                                      const char *vertex, sst_error *err);

/* ---- vertices ---------------------------------------------------------- */

/**
 * A vertex's compute function. Read the task's inputs and write its outputs
 * through the sst_task functions. Return SST_OK on success; to fail, return
 * sst_task_fail(...) (or any error code); to interrupt, return
 * sst_task_interrupt(...). The function may run on any worker thread and
 * concurrently with other tasks, including other tasks of the same vertex.
 */
typedef sst_code (*sst_compute_fn)(sst_task *task, void *user_data);

/**
 * Folds the messages sent to one vertex in one superstep into one.
 * @param acc takes: the messages folded so far; @param msg borrowed
 * @return new folded message, or NULL with @p err filled.
 */
typedef sst_value *(*sst_combine_fn)(void *user_data, sst_value *acc, const sst_value *msg,
                                     sst_error *err);

/** Options of one vertex; fill with sst_vertex_opts_init, then adjust. */
typedef struct sst_vertex_opts {
    const sst_value *config; /* borrowed (the builder keeps a reference): private config */
    sst_retry_policy retry;  /* default: one attempt (sst_retry_policy_init for retries) */
    sst_combine_fn combiner; /* NULL: the inbox keeps every message */
    void *combiner_user_data;
    /*
     * Deferred (LangGraph's defer=True): an activation of this vertex waits
     * while any task of another kind is left to run; the vertex runs in the
     * first superstep that would otherwise have no such task. Sends to it
     * are not deferred. Default false.
     */
    bool defer;
    /* How long one attempt may take; default none (zeroes). */
    sst_timeout_policy timeout;
    /*
     * LangGraph's error_handler: the vertex (by name, resolved when the set is
     * built) that handles a task of this vertex failing for good (its retries
     * spent). In the same superstep a task of that vertex runs instead, with
     * the same state, input and inbox and sst_task_failure telling what
     * failed; its writes are committed in the failed task's place. Interrupts,
     * SST_EPARENT and SST_ENOMEM are not handled; a handler's own failure fails
     * the run. NULL: none.
     */
    const char *error_vertex;
    /* Cache the task's writes (needs sst_run_opts.cache); default off. */
    sst_cache_policy cache;
} sst_vertex_opts;

SST_API void sst_vertex_opts_init(sst_vertex_opts *o);

/**
 * A builder for a vertex set merged through @p schema.
 * @param schema borrowed; it must outlive every sst_pregel built from it.
 * @return new builder, freed with sst_pregel_builder_free; NULL on SST_ENOMEM/EINVAL.
 */
SST_NODISCARD SST_API sst_pregel_builder *sst_pregel_builder_new(const sst_schema *schema,
                                                                 sst_error *err);
SST_API void sst_pregel_builder_free(sst_pregel_builder *b);

/**
 * Adds vertex @p name (copied; 1..255 bytes of UTF-8).
 * @param opts NULL for the defaults
 * @return SST_OK; SST_EINVAL for an empty, too long or duplicate name or a
 *         NULL function; SST_ENOMEM.
 */
SST_NODISCARD SST_API sst_code sst_pregel_builder_add_vertex(sst_pregel_builder *b,
                                                             const char *name, sst_compute_fn fn,
                                                             void *user_data,
                                                             const sst_vertex_opts *opts,
                                                             sst_error *err);

typedef struct sst_commit sst_commit;

/**
 * Called on the master after each superstep's deltas are merged and its
 * outboxes routed, with the new state: it may activate more vertices for
 * the next superstep (the graph layer uses it for wait-for-all joins).
 * Return SST_OK, or an error to fail the run.
 */
typedef sst_code (*sst_commit_fn)(sst_commit *c, void *user_data);

/** The state just committed (borrowed). */
SST_API const sst_value *sst_commit_state(const sst_commit *c);
/** Activates @p vertex for the next superstep. SST_EINVAL for an unknown vertex. */
SST_NODISCARD SST_API sst_code sst_commit_activate(sst_commit *c, const char *vertex,
                                                   sst_error *err);

/** Sets the commit hook of the vertex set (NULL: none). */
SST_API void sst_pregel_builder_set_commit_fn(sst_pregel_builder *b, sst_commit_fn fn,
                                              void *user_data);

/**
 * Freezes the vertex set. The builder may be freed afterwards.
 * @return new immutable vertex set, freed with sst_pregel_free; NULL on
 *         SST_EINVAL (no vertices) or SST_ENOMEM.
 */
SST_NODISCARD SST_API sst_pregel *sst_pregel_builder_build(const sst_pregel_builder *b,
                                                           sst_error *err);
SST_API void sst_pregel_free(sst_pregel *p);

/** Number of vertices, and the name of vertex @p i (borrowed) in the order added. */
SST_API size_t sst_pregel_vertex_count(const sst_pregel *p);
SST_API const char *sst_pregel_vertex_name(const sst_pregel *p, size_t i);

/* ---- engine ------------------------------------------------------------ */

/** Engine options; fill with sst_engine_opts_init. */
typedef struct sst_engine_opts {
    unsigned workers;         /* threads that run tasks, the caller's included; default 1 */
    unsigned max_concurrency; /* tasks running at once; 0 = workers */
} sst_engine_opts;

SST_API void sst_engine_opts_init(sst_engine_opts *o);

/**
 * An engine with a pool of @p opts->workers - 1 threads (the thread calling
 * sst_engine_run is the other one). The pool may be larger than the number
 * of cores: nodes may block on I/O.
 * @return new engine, freed with sst_engine_free (which joins the threads);
 *         NULL on SST_EINVAL (0 workers) or SST_ENOMEM/SST_EIO (thread creation).
 */
SST_NODISCARD SST_API sst_engine *sst_engine_new(const sst_engine_opts *opts, sst_error *err);
SST_API void sst_engine_free(sst_engine *e);

/**
 * What a thread holds while it runs a batch's tasks (a superstep's tasks, or one round of
 * retries), taken once per thread and batch instead of once per task: a language binding's
 * interpreter lock (the Python binding's GIL). On a thread about to run its first task of a
 * batch, the engine calls @p enter; after its last one (or before the engine itself waits
 * inside a task: joining the task's calls, a cache lookup or store) it calls @p leave with
 * what @p enter returned, on the same thread. Threads that run no task of the batch call
 * neither. Both run without the engine's lock; they must not call back into the engine.
 *
 * Compute functions still take the resource themselves (a nested take while it is held):
 * the hook only saves the takes and drops between tasks. It is therefore only safe when no
 * compute function of the batch waits, while holding it, for another thread that needs it;
 * one that waits must drop it first (Python releases its GIL in every blocking call). A
 * thread holding it while others wait for it is what the resource's own fairness settles
 * (Python hands the GIL over every switch interval).
 */
typedef struct sst_batch_hook {
    void *(*enter)(void *user_data);
    void (*leave)(void *token, void *user_data);
    void *user_data;
} sst_batch_hook;

/**
 * Installs @p hook (copied; NULL: none) on @p e for the runs that start after this call.
 * Not while a run is in progress on @p e.
 */
SST_API void sst_engine_set_batch_hook(sst_engine *e, const sst_batch_hook *hook);

/** One task's figures, passed to the on_superstep hook. */
typedef struct sst_task_stat {
    const char *vertex;     /* borrowed */
    const char *task_id;    /* borrowed, 32 hex characters */
    const sst_value *delta; /* borrowed: the delta merged (or {}) */
    /* borrowed: with sst_run_opts.keep_raw_deltas, the delta as the compute function
     * wrote it, before the schema prepared it (message ids, a closed schema's drops);
     * else, and for writes restored from a pending write, the same as delta */
    const sst_value *raw_delta;
    const sst_value *events; /* borrowed: values from sst_task_emit, in emit order ([]) */
    uint64_t duration_ns;    /* of the successful attempt */
    unsigned attempts;
    bool cached; /* its writes came from the cache (sst_cache_policy): it did not run */
    /* borrowed: an error handler's task whose node failed in this run: what failed,
     * {"node", "error": {"code", "message", ...}} (as sst_task_failure); NULL for other
     * tasks and for a handler a resume runs again */
    const sst_value *failure;
    uint64_t send_index; /* the task's position among the superstep's Sends; UINT64_MAX: none */
} sst_task_stat;

/** Figures of one committed superstep. */
typedef struct sst_superstep_stats {
    uint64_t superstep;        /* 0-based */
    size_t tasks;              /* tasks run */
    size_t retries;            /* failed attempts that were retried */
    size_t delta_fields;       /* fields written, summed over tasks */
    uint64_t wall_ns;          /* from the first task start to the commit */
    const sst_task_stat *task; /* borrowed: tasks in merge order */
    const sst_value *state;    /* borrowed: the state after this superstep's commit */
    /*
     * borrowed, only with sst_run_opts.want_next (else NULL): where the run
     * goes on, as a resume point {"superstep", "tasks", "pending": [],
     * "resume": {}} for the next superstep; checkpoints store it.
     */
    const sst_value *next;
} sst_superstep_stats;

/**
 * Called on the running thread after each commit. Return SST_OK to go on,
 * SST_EINTERRUPT to end the run as interrupted (it resumes with the next
 * superstep), or another code to end it as failed.
 */
typedef sst_code (*sst_superstep_fn)(const sst_superstep_stats *stats, void *user_data);

/**
 * Called before a superstep's tasks run, with their vertices in task order
 * (borrowed). Return SST_OK to run them, SST_EINTERRUPT to end the run as
 * interrupted before them (interrupt_before), another code to fail it.
 */
typedef sst_code (*sst_before_fn)(uint64_t superstep, const char *const *vertices, size_t n,
                                  void *user_data);

/** Called before a retry sleep: the failed attempt, its error, and the delay chosen. */
typedef void (*sst_retry_fn)(const char *vertex, unsigned attempt, const sst_error *error,
                             uint64_t delay_ms, void *user_data);

/** How the engine waits between retries (tests replace it to avoid real sleeps). */
typedef void (*sst_sleep_fn)(uint64_t ms, void *user_data);

/**
 * Called on the call's thread each time a call succeeds by running (not for
 * replayed results), before its joiner wakes, with the result as the run
 * records it (borrowed): {"task": the call's id, "name", "result"}, the
 * entry it takes in a resume point's "calls". The graph layer writes it as a
 * pending write there.
 */
typedef void (*sst_call_done_fn)(const sst_task *call_task, const sst_value *entry,
                                 void *user_data);

/** What one run starts from; fill with sst_run_opts_init. */
typedef struct sst_run_opts {
    const sst_value *input;   /* borrowed; applied as the first delta (step "-1"); NULL: none */
    const sst_value *state;   /* borrowed initial state; NULL: the schema's defaults */
    const char *const *start; /* vertices active in superstep 0 */
    size_t n_start;
    const sst_value *sends; /* borrowed: [{"to": vertex, "input": payload}] Sends of superstep 0 */
    /*
     * borrowed: where to continue, as returned by sst_run_result_resume_point
     * (its "resume" member may be extended with resume values). When set,
     * `state` is the committed state and `input`, `start` and `sends` are
     * ignored.
     */
    const sst_value *resume;
    uint64_t first_superstep; /* number of a new run's first superstep; default 0 */
    uint64_t max_supersteps;  /* stop before this superstep number (recursion limit); default 25 */
    bool want_next;           /* give the on_superstep hook the next tasks (stats.next) */
    bool keep_raw_deltas;     /* give the hook each task's delta as written (stats raw_delta) */
    const char *run_key;      /* mixed into task ids (thread, checkpoint); default "" */
    uint64_t jitter_seed;     /* 0: random; else retry jitter is reproducible */
    /* Seconds each superstep may take, retries included (LangGraph's step_timeout): its
     * tasks see the deadline through sst_task_cancelled; one past it fails the run with
     * SST_ETIMEOUT, neither retried nor handled. 0: none. */
    double step_timeout_s;
    /* borrowed: where vertices with a cache policy keep their writes; NULL: no caching */
    sst_cache *cache;
    /* The run's part of the cache: entries of vertex V live in namespace
     * "writes|<cache_ns>|V" (the graph layer passes the graph's name). NULL: "". */
    const char *cache_ns;
    sst_before_fn before_superstep;
    sst_superstep_fn on_superstep;
    sst_retry_fn on_retry;
    sst_sleep_fn sleep;       /* NULL: nanosleep */
    void *user_data;          /* passed to the hooks */
    sst_call_done_fn on_call; /* NULL: none; called from any worker thread */
} sst_run_opts;

SST_API void sst_run_opts_init(sst_run_opts *o);

/**
 * Runs @p p until no vertex is active, a task fails for good, a task
 * interrupts, or the recursion limit is reached.
 * @return new result (its status says how the run ended), freed with
 *         sst_run_result_free; NULL only when the run could not start
 *         (SST_EINVAL: unknown start vertex, bad input; SST_ENOMEM).
 * Thread-safety: one run per engine at a time.
 */
SST_NODISCARD SST_API sst_run_result *sst_engine_run(sst_engine *e, const sst_pregel *p,
                                                     const sst_run_opts *opts, sst_error *err);

/* ---- inside a task ----------------------------------------------------- */

SST_API const char *sst_task_vertex(const sst_task *t);
/** The deterministic task id: 32 hex characters (borrowed). */
SST_API const char *sst_task_id(const sst_task *t);
/**
 * The id sst_task_id gives the task of @p vertex in @p superstep of the run
 * @p run_key: @p send_index is the Send's index, or UINT64_MAX for a task
 * triggered by edges. Writes 32 hex digits and a NUL to @p out.
 */
SST_API void sst_task_id_of(const char *run_key, uint64_t superstep, uint64_t send_index,
                            const char *vertex, char out[33]);
SST_API uint64_t sst_task_superstep(const sst_task *t);
/** When the task's first attempt started: wall-clock seconds since the epoch (retries keep it). */
SST_API double sst_task_first_attempt_time(const sst_task *t);
/** The user_data of the run's options (sst_run_opts.user_data), for live side channels. */
SST_API void *sst_task_run_user_data(const sst_task *t);
/** 1 for the first attempt, 2 for the first retry, ... */
SST_API unsigned sst_task_attempt(const sst_task *t);
/** The committed state of the previous superstep (borrowed, shared: never copied). */
SST_API const sst_value *sst_task_state(const sst_task *t);
/** The Send payload (borrowed), or NULL for a vertex task. */
SST_API const sst_value *sst_task_input(const sst_task *t);
/** Messages sent to this vertex last superstep, in send order (borrowed array; [] if none). */
SST_API const sst_value *sst_task_inbox(const sst_task *t);
/** The vertex config (borrowed); null when none was given. */
SST_API const sst_value *sst_task_config(const sst_task *t);

/**
 * The @p k-th (0-based) resume value given to this task when the run was
 * resumed after it interrupted (borrowed), or NULL when there is none.
 */
SST_API const sst_value *sst_task_resume_value(const sst_task *t, size_t k);

/**
 * Emits a custom event (takes @p value). Events reach the on_superstep hook
 * with the task's figures, in task order, so their order is deterministic.
 * Only the events of the attempt that succeeded are kept.
 */
SST_NODISCARD SST_API sst_code sst_task_emit(sst_task *t, sst_value *value, sst_error *err);

/** The delta written so far by this attempt (borrowed), or NULL. */
SST_API const sst_value *sst_task_delta(const sst_task *t);

/**
 * Writes @p value to @p field of this task's delta (a later write to the
 * same field in the same task replaces the earlier one).
 * @param value takes
 */
SST_NODISCARD SST_API sst_code sst_task_write(sst_task *t, const char *field, sst_value *value,
                                              sst_error *err);
/** Writes every member of @p delta (takes an object). */
SST_NODISCARD SST_API sst_code sst_task_write_all(sst_task *t, sst_value *delta, sst_error *err);

/** Activates @p vertex for the next superstep (several activations run it once). */
SST_NODISCARD SST_API sst_code sst_task_activate(sst_task *t, const char *vertex, sst_error *err);
/** Sends a task to @p vertex with @p payload as its input (takes): one task per Send. */
SST_NODISCARD SST_API sst_code sst_task_send(sst_task *t, const char *vertex, sst_value *payload,
                                             sst_error *err);
/** Puts @p message (takes) in @p vertex's inbox for the next superstep, activating it. */
SST_NODISCARD SST_API sst_code sst_task_message(sst_task *t, const char *vertex, sst_value *message,
                                                sst_error *err);
/**
 * As sst_task_send, with a timeout for the task the Send makes that replaces
 * the target vertex's (LangGraph's Send(node, arg, timeout=...)). @p timeout
 * is copied; NULL: the vertex's.
 */
SST_NODISCARD SST_API sst_code sst_task_send_timeout(sst_task *t, const char *vertex,
                                                     sst_value *payload,
                                                     const sst_timeout_policy *timeout,
                                                     sst_error *err);

/**
 * Whether this attempt ran out of time (sst_timeout_policy): a long-running
 * compute function asks now and then, and returns (any code) when it did.
 * Always false for a task without a timeout.
 */
SST_API bool sst_task_cancelled(const sst_task *t);

/** Records progress: restarts the idle timeout (LangGraph's runtime.heartbeat()). */
SST_API void sst_task_heartbeat(sst_task *t);

/** Whether the task's writes came from the cache (it did not run). */
SST_API bool sst_task_cached(const sst_task *t);

/**
 * The task's timeout (borrowed: its Send's or its vertex's), or NULL when it
 * has none and its superstep has no deadline (sst_run_opts.step_timeout_s;
 * with only that deadline the policy returned is zeroes).
 */
SST_API const sst_timeout_policy *sst_task_timeout(const sst_task *t);

/**
 * For a task that handles another's failure (sst_vertex_opts.error_vertex):
 * {"node": the failed vertex, "error": {"code": "SST_...", "message": ...}}
 * plus, for a timeout, the error's details (sst_run_result_error_detail)
 * under "error". NULL for any other task. Borrowed.
 */
SST_API const sst_value *sst_task_failure(const sst_task *t);
/** The error this attempt recorded with sst_task_fail (borrowed), or NULL: none yet. */
SST_API const sst_error *sst_task_error(const sst_task *t);

/**
 * Votes to halt: without this vote a vertex stays active and runs again in
 * the next superstep (classic Pregel). A halted vertex wakes on an
 * activation or a message.
 */
SST_API void sst_task_vote_halt(sst_task *t);

/**
 * Records a failure with a message; returns @p code, so a compute function
 * can `return sst_task_fail(t, SST_ETASK, "...")`. Retries follow the
 * vertex's policy (none by default; with a policy, transient codes such as
 * SST_ETASK retry unless retry_on says otherwise).
 */
SST_API sst_code sst_task_fail(sst_task *t, sst_code code, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/**
 * Attaches details (takes an object) to the failure this attempt returns:
 * sst_run_result_error_detail shows them when the failure ends the run.
 */
SST_API void sst_task_set_error_detail(sst_task *t, sst_value *detail);

/**
 * Interrupts the run with @p value (takes): returns SST_EINTERRUPT for
 * `return sst_task_interrupt(t, v)`. The superstep is not committed.
 */
SST_API sst_code sst_task_interrupt(sst_task *t, sst_value *value);

/* ---- calls (tasks started by tasks: the functional API) ---------------- */

typedef struct sst_call sst_call;

/** How one call runs; fill with sst_call_opts_init. */
typedef struct sst_call_opts {
    sst_retry_policy retry;     /* default: one attempt */
    sst_cache_policy cache;     /* default off; the key function gets the call's task */
    sst_timeout_policy timeout; /* of one attempt (retried as errors are); default none */
    /* Runs only on the thread that joins it (or when its caller returns), never on
     * another worker: for functions bound to one thread's interpreter. Default false. */
    bool pinned;
} sst_call_opts;

SST_API void sst_call_opts_init(sst_call_opts *o);

/**
 * Starts a call from inside task @p t: @p fn runs as a task of its own named
 * @p name (copied), with @p input (taken; NULL: null) as its sst_task_input,
 * the same state and run, and an id made from @p t's id, @p name and the
 * call's position among @p t's calls. It runs on a free worker of the
 * engine, or on the thread that joins it. A call whose id has a result from
 * an earlier run (sst_run_opts.resume's "calls") or an earlier attempt of
 * @p t is not run again: its result is that one (sst_call_replayed).
 * Calls may start calls. A call cannot activate, send or message (its
 * outbox calls fail); it returns its result with sst_task_return.
 * The handle belongs to @p t: it stays valid until @p t's attempt ends; when
 * @p t's compute function returns, the engine first waits for its calls.
 * Call it, and the sst_call_* functions, only on the thread running @p t;
 * @p fn runs on any worker thread, concurrently with @p t.
 * @return the call; NULL with SST_EINVAL (bad name, NULL fn) or SST_ENOMEM.
 */
SST_NODISCARD SST_API sst_call *sst_task_call(sst_task *t, const char *name, sst_compute_fn fn,
                                              void *user_data, sst_value *input,
                                              const sst_call_opts *opts, sst_error *err);

/**
 * Waits for @p c to finish, running it on this thread if no worker took it
 * (and running other waiting calls meanwhile).
 * @return SST_OK (sst_call_result holds the result); SST_EINTERRUPT when the
 *         call interrupted (its caller should return SST_EINTERRUPT: the run
 *         then stops with the call's interrupt); else the call's error, with
 *         its message in @p err.
 */
SST_NODISCARD SST_API sst_code sst_call_join(sst_call *c, sst_error *err);
/** The result of a call that finished (borrowed, null when it returned none), else NULL. */
SST_API const sst_value *sst_call_result(const sst_call *c);
/** The call's task id (32 hex characters, borrowed). */
SST_API const char *sst_call_id(sst_call *c);
/** The call's name (borrowed). */
SST_API const char *sst_call_name(const sst_call *c);
/** True when the result came from an earlier run or attempt, not from running. */
SST_API bool sst_call_replayed(const sst_call *c);

/**
 * Sets the result of the call @p t runs (takes @p value; a later call
 * replaces it). @return SST_OK; SST_EINVAL when @p t is not a call's task.
 */
SST_NODISCARD SST_API sst_code sst_task_return(sst_task *t, sst_value *value, sst_error *err);
/** The call whose task @p t is, or NULL for a vertex's task. */
SST_API sst_call *sst_task_self_call(const sst_task *t);

/* ---- results ----------------------------------------------------------- */

typedef enum sst_run_status {
    SST_RUN_COMPLETED,   /* no vertex left active */
    SST_RUN_INTERRUPTED, /* a task interrupted; see the interrupts */
    SST_RUN_FAILED       /* a task failed for good, a limit was hit, or a hook stopped the run */
} sst_run_status;

SST_API sst_run_status sst_run_result_status(const sst_run_result *r);
/** "completed", "interrupted" or "error". */
SST_API const char *sst_run_status_name(sst_run_status s);
/** The committed state (borrowed): after the last committed superstep. */
SST_API const sst_value *sst_run_result_state(const sst_run_result *r);
/** Supersteps committed. */
SST_API uint64_t sst_run_result_supersteps(const sst_run_result *r);
/** The error of a failed run (code SST_OK otherwise; borrowed). */
SST_API const sst_error *sst_run_result_error(const sst_run_result *r);
/** The vertex whose task failed (borrowed), or NULL. */
SST_API const char *sst_run_result_error_vertex(const sst_run_result *r);
/**
 * More about the error of a failed run (borrowed), or NULL. A timeout gives
 * {"kind": "run" | "idle", "timeout": s, "run_timeout": s | null,
 * "idle_timeout": s | null, "elapsed": s}, as LangGraph's NodeTimeoutError.
 */
SST_API const sst_value *sst_run_result_error_detail(const sst_run_result *r);
/**
 * Interrupts of an interrupted run (borrowed array, [] otherwise), each
 * {"vertex": name, "task": id, "value": value}, in task order; a call's
 * (sst_task_call) also has "owner": the id of the vertex task it belongs to.
 */
SST_API const sst_value *sst_run_result_interrupts(const sst_run_result *r);
/**
 * The writes of the tasks that succeeded in the superstep that failed or
 * was interrupted, not committed (borrowed array, [] otherwise), each
 * {"vertex", "task", "delta", "activate": [...], "send": [{"to", "input"}],
 * "message": [{"to", "value"}]}, in task order.
 */
SST_API const sst_value *sst_run_result_pending(const sst_run_result *r);
/**
 * Where an interrupted or failed run can continue (borrowed), or null for a
 * completed run: {"superstep": n, "tasks": [...], "pending": [...],
 * "resume": {task id: [values]}, "calls"?: [{"task": call id, "name", "result"}]}
 * ("calls": the results of the calls that finished in that superstep). `tasks` lists the
 * superstep's tasks in order ({"vertex", "send"?, "input"?, "inbox"?}); `pending` holds the writes
 * of the tasks that already succeeded, which are not run again. Pass it back as
 * sst_run_opts.resume, with the committed state, to go on.
 */
SST_API const sst_value *sst_run_result_resume_point(const sst_run_result *r);

/** Totals over the run. */
SST_API uint64_t sst_run_result_tasks(const sst_run_result *r);
SST_API uint64_t sst_run_result_retries(const sst_run_result *r);
SST_API void sst_run_result_free(sst_run_result *r);

#ifdef __cplusplus
}
#endif
#endif /* SUPERSTEP_PREGEL_H */
