/* SPDX-License-Identifier: MIT */
/*
 * An incremental parser for server-sent events (the WHATWG event-stream
 * format that OpenAI-compatible servers stream chat completions in). Bytes
 * go in as they arrive, in chunks of any size; each complete event comes
 * out through a callback. Feeding a stream one byte at a time gives the
 * same events as feeding it whole.
 */
#ifndef SUPERSTEP_AGENT_SSE_H
#define SUPERSTEP_AGENT_SSE_H

#include "common.h"

/*
 * One event: its type ("message" when the stream names none) and its data
 * (the data lines joined with '\n'; NUL-terminated, @p len bytes). Both are
 * borrowed for the call. Return SST_OK, or an error to stop the parser.
 */
typedef sst_code (*sst__sse_fn)(const char *event, const char *data, size_t len, void *ud);

typedef struct sst__sse {
    sst__sse_fn fn;
    void *ud;
    size_t max_event;     /* bytes of one event's data, beyond which parsing fails */
    sst__buf line;        /* the line being read */
    sst__buf data;        /* the event's data so far */
    char event[64];       /* the event's type, or "" */
    bool has_data;        /* a data field was seen in this event */
    bool after_cr;        /* the last byte was '\r' (a following '\n' ends nothing) */
    bool first_line_done; /* a leading byte order mark is skipped on the first line */
    sst_code failed;      /* the first error; the parser then ignores input */
} sst__sse;

void sst__sse_init(sst__sse *p, size_t max_event, sst__sse_fn fn, void *ud);
void sst__sse_free(sst__sse *p);
/* Parses @p n more bytes. Returns SST_OK, the callback's error, or SST_ERANGE (an event too large).
 */
sst_code sst__sse_feed(sst__sse *p, const char *bytes, size_t n, sst_error *err);
/*
 * The stream ended. SST_EPARSE when it ended inside an event (a truncated
 * stream: data seen but no blank line), else SST_OK.
 */
sst_code sst__sse_finish(sst__sse *p, sst_error *err);

#endif
