/* SPDX-License-Identifier: MIT */
/*
 * superstep._core: module setup, the functions a node calls while it runs
 * (interrupt, emit), the registry that carries Python exceptions across the
 * engine, and errors raised as superstep.errors' classes (docs/python.md).
 */
#include "core.h"
#include "serve.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

sstpy_types sstpy;
_Thread_local sst_node_ctx *sstpy_current_ctx;

/* ---- exceptions crossing the engine ---- */

/* {int id: exception}, touched only under the GIL. */
static PyObject *exc_registry;
static long long exc_next_id = 1;
/* Exceptions of failed attempts that were retried are never taken: keep the newest only. */
#define EXC_KEEP 256

void sstpy_fail_with_exception(sst_error *err, sst_code code) {
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    if (value == NULL) {
        err->code = code;
        snprintf(err->msg, sizeof err->msg, "unknown Python error");
        Py_XDECREF(type);
        Py_XDECREF(tb);
        return;
    }
    if (tb != NULL) {
        PyException_SetTraceback(value, tb);
    }
    long long id = exc_next_id++;
    PyObject *key = PyLong_FromLongLong(id);
    if (key != NULL && exc_registry != NULL) {
        if (PyDict_SetItem(exc_registry, key, value) < 0) {
            PyErr_Clear();
        }
        PyObject *old = PyLong_FromLongLong(id - EXC_KEEP);
        if (old != NULL && PyDict_DelItem(exc_registry, old) < 0) {
            PyErr_Clear();
        }
        Py_XDECREF(old);
    }
    Py_XDECREF(key);
    PyObject *text = PyObject_Repr(value);
    const char *s = text != NULL ? PyUnicode_AsUTF8(text) : NULL;
    if (s == NULL) {
        PyErr_Clear();
        s = "";
    }
    err->code = code;
    snprintf(err->msg, sizeof err->msg, "[py#%lld] %s", id, s);
    Py_XDECREF(text);
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(tb);
}

PyObject *sstpy_take_exception(const char *msg) {
    const char *p = msg != NULL ? strstr(msg, "[py#") : NULL;
    if (p == NULL || exc_registry == NULL) {
        return NULL;
    }
    long long id = strtoll(p + 4, NULL, 10);
    PyObject *key = PyLong_FromLongLong(id);
    if (key == NULL) {
        PyErr_Clear();
        return NULL;
    }
    PyObject *exc = PyDict_GetItemWithError(exc_registry, key);
    Py_XINCREF(exc);
    if (exc != NULL && PyDict_DelItem(exc_registry, key) < 0) {
        PyErr_Clear();
    }
    PyErr_Clear();
    Py_DECREF(key);
    return exc;
}

PyObject *sstpy_take_value(sst_value *v, const sst_error *err, const char *node) {
    if (v == NULL) {
        return sstpy_raise(err, node);
    }
    PyObject *o = sstpy_from_value(v);
    sst_value_unref(v);
    return o;
}

PyObject *sstpy_raise(const sst_error *err, const char *node) {
    PyObject *exc = sstpy_take_exception(err->msg);
    if (exc != NULL) {
        PyErr_SetObject((PyObject *)Py_TYPE(exc), exc);
        Py_DECREF(exc);
        return NULL;
    }
    if (err->code == SST_ENOMEM) {
        return PyErr_NoMemory();
    }
    if (sstpy.from_code == NULL) {
        PyErr_Format(PyExc_RuntimeError, "%s: %s", sst_code_name(err->code), err->msg);
        return NULL;
    }
    PyObject *e =
        PyObject_CallFunction(sstpy.from_code, "sss", sst_code_name(err->code), err->msg, node);
    if (e != NULL) {
        PyErr_SetObject((PyObject *)Py_TYPE(e), e);
        Py_DECREF(e);
    }
    return NULL;
}

/* ---- module functions ---- */

static PyObject *py_init(PyObject *self, PyObject *args, PyObject *kw) {
    (void)self;
    static char *names[] = {"send", "overwrite", "graph_interrupt", "from_code", NULL};
    PyObject *send, *ow, *gi, *fc;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOOO", names, &send, &ow, &gi, &fc)) {
        return NULL;
    }
    PyObject *objs[] = {send, ow, gi, fc};
    PyObject **slots[] = {&sstpy.send, &sstpy.overwrite, &sstpy.graph_interrupt, &sstpy.from_code};
    for (size_t i = 0; i < 4; i++) {
        Py_INCREF(objs[i]);
        Py_XSETREF(*slots[i], objs[i]);
    }
    Py_RETURN_NONE;
}

static sst_node_ctx *running(const char *what) {
    if (sstpy_current_ctx == NULL) {
        PyErr_Format(PyExc_RuntimeError, "%s() called outside a node of a running graph", what);
    }
    return sstpy_current_ctx;
}

/* interrupt(value): the resume value, or raises GraphInterrupt (the node stops). */
static PyObject *py_interrupt(PyObject *self, PyObject *value) {
    (void)self;
    sst_node_ctx *ctx = running("interrupt");
    if (ctx == NULL) {
        return NULL;
    }
    sst_value *v = sstpy_to_value(value, "interrupt value");
    if (v == NULL) {
        return NULL;
    }
    const sst_value *resume = sst_node_interrupt(ctx, v);
    if (resume != NULL) {
        return sstpy_from_value(resume);
    }
    PyErr_SetNone(sstpy.graph_interrupt != NULL ? sstpy.graph_interrupt : PyExc_RuntimeError);
    return NULL;
}

/* emit(value): a custom stream event (get_stream_writer()). */
static PyObject *py_emit(PyObject *self, PyObject *value) {
    (void)self;
    sst_node_ctx *ctx = running("get_stream_writer");
    if (ctx == NULL) {
        return NULL;
    }
    sst_value *v = sstpy_to_value(value, "stream writer value");
    if (v == NULL) {
        return NULL;
    }
    sst_error err = {0};
    /* Without the GIL: the event goes out under the run's stream lock, whose holder may be
     * waiting for the GIL in the stream callback (another node's event). */
    sst_code rc;
    Py_BEGIN_ALLOW_THREADS rc = sst_node_emit(ctx, v, &err);
    Py_END_ALLOW_THREADS if (rc != SST_OK) {
        return sstpy_raise(&err, NULL);
    }
    Py_RETURN_NONE;
}

/* in_node(): true inside a node of a running graph. */
static PyObject *py_in_node(PyObject *self, PyObject *unused) {
    (void)self;
    (void)unused;
    return PyBool_FromLong(sstpy_current_ctx != NULL);
}

/* node_info(): {"name", "step", "attempt", "task_id", "checkpoint_ns", "thread_id"} of the node. */
static PyObject *py_node_info(PyObject *self, PyObject *unused) {
    (void)self;
    (void)unused;
    sst_node_ctx *ctx = running("node_info");
    if (ctx == NULL) {
        return NULL;
    }
    const char *thread = sst_node_thread_id(ctx);
    return Py_BuildValue("{s:s,s:K,s:I,s:s,s:s,s:z,s:d,s:K}", "name", sst_node_name(ctx), "step",
                         (unsigned long long)sst_node_step(ctx), "attempt", sst_node_attempt(ctx),
                         "task_id", sst_node_task_id(ctx), "checkpoint_ns",
                         sst_node_checkpoint_ns(ctx), "thread_id", thread, "first_attempt_time",
                         sst_node_first_attempt_time(ctx), "remaining_steps",
                         (unsigned long long)sst_node_remaining_steps(ctx));
}

/*
 * node_error(): in an error handler, (node, exception, error) of what failed: the failed
 * node's name, the Python exception it raised when this process still holds it (taken from
 * the registry; None after a restart or for an engine error) and the engine's error dict
 * ({"code", "message", ...}). None in any other node.
 */
static PyObject *py_node_error(PyObject *self, PyObject *unused) {
    (void)self;
    (void)unused;
    sst_node_ctx *ctx = running("node_error");
    if (ctx == NULL) {
        return NULL;
    }
    const sst_value *e = sst_node_error(ctx);
    if (e == NULL) {
        Py_RETURN_NONE;
    }
    const sst_value *node = sst_object_get(e, "node");
    const sst_value *error = sst_object_get(e, "error");
    const sst_value *msg = sst_object_get(error, "message");
    PyObject *exc =
        sstpy_take_exception(msg != NULL && sst_is_string(msg) ? sst_string_cstr(msg) : NULL);
    PyObject *err = sstpy_from_value(error != NULL ? error : sst_null());
    PyObject *out = NULL;
    if (err != NULL) {
        out =
            Py_BuildValue("(sOO)", node != NULL && sst_is_string(node) ? sst_string_cstr(node) : "",
                          exc != NULL ? exc : Py_None, err);
    }
    Py_XDECREF(exc);
    Py_XDECREF(err);
    return out;
}

/* reduce(name, current, update): a built-in reducer applied to Python values. */
static PyObject *py_reduce(PyObject *self, PyObject *args) {
    (void)self;
    const char *name;
    PyObject *cur, *upd;
    if (!PyArg_ParseTuple(args, "sOO", &name, &cur, &upd)) {
        return NULL;
    }
    const sst_reducer *r = sst_reducer_builtin(name);
    if (r == NULL) {
        return PyErr_Format(PyExc_ValueError, "no built-in reducer '%s'", name);
    }
    sst_value *c = cur == Py_None ? NULL : sstpy_to_value(cur, "left");
    if (c == NULL && cur != Py_None) {
        return NULL;
    }
    sst_value *u = sstpy_to_value(upd, "right");
    if (u == NULL) {
        sst_value_unref(c);
        return NULL;
    }
    sst_error err = {0};
    sst_value *prepared = sst_reducer_prepare(r, "value", u, &err);
    if (prepared == NULL) {
        sst_value_unref(c);
        return sstpy_raise(&err, NULL);
    }
    if (c != NULL) {
        c = sst_reducer_prepare(r, "value", c, &err);
        if (c == NULL) {
            sst_value_unref(prepared);
            return sstpy_raise(&err, NULL);
        }
    }
    const sst_value *ups[1] = {prepared};
    sst_value *out = sst_reducer_apply(r, "value", c, ups, 1, &err);
    sst_value_unref(prepared);
    return sstpy_take_value(out, &err, NULL);
}

/* to_json(obj) -> str: the value as compact JSON (tests, debugging). */
static PyObject *py_to_json(PyObject *self, PyObject *o) {
    (void)self;
    sst_value *v = sstpy_to_value(o, "value");
    if (v == NULL) {
        return NULL;
    }
    sst_error err = {0};
    size_t len = 0;
    char *s = sst_json_write(v, SST_JSON_COMPACT, &len, &err);
    sst_value_unref(v);
    if (s == NULL) {
        return sstpy_raise(&err, NULL);
    }
    PyObject *out = PyUnicode_DecodeUTF8(s, (Py_ssize_t)len, "strict");
    sst_free(s);
    return out;
}

static PyMethodDef methods[] = {
    {"_init", (PyCFunction)(void (*)(void))py_init, METH_VARARGS | METH_KEYWORDS,
     "Registers the package's classes."},
    {"interrupt", py_interrupt, METH_O, "interrupt(value): pause the run for input."},
    {"emit", py_emit, METH_O, "emit(value): a custom stream event of the running node."},
    {"in_node", py_in_node, METH_NOARGS, "True inside a node."},
    {"node_info", py_node_info, METH_NOARGS, "The running node's name, step, attempt, ids."},
    {"node_error", py_node_error, METH_NOARGS, "In an error handler: what failed."},
    {"reduce", py_reduce, METH_VARARGS, "reduce(name, current, update) with a built-in reducer."},
    {"to_json", py_to_json, METH_O, "A value as compact JSON."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT,
                                    "superstep._core",
                                    "superstep's C engine, bound to Python.",
                                    -1,
                                    methods,
                                    NULL,
                                    NULL,
                                    NULL,
                                    NULL};

PyMODINIT_FUNC PyInit__core(void);
PyMODINIT_FUNC PyInit__core(void) {
    PyObject *m = PyModule_Create(&module);
    if (m == NULL) {
        return NULL;
    }
    if ((exc_registry = PyDict_New()) == NULL || sstpy_graph_init(m) < 0 ||
        sstpy_saver_init(m) < 0 || sstpy_serve_init(m) < 0 ||
        PyModule_AddStringConstant(m, "version", sst_version()) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    if (sstpy_func_init(m) < 0 || sstpy_store_init(m) < 0 || sstpy_agent_init(m) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
