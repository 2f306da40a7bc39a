/* SPDX-License-Identifier: MIT */
/*
 * The MCP client (src/agent/mcp_*.c, include/superstep/mcp.h) against the
 * official reference server @modelcontextprotocol/server-everything (pinned
 * in tests/mcp/package-lock.json), over stdio and over Streamable HTTP
 * (tests/mcp/http_server.mjs on 127.0.0.1), and against the fake servers of
 * tests/mcp for what the reference server cannot show: pagination,
 * list_changed, server requests, malformed output, a server that exits at
 * once or ignores SIGTERM. Node comes from $SST_NODE, the servers from
 * $SST_MCP_DIR (tests/agent/mcp.cmake).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent/mcp.h"
#include "superstep/json.h"
#include "superstep/mcp.h"
#include "test_util.h"

extern char **environ;

static const int k_stdio = 0, k_http = 1;

static char g_node[512];
static char g_dir[1024];
static char g_everything[1200]; /* the reference server's dist/index.js */

/* ---- helpers ------------------------------------------------------------------------------ */

#define assert_contains(hay, needle) contains_at((hay), (needle), __FILE__, __LINE__)
static void contains_at(const char *hay, const char *needle, const char *file, int line) {
    if (hay == NULL || strstr(hay, needle) == NULL) {
        fail_msg("%s:%d: '%s' does not contain '%s'", file, line, hay != NULL ? hay : "(null)",
                 needle);
    }
}

static bool cancel_after(void *ud) {
    return tu_now_s() >= *(const double *)ud;
}

typedef struct killer {
    pid_t pid;
    unsigned delay_ms;
    pthread_t thread;
} killer;

static void *kill_main(void *arg) {
    killer *k = arg;
    sst__sleep_ms(k->delay_ms);
    kill(k->pid, SIGKILL);
    return NULL;
}

static void kill_later(killer *k, pid_t pid, unsigned delay_ms) {
    k->pid = pid;
    k->delay_ms = delay_ms;
    assert_int_equal(pthread_create(&k->thread, NULL, kill_main, k), 0);
}

/* A test's MCP call that must succeed, as text. */
static char *call_text(sst_mcp_client *c, const char *tool, const char *args_json) {
    sst_error err = {0};
    sst_value *args = tu_json(args_json);
    sst_value *r = sst_mcp_call_tool(c, tool, args, &err);
    sst_value_unref(args);
    if (r == NULL) {
        fail_msg("tool '%s' failed: %s: %s", tool, sst_code_name(err.code), err.msg);
    }
    char *json = sst_is_string(r) ? NULL : sst_json_write(r, SST_JSON_COMPACT, NULL, NULL);
    char *text = strdup(json != NULL ? json : sst_string_cstr(r));
    sst_free(json);
    sst_value_unref(r);
    return text;
}

static void expect_text(sst_mcp_client *c, const char *tool, const char *args_json,
                        const char *want) {
    char *got = call_text(c, tool, args_json);
    assert_string_equal(got, want);
    free(got);
}

/* A call that must fail with @p code; its message in @p err. */
static void expect_fail(sst_mcp_client *c, const char *tool, const char *args_json,
                        const sst_mcp_call_opts *o, sst_code code, sst_error *err) {
    *err = (sst_error){0};
    sst_value *args = tu_json(args_json);
    sst_value *r = sst_mcp_call_tool_opts(c, tool, args, o, err);
    sst_value_unref(args);
    if (r != NULL) {
        char *t = sst_json_write(r, SST_JSON_COMPACT, NULL, NULL);
        fail_msg("tool '%s' succeeded with %s", tool, t);
    }
    if (err->code != code) {
        fail_msg("tool '%s': expected %s, got %s: %s", tool, sst_code_name(code),
                 sst_code_name(err->code), err->msg);
    }
}

/* ---- servers ------------------------------------------------------------------------------ */

typedef struct http_server {
    pid_t pid;
    int stdin_fd; /* the server exits when this ends */
    char dir[64];
    char url[96];
} http_server;

/* Starts tests/mcp/@p script and waits for its port (0, or -1 when it did not start). */
static int http_server_start(http_server *s, const char *script_name) {
    memset(s, 0, sizeof *s);
    s->pid = -1;
    s->stdin_fd = -1;
    if (tu_temp_dir("mcp", s->dir, sizeof s->dir) != 0) {
        return -1;
    }
    char script[1200], port_file[128], log_file[128], env_port[160];
    snprintf(script, sizeof script, "%s/%s", g_dir, script_name);
    snprintf(port_file, sizeof port_file, "%s/port", s->dir);
    snprintf(log_file, sizeof log_file, "%s/server.log", s->dir);
    snprintf(env_port, sizeof env_port, "SST_MCP_PORT_FILE=%s", port_file);
    size_t n = 0;
    while (environ[n] != NULL) {
        n++;
    }
    char **env = calloc(n + 2, sizeof *env);
    memcpy(env, environ, n * sizeof *env);
    env[n] = env_port;
    int in[2];
    if (pipe2(in, O_CLOEXEC) != 0) {
        free(env);
        return -1;
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, in[0], 0);
    posix_spawn_file_actions_addopen(&fa, 1, log_file, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    char *argv[] = {g_node, script, NULL};
    int rc = posix_spawn(&s->pid, g_node, &fa, NULL, argv, env);
    posix_spawn_file_actions_destroy(&fa);
    free(env);
    close(in[0]);
    s->stdin_fd = in[1];
    if (rc != 0) {
        fprintf(stderr, "cannot start %s %s: error %d\n", g_node, script, rc);
        s->pid = -1;
        return -1;
    }
    for (int i = 0; i < 600; i++) { /* 30 s */
        char *port = tu_read_file(port_file, NULL);
        if (port != NULL) {
            snprintf(s->url, sizeof s->url, "http://127.0.0.1:%s/mcp", port);
            free(port);
            return 0;
        }
        if (waitpid(s->pid, NULL, WNOHANG) == s->pid) {
            s->pid = -1;
            break;
        }
        sst__sleep_ms(50);
    }
    char *log = tu_read_file(log_file, NULL);
    fprintf(stderr, "the HTTP MCP server did not start (npm ci --prefix tests/mcp?): %s\n",
            log != NULL ? log : "");
    free(log);
    return -1;
}

static void http_server_stop(http_server *s) {
    if (s->stdin_fd >= 0) {
        close(s->stdin_fd);
        s->stdin_fd = -1;
    }
    if (s->pid > 0) {
        for (int i = 0; i < 100 && waitpid(s->pid, NULL, WNOHANG) == 0; i++) {
            sst__sleep_ms(20);
        }
        if (kill(s->pid, SIGKILL) == 0) {
            waitpid(s->pid, NULL, 0);
        }
        s->pid = -1;
    }
    char path[160];
    snprintf(path, sizeof path, "%s/port", s->dir);
    remove(path);
    snprintf(path, sizeof path, "%s/server.log", s->dir);
    remove(path);
    rmdir(s->dir);
}

static http_server g_http; /* shared by the HTTP tests that do not kill it */

static int setup(void **state) {
    (void)state;
    const char *node = getenv("SST_NODE");
    const char *dir = getenv("SST_MCP_DIR");
    snprintf(g_node, sizeof g_node, "%s", node != NULL ? node : "node");
    if (g_node[0] != '/') { /* posix_spawn (the HTTP server) wants a path */
        snprintf(g_node, sizeof g_node, "/usr/bin/%s", node != NULL ? node : "node");
    }
    if (dir == NULL) {
        fprintf(stderr, "SST_MCP_DIR is not set (tests/agent/mcp.cmake sets it)\n");
        return -1;
    }
    snprintf(g_dir, sizeof g_dir, "%s", dir);
    snprintf(g_everything, sizeof g_everything,
             "%s/node_modules/@modelcontextprotocol/server-everything/dist/index.js", dir);
    struct stat st;
    if (stat(g_everything, &st) != 0) {
        fprintf(stderr, "%s is missing: run npm ci --prefix tests/mcp\n", g_everything);
        return -1;
    }
    signal(SIGPIPE, SIG_DFL); /* the client must not need SIGPIPE ignored */
    return http_server_start(&g_http, "http_server.mjs");
}

static int teardown(void **state) {
    (void)state;
    http_server_stop(&g_http);
    return 0;
}

static sst_mcp_client *connect_everything(int transport, const sst_mcp_opts *o, sst_error *err) {
    if (transport == k_http) {
        return sst_mcp_connect_http(g_http.url, o, err);
    }
    const char *argv[] = {g_node, g_everything, "stdio", NULL};
    return sst_mcp_connect_stdio(argv, o, err);
}

static sst_mcp_client *must_connect(int transport, const sst_mcp_opts *o) {
    sst_error err = {0};
    sst_mcp_client *c = connect_everything(transport, o, &err);
    if (c == NULL) {
        fail_msg("connect (%s): %s: %s", transport == k_http ? "HTTP" : "stdio",
                 sst_code_name(err.code), err.msg);
    }
    return c;
}

/* The fake stdio server (tests/mcp/fake_server.mjs) with @p extra arguments. */
static sst_mcp_client *connect_fake(const char *extra1, const char *extra2, const sst_mcp_opts *o,
                                    sst_error *err) {
    char script[1200];
    snprintf(script, sizeof script, "%s/fake_server.mjs", g_dir);
    const char *argv[] = {g_node, script, extra1, extra2, NULL};
    *err = (sst_error){0};
    return sst_mcp_connect_stdio(argv, o, err);
}

static sst_mcp_client *must_fake(const char *extra1, const char *extra2, const sst_mcp_opts *o) {
    sst_error err;
    sst_mcp_client *c = connect_fake(extra1, extra2, o, &err);
    if (c == NULL) {
        fail_msg("connect (fake): %s: %s", sst_code_name(err.code), err.msg);
    }
    return c;
}

/* A shell script of tests/mcp run by /bin/sh (its mode bits do not matter). */
static sst_mcp_client *connect_script(const char *name, const sst_mcp_opts *o, sst_error *err) {
    char script[1200];
    snprintf(script, sizeof script, "%s/%s", g_dir, name);
    const char *argv[] = {"/bin/sh", script, NULL};
    *err = (sst_error){0};
    return sst_mcp_connect_stdio(argv, o, err);
}

/* ---- the reference server ----------------------------------------------------------------- */

static bool listed(const sst_value *tools, const char *name) {
    for (size_t i = 0; i < sst_array_len(tools); i++) {
        const sst_value *t = sst_array_get(tools, i);
        if (strcmp(sst_string_cstr(sst_object_get(t, "name")), name) == 0) {
            assert_true(sst_is_string(sst_object_get(t, "description")));
            assert_true(sst_is_object(sst_object_get(t, "inputSchema")));
            return true;
        }
    }
    return false;
}

/* Handshake, listing and the result shapes (text, structured, image, links, errors). */
static void test_everything(void **state) {
    int transport = **(const int **)state;
    sst_mcp_client *c = must_connect(transport, NULL);
    const sst_value *info = sst_mcp_server_info(c);
    assert_json_eq(info, "{\"name\":\"mcp-servers/everything\",\"version\":\"2.0.0\","
                         "\"protocolVersion\":\"2025-06-18\"}");

    sst_error err = {0};
    sst_value *tools = sst_mcp_list_tools(c, &err);
    assert_non_null(tools);
    assert_true(listed(tools, "echo"));
    assert_true(listed(tools, "get-sum"));
    assert_true(listed(tools, "get-structured-content"));
    assert_true(listed(tools, "get-tiny-image"));
    assert_true(listed(tools, "trigger-long-running-operation"));
    assert_false(listed(tools, "no-such-tool"));
    sst_value *again = sst_mcp_list_tools(c, &err);
    assert_true(sst_value_equal(tools, again));
    sst_value_unref(again);
    sst_value_unref(tools);

    expect_text(c, "echo", "{\"message\":\"hello, world\"}", "Echo: hello, world");
    expect_text(c, "get-sum", "{\"a\":2,\"b\":3.5}", "The sum of 2 and 3.5 is 5.5.");

    /* structuredContent wins over the text block that repeats it. */
    sst_value *args = tu_json("{\"location\":\"Chicago\"}");
    sst_value *r = sst_mcp_call_tool(c, "get-structured-content", args, &err);
    sst_value_unref(args);
    assert_non_null(r);
    assert_json_eq(r,
                   "{\"temperature\":36,\"conditions\":\"Light rain / drizzle\",\"humidity\":82}");
    sst_value_unref(r);

    /* Text, image, text: the blocks as they came. */
    r = sst_mcp_call_tool(c, "get-tiny-image", NULL, &err);
    assert_non_null(r);
    assert_int_equal(sst_array_len(r), 3);
    const sst_value *img = sst_array_get(r, 1);
    assert_string_equal(sst_string_cstr(sst_object_get(img, "type")), "image");
    assert_string_equal(sst_string_cstr(sst_object_get(img, "mimeType")), "image/png");
    assert_true(sst_string_len(sst_object_get(img, "data")) > 100);
    assert_string_equal(sst_string_cstr(sst_object_get(sst_array_get(r, 0), "text")),
                        "Here's the image you requested:");
    sst_value_unref(r);

    args = tu_json("{\"count\":2}");
    r = sst_mcp_call_tool(c, "get-resource-links", args, &err);
    sst_value_unref(args);
    assert_non_null(r);
    assert_int_equal(sst_array_len(r), 3);
    assert_string_equal(sst_string_cstr(sst_object_get(sst_array_get(r, 2), "type")),
                        "resource_link");
    sst_value_unref(r);

    /* The server's isError results: the tool's text is the message. */
    expect_fail(c, "no-such-tool", "{}", NULL, SST_ETASK, &err);
    assert_contains(err.msg, "Tool no-such-tool not found");
    expect_fail(c, "get-sum", "{\"a\":\"two\"}", NULL, SST_ETASK, &err);
    assert_contains(err.msg, "Input validation error");
    /* Arguments that are not an object never reach the server. */
    sst_value *bad = tu_json("[1]");
    assert_null(sst_mcp_call_tool(c, "echo", bad, &err));
    sst_value_unref(bad);
    assert_int_equal(err.code, SST_EINVAL);
    assert_contains(err.msg, "tools/call 'echo': the arguments must be an object");
    expect_text(c, "echo", "{\"message\":\"still here\"}", "Echo: still here");
    sst_mcp_close(c);
}

/*
 * A call past its timeout or cancelled fails when it should (not before, and
 * long before the 20 s operation ends), and the connection stays usable.
 */
static void test_timeout_and_cancel(void **state) {
    int transport = **(const int **)state;
    sst_mcp_opts co;
    sst_mcp_opts_init(&co);
    co.close_timeout_ms = 300; /* the server's operations still run: it is stopped by SIGTERM */
    sst_mcp_client *c = must_connect(transport, &co);
    sst_mcp_call_opts o;
    sst_mcp_call_opts_init(&o);
    o.timeout_ms = 500;
    sst_error err;
    double t0 = tu_now_s();
    expect_fail(c, "trigger-long-running-operation", "{\"duration\":20,\"steps\":20}", &o,
                SST_ETIMEOUT, &err);
    double took = tu_now_s() - t0;
    assert_true(took >= 0.45);
    assert_no_hang(took, 0.5);
    assert_contains(err.msg, "tools/call 'trigger-long-running-operation' timed out after 500 ms");
    assert_contains(err.msg, "MCP server '");
    expect_text(c, "echo", "{\"message\":\"after the timeout\"}", "Echo: after the timeout");

    sst_mcp_call_opts_init(&o);
    t0 = tu_now_s();
    double at = t0 + 0.3;
    o.cancelled = cancel_after;
    o.cancel_user_data = &at;
    expect_fail(c, "trigger-long-running-operation", "{\"duration\":20,\"steps\":20}", &o,
                SST_ECANCELLED, &err);
    took = tu_now_s() - t0;
    assert_true(took >= 0.29); /* cancel_after said stop at t0 + 0.3 */
    assert_no_hang(took, 0.3);
    assert_contains(err.msg, "tools/call 'trigger-long-running-operation' was cancelled");
    expect_text(c, "echo", "{\"message\":\"after the cancel\"}", "Echo: after the cancel");
    sst_mcp_close(c);
}

typedef struct worker {
    sst_mcp_client *c;
    int index;
    int ok;
    char failure[SST_ERROR_MSG_MAX + 64];
} worker;

static void *worker_main(void *arg) {
    worker *w = arg;
    for (int i = 0; i < 8; i++) {
        char args[64], want[96];
        snprintf(args, sizeof args, "{\"a\":%d,\"b\":%d}", w->index, i * 10);
        snprintf(want, sizeof want, "The sum of %d and %d is %d.", w->index, i * 10,
                 w->index + i * 10);
        sst_error err = {0};
        sst_value *a = sst_json_parse(args, &err);
        sst_value *r = a != NULL ? sst_mcp_call_tool(w->c, "get-sum", a, &err) : NULL;
        sst_value_unref(a);
        if (r == NULL || strcmp(sst_string_cstr(r), want) != 0) {
            snprintf(w->failure, sizeof w->failure, "call %d: %s", i,
                     r != NULL ? sst_string_cstr(r) : err.msg);
            sst_value_unref(r);
            return NULL;
        }
        sst_value_unref(r);
        if (i == 4) { /* listings interleave with the calls */
            sst_value *tools = sst_mcp_list_tools(w->c, &err);
            if (tools == NULL) {
                snprintf(w->failure, sizeof w->failure, "list: %s", err.msg);
                return NULL;
            }
            sst_value_unref(tools);
        }
        w->ok++;
    }
    return NULL;
}

/* Four threads on one client: every reply reaches its own caller. */
static void test_concurrent(void **state) {
    int transport = **(const int **)state;
    sst_mcp_client *c = must_connect(transport, NULL);
    worker w[4];
    pthread_t th[4];
    for (int i = 0; i < 4; i++) {
        w[i] = (worker){.c = c, .index = i + 1};
        assert_int_equal(pthread_create(&th[i], NULL, worker_main, &w[i]), 0);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
    }
    for (int i = 0; i < 4; i++) {
        if (w[i].ok != 8) {
            fail_msg("thread %d: %s", i, w[i].failure);
        }
    }
    sst_mcp_close(c);
}

/* max_message_bytes: the handshake's reply (with its long instructions) is too big. */
static void test_message_limit(void **state) {
    int transport = **(const int **)state;
    sst_mcp_opts o;
    sst_mcp_opts_init(&o);
    o.max_message_bytes = 1024;
    sst_error err = {0};
    sst_mcp_client *c = connect_everything(transport, &o, &err);
    assert_null(c);
    assert_int_equal(err.code, SST_ELIMIT);
    assert_contains(err.msg, "initialize");
    assert_contains(err.msg, "larger than 1024 bytes");
}

/* A stdio server killed in the middle of a call: the call fails at once, naming the signal. */
static void test_stdio_killed(void **state) {
    (void)state;
    sst_mcp_client *c = must_connect(k_stdio, NULL);
    pid_t pid = sst__mcp_pid(c);
    assert_true(pid > 0);
    killer k;
    kill_later(&k, pid, 400);
    sst_error err;
    double t0 = tu_now_s();
    expect_fail(c, "trigger-long-running-operation", "{\"duration\":30,\"steps\":30}", NULL,
                SST_EIO, &err);
    assert_no_hang(tu_now_s() - t0, 0.5); /* killed at 0.4 s */
    pthread_join(k.thread, NULL);
    assert_contains(err.msg, "tools/call 'trigger-long-running-operation'");
    assert_contains(err.msg, "the server was killed by signal 9 (SIGKILL)");
    assert_contains(err.msg, "stderr: Starting default (STDIO) server...");
    /* Later calls fail at once with the same reason. */
    t0 = tu_now_s();
    expect_fail(c, "echo", "{\"message\":\"x\"}", NULL, SST_EIO, &err);
    assert_no_hang(tu_now_s() - t0, 0.05);
    assert_contains(err.msg, "tools/call 'echo': the server was killed by signal 9");
    assert_null(sst_mcp_list_tools(c, &err));
    assert_contains(err.msg, "tools/list: the server was killed");
    char tail[256];
    assert_true(sst_mcp_stderr(c, tail, sizeof tail) > 0);
    assert_contains(tail, "Starting default (STDIO) server");
    sst_mcp_close(c);
}

/* The HTTP server killed in the middle of a call: the call fails quickly, naming the URL. */
static void test_http_killed(void **state) {
    (void)state;
    http_server s;
    assert_int_equal(http_server_start(&s, "http_server.mjs"), 0);
    sst_error err = {0};
    sst_mcp_client *c = sst_mcp_connect_http(s.url, NULL, &err);
    if (c == NULL) {
        fail_msg("%s", err.msg);
    }
    expect_text(c, "echo", "{\"message\":\"x\"}", "Echo: x");
    killer k;
    kill_later(&k, s.pid, 500);
    double t0 = tu_now_s();
    expect_fail(c, "trigger-long-running-operation", "{\"duration\":30,\"steps\":30}", NULL,
                SST_EUNAVAILABLE, &err);
    assert_no_hang(tu_now_s() - t0, 0.5); /* killed at 0.5 s */
    pthread_join(k.thread, NULL);
    assert_contains(err.msg, "tools/call 'trigger-long-running-operation'");
    assert_contains(err.msg, s.url);
    t0 = tu_now_s();
    expect_fail(c, "echo", "{\"message\":\"x\"}", NULL, SST_EUNAVAILABLE, &err);
    assert_no_hang(tu_now_s() - t0, 0.1);
    assert_contains(err.msg, "POST ");
    sst_mcp_close(c); /* its DELETE finds nobody: no hang */
    http_server_stop(&s);
}

/* ---- servers that fail ------------------------------------------------------------------- */

static void test_missing_command(void **state) {
    (void)state;
    sst_error err = {0};
    const char *argv[] = {"/nonexistent/mcp-server", "--flag", NULL};
    double t0 = tu_now_s();
    assert_null(sst_mcp_connect_stdio(argv, NULL, &err));
    assert_int_equal(err.code, SST_EIO);
    assert_contains(err.msg, "cannot start '/nonexistent/mcp-server': No such file or directory");
    const char *argv2[] = {"sst-no-such-mcp-server-command", NULL};
    err = (sst_error){0};
    assert_null(sst_mcp_connect_stdio(argv2, NULL, &err));
    assert_int_equal(err.code, SST_EIO);
    assert_contains(err.msg, "cannot start 'sst-no-such-mcp-server-command'");
    assert_no_hang(tu_now_s() - t0, 0.2);

    const char *none[] = {NULL};
    assert_null(sst_mcp_connect_stdio(none, NULL, &err));
    assert_int_equal(err.code, SST_EINVAL);
    sst_mcp_opts o;
    sst_mcp_opts_init(&o);
    o.cwd = "/nonexistent-dir";
    const char *sh[] = {"/bin/sh", "-c", "exit 0", NULL};
    assert_null(sst_mcp_connect_stdio(sh, &o, &err));
    assert_int_equal(err.code, SST_EIO);
    assert_contains(err.msg, "in /nonexistent-dir");
    sst_mcp_opts_init(&o);
    const char *bad_env[] = {"NO_EQUALS_SIGN", NULL};
    o.env = bad_env;
    assert_null(sst_mcp_connect_stdio(sh, &o, &err));
    assert_int_equal(err.code, SST_EINVAL);
    assert_contains(err.msg, "'NO_EQUALS_SIGN' is not NAME=value");
}

/* A server that exits at once: its status and its stderr, quickly. */
static void test_exit_at_once(void **state) {
    (void)state;
    sst_error err;
    double t0 = tu_now_s();
    assert_null(connect_script("exit_now.sh", NULL, &err));
    assert_no_hang(tu_now_s() - t0, 0.3);
    assert_int_equal(err.code, SST_EIO);
    assert_contains(err.msg, "MCP server 'sh exit_now.sh': initialize:");
    assert_contains(err.msg, "the server exited with status 3");
    assert_contains(err.msg, "stderr: fake server: cannot read /nonexistent/config.json");
}

/* A server that writes garbage and never answers: the handshake times out, quoting it. */
static void test_garbage(void **state) {
    (void)state;
    sst_mcp_opts o;
    sst_mcp_opts_init(&o);
    o.connect_timeout_ms = 1500;
    sst_error err;
    double t0 = tu_now_s();
    assert_null(connect_script("garbage.sh", &o, &err));
    assert_no_hang(tu_now_s() - t0, 1.5);
    assert_int_equal(err.code, SST_ETIMEOUT);
    assert_contains(err.msg, "initialize timed out after 1500 ms");
    assert_contains(err.msg, "stdout had 2 lines that are not JSON-RPC");
    assert_contains(err.msg, "{\"jsonrpc\": \"2.0\", \"broken");
}

/* True while a process of group @p pgid is alive (zombies do not count). */
static bool group_alive(pid_t pgid) {
    DIR *d = opendir("/proc");
    assert_non_null(d);
    bool alive = false;
    struct dirent *e;
    while (!alive && (e = readdir(d)) != NULL) {
        char path[300], state = 0;
        snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
        char *stat = e->d_name[0] >= '1' && e->d_name[0] <= '9' ? tu_read_file(path, NULL) : NULL;
        const char *rparen = stat != NULL ? strrchr(stat, ')') : NULL;
        long ppid = 0, pgrp = 0;
        if (rparen != NULL && sscanf(rparen + 1, " %c %ld %ld", &state, &ppid, &pgrp) == 3) {
            alive = pgrp == (long)pgid && state != 'Z' && state != 'X';
        }
        free(stat);
    }
    closedir(d);
    return alive;
}

static void count_message(void *ud, const char *json, size_t len) {
    (void)json, (void)len;
    (*(int *)ud)++;
}

static void ignore_closed(void *ud, sst_code code, const char *why) {
    (void)ud, (void)code, (void)why;
}

/* A server that ignores the end of its stdin and SIGTERM is killed, with its children. */
static void test_close_stubborn(void **state) {
    (void)state;
    char script[1200];
    snprintf(script, sizeof script, "%s/stubborn.sh", g_dir);
    const char *argv[] = {"/bin/sh", script, NULL};
    sst_mcp_opts o;
    sst_mcp_opts_init(&o);
    o.close_timeout_ms = 200;
    o.max_message_bytes = 1024;
    int messages = 0;
    sst__mcp_sink sink = {.message = count_message, .closed = ignore_closed, .ud = &messages};
    sst_error err = {0};
    sst__mcp_transport *t = sst__mcp_stdio_open(argv, &o, &sink, &err);
    assert_non_null(t);
    pid_t pid = t->pid;
    char tail[64] = "";
    for (int i = 0; i < 200 && strstr(tail, "started") == NULL; i++) {
        sst__sleep_ms(10);
        t->stderr_tail(t, tail, sizeof tail);
    }
    assert_contains(tail, "stubborn: started");
    assert_int_equal(kill(-pid, 0), 0); /* its own process group */
    double t0 = tu_now_s();
    t->close(t);
    double took = tu_now_s() - t0;
    assert_true(took >= 0.35); /* two graces of 200 ms, then SIGKILL */
    assert_no_hang(took, 0.4);
    assert_int_equal(kill(pid, 0), -1); /* reaped */
    assert_int_equal(errno, ESRCH);
    bool gone = false; /* its sleep too (killed: a zombie at most, for init to reap) */
    for (int i = 0; i < 100 && !(gone = !group_alive(pid)); i++) {
        sst__sleep_ms(20);
    }
    assert_true(gone);
}

/* Writing to a server that closed its stdin: an error, never a SIGPIPE (left at SIG_DFL). */
static void test_sigpipe(void **state) {
    (void)state;
    const char *argv[] = {"/bin/sh", "-c", "exec 0<&-; echo closed >&2; exec sleep 30", NULL};
    sst_mcp_opts o;
    sst_mcp_opts_init(&o);
    o.close_timeout_ms = 100;
    o.max_message_bytes = 1024;
    int messages = 0;
    sst__mcp_sink sink = {.message = count_message, .closed = ignore_closed, .ud = &messages};
    sst_error err = {0};
    sst__mcp_transport *t = sst__mcp_stdio_open(argv, &o, &sink, &err);
    assert_non_null(t);
    char tail[64] = "";
    for (int i = 0; i < 200 && strstr(tail, "closed") == NULL; i++) {
        sst__sleep_ms(10);
        t->stderr_tail(t, tail, sizeof tail);
    }
    sst__mcp_wait w = {.deadline_ms = sst__mcp_now_ms() + 5000};
    assert_int_equal(t->send(t, "{}", 2, &w, &err), SST_EIO);
    assert_contains(err.msg, "cannot write to the server's stdin: Broken pipe");
    /* A second write fails the same way. */
    assert_int_equal(t->send(t, "{}", 2, &w, &err), SST_EIO);
    t->close(t);
    assert_int_equal(messages, 0);
}

/* ---- the fake server: what the reference server cannot show ------------------------------ */

static bool has_tool(sst_mcp_client *c, const char *name) {
    sst_error err = {0};
    sst_value *tools = sst_mcp_list_tools(c, &err);
    assert_non_null(tools);
    bool found = listed(tools, name);
    sst_value_unref(tools);
    return found;
}

static void test_fake_server(void **state) {
    (void)state;
    sst_mcp_opts o;
    sst_mcp_opts_init(&o);
    o.cwd = "/tmp";
    const char *env[] = {"SST_MCP_UNUSED=1", NULL};
    o.env = env;
    /* Two lines of garbage before the handshake's reply are not fatal. */
    sst_mcp_client *c = must_fake("--garbage", NULL, &o);
    assert_json_eq(sst_mcp_server_info(c),
                   "{\"name\":\"fake\",\"version\":\"0.1\",\"protocolVersion\":\"2025-06-18\"}");
    /* Two pages, fetched once and then kept. */
    assert_true(has_tool(c, "echo"));
    assert_true(has_tool(c, "die")); /* on the second page */
    assert_false(has_tool(c, "extra"));
    expect_text(c, "lists", "{}", "2");
    /* list_changed makes the next listing ask again. */
    expect_text(c, "grow", "{}", "grown");
    sst__sleep_ms(50);
    assert_true(has_tool(c, "extra"));
    expect_text(c, "lists", "{}", "4");

    expect_text(c, "echo", "{\"text\":\"hi\"}", "echo: hi");
    expect_text(c, "add", "{\"a\":2,\"b\":40}", "42");
    expect_text(c, "garbage", "{}", "after garbage");
    expect_text(c, "echo", "{\"text\":\"after\"}", "echo: after");
    expect_text(c, "cwd", "{}", "/tmp");

    /* The client answers ping, and refuses what it did not declare with -32601. */
    char *asked = call_text(c, "ask", "{}");
    sst_value *v = tu_json(asked);
    free(asked);
    assert_json_eq(sst_object_get(v, "ping"), "{\"result\":{}}");
    const sst_value *sampling = sst_object_get(sst_object_get(v, "sampling"), "error");
    assert_int_equal(sst_int_value(sst_object_get(sampling, "code")), -32601);
    assert_contains(sst_string_cstr(sst_object_get(sampling, "message")), "sampling/createMessage");
    sst_value_unref(v);

    sst_error err;
    expect_fail(c, "fail", "{}", NULL, SST_ETASK, &err);
    assert_string_equal(err.msg, "it broke");
    expect_text(c, "mixed", "{}",
                "[{\"type\":\"text\",\"text\":\"a picture:\"},{\"type\":\"image\",\"data\":"
                "\"aGk=\",\"mimeType\":\"image/png\"}]");

    /* notifications/cancelled reaches the server, with the reason. */
    sst_mcp_call_opts co;
    sst_mcp_call_opts_init(&co);
    co.timeout_ms = 300;
    expect_fail(c, "slow", "{\"ms\":10000}", &co, SST_ETIMEOUT, &err);
    double at = tu_now_s() + 0.2;
    sst_mcp_call_opts_init(&co);
    co.cancelled = cancel_after;
    co.cancel_user_data = &at;
    expect_fail(c, "slow", "{\"ms\":10000}", &co, SST_ECANCELLED, &err);
    /* Both heard while the call still ran (else "... (after the reply)"). */
    expect_text(c, "cancels", "{}", "timed out,cancelled by the caller");
    expect_text(c, "slow", "{\"ms\":10}", "slept");

    /* A JSON-RPC error, quoted. */
    err = (sst_error){0};
    assert_null(sst__mcp_request(c, "no/such/method", NULL, NULL, NULL, &err));
    assert_int_equal(err.code, SST_EINVAL);
    assert_contains(err.msg, "no/such/method: error -32601: Method not found: no/such/method");

    /* A server that dies says how, with its stderr. */
    expect_fail(c, "die", "{}", NULL, SST_EIO, &err);
    assert_contains(err.msg, "MCP server 'node fake_server.mjs --garbage': tools/call 'die': ");
    assert_contains(err.msg, "the server exited with status 5");
    assert_contains(err.msg, "stdout had 3 lines that are not JSON-RPC");
    assert_contains(err.msg, "stderr: fake: dying");
    sst_mcp_close(c);
}

/* The handshake refuses unknown revisions and servers without tools. */
static void test_versions(void **state) {
    (void)state;
    sst_error err;
    assert_null(connect_fake("--version", "1999-01-01", NULL, &err));
    assert_int_equal(err.code, SST_ENOTSUP);
    assert_contains(err.msg, "protocol revision '1999-01-01'");
    assert_null(connect_fake("--no-tools", NULL, NULL, &err));
    assert_int_equal(err.code, SST_ENOTSUP);
    assert_contains(err.msg, "offers no tools");
    sst_mcp_client *c = must_fake("--version", "2024-11-05", NULL);
    assert_string_equal(sst_string_cstr(sst_object_get(sst_mcp_server_info(c), "protocolVersion")),
                        "2024-11-05");
    expect_text(c, "echo", "{\"text\":\"old\"}", "echo: old");
    sst_mcp_close(c);
}

/* Environment additions reach the server (the reference server's get-env). */
static void test_env(void **state) {
    (void)state;
    sst_mcp_opts o;
    sst_mcp_opts_init(&o);
    const char *env[] = {"SST_MCP_TEST_VAR=hello from the test", "HOME=/sst-mcp-home", NULL};
    o.env = env;
    o.name = "everything";
    o.close_timeout_ms = 300;
    sst_mcp_client *c = must_connect(k_stdio, &o);
    char *all = call_text(c, "get-env", "{}");
    assert_contains(all, "\"SST_MCP_TEST_VAR\": \"hello from the test\"");
    assert_contains(all, "\"HOME\": \"/sst-mcp-home\"");
    free(all);
    sst_error err;
    expect_fail(c, "no-such-tool", "{}", NULL, SST_ETASK, &err);
    sst_mcp_call_opts co;
    sst_mcp_call_opts_init(&co);
    co.timeout_ms = 200;
    expect_fail(c, "trigger-long-running-operation", "{\"duration\":5,\"steps\":5}", &co,
                SST_ETIMEOUT, &err);
    assert_contains(err.msg, "MCP server 'everything': ");
    sst_mcp_close(c);
}

/* ---- as agent tools ---------------------------------------------------------------------- */

static sst_value *tool_call(const char *name, const char *arguments) {
    sst_error err = {0};
    sst_value *fn =
        sst_object_set_take(sst_object_empty(), "name", sst_string_new(name, &err), &err);
    fn = sst_object_set_take(fn, "arguments", sst_string_new(arguments, &err), &err);
    sst_value *call =
        sst_object_set_take(sst_object_empty(), "id", sst_string_new("call-1", &err), &err);
    call = sst_object_set_take(call, "function", fn, &err);
    assert_non_null(call);
    return call;
}

static void expect_content(const sst__tools *t, const char *name, const char *arguments,
                           const char *want_prefix) {
    sst_value *call = tool_call(name, arguments);
    sst_error err = {0};
    sst_value *m = sst__tools_call(t, call, &err);
    sst_value_unref(call);
    if (m == NULL) {
        fail_msg("tool '%s': %s: %s", name, sst_code_name(err.code), err.msg);
    }
    const char *content = sst_string_cstr(sst_object_get(m, "content"));
    if (strncmp(content, want_prefix, strlen(want_prefix)) != 0) {
        fail_msg("tool '%s': content '%s', expected it to start with '%s'", name, content,
                 want_prefix);
    }
    assert_string_equal(sst_string_cstr(sst_object_get(m, "tool_call_id")), "call-1");
    sst_value_unref(m);
}

static const sst__tool *find_tool(const sst__tools *t, const char *name) {
    for (size_t i = 0; i < t->n; i++) {
        if (strcmp(t->items[i].name, name) == 0) {
            return &t->items[i];
        }
    }
    return NULL;
}

static void test_tools_adapter(void **state) {
    int transport = **(const int **)state;
    sst_mcp_client *c = must_connect(transport, NULL);
    sst__tools t;
    sst__tools_init(&t);
    sst_error err = {0};
    assert_sst_ok(sst__mcp_tools_add(&t, c, "ev_", &err), &err);
    const sst__tool *echo = find_tool(&t, "ev_echo");
    assert_non_null(echo);
    assert_string_equal(echo->description, "Echoes back the input string");
    assert_string_equal(sst_string_cstr(sst_object_get(echo->parameters, "type")), "object");
    assert_non_null(find_tool(&t, "ev_get-sum"));
    expect_content(&t, "ev_echo", "{\"message\":\"via the tool list\"}", "Echo: via the tool list");
    expect_content(&t, "ev_get-sum", "{\"a\":1,\"b\":2}", "The sum of 1 and 2 is 3.");
    expect_content(&t, "ev_get-structured-content", "{\"location\":\"New York\"}",
                   "{\"temperature\":33,");
    expect_content(&t, "ev_get-tiny-image", "{}", "[{\"type\":\"text\"");
    /* Checked against the server's schema before the call (its maximum too); the server's
     * own errors are test_public_agent's. */
    expect_content(&t, "ev_echo", "{\"message\":7}", "error: bad arguments for 'ev_echo'");
    expect_content(&t, "ev_get-resource-links", "{\"count\":99}",
                   "error: bad arguments for 'ev_get-resource-links': arguments/count: must be <= "
                   "10, got 99");

    /* A clash adds nothing. */
    size_t n = t.n;
    err = (sst_error){0};
    assert_int_equal(sst__mcp_tools_add(&t, c, "ev_", &err), SST_EINVAL);
    assert_contains(err.msg, "clashes with a tool named 'ev_echo'");
    assert_int_equal(t.n, n);
    sst__tools_free(&t);
    sst_mcp_close(c);
}

/* Schemas sst__tools_add would refuse become object schemas. */
static void test_schemas(void **state) {
    (void)state;
    sst_mcp_client *c = must_fake(NULL, NULL, NULL);
    sst__tools t;
    sst__tools_init(&t);
    sst_error err = {0};
    assert_sst_ok(sst__mcp_tools_add(&t, c, NULL, &err), &err);
    assert_json_eq(find_tool(&t, "noschema")->parameters,
                   "{\"type\":\"object\",\"properties\":{}}");
    assert_json_eq(find_tool(&t, "loose")->parameters,
                   "{\"type\":\"object\",\"properties\":{\"x\":{\"type\":\"string\"}}}");
    expect_content(&t, "noschema", "{}", "error: tool 'noschema' failed: no tool noschema");
    expect_content(&t, "fail", "{}", "error: tool 'fail' failed: it broke");
    sst__tools_free(&t);
    sst_mcp_close(c);

    sst_value *odd = tu_json("{\"type\":\"string\"}");
    sst_value *s = sst__mcp_object_schema(odd, &err);
    assert_json_eq(s, "{\"type\":\"object\",\"properties\":{}}");
    sst_value_unref(s);
    sst_value_unref(odd);
    s = sst__mcp_object_schema(NULL, &err);
    assert_json_eq(s, "{\"type\":\"object\",\"properties\":{}}");
    sst_value_unref(s);
}

/* Result mapping on its own: every branch of sst__mcp_result_value. */
static void test_result_value(void **state) {
    (void)state;
    static const struct {
        const char *result, *want;
    } ok[] = {
        {"{\"content\":[{\"type\":\"text\",\"text\":\"a\"},{\"type\":\"text\",\"text\":\"b\"}]}",
         "\"a\\nb\""},
        {"{\"content\":[]}", "\"\""},
        {"{}", "\"\""},
        {"{\"content\":[{\"type\":\"text\",\"text\":\"x\"}],\"structuredContent\":{\"k\":1}}",
         "{\"k\":1}"},
        {"{\"content\":[{\"type\":\"audio\",\"data\":\"AA==\",\"mimeType\":\"audio/wav\"}]}",
         "[{\"type\":\"audio\",\"data\":\"AA==\",\"mimeType\":\"audio/wav\"}]"},
        {"{\"content\":[{\"type\":\"text\",\"text\":\"t\"}],\"isError\":false}", "\"t\""},
    };
    for (size_t i = 0; i < SST_ARRAY_LEN(ok); i++) {
        sst_value *r = tu_json(ok[i].result);
        sst_error err = {0};
        sst_value *v = sst__mcp_result_value(r, &err);
        assert_non_null(v);
        assert_json_eq(v, ok[i].want);
        sst_value_unref(v);
        sst_value_unref(r);
    }
    sst_value *r = tu_json("{\"content\":[{\"type\":\"image\",\"data\":\"AA==\"},{\"type\":"
                           "\"text\",\"text\":\"quota exceeded\"}],\"isError\":true}");
    sst_error err = {0};
    assert_null(sst__mcp_result_value(r, &err));
    assert_int_equal(err.code, SST_ETASK);
    assert_string_equal(err.msg, "quota exceeded");
    sst_value_unref(r);
    r = tu_json("{\"content\":\"text\"}");
    assert_null(sst__mcp_result_value(r, &err));
    assert_int_equal(err.code, SST_EPARSE);
    sst_value_unref(r);
}

/* ---- the public API, an agent, node cancellation ----------------------------------------- */

static sst_agent *agent_with(sst_model **model, sst_toolset *tools, const char *replies) {
    char path[64], spec[80];
    tu_temp_file(replies, path, sizeof path);
    snprintf(spec, sizeof spec, "fake:%s", path);
    sst_error err = {0};
    *model = sst_model_from_spec(spec, NULL, NULL, &err);
    remove(path);
    assert_non_null(*model);
    sst_agent *a = sst_agent_new(*model, tools, NULL, &err);
    assert_non_null(a);
    return a;
}

static void test_public_agent(void **state) {
    (void)state;
    sst_mcp_client *c = must_fake(NULL, NULL, NULL);
    sst_error err = {0};
    sst_toolset *tools = sst_toolset_new(&err);
    assert_sst_ok(sst_toolset_add_mcp(tools, c, NULL, &err), &err);
    assert_int_equal(sst_toolset_add_mcp(tools, c, NULL, &err), SST_EINVAL);
    sst_model *model;
    sst_agent *a = agent_with(
        &model, tools,
        "{\"content\":\"\",\"tool_calls\":[{\"id\":\"t1\",\"type\":\"function\",\"function\":"
        "{\"name\":\"echo\",\"arguments\":\"{\\\"text\\\":\\\"from the model\\\"}\"}},"
        "{\"id\":\"t2\",\"type\":\"function\",\"function\":{\"name\":\"fail\",\"arguments\":"
        "\"{}\"}}]}\n{\"content\":\"done\"}\n");
    sst_value *in = tu_json("{\"messages\":[{\"role\":\"user\",\"content\":\"go\"}]}");
    sst_graph_result *r = sst_graph_invoke(sst_agent_graph(a), NULL, in, NULL, &err);
    sst_value_unref(in);
    assert_non_null(r);
    const sst_value *msgs = sst_object_get(sst_graph_result_state(r), "messages");
    assert_int_equal(sst_array_len(msgs), 5);
    assert_string_equal(sst_string_cstr(sst_object_get(sst_array_get(msgs, 2), "content")),
                        "echo: from the model");
    assert_string_equal(sst_string_cstr(sst_object_get(sst_array_get(msgs, 3), "content")),
                        "error: tool 'fail' failed: it broke");
    assert_string_equal(sst_string_cstr(sst_object_get(sst_array_get(msgs, 4), "content")), "done");
    sst_graph_result_free(r);
    sst_agent_free(a);
    sst_model_free(model);
    sst_toolset_free(tools);
    sst_mcp_close(c);
}

static bool cancel_in_node(void *ud, bool in_node) {
    return in_node && tu_now_s() >= *(const double *)ud;
}

/*
 * A run cancelled while an MCP tool runs stops the call (sst_node_cancelled):
 * the server hears of it before its 20 s are up.
 */
static void test_node_cancel(void **state) {
    (void)state;
    sst_mcp_client *c = must_fake(NULL, NULL, NULL);
    sst_error err = {0};
    sst_toolset *tools = sst_toolset_new(&err);
    assert_sst_ok(sst_toolset_add_mcp(tools, c, "f_", &err), &err);
    sst_model *model;
    sst_agent *a = agent_with(&model, tools,
                              "{\"content\":\"\",\"tool_calls\":[{\"id\":\"t1\",\"type\":"
                              "\"function\",\"function\":{\"name\":\"f_slow\",\"arguments\":"
                              "\"{\\\"ms\\\":20000}\"}}]}\n{\"content\":\"done\"}\n");
    double at = tu_now_s() + 0.5;
    sst_invoke_opts io;
    sst_invoke_opts_init(&io);
    io.cancelled = cancel_in_node;
    io.cancel_user_data = &at;
    sst_value *in = tu_json("{\"messages\":[{\"role\":\"user\",\"content\":\"go\"}]}");
    sst_graph_result *r = sst_graph_invoke(sst_agent_graph(a), NULL, in, &io, &err);
    sst_value_unref(in);
    sst_graph_result_free(r);
    expect_text(c, "cancels", "{}", "cancelled by the caller"); /* not "... (after the reply)" */
    sst_agent_free(a);
    sst_model_free(model);
    sst_toolset_free(tools);
    sst_mcp_close(c);
}

static void test_public_http(void **state) {
    (void)state;
    sst_mcp_opts o;
    sst_mcp_opts_init(&o);
    const char *headers[] = {"Authorization: Bearer test-token", "X-Test: 1", NULL};
    o.headers = headers;
    sst_error err = {0};
    sst_mcp_client *c = sst_mcp_connect_http(g_http.url, &o, &err);
    if (c == NULL) {
        fail_msg("%s", err.msg);
    }
    expect_text(c, "echo", "{\"message\":\"with headers\"}", "Echo: with headers");
    char tail[16];
    assert_int_equal(sst_mcp_stderr(c, tail, sizeof tail), 0);
    sst_mcp_close(c);

    const char *bad[] = {"not a header line", NULL};
    o.headers = bad;
    assert_null(sst_mcp_connect_http(g_http.url, &o, &err));
    assert_int_equal(err.code, SST_EINVAL);
    assert_contains(err.msg, "header 1 is not one 'Name: value' line");
    assert_null(sst_mcp_connect_http("ftp://127.0.0.1/mcp", NULL, &err));
    assert_int_equal(err.code, SST_EINVAL);
    /* Nobody listening: a quick, named failure (port 9 is discard, closed on test machines). */
    double t0 = tu_now_s();
    assert_null(sst_mcp_connect_http("http://127.0.0.1:9/mcp", NULL, &err));
    assert_no_hang(tu_now_s() - t0, 0.3);
    assert_int_equal(err.code, SST_EUNAVAILABLE);
    assert_contains(err.msg, "MCP server 'http://127.0.0.1:9/mcp': initialize: POST");
    /* A path the server does not serve. */
    char wrong[128];
    snprintf(wrong, sizeof wrong, "%.*s/nope", (int)(strlen(g_http.url) - 4), g_http.url);
    assert_null(sst_mcp_connect_http(wrong, NULL, &err));
    assert_int_equal(err.code, SST_EINVAL);
    assert_contains(err.msg, "answered HTTP 404");
}

/* JSON replies, a ping inside a reply's stream, the headers, DELETE, an expired session. */
static void test_fake_http(void **state) {
    (void)state;
    http_server s;
    assert_int_equal(http_server_start(&s, "fake_http_server.mjs"), 0);
    sst_mcp_opts o;
    sst_mcp_opts_init(&o);
    const char *headers[] = {"Authorization: Bearer t0ken", NULL};
    o.headers = headers;
    sst_error err = {0};
    sst_mcp_client *c = sst_mcp_connect_http(s.url, &o, &err);
    if (c == NULL) {
        fail_msg("%s", err.msg);
    }
    assert_string_equal(sst_string_cstr(sst_object_get(sst_mcp_server_info(c), "name")),
                        "fake-http");
    assert_true(has_tool(c, "ping_first"));
    expect_text(c, "echo", "{\"text\":\"hi\"}", "echo: hi");
    expect_text(c, "ping_first", "{}", "pong: {}");
    expect_text(c, "headers", "{}",
                "{\"authorization\":\"Bearer t0ken\",\"version\":\"2025-06-18\","
                "\"session\":\"sess-1\"}");
    /* A call's traceparent (the agent's tool span) goes with its request only. */
    sst_mcp_call_opts how;
    sst_mcp_call_opts_init(&how);
    how.traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    sst_value *none = sst_object_empty();
    sst_value *traced = sst_mcp_call_tool_opts(c, "headers", none, &how, &err);
    sst_value_unref(none);
    assert_non_null(traced);
    assert_contains(sst_string_cstr(traced),
                    "\"traceparent\":\"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01\"");
    sst_value_unref(traced);
    expect_text(c, "deletes", "{}", "0");
    /* A stream left open after the response is not waited for: the server has not ended it. */
    expect_text(c, "linger", "{}", "lingered");
    char *ended = call_text(c, "linger_end", "{}");
    if (strcmp(ended, "open") != 0 && strcmp(ended, "closed by the client") != 0) {
        fail_msg("the client waited for the end of the linger stream: %s", ended);
    }
    free(ended);
    sst_mcp_close(c);

    c = sst_mcp_connect_http(s.url, &o, &err);
    assert_non_null(c);
    expect_text(c, "deletes", "{}", "1"); /* the first session was ended */
    expect_text(c, "expire", "{}", "expired");
    expect_fail(c, "echo", "{\"text\":\"x\"}", NULL, SST_EUNAVAILABLE, &err);
    assert_contains(err.msg, "tools/call 'echo': the server ended the session (HTTP 404");
    sst_mcp_close(c);
    http_server_stop(&s);
}

int main(void) {
    static const int *stdio_ = &k_stdio, *http_ = &k_http;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_prestate(test_everything, &stdio_),
        cmocka_unit_test_prestate(test_everything, &http_),
        cmocka_unit_test_prestate(test_timeout_and_cancel, &stdio_),
        cmocka_unit_test_prestate(test_timeout_and_cancel, &http_),
        cmocka_unit_test_prestate(test_concurrent, &stdio_),
        cmocka_unit_test_prestate(test_concurrent, &http_),
        cmocka_unit_test_prestate(test_message_limit, &stdio_),
        cmocka_unit_test_prestate(test_message_limit, &http_),
        cmocka_unit_test_prestate(test_tools_adapter, &stdio_),
        cmocka_unit_test_prestate(test_tools_adapter, &http_),
        cmocka_unit_test(test_stdio_killed),
        cmocka_unit_test(test_http_killed),
        cmocka_unit_test(test_missing_command),
        cmocka_unit_test(test_exit_at_once),
        cmocka_unit_test(test_garbage),
        cmocka_unit_test(test_close_stubborn),
        cmocka_unit_test(test_sigpipe),
        cmocka_unit_test(test_fake_server),
        cmocka_unit_test(test_versions),
        cmocka_unit_test(test_env),
        cmocka_unit_test(test_schemas),
        cmocka_unit_test(test_result_value),
        cmocka_unit_test(test_public_agent),
        cmocka_unit_test(test_node_cancel),
        cmocka_unit_test(test_public_http),
        cmocka_unit_test(test_fake_http),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
