/* SPDX-License-Identifier: MIT */
/*
 * langgraph.json's "store": {"index": {"embed", "dims", "fields"}, "ttl": {"default_ttl",
 * "refresh_on_read", "sweep_interval_minutes"}} (LangGraph's StoreConfig): the server's
 * store is made again with them before any graph is loaded, so the API's store routes and
 * the graphs' nodes search by meaning and expire items as the file says.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "server_int.h"
#include "superstep/agent.h"

static sst_code bad(sst_error *err, const char *file, const char *what) {
    return sst__error(err, SST_EINVAL, "%s: store.%s", file, what);
}

/* Checks that @p o (named @p name) has only members in @p known. */
static sst_code only(const sst_value *o, const char *const *known, const char *file,
                     const char *name, sst_error *err) {
    if (!sst_is_object(o)) {
        return sst__error(err, SST_EINVAL, "%s: %s must be an object", file, name);
    }
    for (size_t i = 0; i < sst_object_len(o); i++) {
        const char *k = sst_string_cstr(sst_object_key_at(o, i));
        bool ok = false;
        for (size_t j = 0; known[j] != NULL; j++) {
            ok = ok || strcmp(k, known[j]) == 0;
        }
        if (!ok) {
            return sst__error(err, SST_EINVAL, "%s: unknown member %s.%s", file, name, k);
        }
    }
    return SST_OK;
}

/* index.embed: "openai:MODEL" (OPENAI_BASE_URL, else OpenAI's; key OPENAI_API_KEY) or an
 * OpenAI-compatible http(s) base URL with index.model (superstep's own member). */
static sst_code embedder(sst_server *s, const char *file, const sst_value *index, sst_error *err) {
    const sst_value *embed = sst_object_get(index, "embed");
    const sst_value *model = sst_object_get(index, "model");
    const sst_value *key = sst_object_get(index, "api_key_env");
    if (!sst_is_string(embed)) {
        return bad(err, file,
                   "index.embed is required: \"openai:MODEL\" or an OpenAI-compatible "
                   "http(s) URL with index.model");
    }
    if ((model != NULL && !sst_is_string(model)) || (key != NULL && !sst_is_string(key))) {
        return bad(err, file, "index.model and index.api_key_env must be strings");
    }
    const char *e = sst_string_cstr(embed);
    sst_embedder_opts eo;
    sst_embedder_opts_init(&eo);
    eo.api_key_env = key != NULL ? sst_string_cstr(key) : NULL;
    if (strncmp(e, "openai:", 7) == 0) {
        const char *base = getenv("OPENAI_BASE_URL");
        eo.base_url = base != NULL && base[0] != '\0' ? base : "https://api.openai.com/v1";
        eo.model = e + 7;
        eo.api_key_env = eo.api_key_env != NULL ? eo.api_key_env : "OPENAI_API_KEY";
    } else if (strncmp(e, "http://", 7) == 0 || strncmp(e, "https://", 8) == 0) {
        if (model == NULL) {
            return bad(err, file, "index.model is required with an http(s) index.embed");
        }
        eo.base_url = e;
        eo.model = sst_string_cstr(model);
    } else {
        return sst__error(err, SST_EINVAL,
                          "%s: store.index.embed '%s' is not supported: superstep serve embeds "
                          "through \"openai:MODEL\" or an OpenAI-compatible http(s) URL (not a "
                          "Python function or another provider)",
                          file, e);
    }
    sst_embedder *em = sst_embedder_openai(&eo, err);
    if (em == NULL) {
        return sst__code(err);
    }
    sst_embedder_free(s->embedder);
    s->embedder = em;
    return SST_OK;
}

static sst_code read_index(sst_server *s, const char *file, const sst_value *index,
                           sst_store_opts *so, const char ***fields, sst_error *err) {
    static const char *const known[] = {"embed", "dims", "fields", "model", "api_key_env", NULL};
    if (only(index, known, file, "store.index", err) != SST_OK) {
        return sst__code(err);
    }
    const sst_value *dims = sst_object_get(index, "dims");
    if (!sst_is_int(dims) || sst_int_value(dims) < 1 || sst_int_value(dims) > 65536) {
        return bad(err, file, "index.dims is required: the vectors' size, 1 to 65536");
    }
    so->index.dims = (size_t)sst_int_value(dims);
    const sst_value *f = sst_object_get(index, "fields");
    if (f != NULL && !sst_is_null(f)) {
        if (!sst_is_array(f) || sst_array_len(f) == 0) {
            return bad(err, file, "index.fields must be a non-empty list of paths");
        }
        *fields = sst__calloc(sst_array_len(f), sizeof **fields);
        if (*fields == NULL) {
            return sst__enomem(err);
        }
        for (size_t i = 0; i < sst_array_len(f); i++) {
            if (!sst_is_string(sst_array_get(f, i))) {
                return bad(err, file, "index.fields must be a list of strings");
            }
            (*fields)[i] = sst_string_cstr(sst_array_get(f, i));
        }
        so->index.fields = *fields;
        so->index.n_fields = sst_array_len(f);
    }
    if (embedder(s, file, index, err) != SST_OK) {
        return sst__code(err);
    }
    so->index.embed = sst_embedder_embed;
    so->index.embed_user_data = s->embedder;
    return SST_OK;
}

/* The store's clock moved by SST_SERVE_TTL_CLOCK_OFFSET_MS (a test knob, as for thread
 * TTLs: docs/server.md), so a test sees an item's TTL pass without waiting. */
static int64_t offset_clock(void *ud) {
    const int64_t *offset_ms = ud;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000 + *offset_ms * 1000;
}

static sst_code read_ttl(sst_server *s, const char *file, const sst_value *ttl, sst_store_opts *so,
                         sst_error *err) {
    static const char *const known[] = {"default_ttl", "refresh_on_read", "sweep_interval_minutes",
                                        NULL};
    if (only(ttl, known, file, "store.ttl", err) != SST_OK) {
        return sst__code(err);
    }
    const sst_value *v = sst_object_get(ttl, "default_ttl");
    if (v != NULL && !sst_is_null(v)) {
        if (!sst_is_number(v) || !(sst_number_value(v) > 0)) {
            return bad(err, file, "ttl.default_ttl must be a number of minutes more than 0");
        }
        so->default_ttl_minutes = sst_number_value(v);
    }
    if ((v = sst_object_get(ttl, "refresh_on_read")) != NULL && !sst_is_null(v)) {
        if (!sst_is_bool(v)) {
            return bad(err, file, "ttl.refresh_on_read must be true or false");
        }
        so->refresh_on_read = sst_bool_value(v);
    }
    if ((v = sst_object_get(ttl, "sweep_interval_minutes")) != NULL && !sst_is_null(v)) {
        if (!sst_is_number(v) || !(sst_number_value(v) > 0)) {
            return bad(err, file, "ttl.sweep_interval_minutes must be a number more than 0");
        }
        so->sweep_interval_minutes = sst_number_value(v);
    }
    /* Items past their TTL are not read even before a sweep removes them. */
    so->omit_expired = true;
    if (s->ttl_offset_ms != 0) {
        so->clock = offset_clock;
        so->clock_user_data = &s->ttl_offset_ms; /* the server outlives its store */
    }
    return SST_OK;
}

sst_code srv_store_configure(sst_server *s, const char *file, const sst_value *store,
                             sst_error *err) {
    static const char *const known[] = {"index", "ttl", NULL};
    if (only(store, known, file, "store", err) != SST_OK) {
        return sst__code(err);
    }
    sst_store_opts so;
    sst_store_opts_init(&so);
    const char **fields = NULL;
    const sst_value *index = sst_object_get(store, "index");
    const sst_value *ttl = sst_object_get(store, "ttl");
    sst_code rc = SST_OK;
    if (index != NULL && !sst_is_null(index)) {
        rc = read_index(s, file, index, &so, &fields, err);
    }
    if (rc == SST_OK && ttl != NULL && !sst_is_null(ttl)) {
        rc = read_ttl(s, file, ttl, &so, err);
    }
    sst_store *st = NULL;
    if (rc == SST_OK) {
        st = s->pg != NULL    ? sst_postgres_store_new_pg(s->pg, &so, err)
             : s->sdb != NULL ? sst_sqlite_store_new_db(s->sdb, &so, err)
                              : sst_memory_store_new(&so, err);
        rc = st != NULL ? SST_OK : sst__code(err);
    }
    sst__free(fields);
    if (rc != SST_OK) {
        return rc;
    }
    sst_store_free(s->store);
    s->store = st;
    return SST_OK;
}
