/* SPDX-License-Identifier: MIT */
/*
 * Durability modes (issue 37, docs/durability.md): what each one guarantees about
 * when a superstep's checkpoint is written, shown through a saver wrapper (on a
 * SQLite file) whose put blocks on events of the run. No assertion on time: a wait
 * that times out names what did not happen.
 *
 *   - async overlaps: the put of the checkpoint after superstep 0 blocks until
 *     superstep 1's node has started; that happens only if the run went on while
 *     the checkpoint was being written. The same put in sync mode times out (the
 *     control: sync never overlaps);
 *   - async, a failing put fails the run with the saver's error (code and text),
 *     nothing after it is stored, and the thread resumes from what was;
 *   - async, the run's end and an interrupt wait for every write: the last put
 *     blocks until the invoke returned (a timeout lets it go); it must have
 *     finished before;
 *   - async with a subgraph: the child's checkpoints are stored after the
 *     parent's checkpoint they hang off (the parent's put blocks until a child
 *     put arrives, or a timeout), and the parent's next one after them;
 *   - the flush policy is the saver's, apart from the mode: a SQLite saver's
 *     connection runs synchronous NORMAL by default and FULL with SST_FLUSH_ON,
 *     whatever the durability of the runs on it.
 *
 * Where an async checkpoint is written is the compiled graph's writer pool's choice
 * (src/graph/writer.c: handed to a writer thread, or written at once by the engine's
 * thread when the pool measured that a handoff does not pay). The cases pin it: every
 * one runs with handoffs, and those whose guarantee holds either way run again with
 * every write made in the engine's thread ("_inline").
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "checkpoint/sqlite_int.h"
#include "graph/graph_int.h"
#include "superstep/superstep.h"
#include "test_util.h"

/* ---- what the wrapper and the nodes share ---- */

enum { BLOCK_NONE, BLOCK_UNTIL_NODE, BLOCK_UNTIL_RETURNED, BLOCK_UNTIL_CHILD, FAIL };

static struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int mode;            /* what the put of checkpoint (ns "", step `step`) does */
    int64_t step;        /* the step of the checkpoint it applies to */
    double timeout_s;    /* how long a blocked put waits */
    const char *node;    /* BLOCK_UNTIL_NODE: the node whose start releases it */
    bool node_started;   /* that node started */
    bool returned;       /* the invoke returned (set by the test) */
    bool blocked_done;   /* the blocked put finished */
    bool timed_out;      /* the blocked put's wait timed out */
    bool late;           /* the blocked put finished after the invoke returned */
    bool child_put_seen; /* BLOCK_UNTIL_CHILD: a child checkpoint was put meanwhile */
    bool blocking;       /* the blocked put is waiting now */
    /* the order of stores: "ns@step" for puts, "w:ns@step" for put_writes */
    char order[64][48];
    int n_order;
} S = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

static void reset(int mode, int64_t step, double timeout_s, const char *node) {
    pthread_mutex_lock(&S.mu);
    S.mode = mode;
    S.step = step;
    /* A hold that only a broken build would cut short stays as given (a slow machine can
     * only hide a failure then, never make one); a wait for an event is stretched. */
    S.timeout_s =
        mode == BLOCK_UNTIL_NODE && timeout_s >= 1 ? timeout_s * tu_time_scale() : timeout_s;
    S.node = node;
    S.node_started = S.returned = S.blocked_done = S.timed_out = S.late = false;
    S.child_put_seen = S.blocking = false;
    S.n_order = 0;
    pthread_mutex_unlock(&S.mu);
}

static void note(const char *prefix, const char *ns, int64_t step) {
    if (S.n_order < 64) {
        snprintf(S.order[S.n_order++], sizeof S.order[0], "%s%s@%lld", prefix, ns, (long long)step);
    }
}

/* Waits on S.cv until @p done or S.timeout_s passed (S.mu held); true if it timed out. */
static bool wait_for(bool *done) {
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    double t = S.timeout_s;
    until.tv_sec += (time_t)t;
    until.tv_nsec += (long)((t - (double)(time_t)t) * 1e9);
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    while (!*done) {
        if (pthread_cond_timedwait(&S.cv, &S.mu, &until) != 0 && !*done) {
            return true;
        }
    }
    return false;
}

/* ---- the saver wrapper ---- */

static sst_checkpointer *inner(void *self) {
    return self;
}

static void w_destroy(void *self) {
    sst_checkpointer_free(inner(self));
}

static sst_code w_put(void *self, const sst_checkpoint *r, bool sync, sst_error *err) {
    bool root = r->ns == NULL || r->ns[0] == '\0';
    pthread_mutex_lock(&S.mu);
    if (!root && S.blocking) {
        S.child_put_seen = true; /* stored ahead of the parent checkpoint it hangs off */
        pthread_cond_broadcast(&S.cv);
    }
    bool mine = root && r->step == S.step && S.mode != BLOCK_NONE;
    if (mine && S.mode == FAIL) {
        pthread_mutex_unlock(&S.mu);
        err->code = SST_EIO;
        snprintf(err->msg, sizeof err->msg, "disk on fire (test saver, step %lld)",
                 (long long)r->step);
        return SST_EIO;
    }
    if (mine) {
        S.blocking = true;
        bool *until = S.mode == BLOCK_UNTIL_NODE       ? &S.node_started
                      : S.mode == BLOCK_UNTIL_RETURNED ? &S.returned
                                                       : &S.child_put_seen;
        S.timed_out = wait_for(until);
        S.blocking = false;
    }
    pthread_mutex_unlock(&S.mu);
    sst_code rc = sst_checkpointer_put(inner(self), r, sync, err);
    pthread_mutex_lock(&S.mu);
    note("", r->ns != NULL ? r->ns : "", r->step);
    if (mine) {
        S.late = S.returned;
        S.blocked_done = true;
        pthread_cond_broadcast(&S.cv);
    }
    pthread_mutex_unlock(&S.mu);
    return rc;
}

static sst_code w_put_writes(void *self, const char *thread_id, const char *ns, const char *id,
                             const sst_payload *writes, sst_thread_status status, bool sync,
                             sst_error *err) {
    sst_code rc =
        sst_checkpointer_put_writes(inner(self), thread_id, ns, id, writes, status, sync, err);
    pthread_mutex_lock(&S.mu);
    note("w:", ns, 0);
    pthread_mutex_unlock(&S.mu);
    return rc;
}

static sst_code w_get(void *self, const char *thread_id, const char *ns, const char *id,
                      sst_checkpoint_fn each, void *user_data, sst_error *err) {
    sst_checkpoint *rec = sst_checkpointer_get(inner(self), thread_id, ns, id, err);
    if (rec == NULL) {
        return err->code;
    }
    each(rec, user_data);
    sst_checkpoint_free(rec);
    return SST_OK;
}

static sst_code w_list(void *self, const sst_checkpoint_query *q, sst_checkpoint_fn each,
                       void *user_data, sst_error *err) {
    return sst_checkpointer_list(inner(self), q, each, user_data, err);
}

static sst_code w_lock(void *self, const char *thread_id, bool wait, sst_error *err) {
    return sst_checkpointer_lock(inner(self), thread_id, wait, err);
}

static void w_unlock(void *self, const char *thread_id) {
    sst_checkpointer_unlock(inner(self), thread_id);
}

static char g_dir[64];
static int g_files;
static sst__write_policy g_policy = SST__WRITE_HANDOFF; /* for every graph compiled here */

/* A wrapper on a new SQLite file of the test's directory. */
static sst_checkpointer *wrapped_saver(void) {
    char path[128];
    snprintf(path, sizeof path, "%s/t%d.db", g_dir, g_files++);
    sst_error err;
    sst_checkpointer *cp = sst_sqlite_saver_open(path, NULL, &err);
    assert_non_null(cp);
    sst_checkpointer_ops ops = {.size = sizeof ops,
                                .flags = sst_checkpointer_flags(cp),
                                .destroy = w_destroy,
                                .put = w_put,
                                .put_writes = w_put_writes,
                                .get = w_get,
                                .list = w_list,
                                .lock = w_lock,
                                .unlock = w_unlock};
    sst_checkpointer *w = sst_checkpointer_new(&ops, cp, &err);
    assert_non_null(w);
    return w;
}

/* ---- the graphs ---- */

static sst_code step(sst_node_ctx *ctx, void *ud) {
    (void)ud;
    const char *name = sst_node_name(ctx);
    pthread_mutex_lock(&S.mu);
    if (S.node != NULL && strcmp(S.node, name) == 0) {
        S.node_started = true;
        pthread_cond_broadcast(&S.cv);
    }
    pthread_mutex_unlock(&S.mu);
    return sst_node_update(ctx, "log", sst_string_new(name, NULL), NULL);
}

/* START -> a -> b -> c -> END, each appending its name to "log". */
static sst_compiled_graph *chain(sst_graph **out) {
    sst_error err;
    sst_graph *g = sst_graph_new(&err);
    assert_sst_ok(sst_graph_add_field(g, "log", sst_reducer_append(), sst_array_empty(), &err),
                  &err);
    const char *names[] = {"a", "b", "c"};
    for (size_t i = 0; i < 3; i++) {
        assert_sst_ok(sst_graph_add_node(g, names[i], step, NULL, NULL, &err), &err);
    }
    assert_sst_ok(sst_graph_add_edge(g, SST_START, "a", &err), &err);
    assert_sst_ok(sst_graph_add_edge(g, "a", "b", &err), &err);
    assert_sst_ok(sst_graph_add_edge(g, "b", "c", &err), &err);
    assert_sst_ok(sst_graph_add_edge(g, "c", SST_END, &err), &err);
    sst_compiled_graph *cg = sst_graph_compile(g, NULL, &err);
    assert_non_null(cg);
    sst__write_pool_set_policy(cg->writers, g_policy);
    *out = g;
    return cg;
}

static sst_value *json(const char *text) {
    sst_value *v = sst_json_parse(text, NULL);
    assert_non_null(v);
    return v;
}

/* The canonical JSON of thread @p id's latest values on @p cp (malloc'd). */
static char *stored_log(const sst_compiled_graph *cg, sst_checkpointer *cp, const char *id) {
    sst_error err;
    sst_graph_thread *th = sst_graph_thread_open(cg, cp, id, &err);
    assert_non_null(th);
    sst_value *st = sst_graph_get_state(th, NULL, &err);
    assert_non_null(st);
    char *text = sst_json_write(sst_object_get(sst_object_get(st, "values"), "log"),
                                SST_JSON_CANONICAL, NULL, NULL);
    char *copy = strdup(text);
    sst_free(text);
    sst_value_unref(st);
    sst_graph_thread_free(th);
    return copy;
}

/* Invokes @p cg on thread @p id with @p mode; sets S.returned when it returns. */
static sst_graph_result *invoke(const sst_compiled_graph *cg, sst_checkpointer *cp, const char *id,
                                sst_durability mode, const char *input, const char *const *before,
                                size_t n_before) {
    sst_error err;
    sst_graph_thread *th = sst_graph_thread_open(cg, cp, id, &err);
    assert_non_null(th);
    sst_invoke_opts o;
    sst_invoke_opts_init(&o);
    o.durability = mode;
    o.interrupt_before = before;
    o.n_before = n_before;
    sst_value *in = input != NULL ? json(input) : NULL;
    sst_graph_result *r = sst_graph_invoke(cg, th, in, &o, &err);
    pthread_mutex_lock(&S.mu);
    S.returned = true;
    pthread_cond_broadcast(&S.cv);
    pthread_mutex_unlock(&S.mu);
    assert_non_null(r);
    sst__write_stats ws;
    sst__write_pool_stats(cg->writers, &ws); /* the writes went where the case says */
    assert_int_equal(g_policy == SST__WRITE_INLINE ? ws.handed_jobs : ws.inline_jobs, 0);
    sst_value_unref(in);
    sst_graph_thread_free(th);
    return r;
}

/* Waits (bounded) for the blocked put to finish, after the invoke returned. */
static void await_blocked_put(void) {
    pthread_mutex_lock(&S.mu);
    double saved = S.timeout_s;
    S.timeout_s = 30 * tu_time_scale();
    bool hung = wait_for(&S.blocked_done);
    S.timeout_s = saved;
    pthread_mutex_unlock(&S.mu);
    assert_false(hung);
}

/* ---- the cases ---- */

static void test_async_overlaps(void **state) {
    (void)state;
    sst_graph *g;
    sst_compiled_graph *cg = chain(&g);
    sst_checkpointer *cp = wrapped_saver();
    /* The checkpoint after superstep 0 (step 1, next b) is stored only once b started. */
    reset(BLOCK_UNTIL_NODE, 1, 10, "b");
    sst_graph_result *r = invoke(cg, cp, "t", SST_DURABILITY_ASYNC, "{}", NULL, 0);
    if (S.timed_out) {
        fail_msg("durability async did not overlap: the put of the checkpoint at step 1 waited "
                 "%.0f s and node 'b' (the next superstep) never started",
                 S.timeout_s);
    }
    assert_int_equal(sst_graph_result_status(r), SST_RUN_COMPLETED);
    sst_graph_result_free(r);
    char *log = stored_log(cg, cp, "t");
    assert_string_equal(log, "[\"a\",\"b\",\"c\"]");
    free(log);

    /* The control: sync stores it before b starts, so the same put times out. */
    reset(BLOCK_UNTIL_NODE, 1, 0.2, "b");
    r = invoke(cg, cp, "t-sync", SST_DURABILITY_SYNC, "{}", NULL, 0);
    assert_true(S.timed_out);
    assert_int_equal(sst_graph_result_status(r), SST_RUN_COMPLETED);
    sst_graph_result_free(r);
    sst_checkpointer_free(cp);
    sst_compiled_graph_free(cg);
    sst_graph_free(g);
}

static void test_async_failed_put_fails_the_run(void **state) {
    (void)state;
    sst_graph *g;
    sst_compiled_graph *cg = chain(&g);
    sst_checkpointer *cp = wrapped_saver();
    reset(FAIL, 2, 1, NULL); /* the checkpoint after b */
    sst_graph_result *r = invoke(cg, cp, "t", SST_DURABILITY_ASYNC, "{}", NULL, 0);
    assert_int_equal(sst_graph_result_status(r), SST_RUN_FAILED);
    const sst_error *e = sst_graph_result_error(r);
    assert_int_equal(e->code, SST_EIO);
    assert_non_null(strstr(e->msg, "disk on fire (test saver, step 2)"));
    sst_graph_result_free(r);
    /* Nothing after the failed one was stored: the thread is at step 1 (next b). */
    for (int i = 0; i < S.n_order; i++) {
        assert_true(strcmp(S.order[i], "@3") != 0);
    }
    char *log = stored_log(cg, cp, "t");
    assert_string_equal(log, "[\"a\"]");
    free(log);
    /* And it resumes from there to the same end. */
    reset(BLOCK_NONE, 0, 1, NULL);
    r = invoke(cg, cp, "t", SST_DURABILITY_ASYNC, NULL, NULL, 0);
    assert_int_equal(sst_graph_result_status(r), SST_RUN_COMPLETED);
    sst_graph_result_free(r);
    log = stored_log(cg, cp, "t");
    assert_string_equal(log, "[\"a\",\"b\",\"c\"]");
    free(log);
    sst_checkpointer_free(cp);
    sst_compiled_graph_free(cg);
    sst_graph_free(g);
}

static void test_async_end_waits(void **state) {
    (void)state;
    sst_graph *g;
    sst_compiled_graph *cg = chain(&g);
    sst_checkpointer *cp = wrapped_saver();
    /* The last checkpoint (step 3, after c) is held until the invoke returned, or for a
     * while: it must be stored before the invoke returns. */
    reset(BLOCK_UNTIL_RETURNED, 3, 0.3, NULL);
    sst_graph_result *r = invoke(cg, cp, "t", SST_DURABILITY_ASYNC, "{}", NULL, 0);
    await_blocked_put();
    assert_false(S.late);
    assert_int_equal(sst_graph_result_status(r), SST_RUN_COMPLETED);
    sst_graph_result_free(r);
    assert_string_equal(S.order[S.n_order - 1], "@3");
    char *log = stored_log(cg, cp, "t");
    assert_string_equal(log, "[\"a\",\"b\",\"c\"]");
    free(log);
    sst_checkpointer_free(cp);
    sst_compiled_graph_free(cg);
    sst_graph_free(g);
}

static void test_async_interrupt_waits(void **state) {
    (void)state;
    sst_graph *g;
    sst_compiled_graph *cg = chain(&g);
    sst_checkpointer *cp = wrapped_saver();
    /* interrupt_before c: the checkpoint at step 2 (next c) and the interrupt's writes
     * on it are stored, in that order, before the invoke returns. */
    reset(BLOCK_UNTIL_RETURNED, 2, 0.3, NULL);
    const char *before[] = {"c"};
    sst_graph_result *r = invoke(cg, cp, "t", SST_DURABILITY_ASYNC, "{}", before, 1);
    await_blocked_put();
    assert_false(S.late);
    assert_int_equal(sst_graph_result_status(r), SST_RUN_INTERRUPTED);
    sst_graph_result_free(r);
    assert_true(S.n_order >= 2);
    assert_string_equal(S.order[S.n_order - 2], "@2");
    assert_string_equal(S.order[S.n_order - 1], "w:@0");
    /* The thread resumes at c. */
    reset(BLOCK_NONE, 0, 1, NULL);
    r = invoke(cg, cp, "t", SST_DURABILITY_ASYNC, NULL, NULL, 0);
    assert_int_equal(sst_graph_result_status(r), SST_RUN_COMPLETED);
    sst_graph_result_free(r);
    char *log = stored_log(cg, cp, "t");
    assert_string_equal(log, "[\"a\",\"b\",\"c\"]");
    free(log);
    sst_checkpointer_free(cp);
    sst_compiled_graph_free(cg);
    sst_graph_free(g);
}

static void test_async_subgraph_order(void **state) {
    (void)state;
    sst_graph *cgb;
    sst_compiled_graph *child = chain(&cgb);
    sst_error err;
    sst_graph *g = sst_graph_new(&err);
    assert_sst_ok(sst_graph_add_field(g, "log", sst_reducer_append(), sst_array_empty(), &err),
                  &err);
    assert_sst_ok(sst_graph_add_node(g, "a", step, NULL, NULL, &err), &err);
    assert_sst_ok(sst_graph_add_subgraph(g, "sub", child, NULL, &err), &err);
    assert_sst_ok(sst_graph_add_edge(g, SST_START, "a", &err), &err);
    assert_sst_ok(sst_graph_add_edge(g, "a", "sub", &err), &err);
    assert_sst_ok(sst_graph_add_edge(g, "sub", SST_END, &err), &err);
    sst_compiled_graph *cg = sst_graph_compile(g, NULL, &err);
    assert_non_null(cg);
    sst__write_pool_set_policy(cg->writers, g_policy);
    sst_checkpointer *cp = wrapped_saver();
    /* The root's checkpoint at step 1 (next sub) is held until a child checkpoint is put
     * (a child ahead of its parent: wrong) or for a while (right). */
    reset(BLOCK_UNTIL_CHILD, 1, 0.3, NULL);
    sst_graph_result *r = invoke(cg, cp, "t", SST_DURABILITY_ASYNC, "{}", NULL, 0);
    assert_int_equal(sst_graph_result_status(r), SST_RUN_COMPLETED);
    sst_graph_result_free(r);
    assert_false(S.child_put_seen);
    /* Order: the root's @1, then every child checkpoint, then the root's @2. */
    int root1 = -1, root2 = -1, first_child = -1, last_child = -1;
    for (int i = 0; i < S.n_order; i++) {
        if (strcmp(S.order[i], "@1") == 0) {
            root1 = i;
        } else if (strcmp(S.order[i], "@2") == 0) {
            root2 = i;
        } else if (S.order[i][0] != '@' && strncmp(S.order[i], "w:", 2) != 0) {
            first_child = first_child < 0 ? i : first_child;
            last_child = i;
        }
    }
    assert_true(root1 >= 0 && first_child > root1 && root2 > last_child);
    /* The same state as the run in sync mode stores. */
    reset(BLOCK_NONE, 0, 1, NULL);
    r = invoke(cg, cp, "t-sync", SST_DURABILITY_SYNC, "{}", NULL, 0);
    assert_int_equal(sst_graph_result_status(r), SST_RUN_COMPLETED);
    sst_graph_result_free(r);
    char *log = stored_log(cg, cp, "t"), *want = stored_log(cg, cp, "t-sync");
    assert_string_equal(log, want);
    free(log);
    free(want);
    sst_checkpointer_free(cp);
    sst_compiled_graph_free(cg);
    sst_graph_free(g);
    sst_compiled_graph_free(child);
    sst_graph_free(cgb);
}

/* PRAGMA synchronous of the SQLite saver @p cp's connection: 1 NORMAL, 2 FULL. */
static int synchronous_of(sst_checkpointer *cp) {
    sqlite_saver *s = sst_checkpointer_self(cp);
    sqlite3_stmt *st = NULL;
    assert_int_equal(sqlite3_prepare_v2(s->db, "PRAGMA synchronous", -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    int v = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    return v;
}

static void test_flush_policy(void **state) {
    (void)state;
    sst_graph *g;
    sst_compiled_graph *cg = chain(&g);
    const sst_flush_policy policies[] = {SST_FLUSH_DEFAULT, SST_FLUSH_OFF, SST_FLUSH_ON};
    const int want[] = {1, 1, 2};
    for (int k = 0; k < 3; k++) {
        char path[128];
        snprintf(path, sizeof path, "%s/flush%d.db", g_dir, k);
        sst_sqlite_opts o;
        sst_sqlite_opts_init(&o);
        o.flush = policies[k];
        sst_error err;
        sst_checkpointer *cp = sst_sqlite_saver_open(path, &o, &err);
        assert_non_null(cp);
        assert_int_equal(synchronous_of(cp), want[k]);
        /* A run in any mode leaves the policy as it was (sync no longer means FULL). */
        const sst_durability modes[] = {SST_DURABILITY_SYNC, SST_DURABILITY_ASYNC,
                                        SST_DURABILITY_EXIT};
        for (int m = 0; m < 3; m++) {
            reset(BLOCK_NONE, 0, 1, NULL);
            char id[16];
            snprintf(id, sizeof id, "t%d", m);
            sst_graph_result *r = invoke(cg, cp, id, modes[m], "{}", NULL, 0);
            assert_int_equal(sst_graph_result_status(r), SST_RUN_COMPLETED);
            sst_graph_result_free(r);
            assert_int_equal(synchronous_of(cp), want[k]);
        }
        sst_checkpointer_free(cp);
    }
    /* A policy that is none of them is refused, naming it. */
    sst_sqlite_opts o;
    sst_sqlite_opts_init(&o);
    o.flush = (sst_flush_policy)7;
    sst_error err;
    char path[128];
    snprintf(path, sizeof path, "%s/bad.db", g_dir);
    assert_null(sst_sqlite_saver_open(path, &o, &err));
    assert_int_equal(err.code, SST_EINVAL);
    assert_non_null(strstr(err.msg, "flush policy 7"));
    sst_compiled_graph_free(cg);
    sst_graph_free(g);
}

static int setup(void **state) {
    (void)state;
    snprintf(g_dir, sizeof g_dir, "/tmp/sst-durability-XXXXXX");
    return mkdtemp(g_dir) != NULL ? 0 : -1;
}

static int teardown(void **state) {
    (void)state;
    return tu_rm_rf(g_dir);
}

static int writes_inline(void **state) {
    (void)state;
    g_policy = SST__WRITE_INLINE;
    return 0;
}

static int writes_handed(void **state) {
    (void)state;
    g_policy = SST__WRITE_HANDOFF;
    return 0;
}

#define INLINE_TEST(f)                                                                             \
    { #f "_inline", f, writes_inline, writes_handed, NULL }

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_async_overlaps),
        cmocka_unit_test(test_async_failed_put_fails_the_run),
        cmocka_unit_test(test_async_end_waits),
        cmocka_unit_test(test_async_interrupt_waits),
        cmocka_unit_test(test_async_subgraph_order),
        INLINE_TEST(test_async_failed_put_fails_the_run),
        INLINE_TEST(test_async_end_waits),
        INLINE_TEST(test_async_interrupt_waits),
        INLINE_TEST(test_async_subgraph_order),
        cmocka_unit_test(test_flush_policy),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
