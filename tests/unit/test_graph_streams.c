/* SPDX-License-Identifier: MIT */
/*
 * Streams as LangGraph gives them (issue 14), through sst_graph_invoke with
 * a stream callback: interrupts in the updates and values streams, the
 * tasks, checkpoints and debug modes with LangGraph's step numbers and the
 * engine's task ids, and input / output schemas at invoke.
 */
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "superstep/superstep.h"
#include "test_util.h"

/* ---- fixture ---- */

static sst_graph *G;
static sst_compiled_graph *CG;
static sst_graph_result *R;
static sst_checkpointer *CP;
static sst_graph_thread *TH;
static sst_value *EV;     /* [[mode, chunk], ...] as streamed */
static sst_value *CONFIG; /* the invoke's config, or NULL */

static int setup(void **state) {
    (void)state;
    G = sst_graph_new(NULL);
    EV = sst_array_empty();
    return G == NULL;
}

static int teardown(void **state) {
    (void)state;
    sst_graph_result_free(R);
    sst_graph_thread_free(TH);
    sst_checkpointer_free(CP);
    sst_compiled_graph_free(CG);
    sst_graph_free(G);
    sst_value_unref(EV);
    sst_value_unref(CONFIG);
    CONFIG = NULL;
    R = NULL;
    TH = NULL;
    CP = NULL;
    CG = NULL;
    G = NULL;
    EV = NULL;
    return 0;
}

static void field(const char *name, const sst_reducer *r, const char *def) {
    sst_error err;
    assert_sst_ok(sst_graph_add_field(G, name, r, def != NULL ? tu_json(def) : NULL, &err), &err);
}

static void node(const char *name, sst_node_fn fn, const char *ud) {
    sst_error err;
    assert_sst_ok(sst_graph_add_node(G, name, fn, (void *)ud, NULL, &err), &err);
}

static void edge(const char *from, const char *to) {
    sst_error err;
    assert_sst_ok(sst_graph_add_edge(G, from, to, &err), &err);
}

static void compile_with(const sst_compile_opts *co, bool durable) {
    sst_error err;
    CG = sst_graph_compile(G, co, &err);
    if (CG == NULL) {
        print_error("compile failed: %s\n", err.msg);
        fail();
    }
    if (durable) {
        CP = sst_memory_saver_new(&err);
        assert_non_null(CP);
        TH = sst_graph_thread_open(CG, CP, "t", &err);
        assert_non_null(TH);
    }
}

static const char *mode_name(sst_stream_mode m) {
    switch (m) {
        case SST_STREAM_VALUES:
            return "values";
        case SST_STREAM_UPDATES:
            return "updates";
        case SST_STREAM_CUSTOM:
            return "custom";
        case SST_STREAM_TASKS:
            return "tasks";
        case SST_STREAM_CHECKPOINTS:
            return "checkpoints";
        case SST_STREAM_MESSAGES:
            return "messages";
        default:
            return "debug";
    }
}

static sst_code collect(sst_stream_mode mode, const char *node, const sst_value *ev, void *ud) {
    (void)node;
    (void)ud;
    sst_value *pair =
        sst_array_push_take(sst_array_empty(), sst_string_new(mode_name(mode), NULL), NULL);
    pair = sst_array_push_take(pair, sst_value_ref(ev), NULL);
    EV = sst_array_push_take(EV, pair, NULL);
    return SST_OK;
}

/* Invokes with @p input (JSON, NULL: none) streaming @p modes into EV (emptied first). */
static sst_graph_result *stream(const char *input, unsigned modes, const char *resume) {
    sst_error err;
    sst_invoke_opts o;
    sst_invoke_opts_init(&o);
    o.stream = collect;
    o.stream_modes = modes;
    o.config = CONFIG;
    sst_value *res = resume != NULL ? tu_json(resume) : NULL;
    o.resume = res;
    sst_value_unref(EV);
    EV = sst_array_empty();
    sst_value *in = input != NULL ? tu_json(input) : NULL;
    sst_graph_result_free(R);
    R = sst_graph_invoke(CG, TH, in, &o, &err);
    sst_value_unref(in);
    sst_value_unref(res);
    if (R == NULL) {
        print_error("invoke failed: %s\n", err.msg);
        fail();
    }
    return R;
}

/* Chunk @p i of EV (borrowed) and its mode. */
static const sst_value *chunk(size_t i, const char **mode) {
    const sst_value *pair = sst_array_get(EV, i);
    assert_non_null(pair);
    if (mode != NULL) {
        *mode = sst_string_cstr(sst_array_get(pair, 0));
    }
    return sst_array_get(pair, 1);
}

/* Checks that member @p key of @p obj, when present, is a non-empty string. */
static void assert_nonempty_string(const sst_value *obj, const char *key) {
    const sst_value *v = sst_object_get(obj, key);
    if (v != NULL) {
        assert_true(sst_is_string(v) && strlen(sst_string_cstr(v)) > 0);
    }
}

/* ---- nodes ---- */

/* Writes its user data (a JSON object). */
static sst_code write_json(sst_node_ctx *ctx, void *ud) {
    return sst_node_update_all(ctx, tu_json(ud), NULL);
}

/* interrupt("interrupt"), then writes {"human": answer}. */
static sst_code ask(sst_node_ctx *ctx, void *ud) {
    (void)ud;
    const sst_value *answer = sst_node_interrupt(ctx, sst_string_new("interrupt", NULL));
    if (answer == NULL) {
        return SST_EINTERRUPT;
    }
    return sst_node_update(ctx, "human", sst_value_ref(answer), NULL);
}

static sst_code boom(sst_node_ctx *ctx, void *ud) {
    (void)ud;
    return sst_node_fail(ctx, SST_ETASK, "kaboom");
}

/* ---- 1. interrupts in the updates and values streams ---- */

/* LangGraph's test_interrupt_stream_mode_values. */
static void test_interrupt_in_updates_and_values(void **state) {
    (void)state;
    node("robot", write_json, "{\"robot\":\"beep\"}");
    node("human", ask, NULL);
    edge(SST_START, "robot");
    edge("robot", "human");
    compile_with(NULL, true);
    stream("{}", SST_STREAM_UPDATES | SST_STREAM_VALUES, NULL);
    assert_int_equal(sst_graph_result_status(R), SST_RUN_INTERRUPTED);
    /* No values chunk for an empty input; the interrupt in both streams. */
    assert_int_equal(sst_array_len(EV), 4);
    const char *m;
    assert_json_eq(chunk(0, &m), "{\"robot\":{\"robot\":\"beep\"}}");
    assert_string_equal(m, "updates");
    assert_json_eq(chunk(1, &m), "{\"robot\":\"beep\"}");
    assert_string_equal(m, "values");
    const sst_value *ints = sst_object_get(chunk(2, &m), "__interrupt__");
    assert_string_equal(m, "updates");
    assert_int_equal(sst_array_len(ints), 1);
    assert_json_eq(sst_object_get(sst_array_get(ints, 0), "value"), "\"interrupt\"");
    assert_nonempty_string(sst_array_get(ints, 0), "id");
    /* The id is the one the result and get_state give. */
    assert_true(
        sst_value_equal(sst_object_get(sst_array_get(ints, 0), "id"),
                        sst_object_get(sst_array_get(sst_graph_result_interrupts(R), 0), "id")));
    const sst_value *v = chunk(3, &m);
    assert_string_equal(m, "values");
    assert_json_eq(sst_object_get(v, "robot"), "\"beep\"");
    assert_true(sst_value_equal(sst_object_get(v, "__interrupt__"), ints));

    /* A resume starts with the values of the current state. */
    stream(NULL, SST_STREAM_UPDATES | SST_STREAM_VALUES, "\"human here\"");
    assert_int_equal(sst_graph_result_status(R), SST_RUN_COMPLETED);
    assert_json_eq(EV, "[[\"values\",{\"robot\":\"beep\"}],"
                       "[\"updates\",{\"human\":{\"human\":\"human here\"}}],"
                       "[\"values\",{\"robot\":\"beep\",\"human\":\"human here\"}]]");
}

/* interrupt_before / interrupt_after: {"__interrupt__": []} in updates, nothing in values. */
static void test_static_interrupt_is_an_empty_list(void **state) {
    (void)state;
    node("a", write_json, "{\"x\":1}");
    node("b", write_json, "{\"x\":2}");
    edge(SST_START, "a");
    edge("a", "b");
    sst_compile_opts co;
    sst_compile_opts_init(&co);
    const char *before[] = {"b"};
    co.interrupt_before = before;
    co.n_before = 1;
    compile_with(&co, true);
    stream("{\"x\":0}", SST_STREAM_UPDATES | SST_STREAM_VALUES, NULL);
    assert_int_equal(sst_graph_result_status(R), SST_RUN_INTERRUPTED);
    assert_json_eq(EV, "[[\"values\",{\"x\":0}],[\"updates\",{\"a\":{\"x\":1}}],"
                       "[\"values\",{\"x\":1}],[\"updates\",{\"__interrupt__\":[]}]]");
}

/* ---- 2. tasks ---- */

static void test_tasks_mode(void **state) {
    (void)state;
    node("one", write_json, "{\"foo\":\"one\"}");
    node("two", ask, NULL);
    edge(SST_START, "one");
    edge("one", "two");
    compile_with(NULL, true);
    stream("{\"foo\":\"in\"}", SST_STREAM_TASKS | SST_STREAM_UPDATES, NULL);
    /* tasks one start, updates one, tasks one result, tasks two start, updates interrupt,
     * tasks two result (with the interrupt). */
    assert_int_equal(sst_array_len(EV), 6);
    const char *m;
    const sst_value *start = chunk(0, &m);
    assert_string_equal(m, "tasks");
    assert_json_eq(sst_object_get(start, "name"), "\"one\"");
    assert_json_eq(sst_object_get(start, "input"), "{\"foo\":\"in\"}");
    assert_json_eq(sst_object_get(start, "triggers"), "[\"branch:to:one\"]");
    const sst_value *res = chunk(2, &m);
    assert_string_equal(m, "tasks");
    assert_true(sst_value_equal(sst_object_get(res, "id"), sst_object_get(start, "id")));
    assert_json_eq(sst_object_get(res, "error"), "null");
    assert_json_eq(sst_object_get(res, "interrupts"), "[]");
    assert_json_eq(sst_object_get(res, "result"), "{\"foo\":\"one\"}");
    const sst_value *two = chunk(3, &m);
    assert_json_eq(sst_object_get(two, "input"), "{\"foo\":\"one\"}");
    const sst_value *two_res = chunk(5, &m);
    assert_string_equal(m, "tasks");
    assert_json_eq(sst_object_get(two_res, "result"), "{}");
    assert_int_equal(sst_array_len(sst_object_get(two_res, "interrupts")), 1);
    /* Task ids are the engine's: get_state's tasks[0].id for the pending task. */
    sst_error err;
    sst_value *snap = sst_graph_get_state(TH, NULL, &err);
    assert_non_null(snap);
    const sst_value *t0 = sst_array_get(sst_object_get(snap, "tasks"), 0);
    assert_true(sst_value_equal(sst_object_get(t0, "id"), sst_object_get(two, "id")));
    assert_true(sst_value_equal(sst_object_get(t0, "id"), sst_object_get(two_res, "id")));
    sst_value_unref(snap);
}

static void test_tasks_mode_error(void **state) {
    (void)state;
    node("a", boom, NULL);
    edge(SST_START, "a");
    compile_with(NULL, false);
    stream("{}", SST_STREAM_TASKS, NULL);
    assert_int_equal(sst_graph_result_status(R), SST_RUN_FAILED);
    assert_int_equal(sst_array_len(EV), 2);
    const sst_value *res = chunk(1, NULL);
    assert_non_null(strstr(sst_string_cstr(sst_object_get(res, "error")), "kaboom"));
    assert_json_eq(sst_object_get(res, "result"), "{}");
}

/* A handler's update, {"foo": "handled"}. */
static sst_code handle(sst_node_ctx *ctx, void *ud) {
    (void)ud;
    return sst_node_update(ctx, "foo", sst_string_new("handled", NULL), NULL);
}

/* A node an error handler takes over: its task result with the error (LangGraph's commit
 * of the failed task), then the handler's update and result under its own id. */
static void test_tasks_mode_handled_error(void **state) {
    (void)state;
    sst_error err;
    sst_node_opts o;
    sst_node_opts_init(&o);
    o.error_handler = handle;
    assert_sst_ok(sst_graph_add_node(G, "a", boom, NULL, &o, &err), &err);
    edge(SST_START, "a");
    compile_with(NULL, false);
    stream("{}", SST_STREAM_TASKS | SST_STREAM_UPDATES, NULL);
    assert_int_equal(sst_graph_result_status(R), SST_RUN_COMPLETED);
    /* tasks a start, tasks a result (error), updates handler, tasks handler result. */
    assert_int_equal(sst_array_len(EV), 4);
    const char *m;
    const sst_value *start = chunk(0, &m);
    assert_string_equal(m, "tasks");
    const sst_value *failed = chunk(1, &m);
    assert_string_equal(m, "tasks");
    assert_true(sst_value_equal(sst_object_get(failed, "id"), sst_object_get(start, "id")));
    assert_json_eq(sst_object_get(failed, "name"), "\"a\"");
    assert_json_eq(sst_object_get(failed, "error"), "\"kaboom\"");
    assert_json_eq(sst_object_get(failed, "result"), "{}");
    const sst_value *up = chunk(2, &m);
    assert_string_equal(m, "updates");
    assert_json_eq(up, "{\"__error_handler__a\":{\"foo\":\"handled\"}}");
    const sst_value *res = chunk(3, &m);
    assert_string_equal(m, "tasks");
    assert_json_eq(sst_object_get(res, "name"), "\"__error_handler__a\"");
    assert_false(sst_value_equal(sst_object_get(res, "id"), sst_object_get(start, "id")));
    assert_json_eq(sst_object_get(res, "error"), "null");
    assert_json_eq(sst_object_get(res, "result"), "{\"foo\":\"handled\"}");
}

static bool HANDLER_CRASHES;

/* A handler that fails while HANDLER_CRASHES, else writes {"foo": "recovered"}. */
static sst_code crashing_handler(sst_node_ctx *ctx, void *ud) {
    (void)ud;
    if (HANDLER_CRASHES) {
        return sst_node_fail(ctx, SST_ETASK, "handler crash");
    }
    return sst_node_update(ctx, "foo", sst_string_new("recovered", NULL), NULL);
}

/* A handler that fails: both results with their errors; the resume runs the handler under
 * its own id (announced as pushed), its update not marked cached (it did run). */
static void test_tasks_mode_handler_crash_and_resume(void **state) {
    (void)state;
    sst_error err;
    sst_node_opts o;
    sst_node_opts_init(&o);
    o.error_handler = crashing_handler;
    assert_sst_ok(sst_graph_add_node(G, "a", boom, NULL, &o, &err), &err);
    edge(SST_START, "a");
    compile_with(NULL, true);
    HANDLER_CRASHES = true;
    stream("{}", SST_STREAM_TASKS | SST_STREAM_UPDATES, NULL);
    assert_int_equal(sst_graph_result_status(R), SST_RUN_FAILED);
    /* tasks a start, a result (its error), the handler's result (its error). */
    assert_int_equal(sst_array_len(EV), 3);
    const sst_value *start = chunk(0, NULL);
    const sst_value *failed = chunk(1, NULL);
    assert_true(sst_value_equal(sst_object_get(failed, "id"), sst_object_get(start, "id")));
    assert_json_eq(sst_object_get(failed, "error"), "\"kaboom\"");
    sst_value *handler = sst_value_ref(chunk(2, NULL));
    assert_json_eq(sst_object_get(handler, "name"), "\"__error_handler__a\"");
    assert_non_null(strstr(sst_string_cstr(sst_object_get(handler, "error")), "handler crash"));
    HANDLER_CRASHES = false;
    stream(NULL, SST_STREAM_TASKS | SST_STREAM_UPDATES, NULL);
    assert_int_equal(sst_graph_result_status(R), SST_RUN_COMPLETED);
    /* tasks handler start, updates (not cached), tasks handler result. */
    assert_int_equal(sst_array_len(EV), 3);
    const char *m;
    const sst_value *again = chunk(0, &m);
    assert_string_equal(m, "tasks");
    assert_true(sst_value_equal(sst_object_get(again, "id"), sst_object_get(handler, "id")));
    assert_json_eq(sst_object_get(again, "triggers"), "[\"__pregel_push\"]");
    assert_json_eq(chunk(1, &m), "{\"__error_handler__a\":{\"foo\":\"recovered\"}}");
    assert_string_equal(m, "updates");
    const sst_value *res = chunk(2, &m);
    assert_true(sst_value_equal(sst_object_get(res, "id"), sst_object_get(handler, "id")));
    assert_json_eq(sst_object_get(res, "error"), "null");
    assert_json_eq(sst_object_get(res, "result"), "{\"foo\":\"recovered\"}");
    sst_value_unref(handler);
}

/* ---- 3. checkpoints ---- */

static void test_checkpoints_mode(void **state) {
    (void)state;
    field("items", sst_reducer_append(), "[]");
    node("a", write_json, "{\"items\":[\"a\"]}");
    node("b", write_json, "{\"items\":[\"b\"]}");
    edge(SST_START, "a");
    edge("a", "b");
    compile_with(NULL, true);
    stream("{\"items\":[\"s\"]}", SST_STREAM_CHECKPOINTS, NULL);
    /* input (-1), loop (0), after a (1), after b (2): as the JS server shows them. */
    assert_int_equal(sst_array_len(EV), 4);
    const char *nexts[] = {"[\"__start__\"]", "[\"a\"]", "[\"b\"]", "[]"};
    const char *values[] = {"{\"items\":[]}", "{\"items\":[\"s\"]}", "{\"items\":[\"s\",\"a\"]}",
                            "{\"items\":[\"s\",\"a\",\"b\"]}"};
    sst_error err;
    sst_value *hist = sst_graph_get_state_history(TH, NULL, 0, &err);
    assert_int_equal(sst_array_len(hist), 4);
    for (size_t i = 0; i < 4; i++) {
        const char *m;
        const sst_value *c = chunk(i, &m);
        assert_string_equal(m, "checkpoints");
        assert_json_eq(sst_object_get(c, "next"), nexts[i]);
        assert_json_eq(sst_object_get(c, "values"), values[i]);
        assert_int_equal(sst_int_value(sst_object_get(sst_object_get(c, "metadata"), "step")),
                         (int64_t)i - 1);
        assert_int_equal(sst_object_len(c), 6); /* config, parent_config, values, ... tasks */
        /* The same config and parent as the history (newest first). */
        const sst_value *h = sst_array_get(hist, 3 - i);
        assert_true(sst_value_equal(sst_object_get(c, "config"), sst_object_get(h, "config")));
        const sst_value *hp = sst_object_get(h, "parent_config"); /* left out when none */
        assert_true(
            sst_value_equal(sst_object_get(c, "parent_config"), hp != NULL ? hp : sst_null()));
        const sst_value *tasks = sst_object_get(c, "tasks");
        assert_int_equal(sst_array_len(tasks), i < 3 ? 1 : 0);
        if (i < 3) {
            const sst_value *t = sst_array_get(tasks, 0);
            assert_true(sst_value_equal(
                sst_object_get(t, "id"),
                sst_object_get(sst_array_get(sst_object_get(h, "tasks"), 0), "id")));
            assert_json_eq(sst_object_get(t, "state"), "null");
            assert_json_eq(sst_object_get(t, "interrupts"), "[]");
        }
    }
    assert_json_eq(sst_object_get(chunk(0, NULL), "parent_config"), "null");
    sst_value_unref(hist);
}

/* ---- 4. and 5. debug, with LangGraph's step numbers ---- */

static void test_debug_mode(void **state) {
    (void)state;
    field("items", sst_reducer_append(), "[]");
    node("a", write_json, "{\"items\":[\"a\"]}");
    edge(SST_START, "a");
    compile_with(NULL, true);
    stream("{\"items\":[\"s\"]}", SST_STREAM_DEBUG, NULL);
    /* checkpoint -1, checkpoint 0, task 1, task_result 1, checkpoint 1 */
    const char *types[] = {"checkpoint", "checkpoint", "task", "task_result", "checkpoint"};
    const int64_t steps[] = {-1, 0, 1, 1, 1};
    assert_int_equal(sst_array_len(EV), 5);
    for (size_t i = 0; i < 5; i++) {
        const char *m;
        const sst_value *e = chunk(i, &m);
        assert_string_equal(m, "debug");
        assert_string_equal(sst_string_cstr(sst_object_get(e, "type")), types[i]);
        assert_int_equal(sst_int_value(sst_object_get(e, "step")), steps[i]);
        const char *ts = sst_string_cstr(sst_object_get(e, "timestamp"));
        assert_non_null(ts);
        assert_true(strlen(ts) >= 20 && ts[4] == '-' && ts[10] == 'T');
        assert_non_null(sst_object_get(e, "payload"));
    }
    assert_json_eq(sst_object_get(sst_object_get(chunk(3, NULL), "payload"), "result"),
                   "{\"items\":[\"a\"]}");
    /* Without a checkpointer: tasks only, steps from 1. */
    sst_graph_thread_free(TH);
    TH = NULL;
    stream("{\"items\":[\"s\"]}", SST_STREAM_DEBUG, NULL);
    assert_int_equal(sst_array_len(EV), 2);
    assert_int_equal(sst_int_value(sst_object_get(chunk(0, NULL), "step")), 1);
}

/* Several modes at once: each chunk with its own mode, in LangGraph's order. */
static void test_modes_together(void **state) {
    (void)state;
    node("a", write_json, "{\"x\":1}");
    edge(SST_START, "a");
    compile_with(NULL, false);
    stream("{\"x\":0}", SST_STREAM_VALUES | SST_STREAM_UPDATES | SST_STREAM_TASKS, NULL);
    const char *want[] = {"values", "tasks", "updates", "tasks", "values"};
    assert_int_equal(sst_array_len(EV), 5);
    for (size_t i = 0; i < 5; i++) {
        const char *m;
        chunk(i, &m);
        assert_string_equal(m, want[i]);
    }
}

/* A node that writes nothing: no values chunk after its superstep (LangGraph's rule). */
static void test_values_only_when_written(void **state) {
    (void)state;
    node("a", write_json, "{}");
    node("b", write_json, "{\"x\":2}");
    edge(SST_START, "a");
    edge("a", "b");
    compile_with(NULL, false);
    stream("{\"x\":0}", SST_STREAM_VALUES, NULL);
    assert_json_eq(EV, "[[\"values\",{\"x\":0}],[\"values\",{\"x\":2}]]");
}

/* ---- 6. input and output schemas ---- */

static void test_input_and_output_fields(void **state) {
    (void)state;
    sst_error err;
    const char *in[] = {"q"};
    const char *out[] = {"answer"};
    assert_sst_ok(sst_graph_set_input_fields(G, in, 1, &err), &err);
    assert_sst_ok(sst_graph_set_output_fields(G, out, 1, &err), &err);
    node("a", write_json, "{\"answer\":\"42\",\"scratch\":1}");
    edge(SST_START, "a");
    compile_with(NULL, false);
    stream("{\"q\":\"why\",\"other\":7}", SST_STREAM_VALUES | SST_STREAM_TASKS, NULL);
    assert_int_equal(sst_graph_result_status(R), SST_RUN_COMPLETED);
    assert_json_eq(sst_graph_result_state(R), "{\"answer\":\"42\"}");
    /* The input wrote no output field: no values chunk for it; "other" was dropped. */
    const char *m;
    assert_json_eq(sst_object_get(chunk(0, &m), "input"), "{\"q\":\"why\"}");
    assert_string_equal(m, "tasks");
    assert_json_eq(chunk(2, &m), "{\"answer\":\"42\"}");
    assert_string_equal(m, "values");
    assert_int_equal(sst_array_len(EV), 3);
}

/* ---- 4. execution info, live custom events, messages ---- */

/* What a node saw of LangGraph's execution_info, per attempt. */
static struct {
    unsigned n;
    char task_id[2][33];
    double first[2];
    unsigned attempt[2];
    char checkpoint_id[2][64];
    char thread_id[2][16];
    const char *run_id[2]; /* NULL or "run-1" */
} INFO;

/* Records its execution info; fails its first attempt with a transient error. */
static sst_code record_info(sst_node_ctx *ctx, void *ud) {
    (void)ud;
    unsigned i = INFO.n < 2 ? INFO.n++ : 1;
    snprintf(INFO.task_id[i], sizeof INFO.task_id[i], "%s", sst_node_task_id(ctx));
    INFO.first[i] = sst_node_first_attempt_time(ctx);
    INFO.attempt[i] = sst_node_attempt(ctx);
    snprintf(INFO.checkpoint_id[i], sizeof INFO.checkpoint_id[i], "%s",
             sst_node_checkpoint_id(ctx));
    const char *th = sst_node_thread_id(ctx);
    snprintf(INFO.thread_id[i], sizeof INFO.thread_id[i], "%s", th != NULL ? th : "(null)");
    const char *run = sst_node_run_id(ctx);
    INFO.run_id[i] = run != NULL && strcmp(run, "run-1") == 0 ? "run-1" : NULL;
    if (sst_node_attempt(ctx) == 1) {
        struct timespec ts = {0, 20 * 1000 * 1000};
        nanosleep(&ts, NULL);
        return sst_node_fail(ctx, SST_EIO, "flaky");
    }
    return sst_node_update(ctx, "x", sst_int_new(1, NULL), NULL);
}

/* LangGraph's runtime.execution_info: identity fields, the same first attempt time on a retry. */
static void test_execution_info(void **state) {
    (void)state;
    memset(&INFO, 0, sizeof INFO);
    sst_node_opts no;
    sst_node_opts_init(&no);
    sst_retry_policy_init(&no.retry);
    no.retry.initial_interval_s = 0.001;
    no.retry.jitter = false;
    sst_error err;
    assert_sst_ok(sst_graph_add_node(G, "n", record_info, NULL, &no, &err), &err);
    edge(SST_START, "n");
    compile_with(NULL, true);
    CONFIG = tu_json("{\"run_id\":\"run-1\",\"configurable\":{\"thread_id\":\"t\"}}");
    double before = (double)time(NULL);
    stream("{}", SST_STREAM_VALUES, NULL);
    assert_int_equal(sst_graph_result_status(R), SST_RUN_COMPLETED);
    assert_int_equal(INFO.n, 2);
    assert_int_equal(INFO.attempt[0], 1);
    assert_int_equal(INFO.attempt[1], 2);
    assert_int_equal(strlen(INFO.task_id[0]), 32);
    assert_string_equal(INFO.task_id[0], INFO.task_id[1]);
    assert_true(INFO.first[0] >= before - 1 && INFO.first[0] < before + 60);
    assert_true(INFO.first[1] == INFO.first[0]); /* the first attempt's, kept */
    assert_string_equal(INFO.thread_id[0], "t");
    assert_non_null(INFO.run_id[1]);
    /* The checkpoint the task runs from: the thread's latest when it ran. */
    assert_true(strlen(INFO.checkpoint_id[0]) > 0);
    sst_value *snap = sst_graph_get_state(TH, NULL, &err);
    assert_non_null(snap);
    const sst_value *parent = sst_object_get(sst_object_get(snap, "parent_config"), "configurable");
    assert_string_equal(sst_string_cstr(sst_object_get(parent, "checkpoint_id")),
                        INFO.checkpoint_id[0]);
    sst_value_unref(snap);
}

/* Emits "before", checks that the callback already has it, then emits "after". */
static sst_code emit_live(sst_node_ctx *ctx, void *ud) {
    (void)ud;
    sst_code rc = sst_node_emit(ctx, sst_string_new("before", NULL), NULL);
    if (rc == SST_OK && sst_array_len(EV) != 1) {
        return sst_node_fail(ctx, SST_ETASK, "the custom event was not delivered at once");
    }
    rc = rc == SST_OK ? sst_node_emit(ctx, sst_string_new("after", NULL), NULL) : rc;
    return rc == SST_OK ? sst_node_update(ctx, "x", sst_int_new(1, NULL), NULL) : rc;
}

static void test_custom_events_are_live(void **state) {
    (void)state;
    node("n", emit_live, NULL);
    edge(SST_START, "n");
    compile_with(NULL, false);
    stream("{}", SST_STREAM_CUSTOM | SST_STREAM_UPDATES, NULL);
    assert_int_equal(sst_graph_result_status(R), SST_RUN_COMPLETED);
    /* A task's custom events, in emit order, come before the superstep's updates. */
    assert_json_eq(EV, "[[\"custom\",\"before\"],[\"custom\",\"after\"],"
                       "[\"updates\",{\"n\":{\"x\":1}}]]");
}

/* Returns the messages it read plus its user data (a JSON message without an id). */
static sst_code reply(sst_node_ctx *ctx, void *ud) {
    sst_value *all = sst_value_ref(sst_object_get(sst_node_state(ctx), "messages"));
    all = sst_array_push_take(all, tu_json(ud), NULL);
    return sst_node_update(ctx, "messages", all, NULL);
}

/* LangGraph's stream_mode="messages" for the messages nodes write to the state. */
static void test_messages_written_to_the_state(void **state) {
    (void)state;
    field("messages", sst_reducer_add_messages(), "[]");
    node("a", reply, "{\"role\":\"assistant\",\"content\":\"one\"}");
    node("b", reply, "{\"role\":\"assistant\",\"content\":\"two\"}");
    edge(SST_START, "a");
    edge("a", "b");
    compile_with(NULL, false);
    CONFIG = tu_json("{\"configurable\":{\"thread_id\":\"th\",\"assistant_id\":\"as\","
                     "\"api_key\":\"secret\"}}");
    stream("{\"messages\":[{\"role\":\"user\",\"content\":\"hi\",\"id\":\"h\"}]}",
           SST_STREAM_MESSAGES, NULL);
    assert_int_equal(sst_graph_result_status(R), SST_RUN_COMPLETED);
    /* Each node's new message once: not the input's, not the one b read and returned. */
    assert_int_equal(sst_array_len(EV), 2);
    const sst_value *msgs = sst_object_get(sst_graph_result_state(R), "messages");
    assert_int_equal(sst_array_len(msgs), 3);
    for (size_t i = 0; i < 2; i++) {
        const sst_value *c = chunk(i, NULL);
        /* The message as the state holds it, its id included. */
        assert_true(sst_value_equal(sst_array_get(c, 0), sst_array_get(msgs, i + 1)));
        const sst_value *meta = sst_array_get(c, 1);
        assert_json_eq(sst_object_get(meta, "langgraph_step"), i == 0 ? "1" : "2");
        assert_json_eq(sst_object_get(meta, "langgraph_node"), i == 0 ? "\"a\"" : "\"b\"");
        assert_json_eq(sst_object_get(meta, "thread_id"), "\"th\"");
        assert_json_eq(sst_object_get(meta, "assistant_id"), "\"as\"");
        assert_null(sst_object_get(meta, "api_key"));
    }
}

/* push_message: no id refused; then two messages streamed at once, nothing at the end. */
static sst_code pusher(sst_node_ctx *ctx, void *ud) {
    (void)ud;
    sst_error err;
    sst_code rc =
        sst_node_push_message(ctx, NULL, tu_json("{\"role\":\"ai\",\"content\":\"x\"}"), &err);
    if (rc != SST_EINVAL || strstr(err.msg, "Message ID is required") == NULL) {
        return sst_node_fail(ctx, SST_ETASK, "a message without an id was accepted");
    }
    rc = sst_node_push_message(
        ctx, NULL, tu_json("{\"role\":\"assistant\",\"content\":\"1\",\"id\":\"1\"}"), &err);
    if (rc == SST_OK && sst_node_streams_messages(ctx) && sst_array_len(EV) != 1) {
        return sst_node_fail(ctx, SST_ETASK, "the pushed message was not streamed at once");
    }
    return rc == SST_OK ? sst_node_push_message(
                              ctx, "messages",
                              tu_json("{\"role\":\"user\",\"content\":\"2\",\"id\":\"2\"}"), &err)
                        : rc;
}

static void test_push_message(void **state) {
    (void)state;
    field("messages", sst_reducer_add_messages(), "[]");
    node("n", pusher, NULL);
    edge(SST_START, "n");
    compile_with(NULL, false);
    stream("{}", SST_STREAM_MESSAGES, NULL);
    assert_int_equal(sst_graph_result_status(R), SST_RUN_COMPLETED);
    const sst_value *msgs = sst_object_get(sst_graph_result_state(R), "messages");
    assert_int_equal(sst_array_len(msgs), 2);
    assert_int_equal(sst_array_len(EV), 2);
    assert_true(sst_value_equal(sst_array_get(chunk(0, NULL), 0), sst_array_get(msgs, 0)));
    assert_true(sst_value_equal(sst_array_get(chunk(1, NULL), 0), sst_array_get(msgs, 1)));
    /* Without the messages mode: written all the same. */
    stream("{}", SST_STREAM_VALUES, NULL);
    assert_int_equal(sst_graph_result_status(R), SST_RUN_COMPLETED);
    assert_int_equal(sst_array_len(sst_object_get(sst_graph_result_state(R), "messages")), 2);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_interrupt_in_updates_and_values, setup, teardown),
        cmocka_unit_test_setup_teardown(test_static_interrupt_is_an_empty_list, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tasks_mode, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tasks_mode_error, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tasks_mode_handled_error, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tasks_mode_handler_crash_and_resume, setup, teardown),
        cmocka_unit_test_setup_teardown(test_checkpoints_mode, setup, teardown),
        cmocka_unit_test_setup_teardown(test_debug_mode, setup, teardown),
        cmocka_unit_test_setup_teardown(test_modes_together, setup, teardown),
        cmocka_unit_test_setup_teardown(test_values_only_when_written, setup, teardown),
        cmocka_unit_test_setup_teardown(test_input_and_output_fields, setup, teardown),
        cmocka_unit_test_setup_teardown(test_execution_info, setup, teardown),
        cmocka_unit_test_setup_teardown(test_custom_events_are_live, setup, teardown),
        cmocka_unit_test_setup_teardown(test_messages_written_to_the_state, setup, teardown),
        cmocka_unit_test_setup_teardown(test_push_message, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
