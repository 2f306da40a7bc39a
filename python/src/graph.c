/* SPDX-License-Identifier: MIT */
/*
 * _core.Graph (a builder over sst_graph) and _core.Compiled (an
 * sst_compiled_graph with its checkpointer and engine): what
 * superstep.graph's StateGraph and CompiledStateGraph are made of.
 *
 * Python objects given to the engine as user data (nodes, routers, custom
 * reducers) are kept alive by the builder's `keep` list, which the compiled
 * graph holds. A node object is called as node(state, config, is_send) and
 * returns None or (updates, gotos); see python/superstep/graph.py.
 *
 * An invoke's sstpy_run (runner.c) reaches its nodes through the run's
 * config: its address is the configurable key "__pyrun__" (keys starting
 * "__" are never copied into checkpoint metadata), valid while that invoke
 * runs. The run and state methods of _core.Compiled are runner.c's.
 */
#include "core.h"

#include <stdint.h>
#include <string.h>

/* ---- per-invoke context ---- */

/* ---- trampolines: the engine calls Python ---- */

/* Whether the exception set is superstep._aio.RunCancelled (its run was stopped). */
static bool run_stopped_in_node(void) {
    PyObject *t, *v, *tb;
    PyErr_Fetch(&t, &v, &tb);
    bool yes = false;
    if (t != NULL && PyType_Check(t)) {
        PyObject *a = PyObject_GetAttrString(t, "_superstep_run_cancelled");
        yes = a != NULL;
        Py_XDECREF(a);
        PyErr_Clear();
    }
    PyErr_Restore(t, v, tb); /* the node's exception, as it was */
    return yes;
}

/* The exception set in the node is the task's failure (or its interrupt). */
static sst_code node_exception(sst_node_ctx *ctx, PyObject *node) {
    if (sstpy.graph_interrupt != NULL && PyErr_ExceptionMatches(sstpy.graph_interrupt)) {
        PyErr_Clear();
        return SST_EINTERRUPT;
    }
    if (PyErr_ExceptionMatches(PyExc_KeyboardInterrupt) || run_stopped_in_node()) {
        /* Ctrl-C landed in this node's Python code (the main thread), or the node's run was
         * stopped (superstep._aio.RunCancelled): the task is cancelled (never retried; its
         * work runs again on resume) and the run stops. */
        sstpy_run_cancel(ctx, "__pyrun__");
        sst_error err = {0};
        sstpy_fail_with_exception(&err, SST_ECANCELLED);
        return sst_node_fail(ctx, SST_ECANCELLED, "%s", err.msg);
    }
    /* Ask the node's retry policy (RetryPolicy.retry_on) whether this one is retried. */
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    sst_code code = SST_EINVAL; /* not transient: not retried */
    if (value != NULL) {
        PyObject *yes = PyObject_CallMethod(node, "_retryable", "O", value);
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

static sst_code apply_goto(sst_node_ctx *ctx, PyObject *target, sst_error *err) {
    if (PyUnicode_Check(target)) {
        const char *s = PyUnicode_AsUTF8(target);
        if (s == NULL) {
            return SST_EINVAL;
        }
        return sst_node_goto(ctx, s, err);
    }
    sst_value *send = sstpy_to_value(target, "Command goto");
    if (send == NULL) {
        return SST_ETYPE;
    }
    const sst_value *to = sst_object_get(send, "__send__");
    const sst_value *arg = sst_object_get(send, "arg");
    if (to == NULL || !sst_is_string(to)) {
        sst_value_unref(send);
        PyErr_Format(PyExc_TypeError, "Command goto: expected a node name or a Send, got %.100s",
                     Py_TYPE(target)->tp_name);
        return SST_ETYPE;
    }
    sst_code rc = sst_node_goto_send(ctx, sst_string_cstr(to),
                                     sst_value_ref(arg != NULL ? arg : sst_null()), err);
    sst_value_unref(send);
    return rc;
}

/*
 * A node's Command(graph=Command.PARENT, update=, goto=), given as (update, goto, True):
 * the parent graph's node applies them (sst_node_parent_command). Returns SST_EPARENT,
 * which the node returns; a Python error is left set.
 */
static sst_code apply_parent(sst_node_ctx *ctx, PyObject *update, PyObject *go) {
    sst_value *u = NULL, *g = NULL;
    if (update != Py_None && (u = sstpy_to_value(update, "Command update")) == NULL) {
        return SST_ETYPE;
    }
    if (go != Py_None && (g = sstpy_to_value(go, "Command goto")) == NULL) {
        sst_value_unref(u);
        return SST_ETYPE;
    }
    return sst_node_parent_command(ctx, u, g);
}

/* Applies a node's (updates, gotos); a Python error is left set, an engine one in @p err. */
static sst_code apply_result(sst_node_ctx *ctx, PyObject *res, sst_error *err) {
    if (res == Py_None) {
        return SST_OK;
    }
    if (PyTuple_Check(res) && PyTuple_GET_SIZE(res) == 3) {
        return apply_parent(ctx, PyTuple_GET_ITEM(res, 0), PyTuple_GET_ITEM(res, 1));
    }
    if (!PyTuple_Check(res) || PyTuple_GET_SIZE(res) != 2) {
        PyErr_SetString(PyExc_TypeError, "node wrapper: expected (updates, gotos)");
        return SST_ETYPE;
    }
    PyObject *updates = PyTuple_GET_ITEM(res, 0);
    PyObject *gotos = PyTuple_GET_ITEM(res, 1);
    if (updates != Py_None) {
        if (!PyList_Check(updates)) {
            PyErr_SetString(PyExc_TypeError, "node wrapper: updates must be a list");
            return SST_ETYPE;
        }
        Py_ssize_t n = PyList_GET_SIZE(updates);
        for (Py_ssize_t i = 0; i < n; i++) {
            sst_value *u = sstpy_to_value(PyList_GET_ITEM(updates, i), "node update");
            if (u == NULL) {
                return SST_ETYPE;
            }
            sst_code rc =
                n == 1 ? sst_node_update_all(ctx, u, err) : sst_node_add_update(ctx, u, err);
            if (rc != SST_OK) {
                return rc;
            }
        }
    }
    if (gotos != Py_None) {
        if (!PyList_Check(gotos)) {
            PyErr_SetString(PyExc_TypeError, "node wrapper: gotos must be a list");
            return SST_ETYPE;
        }
        for (Py_ssize_t i = 0; i < PyList_GET_SIZE(gotos); i++) {
            sst_code rc = apply_goto(ctx, PyList_GET_ITEM(gotos, i), err);
            if (rc != SST_OK) {
                return rc;
            }
        }
    }
    return SST_OK;
}

/* @p state as the node or router object @p fn takes it: its msg_fields (graph.py) as
 * message objects. */
static PyObject *state_for(const sst_value *state, PyObject *fn) {
    static PyObject *name;
    if (name == NULL && (name = PyUnicode_InternFromString("msg_fields")) == NULL) {
        return NULL;
    }
    PyObject *fields = PyObject_GetAttr(fn, name);
    if (fields == NULL) {
        PyErr_Clear();
    }
    PyObject *o = sstpy_state_from_value(state, fields);
    Py_XDECREF(fields);
    return o;
}

static PyObject *node_state(sst_node_ctx *ctx, PyObject *node) {
    return state_for(sst_node_state(ctx), node);
}

static sst_code node_fn(sst_node_ctx *ctx, void *ud) {
    PyObject *node = ud;
    PyGILState_STATE gil = sstpy_gil_ensure();
    sstpy_run *r = sstpy_run_of(ctx, "__pyrun__");
    const sst_value *in = sst_node_input(ctx);
    sst_code rc = SST_OK;
    PyObject *arg = in != NULL ? sstpy_from_value(in) : node_state(ctx, node);
    if (arg == NULL) {
        rc = node_exception(ctx, node);
        PyGILState_Release(gil);
        return rc;
    }
    sst_node_ctx *prev = sstpy_current_ctx;
    sstpy_current_ctx = ctx;
    PyObject *res = PyObject_CallFunctionObjArgs(
        node, arg, r != NULL && r->pyconfig != NULL ? r->pyconfig : Py_None,
        in != NULL ? Py_True : Py_False, NULL);
    sstpy_current_ctx = prev;
    Py_DECREF(arg);
    if (res == NULL) {
        rc = node_exception(ctx, node);
    } else {
        sst_error err = {0};
        rc = apply_result(ctx, res, &err);
        Py_DECREF(res);
        if (rc != SST_OK && PyErr_Occurred()) {
            rc = node_exception(ctx, node);
        } else if (rc != SST_OK && rc != SST_EPARENT) {
            rc = sst_node_fail(ctx, rc, "%s", err.msg);
        }
    }
    PyGILState_Release(gil);
    return rc;
}

static sst_value *router_fn(const sst_value *state, void *ud, sst_error *err) {
    PyGILState_STATE gil = sstpy_gil_ensure();
    sst_value *out = NULL;
    PyObject *arg = state_for(state, ud);
    PyObject *res = arg != NULL ? PyObject_CallOneArg((PyObject *)ud, arg) : NULL;
    Py_XDECREF(arg);
    if (res != NULL) {
        out = sstpy_to_value(res, "router result");
        Py_DECREF(res);
    }
    if (out == NULL) {
        sstpy_fail_with_exception(err, SST_EINVAL);
    }
    PyGILState_Release(gil);
    return out;
}

/*
 * A node's cache key (LangGraph's CachePolicy.key_func): @p ud is graph.py's _CacheKey,
 * called with the node's input as the node sees it; it returns a str. An exception it
 * raises is the key's error: the engine then runs the node uncached (cache.h).
 */
static sst_value *cache_key_fn(const sst_value *input, void *ud, sst_error *err) {
    PyGILState_STATE gil = sstpy_gil_ensure();
    sst_value *out = NULL;
    PyObject *arg = state_for(input, ud);
    PyObject *res = arg != NULL ? PyObject_CallOneArg((PyObject *)ud, arg) : NULL;
    Py_XDECREF(arg);
    if (res != NULL && !PyUnicode_Check(res)) {
        PyErr_Format(PyExc_TypeError, "cache key: expected a str, got %.100s",
                     Py_TYPE(res)->tp_name);
        Py_CLEAR(res);
    }
    Py_ssize_t len = 0;
    const char *s = res != NULL ? PyUnicode_AsUTF8AndSize(res, &len) : NULL;
    if (s != NULL) {
        out = sst_string_newn(s, (size_t)len, err);
    } else {
        sstpy_fail_with_exception(err, SST_EINVAL);
    }
    Py_XDECREF(res);
    PyGILState_Release(gil);
    return out;
}

static sst_value *reduce_fn(void *ud, const char *field, sst_value *current,
                            const sst_value *update, sst_error *err) {
    PyGILState_STATE gil = sstpy_gil_ensure();
    sst_value *out = NULL;
    PyObject *cur = current != NULL ? sstpy_from_value(current) : Py_NewRef(Py_None);
    sst_value_unref(current);
    PyObject *upd = cur != NULL ? sstpy_from_value(update) : NULL;
    PyObject *res =
        upd != NULL ? PyObject_CallFunctionObjArgs((PyObject *)ud, cur, upd, NULL) : NULL;
    Py_XDECREF(cur);
    Py_XDECREF(upd);
    if (res != NULL) {
        char what[128];
        snprintf(what, sizeof what, "reducer result of field '%s'", field);
        out = sstpy_to_value(res, what);
        Py_DECREF(res);
    }
    if (out == NULL) {
        sstpy_fail_with_exception(err, SST_ETYPE);
    }
    PyGILState_Release(gil);
    return out;
}

/* A retry's wait, through Python's time.sleep (so that a test can patch it, as LangGraph
 * waits with time.sleep); the GIL is released while it sleeps. */
static void sleep_fn(uint64_t ms, void *ud) {
    (void)ud;
    PyGILState_STATE gil = sstpy_gil_ensure();
    PyObject *time = PyImport_ImportModule("time");
    PyObject *r =
        time != NULL ? PyObject_CallMethod(time, "sleep", "d", (double)ms / 1000.0) : NULL;
    if (r == NULL) {
        PyErr_Clear();
    }
    Py_XDECREF(r);
    Py_XDECREF(time);
    PyGILState_Release(gil);
}

/* ---- _core.Graph ---- */

typedef struct graph_obj {
    PyObject_HEAD sst_graph *g; /* owned */
    PyObject *keep;             /* list: objects the engine holds as user data */
} graph_obj;

static PyTypeObject graph_type;
static PyTypeObject compiled_type;

typedef struct compiled_obj {
    PyObject_HEAD sstpy_runner r; /* first, as sstpy_runner_obj: runner.c's methods use it */
    PyObject *graph;              /* the builder, for its keep list (or cg's owner) */
    PyObject *saver;              /* the Saver object, or None */
} compiled_obj;

static int graph_init(PyObject *self, PyObject *args, PyObject *kw) {
    (void)args;
    (void)kw;
    graph_obj *o = (graph_obj *)self;
    sst_error err = {0};
    if (o->g != NULL) {
        return 0;
    }
    if ((o->keep = PyList_New(0)) == NULL) {
        return -1;
    }
    if ((o->g = sst_graph_new(&err)) == NULL) {
        sstpy_raise(&err, NULL);
        return -1;
    }
    return 0;
}

static int graph_traverse(PyObject *self, visitproc visit, void *arg) {
    Py_VISIT(((graph_obj *)self)->keep);
    return 0;
}

static int graph_clear(PyObject *self) {
    Py_CLEAR(((graph_obj *)self)->keep);
    return 0;
}

static void graph_dealloc(PyObject *self) {
    graph_obj *o = (graph_obj *)self;
    PyObject_GC_UnTrack(self);
    sst_graph_free(o->g);
    o->g = NULL;
    graph_clear(self);
    Py_TYPE(self)->tp_free(self);
}

static PyObject *check_code(sst_code rc, const sst_error *err) {
    if (rc != SST_OK) {
        return sstpy_raise(err, NULL);
    }
    Py_RETURN_NONE;
}

/* A reducer from a built-in name or a Python callable (then *owned is set, free it). */
static const sst_reducer *reducer_from(graph_obj *o, PyObject *spec, const char *field,
                                       sst_reducer **owned) {
    *owned = NULL;
    if (spec == Py_None) {
        return NULL;
    }
    if (PyUnicode_Check(spec)) {
        const sst_reducer *r = sst_reducer_builtin(PyUnicode_AsUTF8(spec));
        if (r == NULL) {
            PyErr_Format(PyExc_ValueError, "field '%s': no built-in reducer %R", field, spec);
        }
        return r;
    }
    if (!PyCallable_Check(spec)) {
        PyErr_Format(PyExc_TypeError, "field '%s': a reducer must be callable", field);
        return NULL;
    }
    if (PyList_Append(o->keep, spec) < 0) {
        return NULL;
    }
    sst_error err = {0};
    PyObject *qn = PyObject_GetAttrString(spec, "__name__");
    if (qn == NULL) {
        PyErr_Clear();
    }
    const char *name = qn != NULL && PyUnicode_Check(qn) ? PyUnicode_AsUTF8(qn) : "python";
    *owned = sst_reducer_new(name != NULL ? name : "python", reduce_fn, spec, &err);
    Py_XDECREF(qn);
    if (*owned == NULL) {
        sstpy_raise(&err, NULL);
    }
    return *owned;
}

/* A field's reducer (*r; *owned when made here, freed by the caller) and default (*d, NULL
 * without one) from @p spec and @p def; false with a Python exception set. */
static bool field_spec(graph_obj *o, const char *name, PyObject *spec, PyObject *def, int has_def,
                       const sst_reducer **r, sst_reducer **owned, sst_value **d) {
    *d = NULL;
    *r = reducer_from(o, spec, name, owned);
    if (*r == NULL && PyErr_Occurred()) {
        return false;
    }
    if (has_def && (*d = sstpy_to_value(def, "default")) == NULL) {
        sst_reducer_free(*owned);
        return false;
    }
    return true;
}

/* add_field(name, reducer, default, has_default) */
static PyObject *graph_add_field(PyObject *self, PyObject *args) {
    graph_obj *o = (graph_obj *)self;
    const char *name;
    PyObject *spec, *def;
    int has_def;
    if (!PyArg_ParseTuple(args, "sOOp", &name, &spec, &def, &has_def)) {
        return NULL;
    }
    sst_reducer *owned;
    const sst_reducer *r;
    sst_value *d;
    if (!field_spec(o, name, spec, def, has_def, &r, &owned, &d)) {
        return NULL;
    }
    sst_error err = {0};
    sst_code rc = sst_graph_add_field(o->g, name, r, d, &err);
    sst_reducer_free(owned);
    return check_code(rc, &err);
}

/* set_root(reducer, default, has_default) */
static PyObject *graph_set_root(PyObject *self, PyObject *args) {
    graph_obj *o = (graph_obj *)self;
    PyObject *spec, *def;
    int has_def;
    if (!PyArg_ParseTuple(args, "OOp", &spec, &def, &has_def)) {
        return NULL;
    }
    sst_reducer *owned;
    const sst_reducer *r;
    sst_value *d;
    if (!field_spec(o, SST_ROOT, spec, def, has_def, &r, &owned, &d)) {
        return NULL;
    }
    sst_error err = {0};
    sst_code rc = sst_graph_set_root(o->g, r, d, &err);
    sst_reducer_free(owned);
    return check_code(rc, &err);
}

static PyObject *graph_set_closed(PyObject *self, PyObject *arg) {
    graph_obj *o = (graph_obj *)self;
    sst_error err = {0};
    sst_code rc = sst_schema_set_closed(sst_graph_schema(o->g), PyObject_IsTrue(arg) == 1, &err);
    return check_code(rc, &err);
}

/* set_fields(kind, names): kind "input", "output" or "untracked". */
static PyObject *graph_set_fields(PyObject *self, PyObject *args) {
    graph_obj *o = (graph_obj *)self;
    const char *kind;
    PyObject *list;
    if (!PyArg_ParseTuple(args, "sO", &kind, &list)) {
        return NULL;
    }
    sstpy_names n;
    if (sstpy_names_from(list, &n, "fields") < 0) {
        return NULL;
    }
    sst_error err = {0};
    sst_code rc;
    if (strcmp(kind, "input") == 0) {
        rc = sst_graph_set_input_fields(o->g, n.v, n.n, &err);
    } else if (strcmp(kind, "output") == 0) {
        rc = sst_graph_set_output_fields(o->g, n.v, n.n, &err);
    } else {
        rc = sst_graph_set_untracked_fields(o->g, n.v, n.n, &err);
    }
    sstpy_names_free(&n);
    return check_code(rc, &err);
}

/* A policy whose retry_on refuses NodeTimeoutError: the engine's transient codes but a timeout
 * (a Python exception's code already says what its retry_on said: node_exception). */
static bool retry_on_but_timeouts(sst_code code, void *ud) {
    (void)ud;
    return code != SST_ETIMEOUT && sst_code_is_transient(code);
}

/* Fills @p p from (max_attempts, initial_interval, backoff_factor, max_interval, jitter,
 * timeouts): timeouts false when the policy's retry_on does not take NodeTimeoutError. */
static int retry_from(PyObject *t, sst_retry_policy *p) {
    sst_retry_policy_init(p);
    int jitter = 1, timeouts = 1;
    if (!PyArg_ParseTuple(t, "Idddp|p", &p->max_attempts, &p->initial_interval_s,
                          &p->backoff_factor, &p->max_interval_s, &jitter, &timeouts)) {
        return -1;
    }
    p->jitter = jitter != 0;
    if (!timeouts) {
        p->retry_on = retry_on_but_timeouts;
    }
    return 0;
}

/* Fills @p p from (run_timeout, idle_timeout, heartbeat_only) (TimeoutPolicy._args). */
static int timeout_from(PyObject *t, sst_timeout_policy *p) {
    int hb = 0;
    memset(p, 0, sizeof *p);
    if (!PyArg_ParseTuple(t, "ddp", &p->run_timeout_s, &p->idle_timeout_s, &hb)) {
        return -1;
    }
    p->heartbeat_only = hb != 0;
    if (!sst_timeout_policy_valid(p)) {
        PyErr_SetString(PyExc_ValueError,
                        "timeout: seconds must be greater than 0 and at most 1e9");
        return -1;
    }
    return 0;
}

/*
 * Fills @p p from a cache policy (ttl_seconds, key) (LangGraph's CachePolicy; key None: the
 * engine's hash of the input, else a callable giving the key, kept alive by the builder).
 */
static int cache_from(graph_obj *o, PyObject *t, sst_node_cache_policy *p) {
    memset(p, 0, sizeof *p);
    PyObject *key;
    double ttl;
    if (!PyArg_ParseTuple(t, "dO", &ttl, &key)) {
        return -1;
    }
    if (!(ttl >= 0)) {
        PyErr_SetString(PyExc_ValueError, "cache_policy: ttl must be >= 0 seconds");
        return -1;
    }
    if (key != Py_None) {
        if (!PyCallable_Check(key)) {
            PyErr_SetString(PyExc_TypeError, "cache_policy: key_func must be callable");
            return -1;
        }
        if (PyList_Append(o->keep, key) < 0) {
            return -1;
        }
        p->key = cache_key_fn;
        p->key_user_data = key;
    }
    p->enabled = true;
    p->ttl_s = ttl;
    return 0;
}

/*
 * add_node(name, node, retry=None, ends=None, defer=False, input_fields=None,
 *          metadata=None, subgraph=None, error_handler=None, cache=None)
 * retry: a list of (max_attempts, initial, backoff, max_interval, jitter); cache: a
 * policy (ttl_seconds, key or None) as cache_from takes it; subgraph: a
 * Compiled run as the node instead of @p node; error_handler: a node wrapper run as
 * "__error_handler__<name>" when the node fails for good (node_error() tells what failed).
 */
static PyObject *graph_add_node(PyObject *self, PyObject *args, PyObject *kw) {
    static char *kwn[] = {"name",          "node",         "retry",    "ends",
                          "defer",         "input_fields", "metadata", "subgraph",
                          "error_handler", "cache",        "timeout",  NULL};
    graph_obj *o = (graph_obj *)self;
    const char *name;
    PyObject *node, *retry = Py_None, *ends = Py_None, *input_fields = Py_None;
    PyObject *metadata = Py_None, *subgraph = Py_None, *handler = Py_None, *cache = Py_None;
    PyObject *timeout = Py_None;
    int defer = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "sO|OOpOOOOOO", kwn, &name, &node, &retry, &ends,
                                     &defer, &input_fields, &metadata, &subgraph, &handler, &cache,
                                     &timeout)) {
        return NULL;
    }
    sst_node_opts opts;
    sst_node_opts_init(&opts);
    opts.defer = defer != 0;
    if (timeout != Py_None && timeout_from(timeout, &opts.timeout) < 0) {
        return NULL;
    }
    if (cache != Py_None && cache_from(o, cache, &opts.cache_policy) < 0) {
        return NULL;
    }
    if (handler != Py_None) {
        if (!PyCallable_Check(handler)) {
            PyErr_SetString(PyExc_TypeError, "error_handler: expected a callable");
            return NULL;
        }
        if (PyList_Append(o->keep, handler) < 0) {
            return NULL;
        }
        opts.error_handler = node_fn;
        opts.error_handler_user_data = handler;
    }
    sstpy_names en = {0}, in = {0};
    sst_retry_policy *policies = NULL;
    sst_value *meta = NULL;
    PyObject *ret = NULL;
    if (sstpy_names_from(ends, &en, "destinations") < 0 ||
        sstpy_names_from(input_fields, &in, "input_schema") < 0) {
        goto done;
    }
    opts.ends = en.v;
    opts.n_ends = en.n;
    opts.input_fields = in.v;
    opts.n_input_fields = in.n;
    if (metadata != Py_None) {
        if ((meta = sstpy_to_value(metadata, "metadata")) == NULL) {
            goto done;
        }
        opts.metadata = meta;
    }
    if (retry != Py_None) {
        Py_ssize_t n = PyList_Check(retry) ? PyList_GET_SIZE(retry) : -1;
        if (n < 0) {
            PyErr_SetString(PyExc_TypeError, "retry: expected a list of tuples");
            goto done;
        }
        if ((policies = PyMem_Calloc((size_t)(n > 0 ? n : 1), sizeof *policies)) == NULL) {
            PyErr_NoMemory();
            goto done;
        }
        for (Py_ssize_t i = 0; i < n; i++) {
            if (retry_from(PyList_GET_ITEM(retry, i), &policies[i]) < 0) {
                goto done;
            }
        }
        if (n == 1) {
            opts.retry = policies[0];
        } else if (n > 1) {
            opts.retry_policies = policies;
            opts.n_retry_policies = (size_t)n;
        }
    }
    sst_error err = {0};
    sst_code rc;
    if (subgraph != Py_None) {
        if (!PyObject_TypeCheck(subgraph, &compiled_type)) {
            PyErr_SetString(PyExc_TypeError, "subgraph: expected a compiled graph");
            goto done;
        }
        if (PyList_Append(o->keep, subgraph) < 0) {
            goto done;
        }
        rc = sst_graph_add_subgraph(o->g, name, ((compiled_obj *)subgraph)->r.cg, &opts, &err);
    } else {
        if (PyList_Append(o->keep, node) < 0) {
            goto done;
        }
        rc = sst_graph_add_node(o->g, name, node_fn, node, &opts, &err);
    }
    ret = check_code(rc, &err);
done:
    sstpy_names_free(&en);
    sstpy_names_free(&in);
    PyMem_Free(policies);
    sst_value_unref(meta);
    return ret;
}

/* set_default_retry([(max_attempts, initial, backoff, max_interval, jitter), ...]). */
static PyObject *graph_set_default_retry(PyObject *self, PyObject *list) {
    graph_obj *o = (graph_obj *)self;
    Py_ssize_t n = PyList_Check(list) ? PyList_GET_SIZE(list) : -1;
    if (n < 0) {
        PyErr_SetString(PyExc_TypeError, "retry: expected a list of tuples");
        return NULL;
    }
    sst_retry_policy *policies = PyMem_Calloc((size_t)(n > 0 ? n : 1), sizeof *policies);
    if (policies == NULL) {
        return PyErr_NoMemory();
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        if (retry_from(PyList_GET_ITEM(list, i), &policies[i]) < 0) {
            PyMem_Free(policies);
            return NULL;
        }
    }
    sst_error err = {0};
    sst_code rc = sst_graph_set_default_retry(o->g, policies, (size_t)n, &err);
    PyMem_Free(policies);
    return check_code(rc, &err);
}

/* set_default_error_handler(wrapper): set_node_defaults(error_handler=); None clears it. */
/* set_default_timeout((run_timeout, idle_timeout, heartbeat_only)). */
static PyObject *graph_set_default_timeout(PyObject *self, PyObject *t) {
    graph_obj *o = (graph_obj *)self;
    sst_timeout_policy tp;
    if (timeout_from(t, &tp) < 0) {
        return NULL;
    }
    sst_error err = {0};
    return check_code(sst_graph_set_default_timeout(o->g, &tp, &err), &err);
}

static PyObject *graph_set_default_error_handler(PyObject *self, PyObject *handler) {
    graph_obj *o = (graph_obj *)self;
    if (handler != Py_None && !PyCallable_Check(handler)) {
        PyErr_SetString(PyExc_TypeError, "error_handler: expected a callable");
        return NULL;
    }
    if (handler != Py_None && PyList_Append(o->keep, handler) < 0) {
        return NULL;
    }
    sst_error err = {0};
    sst_code rc = sst_graph_set_default_error_handler(o->g, handler != Py_None ? node_fn : NULL,
                                                      handler != Py_None ? handler : NULL, &err);
    return check_code(rc, &err);
}

/* set_default_cache((ttl_seconds, key) or None): set_node_defaults(cache_policy=). */
static PyObject *graph_set_default_cache(PyObject *self, PyObject *policy) {
    graph_obj *o = (graph_obj *)self;
    sst_node_cache_policy p;
    memset(&p, 0, sizeof p);
    if (policy != Py_None && cache_from(o, policy, &p) < 0) {
        return NULL;
    }
    sst_error err = {0};
    sst_code rc = sst_graph_set_default_cache_policy(o->g, &p, &err);
    return check_code(rc, &err);
}

static PyObject *graph_add_edge(PyObject *self, PyObject *args) {
    graph_obj *o = (graph_obj *)self;
    const char *from, *to;
    if (!PyArg_ParseTuple(args, "ss", &from, &to)) {
        return NULL;
    }
    sst_error err = {0};
    sst_code rc = sst_graph_add_edge(o->g, from, to, &err);
    return check_code(rc, &err);
}

static PyObject *graph_add_join(PyObject *self, PyObject *args) {
    graph_obj *o = (graph_obj *)self;
    PyObject *from;
    const char *to;
    if (!PyArg_ParseTuple(args, "Os", &from, &to)) {
        return NULL;
    }
    sstpy_names n;
    if (sstpy_names_from(from, &n, "sources") < 0) {
        return NULL;
    }
    sst_error err = {0};
    sst_code rc = sst_graph_add_join(o->g, n.v, n.n, to, &err);
    sstpy_names_free(&n);
    return check_code(rc, &err);
}

/* add_conditional_edges(source, router, path_map or None) */
static PyObject *graph_add_conditional_edges(PyObject *self, PyObject *args) {
    graph_obj *o = (graph_obj *)self;
    const char *from;
    PyObject *router, *path_map;
    if (!PyArg_ParseTuple(args, "sOO", &from, &router, &path_map)) {
        return NULL;
    }
    sst_value *pm = NULL;
    if (path_map != Py_None && (pm = sstpy_to_value(path_map, "path_map")) == NULL) {
        return NULL;
    }
    if (PyList_Append(o->keep, router) < 0) {
        sst_value_unref(pm);
        return NULL;
    }
    sst_error err = {0};
    sst_code rc = sst_graph_add_conditional_edges(o->g, from, router_fn, router, pm, &err);
    sst_value_unref(pm);
    return check_code(rc, &err);
}

/*
 * compile(saver=None, interrupt_before=None, interrupt_after=None, workers=1, checkpoints=0,
 *         cache=None, cache_ns=None, step_timeout=0)
 * checkpoints: as a subgraph, sst_subgraph_checkpoints (0 per task, 1 kept: LangGraph's
 * checkpointer=True, 2 none: checkpointer=False). cache: a _core.Cache where nodes with a
 * cache policy keep their writes, under the graph's part @p cache_ns (sst_compile_opts).
 * step_timeout: seconds a superstep may take (LangGraph's graph.step_timeout; 0: none).
 */
static PyObject *graph_compile(PyObject *self, PyObject *args, PyObject *kw) {
    static char *kwn[] = {"saver", "interrupt_before", "interrupt_after", "workers", "checkpoints",
                          "cache", "cache_ns",         "step_timeout",    NULL};
    graph_obj *o = (graph_obj *)self;
    PyObject *saver = Py_None, *before = Py_None, *after = Py_None, *cache = Py_None;
    const char *cache_ns = NULL;
    unsigned workers = 1, checkpoints = SST_SUBGRAPH_PER_TASK;
    double step_timeout = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|OOOIIOzd", kwn, &saver, &before, &after, &workers,
                                     &checkpoints, &cache, &cache_ns, &step_timeout)) {
        return NULL;
    }
    sst_cache *sc = NULL;
    if (cache != Py_None && (sc = sstpy_cache_get(cache)) == NULL) {
        return NULL;
    }
    if (checkpoints > SST_SUBGRAPH_NONE) {
        return PyErr_Format(PyExc_ValueError, "compile: checkpoints must be 0, 1 or 2");
    }
    sst_checkpointer *cp = NULL;
    if (saver != Py_None && (cp = sstpy_saver_get(saver)) == NULL) {
        return NULL;
    }
    if (saver != Py_None && cp == NULL) {
        PyErr_SetString(PyExc_ValueError, "compile: the checkpointer is closed");
        return NULL;
    }
    sstpy_names nb, na;
    if (sstpy_names_from(before, &nb, "interrupt_before") < 0) {
        return NULL;
    }
    if (sstpy_names_from(after, &na, "interrupt_after") < 0) {
        sstpy_names_free(&nb);
        return NULL;
    }
    sst_compile_opts co;
    sst_compile_opts_init(&co);
    co.interrupt_before = nb.v;
    co.n_before = nb.n;
    co.interrupt_after = na.v;
    co.n_after = na.n;
    co.checkpoints = (sst_subgraph_checkpoints)checkpoints;
    co.cache = sc;
    co.cache_ns = cache_ns;
    co.step_timeout_s = step_timeout;
    sst_error err = {0};
    sst_compiled_graph *cg = sst_graph_compile(o->g, &co, &err);
    sstpy_names_free(&nb);
    sstpy_names_free(&na);
    if (cg == NULL) {
        return sstpy_raise(&err, NULL);
    }
    compiled_obj *c = PyObject_GC_New(compiled_obj, &compiled_type);
    if (c == NULL) {
        sst_compiled_graph_free(cg);
        return NULL;
    }
    sstpy_runner_init(&c->r, cg, false, cp, workers);
    c->graph = Py_NewRef(self);
    c->saver = Py_NewRef(saver);
    PyObject_GC_Track(c);
    return (PyObject *)c;
}

static PyMethodDef graph_methods[] = {
    {"add_field", graph_add_field, METH_VARARGS, NULL},
    {"set_root", graph_set_root, METH_VARARGS, NULL},
    {"set_closed", graph_set_closed, METH_O, NULL},
    {"set_fields", graph_set_fields, METH_VARARGS, NULL},
    {"add_node", (PyCFunction)(void (*)(void))graph_add_node, METH_VARARGS | METH_KEYWORDS, NULL},
    {"set_default_error_handler", graph_set_default_error_handler, METH_O, NULL},
    {"set_default_retry", graph_set_default_retry, METH_O, NULL},
    {"set_default_timeout", graph_set_default_timeout, METH_O, NULL},
    {"set_default_cache", graph_set_default_cache, METH_O, NULL},
    {"add_edge", graph_add_edge, METH_VARARGS, NULL},
    {"add_join", graph_add_join, METH_VARARGS, NULL},
    {"add_conditional_edges", graph_add_conditional_edges, METH_VARARGS, NULL},
    {"compile", (PyCFunction)(void (*)(void))graph_compile, METH_VARARGS | METH_KEYWORDS, NULL},
    {NULL, NULL, 0, NULL}};

static PyTypeObject graph_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "superstep._core.Graph",
    .tp_basicsize = sizeof(graph_obj),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "A graph being built (superstep.graph.StateGraph builds one at compile).",
    .tp_new = PyType_GenericNew,
    .tp_init = graph_init,
    .tp_dealloc = graph_dealloc,
    .tp_traverse = graph_traverse,
    .tp_clear = graph_clear,
    .tp_methods = graph_methods,
};

/* ---- _core.Compiled ---- */

PyObject *sstpy_compiled_of(const sst_compiled_graph *cg, PyObject *owner, PyObject *saver,
                            unsigned workers) {
    sst_checkpointer *cp = NULL;
    if (saver != Py_None && (cp = sstpy_saver_get(saver)) == NULL) {
        if (!PyErr_Occurred()) {
            PyErr_SetString(PyExc_ValueError, "the checkpointer is closed");
        }
        return NULL;
    }
    compiled_obj *c = PyObject_GC_New(compiled_obj, &compiled_type);
    if (c == NULL) {
        return NULL;
    }
    /* cg is never freed here: `owner` holds it */
    sstpy_runner_init(&c->r, (sst_compiled_graph *)cg, true, cp, workers);
    c->graph = Py_NewRef(owner);
    c->saver = Py_NewRef(saver);
    PyObject_GC_Track(c);
    return (PyObject *)c;
}

static int compiled_traverse(PyObject *self, visitproc visit, void *arg) {
    compiled_obj *c = (compiled_obj *)self;
    Py_VISIT(c->graph);
    Py_VISIT(c->saver);
    return 0;
}

static int compiled_clear(PyObject *self) {
    compiled_obj *c = (compiled_obj *)self;
    Py_CLEAR(c->graph);
    Py_CLEAR(c->saver);
    return 0;
}

static void compiled_dealloc(PyObject *self) {
    compiled_obj *c = (compiled_obj *)self;
    PyObject_GC_UnTrack(self);
    sstpy_runner_free(&c->r);
    compiled_clear(self);
    PyObject_GC_Del(self);
}

/* run(...): sstpy_runner_run; a node's retry waits sleep in Python (time.sleep). */
static PyObject *compiled_run(PyObject *self, PyObject *args, PyObject *kw) {
    static const sstpy_run_kind kind = {"__pyrun__", true, sleep_fn};
    return sstpy_runner_run(self, args, kw, &kind);
}

/* superstep.errors.ParentCommand (borrowed, kept for the process), or NULL with an error. */
static PyObject *parent_command_class(void) {
    static PyObject *cls;
    if (cls == NULL) {
        PyObject *m = PyImport_ImportModule("superstep.errors");
        cls = m != NULL ? PyObject_GetAttrString(m, "ParentCommand") : NULL;
        Py_XDECREF(m);
    }
    return cls;
}

/*
 * run_in_node(input) -> state: runs this graph as a subgraph of the node running on this
 * thread (LangGraph's compiled graph invoked inside a node function), through
 * sst_node_run_subgraph: it checkpoints under the node's namespace in the parent's
 * checkpointer, and resumes there. Raises GraphInterrupt when it interrupted (the node
 * stops; it runs again on resume) and ParentCommand when one of its nodes returned
 * Command(graph=Command.PARENT) (already applied to the node: the node stops).
 */
static PyObject *compiled_run_in_node(PyObject *self, PyObject *input) {
    compiled_obj *c = (compiled_obj *)self;
    sst_node_ctx *ctx = sstpy_current_ctx;
    if (ctx == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "run_in_node: not inside a node of a running graph");
        return NULL;
    }
    sst_value *in = NULL;
    if (sstpy_opt_value(input, &in, "input") < 0) {
        return NULL;
    }
    if (in != NULL && !sst_is_object(in)) {
        sst_value_unref(in);
        PyErr_SetString(PyExc_TypeError, "input: a subgraph's input must be a dict");
        return NULL;
    }
    sst_error err = {0};
    sst_value *out = NULL;
    sst_code rc;
    Py_BEGIN_ALLOW_THREADS rc = sst_node_run_subgraph(ctx, c->r.cg, in, &out, &err);
    Py_END_ALLOW_THREADS sstpy_current_ctx = ctx;
    sst_value_unref(in);
    if (rc == SST_OK) {
        return sstpy_take_value(out, &err, NULL);
    }
    if (rc == SST_EINTERRUPT) {
        PyErr_SetNone(sstpy.graph_interrupt != NULL ? sstpy.graph_interrupt : PyExc_RuntimeError);
        return NULL;
    }
    if (rc == SST_EPARENT) {
        PyObject *cls = parent_command_class();
        if (cls != NULL) {
            PyErr_SetNone(cls);
        }
        return NULL;
    }
    return sstpy_raise(&err, sst_node_name(ctx));
}

/* clear_cache(nodes or None): drops the cached writes of those nodes (None: all). */
static PyObject *compiled_clear_cache(PyObject *self, PyObject *nodes) {
    compiled_obj *c = (compiled_obj *)self;
    sstpy_names n = {0};
    if (sstpy_names_from(nodes, &n, "nodes") < 0) {
        return NULL;
    }
    sst_error err = {0};
    sst_code rc;
    Py_BEGIN_ALLOW_THREADS rc = sst_compiled_graph_clear_cache(c->r.cg, n.v, n.n, &err);
    Py_END_ALLOW_THREADS sstpy_names_free(&n);
    return check_code(rc, &err);
}

static PyMethodDef compiled_methods[] = {
    {"run", (PyCFunction)(void (*)(void))compiled_run, METH_VARARGS | METH_KEYWORDS, NULL},
    {"run_in_node", compiled_run_in_node, METH_O, NULL},
    {"clear_cache", compiled_clear_cache, METH_O, NULL},
    {"get_state", sstpy_runner_get_state, METH_VARARGS, NULL},
    {"history", sstpy_runner_history, METH_VARARGS, NULL},
    {"update_state", sstpy_runner_update_state, METH_VARARGS, NULL},
    {"mermaid", sstpy_runner_mermaid, METH_VARARGS, NULL},
    {"graph_json", sstpy_runner_graph_json, METH_VARARGS, NULL},
    {"warnings", sstpy_runner_warnings, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL}};

static PyTypeObject compiled_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "superstep._core.Compiled",
    .tp_basicsize = sizeof(compiled_obj),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "A compiled graph (made by Graph.compile).",
    .tp_dealloc = compiled_dealloc,
    .tp_traverse = compiled_traverse,
    .tp_clear = compiled_clear,
    .tp_methods = compiled_methods,
};

/* push_message(message, state_key): LangGraph's push_message in the running node. */
static PyObject *py_push_message(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *msg;
    const char *key = NULL;
    if (!PyArg_ParseTuple(args, "O|z", &msg, &key)) {
        return NULL;
    }
    sst_node_ctx *ctx = sstpy_current_ctx;
    if (ctx == NULL) {
        PyErr_SetString(PyExc_RuntimeError,
                        "push_message() called outside a node of a running graph");
        return NULL;
    }
    sst_value *v = sstpy_to_value(msg, "push_message");
    if (v == NULL) {
        return NULL;
    }
    sst_error err = {0};
    /* Without the GIL, as emit() in module.c: the message streams under the run's lock. */
    sst_code rc;
    Py_BEGIN_ALLOW_THREADS rc = sst_node_push_message(ctx, key, v, &err);
    Py_END_ALLOW_THREADS if (rc != SST_OK) {
        return sstpy_raise(&err, NULL);
    }
    Py_RETURN_NONE;
}

/* node_limited(): whether the running node has a timeout or its superstep a deadline. */
static PyObject *py_node_limited(PyObject *self, PyObject *unused) {
    (void)self;
    (void)unused;
    return PyBool_FromLong(sst_node_timeout(sstpy_current_ctx) != NULL);
}

/* node_cancelled(): whether the running node ran out of time or its run was cancelled. */
static PyObject *py_node_cancelled(PyObject *self, PyObject *unused) {
    (void)self;
    (void)unused;
    sst_node_ctx *ctx = sstpy_current_ctx;
    bool yes;
    Py_BEGIN_ALLOW_THREADS yes = sst_node_cancelled(ctx); /* may ask the run's cancel hook */
    Py_END_ALLOW_THREADS return PyBool_FromLong(yes);
}

/* heartbeat(): progress for the running node's idle timeout (runtime.heartbeat()). */
static PyObject *py_heartbeat(PyObject *self, PyObject *unused) {
    (void)self;
    (void)unused;
    sst_node_heartbeat(sstpy_current_ctx);
    Py_RETURN_NONE;
}

static PyMethodDef graph_functions[] = {
    {"node_limited", py_node_limited, METH_NOARGS,
     "node_limited(): whether the running node has a timeout (or its superstep a deadline)."},
    {"node_cancelled", py_node_cancelled, METH_NOARGS,
     "node_cancelled(): whether the running node ran out of time or its run was cancelled."},
    {"heartbeat", py_heartbeat, METH_NOARGS,
     "heartbeat(): progress for the running node's idle timeout."},
    {"push_message", py_push_message, METH_VARARGS,
     "push_message(message, state_key): write and stream a message from a node."},
    {NULL, NULL, 0, NULL}};

int sstpy_graph_init(PyObject *m) {
    if (PyModule_AddFunctions(m, graph_functions) < 0) {
        return -1;
    }
    if (PyType_Ready(&graph_type) < 0 || PyType_Ready(&compiled_type) < 0) {
        return -1;
    }
    Py_INCREF(&graph_type);
    if (PyModule_AddObject(m, "Graph", (PyObject *)&graph_type) < 0) {
        Py_DECREF(&graph_type);
        return -1;
    }
    Py_INCREF(&compiled_type);
    if (PyModule_AddObject(m, "Compiled", (PyObject *)&compiled_type) < 0) {
        Py_DECREF(&compiled_type);
        return -1;
    }
    PyObject *modes = PyDict_New();
    for (size_t i = 0; modes != NULL && i < sstpy_n_stream_modes; i++) {
        PyObject *v = PyLong_FromUnsignedLong((unsigned long)sstpy_stream_modes[i].mode);
        if (v == NULL || PyDict_SetItemString(modes, sstpy_stream_modes[i].name, v) < 0) {
            Py_XDECREF(v);
            Py_CLEAR(modes);
            break;
        }
        Py_DECREF(v);
    }
    if (modes == NULL || PyModule_AddObject(m, "STREAM_MODES", modes) < 0) {
        Py_XDECREF(modes);
        return -1;
    }
    return 0;
}
