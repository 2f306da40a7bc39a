/* SPDX-License-Identifier: MIT */
/*
 * The server-sent events parser: the event-stream rules (data lines joined,
 * event types, comments, CR/LF/CRLF endings, a leading BOM, events without
 * data dropped), limits and truncation, and the same events whatever the
 * chunking: whole, one byte at a time, and random splits.
 */
#include <stdio.h>
#include <string.h>

#include "agent/sse.h"
#include "test_util.h"

typedef struct seen {
    sst__buf text; /* "type|data\n" per event */
    int events;
    int stop_after; /* the handler fails after this many events (0: never) */
} seen;

static sst_code on_event(const char *event, const char *data, size_t len, void *ud) {
    seen *s = ud;
    assert_int_equal(data[len], '\0');
    sst__buf_printf(&s->text, "%s|", event);
    sst__buf_append(&s->text, data, len);
    sst__buf_putc(&s->text, '\n');
    s->events++;
    return s->stop_after != 0 && s->events >= s->stop_after ? SST_ETASK : SST_OK;
}

/* Parses @p in split into chunks of @p chunk bytes (0: random sizes); returns the events. */
static char *parse(const char *in, size_t n, size_t chunk, sst_code *finish, tu_rng *rng) {
    seen s;
    memset(&s, 0, sizeof s);
    sst__buf_init(&s.text);
    sst__sse p;
    sst__sse_init(&p, 1 << 20, on_event, &s);
    sst_error err = {0};
    for (size_t i = 0; i < n;) {
        size_t k = chunk != 0 ? chunk : 1 + (size_t)(tu_rand(rng) % 7);
        if (k > n - i) {
            k = n - i;
        }
        assert_int_equal(sst__sse_feed(&p, in + i, k, &err), SST_OK);
        i += k;
    }
    *finish = sst__sse_finish(&p, &err);
    sst__sse_free(&p);
    sst__buf_putc(&s.text, '\0');
    return s.text.data;
}

static void expect_events(const char *in, size_t n, const char *want, sst_code want_finish) {
    tu_rng rng = {12345};
    size_t chunks[] = {0, 1, 2, 3, 0, 0};
    for (size_t c = 0; c < SST_ARRAY_LEN(chunks); c++) {
        size_t chunk = c == 0 ? n : chunks[c];
        sst_code fin;
        char *got = parse(in, n, chunk, &fin, &rng);
        if (strcmp(got, want) != 0 || fin != want_finish) {
            print_error("chunk %zu:\n  want %s  got  %s  finish %d (want %d)\n", chunk, want, got,
                        fin, want_finish);
            sst__free(got);
            fail();
        }
        sst__free(got);
    }
}

#define EXPECT(in, want) expect_events((in), sizeof(in) - 1, (want), SST_OK)

static void test_rules(void **state) {
    (void)state;
    EXPECT("data: hello\n\n", "message|hello\n");
    EXPECT("data:no-space\n\n", "message|no-space\n");
    EXPECT("data:  two spaces\n\n", "message| two spaces\n");
    EXPECT("data: a\ndata: b\n\n", "message|a\nb\n");
    EXPECT("event: delta\ndata: {\"x\":1}\n\ndata: plain\n\n", "delta|{\"x\":1}\nmessage|plain\n");
    EXPECT(": keep-alive\n\ndata: x\n\n", "message|x\n");
    EXPECT("event: ping\n\n", ""); /* no data: dropped */
    EXPECT("id: 7\nretry: 100\ndata: y\n\n", "message|y\n");
    EXPECT("data: cr\r\rdata: crlf\r\n\r\ndata: lf\n\n", "message|cr\nmessage|crlf\nmessage|lf\n");
    EXPECT("data: a\r\ndata: b\r\n\r\n", "message|a\nb\n"); /* CRLF is one line ending */
    EXPECT("\xEF\xBB\xBF"
           "data: bom\n\n",
           "message|bom\n");
    EXPECT("data\n\n", "message|\n"); /* a field without a colon: empty value */
    EXPECT("data: [DONE]\n\n", "message|[DONE]\n");
    EXPECT("data: caf\xC3\xA9\n\n", "message|caf\xC3\xA9\n");
}

static void test_openai_stream(void **state) {
    (void)state;
    /* The shape OpenAI-compatible servers send, tool-call arguments split over chunks. */
    EXPECT("data: {\"choices\":[{\"delta\":{\"role\":\"assistant\",\"content\":\"Hel\"}}]}\n\n"
           "data: {\"choices\":[{\"delta\":{\"content\":\"lo\"}}]}\n\n"
           ": comment\n\n"
           "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{"
           "\"arguments\":\"{\\\"q\\\":\"}}]}}]}\n\n"
           "data: [DONE]\n\n",
           "message|{\"choices\":[{\"delta\":{\"role\":\"assistant\",\"content\":\"Hel\"}}]}\n"
           "message|{\"choices\":[{\"delta\":{\"content\":\"lo\"}}]}\n"
           "message|{\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{"
           "\"arguments\":\"{\\\"q\\\":\"}}]}}]}\n"
           "message|[DONE]\n");
}

static void test_truncated(void **state) {
    (void)state;
    const char in[] = "data: whole\n\ndata: cut off in the mid";
    expect_events(in, sizeof in - 1, "message|whole\n", SST_EPARSE);
    const char in2[] = "data: no blank line\n";
    expect_events(in2, sizeof in2 - 1, "", SST_EPARSE);
    sst__sse p;
    seen s = {0};
    sst__buf_init(&s.text);
    sst__sse_init(&p, 64, on_event, &s);
    sst_error err = {0};
    assert_int_equal(sst__sse_finish(&p, &err), SST_OK); /* an empty stream is complete */
    sst__sse_free(&p);
    sst__buf_free(&s.text);
}

static void test_limits_and_handler_errors(void **state) {
    (void)state;
    seen s = {0};
    sst__buf_init(&s.text);
    sst__sse p;
    sst__sse_init(&p, 16, on_event, &s);
    sst_error err = {0};
    const char big[] = "data: 0123456789\ndata: 0123456789\n\n";
    assert_int_equal(sst__sse_feed(&p, big, sizeof big - 1, &err), SST_ERANGE);
    assert_string_equal(err.msg, "event stream: an event is larger than 16 bytes");
    assert_int_equal(sst__sse_feed(&p, "data: x\n\n", 9, &err), SST_ERANGE); /* stays failed */
    assert_int_equal(s.events, 0);
    sst__sse_free(&p);

    sst__sse_init(&p, 1024, on_event, &s);
    s.stop_after = 1;
    err = (sst_error){0};
    const char two[] = "data: a\n\ndata: b\n\n";
    assert_int_equal(sst__sse_feed(&p, two, sizeof two - 1, &err), SST_ETASK);
    assert_int_equal(s.events, 1); /* the handler's error stops the parser */
    sst__sse_free(&p);
    sst__buf_free(&s.text);
}

static void test_random_streams(void **state) {
    (void)state;
    tu_rng rng = {99};
    static const char *const pieces[] = {"data: ", "event: t",  "\n", "\r\n", "\r",  ": c",
                                         "x",      "{\"a\":1}", "é",  " ",    "data"};
    for (int round = 0; round < 300; round++) {
        char in[512];
        size_t n = 0;
        int parts = 1 + (int)(tu_rand(&rng) % 40);
        for (int i = 0; i < parts; i++) {
            const char *piece = pieces[tu_rand(&rng) % SST_ARRAY_LEN(pieces)];
            size_t k = strlen(piece);
            if (n + k + 2 >= sizeof in) {
                break;
            }
            memcpy(in + n, piece, k);
            n += k;
        }
        in[n++] = '\n';
        in[n++] = '\n';
        sst_code fin;
        char *whole = parse(in, n, n, &fin, &rng);
        sst_code fin1;
        char *bytes = parse(in, n, 1, &fin1, &rng);
        sst_code fin2;
        char *randoms = parse(in, n, 0, &fin2, &rng);
        assert_string_equal(whole, bytes);
        assert_string_equal(whole, randoms);
        assert_int_equal(fin, fin1);
        assert_int_equal(fin, fin2);
        sst__free(whole);
        sst__free(bytes);
        sst__free(randoms);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rules),          cmocka_unit_test(test_openai_stream),
        cmocka_unit_test(test_truncated),      cmocka_unit_test(test_limits_and_handler_errors),
        cmocka_unit_test(test_random_streams),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
