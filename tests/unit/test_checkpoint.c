/* SPDX-License-Identifier: MIT */
/*
 * Durable threads through the memory and SQLite savers: history and state,
 * pending-writes resume, interrupts resumed in a fresh process, time travel
 * (forks), update_state, durability modes, bad database files, and the
 * equivalence of delta-replayed states with what the engine computed.
 */
#define _GNU_SOURCE /* mkdtemp, fork */
#include <fcntl.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_util.h"

static char g_dir[256];

static const char *db_path(const char *name, char *buf, size_t n) {
    snprintf(buf, n, "%s/%s", g_dir, name);
    return buf;
}

static int group_setup(void **state) {
    (void)state;
    return tu_temp_dir("ckpt", g_dir, sizeof g_dir);
}

static int group_teardown(void **state) {
    (void)state;
    return tu_rm_rf(g_dir);
}

/* Counts a call in a file: one byte appended per call (also across processes). */
static void count_call(const char *name) {
    char path[300];
    snprintf(path, sizeof path, "%s/calls-%s", g_dir, name);
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) {
        ssize_t w = write(fd, "x", 1);
        (void)w;
        close(fd);
    }
}

static long calls(const char *name) {
    char path[300];
    snprintf(path, sizeof path, "%s/calls-%s", g_dir, name);
    struct stat st;
    return stat(path, &st) == 0 ? (long)st.st_size : 0;
}

/* ---- nodes ---- */

static sst_code logger(sst_node_ctx *ctx, void *ud) {
    (void)ud;
    count_call(sst_node_name(ctx));
    sst_value *name = sst_string_new(sst_node_name(ctx), NULL);
    return sst_node_update(ctx, "log", sst_array_push_take(sst_array_empty(), name, NULL), NULL);
}

static int g_two_fixed; /* 0: "two" always fails; 1: it returns 3 */

static sst_code one(sst_node_ctx *ctx, void *ud) {
    (void)ud;
    count_call("one");
    return sst_node_update(ctx, "value", sst_int_new(2, NULL), NULL);
}

static sst_code two(sst_node_ctx *ctx, void *ud) {
    (void)ud;
    count_call("two");
    if (!g_two_fixed) {
        return sst_node_fail(ctx, SST_ETASK, "two is broken");
    }
    return sst_node_update(ctx, "value", sst_int_new(3, NULL), NULL);
}

/* ---- helpers ---- */

typedef struct app {
    sst_graph *g;
    sst_compiled_graph *cg;
    sst_checkpointer *cp;
    sst_graph_thread *th;
} app;

static void app_close(app *a) {
    sst_graph_thread_free(a->th);
    sst_checkpointer_free(a->cp);
    sst_compiled_graph_free(a->cg);
    sst_graph_free(a->g);
    memset(a, 0, sizeof *a);
}

static void app_open(app *a, const char *db, const char *thread) {
    sst_error err;
    if (db != NULL) {
        a->cp = sst_sqlite_saver_open(db, NULL, &err);
    } else {
        a->cp = sst_memory_saver_new(&err);
    }
    if (a->cp == NULL) {
        print_error("open: %s\n", err.msg);
        fail();
    }
    a->cg = sst_graph_compile(a->g, NULL, &err);
    assert_non_null(a->cg);
    a->th = sst_graph_thread_open(a->cg, a->cp, thread, &err);
    assert_non_null(a->th);
}

static void app_open_opts(app *a, const char *db, const char *thread, const sst_compile_opts *co) {
    sst_error err;
    a->cp = db != NULL ? sst_sqlite_saver_open(db, NULL, &err) : sst_memory_saver_new(&err);
    assert_non_null(a->cp);
    a->cg = sst_graph_compile(a->g, co, &err);
    assert_non_null(a->cg);
    a->th = sst_graph_thread_open(a->cg, a->cp, thread, &err);
    assert_non_null(a->th);
}

static sst_graph_result *run(app *a, const char *input, const sst_invoke_opts *o) {
    sst_error err;
    sst_value *in = input != NULL ? tu_json(input) : NULL;
    sst_graph_result *r = sst_graph_invoke(a->cg, a->th, in, o, &err);
    sst_value_unref(in);
    if (r == NULL) {
        print_error("invoke: %s: %s\n", sst_code_name(err.code), err.msg);
        fail();
    }
    return r;
}

/* Runs @p fn in a child process (a fresh process for the resume scenarios). */
static void in_child(void (*fn)(void)) {
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        fn();
        _exit(0);
    }
    int status;
    waitpid(pid, &status, 0);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

/* ---- chain a -> b: state, history ---- */

static void build_chain(app *a) {
    sst_error err;
    a->g = sst_graph_new(&err);
    assert_sst_ok(sst_graph_add_field(a->g, "log", sst_reducer_append(), sst_array_empty(), &err),
                  &err);
    assert_sst_ok(sst_graph_add_node(a->g, "a", logger, NULL, NULL, &err), &err);
    assert_sst_ok(sst_graph_add_node(a->g, "b", logger, NULL, NULL, &err), &err);
    assert_sst_ok(sst_graph_add_edge(a->g, SST_START, "a", &err), &err);
    assert_sst_ok(sst_graph_add_edge(a->g, "a", "b", &err), &err);
    assert_sst_ok(sst_graph_add_edge(a->g, "b", SST_END, &err), &err);
}

static void check_history_and_state(const char *db) {
    app a = {0};
    build_chain(&a);
    app_open(&a, db, "t-chain");
    sst_graph_result *r = run(&a, "{\"log\":[\"in\"]}", NULL);
    assert_int_equal(sst_graph_result_status(r), SST_RUN_COMPLETED);
    sst_graph_result_free(r);
    sst_error err;
    sst_value *st = sst_graph_get_state(a.th, NULL, &err);
    assert_non_null(st);
    assert_json_eq(sst_object_get(st, "values"), "{\"log\":[\"in\",\"a\",\"b\"]}");
    assert_json_eq(sst_object_get(st, "next"), "[]");
    assert_int_equal(sst_int_value(sst_object_get(st, "step")), 2);
    assert_string_equal(sst_string_cstr(sst_object_get(sst_object_get(st, "metadata"), "source")),
                        "loop");
    sst_value_unref(st);
    sst_value *h = sst_graph_get_state_history(a.th, NULL, 0, &err);
    assert_int_equal(sst_array_len(h), 4);
    const char *sources[] = {"loop", "loop", "loop", "input"};
    const int64_t steps[] = {2, 1, 0, -1};
    const char *nexts[] = {"[]", "[\"b\"]", "[\"a\"]", "[\"__start__\"]"};
    for (size_t i = 0; i < 4; i++) {
        const sst_value *s = sst_array_get(h, i);
        assert_int_equal(sst_int_value(sst_object_get(s, "step")), steps[i]);
        assert_string_equal(
            sst_string_cstr(sst_object_get(sst_object_get(s, "metadata"), "source")), sources[i]);
        assert_json_eq(sst_object_get(s, "next"), nexts[i]);
    }
    assert_json_eq(sst_object_get(sst_array_get(h, 3), "values"), "{\"log\":[]}");
    assert_json_eq(sst_object_get(sst_array_get(h, 1), "values"), "{\"log\":[\"in\",\"a\"]}");
    sst_value_unref(h);
    /* Metadata filters and limits. */
    sst_value *filter = tu_json("{\"source\":\"input\"}");
    h = sst_graph_get_state_history(a.th, filter, 0, &err);
    assert_int_equal(sst_array_len(h), 1);
    sst_value_unref(h);
    sst_value_unref(filter);
    h = sst_graph_get_state_history(a.th, NULL, 2, &err);
    assert_int_equal(sst_array_len(h), 2);
    sst_value_unref(h);
    /* A second invoke continues the thread: input step 3, loops 4..6. */
    r = run(&a, "{\"log\":[\"again\"]}", NULL);
    assert_json_eq(sst_graph_result_state(r),
                   "{\"log\":[\"in\",\"a\",\"b\",\"again\",\"a\",\"b\"]}");
    sst_graph_result_free(r);
    st = sst_graph_get_state(a.th, NULL, &err);
    assert_int_equal(sst_int_value(sst_object_get(st, "step")), 6);
    sst_value_unref(st);
    assert_null(sst_graph_get_state(a.th, "no-such-id", &err));
    assert_int_equal(err.code, SST_ENOTFOUND);
    app_close(&a);
}

static void test_history_memory(void **state) {
    (void)state;
    check_history_and_state(NULL);
}

static void test_history_sqlite(void **state) {
    (void)state;
    char db[300];
    check_history_and_state(db_path("chain.db", db, sizeof db));
}

/* ---- pending writes resume across processes ---- */

static void build_one_two(app *a) {
    sst_error err;
    a->g = sst_graph_new(&err);
    assert_sst_ok(sst_graph_add_field(a->g, "value", sst_reducer_sum(), sst_int_new(0, NULL), &err),
                  &err);
    sst_node_opts o;
    sst_node_opts_init(&o);
    o.retry.max_attempts = 2;
    o.retry.jitter = false;
    o.retry.initial_interval_s = 0.001;
    assert_sst_ok(sst_graph_add_node(a->g, "one", one, NULL, &o, &err), &err);
    assert_sst_ok(sst_graph_add_node(a->g, "two", two, NULL, &o, &err), &err);
    assert_sst_ok(sst_graph_add_edge(a->g, SST_START, "one", &err), &err);
    assert_sst_ok(sst_graph_add_edge(a->g, SST_START, "two", &err), &err);
}

static char g_db[300];

static void pending_first_process(void) {
    app a = {0};
    build_one_two(&a);
    app_open(&a, g_db, "t-pending");
    sst_graph_result *r = run(&a, "{\"value\":1}", NULL);
    int ok = sst_graph_result_status(r) == SST_RUN_FAILED &&
             strcmp(sst_graph_result_error_node(r), "two") == 0;
    sst_graph_result_free(r);
    app_close(&a);
    if (!ok) {
        _exit(3);
    }
}

static void test_pending_writes_resume(void **state) {
    (void)state;
    db_path("pending.db", g_db, sizeof g_db);
    g_two_fixed = 0;
    in_child(pending_first_process);
    assert_int_equal(calls("one"), 1);
    assert_int_equal(calls("two"), 2); /* two attempts */
    /* A fresh process (this one) reads the state. */
    app a = {0};
    build_one_two(&a);
    app_open(&a, g_db, "t-pending");
    sst_error err;
    sst_value *st = sst_graph_get_state(a.th, NULL, &err);
    /* At the head, one's successful write is applied and one leaves next (LangGraph). */
    assert_json_eq(sst_object_get(st, "values"), "{\"value\":3}");
    /* LangGraph's pending writes: one's write and two's error, [task_id, channel, value]. */
    const sst_value *pw = sst_object_get(st, "pending_writes");
    const sst_value *tasks0 = sst_object_get(st, "tasks");
    assert_int_equal(sst_array_len(pw), 2);
    assert_string_equal(sst_string_cstr(sst_array_get(sst_array_get(pw, 0), 0)),
                        sst_string_cstr(sst_object_get(sst_array_get(tasks0, 0), "id")));
    assert_string_equal(sst_string_cstr(sst_array_get(sst_array_get(pw, 0), 1)), "value");
    assert_json_eq(sst_array_get(sst_array_get(pw, 0), 2), "2");
    assert_string_equal(sst_string_cstr(sst_array_get(sst_array_get(pw, 1), 0)),
                        sst_string_cstr(sst_object_get(sst_array_get(tasks0, 1), "id")));
    assert_string_equal(sst_string_cstr(sst_array_get(sst_array_get(pw, 1), 1)), "__error__");
    assert_non_null(
        strstr(sst_string_cstr(sst_array_get(sst_array_get(pw, 1), 2)), "two is broken"));
    assert_json_eq(sst_object_get(st, "next"), "[\"two\"]");
    assert_non_null(strstr(sst_string_cstr(sst_object_get(st, "error")), "two is broken"));
    const sst_value *tasks = sst_object_get(st, "tasks");
    assert_int_equal(sst_array_len(tasks), 2);
    assert_json_eq(sst_object_get(sst_array_get(tasks, 0), "result"), "{\"value\":2}");
    assert_non_null(
        strstr(sst_string_cstr(sst_object_get(sst_array_get(tasks, 1), "error")), "two is broken"));
    sst_value_unref(st);
    sst_value *h = sst_graph_get_state_history(a.th, NULL, 0, &err);
    assert_int_equal(sst_array_len(h), 2);
    assert_int_equal(sst_int_value(sst_object_get(sst_array_get(h, 0), "step")), 0);
    assert_int_equal(sst_int_value(sst_object_get(sst_array_get(h, 1), "step")), -1);
    sst_value_unref(h);
    /* Fix two and resume: only the failed task runs again. */
    g_two_fixed = 1;
    sst_graph_result *r = run(&a, NULL, NULL);
    assert_int_equal(sst_graph_result_status(r), SST_RUN_COMPLETED);
    assert_json_eq(sst_graph_result_state(r), "{\"value\":6}");
    sst_graph_result_free(r);
    assert_int_equal(calls("one"), 1);
    assert_int_equal(calls("two"), 3);
    app_close(&a);
}

/* ---- interrupts across processes ---- */

static sst_code two_questions(sst_node_ctx *ctx, void *ud) {
    (void)ud;
    count_call("ask");
    return tu_ask_two_questions(ctx);
}

static void build_ask(app *a) {
    sst_error err;
    a->g = sst_graph_new(&err);
    assert_sst_ok(sst_graph_add_node(a->g, "ask", two_questions, NULL, NULL, &err), &err);
    assert_sst_ok(sst_graph_add_edge(a->g, SST_START, "ask", &err), &err);
}

static const char *g_resume_json;
static char g_expect[64];

static void ask_process(void) {
    app a = {0};
    build_ask(&a);
    app_open(&a, g_db, "t-ask");
    sst_invoke_opts o;
    sst_invoke_opts_init(&o);
    sst_value *v = g_resume_json != NULL ? tu_json(g_resume_json) : NULL;
    o.resume = v;
    sst_graph_result *r = run(&a, NULL, &o);
    const sst_value *ints = sst_graph_result_interrupts(r);
    const char *got = sst_array_len(ints) > 0
                          ? sst_string_cstr(sst_object_get(sst_array_get(ints, 0), "value"))
                          : sst_string_cstr(sst_object_get(sst_graph_result_state(r), "answer"));
    int ok = strcmp(got, g_expect) == 0;
    sst_graph_result_free(r);
    sst_value_unref(v);
    app_close(&a);
    if (!ok) {
        _exit(4);
    }
}

static void test_dynamic_interrupts_across_processes(void **state) {
    (void)state;
    db_path("ask.db", g_db, sizeof g_db);
    g_resume_json = NULL;
    snprintf(g_expect, sizeof g_expect, "age?");
    in_child(ask_process);
    g_resume_json = "42";
    snprintf(g_expect, sizeof g_expect, "name?");
    in_child(ask_process);
    g_resume_json = "\"bob\"";
    snprintf(g_expect, sizeof g_expect, "42/bob");
    in_child(ask_process);
    assert_int_equal(calls("ask"), 3);
}

static sst_code asker(sst_node_ctx *ctx, void *ud) {
    const sst_value *v = sst_node_interrupt(ctx, sst_string_new(ud, NULL));
    if (v == NULL) {
        return SST_EINTERRUPT;
    }
    return sst_node_update(ctx, "answers",
                           sst_array_push_take(sst_array_empty(), sst_value_ref(v), NULL), NULL);
}

static void build_two_askers(app *a) {
    sst_error err;
    a->g = sst_graph_new(&err);
    assert_sst_ok(sst_graph_add_field(a->g, "answers", sst_reducer_append(), NULL, &err), &err);
    assert_sst_ok(sst_graph_add_node(a->g, "p", asker, "p?", NULL, &err), &err);
    assert_sst_ok(sst_graph_add_node(a->g, "q", asker, "q?", NULL, &err), &err);
    assert_sst_ok(sst_graph_add_edge(a->g, SST_START, "p", &err), &err);
    assert_sst_ok(sst_graph_add_edge(a->g, SST_START, "q", &err), &err);
}

static void two_askers_first(void) {
    app a = {0};
    build_two_askers(&a);
    app_open(&a, g_db, "t-two");
    sst_graph_result *r = run(&a, "{}", NULL);
    int ok = sst_array_len(sst_graph_result_interrupts(r)) == 2;
    sst_graph_result_free(r);
    app_close(&a);
    if (!ok) {
        _exit(5);
    }
}

static void test_parallel_interrupts_by_id_across_processes(void **state) {
    (void)state;
    db_path("two.db", g_db, sizeof g_db);
    in_child(two_askers_first);
    app a = {0};
    build_two_askers(&a);
    app_open(&a, g_db, "t-two");
    sst_error err;
    sst_value *st = sst_graph_get_state(a.th, NULL, &err);
    const sst_value *ints = sst_object_get(st, "interrupts");
    assert_int_equal(sst_array_len(ints), 2);
    char map_json[256];
    snprintf(map_json, sizeof map_json, "{\"%s\":\"P\",\"%s\":\"Q\"}",
             sst_string_cstr(sst_object_get(sst_array_get(ints, 0), "id")),
             sst_string_cstr(sst_object_get(sst_array_get(ints, 1), "id")));
    sst_value_unref(st);
    sst_value *map = tu_json(map_json);
    sst_invoke_opts o;
    sst_invoke_opts_init(&o);
    o.resume_by_id = map;
    sst_graph_result *r = run(&a, NULL, &o);
    assert_int_equal(sst_graph_result_status(r), SST_RUN_COMPLETED);
    assert_json_eq(sst_graph_result_state(r), "{\"answers\":[\"P\",\"Q\"]}");
    sst_graph_result_free(r);
    sst_value_unref(map);
    app_close(&a);
}

static void before_first(void) {
    app a = {0};
    build_chain(&a);
    sst_compile_opts co;
    sst_compile_opts_init(&co);
    const char *before[] = {"b"};
    co.interrupt_before = before;
    co.n_before = 1;
    app_open_opts(&a, g_db, "t-before", &co);
    sst_graph_result *r = run(&a, "{}", NULL);
    int ok = sst_graph_result_status(r) == SST_RUN_INTERRUPTED;
    sst_graph_result_free(r);
    app_close(&a);
    if (!ok) {
        _exit(6);
    }
}

static void test_interrupt_before_across_processes(void **state) {
    (void)state;
    db_path("before.db", g_db, sizeof g_db);
    long b0 = calls("b");
    in_child(before_first);
    assert_int_equal(calls("b"), b0);
    app a = {0};
    build_chain(&a);
    sst_compile_opts co;
    sst_compile_opts_init(&co);
    const char *before[] = {"b"};
    co.interrupt_before = before;
    co.n_before = 1;
    app_open_opts(&a, g_db, "t-before", &co);
    sst_graph_result *r = run(&a, NULL, NULL);
    assert_int_equal(sst_graph_result_status(r), SST_RUN_COMPLETED);
    assert_json_eq(sst_graph_result_state(r), "{\"log\":[\"a\",\"b\"]}");
    assert_int_equal(calls("b"), b0 + 1);
    sst_graph_result_free(r);
    app_close(&a);
}

/* ---- time travel ---- */

static void check_time_travel(const char *db) {
    app a = {0};
    build_chain(&a);
    app_open(&a, db, "t-travel");
    sst_graph_result *r = run(&a, "{}", NULL);
    sst_graph_result_free(r);
    sst_error err;
    sst_value *h = sst_graph_get_state_history(a.th, NULL, 0, &err);
    /* The checkpoint whose next task is b. */
    const sst_value *at_b = NULL;
    sst_value *next_b = tu_json("[\"b\"]");
    for (size_t i = 0; i < sst_array_len(h); i++) {
        const sst_value *s = sst_array_get(h, i);
        if (sst_value_equal(sst_object_get(s, "next"), next_b)) {
            at_b = s;
        }
    }
    sst_value_unref(next_b);
    assert_non_null(at_b);
    char at_b_id[40];
    snprintf(at_b_id, sizeof at_b_id, "%s", sst_string_cstr(sst_object_get(at_b, "checkpoint_id")));
    sst_value_unref(h);
    sst_value *edit = tu_json("{\"log\":[\"edited\"]}");
    assert_sst_ok(sst_graph_update_state(a.th, at_b_id, edit, "a", &err), &err);
    sst_value_unref(edit);
    sst_value *st = sst_graph_get_state(a.th, NULL, &err);
    /* LangGraph's source for update_state, on the head or not. */
    assert_string_equal(sst_string_cstr(sst_object_get(sst_object_get(st, "metadata"), "source")),
                        "update");
    assert_string_equal(sst_string_cstr(sst_object_get(st, "parent_id")), at_b_id);
    assert_json_eq(sst_object_get(st, "next"), "[\"b\"]");
    sst_value_unref(st);
    r = run(&a, NULL, NULL);
    assert_int_equal(sst_graph_result_status(r), SST_RUN_COMPLETED);
    assert_json_eq(sst_graph_result_state(r), "{\"log\":[\"a\",\"edited\",\"b\"]}");
    sst_graph_result_free(r);
    /* The original history is intact. */
    h = sst_graph_get_state_history(a.th, NULL, 0, &err);
    bool original_end = false;
    sst_value *original = tu_json("{\"log\":[\"a\",\"b\"]}");
    for (size_t i = 0; i < sst_array_len(h); i++) {
        const sst_value *s = sst_array_get(h, i);
        if (sst_int_value(sst_object_get(s, "step")) == 2 &&
            sst_value_equal(sst_object_get(s, "values"), original)) {
            original_end = true;
        }
    }
    sst_value_unref(original);
    assert_true(original_end);
    assert_int_equal(sst_array_len(h), 6); /* 4 original + fork + b's checkpoint */
    sst_value_unref(h);
    app_close(&a);
}

/*
 * A crash between a run's input checkpoint and its first loop checkpoint
 * (two transactions): the loop checkpoints are deleted by hand, as if the
 * process had died right after the input checkpoint committed. Invoking the
 * thread again starts that run again with the same input.
 */
static void test_restart_after_input_checkpoint(void **state) {
    (void)state;
    char db[300];
    db_path("restart.db", db, sizeof db);
    app a = {0};
    build_one_two(&a);
    g_two_fixed = 1;
    app_open(&a, db, "r");
    sst_graph_result *r = run(&a, "{\"value\":1}", NULL);
    assert_int_equal(sst_graph_result_status(r), SST_RUN_COMPLETED);
    assert_json_eq(sst_graph_result_state(r), "{\"value\":6}");
    sst_graph_result_free(r);
    app_close(&a);

    sqlite3 *h;
    assert_int_equal(sqlite3_open(db, &h), SQLITE_OK);
    assert_int_equal(sqlite3_exec(h,
                                  "DELETE FROM checkpoints WHERE seq > (SELECT MIN(seq) FROM "
                                  "checkpoints WHERE thread='r'); DELETE FROM writes;",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(h);

    build_one_two(&a);
    app_open(&a, db, "r");
    sst_error err = {0};
    sst_value *st = sst_graph_get_state(a.th, NULL, &err);
    assert_non_null(st);
    assert_string_equal(sst_string_cstr(sst_object_get(sst_object_get(st, "metadata"), "source")),
                        "input");
    sst_value_unref(st);
    r = run(&a, NULL, NULL);
    assert_int_equal(sst_graph_result_status(r), SST_RUN_COMPLETED);
    assert_json_eq(sst_graph_result_state(r), "{\"value\":6}");
    sst_graph_result_free(r);
    sst_value *h_after = sst_graph_get_state_history(a.th, NULL, 0, &err);
    /* input (-1), loop (0) with one and two's writes, the step after: no second input. */
    assert_string_equal(
        sst_string_cstr(sst_object_get(
            sst_object_get(sst_array_get(h_after, sst_array_len(h_after) - 1), "metadata"),
            "source")),
        "input");
    assert_int_equal(sst_int_value(sst_object_get(sst_array_get(h_after, 0), "step")),
                     sst_array_len(h_after) - 2);
    sst_value_unref(h_after);
    /* Invoking again with no input changes nothing: the run is complete now. */
    r = run(&a, NULL, NULL);
    assert_json_eq(sst_graph_result_state(r), "{\"value\":6}");
    sst_graph_result_free(r);
    app_close(&a);
}

/* sst_checkpointer_threads: every thread, sorted by id, with its latest checkpoint. */
static void check_threads(const char *db) {
    app a = {0};
    build_one_two(&a);
    g_two_fixed = 1;
    app_open(&a, db, "zeta");
    sst_graph_result_free(run(&a, "{\"value\":1}", NULL));
    sst_graph_result_free(run(&a, "{\"value\":1}", NULL));
    sst_error err = {0};
    sst_graph_thread *alpha = sst_graph_thread_open(a.cg, a.cp, "alpha", &err);
    assert_non_null(alpha);
    sst_value *in = tu_json("{\"value\":5}");
    sst_graph_result_free(sst_graph_invoke(a.cg, alpha, in, NULL, &err));
    sst_value_unref(in);
    sst_value *latest = sst_graph_get_state(alpha, NULL, &err);
    sst_value *h_alpha = sst_graph_get_state_history(alpha, NULL, 0, &err);
    sst_value *h_zeta = sst_graph_get_state_history(a.th, NULL, 0, &err);
    sst_graph_thread_free(alpha);
    sst_value *list = sst_checkpointer_search_threads(a.cp, NULL, &err);
    assert_non_null(list);
    assert_int_equal(sst_array_len(list), 2);
    const sst_value *first = sst_array_get(list, 0), *second = sst_array_get(list, 1);
    assert_string_equal(sst_string_cstr(sst_object_get(first, "thread_id")), "alpha");
    assert_string_equal(sst_string_cstr(sst_object_get(second, "thread_id")), "zeta");
    assert_int_equal(sst_int_value(sst_object_get(first, "checkpoints")), sst_array_len(h_alpha));
    assert_int_equal(sst_int_value(sst_object_get(second, "checkpoints")), sst_array_len(h_zeta));
    assert_true(sst_array_len(h_zeta) > sst_array_len(h_alpha)); /* two runs against one */
    assert_true(
        sst_value_equal(sst_object_get(first, "latest"), sst_object_get(latest, "checkpoint_id")));
    assert_true(sst_value_equal(sst_object_get(first, "step"), sst_object_get(latest, "step")));
    sst_value_unref(h_alpha);
    sst_value_unref(h_zeta);
    sst_value_unref(latest);
    sst_value_unref(list);
    app_close(&a);
}

static void test_threads_memory(void **state) {
    (void)state;
    check_threads(NULL);
}

static void test_threads_sqlite(void **state) {
    (void)state;
    char db[300];
    check_threads(db_path("threads.db", db, sizeof db));
}

static void test_time_travel_memory(void **state) {
    (void)state;
    check_time_travel(NULL);
}

static void test_time_travel_sqlite(void **state) {
    (void)state;
    char db[300];
    check_time_travel(db_path("travel.db", db, sizeof db));
}

static void test_update_state_ambiguous(void **state) {
    (void)state;
    app a = {0};
    build_one_two(&a);
    g_two_fixed = 1;
    app_open(&a, NULL, "t-ambiguous");
    sst_graph_result *r = run(&a, "{}", NULL);
    assert_int_equal(sst_graph_result_status(r), SST_RUN_COMPLETED);
    sst_graph_result_free(r);
    sst_error err;
    sst_value *v = tu_json("{\"value\":100}");
    assert_int_equal(sst_graph_update_state(a.th, NULL, v, NULL, &err), SST_EINVAL);
    assert_string_equal(
        err.msg, "update_state: ambiguous: the last superstep ran 'one', 'two'; pass as_node");
    assert_int_equal(sst_graph_update_state(a.th, NULL, v, "ghost", &err), SST_EINVAL);
    assert_string_equal(err.msg, "update_state: unknown node 'ghost'");
    assert_sst_ok(sst_graph_update_state(a.th, NULL, v, "one", &err), &err);
    sst_value *st = sst_graph_get_state(a.th, NULL, &err);
    assert_json_eq(sst_object_get(st, "values"), "{\"value\":105}");
    assert_string_equal(sst_string_cstr(sst_object_get(sst_object_get(st, "metadata"), "source")),
                        "update");
    sst_value_unref(st);
    sst_value_unref(v);
    app_close(&a);
}

/* ---- durability modes, busy threads ---- */

static void test_durability_exit_and_sync(void **state) {
    (void)state;
    char db[300];
    app a = {0};
    build_chain(&a);
    app_open(&a, db_path("modes.db", db, sizeof db), "t-exit");
    sst_invoke_opts o;
    sst_invoke_opts_init(&o);
    o.durability = SST_DURABILITY_EXIT;
    sst_graph_result *r = run(&a, "{}", &o);
    assert_json_eq(sst_graph_result_state(r), "{\"log\":[\"a\",\"b\"]}");
    sst_graph_result_free(r);
    sst_error err;
    sst_value *h = sst_graph_get_state_history(a.th, NULL, 0, &err);
    assert_int_equal(sst_array_len(h), 1); /* one checkpoint per invoke, at its end */
    assert_json_eq(sst_object_get(sst_array_get(h, 0), "values"), "{\"log\":[\"a\",\"b\"]}");
    sst_value_unref(h);
    sst_graph_thread_free(a.th);
    a.th = sst_graph_thread_open(a.cg, a.cp, "t-sync", &err);
    o.durability = SST_DURABILITY_SYNC;
    r = run(&a, "{}", &o);
    assert_json_eq(sst_graph_result_state(r), "{\"log\":[\"a\",\"b\"]}");
    sst_graph_result_free(r);
    app_close(&a);
}

static sst_code nested_invoke(sst_node_ctx *ctx, void *ud) {
    app *outer = ud;
    sst_error err;
    sst_graph_thread *other = sst_graph_thread_open(outer->cg, outer->cp, "t-busy", &err);
    sst_graph_result *r = sst_graph_invoke(outer->cg, other, NULL, NULL, &err);
    sst_graph_thread_free(other);
    if (r != NULL) {
        sst_graph_result_free(r);
        return sst_node_fail(ctx, SST_EINVAL, "a second invoke of a busy thread was allowed");
    }
    return err.code == SST_EBUSY ? SST_OK : sst_node_fail(ctx, SST_EINVAL, "%s", err.msg);
}

static void test_thread_busy_across_handles(void **state) {
    (void)state;
    for (int sqlite = 0; sqlite < 2; sqlite++) {
        char db[300];
        app a = {0};
        sst_error err;
        a.g = sst_graph_new(&err);
        assert_sst_ok(sst_graph_add_node(a.g, "n", nested_invoke, &a, NULL, &err), &err);
        assert_sst_ok(sst_graph_add_edge(a.g, SST_START, "n", &err), &err);
        app_open(&a, sqlite ? db_path("busy.db", db, sizeof db) : NULL, "t-busy");
        sst_graph_result *r = run(&a, "{}", NULL);
        if (sst_graph_result_status(r) != SST_RUN_COMPLETED) {
            print_error("%s\n", sst_graph_result_error(r)->msg);
        }
        assert_int_equal(sst_graph_result_status(r), SST_RUN_COMPLETED);
        sst_graph_result_free(r);
        app_close(&a);
    }
}

/* ---- bad files ---- */

static char *slurp(const char *path, size_t *n) {
    return tu_read_file(path, n);
}

static void expect_open_error(const char *path, const char *needle) {
    size_t before_n = 0, after_n = 0;
    char *before = slurp(path, &before_n);
    sst_error err;
    sst_checkpointer *cp = sst_sqlite_saver_open(path, NULL, &err);
    if (cp != NULL || strstr(err.msg, needle) == NULL || strstr(err.msg, path) == NULL) {
        print_error("opening %s: expected an error with \"%s\", got: %s\n", path, needle,
                    cp != NULL ? "(opened)" : err.msg);
        sst_checkpointer_free(cp);
        fail();
    }
    assert_int_equal(err.code, SST_EIO);
    char *after = slurp(path, &after_n);
    /* Nothing was written. */
    assert_int_equal(before_n, after_n);
    assert_memory_equal(before, after, before_n);
    free(before);
    free(after);
}

/*
 * Lifetimes: the saver is freed while two threads still use it (one of them
 * mid-history); both keep working, and the store closes with the last one
 * (ASan reports any use after free). Memory and SQLite.
 */
static void check_saver_outlived(const char *db) {
    app a = {0};
    build_chain(&a);
    app_open(&a, db, "t-life");
    sst_error err;
    sst_graph_thread *other = sst_graph_thread_open(a.cg, a.cp, "t-other", &err);
    assert_non_null(other);
    sst_checkpointer_free(a.cp); /* the creator lets go first */
    a.cp = NULL;
    sst_graph_result *r = run(&a, "{\"log\":[\"x\"]}", NULL);
    assert_int_equal(sst_graph_result_status(r), SST_RUN_COMPLETED);
    sst_graph_result_free(r);
    sst_value *st = sst_graph_get_state(a.th, NULL, &err);
    assert_non_null(st);
    assert_json_eq(sst_object_get(st, "values"), "{\"log\":[\"x\",\"a\",\"b\"]}");
    sst_value_unref(st);
    sst_graph_thread_free(a.th);
    a.th = NULL;
    /* The other thread still has the store. */
    sst_value *in = tu_json("{\"log\":[\"y\"]}");
    r = sst_graph_invoke(a.cg, other, in, NULL, &err);
    sst_value_unref(in);
    assert_non_null(r);
    assert_int_equal(sst_graph_result_status(r), SST_RUN_COMPLETED);
    sst_graph_result_free(r);
    sst_value *h = sst_graph_get_state_history(other, NULL, 0, &err);
    assert_int_equal(sst_array_len(h), 4);
    sst_value_unref(h);
    sst_graph_thread_free(other); /* closes the store */
    app_close(&a);
    if (db != NULL) { /* closed: another saver opens the file and sees both threads */
        sst_checkpointer *cp = sst_sqlite_saver_open(db, NULL, &err);
        assert_non_null(cp);
        sst_value *list = sst_checkpointer_search_threads(cp, NULL, &err);
        assert_int_equal(sst_array_len(list), 2);
        sst_value_unref(list);
        sst_checkpointer_free(cp);
    }
}

static void test_saver_outlived_by_threads(void **state) {
    (void)state;
    check_saver_outlived(NULL);
    char db[300];
    check_saver_outlived(db_path("life.db", db, sizeof db));
}

static void test_bad_files(void **state) {
    (void)state;
    char path[300];
    /* Not a database at all. */
    db_path("text.db", path, sizeof path);
    FILE *f = fopen(path, "wb");
    for (int i = 0; i < 200; i++) {
        fputs("this is not a database, it is a text file. ", f);
    }
    fclose(f);
    expect_open_error(path, "is not a usable SQLite database");
    /* Another application's database. */
    db_path("other.db", path, sizeof path);
    sqlite3 *db;
    sqlite3_open(path, &db);
    sqlite3_exec(db, "CREATE TABLE people(name TEXT); INSERT INTO people VALUES('x');", NULL, NULL,
                 NULL);
    sqlite3_close(db);
    expect_open_error(path, "is not a superstep database");
    /* Ours, from a newer version. */
    db_path("newer.db", path, sizeof path);
    sst_error err;
    sst_checkpointer_free(sst_sqlite_saver_open(path, NULL, &err));
    sqlite3_open(path, &db);
    sqlite3_exec(db, "PRAGMA user_version=99; PRAGMA journal_mode=DELETE;", NULL, NULL, NULL);
    sqlite3_close(db);
    char newer[96];
    snprintf(newer, sizeof newer, "has schema version 99, newer than this build supports (%d)",
             SST_SQLITE_SCHEMA_VERSION);
    expect_open_error(path, newer);
    /* A corrupt page. */
    db_path("corrupt.db", path, sizeof path);
    app a = {0};
    build_chain(&a);
    app_open(&a, path, "t");
    for (int i = 0; i < 30; i++) {
        sst_graph_result_free(
            run(&a, "{\"log\":[\"some text to fill a few pages of the file\"]}", NULL));
    }
    app_close(&a);
    sqlite3_open(path, &db);
    sqlite3_exec(db, "PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode=DELETE;", NULL, NULL,
                 NULL);
    sqlite3_close(db);
    size_t n;
    char *bytes = slurp(path, &n);
    assert_true(n > 8192);
    for (size_t page = 1; page < 4 && (page + 1) * 4096 <= n; page++) {
        for (size_t i = page * 4096; i < page * 4096 + 64; i++) {
            bytes[i] = (char)0xA5; /* scribble over the b-tree page headers */
        }
    }
    f = fopen(path, "wb");
    fwrite(bytes, 1, n, f);
    fclose(f);
    free(bytes);
    expect_open_error(path, "corrupt");
    /* A directory that does not exist. */
    assert_null(sst_sqlite_saver_open("/nonexistent/dir/x.db", NULL, &err));
    assert_string_equal(err.msg,
                        "cannot open checkpoint store '/nonexistent/dir/x.db': unable to open "
                        "database file");
}

/* ---- schema migration ---- */

static void test_migration_from_v1(void **state) {
    (void)state;
    char path[300];
    db_path("v1.db", path, sizeof path);
    /* A version-1 file, as version 1 made it (its schema, written out here). */
    sst_error err;
    sqlite3 *db;
    sqlite3_open(path, &db);
    assert_int_equal(
        sqlite3_exec(db,
                     "PRAGMA journal_mode=WAL; CREATE TABLE checkpoints("
                     " seq INTEGER PRIMARY KEY AUTOINCREMENT,"
                     " thread TEXT NOT NULL, id TEXT NOT NULL, parent TEXT, step INTEGER NOT NULL,"
                     " header TEXT NOT NULL, body TEXT NOT NULL, UNIQUE(thread, id));"
                     "CREATE INDEX checkpoints_thread ON checkpoints(thread, seq);"
                     "CREATE TABLE writes(thread TEXT NOT NULL, id TEXT NOT NULL, body TEXT NOT "
                     "NULL, PRIMARY KEY(thread, id));"
                     "CREATE TABLE locks(thread TEXT PRIMARY KEY, pid INTEGER NOT NULL, since "
                     "INTEGER NOT NULL);"
                     "PRAGMA application_id=1397970000; PRAGMA user_version=1;",
                     NULL, NULL, NULL),
        SQLITE_OK);
    sqlite3_close(db);
    /* Opening migrates it; snapshots with long lists (chunks) then work. */
    app a = {0};
    build_chain(&a);
    app_open(&a, path, "t-migrated");
    sst_invoke_opts o;
    sst_invoke_opts_init(&o);
    o.snapshot_every = 2;
    sst_value *big = sst_array_empty();
    for (int i = 0; i < 200; i++) {
        big = sst_array_push_take(big, sst_int_new(i, NULL), NULL);
    }
    sst_value *in = sst_object_set_take(sst_object_empty(), "log", big, NULL);
    sst_graph_result *r = sst_graph_invoke(a.cg, a.th, in, &o, &err);
    assert_non_null(r);
    sst_graph_result_free(r);
    sst_value_unref(in);
    app_close(&a);
    sqlite3_open(path, &db);
    sqlite3_stmt *st;
    sqlite3_prepare_v2(
        db, "SELECT (SELECT user_version FROM pragma_user_version), count(*) FROM chunks", -1, &st,
        NULL);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_int_equal(sqlite3_column_int(st, 0), SST_SQLITE_SCHEMA_VERSION);
    assert_true(sqlite3_column_int(st, 1) >= 3); /* 200 items: three full chunks */
    sqlite3_finalize(st);
    sqlite3_close(db);
    /* A fresh saver reads the chunked snapshot back. */
    app b = {0};
    build_chain(&b);
    app_open(&b, path, "t-migrated");
    sst_value *s2 = sst_graph_get_state(b.th, NULL, &err);
    assert_int_equal(sst_array_len(sst_object_get(sst_object_get(s2, "values"), "log")), 202);
    assert_int_equal(
        sst_int_value(sst_array_get(sst_object_get(sst_object_get(s2, "values"), "log"), 199)),
        199);
    sst_value_unref(s2);
    app_close(&b);
    /* Schema 5 (issue 37): checkpoints without AUTOINCREMENT (no sqlite_sequence row written
     * at each put), locks WITHOUT ROWID; the rows written before and after it keep their
     * order (the state above read them back in order). */
    sqlite3_open(path, &db);
    sqlite3_prepare_v2(db,
                       "SELECT (SELECT count(*) FROM sqlite_master WHERE name = 'checkpoints' AND "
                       "sql LIKE '%AUTOINCREMENT%'), (SELECT count(*) FROM sqlite_master WHERE "
                       "name = 'locks' AND sql LIKE '%WITHOUT ROWID%'), (SELECT count(*) FROM "
                       "sqlite_sequence WHERE name = 'checkpoints')",
                       -1, &st, NULL);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_int_equal(sqlite3_column_int(st, 0), 0);
    assert_int_equal(sqlite3_column_int(st, 1), 1);
    assert_int_equal(sqlite3_column_int(st, 2), 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
}

/* ---- delta replay equals the engine's states ---- */

typedef struct states_seen {
    sst_value *list; /* the public state after each superstep */
} states_seen;

static sst_code keep_values(sst_stream_mode mode, const char *node, const sst_value *ev, void *ud) {
    (void)mode, (void)node;
    states_seen *s = ud;
    s->list = sst_array_push_take(s->list, sst_value_ref(ev), NULL);
    return SST_OK;
}

/* Random work: adds to a sum, appends, merges and adds messages, from the config in ud. */
static sst_code random_node(sst_node_ctx *ctx, void *ud) {
    uint64_t seed = (uint64_t)(uintptr_t)ud * 2654435761u + sst_node_step(ctx) * 40503u;
    tu_rng rng = {seed | 1};
    sst_code rc = sst_node_update(ctx, "n", sst_int_new((int64_t)(tu_rand(&rng) % 7), NULL), NULL);
    char msg[96];
    snprintf(msg, sizeof msg, "[{\"id\":\"m%llu\",\"role\":\"user\",\"content\":\"c%llu\"}]",
             (unsigned long long)(tu_rand(&rng) % 40), (unsigned long long)tu_rand(&rng) % 1000);
    if (rc == SST_OK) {
        rc = sst_node_update(ctx, "messages", tu_json(msg), NULL);
    }
    if (rc == SST_OK && tu_rand(&rng) % 2) {
        rc = sst_node_update(ctx, "items", tu_json("[1,2]"), NULL);
    }
    if (rc == SST_OK) {
        char kv[64];
        snprintf(kv, sizeof kv, "{\"k%llu\":%llu}", (unsigned long long)(tu_rand(&rng) % 5),
                 (unsigned long long)(tu_rand(&rng) % 100));
        rc = sst_node_update(ctx, "ctx", tu_json(kv), NULL);
    }
    return rc;
}

static sst_value *random_router(const sst_value *state, void *ud, sst_error *err) {
    (void)ud;
    int64_t n = sst_int_value(sst_object_get(state, "n"));
    if (sst_array_len(sst_object_get(state, "messages")) >= 35 || n > 300) {
        return sst_string_new(SST_END, err);
    }
    return sst_json_parse(n % 3 == 0   ? "[\"x\",\"y\"]"
                          : n % 3 == 1 ? "\"x\""
                                       : "[\"y\",\"z\"]",
                          err);
}

static void test_delta_snapshot_equivalence(void **state) {
    (void)state;
    for (int round = 0; round < 6; round++) {
        sst_error err;
        app a = {0};
        a.g = sst_graph_new(&err);
        assert_sst_ok(sst_graph_add_field(a.g, "n", sst_reducer_sum(), sst_int_new(0, NULL), &err),
                      &err);
        assert_sst_ok(sst_graph_add_field(a.g, "messages", sst_reducer_add_messages(),
                                          sst_array_empty(), &err),
                      &err);
        assert_sst_ok(sst_graph_add_field(a.g, "items", sst_reducer_append(), NULL, &err), &err);
        assert_sst_ok(sst_graph_add_field(a.g, "ctx", sst_reducer_merge(), NULL, &err), &err);
        const char *names[] = {"x", "y", "z"};
        for (int i = 0; i < 3; i++) {
            assert_sst_ok(sst_graph_add_node(a.g, names[i], random_node,
                                             (void *)(uintptr_t)(round * 10 + i + 1), NULL, &err),
                          &err);
            assert_sst_ok(
                sst_graph_add_conditional_edges(a.g, names[i], random_router, NULL, NULL, &err),
                &err);
        }
        assert_sst_ok(sst_graph_add_edge(a.g, SST_START, "x", &err), &err);
        char db[300], name[40];
        snprintf(name, sizeof name, "equiv-%d.db", round);
        app_open(&a, round % 2 ? db_path(name, db, sizeof db) : NULL, "t-equiv");
        states_seen seen = {sst_array_empty()};
        sst_invoke_opts o;
        sst_invoke_opts_init(&o);
        o.recursion_limit = 1000;
        o.snapshot_every = (uint64_t)(2 + round);
        o.stream = keep_values;
        o.stream_user_data = &seen;
        o.stream_modes = SST_STREAM_VALUES;
        sst_graph_result *r = run(&a, "{\"n\":1}", &o);
        assert_int_equal(sst_graph_result_status(r), SST_RUN_COMPLETED);
        sst_graph_result_free(r);
        /* values events: the state after the input, then after each superstep. The
         * loop checkpoint at step s holds the state before superstep s, i.e. event s. */
        sst_value *h = sst_graph_get_state_history(a.th, NULL, 0, &err);
        size_t checked = 0;
        for (size_t i = 0; i < sst_array_len(h); i++) {
            const sst_value *s = sst_array_get(h, i);
            int64_t step = sst_int_value(sst_object_get(s, "step"));
            if (step < 0) {
                continue;
            }
            const sst_value *expect = sst_array_get(seen.list, (size_t)step);
            assert_non_null(expect);
            if (!sst_value_equal(sst_object_get(s, "values"), expect)) {
                char *x = sst_json_write(sst_object_get(s, "values"), 0, NULL, NULL);
                char *y = sst_json_write(expect, 0, NULL, NULL);
                print_error("round %d step %lld:\n  stored %s\n  engine %s\n", round,
                            (long long)step, x, y);
                fail();
            }
            checked++;
        }
        assert_int_equal(checked, sst_array_len(seen.list));
        assert_true(checked > 5);
        sst_value_unref(h);
        sst_value_unref(seen.list);
        app_close(&a);
    }
}

/* Appends 10 messages per superstep for 40 supersteps. */
static sst_code chatter(sst_node_ctx *ctx, void *ud) {
    (void)ud;
    sst_value *list = sst_array_empty();
    for (int i = 0; i < 10; i++) {
        char m[96];
        snprintf(m, sizeof m, "{\"id\":\"s%llu-%d\",\"role\":\"user\",\"content\":\"m%d\"}",
                 (unsigned long long)sst_node_step(ctx), i, i);
        list = sst_array_push_take(list, tu_json(m), NULL);
    }
    return sst_node_update(ctx, "messages", list, NULL);
}

static sst_value *chatter_next(const sst_value *state, void *ud, sst_error *err) {
    (void)ud;
    return sst_string_new(
        sst_array_len(sst_object_get(state, "messages")) >= 400 ? SST_END : "chat", err);
}

/*
 * Snapshots of a growing history reuse the chunks earlier snapshots stored
 * (the saver's memo); read back by a fresh saver, every checkpoint's state is
 * the one the engine had.
 */
static void test_chunk_reuse_reads_back(void **state) {
    (void)state;
    char db[300];
    db_path("chunks.db", db, sizeof db);
    sst_error err;
    app a = {0};
    a.g = sst_graph_new(&err);
    assert_sst_ok(
        sst_graph_add_field(a.g, "messages", sst_reducer_add_messages(), sst_array_empty(), &err),
        &err);
    assert_sst_ok(sst_graph_add_node(a.g, "chat", chatter, NULL, NULL, &err), &err);
    assert_sst_ok(sst_graph_add_edge(a.g, SST_START, "chat", &err), &err);
    assert_sst_ok(sst_graph_add_conditional_edges(a.g, "chat", chatter_next, NULL, NULL, &err),
                  &err);
    app_open(&a, db, "t-chunks");
    states_seen seen = {sst_array_empty()};
    sst_invoke_opts o;
    sst_invoke_opts_init(&o);
    o.recursion_limit = 100;
    o.snapshot_every = 3;
    o.stream = keep_values;
    o.stream_user_data = &seen;
    o.stream_modes = SST_STREAM_VALUES;
    /* An input that writes a field: LangGraph streams values for it (not for "{}"). */
    sst_graph_result_free(run(&a, "{\"messages\":[]}", &o));
    sst_graph_thread_free(a.th);
    sst_checkpointer_free(a.cp);
    a.cp = sst_sqlite_saver_open(db, NULL, &err); /* fresh: no memo, no state cache */
    assert_non_null(a.cp);
    a.th = sst_graph_thread_open(a.cg, a.cp, "t-chunks", &err);
    sst_value *h = sst_graph_get_state_history(a.th, NULL, 0, &err);
    assert_non_null(h);
    size_t checked = 0;
    for (size_t i = 0; i < sst_array_len(h); i++) {
        int64_t step = sst_int_value(sst_object_get(sst_array_get(h, i), "step"));
        if (step >= 0) {
            assert_true(sst_value_equal(sst_object_get(sst_array_get(h, i), "values"),
                                        sst_array_get(seen.list, (size_t)step)));
            checked++;
        }
    }
    assert_int_equal(checked, 41); /* the input applied, then 40 supersteps */
    sqlite3 *h2;
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_open(db, &h2), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(h2, "SELECT count(*) FROM chunks", -1, &st, NULL),
                     SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    /* The last snapshot held 320 to 383 messages: 5 full chunks, each stored once. */
    assert_int_equal(sqlite3_column_int(st, 0), 5);
    sqlite3_finalize(st);
    sqlite3_close(h2);
    sst_value_unref(h);
    sst_value_unref(seen.list);
    app_close(&a);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_chunk_reuse_reads_back),
        cmocka_unit_test(test_history_memory),
        cmocka_unit_test(test_history_sqlite),
        cmocka_unit_test(test_pending_writes_resume),
        cmocka_unit_test(test_dynamic_interrupts_across_processes),
        cmocka_unit_test(test_parallel_interrupts_by_id_across_processes),
        cmocka_unit_test(test_interrupt_before_across_processes),
        cmocka_unit_test(test_time_travel_memory),
        cmocka_unit_test(test_time_travel_sqlite),
        cmocka_unit_test(test_restart_after_input_checkpoint),
        cmocka_unit_test(test_threads_memory),
        cmocka_unit_test(test_threads_sqlite),
        cmocka_unit_test(test_update_state_ambiguous),
        cmocka_unit_test(test_durability_exit_and_sync),
        cmocka_unit_test(test_thread_busy_across_handles),
        cmocka_unit_test(test_saver_outlived_by_threads),
        cmocka_unit_test(test_bad_files),
        cmocka_unit_test(test_migration_from_v1),
        cmocka_unit_test(test_delta_snapshot_equivalence),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
