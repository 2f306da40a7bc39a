/* SPDX-License-Identifier: MIT */
/*
 * Python objects to superstep values and back (docs/python.md, "Values"):
 * dict, list/tuple, str, int, float, bool and None map to JSON values; Send
 * and Overwrite to their markers. Anything else is a TypeError naming the
 * path of the object, e.g. "input['items'][2]: cannot store a set".
 */
#include "core.h"

#include <stdio.h>
#include <string.h>

/* One step of the path from the top object, kept on the C stack while converting. */
typedef struct path_step {
    const struct path_step *up;
    const char *key; /* a dict key, or NULL for an index */
    Py_ssize_t index;
} path_step;

static void path_text(const path_step *p, char *buf, size_t n) {
    if (p == NULL) {
        return;
    }
    path_text(p->up, buf, n);
    size_t used = strlen(buf);
    if (used + 1 >= n) {
        return;
    }
    if (p->key != NULL) {
        snprintf(buf + used, n - used, "['%s']", p->key);
    } else {
        snprintf(buf + used, n - used, "[%zd]", p->index);
    }
}

static void type_error(const char *what, const path_step *p, PyObject *o, const char *why) {
    char path[256];
    snprintf(path, sizeof path, "%s", what);
    path_text(p, path, sizeof path);
    if (why != NULL) {
        PyErr_Format(PyExc_TypeError, "%s: %s", path, why);
    } else {
        PyErr_Format(PyExc_TypeError,
                     "%s: cannot store a %.100s (values are dict, list, tuple, str, int, float, "
                     "bool and None)",
                     path, Py_TYPE(o)->tp_name);
    }
}

static void value_error(const char *what, const path_step *p, const sst_error *err) {
    char path[256];
    snprintf(path, sizeof path, "%s", what);
    path_text(p, path, sizeof path);
    PyErr_Format(err->code == SST_ENOMEM ? PyExc_MemoryError : PyExc_ValueError, "%s: %s", path,
                 err->msg);
}

static sst_value *convert(PyObject *o, const char *what, const path_step *p, int depth);

static sst_value *convert_dict(PyObject *o, const char *what, const path_step *p, int depth) {
    sst_error err = {0};
    sst_value *obj = sst_object_empty();
    PyObject *k, *v;
    Py_ssize_t pos = 0;
    while (PyDict_Next(o, &pos, &k, &v)) {
        const char *key = NULL;
        Py_ssize_t klen = 0;
        PyObject *kstr = NULL;
        if (PyUnicode_Check(k)) {
            key = PyUnicode_AsUTF8AndSize(k, &klen);
        } else if (PyLong_Check(k) || PyFloat_Check(k) || PyBool_Check(k)) {
            /* json.dumps' rule: numbers and booleans as keys become their text */
            kstr = PyBool_Check(k) ? PyUnicode_FromString(k == Py_True ? "true" : "false")
                                   : PyObject_Str(k);
            key = kstr != NULL ? PyUnicode_AsUTF8AndSize(kstr, &klen) : NULL;
        } else {
            type_error(what, p, k, NULL);
            sst_value_unref(obj);
            return NULL;
        }
        if (key == NULL) {
            Py_XDECREF(kstr);
            sst_value_unref(obj);
            return NULL;
        }
        path_step step = {p, key, 0};
        sst_value *item = convert(v, what, &step, depth + 1);
        if (item == NULL) {
            Py_XDECREF(kstr);
            sst_value_unref(obj);
            return NULL;
        }
        obj = sst_object_setn_take(obj, key, (size_t)klen, item, &err);
        Py_XDECREF(kstr);
        if (obj == NULL) {
            value_error(what, p, &err);
            return NULL;
        }
    }
    return obj;
}

static sst_value *convert_seq(PyObject *o, const char *what, const path_step *p, int depth) {
    sst_error err = {0};
    sst_value *arr = sst_array_empty();
    Py_ssize_t n = PySequence_Fast_GET_SIZE(o);
    PyObject **items = PySequence_Fast_ITEMS(o);
    for (Py_ssize_t i = 0; i < n; i++) {
        path_step step = {p, NULL, i};
        sst_value *item = convert(items[i], what, &step, depth + 1);
        if (item == NULL) {
            sst_value_unref(arr);
            return NULL;
        }
        if ((arr = sst_array_push_take(arr, item, &err)) == NULL) {
            value_error(what, p, &err);
            return NULL;
        }
    }
    return arr;
}

static sst_value *convert_send(PyObject *o, const char *what, const path_step *p, int depth) {
    PyObject *node = PyObject_GetAttrString(o, "node");
    PyObject *arg = node != NULL ? PyObject_GetAttrString(o, "arg") : NULL;
    sst_value *out = NULL;
    if (arg != NULL) {
        if (!PyUnicode_Check(node)) {
            type_error(what, p, node, "Send's node must be a str");
        } else {
            path_step step = {p, "arg", 0};
            sst_value *a = convert(arg, what, &step, depth + 1);
            sst_error err = {0};
            /* Send(..., timeout=): (run, idle, heartbeat_only) from Send._timeout_args. */
            PyObject *to = a != NULL ? PyObject_CallMethod(o, "_timeout_args", NULL) : NULL;
            sst_timeout_policy tp = {0, 0, false};
            int hb = 0;
            if (to == NULL || (to != Py_None && !PyArg_ParseTuple(to, "ddp", &tp.run_timeout_s,
                                                                  &tp.idle_timeout_s, &hb))) {
                sst_value_unref(a);
            } else if (to != Py_None) {
                tp.heartbeat_only = hb != 0;
                out = sst_send_new_timeout(PyUnicode_AsUTF8(node), a, &tp, &err);
            } else {
                out = sst_send_new(PyUnicode_AsUTF8(node), a, &err);
            }
            Py_XDECREF(to);
            if (a != NULL && out == NULL && !PyErr_Occurred()) {
                value_error(what, p, &err);
            }
        }
    }
    Py_XDECREF(node);
    Py_XDECREF(arg);
    return out;
}

/*
 * Any other object: superstep.messages._to_value(o) makes a message object (ours, or
 * LangChain's, duck-typed) its message dict; anything it answers None for is a TypeError.
 * Imported on first use: the hook is borrowed for the process.
 */
static sst_value *convert_other(PyObject *o, const char *what, const path_step *p, int depth) {
    static PyObject *hook;
    if (hook == NULL) {
        PyObject *m = PyImport_ImportModule("superstep.messages");
        hook = m != NULL ? PyObject_GetAttrString(m, "_to_value") : NULL;
        Py_XDECREF(m);
        if (hook == NULL) {
            return NULL;
        }
    }
    PyObject *d = PyObject_CallOneArg(hook, o);
    if (d == NULL) {
        return NULL;
    }
    sst_value *v = NULL;
    if (d == Py_None) {
        type_error(what, p, o, NULL);
    } else {
        v = convert(d, what, p, depth + 1);
    }
    Py_DECREF(d);
    return v;
}

static sst_value *convert(PyObject *o, const char *what, const path_step *p, int depth) {
    sst_error err = {0};
    sst_value *v = NULL;
    if (depth > 10000) {
        type_error(what, p, o, "nested too deeply");
        return NULL;
    }
    if (o == Py_None) {
        return sst_null();
    } else if (PyBool_Check(o)) {
        return sst_bool(o == Py_True);
    } else if (PyLong_Check(o)) {
        int overflow = 0;
        long long i = PyLong_AsLongLongAndOverflow(o, &overflow);
        if (overflow != 0) {
            char path[256];
            snprintf(path, sizeof path, "%s", what);
            path_text(p, path, sizeof path);
            PyErr_Format(PyExc_OverflowError, "%s: integer does not fit in 64 bits", path);
            return NULL;
        }
        if (i == -1 && PyErr_Occurred()) {
            return NULL;
        }
        v = sst_int_new((int64_t)i, &err);
    } else if (PyFloat_Check(o)) {
        v = sst_double_new(PyFloat_AS_DOUBLE(o), &err);
    } else if (PyUnicode_Check(o)) {
        Py_ssize_t n;
        const char *s = PyUnicode_AsUTF8AndSize(o, &n);
        if (s == NULL) {
            return NULL;
        }
        v = sst_string_newn(s, (size_t)n, &err);
    } else if (PyDict_Check(o)) {
        return convert_dict(o, what, p, depth);
    } else if (PyList_Check(o) || PyTuple_Check(o)) {
        PyObject *seq = PySequence_Fast(o, "a sequence");
        if (seq == NULL) {
            return NULL;
        }
        v = convert_seq(seq, what, p, depth);
        Py_DECREF(seq);
        return v;
    } else if (sstpy.send != NULL && PyObject_TypeCheck(o, (PyTypeObject *)sstpy.send)) {
        return convert_send(o, what, p, depth);
    } else if (sstpy.overwrite != NULL && PyObject_TypeCheck(o, (PyTypeObject *)sstpy.overwrite)) {
        PyObject *val = PyObject_GetAttrString(o, "value");
        if (val == NULL) {
            return NULL;
        }
        sst_value *inner = convert(val, what, p, depth + 1);
        Py_DECREF(val);
        if (inner == NULL) {
            return NULL;
        }
        v = sst_overwrite_new(inner, &err);
    } else {
        return convert_other(o, what, p, depth);
    }
    if (v == NULL) {
        value_error(what, p, &err);
    }
    return v;
}

sst_value *sstpy_to_value(PyObject *o, const char *what) {
    return convert(o, what, NULL, 0);
}

static PyObject *send_from(const sst_value *v) {
    const sst_value *arg = sst_object_get(v, "arg");
    PyObject *a = sstpy_from_value(arg != NULL ? arg : sst_null());
    if (a == NULL) {
        return NULL;
    }
    PyObject *s =
        PyObject_CallFunction(sstpy.send, "sN", sst_string_cstr(sst_object_get(v, "__send__")), a);
    return s;
}

PyObject *sstpy_from_value(const sst_value *v) {
    switch (sst_value_type(v)) {
        case SST_TYPE_NULL:
            Py_RETURN_NONE;
        case SST_TYPE_BOOL:
            return PyBool_FromLong(sst_bool_value(v));
        case SST_TYPE_INT:
            return PyLong_FromLongLong(sst_int_value(v));
        case SST_TYPE_DOUBLE:
            return PyFloat_FromDouble(sst_double_value(v));
        case SST_TYPE_STRING:
            return PyUnicode_DecodeUTF8(sst_string_cstr(v), (Py_ssize_t)sst_string_len(v),
                                        "strict");
        case SST_TYPE_ARRAY: {
            size_t n = sst_array_len(v);
            PyObject *l = PyList_New((Py_ssize_t)n);
            if (l == NULL) {
                return NULL;
            }
            sst_array_iter it;
            sst_array_iter_init(&it, v);
            for (size_t i = 0; i < n; i++) {
                PyObject *item = sstpy_from_value(sst_array_iter_next(&it));
                if (item == NULL) {
                    Py_DECREF(l);
                    return NULL;
                }
                PyList_SET_ITEM(l, (Py_ssize_t)i, item);
            }
            return l;
        }
        case SST_TYPE_OBJECT: {
            const sst_value *send = sst_object_get(v, "__send__");
            if (send != NULL && sst_is_string(send) && sstpy.send != NULL &&
                sst_object_len(v) <= 3) {
                return send_from(v);
            }
            PyObject *d = PyDict_New();
            if (d == NULL) {
                return NULL;
            }
            size_t n = sst_object_len(v);
            for (size_t i = 0; i < n; i++) {
                const sst_value *k = sst_object_key_at(v, i);
                PyObject *key = PyUnicode_DecodeUTF8(sst_string_cstr(k),
                                                     (Py_ssize_t)sst_string_len(k), "strict");
                PyObject *item = key != NULL ? sstpy_from_value(sst_object_value_at(v, i)) : NULL;
                if (item == NULL || PyDict_SetItem(d, key, item) < 0) {
                    Py_XDECREF(key);
                    Py_XDECREF(item);
                    Py_DECREF(d);
                    return NULL;
                }
                Py_DECREF(key);
                Py_DECREF(item);
            }
            return d;
        }
    }
    Py_RETURN_NONE;
}

/* ---- a node's or a router's state: add_messages fields as message objects ---- */

/*
 * What the last conversion of an add_messages field made: its array (referenced, so that
 * no other value can take the addresses of its elements) and the message objects of its
 * elements. The next conversion of that field reuses the object of every element that is
 * the same value at the same index (a history that grew by a message makes one new
 * object). A few fields at a time, replaced round-robin; used under the GIL; emptied when
 * no invoke runs (sstpy_state_memo_clear).
 */
#define MEMO_FIELDS 8

typedef struct memo_entry {
    char *field;     /* PyMem, or NULL: unused */
    sst_value *last; /* the array converted last */
    PyObject *items; /* list: its elements' objects */
} memo_entry;

static memo_entry memo[MEMO_FIELDS];
static size_t memo_next;

void sstpy_state_memo_clear(void) {
    for (size_t i = 0; i < MEMO_FIELDS; i++) {
        char *field = memo[i].field;
        sst_value *old = memo[i].last;
        PyObject *items = memo[i].items;
        memo[i].field = NULL;
        memo[i].last = NULL;
        memo[i].items = NULL;
        PyMem_Free(field);
        sst_value_unref(old);
        Py_XDECREF(items);
    }
}

static memo_entry *memo_of(const char *field) {
    for (size_t i = 0; i < MEMO_FIELDS; i++) {
        if (memo[i].field != NULL && strcmp(memo[i].field, field) == 0) {
            return &memo[i];
        }
    }
    memo_entry *m = &memo[memo_next];
    memo_next = (memo_next + 1) % MEMO_FIELDS;
    size_t n = strlen(field) + 1;
    char *copy = PyMem_Malloc(n);
    if (copy == NULL) {
        return NULL;
    }
    memcpy(copy, field, n);
    char *old_field = m->field;
    sst_value *old = m->last;
    PyObject *old_items = m->items;
    m->field = copy;
    m->last = NULL;
    m->items = NULL;
    PyMem_Free(old_field);
    sst_value_unref(old);
    Py_XDECREF(old_items);
    return m;
}

/* superstep.messages._from_value: a message dict as a message object. Borrowed for the
 * process once imported. */
static PyObject *message_hook(void) {
    static PyObject *hook;
    if (hook == NULL) {
        PyObject *mod = PyImport_ImportModule("superstep.messages");
        hook = mod != NULL ? PyObject_GetAttrString(mod, "_from_value") : NULL;
        Py_XDECREF(mod);
    }
    return hook;
}

/*
 * The array @p arr of the add_messages field @p field as a new list of message objects.
 * The hook runs Python code, during which another thread may take the GIL and convert
 * too: the previous array and its objects are held here, and the entry is written back
 * only while it still belongs to @p field.
 */
static PyObject *messages_from(const char *field, const sst_value *arr) {
    PyObject *hook = message_hook();
    if (hook == NULL) {
        return NULL;
    }
    size_t n = sst_array_len(arr);
    memo_entry *m = memo_of(field);
    sst_value *prev = m != NULL && m->last != NULL ? sst_value_ref(m->last) : NULL;
    PyObject *prev_items = prev != NULL ? Py_NewRef(m->items) : NULL;
    size_t n_prev = prev != NULL ? sst_array_len(prev) : 0;
    PyObject *l = PyList_New((Py_ssize_t)n);
    sst_array_iter it, pit;
    sst_array_iter_init(&it, arr);
    if (prev != NULL) {
        sst_array_iter_init(&pit, prev);
    }
    for (size_t i = 0; l != NULL && i < n; i++) {
        const sst_value *e = sst_array_iter_next(&it);
        const sst_value *pe = i < n_prev ? sst_array_iter_next(&pit) : NULL;
        PyObject *o;
        if (pe == e) {
            o = Py_NewRef(PyList_GET_ITEM(prev_items, (Py_ssize_t)i));
        } else {
            PyObject *d = sstpy_from_value(e);
            o = d != NULL ? PyObject_CallOneArg(hook, d) : NULL;
            Py_XDECREF(d);
        }
        if (o == NULL) {
            Py_CLEAR(l);
            break;
        }
        PyList_SET_ITEM(l, (Py_ssize_t)i, o);
    }
    sst_value_unref(prev);
    Py_XDECREF(prev_items);
    if (l != NULL && m != NULL && m->field != NULL && strcmp(m->field, field) == 0) {
        PyObject *items = PyList_GetSlice(l, 0, (Py_ssize_t)n); /* the node may change l */
        if (items == NULL) {
            Py_DECREF(l);
            return NULL;
        }
        sst_value *old = m->last;
        PyObject *old_items = m->items;
        m->last = sst_value_ref(arr);
        m->items = items;
        sst_value_unref(old); /* after the swap: freeing objects may run Python code */
        Py_XDECREF(old_items);
    }
    return l;
}

static bool is_message_field(const char *key, const char *const *fields, size_t n) {
    for (size_t i = 0; i < n; i++) {
        if (strcmp(key, fields[i]) == 0) {
            return true;
        }
    }
    return false;
}

PyObject *sstpy_state_from_value(const sst_value *state, PyObject *message_fields) {
    Py_ssize_t nf = message_fields != NULL && PyTuple_Check(message_fields)
                        ? PyTuple_GET_SIZE(message_fields)
                        : 0;
    if (nf == 0 || nf > 16 || !sst_is_object(state) || sst_object_get(state, "__send__") != NULL) {
        return sstpy_from_value(state);
    }
    const char *fields[16];
    for (Py_ssize_t i = 0; i < nf; i++) {
        PyObject *f = PyTuple_GET_ITEM(message_fields, i);
        if (!PyUnicode_Check(f) || (fields[i] = PyUnicode_AsUTF8(f)) == NULL) {
            PyErr_Clear();
            return sstpy_from_value(state);
        }
    }
    PyObject *d = PyDict_New();
    if (d == NULL) {
        return NULL;
    }
    size_t n = sst_object_len(state);
    for (size_t i = 0; i < n; i++) {
        const sst_value *k = sst_object_key_at(state, i);
        const sst_value *v = sst_object_value_at(state, i);
        PyObject *key =
            PyUnicode_DecodeUTF8(sst_string_cstr(k), (Py_ssize_t)sst_string_len(k), "strict");
        PyObject *item = NULL;
        if (key != NULL) {
            item = sst_is_array(v) && is_message_field(sst_string_cstr(k), fields, (size_t)nf)
                       ? messages_from(sst_string_cstr(k), v)
                       : sstpy_from_value(v);
        }
        if (item == NULL || PyDict_SetItem(d, key, item) < 0) {
            Py_XDECREF(key);
            Py_XDECREF(item);
            Py_DECREF(d);
            return NULL;
        }
        Py_DECREF(key);
        Py_DECREF(item);
    }
    return d;
}
