/* SPDX-License-Identifier: MIT */
/*
 * The stream of an invoke (stream.c), as LangGraph gives it: values,
 * updates, tasks, checkpoints and debug events, and interrupts in the
 * updates and values streams; custom and messages events go out live, as
 * nodes send them (live.c, below). invoke.c calls these at the points of a
 * run where LangGraph emits; each does nothing when its modes are off.
 * docs/graph.md ("Streaming") lists the shapes and their order.
 */
#ifndef SUPERSTEP_GRAPH_STREAM_H
#define SUPERSTEP_GRAPH_STREAM_H

#include "graph_persist.h"

/* True when @p o has a stream callback (stream or stream_ns). */
static inline bool sst__has_stream(const sst_invoke_opts *o) {
    return o->stream != NULL || o->stream_ns != NULL;
}

/* Calls @p o's stream callback with an event of the invoked graph (namespace ""). */
static inline sst_code sst__stream_call(const sst_invoke_opts *o, sst_stream_mode m,
                                        const char *node, const sst_value *ev) {
    return o->stream_ns != NULL ? o->stream_ns(m, "", node, ev, o->stream_user_data)
                                : o->stream(m, node, ev, o->stream_user_data);
}

/* What one invoke's stream needs; lives on the invoke's stack. */
typedef struct sst__streamer {
    const sst_compiled_graph *cg;
    const sst_invoke_opts *o;
    sst_graph_thread *th; /* durable threads (checkpoints stream), else NULL */
    const char *run_key;  /* the run's task ids (set when the engine starts) */
    sst_code rc;          /* the stream callback's failure */
    sst_error err;        /* its message */
    sst_value *state;     /* owned: the committed state the next tasks read */
    sst_value *next;      /* owned: the next superstep's task descriptors, or NULL */
    sst_value *cached;    /* owned: ids of tasks whose writes a resume restored, or NULL */
    uint64_t cached_step; /* the superstep of those tasks */
    char *mark;           /* owned: the newest checkpoint already streamed (or loaded) */
    bool nested;          /* a subgraph's run: the root alone ends a stopped run's stream */
    bool fresh;           /* a new run (its input applied), not a resume */
    /* Durability "exit": the parent of the checkpoint the run started from, which the
     * checkpoints streamed unsaved name as theirs (LangGraph's), or "" when none. */
    char base_parent[SST__ID_MAX];
} sst__streamer;

/* Sets up @p s for an invoke with options @p o on @p th (durable, or NULL). */
void sst__stream_init(sst__streamer *s, const sst_compiled_graph *cg, const sst_invoke_opts *o,
                      sst_graph_thread *th);
void sst__stream_free(sst__streamer *s);
/* True when the callback is set and asks for mode @p m. */
bool sst__stream_on(const sst__streamer *s, sst_stream_mode m);
/* True when the engine must give the next tasks to the hooks (tasks / debug streams). */
bool sst__stream_wants_next(const sst__streamer *s);
/* The state as the result and the values stream show it: public, output fields only (new). */
sst_value *sst__stream_output(const sst_compiled_graph *cg, const sst_value *state, sst_error *err);

/* A new run's input applied (@p prepared: its delta, or NULL): values when it wrote an
 * output field, then the checkpoints written. */
void sst__stream_input(sst__streamer *s, const sst_value *state, const sst_value *prepared);
/* Now as Python's datetime.now(timezone.utc).isoformat() (a new string). */
sst_value *sst__stream_now(void);
/* A run resumed on @p state: the values chunk LangGraph starts a resume with, then the
 * checkpoints written (a fork, a Command update). */
void sst__stream_resume(sst__streamer *s, const sst_value *state);
/* The engine is about to start at resume point @p rp on @p state (both borrowed). */
void sst__stream_start(sst__streamer *s, const char *run_key, const sst_value *rp,
                       const sst_value *state);
/* The tasks of superstep @p step start (vertices in task order): tasks / debug "task". */
void sst__stream_tasks(sst__streamer *s, uint64_t step, const char *const *v, size_t n);
/* A committed superstep: custom, updates and task results, values, its checkpoint. */
void sst__stream_superstep(sst__streamer *s, const sst_superstep_stats *st);
/*
 * How the run @p rr ended: the writes of the tasks that succeeded in a superstep that
 * did not commit, interrupts (@p interrupts: the pending ones, with "task"; @p when:
 * "before" | "after" for a static stop, else NULL), the failed task's result, and the
 * checkpoints written since.
 */
void sst__stream_stop(sst__streamer *s, const sst_run_result *rr, const sst_value *interrupts,
                      const char *when);
/* The checkpoints written since the last call (checkpoints / debug "checkpoint"). */
void sst__stream_checkpoints(sst__streamer *s);

/*
 * ---- live events (live.c) ----
 * What nodes stream while they run, on their own thread and at once: custom events
 * (sst_node_emit), message tokens (sst_node_stream_message), the messages a node writes
 * to the state (LangGraph's "messages" mode: [message, metadata], each message id once
 * per invoke) and sst_node_push_message. One per invoke, in invoke_ctx.
 */
typedef struct sst__live_event sst__live_event;
typedef struct sst__live {
    const sst_compiled_graph *cg;
    const sst_invoke_opts *o;
    sst_graph_thread *th;         /* durable threads, else NULL */
    pthread_mutex_t mu;           /* guards what follows; never held while the callback runs */
    sst_value *seen;              /* owned object {message id: true}: streamed, or read as input */
    sst__live_event *head, *tail; /* events waiting for the sender, in send order */
    bool sending;                 /* a thread is delivering the queue (live.c) */
} sst__live;

void sst__live_init(sst__live *l, const sst_compiled_graph *cg, const sst_invoke_opts *o,
                    sst_graph_thread *th);
void sst__live_free(sst__live *l);
/* The namespace of the graph whose invoke @p l streams for ("" for a root graph; NULL: ""). */
const char *sst__live_ns(const sst__live *l);
/* True when the callback is set and asks for mode @p m (@p l may be NULL). */
bool sst__live_on(const sst__live *l, sst_stream_mode m);
/*
 * Sends @p event (takes) as mode @p m: at once on this thread, or, while another thread
 * is delivering, queued for that thread to deliver right after what it has; the
 * callback never runs under mu and the events of an invoke leave one at a time in the
 * order they were sent. Returns the callback's failure on any event this thread
 * delivered (its own or another's, the message naming that event's node).
 */
sst_code sst__live_send(sst__live *l, sst_stream_mode m, const char *node, sst_value *event,
                        sst_error *err);
/* Sends @p payload (takes) of a task LangGraph pushes (a functional task) as it starts or
 * ends (@p type "task" | "task_result"): in the tasks stream and, in the debug envelope
 * at LangGraph step @p step, in the debug stream. */
sst_code sst__live_task_event(sst__live *l, const char *type, int64_t step, const char *node,
                              sst_value *payload, sst_error *err);
/* Task @p id of @p name (a functional task LangGraph pushes) starts with @p input: its
 * "task" event at LangGraph step @p step (tasks and debug streams). */
sst_code sst__live_push_task(sst__live *l, int64_t step, const char *id, const char *name,
                             const sst_value *input, sst_error *err);
/* Sends token event @p event (takes; {"id", "delta"}): its message id counts as streamed. */
sst_code sst__live_token(sst__live *l, const char *node, sst_value *event, sst_error *err);
/* Task @p t starts with @p input: the ids of its messages count as streamed. */
sst_code sst__live_note_input(sst__live *l, const sst_value *input, sst_error *err);
/* Streams message @p msg (borrowed, with an id) of task @p t as [msg, metadata]; with
 * @p dedupe, not when its id was streamed (or read) before. */
sst_code sst__live_message(sst__live *l, sst_task *t, const char *node, const sst_value *msg,
                           bool dedupe, sst_error *err);
/* Streams the messages task @p t wrote to add_messages fields in @p delta (prepared: ids
 * set) and not seen yet. */
sst_code sst__live_update_messages(sst__live *l, sst_task *t, const char *node,
                                   const sst_value *delta, sst_error *err);

#endif /* SUPERSTEP_GRAPH_STREAM_H */
