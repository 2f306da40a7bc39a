/* SPDX-License-Identifier: MIT */
/*
 * Status codes, names, messages and the caller-owned error struct (and how
 * internal code carries a code: SST__ERR_LOCAL, sst__code); random bytes;
 * UUIDs (version 4 and the time-ordered version 7).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common.h"
#include "test_util.h"

static void test_code_names_and_messages(void **state) {
    (void)state;
    assert_int_equal(SST_OK, 0);
    assert_string_equal(sst_code_name(SST_OK), "SST_OK");
    assert_string_equal(sst_code_name(SST_ENOMEM), "SST_ENOMEM");
    assert_string_equal(sst_code_name(SST_ECONFLICT), "SST_ECONFLICT");
    assert_string_equal(sst_strerror(SST_ENOMEM), "out of memory");
    assert_string_equal(sst_code_name(SST_CODE_COUNT), "SST_UNKNOWN");
    assert_string_equal(sst_code_name((sst_code)9999), "SST_UNKNOWN");
    assert_non_null(sst_strerror((sst_code)9999));
    /* Every code has a distinct name starting with SST_. */
    for (int i = 0; i < SST_CODE_COUNT; i++) {
        assert_memory_equal(sst_code_name((sst_code)i), "SST_", 4);
        for (int j = 0; j < i; j++) {
            assert_string_not_equal(sst_code_name((sst_code)i), sst_code_name((sst_code)j));
        }
    }
}

static void test_error_fill_and_clear(void **state) {
    (void)state;
    sst_error err;
    assert_int_equal(sst__error(&err, SST_EINVAL, "field '%s' bad", "x"), SST_EINVAL);
    assert_int_equal(err.code, SST_EINVAL);
    assert_string_equal(err.msg, "field 'x' bad");
    assert_int_equal(err.line, 0);
    sst_error_clear(&err);
    assert_int_equal(err.code, SST_OK);
    assert_string_equal(err.msg, "");
    sst_error_clear(NULL);
    /* A NULL error struct means "not interested". */
    assert_int_equal(sst__error(NULL, SST_EIO, "ignored"), SST_EIO);
}

static void test_long_message_cut_at_utf8_boundary(void **state) {
    (void)state;
    char big[600];
    /* 'é' is two bytes; 300 of them cannot fit in 255 bytes, and the cut
     * must not split one. */
    size_t k = 0;
    big[k++] = 'a';
    for (int i = 0; i < 299; i++) {
        big[k++] = (char)0xC3;
        big[k++] = (char)0xA9;
    }
    big[k] = '\0';
    sst_error err;
    sst__error(&err, SST_EINVAL, "%s", big);
    size_t n = strlen(err.msg);
    assert_true(n <= SST_ERROR_MSG_MAX - 1);
    assert_true(n >= SST_ERROR_MSG_MAX - 3);
    sst_value *s = sst_string_new(err.msg, NULL);
    assert_non_null(s); /* still valid UTF-8 */
    sst_value_unref(s);
}

static void test_prefix_keeps_original(void **state) {
    (void)state;
    sst_error err;
    sst__error(&err, SST_EPARSE, "expected ':' at line 1, column 5");
    sst__error_prefix(&err, "%s", "state.json");
    assert_string_equal(err.msg, "state.json: expected ':' at line 1, column 5");
    assert_int_equal(err.code, SST_EPARSE);
}

static void test_allocator_rejects_null_hooks(void **state) {
    (void)state;
    assert_int_equal(sst_set_allocator(NULL, realloc, free), SST_EINVAL);
}

static void test_version(void **state) {
    (void)state;
    assert_string_equal(sst_version(), "0.1.0");
    assert_int_equal(sst_version_hex(), SST_VERSION_HEX);
}

/*
 * The random-byte pool: bytes are not handed out twice, also not by a forked
 * child (ids made in the parent and the child after a fork differ).
 */
static void test_random_pool_and_fork(void **state) {
    (void)state;
    unsigned char a[16], b[16];
    assert_int_equal(sst__random_bytes(a, sizeof a, NULL), SST_OK); /* fills the pool */
    assert_int_equal(sst__random_bytes(b, sizeof b, NULL), SST_OK);
    assert_memory_not_equal(a, b, sizeof a);
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        unsigned char c[16];
        ssize_t w =
            sst__random_bytes(c, sizeof c, NULL) == SST_OK ? write(fds[1], c, sizeof c) : -1;
        _exit(w == (ssize_t)sizeof c ? 0 : 1);
    }
    unsigned char parent[16], child[16];
    assert_int_equal(sst__random_bytes(parent, sizeof parent, NULL), SST_OK);
    assert_int_equal(read(fds[0], child, sizeof child), (ssize_t)sizeof child);
    int status;
    waitpid(pid, &status, 0);
    close(fds[0]);
    close(fds[1]);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    assert_memory_not_equal(parent, child, sizeof parent);
}

/* CRC-32C: the standard check value, chaining, and hardware = tables at every length. */
static void test_crc32c(void **state) {
    (void)state;
    assert_int_equal(sst__crc32c(0, "123456789", 9), 0xE3069283u);
    assert_int_equal(sst__crc32c_soft(0, "123456789", 9), 0xE3069283u);
    assert_int_equal(sst__crc32c(0, "", 0), 0);
    unsigned char buf[300];
    for (size_t i = 0; i < sizeof buf; i++) {
        buf[i] = (unsigned char)(i * 131u + 7u);
    }
    for (size_t n = 0; n <= sizeof buf; n++) {
        uint32_t whole = sst__crc32c(0, buf, n);
        assert_int_equal(whole, sst__crc32c_soft(0, buf, n));
        assert_int_equal(whole, sst__crc32c(sst__crc32c(0, buf, n / 3), buf + n / 3, n - n / 3));
    }
    uint32_t before = sst__crc32c(0, buf, sizeof buf);
    buf[17] ^= 0x10; /* one flipped bit changes the sum */
    assert_int_not_equal(sst__crc32c(0, buf, sizeof buf), before);
}

/* ---- carrying a code: SST__ERR_LOCAL, sst__code, sst__error_unless_set ---- */

/* An internal helper: records ERANGE when @p fail, and returns nothing else. */
static sst_value *inner(bool fail, sst_error *err) {
    if (fail) {
        sst__error(err, SST_ERANGE, "inner: out of range");
        return NULL;
    }
    return sst_int_new(1, err);
}

/* A public-style entry point: any err, NULL included; returns the helper's code. */
static sst_code entry(bool fail, sst_error *err) {
    SST__ERR_LOCAL(err);
    sst_value *v = inner(fail, err);
    if (v == NULL) {
        return sst__code(err);
    }
    sst_value_unref(v);
    return SST_OK;
}

static void test_err_local_keeps_the_code(void **state) {
    (void)state;
    /* Given NULL, the entry point still learns the inner code (not a guess). */
    assert_int_equal(entry(true, NULL), SST_ERANGE);
    assert_int_equal(entry(false, NULL), SST_OK);
    sst_error err = {0};
    assert_int_equal(entry(true, &err), SST_ERANGE);
    assert_string_equal(err.msg, "inner: out of range");
    /* A caller's err is not cleared on success: an earlier failure stays readable. */
    assert_int_equal(entry(false, &err), SST_OK);
    assert_int_equal(err.code, SST_ERANGE);
    assert_string_equal(err.msg, "inner: out of range");
}

static void test_code_and_unless_set(void **state) {
    (void)state;
    sst_error err;
    sst_error_clear(&err);
    /* No code recorded: the documented fallback. */
    assert_int_equal(sst__code(NULL), SST_ENOMEM);
    assert_int_equal(sst__code(&err), SST_ENOMEM);
    sst__error(&err, SST_EUTF8, "bad bytes");
    assert_int_equal(sst__code(&err), SST_EUTF8);
    /* A recorded failure wins over the default; an empty err takes it. */
    assert_int_equal(sst__error_unless_set(&err, SST_ETASK, "handler failed"), SST_EUTF8);
    assert_string_equal(err.msg, "bad bytes");
    sst_error_clear(&err);
    assert_int_equal(sst__error_unless_set(&err, SST_ETASK, "handler %s", "failed"), SST_ETASK);
    assert_string_equal(err.msg, "handler failed");
    assert_int_equal(sst__error_unless_set(NULL, SST_ETASK, "ignored"), SST_ETASK);
}

/* ---- UUIDs ---- */

/* True when @p s is 8-4-4-4-12 lowercase hex with version @p version and the RFC variant. */
static bool uuid_shaped(const char *s, char version) {
    if (strlen(s) != 36 || s[14] != version || strchr("89ab", s[19]) == NULL) {
        return false;
    }
    for (int i = 0; i < 36; i++) {
        bool dash = i == 8 || i == 13 || i == 18 || i == 23;
        if (dash ? s[i] != '-' : strchr("0123456789abcdef", s[i]) == NULL) {
            return false;
        }
    }
    return true;
}

static uint64_t wall_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* The milliseconds in the first 48 bits of a version-7 id. */
static uint64_t id_ms(const char *s) {
    char hex[13];
    memcpy(hex, s, 8);
    memcpy(hex + 8, s + 9, 4);
    hex[12] = '\0';
    return strtoull(hex, NULL, 16);
}

static void test_uuid4(void **state) {
    (void)state;
    char a[37], b[37];
    assert_int_equal(sst_uuid4(a, NULL), SST_OK);
    assert_int_equal(sst_uuid4(b, NULL), SST_OK);
    assert_true(uuid_shaped(a, '4'));
    assert_true(uuid_shaped(b, '4'));
    assert_string_not_equal(a, b);
}

/* Name-based UUIDs as Python's uuid.uuid5 gives them (LangGraph's default assistant ids),
 * names around SHA-1's 55/56-byte padding boundary included. */
static void test_uuid5(void **state) {
    (void)state;
    static const char *const x500 = "6ba7b821-9dad-11d1-80b4-00c04fd430c8";
    char b55[56], c56[57], d64[65], a40[41], x39[40], e30[61] = "";
    memset(b55, 'b', 55), b55[55] = '\0';
    memset(c56, 'c', 56), c56[56] = '\0';
    memset(d64, 'd', 64), d64[64] = '\0';
    memset(a40, 'a', 40), a40[40] = '\0';
    memset(x39, 'x', 39), x39[39] = '\0';
    for (int i = 0; i < 30; i++) {
        memcpy(e30 + 2 * i, "\xc3\xa9", 3);
    }
    const struct {
        const char *ns, *name, *want;
    } cases[] = {
        {x500, "chain", "608f7b9c-04e5-5cf2-a3f7-ba75a3719808"},
        {x500, "counter", "09d6caf4-2ef3-5a8b-b1a7-114690ed5d45"},
        {x500, "emitter", "36d5ceb9-f868-52bc-a4b5-bc1adfecb099"},
        {x500, "", "e0e91d1a-dcd6-5d9c-bf2e-f544030263cf"},
        {x500, x39, "2969e6a0-683c-550c-be55-36cc9aa7ddce"},
        {x500, a40, "2064a08a-2bf9-526f-92e8-114982b85783"},
        {x500, b55, "aaf0e257-4e9d-533d-8c58-430e6238c271"},
        {x500, c56, "45b619c8-3ba0-56e6-8131-d475e670c0c2"},
        {x500, d64, "a0fcea22-d2b1-54e9-b319-29d7faf7c32e"},
        {x500, e30, "94c4e038-1033-5cb1-ab70-9f4a33458e33"},
        {"6BA7B810-9DAD-11D1-80B4-00C04FD430C8", "python.org",
         "886313e1-3b8a-5372-9b90-0c9aee199e5d"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char out[37];
        sst_error err = {0};
        assert_int_equal(sst_uuid5(cases[i].ns, cases[i].name, out, &err), SST_OK);
        assert_string_equal(out, cases[i].want);
    }
    char out[37] = "unchanged";
    sst_error err = {0};
    assert_int_equal(sst_uuid5("not-a-uuid", "x", out, &err), SST_EINVAL);
    assert_non_null(strstr(err.msg, "not-a-uuid"));
    assert_string_equal(out, "unchanged");
    assert_int_equal(sst_uuid5("6ba7b821-9dad-11d1-80b4-00c04fd430cz", "x", out, &err), SST_EINVAL);
}

static void test_uuid7_strictly_increasing(void **state) {
    (void)state;
    enum { N = 10000 };
    static char ids[N][37];
    uint64_t t0 = wall_ms();
    for (int i = 0; i < N; i++) {
        sst_uuid7(ids[i]);
    }
    uint64_t t1 = wall_ms();
    for (int i = 0; i < N; i++) {
        if (!uuid_shaped(ids[i], '7')) {
            fail_msg("id %d is not a UUIDv7: %s", i, ids[i]);
        }
        if (i > 0 && strcmp(ids[i - 1], ids[i]) >= 0) {
            fail_msg("id %d does not sort after id %d: %s, %s", i, i - 1, ids[i - 1], ids[i]);
        }
    }
    /* The first 48 bits are the time (ids borrow ahead only past 4096 in one ms). */
    assert_true(id_ms(ids[0]) >= t0 && id_ms(ids[0]) <= t1);
    assert_true(id_ms(ids[N - 1]) >= t0 && id_ms(ids[N - 1]) <= t1 + N / 4096 + 1);
}

/*
 * One clock: ids increase with the wall clock stepped back (a clock far in
 * the future) and past the 12 bits of counter the text can show.
 */
static void test_uuid7_clock(void **state) {
    (void)state;
    char prev[37], id[37];
    uint64_t clock = 0;
    /* The process-wide clock may run ahead of the wall clock after the tests before (ids
     * borrow milliseconds past 4096 in one): wait until the wall clock passes it, so the
     * next id starts a new millisecond. */
    sst_uuid7(prev);
    while (wall_ms() <= id_ms(prev) + 1) {
        struct timespec ts = {0, 200000};
        nanosleep(&ts, NULL);
    }
    sst__uuid7(&clock, prev);
    assert_true(uuid_shaped(prev, '7'));
    assert_int_equal(clock & 0xffff, 0); /* a new millisecond starts the counter at 0 */
    uint64_t future = (wall_ms() + 60000) << 16;
    clock = future | 0x0ffe; /* two ids before the counter runs out */
    for (int i = 0; i < 5000; i++) {
        uint64_t before = clock;
        sst__uuid7(&clock, id);
        assert_true(clock > before);
        assert_true((clock & 0xffff) <= 0x0fff);
        assert_true(uuid_shaped(id, '7'));
        if (i > 0 && strcmp(prev, id) >= 0) {
            fail_msg("id %d does not sort after the one before: %s, %s", i, prev, id);
        }
        memcpy(prev, id, sizeof id);
    }
    assert_true(clock >> 16 > future >> 16); /* it moved on to the next milliseconds */
}

enum { THREADS = 4, PER_THREAD = 2000 };
static char g_ids[THREADS * PER_THREAD][37];

static void *make_ids(void *arg) {
    size_t t = (size_t)(uintptr_t)arg;
    for (size_t i = 0; i < PER_THREAD; i++) {
        sst_uuid7(g_ids[t * PER_THREAD + i]);
    }
    return NULL;
}

static int cmp_id(const void *a, const void *b) {
    return strcmp(a, b);
}

/* Threads share the process's clock: no id is made twice. */
static void test_uuid7_threads(void **state) {
    (void)state;
    pthread_t th[THREADS];
    for (size_t t = 0; t < THREADS; t++) {
        assert_int_equal(pthread_create(&th[t], NULL, make_ids, (void *)(uintptr_t)t), 0);
    }
    for (size_t t = 0; t < THREADS; t++) {
        pthread_join(th[t], NULL);
    }
    qsort(g_ids, THREADS * PER_THREAD, sizeof g_ids[0], cmp_id);
    for (size_t i = 1; i < THREADS * PER_THREAD; i++) {
        if (strncmp(g_ids[i - 1], g_ids[i], 18) == 0) { /* time and counter: the clock */
            fail_msg("two ids share a clock: %s, %s", g_ids[i - 1], g_ids[i]);
        }
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_code_names_and_messages),
        cmocka_unit_test(test_error_fill_and_clear),
        cmocka_unit_test(test_long_message_cut_at_utf8_boundary),
        cmocka_unit_test(test_prefix_keeps_original),
        cmocka_unit_test(test_allocator_rejects_null_hooks),
        cmocka_unit_test(test_version),
        cmocka_unit_test(test_random_pool_and_fork),
        cmocka_unit_test(test_crc32c),
        cmocka_unit_test(test_err_local_keeps_the_code),
        cmocka_unit_test(test_code_and_unless_set),
        cmocka_unit_test(test_uuid4),
        cmocka_unit_test(test_uuid5),
        cmocka_unit_test(test_uuid7_strictly_increasing),
        cmocka_unit_test(test_uuid7_clock),
        cmocka_unit_test(test_uuid7_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
