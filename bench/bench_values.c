/* SPDX-License-Identifier: MIT */
/*
 * Values-layer benchmarks (issue 2). Prints figures; never fails on speed.
 *
 *  1. Parse and serialise a ~5 MB document of 20 000 chat messages with our
 *     reader/writer and with jansson in the same run: MB/s and the ratio.
 *  2. Append 100 000 messages one at a time to an array whose previous
 *     version is still held (no in-place update): time per append.
 *  3. add_messages merging one new message into histories of growing size.
 *
 * Usage: bench_values [--quick]
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "superstep/superstep.h"
#include "workloads.h"
#ifdef SST_HAVE_JANSSON
#include <jansson.h>
#endif

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef struct stats {
    double median, min;
} stats;

static stats summarize(double *t, int n) {
    qsort(t, (size_t)n, sizeof *t, cmp_double);
    stats s = {t[n / 2], t[0]};
    return s;
}

/* The document of the dependency notes: 20 000 messages, ~5 MB. */
static char *make_doc(int n, size_t *len) {
    size_t cap = (size_t)n * 400 + 64, k = 0;
    char *buf = malloc(cap);
    k += (size_t)snprintf(buf + k, cap - k, "{\"messages\":[");
    for (int i = 0; i < n; i++) {
        if (i > 0) {
            buf[k++] = ',';
        }
        k += (size_t)snprintf(
            buf + k, cap - k,
            "{\"id\":\"msg-%08d-4a1b-9c2d-%012d\",\"role\":\"%s\",\"content\":\"Message %d: "
            "na\xC3\xAFve caf\xC3\xA9 \xE2\x80\x94 \\\"quoted\\\" text with a newline\\n and a "
            "tab\\t, \xE4\xB8\x96\xE7\x95\x8C \xF0\x9F\x98\x80 plus some ordinary words to make "
            "the content a realistic length for a chat turn.\",\"metadata\":{\"tokens\":%d,"
            "\"ts\":%d.%03d,\"seq\":%lld}%s}",
            i, i, i % 2 ? "assistant" : "user", i, 20 + i % 300, 1700000000 + i, i % 1000,
            9007199254740993LL + i,
            i % 10 == 0 ? ",\"tool_calls\":[{\"id\":\"call_1\",\"type\":\"function\","
                          "\"function\":{\"name\":\"search\",\"arguments\":\"{\\\"q\\\":"
                          "\\\"weather\\\"}\"}}]"
                        : "");
    }
    k += (size_t)snprintf(buf + k, cap - k, "]}");
    *len = k;
    return buf;
}

static void bench_json(int reps) {
    size_t len;
    char *doc = make_doc(20000, &len);
    double mb = (double)len / 1e6;
    double *t = malloc(sizeof(double) * (size_t)reps);
    sst_value *v = NULL;
    for (int r = 0; r < reps; r++) {
        double t0 = bw_now_s();
        sst_value *x = sst_json_read(doc, len, NULL, NULL);
        t[r] = bw_now_s() - t0;
        if (x == NULL) {
            fprintf(stderr, "bench: our parser rejected the document\n");
            exit(1);
        }
        sst_value_unref(v);
        v = x;
    }
    stats ours_parse = summarize(t, reps);
    for (int r = 0; r < reps; r++) {
        double t0 = bw_now_s();
        char *text = sst_json_write(v, SST_JSON_COMPACT, NULL, NULL);
        t[r] = bw_now_s() - t0;
        sst_free(text);
    }
    stats ours_write = summarize(t, reps);
    printf("document: %d messages, %.2f MB\n\n", 20000, mb);
    printf("%-28s %12s %12s %12s\n", "operation", "median ms", "min ms", "MB/s");
    printf("%-28s %12.2f %12.2f %12.0f\n", "superstep parse", ours_parse.median * 1e3,
           ours_parse.min * 1e3, mb / ours_parse.median);
    printf("%-28s %12.2f %12.2f %12.0f\n", "superstep write (compact)", ours_write.median * 1e3,
           ours_write.min * 1e3, mb / ours_write.median);
#ifdef SST_HAVE_JANSSON
    json_t *j = NULL;
    for (int r = 0; r < reps; r++) {
        json_error_t e;
        double t0 = bw_now_s();
        json_t *x = json_loadb(doc, len, 0, &e);
        t[r] = bw_now_s() - t0;
        json_decref(j);
        j = x;
    }
    stats jp = summarize(t, reps);
    for (int r = 0; r < reps; r++) {
        double t0 = bw_now_s();
        char *text = json_dumps(j, JSON_COMPACT);
        t[r] = bw_now_s() - t0;
        free(text);
    }
    stats jw = summarize(t, reps);
    json_decref(j);
    printf("%-28s %12.2f %12.2f %12.0f\n", "jansson parse", jp.median * 1e3, jp.min * 1e3,
           mb / jp.median);
    printf("%-28s %12.2f %12.2f %12.0f\n", "jansson write (compact)", jw.median * 1e3, jw.min * 1e3,
           mb / jw.median);
    printf("\nparse: superstep is %.1fx jansson (goal >= 10x); write: %.1fx\n",
           jp.median / ours_parse.median, jw.median / ours_write.median);
#else
    printf("\n(jansson not found at build time: no comparison)\n");
#endif
    sst_value_unref(v);
    free(t);
    free(doc);
}

static sst_value *make_message(int i) {
    char text[160];
    snprintf(text, sizeof text,
             "{\"id\":\"m%d\",\"role\":\"assistant\",\"content\":\"reply number %d\"}", i, i);
    return sst_json_parse(text, NULL);
}

static void bench_append(int n) {
    /* Pre-build the messages so that only the appends are timed. */
    sst_value **msgs = malloc(sizeof *msgs * (size_t)n);
    for (int i = 0; i < n; i++) {
        msgs[i] = make_message(i);
    }
    /* Persistent: each push goes to a version that an older state still holds. */
    sst_value *prev = sst_array_empty();
    double t0 = bw_now_s();
    for (int i = 0; i < n; i++) {
        sst_value *next = sst_array_push_take(sst_value_ref(prev), sst_value_ref(msgs[i]), NULL);
        sst_value_unref(prev); /* the older version lives until the new one exists */
        prev = next;
    }
    double shared = bw_now_s() - t0;
    /* Keep every version alive (a checkpoint history in memory). */
    sst_value **all = malloc(sizeof *all * (size_t)(n + 1));
    all[0] = sst_array_empty();
    t0 = bw_now_s();
    for (int i = 0; i < n; i++) {
        all[i + 1] = sst_array_push_take(sst_value_ref(all[i]), sst_value_ref(msgs[i]), NULL);
    }
    double kept = bw_now_s() - t0;
    /* In place: the caller holds the only reference. */
    sst_value *own = sst_array_empty();
    t0 = bw_now_s();
    for (int i = 0; i < n; i++) {
        own = sst_array_push_take(own, sst_value_ref(msgs[i]), NULL);
    }
    double unique = bw_now_s() - t0;
    printf("\nappend %d messages one at a time:\n", n);
    printf("  %-52s %8.3f us/append (goal well under 2 us)\n",
           "onto a version an older state still holds", shared / n * 1e6);
    printf("  %-52s %8.3f us/append\n", "keeping all versions alive", kept / n * 1e6);
    printf("  %-52s %8.3f us/append\n", "in place (only reference)", unique / n * 1e6);
    for (int i = 0; i <= n; i++) {
        sst_value_unref(all[i]);
    }
    for (int i = 0; i < n; i++) {
        sst_value_unref(msgs[i]);
    }
    sst_value_unref(prev);
    sst_value_unref(own);
    free(all);
    free(msgs);
}

static void bench_add_messages(int max_n) {
    printf("\nadd_messages: one new message merged into a history of n messages\n");
    for (int n = 1000; n <= max_n; n *= 10) {
        /* Built through the reducer, as a graph's state is: the list carries its id index. */
        sst_value *hist = sst_array_empty();
        double b0 = bw_now_s();
        for (int i = 0; i < n; i++) {
            sst_value *m = make_message(i);
            const sst_value *ups[] = {m};
            hist = sst_reducer_apply(sst_reducer_add_messages(), "messages", hist, ups, 1, NULL);
            sst_value_unref(m);
        }
        double build = (bw_now_s() - b0) / n;
        int reps = 200;
        double t0 = bw_now_s();
        for (int r = 0; r < reps; r++) {
            sst_value *m = make_message(n + r);
            const sst_value *ups[] = {m};
            sst_value *out = sst_reducer_apply(sst_reducer_add_messages(), "messages",
                                               sst_value_ref(hist), ups, 1, NULL);
            sst_value_unref(out);
            sst_value_unref(m);
        }
        double dt = (bw_now_s() - t0) / reps;
        /* Without the index (a list from JSON or a checkpoint): the first merge builds it. */
        char *text = sst_json_write(hist, SST_JSON_COMPACT, NULL, NULL);
        sst_value *plain = sst_json_parse(text, NULL);
        sst_free(text);
        sst_value *m = make_message(-1);
        const sst_value *ups[] = {m};
        double c0 = bw_now_s();
        sst_value *out = sst_reducer_apply(sst_reducer_add_messages(), "messages",
                                           sst_value_ref(plain), ups, 1, NULL);
        double cold = bw_now_s() - c0;
        sst_value_unref(out);
        sst_value_unref(m);
        sst_value_unref(plain);
        printf("  n = %-8d %8.2f us per merge (appending while building: %.2f us; first merge "
               "into a list without its index: %.0f us)\n",
               n, dt * 1e6, build * 1e6, cold * 1e6);
        sst_value_unref(hist);
    }
}

int main(int argc, char **argv) {
    bool quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
    printf("superstep %s values benchmark%s\n\n", sst_version(), quick ? " (quick)" : "");
    bench_json(quick ? 3 : 9);
    bench_append(100000);
    bench_add_messages(quick ? 10000 : 100000);
    return 0;
}
