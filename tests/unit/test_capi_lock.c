/* SPDX-License-Identifier: MIT */
/*
 * The in-process C API's thread lock on PostgreSQL (issue 37): the lock rides
 * with the run's first commit and goes back with its last, never in
 * transactions of its own. Counted through the pool's own numbers
 * (sst__pg_commit_stats) against a real server (the CTest fixture "pg"):
 *
 *  - chain_commits: a 3-node chain (5 checkpoints) on a new thread and on one
 *    with checkpoints, durability "sync" and "async", commits 4 times, each
 *    flushed (it was 7: the lock taken and given back in transactions of their
 *    own, the input checkpoint apart from the first loop checkpoint), and
 *    leaves no lease row behind;
 *  - run_end_flag: the run's last checkpoint is told by SST_PUT_RUN_END, set by
 *    the graph, not by its bytes: a saver wrapper sees the flag on the last put
 *    only, whatever its payloads hold (an "rp" in the state included);
 *  - busy_elsewhere: a thread another saver (another process, as far as the
 *    lease goes) holds gets SST_EBUSY and nothing is written; once given back,
 *    the run goes;
 *  - moved_meanwhile: a thread another writer ran on between this invoke's
 *    load and its input checkpoint (from inside START's router) is locked and
 *    loaded again: the run goes on from the other run's state, none lost;
 *  - held_input: at the saver, an input checkpoint held for the next put
 *    (SST_PUT_WITH_NEXT) commits with it, one flush for both, or with the
 *    unlock when no put follows;
 *  - after_release: a stream callback that fails on the last events makes the
 *    run write its error after the lock went back: it takes the lock again for
 *    that write, and gives it back.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "common/pg.h"
#include "superstep/superstep.h"
#include "test_util.h"

#define E (&err)

static char g_url[600];

static int setup(void **state) {
    (void)state;
    return tu_pg_group_setup("capilock", g_url, sizeof g_url);
}

#define NEED_PG() TU_NEED_PG(g_url)

static sst_checkpointer *saver(sst_pg *pg) {
    sst_error err = {0};
    sst_checkpointer *cp = sst_postgres_saver_open_pg(pg, NULL, E);
    if (cp == NULL) {
        print_error("%s\n", err.msg);
    }
    assert_non_null(cp);
    return cp;
}

static int64_t count_rows(sst_pg *pg, const char *name, const char *sql, const char *thread) {
    sst_error err = {0};
    sst__pg_conn *c = sst__pg_get(pg, E);
    assert_non_null(c);
    sst__pg_params p;
    sst__pg_params_init(&p);
    sst__pg_text(&p, thread);
    PGresult *r = sst__pg_exec(c, name, sql, &p, "counting", E);
    if (r == NULL) {
        print_error("%s\n", err.msg);
    }
    assert_non_null(r);
    int64_t n = sst__pg_int(r, 0, 0);
    PQclear(r);
    sst__pg_put(c);
    return n;
}

static int64_t leases(sst_pg *pg, const char *thread) {
    return count_rows(pg, "capilock_leases",
                      "SELECT count(*) FROM sst_checkpoint_locks WHERE thread = $1::text", thread);
}

static int64_t checkpoints(sst_pg *pg, const char *thread) {
    return count_rows(pg, "capilock_cps",
                      "SELECT count(*) FROM sst_checkpoints WHERE thread = $1::text", thread);
}

/* ---- the chain: value + 1, * 2, - 3 ---- */

static int64_t value_of(sst_node_ctx *ctx) {
    return sst_int_value(sst_object_get(sst_node_state(ctx), "value"));
}

static sst_code node_a(sst_node_ctx *ctx, void *ud) {
    (void)ud;
    return sst_node_update(ctx, "value", sst_int_new(value_of(ctx) + 1, NULL), NULL);
}

static sst_code node_b(sst_node_ctx *ctx, void *ud) {
    (void)ud;
    return sst_node_update(ctx, "value", sst_int_new(value_of(ctx) * 2, NULL), NULL);
}

static sst_code node_c(sst_node_ctx *ctx, void *ud) {
    (void)ud;
    return sst_node_update(ctx, "value", sst_int_new(value_of(ctx) - 3, NULL), NULL);
}

/* START's router (moved_meanwhile): "a", after calling g_router_hook once if set. */
static void (*g_router_hook)(void);

static sst_value *start_router(const sst_value *state, void *ud, sst_error *err) {
    (void)state;
    (void)ud;
    void (*hook)(void) = g_router_hook;
    g_router_hook = NULL;
    if (hook != NULL) {
        hook();
    }
    return sst_string_new("a", err);
}

static sst_compiled_graph *chain(bool routed) {
    sst_error err = {0};
    sst_graph *g = sst_graph_new(E);
    assert_non_null(g);
    assert_int_equal(sst_graph_add_node(g, "a", node_a, NULL, NULL, E), SST_OK);
    assert_int_equal(sst_graph_add_node(g, "b", node_b, NULL, NULL, E), SST_OK);
    assert_int_equal(sst_graph_add_node(g, "c", node_c, NULL, NULL, E), SST_OK);
    if (routed) {
        assert_int_equal(sst_graph_add_conditional_edges(g, SST_START, start_router, NULL, NULL, E),
                         SST_OK);
    } else {
        assert_int_equal(sst_graph_add_edge(g, SST_START, "a", E), SST_OK);
    }
    assert_int_equal(sst_graph_add_edge(g, "a", "b", E), SST_OK);
    assert_int_equal(sst_graph_add_edge(g, "b", "c", E), SST_OK);
    assert_int_equal(sst_graph_add_edge(g, "c", SST_END, E), SST_OK);
    sst_compiled_graph *cg = sst_graph_compile(g, NULL, E);
    sst_graph_free(g);
    assert_non_null(cg);
    return cg;
}

/* ---- commits per run ---- */

static void chain_commits(void **state) {
    (void)state;
    NEED_PG();
    sst_error err = {0};
    sst_pg *pg = tu_pg_pool(g_url, 2);
    sst_checkpointer *cp = saver(pg);
    sst_compiled_graph *cg = chain(false);
    const sst_durability modes[] = {SST_DURABILITY_SYNC, SST_DURABILITY_ASYNC};
    for (size_t m = 0; m < 2; m++) {
        char thread[64];
        snprintf(thread, sizeof thread, "commits-%zu", m);
        for (int round = 0; round < 2; round++) { /* a new thread, then one with checkpoints */
            sst__pg_stats before, after;
            sst__pg_commit_stats(pg, &before);
            int64_t v = 0;
            sst_code rc = tu_invoke_value(cg, cp, thread, round * 10, modes[m], &v, E);
            if (rc != SST_OK) {
                print_error("%s\n", err.msg);
            }
            assert_int_equal(rc, SST_OK);
            assert_int_equal(v, (round * 10 + 1) * 2 - 3);
            sst__pg_commit_stats(pg, &after);
            uint64_t flushed = after.flushed - before.flushed;
            uint64_t unflushed = after.unflushed - before.unflushed;
            print_message("%s, round %d: %llu flushed commits (%llu unflushed), %llu jobs, "
                          "%llu statements\n",
                          m == 0 ? "sync" : "async", round, (unsigned long long)flushed,
                          (unsigned long long)unflushed,
                          (unsigned long long)(after.jobs - before.jobs),
                          (unsigned long long)(after.statements - before.statements));
            assert_int_equal(checkpoints(pg, thread), 5 * (round + 1)); /* steps -1 .. 3 */
            /* The lock taken with the input checkpoint, which commits with the first loop
             * checkpoint; one commit per later checkpoint, the lock given back with the last:
             * supersteps + 1 (was 7: the lock's own two, the input's). Every commit flushed
             * (the default). */
            assert_int_equal(flushed, 4);
            /* The lease taken and given back inside the puts' own statements: the thread's
             * read, BEGIN and the input's put, the first loop checkpoint's with the COMMIT,
             * then BEGIN, put, COMMIT for each later one (14; 18 with the lease in statements
             * of its own). */
            assert_true(after.statements - before.statements <= 14);
            assert_int_equal(unflushed, 0);
            assert_int_equal(leases(pg, thread), 0);
        }
    }
    sst_compiled_graph_free(cg);
    sst_checkpointer_free(cp);
    sst_pg_release(pg);
}

/* ---- the run's end, told by a flag ---- */

/* A saver that hands every call to the PostgreSQL saver and records each put's flags. */
typedef struct spy {
    sst_checkpointer *inner;
    unsigned flags[16];
    char source[16][16];
    size_t n;
} spy;

static sst_code spy_put(void *self, const sst_checkpoint *rec, bool sync, sst_error *err) {
    spy *s = self;
    if (s->n < 16) {
        s->flags[s->n] = rec->put_flags;
        snprintf(s->source[s->n], sizeof s->source[0], "%s", rec->source);
        s->n++;
    }
    /* Without SST_SAVER_LOCK_IN_PUT the wrapper took the lock flags off. */
    assert_int_equal(rec->put_flags & (SST_PUT_TAKE_LOCK | SST_PUT_GIVE_LOCK), 0);
    return sst_checkpointer_put(s->inner, rec, sync, err);
}

static sst_code spy_put_writes(void *self, const char *thread, const char *ns, const char *id,
                               const sst_payload *writes, sst_thread_status status, bool sync,
                               sst_error *err) {
    spy *s = self;
    return sst_checkpointer_put_writes(s->inner, thread, ns, id, writes, status, sync, err);
}

typedef struct fwd {
    sst_checkpoint_fn each;
    void *user;
} fwd;

static sst_code spy_get(void *self, const char *thread, const char *ns, const char *id,
                        sst_checkpoint_fn each, void *user, sst_error *err) {
    spy *s = self;
    sst_checkpoint *rec = sst_checkpointer_get(s->inner, thread, ns, id, err);
    if (rec == NULL) {
        return sst__code(err);
    }
    each(rec, user);
    sst_checkpoint_free(rec);
    return SST_OK;
}

static sst_code spy_list(void *self, const sst_checkpoint_query *q, sst_checkpoint_fn each,
                         void *user, sst_error *err) {
    spy *s = self;
    return sst_checkpointer_list(s->inner, q, each, user, err);
}

static sst_code spy_lock(void *self, const char *thread, bool wait, sst_error *err) {
    spy *s = self;
    return sst_checkpointer_lock(s->inner, thread, wait, err);
}

static void spy_unlock(void *self, const char *thread) {
    spy *s = self;
    sst_checkpointer_unlock(s->inner, thread);
}

static void spy_destroy(void *self) {
    (void)self;
}

static void run_end_flag(void **state) {
    (void)state;
    NEED_PG();
    sst_error err = {0};
    sst_pg *pg = tu_pg_pool(g_url, 2);
    spy s = {.inner = saver(pg)};
    const sst_checkpointer_ops ops = {
        .size = sizeof ops,
        .destroy = spy_destroy,
        .put = spy_put,
        .put_writes = spy_put_writes,
        .get = spy_get,
        .list = spy_list,
        .lock = spy_lock,
        .unlock = spy_unlock,
    };
    sst_checkpointer *cp = sst_checkpointer_new(&ops, &s, E);
    assert_non_null(cp);
    sst_compiled_graph *cg = chain(false);
    /* An "rp" in the state: the payloads say nothing about the run's end. */
    sst_value *input = sst_json_parse("{\"value\":1,\"rp\":\"rp\"}", NULL);
    assert_non_null(input);
    sst_graph_thread *th = sst_graph_thread_open(cg, cp, "run-end", E);
    assert_non_null(th);
    sst_invoke_opts o;
    sst_invoke_opts_init(&o);
    o.durability = SST_DURABILITY_SYNC;
    sst_graph_result *r = sst_graph_invoke(cg, th, input, &o, E);
    assert_non_null(r);
    assert_int_equal(sst_graph_result_status(r), SST_RUN_COMPLETED);
    sst_graph_result_free(r);
    assert_int_equal(s.n, 5);
    for (size_t i = 0; i < s.n; i++) {
        /* The last only (a saver without SST_SAVER_LOCK_IN_PUT is not asked to hold the
         * input checkpoint for the next either). */
        assert_int_equal(s.flags[i], i + 1 == s.n ? SST_PUT_RUN_END : 0u);
    }
    assert_string_equal(s.source[0], "input");
    assert_int_equal(leases(pg, "run-end"), 0);
    sst_value_unref(input);
    sst_graph_thread_free(th);
    sst_compiled_graph_free(cg);
    sst_checkpointer_free(cp);
    sst_checkpointer_free(s.inner);
    sst_pg_release(pg);
}

/* ---- contention ---- */

static void busy_elsewhere(void **state) {
    (void)state;
    NEED_PG();
    sst_error err = {0};
    sst_pg *pg = tu_pg_pool(g_url, 2), *other_pg = tu_pg_pool(g_url, 1);
    sst_checkpointer *cp = saver(pg), *other = saver(other_pg);
    sst_compiled_graph *cg = chain(false);
    assert_int_equal(tu_invoke_value(cg, cp, "busy", 0, SST_DURABILITY_SYNC, NULL, E), SST_OK);
    assert_int_equal(sst_checkpointer_lock(other, "busy", false, E), SST_OK);
    sst__pg_stats before, after;
    sst__pg_commit_stats(pg, &before);
    sst_error_clear(E);
    assert_int_equal(tu_invoke_value(cg, cp, "busy", 1, SST_DURABILITY_SYNC, NULL, E), SST_EBUSY);
    assert_non_null(strstr(err.msg, "busy"));
    sst__pg_commit_stats(pg, &after);
    assert_int_equal(after.flushed - before.flushed, 0); /* nothing committed */
    assert_int_equal(checkpoints(pg, "busy"), 5);
    assert_int_equal(leases(pg, "busy"), 1); /* the other's */
    sst_checkpointer_unlock(other, "busy");
    int64_t v = 0;
    assert_int_equal(tu_invoke_value(cg, cp, "busy", 1, SST_DURABILITY_SYNC, &v, E), SST_OK);
    assert_int_equal(v, 1);
    assert_int_equal(checkpoints(pg, "busy"), 10);
    assert_int_equal(leases(pg, "busy"), 0);
    sst_compiled_graph_free(cg);
    sst_checkpointer_free(cp);
    sst_checkpointer_free(other);
    sst_pg_release(pg);
    sst_pg_release(other_pg);
}

static sst_checkpointer *g_other;
static const sst_compiled_graph *g_plain;

/* Runs the plain chain on thread "moved" through the other saver (another lease owner). */
static void run_elsewhere(void) {
    sst_error err = {0};
    int64_t v = 0;
    assert_int_equal(tu_invoke_value(g_plain, g_other, "moved", 100, SST_DURABILITY_SYNC, &v, E),
                     SST_OK);
    assert_int_equal(v, 199);
}

static void moved_meanwhile(void **state) {
    (void)state;
    NEED_PG();
    sst_error err = {0};
    sst_pg *pg = tu_pg_pool(g_url, 2), *other_pg = tu_pg_pool(g_url, 1);
    sst_checkpointer *cp = saver(pg);
    g_other = saver(other_pg);
    sst_compiled_graph *routed = chain(true), *plain = chain(false);
    g_plain = plain;
    assert_int_equal(tu_invoke_value(routed, cp, "moved", 0, SST_DURABILITY_SYNC, NULL, E), SST_OK);
    /* This invoke loads the thread (5 checkpoints), then its START router runs a whole run
     * of another writer on it, before this run's input checkpoint. */
    g_router_hook = run_elsewhere;
    sst_invoke_opts o;
    sst_invoke_opts_init(&o);
    o.durability = SST_DURABILITY_SYNC;
    sst_graph_thread *th = sst_graph_thread_open(routed, cp, "moved", E);
    assert_non_null(th);
    sst_value *input = sst_json_parse("{}", NULL);
    sst_graph_result *r = sst_graph_invoke(routed, th, input, &o, E);
    if (r == NULL) {
        print_error("%s\n", err.msg);
    }
    assert_non_null(r);
    assert_int_equal(sst_graph_result_status(r), SST_RUN_COMPLETED);
    assert_null(g_router_hook);
    /* From the other run's state (199), not from the one this invoke loaded first (-1). */
    assert_int_equal(sst_int_value(sst_object_get(sst_graph_result_state(r), "value")), 397);
    sst_graph_result_free(r);
    sst_value_unref(input);
    sst_graph_thread_free(th);
    assert_int_equal(checkpoints(pg, "moved"), 15);
    assert_int_equal(leases(pg, "moved"), 0);
    sst_compiled_graph_free(routed);
    sst_compiled_graph_free(plain);
    sst_checkpointer_free(cp);
    sst_checkpointer_free(g_other);
    sst_pg_release(pg);
    sst_pg_release(other_pg);
}

/* ---- a put held for the next (SST_PUT_WITH_NEXT), at the saver ---- */

static sst_checkpoint record(const char *thread, const char *id, const char *parent, int64_t step,
                             unsigned flags) {
    return (sst_checkpoint){
        .format = SST_CHECKPOINT_FORMAT,
        .thread_id = thread,
        .ns = "",
        .id = id,
        .parent_id = parent,
        .step = step,
        .source = step < 0 ? "input" : "loop",
        .kind = SST_CHECKPOINT_SNAPSHOT,
        .created_at = 1,
        .body = {.data = "{}", .len = 2},
        .put_flags = flags,
    };
}

static void held_input(void **state) {
    (void)state;
    NEED_PG();
    sst_error err = {0};
    sst_pg *pg = tu_pg_pool(g_url, 2);
    sst_checkpointer *cp = saver(pg);
    /* Held, then committed with the next put of the thread: one flush for both, the lease
     * taken with the first. */
    sst__pg_stats before, after;
    sst__pg_commit_stats(pg, &before);
    sst_checkpoint r = record("held", "01", NULL, -1, SST_PUT_TAKE_LOCK | SST_PUT_WITH_NEXT);
    assert_int_equal(sst_checkpointer_put(cp, &r, false, E), SST_OK);
    assert_int_equal(checkpoints(pg, "held"), 0); /* not committed yet (another connection) */
    r = record("held", "02", "01", 0, 0);
    assert_int_equal(sst_checkpointer_put(cp, &r, false, E), SST_OK);
    sst__pg_commit_stats(pg, &after);
    assert_int_equal(after.flushed - before.flushed, 1);
    assert_int_equal(checkpoints(pg, "held"), 2);
    assert_int_equal(leases(pg, "held"), 1);
    r = record("held", "03", "02", 1, SST_PUT_RUN_END | SST_PUT_GIVE_LOCK);
    assert_int_equal(sst_checkpointer_put(cp, &r, false, E), SST_OK);
    assert_int_equal(leases(pg, "held"), 0);
    /* Held, and no put follows (the run failed in between): the unlock commits it, then
     * gives the lease back. */
    r = record("held2", "01", NULL, -1, SST_PUT_TAKE_LOCK | SST_PUT_WITH_NEXT);
    assert_int_equal(sst_checkpointer_put(cp, &r, false, E), SST_OK);
    assert_int_equal(checkpoints(pg, "held2"), 0);
    sst_checkpointer_unlock(cp, "held2");
    assert_int_equal(checkpoints(pg, "held2"), 1);
    assert_int_equal(leases(pg, "held2"), 0);
    sst_checkpointer_free(cp);
    sst_pg_release(pg);
}

/* ---- a write after the lock went back ---- */

static sst_code fail_on_end(sst_stream_mode mode, const char *node, const sst_value *payload,
                            void *ud) {
    (void)node;
    (void)payload;
    int *seen = ud;
    if (mode == SST_STREAM_VALUES && ++*seen == 4) { /* the input, then after a, b and c */
        return SST_EIO;
    }
    return SST_OK;
}

static void after_release(void **state) {
    (void)state;
    NEED_PG();
    sst_error err = {0};
    sst_pg *pg = tu_pg_pool(g_url, 2);
    sst_checkpointer *cp = saver(pg);
    sst_compiled_graph *cg = chain(false);
    sst_graph_thread *th = sst_graph_thread_open(cg, cp, "after", E);
    assert_non_null(th);
    int seen = 0;
    sst_invoke_opts o;
    sst_invoke_opts_init(&o);
    o.durability = SST_DURABILITY_SYNC;
    o.stream = fail_on_end;
    o.stream_user_data = &seen;
    o.stream_modes = SST_STREAM_VALUES;
    sst_value *input = sst_json_parse("{\"value\":1}", NULL);
    sst_graph_result *r = sst_graph_invoke(cg, th, input, &o, E);
    assert_non_null(r);
    print_message("status %d: %s (%d values events)\n", (int)sst_graph_result_status(r),
                  sst_graph_result_error(r)->msg, seen);
    assert_int_equal(sst_graph_result_status(r), SST_RUN_FAILED);
    sst_graph_result_free(r);
    sst_value_unref(input);
    sst_graph_thread_free(th);
    assert_int_equal(checkpoints(pg, "after"), 5);
    assert_int_equal(leases(pg, "after"), 0); /* taken again for the write, given back */
    /* The error is on the last checkpoint: its status. */
    assert_int_equal(count_rows(pg, "capilock_errors",
                                "SELECT count(*) FROM sst_checkpoints WHERE thread = $1::text"
                                " AND status = 3",
                                "after"),
                     1);
    sst_compiled_graph_free(cg);
    sst_checkpointer_free(cp);
    sst_pg_release(pg);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(chain_commits),  cmocka_unit_test(run_end_flag),
        cmocka_unit_test(busy_elsewhere), cmocka_unit_test(moved_meanwhile),
        cmocka_unit_test(after_release),  cmocka_unit_test(held_input),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
