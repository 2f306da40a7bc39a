/* SPDX-License-Identifier: MIT */
/* Status codes, names, messages and the caller-owned error struct; random bytes. */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
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
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
