/* SPDX-License-Identifier: MIT */
/*
 * Agent middleware through the public API with the scripted model: hook
 * order and jumps (LangChain 1.x's create_agent), wrap hooks around model
 * and tool calls, and the built-in human-in-the-loop, call limits,
 * summarization and fallback middleware.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "superstep/agent.h"
#include "superstep/checkpoint.h"
#include "test_util.h"

#define CALL(id, name, args)                                                                       \
    "{\"id\":\"" id "\",\"type\":\"function\",\"function\":{\"name\":\"" name                      \
    "\",\"arguments\":\"" args "\"}}"
#define TOOL_REPLY(id, name, args) "{\"content\":null,\"tool_calls\":[" CALL(id, name, args) "]}\n"

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

static sst_value *echo_tool(const sst_value *args, void *ud, sst_error *err) {
    (void)ud;
    const sst_value *t = sst_object_get(args, "text");
    return sst_string_new(sst_is_string(t) ? sst_string_cstr(t) : "?", err);
}

static sst_toolset *echo_tools(void) {
    sst_error err = {0};
    sst_toolset *t = sst_toolset_new(&err);
    sst_value *p = tu_json("{\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\"}}}");
    assert_sst_ok(sst_toolset_add(t, "echo", "Echoes.", p, echo_tool, NULL, &err), &err);
    assert_sst_ok(sst_toolset_add(t, "shout", "Echoes.", p, echo_tool, NULL, &err), &err);
    sst_value_unref(p);
    return t;
}

/* A run of @p agent on thread @p th (NULL: none) with @p input JSON (NULL: resume). */
static sst_graph_result *invoke(sst_agent *agent, sst_graph_thread *th, const char *input,
                                const sst_value *resume) {
    sst_error err = {0};
    sst_value *in = input != NULL ? tu_json(input) : NULL;
    sst_invoke_opts o;
    sst_invoke_opts_init(&o);
    o.resume = resume;
    o.recursion_limit = 100;
    sst_graph_result *r = sst_graph_invoke(sst_agent_graph(agent), th, in, &o, &err);
    sst_value_unref(in);
    if (r == NULL) {
        print_error("invoke: %s\n", err.msg);
        fail();
    }
    return r;
}

static const char *content_at(const sst_graph_result *r, size_t i) {
    const sst_value *msgs = sst_object_get(sst_graph_result_state(r), "messages");
    const sst_value *c = sst_object_get(sst_array_get(msgs, i), "content");
    return sst_is_string(c) ? sst_string_cstr(c) : NULL;
}

static size_t n_messages(const sst_graph_result *r) {
    return sst_array_len(sst_object_get(sst_graph_result_state(r), "messages"));
}

/* ---- custom middleware: order, wraps, jumps ---- */

typedef struct recorder {
    char name;
    char *log; /* shared, 512 bytes */
    bool jump_end_after_model;
} recorder;

static void note(const recorder *r, const char *what) {
    size_t used = strlen(r->log);
    snprintf(r->log + used, 512 - used, "%c.%s ", r->name, what);
}

static sst_code before_agent(sst_node_ctx *ctx, void *ud) {
    (void)ctx;
    note(ud, "ba");
    return SST_OK;
}
static sst_code before_model(sst_node_ctx *ctx, void *ud) {
    (void)ctx;
    note(ud, "bm");
    return SST_OK;
}
static sst_code after_model(sst_node_ctx *ctx, void *ud) {
    const recorder *r = ud;
    note(r, "am");
    sst_error err = {0};
    if (r->jump_end_after_model) {
        sst_value *m = tu_json("[{\"role\": \"assistant\", \"content\": \"stopped by B\"}]");
        assert_sst_ok(sst_node_update(ctx, "messages", m, &err), &err);
        return sst_agent_jump_to(ctx, "end", &err);
    }
    return SST_OK;
}
static sst_code after_agent(sst_node_ctx *ctx, void *ud) {
    (void)ctx;
    note(ud, "aa");
    return SST_OK;
}
static sst_value *wrap_model(sst_model_request *req, sst_model_handler next, void *next_data,
                             void *ud, sst_error *err) {
    const recorder *r = ud;
    note(r, "wm<");
    char prompt[64];
    snprintf(prompt, sizeof prompt, "%s+%c",
             sst_model_request_system_prompt(req) != NULL ? sst_model_request_system_prompt(req)
                                                          : "",
             r->name);
    if (sst_model_request_set_system_prompt(req, prompt, err) != SST_OK) {
        return NULL;
    }
    sst_value *reply = next(req, next_data, err);
    note(r, ">wm");
    return reply;
}
static sst_value *wrap_tool(const sst_value *call, sst_node_ctx *ctx, sst_tool_handler next,
                            void *next_data, void *ud, sst_error *err) {
    (void)ctx;
    const recorder *r = ud;
    note(r, "wt");
    sst_value *msg = next(call, next_data, err);
    if (msg == NULL || r->name != 'A') {
        return msg;
    }
    char text[128];
    snprintf(text, sizeof text, "%s (seen by A)", sst_string_cstr(sst_object_get(msg, "content")));
    return sst_object_set_take(msg, "content", sst_string_new(text, err), err);
}

static char g_prompt[128];
static void on_event(const char *kind, const sst_value *data, void *ud) {
    (void)ud;
    if (strcmp(kind, "llm_start") == 0) {
        const sst_value *c = sst_object_get(sst_array_get(data, 0), "content");
        snprintf(g_prompt, sizeof g_prompt, "%s", sst_is_string(c) ? sst_string_cstr(c) : "");
    }
}

static sst_middleware *recorder_mw(recorder *r, const char *name) {
    sst_middleware_hooks h = {.before_agent = before_agent,
                              .before_model = before_model,
                              .after_model = after_model,
                              .after_agent = after_agent,
                              .wrap_model_call = wrap_model,
                              .wrap_tool_call = wrap_tool,
                              .user_data = r};
    sst_error err = {0};
    sst_middleware *m = sst_middleware_new(name, &h, &err);
    assert_non_null(m);
    return m;
}

static void test_order_wraps_and_jump(void **state) {
    (void)state;
    char log[512] = "";
    recorder ra = {'A', log, false}, rb = {'B', log, false};
    sst_middleware *mw[2] = {recorder_mw(&ra, "A"), recorder_mw(&rb, "B")};
    sst_model *model =
        scripted(TOOL_REPLY("c1", "echo", "{\\\"text\\\":\\\"hi\\\"}") "{\"content\":\"done\"}\n"
                                                                       "{\"content\":\"never\"}\n");
    sst_toolset *tools = echo_tools();
    sst_agent_opts o;
    sst_agent_opts_init(&o);
    o.system_prompt = "sys";
    o.middleware = mw;
    o.n_middleware = 2;
    o.on_event = on_event;
    sst_error err = {0};
    sst_agent *agent = sst_agent_new(model, tools, &o, &err);
    assert_non_null(agent);
    sst_graph_result *r = invoke(agent, NULL,
                                 "{\"messages\": [{\"role\": \"user\", \"content\": "
                                 "\"go\"}]}",
                                 NULL);
    assert_int_equal(sst_graph_result_status(r), SST_RUN_COMPLETED);
    /* LangChain's order: before_* first to last, after_* last to first, A wraps B. */
    assert_string_equal(log, "A.ba B.ba A.bm B.bm A.wm< B.wm< B.>wm A.>wm B.am A.am A.wt B.wt "
                             "A.bm B.bm A.wm< B.wm< B.>wm A.>wm B.am A.am B.aa A.aa ");
    assert_string_equal(g_prompt, "sys+A+B");
    assert_string_equal(content_at(r, 2), "hi (seen by A)");
    assert_string_equal(content_at(r, 3), "done");
    sst_graph_result_free(r);
    sst_agent_free(agent);

    /* B's after_model jumps to the end: A's after_model is skipped, after_agent runs. */
    log[0] = '\0';
    rb.jump_end_after_model = true;
    agent = sst_agent_new(model, tools, &o, &err);
    assert_non_null(agent);
    r = invoke(agent, NULL, "{\"messages\": [{\"role\": \"user\", \"content\": \"go\"}]}", NULL);
    assert_int_equal(sst_graph_result_status(r), SST_RUN_COMPLETED);
    assert_string_equal(log, "A.ba B.ba A.bm B.bm A.wm< B.wm< B.>wm A.>wm B.am B.aa A.aa ");
    assert_string_equal(content_at(r, n_messages(r) - 1), "stopped by B");
    sst_graph_result_free(r);
    sst_agent_free(agent);
    /* The graph shows each hook as a node. */
    sst_toolset_free(tools);
    sst_model_free(model);
    sst_middleware_free(mw[0]);
    sst_middleware_free(mw[1]);
}

/* Bad middleware: duplicate names, no hooks, a jump outside a hook. */
static void test_bad_middleware(void **state) {
    (void)state;
    sst_error err = {0};
    sst_middleware_hooks none = {0};
    assert_null(sst_middleware_new("x", &none, &err));
    assert_int_equal(err.code, SST_EINVAL);
    assert_non_null(strstr(err.msg, "no hook"));
    char log[512] = "";
    recorder r = {'A', log, false};
    sst_middleware *mw[2] = {recorder_mw(&r, "same"), recorder_mw(&r, "same")};
    assert_null(
        sst_middleware_new("a.b", &(sst_middleware_hooks){.before_model = before_model}, &err));
    sst_model *model = scripted("{\"content\":\"x\"}\n");
    sst_agent_opts o;
    sst_agent_opts_init(&o);
    o.middleware = mw;
    o.n_middleware = 2;
    assert_null(sst_agent_new(model, NULL, &o, &err));
    assert_int_equal(err.code, SST_EINVAL);
    assert_non_null(strstr(err.msg, "two middleware are named 'same'"));
    assert_int_equal(sst_agent_jump_to(NULL, "end", &err), SST_EINVAL);
    sst_middleware_free(mw[0]);
    sst_middleware_free(mw[1]);
    sst_model_free(model);
}

/* ---- human in the loop ---- */

static void test_human_in_the_loop(void **state) {
    (void)state;
    sst_error err = {0};
    sst_value *cfg = tu_json("{\"echo\": true, \"shout\": {\"allowed_decisions\": [\"approve\", "
                             "\"reject\"], \"description\": \"Shouting needs a yes\"}}");
    sst_middleware *hitl = sst_middleware_human_in_the_loop(cfg, &err);
    sst_value_unref(cfg);
    assert_non_null(hitl);
    sst_model *model = scripted("{\"content\":null,\"tool_calls\":[" CALL(
        "c1", "echo",
        "{\\\"text\\\":\\\"a\\\"}") "," CALL("c2", "shout",
                                             "{\\\"text\\\":\\\"b\\\"}") "]}\n"
                                                                         "{\"content\":\"first "
                                                                         "done\"}\n" TOOL_REPLY(
                                                                             "c3", "echo",
                                                                             "{\\\"text\\\":"
                                                                             "\\\"c\\\"}") "{\"cont"
                                                                                           "ent\":"
                                                                                           "\"secon"
                                                                                           "d "
                                                                                           "done\"}"
                                                                                           "\n");
    sst_toolset *tools = echo_tools();
    sst_middleware *mw[1] = {hitl};
    sst_agent_opts o;
    sst_agent_opts_init(&o);
    o.middleware = mw;
    o.n_middleware = 1;
    sst_agent *agent = sst_agent_new(model, tools, &o, &err);
    assert_non_null(agent);
    sst_checkpointer *cp = sst_memory_saver_new(&err);
    sst_graph_thread *th = sst_graph_thread_open(sst_agent_graph(agent), cp, "h", &err);
    sst_graph_result *r =
        invoke(agent, th, "{\"messages\": [{\"role\": \"user\", \"content\": \"go\"}]}", NULL);
    assert_int_equal(sst_graph_result_status(r), SST_RUN_INTERRUPTED);
    const sst_value *ask =
        sst_object_get(sst_array_get(sst_graph_result_interrupts(r), 0), "value");
    assert_json_eq(sst_object_get(ask, "review_configs"),
                   "[{\"action_name\": \"echo\", \"allowed_decisions\": [\"approve\", \"edit\", "
                   "\"reject\", \"respond\"]}, {\"action_name\": \"shout\", \"allowed_decisions\": "
                   "[\"approve\", \"reject\"]}]");
    const sst_value *reqs = sst_object_get(ask, "action_requests");
    assert_json_eq(sst_object_get(sst_array_get(reqs, 0), "args"), "{\"text\": \"a\"}");
    assert_string_equal(sst_string_cstr(sst_object_get(sst_array_get(reqs, 1), "description")),
                        "Shouting needs a yes");
    sst_graph_result_free(r);
    /* Edit the first, reject the second: echo runs with "A", shout does not run. */
    sst_value *answer = tu_json(
        "{\"decisions\": [{\"type\": \"edit\", \"edited_action\": {\"name\": \"echo\", \"args\": "
        "{\"text\": \"A\"}}}, {\"type\": \"reject\", \"message\": \"no shouting\"}]}");
    r = invoke(agent, th, NULL, answer);
    sst_value_unref(answer);
    assert_int_equal(sst_graph_result_status(r), SST_RUN_COMPLETED);
    /* user, the reply (edited in place), the rejection, echo's result, the answer */
    assert_int_equal(n_messages(r), 5);
    const sst_value *msgs = sst_object_get(sst_graph_result_state(r), "messages");
    const sst_value *calls = sst_object_get(sst_array_get(msgs, 1), "tool_calls");
    assert_string_equal(sst_string_cstr(sst_object_get(
                            sst_object_get(sst_array_get(calls, 0), "function"), "arguments")),
                        "{\"text\":\"A\"}");
    assert_string_equal(content_at(r, 2), "error: no shouting");
    assert_string_equal(content_at(r, 3), "A");
    assert_string_equal(content_at(r, 4), "first done");
    sst_graph_result_free(r);
    /* Next turn: "respond" answers in the tool's place. */
    r = invoke(agent, th, "{\"messages\": [{\"role\": \"user\", \"content\": \"again\"}]}", NULL);
    assert_int_equal(sst_graph_result_status(r), SST_RUN_INTERRUPTED);
    sst_graph_result_free(r);
    answer = tu_json("{\"decisions\": [{\"type\": \"respond\", \"message\": \"it is C\"}]}");
    r = invoke(agent, th, NULL, answer);
    sst_value_unref(answer);
    assert_int_equal(sst_graph_result_status(r), SST_RUN_COMPLETED);
    assert_string_equal(content_at(r, n_messages(r) - 2), "it is C");
    assert_string_equal(content_at(r, n_messages(r) - 1), "second done");
    sst_graph_result_free(r);
    /* A decision the config does not allow fails the run, naming the tool (the answer was
     * given: as LangGraph's, a resumed interrupt keeps its value when its node fails). */
    sst_model *again = scripted(TOOL_REPLY("c9", "shout", "{\\\"text\\\":\\\"d\\\"}"));
    sst_agent *agent2 = sst_agent_new(again, tools, &o, &err);
    assert_non_null(agent2);
    sst_graph_thread *th2 = sst_graph_thread_open(sst_agent_graph(agent2), cp, "h2", &err);
    r = invoke(agent2, th2, "{\"messages\": [{\"role\": \"user\", \"content\": \"go\"}]}", NULL);
    assert_int_equal(sst_graph_result_status(r), SST_RUN_INTERRUPTED);
    sst_graph_result_free(r);
    sst_value *bad = tu_json("{\"decisions\": [{\"type\": \"edit\", \"edited_action\": "
                             "{\"name\": \"shout\", \"args\": {}}}]}");
    r = invoke(agent2, th2, NULL, bad);
    assert_int_equal(sst_graph_result_status(r), SST_RUN_FAILED);
    assert_non_null(strstr(sst_graph_result_error(r)->msg, "'shout'"));
    sst_graph_result_free(r);
    sst_value_unref(bad);
    sst_graph_thread_free(th2);
    sst_agent_free(agent2);
    sst_model_free(again);
    sst_graph_thread_free(th);
    sst_checkpointer_free(cp);
    sst_agent_free(agent);
    sst_toolset_free(tools);
    sst_model_free(model);
    sst_middleware_free(hitl);
    /* A bad config names the tool. */
    cfg = tu_json("{\"echo\": {\"allowed_decisions\": [\"maybe\"]}}");
    assert_null(sst_middleware_human_in_the_loop(cfg, &err));
    assert_non_null(strstr(err.msg, "tool 'echo'"));
    sst_value_unref(cfg);
}

/* ---- limits ---- */

static void test_model_call_limit(void **state) {
    (void)state;
    sst_error err = {0};
    sst_middleware *lim = sst_middleware_model_call_limit(3, 2, SST_LIMIT_END, &err);
    assert_non_null(lim);
    /* The model keeps calling tools. */
    sst_model *model = scripted(TOOL_REPLY("c1", "echo", "{}") TOOL_REPLY("c2", "echo", "{}")
                                    TOOL_REPLY("c3", "echo", "{}") TOOL_REPLY("c4", "echo", "{}"));
    sst_toolset *tools = echo_tools();
    sst_middleware *mw[1] = {lim};
    sst_agent_opts o;
    sst_agent_opts_init(&o);
    o.middleware = mw;
    o.n_middleware = 1;
    sst_agent *agent = sst_agent_new(model, tools, &o, &err);
    assert_non_null(agent);
    sst_checkpointer *cp = sst_memory_saver_new(&err);
    sst_graph_thread *th = sst_graph_thread_open(sst_agent_graph(agent), cp, "l", &err);
    sst_graph_result *r =
        invoke(agent, th, "{\"messages\": [{\"role\": \"user\", \"content\": \"go\"}]}", NULL);
    assert_int_equal(sst_graph_result_status(r), SST_RUN_COMPLETED);
    assert_string_equal(content_at(r, n_messages(r) - 1),
                        "Model call limits exceeded: run limit (2/2)");
    sst_graph_result_free(r);
    /* The next run may call once more before the thread's limit (3). */
    r = invoke(agent, th, "{\"messages\": [{\"role\": \"user\", \"content\": \"more\"}]}", NULL);
    assert_string_equal(content_at(r, n_messages(r) - 1),
                        "Model call limits exceeded: thread limit (3/3)");
    sst_value *st = sst_graph_get_state(th, NULL, &err);
    assert_json_eq(sst_object_get(sst_object_get(st, "values"), "thread_model_call_count"), "3");
    assert_null(sst_object_get(sst_object_get(st, "values"), "run_model_call_count"));
    sst_value_unref(st);
    sst_graph_result_free(r);
    sst_graph_thread_free(th);
    sst_checkpointer_free(cp);
    sst_agent_free(agent);
    sst_middleware_free(lim);
    /* exit "error": the run fails with SST_ERANGE. */
    lim = sst_middleware_model_call_limit(-1, 1, SST_LIMIT_ERROR, &err);
    mw[0] = lim;
    agent = sst_agent_new(model, tools, &o, &err);
    r = invoke(agent, NULL, "{\"messages\": [{\"role\": \"user\", \"content\": \"go\"}]}", NULL);
    assert_int_equal(sst_graph_result_status(r), SST_RUN_FAILED);
    assert_int_equal(sst_graph_result_error(r)->code, SST_ERANGE);
    assert_non_null(strstr(sst_graph_result_error(r)->msg, "run limit (1/1)"));
    sst_graph_result_free(r);
    sst_agent_free(agent);
    sst_middleware_free(lim);
    sst_toolset_free(tools);
    sst_model_free(model);
}

static void test_tool_call_limit(void **state) {
    (void)state;
    sst_error err = {0};
    sst_middleware *lim = sst_middleware_tool_call_limit("echo", -1, 1, SST_LIMIT_CONTINUE, &err);
    assert_non_null(lim);
    sst_model *model = scripted(
        "{\"content\":null,\"tool_calls\":[" CALL("c1", "echo", "{\\\"text\\\":\\\"1\\\"}") "," CALL(
            "c2", "echo",
            "{\\\"text\\\":\\\"2\\\"}") "," CALL("c3", "shout",
                                                 "{\\\"text\\\":\\\"3\\\"}") "]}\n"
                                                                             "{\"content\":\"ok\"}"
                                                                             "\n");
    sst_toolset *tools = echo_tools();
    sst_middleware *mw[1] = {lim};
    sst_agent_opts o;
    sst_agent_opts_init(&o);
    o.middleware = mw;
    o.n_middleware = 1;
    sst_agent *agent = sst_agent_new(model, tools, &o, &err);
    assert_non_null(agent);
    sst_graph_result *r =
        invoke(agent, NULL, "{\"messages\": [{\"role\": \"user\", \"content\": \"go\"}]}", NULL);
    assert_int_equal(sst_graph_result_status(r), SST_RUN_COMPLETED);
    /* user, reply, c2 blocked, then c1 and c3 ran, the answer */
    assert_int_equal(n_messages(r), 6);
    assert_non_null(strstr(content_at(r, 2), "tool call limit exceeded"));
    assert_string_equal(content_at(r, 3), "1");
    assert_string_equal(content_at(r, 4), "3");
    sst_graph_result_free(r);
    sst_agent_free(agent);
    sst_middleware_free(lim);
    sst_toolset_free(tools);
    sst_model_free(model);
}

/* ---- summarization ---- */

static void test_summarization(void **state) {
    (void)state;
    sst_error err = {0};
    sst_model *summarizer = scripted("{\"content\":\"they talked about cats\"}\n");
    sst_middleware *sum = sst_middleware_summarization(summarizer, 20, 2, &err);
    assert_non_null(sum);
    sst_model *model = scripted("{\"content\":\"answer\"}\n");
    sst_middleware *mw[1] = {sum};
    sst_agent_opts o;
    sst_agent_opts_init(&o);
    o.middleware = mw;
    o.n_middleware = 1;
    sst_agent *agent = sst_agent_new(model, NULL, &o, &err);
    assert_non_null(agent);
    sst_graph_result *r = invoke(
        agent, NULL,
        "{\"messages\": [{\"role\": \"user\", \"content\": \"cats are the best animals\"}, "
        "{\"role\": \"assistant\", \"content\": \"indeed they are very fine animals\"}, "
        "{\"role\": \"user\", \"content\": \"tell me more about them\"}, {\"role\": "
        "\"assistant\", \"content\": \"they purr\"}, {\"role\": \"user\", \"content\": \"and "
        "dogs?\"}]}",
        NULL);
    assert_int_equal(sst_graph_result_status(r), SST_RUN_COMPLETED);
    /* The summary, the last two kept, the answer. */
    assert_int_equal(n_messages(r), 4);
    assert_string_equal(content_at(r, 0),
                        "Here is a summary of the conversation to date:\n\nthey talked about cats");
    assert_string_equal(content_at(r, 1), "they purr");
    assert_string_equal(content_at(r, 2), "and dogs?");
    assert_string_equal(content_at(r, 3), "answer");
    sst_graph_result_free(r);
    sst_agent_free(agent);
    sst_middleware_free(sum);
    sst_model_free(model);
    sst_model_free(summarizer);
}

/* ---- fallback ---- */

static void test_fallback(void **state) {
    (void)state;
    sst_error err = {0};
    sst_model *spent = scripted("{\"content\":\"only once\"}\n");
    sst_model *backup = scripted("{\"content\":\"from the backup\"}\n");
    sst_model *list[1] = {backup};
    sst_middleware *fb = sst_middleware_model_fallback(list, 1, 1, &err);
    assert_non_null(fb);
    sst_middleware *mw[1] = {fb};
    sst_agent_opts o;
    sst_agent_opts_init(&o);
    o.middleware = mw;
    o.n_middleware = 1;
    sst_agent *agent = sst_agent_new(spent, NULL, &o, &err);
    sst_graph_result *r =
        invoke(agent, NULL, "{\"messages\": [{\"role\": \"user\", \"content\": \"1\"}]}", NULL);
    assert_string_equal(content_at(r, 1), "only once");
    sst_graph_result_free(r);
    /* The first model's script is spent (SST_ERANGE, not transient): the backup answers. */
    r = invoke(agent, NULL, "{\"messages\": [{\"role\": \"user\", \"content\": \"2\"}]}", NULL);
    assert_int_equal(sst_graph_result_status(r), SST_RUN_COMPLETED);
    assert_string_equal(content_at(r, 1), "from the backup");
    sst_graph_result_free(r);
    /* Both spent: the run fails, naming the last error. */
    r = invoke(agent, NULL, "{\"messages\": [{\"role\": \"user\", \"content\": \"3\"}]}", NULL);
    assert_int_equal(sst_graph_result_status(r), SST_RUN_FAILED);
    assert_non_null(strstr(sst_graph_result_error(r)->msg, "all 2 models failed"));
    sst_graph_result_free(r);
    sst_agent_free(agent);
    sst_middleware_free(fb);
    sst_model_free(spent);
    sst_model_free(backup);
}

/* ---- many middleware, each with a field of its own ---- */

static const char *const k_fields[20] = {"f0",  "f1",  "f2",  "f3",  "f4",  "f5",  "f6",
                                         "f7",  "f8",  "f9",  "f10", "f11", "f12", "f13",
                                         "f14", "f15", "f16", "f17", "f18", "f19"};

static sst_code own_field(sst_graph *g, void *ud, const char **untracked, size_t *n,
                          sst_error *err) {
    const char *name = ud;
    untracked[0] = name; /* per run: not in checkpoints */
    *n = 1;
    return sst_graph_add_field(g, name, sst_reducer_replace(), sst_int_new(0, err), err);
}

static sst_code mark_field(sst_node_ctx *ctx, void *ud) {
    return sst_node_update(ctx, (const char *)ud, sst_int_new(1, NULL), NULL);
}

static void test_many_middleware(void **state) {
    (void)state;
    sst_error err = {0};
    sst_middleware *mw[20];
    for (int i = 0; i < 20; i++) {
        sst_middleware_hooks h = {
            .before_model = mark_field, .add_fields = own_field, .user_data = (void *)k_fields[i]};
        char name[16];
        snprintf(name, sizeof name, "m%d", i);
        mw[i] = sst_middleware_new(name, &h, &err);
        assert_non_null(mw[i]);
    }
    sst_model *model = scripted("{\"content\":\"ok\"}\n");
    sst_agent_opts o;
    sst_agent_opts_init(&o);
    o.middleware = mw;
    o.n_middleware = 20;
    sst_agent *agent = sst_agent_new(model, NULL, &o, &err);
    assert_non_null(agent);
    sst_checkpointer *cp = sst_memory_saver_new(&err);
    sst_graph_thread *th = sst_graph_thread_open(sst_agent_graph(agent), cp, "many", &err);
    sst_invoke_opts io;
    sst_invoke_opts_init(&io);
    io.recursion_limit = 100;
    sst_value *in = tu_json("{\"messages\": [{\"role\": \"user\", \"content\": \"go\"}]}");
    sst_graph_result *r = sst_graph_invoke(sst_agent_graph(agent), th, in, &io, &err);
    sst_value_unref(in);
    assert_non_null(r);
    assert_int_equal(sst_graph_result_status(r), SST_RUN_COMPLETED);
    sst_value *st = sst_graph_get_state(th, NULL, &err);
    for (int i = 0; i < 20; i++) {
        /* The run saw every field; none went into the checkpoint (all untracked). */
        assert_json_eq(sst_object_get(sst_graph_result_state(r), k_fields[i]), "1");
        assert_null(sst_object_get(sst_object_get(st, "values"), k_fields[i]));
    }
    sst_value_unref(st);
    sst_graph_result_free(r);
    sst_graph_thread_free(th);
    sst_checkpointer_free(cp);
    sst_agent_free(agent);
    sst_model_free(model);
    for (int i = 0; i < 20; i++) {
        sst_middleware_free(mw[i]);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_order_wraps_and_jump),
        cmocka_unit_test(test_bad_middleware),
        cmocka_unit_test(test_human_in_the_loop),
        cmocka_unit_test(test_model_call_limit),
        cmocka_unit_test(test_tool_call_limit),
        cmocka_unit_test(test_summarization),
        cmocka_unit_test(test_fallback),
        cmocka_unit_test(test_many_middleware),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
