/* SPDX-License-Identifier: MIT */
/*
 * Tracing: the span model the engine and the agent record (a span per run,
 * superstep, task, LLM call and tool call), W3C Trace Context ids and the
 * traceparent header, the OTLP/HTTP JSON encoding of spans (otlp.c), and a
 * batching exporter that POSTs them to an OpenTelemetry collector from one
 * background thread (otlp_exporter.c). docs/tracing.md describes the whole.
 *
 * Specifications followed: W3C Trace Context (traceparent), the OTLP
 * specification's "JSON Protobuf Encoding" (ids as lowercase hex, enums as
 * integers, 64-bit integers as decimal strings) and its OTLP/HTTP failure
 * rules, and the SDK environment variables of OpenTelemetry.
 */
#ifndef SUPERSTEP_AGENT_OTLP_H
#define SUPERSTEP_AGENT_OTLP_H

#include "common.h"
#include "superstep/value.h"

/* ---- ids and W3C Trace Context ----------------------------------------- */

#define SST__TRACE_ID_LEN    16 /* bytes */
#define SST__SPAN_ID_LEN     8  /* bytes */
#define SST__TRACEPARENT_LEN 55 /* characters of a version-00 traceparent */
#define SST__TRACE_SAMPLED   0x01u

/*
 * Where a span sits in a trace, as a child (or a remote service, through the
 * traceparent header) needs it. Valid when neither id is all zeros.
 */
typedef struct sst__trace_ctx {
    uint8_t trace_id[SST__TRACE_ID_LEN];
    uint8_t span_id[SST__SPAN_ID_LEN];
    uint8_t flags; /* W3C trace-flags; bit 0 (SST__TRACE_SAMPLED): sampled */
} sst__trace_ctx;

/*
 * New random ids from the system's random source (getrandom), never all
 * zeros. Either pointer may be NULL when that id is not wanted.
 * @return SST_OK; SST_EIO when the system has no random bytes to give.
 */
sst_code sst__trace_ids_new(uint8_t trace_id[SST__TRACE_ID_LEN], uint8_t span_id[SST__SPAN_ID_LEN],
                            sst_error *err);
/* True when @p ctx is not NULL and neither of its ids is all zeros. */
bool sst__trace_ctx_valid(const sst__trace_ctx *ctx);
/* The @p n bytes at @p bytes as 2n lowercase hex digits plus NUL in @p out. */
void sst__hex_lower(const uint8_t *bytes, size_t n, char *out);

/*
 * The traceparent header value of @p ctx: "00-<trace-id>-<span-id>-<flags>",
 * 55 lowercase characters plus NUL. @p ctx must be valid.
 */
void sst__traceparent_format(const sst__trace_ctx *ctx, char out[SST__TRACEPARENT_LEN + 1]);
/*
 * Reads a traceparent header value (W3C Trace Context, level 1): spaces and
 * tabs around it are allowed (HTTP's optional whitespace). Version 00 must be
 * exactly 55 characters; a later version at least 55, with a '-' after the
 * flags when longer (its extra fields are ignored, as the specification
 * asks). Every field is lowercase hex; version ff and all-zero ids are
 * invalid. @p out is written only on success.
 * @return SST_OK; SST_EPARSE naming the field at fault; SST_EINVAL (NULL).
 */
sst_code sst__traceparent_parse(const char *text, sst__trace_ctx *out, sst_error *err);

/* ---- spans ------------------------------------------------------------- */

/* Values are OTLP's SpanKind numbers. */
typedef enum sst__span_kind {
    SST__SPAN_INTERNAL = 1, /* work inside superstep: a run, a superstep, a task */
    SST__SPAN_SERVER = 2,   /* a request superstep serves */
    SST__SPAN_CLIENT = 3    /* a call superstep makes: an LLM, a tool over HTTP */
} sst__span_kind;

/* Values are OTLP's Status.StatusCode numbers. */
typedef enum sst__span_status {
    SST__STATUS_UNSET = 0,
    SST__STATUS_OK = 1,
    SST__STATUS_ERROR = 2
} sst__span_status;

/* OpenTelemetry's default span limits: more are dropped and counted. */
#define SST__SPAN_MAX_ATTRIBUTES 128
#define SST__SPAN_MAX_EVENTS     128

typedef struct sst__span_event {
    char *name;            /* owned, sst__malloc */
    uint64_t time_unix_ns; /* CLOCK_REALTIME */
    sst_value *attributes; /* owned reference: an object, or NULL */
} sst__span_event;

/*
 * One span. Made by sst__span_start and owned by one thread at a time until
 * it is handed to sst__otlp_export (or freed). The fields may be read, and
 * the times set, directly: a hook that learns a task's times only after it
 * ran sets start_unix_ns and end_unix_ns itself.
 */
typedef struct sst__span {
    sst__trace_ctx ctx;                       /* this span's trace id, span id, flags */
    uint8_t parent_span_id[SST__SPAN_ID_LEN]; /* all zeros: a root span */
    char *name;                               /* owned, sst__malloc */
    sst__span_kind kind;
    uint64_t start_unix_ns;      /* CLOCK_REALTIME nanoseconds */
    uint64_t end_unix_ns;        /* 0 until sst__span_end */
    sst_value *attributes;       /* owned reference to an object (the empty object at first) */
    uint32_t dropped_attributes; /* past SST__SPAN_MAX_ATTRIBUTES */
    sst__span_status status;
    char *status_message;    /* owned, sst__malloc, or NULL; sent only with SST__STATUS_ERROR */
    sst__span_event *events; /* owned, sst__malloc: n_events of cap_events */
    size_t n_events, cap_events;
    uint32_t dropped_events; /* past SST__SPAN_MAX_EVENTS */
    uint64_t queued_ms;      /* exporter's: when it was queued (monotonic ms) */
} sst__span;

/* Wall-clock nanoseconds since the epoch (CLOCK_REALTIME), as spans record time. */
uint64_t sst__otlp_now_ns(void);

/*
 * Starts a span named @p name (copied) now. With a valid @p parent (a local
 * span's sst__span_context, or a parsed traceparent) it joins the parent's
 * trace as its child and keeps its flags; otherwise it starts a new trace,
 * sampled.
 * @return new span (sst__span_free, or hand it to sst__otlp_export); NULL
 *         with SST_ENOMEM, SST_EIO (no random bytes) or SST_EINVAL (NULL name).
 */
sst__span *sst__span_start(const char *name, sst__span_kind kind, const sst__trace_ctx *parent,
                           sst_error *err);
/* What a child of @p s, or a traceparent header sent on its behalf, needs. */
void sst__span_context(const sst__span *s, sst__trace_ctx *out);
/* Frees @p s and everything it owns. NULL is a no-op. */
void sst__span_free(sst__span *s);

/*
 * Sets attribute @p key (UTF-8) to @p v: a string, integer, double, boolean,
 * array or object (OTLP AnyValue); a null removes the key. A new key past
 * SST__SPAN_MAX_ATTRIBUTES is dropped and counted (SST_OK all the same).
 * Tracing failures need not stop the caller: the span stays valid as it was.
 * @param v takes, even on failure
 * @return SST_OK; SST_ENOMEM, SST_EUTF8 (key), SST_EINVAL (NULL s, key or v).
 */
sst_code sst__span_set_take(sst__span *s, const char *key, sst_value *v, sst_error *err);
/*
 * Sets every member of @p attrs (borrowed object) as sst__span_set_take does; a span with
 * no attributes yet shares @p attrs instead of copying it.
 */
sst_code sst__span_set_attributes(sst__span *s, const sst_value *attrs, sst_error *err);
/* sst__span_set_take with a string (copied; NULL sets nothing), integer, double or boolean. */
sst_code sst__span_set_str(sst__span *s, const char *key, const char *v, sst_error *err);
sst_code sst__span_set_int(sst__span *s, const char *key, int64_t v, sst_error *err);
sst_code sst__span_set_double(sst__span *s, const char *key, double v, sst_error *err);
sst_code sst__span_set_bool(sst__span *s, const char *key, bool v, sst_error *err);

/*
 * Adds event @p name (copied) timed now, with @p attributes (an object, or
 * NULL). Past SST__SPAN_MAX_EVENTS it is dropped and counted (SST_OK).
 * @param attributes takes, even on failure
 * @return SST_OK; SST_ENOMEM; SST_EINVAL (NULL s or name, attributes not an object).
 */
sst_code sst__span_add_event_take(sst__span *s, const char *name, sst_value *attributes,
                                  sst_error *err);
/*
 * Records a failure the OpenTelemetry way: an "exception" event with
 * exception.type (@p type, e.g. "SST_ETIMEOUT"; may be NULL) and
 * exception.message (@p message), and the status set to error with
 * @p message. The status is set even when the event cannot be added.
 * @return SST_OK; SST_ENOMEM; SST_EINVAL (NULL s or message).
 */
sst_code sst__span_record_error(sst__span *s, const char *type, const char *message,
                                sst_error *err);
/*
 * Sets the status; @p message (copied; may be NULL) goes with
 * SST__STATUS_ERROR only, as OTLP asks.
 * @return SST_OK; SST_ENOMEM (the status is set, without the message).
 */
sst_code sst__span_set_status(sst__span *s, sst__span_status status, const char *message,
                              sst_error *err);
/* Ends @p s now; a span already ended keeps its end time. */
void sst__span_end(sst__span *s);

/* ---- OTLP JSON --------------------------------------------------------- */

/*
 * Appends the OTLP JSON of @p s (a Span message) to @p b; b->oom tells about
 * memory. Names and messages that are not UTF-8 have U+FFFD in place of
 * each bad byte (a collector would refuse the whole request). An unended
 * span is written with its end time equal to its start time.
 */
void sst__otlp_encode_span(sst__buf *b, const sst__span *s);
/*
 * Appends the start of an ExportTraceServiceRequest up to the opening of
 * the spans array: the resource (service.name = @p service_name, then
 * telemetry.sdk.name "superstep", telemetry.sdk.language "c",
 * telemetry.sdk.version, then the members of @p resource, an object or NULL,
 * except those keys) and the instrumentation scope ("superstep", version).
 * SST__OTLP_REQUEST_END closes it.
 */
void sst__otlp_encode_request_start(sst__buf *b, const char *service_name,
                                    const sst_value *resource);
#define SST__OTLP_REQUEST_END "]}]}]}"
/*
 * A whole ExportTraceServiceRequest with the @p n spans (borrowed), as the
 * exporter sends it.
 * @param len OUT (may be NULL): its length
 * @return new NUL-terminated text (sst__free); NULL with SST_ENOMEM.
 */
char *sst__otlp_encode_request(const char *service_name, const sst_value *resource,
                               sst__span *const *spans, size_t n, size_t *len, sst_error *err);

/* ---- the exporter ------------------------------------------------------ */

/*
 * How an exporter sends. sst__otlp_opts_init fills the defaults (the batch
 * span processor's and the OTLP exporter's of the OpenTelemetry
 * specification); sst__otlp_opts_from_env reads the standard variables.
 */
typedef struct sst__otlp_opts {
    const char *endpoint;       /* the full traces URL (http:// or https://); borrowed */
    const char *service_name;   /* resource service.name; NULL: "superstep"; borrowed */
    const sst_value *resource;  /* more resource attributes (an object), or NULL; borrowed */
    const char *headers;        /* "k=v,k2=v2", values percent-decoded, or NULL; borrowed */
    size_t max_queue;           /* spans held while waiting; default 2048 */
    size_t max_batch;           /* spans per request, at most max_queue; default 512 */
    uint32_t schedule_delay_ms; /* longest a span waits for its batch to fill; default 5000 */
    uint32_t timeout_ms;        /* one request; 0: no limit; default 10000 */
    uint32_t export_timeout_ms; /* one batch, its retries included; 0: no limit; default 30000 */
    uint32_t shutdown_ms;       /* longest sst__otlp_exporter_free waits to send; default 10000 */
    unsigned max_attempts;      /* requests per batch, retries included; default 5 */
    uint32_t retry_base_ms;     /* first backoff (+-20% jitter), then x2; default 1000 */
    uint32_t retry_max_ms;      /* longest backoff; default 5000 (Retry-After may ask more) */
    /* What sst__otlp_opts_from_env allocated (sst__otlp_opts_free); private. */
    char *env_endpoint_, *env_service_, *env_headers_;
    sst_value *env_resource_;
} sst__otlp_opts;

void sst__otlp_opts_init(sst__otlp_opts *o);
/*
 * sst__otlp_opts_init, then the OpenTelemetry environment variables (an
 * empty variable counts as unset):
 *  - OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, used as is; else
 *    OTEL_EXPORTER_OTLP_ENDPOINT with "/v1/traces" appended; else none:
 *    o->endpoint stays NULL (no tracing asked for). OTEL_SDK_DISABLED=true
 *    or OTEL_TRACES_EXPORTER=none leave it NULL too.
 *  - OTEL_SERVICE_NAME, else service.name of OTEL_RESOURCE_ATTRIBUTES, else
 *    "superstep"; OTEL_RESOURCE_ATTRIBUTES ("k=v,...") as more attributes.
 *  - OTEL_EXPORTER_OTLP_TRACES_HEADERS, else OTEL_EXPORTER_OTLP_HEADERS.
 *  - OTEL_EXPORTER_OTLP_TRACES_TIMEOUT, else OTEL_EXPORTER_OTLP_TIMEOUT (ms).
 *  - OTEL_BSP_SCHEDULE_DELAY, OTEL_BSP_EXPORT_TIMEOUT,
 *    OTEL_BSP_MAX_QUEUE_SIZE, OTEL_BSP_MAX_EXPORT_BATCH_SIZE.
 *  - OTEL_EXPORTER_OTLP_(TRACES_)PROTOCOL other than http/json is reported:
 *    superstep sends http/json only.
 * A value that cannot be used is ignored (its default stays), as the
 * specification asks, and reported: the result is SST_EINVAL with every such
 * variable named in @p err, and @p o is complete and usable all the same.
 * Call sst__otlp_opts_free afterwards, in both cases.
 * @return SST_OK; SST_EINVAL (see above); SST_ENOMEM (@p o has the defaults).
 */
sst_code sst__otlp_opts_from_env(sst__otlp_opts *o, sst_error *err);
/* Frees what sst__otlp_opts_from_env allocated; @p o is left at the defaults. */
void sst__otlp_opts_free(sst__otlp_opts *o);

/*
 * Reads the "k=v,k2=v2" lists of OTEL_EXPORTER_OTLP_HEADERS and
 * OTEL_RESOURCE_ATTRIBUTES (W3C Baggage without properties): entries split
 * at ',', key and value split at the first '=', spaces and tabs around each
 * trimmed, values percent-decoded; empty entries are skipped. @p what names
 * the list in errors ("OTEL_EXPORTER_OTLP_HEADERS").
 * @return new object of strings in order; NULL with SST_EINVAL (an entry
 *         without '=' or with an empty key, a bad %-escape, a value that
 *         decodes to a control character or to text that is not UTF-8),
 *         SST_ENOMEM.
 */
sst_value *sst__otlp_parse_kv(const char *text, const char *what, sst_error *err);

/*
 * An exporter: a bounded queue of spans and one thread that sends them in
 * batches (when max_batch are queued, when the oldest has waited
 * schedule_delay_ms, or on a flush). Failed requests (no connection, a
 * timeout, HTTP 429, 502, 503, 504) are retried with backoff up to
 * max_attempts within export_timeout_ms, honouring Retry-After; other
 * statuses are not retried (OTLP/HTTP says so). A batch that still fails is
 * dropped and counted.
 * Thread-safety: sst__otlp_export, sst__otlp_flush and sst__otlp_stats may
 * be called from any number of threads; sst__otlp_shutdown and
 * sst__otlp_exporter_free from one, once the others are done.
 */
typedef struct sst__otlp_exporter sst__otlp_exporter;

/*
 * Starts an exporter (and its thread). Nothing is sent until a span is.
 * @return new; NULL with SST_EINVAL (no endpoint or not http(s), bad
 *         headers, max_batch 0 or above max_queue, max_queue 0 or above
 *         2^24), SST_ENOMEM, SST_EIO (no thread or curl handle).
 */
sst__otlp_exporter *sst__otlp_exporter_new(const sst__otlp_opts *o, sst_error *err);

/*
 * Queues @p s for sending, ending it first if it was not ended. Never waits
 * on the network: when the queue is full, or the exporter shut down, the
 * span is dropped and counted. With a NULL @p exp the span is just freed,
 * so hooks may call it whether or not tracing is on.
 * @param s takes (NULL is a no-op)
 */
void sst__otlp_export(sst__otlp_exporter *exp, sst__span *s);

/*
 * Waits until every span queued before the call has been sent (or given
 * up), at most @p timeout_ms.
 * @return SST_OK; SST_ETIMEOUT (still sending); the error of the last
 *         failed request (SST_EUNAVAILABLE, SST_ETIMEOUT, SST_EINVAL for a
 *         status that is not retried) when some of those spans were dropped.
 */
sst_code sst__otlp_flush(sst__otlp_exporter *exp, uint32_t timeout_ms, sst_error *err);

/*
 * Sends what is queued within @p timeout_ms (an in-flight request is cut
 * off then), stops the thread and drops what is left (counted). Later
 * exports are dropped. The counters stay readable until the free. A second
 * call does nothing.
 */
void sst__otlp_shutdown(sst__otlp_exporter *exp, uint32_t timeout_ms);
/* sst__otlp_shutdown with opts.shutdown_ms (unless done already), then frees. NULL is a no-op. */
void sst__otlp_exporter_free(sst__otlp_exporter *exp);
/*
 * True while exports are being dropped (the queue was full at the last export, or the
 * exporter shut down): a hook may then skip building a span and call
 * sst__otlp_drop_unbuilt instead, so a collector that is down costs (nearly) nothing.
 * A hint read without a lock; false for a NULL @p exp.
 */
bool sst__otlp_saturated(sst__otlp_exporter *exp);
/* Counts a span a hook did not build (in dropped and dropped_queue_full). */
void sst__otlp_drop_unbuilt(sst__otlp_exporter *exp);

typedef struct sst__otlp_stats {
    uint64_t queued_total; /* spans accepted into the queue */
    uint64_t exported;     /* spans the collector accepted */
    uint64_t dropped;      /* spans not delivered: the four below */
    uint64_t dropped_queue_full;
    uint64_t dropped_failed;   /* in batches whose requests failed for good */
    uint64_t dropped_shutdown; /* still queued, or exported, after the shutdown */
    uint64_t rejected;         /* the collector's partial success: rejectedSpans */
    uint64_t requests;         /* POSTs made, retries included */
    uint64_t retries;
    size_t queued;                      /* in the queue now */
    size_t max_queued;                  /* the most ever in the queue at once */
    char last_error[SST_ERROR_MSG_MAX]; /* the last failed request's error, or "" */
} sst__otlp_stats;

/* A snapshot of the counters. */
void sst__otlp_stats_get(sst__otlp_exporter *exp, sst__otlp_stats *out);
/* Spans dropped so far (stats.dropped). */
uint64_t sst__otlp_dropped(sst__otlp_exporter *exp);

#endif
