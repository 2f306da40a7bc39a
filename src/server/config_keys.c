/* SPDX-License-Identifier: MIT */
/*
 * The members of langgraph.json beyond "graphs" and "env" (config.c): each is applied,
 * or refused at start with a message naming it, or (the members only LangGraph's Docker
 * build reads, or that mean nothing here) named in a warning. docs/server.md lists them.
 */
#include <string.h>

#include "cors.h"
#include "prune.h"
#include "server_int.h"

/* The build's members: they describe LangGraph's Docker image, nothing a server does. */
static const char *const k_build_keys[] = {"dependencies",
                                           "python_version",
                                           "node_version",
                                           "dockerfile_lines",
                                           "pip_config_file",
                                           "pip_installer",
                                           "base_image",
                                           "image_distro",
                                           "api_version",
                                           "keep_pkg_tools",
                                           "_INTERNAL_docker_tag",
                                           "$schema",
                                           NULL};

/* Members refused at start: each would change what the server lets through or how it
 * keeps data, so running without it would be wrong, not merely different. */
static const struct {
    const char *key;
    const char *why;
} k_refused[] = {
    {"encryption", "at-rest encryption handlers are not supported"},
    {"webhooks", "the webhook URL policy and headers are not supported"},
};

/* http.disable_* switches and the route groups they remove. */
static const struct {
    const char *key;
    unsigned group;
} k_disable[] = {
    {"disable_assistants", SRV_GROUP_ASSISTANTS},
    {"disable_threads", SRV_GROUP_THREADS},
    {"disable_runs", SRV_GROUP_RUNS},
    {"disable_store", SRV_GROUP_STORE},
    {"disable_meta", SRV_GROUP_META},
    {"disable_ui", SRV_GROUP_UI},
    {"disable_mcp", SRV_GROUP_MCP},
    {"disable_a2a", 0}, /* no A2A routes here: nothing to remove */
    {"disable_webhooks", 0},
};

static bool listed(const char *const *list, const char *key) {
    for (size_t i = 0; list[i] != NULL; i++) {
        if (strcmp(list[i], key) == 0) {
            return true;
        }
    }
    return false;
}

/* @p rel relative to the folder of @p file (new), or a copy when absolute. */
static char *beside(const char *file, const char *rel) {
    const char *slash = strrchr(file, '/');
    sst__buf b;
    sst__buf_init(&b);
    if (rel[0] != '/' && slash != NULL) {
        sst__buf_append(&b, file, (size_t)(slash - file) + 1);
    }
    sst__buf_printf(&b, "%s", rel);
    return sst__buf_detach(&b, NULL);
}

/* http.app: a Lua script of routes ("./routes.lua"); LangGraph's "file.py:app" is refused. */
static sst_code app_member(sst_server *s, const char *file, const sst_value *v, sst_error *err) {
    const char *p = sst_is_string(v) ? sst_string_cstr(v) : NULL;
    size_t n = p != NULL ? strlen(p) : 0;
    if (p == NULL || n < 5 || strcmp(p + n - 4, ".lua") != 0) {
        return sst__error(err, SST_EINVAL,
                          "%s: http.app must name a Lua script of routes (\"./routes.lua\"); "
                          "a Python or JS app (\"file.py:app\") is not supported",
                          file);
    }
    char *path = beside(file, p);
    sst_code rc = path != NULL ? srv_app_load(s, path, err) : sst__enomem(err);
    sst__free(path);
    return rc;
}

/* "http": app, cors, the disable_* switches; the rest is refused by name. */
static sst_code http_section(sst_server *s, const char *file, const sst_value *http,
                             sst_error *err) {
    if (!sst_is_object(http)) {
        return sst__error(err, SST_EINVAL, "%s: \"http\" must be an object", file);
    }
    for (size_t i = 0; i < sst_object_len(http); i++) {
        const char *k = sst_string_cstr(sst_object_key_at(http, i));
        const sst_value *v = sst_object_value_at(http, i);
        if (strcmp(k, "app") == 0) {
            sst_code rc = app_member(s, file, v, err);
            if (rc != SST_OK) {
                return rc;
            }
            continue;
        }
        if (strcmp(k, "cors") == 0) {
            if (sst_is_null(v)) {
                continue;
            }
            srv_cors *c = srv_cors_new(v, file, err);
            if (c == NULL) {
                return sst__code(err);
            }
            srv_cors_free(s->cors);
            s->cors = c;
            continue;
        }
        size_t d = 0;
        while (d < sizeof k_disable / sizeof k_disable[0] && strcmp(k, k_disable[d].key) != 0) {
            d++;
        }
        if (d == sizeof k_disable / sizeof k_disable[0]) {
            return sst__error(err, SST_EINVAL,
                              "%s: http.%s is not supported by superstep serve (supported: "
                              "app, cors and the disable_* switches; docs/server.md)",
                              file, k);
        }
        if (!sst_is_bool(v)) {
            return sst__error(err, SST_EINVAL, "%s: http.%s must be true or false", file, k);
        }
        if (!sst_bool_value(v)) {
            continue;
        }
        s->disabled |= k_disable[d].group;
        if (strcmp(k, "disable_webhooks") == 0) {
            s->no_webhooks = true;
        }
    }
    return SST_OK;
}

/* "checkpointer": ttl applies; serde (Python's deserialisation allow-lists) means nothing
 * here (a warning); path (a Python checkpointer) is refused. */
static sst_code checkpointer_section(sst_server *s, const char *file, const sst_value *cp,
                                     sst_error *err) {
    if (!sst_is_object(cp)) {
        return sst__error(err, SST_EINVAL, "%s: \"checkpointer\" must be an object", file);
    }
    for (size_t i = 0; i < sst_object_len(cp); i++) {
        const char *k = sst_string_cstr(sst_object_key_at(cp, i));
        const sst_value *v = sst_object_value_at(cp, i);
        sst_code rc = SST_OK;
        if (strcmp(k, "ttl") == 0) {
            rc = sst_is_null(v) ? SST_OK : srv_cp_ttl_configure(s, file, v, err);
        } else if (strcmp(k, "serde") == 0) {
            srv_log(s,
                    "%s: checkpointer.serde is Python's deserialisation policy; superstep "
                    "stores JSON values and ignores it",
                    file);
        } else if (strcmp(k, "path") == 0) {
            rc = sst__error(err, SST_EINVAL,
                            "%s: checkpointer.path (a custom checkpointer) is not supported: "
                            "superstep serve keeps checkpoints in --db",
                            file);
        } else {
            rc =
                sst__error(err, SST_EINVAL,
                           "%s: unknown member checkpointer.%s (known: ttl, serde, path)", file, k);
        }
        if (rc != SST_OK) {
            return rc;
        }
    }
    return SST_OK;
}

sst_code srv_config_keys(sst_server *s, const char *file, const sst_value *cfg, sst_error *err) {
    for (size_t i = 0; i < sst_object_len(cfg); i++) {
        const char *k = sst_string_cstr(sst_object_key_at(cfg, i));
        const sst_value *v = sst_object_value_at(cfg, i);
        sst_code rc = SST_OK;
        if (strcmp(k, "graphs") == 0 || strcmp(k, "env") == 0 || sst_is_null(v)) {
            continue;
        }
        size_t r = 0;
        while (r < sizeof k_refused / sizeof k_refused[0] && strcmp(k, k_refused[r].key) != 0) {
            r++;
        }
        if (r < sizeof k_refused / sizeof k_refused[0]) {
            rc = sst__error(err, SST_EINVAL, "%s: \"%s\": %s", file, k, k_refused[r].why);
        } else if (listed(k_build_keys, k)) {
            srv_log(s, "%s: \"%s\" is for LangGraph's Docker build; superstep serve ignores it",
                    file, k);
        } else if (strcmp(k, "ui") == 0 || strcmp(k, "ui_config") == 0) {
            srv_log(s,
                    "%s: \"%s\" (generative UI components, JS bundles) is not served by "
                    "superstep serve; ignored",
                    file, k);
        } else if (strcmp(k, "http") == 0) {
            rc = http_section(s, file, v, err);
        } else if (strcmp(k, "checkpointer") == 0) {
            rc = checkpointer_section(s, file, v, err);
        } else if (strcmp(k, "store") == 0) {
            rc = srv_store_configure(s, file, v, err);
        } else if (strcmp(k, "auth") == 0) {
            /* users and ownership (docs/auth.md), after "env" (it may name the secret) */
            rc = sst_server_set_auth(s, v, file, err);
            if (rc != SST_OK) {
                sst__error_prefix(err, "%s", file);
            }
        } else {
            rc = sst__error(err, SST_EINVAL, "%s: unknown member \"%s\"", file, k);
        }
        if (rc != SST_OK) {
            return rc;
        }
    }
    return SST_OK;
}
