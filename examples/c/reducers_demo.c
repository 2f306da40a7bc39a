/* SPDX-License-Identifier: MIT */
/*
 * A tour of the foundation: a state schema with reducers, one superstep in
 * which two tasks write the same fields, and add_messages merging a chat.
 *
 *   cmake -S . -B build && cmake --build build && ./build/examples/reducers_demo
 */
#include <stdio.h>
#include <stdlib.h>

#include <superstep/superstep.h>

/* Prints the error and exits: an example keeps error handling short. */
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

static void print(const char *label, const sst_value *v) {
    char *text = sst_json_write(v, SST_JSON_PRETTY, NULL, NULL);
    printf("%s:\n%s\n\n", label, text != NULL ? text : "(out of memory)");
    sst_free(text);
}

int main(void) {
    sst_error err;
    printf("superstep %s\n\n", sst_version());

    /* The state: counter (sum, starts at 10), messages (add_messages), log (append). */
    sst_schema *schema = sst_schema_new(&err);
    if (schema == NULL) {
        check(err.code, &err);
    }
    check(sst_schema_add_field(schema, "counter", sst_reducer_sum(), sst_int_new(10, NULL), &err),
          &err);
    check(sst_schema_add_field(schema, "messages", sst_reducer_add_messages(), sst_array_empty(),
                               &err),
          &err);
    check(sst_schema_add_field(schema, "log", sst_reducer_append(), sst_array_empty(), &err), &err);
    sst_value *state = sst_schema_initial_state(schema, &err);

    /* Superstep 1: the input is applied as a delta; a bare string becomes a user message. */
    sst_value *input = sst_schema_prepare_delta(
        schema, json("{\"messages\": \"What is 10 + 5 + 3?\", \"log\": [\"input\"]}"), &err);
    if (input == NULL) {
        check(err.code, &err);
    }
    const sst_value *step1[] = {input};
    state = sst_schema_apply(schema, state, step1, 1, &err);

    /* Superstep 2: tasks A and B run in parallel on the same snapshot and both
     * write counter and log. Their deltas merge in task order: 10 + 5 + 3 = 18. */
    sst_value *a = json("{\"counter\": 5, \"log\": [\"A added 5\"]}");
    sst_value *b = json("{\"counter\": 3, \"log\": [\"B added 3\"],"
                        " \"messages\": [[\"assistant\", \"It is 18.\"]]}");
    b = sst_schema_prepare_delta(schema, b, &err); /* fixes message ids before storing */
    const sst_value *step2[] = {a, b};
    sst_value *before = sst_value_ref(state); /* keep the old version: it stays unchanged */
    state = sst_schema_apply(schema, state, step2, 2, &err);
    if (state == NULL) {
        check(err.code, &err);
    }
    print("state after two supersteps", state);
    printf("counter: %lld (the seed example: 10 + 5 + 3)\n",
           (long long)sst_int_value(sst_object_get(state, "counter")));
    printf("the previous version still has counter = %lld\n\n",
           (long long)sst_int_value(sst_object_get(before, "counter")));

    /* Errors name the reducer, the field and both types. */
    sst_value *bad = json("{\"counter\": \"five\"}");
    const sst_value *step3[] = {bad};
    sst_value *fail = sst_schema_apply(schema, sst_value_ref(state), step3, 1, &err);
    printf("a bad update is refused: %s: %s\n", sst_code_name(err.code), err.msg);

    sst_value_unref(fail);
    sst_value_unref(bad);
    sst_value_unref(before);
    sst_value_unref(a);
    sst_value_unref(b);
    sst_value_unref(input);
    sst_value_unref(state);
    sst_schema_free(schema);
    return 0;
}
