/* SPDX-License-Identifier: MIT */
/*
 * superstep._core.Server: the C server (superstep/server.h) run inside the
 * interpreter, so that `python3 -m superstep serve langgraph.json` serves
 * Python graphs next to Lua ones (python/superstep/serve.py drives it;
 * docs/python.md "Serving").
 *
 * A Python graph is a shared graph source (sst_graph_source): its compiled
 * graph is thread-safe, so every worker and the API threads use the one the
 * config named; its nodes take the GIL only while they run Python, as in an
 * invoke. The GIL is released around every call that waits for the server's
 * threads (start, close): they may be running nodes that need it.
 */
#include "serve.h"

#ifdef SSTPY_NO_SERVER
/* Built against a library without the server (pip install against an installed
 * libsuperstep): no Server type; superstep.serve says so. */
int sstpy_serve_init(PyObject *m) {
    (void)m;
    return 0;
}
#else
#include <stdio.h>
#include <string.h>

#include "core.h"
#include "superstep/server.h"

/*
 * The start of _core.Compiled (python/src/graph.c's compiled_obj): its first member is
 * the compiled graph. Read only after checking the type's name.
 */
typedef struct compiled_head {
    PyObject_HEAD sst_compiled_graph *cg;
} compiled_head;

static const sst_compiled_graph *compiled_of(PyObject *o) {
    if (o == NULL || strcmp(Py_TYPE(o)->tp_name, "superstep._core.Compiled") != 0) {
        PyErr_Format(PyExc_TypeError,
                     "a graph to serve must be a compiled graph (superstep), got %.100s",
                     o != NULL ? Py_TYPE(o)->tp_name : "nothing");
        return NULL;
    }
    return ((compiled_head *)o)->cg;
}

/* ---- a Python graph as a source: shared; the object kept alive until the server goes ---- */

static void *py_acquire(void *ud, const sst_compiled_graph **graph, sst_error *err) {
    (void)err;
    *graph = ((compiled_head *)ud)->cg;
    return ud;
}

static void py_release(void *ud, void *inst) {
    (void)ud;
    (void)inst;
}

static void py_free(void *ud) {
    PyGILState_STATE gil = PyGILState_Ensure();
    Py_DECREF((PyObject *)ud);
    PyGILState_Release(gil);
}

/* ---- _core.Server ---- */

typedef struct server_obj {
    PyObject_HEAD sst_server *s;
    PyObject *loader;  /* borrowed while load_config runs: loader(graph_id, spec) -> Compiled */
    PyObject *pending; /* owned: the exception the loader raised, re-raised by load_config */
    char cmd[8];       /* "serve" or "worker", for log lines */
} server_obj;

static void log_line(const char *line, void *ud) {
    fprintf(stderr, "superstep %s: %s\n", (const char *)ud, line);
}

static int server_init(PyObject *self, PyObject *args, PyObject *kw) {
    static char *kwn[] = {"host",
                          "port",
                          "db",
                          "workers",
                          "auth_token",
                          "insecure_listen_any",
                          "shared_db",
                          "max_body",
                          "max_connections",
                          "http_threads",
                          "timeout",
                          "stream_backlog",
                          "runs_per_thread",
                          "lease",
                          "web_dir",
                          "no_web",
                          "quiet",
                          "workers_only",
                          NULL};
    server_obj *o = (server_obj *)self;
    sst_server_opts so;
    sst_server_opts_init(&so);
    const char *host = so.host, *db = so.db, *token = NULL, *web_dir = NULL;
    unsigned port = so.port, workers = so.workers, max_conn = 0, http_threads = 0, timeout = 0;
    unsigned per_thread = 0, lease = 0;
    unsigned long long max_body = 0, backlog = 0;
    int any = 0, shared = 0, no_web = 0, quiet = 0, workers_only = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|$sIsIzppKIIIKIIzppp", kwn, &host, &port, &db,
                                     &workers, &token, &any, &shared, &max_body, &max_conn,
                                     &http_threads, &timeout, &backlog, &per_thread, &lease,
                                     &web_dir, &no_web, &quiet, &workers_only)) {
        return -1;
    }
    if (o->s != NULL) {
        PyErr_SetString(PyExc_RuntimeError, "Server: already initialised");
        return -1;
    }
    so.host = host;
    so.port = port;
    so.db = db;
    so.workers = workers;
    so.auth_token = token;
    so.insecure_listen_any = any != 0;
    so.shared_db = shared != 0;
    so.max_body_bytes = max_body != 0 ? (size_t)max_body : so.max_body_bytes;
    so.max_connections = max_conn != 0 ? max_conn : so.max_connections;
    so.http_threads = http_threads != 0 ? http_threads : so.http_threads;
    so.connection_timeout = timeout != 0 ? timeout : so.connection_timeout;
    so.stream_backlog = backlog != 0 ? (size_t)backlog : so.stream_backlog;
    so.runs_per_thread = per_thread != 0 ? per_thread : so.runs_per_thread;
    so.lease_s = lease != 0 ? lease : so.lease_s;
    so.web_dir = web_dir;
    so.no_web = no_web != 0;
    so.workers_only = workers_only != 0;
    snprintf(o->cmd, sizeof o->cmd, "%s", workers_only ? "worker" : "serve");
    so.log = quiet ? NULL : log_line;
    so.log_user_data = o->cmd;
    sst_error err = {0};
    sst_server *s;
    Py_BEGIN_ALLOW_THREADS s = sst_server_new(&so, &err);
    Py_END_ALLOW_THREADS if (s == NULL) {
        PyErr_Format(PyExc_RuntimeError, "%s", err.msg);
        return -1;
    }
    o->s = s;
    return 0;
}

static sst_server *open_server(server_obj *o) {
    if (o->s == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "Server: closed");
    }
    return o->s;
}

/* Adds @p compiled (a _core.Compiled) as graph @p id; -1 with an exception set. */
static int add_compiled(server_obj *o, const char *id, PyObject *compiled, const char *path) {
    if (compiled_of(compiled) == NULL) {
        return -1;
    }
    sst_graph_source src = {.acquire = py_acquire,
                            .release = py_release,
                            .free = py_free,
                            .user_data = Py_NewRef(compiled),
                            .shared = true,
                            .path = path};
    sst_error err = {0};
    if (sst_server_add_graph_source(o->s, id, &src, &err) != SST_OK) {
        PyErr_Format(PyExc_ValueError, "%s", err.msg);
        return -1;
    }
    return 0;
}

/* add_graph(graph_id, compiled, path=None): serves a compiled graph (its _core.Compiled). */
static PyObject *server_add_graph(PyObject *self, PyObject *args) {
    server_obj *o = (server_obj *)self;
    const char *id, *path = NULL;
    PyObject *compiled;
    if (!PyArg_ParseTuple(args, "sO|z", &id, &compiled, &path) || open_server(o) == NULL ||
        add_compiled(o, id, compiled, path) < 0) {
        return NULL;
    }
    Py_RETURN_NONE;
}

/* add_script(graph_id, path): serves a Lua script (sst_server_add_graph). */
static PyObject *server_add_script(PyObject *self, PyObject *args) {
    server_obj *o = (server_obj *)self;
    const char *id, *path;
    if (!PyArg_ParseTuple(args, "ss", &id, &path) || open_server(o) == NULL) {
        return NULL;
    }
    sst_error err = {0};
    if (sst_server_add_graph(o->s, id, path, &err) != SST_OK) {
        return PyErr_Format(PyExc_ValueError, "%s", err.msg);
    }
    Py_RETURN_NONE;
}

/* The loader sst_server_load_config calls for a Python spec: the Python loader's graph. */
static sst_code c_loader(void *ud, sst_server *s, const char *graph_id, const char *spec,
                         sst_error *err) {
    (void)s;
    server_obj *o = ud; /* load_config holds the GIL while the config is read */
    PyObject *compiled = PyObject_CallFunction(o->loader, "ss", graph_id, spec);
    const char *colon = strrchr(spec, ':');
    char path[4096];
    snprintf(path, sizeof path, "%.*s", (int)(colon != NULL ? colon - spec : (long)strlen(spec)),
             spec);
    if (compiled == NULL || add_compiled(o, graph_id, compiled, path) < 0) {
        Py_XDECREF(compiled);
        PyObject *type, *value, *tb;
        PyErr_Fetch(&type, &value, &tb);
        PyErr_NormalizeException(&type, &value, &tb);
        if (tb != NULL && value != NULL) {
            PyException_SetTraceback(value, tb);
        }
        PyObject *text = value != NULL ? PyObject_Str(value) : NULL;
        const char *msg = text != NULL ? PyUnicode_AsUTF8(text) : NULL;
        err->code = SST_EINVAL;
        snprintf(err->msg, sizeof err->msg, "serve: graph '%s' (%s): %s: %s", graph_id, spec,
                 type != NULL ? ((PyTypeObject *)type)->tp_name : "error", msg != NULL ? msg : "");
        PyErr_Clear();
        Py_XDECREF(text);
        Py_XDECREF(type);
        Py_XDECREF(tb);
        Py_XSETREF(o->pending, value);
        return SST_EINVAL;
    }
    Py_DECREF(compiled);
    return SST_OK;
}

/*
 * load_config(path, loader): reads a langgraph.json (sst_server_load_config); each
 * Python graph is loader(graph_id, "dir/file.py:attr") -> a _core.Compiled. Raises
 * RuntimeError with the server's message (caused by what the loader raised).
 */
static PyObject *server_load_config(PyObject *self, PyObject *args) {
    server_obj *o = (server_obj *)self;
    const char *path;
    PyObject *loader;
    if (!PyArg_ParseTuple(args, "sO", &path, &loader) || open_server(o) == NULL) {
        return NULL;
    }
    o->loader = loader;
    sst_server_set_graph_loader(o->s, c_loader, o);
    sst_error err = {0};
    sst_code rc = sst_server_load_config(o->s, path, &err);
    sst_server_set_graph_loader(o->s, NULL, NULL);
    o->loader = NULL;
    if (rc != SST_OK) {
        PyObject *e = PyObject_CallFunction(PyExc_RuntimeError, "s", err.msg);
        if (e != NULL && o->pending != NULL) {
            PyException_SetCause(e, o->pending); /* steals */
            o->pending = NULL;
        }
        Py_CLEAR(o->pending);
        if (e != NULL) {
            PyErr_SetObject(PyExc_RuntimeError, e);
            Py_DECREF(e);
        }
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyObject *server_start(PyObject *self, PyObject *unused) {
    (void)unused;
    server_obj *o = (server_obj *)self;
    if (open_server(o) == NULL) {
        return NULL;
    }
    sst_error err = {0};
    sst_code rc;
    Py_BEGIN_ALLOW_THREADS rc = sst_server_start(o->s, &err);
    Py_END_ALLOW_THREADS if (rc != SST_OK) {
        return PyErr_Format(PyExc_RuntimeError, "%s", err.msg);
    }
    Py_RETURN_NONE;
}

static PyObject *server_port(PyObject *self, void *closure) {
    (void)closure;
    return PyLong_FromUnsignedLong(sst_server_port(((server_obj *)self)->s));
}

/* stop(): asks the server to stop (any thread; returns at once). */
static PyObject *server_stop(PyObject *self, PyObject *unused) {
    (void)unused;
    sst_server_stop(((server_obj *)self)->s);
    Py_RETURN_NONE;
}

/* Stops, waits for the server's threads (the GIL released: they may be running nodes) and
 * frees the server. */
static void close_server(server_obj *o) {
    sst_server *s = o->s;
    o->s = NULL;
    if (s != NULL) {
        Py_BEGIN_ALLOW_THREADS sst_server_stop(s);
        sst_server_wait(s);
        sst_server_free(s);
        Py_END_ALLOW_THREADS
    }
}

/* close(): stops gracefully (runs stop at a superstep boundary, back to the queue). */
static PyObject *server_close(PyObject *self, PyObject *unused) {
    (void)unused;
    close_server((server_obj *)self);
    Py_RETURN_NONE;
}

static void server_dealloc(PyObject *self) {
    server_obj *o = (server_obj *)self;
    close_server(o);
    Py_CLEAR(o->pending);
    Py_TYPE(self)->tp_free(self);
}

static PyMethodDef server_methods[] = {
    {"add_graph", server_add_graph, METH_VARARGS,
     "add_graph(graph_id, compiled, path=None): serve a compiled graph."},
    {"add_script", server_add_script, METH_VARARGS,
     "add_script(graph_id, path): serve a Lua script."},
    {"load_config", server_load_config, METH_VARARGS,
     "load_config(path, loader): read a langgraph.json; Python graphs through loader."},
    {"start", server_start, METH_NOARGS, "Start the workers and listening."},
    {"stop", server_stop, METH_NOARGS, "Ask the server to stop; returns at once."},
    {"close", server_close, METH_NOARGS, "Stop gracefully, wait, and free the server."},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef server_getset[] = {
    {"port", server_port, NULL, "The port it listens on (0 before start).", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyTypeObject server_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "superstep._core.Server",
    .tp_basicsize = sizeof(server_obj),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "`superstep serve` in this process (superstep.serve drives it).",
    .tp_new = PyType_GenericNew,
    .tp_init = server_init,
    .tp_dealloc = server_dealloc,
    .tp_methods = server_methods,
    .tp_getset = server_getset,
};

int sstpy_serve_init(PyObject *m) {
    if (PyType_Ready(&server_type) < 0) {
        return -1;
    }
    Py_INCREF(&server_type);
    if (PyModule_AddObject(m, "Server", (PyObject *)&server_type) < 0) {
        Py_DECREF(&server_type);
        return -1;
    }
    return 0;
}
#endif /* SSTPY_NO_SERVER */
