/* SPDX-License-Identifier: MIT */
/*
 * The reducer records: built-ins, custom reducers, applying a superstep's
 * writes and normalising an update before it is stored.
 */
#include <stdio.h>
#include <string.h>

#include "reducers_int.h"

static const sst_reducer k_replace = {SST__R_REPLACE, "replace", sst__reduce_replace, NULL};
static const sst_reducer k_append = {SST__R_APPEND, "append", sst__reduce_append, NULL};
static const sst_reducer k_sum = {SST__R_SUM, "sum", sst__reduce_sum, NULL};
static const sst_reducer k_merge = {SST__R_MERGE, "merge", sst__reduce_merge, NULL};
static const sst_reducer k_deep_merge = {SST__R_DEEP_MERGE, "deep_merge", sst__reduce_deep_merge,
                                         NULL};
static const sst_reducer k_unique = {SST__R_UNIQUE, "unique", sst__reduce_replace, NULL};
static const sst_reducer k_add_messages = {SST__R_ADD_MESSAGES, "add_messages",
                                           sst__reduce_add_messages, NULL};

static const sst_reducer *const k_builtins[] = {&k_replace,    &k_append, &k_sum,         &k_merge,
                                                &k_deep_merge, &k_unique, &k_add_messages};

const sst_reducer *sst_reducer_replace(void) {
    return &k_replace;
}
const sst_reducer *sst_reducer_append(void) {
    return &k_append;
}
const sst_reducer *sst_reducer_sum(void) {
    return &k_sum;
}
const sst_reducer *sst_reducer_merge(void) {
    return &k_merge;
}
const sst_reducer *sst_reducer_deep_merge(void) {
    return &k_deep_merge;
}
const sst_reducer *sst_reducer_unique(void) {
    return &k_unique;
}
const sst_reducer *sst_reducer_add_messages(void) {
    return &k_add_messages;
}

const sst_reducer *sst_reducer_builtin(const char *name) {
    if (name == NULL) {
        return NULL;
    }
    for (size_t i = 0; i < SST_ARRAY_LEN(k_builtins); i++) {
        if (strcmp(k_builtins[i]->name, name) == 0) {
            return k_builtins[i];
        }
    }
    return NULL;
}

const char *sst_reducer_name(const sst_reducer *r) {
    return r != NULL ? r->name : "(null)";
}

sst_reducer *sst_reducer_new(const char *name, sst_reduce_fn fn, void *user_data, sst_error *err) {
    if (name == NULL || fn == NULL) {
        sst__error(err, SST_EINVAL, "custom reducer: %s is NULL",
                   name == NULL ? "name" : "function");
        return NULL;
    }
    sst_reducer *r = sst__malloc(sizeof *r);
    char *copy = sst__strndup(name, strlen(name));
    if (r == NULL || copy == NULL) {
        sst__free(r);
        sst__free(copy);
        sst__enomem(err);
        return NULL;
    }
    r->kind = SST__R_CUSTOM;
    r->name = copy;
    r->fn = fn;
    r->user_data = user_data;
    return r;
}

void sst_reducer_free(sst_reducer *r) {
    if (r == NULL || r->kind != SST__R_CUSTOM) {
        return;
    }
    sst__free((char *)r->name);
    sst__free(r);
}

const char *sst__type_word(const sst_value *v) {
    return sst_is_number(v) ? "number" : sst_type_name(sst_value_type(v));
}

void sst__excerpt(const sst_value *v, char *out, size_t n) {
    size_t len = 0;
    char *text = sst_json_write(v, SST_JSON_COMPACT, &len, NULL);
    if (text == NULL) {
        snprintf(out, n, "(%s)", sst_type_name(sst_value_type(v)));
        return;
    }
    if (len < n) {
        memcpy(out, text, len + 1);
    } else if (n > 4) {
        size_t keep = n - 4;
        while (keep > 0 && ((unsigned char)text[keep] & 0xC0) == 0x80) {
            keep--; /* do not cut a UTF-8 character */
        }
        memcpy(out, text, keep);
        memcpy(out + keep, "...", 4);
    } else if (n > 0) {
        out[0] = '\0';
    }
    sst_free(text);
}

sst_code sst__reducer_type_error(sst_error *err, const char *reducer, const char *field,
                                 const char *expected, const sst_value *got, bool in_current) {
    return sst__error(err, SST_ETYPE, "reducer '%s' on field '%s': %sexpected %s, got %s", reducer,
                      field, in_current ? "current value: " : "", expected, sst__type_word(got));
}

static sst_value *unique_conflict(const sst_reducer *r, const char *field, sst_value *current,
                                  const sst_value *const *updates, size_t n, sst_error *err) {
    char a[64], b[64];
    sst__excerpt(updates[0], a, sizeof a);
    sst__excerpt(updates[1], b, sizeof b);
    if (n == 2) {
        sst__error(err, SST_ECONFLICT,
                   "reducer '%s' on field '%s': 2 writes in one superstep (%s and %s); declare "
                   "a reducer such as 'append' or 'sum' to combine them",
                   r->name, field, a, b);
    } else {
        sst__error(err, SST_ECONFLICT,
                   "reducer '%s' on field '%s': %zu writes in one superstep (%s, %s, ...); "
                   "declare a reducer such as 'append' or 'sum' to combine them",
                   r->name, field, n, a, b);
    }
    sst_value_unref(current);
    return NULL;
}

/*
 * Writes with markers: $writes lists are expanded in order; one Overwrite
 * sets the field and every other write of the superstep is dropped
 * (LangGraph's BinaryOperatorAggregate); two are an error.
 */
static sst_value *apply_marked(const sst_reducer *r, const char *field, sst_value *current,
                               const sst_value *const *updates, size_t n, sst_error *err) {
    size_t flat_n = 0;
    const sst_value **flat = sst__writes_flatten(updates, n, &flat_n, err);
    if (flat == NULL) {
        sst_value_unref(current);
        return NULL;
    }
    bool conflict;
    const sst_value *ow = sst__writes_overwrite(field, flat, flat_n, &conflict, err);
    sst_value *out;
    if (conflict) {
        sst_value_unref(current);
        out = NULL;
    } else if (ow != NULL) {
        sst_value_unref(current);
        out = sst_value_ref(ow);
    } else {
        out = sst_reducer_apply(r, field, current, flat, flat_n, err);
    }
    sst__free(flat);
    return out;
}

sst_value *sst_reducer_apply(const sst_reducer *r, const char *field, sst_value *current,
                             const sst_value *const *updates, size_t n, sst_error *err) {
    SST__ERR_LOCAL(err); /* reducer functions always get an err */
    if (r == NULL || field == NULL || (updates == NULL && n > 0)) {
        sst__error(err, SST_EINVAL, "reducer apply: NULL %s",
                   r == NULL       ? "reducer"
                   : field == NULL ? "field"
                                   : "updates");
        sst_value_unref(current);
        return NULL;
    }
    if (sst__writes_has_markers(updates, n)) {
        return apply_marked(r, field, current, updates, n, err);
    }
    if (r->kind == SST__R_UNIQUE && n > 1) {
        return unique_conflict(r, field, current, updates, n, err);
    }
    if (n == 0) {
        return current != NULL ? current : sst_null();
    }
    /* Cleared so that a reducer that fails without saying why is caught below. */
    err->code = SST_OK;
    for (size_t i = 0; i < n; i++) {
        if (updates[i] == NULL) {
            sst_value_unref(current);
            sst__error(err, SST_EINVAL, "reducer '%s' on field '%s': NULL update", r->name, field);
            return NULL;
        }
        current = r->fn(r->user_data, field, current, updates[i], err);
        if (current == NULL) {
            sst__error_unless_set(err, SST_EREDUCER, "reducer '%s' on field '%s' failed", r->name,
                                  field);
            return NULL;
        }
    }
    return current;
}

sst_value *sst_reducer_prepare(const sst_reducer *r, const char *field, sst_value *update,
                               sst_error *err) {
    if (r == NULL || field == NULL || update == NULL) {
        sst__error(err, SST_EINVAL, "reducer prepare: NULL argument");
        sst_value_unref(update);
        return NULL;
    }
    if (r->kind != SST__R_ADD_MESSAGES) {
        return update;
    }
    return sst__messages_prepare(field, update, err);
}
