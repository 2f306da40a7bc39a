/* SPDX-License-Identifier: MIT */
/*
 * Structured output through the public API with the scripted model: the
 * agent's answer tool (LangChain's ToolStrategy) and the JSON reply (its
 * ProviderStrategy), a wrong answer sent back with the error, the bound on
 * wrong answers, tools run before the answer, usage summed per run, and one
 * model call (sst_model_invoke).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "superstep/agent.h"
#include "superstep/json.h"
#include "test_util.h"

static const char k_schema[] =
    "{\"title\": \"Contact\", \"type\": \"object\", \"properties\": {\"name\": {\"type\": "
    "\"string\"}, \"age\": {\"type\": \"integer\", \"minimum\": 0}}, \"required\": [\"name\", "
    "\"age\"], \"additionalProperties\": false}";

/* A scripted model from @p lines (JSONL). */
static sst_model *scripted(const char *lines) {
    char path[64];
    tu_temp_file(lines, path, sizeof path);
    char spec[80];
    snprintf(spec, sizeof spec, "fake:%s", path);
    sst_error err = {0};
    sst_model *m = sst_model_from_spec(spec, NULL, NULL, &err);
    remove(path);
    if (m == NULL) {
        print_error("model: %s\n", err.msg);
    }
    return m;
}

static sst_value *twice(const sst_value *args, void *ud, sst_error *err) {
    (void)ud;
    return sst_int_new(2 * sst_int_value(sst_object_get(args, "n")), err);
}

#define CALL(id, name, args)                                                                       \
    "{\"id\":\"" id "\",\"type\":\"function\",\"function\":{\"name\":\"" name                      \
    "\",\"arguments\":\"" args "\"}}"
#define USAGE "\"usage_metadata\":{\"input_tokens\":10,\"output_tokens\":3,\"total_tokens\":13}"

/* Runs @p model's agent with @p o on a fresh thread; returns the result. */
static sst_graph_result *run_agent(sst_model *model, sst_toolset *tools, sst_agent_opts *o,
                                   sst_agent **agent_out) {
    sst_error err = {0};
    sst_agent *agent = sst_agent_new(model, tools, o, &err);
    if (agent == NULL) {
        print_error("agent: %s\n", err.msg);
        fail();
    }
    sst_value *in = tu_json("{\"messages\": [{\"role\": \"user\", \"content\": \"Who?\"}]}");
    sst_graph_result *r = sst_graph_invoke(sst_agent_graph(agent), NULL, in, NULL, &err);
    sst_value_unref(in);
    assert_non_null(r);
    *agent_out = agent;
    return r;
}

/* Tool strategy: a wrong answer (age missing), then a tool, then the right answer. */
static void test_tool_strategy(void **state) {
    (void)state;
    sst_model *model = scripted("{\"content\":null,\"tool_calls\":[" CALL(
        "c1", "Contact",
        "{\\\"name\\\":\\\"Ada\\\"}") "]," USAGE "}\n"
                                      "{\"content\":null,\"tool_calls\":[" CALL(
                                          "c2", "twice",
                                          "{\\\"n\\\":18}") "]," USAGE "}\n"
                                                            "{\"content\":null,\"tool_calls\":"
                                                            "[" CALL("c3", "Contact",
                                                                     "{\\\"name\\\":\\\"Ada\\\","
                                                                     "\\\"age\\\":36}") "]," USAGE
                                                                                        "}\n");
    assert_non_null(model);
    sst_error err = {0};
    sst_toolset *tools = sst_toolset_new(&err);
    sst_value *p = tu_json("{\"type\":\"object\",\"properties\":{\"n\":{\"type\":\"integer\"}}}");
    assert_sst_ok(sst_toolset_add(tools, "twice", "Doubles.", p, twice, NULL, &err), &err);
    sst_value_unref(p);
    sst_value *schema = tu_json(k_schema);
    sst_agent_opts o;
    sst_agent_opts_init(&o);
    o.response_format = schema;
    sst_agent *agent = NULL;
    sst_graph_result *r = run_agent(model, tools, &o, &agent);
    sst_value_unref(schema); /* the agent keeps its own */
    assert_int_equal(sst_graph_result_status(r), SST_RUN_COMPLETED);
    const sst_value *st = sst_graph_result_state(r);
    assert_json_eq(sst_object_get(st, "structured_response"), "{\"name\": \"Ada\", \"age\": 36}");
    assert_json_eq(sst_object_get(st, "structured_retries"), "0");
    const sst_value *msgs = sst_object_get(st, "messages");
    /* user, answer 1, its error, call twice, its result, answer 2, its result */
    assert_int_equal(sst_array_len(msgs), 7);
    const char *fix = sst_string_cstr(sst_object_get(sst_array_get(msgs, 2), "content"));
    assert_non_null(strstr(fix, "error: the answer does not match the schema"));
    assert_non_null(strstr(fix, "age"));
    assert_non_null(strstr(fix, "Please fix your mistakes."));
    assert_json_eq(sst_object_get(sst_array_get(msgs, 4), "content"), "\"36\"");
    const char *done = sst_string_cstr(sst_object_get(sst_array_get(msgs, 6), "content"));
    assert_string_equal(done, "Returning structured response: {\"name\":\"Ada\",\"age\":36}");
    /* Three replies of 10 in, 3 out. */
    assert_json_eq(sst_graph_result_usage(r),
                   "{\"input_tokens\": 30, \"output_tokens\": 9, \"total_tokens\": 39}");
    sst_graph_result_free(r);
    sst_agent_free(agent);
    sst_toolset_free(tools);
    sst_model_free(model);
}

/* Three wrong answers in a row (the default bound) fail the run, naming the last problem. */
static void test_bound(void **state) {
    (void)state;
    sst_model *model = scripted(
        "{\"content\":\"I think it is Ada.\"}\n"
        "{\"content\":null,\"tool_calls\":[" CALL(
            "c1", "Contact", "not json") "]}\n"
                                         "{\"content\":null,\"tool_calls\":[" CALL(
                                             "c2", "Contact",
                                             "{\\\"name\\\":\\\"Ada\\\",\\\"age\\\":-1}") "]}\n");
    assert_non_null(model);
    sst_value *schema = tu_json(k_schema);
    sst_agent_opts o;
    sst_agent_opts_init(&o);
    o.response_format = schema;
    sst_agent *agent = NULL;
    sst_graph_result *r = run_agent(model, NULL, &o, &agent);
    sst_value_unref(schema);
    assert_int_equal(sst_graph_result_status(r), SST_RUN_FAILED);
    const sst_error *e = sst_graph_result_error(r);
    assert_int_equal(e->code, SST_EINVAL);
    assert_non_null(strstr(e->msg, "no valid answer after 3 attempts"));
    if (strstr(e->msg, "/age: must be >= 0") == NULL) {
        print_error("message: %s\n", e->msg);
    }
    assert_non_null(strstr(e->msg, "/age: must be >= 0"));
    sst_graph_result_free(r);
    sst_agent_free(agent);
    sst_model_free(model);
}

/* Provider strategy: the reply's text is the JSON; a bad one goes back as a user message. */
static void test_provider_strategy_and_invoke(void **state) {
    (void)state;
    sst_model *model =
        scripted("{\"content\":\"{\\\"name\\\": \\\"Ada\\\"}\"}\n"
                 "{\"content\":\"{\\\"name\\\": \\\"Ada\\\", \\\"age\\\": 36}\"}\n"
                 "{\"content\":null,\"tool_calls\":[" CALL(
                     "c9", "Contact", "{\\\"name\\\":\\\"Bo\\\",\\\"age\\\":7}") "]}\n");
    assert_non_null(model);
    sst_value *schema = tu_json(k_schema);
    sst_value *msgs = tu_json("[{\"role\": \"user\", \"content\": \"Who?\"}]");
    sst_model_call_opts o;
    sst_model_call_opts_init(&o);
    o.response_format = schema;
    o.strategy = SST_STRUCTURED_PROVIDER;
    sst_error err = {0};
    sst_value *reply = sst_model_invoke(model, msgs, &o, &err);
    assert_non_null(reply);
    assert_json_eq(sst_object_get(reply, "structured_response"),
                   "{\"name\": \"Ada\", \"age\": 36}");
    sst_value_unref(reply);
    /* The scripted model's default is the tool strategy. */
    o.strategy = SST_STRUCTURED_AUTO;
    reply = sst_model_invoke(model, msgs, &o, &err);
    assert_non_null(reply);
    assert_json_eq(sst_object_get(reply, "structured_response"), "{\"name\": \"Bo\", \"age\": 7}");
    sst_value_unref(reply);
    /* The script is spent: the model's error comes through. */
    assert_null(sst_model_invoke(model, msgs, &o, &err));
    assert_int_equal(err.code, SST_ERANGE);
    /* A schema that is not an object schema is refused before any call. */
    sst_value *bad = tu_json("{\"type\": \"array\"}");
    o.response_format = bad;
    assert_null(sst_model_invoke(model, msgs, &o, &err));
    assert_int_equal(err.code, SST_EINVAL);
    assert_non_null(strstr(err.msg, "must describe an object"));
    sst_value_unref(bad);
    sst_value_unref(msgs);
    sst_value_unref(schema);
    sst_model_free(model);
}

/* The answer tool may not take a tool's name. */
static void test_name_clash(void **state) {
    (void)state;
    sst_model *model = scripted("{\"content\":\"x\"}\n");
    sst_error err = {0};
    sst_toolset *tools = sst_toolset_new(&err);
    sst_value *p = tu_json("{\"type\":\"object\"}");
    assert_sst_ok(sst_toolset_add(tools, "Contact", "Clash.", p, twice, NULL, &err), &err);
    sst_value_unref(p);
    sst_value *schema = tu_json(k_schema);
    sst_agent_opts o;
    sst_agent_opts_init(&o);
    o.response_format = schema;
    assert_null(sst_agent_new(model, tools, &o, &err));
    assert_int_equal(err.code, SST_EINVAL);
    assert_non_null(strstr(err.msg, "'Contact' has the name of a tool"));
    sst_value_unref(schema);
    sst_toolset_free(tools);
    sst_model_free(model);
}

/* The last request the replay server got for @p model: its JSON body (new), or NULL. */
static sst_value *last_request(int port, const char *model) {
    char cmd[256];
    snprintf(cmd, sizeof cmd,
             "curl -s -X POST http://127.0.0.1:%d/_replay/last -d '{\"of\": \"%s\"}'", port, model);
    FILE *p = popen(cmd, "r");
    if (p == NULL) {
        return NULL;
    }
    char buf[65536];
    size_t n = fread(buf, 1, sizeof buf - 1, p);
    pclose(p);
    buf[n] = '\0';
    sst_error err = {0};
    sst_value *v = sst_json_read(buf, n, NULL, &err);
    sst_value *body = v != NULL ? sst_value_ref(sst_object_get(v, "body")) : NULL;
    sst_value_unref(v);
    return body;
}

/* Over the wire (tests/agent/replay_server.py): OpenAI's request says response_format
 * json_schema and the reply's text is the answer; Anthropic's offers the schema's tool and
 * says tool_choice "any", and the tool call is the answer. */
static void test_provider_requests(void **state) {
    (void)state;
    char script[512];
    tu_data_path("../agent/replay_server.py", script, sizeof script);
    int port;
    pid_t server = tu_python_server_start(script, &port);
    assert_true(server > 0);
    char base[64];
    snprintf(base, sizeof base, "http://127.0.0.1:%d/v1", port);
    sst_error err = {0};
    sst_value *schema = tu_json(k_schema);
    sst_value *msgs = tu_json("[{\"role\": \"user\", \"content\": \"Ada, 36\"}]");
    sst_model_call_opts o;
    sst_model_call_opts_init(&o);
    o.response_format = schema;

    sst_model *openai = sst_model_openai(base, "openai-structured", NULL, &err);
    assert_non_null(openai);
    sst_value *reply = sst_model_invoke(openai, msgs, &o, &err);
    if (reply == NULL) {
        print_error("openai: %s\n", err.msg);
    }
    assert_non_null(reply);
    assert_json_eq(sst_object_get(reply, "structured_response"),
                   "{\"name\": \"Ada\", \"age\": 36}");
    assert_json_eq(sst_object_get(sst_object_get(reply, "usage_metadata"), "input_tokens"), "80");
    sst_value_unref(reply);
    sst_value *body = last_request(port, "openai-structured");
    assert_non_null(body);
    const sst_value *rf = sst_object_get(body, "response_format");
    assert_json_eq(sst_object_get(rf, "type"), "\"json_schema\"");
    assert_json_eq(sst_object_get(sst_object_get(rf, "json_schema"), "name"), "\"Contact\"");
    assert_json_eq(sst_object_get(sst_object_get(rf, "json_schema"), "strict"), "true");
    assert_json_eq(
        sst_object_get(sst_object_get(sst_object_get(rf, "json_schema"), "schema"), "required"),
        "[\"name\", \"age\"]");
    assert_null(sst_object_get(body, "tools")); /* no tool: the reply itself is the answer */
    sst_value_unref(body);
    sst_model_free(openai);

    snprintf(base, sizeof base, "http://127.0.0.1:%d", port);
    sst_model *claude = sst_model_anthropic(base, "anthropic-structured", NULL, &err);
    assert_non_null(claude);
    reply = sst_model_invoke(claude, msgs, &o, &err);
    if (reply == NULL) {
        print_error("anthropic: %s\n", err.msg);
    }
    assert_non_null(reply);
    assert_json_eq(sst_object_get(reply, "structured_response"),
                   "{\"name\": \"Ada\", \"age\": 36}");
    sst_value_unref(reply);
    body = last_request(port, "anthropic-structured");
    assert_non_null(body);
    assert_json_eq(sst_object_get(body, "tool_choice"), "{\"type\": \"any\"}");
    const sst_value *tools = sst_object_get(body, "tools");
    const sst_value *tool = sst_array_get(tools, sst_array_len(tools) - 1);
    assert_json_eq(sst_object_get(tool, "name"), "\"Contact\"");
    assert_json_eq(sst_object_get(sst_object_get(tool, "input_schema"), "required"),
                   "[\"name\", \"age\"]");
    sst_value_unref(body);
    sst_model_free(claude);
    sst_value_unref(msgs);
    sst_value_unref(schema);
    tu_server_stop(server);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tool_strategy),
        cmocka_unit_test(test_bound),
        cmocka_unit_test(test_provider_strategy_and_invoke),
        cmocka_unit_test(test_name_clash),
        cmocka_unit_test(test_provider_requests),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
