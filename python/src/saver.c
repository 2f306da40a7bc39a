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

/* Collects records as values: {"thread_id", "checkpoint_ns", "checkpoint_id", "parent_id",
 * "step", "source", "created_at", "metadata"} (the metadata with "source" and "step"). */
typedef struct collect {
    sst_value *list;
    bool failed;
    sst_error err;
} collect;

static bool collect_one(const sst_checkpoint *rec, void *ud) {
    collect *c = ud;
    sst_error *err = &c->err;
    sst_value *md = rec->metadata.len > 0 || rec->metadata.value != NULL
                        ? sst_payload_value(&rec->metadata, err)
                        : sst_object_empty();
    if (md != NULL && !sst_is_object(md)) {
        sst_value_unref(md);
        md = sst_object_empty();
    }
    if (md != NULL && sst_object_get(md, "source") == NULL && rec->source != NULL) {
        sst_value *src = sst_string_new(rec->source, err);
        md = src != NULL ? sst_object_set_take(md, "source", src, err) : NULL;
    }
    if (md != NULL && sst_object_get(md, "step") == NULL) {
        sst_value *step = sst_int_new(rec->step, err);
        md = step != NULL ? sst_object_set_take(md, "step", step, err) : NULL;
    }
    struct {
        const char *k;
        const char *v;
    } strs[] = {{"thread_id", rec->thread_id},
                {"checkpoint_ns", rec->ns != NULL ? rec->ns : ""},
                {"checkpoint_id", rec->id},
                {"parent_id", rec->parent_id},
                {"source", rec->source}};
    sst_value *o = md != NULL ? sst_object_set_take(sst_object_empty(), "metadata", md, err) : NULL;
    for (size_t i = 0; o != NULL && i < sizeof strs / sizeof strs[0]; i++) {
        sst_value *v = strs[i].v != NULL ? sst_string_new(strs[i].v, err) : sst_null();
        o = v != NULL ? sst_object_set_take(o, strs[i].k, v, err) : (sst_value_unref(o), NULL);
    }
    sst_value *step = o != NULL ? sst_int_new(rec->step, err) : NULL;
    o = step != NULL ? sst_object_set_take(o, "step", step, err) : (sst_value_unref(o), NULL);
    sst_value *at = o != NULL ? sst_int_new(rec->created_at, err) : NULL;
    o = at != NULL ? sst_object_set_take(o, "created_at", at, err) : (sst_value_unref(o), NULL);
    if (o == NULL || (c->list = sst_array_push_take(c->list, o, err)) == NULL) {
        c->failed = true;
        return false;
    }
    return true;
}

/* records(thread_id, ns=None, filter=None, before=None, limit=0) -> [dict] newest first */
static PyObject *saver_records(PyObject *self, PyObject *args) {
    sst_checkpointer *cp = open_cp(self);
    const char *thread_id, *ns = NULL, *before = NULL;
    PyObject *filter = Py_None;
    unsigned long long limit = 0;
    if (cp == NULL ||
        !PyArg_ParseTuple(args, "s|zOzK", &thread_id, &ns, &filter, &before, &limit)) {
        return NULL;
    }
    sst_value *f = NULL;
    if (filter != Py_None && (f = sstpy_to_value(filter, "filter")) == NULL) {
        return NULL;
    }
    sst_checkpoint_query q = {
        .thread_id = thread_id, .ns = ns, .filter = f, .before = before, .limit = (size_t)limit};
    collect c = {.list = sst_array_empty()};
    sst_error err = {0};
    sst_code rc;
    Py_BEGIN_ALLOW_THREADS rc = sst_checkpointer_list(cp, &q, collect_one, &c, &err);
    Py_END_ALLOW_THREADS sst_value_unref(f);
    if (c.failed) {
        sst_value_unref(c.list);
        return sstpy_raise(&c.err, NULL);
    }
    if (rc != SST_OK) {
        sst_value_unref(c.list);
        return sstpy_raise(&err, NULL);
    }
    return sstpy_take_value(c.list, &err, NULL);
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
    {"records", saver_records, METH_VARARGS, "A thread's checkpoint records, newest first."},
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
