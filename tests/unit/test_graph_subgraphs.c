/* SPDX-License-Identifier: MIT */
/*
 * Subgraphs through the C API (issue 15): a compiled graph as a node on a
 * real SQLite file, the child's checkpoints under "node:task_id", keys
 * shared by name, an interrupt two levels down resumed by id without
 * re-running the child's committed nodes, nested snapshots, the subgraphs'
 * stream events with their namespace, Command{graph = PARENT}, the
 * checkpoint modes (per task, kept, none), a failing child, and two
 * subgraph tasks in parallel on a pool of workers.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "superstep/superstep.h"
#include "test_util.h"

static char DIR_[256], PATH[300];
static sst_checkpointer *CP;
static atomic_int RUNS_A, RUNS_ASK; /* how often the grandchild's nodes ran */

static int setup(void **state) {
    (void)state;
    sst_error err;
    if (tu_temp_dir("sst-subgraphs", DIR_, sizeof DIR_) != 0) {
        return 1;
    }
    snprintf(PATH, sizeof PATH, "%s/cp.db", DIR_);
    CP = sst_sqlite_saver_open(PATH, NULL, &err);
    return CP == NULL;
}

static int teardown(void **state) {
    (void)state;
    sst_checkpointer_free(CP);
    tu_rm_rf(DIR_);
    return 0;
}

/* Appends the node's name (user data) to "log". */
static sst_code append_name(sst_node_ctx *ctx, void *ud) {
    if (strcmp(ud, "a") == 0) {
        atomic_fetch_add(&RUNS_A, 1);
    }
    sst_value *item = sst_array_push_take(sst_array_empty(), sst_string_new(ud, NULL), NULL);
    return sst_node_update(ctx, "log", item, NULL);
}

/* Asks a question; appends "answer:<resume>" once answered. */
static sst_code ask(sst_node_ctx *ctx, void *ud) {
    (void)ud;
    atomic_fetch_add(&RUNS_ASK, 1);
    const sst_value *answer = sst_node_interrupt(ctx, sst_string_new("approve?", NULL));
    if (answer == NULL) {
        return SST_EINTERRUPT;
    }
    char buf[64];
    snprintf(buf, sizeof buf, "answer:%s", sst_string_cstr(answer));
    sst_value *item = sst_array_push_take(sst_array_empty(), sst_string_new(buf, NULL), NULL);
    return sst_node_update(ctx, "log", item, NULL);
}

/* A graph of "log" (append) whose nodes run in sequence: fns[i] named names[i]. */
static sst_graph *chain(const char *const *names, sst_node_fn const *fns, void *const *uds,
                        size_t n) {
    sst_error err;
    sst_graph *g = sst_graph_new(&err);
    assert_non_null(g);
    assert_sst_ok(sst_graph_add_field(g, "log", sst_reducer_append(), sst_array_empty(), &err),
                  &err);
    for (size_t i = 0; i < n; i++) {
        assert_sst_ok(sst_graph_add_node(g, names[i], fns[i], uds[i], NULL, &err), &err);
        assert_sst_ok(sst_graph_add_edge(g, i == 0 ? SST_START : names[i - 1], names[i], &err),
                      &err);
    }
    return g;
}

/* Three levels: root (pre -> mid) / mid (inner) / inner (a -> ask -> b). */
typedef struct nest {
    sst_graph *g[3];
    sst_compiled_graph *cg[3];
} nest;

static void nest_build(nest *n, sst_subgraph_checkpoints mode) {
    sst_error err;
    const char *inner_names[] = {"a", "ask", "b"};
    sst_node_fn inner_fns[] = {append_name, ask, append_name};
    void *inner_uds[] = {"a", NULL, "b"};
    n->g[2] = chain(inner_names, inner_fns, inner_uds, 3);
    sst_compile_opts co;
    sst_compile_opts_init(&co);
    co.checkpoints = mode;
    n->cg[2] = sst_graph_compile(n->g[2], &co, &err);
    assert_non_null(n->cg[2]);
    n->g[1] = sst_graph_new(&err);
    assert_sst_ok(
        sst_graph_add_field(n->g[1], "log", sst_reducer_append(), sst_array_empty(), &err), &err);
    assert_sst_ok(sst_graph_add_subgraph(n->g[1], "inner", n->cg[2], NULL, &err), &err);
    assert_sst_ok(sst_graph_add_edge(n->g[1], SST_START, "inner", &err), &err);
    n->cg[1] = sst_graph_compile(n->g[1], NULL, &err);
    assert_non_null(n->cg[1]);
    n->g[0] = sst_graph_new(&err);
    assert_sst_ok(
        sst_graph_add_field(n->g[0], "log", sst_reducer_append(), sst_array_empty(), &err), &err);
    assert_sst_ok(sst_graph_add_node(n->g[0], "pre", append_name, "pre", NULL, &err), &err);
    assert_sst_ok(sst_graph_add_subgraph(n->g[0], "mid", n->cg[1], NULL, &err), &err);
    assert_sst_ok(sst_graph_add_edge(n->g[0], SST_START, "pre", &err), &err);
    assert_sst_ok(sst_graph_add_edge(n->g[0], "pre", "mid", &err), &err);
    n->cg[0] = sst_graph_compile(n->g[0], NULL, &err);
    assert_non_null(n->cg[0]);
    atomic_store(&RUNS_A, 0);
    atomic_store(&RUNS_ASK, 0);
}

static void nest_free(nest *n) {
    for (int i = 0; i < 3; i++) {
        sst_compiled_graph_free(n->cg[i]);
        sst_graph_free(n->g[i]);
    }
}

static sst_graph_result *invoke(const sst_compiled_graph *cg, sst_graph_thread *th,
                                const char *input, const sst_invoke_opts *o) {
    sst_error err;
    sst_value *in = input != NULL ? tu_json(input) : NULL;
    sst_graph_result *r = sst_graph_invoke(cg, th, in, o, &err);
    sst_value_unref(in);
    if (r == NULL) {
        print_error("invoke: %s\n", err.msg);
        fail();
    }
    return r;
}

/* An interrupt two levels down surfaces at the root and resumes into the grandchild. */
static void test_interrupt_deep_resume(void **state) {
    (void)state;
    nest n;
    nest_build(&n, SST_SUBGRAPH_PER_TASK);
    sst_error err;
    sst_graph_thread *th = sst_graph_thread_open(n.cg[0], CP, "deep", &err);
    assert_non_null(th);
    sst_graph_result *r = invoke(n.cg[0], th, "{\"log\": []}", NULL);
    assert_int_equal(sst_graph_result_status(r), SST_RUN_INTERRUPTED);
    const sst_value *ints = sst_graph_result_interrupts(r);
    assert_int_equal(sst_array_len(ints), 1);
    assert_string_equal(sst_string_cstr(sst_object_get(sst_array_get(ints, 0), "value")),
                        "approve?");
    const char *ns = sst_string_cstr(sst_object_get(sst_array_get(ints, 0), "ns"));
    assert_non_null(ns);
    assert_true(strncmp(ns, "mid:", 4) == 0 && strstr(ns, "|inner:") != NULL);
    char id[64];
    snprintf(id, sizeof id, "%s", sst_string_cstr(sst_object_get(sst_array_get(ints, 0), "id")));
    sst_graph_result_free(r);

    /* The nested snapshot: root task mid -> mid's task inner -> the grandchild at "ask". */
    sst_value *snap = sst_graph_get_state_nested(th, NULL, &err);
    assert_non_null(snap);
    const sst_value *mid = sst_object_get(sst_array_get(sst_object_get(snap, "tasks"), 0), "state");
    const sst_value *inner =
        sst_object_get(sst_array_get(sst_object_get(mid, "tasks"), 0), "state");
    assert_json_eq(sst_object_get(inner, "next"), "[\"ask\"]");
    assert_json_eq(sst_object_get(inner, "values"), "{\"log\": [\"pre\", \"a\"]}");
    /* Its ancestors' checkpoints (LangGraph's metadata "parents"), read back through the
     * one id each checkpoint keeps: the root's and mid's; the config's map adds its own. */
    const sst_value *parents = sst_object_get(sst_object_get(inner, "metadata"), "parents");
    assert_int_equal(sst_object_len(parents), 2);
    assert_string_equal(sst_string_cstr(sst_object_get(parents, "")),
                        sst_string_cstr(sst_object_get(snap, "checkpoint_id")));
    assert_string_equal(
        sst_string_cstr(sst_object_get(
            parents,
            sst_string_cstr(sst_object_get(
                sst_object_get(sst_object_get(mid, "config"), "configurable"), "checkpoint_ns")))),
        sst_string_cstr(sst_object_get(mid, "checkpoint_id")));
    assert_string_equal(
        sst_string_cstr(sst_object_get(
            sst_object_get(sst_object_get(inner, "config"), "configurable"), "checkpoint_ns")),
        ns);
    sst_value_unref(snap);
    /* Without nesting a subgraph task points at the subgraph's config. */
    snap = sst_graph_get_state(th, NULL, &err);
    const sst_value *cfg = sst_object_get(sst_array_get(sst_object_get(snap, "tasks"), 0), "state");
    const char *mid_ns =
        sst_string_cstr(sst_object_get(sst_object_get(cfg, "configurable"), "checkpoint_ns"));
    assert_true(strncmp(mid_ns, "mid:", 4) == 0 && strchr(mid_ns, '|') == NULL);
    sst_value_unref(snap);

    /* The child's own thread, opened by namespace, reads its checkpoints. */
    sst_graph_thread *cth = sst_graph_thread_open_ns(n.cg[0], CP, "deep", ns, &err);
    assert_non_null(cth);
    assert_ptr_equal(sst_graph_thread_graph(cth), n.cg[2]);
    sst_value *hist = sst_graph_get_state_history(cth, NULL, 0, &err);
    assert_non_null(hist);
    assert_true(sst_array_len(hist) >= 3);
    sst_value_unref(hist);
    sst_graph_thread_free(cth);
    assert_null(sst_graph_thread_open_ns(n.cg[0], CP, "deep", "pre:1", &err));
    assert_int_equal(err.code, SST_EINVAL);

    /* Resume by the grandchild's interrupt id: "a" does not run again. */
    sst_invoke_opts o;
    sst_invoke_opts_init(&o);
    char json[128];
    snprintf(json, sizeof json, "{\"%s\": \"yes\"}", id);
    sst_value *by_id = tu_json(json);
    o.resume_by_id = by_id;
    r = invoke(n.cg[0], th, NULL, &o);
    sst_value_unref(by_id);
    assert_int_equal(sst_graph_result_status(r), SST_RUN_COMPLETED);
    assert_int_equal(atomic_load(&RUNS_A), 1);
    assert_int_equal(atomic_load(&RUNS_ASK), 2);
    /* Each level writes its whole list back through the parent's append reducer. */
    const sst_value *log = sst_object_get(sst_graph_result_state(r), "log");
    assert_string_equal(sst_string_cstr(sst_array_get(log, sst_array_len(log) - 1)), "b");
    assert_string_equal(sst_string_cstr(sst_array_get(log, sst_array_len(log) - 2)), "answer:yes");
    sst_graph_result_free(r);
    sst_graph_thread_free(th);
    nest_free(&n);
}

/*
 * A Command{update} on a subgraph's own thread (opened by namespace) writes its checkpoint
 * and keeps the interrupt pending there, in the subgraph's namespace.
 */
static void test_command_on_child_thread(void **state) {
    (void)state;
    nest n;
    nest_build(&n, SST_SUBGRAPH_PER_TASK);
    sst_error err;
    sst_graph_thread *th = sst_graph_thread_open(n.cg[0], CP, "cmd", &err);
    sst_graph_result *r = invoke(n.cg[0], th, "{\"log\": []}", NULL);
    const char *ns =
        sst_string_cstr(sst_object_get(sst_array_get(sst_graph_result_interrupts(r), 0), "ns"));
    sst_graph_thread *cth = sst_graph_thread_open_ns(n.cg[0], CP, "cmd", ns, &err);
    sst_graph_result_free(r);
    assert_non_null(cth);
    sst_invoke_opts o;
    sst_invoke_opts_init(&o);
    sst_value *upd = tu_json("{\"log\": [\"edited\"]}");
    o.update = upd;
    r = invoke(n.cg[2], cth, NULL, &o);
    sst_value_unref(upd);
    assert_int_equal(sst_graph_result_status(r), SST_RUN_INTERRUPTED);
    sst_graph_result_free(r);
    sst_value *cs = sst_graph_get_state(cth, NULL, &err);
    assert_non_null(cs);
    assert_int_equal(sst_array_len(sst_object_get(cs, "interrupts")), 1);
    assert_json_eq(sst_object_get(cs, "values"), "{\"log\": [\"pre\", \"a\", \"edited\"]}");
    sst_value_unref(cs);
    sst_graph_thread_free(cth);
    sst_graph_thread_free(th);
    nest_free(&n);
}

/* Stream events of every level, with their namespaces, in order. */
typedef struct seen {
    char lines[32][160];
    size_t n;
} seen;

static sst_code on_event(sst_stream_mode mode, const char *ns, const char *node,
                         const sst_value *ev, void *ud) {
    (void)mode;
    (void)ev;
    seen *s = ud;
    if (s->n < 32) {
        snprintf(s->lines[s->n++], sizeof s->lines[0], "%.*s|%s", (int)strcspn(ns, ":"), ns,
                 node != NULL ? node : "-");
    }
    return SST_OK;
}

static void test_stream_namespaces(void **state) {
    (void)state;
    nest n;
    nest_build(&n, SST_SUBGRAPH_PER_TASK);
    sst_error err;
    sst_graph_thread *th = sst_graph_thread_open(n.cg[0], CP, "stream", &err);
    seen s = {0};
    sst_invoke_opts o;
    sst_invoke_opts_init(&o);
    o.stream_modes = SST_STREAM_UPDATES;
    o.stream_ns = on_event;
    o.stream_user_data = &s;
    o.subgraphs = true;
    sst_graph_result *r = invoke(n.cg[0], th, "{\"log\": []}", &o);
    assert_int_equal(sst_graph_result_status(r), SST_RUN_INTERRUPTED);
    sst_graph_result_free(r);
    /* root's pre, the grandchild's a (namespace mid:..|inner:..), then its interrupt. */
    assert_true(s.n >= 2);
    assert_string_equal(s.lines[0], "|pre");
    assert_string_equal(s.lines[1], "mid|a");
    /* Without subgraphs only the root's events. */
    seen s2 = {0};
    o.stream_user_data = &s2;
    o.subgraphs = false;
    sst_graph_thread *th2 = sst_graph_thread_open(n.cg[0], CP, "stream2", &err);
    r = invoke(n.cg[0], th2, "{\"log\": []}", &o);
    sst_graph_result_free(r);
    for (size_t i = 0; i < s2.n; i++) {
        assert_true(s2.lines[i][0] == '|');
    }
    sst_graph_thread_free(th2);
    sst_graph_thread_free(th);
    nest_free(&n);
}

/* Command{graph = PARENT}: the child's node routes in the parent. */
static sst_code hand_off(sst_node_ctx *ctx, void *ud) {
    (void)ud;
    return sst_node_parent_command(ctx, tu_json("{\"who\": \"child\"}"),
                                   sst_string_new("after", NULL));
}

static void test_parent_command(void **state) {
    (void)state;
    sst_error err;
    sst_graph *cg = sst_graph_new(&err);
    assert_sst_ok(sst_graph_add_node(cg, "handoff", hand_off, NULL, NULL, &err), &err);
    assert_sst_ok(sst_graph_add_edge(cg, SST_START, "handoff", &err), &err);
    sst_compiled_graph *child = sst_graph_compile(cg, NULL, &err);
    sst_graph *pg = sst_graph_new(&err);
    assert_sst_ok(sst_graph_add_field(pg, "who", sst_reducer_replace(), NULL, &err), &err);
    assert_sst_ok(sst_graph_add_field(pg, "log", sst_reducer_append(), sst_array_empty(), &err),
                  &err);
    assert_sst_ok(sst_graph_add_subgraph(pg, "child", child, NULL, &err), &err);
    assert_sst_ok(sst_graph_add_node(pg, "after", append_name, "after", NULL, &err), &err);
    assert_sst_ok(sst_graph_add_node(pg, "skipped", append_name, "skipped", NULL, &err), &err);
    assert_sst_ok(sst_graph_add_edge(pg, SST_START, "child", &err), &err);
    assert_sst_ok(sst_graph_add_edge(pg, "child", "skipped", &err), &err);
    sst_compiled_graph *parent = sst_graph_compile(pg, NULL, &err);
    assert_non_null(parent);
    sst_graph_result *r = invoke(parent, NULL, "{}", NULL);
    assert_int_equal(sst_graph_result_status(r), SST_RUN_COMPLETED);
    assert_json_eq(sst_graph_result_state(r), "{\"log\": [\"after\"], \"who\": \"child\"}");
    sst_graph_result_free(r);
    /* The child run alone has no parent: an error that says so. */
    r = invoke(child, NULL, "{}", NULL);
    assert_int_equal(sst_graph_result_status(r), SST_RUN_FAILED);
    assert_int_equal(sst_graph_result_error(r)->code, SST_EPARENT);
    assert_non_null(strstr(sst_graph_result_error(r)->msg, "no parent graph"));
    sst_graph_result_free(r);
    sst_compiled_graph_free(parent);
    sst_graph_free(pg);
    sst_compiled_graph_free(child);
    sst_graph_free(cg);
}

/* A counter subgraph: SST_SUBGRAPH_KEEP remembers across the parent's runs, NONE does not. */
static sst_code count(sst_node_ctx *ctx, void *ud) {
    (void)ud;
    return sst_node_update(ctx, "count", sst_int_new(1, NULL), NULL);
}

static int64_t count_after_two_runs(sst_subgraph_checkpoints mode, const char *thread) {
    sst_error err;
    sst_graph *cg = sst_graph_new(&err);
    assert_sst_ok(sst_graph_add_field(cg, "count", sst_reducer_sum(), sst_int_new(0, NULL), &err),
                  &err);
    assert_sst_ok(sst_graph_add_node(cg, "count", count, NULL, NULL, &err), &err);
    assert_sst_ok(sst_graph_add_edge(cg, SST_START, "count", &err), &err);
    sst_compile_opts co;
    sst_compile_opts_init(&co);
    co.checkpoints = mode;
    sst_compiled_graph *child = sst_graph_compile(cg, &co, &err);
    sst_graph *pg = sst_graph_new(&err);
    assert_sst_ok(sst_graph_add_field(pg, "total", sst_reducer_replace(), NULL, &err), &err);
    assert_sst_ok(sst_graph_add_subgraph(pg, "agent", child, NULL, &err), &err);
    assert_sst_ok(sst_graph_add_edge(pg, SST_START, "agent", &err), &err);
    sst_compiled_graph *parent = sst_graph_compile(pg, NULL, &err);
    sst_graph_thread *th = sst_graph_thread_open(parent, CP, thread, &err);
    sst_graph_result_free(invoke(parent, th, "{}", NULL));
    sst_graph_result_free(invoke(parent, th, "{}", NULL));
    sst_graph_thread *cth = sst_graph_thread_open_ns(parent, CP, thread, "agent", &err);
    sst_value *snap = sst_graph_get_state(cth, NULL, &err);
    int64_t c =
        snap != NULL ? sst_int_value(sst_object_get(sst_object_get(snap, "values"), "count")) : -1;
    sst_value_unref(snap);
    sst_graph_thread_free(cth);
    sst_graph_thread_free(th);
    sst_compiled_graph_free(parent);
    sst_graph_free(pg);
    sst_compiled_graph_free(child);
    sst_graph_free(cg);
    return c;
}

static void test_checkpoint_modes(void **state) {
    (void)state;
    assert_int_equal(count_after_two_runs(SST_SUBGRAPH_KEEP, "keep"), 2);
    assert_int_equal(count_after_two_runs(SST_SUBGRAPH_NONE, "none"), -1); /* no checkpoints */
}

/* A failing child fails the parent's node with the child's error. */
static sst_code boom(sst_node_ctx *ctx, void *ud) {
    (void)ud;
    return sst_node_fail(ctx, SST_EINVAL, "boom in the child");
}

/* Two Sends to a subgraph node run in parallel on a pool; both results merge. */
static sst_value *fan_out(const sst_value *state, void *ud, sst_error *err) {
    (void)state;
    (void)ud;
    sst_value *l = sst_array_empty();
    l = sst_array_push_take(l, sst_send_new("sub", tu_json("{\"log\": [\"x\"]}"), err), err);
    return sst_array_push_take(l, sst_send_new("sub", tu_json("{\"log\": [\"y\"]}"), err), err);
}

static void test_failure_and_parallel(void **state) {
    (void)state;
    sst_error err;
    const char *names[] = {"boom"};
    sst_node_fn fns[] = {boom};
    void *uds[] = {NULL};
    sst_graph *bg = chain(names, fns, uds, 1);
    sst_compiled_graph *bad = sst_graph_compile(bg, NULL, &err);
    sst_graph *pg = sst_graph_new(&err);
    assert_sst_ok(sst_graph_add_subgraph(pg, "bad", bad, NULL, &err), &err);
    assert_sst_ok(sst_graph_add_edge(pg, SST_START, "bad", &err), &err);
    sst_compiled_graph *parent = sst_graph_compile(pg, NULL, &err);
    sst_graph_result *r = invoke(parent, NULL, "{}", NULL);
    assert_int_equal(sst_graph_result_status(r), SST_RUN_FAILED);
    assert_int_equal(sst_graph_result_error(r)->code, SST_EINVAL);
    assert_non_null(strstr(sst_graph_result_error(r)->msg, "boom in the child"));
    assert_string_equal(sst_graph_result_error_node(r), "bad");
    sst_graph_result_free(r);
    sst_compiled_graph_free(parent);
    sst_graph_free(pg);

    const char *cnames[] = {"b"};
    sst_node_fn cfns[] = {append_name};
    void *cuds[] = {"b"};
    sst_graph *cg = chain(cnames, cfns, cuds, 1);
    sst_compiled_graph *child = sst_graph_compile(cg, NULL, &err);
    pg = sst_graph_new(&err);
    assert_sst_ok(sst_graph_add_field(pg, "log", sst_reducer_append(), sst_array_empty(), &err),
                  &err);
    assert_sst_ok(sst_graph_add_subgraph(pg, "sub", child, NULL, &err), &err);
    assert_sst_ok(sst_graph_add_conditional_edges(pg, SST_START, fan_out, NULL, NULL, &err), &err);
    parent = sst_graph_compile(pg, NULL, &err);
    sst_engine_opts eo;
    sst_engine_opts_init(&eo);
    eo.workers = 2;
    sst_engine *e = sst_engine_new(&eo, &err);
    sst_invoke_opts o;
    sst_invoke_opts_init(&o);
    o.engine = e;
    sst_graph_thread *th = sst_graph_thread_open(parent, CP, "parallel", &err);
    r = invoke(parent, th, "{}", &o);
    assert_int_equal(sst_graph_result_status(r), SST_RUN_COMPLETED);
    /* Each Send's child returns its input plus "b"; task order is kept. */
    assert_json_eq(sst_graph_result_state(r), "{\"log\": [\"x\", \"b\", \"y\", \"b\"]}");
    sst_graph_result_free(r);
    sst_graph_thread_free(th);
    sst_engine_free(e);
    sst_compiled_graph_free(parent);
    sst_graph_free(pg);
    sst_compiled_graph_free(child);
    sst_graph_free(cg);
    sst_compiled_graph_free(bad);
    sst_graph_free(bg);
}

/* A retried subgraph node goes on from its child's checkpoint: "a" does not run again. */
static atomic_int FLAKY;

static sst_code flaky(sst_node_ctx *ctx, void *ud) {
    (void)ud;
    if (atomic_fetch_add(&FLAKY, 1) == 0) {
        return sst_node_fail(ctx, SST_ETASK, "flaky: first attempt fails");
    }
    sst_value *item = sst_array_push_take(sst_array_empty(), sst_string_new("flaky", NULL), NULL);
    return sst_node_update(ctx, "log", item, NULL);
}

static void no_sleep(uint64_t ms, void *ud) {
    (void)ms;
    (void)ud;
}

static void test_retry_goes_on(void **state) {
    (void)state;
    sst_error err;
    const char *names[] = {"a", "flaky"};
    sst_node_fn fns[] = {append_name, flaky};
    void *uds[] = {"a", NULL};
    sst_graph *cg = chain(names, fns, uds, 2);
    sst_compiled_graph *child = sst_graph_compile(cg, NULL, &err);
    sst_graph *pg = sst_graph_new(&err);
    assert_sst_ok(sst_graph_add_field(pg, "log", sst_reducer_replace(), sst_array_empty(), &err),
                  &err);
    sst_node_opts no;
    sst_node_opts_init(&no);
    sst_retry_policy_init(&no.retry);
    no.retry.max_attempts = 2;
    assert_sst_ok(sst_graph_add_subgraph(pg, "sub", child, &no, &err), &err);
    assert_sst_ok(sst_graph_add_edge(pg, SST_START, "sub", &err), &err);
    sst_compiled_graph *parent = sst_graph_compile(pg, NULL, &err);
    sst_graph_thread *th = sst_graph_thread_open(parent, CP, "retry", &err);
    atomic_store(&RUNS_A, 0);
    atomic_store(&FLAKY, 0);
    sst_invoke_opts o;
    sst_invoke_opts_init(&o);
    o.sleep = no_sleep;
    sst_graph_result *r = invoke(parent, th, "{}", &o);
    assert_int_equal(sst_graph_result_status(r), SST_RUN_COMPLETED);
    assert_json_eq(sst_graph_result_state(r), "{\"log\": [\"a\", \"flaky\"]}");
    assert_int_equal(atomic_load(&RUNS_A), 1);
    assert_int_equal(atomic_load(&FLAKY), 2);
    sst_graph_result_free(r);
    sst_graph_thread_free(th);
    sst_compiled_graph_free(parent);
    sst_graph_free(pg);
    sst_compiled_graph_free(child);
    sst_graph_free(cg);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_interrupt_deep_resume),
        cmocka_unit_test(test_command_on_child_thread),
        cmocka_unit_test(test_stream_namespaces),
        cmocka_unit_test(test_parent_command),
        cmocka_unit_test(test_checkpoint_modes),
        cmocka_unit_test(test_failure_and_parallel),
        cmocka_unit_test(test_retry_goes_on),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
