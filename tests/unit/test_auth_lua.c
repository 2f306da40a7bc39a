/* SPDX-License-Identifier: MIT */
/*
 * superstep serve's Lua auth files (src/server/auth_lua.c): loading errors name the file
 * and the problem; authenticate's user, its refusals (error{status, message}, nil, a
 * plain error: 500); the `on` handlers chosen most specific first, their verdicts (nil,
 * false, a filter, error{status}) and the value they change; the handler filters' $eq
 * and $contains (srv_auth_filter_matches).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>

#include "server/auth.h"
#include "superstep/json.h"
#include "test_util.h"

static char g_dir[256];

static char *write_lua(const char *name, const char *text) {
    static char path[512];
    snprintf(path, sizeof path, "%s/%s", g_dir, name);
    FILE *f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
    return path;
}

static void test_load_errors(void **state) {
    (void)state;
    const char *bad[][2] = {
        {"local x = ", "auth: "},
        {"return 5", "must return a table with a function 'authenticate'"},
        {"return {on = {}}", "must return a table with a function 'authenticate'"},
        {"return {authenticate = function() end, on = 3}", "must return a table"},
        {"error('boom')", "boom"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        sst_error err = {0};
        assert_null(srv_lua_auth_load(write_lua("bad.lua", bad[i][0]), &err));
        if (strstr(err.msg, bad[i][1]) == NULL || strstr(err.msg, "bad.lua") == NULL) {
            fail_msg("%s: '%s' does not name the file and say '%s'", bad[i][0], err.msg, bad[i][1]);
        }
    }
    sst_error err = {0};
    assert_null(srv_lua_auth_load("/nonexistent/auth.lua", &err));
    assert_non_null(strstr(err.msg, "/nonexistent/auth.lua"));
}

static const char k_auth[] =
    "local auth = {on = {threads = {}}}\n"
    "function auth.authenticate(req)\n"
    "  if req.path == '/plain' then error('oops') end\n"
    "  if req.path == '/nil' then return nil end\n"
    "  if req.path == '/string' then return 'carol' end\n"
    "  if req.method ~= 'GET' then error({status = 418, message = 'teapot'}) end\n"
    "  return {identity = 'alice', permissions = {'read'}, team = 'x'}\n"
    "end\n"
    "auth.on['*'] = function(ctx, value) return {owner = ctx.user.identity} end\n"
    "auth.on.threads.delete = function() return false end\n"
    "auth.on['threads.create'] = function(ctx, value)\n"
    "  value.metadata = value.metadata or {}\n"
    "  value.metadata.owner = ctx.user.identity .. ':' .. ctx.resource .. '.' .. ctx.action\n"
    "  return nil\n"
    "end\n"
    "auth.on.store = function(ctx, value) error({status = 403, message = 'no store'}) end\n"
    "auth.on.crons = function(ctx, value) error('crash') end\n"
    "auth.on.assistants = function() return 7 end\n"
    "return auth\n";

static sst_value *authenticate(srv_lua_auth *l, const char *method, const char *url,
                               unsigned *status, char *msg) {
    srv_request r = {.method = method, .url = url};
    return srv_lua_auth_authenticate(l, &r, status, msg, 300);
}

static void test_authenticate(void **state) {
    (void)state;
    sst_error err = {0};
    srv_lua_auth *l = srv_lua_auth_load(write_lua("auth.lua", k_auth), &err);
    assert_non_null(l);
    unsigned status = 0;
    char msg[300] = "";
    sst_value *u = authenticate(l, "GET", "/threads?x=1", &status, msg);
    assert_json_eq(u, "{\"identity\":\"alice\",\"permissions\":[\"read\"],\"team\":\"x\"}");
    sst_value_unref(u);
    u = authenticate(l, "GET", "/string", &status, msg);
    assert_json_eq(u, "{\"identity\":\"carol\",\"permissions\":[]}");
    sst_value_unref(u);
    assert_null(authenticate(l, "POST", "/threads", &status, msg));
    assert_int_equal(status, 418);
    assert_string_equal(msg, "teapot");
    assert_null(authenticate(l, "GET", "/nil", &status, msg));
    assert_int_equal(status, 401);
    assert_null(authenticate(l, "GET", "/plain", &status, msg));
    assert_int_equal(status, 500);
    assert_non_null(strstr(msg, "authenticate failed"));
    assert_non_null(strstr(msg, "oops"));
    srv_lua_auth_free(l);
}

static srv_lua_verdict authorize(srv_lua_auth *l, const char *res, const char *act,
                                 sst_value **value, sst_value **filter, unsigned *status,
                                 char *msg) {
    sst_value *user = tu_json("{\"identity\":\"alice\",\"permissions\":[]}");
    srv_lua_verdict v = srv_lua_auth_authorize(l, user, res, act, value, filter, status, msg, 300);
    sst_value_unref(user);
    return v;
}

static void test_handlers(void **state) {
    (void)state;
    sst_error err = {0};
    srv_lua_auth *l = srv_lua_auth_load(write_lua("auth.lua", k_auth), &err);
    assert_non_null(l);
    unsigned status = 0;
    char msg[300] = "";
    sst_value *value = tu_json("{\"thread_id\":\"t1\"}"), *filter = NULL;
    /* "*": a filter */
    assert_int_equal(authorize(l, "threads", "read", &value, &filter, &status, msg), SRV_LUA_ALLOW);
    assert_json_eq(filter, "{\"owner\":\"alice\"}");
    sst_value_unref(filter);
    /* on.threads.delete: false is 403 */
    assert_int_equal(authorize(l, "threads", "delete", &value, &filter, &status, msg),
                     SRV_LUA_REFUSE);
    assert_int_equal(status, 403);
    assert_null(filter);
    /* "threads.create": changes the value, no filter */
    sst_value_unref(value);
    value = tu_json("{\"metadata\":{\"a\":1}}");
    assert_int_equal(authorize(l, "threads", "create", &value, &filter, &status, msg),
                     SRV_LUA_ALLOW);
    assert_null(filter);
    assert_json_eq(value, "{\"metadata\":{\"a\":1,\"owner\":\"alice:threads.create\"}}");
    /* error{status, message}; a plain error: 500 naming the handler; a bad return: 500 */
    assert_int_equal(authorize(l, "store", "put", &value, &filter, &status, msg), SRV_LUA_REFUSE);
    assert_int_equal(status, 403);
    assert_string_equal(msg, "no store");
    assert_int_equal(authorize(l, "crons", "create", &value, &filter, &status, msg),
                     SRV_LUA_REFUSE);
    assert_int_equal(status, 500);
    assert_non_null(strstr(msg, "the handler of crons.create failed: "));
    assert_int_equal(authorize(l, "assistants", "read", &value, &filter, &status, msg),
                     SRV_LUA_REFUSE);
    assert_int_equal(status, 500);
    assert_non_null(strstr(msg, "returned a number"));
    sst_value_unref(value);
    srv_lua_auth_free(l);
}

static void test_filters(void **state) {
    (void)state;
    sst_value *m = tu_json("{\"owner\":\"a\",\"team\":\"t\",\"members\":[\"a\",\"b\"]}");
    const char *yes[] = {"{}",
                         "{\"owner\":\"a\"}",
                         "{\"owner\":{\"$eq\":\"a\"}}",
                         "{\"members\":{\"$contains\":\"b\"}}",
                         "{\"members\":{\"$contains\":[\"b\",\"a\"]}}",
                         "{\"members\":{\"$contains\":[]}}",
                         "{\"owner\":\"a\",\"members\":{\"$contains\":\"a\"}}"};
    /* As LangGraph's servers: $contains needs a list member (a string is not one), and a
     * list of values must all be in it. */
    const char *no[] = {"{\"owner\":\"b\"}",
                        "{\"owner\":{\"$eq\":\"b\"}}",
                        "{\"members\":{\"$contains\":\"c\"}}",
                        "{\"members\":{\"$contains\":[\"a\",\"c\"]}}",
                        "{\"team\":{\"$contains\":\"t\"}}",
                        "{\"missing\":{\"$contains\":\"a\"}}",
                        "{\"missing\":1}",
                        "{\"owner\":{\"$gt\":\"a\"}}",
                        "{\"owner\":\"a\",\"team\":\"u\"}"};
    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++) {
        sst_value *f = tu_json(yes[i]);
        if (!srv_auth_filter_matches(f, m)) {
            fail_msg("%s should match", yes[i]);
        }
        sst_value_unref(f);
    }
    for (size_t i = 0; i < sizeof no / sizeof no[0]; i++) {
        sst_value *f = tu_json(no[i]);
        if (srv_auth_filter_matches(f, m)) {
            fail_msg("%s should not match", no[i]);
        }
        sst_value_unref(f);
    }
    sst_value_unref(m);
}

int main(void) {
    assert_int_equal(tu_temp_dir("sst_auth_lua", g_dir, sizeof g_dir), 0);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_load_errors),
        cmocka_unit_test(test_authenticate),
        cmocka_unit_test(test_handlers),
        cmocka_unit_test(test_filters),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    tu_rm_rf(g_dir);
    return rc;
}
