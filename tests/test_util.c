/* SPDX-License-Identifier: MIT */
/* Test helpers; see test_util.h. */
#define _GNU_SOURCE /* mkstemp, mkdtemp */
#include "test_util.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <libpq-fe.h>

void tu_assert_ok(sst_code code, const sst_error *err, const char *file, int line) {
    if (code != SST_OK) {
        print_error("%s:%d: expected SST_OK, got %s: %s\n", file, line, sst_code_name(code),
                    err != NULL ? err->msg : "");
        _fail(file, line);
    }
}

sst_value *tu_json(const char *json) {
    sst_error err;
    sst_value *v = sst_json_parse(json, &err);
    if (v == NULL) {
        print_error("test JSON does not parse: %s\n  %s\n", err.msg, json);
        fail();
    }
    return v;
}

void tu_assert_json_eq(const sst_value *v, const char *json, const char *file, int line) {
    sst_value *want = tu_json(json);
    if (!sst_value_equal(v, want)) {
        char *got = v != NULL ? sst_json_write(v, SST_JSON_COMPACT, NULL, NULL) : NULL;
        print_error("%s:%d: JSON values differ\n  expected: %s\n  actual:   %s\n", file, line, json,
                    got != NULL ? got : "(NULL)");
        sst_free(got);
        sst_value_unref(want);
        _fail(file, line);
    }
    sst_value_unref(want);
}

void tu_assert_json_text(const sst_value *v, unsigned flags, const char *text, const char *file,
                         int line) {
    sst_error err;
    char *got = sst_json_write(v, flags, NULL, &err);
    if (got == NULL || strcmp(got, text) != 0) {
        print_error("%s:%d: JSON text differs\n  expected: %s\n  actual:   %s\n", file, line, text,
                    got != NULL ? got : err.msg);
        sst_free(got);
        _fail(file, line);
    }
    sst_free(got);
}

const char *tu_data_path(const char *rel, char *buf, size_t n) {
    const char *root = getenv("SST_TEST_DATA");
    snprintf(buf, n, "%s/%s", root != NULL ? root : "tests/data", rel);
    return buf;
}

char *tu_read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        return NULL;
    }
    size_t cap = 4096, n = 0, got;
    char *buf = malloc(cap);
    while (buf != NULL && (got = fread(buf + n, 1, cap - n - 1, f)) > 0) {
        n += got;
        if (n + 1 == cap) {
            cap *= 2;
            char *bigger = realloc(buf, cap);
            if (bigger == NULL) {
                free(buf);
            }
            buf = bigger;
        }
    }
    fclose(f);
    if (buf != NULL) {
        buf[n] = '\0';
        if (len != NULL) {
            *len = n;
        }
    }
    return buf;
}

uint64_t tu_rand(tu_rng *r) {
    r->state ^= r->state << 13;
    r->state ^= r->state >> 7;
    r->state ^= r->state << 17;
    return r->state;
}

int tu_is_uuid4(const sst_value *v) {
    const char *s = sst_string_cstr(v);
    if (!sst_is_string(v) || sst_string_len(v) != 36 || s[14] != '4' ||
        strchr("89ab", s[19]) == NULL) {
        return 0;
    }
    for (int i = 0; i < 36; i++) {
        int dash = i == 8 || i == 13 || i == 18 || i == 23;
        if (dash ? s[i] != '-' : strchr("0123456789abcdef", s[i]) == NULL) {
            return 0;
        }
    }
    return 1;
}

/* ---- chaos allocator ---- */

#define HDR 16 /* keeps malloc's alignment */

static atomic_long g_live;
static atomic_long g_countdown; /* > 0: armed */
static atomic_int g_fired;

static int should_fail(void) {
    if (atomic_load(&g_countdown) <= 0) {
        return 0;
    }
    if (atomic_fetch_sub(&g_countdown, 1) == 1) {
        atomic_store(&g_fired, 1);
        return 1;
    }
    return 0;
}

static void *chaos_malloc(size_t size) {
    if (should_fail()) {
        return NULL;
    }
    char *p = malloc(size + HDR);
    if (p == NULL) {
        return NULL;
    }
    atomic_fetch_add(&g_live, 1);
    return p + HDR;
}

static void *chaos_realloc(void *ptr, size_t size) {
    if (ptr == NULL) {
        return chaos_malloc(size);
    }
    if (should_fail()) {
        return NULL;
    }
    char *p = realloc((char *)ptr - HDR, size + HDR);
    return p != NULL ? p + HDR : NULL;
}

static void chaos_free(void *ptr) {
    if (ptr != NULL) {
        atomic_fetch_sub(&g_live, 1);
        free((char *)ptr - HDR);
    }
}

void tu_chaos_install(void) {
    if (sst_set_allocator(chaos_malloc, chaos_realloc, chaos_free) != SST_OK) {
        abort();
    }
}

void tu_chaos_fail_at(long n) {
    atomic_store(&g_fired, 0);
    atomic_store(&g_countdown, n);
}

void tu_chaos_off(void) {
    atomic_store(&g_countdown, 0);
}

long tu_chaos_live(void) {
    return atomic_load(&g_live);
}

int tu_chaos_fired(void) {
    return atomic_load(&g_fired);
}

sst_code tu_ask_two_questions(sst_node_ctx *ctx) {
    const sst_value *age = sst_node_interrupt(ctx, tu_json("\"age?\""));
    if (age == NULL) {
        return SST_EINTERRUPT;
    }
    const sst_value *name = sst_node_interrupt(ctx, tu_json("\"name?\""));
    if (name == NULL) {
        return SST_EINTERRUPT;
    }
    char text[64];
    snprintf(text, sizeof text, "%lld/%s", (long long)sst_int_value(age), sst_string_cstr(name));
    return sst_node_update(ctx, "answer", sst_string_new(text, NULL), NULL);
}

void tu_temp_file(const char *text, char *path, size_t n) {
    snprintf(path, n, "/tmp/sst_test_XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    assert_non_null(f);
    assert_int_equal(fputs(text, f) >= 0, 1);
    assert_int_equal(fclose(f), 0);
}

int tu_temp_dir(const char *prefix, char *buf, size_t n) {
    if ((size_t)snprintf(buf, n, "/tmp/sst-%s-XXXXXX", prefix) >= n) {
        return -1;
    }
    return mkdtemp(buf) != NULL ? 0 : -1;
}

const char *tu_pg_url(void) {
    static char url[512];
    const char *env = getenv("SST_PGTEST_URL");
    if (env != NULL && env[0] != '\0') {
        return env;
    }
    const char *file = getenv("SST_PGTEST_URL_FILE");
    char *text = file != NULL ? tu_read_file(file, NULL) : NULL;
    if (text != NULL) {
        snprintf(url, sizeof url, "%s", text);
        url[strcspn(url, "\r\n")] = '\0';
        free(text);
        if (url[0] != '\0') {
            return url;
        }
    }
    const char *need = getenv("SST_REQUIRE_POSTGRES");
    if (need != NULL && strcmp(need, "1") == 0) {
        fail_msg("no test PostgreSQL server (SST_PGTEST_URL, SST_PGTEST_URL_FILE=%s) and "
                 "SST_REQUIRE_POSTGRES=1",
                 file != NULL ? file : "(unset)");
    }
    return NULL;
}

int tu_pg_group_setup(const char *prefix, char *url, size_t n) {
    url[0] = '\0';
    if (tu_pg_url() == NULL) {
        print_message("no test PostgreSQL server: its cases skip\n");
        return 0;
    }
    return tu_pg_fresh(prefix, url, n);
}

sst_pg *tu_pg_pool(const char *url, int size) {
    sst_error err = {0};
    sst_pg_opts o;
    sst_pg_opts_init(&o);
    o.pool_size = size;
    sst_pg *pg = sst_pg_open(url, &o, &err);
    if (pg == NULL) {
        print_error("%s\n", err.msg);
    }
    assert_non_null(pg);
    return pg;
}

sst_code tu_invoke_value(const sst_compiled_graph *cg, sst_checkpointer *cp, const char *thread,
                         int64_t v, sst_durability d, int64_t *out, sst_error *err) {
    sst_invoke_opts o;
    sst_invoke_opts_init(&o);
    o.durability = d;
    char in[64];
    snprintf(in, sizeof in, "{\"value\":%lld}", (long long)v);
    sst_value *input = sst_json_parse(in, NULL);
    assert_non_null(input);
    sst_graph_thread *th = sst_graph_thread_open(cg, cp, thread, err);
    assert_non_null(th);
    sst_graph_result *r = sst_graph_invoke(cg, th, input, &o, err);
    sst_value_unref(input);
    sst_code rc = r == NULL ? (err->code != SST_OK ? err->code : SST_ENOMEM)
                  : sst_graph_result_status(r) == SST_RUN_COMPLETED
                      ? SST_OK
                      : (*err = *sst_graph_result_error(r), err->code);
    if (r != NULL && out != NULL) {
        *out = sst_int_value(sst_object_get(sst_graph_result_state(r), "value"));
    }
    sst_graph_result_free(r);
    sst_graph_thread_free(th);
    return rc;
}

int tu_pg_exec(const char *url, const char *sql) {
    PGconn *c = PQconnectdb(url);
    int rc = -1;
    if (PQstatus(c) == CONNECTION_OK) {
        PGresult *r = PQexec(c, sql);
        ExecStatusType st = PQresultStatus(r);
        rc = st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK ? 0 : -1;
        if (rc != 0) {
            print_message("tu_pg_exec: %s: %s", sql, PQresultErrorMessage(r));
        }
        PQclear(r);
    } else {
        print_message("tu_pg_exec: %s", PQerrorMessage(c));
    }
    PQfinish(c);
    return rc;
}

int tu_pg_fresh(const char *prefix, char *buf, size_t n) {
    static int counter;
    const char *base = tu_pg_url();
    if (base == NULL) {
        return -1;
    }
    char schema[96], sql[320];
    snprintf(schema, sizeof schema, "t_%s_%ld_%d", prefix, (long)getpid(), ++counter);
    snprintf(sql, sizeof sql,
             "SET client_min_messages = warning; DROP SCHEMA IF EXISTS %s CASCADE; "
             "CREATE SCHEMA %s",
             schema, schema);
    if (tu_pg_exec(base, sql) != 0) {
        return -1;
    }
    if ((size_t)snprintf(buf, n, "%s%soptions=-csearch_path%%3D%s", base,
                         strchr(base, '?') != NULL ? "&" : "?", schema) >= n) {
        return -1;
    }
    return 0;
}

int tu_rm_rf(const char *dir) {
    char cmd[600];
    if (strchr(dir, '\'') != NULL ||
        (size_t)snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir) >= sizeof cmd) {
        return -1;
    }
    return system(cmd) == 0 ? 0 : -1;
}

double tu_now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define TU_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) ||                         \
    __has_feature(memory_sanitizer)
#define TU_SANITIZED 1
#endif
#endif
#ifndef TU_SANITIZED
#define TU_SANITIZED 0
#endif

double tu_time_scale(void) {
    const char *env = getenv("SST_TEST_TIME_SCALE");
    double scale = 1;
    if (env != NULL && *env != '\0') {
        char *end;
        double v = strtod(env, &end);
        if (*end == '\0' && v > 0) {
            scale = v;
        }
    }
    return TU_SANITIZED ? scale * 10 : scale;
}

void tu_assert_no_hang(double took, double expected_s, const char *what, const char *file,
                       int line) {
    double bound = 10 * expected_s * tu_time_scale();
    if (!(bound > took)) { // NaN too
        print_error("%s:%d: %s: %.2f s, past the bound of %.2f s (10 x %.2f s x "
                    "tu_time_scale %g): it hung\n",
                    file, line, what, took, bound, expected_s, tu_time_scale());
        _fail(file, line);
    }
}

static pid_t g_openai_server;

pid_t tu_python_server_start(const char *script, int *port) {
    int fds[2];
    if (pipe(fds) != 0) {
        return -1;
    }
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fds[1], 1);
        close(fds[0]);
        execlp("python3", "python3", script, (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    FILE *f = fdopen(fds[0], "r");
    *port = 0;
    if (f == NULL || fscanf(f, "%d", port) != 1 || *port <= 0) {
        fprintf(stderr, "the test server did not start (python3 %s)\n", script);
        if (f != NULL) {
            fclose(f);
        }
        tu_server_stop(pid);
        return -1;
    }
    fclose(f);
    return pid;
}

void tu_server_stop(pid_t pid) {
    if (pid > 0) {
        kill(pid, SIGTERM);
        waitpid(pid, NULL, 0);
    }
}

int tu_openai_server_start(char *base, size_t n) {
    char script[512];
    tu_data_path("../agent/openai_server.py", script, sizeof script);
    int port;
    g_openai_server = tu_python_server_start(script, &port);
    if (g_openai_server < 0) {
        return -1;
    }
    snprintf(base, n, "http://127.0.0.1:%d/v1", port);
    return 0;
}

void tu_openai_server_stop(void) {
    tu_server_stop(g_openai_server);
    g_openai_server = 0;
}

char *tu_http_post(unsigned port, const char *path, const char *body, int *status) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
    char head[512];
    int n = snprintf(head, sizeof head,
                     "POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                     "Content-Length: %zu\r\nConnection: close\r\n\r\n",
                     path, strlen(body));
    assert_int_equal(write(fd, head, (size_t)n), n);
    assert_int_equal(write(fd, body, strlen(body)), (ssize_t)strlen(body));
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    assert_non_null(buf);
    ssize_t got;
    while ((got = read(fd, buf + len, cap - 1 - len)) > 0) {
        len += (size_t)got;
        assert_true(len < cap - 1);
    }
    buf[len] = '\0';
    close(fd);
    *status = len > 9 ? atoi(buf + 9) : 0; /* "HTTP/1.1 200" */
    char *at = strstr(buf, "\r\n\r\n");
    char *out = strdup(at != NULL ? at + 4 : "");
    free(buf);
    return out;
}
