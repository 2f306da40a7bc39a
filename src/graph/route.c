/* SPDX-License-Identifier: MIT */
/*
 * Routing values (state layer, see graph_int.h): a router's result or a
 * Command goto resolved into node names and Sends. A route to an unknown
 * node or a value of the wrong type is an error naming both; nothing is
 * dropped silently. Used by the node runner, Command and update_state.
 */
#include <stdio.h>
#include <string.h>

#include "graph_int.h"
#include "values/build.h"

/* A short description of a routing value for error messages. */
static void show(const sst_value *v, char *out, size_t n) {
    char *text = sst_json_write(v, SST_JSON_COMPACT, NULL, NULL);
    if (text == NULL) {
        snprintf(out, n, "(%s)", sst_type_name(sst_value_type(v)));
        return;
    }
    if (strlen(text) >= n) {
        snprintf(out, n, "%.*s...", (int)(n - 4), text);
    } else {
        snprintf(out, n, "%s", text);
    }
    sst_free(text);
}

/* One element of a routing result: appends a name or a Send to *targets (END dropped). */
static sst_code route_one(const sst_compiled_graph *cg, const sst__branch *b, const char *from,
                          const sst_value *v, sst_value **targets, sst_error *err) {
    const char *who = b != NULL ? "router of" : "goto of";
    char shown[96];
    if (sst__is_send(v)) {
        const char *node = sst_string_cstr(sst_object_get(v, "__send__"));
        if (sst__graph_find(cg->g, node) == SIZE_MAX) {
            return sst__error(err, SST_EINVAL, "%s node '%s' sends to unknown node '%s'", who, from,
                              node);
        }
        *targets = sst_array_push_take(*targets, sst_value_ref(v), err);
        return *targets != NULL ? SST_OK : sst__code(err);
    }
    if (!sst_is_string(v)) {
        show(v, shown, sizeof shown);
        return sst__error(err, SST_ETYPE,
                          "%s node '%s' returned %s (expected a node name, a list of names, END "
                          "or Send)",
                          who, from, shown);
    }
    const char *name = sst_string_cstr(v);
    if (b != NULL && b->path_map != NULL) {
        const sst_value *mapped = NULL;
        if (sst_is_object(b->path_map)) {
            mapped = sst_object_getn(b->path_map, name, sst_string_len(v));
        } else {
            for (size_t i = 0; i < sst_array_len(b->path_map) && mapped == NULL; i++) {
                if (sst_value_equal(sst_array_get(b->path_map, i), v)) {
                    mapped = sst_array_get(b->path_map, i);
                }
            }
        }
        if (mapped == NULL) {
            show(v, shown, sizeof shown);
            return sst__error(err, SST_EINVAL,
                              "router of node '%s' returned %s, which is not in its path map", from,
                              shown);
        }
        name = sst_string_cstr(mapped);
    }
    if (strcmp(name, SST_END) == 0) {
        return SST_OK;
    }
    if (sst__graph_find(cg->g, name) == SIZE_MAX) {
        return sst__error(err, SST_EINVAL, "%s node '%s' returned unknown node '%s'", who, from,
                          name);
    }
    sst_value *s = sst_string_new(name, err);
    *targets =
        s != NULL ? sst_array_push_take(*targets, s, err) : (sst_value_unref(*targets), NULL);
    return *targets != NULL ? SST_OK : sst__code(err);
}

sst_code sst__route_result(const sst_compiled_graph *cg, const sst__branch *b, const char *from,
                           const sst_value *v, sst_value **targets, sst_error *err) {
    if (sst_is_array(v)) {
        for (size_t i = 0; i < sst_array_len(v); i++) {
            sst_code rc = route_one(cg, b, from, sst_array_get(v, i), targets, err);
            if (rc != SST_OK) {
                return rc;
            }
        }
        return SST_OK;
    }
    return route_one(cg, b, from, v, targets, err);
}

/* ---- Send values ---- */

sst_value *sst_send_new(const char *node, sst_value *arg, sst_error *err) {
    if (node == NULL) {
        sst_value_unref(arg);
        sst__error(err, SST_EINVAL, "Send: NULL node");
        return NULL;
    }
    sst_value *name = sst_string_new(node, err);
    sst_value *o =
        name != NULL ? sst_object_set_take(sst_object_empty(), "__send__", name, err) : NULL;
    if (o == NULL) {
        sst_value_unref(arg);
        return NULL;
    }
    return sst_object_set_take(o, "arg", arg != NULL ? arg : sst_null(), err);
}

sst_value *sst_send_new_timeout(const char *node, sst_value *arg, const sst_timeout_policy *timeout,
                                sst_error *err) {
    SST__ERR_LOCAL(err);
    if (timeout != NULL && !sst_timeout_policy_valid(timeout)) {
        sst_value_unref(arg);
        sst__error(err, SST_EINVAL, "Send to '%s': a timeout must be a positive number of seconds",
                   node != NULL ? node : "(null)");
        return NULL;
    }
    sst_value *s = sst_send_new(node, arg, err);
    if (s == NULL || timeout == NULL ||
        (timeout->run_timeout_s == 0 && timeout->idle_timeout_s == 0)) {
        return s;
    }
    return sst__set_take(s, "timeout", sst_timeout_policy_value(timeout, err), err);
}
