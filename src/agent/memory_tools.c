/* SPDX-License-Identifier: MIT */
/*
 * LangMem's manage_memory and search_memory tools (langmem.create_manage_memory_tool,
 * create_search_memory_tool) in C; see memory_tools.h.
 *
 * As LangMem: a memory is the item {"content": text} under a random UUID key
 * in the namespace; search_memory returns the store's search items as JSON
 * (namespace, key, value, created_at, updated_at, score). Where LangMem is
 * lenient this file is strict, and every problem is a tool error the model
 * reads, never a failed run:
 *   - a "{key}" missing from config.configurable is an error (LangMem keeps
 *     the literal "{key}" label, which would pool every user's memories);
 *   - update and delete need an existing id (LangMem's update of an unknown
 *     id creates it);
 *   - search_memory's limit is 1 to 100 (the results go into the prompt).
 */
#include "memory_tools.h"

#include <stdio.h>

#include "superstep/json.h"
#include "superstep/store.h"
#include "values/build.h"

struct sst__memory_tools {
    char **labels; /* owned: the template's labels, each sst__strndup */
    size_t n;
};

/* The key of a template label "{key}", else NULL; *len gets its length. */
static const char *template_key(const char *label, size_t *len) {
    size_t n = strlen(label);
    if (n >= 2 && label[0] == '{' && label[n - 1] == '}') {
        *len = n - 2;
        return label + 1;
    }
    return NULL;
}

void sst__memory_tools_free(sst__memory_tools *m) {
    if (m == NULL) {
        return;
    }
    for (size_t i = 0; m->labels != NULL && i < m->n; i++) {
        sst__free(m->labels[i]);
    }
    sst__free(m->labels);
    sst__free(m);
}

sst__memory_tools *sst__memory_tools_new(const char *const *labels, size_t n, sst_error *err) {
    if (labels == NULL || n == 0) {
        sst__error(err, SST_EINVAL, "agent: the memory namespace needs at least one label");
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        size_t klen = 0;
        const char *key = labels[i] != NULL ? template_key(labels[i], &klen) : NULL;
        if (labels[i] == NULL || labels[i][0] == '\0' || (key != NULL && klen == 0)) {
            sst__error(err, SST_EINVAL, "agent: memory namespace label %zu is empty", i + 1);
            return NULL;
        }
        if (key == NULL && strchr(labels[i], '.') != NULL) {
            sst__error(err, SST_EINVAL, "agent: memory namespace label %zu ('%s') holds a '.'",
                       i + 1, labels[i]);
            return NULL;
        }
    }
    if (strcmp(labels[0], "langgraph") == 0) {
        sst__error(err, SST_EINVAL, "agent: the memory namespace cannot start with \"langgraph\"");
        return NULL;
    }
    sst__memory_tools *m = sst__calloc(1, sizeof *m);
    if (m != NULL) {
        m->labels = sst__calloc(n, sizeof *m->labels);
    }
    for (size_t i = 0; m != NULL && m->labels != NULL && i < n; i++, m->n++) {
        if ((m->labels[i] = sst__strndup(labels[i], strlen(labels[i]))) == NULL) {
            break;
        }
    }
    if (m == NULL || m->n < n) {
        sst__memory_tools_free(m);
        sst__enomem(err);
        return NULL;
    }
    return m;
}

/* A call's namespace: the template with its "{key}" labels filled. */
typedef struct filled {
    const char **labels; /* n labels: the template's, config strings or numbers */
    char (*numbers)[24]; /* the text of labels filled from integers */
    size_t n;
} filled;

static void filled_free(filled *f) {
    sst__free(f->labels);
    sst__free(f->numbers);
}

/*
 * Fills the template from config.configurable and finds the store. On failure
 * returns a code with @p err filled (the model's message) and @p f freed.
 */
static sst_code resolve(const sst__memory_tools *m, sst_node_ctx *ctx, filled *f, sst_store **st,
                        sst_error *err) {
    memset(f, 0, sizeof *f);
    *st = ctx != NULL ? sst_node_store(ctx) : NULL;
    if (*st == NULL) {
        return sst__error(err, SST_EINVAL,
                          "no long-term store is configured for this agent, so there is no memory");
    }
    f->labels = sst__calloc(m->n, sizeof *f->labels);
    f->numbers = sst__calloc(m->n, sizeof *f->numbers);
    if (f->labels == NULL || f->numbers == NULL) {
        filled_free(f);
        return sst__enomem(err);
    }
    f->n = m->n;
    const sst_value *conf = sst_object_get(sst_node_config(ctx), "configurable");
    for (size_t i = 0; i < m->n; i++) {
        size_t klen;
        const char *key = template_key(m->labels[i], &klen);
        if (key == NULL) {
            f->labels[i] = m->labels[i];
            continue;
        }
        const sst_value *v = sst_object_getn(conf, key, klen);
        if (sst_is_string(v)) {
            f->labels[i] = sst_string_cstr(v);
        } else if (sst_is_int(v)) {
            snprintf(f->numbers[i], sizeof f->numbers[i], "%lld", (long long)sst_int_value(v));
            f->labels[i] = f->numbers[i];
        } else {
            filled_free(f);
            return sst__error(err, SST_EINVAL,
                              "the memory namespace needs config.configurable.%.*s (a string or "
                              "an integer) in the run's config, %s",
                              (int)klen, key, v == NULL ? "which has none" : "which is not one");
        }
    }
    return SST_OK;
}

/* An argument that may be absent or null; NULL for both. */
static const sst_value *opt_arg(const sst_value *args, const char *name) {
    const sst_value *v = sst_object_get(args, name);
    return v != NULL && !sst_is_null(v) ? v : NULL;
}

/* {"status": status, "id": id} (new), NULL on SST_ENOMEM. */
static sst_value *status_result(const char *status, const char *id, sst_error *err) {
    sst_value *r = sst__set_take(sst_object_empty(), "status", sst_string_new(status, err), err);
    return sst__set_take(r, "id", sst_string_new(id, err), err);
}

/* Checks manage_memory's arguments against each other; SST_OK or the model's message. */
static sst_code check_manage(const char *action, const sst_value *content, const sst_value *id,
                             sst_error *err) {
    bool create = strcmp(action, "create") == 0, update = strcmp(action, "update") == 0;
    if (!create && !update && strcmp(action, "delete") != 0) {
        return sst__error(err, SST_EINVAL,
                          "unknown action '%s' (expected create, update or delete)", action);
    }
    if (id != NULL && !sst_is_string(id)) {
        return sst__error(err, SST_EINVAL, "id must be a memory id (a string), got %s",
                          sst_type_name(sst_value_type(id)));
    }
    if (create && id != NULL) {
        return sst__error(err, SST_EINVAL,
                          "you cannot provide a memory id when creating a memory; try again "
                          "without the id argument");
    }
    if (!create && id == NULL) {
        return sst__error(err, SST_EINVAL, "you must provide the memory id to %s a memory", action);
    }
    if (!create && sst_string_len(id) == 0) {
        return sst__error(err, SST_EINVAL, "the memory id is empty");
    }
    if ((create || update) && (content == NULL || !sst_is_string(content))) {
        return sst__error(err, SST_EINVAL, "content (the memory's text) is needed to %s a memory",
                          action);
    }
    return SST_OK;
}

/* manage_memory{content, action = "create"|"update"|"delete", id}. */
static sst_value *manage_memory(const sst_value *args, sst_node_ctx *ctx, void *ud,
                                sst_error *err) {
    const sst_value *actionv = opt_arg(args, "action");
    const char *action = sst_is_string(actionv) ? sst_string_cstr(actionv) : "create";
    const sst_value *content = opt_arg(args, "content");
    const sst_value *idv = opt_arg(args, "id");
    if (actionv != NULL && !sst_is_string(actionv)) {
        sst__error(err, SST_EINVAL, "action must be create, update or delete");
        return NULL;
    }
    filled ns;
    sst_store *st;
    if (check_manage(action, content, idv, err) != SST_OK ||
        resolve(ud, ctx, &ns, &st, err) != SST_OK) {
        return NULL;
    }
    char id[37];
    sst_code rc = SST_OK;
    if (idv == NULL) {
        rc = sst__uuid4(id, err);
    } else {
        sst_value *old = sst_store_get(st, ns.labels, ns.n, sst_string_cstr(idv), -1, err);
        rc = old == NULL ? sst__code(err) : SST_OK;
        if (old != NULL && sst_is_null(old)) {
            rc = sst__error(err, SST_ENOTFOUND, "no memory with id '%s' (search_memory lists them)",
                            sst_string_cstr(idv));
        }
        sst_value_unref(old);
    }
    const char *key = idv != NULL ? sst_string_cstr(idv) : id;
    sst_value *result = NULL;
    if (rc == SST_OK && strcmp(action, "delete") == 0) {
        rc = sst_store_delete(st, ns.labels, ns.n, key, err);
        result = rc == SST_OK ? status_result("deleted", key, err) : NULL;
    } else if (rc == SST_OK) {
        sst_value *value =
            sst__set_take(sst_object_empty(), "content", sst_value_ref(content), err);
        rc = value != NULL ? sst_store_put(st, ns.labels, ns.n, key, value, NULL, err)
                           : sst__code(err);
        sst_value_unref(value);
        result = rc == SST_OK ? status_result(idv == NULL ? "created" : "updated", key, err) : NULL;
    }
    filled_free(&ns);
    return result;
}

/* search_memory{query, limit = 10, offset = 0, filter}: the store's search items. */
static sst_value *search_memory(const sst_value *args, sst_node_ctx *ctx, void *ud,
                                sst_error *err) {
    const sst_value *query = opt_arg(args, "query");
    const sst_value *limit = opt_arg(args, "limit");
    const sst_value *offset = opt_arg(args, "offset");
    const sst_value *filter = opt_arg(args, "filter");
    if (query != NULL && !sst_is_string(query)) {
        sst__error(err, SST_EINVAL, "query must be a string");
        return NULL;
    }
    if (limit != NULL &&
        (!sst_is_int(limit) || sst_int_value(limit) < 1 || sst_int_value(limit) > 100)) {
        sst__error(err, SST_EINVAL, "limit must be an integer from 1 to 100");
        return NULL;
    }
    if (offset != NULL && (!sst_is_int(offset) || sst_int_value(offset) < 0)) {
        sst__error(err, SST_EINVAL, "offset must be an integer of 0 or more");
        return NULL;
    }
    if (filter != NULL && !sst_is_object(filter)) {
        sst__error(err, SST_EINVAL, "filter must be an object (or null)");
        return NULL;
    }
    filled ns;
    sst_store *st;
    if (resolve(ud, ctx, &ns, &st, err) != SST_OK) {
        return NULL;
    }
    sst_store_search_opts q;
    sst_store_search_opts_init(&q);
    q.prefix = ns.labels;
    q.prefix_len = ns.n;
    q.query = query != NULL ? sst_string_cstr(query) : NULL;
    q.filter = filter;
    q.limit = limit != NULL ? (size_t)sst_int_value(limit) : 10;
    q.offset = offset != NULL ? (size_t)sst_int_value(offset) : 0;
    sst_value *items = sst_store_search(st, &q, err);
    filled_free(&ns);
    return items;
}

/* LangMem's descriptions, so prompts written for LangMem agents carry over. */
static const char manage_description[] =
    "Create, update, or delete a memory to persist across conversations.\n"
    "Include the MEMORY ID when updating or deleting a MEMORY. Omit when creating a new "
    "MEMORY - it will be created for you.\n"
    "Proactively call this tool when you:\n\n"
    "1. Identify a new USER preference.\n"
    "2. Receive an explicit USER request to remember something or otherwise alter your "
    "behavior.\n"
    "3. Are working and want to record important context.\n"
    "4. Identify that an existing MEMORY is incorrect or outdated.\n";

static const char manage_parameters[] =
    "{\"type\":\"object\",\"properties\":{"
    "\"content\":{\"type\":[\"string\",\"null\"],\"description\":\"The memory's text.\"},"
    "\"action\":{\"type\":\"string\",\"enum\":[\"create\",\"update\",\"delete\"],"
    "\"default\":\"create\"},"
    "\"id\":{\"type\":[\"string\",\"null\"],\"description\":\"The MEMORY ID to update or "
    "delete.\"}}}";

static const char search_description[] =
    "Search your long-term memories for information relevant to your current context.";

static const char search_parameters[] =
    "{\"type\":\"object\",\"properties\":{"
    "\"query\":{\"type\":\"string\"},"
    "\"limit\":{\"type\":\"integer\",\"default\":10},"
    "\"offset\":{\"type\":\"integer\",\"default\":0},"
    "\"filter\":{\"type\":[\"object\",\"null\"],\"description\":\"Members the memory's value "
    "must match.\"}},"
    "\"required\":[\"query\"]}";

sst_code sst__memory_tools_add(sst__tools *t, const sst__memory_tools *m, sst_error *err) {
    sst_value *mp = sst_json_parse(manage_parameters, err);
    sst_value *sp = mp != NULL ? sst_json_parse(search_parameters, err) : NULL;
    sst_code rc = sp != NULL ? SST_OK : sst__code(err);
    if (rc == SST_OK) {
        rc = sst__tools_add_ctx(t, "manage_memory", manage_description, mp, manage_memory,
                                (void *)m, err);
    }
    if (rc == SST_OK) {
        rc = sst__tools_add_ctx(t, "search_memory", search_description, sp, search_memory,
                                (void *)m, err);
    }
    sst_value_unref(mp);
    sst_value_unref(sp);
    return rc;
}
