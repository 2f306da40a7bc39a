/* SPDX-License-Identifier: MIT */
/*
 * Tracing's span model, W3C Trace Context ids and traceparent, and the OTLP
 * JSON encoding of spans; see otlp.h (the exporter is otlp_exporter.c).
 */
#include "otlp.h"

#include <time.h>

#include "common/hex.h"
#include "common/utf8.h"
#include "superstep/json.h"
#include "superstep/version.h"
#include "values/build.h"
#include "values/values_num.h"

/* ---- ids and traceparent ---------------------------------------------- */

static bool all_zero(const uint8_t *p, size_t n) {
    for (size_t i = 0; i < n; i++) {
        if (p[i] != 0) {
            return false;
        }
    }
    return true;
}

/* Random bytes that are not all zeros (an all-zero id is invalid). */
static sst_code random_id(uint8_t *out, size_t n, sst_error *err) {
    do {
        sst_code rc = sst__random_bytes(out, n, err);
        if (rc != SST_OK) {
            return rc;
        }
    } while (all_zero(out, n));
    return SST_OK;
}

sst_code sst__trace_ids_new(uint8_t trace_id[SST__TRACE_ID_LEN], uint8_t span_id[SST__SPAN_ID_LEN],
                            sst_error *err) {
    if (trace_id != NULL) {
        sst_code rc = random_id(trace_id, SST__TRACE_ID_LEN, err);
        if (rc != SST_OK) {
            return rc;
        }
    }
    return span_id != NULL ? random_id(span_id, SST__SPAN_ID_LEN, err) : SST_OK;
}

bool sst__trace_ctx_valid(const sst__trace_ctx *ctx) {
    return ctx != NULL && !all_zero(ctx->trace_id, sizeof ctx->trace_id) &&
           !all_zero(ctx->span_id, sizeof ctx->span_id);
}

static const char HEX[] = "0123456789abcdef";

void sst__hex_lower(const uint8_t *bytes, size_t n, char *out) {
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = HEX[bytes[i] >> 4];
        out[2 * i + 1] = HEX[bytes[i] & 15];
    }
    out[2 * n] = '\0';
}

void sst__traceparent_format(const sst__trace_ctx *ctx, char out[SST__TRACEPARENT_LEN + 1]) {
    memcpy(out, "00-", 3);
    sst__hex_lower(ctx->trace_id, SST__TRACE_ID_LEN, out + 3);
    out[35] = '-';
    sst__hex_lower(ctx->span_id, SST__SPAN_ID_LEN, out + 36);
    out[52] = '-';
    sst__hex_lower(&ctx->flags, 1, out + 53);
}

/*
 * Decodes the @p n bytes of field @p what at @p at (offset @p off in the
 * header); SST_EPARSE naming the first character that is not lowercase hex.
 */
static sst_code unhex_field(const char *at, size_t off, size_t n, const char *what, uint8_t *out,
                            sst_error *err) {
    for (size_t i = 0; i < 2 * n; i++) {
        int v = at[i] >= 'A' && at[i] <= 'F' ? -1 : sst__hex_digit(at[i]); /* lowercase only */
        if (v < 0) {
            return sst__error(err, SST_EPARSE,
                              "traceparent: %s has '%c' at offset %zu, not a lowercase hex digit",
                              what, (unsigned char)at[i] >= 0x20 && at[i] != 0x7f ? at[i] : '?',
                              off + i);
        }
        if (i % 2 == 0) {
            out[i / 2] = (uint8_t)(v << 4);
        } else {
            out[i / 2] = (uint8_t)(out[i / 2] | v);
        }
    }
    return SST_OK;
}

sst_code sst__traceparent_parse(const char *text, sst__trace_ctx *out, sst_error *err) {
    if (text == NULL || out == NULL) {
        return sst__error(err, SST_EINVAL, "traceparent: no header value");
    }
    while (*text == ' ' || *text == '\t') {
        text++;
    }
    size_t len = strlen(text);
    while (len > 0 && (text[len - 1] == ' ' || text[len - 1] == '\t')) {
        len--;
    }
    if (len < 2) {
        return sst__error(err, SST_EPARSE, "traceparent: %zu characters, expected 55", len);
    }
    uint8_t version;
    sst_code rc = unhex_field(text, 0, 1, "the version", &version, err);
    if (rc != SST_OK) {
        return rc;
    }
    if (version == 0xff) {
        return sst__error(err, SST_EPARSE, "traceparent: version ff is invalid");
    }
    /* Version 00 is exactly 55 characters; a later one may add fields after a '-'. */
    if (version == 0 ? len != SST__TRACEPARENT_LEN : len < SST__TRACEPARENT_LEN) {
        return sst__error(err, SST_EPARSE,
                          "traceparent: %zu characters, expected %s55 for version %02x", len,
                          version == 0 ? "" : "at least ", version);
    }
    static const size_t dashes[] = {2, 35, 52};
    for (size_t i = 0; i < SST_ARRAY_LEN(dashes); i++) {
        if (text[dashes[i]] != '-') {
            return sst__error(err, SST_EPARSE, "traceparent: expected '-' at offset %zu",
                              dashes[i]);
        }
    }
    if (len > SST__TRACEPARENT_LEN && text[SST__TRACEPARENT_LEN] != '-') {
        return sst__error(err, SST_EPARSE,
                          "traceparent: expected '-' after the flags (offset 55) of version %02x",
                          version);
    }
    sst__trace_ctx c;
    if ((rc = unhex_field(text + 3, 3, SST__TRACE_ID_LEN, "the trace-id", c.trace_id, err)) !=
            SST_OK ||
        (rc = unhex_field(text + 36, 36, SST__SPAN_ID_LEN, "the parent-id", c.span_id, err)) !=
            SST_OK ||
        (rc = unhex_field(text + 53, 53, 1, "the trace-flags", &c.flags, err)) != SST_OK) {
        return rc;
    }
    if (all_zero(c.trace_id, sizeof c.trace_id)) {
        return sst__error(err, SST_EPARSE, "traceparent: the trace-id is all zeros");
    }
    if (all_zero(c.span_id, sizeof c.span_id)) {
        return sst__error(err, SST_EPARSE, "traceparent: the parent-id is all zeros");
    }
    *out = c;
    return SST_OK;
}

/* ---- spans ------------------------------------------------------------ */

uint64_t sst__otlp_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

sst__span *sst__span_start(const char *name, sst__span_kind kind, const sst__trace_ctx *parent,
                           sst_error *err) {
    if (name == NULL) {
        sst__error(err, SST_EINVAL, "span: no name");
        return NULL;
    }
    sst__span *s = sst__calloc(1, sizeof *s);
    if (s == NULL) {
        sst__enomem(err);
        return NULL;
    }
    s->kind = kind;
    s->attributes = sst_object_empty();
    s->name = sst__strndup(name, strlen(name));
    if (s->name == NULL) {
        sst__enomem(err);
        sst__span_free(s);
        return NULL;
    }
    bool child = sst__trace_ctx_valid(parent);
    if (child) {
        memcpy(s->ctx.trace_id, parent->trace_id, sizeof s->ctx.trace_id);
        memcpy(s->parent_span_id, parent->span_id, sizeof s->parent_span_id);
        s->ctx.flags = parent->flags;
    } else {
        s->ctx.flags = SST__TRACE_SAMPLED;
    }
    if (sst__trace_ids_new(child ? NULL : s->ctx.trace_id, s->ctx.span_id, err) != SST_OK) {
        sst__span_free(s);
        return NULL;
    }
    s->start_unix_ns = sst__otlp_now_ns();
    return s;
}

void sst__span_context(const sst__span *s, sst__trace_ctx *out) {
    *out = s->ctx;
}

void sst__span_free(sst__span *s) {
    if (s == NULL) {
        return;
    }
    for (size_t i = 0; i < s->n_events; i++) {
        sst__free(s->events[i].name);
        sst_value_unref(s->events[i].attributes);
    }
    sst__free(s->events);
    sst_value_unref(s->attributes);
    sst__free(s->status_message);
    sst__free(s->name);
    sst__free(s);
}

sst_code sst__span_set_attributes(sst__span *s, const sst_value *attrs, sst_error *err) {
    if (s == NULL || !sst_is_object(attrs)) {
        return sst__error(err, SST_EINVAL, "span attributes: expected an object");
    }
    /* A span with none yet shares the object (values are immutable): no copy. */
    if (sst_object_len(s->attributes) == 0 && sst_object_len(attrs) <= SST__SPAN_MAX_ATTRIBUTES) {
        sst_value_unref(s->attributes);
        s->attributes = sst_value_ref(attrs);
        return SST_OK;
    }
    sst_code rc = SST_OK;
    for (size_t i = 0; rc == SST_OK && i < sst_object_len(attrs); i++) {
        rc = sst__span_set_take(s, sst_string_cstr(sst_object_key_at(attrs, i)),
                                sst_value_ref(sst_object_value_at(attrs, i)), err);
    }
    return rc;
}

sst_code sst__span_set_take(sst__span *s, const char *key, sst_value *v, sst_error *err) {
    if (s == NULL || key == NULL || v == NULL) {
        sst_value_unref(v);
        return sst__error(err, SST_EINVAL, "span attribute: no %s",
                          s == NULL     ? "span"
                          : key == NULL ? "key"
                                        : "value");
    }
    if (sst_is_null(v)) {
        sst_value_unref(v);
        sst_value *o = sst_object_remove_take(sst_value_ref(s->attributes), key, err);
        if (o == NULL) {
            return sst__code(err);
        }
        sst_value_unref(s->attributes);
        s->attributes = o;
        return SST_OK;
    }
    if (sst_object_get(s->attributes, key) == NULL &&
        sst_object_len(s->attributes) >= SST__SPAN_MAX_ATTRIBUTES) {
        sst_value_unref(v);
        s->dropped_attributes++;
        return SST_OK;
    }
    /*
     * The span keeps its reference until the update succeeded, so a failure
     * leaves the attributes as they were (the extra reference makes the
     * update copy, which a span's few attributes make cheap).
     */
    sst_value *o = sst_object_set_take(sst_value_ref(s->attributes), key, v, err);
    if (o == NULL) {
        return sst__code(err);
    }
    sst_value_unref(s->attributes);
    s->attributes = o;
    return SST_OK;
}

sst_code sst__span_set_str(sst__span *s, const char *key, const char *v, sst_error *err) {
    if (v == NULL) {
        return SST_OK;
    }
    SST__ERR_LOCAL(err);
    sst_value *sv = sst_string_new(v, err);
    return sv != NULL ? sst__span_set_take(s, key, sv, err) : sst__code(err);
}

sst_code sst__span_set_int(sst__span *s, const char *key, int64_t v, sst_error *err) {
    SST__ERR_LOCAL(err);
    sst_value *iv = sst_int_new(v, err);
    return iv != NULL ? sst__span_set_take(s, key, iv, err) : sst__code(err);
}

sst_code sst__span_set_double(sst__span *s, const char *key, double v, sst_error *err) {
    SST__ERR_LOCAL(err);
    sst_value *dv = sst_double_new(v, err);
    return dv != NULL ? sst__span_set_take(s, key, dv, err) : sst__code(err);
}

sst_code sst__span_set_bool(sst__span *s, const char *key, bool v, sst_error *err) {
    return sst__span_set_take(s, key, sst_bool(v), err);
}

sst_code sst__span_add_event_take(sst__span *s, const char *name, sst_value *attributes,
                                  sst_error *err) {
    if (s == NULL || name == NULL || (attributes != NULL && !sst_is_object(attributes))) {
        sst_value_unref(attributes);
        return sst__error(err, SST_EINVAL, "span event: %s",
                          s == NULL      ? "no span"
                          : name == NULL ? "no name"
                                         : "attributes must be an object");
    }
    if (s->n_events >= SST__SPAN_MAX_EVENTS) {
        sst_value_unref(attributes);
        s->dropped_events++;
        return SST_OK;
    }
    char *copy = sst__strndup(name, strlen(name));
    if (copy == NULL ||
        (s->n_events == s->cap_events &&
         !sst__grow((void **)&s->events, &s->cap_events, s->n_events, sizeof *s->events, 2))) {
        sst__free(copy);
        sst_value_unref(attributes);
        return sst__enomem(err);
    }
    s->events[s->n_events++] = (sst__span_event){
        .name = copy, .time_unix_ns = sst__otlp_now_ns(), .attributes = attributes};
    return SST_OK;
}

sst_code sst__span_set_status(sst__span *s, sst__span_status status, const char *message,
                              sst_error *err) {
    s->status = status;
    sst__free(s->status_message);
    s->status_message = NULL;
    if (message == NULL || status != SST__STATUS_ERROR) {
        return SST_OK;
    }
    s->status_message = sst__strndup(message, strlen(message));
    return s->status_message != NULL ? SST_OK : sst__enomem(err);
}

sst_code sst__span_record_error(sst__span *s, const char *type, const char *message,
                                sst_error *err) {
    if (s == NULL || message == NULL) {
        return sst__error(err, SST_EINVAL, "span error: no %s", s == NULL ? "span" : "message");
    }
    SST__ERR_LOCAL(err);
    sst_code st = sst__span_set_status(s, SST__STATUS_ERROR, message, err);
    sst_value *attrs = sst_object_empty();
    if (type != NULL) {
        attrs = sst__set_take(attrs, "exception.type", sst_string_new(type, err), err);
    }
    attrs = sst__set_take(attrs, "exception.message", sst_string_new(message, err), err);
    if (attrs == NULL) {
        return sst__code(err);
    }
    sst_code ev = sst__span_add_event_take(s, "exception", attrs, err);
    return st != SST_OK ? st : ev;
}

void sst__span_end(sst__span *s) {
    if (s != NULL && s->end_unix_ns == 0) {
        s->end_unix_ns = sst__otlp_now_ns();
    }
}

/* ---- OTLP JSON -------------------------------------------------------- */

/* Deeper values are sent as their JSON text (a stringValue). */
#define MAX_ANY_DEPTH 16

/* A JSON string of @p len bytes: escapes as JSON needs, U+FFFD for bytes that are not UTF-8. */
static void put_str(sst__buf *b, const char *s, size_t len) {
    const unsigned char *p = (const unsigned char *)s, *end = p + len;
    sst__buf_putc(b, '"');
    while (p < end) {
        const unsigned char *run = p;
        while (p < end && *p >= 0x20 && *p < 0x80 && *p != '"' && *p != '\\') {
            p++;
        }
        sst__buf_append(b, run, (size_t)(p - run));
        if (p == end) {
            break;
        }
        unsigned char c = *p;
        if (c == '"' || c == '\\') {
            sst__buf_putc(b, '\\');
            sst__buf_putc(b, (char)c);
            p++;
        } else if (c < 0x20) {
            static const char short_esc[] = "btn\0fr";
            if (c >= '\b' && c <= '\r' && c != 0x0B) {
                sst__buf_putc(b, '\\');
                sst__buf_putc(b, short_esc[c - '\b']);
            } else {
                sst__buf_printf(b, "\\u%04x", c);
            }
            p++;
        } else {
            size_t n = sst__utf8_seq(p, end);
            if (n == 0) {
                sst__buf_append(b, "\xEF\xBF\xBD", 3); /* U+FFFD for the bad byte */
                p++;
            } else {
                sst__buf_append(b, p, n);
                p += n;
            }
        }
    }
    sst__buf_putc(b, '"');
}

static void put_cstr(sst__buf *b, const char *s) {
    put_str(b, s, strlen(s));
}

static void put_lit(sst__buf *b, const char *s) {
    sst__buf_append(b, s, strlen(s));
}

/* A 64-bit integer the proto3 JSON way: a decimal string. */
static void put_u64(sst__buf *b, uint64_t v) {
    sst__buf_printf(b, "\"%llu\"", (unsigned long long)v);
}

static void put_hex(sst__buf *b, const uint8_t *id, size_t n) {
    char hex[2 * SST__TRACE_ID_LEN + 1];
    sst__hex_lower(id, n, hex);
    sst__buf_putc(b, '"');
    sst__buf_append(b, hex, 2 * n);
    sst__buf_putc(b, '"');
}

static void put_attributes(sst__buf *b, const sst_value *o, int depth);

/* An AnyValue; a null is the empty AnyValue (OTLP's "no value"). */
static void put_any(sst__buf *b, const sst_value *v, int depth) {
    switch (sst_value_type(v)) {
        case SST_TYPE_STRING:
            put_lit(b, "{\"stringValue\":");
            put_str(b, sst_string_cstr(v), sst_string_len(v));
            break;
        case SST_TYPE_INT: {
            char num[SST__INT_BUF];
            size_t n = sst__fmt_int(sst_int_value(v), num);
            put_lit(b, "{\"intValue\":\"");
            sst__buf_append(b, num, n);
            sst__buf_putc(b, '"');
            break;
        }
        case SST_TYPE_DOUBLE: {
            char num[SST__DOUBLE_BUF];
            size_t n = sst__fmt_double(sst_double_value(v), num);
            put_lit(b, "{\"doubleValue\":");
            sst__buf_append(b, num, n);
            break;
        }
        case SST_TYPE_BOOL:
            put_lit(b, sst_bool_value(v) ? "{\"boolValue\":true" : "{\"boolValue\":false");
            break;
        case SST_TYPE_ARRAY:
        case SST_TYPE_OBJECT:
            if (depth >= MAX_ANY_DEPTH) {
                char *text = sst_json_write(v, SST_JSON_COMPACT, NULL, NULL);
                if (text == NULL) {
                    b->oom = true;
                    return;
                }
                put_lit(b, "{\"stringValue\":");
                put_cstr(b, text);
                sst_free(text);
            } else if (sst_is_array(v)) {
                put_lit(b, "{\"arrayValue\":{\"values\":[");
                sst_array_iter it;
                sst_array_iter_init(&it, v);
                bool first = true;
                for (const sst_value *e; (e = sst_array_iter_next(&it)) != NULL; first = false) {
                    if (!first) {
                        sst__buf_putc(b, ',');
                    }
                    put_any(b, e, depth + 1);
                }
                put_lit(b, "]}");
            } else {
                put_lit(b, "{\"kvlistValue\":{\"values\":");
                put_attributes(b, v, depth + 1);
                sst__buf_putc(b, '}');
            }
            break;
        default:
            sst__buf_putc(b, '{');
            break;
    }
    sst__buf_putc(b, '}');
}

static void put_key_value(sst__buf *b, const char *key, size_t key_len, const sst_value *v,
                          int depth) {
    put_lit(b, "{\"key\":");
    put_str(b, key, key_len);
    put_lit(b, ",\"value\":");
    put_any(b, v, depth);
    sst__buf_putc(b, '}');
}

/* The members of object @p o as a KeyValue array (nulls left out). */
static void put_attributes(sst__buf *b, const sst_value *o, int depth) {
    sst__buf_putc(b, '[');
    bool first = true;
    for (size_t i = 0, n = sst_object_len(o); i < n; i++) {
        const sst_value *k = sst_object_key_at(o, i), *v = sst_object_value_at(o, i);
        if (sst_is_null(v)) {
            continue;
        }
        if (!first) {
            sst__buf_putc(b, ',');
        }
        first = false;
        put_key_value(b, sst_string_cstr(k), sst_string_len(k), v, depth);
    }
    sst__buf_putc(b, ']');
}

void sst__otlp_encode_span(sst__buf *b, const sst__span *s) {
    put_lit(b, "{\"traceId\":");
    put_hex(b, s->ctx.trace_id, SST__TRACE_ID_LEN);
    put_lit(b, ",\"spanId\":");
    put_hex(b, s->ctx.span_id, SST__SPAN_ID_LEN);
    if (!all_zero(s->parent_span_id, sizeof s->parent_span_id)) {
        put_lit(b, ",\"parentSpanId\":");
        put_hex(b, s->parent_span_id, SST__SPAN_ID_LEN);
    }
    put_lit(b, ",\"name\":");
    put_cstr(b, s->name);
    sst__buf_printf(b, ",\"kind\":%d,\"startTimeUnixNano\":", (int)s->kind);
    put_u64(b, s->start_unix_ns);
    put_lit(b, ",\"endTimeUnixNano\":");
    put_u64(b, s->end_unix_ns != 0 ? s->end_unix_ns : s->start_unix_ns);
    if (sst_object_len(s->attributes) > 0) {
        put_lit(b, ",\"attributes\":");
        put_attributes(b, s->attributes, 0);
    }
    if (s->dropped_attributes > 0) {
        sst__buf_printf(b, ",\"droppedAttributesCount\":%u", (unsigned)s->dropped_attributes);
    }
    if (s->n_events > 0) {
        put_lit(b, ",\"events\":[");
        for (size_t i = 0; i < s->n_events; i++) {
            const sst__span_event *e = &s->events[i];
            put_lit(b, i > 0 ? ",{\"timeUnixNano\":" : "{\"timeUnixNano\":");
            put_u64(b, e->time_unix_ns);
            put_lit(b, ",\"name\":");
            put_cstr(b, e->name);
            if (sst_object_len(e->attributes) > 0) {
                put_lit(b, ",\"attributes\":");
                put_attributes(b, e->attributes, 0);
            }
            sst__buf_putc(b, '}');
        }
        sst__buf_putc(b, ']');
    }
    if (s->dropped_events > 0) {
        sst__buf_printf(b, ",\"droppedEventsCount\":%u", (unsigned)s->dropped_events);
    }
    if (s->status != SST__STATUS_UNSET) {
        sst__buf_printf(b, ",\"status\":{\"code\":%d", (int)s->status);
        if (s->status == SST__STATUS_ERROR && s->status_message != NULL) {
            put_lit(b, ",\"message\":");
            put_cstr(b, s->status_message);
        }
        sst__buf_putc(b, '}');
    }
    sst__buf_putc(b, '}');
}

static bool is_ours(const char *key) {
    return strcmp(key, "service.name") == 0 || strcmp(key, "telemetry.sdk.name") == 0 ||
           strcmp(key, "telemetry.sdk.language") == 0 || strcmp(key, "telemetry.sdk.version") == 0;
}

void sst__otlp_encode_request_start(sst__buf *b, const char *service_name,
                                    const sst_value *resource) {
    put_lit(b, "{\"resourceSpans\":[{\"resource\":{\"attributes\":[{\"key\":\"service.name\","
               "\"value\":{\"stringValue\":");
    put_cstr(b, service_name != NULL ? service_name : "superstep");
    put_lit(b, "}},{\"key\":\"telemetry.sdk.name\",\"value\":{\"stringValue\":\"superstep\"}},"
               "{\"key\":\"telemetry.sdk.language\",\"value\":{\"stringValue\":\"c\"}},"
               "{\"key\":\"telemetry.sdk.version\",\"value\":{\"stringValue\":");
    put_cstr(b, sst_version());
    put_lit(b, "}}");
    for (size_t i = 0, n = sst_object_len(resource); i < n; i++) {
        const sst_value *k = sst_object_key_at(resource, i), *v = sst_object_value_at(resource, i);
        if (!is_ours(sst_string_cstr(k)) && !sst_is_null(v)) {
            sst__buf_putc(b, ',');
            put_key_value(b, sst_string_cstr(k), sst_string_len(k), v, 0);
        }
    }
    put_lit(b, "]},\"scopeSpans\":[{\"scope\":{\"name\":\"superstep\",\"version\":");
    put_cstr(b, sst_version());
    put_lit(b, "},\"spans\":[");
}

char *sst__otlp_encode_request(const char *service_name, const sst_value *resource,
                               sst__span *const *spans, size_t n, size_t *len, sst_error *err) {
    sst__buf b;
    sst__buf_init(&b);
    sst__otlp_encode_request_start(&b, service_name, resource);
    for (size_t i = 0; i < n; i++) {
        if (i > 0) {
            sst__buf_putc(&b, ',');
        }
        sst__otlp_encode_span(&b, spans[i]);
    }
    put_lit(&b, SST__OTLP_REQUEST_END);
    if (b.oom) {
        sst__buf_free(&b);
        sst__enomem(err);
        return NULL;
    }
    return sst__buf_detach(&b, len);
}
