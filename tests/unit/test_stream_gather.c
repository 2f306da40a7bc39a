/* SPDX-License-Identifier: MIT */
/*
 * A run stream's events gather (src/server/stream.c): a connection waiting
 * for events is woken at once by the first, and the events published within
 * the gathering window after that wake share the next wake, which the run's
 * end brings at once; every event arrives, in order. The window is set far
 * longer than the run here (s->stream_gather_us), so the count of wakes does
 * not depend on the machine's speed: one for the first event, one for the end.
 * Each step sleeps 2 ms first (the counter's delay_ms), so that the connection
 * has sent what it had and waits when the next event comes: without the
 * gathering, about one wake per step.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "server/server_int.h"
#include "superstep/server.h"
#include "test_util.h"

#define E     (&err)
#define OK(x) assert_sst_ok((x), E)
#define STEPS 50

static size_t count(const char *hay, const char *needle) {
    size_t n = 0;
    for (const char *p = strstr(hay, needle); p != NULL; p = strstr(p + 1, needle)) {
        n++;
    }
    return n;
}

/* Streams a counter run of @p steps steps (@p delay_ms each) with gathering window
 * @p window_us (0: the server's own); the wakes it took. Every update must arrive. */
static uint64_t stream_counter(int steps, int delay_ms, int64_t window_us) {
    sst_error err = {0};
    sst_server_opts o;
    sst_server_opts_init(&o);
    o.db = ":memory:";
    o.port = 0;
    o.workers = 1;
    o.no_web = true;
    sst_server *s = sst_server_new(&o, E);
    assert_non_null(s);
    s->stream_gather_us = window_us;
    char path[512];
    OK(sst_server_add_graph(s, "counter",
                            tu_data_path("../server/graphs/counter.lua", path, sizeof path), E));
    OK(sst_server_start(s, E));
    unsigned port = sst_server_port(s);
    int status = 0;
    free(tu_http_post(port, "/threads", "{\"thread_id\":\"6b1f0c2e-0000-4000-8000-000000000001\"}",
                      &status));
    assert_int_equal(status, 200);
    uint64_t before = srv_stream_wakes(s);
    char req[300];
    snprintf(req, sizeof req,
             "{\"assistant_id\":\"counter\",\"input\":{\"n\":%d,\"delay_ms\":%d},"
             "\"stream_mode\":\"updates\",\"config\":{\"recursion_limit\":%d}}",
             steps, delay_ms, steps + 100);
    char *body = tu_http_post(port, "/threads/6b1f0c2e-0000-4000-8000-000000000001/runs/stream",
                              req, &status);
    assert_int_equal(status, 200);
    uint64_t wakes = srv_stream_wakes(s) - before;
    print_message("%d steps: %llu wakes\n", steps, (unsigned long long)wakes);
    /* Every update arrived, and the run's end. */
    assert_int_equal(count(body, "event: updates"), (size_t)steps);
    assert_null(strstr(body, "event: error"));
    free(body);
    sst_server_stop(s);
    sst_server_free(s);
    return wakes;
}

static void test_events_share_wakes(void **state) {
    (void)state;
    /* A window longer than the run: the first event's wake and the end's. */
    assert_true(stream_counter(STEPS, 2, (int64_t)(600 * 1000000.0 * tu_time_scale())) <= 2);
}

/* The default window: the gatherer wakes the connection while the run goes on (its
 * thread, its stop with the server; TSan). */
static void test_every_event_arrives(void **state) {
    (void)state;
    (void)stream_counter(400, 0, 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_events_share_wakes),
        cmocka_unit_test(test_every_event_arrives),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
