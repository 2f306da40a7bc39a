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
            if (a != NULL && (out = sst_send_new(PyUnicode_AsUTF8(node), a, &err)) == NULL) {
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
