/* SPDX-License-Identifier: MIT */
/*
 * Live events (src/graph/live.c) leave without the invoke's lock held: a node
 * that emits while it holds a lock of its own, and a stream callback that
 * takes that lock for another node's event, do not wait for each other for
 * ever; and the events of nodes running in parallel all arrive, one callback
 * call at a time, each task's in the order it emitted them.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime, pthread_mutex_timedlock */
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "superstep/superstep.h"
#include "test_util.h"

#define PER_NODE 300 /* events each node of the order test emits */

static pthread_mutex_t USER_LOCK = PTHREAD_MUTEX_INITIALIZER; /* the nodes' own lock */
static pthread_mutex_t FLAG_MU = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t FLAG_CV = PTHREAD_COND_INITIALIZER;
static bool B_IN_CALLBACK; /* the callback is delivering b's event (under FLAG_MU) */
static bool TIMED_OUT;     /* a wait that should have ended did not (a deadlock) */
static sst_value *EV;      /* the custom events as delivered, in order */
static int IN_CALLBACK;    /* callback calls under way (never more than one) */
static bool OVERLAP;       /* two callback calls ran at once */

/* A deadline that no correct run reaches, even on a busy machine. */
static struct timespec deadline(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    double s = 10.0 * tu_time_scale();
    ts.tv_sec += (time_t)s;
    return ts;
}

static sst_code callback(sst_stream_mode mode, const char *node, const sst_value *ev, void *ud) {
    (void)node;
    (void)ud;
    if (mode != SST_STREAM_CUSTOM) {
        return SST_OK;
    }
    /* One call at a time: the increments are unlocked on purpose (TSan would see two). */
    if (IN_CALLBACK++ != 0) {
        OVERLAP = true;
    }
    EV = sst_array_push_take(EV, sst_value_ref(ev), NULL);
    sst_code rc = SST_OK;
    if (sst_is_string(ev) && strcmp(sst_string_cstr(ev), "b") == 0) {
        pthread_mutex_lock(&FLAG_MU);
        B_IN_CALLBACK = true;
        pthread_cond_broadcast(&FLAG_CV);
        pthread_mutex_unlock(&FLAG_MU);
        /* Node a holds USER_LOCK while it emits: it must get its event out. */
        struct timespec d = deadline();
        if (pthread_mutex_timedlock(&USER_LOCK, &d) != 0) {
            TIMED_OUT = true;
            rc = SST_ETASK; /* ends the wait on the invoke's lock on a broken build */
        } else {
            pthread_mutex_unlock(&USER_LOCK);
        }
    }
    IN_CALLBACK--;
    return rc;
}

/* Takes USER_LOCK, waits until b's event is in the callback, emits, lets the lock go. */
static sst_code node_a(sst_node_ctx *ctx, void *ud) {
    (void)ud;
    pthread_mutex_lock(&USER_LOCK);
    pthread_mutex_lock(&FLAG_MU);
    struct timespec d = deadline();
    while (!B_IN_CALLBACK) {
        if (pthread_cond_timedwait(&FLAG_CV, &FLAG_MU, &d) != 0) {
            TIMED_OUT = true;
            break;
        }
    }
    pthread_mutex_unlock(&FLAG_MU);
    sst_code rc = sst_node_emit(ctx, sst_string_new("a", NULL), NULL);
    pthread_mutex_unlock(&USER_LOCK);
    return rc == SST_OK ? sst_node_update(ctx, "a", sst_int_new(1, NULL), NULL) : rc;
}

static sst_code node_b(sst_node_ctx *ctx, void *ud) {
    (void)ud;
    sst_code rc = sst_node_emit(ctx, sst_string_new("b", NULL), NULL);
    return rc == SST_OK ? sst_node_update(ctx, "b", sst_int_new(1, NULL), NULL) : rc;
}

/* Emits PER_NODE events ["<name>", i], i = 0, 1, ... */
static sst_code node_many(sst_node_ctx *ctx, void *ud) {
    const char *name = ud;
    sst_code rc = SST_OK;
    for (int i = 0; i < PER_NODE && rc == SST_OK; i++) {
        sst_value *e = sst_array_push_take(sst_array_empty(), sst_string_new(name, NULL), NULL);
        e = sst_array_push_take(e, sst_int_new(i, NULL), NULL);
        rc = sst_node_emit(ctx, e, NULL);
    }
    return rc == SST_OK ? sst_node_update(ctx, name, sst_int_new(1, NULL), NULL) : rc;
}

/* Runs a graph of two parallel nodes @p fa and @p fb on two workers; the run's status. */
static sst_run_status run_two(sst_node_fn fa, sst_node_fn fb) {
    sst_error err;
    sst_graph *g = sst_graph_new(NULL);
    assert_non_null(g);
    assert_sst_ok(sst_graph_add_field(g, "a", sst_reducer_replace(), NULL, &err), &err);
    assert_sst_ok(sst_graph_add_field(g, "b", sst_reducer_replace(), NULL, &err), &err);
    assert_sst_ok(sst_graph_add_node(g, "a", fa, (void *)"a", NULL, &err), &err);
    assert_sst_ok(sst_graph_add_node(g, "b", fb, (void *)"b", NULL, &err), &err);
    assert_sst_ok(sst_graph_add_edge(g, SST_START, "a", &err), &err);
    assert_sst_ok(sst_graph_add_edge(g, SST_START, "b", &err), &err);
    sst_compiled_graph *cg = sst_graph_compile(g, NULL, &err);
    assert_non_null(cg);
    sst_engine_opts eo;
    sst_engine_opts_init(&eo);
    eo.workers = 2;
    sst_engine *engine = sst_engine_new(&eo, &err);
    assert_non_null(engine);
    sst_invoke_opts o;
    sst_invoke_opts_init(&o);
    o.engine = engine;
    o.stream = callback;
    o.stream_modes = SST_STREAM_CUSTOM | SST_STREAM_UPDATES;
    sst_value *in = tu_json("{}");
    sst_graph_result *r = sst_graph_invoke(cg, NULL, in, &o, &err);
    assert_non_null(r);
    sst_run_status st = sst_graph_result_status(r);
    if (st != SST_RUN_COMPLETED) {
        print_error("run: %s\n", sst_graph_result_error(r)->msg);
    }
    sst_value_unref(in);
    sst_graph_result_free(r);
    sst_engine_free(engine);
    sst_compiled_graph_free(cg);
    sst_graph_free(g);
    return st;
}

static int setup(void **state) {
    (void)state;
    EV = sst_array_empty();
    B_IN_CALLBACK = TIMED_OUT = OVERLAP = false;
    IN_CALLBACK = 0;
    return EV == NULL;
}

static int teardown(void **state) {
    (void)state;
    sst_value_unref(EV);
    EV = NULL;
    return 0;
}

/* On a build that ran the callback under the invoke's lock, a's emit waited for that
 * lock while the callback, holding it, waited for a's USER_LOCK: the callback's timed
 * wait ran out and the run failed. */
static void test_callback_takes_a_lock_an_emitting_node_holds(void **state) {
    (void)state;
    assert_int_equal(run_two(node_a, node_b), SST_RUN_COMPLETED);
    assert_false(TIMED_OUT);
    assert_false(OVERLAP);
    /* b's event was being delivered when a emitted: a's leaves right after it. */
    assert_json_eq(EV, "[\"b\",\"a\"]");
}

static void test_parallel_emitters_keep_their_order(void **state) {
    (void)state;
    assert_int_equal(run_two(node_many, node_many), SST_RUN_COMPLETED);
    assert_false(OVERLAP);
    assert_int_equal(sst_array_len(EV), 2 * PER_NODE);
    int64_t next[2] = {0, 0};
    for (size_t i = 0; i < sst_array_len(EV); i++) {
        const sst_value *e = sst_array_get(EV, i);
        int k = strcmp(sst_string_cstr(sst_array_get(e, 0)), "a") == 0 ? 0 : 1;
        assert_int_equal(sst_int_value(sst_array_get(e, 1)), next[k]);
        next[k]++;
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_callback_takes_a_lock_an_emitting_node_holds, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_parallel_emitters_keep_their_order, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
