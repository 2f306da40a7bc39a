/* SPDX-License-Identifier: MIT */
/*
 * The engine's tracing hooks (superstep/graph.h's sst_tracer) over the OTLP
 * exporter (otlp.h): each hook span is an sst__span, exported when it ends.
 * A model call's span is a client span; the others are internal.
 */
#include <stdio.h>
#include <stdlib.h>

#include "otlp.h"
#include "superstep/agent.h"

struct sst_otlp_tracer {
    sst_tracer hooks;
    sst__otlp_exporter *exp;
    /* What start gives while the exporter is saturated, and to children of it: never
     * exported, only counted; its context is invalid, so no traceparent is sent. */
    sst__span unbuilt;
};

void sst_otlp_tracer_opts_init(sst_otlp_tracer_opts *o) {
    memset(o, 0, sizeof *o);
}

/* The parent's context: a span of ours, or one made from a traceparent (sst_otlp_tracer_parent:
 * a span that holds only the remote context). */
static bool parent_ctx(void *parent, sst__trace_ctx *out) {
    if (parent == NULL) {
        return false;
    }
    sst__span_context(parent, out);
    return true;
}

static void *hook_start(void *ud, void *parent, const char *kind, const char *name,
                        const sst_value *attrs) {
    sst_otlp_tracer *t = ud;
    /* While the exporter drops what it gets (a collector that is down), nothing is built:
     * the run pays a branch, not a span. */
    if (sst__otlp_saturated(t->exp) || parent == &t->unbuilt) {
        return &t->unbuilt;
    }
    sst__trace_ctx pctx;
    bool has_parent = parent_ctx(parent, &pctx);
    sst__span_kind k = strcmp(kind, "llm") == 0 ? SST__SPAN_CLIENT : SST__SPAN_INTERNAL;
    sst_error err = {0};
    sst__span *s = sst__span_start(name, k, has_parent ? &pctx : NULL, &err);
    if (s != NULL && attrs != NULL && sst__span_set_attributes(s, attrs, &err) != SST_OK) {
        sst_error_clear(&err); /* an attribute short: the span still goes */
    }
    return s;
}

static void hook_end(void *ud, void *span, sst_code code, const char *message,
                     const sst_value *attrs) {
    sst_otlp_tracer *t = ud;
    if (span == &t->unbuilt) {
        sst__otlp_drop_unbuilt(t->exp);
        return;
    }
    sst__span *s = span;
    sst_error err = {0};
    if (attrs != NULL && sst__span_set_attributes(s, attrs, &err) != SST_OK) {
        sst_error_clear(&err);
    }
    if (code != SST_OK &&
        sst__span_record_error(s, sst_code_name(code),
                               message != NULL ? message : sst_strerror(code), &err) != SST_OK) {
        sst_error_clear(&err);
    }
    sst__span_end(s);
    sst__otlp_export(t->exp, s);
}

static bool hook_traceparent(void *ud, void *span, char *buf, size_t n) {
    (void)ud;
    sst__trace_ctx ctx;
    if (n < SST__TRACEPARENT_LEN + 1 || !parent_ctx(span, &ctx) || !sst__trace_ctx_valid(&ctx)) {
        return false;
    }
    sst__traceparent_format(&ctx, buf);
    return true;
}

static void *hook_parent_from(void *ud, const char *traceparent) {
    return sst_otlp_tracer_parent(ud, traceparent);
}

static void hook_parent_free(void *ud, void *parent) {
    (void)ud;
    sst_otlp_tracer_parent_free(parent);
}

sst_otlp_tracer *sst_otlp_tracer_new(const sst_otlp_tracer_opts *o, sst_error *err) {
    SST__ERR_LOCAL(err);
    sst_otlp_tracer_opts def;
    if (o == NULL) {
        sst_otlp_tracer_opts_init(&def);
        o = &def;
    }
    sst__otlp_opts eo;
    sst__otlp_opts_init(&eo);
    sst_error env_err = {0}; /* a bad variable is left out and reported, as OTel asks */
    if (sst__otlp_opts_from_env(&eo, &env_err) != SST_OK) {
        fprintf(stderr, "superstep: tracing: %s\n", env_err.msg);
    }
    const char *disabled = getenv("OTEL_SDK_DISABLED");
    const char *exporter = getenv("OTEL_TRACES_EXPORTER");
    if ((disabled != NULL && strcmp(disabled, "true") == 0) ||
        (exporter != NULL && strcmp(exporter, "none") == 0)) {
        sst__otlp_opts_free(&eo);
        sst__error(err, SST_ENOTFOUND,
                   "tracing: turned off by OTEL_SDK_DISABLED or "
                   "OTEL_TRACES_EXPORTER=none");
        return NULL;
    }
    if (o->endpoint != NULL) {
        eo.endpoint = o->endpoint;
    }
    if (o->service_name != NULL) {
        eo.service_name = o->service_name;
    }
    if (eo.endpoint == NULL || eo.endpoint[0] == '\0') {
        sst__otlp_opts_free(&eo);
        sst__error(err, SST_ENOTFOUND,
                   "tracing: no endpoint (give one, or set OTEL_EXPORTER_OTLP_ENDPOINT)");
        return NULL;
    }
    sst_otlp_tracer *t = sst__calloc(1, sizeof *t);
    if (t == NULL) {
        sst__otlp_opts_free(&eo);
        sst__enomem(err);
        return NULL;
    }
    t->exp = sst__otlp_exporter_new(&eo, err);
    sst__otlp_opts_free(&eo);
    if (t->exp == NULL) {
        sst__free(t);
        return NULL;
    }
    t->hooks.start = hook_start;
    t->hooks.end = hook_end;
    t->hooks.traceparent = hook_traceparent;
    t->hooks.user_data = t;
    t->hooks.capture_content = o->capture_content;
    t->hooks.parent_from = hook_parent_from;
    t->hooks.parent_free = hook_parent_free;
    return t;
}

const sst_tracer *sst_otlp_tracer_hooks(sst_otlp_tracer *t) {
    return t != NULL ? &t->hooks : NULL;
}

void *sst_otlp_tracer_parent(sst_otlp_tracer *t, const char *traceparent) {
    (void)t;
    sst__span *p = sst__calloc(1, sizeof *p); /* never exported: only its context is read */
    sst_error err = {0};
    if (p == NULL || traceparent == NULL ||
        sst__traceparent_parse(traceparent, &p->ctx, &err) != SST_OK) {
        sst__free(p);
        return NULL;
    }
    return p;
}

void sst_otlp_tracer_parent_free(void *parent) {
    sst__span_free(parent);
}

sst_code sst_otlp_tracer_flush(sst_otlp_tracer *t, uint32_t timeout_ms, sst_error *err) {
    return sst__otlp_flush(t->exp, timeout_ms, err);
}

uint64_t sst_otlp_tracer_dropped(sst_otlp_tracer *t) {
    return sst__otlp_dropped(t->exp);
}

uint64_t sst_otlp_tracer_shutdown(sst_otlp_tracer *t, uint32_t timeout_ms) {
    sst__otlp_shutdown(t->exp, timeout_ms);
    return sst__otlp_dropped(t->exp);
}

void sst_otlp_tracer_free(sst_otlp_tracer *t) {
    if (t == NULL) {
        return;
    }
    sst__otlp_exporter_free(t->exp);
    sst__free(t);
}
