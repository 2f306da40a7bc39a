/* SPDX-License-Identifier: MIT */
/*
 * The prebuilt agent layer for Python (superstep.chat_models, superstep.prebuilt;
 * docs/python.md): chat models (sst_model), built-in middleware (sst_middleware) and
 * agents (sst_agent_new) whose tools are Python callables. An agent's graph runs as
 * any compiled graph (sstpy_compiled_of): its model calls and middleware are C and
 * run without the GIL; a Python tool takes the GIL only while it runs.
 */
#include "core.h"

#include <stdint.h>
#include <string.h>

#include "superstep/agent.h"

/* ---- _core.Model ---- */

typedef struct model_obj {
    PyObject_HEAD sst_model *m; /* owned */
} model_obj;

static PyTypeObject model_type;

static void model_dealloc(PyObject *self) {
    sst_model_free(((model_obj *)self)->m);
    Py_TYPE(self)->tp_free(self);
}

/* Sets each of @p params ({name: value}) on @p m; -1 with an exception. */
static int model_params(sst_model *m, PyObject *params) {
    if (params == Py_None) {
        return 0;
    }
    if (!PyDict_Check(params)) {
        PyErr_SetString(PyExc_TypeError, "model params: expected a dict");
        return -1;
    }
    PyObject *k, *v;
    Py_ssize_t pos = 0;
    while (PyDict_Next(params, &pos, &k, &v)) {
        const char *name = PyUnicode_Check(k) ? PyUnicode_AsUTF8(k) : NULL;
        if (name == NULL) {
            PyErr_SetString(PyExc_TypeError, "model params: names must be strings");
            return -1;
        }
        sst_value *val = sstpy_to_value(v, name);
        if (val == NULL) {
            return -1;
        }
        sst_error err = {0};
        sst_code rc = sst_model_set_param(m, name, val, &err);
        sst_value_unref(val);
        if (rc != SST_OK) {
            sstpy_raise(&err, NULL);
            return -1;
        }
    }
    return 0;
}

/*
 * Model(kind, base_url=None, model=None, api_key_env=None, params=None, cache_prompt=False):
 * kind "openai" (an OpenAI-compatible base URL), "anthropic", "fake" (base_url: the JSONL
 * file) or "spec" (base_url: a spec of sst_model_from_spec, model: the model's name).
 */
static int model_init(PyObject *self, PyObject *args, PyObject *kw) {
    static char *kwn[] = {"kind",   "base_url",     "model", "api_key_env",
                          "params", "cache_prompt", NULL};
    model_obj *o = (model_obj *)self;
    const char *kind, *base = NULL, *name = NULL, *key = NULL;
    PyObject *params = Py_None;
    int cache = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "s|zzzOp", kwn, &kind, &base, &name, &key, &params,
                                     &cache)) {
        return -1;
    }
    if (o->m != NULL) {
        PyErr_SetString(PyExc_RuntimeError, "Model: already made");
        return -1;
    }
    sst_error err = {0};
    sst_model *m = NULL;
    if (strcmp(kind, "openai") == 0) {
        m = sst_model_openai(base, name, key, &err);
    } else if (strcmp(kind, "anthropic") == 0) {
        m = sst_model_anthropic(base, name, key, &err);
    } else if (strcmp(kind, "fake") == 0) {
        if (base == NULL) {
            PyErr_SetString(PyExc_ValueError, "the scripted model needs the path of its replies");
            return -1;
        }
        m = sst_model_fake(base, &err);
    } else if (strcmp(kind, "spec") == 0) {
        if (base == NULL) {
            PyErr_SetString(PyExc_ValueError, "a model spec is needed");
            return -1;
        }
        m = sst_model_from_spec(base, name, key, &err);
    } else {
        PyErr_Format(PyExc_ValueError, "unknown model kind '%s'", kind);
        return -1;
    }
    if (m == NULL) {
        sstpy_raise(&err, NULL);
        return -1;
    }
    if (model_params(m, params) < 0) {
        sst_model_free(m);
        return -1;
    }
    if (cache && sst_model_cache_prompt(m, true, &err) != SST_OK) {
        sst_model_free(m);
        sstpy_raise(&err, NULL);
        return -1;
    }
    o->m = m;
    return 0;
}

static sst_model *model_get(PyObject *o) {
    if (!PyObject_TypeCheck(o, &model_type) || ((model_obj *)o)->m == NULL) {
        PyErr_Format(PyExc_TypeError, "expected a chat model, got %.100s", Py_TYPE(o)->tp_name);
        return NULL;
    }
    return ((model_obj *)o)->m;
}

/* invoke(messages, tools=None, response_format=None, strategy=0, max_attempts=0) -> dict */
static PyObject *model_invoke(PyObject *self, PyObject *args, PyObject *kw) {
    static char *kwn[] = {"messages", "tools", "response_format", "strategy", "max_attempts", NULL};
    PyObject *messages, *tools = Py_None, *rf = Py_None;
    int strategy = 0;
    unsigned attempts = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|OOiI", kwn, &messages, &tools, &rf, &strategy,
                                     &attempts)) {
        return NULL;
    }
    sst_model *m = model_get(self);
    if (m == NULL) {
        return NULL;
    }
    sst_value *vm = sstpy_to_value(messages, "messages");
    sst_value *vt = vm != NULL && tools != Py_None ? sstpy_to_value(tools, "tools") : NULL;
    sst_value *vr = vm != NULL && rf != Py_None ? sstpy_to_value(rf, "response_format") : NULL;
    if (vm == NULL || (tools != Py_None && vt == NULL) || (rf != Py_None && vr == NULL)) {
        sst_value_unref(vm);
        sst_value_unref(vt);
        sst_value_unref(vr);
        return NULL;
    }
    sst_model_call_opts o;
    sst_model_call_opts_init(&o);
    o.tools = vt;
    o.response_format = vr;
    o.strategy = (sst_structured_strategy)strategy;
    if (attempts > 0) {
        o.max_attempts = attempts;
    }
    sst_error err = {0};
    sst_value *reply;
    Py_BEGIN_ALLOW_THREADS reply = sst_model_invoke(m, vm, &o, &err);
    Py_END_ALLOW_THREADS sst_value_unref(vm);
    sst_value_unref(vt);
    sst_value_unref(vr);
    return sstpy_take_value(reply, &err, NULL);
}

static PyMethodDef model_methods[] = {
    {"invoke", (PyCFunction)(void (*)(void))model_invoke, METH_VARARGS | METH_KEYWORDS,
     "invoke(messages, tools=None, response_format=None): one model call."},
    {NULL, NULL, 0, NULL}};

static PyTypeObject model_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "superstep._core.Model",
    .tp_basicsize = sizeof(model_obj),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "A chat model of the agent layer (sst_model).",
    .tp_new = PyType_GenericNew,
    .tp_init = model_init,
    .tp_dealloc = model_dealloc,
    .tp_methods = model_methods,
};

/* ---- _core.Middleware ---- */

typedef struct mw_obj {
    PyObject_HEAD sst_middleware *m; /* owned */
    PyObject *keep;                  /* the models it borrows */
} mw_obj;

static PyTypeObject mw_type;

static int mw_traverse(PyObject *self, visitproc visit, void *arg) {
    Py_VISIT(((mw_obj *)self)->keep);
    return 0;
}

static int mw_clear(PyObject *self) {
    Py_CLEAR(((mw_obj *)self)->keep);
    return 0;
}

static void mw_dealloc(PyObject *self) {
    mw_obj *o = (mw_obj *)self;
    PyObject_GC_UnTrack(self);
    sst_middleware_free(o->m);
    o->m = NULL;
    mw_clear(self);
    Py_TYPE(self)->tp_free(self);
}

static int limit_exit(const char *s, sst_limit_behavior *out) {
    if (strcmp(s, "end") == 0) {
        *out = SST_LIMIT_END;
    } else if (strcmp(s, "error") == 0) {
        *out = SST_LIMIT_ERROR;
    } else if (strcmp(s, "continue") == 0) {
        *out = SST_LIMIT_CONTINUE;
    } else {
        PyErr_Format(PyExc_ValueError,
                     "exit_behavior must be 'end', 'error' or 'continue', got '%s'", s);
        return -1;
    }
    return 0;
}

/*
 * Middleware(kind, ...): "human_in_the_loop" (interrupt_on), "summarization" (model,
 * trigger_tokens, keep_messages), "model_call_limit" (thread_limit, run_limit,
 * exit_behavior), "tool_call_limit" (tool_name, thread_limit, run_limit, exit_behavior),
 * "model_fallback" (models, retries), "python" (name, hooks: {"before_model": fn, ...}).
 */
static int mw_init(PyObject *self, PyObject *args, PyObject *kw) {
    static char *kwn[] = {"kind",          "interrupt_on",
                          "model",         "trigger_tokens",
                          "keep_messages", "thread_limit",
                          "run_limit",     "exit_behavior",
                          "tool_name",     "models",
                          "retries",       "name",
                          "hooks",         NULL};
    mw_obj *o = (mw_obj *)self;
    const char *kind, *exit_s = "end", *tool = NULL, *name = NULL;
    PyObject *interrupt_on = Py_None, *model = Py_None, *models = Py_None, *hooks = Py_None;
    long long trigger = 0, thread_limit = -1, run_limit = -1;
    Py_ssize_t keep = 20;
    unsigned retries = 2;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "s|$OOLnLLszOIzO", kwn, &kind, &interrupt_on, &model,
                                     &trigger, &keep, &thread_limit, &run_limit, &exit_s, &tool,
                                     &models, &retries, &name, &hooks)) {
        return -1;
    }
    if (o->m != NULL) {
        PyErr_SetString(PyExc_RuntimeError, "Middleware: already made");
        return -1;
    }
    if (keep < 0) {
        PyErr_SetString(PyExc_ValueError, "keep_messages must not be negative");
        return -1;
    }
    if ((o->keep = PyList_New(0)) == NULL) {
        return -1;
    }
    sst_error err = {0};
    sst_limit_behavior exit_b = SST_LIMIT_END;
    sst_middleware *m = NULL;
    if (strcmp(kind, "python") == 0) {
        if ((m = sstpy_python_middleware(name, hooks)) == NULL) {
            return -1;
        }
    } else if (strcmp(kind, "human_in_the_loop") == 0) {
        sst_value *on = sstpy_to_value(interrupt_on, "interrupt_on");
        if (on == NULL) {
            return -1;
        }
        m = sst_middleware_human_in_the_loop(on, &err);
        sst_value_unref(on);
    } else if (strcmp(kind, "summarization") == 0) {
        sst_model *sm = model_get(model);
        if (sm == NULL || PyList_Append(o->keep, model) < 0) {
            return -1;
        }
        m = sst_middleware_summarization(sm, trigger, (size_t)keep, &err);
    } else if (strcmp(kind, "model_call_limit") == 0 || strcmp(kind, "tool_call_limit") == 0) {
        if (limit_exit(exit_s, &exit_b) < 0) {
            return -1;
        }
        m = kind[0] == 'm'
                ? sst_middleware_model_call_limit(thread_limit, run_limit, exit_b, &err)
                : sst_middleware_tool_call_limit(tool, thread_limit, run_limit, exit_b, &err);
    } else if (strcmp(kind, "model_fallback") == 0) {
        PyObject *seq = PySequence_Fast(models, "models: expected a list of chat models");
        if (seq == NULL) {
            return -1;
        }
        Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
        sst_model **v = PyMem_Calloc((size_t)(n > 0 ? n : 1), sizeof *v);
        int bad = v == NULL;
        for (Py_ssize_t i = 0; !bad && i < n; i++) {
            PyObject *it = PySequence_Fast_GET_ITEM(seq, i);
            bad = (v[i] = model_get(it)) == NULL || PyList_Append(o->keep, it) < 0;
        }
        if (!bad) {
            m = sst_middleware_model_fallback(v, (size_t)n, retries, &err);
        } else if (v == NULL) {
            PyErr_NoMemory();
        }
        PyMem_Free(v);
        Py_DECREF(seq);
        if (bad) {
            return -1;
        }
    } else {
        PyErr_Format(PyExc_ValueError, "unknown middleware '%s'", kind);
        return -1;
    }
    if (m == NULL) {
        sstpy_raise(&err, NULL);
        return -1;
    }
    o->m = m;
    return 0;
}

static PyObject *mw_name(PyObject *self, void *closure) {
    (void)closure;
    mw_obj *o = (mw_obj *)self;
    return o->m != NULL ? PyUnicode_FromString(sst_middleware_name(o->m)) : Py_NewRef(Py_None);
}

static PyGetSetDef mw_getset[] = {{"name", mw_name, NULL, "The middleware's name.", NULL},
                                  {NULL, NULL, NULL, NULL, NULL}};

static PyTypeObject mw_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "superstep._core.Middleware",
    .tp_basicsize = sizeof(mw_obj),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_BASETYPE,
    .tp_doc = "A built-in middleware of the agent layer (sst_middleware).",
    .tp_new = PyType_GenericNew,
    .tp_init = mw_init,
    .tp_dealloc = mw_dealloc,
    .tp_traverse = mw_traverse,
    .tp_clear = mw_clear,
    .tp_getset = mw_getset,
};

/* ---- _core.Agent ---- */

typedef struct agent_obj {
    PyObject_HEAD sst_agent *a; /* owned */
    sst_toolset *tools;         /* owned */
    PyObject *keep;             /* the model, tool callables, middleware, store */
} agent_obj;

static PyTypeObject agent_type;

static int agent_traverse(PyObject *self, visitproc visit, void *arg) {
    Py_VISIT(((agent_obj *)self)->keep);
    return 0;
}

static int agent_clear(PyObject *self) {
    Py_CLEAR(((agent_obj *)self)->keep);
    return 0;
}

static void agent_dealloc(PyObject *self) {
    agent_obj *o = (agent_obj *)self;
    PyObject_GC_UnTrack(self);
    sst_agent_free(o->a);
    sst_toolset_free(o->tools);
    o->a = NULL;
    o->tools = NULL;
    agent_clear(self);
    Py_TYPE(self)->tp_free(self);
}

/*
 * A Python tool, on the thread of the agent's tool task: the callable gets the arguments
 * (a dict) and returns (True, result) or (False, error text), which the model reads as
 * "error: ...". Anything else it raises is told the same way.
 */
static sst_value *tool_fn(const sst_value *args, void *ud, sst_error *err) {
    PyGILState_STATE gil = PyGILState_Ensure();
    sst_value *out = NULL;
    PyObject *a = sstpy_from_value(args);
    PyObject *r = a != NULL ? PyObject_CallOneArg((PyObject *)ud, a) : NULL;
    Py_XDECREF(a);
    if (r != NULL && PyTuple_Check(r) && PyTuple_GET_SIZE(r) == 2) {
        PyObject *ok = PyTuple_GET_ITEM(r, 0), *val = PyTuple_GET_ITEM(r, 1);
        if (PyObject_IsTrue(ok) == 1) {
            out = sstpy_to_value(val, "tool result");
        } else {
            const char *text = PyUnicode_Check(val) ? PyUnicode_AsUTF8(val) : NULL;
            err->code = SST_EINVAL;
            snprintf(err->msg, sizeof err->msg, "%s", text != NULL ? text : "the tool failed");
        }
    } else if (r != NULL) {
        PyErr_SetString(PyExc_TypeError, "tool wrapper: expected (ok, value)");
    }
    if (out == NULL && PyErr_Occurred()) {
        /* Not the tool's own error (the wrapper catches those): a result that is no value. */
        PyObject *type, *value, *tb;
        PyErr_Fetch(&type, &value, &tb);
        PyObject *s = value != NULL ? PyObject_Str(value) : NULL;
        const char *text = s != NULL ? PyUnicode_AsUTF8(s) : NULL;
        PyErr_Clear();
        err->code = SST_ETYPE;
        snprintf(err->msg, sizeof err->msg, "%s", text != NULL ? text : "the tool failed");
        Py_XDECREF(s);
        Py_XDECREF(type);
        Py_XDECREF(value);
        Py_XDECREF(tb);
    }
    Py_XDECREF(r);
    PyGILState_Release(gil);
    return out;
}

/* Adds each (name, description, parameters, callable) of @p tools to @p o's tool set. */
static int agent_tools(agent_obj *o, PyObject *tools) {
    PyObject *seq = PySequence_Fast(tools, "tools: expected a list");
    if (seq == NULL) {
        return -1;
    }
    int rc = 0;
    for (Py_ssize_t i = 0; rc == 0 && i < PySequence_Fast_GET_SIZE(seq); i++) {
        const char *name, *desc;
        PyObject *params, *fn;
        if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(seq, i), "szOO", &name, &desc, &params,
                              &fn) ||
            PyList_Append(o->keep, fn) < 0) {
            rc = -1;
            break;
        }
        sst_value *p = sstpy_to_value(params, "tool parameters");
        if (p == NULL) {
            rc = -1;
            break;
        }
        sst_error err = {0};
        if (sst_toolset_add(o->tools, name, desc, p, tool_fn, fn, &err) != SST_OK) {
            sstpy_raise(&err, NULL);
            rc = -1;
        }
        sst_value_unref(p);
    }
    Py_DECREF(seq);
    return rc;
}

/*
 * Agent(model, tools, *, system_prompt=None, max_iterations=10, response_format=None,
 *       structured_strategy=0, structured_attempts=0, middleware=(), store=None)
 * tools: [(name, description, parameters, callable)].
 */
static int agent_init(PyObject *self, PyObject *args, PyObject *kw) {
    static char *kwn[] = {"model",
                          "tools",
                          "system_prompt",
                          "max_iterations",
                          "response_format",
                          "structured_strategy",
                          "structured_attempts",
                          "middleware",
                          "store",
                          NULL};
    agent_obj *o = (agent_obj *)self;
    PyObject *model, *tools, *rf = Py_None, *mws = Py_None, *store = Py_None;
    const char *prompt = NULL;
    long long max_iter = 10;
    int strategy = 0;
    unsigned attempts = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO|$zLOiIOO", kwn, &model, &tools, &prompt,
                                     &max_iter, &rf, &strategy, &attempts, &mws, &store)) {
        return -1;
    }
    if (o->a != NULL) {
        PyErr_SetString(PyExc_RuntimeError, "Agent: already made");
        return -1;
    }
    sst_model *m = model_get(model);
    if (m == NULL) {
        return -1;
    }
    if (strategy < 0 || strategy > SST_STRUCTURED_PROVIDER) {
        PyErr_SetString(PyExc_ValueError, "structured_strategy: 0, 1 or 2");
        return -1;
    }
    sst_error err = {0};
    if ((o->keep = PyList_New(0)) == NULL || PyList_Append(o->keep, model) < 0) {
        return -1;
    }
    if ((o->tools = sst_toolset_new(&err)) == NULL) {
        sstpy_raise(&err, NULL);
        return -1;
    }
    if (agent_tools(o, tools) < 0) {
        return -1;
    }
    sst_agent_opts ao;
    sst_agent_opts_init(&ao);
    ao.system_prompt = prompt;
    ao.max_iterations = max_iter;
    ao.structured_strategy = (sst_structured_strategy)strategy;
    if (attempts > 0) {
        ao.structured_attempts = attempts;
    }
    sst_value *vrf = NULL;
    if (rf != Py_None && (vrf = sstpy_to_value(rf, "response_format")) == NULL) {
        return -1;
    }
    ao.response_format = vrf;
    if (store != Py_None) {
        if ((ao.store = sstpy_store_get(store)) == NULL || PyList_Append(o->keep, store) < 0) {
            sst_value_unref(vrf);
            return -1;
        }
    }
    PyObject *seq =
        mws == Py_None ? PyTuple_New(0) : PySequence_Fast(mws, "middleware: expected a list");
    sst_middleware **v = NULL;
    Py_ssize_t n = seq != NULL ? PySequence_Fast_GET_SIZE(seq) : 0;
    int bad = seq == NULL || (v = PyMem_Calloc((size_t)(n > 0 ? n : 1), sizeof *v)) == NULL;
    for (Py_ssize_t i = 0; !bad && i < n; i++) {
        PyObject *it = PySequence_Fast_GET_ITEM(seq, i);
        if (!PyObject_TypeCheck(it, &mw_type) || ((mw_obj *)it)->m == NULL) {
            PyErr_Format(PyExc_TypeError, "middleware: expected a superstep middleware, got %.100s",
                         Py_TYPE(it)->tp_name);
            bad = 1;
        } else {
            v[i] = ((mw_obj *)it)->m;
            bad = PyList_Append(o->keep, it) < 0;
        }
    }
    if (!bad) {
        ao.middleware = v;
        ao.n_middleware = (size_t)n;
        o->a = sst_agent_new(m, o->tools, &ao, &err);
        if (o->a == NULL) {
            sstpy_raise(&err, NULL);
            bad = 1;
        }
    } else if (seq != NULL && v == NULL && !PyErr_Occurred()) {
        PyErr_NoMemory();
    }
    PyMem_Free(v);
    Py_XDECREF(seq);
    sst_value_unref(vrf);
    return bad ? -1 : 0;
}

/* compiled(saver=None, workers=4) -> _core.Compiled running the agent's graph. */
static PyObject *agent_compiled(PyObject *self, PyObject *args, PyObject *kw) {
    static char *kwn[] = {"saver", "workers", NULL};
    agent_obj *o = (agent_obj *)self;
    PyObject *saver = Py_None;
    unsigned workers = 4;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|OI", kwn, &saver, &workers)) {
        return NULL;
    }
    if (o->a == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "Agent: not made");
        return NULL;
    }
    return sstpy_compiled_of(sst_agent_graph(o->a), self, saver, workers);
}

static PyObject *agent_recursion_limit(PyObject *self, PyObject *unused) {
    (void)unused;
    agent_obj *o = (agent_obj *)self;
    return PyLong_FromUnsignedLongLong(o->a != NULL ? sst_agent_recursion_limit(o->a) : 25);
}

static PyMethodDef agent_methods[] = {
    {"compiled", (PyCFunction)(void (*)(void))agent_compiled, METH_VARARGS | METH_KEYWORDS,
     "compiled(saver=None, workers=4): the agent's graph, to run."},
    {"recursion_limit", agent_recursion_limit, METH_NOARGS,
     "The supersteps a run may take with the agent's max_iterations."},
    {NULL, NULL, 0, NULL}};

static PyTypeObject agent_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "superstep._core.Agent",
    .tp_basicsize = sizeof(agent_obj),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "A prebuilt ReAct agent of the agent layer (sst_agent).",
    .tp_new = PyType_GenericNew,
    .tp_init = agent_init,
    .tp_dealloc = agent_dealloc,
    .tp_traverse = agent_traverse,
    .tp_clear = agent_clear,
    .tp_methods = agent_methods,
};

int sstpy_agent_init(PyObject *m) {
    PyTypeObject *types[] = {&model_type, &mw_type, &agent_type};
    const char *names[] = {"Model", "Middleware", "Agent"};
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
    return 0;
}
