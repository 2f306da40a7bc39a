/* SPDX-License-Identifier: MIT */
/*
 * The PostgreSQL connection pool (include/superstep/postgres.h, src/common/pg.c)
 * against a real server (the CTest fixture "pg"): bad URLs and unreachable
 * servers, statements and results, unique violations, schema versions,
 * threads sharing a small pool, a statement whose first run failed, and a
 * transaction that survives the server
 * restarting under it (its own cluster, so the other tests are not disturbed).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/pg.h"
#include "test_util.h"

static char g_url[600];

static int setup(void **state) {
    (void)state;
    return tu_pg_group_setup("pool", g_url, sizeof g_url);
}

#define NEED_PG() TU_NEED_PG(g_url)

static void bad_urls(void **state) {
    (void)state;
    sst_error err = {0};
    assert_true(sst_pg_is_url("postgresql://x/y"));
    assert_true(sst_pg_is_url("postgres://x"));
    assert_false(sst_pg_is_url("app.db"));
    assert_false(sst_pg_is_url(NULL));
    assert_null(sst_pg_open("postgresql://127.0.0.1:1:2:3/x?bogus_option=1", NULL, &err));
    assert_int_equal(err.code, SST_EINVAL);
    assert_non_null(strstr(err.msg, "PostgreSQL URL"));
    sst_error_clear(&err);
    /* Nothing listens on port 1: refused at once, naming the server. */
    assert_null(sst_pg_open("postgresql://u@127.0.0.1:1/db", NULL, &err));
    assert_int_equal(err.code, SST_EUNAVAILABLE);
    assert_non_null(strstr(err.msg, "127.0.0.1:1"));
    sst_error_clear(&err);
    sst_pg_opts o;
    sst_pg_opts_init(&o);
    o.pool_size = 0;
    assert_null(sst_pg_open("postgresql://u@127.0.0.1:1/db", &o, &err));
    assert_int_equal(err.code, SST_EINVAL);
    assert_non_null(strstr(err.msg, "pool_size"));
    sst_error_clear(&err);
}

typedef struct rows_job {
    int64_t n;
    char *text;
} rows_job;

static sst_code write_rows(sst__pg_conn *c, void *user, sst_error *err) {
    (void)user;
    sst__pg_params p;
    sst__pg_params_init(&p);
    sst__pg_i64(&p, 7);
    sst__pg_text(&p, "seven");
    sst__pg_bytes(&p, "a\0b", 3);
    return sst__pg_run(c, "t_ins", "INSERT INTO t(k, v, b) VALUES($1, $2, $3)", &p, "inserting",
                       err);
}

static sst_code read_rows(sst__pg_conn *c, void *user, sst_error *err) {
    rows_job *j = user;
    PGresult *r = sst__pg_exec(c, "t_get",
                               "SELECT k, v, b, k > 3, NULL::text, '{\"a\":1}'::jsonb"
                               " FROM t",
                               NULL, "reading", err);
    if (r == NULL) {
        return sst__code(err);
    }
    assert_int_equal(PQntuples(r), 1);
    j->n = sst__pg_int(r, 0, 0);
    j->text = sst__pg_strdup(r, 0, 1);
    size_t len;
    const char *b = sst__pg_bytes_at(r, 0, 2, &len);
    assert_int_equal(len, 3);
    assert_memory_equal(b, "a\0b", 3);
    assert_int_equal(sst__pg_int(r, 0, 3), 1);
    assert_true(sst__pg_null(r, 0, 4));
    assert_null(sst__pg_bytes_at(r, 0, 4, &len));
    char *json = sst__pg_strdup(r, 0, 5);
    assert_string_equal(json, "{\"a\": 1}");
    sst_free(json);
    PQclear(r);
    return SST_OK;
}

static const char *const k_steps[] = {
    "CREATE TABLE t(k bigint PRIMARY KEY, v text NOT NULL)",
    "ALTER TABLE t ADD COLUMN b bytea",
};

static void statements_and_schema(void **state) {
    (void)state;
    NEED_PG();
    sst_error err = {0};
    sst_pg *pg = sst_pg_open(g_url, NULL, &err);
    assert_sst_ok(pg != NULL ? SST_OK : err.code, &err);
    assert_non_null(strstr(sst_pg_name(pg), "postgresql://postgres@"));
    assert_sst_ok(sst__pg_schema(pg, "test", k_steps, 1, &err), &err);
    assert_sst_ok(sst__pg_schema(pg, "test", k_steps, 2, &err), &err); /* migrates 1 -> 2 */
    assert_sst_ok(sst__pg_schema(pg, "test", k_steps, 2, &err), &err); /* nothing to do */
    /* An older build refuses the newer tables. */
    assert_int_equal(sst__pg_schema(pg, "test", k_steps, 1, &err), SST_ENOTSUP);
    assert_non_null(strstr(err.msg, "version 2, newer than this build's 1"));
    sst_error_clear(&err);

    assert_sst_ok(sst__pg_tx(pg, true, write_rows, NULL, &err), &err);
    /* The same key again: a unique violation is SST_ECONFLICT, not retried. */
    assert_int_equal(sst__pg_tx(pg, false, write_rows, NULL, &err), SST_ECONFLICT);
    assert_non_null(strstr(err.msg, "inserting"));
    sst_error_clear(&err);
    rows_job j = {0};
    assert_sst_ok(sst__pg_read(pg, read_rows, &j, &err), &err);
    assert_int_equal(j.n, 7);
    assert_string_equal(j.text, "seven");
    sst_free(j.text);
    sst_pg_release(pg);
}

typedef struct counter_job {
    sst_pg *pg;
    int failures;
} counter_job;

static sst_code bump(sst__pg_conn *c, void *user, sst_error *err) {
    (void)user;
    return sst__pg_run(c, "c_bump", "UPDATE counter SET n = n + 1", NULL, "bumping", err);
}

static void *bump_many(void *arg) {
    counter_job *j = arg;
    for (int i = 0; i < 50; i++) {
        sst_error err = {0};
        if (sst__pg_tx(j->pg, false, bump, NULL, &err) != SST_OK) {
            j->failures++;
        }
    }
    return NULL;
}

static sst_code read_counter(sst__pg_conn *c, void *user, sst_error *err) {
    PGresult *r = sst__pg_exec(c, "c_get", "SELECT n FROM counter", NULL, "reading", err);
    if (r == NULL) {
        return sst__code(err);
    }
    *(int64_t *)user = sst__pg_int(r, 0, 0);
    PQclear(r);
    return SST_OK;
}

/* Eight threads on a pool of two: every transaction gets a connection in turn. */
static void threads_share_a_small_pool(void **state) {
    (void)state;
    NEED_PG();
    assert_int_equal(tu_pg_exec(g_url, "CREATE TABLE counter(n bigint); INSERT INTO counter "
                                       "VALUES(0)"),
                     0);
    sst_pg_opts o;
    sst_pg_opts_init(&o);
    o.pool_size = 2;
    sst_error err = {0};
    sst_pg *pg = sst_pg_open(g_url, &o, &err);
    assert_non_null(pg);
    pthread_t th[8];
    counter_job jobs[8];
    for (int i = 0; i < 8; i++) {
        jobs[i] = (counter_job){sst_pg_ref(pg), 0};
        assert_int_equal(pthread_create(&th[i], NULL, bump_many, &jobs[i]), 0);
    }
    for (int i = 0; i < 8; i++) {
        pthread_join(th[i], NULL);
        assert_int_equal(jobs[i].failures, 0);
        sst_pg_release(pg);
    }
    int64_t n = 0;
    assert_sst_ok(sst__pg_read(pg, read_counter, &n, &err), &err);
    assert_int_equal(n, 400);
    sst_pg_release(pg);
}

/* ---- the server restarts under a pool (a cluster of this test's own) ---- */

static int cluster(const char *cmd, const char *dir) {
    char line[1024];
    char script[512];
    snprintf(line, sizeof line, "sh '%s' %s '%s' >/dev/null",
             tu_data_path("../pg/cluster.sh", script, sizeof script), cmd, dir);
    return system(line) == 0 ? 0 : -1;
}

typedef struct restart_job {
    const char *dir;
    int step;
} restart_job;

static sst_code bump_across_restart(sst__pg_conn *c, void *user, sst_error *err) {
    restart_job *j = user;
    if (j->step++ == 0) {
        /* The server goes away inside the first attempt's transaction. */
        if (sst__pg_run(c, "c_bump", "UPDATE counter SET n = n + 1", NULL, "bumping", err) !=
            SST_OK) {
            return sst__code(err);
        }
        assert_int_equal(cluster("restart", j->dir), 0);
    }
    return sst__pg_run(c, "c_bump", "UPDATE counter SET n = n + 1", NULL, "bumping", err);
}

typedef struct divide_job {
    int64_t by, quotient;
} divide_job;

static sst_code divide(sst__pg_conn *c, void *user, sst_error *err) {
    divide_job *j = user;
    sst__pg_params p;
    sst__pg_params_init(&p);
    sst__pg_i64(&p, j->by);
    PGresult *r = sst__pg_exec(c, "t_divide", "SELECT 10 / $1::bigint", &p, "dividing", err);
    if (r == NULL) {
        return sst__code(err);
    }
    j->quotient = sst__pg_int(r, 0, 0);
    PQclear(r);
    return SST_OK;
}

/* A statement prepared in the exchange that first runs it stays prepared when that run
 * fails: the session keeps it, so the connection must know (it once prepared it again,
 * and every later use failed with "prepared statement already exists"). */
static void failed_first_run_keeps_its_preparation(void **state) {
    (void)state;
    NEED_PG();
    sst_pg_opts o;
    sst_pg_opts_init(&o);
    o.pool_size = 1; /* one connection: the second read uses the first one's session */
    sst_error err = {0};
    sst_pg *pg = sst_pg_open(g_url, &o, &err);
    assert_non_null(pg);
    divide_job j = {.by = 0};
    assert_int_not_equal(sst__pg_read(pg, divide, &j, &err), SST_OK);
    assert_non_null(strstr(err.msg, "division by zero"));
    sst_error_clear(&err);
    j.by = 5;
    assert_sst_ok(sst__pg_read(pg, divide, &j, &err), &err);
    assert_int_equal(j.quotient, 2);
    /* In a transaction too, and after one rolled back. */
    j.by = 0;
    assert_int_not_equal(sst__pg_tx(pg, true, divide, &j, &err), SST_OK);
    sst_error_clear(&err);
    j.by = 2;
    assert_sst_ok(sst__pg_tx(pg, true, divide, &j, &err), &err);
    assert_int_equal(j.quotient, 5);
    sst_pg_release(pg);
}

static void survives_a_restart(void **state) {
    (void)state;
    NEED_PG();
    char dir[128], urlfile[160];
    assert_int_equal(tu_temp_dir("pgrestart", dir, sizeof dir), 0);
    assert_int_equal(cluster("start", dir), 0);
    snprintf(urlfile, sizeof urlfile, "%s/url", dir);
    char *url = tu_read_file(urlfile, NULL);
    assert_non_null(url);
    url[strcspn(url, "\n")] = '\0';
    assert_int_equal(tu_pg_exec(url, "CREATE TABLE counter(n bigint); INSERT INTO counter "
                                     "VALUES(0)"),
                     0);
    sst_error err = {0};
    sst_pg *pg = sst_pg_open(url, NULL, &err);
    assert_non_null(pg);
    restart_job j = {dir, 0};
    /* The first attempt is lost with its connection; the second one commits. */
    assert_sst_ok(sst__pg_tx(pg, true, bump_across_restart, &j, &err), &err);
    assert_int_equal(j.step, 2);
    int64_t n = 0;
    assert_sst_ok(sst__pg_read(pg, read_counter, &n, &err), &err);
    assert_int_equal(n, 1);

    /* A server that stays away: SST_EUNAVAILABLE once retry_ms has passed. */
    sst_pg_release(pg);
    sst_pg_opts o;
    sst_pg_opts_init(&o);
    o.retry_ms = 600;
    pg = sst_pg_open(url, &o, &err);
    assert_non_null(pg);
    assert_int_equal(cluster("stop", dir), 0);
    double t0 = tu_now_s();
    assert_int_equal(sst__pg_read(pg, read_counter, &n, &err), SST_EUNAVAILABLE);
    assert_true(tu_now_s() - t0 >= 0.4);
    assert_non_null(strstr(err.msg, "PostgreSQL"));
    sst_error_clear(&err);
    sst_pg_release(pg);
    free(url);
    tu_rm_rf(dir);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(bad_urls),
        cmocka_unit_test(statements_and_schema),
        cmocka_unit_test(threads_share_a_small_pool),
        cmocka_unit_test(failed_first_run_keeps_its_preparation),
        cmocka_unit_test(survives_a_restart),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
