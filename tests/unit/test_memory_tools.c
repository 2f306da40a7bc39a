/* SPDX-License-Identifier: MIT */
/*
 * The prebuilt agent's memory tools (sst_agent_opts.memory_namespace):
 * LangMem's manage_memory and search_memory over the run's store, driven by
 * the scripted model, which "decides" to call them. Covers: a memory written
 * in one thread and found from another thread of the same user; the
 * namespace filled from config.configurable (strings and integers); update
 * and delete; scores from an indexed store; the store given at creation or
 * at invoke; every misuse a tool message the model reads ("error: ..."),
 * never a failed run; option checks; allocation failures.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "superstep/agent.h"
#include "superstep/checkpoint.h"
#include "superstep/json.h"
#include "test_util.h"

static const char *const NS[] = {"memories", "{user_id}"};

/* One scripted reply: a call of @p tool with @p args (JSON text), or the answer @p tool NULL. */
static void add_reply(char *buf, size_t n, const char *tool, const char *args, const char *text) {
    sst_error err = {0};
    sst_value *r = sst_object_set_take(sst_object_empty(), "content",
                                       sst_string_new(text != NULL ? text : "", &err), &err);
    if (tool != NULL) {
        sst_value *fn = tu_json("{}");
        fn = sst_object_set_take(fn, "name", sst_string_new(tool, &err), &err);
        fn = sst_object_set_take(fn, "arguments", sst_string_new(args, &err), &err);
        sst_value *call = tu_json("{\"id\":\"call_1\",\"type\":\"function\"}");
        call = sst_object_set_take(call, "function", fn, &err);
        r = sst_object_set_take(r, "tool_calls", sst_array_push_take(sst_array_empty(), call, &err),
                                &err);
    }
    char *line = sst_json_write(r, SST_JSON_COMPACT, NULL, &err);
    assert_non_null(line);
    size_t used = strlen(buf);
    assert_true(used + strlen(line) + 2 < n);
    snprintf(buf + used, n - used, "%s\n", line);
    sst_free(line);
    sst_value_unref(r);
}

/* A scripted model from the replies in @p script. */
static sst_model *fake_model(const char *script) {
    char path[64];
    tu_temp_file(script, path, sizeof path);
    sst_error err = {0};
    sst_model *m = sst_model_fake(path, &err);
    remove(path);
    assert_non_null(m);
    return m;
}

static sst_agent *memory_agent(sst_model *m, const sst_toolset *tools, sst_store *store) {
    sst_agent_opts o;
    sst_agent_opts_init(&o);
    o.memory_namespace = NS;
    o.n_memory_namespace = 2;
    o.store = store;
    sst_error err = {0};
    sst_agent *a = sst_agent_new(m, tools, &o, &err);
    if (a == NULL) {
        fail_msg("sst_agent_new: %s", err.msg);
    }
    return a;
}

/*
 * One turn of @p user (a JSON value for config.configurable.user_id, or NULL
 * for no config) with @p store given at invoke (or NULL): the messages (new).
 */
static sst_value *turn_on(sst_agent *a, sst_graph_thread *t, const char *user, const char *prompt,
                          sst_store *store) {
    char cfg[128];
    snprintf(cfg, sizeof cfg, "{\"configurable\":{\"user_id\":%s}}", user != NULL ? user : "0");
    sst_value *config = user != NULL ? tu_json(cfg) : NULL;
    sst_error err = {0};
    sst_value *in = sst_object_set_take(
        sst_object_empty(), "messages",
        sst_array_push_take(sst_array_empty(),
                            sst_object_set_take(tu_json("{\"role\":\"user\"}"), "content",
                                                sst_string_new(prompt, &err), &err),
                            &err),
        &err);
    sst_invoke_opts io;
    sst_invoke_opts_init(&io);
    io.config = config;
    io.store = store;
    io.recursion_limit = sst_agent_recursion_limit(a);
    sst_graph_result *r = sst_graph_invoke(sst_agent_graph(a), t, in, &io, &err);
    sst_value_unref(in);
    sst_value_unref(config);
    assert_non_null(r);
    if (sst_graph_result_status(r) != SST_RUN_COMPLETED) {
        fail_msg("run: %s", sst_graph_result_error(r)->msg);
    }
    sst_value *msgs = sst_value_ref(sst_object_get(sst_graph_result_state(r), "messages"));
    sst_graph_result_free(r);
    return msgs;
}

static sst_value *turn(sst_agent *a, const char *user, const char *prompt, sst_store *store) {
    return turn_on(a, NULL, user, prompt, store);
}

/* The content of the tool message in @p msgs (the first one). */
static const char *tool_result(const sst_value *msgs) {
    for (size_t i = 0; i < sst_array_len(msgs); i++) {
        const sst_value *m = sst_array_get(msgs, i);
        if (strcmp(sst_string_cstr(sst_object_get(m, "role")), "tool") == 0) {
            return sst_string_cstr(sst_object_get(m, "content"));
        }
    }
    fail_msg("no tool message");
    return NULL;
}

static const char *last_content(const sst_value *msgs) {
    return sst_string_cstr(sst_object_get(sst_array_get(msgs, sst_array_len(msgs) - 1), "content"));
}

/* A tool result that is JSON, parsed (new). */
static sst_value *parsed(const char *text) {
    sst_error err = {0};
    sst_value *v = sst_json_parse(text, &err);
    if (v == NULL) {
        fail_msg("tool result is not JSON: %s", text);
    }
    return v;
}

/* Thread 1 stores a fact; thread 2 (another thread id, the same user) finds it. */
static void test_remember_across_threads(void **state) {
    (void)state;
    char script[4096] = "";
    add_reply(script, sizeof script, "manage_memory",
              "{\"content\":\"The user's favourite colour is teal.\",\"action\":\"create\"}", "");
    add_reply(script, sizeof script, NULL, NULL, "Noted: teal.");
    add_reply(script, sizeof script, "search_memory", "{\"query\":\"favourite colour\"}", "");
    add_reply(script, sizeof script, NULL, NULL, "Your favourite colour is teal.");
    sst_model *m = fake_model(script);
    sst_error err = {0};
    sst_store *store = sst_memory_store_new(NULL, &err);
    assert_non_null(store);
    sst_agent *a = memory_agent(m, NULL, store);
    sst_checkpointer *saver = sst_memory_saver_new(&err);
    sst_graph_thread *t1 = sst_graph_thread_open(sst_agent_graph(a), saver, "t1", &err);
    sst_graph_thread *t2 = sst_graph_thread_open(sst_agent_graph(a), saver, "t2", &err);
    assert_non_null(t1);
    assert_non_null(t2);

    sst_value *msgs = turn_on(a, t1, "\"u1\"", "My favourite colour is teal.", NULL);
    sst_value *created = parsed(tool_result(msgs));
    assert_string_equal(sst_string_cstr(sst_object_get(created, "status")), "created");
    assert_true(tu_is_uuid4(sst_object_get(created, "id")));
    const char *ns[] = {"memories", "u1"};
    const char *id = sst_string_cstr(sst_object_get(created, "id"));
    sst_value *item = sst_store_get(store, ns, 2, id, 0, &err);
    assert_non_null(item);
    assert_json_eq(sst_object_get(item, "value"),
                   "{\"content\":\"The user's favourite colour is teal.\"}");
    sst_value_unref(item);
    sst_value_unref(msgs);

    msgs = turn_on(a, t2, "\"u1\"", "What is my favourite colour?", NULL);
    assert_int_equal(sst_array_len(msgs), 4); /* thread 2 knows nothing of thread 1's talk */
    sst_value *found = parsed(tool_result(msgs));
    assert_int_equal(sst_array_len(found), 1);
    const sst_value *hit = sst_array_get(found, 0);
    assert_string_equal(sst_string_cstr(sst_object_get(hit, "key")), id);
    assert_json_eq(sst_object_get(hit, "namespace"), "[\"memories\",\"u1\"]");
    assert_json_eq(sst_object_get(hit, "value"),
                   "{\"content\":\"The user's favourite colour is teal.\"}");
    assert_true(sst_is_null(sst_object_get(hit, "score"))); /* no index: no score */
    assert_non_null(sst_object_get(hit, "created_at"));
    assert_string_equal(last_content(msgs), "Your favourite colour is teal.");
    sst_value_unref(found);
    sst_value_unref(created);
    sst_value_unref(msgs);
    sst_graph_thread_free(t1);
    sst_graph_thread_free(t2);
    sst_agent_free(a);
    sst_checkpointer_free(saver);
    sst_store_free(store);
    sst_model_free(m);
}

/* Another user sees nothing; an integer user id is a label too; the store may come at invoke. */
static void test_namespace_per_user(void **state) {
    (void)state;
    char script[4096] = "";
    add_reply(script, sizeof script, "manage_memory", "{\"content\":\"likes tea\"}", "");
    add_reply(script, sizeof script, NULL, NULL, "ok");
    add_reply(script, sizeof script, "search_memory", "{\"query\":\"tea\"}", "");
    add_reply(script, sizeof script, NULL, NULL, "nothing");
    sst_model *m = fake_model(script);
    sst_error err = {0};
    sst_store *store = sst_memory_store_new(NULL, &err);
    sst_agent *a = memory_agent(m, NULL, NULL);
    sst_value *msgs = turn(a, "42", "I like tea", store);
    sst_value_unref(msgs);
    const char *ns[] = {"memories", "42"};
    sst_value *items =
        sst_store_search(store, &(sst_store_search_opts){.prefix = ns, .prefix_len = 2}, &err);
    assert_int_equal(sst_array_len(items), 1);
    sst_value_unref(items);
    msgs = turn(a, "\"someone-else\"", "what do I like?", store);
    assert_string_equal(tool_result(msgs), "[]");
    sst_value_unref(msgs);
    sst_agent_free(a);
    sst_store_free(store);
    sst_model_free(m);
}

/* update and delete an existing memory by id; both keep to the user's namespace. */
static void test_update_and_delete(void **state) {
    (void)state;
    char script[4096] = "";
    add_reply(script, sizeof script, "manage_memory",
              "{\"content\":\"favourite colour: green\",\"action\":\"update\",\"id\":\"m-1\"}", "");
    add_reply(script, sizeof script, NULL, NULL, "updated");
    add_reply(script, sizeof script, "manage_memory", "{\"action\":\"delete\",\"id\":\"m-1\"}", "");
    add_reply(script, sizeof script, NULL, NULL, "deleted");
    sst_model *m = fake_model(script);
    sst_error err = {0};
    sst_store *store = sst_memory_store_new(NULL, &err);
    const char *ns[] = {"memories", "u1"};
    sst_value *v = tu_json("{\"content\":\"favourite colour: teal\"}");
    assert_sst_ok(sst_store_put(store, ns, 2, "m-1", v, NULL, &err), &err);
    sst_value_unref(v);
    sst_agent *a = memory_agent(m, NULL, store);

    sst_value *msgs = turn(a, "\"u1\"", "Actually, green.", NULL);
    assert_string_equal(tool_result(msgs), "{\"status\":\"updated\",\"id\":\"m-1\"}");
    sst_value_unref(msgs);
    sst_value *item = sst_store_get(store, ns, 2, "m-1", 0, &err);
    assert_json_eq(sst_object_get(item, "value"), "{\"content\":\"favourite colour: green\"}");
    sst_value_unref(item);

    msgs = turn(a, "\"u1\"", "Forget it.", NULL);
    assert_string_equal(tool_result(msgs), "{\"status\":\"deleted\",\"id\":\"m-1\"}");
    sst_value_unref(msgs);
    item = sst_store_get(store, ns, 2, "m-1", 0, &err);
    assert_true(sst_is_null(item));
    sst_value_unref(item);
    sst_agent_free(a);
    sst_store_free(store);
    sst_model_free(m);
}

/* Letter counts: texts sharing words score high (a deterministic stand-in for a model). */
static sst_code letters(void *ud, const char *const *texts, size_t n, size_t dims, float *out,
                        sst_error *err) {
    (void)ud;
    (void)err;
    for (size_t i = 0; i < n; i++) {
        memset(out + i * dims, 0, dims * sizeof *out);
        for (const char *p = texts[i]; *p != '\0'; p++) {
            if (isalpha((unsigned char)*p)) {
                out[i * dims + (size_t)(tolower((unsigned char)*p) - 'a') % dims] += 1.0f;
            }
        }
    }
    return SST_OK;
}

/* With an indexed store, search_memory ranks by meaning and gives scores; limit and filter. */
static void test_search_scores(void **state) {
    (void)state;
    char script[4096] = "";
    add_reply(script, sizeof script, "search_memory",
              "{\"query\":\"favourite colour teal\",\"limit\":2,\"offset\":0,\"filter\":null}", "");
    add_reply(script, sizeof script, NULL, NULL, "teal");
    add_reply(script, sizeof script, "search_memory",
              "{\"query\":\"x\",\"filter\":{\"content\":\"lives in Oslo\"}}", "");
    add_reply(script, sizeof script, NULL, NULL, "Oslo");
    sst_model *m = fake_model(script);
    sst_store_opts so;
    sst_store_opts_init(&so);
    so.index.dims = 26;
    so.index.embed = letters;
    static const char *const fields[] = {"content"};
    so.index.fields = fields;
    so.index.n_fields = 1;
    sst_error err = {0};
    sst_store *store = sst_memory_store_new(&so, &err);
    assert_non_null(store);
    const char *ns[] = {"memories", "u1"};
    const char *texts[] = {"lives in Oslo", "favourite colour teal", "has a dog"};
    for (size_t i = 0; i < 3; i++) {
        sst_value *v = sst_object_set_take(sst_object_empty(), "content",
                                           sst_string_new(texts[i], &err), &err);
        char key[8];
        snprintf(key, sizeof key, "k%zu", i);
        assert_sst_ok(sst_store_put(store, ns, 2, key, v, NULL, &err), &err);
        sst_value_unref(v);
    }
    sst_agent *a = memory_agent(m, NULL, store);
    sst_value *msgs = turn(a, "\"u1\"", "colour?", NULL);
    sst_value *found = parsed(tool_result(msgs));
    assert_int_equal(sst_array_len(found), 2);
    const sst_value *best = sst_array_get(found, 0);
    assert_string_equal(sst_string_cstr(sst_object_get(best, "key")), "k1");
    assert_true(sst_is_number(sst_object_get(best, "score")));
    assert_true(sst_number_value(sst_object_get(best, "score")) > 0.99);
    assert_true(sst_number_value(sst_object_get(sst_array_get(found, 1), "score")) <
                sst_number_value(sst_object_get(best, "score")));
    sst_value_unref(found);
    sst_value_unref(msgs);
    msgs = turn(a, "\"u1\"", "where?", NULL);
    found = parsed(tool_result(msgs));
    assert_int_equal(sst_array_len(found), 1);
    assert_string_equal(sst_string_cstr(sst_object_get(sst_array_get(found, 0), "key")), "k0");
    sst_value_unref(found);
    sst_value_unref(msgs);
    sst_agent_free(a);
    sst_store_free(store);
    sst_model_free(m);
}

/* Each misuse: the call (tool, arguments) and the text the model reads. */
static const struct {
    const char *tool, *args, *user, *expect;
} MISUSES[] = {
    {"manage_memory", "{\"content\":\"x\",\"action\":\"update\",\"id\":\"nope\"}", "\"u1\"",
     "error: tool 'manage_memory' failed: no memory with id 'nope' (search_memory lists them)"},
    {"manage_memory", "{\"action\":\"delete\",\"id\":\"nope\"}", "\"u1\"",
     "error: tool 'manage_memory' failed: no memory with id 'nope'"},
    {"manage_memory", "{\"action\":\"delete\"}", "\"u1\"",
     "error: tool 'manage_memory' failed: you must provide the memory id to delete a memory"},
    {"manage_memory", "{\"content\":\"x\",\"id\":\"m\"}", "\"u1\"",
     "error: tool 'manage_memory' failed: you cannot provide a memory id when creating"},
    {"manage_memory", "{\"action\":\"create\"}", "\"u1\"",
     "error: tool 'manage_memory' failed: content (the memory's text) is needed to create"},
    {"manage_memory", "{\"content\":\"x\",\"action\":\"forget\"}", "\"u1\"",
     "error: bad arguments for 'manage_memory': arguments/action: must be one of "
     "[\"create\",\"update\",\"delete\"], got \"forget\""},
    {"manage_memory", "{\"content\":\"x\",\"action\":\"update\",\"id\":7}", "\"u1\"",
     "error: bad arguments for 'manage_memory': arguments/id: expected string or null, got "
     "integer"},
    {"manage_memory", "{\"content\":\"x\"}", NULL,
     "error: tool 'manage_memory' failed: the memory namespace needs config.configurable.user_id "
     "(a string or an integer) in the run's config, which has none"},
    {"manage_memory", "{\"content\":\"x\"}", "[1]",
     "error: tool 'manage_memory' failed: the memory namespace needs config.configurable.user_id "
     "(a string or an integer) in the run's config, which is not one"},
    {"manage_memory", "{\"content\":\"x\"}", "\"a.b\"",
     "error: tool 'manage_memory' failed: store put: invalid namespace"},
    {"search_memory", "{\"query\":\"x\",\"limit\":0}", "\"u1\"",
     "error: tool 'search_memory' failed: limit must be an integer from 1 to 100"},
    {"search_memory", "{\"query\":\"x\",\"offset\":-1}", "\"u1\"",
     "error: tool 'search_memory' failed: offset must be an integer of 0 or more"},
    {"search_memory", "{\"query\":\"x\",\"filter\":\"teal\"}", "\"u1\"",
     "error: bad arguments for 'search_memory': arguments/filter: expected object or null, got "
     "string"},
    {"search_memory", "{\"query\":\"x\",\"filter\":{\"a\":{\"$near\":1}}}", "\"u1\"",
     "error: tool 'search_memory' failed: store search: filter on 'a': unknown operator"},
    {"search_memory", "{}", "\"u1\"",
     "error: bad arguments for 'search_memory': arguments: missing required property 'query'"},
};

/* Every misuse is a tool message the model reads; the run completes and nothing is stored. */
static void test_misuse_is_a_tool_error(void **state) {
    (void)state;
    sst_error err = {0};
    sst_store *store = sst_memory_store_new(NULL, &err);
    for (size_t i = 0; i < sizeof MISUSES / sizeof MISUSES[0]; i++) {
        char script[2048] = "";
        add_reply(script, sizeof script, MISUSES[i].tool, MISUSES[i].args, "");
        add_reply(script, sizeof script, NULL, NULL, "sorry");
        sst_model *m = fake_model(script);
        sst_agent *a = memory_agent(m, NULL, store);
        sst_value *msgs = turn(a, MISUSES[i].user, "hi", NULL);
        const char *got = tool_result(msgs);
        if (strncmp(got, MISUSES[i].expect, strlen(MISUSES[i].expect)) != 0) {
            fail_msg("misuse %zu (%s %s): got '%s'", i, MISUSES[i].tool, MISUSES[i].args, got);
        }
        assert_string_equal(last_content(msgs), "sorry");
        sst_value_unref(msgs);
        sst_agent_free(a);
        sst_model_free(m);
    }
    sst_value *all = sst_store_list_namespaces(store, NULL, &err);
    assert_json_eq(all, "[]");
    sst_value_unref(all);
    sst_store_free(store);
}

/* Without a store (none at creation, none at invoke) the tools answer with an error. */
static void test_no_store(void **state) {
    (void)state;
    char script[1024] = "";
    add_reply(script, sizeof script, "search_memory", "{\"query\":\"x\"}", "");
    add_reply(script, sizeof script, NULL, NULL, "no memory");
    sst_model *m = fake_model(script);
    sst_agent *a = memory_agent(m, NULL, NULL);
    sst_value *msgs = turn(a, "\"u1\"", "hi", NULL);
    assert_string_equal(tool_result(msgs), "error: tool 'search_memory' failed: no long-term "
                                           "store is configured for this agent, so there is no "
                                           "memory");
    sst_value_unref(msgs);
    sst_agent_free(a);
    sst_model_free(m);
}

static sst_value *echo(const sst_value *args, void *ud, sst_error *err) {
    (void)ud;
    (void)err;
    return sst_value_ref(args);
}

/* The names of the tools an agent offers (its "tools" state field), after one turn. */
static void offered(sst_agent *a, char *buf, size_t n) {
    sst_error err = {0};
    sst_value *in = tu_json("{\"messages\":[]}");
    sst_graph_result *r = sst_graph_invoke(sst_agent_graph(a), NULL, in, NULL, &err);
    sst_value_unref(in);
    assert_non_null(r);
    const sst_value *tools = sst_object_get(sst_graph_result_state(r), "tools");
    buf[0] = '\0';
    for (size_t i = 0; i < sst_array_len(tools); i++) {
        const sst_value *fn = sst_object_get(sst_array_get(tools, i), "function");
        size_t used = strlen(buf);
        snprintf(buf + used, n - used, "%s ", sst_string_cstr(sst_object_get(fn, "name")));
    }
    sst_graph_result_free(r);
}

/* The tools are offered beside the caller's; the caller's tool set is left as it was. */
static void test_tools_offered(void **state) {
    (void)state;
    sst_error err = {0};
    sst_toolset *tools = sst_toolset_new(&err);
    sst_value *p = tu_json("{\"type\":\"object\"}");
    assert_sst_ok(sst_toolset_add(tools, "echo", "Echoes.", p, echo, NULL, &err), &err);
    char script[256] = "";
    add_reply(script, sizeof script, NULL, NULL, "hi");
    add_reply(script, sizeof script, NULL, NULL, "hi");
    sst_model *m = fake_model(script);
    sst_agent *a = memory_agent(m, tools, NULL);
    char names[128];
    offered(a, names, sizeof names);
    assert_string_equal(names, "echo manage_memory search_memory ");
    sst_agent_free(a);
    sst_agent *plain = sst_agent_new(m, tools, NULL, &err);
    assert_non_null(plain);
    offered(plain, names, sizeof names);
    assert_string_equal(names, "echo ");
    sst_agent_free(plain);
    /* A tool of the same name is refused. */
    assert_sst_ok(sst_toolset_add(tools, "search_memory", "Mine.", p, echo, NULL, &err), &err);
    sst_agent_opts o;
    sst_agent_opts_init(&o);
    o.memory_namespace = NS;
    o.n_memory_namespace = 2;
    assert_null(sst_agent_new(m, tools, &o, &err));
    assert_int_equal(err.code, SST_EINVAL);
    assert_non_null(strstr(err.msg, "duplicate tool 'search_memory'"));
    sst_value_unref(p);
    sst_toolset_free(tools);
    sst_model_free(m);
}

/* Bad namespaces are refused when the agent is made, naming the label. */
static void test_bad_namespace(void **state) {
    (void)state;
    char script[256] = "";
    add_reply(script, sizeof script, NULL, NULL, "hi");
    sst_model *m = fake_model(script);
    const char *const empty_label[] = {"memories", ""};
    const char *const empty_key[] = {"memories", "{}"};
    const char *const dotted[] = {"a.b"};
    const char *const reserved[] = {"langgraph", "x"};
    const char *const null_label[] = {"memories", NULL};
    const struct {
        const char *const *ns;
        size_t n;
        const char *msg;
    } cases[] = {
        {NS, 0, "the memory namespace needs at least one label"},
        {empty_label, 2, "memory namespace label 2 is empty"},
        {empty_key, 2, "memory namespace label 2 is empty"},
        {dotted, 1, "memory namespace label 1 ('a.b') holds a '.'"},
        {reserved, 2, "cannot start with \"langgraph\""},
        {null_label, 2, "memory namespace label 2 is empty"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        sst_agent_opts o;
        sst_agent_opts_init(&o);
        o.memory_namespace = cases[i].ns;
        o.n_memory_namespace = cases[i].n;
        sst_error err = {0};
        assert_null(sst_agent_new(m, NULL, &o, &err));
        assert_int_equal(err.code, SST_EINVAL);
        if (strstr(err.msg, cases[i].msg) == NULL) {
            fail_msg("case %zu: '%s' lacks '%s'", i, err.msg, cases[i].msg);
        }
    }
    sst_model_free(m);
}

/* Every allocation of sst_agent_new with memory tools fails in turn: NULL, no leak. */
static void test_new_oom(void **state) {
    (void)state;
    sst_model *m = sst_model_openai("http://127.0.0.1:1/v1", "m", "NO_SUCH_VAR", NULL);
    assert_non_null(m);
    sst_error err = {0};
    sst_store *store = sst_memory_store_new(NULL, &err);
    sst_agent_opts o;
    sst_agent_opts_init(&o);
    o.memory_namespace = NS;
    o.n_memory_namespace = 2;
    o.store = store;
    long baseline = tu_chaos_live();
    for (long n = 1;; n++) {
        tu_chaos_fail_at(n);
        sst_agent *a = sst_agent_new(m, NULL, &o, &err);
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
    sst_store_free(store);
    sst_model_free(m);
}

int main(void) {
    tu_chaos_install();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_remember_across_threads),
        cmocka_unit_test(test_namespace_per_user),
        cmocka_unit_test(test_update_and_delete),
        cmocka_unit_test(test_search_scores),
        cmocka_unit_test(test_misuse_is_a_tool_error),
        cmocka_unit_test(test_no_store),
        cmocka_unit_test(test_tools_offered),
        cmocka_unit_test(test_bad_namespace),
        cmocka_unit_test(test_new_oom),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
