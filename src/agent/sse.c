/* SPDX-License-Identifier: MIT */
/* Server-sent events, incrementally; see sse.h. */
#include "sse.h"

#include <stdio.h>

void sst__sse_init(sst__sse *p, size_t max_event, sst__sse_fn fn, void *ud) {
    memset(p, 0, sizeof *p);
    p->fn = fn;
    p->ud = ud;
    p->max_event = max_event;
    sst__buf_init(&p->line);
    sst__buf_init(&p->data);
}

void sst__sse_free(sst__sse *p) {
    sst__buf_free(&p->line);
    sst__buf_free(&p->data);
}

static sst_code fail(sst__sse *p, sst_error *err, sst_code code, const char *msg) {
    p->failed = code;
    return sst__error(err, code, "event stream: %s", msg);
}

/* A blank line: the event is complete. */
static sst_code dispatch(sst__sse *p, sst_error *err) {
    if (!p->has_data) { /* no data field: nothing to dispatch (the spec drops it) */
        p->event[0] = '\0';
        return SST_OK;
    }
    sst__buf_putc(&p->data, '\0'); /* NUL-terminate; not counted below */
    if (p->data.oom || p->line.oom) {
        return fail(p, err, SST_ENOMEM, "out of memory");
    }
    size_t len = p->data.len - 1;
    sst_code rc = p->fn(p->event[0] != '\0' ? p->event : "message", p->data.data, len, p->ud);
    p->data.len = 0;
    p->has_data = false;
    p->event[0] = '\0';
    if (rc != SST_OK) {
        p->failed = rc;
        sst__error_unless_set(err, rc, "event stream: the event handler failed");
    }
    return rc;
}

/* One complete line (without its ending). */
static sst_code line(sst__sse *p, const char *s, size_t n, sst_error *err) {
    if (n == 0) {
        return dispatch(p, err);
    }
    if (s[0] == ':') {
        return SST_OK; /* a comment (servers send them as keep-alives) */
    }
    const char *colon = memchr(s, ':', n);
    size_t name_len = colon != NULL ? (size_t)(colon - s) : n;
    const char *value = colon != NULL ? colon + 1 : s + n;
    size_t value_len = colon != NULL ? n - name_len - 1 : 0;
    if (value_len > 0 && value[0] == ' ') {
        value++;
        value_len--;
    }
    if (name_len == 4 && memcmp(s, "data", 4) == 0) {
        if (p->data.len + value_len + 1 > p->max_event) {
            char msg[96];
            snprintf(msg, sizeof msg, "an event is larger than %zu bytes", p->max_event);
            return fail(p, err, SST_ERANGE, msg);
        }
        if (p->has_data) {
            sst__buf_putc(&p->data, '\n');
        }
        sst__buf_append(&p->data, value, value_len);
        p->has_data = true;
        if (p->data.oom) {
            return fail(p, err, SST_ENOMEM, "out of memory");
        }
    } else if (name_len == 5 && memcmp(s, "event", 5) == 0) {
        size_t k = value_len < sizeof p->event - 1 ? value_len : sizeof p->event - 1;
        memcpy(p->event, value, k);
        p->event[k] = '\0';
    } /* id, retry and unknown fields do not matter here */
    return SST_OK;
}

sst_code sst__sse_feed(sst__sse *p, const char *bytes, size_t n, sst_error *err) {
    for (size_t i = 0; i < n && p->failed == SST_OK; i++) {
        char c = bytes[i];
        if (c == '\n' && p->after_cr) {
            p->after_cr = false;
            continue; /* the '\n' of a "\r\n" already ended the line */
        }
        p->after_cr = c == '\r';
        if (c == '\r' || c == '\n') {
            if (p->line.oom) { /* a line that lost bytes: never parsed as if whole */
                return fail(p, err, SST_ENOMEM, "out of memory");
            }
            const char *s = p->line.data != NULL ? p->line.data : "";
            size_t len = p->line.len;
            /* A UTF-8 byte order mark at the start of the stream is skipped. */
            if (!p->first_line_done && len >= 3 && memcmp(s, "\xEF\xBB\xBF", 3) == 0) {
                s += 3;
                len -= 3;
            }
            p->first_line_done = true;
            sst_code rc = line(p, s, len, err);
            p->line.len = 0;
            if (rc != SST_OK) {
                return rc;
            }
            continue;
        }
        if (p->line.len + 1 > p->max_event + 16) {
            char msg[96];
            snprintf(msg, sizeof msg, "a line is longer than %zu bytes", p->max_event);
            return fail(p, err, SST_ERANGE, msg);
        }
        sst__buf_putc(&p->line, c);
    }
    return p->failed;
}

sst_code sst__sse_finish(sst__sse *p, sst_error *err) {
    if (p->failed != SST_OK) {
        return p->failed;
    }
    if (p->line.len > 0 || p->has_data) {
        return fail(p, err, SST_EPARSE, "the stream ended inside an event (truncated)");
    }
    return SST_OK;
}
