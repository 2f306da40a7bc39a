/* SPDX-License-Identifier: MIT */
/*
 * Search filters (store.h, sst_store_search_opts.filter): LangGraph's
 * InMemoryStore matching (_compare_values, _apply_operator), with
 * SqliteStore's dotted member paths, made total: an operator that Python
 * would raise on (a number against a missing member) does not match.
 */
#include <string.h>

#include "store_int.h"

static bool is_operator(const char *k) {
    static const char *const ops[] = {"$eq", "$ne", "$gt", "$gte", "$lt", "$lte"};
    for (size_t i = 0; i < SST_ARRAY_LEN(ops); i++) {
        if (strcmp(k, ops[i]) == 0) {
            return true;
        }
    }
    return false;
}

/* True when some key of @p o starts with '$' (the object is a set of operators). */
static bool has_operators(const sst_value *o) {
    for (size_t i = 0; i < sst_object_len(o); i++) {
        if (sst_string_cstr(sst_object_key_at(o, i))[0] == '$') {
            return true;
        }
    }
    return false;
}

static sst_code check_value(const sst_value *fv, const char *member, sst_error *err) {
    if (sst_is_array(fv)) {
        for (size_t i = 0; i < sst_array_len(fv); i++) {
            if (check_value(sst_array_get(fv, i), member, err) != SST_OK) {
                return SST_EINVAL;
            }
        }
        return SST_OK;
    }
    if (!sst_is_object(fv)) {
        return SST_OK;
    }
    bool ops = has_operators(fv);
    for (size_t i = 0; i < sst_object_len(fv); i++) {
        const char *k = sst_string_cstr(sst_object_key_at(fv, i));
        if (ops && !is_operator(k)) {
            return sst__error(err, SST_EINVAL,
                              "store search: filter on '%.60s': unknown operator '%.40s' "
                              "(expected $eq, $ne, $gt, $gte, $lt or $lte)",
                              member, k);
        }
        if (!ops && check_value(sst_object_value_at(fv, i), member, err) != SST_OK) {
            return SST_EINVAL;
        }
    }
    return SST_OK;
}

sst_code sst__filter_check(const sst_value *filter, sst_error *err) {
    if (filter == NULL || sst_is_null(filter)) {
        return SST_OK;
    }
    if (!sst_is_object(filter)) {
        return sst__error(err, SST_EINVAL, "store search: the filter must be an object, got %s",
                          sst_type_name(sst_value_type(filter)));
    }
    for (size_t i = 0; i < sst_object_len(filter); i++) {
        const char *member = sst_string_cstr(sst_object_key_at(filter, i));
        if (check_value(sst_object_value_at(filter, i), member, err) != SST_OK) {
            return SST_EINVAL;
        }
    }
    return SST_OK;
}

/* The member at @p path of @p value: a member of that name, else "a.b" followed; NULL if none. */
static const sst_value *lookup(const sst_value *value, const sst_value *path) {
    const char *p = sst_string_cstr(path);
    size_t len = sst_string_len(path);
    const sst_value *v = sst_object_getn(value, p, len);
    if (v != NULL || memchr(p, '.', len) == NULL) {
        return v;
    }
    v = value;
    for (const char *end = p + len; v != NULL;) {
        const char *dot = memchr(p, '.', (size_t)(end - p));
        const char *stop = dot != NULL ? dot : end;
        v = sst_is_object(v) ? sst_object_getn(v, p, (size_t)(stop - p)) : NULL;
        if (dot == NULL) {
            break;
        }
        p = dot + 1;
    }
    return v;
}

/* Equality with a missing member reading as null. */
static bool equal(const sst_value *iv, const sst_value *fv) {
    return iv == NULL ? sst_is_null(fv) : sst_value_equal(iv, fv);
}

/* Compares two numbers or two strings into *cmp; false for any other pair. */
static bool order(const sst_value *a, const sst_value *b, int *cmp) {
    if (a == NULL) {
        return false;
    }
    if (sst_is_int(a) && sst_is_int(b)) {
        int64_t x = sst_int_value(a), y = sst_int_value(b);
        *cmp = (x > y) - (x < y);
        return true;
    }
    if (sst_is_number(a) && sst_is_number(b)) {
        double x = sst_number_value(a), y = sst_number_value(b);
        *cmp = (x > y) - (x < y);
        return true;
    }
    if (sst_is_string(a) && sst_is_string(b)) {
        size_t la = sst_string_len(a), lb = sst_string_len(b);
        int c = memcmp(sst_string_cstr(a), sst_string_cstr(b), la < lb ? la : lb);
        *cmp = c != 0 ? (c > 0) - (c < 0) : (la > lb) - (la < lb);
        return true;
    }
    return false;
}

static bool apply(const sst_value *iv, const char *op, const sst_value *ov) {
    if (strcmp(op, "$eq") == 0) {
        return equal(iv, ov);
    }
    if (strcmp(op, "$ne") == 0) {
        return !equal(iv, ov);
    }
    int c;
    if (!order(iv, ov, &c)) {
        return false;
    }
    return strcmp(op, "$gt") == 0    ? c > 0
           : strcmp(op, "$gte") == 0 ? c >= 0
           : strcmp(op, "$lt") == 0  ? c < 0
                                     : c <= 0;
}

/* LangGraph's _compare_values. */
static bool compare(const sst_value *iv, const sst_value *fv) {
    if (sst_is_object(fv)) {
        bool ops = has_operators(fv);
        if (!ops && (iv == NULL || !sst_is_object(iv))) {
            return false;
        }
        for (size_t i = 0; i < sst_object_len(fv); i++) {
            const sst_value *k = sst_object_key_at(fv, i);
            const sst_value *v = sst_object_value_at(fv, i);
            bool ok = ops ? apply(iv, sst_string_cstr(k), v)
                          : compare(sst_object_getn(iv, sst_string_cstr(k), sst_string_len(k)), v);
            if (!ok) {
                return false;
            }
        }
        return true;
    }
    if (sst_is_array(fv)) {
        size_t n = sst_array_len(fv);
        if (iv == NULL || !sst_is_array(iv) || sst_array_len(iv) != n) {
            return false;
        }
        for (size_t i = 0; i < n; i++) {
            if (!compare(sst_array_get(iv, i), sst_array_get(fv, i))) {
                return false;
            }
        }
        return true;
    }
    return equal(iv, fv);
}

bool sst__filter_match(const sst_value *filter, const sst_value *value) {
    if (filter == NULL || !sst_is_object(filter)) {
        return true;
    }
    for (size_t i = 0; i < sst_object_len(filter); i++) {
        if (!compare(lookup(value, sst_object_key_at(filter, i)), sst_object_value_at(filter, i))) {
            return false;
        }
    }
    return true;
}
