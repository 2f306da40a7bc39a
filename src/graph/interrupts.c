/* SPDX-License-Identifier: MIT */
/*
 * Interrupts and their answers: the graph's interrupts from an interrupted
 * engine run (dynamic ones with their task and place, the ones a subgraph
 * forwarded with the child's ids, interrupt_before/after stops), their ids,
 * and the resume point with the answers put in for their tasks.
 */
#include <stdio.h>
#include <string.h>

#include "graph_int.h"
#include "values/build.h"

static sst_value *str(const char *s) {
    return sst_string_new(s, NULL);
}

static sst_value *num(int64_t i) {
    return sst_int_new(i, NULL);
}

/* A 32-hex interrupt id from the parts that identify it. */
static sst_value *interrupt_id(const char *a, const char *b, uint64_t n) {
    sst__buf key;
    sst__buf_init(&key);
    sst__buf_printf(&key, "%s\x1f%s\x1f%llu", a, b, (unsigned long long)n);
    size_t sz;
    char *buf = sst__buf_detach(&key, &sz);
    if (buf == NULL) {
        return NULL;
    }
    uint64_t hi = sst__hash_bytes(buf, sz, 0x696e7472), lo = sst__hash_bytes(buf, sz, 0x72757074);
    sst__free(buf);
    char hex[33];
    snprintf(hex, sizeof hex, "%016llx%016llx", (unsigned long long)hi, (unsigned long long)lo);
    return str(hex);
}

/* Checks that the resume values of @p o name pending interrupts unambiguously. */
static bool check_resume_targets(const sst_value *pending, const sst_invoke_opts *o,
                                 sst_error *err) {
    size_t dynamic = 0;
    for (size_t i = 0; i < sst_array_len(pending); i++) {
        dynamic += sst_object_get(sst_array_get(pending, i), "task") != NULL;
    }
    if (o->resume_by_id != NULL) {
        for (size_t k = 0; k < sst_object_len(o->resume_by_id); k++) {
            const sst_value *id = sst_object_key_at(o->resume_by_id, k);
            bool found = false;
            for (size_t i = 0; i < sst_array_len(pending) && !found; i++) {
                const sst_value *p = sst_array_get(pending, i);
                found = sst_value_equal(sst_object_get(p, "id"), id);
            }
            if (!found) {
                sst__error(err, SST_EINVAL, "resume: no pending interrupt has id '%s'",
                           sst_string_cstr(id));
                return false;
            }
        }
    } else if (o->resume != NULL && dynamic > 1) {
        sst__buf ids;
        sst__buf_init(&ids);
        for (size_t i = 0; i < sst_array_len(pending); i++) {
            sst__buf_printf(&ids, "%s%s", i ? ", " : "",
                            sst_string_cstr(sst_object_get(sst_array_get(pending, i), "id")));
        }
        sst__error(err, SST_EINVAL,
                   "resume: %zu interrupts are pending. When there are multiple pending "
                   "interrupts, you must specify the interrupt id when resuming. Pending: %.*s",
                   dynamic, (int)ids.len, ids.data != NULL ? ids.data : "");
        sst__buf_free(&ids);
        return false;
    }
    return true;
}

/* True when @p resume is an object whose keys are all ids of @p pending interrupts. */
bool sst__resume_is_id_map(const sst_value *pending, const sst_value *resume) {
    if (!sst_is_object(resume) || sst_object_len(resume) == 0) {
        return false;
    }
    for (size_t k = 0; k < sst_object_len(resume); k++) {
        const sst_value *key = sst_object_key_at(resume, k);
        bool found = false;
        for (size_t i = 0; i < sst_array_len(pending) && !found; i++) {
            found = sst_value_equal(sst_object_get(sst_array_get(pending, i), "id"), key);
        }
        if (!found) {
            return false;
        }
    }
    return true;
}

/* Puts @p value (borrowed) at @p index of the resume list of @p task in @p map (takes it). */
static sst_value *put_resume_value(sst_value *map, const sst_value *task, size_t index,
                                   const sst_value *value, sst_error *err) {
    const sst_value *have = sst_object_get(map, sst_string_cstr(task));
    sst_value *list = sst_value_ref(have != NULL ? have : sst_array_empty());
    while (list != NULL && sst_array_len(list) < index) {
        list = sst_array_push_take(list, sst_null(), err);
    }
    if (list != NULL && sst_array_len(list) > index) {
        list = sst_array_set_take(list, index, sst_value_ref(value), err);
    } else if (list != NULL) {
        list = sst_array_push_take(list, sst_value_ref(value), err);
    }
    return list != NULL ? sst_object_setv_take(map, task, list, err) : (sst_value_unref(map), NULL);
}

/* The engine resume point with the new resume values put in for their tasks. */
sst_value *sst__resume_point_with_values(const sst_graph_thread *th, const sst_invoke_opts *o,
                                         sst_error *err) {
    const sst_value *pending = th->pending;
    if (!check_resume_targets(pending, o, err)) {
        return NULL;
    }
    sst_value *map = sst_value_ref(sst_object_get(th->resume_point, "resume"));
    if (map == NULL) {
        map = sst_object_empty();
    }
    for (size_t i = 0; i < sst_array_len(pending) && map != NULL; i++) {
        const sst_value *p = sst_array_get(pending, i);
        const sst_value *task = sst_object_get(p, "task");
        if (task == NULL) {
            continue; /* interrupt_before/after: nothing to hand in */
        }
        const sst_value *value =
            o->resume_by_id != NULL
                ? sst_object_get(o->resume_by_id, sst_string_cstr(sst_object_get(p, "id")))
                : o->resume;
        if (value == NULL) {
            continue; /* not resumed this time: the task interrupts again */
        }
        size_t index = (size_t)sst_int_value(sst_object_get(p, "index"));
        if (sst_object_get(p, "sub") != NULL) {
            /* A subgraph's interrupt: the child is resumed by the interrupt's id. */
            sst_value *by_id = sst__set_take(sst_object_empty(), "id",
                                             sst_value_ref(sst_object_get(p, "id")), err);
            by_id = sst__set_take(by_id, "value", sst_value_ref(value), err);
            map = by_id != NULL ? put_resume_value(map, task, index, by_id, err)
                                : (sst_value_unref(map), NULL);
            sst_value_unref(by_id);
            continue;
        }
        map = put_resume_value(map, task, index, value, err);
    }
    if (map == NULL) {
        return NULL;
    }
    return sst_object_set_take(sst_value_ref(th->resume_point), "resume", map, err);
}

/*
 * Appends the interrupts a subgraph task @p x forwarded (its value's "sub": the child's
 * interrupts): each keeps the child's id, so a resume by id reaches the child; internally
 * with the task, its place in the list and "sub".
 */
static sst_value *forwarded_interrupts(sst_value *list, const sst_value *x, bool internal) {
    const sst_value *sub = sst_object_get(sst_object_get(x, "value"), "sub");
    for (size_t k = 0; k < sst_array_len(sub) && list != NULL; k++) {
        const sst_value *s = sst_array_get(sub, k);
        sst_value *e =
            sst__set_take(sst_object_empty(), "id", sst_value_ref(sst_object_get(s, "id")), NULL);
        e = sst__set_take(e, "node", sst_value_ref(sst_object_get(x, "vertex")), NULL);
        const sst_value *v = sst_object_get(s, "value");
        e = sst__set_take(e, "value", sst_value_ref(v != NULL ? v : sst_null()), NULL);
        const sst_value *ns = sst_object_get(s, "ns");
        if (ns != NULL) {
            e = sst__set_take(e, "ns", sst_value_ref(ns), NULL);
        }
        if (internal) {
            e = sst__set_take(e, "task", sst_value_ref(sst_object_get(x, "task")), NULL);
            e = sst__set_take(e, "index", num((int64_t)k), NULL);
            e = sst__set_take(e, "sub", sst_bool(true), NULL);
        }
        list = e != NULL ? sst_array_push_take(list, e, NULL) : (sst_value_unref(list), NULL);
    }
    return list;
}

/* Graph interrupts from an interrupted engine run. */
sst_value *sst__collect_interrupts(const sst_run_result *rr, const char *stopped,
                                   const sst_value *nodes, const char *run_key, bool internal) {
    sst_value *list = sst_array_empty();
    const sst_value *ints = sst_run_result_interrupts(rr);
    for (size_t i = 0; i < sst_array_len(ints) && list != NULL; i++) {
        const sst_value *x = sst_array_get(ints, i);
        const sst_value *wrapped = sst_object_get(x, "value");
        const char *task = sst_string_cstr(sst_object_get(x, "task"));
        if (sst_object_get(wrapped, "sub") != NULL) {
            list = forwarded_interrupts(list, x, internal);
            continue;
        }
        int64_t index = sst_int_value(sst_object_get(wrapped, "index"));
        sst_value *e =
            sst__set_take(sst_object_empty(), "id", interrupt_id(task, "", (uint64_t)index), NULL);
        e = sst__set_take(e, "node", sst_value_ref(sst_object_get(x, "vertex")), NULL);
        const sst_value *v = sst_object_get(wrapped, "value");
        e = sst__set_take(e, "value", sst_value_ref(v != NULL ? v : sst_null()), NULL);
        if (internal) {
            e = sst__set_take(e, "task", str(task), NULL);
            e = sst__set_take(e, "index", num(index), NULL);
            const sst_value *owner = sst_object_get(x, "owner"); /* a functional task's */
            if (owner != NULL) {
                e = sst__set_take(e, "owner", sst_value_ref(owner), NULL);
            }
        }
        list = e != NULL ? sst_array_push_take(list, e, NULL) : (sst_value_unref(list), NULL);
    }
    for (size_t i = 0; stopped != NULL && i < sst_array_len(nodes) && list != NULL; i++) {
        const char *node = sst_string_cstr(sst_array_get(nodes, i));
        uint64_t step =
            (uint64_t)sst_int_value(sst_object_get(sst_run_result_resume_point(rr), "superstep"));
        sst__buf key;
        sst__buf_init(&key);
        sst__buf_printf(&key, "%s/%s", run_key, stopped);
        char *k = sst__buf_detach(&key, NULL);
        sst_value *e = sst__set_take(sst_object_empty(), "id",
                                     k != NULL ? interrupt_id(k, node, step) : NULL, NULL);
        sst__free(k);
        e = sst__set_take(e, "node", str(node), NULL);
        e = sst__set_take(e, "value", sst_null(), NULL);
        e = sst__set_take(e, "when", str(stopped), NULL);
        list = e != NULL ? sst_array_push_take(list, e, NULL) : (sst_value_unref(list), NULL);
    }
    return list;
}

bool sst__interrupt_of_task(const sst_value *x, const char *id) {
    const char *t = sst_string_cstr(sst_object_get(x, "task"));
    const char *o = sst_string_cstr(sst_object_get(x, "owner"));
    return (t != NULL && strcmp(t, id) == 0) || (o != NULL && strcmp(o, id) == 0);
}
