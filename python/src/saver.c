/* SPDX-License-Identifier: MIT */
/*
 * _core.Saver: a checkpointer (sst_checkpointer) held by Python: the
 * in-memory saver or a SQLite file (superstep.checkpoint wraps it with
 * LangGraph's names). A saver is used by one engine call at a time; the
 * compiled graphs that use it hold a reference.
 */
#include "core.h"

typedef struct saver_obj {
    PyObject_HEAD sst_checkpointer *cp; /* owned */
} saver_obj;

sst_checkpointer *sstpy_saver_get(PyObject *o) {
    if (!PyObject_TypeCheck(o, &sstpy_saver_type)) {
        PyErr_Format(PyExc_TypeError, "expected a superstep checkpointer, got %.100s",
                     Py_TYPE(o)->tp_name);
        return NULL;
    }
    return ((saver_obj *)o)->cp;
}

/* Saver(kind, path=None): kind "memory" or "sqlite". */
static int saver_init(PyObject *self, PyObject *args, PyObject *kw) {
    static char *names[] = {"kind", "path", NULL};
    const char *kind, *path = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "s|z", names, &kind, &path)) {
        return -1;
    }
    saver_obj *s = (saver_obj *)self;
    if (s->cp != NULL) {
        PyErr_SetString(PyExc_RuntimeError, "Saver: already open");
        return -1;
    }
    sst_error err = {0};
    if (strcmp(kind, "memory") == 0) {
        s->cp = sst_memory_saver_new(&err);
    } else if (strcmp(kind, "sqlite") == 0 && path != NULL) {
        sst_sqlite_opts o;
        sst_sqlite_opts_init(&o);
        Py_BEGIN_ALLOW_THREADS s->cp = sst_sqlite_saver_open(path, &o, &err);
        Py_END_ALLOW_THREADS
    } else {
        PyErr_Format(PyExc_ValueError, "Saver: unknown kind '%s' (memory, or sqlite with a path)",
                     kind);
        return -1;
    }
    if (s->cp == NULL) {
        sstpy_raise(&err, NULL);
        return -1;
    }
    return 0;
}

static void saver_dealloc(PyObject *self) {
    saver_obj *s = (saver_obj *)self;
    sst_checkpointer_free(s->cp);
    s->cp = NULL;
    Py_TYPE(self)->tp_free(self);
}

static sst_checkpointer *open_cp(PyObject *self) {
    saver_obj *s = (saver_obj *)self;
    if (s->cp == NULL) {
        PyErr_SetString(PyExc_ValueError, "Saver: closed");
    }
    return s->cp;
}

static PyObject *saver_delete_thread(PyObject *self, PyObject *arg) {
    sst_checkpointer *cp = open_cp(self);
    const char *id = cp != NULL ? PyUnicode_AsUTF8(arg) : NULL;
    if (id == NULL) {
        return NULL;
    }
    sst_error err = {0};
    sst_code rc;
    Py_BEGIN_ALLOW_THREADS rc = sst_checkpointer_delete_thread(cp, id, &err);
    Py_END_ALLOW_THREADS if (rc != SST_OK) {
        return sstpy_raise(&err, NULL);
    }
    Py_RETURN_NONE;
}

/* threads() -> [{"thread_id", "status", "checkpoints", "latest", ...}] */
static PyObject *saver_threads(PyObject *self, PyObject *unused) {
    (void)unused;
    sst_checkpointer *cp = open_cp(self);
    if (cp == NULL) {
        return NULL;
    }
    sst_error err = {0};
    sst_value *v;
    Py_BEGIN_ALLOW_THREADS v = sst_checkpointer_search_threads(cp, NULL, &err);
    Py_END_ALLOW_THREADS return sstpy_take_value(v, &err, NULL);
}

static PyObject *saver_close(PyObject *self, PyObject *unused) {
    (void)unused;
    saver_obj *s = (saver_obj *)self;
    sst_checkpointer_free(s->cp); /* compiled graphs using it keep their own reference */
    s->cp = NULL;
    Py_RETURN_NONE;
}

static PyMethodDef saver_methods[] = {
    {"delete_thread", saver_delete_thread, METH_O, "Deletes a thread's checkpoints."},
    {"threads", saver_threads, METH_NOARGS, "The saver's threads."},
    {"close", saver_close, METH_NOARGS, "Drops this object's reference to the saver."},
    {NULL, NULL, 0, NULL}};

PyTypeObject sstpy_saver_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "superstep._core.Saver",
    .tp_basicsize = sizeof(saver_obj),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "A checkpointer: Saver('memory') or Saver('sqlite', path).",
    .tp_new = PyType_GenericNew,
    .tp_init = saver_init,
    .tp_dealloc = saver_dealloc,
    .tp_methods = saver_methods,
};

int sstpy_saver_init(PyObject *m) {
    if (PyType_Ready(&sstpy_saver_type) < 0) {
        return -1;
    }
    Py_INCREF(&sstpy_saver_type);
    if (PyModule_AddObject(m, "Saver", (PyObject *)&sstpy_saver_type) < 0) {
        Py_DECREF(&sstpy_saver_type);
        return -1;
    }
    return 0;
}
