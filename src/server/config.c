/* SPDX-License-Identifier: MIT */
/*
 * langgraph.json: {"graphs": {"id": "./path.lua", ...}, "env": "./.env" |
 * {"NAME": "value"}}. Paths are relative to the file, as LangGraph's CLI
 * resolves them. The other members are config_keys.c's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server_int.h"
#include "superstep/json.h"

/* @p rel relative to the folder of @p file (a new string), or a copy when absolute. */
static char *beside(const char *file, const char *rel) {
    const char *slash = strrchr(file, '/');
    sst__buf b;
    sst__buf_init(&b);
    if (rel[0] != '/' && slash != NULL) {
        sst__buf_append(&b, file, (size_t)(slash - file) + 1);
    }
    sst__buf_printf(&b, "%s", rel[0] == '.' && rel[1] == '/' ? rel + 2 : rel);
    return sst__buf_detach(&b, NULL);
}

/* Sets NAME=VALUE lines of a .env file (# comments, optional quotes); existing ones stay. */
static sst_code env_file(const char *path, sst_error *err) {
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        return sst__error(err, SST_EIO, "serve: cannot read the env file %s", path);
    }
    char line[4096];
    while (fgets(line, sizeof line, f) != NULL) {
        line[strcspn(line, "\r\n")] = '\0';
        char *p = line + strspn(line, " \t");
        if (strncmp(p, "export ", 7) == 0) {
            p += 7;
        }
        char *eq = strchr(p, '=');
        if (*p == '#' || eq == NULL || eq == p) {
            continue;
        }
        *eq = '\0';
        char *v = eq + 1;
        size_t n = strlen(v);
        if (n >= 2 && (v[0] == '"' || v[0] == '\'') && v[n - 1] == v[0]) {
            v[n - 1] = '\0';
            v++;
        }
        setenv(p, v, 0);
    }
    fclose(f);
    return SST_OK;
}

static sst_code set_env(const char *file, const sst_value *env, sst_error *err) {
    if (env == NULL || sst_is_null(env)) {
        return SST_OK;
    }
    if (sst_is_string(env)) {
        char *path = beside(file, sst_string_cstr(env));
        sst_code rc = path != NULL ? env_file(path, err) : sst__enomem(err);
        sst__free(path);
        return rc;
    }
    if (!sst_is_object(env)) {
        return sst__error(err, SST_EINVAL, "%s: \"env\" must be a file name or an object", file);
    }
    for (size_t i = 0; i < sst_object_len(env); i++) {
        const sst_value *v = sst_object_value_at(env, i);
        if (!sst_is_string(v)) {
            return sst__error(err, SST_EINVAL, "%s: env member '%s' must be a string", file,
                              sst_string_cstr(sst_object_key_at(env, i)));
        }
        setenv(sst_string_cstr(sst_object_key_at(env, i)), sst_string_cstr(v), 0);
    }
    return SST_OK;
}

sst_code sst_server_load_config(sst_server *s, const char *path, sst_error *err) {
    SST__ERR_LOCAL(err);
    sst_value *cfg = sst_json_read_file(path, NULL, err);
    if (cfg == NULL) {
        return sst__code(err);
    }
    const sst_value *graphs = sst_object_get(cfg, "graphs");
    sst_code rc = SST_OK;
    if (!sst_is_object(cfg) || !sst_is_object(graphs) || sst_object_len(graphs) == 0) {
        rc = sst__error(err, SST_EINVAL, "%s: needs \"graphs\": {\"id\": \"./script.lua\", ...}",
                        path);
    }
    if (rc == SST_OK) {
        rc = set_env(path, sst_object_get(cfg, "env"), err);
    }
    if (rc == SST_OK) {
        rc = srv_config_keys(s, path, cfg, err);
    }
    for (size_t i = 0; rc == SST_OK && i < sst_object_len(graphs); i++) {
        const char *id = sst_string_cstr(sst_object_key_at(graphs, i));
        const sst_value *p = sst_object_value_at(graphs, i);
        if (!sst_is_string(p)) {
            rc = sst__error(err, SST_EINVAL, "%s: graph '%s' must be a script path", path, id);
            break;
        }
        char *script = beside(path, sst_string_cstr(p));
        rc = script != NULL ? srv_add_graph_spec(s, id, script, err) : sst__enomem(err);
        sst__free(script);
    }
    sst_value_unref(cfg);
    return rc;
}
