/* SPDX-License-Identifier: MIT */
/*
 * Tracing hooks (sst_tracer): a run's span holds one span per superstep,
 * each holding its tasks' spans; a node's own spans (sst_node_span_start)
 * hang under its task; a subgraph's run hangs under its node's task; a
 * failing task and run end with the error; an interrupt is no error; four
 * workers start and end spans at once (TSan).
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "superstep/superstep.h"
#include "test_util.h"

#define MAX_SPANS 256

typedef struct span {
    int id, parent; /* parent 0: a root */
    char kind[16], name[64];
    bool ended;
    sst_code code;
    char message[128];
    sst_value *attrs; /* start's and end's, merged */
} span;

typedef struct recorder {
    pthread_mutex_t mu;
    span spans[MAX_SPANS];
    int n;
} recorder;

static void merge(span *s, const sst_value *attrs) {
    for (size_t i = 0; i < sst_object_len(attrs); i++) {
        s->attrs = sst_object_setv_take(s->attrs, sst_object_key_at(attrs, i),
                                        sst_value_ref(sst_object_value_at(attrs, i)), NULL);
    }
}

static void *rec_start(void *ud, void *parent, const char *kind, const char *name,
                       const sst_value *attrs) {
    recorder *r = ud;
    pthread_mutex_lock(&r->mu);
    span *s = r->n < MAX_SPANS ? &r->spans[r->n++] : NULL;
    if (s != NULL) {
        s->id = r->n;
        s->parent = parent != NULL ? ((span *)parent)->id : 0;
        snprintf(s->kind, sizeof s->kind, "%s", kind);
        snprintf(s->name, sizeof s->name, "%s", name);
        s->attrs = sst_object_empty();
        merge(s, attrs);
    }
    pthread_mutex_unlock(&r->mu);
    return s;
}

static void rec_end(void *ud, void *sp, sst_code code, const char *message,
                    const sst_value *attrs) {
    recorder *r = ud;
    pthread_mutex_lock(&r->mu);
    span *s = sp;
    assert_false(s->ended);
    s->ended = true;
    s->code = code;
    snprintf(s->message, sizeof s->message, "%s", message != NULL ? message : "");
    merge(s, attrs);
    pthread_mutex_unlock(&r->mu);
}

static bool rec_traceparent(void *ud, void *sp, char *buf, size_t n) {
    (void)ud;
    snprintf(buf, n, "00-%032d-%016d-01", 1, ((span *)sp)->id);
    return true;
}

static void rec_free(recorder *r) {
    for (int i = 0; i < r->n; i++) {
        sst_value_unref(r->spans[i].attrs);
    }
    pthread_mutex_destroy(&r->mu);
}

static const span *find(const recorder *r, const char *kind, const char *name, int parent) {
    for (int i = 0; i < r->n; i++) {
        const span *s = &r->spans[i];
        if (strcmp(s->kind, kind) == 0 && strcmp(s->name, name) == 0 &&
            (parent < 0 || s->parent == parent)) {
            return s;
        }
    }
    print_error("no %s span '%s' under %d\n", kind, name, parent);
    fail();
    return NULL;
}

static char g_tp[64]; /* under g_tp_mu: the four parallel tasks write it */
static pthread_mutex_t g_tp_mu = PTHREAD_MUTEX_INITIALIZER;

/* Writes n = 1 and opens a span of its own (a model call, say). */
static sst_code work(sst_node_ctx *ctx, void *ud) {
    (void)ud;
    sst_value *a = tu_json("{\"gen_ai.request.model\": \"m\"}");
    void *s = sst_node_span_start(ctx, "llm", "chat m", a);
    sst_value_unref(a);
    char tp[64];
    if (sst_node_traceparent(ctx, s, tp, sizeof tp)) {
        pthread_mutex_lock(&g_tp_mu);
        snprintf(g_tp, sizeof g_tp, "%s", tp);
        pthread_mutex_unlock(&g_tp_mu);
    }
    a = tu_json("{\"gen_ai.usage.input_tokens\": 7}");
    sst_node_span_end(ctx, s, SST_OK, NULL, a);
    sst_value_unref(a);
    return sst_node_update(ctx, "n", sst_int_new(1, NULL), NULL);
}

static sst_code boom(sst_node_ctx *ctx, void *ud) {
    (void)ud;
    return sst_node_fail(ctx, SST_EINVAL, "boom: the input is wrong");
}

static sst_code ask(sst_node_ctx *ctx, void *ud) {
    (void)ud;
    const sst_value *answer = sst_node_interrupt(ctx, sst_string_new("ok?", NULL));
    return answer == NULL ? SST_EINTERRUPT : SST_OK;
}

static sst_value *fan(const sst_value *state, void *ud, sst_error *err) {
    (void)state;
    (void)ud;
    sst_value *sends = sst_array_empty();
    for (int i = 0; i < 4; i++) {
        sends = sst_array_push_take(sends, sst_send_new("work", sst_object_empty(), err), err);
    }
    return sends;
}

static void test_span_tree(void **state) {
    (void)state;
    sst_error err;
    /* child: START -> work; parent: START -(4 Sends)-> work -> sub(child) -> boom */
    sst_graph *cg_g = sst_graph_new(&err);
    assert_sst_ok(sst_graph_add_field(cg_g, "n", sst_reducer_sum(), sst_int_new(0, NULL), &err),
                  &err);
    assert_sst_ok(sst_graph_add_node(cg_g, "work", work, NULL, NULL, &err), &err);
    assert_sst_ok(sst_graph_add_edge(cg_g, SST_START, "work", &err), &err);
    sst_compiled_graph *child = sst_graph_compile(cg_g, NULL, &err);
    sst_graph *g = sst_graph_new(&err);
    assert_sst_ok(sst_graph_add_field(g, "n", sst_reducer_sum(), sst_int_new(0, NULL), &err), &err);
    assert_sst_ok(sst_graph_add_node(g, "work", work, NULL, NULL, &err), &err);
    assert_sst_ok(sst_graph_add_subgraph(g, "sub", child, NULL, &err), &err);
    assert_sst_ok(sst_graph_add_node(g, "boom", boom, NULL, NULL, &err), &err);
    assert_sst_ok(sst_graph_add_conditional_edges(g, SST_START, fan, NULL, NULL, &err), &err);
    assert_sst_ok(sst_graph_add_edge(g, "work", "sub", &err), &err);
    assert_sst_ok(sst_graph_add_edge(g, "sub", "boom", &err), &err);
    sst_compiled_graph *cg = sst_graph_compile(g, NULL, &err);
    assert_non_null(cg);
    recorder rec = {.n = 0};
    pthread_mutex_init(&rec.mu, NULL);
    sst_tracer tracer = {
        .start = rec_start, .end = rec_end, .traceparent = rec_traceparent, .user_data = &rec};
    sst_engine_opts eo;
    sst_engine_opts_init(&eo);
    eo.workers = 4;
    sst_engine *e = sst_engine_new(&eo, &err);
    sst_invoke_opts o;
    sst_invoke_opts_init(&o);
    o.tracer = &tracer;
    o.engine = e;
    sst_checkpointer *cp = sst_memory_saver_new(&err);
    sst_graph_thread *th = sst_graph_thread_open(cg, cp, "traced", &err);
    sst_value *in = tu_json("{}");
    sst_graph_result *r = sst_graph_invoke(cg, th, in, &o, &err);
    assert_non_null(r);
    assert_int_equal(sst_graph_result_status(r), SST_RUN_FAILED);
    sst_graph_result_free(r);

    const span *run = find(&rec, "run", "run", 0);
    assert_int_equal(run->code, SST_EINVAL);
    assert_non_null(strstr(run->message, "boom: the input is wrong"));
    assert_json_eq(sst_object_get(run->attrs, "superstep.thread_id"), "\"traced\"");
    assert_json_eq(sst_object_get(run->attrs, "superstep.status"), "\"error\"");
    /* The run's supersteps, in the order they ran: the Sends, sub, boom. */
    const span *steps[3] = {NULL};
    int n_steps = 0;
    for (int i = 0; i < rec.n && n_steps < 3; i++) {
        if (strcmp(rec.spans[i].kind, "superstep") == 0 && rec.spans[i].parent == run->id) {
            steps[n_steps++] = &rec.spans[i];
        }
    }
    assert_int_equal(n_steps, 3);
    const span *s1 = steps[0];
    assert_json_eq(sst_object_get(s1->attrs, "superstep.tasks"), "4");
    int works = 0;
    for (int i = 0; i < rec.n; i++) {
        const span *t = &rec.spans[i];
        if (strcmp(t->kind, "task") == 0 && t->parent == s1->id) {
            assert_string_equal(t->name, "work");
            assert_true(t->ended);
            assert_int_equal(t->code, SST_OK);
            const span *llm = find(&rec, "llm", "chat m", t->id);
            assert_true(llm->ended);
            assert_json_eq(sst_object_get(llm->attrs, "gen_ai.usage.input_tokens"), "7");
            works++;
        }
    }
    assert_int_equal(works, 4);
    /* The subgraph's run hangs under the sub task. */
    const span *s2 = steps[1];
    const span *sub = find(&rec, "task", "sub", s2->id);
    const span *child_run = find(&rec, "run", "subgraph run", sub->id);
    assert_int_equal(child_run->code, SST_OK);
    find(&rec, "task", "work", -1);
    /* The failing task and its superstep carry the error. */
    const span *s3 = steps[2];
    const span *b = find(&rec, "task", "boom", s3->id);
    assert_int_equal(b->code, SST_EINVAL);
    assert_non_null(strstr(b->message, "boom: the input is wrong"));
    assert_int_equal(s3->code, SST_EINVAL);
    for (int i = 0; i < rec.n; i++) {
        assert_true(rec.spans[i].ended);
    }
    assert_non_null(strstr(g_tp, "00-"));
    sst_value_unref(in);
    sst_graph_thread_free(th);
    sst_checkpointer_free(cp);
    sst_engine_free(e);
    sst_compiled_graph_free(cg);
    sst_graph_free(g);
    sst_compiled_graph_free(child);
    sst_graph_free(cg_g);
    rec_free(&rec);
}

/* An interrupt ends its task's span without an error; no tracer: no spans, no cost. */
static void test_interrupt_and_untraced(void **state) {
    (void)state;
    sst_error err;
    sst_graph *g = sst_graph_new(&err);
    assert_sst_ok(sst_graph_add_node(g, "ask", ask, NULL, NULL, &err), &err);
    assert_sst_ok(sst_graph_add_edge(g, SST_START, "ask", &err), &err);
    sst_compiled_graph *cg = sst_graph_compile(g, NULL, &err);
    recorder rec = {.n = 0};
    pthread_mutex_init(&rec.mu, NULL);
    sst_tracer tracer = {.start = rec_start, .end = rec_end, .user_data = &rec};
    sst_invoke_opts o;
    sst_invoke_opts_init(&o);
    o.tracer = &tracer;
    sst_checkpointer *cp = sst_memory_saver_new(&err);
    sst_graph_thread *th = sst_graph_thread_open(cg, cp, "i", &err);
    sst_value *in = tu_json("{}");
    sst_graph_result *r = sst_graph_invoke(cg, th, in, &o, &err);
    assert_int_equal(sst_graph_result_status(r), SST_RUN_INTERRUPTED);
    sst_graph_result_free(r);
    const span *run = find(&rec, "run", "run", 0);
    assert_int_equal(run->code, SST_OK);
    assert_json_eq(sst_object_get(run->attrs, "superstep.status"), "\"interrupted\"");
    const span *t = find(&rec, "task", "ask", -1);
    assert_int_equal(t->code, SST_OK);
    assert_json_eq(sst_object_get(t->attrs, "superstep.interrupted"), "true");
    int before = rec.n;
    o.tracer = NULL;
    sst_value *answer = tu_json("\"yes\"");
    o.resume = answer;
    r = sst_graph_invoke(cg, th, NULL, &o, &err);
    assert_int_equal(sst_graph_result_status(r), SST_RUN_COMPLETED);
    assert_int_equal(rec.n, before);
    sst_graph_result_free(r);
    sst_value_unref(answer);
    sst_value_unref(in);
    sst_graph_thread_free(th);
    sst_checkpointer_free(cp);
    sst_compiled_graph_free(cg);
    sst_graph_free(g);
    rec_free(&rec);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_span_tree),
        cmocka_unit_test(test_interrupt_and_untraced),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
