/* SPDX-License-Identifier: MIT */
/*
 * The node cache contract (include/superstep/cache.h): one suite run against
 * every backend of k_backends. Cases:
 *   1 a miss                2 round trip (nested arrays, unicode, escapes)
 *   3 replace               4 TTL expiry, and a set after it
 *   5 ttl 0 never expires   6 clear one namespace, clear all
 *   7 namespaces apart      8 many entries (the memory table grows)
 *   9 argument checks      10 references (ref then free; the value outlives the caller's)
 *  11 four threads at once (TSan)    12 out of memory at every allocation
 * SQLite only: persistence across close/reopen and a second connection, a file
 * that is not a database, another application's database, an unopenable path,
 * damaged rows (misses), and a file shared with the SQLite checkpointer
 * (either opened first).
 * Once, against fake implementations: ops versions (0 and 2 refused), a
 * missing op, destroy at the last reference, a failing backend's out.
 */
#define _GNU_SOURCE /* mkdtemp, strdup */
#include <math.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "superstep/superstep.h"
#include "test_util.h"

/* ---- backends ---- */

typedef struct backend {
    const char *name;
    /* Opens the cache kept under @p dir (empty the first time). */
    sst_cache *(*open)(const char *dir, sst_error *err);
} backend;

static sst_cache *open_memory(const char *dir, sst_error *err) {
    (void)dir;
    return sst_memory_cache_new(err);
}

static sst_cache *open_sqlite(const char *dir, sst_error *err) {
    char path[128];
    snprintf(path, sizeof path, "%s/cache.db", dir);
    return sst_sqlite_cache_open(path, err);
}

static const backend k_backends[] = {
    {"memory", open_memory},
    {"sqlite", open_sqlite},
};

/* ---- fixture: a fresh cache per test ---- */

typedef struct fixture {
    const backend *be;
    char dir[64];
    sst_cache *c;
    sst_error err; /* the error of the last call made through E */
} fixture;

#define E                 (&fx->err)
#define OK(call)          tu_assert_ok((call), E, __FILE__, __LINE__)
#define FAILS(call, code) code_at((call), (code), E, __FILE__, __LINE__)
#define MSG_HAS(s)        msg_has_at(E, (s), __FILE__, __LINE__)

static void code_at(sst_code got, sst_code want, const sst_error *err, const char *file, int line) {
    if (got != want) {
        print_error("%s:%d: expected %s, got %s: %s\n", file, line, sst_code_name(want),
                    sst_code_name(got), got != SST_OK ? err->msg : "");
        _fail(file, line);
    }
}

static void msg_has_at(const sst_error *err, const char *s, const char *file, int line) {
    if (strstr(err->msg, s) == NULL) {
        print_error("%s:%d: message \"%s\" does not name '%s'\n", file, line, err->msg, s);
        _fail(file, line);
    }
}

static int fx_setup(void **state) {
    fixture *fx = calloc(1, sizeof *fx);
    fx->be = *state;
    if (tu_temp_dir("cache", fx->dir, sizeof fx->dir) != 0 ||
        (fx->c = fx->be->open(fx->dir, E)) == NULL) {
        print_error("%s: cannot open a cache in %s: %s\n", fx->be->name, fx->dir, fx->err.msg);
        free(fx);
        return -1;
    }
    *state = fx;
    return 0;
}

static int fx_teardown(void **state) {
    fixture *fx = *state;
    sst_cache_free(fx->c);
    int rc = tu_rm_rf(fx->dir);
    free(fx);
    return rc;
}

static void sleep_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

/* Stores the value of @p json under (ns, key). */
static void put_json(fixture *fx, const char *ns, const char *key, const char *json, double ttl_s) {
    sst_value *v = tu_json(json);
    OK(sst_cache_set(fx->c, ns, key, v, ttl_s, E));
    sst_value_unref(v);
}

/* Fails unless (ns, key) holds the value of @p json (NULL: a miss). */
#define HAS(ns, key, json) has_at(fx, (ns), (key), (json), __FILE__, __LINE__)
static void has_at(fixture *fx, const char *ns, const char *key, const char *json, const char *file,
                   int line) {
    sst_value *got = (sst_value *)1; /* get must overwrite it */
    tu_assert_ok(sst_cache_get(fx->c, ns, key, &got, E), E, file, line);
    if (json == NULL && got != NULL) {
        char *text = sst_json_write(got, SST_JSON_COMPACT, NULL, NULL);
        print_error("%s:%d: (%s, %s): expected a miss, got %s\n", file, line, ns, key, text);
        sst_free(text);
        sst_value_unref(got);
        _fail(file, line);
    } else if (json != NULL && got == NULL) {
        print_error("%s:%d: (%s, %s): expected %s, got a miss\n", file, line, ns, key, json);
        _fail(file, line);
    } else if (json != NULL) {
        tu_assert_json_eq(got, json, file, line);
        sst_value_unref(got);
    }
}

/* ---- the contract, against every backend ---- */

static void case_miss(void **state) {
    fixture *fx = *state;
    HAS("writes|g|node", "no-such-key", NULL);
    HAS("", "", NULL);
}

static const char k_nested[] =
    "{\"messages\":[{\"role\":\"user\",\"content\":\"h\\u00e9llo w\\u00f6rld \\u65e5\\u672c\\u8a9e"
    " \\ud83d\\ude00\"},[1,[2,[3,[]]]],{}],"
    "\"escapes\":\"quote \\\" backslash \\\\ tab \\t newline \\n nul \\u0000 \\u2028\","
    "\"numbers\":[0,-1,9007199254740993,-9223372036854775808,0.5,-2.5e-300,1e300],"
    "\"flags\":[true,false,null],\"\\u00fcnicode key \\u2603\":{\"deep\":[[[[\"x\"]]]]}}";

static void case_round_trip(void **state) {
    fixture *fx = *state;
    put_json(fx, "writes|g|node", "k1", k_nested, 0);
    HAS("writes|g|node", "k1", k_nested);
    HAS("writes|g|node", "k1", k_nested); /* a hit does not consume the entry */
    /* Doubles stay doubles and integers stay integers. */
    sst_value *got = NULL;
    put_json(fx, "ns", "nums", "[1, 1.0, 2.5]", 0);
    OK(sst_cache_get(fx->c, "ns", "nums", &got, E));
    assert_non_null(got);
    assert_true(sst_is_int(sst_array_get(got, 0)));
    assert_false(sst_is_int(sst_array_get(got, 1)));
    sst_value_unref(got);
    /* Scalars as whole values, and unicode in the namespace and key. */
    put_json(fx, "ns \xe2\x98\x83", "cl\xc3\xa9", "\"just a string\"", 0);
    HAS("ns \xe2\x98\x83", "cl\xc3\xa9", "\"just a string\"");
    put_json(fx, "ns", "null", "null", 0);
    HAS("ns", "null", "null");
}

static void case_replace(void **state) {
    fixture *fx = *state;
    put_json(fx, "ns", "k", "{\"v\":1}", 0);
    put_json(fx, "ns", "k", "[\"second\"]", 0);
    HAS("ns", "k", "[\"second\"]");
    /* Replacing an entry that had a TTL with one that has none drops the TTL. */
    put_json(fx, "ns", "t", "1", 0.05);
    put_json(fx, "ns", "t", "2", 0);
    sleep_ms(120);
    HAS("ns", "t", "2");
    /* And the other way round. */
    put_json(fx, "ns", "k", "3", 0.05);
    sleep_ms(120);
    HAS("ns", "k", NULL);
}

static void case_ttl_expiry(void **state) {
    fixture *fx = *state;
    put_json(fx, "ns", "short", "{\"v\":\"soon gone\"}", 0.05);
    put_json(fx, "ns", "long", "{\"v\":\"stays\"}", 3600);
    HAS("ns", "short", "{\"v\":\"soon gone\"}");
    sleep_ms(150);
    HAS("ns", "short", NULL);
    HAS("ns", "short", NULL); /* dropped, still a miss */
    HAS("ns", "long", "{\"v\":\"stays\"}");
    put_json(fx, "ns", "short", "\"again\"", 0.05); /* a set after expiry stores it anew */
    HAS("ns", "short", "\"again\"");
}

static void case_ttl_zero(void **state) {
    fixture *fx = *state;
    put_json(fx, "ns", "forever", "[\"kept\"]", 0);
    sleep_ms(120);
    HAS("ns", "forever", "[\"kept\"]");
}

static void case_clear(void **state) {
    fixture *fx = *state;
    put_json(fx, "writes|g|a", "k1", "1", 0);
    put_json(fx, "writes|g|a", "k2", "2", 0);
    put_json(fx, "writes|g|b", "k1", "3", 0);
    put_json(fx, "writes|g", "k1", "4", 0); /* a prefix of the others: not cleared with them */
    OK(sst_cache_clear(fx->c, "writes|g|a", E));
    HAS("writes|g|a", "k1", NULL);
    HAS("writes|g|a", "k2", NULL);
    HAS("writes|g|b", "k1", "3");
    HAS("writes|g", "k1", "4");
    OK(sst_cache_clear(fx->c, "no such namespace", E));
    HAS("writes|g|b", "k1", "3");
    OK(sst_cache_clear(fx->c, NULL, E));
    HAS("writes|g|b", "k1", NULL);
    HAS("writes|g", "k1", NULL);
    put_json(fx, "writes|g|a", "k1", "5", 0); /* usable after a clear */
    HAS("writes|g|a", "k1", "5");
}

static void case_namespaces_apart(void **state) {
    fixture *fx = *state;
    put_json(fx, "a", "b|c", "1", 0);
    put_json(fx, "a|b", "c", "2", 0);
    put_json(fx, "ab", "c", "3", 0);
    put_json(fx, "", "", "4", 0);
    HAS("a", "b|c", "1");
    HAS("a|b", "c", "2");
    HAS("ab", "c", "3");
    HAS("", "", "4");
    HAS("a", "c", NULL);
    HAS("b|c", "a", NULL);
}

static void case_many(void **state) {
    fixture *fx = *state;
    enum { N = 600 };
    char ns[32], key[32], json[32];
    for (int i = 0; i < N; i++) {
        snprintf(ns, sizeof ns, "ns%d", i % 7);
        snprintf(key, sizeof key, "key-%d", i);
        snprintf(json, sizeof json, "[%d]", i);
        put_json(fx, ns, key, json, i % 3 == 0 ? 0.01 : 0); /* some expire, to be swept */
    }
    sleep_ms(40);
    for (int i = 0; i < N; i++) {
        snprintf(ns, sizeof ns, "ns%d", i % 7);
        snprintf(key, sizeof key, "key-%d", i);
        snprintf(json, sizeof json, "[%d]", i);
        HAS(ns, key, i % 3 == 0 ? NULL : json);
    }
    OK(sst_cache_clear(fx->c, "ns3", E));
    for (int i = 0; i < N; i++) {
        snprintf(ns, sizeof ns, "ns%d", i % 7);
        snprintf(key, sizeof key, "key-%d", i);
        snprintf(json, sizeof json, "[%d]", i);
        HAS(ns, key, i % 3 == 0 || i % 7 == 3 ? NULL : json);
    }
}

static void case_arguments(void **state) {
    fixture *fx = *state;
    sst_value *v = tu_json("{\"a\":1}");
    sst_value *out = v;
    FAILS(sst_cache_get(NULL, "ns", "k", &out, E), SST_EINVAL);
    MSG_HAS("NULL cache");
    assert_null(out); /* cleared even when the arguments are refused */
    FAILS(sst_cache_get(fx->c, NULL, "k", &out, E), SST_EINVAL);
    MSG_HAS("namespace");
    FAILS(sst_cache_get(fx->c, "ns", NULL, &out, E), SST_EINVAL);
    MSG_HAS("key");
    FAILS(sst_cache_get(fx->c, "ns", "k", NULL, E), SST_EINVAL);
    FAILS(sst_cache_set(NULL, "ns", "k", v, 0, E), SST_EINVAL);
    FAILS(sst_cache_set(fx->c, NULL, "k", v, 0, E), SST_EINVAL);
    FAILS(sst_cache_set(fx->c, "ns", NULL, v, 0, E), SST_EINVAL);
    FAILS(sst_cache_set(fx->c, "ns", "k", NULL, 0, E), SST_EINVAL);
    MSG_HAS("NULL value");
    FAILS(sst_cache_set(fx->c, "ns", "k", v, -1, E), SST_EINVAL);
    MSG_HAS("ttl");
    FAILS(sst_cache_set(fx->c, "ns", "k", v, NAN, E), SST_EINVAL);
    FAILS(sst_cache_set(fx->c, "ns", "k", v, INFINITY, E), SST_EINVAL);
    FAILS(sst_cache_clear(NULL, "ns", E), SST_EINVAL);
    HAS("ns", "k", NULL); /* nothing refused was stored */
    /* A NULL err is "not interested". */
    assert_int_equal(sst_cache_set(fx->c, NULL, "k", v, 0, NULL), SST_EINVAL);
    assert_int_equal(sst_cache_get(fx->c, "ns", "k", &out, NULL), SST_OK);
    assert_null(out);
    sst_cache_free(NULL);
    assert_null(sst_cache_ref(NULL));
    sst_value_unref(v);
}

static void case_references(void **state) {
    fixture *fx = *state;
    /* The cache keeps what it needs: the caller's value may go at once. */
    sst_value *v = tu_json("{\"big\":[1,2,3],\"s\":\"text\"}");
    OK(sst_cache_set(fx->c, "ns", "k", v, 0, E));
    sst_value_unref(v);
    HAS("ns", "k", "{\"big\":[1,2,3],\"s\":\"text\"}");
    /* A hit is the caller's to keep, whatever happens to the entry later. */
    sst_value *got = NULL;
    OK(sst_cache_get(fx->c, "ns", "k", &got, E));
    OK(sst_cache_clear(fx->c, NULL, E));
    assert_json_eq(got, "{\"big\":[1,2,3],\"s\":\"text\"}");
    sst_value_unref(got);
    /* free after ref keeps it alive. */
    put_json(fx, "ns", "k", "\"alive\"", 0);
    assert_ptr_equal(sst_cache_ref(fx->c), fx->c);
    sst_cache_free(fx->c);
    HAS("ns", "k", "\"alive\"");
    put_json(fx, "ns", "k2", "\"still\"", 0);
    HAS("ns", "k2", "\"still\""); /* the teardown drops the last reference */
}

/* ---- four threads at once ---- */

enum { THREADS = 4, ROUNDS = 300, SHARED_KEYS = 8 };

typedef struct worker {
    sst_cache *c;
    int id;
    int bad; /* OUT: calls that failed or returned a value they should not have */
} worker;

/* Each thread writes {"t":id,"n":i} to shared keys and [id,i] to its own, reading both back. */
static void *cache_worker(void *arg) {
    worker *w = arg;
    char own[32], shared[32], json[64];
    for (int i = 0; i < ROUNDS; i++) {
        snprintf(shared, sizeof shared, "shared-%d", i % SHARED_KEYS);
        snprintf(own, sizeof own, "own-%d-%d", w->id, i % 16);
        snprintf(json, sizeof json, "{\"t\":%d,\"n\":%d}", w->id, i);
        sst_value *v = sst_json_parse(json, NULL);
        sst_value *got = NULL;
        sst_error err;
        w->bad += v == NULL || sst_cache_set(w->c, "threads", shared, v, 0, &err) != SST_OK;
        w->bad += sst_cache_set(w->c, "own", own, v, i % 5 == 0 ? 0.001 : 0, &err) != SST_OK;
        w->bad += sst_cache_get(w->c, "threads", shared, &got, &err) != SST_OK;
        /* Another thread may have replaced it, but never with anything but an object of "t". */
        w->bad += got != NULL && sst_object_get(got, "t") == NULL;
        sst_value_unref(got);
        got = NULL;
        w->bad += sst_cache_get(w->c, "own", own, &got, &err) != SST_OK;
        w->bad += got != NULL && i % 5 != 0 && !sst_value_equal(got, v); /* only we write it */
        sst_value_unref(got);
        sst_value_unref(v);
        if (w->id == 0 && i % 50 == 49) {
            w->bad += sst_cache_clear(w->c, "threads", &err) != SST_OK;
        }
    }
    return NULL;
}

static void case_threads(void **state) {
    fixture *fx = *state;
    pthread_t tids[THREADS];
    worker ws[THREADS];
    for (int i = 0; i < THREADS; i++) {
        ws[i] = (worker){.c = sst_cache_ref(fx->c), .id = i};
        assert_int_equal(pthread_create(&tids[i], NULL, cache_worker, &ws[i]), 0);
    }
    for (int i = 0; i < THREADS; i++) {
        assert_int_equal(pthread_join(tids[i], NULL), 0);
        assert_int_equal(ws[i].bad, 0);
        sst_cache_free(ws[i].c);
    }
    /* Every thread's last own write of a slot with no TTL is there. */
    char key[32], json[64];
    for (int t = 0; t < THREADS; t++) {
        int last = (ROUNDS - 2) / 16 * 16 + 1; /* the last round that wrote slot 1 */
        snprintf(key, sizeof key, "own-%d-%d", t, last % 16);
        snprintf(json, sizeof json, "{\"t\":%d,\"n\":%d}", t, last);
        HAS("own", key, last % 5 != 0 ? json : NULL);
    }
}

/* ---- out of memory at every allocation ---- */

/* Opens, stores, reads and clears; every step may fail with SST_ENOMEM only. */
static void chaos_round(const backend *be, const char *dir, bool *all_ok) {
    sst_error err;
    *all_ok = false;
    sst_cache *c = be->open(dir, &err);
    if (c == NULL) {
        assert_int_equal(err.code, SST_ENOMEM);
        return;
    }
    sst_value *v = sst_json_parse("{\"a\":[1,\"two\",{\"three\":3.5}]}", &err);
    sst_code rc = v != NULL ? sst_cache_set(c, "ns", "k", v, 0, &err) : SST_ENOMEM;
    sst_value *got = NULL;
    rc = rc == SST_OK ? sst_cache_get(c, "ns", "k", &got, &err) : rc;
    /* The SQLite backend reads what it cannot parse (here: for want of memory) as a miss. */
    bool hit = got != NULL && sst_value_equal(got, v);
    rc = rc == SST_OK ? sst_cache_clear(c, NULL, &err) : rc;
    if (rc != SST_OK) {
        assert_int_equal(rc, SST_ENOMEM);
    }
    *all_ok = rc == SST_OK && hit;
    sst_value_unref(got);
    sst_value_unref(v);
    sst_cache_free(c);
}

static void case_chaos(void **state) {
    fixture *fx = *state;
    long baseline = tu_chaos_live();
    for (long n = 1; n < 1000; n++) {
        bool all_ok;
        tu_chaos_fail_at(n);
        chaos_round(fx->be, fx->dir, &all_ok);
        int fired = tu_chaos_fired();
        tu_chaos_off();
        if (tu_chaos_live() != baseline) {
            fail_msg("allocation %ld failed and %ld blocks leaked", n, tu_chaos_live() - baseline);
        }
        if (!fired) {
            assert_true(all_ok);
            return;
        }
    }
    fail_msg("more than 1000 allocations for one round");
}

#define BACKEND_CASES(X)                                                                           \
    X(case_miss)                                                                                   \
    X(case_round_trip)                                                                             \
    X(case_replace)                                                                                \
    X(case_ttl_expiry)                                                                             \
    X(case_ttl_zero)                                                                               \
    X(case_clear)                                                                                  \
    X(case_namespaces_apart)                                                                       \
    X(case_many)                                                                                   \
    X(case_arguments)                                                                              \
    X(case_references)                                                                             \
    X(case_threads)                                                                                \
    X(case_chaos)

/* ---- SQLite only ---- */

static void sq_path(const fixture *fx, char *path, size_t n) {
    snprintf(path, n, "%s/cache.db", fx->dir);
}

/* Runs @p sql on the file with a connection of its own. */
static void sq_exec(const char *path, const char *sql) {
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    sqlite3_busy_timeout(db, 5000);
    char *msg = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        fail_msg("%s: %s", sql, msg);
    }
    sqlite3_close(db);
}

static void sq_persistence(void **state) {
    fixture *fx = *state;
    put_json(fx, "ns", "kept", k_nested, 0);
    put_json(fx, "ns", "brief", "1", 0.05);
    /* A second connection (as another process would have) sees it at once. */
    sst_cache *other = open_sqlite(fx->dir, E);
    assert_non_null(other);
    sst_value *got = NULL;
    OK(sst_cache_get(other, "ns", "kept", &got, E));
    assert_non_null(got);
    assert_json_eq(got, k_nested);
    sst_value_unref(got);
    sst_value *v = tu_json("\"from the other\"");
    OK(sst_cache_set(other, "ns", "other", v, 0, E));
    sst_value_unref(v);
    sst_cache_free(other);
    /* Closed and opened again: the entries and their deadlines are in the file. */
    sst_cache_free(fx->c);
    fx->c = open_sqlite(fx->dir, E);
    assert_non_null(fx->c);
    HAS("ns", "kept", k_nested);
    HAS("ns", "other", "\"from the other\"");
    sleep_ms(120);
    HAS("ns", "brief", NULL);
}

static void sq_not_a_database(void **state) {
    fixture *fx = *state;
    char path[128];
    snprintf(path, sizeof path, "%s/notes.txt", fx->dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    for (int i = 0; i < 64; i++) {
        fputs("this is a text file, not a database at all\n", f);
    }
    fclose(f);
    assert_null(sst_sqlite_cache_open(path, E));
    assert_int_equal(fx->err.code, SST_EIO);
    MSG_HAS(path);
    /* Left as it was. */
    size_t len = 0;
    char *text = tu_read_file(path, &len);
    assert_non_null(text);
    assert_int_equal(len, 64 * strlen("this is a text file, not a database at all\n"));
    free(text);
}

static void sq_other_files(void **state) {
    fixture *fx = *state;
    /* Another application's database is not ours to write to. */
    char path[128];
    snprintf(path, sizeof path, "%s/theirs.db", fx->dir);
    sq_exec(path, "CREATE TABLE theirs(x); PRAGMA application_id=1234;");
    assert_null(sst_sqlite_cache_open(path, E));
    assert_int_equal(fx->err.code, SST_EIO);
    MSG_HAS(path);
    MSG_HAS("not a superstep database");
    /* A path that cannot be opened. */
    snprintf(path, sizeof path, "%s/no/such/dir/cache.db", fx->dir);
    assert_null(sst_sqlite_cache_open(path, E));
    assert_int_equal(fx->err.code, SST_EIO);
    MSG_HAS(path);
    assert_null(sst_sqlite_cache_open(NULL, E));
    assert_int_equal(fx->err.code, SST_EINVAL);
    assert_null(sst_sqlite_cache_open("", E));
    assert_int_equal(fx->err.code, SST_EINVAL);
}

static void sq_damaged_rows(void **state) {
    fixture *fx = *state;
    char path[128];
    sq_path(fx, path, sizeof path);
    put_json(fx, "ns", "good", "[1,2]", 0);
    sq_exec(path, "INSERT INTO sst_cache(ns, key, value, expires) VALUES"
                  " ('ns', 'truncated', '{\"a\":[1,2', NULL),"
                  " ('ns', 'not json', 'hello', NULL),"
                  " ('ns', 'bad utf8', CAST(X'22FF22' AS TEXT), NULL),"
                  " ('ns', 'a blob', X'00FF00', NULL),"
                  " ('ns', 'null value', NULL, NULL),"
                  " ('ns', 'integer', 42, NULL),"
                  " ('ns', 'odd expiry', '[3]', 'tomorrow'),"
                  " ('ns', 'too deep', '" /* 5000 levels: over the reader's limit */
                  "' || replace(hex(zeroblob(5000)), '00', '[') || '"
                  "' || replace(hex(zeroblob(5000)), '00', ']') || '', NULL)");
    HAS("ns", "truncated", NULL);
    HAS("ns", "not json", NULL);
    HAS("ns", "bad utf8", NULL);
    HAS("ns", "a blob", NULL);
    HAS("ns", "null value", NULL);
    HAS("ns", "integer", "42"); /* SQLite hands an integer back as its text: valid JSON */
    HAS("ns", "odd expiry", NULL);
    HAS("ns", "too deep", NULL);
    HAS("ns", "good", "[1,2]");
    put_json(fx, "ns", "truncated", "{\"a\":[1,2]}", 0); /* a set repairs the entry */
    HAS("ns", "truncated", "{\"a\":[1,2]}");
}

/* A checkpoint with body {"n":n} (JSON text: the SQLite saver keeps bytes). */
static void put_checkpoint(sst_checkpointer *cp, const char *id, const char *parent,
                           sst_error *err) {
    static const char body[] = "{\"n\":1}";
    sst_checkpoint rec = {.format = SST_CHECKPOINT_FORMAT,
                          .thread_id = "t1",
                          .ns = "",
                          .id = id,
                          .parent_id = parent,
                          .source = "loop",
                          .created_at = 1700000000000,
                          .body = {.data = body, .len = strlen(body)},
                          .metadata = {.data = "{}", .len = 2}};
    tu_assert_ok(sst_checkpointer_put(cp, &rec, false, err), err, __FILE__, __LINE__);
}

static void check_latest(sst_checkpointer *cp, const char *id, sst_error *err) {
    sst_checkpoint *rec = sst_checkpointer_get(cp, "t1", "", NULL, err);
    if (rec == NULL) {
        fail_msg("checkpointer get: %s", err->msg);
    }
    assert_string_equal(rec->id, id);
    sst_checkpoint_free(rec);
}

static void sq_shared_with_checkpointer(void **state) {
    fixture *fx = *state;
    char path[128];
    /* The checkpointer first: the cache adds its table beside the checkpoints. */
    snprintf(path, sizeof path, "%s/saver-first.db", fx->dir);
    sst_checkpointer *cp = sst_sqlite_saver_open(path, NULL, E);
    assert_non_null(cp);
    put_checkpoint(cp, "c1", NULL, E);
    sst_cache *c = sst_sqlite_cache_open(path, E);
    if (c == NULL) {
        fail_msg("cache on the checkpointer's file: %s", fx->err.msg);
    }
    sst_value *v = tu_json("{\"cached\":true}");
    OK(sst_cache_set(c, "writes|g|n", "k", v, 0, E));
    put_checkpoint(cp, "c2", "c1", E); /* both connections write the file in turns */
    sst_value *got = NULL;
    OK(sst_cache_get(c, "writes|g|n", "k", &got, E));
    assert_non_null(got);
    assert_true(sst_value_equal(got, v));
    sst_value_unref(got);
    check_latest(cp, "c2", E);
    sst_checkpointer_free(cp);
    sst_cache_free(c);
    /* Both reopen cleanly. */
    cp = sst_sqlite_saver_open(path, NULL, E);
    assert_non_null(cp);
    check_latest(cp, "c2", E);
    sst_checkpointer_free(cp);
    /* The cache first, on a new file: the checkpointer then makes its tables beside it. */
    snprintf(path, sizeof path, "%s/cache-first.db", fx->dir);
    c = sst_sqlite_cache_open(path, E);
    assert_non_null(c);
    OK(sst_cache_set(c, "ns", "k", v, 0, E));
    cp = sst_sqlite_saver_open(path, NULL, E);
    if (cp == NULL) {
        fail_msg("checkpointer on the cache's file: %s", fx->err.msg);
    }
    put_checkpoint(cp, "c1", NULL, E);
    check_latest(cp, "c1", E);
    OK(sst_cache_get(c, "ns", "k", &got, E));
    assert_non_null(got);
    sst_value_unref(got);
    sst_checkpointer_free(cp);
    sst_cache_free(c);
    sst_value_unref(v);
}

/* ---- the handle, against fake implementations ---- */

typedef struct fake {
    int destroyed;
} fake;

static void fake_destroy(void *self) {
    ((fake *)self)->destroyed++;
}

static sst_code fake_get(void *self, const char *ns, const char *key, sst_value **out,
                         sst_error *err) {
    (void)self, (void)ns, (void)key, (void)err;
    *out = sst_string_new("half made", NULL); /* then fails: the handle must drop it */
    return SST_EIO;
}

static sst_code fake_set(void *self, const char *ns, const char *key, const sst_value *value,
                         double ttl_s, sst_error *err) {
    (void)self, (void)ns, (void)key, (void)value, (void)ttl_s, (void)err;
    return SST_OK;
}

static sst_code fake_clear(void *self, const char *ns, sst_error *err) {
    (void)self, (void)ns, (void)err;
    return SST_OK;
}

static const sst_cache_ops k_fake_ops = {
    .version = SST_CACHE_OPS_VERSION,
    .destroy = fake_destroy,
    .get = fake_get,
    .set = fake_set,
    .clear = fake_clear,
};

static void api_versions(void **state) {
    (void)state;
    fake f = {0};
    sst_error err;
    sst_cache_ops ops = k_fake_ops;
    ops.version = 2;
    assert_null(sst_cache_new(&ops, &f, &err));
    assert_int_equal(err.code, SST_EINVAL);
    assert_non_null(strstr(err.msg, "version 2"));
    ops.version = 0;
    assert_null(sst_cache_new(&ops, &f, &err));
    assert_int_equal(err.code, SST_EINVAL);
    assert_non_null(strstr(err.msg, "version 0"));
    assert_null(sst_cache_new(NULL, &f, &err));
    assert_int_equal(err.code, SST_EINVAL);
    assert_int_equal(f.destroyed, 0); /* on failure self is not destroyed */
}

static void api_missing_op(void **state) {
    (void)state;
    fake f = {0};
    sst_error err;
    for (int which = 0; which < 4; which++) {
        sst_cache_ops ops = k_fake_ops;
        switch (which) {
            case 0:
                ops.destroy = NULL;
                break;
            case 1:
                ops.get = NULL;
                break;
            case 2:
                ops.set = NULL;
                break;
            default:
                ops.clear = NULL;
                break;
        }
        assert_null(sst_cache_new(&ops, &f, &err));
        assert_int_equal(err.code, SST_EINVAL);
        assert_non_null(strstr(err.msg, "required"));
    }
    assert_int_equal(f.destroyed, 0);
}

static void api_refcount(void **state) {
    (void)state;
    fake f = {0};
    sst_error err;
    sst_cache *c = sst_cache_new(&k_fake_ops, &f, &err);
    assert_non_null(c);
    assert_ptr_equal(sst_cache_ref(c), c);
    sst_cache_free(c);
    assert_int_equal(f.destroyed, 0);
    /* A backend that fails after filling *out: the caller gets NULL and nothing leaks. */
    sst_value *out = NULL;
    assert_int_equal(sst_cache_get(c, "ns", "k", &out, &err), SST_EIO);
    assert_null(out);
    sst_cache_free(c);
    assert_int_equal(f.destroyed, 1);
}

int main(void) {
    tu_chaos_install();
    int failed = 0;
    for (size_t b = 0; b < sizeof k_backends / sizeof k_backends[0]; b++) {
        void *be = (void *)&k_backends[b];
#define SST_CASE(fn) cmocka_unit_test_prestate_setup_teardown(fn, fx_setup, fx_teardown, be),
        const struct CMUnitTest tests[] = {BACKEND_CASES(SST_CASE)};
#undef SST_CASE
        failed += cmocka_run_group_tests_name(k_backends[b].name, tests, NULL, NULL);
    }
    void *sq = (void *)&k_backends[1];
#define SQ_CASE(fn) cmocka_unit_test_prestate_setup_teardown(fn, fx_setup, fx_teardown, sq)
    const struct CMUnitTest sqlite_only[] = {
        SQ_CASE(sq_persistence),  SQ_CASE(sq_not_a_database),           SQ_CASE(sq_other_files),
        SQ_CASE(sq_damaged_rows), SQ_CASE(sq_shared_with_checkpointer),
    };
#undef SQ_CASE
    failed += cmocka_run_group_tests_name("sqlite only", sqlite_only, NULL, NULL);
    const struct CMUnitTest api[] = {
        cmocka_unit_test(api_versions),
        cmocka_unit_test(api_missing_op),
        cmocka_unit_test(api_refcount),
    };
    failed += cmocka_run_group_tests_name("cache handle", api, NULL, NULL);
    return failed != 0;
}
