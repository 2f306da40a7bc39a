/* SPDX-License-Identifier: MIT */
/* UTF-8 validation (RFC 3629): no overlongs, no surrogates, max U+10FFFF. */
#include "values_int.h"

bool sst__utf8_valid(const char *str, size_t len, size_t *bad) {
    const unsigned char *s = (const unsigned char *)str;
    const unsigned char *end = s + len;
    const unsigned char *p = s;
    while (p < end) {
        /* Skip ASCII eight bytes at a time. */
        while (end - p >= 8) {
            uint64_t w = 0;
            for (int i = 0; i < 8; i++) {
                w |= (uint64_t)p[i] << (8 * i);
            }
            if (w & 0x8080808080808080ull) {
                break;
            }
            p += 8;
        }
        if (p >= end) {
            break;
        }
        size_t n = sst__utf8_seq(p, end);
        if (n == 0) {
            *bad = (size_t)(p - s);
            return false;
        }
        p += n;
    }
    return true;
}

bool sst_utf8_valid(const char *s, size_t len) {
    size_t bad;
    return s != NULL ? sst__utf8_valid(s, len, &bad) : len == 0;
}
