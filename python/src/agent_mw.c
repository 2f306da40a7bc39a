/* SPDX-License-Identifier: MIT */
/*
 * Agent middleware written in Python (superstep.prebuilt.AgentMiddleware subclasses;
 * docs/python.md): its node hooks (before_agent, before_model, after_model, after_agent)
 * and wrap hooks (wrap_model_call, wrap_tool_call) as an sst_middleware whose C hooks
 * take the GIL only while the Python hook runs; a wrap hook's `handler` runs the rest of
 * the chain with the GIL released.
 */
#include "core.h"

#include "superstep/agent.h"

/* ---- node hooks ---- */

enum {
    HOOK_BEFORE_AGENT,
    HOOK_BEFORE_MODEL,
    HOOK_AFTER_MODEL,
    HOOK_AFTER_AGENT,
    N_NODE_HOOKS,
    HOOK_WRAP_MODEL = N_NODE_HOOKS,
    HOOK_WRAP_TOOL,
    N_HOOKS
};
static const char *const hook_names[N_HOOKS] = {"before_agent",    "before_model",
                                                "after_model",     "after_agent",
                                                "wrap_model_call", "wrap_tool_call"};

/*
 * The Python side of a middleware (superstep/prebuilt/middleware.py makes the callables):
 * node hooks fn(state) -> (update or None, jump or None); wrap_model_call fn(messages,
 * system_prompt, tools, next) -> reply; wrap_tool_call fn(call, next) -> tool message.
 */
typedef struct py_hooks {
    PyObject *fn[N_HOOKS]; /* owned, or NULL */
} py_hooks;

static void py_hooks_free(void *ud) {
    py_hooks *h = ud;
    PyGILState_STATE gil = PyGILState_Ensure();
    for (int i = 0; i < N_HOOKS; i++) {
        Py_XDECREF(h->fn[i]);
    }
    PyGILState_Release(gil);
    PyMem_RawFree(h);
}

/* A hook's Python exception: an interrupt pauses the run, anything else fails the node. */
static sst_code hook_exception(sst_node_ctx *ctx) {
    if (sstpy.graph_interrupt != NULL && PyErr_ExceptionMatches(sstpy.graph_interrupt)) {
        PyErr_Clear();
        return SST_EINTERRUPT;
    }
    sst_error err = {0};
    sstpy_fail_with_exception(&err, SST_EINVAL);
    return sst_node_fail(ctx, SST_EINVAL, "%s", err.msg);
}

/* Applies a hook's (update, jump_to); a Python error is left set, an engine one in @p err. */
static sst_code hook_result(sst_node_ctx *ctx, PyObject *r, sst_error *err) {
    if (r == Py_None) {
        return SST_OK;
    }
    if (!PyTuple_Check(r) || PyTuple_GET_SIZE(r) != 2) {
        PyErr_SetString(PyExc_TypeError, "middleware hook wrapper: expected (update, jump_to)");
        return SST_ETYPE;
    }
    PyObject *update = PyTuple_GET_ITEM(r, 0), *jump = PyTuple_GET_ITEM(r, 1);
    if (update != Py_None) {
        sst_value *u = sstpy_to_value(update, "middleware update");
        if (u == NULL) {
            return SST_ETYPE;
        }
        sst_code rc = sst_node_update_all(ctx, u, err);
        if (rc != SST_OK) {
            return rc;
        }
    }
    if (jump != Py_None) {
        const char *to = PyUnicode_Check(jump) ? PyUnicode_AsUTF8(jump) : NULL;
        if (to == NULL) {
            PyErr_SetString(PyExc_TypeError, "jump_to: expected \"model\", \"tools\" or \"end\"");
            return SST_ETYPE;
        }
        return sst_agent_jump_to(ctx, to, err);
    }
    return SST_OK;
}

static sst_code call_hook(sst_node_ctx *ctx, const py_hooks *h, int which) {
    PyGILState_STATE gil = PyGILState_Ensure();
    sst_code rc;
    PyObject *state = sstpy_from_value(sst_node_state(ctx));
    if (state == NULL) {
        rc = hook_exception(ctx);
        PyGILState_Release(gil);
        return rc;
    }
    sst_node_ctx *prev = sstpy_current_ctx;
    sstpy_current_ctx = ctx; /* interrupt() and get_stream_writer() work in a hook */
    PyObject *r = PyObject_CallOneArg(h->fn[which], state);
    sstpy_current_ctx = prev;
    Py_DECREF(state);
    if (r == NULL) {
        rc = hook_exception(ctx);
    } else {
        sst_error err = {0};
        rc = hook_result(ctx, r, &err);
        Py_DECREF(r);
        if (rc != SST_OK && PyErr_Occurred()) {
            rc = hook_exception(ctx);
        } else if (rc != SST_OK) {
            rc = sst_node_fail(ctx, rc, "%s", err.msg);
        }
    }
    PyGILState_Release(gil);
    return rc;
}

static sst_code hook_before_agent(sst_node_ctx *ctx, void *ud) {
    return call_hook(ctx, ud, HOOK_BEFORE_AGENT);
}
static sst_code hook_before_model(sst_node_ctx *ctx, void *ud) {
    return call_hook(ctx, ud, HOOK_BEFORE_MODEL);
}
static sst_code hook_after_model(sst_node_ctx *ctx, void *ud) {
    return call_hook(ctx, ud, HOOK_AFTER_MODEL);
}
static sst_code hook_after_agent(sst_node_ctx *ctx, void *ud) {
    return call_hook(ctx, ud, HOOK_AFTER_AGENT);
}

/* ---- wrap hooks: `next` as a Python callable, valid while the hook runs ---- */

typedef struct next_obj {
    PyObject_HEAD sst_tool_handler tool_next; /* one of the two */
    sst_model_handler model_next;
    void *next_data;
    sst_model_request *req; /* wrap_model_call's request */
    int valid;
} next_obj;

static PyTypeObject next_type;

/* The rest of the chain's result, or the exception for its failure. */
static PyObject *next_result(sst_value *v, const sst_error *err) {
    if (v == NULL) {
        return sstpy_raise(err, NULL);
    }
    PyObject *o = sstpy_from_value(v);
    sst_value_unref(v);
    return o;
}

/* next(call) for a tool; next(messages, system_prompt, tools) for a model call. */
static PyObject *next_call(PyObject *self, PyObject *args, PyObject *kw) {
    next_obj *n = (next_obj *)self;
    (void)kw;
    if (!n->valid) {
        PyErr_SetString(PyExc_RuntimeError, "a middleware's handler is valid only in its hook");
        return NULL;
    }
    sst_error err = {0};
    sst_value *out;
    if (n->tool_next != NULL) {
        PyObject *call;
        if (!PyArg_ParseTuple(args, "O", &call)) {
            return NULL;
        }
        sst_value *c = sstpy_to_value(call, "tool call");
        if (c == NULL) {
            return NULL;
        }
        Py_BEGIN_ALLOW_THREADS out = n->tool_next(c, n->next_data, &err);
        Py_END_ALLOW_THREADS sst_value_unref(c);
        return next_result(out, &err);
    }
    PyObject *messages, *tools;
    const char *prompt = NULL;
    if (!PyArg_ParseTuple(args, "OzO", &messages, &prompt, &tools)) {
        return NULL;
    }
    sst_value *m = sstpy_to_value(messages, "messages");
    sst_value *t = m != NULL ? sstpy_to_value(tools, "tools") : NULL;
    if (m == NULL || t == NULL) {
        sst_value_unref(m);
        return NULL;
    }
    if (sst_model_request_set_messages(n->req, m, &err) != SST_OK ||
        sst_model_request_set_tools(n->req, t, &err) != SST_OK ||
        sst_model_request_set_system_prompt(n->req, prompt, &err) != SST_OK) {
        return sstpy_raise(&err, NULL);
    }
    Py_BEGIN_ALLOW_THREADS out = n->model_next(n->req, n->next_data, &err);
    Py_END_ALLOW_THREADS return next_result(out, &err);
}

static PyTypeObject next_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "superstep._core.MiddlewareHandler",
    .tp_basicsize = sizeof(next_obj),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "The rest of a middleware chain (a wrap hook's handler).",
    .tp_call = next_call,
};

static next_obj *next_new(void) {
    if (!(next_type.tp_flags & Py_TPFLAGS_READY) && PyType_Ready(&next_type) < 0) {
        return NULL;
    }
    next_obj *n = PyObject_New(next_obj, &next_type);
    if (n != NULL) {
        n->tool_next = NULL;
        n->model_next = NULL;
        n->next_data = NULL;
        n->req = NULL;
        n->valid = 1;
    }
    return n;
}

/* A wrap hook's Python result as a value; NULL with @p err naming its failure. */
static sst_value *wrap_result(PyObject *r, const char *what, sst_error *err) {
    sst_value *v = r != NULL ? sstpy_to_value(r, what) : NULL;
    Py_XDECREF(r);
    if (v == NULL) {
        sstpy_fail_with_exception(err, SST_ETASK);
    }
    return v;
}

static sst_value *wrap_tool(const sst_value *call, sst_node_ctx *ctx, sst_tool_handler next,
                            void *next_data, void *ud, sst_error *err) {
    const py_hooks *h = ud;
    PyGILState_STATE gil = PyGILState_Ensure();
    sst_value *out = NULL;
    PyObject *c = sstpy_from_value(call);
    next_obj *n = c != NULL ? next_new() : NULL;
    if (n != NULL) {
        n->tool_next = next;
        n->next_data = next_data;
        sst_node_ctx *prev = sstpy_current_ctx;
        sstpy_current_ctx = ctx;
        PyObject *r = PyObject_CallFunctionObjArgs(h->fn[HOOK_WRAP_TOOL], c, (PyObject *)n, NULL);
        sstpy_current_ctx = prev;
        n->valid = 0;
        out = wrap_result(r, "wrap_tool_call result", err);
    } else {
        sstpy_fail_with_exception(err, SST_ENOMEM);
    }
    Py_XDECREF(n);
    Py_XDECREF(c);
    PyGILState_Release(gil);
    return out;
}

static sst_value *wrap_model(sst_model_request *req, sst_model_handler next, void *next_data,
                             void *ud, sst_error *err) {
    const py_hooks *h = ud;
    PyGILState_STATE gil = PyGILState_Ensure();
    sst_value *out = NULL;
    const char *prompt = sst_model_request_system_prompt(req);
    PyObject *m = sstpy_from_value(sst_model_request_messages(req));
    PyObject *t = m != NULL ? sstpy_from_value(sst_model_request_tools(req)) : NULL;
    PyObject *p =
        t != NULL ? (prompt != NULL ? PyUnicode_FromString(prompt) : Py_NewRef(Py_None)) : NULL;
    next_obj *n = p != NULL ? next_new() : NULL;
    if (n != NULL) {
        n->model_next = next;
        n->next_data = next_data;
        n->req = req;
        PyObject *r =
            PyObject_CallFunctionObjArgs(h->fn[HOOK_WRAP_MODEL], m, p, t, (PyObject *)n, NULL);
        n->valid = 0;
        out = wrap_result(r, "wrap_model_call result", err);
    } else {
        sstpy_fail_with_exception(err, SST_ENOMEM);
    }
    Py_XDECREF(n);
    Py_XDECREF(p);
    Py_XDECREF(t);
    Py_XDECREF(m);
    PyGILState_Release(gil);
    return out;
}

sst_middleware *sstpy_python_middleware(const char *name, PyObject *hooks) {
    if (name == NULL || !PyDict_Check(hooks)) {
        PyErr_SetString(PyExc_TypeError, "a Python middleware needs a name and a dict of hooks");
        return NULL;
    }
    py_hooks *h = PyMem_RawCalloc(1, sizeof *h);
    if (h == NULL) {
        PyErr_NoMemory();
        return NULL;
    }
    sst_middleware_hooks mh = {0};
    sst_code (*const fns[N_NODE_HOOKS])(sst_node_ctx *, void *) = {
        hook_before_agent, hook_before_model, hook_after_model, hook_after_agent};
    sst_code (**slots[N_NODE_HOOKS])(sst_node_ctx *, void *) = {&mh.before_agent, &mh.before_model,
                                                                &mh.after_model, &mh.after_agent};
    for (int i = 0; i < N_HOOKS; i++) {
        PyObject *fn = PyDict_GetItemString(hooks, hook_names[i]);
        if (fn != NULL && fn != Py_None) {
            if (!PyCallable_Check(fn)) {
                PyErr_Format(PyExc_TypeError, "middleware '%s': %s is not callable", name,
                             hook_names[i]);
                py_hooks_free(h);
                return NULL;
            }
            h->fn[i] = Py_NewRef(fn);
            if (i < N_NODE_HOOKS) {
                *slots[i] = fns[i];
            }
        }
    }
    if (h->fn[HOOK_WRAP_MODEL] != NULL) {
        mh.wrap_model_call = wrap_model;
    }
    if (h->fn[HOOK_WRAP_TOOL] != NULL) {
        mh.wrap_tool_call = wrap_tool;
    }
    mh.user_data = h;
    mh.free_user_data = py_hooks_free;
    sst_error err = {0};
    sst_middleware *m = sst_middleware_new(name, &mh, &err);
    if (m == NULL) {
        py_hooks_free(h);
        sstpy_raise(&err, NULL);
    }
    return m;
}
