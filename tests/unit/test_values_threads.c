/* SPDX-License-Identifier: MIT */
/*
 * Values shared between threads (run under ThreadSanitizer too): many
 * threads read one state, branch new versions off it, and drop references
 * concurrently, so the last release happens on an arbitrary thread.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

enum { THREADS = 8, ROUNDS = 200 };

static sst_value *g_shared;
static uint64_t g_hash;
static char *g_text;

static void *reader_thread(void *arg) {
    intptr_t id = (intptr_t)arg;
    int bad = 0;
    for (int r = 0; r < ROUNDS; r++) {
        /* Reads: hash, equality, serialisation of the shared value. */
        bad += sst_value_hash(g_shared) != g_hash;
        char *text = sst_json_write(g_shared, SST_JSON_COMPACT, NULL, NULL);
        bad += text == NULL || strcmp(text, g_text) != 0;
        sst_value *parsed = sst_json_parse(text, NULL);
        bad += !sst_value_equal(parsed, g_shared);
        sst_free(text);
        sst_value_unref(parsed);
        /* Branch a private version: copy-on-write on shared nodes. */
        sst_value *mine = sst_value_ref(g_shared);
        sst_value *list = sst_value_ref(sst_object_get(mine, "list"));
        for (int i = 0; i < 40; i++) {
            list = sst_array_push_take(list, sst_int_new(id * 1000 + i, NULL), NULL);
        }
        list = sst_array_set_take(list, 0, sst_int_new(-id, NULL), NULL);
        mine = sst_object_set_take(mine, "list", list, NULL);
        bad += sst_int_value(sst_array_get(sst_object_get(mine, "list"), 0)) != -id;
        sst_value_unref(mine);
    }
    return (void *)(intptr_t)bad;
}

static void test_shared_reads_and_branches(void **state) {
    (void)state;
    long live_before = tu_chaos_live();
    g_shared = sst_json_parse("{\"list\":[],\"meta\":{\"a\":[1,2,3],\"s\":\"x\"}}", NULL);
    sst_value *list = sst_value_ref(sst_object_get(g_shared, "list"));
    for (int i = 0; i < 1000; i++) {
        list = sst_array_push_take(list, sst_int_new(i, NULL), NULL);
    }
    g_shared = sst_object_set_take(g_shared, "list", list, NULL);
    g_hash = sst_value_hash(g_shared);
    g_text = sst_json_write(g_shared, SST_JSON_COMPACT, NULL, NULL);
    pthread_t t[THREADS];
    for (intptr_t i = 0; i < THREADS; i++) {
        assert_int_equal(pthread_create(&t[i], NULL, reader_thread, (void *)i), 0);
    }
    for (int i = 0; i < THREADS; i++) {
        void *bad;
        pthread_join(t[i], &bad);
        assert_int_equal((intptr_t)bad, 0);
    }
    /* The shared version never changed. */
    assert_int_equal(sst_array_len(sst_object_get(g_shared, "list")), 1000);
    assert_int_equal(sst_int_value(sst_array_get(sst_object_get(g_shared, "list"), 0)), 0);
    sst_free(g_text);
    sst_value_unref(g_shared);
    assert_int_equal(tu_chaos_live(), live_before);
}

enum { MAX_REFS = 256 };

typedef struct drop_arg {
    sst_value *refs[MAX_REFS]; /* this thread's references */
    int n;
} drop_arg;

static void *drop_thread(void *arg) {
    drop_arg *a = arg;
    for (int i = 0; i < a->n; i++) {
        sst_value_unref(a->refs[i]);
    }
    return NULL;
}

/*
 * Gives each thread @p per_thread references, picked by @p pick, then drops
 * the caller's reference to @p v and lets all threads drop theirs at once.
 */
static void drop_everywhere(sst_value *v, int per_thread,
                            const sst_value *(*pick)(const sst_value *v, int t, int i)) {
    static drop_arg args[THREADS];
    for (int t = 0; t < THREADS; t++) {
        for (int i = 0; i < per_thread; i++) {
            args[t].refs[i] = sst_value_ref(pick(v, t, i));
        }
        args[t].n = per_thread;
    }
    sst_value_unref(v);
    pthread_t th[THREADS];
    for (int t = 0; t < THREADS; t++) {
        assert_int_equal(pthread_create(&th[t], NULL, drop_thread, &args[t]), 0);
    }
    for (int t = 0; t < THREADS; t++) {
        pthread_join(th[t], NULL);
    }
}

static const sst_value *pick_whole(const sst_value *v, int t, int i) {
    (void)t, (void)i;
    return v;
}

/* Interleaved elements, so that every arena chunk is shared by several threads. */
static const sst_value *pick_interleaved(const sst_value *v, int t, int i) {
    return sst_array_get(v, (size_t)(i * THREADS + t));
}

static void test_last_release_on_any_thread(void **state) {
    (void)state;
    long live_before = tu_chaos_live();
    for (int round = 0; round < 50; round++) {
        sst_value *v =
            sst_json_parse("{\"a\":[1,2,{\"b\":\"c\"}],\"d\":\"a longer string\"}", NULL);
        drop_everywhere(v, 16, pick_whole);
    }
    assert_int_equal(tu_chaos_live(), live_before);
}

/* Values of a large parse share arena chunks; their last releases race on chunk counts. */
static void test_arena_chunks_released_across_threads(void **state) {
    (void)state;
    long live_before = tu_chaos_live();
    size_t cap = 400000, k = 0;
    char *doc = malloc(cap);
    k += (size_t)snprintf(doc + k, cap - k, "[");
    for (int i = 0; i < 2000; i++) {
        k += (size_t)snprintf(doc + k, cap - k, "%s{\"id\":\"m%d\",\"n\":%d,\"t\":\"text %d\"}",
                              i ? "," : "", i, 100000 + i, i);
    }
    k += (size_t)snprintf(doc + k, cap - k, "]");
    assert_true(k > 70000); /* large enough for the arena */
    for (int round = 0; round < 5; round++) {
        sst_value *v = sst_json_read(doc, k, NULL, NULL);
        assert_non_null(v);
        drop_everywhere(v, 250, pick_interleaved);
    }
    free(doc);
    assert_int_equal(tu_chaos_live(), live_before);
}

int main(void) {
    tu_chaos_install(); /* counts live blocks; never armed here */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shared_reads_and_branches),
        cmocka_unit_test(test_last_release_on_any_thread),
        cmocka_unit_test(test_arena_chunks_released_across_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
