/* SPDX-License-Identifier: MIT */
/*
 * The members of langgraph.json beyond "graphs" and "env" (config.c): each is applied,
 * or refused at start with a message naming it, or (the build's members, which only
 * LangGraph's Docker build reads) named in a warning. docs/server.md lists them all.
 */
#include <string.h>

#include "cors.h"
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

static bool listed(const char *const *list, const char *key) {
    for (size_t i = 0; list[i] != NULL; i++) {
        if (strcmp(list[i], key) == 0) {
            return true;
        }
    }
    return false;
}

/* "http": only the members this server applies. */
static sst_code http_section(sst_server *s, const char *file, const sst_value *http,
                             sst_error *err) {
    if (!sst_is_object(http)) {
        return sst__error(err, SST_EINVAL, "%s: \"http\" must be an object", file);
    }
    for (size_t i = 0; i < sst_object_len(http); i++) {
        const char *k = sst_string_cstr(sst_object_key_at(http, i));
        if (strcmp(k, "cors") != 0) {
            return sst__error(err, SST_EINVAL, "%s: http.%s is not supported by superstep serve",
                              file, k);
        }
    }
    const sst_value *cors = sst_object_get(http, "cors");
    if (cors != NULL && !sst_is_null(cors)) {
        srv_cors *c = srv_cors_new(cors, file, err);
        if (c == NULL) {
            return sst__code(err);
        }
        srv_cors_free(s->cors);
        s->cors = c;
    }
    return SST_OK;
}

sst_code srv_config_keys(sst_server *s, const char *file, const sst_value *cfg, sst_error *err) {
    for (size_t i = 0; i < sst_object_len(cfg); i++) {
        const char *k = sst_string_cstr(sst_object_key_at(cfg, i));
        const sst_value *v = sst_object_value_at(cfg, i);
        sst_code rc = SST_OK;
        if (strcmp(k, "graphs") == 0 || strcmp(k, "env") == 0) {
            continue;
        }
        if (listed(k_build_keys, k)) {
            srv_log(s, "%s: \"%s\" is for LangGraph's Docker build; superstep serve ignores it",
                    file, k);
        } else if (strcmp(k, "http") == 0) {
            rc = sst_is_null(v) ? SST_OK : http_section(s, file, v, err);
        } else {
            rc = sst__error(err, SST_EINVAL, "%s: unknown member \"%s\"", file, k);
        }
        if (rc != SST_OK) {
            return rc;
        }
    }
    return SST_OK;
}
