/* SPDX-License-Identifier: MIT */
/*
 * The SQLite saver's search by owner (sst_thread_query.owner: the server's users,
 * docs/auth.md): it returns exactly the owner's threads, newest first, and the statement it
 * runs is served by the index threads_owner (EXPLAIN QUERY PLAN of the very statement the
 * saver ran, caught with sqlite3_trace_v2 on its connection, on 2 000 threads of 100
 * owners), as test_pg_owner_index checks for PostgreSQL. With the index dropped the plan no
 * longer names it: the check fails when the saver stops making the index.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checkpoint/sqlite_int.h"
#include "superstep/json.h"
#include "test_util.h"

#define N_THREADS 2000
#define N_OWNERS  100

typedef struct seen {
    size_t n;
    char owners[32][40];
    int64_t created[32];
} seen;

static bool collect(const sst_thread_info *t, void *ud) {
    seen *s = ud;
    if (s->n < 32) {
        sst_value *m = sst_json_parse(t->metadata.data, NULL);
        const sst_value *o = sst_object_get(m, "owner");
        snprintf(s->owners[s->n], sizeof s->owners[0], "%s",
                 sst_is_string(o) ? sst_string_cstr(o) : "(none)");
        sst_value_unref(m);
        s->created[s->n] = t->created_at;
    }
    s->n++;
    return true;
}

/* The text of the last SELECT the saver's connection ran that reads the owner. */
static char g_sql[2048];

static int trace(unsigned type, void *ctx, void *p, void *x) {
    (void)ctx;
    (void)p;
    const char *sql = x;
    if (type == SQLITE_TRACE_STMT && sql != NULL && strncmp(sql, "SELECT", 6) == 0 &&
        strstr(sql, "'$.owner'") != NULL) {
        snprintf(g_sql, sizeof g_sql, "%s", sql);
    }
    return 0;
}

/* EXPLAIN QUERY PLAN of @p sql on @p db, its details joined by newlines. */
static void plan_of(sqlite3 *db, const char *sql, const char *owner, char *out, size_t n) {
    char q[2200];
    snprintf(q, sizeof q, "EXPLAIN QUERY PLAN %s", sql);
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, q, -1, &st, NULL) != SQLITE_OK) {
        fail_msg("cannot explain the owner search: %s\n%s", sqlite3_errmsg(db), sql);
    }
    sqlite3_bind_int64(st, 1, 0);
    sqlite3_bind_text(st, 2, owner, -1, SQLITE_STATIC);
    size_t used = 0;
    out[0] = '\0';
    while (sqlite3_step(st) == SQLITE_ROW && used < n - 1) {
        int k = snprintf(out + used, n - used, "%s\n", (const char *)sqlite3_column_text(st, 3));
        used += k > 0 ? (size_t)k : 0;
    }
    sqlite3_finalize(st);
}

static void search(sst_checkpointer *cp, const char *owner, size_t limit, seen *s) {
    sst_error err = {0};
    sst_thread_query q = {
        .owner = owner, .order = SST_THREADS_BY_CREATED, .descending = true, .limit = limit};
    *s = (seen){0};
    assert_sst_ok(sst_checkpointer_threads(cp, &q, collect, s, &err), &err);
}

static void owner_search_is_indexed(void **state) {
    (void)state;
    char dir[128], path[200];
    assert_int_equal(tu_temp_dir("owner-index", dir, sizeof dir), 0);
    snprintf(path, sizeof path, "%s/threads.db", dir);
    sst_error err = {0};
    sst_checkpointer *cp = sst_sqlite_saver_open(path, NULL, &err);
    assert_non_null(cp);
    for (int i = 0; i < N_THREADS; i++) {
        char id[32], json[96];
        snprintf(id, sizeof id, "t-%04d", i);
        snprintf(json, sizeof json, "{\"owner\":\"user-%03d\",\"i\":%d}", i % N_OWNERS, i);
        sst_value *meta = tu_json(json);
        assert_sst_ok(sst_checkpointer_thread_put(cp, id, meta, &err), &err);
        sst_value_unref(meta);
    }
    sst_value *odd = tu_json("{\"owner\":7}"); /* not the owner "7" */
    assert_sst_ok(sst_checkpointer_thread_put(cp, "odd-number", odd, &err), &err);
    sst_value_unref(odd);

    /* The owner's threads only, newest first; the statement caught as it runs. */
    sqlite_saver *s = sst_checkpointer_self(cp);
    g_sql[0] = '\0';
    assert_int_equal(sqlite3_trace_v2(s->db, SQLITE_TRACE_STMT, trace, NULL), SQLITE_OK);
    seen got;
    search(cp, "user-007", 5, &got);
    assert_int_equal(sqlite3_trace_v2(s->db, 0, NULL, NULL), SQLITE_OK);
    assert_int_equal(got.n, 5);
    for (size_t i = 0; i < got.n; i++) {
        assert_string_equal(got.owners[i], "user-007");
        assert_true(i == 0 || got.created[i] <= got.created[i - 1]);
    }
    search(cp, "user-007", 0, &got);
    assert_int_equal(got.n, N_THREADS / N_OWNERS);
    search(cp, "7", 0, &got);
    assert_int_equal(got.n, 0);
    if (g_sql[0] == '\0') {
        fail_msg("no SELECT reading the owner was traced on the saver's connection");
    }

    /* Its plan: a search of threads through threads_owner, not a scan of every row. */
    char plan[4096];
    plan_of(s->db, g_sql, "user-007", plan, sizeof plan);
    if (strstr(plan, "USING INDEX threads_owner") == NULL) {
        fail_msg("the owner search is not served by threads_owner:\n%s\n%s", plan, g_sql);
    }

    /* The control: without the index the same statement's plan does not name it (so the
     * check above fails when the saver stops making the index), and the search, unindexed,
     * still finds the owner's threads. */
    assert_int_equal(sqlite3_exec(s->db, "DROP INDEX threads_owner", NULL, NULL, NULL), SQLITE_OK);
    plan_of(s->db, g_sql, "user-007", plan, sizeof plan);
    if (strstr(plan, "threads_owner") != NULL) {
        fail_msg("the plan names threads_owner after DROP INDEX:\n%s", plan);
    }
    search(cp, "user-007", 0, &got);
    assert_int_equal(got.n, N_THREADS / N_OWNERS);

    sst_checkpointer_free(cp);
    assert_int_equal(tu_rm_rf(dir), 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(owner_search_is_indexed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
