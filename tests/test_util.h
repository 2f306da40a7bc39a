/* SPDX-License-Identifier: MIT */
/*
 * What cmocka lacks for our tests: status asserts that print code names,
 * JSON equality asserts that print both sides, golden-data paths and the
 * chaos allocator (fail the n-th allocation, count live blocks).
 */
#ifndef SUPERSTEP_TEST_UTIL_H
#define SUPERSTEP_TEST_UTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <cmocka.h>

#include "superstep/superstep.h"

/* Fails the test unless @p code is SST_OK, printing its name and @p err's message. */
#define assert_sst_ok(code, err) tu_assert_ok((code), (err), __FILE__, __LINE__)
void tu_assert_ok(sst_code code, const sst_error *err, const char *file, int line);

/* Parses @p json (must be valid) into a new value; fails the test otherwise. */
sst_value *tu_json(const char *json);

/* Fails unless @p v equals the value of @p json (sst_value_equal), printing both. */
#define assert_json_eq(v, json) tu_assert_json_eq((v), (json), __FILE__, __LINE__)
void tu_assert_json_eq(const sst_value *v, const char *json, const char *file, int line);

/* Fails unless the compact JSON text of @p v is exactly @p text. */
#define assert_json_text(v, flags, text)                                                           \
    tu_assert_json_text((v), (flags), (text), __FILE__, __LINE__)
void tu_assert_json_text(const sst_value *v, unsigned flags, const char *text, const char *file,
                         int line);

/* Path of a file under tests/data (the SST_TEST_DATA environment variable). */
const char *tu_data_path(const char *rel, char *buf, size_t n);

/*
 * Writes @p text to a new file under /tmp and puts its path in @p path (at
 * least 32 bytes); fails the test if it cannot. The caller removes the file.
 */
void tu_temp_file(const char *text, char *path, size_t n);

/* Reads a whole file into a malloc'd NUL-terminated buffer; NULL if absent. */
char *tu_read_file(const char *path, size_t *len);

/* Deterministic xorshift64 PRNG for tests (rand() is banned); seeded per stream. */
typedef struct tu_rng {
    uint64_t state;
} tu_rng;
uint64_t tu_rand(tu_rng *r);

/* True when @p v is a string holding a lowercase RFC 9562 version-4 UUID. */
int tu_is_uuid4(const sst_value *v);

/*
 * A node body shared by the interrupt tests: asks "age?" then "name?" with
 * sst_node_interrupt and writes "<age>/<name>" to the field "answer".
 * Returns SST_EINTERRUPT while an answer is missing.
 */
sst_code tu_ask_two_questions(sst_node_ctx *ctx);

/*
 * A new empty directory /tmp/sst-PREFIX-XXXXXX in @p buf (mkdtemp); returns
 * 0, or -1 when it cannot be made (for cmocka group setups).
 */
int tu_temp_dir(const char *prefix, char *buf, size_t n);

/* Monotonic seconds. */
double tu_now_s(void);

/*
 * The factor a test's time bounds are multiplied by: SST_TEST_TIME_SCALE from
 * the environment (a positive number, default 1), times 10 in a sanitizer
 * build. A test never asserts on speed (that is a benchmark's goal, bench/);
 * it bounds time only where the point is that a call does not hang.
 */
double tu_time_scale(void);

/*
 * Fails the test unless @p took (seconds) is below 10 times @p expected_s
 * times tu_time_scale(): a call that must return rather than hang (a timeout
 * that fires, a dead peer noticed), for which @p expected_s is what it takes
 * on an idle machine, generously.
 */
#define assert_no_hang(took, expected_s)                                                           \
    tu_assert_no_hang((took), (expected_s), #took, __FILE__, __LINE__)
void tu_assert_no_hang(double took, double expected_s, const char *what, const char *file,
                       int line);

/*
 * Starts tests/agent/openai_server.py (the fake OpenAI-compatible server) on
 * a free port of 127.0.0.1 and writes its base URL ("http://127.0.0.1:PORT/v1")
 * to @p base; returns 0, or -1 when it did not start (for cmocka group
 * setups). tu_openai_server_stop ends it. One server per process.
 */
int tu_openai_server_start(char *base, size_t n);
/*
 * Starts the Python test server @p script (it prints its port first, then serves until
 * killed): its pid, the port in *port; -1 when it did not start (said on stderr).
 */
pid_t tu_python_server_start(const char *script, int *port);
/* Stops a server tu_python_server_start started (SIGTERM, then waits); pid <= 0: nothing. */
void tu_server_stop(pid_t pid);
void tu_openai_server_stop(void);
/*
 * The test PostgreSQL server (tests/pg/cluster.sh, CTest fixture "pg"): its URL
 * from SST_PGTEST_URL, or from the file SST_PGTEST_URL_FILE names. NULL when
 * there is none (the PostgreSQL cases skip with a message), except that with
 * SST_REQUIRE_POSTGRES=1 that fails the test instead.
 */
const char *tu_pg_url(void);
/*
 * A fresh schema on the test server for one case, named t_PREFIX_PID_N: its URL
 * (the server's, with options=-csearch_path%3DSCHEMA) in @p buf. Returns 0;
 * -1 when there is no test server (see tu_pg_url) or the schema cannot be made.
 */
int tu_pg_fresh(const char *prefix, char *buf, size_t n);
/* Runs SQL text on the database of @p url (a tu_pg_fresh URL: in its schema); 0 or -1. */
int tu_pg_exec(const char *url, const char *sql);
/*
 * A group setup for a suite of PostgreSQL cases: @p url gets a fresh schema's URL
 * (tu_pg_fresh), or "" when there is no test server (said once; the cases then skip
 * through TU_NEED_PG). Returns what tu_pg_fresh returns, or 0 without a server.
 */
int tu_pg_group_setup(const char *prefix, char *url, size_t n);
/* A connection pool of @p size on @p url (a tu_pg_fresh URL); fails the case when it
 * cannot be opened, with PostgreSQL's message. */
sst_pg *tu_pg_pool(const char *url, int size);
/*
 * One invoke of @p cg on a handle of @p thread over @p cp from {"value": V} with
 * durability @p d. Returns SST_OK when the run completed, else its code (with *err);
 * *out, when not NULL, gets the final state's "value".
 */
sst_code tu_invoke_value(const sst_compiled_graph *cg, sst_checkpointer *cp, const char *thread,
                         int64_t v, sst_durability d, int64_t *out, sst_error *err);
#define TU_NEED_PG(url)                                                                            \
    do {                                                                                           \
        if ((url)[0] == '\0') {                                                                    \
            skip();                                                                                \
        }                                                                                          \
    } while (0)
/* Removes @p dir and everything in it; returns 0, or -1 on failure. */
int tu_rm_rf(const char *dir);

/*
 * POSTs the JSON @p body to @p path on 127.0.0.1:@p port over a plain socket (HTTP/1.1,
 * Connection: close; no libcurl): the reply's body (new, free()), its status in *status.
 * Fails the test when the server cannot be reached or the reply is over 64 KiB.
 */
char *tu_http_post(unsigned port, const char *path, const char *body, int *status);

/*
 * @p method @p path (with the JSON @p body, or NULL) to the server on 127.0.0.1:@p port,
 * through libcurl (test_util_http.c: link sst_test_util_http, and call
 * curl_global_init first): the reply's JSON, or NULL when it has no body; *status gets
 * the HTTP status. Fails the test when the request fails or the body is not JSON.
 */
sst_value *tu_http_json(unsigned port, const char *method, const char *path, const char *body,
                        long *status);

/*
 * The chaos allocator. tu_chaos_install() must run first in main(). While
 * armed with tu_chaos_fail_at(n), the n-th allocation from then on fails
 * (n = 1 is the next one). tu_chaos_live() counts live library blocks.
 */
void tu_chaos_install(void);
void tu_chaos_fail_at(long n);
void tu_chaos_off(void);
long tu_chaos_live(void);
/* True when the armed failure has happened. */
int tu_chaos_fired(void);

#endif /* SUPERSTEP_TEST_UTIL_H */
