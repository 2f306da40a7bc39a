/* SPDX-License-Identifier: MIT */
/*
 * OpenAI-compatible embeddings over the shared HTTP machinery (http.h), and
 * the public embedder of superstep/agent.h; see embeddings.h.
 */
#include "embeddings.h"

#include <stdio.h>

#include "redact.h"
#include "superstep/agent.h"
#include "superstep/json.h"
#include "values/build.h"

#define DEFAULT_BATCH        256
#define DEFAULT_MAX_RESPONSE ((size_t)64 << 20)

void sst__embed_config_init(sst__embed_config *c) {
    memset(c, 0, sizeof *c);
    c->batch = DEFAULT_BATCH;
    sst__http_config_init(&c->http);
    c->http.what = "embeddings";
    /* 256 embeddings of 1536 floats written as JSON text come to 5-8 MB. */
    c->http.max_response = DEFAULT_MAX_RESPONSE;
}

/* One batch's request and where its reply goes, for the HTTP handler. */
typedef struct batch {
    const sst__embed_config *cfg;
    const sst__http_request *q;
    size_t first; /* the batch's first text, among all the call's texts */
    size_t n;     /* texts in the batch */
    size_t dims;  /* floats per embedding */
    float *out;   /* the batch's n * dims floats (OUT) */
    bool *seen;   /* n flags: an embedding for that text was placed (scratch) */
} batch;

/* The request body: {"model": ..., "input": [texts], "dimensions": dims (when set)}. */
static char *request_body(const batch *b, const char *const *texts, sst_error *err) {
    const sst__embed_config *c = b->cfg;
    sst_value *input = sst_array_empty();
    for (size_t i = 0; input != NULL && i < b->n; i++) {
        input = sst__push_take(input, sst_string_new(texts[i], err), err);
    }
    sst_value *r = sst__set_take(sst_object_empty(), "model", sst_string_new(c->model, err), err);
    r = sst__set_take(r, "input", input, err);
    if (c->dims != 0) {
        r = sst__set_take(r, "dimensions", sst_int_new((int64_t)c->dims, err), err);
    }
    char *text = r != NULL ? sst_json_write(r, SST_JSON_COMPACT, NULL, err) : NULL;
    sst_value_unref(r);
    return text;
}

/*
 * Places one item of the reply's "data" (the @p pos th) into the batch's rows.
 * SST_EPARSE for an item of the wrong shape or a bad or repeated index,
 * SST_EINVAL for an embedding of another size than expected.
 */
static sst_code place(batch *b, const sst_value *item, size_t pos, sst_error *err) {
    const char *shown = b->q->shown;
    const sst_value *index = sst_object_get(item, "index");
    const sst_value *emb = sst_object_get(item, "embedding");
    if (!sst_is_array(emb)) {
        return sst__error(err, SST_EPARSE,
                          "embeddings reply from %s: data[%zu] has no \"embedding\" array", shown,
                          pos);
    }
    /* A server that leaves out "index" lists the embeddings in input order. */
    size_t at = pos;
    if (index != NULL) {
        if (!sst_is_int(index)) {
            return sst__error(err, SST_EPARSE,
                              "embeddings reply from %s: data[%zu].index is %s, not an integer",
                              shown, pos, sst_type_name(sst_value_type(index)));
        }
        if (sst_int_value(index) < 0 || (uint64_t)sst_int_value(index) >= b->n) {
            return sst__error(
                err, SST_EPARSE,
                "embeddings reply from %s: data[%zu].index is %lld, expected 0 to %zu", shown, pos,
                (long long)sst_int_value(index), b->n - 1);
        }
        at = (size_t)sst_int_value(index);
    }
    if (b->seen[at]) {
        return sst__error(err, SST_EPARSE, "embeddings reply from %s: index %zu appears twice",
                          shown, at);
    }
    b->seen[at] = true;
    size_t got = sst_array_len(emb);
    if (got != b->dims) {
        return sst__error(err, SST_EINVAL,
                          "embeddings reply from %s: model '%s' gave %zu dims for text %zu, "
                          "expected %zu",
                          shown, b->cfg->model, got, b->first + at, b->dims);
    }
    float *row = b->out + at * b->dims;
    sst_array_iter it;
    sst_array_iter_init(&it, emb);
    size_t k = 0;
    for (const sst_value *x; (x = sst_array_iter_next(&it)) != NULL; k++) {
        if (!sst_is_number(x)) {
            return sst__error(err, SST_EPARSE,
                              "embeddings reply from %s: data[%zu].embedding[%zu] is %s, not a "
                              "number",
                              shown, pos, k, sst_type_name(sst_value_type(x)));
        }
        row[k] = (float)sst_number_value(x);
    }
    return SST_OK;
}

/* The end of a 200 reply: {"data": [{"index": i, "embedding": [...]}, ...], ...}. */
static sst_code batch_done(void *ud, const char *body, size_t len, bool *transient,
                           sst_error *err) {
    (void)transient; /* a malformed reply is not retried: the server would say the same */
    batch *b = ud;
    const char *shown = b->q->shown;
    sst_json_read_opts ro;
    sst_json_read_opts_init(&ro);
    ro.max_bytes = b->cfg->http.max_response;
    sst_value *reply = sst_json_read(body, len, &ro, err);
    if (reply == NULL) {
        sst__error_prefix(err, "embeddings reply from %s", shown);
        return sst__code(err);
    }
    sst_code rc = SST_OK;
    const sst_value *data = sst_object_get(reply, "data");
    if (!sst_is_array(data)) {
        rc = sst__error(err, SST_EPARSE, "embeddings reply from %s: no \"data\" array", shown);
    } else if (sst_array_len(data) != b->n) {
        rc = sst__error(err, SST_EPARSE,
                        "embeddings reply from %s: %zu embeddings for %zu texts, expected %zu",
                        shown, sst_array_len(data), b->n, b->n);
    } else {
        memset(b->seen, 0, b->n * sizeof *b->seen);
        sst_array_iter it;
        sst_array_iter_init(&it, data);
        size_t pos = 0;
        for (const sst_value *item; rc == SST_OK && (item = sst_array_iter_next(&it)) != NULL;
             pos++) {
            rc = sst_is_object(item)
                     ? place(b, item, pos, err)
                     : sst__error(err, SST_EPARSE,
                                  "embeddings reply from %s: data[%zu] is not an object", shown,
                                  pos);
        }
    }
    sst_value_unref(reply);
    return rc;
}

/* Checks the arguments of sst__embed that are the caller's, before anything is sent. */
static sst_code check_args(const sst__embed_config *c, const char *const *texts, size_t n,
                           size_t dims, const float *out, sst_error *err) {
    if (c->base_url == NULL || c->model == NULL) {
        return sst__error(err, SST_EINVAL, "embeddings: a base URL and a model are needed");
    }
    if (n == 0) {
        return SST_OK; /* nothing to embed, whatever the rest says */
    }
    if (texts == NULL || out == NULL || dims == 0) {
        return sst__error(err, SST_EINVAL, "embeddings: texts, out and dims > 0 are needed");
    }
    if (c->dims != 0 && dims != c->dims) {
        return sst__error(err, SST_EINVAL,
                          "embeddings: the embedder asks model '%s' for %zu dims, the caller "
                          "expects %zu",
                          c->model, c->dims, dims);
    }
    if (n > SIZE_MAX / dims / sizeof(float)) {
        return sst__error(err, SST_EINVAL, "embeddings: %zu texts of %zu dims overflow", n, dims);
    }
    for (size_t i = 0; i < n; i++) {
        if (texts[i] == NULL) {
            return sst__error(err, SST_EINVAL, "embeddings: text %zu is NULL", i);
        }
        if (!sst_utf8_valid(texts[i], strlen(texts[i]))) {
            return sst__error(err, SST_EUTF8, "embeddings: text %zu is not valid UTF-8", i);
        }
    }
    return SST_OK;
}

sst_code sst__embed(const sst__embed_config *c, const char *const *texts, size_t n, size_t dims,
                    float *out, sst_error *err) {
    SST__ERR_LOCAL(err); /* the handler's errors are read back */
    sst_code rc = check_args(c, texts, n, dims, out, err);
    if (rc != SST_OK || n == 0) {
        return rc;
    }
    size_t per = c->batch > 0 ? c->batch : DEFAULT_BATCH;
    size_t batches = (n + per - 1) / per;
    bool *seen = sst__malloc((n < per ? n : per) * sizeof *seen);
    if (seen == NULL) {
        return sst__enomem(err);
    }
    sst__http_request q;
    rc = sst__http_request_init(&q, &c->http, c->base_url, "/embeddings", "application/json",
                                c->api_key_env, err);
    for (size_t k = 0; rc == SST_OK && k < batches; k++) {
        batch b = {.cfg = c, .q = &q, .first = k * per, .dims = dims, .seen = seen};
        b.n = n - b.first < per ? n - b.first : per;
        b.out = out + b.first * dims;
        char *body = request_body(&b, texts + b.first, err);
        if (body == NULL) {
            rc = sst__code(err);
            break;
        }
        sst__http_handler h = {.ud = &b, .done = batch_done};
        rc = sst__http_post(&q, body, &h, err);
        sst__free(body);
        if (rc != SST_OK && batches > 1) {
            sst__error_prefix(err, "texts %zu to %zu (batch %zu of %zu)", b.first,
                              b.first + b.n - 1, k + 1, batches);
        }
    }
    sst__http_request_free(&q);
    sst__free(seen);
    return rc;
}

/* ---- The public embedder (superstep/agent.h) ---------------------------------------------- */

struct sst_embedder {
    sst__embed_config cfg;            /* its strings point at the copies below */
    char *base_url, *model, *key_env; /* owned copies */
};

void sst_embedder_opts_init(sst_embedder_opts *o) {
    memset(o, 0, sizeof *o);
    sst__embed_config c;
    sst__embed_config_init(&c);
    o->batch = c.batch;
    o->timeout_ms = c.http.timeout_ms;
    o->connect_timeout_ms = c.http.connect_timeout_ms;
    o->max_attempts = c.http.max_attempts;
    o->retry_base_ms = c.http.retry_base_ms;
    o->max_response_bytes = c.http.max_response;
}

static char *dup_or_null(const char *s, bool *oom) {
    if (s == NULL) {
        return NULL;
    }
    char *d = sst__strndup(s, strlen(s));
    *oom = *oom || d == NULL;
    return d;
}

sst_embedder *sst_embedder_openai(const sst_embedder_opts *o, sst_error *err) {
    if (o == NULL || o->base_url == NULL || o->model == NULL || o->model[0] == '\0') {
        sst__error(err, SST_EINVAL, "embedder: a base URL and a model name are needed");
        return NULL;
    }
    if (strncmp(o->base_url, "http://", 7) != 0 && strncmp(o->base_url, "https://", 8) != 0) {
        char shown[256]; /* the URL may have a password in it */
        sst__url_redact(o->base_url, shown, sizeof shown);
        sst__error(err, SST_EINVAL, "embedder: '%s' is not an http(s) base URL", shown);
        return NULL;
    }
    sst_embedder *e = sst__calloc(1, sizeof *e);
    if (e == NULL) {
        sst__enomem(err);
        return NULL;
    }
    bool oom = false;
    e->base_url = dup_or_null(o->base_url, &oom);
    e->model = dup_or_null(o->model, &oom);
    e->key_env = dup_or_null(o->api_key_env, &oom);
    if (oom) {
        sst_embedder_free(e);
        sst__enomem(err);
        return NULL;
    }
    sst__embed_config *c = &e->cfg;
    sst__embed_config_init(c);
    c->base_url = e->base_url;
    c->model = e->model;
    c->api_key_env = e->key_env;
    c->dims = o->dims;
    /*
     * Zero (or less) keeps the default, so that a zeroed options struct works;
     * only retry_base_ms takes 0 as given (retry at once).
     */
    c->batch = o->batch > 0 ? o->batch : c->batch;
    c->http.timeout_ms = o->timeout_ms > 0 ? o->timeout_ms : c->http.timeout_ms;
    c->http.connect_timeout_ms =
        o->connect_timeout_ms > 0 ? o->connect_timeout_ms : c->http.connect_timeout_ms;
    c->http.max_attempts = o->max_attempts > 0 ? o->max_attempts : c->http.max_attempts;
    c->http.retry_base_ms = o->retry_base_ms >= 0 ? o->retry_base_ms : c->http.retry_base_ms;
    c->http.max_response = o->max_response_bytes > 0 ? o->max_response_bytes : c->http.max_response;
    return e;
}

void sst_embedder_free(sst_embedder *e) {
    if (e == NULL) {
        return;
    }
    sst__free(e->base_url);
    sst__free(e->model);
    sst__free(e->key_env);
    sst__free(e);
}

size_t sst_embedder_dims(const sst_embedder *e) {
    return e->cfg.dims;
}

sst_code sst_embedder_embed(void *embedder, const char *const *texts, size_t n, size_t dims,
                            float *out, sst_error *err) {
    if (embedder == NULL) {
        return sst__error(err, SST_EINVAL, "embeddings: no embedder");
    }
    const sst_embedder *e = embedder;
    return sst__embed(&e->cfg, texts, n, dims, out, err);
}
