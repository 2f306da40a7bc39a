/* SPDX-License-Identifier: MIT */
/*
 * Namespaces (LangGraph's _validate_namespace, the dotted form backends
 * index), timestamps as Python's datetime.isoformat() prints them, and items
 * as the values callers see (Item.dict(), SearchItem.dict()).
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "store_int.h"
#include "values/build.h"

/* ---- namespaces ---- */

void sst__ns_show(const char *const *ns, size_t n, char *out, size_t cap) {
    size_t used = 0;
    int w = snprintf(out, cap, "(");
    used = w > 0 ? (size_t)w : 0;
    for (size_t i = 0; i < n && used < cap; i++) {
        w = snprintf(out + used, cap - used, "%s'%.40s'", i > 0 ? ", " : "",
                     ns[i] != NULL ? ns[i] : "(null)");
        used += w > 0 ? (size_t)w : 0;
    }
    if (used < cap) {
        snprintf(out + used, cap - used, "%s)", n == 1 ? "," : "");
    }
}

sst_code sst__ns_check(const char *const *ns, size_t n, unsigned flags, const char *what,
                       sst_error *err) {
    if (n == 0) {
        return (flags & SST__NS_EMPTY_OK) != 0
                   ? SST_OK
                   : sst__error(err, SST_EINVAL, "%s: the namespace cannot be empty", what);
    }
    if (ns == NULL) {
        return sst__error(err, SST_EINVAL, "%s: the namespace is NULL with %zu labels", what, n);
    }
    char show[160];
    for (size_t i = 0; i < n; i++) {
        const char *label = ns[i];
        const char *why = label == NULL                           ? "labels must be strings (NULL)"
                          : label[0] == '\0'                      ? "labels cannot be empty strings"
                          : !sst_utf8_valid(label, strlen(label)) ? "labels must be valid UTF-8"
                          : strchr(label, '.') != NULL ? "labels cannot contain periods ('.')"
                                                       : NULL;
        if (why != NULL) {
            sst__ns_show(ns, n, show, sizeof show);
            return sst__error(err, SST_EINVAL, "%s: invalid namespace label %zu in %s: %s", what, i,
                              show, why);
        }
    }
    if ((flags & SST__NS_PUT) != 0 && strcmp(ns[0], "langgraph") == 0) {
        sst__ns_show(ns, n, show, sizeof show);
        return sst__error(err, SST_EINVAL,
                          "%s: invalid namespace %s: the root label cannot be \"langgraph\"", what,
                          show);
    }
    return SST_OK;
}

char *sst__ns_join(const char *const *ns, size_t n) {
    size_t len = 0;
    for (size_t i = 0; i < n; i++) {
        len += strlen(ns[i]) + 1;
    }
    char *s = sst__malloc(len > 0 ? len : 1);
    if (s == NULL) {
        return NULL;
    }
    size_t at = 0;
    for (size_t i = 0; i < n; i++) {
        size_t l = strlen(ns[i]);
        memcpy(s + at, ns[i], l);
        at += l;
        s[at++] = '.';
    }
    s[at > 0 ? at - 1 : 0] = '\0';
    return s;
}

/* ---- time ---- */

int64_t sst__clock_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* Year, month and day of @p days since 1970-01-01 (H. Hinnant's civil_from_days). */
static void civil(int64_t days, int64_t *y, int *m, int *d) {
    days += 719468;
    int64_t era = (days >= 0 ? days : days - 146096) / 146097;
    int64_t doe = days - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    *d = (int)(doy - (153 * mp + 2) / 5 + 1);
    *m = (int)(mp < 10 ? mp + 3 : mp - 9);
    *y = yoe + era * 400 + (*m <= 2);
}

void sst__iso_time(int64_t us, char out[SST__ISO_MAX]) {
    int64_t secs = us / 1000000 - (us % 1000000 < 0);
    int64_t frac = us - secs * 1000000;
    int64_t days = secs / 86400 - (secs % 86400 < 0);
    int64_t sod = secs - days * 86400;
    int64_t y;
    int m, d;
    civil(days, &y, &m, &d);
    int n = snprintf(out, SST__ISO_MAX, "%04lld-%02d-%02dT%02d:%02d:%02d", (long long)y, m, d,
                     (int)(sod / 3600), (int)(sod / 60 % 60), (int)(sod % 60));
    if (n > 0 && frac != 0) {
        n += snprintf(out + n, SST__ISO_MAX - (size_t)n, ".%06d", (int)frac);
    }
    if (n > 0 && (size_t)n < SST__ISO_MAX) {
        snprintf(out + n, SST__ISO_MAX - (size_t)n, "+00:00");
    }
}

/* ---- items as values ---- */

sst_value *sst__item_payload(const sst_store_item *it, sst_error *err) {
    if (it->value != NULL) {
        return sst_value_ref(it->value);
    }
    sst_error e;
    sst_error_clear(&e);
    sst_value *v = it->json != NULL ? sst_json_read(it->json, it->json_len, NULL, &e) : NULL;
    if (v == NULL && e.code == SST_ENOMEM) {
        sst__enomem(err);
        return NULL;
    }
    if (v == NULL || !sst_is_object(v)) {
        char show[160];
        sst__ns_show(it->ns, it->ns_len, show, sizeof show);
        sst__error(err, SST_EIO, "store item %s '%.60s': damaged value: %s", show,
                   it->key != NULL ? it->key : "", v == NULL ? e.msg : "not an object");
        sst_value_unref(v);
        return NULL;
    }
    return v;
}

static sst_value *ns_value(const char *const *ns, size_t n, sst_error *err) {
    sst_value *a = sst_array_empty();
    for (size_t i = 0; i < n && a != NULL; i++) {
        a = sst__push_take(a, sst_string_new(ns[i], err), err);
    }
    return a;
}

static sst_value *time_value(int64_t us, sst_error *err) {
    char iso[SST__ISO_MAX];
    sst__iso_time(us, iso);
    return sst_string_new(iso, err);
}

sst_value *sst__item_value(const sst_store_item *it, const sst_value *value, bool search,
                           sst_error *err) {
    sst_value *payload = value != NULL ? sst_value_ref(value) : sst__item_payload(it, err);
    if (payload == NULL) {
        return NULL;
    }
    sst_value *o = sst__object_with_capacity(6, err);
    o = sst__set_take(o, "namespace", ns_value(it->ns, it->ns_len, err), err);
    o = sst__set_take(o, "key", sst_string_new(it->key, err), err);
    o = sst__set_take(o, "value", payload, err);
    o = sst__set_take(o, "created_at", time_value(it->created_at_us, err), err);
    o = sst__set_take(o, "updated_at", time_value(it->updated_at_us, err), err);
    if (search) {
        sst_value *score = it->scored ? sst_double_new(it->score, NULL) : NULL;
        o = sst__set_take(o, "score", score != NULL ? score : sst_null(), err);
    }
    return o;
}
