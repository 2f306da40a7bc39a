/* SPDX-License-Identifier: MIT */
/*
 * Idle workers and their wakes on PostgreSQL (issue 37, item 4: more workers never
 * slower), counted through the server's own numbers (claims, claims that found
 * nothing), never through timing. The idle workers' poll is turned off
 * (idle_poll_ms), so every claim counted follows a wake or a run's end.
 *
 *  - one_claim_per_enqueue: `serve` with 4 idle workers runs chain runs one after
 *    the other; each costs two claims, the one its enqueue woke and the one its
 *    worker makes when it ends. The first goes without asking the queue first (its
 *    run is there), the second asks, finds nothing and opens no transaction. The process's own
 * NOTIFY of the enqueue no longer wakes a second idle worker to claim nothing (the waker hears only
 * other processes' enqueues: sst__postgres_queue_wait_others).
 *  - empty_claim_one_statement: a claim that finds nothing (a wake heard from the
 *    queue, with nothing to claim) is one statement outside any transaction (the queue's probe),
 * not a claim's transaction (BEGIN, the owners probe with its savepoint, the pick, ROLLBACK: five
 * statements in four exchanges).
 *  - probe_says_maybe: the probe says "nothing" only when a claim would find nothing:
 *    a run not due yet, a thread busy under a live lease; and "maybe" for a due run,
 *    an expired lease, a holder of this host that is gone.
 *  - wait_others: a queue's waiter for others' news sleeps through the queue's own
 *    enqueue and wakes for another queue's; the public sst_postgres_queue_wait
 *    still wakes for both.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
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
    uint64_t claims = 0, empty = 0, probes = 0;
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
        uint64_t p0 = atomic_load(&s->claim_probes);
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
            probes += atomic_load(&s->claim_probes) - p0;
        }
    }
    print_message("%d runs: %llu claims, %llu of them empty, %llu asked first\n", ROUNDS,
                  (unsigned long long)claims, (unsigned long long)empty,
                  (unsigned long long)probes);
    /* Each run: the claim its enqueue woke, and its worker's claim once it ended (the
     * queue empty by then). The process's own NOTIFY woke another idle worker before:
     * three claims a run, two of them empty. Its notification may come late for the
     * last round's count, hence one claim of slack. */
    assert_true(claims <= 2 * ROUNDS + 1);
    assert_true(empty <= ROUNDS + 1);
    /* The claim an enqueue of this process woke goes without asking the queue first (the
     * run is there); the one after a run, with nothing waiting, asks (and stops there). */
    assert_true(probes <= ROUNDS + 1);
    assert_true(probes >= ROUNDS - 1);
    sst_server_stop(s);
    sst_server_free(s);
}

/* Starts a server on the group's schema with 4 workers whose idle poll is off. */
static sst_server *start_idle_server(void) {
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
    s->idle_poll_ms = 3600 * 1000; /* no polls: every claim follows a wake */
    char path[512];
    assert_int_equal(
        sst_server_add_graph(s, "chain",
                             tu_data_path("../server/graphs/chain.lua", path, sizeof path), E),
        SST_OK);
    assert_int_equal(sst_server_start(s, E), SST_OK);
    return s;
}

#define WAKES 20

static void empty_claim_one_statement(void **state) {
    (void)state;
    NEED_PG();
    sst_server *s = start_idle_server();
    /* The first claims (at start, and the waker's first listen) prepare the statements. */
    for (int i = 0; i < 2; i++) {
        uint64_t c0 = atomic_load(&s->claims);
        srv_workers_wake_remote(s);
        while (atomic_load(&s->claims) == c0) {
            usleep(1000);
        }
        settle(s);
    }
    sst__pg_stats st0, st1;
    sst__pg_commit_stats(s->pg, &st0);
    uint64_t c0 = atomic_load(&s->claims), e0 = atomic_load(&s->claims_empty);
    for (uint64_t i = 1; i <= WAKES; i++) {
        srv_workers_wake_remote(s); /* nothing is pending: a claim that finds nothing */
        while (atomic_load(&s->claims) < c0 + i) {
            usleep(1000);
        }
        settle(s);
    }
    sst__pg_commit_stats(s->pg, &st1);
    uint64_t claims = atomic_load(&s->claims) - c0, empty = atomic_load(&s->claims_empty) - e0;
    uint64_t statements = st1.statements - st0.statements;
    print_message("%d wakes: %llu claims, %llu empty, %llu statements\n", WAKES,
                  (unsigned long long)claims, (unsigned long long)empty,
                  (unsigned long long)statements);
    assert_true(claims >= WAKES);
    assert_int_equal(empty, claims);
    /* One statement each (the keeper's sweeps may add a few); a claim's transaction
     * was five (BEGIN, SAVEPOINT, the owners, the pick, ROLLBACK). */
    assert_true(statements <= claims + 8);
    sst_server_stop(s);
    sst_server_free(s);
}

/* A pid that was a process of ours and is gone. */
static pid_t dead_pid(void) {
    pid_t pid = fork();
    if (pid == 0) {
        _exit(0);
    }
    assert_true(pid > 0);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    return pid;
}

static bool seen_run(const sst_queued_run *run, void *user) {
    snprintf(user, 64, "%s", run->run_id);
    return true;
}

static bool probe(sst_queue *q, int64_t now) {
    sst_error err = {0};
    bool claimable = false;
    assert_int_equal(sst__postgres_queue_probe(q, now, &claimable, E), SST_OK);
    return claimable;
}

#define T0 ((int64_t)4000000000000) /* past every run the other cases left */

static void probe_says_maybe(void **state) {
    (void)state;
    NEED_PG();
    sst_error err = {0};
    sst_queue *q = sst_postgres_queue_open(g_url, E);
    if (q == NULL) {
        fail_msg("opening the queue: %s", err.msg);
    }
    char got[64] = "";
    assert_false(probe(q, T0)); /* nothing pending */
    /* A run due later: nothing before, maybe from then on. */
    sst_queued_run r = {.run_id = "p1", .thread_id = "tp", .run_after = T0 + 100};
    assert_int_equal(sst_queue_enqueue(q, &r, 0, E), SST_OK);
    assert_false(probe(q, T0));
    assert_true(probe(q, T0 + 100));
    /* Held elsewhere under a 1 s lease, with a second run of its thread waiting. */
    const char *far = "otherhost 0f0f-boot pid:[1] 1 1 w0";
    assert_int_equal(sst_queue_claim(q, far, T0 + 100, 1000, seen_run, got, E), SST_OK);
    assert_string_equal(got, "p1");
    r = (sst_queued_run){.run_id = "p2", .thread_id = "tp"};
    assert_int_equal(sst_queue_enqueue(q, &r, 0, E), SST_OK);
    assert_false(probe(q, T0 + 200)); /* the thread is busy: a claim finds nothing */
    assert_true(probe(q, T0 + 1101)); /* the lease expired */
    /* A run held on this host by a process that is gone: maybe at once. */
    char me[SST__OWNER_MAX], gone[SST__OWNER_MAX + 32];
    sst__owner_self(me, NULL);
    char *last = strrchr(me, ' ');
    *last = '\0';
    last = strrchr(me, ' ');
    *last = '\0'; /* the place: "HOST BOOT NS" */
    snprintf(gone, sizeof gone, "%s %d 12345 w0", me, (int)dead_pid());
    r = (sst_queued_run){.run_id = "g1", .thread_id = "tg"};
    assert_int_equal(sst_queue_enqueue(q, &r, 0, E), SST_OK);
    got[0] = '\0';
    assert_int_equal(sst_queue_claim(q, gone, T0 + 200, 60000, seen_run, got, E), SST_OK);
    assert_string_equal(got, "g1");
    assert_true(probe(q, T0 + 200));
    /* And the claim agrees: it takes g1 again. */
    got[0] = '\0';
    assert_int_equal(sst_queue_claim(q, "new", T0 + 200, 60000, seen_run, got, E), SST_OK);
    assert_string_equal(got, "g1");
    assert_false(probe(q, T0 + 200));
    bool claimable = false;
    assert_int_equal(sst__postgres_queue_probe(NULL, T0, &claimable, E), SST_EINVAL);
    const char *ids[] = {"p1", "p2", "g1"};
    for (size_t i = 0; i < sizeof ids / sizeof *ids; i++) {
        assert_int_equal(sst_queue_remove(q, ids[i], E), SST_OK);
    }
    sst_queue_free(q);
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
        cmocka_unit_test(empty_claim_one_statement),
        cmocka_unit_test(probe_says_maybe),
        cmocka_unit_test(wait_others),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
