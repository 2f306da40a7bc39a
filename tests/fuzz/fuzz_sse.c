/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the event-stream parser and the chat-completion
 * chunk assembler. The first byte picks a chunk size; the rest is a stream.
 * Beyond "no crash, no leak": feeding the stream whole, one byte at a time
 * and in chunks of the chosen size gives the same events, the same
 * assembled message (or the same error code) every time.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent/completion.h"
#include "agent/sse.h"
#include "superstep/json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(int cond) {
    if (!cond) {
        abort();
    }
}

typedef struct result {
    sst__buf events;
    sst__completion c;
    sst_error err;
    sst_code chunk_rc; /* the first completion error, or SST_OK */
} result;

static sst_code on_event(const char *event, const char *text, size_t len, void *ud) {
    result *r = ud;
    sst__buf_printf(&r->events, "%s:", event);
    sst__buf_append(&r->events, text, len);
    sst__buf_putc(&r->events, '\n');
    if (r->chunk_rc == SST_OK) {
        sst_error e = {0};
        r->chunk_rc = sst__completion_chunk(&r->c, text, len, &e);
    }
    return SST_OK; /* keep parsing: the events are what is compared */
}

/* Parses the stream in chunks of @p chunk; returns the message JSON (or NULL) and the state. */
static char *run(const char *s, size_t n, size_t chunk, result *r, sst_code *finish) {
    memset(r, 0, sizeof *r);
    sst__buf_init(&r->events);
    sst__completion_init(&r->c, NULL, NULL);
    sst__sse p;
    sst__sse_init(&p, 4096, on_event, r);
    sst_code rc = SST_OK;
    for (size_t i = 0; i < n && rc == SST_OK; i += chunk) {
        rc = sst__sse_feed(&p, s + i, chunk < n - i ? chunk : n - i, &r->err);
    }
    *finish = rc != SST_OK ? rc : sst__sse_finish(&p, &r->err);
    sst__sse_free(&p);
    char *json = NULL;
    if (*finish == SST_OK && r->chunk_rc == SST_OK) {
        sst_error e = {0};
        sst_value *m = sst__completion_message(&r->c, &e);
        json = m != NULL ? sst_json_write(m, SST_JSON_CANONICAL, NULL, &e) : NULL;
        sst_value_unref(m);
    }
    sst__completion_free(&r->c);
    return json;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size == 0) {
        return 0;
    }
    size_t chunk = 1 + data[0] % 16;
    const char *s = (const char *)data + 1;
    size_t n = size - 1;
    size_t chunks[] = {n > 0 ? n : 1, 1, chunk};
    result r[3];
    sst_code fin[3];
    char *json[3];
    for (int i = 0; i < 3; i++) {
        json[i] = run(s, n, chunks[i], &r[i], &fin[i]);
    }
    for (int i = 1; i < 3; i++) {
        check(fin[i] == fin[0]);
        check(r[i].chunk_rc == r[0].chunk_rc);
        check(r[i].events.len == r[0].events.len);
        check(r[0].events.len == 0 ||
              memcmp(r[i].events.data, r[0].events.data, r[0].events.len) == 0);
        check((json[i] == NULL) == (json[0] == NULL));
        check(json[0] == NULL || strcmp(json[i], json[0]) == 0);
    }
    for (int i = 0; i < 3; i++) {
        sst__buf_free(&r[i].events);
        sst_free(json[i]);
    }
    return 0;
}
