/* SPDX-License-Identifier: MIT */
/*
 * The functional API through C (functional.h): an entrypoint submitting
 * tasks that run in parallel on the engine's workers; a future's id read by
 * its caller while its task runs (TSan); results replayed, not
 * re-run, after an interrupt, a retry of the caller and a kill -9 (a forked
 * child on a SQLite file); interrupts inside tasks answered by id; task
 * errors, retry and cache policies; previous and final; streamed updates.
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "superstep/functional.h"
#include "superstep/superstep.h"
#include "test_util.h"

static atomic_int g_runs;     /* task bodies run */
static atomic_int g_inflight; /* tasks running now */
static atomic_int g_peak;     /* most tasks running at once */

static void sleep_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

/* double(x): 2x, counting its runs; sleeps a little so that parallel calls overlap. */
static sst_code double_task(sst_node_ctx *ctx, void *ud) {
    long nap = (long)(intptr_t)ud;
    atomic_fetch_add(&g_runs, 1);
    int now = atomic_fetch_add(&g_inflight, 1) + 1;
    int peak = atomic_load(&g_peak);
    while (now > peak && !atomic_compare_exchange_weak(&g_peak, &peak, now)) {
    }
    if (nap > 0) {
        sleep_ms(nap);
    }
    atomic_fetch_sub(&g_inflight, 1);
    int64_t x = sst_int_value(sst_node_input(ctx));
    return sst_node_return(ctx, sst_int_new(2 * x, NULL), NULL);
}

static sst_compiled_graph *compile_entry(sst_graph **g, const char *name, sst_node_fn fn, void *ud,
                                         sst_cache *cache) {
    sst_error err;
    *g = sst_graph_new(&err);
    assert_non_null(*g);
    assert_sst_ok(sst_graph_set_entrypoint(*g, name, fn, ud, NULL, &err), &err);
    sst_compile_opts co;
    sst_compile_opts_init(&co);
    co.cache = cache;
    sst_compiled_graph *cg = sst_graph_compile(*g, &co, &err);
    assert_non_null(cg);
    return cg;
}

static sst_value *root_of(const sst_value *state) {
    return sst_value_ref(sst_object_get(state, SST_ROOT));
}

/* ---- parallel tasks ---- */

/* Submits input.n doubles, joins them all and returns their sum. */
static sst_code fan(sst_node_ctx *ctx, void *ud) {
    (void)ud;
    int64_t n = sst_int_value(sst_object_get(sst_entrypoint_input(ctx), "n"));
    sst_task_spec spec;
    sst_task_spec_init(&spec, "double", double_task, (void *)(intptr_t)40);
    sst_future *f[16];
    for (int64_t i = 0; i < n; i++) {
        f[i] = sst_node_submit(ctx, &spec, sst_int_new(i + 1, NULL), NULL);
        assert_non_null(f[i]);
    }
    int64_t sum = 0;
    for (int64_t i = 0; i < n; i++) {
        sst_error err;
        const sst_value *v = sst_future_result(f[i], &err);
        assert_non_null(v);
        sum += sst_int_value(v);
    }
    return sst_node_return(ctx, sst_int_new(sum, NULL), NULL);
}

typedef struct updates {
    pthread_mutex_t mu;
    int doubles, fans;
} updates;

static sst_code count_updates(sst_stream_mode mode, const char *node, const sst_value *event,
                              void *ud) {
    updates *u = ud;
    assert_int_equal(mode, SST_STREAM_UPDATES);
    pthread_mutex_lock(&u->mu);
    if (strcmp(node, "double") == 0) {
        assert_true(sst_is_int(sst_object_get(event, "double")));
        u->doubles++;
    } else if (strcmp(node, "fan") == 0) {
        u->fans++;
    }
    pthread_mutex_unlock(&u->mu);
    return SST_OK;
}

static void test_parallel_tasks(void **state) {
    (void)state;
    sst_error err;
    sst_graph *g;
    sst_compiled_graph *cg = compile_entry(&g, "fan", fan, NULL, NULL);
    assert_true(sst_compiled_graph_is_entrypoint(cg));
    sst_engine_opts eo;
    sst_engine_opts_init(&eo);
    eo.workers = 4;
    sst_engine *e = sst_engine_new(&eo, &err);
    assert_non_null(e);
    updates u = {.mu = PTHREAD_MUTEX_INITIALIZER};
    sst_invoke_opts o;
    sst_invoke_opts_init(&o);
    o.engine = e;
    o.stream = count_updates;
    o.stream_user_data = &u;
    o.stream_modes = SST_STREAM_UPDATES;
    atomic_store(&g_runs, 0);
    atomic_store(&g_peak, 0);
    sst_value *in = tu_json("{\"n\": 6}");
    sst_graph_result *r = sst_graph_invoke(cg, NULL, in, &o, &err);
    sst_value_unref(in);
    assert_non_null(r);
    assert_int_equal(sst_graph_result_status(r), SST_RUN_COMPLETED);
    sst_value *v = root_of(sst_graph_result_state(r));
    assert_json_eq(v, "42");
    sst_value_unref(v);
    sst_graph_result_free(r);
    assert_int_equal(atomic_load(&g_runs), 6);
    assert_true(atomic_load(&g_peak) >= 2); /* tasks submitted before a join overlap */
    assert_int_equal(u.doubles, 6);         /* one update per task, then the entrypoint's */
    assert_int_equal(u.fans, 1);
    sst_engine_free(e);
    sst_compiled_graph_free(cg);
    sst_graph_free(g);
}

/* ---- a future's id while its task runs ---- */

/*
 * A task that records the id it runs under, then waits until its caller has read every
 * future's id: the caller reads them while the tasks run on the workers. Before the id
 * was made by sst_node_submit, the caller and the worker both wrote it (TSan saw it).
 */
typedef struct id_gate {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool open;
    char seen[8][33]; /* the id each task saw, by its input */
} id_gate;

static sst_code id_task(sst_node_ctx *ctx, void *ud) {
    id_gate *g = ud;
    int64_t i = sst_int_value(sst_node_input(ctx));
    pthread_mutex_lock(&g->mu);
    snprintf(g->seen[i], sizeof g->seen[i], "%s", sst_node_task_id(ctx));
    while (!g->open) {
        pthread_cond_wait(&g->cv, &g->mu);
    }
    pthread_mutex_unlock(&g->mu);
    return sst_node_return(ctx, sst_int_new(i, NULL), NULL);
}

static sst_code id_fan(sst_node_ctx *ctx, void *ud) {
    id_gate *g = ud;
    sst_task_spec spec;
    sst_task_spec_init(&spec, "ids", id_task, g);
    sst_future *f[8];
    char ids[8][33];
    for (int i = 0; i < 8; i++) {
        f[i] = sst_node_submit(ctx, &spec, sst_int_new(i, NULL), NULL);
        assert_non_null(f[i]);
        snprintf(ids[i], sizeof ids[i], "%s", sst_future_id(f[i])); /* no lock: must be safe */
    }
    pthread_mutex_lock(&g->mu);
    g->open = true;
    pthread_cond_broadcast(&g->cv);
    pthread_mutex_unlock(&g->mu);
    for (int i = 0; i < 8; i++) {
        sst_error err;
        assert_non_null(sst_future_result(f[i], &err));
        assert_int_equal(strlen(ids[i]), 32);
        assert_string_equal(ids[i], g->seen[i]); /* seen: ordered by the join */
        for (int j = 0; j < i; j++) {
            assert_string_not_equal(ids[i], ids[j]);
        }
    }
    return sst_node_return(ctx, sst_int_new(8, NULL), NULL);
}

static void test_future_id_while_running(void **state) {
    (void)state;
    sst_error err;
    id_gate gate = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};
    sst_graph *g;
    sst_compiled_graph *cg = compile_entry(&g, "id_fan", id_fan, &gate, NULL);
    sst_engine_opts eo;
    sst_engine_opts_init(&eo);
    eo.workers = 4;
    sst_engine *e = sst_engine_new(&eo, &err);
    assert_non_null(e);
    sst_invoke_opts o;
    sst_invoke_opts_init(&o);
    o.engine = e;
    sst_value *in = tu_json("{}");
    sst_graph_result *r = sst_graph_invoke(cg, NULL, in, &o, &err);
    sst_value_unref(in);
    assert_non_null(r);
    assert_int_equal(sst_graph_result_status(r), SST_RUN_COMPLETED);
    sst_graph_result_free(r);
    sst_engine_free(e);
    sst_compiled_graph_free(cg);
    sst_graph_free(g);
    pthread_cond_destroy(&gate.cv);
}

/* ---- traces ---- */

typedef struct span {
    char kind[16], name[32];
    struct span *parent;
} span;

typedef struct spans {
    pthread_mutex_t mu;
    span *all[64];
    int n;
} spans;

static void *span_start(void *ud, void *parent, const char *kind, const char *name,
                        const sst_value *attrs) {
    (void)attrs;
    spans *s = ud;
    span *sp = calloc(1, sizeof *sp);
    snprintf(sp->kind, sizeof sp->kind, "%s", kind);
    snprintf(sp->name, sizeof sp->name, "%s", name);
    sp->parent = parent;
    pthread_mutex_lock(&s->mu);
    if (s->n < 64) {
        s->all[s->n++] = sp;
    }
    pthread_mutex_unlock(&s->mu);
    return sp;
}

static void span_end(void *ud, void *sp, sst_code code, const char *msg, const sst_value *attrs) {
    (void)ud, (void)sp, (void)code, (void)msg, (void)attrs;
}

/* Each task is a "task" span under its entrypoint's task span. */
static void test_task_spans(void **state) {
    (void)state;
    sst_error err;
    sst_graph *g;
    sst_compiled_graph *cg = compile_entry(&g, "fan", fan, NULL, NULL);
    spans s = {.mu = PTHREAD_MUTEX_INITIALIZER};
    sst_tracer tr = {.start = span_start, .end = span_end, .user_data = &s};
    sst_invoke_opts o;
    sst_invoke_opts_init(&o);
    o.tracer = &tr;
    sst_value *in = tu_json("{\"n\": 3}");
    sst_graph_result_free(sst_graph_invoke(cg, NULL, in, &o, &err));
    sst_value_unref(in);
    int doubles = 0;
    for (int i = 0; i < s.n; i++) {
        if (strcmp(s.all[i]->name, "double") == 0) {
            doubles++;
            assert_string_equal(s.all[i]->kind, "task");
            assert_non_null(s.all[i]->parent);
            assert_string_equal(s.all[i]->parent->name, "fan");
        }
    }
    assert_int_equal(doubles, 3);
    for (int i = 0; i < s.n; i++) {
        free(s.all[i]);
    }
    sst_compiled_graph_free(cg);
    sst_graph_free(g);
}

/* ---- interrupts ---- */

/* a = double(1); ask; b = double(2); ask again; returns [a, answer1, b, answer2]. */
static sst_code ask_twice(sst_node_ctx *ctx, void *ud) {
    (void)ud;
    sst_task_spec spec;
    sst_task_spec_init(&spec, "double", double_task, NULL);
    sst_value *out = sst_array_empty();
    for (int i = 1; i <= 2; i++) {
        sst_future *f = sst_node_submit(ctx, &spec, sst_int_new(i, NULL), NULL);
        const sst_value *v = sst_future_result(f, NULL);
        assert_non_null(v);
        out = sst_array_push_take(out, sst_value_ref(v), NULL);
        const sst_value *answer = sst_node_interrupt(ctx, sst_string_new("boo", NULL));
        if (answer == NULL) {
            sst_value_unref(out);
            return SST_EINTERRUPT;
        }
        out = sst_array_push_take(out, sst_value_ref(answer), NULL);
    }
    return sst_node_return(ctx, out, NULL);
}

static sst_graph_result *resume(const sst_compiled_graph *cg, sst_graph_thread *th,
                                const char *answer) {
    sst_error err;
    sst_invoke_opts o;
    sst_invoke_opts_init(&o);
    sst_value *a = tu_json(answer);
    o.resume = a;
    sst_graph_result *r = sst_graph_invoke(cg, th, NULL, &o, &err);
    sst_value_unref(a);
    assert_non_null(r);
    return r;
}

static void test_replay_across_interrupts(void **state) {
    (void)state;
    sst_error err;
    sst_graph *g;
    sst_compiled_graph *cg = compile_entry(&g, "graph", ask_twice, NULL, NULL);
    sst_checkpointer *cp = sst_memory_saver_new(&err);
    sst_graph_thread *th = sst_graph_thread_open(cg, cp, "i", &err);
    assert_non_null(th);
    atomic_store(&g_runs, 0);
    sst_value *in = tu_json("{}");
    sst_graph_result *r = sst_graph_invoke(cg, th, in, NULL, &err);
    sst_value_unref(in);
    assert_int_equal(sst_graph_result_status(r), SST_RUN_INTERRUPTED);
    sst_graph_result_free(r);
    r = resume(cg, th, "\"a\"");
    assert_int_equal(sst_graph_result_status(r), SST_RUN_INTERRUPTED);
    sst_graph_result_free(r);
    r = resume(cg, th, "\"b\"");
    assert_int_equal(sst_graph_result_status(r), SST_RUN_COMPLETED);
    sst_value *v = root_of(sst_graph_result_state(r));
    assert_json_eq(v, "[2, \"a\", 4, \"b\"]");
    sst_value_unref(v);
    sst_graph_result_free(r);
    /* double(1) ran once, though the entrypoint ran three times */
    assert_int_equal(atomic_load(&g_runs), 2);
    sst_graph_thread_free(th);
    sst_checkpointer_free(cp);
    sst_compiled_graph_free(cg);
    sst_graph_free(g);
}

/* A task that asks a question; its caller returns what it answered. */
static sst_code asking_task(sst_node_ctx *ctx, void *ud) {
    (void)ud;
    const sst_value *a = sst_node_interrupt(ctx, sst_value_ref(sst_node_input(ctx)));
    if (a == NULL) {
        return SST_EINTERRUPT;
    }
    return sst_node_return(ctx, sst_value_ref(a), NULL);
}

static sst_code ask_in_tasks(sst_node_ctx *ctx, void *ud) {
    (void)ud;
    sst_task_spec spec;
    sst_task_spec_init(&spec, "ask", asking_task, NULL);
    sst_future *q1 = sst_node_submit(ctx, &spec, sst_string_new("first?", NULL), NULL);
    sst_future *q2 = sst_node_submit(ctx, &spec, sst_string_new("second?", NULL), NULL);
    sst_error err;
    const sst_value *a1 = sst_future_result(q1, &err);
    const sst_value *a2 = sst_future_result(q2, &err);
    if (a1 == NULL || a2 == NULL) {
        assert_int_equal(err.code, SST_EINTERRUPT);
        return SST_EINTERRUPT;
    }
    sst_value *out = sst_array_push_take(sst_array_empty(), sst_value_ref(a1), NULL);
    out = sst_array_push_take(out, sst_value_ref(a2), NULL);
    return sst_node_return(ctx, out, NULL);
}

static void test_interrupts_in_tasks(void **state) {
    (void)state;
    sst_error err;
    sst_graph *g;
    sst_compiled_graph *cg = compile_entry(&g, "graph", ask_in_tasks, NULL, NULL);
    sst_checkpointer *cp = sst_memory_saver_new(&err);
    sst_graph_thread *th = sst_graph_thread_open(cg, cp, "t", &err);
    sst_value *in = tu_json("{}");
    sst_graph_result *r = sst_graph_invoke(cg, th, in, NULL, &err);
    sst_value_unref(in);
    assert_int_equal(sst_graph_result_status(r), SST_RUN_INTERRUPTED);
    /* both tasks asked: two interrupts, each of its task */
    const sst_value *ints = sst_graph_result_interrupts(r);
    assert_int_equal(sst_array_len(ints), 2);
    const char *id2 = sst_string_cstr(sst_object_get(sst_array_get(ints, 1), "id"));
    assert_json_eq(sst_object_get(sst_array_get(ints, 1), "value"), "\"second?\"");
    char key[64];
    snprintf(key, sizeof key, "%s", id2);
    const char *id1 = sst_string_cstr(sst_object_get(sst_array_get(ints, 0), "id"));
    char json[256];
    snprintf(json, sizeof json, "{\"%s\": \"one\", \"%s\": \"two\"}", id1, key);
    sst_graph_result_free(r);
    /* a plain resume is ambiguous with two pending interrupts */
    sst_invoke_opts o;
    sst_invoke_opts_init(&o);
    sst_value *plain = tu_json("\"x\"");
    o.resume = plain;
    r = sst_graph_invoke(cg, th, NULL, &o, &err);
    sst_value_unref(plain);
    assert_true(r == NULL || sst_graph_result_status(r) == SST_RUN_FAILED);
    sst_graph_result_free(r);
    sst_value *by_id = tu_json(json);
    sst_invoke_opts_init(&o);
    o.resume_by_id = by_id;
    r = sst_graph_invoke(cg, th, NULL, &o, &err);
    sst_value_unref(by_id);
    assert_non_null(r);
    assert_int_equal(sst_graph_result_status(r), SST_RUN_COMPLETED);
    sst_value *v = root_of(sst_graph_result_state(r));
    assert_json_eq(v, "[\"one\", \"two\"]");
    sst_value_unref(v);
    sst_graph_result_free(r);
    sst_graph_thread_free(th);
    sst_checkpointer_free(cp);
    sst_compiled_graph_free(cg);
    sst_graph_free(g);
}

/* ---- errors, retries, caching ---- */

static atomic_int g_flaky;

/* Fails with a transient error twice, then returns "ok". */
static sst_code flaky_task(sst_node_ctx *ctx, void *ud) {
    (void)ud;
    if (atomic_fetch_add(&g_flaky, 1) < 2) {
        return sst_node_fail(ctx, SST_EUNAVAILABLE, "flaky: try again");
    }
    return sst_node_return(ctx, sst_string_new("ok", NULL), NULL);
}

static sst_code failing_task(sst_node_ctx *ctx, void *ud) {
    (void)ud;
    return sst_node_fail(ctx, SST_EINVAL, "This is a test exception");
}

static sst_code errors_entry(sst_node_ctx *ctx, void *ud) {
    (void)ud;
    sst_task_spec flaky, failing;
    sst_task_spec_init(&flaky, "flaky", flaky_task, NULL);
    flaky.retry.max_attempts = 3;
    flaky.retry.initial_interval_s = 0.001;
    flaky.retry.jitter = false;
    sst_task_spec_init(&failing, "failing", failing_task, NULL);
    sst_error err;
    const sst_value *bad = sst_future_result(sst_node_submit(ctx, &failing, NULL, NULL), &err);
    assert_null(bad);
    assert_int_equal(err.code, SST_EINVAL);
    assert_non_null(strstr(err.msg, "This is a test exception"));
    const sst_value *good = sst_future_result(sst_node_submit(ctx, &flaky, NULL, NULL), &err);
    assert_non_null(good);
    /* a task may not write the state */
    return sst_node_return(ctx, sst_value_ref(good), NULL);
}

static sst_code writer_task(sst_node_ctx *ctx, void *ud) {
    (void)ud;
    return sst_node_update(ctx, "x", sst_int_new(1, NULL), NULL);
}

static sst_code writes_state(sst_node_ctx *ctx, void *ud) {
    (void)ud;
    sst_task_spec spec;
    sst_task_spec_init(&spec, "writer", writer_task, NULL);
    sst_error err;
    const sst_value *v = sst_future_result(sst_node_submit(ctx, &spec, NULL, NULL), &err);
    assert_null(v);
    assert_non_null(strstr(err.msg, "wrote to the state"));
    /* outside a task or entrypoint, return is refused */
    return SST_OK;
}

static void test_errors_and_retry(void **state) {
    (void)state;
    sst_error err;
    sst_graph *g;
    sst_compiled_graph *cg = compile_entry(&g, "graph", errors_entry, NULL, NULL);
    atomic_store(&g_flaky, 0);
    sst_value *in = tu_json("{}");
    sst_graph_result *r = sst_graph_invoke(cg, NULL, in, NULL, &err);
    assert_int_equal(sst_graph_result_status(r), SST_RUN_COMPLETED);
    assert_int_equal(atomic_load(&g_flaky), 3);
    sst_value *v = root_of(sst_graph_result_state(r));
    assert_json_eq(v, "\"ok\"");
    sst_value_unref(v);
    sst_graph_result_free(r);
    sst_compiled_graph_free(cg);
    sst_graph_free(g);
    cg = compile_entry(&g, "graph", writes_state, NULL, NULL);
    r = sst_graph_invoke(cg, NULL, in, NULL, &err);
    assert_int_equal(sst_graph_result_status(r), SST_RUN_COMPLETED);
    sst_graph_result_free(r);
    sst_value_unref(in);
    sst_compiled_graph_free(cg);
    sst_graph_free(g);
    /* the spec is checked */
    sst_task_spec bad;
    sst_task_spec_init(&bad, NULL, NULL, NULL);
    assert_null(sst_node_submit(NULL, &bad, NULL, &err));
    assert_int_equal(err.code, SST_EINVAL);
}

static sst_code cached_entry(sst_node_ctx *ctx, void *ud) {
    (void)ud;
    sst_task_spec spec;
    sst_task_spec_init(&spec, "double", double_task, NULL);
    spec.cache.enabled = true;
    const sst_value *v =
        sst_future_result(sst_node_submit(ctx, &spec, sst_int_new(21, NULL), NULL), NULL);
    assert_non_null(v);
    return sst_node_return(ctx, sst_value_ref(v), NULL);
}

static void test_cache_policy(void **state) {
    (void)state;
    sst_error err;
    sst_cache *cache = sst_memory_cache_new(&err);
    sst_graph *g;
    sst_compiled_graph *cg = compile_entry(&g, "graph", cached_entry, NULL, cache);
    atomic_store(&g_runs, 0);
    sst_value *in = tu_json("{}");
    for (int i = 0; i < 3; i++) {
        sst_graph_result *r = sst_graph_invoke(cg, NULL, in, NULL, &err);
        sst_value *v = root_of(sst_graph_result_state(r));
        assert_json_eq(v, "42");
        sst_value_unref(v);
        sst_graph_result_free(r);
    }
    assert_int_equal(atomic_load(&g_runs), 1);
    assert_sst_ok(sst_compiled_graph_clear_task_cache(cg, "double", &err), &err);
    sst_graph_result_free(sst_graph_invoke(cg, NULL, in, NULL, &err));
    assert_int_equal(atomic_load(&g_runs), 2);
    sst_value_unref(in);
    sst_compiled_graph_free(cg);
    sst_graph_free(g);
    sst_cache_free(cache);
}

/* ---- previous and final ---- */

/* Returns how many messages came before; saves the list with this one added. */
static sst_code remember(sst_node_ctx *ctx, void *ud) {
    (void)ud;
    const sst_value *prev = sst_entrypoint_previous(ctx);
    sst_value *list = sst_is_array(prev) ? sst_value_ref(prev) : sst_array_empty();
    int64_t n = (int64_t)sst_array_len(list);
    list = sst_array_push_take(list, sst_value_ref(sst_entrypoint_input(ctx)), NULL);
    return sst_node_return_final(ctx, sst_int_new(n, NULL), list, NULL);
}

static void test_previous_and_final(void **state) {
    (void)state;
    sst_error err;
    sst_graph *g;
    sst_compiled_graph *cg = compile_entry(&g, "foo", remember, NULL, NULL);
    sst_checkpointer *cp = sst_memory_saver_new(&err);
    sst_graph_thread *th = sst_graph_thread_open(cg, cp, "p", &err);
    const char *msgs[] = {"{\"__root__\": \"hello\"}", "{\"__root__\": \"goodbye\"}"};
    for (int i = 0; i < 2; i++) {
        sst_value *in = tu_json(msgs[i]);
        sst_graph_result *r = sst_graph_invoke(cg, th, in, NULL, &err);
        sst_value_unref(in);
        sst_value *v = root_of(sst_graph_result_state(r));
        char want[8];
        snprintf(want, sizeof want, "%d", i);
        assert_json_eq(v, want);
        sst_value_unref(v);
        sst_graph_result_free(r);
    }
    /* update_state sets the value and what the next run sees as previous */
    sst_value *upd = tu_json("{\"__root__\": [\"x\", \"y\", \"z\"]}");
    assert_sst_ok(sst_graph_update_state(th, NULL, upd, NULL, &err), &err);
    sst_value_unref(upd);
    sst_value *in = tu_json("{\"__root__\": \"again\"}");
    sst_graph_result *r = sst_graph_invoke(cg, th, in, NULL, &err);
    sst_value_unref(in);
    sst_value *v = root_of(sst_graph_result_state(r));
    assert_json_eq(v, "3");
    sst_value_unref(v);
    sst_graph_result_free(r);
    /* outside an entrypoint or task there is nothing to return */
    assert_int_equal(sst_node_return(NULL, sst_null(), &err), SST_EINVAL);
    sst_graph_thread_free(th);
    sst_checkpointer_free(cp);
    sst_compiled_graph_free(cg);
    sst_graph_free(g);
}

/* Runs remember three times on a new thread under @p d; the sources of its checkpoints,
 * oldest first, into @p out ("input,loop,..."). */
static void entry_sources(sst_durability d, char *out, size_t n) {
    sst_error err;
    sst_graph *g;
    sst_compiled_graph *cg = compile_entry(&g, "foo", remember, NULL, NULL);
    sst_checkpointer *cp = sst_memory_saver_new(&err);
    sst_graph_thread *th = sst_graph_thread_open(cg, cp, "d", &err);
    sst_invoke_opts o;
    sst_invoke_opts_init(&o);
    o.durability = d;
    for (int i = 0; i < 3; i++) {
        sst_value *in = tu_json("{\"__root__\": \"m\"}");
        sst_graph_result *r = sst_graph_invoke(cg, th, in, &o, &err);
        sst_value_unref(in);
        sst_value *v = root_of(sst_graph_result_state(r));
        char want[8];
        snprintf(want, sizeof want, "%d", i); /* previous survives each durability */
        assert_json_eq(v, want);
        sst_value_unref(v);
        sst_graph_result_free(r);
    }
    sst_value *h = sst_graph_get_state_history(th, NULL, 0, &err);
    assert_non_null(h);
    out[0] = '\0';
    for (size_t i = sst_array_len(h); i-- > 0;) {
        const sst_value *meta = sst_object_get(sst_array_get(h, i), "metadata");
        size_t len = strlen(out);
        snprintf(out + len, n - len, "%s%s", len > 0 ? "," : "",
                 sst_string_cstr(sst_object_get(meta, "source")));
    }
    sst_value_unref(h);
    sst_graph_thread_free(th);
    sst_checkpointer_free(cp);
    sst_compiled_graph_free(cg);
    sst_graph_free(g);
}

/* An entrypoint's start (sst__entry_persist_start): an input checkpoint and no loop one
 * before the entrypoint runs; durability "exit" holds the input back and writes one
 * checkpoint at the invoke's end; sst_entrypoint_previous reads the same under each. */
static void test_entry_durability(void **state) {
    (void)state;
    char sync[256], exit_[256];
    entry_sources(SST_DURABILITY_SYNC, sync, sizeof sync);
    entry_sources(SST_DURABILITY_EXIT, exit_, sizeof exit_);
    assert_string_equal(sync, "input,loop,input,loop,input,loop");
    assert_string_equal(exit_, "loop,loop,loop"); /* one checkpoint an invoke */
}

/* ---- kill -9 ---- */

static const char *g_log; /* the side-effect log of the crash test */

static void log_line(const char *what, int64_t i) {
    FILE *f = fopen(g_log, "a");
    assert_non_null(f);
    fprintf(f, "%s %lld\n", what, (long long)i);
    fclose(f);
}

/* step(i): logs start and done; step 3 hangs when SST_TEST_HANG is set (the child is killed). */
static sst_code step_task(sst_node_ctx *ctx, void *ud) {
    (void)ud;
    int64_t i = sst_int_value(sst_node_input(ctx));
    log_line("start", i);
    if (i == 3 && getenv("SST_TEST_HANG") != NULL) {
        for (;;) {
            sleep_ms(1000);
        }
    }
    log_line("done", i);
    return sst_node_return(ctx, sst_int_new(i * 10, NULL), NULL);
}

static sst_code three_steps(sst_node_ctx *ctx, void *ud) {
    (void)ud;
    sst_task_spec spec;
    sst_task_spec_init(&spec, "step", step_task, NULL);
    int64_t sum = 0;
    for (int64_t i = 1; i <= 3; i++) {
        const sst_value *v =
            sst_future_result(sst_node_submit(ctx, &spec, sst_int_new(i, NULL), NULL), NULL);
        assert_non_null(v);
        sum += sst_int_value(v);
    }
    return sst_node_return(ctx, sst_int_new(sum, NULL), NULL);
}

static int count_lines(const char *path, const char *line) {
    size_t len;
    char *text = tu_read_file(path, &len);
    int n = 0;
    for (const char *p = text; p != NULL && (p = strstr(p, line)) != NULL; p++) {
        n++;
    }
    free(text);
    return n;
}

static void test_kill9_replays_finished_tasks(void **state) {
    (void)state;
    char dir[256], db[300], log[300];
    assert_int_equal(tu_temp_dir("sst-func", dir, sizeof dir), 0);
    snprintf(db, sizeof db, "%s/func.db", dir);
    snprintf(log, sizeof log, "%s/log.txt", dir);
    g_log = log;
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        setenv("SST_TEST_HANG", "1", 1);
        sst_error err;
        sst_graph *g;
        sst_compiled_graph *cg = compile_entry(&g, "steps", three_steps, NULL, NULL);
        sst_checkpointer *cp = sst_sqlite_saver_open(db, NULL, &err);
        sst_graph_thread *th = cp != NULL ? sst_graph_thread_open(cg, cp, "k", &err) : NULL;
        if (th == NULL) {
            _exit(3);
        }
        sst_value *in = tu_json("{}");
        sst_graph_result_free(sst_graph_invoke(cg, th, in, NULL, &err));
        _exit(4); /* never: step 3 hangs */
    }
    /* Wait until step 3 started (steps 1 and 2 are done and recorded), then kill -9. */
    for (int i = 0; i < 3000 && count_lines(log, "start 3") == 0; i++) {
        sleep_ms(10);
    }
    assert_int_equal(count_lines(log, "start 3"), 1);
    kill(pid, SIGKILL);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status));

    sst_error err;
    sst_graph *g;
    sst_compiled_graph *cg = compile_entry(&g, "steps", three_steps, NULL, NULL);
    sst_checkpointer *cp = sst_sqlite_saver_open(db, NULL, &err);
    assert_non_null(cp);
    sst_graph_thread *th = sst_graph_thread_open(cg, cp, "k", &err);
    assert_non_null(th);
    /* no input: the run the crash cut goes on from its last checkpoint */
    sst_graph_result *r = sst_graph_invoke(cg, th, NULL, NULL, &err);
    assert_non_null(r);
    assert_int_equal(sst_graph_result_status(r), SST_RUN_COMPLETED);
    sst_value *v = root_of(sst_graph_result_state(r));
    assert_json_eq(v, "60");
    sst_value_unref(v);
    sst_graph_result_free(r);
    /* steps 1 and 2 ran once; step 3 ran again (its first run never finished) */
    assert_int_equal(count_lines(log, "start 1"), 1);
    assert_int_equal(count_lines(log, "start 2"), 1);
    assert_int_equal(count_lines(log, "start 3"), 2);
    assert_int_equal(count_lines(log, "done 3"), 1);
    sst_graph_thread_free(th);
    sst_checkpointer_free(cp);
    sst_compiled_graph_free(cg);
    sst_graph_free(g);
    tu_rm_rf(dir);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parallel_tasks),
        cmocka_unit_test(test_future_id_while_running),
        cmocka_unit_test(test_task_spans),
        cmocka_unit_test(test_replay_across_interrupts),
        cmocka_unit_test(test_interrupts_in_tasks),
        cmocka_unit_test(test_errors_and_retry),
        cmocka_unit_test(test_cache_policy),
        cmocka_unit_test(test_previous_and_final),
        cmocka_unit_test(test_entry_durability),
        cmocka_unit_test(test_kill9_replays_finished_tasks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
