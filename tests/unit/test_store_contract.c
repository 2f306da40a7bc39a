/* SPDX-License-Identifier: MIT */
/*
 * The long-term memory store contract (include/superstep/store.h): one suite
 * run against every backend of k_backends (a new backend is one more row),
 * restating the behaviours LangGraph's store tests check
 * (libs/checkpoint/tests/test_store.py, libs/checkpoint-sqlite/tests/
 * test_store.py and test_ttl.py). Cases, per backend:
 *   1 namespaces: validation (empty, '.', empty label, "langgraph" root)
 *   2 put/get: round trip, timestamps, update keeps created_at, absent -> null
 *   3 delete                        4 search: prefix by whole labels, order, paging
 *   5 search filters ($eq ... $lte, nested, dotted, arrays, null, operators)
 *   6 list_namespaces (prefix, suffix, "*", max_depth, limit, offset)
 *   7 vector search (LangGraph's CharacterEmbeddings: ranking, update, filters,
 *     paging, scores against the reference, max over vectors, index override)
 *   8 field paths: the texts the embed hook receives
 *   9 TTL: defaults, override, sweep, refresh on read, omit_expired
 *  10 embed hook failures: the error names it, nothing is stored
 *  11 non-ASCII                     12 argument checks
 *  13 threads: puts, searches, gets and deletes at once (TSan)
 *  14 persistence (reopen)
 * Once: the SQLite file shared with the checkpointer, damaged and foreign
 * files, a read-only file, two handles on one file, vectors of another size;
 * PostgreSQL: two stores on two pools (two processes) on one schema, tables
 * of a newer schema version, vectors of another size, a shared pool, calls
 * after their connections were cut; and
 * against a fake backend: ops versioning, required ops, reference count.
 *
 * The "postgres" backend and the PostgreSQL cases need the test server (the
 * CTest fixture "pg", tests/pg/cluster.sh): without one they print why and
 * skip, unless SST_REQUIRE_POSTGRES=1 (then tu_pg_url fails the test). Each
 * case gets a schema of its own (tu_pg_fresh), dropped at its end.
 */
#define _GNU_SOURCE /* mkdtemp, strdup */
#include <math.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "superstep/superstep.h"
#include "test_util.h"

/* ---- LangGraph's CharacterEmbeddings (tests/embed_test_utils.py), exactly ---- */

/*
 * Python's random.Random(42): MT19937 seeded by init_by_array([42]),
 * random() from two draws, gauss() with its cached second value. Projections
 * are made lazily per character (code point) in the order characters are
 * first met, as the defaultdict does, so equal call sequences give equal
 * vectors to the last bit (the same libm, no FMA contraction in C11 mode).
 */
typedef struct mt19937 {
    uint32_t mt[624];
    int mti;
} mt19937;

static void mt_init(mt19937 *m, uint32_t s) {
    m->mt[0] = s;
    for (m->mti = 1; m->mti < 624; m->mti++) {
        uint32_t prev = m->mt[m->mti - 1];
        m->mt[m->mti] = 1812433253u * (prev ^ (prev >> 30)) + (uint32_t)m->mti;
    }
}

static void mt_seed_array(mt19937 *m, const uint32_t *key, int len) {
    mt_init(m, 19650218u);
    int i = 1, j = 0;
    for (int k = 624 > len ? 624 : len; k > 0; k--) {
        uint32_t prev = m->mt[i - 1];
        m->mt[i] = (m->mt[i] ^ ((prev ^ (prev >> 30)) * 1664525u)) + key[j] + (uint32_t)j;
        i++, j++;
        if (i >= 624) {
            m->mt[0] = m->mt[623];
            i = 1;
        }
        if (j >= len) {
            j = 0;
        }
    }
    for (int k = 623; k > 0; k--) {
        uint32_t prev = m->mt[i - 1];
        m->mt[i] = (m->mt[i] ^ ((prev ^ (prev >> 30)) * 1566083941u)) - (uint32_t)i;
        if (++i >= 624) {
            m->mt[0] = m->mt[623];
            i = 1;
        }
    }
    m->mt[0] = 0x80000000u;
}

static uint32_t mt_next(mt19937 *m) {
    static const uint32_t mag01[2] = {0, 0x9908b0dfu};
    if (m->mti >= 624) {
        int k;
        for (k = 0; k < 624 - 397; k++) {
            uint32_t y = (m->mt[k] & 0x80000000u) | (m->mt[k + 1] & 0x7fffffffu);
            m->mt[k] = m->mt[k + 397] ^ (y >> 1) ^ mag01[y & 1];
        }
        for (; k < 623; k++) {
            uint32_t y = (m->mt[k] & 0x80000000u) | (m->mt[k + 1] & 0x7fffffffu);
            m->mt[k] = m->mt[k + (397 - 624)] ^ (y >> 1) ^ mag01[y & 1];
        }
        uint32_t y = (m->mt[623] & 0x80000000u) | (m->mt[0] & 0x7fffffffu);
        m->mt[623] = m->mt[396] ^ (y >> 1) ^ mag01[y & 1];
        m->mti = 0;
    }
    uint32_t y = m->mt[m->mti++];
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    return y ^ (y >> 18);
}

static double mt_random(mt19937 *m) {
    uint32_t a = mt_next(m) >> 5, b = mt_next(m) >> 6;
    return (a * 67108864.0 + b) * (1.0 / 9007199254740992.0);
}

typedef struct charemb {
    pthread_mutex_t mu;
    mt19937 rng;
    bool has_next;
    double gauss_next;
    size_t dims;
    uint32_t *chars; /* code points with a projection */
    double **proj;
    size_t n, cap;
    /* fault injection and recording */
    int fail;        /* 1: fail every call; 2: return NaN; 3: leave rows unfilled */
    size_t calls;    /* hook calls */
    char seen[8192]; /* the texts of the calls, each followed by '\x1e' */
} charemb;

static double gauss(charemb *e, double sigma) {
    double z;
    if (e->has_next) {
        z = e->gauss_next;
        e->has_next = false;
    } else {
        double x2pi = mt_random(&e->rng) * 2.0 * M_PI;
        double g2rad = sqrt(-2.0 * log(1.0 - mt_random(&e->rng)));
        z = cos(x2pi) * g2rad;
        e->gauss_next = sin(x2pi) * g2rad;
        e->has_next = true;
    }
    return 0.0 + z * sigma;
}

static void charemb_init(charemb *e, size_t dims) {
    memset(e, 0, sizeof *e);
    pthread_mutex_init(&e->mu, NULL);
    const uint32_t key[1] = {42};
    mt_seed_array(&e->rng, key, 1);
    e->rng.mti = 624;
    e->dims = dims;
}

static void charemb_free(charemb *e) {
    for (size_t i = 0; i < e->n; i++) {
        free(e->proj[i]);
    }
    free(e->proj);
    free(e->chars);
    pthread_mutex_destroy(&e->mu);
}

static const double *projection(charemb *e, uint32_t cp) {
    for (size_t i = 0; i < e->n; i++) {
        if (e->chars[i] == cp) {
            return e->proj[i];
        }
    }
    if (e->n == e->cap) {
        e->cap = e->cap ? 2 * e->cap : 64;
        e->chars = realloc(e->chars, e->cap * sizeof *e->chars);
        e->proj = realloc(e->proj, e->cap * sizeof *e->proj);
    }
    double *p = malloc(e->dims * sizeof *p);
    for (size_t i = 0; i < e->dims; i++) {
        p[i] = gauss(e, 1 / sqrt((double)e->dims));
    }
    e->chars[e->n] = cp;
    e->proj[e->n++] = p;
    return p;
}

/* The code points of UTF-8 @p s (valid). */
static size_t code_points(const char *s, uint32_t *out, size_t max) {
    size_t n = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p != '\0' && n < max;) {
        int len = *p < 0x80 ? 1 : *p < 0xE0 ? 2 : *p < 0xF0 ? 3 : 4;
        uint32_t cp = len == 1 ? *p : (uint32_t)(*p & (0x7F >> len));
        for (int i = 1; i < len; i++) {
            cp = (cp << 6) | (p[i] & 0x3F);
        }
        out[n++] = cp;
        p += len;
    }
    return n;
}

/* _embed_one: character frequencies (first occurrence order) times projections, normalised. */
static void embed_one(charemb *e, const char *text, double *out) {
    static uint32_t cps[4096], distinct[4096];
    static size_t counts[4096];
    size_t n = code_points(text, cps, 4096), nd = 0;
    for (size_t i = 0; i < n; i++) {
        size_t j = 0;
        while (j < nd && distinct[j] != cps[i]) {
            j++;
        }
        if (j == nd) {
            distinct[nd] = cps[i];
            counts[nd++] = 0;
        }
        counts[j]++;
    }
    for (size_t i = 0; i < e->dims; i++) {
        out[i] = 0.0;
    }
    if (n == 0) {
        return;
    }
    for (size_t j = 0; j < nd; j++) {
        double weight = (double)counts[j] / (double)n;
        const double *p = projection(e, distinct[j]);
        for (size_t i = 0; i < e->dims; i++) {
            out[i] += weight * p[i];
        }
    }
    double sum = 0;
    for (size_t i = 0; i < e->dims; i++) {
        sum += out[i] * out[i];
    }
    double norm = sqrt(sum);
    for (size_t i = 0; norm > 0 && i < e->dims; i++) {
        out[i] = out[i] / norm;
    }
}

static sst_code charemb_fn(void *ud, const char *const *texts, size_t n, size_t dims, float *out,
                           sst_error *err) {
    charemb *e = ud;
    if (dims != e->dims) {
        snprintf(err->msg, sizeof err->msg, "asked for %zu dims, made for %zu", dims, e->dims);
        return SST_EINVAL;
    }
    pthread_mutex_lock(&e->mu);
    e->calls++;
    if (e->fail == 1) {
        pthread_mutex_unlock(&e->mu);
        snprintf(err->msg, sizeof err->msg, "quota exceeded for model 'fake'");
        err->code = SST_EUNAVAILABLE;
        return SST_EUNAVAILABLE;
    }
    double *v = malloc(dims * sizeof *v);
    for (size_t t = 0; t < n; t++) {
        size_t used = strlen(e->seen);
        snprintf(e->seen + used, sizeof e->seen - used, "%s\x1e", texts[t]);
        embed_one(e, texts[t], v);
        for (size_t i = 0; e->fail != 3 && i < dims; i++) {
            out[t * dims + i] = e->fail == 2 && i == 3 ? NAN : (float)v[i];
        }
    }
    free(v);
    pthread_mutex_unlock(&e->mu);
    return SST_OK;
}

/* ---- backends ---- */

typedef struct backend {
    const char *name;
    /* Opens the store kept under @p dir (empty the first time). */
    sst_store *(*open)(const char *dir, const sst_store_opts *o, sst_error *err);
    bool reopen;   /* opening dir again finds what was stored */
    bool needs_pg; /* needs the test PostgreSQL server */
} backend;

static sst_store *open_memory(const char *dir, const sst_store_opts *o, sst_error *err) {
    (void)dir;
    return sst_memory_store_new(o, err);
}

static sst_store *open_sqlite(const char *dir, const sst_store_opts *o, sst_error *err) {
    char path[128];
    snprintf(path, sizeof path, "%s/store.db", dir);
    return sst_sqlite_store_new(path, o, err);
}

static sst_store *open_sqlite_memdb(const char *dir, const sst_store_opts *o, sst_error *err) {
    (void)dir;
    return sst_sqlite_store_new(":memory:", o, err);
}

/* The URL of the fresh schema a fixture's PostgreSQL store lives in, kept in a
 * file under its dir so that opening it again finds the same schema. */
static bool pg_url_of(const char *dir, char *url, size_t n) {
    char path[128];
    snprintf(path, sizeof path, "%s/pg_url", dir);
    char *text = tu_read_file(path, NULL);
    if (text != NULL) {
        snprintf(url, n, "%s", text);
        free(text);
        return true;
    }
    if (tu_pg_fresh("store", url, n) != 0) {
        return false;
    }
    FILE *f = fopen(path, "w");
    bool ok = f != NULL && fputs(url, f) >= 0;
    ok = f != NULL && fclose(f) == 0 && ok;
    return ok;
}

static sst_store *open_postgres(const char *dir, const sst_store_opts *o, sst_error *err) {
    char url[600];
    if (!pg_url_of(dir, url, sizeof url)) {
        snprintf(err->msg, sizeof err->msg, "no fresh schema on the test server");
        err->code = SST_EUNAVAILABLE;
        return NULL;
    }
    return sst_postgres_store_new(url, o, err);
}

/* Drops the schema of a tu_pg_fresh URL (the tables of a finished case). */
static int pg_drop_schema(const char *url) {
    const char *at = strstr(url, "search_path%3D");
    const char *base = tu_pg_url();
    if (at == NULL || base == NULL) {
        return -1;
    }
    char sql[160];
    snprintf(sql, sizeof sql, "SET client_min_messages = warning; DROP SCHEMA IF EXISTS %s CASCADE",
             at + strlen("search_path%3D"));
    return tu_pg_exec(base, sql);
}

static const backend k_backends[] = {
    {"memory", open_memory, false, false},
    {"sqlite", open_sqlite, true, false},
    {"sqlite-memdb", open_sqlite_memdb, false, false},
    {"postgres", open_postgres, true, true},
};

/* ---- fixture: a store per test, its clock and its embedder ---- */

#define T0     INT64_C(1700000000123456) /* 2023-11-14T22:13:20.123456+00:00 */
#define MINUTE INT64_C(60000000)

typedef struct fixture {
    const backend *be;
    char dir[64];
    sst_store *st;
    sst_error err; /* the error of the last call made through E */
    _Atomic int64_t now;
    charemb emb;
    sst_store_opts opts;
} fixture;

static int64_t fx_clock(void *ud) {
    return atomic_load(&((fixture *)ud)->now);
}

/* In a case (a local `fx`): E is the error argument; OK and FAILS check a code. */
#define E                 (&fx->err)
#define OK(call)          tu_assert_ok((call), E, __FILE__, __LINE__)
#define FAILS(call, code) code_at((call), (code), E, __FILE__, __LINE__)
#define MSG_HAS(s)        msg_has_at(E, (s), __FILE__, __LINE__)
/* A namespace argument pair: the labels and their count. */
#define NS(...)                                                                                    \
    (const char *const[]){__VA_ARGS__},                                                            \
        (sizeof((const char *const[]){__VA_ARGS__}) / sizeof(const char *))
#define NO_NS NULL, 0

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
    atomic_init(&fx->now, T0);
    charemb_init(&fx->emb, 500);
    sst_store_opts_init(&fx->opts);
    fx->opts.clock = fx_clock;
    fx->opts.clock_user_data = fx;
    if (tu_temp_dir("store", fx->dir, sizeof fx->dir) != 0) {
        free(fx);
        return -1;
    }
    *state = fx;
    return 0;
}

static int fx_teardown(void **state) {
    fixture *fx = *state;
    sst_store_free(fx->st);
    charemb_free(&fx->emb);
    char path[128];
    snprintf(path, sizeof path, "%s/pg_url", fx->dir);
    char *url = tu_read_file(path, NULL);
    int dropped = url != NULL ? pg_drop_schema(url) : 0;
    free(url);
    int rc = tu_rm_rf(fx->dir) != 0 || dropped != 0 ? -1 : 0;
    free(fx);
    return rc;
}

/* Opens the backend with fx->opts (the test clock; an index when @p dims > 0). */
static void fx_open(fixture *fx, size_t dims, const char *const *fields, size_t n_fields) {
    sst_store_free(fx->st);
    fx->opts.index.dims = dims;
    fx->opts.index.embed = dims > 0 ? charemb_fn : NULL;
    fx->opts.index.embed_user_data = &fx->emb;
    fx->opts.index.fields = fields;
    fx->opts.index.n_fields = n_fields;
    fx->st = fx->be->open(fx->dir, &fx->opts, E);
    if (fx->st == NULL) {
        fail_msg("%s: cannot open a store in %s: %s", fx->be->name, fx->dir, fx->err.msg);
    }
}

static void advance(fixture *fx, int64_t us) {
    atomic_fetch_add(&fx->now, us);
}

/* ---- call helpers ---- */

static sst_code put_json(fixture *fx, const char *const *ns, size_t ns_len, const char *key,
                         const char *json, const sst_store_put_opts *o) {
    sst_value *v = tu_json(json);
    sst_code rc = sst_store_put(fx->st, ns, ns_len, key, v, o, E);
    sst_value_unref(v);
    return rc;
}

#define PUT(ns_key_json) OK(put_json ns_key_json)

/* The item (ns, key) as a new value; fails the test on an error. */
static sst_value *get_item(fixture *fx, const char *const *ns, size_t ns_len, const char *key,
                           int refresh) {
    sst_value *v = sst_store_get(fx->st, ns, ns_len, key, refresh, E);
    if (v == NULL) {
        fail_msg("get %s: %s", key, fx->err.msg);
    }
    return v;
}

static bool present(fixture *fx, const char *const *ns, size_t ns_len, const char *key) {
    sst_value *v = get_item(fx, ns, ns_len, key, 0);
    bool has = !sst_is_null(v);
    sst_value_unref(v);
    return has;
}

/* Runs a search; fails the test on an error. */
static sst_value *search(fixture *fx, const sst_store_search_opts *q) {
    sst_value *r = sst_store_search(fx->st, q, E);
    if (r == NULL) {
        fail_msg("search: %s", fx->err.msg);
    }
    return r;
}

/* The keys of search results, comma separated, into a static buffer. */
static const char *keys_of(const sst_value *results) {
    static char buf[1024];
    buf[0] = '\0';
    for (size_t i = 0; i < sst_array_len(results); i++) {
        const sst_value *k = sst_object_get(sst_array_get(results, i), "key");
        size_t used = strlen(buf);
        snprintf(buf + used, sizeof buf - used, "%s%s", i > 0 ? "," : "", sst_string_cstr(k));
    }
    return buf;
}

/* Search keys of @p q, checked against @p want. */
static void search_keys_at(fixture *fx, const sst_store_search_opts *q, const char *want,
                           const char *file, int line) {
    sst_value *r = search(fx, q);
    const char *got = keys_of(r);
    if (strcmp(got, want) != 0) {
        print_error("%s:%d: search gave [%s], expected [%s]\n", file, line, got, want);
        sst_value_unref(r);
        _fail(file, line);
    }
    sst_value_unref(r);
}
#define SEARCH_KEYS(q, want) search_keys_at(fx, (q), (want), __FILE__, __LINE__)

/* A search query over @p prefix. */
static sst_store_search_opts query(const char *const *prefix, size_t prefix_len) {
    sst_store_search_opts q;
    sst_store_search_opts_init(&q);
    q.prefix = prefix;
    q.prefix_len = prefix_len;
    return q;
}

/* The namespaces of a listing as "a.b|c" into a static buffer. */
static const char *list_of(fixture *fx, const sst_store_list_opts *q) {
    static char buf[2048];
    sst_value *r = sst_store_list_namespaces(fx->st, q, E);
    if (r == NULL) {
        fail_msg("list_namespaces: %s", fx->err.msg);
    }
    buf[0] = '\0';
    for (size_t i = 0; i < sst_array_len(r); i++) {
        const sst_value *ns = sst_array_get(r, i);
        for (size_t j = 0; j < sst_array_len(ns); j++) {
            size_t used = strlen(buf);
            snprintf(buf + used, sizeof buf - used, "%s%s",
                     j > 0   ? "."
                     : i > 0 ? "|"
                             : "",
                     sst_string_cstr(sst_array_get(ns, j)));
        }
    }
    sst_value_unref(r);
    return buf;
}

static void list_at(fixture *fx, const sst_store_list_opts *q, const char *want, const char *file,
                    int line) {
    const char *got = list_of(fx, q);
    if (strcmp(got, want) != 0) {
        print_error("%s:%d: list_namespaces gave [%s], expected [%s]\n", file, line, got, want);
        _fail(file, line);
    }
}
#define LIST(q, want) list_at(fx, (q), (want), __FILE__, __LINE__)

static sst_store_list_opts lopts(void) {
    sst_store_list_opts q;
    sst_store_list_opts_init(&q);
    return q;
}

static double score_of(const sst_value *results, size_t i) {
    const sst_value *s = sst_object_get(sst_array_get(results, i), "score");
    if (s == NULL || !sst_is_number(s)) {
        fail_msg("result %zu has no score", i);
    }
    return sst_number_value(s);
}

static const char *key_at(const sst_value *results, size_t i) {
    return sst_string_cstr(sst_object_get(sst_array_get(results, i), "key"));
}

/* ---- 1 namespaces ---- */

static void case_namespaces(void **state) {
    fixture *fx = *state;
    fx_open(fx, 500, NULL, 0);
    FAILS(put_json(fx, NO_NS, "foo", "{\"foo\":\"bar\"}", NULL), SST_EINVAL);
    MSG_HAS("cannot be empty");
    FAILS(put_json(fx, NS("the", "thing.about"), "foo", "{}", NULL), SST_EINVAL);
    MSG_HAS("'thing.about'");
    MSG_HAS("periods");
    FAILS(put_json(fx, NS("some", "fun", ""), "foo", "{}", NULL), SST_EINVAL);
    MSG_HAS("empty strings");
    FAILS(put_json(fx, NS("langgraph", "foo"), "bar", "{}", NULL), SST_EINVAL);
    MSG_HAS("\"langgraph\"");
    FAILS(put_json(fx, NS("a", "\xff\xfe"), "bar", "{}", NULL), SST_EINVAL);
    MSG_HAS("UTF-8");
    FAILS(put_json(fx, NS("a", NULL), "bar", "{}", NULL), SST_EINVAL);
    assert_int_equal(fx->emb.calls, 0); /* checked before embedding */
    /* "langgraph" is only refused as the root of a put */
    PUT((fx, NS("foo", "langgraph", "foo"), "bar", "{\"foo\":\"bar\"}", NULL));
    sst_value *item = get_item(fx, NS("foo", "langgraph", "foo"), "bar", -1);
    assert_json_eq(sst_object_get(item, "value"), "{\"foo\":\"bar\"}");
    sst_value_unref(item);
    sst_store_search_opts q = query(NS("foo", "langgraph", "foo"));
    q.query = "bar";
    SEARCH_KEYS(&q, "bar");
    OK(sst_store_delete(fx->st, NS("foo", "langgraph", "foo"), "bar", E));
    assert_false(present(fx, NS("foo", "langgraph", "foo"), "bar"));
    assert_false(present(fx, NS("langgraph", "foo"), "bar"));
    OK(sst_store_delete(fx->st, NS("langgraph", "foo"), "bar", E));
    q = query(NS("langgraph"));
    SEARCH_KEYS(&q, "");
    /* the other calls check labels too */
    assert_null(sst_store_get(fx->st, NS("a.b"), "k", -1, E));
    code_at(fx->err.code, SST_EINVAL, E, __FILE__, __LINE__);
    FAILS(sst_store_delete(fx->st, NS("a", ""), "k", E), SST_EINVAL);
    q = query(NS("a", "b.c"));
    assert_null(sst_store_search(fx->st, &q, E));
    MSG_HAS("'b.c'");
}

/* ---- 2 put/get ---- */

static void case_put_get(void **state) {
    fixture *fx = *state;
    fx_open(fx, 0, NULL, 0);
    PUT((fx, NS("test", "documents"), "doc1", "{\"title\":\"Test Document\",\"n\":[1,2.5,null]}",
         NULL));
    sst_value *item = get_item(fx, NS("test", "documents"), "doc1", -1);
    assert_json_eq(item, "{\"namespace\":[\"test\",\"documents\"],\"key\":\"doc1\","
                         "\"value\":{\"title\":\"Test Document\",\"n\":[1,2.5,null]},"
                         "\"created_at\":\"2023-11-14T22:13:20.123456+00:00\","
                         "\"updated_at\":\"2023-11-14T22:13:20.123456+00:00\"}");
    /* Item.dict()'s member order; no score in a get */
    const char *order[] = {"namespace", "key", "value", "created_at", "updated_at"};
    assert_int_equal(sst_object_len(item), 5);
    for (size_t i = 0; i < 5; i++) {
        assert_string_equal(sst_string_cstr(sst_object_key_at(item, i)), order[i]);
    }
    sst_value_unref(item);
    /* an update keeps created_at; whole seconds print without a fraction, as Python does */
    atomic_store(&fx->now, INT64_C(1767225600000000)); /* 2026-01-01T00:00:00 */
    PUT((fx, NS("test", "documents"), "doc1", "{\"title\":\"Updated\"}", NULL));
    item = get_item(fx, NS("test", "documents"), "doc1", -1);
    assert_json_eq(sst_object_get(item, "value"), "{\"title\":\"Updated\"}");
    assert_string_equal(sst_string_cstr(sst_object_get(item, "created_at")),
                        "2023-11-14T22:13:20.123456+00:00");
    assert_string_equal(sst_string_cstr(sst_object_get(item, "updated_at")),
                        "2026-01-01T00:00:00+00:00");
    sst_value_unref(item);
    /* absent: null, in another namespace, a shorter or longer one, another key */
    assert_false(present(fx, NS("test", "other_documents"), "doc1"));
    assert_false(present(fx, NS("test"), "doc1"));
    assert_false(present(fx, NS("test", "documents", "x"), "doc1"));
    assert_false(present(fx, NS("test", "documents"), "doc2"));
    /* keys are any strings; the value must be an object */
    PUT((fx, NS("test"), "", "{\"empty\":\"key\"}", NULL));
    PUT((fx, NS("test"), "a.b/c d", "{}", NULL));
    assert_true(present(fx, NS("test"), ""));
    assert_true(present(fx, NS("test"), "a.b/c d"));
    FAILS(put_json(fx, NS("test"), "k", "[1]", NULL), SST_ETYPE);
    MSG_HAS("must be an object, got array");
    FAILS(put_json(fx, NS("test"), "k", "\"s\"", NULL), SST_ETYPE);
    FAILS(sst_store_put(fx->st, NS("test"), "k", NULL, NULL, E), SST_ETYPE);
    FAILS(put_json(fx, NS("test"), NULL, "{}", NULL), SST_EINVAL);
    MSG_HAS("key");
}

/* ---- 3 delete ---- */

static void case_delete(void **state) {
    fixture *fx = *state;
    fx_open(fx, 500, NULL, 0);
    PUT((fx, NS("a", "b"), "k1", "{\"text\":\"one\"}", NULL));
    PUT((fx, NS("a", "b"), "k2", "{\"text\":\"two\"}", NULL));
    PUT((fx, NS("a", "c"), "k1", "{\"text\":\"three\"}", NULL));
    OK(sst_store_delete(fx->st, NS("a", "b"), "k1", E));
    OK(sst_store_delete(fx->st, NS("a", "b"), "k1", E)); /* absent: fine */
    OK(sst_store_delete(fx->st, NS("zz"), "k1", E));
    assert_false(present(fx, NS("a", "b"), "k1"));
    assert_true(present(fx, NS("a", "b"), "k2"));
    assert_true(present(fx, NS("a", "c"), "k1"));
    sst_store_search_opts q = query(NS("a"));
    q.query = "three";
    SEARCH_KEYS(&q, "k1,k2"); /* (a,c)/k1 then (a,b)/k2, by score */
    sst_value *r = search(fx, &q);
    assert_string_equal(
        sst_string_cstr(sst_array_get(sst_object_get(sst_array_get(r, 0), "namespace"), 1)), "c");
    sst_value_unref(r);
    /* a namespace whose last item is deleted is not listed any more */
    sst_store_list_opts l = lopts();
    LIST(&l, "a.b|a.c");
    OK(sst_store_delete(fx->st, NS("a", "b"), "k2", E));
    LIST(&l, "a.c");
    /* and its vectors are gone with it: a put again ranks as new */
    PUT((fx, NS("a", "b"), "k2", "{\"text\":\"two\"}", NULL));
    q.query = "two";
    SEARCH_KEYS(&q, "k2,k1");
}

/* ---- 4 search: prefix, order, paging ---- */

static void case_search(void **state) {
    fixture *fx = *state;
    fx_open(fx, 0, NULL, 0);
    sst_store_search_opts q = query(NO_NS);
    SEARCH_KEYS(&q, ""); /* an empty store */
    const char *const spaces[][3] = {{"foo"},    {"foo", "child"},  {"foo", "child", "deep"},
                                     {"foobar"}, {"foobar", "baz"}, {"foo2"},
                                     {"user_1"}, {"userX1"},        {"a%b"},
                                     {"star*"},  {"starX"},         {"Foo"}};
    const size_t lens[] = {1, 2, 3, 1, 2, 1, 1, 1, 1, 1, 1, 1};
    for (size_t i = 0; i < 12; i++) {
        char key[8];
        snprintf(key, sizeof key, "k%02zu", i);
        advance(fx, 1);
        PUT((fx, spaces[i], lens[i], key, "{\"v\":1}", NULL));
    }
    /* whole labels, literal characters, case-sensitive; newest first */
    q = query(NS("foo"));
    q.limit = 100;
    SEARCH_KEYS(&q, "k02,k01,k00");
    q = query(NS("foobar"));
    SEARCH_KEYS(&q, "k04,k03");
    q = query(NS("foo2"));
    SEARCH_KEYS(&q, "k05");
    q = query(NS("fo"));
    SEARCH_KEYS(&q, "");
    q = query(NS("user_1"));
    SEARCH_KEYS(&q, "k06");
    q = query(NS("a%b"));
    SEARCH_KEYS(&q, "k08");
    q = query(NS("star*"));
    SEARCH_KEYS(&q, "k09");
    q = query(NS("Foo"));
    SEARCH_KEYS(&q, "k11");
    q = query(NS("foo", "child"));
    SEARCH_KEYS(&q, "k02,k01");
    /* no prefix: everything, the default limit is 10 */
    q = query(NO_NS);
    SEARCH_KEYS(&q, "k11,k10,k09,k08,k07,k06,k05,k04,k03,k02");
    q.offset = 10;
    SEARCH_KEYS(&q, "k01,k00");
    q.offset = 3;
    q.limit = 2;
    SEARCH_KEYS(&q, "k08,k07");
    q.offset = 50;
    SEARCH_KEYS(&q, "");
    q.limit = 0; /* reads as the default */
    q.offset = 0;
    SEARCH_KEYS(&q, "k11,k10,k09,k08,k07,k06,k05,k04,k03,k02");
    /* an update moves an item to the front */
    advance(fx, 1);
    PUT((fx, NS("foo"), "k00", "{\"v\":2}", NULL));
    q = query(NS("foo"));
    SEARCH_KEYS(&q, "k00,k02,k01");
    /* search items: SearchItem.dict() with a null score when there is no query */
    sst_value *r = search(fx, &q);
    const sst_value *first = sst_array_get(r, 0);
    assert_int_equal(sst_object_len(first), 6);
    assert_string_equal(sst_string_cstr(sst_object_key_at(first, 5)), "score");
    assert_true(sst_is_null(sst_object_get(first, "score")));
    assert_json_eq(sst_object_get(first, "value"), "{\"v\":2}");
    sst_value_unref(r);
    /* a query without an index is ignored (LangGraph) */
    q.query = "anything";
    SEARCH_KEYS(&q, "k00,k02,k01");
    /* NULL options: the first 10 of everything */
    r = search(fx, NULL);
    assert_int_equal(sst_array_len(r), 10);
    sst_value_unref(r);
}

/* ---- 5 search filters ---- */

static void filter_keys_at(fixture *fx, const char *filter, const char *want, const char *file,
                           int line) {
    sst_value *f = tu_json(filter);
    sst_store_search_opts q = query(NO_NS);
    q.filter = f;
    q.limit = 100;
    search_keys_at(fx, &q, want, file, line);
    sst_value_unref(f);
}
#define FILTER(f, want) filter_keys_at(fx, (f), (want), __FILE__, __LINE__)

static void case_filters(void **state) {
    fixture *fx = *state;
    fx_open(fx, 0, NULL, 0);
    PUT((fx, NS("docs"), "d1",
         "{\"color\":\"red\",\"score\":4.5,\"n\":10,\"active\":true,\"tags\":[\"a\",\"b\"],"
         "\"user\":{\"name\":\"ann\",\"access-level\":\"nested\",\"age\":30},\"123abc\":\"ok\","
         "\"access-level\":\"public\",\"title\":\"O'Brien's Document\"}",
         NULL));
    PUT((fx, NS("docs"), "d2",
         "{\"color\":\"blue\",\"score\":3.0,\"n\":20,\"active\":false,\"tags\":[\"b\"],"
         "\"user\":{\"name\":\"bob\",\"age\":25},\"opt\":null,\"a.b\":\"literal\"}",
         NULL));
    PUT((fx, NS("docs"), "d3", "{\"color\":\"green\",\"score\":4,\"n\":-10,\"tags\":[]}", NULL));
    /* equality; numbers by value (4 equals 4.0); booleans are not numbers */
    FILTER("{\"color\":\"red\"}", "d1");
    FILTER("{\"score\":4.0}", "d3");
    FILTER("{\"score\":3}", "d2");
    FILTER("{\"active\":true}", "d1");
    FILTER("{\"active\":false}", "d2");
    FILTER("{\"active\":1}", "");
    FILTER("{\"color\":\"red\",\"score\":4.5}", "d1");
    FILTER("{\"color\":\"red\",\"score\":3}", "");
    FILTER("{}", "d3,d2,d1");
    FILTER("{\"color\":\"public' OR '1'='1\"}", "");
    FILTER("{\"title\":\"O'Brien's Document\"}", "d1");
    /* null matches null and missing members */
    FILTER("{\"opt\":null}", "d3,d2,d1");
    FILTER("{\"active\":null}", "d3");
    /* operators */
    FILTER("{\"score\":{\"$gt\":3.2}}", "d3,d1");
    FILTER("{\"score\":{\"$gte\":4}}", "d3,d1");
    FILTER("{\"score\":{\"$lt\":4}}", "d2");
    FILTER("{\"score\":{\"$lte\":4.0}}", "d3,d2");
    FILTER("{\"n\":{\"$gt\":-11,\"$lt\":15}}", "d3,d1");
    FILTER("{\"n\":{\"$lt\":1e100}}", "d3,d2,d1");
    FILTER("{\"n\":{\"$gt\":-1e300}}", "d3,d2,d1");
    FILTER("{\"n\":{\"$eq\":20}}", "d2");
    FILTER("{\"n\":{\"$ne\":20}}", "d3,d1");
    FILTER("{\"color\":{\"$ne\":\"red\"}}", "d3,d2");
    FILTER("{\"opt\":{\"$ne\":\"x\"}}", "d3,d2,d1"); /* missing is not equal */
    FILTER("{\"opt\":{\"$ne\":null}}", "");
    FILTER("{\"active\":{\"$ne\":null}}", "d2,d1");
    FILTER("{\"color\":{\"$gt\":\"c\"}}", "d3,d1"); /* strings by bytes: green, red */
    FILTER("{\"color\":{\"$gt\":1}}", "");          /* a string against a number */
    FILTER("{\"missing\":{\"$lt\":100}}", "");
    FILTER("{\"score\":{\"$gte\":4.0},\"color\":\"green\"}", "d3");
    /* nested objects match by their members; arrays element by element */
    FILTER("{\"user\":{\"name\":\"ann\"}}", "d1");
    FILTER("{\"user\":{\"age\":{\"$lt\":28}}}", "d2");
    FILTER("{\"user\":{\"name\":\"ann\",\"age\":31}}", "");
    FILTER("{\"user\":\"ann\"}", "");
    FILTER("{\"tags\":[\"b\"]}", "d2");
    FILTER("{\"tags\":[\"a\",\"b\"]}", "d1");
    FILTER("{\"tags\":[\"b\",\"a\"]}", "");
    FILTER("{\"tags\":[]}", "d3");
    FILTER("{\"user\":{\"$eq\":{\"age\":25,\"name\":\"bob\"}}}", "d2"); /* whole, any order */
    FILTER("{\"user\":{\"$eq\":{\"name\":\"bob\"}}}", "");
    /* dotted paths, keys with hyphens and digits, a member named with a dot */
    FILTER("{\"user.name\":\"bob\"}", "d2");
    FILTER("{\"user.access-level\":\"nested\"}", "d1");
    FILTER("{\"access-level\":\"public\"}", "d1");
    FILTER("{\"123abc\":\"ok\"}", "d1");
    FILTER("{\"user.age\":{\"$gte\":26}}", "d1");
    FILTER("{\"a.b\":\"literal\"}", "d2");
    FILTER("{\"user.name.x\":\"bob\"}", "");
    /* unknown operators name the member and the operator */
    sst_value *f = tu_json("{\"score\":{\"$foo\":1}}");
    sst_store_search_opts q = query(NO_NS);
    q.filter = f;
    assert_null(sst_store_search(fx->st, &q, E));
    code_at(fx->err.code, SST_EINVAL, E, __FILE__, __LINE__);
    MSG_HAS("'score'");
    MSG_HAS("'$foo'");
    sst_value_unref(f);
    f = tu_json("{\"score\":{\"$gt\":1,\"x\":2}}");
    q.filter = f;
    assert_null(sst_store_search(fx->st, &q, E));
    MSG_HAS("'x'");
    sst_value_unref(f);
    f = tu_json("{\"user\":{\"age\":{\"$between\":[1,2]}}}");
    q.filter = f;
    assert_null(sst_store_search(fx->st, &q, E));
    MSG_HAS("'$between'");
    sst_value_unref(f);
    f = tu_json("[1]");
    q.filter = f;
    assert_null(sst_store_search(fx->st, &q, E));
    MSG_HAS("must be an object");
    sst_value_unref(f);
    /* the filter applies before paging */
    q = query(NO_NS);
    f = tu_json("{\"score\":{\"$gt\":1}}");
    q.filter = f;
    q.limit = 1;
    q.offset = 1;
    SEARCH_KEYS(&q, "d2");
    sst_value_unref(f);
}

/* ---- 6 list_namespaces ---- */

/* Puts one item in each namespace of @p spaces ("a.b.c" strings). */
static void put_spaces(fixture *fx, const char *const *spaces, size_t n) {
    for (size_t i = 0; i < n; i++) {
        char buf[128];
        const char *labels[8];
        size_t len = 0;
        snprintf(buf, sizeof buf, "%s", spaces[i]);
        for (char *p = buf, *dot; len < 8; p = dot + 1) {
            labels[len++] = p;
            if ((dot = strchr(p, '.')) == NULL) {
                break;
            }
            *dot = '\0';
        }
        char key[32];
        snprintf(key, sizeof key, "id_%zu", i);
        PUT((fx, labels, len, key, "{\"data\":1}", NULL));
    }
}

static void case_list_namespaces(void **state) {
    fixture *fx = *state;
    fx_open(fx, 0, NULL, 0);
    sst_store_list_opts q = lopts();
    LIST(&q, "");
    static const char *const spaces[] = {
        "a.b.c",          "a.b.d.e", "a.b.d.i",   "a.b.f",
        "a.c.f",          "b.a.f",   "users.123", "users.456.settings",
        "admin.users.789"};
    put_spaces(fx, spaces, 9);
    LIST(&q, "a.b.c|a.b.d.e|a.b.d.i|a.b.f|a.c.f|admin.users.789|b.a.f|users.123|"
             "users.456.settings");
    q.prefix = (const char *const[]){"a", "b"};
    q.prefix_len = 2;
    LIST(&q, "a.b.c|a.b.d.e|a.b.d.i|a.b.f");
    q.limit = 2;
    LIST(&q, "a.b.c|a.b.d.e");
    q.limit = 100;
    q.offset = 2;
    LIST(&q, "a.b.d.i|a.b.f");
    q.offset = 0;
    q.max_depth = 3;
    LIST(&q, "a.b.c|a.b.d|a.b.f");
    q = lopts();
    q.suffix = (const char *const[]){"f"};
    q.suffix_len = 1;
    LIST(&q, "a.b.f|a.c.f|b.a.f");
    q.prefix = (const char *const[]){"a"};
    q.prefix_len = 1;
    LIST(&q, "a.b.f|a.c.f");
    q = lopts();
    q.prefix = (const char *const[]){"a", "*", "f"};
    q.prefix_len = 3;
    LIST(&q, "a.b.f|a.c.f");
    q = lopts();
    q.suffix = (const char *const[]){"*", "f"};
    q.suffix_len = 2;
    LIST(&q, "a.b.f|a.c.f|b.a.f");
    q = lopts();
    q.prefix = (const char *const[]){"nonexistent"};
    q.prefix_len = 1;
    LIST(&q, "");
    q.prefix = (const char *const[]){"users", "123"};
    q.prefix_len = 2;
    LIST(&q, "users.123");
    q.prefix = (const char *const[]){"users", "*"};
    LIST(&q, "users.123|users.456.settings");
    q = lopts();
    q.prefix = (const char *const[]){"*", "users"};
    q.prefix_len = 2;
    q.suffix = (const char *const[]){"*", "settings"};
    q.suffix_len = 2;
    LIST(&q, "");
    q = lopts();
    q.max_depth = 2;
    LIST(&q, "a.b|a.c|admin.users|b.a|users.123|users.456");
    q.max_depth = 1;
    LIST(&q, "a|admin|b|users");
    /* a condition longer than the namespace does not match */
    q = lopts();
    q.suffix = (const char *const[]){"x", "a", "b", "c"};
    q.suffix_len = 4;
    LIST(&q, "");
    /* bad labels are refused; "*" is a pattern here */
    q = lopts();
    q.prefix = (const char *const[]){"a.b"};
    q.prefix_len = 1;
    assert_null(sst_store_list_namespaces(fx->st, &q, E));
    code_at(fx->err.code, SST_EINVAL, E, __FILE__, __LINE__);
    MSG_HAS("'a.b'");
}

static void case_list_paging(void **state) {
    fixture *fx = *state;
    fx_open(fx, 0, NULL, 0);
    for (int i = 19; i >= 0; i--) {
        char sub[16], key[16];
        snprintf(sub, sizeof sub, "sub_%02d", i);
        snprintf(key, sizeof key, "id_%02d", i);
        PUT((fx, NS("namespace", sub), key, "{\"data\":1}", NULL));
    }
    sst_store_list_opts q = lopts();
    q.prefix = (const char *const[]){"namespace"};
    q.prefix_len = 1;
    q.limit = 5;
    LIST(&q, "namespace.sub_00|namespace.sub_01|namespace.sub_02|namespace.sub_03|"
             "namespace.sub_04");
    q.offset = 15;
    LIST(&q, "namespace.sub_15|namespace.sub_16|namespace.sub_17|namespace.sub_18|"
             "namespace.sub_19");
    q = lopts();
    sst_value *all = sst_store_list_namespaces(fx->st, NULL, E);
    assert_int_equal(sst_array_len(all), 20);
    sst_value_unref(all);
    /* whole labels; a newline is part of a label; metacharacters are literal; a
     * namespace sorts before the longer ones it starts (Python's tuple order) */
    static const char *const spaces[] = {"foo",
                                         "foo.child",
                                         "foobar",
                                         "uid.users.alice",
                                         "uid.users.malice",
                                         "uid.a.b.alice",
                                         "q?m",
                                         "qXm",
                                         "br[ack]et",
                                         "a-b",
                                         "a.b"};
    put_spaces(fx, spaces, 11);
    PUT((fx, NS("users", "alice\n"), "k", "{\"v\":2}", NULL));
    PUT((fx, NS("users", "alice"), "k", "{\"v\":1}", NULL));
    q.prefix = (const char *const[]){"foo"};
    q.prefix_len = 1;
    LIST(&q, "foo|foo.child");
    q = lopts();
    q.suffix = (const char *const[]){"alice"};
    q.suffix_len = 1;
    LIST(&q, "uid.a.b.alice|uid.users.alice|users.alice");
    q = lopts();
    q.prefix = (const char *const[]){"uid", "*", "alice"};
    q.prefix_len = 3;
    LIST(&q, "uid.users.alice");
    q.prefix = (const char *const[]){"q?m"};
    q.prefix_len = 1;
    LIST(&q, "q?m");
    q.prefix = (const char *const[]){"br[ack]et"};
    LIST(&q, "br[ack]et");
    q = lopts();
    q.prefix = (const char *const[]){"a"};
    q.prefix_len = 1;
    q.suffix = (const char *const[]){"b"};
    q.suffix_len = 1;
    LIST(&q, "a.b");
    q = lopts();
    q.max_depth = 1;
    q.prefix = (const char *const[]){"a*"};
    q.prefix_len = 1;
    LIST(&q, "");
    q.prefix = NULL;
    q.prefix_len = 0;
    q.limit = 4;
    LIST(&q, "a|a-b|br[ack]et|foo");
}

/* ---- 7 vector search (test_store.py's vector tests, with CharacterEmbeddings(500)) ---- */

static sst_value *query_search(fixture *fx, const char *const *ns, size_t ns_len, const char *text,
                               const char *filter, size_t limit, size_t offset) {
    sst_store_search_opts q = query(ns, ns_len);
    q.query = text;
    q.limit = limit;
    q.offset = offset;
    sst_value *f = filter != NULL ? tu_json(filter) : NULL;
    q.filter = f;
    sst_value *r = search(fx, &q);
    sst_value_unref(f);
    return r;
}

static bool has_key(const sst_value *r, const char *key) {
    for (size_t i = 0; i < sst_array_len(r); i++) {
        if (strcmp(key_at(r, i), key) == 0) {
            return true;
        }
    }
    return false;
}

static void case_vector_basic(void **state) {
    fixture *fx = *state;
    fx_open(fx, 500, NULL, 0);
    static const char *const docs[][2] = {
        {"doc1", "{\"text\":\"short text\"}"},
        {"doc2", "{\"text\":\"longer text document\"}"},
        {"doc3", "{\"text\":\"longest text document here\"}"},
        {"doc4", "{\"description\":\"text in description field\"}"},
        {"doc5", "{\"content\":\"text in content field\"}"},
        {"doc6", "{\"body\":\"text in body field\"}"}};
    for (size_t i = 0; i < 6; i++) {
        PUT((fx, NS("test"), docs[i][0], docs[i][1], NULL));
    }
    sst_value *r = query_search(fx, NS("test"), "long text", NULL, 10, 0);
    assert_int_equal(sst_array_len(r), 6);
    assert_true(has_key(r, "doc2") && has_key(r, "doc3"));
    for (size_t i = 1; i < 6; i++) {
        assert_true(score_of(r, i - 1) >= score_of(r, i));
    }
    sst_value_unref(r);

    /* test_vector_update_with_embedding */
    fx_open(fx, 500, NULL, 0);
    PUT((fx, NS("u"), "doc1", "{\"text\":\"zany zebra Xerxes\"}", NULL));
    PUT((fx, NS("u"), "doc2", "{\"text\":\"something about dogs\"}", NULL));
    PUT((fx, NS("u"), "doc3", "{\"text\":\"text about birds\"}", NULL));
    r = query_search(fx, NS("u"), "Zany Xerxes", NULL, 10, 0);
    assert_string_equal(key_at(r, 0), "doc1");
    double initial = score_of(r, 0);
    sst_value_unref(r);
    PUT((fx, NS("u"), "doc1", "{\"text\":\"new text about dogs\"}", NULL));
    r = query_search(fx, NS("u"), "Zany Xerxes", NULL, 10, 0);
    double after = 0;
    for (size_t i = 0; i < sst_array_len(r); i++) {
        after = strcmp(key_at(r, i), "doc1") == 0 ? score_of(r, i) : after;
    }
    assert_true(after < initial);
    sst_value_unref(r);
    r = query_search(fx, NS("u"), "new text about dogs", NULL, 10, 0);
    assert_string_equal(key_at(r, 0), "doc1");
    assert_true(score_of(r, 0) > after);
    sst_value_unref(r);
    /* not indexed: never among the ranked ones */
    sst_store_put_opts po = {.no_index = true};
    PUT((fx, NS("u"), "doc4", "{\"text\":\"new text about dogs\"}", &po));
    r = query_search(fx, NS("u"), "new text about dogs", NULL, 3, 0);
    assert_int_equal(sst_array_len(r), 3);
    assert_false(has_key(r, "doc4"));
    sst_value_unref(r);
    /* ...but listed after them, with a null score (InMemoryStore) */
    r = query_search(fx, NS("u"), "new text about dogs", NULL, 10, 0);
    assert_string_equal(keys_of(r), "doc1,doc2,doc3,doc4");
    assert_true(sst_is_null(sst_object_get(sst_array_get(r, 3), "score")));
    sst_value_unref(r);
    r = query_search(fx, NS("u"), "new text about dogs", NULL, 2, 2);
    assert_string_equal(keys_of(r), "doc3,doc4");
    sst_value_unref(r);
}

static void case_vector_filters(void **state) {
    fixture *fx = *state;
    fx_open(fx, 500, NULL, 0);
    PUT((fx, NS("test"), "doc1", "{\"text\":\"red apple\",\"color\":\"red\",\"score\":4.5}", NULL));
    PUT((fx, NS("test"), "doc2", "{\"text\":\"red car\",\"color\":\"red\",\"score\":3.0}", NULL));
    PUT((fx, NS("test"), "doc3", "{\"text\":\"green apple\",\"color\":\"green\",\"score\":4.0}",
         NULL));
    PUT((fx, NS("test"), "doc4", "{\"text\":\"blue car\",\"color\":\"blue\",\"score\":3.5}", NULL));
    sst_value *r = query_search(fx, NS("test"), "apple", "{\"color\":\"red\"}", 10, 0);
    assert_int_equal(sst_array_len(r), 2);
    assert_string_equal(key_at(r, 0), "doc1");
    sst_value_unref(r);
    r = query_search(fx, NS("test"), "car", "{\"color\":\"red\"}", 10, 0);
    assert_int_equal(sst_array_len(r), 2);
    assert_string_equal(key_at(r, 0), "doc2");
    sst_value_unref(r);
    r = query_search(fx, NS("test"), "bbbbluuu", "{\"score\":{\"$gt\":3.2}}", 10, 0);
    assert_int_equal(sst_array_len(r), 3);
    assert_string_equal(key_at(r, 0), "doc4");
    assert_true(has_key(r, "doc1") && has_key(r, "doc3"));
    sst_value_unref(r);
    r = query_search(fx, NS("test"), "apple", "{\"score\":{\"$gte\":4.0},\"color\":\"green\"}", 10,
                     0);
    assert_string_equal(keys_of(r), "doc3");
    sst_value_unref(r);
    /* the filter applies before ranking: the best red item, not the best overall */
    r = query_search(fx, NS("test"), "blue car", NULL, 1, 0);
    assert_string_equal(keys_of(r), "doc4");
    sst_value_unref(r);
    r = query_search(fx, NS("test"), "blue car", "{\"color\":\"red\"}", 1, 0);
    assert_string_equal(keys_of(r), "doc1");
    sst_value_unref(r);

    /* test_vector_search_pagination */
    fx_open(fx, 500, NULL, 0);
    for (int i = 0; i < 5; i++) {
        char key[8], val[64];
        snprintf(key, sizeof key, "doc%d", i);
        snprintf(val, sizeof val, "{\"text\":\"test document number %d\"}", i);
        PUT((fx, NS("test"), key, val, NULL));
    }
    sst_value *p1 = query_search(fx, NS("test"), "test", NULL, 2, 0);
    sst_value *p2 = query_search(fx, NS("test"), "test", NULL, 2, 2);
    sst_value *all = query_search(fx, NS("test"), "test", NULL, 10, 0);
    assert_int_equal(sst_array_len(p1), 2);
    assert_int_equal(sst_array_len(p2), 2);
    assert_int_equal(sst_array_len(all), 5);
    for (size_t i = 0; i < 2; i++) {
        assert_string_equal(key_at(p1, i), key_at(all, i));
        assert_string_equal(key_at(p2, i), key_at(all, i + 2));
    }
    for (size_t i = 1; i < 5; i++) {
        assert_true(score_of(all, i - 1) >= score_of(all, i));
    }
    sst_value_unref(p1);
    sst_value_unref(p2);
    sst_value_unref(all);

    /* test_vector_search_edge_cases: an empty query is no query */
    r = query_search(fx, NS("test"), "", NULL, 10, 0);
    assert_int_equal(sst_array_len(r), 5);
    assert_true(sst_is_null(sst_object_get(sst_array_get(r, 0), "score")));
    sst_value_unref(r);
    char longq[600];
    for (int i = 0; i < 100; i++) {
        memcpy(longq + 5 * i, "test ", 5);
    }
    longq[500] = '\0';
    r = query_search(fx, NS("test"), longq, NULL, 10, 0);
    assert_int_equal(sst_array_len(r), 5);
    sst_value_unref(r);
    r = query_search(fx, NS("test"), "test!@#$%^&*()", NULL, 10, 0);
    assert_int_equal(sst_array_len(r), 5);
    sst_value_unref(r);
}

/* test_embed_with_path: several vectors per item, the score is the best of them */
static void case_vector_paths(void **state) {
    fixture *fx = *state;
    static const char *const fields[] = {"key0", "key1", "key3"};
    fx_open(fx, 500, fields, 3);
    PUT((fx, NS("test"), "doc1", "{\"key1\":\"xxx\",\"key2\":\"yyy\",\"key3\":\"zzz\"}", NULL));
    PUT((fx, NS("test"), "doc2",
         "{\"key0\":\"uuu\",\"key1\":\"vvv\",\"key2\":\"www\",\"key3\":\"xxx\"}", NULL));
    sst_value *r = query_search(fx, NS("test"), "xxx", NULL, 10, 0);
    assert_int_equal(sst_array_len(r), 2);
    double ascore = score_of(r, 0);
    assert_true(fabs(ascore - score_of(r, 1)) < 1e-5);
    assert_true(ascore > 0.999); /* the same text: cosine 1 */
    sst_value_unref(r);
    r = query_search(fx, NS("test"), "uuu", NULL, 10, 0);
    assert_string_equal(keys_of(r), "doc2,doc1");
    assert_true(score_of(r, 0) > score_of(r, 1));
    assert_true(fabs(ascore - score_of(r, 0)) < 1e-5);
    sst_value_unref(r);
    r = query_search(fx, NS("test"), "zzz", NULL, 10, 0);
    assert_string_equal(keys_of(r), "doc1,doc2");
    sst_value_unref(r);
    r = query_search(fx, NS("test"), "www", NULL, 10, 0); /* key2 is not indexed */
    assert_int_equal(sst_array_len(r), 2);
    assert_true(score_of(r, 0) < ascore && score_of(r, 1) < ascore);
    sst_value_unref(r);

    /* per-put fields override the store's */
    static const char *const k17[] = {"key17"};
    fx_open(fx, 500, k17, 1);
    static const char *const f01[] = {"key0", "key1"}, *const f13[] = {"key1", "key3"};
    sst_store_put_opts po = {.index_fields = f01, .n_index_fields = 2};
    PUT((fx, NS("test2"), "doc3",
         "{\"key0\":\"aaa\",\"key1\":\"bbb\",\"key2\":\"ccc\",\"key3\":\"ddd\"}", &po));
    po.index_fields = f13;
    PUT((fx, NS("test2"), "doc4",
         "{\"key0\":\"eee\",\"key1\":\"bbb\",\"key2\":\"fff\",\"key3\":\"ggg\"}", &po));
    r = query_search(fx, NS("test2"), "aaa", NULL, 10, 0);
    assert_string_equal(keys_of(r), "doc3,doc4");
    assert_true(score_of(r, 0) > score_of(r, 1));
    sst_value_unref(r);
    r = query_search(fx, NS("test2"), "ggg", NULL, 10, 0);
    assert_string_equal(keys_of(r), "doc4,doc3");
    sst_value_unref(r);
    r = query_search(fx, NS("test2"), "bbb", NULL, 10, 0);
    assert_int_equal(sst_array_len(r), 2);
    assert_true(score_of(r, 0) == score_of(r, 1)); /* equal vectors, equal scores */
    assert_string_equal(keys_of(r), "doc4,doc3");  /* a tie: newest first */
    sst_value_unref(r);
    r = query_search(fx, NS("test2"), "ccc", NULL, 10, 0);
    assert_true(score_of(r, 0) < ascore && score_of(r, 1) < ascore);
    sst_value_unref(r);
    po = (sst_store_put_opts){.no_index = true};
    PUT((fx, NS("test2"), "doc5", "{\"key0\":\"hhh\",\"key1\":\"iii\"}", &po));
    r = query_search(fx, NS("test2"), "hhh", NULL, 10, 0);
    assert_int_equal(sst_array_len(r), 3);
    assert_string_equal(key_at(r, 2), "doc5");
    assert_true(sst_is_null(sst_object_get(sst_array_get(r, 2), "score")));
    sst_value_unref(r);
    /* an item whose fields are all missing has no vectors either; unranked items
     * come newest first */
    PUT((fx, NS("test2"), "doc6", "{\"other\":\"hhh\"}", NULL));
    r = query_search(fx, NS("test2"), "hhh", NULL, 10, 0);
    assert_int_equal(sst_array_len(r), 4);
    assert_string_equal(key_at(r, 2), "doc6");
    assert_string_equal(key_at(r, 3), "doc5");
    sst_value_unref(r);
}

/*
 * test_scores: the score is the cosine similarity, checked against the
 * values LangGraph's own CharacterEmbeddings gives in Python for the same
 * call sequence (a fresh embedder; "aaa" embedded, then the query).
 */
static void case_vector_scores(void **state) {
    fixture *fx = *state;
    static const struct {
        const char *query;
        double cosine;
    } ref[] = {{"aaa", 1.0000000000000002},
               {"bbb", 0.00483153426522536},
               {"ccc", 0.00483153426522536},
               {"abcd", 0.47284775305891485},
               {"poisson", -0.031094396773767505}};
    static const char *const key0[] = {"key0"}, *const f01[] = {"key0", "key1"};
    for (size_t i = 0; i < (sizeof ref / sizeof ref[0]); i++) {
        charemb_free(&fx->emb);
        charemb_init(&fx->emb, 500);
        fx_open(fx, 500, key0, 1);
        sst_store_put_opts po = {.index_fields = f01, .n_index_fields = 2};
        PUT((fx, NS("test"), "doc", "{\"key0\":\"aaa\"}", &po));
        sst_value *r = query_search(fx, NO_NS, ref[i].query, NULL, 10, 0);
        assert_int_equal(sst_array_len(r), 1);
        if (fabs(score_of(r, 0) - ref[i].cosine) > 1e-6) {
            fail_msg("query '%s': score %.9f, LangGraph's %.9f", ref[i].query, score_of(r, 0),
                     ref[i].cosine);
        }
        sst_value_unref(r);
    }
    /* the embedder is LangGraph's to the last bit (values from Python) */
    charemb_free(&fx->emb);
    charemb_init(&fx->emb, 500);
    double v[500];
    embed_one(&fx->emb, "hello w\xc3\xb6rld \xf0\x9f\x98\x80", v);
    assert_true(v[0] == 0.06687440717945058 && v[1] == 0.007263964211677178 &&
                v[499] == -0.005222235096996752);
}

/* test_non_ascii */
static void case_non_ascii(void **state) {
    fixture *fx = *state;
    fx_open(fx, 500, NULL, 0);
    static const char *const texts[] = {"这是中文", "これは日本語です", "이건 한국어야",
                                        "Это русский", "यह रूसी है"};
    for (size_t i = 0; i < 5; i++) {
        char key[4], val[128];
        snprintf(key, sizeof key, "%zu", i + 1);
        snprintf(val, sizeof val, "{\"text\":\"%s\"}", texts[i]);
        PUT((fx, NS("user_123", "memories"), key, val, NULL));
    }
    for (size_t i = 0; i < 5; i++) {
        sst_value *r = query_search(fx, NS("user_123", "memories"), texts[i], NULL, 10, 0);
        char key[4];
        snprintf(key, sizeof key, "%zu", i + 1);
        assert_string_equal(key_at(r, 0), key);
        sst_value_unref(r);
    }
    /* labels, keys and values round-trip */
    PUT((fx, NS("ユーザー", "記憶 ✓"), "ключ", "{\"t\":\"é\\u0000x\"}", NULL));
    sst_value *item = get_item(fx, NS("ユーザー", "記憶 ✓"), "ключ", -1);
    assert_json_eq(item, "{\"namespace\":[\"ユーザー\",\"記憶 ✓\"],\"key\":\"ключ\","
                         "\"value\":{\"t\":\"é\\u0000x\"},"
                         "\"created_at\":\"2023-11-14T22:13:20.123456+00:00\","
                         "\"updated_at\":\"2023-11-14T22:13:20.123456+00:00\"}");
    sst_value_unref(item);
    sst_store_list_opts q = lopts();
    q.prefix = (const char *const[]){"ユーザー"};
    q.prefix_len = 1;
    LIST(&q, "ユーザー.記憶 ✓");
}

/* ---- 8 field paths: the texts the hook receives (from LangGraph's get_text_at_path) ---- */

static const char k_paths_doc[] =
    "{\"name\":\"test\",\"info\":{\"age\":25,\"tags\":[\"a\",\"b\",\"c\"],\"metadata\":{"
    "\"created\":\"2024-01-01\",\"updated\":\"2024-01-02\"}},\"items\":[{\"id\":1,\"value\":"
    "\"first\",\"tags\":[\"x\",\"y\"]},{\"id\":2,\"value\":\"second\",\"tags\":[\"y\",\"z\"]},"
    "{\"id\":3,\"value\":\"third\",\"tags\":[\"z\",\"w\"]}],\"empty\":null,\"zeros\":[0,0.0,"
    "\"0\"],\"empty_list\":[],\"empty_dict\":{},\"nums\":[1.5,1e-05,1e16,1e15,0.0001,-0.0,"
    "123456789.125,2.5e-300,true,false],\"uni\":\"caf\\u00e9 \\\"q\\\" \\\\ \\n\\t\\u0001 "
    "\\u2028 \\ud83d\\ude00\",\"$\":{\"x\":\"dollar\"},\"a\":{\"b\":[{\"c\":\"c1\"},{\"d\":"
    "\"no\"},{\"c\":[\"c2\"]},{\"c\":null},{\"c\":7}]}}";

/* path, then the distinct texts it yields, each followed by \x1e (from Python) */
static const char *const k_path_cases[][2] = {
    {"$", "{\"$\": {\"x\": \"dollar\"}, \"a\": {\"b\": [{\"c\": \"c1\"}, {\"d\": \"no\"}, {\"c\": "
          "[\"c2\"]}, {\"c\": null}, {\"c\": 7}]}, \"empty\": null, \"empty_dict\": {}, "
          "\"empty_list\": [], \"info\": {\"age\": 25, \"metadata\": {\"created\": \"2024-01-01\", "
          "\"updated\": \"2024-01-02\"}, \"tags\": [\"a\", \"b\", \"c\"]}, \"items\": [{\"id\": 1, "
          "\"tags\": [\"x\", \"y\"], \"value\": \"first\"}, {\"id\": 2, \"tags\": [\"y\", \"z\"], "
          "\"value\": \"second\"}, {\"id\": 3, \"tags\": [\"z\", \"w\"], \"value\": \"third\"}], "
          "\"name\": \"test\", \"nums\": [1.5, 1e-05, 1e+16, 1000000000000000.0, 0.0001, -0.0, "
          "123456789.125, 2.5e-300, true, false], \"uni\": \"caf\xc3"
          "\xa9"
          " \\\"q\\\" \\\\ \\n\\t\\u0001 \xe2"
          "\x80"
          "\xa8"
          " \xf0"
          "\x9f"
          "\x98"
          "\x80"
          "\", \"zeros\": [0, 0.0, \"0\"]}\x1e"
          ""},
    {"name", "test\x1e"
             ""},
    {"info.age", "25\x1e"
                 ""},
    {"items[-1].value", "third\x1e"
                        ""},
    {"items[1].tags[0]", "y\x1e"
                         ""},
    {"items[*].value", "first\x1e"
                       "second\x1e"
                       "third\x1e"
                       ""},
    {"info.metadata.*", "2024-01-01\x1e"
                        "2024-01-02\x1e"
                        ""},
    {"{name,info.age}", "test\x1e"
                        "25\x1e"
                        ""},
    {"items[*].{id,value}", "1\x1e"
                            "first\x1e"
                            "2\x1e"
                            "second\x1e"
                            "3\x1e"
                            "third\x1e"
                            ""},
    {"items[*].tags[*]", "x\x1e"
                         "y\x1e"
                         "z\x1e"
                         "w\x1e"
                         ""},
    {"zeros[*]", "0\x1e"
                 "0.0\x1e"
                 ""},
    {"nums[*]", "1.5\x1e"
                "1e-05\x1e"
                "1e+16\x1e"
                "1000000000000000.0\x1e"
                "0.0001\x1e"
                "-0.0\x1e"
                "123456789.125\x1e"
                "2.5e-300\x1e"
                "True\x1e"
                "False\x1e"
                ""},
    {"uni", "caf\xc3"
            "\xa9"
            " \"q\" \\ \n\t\x01"
            " \xe2"
            "\x80"
            "\xa8"
            " \xf0"
            "\x9f"
            "\x98"
            "\x80"
            "\x1e"
            ""},
    {"empty", ""},
    {"empty_list", "[]\x1e"
                   ""},
    {"empty_dict", "{}\x1e"
                   ""},
    {"$.x", "dollar\x1e"
            ""},
    {"$.name", ""},
    {"items[].value", ""},
    {"items[abc].value", ""},
    {"{unclosed", ""},
    {"nested[{invalid}]", ""},
    {"items[ 1 ].value", "second\x1e"
                         ""},
    {"items[-4].value", ""},
    {"info", "{\"age\": 25, \"metadata\": {\"created\": \"2024-01-01\", \"updated\": "
             "\"2024-01-02\"}, \"tags\": [\"a\", \"b\", \"c\"]}\x1e"
             ""},
    {"items[0]", "{\"id\": 1, \"tags\": [\"x\", \"y\"], \"value\": \"first\"}\x1e"
                 ""},
    {".", "{\"$\": {\"x\": \"dollar\"}, \"a\": {\"b\": [{\"c\": \"c1\"}, {\"d\": \"no\"}, {\"c\": "
          "[\"c2\"]}, {\"c\": null}, {\"c\": 7}]}, \"empty\": null, \"empty_dict\": {}, "
          "\"empty_list\": [], \"info\": {\"age\": 25, \"metadata\": {\"created\": \"2024-01-01\", "
          "\"updated\": \"2024-01-02\"}, \"tags\": [\"a\", \"b\", \"c\"]}, \"items\": [{\"id\": 1, "
          "\"tags\": [\"x\", \"y\"], \"value\": \"first\"}, {\"id\": 2, \"tags\": [\"y\", \"z\"], "
          "\"value\": \"second\"}, {\"id\": 3, \"tags\": [\"z\", \"w\"], \"value\": \"third\"}], "
          "\"name\": \"test\", \"nums\": [1.5, 1e-05, 1e+16, 1000000000000000.0, 0.0001, -0.0, "
          "123456789.125, 2.5e-300, true, false], \"uni\": \"caf\xc3"
          "\xa9"
          " \\\"q\\\" \\\\ \\n\\t\\u0001 \xe2"
          "\x80"
          "\xa8"
          " \xf0"
          "\x9f"
          "\x98"
          "\x80"
          "\", \"zeros\": [0, 0.0, \"0\"]}\x1e"
          ""},
    {"", "{\"$\": {\"x\": \"dollar\"}, \"a\": {\"b\": [{\"c\": \"c1\"}, {\"d\": \"no\"}, {\"c\": "
         "[\"c2\"]}, {\"c\": null}, {\"c\": 7}]}, \"empty\": null, \"empty_dict\": {}, "
         "\"empty_list\": [], \"info\": {\"age\": 25, \"metadata\": {\"created\": \"2024-01-01\", "
         "\"updated\": \"2024-01-02\"}, \"tags\": [\"a\", \"b\", \"c\"]}, \"items\": [{\"id\": 1, "
         "\"tags\": [\"x\", \"y\"], \"value\": \"first\"}, {\"id\": 2, \"tags\": [\"y\", \"z\"], "
         "\"value\": \"second\"}, {\"id\": 3, \"tags\": [\"z\", \"w\"], \"value\": \"third\"}], "
         "\"name\": \"test\", \"nums\": [1.5, 1e-05, 1e+16, 1000000000000000.0, 0.0001, -0.0, "
         "123456789.125, 2.5e-300, true, false], \"uni\": \"caf\xc3"
         "\xa9"
         " \\\"q\\\" \\\\ \\n\\t\\u0001 \xe2"
         "\x80"
         "\xa8"
         " \xf0"
         "\x9f"
         "\x98"
         "\x80"
         "\", \"zeros\": [0, 0.0, \"0\"]}\x1e"
         ""},
    {"a.b[*].c", "c1\x1e"
                 "[\"c2\"]\x1e"
                 "7\x1e"
                 ""},
    {"items[*].tags", "[\"x\", \"y\"]\x1e"
                      "[\"y\", \"z\"]\x1e"
                      "[\"z\", \"w\"]\x1e"
                      ""},
    {"info.tags[-1]", "c\x1e"
                      ""},
    {"items[1_0].value", ""},
    {"items[0_1].value", "second\x1e"
                         ""},

};

static void case_field_paths(void **state) {
    fixture *fx = *state;
    fx_open(fx, 500, NULL, 0);
    for (size_t i = 0; i < sizeof k_path_cases / sizeof k_path_cases[0]; i++) {
        fx->emb.seen[0] = '\0';
        size_t calls = fx->emb.calls;
        const char *fields[1] = {k_path_cases[i][0]};
        sst_store_put_opts po = {.index_fields = fields, .n_index_fields = 1};
        PUT((fx, NS("paths"), "doc", k_paths_doc, &po));
        if (strcmp(fx->emb.seen, k_path_cases[i][1]) != 0) {
            fail_msg("path '%s': the hook got \"%s\", LangGraph's texts are \"%s\"",
                     k_path_cases[i][0], fx->emb.seen, k_path_cases[i][1]);
        }
        assert_int_equal(fx->emb.calls,
                         calls + (k_path_cases[i][1][0] != '\0')); /* one call a put */
    }
    /* the store's fields (default "$"), deduplicated across fields */
    static const char *const fields[] = {"name", "info.metadata.created", "name", "zeros[*]"};
    fx_open(fx, 500, fields, 4);
    fx->emb.seen[0] = '\0';
    PUT((fx, NS("paths"), "doc", k_paths_doc, NULL));
    assert_string_equal(fx->emb.seen, "test\x1e"
                                      "2024-01-01\x1e"
                                      "0\x1e"
                                      "0.0\x1e");
    fx_open(fx, 500, NULL, 0);
    fx->emb.seen[0] = '\0';
    PUT((fx, NS("paths"), "doc", "{\"b\":1,\"a\":[true,null,\"x\"]}", NULL));
    assert_string_equal(fx->emb.seen, "{\"a\": [true, null, \"x\"], \"b\": 1}\x1e");
    /* no_index and stores without an index never call the hook */
    size_t calls = fx->emb.calls;
    sst_store_put_opts po = {.no_index = true};
    PUT((fx, NS("paths"), "doc", k_paths_doc, &po));
    fx_open(fx, 0, NULL, 0);
    PUT((fx, NS("paths"), "doc", k_paths_doc, NULL));
    sst_store_search_opts q = query(NS("paths"));
    q.query = "test";
    SEARCH_KEYS(&q, "doc");
    assert_int_equal(fx->emb.calls, calls);
}

/* ---- 9 TTL (test_ttl.py, with a test clock instead of sleeping) ---- */

static size_t sweep(fixture *fx) {
    size_t removed = 99;
    OK(sst_store_sweep_ttl(fx->st, &removed, E));
    return removed;
}

static void case_ttl(void **state) {
    fixture *fx = *state;
    fx->opts.default_ttl_minutes = 1;
    fx_open(fx, 0, NULL, 0);
    assert_int_equal(sweep(fx), 0);
    PUT((fx, NS("test"), "item1", "{\"value\":\"default\"}", NULL));
    sst_store_put_opts po = {.ttl_minutes = 3};
    PUT((fx, NS("test"), "item2", "{\"value\":\"long\"}", &po));
    po.ttl_minutes = SST_STORE_TTL_NONE;
    PUT((fx, NS("test"), "item3", "{\"value\":\"permanent\"}", &po));
    advance(fx, MINUTE / 2);
    assert_int_equal(sweep(fx), 0);
    assert_true(present(fx, NS("test"), "item1"));
    sst_value_unref(get_item(fx, NS("test"), "item1", 1)); /* refreshed: now + 1 min */
    advance(fx, MINUTE * 3 / 4);
    assert_int_equal(sweep(fx), 0);
    assert_true(present(fx, NS("test"), "item1")); /* refresh 0: not refreshed */
    advance(fx, MINUTE / 2);
    /* expired but not swept: still read (omit_expired is off, as in LangGraph) */
    assert_true(present(fx, NS("test"), "item1"));
    assert_int_equal(sweep(fx), 1);
    assert_false(present(fx, NS("test"), "item1"));
    assert_true(present(fx, NS("test"), "item2"));
    advance(fx, MINUTE * 2);
    assert_int_equal(sweep(fx), 1);
    assert_false(present(fx, NS("test"), "item2"));
    assert_true(present(fx, NS("test"), "item3"));
    /* the store's refresh_on_read (default true) */
    PUT((fx, NS("r"), "x", "{}", NULL));
    advance(fx, MINUTE * 3 / 4);
    sst_value_unref(get_item(fx, NS("r"), "x", -1));
    advance(fx, MINUTE * 3 / 4);
    assert_int_equal(sweep(fx), 0);
    /* searches refresh what they return (test_async_asearch_refresh_ttl) */
    po.ttl_minutes = 4;
    PUT((fx, NS("docs", "user1"), "item1", "{\"text\":\"content1\",\"id\":1}", &po));
    PUT((fx, NS("docs", "user1"), "item2", "{\"text\":\"content2\",\"id\":2}", &po));
    advance(fx, MINUTE * 3);
    sst_value *f = tu_json("{\"id\":1}");
    sst_store_search_opts q = query(NS("docs", "user1"));
    q.filter = f;
    q.refresh_ttl = 1;
    SEARCH_KEYS(&q, "item1");
    sst_value_unref(f);
    advance(fx, MINUTE * 2);
    assert_int_equal(sweep(fx), 2); /* item2 and r/x */
    assert_true(present(fx, NS("docs", "user1"), "item1"));
    assert_false(present(fx, NS("docs", "user1"), "item2"));
    advance(fx, MINUTE * 5 / 2);
    assert_int_equal(sweep(fx), 1);
    assert_false(present(fx, NS("docs", "user1"), "item1"));
    /* bad TTLs */
    po.ttl_minutes = -5;
    FAILS(put_json(fx, NS("test"), "bad", "{}", &po), SST_EINVAL);
    MSG_HAS("ttl_minutes");
    po.ttl_minutes = NAN;
    FAILS(put_json(fx, NS("test"), "bad", "{}", &po), SST_EINVAL);
    assert_false(present(fx, NS("test"), "bad"));
}

static void case_ttl_options(void **state) {
    fixture *fx = *state;
    /* refresh_on_read false: reads refresh only when asked */
    fx->opts.default_ttl_minutes = 1;
    fx->opts.refresh_on_read = false;
    fx_open(fx, 0, NULL, 0);
    PUT((fx, NS("t"), "a", "{}", NULL));
    PUT((fx, NS("t"), "b", "{}", NULL));
    advance(fx, MINUTE / 2);
    sst_value_unref(get_item(fx, NS("t"), "a", -1));
    sst_value_unref(get_item(fx, NS("t"), "b", 1));
    sst_store_search_opts q = query(NS("t"));
    SEARCH_KEYS(&q, "b,a");
    advance(fx, MINUTE * 3 / 4);
    assert_int_equal(sweep(fx), 1);
    assert_true(present(fx, NS("t"), "b"));
    /* omit_expired: expired items are not read before they are swept */
    fx->opts.omit_expired = true;
    fx->opts.refresh_on_read = true;
    fx_open(fx, 0, NULL, 0);
    PUT((fx, NS("o", "x"), "a", "{}", NULL));
    sst_store_put_opts po = {.ttl_minutes = SST_STORE_TTL_NONE};
    PUT((fx, NS("o", "y"), "b", "{}", &po));
    advance(fx, MINUTE * 2);
    assert_false(present(fx, NS("o", "x"), "a"));
    q = query(NS("o"));
    SEARCH_KEYS(&q, "b");
    sst_store_list_opts l = lopts();
    LIST(&l, "o.y");
    /* the background sweeper */
    fx->opts.omit_expired = false;
    fx->opts.sweep_interval_minutes = 0.001; /* 60 ms */
    fx_open(fx, 0, NULL, 0);
    PUT((fx, NS("s"), "gone", "{}", NULL));
    advance(fx, MINUTE * 2);
    bool swept = false;
    for (int i = 0; i < 300 && !swept; i++) {
        swept = !present(fx, NS("s"), "gone");
        usleep(10000);
    }
    assert_true(swept);
}

/* ---- 10 embed hook failures ---- */

static void case_embed_failures(void **state) {
    fixture *fx = *state;
    fx_open(fx, 500, NULL, 0);
    PUT((fx, NS("e"), "a", "{\"text\":\"first\"}", NULL));
    fx->emb.fail = 1;
    FAILS(put_json(fx, NS("e"), "b", "{\"text\":\"second\"}", NULL), SST_EUNAVAILABLE);
    MSG_HAS("embed hook");
    MSG_HAS("quota exceeded for model 'fake'");
    FAILS(put_json(fx, NS("e"), "a", "{\"text\":\"changed\"}", NULL), SST_EUNAVAILABLE);
    sst_store_search_opts q = query(NS("e"));
    q.query = "first";
    assert_null(sst_store_search(fx->st, &q, E));
    code_at(fx->err.code, SST_EUNAVAILABLE, E, __FILE__, __LINE__);
    MSG_HAS("store search: embed hook");
    fx->emb.fail = 2;
    FAILS(put_json(fx, NS("e"), "c", "{\"text\":\"nan\"}", NULL), SST_ERANGE);
    MSG_HAS("non-finite");
    fx->emb.fail = 3;
    FAILS(put_json(fx, NS("e"), "c", "{\"text\":\"unfilled\"}", NULL), SST_ERANGE);
    fx->emb.fail = 0;
    /* nothing was stored: b and c are absent, a kept its value and vector */
    assert_false(present(fx, NS("e"), "b"));
    assert_false(present(fx, NS("e"), "c"));
    sst_value *item = get_item(fx, NS("e"), "a", 0);
    assert_json_eq(sst_object_get(item, "value"), "{\"text\":\"first\"}");
    sst_value_unref(item);
    sst_value *r = query_search(fx, NS("e"), "{\"text\": \"first\"}", NULL, 10, 0);
    assert_true(score_of(r, 0) > 0.999);
    sst_value_unref(r);
    /* puts without texts to embed, or with no_index, do not need the hook */
    fx->emb.fail = 1;
    sst_store_put_opts po = {.no_index = true};
    PUT((fx, NS("e"), "d", "{\"text\":\"x\"}", &po));
    static const char *const missing[] = {"nothing.here"};
    po = (sst_store_put_opts){.index_fields = missing, .n_index_fields = 1};
    PUT((fx, NS("e"), "f", "{\"text\":\"x\"}", &po));
    fx->emb.fail = 0;
}

/* ---- 12 argument checks ---- */

static void case_arguments(void **state) {
    fixture *fx = *state;
    fx_open(fx, 0, NULL, 0);
    sst_value *obj = tu_json("{}");
    FAILS(sst_store_put(NULL, NS("a"), "k", obj, NULL, E), SST_EINVAL);
    FAILS(sst_store_put(fx->st, NULL, 2, "k", obj, NULL, E), SST_EINVAL);
    FAILS(sst_store_delete(NULL, NS("a"), "k", E), SST_EINVAL);
    FAILS(sst_store_delete(fx->st, NS("a"), NULL, E), SST_EINVAL);
    assert_null(sst_store_get(NULL, NS("a"), "k", -1, E));
    assert_null(sst_store_get(fx->st, NS("a"), "\xc3", -1, E));
    MSG_HAS("UTF-8");
    assert_null(sst_store_search(NULL, NULL, E));
    sst_store_search_opts q = query(NULL, 1);
    assert_null(sst_store_search(fx->st, &q, E));
    q = query(NO_NS);
    q.query = "\xff";
    assert_null(sst_store_search(fx->st, &q, E));
    assert_null(sst_store_list_namespaces(NULL, NULL, E));
    FAILS(sst_store_sweep_ttl(NULL, NULL, E), SST_EINVAL);
    OK(sst_store_sweep_ttl(fx->st, NULL, E));
    /* errors are optional */
    assert_int_equal(sst_store_put(fx->st, NS("a", ""), "k", obj, NULL, NULL), SST_EINVAL);
    assert_null(sst_store_get(fx->st, NS("a."), "k", -1, NULL));
    OK(sst_store_put(fx->st, NS("a"), "k", obj, NULL, NULL));
    sst_value *v = sst_store_get(fx->st, NS("a"), "k", -1, NULL);
    assert_non_null(v);
    sst_value_unref(v);
    v = sst_store_search(fx->st, NULL, NULL);
    assert_int_equal(sst_array_len(v), 1);
    sst_value_unref(v);
    v = sst_store_list_namespaces(fx->st, NULL, NULL);
    assert_json_eq(v, "[[\"a\"]]");
    sst_value_unref(v);
    sst_value_unref(obj);
    assert_int_equal(sst_store_dims(fx->st), 0);
    assert_non_null(sst_store_self(fx->st));
}

/* ---- 13 threads ---- */

typedef struct worker {
    fixture *fx;
    int id;
    int failures;
    char msg[SST_ERROR_MSG_MAX];
} worker;

#define ROUNDS 40

static void worker_fail(worker *w, const sst_error *err) {
    if (w->failures++ == 0) {
        snprintf(w->msg, sizeof w->msg, "%s", err->msg);
    }
}

/* Puts its own items and shared ones, searches, reads and deletes, all at once with others. */
static void *worker_main(void *arg) {
    worker *w = arg;
    sst_store *st = w->fx->st;
    sst_error err;
    char own[16], key[16], val[96];
    snprintf(own, sizeof own, "w%d", w->id);
    for (int i = 0; i < ROUNDS; i++) {
        snprintf(key, sizeof key, "k%d", i);
        snprintf(val, sizeof val, "{\"text\":\"worker %d item %d\",\"i\":%d,\"w\":%d}", w->id, i, i,
                 w->id);
        sst_value *v = tu_json(val);
        if (sst_store_put(st, NS("threads", own), key, v, NULL, &err) != SST_OK ||
            sst_store_put(st, NS("threads", "shared"), key, v, NULL, &err) != SST_OK) {
            worker_fail(w, &err);
        }
        sst_value_unref(v);
        sst_value *f = tu_json("{\"i\":{\"$lt\":20}}");
        sst_store_search_opts q = query(NS("threads"));
        q.query = i % 2 ? "worker item" : NULL;
        q.filter = i % 3 ? f : NULL;
        sst_value *r = sst_store_search(st, &q, &err);
        sst_value *g = sst_store_get(st, NS("threads", own), key, -1, &err);
        if (r == NULL || g == NULL || sst_is_null(g)) {
            worker_fail(w, &err);
        }
        sst_value_unref(r);
        sst_value_unref(g);
        sst_value_unref(f);
        if (i % 4 == 3 && sst_store_delete(st, NS("threads", own), key, &err) != SST_OK) {
            worker_fail(w, &err);
        }
        sst_value *l = sst_store_list_namespaces(st, NULL, &err);
        if (l == NULL) {
            worker_fail(w, &err);
        }
        sst_value_unref(l);
    }
    return NULL;
}

static void case_threads(void **state) {
    fixture *fx = *state;
    charemb_free(&fx->emb);
    charemb_init(&fx->emb, 64);
    fx_open(fx, 64, NULL, 0);
    enum { N = 4 };
    pthread_t tids[N];
    worker ws[N];
    for (int i = 0; i < N; i++) {
        ws[i] = (worker){.fx = fx, .id = i};
        assert_int_equal(pthread_create(&tids[i], NULL, worker_main, &ws[i]), 0);
    }
    for (int i = 0; i < N; i++) {
        pthread_join(tids[i], NULL);
        if (ws[i].failures > 0) {
            fail_msg("worker %d: %d failures, first: %s", i, ws[i].failures, ws[i].msg);
        }
    }
    /* every worker's survivors are there, the deleted ones are not */
    for (int w = 0; w < N; w++) {
        char own[16], key[16];
        snprintf(own, sizeof own, "w%d", w);
        for (int i = 0; i < ROUNDS; i++) {
            snprintf(key, sizeof key, "k%d", i);
            assert_int_equal(present(fx, NS("threads", own), key), i % 4 != 3);
        }
    }
    sst_store_search_opts q = query(NS("threads", "shared"));
    q.limit = 1000;
    sst_value *r = search(fx, &q);
    assert_int_equal(sst_array_len(r), ROUNDS);
    sst_value_unref(r);
    q = query(NS("threads"));
    q.query = "worker 2 item 7";
    q.limit = 1000;
    r = search(fx, &q);
    assert_int_equal(sst_array_len(r), ROUNDS + N * (ROUNDS - ROUNDS / 4));
    sst_value_unref(r);
}

/* A cheap deterministic hook for many items: a seeded xorshift per text. */
static sst_code noise_fn(void *ud, const char *const *texts, size_t n, size_t dims, float *out,
                         sst_error *err) {
    (void)ud, (void)err;
    for (size_t t = 0; t < n; t++) {
        uint64_t x = 1469598103934665603ull;
        for (const char *p = texts[t]; *p != '\0'; p++) {
            x = (x ^ (unsigned char)*p) * 1099511628211ull;
        }
        x |= 1;
        for (size_t i = 0; i < dims; i++) {
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            out[t * dims + i] =
                (float)((double)((x * 2685821657736338717ull) >> 40) / 8388608.0 - 1);
        }
    }
    return SST_OK;
}

/* Above the size where ranking splits over threads: the same results with one or two. */
static void case_parallel_ranking(void **state) {
    fixture *fx = *state;
    enum { ITEMS = 4200, DIMS = 1024 }; /* 4.3 M floats */
    sst_store *st[2];
    for (int k = 0; k < 2; k++) {
        sst_store_opts o = fx->opts;
        o.index.dims = DIMS;
        o.index.embed = noise_fn;
        o.search_threads = (size_t)k + 1;
        st[k] = fx->be->open(fx->dir, &o, E);
        assert_non_null(st[k]);
        sst_value *all = sst_store_search(st[k], NULL, E);
        bool empty = sst_array_len(all) == 0;
        sst_value_unref(all);
        for (int i = 0; empty && i < ITEMS; i++) {
            char key[16], val[64];
            snprintf(key, sizeof key, "k%d", i);
            snprintf(val, sizeof val, "{\"text\":\"item %d\",\"g\":%d}", i, i % 7);
            sst_value *v = tu_json(val);
            OK(sst_store_put(st[k], NS("big", i % 2 ? "odd" : "even"), key, v, NULL, E));
            sst_value_unref(v);
        }
    }
    static const char *const queries[] = {"{\"g\": 0, \"text\": \"item 77\"}", "anything",
                                          "item 5"};
    for (size_t i = 0; i < 3; i++) {
        sst_value *f = i == 2 ? tu_json("{\"g\":{\"$gte\":5}}") : NULL;
        sst_value *r[2];
        for (int k = 0; k < 2; k++) {
            sst_store_search_opts q = query(NS("big"));
            q.query = queries[i];
            q.filter = f;
            q.limit = 25;
            r[k] = sst_store_search(st[k], &q, E);
            assert_non_null(r[k]);
        }
        assert_int_equal(sst_array_len(r[0]), 25);
        assert_true(sst_value_equal(r[0], r[1]));
        for (size_t j = 1; j < 25; j++) {
            assert_true(score_of(r[0], j - 1) >= score_of(r[0], j));
        }
        if (i == 0) {
            assert_string_equal(key_at(r[0], 0), "k77"); /* its own text scores 1 */
            assert_true(score_of(r[0], 0) > 0.999);
        }
        sst_value_unref(r[0]);
        sst_value_unref(r[1]);
        sst_value_unref(f);
    }
    sst_store_free(st[0]);
    sst_store_free(st[1]);
}

/* ---- 15 allocation failures (STYLE rule 40) ---- */

/* One store call under test: true when it succeeded. */
typedef bool (*chaos_op)(fixture *fx, sst_error *err);

/* The values the calls use, made before the allocator fails. */
static sst_value *g_oom_new, *g_oom_update, *g_oom_filter;

static bool op_put_new(fixture *fx, sst_error *err) {
    static const char *const f[] = {"text", "tags[*]"};
    sst_store_put_opts po = {.index_fields = f, .n_index_fields = 2, .ttl_minutes = 5};
    return sst_store_put(fx->st, NS("oom", "fresh"), "new", g_oom_new, &po, err) == SST_OK;
}

static bool op_put_update(fixture *fx, sst_error *err) {
    return sst_store_put(fx->st, NS("oom", "old"), "k1", g_oom_update, NULL, err) == SST_OK;
}

static bool op_search(fixture *fx, sst_error *err) {
    sst_store_search_opts q = query(NS("oom"));
    q.query = "memory";
    q.filter = g_oom_filter;
    sst_value *r = sst_store_search(fx->st, &q, err);
    sst_value_unref(r);
    return r != NULL;
}

static bool op_get(fixture *fx, sst_error *err) {
    sst_value *r = sst_store_get(fx->st, NS("oom", "old"), "k1", 1, err);
    sst_value_unref(r);
    return r != NULL;
}

static bool op_list(fixture *fx, sst_error *err) {
    sst_store_list_opts l = lopts();
    l.suffix = (const char *const[]){"*"};
    l.suffix_len = 1;
    l.max_depth = 1;
    sst_value *r = sst_store_list_namespaces(fx->st, &l, err);
    sst_value_unref(r);
    return r != NULL;
}

static bool op_delete(fixture *fx, sst_error *err) {
    return sst_store_delete(fx->st, NS("oom", "old"), "k2", err) == SST_OK;
}

static bool op_sweep(fixture *fx, sst_error *err) {
    return sst_store_sweep_ttl(fx->st, NULL, err) == SST_OK;
}

/* The store as the checks see it: every item's value, in order. */
static char *snapshot(fixture *fx) {
    sst_store_search_opts q = query(NO_NS);
    q.limit = 100;
    q.refresh_ttl = 0;
    sst_value *r = search(fx, &q);
    char *text = sst_json_write(r, SST_JSON_CANONICAL, NULL, NULL);
    sst_value_unref(r);
    char *copy = strdup(text);
    sst_free(text);
    return copy;
}

/* Fails the n-th allocation for n = 1, 2, ... until @p op succeeds: each failure
 * must be SST_ENOMEM, leak nothing and leave what the store shows unchanged. */
static void chaos_loop(fixture *fx, const char *name, chaos_op op, bool allocates) {
    char *before = snapshot(fx);
    long baseline = tu_chaos_live();
    for (long n = 1;; n++) {
        sst_error err;
        sst_error_clear(&err);
        tu_chaos_fail_at(n);
        bool ok = op(fx, &err);
        int fired = tu_chaos_fired();
        tu_chaos_off();
        if (!fired) {
            if (!ok) {
                fail_msg("%s: failed without an allocation failure: %s", name, err.msg);
            }
            assert_true(n > 1 || !allocates); /* the loop tested something */
            break;
        }
        if (ok) {
            continue; /* absorbed (a best-effort allocation): fine if the result is right */
        }
        if (err.code != SST_ENOMEM) {
            fail_msg("%s: allocation %ld failed with %s: %s", name, n, sst_code_name(err.code),
                     err.msg);
        }
        if (tu_chaos_live() != baseline) {
            fail_msg("%s: allocation %ld failed and %ld blocks leaked", name, n,
                     tu_chaos_live() - baseline);
        }
        char *after = snapshot(fx);
        if (strcmp(before, after) != 0) {
            fail_msg("%s: allocation %ld failed and the store changed", name, n);
        }
        free(after);
    }
    free(before);
}

static void case_out_of_memory(void **state) {
    fixture *fx = *state;
    fx_open(fx, 500, NULL, 0);
    PUT((fx, NS("oom", "old"), "k1", "{\"text\":\"an old memory\"}", NULL));
    PUT((fx, NS("oom", "old"), "k2", "{\"text\":\"another old memory\"}", NULL));
    g_oom_new = tu_json("{\"text\":\"a brand new memory\",\"tags\":[\"x\",\"y\"]}");
    g_oom_update = tu_json("{\"text\":\"an updated memory\"}");
    g_oom_filter = tu_json("{\"text\":{\"$ne\":\"zzz\"}}");
    chaos_loop(fx, "put (new)", op_put_new, true);
    chaos_loop(fx, "put (update)", op_put_update, true);
    chaos_loop(fx, "search", op_search, true);
    chaos_loop(fx, "get", op_get, true);
    chaos_loop(fx, "list_namespaces", op_list, true);
    chaos_loop(fx, "delete", op_delete, false);
    advance(fx, MINUTE * 6);
    chaos_loop(fx, "sweep", op_sweep, false);
    sst_store_search_opts q = query(NO_NS);
    SEARCH_KEYS(&q, "k1");
    sst_value_unref(g_oom_new);
    sst_value_unref(g_oom_update);
    sst_value_unref(g_oom_filter);
}

/* ---- 14 persistence ---- */

static void case_persistence(void **state) {
    fixture *fx = *state;
    if (!fx->be->reopen) {
        skip();
    }
    fx->opts.default_ttl_minutes = 10;
    fx_open(fx, 500, NULL, 0);
    PUT((fx, NS("p", "a"), "one", "{\"text\":\"the first one\"}", NULL));
    advance(fx, 1000);
    PUT((fx, NS("p", "b"), "two", "{\"text\":\"a second\"}", NULL));
    advance(fx, 1000);
    sst_store_put_opts po = {.no_index = true, .ttl_minutes = SST_STORE_TTL_NONE};
    PUT((fx, NS("p"), "three", "{\"text\":\"third\"}", &po));
    sst_value *before = query_search(fx, NS("p"), "first", NULL, 10, 0);
    sst_value *item_before = get_item(fx, NS("p", "a"), "one", 0);
    fx_open(fx, 500, NULL, 0); /* reopen */
    sst_value *after = query_search(fx, NS("p"), "first", NULL, 10, 0);
    assert_string_equal(keys_of(after), "one,two,three");
    assert_true(sst_value_equal(before, after));
    sst_value *item_after = get_item(fx, NS("p", "a"), "one", 0);
    assert_true(sst_value_equal(item_before, item_after));
    sst_value_unref(before);
    sst_value_unref(after);
    sst_value_unref(item_before);
    sst_value_unref(item_after);
    /* the write order and TTLs survive: an update after reopening goes first */
    po = (sst_store_put_opts){.ttl_minutes = SST_STORE_TTL_NONE};
    PUT((fx, NS("p", "a"), "one", "{\"text\":\"changed\"}", &po));
    sst_store_search_opts q = query(NS("p"));
    SEARCH_KEYS(&q, "one,three,two");
    advance(fx, MINUTE * 11);
    assert_int_equal(sweep(fx), 1);
    SEARCH_KEYS(&q, "one,three");
    OK(sst_store_delete(fx->st, NS("p"), "three", E));
    fx_open(fx, 500, NULL, 0);
    SEARCH_KEYS(&q, "one");
    sst_store_list_opts l = lopts();
    LIST(&l, "p.a");
    /* opened without an index, the vectors stay in the file for later */
    fx_open(fx, 0, NULL, 0);
    SEARCH_KEYS(&q, "one");
    fx_open(fx, 500, NULL, 0);
    sst_value *r = query_search(fx, NS("p"), "{\"text\": \"changed\"}", NULL, 10, 0);
    assert_true(score_of(r, 0) > 0.999);
    sst_value_unref(r);
}

/* ---- once: SQLite files ---- */

typedef struct sqfix {
    char dir[64];
    char path[128];
    sst_error err;
} sqfix;

static int sq_setup(void **state) {
    sqfix *f = calloc(1, sizeof *f);
    if (tu_temp_dir("store-sq", f->dir, sizeof f->dir) != 0) {
        free(f);
        return -1;
    }
    snprintf(f->path, sizeof f->path, "%s/file.db", f->dir);
    *state = f;
    return 0;
}

static int sq_teardown(void **state) {
    sqfix *f = *state;
    int rc = tu_rm_rf(f->dir);
    free(f);
    return rc;
}

static void write_file(const char *path, const char *text) {
    FILE *fp = fopen(path, "wb");
    assert_non_null(fp);
    fputs(text, fp);
    fclose(fp);
}

static void sql(const char *path, const char *stmts) {
    sqlite3 *db;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, stmts, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
}

static void check_checkpoints(sst_checkpointer *cp, sst_error *err) {
    sst_checkpoint rec = {.format = SST_CHECKPOINT_FORMAT,
                          .thread_id = "t1",
                          .ns = "",
                          .id = "c0001",
                          .source = "loop",
                          .created_at = 1700000000000,
                          .body = {.data = "{\"x\":1}", .len = 7},
                          .metadata = {.data = "{}", .len = 2}};
    tu_assert_ok(sst_checkpointer_put(cp, &rec, false, err), err, __FILE__, __LINE__);
    sst_checkpoint *got = sst_checkpointer_get(cp, "t1", "", NULL, err);
    assert_non_null(got);
    assert_string_equal(got->id, "c0001");
    sst_checkpoint_free(got);
}

static void check_store(sst_store *st, const char *key, size_t want, sst_error *err) {
    sst_value *v = tu_json("{\"memory\":\"likes tea\"}");
    tu_assert_ok(sst_store_put(st, NS("user", "1"), key, v, NULL, err), err, __FILE__, __LINE__);
    sst_value_unref(v);
    sst_value *r = sst_store_search(st, NULL, err);
    assert_non_null(r);
    assert_int_equal(sst_array_len(r), want);
    sst_value_unref(r);
}

/* One file holds checkpoints and a store, whichever is opened first, both working. */
static void sqlite_shared_file(void **state) {
    sqfix *f = *state;
    sst_checkpointer *cp = sst_sqlite_saver_open(f->path, NULL, &f->err);
    assert_non_null(cp);
    sst_store *st = sst_sqlite_store_new(f->path, NULL, &f->err);
    if (st == NULL) {
        fail_msg("store on a checkpointer's file: %s", f->err.msg);
    }
    check_checkpoints(cp, &f->err);
    check_store(st, "a", 1, &f->err);
    sst_store_free(st);
    sst_checkpointer_free(cp);
    /* the store first, in a new file */
    char path2[160];
    snprintf(path2, sizeof path2, "%s/store-first.db", f->dir);
    st = sst_sqlite_store_new(path2, NULL, &f->err);
    assert_non_null(st);
    check_store(st, "a", 1, &f->err);
    cp = sst_sqlite_saver_open(path2, NULL, &f->err);
    if (cp == NULL) {
        fail_msg("checkpointer on a store's file: %s", f->err.msg);
    }
    check_checkpoints(cp, &f->err);
    check_store(st, "b", 2, &f->err);
    sst_checkpointer_free(cp);
    sst_store_free(st);
    /* both again, reopened */
    cp = sst_sqlite_saver_open(path2, NULL, &f->err);
    st = sst_sqlite_store_new(path2, NULL, &f->err);
    assert_non_null(cp);
    assert_non_null(st);
    check_store(st, "c", 3, &f->err);
    sst_checkpoint *got = sst_checkpointer_get(cp, "t1", "", NULL, &f->err);
    assert_non_null(got);
    sst_checkpoint_free(got);
    sst_checkpointer_free(cp);
    sst_store_free(st);
}

static void expect_open_error(sqfix *f, const char *path, const sst_store_opts *o,
                              const char *words) {
    sst_store *st = sst_sqlite_store_new(path, o, &f->err);
    if (st != NULL) {
        sst_store_free(st);
        fail_msg("opening '%s' should fail", path);
    }
    code_at(f->err.code, SST_EIO, &f->err, __FILE__, __LINE__);
    msg_has_at(&f->err, path, __FILE__, __LINE__);
    msg_has_at(&f->err, words, __FILE__, __LINE__);
}

/* Damaged, foreign and newer files: a clear error naming the file, no crash, no write. */
static void sqlite_bad_files(void **state) {
    sqfix *f = *state;
    write_file(f->path, "this is not a database, just some text that is long enough........"
                        "..................................................................");
    expect_open_error(f, f->path, NULL, "not a usable SQLite database");
    char *text = tu_read_file(f->path, NULL);
    assert_true(strncmp(text, "this is not", 11) == 0); /* untouched */
    free(text);
    /* another application's database (LangGraph's own SqliteStore file, say) */
    char other[160];
    snprintf(other, sizeof other, "%s/other.db", f->dir);
    sql(other, "CREATE TABLE store(prefix TEXT, key TEXT, value TEXT)");
    expect_open_error(f, other, NULL, "not a superstep database");
    /* a newer store schema */
    char newer[160];
    snprintf(newer, sizeof newer, "%s/newer.db", f->dir);
    sst_store *st = sst_sqlite_store_new(newer, NULL, &f->err);
    assert_non_null(st);
    sst_store_free(st);
    sql(newer, "UPDATE store_meta SET value = 7 WHERE key = 'schema'");
    expect_open_error(f, newer, NULL, "newer than this build");
    /* a store whose pages are damaged: an error naming the file, never a crash */
    char damaged[160];
    snprintf(damaged, sizeof damaged, "%s/damaged.db", f->dir);
    st = sst_sqlite_store_new(damaged, NULL, &f->err);
    assert_non_null(st);
    for (int i = 0; i < 300; i++) {
        char key[16];
        snprintf(key, sizeof key, "k%d", i);
        sst_value *v = tu_json("{\"text\":\"some value long enough to fill the pages of the "
                               "file with rows\"}");
        tu_assert_ok(sst_store_put(st, NS("d", "x"), key, v, NULL, &f->err), &f->err, __FILE__,
                     __LINE__);
        sst_value_unref(v);
    }
    sst_store_free(st);
    FILE *fp = fopen(damaged, "r+b");
    assert_non_null(fp);
    fseek(fp, 4096 * 2, SEEK_SET); /* after the schema page */
    for (int i = 0; i < 4096 * 8; i++) {
        fputc(0xAB, fp);
    }
    fclose(fp);
    expect_open_error(f, damaged, NULL, "malformed");
    /* a directory, a missing directory */
    expect_open_error(f, f->dir, NULL, "");
    char missing[160];
    snprintf(missing, sizeof missing, "%s/no/such/dir/x.db", f->dir);
    expect_open_error(f, missing, NULL, "cannot open");
    /* vectors of another size than the index */
    char dims[160];
    snprintf(dims, sizeof dims, "%s/dims.db", f->dir);
    charemb emb;
    charemb_init(&emb, 500);
    sst_store_opts o;
    sst_store_opts_init(&o);
    o.index.dims = 500;
    o.index.embed = charemb_fn;
    o.index.embed_user_data = &emb;
    st = sst_sqlite_store_new(dims, &o, &f->err);
    assert_non_null(st);
    sst_value *v = tu_json("{\"text\":\"x\"}");
    tu_assert_ok(sst_store_put(st, NS("d"), "k", v, NULL, &f->err), &f->err, __FILE__, __LINE__);
    sst_value_unref(v);
    sst_store_free(st);
    o.index.dims = 64;
    expect_open_error(f, dims, &o, "500-dim vectors");
    charemb_free(&emb);
    /* bad options fail before the file is touched */
    o.index.embed = NULL;
    char untouched[160];
    snprintf(untouched, sizeof untouched, "%s/untouched.db", f->dir);
    assert_null(sst_sqlite_store_new(untouched, &o, &f->err));
    code_at(f->err.code, SST_EINVAL, &f->err, __FILE__, __LINE__);
    assert_int_equal(access(untouched, F_OK), -1);
}

/* A read-only file: reads work, writes fail with an error naming the file. */
static void sqlite_read_only(void **state) {
    sqfix *f = *state;
    sst_store *st = sst_sqlite_store_new(f->path, NULL, &f->err);
    assert_non_null(st);
    check_store(st, "a", 1, &f->err);
    sst_store_free(st);
    char uri[200];
    snprintf(uri, sizeof uri, "file:%s?mode=ro", f->path);
    st = sst_sqlite_store_new(uri, NULL, &f->err);
    if (st == NULL) {
        fail_msg("read-only open: %s", f->err.msg);
    }
    sst_value *r = sst_store_search(st, NULL, &f->err);
    assert_int_equal(sst_array_len(r), 1);
    sst_value_unref(r);
    sst_value *item = sst_store_get(st, NS("user", "1"), "a", 1, &f->err);
    assert_non_null(item);
    sst_value_unref(item);
    sst_value *v = tu_json("{}");
    code_at(sst_store_put(st, NS("user", "1"), "b", v, NULL, &f->err), SST_EIO, &f->err, __FILE__,
            __LINE__);
    msg_has_at(&f->err, "readonly", __FILE__, __LINE__);
    code_at(sst_store_delete(st, NS("user", "1"), "a", &f->err), SST_EIO, &f->err, __FILE__,
            __LINE__);
    sst_value_unref(v);
    r = sst_store_search(st, NULL, &f->err); /* the failed writes changed nothing */
    assert_int_equal(sst_array_len(r), 1);
    sst_value_unref(r);
    sst_store_free(st);
    /* a read-only file without the store tables */
    char empty[160], empty_uri[200];
    snprintf(empty, sizeof empty, "%s/cp.db", f->dir);
    sst_checkpointer *cp = sst_sqlite_saver_open(empty, NULL, &f->err);
    assert_non_null(cp);
    sst_checkpointer_free(cp);
    snprintf(empty_uri, sizeof empty_uri, "file:%s?mode=ro", empty);
    expect_open_error(f, empty_uri, NULL, "read-only");
}

/* Two handles on one file (as two processes): each sees the other's writes. */
static void sqlite_two_handles(void **state) {
    sqfix *f = *state;
    charemb emb;
    charemb_init(&emb, 500);
    sst_store_opts o;
    sst_store_opts_init(&o);
    o.index.dims = 500;
    o.index.embed = charemb_fn;
    o.index.embed_user_data = &emb;
    sst_store *a = sst_sqlite_store_new(f->path, &o, &f->err);
    sst_store *b = sst_sqlite_store_new(f->path, &o, &f->err);
    assert_non_null(a);
    assert_non_null(b);
    sst_value *v = tu_json("{\"text\":\"apples and pears\"}");
    tu_assert_ok(sst_store_put(a, NS("x"), "k1", v, NULL, &f->err), &f->err, __FILE__, __LINE__);
    sst_value_unref(v);
    sst_store_search_opts q;
    sst_store_search_opts_init(&q);
    q.query = "apples";
    sst_value *r = sst_store_search(b, &q, &f->err);
    assert_string_equal(keys_of(r), "k1");
    assert_true(score_of(r, 0) > 0.5);
    sst_value_unref(r);
    tu_assert_ok(sst_store_delete(b, NS("x"), "k1", &f->err), &f->err, __FILE__, __LINE__);
    r = sst_store_search(a, &q, &f->err);
    assert_string_equal(keys_of(r), "");
    sst_value_unref(r);
    v = tu_json("{\"text\":\"pears\"}");
    tu_assert_ok(sst_store_put(b, NS("x"), "k2", v, NULL, &f->err), &f->err, __FILE__, __LINE__);
    tu_assert_ok(sst_store_put(a, NS("y"), "k3", v, NULL, &f->err), &f->err, __FILE__, __LINE__);
    sst_value_unref(v);
    sst_value *la = sst_store_list_namespaces(a, NULL, &f->err);
    sst_value *lb = sst_store_list_namespaces(b, NULL, &f->err);
    assert_json_eq(la, "[[\"x\"],[\"y\"]]");
    assert_json_eq(lb, "[[\"x\"],[\"y\"]]");
    sst_value_unref(la);
    sst_value_unref(lb);
    sst_store_free(a);
    sst_store_free(b);
    charemb_free(&emb);
}

/* ---- once: PostgreSQL ---- */

typedef struct pgfix {
    char url[600]; /* a fresh schema of its own */
    sst_error err;
    charemb emb;
} pgfix;

static int pg_setup(void **state) {
    pgfix *f = calloc(1, sizeof *f);
    if (f == NULL || tu_pg_fresh("store_pg", f->url, sizeof f->url) != 0) {
        free(f);
        return -1;
    }
    charemb_init(&f->emb, 500);
    *state = f;
    return 0;
}

static int pg_teardown(void **state) {
    pgfix *f = *state;
    int rc = pg_drop_schema(f->url);
    charemb_free(&f->emb);
    free(f);
    return rc;
}

/* The time of both stores of a case (two processes agreeing on the time). */
static _Atomic int64_t g_pg_now = T0;

static int64_t pg_clock(void *ud) {
    (void)ud;
    return atomic_load(&g_pg_now);
}

/* Options with an index of @p dims on the member "text" (0: no index) and the case's clock. */
static sst_store_opts pg_opts(pgfix *f, size_t dims) {
    static const char *const fields[] = {"text"};
    sst_store_opts o;
    sst_store_opts_init(&o);
    o.index.dims = dims;
    o.index.fields = fields;
    o.index.n_fields = 1;
    o.index.embed = dims > 0 ? charemb_fn : NULL;
    o.index.embed_user_data = &f->emb;
    o.clock = pg_clock;
    return o;
}

/* In a PostgreSQL case (a local `f`): the call succeeds. */
#define PG_OK(call) tu_assert_ok((call), &f->err, __FILE__, __LINE__)

static void pg_put(pgfix *f, sst_store *st, const char *const *ns, size_t ns_len, const char *key,
                   const char *json, const sst_store_put_opts *o) {
    sst_value *v = tu_json(json);
    PG_OK(sst_store_put(st, ns, ns_len, key, v, o, &f->err));
    sst_value_unref(v);
}

/* The value member of item (ns, key) in @p st as compact JSON ("null" when absent). */
static char *pg_value(pgfix *f, sst_store *st, const char *const *ns, size_t ns_len,
                      const char *key) {
    sst_value *item = sst_store_get(st, ns, ns_len, key, 0, &f->err);
    if (item == NULL) {
        fail_msg("get %s: %s", key, f->err.msg);
    }
    const sst_value *v = sst_is_null(item) ? item : sst_object_get(item, "value");
    char *text = sst_json_write(v, SST_JSON_CANONICAL, NULL, NULL);
    char *copy = strdup(text);
    sst_free(text);
    sst_value_unref(item);
    return copy;
}

static sst_value *pg_search(pgfix *f, sst_store *st, const char *const *prefix, size_t prefix_len,
                            const char *query, const char *filter) {
    sst_store_search_opts q;
    sst_store_search_opts_init(&q);
    q.prefix = prefix;
    q.prefix_len = prefix_len;
    q.query = query;
    sst_value *fv = filter != NULL ? tu_json(filter) : NULL;
    q.filter = fv;
    sst_value *r = sst_store_search(st, &q, &f->err);
    sst_value_unref(fv);
    if (r == NULL) {
        fail_msg("search: %s", f->err.msg);
    }
    return r;
}

static void pg_list_is(pgfix *f, sst_store *st, const char *want) {
    sst_value *l = sst_store_list_namespaces(st, NULL, &f->err);
    if (l == NULL) {
        fail_msg("list_namespaces: %s", f->err.msg);
    }
    assert_json_eq(l, want);
    sst_value_unref(l);
}

/* A writer of racing puts: the same keys, values with 1 to 3 tags (vectors). */
typedef struct pg_racer {
    pgfix *f;
    sst_store *st;
    int id;
    int failures;
    char msg[SST_ERROR_MSG_MAX];
} pg_racer;

#define PG_RACE_ROUNDS 15
#define PG_RACE_KEYS   4

static void *pg_racer_main(void *arg) {
    pg_racer *w = arg;
    static const char *const tags[] = {"tags[*]"};
    sst_store_put_opts po = {.index_fields = tags, .n_index_fields = 1};
    for (int i = 0; i < PG_RACE_ROUNDS; i++) {
        char key[16], json[160];
        snprintf(key, sizeof key, "k%d", i % PG_RACE_KEYS);
        int k = 1 + (w->id + i) % 3;
        snprintf(json, sizeof json, "{\"w\":%d,\"tags\":[\"w%d r%d a\"%s%s]}", w->id, w->id, i,
                 k > 1 ? ",\"b\"" : "", k > 2 ? ",\"c\"" : "");
        sst_value *v = tu_json(json);
        sst_error err;
        if (sst_store_put(w->st, NS("race"), key, v, &po, &err) != SST_OK && w->failures++ == 0) {
            snprintf(w->msg, sizeof w->msg, "%s", err.msg);
        }
        sst_value_unref(v);
    }
    return NULL;
}

/*
 * Two stores on one schema, each with its own pool (as two processes would
 * have): each sees the other's writes at its next call, vector search
 * included, and racing puts of the same items from both leave every item
 * with exactly the vectors of its value.
 */
static void postgres_two_processes(void **state) {
    pgfix *f = *state;
    atomic_store(&g_pg_now, T0);
    sst_store_opts o = pg_opts(f, 500);
    sst_store *a = sst_postgres_store_new(f->url, &o, &f->err);
    if (a == NULL) {
        fail_msg("open: %s", f->err.msg);
    }
    sst_store *b = sst_postgres_store_new(f->url, &o, &f->err);
    assert_non_null(b);
    /* put in one, get, search and list in the other */
    pg_put(f, a, NS("users", "1"), "k1", "{\"text\":\"apples and pears\",\"n\":1}", NULL);
    char *v = pg_value(f, b, NS("users", "1"), "k1");
    assert_string_equal(v, "{\"n\":1,\"text\":\"apples and pears\"}");
    free(v);
    atomic_fetch_add(&g_pg_now, 1000);
    pg_put(f, b, NS("users", "2"), "k2", "{\"text\":\"the weather in Paris\",\"n\":2}", NULL);
    sst_value *r = pg_search(f, a, NS("users"), NULL, NULL);
    assert_string_equal(keys_of(r), "k2,k1");
    sst_value_unref(r);
    r = pg_search(f, a, NS("users"), NULL, "{\"n\":{\"$gte\":2}}");
    assert_string_equal(keys_of(r), "k2");
    sst_value_unref(r);
    r = pg_search(f, a, NO_NS, "weather in Paris", NULL);
    assert_string_equal(keys_of(r), "k2,k1");
    assert_true(score_of(r, 0) > score_of(r, 1));
    sst_value_unref(r);
    r = pg_search(f, b, NO_NS, "apples", NULL);
    assert_string_equal(keys_of(r), "k1,k2");
    assert_true(score_of(r, 0) > 0.5);
    sst_value_unref(r);
    pg_list_is(f, a, "[[\"users\",\"1\"],[\"users\",\"2\"]]");
    pg_list_is(f, b, "[[\"users\",\"1\"],[\"users\",\"2\"]]");
    /* an update in b: a reads the new value, created_at kept, and it is the newest write */
    sst_value *before = sst_store_get(a, NS("users", "1"), "k1", 0, &f->err);
    atomic_fetch_add(&g_pg_now, 1000);
    pg_put(f, b, NS("users", "1"), "k1", "{\"text\":\"the weather in Rome\",\"n\":3}", NULL);
    sst_value *after = sst_store_get(a, NS("users", "1"), "k1", 0, &f->err);
    assert_non_null(before);
    assert_non_null(after);
    assert_json_eq(sst_object_get(after, "value"), "{\"text\":\"the weather in Rome\",\"n\":3}");
    assert_true(
        sst_value_equal(sst_object_get(before, "created_at"), sst_object_get(after, "created_at")));
    assert_false(
        sst_value_equal(sst_object_get(before, "updated_at"), sst_object_get(after, "updated_at")));
    sst_value_unref(before);
    sst_value_unref(after);
    r = pg_search(f, a, NS("users"), NULL, NULL);
    assert_string_equal(keys_of(r), "k1,k2");
    sst_value_unref(r);
    r = pg_search(f, a, NO_NS, "the weather in Rome", NULL); /* its new vector, not the old */
    assert_string_equal(keys_of(r), "k1,k2");
    assert_true(score_of(r, 0) > 0.999);
    sst_value_unref(r);
    /* a delete in a: gone for b, and so is its namespace */
    PG_OK(sst_store_delete(a, NS("users", "2"), "k2", &f->err));
    v = pg_value(f, b, NS("users", "2"), "k2");
    assert_string_equal(v, "null");
    free(v);
    r = pg_search(f, b, NO_NS, "weather in Paris", NULL);
    assert_string_equal(keys_of(r), "k1");
    sst_value_unref(r);
    pg_list_is(f, b, "[[\"users\",\"1\"]]");
    /* TTLs: a read in b refreshes the item for a's sweep; b's sweep sees a's expiry */
    sst_store_put_opts po = {.ttl_minutes = 1, .no_index = true};
    pg_put(f, a, NS("ttl"), "t", "{}", &po);
    atomic_fetch_add(&g_pg_now, MINUTE * 3 / 4);
    sst_value_unref(sst_store_get(b, NS("ttl"), "t", 1, &f->err));
    atomic_fetch_add(&g_pg_now, MINUTE / 2);
    size_t removed = 9;
    PG_OK(sst_store_sweep_ttl(a, &removed, &f->err));
    assert_int_equal(removed, 0);
    atomic_fetch_add(&g_pg_now, MINUTE);
    PG_OK(sst_store_sweep_ttl(b, &removed, &f->err));
    assert_int_equal(removed, 1);
    v = pg_value(f, a, NS("ttl"), "t");
    assert_string_equal(v, "null");
    free(v);
    /* racing puts from both pools, two threads each */
    enum { N = 4 };
    pg_racer ws[N];
    pthread_t tids[N];
    for (int i = 0; i < N; i++) {
        ws[i] = (pg_racer){.f = f, .st = i % 2 ? b : a, .id = i};
        assert_int_equal(pthread_create(&tids[i], NULL, pg_racer_main, &ws[i]), 0);
    }
    for (int i = 0; i < N; i++) {
        pthread_join(tids[i], NULL);
        if (ws[i].failures > 0) {
            fail_msg("racer %d: %d failures, first: %s", i, ws[i].failures, ws[i].msg);
        }
    }
    r = pg_search(f, b, NS("race"), "anything", NULL);
    assert_int_equal(sst_array_len(r), PG_RACE_KEYS);
    sst_value_unref(r);
    /* each item has as many vectors as its value has tags: no put was torn */
    assert_int_equal(tu_pg_exec(f->url,
                                "DO $$BEGIN IF EXISTS (SELECT 1 FROM sst_store_items i WHERE"
                                " (SELECT count(*) FROM sst_store_vectors v WHERE v.ns = i.ns AND"
                                " v.key = i.key) <> jsonb_array_length(convert_from(i.value,"
                                " 'UTF8')::jsonb -> 'tags') AND i.ns = '{race}')"
                                " THEN RAISE EXCEPTION 'torn put'; END IF; END$$"),
                     0);
    sst_store_free(a);
    sst_store_free(b);
}

/* Tables at a newer schema version are refused with SST_ENOTSUP, and nothing is changed. */
static void postgres_newer_schema(void **state) {
    pgfix *f = *state;
    sst_store *st = sst_postgres_store_new(f->url, NULL, &f->err);
    if (st == NULL) {
        fail_msg("open: %s", f->err.msg);
    }
    pg_put(f, st, NS("kept"), "k", "{\"a\":1}", NULL);
    sst_store_free(st);
    char sql[400];
    snprintf(sql, sizeof sql, "UPDATE sst_schema SET version = %d WHERE component = 'store'",
             SST_STORE_POSTGRES_SCHEMA_VERSION + 1);
    assert_int_equal(tu_pg_exec(f->url, sql), 0);
    assert_null(sst_postgres_store_new(f->url, NULL, &f->err));
    code_at(f->err.code, SST_ENOTSUP, &f->err, __FILE__, __LINE__);
    msg_has_at(&f->err, "newer", __FILE__, __LINE__);
    msg_has_at(&f->err, "store", __FILE__, __LINE__);
    msg_has_at(&f->err, "127.0.0.1", __FILE__, __LINE__); /* names the database */
    snprintf(sql, sizeof sql,
             "DO $$BEGIN IF (SELECT version FROM sst_schema WHERE component = 'store') <> %d"
             " OR (SELECT count(*) FROM sst_store_items) <> 1"
             " THEN RAISE EXCEPTION 'changed'; END IF; END$$",
             SST_STORE_POSTGRES_SCHEMA_VERSION + 1);
    assert_int_equal(tu_pg_exec(f->url, sql), 0);
    /* this build's version again: the item is there */
    snprintf(sql, sizeof sql, "UPDATE sst_schema SET version = %d WHERE component = 'store'",
             SST_STORE_POSTGRES_SCHEMA_VERSION);
    assert_int_equal(tu_pg_exec(f->url, sql), 0);
    st = sst_postgres_store_new(f->url, NULL, &f->err);
    assert_non_null(st);
    char *v = pg_value(f, st, NS("kept"), "k");
    assert_string_equal(v, "{\"a\":1}");
    free(v);
    sst_store_free(st);
    /* a schema whose store is newer but has no tables here: none are made */
    char url2[600];
    assert_int_equal(tu_pg_fresh("store_pg", url2, sizeof url2), 0);
    snprintf(sql, sizeof sql,
             "CREATE TABLE sst_schema(component text PRIMARY KEY, version integer NOT NULL);"
             " INSERT INTO sst_schema VALUES ('store', %d)",
             SST_STORE_POSTGRES_SCHEMA_VERSION + 1);
    assert_int_equal(tu_pg_exec(url2, sql), 0);
    assert_null(sst_postgres_store_new(url2, NULL, &f->err));
    code_at(f->err.code, SST_ENOTSUP, &f->err, __FILE__, __LINE__);
    assert_int_equal(tu_pg_exec(url2, "DO $$BEGIN IF to_regclass('sst_store_items') IS NOT NULL OR"
                                      " to_regclass('sst_store_seq') IS NOT NULL"
                                      " THEN RAISE EXCEPTION 'created'; END IF; END$$"),
                     0);
    assert_int_equal(pg_drop_schema(url2), 0);
}

/* Vectors of another size than the index's are refused on opening (SST_EIO naming dims). */
static void postgres_vector_size(void **state) {
    pgfix *f = *state;
    sst_store_opts o = pg_opts(f, 500);
    sst_store *st = sst_postgres_store_new(f->url, &o, &f->err);
    if (st == NULL) {
        fail_msg("open: %s", f->err.msg);
    }
    pg_put(f, st, NS("v"), "k", "{\"text\":\"some words\"}", NULL);
    sst_store_free(st);
    charemb small;
    charemb_init(&small, 64);
    o.index.dims = 64;
    o.index.embed_user_data = &small;
    assert_null(sst_postgres_store_new(f->url, &o, &f->err));
    code_at(f->err.code, SST_EIO, &f->err, __FILE__, __LINE__);
    msg_has_at(&f->err, "500-dim", __FILE__, __LINE__);
    msg_has_at(&f->err, "dims 64", __FILE__, __LINE__);
    charemb_free(&small);
    /* without an index it opens, and the vectors stay for later */
    o = pg_opts(f, 0);
    st = sst_postgres_store_new(f->url, &o, &f->err);
    assert_non_null(st);
    sst_store_free(st);
    o = pg_opts(f, 500);
    st = sst_postgres_store_new(f->url, &o, &f->err);
    assert_non_null(st);
    sst_value *r = pg_search(f, st, NO_NS, "some words", NULL);
    assert_true(score_of(r, 0) > 0.999);
    sst_value_unref(r);
    sst_store_free(st);
}

/* A store on a pool shared with other backends holds its own reference; bad arguments. */
static void postgres_shared_pool(void **state) {
    pgfix *f = *state;
    sst_pg *pg = sst_pg_open(f->url, NULL, &f->err);
    if (pg == NULL) {
        fail_msg("pool: %s", f->err.msg);
    }
    sst_store *st = sst_postgres_store_new_pg(pg, NULL, &f->err);
    assert_non_null(st);
    sst_pg_release(pg); /* the store keeps the pool */
    pg_put(f, st, NS("p"), "k", "{\"b\":[1,2]}", NULL);
    char *v = pg_value(f, st, NS("p"), "k");
    assert_string_equal(v, "{\"b\":[1,2]}");
    free(v);
    sst_store_free(st);
    assert_null(sst_postgres_store_new_pg(NULL, NULL, &f->err));
    code_at(f->err.code, SST_EINVAL, &f->err, __FILE__, __LINE__);
    /* nothing listens on port 1: refused at once, naming the server */
    assert_null(sst_postgres_store_new("postgresql://u@127.0.0.1:1/db", NULL, &f->err));
    code_at(f->err.code, SST_EUNAVAILABLE, &f->err, __FILE__, __LINE__);
    msg_has_at(&f->err, "127.0.0.1:1", __FILE__, __LINE__);
    sst_store_opts o;
    sst_store_opts_init(&o);
    o.index.dims = 8; /* without embed */
    assert_null(sst_postgres_store_new(f->url, &o, &f->err));
    code_at(f->err.code, SST_EINVAL, &f->err, __FILE__, __LINE__);
}

/* The test server's URL with database @p db in place of its own; false when it cannot. */
static bool pg_db_url(const char *db, char *out, size_t n) {
    const char *base = tu_pg_url(), *scheme = base != NULL ? strstr(base, "://") : NULL;
    const char *path = scheme != NULL ? strchr(scheme + 3, '/') : NULL;
    if (path == NULL) {
        return false;
    }
    const char *query = strchr(path, '?');
    return (size_t)snprintf(out, n, "%.*s/%s%s", (int)(path - base), base, db,
                            query != NULL ? query : "") < n;
}

/* Ends every connection to database @p db but the caller's (at least one: the store's). */
static void pg_cut(const char *db) {
    char sql[300];
    snprintf(sql, sizeof sql,
             "DO $$BEGIN IF (SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
             " WHERE datname = '%s' AND pid <> pg_backend_pid()) < 1"
             " THEN RAISE EXCEPTION 'no connection to cut'; END IF; END$$",
             db);
    assert_int_equal(tu_pg_exec(tu_pg_url(), sql), 0);
}

/*
 * Every call survives its connections being cut before it (a server
 * restart, a network cut): sst__pg_tx and sst__pg_read run it again on a new
 * connection, and each statement gives the same result run twice. A
 * database of its own, so that cutting its connections disturbs no other test.
 */
static void postgres_lost_connections(void **state) {
    pgfix *f = *state;
    char db[64], url[600], sql[160];
    snprintf(db, sizeof db, "t_store_cut_%ld", (long)getpid());
    snprintf(sql, sizeof sql, "CREATE DATABASE %s", db);
    assert_int_equal(tu_pg_exec(tu_pg_url(), sql), 0);
    assert_true(pg_db_url(db, url, sizeof url));
    atomic_store(&g_pg_now, T0);
    sst_store_opts o = pg_opts(f, 500);
    o.default_ttl_minutes = 1;
    sst_store *st = sst_postgres_store_new(url, &o, &f->err);
    if (st == NULL) {
        fail_msg("open: %s", f->err.msg);
    }
    pg_put(f, st, NS("c", "1"), "a", "{\"text\":\"first words\"}", NULL);
    pg_cut(db);
    pg_put(f, st, NS("c", "2"), "b", "{\"text\":\"second words\"}", NULL);
    pg_cut(db);
    char *v = pg_value(f, st, NS("c", "1"), "a");
    assert_string_equal(v, "{\"text\":\"first words\"}");
    free(v);
    pg_cut(db);
    sst_value *r = pg_search(f, st, NS("c"), "second words", NULL);
    assert_string_equal(keys_of(r), "b,a");
    sst_value_unref(r);
    pg_cut(db);
    r = pg_search(f, st, NS("c"), NULL, "{\"text\":{\"$ne\":\"x\"}}");
    assert_string_equal(keys_of(r), "b,a");
    sst_value_unref(r);
    pg_cut(db);
    pg_list_is(f, st, "[[\"c\",\"1\"],[\"c\",\"2\"]]");
    pg_cut(db);
    PG_OK(sst_store_delete(st, NS("c", "2"), "b", &f->err));
    pg_cut(db);
    atomic_fetch_add(&g_pg_now, 2 * MINUTE);
    size_t removed = 0;
    PG_OK(sst_store_sweep_ttl(st, &removed, &f->err));
    assert_int_equal(removed, 1);
    sst_store_free(st);
    snprintf(sql, sizeof sql, "DROP DATABASE %s WITH (FORCE)", db);
    assert_int_equal(tu_pg_exec(tu_pg_url(), sql), 0);
}

/* ---- once: the wrapper, against a fake backend ---- */

typedef struct fake {
    int destroyed, puts;
} fake;

static void fake_destroy(void *self) {
    ((fake *)self)->destroyed++;
}

static sst_code fake_put(void *self, const sst_store_item *item, sst_error *err) {
    (void)item, (void)err;
    ((fake *)self)->puts++;
    return SST_OK;
}

static sst_code fake_delete(void *self, const char *const *ns, size_t ns_len, const char *key,
                            sst_error *err) {
    (void)self, (void)ns, (void)ns_len, (void)key, (void)err;
    return SST_OK;
}

static sst_code fake_get(void *self, const char *const *ns, size_t ns_len, const char *key,
                         const sst_store_read *r, sst_store_item_fn each, void *ud,
                         sst_error *err) {
    (void)self, (void)r;
    sst_store_item it = {
        .ns = ns, .ns_len = ns_len, .key = key, .json = "{\"a\":1}", .json_len = 7};
    return each(ud, &it, err);
}

static sst_code fake_search(void *self, const sst_store_query *q, sst_store_item_fn each, void *ud,
                            sst_error *err) {
    (void)self, (void)q, (void)each, (void)ud, (void)err;
    return SST_OK;
}

static sst_code fake_list(void *self, const sst_store_list_opts *q, const sst_store_read *r,
                          sst_store_ns_fn each, void *ud, sst_error *err) {
    (void)self, (void)q, (void)r, (void)each, (void)ud, (void)err;
    return SST_OK;
}

static sst_store_ops fake_ops(void) {
    return (sst_store_ops){.version = SST_STORE_OPS_VERSION,
                           .destroy = fake_destroy,
                           .put = fake_put,
                           .delete_item = fake_delete,
                           .get = fake_get,
                           .search = fake_search,
                           .list_namespaces = fake_list};
}

static void api_ops_checked(void **state) {
    (void)state;
    fake f = {0};
    sst_error err;
    sst_store_ops ops = fake_ops();
    ops.version = 0;
    assert_null(sst_store_new(&ops, &f, NULL, &err));
    code_at(err.code, SST_EINVAL, &err, __FILE__, __LINE__);
    ops.version = SST_STORE_OPS_VERSION + 1;
    assert_null(sst_store_new(&ops, &f, NULL, &err));
    code_at(err.code, SST_ENOTSUP, &err, __FILE__, __LINE__);
    msg_has_at(&err, "version", __FILE__, __LINE__);
    for (int i = 0; i < 5; i++) {
        ops = fake_ops();
        ops.put = i == 0 ? NULL : ops.put;
        ops.delete_item = i == 1 ? NULL : ops.delete_item;
        ops.get = i == 2 ? NULL : ops.get;
        ops.search = i == 3 ? NULL : ops.search;
        ops.list_namespaces = i == 4 ? NULL : ops.list_namespaces;
        assert_null(sst_store_new(&ops, &f, NULL, &err));
        code_at(err.code, SST_EINVAL, &err, __FILE__, __LINE__);
    }
    assert_null(sst_store_new(NULL, &f, NULL, &err));
    /* bad options */
    ops = fake_ops();
    sst_store_opts o;
    sst_store_opts_init(&o);
    o.index.dims = 8; /* without embed */
    assert_null(sst_store_new(&ops, &f, &o, &err));
    msg_has_at(&err, "embed", __FILE__, __LINE__);
    sst_store_opts_init(&o);
    o.default_ttl_minutes = -1;
    assert_null(sst_store_new(&ops, &f, &o, &err));
    sst_store_opts_init(&o);
    o.index.n_fields = 2;
    assert_null(sst_store_new(&ops, &f, &o, &err));
    assert_int_equal(f.destroyed, 0); /* self is not destroyed on failure */
    /* no destroy, no sweep: fine; sweeping is then not supported */
    ops.destroy = NULL;
    sst_store *st = sst_store_new(&ops, &f, NULL, &err);
    assert_non_null(st);
    assert_ptr_equal(sst_store_self(st), &f);
    code_at(sst_store_sweep_ttl(st, NULL, &err), SST_ENOTSUP, &err, __FILE__, __LINE__);
    sst_value *v = tu_json("{}");
    tu_assert_ok(sst_store_put(st, NS("a"), "k", v, NULL, &err), &err, __FILE__, __LINE__);
    sst_value_unref(v);
    assert_int_equal(f.puts, 1);
    /* a backend without SST_STORE_VALUES hands back JSON bytes */
    v = sst_store_get(st, NS("a"), "k", -1, &err);
    assert_json_eq(sst_object_get(v, "value"), "{\"a\":1}");
    sst_value_unref(v);
    sst_store_free(st);
    assert_int_equal(f.destroyed, 0);
}

static sst_code bad_get(void *self, const char *const *ns, size_t ns_len, const char *key,
                        const sst_store_read *r, sst_store_item_fn each, void *ud, sst_error *err) {
    (void)self, (void)r;
    sst_store_item it = {.ns = ns, .ns_len = ns_len, .key = key, .json = "{\"a\":", .json_len = 5};
    return each(ud, &it, err);
}

static void api_refcount_and_damage(void **state) {
    (void)state;
    fake f = {0};
    sst_store_ops ops = fake_ops();
    ops.get = bad_get;
    sst_store *st = sst_store_new(&ops, &f, NULL, NULL);
    assert_non_null(st);
    assert_ptr_equal(sst_store_ref(st), st);
    sst_store_free(st);
    assert_int_equal(f.destroyed, 0);
    /* a damaged payload is SST_EIO naming the item */
    sst_error err;
    assert_null(sst_store_get(st, NS("ns", "x"), "key9", -1, &err));
    code_at(err.code, SST_EIO, &err, __FILE__, __LINE__);
    msg_has_at(&err, "('ns', 'x') 'key9'", __FILE__, __LINE__);
    sst_store_free(st);
    assert_int_equal(f.destroyed, 1);
    sst_store_free(NULL);
    assert_null(sst_store_ref(NULL));
}

#define BACKEND_CASES(X)                                                                           \
    X(case_namespaces)                                                                             \
    X(case_put_get)                                                                                \
    X(case_delete)                                                                                 \
    X(case_search)                                                                                 \
    X(case_filters)                                                                                \
    X(case_list_namespaces)                                                                        \
    X(case_list_paging)                                                                            \
    X(case_vector_basic)                                                                           \
    X(case_vector_filters)                                                                         \
    X(case_vector_paths)                                                                           \
    X(case_vector_scores)                                                                          \
    X(case_field_paths)                                                                            \
    X(case_ttl)                                                                                    \
    X(case_ttl_options)                                                                            \
    X(case_embed_failures)                                                                         \
    X(case_non_ascii)                                                                              \
    X(case_arguments)                                                                              \
    X(case_threads)                                                                                \
    X(case_parallel_ranking)                                                                       \
    X(case_out_of_memory)                                                                          \
    X(case_persistence)

/* ======================================================================
 * The filter-first search (memory backend) against the plain path (SQLite)
 * ====================================================================== */

static int64_t eq_now;

static int64_t eq_clock(void *ud) {
    (void)ud;
    return eq_now;
}

/* A deterministic embedding of -1/0/+1 components from a hash of the text. */
static sst_code eq_embed(void *ud, const char *const *texts, size_t n, size_t dims, float *out,
                         sst_error *err) {
    (void)ud;
    (void)err;
    for (size_t i = 0; i < n; i++) {
        unsigned h = 2166136261u;
        for (const char *p = texts[i]; *p != '\0'; p++) {
            h = (h ^ (unsigned char)*p) * 16777619u;
        }
        for (size_t j = 0; j < dims; j++) {
            out[i * dims + j] = (float)((int)(h % 3) - 1);
            h = h * 1103515245u + 12345u;
            h ^= h >> 13;
        }
    }
    return SST_OK;
}

static unsigned eq_rnd(unsigned *s) {
    *s = *s * 1103515245u + 12345u;
    return (*s >> 8) & 0xffffff;
}

/* Puts the same random items (several vectors, none, deletes, TTLs) into both stores. */
static void eq_fill(sst_store *m, sst_store *s, size_t nitems, unsigned *rs) {
    static const char *const nss[][2] = {{"a", "x"}, {"a", "y"}, {"b", "x"}};
    sst_error err;
    for (size_t i = 0; i < nitems * 2; i++) {
        char key[32], text[256];
        snprintf(key, sizeof key, "k%u", eq_rnd(rs) % (unsigned)nitems);
        unsigned kind = eq_rnd(rs) % 4, g = eq_rnd(rs) % 5, a = eq_rnd(rs) % 20,
                 b = eq_rnd(rs) % 20;
        if (kind == 0) {
            snprintf(text, sizeof text, "{\"g\":%u,\"t\":\"w%u\"}", g, a);
        } else if (kind == 1) {
            snprintf(text, sizeof text, "{\"g\":%u,\"t\":\"w%u\",\"u\":\"v%u\"}", g, a, b);
        } else if (kind == 2) {
            snprintf(text, sizeof text, "{\"g\":%u,\"x\":%u}", g, a);
        } else {
            snprintf(text, sizeof text, "{\"g\":%u,\"t\":\"w%u\",\"u\":\"w%u\"}", g, a, b);
        }
        sst_value *v = tu_json(text);
        sst_store_put_opts po;
        sst_store_put_opts_init(&po);
        po.no_index = eq_rnd(rs) % 7 == 0;
        po.ttl_minutes = eq_rnd(rs) % 5 == 0 ? 1.0 + eq_rnd(rs) % 3 : SST_STORE_TTL_NONE;
        const char *const *ns = nss[eq_rnd(rs) % 3];
        assert_sst_ok(sst_store_put(m, ns, 2, key, v, &po, &err), &err);
        assert_sst_ok(sst_store_put(s, ns, 2, key, v, &po, &err), &err);
        sst_value_unref(v);
        if (eq_rnd(rs) % 10 == 0) {
            assert_sst_ok(sst_store_delete(m, ns, 2, key, &err), &err);
            assert_sst_ok(sst_store_delete(s, ns, 2, key, &err), &err);
        }
        eq_now += 10000000;
    }
}

/*
 * With 1 536 dims the memory backend filters before it scores when the filter is
 * selective; SQLite always scores first. Random searches must give the same JSON.
 */
static void memory_filter_first_matches_sqlite(void **state) {
    (void)state;
    static const char *const filters[] = {"{\"g\":1}",           "{\"g\":{\"$ne\":1}}",
                                          "{\"g\":{\"$lt\":3}}", "{\"x\":{\"$gte\":5}}",
                                          "{\"zz\":1}",          "{\"g\":{\"$gte\":0}}"};
    char dir[256], path[300];
    assert_int_equal(tu_temp_dir("sst-store-eq", dir, sizeof dir), 0);
    snprintf(path, sizeof path, "%s/eq.db", dir);
    for (unsigned round = 0; round < 2; round++) {
        unsigned rs = 12345u + round;
        eq_now = 1700000000000000;
        sst_error err;
        const char *fields[] = {"t", "u"};
        sst_store_opts o;
        sst_store_opts_init(&o);
        o.index.dims = 1536;
        o.index.fields = fields;
        o.index.n_fields = 2;
        o.index.embed = eq_embed;
        o.clock = eq_clock;
        o.omit_expired = round == 1;
        o.refresh_on_read = false;
        unlink(path);
        sst_store *m = sst_memory_store_new(&o, &err), *s = sst_sqlite_store_new(path, &o, &err);
        assert_non_null(m);
        assert_non_null(s);
        eq_fill(m, s, 300, &rs);
        for (int qi = 0; qi < 60; qi++) {
            sst_store_search_opts q;
            sst_store_search_opts_init(&q);
            char qt[32];
            snprintf(qt, sizeof qt, "w%u", eq_rnd(&rs) % 25);
            q.query = qt;
            sst_value *f = tu_json(filters[eq_rnd(&rs) % 6]);
            q.filter = f;
            const char *prefix[] = {"a"};
            q.prefix = prefix;
            q.prefix_len = eq_rnd(&rs) % 2;
            q.limit = 1 + eq_rnd(&rs) % 30;
            q.offset = eq_rnd(&rs) % 3 == 0 ? eq_rnd(&rs) % 40 : 0;
            q.refresh_ttl = 0;
            sst_value *rm = sst_store_search(m, &q, &err), *rq = sst_store_search(s, &q, &err);
            assert_non_null(rm);
            assert_non_null(rq);
            char *a = sst_json_write(rm, 0, NULL, NULL), *b = sst_json_write(rq, 0, NULL, NULL);
            assert_non_null(a);
            assert_non_null(b);
            assert_string_equal(a, b);
            sst_free(a);
            sst_free(b);
            sst_value_unref(rm);
            sst_value_unref(rq);
            sst_value_unref(f);
        }
        sst_store_free(m);
        sst_store_free(s);
    }
    tu_rm_rf(dir);
}

/*
 * The PostgreSQL store against the memory store on the same random items:
 * random searches (queries, filters, prefixes, paging, omit_expired) and
 * listings must give the same JSON, scores included to the bit.
 */
static void postgres_matches_memory(void **state) {
    pgfix *f = *state;
    static const char *const filters[] = {"{\"g\":1}",           "{\"g\":{\"$ne\":1}}",
                                          "{\"g\":{\"$lt\":3}}", "{\"x\":{\"$gte\":5}}",
                                          "{\"zz\":1}",          "{\"g\":{\"$gte\":0}}"};
    static const char *const labels[] = {"a", "b", "x", "y", "*"};
    for (unsigned round = 0; round < 2; round++) {
        unsigned rs = 777u + round;
        eq_now = 1700000000000000;
        sst_error err;
        const char *fields[] = {"t", "u"};
        sst_store_opts o;
        sst_store_opts_init(&o);
        o.index.dims = 64;
        o.index.fields = fields;
        o.index.n_fields = 2;
        o.index.embed = eq_embed;
        o.clock = eq_clock;
        o.omit_expired = round == 1;
        o.refresh_on_read = false;
        assert_int_equal(tu_pg_exec(f->url, round == 0 ? "SELECT 1"
                                                       : "SET client_min_messages = warning;"
                                                         " TRUNCATE sst_store_items CASCADE"),
                         0);
        sst_store *m = sst_memory_store_new(&o, &err);
        sst_store *p = sst_postgres_store_new(f->url, &o, &err);
        if (p == NULL) {
            fail_msg("open: %s", err.msg);
        }
        eq_fill(m, p, 120, &rs);
        for (int qi = 0; qi < 40; qi++) {
            sst_store_search_opts q;
            sst_store_search_opts_init(&q);
            char qt[32];
            snprintf(qt, sizeof qt, "w%u", eq_rnd(&rs) % 25);
            q.query = eq_rnd(&rs) % 4 == 0 ? NULL : qt;
            sst_value *fv = eq_rnd(&rs) % 3 == 0 ? NULL : tu_json(filters[eq_rnd(&rs) % 6]);
            q.filter = fv;
            const char *prefix[] = {eq_rnd(&rs) % 2 ? "a" : "b", "x"};
            q.prefix = prefix;
            q.prefix_len = eq_rnd(&rs) % 3;
            q.limit = 1 + eq_rnd(&rs) % 30;
            q.offset = eq_rnd(&rs) % 3 == 0 ? eq_rnd(&rs) % 40 : 0;
            q.refresh_ttl = 0;
            sst_value *rm = sst_store_search(m, &q, &err), *rp = sst_store_search(p, &q, &err);
            assert_non_null(rm);
            assert_non_null(rp);
            char *a = sst_json_write(rm, 0, NULL, NULL), *b = sst_json_write(rp, 0, NULL, NULL);
            assert_string_equal(a, b);
            sst_free(a);
            sst_free(b);
            sst_value_unref(rm);
            sst_value_unref(rp);
            sst_value_unref(fv);
        }
        for (int li = 0; li < 40; li++) {
            sst_store_list_opts l;
            sst_store_list_opts_init(&l);
            const char *pre[] = {labels[eq_rnd(&rs) % 5], labels[eq_rnd(&rs) % 5]};
            const char *suf[] = {labels[eq_rnd(&rs) % 5], labels[eq_rnd(&rs) % 5]};
            l.prefix = pre;
            l.prefix_len = eq_rnd(&rs) % 3;
            l.suffix = suf;
            l.suffix_len = eq_rnd(&rs) % 3;
            l.max_depth = eq_rnd(&rs) % 3;
            l.offset = eq_rnd(&rs) % 2;
            l.limit = 1 + eq_rnd(&rs) % 4;
            sst_value *lm = sst_store_list_namespaces(m, &l, &err);
            sst_value *lp = sst_store_list_namespaces(p, &l, &err);
            assert_non_null(lm);
            assert_non_null(lp);
            assert_true(sst_value_equal(lm, lp));
            sst_value_unref(lm);
            sst_value_unref(lp);
        }
        sst_store_free(m);
        sst_store_free(p);
    }
}

int main(void) {
    tu_chaos_install();
    int failed = 0;
    bool have_pg = tu_pg_url() != NULL; /* fails here when SST_REQUIRE_POSTGRES=1 */
    for (size_t b = 0; b < sizeof k_backends / sizeof k_backends[0]; b++) {
        void *be = (void *)&k_backends[b];
        if (k_backends[b].needs_pg && !have_pg) {
            print_message("[  SKIPPED ] %s: no test PostgreSQL server (SST_PGTEST_URL or "
                          "SST_PGTEST_URL_FILE; CTest's fixture \"pg\" starts one)\n",
                          k_backends[b].name);
            continue;
        }
#define SST_CASE(fn) cmocka_unit_test_prestate_setup_teardown(fn, fx_setup, fx_teardown, be),
        const struct CMUnitTest tests[] = {BACKEND_CASES(SST_CASE)};
#undef SST_CASE
        failed += cmocka_run_group_tests_name(k_backends[b].name, tests, NULL, NULL);
    }
    const struct CMUnitTest files[] = {
        cmocka_unit_test_setup_teardown(sqlite_shared_file, sq_setup, sq_teardown),
        cmocka_unit_test_setup_teardown(sqlite_bad_files, sq_setup, sq_teardown),
        cmocka_unit_test_setup_teardown(sqlite_read_only, sq_setup, sq_teardown),
        cmocka_unit_test_setup_teardown(sqlite_two_handles, sq_setup, sq_teardown),
    };
    failed += cmocka_run_group_tests_name("sqlite files", files, NULL, NULL);
    const struct CMUnitTest pg[] = {
        cmocka_unit_test_setup_teardown(postgres_two_processes, pg_setup, pg_teardown),
        cmocka_unit_test_setup_teardown(postgres_newer_schema, pg_setup, pg_teardown),
        cmocka_unit_test_setup_teardown(postgres_vector_size, pg_setup, pg_teardown),
        cmocka_unit_test_setup_teardown(postgres_shared_pool, pg_setup, pg_teardown),
        cmocka_unit_test_setup_teardown(postgres_lost_connections, pg_setup, pg_teardown),
        cmocka_unit_test_setup_teardown(postgres_matches_memory, pg_setup, pg_teardown),
    };
    if (have_pg) {
        failed += cmocka_run_group_tests_name("postgres database", pg, NULL, NULL);
    } else {
        print_message("[  SKIPPED ] postgres database: no test PostgreSQL server\n");
    }
    const struct CMUnitTest api[] = {
        cmocka_unit_test(memory_filter_first_matches_sqlite),
        cmocka_unit_test(api_ops_checked),
        cmocka_unit_test(api_refcount_and_damage),
    };
    failed += cmocka_run_group_tests_name("store", api, NULL, NULL);
    return failed != 0;
}
