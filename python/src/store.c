/* SPDX-License-Identifier: MIT */
/*
 * _core.Store: a long-term store (sst_store: in memory, SQLite or PostgreSQL;
 * docs/store.md) held by Python. superstep.store's InMemoryStore, SqliteStore
 * and PostgresStore wrap it with LangGraph's BaseStore API.
 *
 * Every call releases the GIL while the store works; an embedding function
 * written in Python takes it back (PyGILState_Ensure) while it runs, on
 * whichever thread embeds. Stores are reference counted: a compiled graph
 * holds its own reference (sst_store_ref) and the Python object.
 */
#include "core.h"

#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

typedef struct store_obj {
    PyObject_HEAD sst_store *st; /* owned */
    PyObject *embed;             /* the Python embedding function, or NULL */
    _Atomic int64_t clock_us;    /* the manual clock (manual is set) */
    bool manual;
} store_obj;

static PyTypeObject store_type;

sst_store *sstpy_store_get(PyObject *o) {
    PyObject *inner =
        PyObject_TypeCheck(o, &store_type) ? Py_NewRef(o) : PyObject_GetAttrString(o, "_store");
    if (inner == NULL || !PyObject_TypeCheck(inner, &store_type)) {
        PyErr_Clear();
        Py_XDECREF(inner);
        PyErr_Format(PyExc_TypeError, "expected a superstep store, got %.100s",
                     Py_TYPE(o)->tp_name);
        return NULL;
    }
    sst_store *st = ((store_obj *)inner)->st;
    Py_DECREF(inner);
    if (st == NULL) {
        PyErr_SetString(PyExc_ValueError, "the store is closed");
    }
    return st;
}

/* ---- hooks the store calls ---- */

/* embed(texts) -> a list of @p dims numbers per text. */
static sst_code embed_hook(void *ud, const char *const *texts, size_t n, size_t dims, float *out,
                           sst_error *err) {
    PyGILState_STATE gil = PyGILState_Ensure();
    sst_code rc = SST_OK;
    PyObject *list = PyList_New((Py_ssize_t)n);
    for (size_t i = 0; list != NULL && i < n; i++) {
        PyObject *s = PyUnicode_FromString(texts[i]);
        if (s == NULL) {
            Py_CLEAR(list);
            break;
        }
        PyList_SET_ITEM(list, (Py_ssize_t)i, s);
    }
    PyObject *res = list != NULL ? PyObject_CallOneArg((PyObject *)ud, list) : NULL;
    Py_XDECREF(list);
    PyObject *seq = res != NULL ? PySequence_Fast(res, "embed: expected a list of vectors") : NULL;
    Py_XDECREF(res);
    if (seq != NULL && (size_t)PySequence_Fast_GET_SIZE(seq) != n) {
        PyErr_Format(PyExc_ValueError, "embed: %zd vectors for %zu texts",
                     PySequence_Fast_GET_SIZE(seq), n);
        Py_CLEAR(seq);
    }
    for (size_t i = 0; seq != NULL && i < n; i++) {
        PyObject *vec = PySequence_Fast(PySequence_Fast_GET_ITEM(seq, (Py_ssize_t)i),
                                        "embed: a vector must be a list of numbers");
        if (vec != NULL && (size_t)PySequence_Fast_GET_SIZE(vec) != dims) {
            PyErr_Format(PyExc_ValueError, "embed: vector %zu has %zd numbers, the index %zu", i,
                         PySequence_Fast_GET_SIZE(vec), dims);
            Py_CLEAR(vec);
        }
        for (size_t k = 0; vec != NULL && k < dims; k++) {
            double d = PyFloat_AsDouble(PySequence_Fast_GET_ITEM(vec, (Py_ssize_t)k));
            if (d == -1.0 && PyErr_Occurred()) {
                Py_CLEAR(vec);
                break;
            }
            out[i * dims + k] = (float)d;
        }
        if (vec == NULL) {
            Py_CLEAR(seq);
        }
        Py_XDECREF(vec);
    }
    if (seq == NULL) {
        sstpy_fail_with_exception(err, SST_EINVAL);
        rc = err->code;
    }
    Py_XDECREF(seq);
    PyGILState_Release(gil);
    return rc;
}

static int64_t manual_clock(void *ud) {
    return atomic_load(&((store_obj *)ud)->clock_us);
}

/* ---- arguments ---- */

/* A tuple of labels as a C array (borrowed from @p keep's str objects). */
typedef struct labels {
    const char **v;
    size_t n;
    PyObject *keep;
} labels;

static int labels_from(PyObject *o, labels *out, const char *what) {
    memset(out, 0, sizeof *out);
    if (o == NULL || o == Py_None) {
        return 0;
    }
    if (PyUnicode_Check(o)) {
        PyErr_Format(PyExc_TypeError, "%s: expected a tuple of str, got a str", what);
        return -1;
    }
    if ((out->keep = PySequence_Fast(o, what)) == NULL) {
        return -1;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(out->keep);
    out->v = PyMem_Calloc((size_t)(n > 0 ? n : 1), sizeof *out->v);
    if (out->v == NULL) {
        Py_CLEAR(out->keep);
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *s = PySequence_Fast_GET_ITEM(out->keep, i);
        if (!PyUnicode_Check(s)) {
            PyErr_Format(PyExc_TypeError, "%s: label %zd is a %.100s, not a str", what, i,
                         Py_TYPE(s)->tp_name);
        }
        if (!PyUnicode_Check(s) || (out->v[i] = PyUnicode_AsUTF8(s)) == NULL) {
            PyMem_Free(out->v);
            Py_CLEAR(out->keep);
            return -1;
        }
    }
    out->n = (size_t)n;
    return 0;
}

static void labels_free(labels *l) {
    PyMem_Free(l->v);
    Py_CLEAR(l->keep);
    l->v = NULL;
}

static store_obj *open_store(PyObject *self) {
    store_obj *s = (store_obj *)self;
    if (s->st == NULL) {
        PyErr_SetString(PyExc_ValueError, "the store is closed");
        return NULL;
    }
    return s;
}

/* ---- _core.Store ---- */

/*
 * Store(kind, target=None, *, dims=0, fields=None, embed=None, default_ttl=0.0,
 *       refresh_on_read=True, omit_expired=False, sweep_interval_minutes=0.0,
 *       manual_clock=False): kind "memory", "sqlite" (target: a path) or "postgres"
 * (target: a URL or libpq string; None: the PG* variables).
 */
static int store_init(PyObject *self, PyObject *args, PyObject *kw) {
    static char *kwn[] = {"kind",
                          "target",
                          "dims",
                          "fields",
                          "embed",
                          "default_ttl",
                          "refresh_on_read",
                          "omit_expired",
                          "sweep_interval_minutes",
                          "manual_clock",
                          NULL};
    const char *kind, *target = NULL;
    Py_ssize_t dims = 0;
    PyObject *fields = Py_None, *embed = Py_None;
    double ttl = 0.0, sweep = 0.0;
    int refresh = 1, omit = 0, manual = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "s|z$nOOdppdp", kwn, &kind, &target, &dims, &fields,
                                     &embed, &ttl, &refresh, &omit, &sweep, &manual)) {
        return -1;
    }
    store_obj *s = (store_obj *)self;
    if (s->st != NULL) {
        PyErr_SetString(PyExc_RuntimeError, "Store: already open");
        return -1;
    }
    if (dims < 0 || (dims > 0 && !PyCallable_Check(embed))) {
        PyErr_SetString(PyExc_ValueError,
                        dims < 0 ? "index: dims must be positive"
                                 : "index: embed must be a function of a list of texts");
        return -1;
    }
    labels lf;
    if (labels_from(fields, &lf, "index fields") < 0) {
        return -1;
    }
    sst_store_opts o;
    sst_store_opts_init(&o);
    o.index.dims = (size_t)dims;
    o.index.fields = lf.v;
    o.index.n_fields = lf.n;
    if (dims > 0) {
        Py_XSETREF(s->embed, Py_NewRef(embed));
        o.index.embed = embed_hook;
        o.index.embed_user_data = s->embed;
    }
    o.default_ttl_minutes = ttl;
    o.refresh_on_read = refresh != 0;
    o.omit_expired = omit != 0;
    o.sweep_interval_minutes = sweep;
    if (manual) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        atomic_store(&s->clock_us, (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000);
        s->manual = true;
        o.clock = manual_clock;
        o.clock_user_data = s;
    }
    sst_error err = {0};
    bool known = true;
    Py_BEGIN_ALLOW_THREADS if (strcmp(kind, "memory") == 0) {
        s->st = sst_memory_store_new(&o, &err);
    }
    else if (strcmp(kind, "sqlite") == 0 && target != NULL) {
        s->st = sst_sqlite_store_new(target, &o, &err);
    }
    else if (strcmp(kind, "postgres") == 0) {
        s->st = sst_postgres_store_new(target, &o, &err);
    }
    else {
        known = false;
    }
    Py_END_ALLOW_THREADS labels_free(&lf);
    if (!known) {
        PyErr_Format(PyExc_ValueError,
                     "Store: unknown kind '%s' (memory, sqlite with a path, or postgres)", kind);
        return -1;
    }
    if (s->st == NULL) {
        sstpy_raise(&err, NULL);
        return -1;
    }
    return 0;
}

/* put(namespace, key, value, ttl=0.0, index=None): ttl minutes, 0 the default, -1 none;
 * index: None (the store's fields), False (none) or a list of paths. */
static PyObject *store_put(PyObject *self, PyObject *args, PyObject *kw) {
    static char *kwn[] = {"namespace", "key", "value", "ttl", "index", NULL};
    PyObject *ns, *value, *index = Py_None;
    const char *key;
    double ttl = SST_STORE_TTL_DEFAULT;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OsO|dO", kwn, &ns, &key, &value, &ttl, &index)) {
        return NULL;
    }
    store_obj *s = open_store(self);
    if (s == NULL) {
        return NULL;
    }
    labels l, lf = {0};
    if (labels_from(ns, &l, "namespace") < 0) {
        return NULL;
    }
    sst_store_put_opts o;
    sst_store_put_opts_init(&o);
    o.ttl_minutes = ttl;
    if (index == Py_False) {
        o.no_index = true;
    } else if (index != Py_None && index != Py_True) {
        if (labels_from(index, &lf, "index") < 0) {
            labels_free(&l);
            return NULL;
        }
        o.index_fields = lf.v;
        o.n_index_fields = lf.n;
    }
    sst_value *v = sstpy_to_value(value, "store value");
    PyObject *ret = NULL;
    if (v != NULL) {
        sst_error err = {0};
        sst_code rc;
        Py_BEGIN_ALLOW_THREADS rc = sst_store_put(s->st, l.v, l.n, key, v, &o, &err);
        Py_END_ALLOW_THREADS ret = rc == SST_OK ? Py_NewRef(Py_None) : sstpy_raise(&err, NULL);
        sst_value_unref(v);
    }
    labels_free(&l);
    labels_free(&lf);
    return ret;
}

/* get(namespace, key, refresh_ttl=-1) -> item dict or None */
static PyObject *store_get(PyObject *self, PyObject *args) {
    PyObject *ns;
    const char *key;
    int refresh = -1;
    if (!PyArg_ParseTuple(args, "Os|i", &ns, &key, &refresh)) {
        return NULL;
    }
    store_obj *s = open_store(self);
    labels l;
    if (s == NULL || labels_from(ns, &l, "namespace") < 0) {
        return NULL;
    }
    sst_error err = {0};
    sst_value *v;
    Py_BEGIN_ALLOW_THREADS v = sst_store_get(s->st, l.v, l.n, key, refresh, &err);
    Py_END_ALLOW_THREADS labels_free(&l);
    return sstpy_take_value(v, &err, NULL);
}

/* delete(namespace, key) */
static PyObject *store_delete(PyObject *self, PyObject *args) {
    PyObject *ns;
    const char *key;
    if (!PyArg_ParseTuple(args, "Os", &ns, &key)) {
        return NULL;
    }
    store_obj *s = open_store(self);
    labels l;
    if (s == NULL || labels_from(ns, &l, "namespace") < 0) {
        return NULL;
    }
    sst_error err = {0};
    sst_code rc;
    Py_BEGIN_ALLOW_THREADS rc = sst_store_delete(s->st, l.v, l.n, key, &err);
    Py_END_ALLOW_THREADS labels_free(&l);
    if (rc != SST_OK) {
        return sstpy_raise(&err, NULL);
    }
    Py_RETURN_NONE;
}

/* search(prefix, query=None, filter=None, limit=10, offset=0, refresh_ttl=-1) -> [item] */
static PyObject *store_search(PyObject *self, PyObject *args, PyObject *kw) {
    static char *kwn[] = {"prefix", "query", "filter", "limit", "offset", "refresh_ttl", NULL};
    PyObject *prefix, *filter = Py_None;
    const char *query = NULL;
    Py_ssize_t limit = 10, offset = 0;
    int refresh = -1;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|zOnni", kwn, &prefix, &query, &filter, &limit,
                                     &offset, &refresh)) {
        return NULL;
    }
    if (limit < 0 || offset < 0) {
        return PyErr_Format(PyExc_ValueError, "search: %s must not be negative",
                            limit < 0 ? "limit" : "offset");
    }
    store_obj *s = open_store(self);
    labels l;
    if (s == NULL || labels_from(prefix, &l, "namespace prefix") < 0) {
        return NULL;
    }
    sst_value *f = NULL;
    if (filter != Py_None && (f = sstpy_to_value(filter, "filter")) == NULL) {
        labels_free(&l);
        return NULL;
    }
    sst_store_search_opts q;
    sst_store_search_opts_init(&q);
    q.prefix = l.v;
    q.prefix_len = l.n;
    q.filter = f;
    q.query = query;
    q.limit = (size_t)limit;
    q.offset = (size_t)offset;
    q.refresh_ttl = refresh;
    sst_error err = {0};
    sst_value *v = NULL;
    if (limit == 0) {
        v = sst_array_empty();
    } else {
        Py_BEGIN_ALLOW_THREADS v = sst_store_search(s->st, &q, &err);
        Py_END_ALLOW_THREADS
    }
    sst_value_unref(f);
    labels_free(&l);
    return sstpy_take_value(v, &err, NULL);
}

/* list_namespaces(prefix=None, suffix=None, max_depth=0, limit=100, offset=0) -> [list] */
static PyObject *store_list_namespaces(PyObject *self, PyObject *args, PyObject *kw) {
    static char *kwn[] = {"prefix", "suffix", "max_depth", "limit", "offset", NULL};
    PyObject *prefix = Py_None, *suffix = Py_None;
    Py_ssize_t depth = 0, limit = 100, offset = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|OOnnn", kwn, &prefix, &suffix, &depth, &limit,
                                     &offset)) {
        return NULL;
    }
    if (depth < 0 || limit < 0 || offset < 0) {
        return PyErr_Format(PyExc_ValueError, "list_namespaces: negative %s",
                            depth < 0   ? "max_depth"
                            : limit < 0 ? "limit"
                                        : "offset");
    }
    store_obj *s = open_store(self);
    labels lp, ls;
    if (s == NULL || labels_from(prefix, &lp, "prefix") < 0) {
        return NULL;
    }
    if (labels_from(suffix, &ls, "suffix") < 0) {
        labels_free(&lp);
        return NULL;
    }
    sst_store_list_opts q;
    sst_store_list_opts_init(&q);
    q.prefix = lp.v;
    q.prefix_len = lp.n;
    q.suffix = ls.v;
    q.suffix_len = ls.n;
    q.max_depth = (size_t)depth;
    q.limit = (size_t)limit;
    q.offset = (size_t)offset;
    sst_error err = {0};
    sst_value *v = NULL;
    if (limit == 0) {
        v = sst_array_empty();
    } else {
        Py_BEGIN_ALLOW_THREADS v = sst_store_list_namespaces(s->st, &q, &err);
        Py_END_ALLOW_THREADS
    }
    labels_free(&lp);
    labels_free(&ls);
    return sstpy_take_value(v, &err, NULL);
}

/* sweep_ttl() -> how many expired items were deleted */
static PyObject *store_sweep_ttl(PyObject *self, PyObject *unused) {
    (void)unused;
    store_obj *s = open_store(self);
    if (s == NULL) {
        return NULL;
    }
    size_t n = 0;
    sst_error err = {0};
    sst_code rc;
    Py_BEGIN_ALLOW_THREADS rc = sst_store_sweep_ttl(s->st, &n, &err);
    Py_END_ALLOW_THREADS if (rc != SST_OK) {
        return sstpy_raise(&err, NULL);
    }
    return PyLong_FromSize_t(n);
}

/* advance_clock(seconds): moves a manual clock forward. */
static PyObject *store_advance_clock(PyObject *self, PyObject *arg) {
    store_obj *s = open_store(self);
    if (s == NULL) {
        return NULL;
    }
    double secs = PyFloat_AsDouble(arg);
    if (secs == -1.0 && PyErr_Occurred()) {
        return NULL;
    }
    if (!s->manual) {
        PyErr_SetString(PyExc_ValueError,
                        "advance_clock: the store has the system clock (open it with "
                        "manual_clock=True)");
        return NULL;
    }
    if (!(secs >= 0 && secs <= 1e9)) {
        PyErr_SetString(PyExc_ValueError, "advance_clock: seconds must be from 0 to 1e9");
        return NULL;
    }
    atomic_fetch_add(&s->clock_us, (int64_t)(secs * 1e6));
    Py_RETURN_NONE;
}

static PyObject *store_dims(PyObject *self, void *closure) {
    (void)closure;
    store_obj *s = (store_obj *)self;
    return PyLong_FromSize_t(s->st != NULL ? sst_store_dims(s->st) : 0);
}

static PyObject *store_close(PyObject *self, PyObject *unused) {
    (void)unused;
    store_obj *s = (store_obj *)self;
    sst_store *st = s->st;
    s->st = NULL;
    Py_BEGIN_ALLOW_THREADS sst_store_free(st);
    Py_END_ALLOW_THREADS Py_RETURN_NONE;
}

static int store_traverse(PyObject *self, visitproc visit, void *arg) {
    Py_VISIT(((store_obj *)self)->embed);
    return 0;
}

static void store_dealloc(PyObject *self) {
    store_obj *s = (store_obj *)self;
    PyObject_GC_UnTrack(self);
    sst_store *st = s->st;
    s->st = NULL;
    Py_BEGIN_ALLOW_THREADS sst_store_free(st);
    Py_END_ALLOW_THREADS Py_CLEAR(s->embed);
    Py_TYPE(self)->tp_free(self);
}

static PyMethodDef store_methods[] = {
    {"put", (PyCFunction)(void (*)(void))store_put, METH_VARARGS | METH_KEYWORDS, NULL},
    {"get", store_get, METH_VARARGS, NULL},
    {"delete", store_delete, METH_VARARGS, NULL},
    {"search", (PyCFunction)(void (*)(void))store_search, METH_VARARGS | METH_KEYWORDS, NULL},
    {"list_namespaces", (PyCFunction)(void (*)(void))store_list_namespaces,
     METH_VARARGS | METH_KEYWORDS, NULL},
    {"sweep_ttl", store_sweep_ttl, METH_NOARGS, NULL},
    {"advance_clock", store_advance_clock, METH_O, NULL},
    {"close", store_close, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef store_getset[] = {{"dims", store_dims, NULL, "The index's vector size.", NULL},
                                     {NULL, NULL, NULL, NULL, NULL}};

static PyTypeObject store_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "superstep._core.Store",
    .tp_basicsize = sizeof(store_obj),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "A long-term store (superstep.store wraps it).",
    .tp_new = PyType_GenericNew,
    .tp_init = store_init,
    .tp_dealloc = store_dealloc,
    .tp_traverse = store_traverse,
    .tp_methods = store_methods,
    .tp_getset = store_getset,
};

int sstpy_store_init(PyObject *m) {
    if (PyType_Ready(&store_type) < 0) {
        return -1;
    }
    Py_INCREF(&store_type);
    if (PyModule_AddObject(m, "Store", (PyObject *)&store_type) < 0) {
        Py_DECREF(&store_type);
        return -1;
    }
    return 0;
}
