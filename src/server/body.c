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

/* ---- shapes: the members of nested objects (LangGraph's request schemas) ---- */

/* The name of a JSON type for a message ("an integer", "a list"). */
static const char *type_phrase(const sst_value *v) {
    if (sst_is_int(v)) {
        return "an integer";
    }
    switch (sst_value_type(v)) {
        case SST_TYPE_NULL:
            return "null";
        case SST_TYPE_BOOL:
            return "a boolean";
        case SST_TYPE_STRING:
            return "a string";
        case SST_TYPE_ARRAY:
            return "a list";
        case SST_TYPE_OBJECT:
            return "an object";
        default:
            return "a number";
    }
}

static bool bad_shape(srv_response *res, const char *path, const char *want, const sst_value *v) {
    if (sst_is_string(v)) {
        srv_error(res, 400, "body member '%s' must be %s, got '%.100s'", path, want,
                  sst_string_cstr(v));
    } else {
        srv_error(res, 400, "body member '%s' must be %s, got %s", path, want, type_phrase(v));
    }
    return false;
}

/* "'a', 'b', 'c'" of a NULL-terminated list, in @p out. */
static const char *quoted_list(const char *const *allowed, char *out, size_t size) {
    out[0] = '\0';
    for (size_t i = 0, n = 0; allowed[i] != NULL && n < size; i++, n = strlen(out)) {
        snprintf(out + n, size - n, "%s'%s'", i > 0 ? ", " : "", allowed[i]);
    }
    return out;
}

static bool one_of(const char *const *allowed, const char *s) {
    for (size_t i = 0; allowed[i] != NULL; i++) {
        if (strcmp(allowed[i], s) == 0) {
            return true;
        }
    }
    return false;
}

/* A string (one of m->allowed when set). */
static bool check_string(const srv_member *m, const char *path, const sst_value *v,
                         srv_response *res) {
    char list[256];
    if (!sst_is_string(v)) {
        return bad_shape(res, path, "a string", v);
    }
    if (m->allowed != NULL && !one_of(m->allowed, sst_string_cstr(v))) {
        char want[300];
        snprintf(want, sizeof want, "one of %s", quoted_list(m->allowed, list, sizeof list));
        return bad_shape(res, path, want, v);
    }
    return true;
}

/* A list whose items are strings (each one of m->allowed when set). */
static bool check_strings(const srv_member *m, const char *path, const sst_value *v,
                          const char *want, srv_response *res) {
    if (!sst_is_array(v)) {
        return bad_shape(res, path, want, v);
    }
    for (size_t i = 0; i < sst_array_len(v); i++) {
        const sst_value *item = sst_array_get(v, i);
        char at[160];
        snprintf(at, sizeof at, "%s[%zu]", path, i);
        srv_member one = {.name = m->name, .allowed = m->allowed};
        if (!check_string(&one, at, item, res)) {
            return false;
        }
    }
    return true;
}

bool srv_check_value(const srv_member *m, const char *path, const sst_value *v, srv_response *res) {
    if (v == NULL || sst_is_null(v)) {
        return true;
    }
    char list[256], want[300];
    switch (m->shape) {
        case SRV_SHAPE_ANY:
            return true;
        case SRV_SHAPE_STRING:
            return check_string(m, path, v, res);
        case SRV_SHAPE_BOOL:
            return sst_is_bool(v) || bad_shape(res, path, "true or false", v);
        case SRV_SHAPE_NUMBER:
            return sst_is_number(v) || bad_shape(res, path, "a number", v);
        case SRV_SHAPE_INT:
            return sst_is_int(v) || bad_shape(res, path, "an integer", v);
        case SRV_SHAPE_OBJECT:
            if (!sst_is_object(v)) {
                return bad_shape(res, path, "an object", v);
            }
            return m->members == NULL || srv_check_members(m->members, path, v, res);
        case SRV_SHAPE_LIST:
            return sst_is_array(v) || bad_shape(res, path, "a list", v);
        case SRV_SHAPE_STRINGS:
            return check_strings(m, path, v, "a list of strings", res);
        case SRV_SHAPE_STRING_OR_STRINGS:
            if (sst_is_string(v)) {
                return check_string(m, path, v, res);
            }
            snprintf(want, sizeof want, "a string or a list of strings%s%s",
                     m->allowed != NULL ? " among " : "",
                     m->allowed != NULL ? quoted_list(m->allowed, list, sizeof list) : "");
            return check_strings(m, path, v, want, res);
        case SRV_SHAPE_STAR_OR_STRINGS:
            if (sst_is_string(v) && strcmp(sst_string_cstr(v), "*") == 0) {
                return true;
            }
            return check_strings(m, path, v, "\"*\" or a list of node names", res);
        case SRV_SHAPE_FALSE_OR_STRINGS:
            if (sst_is_bool(v) && !sst_bool_value(v)) {
                return true;
            }
            return check_strings(m, path, v, "false or a list of field paths", res);
    }
    return true;
}

bool srv_check_members(const srv_member *members, const char *path, const sst_value *obj,
                       srv_response *res) {
    for (const srv_member *m = members; m->name != NULL; m++) {
        char at[160];
        if (path != NULL) {
            snprintf(at, sizeof at, "%s.%s", path, m->name);
        } else {
            snprintf(at, sizeof at, "%s", m->name);
        }
        if (!srv_check_value(m, at, sst_object_get(obj, m->name), res)) {
            return false;
        }
    }
    return true;
}

/* LangGraph's Config (the run's and an assistant's): its known members' types; others
 * pass as they are. */
static const srv_member k_config[] = {
    {"configurable", SRV_SHAPE_OBJECT, NULL, NULL},
    {"tags", SRV_SHAPE_STRINGS, NULL, NULL},
    {"recursion_limit", SRV_SHAPE_INT, NULL, NULL},
    {"metadata", SRV_SHAPE_OBJECT, NULL, NULL},
    {"run_name", SRV_SHAPE_STRING, NULL, NULL},
    {"max_concurrency", SRV_SHAPE_INT, NULL, NULL},
    {NULL, 0, NULL, NULL},
};

const srv_member srv_config_shape = {"config", SRV_SHAPE_OBJECT, NULL, k_config};

/* A goto target: a node name or a Send {node, input}; goto is one or a list of them. */
static bool check_goto(const sst_value *v, srv_response *res) {
    static const srv_member send[] = {{"node", SRV_SHAPE_STRING, NULL, NULL},
                                      {NULL, 0, NULL, NULL}};
    size_t n = sst_is_array(v) ? sst_array_len(v) : 1;
    for (size_t i = 0; v != NULL && !sst_is_null(v) && i < n; i++) {
        const sst_value *t = sst_is_array(v) ? sst_array_get(v, i) : v;
        const char *want = "a node name, a Send {\"node\", \"input\"} or a list of them";
        if (sst_is_object(t) ? !sst_is_string(sst_object_get(t, "node")) : !sst_is_string(t)) {
            return bad_shape(res, "command.goto", want, t);
        }
        if (sst_is_object(t) && !srv_check_members(send, "command.goto", t, res)) {
            return false;
        }
    }
    return true;
}

/* command.update: an object, or a list of [channel, value] pairs. */
static bool check_update(const sst_value *v, srv_response *res) {
    if (v == NULL || sst_is_null(v) || sst_is_object(v)) {
        return true;
    }
    const char *want = "an object or a list of [channel, value] pairs";
    if (!sst_is_array(v)) {
        return bad_shape(res, "command.update", want, v);
    }
    for (size_t i = 0; i < sst_array_len(v); i++) {
        const sst_value *p = sst_array_get(v, i);
        if (!sst_is_array(p) || sst_array_len(p) != 2 || !sst_is_string(sst_array_get(p, 0))) {
            return bad_shape(res, "command.update", want, v);
        }
    }
    return true;
}

bool srv_check_run_body(const sst_value *body, srv_response *res) {
    static const char *const strategies[] = {"reject", "rollback", "interrupt", "enqueue", NULL};
    static const char *const creates[] = {"create", "reject", NULL};
    static const char *const completions[] = {"delete", "keep", NULL};
    static const char *const disconnects[] = {"cancel", "continue", NULL};
    static const char *const durabilities[] = {"sync", "async", "exit", NULL};
    static const char *const modes[] = {"values",         "updates",     "messages",
                                        "messages-tuple", "custom",      "debug",
                                        "tasks",          "checkpoints", NULL};
    static const srv_member checkpoint[] = {
        {"checkpoint_id", SRV_SHAPE_STRING, NULL, NULL},
        {"checkpoint_ns", SRV_SHAPE_STRING, NULL, NULL},
        {"checkpoint_map", SRV_SHAPE_OBJECT, NULL, NULL},
        {NULL, 0, NULL, NULL},
    };
    static const srv_member command[] = {
        {"resume", SRV_SHAPE_ANY, NULL, NULL},
        {NULL, 0, NULL, NULL},
    };
    static const srv_member tracer[] = {
        {"project_name", SRV_SHAPE_STRING, NULL, NULL},
        {"example_id", SRV_SHAPE_STRING, NULL, NULL},
        {NULL, 0, NULL, NULL},
    };
    static const srv_member run[] = {
        {"assistant_id", SRV_SHAPE_STRING, NULL, NULL},
        {"command", SRV_SHAPE_OBJECT, NULL, command},
        {"config", SRV_SHAPE_OBJECT, NULL, k_config},
        {"context", SRV_SHAPE_OBJECT, NULL, NULL},
        {"metadata", SRV_SHAPE_OBJECT, NULL, NULL},
        {"checkpoint", SRV_SHAPE_OBJECT, NULL, checkpoint},
        {"checkpoint_id", SRV_SHAPE_STRING, NULL, NULL},
        {"checkpoint_ns", SRV_SHAPE_STRING, NULL, NULL},
        {"checkpoint_during", SRV_SHAPE_BOOL, NULL, NULL},
        {"stream_mode", SRV_SHAPE_STRING_OR_STRINGS, modes, NULL},
        {"stream_subgraphs", SRV_SHAPE_BOOL, NULL, NULL},
        {"stream_resumable", SRV_SHAPE_BOOL, NULL, NULL},
        {"feedback_keys", SRV_SHAPE_STRINGS, NULL, NULL},
        {"interrupt_before", SRV_SHAPE_STAR_OR_STRINGS, NULL, NULL},
        {"interrupt_after", SRV_SHAPE_STAR_OR_STRINGS, NULL, NULL},
        {"webhook", SRV_SHAPE_STRING, NULL, NULL},
        {"multitask_strategy", SRV_SHAPE_STRING, strategies, NULL},
        {"if_not_exists", SRV_SHAPE_STRING, creates, NULL},
        {"on_completion", SRV_SHAPE_STRING, completions, NULL},
        {"on_disconnect", SRV_SHAPE_STRING, disconnects, NULL},
        {"durability", SRV_SHAPE_STRING, durabilities, NULL},
        {"after_seconds", SRV_SHAPE_NUMBER, NULL, NULL},
        {"strict_resume", SRV_SHAPE_BOOL, NULL, NULL},
        {"langsmith_tracer", SRV_SHAPE_OBJECT, NULL, tracer},
        {NULL, 0, NULL, NULL},
    };
    const sst_value *cmd = sst_object_get(body, "command");
    return srv_check_members(run, NULL, body, res) &&
           (!sst_is_object(cmd) || (check_goto(sst_object_get(cmd, "goto"), res) &&
                                    check_update(sst_object_get(cmd, "update"), res)));
}

bool srv_check_input(const srv_graph *g, const sst_value *input, srv_response *res) {
    if (g == NULL || g->entrypoint || input == NULL || sst_is_null(input) || sst_is_object(input)) {
        return true;
    }
    char want[200];
    snprintf(want, sizeof want, "an object or null for the graph '%.100s' (a StateGraph)", g->id);
    return bad_shape(res, "input", want, input);
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
