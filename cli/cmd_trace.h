/* SPDX-License-Identifier: MIT */
/*
 * Tracing for the commands that run graphs (run, agent): OpenTelemetry spans
 * to the collector --otlp-endpoint names, or the standard OTEL_* variables.
 */
#ifndef SUPERSTEP_CLI_CMD_TRACE_H
#define SUPERSTEP_CLI_CMD_TRACE_H

#include <stdbool.h>

#include "superstep/agent.h"

/*
 * The tracer for a run: from @p endpoint (--otlp-endpoint, may be NULL), else when
 * OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT is set; NULL without either (no tracing) and on
 * failure, which is printed and sets *failed.
 */
sst_otlp_tracer *sst_cli_tracer(const char *endpoint, bool capture_content, bool *failed);
/* Sends the run's spans (waiting at most two seconds) and frees @p t; NULL: nothing. */
void sst_cli_tracer_done(sst_otlp_tracer *t);

#endif
