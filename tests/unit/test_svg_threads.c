/* SPDX-License-Identifier: MIT */
/*
 * sst_dot_to_svg from several threads at once (src/server/svg.c makes a Graphviz
 * context per call; Graphviz's own global state, its last error message among it, is
 * used under one mutex): every call gets its own drawing, and a bad DOT text its own
 * Graphviz message, never another thread's. Labelled concurrency: TSan sees the
 * shared state.
 *   1 one thread: a drawing names its nodes; bad DOT is SST_EPARSE with Graphviz's
 *     message naming the line; NULL is SST_EINVAL
 *   2 four threads, each drawing its own graph and failing on its own line
 *   3 nothing is carried from call to call: a graph drawn again after other drawings
 *     and failures comes out byte for byte the same
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "superstep/server.h"
#include "test_util.h"

#define THREADS 4
#define ROUNDS  6

/* Draws a graph with node @p name, then fails on bad DOT whose error is on line @p line
 * (Graphviz's message, through the shared g_msg, must name that line, not another
 * thread's); 0 when both came out as they should, else 1 with @p why. */
static int draw_and_fail(const char *name, int line, char *why, size_t n) {
    char dot[160], want[96];
    snprintf(dot, sizeof dot, "digraph { %s -> end_of_%s }", name, name);
    sst_error err;
    sst_error_clear(&err);
    size_t len = 0;
    char *svg = sst_dot_to_svg(dot, &len, &err);
    snprintf(want, sizeof want, "<title>%s</title>", name);
    if (svg == NULL || len != strlen(svg) || strstr(svg, "<svg") == NULL ||
        strstr(svg, want) == NULL) {
        snprintf(why, n, "drawing %s: %.200s", name, svg == NULL ? err.msg : "wrong SVG");
        sst_free(svg);
        return 1;
    }
    sst_free(svg);
    snprintf(dot, sizeof dot, "digraph {%.*s a -> }", line - 1, "\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n");
    sst_error_clear(&err);
    svg = sst_dot_to_svg(dot, NULL, &err);
    snprintf(want, sizeof want, "syntax error in line %d near '}'", line);
    if (svg != NULL || err.code != SST_EPARSE || strstr(err.msg, want) == NULL) {
        snprintf(why, n, "bad DOT of %s: code %d, '%.200s'", name, (int)err.code, err.msg);
        sst_free(svg);
        return 1;
    }
    return 0;
}

static void test_one_thread(void **state) {
    (void)state;
    char why[256] = "";
    int rc = draw_and_fail("alpha", 3, why, sizeof why);
    if (rc != 0) {
        fail_msg("%s", why);
    }
    sst_error err;
    sst_error_clear(&err);
    assert_null(sst_dot_to_svg(NULL, NULL, &err));
    assert_int_equal(err.code, SST_EINVAL);
}

typedef struct worker {
    char name[16];
    int line; /* the line of its bad DOT's error */
    int failures;
    char why[256];
} worker;

static void *run(void *arg) {
    worker *w = arg;
    for (int i = 0; i < ROUNDS; i++) {
        w->failures += draw_and_fail(w->name, w->line, w->why, sizeof w->why);
    }
    return NULL;
}

static void test_threads(void **state) {
    (void)state;
    worker w[THREADS];
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++) {
        memset(&w[i], 0, sizeof w[i]);
        snprintf(w[i].name, sizeof w[i].name, "node%d", i);
        w[i].line = i + 1;
        assert_int_equal(pthread_create(&t[i], NULL, run, &w[i]), 0);
    }
    for (int i = 0; i < THREADS; i++) {
        pthread_join(t[i], NULL);
    }
    for (int i = 0; i < THREADS; i++) {
        if (w[i].failures != 0) {
            fail_msg("thread %d: %d failures, last: %s", i, w[i].failures, w[i].why);
        }
    }
}

static char *draw(const char *dot) {
    sst_error err;
    sst_error_clear(&err);
    char *svg = sst_dot_to_svg(dot, NULL, &err);
    if (svg == NULL) {
        fail_msg("drawing '%s': %s", dot, err.msg);
    }
    return svg;
}

static void test_no_carry_over(void **state) {
    (void)state;
    /* Named: an anonymous graph is titled by cgraph's process-wide count of them. */
    static const char dot[] = "digraph G { a [label=\"first\"]; a -> b; b -> a; b -> c }";
    char *before = draw(dot);
    for (int i = 0; i < 5; i++) {
        sst_free(draw("digraph { rankdir=LR; x -> y -> z; node [shape=box]; w }"));
        sst_error err;
        sst_error_clear(&err);
        assert_null(sst_dot_to_svg("digraph { a -> }", NULL, &err));
        assert_int_equal(err.code, SST_EPARSE);
    }
    char *after = draw(dot);
    assert_string_equal(before, after);
    sst_free(before);
    sst_free(after);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_thread),
        cmocka_unit_test(test_threads),
        cmocka_unit_test(test_no_carry_over),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
