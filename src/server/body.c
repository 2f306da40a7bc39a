/* SPDX-License-Identifier: MIT */
/*
 * Typed reads of a request body's members: each names the member and what
 * it should have been when it is something else (a 400), so that a client
 * sending a wrong type learns which field is wrong.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "server_int.h"

/* The member @p key of the body, or NULL when absent or null. */
static const sst_value *member(const srv_request *r, const char *key) {
    const sst_value *v = sst_object_get(r->json, key);
    return v != NULL && !sst_is_null(v) ? v : NULL;
}

static bool wrong(srv_response *res, const char *key, const char *want, const sst_value *got) {
    srv_error(res, 400, "body member '%s' must be %s, got %s", key, want,
              sst_type_name(sst_value_type(got)));
    return false;
}

bool srv_field_string(srv_request *r, srv_response *res, const char *key, const char **out) {
    const sst_value *v = member(r, key);
    if (v == NULL) {
        return true;
    }
    if (!sst_is_string(v)) {
        return wrong(res, key, "a string", v);
    }
    *out = sst_string_cstr(v);
    return true;
}

bool srv_field_object(srv_request *r, srv_response *res, const char *key, const sst_value **out) {
    const sst_value *v = member(r, key);
    if (v == NULL) {
        return true;
    }
    if (!sst_is_object(v)) {
        return wrong(res, key, "an object", v);
    }
    *out = v;
    return true;
}

bool srv_field_array(srv_request *r, srv_response *res, const char *key, const sst_value **out) {
    const sst_value *v = member(r, key);
    if (v == NULL) {
        return true;
    }
    if (!sst_is_array(v)) {
        return wrong(res, key, "a list", v);
    }
    *out = v;
    return true;
}

bool srv_field_int(srv_request *r, srv_response *res, const char *key, int64_t min, int64_t max,
                   int64_t *out) {
    const sst_value *v = member(r, key);
    if (v == NULL) {
        return true;
    }
    double d = sst_is_number(v) ? sst_number_value(v) : NAN;
    if (!sst_is_number(v) || d != floor(d)) {
        return wrong(res, key, "an integer", v);
    }
    if (d < (double)min || d > (double)max) {
        srv_error(res, 400, "body member '%s' must be from %lld to %lld, got %.17g", key,
                  (long long)min, (long long)max, d);
        return false;
    }
    *out = (int64_t)d;
    return true;
}

bool srv_field_number(srv_request *r, srv_response *res, const char *key, double min, double max,
                      double *out) {
    const sst_value *v = member(r, key);
    if (v == NULL) {
        return true;
    }
    if (!sst_is_number(v)) {
        return wrong(res, key, "a number", v);
    }
    double d = sst_number_value(v);
    if (!(d >= min && d <= max)) {
        srv_error(res, 400, "body member '%s' must be from %g to %g, got %.17g", key, min, max, d);
        return false;
    }
    *out = d;
    return true;
}

bool srv_field_bool(srv_request *r, srv_response *res, const char *key, bool *out) {
    const sst_value *v = member(r, key);
    if (v == NULL) {
        return true;
    }
    if (!sst_is_bool(v)) {
        return wrong(res, key, "true or false", v);
    }
    *out = sst_bool_value(v);
    return true;
}

bool srv_field_enum(srv_request *r, srv_response *res, const char *key, const char *const *allowed,
                    const char **out) {
    const char *s = NULL;
    if (!srv_field_string(r, res, key, &s)) {
        return false;
    }
    if (s == NULL) {
        return true;
    }
    char list[256] = "";
    for (size_t i = 0; allowed[i] != NULL; i++) {
        if (strcmp(allowed[i], s) == 0) {
            *out = allowed[i];
            return true;
        }
        size_t n = strlen(list);
        snprintf(list + n, sizeof list - n, "%s'%s'", i > 0 ? ", " : "", allowed[i]);
    }
    srv_error(res, 400, "body member '%s' must be one of %s, got '%.200s'", key, list, s);
    return false;
}

bool srv_field_strings(srv_request *r, srv_response *res, const char *key, const sst_value **out) {
    const sst_value *v = member(r, key);
    if (v == NULL) {
        return true;
    }
    if (sst_is_string(v)) {
        *out = v;
        return true;
    }
    if (!sst_is_array(v)) {
        return wrong(res, key, "a string or a list of strings", v);
    }
    for (size_t i = 0; i < sst_array_len(v); i++) {
        if (!sst_is_string(sst_array_get(v, i))) {
            srv_error(res, 400, "body member '%s' must be a list of strings; item %zu is %s", key,
                      i, sst_type_name(sst_value_type(sst_array_get(v, i))));
            return false;
        }
    }
    *out = v;
    return true;
}

bool srv_known_fields(srv_request *r, srv_response *res, const char *const *known) {
    for (size_t i = 0; i < sst_object_len(r->json); i++) {
        const char *k = sst_string_cstr(sst_object_key_at(r->json, i));
        size_t j = 0;
        while (known[j] != NULL && strcmp(known[j], k) != 0) {
            j++;
        }
        if (known[j] == NULL) {
            srv_error(res, 400, "unknown body member '%.200s'", k);
            return false;
        }
    }
    return true;
}

const char *srv_path_uuid(srv_request *r, srv_response *res, const char *what) {
    const char *id = r->param[0];
    if (!srv_is_uuid(id)) {
        size_t n = strlen(id);
        srv_error(res, 400, "%s must be a UUID, got '%.64s%s' (%zu bytes)", what, id,
                  n > 64 ? "..." : "", n);
        return NULL;
    }
    return id;
}

bool srv_is_uuid(const char *id) {
    if (id == NULL || strlen(id) != 36) {
        return false;
    }
    for (int i = 0; i < 36; i++) {
        char c = id[i];
        bool dash = i == 8 || i == 13 || i == 18 || i == 23;
        if (dash ? c != '-'
                 : !((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'))) {
            return false;
        }
    }
    return true;
}
