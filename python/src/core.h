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

/* The functional API (func.c) and stores (store.c). */
int sstpy_func_init(PyObject *m);
int sstpy_store_init(PyObject *m);
/* The sst_store of a _core.Store or of an object whose _store is one (borrowed), or NULL with
 * TypeError/ValueError set. */
sst_store *sstpy_store_get(PyObject *o);

#endif /* SUPERSTEP_PYTHON_CORE_H */
