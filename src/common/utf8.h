/* SPDX-License-Identifier: MIT */
/*
 * The one UTF-8 decoder of the library: the length of a valid sequence
 * (values/ validates strings with it, the OTLP encoder replaces what is not
 * UTF-8 with it) and the code point of one (json_schema.c's patterns and
 * lengths). Header-only: both sit in inner loops.
 */
#ifndef SUPERSTEP_COMMON_UTF8_H
#define SUPERSTEP_COMMON_UTF8_H

#include <stddef.h>
#include <stdint.h>

/* Length of the valid UTF-8 sequence starting at s (1..4), or 0 if invalid. */
static inline size_t sst__utf8_seq(const unsigned char *s, const unsigned char *end) {
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

/*
 * The code point of the sequence at *p, which must be valid UTF-8 (as every
 * sst string is; sst__utf8_seq checks bytes that may not be), before
 * @p end; advances *p past it. A byte that starts no sequence is taken as
 * itself, one byte long.
 */
static inline uint32_t sst__utf8_next(const unsigned char **p, const unsigned char *end) {
    const unsigned char *s = *p;
    uint32_t c = s[0];
    if (c >= 0xF0 && end - s >= 4) {
        *p = s + 4;
        return ((c & 0x07u) << 18) | ((s[1] & 0x3Fu) << 12) | ((s[2] & 0x3Fu) << 6) |
               (s[3] & 0x3Fu);
    }
    if (c >= 0xE0 && end - s >= 3) {
        *p = s + 3;
        return ((c & 0x0Fu) << 12) | ((s[1] & 0x3Fu) << 6) | (s[2] & 0x3Fu);
    }
    if (c >= 0xC0 && end - s >= 2) {
        *p = s + 2;
        return ((c & 0x1Fu) << 6) | (s[1] & 0x3Fu);
    }
    *p = s + 1;
    return c;
}

#endif
