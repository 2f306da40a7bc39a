/* SPDX-License-Identifier: MIT */
/*
 * sst_server_add_graph_source: a C graph served and driven over HTTP (a
 * shared source, and one that gives each worker its own graph), what the
 * server asks of a source and gives back, and the errors of bad sources and
 * of Python specs in a config without a loader (and the loader with one).
 */
#include <curl/curl.h> /* curl_global_init */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "superstep/json.h"
#include "superstep/server.h"
#include "superstep/superstep.h"
#include "test_util.h"

/* inc: count += 1; loops until count >= n. */
static sst_code inc(sst_node_ctx *ctx, void *ud) {
    (void)ud;
    return sst_node_update(ctx, "count", sst_int_new(1, NULL), NULL);
}

static sst_value *again(const sst_value *state, void *ud, sst_error *err) {
    (void)ud;
    int64_t count = sst_int_value(sst_object_get(state, "count"));
    const sst_value *n = sst_object_get(state, "n");
    int64_t want = n != NULL && sst_is_int(n) ? sst_int_value(n) : 1;
    return sst_string_new(count >= want ? SST_END : "inc", err);
}

/* What a source was asked: graphs made and given back. */
typedef struct counting {
    atomic_int acquired, released, freed;
    bool shared;
    bool fail; /* acquire fails */
} counting;

typedef struct made {
    sst_graph *g;
    sst_compiled_graph *cg;
} made;

static void *acquire(void *ud, const sst_compiled_graph **graph, sst_error *err) {
    counting *c = ud;
    if (c->fail) {
        err->code = SST_EIO;
        snprintf(err->msg, sizeof err->msg, "no graph today");
        return NULL;
    }
    made *m = calloc(1, sizeof *m);
    assert_non_null(m);
    m->g = sst_graph_new(err);
    assert_non_null(m->g);
    assert_int_equal(
        sst_graph_add_field(m->g, "count", sst_reducer_sum(), sst_int_new(0, NULL), err), SST_OK);
    assert_int_equal(sst_graph_add_node(m->g, "inc", inc, NULL, NULL, err), SST_OK);
    assert_int_equal(sst_graph_add_edge(m->g, SST_START, "inc", err), SST_OK);
    assert_int_equal(sst_graph_add_conditional_edges(m->g, "inc", again, NULL, NULL, err), SST_OK);
    m->cg = sst_graph_compile(m->g, NULL, err);
    assert_non_null(m->cg);
    *graph = m->cg;
    atomic_fetch_add(&c->acquired, 1);
    return m;
}

static void release(void *ud, void *inst) {
    counting *c = ud;
    made *m = inst;
    sst_compiled_graph_free(m->cg);
    sst_graph_free(m->g);
    free(m);
    atomic_fetch_add(&c->released, 1);
}

static void free_counting(void *ud) {
    counting *c = ud;
    atomic_fetch_add(&c->freed, 1);
}

static sst_graph_source source_of(counting *c) {
    return (sst_graph_source){.acquire = acquire,
                              .release = release,
                              .free = free_counting,
                              .user_data = c,
                              .shared = c->shared};
}

static sst_server *server_new(unsigned workers) {
    sst_server_opts o;
    sst_server_opts_init(&o);
    o.port = 0;
    o.db = ":memory:";
    o.workers = workers;
    o.no_web = true;
    sst_error err = {0};
    sst_server *s = sst_server_new(&o, &err);
    tu_assert_ok(s != NULL ? SST_OK : err.code, &err, __FILE__, __LINE__);
    return s;
}

/* Runs counter-like graph @p id to n = 3 on a new thread through runs/wait, twice on
 * the same thread (so both workers may take a run), and checks its state. */
static void drive(unsigned port, const char *id) {
    long status = 0;
    sst_value *th = tu_http_json(port, "POST", "/threads", "{}", &status);
    assert_int_equal(status, 200);
    char path[160], body[200];
    snprintf(path, sizeof path, "/threads/%s/runs/wait",
             sst_string_cstr(sst_object_get(th, "thread_id")));
    snprintf(body, sizeof body, "{\"assistant_id\": \"%s\", \"input\": {\"n\": 3}}", id);
    sst_value *out = tu_http_json(port, "POST", path, body, &status);
    assert_int_equal(status, 200);
    tu_assert_json_eq(out, "{\"n\": 3, \"count\": 3}", __FILE__, __LINE__);
    sst_value_unref(out);
    snprintf(body, sizeof body, "{\"assistant_id\": \"%s\", \"input\": {\"n\": 5}}", id);
    out = tu_http_json(port, "POST", path, body, &status);
    assert_int_equal(status, 200);
    tu_assert_json_eq(out, "{\"n\": 5, \"count\": 5}", __FILE__, __LINE__);
    sst_value_unref(out);
    /* The graph as the API threads draw it. */
    snprintf(path, sizeof path, "/assistants/%s/graph", id);
    sst_value *graph = tu_http_json(port, "GET", path, NULL, &status);
    assert_int_equal(status, 200);
    bool has_inc = false;
    const sst_value *nodes = sst_object_get(graph, "nodes");
    for (size_t i = 0; i < sst_array_len(nodes); i++) {
        has_inc |=
            strcmp(sst_string_cstr(sst_object_get(sst_array_get(nodes, i), "id")), "inc") == 0;
    }
    assert_true(has_inc);
    sst_value_unref(graph);
    sst_value_unref(th);
}

static void test_shared_source_served(void **state) {
    (void)state;
    counting c = {.shared = true};
    sst_server *s = server_new(2);
    sst_graph_source src = source_of(&c);
    sst_error err = {0};
    tu_assert_ok(sst_server_add_graph_source(s, "c_counter", &src, &err), &err, __FILE__, __LINE__);
    assert_int_equal(atomic_load(&c.acquired), 1);
    tu_assert_ok(sst_server_start(s, &err), &err, __FILE__, __LINE__);
    drive(sst_server_port(s), "c_counter");
    sst_server_free(s);
    /* One graph for everyone, given back once, the source freed once. */
    assert_int_equal(atomic_load(&c.acquired), 1);
    assert_int_equal(atomic_load(&c.released), 1);
    assert_int_equal(atomic_load(&c.freed), 1);
}

static void test_per_worker_source_served(void **state) {
    (void)state;
    counting c = {.shared = false};
    sst_server *s = server_new(2);
    sst_graph_source src = source_of(&c);
    sst_error err = {0};
    tu_assert_ok(sst_server_add_graph_source(s, "c_counter", &src, &err), &err, __FILE__, __LINE__);
    tu_assert_ok(sst_server_start(s, &err), &err, __FILE__, __LINE__);
    drive(sst_server_port(s), "c_counter");
    sst_server_free(s);
    /* The API threads' graph, and one per worker that ran something (1 or 2). */
    int got = atomic_load(&c.acquired);
    assert_true(got == 2 || got == 3);
    assert_int_equal(atomic_load(&c.released), got);
    assert_int_equal(atomic_load(&c.freed), 1);
}

/* A worker whose source fails fails the run, naming the graph and the source's message. */
static void test_failing_source_fails_the_run(void **state) {
    (void)state;
    counting c = {.shared = false};
    sst_server *s = server_new(1);
    sst_graph_source src = source_of(&c);
    sst_error err = {0};
    tu_assert_ok(sst_server_add_graph_source(s, "flaky", &src, &err), &err, __FILE__, __LINE__);
    c.fail = true; /* from now on: the worker's own graph cannot be made */
    tu_assert_ok(sst_server_start(s, &err), &err, __FILE__, __LINE__);
    long status = 0;
    sst_value *out = tu_http_json(sst_server_port(s), "POST", "/runs/wait",
                                  "{\"assistant_id\": \"flaky\", \"input\": {\"n\": 1}}", &status);
    assert_int_equal(status, 200);
    const char *msg = sst_string_cstr(sst_object_get(sst_object_get(out, "__error__"), "message"));
    assert_non_null(msg);
    assert_non_null(strstr(msg, "graph 'flaky'"));
    assert_non_null(strstr(msg, "no graph today"));
    sst_value_unref(out);
    sst_server_free(s);
    assert_int_equal(atomic_load(&c.released), atomic_load(&c.acquired));
    assert_int_equal(atomic_load(&c.freed), 1);
}

static void test_bad_sources(void **state) {
    (void)state;
    sst_server *s = server_new(1);
    sst_error err = {0};
    counting c = {.fail = true};
    sst_graph_source src = source_of(&c);
    assert_int_equal(sst_server_add_graph_source(s, "broken", &src, &err), SST_EIO);
    assert_non_null(strstr(err.msg, "graph 'broken'"));
    assert_non_null(strstr(err.msg, "no graph today"));
    assert_int_equal(atomic_load(&c.freed), 1);

    counting d = {0};
    sst_graph_source half = source_of(&d);
    half.release = NULL;
    assert_int_equal(sst_server_add_graph_source(s, "half", &half, &err), SST_EINVAL);
    assert_non_null(strstr(err.msg, "acquire and release"));
    assert_int_equal(atomic_load(&d.freed), 1);

    counting e = {.shared = true};
    sst_graph_source ok = source_of(&e);
    tu_assert_ok(sst_server_add_graph_source(s, "twice", &ok, &err), &err, __FILE__, __LINE__);
    counting f = {.shared = true};
    sst_graph_source dup = source_of(&f);
    assert_int_equal(sst_server_add_graph_source(s, "twice", &dup, &err), SST_EINVAL);
    assert_non_null(strstr(err.msg, "twice"));
    assert_int_equal(atomic_load(&f.acquired), 0);
    assert_int_equal(atomic_load(&f.freed), 1);
    sst_server_free(s);
    assert_int_equal(atomic_load(&e.freed), 1);
}

static void test_spec_is_python(void **state) {
    (void)state;
    assert_true(sst_graph_spec_is_python("./agent.py:graph"));
    assert_true(sst_graph_spec_is_python("agent.py"));
    assert_true(sst_graph_spec_is_python("/a/b/agent.py:make_graph"));
    assert_false(sst_graph_spec_is_python("./agent.lua"));
    assert_false(sst_graph_spec_is_python("./py:graph"));
    assert_false(sst_graph_spec_is_python("./agent.pyc"));
    assert_false(sst_graph_spec_is_python(NULL));
}

/* What the loader of a test saw. */
typedef struct seen {
    char id[64], spec[512];
    int calls;
} seen;

static sst_code loader(void *ud, sst_server *s, const char *graph_id, const char *spec,
                       sst_error *err) {
    seen *w = ud;
    w->calls++;
    snprintf(w->id, sizeof w->id, "%s", graph_id);
    snprintf(w->spec, sizeof w->spec, "%s", spec);
    static counting c = {.shared = true};
    sst_graph_source src = source_of(&c);
    return sst_server_add_graph_source(s, graph_id, &src, err);
}

static void test_python_spec_in_config(void **state) {
    (void)state;
    char dir[256], cfg[300];
    assert_int_equal(tu_temp_dir("sst-source", dir, sizeof dir), 0);
    snprintf(cfg, sizeof cfg, "%s/langgraph.json", dir);
    FILE *f = fopen(cfg, "w");
    assert_non_null(f);
    fputs("{\"graphs\": {\"agent\": \"./src/agent.py:graph\"}}", f);
    fclose(f);
    sst_error err = {0};
    sst_server *s = server_new(1);
    assert_int_equal(sst_server_load_config(s, cfg, &err), SST_ENOTSUP);
    assert_non_null(strstr(err.msg, "graph 'agent'"));
    assert_non_null(strstr(err.msg, "python3 -m superstep serve"));
    seen w = {0};
    sst_server_set_graph_loader(s, loader, &w);
    tu_assert_ok(sst_server_load_config(s, cfg, &err), &err, __FILE__, __LINE__);
    assert_int_equal(w.calls, 1);
    assert_string_equal(w.id, "agent");
    char want[600];
    snprintf(want, sizeof want, "%s/src/agent.py:graph", dir);
    assert_string_equal(w.spec, want);
    sst_server_free(s);
    tu_rm_rf(dir);
}

int main(void) {
    curl_global_init(CURL_GLOBAL_ALL);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shared_source_served),
        cmocka_unit_test(test_per_worker_source_served),
        cmocka_unit_test(test_failing_source_fails_the_run),
        cmocka_unit_test(test_bad_sources),
        cmocka_unit_test(test_spec_is_python),
        cmocka_unit_test(test_python_spec_in_config),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    curl_global_cleanup();
    return rc;
}
