/* SPDX-License-Identifier: MIT */
/*
 * What JSON Schema validation (src/agent/json_schema.c) takes on the inputs
 * test_json_schema checks for their outcome only (issue 34: a speed limit is
 * a benchmark's goal, never a unit test's):
 *
 *   hard_patterns  four patterns that make backtracking matchers (and glibc's
 *                  regexec) slow, against 20 000 CJK characters
 *   costly_schema  a schema whose work doubles at each of 40 levels, stopped
 *                  by the step budget
 *   objects_100k   100 000 objects of two checked properties
 *   unique_200k    uniqueItems over 200 001 numbers
 *   string_1mb     a 1 MB string against a pattern and maxLength
 *   items_3m       3 000 000 items, 8 evaluations each
 *
 *   bench_schema [--quick] [--json] [--reps R]
 *
 * Prints the median seconds of R runs of each. Goals: the hard patterns in
 * under 1 s together, the costly schema stopped in under 5 s (test_json_schema
 * had a 30 s limit on each, which an ASan build on a busy machine passed).
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/json_schema.h"
#include "workloads.h"

typedef struct text {
    char *data;
    size_t len, cap;
} text;

static void put(text *t, const char *s) {
    size_t n = strlen(s);
    if (t->len + n + 1 > t->cap) {
        t->cap = (t->len + n + 1) * 2;
        t->data = realloc(t->data, t->cap);
        if (t->data == NULL) {
            bw_die("text", NULL);
        }
    }
    memcpy(t->data + t->len, s, n + 1);
    t->len += n;
}

static void putf(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void putf(text *t, const char *fmt, ...) {
    char buf[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    put(t, buf);
}

static sst__json_schema *compile(const char *json) {
    sst_value *v = bw_json(json);
    sst_error err = {0};
    sst__json_schema *s = sst__json_schema_compile(v, &err);
    sst_value_unref(v);
    if (s == NULL) {
        bw_die("compile", &err);
    }
    return s;
}

/* Seconds one validation of @p v against @p s takes; exits unless it ends with @p want. */
static double timed(const sst__json_schema *s, const sst_value *v, sst_code want) {
    sst_error err = {0};
    double t0 = bw_now_s();
    sst_code rc = sst__json_schema_validate(s, v, &err);
    double secs = bw_now_s() - t0;
    if (rc != want) {
        fprintf(stderr, "bench: want %s, got %s: %s\n", sst_code_name(want), sst_code_name(rc),
                err.msg);
        exit(1);
    }
    return secs;
}

static double hard_patterns(void) {
    text t = {0};
    put(&t, "\"");
    for (int i = 0; i < 20000; i++) {
        put(&t, "\\u4e00");
    }
    put(&t, "\"");
    sst_value *v = bw_json(t.data);
    free(t.data);
    static const char *const patterns[] = {".{1,100}y", "^(.{1,200})+$y", "(a|aa)*b",
                                           "^[^x]{1,500}$"};
    double secs = 0;
    for (size_t i = 0; i < sizeof patterns / sizeof patterns[0]; i++) {
        char schema[128];
        snprintf(schema, sizeof schema, "{\"pattern\":\"%s\"}", patterns[i]);
        sst__json_schema *s = compile(schema);
        secs += timed(s, v, SST_EINVAL);
        sst__json_schema_free(s);
    }
    sst_value_unref(v);
    return secs;
}

static double costly_schema(void) {
    sst__json_schema *s = compile(
        "{\"$defs\":{\"n\":{\"anyOf\":[{\"properties\":{\"x\":{\"$ref\":\"#/$defs/n\"}}},{"
        "\"properties\":{\"x\":{\"$ref\":\"#/$defs/n\"}}}],\"type\":\"object\"}},\"$ref\":\"#/"
        "$defs/n\"}");
    text t = {0};
    for (int i = 0; i < 40; i++) {
        put(&t, "{\"x\":");
    }
    put(&t, "1");
    for (int i = 0; i < 40; i++) {
        put(&t, "}");
    }
    sst_value *v = bw_json(t.data);
    free(t.data);
    double secs = timed(s, v, SST_ELIMIT);
    sst_value_unref(v);
    sst__json_schema_free(s);
    return secs;
}

static double objects_100k(void) {
    sst__json_schema *s = compile(
        "{\"type\":\"array\",\"items\":{\"type\":\"object\",\"properties\":{\"id\":{\"type\":"
        "\"integer\",\"minimum\":0},\"name\":{\"type\":\"string\",\"pattern\":\"^[a-z]+[0-9]*$\"}},"
        "\"required\":[\"id\",\"name\"],\"additionalProperties\":false}}");
    text t = {0};
    put(&t, "[");
    for (int i = 0; i < 100000; i++) {
        putf(&t, "%s{\"id\":%d,\"name\":\"item%d\"}", i ? "," : "", i, i);
    }
    put(&t, "]");
    sst_value *v = bw_json(t.data);
    free(t.data);
    double secs = timed(s, v, SST_OK);
    sst_value_unref(v);
    sst__json_schema_free(s);
    return secs;
}

static double unique_200k(void) {
    sst__json_schema *s = compile("{\"uniqueItems\":true}");
    text t = {0};
    put(&t, "[");
    for (int i = 0; i < 200000; i++) {
        putf(&t, "%s%d", i ? "," : "", i);
    }
    put(&t, ",17.0]");
    sst_value *v = bw_json(t.data);
    free(t.data);
    double secs = timed(s, v, SST_EINVAL);
    sst_value_unref(v);
    sst__json_schema_free(s);
    return secs;
}

static double string_1mb(void) {
    sst__json_schema *s = compile("{\"maxLength\":1000000,\"pattern\":\"^[a-z]*$\"}");
    char *big = malloc(1000003);
    if (big == NULL) {
        bw_die("string", NULL);
    }
    big[0] = '"';
    for (int i = 1; i <= 1000000; i++) {
        big[i] = (char)('a' + i % 26);
    }
    memcpy(big + 1000001, "\"", 2);
    sst_value *v = bw_json(big);
    free(big);
    double secs = timed(s, v, SST_OK);
    sst_value_unref(v);
    sst__json_schema_free(s);
    return secs;
}

static double items_3m(void) {
    sst__json_schema *s =
        compile("{\"items\":{\"anyOf\":[{\"type\":\"string\"},{\"allOf\":[{\"type\":"
                "\"integer\"},{\"minimum\":0},{\"maximum\":9},{\"not\":{\"const\":-1}}]}]}}");
    char *big = malloc(6000002);
    if (big == NULL) {
        bw_die("items", NULL);
    }
    big[0] = '[';
    for (int i = 0; i < 3000000; i++) {
        big[1 + 2 * i] = (char)('0' + i % 10);
        big[2 + 2 * i] = ',';
    }
    memcpy(big + 6000000, "]", 2);
    sst_value *v = bw_json(big);
    free(big);
    double secs = timed(s, v, SST_OK);
    sst_value_unref(v);
    sst__json_schema_free(s);
    return secs;
}

int main(int argc, char **argv) {
    int reps = 5;
    bool json = false, quick = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0) {
            quick = true;
            reps = 1;
        } else if (strcmp(argv[i], "--json") == 0) {
            json = true;
        } else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) {
            reps = (int)strtol(argv[++i], NULL, 10);
        } else {
            fprintf(stderr, "usage: bench_schema [--quick] [--json] [--reps R]\n");
            return 2;
        }
    }
    reps = reps < 1 ? 1 : reps > BW_MAX_REPS ? BW_MAX_REPS : reps;
    static const struct {
        const char *name;
        double (*run)(void);
        bool in_quick;
    } cases[] = {
        {"hard_patterns", hard_patterns, true}, {"costly_schema", costly_schema, true},
        {"objects_100k", objects_100k, false},  {"unique_200k", unique_200k, false},
        {"string_1mb", string_1mb, false},      {"items_3m", items_3m, false},
    };
    enum { N = sizeof cases / sizeof cases[0] };
    double med[N] = {0};
    for (int k = 0; k < N; k++) {
        if (quick && !cases[k].in_quick) {
            continue;
        }
        double xs[BW_MAX_REPS];
        for (int r = 0; r < reps; r++) {
            xs[r] = cases[k].run();
        }
        med[k] = bw_median(xs, reps);
    }
    if (json) {
        printf("{\"bench\":\"schema\",\"reps\":%d", reps);
        for (int k = 0; k < N; k++) {
            if (!quick || cases[k].in_quick) {
                printf(",\"%s_s\":%.4f", cases[k].name, med[k]);
            }
        }
        printf("}\n");
        return 0;
    }
    printf("JSON Schema validation, median of %d (seconds)\n", reps);
    for (int k = 0; k < N; k++) {
        if (!quick || cases[k].in_quick) {
            printf("  %-14s %8.4f s\n", cases[k].name, med[k]);
        }
    }
    printf("goals: hard patterns < 1 s (%s), costly schema stopped < 5 s (%s)\n",
           med[0] < 1 ? "met" : "MISSED", med[1] < 5 ? "met" : "MISSED");
    return 0;
}
