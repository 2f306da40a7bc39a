/* SPDX-License-Identifier: MIT */
/*
 * The Lua layer: runs the Lua test scripts in tests/lua (each checks the
 * API and raises on the first failed check), plus script loading errors.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "superstep/lua.h"
#include "test_util.h"

static void run_script(const char *name) {
    char path[512];
    tu_data_path("", path, sizeof path);
    char full[700];
    snprintf(full, sizeof full, "%s/../lua/%s", path, name);
    sst_error err = {0};
    sst_lua_script *s = sst_lua_script_load(full, &err);
    if (s == NULL) {
        print_error("%s\n", err.msg);
        fail();
    }
    sst_lua_script_free(s);
}

static void test_api(void **state) {
    (void)state;
    run_script("test_api.lua");
}

/* Subgraphs through the Lua API (tests/lua/test_subgraphs.lua). */
static void test_subgraphs(void **state) {
    (void)state;
    run_script("test_subgraphs.lua");
}

/* Node policies through the Lua API (tests/lua/test_policies.lua). */
static void test_policies(void **state) {
    (void)state;
    run_script("test_policies.lua");
}

/* The long-term store through the Lua API (tests/lua/test_store.lua). */
static void test_store(void **state) {
    (void)state;
    run_script("test_store.lua");
}

/* The LangGraph-parity fixes, one block each (tests/lua/test_parity.lua). */
static void test_parity(void **state) {
    (void)state;
    run_script("test_parity.lua");
}

/* The functional API through Lua, tasks on worker states (tests/lua/test_functional.lua). */
static void test_functional(void **state) {
    (void)state;
    run_script("test_functional.lua");
}

/* The agent layer's parts through Lua (tests/lua/test_agent.lua). */
static void test_agent(void **state) {
    (void)state;
    run_script("test_agent.lua");
}

static void test_parity_build(void **state) {
    (void)state;
    run_script("test_parity_build.lua");
}

static void test_parity_updates(void **state) {
    (void)state;
    run_script("test_parity_updates.lua");
}

static void test_parity_app(void **state) {
    (void)state;
    run_script("test_parity_app.lua");
}

static void expect_load_error(const char *script, sst_code code, const char *needle) {
    char path[64];
    tu_temp_file(script, path, sizeof path);
    sst_error err = {0};
    sst_lua_script *s = sst_lua_script_load(path, &err);
    remove(path);
    assert_null(s);
    assert_int_equal(err.code, code);
    if (strstr(err.msg, needle) == NULL) {
        print_error("message '%s' lacks '%s'\n", err.msg, needle);
        fail();
    }
}

static void test_load_errors(void **state) {
    (void)state;
    sst_error err = {0};
    assert_null(sst_lua_script_load("/nonexistent/x.lua", &err));
    assert_int_equal(err.code, SST_EIO);
    assert_non_null(strstr(err.msg, "cannot open script '/nonexistent/x.lua'"));
    expect_load_error("local x = = 1\n", SST_EPARSE, ":1:");
    expect_load_error("error('nope')\n", SST_EINVAL, "nope");
    expect_load_error("return 42\n", SST_EINVAL, "returned number");
    expect_load_error("local g = superstep.StateGraph{}\n"
                      "g:add_node('a', function() end)\n"
                      "return g\n",
                      SST_EINVAL, "no entry point");
}

static void test_script_settings(void **state) {
    (void)state;
    char path[64];
    tu_temp_file("local g = superstep.StateGraph{}\n"
                 "g:add_node('a', function() return {x = 1} end)\n"
                 "g:add_edge(superstep.START, 'a')\n"
                 "return g:compile{recursion_limit = 7, durability = 'sync',"
                 " workers = 3, checkpointer = superstep.MemorySaver()}\n",
                 path, sizeof path);
    sst_error err = {0};
    sst_lua_script *s = sst_lua_script_load(path, &err);
    remove(path);
    assert_non_null(s);
    sst_invoke_opts o;
    sst_invoke_opts_init(&o);
    sst_lua_script_invoke_opts(s, &o);
    assert_int_equal(o.recursion_limit, 7);
    assert_int_equal(o.durability, SST_DURABILITY_SYNC);
    assert_int_equal(sst_lua_script_workers(s), 3);
    assert_non_null(sst_lua_script_checkpointer(s));
    sst_graph_result *r = sst_graph_invoke(sst_lua_script_graph(s), NULL, NULL, &o, &err);
    assert_non_null(r);
    assert_json_eq(sst_graph_result_state(r), "{\"x\":1}");
    sst_graph_result_free(r);
    sst_lua_script_free(s);
}

static void test_memory_limit(void **state) {
    (void)state;
    run_script("test_memory_limit.lua");
}

/* Loads @p script (a temporary file) with @p limit (0: the default). */
static sst_lua_script *load_with_limit(const char *script, size_t limit, sst_error *err) {
    char path[64];
    tu_temp_file(script, path, sizeof path);
    sst_lua_opts o;
    sst_lua_opts_init(&o);
    o.memory_limit = limit;
    sst_lua_script *s = sst_lua_script_load_opts(path, &o, err);
    remove(path);
    return s;
}

static void test_memory_limit_settings(void **state) {
    (void)state;
    const char *plain = "local g = superstep.StateGraph{}\n"
                        "g:add_node('a', function() return {x = superstep.memory_limit()} end)\n"
                        "g:add_edge(superstep.START, 'a')\n";
    char script[512];
    sst_error err = {0};
    /* The default: 1 GiB, read back without allocating it. */
    snprintf(script, sizeof script, "%sreturn g\n", plain);
    sst_lua_script *s = load_with_limit(script, 0, &err);
    assert_non_null(s);
    assert_int_equal(sst_lua_script_memory_limit(s), SST_LUA_MEMORY_LIMIT_DEFAULT);
    assert_int_equal(SST_LUA_MEMORY_LIMIT_DEFAULT, (size_t)1 << 30);
    sst_lua_script_free(s);
    /* compile{memory_limit} sets it; a limit given by the host wins over it. */
    snprintf(script, sizeof script, "%sreturn g:compile{memory_limit = 5000000}\n", plain);
    s = load_with_limit(script, 0, &err);
    assert_non_null(s);
    assert_int_equal(sst_lua_script_memory_limit(s), 5000000);
    sst_lua_script_free(s);
    s = load_with_limit(script, 100u << 20, &err);
    assert_non_null(s);
    assert_int_equal(sst_lua_script_memory_limit(s), 100u << 20);
    sst_invoke_opts io;
    sst_invoke_opts_init(&io);
    sst_graph_result *r = sst_graph_invoke(sst_lua_script_graph(s), NULL, NULL, &io, &err);
    assert_non_null(r);
    assert_json_eq(sst_graph_result_state(r), "{\"x\":104857600}");
    sst_graph_result_free(r);
    sst_lua_script_free(s);
    /* A script that passes the limit while loading fails with SST_ELIMIT. */
    s = load_with_limit("local t = {}\nfor i = 1, 3e7 do t[i] = i end\n", 8u << 20, &err);
    assert_null(s);
    assert_int_equal(err.code, SST_ELIMIT);
    assert_non_null(strstr(err.msg, "memory limit of 8388608 bytes exceeded"));
    /* So does a tools script. */
    char path[64];
    tu_temp_file("local t = {}\nfor i = 1, 3e7 do t[i] = i end\nreturn {}\n", path, sizeof path);
    sst_lua_opts o;
    sst_lua_opts_init(&o);
    o.memory_limit = 8u << 20;
    assert_null(sst_lua_tools_load_opts(path, &o, &err));
    remove(path);
    assert_int_equal(err.code, SST_ELIMIT);
    assert_non_null(strstr(err.msg, "memory limit of 8388608 bytes exceeded"));
}

/* A tool whose schema cannot cross into a value fails the load, with or without an err. */
static void test_tools_load_error_without_err(void **state) {
    (void)state;
    char path[64];
    tu_temp_file("return { { name = 'f', parameters = { type = 'object', bad = function() end },\n"
                 "  fn = function() return 1 end } }\n",
                 path, sizeof path);
    assert_null(sst_lua_tools_load(path, NULL)); /* its message is quoted: err must exist */
    sst_error err = {0};
    assert_null(sst_lua_tools_load(path, &err));
    remove(path);
    assert_int_equal(err.code, SST_ETYPE);
    assert_non_null(strstr(err.msg, "tools script '"));
    assert_non_null(strstr(err.msg, "cannot be stored"));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_api),
        cmocka_unit_test(test_parity),
        cmocka_unit_test(test_subgraphs),
        cmocka_unit_test(test_policies),
        cmocka_unit_test(test_store),
        cmocka_unit_test(test_parity_build),
        cmocka_unit_test(test_agent),
        cmocka_unit_test(test_functional),
        cmocka_unit_test(test_parity_updates),
        cmocka_unit_test(test_parity_app),
        cmocka_unit_test(test_load_errors),
        cmocka_unit_test(test_tools_load_error_without_err),
        cmocka_unit_test(test_script_settings),
        cmocka_unit_test(test_memory_limit),
        cmocka_unit_test(test_memory_limit_settings),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
