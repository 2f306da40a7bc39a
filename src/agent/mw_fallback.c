/* SPDX-License-Identifier: MIT */
/*
 * Retry with fallback models (LangChain's ModelRetryMiddleware and
 * ModelFallbackMiddleware together): a model call that fails with a
 * transient error is tried again with backoff, then the same request goes to
 * the next model; the first reply wins.
 */
#include <stdio.h>

#include "middleware.h"
#include "superstep/pregel.h"

typedef struct fallback {
    const sst__model **models; /* owned array of borrowed models */
    size_t n;
    unsigned retries;
    sst_retry_policy backoff; /* the waits between retries of one model */
} fallback;

static void free_fallback(void *ud) {
    fallback *f = ud;
    sst__free(f->models);
    sst__free(f);
}

static sst_value *wrap(sst_model_request *req, sst_model_handler next, void *next_data, void *ud,
                       sst_error *err) {
    const fallback *f = ud;
    const sst__model *own = req->model;
    sst_error last = {0};
    for (size_t m = 0; m <= f->n; m++) {
        req->model = m == 0 ? own : f->models[m - 1];
        for (unsigned attempt = 0; attempt <= f->retries; attempt++) {
            sst_error e = {0};
            sst_value *reply = next(req, next_data, &e);
            if (reply != NULL) {
                req->model = own;
                return reply;
            }
            last = e;
            bool stop = req->ctx != NULL && sst_node_cancelled(req->ctx);
            if (stop) {
                req->model = own;
                *err = last;
                return NULL;
            }
            if (!sst_code_is_transient(e.code) || attempt == f->retries) {
                break; /* for good, or out of retries: the next model */
            }
            sst__sleep_ms(sst_retry_policy_delay_ms(&f->backoff, attempt + 1, 0));
        }
    }
    req->model = own;
    sst__error(err, last.code != SST_OK ? last.code : SST_ETASK,
               "model fallback: all %zu models failed; the last: %s", f->n + 1, last.msg);
    return NULL;
}

sst_middleware *sst_middleware_model_fallback(sst_model *const *fallbacks, size_t n,
                                              unsigned retries, sst_error *err) {
    if (n > 0 && fallbacks == NULL) {
        sst__error(err, SST_EINVAL, "model fallback: NULL list of models");
        return NULL;
    }
    fallback *f = sst__calloc(1, sizeof *f);
    f = f != NULL && (f->models = sst__calloc(n + 1, sizeof *f->models)) == NULL
            ? (sst__free(f), NULL)
            : f;
    if (f == NULL) {
        sst__enomem(err);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        if (fallbacks[i] == NULL) {
            free_fallback(f);
            sst__error(err, SST_EINVAL, "model fallback: model %zu is NULL", i + 1);
            return NULL;
        }
        f->models[i] = sst__model_of(fallbacks[i]);
    }
    f->n = n;
    f->retries = retries;
    /* 200 ms, doubled each retry up to 6.4 s; no jitter. */
    f->backoff = (sst_retry_policy){.max_attempts = retries + 1,
                                    .initial_interval_s = 0.2,
                                    .backoff_factor = 2.0,
                                    .max_interval_s = 6.4};
    sst_middleware_hooks h = {
        .wrap_model_call = wrap, .user_data = f, .free_user_data = free_fallback};
    sst_middleware *m = sst_middleware_new("ModelFallbackMiddleware", &h, err);
    if (m == NULL) {
        free_fallback(f);
    }
    return m;
}
