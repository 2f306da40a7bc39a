/* SPDX-License-Identifier: MIT */
/*
 * Graph and node options beyond the basic builder (builder.c): the root
 * state (one value held in field SST_ROOT), a node's input fields (the view
 * of the state it sees), lists of retry policies and the graph's default
 * retry policy (LangGraph's set_node_defaults). docs/graph.md describes them.
 */
#include <stdio.h>
#include <string.h>

#include "graph_int.h"

sst_code sst_graph_set_root(sst_graph *g, const sst_reducer *r, sst_value *default_value,
                            sst_error *err) {
    if (g == NULL) {
        sst_value_unref(default_value);
        return sst__error(err, SST_EINVAL, "graph: set root: NULL graph");
    }
    if (g->root || sst_schema_field_count(g->schema) > 0) {
        sst_value_unref(default_value);
        return sst__error(err, SST_EINVAL, "graph: set root: %s (a root state is the whole state)",
                          g->root ? "the root is already set" : "the graph has declared fields");
    }
    sst_code rc = sst_schema_add_field(g->schema, SST_ROOT, r != NULL ? r : sst_reducer_replace(),
                                       default_value, err);
    if (rc == SST_OK) {
        g->root = true;
    }
    return rc;
}

bool sst_compiled_graph_has_root(const sst_compiled_graph *cg) {
    return cg != NULL && cg->g->root;
}

sst_code sst__retry_list_copy(sst_retry_policy **list, size_t *count, const sst_retry_policy *src,
                              size_t n, sst_error *err) {
    *list = NULL;
    *count = 0;
    if (n == 0) {
        return SST_OK;
    }
    if (src == NULL) {
        return sst__error(err, SST_EINVAL, "retry policies: NULL list");
    }
    for (size_t i = 0; i < n; i++) {
        if (src[i].max_attempts == 0) {
            return sst__error(err, SST_EINVAL, "retry policy %zu: max_attempts must be >= 1",
                              i + 1);
        }
    }
    /* One more, zeroed: max_attempts 0 ends the list for list_retry_on. */
    *list = sst__calloc(n + 1, sizeof **list);
    if (*list == NULL) {
        return sst__enomem(err);
    }
    memcpy(*list, src, n * sizeof **list);
    *count = n;
    return SST_OK;
}

sst_code sst_graph_set_default_retry(sst_graph *g, const sst_retry_policy *policies, size_t n,
                                     sst_error *err) {
    if (g == NULL) {
        return sst__error(err, SST_EINVAL, "graph: set default retry: NULL graph");
    }
    sst_retry_policy *list;
    size_t count;
    sst_code rc = sst__retry_list_copy(&list, &count, policies, n, err);
    if (rc != SST_OK) {
        sst__error_prefix(err, "graph: set default retry");
        return rc;
    }
    sst__free(g->default_retry);
    g->default_retry = list;
    g->n_default_retry = count;
    return SST_OK;
}

sst_code sst__node_opts_copy(sst__node *n, const sst_node_opts *opts, sst_error *err) {
    if (opts->n_input_fields > 0) {
        if (opts->input_fields == NULL) {
            return sst__error(err, SST_EINVAL, "node '%s': input fields: NULL list", n->name);
        }
        sst_value *list = sst_array_empty();
        for (size_t i = 0; i < opts->n_input_fields && list != NULL; i++) {
            const char *f = opts->input_fields[i];
            if (f == NULL) {
                sst_value_unref(list);
                return sst__error(err, SST_EINVAL, "node '%s': input field %zu is NULL", n->name,
                                  i + 1);
            }
            sst_value *name = sst_string_new(f, err);
            list =
                name != NULL ? sst_array_push_take(list, name, err) : (sst_value_unref(list), NULL);
        }
        if (list == NULL) {
            return sst__code(err);
        }
        n->input_fields = list;
    }
    sst_code rc = sst__retry_list_copy(&n->retry_list, &n->n_retry_list, opts->retry_policies,
                                       opts->n_retry_policies, err);
    if (rc != SST_OK) {
        sst__error_prefix(err, "node '%s'", n->name);
    }
    return rc;
}

/* Does @p p's retry_on accept the failure @p e? */
static bool policy_matches(const sst_retry_policy *p, const sst_error *e, const char *vertex) {
    if (p->retry_on_error != NULL) {
        return p->retry_on_error(e, vertex, p->retry_on_user_data);
    }
    return p->retry_on != NULL ? p->retry_on(e->code, p->retry_on_user_data)
                               : sst_code_is_transient(e->code);
}

/*
 * The retry_on_error of a list (user data: its sst__node, or the graph for
 * the defaults): retried when some policy of the list matches, the first
 * match deciding, as LangGraph's sequence of RetryPolicy.
 */
static bool list_retry_on(const sst_error *e, const char *vertex, void *ud) {
    const sst_retry_policy *list = ud;
    for (size_t i = 0; list[i].max_attempts != 0; i++) {
        if (policy_matches(&list[i], e, vertex)) {
            return true;
        }
    }
    return false;
}

/*
 * One engine policy for a list: the first policy's delays, the largest
 * max_attempts, and list_retry_on over the list. The engine asks retry_on
 * without the attempt number, so a policy matched first cannot stop sooner
 * than the largest max_attempts (docs/graph.md).
 */
static sst_retry_policy combine(const sst_retry_policy *list, size_t n) {
    if (n == 1) {
        return list[0];
    }
    sst_retry_policy p = list[0];
    for (size_t i = 1; i < n; i++) {
        if (list[i].max_attempts > p.max_attempts) {
            p.max_attempts = list[i].max_attempts;
        }
    }
    p.retry_on = NULL;
    p.retry_on_error = list_retry_on;
    p.retry_on_user_data = (void *)list;
    return p;
}

/* Left as sst_node_opts_init set it: the graph's default applies. */
static bool unset(const sst__node *n) {
    return n->n_retry_list == 0 && n->retry.max_attempts == 1 && n->retry.retry_on == NULL &&
           n->retry.retry_on_error == NULL;
}

sst_retry_policy sst__node_policy(const sst_graph *g, const sst__node *n) {
    if (n->n_retry_list > 0) {
        return combine(n->retry_list, n->n_retry_list);
    }
    if (unset(n) && g->n_default_retry > 0) {
        return combine(g->default_retry, g->n_default_retry);
    }
    return n->retry;
}

sst_value *sst__node_view(const sst__node *n, const sst_value *state, sst_error *err) {
    sst_value *view = sst_object_empty();
    for (size_t i = 0; i < sst_array_len(n->input_fields) && view != NULL; i++) {
        const sst_value *k = sst_array_get(n->input_fields, i);
        const sst_value *v = sst_object_getn(state, sst_string_cstr(k), sst_string_len(k));
        if (v != NULL) {
            view = sst_object_setv_take(view, k, sst_value_ref(v), err);
        }
    }
    return view;
}

sst_code sst_graph_set_default_timeout(sst_graph *g, const sst_timeout_policy *timeout,
                                       sst_error *err) {
    if (g == NULL) {
        return sst__error(err, SST_EINVAL, "graph: set default timeout: NULL graph");
    }
    sst_timeout_policy none = {0};
    const sst_timeout_policy *t = timeout != NULL ? timeout : &none;
    if (!sst_timeout_policy_valid(t)) {
        return sst__error(err, SST_EINVAL,
                          "graph: set default timeout: a timeout must be a positive number of "
                          "seconds");
    }
    g->default_timeout = *t;
    return SST_OK;
}

sst_code sst_graph_set_default_error_handler(sst_graph *g, sst_node_fn fn, void *user_data,
                                             sst_error *err) {
    if (g == NULL) {
        return sst__error(err, SST_EINVAL, "graph: set default error handler: NULL graph");
    }
    g->default_handler = fn;
    g->default_handler_user_data = user_data;
    return SST_OK;
}

sst_code sst_graph_set_default_cache_policy(sst_graph *g, const sst_node_cache_policy *policy,
                                            sst_error *err) {
    if (g == NULL) {
        return sst__error(err, SST_EINVAL, "graph: set default cache policy: NULL graph");
    }
    if (policy != NULL && !(policy->ttl_s >= 0)) {
        return sst__error(err, SST_EINVAL, "graph: set default cache policy: ttl must be >= 0");
    }
    memset(&g->default_cache, 0, sizeof g->default_cache);
    if (policy != NULL && policy->enabled) {
        g->default_cache = *policy;
    }
    return SST_OK;
}

/* A 64-bit hash of the fields of @p state the node sees (hidden fields left out). */
static uint64_t view_hash(const sst__node *n, const sst_value *state) {
    uint64_t h = 0x6e6f64652d6b6579ull;
    size_t count = n->input_fields != NULL ? sst_array_len(n->input_fields) : sst_object_len(state);
    for (size_t i = 0; i < count; i++) {
        const sst_value *k = n->input_fields != NULL ? sst_array_get(n->input_fields, i)
                                                     : sst_object_key_at(state, i);
        const sst_value *v = n->input_fields != NULL
                                 ? sst_object_getn(state, sst_string_cstr(k), sst_string_len(k))
                                 : sst_object_value_at(state, i);
        if (v == NULL || sst__hidden_field(sst_string_cstr(k))) {
            continue;
        }
        h = sst__hash_mix(h ^ sst_value_hash(k));
        h = sst__hash_mix(h ^ sst_value_hash(v));
    }
    return h;
}

sst_value *sst__node_cache_key(const sst_task *t, void *user_data, sst_error *err) {
    const sst__node_ref *ref = user_data;
    const sst__node *n = &ref->cg->g->nodes[ref->index];
    const sst_node_cache_policy *p = n->cache.enabled ? &n->cache : &ref->cg->g->default_cache;
    const sst_value *in = sst_task_input(t);
    if (p->key == NULL) {
        uint64_t h = in != NULL ? sst_value_hash(in) : view_hash(n, sst_task_state(t));
        char hex[17];
        snprintf(hex, sizeof hex, "%016llx", (unsigned long long)h);
        return sst_string_new(hex, err);
    }
    if (in != NULL) {
        return p->key(in, p->key_user_data, err);
    }
    sst_value *view = n->input_fields != NULL ? sst__node_view(n, sst_task_state(t), err)
                                              : sst__graph_public_state(sst_task_state(t), err);
    sst_value *key = view != NULL ? p->key(view, p->key_user_data, err) : NULL;
    sst_value_unref(view);
    return key;
}
