/* SPDX-License-Identifier: MIT */
/* The public agent API: model specs, tool sets, an agent run through sst_graph_invoke. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "superstep/agent.h"
#include "test_util.h"

static sst_value *twice(const sst_value *args, void *ud, sst_error *err) {
    (void)ud;
    return sst_int_new(2 * sst_int_value(sst_object_get(args, "n")), err);
}

static void on_event(const char *kind, const sst_value *data, void *ud) {
    char *log = ud;
    size_t used = strlen(log);
    const sst_value *name = sst_object_get(sst_object_get(data, "function"), "name");
    snprintf(log + used, 256 - used, "%s%s%s,", kind, name != NULL ? ":" : "",
             name != NULL ? sst_string_cstr(name) : "");
}

static sst_code count_tokens(const char *t, size_t n, void *ud) {
    (void)t;
    (void)n;
    (*(int *)ud)++;
    return SST_OK;
}

static void test_agent(void **state) {
    (void)state;
    const char replies[] =
        "{\"content\":\"doubling\",\"tool_calls\":[{\"id\":\"t\",\"type\":\"function\","
        "\"function\":"
        "{\"name\":\"twice\",\"arguments\":\"{\\\"n\\\":21}\"}}]}\n{\"content\":\"it is 42\"}\n";
    char path[64];
    tu_temp_file(replies, path, sizeof path);
    char spec[80];
    snprintf(spec, sizeof spec, "fake:%s", path);
    sst_error err = {0};
    sst_model *model = sst_model_from_spec(spec, NULL, NULL, &err);
    assert_non_null(model);
    remove(path);
    sst_toolset *tools = sst_toolset_new(&err);
    sst_value *p = tu_json("{\"type\":\"object\",\"properties\":{\"n\":{\"type\":\"integer\"}}}");
    assert_sst_ok(sst_toolset_add(tools, "twice", "Doubles.", p, twice, NULL, &err), &err);
    sst_value_unref(p);
    int tokens = 0;
    sst_agent_opts o;
    sst_agent_opts_init(&o);
    o.system_prompt = "Be brief.";
    o.on_token = count_tokens;
    o.token_user_data = &tokens;
    char log[256] = "";
    o.on_event = on_event;
    o.event_user_data = log;
    sst_agent *agent = sst_agent_new(model, tools, &o, &err);
    assert_non_null(agent);
    assert_int_equal(sst_agent_recursion_limit(agent),
                     21); /* 10 model calls, 10 tool steps, stop */
    sst_value *in = tu_json("{\"messages\":[{\"role\":\"user\",\"content\":\"double 21\"}]}");
    sst_graph_result *r = sst_graph_invoke(sst_agent_graph(agent), NULL, in, NULL, &err);
    sst_value_unref(in);
    assert_non_null(r);
    const sst_value *msgs = sst_object_get(sst_graph_result_state(r), "messages");
    assert_int_equal(sst_array_len(msgs), 4);
    assert_string_equal(sst_string_cstr(sst_object_get(sst_array_get(msgs, 2), "content")), "42");
    assert_string_equal(sst_string_cstr(sst_object_get(sst_array_get(msgs, 3), "content")),
                        "it is 42");
    assert_int_equal(tokens, 4); /* "doubling", "it ", "is ", "42" */
    assert_string_equal(log, "llm_start,llm_end,tool_start:twice,tool_end,llm_start,llm_end,");
    sst_graph_result_free(r);
    sst_agent_free(agent);
    sst_toolset_free(tools);
    sst_model_free(model);
}

/* Message events as they stream: "node:id:delta" lines. */
static sst_code on_stream(sst_stream_mode mode, const char *node, const sst_value *e, void *ud) {
    char *buf = ud;
    if (mode == SST_STREAM_MESSAGES) {
        size_t used = strlen(buf);
        snprintf(buf + used, 2048 - used, "%s:%s:%s\n", node,
                 sst_string_cstr(sst_object_get(e, "id")),
                 sst_string_cstr(sst_object_get(e, "delta")));
    }
    return SST_OK;
}

static void test_messages_stream(void **state) {
    (void)state;
    char path[64];
    tu_temp_file("{\"content\":\"hello there\"}\n", path, sizeof path);
    sst_error err = {0};
    sst_model *model = sst_model_fake(path, &err);
    remove(path);
    sst_agent *agent = sst_agent_new(model, NULL, NULL, &err);
    assert_non_null(agent);
    static char events[2048];
    events[0] = '\0';
    sst_invoke_opts io;
    sst_invoke_opts_init(&io);
    io.stream = on_stream;
    io.stream_user_data = events;
    io.stream_modes = SST_STREAM_MESSAGES;
    sst_value *in = tu_json("{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}");
    sst_graph_result *r = sst_graph_invoke(sst_agent_graph(agent), NULL, in, &io, &err);
    sst_value_unref(in);
    assert_non_null(r);
    const sst_value *msgs = sst_object_get(sst_graph_result_state(r), "messages");
    const char *id = sst_string_cstr(sst_object_get(sst_array_get(msgs, 1), "id"));
    char want[256];
    snprintf(want, sizeof want, "llm_call:%s:hello \nllm_call:%s:there\n", id, id);
    assert_string_equal(events, want); /* the stored reply carries the streamed id */
    sst_graph_result_free(r);
    sst_agent_free(agent);
    sst_model_free(model);
}

static void test_errors(void **state) {
    (void)state;
    sst_error err = {0};
    assert_null(sst_model_from_spec("gopher://x", "m", NULL, &err));
    assert_int_equal(err.code, SST_EINVAL);
    assert_null(sst_model_openai("http://127.0.0.1:1/v1", "", NULL, &err));
    assert_int_equal(err.code, SST_EINVAL);
    sst_model *m = sst_model_openai("http://127.0.0.1:1/v1", "m", "NO_SUCH_VAR", &err);
    assert_non_null(m);
    sst_agent_opts o;
    sst_agent_opts_init(&o);
    o.max_iterations = 0;
    assert_null(sst_agent_new(m, NULL, &o, &err));
    assert_string_equal(err.msg, "agent: max_iterations must be at least 1");
    assert_null(sst_agent_new(NULL, NULL, NULL, &err));
    /* Without an err the code still names the failure, not a guess of "out of memory". */
    assert_int_equal(sst_model_set_param(m, "temperature", NULL, NULL), SST_EINVAL);
    sst_value *t = tu_json("0.5");
    assert_int_equal(sst_model_set_param(m, "bad\xff", t, NULL), SST_EUTF8);
    assert_int_equal(sst_model_set_param(m, "temperature", t, NULL), SST_OK);
    sst_value_unref(t);
    sst_model_free(m);
}

/* Every allocation of sst_agent_new fails in turn, with err == NULL: NULL, no crash, no leak. */
static void test_agent_new_oom_without_err(void **state) {
    (void)state;
    sst_model *m = sst_model_openai("http://127.0.0.1:1/v1", "m", "NO_SUCH_VAR", NULL);
    assert_non_null(m);
    long baseline = tu_chaos_live();
    for (long n = 1;; n++) {
        tu_chaos_fail_at(n);
        sst_agent *a = sst_agent_new(m, NULL, NULL, NULL);
        int fired = tu_chaos_fired();
        tu_chaos_off();
        if (!fired) {
            assert_non_null(a);
            sst_agent_free(a);
            break;
        }
        if (a != NULL) {
            fail_msg("allocation %ld failed but sst_agent_new returned an agent", n);
        }
        if (tu_chaos_live() != baseline) {
            fail_msg("allocation %ld failed and %ld blocks leaked", n, tu_chaos_live() - baseline);
        }
    }
    assert_int_equal(tu_chaos_live(), baseline);
    sst_model_free(m);
}

int main(void) {
    tu_chaos_install();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_agent),
        cmocka_unit_test(test_messages_stream),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_agent_new_oom_without_err),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
