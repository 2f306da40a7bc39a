/* SPDX-License-Identifier: MIT */
/*
 * The cache of verified JWTs (src/server/auth_cache.c): a token is found by its bytes
 * (one byte changed: not found), until the time verification would refuse it (exp plus
 * the leeway; without exp, SRV_TOKEN_CACHE_MAX_S), never past it; an expired token is not
 * stored; the table never holds more than SRV_TOKEN_CACHE_SLOTS tokens however many it is
 * given; four threads putting and getting overlapping tokens always get the user of the
 * token they asked for (also under TSan). Time is passed in: no clock, no sleeps.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "server/auth.h"
#include "superstep/json.h"
#include "test_util.h"

#define NOW 1800000000

static sst_value *user_of(const char *identity) {
    char json[128];
    snprintf(json, sizeof json, "{\"identity\":\"%s\",\"permissions\":[]}", identity);
    return tu_json(json);
}

static const char *identity(const sst_value *user) {
    return sst_string_cstr(sst_object_get(user, "identity"));
}

static void by_bytes_until_exp(void **state) {
    (void)state;
    srv_token_cache *c = srv_token_cache_new();
    assert_non_null(c);
    sst_value *alice = user_of("alice");
    const char *tok = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJl";
    assert_null(srv_token_cache_get(c, tok, NOW));
    srv_token_cache_put(c, tok, alice, NOW + 10, 0, NOW);
    sst_value *got = srv_token_cache_get(c, tok, NOW + 9);
    assert_non_null(got);
    assert_string_equal(identity(got), "alice");
    sst_value_unref(got);
    /* One byte off, a prefix, an extension: not the token. */
    assert_null(
        srv_token_cache_get(c, "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJm", NOW));
    assert_null(
        srv_token_cache_get(c, "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJ", NOW));
    assert_null(
        srv_token_cache_get(c, "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJlA", NOW));
    /* At exp verification says "token expired": so does the cache, and forgets it. */
    assert_null(srv_token_cache_get(c, tok, NOW + 10));
    assert_int_equal(srv_token_cache_count(c), 0);
    assert_null(srv_token_cache_get(c, tok, NOW + 9));

    /* The leeway stretches exp as verification does. */
    srv_token_cache_put(c, tok, alice, NOW + 10, 5, NOW);
    got = srv_token_cache_get(c, tok, NOW + 14);
    assert_non_null(got);
    sst_value_unref(got);
    assert_null(srv_token_cache_get(c, tok, NOW + 15));

    /* No exp: SRV_TOKEN_CACHE_MAX_S at most; nor does a far exp keep it longer. */
    srv_token_cache_put(c, tok, alice, NAN, 0, NOW);
    got = srv_token_cache_get(c, tok, NOW + SRV_TOKEN_CACHE_MAX_S - 1);
    assert_non_null(got);
    sst_value_unref(got);
    assert_null(srv_token_cache_get(c, tok, NOW + SRV_TOKEN_CACHE_MAX_S));
    srv_token_cache_put(c, tok, alice, NOW + 86400.0 * 365, 0, NOW);
    assert_null(srv_token_cache_get(c, tok, NOW + SRV_TOKEN_CACHE_MAX_S));

    /* Expired already (a fractional exp too): not stored. */
    srv_token_cache_put(c, tok, alice, NOW, 0, NOW);
    srv_token_cache_put(c, tok, alice, NOW - 0.5, 0, NOW);
    assert_int_equal(srv_token_cache_count(c), 0);
    /* A fractional exp: refused from the second verification would refuse it. */
    srv_token_cache_put(c, tok, alice, NOW + 1.5, 0, NOW);
    got = srv_token_cache_get(c, tok, NOW + 1);
    assert_non_null(got);
    sst_value_unref(got);
    assert_null(srv_token_cache_get(c, tok, NOW + 2));

    /* A replaced user: the newest verification wins. */
    sst_value *bob = user_of("bob");
    srv_token_cache_put(c, tok, alice, NOW + 10, 0, NOW);
    srv_token_cache_put(c, tok, bob, NOW + 10, 0, NOW);
    got = srv_token_cache_get(c, tok, NOW);
    assert_string_equal(identity(got), "bob");
    sst_value_unref(got);
    sst_value_unref(bob);
    sst_value_unref(alice);
    srv_token_cache_free(c);
    srv_token_cache_free(NULL);
    assert_null(srv_token_cache_get(NULL, tok, NOW));
}

static void bounded(void **state) {
    (void)state;
    srv_token_cache *c = srv_token_cache_new();
    sst_value *u = user_of("u");
    char tok[64];
    for (int i = 0; i < 3 * SRV_TOKEN_CACHE_SLOTS; i++) {
        snprintf(tok, sizeof tok, "token-%d", i);
        srv_token_cache_put(c, tok, u, NOW + 100, 0, NOW);
        assert_true(srv_token_cache_count(c) <= SRV_TOKEN_CACHE_SLOTS);
    }
    /* The last token put is there (it replaced whatever had its slot). */
    sst_value *got = srv_token_cache_get(c, tok, NOW);
    assert_non_null(got);
    sst_value_unref(got);
    /* A token longer than any accepted is neither stored nor looked up. */
    static char big[SRV_AUTH_MAX_TOKEN + 2];
    memset(big, 'A', sizeof big - 1);
    size_t before = srv_token_cache_count(c);
    srv_token_cache_put(c, big, u, NOW + 100, 0, NOW);
    assert_int_equal(srv_token_cache_count(c), before);
    assert_null(srv_token_cache_get(c, big, NOW));
    sst_value_unref(u);
    srv_token_cache_free(c);
}

/* ---- four threads -------------------------------------------------------------------- */

#define N_TOKENS 64
#define ROUNDS   4000

typedef struct job {
    srv_token_cache *c;
    sst_value **users;
    int seed;
    int wrong;
    int hits;
} job;

static void *work(void *arg) {
    job *j = arg;
    tu_rng r = {.state = (uint64_t)j->seed * 7919 + 1};
    for (int i = 0; i < ROUNDS; i++) {
        int k = (int)(tu_rand(&r) % N_TOKENS);
        char tok[32], want[32];
        snprintf(tok, sizeof tok, "tok.%d.x", k);
        snprintf(want, sizeof want, "user-%d", k);
        sst_value *got = srv_token_cache_get(j->c, tok, NOW + (i % 50));
        if (got != NULL) {
            j->hits++;
            j->wrong += strcmp(identity(got), want) != 0;
            sst_value_unref(got);
        } else {
            srv_token_cache_put(j->c, tok, j->users[k], NOW + 40, 0, NOW + (i % 50));
        }
    }
    return NULL;
}

static void threads(void **state) {
    (void)state;
    srv_token_cache *c = srv_token_cache_new();
    sst_value *users[N_TOKENS];
    for (int i = 0; i < N_TOKENS; i++) {
        char id[32];
        snprintf(id, sizeof id, "user-%d", i);
        users[i] = user_of(id);
    }
    pthread_t t[4];
    job jobs[4];
    for (int i = 0; i < 4; i++) {
        jobs[i] = (job){.c = c, .users = users, .seed = i + 1};
        assert_int_equal(pthread_create(&t[i], NULL, work, &jobs[i]), 0);
    }
    int hits = 0;
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
        assert_int_equal(jobs[i].wrong, 0);
        hits += jobs[i].hits;
    }
    assert_true(hits > 0);
    srv_token_cache_free(c);
    for (int i = 0; i < N_TOKENS; i++) {
        sst_value_unref(users[i]);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(by_bytes_until_exp),
        cmocka_unit_test(bounded),
        cmocka_unit_test(threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
