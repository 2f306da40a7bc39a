/* SPDX-License-Identifier: MIT */
/*
 * The PostgreSQL saver's search by owner (sst_thread_query.owner: the server's users,
 * docs/auth.md) against the test server (the CTest fixture "pg"): it returns exactly the
 * owner's threads, in order and paged, never fails a write on metadata the owner function
 * cannot read, and its statement is served by the index sst_checkpoint_threads_owner
 * (EXPLAIN of the very statement the saver runs, on 2 000 threads of 100 owners).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checkpoint/postgres_int.h"
#include "common/pg.h"
#include "superstep/json.h"
#include "test_util.h"
#include "values/build.h"

#define N_THREADS 2000
#define N_OWNERS  100

static char g_url[600];

static int setup(void **state) {
    (void)state;
    return tu_pg_group_setup("owner", g_url, sizeof g_url);
}

#define NEED_PG() TU_NEED_PG(g_url)

typedef struct seen {
    size_t n;
    char ids[32][40];
    char owners[32][40];
    int64_t created[32];
} seen;

static bool collect(const sst_thread_info *t, void *ud) {
    seen *s = ud;
    if (s->n < 32) {
        snprintf(s->ids[s->n], sizeof s->ids[0], "%s", t->thread_id);
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

static void put(sst_checkpointer *cp, const char *id, sst_value *meta) {
    sst_error err = {0};
    assert_non_null(meta);
    assert_int_equal(sst_checkpointer_thread_put(cp, id, meta, &err), SST_OK);
    sst_value_unref(meta);
}

static sst_value *meta_of(const char *json) {
    return sst_json_parse(json, NULL);
}

typedef struct explain_job {
    const char *sql;
    char plan[4096];
} explain_job;

static sst_code explain(sst__pg_conn *c, void *user, sst_error *err) {
    explain_job *j = user;
    char sql[4096];
    snprintf(sql, sizeof sql, "EXPLAIN %s", j->sql);
    sst__pg_params p;
    sst__pg_params_init(&p);
    sst__pg_i64(&p, 5);
    sst__pg_i64(&p, 0);
    sst__pg_text(&p, "user-007");
    PGresult *r = sst__pg_exec(c, "t_explain_owner", sql, &p, "explaining the owner search", err);
    if (r == NULL) {
        return sst__code(err);
    }
    size_t used = 0;
    for (int i = 0; i < PQntuples(r) && used < sizeof j->plan - 1; i++) {
        int n = snprintf(j->plan + used, sizeof j->plan - used, "%s\n", PQgetvalue(r, i, 0));
        used += n > 0 ? (size_t)n : 0;
    }
    PQclear(r);
    return SST_OK;
}

static void owner_search_is_indexed(void **state) {
    (void)state;
    NEED_PG();
    sst_error err = {0};
    sst_checkpointer *cp = sst_postgres_saver_open(g_url, NULL, &err);
    assert_non_null(cp);
    for (int i = 0; i < N_THREADS; i++) {
        char id[32], json[96];
        snprintf(id, sizeof id, "t-%04d", i);
        snprintf(json, sizeof json, "{\"owner\":\"user-%03d\",\"i\":%d}", i % N_OWNERS, i);
        put(cp, id, meta_of(json));
    }
    /* Metadata the owner function cannot read as an owner: written all the same. */
    put(cp, "odd-number", meta_of("{\"owner\":7}"));
    put(cp, "odd-none", meta_of("{\"topic\":\"x\"}"));
    sst_value *nul = sst_object_empty();
    nul = sst__set_take(nul, "owner", sst_string_new("user-007", &err), &err);
    nul = sst__set_take(nul, "text", sst_string_newn("a\0b", 3, &err), &err);
    put(cp, "odd-nul", nul); /* jsonb refuses \u0000: found by no owner search */

    /* The owner's threads only, newest first, paged by the statement. */
    sst_thread_query q = {
        .owner = "user-007", .order = SST_THREADS_BY_CREATED, .descending = true, .limit = 5};
    seen s = {0};
    assert_int_equal(sst_checkpointer_threads(cp, &q, collect, &s, &err), SST_OK);
    assert_int_equal(s.n, 5);
    for (size_t i = 0; i < s.n; i++) {
        assert_string_equal(s.owners[i], "user-007");
        assert_true(i == 0 || s.created[i] <= s.created[i - 1]);
    }
    q.limit = 0;
    s = (seen){0};
    assert_int_equal(sst_checkpointer_threads(cp, &q, collect, &s, &err), SST_OK);
    assert_int_equal(s.n, N_THREADS / N_OWNERS);
    q = (sst_thread_query){.owner = "7"};
    s = (seen){0};
    assert_int_equal(sst_checkpointer_threads(cp, &q, collect, &s, &err), SST_OK);
    assert_int_equal(s.n, 0); /* a number is not the owner "7" */
    q = (sst_thread_query){.owner = "user-042", .offset = 18, .limit = 5};
    s = (seen){0};
    assert_int_equal(sst_checkpointer_threads(cp, &q, collect, &s, &err), SST_OK);
    assert_int_equal(s.n, 2);
    assert_string_equal(s.owners[1], "user-042");

    /* The plan of the statement the saver ran: the owner index serves it. */
    assert_int_equal(tu_pg_exec(g_url, "ANALYZE sst_checkpoint_threads"), 0);
    sst_pg *pg = sst_pg_open(g_url, NULL, &err);
    assert_non_null(pg);
    explain_job j = {0};
    q = (sst_thread_query){
        .owner = "user-007", .order = SST_THREADS_BY_CREATED, .descending = true, .limit = 5};
    j.sql = sst__pgs_threads_sql(&q, NULL);
    assert_int_equal(sst__pg_read(pg, explain, &j, &err), SST_OK);
    if (strstr(j.plan, "sst_checkpoint_threads_owner") == NULL) {
        fail_msg("the owner search is not served by sst_checkpoint_threads_owner:\n%s", j.plan);
    }
    sst_pg_release(pg);
    sst_checkpointer_free(cp);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(owner_search_is_indexed),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
