/* SPDX-License-Identifier: MIT */
/*
 * The ReAct agent graph with the scripted model and C tools: a turn with two
 * parallel tool calls (results in call order), a second turn on the same
 * durable thread, the iteration limit, and tool approval (rejected and
 * edited calls) resumed through a fresh handle on a SQLite thread.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent/react.h"
#include "superstep/checkpoint.h"
#include "superstep/json.h"
#include "test_util.h"

static sst_value *add(const sst_value *args, void *ud, sst_error *err) {
    (void)ud;
    return sst_int_new(
        sst_int_value(sst_object_get(args, "a")) + sst_int_value(sst_object_get(args, "b")), err);
}

static sst_value *upper(const sst_value *args, void *ud, sst_error *err) {
    (void)ud;
    char buf[64];
    snprintf(buf, sizeof buf, "%s", sst_string_cstr(sst_object_get(args, "s")));
    for (char *p = buf; *p; p++) {
        *p = (char)(*p >= 'a' && *p <= 'z' ? *p - 32 : *p);
    }
    return sst_string_new(buf, err);
}

static void tools(sst__tools *t) {
    sst_error err = {0};
    sst__tools_init(t);
    sst_value *p = tu_json("{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"integer\"},"
                           "\"b\":{\"type\":\"integer\"}},\"required\":[\"a\",\"b\"]}");
    assert_sst_ok(sst__tools_add(t, "add", "Adds.", p, add, NULL, &err), &err);
    sst_value_unref(p);
    p = tu_json("{\"type\":\"object\",\"properties\":{\"s\":{\"type\":\"string\"}},"
                "\"required\":[\"s\"]}");
    assert_sst_ok(sst__tools_add(t, "upper", "Upper-cases.", p, upper, NULL, &err), &err);
    sst_value_unref(p);
}

#define TWO_CALLS                                                                                  \
    "{\"content\":\"Working on it\",\"tool_calls\":["                                              \
    "{\"id\":\"c1\",\"type\":\"function\",\"function\":{\"name\":\"add\",\"arguments\":"           \
    "\"{\\\"a\\\":2,\\\"b\\\":3}\"}},"                                                             \
    "{\"id\":\"c2\",\"type\":\"function\",\"function\":{\"name\":\"upper\",\"arguments\":"         \
    "\"{\\\"s\\\":\\\"hi\\\"}\"}}]}\n"

/* The contents of the thread's messages, joined with '|'. */
static void contents(const sst_value *state, char *out, size_t n) {
    const sst_value *msgs = sst_object_get(state, "messages");
    out[0] = '\0';
    for (size_t i = 0; i < sst_array_len(msgs); i++) {
        const sst_value *c = sst_object_get(sst_array_get(msgs, i), "content");
        size_t used = strlen(out);
        snprintf(out + used, n - used, "%s%s", i ? "|" : "",
                 sst_is_string(c) ? sst_string_cstr(c) : "-");
    }
}

static sst_graph_result *say(sst__react *r, sst_graph_thread *th, const char *text) {
    char in[256];
    snprintf(in, sizeof in, "{\"messages\":[{\"role\":\"user\",\"content\":\"%s\"}]}", text);
    sst_value *input = tu_json(in);
    sst_error err = {0};
    sst_graph_result *res = sst_graph_invoke(r->app, th, input, NULL, &err);
    sst_value_unref(input);
    assert_non_null(res);
    return res;
}

static void test_two_turns_with_parallel_tools(void **state) {
    (void)state;
    char path[64];
    tu_temp_file(TWO_CALLS "{\"content\":\"5 and HI\"}\n{\"content\":\"Bye\"}\n", path,
                 sizeof path);
    sst__fake_model fake;
    sst_error err = {0};
    assert_sst_ok(sst__fake_model_load(&fake, path, &err), &err);
    remove(path);
    sst__tools t;
    tools(&t);
    sst__model model = {.fake = &fake};
    sst__react_opts o;
    sst__react_opts_init(&o);
    o.system_prompt = "You are terse.";
    sst__react r;
    assert_sst_ok(sst__react_build(&r, &model, &t, &o, &err), &err);
    sst_checkpointer *cp = sst_memory_saver_new(&err);
    sst_graph_thread *th = sst_graph_thread_open(r.app, cp, "chat", &err);
    sst_graph_result *res = say(&r, th, "add 2 and 3, shout hi");
    assert_int_equal(sst_graph_result_status(res), SST_RUN_COMPLETED);
    char text[512];
    contents(sst_graph_result_state(res), text, sizeof text);
    assert_string_equal(text, "add 2 and 3, shout hi|Working on it|5|HI|5 and HI");
    assert_int_equal(sst_int_value(sst_object_get(sst_graph_result_state(res), "iteration")), 2);
    const sst_value *msgs = sst_object_get(sst_graph_result_state(res), "messages");
    assert_string_equal(sst_string_cstr(sst_object_get(sst_array_get(msgs, 2), "tool_call_id")),
                        "c1");
    assert_string_equal(sst_string_cstr(sst_object_get(sst_array_get(msgs, 3), "tool_call_id")),
                        "c2");
    /* The agent fields: every produced message, the scratchpad, the last reply, the tools. */
    const sst_value *st = sst_graph_result_state(res);
    assert_int_equal(sst_array_len(sst_object_get(st, "full_messages")), 4);
    assert_json_eq(
        sst_object_get(st, "scratchpad"),
        "[{\"tool\":\"add\",\"arguments\":\"{\\\"a\\\":2,\\\"b\\\":3}\",\"result\":\"5\"},"
        "{\"tool\":\"upper\",\"arguments\":\"{\\\"s\\\":\\\"hi\\\"}\",\"result\":\"HI\"}]");
    assert_string_equal(
        sst_string_cstr(sst_object_get(sst_object_get(st, "last_response"), "content")),
        "5 and HI");
    assert_int_equal(sst_array_len(sst_object_get(st, "tools")), 2);
    assert_json_eq(sst_object_get(st, "context"), "{}");
    sst_graph_result_free(res);
    /* A second turn continues the conversation. */
    res = say(&r, th, "thanks");
    contents(sst_graph_result_state(res), text, sizeof text);
    assert_string_equal(text, "add 2 and 3, shout hi|Working on it|5|HI|5 and HI|thanks|Bye");
    sst_graph_result_free(res);
    sst_graph_thread_free(th);
    sst_checkpointer_free(cp);
    sst__react_free(&r);
    sst__tools_free(&t);
    sst__fake_model_free(&fake);
}

static void test_iteration_limit(void **state) {
    (void)state;
    char path[64];
    tu_temp_file(TWO_CALLS TWO_CALLS TWO_CALLS, path, sizeof path);
    sst__fake_model fake;
    sst_error err = {0};
    assert_sst_ok(sst__fake_model_load(&fake, path, &err), &err);
    remove(path);
    sst__tools t;
    tools(&t);
    sst__model model = {.fake = &fake};
    sst__react_opts o;
    sst__react_opts_init(&o);
    o.max_iterations = 2;
    sst__react r;
    assert_sst_ok(sst__react_build(&r, &model, &t, &o, &err), &err);
    sst_graph_result *res = say(&r, NULL, "loop");
    assert_int_equal(sst_graph_result_status(res), SST_RUN_COMPLETED);
    assert_string_equal(sst_string_cstr(sst_object_get(sst_graph_result_state(res), "stop_reason")),
                        "max_iterations");
    assert_int_equal(sst_int_value(sst_object_get(sst_graph_result_state(res), "iteration")), 2);
    sst_graph_result_free(res);
    sst__react_free(&r);
    sst__tools_free(&t);
    sst__fake_model_free(&fake);
}

static void test_approval(void **state) {
    (void)state;
    char path[64];
    tu_temp_file(TWO_CALLS "{\"content\":\"done\"}\n", path, sizeof path);
    sst__fake_model fake;
    sst_error err = {0};
    assert_sst_ok(sst__fake_model_load(&fake, path, &err), &err);
    remove(path);
    sst__tools t;
    tools(&t);
    sst__model model = {.fake = &fake};
    sst__react_opts o;
    sst__react_opts_init(&o);
    o.approve_tools = true;
    sst__react r;
    assert_sst_ok(sst__react_build(&r, &model, &t, &o, &err), &err);
    char db[64];
    snprintf(db, sizeof db, "/tmp/sst_react_%d.db", (int)getpid());
    remove(db);
    sst_checkpointer *cp = sst_sqlite_saver_open(db, NULL, &err);
    sst_graph_thread *th = sst_graph_thread_open(r.app, cp, "ok?", &err);
    sst_graph_result *res = say(&r, th, "go");
    assert_int_equal(sst_graph_result_status(res), SST_RUN_INTERRUPTED);
    const sst_value *ints = sst_graph_result_interrupts(res);
    assert_int_equal(sst_array_len(ints), 2);
    const char *id_add = sst_string_cstr(sst_object_get(sst_array_get(ints, 0), "id"));
    const char *id_upper = sst_string_cstr(sst_object_get(sst_array_get(ints, 1), "id"));
    char by_id[256];
    snprintf(by_id, sizeof by_id, "{\"%s\":{\"arguments\":{\"a\":40,\"b\":2}},\"%s\":\"reject\"}",
             id_add, id_upper);
    sst_graph_result_free(res);
    /* Resume from a fresh handle (as another process would): edit one call, reject the other. */
    sst_graph_thread_free(th);
    th = sst_graph_thread_open(r.app, cp, "ok?", &err);
    sst_value *resume = tu_json(by_id);
    sst_invoke_opts io;
    sst_invoke_opts_init(&io);
    io.resume_by_id = resume;
    res = sst_graph_invoke(r.app, th, NULL, &io, &err);
    sst_value_unref(resume);
    assert_non_null(res);
    assert_int_equal(sst_graph_result_status(res), SST_RUN_COMPLETED);
    char text[512];
    contents(sst_graph_result_state(res), text, sizeof text);
    assert_string_equal(text, "go|Working on it|42|error: the user rejected this tool call|done");
    sst_graph_result_free(res);
    sst_graph_thread_free(th);
    sst_checkpointer_free(cp);
    remove(db);
    sst__react_free(&r);
    sst__tools_free(&t);
    sst__fake_model_free(&fake);
}

/* A tool that marks that it started, then waits to be killed (it never returns). */
static sst_value *slow_add(const sst_value *args, void *ud, sst_error *err) {
    (void)args;
    (void)err;
    FILE *f = fopen((const char *)ud, "w");
    if (f != NULL) {
        fclose(f);
    }
    for (;;) {
        pause();
    }
    return NULL; /* not reached */
}

static void agent_child(const char *db, const char *replies, const char *marker, bool resume) {
    sst__fake_model fake;
    sst_error err = {0};
    if (sst__fake_model_load(&fake, replies, &err) != SST_OK) {
        _exit(10);
    }
    sst__tools t;
    sst__tools_init(&t);
    sst_value *p = sst_json_parse("{\"type\":\"object\"}", NULL);
    if (sst__tools_add(&t, "add", "Adds.", p, resume ? add : slow_add, (void *)marker, &err) !=
        SST_OK) {
        _exit(11);
    }
    sst_value_unref(p);
    sst__model model = {.fake = &fake};
    sst__react_opts o;
    sst__react_opts_init(&o);
    sst__react r;
    sst_checkpointer *cp = sst_sqlite_saver_open(db, NULL, &err);
    if (cp == NULL || sst__react_build(&r, &model, &t, &o, &err) != SST_OK) {
        _exit(12);
    }
    sst_graph_thread *th = sst_graph_thread_open(r.app, cp, "crash", &err);
    sst_value *input =
        resume ? NULL
               : sst_json_parse("{\"messages\":[{\"role\":\"user\",\"content\":\"sum\"}]}", NULL);
    sst_invoke_opts io;
    sst_invoke_opts_init(&io);
    io.durability = SST_DURABILITY_SYNC;
    io.wait = true;
    sst_graph_result *res = sst_graph_invoke(r.app, th, input, &io, &err);
    int ok = res != NULL && sst_graph_result_status(res) == SST_RUN_COMPLETED;
    sst_graph_result_free(res);
    sst_value_unref(input);
    sst_graph_thread_free(th);
    sst__react_free(&r);
    sst_checkpointer_free(cp);
    sst__tools_free(&t);
    sst__fake_model_free(&fake);
    _exit(ok ? 0 : 13);
}

/*
 * A kill -9 while a tool runs (after the model's reply committed): a new
 * process resumes and runs only the tool, not the model call again. The
 * resumed process's script holds only the reply after the tool result, so a
 * repeated model call would show in the conversation.
 */
static void test_resume_after_crash_between_model_and_tool(void **state) {
    (void)state;
    char db[64], marker[64];
    snprintf(db, sizeof db, "/tmp/sst_react_crash_%d.db", (int)getpid());
    snprintf(marker, sizeof marker, "/tmp/sst_react_marker_%d", (int)getpid());
    remove(db);
    remove(marker);
    char first[64], second[64];
    const char r1[] = "{\"content\":\"adding\",\"tool_calls\":[{\"id\":\"c1\",\"type\":"
                      "\"function\",\"function\":{\"name\":\"add\",\"arguments\":"
                      "\"{\\\"a\\\":20,\\\"b\\\":22}\"}}]}\n";
    tu_temp_file(r1, first, sizeof first);
    tu_temp_file("{\"content\":\"the sum is 42\"}\n", second, sizeof second);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        agent_child(db, first, marker, false);
    }
    /* The marker, not a clock, says when to kill; 10 minutes is only a safety net. */
    for (int i = 0; i < 60000 && access(marker, F_OK) != 0; i++) {
        usleep(10000);
    }
    assert_int_equal(access(marker, F_OK), 0); /* the tool started: the model's reply committed */
    kill(pid, SIGKILL);
    int status;
    waitpid(pid, &status, 0);
    assert_true(WIFSIGNALED(status));
    pid = fork();
    if (pid == 0) {
        agent_child(db, second, marker, true);
    }
    waitpid(pid, &status, 0);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    /* The conversation: the model was called once before the crash, once after. */
    sst__tools t;
    sst__tools_init(&t);
    sst__fake_model fake;
    sst_error err = {0};
    assert_sst_ok(sst__fake_model_load(&fake, second, &err), &err);
    sst__model model = {.fake = &fake};
    sst__react_opts o;
    sst__react_opts_init(&o);
    sst__react r;
    assert_sst_ok(sst__react_build(&r, &model, &t, &o, &err), &err);
    sst_checkpointer *cp = sst_sqlite_saver_open(db, NULL, &err);
    sst_graph_thread *th = sst_graph_thread_open(r.app, cp, "crash", &err);
    sst_value *st = sst_graph_get_state(th, NULL, &err);
    assert_non_null(st);
    char text[512];
    contents(sst_object_get(st, "values"), text, sizeof text);
    assert_string_equal(text, "sum|adding|42|the sum is 42");
    sst_value_unref(st);
    sst_graph_thread_free(th);
    sst_checkpointer_free(cp);
    sst__react_free(&r);
    sst__fake_model_free(&fake);
    sst__tools_free(&t);
    remove(first);
    remove(second);
    remove(marker);
    remove(db);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_two_turns_with_parallel_tools),
        cmocka_unit_test(test_iteration_limit),
        cmocka_unit_test(test_approval),
        cmocka_unit_test(test_resume_after_crash_between_model_and_tool),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
