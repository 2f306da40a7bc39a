/* SPDX-License-Identifier: MIT */
/*
 * The functional API (superstep.func, docs/python.md): _core.Entrypoint, an
 * entrypoint graph (sst_graph_set_entrypoint) compiled with its checkpointer,
 * store and cache; _core.submit, a task started from the running entrypoint,
 * task or node (sst_node_submit) and its _core.Future; _core.Cache, a task
 * cache (sst_cache).
 *
 * The entrypoint object answers the calls superstep.graph's CompiledStateGraph
 * makes on a compiled graph (run, get_state, history, update_state, mermaid,
 * graph_json, warnings), so superstep.func reuses its invoke, stream and state
 * code.
 *
 * Lifetimes: a task's user data is the Python task object, kept by the module
 * for as long as the process runs (tasks are declared once, as functions are);
 * an entrypoint's function is kept by the entrypoint object. A future is valid
 * while the function that submitted it runs: the entrypoint and task
 * trampolines mark their futures done when they return.
 */
#include "core.h"

#include <stdint.h>
#include <string.h>

/* ---- futures ---- */

typedef struct future_obj {
    PyObject_HEAD sst_future *f; /* NULL once its caller returned */
    PyObject *result;            /* owned, once known */
    PyObject *name;              /* the task's name */
} future_obj;

static PyTypeObject future_type;

/* The futures submitted by the function running on this thread (entrypoint or task). */
typedef struct frame {
    PyObject *futures; /* list of future_obj, or NULL */
    struct frame *up;
} frame;

static _Thread_local frame *cur_frame;

/*
 * {task id: (the Python arguments, the caller's run info)}, so that a task gets the very
 * objects its caller passed (LangGraph passes them by reference; its JSON input is what
 * the engine keeps: cache keys, streams) and its caller's config and store. An entry of a
 * task submitted from an entrypoint or a task goes when its caller returns; one submitted
 * from a graph node (no frame here) when the task has run to its end (see task_fn).
 * Touched only under the GIL.
 */
static PyObject *task_args;

static void frame_end(frame *fr) {
    if (fr->futures == NULL) {
        return;
    }
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(fr->futures); i++) {
        future_obj *fo = (future_obj *)PyList_GET_ITEM(fr->futures, i);
        if (fo->f != NULL && PyDict_DelItemString(task_args, sst_future_id(fo->f)) < 0) {
            PyErr_Clear();
        }
        fo->f = NULL;
    }
    Py_CLEAR(fr->futures);
}

/* The running function's exception as the task's failure (or its interrupt). */
static sst_code fail_from_python(sst_node_ctx *ctx, PyObject *owner) {
    if (sstpy.graph_interrupt != NULL && PyErr_ExceptionMatches(sstpy.graph_interrupt)) {
        PyErr_Clear();
        return SST_EINTERRUPT;
    }
    if (PyErr_ExceptionMatches(PyExc_KeyboardInterrupt)) { /* Ctrl-C: as graph.c's nodes */
        sstpy_run_cancel(ctx, "__pyfunc__");
        sst_error err = {0};
        sstpy_fail_with_exception(&err, SST_ECANCELLED);
        return sst_node_fail(ctx, SST_ECANCELLED, "%s", err.msg);
    }
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    sst_code code = SST_EINVAL; /* not retried unless the retry policy says so */
    if (value != NULL) {
        PyObject *yes = PyObject_CallMethod(owner, "_retryable", "O", value);
        if (yes == NULL) {
            PyErr_Clear();
        } else {
            code = PyObject_IsTrue(yes) == 1 ? SST_ETASK : SST_EINVAL;
            Py_DECREF(yes);
        }
        if (tb != NULL) {
            PyException_SetTraceback(value, tb);
        }
    }
    PyErr_Restore(type, value, tb);
    sst_error err = {0};
    sstpy_fail_with_exception(&err, code);
    return sst_node_fail(ctx, code, "%s", err.msg);
}

/*
 * Calls owner._call(args...) with @p ctx as the running node and a frame of its own,
 * and gives the result (new reference) or NULL with the exception set.
 */
static PyObject *call_in_frame(sst_node_ctx *ctx, PyObject *owner, PyObject *args) {
    frame fr = {NULL, cur_frame};
    cur_frame = &fr;
    sst_node_ctx *prev = sstpy_current_ctx;
    sstpy_current_ctx = ctx;
    PyObject *fn = PyObject_GetAttrString(owner, "_call");
    PyObject *res = fn != NULL ? PyObject_Call(fn, args, NULL) : NULL;
    Py_XDECREF(fn);
    sstpy_current_ctx = prev;
    cur_frame = fr.up;
    frame_end(&fr);
    return res;
}

/* A task: owner._call(input, pyconfig, config) -> result. */
static sst_code task_fn(sst_node_ctx *ctx, void *ud) {
    PyObject *owner = ud;
    PyGILState_STATE gil = sstpy_gil_ensure();
    sstpy_run *r = sstpy_run_of(ctx, "__pyfunc__");
    const sst_value *in = sst_node_input(ctx);
    PyObject *entry = PyDict_GetItemString(task_args, sst_node_task_id(ctx)); /* borrowed */
    PyObject *input = entry != NULL ? Py_NewRef(PyTuple_GET_ITEM(entry, 0))
                                    : sstpy_from_value(in != NULL ? in : sst_null());
    PyObject *pyrun = entry != NULL ? Py_NewRef(PyTuple_GET_ITEM(entry, 2))
                                    : Py_NewRef(r != NULL ? r->pyconfig : Py_None);
    bool orphan = entry != NULL && PyTuple_GET_ITEM(entry, 1) == Py_True;
    PyObject *config = input != NULL ? sstpy_from_value(sst_node_config(ctx)) : NULL;
    PyObject *args = config != NULL ? PyTuple_Pack(3, input, pyrun, config) : NULL;
    Py_XDECREF(input);
    Py_DECREF(pyrun);
    Py_XDECREF(config);
    PyObject *res = args != NULL ? call_in_frame(ctx, owner, args) : NULL;
    Py_XDECREF(args);
    sst_code rc = SST_OK;
    sst_value *v = res != NULL ? sstpy_to_value(res, "task result") : NULL;
    Py_XDECREF(res);
    if (v == NULL) {
        rc = fail_from_python(ctx, owner);
    } else {
        sst_error err = {0};
        if ((rc = sst_node_return(ctx, v, &err)) != SST_OK) {
            rc = sst_node_fail(ctx, rc, "%s", err.msg);
        }
    }
    /* A task of a graph node: its entry goes once no retry can follow (a retried attempt
     * needs it again). */
    if (orphan && rc != SST_ETASK && PyDict_DelItemString(task_args, sst_node_task_id(ctx)) < 0) {
        PyErr_Clear();
    }
    PyGILState_Release(gil);
    return rc;
}

/*
 * The entrypoint: owner._call(input, previous, pyconfig) -> (value, save, has_save).
 */
static sst_code entry_fn(sst_node_ctx *ctx, void *ud) {
    PyObject *owner = ud;
    PyGILState_STATE gil = sstpy_gil_ensure();
    sstpy_run *r = sstpy_run_of(ctx, "__pyfunc__");
    const sst_value *in = sst_entrypoint_input(ctx);
    const sst_value *prev = sst_entrypoint_previous(ctx);
    PyObject *input = sstpy_from_value(in != NULL ? in : sst_null());
    PyObject *previous = input != NULL ? sstpy_from_value(prev != NULL ? prev : sst_null()) : NULL;
    PyObject *args =
        previous != NULL
            ? PyTuple_Pack(3, input, previous, r != NULL && r->pyconfig ? r->pyconfig : Py_None)
            : NULL;
    Py_XDECREF(input);
    Py_XDECREF(previous);
    PyObject *res = args != NULL ? call_in_frame(ctx, owner, args) : NULL;
    Py_XDECREF(args);
    sst_code rc = SST_OK;
    if (res != NULL && (!PyTuple_Check(res) || PyTuple_GET_SIZE(res) != 3)) {
        PyErr_SetString(PyExc_TypeError, "entrypoint wrapper: expected (value, save, has_save)");
        Py_CLEAR(res);
    }
    sst_value *v = NULL, *save = NULL;
    if (res != NULL) {
        v = sstpy_to_value(PyTuple_GET_ITEM(res, 0), "entrypoint result");
        if (v != NULL && PyObject_IsTrue(PyTuple_GET_ITEM(res, 2)) == 1 &&
            (save = sstpy_to_value(PyTuple_GET_ITEM(res, 1), "entrypoint.final save")) == NULL) {
            sst_value_unref(v);
            v = NULL;
        }
        Py_DECREF(res);
    }
    if (v == NULL) {
        rc = fail_from_python(ctx, owner);
    } else {
        sst_error err = {0};
        rc = save != NULL ? sst_node_return_final(ctx, v, save, &err)
                          : sst_node_return(ctx, v, &err);
        if (rc != SST_OK) {
            rc = sst_node_fail(ctx, rc, "%s", err.msg);
        }
    }
    PyGILState_Release(gil);
    return rc;
}

/* ---- _core.submit ---- */

/* Tasks submitted once stay alive: the engine may call them on any worker later. */
static PyObject *task_registry;

/*
 * submit(task, input, name, retry=None, cache_ttl=None) -> Future. retry: (max_attempts,
 * initial, backoff, max_interval, jitter); cache_ttl: seconds (0: as long as the cache).
 */
static PyObject *py_submit(PyObject *self, PyObject *args, PyObject *kw) {
    (void)self;
    static char *kwn[] = {"task", "input", "name", "retry", "cache_ttl", "run", NULL};
    PyObject *task, *input, *retry = Py_None, *cache_ttl = Py_None, *pyrun = Py_None;
    const char *name;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOs|OOO", kwn, &task, &input, &name, &retry,
                                     &cache_ttl, &pyrun)) {
        return NULL;
    }
    sst_node_ctx *ctx = sstpy_current_ctx;
    if (ctx == NULL) {
        PyErr_SetString(PyExc_RuntimeError,
                        "Called a task outside of an entrypoint, a task or a graph node");
        return NULL;
    }
    sst_task_spec spec;
    sst_task_spec_init(&spec, name, task_fn, task);
    if (retry != Py_None) {
        int jitter = 1;
        sst_retry_policy_init(&spec.retry);
        if (!PyArg_ParseTuple(retry, "Idddp", &spec.retry.max_attempts,
                              &spec.retry.initial_interval_s, &spec.retry.backoff_factor,
                              &spec.retry.max_interval_s, &jitter)) {
            return NULL;
        }
        spec.retry.jitter = jitter != 0;
    }
    if (cache_ttl != Py_None) {
        spec.cache.enabled = true;
        spec.cache.ttl_s = PyFloat_AsDouble(cache_ttl);
        if (spec.cache.ttl_s == -1.0 && PyErr_Occurred()) {
            return NULL;
        }
    }
    if (PySet_Add(task_registry, task) < 0) {
        return NULL;
    }
    sst_value *v = sstpy_to_value(input, "task input");
    if (v == NULL) {
        return NULL;
    }
    future_obj *fo = PyObject_New(future_obj, &future_type);
    if (fo == NULL) {
        sst_value_unref(v);
        return NULL;
    }
    fo->f = NULL;
    fo->result = NULL;
    fo->name = PyUnicode_FromString(name);
    if (fo->name == NULL) {
        sst_value_unref(v);
        Py_DECREF(fo);
        return NULL;
    }
    sst_error err = {0};
    fo->f = sst_node_submit(ctx, &spec, v, &err);
    if (fo->f == NULL) {
        Py_DECREF(fo);
        return sstpy_raise(&err, name);
    }
    /* No Python code runs between the submission and here: the task, which needs the GIL,
     * cannot have looked for its entry yet. A replayed task does not run: no entry. */
    bool orphan = cur_frame == NULL;
    if (!sst_future_replayed(fo->f) || !orphan) {
        PyObject *entry = PyTuple_Pack(3, input, orphan ? Py_True : Py_False, pyrun);
        int bad = entry == NULL || PyDict_SetItemString(task_args, sst_future_id(fo->f), entry) < 0;
        Py_XDECREF(entry);
        if (bad) {
            Py_DECREF(fo);
            return NULL;
        }
    }
    if (!orphan && ((cur_frame->futures == NULL && (cur_frame->futures = PyList_New(0)) == NULL) ||
                    PyList_Append(cur_frame->futures, (PyObject *)fo) < 0)) {
        Py_DECREF(fo);
        return NULL;
    }
    return (PyObject *)fo;
}

static PyObject *future_result(PyObject *self, PyObject *unused) {
    (void)unused;
    future_obj *fo = (future_obj *)self;
    if (fo->result != NULL) {
        return Py_NewRef(fo->result);
    }
    if (fo->f == NULL) {
        PyErr_SetString(PyExc_RuntimeError,
                        "the future's caller has returned: wait for a task in the function "
                        "that called it");
        return NULL;
    }
    sst_error err = {0};
    const sst_value *v;
    Py_BEGIN_ALLOW_THREADS v = sst_future_result(fo->f, &err);
    Py_END_ALLOW_THREADS if (v == NULL) {
        if (err.code == SST_EINTERRUPT) {
            PyErr_SetNone(sstpy.graph_interrupt != NULL ? sstpy.graph_interrupt
                                                        : PyExc_RuntimeError);
            return NULL;
        }
        return sstpy_raise(&err, PyUnicode_AsUTF8(fo->name));
    }
    if ((fo->result = sstpy_from_value(v)) == NULL) {
        return NULL;
    }
    return Py_NewRef(fo->result);
}

static PyObject *future_id(PyObject *self, void *closure) {
    (void)closure;
    future_obj *fo = (future_obj *)self;
    if (fo->f == NULL) {
        Py_RETURN_NONE;
    }
    return PyUnicode_FromString(sst_future_id(fo->f));
}

static PyObject *future_done(PyObject *self, PyObject *unused) {
    (void)unused;
    return PyBool_FromLong(((future_obj *)self)->result != NULL);
}

static void future_dealloc(PyObject *self) {
    future_obj *fo = (future_obj *)self;
    Py_CLEAR(fo->result);
    Py_CLEAR(fo->name);
    PyObject_Free(self);
}

static PyMethodDef future_methods[] = {
    {"result", future_result, METH_NOARGS, "Waits for the task; its result or its exception."},
    {"done", future_done, METH_NOARGS, "True once result() returned."},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef future_getset[] = {{"id", future_id, NULL, "The task's id.", NULL},
                                      {NULL, NULL, NULL, NULL, NULL}};

static PyTypeObject future_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "superstep._core.Future",
    .tp_basicsize = sizeof(future_obj),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A task's future: result() waits for it.",
    .tp_dealloc = future_dealloc,
    .tp_methods = future_methods,
    .tp_getset = future_getset,
};

/* ---- _core.Cache ---- */

typedef struct cache_obj {
    PyObject_HEAD sst_cache *c; /* owned */
} cache_obj;

static PyTypeObject cache_type;

/* Cache(path=None): in memory, or a SQLite file. */
static int cache_init(PyObject *self, PyObject *args, PyObject *kw) {
    static char *kwn[] = {"path", NULL};
    const char *path = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|z", kwn, &path)) {
        return -1;
    }
    cache_obj *o = (cache_obj *)self;
    if (o->c != NULL) {
        PyErr_SetString(PyExc_RuntimeError, "Cache: already open");
        return -1;
    }
    sst_error err = {0};
    Py_BEGIN_ALLOW_THREADS o->c =
        path != NULL ? sst_sqlite_cache_open(path, &err) : sst_memory_cache_new(&err);
    Py_END_ALLOW_THREADS if (o->c == NULL) {
        sstpy_raise(&err, NULL);
        return -1;
    }
    return 0;
}

static PyObject *cache_clear(PyObject *self, PyObject *unused) {
    (void)unused;
    cache_obj *o = (cache_obj *)self;
    sst_error err = {0};
    if (o->c != NULL && sst_cache_clear(o->c, NULL, &err) != SST_OK) {
        return sstpy_raise(&err, NULL);
    }
    Py_RETURN_NONE;
}

static void cache_dealloc(PyObject *self) {
    cache_obj *o = (cache_obj *)self;
    sst_cache_free(o->c);
    o->c = NULL;
    Py_TYPE(self)->tp_free(self);
}

static PyMethodDef cache_methods[] = {{"clear", cache_clear, METH_NOARGS, "Drops every entry."},
                                      {NULL, NULL, 0, NULL}};

static PyTypeObject cache_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "superstep._core.Cache",
    .tp_basicsize = sizeof(cache_obj),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "A task cache: Cache() in memory, Cache(path) in a SQLite file.",
    .tp_new = PyType_GenericNew,
    .tp_init = cache_init,
    .tp_dealloc = cache_dealloc,
    .tp_methods = cache_methods,
};

sst_cache *sstpy_cache_get(PyObject *o) {
    if (!PyObject_TypeCheck(o, &cache_type) || ((cache_obj *)o)->c == NULL) {
        PyErr_Format(PyExc_TypeError, "expected a superstep cache, got %.100s",
                     Py_TYPE(o)->tp_name);
        return NULL;
    }
    return ((cache_obj *)o)->c;
}

/* ---- _core.Entrypoint ---- */

typedef struct entry_obj {
    PyObject_HEAD sstpy_runner r;    /* first, as sstpy_runner_obj: runner.c's methods use it */
    PyObject *owner;                 /* the Python entrypoint (its _call and _retryable) */
    PyObject *saver, *store, *cache; /* the objects behind r.cp, st, the cache */
    sst_store *st;                   /* a reference of our own, or NULL */
} entry_obj;

static PyTypeObject entry_type;

/* Entrypoint(name, owner, checkpointer=None, store=None, cache=None, workers=4, retry=None) */
static PyObject *entry_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
    static char *kwn[] = {"name",  "owner",   "checkpointer", "store",
                          "cache", "workers", "retry",        NULL};
    const char *name;
    PyObject *owner, *saver = Py_None, *store = Py_None, *cache = Py_None, *retry = Py_None;
    unsigned workers = 4;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "sO|OOOIO", kwn, &name, &owner, &saver, &store,
                                     &cache, &workers, &retry)) {
        return NULL;
    }
    sst_checkpointer *cp = NULL;
    sst_store *st = NULL;
    if (saver != Py_None && (cp = sstpy_saver_get(saver)) == NULL) {
        if (!PyErr_Occurred()) {
            PyErr_SetString(PyExc_ValueError, "entrypoint: the checkpointer is closed");
        }
        return NULL;
    }
    if (store != Py_None && (st = sstpy_store_get(store)) == NULL) {
        return NULL;
    }
    if (cache != Py_None && !PyObject_TypeCheck(cache, &cache_type)) {
        return PyErr_Format(PyExc_TypeError,
                            "entrypoint: cache must be a superstep cache, got %.100s",
                            Py_TYPE(cache)->tp_name);
    }
    sst_node_opts no;
    sst_node_opts_init(&no);
    if (retry != Py_None) {
        int jitter = 1;
        sst_retry_policy_init(&no.retry);
        if (!PyArg_ParseTuple(retry, "Idddp", &no.retry.max_attempts, &no.retry.initial_interval_s,
                              &no.retry.backoff_factor, &no.retry.max_interval_s, &jitter)) {
            return NULL;
        }
        no.retry.jitter = jitter != 0;
    }
    entry_obj *e = (entry_obj *)type->tp_alloc(type, 0);
    if (e == NULL) {
        return NULL;
    }
    sst_error err = {0};
    sst_graph *g = sst_graph_new(&err);
    if (g == NULL || sst_graph_set_entrypoint(g, name, entry_fn, owner, &no, &err) != SST_OK) {
        sst_graph_free(g);
        Py_DECREF(e);
        return sstpy_raise(&err, NULL);
    }
    sst_compile_opts co;
    sst_compile_opts_init(&co);
    co.store = st;
    co.cache = cache != Py_None ? ((cache_obj *)cache)->c : NULL;
    sst_compiled_graph *cg = sst_graph_compile(g, &co, &err);
    sst_graph_free(g);
    if (cg == NULL) {
        Py_DECREF(e);
        return sstpy_raise(&err, NULL);
    }
    sstpy_runner_init(&e->r, cg, false, cp, workers);
    e->owner = Py_NewRef(owner);
    e->saver = Py_NewRef(saver);
    e->store = Py_NewRef(store);
    e->cache = Py_NewRef(cache);
    e->st = st != NULL ? sst_store_ref(st) : NULL;
    return (PyObject *)e;
}

static int entry_traverse(PyObject *self, visitproc visit, void *arg) {
    entry_obj *e = (entry_obj *)self;
    Py_VISIT(e->owner);
    Py_VISIT(e->saver);
    Py_VISIT(e->store);
    Py_VISIT(e->cache);
    return 0;
}

/* Only the owner can lead back here; the saver, store and cache go after the graph. */
static int entry_clear(PyObject *self) {
    Py_CLEAR(((entry_obj *)self)->owner);
    return 0;
}

static void entry_dealloc(PyObject *self) {
    entry_obj *e = (entry_obj *)self;
    PyObject_GC_UnTrack(self);
    sstpy_runner_free(&e->r);
    sst_store_free(e->st);
    entry_clear(self);
    Py_CLEAR(e->saver);
    Py_CLEAR(e->store);
    Py_CLEAR(e->cache);
    Py_TYPE(self)->tp_free(self);
}

/* run(...): sstpy_runner_run; an entrypoint has no nodes to interrupt before or after. */
static PyObject *entry_run(PyObject *self, PyObject *args, PyObject *kw) {
    static const sstpy_run_kind kind = {"__pyfunc__", false, NULL};
    return sstpy_runner_run(self, args, kw, &kind);
}

/* clear_task_cache(name): drops task @p name's cached results (task.clear_cache). */
static PyObject *entry_clear_task_cache(PyObject *self, PyObject *arg) {
    const char *name = PyUnicode_AsUTF8(arg);
    if (name == NULL) {
        return NULL;
    }
    sst_error err = {0};
    if (sst_compiled_graph_clear_task_cache(SSTPY_RUNNER(self)->cg, name, &err) != SST_OK) {
        return sstpy_raise(&err, NULL);
    }
    Py_RETURN_NONE;
}

static PyMethodDef entry_methods[] = {
    {"run", (PyCFunction)(void (*)(void))entry_run, METH_VARARGS | METH_KEYWORDS, NULL},
    {"get_state", sstpy_runner_get_state, METH_VARARGS, NULL},
    {"history", sstpy_runner_history, METH_VARARGS, NULL},
    {"update_state", sstpy_runner_update_state, METH_VARARGS, NULL},
    {"mermaid", sstpy_runner_mermaid, METH_VARARGS, NULL},
    {"graph_json", sstpy_runner_graph_json, METH_VARARGS, NULL},
    {"warnings", sstpy_runner_warnings, METH_NOARGS, NULL},
    {"clear_task_cache", entry_clear_task_cache, METH_O, NULL},
    {NULL, NULL, 0, NULL}};

static PyTypeObject entry_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "superstep._core.Entrypoint",
    .tp_basicsize = sizeof(entry_obj),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "An entrypoint graph (superstep.func.entrypoint).",
    .tp_new = entry_new,
    .tp_dealloc = entry_dealloc,
    .tp_traverse = entry_traverse,
    .tp_clear = entry_clear,
    .tp_methods = entry_methods,
};

static PyMethodDef func_functions[] = {
    {"submit", (PyCFunction)(void (*)(void))py_submit, METH_VARARGS | METH_KEYWORDS,
     "submit(task, input, name, retry=None, cache_ttl=None): starts a task, gives a Future."},
    {NULL, NULL, 0, NULL}};

int sstpy_func_init(PyObject *m) {
    PyTypeObject *types[] = {&future_type, &cache_type, &entry_type};
    const char *names[] = {"Future", "Cache", "Entrypoint"};
    if ((task_registry = PySet_New(NULL)) == NULL || (task_args = PyDict_New()) == NULL) {
        return -1;
    }
    for (size_t i = 0; i < 3; i++) {
        if (PyType_Ready(types[i]) < 0) {
            return -1;
        }
        Py_INCREF(types[i]);
        if (PyModule_AddObject(m, names[i], (PyObject *)types[i]) < 0) {
            Py_DECREF(types[i]);
            return -1;
        }
    }
    return PyModule_AddFunctions(m, func_functions);
}
