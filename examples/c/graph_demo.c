/* SPDX-License-Identifier: MIT */
/*
 * A StateGraph in C: plan -> Send one "write" task per topic (map-reduce on
 * a worker pool) -> review asks a human (an interrupt) -> publish or revise.
 *
 *   cmake -S . -B build && cmake --build build && ./build/examples/graph_demo
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <superstep/superstep.h>

static void check(sst_code code, const sst_error *err) {
    if (code != SST_OK) {
        fprintf(stderr, "error: %s: %s\n", sst_code_name(code), err->msg);
        exit(1);
    }
}

static sst_value *json(const char *text) {
    sst_error err;
    sst_value *v = sst_json_parse(text, &err);
    if (v == NULL) {
        check(err.code, &err);
    }
    return v;
}

/* plan: picks the topics to write about. */
static sst_code plan(sst_node_ctx *ctx, void *ud) {
    (void)ud;
    return sst_node_update(ctx, "topics", json("[\"pregel\", \"reducers\", \"checkpoints\"]"),
                           NULL);
}

/* The router after plan: one Send("write", topic) per topic. */
static sst_value *fan_out(const sst_value *state, void *ud, sst_error *err) {
    (void)ud;
    const sst_value *topics = sst_object_get(state, "topics");
    sst_value *sends = sst_array_empty();
    for (size_t i = 0; i < sst_array_len(topics) && sends != NULL; i++) {
        sst_value *send = sst_send_new("write", sst_value_ref(sst_array_get(topics, i)), err);
        sends = send != NULL ? sst_array_push_take(sends, send, err) : NULL;
    }
    return sends;
}

/* write: runs once per Send, in parallel; its input is the topic. */
static sst_code write_section(sst_node_ctx *ctx, void *ud) {
    (void)ud;
    char text[128];
    snprintf(text, sizeof text, "A section about %s.", sst_string_cstr(sst_node_input(ctx)));
    sst_value *section = sst_string_new(text, NULL);
    return sst_node_update(ctx, "sections", sst_array_push_take(sst_array_empty(), section, NULL),
                           NULL);
}

/* review: asks a human; the run stops until it is resumed with an answer. */
static sst_code review(sst_node_ctx *ctx, void *ud) {
    (void)ud;
    size_t n = sst_array_len(sst_object_get(sst_node_state(ctx), "sections"));
    char question[96];
    snprintf(question, sizeof question, "Publish %zu sections?", n);
    const sst_value *answer = sst_node_interrupt(ctx, sst_string_new(question, NULL));
    if (answer == NULL) {
        return SST_EINTERRUPT;
    }
    return sst_node_update(ctx, "approved", sst_value_ref(answer), NULL);
}

static sst_value *after_review(const sst_value *state, void *ud, sst_error *err) {
    (void)ud;
    return sst_string_new(sst_bool_value(sst_object_get(state, "approved")) ? "publish" : "plan",
                          err);
}

static sst_code publish(sst_node_ctx *ctx, void *ud) {
    (void)ud;
    return sst_node_update(ctx, "status", sst_string_new("published", NULL), NULL);
}

static void print_result(const char *label, const sst_graph_result *r) {
    char *state = sst_json_write(sst_graph_result_state(r), SST_JSON_PRETTY, NULL, NULL);
    printf("%s: %s\n%s\n", label, sst_run_status_name(sst_graph_result_status(r)), state);
    sst_free(state);
    const sst_value *ints = sst_graph_result_interrupts(r);
    for (size_t i = 0; i < sst_array_len(ints); i++) {
        const sst_value *x = sst_array_get(ints, i);
        printf("interrupt in '%s': %s\n", sst_string_cstr(sst_object_get(x, "node")),
               sst_string_cstr(sst_object_get(x, "value")));
    }
    printf("\n");
}

int main(void) {
    sst_error err;
    sst_graph *g = sst_graph_new(&err);
    check(g != NULL ? SST_OK : err.code, &err);
    check(sst_graph_add_field(g, "sections", sst_reducer_append(), sst_array_empty(), &err), &err);
    check(sst_graph_add_node(g, "plan", plan, NULL, NULL, &err), &err);
    check(sst_graph_add_node(g, "write", write_section, NULL, NULL, &err), &err);
    check(sst_graph_add_node(g, "review", review, NULL, NULL, &err), &err);
    check(sst_graph_add_node(g, "publish", publish, NULL, NULL, &err), &err);
    check(sst_graph_add_edge(g, SST_START, "plan", &err), &err);
    check(sst_graph_add_conditional_edges(g, "plan", fan_out, NULL, NULL, &err), &err);
    check(sst_graph_add_edge(g, "write", "review", &err), &err);
    sst_value *paths = json("[\"publish\", \"plan\"]");
    check(sst_graph_add_conditional_edges(g, "review", after_review, NULL, paths, &err), &err);
    sst_value_unref(paths);
    check(sst_graph_add_edge(g, "publish", SST_END, &err), &err);

    sst_compiled_graph *app = sst_graph_compile(g, NULL, &err);
    check(app != NULL ? SST_OK : err.code, &err);
    char *mermaid = sst_compiled_graph_mermaid(app, &err);
    printf("%s\n", mermaid);
    sst_free(mermaid);

    /* Tasks run on a pool of 4 workers; the merge order stays deterministic. */
    sst_engine_opts eo;
    sst_engine_opts_init(&eo);
    eo.workers = 4;
    sst_engine *engine = sst_engine_new(&eo, &err);
    check(engine != NULL ? SST_OK : err.code, &err);
    sst_invoke_opts opts;
    sst_invoke_opts_init(&opts);
    opts.engine = engine;

    sst_graph_thread *thread = sst_graph_thread_new(app, &err);
    sst_graph_result *r = sst_graph_invoke(app, thread, NULL, &opts, &err);
    check(r != NULL ? SST_OK : err.code, &err);
    print_result("first run", r);
    sst_graph_result_free(r);

    /* The human says yes: resume with Command{resume: true}. */
    opts.resume = sst_bool(true);
    r = sst_graph_invoke(app, thread, NULL, &opts, &err);
    check(r != NULL ? SST_OK : err.code, &err);
    print_result("after the answer", r);
    int ok = sst_graph_result_status(r) == SST_RUN_COMPLETED;
    sst_graph_result_free(r);

    sst_graph_thread_free(thread);
    sst_engine_free(engine);
    sst_compiled_graph_free(app);
    sst_graph_free(g);
    return ok ? 0 : 1;
}
