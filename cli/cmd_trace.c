/* SPDX-License-Identifier: MIT */
/* Tracing for run and agent; see cmd_trace.h. */
#include "cmd_trace.h"

#include <stdio.h>
#include <stdlib.h>

static bool env_set(const char *name) {
    const char *v = getenv(name);
    return v != NULL && v[0] != '\0';
}

sst_otlp_tracer *sst_cli_tracer(const char *endpoint, bool capture_content, bool *failed) {
    *failed = false;
    if (endpoint == NULL && !env_set("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") &&
        !env_set("OTEL_EXPORTER_OTLP_ENDPOINT")) {
        return NULL;
    }
    sst_otlp_tracer_opts o;
    sst_otlp_tracer_opts_init(&o);
    o.endpoint = endpoint;
    o.capture_content = capture_content;
    sst_error err = {0};
    sst_otlp_tracer *t = sst_otlp_tracer_new(&o, &err);
    if (t == NULL && err.code != SST_ENOTFOUND) { /* OTEL_SDK_DISABLED: no tracing, no error */
        fprintf(stderr, "superstep: tracing: %s\n", err.msg);
        *failed = true;
    }
    return t;
}

void sst_cli_tracer_done(sst_otlp_tracer *t) {
    if (t == NULL) {
        return;
    }
    /* At most two seconds more: a collector that is down never holds the command up. */
    uint64_t dropped = sst_otlp_tracer_shutdown(t, 2000);
    if (dropped > 0) {
        fprintf(stderr, "superstep: tracing: %llu spans dropped (is the collector up?)\n",
                (unsigned long long)dropped);
    }
    sst_otlp_tracer_free(t);
}
