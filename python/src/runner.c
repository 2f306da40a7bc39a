/* SPDX-License-Identifier: MIT */
/*
 * What _core.Compiled (graph.c) and _core.Entrypoint (func.c) share: a
 * compiled graph with its checkpointer and engines (sstpy_runner), the run
 * method both answer (the keywords of CompiledStateGraph._prepare), the state
 * and drawing methods, the stream callback, and the small converters they use.
 *
 * A run's sstpy_run reaches its nodes through the run's config: its address
 * is a configurable key (keys starting "__" are never copied into checkpoint
 * metadata), valid while that run lasts.
 */
#include "core.h"

#include <stdint.h>
#include <string.h>

/* ---- a list of names as a C array ---- */

int sstpy_names_from(PyObject *o, sstpy_names *out, const char *what) {
    memset(out, 0, sizeof *out);
    if (o == NULL || o == Py_None) {
        return 0;
    }
    if ((out->seq = PySequence_Fast(o, what)) == NULL) {
        return -1;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(out->seq);
    out->v = PyMem_Calloc((size_t)(n > 0 ? n : 1), sizeof *out->v);
    if (out->v == NULL) {
        Py_CLEAR(out->seq);
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *s = PySequence_Fast_GET_ITEM(out->seq, i);
        if (!PyUnicode_Check(s) || (out->v[i] = PyUnicode_AsUTF8(s)) == NULL) {
            if (!PyErr_Occurred()) {
                PyErr_Format(PyExc_TypeError, "%s: item %zd is not a str", what, i);
            }
            PyMem_Free(out->v);
            Py_CLEAR(out->seq);
            return -1;
        }
    }
    out->n = (size_t)n;
    out->set = true;
    return 0;
}

void sstpy_names_free(sstpy_names *n) {
    PyMem_Free(n->v);
    Py_CLEAR(n->seq);
    n->v = NULL;
}

/* ---- the runner: graph, checkpointer, engines ---- */

void sstpy_runner_init(sstpy_runner *r, sst_compiled_graph *cg, bool borrowed, sst_checkpointer *cp,
                       unsigned workers) {
    memset(r, 0, sizeof *r);
    r->cg = cg;
    r->borrowed = borrowed;
    r->cp = cp != NULL ? sst_checkpointer_ref(cp) : NULL;
    r->workers = workers;
}

/* Frees @p e with the GIL released: its workers' thread states are dropped as they end
 * (gil.c), which takes the GIL. */
static void engine_free(sst_engine *e) {
    Py_BEGIN_ALLOW_THREADS sst_engine_free(e);
    Py_END_ALLOW_THREADS
}

void sstpy_runner_free(sstpy_runner *r) {
    for (size_t i = 0; i < r->n_engines; i++) {
        engine_free(r->engines[i]);
    }
    PyMem_Free(r->engines);
    r->engines = NULL;
    r->n_engines = r->cap_engines = 0;
    if (!r->borrowed) {
        sst_compiled_graph_free(r->cg);
    }
    sst_checkpointer_free(r->cp);
    r->cg = NULL;
    r->cp = NULL;
}

sst_engine *sstpy_engine_take(sstpy_runner *r, sst_error *err) {
    if (r->n_engines > 0) {
        return r->engines[--r->n_engines];
    }
    sst_engine_opts eo;
    sst_engine_opts_init(&eo);
    eo.workers = r->workers > 1 ? r->workers : 1;
    return sst_engine_new(&eo, err);
}

/* ---- the GIL once per thread and batch (sst_batch_hook) ---- */

static void *batch_enter(void *ud) {
    (void)ud;
    return (void *)(intptr_t)sstpy_gil_ensure();
}

static void batch_leave(void *token, void *ud) {
    (void)ud;
    PyGILState_Release((PyGILState_STATE)(intptr_t)token);
}

static const sst_batch_hook batch_gil = {batch_enter, batch_leave, NULL};

/*
 * Whether a run's tasks may keep the GIL from one task to the next on a thread: only when
 * nothing the engine or the graph layer does inside a task, between or after the node
 * functions, waits for another thread while it holds the GIL. Python node functions
 * (graph.c node_fn) take it themselves and release it in every blocking call; what is
 * ruled out is C doing the waiting: the nodes of a graph compiled elsewhere (c->borrowed:
 * an agent's graph, whose model node waits on HTTP that a Python server thread may
 * answer), a declared subgraph node (a whole child run on the task's thread: its
 * checkpoints, its writers), stream events (sent under the run's stream lock, live.c,
 * which another thread may hold while its callback waits for the GIL) and an entrypoint's
 * tasks (they wait for their calls).
 */
static bool batch_gil_safe(const sstpy_runner *c, const sstpy_run_kind *kind, unsigned modes,
                           PyObject *on_event) {
    return kind->nodes && !c->borrowed && (modes == 0 || on_event == Py_None) &&
           sst_compiled_graph_subgraph_at(c->cg, 0, NULL) == NULL;
}

void sstpy_engine_give(sstpy_runner *r, sst_engine *e) {
    if (e == NULL) {
        return;
    }
    if (r->n_engines == r->cap_engines) {
        size_t cap = r->cap_engines ? r->cap_engines * 2 : 2;
        sst_engine **v = PyMem_Realloc(r->engines, cap * sizeof *v);
        if (v == NULL) {
            engine_free(e);
            return;
        }
        r->engines = v;
        r->cap_engines = cap;
    }
    r->engines[r->n_engines++] = e;
}

sst_graph_thread *sstpy_runner_thread(const sstpy_runner *r, const char *id, const char *ns,
                                      const char *what) {
    if (r->cp == NULL) {
        PyErr_Format(PyExc_ValueError, "%s: No checkpointer set", what);
        return NULL;
    }
    if (id == NULL) {
        PyErr_Format(PyExc_ValueError,
                     "%s: a checkpointer needs a thread_id in config['configurable']", what);
        return NULL;
    }
    sst_error err = {0};
    sst_graph_thread *t = sst_graph_thread_open_ns(r->cg, r->cp, id, ns != NULL ? ns : "", &err);
    if (t == NULL) {
        sstpy_raise(&err, NULL);
    }
    return t;
}

int sstpy_opt_value(PyObject *o, sst_value **out, const char *what) {
    *out = NULL;
    if (o == NULL || o == Py_None) {
        return 0;
    }
    return (*out = sstpy_to_value(o, what)) != NULL ? 0 : -1;
}

/* ---- a run's Python side ---- */

sstpy_run *sstpy_run_of(const sst_node_ctx *ctx, const char *key) {
    const sst_value *v = sst_object_get(sst_object_get(sst_node_config(ctx), "configurable"), key);
    return v != NULL && sst_is_int(v) ? (sstpy_run *)(intptr_t)sst_int_value(v) : NULL;
}

sst_value *sstpy_config_with_run(sst_value *cfg, const char *key, sstpy_run *run) {
    sst_error err = {0};
    if (cfg == NULL || !sst_is_object(cfg)) {
        sst_value_unref(cfg);
        cfg = sst_object_empty();
    }
    const sst_value *conf = sst_object_get(cfg, "configurable");
    sst_value *c2 = conf != NULL && sst_is_object(conf) ? sst_value_ref(conf) : sst_object_empty();
    sst_value *addr = sst_int_new((int64_t)(intptr_t)run, &err);
    c2 = addr != NULL ? sst_object_set_take(c2, key, addr, &err) : (sst_value_unref(c2), NULL);
    cfg = c2 != NULL ? sst_object_set_take(cfg, "configurable", c2, &err)
                     : (sst_value_unref(cfg), NULL);
    if (cfg == NULL) {
        sstpy_raise(&err, NULL);
    }
    return cfg;
}

const sstpy_stream_mode sstpy_stream_modes[] = {
    {"values", SST_STREAM_VALUES},          {"updates", SST_STREAM_UPDATES},
    {"custom", SST_STREAM_CUSTOM},          {"debug", SST_STREAM_DEBUG},
    {"messages", SST_STREAM_MESSAGES},      {"tasks", SST_STREAM_TASKS},
    {"checkpoints", SST_STREAM_CHECKPOINTS}};
const size_t sstpy_n_stream_modes = sizeof sstpy_stream_modes / sizeof sstpy_stream_modes[0];

sst_code sstpy_stream_fn(sst_stream_mode mode, const char *ns, const char *node,
                         const sst_value *event, void *ud) {
    sstpy_run *r = ud;
    const char *name = "unknown";
    for (size_t i = 0; i < sstpy_n_stream_modes; i++) {
        if (sstpy_stream_modes[i].mode == mode) {
            name = sstpy_stream_modes[i].name;
        }
    }
    PyGILState_STATE gil = sstpy_gil_ensure();
    sst_code rc = SST_OK;
    if (r->stream_exc != NULL) {
        rc = SST_ECANCELLED;
    } else {
        PyObject *ev = sstpy_from_value(event);
        PyObject *res =
            ev != NULL ? PyObject_CallFunction(r->on_event, "szzO", name, ns, node, ev) : NULL;
        Py_XDECREF(ev);
        if (res == NULL) {
            PyObject *type, *value, *tb;
            PyErr_Fetch(&type, &value, &tb);
            PyErr_NormalizeException(&type, &value, &tb);
            if (tb != NULL && value != NULL) {
                PyException_SetTraceback(value, tb);
            }
            r->stream_exc = value != NULL ? value : Py_NewRef(Py_None);
            Py_XDECREF(type);
            Py_XDECREF(tb);
            rc = SST_ECANCELLED;
        } else {
            if (res == Py_False) {
                rc = SST_ECANCELLED;
                r->stream_exc = Py_NewRef(Py_False); /* stopped by the consumer */
            }
            Py_DECREF(res);
        }
    }
    PyGILState_Release(gil);
    return rc;
}

/* ---- Ctrl-C: the run stops between supersteps ---- */

/* The main thread's id (threading.main_thread().ident), read once under the GIL. */
static unsigned long main_thread_ident(void) {
    static unsigned long ident;
    static bool known;
    if (!known) {
        PyObject *th = PyImport_ImportModule("threading");
        PyObject *mt = th != NULL ? PyObject_CallMethod(th, "main_thread", NULL) : NULL;
        PyObject *id = mt != NULL ? PyObject_GetAttrString(mt, "ident") : NULL;
        if (id != NULL && PyLong_Check(id)) {
            ident = PyLong_AsUnsignedLong(id);
            known = !PyErr_Occurred();
        }
        PyErr_Clear();
        Py_XDECREF(id);
        Py_XDECREF(mt);
        Py_XDECREF(th);
    }
    return ident;
}

/*
 * sst_invoke_opts.cancelled of a run invoked on the main thread or given `stop`. Before a
 * superstep (on the invoking thread) it runs Python's pending signal handlers: the
 * KeyboardInterrupt of a Ctrl-C that came while the engine ran (the main thread waiting
 * without the GIL) is kept and stops the run there, its committed supersteps kept (the
 * thread is left idle, as a server's cancel leaves it). Nodes asking get the answer given.
 */
static bool run_cancelled(void *ud, bool in_node) {
    sstpy_run *r = ud;
    if (in_node || atomic_load(&r->cancelled)) {
        return atomic_load(&r->cancelled) != 0;
    }
    bool on_main = r->main_thread && PyThread_get_thread_ident() == main_thread_ident();
    if (!on_main && r->stop == NULL) {
        return false; /* a subgraph's superstep on a worker: its parent's boundary checks */
    }
    PyGILState_STATE gil = PyGILState_Ensure();
    bool stop = false;
    if (on_main && PyErr_CheckSignals() < 0) {
        PyObject *type, *value, *tb;
        PyErr_Fetch(&type, &value, &tb);
        PyErr_NormalizeException(&type, &value, &tb);
        if (value != NULL && tb != NULL) {
            PyException_SetTraceback(value, tb);
        }
        Py_XDECREF(type);
        Py_XDECREF(tb);
        if (r->cancel_exc == NULL) {
            r->cancel_exc = value != NULL ? value : Py_NewRef(PyExc_KeyboardInterrupt);
        } else {
            Py_XDECREF(value);
        }
        stop = true;
    } else if (r->stop != NULL) {
        PyObject *yes = PyObject_CallMethod(r->stop, "is_set", NULL);
        stop = yes != NULL && PyObject_IsTrue(yes) == 1;
        Py_XDECREF(yes);
        PyErr_Clear();
    }
    if (stop) {
        atomic_store(&r->cancelled, 1);
    }
    PyGILState_Release(gil);
    return stop;
}

void sstpy_run_cancel(const sst_node_ctx *ctx, const char *key) {
    sstpy_run *r = sstpy_run_of(ctx, key);
    if (r != NULL) {
        atomic_store(&r->cancelled, 1);
    }
}

/* ---- the methods both objects answer ---- */

PyObject *sstpy_runner_run(PyObject *self, PyObject *args, PyObject *kw,
                           const sstpy_run_kind *kind) {
    static char *kwn[] = {"input",           "has_input",  "thread_id",
                          "checkpoint_id",   "config",     "pyconfig",
                          "resume",          "has_resume", "resume_by_id",
                          "update",          "goto",       "recursion_limit",
                          "stream_modes",    "on_event",   "interrupt_before",
                          "interrupt_after", "durability", "context",
                          "subgraphs",       "stop",       NULL};
    sstpy_runner *c = SSTPY_RUNNER(self);
    PyObject *input = Py_None, *config = Py_None, *pyconfig = Py_None, *resume = Py_None;
    PyObject *by_id = Py_None, *update = Py_None, *go = Py_None, *on_event = Py_None;
    PyObject *before = Py_None, *after = Py_None, *context = Py_None, *stop = Py_None;
    const char *thread_id = NULL, *checkpoint_id = NULL;
    int has_input = 0, has_resume = 0, durability = 0, subgraphs = 0;
    unsigned long long limit = 25;
    unsigned modes = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|$pzzOOOpOOOKIOOOiOpO", kwn, &input, &has_input,
                                     &thread_id, &checkpoint_id, &config, &pyconfig, &resume,
                                     &has_resume, &by_id, &update, &go, &limit, &modes, &on_event,
                                     &before, &after, &durability, &context, &subgraphs, &stop)) {
        return NULL;
    }
    if (!kind->nodes && (before != Py_None || after != Py_None)) {
        PyErr_SetString(PyExc_ValueError,
                        "an entrypoint has no nodes to interrupt before or after");
        return NULL;
    }
    sst_value *vin = NULL, *vres = NULL, *vby = NULL, *vupd = NULL, *vgo = NULL, *vctx = NULL;
    sst_value *vcfg = NULL;
    sstpy_names nb = {0}, na = {0};
    sst_graph_thread *t = NULL;
    PyObject *ret = NULL;
    sstpy_run run = {pyconfig, on_event != Py_None ? on_event : NULL,
                     NULL,     stop != Py_None ? stop : NULL,
                     false,    0,
                     NULL};
    run.main_thread = PyThread_get_thread_ident() == main_thread_ident();
    sst_error err = {0};

    if ((has_input && input != Py_None && (vin = sstpy_to_value(input, "input")) == NULL) ||
        (has_resume && (vres = sstpy_to_value(resume, "Command resume")) == NULL) ||
        sstpy_opt_value(by_id, &vby, "Command resume") < 0 ||
        sstpy_opt_value(update, &vupd, "Command update") < 0 ||
        sstpy_opt_value(go, &vgo, "Command goto") < 0 ||
        sstpy_opt_value(context, &vctx, "context") < 0 ||
        sstpy_opt_value(config, &vcfg, "config") < 0 ||
        sstpy_names_from(before, &nb, "interrupt_before") < 0 ||
        sstpy_names_from(after, &na, "interrupt_after") < 0) {
        goto done;
    }
    if ((vcfg = sstpy_config_with_run(vcfg, kind->key, &run)) == NULL) {
        goto done;
    }
    if (c->cp != NULL && (t = sstpy_runner_thread(c, thread_id, NULL, "invoke")) == NULL) {
        goto done;
    }
    sst_invoke_opts o;
    sst_invoke_opts_init(&o);
    o.recursion_limit = limit;
    o.resume = vres;
    o.resume_by_id = vby;
    o.update = vupd;
    o.goto_targets = vgo;
    o.context = vctx;
    o.config = vcfg;
    if ((o.engine = sstpy_engine_take(c, &err)) == NULL) {
        sstpy_raise(&err, NULL);
        goto done;
    }
    sst_engine_set_batch_hook(o.engine,
                              batch_gil_safe(c, kind, modes, on_event) ? &batch_gil : NULL);
    o.checkpoint_id = checkpoint_id;
    o.sleep = kind->sleep;
    o.durability = (sst_durability)durability;
    o.subgraphs = subgraphs != 0;
    if (nb.set) {
        o.interrupt_before = nb.v;
        o.n_before = nb.n;
    }
    if (na.set) {
        o.interrupt_after = na.v;
        o.n_after = na.n;
    }
    if (run.main_thread || run.stop != NULL) {
        o.cancelled = run_cancelled;
        o.cancel_user_data = &run;
    }
    if (run.on_event != NULL && modes != 0) {
        o.stream_modes = modes;
        o.stream_ns = sstpy_stream_fn;
        o.stream_user_data = &run;
    }
    sst_graph_result *r;
    static unsigned running; /* invokes under way (under the GIL) */
    running++;
    Py_BEGIN_ALLOW_THREADS r = sst_graph_invoke(c->cg, t, vin, &o, &err);
    Py_END_ALLOW_THREADS sstpy_engine_give(c, o.engine);
    if (--running == 0) {
        sstpy_state_memo_clear(); /* no run is left to reuse its messages */
    }
    if (r == NULL) {
        sstpy_raise(&err, NULL);
        goto done;
    }
    if (sst_graph_result_status(r) == SST_RUN_FAILED) {
        if (run.stream_exc != NULL && run.stream_exc != Py_False && run.stream_exc != Py_None) {
            PyErr_SetObject((PyObject *)Py_TYPE(run.stream_exc), run.stream_exc);
        } else if (run.stream_exc == Py_False) {
            ret = Py_BuildValue("(sOO)", "stopped", Py_None, Py_None);
        } else if (run.cancel_exc != NULL &&
                   strstr(sst_graph_result_error(r)->msg, "[py#") == NULL) {
            /* Stopped between supersteps by a Ctrl-C: its KeyboardInterrupt. */
            PyErr_SetObject((PyObject *)Py_TYPE(run.cancel_exc), run.cancel_exc);
        } else {
            sstpy_raise(sst_graph_result_error(r), sst_graph_result_error_node(r));
        }
        sst_graph_result_free(r);
        goto done;
    }
    PyObject *state = sstpy_from_value(sst_graph_result_state(r));
    PyObject *ints = state != NULL ? sstpy_from_value(sst_graph_result_interrupts(r)) : NULL;
    if (ints != NULL) {
        ret = Py_BuildValue("(sNN)", sst_run_status_name(sst_graph_result_status(r)), state, ints);
    } else {
        Py_XDECREF(state);
    }
    sst_graph_result_free(r);
done:
    sst_graph_thread_free(t);
    sst_value_unref(vin);
    sst_value_unref(vres);
    sst_value_unref(vby);
    sst_value_unref(vupd);
    sst_value_unref(vgo);
    sst_value_unref(vctx);
    sst_value_unref(vcfg);
    sstpy_names_free(&nb);
    sstpy_names_free(&na);
    Py_XDECREF(run.stream_exc);
    Py_XDECREF(run.cancel_exc);
    return ret;
}

PyObject *sstpy_runner_get_state(PyObject *self, PyObject *args) {
    const sstpy_runner *c = SSTPY_RUNNER(self);
    const char *id, *cp = NULL, *ns = NULL;
    int nested = 0;
    if (!PyArg_ParseTuple(args, "z|zzp", &id, &cp, &ns, &nested)) {
        return NULL;
    }
    sst_graph_thread *t = sstpy_runner_thread(c, id, ns, "get_state");
    if (t == NULL) {
        return NULL;
    }
    sst_error err = {0};
    sst_value *st;
    Py_BEGIN_ALLOW_THREADS st =
        nested ? sst_graph_get_state_nested(t, cp, &err) : sst_graph_get_state(t, cp, &err);
    Py_END_ALLOW_THREADS sst_graph_thread_free(t);
    return sstpy_take_value(st, &err, NULL);
}

/* history(thread_id, filter=None, limit=0, ns=None) -> [dict] newest first */
PyObject *sstpy_runner_history(PyObject *self, PyObject *args) {
    const sstpy_runner *c = SSTPY_RUNNER(self);
    const char *id, *ns = NULL;
    PyObject *filter = Py_None;
    unsigned long long limit = 0;
    if (!PyArg_ParseTuple(args, "z|OKz", &id, &filter, &limit, &ns)) {
        return NULL;
    }
    sst_value *f = NULL;
    if (sstpy_opt_value(filter, &f, "filter") < 0) {
        return NULL;
    }
    sst_graph_thread *t = sstpy_runner_thread(c, id, ns, "get_state_history");
    if (t == NULL) {
        sst_value_unref(f);
        return NULL;
    }
    sst_error err = {0};
    sst_value *h;
    Py_BEGIN_ALLOW_THREADS h = sst_graph_get_state_history(t, f, (size_t)limit, &err);
    Py_END_ALLOW_THREADS sst_graph_thread_free(t);
    sst_value_unref(f);
    return sstpy_take_value(h, &err, NULL);
}

/*
 * update_state(thread_id, checkpoint_id, values, as_node, ns=None, bulk=False) -> the new
 * head's snapshot (dict). With bulk, @p values is a list of supersteps of {values, as_node}.
 */
PyObject *sstpy_runner_update_state(PyObject *self, PyObject *args) {
    const sstpy_runner *c = SSTPY_RUNNER(self);
    const char *id, *cp, *as_node, *ns = NULL;
    PyObject *values;
    int bulk = 0;
    if (!PyArg_ParseTuple(args, "zzOz|zp", &id, &cp, &values, &as_node, &ns, &bulk)) {
        return NULL;
    }
    sst_value *v = NULL;
    if (sstpy_opt_value(values, &v, "update_state values") < 0) {
        return NULL;
    }
    sst_graph_thread *t = sstpy_runner_thread(c, id, ns, "update_state");
    if (t == NULL) {
        sst_value_unref(v);
        return NULL;
    }
    sst_error err = {0};
    sst_code rc;
    sst_value *st = NULL;
    Py_BEGIN_ALLOW_THREADS rc = bulk ? sst_graph_bulk_update_state(t, cp, v, &err)
                                     : sst_graph_update_state(t, cp, v, as_node, &err);
    if (rc == SST_OK) {
        st = sst_graph_get_state(t, NULL, &err);
    }
    Py_END_ALLOW_THREADS sst_graph_thread_free(t);
    sst_value_unref(v);
    return sstpy_take_value(st, &err, as_node);
}

/* mermaid(xray=0) -> str */
PyObject *sstpy_runner_mermaid(PyObject *self, PyObject *args) {
    const sstpy_runner *c = SSTPY_RUNNER(self);
    unsigned xray = 0;
    if (!PyArg_ParseTuple(args, "|I", &xray)) {
        return NULL;
    }
    sst_error err = {0};
    char *s = sst_compiled_graph_mermaid_xray(c->cg, xray, &err);
    if (s == NULL) {
        return sstpy_raise(&err, NULL);
    }
    PyObject *o = PyUnicode_FromString(s);
    sst_free(s);
    return o;
}

/* graph_json(xray=0) -> dict (LangGraph's Graph.to_json()) */
PyObject *sstpy_runner_graph_json(PyObject *self, PyObject *args) {
    const sstpy_runner *c = SSTPY_RUNNER(self);
    unsigned xray = 0;
    if (!PyArg_ParseTuple(args, "|I", &xray)) {
        return NULL;
    }
    sst_error err = {0};
    sst_value *v = sst_compiled_graph_json(c->cg, xray, &err);
    return sstpy_take_value(v, &err, NULL);
}

PyObject *sstpy_runner_warnings(PyObject *self, PyObject *unused) {
    (void)unused;
    const sstpy_runner *c = SSTPY_RUNNER(self);
    size_t n = sst_compiled_graph_warning_count(c->cg);
    PyObject *l = PyList_New((Py_ssize_t)n);
    for (size_t i = 0; l != NULL && i < n; i++) {
        PyObject *s = PyUnicode_FromString(sst_compiled_graph_warning(c->cg, i));
        if (s == NULL) {
            Py_CLEAR(l);
            break;
        }
        PyList_SET_ITEM(l, (Py_ssize_t)i, s);
    }
    return l;
}
