/* SPDX-License-Identifier: MIT */
/*
 * The MCP client's small shared pieces (see mcp.h): JSON-RPC 2.0 message
 * texts, monotonic deadlines and the one-line excerpts errors quote.
 */
#include <time.h>

#include "mcp.h"
#include "superstep/json.h"
#include "values/build.h"

uint64_t sst__mcp_now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

sst_code sst__mcp_wait_check(const sst__mcp_wait *w) {
    if (w == NULL) {
        return SST_OK;
    }
    if (w->cancelled != NULL && w->cancelled(w->cancel_ud)) {
        return SST_ECANCELLED;
    }
    if (w->deadline_ms != 0 && sst__mcp_now_ms() >= w->deadline_ms) {
        return SST_ETIMEOUT;
    }
    return SST_OK;
}

void sst__mcp_abstime(struct timespec *ts, uint64_t ms) {
    clock_gettime(CLOCK_MONOTONIC, ts);
    ts->tv_sec += (time_t)(ms / 1000u);
    ts->tv_nsec += (long)(ms % 1000u) * 1000000L;
    if (ts->tv_nsec >= 1000000000L) {
        ts->tv_sec++;
        ts->tv_nsec -= 1000000000L;
    }
}

void sst__mcp_cond_init(pthread_cond_t *cv) {
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(cv, &ca);
    pthread_condattr_destroy(&ca);
}

void sst__mcp_excerpt(const char *s, size_t len, size_t max, bool from_end, char *out) {
    size_t start = 0, n = len;
    while (n > 0 &&
           (s[start + n - 1] == '\n' || s[start + n - 1] == '\r' || s[start + n - 1] == ' ')) {
        n--; /* a trailing newline says nothing */
    }
    bool cut = n > max;
    if (cut && from_end) {
        start = n - max;
        while (start < n && ((unsigned char)s[start] & 0xC0) == 0x80) {
            start++; /* not in the middle of a character */
        }
        n -= start;
    } else if (cut) {
        n = max;
        while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80) {
            n--;
        }
    }
    size_t o = 0;
    if (cut && from_end) {
        memcpy(out, "...", 3);
        o = 3;
    }
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[start + i];
        out[o++] = ch < 0x20 || ch == 0x7f ? ' ' : (char)ch;
    }
    if (cut && !from_end) {
        memcpy(out + o, "...", 3);
        o += 3;
    }
    out[o] = '\0';
}

/* {"jsonrpc": "2.0", ...} as text, with @p m (taken) completed first. */
static char *finish(sst_value *m, size_t *len, sst_error *err) {
    if (m == NULL) {
        return NULL;
    }
    char *text = sst_json_write(m, SST_JSON_COMPACT, len, err);
    sst_value_unref(m);
    return text;
}

char *sst__mcp_request_text(int64_t id, const char *method, const sst_value *params, size_t *len,
                            sst_error *err) {
    sst_value *m = sst__set_take(sst_object_empty(), "jsonrpc", sst_string_new("2.0", err), err);
    m = sst__set_take(m, "id", sst_int_new(id, err), err);
    m = sst__set_take(m, "method", sst_string_new(method, err), err);
    if (params != NULL) {
        m = sst__set_take(m, "params", sst_value_ref(params), err);
    }
    return finish(m, len, err);
}

char *sst__mcp_notification_text(const char *method, const sst_value *params, size_t *len,
                                 sst_error *err) {
    sst_value *m = sst__set_take(sst_object_empty(), "jsonrpc", sst_string_new("2.0", err), err);
    m = sst__set_take(m, "method", sst_string_new(method, err), err);
    if (params != NULL) {
        m = sst__set_take(m, "params", sst_value_ref(params), err);
    }
    return finish(m, len, err);
}

char *sst__mcp_reply_text(const sst_value *id, const sst_value *result, int64_t error_code,
                          const char *error_message, size_t *len, sst_error *err) {
    sst_value *m = sst__set_take(sst_object_empty(), "jsonrpc", sst_string_new("2.0", err), err);
    m = sst__set_take(m, "id", sst_value_ref(id), err);
    if (result != NULL) {
        m = sst__set_take(m, "result", sst_value_ref(result), err);
    } else {
        sst_value *e = sst__set_take(sst_object_empty(), "code", sst_int_new(error_code, err), err);
        e = sst__set_take(e, "message", sst_string_new(error_message, err), err);
        m = sst__set_take(m, "error", e, err);
    }
    return finish(m, len, err);
}
