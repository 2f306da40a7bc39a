/* SPDX-License-Identifier: MIT */
/*
 * superstep._core: the CPython extension under the `superstep` package
 * (docs/python.md). Written against the CPython C API and superstep's public
 * C API only. This header is shared by the files of python/src.
 *
 * Threads and the GIL: Python calls into the engine with the GIL released
 * (Py_BEGIN_ALLOW_THREADS around sst_graph_invoke and the state calls);
 * nodes, routers, custom reducers and stream callbacks run on the engine's
 * threads and take the GIL (PyGILState_Ensure) only while they call Python.
 */
#ifndef SUPERSTEP_PYTHON_CORE_H
#define SUPERSTEP_PYTHON_CORE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "superstep/superstep.h"

/* Classes of the Python package the converters and raisers need (set by _init). */
typedef struct sstpy_types {
    PyObject *send;            /* superstep.types.Send */
    PyObject *overwrite;       /* superstep.types.Overwrite */
    PyObject *graph_interrupt; /* superstep.errors.GraphInterrupt */
    PyObject *from_code;       /* superstep.errors._from_code(code, message, node) -> exception */
} sstpy_types;

extern sstpy_types sstpy;

/* The node running on this thread (interrupt(), get_stream_writer()), or NULL. */
extern _Thread_local sst_node_ctx *sstpy_current_ctx;

/*
 * A Python object as a value; on failure sets TypeError (or OverflowError,
 * ValueError) naming @p what and the path inside it, and returns NULL.
 * Send and Overwrite objects become their markers.
 */
sst_value *sstpy_to_value(PyObject *o, const char *what);
/* A value as a new Python object (dict, list, str, int, float, bool, None; Send markers as Send).
 */
PyObject *sstpy_from_value(const sst_value *v);

/*
 * PyGILState_Ensure for the engine's threads (gil.c): a worker thread keeps its Python
 * thread state between calls instead of making one per call. Released by
 * PyGILState_Release as usual. Engines must be freed with the GIL released
 * (sstpy_engine_free): their threads drop their thread states as they end.
 */
PyGILState_STATE sstpy_gil_ensure(void);

/*
 * A node's or a router's state as a new dict: as sstpy_from_value, with the arrays of the
 * fields named in @p message_fields (a tuple of str, or NULL) as lists of message objects
 * (superstep.messages._from_value). The objects made for a field are kept and reused by
 * its next conversion for the elements it shares with the previous one (a history that
 * grew makes only its new messages), as LangGraph hands the same message objects to
 * every node; the lists are new each time.
 */
PyObject *sstpy_state_from_value(const sst_value *state, PyObject *message_fields);
/* Drops what sstpy_state_from_value keeps (when no invoke runs). */
void sstpy_state_memo_clear(void);

/* Raises the exception for @p err (superstep.errors._from_code); returns NULL. */
PyObject *sstpy_raise(const sst_error *err, const char *node);
/* @p v (taken: unreferenced here) as a new Python object, or, when @p v is NULL (the call
 * that made it failed), the exception for @p err naming @p node as sstpy_raise does. */
PyObject *sstpy_take_value(sst_value *v, const sst_error *err, const char *node);

/*
 * Python exceptions raised on engine threads (a node, a router, a custom
 * reducer) are kept here, under the GIL, and named in the engine's error
 * message as "[py#N]"; the invoke that sees the message raises the object
 * itself (sstpy_take_exception).
 */
void sstpy_fail_with_exception(sst_error *err, sst_code code);
/* The exception named in @p msg, removed from the registry (new reference), or NULL. */
PyObject *sstpy_take_exception(const char *msg);

int sstpy_graph_init(PyObject *m);
/*
 * A _core.Compiled running @p cg, which @p owner holds (kept alive by the result; cg is not
 * freed with it), with @p saver (a Saver or None) and engines of @p workers threads. New
 * reference, or NULL with an exception set.
 */
PyObject *sstpy_compiled_of(const sst_compiled_graph *cg, PyObject *owner, PyObject *saver,
                            unsigned workers);
/* The prebuilt agent layer (agent.c): chat models, Python tools, middleware, agents. */
int sstpy_agent_init(PyObject *m);
/* A middleware written in Python (agent_mw.c): @p hooks maps hook names ("before_model",
 * "wrap_tool_call", ...) to the callables of superstep/prebuilt/middleware.py. New
 * middleware, or NULL with an exception set. (sst_middleware is agent.h's.) */
struct sst_middleware;
struct sst_middleware *sstpy_python_middleware(const char *name, PyObject *hooks);
int sstpy_saver_init(PyObject *m);

extern PyTypeObject sstpy_saver_type;
sst_checkpointer *sstpy_saver_get(PyObject *o);

/* ---- runner.c: what _core.Compiled (graph.c) and _core.Entrypoint (func.c) share ---- */

/* A list of names as a C array (sstpy_names_from; freed by sstpy_names_free). */
typedef struct sstpy_names {
    const char **v; /* PyMem; the strings are borrowed from the list's str objects */
    size_t n;
    bool set;      /* a list was given (even empty) */
    PyObject *seq; /* owned: keeps the strings alive */
} sstpy_names;
/* @p o (None: no list) as names; -1 with TypeError naming @p what. */
int sstpy_names_from(PyObject *o, sstpy_names *out, const char *what);
void sstpy_names_free(sstpy_names *n);
/* An optional value argument: *out is NULL for None; -1 with an exception naming @p what. */
int sstpy_opt_value(PyObject *o, sst_value **out, const char *what);

/*
 * A compiled graph with its checkpointer and engines of `workers` threads (one when
 * workers <= 1: the invoking thread): an engine runs one run at a time, so each run takes
 * one from the free list (or makes one) and gives it back; touched only under the GIL.
 */
typedef struct sstpy_runner {
    sst_compiled_graph *cg; /* owned, unless borrowed */
    bool borrowed;          /* cg belongs to someone else (an agent: sstpy_compiled_of) */
    sst_checkpointer *cp;   /* a reference of our own, or NULL */
    unsigned workers;
    sst_engine **engines; /* PyMem, owned engines */
    size_t n_engines, cap_engines;
} sstpy_runner;
/* The objects that hold one: PyObject_HEAD, then the runner (_core.Compiled, Entrypoint). */
typedef struct sstpy_runner_obj {
    PyObject_HEAD sstpy_runner r;
} sstpy_runner_obj;
#define SSTPY_RUNNER(self) (&((sstpy_runner_obj *)(self))->r)

/* Sets up @p r over @p cg, taking a reference of its own on @p cp (may be NULL). */
void sstpy_runner_init(sstpy_runner *r, sst_compiled_graph *cg, bool borrowed, sst_checkpointer *cp,
                       unsigned workers);
/* Frees its engines, its graph (unless borrowed) and its checkpointer reference. */
void sstpy_runner_free(sstpy_runner *r);
/* An engine for one run (of one worker when workers <= 1; NULL: the error), and back. */
sst_engine *sstpy_engine_take(sstpy_runner *r, sst_error *err);
void sstpy_engine_give(sstpy_runner *r, sst_engine *e);
/* The durable thread @p id (namespace @p ns) of @p r, or NULL with ValueError naming @p what. */
sst_graph_thread *sstpy_runner_thread(const sstpy_runner *r, const char *id, const char *ns,
                                      const char *what);

/* One run's Python side, reached by its nodes through a configurable key. */
typedef struct sstpy_run {
    PyObject *pyconfig;   /* borrowed: the config the Python wrappers receive */
    PyObject *on_event;   /* borrowed: stream callback, or NULL */
    PyObject *stream_exc; /* owned: what on_event raised, or Py_False when the consumer stopped */
    /* Ctrl-C (runner.c, run_cancelled): a run invoked on the main thread checks Python's
     * signal handlers between supersteps; a run given `stop` (an Event: stream()'s consumer
     * went away) asks stop.is_set() there. Either stops the run before its next superstep. */
    PyObject *stop;        /* borrowed, or NULL */
    bool main_thread;      /* invoked on the interpreter's main thread */
    _Atomic int cancelled; /* set once: the run stops (nodes asking sst_node_cancelled see it) */
    PyObject *cancel_exc;  /* owned: what a signal handler raised (KeyboardInterrupt), or NULL */
} sstpy_run;
/* A node of the run at @p ctx (configurable key @p key) saw KeyboardInterrupt: the run stops
 * before its next superstep whatever error handlers do with the node's failure. */
void sstpy_run_cancel(const sst_node_ctx *ctx, const char *key);
/* The run of the node @p ctx, from configurable[@p key], or NULL. */
sstpy_run *sstpy_run_of(const sst_node_ctx *ctx, const char *key);
/* @p cfg (taken) with configurable[@p key] = @p run's address; NULL with an exception. */
sst_value *sstpy_config_with_run(sst_value *cfg, const char *key, sstpy_run *run);
/* The stream modes by name (LangGraph's stream_mode values). */
typedef struct sstpy_stream_mode {
    const char *name;
    sst_stream_mode mode;
} sstpy_stream_mode;
extern const sstpy_stream_mode sstpy_stream_modes[];
extern const size_t sstpy_n_stream_modes;
/* The stream callback of a run (user data: its sstpy_run): on_event(mode, ns, node, event). */
sst_code sstpy_stream_fn(sst_stream_mode mode, const char *ns, const char *node,
                         const sst_value *event, void *ud);

/* What differs between the objects' runs. */
typedef struct sstpy_run_kind {
    const char *key; /* the configurable key of the run's address */
    bool nodes;      /* interrupt_before/after name nodes (an entrypoint has none) */
    void (*sleep)(uint64_t ms, void *ud); /* retry waits, or NULL for the engine's */
} sstpy_run_kind;
/*
 * The methods both objects answer (self: an sstpy_runner_obj):
 * run(input, *, has_input, thread_id, checkpoint_id, config, pyconfig, resume, has_resume,
 *     resume_by_id, update, goto, recursion_limit, stream_modes, on_event, interrupt_before,
 *     interrupt_after, durability, context, subgraphs) -> (status, state, interrupts), the
 * keywords of CompiledStateGraph._prepare (superstep.graph); get_state(thread_id,
 * checkpoint_id=None, ns=None, subgraphs=False); history(thread_id, filter=None, limit=0,
 * ns=None); update_state(thread_id, checkpoint_id, values, as_node, ns=None, bulk=False);
 * mermaid(xray=0); graph_json(xray=0); warnings().
 */
PyObject *sstpy_runner_run(PyObject *self, PyObject *args, PyObject *kw,
                           const sstpy_run_kind *kind);
PyObject *sstpy_runner_get_state(PyObject *self, PyObject *args);
PyObject *sstpy_runner_history(PyObject *self, PyObject *args);
PyObject *sstpy_runner_update_state(PyObject *self, PyObject *args);
PyObject *sstpy_runner_mermaid(PyObject *self, PyObject *args);
PyObject *sstpy_runner_graph_json(PyObject *self, PyObject *args);
PyObject *sstpy_runner_warnings(PyObject *self, PyObject *unused);

/* The functional API (func.c) and stores (store.c). */
int sstpy_func_init(PyObject *m);
int sstpy_store_init(PyObject *m);
/* The sst_store of a _core.Store or of an object whose _store is one (borrowed), or NULL with
 * TypeError/ValueError set. */
sst_store *sstpy_store_get(PyObject *o);

/* The sst_cache of a _core.Cache (borrowed), or NULL with a TypeError set (func.c). */
sst_cache *sstpy_cache_get(PyObject *o);

#endif /* SUPERSTEP_PYTHON_CORE_H */
