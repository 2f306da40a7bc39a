/* SPDX-License-Identifier: MIT */
/* UTF-8 validation (RFC 3629): no overlongs, no surrogates, max U+10FFFF. */
#include "values_int.h"

size_t sst__utf8_seq(const unsigned char *s, const unsigned char *end) {
    unsigned char c = s[0];
    if (c < 0x80) {
        return 1;
    }
    size_t avail = (size_t)(end - s);
    if (c >= 0xC2 && c <= 0xDF) {
        return (avail >= 2 && (s[1] & 0xC0) == 0x80) ? 2 : 0;
    }
    if (c >= 0xE0 && c <= 0xEF) {
        if (avail < 3 || (s[1] & 0xC0) != 0x80 || (s[2] & 0xC0) != 0x80) {
            return 0;
        }
        if (c == 0xE0 && s[1] < 0xA0) {
            return 0; /* overlong */
        }
        if (c == 0xED && s[1] >= 0xA0) {
            return 0; /* UTF-16 surrogate */
        }
        return 3;
    }
    if (c >= 0xF0 && c <= 0xF4) {
        if (avail < 4 || (s[1] & 0xC0) != 0x80 || (s[2] & 0xC0) != 0x80 || (s[3] & 0xC0) != 0x80) {
            return 0;
        }
        if (c == 0xF0 && s[1] < 0x90) {
            return 0; /* overlong */
        }
        if (c == 0xF4 && s[1] >= 0x90) {
            return 0; /* above U+10FFFF */
        }
        return 4;
    }
    return 0;
}

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
