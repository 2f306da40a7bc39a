/* SPDX-License-Identifier: MIT */
/*
 * Idle workers and their wakes on PostgreSQL (issue 37, item 4: more workers never
 * slower), counted through the server's own numbers (claims, claims that found
 * nothing), never through timing. The idle workers' poll is turned off
 * (idle_poll_ms), so every claim counted follows a wake or a run's end.
 *
 *  - one_claim_per_enqueue: `serve` with 4 idle workers runs chain runs one after
 *    the other; each costs two claims, the one its enqueue woke and the one its
 *    worker makes when it ends. The process's own NOTIFY of the enqueue no longer
 *    wakes a second idle worker to claim nothing (the waker hears only other
 *    processes' enqueues: sst__postgres_queue_wait_others).
 *  - wait_others: a queue's waiter for others' news sleeps through the queue's own
 *    enqueue and wakes for another queue's; the public sst_postgres_queue_wait
 *    still wakes for both.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"
#include "common/pg.h"
#include "queue/postgres_wait.h"
#include "server/server_int.h"
#include "superstep/server.h"
#include "test_util.h"

#define E (&err)

static char g_url[600];

static int setup(void **state) {
    (void)state;
    return tu_pg_group_setup("wakes", g_url, sizeof g_url);
}

#define NEED_PG() TU_NEED_PG(g_url)

/* Waits until every worker of @p s waits idle and none claims (a condition, polled). */
static void settle(sst_server *s) {
    for (;;) {
        pthread_mutex_lock(&s->mu);
        bool idle = s->idle == s->n_workers && s->claiming == 0;
        pthread_mutex_unlock(&s->mu);
        if (idle) {
            return;
        }
        usleep(1000);
    }
}

#define ROUNDS 8

static void one_claim_per_enqueue(void **state) {
    (void)state;
    NEED_PG();
    sst_error err = {0};
    sst_server_opts o;
    sst_server_opts_init(&o);
    o.db = g_url;
    o.port = 0;
    o.workers = 4;
    o.no_web = true;
    sst_server *s = sst_server_new(&o, E);
    if (s == NULL) {
        print_error("%s\n", err.msg);
    }
    assert_non_null(s);
    s->idle_poll_ms = 3600 * 1000; /* no polls: every claim follows a wake or a run */
    char path[512];
    assert_int_equal(
        sst_server_add_graph(s, "chain",
                             tu_data_path("../server/graphs/chain.lua", path, sizeof path), E),
        SST_OK);
    assert_int_equal(sst_server_start(s, E), SST_OK);
    unsigned port = sst_server_port(s);
    int status = 0;
    uint64_t claims = 0, empty = 0;
    for (int round = 0; round <= ROUNDS; round++) {
        char *t = tu_http_post(port, "/threads", "{}", &status);
        assert_int_equal(status, 200);
        char tid[64] = {0};
        const char *at = strstr(t, "\"thread_id\":\"");
        assert_non_null(at);
        sscanf(at + 13, "%36[^\"]", tid);
        free(t);
        settle(s);
        uint64_t c0 = atomic_load(&s->claims), e0 = atomic_load(&s->claims_empty);
        char url[160];
        snprintf(url, sizeof url, "/threads/%s/runs/wait", tid);
        char *body = tu_http_post(port, url,
                                  "{\"assistant_id\":\"chain\",\"input\":{\"items\":[]},"
                                  "\"durability\":\"sync\"}",
                                  &status);
        assert_int_equal(status, 200);
        assert_non_null(strstr(body, "\"c\""));
        free(body);
        settle(s);
        if (round > 0) { /* round 0 warms up: the waker's first listen wakes one */
            claims += atomic_load(&s->claims) - c0;
            empty += atomic_load(&s->claims_empty) - e0;
        }
    }
    print_message("%d runs: %llu claims, %llu of them empty\n", ROUNDS, (unsigned long long)claims,
                  (unsigned long long)empty);
    /* Each run: the claim its enqueue woke, and its worker's claim once it ended (the
     * queue empty by then). The process's own NOTIFY woke another idle worker before:
     * three claims a run, two of them empty. Its notification may come late for the
     * last round's count, hence one claim of slack. */
    assert_true(claims <= 2 * ROUNDS + 1);
    assert_true(empty <= ROUNDS + 1);
    sst_server_stop(s);
    sst_server_free(s);
}

static void wait_others(void **state) {
    (void)state;
    NEED_PG();
    sst_error err = {0};
    sst_queue *mine = sst_postgres_queue_open(g_url, E);
    sst_queue *other = mine != NULL ? sst_postgres_queue_open(g_url, E) : NULL;
    if (other == NULL) {
        fail_msg("opening the queues: %s", err.msg);
    }
    assert_int_equal(sst__postgres_queue_wait_others(mine, 0, E), SST_OK); /* listening */
    sst_queued_run r = {.run_id = "w1", .thread_id = "t1"};
    assert_int_equal(sst_queue_enqueue(mine, &r, 0, E), SST_OK);
    /* Its own enqueue does not wake it (a pass can never be late: only a notification
     * of another queue, or a lost connection, would end this wait early). */
    assert_int_equal(sst__postgres_queue_wait_others(mine, 1500, E), SST_ETIMEOUT);
    r.run_id = "w2";
    assert_int_equal(sst_queue_enqueue(mine, &r, 0, E), SST_OK);
    r.run_id = "w3";
    r.thread_id = "t2";
    assert_int_equal(sst_queue_enqueue(other, &r, 0, E), SST_OK);
    assert_int_equal(sst__postgres_queue_wait_others(mine, 600000, E), SST_OK);
    /* The public wait hears every enqueue, its own queue's too. */
    r.run_id = "w4";
    assert_int_equal(sst_queue_enqueue(mine, &r, 0, E), SST_OK);
    assert_int_equal(sst_postgres_queue_wait(mine, 600000, E), SST_OK);
    assert_int_equal(sst__postgres_queue_wait_others(NULL, 0, E), SST_EINVAL);
    assert_int_equal(sst__postgres_queue_wait_others(mine, -1, E), SST_EINVAL);
    sst_queue_free(mine);
    sst_queue_free(other);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(one_claim_per_enqueue),
        cmocka_unit_test(wait_others),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
